//! NCCL's NVB paths (PATH_NVB: two NVLink hops through an intermediate GPU, graph/paths.cc
//! `ncclTopoSetPaths`) and its P2P/indirect transport over them (transport/p2p.cc
//! P2P_INTERMEDIATE), on DGX-1's hybrid cube mesh: GPUs 0-3 and 4-7 are two fully joined quads,
//! and GPU i is joined to GPU i+4, one NVLink each (NCCL's 18 GB/s a P100 link, topo.h
//! SM60_NVLINK_BW). Every expected figure follows from that wiring and NCCL's rules.

use super::topo::{PathType, Topo};
use super::*;
use crate::flow::router::Router;
use crate::topology::Machine;

fn topo_of(m: &Machine, gpus: &[&str]) -> Topo {
    let ids: Vec<usize> = gpus.iter().map(|g| m.device(g).unwrap()).collect();
    Topo::new(m, &Router::new(m), &ids)
}

#[test]
fn a_pair_without_nvlink_is_nvb_through_the_first_common_neighbour_of_the_destination() {
    let m = Machine::load("dgx1-p100").unwrap();
    let all: Vec<String> = (0..8).map(|k| format!("GPU{k}")).collect();
    let t = topo_of(&m, &all.iter().map(|s| s.as_str()).collect::<Vec<_>>());
    let g = |k: usize| m.device(&format!("GPU{k}")).unwrap();
    // GPU0 -> GPU5: common neighbours 1 and 4; NCCL's search from GPU5 meets its links in
    // order (4, 6, 7 in its quad, then 1): through GPU4. GPU5 -> GPU0: GPU0's links are 1, 2,
    // 3, then 4: through GPU1. Either path is one P100 link's 18 GB/s.
    let p = t.paths[0][5].as_ref().unwrap();
    assert_eq!((p.kind, p.via, p.hops.len(), p.bw), (PathType::Nvb, Some(g(4)), 2, 18.0));
    assert_eq!(t.paths[5][0].as_ref().unwrap().via, Some(g(1)));
    assert_eq!(t.paths[0][1].as_ref().unwrap().kind, PathType::Nvl);
    // 24 ordered pairs of 56 are NVB (3 non-neighbours per GPU), none worse.
    let nvb = t.paths.iter().flatten().flatten().filter(|p| p.kind == PathType::Nvb).count();
    assert_eq!((nvb, t.type_range()), (24, (PathType::Nvl, PathType::Nvb)));
    // NCCL's topology holds the communicator's GPUs only: GPU0 and GPU5 alone have no NVLink
    // path (their PCIe path crosses QPI: SYS).
    let two = topo_of(&m, &["GPU0", "GPU5"]);
    assert_eq!(two.paths[0][1].as_ref().unwrap().kind, PathType::Sys);
}

#[test]
fn the_ring_search_takes_nvb_paths_where_nvlink_alone_closes_no_ring() {
    // GPUs 0, 4, 5, 6: GPU0's only NVLink peer among them is GPU4, so every ring through GPU0
    // takes an NVB path (6 -> 0 or 5 -> 0 through GPU4); NCCL's search moves from NVL to NVB
    // before any PCIe type and keeps a P100 link's 18 GB/s. Before, the ring crossed QPI (SYS).
    let m = Machine::load("dgx1-p100").unwrap();
    let t = topo_of(&m, &["GPU0", "GPU4", "GPU5", "GPU6"]);
    let g = topo::search(&t).unwrap();
    assert_eq!((g.kind, g.bw), (PathType::Nvb, 18.0));
}

/// nccl-tests alltoall on 8 P100s, 1 GiB: each rank sends S = 128 MiB to every rank. Under
/// NCCL's intermediate choice every NVB path starts on the sender's link to GPU i+-4, then one
/// link inside the destination's quad (the destination's quad-mates come first in its links).
/// So GPU i's link to GPU i+-4 carries its direct S and its three NVB sends: 4 S, the most of any
/// directed link (a quad link carries 2 S). Time 4 S / 18 GB/s = 29.83 ms; busbw = 8 S / t x 7/8
/// = 31.5 GB/s. Before, the 24 NVB pairs were staged through host memory over QPI (10.97 GB/s).
#[test]
fn alltoall_on_the_hybrid_cube_mesh_is_bound_by_nccls_nvb_routes() {
    let m = Machine::load("dgx1-p100").unwrap();
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    for (model, bytes) in [("maxmin", 1u64 << 30), ("packet", 64 << 20)] {
        let call = comm.call(Coll::AllToAll, Algo::Ring, Proto::Simple, bytes, 0);
        assert!(call.nvb.len() == 24, "{}", call.nvb.len());
        let t = run(&comm.m, &call, model, &[], false).unwrap().seconds;
        let s = bytes as f64 / 8.0;
        let want = 4.0 * s / 18e9;
        assert!((t / want - 1.0).abs() < 0.03, "{model}: {} us, want {} us", t * 1e6, want * 1e6);
    }
}

/// One GPU per node: NCCL's search starts typeIntra at PATH_LOC and one GPU needs no path, so its
/// graph says LOC (NCCL's log: "type LOC/..."), not NVL (qa21 R18).
#[test]
fn one_gpu_rings_are_loc() {
    let m = Machine::load("dgx1-p100").unwrap();
    let g = topo::search(&topo_of(&m, &["GPU3"])).unwrap();
    assert_eq!(g.kind.name(), "LOC");
}
