//! NCCL_P2P_LEVEL below a pair NCCL's P2P transport would join (NCCL_P2P_DISABLE=1 is LOC): NCCL
//! diverts every pair beyond the level through the CPU nearest the receiver in its graph
//! (graph/paths.cc `ncclTopoComputePaths`, `addInterStep`, v2.18.5-1 to v2.30.7-1), searches its
//! rings on those paths, and connects the pairs by SHM (`Topo::through_cpus`, `Comm::at_level`).
//! Expected graphs are NCCL's planning figures of the machine files' links: a PCIe Gen4 x16 link is
//! 24 GB/s (PCI_BW 12 per Gen3 x16), a Gen5 x16 48, a socket link its file's figure.

use super::shm_tests::TWO_SOCKETS;
use super::*;
use crate::topology::Machine;
use topo::PathType::{Loc, Nvl, Phb, Sys};

/// A path's type and NCCL bandwidth (GB/s, to 0.01: PCIe figures are scaled from lane rates).
fn typed(p: Option<&topo::Path>) -> (topo::PathType, f64) {
    p.map(|p| (p.kind, (p.bw * 100.0).round() / 100.0)).unwrap()
}

fn with_level(comm: &mut Comm, level: Option<topo::PathType>) {
    comm.set_constants(constants::Constants { p2p_level: level, ..Default::default() }).unwrap();
}

/// On `TWO_SOCKETS` (Intel, the socket link 20 GB/s and not peer-capable): under LOC a switch pair
/// goes up to its socket's root complex and back down (PHB, 24 GB/s: the GPU links and the uplink),
/// a pair across the sockets through the receiver's root complex (SYS, 20 GB/s, as before). The
/// ring 0 1 2 3 then stores two ranks' steps up each switch's uplink (0 -> 1, 1 -> 2) and loads two
/// down it: 2 s <= 24, one ring at 12 GB/s (two rings at 6 carry no more; NCCL keeps the first),
/// where the default's ring (PIX pairs inside the switches) is bound by the socket link: 20 GB/s.
/// Given no more, the default's graph returns.
#[test]
fn a_level_below_the_switch_pairs_sends_them_through_the_cpu() {
    let m = Machine::from_text(TWO_SOCKETS, "two-sockets.yaml").unwrap();
    let d = |n: &str| m.device(n).unwrap();
    let mut comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    with_level(&mut comm, None);
    assert_eq!((comm.ring_graph, comm.graph.kind, comm.graph_level), ((1, 20.0), Sys, None));
    for level in [Loc, Nvl] {
        with_level(&mut comm, Some(level));
        let p = |i: usize, j: usize| comm.topo.paths[i][j].as_ref();
        assert_eq!((typed(p(0, 1)), p(0, 1).unwrap().cpu, p(0, 1).unwrap().hops.len()), ((Phb, 24.0), Some(d("RC0")), 4));
        assert_eq!((typed(p(0, 2)), p(0, 2).unwrap().cpu, p(0, 2).unwrap().hops.len()), ((Sys, 20.0), Some(d("RC1")), 5));
        assert_eq!((comm.ring_graph, comm.graph.kind, comm.graph_level), ((1, 12.0), Sys, Some(level)));
        assert!(!comm.tuning.nvlink);
        // Every step through the receiver's socket memory.
        for a in ["GPU0", "GPU1", "GPU2", "GPU3"] {
            for b in ["GPU0", "GPU1", "GPU2", "GPU3"].into_iter().filter(|&b| b != a) {
                let mem = if ["GPU0", "GPU1"].contains(&b) { "MEM0" } else { "MEM1" };
                assert_eq!(comm.shm().get(&(d(a), d(b))), Some(&d(mem)), "{a} -> {b}");
            }
        }
    }
    with_level(&mut comm, None);
    assert_eq!((comm.ring_graph, comm.graph.kind, comm.graph_level, comm.shm().len()), ((1, 20.0), Sys, None, 8));
}

/// NCCL_P2P_DISABLE=1 on `dgx-a100` (AMD, two sockets joined at 16 GB/s, each with two Gen4
/// switches of two GPUs): every pair through the receiver's socket, PHB inside a socket (24 GB/s)
/// and SYS across (16). Each ring stores both GPUs' steps of a switch up its uplink: 2 s <= 24, so
/// one ring at 12 GB/s, crossing the sockets once each way (12 <= 16), of type SYS and not NVLink
/// (PCI latencies, no LL128). NVL leaves every pair P2P: the NVSwitch graph is kept.
#[test]
fn p2p_disabled_on_an_nvswitch_node_rings_through_the_hosts_pcie() {
    let m = Machine::load("dgx-a100").unwrap();
    let mut comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    with_level(&mut comm, None);
    let nvswitch = comm.ring_graph;
    with_level(&mut comm, Some(Nvl));
    assert_eq!((comm.ring_graph, comm.graph_level, comm.shm().len()), (nvswitch, None, 0));
    with_level(&mut comm, Some(Loc));
    assert_eq!((comm.ring_graph, comm.graph.kind, comm.tuning.nvlink), ((1, 12.0), Sys, false));
    assert_eq!(comm.shm().len(), 56);
    let kinds: Vec<(topo::PathType, f64)> = (1..8).map(|j| typed(comm.topo.paths[0][j].as_ref())).collect();
    assert_eq!(kinds, [(Phb, 24.0), (Phb, 24.0), (Phb, 24.0), (Sys, 16.0), (Sys, 16.0), (Sys, 16.0), (Sys, 16.0)]);
}

/// NCCL_P2P_DISABLE=1 on `pcie-8gpu-ws` (Intel, one Gen5 switch of four GPUs per socket, the
/// socket link 22 GB/s): the PIX pairs become PHB through the socket's root complex (24 GB/s, the
/// GPUs' Gen4 links). A ring stores the four GPUs' steps of a switch up its Gen5 uplink: 4 s <= 48,
/// one ring at 12 GB/s, where the default's is bound by the socket link at NCCL's 20.
#[test]
fn p2p_disabled_on_a_pcie_switch_box_shares_each_uplink_among_its_gpus() {
    let m = Machine::load("pcie-8gpu-ws").unwrap();
    let mut comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    with_level(&mut comm, None);
    assert_eq!(comm.ring_graph, (1, 20.0));
    with_level(&mut comm, Some(Loc));
    assert_eq!((comm.ring_graph, comm.graph.kind), ((1, 12.0), Sys));
    assert_eq!(typed(comm.topo.paths[0][1].as_ref()), (Phb, 24.0));
}

/// all_reduce of 256 MiB under NCCL_P2P_DISABLE=1, maxmin and packet: each switch's uplink carries
/// the stores of its GPUs' ring steps up and their loads down, so a ring's rate, and so the bus
/// bandwidth, is at most the uplink's rate over its GPUs (`dgx-a100`: 2 per Gen4 x16 uplink;
/// `pcie-8gpu-ws`: 4 per Gen5 x16 uplink), the busiest resource of every channel; NCCL's per-step
/// latencies and the legs' hand-offs take the rest (80 % of the bound or more).
#[test]
fn p2p_disabled_all_reduce_runs_at_the_uplinks_share() {
    for (machine, sharers) in [("dgx-a100", 2.0), ("pcie-8gpu-ws", 4.0)] {
        let m = Machine::load(machine).unwrap();
        let mut comm = Comm::new(&m, &[m.gpus()], None).unwrap();
        with_level(&mut comm, Some(Loc));
        let bytes = 256u64 << 20;
        for model in ["maxmin", "packet"] {
            let call = comm.call(Coll::AllReduce, Algo::Ring, Proto::Simple, bytes, 0);
            let ran = run(&comm.m, &call, model, &[], true).unwrap();
            let busbw = bytes as f64 / ran.seconds * 2.0 * 7.0 / 8.0;
            for (name, _, capacity) in &ran.bottlenecks {
                let bound = capacity / sharers;
                assert!(name.starts_with("SW") && name.contains("→RC"), "{machine} {model}: {name}");
                assert!(busbw <= bound && busbw >= 0.8 * bound, "{machine} {model}: busbw {:.2} GB/s, bound {:.2}", busbw / 1e9, bound / 1e9);
            }
        }
    }
}

/// Across two `dgx-a100` nodes under NCCL_P2P_DISABLE=1 a ring leaves the node, so its steps are
/// not lowered as SHM legs (`lower::shm`); each step between two GPUs of a node still goes through
/// the receiver's host memory (NCCL's SHM transport), never over the NVLinks NCCL no longer uses.
#[test]
fn a_ring_across_nodes_steps_through_host_memory_inside_each_node() {
    let text = "name: two\nfabric:\n  graph: {switches: [{name: S0}], links: [], hosts: [S0, S0]}\nlink: {bandwidth: 25GB/s}\nnodes: {count: 2, machine: \"dgx-a100\"}\n";
    let m = Machine::from_text(text, "two.yaml").unwrap();
    let node = |k: usize| m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    let mut comm = Comm::new(&m, &[node(0), node(1)], None).unwrap();
    with_level(&mut comm, Some(Loc));
    let call = comm.call(Coll::AllReduce, Algo::Ring, Proto::Simple, 64 << 20, 0);
    let (transfers, _) = lower::lower_within(&call, lower::MAX_TRANSFERS);
    let prefix = |d: usize| node_prefix(&comm.m.devices[d].name).to_string();
    let inside: Vec<&crate::workload::Transfer> = transfers
        .iter()
        .filter(|t| comm.m.devices[t.src].kind == crate::topology::DeviceKind::Gpu && comm.m.devices[t.dst].kind == crate::topology::DeviceKind::Gpu)
        .filter(|t| prefix(t.src) == prefix(t.dst))
        .collect();
    assert!(!inside.is_empty());
    for t in inside {
        assert_eq!(t.via, [comm.shm()[&(t.src, t.dst)]], "{} -> {}", comm.m.devices[t.src].name, comm.m.devices[t.dst].name);
    }
}

/// NCCL_P2P_LEVEL=NVL on `dgx1-p100` (hybrid cube mesh): the 24 pairs NCCL joins through an
/// intermediate GPU (NVB) are above the level, so NCCL diverts them through the receiver's CPU and
/// connects them by SHM, no longer through a GPU; the rings, on direct NVLinks only, are the
/// default's (4 rings at 18 GB/s, NVL; NCCL runs 8 channels on them).
#[test]
fn nvl_level_on_the_cube_mesh_diverts_only_the_nvb_pairs() {
    let m = Machine::load("dgx1-p100").unwrap();
    let mut comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    with_level(&mut comm, None);
    let (rings, nvb) = (comm.ring_graph, comm.nvb.len());
    assert_eq!((rings, nvb), ((4, 18.0), 24));
    with_level(&mut comm, Some(Nvl));
    assert_eq!((comm.ring_graph, comm.graph.kind, comm.nvb.len(), comm.shm().len()), ((4, 18.0), Nvl, 0, 24));
}
