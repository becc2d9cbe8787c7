//! A message routed per flow crosses a bundle of parallel network links (`count: n`) on one
//! member. ECMP hashes a flow onto one of its equal-cost next hops (RFC 2992) and a link
//! aggregation group hashes it onto one member link (IEEE 802.1AX-2020, 6.2.4: a conversation's
//! frames keep one link, in order), so a lone message moves at one member's rate, not n.
//!
//! The bundle stays one resource of n members' capacity shared by every message crossing it:
//! the fluid stand-in for a hash that spreads flows evenly over the members. Real hashes
//! collide (two flows on one member while another idles); that is not modelled
//! (docs/models.md, "Bundles under per-flow routing"). Each message crossing a bundle under a
//! per-flow policy (`NetworkRouter::per_flow`) is held to one member's rate: maxmin by a
//! resource of its own in its route, packet by pacing its source (`FlowTable::member_rate`).
//! Per-packet policies (spray, adaptive; the group policies on dragonflies) spread a message's
//! packets over the members and keep the bundle's whole rate.

use super::FlowTable;
use crate::keymap::IntMap;
use crate::topology::{Hop, LinkKind, Machine};
use crate::workload::Workload;

/// Whether `m` has a network link of more than one member (else nothing here applies).
pub(super) fn any(m: &Machine) -> bool {
    m.links.iter().zip(&m.spec.links).any(|(l, s)| l.kind == LinkKind::Network && s.count.unwrap_or(1) > 1)
}

/// The rate (bytes/s) one member of the narrowest bundle on `hops` allows a message, where it
/// is below what the message's route allows it anyway (else the member never binds: no
/// change); None where the path crosses no such bundle. `route`: the route's (resource, bytes
/// per byte of the message), whose capacities are `cap`; `resource`: a hop's resource.
pub(super) fn member_rate(m: &Machine, hops: &[Hop], resource: impl Fn(&Hop) -> u32, route: &[(u32, f64)], cap: &[f64]) -> Option<f64> {
    let bound = |r: u32| route.iter().find(|&&(x, _)| x == r).map_or(f64::INFINITY, |&(_, k)| cap[r as usize] / k);
    let member = hops
        .iter()
        .filter(|h| m.links[h.link].kind == LinkKind::Network)
        .filter_map(|h| {
            let n = m.spec.links.get(h.link).and_then(|s| s.count).unwrap_or(1);
            (n > 1).then(|| bound(resource(h)) / n as f64)
        })
        .fold(f64::INFINITY, f64::min);
    if member == f64::INFINITY {
        return None;
    }
    let whole = route.iter().map(|&(r, _)| bound(r)).fold(f64::INFINITY, f64::min);
    (member < whole).then_some(member)
}

/// The member-rate resources taken so far: per transfer the one it took, per resource its
/// latest taker.
#[derive(Default)]
pub(super) struct Holds {
    of: IntMap<usize, u32>,
    last: IntMap<u32, usize>,
}

impl Holds {
    /// The resource holding transfer i to `bps`. One that waits for an earlier transfer of the
    /// same endpoints and rate, the latest to take that resource, takes it after it (as a
    /// `max_rate`'s, flow/mod.rs): the two never move at once, so one resource serves a chain
    /// (an NCCL connection's chunks) where each would make a route of its own.
    pub fn take(&mut self, c: &mut FlowTable, m: &Machine, w: &Workload, i: usize, bps: f64) -> u32 {
        let t = &w.transfers[i];
        let shared = t.after.iter().copied().find_map(|j| {
            let r = *self.of.get(&j)?;
            let u = &w.transfers[j];
            (j < i && u.src == t.src && u.dst == t.dst && c.cap[r as usize] == bps && self.last.get(&r) == Some(&j)).then_some(r)
        });
        let r = shared.unwrap_or_else(|| {
            c.cap.push(bps);
            c.name.push(format!("{} one bundle member ({})", m.devices[t.src].name, t.label(i)));
            c.latency.push(0.0);
            c.cap.len() as u32 - 1
        });
        if c.member_rate.is_empty() {
            c.member_rate.resize(w.transfers.len(), 0.0);
        }
        c.member_rate[i] = bps;
        self.of.insert(i, r);
        self.last.insert(r, i);
        r
    }
}
