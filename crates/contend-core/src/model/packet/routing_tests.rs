//! Per-packet routing in the packet model, against figures from first principles.

use super::super::{PacketParams, PacketPrepared};
use crate::sim::{self, Outcome};
use crate::topology::Machine;
use crate::workload::{Workload, WorkloadSpec};

fn run(machine: &str, pairs: &[(usize, usize)], size: &str) -> (Outcome, u64) {
    let m = Machine::from_text(machine, "c.yaml").unwrap();
    let mut t = String::from("transfers:\n");
    for (s, d) in pairs {
        t.push_str(&format!("  - {{src: n{s}.GPU0, dst: n{d}.GPU0, size: {size}}}\n"));
    }
    let w = Workload::resolve(&WorkloadSpec::from_text(&t, "t.yaml").unwrap(), &m, "t.yaml").unwrap();
    let p = PacketPrepared::new(&m, &w, PacketParams::defaults(&m)).unwrap();
    let o = sim::run_prepared(&w, &p, false).unwrap();
    (o, p.flows.len() as u64)
}

fn makespan(o: &Outcome) -> f64 {
    o.finish.iter().copied().fold(0.0, f64::max)
}

/// A full-bisection fat-tree (radix 8, 2 pods, 32 nodes) under a permutation: spraying every
/// packet over the next hops in turn reaches the injection bandwidth, as at flow level; one
/// hashed path per message (ecmp) does not, where two messages share an uplink.
#[test]
fn spray_per_packet_reaches_injection_bandwidth_on_a_fat_tree() {
    let tree = |routing: &str| format!("name: ft\nfabric:\n  fat_tree: {{radix: 8, pods: 2}}\nlink: {{bandwidth: 10GB/s, latency: 100ns}}\nnodes: {{gpus: 1}}\nnetwork: {{routing: {routing}}}\n");
    let pairs: Vec<_> = (0..32).map(|i| (i, (i * 7 + 5) % 32)).collect();
    let size = 16.0 * 1048576.0;
    // Injection bandwidth, plus the store-and-forward pipeline of 6 network hops and the node's
    // hops (4096 B packets, 0.41 µs each at 10 GB/s; 0.2 µs at the node's 20 GB/s).
    let ideal = size / 10e9;
    let spray = makespan(&run(&tree("spray"), &pairs, "16MiB").0);
    let adaptive = makespan(&run(&tree("adaptive"), &pairs, "16MiB").0);
    let ecmp = makespan(&run(&tree("ecmp"), &pairs, "16MiB").0);
    eprintln!("ideal {ideal} spray {spray} adaptive {adaptive} ecmp {ecmp}");
    assert!(spray < 1.01 * ideal, "spray {spray} vs {ideal}");
    assert!(adaptive < 1.01 * ideal, "adaptive {adaptive} vs {ideal}");
    assert!(ecmp > 1.5 * ideal, "ecmp {ecmp}");
}
