//! Time one sc16 evaluation (congestion factors of one phase) and one whole simulation,
//! on the worked example and on a seeded random 32-transfer graph on cs-storm-socket.
//! Run: cargo run --release -p contend-core --example bench_sc16

use contend_core::model::sc16::{Sc16Params, Sc16Prepared};
use contend_core::model::RateModel;
use contend_core::sim;
use contend_core::topology::Machine;
use contend_core::units::Bytes;
use contend_core::workload::{random_graph, Workload, WorkloadSpec};
use std::hint::black_box;
use std::time::Instant;

/// Median over `reps` repetitions of the time per call, each repetition `n` calls.
fn per_call(reps: usize, n: usize, mut f: impl FnMut()) -> (f64, f64, f64) {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            for _ in 0..n {
                f();
            }
            s.elapsed().as_secs_f64() / n as f64
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[0], t[reps / 2], t[reps - 1])
}

fn report(label: &str, (min, med, max): (f64, f64, f64)) {
    println!("{label:<48} median {:>9.3} µs   (min {:.3}, max {:.3}; {:.2} M/s)", med * 1e6, min * 1e6, max * 1e6, 1e-6 / med);
}

fn main() {
    let m = Machine::load("cs-storm-socket").unwrap();
    let example = "transfers:\n  - {src: GPU0, dst: GPU2, size: 300MiB}\n  - {src: GPU1, dst: GPU4, size: 300MiB}\n  - {src: GPU3, dst: GPU2, size: 300MiB}\n  - {src: GPU6, dst: GPU4, size: 300MiB}\n";
    let cases = [
        ("worked example (4 transfers)", WorkloadSpec::from_text(example, "example").unwrap()),
        ("random graph (32 transfers, seed 1)", WorkloadSpec { transfers: random_graph(&m.gpu_names(), 32, Bytes(300 << 20), 1), ..Default::default() }),
    ];
    println!("sc16 on cs-storm-socket, 11 repetitions each");
    for (label, spec) in cases {
        let w = Workload::resolve(&spec, &m, label).unwrap();
        let prepared = Sc16Prepared::new(&m, &w, Sc16Params::default()).unwrap();
        let mut model = prepared.model();
        let active: Vec<usize> = (0..w.transfers.len()).collect();
        let mut out = vec![0.0; active.len()];
        let n = if active.len() > 8 { 50_000 } else { 500_000 };
        report(
            &format!("one evaluation, {label}"),
            per_call(11, n, || {
                model.rates(black_box(&active), &mut out);
                black_box(&out);
            }),
        );
        report(
            &format!("whole simulation, {label}"),
            per_call(11, n / 20, || {
                black_box(sim::run_prepared(&w, &prepared, false).unwrap());
            }),
        );
    }
}
