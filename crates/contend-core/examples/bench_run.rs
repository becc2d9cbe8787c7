//! `contend run` without the CLI around it, for profiling the engine on application workloads:
//!   bench_run SCENARIO.yaml... [REPEATS=1]   seconds per run, and in all
//! Several scenarios run one after another in one process, as a study's worker runs its points.
//! bench/run_mix.sh times the whole command a user waits for; this times the core alone.
//! REPORT=DIR writes each scenario's report to DIR/NAME.json, the bytes `contend run --json`
//! prints (without its newline): to check that a change moves no value, without the extension.

use std::time::Instant;

fn main() {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    let repeats: usize = match paths.last().map(|r| r.parse()) {
        Some(Ok(r)) => {
            paths.pop();
            r
        }
        _ => 1,
    };
    assert!(!paths.is_empty(), "usage: bench_run SCENARIO.yaml... [REPEATS]");
    // As a study's worker runs its points: one lowering kept for the next point (REUSE=0: not).
    let reuse = std::env::var("REUSE").map_or(true, |v| v != "0");
    let report = std::env::var("REPORT").ok();
    let session = contend_core::api::Session::default();
    let opts = contend_core::scenario::RunOptions { session: reuse.then_some(&session), ..Default::default() };
    let all = Instant::now();
    for _ in 0..repeats {
        for path in &paths {
            let text = std::fs::read_to_string(path).unwrap();
            let t = Instant::now();
            let r = contend_core::api::run(&text, path, &opts).unwrap();
            println!("{:.3} s  {path}: makespan {:.9e} s, {} messages", t.elapsed().as_secs_f64(), r.summary.makespan_s, r.summary.messages);
            if let Some(dir) = &report {
                let name = std::path::Path::new(path).file_stem().unwrap().to_string_lossy();
                std::fs::write(format!("{dir}/{name}.json"), serde_json::to_string(&r).unwrap()).unwrap();
            }
        }
    }
    println!("{:.3} s in all", all.elapsed().as_secs_f64());
}
