//! One-path adaptive routes on a 3-level fat-tree chosen for all NIC pairs at once, as the
//! rearrangeable Clos network it is (`clos_routing`, params.rs).
//!
//! Adaptive routing in hardware (InfiniBand AR, Slingshot) spreads a message's packets over
//! the least-loaded ports, so on a full-bisection fat-tree a permutation runs at the injection
//! rate (`packet` does; `fluid_routing=on` is that spread at flow level). One path per pair
//! chosen greedily by load cannot: a permutation fills every link of the tree to exactly one
//! message, and the greedy choice in transfer order strands some pairs with no free way
//! (docs/benchmarks.md, issue 23, fourteenth round: 2 × the injection bound). But a 3-level
//! Clos network is rearrangeable (Beneš 1965; Hwang, "The Mathematical Theory of Nonblocking
//! Switching Networks", 2004, ch. 3): every such load has one path per pair with no link
//! loaded beyond it, found as two bipartite edge colourings, which is what this module does:
//! - leaf level: source leaf × destination leaf, one edge per pair of different leaves,
//!   coloured by the plane j (a pod's aggregate j, which the k-ary core wiring joins only to
//!   the aggregates j of the other pods): leaf l's uplink to aggregate j and downlink from it
//!   carry the pairs of colour j;
//! - core level, in each plane j: source pod × destination pod, the inter-pod pairs of colour
//!   j, coloured by plane j's cores: aggregate j's link to core c and core c's link down carry
//!   the pairs of colour c.
//!
//! Where a vertex has more pairs than colours (uniform traffic, several GPUs per NIC), each
//! colouring is equitable (de Werra, 1971): a vertex with d pairs has each colour at most
//! ⌈d / k⌉ times, by splitting it into ⌈d / k⌉ vertices of at most k pairs each and colouring
//! those properly; a bipartite multigraph of degree at most k has a proper k-edge-colouring
//! (Kőnig, 1916), found edge by edge by swapping the two colours of one alternating path.
//!
//! The structure is read from the graph, not from the cluster file: switches with a group are
//! a pod's leaves (those with endpoints) and aggregates, switches without one are cores; it
//! holds where every leaf joins every aggregate of its pod by one link, every pod has the same
//! number of aggregates, and every core joins, by one link each, the aggregate of one rank in
//! every pod (the fat-tree builder's k-ary wiring with its default core count, every preset
//! but quartz). Elsewhere (quartz's parallel arcs and shared cores, dragonflies, graphs) the
//! greedy least-loaded choice stays.

use super::NetworkRouter;
use crate::topology::Hop;

/// No edge at this vertex in this colour.
const FREE: u32 = u32::MAX;

/// The planes of a 3-level fat-tree as this module needs them.
pub struct Planes {
    /// Per device: the pod of a leaf switch (u32::MAX otherwise), and its leaf number.
    pod_of_leaf: Vec<u32>,
    leaf_number: Vec<u32>,
    leaves: usize,
    /// Per pod, per plane: the aggregate switch.
    aggs: Vec<Vec<usize>>,
    /// Per plane: its cores (none with one pod).
    cores: Vec<Vec<usize>>,
}

/// Colours for the edges (left, right) of a bipartite multigraph of `left` and `right`
/// vertices, `k` colours: each vertex with d edges gets each colour at most ⌈d / k⌉ times.
pub fn equitable_colouring(edges: &[(u32, u32)], left: usize, right: usize, k: usize) -> Vec<u32> {
    assert!(k > 0);
    // Split every vertex into vertices of at most k edges, in edge order.
    let (mut seen_l, mut seen_r) = (vec![0u32; left], vec![0u32; right]);
    let mut split = Vec::with_capacity(edges.len());
    let (mut subs_l, mut subs_r) = (vec![u32::MAX; left], vec![u32::MAX; right]);
    let (mut nl, mut nr) = (0u32, 0u32);
    let sub = |seen: &mut [u32], subs: &mut [u32], n: &mut u32, v: usize| {
        if seen[v].is_multiple_of(k as u32) {
            subs[v] = *n;
            *n += 1;
        }
        seen[v] += 1;
        subs[v]
    };
    for &(a, b) in edges {
        let x = sub(&mut seen_l, &mut subs_l, &mut nl, a as usize);
        let y = sub(&mut seen_r, &mut subs_r, &mut nr, b as usize);
        split.push((x, y));
    }
    // Vertices: left sub-vertices 0..nl, right ones nl..nl + nr. at[v * k + c]: v's edge of colour c.
    let nl = nl as usize;
    let vertices = nl + nr as usize;
    let mut at = vec![FREE; vertices * k];
    let mut colour = vec![FREE; edges.len()];
    let ends = |e: usize| (split[e].0 as usize, nl + split[e].1 as usize);
    let mut path: Vec<usize> = Vec::new();
    for e in 0..edges.len() {
        let (u, v) = ends(e);
        let free = |at: &[u32], x: usize| (0..k).find(|&c| at[x * k + c] == FREE).expect("a vertex has at most k edges");
        let a = free(&at, u);
        if at[v * k + a] != FREE {
            // a is taken at v, b is free there: swap a and b along the path of edges coloured
            // a, b, a, … from v. It cannot reach u (bipartite: it would arrive there by an edge
            // of colour a, which u lacks), so afterwards a is free at both ends.
            let b = free(&at, v);
            path.clear();
            let (mut x, mut c) = (v, a);
            while at[x * k + c] != FREE {
                let f = at[x * k + c] as usize;
                path.push(f);
                let (p, q) = ends(f);
                x = if p == x { q } else { p };
                c = if c == a { b } else { a };
            }
            for &f in &path {
                let (p, q) = ends(f);
                at[p * k + colour[f] as usize] = FREE;
                at[q * k + colour[f] as usize] = FREE;
            }
            for &f in &path {
                let (p, q) = ends(f);
                colour[f] = if colour[f] == a as u32 { b as u32 } else { a as u32 };
                at[p * k + colour[f] as usize] = f as u32;
                at[q * k + colour[f] as usize] = f as u32;
            }
        }
        colour[e] = a as u32;
        at[u * k + a] = e as u32;
        at[v * k + a] = e as u32;
    }
    colour
}

impl NetworkRouter<'_> {
    /// The planes of this network, if it is a 3-level fat-tree of the k-ary kind (see the
    /// module's text); None otherwise.
    pub(super) fn planes(&self) -> Option<Planes> {
        if self.grouped.is_some() {
            return None;
        }
        let m = self.m;
        let n = m.devices.len();
        let one_link = |l: u32| m.spec.links.get(l as usize).and_then(|s| s.count).unwrap_or(1) == 1;
        let mut pods: std::collections::BTreeMap<u32, (Vec<usize>, Vec<usize>)> = Default::default();
        let mut cores = Vec::new();
        for v in (0..n).filter(|&v| self.switch[v]) {
            let endpoints = self.adj[v].iter().any(|&(w, _)| !self.switch[w as usize]);
            match m.devices[v].group {
                Some(g) if endpoints => pods.entry(g).or_default().0.push(v),
                Some(g) => pods.entry(g).or_default().1.push(v),
                None if endpoints => return None,
                None => cores.push(v),
            }
        }
        let planes = pods.values().next()?.1.len();
        if planes == 0 || pods.values().any(|(leaves, aggs)| leaves.is_empty() || aggs.len() != planes) {
            return None;
        }
        let (mut pod_of_leaf, mut leaf_number, mut plane_of) = (vec![u32::MAX; n], vec![u32::MAX; n], vec![u32::MAX; n]);
        let mut pod_of_agg = vec![u32::MAX; n];
        let mut aggs = Vec::new();
        let mut leaf_count = 0u32;
        for (p, (leaves, pod_aggs)) in pods.values().enumerate() {
            for (j, &a) in pod_aggs.iter().enumerate() {
                plane_of[a] = j as u32;
                pod_of_agg[a] = p as u32;
            }
            for &l in leaves {
                pod_of_leaf[l] = p as u32;
                leaf_number[l] = leaf_count;
                leaf_count += 1;
            }
            aggs.push(pod_aggs.clone());
        }
        // Every leaf: one link to each aggregate of its pod, and no other switch.
        for (p, (leaves, pod_aggs)) in pods.values().enumerate() {
            for &l in leaves {
                let mut joined = vec![0u32; planes];
                for &(w, link) in self.adj[l].iter().filter(|&&(w, _)| self.switch[w as usize]) {
                    if pod_of_agg[w as usize] != p as u32 || !one_link(link) {
                        return None;
                    }
                    joined[plane_of[w as usize] as usize] += 1;
                }
                if joined.iter().any(|&c| c != 1) || pod_aggs.is_empty() {
                    return None;
                }
            }
        }
        // Every core: one link to the aggregate of one plane in every pod, and nothing else.
        let mut by_plane = vec![Vec::new(); planes];
        for &c in &cores {
            let mut plane = None;
            let mut reached = vec![false; pods.len()];
            for &(w, link) in &self.adj[c] {
                let w = w as usize;
                if pod_of_agg[w] == u32::MAX || !one_link(link) || reached[pod_of_agg[w] as usize] || plane.is_some_and(|j| j != plane_of[w]) {
                    return None;
                }
                reached[pod_of_agg[w] as usize] = true;
                plane = Some(plane_of[w]);
            }
            if reached.iter().any(|&r| !r) {
                return None;
            }
            by_plane[plane? as usize].push(c);
        }
        if pods.len() > 1 && by_plane.iter().any(|c| c.is_empty()) {
            return None;
        }
        Some(Planes { pod_of_leaf, leaf_number, leaves: leaf_count as usize, aggs, cores: by_plane })
    }

    /// One path per unit (from NIC, to NIC) by the two colourings; None where an endpoint does
    /// not hang off one leaf of `planes` (the caller then routes greedily).
    /// Edges are coloured in order of `when` (each unit's estimated start): a vertex's first k
    /// pairs in time get k different colours, so pairs that run together are apart.
    pub(super) fn clos_routes(&mut self, planes: &Planes, units: &[(usize, usize)], when: &[f64]) -> Option<Vec<Vec<Hop>>> {
        let mut ends = Vec::with_capacity(units.len());
        for &(from, to) in units {
            let (a, b) = (self.router_of(from)?, self.router_of(to)?);
            if planes.pod_of_leaf[a] == u32::MAX || planes.pod_of_leaf[b] == u32::MAX || a == from || b == to {
                return None;
            }
            ends.push((a, b));
        }
        let leaves = planes.leaves;
        let mut apart: Vec<usize> = (0..units.len()).filter(|&u| ends[u].0 != ends[u].1).collect();
        apart.sort_by(|&a, &b| when[a].total_cmp(&when[b]).then(a.cmp(&b)));
        let edges: Vec<(u32, u32)> = apart.iter().map(|&u| (planes.leaf_number[ends[u].0], planes.leaf_number[ends[u].1])).collect();
        let plane_colours = planes.cores.len();
        let plane = equitable_colouring(&edges, leaves, leaves, plane_colours);
        let pod = |u: usize| (planes.pod_of_leaf[ends[u].0], planes.pod_of_leaf[ends[u].1]);
        // Per plane, its inter-pod units and their cores.
        let mut core_of = vec![usize::MAX; units.len()];
        let pods = planes.aggs.len();
        for (j, plane_cores) in planes.cores.iter().enumerate().filter(|(_, c)| !c.is_empty()) {
            let members: Vec<usize> = apart.iter().zip(&plane).filter(|&(&u, &c)| c as usize == j && pod(u).0 != pod(u).1).map(|(&u, _)| u).collect();
            let edges: Vec<(u32, u32)> = members.iter().map(|&u| pod(u)).collect();
            for (&u, &c) in members.iter().zip(&equitable_colouring(&edges, pods, pods, plane_cores.len())) {
                core_of[u] = plane_cores[c as usize];
            }
        }
        let mut plane_of = vec![usize::MAX; units.len()];
        for (&u, &j) in apart.iter().zip(&plane) {
            plane_of[u] = j as usize;
        }
        let mut routes = Vec::with_capacity(units.len());
        for (u, &(from, to)) in units.iter().enumerate() {
            let (a, b) = ends[u];
            let mut way = vec![from, a];
            if a != b {
                let (ps, pd) = pod(u);
                let j = plane_of[u];
                way.push(planes.aggs[ps as usize][j]);
                if ps != pd {
                    way.push(core_of[u]);
                    way.push(planes.aggs[pd as usize][j]);
                }
                way.push(b);
            }
            way.push(to);
            let mut hops = Vec::with_capacity(way.len() - 1);
            for step in way.windows(2) {
                hops.push(self.hop(self.link_between(step[0], step[1])?, step[0]));
            }
            routes.push(hops);
        }
        Some(routes)
    }
}

#[cfg(test)]
#[path = "planes_tests.rs"]
mod tests;
