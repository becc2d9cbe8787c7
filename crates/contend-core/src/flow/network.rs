//! Routing through a network of switches, per message and deterministic for a seed: ECMP by
//! hash, adaptive (the least-loaded next link), and the dragonfly's minimal, Valiant and
//! UGAL/PAR choices. Only the network part of a path (from the NIC that injects a message to
//! the NIC that receives it) is chosen here; the way through a node is the router's.
//!
//! A network whose switches all belong to groups, two or more (a dragonfly, or a graph whose
//! switches are all given groups), is routed as the dragonfly literature defines its names
//! (Kim, Dally, Scott, Abts, ISCA 2008; the CODES dragonfly model): a *minimal* path goes
//! local, over one global link joining the source and destination groups, then local (at most
//! one global hop, whatever the hop count of paths through other groups); a *Valiant* path is
//! minimal to a random intermediate group, then minimal to the destination (exactly two global
//! hops). `ecmp` and `minimal` choose among the global links joining the two groups by a seeded
//! hash (each physical link alike), `adaptive` by load, and `spray` splits a message evenly over
//! them; `shortest` stays the one hop-count shortest path of any graph. Elsewhere (fat-trees,
//! where shortest paths are exactly the up*/down* ones, and other graphs) paths are shortest.
//!
//! At flow level, "load" is the number of messages routed over a directed link so far, in the
//! order of the transfers: adaptive choices are made once per message, at compile time, which
//! is what a flow-level model can do (`packet` re-decides per packet: model/packet/routing.rs).

use crate::keymap::IntMap;
use crate::topology::Hop;
use crate::topology::{DeviceKind, LinkKind, Machine, Routing};
use std::collections::{BTreeMap, VecDeque};

const FAR: u32 = u32::MAX;

pub struct NetworkRouter<'m> {
    m: &'m Machine,
    policy: Routing,
    seed: u64,
    /// Per device: (neighbour, link) over network links only, in link order.
    adj: Vec<Vec<(u32, u32)>>,
    /// Hops to each anchor over the network, through switches only; computed when first asked.
    /// An endpoint hanging off a single switch is reached through that switch, so one table
    /// serves every endpoint of a leaf (see `anchor`).
    dist: Vec<Option<Table>>,
    /// Per device: its number among the switches (u32::MAX for any other device).
    switch_index: Vec<u32>,
    /// Per link: its end `a` (read for every edge of the least-loaded walk's DAG; the link
    /// records are large).
    link_a: Vec<u32>,
    /// Messages routed over each directed link so far: 2l for a -> b, 2l + 1 for b -> a.
    load: Vec<u32>,
    /// The switches of every group (Valiant's intermediate routers).
    groups: BTreeMap<u32, Vec<usize>>,
    /// Scratch of the least-loaded walk, indexed by device: the busiest link still ahead on the
    /// best shortest path, and the walk that last reached the device (no clearing between walks).
    ahead: Vec<(u32, u32)>,
    visited: Vec<u32>,
    walks: u32,
    /// Scratch of walks, kept between them: next hops, and the depth-first settling of the
    /// shortest-path DAG (the next hops of the devices being settled, their frames).
    candidates: Vec<(u32, u32)>,
    dag: (Vec<(u32, u32)>, Vec<Frame>),
    /// Per device: whether it is a switch (read in the inner loops; the device records are large).
    switch: Vec<bool>,
    /// A grouped network (every switch in a group, two groups or more): dragonfly routing.
    grouped: Option<Groups>,
    /// Fluid routing (fluid.rs): messages over each directed link so far, fractional, in units
    /// of the fastest network link's bandwidth (`fastest`).
    fluid_load: Vec<f64>,
    fastest: f64,
    /// Whether the model asks for fluid routing (FlowRules::fluid); spray is spread whatever it says.
    pub fluid_on: bool,
    /// Whether the model asks for adaptive's one path per pair chosen for all pairs at once on a
    /// fat-tree's planes (FlowRules::clos, planes.rs).
    pub clos_on: bool,
    /// Scratch of the least-loaded dragonfly minimal path: the links joining the two groups, and
    /// the path tried over each.
    minimal_scratch: (Vec<GlobalLink>, Vec<Hop>),
}

/// A device being settled by `settle_ahead`: its next hops are `edges[first..end]`, `next` the
/// one to take next, `best` the least cost of those taken.
#[derive(Clone, Copy)]
struct Frame {
    v: u32,
    next: u32,
    end: u32,
    first: u32,
    best: Option<(u32, u32)>,
}

/// A global link from one group to another: (link, router it leaves, router it reaches,
/// physical links it stands for).
type GlobalLink = (u32, u32, u32, u32);

/// The global links of a grouped network, and its groups' local distance tables.
struct Groups {
    /// Per device: its group (switches only; u32::MAX otherwise).
    of: Vec<u32>,
    /// Per ordered pair of groups (from, to): the links joining them, in link order, each as
    /// (link, router in `from`, router in `to`, physical links it stands for).
    global: IntMap<(u32, u32), Vec<GlobalLink>>,
    /// Local hops to each router inside its group, computed when first asked.
    local: Vec<Option<Vec<u32>>>,
    /// Per switch: its place among its group's switches, and where its row of `direct` starts.
    place: Vec<u32>,
    row: Vec<u32>,
    /// Per switch and each switch of its group: the first link joining them in link order (as
    /// a scan of the switch's links finds it), u32::MAX where none. UGAL's least-loaded minimal
    /// path tries every global link joining two groups, each with its local hops on either side,
    /// for every message: a row lookup where a dragonfly router would scan its 30-odd links.
    direct: Vec<u32>,
}

/// An anchor's distance table, and per switch its next hops towards the anchor: the neighbours
/// one hop closer that are switches or the anchor itself, in link order, as `next_hops` lists
/// them (`closer[closer_at[s]..closer_at[s + 1]]` for switch number s). The least-loaded walk
/// asks every switch of a shortest-path DAG for them, each pass over every pair of NICs: a
/// fat-tree's core switch would scan all its links for the one that leads down.
struct Table {
    dist: Vec<u32>,
    closer_at: Vec<u32>,
    closer: Vec<(u32, u32)>,
}

/// Hops to one target: the anchor's table, plus one for an endpoint reached through its switch.
struct Dist<'a> {
    base: &'a [u32],
    to: usize,
    plus: u32,
    anchor: usize,
    table: &'a Table,
}

impl Table {
    fn dist<'a>(&'a self, to: usize, anchor: usize, plus: u32) -> Dist<'a> {
        Dist { base: &self.dist, to, plus, anchor, table: self }
    }
}

impl Dist<'_> {
    fn at(&self, v: usize) -> u32 {
        match self.base[v] {
            _ if v == self.to => 0,
            FAR => FAR,
            d => d + self.plus,
        }
    }
}

fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl<'m> NetworkRouter<'m> {
    pub fn new(m: &'m Machine) -> NetworkRouter<'m> {
        let mut adj = vec![Vec::new(); m.devices.len()];
        for (i, l) in m.links.iter().enumerate().filter(|(_, l)| l.kind == LinkKind::Network) {
            adj[l.a].push((l.b as u32, i as u32));
            adj[l.b].push((l.a as u32, i as u32));
        }
        let mut groups: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, d) in m.devices.iter().enumerate() {
            if let (DeviceKind::Switch, Some(g)) = (d.kind, d.group) {
                groups.entry(g).or_default().push(i);
            }
        }
        let n = m.devices.len();
        let grouped = Self::groups_of(m, &adj, &groups);
        NetworkRouter {
            m,
            policy: m.network.routing,
            seed: m.network.seed,
            adj,
            dist: (0..n).map(|_| None).collect(),
            link_a: m.links.iter().map(|l| l.a as u32).collect(),
            switch_index: {
                let mut k = 0u32;
                m.devices
                    .iter()
                    .map(|d| {
                        if d.kind == DeviceKind::Switch {
                            k += 1;
                            k - 1
                        } else {
                            u32::MAX
                        }
                    })
                    .collect()
            },
            load: vec![0; 2 * m.links.len()],
            groups,
            ahead: vec![(0, 0); n],
            visited: vec![0; n],
            walks: 0,
            candidates: Vec::new(),
            dag: Default::default(),
            switch: m.devices.iter().map(|d| d.kind == DeviceKind::Switch).collect(),
            grouped,
            fluid_load: vec![0.0; 2 * m.links.len()],
            fastest: m.links.iter().filter(|l| l.kind == LinkKind::Network).map(|l| l.bandwidth).fold(0.0, f64::max),
            fluid_on: false,
            clos_on: false,
            minimal_scratch: Default::default(),
        }
    }

    /// The groups of a network whose switches all have one, if there are two or more.
    fn groups_of(m: &Machine, adj: &[Vec<(u32, u32)>], groups: &BTreeMap<u32, Vec<usize>>) -> Option<Groups> {
        let switches = || m.devices.iter().filter(|d| d.kind == DeviceKind::Switch);
        if groups.len() < 2 || switches().any(|d| d.group.is_none()) {
            return None;
        }
        let of: Vec<u32> = m.devices.iter().map(|d| if d.kind == DeviceKind::Switch { d.group.unwrap_or(u32::MAX) } else { u32::MAX }).collect();
        let mut global: IntMap<(u32, u32), Vec<GlobalLink>> = IntMap::default();
        for (v, near) in adj.iter().enumerate() {
            for &(w, l) in near {
                let (gv, gw) = (of[v], of[w as usize]);
                if gv != u32::MAX && gw != u32::MAX && gv != gw {
                    let count = m.spec.links.get(l as usize).and_then(|s| s.count).unwrap_or(1).max(1);
                    global.entry((gv, gw)).or_default().push((l, v as u32, w, count));
                }
            }
        }
        for links in global.values_mut() {
            links.sort_unstable();
        }
        let (mut place, mut row, mut direct) = (vec![u32::MAX; m.devices.len()], vec![u32::MAX; m.devices.len()], Vec::new());
        for members in groups.values() {
            for (k, &v) in members.iter().enumerate() {
                place[v] = k as u32;
            }
            for &v in members {
                row[v] = direct.len() as u32;
                direct.resize(direct.len() + members.len(), u32::MAX);
                for &(w, l) in adj[v].iter().filter(|&&(w, _)| of[w as usize] == of[v]) {
                    let at = &mut direct[row[v] as usize + place[w as usize] as usize];
                    if *at == u32::MAX {
                        *at = l;
                    }
                }
            }
        }
        Some(Groups { of, global, local: vec![None; m.devices.len()], place, row, direct })
    }

    /// Whether this network is routed by groups (a dragonfly).
    pub fn grouped(&self) -> bool {
        self.grouped.is_some()
    }

    /// The switch an endpoint hangs off (itself, for a switch): its first network link's far end.
    fn router_of(&self, d: usize) -> Option<usize> {
        if self.is_switch(d) {
            return Some(d);
        }
        self.adj[d].iter().map(|&(s, _)| s as usize).find(|&s| self.is_switch(s))
    }

    fn hop(&self, link: u32, from: usize) -> Hop {
        Hop { link: link as usize, forward: self.link_a[link as usize] as usize == from }
    }

    /// The first link joining `a` and `b` in `a`'s link order, if any: `direct` for two switches
    /// of one group, else a scan of `a`'s links.
    fn link_between(&self, a: usize, b: usize) -> Option<u32> {
        if let Some(g) = self.grouped.as_ref().filter(|g| g.of[a] != u32::MAX && g.of[a] == g.of[b]) {
            let l = g.direct[g.row[a] as usize + g.place[b] as usize];
            return (l != u32::MAX).then_some(l);
        }
        self.adj[a].iter().find(|&&(w, _)| w as usize == b).map(|&(_, l)| l)
    }

    /// The way from `a` to `b` inside their group: the first shortest path over the group's own
    /// switches (in a dragonfly, the one local link).
    fn local(&mut self, a: usize, b: usize, hops: &mut Vec<Hop>) -> Option<()> {
        if a == b {
            return Some(());
        }
        if let Some(l) = self.link_between(a, b) {
            hops.push(self.hop(l, a));
            return Some(());
        }
        let g = self.grouped.as_mut()?;
        let table = match g.local[b].take() {
            Some(t) => t,
            None => {
                let mut d = vec![FAR; self.m.devices.len()];
                d[b] = 0;
                let mut queue = VecDeque::from([b]);
                while let Some(v) = queue.pop_front() {
                    for &(w, _) in &self.adj[v] {
                        if g.of[w as usize] == g.of[b] && d[w as usize] == FAR {
                            d[w as usize] = d[v] + 1;
                            queue.push_back(w as usize);
                        }
                    }
                }
                d
            }
        };
        let mut v = a;
        let mut ok = table[a] != FAR;
        while ok && v != b {
            match self.adj[v].iter().find(|&&(w, _)| table[w as usize] != FAR && table[w as usize] + 1 == table[v]) {
                Some(&(w, l)) => {
                    hops.push(self.hop(l, v));
                    v = w as usize;
                }
                None => ok = false,
            }
        }
        self.grouped.as_mut()?.local[b] = Some(table);
        ok.then_some(())
    }

    /// The global links from group `gs` to group `gd` (empty when none joins them).
    fn globals(&self, gs: u32, gd: u32) -> &[GlobalLink] {
        self.grouped.as_ref().and_then(|g| g.global.get(&(gs, gd))).map_or(&[], |v| v.as_slice())
    }

    /// One of the global links from `gs` to `gd` by hash, each physical link alike.
    fn hashed_global(&self, gs: u32, gd: u32, h: u64) -> Option<GlobalLink> {
        let links = self.globals(gs, gd);
        let total: u64 = links.iter().map(|l| l.3 as u64).sum();
        if total == 0 {
            return None;
        }
        let mut k = h % total;
        for &l in links {
            if k < l.3 as u64 {
                return Some(l);
            }
            k -= l.3 as u64;
        }
        None
    }

    /// The grouped path from router `rs` over global link `g` (or none: same group) to router
    /// `rd`, appended to `hops`.
    fn via(&mut self, rs: usize, g: Option<GlobalLink>, rd: usize, hops: &mut Vec<Hop>) -> Option<()> {
        match g {
            None => self.local(rs, rd, hops),
            Some((l, ra, rb, _)) => {
                self.local(rs, ra as usize, hops)?;
                hops.push(self.hop(l, ra as usize));
                self.local(rb as usize, rd, hops)
            }
        }
    }

    /// The hops between an endpoint and its router (none for a switch), in the direction asked.
    fn access(&self, d: usize, r: usize, into: bool) -> Option<Hop> {
        if d == r {
            return None;
        }
        let &(_, l) = self.adj[d].iter().find(|&&(w, _)| w as usize == r)?;
        Some(self.hop(l, if into { d } else { r }))
    }

    fn group(&self, r: usize) -> u32 {
        self.grouped.as_ref().map_or(u32::MAX, |g| g.of[r])
    }

    /// Dragonfly minimal: local, one global link joining the two groups (by hash, or with
    /// `least_loaded` the one whose path's busiest link carries the fewest messages), local.
    /// None when no global link joins the groups (the caller then takes a shortest path).
    fn minimal(&mut self, flow: u64, salt: u64, from: usize, to: usize, least_loaded: bool) -> Option<Vec<Hop>> {
        let (rs, rd) = (self.router_of(from)?, self.router_of(to)?);
        let (gs, gd) = (self.group(rs), self.group(rd));
        let mut hops = Vec::with_capacity(6);
        hops.extend(self.access(from, rs, true));
        let global = if gs == gd {
            None
        } else if least_loaded {
            let h = mix(self.seed ^ mix(flow ^ mix(salt ^ 0x6106A1)));
            // Scratch kept between messages (this runs for every message under UGAL).
            let (mut links, mut trial) = std::mem::take(&mut self.minimal_scratch);
            links.clear();
            links.extend_from_slice(self.globals(gs, gd));
            let mut best: Option<((u32, u32), u64, GlobalLink)> = None;
            for (k, &l) in links.iter().enumerate() {
                trial.clear();
                self.via(rs, Some(l), rd, &mut trial)?;
                let cost = trial.iter().fold((0u32, 0u32), |(mx, sum), hp| {
                    let x = self.load[2 * hp.link + usize::from(!hp.forward)];
                    (mx.max(x), sum + x)
                });
                let tie = mix(h ^ k as u64);
                if best.is_none_or(|(c, t, _)| (cost, tie) < (c, t)) {
                    best = Some((cost, tie, l));
                }
            }
            self.minimal_scratch = (links, trial);
            Some(best?.2)
        } else {
            Some(self.hashed_global(gs, gd, mix(self.seed ^ mix(flow ^ mix(salt ^ 0x6106A1))))?)
        };
        self.via(rs, global, rd, &mut hops)?;
        hops.extend(self.access(to, rd, false));
        Some(hops)
    }

    /// Dragonfly Valiant: minimal to a random group other than the two ends' (arriving where
    /// the chosen global link lands), then minimal to the destination: two global hops. Minimal
    /// inside a group, and where no third group exists (a two-group dragonfly).
    fn valiant_grouped(&mut self, flow: u64, from: usize, to: usize) -> Option<Vec<Hop>> {
        let (rs, rd) = (self.router_of(from)?, self.router_of(to)?);
        let (gs, gd) = (self.group(rs), self.group(rd));
        let count = self.groups.len() - if gs == gd { 1 } else { 2 };
        if gs == gd || count == 0 {
            return self.minimal(flow, 0, from, to, false);
        }
        let h = mix(self.seed ^ mix(flow ^ 0x5A11A47));
        let gi = self.groups.keys().copied().filter(|&g| g != gs && g != gd).nth((h % count as u64) as usize)?;
        let first = self.hashed_global(gs, gi, mix(h ^ 1))?;
        let second = self.hashed_global(gi, gd, mix(h ^ 2))?;
        let mut hops = Vec::with_capacity(8);
        hops.extend(self.access(from, rs, true));
        self.via(rs, Some(first), first.2 as usize, &mut hops)?;
        self.via(first.2 as usize, Some(second), rd, &mut hops)?;
        hops.extend(self.access(to, rd, false));
        Some(hops)
    }

    /// Dragonfly spray: each global link joining the two groups takes its physical links'
    /// share of the message, with the local hops on either side.
    fn spray_grouped(&mut self, from: usize, to: usize) -> Option<Vec<(Hop, f64)>> {
        let (rs, rd) = (self.router_of(from)?, self.router_of(to)?);
        let (gs, gd) = (self.group(rs), self.group(rd));
        let mut share: BTreeMap<(usize, bool), f64> = BTreeMap::new();
        let mut add = |hops: &[Hop], x: f64| {
            for h in hops {
                *share.entry((h.link, h.forward)).or_default() += x;
            }
        };
        let mut hops = Vec::new();
        if gs == gd {
            self.minimal(0, 0, from, to, false).map(|p| add(&p, 1.0))?;
        } else {
            let links = self.globals(gs, gd).to_vec();
            let total: u32 = links.iter().map(|l| l.3).sum();
            if total == 0 {
                return None;
            }
            hops.extend(self.access(from, rs, true));
            hops.extend(self.access(to, rd, false));
            add(&hops, 1.0);
            for l in links {
                hops.clear();
                self.via(rs, Some(l), rd, &mut hops)?;
                add(&hops, l.3 as f64 / total as f64);
            }
        }
        Some(share.into_iter().map(|((link, forward), x)| (Hop { link, forward }, x)).collect())
    }

    pub fn routes_per_message(&self) -> bool {
        self.policy != Routing::Shortest
    }

    fn is_switch(&self, d: usize) -> bool {
        self.switch[d]
    }

    /// The device whose distance table serves `to`: its switch when `to` is an endpoint whose
    /// network links all lead to one switch (every shortest path then enters through it).
    fn anchor(&self, to: usize) -> (usize, u32) {
        match self.adj[to].first() {
            Some(&(s, _)) if !self.is_switch(to) && self.is_switch(s as usize) && self.adj[to].iter().all(|&(w, _)| w == s) => (s as usize, 1),
            _ => (to, 0),
        }
    }

    /// Take the distance table towards `to` out of the cache (give it back with `put_back`).
    fn take_dist(&mut self, to: usize) -> (Table, usize, u32) {
        let (anchor, plus) = self.anchor(to);
        let table = match self.dist[anchor].take() {
            Some(t) => t,
            None => {
                let mut d = vec![FAR; self.m.devices.len()];
                d[anchor] = 0;
                let mut queue = VecDeque::from([anchor]);
                while let Some(v) = queue.pop_front() {
                    if v != anchor && !self.is_switch(v) {
                        continue;
                    }
                    for &(w, _) in &self.adj[v] {
                        if d[w as usize] == FAR {
                            d[w as usize] = d[v] + 1;
                            queue.push_back(w as usize);
                        }
                    }
                }
                let (mut closer_at, mut closer) = (vec![0u32], Vec::new());
                for (v, near) in self.adj.iter().enumerate().filter(|&(v, _)| self.switch[v]) {
                    if d[v] != FAR {
                        let one_closer =
                            |&&(w, _): &&(u32, u32)| d[w as usize] != FAR && d[w as usize] + 1 == d[v] && (self.switch[w as usize] || w as usize == anchor);
                        closer.extend(near.iter().filter(one_closer));
                    }
                    closer_at.push(closer.len() as u32);
                }
                Table { dist: d, closer_at, closer }
            }
        };
        (table, anchor, plus)
    }

    /// A path's cost to the least-loaded walk: its busiest link's messages, then the sum of the
    /// messages on its links (which breaks ties towards paths of emptier links).
    fn cost(&self, load: u32, ahead: (u32, u32)) -> (u32, u32) {
        (load.max(ahead.0), load + ahead.1)
    }

    fn dir(&self, link: u32, from: usize) -> usize {
        2 * link as usize + usize::from(self.link_a[link as usize] as usize != from)
    }

    /// Next hops from v that stay on a shortest path to the target of `dist`.
    fn next_hops(&self, dist: &Dist, v: usize, out: &mut Vec<(u32, u32)>) {
        out.clear();
        self.append_next_hops(dist, v, out);
    }

    /// The next hops of switch v kept with the table (see `append_next_hops`); None for the
    /// devices whose next hops are found by a scan of their links.
    #[inline]
    fn table_hops<'t>(&self, dist: &Dist<'t>, v: usize) -> Option<&'t [(u32, u32)]> {
        let s = self.switch_index[v];
        if s == u32::MAX || (dist.plus == 1 && v == dist.anchor) {
            return None;
        }
        let t = dist.table;
        Some(&t.closer[t.closer_at[s as usize] as usize..t.closer_at[s as usize + 1] as usize])
    }

    /// `next_hops`, appended to `out`.
    fn append_next_hops(&self, dist: &Dist, v: usize, out: &mut Vec<(u32, u32)>) {
        // A switch other than the anchor of an endpoint's table: its list, kept with the table
        // (the same neighbours in the same order; see `Table`). With `plus` every distance but
        // the endpoint's is one more, which keeps "one hop closer" between the others, and only
        // the anchor is one hop from the endpoint.
        if let Some(hops) = self.table_hops(dist, v) {
            out.extend_from_slice(hops);
            return;
        }
        // The anchor of an endpoint's table: one hop from the endpoint only, over the links
        // joining them, which the endpoint's list holds in the same (link) order (every link
        // of the endpoint leads to the anchor, `anchor`); not a scan of the anchor's links.
        if dist.plus == 1 && v == dist.anchor {
            out.extend(self.adj[dist.to].iter().map(|&(_, l)| (dist.to as u32, l)));
            return;
        }
        let dv = dist.at(v);
        for &(w, l) in &self.adj[v] {
            let wu = w as usize;
            let dw = dist.at(wu);
            if dw != FAR && dw + 1 == dv && (wu == dist.to || self.switch[wu]) {
                out.push((w, l));
            }
        }
    }

    /// The shortest network path between two devices that comes first in link order: the one
    /// fixed path per pair of `Routing::Shortest`, and a cluster's base path (see `router`).
    pub fn first_shortest(&mut self, from: usize, to: usize) -> Option<Vec<Hop>> {
        self.walk(u64::MAX, 0, from, to, false)
    }

    /// A shortest path, choosing among equal next hops by hash (flow u64::MAX: the first in
    /// link order); with `least_loaded`, among the
    /// shortest paths whose busiest link carries the fewest messages so far (ties by hash).
    fn walk(&mut self, flow: u64, salt: u64, from: usize, to: usize, least_loaded: bool) -> Option<Vec<Hop>> {
        let (table, anchor, plus) = self.take_dist(to);
        let path = self.walk_on(&table.dist(to, anchor, plus), flow, salt, from, least_loaded);
        self.dist[anchor] = Some(table);
        path
    }

    /// `ahead` of every device of the shortest-path DAG from `from` (every edge goes one hop
    /// closer): the busiest link still ahead on the best path from it, the least over its next
    /// hops. Depth first, each device once and each edge once, so that a device whose next
    /// hops are all settled is settled where it is met, without listing it (most of a
    /// fat-tree's DAG: docs/benchmarks.md, issue 22's sixteenth round). The least of a set does
    /// not depend on the order it is taken in: the same values. False where a device of the
    /// DAG other than the target has no next hop.
    fn settle_ahead(&mut self, dist: &Dist, from: usize) -> bool {
        self.walks = self.walks.wrapping_add(1).max(1);
        let mark = self.walks;
        let to = dist.to;
        let (mut edges, mut stack) = std::mem::take(&mut self.dag);
        edges.clear();
        stack.clear();
        self.visited[from] = mark;
        if from == to {
            self.ahead[from] = (0, 0);
            self.dag = (edges, stack);
            return true;
        }
        // A frame per device being settled: the device, its next edge, where its edges end,
        // where they start, the best cost of its edges so far.
        let push = |r: &Self, v: usize, edges: &mut Vec<(u32, u32)>, stack: &mut Vec<Frame>| {
            let first = edges.len() as u32;
            r.append_next_hops(dist, v, edges);
            stack.push(Frame { v: v as u32, next: first, end: edges.len() as u32, first, best: None });
        };
        push(self, from, &mut edges, &mut stack);
        let reachable = loop {
            let Some(top) = stack.last_mut() else { break true };
            if top.next < top.end {
                let (w, l) = edges[top.next as usize];
                let wu = w as usize;
                if self.visited[wu] != mark {
                    self.visited[wu] = mark;
                    if wu == to {
                        self.ahead[wu] = (0, 0);
                    } else {
                        // A switch whose next hops are all settled is settled here, without a
                        // frame (on a fat-tree, every core switch of the DAG but the first
                        // reached through each aggregation switch).
                        match self.table_hops(dist, wu).map(|hops| self.settled_best(hops, wu, mark)) {
                            Some(Some(best)) => self.ahead[wu] = best,
                            _ => {
                                push(self, wu, &mut edges, &mut stack);
                                continue;
                            }
                        }
                    }
                }
                let v = top.v as usize;
                let c = self.cost(self.load[self.dir(l, v)], self.ahead[wu]);
                top.best = Some(top.best.map_or(c, |b| b.min(c)));
                top.next += 1;
            } else {
                let Frame { v, first, best, .. } = stack.pop().expect("a frame on top");
                let Some(best) = best else { break false };
                self.ahead[v as usize] = best;
                edges.truncate(first as usize);
            }
        };
        self.dag = (edges, stack);
        reachable
    }

    /// The least cost over next hops `hops` of device v, if every one is settled in walk `mark`
    /// (an empty list too: the frame then finds that v has no next hop).
    #[inline]
    fn settled_best(&self, hops: &[(u32, u32)], v: usize, mark: u32) -> Option<(u32, u32)> {
        let mut best: Option<(u32, u32)> = None;
        for &(w, l) in hops {
            if self.visited[w as usize] != mark {
                return None;
            }
            let c = self.cost(self.load[self.dir(l, v)], self.ahead[w as usize]);
            best = Some(best.map_or(c, |b| b.min(c)));
        }
        best
    }

    fn walk_on(&mut self, dist: &Dist, flow: u64, salt: u64, from: usize, least_loaded: bool) -> Option<Vec<Hop>> {
        let to = dist.to;
        if dist.at(from) == FAR {
            return None;
        }
        let mut candidates = std::mem::take(&mut self.candidates);
        if least_loaded && !self.settle_ahead(dist, from) {
            self.candidates = candidates;
            return None;
        }
        let mut hops = Vec::with_capacity(dist.at(from) as usize);
        let mut v = from;
        while v != to {
            self.next_hops(dist, v, &mut candidates);
            let h = mix(self.seed ^ mix(flow ^ mix(salt ^ hops.len() as u64)));
            if least_loaded {
                let score = |&(w, l): &(u32, u32)| self.cost(self.load[self.dir(l, v)], self.ahead[w as usize]);
                let Some(best) = candidates.iter().map(score).min() else {
                    self.candidates = candidates;
                    return None;
                };
                candidates.retain(|c| score(c) == best);
            }
            let pick = if flow == u64::MAX { 0 } else { (h % candidates.len().max(1) as u64) as usize };
            let Some(&(w, l)) = candidates.get(pick) else {
                self.candidates = candidates;
                return None;
            };
            hops.push(Hop { link: l as usize, forward: self.m.links[l as usize].a == v });
            v = w as usize;
        }
        self.candidates = candidates;
        Some(hops)
    }

    /// A minimal path: in a grouped network the dragonfly's (one global link), where one
    /// exists; else a shortest path (by hash among equal ones, or least loaded).
    fn minimal_or_shortest(&mut self, flow: u64, salt: u64, from: usize, to: usize, least_loaded: bool) -> Option<Vec<Hop>> {
        if self.grouped.is_some() {
            if let Some(p) = self.minimal(flow, salt, from, to, least_loaded) {
                return Some(p);
            }
        }
        self.walk(flow, salt, from, to, least_loaded)
    }

    /// Valiant: in a grouped network the dragonfly's (see `valiant_grouped`); elsewhere shortest
    /// to a router of a random group other than the two ends', then shortest on.
    fn valiant(&mut self, flow: u64, from: usize, to: usize) -> Option<Vec<Hop>> {
        if self.grouped.is_some() {
            if let Some(p) = self.valiant_grouped(flow, from, to) {
                return Some(p);
            }
        }
        let group_of = |r: &Self, d: usize| r.adj[d].first().and_then(|&(s, _)| r.m.devices[s as usize].group);
        let (gs, gd) = (group_of(self, from), group_of(self, to));
        // The groups other than the two ends', without collecting them (once per message).
        let others = || self.groups.keys().copied().filter(|&g| Some(g) != gs && Some(g) != gd);
        let count = others().count();
        if gs.is_none() || gs == gd || count == 0 {
            return self.walk(flow, 0, from, to, false);
        }
        let h = mix(self.seed ^ mix(flow ^ 0x5A11A47));
        let chosen = others().nth((h % count as u64) as usize).unwrap();
        let group = &self.groups[&chosen];
        let mid = group[(mix(h) % group.len() as u64) as usize];
        let mut hops = self.walk(flow, 1, from, mid, false)?;
        hops.extend(self.walk(flow, 2, mid, to, false)?);
        Some(hops)
    }

    /// Each directed network link of the shortest paths from `from` to `to`, with the share of
    /// a message that crosses it when every device splits it evenly over its next hops.
    pub fn spray(&mut self, from: usize, to: usize) -> Vec<(Hop, f64)> {
        if self.grouped.is_some() {
            if let Some(s) = self.spray_grouped(from, to) {
                return s;
            }
        }
        let (table, anchor, plus) = self.take_dist(to);
        let dist = table.dist(to, anchor, plus);
        let mut share: BTreeMap<(u32, usize), f64> = BTreeMap::new(); // (hops to go, device) -> share
        let mut out = Vec::new();
        let mut candidates = Vec::new();
        if dist.at(from) != FAR {
            share.insert((dist.at(from), from), 1.0);
        }
        // Devices in order of decreasing distance: every share is complete when it is split.
        while let Some(((_, v), x)) = share.pop_last() {
            if v == to {
                continue;
            }
            self.next_hops(&dist, v, &mut candidates);
            let part = x / candidates.len() as f64;
            for &(w, l) in &candidates {
                out.push((Hop { link: l as usize, forward: self.m.links[l as usize].a == v }, part));
                *share.entry((dist.at(w as usize), w as usize)).or_default() += part;
            }
        }
        self.dist[anchor] = Some(table);
        out
    }

    /// Whether a message's packets all keep its one path (ECMP hashes flows, RFC 2992), so that
    /// it crosses a bundle of parallel links on one member (bundle.rs): shortest, ecmp and
    /// minimal everywhere; valiant, ugal and par off dragonflies, where both models route them
    /// per message (packet/routing.rs; on a dragonfly packet routes them per packet, and the
    /// flow table's UGAL takes the least-loaded global link as that stand-in).
    pub fn per_flow(&self) -> bool {
        match self.policy {
            Routing::Shortest | Routing::Ecmp | Routing::Minimal => true,
            Routing::Valiant | Routing::Ugal | Routing::Par => self.grouped.is_none(),
            Routing::Spray | Routing::Adaptive => false,
        }
    }

    pub fn sprays(&self) -> bool {
        self.policy == Routing::Spray
    }

    /// Whether choices depend on the loads of earlier choices.
    pub fn adapts(&self) -> bool {
        matches!(self.policy, Routing::Adaptive | Routing::Ugal | Routing::Par)
    }

    fn charge(&mut self, hops: &[Hop], weight: u32) {
        for h in hops {
            self.load[2 * h.link + usize::from(!h.forward)] += weight;
        }
    }

    /// Take a message's earlier route off the loads (to route it again).
    pub fn uncharge(&mut self, hops: &[Hop], weight: u32) {
        if self.adapts() {
            for h in hops {
                self.load[2 * h.link + usize::from(!h.forward)] -= weight;
            }
        }
    }

    fn worst_load(&self, hops: &[Hop]) -> u32 {
        hops.iter().map(|h| self.load[2 * h.link + usize::from(!h.forward)]).max().unwrap_or(0)
    }

    /// Whether a message chooses between two paths that do not depend on loads (UGAL, PAR):
    /// passes that re-decide can keep them.
    pub fn chooses_between_two(&self) -> bool {
        matches!(self.policy, Routing::Ugal | Routing::Par)
    }

    /// UGAL's two candidates for message `flow`: the minimal path and the Valiant detour. On a
    /// dragonfly the minimal one takes the least-loaded link joining the two groups (the loads
    /// of the messages decided before it): packets of a message spread over all those links by
    /// themselves (UGAL-L per packet), which one hashed link per message cannot stand in for.
    pub fn ugal_candidates(&mut self, flow: u64, from: usize, to: usize) -> Option<(Vec<Hop>, Vec<Hop>)> {
        let grouped = self.grouped.is_some();
        Some((self.minimal_or_shortest(flow, 0, from, to, grouped)?, self.valiant(flow, from, to)?))
    }

    /// UGAL's choice for `weight` messages, by hops times the busiest link's messages; charges
    /// the chosen path. True when the minimal path wins.
    pub fn ugal_choose(&mut self, minimal: &[Hop], detour: &[Hop], weight: u32) -> bool {
        let cost = |r: &Self, p: &[Hop]| p.len() as u64 * (1 + r.worst_load(p) as u64);
        let minimal_wins = cost(self, minimal) <= cost(self, detour);
        self.charge(if minimal_wins { minimal } else { detour }, weight);
        minimal_wins
    }

    /// The network part of message `flow`'s path, from device `from` to device `to`.
    /// Whether one route serves every message between two NICs (a flow, `weight` messages):
    /// adaptive routing, whose choice depends on the loads of all messages alike, and the
    /// fluid UGAL/PAR (a split per pair keeps one route per pair in the flow table).
    pub fn routes_per_pair(&self) -> bool {
        self.policy == Routing::Adaptive || (self.fluid() && !self.sprays())
    }

    /// Adaptive's one path per pair for every unit (from NIC, to NIC) at once, where the model
    /// asks for it (`clos_on`) and the network is a fat-tree of planes (planes.rs); None
    /// elsewhere (the caller routes unit by unit). Charges the routes, `weights` messages each.
    /// `when`: each unit's estimated start, which orders the colourings (planes.rs), computed
    /// only where the colourings apply.
    pub fn clos_routes_all(&mut self, units: &[(usize, usize)], weights: &[u32], when: impl FnOnce() -> Vec<f64>) -> Option<Vec<Vec<Hop>>> {
        if !self.clos_on || self.policy != Routing::Adaptive || self.fluid() {
            return None;
        }
        let planes = self.planes()?;
        let routes = self.clos_routes(&planes, units, &when())?;
        for (r, &w) in routes.iter().zip(weights) {
            self.charge(r, w);
        }
        Some(routes)
    }

    /// The network part of the path of `weight` messages (message `flow`, or a pair's first).
    pub fn route(&mut self, flow: u64, from: usize, to: usize, weight: u32) -> Option<Vec<Hop>> {
        let hops = match self.policy {
            Routing::Shortest => self.first_shortest(from, to)?,
            Routing::Ecmp | Routing::Minimal | Routing::Spray => self.minimal_or_shortest(flow, 0, from, to, false)?,
            Routing::Adaptive => self.minimal_or_shortest(flow, 0, from, to, true)?,
            Routing::Valiant => self.valiant(flow, from, to)?,
            Routing::Ugal | Routing::Par => {
                let (minimal, detour) = self.ugal_candidates(flow, from, to)?;
                let minimal_wins = self.ugal_choose(&minimal, &detour, weight);
                return Some(if minimal_wins { minimal } else { detour });
            }
        };
        if self.adapts() {
            self.charge(&hops, weight);
        }
        Some(hops)
    }
}

#[path = "fluid.rs"]
mod fluid;
pub use fluid::Spread;

#[path = "planes.rs"]
mod planes;

#[cfg(test)]
#[path = "network_tests.rs"]
mod tests;
