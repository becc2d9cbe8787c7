//! Overlap of computation and communication: for one rank, the time during which it both
//! computes and has a message of its own in flight (one it sends or receives, from the
//! executor's start of it to its finish). Seed 003's TraceR-CODES tracks it; its figures show
//! the communication left over ("non-overlapped communication", our `comm_s`).

/// The measure of (union of `compute`) ∩ (union of `messages`), intervals as (start, end)
/// seconds in any order and possibly overlapping one another. O(n log n): both lists are
/// sorted and merged into disjoint unions, which are then intersected in one sweep.
pub fn overlap(compute: &mut [(f64, f64)], messages: &mut [(f64, f64)]) -> f64 {
    let (a, b) = (union(compute), union(messages));
    let (mut i, mut j, mut total) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if hi > lo {
            total += hi - lo;
        }
        // Whichever ends first can meet nothing further on.
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

/// The union of intervals as disjoint intervals, ascending; empty intervals are dropped.
fn union(xs: &mut [(f64, f64)]) -> Vec<(f64, f64)> {
    xs.sort_unstable_by(|p, q| p.0.total_cmp(&q.0));
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(xs.len());
    for &(s, e) in xs.iter().filter(|(s, e)| e > s) {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ov(c: &[(f64, f64)], m: &[(f64, f64)]) -> f64 {
        overlap(&mut c.to_vec(), &mut m.to_vec())
    }

    /// Compute [0,4) and [6,10); messages [3,7) and [5,6.5) (these two overlap each other and
    /// merge into [3,7)). Overlap: [3,4) + [6,7) = 2.
    #[test]
    fn messages_that_overlap_each_other_count_once() {
        assert_eq!(ov(&[(0.0, 4.0), (6.0, 10.0)], &[(3.0, 7.0), (5.0, 6.5)]), 2.0);
    }

    /// Unsorted input; one message spanning two computations and the gap between them: only
    /// the computing parts count (1.5 + 2 = 3.5, not the 5 of the message).
    #[test]
    fn only_time_spent_computing_counts() {
        assert_eq!(ov(&[(8.0, 10.0), (2.0, 3.5)], &[(2.0, 7.0), (7.5, 12.0)]), 1.5 + 2.0);
    }

    #[test]
    fn disjoint_touching_and_empty_lists_give_nothing() {
        assert_eq!(ov(&[(0.0, 1.0)], &[(1.0, 2.0)]), 0.0);
        assert_eq!(ov(&[], &[(0.0, 5.0)]), 0.0);
        assert_eq!(ov(&[(0.0, 5.0)], &[]), 0.0);
        assert_eq!(ov(&[(3.0, 3.0)], &[(0.0, 5.0)]), 0.0);
    }

    /// A message covering all computation overlaps all of it; nested and repeated intervals.
    #[test]
    fn nested_and_repeated_intervals() {
        assert_eq!(ov(&[(1.0, 2.0), (1.0, 2.0), (4.0, 5.0)], &[(0.0, 10.0), (1.5, 4.5)]), 2.0);
        assert_eq!(ov(&[(0.0, 10.0)], &[(1.0, 2.0), (3.0, 4.0), (3.5, 6.0)]), 1.0 + 3.0);
    }
}
