//! Dense linear systems of a few dozen unknowns: Gaussian elimination with partial pivoting,
//! walking only the entries that may be nonzero.

/// At most this many unknowns: a row's (or a column's) possibly nonzero entries are one `u64`.
pub const MOST_UNKNOWNS: usize = 64;

/// Solve `a x = b` in place (`a` row-major, n × n); None when the system is singular.
/// `rows[i]` has bit j set wherever `a[i][j]` may be nonzero (a superset: an exact zero may be
/// marked too); it is used as scratch.
///
/// The engine's fast path solves one such system per event, and its systems are sparse (a
/// group crosses few of the other moving groups' resources), so the pivot search, the elimination and the back substitution visit the marked entries only.
/// The result is the textbook loops' to the bit wherever it is positive and finite (the only
/// solutions the engine keeps): the pivot is the last row of largest magnitude in the column,
/// as `Iterator::max_by` picks (an unmarked entry is zero and can win only where every entry
/// is, and then the system is singular either way); a row whose entry in the pivot's column
/// is zero gets a factor of zero, which the textbook loop skips too; and with a finite factor,
/// an entry less factor × zero and a sum plus zero are what they were, up to the sign of a
/// zero. Where the pivot or a factor is not finite (a system that overflowed), the column or
/// row takes every entry, as the textbook loop does.
pub fn solve(a: &mut [f64], b: &mut [f64], rows: &mut [u64]) -> Option<()> {
    let n = b.len();
    assert!(n <= MOST_UNKNOWNS && a.len() == n * n && rows.len() == n);
    // Per column, the rows that may be nonzero.
    let mut cols = [0u64; MOST_UNKNOWNS];
    for (i, &r) in rows.iter().enumerate() {
        for j in bits(r) {
            cols[j] |= 1 << i;
        }
    }
    let every = after(0, n);
    for c in 0..n {
        let below = after(c + 1, n);
        // The last of equal maxima, as `Iterator::max_by` picks.
        let (mut p, mut big) = (c, a[c * n + c].abs());
        for i in bits(cols[c] & below) {
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
            rows.swap(p, c);
            for j in bits(rows[p] | rows[c]) {
                if (cols[j] >> p ^ cols[j] >> c) & 1 != 0 {
                    cols[j] ^= 1 << p | 1 << c;
                }
            }
        }
        let (upper, lower) = a.split_at_mut((c + 1) * n);
        let pivot = &upper[c * n + c..];
        let (bc, below_b) = b.split_at_mut(c + 1);
        let bc = bc[c];
        // Column c below the pivot is never read again: only columns c + 1.. are updated.
        let dense = !pivot[0].is_finite();
        let (candidates, marked) = if dense { (below, every & below) } else { (cols[c] & below, rows[c] & below) };
        for i in bits(candidates) {
            let row = &mut lower[(i - c - 1) * n..(i - c) * n];
            let f = row[c] / pivot[0];
            if f != 0.0 {
                let take = if f.is_finite() { marked } else { below };
                for j in bits(take) {
                    row[j] -= f * pivot[j - c];
                    cols[j] |= 1 << i;
                }
                rows[i] |= take;
                below_b[i - c - 1] -= f * bc;
            }
        }
    }
    for c in (0..n).rev() {
        let (done, rest) = b.split_at_mut(c + 1);
        let row = &a[c * n..(c + 1) * n];
        let s: f64 = bits(rows[c] & after(c + 1, n)).map(|j| row[j] * rest[j - c - 1]).sum();
        done[c] = (done[c] - s) / row[c];
    }
    Some(())
}

/// The bits of columns `from..n`.
fn after(from: usize, n: usize) -> u64 {
    let upto = if n == MOST_UNKNOWNS { u64::MAX } else { (1u64 << n) - 1 };
    upto & u64::MAX.checked_shl(from as u32).unwrap_or(0)
}

/// The indices of the set bits of `m`, lowest first.
#[inline]
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            i
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(n: usize) -> Vec<u64> {
        vec![after(0, n); n]
    }

    #[test]
    fn solves_and_refuses_singular() {
        let mut a = [0.0, 2.0, 1.0, 1.0];
        let mut b = [4.0, 3.0];
        solve(&mut a, &mut b, &mut full(2)).unwrap();
        assert_eq!(b, [1.0, 2.0]);
        assert!(solve(&mut [1.0, 2.0, 2.0, 4.0], &mut [1.0, 2.0], &mut full(2)).is_none());
    }

    /// The textbook loops, every entry visited: what `solve` must give to the bit.
    fn textbook(a: &mut [f64], b: &mut [f64]) -> Option<()> {
        let n = b.len();
        for c in 0..n {
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
            for j in 0..n {
                a.swap(p * n + j, c * n + j);
            }
            b.swap(p, c);
            for i in c + 1..n {
                let f = a[i * n + c] / a[c * n + c];
                if f != 0.0 {
                    for j in c + 1..n {
                        a[i * n + j] -= f * a[c * n + j];
                    }
                    b[i] -= f * b[c];
                }
            }
        }
        for c in (0..n).rev() {
            let s: f64 = (c + 1..n).map(|j| a[c * n + j] * b[j]).sum();
            b[c] = (b[c] - s) / a[c * n + c];
        }
        Some(())
    }

    /// Random sparse systems (diagonally weighted, as the engine's, and not), with and without
    /// pivoting: the same answer to the bit as the textbook loops, or both refuse.
    #[test]
    fn sparse_walk_is_the_textbook_answer() {
        let mut x = 7u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        for round in 0..2000 {
            let n = 1 + next() as usize % if round % 10 == 0 { MOST_UNKNOWNS } else { 12 };
            let mut a = vec![0.0; n * n];
            let mut rows = vec![0u64; n];
            for i in 0..n {
                for j in 0..n {
                    let weighty = i == j && round % 2 == 0;
                    if weighty || next() % 4 == 0 {
                        a[i * n + j] = (1 + next() % 16) as f64 * if weighty { 4.0 } else { 0.25 };
                        rows[i] |= 1 << j;
                    }
                }
            }
            let mut b: Vec<f64> = (0..n).map(|_| (next() % 100) as f64 / 7.0).collect();
            let (mut a2, mut b2) = (a.clone(), b.clone());
            let got = solve(&mut a, &mut b, &mut rows);
            let want = textbook(&mut a2, &mut b2);
            assert_eq!(got.is_some(), want.is_some(), "round {round}");
            if got.is_some() {
                for (u, v) in b.iter().zip(&b2) {
                    assert!(u.to_bits() == v.to_bits() || (*u == 0.0 && *v == 0.0), "round {round}: {u} against {v}");
                }
            }
        }
    }
}
