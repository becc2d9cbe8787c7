//! The packet model's speed: packet-hops and events per second on one core, for uniform random
//! traffic on a 2-level fat-tree of 64 nodes (8 leaf switches of 8 nodes, 8 spines, every leaf
//! on every spine; 12.5 GB/s, 100 ns links; GPU and NIC of a node on 32 GB/s PCIe; ECMP per
//! message). Messages go between random pairs of nodes (seed 1), sizes uniform in 64 KiB..1 MiB.
//! "burst": all issued at 0 (the fabric saturates, credits throttle); "staggered": issued
//! 5 us apart on average (seeded exponential gaps). Times run from the prepared flow table to
//! the outcome (routing and packet compilation excluded).
//! A second argument routes otherwise: `spray` or `adaptive` choose every packet's spine at its
//! leaf (per-packet routing, model/packet/routing.rs).
//! "seconds" is wall time; "cpu s" the time this thread was on a core (Linux /proc/self/schedstat),
//! which the other jobs of a shared machine inflate far less: packet-hops/s is per CPU second
//! where that is readable, else per wall second.
//! Run: cargo run --release -p contend-core --example bench_packet [messages] [ecmp|spray|adaptive]

use contend_core::model::packet::{PacketParams, PacketPrepared};
use contend_core::sim;
use contend_core::topology::Machine;
use contend_core::workload::{SplitMix64, Transfer, Workload};
use std::time::Instant;

const LEAVES: usize = 8;
const PER_LEAF: usize = 8;
const SPINES: usize = 8;

fn fat_tree(routing: &str) -> Machine {
    let (mut devices, mut links) = (String::new(), String::new());
    let net = "kind: network, bandwidth: 12.5GB/s, latency: 100ns";
    for s in 0..SPINES {
        devices.push_str(&format!("  - {{name: spine{s}, kind: switch}}\n"));
    }
    for l in 0..LEAVES {
        devices.push_str(&format!("  - {{name: leaf{l}, kind: switch}}\n"));
        for s in 0..SPINES {
            links.push_str(&format!("  - {{a: leaf{l}, b: spine{s}, {net}}}\n"));
        }
        for k in 0..PER_LEAF {
            let n = l * PER_LEAF + k;
            devices.push_str(&format!("  - {{name: n{n}.GPU0, kind: gpu}}\n  - {{name: n{n}.NIC0, kind: nic}}\n"));
            links.push_str(&format!("  - {{a: n{n}.NIC0, b: n{n}.GPU0, kind: pcie, bandwidth: 32GB/s}}\n"));
            links.push_str(&format!("  - {{a: n{n}.NIC0, b: leaf{l}, {net}}}\n"));
        }
    }
    let text = format!("name: fat-tree-64\nnetwork: {{routing: {routing}, seed: 1}}\ndevices:\n{devices}links:\n{links}");
    Machine::from_text(&text, "bench").unwrap()
}

fn workload(m: &Machine, n: usize, gap: f64) -> Workload {
    let gpus = m.gpus();
    let mut rng = SplitMix64(1);
    let mut t = 0.0;
    let transfers = (0..n)
        .map(|i| {
            let src = gpus[(rng.next_u64() % gpus.len() as u64) as usize];
            let mut dst = src;
            while dst == src {
                dst = gpus[(rng.next_u64() % gpus.len() as u64) as usize];
            }
            let size = 65536 + (rng.unit() * (1048576.0 - 65536.0)) as u64;
            if gap > 0.0 {
                t += -gap * (1.0 - rng.unit()).ln();
            }
            Transfer { name: format!("t{i}"), src, dst, size, start: t, ..Default::default() }
        })
        .collect();
    Workload { transfers, origin: "bench".into(), ..Default::default() }
}

/// Nanoseconds this process has been on a core (the first field of /proc/self/schedstat).
fn on_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(4_000);
    let routing = std::env::args().nth(2).unwrap_or_else(|| "ecmp".into());
    let m = fat_tree(&routing);
    println!("packet model, 64-node 2-level fat-tree, routing {routing}, 4096 B packets, 8-packet buffers, 60 ns router delay; one core, best of 3");
    println!(
        "{:<10} {:>7} {:>13} {:>13} {:>9} {:>9} {:>15} {:>13} {:>11}",
        "workload", "msgs", "packet-hops", "events", "seconds", "cpu s", "packet-hops/s", "events/s", "makespan"
    );
    for (label, gap) in [("burst", 0.0), ("staggered", 5e-6)] {
        let w = workload(&m, n, gap);
        let params = PacketParams { router_delay: 60_000, ..PacketParams::defaults(&m) };
        let prepared = PacketPrepared::new(&m, &w, params).unwrap();
        let (mut best, mut best_cpu) = (f64::INFINITY, f64::INFINITY);
        let (mut hops, mut events, mut makespan) = (0, 0, 0.0);
        for _ in 0..3 {
            let mut engine = prepared.engine();
            let (s, c) = (Instant::now(), on_cpu_ns());
            let o = sim::run(&w, &prepared.flows, &mut engine, false, false).unwrap();
            best = best.min(s.elapsed().as_secs_f64());
            if let (Some(a), Some(b)) = (c, on_cpu_ns()) {
                best_cpu = best_cpu.min((b - a) as f64 * 1e-9);
            }
            (hops, events, makespan) = (engine.packet_hops(), engine.events(), o.makespan());
        }
        let per = if best_cpu.is_finite() { best_cpu } else { best };
        println!(
            "{label:<10} {n:>7} {hops:>13} {events:>13} {best:>9.3} {best_cpu:>9.3} {:>15.0} {:>13.0} {:>9.3}ms",
            hops as f64 / per,
            events as f64 / per,
            makespan * 1e3
        );
    }
}
