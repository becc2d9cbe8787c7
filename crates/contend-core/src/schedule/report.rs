//! What a search reports, and schedules as named orders and as workloads for `contend simulate`.

use super::halo::Halo;
use super::{Method, Semantics};
use crate::error::{Error, Result};
use crate::topology::Machine;
use crate::units::{Bytes, Time};
use crate::workload::{TransferRef, TransferSpec, WorkloadSpec};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One rank's order: its GPU and the GPUs it sends to, first first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GpuOrder {
    pub gpu: String,
    pub to: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ScheduleReport {
    pub machine: String,
    pub model: String,
    pub params: BTreeMap<String, String>,
    pub semantics: Semantics,
    pub method: Method,
    /// Per-message overhead, seconds.
    pub alpha_s: f64,
    /// Device of each rank.
    pub gpus: Vec<String>,
    pub messages: usize,
    /// The largest message alone (size / its rate alone, B for sc16): the T_msg of the SC16 study.
    pub t_msg_s: f64,
    /// Orders in the space: the product over ranks of (neighbours)!, saturating at 2^128 - 1.
    pub orders_total: u128,
    /// Complete orders whose makespan was computed (symmetric images are not recomputed).
    pub orders_evaluated: u64,
    /// Search tree nodes (simulation segments between two choices) visited. With more than one
    /// thread, branch and bound's count, and which of several optimal orders it reports, depend
    /// on timing; every other field is the same for any thread count.
    pub nodes_visited: u64,
    /// Symmetries of machine and halo used to skip equivalent orders (1: none).
    pub symmetries: usize,
    pub best_s: f64,
    /// Orders within a relative 1e-9 of the best (exhaustive only).
    pub best_count: Option<u128>,
    pub median_s: Option<f64>,
    pub worst_s: Option<f64>,
    /// The order in which the halo generator lists each rank's neighbours.
    pub identity_s: f64,
    /// Proven lower bound on the best makespan (equal to best_s once proven optimal).
    pub lower_bound_s: f64,
    /// best_s / lower_bound_s - 1.
    pub gap: f64,
    pub proven_optimal: bool,
    pub best_order: Vec<GpuOrder>,
    /// Makespan of every order, ascending (exhaustive with keep_times).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub times_s: Option<Vec<f64>>,
}

pub(crate) fn named(m: &Machine, halo: &Halo, order: &[Vec<u8>]) -> Vec<GpuOrder> {
    let name = |d: usize| m.devices[d].name.clone();
    order
        .iter()
        .enumerate()
        .map(|(g, slots)| GpuOrder { gpu: name(halo.device[g]), to: slots.iter().map(|&s| name(halo.device[halo.messages[g][s as usize].dst])).collect() })
        .collect()
}

/// Slots per rank from a named order. Two messages to one GPU (the faces of a periodic
/// dimension of two ranks) are interchangeable, so names are matched first come, first served.
pub(crate) fn slots(m: &Machine, halo: &Halo, order: &[GpuOrder]) -> Result<Vec<Vec<u8>>> {
    let bad = |field: String, problem: String| Error::input("order", field, problem);
    let name = |d: usize| m.devices[d].name.as_str();
    let mut out = Vec::with_capacity(halo.ranks());
    for (g, &dev) in halo.device.iter().enumerate() {
        let i = order
            .iter()
            .position(|o| o.gpu == name(dev))
            .ok_or_else(|| bad(String::new(), format!("has no entry for {} (rank {g}); give one order per rank", name(dev))))?;
        let msgs = &halo.messages[g];
        let mut used = vec![false; msgs.len()];
        let mut slots = Vec::with_capacity(msgs.len());
        for (j, to) in order[i].to.iter().enumerate() {
            let s = (0..msgs.len()).find(|&s| !used[s] && name(halo.device[msgs[s].dst]) == to).ok_or_else(|| {
                let expect: Vec<&str> = msgs.iter().map(|x| name(halo.device[x.dst])).collect();
                bad(format!("order[{i}].to[{j}]"), format!("\"{to}\" is not a neighbour left to send to; {} sends to {}", name(dev), expect.join(", ")))
            })?;
            used[s] = true;
            slots.push(s as u8);
        }
        if slots.len() != msgs.len() {
            return Err(bad(format!("order[{i}].to"), format!("lists {} of the {} neighbours of {}; list each once", slots.len(), msgs.len(), name(dev))));
        }
        out.push(slots);
    }
    if order.len() != halo.ranks() {
        return Err(bad(String::new(), format!("has {} entries for {} ranks; give one per rank", order.len(), halo.ranks())));
    }
    Ok(out)
}

/// The schedule as transfers in message order: sequential chains each rank's messages with
/// `after`, rounds make every message wait for the whole previous round; alpha is every
/// transfer's `overhead`, so the executor delays its bytes exactly as the search does.
pub(crate) fn workload(m: &Machine, halo: &Halo, order: &[Vec<u8>], semantics: Semantics, alpha: f64) -> WorkloadSpec {
    let name = |d: usize| m.devices[d].name.clone();
    let mut names = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut transfers = Vec::new();
    for (g, msgs) in halo.messages.iter().enumerate() {
        for msg in msgs {
            let base = format!("{}->{}", name(halo.device[g]), name(halo.device[msg.dst]));
            let n = seen.entry(base.clone()).or_insert(0);
            *n += 1;
            // The second face towards the same neighbour (a periodic dimension of two ranks).
            let id = if *n == 1 { base } else { format!("{base}.{n}") };
            names.push(id.clone());
            transfers.push(TransferSpec {
                name: Some(id),
                src: name(halo.device[g]),
                dst: name(halo.device[msg.dst]),
                size: Bytes(msg.bytes),
                overhead: (alpha > 0.0).then(|| Time::from_secs(alpha)),
                datatype: msg.datatype.clone(),
                method: halo.method,
                ..Default::default()
            });
        }
    }
    let first: Vec<usize> = halo.messages.iter().scan(0, |acc, v| Some(std::mem::replace(acc, *acc + v.len()))).collect();
    let id = |g: usize, k: usize| first[g] + order[g][k] as usize;
    let by_name = |i: usize| TransferRef::Name(names[i].clone());
    for g in 0..halo.ranks() {
        for k in 1..order[g].len() {
            transfers[id(g, k)].after = match semantics {
                Semantics::Sequential => vec![by_name(id(g, k - 1))],
                Semantics::Rounds => (0..halo.ranks()).filter(|&h| k - 1 < order[h].len()).map(|h| by_name(id(h, k - 1))).collect(),
            };
        }
    }
    WorkloadSpec { transfers, ..Default::default() }
}
