//! The engine's public surface, in plain serialisable reports: what the Python binding and
//! the CLI call. Every function here is also usable from Rust alone.

use crate::error::{Error, Result};
use crate::model::maxmin::{MaxminModel, MaxminParams};
use crate::model::{self, sc16, RateModel};
use crate::sim;
use crate::topology::{preset_names, preset_text, Machine, MachineSpec};
use crate::workload::{Workload, WorkloadSpec};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Serialize, Debug)]
pub struct PresetSummary {
    pub name: String,
    pub description: String,
    pub gpus: usize,
    pub source: String,
}

pub fn presets() -> Vec<PresetSummary> {
    preset_names()
        .into_iter()
        .map(|n| {
            let m = Machine::from_text(preset_text(n).unwrap(), n).expect("presets are tested");
            PresetSummary { name: n.into(), description: m.description.clone(), gpus: m.gpus().len(), source: m.source.clone() }
        })
        .collect()
}

#[derive(Serialize, Debug)]
pub struct TransferReport {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub size_bytes: u64,
    pub start_s: f64,
    pub finish_s: f64,
    pub duration_s: f64,
    /// Effective bandwidth size / duration, bytes/s.
    pub bandwidth_bps: f64,
    /// Directed links of the path, as indices into `links`.
    pub route: Vec<u32>,
}

#[derive(Serialize, Debug)]
pub struct PhaseReport {
    pub start_s: f64,
    pub end_s: f64,
    pub transfers: Vec<usize>,
    pub rates_bps: Vec<f64>,
}

#[derive(Serialize, Debug)]
pub struct LinkReport {
    pub name: String,
    pub capacity_bps: f64,
}

#[derive(Serialize, Debug)]
pub struct Report {
    pub machine: String,
    pub model: String,
    pub params: BTreeMap<String, String>,
    pub makespan_s: f64,
    pub transfers: Vec<TransferReport>,
    pub phases: Vec<PhaseReport>,
    pub links: Vec<LinkReport>,
}

fn report(m: &Machine, w: &Workload, model_name: &str, model: &dyn RateModel, o: sim::Outcome) -> Report {
    let transfers = w
        .transfers
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let d = o.finish[i] - o.start[i];
            TransferReport {
                name: t.name.clone(),
                src: m.devices[t.src].name.clone(),
                dst: m.devices[t.dst].name.clone(),
                size_bytes: t.size,
                start_s: o.start[i],
                finish_s: o.finish[i],
                duration_s: d,
                bandwidth_bps: if d > 0.0 { t.size as f64 / d } else { f64::INFINITY },
                route: model.route(i).to_vec(),
            }
        })
        .collect();
    let phases = o
        .phases
        .iter()
        .map(|p| PhaseReport { start_s: p.start, end_s: p.end, transfers: p.active.clone(), rates_bps: p.rates.clone() })
        .collect();
    Report {
        machine: m.name.clone(),
        model: model_name.into(),
        params: model.params(),
        makespan_s: o.makespan(),
        transfers,
        phases,
        links: model.links().into_iter().map(|(name, capacity_bps)| LinkReport { name, capacity_bps }).collect(),
    }
}

/// Predict every transfer's start and finish with the named model.
pub fn simulate(m: &Machine, spec: &WorkloadSpec, origin: &str, model_name: &str, params: &[(String, String)]) -> Result<Report> {
    let w = Workload::resolve(spec, m, origin)?;
    if model_name == "maxmin" {
        // maxmin has its own incremental engine, which also accounts for latencies.
        let model = MaxminModel::new(m, &w, MaxminParams::parse(params)?)?;
        let o = model.simulate(&w, true)?;
        return Ok(report(m, &w, model_name, &model, o));
    }
    let mut model = model::build(model_name, params, m, &w)?;
    let o = sim::run(&w, model.as_mut(), true)?;
    Ok(report(m, &w, model_name, model.as_ref(), o))
}

#[derive(Serialize, Debug)]
pub struct FactorRow {
    pub transfer: usize,
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
    #[serde(rename = "final")]
    pub fin: f64,
    /// Per step ("B", "C", "D", "final"): the ports that lowered or raised this factor.
    pub causes: BTreeMap<String, Vec<String>>,
}

#[derive(Serialize, Debug)]
pub struct ExplainPhase {
    pub start_s: f64,
    pub end_s: f64,
    pub rows: Vec<FactorRow>,
}

#[derive(Serialize, Debug)]
pub struct Explanation {
    #[serde(flatten)]
    pub report: Report,
    pub explain: Vec<ExplainPhase>,
}

/// Run sc16 and keep, per phase, every transfer's factor after each step and why it changed.
pub fn explain(m: &Machine, spec: &WorkloadSpec, origin: &str, model_name: &str, params: &[(String, String)]) -> Result<Explanation> {
    if model_name != "sc16" {
        return Err(Error::input("--model", model_name, "explain shows the steps of the sc16 model; use --model sc16"));
    }
    let w = Workload::resolve(spec, m, origin)?;
    let mut model = sc16::Sc16Model::new(m, &w, sc16::Sc16Params::parse(params)?)?;
    model.traces = Some(Vec::new());
    let o = sim::run(&w, &mut model, true)?;
    let traces = model.traces.take().unwrap_or_default();
    let tree = &model.eval.tree;
    let label = |k: usize, active: &[usize]| {
        let t = &w.transfers[active[k]];
        format!("{}→{}", m.devices[t.src].name, m.devices[t.dst].name)
    };
    let explain = o
        .phases
        .iter()
        .zip(&traces)
        .map(|(p, t)| {
            let rows = (0..p.active.len())
                .map(|k| {
                    let mut causes: BTreeMap<String, Vec<String>> = BTreeMap::new();
                    let mine = || t.causes.iter().filter(|c| c.flow == k);
                    for c in mine() {
                        let (key, text) = match c.step {
                            'B' => ("B", format!("{} shared with other upstream traffic ({:.4} → {:.4})", tree.port_name(c.link), c.before, c.after)),
                            'C' if c.rc_penalty => ("C", format!("{}: round-robin with root-complex penalty τ ({:.4} → {:.4})", tree.port_name(c.link), c.before, c.after)),
                            'C' => ("C", format!("{}: round-robin among ingress ports ({:.4} → {:.4})", tree.port_name(c.link), c.before, c.after)),
                            'D' => (
                                "D",
                                format!(
                                    "head-of-line blocking in the FIFO of {} behind {} ({:.4} → {:.4})",
                                    tree.link_name(c.link),
                                    label(c.blocker.unwrap_or(0), &p.active),
                                    c.before,
                                    c.after
                                ),
                            ),
                            // The redistribution pass repeats step C; only a net change from D is news.
                            _ if t.fin[k] < t.d[k] - 1e-12 => {
                                ("final", format!("{}: re-arbitration with the HOL caps ({:.4} → {:.4})", tree.port_name(c.link), c.before, c.after))
                            }
                            _ => continue,
                        };
                        causes.entry(key.into()).or_default().push(text);
                    }
                    if t.fin[k] > t.d[k] + 1e-12 {
                        let port = mine().rfind(|c| c.step == 'F').map(|c| format!("{}: ", tree.port_name(c.link))).unwrap_or_default();
                        causes.entry("final".into()).or_default().push(format!(
                            "{port}picks up capacity freed by head-of-line-capped copies ({:.4} → {:.4})",
                            t.d[k], t.fin[k]
                        ));
                    }
                    FactorRow { transfer: p.active[k], a: t.a[k], b: t.b[k], c: t.c[k], d: t.d[k], fin: t.fin[k], causes }
                })
                .collect();
            ExplainPhase { start_s: p.start, end_s: p.end, rows }
        })
        .collect();
    Ok(Explanation { report: report(m, &w, "sc16", &model, o), explain })
}

/// JSON Schema of the machine or the transfers description.
pub fn schema(which: &str) -> Result<String> {
    let s = match which {
        "machine" => schemars::schema_for!(MachineSpec),
        "transfers" => schemars::schema_for!(WorkloadSpec),
        _ => return Err(Error::input("schema", which, "is not a schema; choose machine or transfers")),
    };
    Ok(serde_json::to_string_pretty(&s).expect("schemas serialise"))
}
