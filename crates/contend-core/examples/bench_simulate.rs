//! `contend simulate MACHINE FILE` without the CLI around it, for counting the engine's
//! instructions (callgrind) on a transfers file:
//!   bench_simulate MACHINE TRANSFERS.yaml [MODEL=maxmin]   seconds, makespan and a checksum of
//!   every finish time (so that two builds can be compared for identical answers).

use contend_core::api;
use contend_core::report::Detail;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [machine, file, rest @ ..] = &args[..] else {
        panic!("usage: bench_simulate MACHINE TRANSFERS.yaml [MODEL]");
    };
    let model = rest.first().map_or("maxmin", |m| m.as_str());
    let m = api::load_machine(machine).unwrap();
    let w = api::load_transfers(file).unwrap();
    let t = Instant::now();
    let r = api::simulate(&m, &w, file, Some(model), &[], Detail::default()).unwrap();
    let sum: f64 = r.transfers.duration_s.iter().sum();
    println!("{:.3} s  {} transfers: makespan {:.15e} s, summed durations {:.15e} s", t.elapsed().as_secs_f64(), w.transfers.len(), r.summary.makespan_s, sum);
}
