//! Per link kind, from the matrices the efficiency fit leaves alone: the duplex loss (from the
//! bidirectional peer matrix) and the read efficiency (from the P2P-read matrix).
//!
//! Both directions of a bidirectional pair cross the same links, so on the tightest link each
//! direction gets capacity / (1 + duplex): measured_total / 2 = capacity × y with
//! y = 1 / (1 + duplex), a least-squares line through the origin per kind of that link. A lone
//! pulled copy moves at capacity × read efficiency of its tightest link (its requests load only
//! the idle reverse direction): the same line. The efficiencies are taken as already fitted.
//! nvbandwidth's tests of one GPU copying to and from its host memory at once give each
//! direction's duplex loss of the host link (`fit_host_duplex`).

use crate::flow::router::{Plan, Router};
use crate::model::maxmin::MaxminParams;
use crate::tools::cells::Matrix;
use crate::tools::concurrent::{Concurrent, End, Flow};
use crate::topology::{LinkKind, Machine};
use crate::workload::Mechanism;
use std::collections::BTreeMap;

/// Capacity of a plan's tightest link (bytes/s) and that link's kind; host memory, which a
/// staged copy meets twice and shares with everything staged there, is left out.
fn tightest(m: &Machine, p: &Plan, params: &MaxminParams) -> Option<(f64, LinkKind)> {
    p.shares()
        .iter()
        .filter(|(h, _)| m.links[h.link].kind != LinkKind::Memory)
        .map(|(h, x)| {
            let l = &m.links[h.link];
            (l.bandwidth * params.link_efficiency(l) / x, l.kind)
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

/// The duplex loss of the links between GPUs and their host memory, from nvbandwidth's tests of
/// one GPU copying both ways at once: each direction's, or one value for both when the data
/// cannot tell them apart.
#[derive(Clone, Debug, PartialEq)]
pub enum HostDuplex {
    /// What the upstream (toward the root) and the downstream direction lose.
    Directed {
        kind: LinkKind,
        upstream: f64,
        downstream: f64,
    },
    One {
        kind: LinkKind,
        duplex: f64,
    },
}

/// One GPU's link to its host memory in a test of both directions at once: the GPU, its
/// tightest link's capacity and kind, whether the device-to-host copy crosses that link
/// upstream, whether the measured copy is the device-to-host one, and its rate (bytes/s).
struct HostCell {
    gpu: usize,
    cap: f64,
    kind: LinkKind,
    to_host_upstream: bool,
    to_host: bool,
    rate: f64,
}

fn host_cell(m: &Machine, router: &Router, params: &MaxminParams, c: &Concurrent) -> Option<HostCell> {
    let (g, to_host) = match c.flows.first()? {
        Flow { src: End::Gpu(g), dst: End::Host(_), .. } => (*g, true),
        Flow { src: End::Host(_), dst: End::Gpu(g), .. } => (*g, false),
        _ => return None,
    };
    let gpu = *m.gpus().get(g)?;
    let p = router.plan(gpu, router.nearest_memory(gpu)?, None, &[], true).ok()?;
    let (cap, kind) = tightest(m, &p, params)?;
    let hop = p.hops.iter().find(|h| {
        let l = &m.links[h.link];
        l.kind == kind && l.bandwidth * params.link_efficiency(l) == cap
    })?;
    // The plan runs GPU -> memory: a hop against its link's a -> b runs toward `a`, the root side.
    Some(HostCell { gpu: g, cap, kind, to_host_upstream: !hop.forward, to_host, rate: c.gbps * 1e9 })
}

/// Fit from `tests` (nvbandwidth's host_to_device_bidirectional and device_to_host_bidirectional
/// cells: one GPU, the measured copy one way and the other way at once). Both directions full:
/// to_host + loss(to-host direction) × from_host = capacity, and the same the other way, a
/// least-squares line per direction over the GPUs that measured both. With one direction
/// measured only, the two losses cannot be told apart: capacity / (1 + duplex) each way.
/// Returns the fit and what it says about the data.
pub fn fit_host_duplex(m: &Machine, tests: &[Concurrent], params: &MaxminParams) -> (Option<HostDuplex>, Vec<String>) {
    let router = Router::new(m);
    // Per GPU: its link, and the measured to-host and from-host rates.
    let mut gpus: BTreeMap<usize, (HostCell, Option<f64>, Option<f64>)> = BTreeMap::new();
    for x in tests.iter().filter_map(|c| host_cell(m, &router, params, c)) {
        let (to_host, rate) = (x.to_host, x.rate);
        let e = gpus.entry(x.gpu).or_insert((x, None, None));
        *(if to_host { &mut e.1 } else { &mut e.2 }) = Some(rate);
    }
    let Some((first, _, _)) = gpus.values().next() else { return (None, Vec::new()) };
    let (kind, upstream) = (first.kind, first.to_host_upstream);
    if gpus.values().any(|(g, _, _)| g.kind != kind || g.to_host_upstream != upstream) {
        return (None, vec!["nvbandwidth's host bidirectional tests: the GPUs' host links differ in kind or orientation; duplex not fitted from them".into()]);
    }
    let both: Vec<(f64, f64, f64)> = gpus.values().filter_map(|(g, w, r)| Some((g.cap, (*w)?, (*r)?))).collect();
    if both.is_empty() {
        // One direction measured: its copy and the other way share one rate, c / (1 + duplex).
        let (num, den) = gpus.values().filter_map(|(g, w, r)| Some((g.cap, w.or(*r)?))).fold((0.0, 0.0), |(a, b), (c, x)| (a + c * x, b + c * c));
        let duplex = (den / num - 1.0).clamp(0.0, 0.99);
        let note = format!(
            "nvbandwidth's host bidirectional tests measure one direction only (host_to_device or device_to_host, not both): the two directions' duplex loss of {} cannot be told apart; one value fitted",
            kind.name()
        );
        return (Some(HostDuplex::One { kind, duplex }), vec![note]);
    }
    // to_host + a × from_host = c and from_host + b × to_host = c, least squares per line.
    let line = |pts: &mut dyn Iterator<Item = (f64, f64)>| {
        let (num, den) = pts.fold((0.0, 0.0), |(n, d), (x, y)| (n + x * y, d + x * x));
        (num / den).clamp(0.0, 0.99)
    };
    let to_host_loss = line(&mut both.iter().map(|&(c, w, r)| (r, c - w)));
    let from_host_loss = line(&mut both.iter().map(|&(c, w, r)| (w, c - r)));
    let (up, down) = if upstream { (to_host_loss, from_host_loss) } else { (from_host_loss, to_host_loss) };
    if kind != LinkKind::Pcie {
        // Only PCIe links take a loss per direction; one value for the kind would also change
        // the GPUs' own links of that kind, which the peer matrices fit.
        let note = format!(
            "nvbandwidth's host bidirectional tests: the host links are {k} links, which take no loss per direction; their duplex stays the {k} one (measured {:.4} toward the host, {:.4} from it; not fitted)",
            to_host_loss,
            from_host_loss,
            k = kind.name()
        );
        return (None, vec![note]);
    }
    (Some(HostDuplex::Directed { kind, upstream: up, downstream: down }), Vec::new())
}
