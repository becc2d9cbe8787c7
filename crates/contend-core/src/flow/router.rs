//! How a copy moves, chosen as CUDA would: peer-to-peer DMA where the platform allows it,
//! GPUDirect RDMA between a GPU and a NIC on one PCIe fabric, staging through host memory
//! otherwise, and plain DMA for everything that touches host memory. docs/models.md (maxmin)
//! states the rules; this module turns them into a path and a fixed cost per transfer.

use super::network::NetworkRouter;
use crate::keymap::IntMap;
use crate::topology::{DeviceKind, LinkKind, Machine};
use crate::workload::Mechanism;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// What a copy engine's copy pays for the NVSwitches on its path: each one's latency, once per
/// traversal (an NVSwitch's latency is the engine's wait for a write through it to complete,
/// docs/models.md "Default latencies"). Other devices on the way charge nothing here: a PCIe
/// switch's forwarding is in its links' latency, a NIC's latency is paid by the copies it drives
/// and those leaving the node through it (`network_entry`), and a network switch's delay is
/// folded into its links' latency.
pub fn switch_traversals(m: &Machine, hops: &[Hop]) -> f64 {
    hops.iter().map(|h| h.to(m)).filter(|&d| m.devices[d].kind == DeviceKind::Nvswitch).map(|d| m.devices[d].latency).sum()
}

/// What a copy pays at the NIC it leaves its node through: that NIC's latency, once per copy
/// (a NIC's per-message cost, the transport's work per message: verbs, or EFA's SRD through
/// libfabric; docs/models.md, "Default latencies"). The NIC is the device a hop onto a network
/// link leaves; the first such hop counts, and not where the copy starts at the NIC itself (it
/// drives the copy and has paid its latency as the driver). The receiving NIC charges nothing:
/// a written latency is the whole one-way cost of a message through the NICs, measured end to
/// end (a ping-pong's half round trip, less the hops of its path).
pub fn network_entry(m: &Machine, hops: &[Hop]) -> f64 {
    let start = hops.first().map(|h| h.from(m));
    hops.iter()
        .find(|h| m.links[h.link].kind == LinkKind::Network && m.devices[h.from(m)].kind == DeviceKind::Nic)
        .map(|h| h.from(m))
        .filter(|&nic| Some(nic) != start)
        .map_or(0.0, |nic| m.devices[nic].latency)
}

pub use crate::topology::Hop;

#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub mechanism: Mechanism,
    /// In order; a staged copy lists the way into host memory, then the way out.
    pub hops: Vec<Hop>,
    /// The host memory a staged copy passes through.
    pub staging: Option<usize>,
    /// Seconds from issue until bytes move: engine setup, staging hand-off, hop latencies, and
    /// the copy engine's wait through each NVSwitch passed (`switch_traversals`).
    pub latency: f64,
    /// The same without the NVSwitches' wait, a staged copy's host hand-off and the GPUs' copy
    /// engine setup, which a copy moved by GPU kernels does not pay (`Transfer::kernel`); summed
    /// apart, so that it is exactly the path's other costs.
    pub kernel_latency: f64,
    /// Where the hardware stripes the copy over parallel ways (the NVSwitch planes two GPUs
    /// share, parallel NVLinks): every hop of every way with the share of the copy's bytes that
    /// crosses it. Empty: every byte follows `hops`, which is otherwise one representative way
    /// (its hop latencies are the copy's: the ways are equally long).
    pub stripes: Vec<(Hop, f64)>,
}

impl Plan {
    /// A plan with no stripes, whose copy pays `latency` before its bytes move, the NIC it
    /// leaves its node through (`network_entry`, copy engines and kernels alike) and the path's
    /// NVSwitches on top (copy engines only).
    pub fn new(m: &Machine, mechanism: Mechanism, hops: Vec<Hop>, staging: Option<usize>, latency: f64) -> Plan {
        let switches = switch_traversals(m, &hops);
        let latency = latency + network_entry(m, &hops);
        Plan { mechanism, hops, staging, latency: latency + switches, kernel_latency: latency, stripes: Vec::new() }
    }

    /// Every hop the copy's bytes cross, with the share of them crossing it.
    pub fn shares(&self) -> Vec<(Hop, f64)> {
        if self.stripes.is_empty() {
            self.hops.iter().map(|&h| (h, 1.0)).collect()
        } else {
            self.stripes.clone()
        }
    }
}

/// Devices a path may pass through; endpoints and staging buffers are never transit.
/// A NIC is transit too: between its node's fabric and the network (it has one link elsewhere).
fn transit(kind: DeviceKind) -> bool {
    matches!(kind, DeviceKind::PcieSwitch | DeviceKind::RootComplex | DeviceKind::Nvswitch | DeviceKind::Switch | DeviceKind::Nic)
}

fn engine(kind: DeviceKind) -> bool {
    matches!(kind, DeviceKind::Gpu | DeviceKind::Nic)
}

pub struct Router<'m> {
    m: &'m Machine,
    /// (neighbour, link) per device, in link order so that ties resolve the same way every run.
    adj: Vec<Vec<(usize, usize)>>,
    /// Shortest-path trees already grown, by (source, peer links only).
    trees: RefCell<BTreeMap<(usize, bool), Tree>>,
    /// A cluster: trees stay inside a node (they never take a network link), and a path
    /// between nodes is stitched from its node parts and a network part between their NICs,
    /// so that routing a message costs the size of a node and of the network, not of the cluster.
    network: bool,
    /// Paths over the network (switches transit), with their distance tables.
    net: RefCell<NetworkRouter<'m>>,
    /// Each device's position among the devices of its kind (GPU k of the machine is k): which
    /// of several equally near NICs it uses.
    ordinal: Vec<usize>,
}

/// For each device reached: its cost and the device before it with the link between them.
type Tree = IntMap<usize, (u64, Option<(usize, usize)>)>;

/// Hops over links other than NVLink dominate the cost, so an all-NVLink path wins whenever
/// one exists (CUDA uses NVLink between NVLink peers even where PCIe is as short).
const NON_NVLINK: u64 = 1 << 20;

impl<'m> Router<'m> {
    pub fn new(m: &'m Machine) -> Router<'m> {
        let mut adj = vec![Vec::new(); m.devices.len()];
        for (i, l) in m.links.iter().enumerate() {
            adj[l.a].push((l.b, i));
            adj[l.b].push((l.a, i));
        }
        let mut seen: Vec<(DeviceKind, usize)> = Vec::new();
        let ordinal = m
            .devices
            .iter()
            .map(|d| match seen.iter_mut().find(|(k, _)| *k == d.kind) {
                Some((_, n)) => {
                    *n += 1;
                    *n - 1
                }
                None => {
                    seen.push((d.kind, 1));
                    0
                }
            })
            .collect();
        Router { m, adj, trees: RefCell::new(BTreeMap::new()), network: m.spec.network.is_some(), net: RefCell::new(NetworkRouter::new(m)), ordinal }
    }

    fn hops_to(&self, tree: &Tree, to: usize) -> Option<Vec<Hop>> {
        tree.get(&to)?;
        let mut hops = Vec::new();
        let mut v = to;
        while let Some(&(_, Some((u, li)))) = tree.get(&v) {
            hops.push(Hop { link: li, forward: self.m.links[li].a == u });
            v = u;
        }
        hops.reverse();
        Some(hops)
    }

    /// Fewest non-NVLink hops, then fewest hops; with `peer`, only links that allow peer traffic.
    pub fn path(&self, from: usize, to: usize, peer: bool) -> Option<Vec<Hop>> {
        let mut trees = self.trees.borrow_mut();
        let tree = trees.entry((from, peer)).or_insert_with(|| self.tree(from, peer));
        if let Some(hops) = self.hops_to(tree, to) {
            return Some(hops);
        }
        if !self.network {
            return None;
        }
        // Two ends of one node (joined without the network) with no peer path between them stay
        // off the network: CUDA stages such a copy through host memory (cudaMemcpyPeer), and
        // NCCL's topology has no path from one NET to another inside a host (graph/topo.cc: a
        // NET node's only link is to its PCI parent), so its GPUs use P2P or SHM there.
        if peer {
            let whole = trees.entry((from, false)).or_insert_with(|| self.tree(from, false));
            if whole.contains_key(&to) {
                return None;
            }
        }
        let tree = &trees[&(from, peer)];
        // Between nodes: to the nearest NIC, over the network, from the NIC nearest the target.
        // Where several NICs are equally near (two GPUs and two NICs under one PCIe switch, as
        // on DGX-class nodes), the devices take them in turn by their ordinal, as NCCL and
        // MPI bind each local GPU to its own nearest NIC, rather than all the first.
        let near = |t: &Tree, end: usize| {
            let mut nics: Vec<(u64, usize)> = t
                .iter()
                .filter(|(&d, _)| self.m.devices[d].kind == DeviceKind::Nic && self.adj[d].iter().any(|&(_, l)| self.m.links[l].kind == LinkKind::Network))
                .map(|(&d, &(c, _))| (c, d))
                .collect();
            nics.sort_unstable();
            let best = nics.first()?.0;
            let ties = nics.iter().take_while(|(c, _)| *c == best).count();
            Some(nics[self.ordinal[end] % ties].1)
        };
        let a = near(tree, from)?;
        let mut hops = self.hops_to(tree, a)?;
        let back = trees.entry((to, peer)).or_insert_with(|| self.tree(to, peer));
        let b = near(back, to)?;
        let mut tail = self.hops_to(back, b)?;
        hops.extend(self.network_path(a, b)?);
        tail.reverse();
        hops.extend(tail.into_iter().map(|h| Hop { link: h.link, forward: !h.forward }));
        Some(hops)
    }

    /// A shortest path over the network between two NICs (the network's routing policy may
    /// choose another per message, see `network`).
    fn network_path(&self, from: usize, to: usize) -> Option<Vec<Hop>> {
        self.net.borrow_mut().first_shortest(from, to)
    }

    /// The network routing of this machine, whose distance tables the router shares.
    pub fn network(&self) -> std::cell::RefMut<'_, NetworkRouter<'m>> {
        self.net.borrow_mut()
    }

    /// Dijkstra from `from` over the preferred cost; endpoints are leaves, never passed through;
    /// in a cluster, network links are left to `network_path`.
    fn tree(&self, from: usize, peer: bool) -> Tree {
        let mut tree: Tree = IntMap::from_iter([(from, (0, None))]);
        let mut heap = BinaryHeap::from([Reverse((0u64, from))]);
        while let Some(Reverse((c, v))) = heap.pop() {
            if c > tree[&v].0 || (v != from && !transit(self.m.devices[v].kind)) {
                continue;
            }
            for &(w, li) in &self.adj[v] {
                let l = &self.m.links[li];
                if (peer && !l.p2p) || (self.network && l.kind == LinkKind::Network) {
                    continue;
                }
                let nc = c + 1 + if l.kind == LinkKind::Nvlink { 0 } else { NON_NVLINK };
                if tree.get(&w).is_none_or(|&(b, _)| nc < b) {
                    tree.insert(w, (nc, Some((v, li))));
                    heap.push(Reverse((nc, w)));
                }
            }
        }
        tree
    }

    /// Through `via` in order, each leg by `path`.
    fn path_via(&self, from: usize, via: &[usize], to: usize, peer: bool) -> Option<Vec<Hop>> {
        let mut hops = Vec::new();
        let mut at = from;
        for &next in via.iter().chain([to].iter()) {
            hops.extend(self.path(at, next, peer)?);
            at = next;
        }
        Some(hops)
    }

    /// Peer traffic that would turn inside a PCIe switch with ACS redirect (in through a port
    /// other than its uplink, out through another such port: a downstream port, or a link to a
    /// sibling partition of the same chip) goes up to the root complex instead, and from there
    /// down the destination's own chain of uplinks, as the root complex routes it by address.
    /// A PCIe link's `a` end is its upstream end; a switch's uplink is the first link of its
    /// shortest upward chain to a root complex (`uplinks`).
    fn acs_redirect(&self, hops: Vec<Hop>) -> Vec<Hop> {
        let is_pcie = |h: &Hop| self.m.links[h.link].kind == LinkKind::Pcie;
        let end = |h: &Hop| h.to(self.m);
        let turns = |k: usize| {
            let (h1, h2) = (&hops[k], &hops[k + 1]);
            let v = end(h1);
            if !(self.m.devices[v].acs_redirect && is_pcie(h1) && is_pcie(h2)) {
                return None;
            }
            let up = self.uplinks(v);
            let uplink = *up.first()?;
            (h1.link != uplink && h2.link != uplink).then_some((v, up))
        };
        let Some((k, v, up)) = (0..hops.len().saturating_sub(1)).find_map(|k| turns(k).map(|(v, up)| (k, v, up))) else {
            return hops;
        };
        let root = up.iter().fold(v, |at, &l| if self.m.links[l].b == at { self.m.links[l].a } else { self.m.links[l].b });
        let dst = end(hops.last().expect("a turn needs two hops"));
        // Down from the root complex: the destination's chain when it hangs below that root,
        // else the shortest peer path from the root (another root's tree, across the sockets).
        let chain = self.uplinks(dst);
        let top = chain.iter().fold(dst, |at, &l| if self.m.links[l].b == at { self.m.links[l].a } else { self.m.links[l].b });
        let down: Vec<Hop> = if !chain.is_empty() && top == root {
            chain.iter().rev().map(|&l| Hop { link: l, forward: true }).collect()
        } else {
            match self.path(root, dst, true) {
                Some(p) => p,
                None => return hops,
            }
        };
        let mut out: Vec<Hop> = hops[..=k].to_vec();
        out.extend(up.iter().map(|&l| Hop { link: l, forward: false }));
        out.extend(down);
        out
    }

    /// The PCIe links from `v` up to a root complex, nearest first: the shortest chain of links
    /// entered at their downstream (`b`) end, ties by link order; empty if `v` reaches none.
    /// A link between two partitions of a chip is entered at its `b` end from one side, so
    /// the shortest chain, not the first such link, is the partition's own uplink.
    fn uplinks(&self, v: usize) -> Vec<usize> {
        let mut before: IntMap<usize, (usize, usize)> = IntMap::default();
        let mut queue = std::collections::VecDeque::from([v]);
        let mut seen = vec![false; self.m.devices.len()];
        seen[v] = true;
        while let Some(u) = queue.pop_front() {
            if self.m.devices[u].kind == DeviceKind::RootComplex && u != v {
                let mut up = Vec::new();
                let mut at = u;
                while at != v {
                    let (from, l) = before[&at];
                    up.push(l);
                    at = from;
                }
                up.reverse();
                return up;
            }
            if u != v && self.m.devices[u].kind != DeviceKind::PcieSwitch {
                continue;
            }
            for &(w, l) in &self.adj[u] {
                let link = &self.m.links[l];
                if link.kind == LinkKind::Pcie && link.b == u && !seen[w] {
                    seen[w] = true;
                    before.insert(w, (u, l));
                    queue.push_back(w);
                }
            }
        }
        Vec::new()
    }

    /// The ways a peer copy over NVLink is striped: a GPU spreads its traffic over all its
    /// NVLinks, so a copy between two GPUs that meet on NVSwitches crosses every NVSwitch
    /// (plane) joined by NVLink to both, and a copy between direct NVLink peers every link
    /// that joins them. A plane carries a share of the copy in proportion to the narrower of
    /// its two sides (the written bandwidth of the links from the source to it, and from it to
    /// the destination), and each side splits its share over its links by their bandwidth:
    /// the split with which no plane holds the others back, and the hardware's equal share per
    /// link where the planes are alike (an HGX board's). Empty where the path is not such a
    /// one- or two-hop NVLink path, or where there is only one way.
    fn stripes(&self, src: usize, dst: usize, hops: &[Hop]) -> Vec<(Hop, f64)> {
        let nvlink = |l: usize| self.m.links[l].kind == LinkKind::Nvlink && self.m.links[l].p2p;
        let hop = |from: usize, l: usize| Hop { link: l, forward: self.m.links[l].a == from };
        let between = |a: usize, b: usize| -> Vec<usize> { self.adj[a].iter().filter(|&&(w, l)| w == b && nvlink(l)).map(|&(_, l)| l).collect() };
        let bw = |ls: &[usize]| ls.iter().map(|&l| self.m.links[l].bandwidth).sum::<f64>();
        if !hops.iter().all(|h| nvlink(h.link)) {
            return Vec::new();
        }
        let mut out = Vec::new();
        match hops.len() {
            1 => {
                let direct = between(src, dst);
                if direct.len() > 1 {
                    let total = bw(&direct);
                    out.extend(direct.iter().map(|&l| (hop(src, l), self.m.links[l].bandwidth / total)));
                }
            }
            2 => {
                let mid = if hops[0].forward { self.m.links[hops[0].link].b } else { self.m.links[hops[0].link].a };
                if self.m.devices[mid].kind != DeviceKind::Nvswitch {
                    return Vec::new();
                }
                // Planes in the order of the source's links, each once.
                let mut planes: Vec<(usize, Vec<usize>, Vec<usize>)> = Vec::new();
                for &(w, _) in &self.adj[src] {
                    if self.m.devices[w].kind != DeviceKind::Nvswitch || planes.iter().any(|p| p.0 == w) {
                        continue;
                    }
                    let (into, out_of) = (between(src, w), between(w, dst));
                    if !into.is_empty() && !out_of.is_empty() {
                        planes.push((w, into, out_of));
                    }
                }
                if planes.len() == 1 && planes[0].1.len() == 1 && planes[0].2.len() == 1 {
                    return Vec::new();
                }
                let weight = |p: &(usize, Vec<usize>, Vec<usize>)| bw(&p.1).min(bw(&p.2));
                let total: f64 = planes.iter().map(weight).sum();
                for p in &planes {
                    let share = weight(p) / total;
                    let (bin, bout) = (bw(&p.1), bw(&p.2));
                    out.extend(p.1.iter().map(|&l| (hop(src, l), share * self.m.links[l].bandwidth / bin)));
                    out.extend(p.2.iter().map(|&l| (hop(p.0, l), share * self.m.links[l].bandwidth / bout)));
                }
            }
            _ => {}
        }
        out
    }

    fn hop_latency(&self, hops: &[Hop]) -> f64 {
        hops.iter().map(|h| self.m.links[h.link].latency).sum()
    }

    fn name(&self, d: usize) -> &str {
        &self.m.devices[d].name
    }

    /// The group of the network switch nearest to device `d` (its node's switch): a
    /// breadth-first search that stops at the first switch.
    pub fn nearest_group(&self, d: usize) -> Option<u32> {
        let mut seen = vec![false; self.m.devices.len()];
        let mut queue = std::collections::VecDeque::from([d]);
        seen[d] = true;
        while let Some(v) = queue.pop_front() {
            if self.m.devices[v].kind == DeviceKind::Switch {
                return self.m.devices[v].group;
            }
            for &(w, _) in &self.adj[v] {
                if !seen[w] {
                    seen[w] = true;
                    queue.push_back(w);
                }
            }
        }
        None
    }

    /// The host memory nearest to `d` (fewest hops, then machine order): where CUDA's pinned
    /// staging buffer is assumed to live.
    pub(crate) fn nearest_memory(&self, d: usize) -> Option<usize> {
        (0..self.m.devices.len())
            .filter(|&x| self.m.devices[x].kind == DeviceKind::HostMemory)
            .filter_map(|x| self.path(d, x, false).map(|p| (p.len(), x)))
            .min()
            .map(|(_, x)| x)
    }

    /// The plan for a copy from `src` to `dst`: `choice` forces a mechanism, `via` lists devices
    /// the path must pass in order (a host memory among them is the staging buffer), and
    /// `peer_enabled` = false is CUDA with peer access disabled. Errors are phrased for the user.
    pub fn plan(&self, src: usize, dst: usize, choice: Option<Mechanism>, via: &[usize], peer_enabled: bool) -> Result<Plan, String> {
        let kind = |d: usize| self.m.devices[d].kind;
        let gpu_nic =
            |a: usize, b: usize| (kind(a) == DeviceKind::Gpu && kind(b) == DeviceKind::Nic) || (kind(a) == DeviceKind::Nic && kind(b) == DeviceKind::Gpu);
        let staging_via = via.iter().copied().find(|&d| kind(d) == DeviceKind::HostMemory);
        // The peer path decides the mechanism and then is the route: found once.
        let peer = std::cell::OnceCell::new();
        let peer_path = || peer.get_or_init(|| self.path_via(src, via, dst, true));
        let mechanism = match choice {
            Some(m) => m,
            None if staging_via.is_some() && engine(kind(src)) && engine(kind(dst)) => Mechanism::Staged,
            None if kind(src) == DeviceKind::Gpu && kind(dst) == DeviceKind::Gpu => {
                if peer_enabled && peer_path().is_some() {
                    Mechanism::P2p
                } else {
                    Mechanism::Staged
                }
            }
            None if gpu_nic(src, dst) => {
                if peer_path().is_some() {
                    Mechanism::Rdma
                } else {
                    Mechanism::Staged
                }
            }
            None => Mechanism::Direct,
        };
        let (a, b) = (self.name(src), self.name(dst));
        let no_path = |what: &str| format!("there is no {what} path from {a} to {b}");
        let lat = |d: usize| self.m.devices[d].latency;
        // A GPU's latency is its copy engine's setup of one cudaMemcpy (topology/default_latency.rs);
        // a copy moved by GPU kernels (NCCL's) starts no copy engine, so its plan leaves it out.
        let engine_setup = |d: usize| if kind(d) == DeviceKind::Gpu { lat(d) } else { 0.0 };
        match mechanism {
            Mechanism::P2p | Mechanism::Rdma => {
                let ok = if mechanism == Mechanism::P2p { kind(src) == DeviceKind::Gpu && kind(dst) == DeviceKind::Gpu } else { gpu_nic(src, dst) };
                if !ok {
                    let needs = if mechanism == Mechanism::P2p { "two GPUs" } else { "a GPU and a NIC" };
                    return Err(format!("mechanism {} needs {needs}; {a} to {b} is not; use staged or direct", mechanism.name()));
                }
                if staging_via.is_some() {
                    return Err(format!("mechanism {} cannot pass through host memory; drop it from via or use staged", mechanism.name()));
                }
                let hops = peer_path().clone().ok_or_else(|| {
                    format!(
                        "{} (peer traffic cannot cross QPI/UPI or links marked p2p: false); use staged, or set p2p: true on the link if the platform allows it",
                        no_path("peer-to-peer")
                    )
                })?;
                let hops = self.acs_redirect(hops);
                // The sample's P2P copies are pushed by the source GPU; RDMA is driven by the NIC.
                let driver = if mechanism == Mechanism::Rdma && kind(src) == DeviceKind::Gpu { dst } else { src };
                let latency = lat(driver) + self.hop_latency(&hops);
                let stripes = if via.is_empty() { self.stripes(src, dst, &hops) } else { Vec::new() };
                let plan = Plan::new(self.m, mechanism, hops, None, latency);
                Ok(Plan { stripes, kernel_latency: plan.kernel_latency - engine_setup(driver), ..plan })
            }
            Mechanism::Staged => {
                if !engine(kind(src)) || !engine(kind(dst)) {
                    return Err(format!("mechanism staged copies between GPUs or NICs; {a} to {b} touches host memory already, use direct"));
                }
                let mem = match staging_via {
                    Some(x) => x,
                    None => self.nearest_memory(src).ok_or_else(|| format!("staging {a} to {b} needs a host_memory device; add one to the machine"))?,
                };
                let k = via.iter().position(|&d| d == mem).unwrap_or(via.len());
                let (before, after) = (&via[..k], via.get(k + 1..).unwrap_or(&[]));
                let into = self.path_via(src, before, mem, false).ok_or_else(|| no_path("staging"))?;
                let out = self.path_via(mem, after, dst, false).ok_or_else(|| no_path("staging"))?;
                let latency = lat(src) + lat(mem) + lat(dst) + self.hop_latency(&into) + self.hop_latency(&out);
                let mut hops = into;
                hops.extend(out);
                let plan = Plan::new(self.m, mechanism, hops, Some(mem), latency);
                // GPU kernels (NCCL's SHM transport) store into the mapped host buffer and the
                // reader's kernel loads from it, polling a flag there: no CPU hands the data from
                // one copy to the next, so they pay no hand-off (NCCL 2.30.7 src/transport/shm.cc:
                // the connection's buffers and head/tail live in host memory mapped into both GPUs,
                // and the transport has no proxy progress; 2.19.3's CE-memcpy variant,
                // NCCL_SHM_USE_CUDA_MEMCPY, is off by default).
                Ok(Plan { kernel_latency: plan.kernel_latency - lat(mem) - engine_setup(src) - engine_setup(dst), ..plan })
            }
            Mechanism::Direct => {
                let hops = self.path_via(src, via, dst, false).ok_or_else(|| no_path("direct"))?;
                let driver = [src, dst].into_iter().find(|&d| engine(kind(d)));
                let latency = driver.map(lat).unwrap_or(0.0) + self.hop_latency(&hops);
                let plan = Plan::new(self.m, mechanism, hops, None, latency);
                Ok(Plan { kernel_latency: plan.kernel_latency - driver.map(engine_setup).unwrap_or(0.0), ..plan })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(m: &Machine, p: &Plan) -> Vec<String> {
        p.hops
            .iter()
            .map(|h| {
                let l = &m.links[h.link];
                let (x, y) = if h.forward { (l.a, l.b) } else { (l.b, l.a) };
                format!("{}→{}", m.devices[x].name, m.devices[y].name)
            })
            .collect()
    }

    fn plan(m: &Machine, s: &str, d: &str) -> Plan {
        Router::new(m).plan(m.device(s).unwrap(), m.device(d).unwrap(), None, &[], true).unwrap()
    }

    #[test]
    fn cuda_choices_on_the_two_socket_server() {
        let m = Machine::load("typical-8gpu").unwrap();
        let p = plan(&m, "GPU0", "GPU2");
        assert_eq!(p.mechanism, Mechanism::P2p);
        assert_eq!(names(&m, &p), ["GPU0→SW0", "SW0→RC0", "RC0→SW1", "SW1→GPU2"]);
        let p = plan(&m, "GPU0", "GPU4");
        assert_eq!(p.mechanism, Mechanism::Staged);
        assert_eq!(names(&m, &p), ["GPU0→SW0", "SW0→RC0", "RC0→MEM0", "MEM0→RC0", "RC0→RC1", "RC1→SW2", "SW2→GPU4"]);
        assert_eq!(plan(&m, "GPU1", "IB0").mechanism, Mechanism::Rdma);
        assert_eq!(plan(&m, "GPU5", "IB0").mechanism, Mechanism::Staged);
        assert_eq!(plan(&m, "MEM1", "GPU0").mechanism, Mechanism::Direct);
    }

    #[test]
    fn nvlink_is_preferred_and_gpus_do_not_forward() {
        let m = Machine::load("dgx1-p100").unwrap();
        let p = plan(&m, "GPU0", "GPU1");
        assert_eq!(names(&m, &p), ["GPU0→GPU1"]);
        // Not NVLink neighbours, and the PCIe path crosses QPI: staged, not forwarded by a GPU.
        assert_eq!(plan(&m, "GPU0", "GPU5").mechanism, Mechanism::Staged);
        let m = Machine::load("dgx-a100").unwrap();
        assert_eq!(names(&m, &plan(&m, "GPU0", "GPU5")), ["GPU0→NVS", "NVS→GPU5"]);
        // Host memory over the GPU's NVLink to the CPU rather than its PCIe link.
        let m = Machine::load("nvlink-cpu-quad").unwrap();
        let p = plan(&m, "GPU2", "MEM0");
        assert_eq!((p.mechanism, m.links[p.hops[0].link].kind), (Mechanism::Direct, crate::topology::LinkKind::Nvlink));
    }

    #[test]
    fn acs_redirect_sends_peer_traffic_through_the_root() {
        let mut spec = Machine::load("typical-8gpu").unwrap().spec;
        spec.acs = Some(crate::topology::Acs::Redirect);
        let m = Machine::from_spec(spec.clone(), "acs").unwrap();
        let p = plan(&m, "GPU0", "GPU1");
        assert_eq!(names(&m, &p), ["GPU0→SW0", "SW0→RC0", "RC0→SW0", "SW0→GPU1"]);
        assert!((p.latency - plan(&Machine::load("typical-8gpu").unwrap(), "GPU0", "GPU1").latency - 0.2e-6).abs() < 1e-12);
        // Paths that cross the root anyway are unchanged; a switch may switch it off.
        assert_eq!(names(&m, &plan(&m, "GPU0", "GPU2")), ["GPU0→SW0", "SW0→RC0", "RC0→SW1", "SW1→GPU2"]);
        spec.devices.iter_mut().filter(|d| d.name == "SW0").for_each(|d| d.acs = Some(crate::topology::Acs::Off));
        let m = Machine::from_spec(spec.clone(), "acs").unwrap();
        assert_eq!(names(&m, &plan(&m, "GPU0", "GPU1")), ["GPU0→SW0", "SW0→GPU1"]);
        // sc16 models tree paths only, and says why it refuses a redirected copy.
        let m = Machine::from_spec(spec, "acs").unwrap();
        let w = crate::workload::Workload::resolve(
            &crate::workload::WorkloadSpec::from_text("transfers:\n  - {src: GPU2, dst: GPU3, size: 1MB}\n", "w").unwrap(),
            &m,
            "w",
        )
        .unwrap();
        let e = crate::model::registry::get("sc16").unwrap().prepare(&m, &w, &[]).err().unwrap().to_string();
        assert!(e.contains("ACS redirect"), "{e}");
    }

    /// Two partitions of one PCIe Gen5 switch chip (each a `pcie_switch` with its own x16 uplink,
    /// joined by a 128 GB/s link inside the chip), ACS redirect on. A copy between partitions
    /// goes up its own partition's uplink and down the destination's (the root complex routes
    /// by address), never back down its own uplink: so a pair copying both ways meets each
    /// directed link once and each copy moves at the narrowest link's rate, a Gen5 x16 link's
    /// 32 GT/s x 16 lanes x 128/130 / 8 = 63.015 GB/s times the efficiency written (0.9), with no
    /// duplex loss written. Before the fix both copies went up and down P0's uplink: half each.
    #[test]
    fn acs_redirect_between_partitions_goes_down_the_destinations_uplink() {
        let text = "name: parts\nacs: redirect\ndevices:\n  - {name: RC, kind: root_complex, latency: 0s}\n  - {name: P0, kind: pcie_switch, latency: 0s}\n  - {name: P1, kind: pcie_switch, latency: 0s}\n  - {name: GPU0, kind: gpu, latency: 0s}\n  - {name: GPU1, kind: gpu, latency: 0s}\nlinks:\n  - {a: RC, b: P0, kind: pcie, gen: 5, lanes: 16, efficiency: 0.9, duplex: 0, latency: 0.1us}\n  - {a: RC, b: P1, kind: pcie, gen: 5, lanes: 16, efficiency: 0.9, duplex: 0, latency: 0.1us}\n  - {a: P0, b: P1, kind: pcie, bandwidth: 128GB/s, efficiency: 0.9, duplex: 0, latency: 0.1us}\n  - {a: P0, b: GPU0, kind: pcie, gen: 5, lanes: 16, efficiency: 0.9, duplex: 0, latency: 0.1us}\n  - {a: P1, b: GPU1, kind: pcie, gen: 5, lanes: 16, efficiency: 0.9, duplex: 0, latency: 0.1us}\n";
        let m = Machine::from_text(text, "parts").unwrap();
        assert_eq!(names(&m, &plan(&m, "GPU0", "GPU1")), ["GPU0→P0", "P0→RC", "RC→P1", "P1→GPU1"]);
        assert_eq!(names(&m, &plan(&m, "GPU1", "GPU0")), ["GPU1→P1", "P1→RC", "RC→P0", "P0→GPU0"]);
        // Four hops of 0.1 µs, no engine latency written.
        assert!((plan(&m, "GPU0", "GPU1").latency - 0.4e-6).abs() < 1e-15);
        // Without ACS the copy stays inside the chip, over the link between the partitions.
        let off = Machine::from_text(&text.replace("acs: redirect\n", ""), "parts").unwrap();
        assert_eq!(names(&off, &plan(&off, "GPU0", "GPU1")), ["GPU0→P0", "P0→P1", "P1→GPU1"]);
        let size = 1e9;
        let w = crate::workload::Workload::resolve(
            &crate::workload::WorkloadSpec::from_text("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GB}\n  - {src: GPU1, dst: GPU0, size: 1GB}\n", "w")
                .unwrap(),
            &m,
            "w",
        )
        .unwrap();
        let prepared = crate::model::maxmin::MaxminPrepared::new(&m, &w, Default::default()).unwrap();
        let o = crate::sim::run_prepared(&w, &prepared, false).unwrap();
        let expected = 32e9 * 16.0 * 128.0 / 130.0 / 8.0 * 0.9;
        for i in 0..2 {
            let rate = size / (o.finish[i] - o.start[i] - 0.4e-6);
            assert!((rate / expected - 1.0).abs() < 1e-9, "copy {i}: {rate} B/s, expected {expected}");
        }
    }

    /// A copy between two GPUs of one node with no peer path between them (gb5470-2ib's GPU0 and
    /// GPU5 sit on different sockets, joined by QPI; dgx1-p100's GPU0 and GPU5 share no NVLink
    /// and their PCIe path crosses QPI) is staged through that node's host memory in a cluster
    /// as on the node alone, never sent out through one of its NICs and back in through another
    /// (CUDA's cudaMemcpyPeer stages it; the network joins hosts, not the GPUs of one host).
    #[test]
    fn a_copy_inside_a_node_of_a_cluster_takes_the_nodes_own_path() {
        for machine in ["gb5470-2ib", "dgx1-p100", "pcie-8gpu-ws"] {
            let one = Machine::load(machine).unwrap();
            let text = format!(
                "name: c\nfabric:\n  graph: {{switches: [{{name: S0}}], links: [], hosts: [S0, S0]}}\nlink: {{bandwidth: 25GB/s}}\nnodes: {{count: 2, machine: \"{machine}\"}}\n"
            );
            let two = Machine::from_text(&text, "c").unwrap();
            let gpus = one.gpus();
            for &a in &gpus {
                for &b in &gpus {
                    if a == b {
                        continue;
                    }
                    let (na, nb) = (&one.devices[a].name, &one.devices[b].name);
                    let alone = plan(&one, na, nb);
                    let inside = plan(&two, &format!("n1.{na}"), &format!("n1.{nb}"));
                    let bare: Vec<String> = names(&two, &inside).iter().map(|h| h.replace("n1.", "")).collect();
                    assert_eq!((inside.mechanism, bare), (alone.mechanism, names(&one, &alone)), "{machine} {na} -> {nb}");
                }
            }
        }
    }

    #[test]
    fn overrides_and_refusals() {
        let m = Machine::load("typical-8gpu").unwrap();
        let r = Router::new(&m);
        let g = |n: &str| m.device(n).unwrap();
        let e = r.plan(g("GPU0"), g("GPU4"), Some(Mechanism::P2p), &[], true).unwrap_err();
        assert!(e.contains("no peer-to-peer path from GPU0 to GPU4"), "{e}");
        let p = r.plan(g("GPU0"), g("GPU4"), Some(Mechanism::Direct), &[], true).unwrap();
        assert_eq!(p.hops.len(), 5);
        let p = r.plan(g("GPU0"), g("GPU1"), None, &[g("MEM1")], true).unwrap();
        assert_eq!((p.mechanism, p.staging), (Mechanism::Staged, Some(g("MEM1"))));
        assert_eq!(r.plan(g("GPU0"), g("GPU1"), None, &[], false).unwrap().mechanism, Mechanism::Staged);
    }
}
