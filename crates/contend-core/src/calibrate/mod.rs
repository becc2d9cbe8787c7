//! Fit a machine to measured p2pBandwidthLatencyTest output: one efficiency per link kind from
//! the bandwidth matrices, and from the latency matrices the GPUs' copy-engine latency, the
//! host-memory hand-off of staged copies and one hop latency per link kind. The result is the
//! machine description with those values written in, and every measured entry beside its new
//! prediction.
//!
//! Bandwidth: in the unidirectional matrices a copy runs alone, so it moves at the capacity of its
//! tightest resource, bandwidth × efficiency / times crossed. That is linear in the efficiency
//! of that resource's kind, so the fit alternates: pick each copy's tightest resource under the
//! current efficiencies, then solve each kind's efficiency by least squares through the origin,
//! until no copy changes its tightest resource. The bidirectional peer matrix then gives each
//! kind's duplex loss and a P2P-read matrix its read efficiency (duplex_read.rs), and
//! nvbandwidth's tests of one GPU copying to and from its host memory at once each direction's
//! duplex loss of the host links (or one value, when only one direction was measured); the staged
//! bidirectional matrix is reported, not fitted (the staging pipeline loses 35% on the A100
//! fixture, more than link sharing explains).
//! Latency: a copy's fixed cost is a sum of per-device and per-hop terms (see model::mechanism),
//! linear in the unknowns; non-negative least squares with a small ridge (lsq.rs) solves it.
//! Where the measurements cannot tell unknowns apart (every staged copy crosses the same kinds),
//! the ridge spreads the time evenly among them; the predictions do not depend on the split.

mod duplex_read;
pub mod general;
mod golden;
pub mod kernels_fit;
mod lm;
mod lsq;
mod memory_write;
pub mod nccl_fit;
pub mod nccl_linear;
pub mod nccl_release;
pub mod patterns;
mod peer;
pub mod sc16_fit;

pub use crate::tools::p2p_output::{parse as parse_p2p_output, P2pMeasurements, Tool};

/// p2pBandwidthLatencyTest or nvbandwidth output (plain or `-j` JSON), whichever `text` is.
pub fn parse_measurements(text: &str, origin: &str) -> Result<P2pMeasurements> {
    if nvbandwidth_json::detect(text) {
        let (plain, notes) = nvbandwidth_json::to_text(text, origin)?;
        let mut m = nvbandwidth::parse(&plain, origin)?;
        m.skipped.extend(notes);
        Ok(m)
    } else if nvbandwidth::detect(text) {
        nvbandwidth::parse(text, origin)
    } else {
        parse_p2p_output(text, origin)
    }
}

use crate::error::{Error, Result};
use crate::flow::router::{Plan, Router};
use crate::model::maxmin::MaxminParams;
use crate::tools::p2p::p2p_matrices;
use crate::tools::{concurrent, nvbandwidth_json, nvbandwidth_output as nvbandwidth};
use crate::topology::{DeviceKind, LinkKind, Machine, MachineSpec};
use crate::units::Time;
use crate::workload::Mechanism;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize)]
pub struct Residual {
    pub matrix: String,
    pub src: String,
    pub dst: String,
    pub measured: f64,
    pub predicted: Option<f64>,
    /// (predicted - measured) / measured.
    pub relative_error: Option<f64>,
    /// Left out of the fit (hold-out validation) and only predicted.
    pub held_out: bool,
}

/// How well one kind of measurement is predicted.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Score {
    pub count: usize,
    pub median_abs_relative_error: f64,
    pub within_10_percent: f64,
}

/// Scores per matrix ("bidirectional_p2p_gbps (held out)", "latency_p2p_us (fitted)", ...).
pub(super) fn scores(residuals: &[Residual]) -> BTreeMap<String, Score> {
    let mut groups: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in residuals {
        let Some(e) = r.relative_error else { continue };
        groups.entry(format!("{} ({})", r.matrix, if r.held_out { "held out" } else { "fitted" })).or_default().push(e.abs());
    }
    groups
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
            let within = v.iter().filter(|&&e| e <= 0.10 + 1e-12).count() as f64 / n as f64;
            (k, Score { count: n, median_abs_relative_error: median, within_10_percent: within })
        })
        .collect()
}

#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    /// The machine with the fitted efficiencies and latencies written in.
    pub spec: MachineSpec,
    /// "efficiency.nvlink" -> "0.917", "latency.gpu" -> "2.55us", "latency.hop.pcie" -> ...
    pub fitted: BTreeMap<String, String>,
    pub residuals: Vec<Residual>,
    /// Root mean square of the relative errors, per matrix.
    pub rms_relative_error: BTreeMap<String, f64>,
    pub notes: Vec<String>,
    /// Median |relative error| and share within ±10% per kind of measurement.
    pub scores: BTreeMap<String, Score>,
}

const KINDS: [LinkKind; 8] =
    [LinkKind::Pcie, LinkKind::Nvlink, LinkKind::Qpi, LinkKind::Upi, LinkKind::Xgmi, LinkKind::Fabric, LinkKind::Network, LinkKind::Memory];

fn kind_name(k: LinkKind) -> &'static str {
    k.name()
}

fn kind_index(k: LinkKind) -> usize {
    KINDS.iter().position(|&x| x == k).unwrap()
}

/// One bandwidth measurement: the resources its copy crosses (link, direction, times crossed),
/// the declared peer bandwidths it crosses (an index into `peer::declared`, share), and its
/// rate, bytes/s.
struct Copy {
    resources: Vec<(usize, bool, f64)>,
    peer: Vec<(usize, f64)>,
    per_copy: f64,
}

impl Copy {
    fn new(m: &Machine, p: &Plan, caps: &[(LinkKind, peer::PeerSide, f64)], per_copy: f64) -> Copy {
        let peer = peer::crossed(m, p).into_iter().map(|(k, s, x)| (caps.iter().position(|c| c.0 == k && c.1 == s).expect("declared"), x)).collect();
        Copy { resources: resources_of(m, p), peer, per_copy }
    }
}

fn resources_of(m: &Machine, p: &Plan) -> Vec<(usize, bool, f64)> {
    let mut out: Vec<(usize, bool, f64)> = Vec::new();
    for (h, x) in p.shares() {
        // Reads and writes share a memory link, as in maxmin.
        let dir = h.forward || m.links[h.link].kind == LinkKind::Memory;
        match out.iter_mut().find(|r| r.0 == h.link && r.1 == dir) {
            Some(r) => r.2 += x,
            None => out.push((h.link, dir, x)),
        }
    }
    out
}

/// Efficiency of each link kind that limits some measured copy, and the value of each declared
/// peer bandwidth (`peer_start`, in `peer::declared`'s order) that limits some: a copy's
/// tightest resource is a link (bandwidth × efficiency / times crossed) or a peer bandwidth
/// (value / share crossing), and each unknown is solved by least squares through the origin on
/// the copies it limits, until the choice of tightest resources stops changing.
fn fit_efficiency(m: &Machine, copies: &[Copy], start: [f64; 8], peer_start: &[f64]) -> ([Option<f64>; 8], Vec<Option<f64>>) {
    let mut eff = start;
    let mut fitted = [None; 8];
    let mut peer = peer_start.to_vec();
    let mut peer_fitted = vec![None; peer.len()];
    let mut tightest: Vec<usize> = vec![usize::MAX; copies.len()];
    for _ in 0..50 {
        // Indices past a copy's links are its peer bandwidths.
        let pick: Vec<usize> = copies
            .iter()
            .map(|c| {
                let link = c.resources.iter().map(|&(l, _, w)| m.links[l].bandwidth * eff[kind_index(m.links[l].kind)] / w);
                let caps: Vec<f64> = link.chain(c.peer.iter().map(|&(p, x)| peer[p] / x)).collect();
                (0..caps.len()).min_by(|&a, &b| caps[a].total_cmp(&caps[b])).unwrap()
            })
            .collect();
        if pick == tightest {
            break;
        }
        tightest = pick;
        let (mut num, mut den) = ([0.0; 8], [0.0; 8]);
        let (mut peer_num, mut peer_den) = (vec![0.0; peer.len()], vec![0.0; peer.len()]);
        for (c, &k) in copies.iter().zip(&tightest) {
            if let Some(&(p, share)) = k.checked_sub(c.resources.len()).map(|i| &c.peer[i]) {
                peer_num[p] += c.per_copy / share;
                peer_den[p] += 1.0 / (share * share);
                continue;
            }
            let (l, _, w) = c.resources[k];
            let x = m.links[l].bandwidth / w;
            let kind = kind_index(m.links[l].kind);
            num[kind] += x * c.per_copy;
            den[kind] += x * x;
        }
        for k in 0..KINDS.len() {
            if den[k] > 0.0 {
                eff[k] = (num[k] / den[k]).clamp(1e-3, 1.0);
                fitted[k] = Some(eff[k]);
            }
        }
        for p in 0..peer.len() {
            if peer_den[p] > 0.0 {
                peer[p] = peer_num[p] / peer_den[p];
                peer_fitted[p] = Some(peer[p]);
            }
        }
    }
    (fitted, peer_fitted)
}

/// Unknowns of the latency fit: GPU engine, host-memory hand-off, one hop latency per kind, and
/// last the copy engine's cost of passing an NVSwitch (`default_latency::NVSWITCH_TRAVERSAL`).
const GPU: usize = 0;
const MEM: usize = 1;
const NVSWITCH: usize = 2 + KINDS.len();
const UNKNOWNS: usize = NVSWITCH + 1;

/// The unknown a hop's latency belongs to.
fn hop_unknown(m: &Machine, link: usize) -> usize {
    2 + kind_index(m.links[link].kind)
}

/// How many of each unknown a copy from `src` to `dst` pays, and what they cost it on the
/// machine as written, seconds.
fn latency_row(m: &Machine, p: &Plan, src: usize, dst: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut row, mut paid) = (vec![0.0; UNKNOWNS], vec![0.0; UNKNOWNS]);
    let mut pay = |c: usize, seconds: f64| {
        row[c] += 1.0;
        paid[c] += seconds;
    };
    pay(GPU, m.devices[src].latency);
    if p.mechanism == Mechanism::Staged {
        pay(GPU, m.devices[dst].latency);
        pay(MEM, p.staging.map_or(0.0, |h| m.devices[h].latency));
    }
    for h in &p.hops {
        pay(hop_unknown(m, h.link), m.links[h.link].latency);
        // The switch the hop arrives at, once per traversal, as the router charges it.
        let l = &m.links[h.link];
        let at = if h.forward { l.b } else { l.a };
        if m.devices[at].kind == DeviceKind::Nvswitch {
            pay(NVSWITCH, m.devices[at].latency);
        }
    }
    (row, paid)
}

/// Latencies from the rows of the latency matrices (each row: how many engines, hand-offs and
/// hops of each kind a copy pays; its measured seconds): non-negative least squares on the
/// unknowns the rows can tell apart. One the rows cannot tell from others (every staged copy
/// pays two PCIe hops per hand-off, say) is named in a note and keeps the machine's value, as
/// in the pattern fit; the sums the copies pay are fitted all the same. Returns the latencies
/// and which unknowns were fitted; `paid` is what each copy pays of each unknown as written.
fn fit_latencies(rows: &[Vec<f64>], paid: &[Vec<f64>], ys: &[f64], notes: &mut Vec<String>) -> (Vec<f64>, Vec<bool>) {
    let k = UNKNOWNS;
    if rows.is_empty() {
        return (vec![0.0; k], vec![false; k]);
    }
    let name = |c: usize| match c {
        GPU => "latency.gpu".to_string(),
        MEM => "latency.host_memory".to_string(),
        NVSWITCH => "latency.nvswitch".to_string(),
        _ => format!("latency.hop.{}", kind_name(KINDS[c - 2])),
    };
    // The hand-off first: where only staged copies are measured, the copies' fixed cost is the
    // host's (the engines keep their per-generation default), and where peer copies are
    // measured too, the engine comes out of them.
    let order: Vec<usize> = [MEM, GPU].into_iter().chain(2..k).collect();
    let cols: Vec<Vec<f64>> = order.iter().map(|&c| rows.iter().map(|r| r[c]).collect()).collect();
    let mut why = vec![None; k];
    for (w, &c) in lm::unidentifiable(&cols).into_iter().zip(&order) {
        why[c] = w.map(|w| match w {
            lm::Unidentified::Confounded(with) => lm::Unidentified::Confounded(with.into_iter().map(|o| order[o]).collect()),
            other => other,
        });
    }
    let free: Vec<bool> = why.iter().map(Option::is_none).collect();
    for (c, w) in why.iter().enumerate() {
        if let Some(lm::Unidentified::Confounded(with)) = w {
            let with: Vec<String> = with.iter().map(|&o| name(o)).collect();
            notes.push(format!("{}: the latency matrices cannot tell it apart from {} (kept as it was)", name(c), with.join(", ")));
        }
    }
    // Fixed unknowns' share comes off each measurement; the free ones are fitted to the rest.
    let reduced: Vec<Vec<f64>> = rows.iter().map(|r| (0..k).filter(|&c| free[c]).map(|c| r[c]).collect()).collect();
    let rest: Vec<f64> = paid.iter().zip(ys).map(|(r, y)| y - (0..k).filter(|&c| !free[c]).map(|c| r[c]).sum::<f64>()).collect();
    let solved = lsq::nnls(&reduced, &rest, 1e-6);
    let mut lat = vec![0.0; k];
    for (c, v) in (0..k).filter(|&c| free[c]).zip(solved) {
        lat[c] = v;
    }
    (lat, free)
}

/// The note of a fit at its upper bound 1 (`efficiency`, or `read_efficiency` where nvbandwidth
/// measured only reads): the links carry all of their bandwidth and the measurement still wants
/// more, so their bandwidth is likely written too low (a PCIe generation or width the dump did
/// not give).
fn full_bandwidth(kind: LinkKind, what: &str) -> String {
    format!(
        "{} links run at their full bandwidth in the fit ({what}.{} at its bound 1): their bandwidth may be written too low",
        kind_name(kind),
        kind_name(kind)
    )
}

/// With `hold_out`, the fit sees single-pair data only — the unidirectional and read matrices,
/// the latencies of pairs i < j, and nvbandwidth's copies between one GPU
/// and its host memory (one way, and both ways at once) — and every other measurement (the
/// bidirectional peer matrices, the latencies of pairs i > j, the tests of several GPUs at
/// once) is predicted and scored as held out.
pub fn calibrate(m: &Machine, meas: &P2pMeasurements, params: &MaxminParams, hold_out: bool) -> Result<Calibration> {
    let gpus = m.gpus();
    let n = gpus.len();
    if meas.devices.len() != n {
        return Err(Error::input(
            "measurements",
            "",
            format!("list {} devices but {} has {} GPUs; measure on the machine described, with every GPU visible", meas.devices.len(), m.name, n),
        ));
    }
    let router = Router::new(m);
    let mut notes = meas.skipped.clone();
    let mut plans = vec![vec![[None, None]; n]; n];
    let measured_peer = meas.peer_access();
    for i in 0..n {
        for j in (0..n).filter(|&j| j != i) {
            for (k, peer) in [true, false].into_iter().enumerate() {
                // A staged path matters only where staged copies were measured.
                let used = peer || meas.unidirectional_staged_gbps.is_some();
                match router.plan(gpus[i], gpus[j], None, &[], peer) {
                    Ok(p) => plans[i][j][k] = Some(p),
                    Err(e) if used && !notes.contains(&e) => notes.push(e),
                    Err(_) => {}
                }
            }
            let predicted = plans[i][j][0].as_ref().is_some_and(|p| p.mechanism == Mechanism::P2p);
            if let Some(measured) = measured_peer.as_ref().map(|a| a[i][j]) {
                if measured != predicted {
                    notes.push(format!(
                        "{} -> {}: the machine says peer access {}, the measurement says {}; check the p2p flags of the links between them",
                        m.devices[gpus[i]].name,
                        m.devices[gpus[j]].name,
                        if predicted { "yes" } else { "no" },
                        if measured { "yes" } else { "no" }
                    ));
                }
            }
        }
    }

    let mut copies = Vec::new();
    // Declared peer bandwidths start at the fastest measured copy through them (a cap above every
    // copy limits none, and the fit could not see it).
    let mut caps = peer::declared(m);
    for (matrix, mode) in [(&meas.unidirectional_p2p_gbps, 0), (&meas.unidirectional_staged_gbps, 1)] {
        let Some(matrix) = matrix else { continue };
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                if let (Some(p), Some(v)) = (&plans[i][j][mode], matrix[i][j]) {
                    copies.push(Copy::new(m, p, &caps, v * 1e9));
                }
            }
        }
    }
    // nvbandwidth's host copies run alone too: they fit the kinds on the GPU-host path.
    for c in &meas.host_copies {
        let f = &c.flows[0];
        let ends = concurrent::device(m, &router, f.src).and_then(|s| Ok((s, concurrent::device(m, &router, f.dst)?)));
        match ends.and_then(|(s, d)| router.plan(s, d, None, &[], true)) {
            Ok(p) => copies.push(Copy::new(m, &p, &caps, c.gbps * 1e9)),
            Err(e) if !notes.contains(&e) => notes.push(e),
            Err(_) => {}
        }
    }
    let start = KINDS.map(|k| params.efficiency(k));
    for (p, cap) in caps.iter_mut().enumerate() {
        let fastest = copies.iter().flat_map(|c| c.peer.iter().filter(|q| q.0 == p).map(move |q| c.per_copy * q.1)).fold(0.0, f64::max);
        if fastest > 0.0 {
            cap.2 = cap.2.min(fastest);
        }
    }
    let peer_start: Vec<f64> = caps.iter().map(|c| c.2).collect();
    let (eff, peer_fit) = fit_efficiency(m, &copies, start, &peer_start);

    let (mut rows, mut paid, mut ys) = (Vec::new(), Vec::new(), Vec::new());
    for (matrix, mode) in [(&meas.latency_p2p_us, 0), (&meas.latency_staged_us, 1)] {
        let Some(matrix) = matrix else { continue };
        for i in 0..n {
            // The diagonal (a copy inside one GPU) is left out, as in the bandwidth fit: the
            // machine does not describe a local copy, which costs more than a peer copy on
            // the public A100 host (2.47-2.71 µs against 2.22-2.32 µs), so no engine latency
            // fits both.
            for j in (0..n).filter(|&j| j != i && !(hold_out && j < i)) {
                if let (Some(p), Some(v)) = (&plans[i][j][mode], matrix[i][j]) {
                    let (row, cost) = latency_row(m, p, gpus[i], gpus[j]);
                    rows.push(row);
                    paid.push(cost);
                    ys.push(v * 1e-6);
                }
            }
        }
    }
    let (lat, observed) = fit_latencies(&rows, &paid, &ys, &mut notes);

    let mut spec = m.spec.clone();
    let mut fitted = BTreeMap::new();
    for (k, e) in eff.iter().enumerate() {
        if let Some(e) = e {
            let e = (e * 1e4).round() / 1e4;
            fitted.insert(format!("efficiency.{}", kind_name(KINDS[k])), format!("{e}"));
            spec.links.iter_mut().filter(|l| l.kind == KINDS[k]).for_each(|l| l.efficiency = Some(e));
            if e >= 1.0 {
                notes.push(full_bandwidth(KINDS[k], "efficiency"));
            }
        }
    }
    for (&(k, side, _), v) in caps.iter().zip(&peer_fit) {
        let name = format!("{}.{}", side.field(), kind_name(k));
        match v {
            Some(v) => {
                let v = (v / 1e6).round() * 1e6;
                fitted.insert(name, format!("{}", crate::units::Bandwidth(v)));
                peer::write(&mut spec, k, side, v);
            }
            None => notes.push(format!("{name}: no measured copy is limited by it; kept as written")),
        }
    }
    let time = |s: f64| Time::from_secs((s * 1e9).round() / 1e9);
    if observed[GPU] {
        fitted.insert("latency.gpu".into(), format!("{}", time(lat[GPU])));
        spec.devices.iter_mut().filter(|d| d.kind == DeviceKind::Gpu).for_each(|d| d.latency = Some(time(lat[GPU])));
    }
    if observed[MEM] {
        fitted.insert("latency.host_memory".into(), format!("{}", time(lat[MEM])));
        spec.devices.iter_mut().filter(|d| d.kind == DeviceKind::HostMemory).for_each(|d| d.latency = Some(time(lat[MEM])));
    }
    for (i, l) in spec.links.iter_mut().enumerate() {
        let c = hop_unknown(m, i);
        if observed[c] {
            l.latency = Some(time(lat[c]));
        }
    }
    for (k, kind) in KINDS.iter().enumerate().filter(|&(k, _)| observed[2 + k]) {
        fitted.insert(format!("latency.hop.{}", kind_name(*kind)), format!("{}", time(lat[2 + k])));
    }
    if observed[NVSWITCH] {
        fitted.insert("latency.nvswitch".into(), format!("{}", time(lat[NVSWITCH])));
        spec.devices.iter_mut().filter(|d| d.kind == DeviceKind::Nvswitch).for_each(|d| d.latency = Some(time(lat[NVSWITCH])));
    }

    // Duplex loss and read efficiency, on the links with their fitted efficiencies.
    let with_eff = Machine::from_spec(spec.clone(), &m.origin)?;
    let kinds = [(&meas.bidirectional_p2p_gbps, "duplex"), (&meas.unidirectional_p2p_read_gbps, "read_efficiency")];
    for (matrix, what) in kinds {
        let Some(matrix) = matrix else { continue };
        if hold_out && what == "duplex" {
            continue;
        }
        let fit = if what == "duplex" {
            duplex_read::fit_duplex(&with_eff, &plans, matrix, params)
        } else {
            duplex_read::fit_read(&with_eff, &plans, matrix, params)
        };
        for (name, (kind, v)) in fit {
            let v = (v * 1e4).round() / 1e4;
            fitted.insert(format!("{what}.{name}"), format!("{v}"));
            if what == "read_efficiency" && v >= 1.0 {
                notes.push(full_bandwidth(kind, "read_efficiency"));
            }
            if what == "duplex" && kind == LinkKind::Pcie && meas.host_bidirectional.is_empty() {
                notes.push("duplex.pcie: one value for both directions; a peer pair loads both directions of every link alike, so the bidirectional matrix cannot tell them apart (nvbandwidth's host bidirectional tests can)".into());
            }
            for l in spec.links.iter_mut().filter(|l| l.kind == kind) {
                if what == "duplex" && l.duplex_upstream.is_some() {
                    // The machine gives this link a loss per direction; a peer pair shows only the larger.
                    let note = format!("duplex.{name} is not written on the {name} links that give a loss per direction (duplex_upstream, duplex_downstream)");
                    if !notes.contains(&note) {
                        notes.push(note);
                    }
                } else if what == "duplex" {
                    l.duplex = Some(v);
                } else {
                    l.read_efficiency = Some(v);
                }
            }
        }
    }

    if let (Some(matrix), false) = (&meas.bidirectional_staged_gbps, hold_out) {
        if let Some(v) = duplex_read::fit_staging_duplex(&with_eff, &plans, matrix, params) {
            let v = (v * 1e4).round() / 1e4;
            fitted.insert("staging_duplex".into(), format!("{v}"));
            spec.devices.iter_mut().filter(|d| d.kind == DeviceKind::HostMemory).for_each(|d| d.staging_duplex = Some(v));
        }
    }

    // The host links' duplex loss per direction, from one GPU copying both ways at once
    // (single-GPU data: fitted in hold-out validation too; the all-GPU tests stay held out).
    let (host_duplex, host_notes) = duplex_read::fit_host_duplex(&with_eff, &meas.host_bidirectional, params);
    notes.extend(host_notes);
    let round = |v: f64| (v * 1e4).round() / 1e4;
    match host_duplex {
        Some(duplex_read::HostDuplex::Directed { kind, upstream, downstream }) => {
            let (up, down) = (round(upstream), round(downstream));
            if let Some(one) = fitted.remove(&format!("duplex.{}", kind.name())) {
                notes.push(format!(
                    "duplex.{k} = {one} from the bidirectional peer matrix is replaced by each direction's loss from the host tests (a peer pair loads both directions of every link alike, so it shows the larger loss only)",
                    k = kind.name()
                ));
            }
            fitted.insert(format!("duplex_upstream.{}", kind.name()), format!("{up}"));
            fitted.insert(format!("duplex_downstream.{}", kind.name()), format!("{down}"));
            for l in spec.links.iter_mut().filter(|l| l.kind == kind) {
                (l.duplex, l.duplex_upstream, l.duplex_downstream) = (None, Some(up), Some(down));
            }
        }
        Some(duplex_read::HostDuplex::One { kind, duplex }) if !fitted.contains_key(&format!("duplex.{}", kind.name())) => {
            let v = round(duplex);
            fitted.insert(format!("duplex.{}", kind.name()), format!("{v}"));
            spec.links.iter_mut().filter(|l| l.kind == kind && l.duplex_upstream.is_none()).for_each(|l| l.duplex = Some(v));
        }
        _ => {}
    }

    // Host memory's write efficiency from the all-GPU host writes (concurrent data: held out
    // in hold-out validation, where the memories keep what the machine says).
    let writes = if hold_out { Vec::new() } else { memory_write::tests(&meas.concurrent) };
    match memory_write::fit(&spec, &m.origin, &writes, params) {
        Ok(Some(w)) => {
            let w = round(w);
            fitted.insert("write_efficiency".into(), format!("{w}"));
            spec.devices.iter_mut().filter(|d| d.kind == DeviceKind::HostMemory).for_each(|d| d.write_efficiency = Some(w));
        }
        Ok(None) if !writes.is_empty() => {
            notes.push("write_efficiency: the all-GPU host writes run at the rate their links allow; the host memories keep their write efficiency".into())
        }
        Ok(None) => {}
        Err(e) => notes.push(format!("write_efficiency: not fitted ({e})")),
    }
    let calibrated = Machine::from_spec(spec.clone(), &format!("{} (calibrated)", m.origin))?;
    let mut predicted = p2p_matrices(&calibrated, params)?;
    if meas.tool == Tool::Nvbandwidth {
        let peer = crate::tools::nvbandwidth::peer_copies(&calibrated, params)?;
        (predicted.unidirectional_p2p_gbps, predicted.unidirectional_p2p_read_gbps, predicted.bidirectional_p2p_gbps) = peer;
    }
    let pairs = [
        ("unidirectional_p2p_gbps", &meas.unidirectional_p2p_gbps, &predicted.unidirectional_p2p_gbps, false),
        ("unidirectional_p2p_read_gbps", &meas.unidirectional_p2p_read_gbps, &predicted.unidirectional_p2p_read_gbps, false),
        ("unidirectional_staged_gbps", &meas.unidirectional_staged_gbps, &predicted.unidirectional_staged_gbps, false),
        ("bidirectional_p2p_gbps", &meas.bidirectional_p2p_gbps, &predicted.bidirectional_p2p_gbps, false),
        ("bidirectional_staged_gbps", &meas.bidirectional_staged_gbps, &predicted.bidirectional_staged_gbps, false),
        ("latency_p2p_us", &meas.latency_p2p_us, &predicted.latency_p2p_us, true),
        ("latency_staged_us", &meas.latency_staged_us, &predicted.latency_staged_us, true),
    ];
    let mut residuals = Vec::new();
    let mut rms = BTreeMap::new();
    for (name, measured, predicted, diagonal) in pairs {
        let Some(measured) = measured else { continue };
        let mut sq = Vec::new();
        for i in 0..n {
            for j in (0..n).filter(|&j| diagonal || j != i) {
                let Some(y) = measured[i][j] else { continue };
                let p = predicted[i][j];
                // A measured 0 has no relative error; its prediction is still listed.
                let rel = p.filter(|_| y > 0.0).map(|p| (p - y) / y);
                sq.extend(rel.map(|r| r * r));
                residuals.push(Residual {
                    matrix: name.into(),
                    src: m.devices[gpus[i]].name.clone(),
                    dst: m.devices[gpus[j]].name.clone(),
                    measured: y,
                    predicted: p,
                    relative_error: rel,
                    held_out: hold_out && (name.starts_with("bidirectional") || (name.starts_with("latency") && j < i)),
                });
            }
        }
        if !sq.is_empty() {
            rms.insert(name.to_string(), (sq.iter().sum::<f64>() / sq.len() as f64).sqrt());
        }
    }
    // Host copies one at a time and one GPU's both ways at once (fitted), and the concurrent
    // tests (never fitted), on the calibrated machine.
    let host = meas.host_copies.iter().map(|c| (c, "unidirectional", true)).chain(meas.host_bidirectional.iter().map(|c| (c, "bidirectional", true)));
    let concurrent_fitted = |c: &concurrent::Concurrent| writes.iter().any(|w| std::ptr::eq(*w, c)) && fitted.contains_key("write_efficiency");
    for (c, kind, fitted) in host.chain(meas.concurrent.iter().map(|c| (c, "concurrent", concurrent_fitted(c)))) {
        let p = match concurrent::predict(&calibrated, c, params) {
            Ok(p) => p,
            Err(e) => {
                if !notes.contains(&e) {
                    notes.push(e);
                }
                continue;
            }
        };
        let name = |e: concurrent::End| match e {
            concurrent::End::Gpu(i) => m.devices[gpus[i]].name.clone(),
            concurrent::End::Host(i) => format!("host of {}", m.devices[gpus[i]].name),
        };
        // A total names the GPU the test is about (the one end all its copies share); a sum of
        // both ways names its matrix cell, row then column (`bidirectional_cell`: a read's first
        // copy runs column to row, a write's row to column).
        use concurrent::Value;
        let (src, dst) = match (c.value, c.flows.first()) {
            (Value::Total, Some(f)) if c.flows.iter().all(|g| g.src == f.src) => (name(f.src), "all".to_string()),
            (Value::Total, Some(f)) => ("all".to_string(), name(f.dst)),
            (Value::SumOfCopies, Some(f)) if f.access == crate::workload::Access::Read => (name(f.dst), name(f.src)),
            (_, Some(f)) => (name(f.src), name(f.dst)),
            (_, None) => continue,
        };
        let suffix = if c.value == Value::SumOfCopies { "_total" } else { "" };
        let matrix = format!("{kind}_{}{suffix}", c.test);
        let rel = (c.gbps > 0.0).then(|| (p - c.gbps) / c.gbps);
        residuals.push(Residual { matrix, src, dst, measured: c.gbps, predicted: Some(p), relative_error: rel, held_out: !fitted });
    }
    let scores = scores(&residuals);
    Ok(Calibration { spec, fitted, residuals, rms_relative_error: rms, notes, scores })
}

#[cfg(test)]
mod tests;
