//! The NCCL releases whose cost model contend restates, and what differs between them.
//!
//! NCCL's choice of algorithm and protocol (src/graph/tuning.cc) changed between releases; a
//! public nccl-tests table is NCCL's choice under the release it ran. `nccl_version` picks the
//! release whose constants `tuning::model` uses. Only the choice changes, but for NVLS-tree's
//! first chunk (`tuning::nvls_tree_first`: a Simple step before 2.21) and tree/Simple's chunk
//! (`lower::tree_simple_chunk`: shrunk by the tree's depth before 2.20): the lowering's chunks,
//! channels and per-step latencies stay NCCL 2.30.7's (tree/Simple's `hwLatencies` went 28 µs
//! (2.16) -> 4 (2.18.3) -> 28 (2.19) -> 4 (2.23) with the same tree kernel, so they steer the choice
//! rather than time a step).
//!
//! Restated from NVIDIA/nccl's tags (learned from, not copied), file src/graph/tuning.cc, by
//! comparing each with v2.30.7-1 (v2.30.4-1's tuning.cc is v2.30.7-1's, formatting aside):
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
//!   7.0, 8.0 and 9.0 only; no Blackwell tables (refused on Blackwell, `Comm::set_constants`).
//! - v2.20.3-1: as v2.19.3-1 on every machine contend builds (its tuning.cc differs only for
//!   MNNVL and CollNet's all-gather and reduce-scatter); a network peer's send/receive channels
//!   are 2.21.5's (paths.cc `ncclTopoGetNchannels`, the same rule in both).
//! - v2.21.5-1: as v2.19.3-1, but NVLS and NVLS-tree 25 µs on NVLink, `llMaxBws`' Hopper row
//!   (141, 45, 35) and ring LL at half the graph's bandwidth, as in 2.30.7.
//! - v2.30.7-1: `tuning.rs`' own constants.

use crate::error::{Error, Result};

/// 2.18.5's NVLS and NVLS-tree `baseLat` and NVLS-tree's network `hwLat` (µs, tuning.cc).
pub const NVLS_BASE_2_18: f64 = 23.0;
pub const NVLS_TREE_NET_2_18: f64 = 19.0;

/// A restated NCCL release (its minor version; the tag each restates is `tag`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    V2_18,
    V2_19,
    V2_20,
    V2_21,
    V2_30,
}

/// `nccl_version`'s words, oldest first, each `ALL`'s release at the same place; the last is
/// the default.
pub const NAMES: &[&str] = &["2.18", "2.19", "2.20", "2.21", "2.30"];
pub const ALL: [Version; 5] = [Version::V2_18, Version::V2_19, Version::V2_20, Version::V2_21, Version::V2_30];

impl Version {
    /// A release as NCCL prints it ("2.19", "2.19.3", "2.19.3+cuda12.2"): the minor contend
    /// restates it by (every patch release of a minor by the one tag `tag` names).
    pub fn parse(s: &str) -> Result<Version> {
        crate::params::release(NAMES, s).map(|k| ALL[k]).map_err(|nearest| {
            let near = nearest.map(|n| format!("the nearest it models is {n}; ")).unwrap_or_default();
            Error::input("nccl_version", s, format!("is not an NCCL release contend models; {near}give one of {}", NAMES.join(", ")))
        })
    }

    /// The note for a release given as a patch other than the tag contend restates (2.30.4 is
    /// run as 2.30.7's tuning.cc); None where it is the minor or the tag itself.
    pub fn patch_note(given: &str) -> Option<String> {
        let v = Version::parse(given).ok()?;
        let given = given.trim();
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
        self == Version::V2_30
    }

    /// Whether a GPU's path to a NIC under the CPU it is joined to by NVLink-C2C is P2C, through
    /// which another GPU may send by PXN (graph/paths.cc: P2C from 2.27.3, PXN over it by default,
    /// NCCL_PXN_C2C=1, from 2.28; before, the path is PHB and PXN needs its relay within PXB):
    /// 2.30 of the releases restated here (`topo::p2c`, `rails`).
    pub fn p2c(self) -> bool {
        self == Version::V2_30
    }

    /// Releases before 2.23 (the ones restated here before 2.30).
    pub fn old(self) -> bool {
        self < Version::V2_30
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
        match self {
            Version::V2_18 | Version::V2_19 | Version::V2_20 => [23.0, 23.0, 18.0, 14.0],
            Version::V2_21 => [25.0, 25.0, 18.0, 14.0],
            Version::V2_30 => [25.0, 25.0, 18.0, 20.9],
        }
    }

    /// 2.18.5's NVLS model (`tuning::nvls_model_old`): per-channel bandwidth of the NVLS graph's
    /// intra figure on up to two nodes, NVLS-tree's ratio 0.7 x nodes / (2 x (nodes - 1)), its
    /// latency 23 + 2 x (nodes - 1) x 19 µs without the plugin's, no NVLS all-gather or
    /// reduce-scatter.
    pub fn nvls_2_18(self) -> bool {
        self == Version::V2_18
    }

    /// `llMaxBws`' Hopper row (single node / two nodes / more).
    pub fn ll_max_hopper(self) -> [f64; 3] {
        if self.before_2_21() {
            [87.7, 22.5, 19.0]
        } else {
            [141.0, 45.0, 35.0]
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

    /// Whether one GPU per node pays the tree's network latency whatever the algorithm (2.30).
    pub fn ppn1_tree_net(self) -> bool {
        !self.old()
    }

    /// MAXCHANNELS (device.h): 32 to 2.21.5, 64 in 2.30.7.
    pub fn max_channels(self) -> usize {
        if self.old() {
            32
        } else {
            64
        }
    }

    /// Whether a communicator spanning nodes doubles its `channels` (already twice its graphs')
    /// once more (connect.cc `ncclTopoPostset`, "Use 4 compute channels per search channel to
    /// reach peak BW on <8 PPN"): where its GPUs are Hopper (2.30.7: Hopper or later) and the
    /// ring graph runs above 45 GB/s a channel; 2.18.5 and 2.19.3 while twice the channels fit
    /// MAXCHANNELS, from 2.20.3 while they are fewer than 16.
    pub fn doubles_again(self, cc: u32, nodes: usize, ring_bw: f64, channels: usize) -> bool {
        let hopper = if self.old() { cc == 90 } else { cc >= 90 };
        let room = if self < Version::V2_20 { 2 * channels <= self.max_channels() } else { channels < 16 };
        hopper && nodes > 1 && ring_bw > 45.0 && room
    }

    /// Whether LL128 may be on by default on GPUs of compute capability `cc`: 2.19.3 to 2.21.5
    /// enable it for 7.0, 8.0 and 9.0 only (`switch (minCompCap)`, default off), so not on an A40
    /// (8.6), a consumer card or Blackwell; 2.30.7 leaves it to the path rule alone.
    pub fn ll128_on(self, cc: u32) -> bool {
        !self.old() || matches!(cc, 70 | 80 | 90)
    }
}
