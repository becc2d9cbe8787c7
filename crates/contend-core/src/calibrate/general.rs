//! One least-squares fit of every node parameter that a set of measured patterns can identify:
//! per link kind its efficiency, duplex loss (each direction's, on links that give one per
//! direction) and read efficiency; the GPUs' engine latency,
//! the host-memory hand-off and one hop latency per link kind; the staging duplex loss; the
//! value of every device capacity the machine declares; and the peer bandwidth of the links
//! that declare one (per kind and field). Predictions are maxmin runs of
//! each pattern on the machine with the parameters written in; the residuals are relative
//! errors of each transfer's time. Parameters no measurement depends on, or that the data
//! cannot tell apart from others, are named and keep their starting values.

use super::lm::{self, Unidentified};
use super::patterns::{self, Pattern};
use super::peer::{self, PeerSide};
use super::Residual;
use crate::error::{Error, Result};
use crate::model::maxmin::{MaxminParams, MaxminPrepared};
use crate::sim;
use crate::topology::{DeviceKind, LinkKind, Machine, MachineSpec};
use crate::units::{Bandwidth, Time};
use crate::workload::{Access, Workload};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    Efficiency(LinkKind),
    /// The one duplex loss of the links of a kind that give one value.
    Duplex(LinkKind),
    /// Each direction's, on the links of a kind that give one per direction.
    DuplexUpstream(LinkKind),
    DuplexDownstream(LinkKind),
    Read(LinkKind),
    GpuLatency,
    MemoryLatency,
    HopLatency(LinkKind),
    /// The written capacity of device i (the machine says it has one; the fit finds its value).
    Capacity(usize),
    /// Host memories' staging duplex loss.
    StagingDuplex,
    /// The peer bandwidth of the links of a kind that declare one (`peer_bandwidth`, both
    /// directions), or of their upstream or downstream direction alone: the machine says peer
    /// copies have a cap there; the fit finds its value.
    Peer(LinkKind, PeerSide),
}

impl Target {
    fn name(self, spec: &MachineSpec) -> String {
        match self {
            Target::Capacity(i) => format!("capacity.{}", spec.devices[i].name),
            Target::StagingDuplex => "staging_duplex".into(),
            Target::Peer(k, side) => format!("{}.{}", side.field(), k.name()),
            Target::Efficiency(k) => format!("efficiency.{}", k.name()),
            Target::Duplex(k) => format!("duplex.{}", k.name()),
            Target::DuplexUpstream(k) => format!("duplex_upstream.{}", k.name()),
            Target::DuplexDownstream(k) => format!("duplex_downstream.{}", k.name()),
            Target::Read(k) => format!("read_efficiency.{}", k.name()),
            Target::GpuLatency => "latency.gpu".into(),
            Target::MemoryLatency => "latency.host_memory".into(),
            Target::HopLatency(k) => format!("latency.hop.{}", k.name()),
        }
    }

    /// Latencies are solved in microseconds, so that every unknown is of order 1.
    fn scale(self) -> f64 {
        match self {
            Target::GpuLatency | Target::MemoryLatency | Target::HopLatency(_) => 1e-6,
            // Capacities in GB/s.
            Target::Capacity(_) | Target::Peer(..) => 1e9,
            _ => 1.0,
        }
    }

    fn bounds(self) -> (f64, f64) {
        match self {
            Target::Efficiency(_) | Target::Read(_) => (1e-3, 1.0),
            Target::Duplex(_) | Target::DuplexUpstream(_) | Target::DuplexDownstream(_) | Target::StagingDuplex => (0.0, 0.99),
            Target::Capacity(_) | Target::Peer(..) => (1e6, 1e15),
            _ => (0.0, 1e4),
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct GeneralFit {
    pub spec: MachineSpec,
    pub fitted: BTreeMap<String, String>,
    /// "latency.hop.nvlink: no measurement depends on it", ...
    pub unidentified: Vec<String>,
    /// Per measured transfer: `matrix` is "pattern NAME (us)", times in microseconds.
    pub residuals: Vec<Residual>,
    pub rms_relative_error: BTreeMap<String, f64>,
    /// Share of the fitted transfers within ±10%.
    pub within_10_percent: f64,
    /// Median |relative error| and share within ±10%, fitted and held out.
    pub scores: BTreeMap<String, super::Score>,
    pub notes: Vec<String>,
}

/// Single-pair data, what `--hold-out` fits on: a pattern whose copies join two endpoints, at
/// most one each way (one copy, or a pair copying both ways at once).
fn single_pair(x: &Pattern) -> bool {
    let t = &x.spec.transfers;
    let ends = |a: &str, b: &str| if a < b { (a.to_string(), b.to_string()) } else { (b.to_string(), a.to_string()) };
    let pair = ends(&t[0].src, &t[0].dst);
    t.len() <= 2 && t.iter().all(|c| ends(&c.src, &c.dst) == pair) && (t.len() == 1 || t[0].src != t[1].src)
}

/// The parameters this machine and these patterns could involve, with their current values.
fn targets(m: &Machine, patterns: &[Pattern], p: &MaxminParams) -> Vec<(Target, f64)> {
    let mut kinds: Vec<LinkKind> = m.links.iter().map(|l| l.kind).collect();
    kinds.sort_by_key(|k| k.name());
    kinds.dedup();
    let first = |k: LinkKind| m.links.iter().find(|l| l.kind == k).expect("kind present");
    let reads = patterns.iter().any(|x| x.spec.transfers.iter().any(|t| t.access == Some(Access::Read)));
    let mut out = Vec::new();
    for &k in &kinds {
        let l = first(k);
        out.push((Target::Efficiency(k), p.link_efficiency(l)));
        if !matches!(k, LinkKind::Memory | LinkKind::Network | LinkKind::Fabric) {
            if let Some(l) = m.links.iter().find(|l| l.kind == k && l.duplex_directed.is_none()) {
                out.push((Target::Duplex(k), p.link_duplex(l)));
            }
            // Links that give a loss per direction are fitted per direction.
            if let Some(d) = m.links.iter().filter(|l| l.kind == k).find_map(|l| l.duplex_directed) {
                out.extend([(Target::DuplexUpstream(k), d.upstream), (Target::DuplexDownstream(k), d.downstream)]);
            }
            if reads {
                out.push((Target::Read(k), l.read_efficiency.unwrap_or(1.0 / p.read_cost(k).data)));
            }
        }
    }
    // Peer bandwidths the machine declares, one value per kind and field (the first link's). Rates
    // come before latencies: where copies of one size cannot tell a fixed cost from a rate (the
    // Jacobian names the later of two such columns), the latency keeps its value and the rate is fitted.
    out.extend(peer::declared(m).into_iter().map(|(k, side, v)| (Target::Peer(k, side), v)));
    let gpu = m.gpus().first().map_or(0.0, |&g| m.devices[g].latency);
    out.push((Target::GpuLatency, gpu));
    if let Some(d) = m.devices.iter().find(|d| d.kind == DeviceKind::HostMemory) {
        out.push((Target::MemoryLatency, d.latency));
    }
    for &k in &kinds {
        out.push((Target::HopLatency(k), first(k).latency));
    }
    if let Some(d) = m.devices.iter().find(|d| d.kind == DeviceKind::HostMemory) {
        out.push((Target::StagingDuplex, d.staging_duplex.unwrap_or(p.duplex_staged)));
    }
    out
}

/// The largest measured peer throughput in one fitted pattern through one direction of a link
/// of kind `k` whose `side` declares a peer bandwidth: where that value starts (as a capacity's).
fn busiest_peer(m: &Machine, k: LinkKind, side: PeerSide, patterns: &[Pattern], workloads: &[Workload], fitted: &[bool], p: &MaxminParams) -> Result<f64> {
    let mut best: f64 = 0.0;
    for ((x, w), _) in patterns.iter().zip(workloads).zip(fitted).filter(|(_, &f)| f) {
        let flows = MaxminPrepared::new(m, w, *p)?.flows;
        let mut through = vec![0.0; 2 * m.links.len()];
        for (i, t) in w.transfers.iter().enumerate() {
            let plan = flows.plan(i);
            if !plan.mechanism.is_peer() {
                continue;
            }
            for h in &plan.hops {
                through[2 * h.link + usize::from(!h.forward)] += t.size as f64 / x.seconds[i];
            }
        }
        for l in (0..m.links.len()).filter(|&l| m.links[l].kind == k) {
            for d in (0..2).filter(|&d| PeerSide::declaring(&m.spec.links[l], d) == Some(side)) {
                best = best.max(through[2 * l + d]);
            }
        }
    }
    Ok(best)
}

/// The largest measured throughput through device `d` in any one fitted pattern: where a
/// declared capacity starts (a capacity above every load has no effect the fit could see).
fn busiest(m: &Machine, d: usize, patterns: &[Pattern], workloads: &[Workload], fitted: &[bool], p: &MaxminParams) -> Result<f64> {
    let mut best: f64 = 0.0;
    for ((x, w), _) in patterns.iter().zip(workloads).zip(fitted).filter(|(_, &f)| f) {
        let flows = MaxminPrepared::new(m, w, *p)?.flows;
        let mut through = 0.0;
        for (i, t) in w.transfers.iter().enumerate() {
            let times = crate::flow::visits(m, t.src, flows.plan(i)).filter(|&v| v == d).count() as f64;
            through += times * t.size as f64 / x.seconds[i];
        }
        best = best.max(through);
    }
    Ok(best)
}

fn apply(spec: &MachineSpec, targets: &[(Target, f64)], values: &[f64]) -> MachineSpec {
    let mut s = spec.clone();
    let time = |x: f64| Time::from_secs((x * 1e12).round() / 1e12);
    for (&(t, _), &v) in targets.iter().zip(values) {
        match t {
            Target::Efficiency(k) => s.links.iter_mut().filter(|l| l.kind == k).for_each(|l| l.efficiency = Some(v)),
            Target::Duplex(k) => s.links.iter_mut().filter(|l| l.kind == k && l.duplex_upstream.is_none()).for_each(|l| l.duplex = Some(v)),
            Target::DuplexUpstream(k) => s.links.iter_mut().filter(|l| l.kind == k && l.duplex_upstream.is_some()).for_each(|l| l.duplex_upstream = Some(v)),
            Target::DuplexDownstream(k) => {
                s.links.iter_mut().filter(|l| l.kind == k && l.duplex_downstream.is_some()).for_each(|l| l.duplex_downstream = Some(v))
            }
            Target::Read(k) => s.links.iter_mut().filter(|l| l.kind == k).for_each(|l| l.read_efficiency = Some(v)),
            Target::GpuLatency => s.devices.iter_mut().filter(|d| d.kind == DeviceKind::Gpu).for_each(|d| d.latency = Some(time(v))),
            Target::MemoryLatency => s.devices.iter_mut().filter(|d| d.kind == DeviceKind::HostMemory).for_each(|d| d.latency = Some(time(v))),
            Target::HopLatency(k) => s.links.iter_mut().filter(|l| l.kind == k).for_each(|l| l.latency = Some(time(v))),
            Target::Capacity(i) => s.devices[i].capacity = Some(Bandwidth(v)),
            Target::Peer(k, side) => peer::write(&mut s, k, side, v),
            Target::StagingDuplex => s.devices.iter_mut().filter(|d| d.kind == DeviceKind::HostMemory).for_each(|d| d.staging_duplex = Some(v)),
        }
    }
    s
}

/// Predicted seconds of every measured transfer, patterns in order.
fn predict(spec: &MachineSpec, origin: &str, workloads: &[Workload], p: &MaxminParams) -> Result<Vec<f64>> {
    let m = Machine::from_spec(spec.clone(), origin)?;
    let mut out = Vec::new();
    for w in workloads {
        let o = sim::run_prepared(w, &MaxminPrepared::new(&m, w, *p)?, false)?;
        out.extend(o.finish.iter().zip(&o.start).map(|(f, s)| f - s));
    }
    Ok(out)
}

/// Fit every parameter the patterns identify; with `hold_out`, fit on single-pair patterns only
/// and score the others (several copies at once) as held out.
pub fn fit(m: &Machine, patterns: &[Pattern], p: &MaxminParams, origin: &str, hold_out: bool) -> Result<GeneralFit> {
    let mut workloads = Vec::new();
    for x in patterns {
        let mut w = Workload::resolve(&x.spec, m, origin).map_err(|e| match e {
            Error::Input { problem, .. } => Error::input(origin, format!("pattern {}", x.name), problem),
            e => e,
        })?;
        // Errors found later (a read that must be staged) name the pattern too.
        w.origin = format!("{origin} (pattern {})", x.name);
        workloads.push(w);
    }
    let measured: Vec<f64> = patterns.iter().flat_map(|x| x.seconds.iter().copied()).collect();
    // Identical copies of a pattern are compared by rank: which stream an engine takes first is not defined.
    let same = patterns::same_copies(patterns);
    // Per measured transfer: whether the fit sees it.
    let fitted_pattern: Vec<bool> = patterns.iter().map(|x| !hold_out || single_pair(x)).collect();
    let in_fit: Vec<bool> = patterns.iter().zip(&fitted_pattern).flat_map(|(x, &f)| std::iter::repeat_n(f, x.seconds.len())).collect();
    if !in_fit.contains(&true) {
        return Err(Error::input(origin, "", "--hold-out fits on single-pair patterns (one copy, or one each way between two ends), and there are none"));
    }
    let mut targets = targets(m, patterns, p);
    for (t, v) in targets.iter_mut() {
        if let Target::Peer(k, side) = *t {
            let load = busiest_peer(m, k, side, patterns, &workloads, &fitted_pattern, p)?;
            if load > 0.0 {
                *v = v.min(load);
            }
        }
    }
    for (d, dev) in m.devices.iter().enumerate() {
        if let Some(c) = dev.capacity {
            let load = busiest(m, d, patterns, &workloads, &fitted_pattern, p)?;
            targets.push((Target::Capacity(d), if load > 0.0 { c.min(load) } else { c }));
        }
    }
    let scale: Vec<f64> = targets.iter().map(|(t, _)| t.scale()).collect();
    let lo: Vec<f64> = targets.iter().zip(&scale).map(|((t, _), s)| t.bounds().0 / s).collect();
    let hi: Vec<f64> = targets.iter().zip(&scale).map(|((t, _), s)| t.bounds().1 / s).collect();
    let u0: Vec<f64> = targets.iter().zip(&scale).zip(lo.iter().zip(&hi)).map(|(((_, v), s), (a, b))| (v / s).clamp(*a, *b)).collect();
    let residuals = |u: &[f64]| -> Result<Vec<f64>> {
        let values: Vec<f64> = u.iter().zip(&scale).map(|(x, s)| x * s).collect();
        let t = patterns::by_rank(&predict(&apply(&m.spec, &targets, &values), origin, &workloads, p)?, &measured, &same);
        Ok(t.iter().zip(&measured).zip(&in_fit).filter(|(_, &fit)| fit).map(|((t, y), _)| (t - y) / y).collect())
    };
    let r0 = residuals(&u0)?;
    let why = lm::unidentifiable(&lm::jacobian(&residuals, &u0, &r0, &lo, &hi)?);
    let free: Vec<bool> = why.iter().map(Option::is_none).collect();
    let u = lm::minimize(&residuals, &u0, &lo, &hi, &free)?;
    let values: Vec<f64> = u.iter().zip(&scale).map(|(x, s)| x * s).collect();

    let mut fitted = BTreeMap::new();
    let mut unidentified = Vec::new();
    let mut kept = Vec::new();
    for (k, ((t, _), v)) in targets.iter().zip(&values).enumerate() {
        match &why[k] {
            None => {
                let shown = if t.scale() < 1.0 { format!("{}", Time::from_secs((v * 1e9).round() / 1e9)) } else { format!("{}", (v * 1e4).round() / 1e4) };
                let shown = if matches!(t, Target::Capacity(_) | Target::Peer(..)) { format!("{}", Bandwidth((v / 1e6).round() * 1e6)) } else { shown };
                fitted.insert(t.name(&m.spec), shown);
                kept.push((*t, *v));
            }
            Some(Unidentified::NoEffect) => unidentified.push(format!("{}: no measurement depends on it (kept as it was)", t.name(&m.spec))),
            Some(Unidentified::Confounded(with)) => {
                let names: Vec<String> = with.iter().map(|&i| targets[i].0.name(&m.spec)).collect();
                unidentified.push(format!("{}: the data cannot tell it apart from {} (kept as it was)", t.name(&m.spec), names.join(", ")));
            }
        }
    }
    let values_kept: Vec<f64> = kept.iter().map(|x| x.1).collect();
    let spec = apply(&m.spec, &kept, &values_kept);
    let predicted = patterns::by_rank(&predict(&spec, origin, &workloads, p)?, &measured, &same);
    let mut out = Vec::new();
    let mut k = 0;
    for x in patterns {
        for t in &x.spec.transfers {
            let (y, q) = (measured[k], predicted[k]);
            out.push(Residual {
                matrix: format!("pattern {} (us)", x.name),
                src: t.src.clone(),
                dst: t.dst.clone(),
                measured: y * 1e6,
                predicted: Some(q * 1e6),
                relative_error: Some((q - y) / y),
                held_out: !in_fit[k],
            });
            k += 1;
        }
    }
    let rel: Vec<f64> = out.iter().filter(|r| !r.held_out).filter_map(|r| r.relative_error).collect();
    let rms = (rel.iter().map(|r| r * r).sum::<f64>() / rel.len() as f64).sqrt();
    let within = rel.iter().filter(|r| r.abs() <= 0.10).count() as f64 / rel.len() as f64;
    let pooled: Vec<Residual> = out.iter().map(|r| Residual { matrix: "patterns".into(), ..r.clone() }).collect();
    let scores = super::scores(&pooled);
    let notes = unidentified.clone();
    Ok(GeneralFit {
        spec,
        fitted,
        unidentified,
        residuals: out,
        rms_relative_error: BTreeMap::from([("patterns".to_string(), rms)]),
        within_10_percent: within,
        scores,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Measurements made by the model itself on a machine with known values are fitted back,
    /// and what they cannot see is named.
    #[test]
    fn recovers_known_parameters_from_a_sweep_and_a_pair() {
        let truth_text = "name: pair\ndevices:\n  - {name: RC, kind: root_complex}\n  - {name: GPU0, kind: gpu, latency: 3us}\n  - {name: GPU1, kind: gpu, latency: 3us}\nlinks:\n  - {a: RC, b: GPU0, kind: pcie, gen: 4, lanes: 16, efficiency: 0.8, duplex: 0.1, latency: 0.2us}\n  - {a: RC, b: GPU1, kind: pcie, gen: 4, lanes: 16, efficiency: 0.8, duplex: 0.1, latency: 0.2us}\n";
        let truth = Machine::from_text(truth_text, "truth").unwrap();
        let p = MaxminParams::default();
        let mut csv = String::from("pattern,src,dst,size,time\n");
        let mut rows = vec![];
        for size in ["4KB", "64KB", "1MB", "16MB", "256MB"] {
            rows.push((format!("sweep-{size}"), vec![("GPU0", "GPU1", size)]));
        }
        rows.push(("both".into(), vec![("GPU0", "GPU1", "256MB"), ("GPU1", "GPU0", "256MB")]));
        for (name, ts) in &rows {
            let text = ts.iter().fold(String::from("transfers:\n"), |s, (a, b, z)| s + &format!("  - {{src: {a}, dst: {b}, size: {z}}}\n"));
            let w = Workload::resolve(&crate::workload::WorkloadSpec::from_text(&text, "w").unwrap(), &truth, "w").unwrap();
            let o = sim::run_prepared(&w, &MaxminPrepared::new(&truth, &w, p).unwrap(), false).unwrap();
            for ((a, b, z), t) in ts.iter().zip(&o.finish) {
                csv.push_str(&format!("{name},{a},{b},{z},{}ns\n", (t * 1e9).round() as u64));
            }
        }
        // The data-sheet machine: nothing but the layout.
        let sheet =
            Machine::from_text(&truth_text.replace(", latency: 3us", "").replace(", efficiency: 0.8, duplex: 0.1, latency: 0.2us", ""), "sheet").unwrap();
        let f = fit(&sheet, &patterns::parse(&csv, "m.csv").unwrap(), &p, "m.csv", false).unwrap();
        assert!(f.within_10_percent == 1.0 && f.rms_relative_error["patterns"] < 1e-3, "{:?} {:?}", f.fitted, f.rms_relative_error);
        assert_eq!(f.fitted["efficiency.pcie"], "0.8");
        assert_eq!(f.fitted["duplex.pcie"], "0.1");
        // Engine and hop latency add up in every copy: one of them is named, not guessed.
        assert!(f.unidentified.iter().any(|u| u.starts_with("latency.hop.pcie: the data cannot tell it apart from latency.gpu")), "{:?}", f.unidentified);
    }

    /// A host link that loses 0.3 upstream and 0.08 downstream: copies to and from host memory,
    /// alone and both ways at once, fitted back per direction on a machine that writes
    /// 0.06 for each.
    #[test]
    fn fits_each_directions_duplex_loss_where_the_machine_gives_one_per_direction() {
        let text = "name: host\ndevices:\n  - {name: RC, kind: root_complex}\n  - {name: MEM, kind: host_memory}\n  - {name: GPU0, kind: gpu}\nlinks:\n  - {a: RC, b: MEM, kind: memory, bandwidth: 500GB/s}\n  - {a: RC, b: GPU0, kind: pcie, gen: 4, lanes: 16, efficiency: 0.8, duplex_upstream: 0.3, duplex_downstream: 0.08}\n";
        let truth = Machine::from_text(text, "truth").unwrap();
        let p = MaxminParams::default();
        let mut csv = String::from("pattern,src,dst,size,time\n");
        for (name, pairs) in [("d2h", vec![("GPU0", "MEM")]), ("h2d", vec![("MEM", "GPU0")]), ("both", vec![("GPU0", "MEM"), ("MEM", "GPU0")])] {
            let w = pairs.iter().fold(String::from("transfers:\n"), |s, (a, b)| s + &format!("  - {{src: {a}, dst: {b}, size: 256MB}}\n"));
            let w = Workload::resolve(&crate::workload::WorkloadSpec::from_text(&w, "w").unwrap(), &truth, "w").unwrap();
            let o = sim::run_prepared(&w, &MaxminPrepared::new(&truth, &w, p).unwrap(), false).unwrap();
            for ((a, b), t) in pairs.iter().zip(&o.finish) {
                csv.push_str(&format!("{name},{a},{b},256MB,{}ns\n", (t * 1e9).round() as u64));
            }
        }
        let start = Machine::from_text(&text.replace("0.3, duplex_downstream: 0.08", "0.06, duplex_downstream: 0.06"), "start").unwrap();
        let f = fit(&start, &patterns::parse(&csv, "m.csv").unwrap(), &p, "m.csv", false).unwrap();
        let got = |k: &str| f.fitted[k].parse::<f64>().unwrap();
        assert!((got("duplex_upstream.pcie") - 0.3).abs() < 1e-3 && (got("duplex_downstream.pcie") - 0.08).abs() < 1e-3, "{:?} {:?}", f.fitted, f.unidentified);
        assert!(!f.fitted.contains_key("duplex.pcie"));
    }

    /// A switch whose crossbar is slower than its ports: concurrent patterns measured with a
    /// 30 GB/s switch are fitted back to it from a machine that declares 100 GB/s.
    #[test]
    fn fits_a_declared_switch_capacity_from_concurrent_patterns() {
        let text = "name: sw\ndevices:\n  - {name: SW, kind: pcie_switch, capacity: 30GB/s}\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n  - {name: GPU2, kind: gpu}\n  - {name: GPU3, kind: gpu}\nlinks:\n  - {a: SW, b: GPU0, kind: pcie, gen: 4, lanes: 16}\n  - {a: SW, b: GPU1, kind: pcie, gen: 4, lanes: 16}\n  - {a: SW, b: GPU2, kind: pcie, gen: 4, lanes: 16}\n  - {a: SW, b: GPU3, kind: pcie, gen: 4, lanes: 16}\n";
        let truth = Machine::from_text(text, "truth").unwrap();
        let p = MaxminParams::default();
        let mut csv = String::from("pattern,src,dst,size,time\n");
        let patterns = [
            ("pair", vec![("GPU0", "GPU1")]),
            ("two", vec![("GPU0", "GPU1"), ("GPU2", "GPU3")]),
            ("ring", vec![("GPU0", "GPU1"), ("GPU1", "GPU2"), ("GPU2", "GPU3"), ("GPU3", "GPU0")]),
        ];
        for (name, pairs) in &patterns {
            let w = pairs.iter().fold(String::from("transfers:\n"), |s, (a, b)| s + &format!("  - {{src: {a}, dst: {b}, size: 256MB}}\n"));
            let w = Workload::resolve(&crate::workload::WorkloadSpec::from_text(&w, "w").unwrap(), &truth, "w").unwrap();
            let o = sim::run_prepared(&w, &MaxminPrepared::new(&truth, &w, p).unwrap(), false).unwrap();
            for ((a, b), t) in pairs.iter().zip(&o.finish) {
                csv.push_str(&format!("{name},{a},{b},256MB,{}ns\n", (t * 1e9).round() as u64));
            }
        }
        let declared = Machine::from_text(&text.replace("30GB/s", "100GB/s"), "declared").unwrap();
        let f = fit(&declared, &patterns::parse(&csv, "m.csv").unwrap(), &p, "m.csv", false).unwrap();
        assert_eq!(f.fitted["capacity.SW"], "30GB/s", "{:?} {:?}", f.fitted, f.unidentified);
        assert!(f.rms_relative_error["patterns"] < 1e-3);
    }

    /// A dual-socket host whose xGMI passes 20 GB/s of peer copies a direction (the root
    /// complexes' forwarding; host traffic is not capped): fitted on single copies alone from a
    /// machine that declares 100 GB/s, the value comes back, and two copies across at once,
    /// held out, are predicted at 10 GB/s each, as the definition gives.
    #[test]
    fn fits_a_declared_peer_bandwidth_from_single_copies_and_predicts_copies_sharing_it() {
        let text = "name: two-sockets\ndevices:\n  - {name: CPU0, kind: root_complex}\n  - {name: CPU1, kind: root_complex}\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n  - {name: GPU2, kind: gpu}\n  - {name: GPU3, kind: gpu}\nlinks:\n  - {a: CPU0, b: CPU1, kind: xgmi, bandwidth: 100GB/s, peer_bandwidth: 20GB/s}\n  - {a: CPU0, b: GPU0, kind: pcie, gen: 4, lanes: 16}\n  - {a: CPU0, b: GPU1, kind: pcie, gen: 4, lanes: 16}\n  - {a: CPU1, b: GPU2, kind: pcie, gen: 4, lanes: 16}\n  - {a: CPU1, b: GPU3, kind: pcie, gen: 4, lanes: 16}\n";
        let truth = Machine::from_text(text, "truth").unwrap();
        let p = MaxminParams::default();
        let mut csv = String::from("pattern,src,dst,size,time\n");
        // Small copies tell the fixed costs (the xGMI hop's from the difference) from the rates.
        let patterns = [
            ("across", "1GB", vec![("GPU0", "GPU2")]),
            ("across-small", "4KB", vec![("GPU0", "GPU2")]),
            ("back", "1GB", vec![("GPU3", "GPU1")]),
            ("inside", "1GB", vec![("GPU0", "GPU1")]),
            ("inside-small", "4KB", vec![("GPU0", "GPU1")]),
            ("two-across", "1GB", vec![("GPU0", "GPU2"), ("GPU1", "GPU3")]),
        ];
        for (name, size, pairs) in &patterns {
            let w = pairs.iter().fold(String::from("transfers:\n"), |s, (a, b)| s + &format!("  - {{src: {a}, dst: {b}, size: {size}}}\n"));
            let w = Workload::resolve(&crate::workload::WorkloadSpec::from_text(&w, "w").unwrap(), &truth, "w").unwrap();
            let o = sim::run_prepared(&w, &MaxminPrepared::new(&truth, &w, p).unwrap(), false).unwrap();
            for ((a, b), t) in pairs.iter().zip(&o.finish) {
                csv.push_str(&format!("{name},{a},{b},{size},{}ns\n", (t * 1e9).round() as u64));
            }
        }
        let declared = Machine::from_text(&text.replace("peer_bandwidth: 20GB/s", "peer_bandwidth: 100GB/s"), "declared").unwrap();
        let f = fit(&declared, &patterns::parse(&csv, "m.csv").unwrap(), &p, "m.csv", true).unwrap();
        assert_eq!(f.fitted.get("peer_bandwidth.xgmi").map(String::as_str), Some("20GB/s"), "{:?} {:?}", f.fitted, f.unidentified);
        let held: Vec<&Residual> = f.residuals.iter().filter(|r| r.held_out).collect();
        assert_eq!(held.len(), 2);
        // 1 GB at 10 GB/s, plus the fixed costs the single copies fitted.
        for r in held {
            assert!(r.relative_error.unwrap().abs() < 1e-3 && (r.measured - 1e5).abs() < 0.01 * 1e5, "{r:?}");
        }
    }

    /// The public A100 output rewritten as patterns (each bandwidth cell one 800 MB copy, each
    /// bidirectional cell two at once at half the total, each latency cell one 4-byte copy): the
    /// pattern fit finds what the matrix fit finds.
    #[test]
    fn agrees_with_the_matrix_fit_on_the_public_a100_output() {
        let meas = crate::calibrate::parse_p2p_output(include_str!("../../tests/fixtures/p2pBandwidthLatencyTest-4xa100-pcie.txt"), "fixture").unwrap();
        let m = Machine::from_text(crate::calibrate::tests::MACHINE, "a100").unwrap();
        let mut csv = String::from("pattern,src,dst,size,bandwidth\n");
        let (uni, bi, lat) = (meas.unidirectional_p2p_gbps.unwrap(), meas.bidirectional_p2p_gbps.unwrap(), meas.latency_p2p_us.unwrap());
        for (i, j) in [(0, 1), (1, 0), (2, 3), (3, 2)] {
            csv.push_str(&format!("uni{i}{j},GPU{i},GPU{j},800MB,{}GB/s\n", uni[i][j].unwrap()));
            let half = bi[i][j].unwrap() / 2.0;
            csv.push_str(&format!("bi{i}{j},GPU{i},GPU{j},800MB,{half}GB/s\nbi{i}{j},GPU{j},GPU{i},800MB,{half}GB/s\n"));
            csv.push_str(&format!("lat{i}{j},GPU{i},GPU{j},4B,{}B/s\n", 4.0 / (lat[i][j].unwrap() * 1e-6)));
        }
        let f = fit(&m, &patterns::parse(&csv, "a100.csv").unwrap(), &MaxminParams::default(), "a100.csv", false).unwrap();
        let get = |k: &str| f.fitted[k].parse::<f64>().unwrap();
        assert!((get("efficiency.nvlink") - 275.0 / 300.0).abs() < 0.005, "{:?}", f.fitted);
        assert!((0.055..0.075).contains(&get("duplex.nvlink")), "{:?}", f.fitted);
        assert!(f.within_10_percent > 0.9, "{:?}", f.rms_relative_error);
    }

    /// The project's own measurements of one H100's host link (bench/device/hostlink.cu),
    /// fitted on single copies and one copy each way: the copies that queue at one copy engine
    /// (two or more in one direction at once) are held out and predicted in issue order, and
    /// four identical ones, which the engine took in another order, are compared by rank.
    #[test]
    fn holds_out_concurrent_patterns_of_a_measured_h100_host_link() {
        let text = "name: h100-host\ndevices:\n  - {name: CPU0, kind: root_complex}\n  - {name: MEM0, kind: host_memory}\n  - {name: GPU0, kind: gpu}\nlinks:\n  - {a: CPU0, b: GPU0, kind: pcie, gen: 5, lanes: 16, duplex_upstream: 0.06, duplex_downstream: 0.06}\n  - {a: CPU0, b: MEM0, kind: memory, bandwidth: 358GB/s}\n";
        let m = Machine::from_text(text, "h100-host").unwrap();
        let measured = patterns::parse(include_str!("../../tests/fixtures/hostlink-h100-emr.csv"), "hostlink.csv").unwrap();
        let f = fit(&m, &measured, &MaxminParams::default(), "hostlink.csv", true).unwrap();
        assert!(f.scores["patterns (fitted)"].within_10_percent > 0.95, "{:?} {:?}", f.fitted, f.scores);
        let queued: Vec<&Residual> =
            f.residuals.iter().filter(|r| r.matrix.starts_with("pattern two-h2d") || r.matrix.starts_with("pattern two-d2h")).collect();
        assert!(queued.len() >= 10 && queued.iter().all(|r| r.held_out));
        for r in queued.iter().filter(|r| !r.matrix.contains("MiB") && !r.matrix.contains("one-d2h")) {
            assert!(r.relative_error.unwrap().abs() < 0.05, "{r:?}");
        }
        let four: Vec<&Residual> = f.residuals.iter().filter(|r| r.matrix == "pattern four-h2d (us)").collect();
        assert_eq!(four.len(), 4);
        assert!(four.iter().all(|r| r.relative_error.unwrap().abs() < 0.05), "{four:?}");
        let concurrent_only: Vec<Pattern> = measured.iter().filter(|x| !single_pair(x)).cloned().collect();
        let e = fit(&m, &concurrent_only, &MaxminParams::default(), "hostlink.csv", true).unwrap_err().to_string();
        assert!(e.contains("--hold-out fits on single-pair patterns"), "{e}");
    }
}
