//! NCCL's cost model across nodes where it depends on the host and the ring graph: `netOverhead`
//! by CPU vendor (tuning.cc `getNetOverhead`), broadcast's and reduce's ring latency by the
//! graph's `sameChannels` (tuning.cc, search.cc), and on Blackwell NVLS's tuning (transport/nvls.cc)
//! and NVLS-tree's correction (tuning.cc). Expected values from NCCL's tables, by hand.

use super::dtree_tests::comm_of;
use super::*;

/// The host CPU's `netOverhead` (tuning.cc `getNetOverhead`, v2.18.5 to v2.30.7): 1 µs on Intel
/// x86, 2 µs on AMD x86, 1 µs elsewhere; x 3 for Simple. A ring step inside a node of a
/// multi-node ring costs at least that.
#[test]
fn ring_steps_inside_a_node_pay_the_hosts_net_overhead() {
    use super::versions_tests::comm;
    let intel = comm(versions::Version::V2_30);
    let amd = tuning::Comm { amd: true, ..intel.clone() };
    let lat = |c: &tuning::Comm, coll, proto| tuning::model(c, coll, Algo::Ring, proto).unwrap().0;
    // All-gather on 16 ranks, 2 nodes: 15 steps, 1 across nodes (NET LL 2.7 µs), 14 inside at
    // max(NVLink LL 0.6, netOverhead): 6.6 + 14 x 1 + 2.7 = 23.3 µs on Intel, 6.6 + 14 x 2 + 2.7 = 37.3 on AMD.
    assert!((lat(&intel, Coll::AllGather, Proto::Ll) - 23.3).abs() < 1e-9);
    assert!((lat(&amd, Coll::AllGather, Proto::Ll) - 37.3).abs() < 1e-9);
    // All-reduce Simple: 30 steps, 2 across nodes (14 µs); 28 inside at max(3.4, 3 x netOverhead):
    // Intel 8.4 + 28 x 3.4 + 28 = 131.6; AMD 8.4 + 28 x 6 + 28 = 204.4 µs.
    assert!((lat(&intel, Coll::AllReduce, Proto::Simple) - 131.6).abs() < 1e-9);
    assert!((lat(&amd, Coll::AllReduce, Proto::Simple) - 204.4).abs() < 1e-9);
    // One node: no overhead.
    let one = tuning::Comm { nodes: 1, ranks: 8, ..amd.clone() };
    assert_eq!(tuning::net_overhead(&one, Proto::Simple), 0.0);
}

/// The lowered ring step takes the same `netOverhead`: dgx-a100 names AMD EPYC 7742 hosts (2 µs;
/// 6 µs Simple, above NVLink's 3.4), hgx-h100 Intel Xeons (1 µs; Simple keeps NVLink's 3.4).
#[test]
fn the_lowered_ring_step_takes_the_hosts_net_overhead() {
    let step = |c: &Comm, proto| c.call(Coll::AllGather, Algo::Ring, proto, 1 << 20, 0).step * 1e6;
    let a100 = comm_of("dgx-a100", 2, "25GB/s");
    assert!(a100.tuning.amd);
    assert!((step(&a100, Proto::Ll) - 2.0).abs() < 1e-9);
    assert!((step(&a100, Proto::Simple) - 6.0).abs() < 1e-9);
    let h100 = comm_of("hgx-h100", 2, "50GB/s");
    assert!(!h100.tuning.amd);
    assert!((step(&h100, Proto::Ll) - 1.0).abs() < 1e-9);
    assert!((step(&h100, Proto::Simple) - 3.4).abs() < 1e-9);
    // 2 x dgx-a100 all-gather at 32 MiB: NCCL's model (2 µs a step) picks ring LL128 over Simple.
    let pick = a100.choose(Coll::AllGather, 32 << 20, &[Algo::Ring], &[Proto::Ll, Proto::Ll128, Proto::Simple]).unwrap();
    assert_eq!(pick.1, Proto::Ll128, "{pick:?}");
}

/// Broadcast's and reduce's ring latency (tuning.cc, v2.18.5 to v2.30.7): one hop where the
/// graph keeps the same channels, nRanks hops otherwise, Simple at the tree's hop figure.
#[test]
fn broadcast_latency_follows_same_channels() {
    use super::versions_tests::comm;
    let lat = |c: &tuning::Comm, proto| tuning::model(c, Coll::Broadcast, Algo::Ring, proto).unwrap().0;
    let same = comm(versions::Version::V2_30);
    let differ = tuning::Comm { same_channels: false, ..same.clone() };
    // 16 ranks on 2 nodes, NET latencies: LL 6.6 + 2.7 and 6.6 + 16 x 2.7; LL128 14 + 4 and
    // 14 + 16 x 4; Simple 8.4 + 14 and 8.4 + 16 x 14 (tree/Simple's NET figure, 14 in 2.30.7).
    for (proto, one, many) in [(Proto::Ll, 9.3, 49.8), (Proto::Ll128, 18.0, 78.0), (Proto::Simple, 22.4, 232.4)] {
        assert!((lat(&same, proto) - one).abs() < 1e-9, "{proto:?}");
        assert!((lat(&differ, proto) - many).abs() < 1e-9, "{proto:?}");
    }
    // 2.19.3's tree/Simple NET figure is 28 µs: 8.4 + 16 x 28.
    let old = tuning::Comm { version: versions::Version::V2_19, ..differ.clone() };
    assert!((lat(&old, Proto::Simple) - 456.4).abs() < 1e-9);
    let reduce = tuning::model(&differ, Coll::Reduce, Algo::Ring, Proto::Ll).unwrap().0;
    assert!((reduce - 49.8).abs() < 1e-9);
}

/// `sameChannels` from the rings: across hgx-h100 nodes channel c enters at GPU c (its NIC's local
/// GPU), so the channels differ (NCCL's search keeps them from its second, sameChannels 0 try);
/// on one node every channel crosses the GPUs in one order.
#[test]
fn same_channels_comes_from_the_rings() {
    let two = comm_of("hgx-h100", 2, "50GB/s");
    assert!(!two.tuning.same_channels);
    let m = Machine::from_text(crate::topology::preset_text("hgx-h100").unwrap(), "hgx-h100").unwrap();
    assert!(Comm::new(&m, &[m.gpus()], None).unwrap().tuning.same_channels);
    // NCCL's pick on 2 x hgx-h100 with the graph's bandwidths (LL 39, LL128 293.6, Simple 384 GB/s):
    // LL to 1 MiB (LL128's 78 µs latency), LL128 at 16 MiB (Simple's 232.4).
    let all = [Proto::Ll, Proto::Ll128, Proto::Simple];
    assert_eq!(two.choose(Coll::Broadcast, 1 << 20, &[Algo::Ring], &all).unwrap().1, Proto::Ll);
    assert_eq!(two.choose(Coll::Broadcast, 16 << 20, &[Algo::Ring], &all).unwrap().1, Proto::Ll128);
}

/// `ncclNvlsTreeSm100Tuning` (transport/nvls.cc, from v2.30.3): NVLS's channels, its chunk and
/// NVLS-tree's largest chunk across Blackwell nodes, by nodes, ppn, NIC GB/s and GPU-to-NIC path.
#[test]
fn blackwell_nvls_tuning_follows_nodes_and_nics() {
    use versions::{NvlsNet, Version};
    const K: u64 = 1024;
    let v = Version::V2_30;
    let net = |ppn, bw, pxb| NvlsNet { ppn, bw, pxb };
    let both = |nodes, n: NvlsNet| (v.nvls_channels(100, nodes, n), v.nvls_chunks(100, nodes, n));
    // 2 nodes at 48 GB/s: 32 channels; ppn 8 within PXB below 96: NVLS-tree 64 KiB; ppn 4: 256 KiB both.
    assert_eq!(both(2, net(8, 48.0, true)), (32, (128 * K, Some(64 * K))));
    assert_eq!(both(2, net(8, 48.0, false)), (32, (128 * K, Some(128 * K))));
    assert_eq!(both(2, net(4, 48.0, true)), (32, (256 * K, Some(256 * K))));
    assert_eq!(both(2, net(16, 96.0, false)), (32, (128 * K, Some(64 * K))));
    // Beyond 2 nodes: at 96 and ppn 8, 24 channels and 256 KiB; at 48 to 96, 24 and 128 (64 within PXB).
    assert_eq!(both(4, net(8, 96.0, true)), (24, (256 * K, Some(256 * K))));
    assert_eq!(both(4, net(16, 96.0, true)), (32, (128 * K, Some(128 * K))));
    assert_eq!(both(4, net(32, 96.0, true)), (32, (128 * K, Some(64 * K))));
    assert_eq!(both(3, net(8, 48.0, true)), (24, (128 * K, Some(64 * K))));
    assert_eq!(both(3, net(8, 48.0, false)), (24, (128 * K, Some(128 * K))));
    // Below 48 GB/s NCCL's defaults: 32 channels, 128 KiB, and 64 KiB from 4 nodes.
    assert_eq!(both(3, net(8, 24.0, true)), (32, (128 * K, Some(128 * K))));
    assert_eq!(both(4, net(8, 24.0, true)), (32, (128 * K, Some(64 * K))));
    // 2.29.7 has no such tuning (32 channels, the fallback chunks); nor has Hopper or one node.
    let n = net(8, 48.0, true);
    assert_eq!((Version::V2_29.nvls_channels(100, 3, n), Version::V2_29.nvls_chunks(100, 3, n)), (32, (128 * K, None)));
    assert_eq!((v.nvls_channels(90, 3, n), v.nvls_chunks(90, 3, n)), (16, (128 * K, None)));
    assert_eq!(v.nvls_channels(100, 1, n), 24);
}

/// On hgx-b200 nodes (8 x 400 Gb/s NICs behind Gen5 x16, NCCL's 48 GB/s, PIX): the NVLS-tree call
/// runs 32 channels on 2 nodes and 24 beyond, its first chunk 64 KiB, under 2.30; under 2.29 32
/// channels and 128 KiB on 3 nodes. NCCL_NVLSTREE_MAX_CHUNKSIZE wins over the tuning.
#[test]
fn blackwell_nvls_tree_call_takes_the_tuning() {
    const K: u64 = 1024;
    use versions::Version;
    for (nodes, version, channels, first) in
        [(2, Version::V2_30, 32, 64 * K), (3, Version::V2_30, 24, 64 * K), (3, Version::V2_29, 32, 128 * K), (4, Version::V2_29, 32, 64 * K)]
    {
        let mut c = comm_of("hgx-b200", nodes, "50GB/s");
        let n = c.nvls_net;
        assert!(n.ppn == 8 && (n.bw - 48.0).abs() < 1e-3 && n.pxb, "{n:?}");
        c.set_constants(constants::Constants { version, ..Default::default() }).unwrap();
        let call = c.call(Coll::AllReduce, Algo::NvlsTree, Proto::Simple, 1 << 30, 0);
        assert_eq!((call.rings.len(), call.nvls_tree_first), (channels, first), "{nodes} nodes, {version:?}");
    }
    let mut c = comm_of("hgx-b200", 2, "50GB/s");
    c.set_constants(constants::Constants { nvlstree_max: Some(128 * K), ..Default::default() }).unwrap();
    assert_eq!(c.call(Coll::AllReduce, Algo::NvlsTree, Proto::Simple, 1 << 30, 0).nvls_tree_first, 128 * K);
}

/// From 2.29.2 NCCL's model scales NVLS-tree all-reduce's bandwidth by `treeCorrectionFactor` on
/// Blackwell with x86 hosts, 64 B to 1 GiB (Simple: 0.6 at 2 MiB, log2(2 MiB / 64) = 15; 0.9 at
/// 512 MiB, the 24th column); not under 2.28, not without x86, not at 1 GiB.
#[test]
fn blackwell_nvls_tree_takes_the_tree_correction() {
    let two = comm_of("hgx-b200", 2, "50GB/s");
    assert!(two.tuning.x86);
    let bw_share = |c: &tuning::Comm, bytes: u64| {
        let (lat, bw) = tuning::model(c, Coll::AllReduce, Algo::NvlsTree, Proto::Simple).unwrap();
        let t = tuning::time_us(c, Coll::AllReduce, Algo::NvlsTree, Proto::Simple, bytes).unwrap();
        bytes as f64 / (1000.0 * bw) / (t - lat)
    };
    let t30 = two.tuning.clone();
    assert!((bw_share(&t30, 2 << 20) - 0.6).abs() < 1e-9);
    assert!((bw_share(&t30, 512 << 20) - 0.9).abs() < 1e-9);
    assert!((bw_share(&t30, 1 << 30) - 1.0).abs() < 1e-9);
    let t28 = tuning::Comm { version: versions::Version::V2_28, ..t30.clone() };
    assert!((bw_share(&t28, 2 << 20) - 1.0).abs() < 1e-9);
    let arm = tuning::Comm { x86: false, ..t30.clone() };
    assert!((bw_share(&arm, 2 << 20) - 1.0).abs() < 1e-9);
}
