//! NCCL's own choice of algorithm and protocol: its public cost model (time = latency +
//! bytes / bandwidth per algorithm and protocol), with every constant named.
//!
//! Source: NVIDIA/nccl v2.30.7 (commit 5067397), src/graph/tuning.cc (`ncclTunerConstantsDefaults`,
//! `ncclTopoTuneModel`, `ncclTopoGetAlgoTime`), src/include/device.h, src/include/comm.h and
//! src/enqueue.cc (`topoGetAlgoInfo`'s channel and thread trimming). Learned from, not copied:
//! the arithmetic is restated here for the algorithms contend lowers (ring, tree).
//! This model only *chooses*; the times contend reports come from running the lowering on
//! the executor.

use super::versions::{self, Version};
use super::{Algo, Coll, Proto};

/// Hardware classes of NCCL's latency table (NCCL_HW_NVLINK, NCCL_HW_PCI, NCCL_HW_NET).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hw {
    Nvlink,
    Pci,
    Net,
}

/// `baseLatencies` (µs) per algorithm (NCCL's order: Tree, Ring, CollNetDirect, CollNetChain,
/// NVLS, NVLSTree) and protocol (LL, LL128, Simple).
pub const BASE_LATENCY_US: [[f64; 3]; 6] = [[6.8, 14.0, 8.4], [6.6, 14.0, 8.4], [0.0; 3], [0.0; 3], [0.0; 3], [0.0; 3]];

/// `hwLatencies` (µs) per hardware class, algorithm (as `BASE_LATENCY_US`), protocol.
pub const HW_LATENCY_US: [[[f64; 3]; 6]; 3] = [
    [[0.6, 1.25, 4.0], [0.6, 1.9, 3.4], [0.0, 0.0, 3.7], [0.0, 0.0, 2.8], [0.0, 0.0, 25.0], [0.0, 0.0, 25.0]], // NVLink
    [[1.0, 1.9, 4.0], [1.0, 2.5, 5.7], [0.0, 0.0, 3.7], [0.0, 0.0, 2.8], [0.0; 3], [0.0; 3]],                  // PCI
    [[5.0, 8.5, 14.0], [2.7, 4.0, 14.0], [0.0, 0.0, 31.0], [0.0, 0.0, 30.0], [0.0, 0.0, 18.0], [0.0, 0.0, 20.9]], // NET
];

/// Seconds a Simple step's handshake takes over NVLink where its thread block synchronises
/// (a slice: wait on the peer's flag, copy, barrier, post): NCCL's per-step NVLink figure for a
/// ring Simple step (`hwLatencies`), the one a ring's slice pays (`lower::simple_slices`). An
/// NVLS chunk pays it too (`lower::nvls`); NVLS's own 25 µs is its call's, counted once
/// (tuning.cc v2.30.7 lines 424-426: `latencies = intraLat`), so it times no step.
pub fn nvlink_simple_step() -> f64 {
    HW_LATENCY_US[Hw::Nvlink as usize][Algo::Ring as usize][Proto::Simple as usize] * 1e-6
}

/// `nvlsEfficiency` by GPU generation (Volta, Ampere, Hopper, Blackwell): the share of its
/// NVLS graph's bandwidth NCCL's model credits NVLS with. contend also takes it as the share of
/// the NVLink bandwidth multimem operations reach (docs/nccl.md, "NVLS"); `nccl_eff_nvls`
/// replaces it.
pub const NVLS_EFFICIENCY: [f64; 4] = [0.0, 0.0, 0.85, 0.74];
/// `perChMaxNVLSTreeBws` (GB/s per channel) by GPU generation (Volta, Ampere, Hopper) x nodes
/// class; Blackwell's row is the release's (`per_ch_max`, `Version::nvls_tree_blackwell`).
pub const PER_CH_MAX_NVLS_TREE_BW: [[f64; 3]; 3] = [[26.5, 18.5, 10.0], [24.0, 23.6, 17.8], [0.0, 57.7, 45.5]];

/// NCCL's search speeds between nodes (search.cc `speedArrayInter`, `sm90SpeedArrayInter`,
/// `sm100SpeedArrayInter`), GB/s per channel: 2.30.7's (the graphs are searched before the
/// release is read; the tree graph is searched again by release, `release_speeds`).
pub fn inter_speeds(cc: u32) -> &'static [f64] {
    if cc >= 100 {
        Version::V2_30.blackwell_speeds().1
    } else if cc >= 90 {
        Version::V2_30.hopper_speeds().1
    } else {
        &[48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24, 0.12]
    }
}

/// The highest of the inter-node search speeds `s` at most `bw` GB/s (the slowest where none is).
pub fn inter_speed(s: &[f64], bw: f64) -> f64 {
    s.iter().copied().find(|&v| v <= bw + 1e-9).unwrap_or(s[s.len() - 1])
}

/// NVLS-tree's chunk (`calcCollChunking`): `first` (`nvls_tree_first`), smaller for calls too
/// small to fill every head's pipeline.
pub fn nvls_tree_chunk(bytes: u64, channels: usize, heads: usize, first: u64) -> u64 {
    let ops = (channels * heads) as u64;
    let mut chunk = first;
    for (times, cap) in [(32, 262144), (16, 131072), (4, 65536), (1, 32768)] {
        if bytes < times * ops * chunk && chunk > cap {
            chunk = cap;
        }
    }
    chunk
}

/// The chunk NVLS-tree starts from before its size rule (`calcCollChunking`): a Simple step
/// (`step`: NCCL_BUFFSIZE / NCCL_STEPS) in 2.18.5 to 2.20.3, NVLS's chunk from 2.21.5 (`chunk`:
/// NCCL_NVLS_CHUNKSIZE's 128 KiB, or 2.30.3's Blackwell tuning's, `Version::nvls_chunks`);
/// no more than NCCL_NVLSTREE_MAX_CHUNKSIZE (`max`: a parameter from 2.20.3, which aws-ofi-nccl
/// 1.8.1 sets to 512 KiB, or 2.30.3's tuning's; unset, 64 KiB from 4 nodes on); 2.19.3 sets 64
/// KiB from 4 nodes on, whatever the step; 2.18.5 has neither.
pub fn nvls_tree_first(v: Version, step: u64, chunk: u64, max: Option<u64>, nodes: usize) -> u64 {
    let first = if v < Version::V2_21 { step } else { chunk };
    if v.nvls_2_18() {
        return first;
    }
    if v == Version::V2_19 {
        // 2.19.3 sets the chunk (enqueue.cc `chunkSize = 65536`), raising a smaller step too.
        return if nodes >= 4 { 65536 } else { first };
    }
    let max = max.filter(|_| v >= Version::V2_20).unwrap_or(if nodes >= 4 { 65536 } else { first });
    first.min(max)
}

/// NCCL_NVLS_CHUNKSIZE's default (nvls.cc), bytes.
pub const NVLS_CHUNK: u64 = 128 * 1024;
/// NCCL_MAX_NVLS_ARITY (device.h): most GPUs of a node in one NVLS group.
pub const MAX_NVLS_ARITY: usize = 32;

/// Whether NCCL reduces this nccl-tests datatype on NVLS with a sum (device.h `ncclNvlsSupported`:
/// multimem reductions take 16-, 32- and 64-bit integers and floats; 8-bit types and fp8 are not
/// among them, so NCCL runs their reductions on rings and trees).
pub fn nvls_reduces(dtype: &str) -> bool {
    !matches!(dtype, "int8" | "uint8" | "char")
}

/// Whether NCCL may run `coll` of `dtype` with `algo`: NVLS and NVLS-tree only where its
/// multimem reduces the type (`nvls_reduces`), every other algorithm the collective has.
pub fn runs(coll: Coll, dtype: &str, algo: Algo) -> bool {
    !(coll.reduces() && !nvls_reduces(dtype) && matches!(algo, Algo::Nvls | Algo::NvlsTree))
}

/// NVLS's chunk for a call of `bytes` on `channels` channels and `heads` heads
/// (`calcCollChunking`: smaller chunks for calls too small to fill every head's pipeline).
pub fn nvls_chunk(bytes: u64, channels: usize, heads: usize) -> u64 {
    let ops = (channels * heads) as u64;
    let mut chunk = NVLS_CHUNK;
    if bytes < 64 * ops * chunk && chunk > 65536 {
        chunk = 65536;
    }
    if bytes < 8 * ops * chunk && chunk > 32768 {
        chunk = 32768;
    }
    if bytes < 2 * ops * chunk && chunk > 16384 {
        chunk = 16384;
    }
    chunk
}

/// `llMaxBws` (GB/s): [single node: by GPU generation Volta, Ampere, Hopper, Blackwell] x
/// [1 node, 2 nodes, more]; multi-node rows are by CPU (Intel row 0, AMD row 1).
pub const LL_MAX_BW: [[f64; 3]; 4] = [[39.0, 39.0, 20.4], [87.7, 22.5, 19.0], [141.0, 45.0, 35.0], [282.0, 90.0, 70.0]];
/// `perChMaxRingLL128Bws` (GB/s per channel) by GPU generation (Volta, Ampere, Hopper) x nodes
/// class, the same in every release; Blackwell's rows, which changed by release, are read
/// through `per_ch_max` only (`Version::ring_ll128_blackwell`, `tree_blackwell`): one copy.
pub const PER_CH_MAX_RING_LL128_BW: [[f64; 3]; 3] = [[20.0, 20.0, 20.0], [20.0, 20.0, 20.0], [36.7, 36.7, 36.7]];
/// `perChMaxTreeLL128Bws`.
pub const PER_CH_MAX_TREE_LL128_BW: [[f64; 3]; 3] = [[20.0, 20.0, 20.0], [20.0, 20.0, 20.0], [36.7, 36.7, 29.0]];
/// `perChMaxTreeBws`.
pub const PER_CH_MAX_TREE_BW: [[f64; 3]; 3] = [[26.5, 18.5, 10.0], [24.0, 23.6, 17.8], [38.7, 41.4, 36.0]];

/// `treeCorrectionFactor[protocol][log2(bytes / 64)]`, 64 B to 512 MB: the tree reads the first
/// 23 columns (to 256 MB); 2.29.2 added the 24th (1.0, 1.0, 0.9), which only NVLS-tree reads
/// (`Version::nvls_tree_correction`).
pub const TREE_CORRECTION: [[f64; 24]; 3] = [
    [1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.7, 0.7, 0.7, 0.7, 0.6, 0.5, 0.4, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0, 1.0, 1.0, 1.0],
    [1.0, 1.0, 1.0, 1.0, 1.0, 0.9, 0.8, 0.8, 0.8, 0.7, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.8, 0.9, 0.9, 0.9, 0.9, 1.0, 1.0, 1.0],
    [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.7, 0.6, 0.6, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0.7, 0.7, 0.8, 0.9, 0.9, 0.9],
];

/// LL carries 8 bytes of data in every 16-byte line (a flag beside each 4-byte word):
/// device.h `union ncclLLFifoLine`.
pub const LL_EFFICIENCY: f64 = 8.0 / 16.0;
/// LL128: 120 bytes of data in every 128-byte line (NCCL_LL128_DATAELEMS / NCCL_LL128_LINEELEMS).
pub const LL128_EFFICIENCY: f64 = 120.0 / 128.0;
/// The share of the links a tree's LL128 chain inside a node moves as data: NCCL's model credits
/// tree/LL128 on one node with 7/9 of the graph's bandwidth where tree/Simple keeps all of it and
/// LL128 across nodes 120/128 (tuning.cc `ncclTopoTuneModel`, `nNodes == 1 ? 7.0/9.0 :
/// 120.0/128.0`, the same in v2.18.5, v2.19.3, v2.20.3, v2.21.5 and v2.30.7). The kernel is the
/// same in every node (all_reduce.h `runTreeSplit` with ProtoLL128: 70% of the block's threads
/// reduce up, 30% broadcast down, where Simple splits about half and half), and on up to two
/// nodes NCCL's model reads the same intra-node graph bandwidth, so contend charges 7/9 to the
/// chain's sends between GPUs of a node on any number of nodes (in place of the wire format's
/// 120/128, which the network steps keep).
pub const TREE_LL128_NODE_SHARE: f64 = 7.0 / 9.0;
/// NCCL_STEPS: slots of a connection's FIFO (device.h).
pub const NCCL_STEPS: u64 = 8;
/// Buffer of one connection per protocol (init.cc DEFAULT_LL_BUFFSIZE = 8 lines x 512 threads x
/// 8 steps x 16 B; DEFAULT_LL128_BUFFSIZE = 120 elements x 640 threads x 8 steps x 8 B;
/// DEFAULT_BUFFSIZE = 4 MiB), in wire bytes.
pub const BUFF_BYTES: [u64; 3] = [8 * 512 * 8 * 16, 120 * 640 * 8 * 8, 1 << 22];
/// ALLREDUCE/ALLGATHER/REDUCESCATTER_CHUNKSTEPS = NCCL_STEPS / 2 (collectives.h); every other
/// collective, and every non-Simple protocol, moves one step per chunk.
pub const RING_CHUNK_STEPS: u64 = NCCL_STEPS / 2;
/// NCCL_P2P_LL_THRESHOLD: a send/recv of at most this many bytes a channel uses LL (enqueue.cc).
pub const P2P_LL_THRESHOLD: u64 = 16384;
/// MAXCHANNELS (device.h); a ring search keeps at most half of them.
pub const MAX_CHANNELS: usize = 64;
/// The channels NCCL runs collectives on (connect.cc `ncclTopoPostset`, read in v2.18.5, v2.19.3,
/// v2.20.3, v2.21.5 and v2.30.7; only MAXCHANNELS and the Hopper rule differ between them, both
/// `Version`'s): the communicator takes the least of its tree and ring
/// graphs' channels (init.cc; the tree graph is searched for the ring graph's count), and
/// `connectRings`/`connectTrees` copy each to a second channel (the copy's tree mirrored, the
/// double binary tree), at most MAXCHANNELS; across Hopper nodes again (`Version::doubles_again`).
/// `graph_channels`, `ring_bw`: the ring graph's channels and GB/s a channel, across nodes the one
/// searched through the NICs (`net_ring_graph`), on one node the GPUs' (`topo::search`). Not
/// restated: CollNet's extra half (no CollNet here) and 2.30.7's doubling for the unpack network
/// device (GPUDirect-TCPX), which no machine here has.
pub fn coll_channels(v: Version, cc: u32, nodes: usize, graph_channels: usize, ring_bw: f64) -> usize {
    let mut n = (2 * graph_channels).min(v.max_channels());
    if v.doubles_again(cc, nodes, ring_bw, n) {
        n *= 2;
    }
    n.min(v.max_channels())
}

/// Thread thresholds (comm.h): bytes per thread below which channels are dropped.
pub const THREAD_THRESHOLD: [u64; 3] = [8, 8, 64];
/// Threads per channel (device.h): NCCL_LL_MAX_NTHREADS, NCCL_LL128_MAX_NTHREADS,
/// NCCL_SIMPLE_MAX_NTHREADS (256 where ring bandwidth is at most PCI_BW = 12 GB/s).
pub const MAX_THREADS: [u64; 3] = [512, 640, 512];
/// A ring LL or LL128 all-reduce's chunk grain under NCCL 2.18.5 and 2.19.3, data bytes of a
/// 4-byte element (device/all_reduce.h `runRing`: `minChunkSize = nthreads * (calcBytePerGrain() /
/// sizeof(T))`, LL128's halved; primitives.h: LL's grain 8 bytes, LL128's 8 x 120 / 16 = 60),
/// at the threads `topoGetAlgoInfo` gives the call (halved from the protocol's most only once a
/// single channel is left, `threads_for`); 0 where the release or the call splits evenly
/// (`lower::ring_chunks`). An 8-byte type's LL128 grain is 56 bytes, not restated (a call
/// carries no element size).
pub fn ring_grain(c: &Comm, coll: Coll, algo: Algo, proto: Proto, bytes: u64, channels: usize) -> u64 {
    if !c.version.ring_chunk_grain() || coll != Coll::AllReduce || algo != Algo::Ring {
        return 0;
    }
    let threads = threads_for(c, algo, proto, bytes, channels);
    match proto {
        Proto::Ll => threads * 8,
        Proto::Ll128 => threads * 60 / 2,
        Proto::Simple => 0,
    }
}

/// Threads NCCL runs a call's channel with (enqueue.cc `topoGetAlgoInfo`, v2.19.3): the
/// protocol's most, halved while a single channel has fewer than `threadThreshold` bytes a
/// thread (down to a multiple of 128 no more), and never under three warps (`nt/WARP_SIZE < 3 ?
/// 3*WARP_SIZE : nt`, the same line in 2.18.5). Simple's extra sync warp is left out: only the
/// LL/LL128 grain reads this.
pub fn threads_for(c: &Comm, algo: Algo, proto: Proto, bytes: u64, channels: usize) -> u64 {
    let p = proto as usize;
    let threshold = THREAD_THRESHOLD[p] * if algo == Algo::Ring && proto == Proto::Ll { c.ranks as u64 } else { 1 };
    let mut threads = max_threads(c, algo, proto);
    while channels <= 1 && bytes < threads * threshold && threads.is_multiple_of(128) {
        threads /= 2;
    }
    threads.max(3 * 32)
}

/// The most threads a channel of this algorithm and protocol runs (tuning.cc `maxThreads`: ring
/// Simple 256 where the ring graph's bandwidth is at most PCI_BW).
fn max_threads(c: &Comm, algo: Algo, proto: Proto) -> u64 {
    if proto == Proto::Simple && algo == Algo::Ring && c.bw_intra * c.graph_channels as f64 <= PCI_BW {
        256
    } else {
        MAX_THREADS[proto as usize]
    }
}

/// PCI_BW (topo.h): NCCL's figure for a PCIe Gen3 x16 link, GB/s.
pub const PCI_BW: f64 = 12.0;

/// The speeds release `v`'s search tries, within a node (`inter`: false) or across nodes:
/// Blackwell's and Hopper's lists changed by release (`Version::blackwell_speeds`,
/// `Version::hopper_speeds`); Volta's and Ampere's are the same from 2.18.5 to 2.30.7.
pub fn release_speeds(v: Version, cc: u32, inter: bool) -> &'static [f64] {
    let lists = match cc {
        c if c >= 100 => v.blackwell_speeds(),
        c if c >= 90 => v.hopper_speeds(),
        _ => (speeds(cc), inter_speeds(cc)),
    };
    if inter {
        lists.1
    } else {
        lists.0
    }
}

/// NCCL's search speeds (search.cc `speedArrayIntra`, `sm90SpeedArrayIntra`,
/// `sm100SpeedArrayIntra`), GB/s per channel, by compute capability: 2.30.7's (`inter_speeds`).
pub fn speeds(cc: u32) -> &'static [f64] {
    if cc >= 100 {
        Version::V2_30.blackwell_speeds().0
    } else if cc >= 90 {
        Version::V2_30.hopper_speeds().0
    } else {
        &[40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0]
    }
}

/// NCCL's NVLink bandwidth per link (topo.h SM60/70/80/86/90/100_NVLINK_BW), GB/s.
pub fn nvlink_bw(cc: u32) -> f64 {
    match cc {
        c if c >= 100 => 40.1,
        c if c >= 90 => 20.6,
        86 => 12.0,
        c if c >= 80 => 20.0,
        c if c >= 70 => 20.0,
        _ => 18.0,
    }
}

/// One NVLink's data-sheet rate each way for the GPU generation, GB/s: NVLink 1 (P100) 20,
/// NVLink 2 and 3 (V100, A100) 25, an A40 or RTX 30 bridge link 14.0625 (112.5 GB/s over 4 links
/// both ways), NVLink 4 (H100, H200) 25, NVLink 5 (B200) 50.
pub fn nvlink_link_rate(cc: u32) -> f64 {
    match cc {
        c if c >= 100 => 50.0,
        86 => 14.0625,
        c if c >= 70 => 25.0,
        _ => 20.0,
    }
}

fn generation(cc: u32) -> usize {
    match cc {
        c if c >= 100 => 3,
        c if c >= 90 => 2,
        c if c >= 80 => 1,
        _ => 0,
    }
}

/// What the cost model needs to know of a communicator.
#[derive(Clone, Debug)]
pub struct Comm {
    pub ranks: usize,
    pub nodes: usize,
    pub cc: u32,
    /// The ring graph's channels and bandwidth per channel (GB/s) after the search.
    pub graph_channels: usize,
    pub bw_intra: f64,
    /// The network bandwidth per channel between nodes, GB/s (0 on one node).
    pub bw_inter: f64,
    /// NCCL's tree graph (`Trees`): its channels (the ring graph's) and its intra- and inter-node
    /// bandwidth per channel, GB/s (`tree_graph`).
    pub tree_channels: usize,
    pub tree_bw_intra: f64,
    pub tree_bw_inter: f64,
    /// Rings travel direct NVLink paths only (typeIntra NVL): NVLink's hardware latencies
    /// (tuning.cc `intraHw`: NCCL_HW_NVLINK only where typeIntra == PATH_NVL).
    pub nvlink: bool,
    /// Rings travel NVLink only, some steps through an intermediate GPU (typeIntra at most NVB):
    /// LL128 allowed (tuning.cc: `typeIntra <= PATH_NVB`, 2.18.3 to 2.30.7).
    pub nvlink_only: bool,
    /// Across nodes, the graph's GPU-to-NIC path type (typeInter) allows LL128: at most PXB, or
    /// PXN from compute capability 9.0 (tuning.cc, 2.21.5 and 2.30.7 with NCCL_LL128_C2C's
    /// default 1). A GPU that receives without GDR has its NIC path rerouted through its CPU,
    /// PHB (graph/paths.cc `ncclTopoComputePaths`), so LL128 is off there (`Comm::ll128_net`).
    pub ll128_net: bool,
    /// The CPUs are AMD's (for the multi-node LL row and `net_overhead`).
    pub amd: bool,
    /// The ring graph's `sameChannels` (search.cc `ncclTopoCompute`): every channel crosses each
    /// node's GPUs in the same order (`rails::Rails::same_channels`). Only broadcast's and reduce's
    /// ring latency reads it.
    pub same_channels: bool,
    /// The hosts are x86 (Intel, AMD or Zhaoxin, `cpu::Cpu`): NCCL's `cpuArch` for NVLS-tree's
    /// correction on Blackwell (`time_us`); false where the machine file names no CPU.
    pub x86: bool,
    /// NVLS (the GPUs meet in an NVSwitch that reduces and multicasts): the NVLS graph's
    /// channels (one head per GPU) and its intra- and inter-node bandwidth per channel, GB/s;
    /// 0 channels: no NVLS.
    pub nvls_heads: usize,
    pub nvls_bw_intra: f64,
    pub nvls_bw_inter: f64,
    /// The NCCL release whose cost model chooses (`nccl_version`).
    pub version: Version,
    /// µs: the latency the net plugin reports (ncclNetProperties_t.latency, `nccl_net_latency`):
    /// its graphs' `latencyInter`, which NCCL's model adds to each network step's latency, and
    /// once more for Simple ("the flush extra latency"; tuning.cc, since 2.12).
    pub net_latency: f64,
    /// NCCL_PAT_ENABLE (`nccl_pat_enable`): 0 off, 1 on, 2 NCCL's rule (`pat_on`).
    pub pat_enable: u8,
    /// NCCL_NVLS_ENABLE (`nccl_nvls_enable`): 0 leaves `nvlsSupport` 0 (transport/nvls.cc
    /// `ncclNvlsInit`, v2.18.5-1 to v2.30.7-1), so NCCL's table has no NVLS or NVLS-tree (enqueue.cc
    /// skips both without it); 1 and 2 leave NVLS to the graph (`nvls_heads`).
    pub nvls_enable: u8,
    /// An NCCL_PROTO list (or `--proto`, a rank program call's `proto`) leaves LL128 on: its
    /// `protoEnable` is 1, not NCCL's default 2, and tuning.cc applies LL128's gates only at 2
    /// (v2.18.5-1 to v2.30.7-1; `nccl::Comm::tuning_under`), so LL128 is in NCCL's table on every path.
    pub ll128_listed: bool,
}

impl Comm {
    /// The net plugin's latency a network step of `proto` carries in NCCL's model (0 on one node).
    fn net_extra(&self, proto: Proto) -> f64 {
        if self.nodes <= 1 {
            0.0
        } else if proto == Proto::Simple {
            2.0 * self.net_latency
        } else {
            self.net_latency
        }
    }
}

/// NCCL's NVLS graph on one node (search.cc, NVLS pattern, restated): one channel per GPU
/// (each GPU heads one), at the highest search speed at which every GPU's link to the switch
/// carries, both ways, one speed per channel and one more for the channel it heads. On one
/// node the search then raises the inter-node speed while it is below twice the intra one.
/// `link_bw`: the narrowest GPU-to-switch link, NCCL's GB/s. Returns (heads, intra, inter).
pub fn nvls_graph(cc: u32, gpus: usize, link_bw: f64) -> Option<(usize, f64, f64)> {
    if cc < 90 || !(2..=MAX_NVLS_ARITY).contains(&gpus) {
        return None;
    }
    let s = speeds(cc);
    // The search starts below the per-GPU total, which non-ring patterns inflate by n / (n - 1).
    let total = link_bw * gpus as f64 / (gpus as f64 - 1.0);
    let intra = s.iter().copied().find(|&v| v <= link_bw && v * gpus as f64 <= total && v * (gpus as f64 + 1.0) <= link_bw + 1e-9)?;
    let k = s.iter().position(|&v| v == intra).unwrap_or(0);
    let inter = s[..=k].iter().rev().copied().find(|&v| v >= 2.0 * intra).unwrap_or(s[0]);
    Some((gpus, intra, inter))
}

/// NCCL's ring graph across nodes (search.cc with a network, restated): each channel enters a node
/// from a NIC, crosses its GPUs as a chain and leaves by a NIC, so at a search speed a NIC carries
/// as many channels as its bandwidth holds that speed (`nets`: NCCL's bandwidth of each NIC of a
/// node, its path from a GPU included) and the GPUs as many chains as `chains(speed, want)` finds.
/// The search starts at the highest inter-node speed the best NIC path carries, keeps going down
/// while a speed is above 0.49 of the best found and keeps the most channels x speed (stopping
/// once that reaches `total_bw`, a GPU's own bandwidth, or MAXCHANNELS / 2 channels), duplicates
/// fast channels (`ncclTopoDupChannels`), then raises the speed while every channel still fits.
/// `speeds`: the release's list (`release_speeds`); `most`: its MAXCHANNELS / 2 (init.cc
/// `ringGraph->maxChannels`). Returns (channels, GB/s per channel).
pub fn net_ring_graph(cc: u32, speeds: &[f64], most: usize, nets: &[f64], total_bw: f64, chains: &dyn Fn(f64, usize) -> usize) -> Option<(usize, f64)> {
    let max_bw = nets.iter().copied().fold(0.0, f64::max);
    let fit = |s: f64| {
        let on_nics: usize = nets.iter().map(|&b| ((b + 1e-9) / s).floor() as usize).sum();
        let want = on_nics.min(most);
        if want == 0 {
            0
        } else {
            chains(s, want)
        }
    };
    let start = speeds.iter().position(|&s| s <= max_bw + 1e-9 && s <= total_bw + 1e-9)?;
    let mut best: Option<(usize, f64)> = None;
    for &s in &speeds[start..] {
        if best.is_some_and(|b| s / b.1 <= 0.49) {
            break;
        }
        let ch = fit(s);
        if ch > 0 && best.is_none_or(|b| ch as f64 * s > b.0 as f64 * b.1 + 1e-9) {
            best = Some((ch, s));
        }
        if best.is_some_and(|b| b.0 as f64 * b.1 >= total_bw - 1e-9 || b.0 == most) {
            break;
        }
    }
    let (mut ch, mut bw) = best?;
    if bw >= 25.0 && !(cc > 80 && bw < 50.0 && ch > 4) {
        let dup = (2 * ch).min(most);
        bw /= dup.div_ceil(ch) as f64;
        ch = dup;
    }
    // Pass 2: a higher speed for the same channels.
    if let Some(s) = speeds.iter().rev().copied().filter(|&s| s > bw + 1e-9).take_while(|&s| fit(s) >= ch).last() {
        bw = s;
    }
    Some((ch, bw))
}

/// NCCL's tree graph (search.cc, pattern BALANCED_TREE, restated): as many channels as the ring
/// graph has (`channels`); its inter-node speed the highest of `speeds` at most `max_bw` at which
/// they fit (`fit`: the channels the NICs carry at a speed, every one on one node); then the search's
/// second pass raises the intra-node speed alone, speed by speed, while it is below twice the
/// inter-node one and every channel's chain through the node still fits. Returns (intra, inter).
pub fn tree_graph(speeds: &[f64], channels: usize, max_bw: f64, fit: &dyn Fn(f64) -> usize, chains: &dyn Fn(f64, usize) -> usize) -> Option<(f64, f64)> {
    let k = speeds.iter().position(|&s| s <= max_bw + 1e-9 && fit(s) >= channels && chains(s, channels) >= channels)?;
    let inter = speeds[k];
    let mut intra = inter;
    for &s in speeds[..k].iter().rev() {
        if intra >= 2.0 * inter - 1e-9 || chains(s, channels) < channels {
            break;
        }
        intra = s;
    }
    Some((intra, inter))
}

/// GB/s one thread block copies device memory to device memory at most, with 8 to 20 warps at an
/// unroll of 4 or 8 16-byte words a thread (NCCL's Simple loop; a p2p send or receive runs 8 or 9
/// copying warps at unroll 8): the project's own measurement on one H100 SXM,
/// bench/device/block_rate.cu (bench/validation/data/h100-block-rate.csv: one block 46.5-47.1 GB/s;
/// 45.1 a block with 8 blocks of 16 warps). Round 24: the SM's copy rate, which a p2p channel's send
/// and receive share (`channel_rate`).
pub const P2P_BLOCK_COPY_BW: f64 = 47.0;

/// GB/s of data one transfer of one channel moves at most: NCCL's per-channel bus-bandwidth
/// ceiling for the algorithm and protocol (NCCL 2.30.7 tuning.cc, `ncclTopoTuneModel`:
/// `perChMaxTreeBws`; for LL128 the least of it times LL128's 7/9 on one node or 120/128 across
/// and `perChMaxTreeLL128Bws`), as the flows of the lowering carry it: a tree's up and down each
/// move the channel's share once in the call's time, at its algorithm bandwidth, half the bus
/// figure (NCCL's tree ratio 0.5).
///
/// Trees: a tree's LL128 chunk shrinks for small calls as NCCL's does
/// (`lower::tree_ll128_chunk`), so that its capped pipeline fill stays a few small chunks
/// (whole 576 kB chunks stored and forwarded at the capped rate put 2 x 8 A100's tree/LL128
/// 1-64 MiB at -38% .. -73%).
///
/// Ring LL128: `perChMaxRingLL128Bws` a channel fits rings (lockstep steps pay no fill) and was
/// built in round 15, then dropped: with NCCL's channel counts it never binds on a preset (one
/// hgx-h100 channel would need 36.7 GB/s), and its caps slowed the 32 x dgx-a100 sweep from 256 MiB
/// up from 12.6 to 17.1 s (its 1 GiB ring LL128 row: 11532.41 -> 11529.99 us). Broadcast and
/// reduce chains would also pay a capped chunk's fill. LL: `ll_channel_rate`. None
/// where NCCL's model has no per-channel figure (ring Simple, NVLS); NVLS-tree's
/// (`perChMaxNVLSTreeBws`) is left to its NVLink and network links.
///
/// Send/receive and all-to-all: a p2p channel's connection inside a node, whatever the call's
/// protocol (the lowering caps a pair's Simple sends inside a node only, `lower::pairs_p2p`).
/// NCCL's model has no p2p figure. A p2p channel is one block of NCCL_MAX_NTHREADS (640) threads
/// (enqueue.cc `scheduleP2pTasksToPlan`) whose warps split between the channel's send and its
/// receive (9 + 8 warps to 2.21, enqueue.cc `finishWorkP2p`; 10 + 9 from 2.22, device/sendrecv.h
/// `nSendWarpPerWork`), each copying at `COLL_UNROLL` (8 on sm80 and later). Without registered
/// buffers (nccl-tests registers none) both copy every byte: the send from the user buffer into
/// the connection's FIFO, the receive out of it (prims_simple.h `loadRecvConn`: from 2.23.4 a
/// direct mode needs registration; before, "direct read not allowed in non-register case"); so
/// one SM copies each byte twice, and a channel's send moves half that SM's copy rate
/// (`P2P_BLOCK_COPY_BW` / 2 = 23.5 GB/s, round 24). That holds on Hopper and Blackwell, which NCCL
/// runs in P2P write mode (both copies load local memory). Ampere's sm80 pairs run P2P read
/// (graph/paths.cc `ncclTopoCheckP2p`: "Enable P2P Read for Ampere/NVLink only"), so the receive's
/// loads cross NVLink, and Volta is unmeasured: those keep round 13's figure, half NCCL's one-node
/// tree figure (12 GB/s on Ampere, what the A100 sendrecv table moves a channel, 12.0-12.2 GB/s;
/// docs/validation.md). Before 2.23.4 a write-mode pair in one process writes straight into the
/// receiver's buffer (`DirectWrite`, one copy); no table has that case, and it is not modelled.
/// To another node the NIC binds: NCCL sizes those channels at 14 GB/s
/// each (`p2p::PER_CHANNEL_NET_BW`), and they are not capped.
pub fn channel_rate(cc: u32, nodes: usize, coll: Coll, algo: Algo, proto: Proto) -> Option<f64> {
    let g = generation(cc);
    let index2 = nodes_index(nodes);
    // The lowering's caps are 2.30.7's whatever the release (`versions`).
    let row = |t: PerCh| per_ch_max(Version::V2_30, t, g);
    let tree = row(PerCh::Tree)[index2];
    match (coll, algo, proto) {
        (Coll::AllToAll | Coll::SendRecv, _, _) if g >= 2 => Some(P2P_BLOCK_COPY_BW / 2.0),
        (Coll::AllToAll | Coll::SendRecv, _, _) => Some(0.5 * row(PerCh::Tree)[0]),
        (_, Algo::Tree, Proto::Simple) => Some(0.5 * tree),
        (_, Algo::Tree, Proto::Ll128) => {
            Some(0.5 * (tree * if nodes == 1 { TREE_LL128_NODE_SHARE } else { LL128_EFFICIENCY }).min(row(PerCh::TreeLl128)[index2]))
        }
        _ => None,
    }
}

/// The column of NCCL's per-node-count tables (`llMaxBws`, `perChMax*Bws`): 1, 2, more nodes.
fn nodes_index(nodes: usize) -> usize {
    nodes.clamp(1, 3) - 1
}

/// NCCL's per-channel tables (tuning.cc `perChMaxRingLL128Bws`, `perChMaxTreeBws`,
/// `perChMaxTreeLL128Bws`, `perChMaxNVLSTreeBws`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PerCh {
    RingLl128,
    Tree,
    TreeLl128,
    NvlsTree,
}

/// A per-channel table's row for GPU generation `g` under release `v`: the tables above, the same
/// in every release, for Volta to Hopper; Blackwell's rows changed between the releases that know
/// it and are kept there alone (`Version::ring_ll128_blackwell`, `tree_blackwell`,
/// `nvls_tree_blackwell`).
pub fn per_ch_max(v: Version, table: PerCh, g: usize) -> [f64; 3] {
    let blackwell = g == 3;
    match table {
        PerCh::RingLl128 if blackwell => v.ring_ll128_blackwell(),
        PerCh::Tree if blackwell => v.tree_blackwell().0,
        PerCh::TreeLl128 if blackwell => v.tree_blackwell().1,
        PerCh::NvlsTree if blackwell => v.nvls_tree_blackwell(),
        PerCh::RingLl128 => PER_CH_MAX_RING_LL128_BW[g],
        PerCh::Tree => PER_CH_MAX_TREE_BW[g],
        PerCh::TreeLl128 => PER_CH_MAX_TREE_LL128_BW[g],
        PerCh::NvlsTree => PER_CH_MAX_NVLS_TREE_BW[g],
    }
}

/// NCCL's LL ceiling for this communicator, bus bandwidth in GB/s (tuning.cc `llMaxBws`, indexed
/// as NCCL indexes it: on one node by GPU generation, across nodes by CPU vendor, then by nodes
/// 1 / 2 / more; the Hopper row by release).
pub fn ll_max(c: &Comm) -> f64 {
    let index2 = nodes_index(c.nodes);
    let index1 = if c.nodes <= 1 {
        generation(c.cc)
    } else if c.amd {
        1
    } else {
        0
    };
    if index1 == 2 {
        c.version.ll_max_hopper()[index2]
    } else {
        LL_MAX_BW[index1][index2]
    }
}

/// GB/s of data one LL channel's connection moves at most: NCCL's LL ceiling (`ll_max`, a bus
/// bandwidth for the whole call) split evenly over the call's `channels`. LL moves 8-byte lines
/// (4 data bytes and a flag) that the GPU's threads write and poll one by one, so its rate is the
/// threads', not the links', and `llMaxBws` is NCCL's figure for it. A ring's busbw is its
/// channels times the data rate of each rank's send on a channel (a rank sends 2(n - 1)/n of its
/// channel's share in the call's time for all-reduce, (n - 1)/n for all-gather and
/// reduce-scatter: busbw's own factors), so a channel at `ll_max / channels` puts the call at
/// `ll_max`; their capped steps run in lockstep and pay no fill (`channel_rate`'s ring LL128). A
/// tree's up and down each move the channel's share once at its algorithm bandwidth, half the
/// bus figure: the tree's root connections carry it (`lower::tree`; capping every hop stored and
/// forwarded capped chunks down the chains, 2-6 us a call at 1-4 KiB, which moved the fitted
/// `nccl_call_net` from 15.4 to 13.0 us). Broadcast and reduce chains are left uncapped (LL
/// forwards line by line; small calls). None also for NVLS and NVLS-tree (Simple only) and
/// send/receive (no tuner, no figure).
pub fn ll_channel_rate(c: &Comm, coll: Coll, algo: Algo, channels: usize) -> Option<f64> {
    let bus = ll_max(c) / channels.max(1) as f64;
    match (coll, algo) {
        (Coll::AllReduce | Coll::AllGather | Coll::ReduceScatter, Algo::Ring) => Some(bus),
        (Coll::AllReduce, Algo::Tree) => Some(0.5 * bus),
        _ => None,
    }
}

/// Latency (µs) and bus bandwidth (GB/s, as algorithm bandwidth) NCCL assigns to a choice;
/// None where NCCL would not use it.
pub fn model(c: &Comm, coll: Coll, algo: Algo, proto: Proto) -> Option<(f64, f64)> {
    let n = c.ranks as f64;
    let nsteps = match coll {
        Coll::AllReduce => 2.0 * (n - 1.0),
        Coll::AllGather | Coll::ReduceScatter => n - 1.0,
        _ => n,
    };
    match (coll, algo) {
        (Coll::AllToAll | Coll::SendRecv, _) | (_, Algo::P2p) => return None,
        (Coll::AllGather | Coll::ReduceScatter, Algo::Pat) => return pat_model(c, proto),
        (_, Algo::Pat) => return None,
        (Coll::AllReduce, _) => {}
        (Coll::AllGather | Coll::ReduceScatter, Algo::Nvls) => {}
        (_, Algo::Tree | Algo::Nvls | Algo::NvlsTree) => return None,
        _ => {}
    }
    let p = proto as usize;
    let v = c.version;
    let g = generation(c.cc);
    // NCCL's NVLS needs GPUs on the node (`ncclNvlsInit` counts them), its model two heads.
    if matches!(algo, Algo::Nvls | Algo::NvlsTree) && (c.ranks / c.nodes.max(1) < v.nvls_min_gpus() || c.nvls_enable == 0) {
        return None;
    }
    if matches!(algo, Algo::Nvls | Algo::NvlsTree) && !v.nvls_efficiency_model() {
        return nvls_model_old(c, coll, algo, proto);
    }
    if algo == Algo::Nvls {
        return nvls_model(c, coll, proto, g, n, nsteps);
    }
    if algo == Algo::NvlsTree {
        return nvls_tree_model(c, proto, g, n, nsteps);
    }
    let index2 = nodes_index(c.nodes);
    let ll_max = ll_max(c);
    // Each algorithm has its own graph: a tree's bandwidth is its tree graph's, whose intra-node
    // figure the search may raise to twice the inter-node one (`tree_graph`); NCCL's model takes
    // the intra figure on up to two nodes, the inter one beyond.
    let (ch, bw) = match algo {
        Algo::Tree => (c.tree_channels as f64, if c.nodes <= 2 { c.tree_bw_intra } else { c.tree_bw_inter }),
        _ => (c.graph_channels as f64, if c.nodes <= 2 { c.bw_intra } else { c.bw_inter }),
    };
    let mut bus = ch * bw;
    match (algo, proto) {
        (Algo::Ring, Proto::Ll) => bus = ll_max.min(bus * v.ring_ll_share(c.nodes > 1, matches!(coll, Coll::AllReduce | Coll::Reduce))),
        (Algo::Ring, Proto::Ll128) => bus = (bus * v.ring_ll128_share(c.ranks / c.nodes.max(1))).min(ch * per_ch_max(v, PerCh::RingLl128, g)[index2]),
        _ => {}
    }
    if algo == Algo::Tree {
        bus = (bus * 0.92).min(ch * per_ch_max(v, PerCh::Tree, g)[index2]);
        match proto {
            Proto::Ll => bus = (bus / 3.8).min(ll_max),
            Proto::Ll128 => {
                bus = (bus * if c.nodes == 1 { TREE_LL128_NODE_SHARE } else { LL128_EFFICIENCY }).min(ch * per_ch_max(v, PerCh::TreeLl128, g)[index2])
            }
            Proto::Simple => {}
        }
    }
    // Bus bandwidth to algorithm bandwidth.
    let ratio = if algo == Algo::Ring { n / nsteps } else { 0.5 };
    let algbw = bus * ratio;
    // LL128 is on by default only where rings stay on NVLink (typeIntra <= PATH_NVB), Volta on;
    // before 2.27 only on the parts NCCL lists (`Version::ll128_on`); across nodes only where
    // the NICs are near enough (`ll128_net`).
    // A list that names LL128 skips these gates (`ll128_listed`).
    if proto == Proto::Ll128 && !c.ll128_listed && (!c.nvlink_only || c.cc < 70 || !v.ll128_on(c.cc) || (c.nodes > 1 && !c.ll128_net)) {
        return None;
    }
    let a = algo as usize;
    let hw = if c.nvlink { Hw::Nvlink } else { Hw::Pci };
    let hw_lat =
        |hw: Hw, a: usize| if a == Algo::Tree as usize && proto == Proto::Simple { v.tree_simple_hw()[hw as usize] } else { HW_LATENCY_US[hw as usize][a][p] };
    let intra = hw_lat(hw, a);
    let ppn = c.ranks / c.nodes.max(1);
    let inter = if ppn == 1 && v.ppn1_tree_net() { hw_lat(Hw::Net, Algo::Tree as usize) } else { hw_lat(Hw::Net, a) } + c.net_extra(proto);
    let mut lat = if algo == Algo::Tree && proto == Proto::Simple { v.tree_simple_base() } else { BASE_LATENCY_US[a][p] };
    match algo {
        Algo::Ring => {
            if matches!(coll, Coll::Broadcast | Coll::Reduce) {
                // tuning.cc (v2.18.5 to v2.30.7): a ring graph of the same channels pays one hop's
                // latency; one whose channels differ pays it for each of its nRanks steps, Simple
                // at the tree's figure ("Add some chunk latency, waiting for proper chunk modeling").
                let hw_here = if c.nodes == 1 { hw } else { Hw::Net };
                if c.same_channels {
                    lat += hw_lat(hw_here, a);
                } else {
                    lat += nsteps * hw_lat(hw_here, if proto == Proto::Simple { Algo::Tree as usize } else { a });
                }
            } else {
                let inter_steps = v.inter_steps(c.nodes, coll == Coll::AllReduce);
                lat += (nsteps - inter_steps) * intra.max(net_overhead(c, proto)) + inter_steps * inter;
            }
        }
        Algo::Tree => {
            let log2 = (c.nodes as f64).log2().floor();
            lat += 2.0 * ((ppn as f64 - 1.0) * intra + log2 * inter);
        }
        Algo::Nvls | Algo::NvlsTree | Algo::Pat | Algo::P2p => unreachable!("NVLS, NVLS-tree, PAT and p2p return above"),
    }
    Some((lat, algbw))
}

/// PAT's `baseLatencies` (µs; 2.23.4 sets it in place, 2.28.3 on has it in the table), its
/// per-rank latency and the share of the network latency each of its log2(nodes) steps pays
/// (tuning.cc `ncclTopoTuneModel`, v2.23.4-1 to v2.30.7-1: `8 + log2i(nNodes) * (interLat / 3.5)
/// + nRanks * 2.8`, "still a linear part").
pub const PAT_BASE_US: f64 = 8.0;
pub const PAT_RANK_US: f64 = 2.8;
pub const PAT_NET_DIVISOR: f64 = 3.5;

/// Whether NCCL puts PAT in its table for this communicator (tuning.cc `ncclPatEnable`, 2.23.4
/// on): compute capability 6.0 or later from 2.26 whatever NCCL_PAT_ENABLE says (`Version::pat_on`);
/// then NCCL_PAT_ENABLE 0 turns it off; at its default 2, one GPU per node (`nNodes == nRanks`)
/// and a host network device (every network contend models: no device-offload plugin). 1 forces
/// it on at any GPUs per node, though NCCL connects it only at one (init.cc `maxLocalRanks == 1`):
/// a pick of PAT elsewhere is refused (`nccl::Comm::pick`).
pub fn pat_on(c: &Comm) -> bool {
    c.version.pat_on(c.cc)
        && match c.pat_enable {
            0 => false,
            1 => true,
            _ => c.nodes == c.ranks,
        }
}

/// PAT in NCCL's model (all-gather and reduce-scatter, Simple only, where `pat_on`): its graph is
/// the tree graph (init.cc `graphs[NCCL_ALGO_PAT] = treeGraph`), its bus bandwidth the tree
/// graph's channels times its intra (up to two nodes) or inter bandwidth times 0.85 (2.23) or 0.75
/// (2.24 on, `Version::pat_share`), kept as algorithm bandwidth (no ratio for all-gather and
/// reduce-scatter); its latency `PAT_BASE_US` + log2(nodes) x interLat / 3.5 + ranks x 2.8, with
/// interLat the tree's network Simple latency (one GPU per node) and the plugin's latency twice.
fn pat_model(c: &Comm, proto: Proto) -> Option<(f64, f64)> {
    if proto != Proto::Simple || !pat_on(c) {
        return None;
    }
    let bw = if c.nodes <= 2 { c.tree_bw_intra } else { c.tree_bw_inter };
    let bus = c.tree_channels as f64 * bw * c.version.pat_share();
    // One GPU per node: NCCL's model takes the tree's network latency (`ppn1_tree_net`, 2.23.4 on);
    // more (NCCL_PAT_ENABLE=1): PAT's own (`Version::pat_net_hw`).
    let hw = if c.nodes == c.ranks { c.version.tree_simple_hw()[Hw::Net as usize] } else { c.version.pat_net_hw() };
    let inter = hw + c.net_extra(proto);
    let log2 = (c.nodes.max(1) as f64).log2().floor();
    Some((PAT_BASE_US + log2 * inter / PAT_NET_DIVISOR + c.ranks as f64 * PAT_RANK_US, bus))
}

/// NCCL's `netOverhead` (µs): the least a ring step inside a node costs once the ring spans nodes
/// (tuning.cc `getNetOverhead`, the same body in v2.18.5 to v2.30.7): 2 µs on AMD x86 hosts, 1 µs on
/// Intel x86 and on every other CPU (and where the machine file names none), three times that for
/// Simple; 0 on one node. NCCL_NET_OVERHEAD is not read. The choice (`model`) and the lowered ring
/// step (`Comm::call_with`) both take it from here.
pub fn net_overhead(c: &Comm, proto: Proto) -> f64 {
    if c.nodes <= 1 {
        return 0.0;
    }
    let per_step = if c.amd { 2.0 } else { 1.0 };
    if proto == Proto::Simple {
        3.0 * per_step
    } else {
        per_step
    }
}

/// NVLS in NCCL's model: Simple only, two channels at least, one node (across nodes NCCL needs
/// CollNet for NVLS and runs NVLS-tree otherwise, which contend does not lower); all-reduce
/// pipelines its reduce and its multicast (twice the bandwidth); all-gather and reduce-scatter
/// keep their bus bandwidth as algorithm bandwidth. Latency: the NVLink NVLS hardware latency.
fn nvls_model(c: &Comm, coll: Coll, proto: Proto, g: usize, n: f64, nsteps: f64) -> Option<(f64, f64)> {
    let heads = c.nvls_heads as f64;
    if proto != Proto::Simple || c.nvls_heads < 2 || c.nodes > 1 {
        return None;
    }
    let ppn = n / c.nodes as f64;
    let mut intra = c.nvls_bw_intra * NVLS_EFFICIENCY[g] * (heads - 1.0) / heads;
    intra *= if coll == Coll::AllReduce { 2.0 } else { (ppn - 1.0) / ppn };
    let bus = heads * intra.min(c.nvls_bw_inter);
    let algbw = if coll == Coll::AllReduce { bus * n / nsteps } else { bus };
    Some((HW_LATENCY_US[Hw::Nvlink as usize][Algo::Nvls as usize][Proto::Simple as usize], algbw))
}

/// NVLS-tree in NCCL's model (all-reduce, Simple, several nodes): each channel's bandwidth is the
/// least of the NVLS intra bandwidth (as NVLS's all-reduce), the inter speed (doubled on two
/// nodes, where the tree's up and down use both directions of a NIC) and
/// `perChMaxNVLSTreeBws`; latency: the NVLink NVLS-tree latency and 2 log2(nodes) NET ones.
fn nvls_tree_model(c: &Comm, proto: Proto, g: usize, n: f64, nsteps: f64) -> Option<(f64, f64)> {
    let heads = c.nvls_heads as f64;
    if proto != Proto::Simple || c.nvls_heads < 2 || c.nodes < 2 {
        return None;
    }
    let index2 = if c.nodes <= 2 { 1 } else { 2 };
    let intra = c.nvls_bw_intra * NVLS_EFFICIENCY[g] * (heads - 1.0) / heads * 2.0;
    let inter = c.nvls_bw_inter * if c.nodes <= 2 { 2.0 } else { 1.0 };
    let bus = heads * intra.min(inter).min(per_ch_max(c.version, PerCh::NvlsTree, g)[index2]);
    let a = Algo::NvlsTree as usize;
    let p = Proto::Simple as usize;
    let log2 = (c.nodes as f64).log2().floor();
    let lat = BASE_LATENCY_US[a][p] + HW_LATENCY_US[Hw::Nvlink as usize][a][p] + 2.0 * log2 * (HW_LATENCY_US[Hw::Net as usize][a][p] + c.net_extra(proto));
    Some((lat, bus * n / nsteps))
}

/// NVLS and NVLS-tree in NCCL's model before 2.28 (`Version::nvls_efficiency_model`): Simple
/// only, NVLS on one node (across nodes it needs CollNet), NVLS-tree across nodes; each channel at
/// min(intra, inter) of the NVLS graph (NVLS-tree's inter halved beyond two nodes; an NVLS
/// all-gather or reduce-scatter at min(intra x (ppn - 1) / ppn, inter x 0.9) from 2.27), an
/// algorithm ratio of 5/6 (not for NVLS all-gather and reduce-scatter from 2.23); latency: the
/// NVLink figure, NVLS-tree's plus 2 log2(nodes) network ones.
fn nvls_model_old(c: &Comm, coll: Coll, algo: Algo, proto: Proto) -> Option<(f64, f64)> {
    let tree = algo == Algo::NvlsTree;
    // A graph of one channel runs (bus = 1 x bw): "NVLS/NVLStree needs at least 2 channels" is
    // from v2.28.3-1 tuning.cc (`nvls_model`, `nvls_tree_model`); to v2.27.3-1 only none is out.
    if proto != Proto::Simple || c.nvls_heads < 1 || (tree && c.nodes < 2) || (!tree && c.nodes > 1) {
        return None;
    }
    if !tree && !matches!(coll, Coll::AllReduce | Coll::AllGather | Coll::ReduceScatter) {
        return None;
    }
    let heads = c.nvls_heads as f64;
    if c.version.nvls_2_18() {
        if coll != Coll::AllReduce {
            return None;
        }
        let n = c.nodes as f64;
        let bw = if c.nodes <= 2 { c.nvls_bw_intra } else { c.nvls_bw_inter };
        let (base, net) = (versions::NVLS_BASE_2_18, versions::NVLS_TREE_NET_2_18);
        let (lat, ratio) = if tree { (base + 2.0 * (n - 1.0) * net, 0.7 * n / (2.0 * (n - 1.0))) } else { (base, 5.0 / 6.0) };
        return Some((lat, heads * bw * ratio));
    }
    let v = c.version;
    let gather = coll != Coll::AllReduce;
    let bw = if tree {
        c.nvls_bw_intra.min(if c.nodes > 2 { c.nvls_bw_inter / 2.0 } else { c.nvls_bw_inter })
    } else if gather && v.nvls_gather_ppn_share() {
        let ppn = (c.ranks / c.nodes.max(1)) as f64;
        (c.nvls_bw_intra * (ppn - 1.0) / ppn).min(c.nvls_bw_inter * 0.9)
    } else {
        c.nvls_bw_intra.min(c.nvls_bw_inter)
    };
    let ratio = if gather && v.nvls_gather_no_ratio() { 1.0 } else { 5.0 / 6.0 };
    let [nvl_nvls, nvl_tree, _, net_tree] = v.nvls_hw();
    let lat = if tree { nvl_tree + 2.0 * (c.nodes as f64).log2().floor() * (net_tree + c.net_extra(proto)) } else { nvl_nvls };
    Some((lat, heads * bw * ratio))
}

/// NCCL's predicted time (µs) of one call of `bytes` (the whole buffer for all-gather and
/// reduce-scatter), as `ncclTopoGetAlgoTime` computes it; None where the choice is off.
pub fn time_us(c: &Comm, coll: Coll, algo: Algo, proto: Proto, bytes: u64) -> Option<f64> {
    let (mut lat, mut bw) = model(c, coll, algo, proto)?;
    if bw <= 0.0 {
        return None;
    }
    let log_size = if bytes >> 6 == 0 { -1 } else { (63 - (bytes >> 6).leading_zeros()) as i64 };
    let corrected = match algo {
        Algo::Tree => (0..23).contains(&log_size),
        // 2.29.2 on: NVLS-tree too, on Blackwell with x86 hosts (tuning.cc `ncclTopoGetAlgoTime`).
        Algo::NvlsTree => (0..24).contains(&log_size) && c.cc >= 100 && c.x86 && c.version.nvls_tree_correction(),
        _ => false,
    };
    if corrected && coll == Coll::AllReduce {
        bw *= TREE_CORRECTION[proto as usize][log_size as usize];
    }
    let channels = 2 * c.graph_channels;
    if algo == Algo::Ring && proto == Proto::Simple && c.nodes > 1 && coll == Coll::AllReduce && bytes / (channels * c.ranks) as u64 >= 64 {
        lat *= if c.cc < 80 { 1.9 } else { 1.4 };
    }
    Some(lat + bytes as f64 / (1000.0 * bw))
}

/// NCCL's pick: the fastest enabled (algorithm, protocol) by its model, among `allowed`.
pub fn choose(c: &Comm, coll: Coll, bytes: u64, allowed: &[(Algo, Proto)]) -> Option<(Algo, Proto, f64)> {
    let mut best: Option<(Algo, Proto, f64)> = None;
    for &(a, p) in allowed {
        if let Some(t) = time_us(c, coll, a, p, bytes) {
            if best.is_none_or(|b| t < b.2) {
                best = Some((a, p, t));
            }
        }
    }
    best
}

/// Channels NCCL runs a call on (`topoGetAlgoInfo`): it drops channels while there are fewer
/// than `threadThreshold` bytes per thread (ring LL's threshold is per rank).
pub fn channels_for(c: &Comm, algo: Algo, proto: Proto, bytes: u64, channels: usize) -> usize {
    let p = proto as usize;
    let mut threshold = THREAD_THRESHOLD[p];
    if algo == Algo::Ring && proto == Proto::Ll {
        threshold *= c.ranks as u64;
    }
    let threads = max_threads(c, algo, proto);
    let mut nc = channels;
    while nc > 1 && bytes < nc as u64 * threads * threshold {
        nc -= 1;
    }
    nc
}
