//! The linear model `nccl_fit` reads off each measured row, and which of NCCL's constants the
//! rows can pin. A row's time (µs) is its part no constant moves plus, per constant j, a
//! coefficient times the constant: the per-step latency of each protocol (µs; the steps of the
//! call's critical chain), the inverse efficiency of each protocol above 1 (x' = 1/e - 1 >= 0:
//! e at most 1, the links' own rate; times the bandwidth part at e = 1) and the per-call network
//! cost (`nccl_call_net`, µs; once per call spanning nodes). A constant not freed keeps its
//! default's contribution, which is the row's own (NCCL's step latency differs by algorithm).
//!
//! The fit minimises the relative error of each row's time (a user reads busbw, whose error is the
//! time's), not the absolute one, which let a few large rows decide every constant. Which
//! constants are freed is chosen on held-out sizes: the rows fitted are split into two folds by
//! size (every other size of each run); a constant is freed only where fitting it on one fold
//! predicts the other better than the default does (forward selection: the constant that lowers
//! the held-out error most, while it lowers it by at least `GAIN`). A constant the rows cannot
//! pin keeps its default.

use super::lsq::nnls;

/// Columns: the per-step latency of LL, LL128 and Simple (µs), their x' (in NCCL's protocol
/// order), and `nccl_call_net` (µs).
pub const COLUMNS: usize = 7;
pub const CALL_NET: usize = 6;

/// A step column (0..3) of protocol index p; its x' column.
pub fn step(p: usize) -> usize {
    p
}
pub fn inverse_efficiency(p: usize) -> usize {
    3 + p
}

/// The least share of held-out squared error a constant must remove to be freed: below it, the
/// gain is within what fitting noise gives (one more free constant always lowers the fitted
/// error, and on two folds of a few sizes sometimes the held-out one by chance).
pub const GAIN: f64 = 0.05;

#[derive(Clone, Debug)]
pub struct Row {
    /// Measured time, µs.
    pub measured: f64,
    /// The measured time less the part no column moves (µs).
    pub y: f64,
    /// Each column's coefficient.
    pub a: [f64; COLUMNS],
    /// Each column's contribution at its default, µs.
    pub default: [f64; COLUMNS],
    /// 0 or 1: the held-out fold this row is in.
    pub fold: usize,
}

/// Bounds per column, in its unit (steps: NCCL's range; x' and the call cost: non-negative).
pub type Bounds = [(f64, f64); COLUMNS];

/// The values of the `free` columns fitted to `rows` (weighted by 1/measured), each within its
/// bounds: a value the unbounded fit puts outside is held at the bound and the others refitted.
/// Columns not free are None.
pub fn fit(rows: &[&Row], free: &[usize], bounds: &Bounds) -> [Option<f64>; COLUMNS] {
    let mut held: Vec<(usize, f64)> = Vec::new();
    loop {
        let cols: Vec<usize> = free.iter().copied().filter(|j| !held.iter().any(|(h, _)| h == j)).collect();
        let mut a = Vec::with_capacity(rows.len());
        let mut b = Vec::with_capacity(rows.len());
        for r in rows {
            let w = 1.0 / r.measured;
            let fixed: f64 = (0..COLUMNS)
                .map(|j| match held.iter().find(|(h, _)| *h == j) {
                    Some(&(_, v)) => r.a[j] * v,
                    None if cols.contains(&j) => 0.0,
                    None => r.default[j],
                })
                .sum();
            // NNLS solves for the value above each column's lower bound.
            let lower: f64 = cols.iter().map(|&j| r.a[j] * bounds[j].0).sum();
            a.push(cols.iter().map(|&j| r.a[j] * w).collect::<Vec<f64>>());
            b.push((r.y - fixed - lower) * w);
        }
        let sol = if cols.is_empty() { Vec::new() } else { nnls(&a, &b, 1e-12) };
        let mut out = [None; COLUMNS];
        for (&j, v) in cols.iter().zip(&sol) {
            out[j] = Some(v + bounds[j].0);
        }
        for &(j, v) in &held {
            out[j] = Some(v);
        }
        // The first free value above its upper bound is held there, and the rest refitted.
        match cols.iter().find(|&&j| out[j].is_some_and(|v| v > bounds[j].1)) {
            Some(&j) => held.push((j, bounds[j].1)),
            None => return out,
        }
    }
}

/// Each row's relative error of time with `values` (None: the default's contribution).
pub fn relative_error(r: &Row, values: &[Option<f64>; COLUMNS]) -> f64 {
    let modelled: f64 = (0..COLUMNS).map(|j| values[j].map_or(r.default[j], |v| r.a[j] * v)).sum();
    (modelled - r.y) / r.measured
}

/// The held-out squared relative error of freeing `free`: fitted on each fold, scored on the other.
pub fn held_out_error(rows: &[Row], free: &[usize], bounds: &Bounds) -> f64 {
    let mut sum = 0.0;
    for fold in 0..2 {
        let train: Vec<&Row> = rows.iter().filter(|r| r.fold != fold).collect();
        let values = if free.is_empty() || train.is_empty() { [None; COLUMNS] } else { fit(&train, free, bounds) };
        sum += rows.iter().filter(|r| r.fold == fold).map(|r| relative_error(r, &values).powi(2)).sum::<f64>();
    }
    sum
}

/// Whether `j` bears on some row enough to be fitted: a latency (a step, the per-call cost) on a
/// row whose bandwidth part at e = 1 is under a fifth of its time; an efficiency on a row whose
/// bandwidth part at e = 1 is over a quarter of it (else a far-off efficiency would stand in for
/// a latency the bounds hold, or the reverse).
pub fn bears(rows: &[Row], j: usize) -> bool {
    let bandwidth = |r: &Row| (0..3).map(|p| r.a[inverse_efficiency(p)]).sum::<f64>();
    rows.iter().any(|r| r.a[j] > 0.0 && if (3..6).contains(&j) { r.a[j] > 0.25 * r.measured } else { bandwidth(r) < 0.2 * r.measured })
}

/// The columns to free, in the order chosen, from those that bear on some row (`bears`); with
/// the held-out error of the defaults and of the choice.
pub fn choose(rows: &[Row], bounds: &Bounds) -> (Vec<usize>, f64, f64) {
    let candidates: Vec<usize> = (0..COLUMNS).filter(|&j| bears(rows, j)).collect();
    let default = held_out_error(rows, &[], bounds);
    let mut free: Vec<usize> = Vec::new();
    let mut err = default;
    loop {
        let best = candidates
            .iter()
            .filter(|j| !free.contains(j))
            .map(|&j| {
                let mut with = free.clone();
                with.push(j);
                (j, held_out_error(rows, &with, bounds))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1));
        match best {
            Some((j, e)) if e < (1.0 - GAIN) * err => {
                free.push(j);
                err = e;
            }
            _ => return (free, default, err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OPEN: Bounds = [(0.0, f64::INFINITY); COLUMNS];

    /// Rows of 10 us plus 2 steps of 3 us each (the step column; default 1 us a step) and a
    /// bandwidth part of 100 us at e = 1 taken at e = 0.5 (x' = 1): the step and x' come back.
    fn rows() -> Vec<Row> {
        (0..6)
            .map(|k| {
                let steps = 2.0;
                let bw = 100.0 * k as f64;
                let mut a = [0.0; COLUMNS];
                a[step(2)] = steps;
                a[inverse_efficiency(2)] = bw;
                let mut default = [0.0; COLUMNS];
                default[step(2)] = steps * 1.0;
                let measured = 10.0 + bw + steps * 3.0 + bw * 1.0;
                Row { measured, y: measured - 10.0 - bw, a, default, fold: k % 2 }
            })
            .collect()
    }

    #[test]
    fn frees_what_the_rows_pin_and_finds_it() {
        let rows = rows();
        let (free, default, err) = choose(&rows, &OPEN);
        assert!(free.contains(&step(2)) && free.contains(&inverse_efficiency(2)), "{free:?}");
        assert!(err < 1e-12 && default > 0.0);
        let refs: Vec<&Row> = rows.iter().collect();
        let v = fit(&refs, &free, &OPEN);
        assert!((v[step(2)].unwrap() - 3.0).abs() < 1e-6 && (v[inverse_efficiency(2)].unwrap() - 1.0).abs() < 1e-6, "{v:?}");
    }

    /// Rows the defaults already predict free nothing.
    #[test]
    fn keeps_the_defaults_where_they_predict() {
        let rows: Vec<Row> = rows()
            .into_iter()
            .map(|mut r| {
                r.y = r.default.iter().sum();
                r
            })
            .collect();
        assert_eq!(choose(&rows, &OPEN).0, Vec::<usize>::new());
    }

    /// A value beyond its bound is held there and the others refitted: steps capped at 2 us.
    #[test]
    fn holds_a_value_at_its_bound() {
        let rows = rows();
        let refs: Vec<&Row> = rows.iter().collect();
        let mut b = OPEN;
        b[step(2)] = (0.0, 2.0);
        let v = fit(&refs, &[step(2), inverse_efficiency(2)], &b);
        assert_eq!(v[step(2)], Some(2.0));
    }
}
