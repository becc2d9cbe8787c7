//! A ring whose steps go through host memory (NCCL's SHM transport, between GPUs of a node
//! without a peer path), lowered as NCCL's kernels run it.
//!
//! A step through host memory is two legs: the sender's kernel stores the slice into the
//! connection's buffer in host memory, and the receiver's kernel loads it from there once the
//! store has landed (NCCL 2.30.7 src/transport/shm.cc: the buffer is host memory mapped into both
//! GPUs; the head/tail flags say when a slot is full). The ring kernel runs a channel's steps as
//! primitives one after another in one thread block (src/device/all_gather.h: `directCopySend`,
//! `directRecvCopySend` ..., `directRecv` per chunk; all_reduce.h: `directSend`,
//! `directRecvReduceSend` ..., `directRecv`): step 0 only sends, each later step receives the step
//! before and sends it on, and a last primitive only receives. So a rank's next primitive starts
//! once its previous one is done, the next loop's send after the loop's last receive. Inside a
//! primitive the data moves slice by slice (`RING_SLICES`), each slice after the one before (its
//! barrier and flags: prims_simple.h `genericOp`): a slice is loaded once its sender has stored
//! it whole, and a primitive that receives and sends loads and stores a slice at once (one
//! `reduceCopy` whose threads store each pack as soon as they have loaded it; round 21, before
//! which a slice was stored only once loaded whole, while the next was loaded). Each Simple slice
//! pays NCCL's per-step figure, in every loop, as a peer-path ring's slice does
//! (`lower::simple_slices`; round 21). On two GPUs under one PCIe uplink, two ranks in step first
//! both store (the uplink's upstream direction), then both load (its downstream), where one
//! transfer carrying the store and the load at once used both directions together.
//!
//! The legs keep the staged copy's charges (`flow::charges::coefficients`: the staging memory's
//! duplex, `duplex_staged` on the GPUs' links), a kernel's leg into or out of host memory being
//! one half of it, and a load out of host memory a read, its requests crossing back (`flow`). Rings that leave the node keep `lower::ring`'s steps (the network's
//! proxy keeps its slots in flight); so do the pipelines of broadcast and reduce. Send/receive and
//! all-to-all (a rank's sends and receives run in warps of their own, concurrently) move each
//! connection's steps as a store and a load, one step at a time (`send`, rounds 20 and 21).

use super::{chunks_worth, loops, Call, Dag, RING_SLICES};
use crate::nccl::p2p;
use crate::nccl::Proto;

/// The host memory a step from rank `a` to rank `b` passes through, if any.
pub(super) fn through(c: &Call, a: usize, b: usize) -> Option<usize> {
    c.shm.get(&(c.devices[a], c.devices[b])).copied()
}

/// Whether the ring `order` is lowered here: some step goes through host memory and none leaves
/// the node.
pub(super) fn applies(c: &Call, order: &[usize]) -> bool {
    let n = order.len();
    let mut steps = (0..n).map(|p| (order[p], order[(p + 1) % n]));
    !c.shm.is_empty() && steps.clone().any(|(a, b)| through(c, a, b).is_some()) && steps.all(|(a, b)| !c.crosses(a, b))
}

/// `lower::ring` with its steps through host memory as two legs, each rank's primitives in its
/// kernel's order. A step over a peer path stays one transfer, the receiver's part done when it is.
pub(super) fn ring(c: &Call, order: &[usize], per_rank: u64, steps: usize, d: &mut Dag) {
    let n = order.len();
    let dev = |p: usize| c.devices[order[p % n]];
    let mem = |p: usize| through(c, order[p % n], order[(p + 1) % n]);
    // Slices of a chunk under Simple (`RING_SLICES`): NCCL's flags say a slice is there, so a
    // receiver loads a slice once its sender has stored it whole. LL and LL128 flag every line;
    // their chunk (one step) is taken here as one slice, a coarser wait than theirs.
    let slices = if c.proto == Proto::Simple { RING_SLICES } else { 1 };
    // Per rank position: the transfers of its previous primitive (the next waits for them all),
    // and its send of the previous step, slice by slice (the stores, or the transfers over a
    // peer path).
    let mut prim: Vec<Vec<Option<usize>>> = vec![Vec::new(); n];
    let mut sent: Vec<Vec<Option<usize>>> = vec![Vec::new(); n];
    // A capped ring (LL, LL128: `Call::rate`): a rank's stores on the channel are one kernel's
    // output and share its rate, its loads the same kernel's input.
    let mut stores: Vec<Option<usize>> = vec![None; n];
    let mut loads: Vec<Option<usize>> = vec![None; n];
    for (l, block) in loops(per_rank, c.chunk()).into_iter().enumerate() {
        let size = c.wire(block, c.proto);
        let k_slices = slices.min(size).max(1);
        let part = |s: u64| if s + 1 == k_slices { size - (k_slices - 1) * (size / k_slices) } else { size / k_slices };
        for k in 0..=steps {
            let mut now: Vec<Vec<Option<usize>>> = vec![Vec::new(); n];
            let mut stored: Vec<Vec<Option<usize>>> = vec![Vec::new(); n];
            for p in 0..n {
                let up = (p + n - 1) % n;
                let (a, b) = (order[p], order[(p + 1) % n]);
                let over = c.flush_of(a, b, c.proto) + if l == 0 && k == 0 { c.base } else { 0.0 };
                // Each of NCCL's Simple slices pays its per-step figure, every loop
                // (`lower::simple_slices`); LL and LL128 the first loop's step, once.
                let shake = |s: u64| match c.proto {
                    Proto::Simple => c.step * slice_shakes(super::simple_slices(block, c.chunk()), s, k_slices),
                    _ if l == 0 && s == 0 => c.step_of(a, b),
                    _ => 0.0,
                };
                // Slice by slice, each once the one before is done (the primitive's barrier and
                // flags): the step before received (over host memory a load once the upstream
                // rank's store of the slice has landed; over a peer path, its transfer) and this
                // step sent on (into host memory, or to the peer) by the same warps at once, a
                // pack stored as soon as it is loaded (`reduceCopy`).
                let mut prev: Vec<Option<usize>> = Vec::new();
                for s in 0..k_slices {
                    let landed = if k > 0 { sent[up][s as usize] } else { None };
                    let after: Vec<Option<usize>> = prim[p].iter().copied().chain(prev.iter().copied()).chain([landed]).collect();
                    prev.clear();
                    if k > 0 {
                        if let Some(x) = mem(up) {
                            if d.rate.is_some() {
                                d.group = Some(*loads[p].get_or_insert(d.t.len()));
                            }
                            let i = Some(d.push(x, dev(p), part(s), after.iter().copied(), 0.0));
                            now[p].push(i);
                            prev.push(i);
                        }
                    }
                    if k < steps {
                        if d.rate.is_some() {
                            d.group = Some(*stores[p].get_or_insert(d.t.len()));
                        }
                        let i = Some(d.push(dev(p), mem(p).unwrap_or(dev(p + 1)), part(s), after.iter().copied(), shake(s) + if s == 0 { over } else { 0.0 }));
                        stored[p].push(i);
                        now[p].push(i);
                        prev.push(i);
                    }
                }
            }
            prim = now;
            sent = stored;
        }
    }
    d.group = None;
}

/// The handshakes slice `s` of a step lowered in `k` slices pays, of the `h` NCCL's kernel makes
/// (`lower::simple_slices`): h / k each where NCCL makes at least k (a merged loop stands for
/// several chunks' slices), else one each for its first h, the step's first slice paying first.
fn slice_shakes(h: f64, s: u64, k: u64) -> f64 {
    if h >= k as f64 {
        h / k as f64
    } else if (s as f64) < h {
        1.0
    } else {
        0.0
    }
}

/// One connection's share of a send/receive through host memory `x`, from rank `a` to rank `b`
/// (`lower::pairs_p2p`), as two legs a step: the sender's store into the connection's slot and
/// the receiver's load out of it. NCCL's p2p kernel runs a connection with `ProtoSimple<1, 1>`
/// and the p2p chunk as its step (NCCL 2.30.7 src/device/sendrecv.h `runSend`/`runRecv`, lines
/// 166 and 172; 2.19.3 lines 82 and 88 the same), so a step is one slice: the sender posts the
/// slot's tail flag only once the whole step is stored (prims_simple.h `genericOp`: the copy, the
/// barrier, then `postPeer`), and the receiver loads the step only once it sees that flag
/// (`waitPeer`; shm.cc `shmRecvConnect`: the tail is in host memory too). So a step's load waits
/// for its whole store, while the sender stores the next step (round 21; before, a step was one
/// transfer carrying its store and its load at once, and a one-step send crossed each GPU link
/// once where it crosses twice). Each side runs its steps one after another; the sender's pay
/// NCCL's per-step latency (the call's step: hwLat PCI ring Simple, tuning.cc line 165, 5.7 us,
/// on a node without peer paths, or the fitted `nccl_step_simple`; a merged loop its chunks'
/// worth), an assumption from one machine's tables (2 x RTX 2080 Ti, round 20), not a measured
/// cost; and a store waits for the slot NCCL_STEPS steps back to be loaded. A merged loop
/// (`loops`) stands for several steps in a row: its load runs beside its store, a step behind
/// (after the loop before), paced as the stores are.
pub(super) fn send(c: &Call, (a, x, b): (usize, usize, usize), share: u64, chunk: u64, d: &mut Dag) {
    let (src, dst) = (c.devices[a], c.devices[b]);
    let (mut stores, mut loads): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    // A capped connection (`Call::rate`): its stores are the sender's warps, its loads the
    // receiver's, each a rate group.
    let (mut stored_by, mut loaded_by) = (None, None);
    d.group = None;
    for (l, block) in loops(share, chunk).into_iter().enumerate() {
        let steps = c.step * chunks_worth(block, chunk);
        let over = steps + if l == 0 { c.base } else { 0.0 };
        let size = c.wire(block, Proto::Simple);
        let slot = l.checked_sub(p2p::STEPS).map(|j| loads[j]);
        if d.rate.is_some() {
            d.group = Some(*stored_by.get_or_insert(d.t.len()));
        }
        let store = d.push(src, x, size, [stores.last().copied(), slot], over + c.flush_of(a, b, Proto::Simple));
        if d.rate.is_some() {
            d.group = Some(*loaded_by.get_or_insert(d.t.len()));
        }
        // A merged loop always has a store before it: `loops` keeps its first KEEP loops at
        // NCCL's chunk (rev21 finding 9; `shm_tests::the_first_loop_of_a_send_is_never_merged`).
        let merged = block > chunk;
        let (data, pace) = if merged { (stores.last().copied(), steps) } else { (Some(store), 0.0) };
        loads.push(d.push(x, dst, size, [data, loads.last().copied()], pace));
        stores.push(store);
    }
    d.group = None;
}
