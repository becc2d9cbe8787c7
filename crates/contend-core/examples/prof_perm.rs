use contend_core::api::{self, GenerateRequest};
use contend_core::report::Detail;
use contend_core::topology::Machine;
use std::time::Instant;
fn main() {
    let fabric = std::env::args().nth(1).unwrap_or("fat-tree-2048x1".into());
    let model = std::env::args().nth(2).unwrap_or("maxmin".into());
    let reps: usize = std::env::args().nth(3).and_then(|a| a.parse().ok()).unwrap_or(1);
    let m = Machine::load(&fabric).unwrap();
    let n: usize = std::env::args().nth(4).and_then(|a| a.parse().ok()).unwrap_or(0);
    let req = if n == 0 {
        GenerateRequest { pattern: "permutation".into(), size: "1MiB".into(), count: 1, seed: 1, ..Default::default() }
    } else {
        GenerateRequest { pattern: "random".into(), size: "64KiB".into(), count: n, seed: 1, gap: Some("5ns".into()), ..Default::default() }
    };
    let w = api::generate(&m, &req).unwrap();
    for _ in 0..reps {
        let t = Instant::now();
        let r = api::simulate(&m, &w, "bench", &model, &[], Detail::default()).unwrap();
        let d = &r.transfers.duration_s;
        let best = d.iter().copied().fold(f64::INFINITY, f64::min);
        let full = d.iter().filter(|&&x| x < best * 1.05).count() as f64 / d.len() as f64;
        println!("{} {:.4}s makespan {:.4}ms at full {:.1}%", model, t.elapsed().as_secs_f64(), r.summary.makespan_s * 1e3, full * 100.0);
    }
}
