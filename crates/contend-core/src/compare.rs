//! `contend compare`: the fidelity ladder on a user's own traffic. The same machine and
//! transfers run under every model of the registry (each through `api::simulate`, as
//! `contend simulate` would run it); a model that does not apply is listed with its one-line
//! reason. Every model that ran is compared with the reference — the most detailed model that
//! ran (packet, else maxmin, else the first) — message by message: the relative difference of
//! each transfer's duration, its median and 90th percentile, the worst ten, and the makespans.

use crate::error::{Error, Result};
use crate::model::registry::MODELS;
use crate::report::{Detail, Report};
use crate::topology::Machine;
use crate::workload::WorkloadSpec;
use schemars::JsonSchema;
use serde::Serialize;
use std::time::Instant;

/// Models from the most detailed: the first of these that runs is the reference.
const REFERENCE_ORDER: &[&str] = &["packet", "maxmin"];

/// How many transfers the report lists per model as its worst.
pub const WORST: usize = 10;

#[derive(Serialize, JsonSchema, Debug)]
pub struct CompareReport {
    pub machine: String,
    pub transfers: usize,
    /// The model the others are compared with (empty when none ran).
    pub reference: String,
    /// Every model asked for, in registry order: its run, or why it does not apply.
    pub models: Vec<ModelRun>,
    /// Each model that ran but the reference, against the reference.
    pub differences: Vec<Difference>,
    /// What the reader of the makespans needs besides them: a routing decided per message at flow
    /// level and per packet under packet (`routing_note`).
    pub notes: Vec<String>,
}

#[derive(Serialize, JsonSchema, Debug)]
pub struct ModelRun {
    pub model: String,
    /// Whether it ran; if not, `refused` says why (one line).
    pub ran: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// Seconds of wall time to prepare and run it (not counted for a refusal).
    pub wall_s: f64,
    pub makespan_s: f64,
    /// The parameters in force.
    pub params: std::collections::BTreeMap<String, String>,
}

/// One model against the reference. A transfer's difference is (its duration under the model
/// − under the reference) / under the reference; statistics are over absolute differences, in
/// percent, of the transfers whose reference duration is above zero.
#[derive(Serialize, JsonSchema, Debug)]
pub struct Difference {
    pub model: String,
    pub reference: String,
    /// Transfers compared (the others take no time under the reference: computations, empty messages).
    pub compared: usize,
    pub median_pct: f64,
    pub p90_pct: f64,
    pub max_pct: f64,
    /// Mean of the signed differences: above zero, the model is slower on average.
    pub mean_signed_pct: f64,
    pub makespan_s: f64,
    pub reference_makespan_s: f64,
    /// (makespan − reference makespan) / reference makespan, percent.
    pub makespan_diff_pct: f64,
    /// The transfers that differ most, largest first.
    pub worst: Vec<WorstTransfer>,
}

#[derive(Serialize, JsonSchema, Debug)]
pub struct WorstTransfer {
    /// Position in the transfers file.
    pub index: usize,
    pub name: String,
    pub src: String,
    pub dst: String,
    pub size_bytes: u64,
    pub duration_s: f64,
    pub reference_duration_s: f64,
    /// Signed, percent.
    pub diff_pct: f64,
}

/// The value below which `q` of a sorted list lies (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn pct(x: f64, of: f64) -> f64 {
    if of > 0.0 {
        100.0 * (x - of) / of
    } else {
        0.0
    }
}

/// One model against the reference.
pub fn difference(model: &str, r: &Report, reference: &str, base: &Report) -> Difference {
    let (d, b) = (&r.transfers.duration_s, &base.transfers.duration_s);
    let mut signed: Vec<(usize, f64)> = d.iter().zip(b).enumerate().filter(|(_, (_, &b))| b > 0.0).map(|(i, (&x, &b))| (i, pct(x, b))).collect();
    let mut abs: Vec<f64> = signed.iter().map(|&(_, s)| s.abs()).collect();
    abs.sort_by(f64::total_cmp);
    let mean_signed = if signed.is_empty() { 0.0 } else { signed.iter().map(|&(_, s)| s).sum::<f64>() / signed.len() as f64 };
    // Largest absolute difference first; ties in file order.
    signed.sort_by(|x, y| y.1.abs().total_cmp(&x.1.abs()).then(x.0.cmp(&y.0)));
    let t = &r.transfers;
    let worst = signed
        .iter()
        .take(WORST)
        .map(|&(i, s)| WorstTransfer {
            index: i,
            name: t.name[i].clone(),
            src: t.src.get(i).to_string(),
            dst: t.dst.get(i).to_string(),
            size_bytes: t.size_bytes[i],
            duration_s: d[i],
            reference_duration_s: b[i],
            diff_pct: s,
        })
        .collect();
    Difference {
        model: model.into(),
        reference: reference.into(),
        compared: abs.len(),
        median_pct: quantile(&abs, 0.5),
        p90_pct: quantile(&abs, 0.9),
        max_pct: abs.last().copied().unwrap_or(0.0),
        mean_signed_pct: mean_signed,
        makespan_s: r.summary.makespan_s,
        reference_makespan_s: base.summary.makespan_s,
        makespan_diff_pct: pct(r.summary.makespan_s, base.summary.makespan_s),
        worst,
    }
}

/// Run `spec` on `m` under `models` (empty: every model of the registry), each with its own
/// parameters (`params`: model, name, value), and compare them.
pub fn compare(m: &Machine, spec: &WorkloadSpec, origin: &str, models: &[String], params: &[(String, String, String)]) -> Result<CompareReport> {
    for name in models {
        crate::model::registry::get(name)?;
    }
    for (model, key, _) in params {
        if !MODELS.iter().any(|e| e.name == model) {
            return Err(Error::input(
                "--param",
                format!("{model}.{key}"),
                format!("names no model; write MODEL.NAME=VALUE with MODEL one of {}", MODELS.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")),
            ));
        }
        if !models.is_empty() && !models.contains(model) {
            return Err(Error::input(
                "--param",
                format!("{model}.{key}"),
                format!("is for {model}, which is not compared; add --model {model} or drop the parameter"),
            ));
        }
    }
    let mut runs = Vec::new();
    let mut reports: Vec<(String, Report)> = Vec::new();
    let mut transfers = 0;
    for entry in MODELS.iter().filter(|e| models.is_empty() || models.iter().any(|n| n == e.name)) {
        let own: Vec<(String, String)> = params.iter().filter(|(model, _, _)| model == entry.name).map(|(_, k, v)| (k.clone(), v.clone())).collect();
        let clock = Instant::now();
        match crate::report::simulate(m, spec, origin, entry.name, &own, Detail::default()) {
            Ok(r) => {
                transfers = r.transfers.duration_s.len();
                runs.push(ModelRun {
                    model: entry.name.into(),
                    ran: true,
                    refused: None,
                    wall_s: clock.elapsed().as_secs_f64(),
                    makespan_s: r.summary.makespan_s,
                    params: r.params.clone(),
                });
                reports.push((entry.name.into(), r));
            }
            Err(Error::Unsupported { reason, .. }) => runs.push(ModelRun {
                model: entry.name.into(),
                ran: false,
                refused: Some(reason.lines().next().unwrap_or_default().to_string()),
                wall_s: 0.0,
                makespan_s: 0.0,
                params: Default::default(),
            }),
            Err(e) => return Err(e),
        }
    }
    let reference = REFERENCE_ORDER.iter().find_map(|&n| reports.iter().position(|(name, _)| name == n)).or(if reports.is_empty() { None } else { Some(0) });
    let differences = match reference {
        Some(k) => {
            let (ref_name, base) = &reports[k];
            reports.iter().enumerate().filter(|&(i, _)| i != k).map(|(_, (name, r))| difference(name, r, ref_name, base)).collect()
        }
        None => Vec::new(),
    };
    let ran = |n: &str| reports.iter().any(|(name, _)| name == n);
    let mut notes: Vec<String> = if ran("packet") && reports.len() > 1 { routing_note(m).into_iter().collect() } else { Vec::new() };
    if ran("packet") && ran("maxmin") {
        let own: Vec<(String, String)> = params.iter().filter(|(model, _, _)| model == "maxmin").map(|(_, k, v)| (k.clone(), v.clone())).collect();
        let maxmin = reports.iter().find(|(name, _)| name == "maxmin").map(|(_, r)| &r.links);
        notes.extend(maxmin.and_then(|links| duplex_note(m, &own, links)));
    }
    Ok(CompareReport {
        machine: m.name.clone(),
        transfers,
        reference: reference.map(|k| reports[k].0.clone()).unwrap_or_default(),
        models: runs,
        differences,
        notes,
    })
}

/// Where the machine's routing is chosen per message at flow level and per packet under packet
/// (model/packet/routing.rs): adaptive on any network, valiant, ugal and par on a dragonfly (its
/// switches in groups; elsewhere they keep one path per message under both). A message's one
/// path (or one intermediate group) against its packets spread over many can differ by 2x on
/// the same traffic, so the makespans differ by the routing as much as by the model.
fn routing_note(m: &Machine) -> Option<String> {
    use crate::topology::{DeviceKind, Routing};
    let groups = m.devices.iter().any(|d| d.kind == DeviceKind::Switch && d.group.is_some());
    let r = m.network.routing;
    let per_message = match r {
        Routing::Adaptive => "one path per message (the least loaded when it is placed)",
        Routing::Valiant if groups => "one intermediate group per message",
        Routing::Ugal | Routing::Par if groups => "minimal or Valiant once per message",
        _ => return None,
    };
    Some(format!(
        "routing {}: the flow-level models take {per_message}, packet decides at every packet, so their makespans differ by the routing as well as by the model (docs/models.md, packet: per-packet routing)",
        format!("{r:?}").to_lowercase()
    ))
}

/// maxmin takes a link's duplex loss (a direction loses capacity per byte moving the other way:
/// `MaxminParams::link_duplex`, the link's own or its kind's), packet has none; their link rates
/// are the same table (model/link_rate.rs). So on a link loaded both ways maxmin's transfers run
/// slower by up to that loss (capacity / (1 + loss) at equal load each way), which is no
/// difference of packet's queues. The largest loss among the links maxmin's run loaded both ways
/// (`links`, its link table: each direction by name), and its kind; none where no link was.
fn duplex_note(m: &Machine, own: &[(String, String)], links: &crate::report::LinkTable) -> Option<String> {
    let p = crate::model::maxmin::MaxminParams::parse(own).ok()?;
    let mut moved: std::collections::HashMap<&str, f64> = std::collections::HashMap::new();
    for (name, bytes) in links.name.iter().zip(&links.bytes) {
        *moved.entry(name.as_str()).or_default() += bytes;
    }
    let loaded = |from: usize, to: usize| moved.get(format!("{}→{}", m.devices[from].name, m.devices[to].name).as_str()).is_some_and(|&b| b > 0.0);
    let both_ways = m.links.iter().filter(|l| loaded(l.a, l.b) && loaded(l.b, l.a));
    let (loss, kind) = both_ways.map(|l| (p.link_duplex(l), l.kind)).max_by(|a, b| a.0.total_cmp(&b.0))?;
    (loss > 0.0).then(|| {
        format!(
            "duplex loss: maxmin takes one (up to {} on the {} links), packet has none, on the same link rates: where a link carries traffic both ways maxmin runs it up to {:.1}% slower (capacity / (1 + loss)), a difference of the models' parameters, not of packet's queues",
            (loss * 1e4).round() / 1e4,
            kind.name(),
            loss * 100.0
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn star() -> Machine {
        let mut devices = String::from("  - {name: sw0, kind: switch}\n");
        let mut links = String::new();
        for i in 0..4 {
            devices.push_str(&format!("  - {{name: n{i}.GPU0, kind: gpu, latency: 0s}}\n  - {{name: n{i}.NIC0, kind: nic}}\n"));
            links.push_str(&format!("  - {{a: n{i}.NIC0, b: n{i}.GPU0, kind: pcie, bandwidth: 20GB/s, latency: 0s, efficiency: 1.0, duplex: 0.0}}\n"));
            links.push_str(&format!("  - {{a: n{i}.NIC0, b: sw0, kind: network, bandwidth: 10GB/s, latency: 100ns}}\n"));
        }
        Machine::from_text(&format!("name: star\nnetwork: {{nic_scheduling: rr}}\ndevices:\n{devices}links:\n{links}"), "star").unwrap()
    }

    fn spec(text: &str) -> WorkloadSpec {
        WorkloadSpec::from_text(text, "t.yaml").unwrap()
    }

    /// Two messages into one NIC: maxmin shares the link exactly (each at half the bandwidth),
    /// packet alternates packets; the differences are small and computed per message.
    #[test]
    fn compares_every_model_that_applies_with_packet() {
        let w = spec("transfers:\n  - {src: n0.GPU0, dst: n3.GPU0, size: 16MiB}\n  - {src: n1.GPU0, dst: n3.GPU0, size: 16MiB}\n  - {src: n2.GPU0, dst: n1.GPU0, size: 4MiB}\n");
        let r = compare(&star(), &w, "t.yaml", &[], &[("packet".into(), "buffer".into(), "4".into())]).unwrap();
        assert_eq!(r.reference, "packet");
        assert_eq!(r.transfers, 3);
        let names: Vec<_> = r.models.iter().map(|m| m.model.as_str()).collect();
        assert_eq!(names, MODELS.iter().map(|e| e.name).collect::<Vec<_>>());
        let sc16 = r.models.iter().find(|m| m.model == "sc16").unwrap();
        assert!(!sc16.ran && sc16.refused.as_deref().is_some_and(|x| !x.is_empty() && !x.contains('\n')), "{sc16:?}");
        let packet = r.models.iter().find(|m| m.model == "packet").unwrap();
        assert_eq!(packet.params["buffer"], "4");
        let d = r.differences.iter().find(|d| d.model == "maxmin").unwrap();
        assert_eq!((d.compared, d.worst.len()), (3, 3));
        // The shared link: 32 MiB at 10 GB/s under both, up to the packet pipeline's few µs.
        let both = 32.0 * 1048576.0 / 10e9;
        assert!((d.makespan_s - both).abs() < 2e-5 && (d.reference_makespan_s - both).abs() < 2e-5, "{d:?}");
        assert!(d.median_pct <= d.p90_pct && d.p90_pct <= d.max_pct && d.max_pct < 2.0, "{d:?}");
        assert!(d.worst[0].diff_pct.abs() == d.max_pct);
    }

    #[test]
    fn a_parameter_for_no_model_names_the_fix() {
        let w = spec("transfers:\n  - {src: n0.GPU0, dst: n3.GPU0, size: 1MiB}\n");
        let e = compare(&star(), &w, "t.yaml", &[], &[("pakcet".into(), "buffer".into(), "4".into())]).unwrap_err().to_string();
        assert!(e.contains("pakcet.buffer") && e.contains("maxmin") && !e.contains('\n'), "{e}");
        let e = compare(&star(), &w, "t.yaml", &["maxmin".into()], &[("packet".into(), "buffer".into(), "4".into())]).unwrap_err().to_string();
        assert!(e.contains("--model packet"), "{e}");
        let e = compare(&star(), &w, "t.yaml", &["maxmn".into()], &[]).unwrap_err().to_string();
        assert!(e.contains("maxmn") && e.contains("choose one of"), "{e}");
    }

    /// A PCIe link that writes no duplex loss takes its kind's from maxmin's table (duplex_pcie,
    /// 0.06 by default); packet has no such parameter, and the note says so, with the loss.
    #[test]
    fn the_duplex_loss_only_maxmin_takes_is_noted() {
        let text = "name: p\ndevices:\n  - {name: RC, kind: root_complex}\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\nlinks:\n  - {a: RC, b: GPU0, kind: pcie, gen: 4, lanes: 16}\n  - {a: RC, b: GPU1, kind: pcie, gen: 4, lanes: 16}\n";
        let m = Machine::from_text(text, "p").unwrap();
        let w = spec("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n  - {src: GPU1, dst: GPU0, size: 1MiB}\n");
        let loss = crate::model::maxmin::MaxminParams::default().duplex_pcie;
        let r = compare(&m, &w, "t.yaml", &[], &[]).unwrap();
        let note = r.notes.iter().find(|n| n.starts_with("duplex loss")).unwrap();
        assert!(note.contains(&format!("up to {loss} on the pcie links")) && note.contains(&format!("{:.1}% slower", loss * 100.0)), "{note}");
        let r = compare(&m, &w, "t.yaml", &[], &[("maxmin".into(), "duplex_pcie".into(), "0".into())]).unwrap();
        assert!(r.notes.iter().all(|n| !n.starts_with("duplex loss")), "{:?}", r.notes);
        // One way only: the loss changes nothing, so no note.
        let r = compare(&m, &spec("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n"), "t.yaml", &[], &[]).unwrap();
        assert!(r.notes.iter().all(|n| !n.starts_with("duplex loss")), "{:?}", r.notes);
        let r = compare(&star(), &spec("transfers:\n  - {src: n0.GPU0, dst: n3.GPU0, size: 1MiB}\n"), "t.yaml", &[], &[]).unwrap();
        assert!(r.notes.iter().all(|n| !n.starts_with("duplex loss")), "{:?}", r.notes);
    }

    #[test]
    fn quantiles_are_nearest_rank() {
        let xs: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!((quantile(&xs, 0.5), quantile(&xs, 0.9), quantile(&xs, 1.0)), (5.0, 9.0, 10.0));
        assert_eq!(quantile(&[], 0.5), 0.0);
    }
}
