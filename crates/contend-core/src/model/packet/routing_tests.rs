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
    let tree = |routing: &str| {
        format!("name: ft\nfabric:\n  fat_tree: {{radix: 8, pods: 2}}\nlink: {{bandwidth: 10GB/s, latency: 100ns}}\nnodes: {{gpus: 1}}\nnetwork: {{routing: {routing}}}\n")
    };
    // A scattered permutation, and a seeded random one (Fisher-Yates).
    let mut random: Vec<usize> = (0..32).collect();
    let mut x = 0x2545F4914F6CDD1Du64;
    for i in (1..32).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        random.swap(i, (x % (i as u64 + 1)) as usize);
    }
    for pairs in
        [(0..32).map(|i| (i, (i * 7 + 5) % 32)).collect::<Vec<_>>(), random.iter().enumerate().filter(|(i, d)| i != *d).map(|(i, &d)| (i, d)).collect()]
    {
        permutation_at_injection_bandwidth(&tree, &pairs);
    }
}

fn permutation_at_injection_bandwidth(tree: &dyn Fn(&str) -> String, pairs: &[(usize, usize)]) {
    let size = 16.0 * 1048576.0;
    // Injection bandwidth, plus the store-and-forward pipeline of 6 network hops and the node's
    // hops (4096 B packets, 0.41 µs each at 10 GB/s; 0.2 µs at the node's 20 GB/s).
    let ideal = size / 10e9;
    let spray = makespan(&run(&tree("spray"), pairs, "16MiB").0);
    let adaptive = makespan(&run(&tree("adaptive"), pairs, "16MiB").0);
    let ecmp = makespan(&run(&tree("ecmp"), pairs, "16MiB").0);
    eprintln!("ideal {ideal} spray {spray} adaptive {adaptive} ecmp {ecmp}");
    assert!(spray < 1.01 * ideal, "spray {spray} vs {ideal}");
    assert!(adaptive < 1.01 * ideal, "adaptive {adaptive} vs {ideal}");
    assert!(ecmp > 1.3 * ideal, "ecmp {ecmp}");
}

/// A dragonfly of 9 groups of 4 routers, 2 nodes and 2 global links per router: one global
/// link joins every pair of groups, and with h = 2 a path through a third group is as short
/// in hops as local-global-local, so only the routing's definition keeps minimal minimal.
const DF: &str =
    "name: df\nfabric:\n  dragonfly: {p: 2, a: 4, h: 2, groups: 9}\nlink: {bandwidth: 10GB/s, latency: 100ns}\nnodes: {gpus: 1}\nnetwork: {routing: ROUTING}\n";

/// Per routing: makespan, mean finish, and packets over global links per packet sent.
fn dragonfly(routing: &str, pairs: &[(usize, usize)]) -> (f64, f64, f64) {
    let m = Machine::from_text(&DF.replace("ROUTING", routing), "c.yaml").unwrap();
    let mut t = String::from("transfers:\n");
    for (s, d) in pairs {
        t.push_str(&format!("  - {{src: n{s}.GPU0, dst: n{d}.GPU0, size: 1MiB}}\n"));
    }
    let w = Workload::resolve(&WorkloadSpec::from_text(&t, "t.yaml").unwrap(), &m, "t.yaml").unwrap();
    let p = PacketPrepared::new(&m, &w, PacketParams::defaults(&m)).unwrap();
    let mut engine = p.engine();
    let o = sim::run(&w, &p.flows, &mut engine, false, false).unwrap();
    let dir = super::link_resources(&m);
    let mut global = 0u64;
    for (i, l) in m.links.iter().enumerate() {
        let (a, b) = (&m.devices[l.a], &m.devices[l.b]);
        if a.group.is_some() && b.group.is_some() && a.group != b.group {
            global += engine.port_packets()[dir[2 * i] as usize] + engine.port_packets()[dir[2 * i + 1] as usize];
        }
    }
    let packets = pairs.iter().filter(|(s, d)| s / 8 != d / 8).count() as f64 * 256.0;
    let mean = o.finish.iter().sum::<f64>() / o.finish.len() as f64;
    (makespan(&o), mean, global as f64 / packets)
}

/// Group shift (every node of group g to its twin in g + 1): minimal and its per-packet
/// variants cross one global link per packet and queue on the one link joining neighbours
/// (8 MiB over it: 0.84 ms); Valiant crosses exactly two per packet and spreads them over
/// every group's links; UGAL and PAR detour some packets, from the queues they see.
#[test]
fn dragonfly_per_packet_routing_under_group_shift() {
    let shift: Vec<_> = (0..72).map(|i| (i, (i + 8) % 72)).collect();
    let neighbours = 8.0 * 1048576.0 / 10e9;
    let (minimal, _, g_min) = dragonfly("minimal", &shift);
    let (spray, _, g_spray) = dragonfly("spray", &shift);
    let (valiant, _, g_val) = dragonfly("valiant", &shift);
    let (ugal, _, g_ugal) = dragonfly("ugal", &shift);
    let (par, _, g_par) = dragonfly("par", &shift);
    eprintln!("minimal {minimal} {g_min} spray {spray} {g_spray} valiant {valiant} {g_val} ugal {ugal} {g_ugal} par {par} {g_par}");
    assert!(g_min == 1.0 && g_spray == 1.0 && g_val == 2.0, "global hops per packet: minimal {g_min} spray {g_spray} valiant {g_val}");
    assert!(g_ugal > 1.0 && g_ugal < 2.0 && g_par > 1.0 && g_par < 2.0, "ugal {g_ugal} par {g_par}");
    assert!(minimal >= neighbours && spray >= neighbours, "minimal {minimal} spray {spray} below {neighbours}");
    assert!(valiant < 0.5 * minimal && ugal < 0.6 * minimal && par < 0.6 * minimal, "valiant {valiant} ugal {ugal} par {par} minimal {minimal}");
}

/// Uniform random traffic: minimal crosses half the global links Valiant does, and wins.
#[test]
fn dragonfly_per_packet_minimal_beats_valiant_on_uniform_traffic() {
    let mut x = 0x9E3779B97F4A7C15u64;
    let uniform: Vec<_> = (0..72)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (i, (i + 1 + (x % 71) as usize) % 72)
        })
        .collect();
    let (minimal, mean_min, g_min) = dragonfly("minimal", &uniform);
    let (valiant, mean_val, g_val) = dragonfly("valiant", &uniform);
    let (par, mean_par, _) = dragonfly("par", &uniform);
    eprintln!("minimal {minimal} {mean_min} valiant {valiant} {mean_val} par {par} {mean_par}");
    assert!(g_min == 1.0 && g_val == 2.0);
    assert!(mean_min < mean_val && minimal < valiant, "minimal {minimal} / {mean_min}, valiant {valiant} / {mean_val}");
    assert!(mean_par < mean_val, "par {mean_par} valiant {mean_val}");
}
