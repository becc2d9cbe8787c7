//! Per link kind, from the matrices the efficiency fit leaves alone: the duplex loss (from the
//! bidirectional peer matrix) and the read efficiency (from the P2P-read matrix).
//!
//! Both directions of a bidirectional pair cross the same links, so on the tightest link each
//! direction gets capacity / (1 + duplex): measured_total / 2 = capacity × y with
//! y = 1 / (1 + duplex), a least-squares line through the origin per kind of that link. A lone
//! pulled copy moves at capacity × read efficiency of its tightest link (its requests load only
//! the idle reverse direction): the same line. The efficiencies are taken as already fitted.

use super::cells::Matrix;
use crate::flow::router::Plan;
use crate::model::maxmin::MaxminParams;
use crate::topology::{LinkKind, Machine};
use crate::workload::Mechanism;
use std::collections::BTreeMap;

/// Capacity of a plan's tightest link (bytes/s) and that link's kind; host memory, which a
/// staged copy meets twice and shares with everything staged there, is left out.
fn tightest(m: &Machine, p: &Plan, params: &MaxminParams) -> Option<(f64, LinkKind)> {
    p.hops
        .iter()
        .filter(|h| m.links[h.link].kind != LinkKind::Memory)
        .map(|h| {
            let l = &m.links[h.link];
            (l.bandwidth * l.efficiency.unwrap_or_else(|| params.efficiency(l.kind)), l.kind)
        })
        .min_by(|a, b| a.0.total_cmp(&b.0))
}

/// y per kind from (capacity, measured rate) points: Σ c·y / Σ c².
fn line(points: &[(f64, LinkKind, f64)]) -> BTreeMap<&'static str, (LinkKind, f64)> {
    let mut sums: BTreeMap<&'static str, (LinkKind, f64, f64)> = BTreeMap::new();
    for &(c, k, y) in points {
        let e = sums.entry(k.name()).or_insert((k, 0.0, 0.0));
        e.1 += c * y;
        e.2 += c * c;
    }
    sums.into_iter().map(|(name, (k, num, den))| (name, (k, num / den))).collect()
}

/// (capacity, kind, measured rate) of every cell whose copy moves by `mechanism`; `mode` picks
/// the plans with peer access on (0) or off (1).
fn points(
    m: &Machine,
    plans: &[Vec<[Option<Plan>; 2]>],
    measured: &Matrix,
    params: &MaxminParams,
    halve: bool,
    mode: usize,
    mechanism: Mechanism,
) -> Vec<(f64, LinkKind, f64)> {
    let mut out = Vec::new();
    for (i, row) in measured.iter().enumerate() {
        for (j, v) in row.iter().enumerate().filter(|&(j, _)| j != i) {
            let (Some(v), Some(p)) = (v, &plans[i][j][mode]) else { continue };
            if p.mechanism != mechanism {
                continue;
            }
            if let Some((c, k)) = tightest(m, p, params) {
                out.push((c, k, v * 1e9 / if halve { 2.0 } else { 1.0 }));
            }
        }
    }
    out
}

/// Duplex loss per kind, in [0, 0.99].
pub fn fit_duplex(m: &Machine, plans: &[Vec<[Option<Plan>; 2]>], bidirectional: &Matrix, params: &MaxminParams) -> BTreeMap<&'static str, (LinkKind, f64)> {
    line(&points(m, plans, bidirectional, params, true, 0, Mechanism::P2p)).into_iter().map(|(n, (k, y))| (n, (k, (1.0 / y - 1.0).clamp(0.0, 0.99)))).collect()
}

/// The duplex loss of staged copies (one value for the machine), from the staged
/// bidirectional matrix: the same line through the origin over every cell, whatever the kind.
pub fn fit_staging_duplex(m: &Machine, plans: &[Vec<[Option<Plan>; 2]>], bidirectional: &Matrix, params: &MaxminParams) -> Option<f64> {
    let pts = points(m, plans, bidirectional, params, true, 1, Mechanism::Staged);
    let (num, den) = pts.iter().fold((0.0, 0.0), |(a, b), &(c, _, y)| (a + c * y, b + c * c));
    (den > 0.0).then(|| (den / num - 1.0).clamp(0.0, 0.99))
}

/// Read efficiency per kind, in [0.001, 1].
pub fn fit_read(m: &Machine, plans: &[Vec<[Option<Plan>; 2]>], read: &Matrix, params: &MaxminParams) -> BTreeMap<&'static str, (LinkKind, f64)> {
    line(&points(m, plans, read, params, false, 0, Mechanism::P2p)).into_iter().map(|(n, (k, y))| (n, (k, y.clamp(1e-3, 1.0)))).collect()
}
