//! The minimum of a cost with one minimum on an interval, by golden sections: each step keeps
//! the part of the interval that holds the lower of two inner points and reuses the other point,
//! so one new evaluation narrows it by 0.618.

/// Where `cost` is least on [lo, hi], to within `tol`: the middle of the final interval.
pub fn golden_min<E>(mut lo: f64, mut hi: f64, tol: f64, mut cost: impl FnMut(f64) -> Result<f64, E>) -> Result<f64, E> {
    let g = (5f64.sqrt() - 1.0) / 2.0;
    let (mut x1, mut x2) = (hi - g * (hi - lo), lo + g * (hi - lo));
    let (mut f1, mut f2) = (cost(x1)?, cost(x2)?);
    while hi - lo > tol {
        if f1 <= f2 {
            (hi, x2, f2) = (x2, x1, f1);
            x1 = hi - g * (hi - lo);
            f1 = cost(x1)?;
        } else {
            (lo, x1, f1) = (x1, x2, f2);
            x2 = lo + g * (hi - lo);
            f2 = cost(x2)?;
        }
    }
    Ok((lo + hi) / 2.0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_a_parabolas_minimum() {
        let x = super::golden_min(0.0, 1.0, 1e-9, |x| Ok::<f64, ()>((x - 0.3).powi(2))).unwrap();
        assert!((x - 0.3).abs() < 1e-8, "{x}");
    }
}
