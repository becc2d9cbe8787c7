//! sc16's steps as `contend explain` shows them: every transfer's factor after steps A-D and
//! the final re-arbitration, per phase, and the ports that changed it, worded on the PCIe tree.

use super::sc16::{Sc16Params, Sc16Prepared};
use super::{ExplainPhase, Explained, FactorRow, RunPhases};
use crate::error::Result;
use crate::topology::Machine;
use crate::workload::Workload;
use std::collections::BTreeMap;

/// The registry's explain hook of sc16.
pub fn explain(m: &Machine, w: &Workload, params: &[(String, String)], run: &mut RunPhases) -> Result<Explained> {
    let prepared = Sc16Prepared::new(m, w, Sc16Params::parse(params)?)?;
    let mut model = prepared.model();
    model.traces = Some(Vec::new());
    let spans = run(&prepared.flows, &mut model)?;
    let traces = model.traces.take().unwrap_or_default();
    let tree = &prepared.tree;
    let label = |k: usize, active: &[usize]| {
        let t = &w.transfers[active[k]];
        format!("{}→{}", m.devices[t.src].name, m.devices[t.dst].name)
    };
    let explain = spans
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
                            'C' if c.rc_penalty => {
                                ("C", format!("{}: round-robin with root-complex penalty τ ({:.4} → {:.4})", tree.port_name(c.link), c.before, c.after))
                            }
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
                        causes
                            .entry("final".into())
                            .or_default()
                            .push(format!("{port}picks up capacity freed by head-of-line-capped copies ({:.4} → {:.4})", t.d[k], t.fin[k]));
                    }
                    FactorRow { transfer: p.active[k], a: t.a[k], b: t.b[k], c: t.c[k], d: t.d[k], fin: t.fin[k], causes }
                })
                .collect();
            ExplainPhase { start_s: p.start_s, end_s: p.end_s, rows }
        })
        .collect();
    Ok(Explained { params: prepared.params.to_map(), phases: explain, flows: prepared.flows })
}
