//! Where a flow-level NIC may take its next message before its head is delivered
//! (`nic_release = buffered` or `shared`, params.rs): the bytes the input buffers along each
//! path hold, whole or the head's share of them.
//!
//! At packet level (contend's `packet`, BookSim, SST/Merlin) a link sends a packet only into a
//! free slot of the next device's input buffer, and a FCFS NIC moves on once its head's last
//! packet is handed to the network. So the head's bytes still to deliver, once they fit in
//! the buffers of the devices it has yet to cross, no longer hold its NIC. A path of h hops
//! enters h - 1 devices before its destination (which takes packets at once), each with one
//! input buffer of `buffer_packets` × `packet` bytes for it.

use super::{FlowTable, NO_NIC};
use crate::topology::{LinkKind, Machine, NicScheduling};

/// No NIC injection link on a transfer's path (`nic_hop`).
pub const NO_HOP: u32 = u32::MAX;

impl FlowTable {
    /// Fill `nic_buffer` from the machine's network settings (packet size and buffer depth).
    /// Left empty where no transfer leaves through a NIC (a node alone): the executor's release
    /// bookkeeping then stays off instead of watching every resource for NICs that are not there.
    pub fn buffer_nic_releases(&mut self, m: &Machine) {
        if self.nic.iter().all(|&q| q == NO_NIC) {
            return;
        }
        let per_device = m.network.buffer() as f64 * m.network.packet_bytes() as f64;
        self.nic_buffer =
            (0..self.len()).map(|f| if self.nic[f] == NO_NIC { 0.0 } else { self.plan(f).hops.len().saturating_sub(1) as f64 * per_device }).collect();
        self.split_injection(m);
    }

    /// Fill `nic_injection` where a NIC moves several heads at once (RR-N, N ≥ 2): its heads'
    /// packets take its injection link (a message's first network hop) in turn, so a head's last
    /// byte leaves the NIC no sooner than its volume at its share of that link allows. A NIC on
    /// several links (rails) has one such turn per link: a link's bytes are only those of the
    /// heads leaving by it.
    fn split_injection(&mut self, m: &Machine) {
        if !matches!(self.nic_scheduling, NicScheduling::RrN(n) if n >= 2) {
            return;
        }
        self.nic_injection = (0..self.len())
            .map(|f| {
                if self.nic[f] == NO_NIC {
                    return NO_HOP;
                }
                let k = self.plan(f).hops.iter().position(|h| m.links[h.link].kind == LinkKind::Network);
                k.map_or(NO_HOP, |k| self.path(f)[k])
            })
            .collect();
    }

    /// Fill `nic_hop` (`head_priority`, params.rs): per transfer through a NIC, where the NIC's
    /// injection link (its plan's first network hop, as in tail.rs) sits in its path.
    pub fn order_releases(&mut self, m: &Machine) {
        if self.nic_buffer.is_empty() {
            return;
        }
        self.nic_hop = (0..self.len())
            .map(|f| {
                if self.nic[f] == NO_NIC {
                    return NO_HOP;
                }
                self.plan(f).hops.iter().position(|h| m.links[h.link].kind == LinkKind::Network).map_or(NO_HOP, |k| k as u32)
            })
            .collect();
        self.branch_hop = self.first_branches(m);
    }

    /// Under `head_priority`, the first entry of head h's path whose buffer h's NIC may count on
    /// while g is its next message: 0 where g's path leaves h's at the NIC's first switch (or
    /// the rule is off); else the last link the two paths share in order from the NIC's link,
    /// up to the one entering the first switch where either message's packets may part
    /// (branch.rs: past it each packet takes its own next link, so the FIFO order ends there).
    /// g's packets queue behind h's in each FIFO up to that link's port, so they pass it only
    /// once h's bytes left fit in the buffers of the devices it enters and those after it.
    pub fn past_shared(&self, h: usize, g: usize) -> usize {
        let Some((&kh, &kg)) = self.nic_hop.get(h).zip(self.nic_hop.get(g)) else { return 0 };
        if kh == NO_HOP || kg == NO_HOP {
            return 0;
        }
        let (ph, pg) = (&self.path(h)[kh as usize..], &self.path(g)[kg as usize..]);
        let mut shared = ph.iter().zip(pg).take_while(|(a, b)| a == b).count();
        for (k, b) in [(kh, self.branch_hop[h]), (kg, self.branch_hop[g])] {
            if b != NO_HOP {
                shared = shared.min(b.saturating_sub(k) as usize + 1);
            }
        }
        if shared < 2 {
            0
        } else {
            kh as usize + shared - 1
        }
    }

    /// Bytes of the buffers along transfer f's path that its NIC may count on now, `in_flight`
    /// being the messages moving over each resource (f among them). Under `nic_release =
    /// shared` a device's input buffer is one FIFO per port and virtual channel whose slots the
    /// packets of every message arriving over that port take in turn (`packet`; BookSim's and
    /// SST/Merlin's input-queued routers): where k messages cross the port, each holds about
    /// 1/k of the slots, so f counts on buffer / k at each device, k read off the resource
    /// that enters it. A spread route (fluid routing) counts along its plan's path.
    pub fn nic_buffer_now(&self, f: usize, in_flight: &[u32]) -> f64 {
        let whole = self.nic_buffer[f];
        if !self.nic_buffer_shared {
            return whole;
        }
        let path = self.path(f);
        let entered = path.len().saturating_sub(1);
        if entered == 0 {
            return whole;
        }
        shares(&path[..entered], whole / entered as f64, in_flight)
    }

    /// `nic_buffer_now` under `head_priority`: only the buffers of the devices f's path enters
    /// from entry `from` on (`past_shared`; 0: all, the same value).
    pub fn nic_buffer_past(&self, f: usize, from: usize, in_flight: &[u32]) -> f64 {
        let path = self.path(f);
        let entered = path.len().saturating_sub(1);
        if from == 0 || entered == 0 {
            return self.nic_buffer_now(f, in_flight);
        }
        let per_device = self.nic_buffer[f] / entered as f64;
        if !self.nic_buffer_shared {
            return per_device * entered.saturating_sub(from) as f64;
        }
        shares(&path[from.min(entered)..entered], per_device, in_flight)
    }

    /// Per transfer through a NIC: seconds its last byte arrives after it would through one
    /// wire of its narrowest capacity, where every device it crosses stores a packet before
    /// forwarding it (store and forward, as `packet` moves them; Dally and Towles, Principles
    /// and Practices of Interconnection Networks, §2.5 (store-and-forward latency): each hop
    /// adds a packet's serialisation, against the one of the slowest hop a wire would pay).
    /// A message smaller than a packet is one packet of its size. Zero for every other transfer.
    pub fn store_and_forward(&self, m: &Machine) -> Vec<f64> {
        let full = m.network.packet_bytes() as f64;
        (0..self.len())
            .map(|f| {
                let path = self.path(f);
                if self.nic[f] == NO_NIC || path.is_empty() {
                    return 0.0;
                }
                let packet = full.min(self.volume[f]);
                let (sum, slowest) = path.iter().map(|&r| packet / self.cap[r as usize]).fold((0.0, 0.0f64), |(s, w), x| (s + x, w.max(x)));
                sum - slowest
            })
            .collect()
    }
}

/// `per_device` bytes of buffer at each device the resources `entering` enter, shared among the
/// messages crossing each (`nic_release = shared`: one FIFO per port, its slots taken in turn).
fn shares(entering: &[u32], per_device: f64, in_flight: &[u32]) -> f64 {
    entering.iter().map(|&r| per_device / in_flight[r as usize].max(1) as f64).sum()
}
