//! Dense linear systems of a few dozen unknowns: Gaussian elimination with partial pivoting.

/// Solve `a x = b` in place (`a` row-major, n × n); None when the system is singular.
pub fn solve(a: &mut [f64], b: &mut [f64]) -> Option<()> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i * n + c].abs().total_cmp(&a[j * n + c].abs()))?;
        if a[p * n + c].abs() < 1e-300 {
            return None;
        }
        if p != c {
            for k in 0..n {
                a.swap(p * n + k, c * n + k);
            }
            b.swap(p, c);
        }
        for i in c + 1..n {
            let f = a[i * n + c] / a[c * n + c];
            if f != 0.0 {
                for k in c..n {
                    a[i * n + k] -= f * a[c * n + k];
                }
                b[i] -= f * b[c];
            }
        }
    }
    for c in (0..n).rev() {
        let s: f64 = (c + 1..n).map(|k| a[c * n + k] * b[k]).sum();
        b[c] = (b[c] - s) / a[c * n + c];
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
