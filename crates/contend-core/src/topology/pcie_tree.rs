//! The PCIe tree under one root complex, as the SC16 model sees it.
//!
//! Nodes are numbered in breadth-first order from the root, so a parent always has a smaller
//! number than its children and "by increasing depth" is simply "by increasing number".
//! Each node v other than the root owns two directed links: up (v -> parent) = 2v and
//! down (parent -> v) = 2v + 1.

use super::{DeviceKind, LinkKind, Machine};
use crate::error::{Error, Result};
use std::collections::VecDeque;

#[derive(Clone, Debug)]
pub struct PcieTree {
    /// Machine device index of each tree node.
    pub device: Vec<usize>,
    pub parent: Vec<usize>,
    pub depth: Vec<u32>,
    pub name: Vec<String>,
    /// Tree node of each machine device (usize::MAX when outside this tree).
    node_of: Vec<usize>,
}

/// The unique tree path of one transfer: its directed links in order, up then down.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub src: usize,
    pub dst: usize,
    pub hops: Vec<u32>,
    pub n_up: usize,
    /// The path turns at the root complex (the set CR of the SC16 model).
    pub crosses_root: bool,
}

pub const NOT_IN_TREE: usize = usize::MAX;

impl PcieTree {
    /// The PCIe tree that contains all of `endpoints` (machine device indices).
    /// `model` names the model asking, for the refusal message.
    pub fn containing(m: &Machine, endpoints: &[usize], model: &str) -> Result<PcieTree> {
        let refuse = |reason: String| Error::Unsupported { model: model.to_string(), reason };
        let n = m.devices.len();
        let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
        for l in m.links.iter().filter(|l| l.kind == LinkKind::Pcie) {
            adj[l.a].push(l.b);
            adj[l.b].push(l.a);
        }
        let Some(&first) = endpoints.first() else {
            return Err(Error::Runtime("a PCIe tree needs at least one endpoint".into()));
        };
        // The connected PCIe component of the first endpoint.
        let mut comp = vec![false; n];
        let mut stack = vec![first];
        comp[first] = true;
        let mut members = Vec::new();
        while let Some(v) = stack.pop() {
            members.push(v);
            for &w in &adj[v] {
                if !comp[w] {
                    comp[w] = true;
                    stack.push(w);
                }
            }
        }
        if let Some(&other) = endpoints.iter().find(|&&e| !comp[e]) {
            return Err(refuse(format!(
                "{} and {} are not in one PCIe tree (their path leaves PCIe, e.g. over QPI/UPI, NVLink or the network)",
                m.devices[first].name, m.devices[other].name
            )));
        }
        let roots: Vec<usize> = members.iter().copied().filter(|&v| m.devices[v].kind == DeviceKind::RootComplex).collect();
        if roots.len() != 1 {
            let why = if roots.is_empty() {
                format!("the PCIe component of {} has no root_complex device", m.devices[first].name)
            } else {
                format!("the PCIe component of {} has {} root complexes", m.devices[first].name, roots.len())
            };
            return Err(refuse(why));
        }
        let edges: usize = members.iter().map(|&v| adj[v].len()).sum::<usize>() / 2;
        if edges != members.len() - 1 {
            return Err(refuse(format!(
                "the PCIe links around {} form a cycle ({} links for {} devices), so the network is not a tree",
                m.devices[first].name,
                edges,
                members.len()
            )));
        }
        let mut tree = PcieTree { device: Vec::new(), parent: Vec::new(), depth: Vec::new(), name: Vec::new(), node_of: vec![NOT_IN_TREE; n] };
        let mut queue = VecDeque::from([(roots[0], 0usize, 0u32)]);
        while let Some((v, parent, depth)) = queue.pop_front() {
            let id = tree.device.len();
            tree.node_of[v] = id;
            tree.device.push(v);
            tree.parent.push(parent);
            tree.depth.push(depth);
            tree.name.push(m.devices[v].name.clone());
            let mut children: Vec<usize> = adj[v].iter().copied().filter(|&w| tree.node_of[w] == NOT_IN_TREE).collect();
            children.sort_unstable(); // deterministic numbering: machine order
            for w in children {
                tree.node_of[w] = usize::MAX - 1; // queued
                queue.push_back((w, id, depth + 1));
            }
        }
        Ok(tree)
    }

    pub fn len(&self) -> usize {
        self.device.len()
    }

    pub fn is_empty(&self) -> bool {
        self.device.is_empty()
    }

    pub fn node(&self, device: usize) -> usize {
        self.node_of[device]
    }

    pub fn route(&self, src_device: usize, dst_device: usize) -> Route {
        let (s, d) = (self.node_of[src_device], self.node_of[dst_device]);
        let (mut a, mut b) = (s, d);
        let mut up = Vec::new();
        let mut down = Vec::new();
        while self.depth[a] > self.depth[b] {
            up.push(2 * a as u32);
            a = self.parent[a];
        }
        while self.depth[b] > self.depth[a] {
            down.push(2 * b as u32 + 1);
            b = self.parent[b];
        }
        while a != b {
            up.push(2 * a as u32);
            down.push(2 * b as u32 + 1);
            a = self.parent[a];
            b = self.parent[b];
        }
        let n_up = up.len();
        down.reverse();
        up.extend(down);
        Route { src: s, dst: d, hops: up, n_up, crosses_root: a == 0 }
    }

    /// "K0→SW_A" for up links, "SW_A→K1" for down links.
    pub fn link_name(&self, link: u32) -> String {
        let v = (link / 2) as usize;
        let p = self.parent[v];
        if link.is_multiple_of(2) {
            format!("{}→{}", self.name[v], self.name[p])
        } else {
            format!("{}→{}", self.name[p], self.name[v])
        }
    }

    /// The egress port a directed link leaves from, in the words of the SC16 slides.
    pub fn port_name(&self, link: u32) -> String {
        let v = (link / 2) as usize;
        let p = self.parent[v];
        if link.is_multiple_of(2) {
            format!("upstream port of {}", self.name[v])
        } else {
            format!("port of {} towards {}", self.name[p], self.name[v])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_on_the_worked_example_tree() {
        let m = Machine::load("cs-storm-socket").unwrap();
        let g = |n: &str| m.device(n).unwrap();
        let t = PcieTree::containing(&m, &m.gpus(), "sc16").unwrap();
        assert_eq!(t.name[0], "RC0");
        let r = t.route(g("GPU1"), g("GPU4"));
        assert!(r.crosses_root);
        let names: Vec<_> = r.hops.iter().map(|&h| t.link_name(h)).collect();
        assert_eq!(names, ["GPU1→K0", "K0→SWA", "SWA→RC0", "RC0→SWB", "SWB→K2", "K2→GPU4"]);
        let r = t.route(g("GPU3"), g("GPU2"));
        assert!(!r.crosses_root);
        assert_eq!(r.n_up, 1);
        assert_eq!(r.hops.len(), 2);
    }

    #[test]
    fn two_sockets_are_refused() {
        let m = Machine::load("cs-storm").unwrap();
        let e = PcieTree::containing(&m, &[m.device("GPU0").unwrap(), m.device("GPU8").unwrap()], "sc16").unwrap_err().to_string();
        assert!(e.contains("not in one PCIe tree"), "{e}");
    }
}
