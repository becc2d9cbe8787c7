//! Flow level (maxmin) against packet level (packet) on the seed-003 2,048-GPU fabrics.
//! One case per process, so that the caller can read its peak memory (bench/cluster.sh):
//!   bench_cluster time FABRIC TRAFFIC COUNT MODEL   one model: seconds (flow table included)
//!   bench_cluster compare FABRIC TRAFFIC COUNT [P]  both: per-message durations compared; each
//!                                                   further argument (k=v,k=v) is one more maxmin
//!                                                   run with those --params, against the same packet run
//!   bench_cluster compare FABRIC TRAFFIC COUNT seeds:K [P]  as compare, and also against `packet`'s
//!                                                   own routing noise: each maxmin run against the
//!                                                   per-message mean of K more packet runs (network.seed
//!                                                   + 1 ..= + K), and the first packet run against that
//!                                                   mean (the floor of any deterministic flow model)
//! TRAFFIC is `permutation-SIZE` (every GPU sends SIZE to another, all at t = 0; COUNT ignored)
//! or `uniform-SIZE` (COUNT messages between random GPUs issued 5 ns apart: with 64 KiB, about
//! 50% of the injection bandwidth), either with `@SEED` after it for another traffic seed (1
//! without: bench/agreement_grid.sh's held-out cases). Each maxmin line ends with its run's
//! seconds (flow table included). Routing and NIC scheduling are the presets' (fat-tree
//! adaptive, dragonfly PAR, FCFS NICs).

use contend_core::api::{self, GenerateRequest};
use contend_core::report::{Detail, Report};
use contend_core::topology::Machine;
use std::time::Instant;

fn workload(m: &Machine, traffic: &str, count: usize) -> contend_core::workload::WorkloadSpec {
    let (traffic, seed) = match traffic.split_once('@') {
        Some((t, s)) => (t, s.parse().expect("TRAFFIC@SEED, SEED an integer")),
        None => (traffic, 1),
    };
    let (pattern, size) = traffic.split_once('-').expect("TRAFFIC is permutation-SIZE or uniform-SIZE");
    let req = match pattern {
        "permutation" => GenerateRequest { pattern: "permutation".into(), size: size.into(), count: 1, seed, ..Default::default() },
        "uniform" => GenerateRequest { pattern: "random".into(), size: size.into(), count, seed, gap: Some("5ns".into()), ..Default::default() },
        other => panic!("unknown traffic {other}"),
    };
    api::generate(m, &req).unwrap()
}

fn run(m: &Machine, w: &contend_core::workload::WorkloadSpec, model: &str, params: &[(String, String)]) -> (Report, f64) {
    let t = Instant::now();
    let r = api::simulate(m, w, "bench", Some(model), params, Detail::default()).unwrap();
    (r, t.elapsed().as_secs_f64())
}

/// Per-message |x − r| / r (median, p90, max, in %), signed median (%) and makespan difference (%).
fn distance(x: &[f64], r: &[f64], x_makespan: f64, r_makespan: f64) -> String {
    let mut rel: Vec<f64> = x.iter().zip(r).map(|(f, p)| (f - p).abs() / p).collect();
    let mut signed: Vec<f64> = x.iter().zip(r).map(|(f, p)| (f - p) / p).collect();
    signed.sort_by(f64::total_cmp);
    let bias = signed[(signed.len() - 1) / 2] * 100.0;
    rel.sort_by(f64::total_cmp);
    let q = |x: f64| rel[((rel.len() - 1) as f64 * x) as usize] * 100.0;
    let makespan = (x_makespan - r_makespan) / r_makespan * 100.0;
    format!("median {:.1}% p90 {:.1}% max {:.1}% makespan {makespan:+.1}% (signed median {bias:+.1}%)", q(0.5), q(0.9), q(1.0))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, fabric, traffic, count, rest @ ..] = &args[..] else {
        panic!("usage: bench_cluster time|compare FABRIC TRAFFIC COUNT [MODEL | seeds:K] [P...]");
    };
    let m = Machine::load(fabric).unwrap();
    let w = workload(&m, traffic, count.parse().unwrap());
    let n = w.transfers.len();
    match mode.as_str() {
        "time" => {
            let model = rest.first().expect("time needs a MODEL");
            let (r, s) = run(&m, &w, model, &[]);
            println!("{fabric} {traffic} {model} {n} {s:.4} {:.6e}", r.summary.makespan_s);
        }
        "compare" => {
            let (seeds, rest) = match rest.first().and_then(|a| a.strip_prefix("seeds:")) {
                Some(k) => (k.parse::<u64>().expect("seeds:K, K a count"), &rest[1..]),
                None => (0, rest),
            };
            let (packet, _) = run(&m, &w, "packet", &[]);
            // K more packet runs with only the routing's random choices changed: a deterministic
            // flow model can at best predict each message's mean over them.
            let others: Vec<Report> = (1..=seeds)
                .map(|k| {
                    let mut mk = m.clone();
                    mk.network.seed = m.network.seed + k;
                    run(&mk, &w, "packet", &[]).0
                })
                .collect();
            let mean: Vec<f64> = (0..n).map(|i| others.iter().map(|o| o.transfers.duration_s[i]).sum::<f64>() / seeds.max(1) as f64).collect();
            let mean_makespan = others.iter().map(|o| o.summary.makespan_s).sum::<f64>() / seeds.max(1) as f64;
            if seeds > 0 {
                let floor = distance(&packet.transfers.duration_s, &mean, packet.summary.makespan_s, mean_makespan);
                println!("{fabric} {traffic} {n} [packet seed {} vs mean of {seeds} seeds] {floor}", m.network.seed);
            }
            let sets = std::iter::once(String::new()).chain(rest.iter().cloned());
            for set in sets {
                let params: Vec<(String, String)> =
                    set.split(',').filter(|p| !p.is_empty()).map(|p| p.split_once('=').expect("k=v")).map(|(k, v)| (k.into(), v.into())).collect();
                let (flow, secs) = run(&m, &w, "maxmin", &params);
                // How far the flow-level durations are from the packet-level ones, message by message.
                let label = if set.is_empty() { String::new() } else { format!(" [{set}]") };
                let one = distance(&flow.transfers.duration_s, &packet.transfers.duration_s, flow.summary.makespan_s, packet.summary.makespan_s);
                println!("{fabric} {traffic} {n}{label} {one} {secs:.3} s");
                if seeds > 0 {
                    let vs_mean = distance(&flow.transfers.duration_s, &mean, flow.summary.makespan_s, mean_makespan);
                    println!("{fabric} {traffic} {n}{label} [vs mean of {seeds} seeds] {vs_mean}");
                }
            }
        }
        other => panic!("unknown mode {other}"),
    }
}
