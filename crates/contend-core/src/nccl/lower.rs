//! NCCL collectives lowered to point-to-point transfers of the one workload DAG: per channel,
//! per chunk, per step, with the dependencies NCCL's kernels keep (a rank forwards a chunk once
//! it has received it; a channel's connection sends its chunks in order), so that channels
//! contend with each other on real links under the model that runs them.
//!
//! Chunks are NCCL's (`calcCollChunking`: a step is a connection buffer over NCCL_STEPS; ring
//! all-reduce, all-gather and reduce-scatter move NCCL_STEPS / 2 steps per chunk with Simple,
//! everything else one step). Where a channel has many loops, the first and last `KEEP` loops
//! keep NCCL's chunk and the loops between are merged into `MIDDLE` larger ones: a pipeline's
//! fill and drain cost its first and last chunks, and the loops between move at the pipeline's
//! rate whatever their size, so the merge changes the time by little while bounding the number
//! of transfers (docs/nccl.md).
//!
//! Latency: NCCL's per-step hardware latency (`hwLatencies`) is paid by every transfer of a
//! call's first loop (the pipeline's fill: once per step, as NCCL's model counts it: a step
//! inside a node at the NVLink or PCI figure, a step between nodes at the network's), its base
//! latency by the first transfer of each chain; later loops stream behind them and pay only the
//! path's own latency, which the router adds to every transfer. A ring's Simple step inside a
//! node is the exception (round 18): it pays the per-step figure once per slice of every loop,
//! where its thread block synchronises (`simple_slices`).

use super::p2p;
use super::tuning::{self, LL128_EFFICIENCY, LL_EFFICIENCY, NCCL_STEPS, RING_CHUNK_STEPS, TREE_LL128_NODE_SHARE};
use super::{Algo, Coll, Proto};
use crate::workload::{After, Transfer};

mod back_to_back;
pub mod pat;
mod shm;

pub use back_to_back::pair;

/// Loops at each end of a channel kept at NCCL's chunk; merged loops between.
pub const KEEP: usize = 4;
pub const MIDDLE: usize = 4;

/// The most transfers one call is lowered to: about 520 bytes each as the call runs (lowered,
/// routed and in the engine: 2.17 GB for 4.19 M of a ring all-reduce on 64 x hgx-h100, 3.46 GB
/// for 6.54 M of NVLS-tree on 1024; docs/benchmarks.md, issue 25, sixteenth round), so about
/// 4 GB.
pub const MAX_TRANSFERS: u64 = 8_000_000;

/// Whether a lowering reached `MAX_TRANSFERS` (and stopped there: `Dag::push`).
pub fn truncated(transfers: &[Transfer]) -> bool {
    transfers.len() as u64 >= MAX_TRANSFERS
}

/// Transfers the lowering makes at least, counted before it runs (a quick first check; the
/// lowering itself stops at `MAX_TRANSFERS`): every rank of a ring sends at
/// every step (2(n - 1) steps for all-reduce, n - 1 for all-gather and reduce-scatter) and an
/// all-to-all sends between every pair, so these grow with the square of the ranks, as NCCL's
/// own sends do; the other lowerings grow with the ranks.
pub fn transfers_at_least(c: &Call) -> u64 {
    let n = c.devices.len() as u64;
    if n < 2 || c.bytes == 0 {
        return 0;
    }
    let rings = c.rings.len() as u64;
    match c.coll {
        Coll::AllToAll if c.bytes / n > 0 => n * (n - 1),
        Coll::AllReduce if c.algo == Algo::Ring => rings * n * 2 * (n - 1),
        Coll::AllGather | Coll::ReduceScatter if c.algo == Algo::Ring => rings * n * (n - 1),
        // PAT: a message and a join a dimension at least (`pat`).
        Coll::AllGather | Coll::ReduceScatter if c.algo == Algo::Pat => rings * n * 2 * pat::dims(n as usize) as u64,
        _ => 0,
    }
}

/// What one call moves and how.
#[derive(Clone, Debug)]
pub struct Call {
    pub coll: Coll,
    pub algo: Algo,
    pub proto: Proto,
    /// Bytes of the call as nccl-tests counts them (the whole buffer).
    pub bytes: u64,
    /// Machine device of every rank, in rank order.
    pub devices: Vec<usize>,
    /// Each channel's ring, as rank positions (a permutation of 0..ranks).
    pub rings: Vec<Vec<usize>>,
    /// Across nodes, per ring channel and node, the NIC its steps between nodes cross and the
    /// GPU that posts the leaving step (PXN), as NCCL's network search picks them
    /// (`rails::build`); empty: the router's nearest NIC (trees, NVLS, send/receive).
    pub exits: Vec<Vec<super::rails::Exit>>,
    /// Root rank (broadcast, reduce).
    pub root: usize,
    /// Seconds: NCCL's base latency of the call and its per-step hardware latency, of a step
    /// inside a node (`step`) and of one between nodes (`step_net`), as NCCL's model counts them
    /// (tuning.cc: intra-node steps at the NVLink or PCI latency, network steps at NET's). PAT,
    /// whose steps all leave the node: `step` is its model's linear part a rank (paid with `base`
    /// once per call), `step_net` each message's share of a network step (`pat`).
    pub base: f64,
    pub step: f64,
    pub step_net: f64,
    /// Seconds of a Simple slice's handshake on NVLink (wait, copy, barrier, post), which each
    /// NVLS chunk on one node pays (`nvls`): NCCL's NVLink ring Simple step
    /// (`tuning::nvlink_simple_step`), or the fitted `nccl_step_simple` that replaces a ring
    /// slice's figure too.
    pub handshake: f64,
    /// Ranks per node (chains of a tree stay inside a node).
    pub ppn: usize,
    /// Send/receive: how NCCL's release splits one operation over channels (`p2p::op_split`),
    /// and the communicator's p2p chunk (`p2p::chunk`), bytes.
    pub p2p_split: p2p::OpSplit,
    pub p2p_chunk: u64,
    /// Share of the links' bandwidth each protocol's kernels reach (NCCL's index; 1: all).
    pub efficiency: [f64; 3],
    /// Connection buffer per protocol (NCCL's index; NCCL_BUFFSIZE for Simple), wire bytes.
    pub buff: [u64; 3],
    /// Each channel's id, whose parity says which tree of the double binary tree it runs (odd:
    /// the mirrored one; a tree's ids are 0 and 1, `tree_mirrored`; NVLS-tree's are the channel
    /// numbers, whose odd channels NCCL mirrors), and how many identical channels each ring
    /// stands for (`merged`).
    pub ids: Vec<usize>,
    pub copies: u64,
    /// NVLS: each node's NVSwitch that reduces and multicasts, and the share of the NVLink
    /// bandwidth multimem operations reach.
    pub switches: Vec<usize>,
    pub nvls_efficiency: f64,
    /// NVLS-tree's chunk before its size rule (`tuning::nvls_tree_first`).
    pub nvls_tree_first: u64,
    /// NVLS and NVLS-tree: the GPUs (positions in a node) that head a part of each loop, in the
    /// NVLS graph's channel order (`nvls_heads`): every GPU on one node, across nodes each NIC's
    /// local GPU; empty elsewhere.
    pub nvls_heads: Vec<usize>,
    /// Whether a tree/Simple all-reduce chunk shrinks with the tree's depth, as 2.18.5 and 2.19.3
    /// shrink it (`tree_simple_chunk`; `Version::tree_simple_depth_chunk`).
    pub tree_depth_chunk: bool,
    /// A ring LL or LL128 all-reduce's chunk grain, data bytes, where NCCL's kernel rounds a
    /// partial loop's chunk up to it (`ring_chunks`; `Version::ring_chunk_grain`); 0: an even split.
    pub ring_grain: u64,
    /// NCCL runs the call's peer-to-peer operations of 0 bytes (`Comm::empty_p2p`): each pair's
    /// send is one step of NCCL's kernel with nothing in it (`p2p`).
    pub empty_p2p: bool,
    /// PXN: the local rank that relays a message to another node's rank (default: none).
    pub pxn: super::pxn::Pxn,
    /// Data bytes/s each transfer of one channel moves at most (`tuning::channel_rate`); None:
    /// its links alone limit it.
    pub rate: Option<f64>,
    /// The host memory each step between two GPUs of a node passes through, by (sending device,
    /// receiving device), where NCCL takes its SHM transport (no peer path): such a ring's steps
    /// are lowered as NCCL's kernels run them (`shm`). Shared with the communicator, not copied
    /// into every call (it grows with the nodes).
    pub shm: std::sync::Arc<std::collections::BTreeMap<(usize, usize), usize>>,
    /// The GPU each step between two GPUs of a node passes through where NCCL joins them by
    /// NVLink through an intermediate GPU (PATH_NVB, "P2P/indirect"), by (sending device,
    /// receiving device) (`nvb_steps`). Shared with the communicator.
    pub nvb: std::sync::Arc<std::collections::BTreeMap<(usize, usize), usize>>,
    /// Seconds every Simple step received from another node by GDR waits before the receiving
    /// kernel may use it: NCCL's GDR flush (`Comm::flush`; 0 where none is issued).
    pub flush: f64,
    /// The GPUs whose network data NCCL stages through host memory (`NetStages`). Shared with
    /// the communicator.
    pub net_stage: std::sync::Arc<NetStages>,
}

/// Per GPU whose steps to or from another node NCCL does not move by GPUDirect RDMA, the host
/// memory its connection's buffers are in: [its sends', its receives'] (None: GDR that way).
/// Without GDR NCCL's net transport puts the connection's buffers in host memory (NCCL 2.30.7
/// src/transport/net.cc `sendProxyConnect` and `recvProxyConnect`: `NCCL_NET_MAP_ADD_POINTER`
/// with `useGdr` 0 maps every protocol's buffer to `NCCL_NET_MAP_HOSTMEM`, `ncclCudaHostCalloc`;
/// 2.21.5 the same), allocated by the proxy thread, which runs on the GPU's local CPU
/// (`ncclTopoGetCpuAffinity`): the GPU's nearest host memory. The sending kernel stores a step
/// there, the NIC reads it; the receiving NIC writes into the receiver's, the kernel loads it.
pub type NetStages = std::collections::BTreeMap<usize, [Option<usize>; 2]>;

impl Call {
    /// The same call with identical channels run as one channel of `copies` times the bytes,
    /// where every ring (with its tree's mirroring) repeats the same number of times: a call
    /// alone on the machine runs identically (every flow of the max-min allocation scales with
    /// its copies alike), with a fraction of the transfers — on 32 x dgx-a100, 24 channels are
    /// 8 rings three times. Not for calls beside other traffic, whose flows would get a share
    /// per merged channel instead of per channel.
    pub fn merged(mut self) -> Call {
        // Channels whose chunks NCCL's grain makes unequal (`ring_chunks`) are not alike; a call
        // of several loops, which the grain leaves even, still merges.
        if matches!(self.coll, Coll::AllToAll | Coll::SendRecv) || self.copies != 1 || ring_chunks(&self, 0).is_some() {
            return self;
        }
        let mut distinct: Vec<(usize, usize)> = Vec::new(); // (first channel, count)
        for (k, r) in self.rings.iter().enumerate() {
            let same = |f: usize| self.rings[f] == *r && self.ids[f] % 2 == self.ids[k] % 2 && self.exits.get(f) == self.exits.get(k);
            match distinct.iter_mut().find(|(f, _)| same(*f)) {
                Some(x) => x.1 += 1,
                None => distinct.push((k, 1)),
            }
        }
        let m = distinct[0].1;
        if m < 2 || distinct.iter().any(|x| x.1 != m) {
            return self;
        }
        self.rings = distinct.iter().map(|x| self.rings[x.0].clone()).collect();
        if !self.exits.is_empty() {
            self.exits = distinct.iter().map(|x| self.exits[x.0].clone()).collect();
        }
        self.ids = distinct.iter().map(|x| self.ids[x.0]).collect();
        self.copies = m as u64;
        self
    }

    /// `merged` where `model` runs identical flows as one of their summed bytes
    /// (`ModelEntry::merges_copies`: maxmin); every channel otherwise (packet), as a rank program's
    /// call runs them.
    pub fn merged_for(self, model: &str) -> Call {
        match crate::model::registry::get(model) {
            Ok(entry) if entry.merges_copies => self.merged(),
            _ => self,
        }
    }

    /// Channels the call stands for.
    pub fn channels(&self) -> usize {
        self.rings.len() * self.copies as usize
    }

    /// Ranks per node, at least one and at most every rank.
    fn per_node(&self) -> usize {
        self.ppn.clamp(1, self.devices.len().max(1))
    }

    /// Whether a step from rank `a` to rank `b` (positions in `devices`) leaves its node.
    fn crosses(&self, a: usize, b: usize) -> bool {
        a / self.per_node() != b / self.per_node()
    }

    /// The flush a step of `proto` from rank `a` to rank `b` waits on after it arrives, every
    /// loop: none inside a node, none for LL and LL128 (their flags say when a line has landed),
    /// none where `b` receives without GDR (NCCL asks `ncclTopoNeedFlush` per GDR receive:
    /// transport/net.cc `recvSetup`).
    pub(super) fn flush_of(&self, a: usize, b: usize, proto: Proto) -> f64 {
        let staged = self.net_stage.get(&self.devices[b]).is_some_and(|s| s[1].is_some());
        if proto == Proto::Simple && self.crosses(a, b) && !staged {
            self.flush
        } else {
            0.0
        }
    }

    /// The per-step latency of a step from rank `a` to rank `b`.
    fn step_of(&self, a: usize, b: usize) -> f64 {
        if self.crosses(a, b) {
            self.step_net
        } else {
            self.step
        }
    }

    /// Data bytes of one chunk of this call.
    fn chunk(&self) -> u64 {
        if self.algo == Algo::Nvls {
            tuning::nvls_chunk(self.bytes, self.channels(), self.devices.len())
        } else if self.algo == Algo::NvlsTree {
            tuning::nvls_tree_chunk(self.bytes, self.channels(), self.nvls_heads.len().max(1), self.nvls_tree_first)
        } else if self.algo == Algo::Tree && self.proto == Proto::Ll128 {
            let ppn = self.ppn.clamp(1, self.devices.len());
            tree_ll128_chunk(chunk_bytes(self.coll, self.algo, self.proto, self.buff), self.bytes, self.channels(), self.devices.len() / ppn, ppn)
        } else if self.algo == Algo::Tree && self.proto == Proto::Simple && self.tree_depth_chunk && self.coll == Coll::AllReduce {
            let ppn = self.ppn.clamp(1, self.devices.len());
            tree_simple_chunk(chunk_bytes(self.coll, self.algo, self.proto, self.buff), self.bytes, self.channels(), self.devices.len() / ppn, ppn)
        } else {
            chunk_bytes(self.coll, self.algo, self.proto, self.buff)
        }
    }

    /// Bytes a transfer carries for `data` bytes under `proto`: its wire format, over what its
    /// kernels reach of the links (and, for NVLS, what multimem operations reach of it).
    fn wire(&self, data: u64, proto: Proto) -> u64 {
        let e = self.efficiency[proto as usize] * if matches!(self.algo, Algo::Nvls | Algo::NvlsTree) { self.nvls_efficiency } else { 1.0 };
        if e == 1.0 {
            wire(data, proto)
        } else {
            (wire(data, proto) as f64 / e).ceil() as u64
        }
    }

    /// Bytes a tree/LL128 send between two GPUs of a node carries for `data` bytes: the chain
    /// moves `TREE_LL128_NODE_SHARE` of the links as data (in place of LL128's 120/128), over
    /// what its kernels reach of them.
    fn wire_tree_node(&self, data: u64) -> u64 {
        (data as f64 / TREE_LL128_NODE_SHARE / self.efficiency[Proto::Ll128 as usize]).ceil() as u64
    }
}

/// Data bytes over which a data rate is turned into a rate of wire bytes.
const RATE_UNIT: u64 = 1 << 30;

/// Data bytes a chunk of this protocol carries.
pub fn chunk_bytes(coll: Coll, algo: Algo, proto: Proto, buff: [u64; 3]) -> u64 {
    let step = buff[proto as usize] / NCCL_STEPS;
    let ring_steps = algo == Algo::Ring && proto == Proto::Simple && matches!(coll, Coll::AllReduce | Coll::AllGather | Coll::ReduceScatter);
    let chunk = step * if ring_steps { RING_CHUNK_STEPS } else { 1 };
    match proto {
        Proto::Ll => chunk / 2,
        Proto::Ll128 => chunk / 16 * 15,
        Proto::Simple => chunk,
    }
}

/// A tree's LL128 chunk for a call of `bytes` on `channels` (NCCL 2.30.7 enqueue.cc,
/// `calcCollChunking`, restated): halved while each channel would get fewer than
/// 64 x nsteps / ppn chunks (down to 128 KiB), then fewer than 16 x nsteps / ppn (down to
/// 32 KiB), nsteps = 1 + log2(nodes) + ppn / 10, so that a small call still fills the tree's
/// pipeline. The counts are whole chunks (NCCL's integer division).
pub fn tree_ll128_chunk(mut chunk: u64, bytes: u64, channels: usize, nodes: usize, ppn: usize) -> u64 {
    let ppn_f = ppn.max(1) as f64;
    let nsteps = 1.0 + (nodes.max(1) as f64).log2().floor() + 0.1 * ppn_f;
    let per = |chunk: u64| (bytes / (channels.max(1) as u64 * chunk)) as f64;
    while per(chunk) < nsteps * 64.0 / ppn_f && chunk > 131072 {
        chunk /= 2;
    }
    while per(chunk) < nsteps * 16.0 / ppn_f && chunk > 32768 {
        chunk /= 2;
    }
    chunk
}

/// A tree/Simple all-reduce's chunk for a call of `bytes` on `channels` under NCCL 2.18.5 and
/// 2.19.3 (enqueue.cc `computeColl`, v2.19.3-1 lines 1334-1342, the same in v2.18.5-1; the tree
/// kernel runs it as `lastChunkSize`, device/all_reduce.h `runTreeSplit`): halved while each
/// channel would get fewer than 8 x depth chunks (down to 128 KiB), then fewer than 4 x depth
/// (down to 64 KiB), then fewer than depth (down to 32 KiB), with connect.cc's depth estimate,
/// ranks per node - 1 + log2(nodes), so that a call fills the tree's pipeline. The counts are
/// whole chunks (integer division). 2.20.3's `computeCollChunkInfo` has no such rule: a step.
pub fn tree_simple_chunk(mut chunk: u64, bytes: u64, channels: usize, nodes: usize, ppn: usize) -> u64 {
    let depth = (ppn.max(1) - 1 + nodes.max(1).ilog2() as usize) as u64;
    let per = |chunk: u64| bytes / (channels.max(1) as u64 * chunk);
    for (times, floor) in [(8, 131072), (4, 65536), (1, 32768)] {
        while per(chunk) < times * depth && chunk > floor {
            chunk /= 2;
        }
    }
    chunk
}

/// Whether channel `k` of a tree all-reduce runs the second, mirrored tree of NCCL's double
/// binary tree. NCCL builds the trees on its graph's `graph` channels and then duplicates them
/// (connect.cc `connectTrees`, `ncclTopoPostset`; NCCL v2.30.7 as v2.19.3): channel c runs tree 0
/// and its copy c + `graph`, on the same graph channel and so the same NIC, tree 1; later copies
/// (`copyChannels`: Hopper's doubling, NCCL_MIN_NCHANNELS) repeat the first `base` channels, and
/// NCCL_MAX_NCHANNELS keeps the first ones, so `base` is the least of twice the graph's channels,
/// MAXCHANNELS and the communicator's channels. A node interior in one tree is a leaf in the
/// other, so each NIC carries one interior and one leaf role: mirroring odd channels instead put
/// both copies of a graph channel in one tree, and a node interior there carried three shares on
/// that NIC each way and one on the next (round 17, fifth part).
pub fn tree_mirrored(k: usize, graph: usize, base: usize) -> bool {
    k % base.max(1) >= graph.max(1)
}

/// Wire bytes of `data` bytes under a protocol (LL: 8 of 16; LL128: 120 of 128).
pub fn wire(data: u64, proto: Proto) -> u64 {
    match proto {
        Proto::Ll => (data as f64 / LL_EFFICIENCY).ceil() as u64,
        Proto::Ll128 => (data as f64 / LL128_EFFICIENCY).ceil() as u64,
        Proto::Simple => data,
    }
}

/// Per-loop data bytes of a pipeline moving `total` bytes in chunks of `chunk`, merged as the
/// module says.
pub fn loops(total: u64, chunk: u64) -> Vec<u64> {
    if total == 0 {
        return Vec::new();
    }
    let n = total.div_ceil(chunk) as usize;
    let last = total - (n as u64 - 1) * chunk;
    // Merge only where each merged loop is more than two chunks, so that it streams as a head,
    // a body and a foot (`send_in`); a merged loop of one to two chunks would be stored and
    // forwarded whole, a step NCCL's chunks do not take (NVLS-tree on 4 x hgx-h100: 128 MiB ran
    // at 64 MiB's busbw, its merged loops two chunks each).
    if n <= 2 * KEEP + 2 * MIDDLE {
        let mut v = vec![chunk; n - 1];
        v.push(last);
        return v;
    }
    let mid = (n - 2 * KEEP) as u64 * chunk - chunk + last;
    let mut v = vec![chunk; KEEP];
    let each = mid / MIDDLE as u64;
    for k in 0..MIDDLE as u64 {
        v.push(if k + 1 == MIDDLE as u64 { mid - each * (MIDDLE as u64 - 1) } else { each });
    }
    v.extend(std::iter::repeat_n(chunk, KEEP - 1));
    v.push(chunk);
    v
}

struct Dag {
    t: Vec<Transfer>,
    /// Channel of each transfer.
    ch: Vec<u32>,
    cur: u32,
    /// Identical channels each transfer stands for (its bytes are theirs together).
    scale: u64,
    /// Wire bytes/s each transfer moves at most: the channel's rate, in wire bytes, times `scale`.
    rate: Option<f64>,
    /// The rate group of the transfers pushed now (`Transfer::rate_group`: its first member).
    group: Option<usize>,
    /// Per node, where the transfers pushed now cross between nodes (`Call::exits` of the
    /// channel), and each rank's device and node; empty: the router's nearest NIC.
    exit: Vec<super::rails::Exit>,
    /// The node of each machine device that is a rank's (`usize::MAX`: none), indexed by
    /// device: read for every transfer pushed, so a slice, not a map.
    node: Vec<usize>,
    /// The most transfers this lowering makes (`MAX_TRANSFERS`).
    limit: u64,
    /// Per transfer received from another node, the receiving kernel's transfers that consume
    /// it (its forward of that chunk): the slot it arrived in is free only once they are done
    /// (`slot_freed`). None recorded: the chunk's arrival frees it.
    released: std::collections::HashMap<usize, Vec<usize>>,
    /// The call's steps through an intermediate GPU (`Call::nvb`) and through host memory (`Call::shm`).
    nvb: std::sync::Arc<std::collections::BTreeMap<(usize, usize), usize>>,
    shm: std::sync::Arc<std::collections::BTreeMap<(usize, usize), usize>>,
    /// The call's GPUs whose network steps go through host memory (`Call::net_stage`).
    stage: std::sync::Arc<NetStages>,
    /// Per step between nodes lowered through host memory (`staged`), by its last leg: the GPUs
    /// it goes between (the sender's relay with PXN), for the word back (`slot_freed`).
    ends: std::collections::HashMap<usize, (usize, usize)>,
    /// Per staged step's NIC leg between two host memories (`staged`: no GDR on either side), the
    /// GPU whose proxy posts it, the sender (its relay with PXN): the leg's ends are no rank's,
    /// so this says whose stream it belongs to (`back_to_back::pair`).
    owner: std::collections::HashMap<usize, usize>,
    /// The words back that reopen a slot (`slot_freed`), where some step is `staged`: there the
    /// receiver's slot gates the NIC's leg, not the sending kernel's store.
    words: std::collections::HashSet<usize>,
    /// Per connection (channel, sending GPU, receiving GPU) staged on a side (`staged`): the
    /// NIC's legs so far, and its last store and load. The sending kernel's store waits for the
    /// slot of its host buffer NCCL_STEPS steps back, which the proxy frees once its send has
    /// completed, and each kernel moves a connection's steps in order.
    sends: std::collections::HashMap<(u32, usize, usize), Connection>,
    /// Wire bytes of the call's largest step (a connection buffer's NCCL_STEPS-th): a staged
    /// step beyond it is a merged loop (`staged`).
    step: u64,
}

/// One staged connection's legs so far (`Dag::sends`).
#[derive(Default)]
struct Connection {
    wires: Vec<usize>,
    store: Option<usize>,
    load: Option<usize>,
}

impl Dag {
    /// An empty lowering of `c` of at most `limit` transfers.
    fn new(c: &Call, limit: u64) -> Dag {
        Dag {
            t: Vec::new(),
            ch: Vec::new(),
            cur: 0,
            scale: 1,
            rate: None,
            group: None,
            exit: Vec::new(),
            node: Vec::new(),
            limit: limit.max(1),
            released: std::collections::HashMap::new(),
            nvb: c.nvb.clone(),
            shm: c.shm.clone(),
            stage: c.net_stage.clone(),
            ends: std::collections::HashMap::new(),
            owner: std::collections::HashMap::new(),
            words: std::collections::HashSet::new(),
            sends: std::collections::HashMap::new(),
            step: c.buff.iter().max().copied().unwrap_or(0) / NCCL_STEPS,
        }
    }

    /// A transfer after those of `after` that are some (passed as an iterator, not a list: a list
    /// built per transfer was an allocation each).
    fn push(&mut self, src: usize, dst: usize, size: u64, after: impl IntoIterator<Item = Option<usize>>, overhead: f64) -> usize {
        self.push_via(src, dst, size, after, overhead, false)
    }

    /// A zero-length step of `dev`'s kernel after those of `after`, taking `secs` (a join: what
    /// the kernel has waited for so far, `pat`).
    fn join(&mut self, dev: usize, after: impl IntoIterator<Item = Option<usize>>, secs: f64) -> usize {
        if self.t.len() as u64 >= self.limit {
            return self.t.len() - 1;
        }
        self.t.push(Transfer { src: dev, dst: dev, after: after.into_iter().flatten().collect(), compute: Some(secs), ..Default::default() });
        self.ch.push(self.cur);
        self.t.len() - 1
    }

    /// `push`; with `back`, a word back along a connection between nodes (`slot_freed`): it goes
    /// NIC to NIC without the PXN relay, from the connection's entry GPU to its leaving one, so
    /// each end's reach of its NIC is the other role's (`Exit::enter` at its start, `leave` at its
    /// end).
    fn push_via(&mut self, src: usize, dst: usize, size: u64, after: impl IntoIterator<Item = Option<usize>>, overhead: f64, back: bool) -> usize {
        // At `MAX_TRANSFERS` the lowering stops growing (memory stays bounded whatever the
        // estimate missed) and its caller refuses the call: the last transfer stands in for the
        // rest, so every index handed out stays valid.
        if self.t.len() as u64 >= self.limit {
            return self.t.len() - 1;
        }
        let after: After = after.into_iter().flatten().collect();
        // Between nodes: leave by the channel's NIC (through its relay GPU with PXN), enter by
        // its NIC of the next node (another where the rails cross, `rails`).
        let node = |d: usize| self.node.get(d).copied().filter(|&k| k != usize::MAX);
        if !back && !self.stage.is_empty() && matches!((node(src), node(dst)), (Some(a), Some(b)) if a != b) {
            let stage = |d: usize, k: usize| self.stage.get(&d).and_then(|s| s[k]);
            let (out, inn) = (stage(src, 0), stage(dst, 1));
            if out.is_some() || inn.is_some() {
                return self.staged((src, out), (inn, dst), size, after, overhead);
            }
        }
        let via = match (node(src), node(dst)) {
            (Some(a), Some(b)) if a != b && !self.exit.is_empty() => {
                let (out, inn) = (self.exit[a], self.exit[b]);
                // A word back leaves by the NIC its receiver entered by, for the NIC its sender left by.
                let ends = if back {
                    [out.enter.then_some(out.nic), inn.leave.then_some(inn.out)]
                } else {
                    [out.leave.then_some(out.out), inn.enter.then_some(inn.nic)]
                };
                out.relay.filter(|_| !back).into_iter().chain(ends.into_iter().flatten()).collect()
            }
            // Inside a node, P2P/indirect: the sender's kernel stores into the connection's buffer
            // in the intermediate GPU's memory and the receiver's kernel loads it from there
            // (NCCL 2.30.7 src/transport/p2p.cc `p2pSendSetup`/`p2pRecvSetup`, P2P_INTERMEDIATE:
            // both buffers are the intermediate rank's; 2.18.3 the same). One transfer over both
            // NVLinks: its rate is the narrower's, as NCCL's path bandwidth is. Through host memory
            // (SHM, `Call::shm`) where the steps are not lowered as legs (`shm`: rings that leave
            // the node, pipelines, trees): one transfer through the connection's buffer.
            _ => self.nvb.get(&(src, dst)).or_else(|| self.shm.get(&(src, dst))).map(|&g| vec![g]).unwrap_or_default(),
        };
        // NCCL's kernels move the bytes (`Transfer::kernel`).
        self.t.push(Transfer {
            src,
            dst,
            size: size.max(1) * self.scale,
            after,
            overhead,
            kernel: true,
            max_rate: self.rate,
            rate_group: self.group,
            via,
            ..Default::default()
        });
        self.ch.push(self.cur);
        self.t.len() - 1
    }

    /// A step between nodes that NCCL does not move by GPUDirect RDMA on one side or both
    /// (`NetStages`), as the devices that move its bytes: the sending kernel's store into host
    /// memory `out` (where the send is staged), the NIC's read of it (or of GPU memory) and its
    /// write into the receiver's host memory `inn` (or GPU memory), then the receiving kernel's
    /// load out of `inn` into the GPU. Each leg waits for the one before, on the machine's
    /// links, so that it contends with all else; successive steps overlap, as the proxy keeps
    /// NCCL_STEPS slots in flight. The step's overhead (its launch, per-step latency and
    /// flush) is paid before the NIC's leg, as before the one transfer it replaces (a kernel's
    /// stores of a connection are in order, so paid there it would add up); the channel's rate
    /// caps every leg, the sender's first leg sharing the rate group pushed now (the sending
    /// kernel's, or its proxy's with GDR reads). The relay GPU of PXN is dropped where the send
    /// is staged: 2.30.7 uses PXN only with GDR at the relay (graph/paths.cc
    /// `ncclTopoComputePaths`; 2.21.5 does not check). The last leg's index (or the join's)
    /// stands for the step.
    fn staged(&mut self, (src, out): (usize, Option<usize>), (inn, dst): (Option<usize>, usize), size: u64, after: After, overhead: f64) -> usize {
        let node = |d: usize| self.node[d];
        let (a, b) = (node(src), node(dst));
        let exits = (!self.exit.is_empty()).then(|| (self.exit[a], self.exit[b]));
        let relay = exits.and_then(|(o, _)| o.relay).filter(|_| out.is_none());
        let nics: Vec<usize> = exits.map(|(o, i)| [o.leave.then_some(o.out), i.enter.then_some(i.nic)].into_iter().flatten().collect()).unwrap_or_default();
        let group = self.group.take();
        let leg = |d: &mut Dag, from: usize, to: usize, after: After, overhead: f64, via: Vec<usize>, kernel: bool, group: Option<usize>| {
            d.t.push(Transfer {
                src: from,
                dst: to,
                size: size.max(1) * d.scale,
                after,
                overhead,
                kernel,
                max_rate: d.rate,
                rate_group: group,
                via,
                ..Default::default()
            });
            d.ch.push(d.cur);
            d.t.len() - 1
        };
        // The receiver's slot (the word back) gates the NIC's leg; the sending kernel stores
        // into its own host buffer once its data is there and the buffer's slot is free (the
        // NIC's leg NCCL_STEPS steps back done: transport/net.cc `sendProxyProgress` hands a
        // slot back to the kernel when its send completes).
        let key = (self.cur, src, dst);
        let (own, before, stored, loaded) = match self.sends.get(&key) {
            Some(c) => (out.and(c.wires.len().checked_sub(NCCL_STEPS as usize).map(|j| c.wires[j])), c.wires.last().copied(), c.store, c.load),
            None => (None, None, None, None),
        };
        let (slot, data): (Vec<usize>, Vec<usize>) = after.iter().partition(|i| self.words.contains(i));
        // A step of more than one of NCCL's chunks (a merged loop, `loops`) stands for chunks
        // that go through the legs one behind another: its legs run at once, each waiting for
        // what the step waits for (and the NIC's for the connection's step before, to keep its
        // order), and the step is done when all three are (a zero-length join on the receiver).
        let piped = size > self.step;
        let store = out.map(|x| leg(self, src, x, data.iter().copied().chain(own).chain(stored).collect(), 0.0, Vec::new(), true, group));
        let wire_after: After = match store {
            Some(i) if !piped => slot.iter().copied().chain([i]).collect(),
            Some(_) => data.iter().chain(&slot).copied().chain(own).chain(before).collect(),
            None => after,
        };
        let via = relay.into_iter().chain(nics).collect();
        let wire = leg(self, out.unwrap_or(src), inn.unwrap_or(dst), wire_after.clone(), overhead, via, false, if store.is_some() { None } else { group });
        if out.is_some() && inn.is_some() {
            self.owner.insert(wire, relay.unwrap_or(src));
        }
        let load = inn.map(|x| {
            let (after, over) = if piped { (wire_after, overhead) } else { (std::iter::once(wire).collect(), 0.0) };
            leg(self, x, dst, after.iter().copied().chain(loaded).collect(), over, Vec::new(), true, None)
        });
        let conn = self.sends.entry(key).or_default();
        conn.wires.push(wire);
        conn.store = store.or(conn.store);
        conn.load = load.or(conn.load);
        let last = if piped {
            self.t.push(Transfer { src: dst, dst, after: store.into_iter().chain([wire]).chain(load).collect(), compute: Some(0.0), ..Default::default() });
            self.ch.push(self.cur);
            self.t.len() - 1
        } else {
            load.unwrap_or(wire)
        };
        self.group = group;
        self.ends.insert(last, (relay.unwrap_or(src), dst));
        last
    }

    /// What a network send's slot waits for: the send NCCL_STEPS chunks before it on the
    /// connection (`sent`), then the receiver's word back that the slot is free. NCCL's receiving
    /// proxy posts a receive only for a slot its kernel has released (transport/net.cc
    /// `recvProxyProgress`: `posted < done + NCCL_STEPS`), and the receive tells the sender where
    /// to write: NCCL's IB transport writes the buffer's address into the sender's FIFO
    /// (transport/net_ib.cc `ncclIbPostFifo`), aws-ofi-nccl's RDMA protocol sends a control
    /// message, and the sender's isend waits for it. So the slot reopens at the sender one message
    /// after the kernel released it: a 1-byte transfer back from the receiver, which pays the path
    /// and its NIC's per-message latency, outside the channel's rate. The kernel releases it once
    /// its step that forwards the chunk is done (round 21, `consumes`: trees and NVLS-tree); where
    /// none is recorded (a ring's steps, send/receive, whose receiver copies the chunk out in
    /// its own memory) the chunk's arrival stands for the release, a lower bound.
    fn slot_freed(&mut self, sent: Option<usize>) -> Option<usize> {
        let s = sent?;
        let after: Vec<Option<usize>> = std::iter::once(s).chain(self.released.get(&s).into_iter().flatten().copied()).map(Some).collect();
        // The word goes proxy to proxy, NIC to NIC: from the receiver, and to the GPU the send
        // leaves from, or with PXN to its relay (the send's first stop, a rank's GPU beside the
        // NIC: its proxy posts the send), not through a relay of its own.
        let rank = |d: usize| self.node.get(d).is_some_and(|&k| k != usize::MAX);
        let (src, dst) = match self.ends.get(&s) {
            Some(&(from, to)) => (to, from),
            None => (self.t[s].dst, self.t[s].via.first().copied().filter(|&d| rank(d)).unwrap_or(self.t[s].src)),
        };
        let (rate, group) = (self.rate.take(), self.group.take());
        let i = self.push_via(src, dst, 1, after, 0.0, true);
        if !self.stage.is_empty() {
            self.words.insert(i);
        }
        (self.rate, self.group) = (rate, group);
        Some(i)
    }

    /// The pieces of one loop's send whose first and last are (`head`, `foot`) (`send_in`,
    /// `send_net`, `send_net_in_flight`): the one transfer, or head, body and foot (the body is
    /// the transfer of the same ends between them; a slot's word goes the other way).
    fn pieces(&self, (head, foot): (usize, usize)) -> Vec<usize> {
        if head == foot {
            return vec![head];
        }
        let ends = |i: usize| (self.t[i].src, self.t[i].dst);
        let body = (head + 1..foot).find(|&i| ends(i) == ends(head));
        std::iter::once(head).chain(body).chain([foot]).collect()
    }

    /// The receiving kernel consumes `got`, a loop's send that arrived from another node, in
    /// `by`, its own send of that loop (its forward of the data): each piece of `got` is released
    /// when the piece of `by` in the same place is done (the last where they differ). NCCL's
    /// kernel posts a step's head to the sender's connection only after the step's copy and its
    /// barrier (prims_simple.h `genericOp`, the head posted after the slice; prims_ll128.h and
    /// prims_ll.h after the step's lines are read and forwarded), and the receiving proxy posts a
    /// slot's receive only once that head has passed it (transport/net.cc `recvProxyProgress`:
    /// `posted < done + NCCL_STEPS`, `done` following the kernel's head).
    fn consumes(&mut self, got: (usize, usize), by: (usize, usize)) {
        let (g, b) = (self.pieces(got), self.pieces(by));
        for (k, &x) in g.iter().enumerate() {
            let y = if g.len() == b.len() { b[k] } else { b[b.len() - 1] };
            self.released.entry(x).or_default().push(y);
        }
    }

    /// A loop's send over the network behind a stream arriving as (heads, feet), on a connection
    /// whose sends so far are `sent` and whose rate group is `leader` (set by its first send).
    /// The proxy keeps NCCL_STEPS chunks in flight: each piece (a merged loop's head, body and
    /// foot, as `send_in` cuts it) waits for its data and for the piece holding the chunk
    /// NCCL_STEPS before its own first chunk, so the network's per-message latency is paid
    /// alongside, while a connection's chunks still leave in order. The chunks in flight are one
    /// channel's kernel's output: they share its rate (one rate group), not one cap each.
    #[allow(clippy::too_many_arguments)]
    fn send_net_in_flight(
        &mut self,
        (leader, sent): (&mut Option<usize>, &mut Pieces),
        (chunk, size): (u64, &dyn Fn(u64) -> u64),
        (src, dst): (usize, usize),
        block: u64,
        (heads, feet): (&[Option<usize>], &[Option<usize>]),
        over: f64,
    ) -> (usize, usize) {
        if self.rate.is_some() {
            self.group = Some(leader.unwrap_or(self.t.len()));
            *leader = self.group;
        }
        let mut piece = |d: &mut Dag, bytes: u64, chunks: u64, deps: &[&[Option<usize>]]| {
            let first = sent.last().map_or(0, |p| p.1);
            // `sent`'s chunk counts rise, so the piece holding chunk `want` is found by bisection.
            let slot = first.checked_sub(NCCL_STEPS).and_then(|want| sent.get(sent.partition_point(|p| p.1 <= want))).map(|p| p.0);
            let slot = d.slot_freed(slot);
            let i = d.push(src, dst, size(bytes), deps.iter().flat_map(|x| x.iter().copied()).chain([slot]), over);
            sent.push((i, first + chunks));
            i
        };
        let ends = if block <= 2 * chunk {
            let i = piece(self, block, block.div_ceil(chunk), &[heads, feet]);
            (i, i)
        } else {
            let head = piece(self, chunk, 1, &[heads]);
            piece(self, block - 2 * chunk, (block - 2 * chunk).div_ceil(chunk), &[heads]);
            let foot = piece(self, chunk, 1, &[feet]);
            (head, foot)
        };
        self.group = None;
        ends
    }
}

/// Split `total` bytes over `parts` as evenly as whole 4-byte elements allow.
fn split(total: u64, parts: usize) -> Vec<u64> {
    let elems = total / 4;
    let rest = total % 4;
    (0..parts as u64)
        .map(|k| elems / parts as u64 + u64::from(k < elems % parts as u64))
        .enumerate()
        .map(|(k, e)| e * 4 + if k == 0 { rest } else { 0 })
        .collect()
}

/// The call as transfers, with the channel of each; none for an empty call.
pub fn lower(c: &Call) -> (Vec<Transfer>, Vec<u32>) {
    lower_within(c, MAX_TRANSFERS)
}

/// `lower`, stopping at `limit` transfers (`truncated` then says so).
pub fn lower_within(c: &Call, limit: u64) -> (Vec<Transfer>, Vec<u32>) {
    let d = dag(c, limit);
    (d.t, d.ch)
}

/// `lower_within`'s graph, with what it knows of its transfers beside them (`Dag::owner`).
fn dag(c: &Call, limit: u64) -> Dag {
    let mut d = Dag::new(c, limit);
    let n = c.devices.len();
    if n < 2 || (c.bytes == 0 && !c.empty_p2p) {
        return d;
    }
    // Room for the transfers known to come (a ring's are all of them): grown by doubling, the
    // list was copied on each growth.
    let known = transfers_at_least(c).min(d.limit) as usize;
    d.t.reserve_exact(known);
    d.ch.reserve_exact(known);
    // The channel's data rate in the wire bytes its transfers carry (protocol and kernel efficiency).
    d.rate = c.rate.map(|r| r * c.copies.max(1) as f64 * c.wire(RATE_UNIT, c.proto) as f64 / RATE_UNIT as f64);
    // Every channel carries the same share of the call (NCCL's split differs by at most one
    // element between channels; equal shares keep the channels' flows in step, so that a merged
    // ring standing for several channels runs exactly as they do).
    d.scale = c.copies.max(1);
    let share = c.bytes.div_ceil(c.channels() as u64);
    let shares = vec![share; c.rings.len()];
    if !c.exits.is_empty() || !c.net_stage.is_empty() {
        d.node = vec![usize::MAX; c.devices.iter().max().map_or(0, |&x| x + 1)];
        for (r, &dev) in c.devices.iter().enumerate() {
            d.node[dev] = r / c.per_node();
        }
    }
    let exit = |ch: usize| c.exits.get(ch).cloned().unwrap_or_default();
    match c.coll {
        Coll::AllToAll | Coll::SendRecv => p2p(c, &mut d),
        Coll::AllReduce | Coll::AllGather | Coll::ReduceScatter if c.algo == Algo::Nvls => {
            for (ch, share) in shares.iter().copied().enumerate() {
                d.cur = ch as u32;
                nvls(c, share, &mut d);
            }
        }
        Coll::AllReduce if c.algo == Algo::NvlsTree => {
            for (ch, share) in shares.iter().copied().enumerate() {
                d.cur = ch as u32;
                nvls_tree(c, ch, share, &mut d);
            }
        }
        Coll::AllReduce if c.algo == Algo::Tree => {
            for (ch, share) in shares.iter().copied().enumerate() {
                d.cur = ch as u32;
                d.exit = exit(ch);
                tree(c, ch, share, &mut d);
            }
        }
        Coll::AllGather | Coll::ReduceScatter if c.algo == Algo::Pat => {
            for (ch, share) in shares.iter().copied().enumerate() {
                d.cur = ch as u32;
                d.exit = exit(ch);
                pat::pat(c, share, &mut d);
            }
        }
        Coll::AllReduce | Coll::AllGather | Coll::ReduceScatter => {
            let steps = if c.coll == Coll::AllReduce { 2 * (n - 1) } else { n - 1 };
            for (ch, share) in shares.iter().copied().enumerate() {
                d.cur = ch as u32;
                d.exit = exit(ch);
                if shm::applies(c, &c.rings[ch]) {
                    shm::ring(c, &c.rings[ch], share.div_ceil(n as u64), steps, &mut d);
                } else {
                    let chunks = ring_chunks(c, ch);
                    ring(c, &c.rings[ch], share.div_ceil(n as u64), steps, chunks.as_deref(), &mut d);
                }
            }
        }
        Coll::Broadcast | Coll::Reduce => {
            for (ch, share) in shares.iter().copied().enumerate() {
                d.cur = ch as u32;
                d.exit = exit(ch);
                let r = &c.rings[ch];
                let at = r.iter().position(|&x| x == c.root).unwrap_or(0);
                // Broadcast: the root heads the chain; reduce: the chain ends at the root.
                let start = if c.coll == Coll::Broadcast { at } else { (at + 1) % n };
                let chain: Vec<usize> = (0..n).map(|k| r[(start + k) % n]).collect();
                pipeline(c, &chain, share, &mut d);
            }
        }
    }
    d
}

/// Data bytes of each chunk index of channel `ch`'s one loop where NCCL 2.18.5 and 2.19.3 round
/// a ring LL or LL128 all-reduce's chunk up to a grain (device/all_reduce.h `runRing`, v2.19.3:
/// `realChunkSize = min(chunkSize, divUp(size, nChannels * nranks * minChunkSize) * minChunkSize)`,
/// chunk j of channel `bid` at `(j * nChannels + bid) * realChunkSize`, `nelem = min(realChunkSize,
/// size - offset)`): a small call fills the first chunk indices whole and leaves the last ones
/// short or empty, so a channel's ring steps carry up to the grain's rounding more than an even
/// split (dgx-a100, 24 channels, LL128 at 4 MiB: 38400 B a step where even is 21845). None
/// (the even split) where this rule is not restated: other releases (2.20/2.21 round by a rule of
/// their own), algorithms, protocols (ring Simple rounds too) and collectives, and a call of more
/// than one loop (whose full loops are NCCL's whole chunks; its last, partial loop).
fn ring_chunks(c: &Call, ch: usize) -> Option<Vec<u64>> {
    let (n, nc) = (c.devices.len() as u64, c.channels() as u64);
    let chunk = c.chunk();
    if c.ring_grain == 0 || c.coll != Coll::AllReduce || c.algo != Algo::Ring || c.copies > 1 || c.bytes > nc * n * chunk {
        return None;
    }
    let real = chunk.min(c.bytes.div_ceil(nc * n * c.ring_grain) * c.ring_grain);
    Some((0..n).map(|j| real.min(c.bytes.saturating_sub((j * nc + ch as u64) * real))).collect())
}

/// A ring of `steps` steps in which every rank sends a block of `per_rank` bytes a step, or, in
/// one loop, the chunk its step carries (`chunks`, by chunk index: rank p's step k carries chunk
/// p - k - 1 mod n, device/all_reduce.h `runRing`).
fn ring(c: &Call, order: &[usize], per_rank: u64, steps: usize, chunks: Option<&[u64]>, d: &mut Dag) {
    let n = order.len();
    let dev = |p: usize| c.devices[order[p % n]];
    // A Simple step inside a node pays NCCL's per-step latency once per slice, in every loop: the
    // kernel moves a chunk slice by slice (prims_simple.h `genericOp`), each slice a wait on the
    // peer's flag, the block's copy and a barrier of the whole block before its flag is posted
    // (the fence overlaps the next slice on a warp of its own; the barrier does not), so a block's
    // slices run one after another with a handshake between them that no later loop streams
    // behind. Steps that leave the node (the proxy keeps NCCL_STEPS in flight) and LL and LL128
    // (a flag in every line, no barrier) pay it in the first loop only, as NCCL's model does.
    // A step waits for its data (the upstream rank's previous step) and for its own previous step:
    // inside a node NCCL's kernel itself copies each step to the next GPU, one after another. A
    // step that crosses nodes goes through the network's proxy, which keeps up to NCCL_STEPS in
    // flight: it waits only for its connection's slot (the same step of the previous loop), so
    // the network's latency delays the data that depends on it, not each of the boundary rank's
    // 2(n - 1) sends in turn.
    let mut last: Vec<Option<usize>> = vec![None; n];
    // slot[k][p]: rank p's send of step k in the previous loop.
    let mut slot: Vec<Vec<Option<usize>>> = vec![vec![None; n]; steps];
    // A capped ring (LL, LL128: `Call::rate`): each rank's sends on the channel are one kernel's
    // output and share its rate (one rate group a connection), also where sends that leave the
    // node overlap.
    let mut group: Vec<Option<usize>> = vec![None; n];
    let chunk = c.chunk();
    let per_rank = chunks.map_or(per_rank, |v| v.iter().copied().max().unwrap_or(0));
    for (l, block) in loops(per_rank, chunk).into_iter().enumerate() {
        let size = |p: usize, k: usize| c.wire(chunks.map_or(block, |v| v[(p + n - 1 - k % n) % n]), c.proto);
        let mut prev: Vec<Option<usize>> = vec![None; n];
        for (k, slot) in slot.iter_mut().enumerate() {
            let mut now = vec![None; n];
            for p in 0..n {
                let (a, b) = (order[p % n], order[(p + 1) % n]);
                let over = c.flush_of(a, b, c.proto)
                    + if c.proto == Proto::Simple && !c.crosses(a, b) {
                        c.step * simple_slices(block, chunk) + if l == 0 && k == 0 { c.base } else { 0.0 }
                    } else if l == 0 {
                        c.step_of(a, b) + if k == 0 { c.base } else { 0.0 }
                    } else {
                        0.0
                    };
                let data = if k == 0 { None } else { prev[(p + n - 1) % n] };
                let own = if c.crosses(a, b) { d.slot_freed(slot[p]) } else { last[p] };
                if d.rate.is_some() {
                    d.group = Some(*group[p].get_or_insert(d.t.len()));
                }
                let i = d.push(dev(p), dev(p + 1), size(p, k), [own, data], over);
                now[p] = Some(i);
                last[p] = Some(i);
                slot[p] = Some(i);
            }
            prev = now;
        }
    }
    d.group = None;
}

/// Slices a ring's Simple loop of `block` data bytes is moved in, each its own handshake
/// (prims_simple.h `genericOp`, v2.19.3 as v2.30.7: `sliceSize = max(divUp(nelem, 16 *
/// SlicePerChunk) * 16, stepSize * StepPerSlice / 32)`, at most SlicePerChunk a chunk): two a
/// whole chunk, a partial loop's chunk halved, but no slice under 1/64 of a whole chunk; a merged
/// loop (`loops`) two for each chunk's worth of its bytes.
pub fn simple_slices(block: u64, chunk: u64) -> f64 {
    if block >= chunk {
        (RING_SLICES * block) as f64 / chunk as f64
    } else {
        let slice = block.div_ceil(RING_SLICES).max(chunk / RING_SLICES / 32).max(1);
        block.div_ceil(slice).clamp(1, RING_SLICES) as f64
    }
}

/// Chunks a loop's block stands for where each chunk pays a step's handshake: one for a loop of
/// NCCL's chunk or less, and a merged loop its chunks' worth of bytes, so that the merged loops of
/// a call pay for its bytes' chunks together (`nvls`, a send through host memory in `pairs_p2p`).
pub fn chunks_worth(block: u64, chunk: u64) -> f64 {
    (block as f64 / chunk.max(1) as f64).max(1.0)
}

/// Slices of a ring Simple chunk: SLICESTEPS 2 of CHUNKSTEPS 4 (collectives.h, `ALLREDUCE_SLICESTEPS`
/// and `ALLREDUCE_CHUNKSTEPS`, NCCL_STEPS / 4 of NCCL_STEPS / 2).
pub const RING_SLICES: u64 = (NCCL_STEPS / 2) / (NCCL_STEPS / 4);

/// One loop's send on one connection. A loop of NCCL's chunk is one transfer; a merged loop is
/// its first chunk (head), the rest but its last chunk (body) and its last chunk (foot): the
/// head waits for the data's head upstream, the foot for the data's foot upstream, so that a
/// merged loop streams through a chain a chunk behind its upstream, as NCCL's chunks do,
/// instead of being stored and forwarded whole. Returns (head, foot).
#[allow(clippy::too_many_arguments)]
fn send(
    d: &mut Dag,
    c: &Call,
    src: usize,
    dst: usize,
    block: u64,
    heads: &[Option<usize>],
    feet: &[Option<usize>],
    conn: Option<usize>,
    over: f64,
) -> (usize, usize) {
    send_in(d, (c.chunk(), &|x| c.wire(x, c.proto)), (src, dst), block, (heads, feet), conn, over)
}

/// `send` with its own chunk and wire size (send/receive's, NVLS-tree's network steps).
#[allow(clippy::too_many_arguments)]
fn send_in(
    d: &mut Dag,
    (chunk, size): (u64, &dyn Fn(u64) -> u64),
    (src, dst): (usize, usize),
    block: u64,
    (heads, feet): (&[Option<usize>], &[Option<usize>]),
    conn: Option<usize>,
    over: f64,
) -> (usize, usize) {
    if block <= 2 * chunk {
        let i = d.push(src, dst, size(block), heads.iter().chain(feet).copied().chain([conn]), over);
        return (i, i);
    }
    let head = d.push(src, dst, size(chunk), heads.iter().copied().chain([conn]), over);
    let body = d.push(src, dst, size(block - 2 * chunk), [Some(head)], 0.0);
    let foot = d.push(src, dst, size(chunk), feet.iter().copied().chain([Some(body)]), 0.0);
    (head, foot)
}

/// A loop's send over the network behind a stream arriving as (heads, feet) (`send_in`'s ends):
/// the proxy keeps NCCL_STEPS chunks in flight, so a merged loop's pieces wait for their data and
/// the connection's slot (`slot`: its send NCCL_STEPS loops before), not for each other, and the
/// network's per-message latency is paid alongside, not once per piece in turn. Returns (head, foot).
#[allow(clippy::too_many_arguments)]
fn send_net(
    d: &mut Dag,
    (chunk, size): (u64, &dyn Fn(u64) -> u64),
    (src, dst): (usize, usize),
    block: u64,
    (heads, feet): (&[Option<usize>], &[Option<usize>]),
    slot: Option<usize>,
    over: f64,
) -> (usize, usize) {
    let slot = d.slot_freed(slot);
    if block <= 2 * chunk {
        let i = d.push(src, dst, size(block), heads.iter().chain(feet).copied().chain([slot]), over);
        return (i, i);
    }
    // Every piece pays the first loop's overhead (they start together).
    let head = d.push(src, dst, size(chunk), heads.iter().copied().chain([slot]), over);
    d.push(src, dst, size(block - 2 * chunk), heads.iter().copied(), over);
    let foot = d.push(src, dst, size(chunk), feet.iter().copied(), over);
    (head, foot)
}

/// The send NCCL_STEPS loops before loop `l` on a connection whose sends are `sent` (one a loop).
fn slot(sent: &[usize], l: usize) -> Option<usize> {
    slot_at(sent, l, p2p::STEPS)
}

/// The send `depth` loops before loop `l`.
fn slot_at(sent: &[usize], l: usize, depth: usize) -> Option<usize> {
    l.checked_sub(depth).map(|j| sent[j])
}

/// A connection's network sends so far: each piece's transfer and the chunks sent through its
/// end (a merged loop's head, body and foot are 1, its chunks less 2, and 1).
type Pieces = Vec<(usize, u64)>;

/// Per rank: the transfers it waits for.
type Deps = Vec<Vec<Option<usize>>>;

/// A chain `chain[0] -> chain[1] -> ...` pipelined in chunks (broadcast, reduce).
fn pipeline(c: &Call, chain: &[usize], bytes: u64, d: &mut Dag) {
    let n = chain.len();
    let mut last: Vec<Option<usize>> = vec![None; n - 1];
    for (l, block) in loops(bytes, c.chunk()).into_iter().enumerate() {
        let (mut head, mut foot): (Option<usize>, Option<usize>) = (None, None);
        for h in 0..n - 1 {
            let over = if l == 0 { c.step_of(chain[h], chain[h + 1]) + if h == 0 { c.base } else { 0.0 } } else { 0.0 };
            let (a, b) = send(d, c, c.devices[chain[h]], c.devices[chain[h + 1]], block, &[head], &[foot], last[h], over);
            last[h] = Some(b);
            (head, foot) = (Some(a), Some(b));
        }
    }
}

/// The parent of node `k` of `nodes` in NCCL's binary tree (trees.cc `ncclGetBtree`, NCCL
/// v2.30.7 as v2.19.3): node 0 is the root, with the highest power of two below `nodes` as its
/// one child; any other node k, with lowest set bit b, hangs under k - b + 2b (its bit cleared,
/// the next set), or under k - b where that is past the last node. Odd nodes are leaves and even
/// ones interior, so in the second tree (`mirrored`, `ncclGetDtree`: node k is node nodes - 1 - k
/// of the first where `nodes` is even, node k - 1 where it is odd) each interior node of the first
/// is a leaf. None: the root.
pub fn dtree_parent(nodes: usize, k: usize, mirrored: bool) -> Option<usize> {
    let up = |r: usize| {
        let b = r & r.wrapping_neg();
        (r > 0).then(|| Some((r ^ b) | (b << 1)).filter(|&p| p < nodes).unwrap_or(r ^ b))
    };
    match (mirrored, nodes % 2) {
        (false, _) => up(k),
        (true, 0) => up(nodes - 1 - k).map(|p| nodes - 1 - p),
        (true, _) => up((k + nodes - 1) % nodes).map(|p| (p + 1) % nodes),
    }
}

/// Tree all-reduce on one channel: within a node a chain (the channel's ring order from its
/// first rank there); across nodes a binary tree of the nodes' chain heads, NCCL's
/// (`dtree_parent`; double: a channel whose id is odd uses the mirrored tree, `tree_mirrored`). Reduce up, then broadcast down, chunk by chunk.
fn tree(c: &Call, ch: usize, bytes: u64, d: &mut Dag) {
    let order = &c.rings[ch];
    let n = order.len();
    let ppn = c.ppn.clamp(1, n);
    let nodes = n / ppn;
    // parent[r] of each rank (None: the root).
    let mut parent: Vec<Option<usize>> = vec![None; c.devices.len()];
    let mut heads = Vec::with_capacity(nodes);
    for node in 0..nodes {
        let chain: Vec<usize> = order.iter().copied().filter(|&r| r / ppn == node).collect();
        for w in chain.windows(2) {
            parent[w[1]] = Some(w[0]);
        }
        heads.push(chain[0]);
    }
    let mirrored = c.ids[ch] % 2 == 1;
    for (k, &h) in heads.iter().enumerate() {
        if let Some(up) = dtree_parent(nodes, k, mirrored) {
            parent[h] = Some(heads[up]);
        }
    }
    let depth = |mut r: usize| {
        let mut k = 0;
        while let Some(p) = parent[r] {
            r = p;
            k += 1;
        }
        k
    };
    // Ranks from the leaves up.
    let mut ranks: Vec<usize> = order.to_vec();
    ranks.sort_by_key(|&r| std::cmp::Reverse(depth(r)));
    let mut last_up: Vec<Option<usize>> = vec![None; c.devices.len()];
    let mut last_down: Vec<Option<usize>> = vec![None; c.devices.len()];
    // Connections between nodes go through the network's proxy, which keeps NCCL_STEPS chunks
    // in flight (`send_net`): per rank, every loop's send up and down, for their slots, and
    // each connection's rate group.
    let mut sent_up: Vec<Pieces> = vec![Vec::new(); c.devices.len()];
    let mut sent_down: Vec<Pieces> = vec![Vec::new(); c.devices.len()];
    let mut group_up: Vec<Option<usize>> = vec![None; c.devices.len()];
    let mut group_down: Vec<Option<usize>> = vec![None; c.devices.len()];
    let chunk = c.chunk();
    let size = |x: u64| c.wire(x, c.proto);
    // Sends between GPUs of a node: LL128's chain moves `TREE_LL128_NODE_SHARE` of the links as
    // data, at the channel's same data rate (so its cap, in wire bytes, scales with it).
    let ll128 = c.proto == Proto::Ll128;
    let node_size = |x: u64| if ll128 { c.wire_tree_node(x) } else { size(x) };
    // The rate in force for this send (capped or not, below) in the node's wire bytes.
    let node_share = node_size(RATE_UNIT) as f64 / size(RATE_UNIT) as f64;
    let in_node = |d: &mut Dag, (src, dst): (usize, usize), block: u64, (hs, fs): (&[Option<usize>], &[Option<usize>]), conn: Option<usize>, over: f64| {
        let keep = d.rate;
        d.rate = keep.map(|r| r * node_share);
        let ends = send_in(d, (chunk, &node_size), (src, dst), block, (hs, fs), conn, over);
        d.rate = keep;
        ends
    };
    let none = Vec::new;
    // LL's ceiling (`tuning::ll_channel_rate`) binds the root's connections only: every byte of the
    // channel enters the root on each child's connection and leaves on each, so they bound the
    // call as capping every hop would, while LL, forwarded line by line, pays no capped chunk's
    // store-and-forward at the other hops (capping them all added 2-6 us a call at 1-4 KiB).
    let rate = d.rate;
    let capped = |x: usize| c.proto != Proto::Ll || parent[x].is_none();
    for (l, block) in loops(bytes, chunk).into_iter().enumerate() {
        // Up: a rank sends its partial sum as its children's arrive (heads and feet).
        let (mut got_h, mut got_f): (Deps, Deps) = (vec![none(); c.devices.len()], vec![none(); c.devices.len()]);
        // What each rank received this loop from another node, up (from its children) and down
        // (from its parent): its slot is free once the rank's own send of the loop is done.
        let mut net_up: Vec<Vec<(usize, usize)>> = vec![Vec::new(); c.devices.len()];
        let mut net_down: Vec<Option<(usize, usize)>> = vec![None; c.devices.len()];
        for &r in &ranks {
            if let Some(p) = parent[r] {
                let leaf = got_h[r].is_empty();
                let over = c.flush_of(r, p, c.proto) + if l == 0 { c.step_of(r, p) + if leaf { c.base } else { 0.0 } } else { 0.0 };
                let (hs, fs) = (got_h[r].clone(), got_f[r].clone());
                d.rate = rate.filter(|_| capped(p));
                let (a, b) = if c.crosses(r, p) {
                    d.send_net_in_flight((&mut group_up[r], &mut sent_up[r]), (chunk, &size), (c.devices[r], c.devices[p]), block, (&hs, &fs), over)
                } else {
                    in_node(d, (c.devices[r], c.devices[p]), block, (&hs, &fs), last_up[r], over)
                };
                last_up[r] = Some(b);
                for &x in &net_up[r] {
                    d.consumes(x, (a, b));
                }
                if c.crosses(r, p) {
                    net_up[p].push((a, b));
                }
                got_h[p].push(Some(a));
                got_f[p].push(Some(b));
            }
        }
        // Down: the root has the sum as its children's arrive; each rank forwards it.
        let (mut have_h, mut have_f): (Deps, Deps) = (vec![none(); c.devices.len()], vec![none(); c.devices.len()]);
        for &r in ranks.iter().rev() {
            if let Some(p) = parent[r] {
                let (hs, fs) = if parent[p].is_none() { (got_h[p].clone(), got_f[p].clone()) } else { (have_h[p].clone(), have_f[p].clone()) };
                let over = c.flush_of(p, r, c.proto) + if l == 0 { c.step_of(p, r) } else { 0.0 };
                d.rate = rate.filter(|_| capped(p));
                let (a, b) = if c.crosses(p, r) {
                    d.send_net_in_flight((&mut group_down[r], &mut sent_down[r]), (chunk, &size), (c.devices[p], c.devices[r]), block, (&hs, &fs), over)
                } else {
                    in_node(d, (c.devices[p], c.devices[r]), block, (&hs, &fs), last_down[r], over)
                };
                last_down[r] = Some(b);
                // The root's one step sends what it received up down to every child; any other
                // rank forwards what it received down.
                let got: Vec<(usize, usize)> = if parent[p].is_none() { net_up[p].clone() } else { net_down[p].into_iter().collect() };
                for x in got {
                    d.consumes(x, (a, b));
                }
                if c.crosses(p, r) {
                    net_down[r] = Some((a, b));
                }
                have_h[r] = vec![Some(a)];
                have_f[r] = vec![Some(b)];
            }
        }
    }
    d.rate = rate;
}

/// NVLS on one node, one channel (NCCL's all_reduce.h / all_gather.h / reduce_scatter.h NVLS
/// kernels without registered buffers): every loop, GPU h heads chunk h of the channel's data.
/// Reduce (all-reduce, reduce-scatter): the switch reads chunk h from every GPU's copy of the
/// multicast buffer, adds them up and returns the sum to head h (multimem.ld_reduce):
/// transfers GPU j -> switch for every j and switch -> GPU h. Multicast (all-reduce,
/// all-gather): head h stores its chunk (the sum, or its own data) to the multicast address and
/// the switch writes it to every GPU (multimem.st): GPU h -> switch and switch -> GPU j for every
/// j. The copies between a rank's buffers and its slots of the multicast buffer stay in its own
/// memory and cross no link. Per byte of all-reduce, each GPU's link to the switch carries
/// (n + 1) / n bytes each way, against 2 (n - 1) / n for a ring, which is NVLS's gain.
///
/// Head h's reduce warps load-reduce and store a chunk in one pass, packet by packet through the
/// switch (cut through, not stored and forwarded), and take the next chunk when it is done: so
/// a head's transfers of a loop run together, each after its own stream's previous loop and after
/// the head's previous loop (its sum returned and stored).
fn nvls(c: &Call, share: u64, d: &mut Dag) {
    let n = c.devices.len();
    let sw = c.switches[0];
    let reduce = matches!(c.coll, Coll::AllReduce | Coll::ReduceScatter);
    let cast = matches!(c.coll, Coll::AllReduce | Coll::AllGather);
    // Per head, the previous loop's transfers: in[j], sum back, store, out[j].
    let mut last_in: Vec<Vec<Option<usize>>> = vec![vec![None; n]; n];
    let mut last_red: Vec<Option<usize>> = vec![None; n];
    let mut last_up: Vec<Option<usize>> = vec![None; n];
    let mut last_out: Vec<Vec<Option<usize>>> = vec![vec![None; n]; n];
    // Each chunk a head sums is one Simple step of its reduce warps (device/all_reduce.h, NVLS
    // one node, v2.30.7 lines 441-456: `directRecvDirectSend` a chunk at a time with
    // `ProtoSimple<1, 1, ...>`, one slice a chunk), a handshake of the block (wait, copy, barrier,
    // post) that no later chunk streams behind, as a ring's Simple slice (`simple_slices`): paid in
    // every loop, a merged loop once per chunk's worth of its bytes. The first loop also pays
    // NCCL's NVLS latency, the call's.
    let chunk = c.chunk();
    for (l, block) in loops(share.div_ceil(n as u64), chunk).into_iter().enumerate() {
        let over = c.handshake * chunks_worth(block, chunk) + if l == 0 { c.base + c.step } else { 0.0 };
        let size = c.wire(block, Proto::Simple);
        for h in 0..n {
            let done = [last_red[h], last_up[h]];
            let dev = |j: usize| c.devices[j];
            if reduce {
                for (j, last) in last_in[h].iter_mut().enumerate() {
                    *last = Some(d.push(dev(j), sw, size, [*last, done[0], done[1]], over));
                }
                last_red[h] = Some(d.push(sw, dev(h), size, [last_red[h], done[1]], over));
            }
            if cast {
                last_up[h] = Some(d.push(dev(h), sw, size, [last_up[h], done[0]], over));
                for (j, last) in last_out[h].iter_mut().enumerate() {
                    *last = Some(d.push(sw, dev(j), size, [*last, done[0], done[1]], over));
                }
            }
        }
    }
}

/// NVLS-tree all-reduce on one channel (all_reduce.h, NVLS-tree kernels without registered
/// buffers): every loop, the h-th head of each node (`Call::nvls_heads`, the NVLS graph's: every
/// GPU where each has a NIC, each NIC's local GPU where NICs are fewer) heads chunk h of the
/// node's data; GPU h below stands for that head. On each node the
/// switch reads chunk h from every GPU and returns the node's sum to its head h (as `nvls`); the
/// heads h of all nodes reduce their sums up NCCL's double binary tree over the nodes (connect.cc
/// `connectNvls`: channel c takes tree c mod 2 of `ncclGetDtree`; `dtree_parent`) and send the total back down, over the network between GPU h
/// of one node and GPU h of the next (each through its own NIC); each head then stores the total
/// to its node's multicast address and the switch writes it to every GPU of the node. A stage's
/// chunk waits for the one before it (stored and forwarded); each stream keeps its order.
fn nvls_tree(c: &Call, ch: usize, share: u64, d: &mut Dag) {
    let n = c.devices.len();
    let ppn = c.ppn.clamp(1, n);
    let nodes = n / ppn;
    let mirrored = c.ids[ch] % 2 == 1;
    // parent[k]: the tree's parent node of node k (None: the root).
    let parent: Vec<Option<usize>> = (0..nodes).map(|k| dtree_parent(nodes, k, mirrored)).collect();
    let depth = |mut k: usize| {
        let mut x = 0;
        while let Some(p) = parent[k] {
            k = p;
            x += 1;
        }
        x
    };
    let mut up_order: Vec<usize> = (0..nodes).collect();
    up_order.sort_by_key(|&k| std::cmp::Reverse(depth(k)));
    let dev = |k: usize, j: usize| c.devices[k * ppn + j];
    let key = |k: usize, j: usize| k * ppn + j;
    // Through the switch: multimem's wire bytes; over the network: Simple's.
    let chunk = c.chunk();
    let mc = |b: u64| c.wire(b, Proto::Simple);
    let net = |b: u64| {
        let e = c.efficiency[Proto::Simple as usize];
        if e == 1.0 {
            b
        } else {
            (b as f64 / e).ceil() as u64
        }
    };
    let (mc, net): (&dyn Fn(u64) -> u64, &dyn Fn(u64) -> u64) = (&mc, &net);
    // Per (node, head): the previous loop's transfer of each stream.
    let mut last_in: Vec<Vec<Option<usize>>> = vec![vec![None; ppn]; n];
    let mut last_red = vec![None; n];
    // Network connections (up and down the tree): every loop's send, for their slots.
    let mut last_up: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut last_down: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut last_st = vec![None; n];
    let mut last_out: Vec<Vec<Option<usize>>> = vec![vec![None; ppn]; n];
    type Ends = (Vec<Option<usize>>, Vec<Option<usize>>);
    // NCCL's NVLS graph's heads (every GPU where each has its NIC; fewer where NICs are fewer).
    let heads: Vec<usize> = if c.nvls_heads.is_empty() { (0..ppn).collect() } else { c.nvls_heads.clone() };
    for (l, block) in loops(share.div_ceil(heads.len() as u64), chunk).into_iter().enumerate() {
        let first = |x: f64| if l == 0 { x } else { 0.0 };
        for &h in &heads {
            // Each node's sum of chunk h at its head, as (heads, feet) of its arrival.
            let mut got: Vec<Ends> = vec![(Vec::new(), Vec::new()); nodes];
            for k in 0..nodes {
                let sw = c.switches[k];
                let (mut hs, mut fs) = (Vec::with_capacity(ppn), Vec::with_capacity(ppn));
                for (j, last) in last_in[key(k, h)].iter_mut().enumerate() {
                    let (a, b) = send_in(d, (chunk, mc), (dev(k, j), sw), block, (&[], &[]), *last, first(c.step));
                    *last = Some(b);
                    hs.push(Some(a));
                    fs.push(Some(b));
                }
                let (a, b) = send_in(d, (chunk, mc), (sw, dev(k, h)), block, (&hs, &fs), last_red[key(k, h)], 0.0);
                last_red[key(k, h)] = Some(b);
                got[k] = (vec![Some(a)], vec![Some(b)]);
            }
            // Up the tree: a head sends once its own sum and its children's are arriving; a
            // leaf's send starts the chain and pays the call's base as well. What a head receives
            // from another node frees its slot once the head's own step that consumes it is done:
            // its send up, or at the root its stores and sends down (`Dag::consumes`).
            let mut net_in: Vec<Vec<(usize, usize)>> = vec![Vec::new(); nodes];
            for &k in &up_order {
                if let Some(p) = parent[k] {
                    let (hs, fs) = got[k].clone();
                    let leaf = got[k].0.len() == 1;
                    let over = first(c.step_net + if leaf { c.base } else { 0.0 });
                    let (a, b) = send_net(d, (chunk, net), (dev(k, h), dev(p, h)), block, (&hs, &fs), slot(&last_up[key(k, h)], l), over);
                    last_up[key(k, h)].push(b);
                    for &x in &net_in[k] {
                        d.consumes(x, (a, b));
                    }
                    net_in[p].push((a, b));
                    got[p].0.push(Some(a));
                    got[p].1.push(Some(b));
                }
            }
            // Down the tree: the root has the total as every child's sum arrives; each head
            // forwards it to its children and stores it to its node's GPUs.
            let mut total: Vec<Ends> = vec![(Vec::new(), Vec::new()); nodes];
            // What each head consumes in its step down: the root what it received up, any other
            // head what it received down.
            let mut consumed: Vec<Vec<(usize, usize)>> = vec![Vec::new(); nodes];
            for &k in up_order.iter().rev() {
                total[k] = match parent[k] {
                    None => {
                        consumed[k] = std::mem::take(&mut net_in[k]);
                        got[k].clone()
                    }
                    Some(p) => {
                        let (hs, fs) = total[p].clone();
                        let (a, b) = send_net(d, (chunk, net), (dev(p, h), dev(k, h)), block, (&hs, &fs), slot(&last_down[key(k, h)], l), first(c.step_net));
                        last_down[key(k, h)].push(b);
                        for x in consumed[p].clone() {
                            d.consumes(x, (a, b));
                        }
                        consumed[k] = vec![(a, b)];
                        (vec![Some(a)], vec![Some(b)])
                    }
                };
                let sw = c.switches[k];
                let (hs, fs) = total[k].clone();
                let (a, b) = send_in(d, (chunk, mc), (dev(k, h), sw), block, (&hs, &fs), last_st[key(k, h)], 0.0);
                for x in consumed[k].clone() {
                    d.consumes(x, (a, b));
                }
                last_st[key(k, h)] = Some(b);
                for (j, last) in last_out[key(k, h)].iter_mut().enumerate() {
                    let (_, y) = send_in(d, (chunk, mc), (sw, dev(k, j)), block, (&[Some(a)], &[Some(b)]), *last, 0.0);
                    *last = Some(y);
                }
            }
        }
    }
}

/// All-to-all and send/receive: every pair's bytes over its channels, chunk by chunk in order.
fn p2p(c: &Call, d: &mut Dag) {
    let n = c.devices.len();
    let pairs: Vec<(usize, usize, u64)> = match c.coll {
        Coll::SendRecv => (0..n).map(|r| (r, (r + 1) % n, c.bytes)).collect(),
        _ => schedule(n, c.ppn.clamp(1, n)).into_iter().map(|(a, b)| (a, b, c.bytes / n as u64)).collect(),
    };
    pairs_p2p(c, &pairs, d);
}

/// The (sender, receiver) pairs of an all-to-all in the order NCCL's p2p schedule issues them
/// (init.cc, `p2pSchedule`, restated): rounds by node delta, in NCCL's quadratic order
/// ((x² + x) / 2 mod the next power of two, dropping deltas past the node count), and within a
/// node delta by local delta, local rank l sending to local rank l + delta of the node that far
/// on. Every round is a permutation of the ranks, so that queues at NICs (`nic_scheduling`),
/// which follow the issue order, do not make every sender's first message go to one receiver.
pub fn schedule(n: usize, ppn: usize) -> Vec<(usize, usize)> {
    let nodes = n / ppn;
    let pow2 = nodes.next_power_of_two();
    let deltas: Vec<usize> = (0..pow2).map(|x| (x * x + x) / 2 % pow2).filter(|&d| d < nodes).collect();
    let mut out = Vec::with_capacity(n * (n - 1));
    for &dn in &deltas {
        for dl in 0..ppn {
            for a in 0..n {
                let (node, l) = (a / ppn, a % ppn);
                let b = (node + dn) % nodes * ppn + (l + dl) % ppn;
                if b != a {
                    out.push((a, b));
                }
            }
        }
    }
    out
}

/// One ncclSend of `bytes` from rank `a` to rank `b` (positions in `c.devices`) and its
/// ncclRecv, as transfers: over the pair's channels, chunk by chunk in order.
pub fn send_one(c: &Call, a: usize, b: usize, bytes: u64) -> Vec<Transfer> {
    let mut d = Dag::new(c, MAX_TRANSFERS);
    if a != b && bytes > 0 {
        pairs_p2p(c, &[(a, b, bytes)], &mut d);
    }
    d.t
}

/// Each operation runs on the channels NCCL gives its size (`p2p::op_channels`), its part of
/// each in chunks (`p2p::op_chunk`), in order. Through host memory a chunk is a store and a load
/// (`shm::send`). Otherwise a chunk waits only for its connection's slot: over a peer path on its node the chunk NCCL_STEPS before it (the peer's buffer slots), to another node the
/// chunk `p2p::net_depth` before it (the proxy keeps that many in flight on each channel of a
/// shared-buffer operation), so a path's per-message latency overlaps. With PXN (`Call::pxn`), a
/// message to another node goes first over NVLink to the local GPU that owns the NIC NCCL uses
/// for that peer, then from it over the network: two sends per chunk, the second a chunk behind
/// the first (`send_in`). A channel's Simple sends to a peer on its node share the channel's rate
/// (`tuning::channel_rate`: one rate group a connection and channel).
fn pairs_p2p(c: &Call, pairs: &[(usize, usize, u64)], d: &mut Dag) {
    let all = d.rate;
    for &(a, b, bytes) in pairs {
        // A 0-byte send NCCL runs (`Call::empty_p2p`): one step on the pair's first channel, its
        // kernel's base and step latency and nothing moved (v2.30.7 enqueue.cc `addP2pToPlan`:
        // `bytes == 0` gives one proxy step of 0 bytes).
        if bytes == 0 {
            if c.empty_p2p {
                d.cur = 0;
                d.push(c.devices[a], c.devices[b], 0, [], c.base + c.step_of(a, b));
            }
            continue;
        }
        let channels = p2p::op_channels(bytes, &c.p2p_split);
        let proto = p2p::proto(bytes, channels);
        let net = c.crosses(a, b);
        // A channel's block copies its Simple chunks to a peer on its node at the channel's rate
        // (`tuning::channel_rate`, data bytes, which are a Simple send's wire bytes); to another
        // node its NIC binds.
        let rate = if proto == Proto::Simple && !net { c.rate } else { None };
        let proxy = c.pxn.relay(a, b);
        let chunk = p2p::op_chunk(bytes, c.p2p_chunk, net);
        let depth = p2p::net_depth(channels);
        // Through host memory (NCCL's SHM transport) a connection's Simple steps are two legs each,
        // one step at a time at NCCL's per-step latency (`shm::send`).
        let staged = if proto == Proto::Simple && !net { shm::through(c, a, b) } else { None };
        for (k, share) in split(bytes, channels).into_iter().enumerate().filter(|&(_, s)| s > 0) {
            d.cur = k as u32;
            // The chunks a connection keeps in flight are one block's copies: they share its rate.
            d.rate = rate;
            if let Some(x) = staged {
                shm::send(c, (a, x, b), share, chunk, d);
                continue;
            }
            d.group = rate.map(|_| d.t.len());
            // Per loop: the send (to the peer, or to the PXN relay) and the relay's.
            let (mut sent, mut relayed): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
            // A connection keeps chunks in flight: NCCL_STEPS inside a node (the peer's buffer
            // has that many slots), fewer to a network peer (shared buffers). The chunks that
            // wait for no slot start with the call, so each pays its base and step latency.
            let inflight = if net { depth } else { p2p::STEPS };
            for (l, block) in loops(share, chunk).into_iter().enumerate() {
                let first = if proxy.is_some() { l == 0 } else { l < inflight };
                let over = if first { c.base + c.step_of(a, b) } else { 0.0 };
                let flush = c.flush_of(a, b, proto);
                match proxy {
                    None => {
                        let slot = slot_at(&sent, l, inflight);
                        let slot = if net { d.slot_freed(slot) } else { slot };
                        sent.push(d.push(c.devices[a], c.devices[b], c.wire(block, proto), [slot], over + flush))
                    }
                    Some(p) => {
                        let size = |x: u64| c.wire(x, proto);
                        let (h, f) = send_in(d, (chunk, &size), (c.devices[a], c.devices[p]), block, (&[], &[]), sent.last().copied(), over);
                        let (_, y) =
                            send_net(d, (chunk, &size), (c.devices[p], c.devices[b]), block, (&[Some(h)], &[Some(f)]), slot_at(&relayed, l, depth), flush);
                        sent.push(f);
                        relayed.push(y);
                    }
                }
            }
        }
    }
    (d.rate, d.group) = (all, None);
}
