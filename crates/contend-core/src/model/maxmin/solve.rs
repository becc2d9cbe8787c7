//! Dense linear systems of a few dozen unknowns: Gaussian elimination with partial pivoting.

/// Solve `a x = b` in place (`a` row-major, n × n); None when the system is singular.
///
/// The engine's fast path solves one such system per event, so rows are walked as slices
/// (no index checks in the inner loops). The pivot is the last row of largest magnitude in the
/// column, and every product and sum is taken in the same order as the textbook loops.
pub fn solve(a: &mut [f64], b: &mut [f64]) -> Option<()> {
    let n = b.len();
    assert_eq!(a.len(), n * n);
    for c in 0..n {
        // The last of equal maxima, as `Iterator::max_by` picks.
        let (mut p, mut big) = (c, a[c * n + c].abs());
        for i in c + 1..n {
            let v = a[i * n + c].abs();
            if v.total_cmp(&big).is_ge() {
                (p, big) = (i, v);
            }
        }
        if big < 1e-300 {
            return None;
        }
        if p != c {
            let (upper, lower) = a.split_at_mut(p * n);
            upper[c * n..(c + 1) * n].swap_with_slice(&mut lower[..n]);
            b.swap(p, c);
        }
        let (upper, lower) = a.split_at_mut((c + 1) * n);
        let pivot = &upper[c * n + c..];
        let (bc, below) = b.split_at_mut(c + 1);
        let bc = bc[c];
        // Column c below the pivot is never read again: only columns c + 1.. are updated.
        for (row, bi) in lower.chunks_exact_mut(n).zip(below.iter_mut()) {
            let f = row[c] / pivot[0];
            if f != 0.0 {
                for (x, &y) in row[c + 1..].iter_mut().zip(&pivot[1..]) {
                    *x -= f * y;
                }
                *bi -= f * bc;
            }
        }
    }
    for c in (0..n).rev() {
        let (done, rest) = b.split_at_mut(c + 1);
        let s: f64 = a[c * n + c + 1..(c + 1) * n].iter().zip(rest.iter()).map(|(&x, &y)| x * y).sum();
        done[c] = (done[c] - s) / a[c * n + c];
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_and_refuses_singular() {
        let mut a = [0.0, 2.0, 1.0, 1.0];
        let mut b = [4.0, 3.0];
        solve(&mut a, &mut b).unwrap();
        assert_eq!(b, [1.0, 2.0]);
        assert!(solve(&mut [1.0, 2.0, 2.0, 4.0], &mut [1.0, 2.0]).is_none());
    }
}
