//! A text picture of a machine: each root complex's PCIe tree, the PCIe links that close a
//! cycle in it (a link between switch partitions, a second uplink), then the other links.

use super::{DeviceKind, LinkKind, Machine};

pub fn render_tree(m: &Machine) -> String {
    if let Some(net) = &m.spec.network {
        return render_cluster(m, net);
    }
    pcie_forest(m).0
}

/// Per link: whether it is a PCIe link the drawing's spanning forest does not use, i.e. one that
/// closes a cycle in the PCIe graph (the text and the picture mark the same links).
pub fn closes_cycle(m: &Machine) -> Vec<bool> {
    if m.spec.network.is_some() {
        return vec![false; m.links.len()];
    }
    pcie_forest(m).1
}

/// The text picture and, per link, whether it closes a PCIe cycle.
fn pcie_forest(m: &Machine) -> (String, Vec<bool>) {
    let n = m.devices.len();
    let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (i, l) in m.links.iter().enumerate().filter(|(_, l)| l.kind == LinkKind::Pcie) {
        adj[l.a].push((l.b, i));
        adj[l.b].push((l.a, i));
    }
    let mut seen = vec![false; n];
    let mut used = vec![false; m.links.len()];
    let mut out = title(m);
    let mut roots: Vec<usize> = (0..n).filter(|&v| m.devices[v].kind == DeviceKind::RootComplex).collect();
    // Devices on no PCIe tree with a root complex still get printed, as their own roots.
    roots.extend((0..n).filter(|&v| m.devices[v].kind != DeviceKind::RootComplex && adj[v].is_empty()));
    for r in roots {
        if seen[r] {
            continue;
        }
        walk(m, &adj, r, None, "", true, true, &mut seen, &mut used, &mut out);
    }
    let cycle: Vec<bool> = m.links.iter().zip(&used).map(|(l, &u)| l.kind == LinkKind::Pcie && !u).collect();
    let closing: Vec<String> = m
        .links
        .iter()
        .zip(&cycle)
        .filter(|(_, &c)| c)
        .map(|(l, _)| format!("  ⟲ {} ↔ {}  {}", m.devices[l.a].name, m.devices[l.b].name, describe(l)))
        .collect();
    if !closing.is_empty() {
        out.push_str("PCIe links closing a cycle (⟲):\n");
        out.push_str(&closing.join("\n"));
        out.push('\n');
    }
    let others: Vec<String> =
        m.links.iter().filter(|l| l.kind != LinkKind::Pcie).map(|l| format!("  {} ↔ {}  {}", m.devices[l.a].name, m.devices[l.b].name, describe(l))).collect();
    if !others.is_empty() {
        out.push_str("other links:\n");
        out.push_str(&others.join("\n"));
        out.push('\n');
    }
    (out, cycle)
}

/// A cluster in words: the fabric, counts per kind of device and link, the settings, and one
/// node's inside (every node is alike).
fn render_cluster(m: &Machine, net: &super::NetworkSpec) -> String {
    let mut out = title(m);
    for line in &net.summary {
        out.push_str(&format!("  {line}\n"));
    }
    let mut kinds: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for d in &m.devices {
        *kinds.entry(d.kind.name()).or_default() += 1;
    }
    let counts: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
    out.push_str(&format!("  devices: {}\n", counts.join(", ")));
    let network: Vec<&super::Link> = m.links.iter().filter(|l| l.kind == LinkKind::Network).collect();
    if let Some(l) = network.first() {
        out.push_str(&format!("  {} network links, e.g. {} ↔ {}: {}\n", network.len(), m.devices[l.a].name, m.devices[l.b].name, describe(l)));
    }
    out.push_str(&format!("  routing {:?}, NIC scheduling {}, seed {}\n", net.routing, net.nic_scheduling, net.seed).to_lowercase());
    out.push_str("node n0:\n");
    for l in m.links.iter().filter(|l| m.devices[l.a].name.starts_with("n0.") || m.devices[l.b].name.starts_with("n0.")) {
        out.push_str(&format!("  {} ↔ {}  {}\n", m.devices[l.a].name, m.devices[l.b].name, describe(l)));
    }
    out
}

fn title(m: &Machine) -> String {
    if m.description.is_empty() {
        format!("{}\n", m.name)
    } else {
        format!("{} — {}\n", m.name, m.description)
    }
}

fn describe(l: &super::Link) -> String {
    let mut s = format!("{}, {:.2} GB/s per direction", l.label, l.bandwidth / 1e9);
    if l.latency > 0.0 {
        s.push_str(&format!(", {:.2} µs", l.latency * 1e6));
    }
    // The cap of the peer copies crossing it (`peer_bandwidth`): both directions, or one.
    match l.peer {
        [Some(a), Some(b)] if a == b => s.push_str(&format!(", peer copies {:.2} GB/s per direction", a / 1e9)),
        [down, up] => {
            for (which, cap) in [("downstream", down), ("upstream", up)] {
                if let Some(c) = cap {
                    s.push_str(&format!(", peer copies {which} {:.2} GB/s", c / 1e9));
                }
            }
        }
    }
    s
}

#[allow(clippy::too_many_arguments)]
fn walk(
    m: &Machine,
    adj: &[Vec<(usize, usize)>],
    v: usize,
    via: Option<usize>,
    prefix: &str,
    last: bool,
    root: bool,
    seen: &mut [bool],
    used: &mut [bool],
    out: &mut String,
) {
    seen[v] = true;
    if let Some(i) = via {
        used[i] = true;
    }
    let d = &m.devices[v];
    // ACS redirect changes every peer route through the switch, so the picture says so.
    let kind = if d.acs_redirect { format!("{}, ACS redirect", d.kind.name()) } else { d.kind.name().to_string() };
    let link = via.map(|i| format!("  [{}]", describe(&m.links[i]))).unwrap_or_default();
    if root {
        out.push_str(&format!("{} ({kind})\n", d.name));
    } else {
        out.push_str(&format!("{prefix}{}{} ({kind}){link}\n", if last { "└── " } else { "├── " }, d.name));
    }
    let child_prefix = if root { String::new() } else { format!("{prefix}{}", if last { "    " } else { "│   " }) };
    // Claim every unseen neighbour before descending, so that a device hangs under the nearest
    // ancestor and a link between siblings (switch partitions) is the one that closes a cycle.
    let mut kids: Vec<(usize, usize)> = Vec::new();
    for &(w, i) in &adj[v] {
        if !seen[w] {
            seen[w] = true;
            kids.push((w, i));
        }
    }
    for (k, (w, i)) in kids.iter().enumerate() {
        walk(m, adj, *w, Some(*i), &child_prefix, k + 1 == kids.len(), false, seen, used, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two partitions of one switch chip, each with its own uplink, joined inside the chip: the
    /// link between them closes a cycle and is drawn and marked.
    #[test]
    fn cycle_closing_links_are_drawn_and_marked() {
        let text = "name: parts\ndevices:\n  - {name: RC, kind: root_complex}\n  - {name: P0, kind: pcie_switch}\n  - {name: P1, kind: pcie_switch}\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\nlinks:\n  - {a: RC, b: P0, kind: pcie, gen: 4, lanes: 16}\n  - {a: RC, b: P1, kind: pcie, gen: 4, lanes: 16}\n  - {a: P0, b: P1, kind: pcie, bandwidth: 64GB/s}\n  - {a: P0, b: GPU0, kind: pcie, gen: 4, lanes: 16}\n  - {a: P1, b: GPU1, kind: pcie, gen: 4, lanes: 16}\n";
        let m = Machine::from_text(text, "parts").unwrap();
        let s = render_tree(&m);
        assert!(s.contains("PCIe links closing a cycle") && s.contains("⟲ P0 ↔ P1"), "{s}");
        assert_eq!(closes_cycle(&m).iter().filter(|&&c| c).count(), 1);
        assert!(!closes_cycle(&Machine::load("typical-8gpu").unwrap()).contains(&true));
        // Traffic between the partitions stays inside the chip.
        let plan = crate::flow::router::Router::new(&m).plan(m.device("GPU0").unwrap(), m.device("GPU1").unwrap(), None, &[], true).unwrap();
        assert_eq!(plan.hops.len(), 3);
    }

    /// `contend show` says which links cap the peer copies crossing them, and which way.
    #[test]
    fn peer_bandwidth_is_shown_on_its_link() {
        let text = "name: two\ndevices:\n  - {name: S0, kind: root_complex}\n  - {name: S1, kind: root_complex}\n  - {name: RP, kind: root_complex}\nlinks:\n  - {a: S0, b: S1, kind: xgmi, bandwidth: 64GB/s, peer_bandwidth: 30GB/s}\n  - {a: S0, b: RP, kind: fabric, bandwidth: 128GB/s, peer_upstream: 38GB/s}\n";
        let s = render_tree(&Machine::from_text(text, "two").unwrap());
        assert!(s.contains("S0 ↔ S1  xGMI, 64.00 GB/s per direction") && s.contains("peer copies 30.00 GB/s per direction"), "{s}");
        assert!(s.contains("peer copies upstream 38.00 GB/s") && !s.contains("downstream"), "{s}");
    }
}
