//! Send/receive split as NCCL splits it (`p2p`), with every expected number worked out from
//! NCCL's rules (enqueue.cc, paths.cc, init.cc) and the machine's links.

use super::versions::Version;
use super::*;
use crate::topology::Machine;

/// `nodes` copies of a preset on one switch, each NIC at `nic` (as `contend nccl-tests --nodes`).
fn cluster(machine: &str, nodes: usize, nic: &str) -> Machine {
    let hosts = vec!["S0"; nodes].join(", ");
    let text = format!(
        "name: c\nfabric:\n  graph: {{switches: [{{name: S0}}], links: [], hosts: [{hosts}]}}\nlink: {{bandwidth: {nic}}}\nnodes: {{count: {nodes}, machine: \"{machine}\", nic_bandwidth: {nic}}}\n"
    );
    Machine::from_text(&text, "c").unwrap()
}

fn comm_of(m: &Machine, nodes: usize) -> Comm {
    let node = |k: usize| m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    let groups: Vec<Vec<usize>> = if nodes == 1 { vec![m.gpus()] } else { (0..nodes).map(node).collect() };
    Comm::new(m, &groups, None).unwrap()
}

#[test]
fn before_2_20_an_operation_on_one_node_takes_at_most_4_x_p2p_channels_over_ranks() {
    // NCCL 2.18.3-2.19 enqueue.cc `scheduleP2pTasksToPlan`, on one node: the most channels an
    // operation takes is the per-peer count halved while it x ranks exceeds 4 x the p2p channels:
    // 32 x 8 = 256 > 128, so 16. The 8 NVSwitch A100s' 512 MiB and 1 GiB run on 16, not 32;
    // 128 and 256 MiB as in 2.30 (8 and 16).
    for v in [Version::V2_18, Version::V2_19] {
        let one = p2p::op_split(v, 32, 32, 8, 1, 1 << 19);
        assert_eq!((one.min, one.max), (4, 16));
        let ch = |bytes: u64| p2p::op_channels(bytes, &one);
        assert_eq!([ch(128 << 20), ch(256 << 20), ch(512 << 20), ch(1 << 30)], [8, 16, 16, 16]);
    }
    assert_eq!(p2p::op_split(Version::V2_20, 32, 32, 8, 1, 1 << 19).max, 32);
    // Across nodes neither bound is cut before 2.20, and a part is at least 1/8 of a chunk: 16
    // ranks and 4 per peer on 32 start from all 4 (2.20: from 2, with parts of half a chunk).
    let old = p2p::op_split(Version::V2_19, 4, 32, 16, 2, 1 << 17);
    assert_eq!((old.min, old.max, old.min_part, old.max_part), (4, 4, 1 << 14, 1 << 17));
    let new = p2p::op_split(Version::V2_20, 4, 32, 16, 2, 1 << 17);
    assert_eq!((new.min, new.max, new.min_part), (2, 4, 1 << 16));
    assert_eq!([p2p::op_channels(64 << 10, &old), p2p::op_channels(64 << 10, &new)], [4, 1]);
}

#[test]
fn an_operation_gets_more_channels_as_it_grows() {
    // One NVSwitch node of 8 ranks, 32 p2p channels and 32 per peer: every rank's operation fits
    // at once on 32 / 8 = 4 channels; a part may hold 32 chunks of 512 KiB (16 MiB), so the
    // channels double while the parts are larger: 128 MiB on 8, 256 MiB on 16, then 32 at most.
    let split = |v: Version, per_peer, ranks, nodes, chunk| p2p::op_split(v, per_peer, 32, ranks, nodes, chunk);
    let one = split(Version::V2_30, 32, 8, 1, 1 << 19);
    let ch = |bytes: u64| p2p::op_channels(bytes, &one);
    assert_eq!([ch(128 << 20), ch(256 << 20), ch(512 << 20), ch(1 << 30)], [8, 16, 32, 32]);
    // Small: parts of at least 1/8 of a chunk (64 KiB): 64 KiB on one channel, 1 MiB on 4.
    assert_eq!([ch(64 << 10), ch(1 << 20)], [1, 4]);
    // Across nodes a part holds one chunk (128 KiB) and is at least half of one: 16 ranks and 4
    // channels per peer on 32 start from 2, and 64 MiB doubles to all 4.
    let two = split(Version::V2_30, 4, 16, 2, 1 << 17);
    assert_eq!([p2p::op_channels(64 << 20, &two), p2p::op_channels(64 << 10, &two)], [4, 1]);
    // A network connection's chunk: a quarter below one chunk, half below eight.
    assert_eq!(
        [p2p::op_chunk(100_000, 1 << 17, true), p2p::op_chunk(1 << 19, 1 << 17, true), p2p::op_chunk(1 << 19, 1 << 17, false)],
        [1 << 15, 1 << 16, 1 << 17]
    );
}

#[test]
fn the_communicator_counts_nccl_s_channels_and_chunk() {
    // dgx-a100: a peer through the NVSwitch has 12 NVLink 3 links at NCCL's 20 GB/s each: 2 x 12
    // = 24 channels, rounded up to 32; the communicator's 24 channels give 32 p2p channels; every
    // pair on NVLink on one node: NCCL_P2P_NVL_CHUNKSIZE, 512 KiB (4 MiB buffers / 8 steps allow it).
    let m = Machine::load("dgx-a100").unwrap();
    let c = comm_of(&m, 1);
    assert_eq!((c.p2p_per_peer(), c.p2p_total()), (32, 32));
    assert_eq!(p2p::chunk(1, c.all_nvlink, c.constants.buffsize), 1 << 19);
    // A PCIe pair, or 1 MiB buffers, give 128 KiB.
    assert_eq!((p2p::chunk(1, false, 4 << 20), p2p::chunk(1, true, 1 << 20)), (1 << 17, 1 << 17));
    // Two hgx-h100 at 50 GB/s a NIC: a network peer gets, by release, 2 (2.19: NCCL_NCHANNELS_
    // PER_NET_PEER), max(1 NIC, 2) = 2 (2.21), max(1 NIC, ceil(50 / 14)) = 4 (2.30); fewer than any
    // NVLink peer's, so the communicator's; 2.30 keeps 4 since 4 x ceil(16 ranks / 8) <= 32.
    let m = cluster("hgx-h100", 2, "50GB/s");
    let mut c = comm_of(&m, 2);
    let mut got = Vec::new();
    for v in [versions::Version::V2_19, versions::Version::V2_21, versions::Version::V2_30] {
        c.tuning.version = v;
        got.push(c.p2p_per_peer());
    }
    assert_eq!(got, [2, 2, 4]);
    assert_eq!(p2p::chunk(2, c.all_nvlink, c.constants.buffsize), 1 << 17);
}

#[test]
fn sendrecv_runs_on_the_channels_its_size_gets() {
    let m = Machine::load("dgx-a100").unwrap();
    let c = comm_of(&m, 1);
    let mut old = comm_of(&m, 1);
    old.tuning.version = Version::V2_19;
    // 2.30 and 2.19 (which takes at most 16 on this node, `p2p::op_split`).
    for (c, wants) in [(&c, [8, 16, 32]), (&old, [8, 16, 16])] {
        for (bytes, want) in [128u64 << 20, 256 << 20, 1 << 30].into_iter().zip(wants) {
            let call = c.call(Coll::SendRecv, Algo::Ring, Proto::Simple, bytes, 0);
            let (t, ch) = lower::lower(&call);
            let used = ch.iter().max().map_or(0, |&x| x as usize + 1);
            assert_eq!(used, want, "{bytes} B");
            // Every rank sends its whole buffer once.
            assert_eq!(t.iter().map(|x| x.size).sum::<u64>(), 8 * bytes);
        }
    }
}

#[test]
fn a_network_send_pays_the_nic_latency_once_not_per_chunk() {
    // The proxy keeps NCCL_STEPS chunks in flight, so a 64 MiB send/receive across two nodes
    // pays a NIC's per-message latency L about once (the first chunks'), not once per chunk in
    // turn: its time grows by L, well under 2 L, sent from the GPU's own NIC or relayed by PXN.
    // L is small enough that a slot's round trip (the chunk out and the receiver's word back,
    // 2 L) takes less than its NCCL_STEPS chunks take through the NIC (8 x 128 KiB of each of the
    // NIC's two connections at 25 GB/s: 84 us), so the slots never hold a chunk back.
    let l = 20e-6;
    for pxn in [false, true] {
        let time = |lat: f64| {
            let mut m = cluster("dgx-a100", 2, "25GB/s");
            m.devices.iter_mut().filter(|d| d.kind == DeviceKind::Nic).for_each(|d| d.latency = lat);
            let mut c = comm_of(&m, 2);
            c.constants.pxn_disable = !pxn;
            // The NIC's message latency alone: A100s also flush each received step at it (its own
            // test, `a_simple_step_from_another_node_waits_for_the_gdr_flush`).
            c.flush = 0.0;
            // Without the channels' own rate: the pairs inside a node, on the communicator's 2
            // channels per peer at 12 GB/s each, would take longer than the pair across nodes.
            let mut call = c.call(Coll::SendRecv, Algo::Ring, Proto::Simple, 64 << 20, 0);
            call.rate = None;
            run(&c.m, &call, "maxmin", &[], false).unwrap().seconds
        };
        let (with, without) = (time(l), time(0.0));
        assert!(with - without > 0.9 * l && with - without < 1.5 * l, "PXN {pxn}: {with} s with L, {without} s without");
    }
}

#[test]
fn a_network_connection_moves_nccl_steps_chunks_per_round_trip() {
    // Round 19. NCCL's receiving proxy posts a receive only for a slot its kernel has released
    // (net.cc `recvProxyProgress`), and the sender writes only once that receive has told it
    // where (net_ib.cc `ncclIbIsend` waits for the FIFO slot `ncclIbPostFifo` writes). So chunk
    // k + NCCL_STEPS of a connection leaves one message after chunk k arrived. A 4 MiB
    // send/receive across two dgx-a100 runs on the 2 p2p channels a network peer gets, 2 MiB each:
    // 16 chunks of 128 KiB a connection (no loop merged), 8 in flight. With a NIC latency L far
    // above the NIC's time for them (16 chunks of its two connections at 25 GB/s: 84 us), chunks
    // 9-16 leave L after chunks 1-8 arrived, and arrive L later: L shows three times (out, back,
    // out) where chunks in flight without the word back showed it once.
    let l = 200e-6;
    for pxn in [false, true] {
        let time = |lat: f64| {
            let mut m = cluster("dgx-a100", 2, "25GB/s");
            m.devices.iter_mut().filter(|d| d.kind == DeviceKind::Nic).for_each(|d| d.latency = lat);
            let mut c = comm_of(&m, 2);
            c.constants.pxn_disable = !pxn;
            c.flush = 0.0;
            let mut call = c.call(Coll::SendRecv, Algo::Ring, Proto::Simple, 4 << 20, 0);
            call.rate = None;
            run(&c.m, &call, "maxmin", &[], false).unwrap().seconds
        };
        let grown = (time(l) - time(0.0)) / l;
        assert!((grown - 3.0).abs() < 0.1, "PXN {pxn}: the call grows by {grown} L");
    }
}

#[test]
fn a_trees_network_slot_is_freed_once_the_receiver_has_forwarded_its_chunk() {
    // Round 21. NCCL's kernel posts a received step's head only after the step's copy, its
    // forward of the chunk, is done (prims_simple.h `genericOp`), and the receiving proxy posts a
    // slot's receive only once that head has passed it (net.cc `recvProxyProgress`), so a slot
    // reopens one message after the receiver's forward, not after the chunk's arrival. A tree
    // all-reduce on two hgx-h100 (16 channels, no GDR flush on Hopper), 128 MiB: 8 MiB a channel,
    // 16 chunks of NCCL's 512 KiB Simple step, no loop merged. By hand, with a NIC latency L far
    // above every chunk's time: up chunks 0-7 leave at once and arrive at L; the root forwards
    // each down as it arrives (arriving 2 L), which is when it is done with it; up chunk 8's slot
    // reopens one word (L) after that, 3 L; it arrives 4 L and comes down by 5 L. Freed on the
    // chunk's arrival (round 19) it left at 2 L and the call took 4 L.
    let l = 20e-3;
    let time = |lat: f64| {
        let mut m = cluster("hgx-h100", 2, "50GB/s");
        m.devices.iter_mut().filter(|d| d.kind == DeviceKind::Nic).for_each(|d| d.latency = lat);
        let c = comm_of(&m, 2);
        run(&c.m, &c.call(Coll::AllReduce, Algo::Tree, Proto::Simple, 128 << 20, 0), "maxmin", &[], false).unwrap().seconds
    };
    let grown = (time(l) - time(0.0)) / l;
    assert!((grown - 5.0).abs() < 0.05, "the call grows by {grown} L");
}

#[test]
fn nvls_tree_pays_the_nic_latency_once_each_way() {
    // NVLS-tree on two hgx-h100: each head's chunks go up to the other node and back down over the
    // network; each connection keeps NCCL_STEPS chunks in flight, so a NIC latency L delays the
    // call by about one L up and one L down (the pipeline's fill), not once per chunk or merged
    // loop in turn: under 3 L (a latency far above a chunk's time, 100 µs, so that it shows, and
    // below what a head's NCCL_STEPS chunks take, so that a slot's round trip never holds one
    // back: `a_network_connection_moves_nccl_steps_chunks_per_round_trip`).
    let l = 100e-6;
    let time = |lat: f64| {
        let mut m = cluster("hgx-h100", 2, "50GB/s");
        m.devices.iter_mut().filter(|d| d.kind == DeviceKind::Nic).for_each(|d| d.latency = lat);
        let c = comm_of(&m, 2);
        run(&c.m, &c.call(Coll::AllReduce, Algo::NvlsTree, Proto::Simple, 256 << 20, 0), "maxmin", &[], false).unwrap().seconds
    };
    let (with, without) = (time(l), time(0.0));
    assert!(with - without > 0.9 * l && with - without < 3.0 * l, "{with} s with L, {without} s without");
}

#[test]
fn a_shared_buffer_operation_keeps_sixteen_chunks_in_flight() {
    // NCCL_SHARED_STEPS = 16 over the operation's channels, NCCL_STEPS = 8 at most a channel.
    assert_eq!([p2p::net_depth(1), p2p::net_depth(2), p2p::net_depth(4), p2p::net_depth(16), p2p::net_depth(32)], [8, 8, 4, 1, 1]);
}

#[test]
fn a_send_inside_a_node_pays_its_path_latency_once_not_per_chunk() {
    // Inside a node a connection keeps NCCL_STEPS chunks in flight too (the peer's buffer has that
    // many slots), so a path's latency delays a 64 MiB send/receive (512 chunks of 128 KiB over
    // PCIe, merged to a dozen loops a channel) about as much as a one-chunk send: once, not once
    // a chunk or a merged loop in turn (a chain would pay it about 12 times).
    let l = 100e-6;
    let time = |lat: f64, bytes: u64| {
        let mut m = Machine::load("pcie-8gpu-ws").unwrap();
        m.links.iter_mut().for_each(|k| k.latency = lat);
        let g = m.gpus();
        let c = Comm::new(&m, &[vec![g[0], g[1]]], None).unwrap();
        run(&c.m, &c.call(Coll::SendRecv, Algo::Ring, Proto::Simple, bytes, 0), "maxmin", &[], false).unwrap().seconds
    };
    let one = time(l, 64 << 10) - time(0.0, 64 << 10);
    let big = time(l, 64 << 20) - time(0.0, 64 << 20);
    assert!(one > 0.5 * l, "the path pays a latency: {one} s");
    assert!(big < 1.5 * one, "64 MiB pays {big} s of latency, one chunk {one} s");
}

#[test]
fn a_send_inside_a_node_moves_a_channel_at_the_tree_s_per_channel_figure() {
    // Each channel's block copies its part at half NCCL's one-node `perChMaxTreeBws` (Ampere
    // 24 GB/s: 12 GB/s), the tree's per-transfer figure: on 8 NVSwitch A100s under 2.19, 128 MiB
    // on 8 channels moves 96 GB/s and 1 GiB on 16 moves 192 GB/s, under the NVLink's 240 GB/s
    // (12 links at NCCL's 20 GB/s); under 2.30, 1 GiB on 32 channels is the link's again.
    let m = Machine::load("dgx-a100").unwrap();
    let rate = 0.5 * tuning::PER_CH_MAX_TREE_BW[1][0] * 1e9;
    let time = |v: Version, bytes: u64| {
        let mut c = comm_of(&m, 1);
        c.tuning.version = v;
        run(&c.m, &c.call(Coll::SendRecv, Algo::Ring, Proto::Simple, bytes, 0), "maxmin", &[], false).unwrap().seconds
    };
    for (bytes, channels) in [(128u64 << 20, 8.0), (1 << 30, 16.0)] {
        let want = bytes as f64 / (channels * rate);
        let got = time(Version::V2_19, bytes);
        assert!(got > want && got < 1.02 * want, "{bytes} B: {got} s, {want} s at {channels} channels");
    }
    let link = (1u64 << 30) as f64 / 240e9;
    let got = time(Version::V2_30, 1 << 30);
    assert!(got > link && got < 1.02 * link, "1 GiB under 2.30: {got} s, the link's {link} s");
}

#[test]
fn a_send_on_hopper_or_blackwell_moves_half_a_blocks_copy_rate_a_channel() {
    // Round 24. Without registered buffers a channel's block copies each byte twice, the send into
    // the peer's FIFO and the receive out of its own (sendrecv.h, prims_simple.h `loadRecvConn`),
    // so a channel moves half one block's measured copy rate, 47 GB/s: 23.5 GB/s. On 8 B200s under
    // 2.30, 64 MiB runs on 4 channels, 128 MiB on 8 and 256 MiB on 16 (`p2p::op_split`: a part of
    // at most 32 chunks of 512 KiB): each takes 64 MiB / (4 x 23.5 GB/s) = 713.9 us of copying; the
    // rest is the call's latency, a few us. The B200's 16 channels move 376 GB/s, under its
    // NVLink's; on 8 H100s 64 and 128 MiB (8 channels, 188 GB/s) the same, while 16 channels
    // would reach the H100's NVLink.
    for (name, sizes) in [("hgx-b200", [64u64 << 20, 256 << 20]), ("hgx-h100", [64 << 20, 128 << 20])] {
        let m = Machine::load(name).unwrap();
        let c = comm_of(&m, 1);
        let want = (64u64 << 20) as f64 / (4.0 * 23.5e9);
        for bytes in sizes {
            let got = run(&c.m, &c.call(Coll::SendRecv, Algo::Ring, Proto::Simple, bytes, 0), "maxmin", &[], false).unwrap().seconds;
            assert!(got > want && got < want + 15e-6, "{name} {bytes} B: {got} s, {want} s of copying");
        }
    }
}

/// 8 A40s joined in pairs by NVLink bridges (a40x8-nv4): GPU0-1 is NVL, GPU0-2 is not (PCIe).
/// NCCL's p2p chunk is NVLink's when `ncclTopoPathAllNVLink` holds (init.cc `computeBuffSizes`):
/// in 2.18.5-2.24.3 (paths.cc) it takes the smallest path type over GPU pairs (`minPath >=
/// PATH_PIX ? 0 : 1`): one NVLink pair is enough, 512 KiB; from 2.25.1 the largest
/// (`ncclTopoGetGpuMaxPath`): a PCIe pair gives 128 KiB. 4 MiB buffers over 8 steps allow 512 KiB.
#[test]
fn the_nvlink_p2p_chunk_needs_one_nvlink_pair_before_2_25_and_every_pair_after() {
    // The file draws no host memory, which NCCL's SHM transport between the sockets needs
    // (`shm_tests::shm_without_host_memory_names_the_pair_and_the_fix`): one is added under each CPU.
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/validation/machines/a40x8-nv4.yaml")).unwrap();
    let text = text.replace("devices:\n", "devices:\n  - {name: MEM0, kind: host_memory}\n  - {name: MEM1, kind: host_memory}\n")
        + "  - {a: CPU0, b: MEM0, kind: memory, bandwidth: 100GB/s}\n  - {a: CPU1, b: MEM1, kind: memory, bandwidth: 100GB/s}\n";
    let m = Machine::from_text(&text, "a40x8-nv4-mem.yaml").unwrap();
    let mut c = comm_of(&m, 1);
    let mut got = Vec::new();
    for v in versions::ALL {
        c.tuning.version = v;
        got.push(c.p2p_chunk());
    }
    // 2.18 to 2.24 (seven releases), then 2.25 to 2.30 (six).
    assert_eq!(got, [[1 << 19; 7].as_slice(), [1 << 17; 6].as_slice()].concat());
    // GPU0 and GPU1 alone: every pair NVLink under every release.
    let pair = Comm::new(&m, &[vec![m.device("GPU0").unwrap(), m.device("GPU1").unwrap()]], None).unwrap();
    assert_eq!(pair.p2p_chunk(), 1 << 19);
}

/// Three A100s in a chain, two NVLink 3 links a hop (NCCL's SM80 figure, 20 GB/s a link: 40 GB/s
/// a path): GPU0-2 is NVB through GPU1 at 40 GB/s. paths.cc `ncclTopoGetNchannels` gives an NVL
/// peer 2 x floor(40 / 20) = 4 channels, and an NVB peer the same only in 2.30.7 (`PATH_NVL ||
/// PATH_NVB`, "NVB uses NVLink"); 2.18.5 to 2.30.4 test `PATH_NVL` alone, so the NVB peer gets 2
/// and the communicator's least (per peer) is 2.
#[test]
fn an_nvb_peer_gets_nvlink_channels_in_2_30_7_only() {
    let text = "name: chain\ndevices:\n  - {name: RC0, kind: root_complex}\n  - {name: GPU0, kind: gpu, model: NVIDIA A100-SXM4-80GB}\n  - {name: GPU1, kind: gpu, model: NVIDIA A100-SXM4-80GB}\n  - {name: GPU2, kind: gpu, model: NVIDIA A100-SXM4-80GB}\nlinks:\n  - {a: GPU0, b: GPU1, kind: nvlink, count: 2, bandwidth: 25GB/s}\n  - {a: GPU1, b: GPU2, kind: nvlink, count: 2, bandwidth: 25GB/s}\n  - {a: RC0, b: GPU0, kind: pcie, gen: 4, lanes: 16}\n  - {a: RC0, b: GPU1, kind: pcie, gen: 4, lanes: 16}\n  - {a: RC0, b: GPU2, kind: pcie, gen: 4, lanes: 16}\n";
    let m = Machine::from_text(text, "chain.yaml").unwrap();
    let mut c = comm_of(&m, 1);
    let p = c.topo.paths[0][2].as_ref().unwrap();
    assert_eq!((p.kind, p.bw), (topo::PathType::Nvb, 40.0));
    assert!(c.p2p_total() >= 4, "{}", c.p2p_total());
    let mut got = Vec::new();
    for v in versions::ALL {
        c.tuning.version = v;
        got.push(c.p2p_per_peer());
    }
    // 2.18 to 2.29 (twelve releases), then 2.30.
    assert_eq!(got, [[2; 12].as_slice(), [4].as_slice()].concat());
}

/// qa27's wrong answer 6: an alltoall row whose per-peer count is 0 (8-64 B on 8 GPUs: nccl-tests
/// rounds each peer's part down to 16 bytes) printed 0.00 us under every release. Before 2.28
/// nccl-tests issues grouped ncclSend/ncclRecv (src/alltoall.cu), which NCCL runs at 0 bytes as
/// one proxy step on one channel (v2.30.7 enqueue.cc `addP2pToPlan`; v2.21.5 `taskAppend`
/// discards count 0 only for collectives): every pair pays the p2p kernel's base and one step,
/// ring Simple's 8.4 us and NVLink's 3.4 us (tuning.cc baseLat, hwLat), and the step's flag
/// crosses the pair's path (GPU to NVSwitch to GPU: its latency as a kernel pays it), all pairs at once. From 2.28 it calls ncclAlltoAll, a collective NCCL discards: 0. Send/receive is grouped
/// ncclSend/ncclRecv under every release (src/sendrecv.cu).
#[test]
fn zero_count_alltoall_takes_a_launch_before_2_28() {
    let m = Machine::load("hgx-h100").unwrap();
    // The path's own latency as a kernel's store pays it (`Plan::kernel_latency`: its hops, no copy-engine setup).
    let (g0, g1) = (m.gpus()[0], m.gpus()[1]);
    let path = crate::flow::router::Router::new(&m).plan(g0, g1, None, &[], true).unwrap().kernel_latency;
    let empty_us = 8.4 + 3.4 + path * 1e6;
    assert!(path < 1e-6, "{path}");
    let run = |op: &str, v: &str| {
        let r = tests_tool::Request { params: vec![("nccl_version".into(), v.into())], ..tests_tool::Request::sweep(op, "8", "128") };
        crate::api::nccl_tests("hgx-h100", &r, 1, None).unwrap()
    };
    for v in ["2.18", "2.21", "2.26"] {
        let rep = run("alltoall", v);
        let zero: Vec<&tests_tool::Row> = rep.rows.iter().filter(|r| r.count == 0).collect();
        assert_eq!(zero.len(), 4, "{v}: 8, 16, 32 and 64 B");
        for r in zero {
            assert!((r.time_us - empty_us).abs() < 1e-4, "{v}: {} B at {} us, not {empty_us}", r.size, r.time_us);
        }
        assert!(rep.notes.iter().any(|n| n.contains("grouped ncclSend/ncclRecv of 0 bytes")), "{v}: {:?}", rep.notes);
        // A row with data takes longer than its empty step.
        assert!(rep.rows.last().unwrap().time_us > empty_us);
    }
    for v in ["2.28", "2.30"] {
        let rep = run("alltoall", v);
        assert!(rep.rows.iter().filter(|r| r.count == 0).all(|r| r.time_us == 0.0), "{v}");
    }
    // A collective of 0 elements is discarded under every release.
    assert_eq!(run("all_gather", "2.21").rows.iter().filter(|r| r.count == 0).map(|r| r.time_us).sum::<f64>(), 0.0);
    // Send/receive of 2 bytes is 0 floats: the same empty step under every release.
    for v in ["2.21", "2.30"] {
        let r = tests_tool::Request { params: vec![("nccl_version".into(), v.into())], ..tests_tool::Request::one("sendrecv", "2") };
        let row = crate::api::nccl_tests("hgx-h100", &r, 1, None).unwrap().rows.remove(0);
        assert!(row.count == 0 && (row.time_us - empty_us).abs() < 1e-4, "{v}: {}", row.time_us);
    }
}
