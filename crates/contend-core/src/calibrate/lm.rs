//! Bounded nonlinear least squares for a handful of parameters: Levenberg-Marquardt on
//! residuals computed by simulation, with forward-difference Jacobians, and a test of which
//! parameters the residuals can identify at all.

use crate::error::Result;

/// Columns of the Jacobian of `f` at `u` (f(u) = `r0`), one per parameter; steps stay inside
/// [lo, hi].
pub fn jacobian(f: &dyn Fn(&[f64]) -> Result<Vec<f64>>, u: &[f64], r0: &[f64], lo: &[f64], hi: &[f64]) -> Result<Vec<Vec<f64>>> {
    let mut cols = Vec::with_capacity(u.len());
    for i in 0..u.len() {
        let mut h = 1e-4 * u[i].abs().max(0.1);
        if u[i] + h > hi[i] {
            h = -h;
        }
        if u[i] + h < lo[i] {
            h = (hi[i] - lo[i]) * 1e-4;
        }
        let mut v = u.to_vec();
        v[i] += h;
        let r = f(&v)?;
        cols.push(r.iter().zip(r0).map(|(a, b)| (a - b) / h).collect());
    }
    Ok(cols)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Why each parameter cannot be identified from the Jacobian's columns (None: it can). A column
/// of (almost) zeros means no measurement depends on it; a column in the span of earlier
/// identifiable ones means the data cannot tell it apart from them (named by index).
pub fn unidentifiable(cols: &[Vec<f64>]) -> Vec<Option<Unidentified>> {
    let scale = cols.iter().map(|c| dot(c, c).sqrt()).fold(0.0, f64::max);
    // Orthonormal basis of the identifiable columns so far, and those columns themselves.
    let mut basis: Vec<Vec<f64>> = Vec::new();
    let mut kept: Vec<(usize, Vec<f64>)> = Vec::new();
    let mut out = Vec::with_capacity(cols.len());
    for (i, c) in cols.iter().enumerate() {
        let norm = dot(c, c).sqrt();
        if scale == 0.0 || norm <= 1e-6 * scale {
            out.push(Some(Unidentified::NoEffect));
            continue;
        }
        let unit: Vec<f64> = c.iter().map(|x| x / norm).collect();
        let mut r = unit.clone();
        for b in &basis {
            let p = dot(&r, b);
            r.iter_mut().zip(b).for_each(|(x, y)| *x -= p * y);
        }
        let left = dot(&r, &r).sqrt();
        if left < 1e-3 {
            // Which earlier columns it is a combination of: least squares on them.
            let gram: Vec<Vec<f64>> = kept.iter().map(|(_, a)| kept.iter().map(|(_, b)| dot(a, b)).collect()).collect();
            let rhs: Vec<f64> = kept.iter().map(|(_, a)| dot(a, &unit)).collect();
            let coef = solve(gram, rhs).unwrap_or_default();
            let with = kept.iter().zip(&coef).filter(|(_, a)| a.abs() > 1e-2).map(|((k, _), _)| *k).collect();
            out.push(Some(Unidentified::Confounded(with)));
        } else {
            r.iter_mut().for_each(|x| *x /= left);
            basis.push(r);
            kept.push((i, unit));
            out.push(None);
        }
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
pub enum Unidentified {
    NoEffect,
    /// Indices of the parameters it cannot be told apart from.
    Confounded(Vec<usize>),
}

/// Solve the symmetric system `a x = b` by Gaussian elimination with partial pivoting.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() < 1e-300 {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        let pivot = a[c].clone();
        for r in c + 1..n {
            let f = a[r][c] / pivot[c];
            a[r][c..].iter_mut().zip(&pivot[c..]).for_each(|(x, y)| *x -= f * y);
            b[r] -= f * b[c];
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        x[r] = (b[r] - (r + 1..n).map(|k| a[r][k] * x[k]).sum::<f64>()) / a[r][r];
    }
    Some(x)
}

/// Minimise |f(u)|² over the parameters marked `free`, within [lo, hi]; returns u.
pub fn minimize(f: &dyn Fn(&[f64]) -> Result<Vec<f64>>, u0: &[f64], lo: &[f64], hi: &[f64], free: &[bool]) -> Result<Vec<f64>> {
    let idx: Vec<usize> = (0..u0.len()).filter(|&i| free[i]).collect();
    let mut u = u0.to_vec();
    let mut r = f(&u)?;
    let mut cost = dot(&r, &r);
    let mut lambda = 1e-3;
    for _ in 0..40 {
        if idx.is_empty() || cost == 0.0 {
            break;
        }
        let all = jacobian(f, &u, &r, lo, hi)?;
        let cols: Vec<&Vec<f64>> = idx.iter().map(|&i| &all[i]).collect();
        let jtj: Vec<Vec<f64>> = cols.iter().map(|a| cols.iter().map(|b| dot(a, b)).collect()).collect();
        let jtr: Vec<f64> = cols.iter().map(|a| -dot(a, &r)).collect();
        let mut improved = false;
        for _ in 0..12 {
            let mut a = jtj.clone();
            for (k, row) in a.iter_mut().enumerate() {
                row[k] += lambda * row[k].max(1e-12);
            }
            let Some(step) = solve(a, jtr.clone()) else { break };
            let mut v = u.clone();
            for (k, &i) in idx.iter().enumerate() {
                v[i] = (u[i] + step[k]).clamp(lo[i], hi[i]);
            }
            let rv = f(&v)?;
            let cv = dot(&rv, &rv);
            if cv < cost {
                let gain = (cost - cv) / cost;
                (u, r, cost) = (v, rv, cv);
                lambda = (lambda / 3.0).max(1e-9);
                improved = gain > 1e-10;
                break;
            }
            lambda *= 4.0;
        }
        if !improved {
            break;
        }
    }
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_a_line_and_names_what_it_cannot_see() {
        // y = a + b x at x = 1, 2, 3 measured as 3, 5, 7: a = 1, b = 2; c has no effect; d = a.
        let f = |u: &[f64]| -> Result<Vec<f64>> { Ok([1.0, 2.0, 3.0].iter().zip([3.0, 5.0, 7.0]).map(|(x, y)| u[0] + u[3] + u[1] * x - y).collect()) };
        let (lo, hi) = (vec![-10.0; 4], vec![10.0; 4]);
        let u0 = vec![0.0, 0.0, 0.5, 0.0];
        let r0 = f(&u0).unwrap();
        let why = unidentifiable(&jacobian(&f, &u0, &r0, &lo, &hi).unwrap());
        assert_eq!(why, vec![None, None, Some(Unidentified::NoEffect), Some(Unidentified::Confounded(vec![0]))]);
        let u = minimize(&f, &u0, &lo, &hi, &[true, true, false, false]).unwrap();
        assert!((u[0] - 1.0).abs() < 1e-6 && (u[1] - 2.0).abs() < 1e-6 && u[2] == 0.5, "{u:?}");
    }
}
