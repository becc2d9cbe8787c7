//! Round 15, checked from NCCL's figures and the links' rates, not from a run: NCCL's LL ceiling
//! in the lowering (`llMaxBws` for the whole call), merged loops that stream (no step beyond
//! NCCL's chunks), and one name for each algorithm.

use super::*;
use crate::api;

fn req(op: &str, size: &str, algo: Option<&str>, proto: Option<&str>) -> tests_tool::Request {
    tests_tool::Request { algo: algo.map(Into::into), proto: proto.map(Into::into), ..tests_tool::Request::one(op, size) }
}

fn row(nodes: usize, r: &tests_tool::Request) -> tests_tool::Row {
    api::nccl_tests("hgx-h100", r, nodes, None).unwrap().rows.remove(0)
}

#[test]
fn ring_and_tree_ll_stay_under_nccls_ll_ceiling() {
    // hgx-h100 (Hopper, Intel CPUs): llMaxBws is 141 GB/s on one node (the Hopper row) and 39 on
    // two (NCCL indexes nodes beyond one by CPU vendor: the Intel row). The links are far
    // faster: each GPU's NVLink port takes 18 x 20.6 = 370.8 GB/s, LL's half of it 185; two
    // nodes cross by 8 x 50 GB/s NICs. So the ceiling binds; at 128 MiB the ring pays besides
    // its steps' path latencies, most on two nodes, where each 32 KiB LL chunk takes about 20 us
    // at the capped rate and the network's latency delays the steps downstream of it.
    for (nodes, cap) in [(1, tuning::LL_MAX_BW[2][0]), (2, tuning::LL_MAX_BW[0][1])] {
        let r = row(nodes, &req("all_reduce", "128M", Some("ring"), Some("LL")));
        assert!(r.busbw <= cap * 1.0001 && r.busbw >= 0.9 * cap, "{nodes} node(s): ring LL busbw {} against {cap}", r.busbw);
        // All-gather: the same ceiling on its own busbw.
        let r = row(nodes, &req("all_gather", "128M", Some("ring"), Some("LL")));
        assert!(r.busbw <= cap * 1.0001 && r.busbw >= 0.9 * cap, "{nodes} node(s): all-gather LL busbw {} against {cap}", r.busbw);
    }
    // A tree's algorithm bandwidth is half its bus figure (NCCL's tree ratio 0.5).
    let r = row(2, &req("all_reduce", "8M", Some("tree"), Some("LL")));
    assert!(r.algbw <= 0.5 * tuning::LL_MAX_BW[0][1] * 1.0001, "tree LL algbw {}", r.algbw);
}

#[test]
fn the_advice_never_recommends_ll_above_its_ceiling() {
    let r = tests_tool::Request { explain: true, ..req("all_reduce", "8M", None, None) };
    let row = row(2, &r);
    let e = row.explain.expect("explained");
    for a in e.alternatives.iter().filter(|a| a.proto == Proto::Ll) {
        let algbw = row.size as f64 / (a.time_us * 1e3);
        // Bus to algorithm bandwidth: a ring's n / 2(n - 1), a tree's 0.5.
        let cap = tuning::LL_MAX_BW[0][1] * if a.algo == Algo::Tree { 0.5 } else { 1.0 / Coll::AllReduce.busbw_factor(16) };
        assert!(algbw <= cap * 1.0001, "{}/LL at {algbw} GB/s algbw against {cap}", a.algo.name());
    }
    assert!(e.fastest_proto != Proto::Ll, "{:?}", e.fastest_algo);
}

#[test]
fn merged_loops_each_hold_more_than_two_chunks() {
    // A merged loop streams as head, body and foot only when it is more than two chunks; one of
    // one to two chunks would be stored and forwarded whole (`lower::send_in`).
    let chunk = 65536;
    for n in 1..200u64 {
        let v = lower::loops(n * chunk - 7, chunk);
        assert_eq!(v.iter().sum::<u64>(), n * chunk - 7);
        for &b in &v[..v.len() - 1] {
            assert!(b == chunk || b > 2 * chunk, "{n} chunks: a loop of {b} bytes");
        }
        assert!(v.len() <= 2 * lower::KEEP + 2 * lower::MIDDLE, "{n} chunks: {} loops", v.len());
    }
}

#[test]
fn nvls_tree_time_per_byte_never_rises_with_size() {
    // 4 x hgx-h100, NVLS-tree: 64 KiB chunks (NCCL's cap from 4 nodes) and 16 channels of 8
    // heads, so 64 MiB is 8 chunks a head, 128 MiB 16, 256 MiB 32: a deeper pipeline amortises
    // its fill, so busbw cannot fall as the size doubles.
    let mut last = 0.0;
    for size in ["16M", "32M", "64M", "128M", "256M", "512M"] {
        let r = row(4, &req("all_reduce", size, Some("nvlstree"), None));
        assert!(r.busbw >= last, "{size}: busbw {} after {last}", r.busbw);
        last = r.busbw;
    }
}

#[test]
fn one_name_per_algorithm_and_p2p_is_no_ring() {
    let r = row(1, &req("alltoall", "1M", None, None));
    assert_eq!(r.algo, Algo::P2p);
    assert_eq!(serde_json::to_value(r.algo).unwrap(), "p2p");
    assert_eq!((Algo::NvlsTree.name(), Algo::NvlsTree.id()), ("NVLSTree", "nvls_tree"));
    // A collective asked for an algorithm it does not have is refused, naming what it has (NCCL
    // finds no algorithm); send/receive and all-to-all run peer-to-peer whatever NCCL_ALGO says,
    // as NCCL runs them, and the report says the setting did not apply.
    let e = api::nccl_tests("hgx-h100", &req("all_gather", "1M", Some("tree"), None), 1, None).unwrap_err().to_string();
    assert!(e.contains("--algo") && e.contains("has ring, nvls") && !e.contains('\n'), "{e}");
    for (op, algo) in [("alltoall", "tree"), ("sendrecv", "ring")] {
        let r = api::nccl_tests("hgx-h100", &req(op, "1M", Some(algo), None), 1, None).unwrap();
        assert_eq!(r.rows[0].algo, Algo::P2p);
        assert!(r.notes.iter().any(|n| n.contains("does not apply")), "{op}: {:?}", r.notes);
    }
}
