//! The releases 2.22 to 2.29 (`versions`): for each rule gated by release, the two releases on
//! either side of the tag where NVIDIA/nccl's file changed, with the value worked out by hand
//! from each tag's formula on a communicator given directly.

use super::p2p;
use super::tuning::{self, Comm};
use super::versions::{self, Version};
use super::versions_tests::comm;
use super::{Algo, Coll, Proto};

fn model(c: &Comm, coll: Coll, algo: Algo, proto: Proto) -> (f64, f64) {
    tuning::model(c, coll, algo, proto).unwrap_or_else(|| panic!("{:?} {coll:?} {algo:?}/{proto:?} is off", c.version))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6 * b.abs().max(1.0)
}

#[test]
fn every_minor_from_2_18_to_2_30_is_a_word_and_its_patches_read_as_it() {
    assert_eq!(versions::NAMES.len(), versions::ALL.len());
    for (k, v) in versions::ALL.iter().enumerate() {
        assert_eq!(*v as usize, k);
        assert_eq!(v.name(), format!("2.{}", 18 + k));
        assert!(v.tag().starts_with(&format!("{}.", v.name())), "{v:?} {}", v.tag());
        assert_eq!(Version::parse(v.tag()).unwrap(), *v);
    }
    assert_eq!(Version::parse("2.26.2").unwrap(), Version::V2_26);
    assert_eq!(Version::parse("2.27.3+cuda12.9").unwrap(), Version::V2_27);
    assert!(Version::patch_note("2.26.2").is_some_and(|n| n.contains("run as 2.26") && n.contains("2.26.6")));
    assert_eq!(Version::patch_note("2.28.9"), None);
    // A minor NCCL never released is refused in one line naming the nearest it models.
    for (given, nearest) in [("2.31", "2.30"), ("2.17", "2.18"), ("3.0", "2.30")] {
        let e = Version::parse(given).unwrap_err().to_string();
        assert!(e.contains(&format!("nearest it models is {nearest}")) && !e.contains('\n'), "{e}");
    }
}

#[test]
fn tree_simple_and_the_network_steps_change_at_2_23() {
    // tuning.cc v2.22.3-1: tree/Simple base 0 + 2 x (7 x 28 + 1 x 28) = 448 us; v2.23.4-1:
    // 8.4 + 2 x (7 x 4.0 + 1 x 14) = 92.4 us.
    assert!(close(model(&comm(Version::V2_22), Coll::AllReduce, Algo::Tree, Proto::Simple).0, 448.0));
    assert!(close(model(&comm(Version::V2_23), Coll::AllReduce, Algo::Tree, Proto::Simple).0, 92.4));
    // Ring/Simple all-reduce, 30 steps at max(3.4, 3 x 1): 2.22 crosses the network 2 x 2 = 4
    // times (8.4 + 26 x 3.4 + 4 x 14 = 152.8 us), 2.23 2 x (2 - 1) = 2 (8.4 + 28 x 3.4 + 2 x 14).
    assert!(close(model(&comm(Version::V2_22), Coll::AllReduce, Algo::Ring, Proto::Simple).0, 152.8));
    assert!(close(model(&comm(Version::V2_23), Coll::AllReduce, Algo::Ring, Proto::Simple).0, 131.6));
    // One GPU a node, ring LL all-reduce (2 steps): 2.22 takes the ring's network LL latency, 2.7,
    // on 4 network steps: 6.6 + (2 - 4) x max(0.6, 1) + 4 x 2.7 = 15.4 us; 2.23 the tree's, 5.0,
    // on 2: 6.6 + 0 + 2 x 5.0 = 16.6 us.
    let one = |v| Comm { ranks: 2, graph_channels: 2, ..comm(v) };
    assert!(close(model(&one(Version::V2_22), Coll::AllReduce, Algo::Ring, Proto::Ll).0, 15.4));
    assert!(close(model(&one(Version::V2_23), Coll::AllReduce, Algo::Ring, Proto::Ll).0, 16.6));
    // Ring LL128 with one GPU a node keeps 0.7 of 2 x 12 GB/s to 2.22, 0.92 from 2.23 (under
    // perChMaxRingLL128Bws' 2 x 20): algbw x 2 / 2.
    assert!(close(model(&one(Version::V2_22), Coll::AllReduce, Algo::Ring, Proto::Ll128).1, 24.0 * 0.7));
    assert!(close(model(&one(Version::V2_23), Coll::AllReduce, Algo::Ring, Proto::Ll128).1, 24.0 * 0.92));
}

#[test]
fn releases_whose_files_differ_only_elsewhere_choose_alike() {
    // 2.22.3 is 2.21.5 and 2.24.3 is 2.23.4 for every algorithm and protocol here (their
    // tuning.cc diffs touch the ring back-up, PAT's 0.75 and the mixed-CPU row only); 2.26.6 is
    // 2.25.1 (PAT's compute capability only).
    for (a, b) in [(Version::V2_21, Version::V2_22), (Version::V2_23, Version::V2_24), (Version::V2_25, Version::V2_26)] {
        for c in [comm(a), Comm { ranks: 2, graph_channels: 2, ..comm(a) }, Comm { nodes: 1, ranks: 8, ..comm(a) }] {
            for algo in [Algo::Ring, Algo::Tree] {
                for proto in [Proto::Ll, Proto::Ll128, Proto::Simple] {
                    let x = tuning::model(&c, Coll::AllReduce, algo, proto);
                    let y = tuning::model(&Comm { version: b, ..c.clone() }, Coll::AllReduce, algo, proto);
                    assert_eq!(format!("{x:?}"), format!("{y:?}"), "{a:?}/{b:?} {algo:?}/{proto:?}");
                }
            }
        }
    }
}

#[test]
fn pat_enters_the_table_at_2_23_and_needs_sm60_from_2_26() {
    assert!(!Version::V2_22.pat_on(80) && Version::V2_23.pat_on(80) && Version::V2_29.pat_on(90));
    // tuning.cc `ncclPatEnable`: "Need SM60 or higher for CUDA atomics", v2.26.2-1 on.
    assert!(Version::V2_25.pat_on(52) && !Version::V2_26.pat_on(52));
}

/// One Hopper node of 8 GPUs: the NVLS graph's 8 heads at 40 GB/s intra, 80 inter (the search
/// raises it on one node).
fn nvls_node(version: Version) -> Comm {
    Comm { cc: 90, nodes: 1, ranks: 8, nvls_heads: 8, nvls_bw_intra: 40.0, nvls_bw_inter: 80.0, ..comm(version) }
}

#[test]
fn nvls_gather_and_the_nvls_model_follow_the_release() {
    let ag = |v| model(&nvls_node(v), Coll::AllGather, Algo::Nvls, Proto::Simple).1;
    // 2.22.3: 8 x min(40, 80) x 5/6 (the ratio applies to all but CollNet's gathers).
    assert!(close(ag(Version::V2_22), 8.0 * 40.0 * 5.0 / 6.0));
    // 2.23.4 to 2.26.6: only the ring converts a gather: 8 x 40 = 320 GB/s.
    assert!(close(ag(Version::V2_23), 320.0) && close(ag(Version::V2_26), 320.0));
    // 2.27.7: 8 x min(40 x 7/8, 80 x 0.9) = 8 x 35 = 280 GB/s.
    assert!(close(ag(Version::V2_27), 280.0));
    // 2.28.9: 8 x min(40 x 0.85 x 7/8 x 7/8, 80) = 208.25 GB/s, no ratio.
    assert!(close(ag(Version::V2_28), 208.25));
    // All-reduce: 2.27.7 8 x min(40, 80) x 5/6; 2.28.9 8 x min(40 x 0.85 x 7/8 x 2, 80) x 8/14;
    // both at NVLink's 25 us.
    let (lat27, bw27) = model(&nvls_node(Version::V2_27), Coll::AllReduce, Algo::Nvls, Proto::Simple);
    let (lat28, bw28) = model(&nvls_node(Version::V2_28), Coll::AllReduce, Algo::Nvls, Proto::Simple);
    assert!(close(bw27, 8.0 * 40.0 * 5.0 / 6.0) && close(bw28, 8.0 * 59.5 * 8.0 / 14.0), "{bw27} {bw28}");
    assert!(close(lat27, 25.0) && close(lat28, 25.0));
}

#[test]
fn nvls_tree_takes_the_new_model_and_20_9_us_at_2_28() {
    // 2 x 8 Hopper: NVLS graph 16 heads, 40 GB/s intra, 25 inter; the plugin's 75 us.
    let two = |v| Comm { cc: 90, nvls_heads: 16, nvls_bw_intra: 40.0, nvls_bw_inter: 25.0, net_latency: 75.0, ..comm(v) };
    // 2.27.7: 25 + 2 x 1 x (14 + 2 x 75) = 353 us; 16 x min(40, 25) x 5/6.
    let (lat, bw) = model(&two(Version::V2_27), Coll::AllReduce, Algo::NvlsTree, Proto::Simple);
    assert!(close(lat, 353.0) && close(bw, 16.0 * 25.0 * 5.0 / 6.0), "{lat} {bw}");
    // 2.28.9: 25 + 2 x (20.9 + 150) = 366.8 us; 16 x min(40 x 0.85 x 15/16 x 2, 2 x 25, 57.7)
    // = 16 x 50 = 800 GB/s of bus, x 16 / 30.
    let (lat, bw) = model(&two(Version::V2_28), Coll::AllReduce, Algo::NvlsTree, Proto::Simple);
    assert!(close(lat, 366.8) && close(bw, 800.0 * 16.0 / 30.0), "{lat} {bw}");
}

/// NVLS-tree on one head a node (one NIC: rev27 finding 5): NCCL's "NVLS/NVLStree needs at least
/// 2 channels" is first in v2.28.3-1 tuning.cc; to 2.27.3 busBw = nChannels x bw, so one head runs:
/// 2.27.7 1 x min(40, 25) x 5/6 on two nodes; 2.28.9 drops it.
#[test]
fn nvls_tree_on_one_head_runs_before_2_28() {
    let one = |v| Comm { cc: 90, nvls_heads: 1, nvls_bw_intra: 40.0, nvls_bw_inter: 25.0, net_latency: 75.0, ..comm(v) };
    for v in [Version::V2_19, Version::V2_24, Version::V2_27] {
        let (_, bw) = model(&one(v), Coll::AllReduce, Algo::NvlsTree, Proto::Simple);
        assert!(close(bw, 25.0 * 5.0 / 6.0), "{v:?}: {bw}");
    }
    assert!(tuning::model(&one(Version::V2_28), Coll::AllReduce, Algo::NvlsTree, Proto::Simple).is_none());
    assert!(tuning::model(&Comm { nvls_heads: 0, ..one(Version::V2_27) }, Coll::AllReduce, Algo::NvlsTree, Proto::Simple).is_none());
}

#[test]
fn maxchannels_and_the_hopper_doubling_change_at_2_25() {
    // device.h MAXCHANNELS: 32 to 2.24.3, 64 from 2.25.1; 24 ring channels doubled: 32 or 48.
    assert_eq!(tuning::coll_channels(Version::V2_24, 80, 1, 24, 20.0), 32);
    assert_eq!(tuning::coll_channels(Version::V2_25, 80, 1, 24, 20.0), 48);
    // connect.cc: `minCompCap == 90` to 2.24.3, `>= 90` from 2.25.1: 2 Blackwell nodes, 4 ring
    // channels at 50 GB/s: 8, doubled again to 16 from 2.25.
    assert_eq!(tuning::coll_channels(Version::V2_24, 100, 2, 4, 50.0), 8);
    assert_eq!(tuning::coll_channels(Version::V2_25, 100, 2, 4, 50.0), 16);
    assert_eq!(tuning::coll_channels(Version::V2_24, 90, 2, 4, 50.0), 16);
}

#[test]
fn ll128_lists_change_at_2_25_and_go_at_2_27() {
    // `switch (minCompCap)`: 7.0, 8.0, 9.0 to 2.24.3; 10.0 and 12.0 added in 2.25.1; gone in 2.27.3.
    assert!(!Version::V2_24.ll128_on(100) && Version::V2_25.ll128_on(100) && Version::V2_25.ll128_on(120));
    assert!(!Version::V2_26.ll128_on(86) && Version::V2_27.ll128_on(86) && Version::V2_27.ll128_on(89));
    let a40 = |v| Comm { cc: 86, nodes: 1, ranks: 2, ..comm(v) };
    assert!(tuning::model(&a40(Version::V2_26), Coll::AllReduce, Algo::Ring, Proto::Ll128).is_none());
    assert!(tuning::model(&a40(Version::V2_27), Coll::AllReduce, Algo::Ring, Proto::Ll128).is_some());
}

/// 2 x 8 Blackwell GPUs on NVLink, 16 channels of 60 GB/s (the tree's 80 inside a node).
fn blackwell(version: Version) -> Comm {
    Comm { cc: 100, bw_intra: 60.0, tree_bw_intra: 80.0, ..comm(version) }
}

#[test]
fn blackwell_tables_follow_the_release() {
    // Ring LL128 on two nodes: 16 x 60 x 0.92 = 883.2 GB/s of bus under perChMaxRingLL128Bws'
    // Blackwell two-node figure x 16: 73.4 (2.25.1-2.27.7: twice Hopper's) leaves it, 34.6
    // (2.28.9) caps it at 553.6, 40 (2.29.7) at 640; algbw x 16 / 30.
    let ll128 = |v| model(&blackwell(v), Coll::AllReduce, Algo::Ring, Proto::Ll128).1;
    assert!(close(ll128(Version::V2_27), 883.2 * 16.0 / 30.0));
    assert!(close(ll128(Version::V2_28), 553.6 * 16.0 / 30.0));
    assert!(close(ll128(Version::V2_29), 640.0 * 16.0 / 30.0));
    // Tree/Simple on one node: 16 x 80 x 0.92 = 1177.6 under 16 x 77.4 (2.27.7), capped at
    // 16 x 70 = 1120 (2.28.9); algbw x 0.5.
    let one = |v| Comm { nodes: 1, ranks: 8, ..blackwell(v) };
    assert!(close(model(&one(Version::V2_27), Coll::AllReduce, Algo::Tree, Proto::Simple).1, 588.8));
    assert!(close(model(&one(Version::V2_28), Coll::AllReduce, Algo::Tree, Proto::Simple).1, 560.0));
    // NVLS-tree on four nodes, 8 heads at 80 intra, 60 inter: min(80 x 0.74 x 7/8 x 2, 60, cap)
    // with perChMaxNVLSTreeBws' 43.8 (2.28.9, 2.29.7) or 80 (2.30.7); bus x 8, algbw x 32 / 62.
    let four = |v| Comm { nodes: 4, ranks: 32, nvls_heads: 8, nvls_bw_intra: 80.0, nvls_bw_inter: 60.0, ..blackwell(v) };
    let nvt = |v| model(&four(v), Coll::AllReduce, Algo::NvlsTree, Proto::Simple).1;
    assert!(close(nvt(Version::V2_29), 8.0 * 43.8 * 32.0 / 62.0));
    assert!(close(nvt(Version::V2_30), 8.0 * 60.0 * 32.0 / 62.0));
    // NVLS channels (transport/nvls.cc): 32 on Blackwell to 2.26.6, 24 on one node from 2.27.3.
    let net = versions::NvlsNet { ppn: 8, bw: 48.0, pxb: true };
    assert_eq!(Version::V2_26.nvls_channels(100, 1, net), 32);
    assert_eq!(Version::V2_27.nvls_channels(100, 1, net), 24);
    assert_eq!(Version::V2_27.nvls_channels(100, 2, net), 32);
    assert_eq!(Version::V2_24.nvls_channels(90, 1, net), 16);
}

#[test]
fn blackwell_is_refused_before_2_25() {
    let machine = crate::topology::Machine::load("hgx-b200").unwrap();
    let mut comm = super::Comm::new(&machine, &[machine.gpus()], None).unwrap();
    let given = |v: &str| super::constants::split(&[("nccl_version".into(), v.into())]).unwrap().0;
    let e = comm.set_constants(given("2.24")).unwrap_err().to_string();
    assert!(e.contains("nccl_version") && e.contains("2.24.3") && e.contains("2.25") && !e.contains('\n'), "{e}");
    comm.set_constants(given("2.25")).unwrap();
    comm.set_constants(given("2.26")).unwrap();
}

#[test]
fn p2p_rules_change_at_2_25_and_2_29() {
    // paths.cc `ncclTopoPathAllNVLink`: the smallest path over GPU pairs to 2.24.3, the largest
    // from 2.25.1.
    assert!(!Version::V2_24.nvl_chunk_needs_every_pair() && Version::V2_25.nvl_chunk_needs_every_pair());
    // A network peer through one NIC of 50 GB/s, 16 ranks, 32 p2p channels: 2.28.9 takes
    // max(1 NIC, 2) = 2; 2.29.7 max(1, ceil(50 / 14)) = 4.
    assert_eq!(p2p::net_peer(Version::V2_28, 1, 50.0, 16, 32), 2);
    assert_eq!(p2p::net_peer(Version::V2_29, 1, 50.0, 16, 32), 4);
    // Per peer across 2 nodes of 64 ranks with 16 p2p channels: 2.28.9 keeps 8; 2.29.7 halves
    // while 8 x ceil(64 / 8) > 16: 8 -> 4 -> 2.
    assert_eq!(p2p::per_peer(Version::V2_28, 8, 2, 64, 16), 8);
    assert_eq!(p2p::per_peer(Version::V2_29, 8, 2, 64, 16), 2);
    // paths.cc `ncclTopoCheckP2p`: `int p2pLevel = PATH_SYS` to 2.22.3, `PATH_PXB` from 2.23.4.
    assert!(!Version::V2_22.p2p_level_pxb_by_default() && Version::V2_23.p2p_level_pxb_by_default());
    // An NVB peer gets NVLink's channels in 2.30.7 only.
    assert!(!Version::V2_29.nvb_channels_as_nvlink() && Version::V2_30.nvb_channels_as_nvlink());
}

#[test]
fn nvls_runs_on_two_gpus_of_a_node_from_2_28() {
    // transport/nvls.cc `ncclNvlsInit`: `gpuCount <= 2` leaves NVLS off to 2.28.3, `< 2` from
    // 2.28.7 (2.28 runs as 2.28.9). Two Hopper GPUs of an NVSwitch node: NVLS's 2 heads at 40 GB/s intra, 80 inter.
    let pair = |v| Comm { ranks: 2, nvls_heads: 2, ..nvls_node(v) };
    assert!(tuning::model(&pair(Version::V2_27), Coll::AllReduce, Algo::Nvls, Proto::Simple).is_none());
    // 2.28.9: 2 x min(40 x 0.85 x 1/2 x 2, 80) = 68 GB/s of bus, x 2 / 2 for two ranks.
    assert!(close(model(&pair(Version::V2_28), Coll::AllReduce, Algo::Nvls, Proto::Simple).1, 68.0));
    // Three GPUs: on under both.
    let three = |v| Comm { ranks: 3, nvls_heads: 3, ..nvls_node(v) };
    assert!(tuning::model(&three(Version::V2_21), Coll::AllReduce, Algo::Nvls, Proto::Simple).is_some());
}
