//! `contend run` without the CLI around it, for profiling the engine on application workloads:
//!   bench_run SCENARIO.yaml [REPEATS=1]   seconds per run (lowering, flow table, simulation)
//! bench/run_mix.sh times the whole command a user waits for; this times the core alone.

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().expect("usage: bench_run SCENARIO.yaml [REPEATS]");
    let repeats: usize = args.get(1).map_or(1, |r| r.parse().expect("REPEATS is a count"));
    let text = std::fs::read_to_string(path).unwrap();
    for _ in 0..repeats {
        let t = Instant::now();
        let r = contend_core::api::run(&text, path, false, Some(10), None).unwrap();
        println!("{:.3} s  makespan {:.9e} s, {} messages", t.elapsed().as_secs_f64(), r.summary.makespan_s, r.summary.messages);
    }
}
