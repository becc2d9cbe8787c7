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

/// Where a model runs when no model is named: on the machines `takes` accepts, which `words`
/// names for `--help` and `contend models`. The models are tried in registry order; the first
/// that takes the machine runs, and the last default takes every machine (tested).
pub struct DefaultOn {
    pub takes: fn(&Machine) -> bool,
    pub words: &'static str,
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
    /// The machines on which it runs where no model is named (`chosen`); None: never by default.
    #[serde(serialize_with = "default_words")]
    pub default_on: Option<DefaultOn>,
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
        (self.build)(m, w, pairs).map_err(|e| self.refusal(e, m))
    }

    /// A refusal by a model that does not take every graph names the models that do (sc16 on a
    /// machine that is not one PCIe tree, say); a `--param` of another model names that model
    /// where it applies to `m` (`-p tau=0.2 --model maxmin` on a PCIe tree node), and where it
    /// does not (tau on dgx-a100, which sc16 refuses) says so and keeps the running model's list,
    /// so the advice never sends the user to a refusal; other errors pass as they are.
    pub fn refusal(&self, e: Error, m: &Machine) -> Error {
        match e {
            Error::Unsupported { model, reason } if !self.any_graph => Error::Unsupported { model, reason: format!("{reason}; {}", general_model_hint()) },
            Error::Input { file, field, problem } if file == "--param" && !self.params.iter().any(|p| p.name == field) => match owner_of(&field, m) {
                Some(owner) if owner.takes(m) => {
                    let problem =
                        format!("is a parameter of {}, not of {}, the model that runs here; use --model {} to set it", owner.name, self.name, owner.name);
                    Error::Input { file, field, problem }
                }
                Some(owner) => {
                    let known: Vec<&str> = self.params.iter().map(|p| p.name).collect();
                    let problem = format!(
                        "is a parameter of {}, which does not apply to {} (it takes {}); {}, the model that runs here, has no such parameter; known: {}",
                        owner.name,
                        m.name,
                        owner.applies_to,
                        self.name,
                        known.join(", ")
                    );
                    Error::Input { file, field, problem }
                }
                None => Error::Input { file, field, problem },
            },
            e => e,
        }
    }

    /// Whether this model runs on `m` when named: its kind of machine, and a model that takes
    /// only some graphs on the ones its default takes (sc16 on a node whose GPUs copy over PCIe
    /// trees alone, `sc16::fits`).
    pub fn takes(&self, m: &Machine) -> bool {
        self.machines.contains(&m.kind()) && (self.any_graph || self.default_on.as_ref().is_some_and(|d| (d.takes)(m)))
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
        // The model of the paper this project starts from, on the PCIe trees it describes, and
        // only there: an NVLink or NVSwitch node's GPU copies it refuses (`sc16::fits`).
        default_on: Some(DefaultOn { takes: sc16::fits, words: "a node whose GPUs copy over PCIe trees alone" }),
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
        // Every machine sc16 does not take: NVLink, NVSwitch or C2C between GPUs, ACS redirect,
        // host staging, and the networks of seed 003's studies (their flow level).
        default_on: Some(DefaultOn { takes: |_| true, words: "any other machine (NVLink, NVSwitch, a cluster)" }),
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
        default_on: None,
        tree_symmetric: false,
        merges_copies: false,
        build: super::packet::prepare,
    },
];

fn default_words<S: serde::Serializer>(v: &Option<DefaultOn>, s: S) -> std::result::Result<S::Ok, S::Error> {
    v.as_ref().map(|d| d.words).serialize(s)
}

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

/// The model named, else the one the registry runs on this machine where none is named (see
/// `default_rule`).
pub fn chosen(name: Option<&str>, m: &Machine) -> Result<&'static ModelEntry> {
    match name {
        Some(n) => get(n),
        None => Ok(default_for(m)),
    }
}

/// The model that runs on this machine where none is named: the first default that takes it.
pub fn default_for(m: &Machine) -> &'static ModelEntry {
    MODELS.iter().find(|e| e.default_on.as_ref().is_some_and(|d| (d.takes)(m))).unwrap_or_else(|| general_default())
}

/// The default on a machine no narrower default takes, the last of them (maxmin): what runs rank
/// programs where no model is named, since sc16 models copies alone (`scenario::model_name`).
pub fn general_default() -> &'static ModelEntry {
    MODELS.iter().rfind(|e| e.default_on.is_some()).expect("the registry has a default model (tested)")
}

/// The rule `default_for` follows, in words, for `--help`, `contend models` and the docs.
pub fn default_rule() -> String {
    let rules: Vec<String> = MODELS.iter().filter_map(|e| e.default_on.as_ref().map(|d| format!("{} on {}", e.name, d.words))).collect();
    rules.join(", ")
}

/// The model that has a parameter of this name, where one does: one that runs on `m` first.
fn owner_of(param: &str, m: &Machine) -> Option<&'static ModelEntry> {
    let mut owners = MODELS.iter().filter(|e| e.params.iter().any(|p| p.name == param));
    owners.clone().find(|e| e.takes(m)).or_else(|| owners.next())
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
    use crate::topology::{preset_names, LinkKind};

    /// The last default takes every machine, so every machine has one; it takes any graph of
    /// either kind, as it must on whatever the narrower defaults leave.
    #[test]
    fn every_machine_has_a_default_model_that_applies_to_it() {
        let last = general_default();
        assert!(last.any_graph && last.machines.contains(&MachineKind::Node) && last.machines.contains(&MachineKind::Cluster));
        for name in preset_names() {
            let m = Machine::load(name).unwrap();
            assert!((last.default_on.as_ref().unwrap().takes)(&m), "{name}");
            assert!(default_for(&m).machines.contains(&m.kind()), "{name}");
        }
        assert_eq!(default_rule(), "sc16 on a node whose GPUs copy over PCIe trees alone, maxmin on any other machine (NVLink, NVSwitch, a cluster)");
    }

    /// A `--param` of another model names that model only where it runs on the machine: sc16's
    /// tau under maxmin on typical-8gpu (a PCIe tree node, `sc16::fits`) says to use sc16; on
    /// dgx-a100 (NVSwitch, which sc16 refuses) it says sc16 does not apply there and lists
    /// maxmin's own, so the advice never leads to sc16's refusal and back.
    #[test]
    fn a_parameter_of_another_model_names_it_only_where_it_applies() {
        use crate::workload::Transfer;
        let maxmin = get("maxmin").unwrap();
        let pairs = [("tau".to_string(), "0.2".to_string())];
        let problem = |preset: &str| {
            let m = Machine::load(preset).unwrap();
            let transfers = vec![Transfer { name: "t".into(), src: m.gpus()[0], dst: m.gpus()[1], size: 1 << 20, ..Default::default() }];
            let w = Workload { transfers, ..Default::default() };
            match maxmin.prepare(&m, &w, &pairs).err().expect("tau is not maxmin's") {
                Error::Input { file, field, problem } => {
                    assert_eq!((file.as_str(), field.as_str()), ("--param", "tau"));
                    problem
                }
                e => panic!("{e}"),
            }
        };
        assert!(get("sc16").unwrap().takes(&Machine::load("typical-8gpu").unwrap()));
        assert_eq!(problem("typical-8gpu"), "is a parameter of sc16, not of maxmin, the model that runs here; use --model sc16 to set it");
        assert!(!get("sc16").unwrap().takes(&Machine::load("dgx-a100").unwrap()));
        let on_nvswitch = problem("dgx-a100");
        assert!(
            on_nvswitch.starts_with("is a parameter of sc16, which does not apply to dgx-a100 (it takes GPU-to-GPU copies inside one PCIe tree"),
            "{on_nvswitch}"
        );
        assert!(
            on_nvswitch.contains("; maxmin, the model that runs here, has no such parameter; known: ") && !on_nvswitch.contains("--model sc16"),
            "{on_nvswitch}"
        );
    }

    /// sc16 runs by default exactly on the nodes whose GPUs have PCIe links alone and whose PCIe
    /// switches pass peer copies through (no ACS redirect), listed from the presets' links; maxmin
    /// on every NVLink / NVSwitch node and every cluster.
    #[test]
    fn sc16_is_the_default_exactly_on_pcie_tree_nodes() {
        let (mut trees, mut others) = (Vec::new(), Vec::new());
        for name in preset_names() {
            let m = Machine::load(name).unwrap();
            let gpus = m.gpus();
            let pcie_alone = m.links.iter().all(|l| l.kind == LinkKind::Pcie || !(gpus.contains(&l.a) || gpus.contains(&l.b)));
            let tree_node = m.kind() == MachineKind::Node
                && pcie_alone
                && m.devices.iter().all(|d| !d.acs_redirect)
                && m.links.iter().all(|l| l.kind != LinkKind::Pcie || l.p2p);
            let expected = if tree_node { "sc16" } else { "maxmin" };
            assert_eq!(default_for(&m).name, expected, "{name}");
            if tree_node {
                trees.push(name)
            } else {
                others.push(name)
            }
        }
        // Both sides are the presets the docs name (each list from the links, not by hand).
        assert!(trees.contains(&"typical-8gpu") && trees.contains(&"cs-storm") && !trees.contains(&"pcie-8gpu-ws-acs"), "{trees:?}");
        assert!(
            ["dgx1-p100", "nvlink-cpu-quad", "dgx-a100", "hgx-h100", "hgx-h200", "hgx-b200", "fat-tree-256x8"].iter().all(|p| others.contains(p)),
            "{others:?}"
        );
    }
}
