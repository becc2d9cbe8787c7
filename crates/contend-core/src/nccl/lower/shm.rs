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
//! primitive the data moves slice by slice (`RING_SLICES`): a slice is loaded once its sender
//! has stored it whole, and stored on once loaded, while the next slice is loaded. On two GPUs
//! under one PCIe uplink, two ranks in step first both store (the uplink's upstream direction),
//! then both load (its downstream), where one transfer carrying the store and the load at once
//! used both directions together.
//!
//! The legs keep the staged copy's charges (`flow::charges::coefficients`: the staging memory's
//! duplex, `duplex_staged` on the GPUs' links), a kernel's leg into or out of host memory being
//! one half of it (`flow`). Rings that leave the node keep `lower::ring`'s steps (the network's
//! proxy keeps its slots in flight); so do the pipelines of broadcast and reduce. Send/receive and
//! all-to-all keep one transfer a chunk (a rank's sends and receives run in warps of their own,
//! concurrently), but through host memory a connection's chunks go one after another, each paying
//! NCCL's per-step latency (`lower::pairs_p2p`, round 20).

use super::{loops, Call, Dag, RING_SLICES};
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
    // receiver loads a slice once its sender has stored it whole, and stores it on once it has
    // loaded it, while the next slice is loaded. LL and LL128 flag every line; their chunk (one
    // step) is taken here as one slice, a coarser wait than theirs.
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
                // The step before, received slice by slice: over host memory a load once the
                // upstream rank's store of the slice has landed; over a peer path, its transfer.
                let mut got: Vec<Option<usize>> = Vec::new();
                if k > 0 {
                    match mem(up) {
                        Some(x) => {
                            if d.rate.is_some() {
                                d.group = Some(*loads[p].get_or_insert(d.t.len()));
                            }
                            let mut last = None;
                            for s in 0..k_slices {
                                let after = prim[p].iter().copied().chain([sent[up][s as usize], last]);
                                last = Some(d.push(x, dev(p), part(s), after, 0.0));
                                got.push(last);
                            }
                            now[p].extend(&got);
                        }
                        None => got.clone_from(&sent[up]),
                    }
                }
                // This step, sent on slice by slice (into host memory, or to the peer), each
                // slice once its data is loaded.
                if k < steps {
                    let (a, b) = (order[p], order[(p + 1) % n]);
                    let over = c.flush_of(a, b, c.proto) + if l == 0 { c.step_of(a, b) + if k == 0 { c.base } else { 0.0 } } else { 0.0 };
                    if d.rate.is_some() {
                        d.group = Some(*stores[p].get_or_insert(d.t.len()));
                    }
                    let mut last = None;
                    for s in 0..k_slices {
                        let data = got.get(s as usize).copied().flatten();
                        let after = prim[p].iter().copied().chain([data, last]);
                        last = Some(d.push(dev(p), mem(p).unwrap_or(dev(p + 1)), part(s), after, if s == 0 { over } else { 0.0 }));
                        stored[p].push(last);
                    }
                    now[p].extend(&stored[p]);
                }
            }
            prim = now;
            sent = stored;
        }
    }
    d.group = None;
}
