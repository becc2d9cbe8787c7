//! The route a message moves on once its FCFS or RR-N NIC released it early, under
//! `release_frees_nic` (params.rs): its route from the first switch on.
//!
//! A NIC releases its head once the head's bytes left fit in the input buffers along its path
//! (release.rs). At packet level those bytes are then past the NIC's link, in the switches'
//! buffers, and the NIC's next message has the link; so the head's bytes left are charged only
//! on the resources past the NIC's injection link (the route less that link and the node links
//! before it), and the next message no longer shares the link with them.
//!
//! Known approximation: a transfer with a `max_rate` keeps its cap resource on its tail, so a
//! paced head is moved off its NIC's link as an unpaced one is, although at packet level a paced
//! source has not yet cut the bytes it has left. The rule is opt-in; docs/models.md says so.

use super::{FlowTable, NO_NIC};
use crate::topology::{LinkKind, Machine};
use std::collections::HashMap;

/// No tail route: the transfer keeps its route for life.
pub const NO_TAIL: u32 = u32::MAX;

impl FlowTable {
    /// Fill `tail_route` and add the tail routes to `routes`. Needs `nic_buffer` (an early
    /// release rule on): without it no head is released before it is delivered.
    pub fn tail_routes(&mut self, m: &Machine) {
        if self.nic_buffer.is_empty() {
            return;
        }
        let mut memo: HashMap<(u32, u32), u32> = HashMap::new();
        let mut known: HashMap<Vec<(u32, u64, u64)>, u32> = HashMap::new();
        let mut tail = vec![NO_TAIL; self.len()];
        for (f, slot) in tail.iter_mut().enumerate() {
            if self.nic[f] == NO_NIC {
                continue;
            }
            let key = (self.route_of[f], self.path_of[f]);
            if let Some(&r) = memo.get(&key) {
                *slot = r;
                continue;
            }
            let r = self.tail_of(f, m, &mut known);
            memo.insert(key, r);
            *slot = r;
        }
        self.tail_route = tail;
    }

    /// Transfer f's tail route, added to `routes` where new; NO_TAIL where dropping its NIC's
    /// link leaves nothing or changes nothing.
    fn tail_of(&mut self, f: usize, m: &Machine, known: &mut HashMap<Vec<(u32, u64, u64)>, u32>) -> u32 {
        // The NIC's injection link: the plan's first network hop (flow/mod.rs, `injecting_nic`);
        // the path lists one resource per hop, in order.
        let Some(k) = self.plan(f).hops.iter().position(|h| m.links[h.link].kind == LinkKind::Network) else { return NO_TAIL };
        let path = self.path(f);
        let (before, after) = (&path[..=k], &path[k + 1..]);
        let dropped = |l: u32| before.contains(&l) && !after.contains(&l);
        let (hops, data) = (self.route(f), self.route_data(f));
        let kept: Vec<(u32, u64, u64)> = hops.iter().zip(data).filter(|((l, _), _)| !dropped(*l)).map(|(&(l, x), &d)| (l, x.to_bits(), d.to_bits())).collect();
        if kept.is_empty() || kept.len() == hops.len() {
            return NO_TAIL;
        }
        if let Some(&r) = known.get(&kept) {
            return r;
        }
        let r = self.routes.len() as u32;
        for &(l, x, d) in &kept {
            self.routes.hops.push((l, f64::from_bits(x)));
            self.routes.data.push(f64::from_bits(d));
        }
        self.routes.off.push(self.routes.hops.len() as u32);
        known.insert(kept, r);
        r
    }
}
