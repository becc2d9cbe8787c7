//! NCCL's cost model under each restated release (`versions`): latencies worked out by hand from
//! each tag's tuning.cc tables, on a communicator given directly.

use super::tuning::{self, Comm};
use super::versions::Version;
use super::{Algo, Coll, Proto};

/// 2 nodes x 8 Ampere GPUs on NVLink: 16 channels of 12 GB/s between nodes, the tree's 15 inside
/// (also `releases_tests`' communicator).
pub(super) fn comm(version: Version) -> Comm {
    Comm {
        ranks: 16,
        nodes: 2,
        cc: 80,
        graph_channels: 16,
        bw_intra: 12.0,
        bw_inter: 12.0,
        tree_channels: 16,
        tree_bw_intra: 15.0,
        tree_bw_inter: 12.0,
        nvlink: true,
        nvlink_only: true,
        ll128_net: true,
        amd: false,
        same_channels: true,
        x86: true,
        nvls_heads: 0,
        nvls_bw_intra: 0.0,
        nvls_bw_inter: 0.0,
        version,
        net_latency: 0.0,
        pat_enable: 2,
        nvls_enable: 2,
        ll128_listed: false,
    }
}

#[test]
fn tree_simple_latency_follows_the_release() {
    // 2.30.7: base 8.4 + 2 x (7 GPUs x 4.0 NVLink + log2(2) x 14 network) = 92.4 us.
    let (lat, _) = tuning::model(&comm(Version::V2_30), Coll::AllReduce, Algo::Tree, Proto::Simple).unwrap();
    assert!((lat - 92.4).abs() < 1e-9, "{lat}");
    // 2.19.3 and 2.21.5: base 0 + 2 x (7 x 28 + 1 x 28) = 448 us.
    for v in [Version::V2_19, Version::V2_21] {
        let (lat, _) = tuning::model(&comm(v), Coll::AllReduce, Algo::Tree, Proto::Simple).unwrap();
        assert!((lat - 448.0).abs() < 1e-9, "{v:?}: {lat}");
    }
}

#[test]
fn ring_crosses_the_network_as_the_release_counts() {
    // Ring/Simple all-reduce on 16 ranks: 30 steps, each inside a node at max(3.4, 3 x 1 us).
    // 2.30.7: 2 network steps of 14 us: 8.4 + 28 x 3.4 + 2 x 14 = 131.6 us.
    let (lat, _) = tuning::model(&comm(Version::V2_30), Coll::AllReduce, Algo::Ring, Proto::Simple).unwrap();
    assert!((lat - 131.6).abs() < 1e-9, "{lat}");
    // 2.19.3: 2 x nodes = 4 network steps: 8.4 + 26 x 3.4 + 4 x 14 = 152.8 us.
    let (lat, _) = tuning::model(&comm(Version::V2_19), Coll::AllReduce, Algo::Ring, Proto::Simple).unwrap();
    assert!((lat - 152.8).abs() < 1e-9, "{lat}");
}

#[test]
fn ring_ll_keeps_the_release_share() {
    // Ring LL: 16 x 12 = 192 GB/s of graph; 2.19.3 keeps 1/4 (48), 2.30.7 1/2 (96); both under
    // llMaxBws for Intel CPUs on two nodes, 39 GB/s; algorithm bandwidth x 16 / 30.
    for v in [Version::V2_19, Version::V2_30] {
        let (_, bw) = tuning::model(&comm(v), Coll::AllReduce, Algo::Ring, Proto::Ll).unwrap();
        assert!((bw - 39.0 * 16.0 / 30.0).abs() < 1e-9, "{v:?}: {bw}");
    }
    // With one GPU per node the graph is 2 x 12 = 24 GB/s: 6 under 2.19.3, 12 under 2.30.7.
    let one = |v| Comm { ranks: 2, graph_channels: 2, ..comm(v) };
    let (_, old) = tuning::model(&one(Version::V2_19), Coll::AllReduce, Algo::Ring, Proto::Ll).unwrap();
    let (_, new) = tuning::model(&one(Version::V2_30), Coll::AllReduce, Algo::Ring, Proto::Ll).unwrap();
    assert!((old - 6.0).abs() < 1e-9 && (new - 12.0).abs() < 1e-9, "{old} {new}");
}

#[test]
fn a_large_call_moves_from_tree_ll128_to_tree_simple_later_in_2_19() {
    // Tree LL128: 16 x 15 x 0.92 x 120/128 = 207 GB/s of bus (under 16 x 20), algbw 103.5, latency
    // 14 + 2 x (7 x 1.25 + 8.5) = 48.5 us. Tree Simple: 16 x 15 x 0.92 = 220.8, algbw 110.4.
    // 512 MiB (past the correction table): LL128 48.5 + 5187.2 = 5235.7 us; Simple 92.4 + 4863.0
    // under 2.30.7 (Simple wins), 448 + 4863.0 under 2.19.3 (LL128 wins).
    let both = [(Algo::Tree, Proto::Ll128), (Algo::Tree, Proto::Simple)];
    let bytes = 512 << 20;
    let (_, p30, _) = tuning::choose(&comm(Version::V2_30), Coll::AllReduce, bytes, &both).unwrap();
    let (_, p19, t19) = tuning::choose(&comm(Version::V2_19), Coll::AllReduce, bytes, &both).unwrap();
    assert_eq!((p30, p19), (Proto::Simple, Proto::Ll128));
    assert!((t19 - (48.5 + bytes as f64 / (1000.0 * 103.5))).abs() < 1e-6, "{t19}");
}

#[test]
fn the_release_is_a_parameter_with_one_line_refusals() {
    let c = |v: &str| super::constants::split(&[("nccl_version".into(), v.into())]);
    assert_eq!(c("2.19").unwrap().0.version, Version::V2_19);
    assert_eq!(super::constants::Constants::default().version, Version::V2_30);
    assert_eq!(c("2.18").unwrap().0.version, Version::V2_18);
    let e = c("2.17").unwrap_err().to_string();
    assert!(e.contains("nccl_version") && e.contains("2.18") && !e.contains('\n'), "{e}");
}

#[test]
fn ll128_is_off_before_2_27_where_nccl_did_not_list_the_gpu() {
    // An A40 NVLink pair (compute capability 8.6, rings on NVLink): 2.30.7 leaves LL128 to the
    // path rule; 2.19.3 and 2.21.5 enable it on 7.0, 8.0 and 9.0 only.
    let a40 = |v| Comm { cc: 86, nodes: 1, ranks: 2, ..comm(v) };
    assert!(tuning::model(&a40(Version::V2_30), Coll::AllReduce, Algo::Ring, Proto::Ll128).is_some());
    for v in [Version::V2_19, Version::V2_21] {
        assert!(tuning::model(&a40(v), Coll::AllReduce, Algo::Ring, Proto::Ll128).is_none(), "{v:?}");
        assert!(tuning::model(&comm(v), Coll::AllReduce, Algo::Ring, Proto::Ll128).is_some(), "{v:?} on 8.0");
    }
}

#[test]
fn an_old_release_is_refused_on_blackwell() {
    let machine = crate::topology::Machine::load("hgx-b200").unwrap();
    let mut comm = super::Comm::new(&machine, &[machine.gpus()], None).unwrap();
    let old = super::constants::split(&[("nccl_version".into(), "2.21".into())]).unwrap().0;
    let e = comm.set_constants(old).unwrap_err().to_string();
    assert!(e.contains("nccl_version") && e.contains("2.21") && e.contains("2.25 or later") && !e.contains('\n'), "{e}");
    comm.set_constants(Default::default()).unwrap();
}

#[test]
fn ring_ll128_with_one_gpu_per_node_keeps_the_release_share() {
    // One GPU per node, two nodes: graph 2 x 12 = 24 GB/s; ring LL128 keeps 0.92 (2.30.7) or 0.7
    // (2.19.3) of it, both under perChMaxRingLL128Bws (2 x 20), so their algbws stand 0.92 : 0.7.
    let one = |v| Comm { ranks: 2, graph_channels: 2, ..comm(v) };
    let (_, new) = tuning::model(&one(Version::V2_30), Coll::AllReduce, Algo::Ring, Proto::Ll128).unwrap();
    let (_, old) = tuning::model(&one(Version::V2_19), Coll::AllReduce, Algo::Ring, Proto::Ll128).unwrap();
    assert!((new / old - 0.92 / 0.7).abs() < 1e-9, "{new} {old}");
}

#[test]
fn release_2_20_chooses_as_2_19_and_splits_network_peers_as_2_21() {
    // v2.20.3-1's tuning.cc is v2.19.3-1's but for MNNVL and CollNet (neither here): the same
    // latency and bandwidth for every algorithm and protocol; paths.cc's network peer rule is
    // v2.21.5-1's (2 channels a NIC, halved while 2 x ranks exceed 4 x the p2p channels).
    for algo in [Algo::Ring, Algo::Tree] {
        for proto in [Proto::Ll, Proto::Ll128, Proto::Simple] {
            let a = tuning::model(&comm(Version::V2_19), Coll::AllReduce, algo, proto);
            let b = tuning::model(&comm(Version::V2_20), Coll::AllReduce, algo, proto);
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{algo:?}/{proto:?}");
        }
    }
    let peer = |v| super::p2p::net_peer(v, 4, 50.0, 16, 32);
    assert_eq!(peer(Version::V2_20), peer(Version::V2_21));
    assert_eq!(peer(Version::V2_20), 4);
    assert_eq!(peer(Version::V2_19), 2);
}

/// 2 nodes x 8 Hopper GPUs: the NVLS graph's 16 channels at 40 GB/s inside a node, 25 between.
fn hopper(version: Version) -> Comm {
    Comm { cc: 90, nvls_heads: 16, nvls_bw_intra: 40.0, nvls_bw_inter: 25.0, net_latency: 75.0, ..comm(version) }
}

#[test]
fn release_2_18_models_tree_simple_and_nvls_from_its_own_tables() {
    // v2.18.5-1 tuning.cc: tree/Simple base 0 + 2 x (7 x 4 NVLink + 1 x 14 network) = 84 us.
    let (lat, _) = tuning::model(&comm(Version::V2_18), Coll::AllReduce, Algo::Tree, Proto::Simple).unwrap();
    assert!((lat - 84.0).abs() < 1e-9, "{lat}");
    // NVLS-tree on two nodes: 16 channels x the intra 40 GB/s x 0.7 x 2 / (2 x 1) = 448 GB/s;
    // latency base 23 + 2 x (2 - 1) x 19 = 61 us, the plugin's 75 us not added.
    let (lat, bw) = tuning::model(&hopper(Version::V2_18), Coll::AllReduce, Algo::NvlsTree, Proto::Simple).unwrap();
    assert!((lat - 61.0).abs() < 1e-9 && (bw - 448.0).abs() < 1e-9, "{lat} {bw}");
    // 2.19.3: 16 x min(40, 25) x 5/6 = 333.3 GB/s; 23 + 2 x log2(2) x (14 + 2 x 75) = 351 us.
    let (lat, bw) = tuning::model(&hopper(Version::V2_19), Coll::AllReduce, Algo::NvlsTree, Proto::Simple).unwrap();
    assert!((lat - 351.0).abs() < 1e-9 && (bw - 16.0 * 25.0 * 5.0 / 6.0).abs() < 1e-9, "{lat} {bw}");
    // Four nodes: the inter 25 GB/s, ratio 0.7 x 4 / 6; latency 23 + 2 x 3 x 19 = 137 us.
    let four = Comm { nodes: 4, ranks: 32, ..hopper(Version::V2_18) };
    let (lat, bw) = tuning::model(&four, Coll::AllReduce, Algo::NvlsTree, Proto::Simple).unwrap();
    assert!((lat - 137.0).abs() < 1e-9 && (bw - 16.0 * 25.0 * 0.7 * 4.0 / 6.0).abs() < 1e-9, "{lat} {bw}");
    // One node: NVLS all-reduce at 16 x 40 x 5/6, 23 us; no NVLS all-gather (2.19.3 has one).
    let one = |v| Comm { nodes: 1, ranks: 8, ..hopper(v) };
    let (lat, bw) = tuning::model(&one(Version::V2_18), Coll::AllReduce, Algo::Nvls, Proto::Simple).unwrap();
    assert!((lat - 23.0).abs() < 1e-9 && (bw - 16.0 * 40.0 * 5.0 / 6.0).abs() < 1e-9, "{lat} {bw}");
    assert!(tuning::model(&one(Version::V2_18), Coll::AllGather, Algo::Nvls, Proto::Simple).is_none());
    assert!(tuning::model(&one(Version::V2_19), Coll::AllGather, Algo::Nvls, Proto::Simple).is_some());
    // Ring and LL models are 2.19.3's; a network peer gets NCCL_NCHANNELS_PER_NET_PEER's 2.
    for (algo, proto) in [(Algo::Ring, Proto::Simple), (Algo::Ring, Proto::Ll), (Algo::Ring, Proto::Ll128), (Algo::Tree, Proto::Ll128)] {
        let a = tuning::model(&comm(Version::V2_18), Coll::AllReduce, algo, proto);
        let b = tuning::model(&comm(Version::V2_19), Coll::AllReduce, algo, proto);
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{algo:?}/{proto:?}");
    }
    assert_eq!(super::p2p::net_peer(Version::V2_18, 4, 50.0, 16, 32), 2);
}

/// A patch release other than the tag restated is run as its minor, with a note (tester's R4).
#[test]
fn a_patch_release_is_noted() {
    assert!(Version::patch_note("2.19.4").is_some_and(|n| n.contains("NCCL 2.19.4 is run as 2.19") && n.contains("2.19.3")));
    assert_eq!(Version::patch_note("2.19.3"), None);
    assert_eq!(Version::patch_note("2.19"), None);
    let mut req = crate::nccl::tests_tool::Request::one("all_reduce", "1M");
    req.params.push(("nccl_version".into(), "2.19.4".into()));
    let r = crate::api::nccl_tests("dgx-a100", &req, 1, None).unwrap();
    assert!(r.notes.iter().any(|n| n.contains("is run as 2.19")), "{:?}", r.notes);
    // Printed beside the table too (rev22 finding 8), as every caveat.
    assert!(r.caveats.iter().any(|n| n.contains("is run as 2.19")), "{:?}", r.caveats);
}

/// Hopper's search speeds by release (search.cc `sm90SpeedArrayIntra`/`Inter` at each tag):
/// 2.18.5's lists lack 50 and 11 (intra) and 22 (inter); 2.19.3 and 2.20.3 add 50 and 22; 2.21.5
/// adds 11 and is 2.30.7's. Volta's and Ampere's lists are every release's alike.
#[test]
fn hopper_search_speeds_follow_the_release() {
    let missing = |v: Version, inter: bool| -> Vec<f64> {
        let (all, some) = (tuning::release_speeds(Version::V2_30, 90, inter), tuning::release_speeds(v, 90, inter));
        assert!(some.iter().all(|s| all.contains(s)), "{v:?}: a speed 2.30.7 has not");
        all.iter().copied().filter(|s| !some.contains(s)).collect()
    };
    assert_eq!((missing(Version::V2_18, false), missing(Version::V2_18, true)), (vec![50.0, 11.0], vec![22.0]));
    for v in [Version::V2_19, Version::V2_20] {
        assert_eq!((missing(v, false), missing(v, true)), (vec![11.0], vec![]), "{v:?}");
    }
    for v in super::versions::ALL.into_iter().filter(|&v| v >= Version::V2_21) {
        assert_eq!((missing(v, false), missing(v, true)), (vec![], vec![]), "{v:?}");
        assert_eq!(tuning::release_speeds(v, 90, false), tuning::speeds(90));
    }
    for (cc, v) in [70, 80].into_iter().flat_map(|cc| super::versions::ALL.into_iter().map(move |v| (cc, v))) {
        assert_eq!(tuning::release_speeds(v, cc, true), tuning::inter_speeds(cc));
    }
}
