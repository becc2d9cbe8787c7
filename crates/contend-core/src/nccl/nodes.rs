//! The machine an nccl-tests run on `nodes` hosts runs on, and each host's GPUs: `nodes` copies
//! of a node machine on one non-blocking switch, or the first `nodes` nodes of a cluster preset.
//! One place for `contend nccl-tests --nodes` and `contend calibrate` of a multi-node paste, so
//! that the command a fit prints runs on the machine the fit ran on.

use super::tests_tool::{self, Request};
use crate::error::{Error, Result};
use crate::topology::Machine;

/// The machine: `machine` (a preset or file) itself on one node or where it is a cluster, else
/// `nodes` copies of it on one non-blocking switch of `network_bandwidth` per NIC (default: each
/// NIC at its ports' line rate, `port_bandwidth`; 25 GB/s (200 Gb/s) where the machine gives
/// none); each node's GPUs (`req.gpus`, the same on every node); and, for a cluster, how many
/// nodes it has.
pub fn on_nodes(machine: &str, req: &Request, nodes: usize, network_bandwidth: Option<&str>) -> Result<(Machine, Vec<Vec<usize>>, usize)> {
    if !(1..=1024).contains(&nodes) {
        return Err(Error::input("--nodes", nodes.to_string(), "is out of range; give 1 to 1024"));
    }
    let loaded = Machine::load(machine)?;
    let cluster = loaded.spec.network.is_some();
    let m = if nodes == 1 || cluster {
        if network_bandwidth.is_some() {
            let why = if cluster { format!("{machine} is a cluster: its fabric says the bandwidth") } else { "applies to --nodes 2 or more".into() };
            return Err(Error::input("--network-bandwidth", "", why));
        }
        loaded
    } else {
        let single = loaded;
        // Without the flag the switch's links run at the fastest NIC's rate, and the cluster wires
        // each NIC at the lower of its own and the link's, so every NIC runs at its own; the flag
        // sets every NIC's rate as written.
        let fastest = single.spec.devices.iter().filter_map(|d| d.line_rate()).fold(None, |a: Option<f64>, b| Some(a.map_or(b, |a| a.max(b))));
        let default = fastest.map_or_else(|| "25GB/s".to_string(), |b| format!("{b}B/s"));
        let bw = network_bandwidth.unwrap_or(&default);
        crate::units::Bandwidth::parse(bw).map_err(|e| Error::input("--network-bandwidth", bw, e))?;
        let hosts = vec!["S0"; nodes].join(", ");
        let stated = if network_bandwidth.is_some() { format!(", nic_bandwidth: {bw}") } else { String::new() };
        let text = format!(
            "name: {name}x{nodes}\ndescription: \"{nodes} x {machine} on one non-blocking switch\"\nfabric:\n  graph: {{switches: [{{name: S0}}], links: [], hosts: [{hosts}]}}\nlink: {{bandwidth: {bw}}}\nnodes: {{count: {nodes}, machine: \"{machine}\"{stated}}}\n",
            name = single.name
        );
        Machine::from_text(&text, &format!("{nodes} x {machine}"))?
    };
    // A cluster's nodes, each with a GPU0 (n0.GPU0, n1.GPU0, …).
    let have = if cluster { m.gpus().iter().filter(|&&g| m.devices[g].name.ends_with(".GPU0")).count() } else { nodes };
    // A cluster's first `nodes` nodes (n0., n1., …); a node machine, or its copies.
    let per_node: Vec<Vec<usize>> = if cluster {
        if m.device(&format!("n{}.GPU0", nodes - 1)).is_none() {
            return Err(Error::input("--nodes", nodes.to_string(), format!("is more nodes than {machine} has ({have}); give at most that")));
        }
        (0..nodes).map(|k| tests_tool::node_gpus(&m, &format!("n{k}."), req)).collect::<Result<_>>()?
    } else if nodes == 1 {
        vec![tests_tool::node_gpus(&m, "", req)?]
    } else {
        (0..nodes).map(|k| tests_tool::node_gpus(&m, &format!("n{k}."), req)).collect::<Result<_>>()?
    };
    Ok((m, per_node, have))
}
