//! What the lowering holds as the nodes grow: PXN's relays a lookup per rank (not a table per
//! pair of ranks), and the transfers of rings and all-to-alls, which grow with the square of
//! the ranks as NCCL's own sends do, counted before lowering and refused past the limit.

use super::*;
use crate::topology::Machine;

/// `nodes` copies of hgx-h100 on one switch (as `contend nccl-tests --nodes`), as one communicator.
fn comm(nodes: usize) -> Comm {
    let hosts = vec!["S0"; nodes].join(", ");
    let text = format!(
        "name: c\nfabric:\n  graph: {{switches: [{{name: S0}}], links: [], hosts: [{hosts}]}}\nlink: {{bandwidth: 50GB/s}}\nnodes: {{count: {nodes}, machine: \"hgx-h100\"}}\n"
    );
    let m = Machine::from_text(&text, "c").unwrap();
    let node = |k: usize| m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    Comm::new(&m, &(0..nodes).map(node).collect::<Vec<_>>(), None).unwrap()
}

#[test]
fn every_pair_of_many_nodes_relays_through_the_gpu_with_the_receivers_device_number() {
    // 48 copies of hgx-h100 on one switch (384 ranks): every GPU pair of a node is one NVSwitch
    // hop, so a send from local GPU i to GPU j of another node goes through GPU j of the sender's
    // node where j != i, and straight from i where j == i; inside a node nothing is relayed.
    let (nodes, ppn) = (48, 8);
    let c = comm(nodes);
    let call = c.call(Coll::AllToAll, Algo::Ring, Proto::Simple, 1 << 20, 0);
    for a in 0..nodes * ppn {
        for b in 0..nodes * ppn {
            let (i, j) = (a % ppn, b % ppn);
            let want = (a / ppn != b / ppn && i != j).then_some(a / ppn * ppn + j);
            assert_eq!(call.pxn.relay(a, b), want, "{a} -> {b}");
        }
    }
}

#[test]
fn a_rings_transfers_are_counted_before_lowering_and_too_many_are_refused_in_one_line() {
    // 4 x hgx-h100 (32 ranks), 256 KiB: each ring's every rank sends once per step of one loop
    // (a rank's block, 256 KiB / channels / 32, is under a chunk), 2 x 31 steps for all-reduce
    // and 31 for all-gather; an all-to-all sends once per ordered pair at least.
    let c = comm(4);
    for (coll, steps) in [(Coll::AllReduce, 62u64), (Coll::AllGather, 31)] {
        let call = c.call(coll, Algo::Ring, Proto::Simple, 256 << 10, 0).merged();
        let want = call.rings.len() as u64 * 32 * steps;
        assert_eq!(lower::transfers_at_least(&call), want, "{coll:?}");
        assert_eq!(lower::lower(&call).0.len() as u64, want, "{coll:?}: one loop, one send per rank and step");
    }
    let all = c.call(Coll::AllToAll, Algo::P2p, Proto::Simple, 1 << 20, 0);
    assert_eq!(lower::transfers_at_least(&all), 32 * 31);
    assert!(lower::lower(&all).0.len() as u64 >= 32 * 31);
    // Past the limit the call is refused before it is lowered, in one line naming --nodes.
    let mut big = c.call(Coll::AllReduce, Algo::Ring, Proto::Simple, 1 << 30, 0);
    big.devices = (0..4096).map(|r| big.devices[r % 32]).collect();
    big.rings = vec![(0..4096).collect()];
    assert_eq!(lower::transfers_at_least(&big), 4096 * 2 * 4095);
    let Err(e) = run(&c.m, &big, "maxmin", &[], false) else { panic!("ran") };
    let e = e.to_string();
    assert!(e.contains("--nodes") && e.contains("33.5 M transfers") && !e.contains('\n'), "{e}");
}

#[test]
fn the_lowering_itself_stops_at_its_limit_whatever_the_estimate_missed() {
    // An all-to-all's estimate counts one send per ordered pair; the lowering splits each pair's
    // share over channels and loops (here 1 GiB over 32 ranks: many sends a pair), so the
    // estimate is a lower bound only. The lowering stops at its limit and says so.
    let c = comm(4);
    let all = c.call(Coll::AllToAll, Algo::P2p, Proto::Simple, 1 << 30, 0);
    let whole = lower::lower(&all).0.len() as u64;
    assert!(whole > 2 * lower::transfers_at_least(&all), "{whole}");
    let limit = whole / 2;
    let (t, ch) = lower::lower_within(&all, limit);
    assert_eq!((t.len() as u64, ch.len() as u64), (limit, limit));
    assert!(t.iter().all(|x| x.after.iter().all(|&a| (a as u64) < limit)), "every dependency inside the kept part");
    assert!(!lower::truncated(&lower::lower(&all).0));
}
