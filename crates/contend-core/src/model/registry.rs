//! Every model, named once: what it is, what it assumes, where it comes from, what it applies
//! to, its parameters, and how to prepare it for a workload. Nothing else in contend compares
//! a model's name.

use super::{maxmin, sc16, Prepare, Prepared};
use crate::error::{Error, Result};
pub use crate::params::Param;
use crate::topology::{Machine, MachineKind};
use crate::workload::Workload;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ModelKind {
    /// Rates of a fixed active set; run through the rate adaptor, memoised by the search.
    Rate,
    /// Told of every event; keeps its own state between events.
    Event,
}

#[derive(Serialize)]
pub struct ModelEntry {
    pub name: &'static str,
    pub kind: ModelKind,
    pub summary: &'static str,
    pub assumptions: &'static [&'static str],
    pub citation: &'static str,
    pub applies_to: &'static str,
    pub params: &'static [Param],
    /// How `contend explain` shows this model's steps, where it can (listed as `explains`).
    #[serde(rename = "explains", serialize_with = "present")]
    pub explain: Option<super::Explain>,
    /// Applies to any machine graph (not only to some shape of one, like sc16's PCIe tree).
    pub any_graph: bool,
    /// The kinds of machine it applies to (one node, a network of nodes).
    pub machines: &'static [MachineKind],
    /// The kinds of machine on which it runs where no model is named (`default_for`): one
    /// model per kind, checked by a test.
    pub default_on: &'static [MachineKind],
    /// Its rates depend on the PCIe tree's shape and each copy's B alone, so where every link of
    /// the tree has one B the tree's automorphisms are symmetries of the schedule search
    /// (schedule/symmetry.rs).
    pub tree_symmetric: bool,
    /// k identical flows on one path run as one flow of k times the bytes (every rate scales with
    /// the copies alike), so NCCL's identical channels of a call alone may run merged
    /// (`nccl::lower::Call::merged_for`). Not under packets: each message cuts its own packets,
    /// which its NIC and every port take in turn.
    #[serde(skip)]
    pub merges_copies: bool,
    /// Prepares the model; callers go through `ModelEntry::prepare`, which words a refusal.
    #[serde(skip)]
    pub build: Prepare,
}

impl ModelEntry {
    /// This model made ready for a workload on a machine (`--param` pairs).
    pub fn prepare(&self, m: &Machine, w: &Workload, pairs: &[(String, String)]) -> Result<Box<dyn Prepared>> {
        (self.build)(m, w, pairs).map_err(|e| self.refusal(e))
    }

    /// A refusal by a model that does not take every graph names the models that do (sc16 on a
    /// machine that is not one PCIe tree, say); other errors pass as they are.
    pub fn refusal(&self, e: Error) -> Error {
        match e {
            Error::Unsupported { model, reason } if !self.any_graph => Error::Unsupported { model, reason: format!("{reason}; {}", general_model_hint()) },
            e => e,
        }
    }
}

pub static MODELS: &[ModelEntry] = &[
    ModelEntry {
        name: "sc16",
        kind: ModelKind::Rate,
        summary: "PCIe congestion-aware model of Martinasso et al. (SC16): congestion factors from source arbitration, \
                  upstream proportional sharing, downstream round-robin with root-complex penalty tau, head-of-line blocking",
        assumptions: &[
            "every PCIe link has the same bandwidth B, each direction",
            "peer-to-peer copies only, on the unique tree path",
            "no latency: a copy moves bytes from the moment it is issued (add per-transfer overhead for software costs)",
        ],
        citation: "M. Martinasso, G. Kwasniewski, S. R. Alam, T. C. Schulthess, T. Hoefler: A PCIe congestion-aware \
                   performance model for densely populated accelerator servers, SC16",
        applies_to: "GPU-to-GPU copies inside one PCIe tree under one root complex",
        params: sc16::PARAMS,
        explain: Some(super::sc16_explain::explain),
        any_graph: false,
        machines: &[MachineKind::Node],
        // The model of the paper this project starts from, for the PCIe trees it describes.
        default_on: &[MachineKind::Node],
        tree_symmetric: true,
        merges_copies: false,
        build: sc16::prepare,
    },
    ModelEntry {
        name: "maxmin",
        kind: ModelKind::Event,
        summary: "flow-level max-min fair sharing over directed links, with per-hop latency, per-link-kind efficiency \
                  and CUDA's choice of mechanism (peer-to-peer, host-staged, GPUDirect RDMA)",
        assumptions: &[
            "bandwidth is shared max-min fairly among the copies in flight on every directed link",
            "a copy moves no bytes until its setup (engine, staging hand-off, hop latencies) has passed",
            "host memory is one resource shared by reads and writes",
        ],
        citation: "D. Bertsekas, R. Gallager: Data Networks, 6.5.2 (max-min fairness); CUDA's copy mechanisms per seed 002/004",
        applies_to: "any machine graph: PCIe trees, QPI/UPI, NVLink meshes, NVSwitch, NICs and host memory",
        params: maxmin::PARAMS,
        explain: None,
        any_graph: true,
        machines: &[MachineKind::Node, MachineKind::Cluster],
        // The flow level seed 003's network studies use; sc16 does not apply to a network.
        default_on: &[MachineKind::Cluster],
        tree_symmetric: false,
        merges_copies: true,
        build: maxmin::prepare,
    },
    ModelEntry {
        name: "packet",
        kind: ModelKind::Event,
        summary: "packet-level discrete-event simulation: store-and-forward output ports, per-hop latency and router delay, \
                  credit-based flow control with one virtual channel per hop, and the NICs' packetisation order (FCFS, RR, RR-N)",
        assumptions: &[
            "a copy is cut into packets of one size (the last partial) after its setup (engine and software costs)",
            "each directed link sends one packet at a time at bandwidth × efficiency (its own, else its kind's, as in maxmin), round-robin over its inputs",
            "a switch forwards a packet only once it has fully arrived, and only into a free slot of the next input buffer",
            "host memory is one port shared by reads and writes; a staged copy pipelines through it packet by packet",
        ],
        citation: "W. J. Dally, B. Towles: Principles and Practices of Interconnection Networks, ch. 13-14 (flow control, virtual channels); \
                   NIC scheduling per seed 003 §III-B",
        applies_to: "any machine graph; built for networks of nodes (NICs, switches, dragonfly and fat-tree routes)",
        params: super::packet::PARAMS,
        explain: None,
        any_graph: true,
        machines: &[MachineKind::Node, MachineKind::Cluster],
        default_on: &[],
        tree_symmetric: false,
        merges_copies: false,
        build: super::packet::prepare,
    },
];

fn present<S: serde::Serializer, T>(v: &Option<T>, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_bool(v.is_some())
}

/// The model of this name, or one line listing the models there are.
pub fn get(name: &str) -> Result<&'static ModelEntry> {
    MODELS
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| Error::input("--model", name, format!("is not a model; choose one of {}", MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", "))))
}

/// The model named, else the one the registry runs on this kind of machine where none is named
/// (sc16 on one node, maxmin on a cluster).
pub fn chosen(name: Option<&str>, kind: MachineKind) -> Result<&'static ModelEntry> {
    match name {
        Some(n) => get(n),
        None => Ok(default_for(kind)),
    }
}

/// The model that runs on this kind of machine where none is named.
pub fn default_for(kind: MachineKind) -> &'static ModelEntry {
    MODELS.iter().find(|m| m.default_on.contains(&kind)).expect("every machine kind has a default model (tested)")
}

/// The rule `default_for` follows, in words, for `--help` and refusals.
pub fn default_rule() -> String {
    let per_kind = |kind: MachineKind, what: &str| format!("{} on {what}", default_for(kind).name);
    format!("{}, {}", per_kind(MachineKind::Node, "one node"), per_kind(MachineKind::Cluster, "a cluster"))
}

/// What to tell a user whose machine or workload a model cannot handle: the models that
/// take any graph.
fn general_model_hint() -> String {
    let general: Vec<&str> = MODELS.iter().filter(|m| m.any_graph).map(|m| m.name).collect();
    format!("use --model {}", general.join(" or --model "))
}

/// The parameters in force as "name" -> "value", defaults filled in.
pub fn defaults(params: &[Param]) -> BTreeMap<String, String> {
    params.iter().map(|p| (p.name.to_string(), p.default.to_string())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_machine_kind_has_one_default_model_that_applies_to_it() {
        for kind in [MachineKind::Node, MachineKind::Cluster] {
            let defaults: Vec<&str> = MODELS.iter().filter(|m| m.default_on.contains(&kind)).map(|m| m.name).collect();
            assert_eq!(defaults.len(), 1, "{kind:?}: {defaults:?}");
            assert!(default_for(kind).machines.contains(&kind), "{kind:?}");
        }
        // A network of nodes is no PCIe tree: its default takes any graph.
        assert!(default_for(MachineKind::Cluster).any_graph);
        assert_eq!(default_rule(), "sc16 on one node, maxmin on a cluster");
    }
}
