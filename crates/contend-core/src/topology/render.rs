//! A text picture of a machine: each root complex's PCIe tree, then the other links.

use super::{DeviceKind, LinkKind, Machine};

pub fn render_tree(m: &Machine) -> String {
    if let Some(net) = &m.spec.network {
        return render_cluster(m, net);
    }
    let n = m.devices.len();
    let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
    for (i, l) in m.links.iter().enumerate().filter(|(_, l)| l.kind == LinkKind::Pcie) {
        adj[l.a].push((l.b, i));
        adj[l.b].push((l.a, i));
    }
    let mut seen = vec![false; n];
    let mut out = format!("{} — {}\n", m.name, m.description);
    let mut roots: Vec<usize> = (0..n).filter(|&v| m.devices[v].kind == DeviceKind::RootComplex).collect();
    // Devices on no PCIe tree with a root complex still get printed, as their own roots.
    roots.extend((0..n).filter(|&v| m.devices[v].kind != DeviceKind::RootComplex && adj[v].is_empty()));
    for r in roots {
        if seen[r] {
            continue;
        }
        walk(m, &adj, r, None, "", true, true, &mut seen, &mut out);
    }
    let others: Vec<String> =
        m.links.iter().filter(|l| l.kind != LinkKind::Pcie).map(|l| format!("  {} ↔ {}  {}", m.devices[l.a].name, m.devices[l.b].name, describe(l))).collect();
    if !others.is_empty() {
        out.push_str("other links:\n");
        out.push_str(&others.join("\n"));
        out.push('\n');
    }
    out
}

/// A cluster in words: the fabric, counts per kind of device and link, the settings, and one
/// node's inside (every node is alike).
fn render_cluster(m: &Machine, net: &super::NetworkSpec) -> String {
    let mut out = format!("{} — {}\n", m.name, m.description);
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

fn describe(l: &super::Link) -> String {
    let mut s = format!("{}, {:.2} GB/s per direction", l.label, l.bandwidth / 1e9);
    if l.latency > 0.0 {
        s.push_str(&format!(", {:.2} µs", l.latency * 1e6));
    }
    s
}

#[allow(clippy::too_many_arguments)]
fn walk(m: &Machine, adj: &[Vec<(usize, usize)>], v: usize, via: Option<usize>, prefix: &str, last: bool, root: bool, seen: &mut [bool], out: &mut String) {
    seen[v] = true;
    let d = &m.devices[v];
    let kind = d.kind.name();
    let link = via.map(|i| format!("  [{}]", describe(&m.links[i]))).unwrap_or_default();
    if root {
        out.push_str(&format!("{} ({kind})\n", d.name));
    } else {
        out.push_str(&format!("{prefix}{}{} ({kind}){link}\n", if last { "└── " } else { "├── " }, d.name));
    }
    let child_prefix = if root { String::new() } else { format!("{prefix}{}", if last { "    " } else { "│   " }) };
    let kids: Vec<(usize, usize)> = adj[v].iter().copied().filter(|(w, _)| !seen[*w]).collect();
    for (k, (w, i)) in kids.iter().enumerate() {
        if !seen[*w] {
            walk(m, adj, *w, Some(*i), &child_prefix, k + 1 == kids.len(), false, seen, out);
        }
    }
}
