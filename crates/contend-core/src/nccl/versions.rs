//! The NCCL releases whose cost model contend restates, and what differs between them.
//!
//! NCCL's choice of algorithm and protocol (src/graph/tuning.cc) changed between releases; a
//! public nccl-tests table is NCCL's choice under the release it ran. `nccl_version` picks the
//! release whose constants `tuning::model` uses. Only the choice changes, but for NVLS-tree's
//! first chunk (`tuning::nvls_tree_first`: a Simple step before 2.21), tree/Simple's chunk
//! (`lower::tree_simple_chunk`: shrunk by the tree's depth before 2.20) and the channel counts
//! (MAXCHANNELS, the Hopper doubling, NVLS's CTAs, p2p's per peer): the lowering's chunks and
//! per-step latencies stay NCCL 2.30.7's (tree/Simple's `hwLatencies` went 28 µs (2.16) -> 4
//! (2.18.3) -> 28 (2.19) -> 4 (2.23) with the same tree kernel, so they steer the choice rather
//! than time a step).
//!
//! Every minor release from 2.18 to 2.30 is restated, each by its last tag (2.18.5, 2.19.3 and
//! 2.20.3 by the tags restated first), read file by file at every tag from v2.21.5-1 to
//! v2.30.7-1 (learned from, not copied; docs/nccl.md, "Releases", has the table). A rule's gate
//! is the first tag whose file has the new rule:
//! - v2.18.5-1: as v2.19.3-1 (diffed: tuning.cc, enqueue.cc, paths.cc), but tree/Simple's
//!   `hwLatencies` 4, 6 and 14 µs (NVLink, PCI, network); NVLS and NVLS-tree a base latency of
//!   23 µs, NVLS-tree plus 2 x (nodes - 1) x 19 µs on the network (the plugin's latency not
//!   added); NVLS and NVLS-tree at the NVLS graph's intra bandwidth on up to two nodes (inter
//!   beyond), not the least of the two, NVLS-tree at an algorithm ratio of 0.7 x nodes /
//!   (2 x (nodes - 1)); no NVLS all-gather or reduce-scatter; NVLS-tree's chunk a Simple step
//!   on any number of nodes (no 64 KiB from 4 nodes, enqueue.cc).
//! - v2.19.3-1: tree/Simple base latency 0 and `hwLatencies` 28 µs (NVLink, PCI, network);
//!   NVLS 23 µs and NVLS-tree 23 µs on NVLink, 18 and 14 µs on the network; `llMaxBws`' Hopper row
//!   is Ampere's (87.7, 22.5, 19.0); ring LL's bus bandwidth is 1/4 of the graph's (1/3 for
//!   all-gather, reduce-scatter and broadcast on one node); ring LL128 takes 0.7 of it with one
//!   GPU per node; a ring all-reduce crosses the network 2 x nodes times (`nInterSteps`), other
//!   collectives nodes times (all-gather, reduce-scatter nodes - 1); a lone GPU per node pays each
//!   algorithm's own network latency; NVLS's bandwidth is min(intra, inter) per channel and
//!   NVLS-tree's min(intra, inter, halved beyond two nodes), both at an algorithm ratio of 5/6, no
//!   `nvlsEfficiency` and no `perChMaxNVLSTreeBws`; LL128 on by default for compute capability
//!   7.0, 8.0 and 9.0 only; MAXCHANNELS 32; no Blackwell tables (refused on Blackwell,
//!   `Comm::set_constants`).
//! - v2.20.3-1: as v2.19.3-1 on every machine contend builds (its tuning.cc differs only for
//!   MNNVL and CollNet's all-gather and reduce-scatter); a network peer's send/receive channels
//!   the NICs' or 2 (paths.cc `ncclTopoGetNchannels`, to 2.28.9).
//! - v2.21.5-1: NVLS and NVLS-tree 25 µs on NVLink, `llMaxBws`' Hopper row (141, 45, 35) and ring
//!   LL at half the graph's bandwidth, as in 2.30.7.
//! - v2.22.3-1: as 2.21.5 for every rule here (tuning.cc: the ring back-up bandwidth and
//!   `ncclTopoGetAlgoTime`'s arguments; enqueue.cc no longer trims NVLS's channels, which
//!   contend never trims).
//! - v2.23.4-1: tree/Simple base 8.4 µs and `hwLatencies` 4, 4, 14 µs; ring LL128 0.92 whatever
//!   the GPUs per node; `nInterSteps` 2 x (nodes - 1) for all-reduce; one GPU per node pays the
//!   tree's network latency; PAT (all-gather and reduce-scatter at one GPU per node); NVLS
//!   all-gather and reduce-scatter keep their bus bandwidth (no 5/6 ratio).
//! - v2.24.3-1: as 2.23.4 here but PAT's bandwidth 0.75, not 0.85 (`pat_share`; a mixed-CPU row, not read).
//! - v2.25.1-1: Blackwell tables (`llMaxBws` 282, 90, 70; per channel twice Hopper's), LL128 on
//!   for 10.0 and 12.0 too; MAXCHANNELS 64; the Hopper channel doubling from compute capability
//!   9.0 up; the NVLink p2p chunk needs every GPU pair on NVLink; 32 NVLS channels on Blackwell.
//! - v2.26.6-1 (2.26.2 the same for every file here): PAT needs compute capability 6.0.
//! - v2.27.7-1: LL128 on from compute capability 7.0 up (no list); NVLS all-gather and
//!   reduce-scatter at min(intra x (ppn - 1) / ppn, inter x 0.9) a channel; 24 NVLS channels on
//!   one Blackwell node. (2.27.3 enables LL128 over C2C paths by another rule; not read here.)
//! - v2.28.9-1: 2.30.7's NVLS model (`nvlsEfficiency`, `perChMaxNVLSTreeBws`, the ring ratio) and
//!   Blackwell's tree tables (70, 42.8, 24; LL128 55.6, 31.67, 20) from 2.28.3; NVLS on two GPUs
//!   of a node (before, three at least) and Blackwell's ring LL128 cap (73.4, 34.6, 73.4) from
//!   2.28.7; NVLS-tree 20.9 µs on the network (2.28.3 and 2.28.7: 14) and Blackwell's NVLS-tree
//!   cap (96, 43.8; 2.28.3 and 2.28.7: 43.1) from 2.28.9.
//! - v2.29.7-1: the p2p network-peer channels and per-peer rounds of 2.30.7 (paths.cc
//!   NCCL_P2P_PER_CHANNEL_NET_BW); Blackwell's ring LL128 40 GB/s (2.29.2: 34.5, 34.6, 34.5).
//! - v2.30.7-1: `tuning.rs`' own constants (Blackwell's NVLS-tree cap 80 beyond two nodes; an
//!   NVB peer gets NVLink's p2p channels).
//!
//! The graphs are searched once, with 2.30.7's speed lists and MAXCHANNELS; the tree graph again
//! under each release's lists (`Comm::tree_graphs`), and a release whose own ring or NVLS search
//! would find another graph is refused (`Comm::as_searched`: MAXCHANNELS / 2 rings, 16 before
//! 2.25; Blackwell's and Hopper's lists, `blackwell_speeds`, `hopper_speeds`).

use crate::error::{Error, Result};

/// 2.18.5's NVLS and NVLS-tree `baseLat` and NVLS-tree's network `hwLat` (µs, tuning.cc).
pub const NVLS_BASE_2_18: f64 = 23.0;
pub const NVLS_TREE_NET_2_18: f64 = 19.0;

/// What NCCL's NVLS tuning reads of the network (`Version::nvls_sm100`): the GPUs a node, the
/// least GPU-to-NIC bandwidth (NCCL's GB/s, `minNetBw`) and whether the NVLS graph's GPU-to-NIC
/// path is within PXB.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NvlsNet {
    pub ppn: usize,
    pub bw: f64,
    pub pxb: bool,
}

/// A restated NCCL release (its minor version; the tag each restates is `tag`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    V2_18,
    V2_19,
    V2_20,
    V2_21,
    V2_22,
    V2_23,
    V2_24,
    V2_25,
    V2_26,
    V2_27,
    V2_28,
    V2_29,
    V2_30,
}

/// `nccl_version`'s words, oldest first, each `ALL`'s release at the same place; the last is
/// the default.
pub const NAMES: &[&str] = &["2.18", "2.19", "2.20", "2.21", "2.22", "2.23", "2.24", "2.25", "2.26", "2.27", "2.28", "2.29", "2.30"];
pub const ALL: [Version; 13] = [
    Version::V2_18,
    Version::V2_19,
    Version::V2_20,
    Version::V2_21,
    Version::V2_22,
    Version::V2_23,
    Version::V2_24,
    Version::V2_25,
    Version::V2_26,
    Version::V2_27,
    Version::V2_28,
    Version::V2_29,
    Version::V2_30,
];

impl Version {
    /// A release as NCCL prints it ("2.19", "2.19.3", "2.19.3+cuda12.2"): the minor contend
    /// restates it by (every patch release of a minor by the one tag `tag` names).
    pub fn parse(s: &str) -> Result<Version> {
        crate::params::release(NAMES, s).map(|k| ALL[k]).map_err(|nearest| {
            let near = nearest.map(|n| format!("the nearest it models is {n}; ")).unwrap_or_default();
            Error::input("nccl_version", s, format!("is not an NCCL release contend models; {near}give one of {} (or latest)", NAMES.join(", ")))
        })
    }

    /// The note for a release given as a patch other than the tag contend restates (2.30.4 is
    /// run as 2.30.7's tuning.cc); None where it is the minor or the tag itself.
    pub fn patch_note(given: &str) -> Option<String> {
        let v = Version::parse(given).ok()?;
        let given = given.trim();
        if given.eq_ignore_ascii_case("latest") {
            return Some(format!("NCCL latest is run as {}, the newest release contend models ({}'s tuning.cc)", v.name(), v.tag()));
        }
        (given != v.name() && given.split(['+', '-']).next() != Some(v.tag()))
            .then(|| format!("NCCL {given} is run as {}: contend restates each minor release by one tag's tuning.cc ({})", v.name(), v.tag()))
    }

    /// The word `nccl_version` takes for it.
    pub fn name(self) -> &'static str {
        NAMES[self as usize]
    }

    /// The tag whose tuning.cc this restates.
    pub fn tag(self) -> &'static str {
        match self {
            Version::V2_18 => "2.18.5",
            Version::V2_19 => "2.19.3",
            Version::V2_20 => "2.20.3",
            Version::V2_21 => "2.21.5",
            Version::V2_22 => "2.22.3",
            Version::V2_23 => "2.23.4",
            Version::V2_24 => "2.24.3",
            Version::V2_25 => "2.25.1",
            Version::V2_26 => "2.26.6",
            Version::V2_27 => "2.27.7",
            Version::V2_28 => "2.28.9",
            Version::V2_29 => "2.29.7",
            Version::V2_30 => "2.30.7",
        }
    }

    /// Whether a peer on an NVB path gets NVLink's channels (paths.cc `ncclTopoGetNchannels`:
    /// `PATH_NVL || PATH_NVB`, "NVB uses NVLink", in 2.30.7 only; 2.18.5 to 2.30.4 test
    /// `PATH_NVL` alone, so an NVB peer gets PCIe's 2).
    pub fn nvb_channels_as_nvlink(self) -> bool {
        self == Version::V2_30
    }

    /// Whether NCCL's NVLink p2p chunk needs every GPU pair of the node on NVLink or NVB
    /// (paths.cc `ncclTopoPathAllNVLink`: the largest path type over the pairs from 2.25.1,
    /// `ncclTopoGetGpuMaxPath`) or one pair (the smallest, 2.18.5 to 2.24.3).
    pub fn nvl_chunk_needs_every_pair(self) -> bool {
        self >= Version::V2_25
    }

    /// Whether a GPU's path to a NIC under the CPU it is joined to by NVLink-C2C is P2C, through
    /// which another GPU may send by PXN (graph/paths.cc: PXN over P2C by default, NCCL_PXN_C2C=1,
    /// from 2.28; before, PXN needs its relay within PXB). 2.27.3 types the path P2C but keeps
    /// PXN_C2C off: read here as the releases before it (`topo::p2c`, `rails`).
    pub fn p2c(self) -> bool {
        self >= Version::V2_28
    }

    /// Whether NCCL types a GPU's path to a NIC through NVLink-C2C then PCIe from its CPU as P2C and
    /// allows GPUDirect RDMA over it by default (`topo::gdr_level`), and LL128 across nodes over it:
    /// from 2.27 (v2.27.3-1 adds PATH_P2C and NCCL_NET_GDR_C2C's default 1, paths.cc
    /// `ncclTopoCheckGdr`; v2.27.7-1's tuning.cc lets LL128 cross nodes up to PXN, P2C below it).
    /// v2.26.6-1 has no P2C (such a path is PHB) and NET_GDR_C2C 0: no GDR there by default, and
    /// no LL128 between nodes. PXN over the same path waits for 2.28 (`p2c`).
    pub fn gdr_c2c(self) -> bool {
        self >= Version::V2_27
    }

    /// Whether NCCL's ring search, retrying across NICs after crossNic 0, pairs the channels
    /// (channel 2k + 1 enters by the NIC 2k left by and leaves by 2k's: search.cc
    /// `ncclTopoSearchRecNet`/`ncclTopoSearchTryGpu`, `graph->crossNic && (graph->nChannels & 1)`,
    /// from v2.20.3-1, as crossNic 1 to 2.22.3 and crossNic 2 from v2.23.4-1). v2.18.5-1 and
    /// v2.19.3-1 retry with crossNic 1 and no pairs (any channel enters and leaves by any NIC)
    /// and keep a crossing graph only where it beats the same-NIC one by 15%
    /// (`ncclTopoCompareGraphs`); `rails` restates the pairs only, so those releases are refused
    /// where the rails cross (`Comm::set_constants`).
    pub fn cross_nic_pairs(self) -> bool {
        self >= Version::V2_20
    }

    /// Whether NCCL_CROSS_NIC=1 holds for every speed of the search: from v2.19.3-1 (search.cc
    /// `ncclTopoCompute`, `tmpGraph.crossNic = crossNic == 1 ? 1 : 0`: v2.19.3-1 :976, v2.21.5-1
    /// :988, v2.30.7-1 :1242). v2.18.5-1 searches its first speed at crossNic 1, then resets it
    /// (:940 `tmpGraph.crossNic = 0`): each lower speed tries the same NIC first and keeps a
    /// crossing graph only 15% ahead (`ncclTopoCompareGraphs` :349), as at crossNic 2.
    pub fn cross_nic_one_kept(self) -> bool {
        self >= Version::V2_19
    }

    /// Whether NCCL_CROSS_NIC=1's search pairs the channels: v2.20.3-1 to v2.22.3-1, whose
    /// pairing tests read `graph->crossNic` (search.cc `ncclTopoSearchRecNet`,
    /// `ncclTopoSearchRecGpu`); before, no pairs; from v2.23.4-1 the tests read `crossNic == 2`.
    pub fn cross_nic_one_pairs(self) -> bool {
        (Version::V2_20..=Version::V2_22).contains(&self)
    }

    /// Releases before 2.23.4, whose tuning.cc has tree/Simple's 28 µs (0 µs base), ring LL128's
    /// 0.7 at one GPU per node, 2 x nodes network steps and each algorithm's own network latency
    /// at one GPU per node.
    pub fn old(self) -> bool {
        self < Version::V2_23
    }

    /// Whether NCCL has tables and kernels for Blackwell (compute capability 10.0 and up): from
    /// 2.25.1 (tuning.cc `BLACKWELL_COMPCAP_IDX`, transport/nvls.cc `NVLS_NCHANNELS_SM100`).
    pub fn knows_blackwell(self) -> bool {
        self >= Version::V2_25
    }

    /// 2.18.5 to 2.20.3, whose tuning.cc is the same here but for `nvls_2_18`.
    fn before_2_21(self) -> bool {
        self < Version::V2_21
    }

    /// Tree/Simple's base latency (µs); `baseLatencies` otherwise unchanged.
    pub fn tree_simple_base(self) -> f64 {
        if self.old() {
            0.0
        } else {
            8.4
        }
    }

    /// Tree/Simple's `hwLatencies` (µs) on NVLink, PCI, network.
    pub fn tree_simple_hw(self) -> [f64; 3] {
        if self == Version::V2_18 {
            [4.0, 6.0, 14.0]
        } else if self.old() {
            [28.0, 28.0, 28.0]
        } else {
            [4.0, 4.0, 14.0]
        }
    }

    /// Whether a tree/Simple all-reduce chunk shrinks with the tree's depth (`lower::tree_simple_chunk`):
    /// 2.18.5 and 2.19.3 (enqueue.cc `computeColl`); 2.20.3's `computeCollChunkInfo` dropped the rule.
    pub fn tree_simple_depth_chunk(self) -> bool {
        self <= Version::V2_19
    }

    /// Whether a ring LL or LL128 all-reduce's partial loop rounds its chunk up to a grain of the
    /// block's threads (`lower::ring_chunks`): 2.18.5 and 2.19.3 (device/all_reduce.h `runRing`,
    /// `minChunkSize`). 2.20.3 and 2.21.5 round too, by another rule not restated here: the host
    /// aligns each channel's count and then the last chunk (enqueue.cc `computeCollAlignCount`,
    /// `computeCollLastChunkInfo`: LL threads × 8 B, LL128 480 B a warp), so contend splits their
    /// partial loops evenly, which is not what they run; 2.30.7's `runRing` aligns to 16 B only.
    pub fn ring_chunk_grain(self) -> bool {
        self <= Version::V2_19
    }

    /// NVLS and NVLS-tree `hwLatencies` (µs): [NVLink NVLS, NVLink NVLS-tree, NET NVLS, NET NVLS-tree].
    pub fn nvls_hw(self) -> [f64; 4] {
        if self.before_2_21() {
            [23.0, 23.0, 18.0, 14.0]
        } else if self < Version::V2_28 {
            [25.0, 25.0, 18.0, 14.0]
        } else {
            [25.0, 25.0, 18.0, 20.9]
        }
    }

    /// 2.18.5's NVLS model (`tuning::nvls_model_old`): per-channel bandwidth of the NVLS graph's
    /// intra figure on up to two nodes, NVLS-tree's ratio 0.7 x nodes / (2 x (nodes - 1)), its
    /// latency 23 + 2 x (nodes - 1) x 19 µs without the plugin's, no NVLS all-gather or
    /// reduce-scatter.
    pub fn nvls_2_18(self) -> bool {
        self == Version::V2_18
    }

    /// Whether NCCL's NVLS model is 2.30.7's (`nvlsEfficiency`, `perChMaxNVLSTreeBws`, the ring's
    /// algorithm ratio; `tuning::nvls_model`): from 2.28.3; before, `tuning::nvls_model_old`.
    pub fn nvls_efficiency_model(self) -> bool {
        self >= Version::V2_28
    }

    /// Whether NVLS all-gather and reduce-scatter keep their bus bandwidth as algorithm bandwidth
    /// (tuning.cc: from 2.23.4 only the ring converts all-gather and reduce-scatter; before, NVLS's
    /// 5/6 applied to them too).
    pub fn nvls_gather_no_ratio(self) -> bool {
        self >= Version::V2_23
    }

    /// Whether an NVLS all-gather or reduce-scatter channel runs at min(intra x (ppn - 1) / ppn,
    /// inter x 0.9) in the old model (tuning.cc 2.27.3 to 2.27.7) rather than min(intra, inter).
    pub fn nvls_gather_ppn_share(self) -> bool {
        self >= Version::V2_27
    }

    /// Whether, and with which protocols, NCCL runs Ring for a collective its NCCL_ALGO and
    /// NCCL_PROTO lists leave nothing (graph/tuning.cc `ncclTopoTuneModel`: "at least set ring algo
    /// available", `bandwidths[c][RING][p] = ringbdw[c][p]`): not in 2.18.5 (no such line; enqueue.cc
    /// `getAlgoInfo` warns "no algorithm/protocol available"), every protocol in 2.19.3 to 2.21.5
    /// (`ringbdw` is set before the lists and LL128's gates zero anything), the protocols left on in
    /// 2.22.3 and 2.23.4 (`if (a == NCCL_ALGO_RING && pEnable == 0) comm->ringbdw[c][p] = 0`), not
    /// from 2.24.3 (the fallback is gone: NCCL stops).
    pub fn ring_restored(self) -> Option<RingRestored> {
        match self {
            Version::V2_18 => None,
            v if v < Version::V2_22 => Some(RingRestored::Every),
            v if v < Version::V2_24 => Some(RingRestored::Enabled),
            _ => None,
        }
    }

    /// Whether nccl-tests' alltoall calls ncclAlltoAll, a collective, under this release (nccl-tests
    /// src/alltoall.cu `AlltoAllRunColl`: `test_ncclVersion >= NCCL_VERSION(2,28,0)`), which NCCL
    /// discards at 0 elements (2.30.7 enqueue.cc `taskAppend`: "Empty collectives can be
    /// discarded"); before 2.28 it issues grouped ncclSend/ncclRecv, which NCCL runs at 0 bytes
    /// too (v2.21.5 enqueue.cc `taskAppend` discards count 0 only for collectives; a 0-byte p2p
    /// op is one proxy step on one channel, v2.30.7 `addP2pToPlan` `bytes == 0`).
    pub fn alltoall_collective(self) -> bool {
        self >= Version::V2_28
    }

    /// The fewest GPUs of a node NCCL runs NVLS (and NVLS-tree) on (transport/nvls.cc
    /// `ncclNvlsInit`, `gpuCount <= 2` returns without NVLS to 2.28.3, `gpuCount < 2` from
    /// 2.28.7). 2.20.3's extra `comm->nNodes > 1` never trips: init.cc calls it before counting
    /// the nodes.
    pub fn nvls_min_gpus(self) -> usize {
        if self < Version::V2_28 {
            3
        } else {
            2
        }
    }

    /// NVLS channels (CTAs) a communicator runs (transport/nvls.cc): 16 on Hopper; on Blackwell
    /// NVLS_NCHANNELS_SM100's 32, from 2.27.3 NVLS_NCHANNELS_SM100_NVL's 24 on one node; across
    /// Blackwell nodes from 2.30.3 as `nvls_sm100` sets them.
    pub fn nvls_channels(self, cc: u32, nodes: usize, net: NvlsNet) -> usize {
        if let Some((channels, ..)) = self.nvls_sm100(cc, nodes, net) {
            return channels;
        }
        match cc {
            c if c >= 100 && (nodes > 1 || self < Version::V2_27) => 32,
            c if c >= 100 => 24,
            _ => 16,
        }
    }

    /// NVLS's chunk (NCCL_NVLS_CHUNKSIZE's 128 KiB, `tuning::NVLS_CHUNK`) and NVLS-tree's largest
    /// chunk as NCCL's tuning sets them (None: its fallback, `tuning::nvls_tree_first`): across
    /// Blackwell nodes from 2.30.3 `nvls_sm100`'s, elsewhere the default and None.
    pub fn nvls_chunks(self, cc: u32, nodes: usize, net: NvlsNet) -> (u64, Option<u64>) {
        match self.nvls_sm100(cc, nodes, net) {
            Some((_, chunk, tree_max)) => (chunk, Some(tree_max)),
            None => (super::tuning::NVLS_CHUNK, None),
        }
    }

    /// `ncclNvlsTreeSm100Tuning` (transport/nvls.cc, v2.30.3-1 to v2.30.7-1; none before): on
    /// Blackwell across nodes, NVLS's channels, its chunk and NVLS-tree's largest chunk by the node
    /// count, the GPUs a node (ppn), the least GPU-to-NIC bandwidth (`minNetBw`, NCCL's GB/s) and
    /// whether the NVLS graph reaches its NICs within PXB (`typeInter`). On 2 nodes at 48 GB/s or
    /// more: 32 channels, NVLS-tree 128 KiB (ppn at most 4: both chunks 256 KiB; ppn 16 or more, or
    /// at most 8 within PXB below 96 GB/s: 64 KiB); beyond 2 nodes at 96 or more: 24 channels and
    /// both 256 KiB to ppn 8, else 32 and 128 KiB (64 from ppn 32); at 48 to 96: 24 channels and
    /// 128 KiB (64 within PXB). Below 48 GB/s the defaults: (channels, chunk, NVLS-tree's largest).
    fn nvls_sm100(self, cc: u32, nodes: usize, net: NvlsNet) -> Option<(usize, u64, u64)> {
        if self < Version::V2_30 || cc < 100 || nodes < 2 {
            return None;
        }
        const K: u64 = 1024;
        let NvlsNet { ppn, bw, pxb } = net;
        let fallback = if nodes >= 4 { 64 * K } else { 128 * K };
        Some(if nodes == 2 && bw >= 48.0 {
            if ppn <= 4 {
                (32, 256 * K, 256 * K)
            } else if ppn >= 16 || (ppn <= 8 && pxb && bw < 96.0) {
                (32, 128 * K, 64 * K)
            } else {
                (32, 128 * K, 128 * K)
            }
        } else if bw >= 96.0 {
            match ppn {
                p if p <= 8 => (24, 256 * K, 256 * K),
                p if p < 32 => (32, 128 * K, 128 * K),
                _ => (32, 128 * K, 64 * K),
            }
        } else if bw >= 48.0 {
            (24, 128 * K, if pxb { 64 * K } else { 128 * K })
        } else {
            (32, 128 * K, fallback)
        })
    }

    /// Whether NCCL's model scales NVLS-tree all-reduce's bandwidth by `treeCorrectionFactor` on
    /// Blackwell with x86 hosts, 64 B to 1 GiB (tuning.cc `ncclTopoGetAlgoTime`, from v2.29.2-1;
    /// v2.28.9-1 corrects the tree only).
    pub fn nvls_tree_correction(self) -> bool {
        self >= Version::V2_29
    }

    /// `llMaxBws`' Hopper row (single node / two nodes / more).
    pub fn ll_max_hopper(self) -> [f64; 3] {
        if self.before_2_21() {
            [87.7, 22.5, 19.0]
        } else {
            [141.0, 45.0, 35.0]
        }
    }

    /// Blackwell's per-channel rows below are the only copy (`tuning::per_ch_max` reads them for
    /// the cost model and, at 2.30, the lowering).
    /// Blackwell's `perChMaxRingLL128Bws` row (GB/s a channel, 1 / 2 / more nodes): twice Hopper's
    /// from 2.25.1, 34.6 on two nodes from 2.28.7, 40 from 2.29.7 (2.29.2: 34.5, 34.6, 34.5).
    pub fn ring_ll128_blackwell(self) -> [f64; 3] {
        if self < Version::V2_28 {
            [73.4, 73.4, 73.4]
        } else if self < Version::V2_29 {
            [73.4, 34.6, 73.4]
        } else {
            [40.0, 40.0, 40.0]
        }
    }

    /// Blackwell's `perChMaxTreeBws` and `perChMaxTreeLL128Bws` rows: twice Hopper's in 2.25.1 to
    /// 2.27.7, measured ones from 2.28.3.
    pub fn tree_blackwell(self) -> ([f64; 3], [f64; 3]) {
        if self < Version::V2_28 {
            ([77.4, 82.8, 72.0], [73.4, 73.4, 58.0])
        } else {
            ([70.0, 42.8, 24.0], [55.6, 31.67, 20.0])
        }
    }

    /// Blackwell's `perChMaxNVLSTreeBws` row: 43.8 GB/s beyond two nodes to 2.29.7 (2.28.3 and 2.28.7:
    /// 43.1), 80 in 2.30.
    pub fn nvls_tree_blackwell(self) -> [f64; 3] {
        if self < Version::V2_30 {
            [0.0, 96.0, 43.8]
        } else {
            [0.0, 96.0, 80.0]
        }
    }

    /// NCCL's search speeds on Hopper (search.cc `sm90SpeedArrayIntra`, `sm90SpeedArrayInter`, GB/s a
    /// channel): v2.18.5-1's intra list has no 50 and no 11 and its inter list no 22; v2.19.3-1 and
    /// v2.20.3-1 add 50 and 22; v2.21.5-1 adds 11, the same to v2.30.7-1 (read at every tag).
    pub fn hopper_speeds(self) -> (&'static [f64], &'static [f64]) {
        const INTER: &[f64] = &[48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12];
        match self {
            Version::V2_18 => (
                &[60.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0],
                &[48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12],
            ),
            Version::V2_19 | Version::V2_20 => (&[60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 6.0, 3.0], INTER),
            _ => (&[60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0], INTER),
        }
    }

    /// NCCL's search speeds on Blackwell (search.cc `sm100SpeedArrayIntra`, `sm100SpeedArrayInter`,
    /// GB/s a channel): 2.25.1 and 2.26 as below but for 18 (intra) and an inter list from 48 (45,
    /// not 45.1); 2.27.7 and 2.28 add 18 and 96 (2.27.3's starts at 47.9); 2.29.2 adds 45 (intra),
    /// 2.29.7 80 (inter); 2.30.3 86. Volta and Ampere's lists are the same from 2.18.5 to 2.30.7;
    /// Hopper's, `hopper_speeds`.
    pub fn blackwell_speeds(self) -> (&'static [f64], &'static [f64]) {
        match self {
            v if v < Version::V2_27 => (
                &[90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0],
                &[48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12],
            ),
            v if v < Version::V2_29 => (
                &[90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0],
                &[96.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12],
            ),
            Version::V2_29 => (
                &[90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0],
                &[96.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12],
            ),
            _ => (
                &[90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0],
                &[96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12],
            ),
        }
    }

    /// Share of the graph's bus bandwidth ring LL keeps (before `llMaxBws`).
    pub fn ring_ll_share(self, multi_node: bool, reduce_or_all_reduce: bool) -> f64 {
        match (self.before_2_21(), multi_node || reduce_or_all_reduce) {
            (true, true) => 1.0 / 4.0,
            (true, false) => 1.0 / 3.0,
            (false, _) => 0.5,
        }
    }

    /// Share ring LL128 keeps: 0.92, or 0.7 in old releases with fewer than two GPUs per node.
    pub fn ring_ll128_share(self, ppn: usize) -> f64 {
        if self.old() && ppn < 2 {
            0.7
        } else {
            0.92
        }
    }

    /// Network steps of a ring all-reduce, all-gather or reduce-scatter (`nInterSteps`; broadcast
    /// and reduce keep one hop's latency and never ask).
    pub fn inter_steps(self, nodes: usize, all_reduce: bool) -> f64 {
        let n = nodes as f64;
        match (nodes <= 1, all_reduce, self.old()) {
            (true, _, _) => 0.0,
            (false, true, true) => 2.0 * n,
            (false, true, false) => 2.0 * (n - 1.0),
            (false, false, _) => n - 1.0,
        }
    }

    /// Whether one GPU per node pays the tree's network latency whatever the algorithm (2.23.4 on).
    pub fn ppn1_tree_net(self) -> bool {
        !self.old()
    }

    /// Whether PAT is in NCCL's table (tuning.cc `ncclPatEnable`, 2.23.4 on) on GPUs of compute
    /// capability `cc`: 6.0 and up from 2.26.2 ("SM60 or higher for CUDA atomics"), any before.
    pub fn pat_on(self, cc: u32) -> bool {
        self >= Version::V2_23 && (self < Version::V2_26 || cc >= 60)
    }

    /// enqueue.cc's `MinTrafficPerChannel` (bytes), the traffic cell a collective's elements are
    /// split over channels in: 16 KiB in v2.23.4-1 to v2.28.9-1, 32 KiB from v2.29.2-1.
    pub fn min_traffic_per_channel(self) -> u64 {
        if self < Version::V2_29 {
            16 << 10
        } else {
            32 << 10
        }
    }

    /// PAT's own network Simple latency (µs, tuning.cc `hwLatencies[NCCL_HW_NET][NCCL_ALGO_PAT]`),
    /// which NCCL's model reads at more than one GPU a node (at one it reads the tree's): none in
    /// the table, so 0, from 2.23.4 to 2.27.7; 14 from 2.28.3 on.
    pub fn pat_net_hw(self) -> f64 {
        if self < Version::V2_28 {
            0.0
        } else {
            14.0
        }
    }

    /// PAT's share of its graph's bus bandwidth (tuning.cc `if (a == NCCL_ALGO_PAT) busBw *= …`):
    /// 0.85 in 2.23.4, 0.75 from 2.24.3 to 2.30.7.
    pub fn pat_share(self) -> f64 {
        if self < Version::V2_24 {
            0.85
        } else {
            0.75
        }
    }

    /// MAXCHANNELS (device.h): 32 to 2.24.3, 64 from 2.25.1.
    pub fn max_channels(self) -> usize {
        if self < Version::V2_25 {
            32
        } else {
            64
        }
    }

    /// Whether a communicator spanning nodes doubles its `channels` (already twice its graphs')
    /// once more (connect.cc `ncclTopoPostset`, "Use 4 compute channels per search channel to
    /// reach peak BW on <8 PPN"): where its GPUs are Hopper (`minCompCap == 90`; from 2.25.1
    /// `>= 90`) and the ring graph runs above 45 GB/s a channel; 2.18.5 and 2.19.3 while twice the
    /// channels fit MAXCHANNELS, from 2.20.3 while they are fewer than 16.
    pub fn doubles_again(self, cc: u32, nodes: usize, ring_bw: f64, channels: usize) -> bool {
        let hopper = if self < Version::V2_25 { cc == 90 } else { cc >= 90 };
        let room = if self < Version::V2_20 { 2 * channels <= self.max_channels() } else { channels < 16 };
        hopper && nodes > 1 && ring_bw > 45.0 && room
    }

    /// Whether LL128 may be on by default on GPUs of compute capability `cc`: 2.19.3 to 2.24.3
    /// enable it for 7.0, 8.0 and 9.0 only (`switch (minCompCap)`, default off), so not on an A40
    /// (8.6), a consumer card or Blackwell; 2.25.1 and 2.26 add 10.0 and 12.0; from 2.27.3 the
    /// list is gone and the path rule alone decides (with compute capability 7.0 and up).
    pub fn ll128_on(self, cc: u32) -> bool {
        if self < Version::V2_25 {
            matches!(cc, 70 | 80 | 90)
        } else if self < Version::V2_27 {
            matches!(cc, 70 | 80 | 90 | 100 | 120)
        } else {
            true
        }
    }

    /// Whether NCCL's default P2P level (paths.cc `ncclTopoCheckP2p`) is PXB on every host but an
    /// x86 AMD one with at most two GPUs (SYS there), from 2.23.4; before, SYS on every host but
    /// ARM, x86 Intel and x86 Zhaoxin ones (PXB there) (`cpu::p2p_level`).
    pub fn p2p_level_pxb_by_default(self) -> bool {
        self >= Version::V2_23
    }

    /// Whether a network peer's p2p channels and the per-peer count are 2.30.7's (paths.cc
    /// `ncclTopoGetNchannels`: the NICs or NCCL_P2P_PER_CHANNEL_NET_BW's share of their bandwidth;
    /// `ncclTopoComputeP2pChannels`: halved across nodes until a round of every peer fits), from
    /// 2.29.2; 2.20.3 to 2.28.9 take the NICs or 2 halved with scale (`p2p::net_peer`).
    pub fn p2p_net_by_bandwidth(self) -> bool {
        self >= Version::V2_29
    }
}

/// The ring's protocols NCCL restores for a collective its lists leave nothing (`Version::ring_restored`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingRestored {
    /// Every protocol, LL128 past its gates (2.19.3 to 2.21.5).
    Every,
    /// Those NCCL_PROTO and LL128's gates leave on (2.22.3, 2.23.4).
    Enabled,
}
