//! Time the halo-exchange schedule search on cs-storm-socket (COSMO 2D: 20,736 orders; 3D:
//! 1,679,616) and annealing on a 4x4 grid over a 16-GPU single-root tree (8.9e12 orders).
//! Every figure is a whole call to `schedule::search`, model set-up and memo tables included.
//! Run: cargo run --release -p contend-core --example bench_schedule [-- --quick]

use contend_core::schedule::{search, Halo, HaloSpec, Method, ScheduleReport, SearchOptions, Semantics};
use contend_core::topology::Machine;
use contend_core::units::Bytes;
use std::time::Instant;

/// One root complex, two switches, eight boards of two GPUs each.
fn tree16() -> Machine {
    let mut devices = String::from("  - {name: RC, kind: root_complex}\n  - {name: S0, kind: pcie_switch}\n  - {name: S1, kind: pcie_switch}\n");
    let mut links = String::from("  - {a: RC, b: S0, kind: pcie, gen: 3, lanes: 16}\n  - {a: RC, b: S1, kind: pcie, gen: 3, lanes: 16}\n");
    for k in 0..8 {
        devices += &format!("  - {{name: K{k}, kind: pcie_switch}}\n");
        links += &format!("  - {{a: S{}, b: K{k}, kind: pcie, gen: 3, lanes: 16}}\n", k / 4);
        for g in [2 * k, 2 * k + 1] {
            devices += &format!("  - {{name: GPU{g}, kind: gpu}}\n");
            links += &format!("  - {{a: K{k}, b: GPU{g}, kind: pcie, gen: 3, lanes: 16}}\n");
        }
    }
    Machine::from_text(&format!("name: tree16\ndevices:\n{devices}links:\n{links}"), "tree16").unwrap()
}

fn describe(r: &ScheduleReport) -> String {
    let u = |x: f64| x / r.t_msg_s;
    let mut s = format!("best {:.2} T_msg", u(r.best_s));
    if let (Some(med), Some(worst)) = (r.median_s, r.worst_s) {
        s += &format!(", median {:.2}, worst {:.2}", u(med), u(worst));
    }
    s + &format!(
        "; {} orders evaluated, {} nodes, lower bound {:.2}, gap {:.3}, proven {}",
        r.orders_evaluated,
        r.nodes_visited,
        u(r.lower_bound_s),
        r.gap,
        r.proven_optimal
    )
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let storm = Machine::load("cs-storm-socket").unwrap();
    let t16 = tree16();
    let preset = |name: &str| Halo::resolve(&HaloSpec::preset(name).unwrap(), &storm, name).unwrap();
    let (h2, h3) = (preset("cosmo-2d"), preset("cosmo-3d"));
    let h4x4 = Halo::resolve(&HaloSpec::uniform(&[4, 4], Bytes(254_000)), &t16, "4x4").unwrap();
    let (seq, rounds) = (Semantics::Sequential, Semantics::Rounds);
    let (ex, bnb, sa) = (Method::Exhaustive, Method::BranchAndBound, Method::Anneal);
    let cases: [(&str, &Machine, &Halo, Semantics, Method, usize, usize); 14] = [
        ("2D exhaustive sequential", &storm, &h2, seq, ex, 1, 21),
        ("2D exhaustive rounds", &storm, &h2, rounds, ex, 1, 21),
        ("2D bnb sequential", &storm, &h2, seq, bnb, 1, 21),
        ("2D bnb rounds", &storm, &h2, rounds, bnb, 1, 21),
        ("3D exhaustive sequential", &storm, &h3, seq, ex, 2, 5),
        ("3D exhaustive sequential", &storm, &h3, seq, ex, 1, 3),
        ("3D exhaustive rounds", &storm, &h3, rounds, ex, 2, 5),
        ("3D bnb sequential", &storm, &h3, seq, bnb, 2, 11),
        ("3D bnb sequential", &storm, &h3, seq, bnb, 1, 11),
        ("3D bnb rounds", &storm, &h3, rounds, bnb, 2, 11),
        ("3D anneal sequential, 4 x 20,000 moves", &storm, &h3, seq, sa, 2, 5),
        ("3D anneal sequential, 4 x 20,000 moves", &storm, &h3, seq, sa, 1, 5),
        ("4x4 anneal sequential, 4 x 20,000 moves", &t16, &h4x4, seq, sa, 2, 3),
        ("4x4 anneal rounds, 4 x 20,000 moves", &t16, &h4x4, rounds, sa, 2, 3),
    ];
    println!("schedule search, median (min, max) of N whole searches; T_msg = largest message alone");
    for (label, m, h, semantics, method, threads, reps) in cases {
        let reps = if quick { 1 } else { reps };
        let opts = SearchOptions { semantics, method, threads, ..Default::default() };
        let mut times = Vec::with_capacity(reps);
        let mut last = None;
        for _ in 0..reps {
            let start = Instant::now();
            last = Some(search(m, h, &opts).unwrap());
            times.push(start.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let r = last.unwrap();
        let med = times[reps / 2];
        let rate = r.orders_evaluated as f64 / med / 1e6;
        let plural = if threads == 1 { " " } else { "s" };
        println!(
            "{label:<40} {threads} thread{plural} {med:>8.4} s ({:.4}, {:.4}) N={reps:<2} {rate:>5.2} M orders/s  {}",
            times[0],
            times[reps - 1],
            describe(&r)
        );
    }
}
