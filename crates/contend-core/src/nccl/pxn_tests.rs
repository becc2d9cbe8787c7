//! PXN on a rail-optimised fabric, from the fabric's definition: NIC k of every node hangs off
//! rail switch Rk and rails meet only through the spines, so a message between GPUs with
//! different device numbers crosses a spine unless it changes rail inside the node, over NVLink,
//! which PXN does (the local GPU with the receiver's device number sends it from its own NIC).

use super::*;
use crate::flow::router::Router;
use crate::topology::Machine;

/// The first two nodes of superpod-h100-su as one communicator, with or without PXN.
fn comm(m: &Machine, pxn: bool) -> Comm {
    let node = |k: usize| m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    let mut c = Comm::new(m, &[node(0), node(1)], None).unwrap();
    c.constants.pxn_disable = !pxn;
    c
}

/// Bytes the call's transfers put on links that touch a spine (S0..S3), and in all.
fn spine_bytes(m: &Machine, call: &lower::Call) -> (u64, u64) {
    let router = Router::new(m);
    let (t, _) = lower::lower(call);
    let spine = |d: usize| m.devices[d].kind == DeviceKind::Switch && m.devices[d].name.starts_with('S');
    let mut on_spine = 0;
    for x in &t {
        let hops = router.path(x.src, x.dst, true).expect("a path");
        if hops.iter().any(|h| spine(m.links[h.link].a) || spine(m.links[h.link].b)) {
            on_spine += x.size;
        }
    }
    (on_spine, t.iter().map(|x| x.size).sum())
}

#[test]
fn all_to_all_with_pxn_crosses_no_spine() {
    let m = Machine::load("superpod-h100-su").unwrap();
    let bytes = 64u64 << 20;
    let with = comm(&m, true).call(Coll::AllToAll, Algo::Ring, Proto::Simple, bytes, 0);
    let (spine, all) = spine_bytes(&m, &with);
    assert_eq!(spine, 0, "PXN: {spine} of {all} bytes over spines");
    // Every message between nodes whose ends differ in device number is relayed: 8 x 7 per
    // direction of the 16 x 8 crossing pairs.
    let relayed = (0..16).flat_map(|a| (0..16).map(move |b| (a, b))).filter(|&(a, b)| with.pxn.relay(a, b).is_some()).count();
    assert_eq!(relayed, 2 * 8 * 7);
    // Without PXN those messages leave from the sender's own NIC, on another rail than the
    // receiver's: 7/8 of the bytes between nodes (half the all-to-all's) go through a spine.
    let without = comm(&m, false).call(Coll::AllToAll, Algo::Ring, Proto::Simple, bytes, 0);
    let (spine, all) = spine_bytes(&m, &without);
    let between = 16.0 * 8.0 * (bytes / 16) as f64;
    assert!((spine as f64 / (between * 7.0 / 8.0) - 1.0).abs() < 0.01, "no PXN: {spine} of {all} bytes over spines");
}

#[test]
fn pxn_keeps_the_nic_load_and_runs_under_every_model() {
    // Each NIC k carries what the node sends to GPU k of the other node with PXN, and what GPU k
    // sends without: 8 x S/16 either way, so on a non-blocking spine the time is the NICs' and
    // PXN changes it by the NVLink hop only.
    let m = Machine::load("superpod-h100-su").unwrap();
    let bytes = 256u64 << 20;
    let t = |pxn: bool| run(&comm(&m, pxn).m, &comm(&m, pxn).call(Coll::AllToAll, Algo::Ring, Proto::Simple, bytes, 0), "maxmin", &[], false).unwrap().seconds;
    let (with, without) = (t(true), t(false));
    assert!((with / without - 1.0).abs() < 0.05, "PXN {with} s, without {without} s");
    // The NIC bound: S/2 per NIC at 50 GB/s.
    assert!(with > (bytes / 2) as f64 / 50e9, "{with}");
    for model in crate::model::registry::MODELS {
        let c = comm(&m, true);
        match run(&c.m, &c.call(Coll::AllToAll, Algo::Ring, Proto::Simple, 1 << 20, 0), model.name, &[], false) {
            Ok(r) => assert!(r.seconds > 0.0, "{}", model.name),
            Err(e) => assert!(!e.to_string().contains('\n'), "{}: {e}", model.name),
        }
    }
}

#[test]
fn all_to_all_follows_nccl_p2p_schedule() {
    // 3 nodes x 4: every ordered pair once, in rounds of n sends that are permutations (each
    // rank sends once and receives once per round); node deltas in NCCL's order 0, 1, 3 -> 0, 1
    // (3 is past the node count; 2 comes after: (x² + x)/2 mod 4 = 0, 1, 3, 2).
    let (n, ppn) = (12, 4);
    let s = lower::schedule(n, ppn);
    assert_eq!(s.len(), n * (n - 1));
    let mut seen = std::collections::BTreeSet::new();
    assert!(s.iter().all(|&p| seen.insert(p)));
    // The first round (node delta 0, local delta 1) leaves out no rank and repeats none.
    let first: Vec<usize> = s[..n].iter().map(|p| p.1).collect();
    let mut sorted = first.clone();
    sorted.sort();
    assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "{first:?}");
    assert_eq!((s[3 * n].0 / ppn, s[3 * n].1 / ppn), (0, 1), "node delta 1 follows delta 0's three rounds");
    assert_eq!(s[7 * n].1 / ppn, 2, "then node delta 2");
}
