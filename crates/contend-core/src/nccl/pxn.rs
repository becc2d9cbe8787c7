//! PXN (NCCL_PXN_DISABLE=0, NCCL's default since 2.12; NCCL_P2P_PXN_LEVEL=2): a send to a
//! rank on another node leaves through the NIC of the local GPU with the receiver's device
//! number (`ncclTopoGetNetDev` without a graph: the remote rank's preferred NIC), so that on a
//! rail-optimised fabric both ends use the same rail; where that GPU is not the sender, and the
//! two are NVLink peers, the data goes to it over NVLink first and it sends (search.cc,
//! paths.cc).
//!
//! The relays are kept per local name and node, not per pair of ranks: a dense ranks x ranks
//! table held 8192² entries on 1024 x hgx-h100 (1 GiB, and a copy per call), more than the
//! run's own transfers (docs/benchmarks.md, issue 25, sixteenth round).

use super::{node_prefix, topo};
use crate::topology::Machine;

/// Each rank's relay to each rank of another node, as a lookup (`relay`).
#[derive(Clone, Debug, Default)]
pub struct Pxn {
    ppn: usize,
    /// Per rank, the index of its device's name without the node prefix (GPU3 of n7.GPU3).
    name: Vec<u32>,
    /// Per node and name index (`node * names + name`), the node's first rank of that name.
    rank_of: Vec<Option<u32>>,
    names: usize,
    /// Per pair of local positions (`a * ppn + b`), whether the first node's two GPUs are NVLink
    /// peers (every node alike, as the rings assume).
    nvlink: Vec<bool>,
}

impl Pxn {
    /// The relays of the ranks `devices` (`ppn` a node, in node order); none on one node.
    pub fn new(m: &Machine, devices: &[usize], ppn: usize, topo: &topo::Topo) -> Pxn {
        let n = devices.len();
        if n == ppn || ppn == 0 {
            return Pxn::default();
        }
        let mut known: Vec<&str> = Vec::new();
        let name: Vec<u32> = devices
            .iter()
            .map(|&d| {
                let full = &m.devices[d].name;
                let local = &full[node_prefix(full).len()..];
                let i = known.iter().position(|&k| k == local).unwrap_or_else(|| {
                    known.push(local);
                    known.len() - 1
                });
                i as u32
            })
            .collect();
        let names = known.len();
        let mut rank_of = vec![None; n.div_ceil(ppn) * names];
        for (r, &k) in name.iter().enumerate().rev() {
            rank_of[r / ppn * names + k as usize] = Some(r as u32);
        }
        let nvlink = (0..ppn * ppn).map(|x| topo.paths[x / ppn][x % ppn].as_ref().is_some_and(|p| p.kind == topo::PathType::Nvl)).collect();
        Pxn { ppn, name, rank_of, names, nvlink }
    }

    /// The rank that relays a send from rank `a` to rank `b`: on another node, the GPU of `a`'s
    /// node with `b`'s device name, where it is not `a` and `a` reaches it over NVLink.
    pub fn relay(&self, a: usize, b: usize) -> Option<usize> {
        if self.name.is_empty() || a / self.ppn == b / self.ppn {
            return None;
        }
        let p = self.rank_of[a / self.ppn * self.names + self.name[b] as usize]? as usize;
        (p != a && self.nvlink[a % self.ppn * self.ppn + p % self.ppn]).then_some(p)
    }
}
