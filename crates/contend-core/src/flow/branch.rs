//! Where a message's packets may part at packet level: the first switch of its path at which
//! the fabric's per-packet policy (`network.routing` spray, adaptive, valiant, ugal or par, as
//! model/packet/routing.rs's `step` applies them) may send them over one of several next links.
//! Up to that switch every packet of a message crosses the flow-level path's links in the order
//! its NIC sent them, behind any earlier message's packets in each FIFO; from there each packet
//! takes its own next link, so the FIFO order between two messages of one NIC ends there
//! (`head_priority`, release.rs `past_shared`).
//!
//! The choices are packet's. On a dragonfly as packet finds one (every switch in one of 2 to
//! 1024 groups, each group all-to-all, every pair of groups joined), a message between two
//! groups chooses its global link at its first switch: spray and adaptive among those joining
//! the two groups (where they all leave from one other router, the first link is common and the
//! packets part there), Valiant, UGAL and PAR with three groups or more among intermediate
//! groups too (a degenerate choice of one link counted as a choice: it ends the order early,
//! which is the rule off); inside a group a packet goes straight to its last switch. On other
//! networks spray and adaptive choose at each switch among its next hops on shortest paths
//! through switches. `ecmp`, `minimal` and `shortest` keep one path per message, and so do the
//! group policies where packet finds no such dragonfly or only two groups: nothing parts.

use super::release::NO_HOP;
use super::FlowTable;
use crate::topology::{DeviceKind, LinkKind, Machine, Routing};
use std::collections::{HashMap, HashSet, VecDeque};

/// The network as packet's per-packet routing sees it.
struct Fabric {
    /// Per device: (neighbour, link) over network links.
    adj: Vec<Vec<(usize, usize)>>,
    switch: Vec<bool>,
    /// Dragonflies: each switch's group (empty where the network is not one).
    group: Vec<u32>,
    groups: u32,
}

impl Fabric {
    fn new(m: &Machine) -> Fabric {
        let mut adj = vec![Vec::new(); m.devices.len()];
        for (i, l) in m.links.iter().enumerate().filter(|(_, l)| l.kind == LinkKind::Network) {
            adj[l.a].push((l.b, i));
            adj[l.b].push((l.a, i));
        }
        let switch: Vec<bool> = m.devices.iter().map(|d| d.kind == DeviceKind::Switch).collect();
        let mut f = Fabric { adj, switch, group: Vec::new(), groups: 0 };
        f.dragonfly(m);
        f
    }

    /// The dragonfly test of model/packet/routing.rs (`Dyn::dragonfly`).
    fn dragonfly(&mut self, m: &Machine) {
        let switches: Vec<usize> = (0..m.devices.len()).filter(|&v| self.switch[v]).collect();
        let Some(group) = switches.iter().map(|&v| m.devices[v].group).collect::<Option<Vec<u32>>>() else { return };
        let groups = group.iter().max().map_or(0, |g| g + 1);
        if !(2..=1024).contains(&groups) {
            return;
        }
        let mut of = vec![u32::MAX; m.devices.len()];
        let mut members = vec![0usize; groups as usize];
        for (&v, &g) in switches.iter().zip(&group) {
            of[v] = g;
            members[g as usize] += 1;
        }
        let mut joined = HashSet::new();
        for &v in &switches {
            // Links counted as packet counts them (parallel ones each).
            let mut local = 0;
            for &(w, _) in self.adj[v].iter().filter(|&&(w, _)| self.switch[w]) {
                if of[w] == of[v] {
                    local += 1;
                } else {
                    joined.insert((of[v], of[w]));
                }
            }
            if local + 1 < members[of[v] as usize] {
                return;
            }
        }
        if joined.len() as u64 != u64::from(groups) * u64::from(groups - 1) {
            return;
        }
        self.group = of;
        self.groups = groups;
    }

    /// The links from group gs to group gd, as (router in gs, link).
    fn joining(&self, gs: u32, gd: u32) -> Vec<(usize, usize)> {
        let routers = (0..self.adj.len()).filter(|&v| self.switch[v] && self.group[v] == gs);
        routers.flat_map(|v| self.adj[v].iter().filter(|&&(w, _)| self.switch[w] && self.group[w] == gd).map(move |&(_, l)| (v, l))).collect()
    }

    /// Hops from every device to switch `to`, through switches only (packet's `distances`).
    fn distances(&self, to: usize) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.adj.len()];
        dist[to] = 0;
        let mut queue = VecDeque::from([to]);
        while let Some(v) = queue.pop_front() {
            for &(w, _) in &self.adj[v] {
                if self.switch[w] && dist[w] == u32::MAX {
                    dist[w] = dist[v] + 1;
                    queue.push_back(w);
                }
            }
        }
        dist
    }
}

impl FlowTable {
    /// Per transfer: the index in its path of the link entering the first switch at which its
    /// packets may part (module doc), or NO_HOP where they never do.
    pub fn first_branches(&self, m: &Machine) -> Vec<u32> {
        let policy = m.network.routing;
        if !matches!(policy, Routing::Spray | Routing::Adaptive | Routing::Valiant | Routing::Ugal | Routing::Par) {
            return vec![NO_HOP; self.len()];
        }
        let net = Fabric::new(m);
        let group_policy = matches!(policy, Routing::Valiant | Routing::Ugal | Routing::Par);
        if group_policy && net.groups <= 2 {
            return vec![NO_HOP; self.len()];
        }
        let mut tables: HashMap<usize, Vec<u32>> = HashMap::new();
        let mut joining: HashMap<(u32, u32), Vec<(usize, usize)>> = HashMap::new();
        (0..self.len())
            .map(|f| {
                let hops = &self.plan(f).hops;
                if hops.len() != self.path(f).len() {
                    return NO_HOP;
                }
                let is_net = |k: usize| m.links[hops[k].link].kind == LinkKind::Network;
                let (Some(first), Some(last)) = ((0..hops.len()).find(|&k| is_net(k)), (0..hops.len()).rfind(|&k| is_net(k))) else { return NO_HOP };
                let (rs, rd) = (hops[first].to(m), hops[last].from(m));
                // Packet routes only a network middle of switches, at least one hop long.
                if last <= first + 1 || !net.switch[rs] || !net.switch[rd] || (first + 1..last).any(|k| !is_net(k)) {
                    return NO_HOP;
                }
                if net.groups > 0 {
                    let (gs, gd) = (net.group[rs], net.group[rd]);
                    if gs == gd {
                        return NO_HOP;
                    }
                    if group_policy {
                        return first as u32;
                    }
                    // Spray, adaptive: the first links towards the global links joining gs to gd,
                    // as (router they leave, link).
                    let joining = joining.entry((gs, gd)).or_insert_with(|| net.joining(gs, gd));
                    let firsts: HashSet<(usize, usize)> = joining.iter().map(|&(ra, l)| if ra == rs { (ra, l) } else { (ra, usize::MAX) }).collect();
                    return match (firsts.len(), joining.first()) {
                        (n, _) if n >= 2 => first as u32,
                        (_, Some(&(ra, _))) if joining.len() >= 2 && hops[first + 1].to(m) == ra => first as u32 + 1,
                        _ if joining.len() >= 2 => first as u32,
                        _ => NO_HOP,
                    };
                }
                let dist = tables.entry(rd).or_insert_with(|| net.distances(rd));
                // The first switch past rs with two next hops, or where the flow path leaves the
                // one packet would take: the packets part there (the index of the link entering it).
                let parts = hops[first + 1..last].iter().position(|h| {
                    let v = h.from(m);
                    let mut next = net.adj[v].iter().filter(|&&(w, _)| net.switch[w] && dist[w] != u32::MAX && dist[w] + 1 == dist[v]);
                    let one = next.next();
                    next.next().is_some() || one.map(|&(w, _)| w) != Some(h.to(m))
                });
                parts.map_or(NO_HOP, |j| (first + j) as u32)
            })
            .collect()
    }
}

#[cfg(test)]
#[path = "branch_tests.rs"]
mod tests;
