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
    let pick = c.pick(coll, bytes, coll.algos(), None).unwrap().unwrap();
    let call = c.call_with(coll, pick.algo, pick.proto, bytes, 0, pick.channels).merged();
    let one = run(&c.m, &call, model, &[], false).unwrap().seconds;
    let two = run_pair(&c.m, &call, model, &[], lower::MAX_TRANSFERS).unwrap().unwrap();
    (one, two, pick)
}

/// One case of the claim `run_loop` rests on (rev23 finding 8): a non-rooted collective's second
/// call starts nothing early, so P / T1 is 1 (dgx-a100, all-reduce 1 MiB, NCCL 2.30's pick, maxmin).
#[test]
fn an_all_reduce_s_period_is_its_call() {
    let (one, two, _) = t1_t2(&comm("dgx-a100", 1, "2.30"), Coll::AllReduce, 1 << 20, "maxmin");
    assert!(((two - one) / one - 1.0).abs() < 1e-6, "T1 {one} s, P {} s", two - one);
}

/// The one-off measurement behind `run_loop`'s choice (round 23), printed, not checked (it runs
/// for minutes; `an_all_reduce_s_period_is_its_call` checks one case): P / T1 of every collective
/// NCCL runs in rings or trees, on one and two nodes. `cargo test -p contend-core --lib
/// iterations_tests -- --ignored --nocapture`.
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

/// NCCL 2.18's figures for a ring/Simple call inside an NVLink node (tuning.cc `baseLat`
/// Ring/Simple and `hwLat` NVLINK Ring/Simple), and a Hopper port as NCCL's kernels reach it: 8
/// NVLinks x SM90_NVLINK_BW (20.6 GB/s, topo.h) each way.
const BASE: f64 = 8.4e-6;
const STEP: f64 = 3.4e-6;
const H800_PORT: f64 = 8.0 * 20.6e9;

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want
}

/// W1 of round 23 (8 x H800, broadcast, NCCL 2.18.3): one call of S bytes on C = 16 channels is
/// a chain of n = 8 GPUs per channel in chunks of one step (BROADCAST_CHUNKSTEPS 1: 4 MiB buffer
/// / NCCL_STEPS 8 = 512 KiB, or the channel's share S / C where less), every GPU's port carrying S each way: T1 = base + (n - 1) steps +
/// (S + (n - 2) C chunk) / port, the pipeline's fill being n - 2 chunks at a channel's share of the
/// port. Back to back, each GPU starts its next call when its own kernel ends, so the next call
/// streams behind the first: the period is P = base + one step + S / port, and T1 - P the fill,
/// (n - 2) (step + C chunk / port). Under maxmin and packet alike.
#[test]
fn a_broadcast_chain_pays_its_fill_once_per_loop() {
    let c = comm(H800, 1, "2.18");
    assert_eq!(c.channels, 16);
    let (n, ch) = (8.0, 16.0);
    for bytes in [4u64 << 20, 64 << 20] {
        let s = bytes as f64;
        // A channel's share under one step is one chunk (broadcast.h `realChunkSize`: the step,
        // or the share where less): 4 MiB on 16 channels, 256 KiB.
        let chunk = (s / ch).min(524288.0);
        let t1_want = BASE + (n - 1.0) * STEP + (s + (n - 2.0) * ch * chunk) / H800_PORT;
        let p_want = BASE + STEP + s / H800_PORT;
        let fill = (n - 2.0) * (STEP + ch * chunk / H800_PORT);
        for model in ["maxmin", "packet"] {
            let (t1, t2, pick) = t1_t2(&c, Coll::Broadcast, bytes, model);
            assert_eq!((pick.algo, pick.proto), (Algo::Ring, Proto::Simple));
            let p = t2 - t1;
            assert!(close(t1, t1_want, 0.01), "{model} {bytes} B: T1 {} us, by hand {} us", t1 * 1e6, t1_want * 1e6);
            assert!(close(p, p_want, 0.01), "{model} {bytes} B: P {} us, by hand {} us", p * 1e6, p_want * 1e6);
            assert!(close(t1 - p, fill, 0.02), "{model} {bytes} B: T1 - P {} us, fill by hand {} us", (t1 - p) * 1e6, fill * 1e6);
        }
    }
}

/// A row of nccl-tests' table is its loop's mean: (T1 + (iters - 1) P) / iters, with -n 1 the
/// call alone; a reduce (the chain to the root) as a broadcast; every other collective the call
/// alone (its period is its call: `run_loop`'s measurement); -n 0 refused in one line.
#[test]
fn a_row_is_the_mean_over_nccl_tests_iterations() {
    let c = comm(H800, 1, "2.18");
    let bytes = 64u64 << 20;
    let (t1, t2, _) = t1_t2(&c, Coll::Broadcast, bytes, "maxmin");
    let row = |op: &str, iters: usize| {
        let req = Request { iters, ngpus: None, params: vec![("nccl_version".into(), "2.18".into())], ..Request::sweep(op, "64M", "64M") };
        crate::api::nccl_tests(H800, &req, 1, None).map(|r| r.rows[0].time_us * 1e-6)
    };
    for (iters, want) in [(1, t1), (20, (t1 + 19.0 * (t2 - t1)) / 20.0), (100, (t1 + 99.0 * (t2 - t1)) / 100.0)] {
        let got = row("broadcast", iters).unwrap();
        assert!(close(got, want, 1e-9), "-n {iters}: {} us, want {} us", got * 1e6, want * 1e6);
        let reduce = row("reduce", iters).unwrap();
        assert!(close(reduce, want, 0.01), "reduce -n {iters}: {} us, broadcast {} us", reduce * 1e6, want * 1e6);
    }
    assert_eq!(row("all_reduce", 1).unwrap(), row("all_reduce", 100).unwrap());
    let e = row("broadcast", 0).unwrap_err().to_string();
    assert!(e.starts_with("-n") && e.contains("20") && !e.contains('\n'), "{e}");
}

/// Two GPUs: the chain is one hop, with no fill, so the period is the call: the loop's mean is T1.
#[test]
fn a_chain_of_two_has_no_fill_to_save() {
    let req = Request { gpus: Some(vec!["GPU0".into(), "GPU1".into()]), ..Request::sweep("broadcast", "8", "8") };
    let (m, per_node, _) = nodes::on_nodes(H800, &req, 1, None).unwrap();
    let mut c = Comm::new(&m, &per_node, None).unwrap();
    c.set_constants(constants::split(&[("nccl_version".into(), "2.18".into())]).unwrap().0).unwrap();
    for bytes in [1u64 << 20, 64 << 20] {
        let (t1, t2, _) = t1_t2(&c, Coll::Broadcast, bytes, "maxmin");
        assert!(close(t2 - t1, t1, 1e-6), "{bytes} B: P {} us, T1 {} us", (t2 - t1) * 1e6, t1 * 1e6);
    }
}
