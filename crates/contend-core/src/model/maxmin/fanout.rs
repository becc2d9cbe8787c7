//! A GPU serving copy-engine reads to several GPUs at once serves less in all than it serves one
//! reader (maxmin's `read_fanout`): nvbandwidth's `all_to_one_read_ce`, every other GPU pulling
//! from one, moves 0.858 of one pair's read on OCI's GB200 and GB300 nodes (three readers; SUM
//! 2634.65 and 2636.80 GB/s against 9216.17 and 9222.82 over 12 pairs), where the same GPUs
//! written to by all (`all_to_one_write_ce`) or pulling from all (`one_to_all_read_ce`) lose
//! nothing. So the loss is the served GPU's, and it depends on how many read from it: while two
//! or more devices read from a GPU, the NVLinks their data leaves it by keep `share` of their
//! capacity; with one reader, all of it. Under max-min sharing no fixed capacity can do that
//! (one reader alone must still get the whole link), so the capacity moves with the set of
//! readers, as a per-direction duplex loss moves with the other direction's load
//! (docs/models.md, "Several GPUs reading one").

use crate::flow::{directed_resources, FlowTable};
use crate::keymap::IntMap;
use crate::topology::{DeviceKind, LinkKind, Machine};
use crate::workload::{Access, Workload};

/// Per transfer, the resources its data leaves a served GPU by, and its reader.
#[derive(Clone, Debug, Default)]
pub struct Fanout {
    /// Capacity share left to such a resource while two or more devices read through it.
    pub share: f64,
    /// Transfer i's resources are `res[off[i]..off[i + 1]]`; empty `off`: no transfer reads a GPU.
    off: Vec<u32>,
    res: Vec<u32>,
    reader: Vec<u32>,
}

impl Fanout {
    /// The copy-engine reads of another GPU's memory in `w` (kernels' loads and computations are
    /// not: the basis is the copy engine's), where `share` < 1, on the NVLinks their data leaves
    /// the served GPU by (the basis is NVLink's; no public data show several readers of one GPU
    /// over PCIe).
    pub fn new(m: &Machine, w: &Workload, flows: &FlowTable, share: f64) -> Fanout {
        let reads = |i: usize| {
            let t = &w.transfers[i];
            t.access == Access::Read && !t.kernel && t.compute.is_none() && t.src != t.dst && m.devices[t.src].kind == DeviceKind::Gpu
        };
        if share >= 1.0 || !(0..w.transfers.len()).any(reads) {
            return Fanout { share: 1.0, ..Default::default() };
        }
        let dir = directed_resources(m);
        let mut f = Fanout { share, off: vec![0], res: Vec::new(), reader: Vec::new() };
        for (i, t) in w.transfers.iter().enumerate() {
            if reads(i) {
                for (h, _) in flows.plan(i).shares() {
                    let l = &m.links[h.link];
                    let leaves = if h.forward { l.a == t.src } else { l.b == t.src };
                    let r = dir[2 * h.link + usize::from(!h.forward)];
                    // NVLinks take no per-direction duplex loss, whose capacities the engine moves too.
                    if leaves && l.kind == LinkKind::Nvlink && !f.res[f.off[i] as usize..].contains(&r) {
                        f.res.push(r);
                        f.reader.push(t.dst as u32);
                    }
                }
            }
            f.off.push(f.res.len() as u32);
        }
        f
    }

    pub fn is_empty(&self) -> bool {
        self.res.is_empty()
    }

    /// Transfer i's (resource, reader) pairs.
    pub fn of(&self, i: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        let range = match self.off.get(i..=i + 1) {
            Some(&[a, b]) => a as usize..b as usize,
            _ => 0..0,
        };
        self.res[range.clone()].iter().copied().zip(self.reader[range].iter().copied())
    }

    /// `base` with the share taken off every resource that two or more devices read through among
    /// `active` transfers; None where none is.
    pub fn capacities(&self, active: &[usize], base: &[f64]) -> Option<Vec<f64>> {
        if self.is_empty() {
            return None;
        }
        let mut readers: Vec<(u32, u32)> = active.iter().flat_map(|&i| self.of(i)).collect();
        readers.sort_unstable();
        readers.dedup();
        let mut cap: Option<Vec<f64>> = None;
        for w in readers.windows(2).filter(|w| w[0].0 == w[1].0) {
            let c = cap.get_or_insert_with(|| base.to_vec());
            c[w[0].0 as usize] = base[w[0].0 as usize] * self.share;
        }
        cap
    }
}

/// Readers in flight per served resource, as the event engine keeps them.
#[derive(Clone, Debug, Default)]
pub struct Readers {
    /// Per resource with any: (reader, transfers in flight) pairs.
    on: IntMap<u32, Vec<(u32, u32)>>,
}

impl Readers {
    /// Count transfer i in (`d` = 1) or out (-1); calls `moved(resource)` where the number of
    /// distinct readers crossed between one and two.
    pub fn count(&mut self, fan: &Fanout, i: usize, d: i32, mut moved: impl FnMut(u32)) {
        for (r, reader) in fan.of(i) {
            let list = self.on.entry(r).or_default();
            let before = list.len();
            match list.iter().position(|&(x, _)| x == reader) {
                Some(k) => {
                    let n = list[k].1 as i32 + d;
                    if n <= 0 {
                        list.swap_remove(k);
                    } else {
                        list[k].1 = n as u32;
                    }
                }
                None if d > 0 => list.push((reader, d as u32)),
                None => {}
            }
            if (before >= 2) != (list.len() >= 2) {
                moved(r);
            }
        }
    }

    /// Whether two or more devices read through resource r now.
    pub fn shared(&self, r: u32) -> bool {
        self.on.get(&r).is_some_and(|l| l.len() >= 2)
    }
}
