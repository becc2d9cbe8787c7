//! The engine's public surface, in plain serialisable reports: what the Python binding and
//! the CLI call. Every function here is also usable from Rust alone.

use crate::error::{Error, Result};
use crate::model::{registry, sc16, ModelEntry, Prepared, RateAdaptor};
use crate::report::{self, Detail, Report};
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

/// Resolve the workload and prepare the named model for it.
fn prepare(m: &Machine, spec: &WorkloadSpec, origin: &str, model: &str, params: &[(String, String)]) -> Result<(Workload, &'static ModelEntry, Box<dyn Prepared>)> {
    let entry = registry::get(model)?;
    let w = Workload::resolve(spec, m, origin)?;
    let prepared = (entry.prepare)(m, &w, params)?;
    Ok((w, entry, prepared))
}

/// Predict every transfer's start and finish with the named model.
pub fn simulate(m: &Machine, spec: &WorkloadSpec, origin: &str, model: &str, params: &[(String, String)], detail: Detail) -> Result<Report> {
    let (w, entry, prepared) = prepare(m, spec, origin, model, params)?;
    let o = sim::run_prepared(&w, prepared.as_ref(), detail.phases)?;
    Ok(report::build(m, &w, entry.name, prepared.params(), prepared.flows(), &o, detail))
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

/// Run a model that can show its steps (sc16) and keep, per phase, every transfer's factor
/// after each step and why it changed.
pub fn explain(m: &Machine, spec: &WorkloadSpec, origin: &str, model_name: &str, params: &[(String, String)]) -> Result<Explanation> {
    let entry = registry::get(model_name)?;
    if !entry.explains {
        let can: Vec<&str> = registry::MODELS.iter().filter(|e| e.explains).map(|e| e.name).collect();
        return Err(Error::input("--model", model_name, format!("has no steps to explain; explain works with --model {}", can.join(" or --model "))));
    }
    let w = Workload::resolve(spec, m, origin)?;
    let prepared = sc16::Sc16Prepared::new(m, &w, sc16::Sc16Params::parse(params)?)?;
    let mut model = prepared.model();
    model.traces = Some(Vec::new());
    let mut adaptor = RateAdaptor::new(model, &prepared.flows);
    let o = sim::run(&w, &prepared.flows, &mut adaptor, true)?;
    let traces = adaptor.model.traces.take().unwrap_or_default();
    let tree = &prepared.tree;
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
    let report = report::build(m, &w, entry.name, prepared.params.to_map(), &prepared.flows, &o, Detail { phases: true });
    Ok(Explanation { report, explain })
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
