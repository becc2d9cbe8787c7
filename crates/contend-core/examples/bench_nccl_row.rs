//! One `contend nccl-tests` sweep without Python, for profilers that read the engine alone
//! (docs/benchmarks.md, issue 25's twenty-first round): the rows' times (us) and transfers, and
//! the seconds the sweep took.
//! Usage: cargo run --release -p contend-core --example bench_nccl_row [MACHINE NODES MIN MAX]
//! (default: dgx-a100 32 2G 2G, one row of the 32-node sweep); RAYON_NUM_THREADS=1 for one core.

use contend_core::api;
use contend_core::nccl::tests_tool::Request;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: &str| args.get(i).cloned().unwrap_or_else(|| d.to_string());
    let (machine, nodes) = (arg(0, "dgx-a100"), arg(1, "32").parse::<usize>().expect("NODES is a whole number"));
    let req = Request::sweep("all_reduce", &arg(2, "2G"), &arg(3, &arg(2, "2G")));
    let t = Instant::now();
    let r = api::nccl_tests(&machine, &req, nodes, None).unwrap();
    let secs = t.elapsed().as_secs_f64();
    for row in &r.rows {
        println!("{:>12} {:>10} {:?}/{:?} {}", row.size, row.transfers, row.algo, row.proto, row.time_us);
    }
    println!("{secs:.3} s");
}
