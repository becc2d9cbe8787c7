//! Non-negative linear least squares for a handful of unknowns: min |A x - b|² + λ|x|², x >= 0,
//! by the active-set method of Lawson and Hanson on the normal equations. The small ridge λ
//! picks one answer where the measurements cannot tell parameters apart.

/// Solve the symmetric positive-definite system `m x = v` (Cholesky); None if not positive.
fn cholesky_solve(m: &[Vec<f64>], v: &[f64]) -> Option<Vec<f64>> {
    let n = v.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = m[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if s <= 0.0 {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = (v[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        x[i] = (y[i] - (i + 1..n).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
    }
    Some(x)
}

/// Least squares restricted to the unknowns in `free` (the others are 0).
fn solve_on(ata: &[Vec<f64>], atb: &[f64], free: &[usize]) -> Vec<f64> {
    let m: Vec<Vec<f64>> = free.iter().map(|&i| free.iter().map(|&j| ata[i][j]).collect()).collect();
    let v: Vec<f64> = free.iter().map(|&i| atb[i]).collect();
    let z = cholesky_solve(&m, &v).unwrap_or_else(|| vec![0.0; free.len()]);
    let mut x = vec![0.0; atb.len()];
    for (k, &i) in free.iter().enumerate() {
        x[i] = z[k];
    }
    x
}

pub fn nnls(a: &[Vec<f64>], b: &[f64], ridge: f64) -> Vec<f64> {
    let n = a.first().map_or(0, |r| r.len());
    let mut ata = vec![vec![0.0; n]; n];
    let mut atb = vec![0.0; n];
    for (row, &y) in a.iter().zip(b) {
        for i in 0..n {
            atb[i] += row[i] * y;
            for j in 0..n {
                ata[i][j] += row[i] * row[j];
            }
        }
    }
    for (i, r) in ata.iter_mut().enumerate() {
        r[i] += ridge;
    }
    let mut x = vec![0.0; n];
    let mut free: Vec<usize> = Vec::new();
    for _ in 0..3 * n + 3 {
        // Gradient of the objective's negative: which fixed-at-zero unknown would help most.
        let w: Vec<f64> = (0..n).map(|i| atb[i] - (0..n).map(|j| ata[i][j] * x[j]).sum::<f64>()).collect();
        let Some(best) = (0..n).filter(|i| !free.contains(i) && w[*i] > 1e-12).max_by(|&i, &j| w[i].total_cmp(&w[j])) else {
            break;
        };
        free.push(best);
        loop {
            let z = solve_on(&ata, &atb, &free);
            if free.iter().all(|&i| z[i] > 0.0) {
                x = z;
                break;
            }
            // Step towards z until the first unknown reaches zero, then drop it.
            let alpha = free.iter().filter(|&&i| z[i] <= 0.0).map(|&i| x[i] / (x[i] - z[i])).fold(1.0, f64::min);
            for i in 0..n {
                x[i] += alpha * (z[i] - x[i]);
            }
            free.retain(|&i| x[i] > 1e-15);
            if free.is_empty() {
                x.iter_mut().for_each(|v| *v = 0.0);
                break;
            }
        }
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_clamped_solutions() {
        // y = 2 + 3 t, exactly.
        let a: Vec<Vec<f64>> = (0..5).map(|t| vec![1.0, t as f64]).collect();
        let b: Vec<f64> = (0..5).map(|t| 2.0 + 3.0 * t as f64).collect();
        let x = nnls(&a, &b, 0.0);
        assert!((x[0] - 2.0).abs() < 1e-9 && (x[1] - 3.0).abs() < 1e-9, "{x:?}");
        // The unconstrained answer has a negative slope; non-negativity holds it at 0.
        let b: Vec<f64> = (0..5).map(|t| 10.0 - t as f64).collect();
        let x = nnls(&a, &b, 0.0);
        assert!(x[1] == 0.0 && (x[0] - 8.0).abs() < 1e-9, "{x:?}");
    }
}
