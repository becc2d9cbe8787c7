//! Clusters: nodes of GPUs on a network fabric (fat-tree, dragonfly or any graph), compiled
//! into one machine graph, so that every model, the executor and the reports work on a
//! cluster as they do on one node. Every GPU of node i is `n<i>.<its name in the node>`
//! (`n12.GPU3`); switches are named by level or group (`leaf5`, `agg17`, `core3`, `g2r7`).

#[cfg(test)]
mod bundle_tests;
mod dragonfly;
mod fat_tree;
mod graph;
#[cfg(test)]
mod tests;

use super::{DeviceKind, DeviceSpec, LinkKind, LinkSpec, Machine, MachineSpec, NetworkSpec};
use crate::error::{Error, Result};
use crate::units::{Bandwidth, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use dragonfly::DragonflySpec;
pub use fat_tree::FatTreeSpec;
pub use graph::GraphSpec;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    pub fabric: FabricSpec,
    /// Every network link (switch to switch, NIC to switch), each direction.
    pub link: NetworkLink,
    pub nodes: NodesSpec,
    #[serde(default)]
    pub network: NetworkSpec,
    /// A scenario's `bandwidth_scale` (`ClusterSpec::scale`), not a file field: it multiplies the
    /// own line rate of a machine node's NICs, which the file does not state.
    #[serde(skip)]
    pub nic_line_scale: Option<f64>,
}

/// Exactly one of these.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FabricSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fat_tree: Option<FatTreeSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dragonfly: Option<DragonflySpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphSpec>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkLink {
    pub bandwidth: Bandwidth,
    /// Wire latency of a hop (default 0s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Time>,
    /// Time a switch needs to forward a packet, added to every hop that leaves a switch (default 0s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub router_delay: Option<Time>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodesSpec {
    /// How many nodes (default: every endpoint of the fabric).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// GPUs of a plain node: all-to-all connected, one rank each (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    /// A machine (preset or file) as every node instead: its GPUs reach the network through its
    /// own PCIe/NVLink paths to its NICs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// GPU-to-GPU links inside a plain node (default: twice the network link, as seed 003).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intra_bandwidth: Option<Bandwidth>,
    /// NICs of a plain node (default 1); GPUs are spread over them in turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nics: Option<u32>,
    /// Injection bandwidth of a NIC: its link to the fabric (default: the network link's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_bandwidth: Option<Bandwidth>,
}

impl ClusterSpec {
    /// Every network link and NIC `factor` times as fast (a scenario's `bandwidth_scale`): the
    /// fabric's links, a stated `nic_bandwidth`, and a machine node's NICs at their own line rate.
    /// A plain node's GPU links follow the network link where the file leaves them at its default.
    pub fn scale(&mut self, factor: f64) {
        self.link.bandwidth.0 *= factor;
        if let Some(b) = &mut self.nodes.nic_bandwidth {
            b.0 *= factor;
        }
        self.nic_line_scale = Some(factor);
    }

    /// Nodes and GPUs per node, without building anything (for listings); None for machine
    /// nodes, whose GPU count needs the machine.
    pub fn size(&self) -> Option<(u64, u64)> {
        let endpoints = if let Some(f) = &self.fabric.fat_tree {
            let lpp = f.leaves_per_pod.unwrap_or(f.radix / 2);
            let npl = f.nodes_per_leaf.unwrap_or(fat_tree::leaf_room(f, self.nodes.nics.unwrap_or(1)));
            f.leaves.unwrap_or(f.pods * lpp) as u64 * npl as u64
        } else if let Some(d) = &self.fabric.dragonfly {
            d.groups as u64 * d.a as u64 * d.p as u64
        } else {
            self.fabric.graph.as_ref()?.hosts.len() as u64
        };
        let nodes = self.nodes.count.map(u64::from).unwrap_or(endpoints);
        self.nodes.machine.is_none().then(|| (nodes, self.nodes.gpus.unwrap_or(1) as u64))
    }
}

/// Builds the machine: switches and their links from the fabric, then the nodes.
pub(crate) struct Builder {
    pub spec: MachineSpec,
    pub link_bw: Bandwidth,
    pub latency: Time,
    pub router_delay: Time,
    pub summary: Vec<String>,
}

/// A cluster is compiled into one machine graph of at most this many devices and links
/// (beyond that memory, not the models, runs out).
pub const MAX_DEVICES: u64 = 2_000_000;
pub const MAX_LINKS: u64 = 10_000_000;

impl Builder {
    /// Refuse, before building it, a part that would take the machine past the size limits.
    pub fn budget(&self, origin: &str, field: &str, devices: u64, links: u64) -> Result<()> {
        let d = self.spec.devices.len() as u64 + devices;
        let l = self.spec.links.len() as u64 + links;
        if d > MAX_DEVICES || l > MAX_LINKS {
            return Err(Error::input(
                origin,
                field,
                format!("would build {d} devices and {l} links (at most {MAX_DEVICES} and {MAX_LINKS}); describe a smaller cluster"),
            ));
        }
        Ok(())
    }

    pub fn switch(&mut self, name: String, group: Option<u32>) {
        self.spec.devices.push(DeviceSpec { group, ..DeviceSpec::new(name, DeviceKind::Switch) });
    }

    /// A network link of `count` parallel links; the router delay of each switch end is
    /// folded into the hop's latency.
    pub fn wire(&mut self, a: &str, b: &str, count: u32) {
        let latency = Time(self.latency.0 + self.router_delay.0);
        self.spec.links.push(LinkSpec {
            count: (count > 1).then_some(count),
            bandwidth: Some(self.link_bw),
            latency: Some(latency),
            ..LinkSpec::new(a, b, LinkKind::Network)
        });
    }
}

/// Where node endpoints attach, in node order: the switch of each of the node's NICs (one for
/// all of them, or one per NIC on a rail-optimised graph, taken in turn).
pub(crate) type Attach = Vec<Vec<String>>;

pub fn build(c: &ClusterSpec, origin: &str) -> Result<MachineSpec> {
    let mut b = Builder {
        spec: MachineSpec {
            name: c.name.clone(),
            description: c.description.clone(),
            source: c.source.clone(),
            devices: Vec::new(),
            links: Vec::new(),
            network: None,
            acs: None,
        },
        link_bw: c.link.bandwidth,
        latency: c.link.latency.unwrap_or(Time(0)),
        router_delay: c.link.router_delay.unwrap_or(Time(0)),
        summary: Vec::new(),
    };
    if c.link.bandwidth.bytes_per_sec().partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return Err(Error::input(origin, "link.bandwidth", "is zero; give the network link's bandwidth, e.g. 11.9GB/s"));
    }
    for (field, bw) in
        [("link.bandwidth", Some(c.link.bandwidth)), ("nodes.nic_bandwidth", c.nodes.nic_bandwidth), ("nodes.intra_bandwidth", c.nodes.intra_bandwidth)]
    {
        if let Some(why) = bw.and_then(|b| crate::units::below_link_floor(b.bytes_per_sec())) {
            return Err(Error::input(origin, field, why));
        }
    }
    // A node given as a machine file is read once, here: its NICs take the fabric's ports.
    let machine = match &c.nodes.machine {
        Some(source) => Some(Machine::load(source).map_err(|e| Error::input(origin, "nodes.machine", e.to_string()))?),
        None => None,
    };
    let nics = match &machine {
        Some(m) => m.spec.devices.iter().filter(|d| d.kind == DeviceKind::Nic).count().max(1) as u32,
        None => {
            // Checked before the fabric, whose leaves count each NIC as a port.
            let (gpus, nics) = (c.nodes.gpus.unwrap_or(1), c.nodes.nics.unwrap_or(1));
            if !(1..=64).contains(&gpus) {
                return Err(Error::input(origin, "nodes.gpus", format!("is {gpus}; give 1 to 64 GPUs per node")));
            }
            if !(1..=gpus).contains(&nics) {
                return Err(Error::input(origin, "nodes.nics", format!("is {nics}; give 1 to {gpus} (at most one per GPU)")));
            }
            nics
        }
    };
    let attach = match (&c.fabric.fat_tree, &c.fabric.dragonfly, &c.fabric.graph) {
        (Some(f), None, None) => fat_tree::build(f, nics, &mut b, origin)?,
        (None, Some(d), None) => dragonfly::build(d, &mut b, origin)?,
        (None, None, Some(g)) => graph::build(g, &mut b, origin)?,
        _ => return Err(Error::input(origin, "fabric", "needs exactly one of fat_tree, dragonfly or graph")),
    };
    let count = c.nodes.count.map(|n| n as usize).unwrap_or(attach.len());
    if count == 0 || count > attach.len() {
        return Err(Error::input(origin, "nodes.count", format!("is {count}; the fabric has room for 1 to {} nodes", attach.len())));
    }
    nodes(c, machine.as_ref(), &mut b, &attach[..count], origin)?;
    let mut network = c.network.clone();
    network.summary = b.summary.clone();
    network.summary.push(node_summary(c, count));
    b.spec.network = Some(network);
    Ok(b.spec)
}

fn node_summary(c: &ClusterSpec, count: usize) -> String {
    match &c.nodes.machine {
        Some(m) => format!("{count} nodes, each a {m}"),
        None => format!(
            "{count} nodes of {} GPU(s), all-to-all inside at {}, {} NIC(s) each",
            c.nodes.gpus.unwrap_or(1),
            c.nodes.intra_bandwidth.map(|b| b.to_string()).unwrap_or_else(|| format!("2 × {}", c.link.bandwidth)),
            c.nodes.nics.unwrap_or(1)
        ),
    }
}

/// A node's list of switches against its `nics` NICs: NIC k takes entry k mod the list's length
/// (`GraphSpec::hosts`). A list longer than the NICs has entries no NIC takes (a typo most
/// likely), refused naming the list and the switches left with no NIC (or, where each of them is
/// also listed earlier, the unused entries); a list of more than one switch where some NIC shares
/// a switch with another (a shorter list wraps, or a name repeats) is noted in the cluster's
/// summary (`contend show`), one note per distinct sharing, naming the lists it holds for.
fn rails_per_nic(attach: &[Vec<String>], nics: usize, b: &mut Builder, origin: &str) -> Result<()> {
    if let Some((i, h)) = attach.iter().enumerate().find(|(_, h)| h.len() > 1 && h.len() > nics) {
        let mut idle: Vec<&str> = Vec::new();
        for s in &h[nics..] {
            if !h[..nics].contains(s) && !idle.contains(&s.as_str()) {
                idle.push(s);
            }
        }
        let why = if idle.is_empty() {
            format!("entries {nics} to {} ({}) are taken by no NIC", h.len() - 1, h[nics..].join(", "))
        } else {
            format!("{} would take none", idle.join(", "))
        };
        return Err(Error::input(
            origin,
            format!("fabric.graph.hosts[{i}]"),
            format!("lists {} switches for the node's {nics} NIC(s), so {why}; list one switch per NIC ({nics}), or one for them all", h.len()),
        ));
    }
    // Each list's first shared switch: the first NIC k whose switch an earlier NIC j took.
    let mut notes: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, h) in attach.iter().enumerate().filter(|(_, h)| h.len() > 1) {
        let switch = |k: usize| &h[k % h.len()];
        let Some((k, j)) = (1..nics).find_map(|k| (0..k).find(|&j| switch(j) == switch(k)).map(|j| (k, j))) else {
            continue;
        };
        let note = format!(
            "{} switches for {nics} NICs: NIC{k} shares {} with NIC{j} (NICs take the listed switches in turn); list {nics} different ones to give each NIC its own",
            h.len(),
            switch(k)
        );
        match notes.iter_mut().find(|(n, _)| *n == note) {
            Some((_, lists)) => lists.push(i),
            None => notes.push((note, vec![i])),
        }
    }
    for (note, lists) in notes {
        let lists: Vec<String> = lists.iter().map(|i| i.to_string()).collect();
        b.summary.push(format!("fabric.graph.hosts[{}]: {note}", lists.join(", ")));
    }
    Ok(())
}

fn nodes(c: &ClusterSpec, machine: Option<&Machine>, b: &mut Builder, attach: &[Vec<String>], origin: &str) -> Result<()> {
    let nic_bw = c.nodes.nic_bandwidth.unwrap_or(c.link.bandwidth);
    // A message pays the router delay once per switch it crosses (CODES, SST/Merlin, BookSim). A
    // switch-to-switch hop carries the delay of the switch it leaves; a path between NICs crosses one
    // switch more than it has such hops, and begins and ends on a NIC hop, so each NIC hop carries
    // half a delay (a link's latency is the same both ways). Half of an odd count of picoseconds
    // rounds down: at most 1 ps short per path.
    let nic_latency = Time(b.latency.0 + b.router_delay.0 / 2);
    let wire_nic = |b: &mut Builder, nic: String, switch: &str, nic_bw: Bandwidth| {
        b.spec.links.push(LinkSpec { bandwidth: Some(nic_bw), latency: Some(nic_latency), ..LinkSpec::new(switch, nic, LinkKind::Network) });
    };
    if let (Some(source), Some(m)) = (&c.nodes.machine, machine) {
        if c.nodes.gpus.is_some() || c.nodes.intra_bandwidth.is_some() || c.nodes.nics.is_some() {
            return Err(Error::input(
                origin,
                "nodes",
                "gives a machine and plain-node fields (gpus, intra_bandwidth, nics); the machine describes the node, drop the others",
            ));
        }
        if m.spec.network.is_some() {
            return Err(Error::input(origin, "nodes.machine", format!("{source} is a cluster; a node must be one machine")));
        }
        let n = attach.len() as u64;
        b.budget(origin, "nodes", n * m.devices.len() as u64, n * m.links.len() as u64)?;
        // Each NIC at its ports' line rate where the machine gives one and the fabric's link is
        // faster; a `nic_bandwidth` the cluster states is taken as written.
        let nics: Vec<(&str, Bandwidth)> = m
            .spec
            .devices
            .iter()
            .filter(|d| d.kind == DeviceKind::Nic)
            .map(|d| {
                let rate = match (c.nodes.nic_bandwidth, d.line_rate().map(|own| own * c.nic_line_scale.unwrap_or(1.0))) {
                    (None, Some(own)) if own < nic_bw.bytes_per_sec() => Bandwidth(own),
                    _ => nic_bw,
                };
                (d.name.as_str(), rate)
            })
            .collect();
        if nics.is_empty() {
            return Err(Error::input(origin, "nodes.machine", format!("{source} has no nic device; add one (kind: nic) so the node can reach the network")));
        }
        rails_per_nic(attach, nics.len(), b, origin)?;
        for (i, switches) in attach.iter().enumerate() {
            for d in &m.spec.devices {
                b.spec.devices.push(DeviceSpec { name: format!("n{i}.{}", d.name), ..d.clone() });
            }
            for l in &m.spec.links {
                b.spec.links.push(LinkSpec { a: format!("n{i}.{}", l.a), b: format!("n{i}.{}", l.b), ..l.clone() });
            }
            for (k, (nic, rate)) in nics.iter().enumerate() {
                wire_nic(b, format!("n{i}.{nic}"), &switches[k % switches.len()], *rate);
            }
        }
        return Ok(());
    }
    let (gpus, nic_count) = (c.nodes.gpus.unwrap_or(1), c.nodes.nics.unwrap_or(1));
    rails_per_nic(attach, nic_count as usize, b, origin)?;
    let (n, g, k) = (attach.len() as u64, gpus as u64, nic_count as u64);
    b.budget(origin, "nodes", n * (g + k), n * (g * (g - 1) / 2 + g + k))?;
    let intra = c.nodes.intra_bandwidth.unwrap_or(Bandwidth(2.0 * c.link.bandwidth.bytes_per_sec()));
    let local = |b: &mut Builder, x: String, y: String, kind: LinkKind| {
        b.spec.links.push(LinkSpec {
            bandwidth: Some(intra),
            // Generated nodes are seed 003's: latency is the network links' and routers' only,
            // and its links are ideal dual simplex (no duplex loss).
            latency: Some(Time(0)),
            efficiency: Some(1.0),
            duplex: Some(0.0),
            ..LinkSpec::new(x, y, kind)
        });
    };
    for (i, switches) in attach.iter().enumerate() {
        for g in 0..gpus {
            b.spec.devices.push(DeviceSpec { latency: Some(Time(0)), ..DeviceSpec::new(format!("n{i}.GPU{g}"), DeviceKind::Gpu) });
        }
        for k in 0..nic_count {
            b.spec.devices.push(DeviceSpec::new(format!("n{i}.NIC{k}"), DeviceKind::Nic));
        }
        for g in 0..gpus {
            for h in g + 1..gpus {
                local(b, format!("n{i}.GPU{g}"), format!("n{i}.GPU{h}"), LinkKind::Nvlink);
            }
            local(b, format!("n{i}.NIC{}", g % nic_count), format!("n{i}.GPU{g}"), LinkKind::Pcie);
        }
        for k in 0..nic_count {
            wire_nic(b, format!("n{i}.NIC{k}"), &switches[k as usize % switches.len()], nic_bw);
        }
    }
    Ok(())
}

/// Check a count against its bounds, naming the field and the fix.
pub(crate) fn bounded(origin: &str, field: &str, v: u32, lo: u32, hi: u32, why: &str) -> Result<u32> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(Error::input(origin, field, format!("is {v}; give {lo} to {hi} ({why})")))
    }
}
