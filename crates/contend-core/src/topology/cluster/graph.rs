//! Any network graph: switches, links between them (bandwidth and latency of their own, or the
//! cluster's), and the switch each node hangs off — or, rail-optimised, the switch of each of
//! its NICs (NIC k of every node on rail switch k).

use super::{Attach, Builder};
use crate::error::{Error, Result};
use crate::topology::{LinkKind, LinkSpec};
use crate::units::{Bandwidth, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphSpec {
    pub switches: Vec<GraphSwitch>,
    pub links: Vec<GraphLink>,
    /// The switch of every node, in node order (a name may repeat); or a list per node, the
    /// switch of each of its NICs in order (rail-optimised: `[R0, R1, …, R7]`, NIC k on R k;
    /// a node with more NICs than switches listed takes them in turn, which the cluster's summary
    /// notes; a list longer than the node's NICs is refused).
    pub hosts: Vec<GraphHost>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum GraphHost {
    One(String),
    Rails(Vec<String>),
}

impl GraphHost {
    fn switches(&self) -> Vec<String> {
        match self {
            GraphHost::One(s) => vec![s.clone()],
            GraphHost::Rails(v) => v.clone(),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphSwitch {
    pub name: String,
    /// A group (dragonfly group, pod) for Valiant routing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    pub a: String,
    pub b: String,
    /// Parallel links (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Default: the cluster's link bandwidth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<Bandwidth>,
    /// Wire latency of this link (default: the cluster's `link.latency`); the router delay is
    /// added as on every switch-to-switch hop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Time>,
}

pub(super) fn build(g: &GraphSpec, b: &mut Builder, origin: &str) -> Result<Attach> {
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, s) in g.switches.iter().enumerate() {
        if index.insert(s.name.as_str(), i).is_some() {
            return Err(Error::input(origin, format!("fabric.graph.switches[{i}].name"), format!("\"{}\" is used twice; switch names must be unique", s.name)));
        }
        b.switch(s.name.clone(), s.group);
    }
    let mut adj = vec![Vec::new(); g.switches.len()];
    for (i, l) in g.links.iter().enumerate() {
        let end = |name: &str, which: &str| {
            index.get(name).copied().ok_or_else(|| {
                Error::input(origin, format!("fabric.graph.links[{i}].{which}"), format!("\"{name}\" is not a switch; list it under switches or fix the name"))
            })
        };
        let (x, y) = (end(&l.a, "a")?, end(&l.b, "b")?);
        if x == y {
            return Err(Error::input(origin, format!("fabric.graph.links[{i}]"), "joins a switch to itself; link two different switches"));
        }
        if l.count == Some(0) {
            return Err(Error::input(origin, format!("fabric.graph.links[{i}].count"), "is 0; a link has at least one"));
        }
        if let Some(why) = l.bandwidth.and_then(|b| crate::units::below_link_floor(b.bytes_per_sec())) {
            return Err(Error::input(origin, format!("fabric.graph.links[{i}].bandwidth"), why));
        }
        adj[x].push(y);
        adj[y].push(x);
        // The link's own latency is its wire, as `link.latency` is; the switch it leaves still
        // charges its router delay (docs/models.md, "Latency per hop").
        let latency = Time(l.latency.unwrap_or(b.latency).0 + b.router_delay.0);
        b.spec.links.push(LinkSpec {
            count: l.count.filter(|&c| c > 1),
            bandwidth: Some(l.bandwidth.unwrap_or(b.link_bw)),
            latency: Some(latency),
            ..LinkSpec::new(l.a.clone(), l.b.clone(), LinkKind::Network)
        });
    }
    if g.hosts.is_empty() {
        return Err(Error::input(origin, "fabric.graph.hosts", "is empty; list the switch of every node"));
    }
    let hosts: Vec<Vec<String>> = g.hosts.iter().map(GraphHost::switches).collect();
    for (i, h) in hosts.iter().enumerate() {
        if h.is_empty() {
            return Err(Error::input(origin, format!("fabric.graph.hosts[{i}]"), "is an empty list; give the switch of each NIC of the node"));
        }
        if let Some(x) = h.iter().find(|x| !index.contains_key(x.as_str())) {
            return Err(Error::input(origin, format!("fabric.graph.hosts[{i}]"), format!("\"{x}\" is not a switch; list it under switches or fix the name")));
        }
    }
    // Every switch that hosts a node must reach every other one.
    let first = index[hosts[0][0].as_str()];
    let mut seen = vec![false; g.switches.len()];
    let mut queue = VecDeque::from([first]);
    seen[first] = true;
    while let Some(v) = queue.pop_front() {
        for &w in &adj[v] {
            if !seen[w] {
                seen[w] = true;
                queue.push_back(w);
            }
        }
    }
    if let Some((i, x)) = hosts.iter().enumerate().find_map(|(i, h)| h.iter().find(|x| !seen[index[x.as_str()]]).map(|x| (i, x))) {
        return Err(Error::input(
            origin,
            format!("fabric.graph.hosts[{i}]"),
            format!("{x} cannot reach {}: the graph is disconnected; add links between its parts", hosts[0][0]),
        ));
    }
    b.summary.push(format!("network graph: {} switches, {} links, {} nodes", g.switches.len(), g.links.len(), g.hosts.len()));
    Ok(hosts)
}
