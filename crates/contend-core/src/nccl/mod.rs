//! NCCL collectives on a machine: the rings NCCL's search would build (`topo`), NCCL's own
//! choice of algorithm and protocol (`tuning`), each call lowered to point-to-point transfers
//! on the one executor (`lower`), and what nccl-tests would print (`tests_tool`).
//! docs/nccl.md says what is modelled and what is not.

pub mod constants;
pub mod cpu;
pub mod environment;
pub mod lower;
pub mod nodes;
pub mod nvls_heads;
pub mod p2p;
pub mod program;
pub mod pxn;
pub mod rails;
pub mod tests_tool;
pub mod topo;
pub mod tuner;
pub mod tuning;
pub mod versions;

#[cfg(test)]
mod ceiling_tests;
#[cfg(test)]
mod divert_tests;
#[cfg(test)]
mod dtree_tests;
#[cfg(test)]
mod fallback_tests;
#[cfg(test)]
mod gdr_tests;
#[cfg(test)]
mod grain_tests;
#[cfg(test)]
mod graph_tests;
#[cfg(test)]
mod iterations_tests;
#[cfg(test)]
mod lists_tests;
#[cfg(test)]
mod multinode_tests;
#[cfg(test)]
mod nvb_tests;
#[cfg(test)]
mod nvls_heads_tests;
#[cfg(test)]
mod nvls_tests;
#[cfg(test)]
mod p2p_tests;
#[cfg(test)]
mod pat_tests;
#[cfg(test)]
mod pxn_tests;
#[cfg(test)]
mod rails_tests;
#[cfg(test)]
mod releases_tests;
#[cfg(test)]
mod scale_tests;
#[cfg(test)]
mod shm_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tuner_tests;
#[cfg(test)]
mod versions_tests;

use crate::error::{Error, Result};
use crate::flow::router::Router;
use crate::model::registry;
use crate::sim;
use crate::topology::{DeviceKind, LinkKind, Machine};
use crate::workload::Workload;
use serde::Serialize;

/// The collectives nccl-tests measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Coll {
    AllReduce,
    AllGather,
    ReduceScatter,
    Broadcast,
    Reduce,
    #[serde(rename = "alltoall")]
    AllToAll,
    #[serde(rename = "sendrecv")]
    SendRecv,
}

pub const COLLS: &[Coll] = &[Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::Broadcast, Coll::Reduce, Coll::AllToAll, Coll::SendRecv];

impl Coll {
    /// nccl-tests' name (its binary is `<name>_perf`).
    pub fn name(self) -> &'static str {
        match self {
            Coll::AllReduce => "all_reduce",
            Coll::AllGather => "all_gather",
            Coll::ReduceScatter => "reduce_scatter",
            Coll::Broadcast => "broadcast",
            Coll::Reduce => "reduce",
            Coll::AllToAll => "alltoall",
            Coll::SendRecv => "sendrecv",
        }
    }

    pub fn parse(s: &str) -> Result<Coll> {
        let key = s.trim().to_lowercase().replace(['-', '_'], "");
        let key = key.strip_suffix("perf").unwrap_or(&key).to_string();
        COLLS.iter().copied().find(|c| c.name().replace('_', "") == key).ok_or_else(|| {
            let names: Vec<&str> = COLLS.iter().map(|c| c.name()).collect();
            // nccl-tests also has gather, scatter, hypercube (src/gather.cu, scatter.cu, hypercube.cu)
            // and alltoallv: tests it runs that contend does not predict yet (tester's R15).
            let unmodelled = ["gather", "scatter", "hypercube", "alltoallv"];
            let why = if unmodelled.contains(&key.as_str()) {
                "is an nccl-tests collective contend does not predict yet"
            } else {
                "is not a collective nccl-tests runs"
            };
            Error::input("--op", s, format!("{why}; choose {}", names.join(", ")))
        })
    }

    /// nccl-tests' bus bandwidth factor: algbw x factor = busbw (tools::nccl_tests).
    pub fn busbw_factor(self, n: usize) -> f64 {
        crate::tools::nccl_tests::busbw_factor(self.name(), n)
    }

    pub fn reduces(self) -> bool {
        matches!(self, Coll::AllReduce | Coll::ReduceScatter | Coll::Reduce)
    }

    pub fn rooted(self) -> bool {
        matches!(self, Coll::Broadcast | Coll::Reduce)
    }

    /// Algorithms NCCL has for it, among those contend lowers.
    pub fn algos(self) -> &'static [Algo] {
        match self {
            Coll::AllReduce => &[Algo::Ring, Algo::Tree, Algo::Nvls, Algo::NvlsTree],
            Coll::AllGather | Coll::ReduceScatter => &[Algo::Ring, Algo::Nvls, Algo::Pat],
            Coll::AllToAll | Coll::SendRecv => &[Algo::P2p],
            _ => &[Algo::Ring],
        }
    }
}

/// Indices follow NCCL's (NCCL_ALGO_TREE = 0, NCCL_ALGO_RING = 1, NCCL_ALGO_NVLS = 4,
/// NCCL_ALGO_NVLS_TREE = 5, NCCL_ALGO_PAT = 6, from 2.23). `P2p` is no NCCL algorithm: all-to-all and send/receive run as
/// peer-to-peer operations outside them (no tuner, NCCL_ALGO does not apply); it names what
/// such a call ran, and is lowered on ring Simple's steps and latencies (`Comm::call_with`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    Tree = 0,
    Ring = 1,
    Nvls = 4,
    NvlsTree = 5,
    Pat = 6,
    P2p = 7,
}

/// Indices follow NCCL's (NCCL_PROTO_LL = 0, LL128 = 1, SIMPLE = 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Proto {
    #[serde(rename = "LL")]
    Ll = 0,
    #[serde(rename = "LL128")]
    Ll128 = 1,
    #[serde(rename = "Simple")]
    Simple = 2,
}

pub const PROTOS: [Proto; 3] = [Proto::Ll, Proto::Ll128, Proto::Simple];

impl Algo {
    /// NCCL's name (its `ncclAlgoStr`), printed in tables, `--explain` and plot legends.
    pub fn name(self) -> &'static str {
        match self {
            Algo::Tree => "Tree",
            Algo::Ring => "Ring",
            Algo::Nvls => "NVLS",
            Algo::NvlsTree => "NVLSTree",
            Algo::Pat => "PAT",
            Algo::P2p => "P2P",
        }
    }

    /// The name in JSON reports and for `--algo` (snake case): "ring", "tree", "nvls",
    /// "nvls_tree", "pat", "p2p".
    pub fn id(self) -> &'static str {
        match self {
            Algo::Tree => "tree",
            Algo::Ring => "ring",
            Algo::Nvls => "nvls",
            Algo::NvlsTree => "nvls_tree",
            Algo::Pat => "pat",
            Algo::P2p => "p2p",
        }
    }

    pub const ALL: [Algo; 6] = [Algo::Ring, Algo::Tree, Algo::Nvls, Algo::NvlsTree, Algo::Pat, Algo::P2p];
}

impl Serialize for Algo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.id())
    }
}

impl Proto {
    pub fn name(self) -> &'static str {
        match self {
            Proto::Ll => "LL",
            Proto::Ll128 => "LL128",
            Proto::Simple => "Simple",
        }
    }
}

/// NCCL_ALGO as a list ("ring", "tree", "nvls", "nvlstree", "pat", "ring,tree"); the algorithms
/// contend does not lower (CollNet) are named as such.
pub fn parse_algos(s: &str) -> Result<Vec<Algo>> {
    // NCCL's exclusion form: "^NVLS" is every algorithm but NVLS (2.30.7 src/graph/tuning.cc
    // `parseList`: a list starting with '^' unsets the elements named and sets the rest; its
    // `strtok` skips empty words, so "^" alone is every algorithm and "ring," is ring).
    if let Some(rest) = s.trim().strip_prefix('^') {
        let out: Vec<Algo> = words(rest).map(|a| algo_word(a, true)).collect::<Result<Vec<Option<Algo>>>>()?.into_iter().flatten().collect();
        return Ok(Algo::ALL.iter().copied().filter(|a| *a != Algo::P2p && !out.contains(a)).collect());
    }
    words(s).map(|a| algo_word(a, false).map(|x| x.expect("named algorithms are lowered"))).collect()
}

/// A comma list's words, empty ones skipped as NCCL's `parseList` skips them.
fn words(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').filter(|w| !w.trim().is_empty())
}

/// One word of NCCL_ALGO; in an exclusion list an algorithm contend does not lower (CollNet)
/// is read as excluded (None), as it never runs here anyway.
fn algo_word(a: &str, excluded: bool) -> Result<Option<Algo>> {
    let x = a.trim().to_lowercase();
    // NCCL_ALGO spells it NVLSTree; the JSON's id is nvls_tree.
    let id = if x == "nvlstree" { "nvls_tree" } else { x.as_str() };
    if let Some(&algo) = Algo::ALL.iter().find(|a| a.id() == id) {
        return Ok(Some(algo));
    }
    match id {
        "collnet" | "collnetdirect" | "collnetchain" if excluded => Ok(None),
        "collnet" | "collnetdirect" | "collnetchain" => {
            Err(Error::input("--algo", id, "is an NCCL algorithm contend does not lower yet; use ring, tree, nvls, nvlstree or pat"))
        }
        _ => Err(Error::input("--algo", id, "is not an NCCL algorithm; use ring, tree, nvls, nvlstree, pat, a comma list, or ^ and a list to exclude")),
    }
}

/// What the algorithms and protocols NCCL may refuse need, for a refusal's one line.
pub const NEEDS: &str = "NVLS needs one node, NVLS-tree several, of Hopper or later GPUs on an NVSwitch that multicasts; PAT needs NCCL 2.23 or later, one GPU per node, Simple and NCCL_PAT_ENABLE not 0; with none left NCCL 2.18 and 2.24 and later stop (enqueue.cc: No algorithm/protocol available), 2.19 to 2.23 run ring (tuning.cc)";

/// NCCL_PROTO as a list ("LL", "LL128", "Simple").
pub fn parse_protos(s: &str) -> Result<Vec<Proto>> {
    let word = |p: &str| match p.trim().to_lowercase().as_str() {
        "ll" => Ok(Proto::Ll),
        "ll128" => Ok(Proto::Ll128),
        "simple" => Ok(Proto::Simple),
        x => Err(Error::input("--proto", x, "is not an NCCL protocol; use LL, LL128, Simple, a comma list, or ^ and a list to exclude")),
    };
    // NCCL's exclusion form, as NCCL_ALGO's (`parse_algos`): "^LL128" is LL and Simple.
    if let Some(rest) = s.trim().strip_prefix('^') {
        let out = words(rest).map(word).collect::<Result<Vec<Proto>>>()?;
        return Ok(PROTOS.iter().copied().filter(|p| !out.contains(p)).collect());
    }
    words(s).map(word).collect()
}

/// A communicator on a machine: its ranks, the rings, channel counts and NCCL's view of it.
pub struct Comm {
    /// The machine as NCCL drives it: its kernels move the bytes, so GPUs pay no copy-engine
    /// setup (their `latency`); NCCL's per-step latencies stand for it.
    pub m: Machine,
    /// Machine device of each rank (node-major).
    pub devices: Vec<usize>,
    pub nodes: usize,
    pub ppn: usize,
    /// The ring search on the first node.
    pub graph: topo::RingGraph,
    pub topo: topo::Topo,
    /// Channels the communicator runs (`tuning::coll_channels`, or as given) and what gives them:
    /// the count given (None: NCCL's) and NCCL's ring graph (channels, GB/s a channel).
    pub channels: usize,
    pub channels_given: Option<usize>,
    /// The floors and ceilings a user's NCCL_MIN/MAX_NCHANNELS and NCCL_MIN/MAX_CTAS put on NCCL's
    /// own counts (`environment::Bounds`: the ring count by both pairs, NVLS's by the CTA pair).
    pub channel_bounds: environment::Bounds,
    pub ring_graph: (usize, f64),
    /// NCCL's tree graph (intra, inter GB/s a channel) under each release's search speeds, by
    /// `versions::ALL`'s order (`tuning::tree_graph`, `Version::blackwell_speeds`).
    pub tree_graphs: Vec<(f64, f64)>,
    /// NCCL's NVLS graph (heads, intra and inter speeds) under each release's search, by
    /// `versions::ALL`'s order (`nvls_heads::search`; one node: `tuning::nvls_graph`); None: no NVLS.
    pub nvls_graphs: Vec<Option<nvls_heads::Graph>>,
    /// Whether each release's own search finds `ring_graph` (2.30.7's), by `versions::ALL`'s order.
    pub as_searched: Vec<bool>,
    /// Each channel's ring over all ranks and where it crosses between nodes, by release (with
    /// P2C, `Version::p2c`, and before it) and with PXN and without (`rails`; `Comm::rails` picks).
    pub rails: [[rails::Rails; 2]; 2],
    pub tuning: tuning::Comm,
    /// Send/receive: the least channels NCCL gives a peer on the node (`p2p::local_peer`), with an
    /// NVB peer counted as PCIe ([0]) and as NVLink ([1], `Version::nvb_channels_as_nvlink`), a
    /// GPU's NICs (count, GB/s), and whether every GPU pair of the node is on NVLink or NVB
    /// (`all_nvlink`) or some pair is (`any_nvlink`).
    pub p2p_local: [usize; 2],
    pub p2p_net: (usize, f64),
    pub all_nvlink: bool,
    pub any_nvlink: bool,
    /// Per-step latencies and efficiencies of the protocols (NCCL's, or fitted).
    pub constants: constants::Constants,
    /// Per node, the NVSwitch that reduces and multicasts for every GPU of the node (NVLS); empty
    /// where some node has none.
    pub switches: Vec<usize>,
    /// PXN relays of send/receive between nodes.
    pub pxn: pxn::Pxn,
    /// A tuner plugin's rules (`tuner`): they pick before NCCL's model, as NCCL calls the plugin.
    pub tuner: Option<tuner::Tuner>,
    /// Seconds: the GDR flush of each Simple step a rank receives from another node (NCCL
    /// v2.20.3 src/transport/net.cc `recvProxyProgress`: after a received Simple step the proxy
    /// issues the net's `iflush`, a read of the GPU buffer through the NIC, and hands the step
    /// to the GPU when it completes; `ncclTopoNeedFlush` (graph/paths.cc) requires it on compute
    /// capability below 9.0). Its cost is the NIC's own per-message latency, the figure NCCL's
    /// model charges for it ("the flush extra latency", tuning.cc). None on one node, on Hopper
    /// and later, or where no GPU of the node receives by GDR; a GPU that receives through host
    /// memory (`net_stage`) is not flushed (`lower::Call::flush_of`).
    pub flush: f64,
    /// The GPUs whose network steps NCCL stages through host memory (`Gdr::of`), at the GDR
    /// level and read the constants give (`set_constants`).
    pub net_stage: std::sync::Arc<lower::NetStages>,
    /// The first node's GPUs without GDR one way that `net_stage` cannot stage: the machine file
    /// draws no host memory they reach (`Gdr::of`); their network steps stay GPU to GPU.
    pub net_unstaged: Vec<usize>,
    /// NCCL's GDR rules at its defaults (2.30), kept for `set_constants`.
    gdr_default: Gdr,
    /// The host memory each step between two GPUs of a node passes through where NCCL connects
    /// them by its SHM transport (no peer path, or a path beyond NCCL's P2P level), by (sending
    /// device, receiving device) (`shm_steps`), by release (before 2.23.4, and 2.30; `Comm::shm`).
    pub shm: [std::sync::Arc<std::collections::BTreeMap<(usize, usize), usize>>; 2],
    /// As `shm`, at the P2P level the constants give (NCCL_P2P_LEVEL, `set_constants`); None: NCCL's default.
    shm_given: Option<std::sync::Arc<Steps>>,
    /// As `rails` (with PXN and without), under NCCL_CROSS_NIC=1 across nodes of several NICs
    /// (`rails::Cross::Free` or `Paired`, built by `set_constants`); None: under 0 or 2.
    rails_given: Option<std::sync::Arc<[rails::Rails; 2]>>,
    /// The node's CPU as the machine names it (`cpu::of`), for NCCL's rules by CPU.
    pub cpu: Option<cpu::Cpu>,
    /// The GPU each step between two GPUs of a node passes through where NCCL joins them by
    /// NVLink through an intermediate GPU (PATH_NVB, "P2P/indirect"), by (sending device,
    /// receiving device) (`nvb_steps`). The same on every node.
    pub nvb: std::sync::Arc<std::collections::BTreeMap<(usize, usize), usize>>,
    /// The first node's NICs that NCCL's network search lists (`rails::search_nics`).
    pub nics: Vec<usize>,
    /// What NCCL's NVLS tuning reads of the network (`versions::Version::nvls_sm100`): the GPUs a
    /// node, the least of NCCL's NIC bandwidths (`nccl_nets`, its `minNetBw`) and whether the NICs
    /// are within PXB of a GPU (`rails::nics_within_pxb`).
    pub nvls_net: versions::NvlsNet,
    /// The P2P level NCCL's graph (`topo`, the rings, NICs and graphs searched on it) was built at
    /// (`at_level`); None: every pair as typed.
    pub graph_level: Option<topo::PathType>,
    /// The farthest path type, at most PXB, between two GPUs of the node before any pair is
    /// diverted: NCCL's P2P transport joins such pairs at every default level (`cpu::p2p_level`
    /// is PXB or SYS), and a level given below it diverts them through the CPU (`at_level`).
    pub p2p_farthest: Option<topo::PathType>,
}

/// NCCL's choice for one call: algorithm, protocol, its model's time (µs), the channels a tuner
/// rule sets (None: NCCL's own) and that rule's line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pick {
    pub algo: Algo,
    pub proto: Proto,
    pub model_us: f64,
    pub channels: Option<usize>,
    pub tuner_line: Option<usize>,
}

impl Comm {
    /// `nodes_gpus[k]`: the devices of node k, in local rank order (every node alike).
    pub fn new(m: &Machine, nodes_gpus: &[Vec<usize>], channels: Option<usize>) -> Result<Comm> {
        Comm::bounded(m, nodes_gpus, channels, None)
    }

    /// `new`, with NCCL's own channel counts kept within `bounds` (NCCL_MIN/MAX_NCHANNELS and
    /// NCCL_MIN/MAX_CTAS, `environment::Environment::channel_bounds`): the ring count where no count
    /// is given, NVLS's by the CTA pair whatever the ring count.
    pub fn bounded(m: &Machine, nodes_gpus: &[Vec<usize>], channels: Option<usize>, bounds: Option<environment::Bounds>) -> Result<Comm> {
        Comm::at_level(m, nodes_gpus, channels, bounds.unwrap_or_default(), None)
    }

    /// `new`, with NCCL's graph at P2P level `level` (`topo::Topo::through_cpus`; None: every pair
    /// as typed): `set_constants` builds it where the level given leaves to SHM a pair that NCCL's
    /// P2P transport joins at every default level (`p2p_farthest`).
    fn at_level(m: &Machine, nodes_gpus: &[Vec<usize>], channels: Option<usize>, bounds: environment::Bounds, level: Option<topo::PathType>) -> Result<Comm> {
        let nodes = nodes_gpus.len();
        let ppn = nodes_gpus[0].len();
        let devices: Vec<usize> = nodes_gpus.iter().flatten().copied().collect();
        let router = Router::new(m);
        let mut topo = topo::Topo::new(m, &router, &nodes_gpus[0]);
        let p2p_farthest = topo.paths.iter().flatten().flatten().map(|p| p.kind).filter(|&k| k <= topo::PathType::Pxb).max();
        if let Some(level) = level {
            topo.through_cpus(m, &router, level).map_err(|g| {
                Error::input(
                    "nccl_p2p_level",
                    level.name(),
                    format!(
                        "leaves GPU pairs to host memory, which NCCL reaches through the CPU nearest each receiver (paths.cc addInterStep), and {} reaches no root complex on its node in {}; add the GPU's PCIe path to its CPU, or give {} or above",
                        m.devices[g].name,
                        m.origin,
                        p2p_farthest.map_or("SYS", topo::PathType::name)
                    ),
                )
            })?;
        }
        let graph = topo::search(&topo).ok_or_else(|| {
            Error::input(
                &m.origin,
                "",
                format!("has no ring through GPUs {}: some pair has no path; choose GPUs that reach each other", names(m, &nodes_gpus[0])),
            )
        })?;
        let searched = graph.rings.len();
        if let Some(c) = channels.filter(|c| !(1..=tuning::MAX_CHANNELS).contains(c)) {
            return Err(Error::input("--channels", c.to_string(), format!("is out of range; give 1 to {}", tuning::MAX_CHANNELS)));
        }
        // Network bandwidth per channel between nodes: the first node's NICs that NCCL's search
        // lists (`rails::search_nics`: not a NIC farther from every GPU than their own) over the rings.
        let first = node_prefix(&m.devices[nodes_gpus[0][0]].name);
        let nics = rails::search_nics(m, &router, &topo, &nodes_gpus[0]);
        let nic_bw: f64 = network_nics(m, first).filter(|(d, _)| nics.contains(d)).map(|(_, bw)| bw / 1e9).sum();
        let bw_inter = if nodes > 1 { (nic_bw / searched as f64).min(graph.bw) } else { 0.0 };
        // NCCL's own graphs for its cost model: across nodes the ring graph is searched through the
        // NICs (`tuning::net_ring_graph`); the tree graph has the ring graph's channels and may run
        // faster inside a node than between nodes (`tuning::tree_graph`).
        let chains = |s: f64, want: usize| topo::chains_at(&topo, s, want);
        let nets = nccl_nets(m, &nics, &nodes_gpus[0], topo.cc);
        let nvls_net = versions::NvlsNet {
            ppn,
            bw: if nets.is_empty() { 0.0 } else { nets.iter().copied().fold(f64::INFINITY, f64::min) },
            pxb: rails::nics_within_pxb(m, &router, &topo, &nodes_gpus[0], &nics),
        };
        let total_bw = nodes_gpus[0].iter().map(|&g| gpu_total_bw(m, g, topo.cc)).fold(0.0, f64::max);
        // The ring graph as release `v`'s search finds it: across nodes through the NICs
        // (`tuning::net_ring_graph`, with the release's speeds and MAXCHANNELS / 2), on one node
        // the GPUs' (`topo::search`, at most 2.30.7's MAXCHANNELS / 2 rings).
        let ring_of = |v: versions::Version| {
            let speeds = tuning::release_speeds(v, topo.cc, true);
            (nodes > 1)
                .then(|| tuning::net_ring_graph(topo.cc, speeds, v.max_channels() / 2, &nets, total_bw, &chains))
                .flatten()
                .unwrap_or((searched, graph.bw))
        };
        let (ring_channels, ring_bw) = ring_of(versions::Version::V2_30);
        // The lowering's rings, NICs and channels are built once, from 2.30.7's graph; a release
        // whose own search finds another graph (Blackwell's speed lists, MAXCHANNELS 32 before
        // 2.25) is refused by `set_constants` rather than run on 2.30.7's.
        let as_searched: Vec<bool> =
            versions::ALL.iter().map(|&v| ring_of(v) == (ring_channels, ring_bw) && (nodes > 1 || searched <= v.max_channels() / 2)).collect();
        // The channels NCCL runs: twice its graphs' (`tuning::coll_channels`; the release that runs
        // is read with the constants, `Comm::set_constants`), or as given (NCCL_MIN/MAX_NCHANNELS).
        let ring_graph = (ring_channels, ring_bw);
        let channels_of = |v: versions::Version| run_channels(channels, bounds, v, topo.cc, nodes, ring_graph);
        // Each channel's ring and, across nodes, the NIC it crosses by (`rails`), with PXN and
        // without (NCCL_PXN_DISABLE=1 is read when the call runs: `Comm::rails`), for as many
        // channels as any release runs (a channel's rails do not depend on the count after it).
        let most = versions::ALL.iter().map(|&v| channels_of(v)).max().unwrap_or(1);
        let build = |p2c: bool| {
            [true, false].map(|pxn| {
                rails::build(m, &router, &topo, nodes_gpus, &graph.rings, most, ring_channels, rails::Rule { pxn, p2c, cross: rails::Cross::Search })
            })
        };
        // The releases differ only where a GPU reaches a NIC through NVLink-C2C (`topo::p2c`).
        let c2c = nodes > 1 && nodes_gpus[0].iter().any(|&g| nics.iter().any(|&d| router.path(g, d, true).is_some_and(|h| topo::p2c(m, topo.cc, &h))));
        let p2c = build(true);
        let rails = [if c2c { build(false) } else { p2c.clone() }, p2c];
        let channels_given = channels;
        let channels = channels_of(versions::Version::V2_30);
        let tree_max =
            if nodes > 1 { nets.iter().copied().fold(0.0, f64::max) } else { topo.paths.iter().flatten().flatten().map(|p| p.bw).fold(0.0, f64::max) };
        let on_nics = |s: f64| if nodes > 1 { nets.iter().map(|&b| ((b + 1e-9) / s).floor() as usize).sum() } else { usize::MAX };
        // The tree graph under each release's search speeds (Blackwell's lists changed: on two
        // hgx-b200 nodes its intra speed is 48 GB/s under 2.25 and 2.26, 96 from 2.27,
        // `Version::blackwell_speeds`); `set_constants` takes the one of the release that runs.
        // Searched once per list: consecutive releases mostly share their speeds.
        let mut tree_graphs: Vec<(f64, f64)> = Vec::with_capacity(versions::ALL.len());
        let mut last: Option<(&[f64], (f64, f64))> = None;
        for &v in &versions::ALL {
            let speeds = tuning::release_speeds(v, topo.cc, nodes > 1);
            let g = match last {
                Some((s, g)) if s == speeds => g,
                _ => tuning::tree_graph(speeds, ring_channels, tree_max, &on_nics, &chains).unwrap_or((ring_bw, if nodes > 1 { ring_bw } else { 0.0 })),
            };
            last = Some((speeds, g));
            tree_graphs.push(g);
        }
        let (tree_bw_intra, tree_bw_inter) = tree_graphs[versions::Version::V2_30 as usize];
        let cpu = cpu::of(m, &nodes_gpus[0]);
        let amd = cpu == Some(cpu::Cpu::Amd);
        let found: Option<Vec<(usize, f64)>> = nodes_gpus.iter().map(|g| nvls_switch(m, g)).collect();
        let (switches, link_bw) = match found {
            Some(v) => (v.iter().map(|x| x.0).collect(), Some(v.iter().map(|x| x.1).fold(f64::INFINITY, f64::min))),
            None => (Vec::new(), None),
        };
        // NVLS's graph by release: on one node every GPU heads a channel (`tuning::nvls_graph`);
        // across nodes a GPU heads one where it is a NIC's local GPU, at speeds no NIC exceeds
        // (`nvls_heads::search`), so nodes with fewer NICs than GPUs have fewer heads.
        // From 2.20.3 NCCL's IB transport reports a NIC's ports as one device of their summed speed
        // (net_ib.cc NCCL_IB_MERGE_NICS=1: ports of one PCI device and one sys_image_guid), and
        // the NVLS search sees that device; before, a port a device. (The ring search here still
        // sees a port a device, `rails::net_devices`.)
        let local_gpus = if nodes > 1 { rails::local_gpus(m, &router, &topo, &nodes_gpus[0]) } else { Vec::new() };
        let nvls_nets = |merged: bool| -> Vec<nvls_heads::Net> {
            (0..local_gpus.len())
                .filter(|&i| !merged || local_gpus[..i].iter().all(|x| x.0 != local_gpus[i].0))
                .map(|i| nvls_heads::Net { bw: nccl_net(m, local_gpus[i].0, &nodes_gpus[0], topo.cc, merged).unwrap_or(0.0), local: local_gpus[i].1 })
                .collect()
        };
        let (port_nets, nic_nets) = (nvls_nets(false), nvls_nets(true));
        let nvls_graphs: Vec<Option<nvls_heads::Graph>> = versions::ALL
            .iter()
            .map(|&v| {
                let bw = link_bw?;
                if nodes == 1 {
                    return tuning::nvls_graph(topo.cc, ppn, bw).map(|(h, intra, inter)| nvls_heads::Graph { heads: (0..h).collect(), intra, inter });
                }
                if topo.cc < 90 || !(2..=tuning::MAX_NVLS_ARITY).contains(&ppn) {
                    return None;
                }
                let nets = if v >= versions::Version::V2_20 { &nic_nets } else { &port_nets };
                nvls_heads::search(v, tuning::release_speeds(v, topo.cc, true), nets, bw, total_bw, ppn)
            })
            .collect();
        let nvls_now = nvls_graphs[versions::Version::V2_30 as usize].clone();
        let (nvls_heads, nvls_bw_intra, nvls_bw_inter) = nvls_now.map_or((0, 0.0, 0.0), |g| (g.heads.len(), g.intra, g.inter));
        let tuning = tuning::Comm {
            nvls_heads,
            nvls_bw_intra,
            nvls_bw_inter,
            ranks: devices.len(),
            nodes,
            cc: topo.cc,
            graph_channels: if nodes > 1 { ring_channels } else { searched },
            bw_intra: if nodes > 1 { ring_bw } else { graph.bw },
            bw_inter: if nodes > 1 { ring_bw } else { bw_inter },
            tree_channels: ring_channels,
            tree_bw_intra,
            tree_bw_inter,
            nvlink: graph.kind == topo::PathType::Nvl,
            nvlink_only: graph.kind <= topo::PathType::Nvb,
            ll128_net: true,
            amd,
            x86: matches!(cpu, Some(cpu::Cpu::Intel | cpu::Cpu::Amd | cpu::Cpu::Zhaoxin)),
            same_channels: rails[1][0].same_channels(if nodes > 1 { ring_channels } else { searched }),
            version: versions::Version::V2_30,
            net_latency: 0.0,
            pat_enable: 2,
            nvls_enable: 2,
            ll128_listed: false,
        };
        // Send/receive (`p2p`): the least channels NCCL gives a peer on the node, whether every
        // pair of the node is on NVLink (the p2p chunk), and the NICs a GPU drives (count and GB/s:
        // the node's NICs spread evenly over its GPUs, as NCCL's search of the nearest NICs finds
        // them on the presets).
        let mut p2p_local = [usize::MAX; 2];
        let (mut all_nvlink, mut any_nvlink) = (true, false);
        for a in 0..ppn {
            for b in (0..ppn).filter(|&b| b != a) {
                let path = topo.paths[a][b].as_ref();
                // `ncclTopoPathAllNVLink` counts every path below PATH_PIX (NVL, NVB) as NVLink;
                // `ncclTopoGetNchannels` counts NVB by release (`p2p_local`'s two entries).
                let nvl = path.filter(|p| p.kind == topo::PathType::Nvl).map(|p| p.bw);
                let nvb = path.filter(|p| p.kind <= topo::PathType::Nvb).map(|p| p.bw);
                all_nvlink &= nvb.is_some();
                any_nvlink |= nvb.is_some();
                for (least, bw) in p2p_local.iter_mut().zip([nvl, nvb]) {
                    *least = (*least).min(p2p::local_peer(bw, tuning::nvlink_bw(topo.cc)));
                }
            }
        }
        let net_count = (nets.len() / ppn).max(1);
        let p2p_net = (net_count, nets.iter().take(net_count).sum::<f64>());
        let pxn = pxn::Pxn::new(m, &devices, ppn, &topo);
        let mut m = m.clone();
        m.devices.iter_mut().filter(|d| d.kind == DeviceKind::Gpu).for_each(|d| d.latency = 0.0);
        // NCCL's kernels move the bytes over NVLink with SM loads and stores, not copy engines,
        // and reach less of a link than a copy engine: NCCL's own per-link figure for the GPU
        // generation (topo.h SMxx_NVLINK_BW: 20 GB/s of NVLink 3's 25, 12 of an A40 bridge
        // link's 14.06, 20.6 of NVLink 4's 25, 40.1 of NVLink 5's 50), each way while the other
        // way is busy too (a ring's figure). So every NVLink carries that share of its bandwidth
        // and no duplex loss, in place of the copy engine's efficiency and duplex loss.
        for i in 0..m.links.len() {
            if m.links[i].kind == LinkKind::Nvlink {
                let share = topo::link_bw(&m, i, topo.cc) * 1e9 / m.links[i].bandwidth;
                m.links[i].efficiency = Some(share.min(1.0));
                m.links[i].duplex = Some(0.0);
            }
        }
        // NCCL's proxy progresses every connection at once, so its NICs interleave the messages
        // of all of them (rr), whatever the cluster says its NICs do with MPI's messages: a FCFS
        // NIC would send a tree's up and down chunks one message after another.
        m.network.nic_scheduling = crate::topology::NicScheduling::Rr;
        let gdr = Gdr::of(&m, &router, &topo, &devices, ppn, &nics, topo::gdr_level(true), (None, true));
        let (flush, ll128) = (gdr.flush, gdr.ll128);
        let net_stage = gdr.stage.clone();
        let nvb = std::sync::Arc::new(nvb_steps(&topo, nodes_gpus));
        let shm = [true, false].map(|old| {
            let v = if old { versions::Version::V2_21 } else { versions::Version::V2_30 };
            shm_steps(&m, &router, &topo, nodes_gpus, &nvb, cpu::p2p_level(v, cpu, ppn)).map(std::sync::Arc::new)
        });
        let shm = [shm[0].clone()?, shm[1].clone()?];
        let tuning = tuning::Comm { ll128_net: ll128, ..tuning };
        Ok(Comm {
            m,
            devices,
            nodes,
            ppn,
            graph,
            topo,
            channels,
            channels_given,
            channel_bounds: bounds,
            ring_graph,
            tree_graphs,
            nvls_graphs,
            as_searched,
            rails,
            tuning,
            p2p_local,
            p2p_net,
            all_nvlink,
            any_nvlink,
            constants: Default::default(),
            switches,
            pxn,
            tuner: None,
            flush,
            net_unstaged: gdr.unstaged.clone(),
            gdr_default: gdr,
            net_stage,
            shm,
            shm_given: None,
            rails_given: None,
            cpu,
            nvb,
            nics,
            nvls_net,
            graph_level: level,
            p2p_farthest,
        })
    }

    /// NCCL's constants as given (`nccl_*` parameters), with the release whose cost model
    /// chooses; a release older than the GPUs (before 2.25 on Blackwell) is refused in one line.
    pub fn set_constants(&mut self, c: constants::Constants) -> Result<()> {
        // A P2P level below a pair NCCL's P2P transport would join changes NCCL's graph: built
        // again at that level (and back, for a level that no longer does), from the machine as
        // NCCL drives it (`m`: rebuilding from it changes nothing else), keeping the tuner.
        let level = c.p2p_level.filter(|&l| self.p2p_farthest.is_some_and(|f| l < f));
        if level != self.graph_level {
            let nodes_gpus = self.nodes_gpus();
            let tuner = self.tuner.take();
            *self = Comm::at_level(&self.m, &nodes_gpus, self.channels_given, self.channel_bounds, level)?;
            self.tuner = tuner;
        }
        if !c.version.knows_blackwell() && self.topo.cc >= 100 {
            return Err(Error::input(
                "nccl_version",
                c.version.name(),
                format!("predates these GPUs (compute capability {}): NCCL {} has no tables for them; give 2.25 or later", self.topo.cc, c.version.tag()),
            ));
        }
        if !self.as_searched[c.version as usize] {
            return Err(Error::input(
                "nccl_version",
                c.version.name(),
                format!(
                    "NCCL {}'s search (its speed lists and MAXCHANNELS {}) finds other graphs on these GPUs than 2.30.7's (rings: {} channels at {} GB/s), which contend does not restate; give 2.30",
                    c.version.tag(),
                    c.version.max_channels(),
                    self.ring_graph.0,
                    self.ring_graph.1
                ),
            ));
        }
        self.check_cross_nic(&c)?;
        let cross_one = (c.cross_nic == 1 && self.nodes > 1).then(|| self.cross_nic_one(&c));
        // 2.18.5 searches crossNic 1 at its first speed alone, then as at crossNic 2
        // (`Version::cross_nic_one_kept`): which graph it keeps contend does not restate, so it
        // runs only where both searches give the same rails.
        if let Some(one) = cross_one.as_ref().filter(|_| !c.version.cross_nic_one_kept()) {
            let two = self.rails_under(&c);
            if two.cross || one[usize::from(c.pxn_disable)].exits.iter().zip(&two.exits).any(|(a, b)| a != b) {
                return Err(Error::input(
                    "nccl_version",
                    c.version.name(),
                    format!(
                        "NCCL {} searches NCCL_CROSS_NIC=1 at its first speed only and each lower speed as at 2 (search.cc ncclTopoCompute, `tmpGraph.crossNic = 0`), whose graphs leave these nodes by different NICs; which it keeps (ncclTopoCompareGraphs, 15% to the same-NIC graph) contend does not restate; give 2.19 or later",
                        c.version.tag()
                    ),
                ));
            }
        }
        // Where crossNic 2 leaves by another NIC, releases before 2.20.3 retry without pairs and
        // keep the crossing graph only 15% ahead of the same-NIC one; contend restates the pairs
        // (`Cross::Search`) and the unpaired crossing from the first search (`Cross::Free`, which
        // 2.19.3 runs at NCCL_CROSS_NIC=1), not that comparison.
        if c.cross_nic != 1 && !c.version.cross_nic_pairs() && self.rails_under(&c).cross {
            let one = if c.version.cross_nic_one_kept() { ", or NCCL_CROSS_NIC=1" } else { "" };
            return Err(Error::input(
                "nccl_version",
                c.version.name(),
                format!(
                    "NCCL {}'s ring search retries these nodes across NICs without pairs and keeps the crossing graph only where it carries 15% more than the same-NIC one (search.cc ncclTopoCompareGraphs), which contend does not restate; give 2.20 or later{one}",
                    c.version.tag()
                ),
            ));
        }
        self.shm_given = c.p2p_level.map(|level| self.shm_at(level).map(std::sync::Arc::new)).transpose()?;
        self.rails_given = cross_one.map(std::sync::Arc::new);
        // NCCL_NET_GDR_LEVEL / _READ, or a release whose default level differs (no P2C before
        // 2.27, `Version::gdr_c2c`, which only a GPU of compute capability 9.0 or later can have: `topo::p2c`).
        let c2c = c.version.gdr_c2c();
        let gdr = if c.net_gdr_level.is_some() || c.net_gdr_read.is_some() || (!c2c && self.topo.cc >= 90) {
            let level = c.net_gdr_level.unwrap_or(topo::gdr_level(c2c));
            Gdr::of(&self.m, &Router::new(&self.m), &self.topo, &self.devices, self.ppn, &self.nics, level, (c.net_gdr_read, c2c))
        } else {
            self.gdr_default.clone()
        };
        (self.net_stage, self.flush, self.tuning.ll128_net, self.net_unstaged) = (gdr.stage, gdr.flush, gdr.ll128, gdr.unstaged);
        self.tuning.pat_enable = c.pat_enable;
        self.tuning.nvls_enable = c.nvls_enable;
        self.tuning.version = c.version;
        (self.tuning.tree_bw_intra, self.tuning.tree_bw_inter) = self.tree_graphs[c.version as usize];
        // The running release's NVLS graph, none where its search finds no channel (rev27: 2.30.7's
        // heads and speeds were kept where an older release's search found none).
        (self.tuning.nvls_heads, self.tuning.nvls_bw_intra, self.tuning.nvls_bw_inter) =
            self.nvls_graphs[c.version as usize].as_ref().map_or((0, 0.0, 0.0), |g| (g.heads.len(), g.intra, g.inter));
        self.channels = run_channels(self.channels_given, self.channel_bounds, c.version, self.topo.cc, self.nodes, self.ring_graph);
        self.tuning.net_latency = c.net_latency * 1e6;
        self.constants = c;
        self.tuning.same_channels = self.rails().same_channels(self.tuning.graph_channels);
        Ok(())
    }

    /// NCCL_CROSS_NIC (`nccl_cross_nic`) as the rails restate it. NCCL's search (search.cc
    /// `ncclTopoCompute`, v2.18.5-1 to v2.30.7-1) lets a ring channel leave by another NIC than it
    /// entered by only where a node has more than one network device: at 2 (the default) after the
    /// same-NIC search at a speed found nothing, which `rails` restates (`Rails::cross`); at 1
    /// from the first search (`rails::Cross`, `cross_nic_one`); at 0 never, the same graph
    /// wherever the rails do not cross, and refused in one line where they do.
    fn check_cross_nic(&self, c: &constants::Constants) -> Result<()> {
        if c.cross_nic == 0 && self.rails_under(c).cross {
            let why = "keeps each ring channel on the NIC it entered by, which on these nodes some channel leaves from across a CPU link (search.cc crossNic 0); contend restates the graph that leaves by another NIC there; give 1 or 2 (NCCL's default)";
            return Err(Error::input("nccl_cross_nic", "0", why));
        }
        Ok(())
    }

    /// Each node's GPUs, in the communicator's order (the form the graph builders take).
    fn nodes_gpus(&self) -> Vec<Vec<usize>> {
        self.devices.chunks(self.ppn).map(<[usize]>::to_vec).collect()
    }

    /// The rails under NCCL_CROSS_NIC=1 for release `c.version`, with PXN and without (by
    /// NCCL_PXN_DISABLE): every channel from the first search leaves by its leaving GPU's nearest
    /// NIC with room, paired in 2.20.3 to 2.22.3 (`rails::Cross`).
    fn cross_nic_one(&self, c: &constants::Constants) -> [rails::Rails; 2] {
        let router = Router::new(&self.m);
        let nodes_gpus = self.nodes_gpus();
        let cross = if c.version.cross_nic_one_pairs() { rails::Cross::Paired } else { rails::Cross::Free };
        let channels = run_channels(self.channels_given, self.channel_bounds, c.version, self.topo.cc, self.nodes, self.ring_graph);
        let rule = |pxn: bool| rails::Rule { pxn, p2c: c.version.p2c(), cross };
        [true, false].map(|pxn| rails::build(&self.m, &router, &self.topo, &nodes_gpus, &self.graph.rings, channels, self.ring_graph.0, rule(pxn)))
    }

    /// The channels a tree all-reduce's later channels copy (`lower::tree_mirrored`).
    fn tree_base(&self) -> usize {
        (2 * self.tuning.tree_channels).min(self.tuning.version.max_channels()).min(self.channels)
    }

    /// NCCL's P2P level: as given (NCCL_P2P_LEVEL, `nccl_p2p_level`), else its default under the
    /// release that runs, where the CPU is known (`cpu::p2p_level`).
    pub fn p2p_level(&self) -> Option<topo::PathType> {
        self.constants.p2p_level.or_else(|| cpu::p2p_level(self.constants.version, self.cpu, self.ppn))
    }

    /// The pairs NCCL connects through host memory at its P2P level (`p2p_level`).
    pub fn shm(&self) -> &std::sync::Arc<std::collections::BTreeMap<(usize, usize), usize>> {
        self.shm_given.as_ref().unwrap_or(&self.shm[usize::from(!self.constants.version.old())])
    }

    /// The pairs NCCL connects through host memory at P2P level `level` (`shm_steps`): NCCL routes
    /// a pair beyond its level through the receiver's CPU in its graph too (`at_level`), which
    /// leaves a PHB or SYS path its type and bandwidth (the same host bridge or socket link either
    /// way), so the graph is built again only for a level below NVLink, NVB, PIX or PXB pairs
    /// (`set_constants`).
    fn shm_at(&self, level: topo::PathType) -> Result<Steps> {
        let nodes_gpus = self.nodes_gpus();
        shm_steps(&self.m, &Router::new(&self.m), &self.topo, &nodes_gpus, &self.nvb, Some(level))
    }

    /// The channels' rings and NICs as the constants run them: by the release's path types
    /// (`Version::p2c`), with PXN unless NCCL_PXN_DISABLE=1.
    pub fn rails(&self) -> &rails::Rails {
        match &self.rails_given {
            Some(r) => &r[usize::from(self.constants.pxn_disable)],
            None => self.rails_under(&self.constants),
        }
    }

    /// The rails constants `c` would run (`rails`), before they are set.
    fn rails_under(&self, c: &constants::Constants) -> &rails::Rails {
        &self.rails[usize::from(c.version.p2c())][usize::from(c.pxn_disable)]
    }

    /// NCCL's pick for `bytes` among the allowed algorithms and protocols, NCCL_PROTO unset (LL128
    /// where NCCL's gates allow it; `protos` only narrows): `choose_listed` for a list given.
    pub fn choose(&self, coll: Coll, bytes: u64, algos: &[Algo], protos: &[Proto]) -> Option<(Algo, Proto, f64)> {
        let allowed: Vec<(Algo, Proto)> = algos.iter().flat_map(|&a| protos.iter().map(move |&p| (a, p))).collect();
        tuning::choose(&self.tuning, coll, bytes, &allowed)
    }

    /// NCCL's model under the NCCL_PROTO list `protos` (None: unset). A list sets every protocol's
    /// `protoEnable` to 0 or 1 (tuning.cc `parseList`: named 1 and the rest 0, or after `^` named 0
    /// and the rest 1), and tuning.cc applies LL128's gates (path, GPU list, compute capability)
    /// only at its default 2 (`if (pEnable == 2 && p == NCCL_PROTO_LL128)`, v2.18.5-1 l.282,
    /// v2.21.5-1 l.305, v2.24.3-1 l.420, v2.30.7-1 l.518): a list that leaves LL128 on runs it
    /// wherever NCCL's table has it (`tuning::Comm::ll128_listed`).
    pub fn tuning_under(&self, protos: Option<&[Proto]>) -> std::borrow::Cow<'_, tuning::Comm> {
        match protos {
            Some(list) if list.contains(&Proto::Ll128) => std::borrow::Cow::Owned(tuning::Comm { ll128_listed: true, ..self.tuning.clone() }),
            _ => std::borrow::Cow::Borrowed(&self.tuning),
        }
    }

    /// NCCL's pick for `bytes` among `algos` under the NCCL_PROTO list `protos` (None: unset,
    /// every protocol NCCL's gates allow; `tuning_under`).
    pub fn choose_listed(&self, coll: Coll, bytes: u64, algos: &[Algo], protos: Option<&[Proto]>) -> Option<(Algo, Proto, f64)> {
        let list = protos.unwrap_or(&PROTOS);
        let allowed: Vec<(Algo, Proto)> = algos.iter().flat_map(|&a| list.iter().map(move |&p| (a, p))).collect();
        tuning::choose(&self.tuning_under(protos), coll, bytes, &allowed)
    }

    /// NCCL's pick with its tuner plugin (`tuner`): the first rule that applies and whose choice
    /// NCCL may run here (among `algos` x `protos`, and one its model allows) picks, with its
    /// channels; else NCCL's model (`choose_listed`). `protos`: the NCCL_PROTO list, None where
    /// unset. None: no choice is left.
    pub fn pick(&self, coll: Coll, bytes: u64, algos: &[Algo], protos: Option<&[Proto]>) -> Result<Option<Pick>> {
        let model = self.tuning_under(protos);
        if let Some(t) = &self.tuner {
            let list = protos.unwrap_or(&PROTOS);
            let enabled = |a: Algo, p: Proto| algos.contains(&a) && list.contains(&p) && tuning::time_us(&model, coll, a, p, bytes).is_some();
            if let Some(hit) = t.apply(coll, bytes, self.nodes, self.devices.len(), &enabled)? {
                let model_us = tuning::time_us(&model, coll, hit.algo, hit.proto, bytes).unwrap_or(f64::NAN);
                return self.nvls_tree_runs(self.pat_runs(Some(Pick {
                    algo: hit.algo,
                    proto: hit.proto,
                    model_us,
                    channels: hit.rule.channels,
                    tuner_line: Some(hit.rule.line),
                }))?);
            }
        }
        let pick =
            self.choose_listed(coll, bytes, algos, protos).map(|(algo, proto, model_us)| Pick { algo, proto, model_us, channels: None, tuner_line: None });
        self.nvls_tree_runs(self.pat_runs(pick)?)
    }

    /// Before 2.22.3 NCCL's NVLS search heads a GPU local to two NICs twice (no duplicate-head
    /// check, `nvls_heads::search`), and `connectNvls` (connect.cc) gives that GPU the last of its
    /// parts: the others have no head to reduce them. A call NCCL picks NVLS-tree for there is
    /// refused (its model, which counts the channels, still chooses).
    fn nvls_tree_runs(&self, pick: Option<Pick>) -> Result<Option<Pick>> {
        let heads = self.nvls_graphs[self.tuning.version as usize].as_ref().map_or(&[][..], |g| &g.heads[..]);
        let twice = heads.iter().enumerate().find(|(i, h)| heads[..*i].contains(h)).map(|x| *x.1);
        match (pick, twice) {
            (Some(p), Some(g)) if p.algo == Algo::NvlsTree => Err(Error::input(
                "nccl_version",
                self.tuning.version.name(),
                format!(
                    "NCCL {}'s NVLS search heads GPU{g} of each node twice (it is local to two NICs; the duplicate-head check came in 2.22.3), so a part of each NVLS-tree loop has no head to reduce it (connect.cc connectNvls), and NCCL picks NVLS-tree for this call; give 2.22 or later, or an NCCL_ALGO without NVLSTree",
                    self.tuning.version.tag()
                ),
            )),
            (p, _) => Ok(p),
        }
    }

    /// The algorithms NCCL may pick for `coll` from NCCL_ALGO's list `named` (None: unset, every
    /// one the collective has) under the release that runs, the NCCL_PROTO list they run under
    /// (`protos`, None: unset; `Comm::pick`), and a note where the release changes them. Before
    /// 2.24.3 (graph/tuning.cc `ncclTopoTuneModel`, v2.18.5-1 to v2.23.4-1, read at each tag): a
    /// name the release lacks is skipped (PAT before 2.23.4: `parseList` matches only its
    /// `ncclAlgoStr`); a list that leaves Ring, Tree, NVLS on one node and NVLS-tree across nodes
    /// all off gets Ring and Tree ("If user has hard set NCCL_ALGO=COLLNET, ignore it"; no CollNet
    /// here). A collective the lists leave nothing runs Ring from 2.19.3 to 2.23.4 ("at least set
    /// ring algo available": `bandwidths[c][RING][p] = ringbdw[c][p]`, `Version::ring_restored`):
    /// 2.19.3 to 2.21.5 with every protocol, LL128 past its gates (`ringbdw` is taken before the
    /// lists and gates zero anything), 2.22.3 and 2.23.4 with the protocols NCCL_PROTO and LL128's
    /// gates leave (`if (a == NCCL_ALGO_RING && pEnable == 0) comm->ringbdw[c][p] = 0`). 2.18.5
    /// has no such line but never takes Ring off a collective other than all-reduce (v2.18.5-1
    /// tuning.cc:296, the protocols NCCL_PROTO leaves), so only an all-reduce can be left with
    /// nothing there; 2.24.3 on has neither: where the lists leave nothing NCCL stops (enqueue.cc
    /// "no algorithm/protocol available"; refused by the caller, `none_left`).
    pub fn nccl_algos(&self, coll: Coll, named: Option<Vec<Algo>>, protos: Option<Vec<Proto>>) -> (Vec<Algo>, Option<Vec<Proto>>, Option<String>) {
        let own = |l: &[Algo]| -> Vec<Algo> { l.iter().copied().filter(|a| coll.algos().contains(a)).collect() };
        let Some(mut list) = named else { return (coll.algos().to_vec(), protos, None) };
        let v = self.tuning.version;
        if v >= versions::Version::V2_24 {
            return (own(&list), protos, None);
        }
        let mut why: Vec<String> = Vec::new();
        if v < versions::Version::V2_23 && list.contains(&Algo::Pat) {
            list.retain(|&a| a != Algo::Pat);
            why.push("it has no PAT and skips the name".into());
        }
        let on = |a: Algo| list.contains(&a);
        if !(on(Algo::Ring) || on(Algo::Tree) || (self.nodes == 1 && on(Algo::Nvls)) || (self.nodes > 1 && on(Algo::NvlsTree))) {
            list.extend([Algo::Ring, Algo::Tree]);
            why.push(format!("with no Ring, Tree or {} left it turns Ring and Tree on", if self.nodes == 1 { "NVLS" } else { "NVLS-tree" }));
        }
        // 2.18.5 never takes Ring off another collective than all-reduce ("Never disable ring for
        // non-allreduce operations. That allows to run real apps with NCCL_ALGO=TREE."): it keeps
        // its table's Ring under the protocols NCCL_PROTO and LL128's gates leave.
        if v < versions::Version::V2_19 && coll != Coll::AllReduce && coll.algos().contains(&Algo::Ring) && !list.contains(&Algo::Ring) {
            list.push(Algo::Ring);
            why.push(format!("it never turns Ring off for {} (\"Never disable ring for non-allreduce operations\")", coll.name()));
        }
        let mut algos = own(&list);
        let mut protos = protos;
        let restores = v.ring_restored().filter(|_| self.choose_listed(coll, 1 << 20, &algos, protos.as_deref()).is_none());
        if let Some(how) = restores {
            let (restored, with) = match how {
                versions::RingRestored::Every => (Some(PROTOS.to_vec()), "every protocol, LL128 included"),
                versions::RingRestored::Enabled => (protos.clone(), "the protocols NCCL_PROTO leaves"),
            };
            if self.choose_listed(coll, 1 << 20, &[Algo::Ring], restored.as_deref()).is_some() {
                algos = vec![Algo::Ring];
                why.push(format!("with none of them left for {} it runs Ring, with {with}", coll.name()));
                protos = restored;
            }
        }
        // Named as NCCL's table has them: PAT only where it is in it (one GPU a node, 2.23.4).
        let model = self.tuning_under(protos.as_deref());
        let list = protos.clone().unwrap_or_else(|| PROTOS.to_vec());
        let in_table = |a: Algo| list.iter().any(|&p| tuning::model(&model, coll, a, p).is_some());
        let names: Vec<&str> = algos.iter().copied().filter(|&a| in_table(a)).map(|a| a.name()).collect();
        let note = (!why.is_empty())
            .then(|| format!("NCCL_ALGO under NCCL {}: {} (tuning.cc ncclTopoTuneModel); NCCL picks from {}", v.tag(), why.join("; "), names.join(", ")));
        (algos, protos, note)
    }

    /// NCCL_PAT_ENABLE=1 puts PAT in NCCL's table of all-gather and reduce-scatter whatever the GPUs
    /// per node (tuning.cc `ncclPatEnable`, v2.23.4-1 to v2.30.7-1), but NCCL connects PAT's peers
    /// only where every node has one GPU (init.cc: `if (comm->maxLocalRanks == 1)
    /// ncclTransportPatConnect`): a call NCCL picks PAT for elsewhere would run on peers never
    /// connected, and is refused; a call whose pick PAT does not win runs as NCCL picks it.
    fn pat_runs(&self, pick: Option<Pick>) -> Result<Option<Pick>> {
        match pick {
            Some(p) if p.algo == Algo::Pat && !self.pat_connected() => Err(Error::input(
                "nccl_pat_enable",
                "1",
                format!(
                    "puts PAT in NCCL's table on {} GPUs per node and NCCL picks it for this call, but NCCL connects PAT peers only at one GPU per node (init.cc), so its PAT kernel would find no connection; give 0, or 2 (NCCL's default)",
                    self.ppn
                ),
            )),
            p => Ok(p),
        }
    }

    /// Whether NCCL connects PAT's peers: one GPU per node (init.cc `maxLocalRanks == 1`).
    pub fn pat_connected(&self) -> bool {
        self.ppn == 1
    }

    /// Connection buffers per protocol: NCCL's, Simple's as NCCL_BUFFSIZE says.
    fn buffers(&self) -> [u64; 3] {
        let mut b = tuning::BUFF_BYTES;
        b[Proto::Simple as usize] = self.constants.buffsize;
        b
    }

    /// NCCL's p2p channels: the communicator's channels, a power of two.
    pub fn p2p_total(&self) -> usize {
        self.channels.next_power_of_two().min(self.tuning.version.max_channels())
    }

    /// NCCL's channels per peer under the release that runs (`p2p::per_peer`): the least of the
    /// node's peers and, across nodes, the network peers'.
    pub fn p2p_per_peer(&self) -> usize {
        let v = self.tuning.version;
        let total = self.p2p_total();
        let ranks = self.devices.len();
        // A node of one GPU has no local peer: start from the p2p channels, as NCCL does.
        let mut least = if self.ppn > 1 { self.p2p_local[usize::from(v.nvb_channels_as_nvlink())] } else { total };
        if self.nodes > 1 {
            least = least.min(p2p::net_peer(v, self.p2p_net.0, self.p2p_net.1, ranks, total));
        }
        p2p::per_peer(v, least, self.nodes, ranks, total)
    }

    /// NCCL's p2p chunk for this communicator under the release that runs (`p2p::chunk`).
    pub fn p2p_chunk(&self) -> u64 {
        let nvlink = if self.tuning.version.nvl_chunk_needs_every_pair() { self.all_nvlink } else { self.any_nvlink };
        p2p::chunk(self.nodes, nvlink, self.constants.buffsize)
    }

    /// The protocol a send/receive of `bytes` to one peer runs on the channels its size gets:
    /// what the lowering runs (`lower::pairs_p2p`) and what `nccl-tests` prints.
    pub fn p2p_proto(&self, bytes: u64) -> Proto {
        p2p::proto(bytes, p2p::op_channels(bytes, &self.p2p_split()))
    }

    /// How the release that runs splits one send/receive over channels (`p2p::op_split`).
    pub fn p2p_split(&self) -> p2p::OpSplit {
        p2p::op_split(self.tuning.version, self.p2p_per_peer(), self.p2p_total(), self.devices.len(), self.nodes, self.p2p_chunk())
    }

    /// The call as the executor runs it: `channels` channels (NCCL trims them for small calls).
    pub fn call(&self, coll: Coll, algo: Algo, proto: Proto, bytes: u64, root: usize) -> lower::Call {
        self.call_with(coll, algo, proto, bytes, root, None)
    }

    /// Whether nccl-tests' `coll` at 0 elements still launches NCCL's kernel: send/receive is
    /// grouped ncclSend/ncclRecv (nccl-tests src/sendrecv.cu), and so is all-to-all before NCCL
    /// 2.28 (`Version::alltoall_collective`), and NCCL runs a p2p operation of 0 bytes; a
    /// collective of 0 elements it discards.
    pub fn empty_p2p(&self, coll: Coll) -> bool {
        match coll {
            Coll::SendRecv => true,
            Coll::AllToAll => !self.tuning.version.alltoall_collective(),
            _ => false,
        }
    }

    /// The call as `call`, on `channels` where a tuner rule sets them: NCCL takes the plugin's
    /// count in place of its trimmed one, at most the channels the communicator has
    /// (enqueue.cc `ncclGetAlgoInfo`, then the plan's per-kind maximum).
    pub fn call_with(&self, coll: Coll, algo: Algo, proto: Proto, bytes: u64, root: usize, channels: Option<usize>) -> lower::Call {
        // Send/receive runs ring Simple's steps and latencies, whatever it is labelled.
        let algo = if matches!(coll, Coll::AllToAll | Coll::SendRecv) { Algo::Ring } else { algo };
        if matches!(algo, Algo::Nvls | Algo::NvlsTree) {
            let mut call = self.nvls_call(coll, algo, bytes);
            if let Some(c) = channels.filter(|&c| c < call.rings.len()) {
                call.rings.truncate(c);
                call.exits.truncate(c);
                call.ids.truncate(c);
            }
            return call;
        }
        if algo == Algo::Pat {
            return self.pat_call(coll, bytes, channels);
        }
        let nc = match channels {
            Some(c) => c.min(self.channels),
            None => tuning::channels_for(&self.tuning, algo, proto, bytes, self.channels),
        };
        // Send/receive runs ring Simple's steps.
        let (a, p) = match coll {
            Coll::AllToAll | Coll::SendRecv => (Algo::Ring as usize, Proto::Simple as usize),
            _ => (algo as usize, proto as usize),
        };
        let intra = if self.tuning.nvlink { tuning::Hw::Nvlink } else { tuning::Hw::Pci };
        let base = tuning::BASE_LATENCY_US[a][p];
        let mut step = tuning::HW_LATENCY_US[intra as usize][a][p];
        // NCCL's ring model charges a step inside a node at least the network's per-step overhead
        // when the ring spans nodes (`tuning::net_overhead`: by the host's CPU vendor).
        if algo == Algo::Ring && !matches!(coll, Coll::AllToAll | Coll::SendRecv) {
            step = step.max(tuning::net_overhead(&self.tuning, proto));
        }
        // One rank per node: NCCL's model takes the tree's network latency for every algorithm.
        let net_row = if self.ppn == 1 { Algo::Tree as usize } else { a };
        let mut step_net = tuning::HW_LATENCY_US[tuning::Hw::Net as usize][net_row][p];
        // A fitted per-step latency replaces NCCL's for the communicator's path type (the
        // network's where it spans nodes).
        let fitted = match coll {
            Coll::AllToAll | Coll::SendRecv => self.constants.step[Proto::Simple as usize],
            _ => self.constants.step[proto as usize],
        };
        if let Some(s) = fitted {
            if self.nodes > 1 {
                step_net = s * 1e6;
            } else {
                step = s * 1e6;
            }
        }
        lower::Call {
            coll,
            algo,
            proto,
            bytes,
            devices: self.devices.clone(),
            // A tree channel's chain on a node is its graph channel's ring from the GPU its NIC
            // enters by, which sends and receives between nodes through that NIC (`Rails::tree_exits`).
            rings: self.rails().rings[..nc].to_vec(),
            exits: if algo == Algo::Tree { self.rails().tree_exits().take(nc).collect() } else { self.rails().exits.iter().take(nc).cloned().collect() },
            root,
            base: base * 1e-6 + self.call_net(),
            step: step * 1e-6,
            step_net: step_net * 1e-6,
            handshake: self.simple_handshake(),
            ppn: self.ppn,
            p2p_split: self.p2p_split(),
            p2p_chunk: self.p2p_chunk(),
            efficiency: self.constants.efficiency,
            buff: self.buffers(),
            ids: if algo == Algo::Tree {
                (0..nc).map(|k| usize::from(lower::tree_mirrored(k, self.tuning.tree_channels, self.tree_base()))).collect()
            } else {
                (0..nc).collect()
            },
            copies: 1,
            switches: Vec::new(),
            nvls_efficiency: 1.0,
            nvls_tree_first: 0,
            nvls_heads: Vec::new(),
            tree_depth_chunk: self.tuning.version.tree_simple_depth_chunk(),
            ring_grain: tuning::ring_grain(&self.tuning, coll, algo, proto, bytes, nc),
            empty_p2p: self.empty_p2p(coll),
            pxn: if self.constants.pxn_disable { pxn::Pxn::default() } else { self.pxn.clone() },
            // A p2p channel's rate is the NVLink A100 table's (docs/validation.md, round 13): no PCIe
            // send/receive measurement says a PCIe pair's channels are capped, so there its links bind.
            // LL's ceiling is the call's (`tuning::ll_channel_rate`: `llMaxBws` over its channels).
            rate: match proto {
                Proto::Ll if !matches!(coll, Coll::AllToAll | Coll::SendRecv) => tuning::ll_channel_rate(&self.tuning, coll, algo, nc),
                _ => tuning::channel_rate(self.topo.cc, self.nodes, coll, algo, proto)
                    .filter(|_| self.all_nvlink || !matches!(coll, Coll::AllToAll | Coll::SendRecv)),
            }
            .map(|gbs| gbs * 1e9),
            flush: self.flush,
            net_stage: self.net_stage.clone(),
            shm: self.shm().clone(),
            nvb: self.nvb.clone(),
        }
    }

    /// An NVLS or NVLS-tree call: NCCL's NVLS channels (never trimmed for small calls), each
    /// moving an equal share through the switches (`lower::nvls`, `lower::nvls_tree`); its
    /// latency is NCCL's NVLS hardware latency, paid once by the first loop (NVLS-tree's network
    /// steps pay NET's on top, `lower::nvls_tree`).
    /// What a call spanning nodes takes beyond NCCL's model (`nccl_call_net`, empirical: two
    /// RoCE tables, docs/validation.md), paid once with the base latency; none on one node.
    fn call_net(&self) -> f64 {
        if self.nodes > 1 {
            self.constants.call_net
        } else {
            0.0
        }
    }

    /// A Simple slice's handshake on NVLink (`lower::Call::handshake`): the fitted Simple step
    /// where one is given, as it replaces a ring slice's, else NCCL's NVLink ring Simple step.
    fn simple_handshake(&self) -> f64 {
        self.constants.step[Proto::Simple as usize].unwrap_or_else(tuning::nvlink_simple_step)
    }

    /// A PAT call (`lower::pat`): on every channel of the communicator (NCCL never sets PAT's
    /// `maxThreads`, so enqueue.cc's trimming by bytes a thread never drops one, v2.23.4-1 to
    /// v2.30.7-1), or as many as a tuner rule gives; each channel's network steps leave by its tree
    /// channel's NIC (NCCL connects PAT's peers on the tree graph, transport/generic.cc). Its
    /// latencies are NCCL's PAT model's (`tuning::PAT_*`): the base and 2.8 µs a rank (`step`)
    /// once per call, the tree's network latency / 3.5 a message (`step_net`; a fitted
    /// Simple step replaces the tree's network latency, as it replaces a ring's).
    fn pat_call(&self, coll: Coll, bytes: u64, channels: Option<usize>) -> lower::Call {
        let nc = channels.map_or(self.channels, |c| c.min(self.channels));
        // enqueue.cc's cells: a small call runs on fewer channels (`lower::pat::cell_channels`).
        let nc = lower::pat::cell_channels(bytes, self.devices.len(), nc, self.tuning.version.min_traffic_per_channel());
        let net = self.constants.step[Proto::Simple as usize].map_or(self.tuning.version.tree_simple_hw()[tuning::Hw::Net as usize], |s| s * 1e6);
        let identity: Vec<usize> = (0..self.devices.len()).collect();
        lower::Call {
            coll,
            algo: Algo::Pat,
            proto: Proto::Simple,
            bytes,
            devices: self.devices.clone(),
            rings: vec![identity; nc],
            exits: self.rails().tree_exits().take(nc).collect(),
            root: 0,
            base: tuning::PAT_BASE_US * 1e-6 + self.call_net(),
            step: tuning::PAT_RANK_US * 1e-6,
            step_net: net / tuning::PAT_NET_DIVISOR * 1e-6,
            handshake: self.simple_handshake(),
            ppn: self.ppn,
            p2p_split: self.p2p_split(),
            p2p_chunk: self.p2p_chunk(),
            efficiency: self.constants.efficiency,
            buff: self.buffers(),
            ids: vec![0; nc],
            copies: 1,
            switches: Vec::new(),
            nvls_efficiency: 1.0,
            nvls_tree_first: 0,
            nvls_heads: Vec::new(),
            tree_depth_chunk: false,
            empty_p2p: false,
            ring_grain: 0,
            // One GPU per node: no other GPU of the node to relay through.
            pxn: pxn::Pxn::default(),
            rate: None,
            flush: self.flush,
            net_stage: self.net_stage.clone(),
            shm: self.shm().clone(),
            nvb: self.nvb.clone(),
        }
    }

    fn nvls_call(&self, coll: Coll, algo: Algo, bytes: u64) -> lower::Call {
        // The CTA pair bounds NCCL's NVLS count (transport/nvls.cc), within the release's MAXCHANNELS
        // (init.cc caps minCTAs and maxCTAs to it); NCCL_MIN/MAX_NCHANNELS do not.
        let nc = self.channel_bounds.nvls(self.tuning.version.nvls_channels(self.topo.cc, self.nodes, self.nvls_net)).min(self.tuning.version.max_channels());
        let (chunk, tree_max) = self.tuning.version.nvls_chunks(self.topo.cc, self.nodes, self.nvls_net);
        let (a, p) = (algo as usize, Proto::Simple as usize);
        let g = match self.topo.cc {
            c if c >= 100 => 3,
            c if c >= 90 => 2,
            _ => 1,
        };
        let identity: Vec<usize> = (0..self.devices.len()).collect();
        lower::Call {
            coll,
            algo,
            proto: Proto::Simple,
            bytes,
            devices: self.devices.clone(),
            rings: vec![identity; nc],
            exits: Vec::new(),
            root: 0,
            // NVLS-tree: each network step of the first loop pays NET's NVLS-tree latency
            // (`step_net`); the call's base, `nccl_call_net` included, is paid once, by the
            // first network step of each chain (the leaves' sends up), as rings and trees pay it.
            base: tuning::BASE_LATENCY_US[a][p] * 1e-6 + self.call_net(),
            step: tuning::HW_LATENCY_US[tuning::Hw::Nvlink as usize][a][p] * 1e-6,
            step_net: tuning::HW_LATENCY_US[if algo == Algo::NvlsTree { tuning::Hw::Net } else { tuning::Hw::Nvlink } as usize][a][p] * 1e-6,
            handshake: self.simple_handshake(),
            ppn: self.ppn,
            p2p_split: p2p::op_split(self.tuning.version, 1, 1, self.devices.len(), self.nodes, self.p2p_chunk()),
            p2p_chunk: self.p2p_chunk(),
            efficiency: self.constants.efficiency,
            buff: self.buffers(),
            // Every NVLS channel is alike (one parity, so that they merge); NVLS-tree's odd channels
            // mirror the tree between nodes, as the double binary tree does.
            ids: if algo == Algo::NvlsTree { (0..nc).collect() } else { vec![0; nc] },
            copies: 1,
            switches: self.switches.clone(),
            nvls_efficiency: self.constants.nvls.unwrap_or(tuning::NVLS_EFFICIENCY[g]),
            // NCCL_NVLSTREE_MAX_CHUNKSIZE given, else NCCL's tuning's (transport/nvls.cc
            // `ncclNvlsTuning`: the variable, then the tuning, then the fallback).
            nvls_heads: self.nvls_graphs[self.tuning.version as usize].as_ref().map_or_else(Vec::new, |g| g.heads.clone()),
            nvls_tree_first: tuning::nvls_tree_first(
                self.constants.version,
                self.constants.buffsize / tuning::NCCL_STEPS,
                chunk,
                self.constants.nvlstree_max.or(tree_max),
                self.nodes,
            ),
            tree_depth_chunk: false,
            empty_p2p: false,
            ring_grain: 0,
            pxn: pxn::Pxn::default(),
            rate: None,
            // NVLS runs on Hopper and later, which need no flush.
            flush: 0.0,
            // NVLS's GPUs reach the switch; no step goes through host memory. Its heads' steps
            // between nodes are taken as GDR (every NVLS preset has its NICs on the GPUs' switches).
            shm: Default::default(),
            net_stage: Default::default(),
            nvb: Default::default(),
        }
    }
}

/// Per pair of GPUs of a node that NCCL connects through host memory, the host memory of NCCL's SHM
/// connection between them: a buffer in host memory that the sender's kernel stores into and the
/// receiver's kernel loads from, allocated on the receiver's side by default (NCCL 2.30.7
/// src/transport/shm.cc: NCCL_SHM_LOCALITY 2, the receiver's proxy allocates it), so the
/// receiver's nearest host memory (round 21; before, the sender's, where CUDA stages a copy).
/// NCCL tries its P2P transport first (transport.cc), which connects a pair whose path type is at
/// most the P2P level (`level`, `cpu::p2p_level`; None: no level known, every pair with a peer
/// path) and CUDA allows peer access between (the router's peer path; graph/paths.cc
/// `ncclTopoCheckP2p` asks NVML); the other pairs take SHM. Every node is alike, so the pairs are
/// looked for on the first node only where it has none. CUDA's peer access turned off (maxmin's
/// `p2p=off`) is not read here: its steps stay one staged transfer each. A pair joined through an
/// intermediate GPU (`nvb`) is P2P: a level below NVB has diverted it through a CPU (`cpu`).
fn shm_steps(m: &Machine, router: &Router, topo: &topo::Topo, nodes_gpus: &[Vec<usize>], nvb: &Steps, level: Option<topo::PathType>) -> Result<Steps> {
    let mut out = std::collections::BTreeMap::new();
    for (k, gpus) in nodes_gpus.iter().enumerate() {
        for (i, &a) in gpus.iter().enumerate() {
            for (j, &b) in gpus.iter().enumerate().filter(|&(_, &b)| b != a) {
                // A pair diverted through a CPU (`Topo::through_cpus`) is SHM whatever its path type.
                let beyond = topo.paths[i][j].as_ref().is_some_and(|p| p.cpu.is_some() || level.is_some_and(|l| p.kind > l));
                // Planned only where the pair is not already decided (the plan is the costly part).
                let no_peer = || router.plan(a, b, Some(crate::workload::Mechanism::P2p), &[], true).is_err();
                let staged = !nvb.contains_key(&(a, b)) && (beyond || no_peer());
                match router.nearest_memory(b).filter(|_| staged) {
                    Some(mem) => {
                        out.insert((a, b), mem);
                    }
                    // No peer path and no host memory: NCCL's SHM transport has no buffer to use.
                    None if staged && no_peer() => return Err(no_shm_memory(m, a, b)),
                    None => {}
                }
            }
        }
        if k == 0 && out.is_empty() {
            break;
        }
    }
    Ok(out)
}

/// The refusal of a pair NCCL connects through host memory (its SHM transport, transport/shm.cc:
/// no peer path between the GPUs) on a machine file that draws no host memory they reach.
fn no_shm_memory(m: &Machine, a: usize, b: usize) -> Error {
    let (x, y) = (&m.devices[a].name, &m.devices[b].name);
    Error::input(
        &m.origin,
        "devices",
        format!(
            "{x} and {y} have no peer path, so NCCL connects them through host memory (its SHM transport), and the machine file draws no host_memory device they reach; add one (kind: host_memory) with a memory link to their CPU's root complex"
        ),
    )
}

/// What NCCL's GDR rules make of a communicator: the GPUs whose network steps go through host
/// memory (`lower::NetStages`), the GDR flush (`Comm::flush`) and whether LL128 may cross nodes
/// (`tuning::Comm::ll128_net`); and the GPUs it would stage that draw no host memory.
#[derive(Clone, Debug)]
struct Gdr {
    stage: std::sync::Arc<lower::NetStages>,
    flush: f64,
    ll128: bool,
    unstaged: Vec<usize>,
}

impl Gdr {
    /// The rules on the GPUs `devices` (`ppn` a node, nodes alike: the first node's GPUs
    /// decide), at NCCL_NET_GDR_LEVEL `level` and NCCL_NET_GDR_READ `read`, under a release
    /// that types NVLink-C2C paths P2C where `c2c` (`Version::gdr_c2c`: 2.27 and later).
    ///
    /// `ncclTopoCheckGdr` (graph/paths.cc, v2.21.5-1 and v2.30.7-1) allows GDR where the GPU's
    /// path to its NIC is at most the level (`topo::gdr`), for receives always and for sends
    /// ("read") where NCCL_NET_GDR_READ is positive or, unset (negative), where the GPU is of
    /// compute capability 8.0 or later, is the node's only GPU, or has an NVLink (PATH_NVL) to
    /// another GPU of the node ("Disable GDR Reads pre-Ampere when we have other PCI flows"); 0
    /// turns it off. The NIC's and the GPU's own support (`gdrSupport`: the net plugin's pointer
    /// support, CUDA's cudaDevAttrGPUDirectRDMASupported) is not in the machine file and is taken
    /// as given. A GPU without GDR one way stages that way through its nearest host memory; a
    /// machine file with none keeps its steps GPU to GPU (`unstaged`, the first node's such GPUs,
    /// which `contend nccl-tests` names in a caveat: refusing would refuse the presets, which
    /// draw none).
    ///
    /// The flush (`ncclTopoNeedFlush`, asked only for a receive by GDR: transport/net.cc
    /// `recvSetup`) is the NICs' latency where the ranks span nodes, the GPUs are before compute
    /// capability 9.0 and some GPU of the first node receives by GDR (each receive through host
    /// memory drops it: `lower::Call::flush_of`). LL128 crosses nodes where
    /// every GPU of the first node receives by GDR (else NCCL routes its NIC path through its CPU,
    /// PHB: `ncclTopoComputePaths`) and reaches a NIC within PXB, or PXN from compute capability
    /// 9.0 (which takes in P2C from 2.27; before, an NVLink-C2C path is PHB, and the direct paths
    /// contend types are never PXN): tuning.cc `typeInter`.
    #[allow(clippy::too_many_arguments)]
    fn of(
        m: &Machine,
        router: &Router,
        topo: &topo::Topo,
        devices: &[usize],
        ppn: usize,
        nics: &[usize],
        level: topo::PathType,
        (read, c2c): (Option<bool>, bool),
    ) -> Gdr {
        let (local, nodes) = (&devices[..ppn], devices.len() / ppn.max(1));
        let ways: Vec<[bool; 2]> = local
            .iter()
            .enumerate()
            .map(|(i, &g)| {
                let near = topo::gdr(m, router, topo.cc, g, nics, level);
                let nvlink = ppn == 1 || (0..ppn).any(|j| j != i && topo.paths[i][j].as_ref().is_some_and(|p| p.kind == topo::PathType::Nvl));
                [near && read.unwrap_or(topo.cc >= 80 || nvlink), near]
            })
            .collect();
        let mut stage = lower::NetStages::new();
        let mut unstaged = Vec::new();
        if nodes > 1 && !ways.iter().all(|&[send, recv]| send && recv) {
            for (r, &g) in devices.iter().enumerate() {
                let [send, recv] = ways[r % ppn];
                if send && recv {
                    continue;
                }
                match router.nearest_memory(g) {
                    Some(mem) => _ = stage.insert(g, [(!send).then_some(mem), (!recv).then_some(mem)]),
                    None if r < ppn => unstaged.push(g),
                    None => {}
                }
            }
        }
        let receive = ways.iter().all(|w| w[1]);
        // Per GDR receive (`lower::Call::flush_of` drops it where a GPU receives through host memory).
        let flush = if nodes > 1 && topo.cc < 90 && ways.iter().any(|w| w[1]) { nics.iter().map(|&d| m.devices[d].latency).fold(0.0, f64::max) } else { 0.0 };
        let near = if topo.cc >= 90 && c2c { topo::PathType::Pxn } else { topo::PathType::Pxb };
        let ll128 = receive && local.iter().all(|&g| topo::gdr(m, router, topo.cc, g, nics, near));
        Gdr { stage: std::sync::Arc::new(stage), flush, ll128, unstaged }
    }
}

/// A device by (sending device, receiving device).
type Steps = std::collections::BTreeMap<(usize, usize), usize>;

/// Per pair of GPUs of a node that NCCL joins through an intermediate GPU (`topo::intermediate`,
/// PATH_NVB), that GPU: the first node's, at the same local ranks on every node (nodes alike).
fn nvb_steps(topo: &topo::Topo, nodes_gpus: &[Vec<usize>]) -> Steps {
    let pos = |d: usize| topo.gpus.iter().position(|&g| g == d);
    let mut out = Steps::new();
    for (i, row) in topo.paths.iter().enumerate() {
        for (j, p) in row.iter().enumerate() {
            if let Some(k) = p.as_ref().and_then(|p| p.via).and_then(pos) {
                for gpus in nodes_gpus {
                    out.insert((gpus[i], gpus[j]), gpus[k]);
                }
            }
        }
    }
    out
}

/// The channels a communicator runs under release `v`: NCCL's count from its ring graph (channels,
/// GB/s a channel; `tuning::coll_channels`), or the count given (NCCL_MIN/MAX_NCHANNELS), which
/// the release's MAXCHANNELS still bounds.
fn run_channels(given: Option<usize>, bounds: environment::Bounds, v: versions::Version, cc: u32, nodes: usize, (graph, bw): (usize, f64)) -> usize {
    // NCCL's own count within the user's bounds, as `ncclTopoPostset` (graph/connect.cc, v2.30.7;
    // the same in every release modelled) ends: the ceiling first, then channels copied up to the
    // floor ("we permit combining max, then min, to only use the first channels, then duplicate them").
    let (floor, ceiling) = bounds.channels();
    let own = || tuning::coll_channels(v, cc, nodes, graph, bw).min(ceiling.max(1)).max(floor);
    given.unwrap_or_else(own).min(v.max_channels())
}

/// NCCL's bandwidth of each network device of a node (of `nics`, those its search lists) as its graph
/// search sees it (topo.cc: a port's speed / 8000 GB/s; a path's bandwidth is its narrowest
/// link's): each port of a NIC (`Device::ports`) its share of the NIC's network link, capped by the
/// NIC's PCIe link and the widest GPU's PCIe link, GB/s. A NIC whose ports a net plugin schedules
/// per message (`Device::stripe_threshold`) is one device of the whole link: the plugin reports
/// its rails' speed summed (aws-ofi-nccl 1.8.1 src/nccl_ofi_rdma.c `get_properties`).
fn nccl_nets(m: &Machine, nics: &[usize], gpus: &[usize], cc: u32) -> Vec<f64> {
    (0..m.devices.len())
        .filter(|d| nics.contains(d))
        .flat_map(|d| {
            let bw = nccl_net(m, d, gpus, cc, false);
            std::iter::repeat_n(bw.unwrap_or(0.0), if bw.is_some() { rails::net_devices(&m.devices[d]) } else { 0 })
        })
        .collect()
}

/// NCCL's bandwidth of each network device of NIC `d` (`nccl_nets`), or of the NIC as one device
/// (`merged`: its ports together); None: it has no network link.
fn nccl_net(m: &Machine, d: usize, gpus: &[usize], cc: u32, merged: bool) -> Option<f64> {
    let pcie = |d: usize| links_at(m, d).filter(|&l| m.links[l].kind == LinkKind::Pcie).map(|l| topo::link_bw(m, l, cc)).fold(0.0, f64::max);
    let gpu = gpus.iter().map(|&g| pcie(g)).fold(0.0, f64::max);
    let ports = if merged { 1 } else { rails::net_devices(&m.devices[d]) };
    let net = links_at(m, d).filter(|&l| m.links[l].kind == LinkKind::Network).map(|l| m.links[l].bandwidth / 1e9).fold(0.0, f64::max) / ports as f64;
    let own = pcie(d);
    let bw = [net, if own > 0.0 { own } else { f64::INFINITY }, if gpu > 0.0 { gpu } else { f64::INFINITY }].into_iter().fold(f64::INFINITY, f64::min);
    (net > 0.0).then_some(bw)
}

/// The links with device `d` at one end.
fn links_at(m: &Machine, d: usize) -> impl Iterator<Item = usize> + '_ {
    (0..m.links.len()).filter(move |&l| m.links[l].a == d || m.links[l].b == d)
}

/// A GPU's own bandwidth as NCCL's search bounds it (`getTotalBw`): its NVLinks together, or its
/// PCIe link where that is more, GB/s.
fn gpu_total_bw(m: &Machine, g: usize, cc: u32) -> f64 {
    let mut nvlink = 0.0;
    let mut pcie: f64 = 0.0;
    for l in links_at(m, g) {
        match m.links[l].kind {
            LinkKind::Nvlink => nvlink += topo::link_bw(m, l, cc),
            LinkKind::Pcie => pcie = pcie.max(topo::link_bw(m, l, cc)),
            _ => {}
        }
    }
    pcie.max(nvlink)
}

/// The NVSwitch every given GPU reaches over one NVLink link, if it reduces and multicasts
/// (`multicast`), with NCCL's bandwidth of the narrowest of those links (GB/s). Several
/// switches (NVLink planes) would split NVLS's traffic between them, which contend does not
/// lower: there NCCL's other algorithms run.
fn nvls_switch(m: &Machine, gpus: &[usize]) -> Option<(usize, f64)> {
    let cc = gpus.iter().map(|&g| topo::compute_capability(m.devices[g].model.as_deref())).min()?;
    let attached = |g: usize| -> Vec<(usize, usize)> {
        (0..m.links.len())
            .filter(|&l| m.links[l].kind == LinkKind::Nvlink)
            .filter_map(|l| {
                let (a, b) = (m.links[l].a, m.links[l].b);
                let other = if a == g {
                    b
                } else if b == g {
                    a
                } else {
                    return None;
                };
                (m.devices[other].kind == DeviceKind::Nvswitch).then_some((other, l))
            })
            .collect()
    };
    let first = attached(gpus[0]);
    let [(sw, _)] = first[..] else { return None };
    if !m.devices[sw].multicast {
        return None;
    }
    let mut bw = f64::INFINITY;
    for &g in gpus {
        let links = attached(g);
        let [(s, l)] = links[..] else { return None };
        if s != sw {
            return None;
        }
        bw = bw.min(topo::link_bw(m, l, cc));
    }
    Some((sw, bw))
}

/// The NICs of the node whose device names start with `prefix`, each with its network link's
/// bandwidth (bytes/s).
pub fn network_nics<'m>(m: &'m Machine, prefix: &'m str) -> impl Iterator<Item = (usize, f64)> + 'm {
    m.links
        .iter()
        .filter(|l| l.kind == LinkKind::Network)
        .flat_map(|l| [l.a, l.b].map(|d| (d, l.bandwidth)))
        .filter(move |&(d, _)| m.devices[d].kind == DeviceKind::Nic && m.devices[d].name.starts_with(prefix))
}

/// The node part of a cluster device's name (`n12.` of `n12.GPU3`); empty on a single machine.
pub fn node_prefix(name: &str) -> &str {
    match name.split_once('.') {
        Some((n, _)) if n.len() > 1 && n.starts_with('n') && n[1..].bytes().all(|b| b.is_ascii_digit()) => &name[..n.len() + 1],
        _ => "",
    }
}

fn names(m: &Machine, ds: &[usize]) -> String {
    ds.iter().map(|&d| m.devices[d].name.as_str()).collect::<Vec<_>>().join(", ")
}

/// One call run on the executor.
pub struct Ran {
    pub seconds: f64,
    pub transfers: usize,
    pub channels: usize,
    /// Per channel: (resource name, its utilisation over the call, its capacity bytes/s) of its
    /// most used resource: bytes carried / (capacity × the call's time).
    pub bottlenecks: Vec<(String, f64, f64)>,
}

/// Refuse models that cannot run NCCL's lowering, in one line.
pub fn check_model(model: &str) -> Result<()> {
    let entry = registry::get(model)?;
    if !entry.any_graph {
        return Err(Error::Unsupported {
            model: entry.name.to_string(),
            reason: "it models concurrent copies on one PCIe tree without latency, and NCCL's channels cross NVLink, switches and sockets with per-step latencies; use --model maxmin (or packet)".into(),
        });
    }
    Ok(())
}

/// Run a call's lowering with the named model; `bottlenecks` names each channel's busiest resource.
/// A call over the transfers contend lowers one call to (`lower::MAX_TRANSFERS`) is refused in one line.
pub fn run(m: &Machine, call: &lower::Call, model: &str, params: &[(String, String)], bottlenecks: bool) -> Result<Ran> {
    match run_within(m, call, model, params, bottlenecks, lower::MAX_TRANSFERS)? {
        Some(ran) => Ok(ran),
        None => {
            // Over the limit by its lower bound, or by its lowering where the bound passed.
            let least = lower::transfers_at_least(call).max(lower::MAX_TRANSFERS);
            Err(Error::input("--nodes", "", too_many(call, least)))
        }
    }
}

/// `run_within` as nccl-tests' timed loop runs the call: `iters` calls back to back, each GPU
/// starting its next call when its own previous one ends (`lower::pair`), timed over the loop.
/// A broadcast or reduce is a chain from or to the root (`lower::pipeline`): one call alone waits
/// for the chain to fill, but in the loop the upstream GPUs run ahead into the next call, so the
/// fill is paid once per loop. The loop's time is the first call's, T1, and a period P = T2 - T1
/// for each of the others, T2 the time of two calls run back to back (the same engine, the
/// same model): (T1 + (iters - 1) P) / iters per call.
///
/// The other collectives are run alone: every rank's output depends on every rank's input of the
/// same call, so a rank's last steps end only when every rank's data has gone round, and its next
/// call has nothing to start early. Measured once with this same rule (round 23, maxmin, NCCL
/// 2.30's pick; `iterations_tests`' ignored sweep, one case of it a checked test): P / T1 is 1.0000 for all-reduce, all-gather and reduce-scatter on
/// dgx-a100, hgx-h100 and 2 x hgx-h100 at 1 MiB, 64 MiB and 1 GiB (ring, tree, NVLS, NVLS-tree;
/// LL, LL128, Simple), where broadcast's is 0.26-0.93 on one node and 0.55-0.99 on two.
pub fn run_loop(m: &Machine, call: &lower::Call, model: &str, params: &[(String, String)], bottlenecks: bool, limit: u64, iters: usize) -> Result<Option<Ran>> {
    let Some(one) = run_within(m, call, model, params, bottlenecks, limit)? else { return Ok(None) };
    if iters < 2 || !call.coll.rooted() || one.transfers == 0 {
        return Ok(Some(one));
    }
    let Some(two) = run_pair(m, call, model, params, limit)? else { return Ok(None) };
    let period = (two - one.seconds).max(0.0);
    let seconds = (one.seconds + (iters - 1) as f64 * period) / iters as f64;
    // A resource carries a call's bytes in the loop's time per call, not the call's alone.
    let busier = if seconds > 0.0 { one.seconds / seconds } else { 1.0 };
    let bottlenecks = one.bottlenecks.iter().map(|(r, used, cap)| (r.clone(), if *used >= 0.0 { used * busier } else { *used }, *cap)).collect();
    Ok(Some(Ran { seconds, bottlenecks, ..one }))
}

/// Seconds two calls of `call` take back to back on each GPU's stream (`lower::pair`); None over
/// `limit` transfers.
pub fn run_pair(m: &Machine, call: &lower::Call, model: &str, params: &[(String, String)], limit: u64) -> Result<Option<f64>> {
    check_model(model)?;
    if 2 * lower::transfers_at_least(call) > limit {
        return Ok(None);
    }
    let (transfers, first) = lower::pair(call, limit / 2);
    if first as u64 >= limit / 2 {
        return Ok(None);
    }
    let (_, _, o) = execute(m, transfers, format!("nccl {} x2", call.coll.name()), model, params)?;
    Ok(Some(o.makespan()))
}

/// `transfers` run on the machine under `model`: the workload, the model as prepared for it (its
/// flow table) and the outcome.
fn execute(
    m: &Machine,
    transfers: Vec<crate::workload::Transfer>,
    origin: String,
    model: &str,
    params: &[(String, String)],
) -> Result<(Workload, Box<dyn crate::model::Prepared>, sim::Outcome)> {
    let w = Workload { transfers, origin, ..Default::default() };
    let prepared = registry::get(model)?.prepare(m, &w, params)?;
    let o = sim::run_prepared(&w, prepared.as_ref(), false)?;
    Ok((w, prepared, o))
}

/// Why a call is not run: it is over `lower::MAX_TRANSFERS` (`least` of them at least).
pub fn too_many(call: &lower::Call, least: u64) -> String {
    format!(
        "{} on {} ranks{} is at least {:.1} M transfers (NCCL's own sends: they grow with the square of the ranks), over the {} M (about 4 GB) contend lowers one call to; give fewer nodes{}",
        call.coll.name(),
        call.devices.len(),
        if call.coll == Coll::AllToAll { String::new() } else { format!(" by {}", call.algo.name()) },
        least as f64 / 1e6,
        lower::MAX_TRANSFERS / 1_000_000,
        if call.coll == Coll::AllToAll { "" } else { " or --algo tree / nvlstree (they grow with the ranks)" },
    )
}

/// `run`, with `None` where the call is over `limit` transfers (`lower::MAX_TRANSFERS` but in
/// tests), by its count before lowering or by the lowering's own stop: `--explain` leaves such an
/// alternative out (with a note) where `run` refuses NCCL's pick.
pub fn run_within(m: &Machine, call: &lower::Call, model: &str, params: &[(String, String)], bottlenecks: bool, limit: u64) -> Result<Option<Ran>> {
    check_model(model)?;
    if lower::transfers_at_least(call) > limit {
        return Ok(None);
    }
    let (transfers, channel) = lower::lower_within(call, limit);
    if transfers.len() as u64 >= limit {
        return Ok(None);
    }
    // Send/receive runs each operation on the channels its size gets (`p2p::op_channels`).
    let channels = match call.coll {
        Coll::AllToAll | Coll::SendRecv => channel.iter().max().map_or(0, |&c| c as usize + 1),
        _ => call.channels(),
    };
    if transfers.is_empty() {
        return Ok(Some(Ran { seconds: 0.0, transfers: 0, channels, bottlenecks: Vec::new() }));
    }
    let count = transfers.len();
    let (w, prepared, o) = execute(m, transfers, format!("nccl {}", call.coll.name()), model, params)?;
    let mut worst = Vec::new();
    if bottlenecks {
        // The limit is the resource nearest full over the call, not the one busy longest: a
        // GPU's PCIe link carries a trickle the whole call while its NIC's link runs full.
        // A route holds every resource a transfer's bytes use, each with the capacity a byte
        // takes there: its links and, where the lowering caps a channel (a p2p block's copy
        // rate, LL's `llMaxBws`), that cap, which binds as a link would.
        let f = prepared.flows();
        let mut carried = vec![0.0; f.cap.len()];
        for (i, t) in w.transfers.iter().enumerate() {
            for &(r, times) in f.routes.of(f.route_of[i] as usize) {
                carried[r as usize] += t.size as f64 * times;
            }
        }
        let span = o.makespan();
        let top = channel.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
        worst = vec![(String::new(), -1.0, 0.0); top];
        for (i, &c) in channel.iter().enumerate() {
            for &(r, _) in f.routes.of(f.route_of[i] as usize) {
                let r = r as usize;
                let used = if span > 0.0 && f.cap[r] > 0.0 { carried[r] / (f.cap[r] * span) } else { 0.0 };
                if used > worst[c as usize].1 {
                    let name = match crate::flow::rate_cap_device(&f.name[r]) {
                        Some(d) => format!("{d}'s channel rate cap of {:.1} GB/s", f.cap[r] / 1e9),
                        None => f.name[r].clone(),
                    };
                    worst[c as usize] = (name, used, f.cap[r]);
                }
            }
        }
    }
    Ok(Some(Ran { seconds: o.makespan(), transfers: count, channels, bottlenecks: worst }))
}
