//! Two calls of one collective back to back on every GPU's stream, as nccl-tests times them:
//! its timed loop enqueues `iters` calls with no synchronisation between them and synchronises
//! once at the end (nccl-tests v2.19.6 src/common.cu `BenchTime`, `-n` iters, default 20; `-z`
//! blocking_coll 0 by default), so each GPU starts its next call when its own stream's previous
//! kernel ends, not when every GPU's has.
//!
//! A GPU's kernel of the second call starts once its kernel of the first has ended, and a kernel
//! ends with its last step on every channel (one kernel runs all the call's channels). So each
//! GPU's first steps of the second call (those that wait for none of its own) wait for its last
//! steps of the first (those none of its own waits for). Nothing else waits: NCCL's connections
//! keep their step counters and buffers from call to call (the communicator's `ncclConnInfo`
//! `step`, which a kernel reads at its start and writes back at its end), so an upstream GPU's
//! second call writes into a slot its downstream peer has released while that peer still runs
//! its first call, as within a call.
//!
//! A GPU's steps are the transfers it sends, and the loads it makes from memory that is no rank's
//! (a step through host memory, `shm`: the receiver's kernel copies it in). A staged network step's
//! NIC leg between two host memories (`Dag::staged`, no GDR either side) is its sender's: its
//! proxy posts it (`Dag::owner`), not the receiving socket's memory every GPU there shares.

use super::Call;
use crate::workload::Transfer;

/// `c` lowered twice (each at most `limit` transfers; `super::lower_within`), the second call
/// after the first on each GPU's stream: the transfers, and how many of them are the first call's.
pub fn pair(c: &Call, limit: u64) -> (Vec<Transfer>, usize) {
    let super::Dag { t: one, owner: posted, .. } = super::dag(c, limit);
    let len = one.len();
    let top = one.iter().map(|t| t.src.max(t.dst)).max().map_or(0, |x| x + 1);
    let mut rank = vec![false; top];
    for &d in &c.devices {
        if d < top {
            rank[d] = true;
        }
    }
    let owner: Vec<usize> = one.iter().enumerate().map(|(j, t)| posted.get(&j).copied().unwrap_or(if rank[t.src] { t.src } else { t.dst })).collect();
    // A GPU's last steps: none of its own steps waits for them. Its first: they wait for none of its own.
    let mut followed = vec![false; len];
    let mut first = vec![true; len];
    for (j, t) in one.iter().enumerate() {
        for &a in t.after.iter() {
            if owner[a] == owner[j] {
                followed[a] = true;
                first[j] = false;
            }
        }
    }
    let mut last: std::collections::HashMap<usize, Vec<usize>> = std::collections::HashMap::new();
    for i in (0..len).filter(|&i| !followed[i]) {
        last.entry(owner[i]).or_default().push(i);
    }
    let mut all = one.clone();
    all.reserve_exact(len);
    for (j, t) in one.into_iter().enumerate() {
        let mut t = t.shifted(len);
        if first[j] {
            for &i in last.get(&owner[j]).into_iter().flatten() {
                t.after.push(i);
            }
        }
        all.push(t);
    }
    (all, len)
}
