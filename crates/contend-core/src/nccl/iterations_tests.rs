//! nccl-tests' back-to-back iterations (`run_loop`, `lower::pair`): a rooted chain's fill paid
//! once per timed loop, checked against the machine's figures by hand.

use super::*;
use crate::nccl::tests_tool::Request;

const H800: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/validation/machines/h800x8.yaml");

/// The communicator of `machine` on `nodes` nodes, under NCCL `version`.
fn comm(machine: &str, nodes: usize, version: &str) -> Comm {
    let req = Request { params: vec![("nccl_version".into(), version.into())], ..Request::sweep("broadcast", "8", "8") };
    let (m, per_node, _) = nodes::on_nodes(machine, &req, nodes, None).unwrap();
    let mut c = Comm::new(&m, &per_node, None).unwrap();
    c.set_constants(constants::split(&req.params).unwrap().0).unwrap();
    c
}

/// (T1, T2): one call of NCCL's pick alone, and two back to back.
fn t1_t2(c: &Comm, coll: Coll, bytes: u64, model: &str) -> (f64, f64, Pick) {
    let pick = c.pick(coll, bytes, coll.algos(), &PROTOS).unwrap().unwrap();
    let call = c.call_with(coll, pick.algo, pick.proto, bytes, 0, pick.channels).merged();
    let one = run(&c.m, &call, model, &[], false).unwrap().seconds;
    let two = run_pair(&c.m, &call, model, &[], lower::MAX_TRANSFERS).unwrap().unwrap();
    (one, two, pick)
}

/// The measurement behind `run_loop`'s choice (round 23): P / T1 of every collective NCCL runs in
/// rings or trees, on one and two nodes. `cargo test -p contend-core --lib iterations_tests -- --ignored --nocapture`.
#[test]
#[ignore]
fn period_over_first_call_by_collective() {
    for (machine, nodes) in [("dgx-a100", 1), ("hgx-h100", 1), ("hgx-h100", 2)] {
        let c = comm(machine, nodes, "2.30");
        for coll in [Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter, Coll::Broadcast, Coll::Reduce] {
            for bytes in [1u64 << 20, 64 << 20, 1 << 30] {
                let (one, two, p) = t1_t2(&c, coll, bytes, "maxmin");
                let per = (one + 19.0 * (two - one)) / 20.0;
                println!(
                    "{machine} x{nodes} {} {} {}/{} T1 {:.1} us P {:.1} us P/T1 {:.4} loop/T1 {:.4}",
                    coll.name(),
                    bytes,
                    p.algo.name(),
                    p.proto.name(),
                    one * 1e6,
                    (two - one) * 1e6,
                    (two - one) / one,
                    per / one
                );
            }
        }
    }
}

#[test]
fn h800_broadcast_explore() {
    let c = comm(H800, 1, "2.18");
    for bytes in [4u64 << 20, 64 << 20, 1 << 30] {
        for model in ["maxmin", "packet"] {
            let (one, two, p) = t1_t2(&c, Coll::Broadcast, bytes, model);
            println!("{model} {bytes} {}/{} ch {:?} T1 {:.2} P {:.2}", p.algo.name(), p.proto.name(), c.channels, one * 1e6, (two - one) * 1e6);
        }
    }
}
