//! Flow level (maxmin) against packet level (packet) on clusters at scale: the seed-003 2,048-GPU fabrics under a
//! random permutation and under uniform random traffic of 10^4 .. 10^6 messages; machine build,
//! flow table and simulation timed separately (one core, one run each: these are seconds).
//! Usage: cargo run --release -p contend-core --example bench_cluster [largest count]

use contend_core::api::{self, GenerateRequest};
use contend_core::report::Detail;
use contend_core::topology::Machine;
use std::time::Instant;

fn main() {
    let max: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    println!(
        "{:<18} {:<22} {:<7} {:>9} {:>9} {:>10} {:>12} {:>11}",
        "fabric", "traffic", "model", "messages", "build s", "simulate s", "messages/s", "makespan"
    );
    for fabric in ["fat-tree-2048x1", "dragonfly-2048x1", "fat-tree-256x8", "dragonfly-256x8"] {
        let t0 = Instant::now();
        let m = Machine::load(fabric).unwrap();
        let build = t0.elapsed().as_secs_f64();
        let mut cases =
            vec![("permutation 1MiB", GenerateRequest { pattern: "permutation".into(), size: "1MiB".into(), count: 1, seed: 1, ..Default::default() })];
        for n in [10_000usize, 100_000, 1_000_000].into_iter().filter(|&n| n <= max) {
            // About 50% load: every node injects 64 KiB (5.5 us at 11.9 GB/s) every 11 us.
            let gap = "5ns".to_string();
            cases.push((
                "uniform 64KiB",
                GenerateRequest { pattern: "random".into(), size: "64KiB".into(), count: n, seed: 1, gap: Some(gap), ..Default::default() },
            ));
        }
        for (label, req) in cases {
            let w = api::generate(&m, &req).unwrap();
            let n = w.transfers.len();
            let mut finish = Vec::new();
            for model in ["maxmin", "packet"] {
                let t = Instant::now();
                let r = api::simulate(&m, &w, "bench", model, &[], Detail::default()).unwrap();
                let s = t.elapsed().as_secs_f64();
                println!("{fabric:<18} {label:<22} {model:<7} {n:>9} {build:>9.3} {s:>10.3} {:>12.0} {:>10.3}ms", n as f64 / s, r.summary.makespan_s * 1e3);
                finish.push(r.transfers.duration_s);
            }
            // How far the flow-level durations are from the packet-level ones, message by message.
            let mut rel: Vec<f64> = finish[0].iter().zip(&finish[1]).map(|(f, p)| (f - p).abs() / p).collect();
            rel.sort_by(f64::total_cmp);
            let q = |x: f64| rel[((rel.len() - 1) as f64 * x) as usize] * 100.0;
            println!("{:<41} |maxmin - packet| / packet per message: median {:.1}%, p90 {:.1}%, max {:.1}%", "", q(0.5), q(0.9), q(1.0));
        }
    }
}
