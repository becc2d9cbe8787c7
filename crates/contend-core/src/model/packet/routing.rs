//! Per-packet routing: the network part of a message's path chosen packet by packet, hop by
//! hop, as the routers of a fabric do (docs/models.md, "packet: per-packet routing").
//!
//! A message whose policy routes per packet keeps the flow table's path for its node parts (to
//! its NIC, into the first switch; out of the last switch, to its destination) and leaves the
//! switches in between to `step`, which each packet calls at every switch it reaches:
//! - fat-trees and other graphs without groups: `spray` sends a packet to the next of a switch's
//!   shortest-path next hops in turn (round-robin per switch), `adaptive` to the one whose
//!   output port holds the fewest packets (ties in turn);
//! - dragonflies (every switch in a group, all-to-all inside each group): `spray` takes the
//!   global links joining the two groups in turn, `adaptive` the one whose first port holds the
//!   fewest packets; `valiant` draws an intermediate group per packet; `ugal` (UGAL-L) compares,
//!   at the source router, the minimal and a Valiant candidate by (packets queued at the port
//!   each would take + 1) × switch hops left; `par` makes the same comparison again at the next
//!   router of the source group while the packet is still minimal (progressive adaptive
//!   routing, as CODES does), from that router's own output queues.
//!
//! `ecmp`, `minimal` and `shortest` keep one path per message (ECMP hashes flows, not packets),
//! and so do the group policies on networks that are not such dragonflies.

use crate::flow::FlowTable;
use crate::topology::{DeviceKind, LinkKind, Machine, Routing};
use crate::workload::Workload;
use std::collections::HashMap;

pub(crate) const NONE: u32 = u32::MAX;

/// The most switch hops a dragonfly packet makes between its first and last switch: local,
/// global, local, global, local under Valiant; PAR turning Valiant at the second router of the
/// source group may need one more local hop there first (to the router of its detour's link).
const DRAGONFLY_HOPS: usize = 6;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Policy {
    Spray,
    Adaptive,
    Valiant,
    Ugal,
    Par,
}

/// A per-packet-routed message: where its network middle starts and ends.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Job {
    /// Index in its static path of the hop that reaches the first switch, and of the hop that
    /// leaves the last one.
    pub k_in: u16,
    pub k_out: u16,
    pub rs: u32,
    pub rd: u32,
    /// Its distance table (graphs without groups).
    pub table: u32,
}

/// A global link of a dragonfly, directed: its resource, the router it leaves and the one it reaches.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Global {
    pub res: u32,
    pub ra: u32,
    pub rb: u32,
}

pub(crate) struct Dyn {
    pub policy: Policy,
    pub seed: u64,
    /// Per flow: its job, or NONE (it follows its path).
    pub job_of: Vec<u32>,
    pub jobs: Vec<Job>,
    /// Per device: its network links out, as (far device, resource): `adj[adj_off[v]..adj_off[v + 1]]`.
    pub adj_off: Vec<u32>,
    pub adj: Vec<(u32, u32)>,
    pub switch: Vec<bool>,
    /// Per resource: latency in picoseconds (links), for hops chosen here.
    pub latency_ps: Vec<u64>,
    /// Graphs without groups: hops to each job's last switch, `dist[table * devices + v]`.
    pub dist: Vec<u16>,
    pub devices: usize,
    /// Dragonflies: groups (0 when the network is not one), each switch's group, and the global
    /// links from group g to group t, each physical link once: `global[pair[g * groups + t]..]`.
    pub groups: u32,
    pub group: Vec<u32>,
    pub pair_off: Vec<u32>,
    pub global: Vec<Global>,
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Resource of each link direction (as the flow table numbers them: 2 per link, one for a
/// memory link), for the links the flow table's paths do not show.
pub(crate) fn link_resources(m: &Machine) -> Vec<u32> {
    let mut dir = Vec::with_capacity(2 * m.links.len());
    let mut next = 0u32;
    for l in &m.links {
        if l.kind == LinkKind::Memory {
            dir.extend([next; 2]);
            next += 1;
        } else {
            dir.extend([next, next + 1]);
            next += 2;
        }
    }
    dir
}

impl Dyn {
    /// The per-packet routing of a workload, or None where every message keeps its path.
    pub fn build(m: &Machine, w: &Workload, flows: &FlowTable) -> Option<Dyn> {
        let policy = match m.network.routing {
            Routing::Spray => Policy::Spray,
            Routing::Adaptive => Policy::Adaptive,
            Routing::Valiant => Policy::Valiant,
            Routing::Ugal => Policy::Ugal,
            Routing::Par => Policy::Par,
            Routing::Shortest | Routing::Ecmp | Routing::Minimal => return None,
        };
        let n = m.devices.len();
        let dir = link_resources(m);
        let switch: Vec<bool> = m.devices.iter().map(|d| d.kind == DeviceKind::Switch).collect();
        let mut adj: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n];
        let mut latency_ps = vec![0u64; flows.cap.len()];
        for (i, l) in m.links.iter().enumerate().filter(|(_, l)| l.kind == LinkKind::Network) {
            let (fwd, back) = (dir[2 * i], dir[2 * i + 1]);
            adj[l.a].push((l.b as u32, fwd));
            adj[l.b].push((l.a as u32, back));
            let ps = crate::units::Time::from_secs(l.latency).0;
            latency_ps[fwd as usize] = ps;
            latency_ps[back as usize] = ps;
        }
        let mut adj_off = Vec::with_capacity(n + 1);
        let mut flat = Vec::new();
        adj_off.push(0);
        for a in &adj {
            flat.extend_from_slice(a);
            adj_off.push(flat.len() as u32);
        }
        let mut d = Dyn {
            policy,
            seed: m.network.seed,
            job_of: vec![NONE; flows.len()],
            jobs: Vec::new(),
            adj_off,
            adj: flat,
            switch,
            latency_ps,
            dist: Vec::new(),
            devices: n,
            groups: 0,
            group: Vec::new(),
            pair_off: Vec::new(),
            global: Vec::new(),
        };
        d.dragonfly(m, &adj);
        if d.groups == 0 && matches!(policy, Policy::Valiant | Policy::Ugal | Policy::Par) {
            return None; // group policies elsewhere: one path per message (the flow table's)
        }
        if d.groups == 2 && matches!(policy, Policy::Valiant | Policy::Ugal | Policy::Par) {
            return None; // no intermediate group: Valiant is minimal
        }
        let mut tables: HashMap<u32, u32> = HashMap::new();
        for f in 0..flows.len() {
            let hops = &flows.plan(f).hops;
            if hops.len() != flows.path(f).len() || w.transfers[f].compute.is_some() {
                continue;
            }
            let is_net = |k: usize| m.links[hops[k].link].kind == LinkKind::Network;
            let (Some(first), Some(last)) = ((0..hops.len()).find(|&k| is_net(k)), (0..hops.len()).rfind(|&k| is_net(k))) else { continue };
            let far = |k: usize| {
                let l = &m.links[hops[k].link];
                if hops[k].forward {
                    l.b
                } else {
                    l.a
                }
            };
            let near = |k: usize| {
                let l = &m.links[hops[k].link];
                if hops[k].forward {
                    l.a
                } else {
                    l.b
                }
            };
            let (rs, rd) = (far(first), near(last));
            // Only a network middle of switches (at least one hop between them) is routed here.
            if last <= first + 1 || !d.switch[rs] || !d.switch[rd] || (first + 1..last).any(|k| !is_net(k)) || last > u16::MAX as usize {
                continue;
            }
            let table = if d.groups == 0 {
                let next = tables.len() as u32;
                *tables.entry(rd as u32).or_insert_with(|| {
                    d.dist.extend(d.distances(rd));
                    next
                })
            } else {
                NONE
            };
            d.job_of[f] = d.jobs.len() as u32;
            d.jobs.push(Job { k_in: first as u16, k_out: last as u16, rs: rs as u32, rd: rd as u32, table });
        }
        if d.jobs.is_empty() {
            return None;
        }
        Some(d)
    }

    /// Hops from every device to switch `to`, through switches only.
    fn distances(&self, to: usize) -> Vec<u16> {
        let mut dist = vec![u16::MAX; self.devices];
        dist[to] = 0;
        let mut queue = std::collections::VecDeque::from([to]);
        while let Some(v) = queue.pop_front() {
            for &(w, _) in self.out(v) {
                if self.switch[w as usize] && dist[w as usize] == u16::MAX {
                    dist[w as usize] = dist[v].saturating_add(1);
                    queue.push_back(w as usize);
                }
            }
        }
        dist
    }

    /// Whether the network is a dragonfly that packets can route themselves on: every switch
    /// in a group, two to 1024 groups, each all-to-all inside; then its global links by pair.
    fn dragonfly(&mut self, m: &Machine, adj: &[Vec<(u32, u32)>]) {
        let switches: Vec<usize> = (0..m.devices.len()).filter(|&v| self.switch[v]).collect();
        if switches.iter().any(|&v| m.devices[v].group.is_none()) {
            return;
        }
        let group: Vec<u32> = m.devices.iter().map(|d| d.group.unwrap_or(NONE)).collect();
        let groups = switches.iter().map(|&v| group[v]).max().map_or(0, |g| g + 1);
        if !(2..=1024).contains(&groups) {
            return;
        }
        let mut members = vec![0usize; groups as usize];
        for &v in &switches {
            members[group[v] as usize] += 1;
        }
        for &v in &switches {
            let local = adj[v].iter().filter(|&&(w, _)| self.switch[w as usize] && group[w as usize] == group[v]).count();
            if local + 1 < members[group[v] as usize] {
                return; // not all-to-all inside: packets keep the flow table's paths
            }
        }
        let mut by_pair: Vec<Vec<Global>> = vec![Vec::new(); (groups * groups) as usize];
        for &v in &switches {
            for &(w, res) in &adj[v] {
                let (g, t) = (group[v], group[w as usize]);
                if self.switch[w as usize] && g != t {
                    by_pair[(g * groups + t) as usize].push(Global { res, ra: v as u32, rb: w });
                }
            }
        }
        if by_pair.iter().enumerate().any(|(k, l)| l.is_empty() && k as u32 / groups != k as u32 % groups) {
            return; // a pair of groups no global link joins: packets keep the flow table's paths
        }
        self.pair_off.push(0);
        for list in &mut by_pair {
            list.sort_unstable_by_key(|g| g.res);
            self.global.extend_from_slice(list);
            self.pair_off.push(self.global.len() as u32);
        }
        self.groups = groups;
        self.group = group;
    }

    pub fn out(&self, v: usize) -> &[(u32, u32)] {
        &self.adj[self.adj_off[v] as usize..self.adj_off[v + 1] as usize]
    }

    /// The most hops a packet of flow f can make (its channels): its path's, or with a
    /// dragonfly middle chosen per packet, the node parts plus the longest middle.
    pub fn max_hops(&self, f: usize, path_len: usize) -> usize {
        match self.job_of[f] {
            NONE => path_len,
            j if self.groups > 0 => {
                let job = self.jobs[j as usize];
                job.k_in as usize + 1 + DRAGONFLY_HOPS + (path_len - job.k_out as usize)
            }
            _ => path_len,
        }
    }

    pub fn globals(&self, g: u32, t: u32) -> &[Global] {
        let k = (g * self.groups + t) as usize;
        &self.global[self.pair_off[k] as usize..self.pair_off[k + 1] as usize]
    }

    /// The resource of the local link from v to w (all-to-all groups have one).
    pub fn local(&self, v: u32, w: u32) -> u32 {
        self.out(v as usize).iter().find(|&&(x, _)| x == w).map(|&(_, r)| r).expect("all-to-all group")
    }

    pub fn hash(&self, a: u64, b: u64) -> u64 {
        mix(self.seed ^ mix(a ^ mix(b)))
    }
}

#[cfg(test)]
#[path = "routing_tests.rs"]
mod tests;
