//! maxmin at scale: transfers between random GPU pairs of a 64-GPU PCIe tree
//! (root complex -> 4 switches -> 4 switches each -> 4 GPUs each, all Gen3 x16), sizes uniform
//! in 1..64 MiB, seed 1. "burst": all start at 0. "staggered": starts 2 ms apart on average
//! (seeded exponential gaps). Baseline in the same run: the generic phase engine (sim::run) with
//! maxmin's full refill at every event, on the smaller sizes. Both times run from the resolved
//! workload to the outcome, routing included.
//! Run: cargo run --release -p contend-core --example bench_maxmin [max transfers]

use contend_core::model::maxmin::{MaxminParams, MaxminPrepared};
use contend_core::model::{Prepared, RateAdaptor};
use contend_core::sim;
use contend_core::topology::Machine;
use contend_core::workload::{SplitMix64, Transfer, Workload};
use std::time::Instant;

fn tree() -> Machine {
    let mut devices = String::from("  - {name: RC, kind: root_complex}\n");
    let mut links = String::new();
    for a in 0..4 {
        devices.push_str(&format!("  - {{name: S{a}, kind: pcie_switch}}\n"));
        links.push_str(&format!("  - {{a: RC, b: S{a}, kind: pcie, gen: 3, lanes: 16}}\n"));
        for b in 0..4 {
            devices.push_str(&format!("  - {{name: S{a}{b}, kind: pcie_switch}}\n"));
            links.push_str(&format!("  - {{a: S{a}, b: S{a}{b}, kind: pcie, gen: 3, lanes: 16}}\n"));
            for c in 0..4 {
                let g = 16 * a + 4 * b + c;
                devices.push_str(&format!("  - {{name: GPU{g}, kind: gpu}}\n"));
                links.push_str(&format!("  - {{a: S{a}{b}, b: GPU{g}, kind: pcie, gen: 3, lanes: 16}}\n"));
            }
        }
    }
    Machine::from_text(&format!("name: tree64\ndevices:\n{devices}links:\n{links}"), "bench").unwrap()
}

fn workload(m: &Machine, n: usize, gap: f64) -> Workload {
    let gpus = m.gpus();
    let mut rng = SplitMix64(1);
    let mut t = 0.0;
    let transfers = (0..n)
        .map(|i| {
            let src = gpus[(rng.next_u64() % 64) as usize];
            let mut dst = src;
            while dst == src {
                dst = gpus[(rng.next_u64() % 64) as usize];
            }
            let size = 1 + (rng.unit() * 64.0 * 1048576.0) as u64;
            if gap > 0.0 {
                t += -gap * (1.0 - rng.unit()).ln();
            }
            Transfer { name: format!("t{i}"), src, dst, size, start: t, ..Default::default() }
        })
        .collect();
    Workload { transfers, origin: "bench".into(), ..Default::default() }
}

/// Median of `reps` wall times of `f`, seconds.
fn time(reps: usize, mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[reps / 2]
}

fn main() {
    let max: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let m = tree();
    let p = MaxminParams::default();
    println!("maxmin on a 64-GPU PCIe tree, one core; median of 5 runs below 30,000 transfers, else one run");
    println!("{:<10} {:>8} {:>12} {:>14} {:>10}", "workload", "n", "seconds", "transfers/s", "makespan");
    for (label, gap) in [("burst", 0.0), ("staggered", 2e-3)] {
        for n in [1_000, 3_000, 10_000, 30_000, 100_000].into_iter().filter(|&n| n <= max) {
            let w = workload(&m, n, gap);
            let mut makespan = 0.0;
            let s =
                time(if n < 30_000 { 5 } else { 1 }, || makespan = sim::run_prepared(&w, &MaxminPrepared::new(&m, &w, p).unwrap(), false).unwrap().makespan());
            println!("{label:<10} {n:>8} {s:>12.4} {:>14.0} {makespan:>9.3}s", n as f64 / s);
            if n <= 3_000 {
                let b = time(3, || {
                    let prepared = MaxminPrepared::new(&m, &w, p).unwrap();
                    let mut full = RateAdaptor::new(prepared.rate_model().unwrap(), &prepared.flows);
                    makespan = sim::run(&w, &prepared.flows, &mut full, false, true).unwrap().makespan()
                });
                println!("{:<10} {n:>8} {b:>12.4} {:>14.0} {makespan:>9.3}s   baseline: sim::run, full refill per event", label, n as f64 / b);
            }
        }
    }
}
