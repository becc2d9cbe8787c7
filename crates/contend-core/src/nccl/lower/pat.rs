//! PAT ("parallel aggregated trees"), NCCL's all-gather and reduce-scatter at one GPU per node
//! (2.23.4 on), lowered as NCCL's kernel runs it (docs/nccl.md, "PAT", has the sources).
//!
//! Every rank is joined to the ranks 2^d away for each dimension d with 2^d < n (transport/
//! generic.cc `ncclTransportPatConnect`; prims_simple.h: all-gather sends to rank - 2^d and
//! receives from rank + 2^d, reduce-scatter the other way). All-gather broadcasts each rank's
//! piece down a binomial tree, largest distance first: rank r sends on dimension d the pieces of
//! ranks r + t for t a multiple of 2^(d+1) with t + 2^d < n, its own (t = 0) first, and the piece
//! of r + t (t > 0) once it has received it, on dimension lowbit(t), from r + 2^lowbit(t).
//! Reduce-scatter is its mirror: rank r sends on dimension d the partial sum bound for rank r + s,
//! for each s < n whose lowest set bit is d, once it has received the partials for it from
//! r - 2^e on each lower dimension e with s + 2^e < n, and its own piece is done once it has the
//! partials from every dimension. Each rank thus sends n - 1 pieces a chunk, ceil((n - 2^d) /
//! 2^(d+1)) on dimension d, one piece per message unless the channel's share is small: then up
//! to `aggregation` pieces travel in one message (collectives.h `PatAGAlgorithm` /
//! `PatRSAlgorithm`: `postFreq`), so a small call sends one message per dimension.
//!
//! One thread block runs a channel's operations one after another (device/all_gather.h
//! `runPat`; from 2.26.2 several workers take the operations of one aggregated message at once),
//! each waiting for the receive it reads: a rank's message leaves after the kernel has reached it
//! (a zero-length join after the previous one and the receives its pieces need), and a chunk's
//! last operations receive what the rank does not forward, so the next chunk starts after every
//! receive of the last. A connection keeps NCCL_STEPS messages in flight (`Dag::slot_freed`).
//! The messages are ordered by dimension (all-gather largest first, reduce-scatter smallest
//! first, the order their data flows in) and by offset within one; NCCL interleaves the lowest
//! dimensions where its pipeline is deeper than n / 2 operations (more than 16 ranks at a large
//! chunk), which moves no byte and no dependency, only the kernel's order.
//!
//! Latency (NCCL's model, tuning.cc v2.23.4-1 to v2.30.7-1: base, plus log2i(nNodes) x interLat /
//! 3.5, plus nRanks x 2.8). Only the log term is per step: each message of the first loop pays its share
//! of a network step (`Call::step_net`, the tree's network latency / 3.5; NCCL charges log2(nodes)
//! of them, the depth of the trees). The base (`Call::base`) and the "linear part", nRanks x 2.8 µs
//! (`Call::step` a rank; tuning.cc: "Still a linear part; hopefully we'll manage to remove it"),
//! are per call: a fitted term, not the cost of a kernel operation (a piece's copy takes
//! nanoseconds; an aggregated message's pieces are posted once, collectives.h `postSend`). They
//! are paid once per rank at its kernel's start, which every chain of the call passes; paid per
//! piece, a small call (all of a dimension's pieces in one message) would wait for its dimension's
//! 2.8 µs terms before each send and end later than a large one that overlaps them; paid on a
//! rank's first message, an all-gather at n = 2^k + 1 would skip it (its first message, on the top
//! dimension, is never forwarded).

use super::{loops, Call, Dag};
use crate::nccl::tuning::NCCL_STEPS;
use crate::nccl::{Coll, Proto};

/// The chunk NCCL moves a piece in (enqueue.cc `calcCollChunking`, v2.23.4-1 to v2.30.7-1, called
/// per channel with that channel's bytes): one step of the Simple buffer (`step`), halved while
/// the channel's bytes (`channel`, every rank's pieces) are less than 32 chunks (all-gather) or 16
/// (reduce-scatter), down to 64 KiB.
pub fn chunk(coll: Coll, step: u64, channel: u64) -> u64 {
    let times = if coll == Coll::AllGather { 32 } else { 16 };
    let mut c = step;
    while c * times > channel && c > 65536 {
        c /= 2;
    }
    c
}

/// The channels NCCL's plan gives a PAT call of `bytes` (every rank's) on `ranks` ranks with
/// `channels` at most (enqueue.cc `scheduleCollTasksToPlan`, v2.23.4-1 to v2.30.7-1, one call
/// alone): its per-rank elements in cells of `min_traffic` traffic (`MinTrafficPerChannel`;
/// traffic = bytes x ranks for all-gather and reduce-scatter, `ncclFuncTrafficPerByte`), a
/// channel taking ceil(traffic per channel / a cell's traffic) of them, so a call under
/// `channels` cells runs on fewer channels: one below one cell. (2.23.4 takes the traffic per
/// channel as max(cell, traffic / channels), 2.30.7 as traffic / channels rounded up to 16 B with
/// the traffic at least a cell: the same count.) NCCL's last channel then takes the remainder;
/// the lowering splits evenly over the count.
pub fn cell_channels(bytes: u64, ranks: usize, channels: usize, min_traffic: u64) -> usize {
    let (n, channels) = (ranks.max(1) as u64, channels.max(1) as u64);
    let cell = min_traffic.div_ceil(n).div_ceil(16) * 16;
    let cells = (bytes / n).div_ceil(cell).max(1);
    let traffic = (bytes / n * n).max(min_traffic);
    let per_channel = (traffic.div_ceil(channels)).div_ceil(16) * 16;
    let per = cells.min(per_channel.div_ceil(cell * n)).max(1);
    // The first channel's cells, then full channels, then the rest; more than `channels` cannot be.
    (cells.div_ceil(per)).min(channels) as usize
}

/// Pieces one message carries (collectives.h `PatAGAlgorithm` / `PatRSAlgorithm` constructors,
/// `postFreq`): doubled while a chunk holds at least twice that many of the channel's pieces of
/// `piece` bytes, below n / 2.
pub fn aggregation(chunk: u64, piece: u64, n: usize) -> usize {
    let mut a = 1usize;
    while chunk / (piece.max(1) * a as u64) >= 2 && a < n / 2 {
        a *= 2;
    }
    a
}

/// The dimensions of `n` ranks: d with 2^d < n.
pub fn dims(n: usize) -> usize {
    (usize::BITS - (n.max(1) - 1).leading_zeros()) as usize
}

/// The offsets a rank sends on dimension `d` (all-gather: t, the piece of rank r + t;
/// reduce-scatter: s, the partial bound for rank r + s), ascending.
pub fn offsets(coll: Coll, n: usize, d: usize) -> Vec<usize> {
    let step = 1usize << d;
    if coll == Coll::AllGather {
        (0..n).step_by(2 * step).filter(|t| t + step < n).collect()
    } else {
        (step..n).step_by(2 * step).collect()
    }
}

/// The (dimension, offset) pieces a rank must have received before sending `offset` on `d`:
/// the all-gather piece t > 0 from dimension lowbit(t), offset t - 2^lowbit(t) there; the
/// reduce-scatter partial s from each lower dimension e with s + 2^e < n, offset s + 2^e.
pub fn needs(coll: Coll, n: usize, d: usize, offset: usize) -> Vec<(usize, usize)> {
    if coll == Coll::AllGather {
        if offset == 0 {
            return Vec::new();
        }
        let e = offset.trailing_zeros() as usize;
        vec![(e, offset - (1 << e))]
    } else {
        (0..d).filter(|e| offset + (1 << e) < n).map(|e| (e, offset + (1 << e))).collect()
    }
}

/// Messages a rank sends on each dimension in one chunk: its offsets in groups of `agg`.
pub fn messages(coll: Coll, n: usize, agg: usize) -> Vec<Vec<Vec<usize>>> {
    (0..dims(n)).map(|d| offsets(coll, n, d).chunks(agg.max(1)).map(<[usize]>::to_vec).collect()).collect()
}

/// What a channel of a PAT call moves (`share` bytes, every rank's pieces): a piece, the chunk
/// it moves in, pieces a message and the messages a rank sends a chunk, by dimension. One
/// derivation for the run (`pat`) and `--explain` (`describe`).
pub struct Plan {
    pub piece: u64,
    pub chunk: u64,
    pub agg: usize,
    pub messages: Vec<Vec<Vec<usize>>>,
}

impl Plan {
    pub fn of(c: &Call, share: u64) -> Plan {
        let n = c.devices.len();
        let piece = share.div_ceil(n.max(1) as u64);
        let chunk = chunk(c.coll, c.buff[Proto::Simple as usize] / NCCL_STEPS, share);
        let agg = aggregation(chunk, piece, n);
        Plan { piece, chunk, agg, messages: messages(c.coll, n, agg) }
    }
}

/// `--explain`'s account of a PAT call's steps: the dimensions and peers, the pieces each rank
/// sends on each, and a channel's chunk and messages.
pub fn describe(c: &Call) -> String {
    let n = c.devices.len();
    let share = c.bytes.div_ceil(c.channels().max(1) as u64);
    let Plan { piece, chunk, agg, messages: plan } = Plan::of(c, share);
    let (sign, how) = if c.coll == Coll::AllGather {
        ("-", "all-gather: every piece down a binomial tree, largest step first")
    } else {
        ("+", "reduce-scatter: partial sums up binomial trees, smallest step first")
    };
    let peers: Vec<String> = (0..plan.len()).map(|d| format!("{sign}{}", 1usize << d)).collect();
    let pieces: Vec<String> = plan.iter().map(|ms| ms.iter().map(Vec::len).sum::<usize>().to_string()).collect();
    let msgs: usize = plan.iter().map(Vec::len).sum();
    format!(
        "PAT on {n} ranks: {} steps, to ranks {} ({how}); a rank sends {} pieces a chunk ({}); a channel's {share} B in {} chunk(s), {} B a piece, {agg} piece(s) a message: {msgs} message(s) a rank a chunk",
        plan.len(),
        peers.join(", "),
        n - 1,
        pieces.join(", "),
        piece.div_ceil(chunk),
        piece.min(chunk)
    )
}

/// The channel's share (`share` bytes, every rank's pieces) as PAT's messages.
pub(super) fn pat(c: &Call, share: u64, d: &mut Dag) {
    let n = c.devices.len();
    let ag = c.coll == Coll::AllGather;
    let Plan { piece, chunk, messages: plan, .. } = Plan::of(c, share);
    let nd = plan.len();
    // Where each (dimension, offset) travels: its message's index on that dimension.
    let at: Vec<std::collections::HashMap<usize, usize>> =
        plan.iter().map(|ms| ms.iter().enumerate().flat_map(|(k, m)| m.iter().map(move |&o| (o, k))).collect()).collect();
    // All-gather sends to r - 2^d, reduce-scatter to r + 2^d; a piece is received from the other side.
    let peer = |r: usize, d: usize, to: bool| if to == ag { (r + n - (1 << d)) % n } else { (r + (1 << d)) % n };
    let order: Vec<usize> = if ag { (0..nd).rev().collect() } else { (0..nd).collect() };
    let dev = |r: usize| c.devices[r];
    // Per rank, the kernel's last join; per rank and dimension, the messages sent so far.
    let mut kernel: Vec<Option<usize>> = vec![None; n];
    let mut sent: Vec<Vec<Vec<usize>>> = vec![vec![Vec::new(); nd]; n];
    for (l, block) in loops(piece, chunk).into_iter().enumerate() {
        let first = l == 0;
        // This loop's messages, by rank, dimension and index.
        let mut now: Vec<Vec<Vec<usize>>> = vec![vec![Vec::new(); nd]; n];
        for &dim in &order {
            for r in 0..n {
                for m in &plan[dim] {
                    // The receives this message's pieces need: the sender's message holding each.
                    let deps: Vec<Option<usize>> =
                        m.iter().flat_map(|&o| needs(c.coll, n, dim, o)).map(|(e, o)| now[peer(r, e, false)][e].get(at[e][&o]).copied()).collect();
                    // The per-call terms at the kernel's start (module comment).
                    let start = if kernel[r].is_none() { c.base + n as f64 * c.step } else { 0.0 };
                    let j = d.join(dev(r), std::iter::once(kernel[r]).chain(deps), start);
                    kernel[r] = Some(j);
                    let conn = &sent[r][dim];
                    let slot = conn.len().checked_sub(NCCL_STEPS as usize).map(|i| conn[i]);
                    let slot = d.slot_freed(slot);
                    let to = peer(r, dim, true);
                    let over = c.flush_of(r, to, Proto::Simple) + if first { c.step_net } else { 0.0 };
                    let i = d.push(dev(r), dev(to), c.wire(block * m.len() as u64, Proto::Simple), [Some(j), slot], over);
                    now[r][dim].push(i);
                    sent[r][dim].push(i);
                }
            }
        }
        // The chunk's last operations: every receive of the loop, before the next chunk.
        for r in 0..n {
            let got: Vec<Option<usize>> = (0..nd).flat_map(|e| now[peer(r, e, false)][e].clone()).map(Some).collect();
            kernel[r] = Some(d.join(dev(r), std::iter::once(kernel[r]).chain(got), 0.0));
        }
    }
}
