use super::*;
use crate::api;

fn req(op: &str) -> tests_tool::Request {
    tests_tool::Request {
        op: op.into(),
        min_bytes: "8".into(),
        max_bytes: "8G".into(),
        factor: 2,
        ngpus: None,
        gpus: None,
        dtype: "float".into(),
        root: 0,
        algo: None,
        proto: None,
        channels: None,
        model: "maxmin".into(),
        params: vec![],
        explain: false,
    }
}

#[test]
fn show_dgx() {
    let t = std::time::Instant::now();
    let r = api::nccl_tests("dgx-a100", &req("all_reduce"), 1, None).unwrap();
    println!("{}", r.table);
    for row in &r.rows {
        println!("{} {:?} {:?} ch{} n{} model {:.1}", row.size, row.algo, row.proto, row.channels, row.transfers, row.nccl_model_us);
    }
    println!("{:?} {:?}", r.search, t.elapsed());
}
