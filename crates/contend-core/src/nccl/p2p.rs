//! How NCCL splits a send/receive over channels and chunks (restated from NVIDIA/nccl, learned
//! from, not copied): the communicator's p2p chunk (init.cc `computeBuffSizes`), its channels per
//! peer (graph/paths.cc `ncclTopoGetNchannels`, `ncclTopoComputeP2pChannels`), and per operation
//! the channels a size runs on and the chunk a network connection moves (enqueue.cc
//! `scheduleP2pTasksToPlan`, `addP2pToPlan`; before 2.23 `calcP2pChunkSize` and proxy.cc
//! `ncclProxyComputeP2p`, which give the same counts).
//!
//! NCCL gives one operation to one peer a few channels at small sizes and more as it grows: on
//! 8 NVSwitch A100s (32 p2p channels, 32 per peer) a send of 128 MiB runs on 8 channels, 256 MiB
//! on 16, 512 MiB and more on 32 (on 16 before 2.20); each channel is one thread block whose warps send and receive
//! its part, chunk by chunk, with NCCL_STEPS chunks in flight per connection.

use super::versions::Version;

/// NCCL_P2P_NET_CHUNKSIZE, NCCL_P2P_NVL_CHUNKSIZE, NCCL_P2P_PCI_CHUNKSIZE defaults (init.cc).
pub const NET_CHUNK: u64 = 1 << 17;
pub const NVL_CHUNK: u64 = 1 << 19;
pub const PCI_CHUNK: u64 = 1 << 17;
/// NCCL_P2P_PER_CHANNEL_NET_BW (paths.cc, 2.29 on): GB/s a channel to a network peer is
/// counted to move when NCCL sizes the channels that drive a GPU's NICs.
pub const PER_CHANNEL_NET_BW: f64 = 14.0;
/// NCCL_MAX_DEV_WORK_P2P_PER_BATCH (device.h): p2p operations one channel runs at once.
pub const WORK_PER_BATCH: usize = 8;
/// NCCL_STEPS (device.h): chunks a connection keeps in flight.
pub const STEPS: usize = super::tuning::NCCL_STEPS as usize;
/// NCCL_SHARED_STEPS (transport/net.cc): chunks in flight over all the channels of one p2p
/// operation to a network peer, whose connections share their buffers (NCCL_NET_SHARED_BUFFERS,
/// on by default for p2p): the send proxy posts at most min(NCCL_STEPS, 16 / channels) a channel.
pub const SHARED_STEPS: usize = 16;

/// Chunks one channel of an operation on `channels` channels keeps in flight to a network peer.
pub fn net_depth(channels: usize) -> usize {
    (SHARED_STEPS / channels.max(1)).clamp(1, STEPS)
}

/// The communicator's p2p chunk: the network's when it spans nodes, NVLink's when `nvlink`
/// (`ncclTopoPathAllNVLink` holds: every GPU pair of the node on NVLink from 2.25, one pair
/// before, `Version::nvl_chunk_needs_every_pair`), else PCI's; no more than a Simple step
/// (NCCL_BUFFSIZE over NCCL_STEPS).
pub fn chunk(nodes: usize, nvlink: bool, buffsize: u64) -> u64 {
    let c = if nodes > 1 {
        NET_CHUNK
    } else if nvlink {
        NVL_CHUNK
    } else {
        PCI_CHUNK
    };
    c.min(buffsize / STEPS as u64)
}

/// Channels NCCL gives a peer on the node: two per NVLink's worth of NCCL's per-link figure
/// (`nvl_bw`, topo.h SMxx_NVLINK_BW) on the path, two over PCIe. `path_bw`: None for PCIe.
pub fn local_peer(path_bw: Option<f64>, nvl_bw: f64) -> usize {
    match path_bw {
        Some(bw) => 2 * ((bw / nvl_bw + 1e-9).floor() as usize).max(1),
        None => 2,
    }
}

/// Channels NCCL gives a peer on another node, by release: 2.18 and 2.19 NCCL_NCHANNELS_PER_NET_PEER's
/// 2; 2.20 to 2.28 the GPU's NICs (`net_count`, as many as its bandwidth needs) or 2, halved while
/// 2 x ranks exceeds 4 x the p2p channels; from 2.29 the NICs or as many channels of
/// `PER_CHANNEL_NET_BW` as their bandwidth (`net_bw`, GB/s) needs (`Version::p2p_net_by_bandwidth`).
pub fn net_peer(v: Version, net_count: usize, net_bw: f64, ranks: usize, p2p_channels: usize) -> usize {
    if v.p2p_net_by_bandwidth() {
        return net_count.max((net_bw / PER_CHANNEL_NET_BW).ceil() as usize).max(1);
    }
    if v < Version::V2_20 {
        return 2;
    }
    let mut n = 2;
    while n * ranks > 4 * p2p_channels && n > 1 {
        n /= 2;
    }
    net_count.max(n)
}

/// The communicator's channels per peer: the least over its peers (`least`), a power of two; from
/// 2.29 across nodes halved while a round of every peer would need more than the p2p channels
/// (`WORK_PER_BATCH` operations a channel), else no more than the p2p channels.
pub fn per_peer(v: Version, least: usize, nodes: usize, ranks: usize, p2p_channels: usize) -> usize {
    let mut n = least.max(1).next_power_of_two();
    if v.p2p_net_by_bandwidth() && nodes > 1 {
        while n * ranks.div_ceil(WORK_PER_BATCH) > p2p_channels && n > 1 {
            n /= 2;
        }
    }
    n.min(p2p_channels)
}

/// NCCL_P2P_LL_THRESHOLD is per channel: a send/receive of `bytes` on `channels` runs LL up to
/// channels times it, else Simple (enqueue.cc).
pub fn proto(bytes: u64, channels: usize) -> super::Proto {
    if bytes <= channels as u64 * super::tuning::P2P_LL_THRESHOLD {
        super::Proto::Ll
    } else {
        super::Proto::Simple
    }
}

/// How one operation may be split (enqueue.cc `scheduleP2pTasksToPlan`): the channels it starts
/// from (`min`) and may double to (`max`), and the least and most bytes of a part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpSplit {
    pub min: usize,
    pub max: usize,
    pub min_part: u64,
    pub max_part: u64,
}

/// The split of one operation under release `v`. Both bounds start at the per-peer channels.
/// From 2.20 the start is halved until every rank's operation fits the p2p channels at once, and
/// a part across nodes is half a chunk to one chunk. In 2.18.3 to 2.19 (2.18 and 2.19 here) both
/// are cut on one node only (2.14 to 2.18.1 cut them on any number of nodes): the start as from 2.20, and the most halved while it x ranks exceeds
/// 4 x the p2p channels ("avoid overloading channels with 8+ operations", removed in 2.20.3); a
/// part is at least 1/8 of a chunk on any number of nodes. On one node a part holds up to 32
/// chunks in every release.
pub fn op_split(v: Version, per_peer: usize, p2p_channels: usize, ranks: usize, nodes: usize, chunk: u64) -> OpSplit {
    let per_peer = per_peer.max(1);
    let halve = |mut n: usize, limit: usize| {
        while n * ranks > limit && n > 1 {
            n /= 2;
        }
        n
    };
    let old = v < Version::V2_20;
    let min = if old && nodes > 1 { per_peer } else { halve(per_peer, p2p_channels) };
    let max = if old && nodes == 1 { halve(per_peer, 4 * p2p_channels) } else { per_peer };
    let min_part = if nodes > 1 && !old { chunk / 2 } else { chunk / 8 };
    let max_part = if nodes > 1 { chunk } else { chunk * 32 };
    OpSplit { min, max, min_part: min_part.max(1), max_part }
}

/// Channels one operation of `bytes` runs on: `split.min` (fewer where a part would be under
/// `split.min_part`), doubled up to `split.max` while a part would exceed `split.max_part`.
pub fn op_channels(bytes: u64, split: &OpSplit) -> usize {
    if bytes == 0 {
        return 1;
    }
    let mut n = split.min.min(bytes.div_ceil(split.min_part) as usize).max(1);
    let mut part = split.min_part.max(bytes.div_ceil(n as u64));
    while part > split.max_part && n <= split.max / 2 {
        n *= 2;
        part = bytes.div_ceil(n as u64);
    }
    n
}

/// The chunk a connection to a network peer moves for an operation of `bytes` (Simple): a
/// quarter of the p2p chunk below one chunk, half below eight; the p2p chunk otherwise and
/// inside a node.
pub fn op_chunk(bytes: u64, chunk: u64, network: bool) -> u64 {
    if !network {
        chunk
    } else if bytes < chunk {
        chunk / 4
    } else if bytes < 8 * chunk {
        chunk / 2
    } else {
        chunk
    }
}
