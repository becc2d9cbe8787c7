//! One message's cost for datatypes of up to a million blocks (issue 11's target: <= 1 ms per
//! message once the type is flattened): flattening timed once per type, then the comparison of
//! every method (`contend datatype`: each method prepared and run by the executor under maxmin)
//! and one adaptive message simulated, each timed as the median of repeated runs.
//! Usage: cargo run --release -p contend-core --example bench_datatype [runs, default 101]

use contend_core::api;
use contend_core::datatype::Datatype;
use contend_core::datatype_report::{compare, DatatypeRequest};
use contend_core::report::Detail;
use contend_core::topology::Machine;
use contend_core::workload::WorkloadSpec;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(101);
    let m = Machine::load("dgx1-p100").unwrap();
    println!("{:<34} {:>10} {:>12} {:>14} {:>14}", "datatype", "blocks", "flatten ms", "compare µs", "simulate µs");
    for blocks in [1_000u64, 100_000, 1_000_000] {
        // A column of doubles (blocklength 1, stride 2): `blocks` blocks of 8 B that never merge.
        let text = format!("type: {{vector: {{count: {blocks}, blocklength: 1, stride: 2, of: double}}}}");
        let t = Instant::now();
        let dt = Datatype::from_text(&text, "bench").unwrap();
        let flatten = t.elapsed().as_secs_f64();
        assert_eq!(dt.stats.blocks, blocks);
        let req = DatatypeRequest { src: "GPU0".into(), dst: "GPU1".into(), count: 1, model: "maxmin".into(), params: vec![], kernels: vec![] };
        let cmp: Vec<f64> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(compare(&m, &dt, &req).unwrap());
                t.elapsed().as_secs_f64()
            })
            .collect();
        // An adaptive message in a transfers file: the type is flattened once per resolve, so
        // this column includes one flattening (the price of naming the type inline).
        let spec = WorkloadSpec::from_text(
            &format!("datatypes:\n  col: {{vector: {{count: {blocks}, blocklength: 1, stride: 2, of: double}}}}\ntransfers:\n  - {{src: GPU0, dst: GPU1, size: {}B, datatype: col}}\n", 8 * blocks),
            "bench",
        )
        .unwrap();
        let sim: Vec<f64> = (0..runs.min(21))
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(api::simulate(&m, &spec, "bench", Some("maxmin"), &[], Detail::default()).unwrap());
                t.elapsed().as_secs_f64()
            })
            .collect();
        println!("{:<34} {:>10} {:>12.3} {:>14.1} {:>14.1}", "vector of doubles, stride 2", blocks, flatten * 1e3, median(cmp) * 1e6, median(sim) * 1e6);
    }
}
