//! NCCL's steps through host memory (its SHM transport, where two GPUs have no peer path, or CUDA's
//! peer access is off) cost what NCCL's kernels pay: they store into the mapped host buffer and the
//! reader's kernel loads from it, so a step pays NCCL's per-step latency and its path's hops, not
//! the copy engines' setup nor the CPU's hand-off of a staged cudaMemcpy (NCCL 2.30.7
//! src/transport/shm.cc). Expected times are the definition: base + steps × per-step latency +
//! the bytes over the bandwidth.

use super::*;
use crate::topology::Machine;

/// Two sockets, two GPUs under each socket's PCIe switch, one host memory each. The host memory's
/// hand-off (12 µs) and the GPUs' copy-engine setup (5 µs) are written, to show NCCL's kernels pay
/// neither; every hop's latency is zero, so the latency is NCCL's alone.
pub(super) const TWO_SOCKETS: &str = "name: two-sockets
devices:
  - {name: RC0, kind: root_complex, latency: 0s}
  - {name: RC1, kind: root_complex, latency: 0s}
  - {name: SW0, kind: pcie_switch}
  - {name: SW1, kind: pcie_switch}
  - {name: MEM0, kind: host_memory, latency: 12us}
  - {name: MEM1, kind: host_memory, latency: 12us}
  - {name: GPU0, kind: gpu, latency: 5us}
  - {name: GPU1, kind: gpu, latency: 5us}
  - {name: GPU2, kind: gpu, latency: 5us}
  - {name: GPU3, kind: gpu, latency: 5us}
links:
  - {a: RC0, b: SW0, kind: pcie, gen: 4, lanes: 16, latency: 0s}
  - {a: RC1, b: SW1, kind: pcie, gen: 4, lanes: 16, latency: 0s}
  - {a: SW0, b: GPU0, kind: pcie, gen: 4, lanes: 16, latency: 0s}
  - {a: SW0, b: GPU1, kind: pcie, gen: 4, lanes: 16, latency: 0s}
  - {a: SW1, b: GPU2, kind: pcie, gen: 4, lanes: 16, latency: 0s}
  - {a: SW1, b: GPU3, kind: pcie, gen: 4, lanes: 16, latency: 0s}
  - {a: RC0, b: MEM0, kind: memory, bandwidth: 100GB/s, latency: 0s}
  - {a: RC1, b: MEM1, kind: memory, bandwidth: 100GB/s, latency: 0s}
  - {a: RC0, b: RC1, kind: upi, bandwidth: 20GB/s, latency: 0s}
";

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want
}

fn time(params: &[(String, String)], proto: Proto, bytes: u64) -> f64 {
    let m = Machine::from_text(TWO_SOCKETS, "two-sockets.yaml").unwrap();
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    let call = comm.call(Coll::AllReduce, Algo::Ring, proto, bytes, 0);
    assert_eq!(call.channels(), 1, "8 B runs on one channel");
    run(&comm.m, &call, "maxmin", params, false).unwrap().seconds
}

#[test]
fn a_ring_step_through_host_memory_pays_nccl_step_not_a_staged_copy() {
    // 4 ranks: 2(n - 1) = 6 steps, each at NCCL's PCI per-step latency for ring LL (1.0 µs,
    // tuning.cc hwLat[NCCL_HW_PCI]), after the ring LL base latency (6.6 µs, baseLat). The ring
    // crosses the sockets twice (GPU1 -> GPU2 and GPU3 -> GPU0), through host memory; 8 B as LL
    // is 16 wire bytes, nanoseconds at these links' rates.
    let want = 6.6e-6 + 6.0 * 1.0e-6;
    let got = time(&[], Proto::Ll, 8);
    assert!(close(got, want, 0.01), "ring LL over SHM: {} us, want {} us", got * 1e6, want * 1e6);
    // With CUDA's peer access off every pair is staged, the pairs under one switch too (NCCL
    // takes SHM): the same steps at the same cost.
    let off = time(&[("p2p".into(), "off".into())], Proto::Ll, 8);
    assert!(close(off, want, 0.01), "peer access off: {} us, want {} us", off * 1e6, want * 1e6);
    // Simple: base 8.4 µs, 6 steps at 5.7 µs (hwLat PCI ring Simple).
    let want = 8.4e-6 + 6.0 * 5.7e-6;
    let got = time(&[], Proto::Simple, 8);
    assert!(close(got, want, 0.01), "ring Simple over SHM: {} us, want {} us", got * 1e6, want * 1e6);
}

#[test]
fn a_staged_cuda_copy_still_pays_the_engines_and_the_hand_off() {
    // The same path moved by a copy engine (cudaMemcpy between GPUs without peer access): both
    // engines' setup (5 µs each) and the host's hand-off (12 µs) before any byte moves.
    let m = Machine::from_text(TWO_SOCKETS, "two-sockets.yaml").unwrap();
    let r = crate::flow::router::Router::new(&m);
    let (g1, g2) = (m.device("GPU1").unwrap(), m.device("GPU2").unwrap());
    let p = r.plan(g1, g2, None, &[], true).unwrap();
    assert_eq!(p.mechanism, crate::workload::Mechanism::Staged);
    assert!(close(p.latency, 22e-6, 1e-9), "{}", p.latency);
    // NCCL's kernels pay neither: they start no copy engine and no CPU hands their steps on (in
    // a rank program too, where the machine keeps its engines' setup for the MPI copies).
    assert!(p.kernel_latency.abs() < 1e-15, "{}", p.kernel_latency);
}

/// Two GPUs under one PCIe switch, each on a Gen3 x16 link at its data-sheet rate (efficiency 1:
/// 8 GT/s x 128/130 x 16 lanes / 8 = 15.75 GB/s each way), host memory and the switch's uplink far
/// wider; `p2p` says whether CUDA's peer access is on. Every latency zero.
fn pair(p2p: bool) -> Machine {
    let text = format!(
        "name: shm-pair
devices:
  - {{name: RC0, kind: root_complex, latency: 0s}}
  - {{name: SW0, kind: pcie_switch}}
  - {{name: MEM0, kind: host_memory, latency: 0s}}
  - {{name: GPU0, kind: gpu}}
  - {{name: GPU1, kind: gpu}}
links:
  - {{a: RC0, b: MEM0, kind: memory, bandwidth: 1000GB/s, latency: 0s}}
  - {{a: RC0, b: SW0, kind: pcie, gen: 5, lanes: 16, latency: 0s}}
  - {{a: SW0, b: GPU0, kind: pcie, gen: 3, lanes: 16, efficiency: 1.0, latency: 0s, p2p: {p2p}}}
  - {{a: SW0, b: GPU1, kind: pcie, gen: 3, lanes: 16, efficiency: 1.0, latency: 0s, p2p: {p2p}}}
"
    );
    Machine::from_text(&text, "shm-pair.yaml").unwrap()
}

#[test]
fn a_step_through_host_memory_streams_slot_by_slot_at_the_links_rate() {
    // NCCL's SHM connection keeps NCCL_STEPS slots in host memory: the sender's kernel stores a
    // slice, the receiver's kernel loads it once the tail flag says so, and the next slice is being
    // stored meanwhile, so the two legs overlap and nothing is staged whole in host memory (NCCL
    // 2.30.7 src/transport/shm.cc, "via SHM/direct"). A broadcast of 8 MiB from GPU0 (one hop,
    // chunks of NCCL_BUFFSIZE / NCCL_STEPS = 512 KiB, Simple) then takes NCCL's base and step
    // latency and the bytes over the narrower GPU link, as over a peer path: no chunk's fill.
    let bytes: u64 = 8 << 20;
    let link = 8e9 * 128.0 / 130.0 * 16.0 / 8.0;
    for p2p in [false, true] {
        let m = pair(p2p);
        let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
        let call = comm.call(Coll::Broadcast, Algo::Ring, Proto::Simple, bytes, 0);
        let want = call.base + call.step + bytes as f64 / (link * call.efficiency[Proto::Simple as usize]);
        let got = run(&comm.m, &call, "maxmin", &[], false).unwrap().seconds;
        assert!(close(got, want, 0.01), "peer access {p2p}: {} us, want {} us", got * 1e6, want * 1e6);
    }
    // The fill is a copy engine's (a staged cudaMemcpy fills a chunk in host memory before its
    // second copy starts), charged per transfer to copies only: given `staging_chunk`, NCCL's steps
    // still stream, in `contend nccl-tests` and in rank programs alike, while a copy of 512 KiB
    // between the same GPUs takes its 256 KiB fill more over the link.
    let m = pair(false);
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    let call = comm.call(Coll::Broadcast, Algo::Ring, Proto::Simple, bytes, 0);
    let fill = |chunk: &str| vec![("staging_chunk".to_string(), chunk.to_string())];
    let given = run(&comm.m, &call, "maxmin", &fill("256KiB"), false).unwrap().seconds;
    let none = run(&comm.m, &call, "maxmin", &fill("0B"), false).unwrap().seconds;
    assert_eq!(given, none, "NCCL's steps pay no staging fill");
    let (g0, g1) = (m.device("GPU0").unwrap(), m.device("GPU1").unwrap());
    let copy = |kernel: bool, chunk: &str| {
        let t = crate::workload::Transfer { src: g0, dst: g1, size: 512 << 10, kernel, ..Default::default() };
        let w = crate::workload::Workload { transfers: vec![t], origin: "copy".into(), ..Default::default() };
        let prepared = crate::model::registry::get("maxmin").unwrap().prepare(&m, &w, &fill(chunk)).unwrap();
        crate::sim::run_prepared(&w, prepared.as_ref(), false).unwrap().makespan()
    };
    let extra = copy(false, "256KiB") - copy(false, "0B");
    assert!(close(extra, (256 << 10) as f64 / link, 0.01), "a copy's fill: {} us", extra * 1e6);
    assert_eq!(copy(true, "256KiB"), copy(true, "0B"), "a kernel's transfer pays none");
}

/// `pair(false)` with the switch's uplink written: its PCIe generation, at its data-sheet rate.
fn pair_under(uplink_gen: u32) -> Machine {
    let text = format!(
        "name: shm-pair
devices:
  - {{name: RC0, kind: root_complex, latency: 0s}}
  - {{name: SW0, kind: pcie_switch}}
  - {{name: MEM0, kind: host_memory, latency: 0s}}
  - {{name: GPU0, kind: gpu}}
  - {{name: GPU1, kind: gpu}}
links:
  - {{a: RC0, b: MEM0, kind: memory, bandwidth: 1000GB/s, latency: 0s}}
  - {{a: RC0, b: SW0, kind: pcie, gen: {uplink_gen}, lanes: 16, efficiency: 1.0, latency: 0s}}
  - {{a: SW0, b: GPU0, kind: pcie, gen: 3, lanes: 16, efficiency: 1.0, latency: 0s, p2p: false}}
  - {{a: SW0, b: GPU1, kind: pcie, gen: 3, lanes: 16, efficiency: 1.0, latency: 0s, p2p: false}}
"
    );
    Machine::from_text(&text, "shm-pair.yaml").unwrap()
}

/// Seconds of a two-rank ring call of `bytes` on `m` under maxmin with `duplex_staged` = `delta`
/// and no read requests, its latency (NCCL's base and per-step figures) set to zero so that the
/// time is the bytes' alone; with Simple's efficiency.
fn two_ranks(m: &Machine, coll: Coll, bytes: u64, delta: f64) -> (f64, f64) {
    let comm = Comm::new(m, &[m.gpus()], None).unwrap();
    let mut call = comm.call(coll, Algo::Ring, Proto::Simple, bytes, 0);
    (call.base, call.step) = (0.0, 0.0);
    let params = vec![
        ("duplex_staged".to_string(), delta.to_string()),
        ("read_request".to_string(), "0".to_string()),
        ("kernel_read_request".to_string(), "0".to_string()),
    ];
    let got = run(&comm.m, &call, "maxmin", &params, false).unwrap().seconds;
    (got, call.efficiency[Proto::Simple as usize])
}

#[test]
fn a_two_gpu_all_gather_through_host_memory_stores_then_loads() {
    // Two ranks' all_gather through host memory (NCCL 2.30.7 shm.cc: the buffer is host memory
    // mapped into both GPUs). The ring kernel runs a chunk's send (`directCopySend`: the rank's
    // kernel stores its chunk into the SHM slots) and then its receive (`directRecv`: it loads the
    // peer's chunk from them) one after the other in one thread block (src/device/all_gather.h),
    // the next chunk's send after that receive; a load waits for the peer's store of its slot, so
    // the ranks keep in step. Each GPU link carries its stores up, then its loads down, never both
    // at once: the staged duplex loss (charged to the other direction) binds nothing. A rank
    // stores S/2 and loads S/2, one after the other.
    let bytes: u64 = 64 << 20;
    let link = 8e9 * 128.0 / 130.0 * 16.0 / 8.0;
    // A Gen5 uplink is wide enough for both ranks' stores (and loads): the GPU links bind, each
    // way in turn at the link's rate: S/2 / link + S/2 / link, whatever δ.
    for delta in [0.66, 0.3] {
        let (got, e) = two_ranks(&pair_under(5), Coll::AllGather, bytes, delta);
        let want = bytes as f64 / (e * link);
        assert!(close(got, want, 0.001), "δ {delta}: {} us, want {} us", got * 1e6, want * 1e6);
    }
    // Behind one Gen3 uplink (the 2-GPU AutoDL box's layout) the two ranks' stores share its
    // upstream direction, then their loads its downstream: each phase 2 × S/2 over the link, 2S /
    // link in all, so busbw (S/2 a rank over the time) is link / 4: the box's plateau by hand
    // (docs/validation.md, round 17), where one transfer carrying a step's store and load at once
    // gave link / 2.12.
    for delta in [0.66, 0.3] {
        let (got, e) = two_ranks(&pair_under(3), Coll::AllGather, bytes, delta);
        let want = 2.0 * bytes as f64 / (e * link);
        assert!(close(got, want, 0.001), "δ {delta}: {} us, want {} us", got * 1e6, want * 1e6);
    }
}

#[test]
fn a_two_gpu_all_reduce_through_host_memory_loads_and_stores_each_slice_at_once_in_its_middle_step() {
    // Two ranks' ring all_reduce runs three primitives a chunk in one thread block (NCCL 2.30.7
    // src/device/all_reduce.h): `directSend` (stores only), `directRecvReduceCopyDirectSend`
    // (loads the peer's chunk, stores the sum) and `directRecv` (loads only). The middle one works
    // slice by slice (Simple: two slices a chunk, SLICESTEPS 2 of CHUNKSTEPS 4), each slice one
    // `reduceCopy` whose threads load a pack and store its sum at once, the next slice after the
    // slice's barrier and flags (prims_simple.h `genericOp`): a slice's load and store move
    // together (round 21; before, a slice was loaded whole, then stored while the next was
    // loaded). Where the GPU links bind (a Gen5 uplink: each GPU's link its own, as on the stock
    // RTX 4090 box, whose GPUs hang off root complexes of their own), the middle primitive's store
    // goes up while its load comes down, each GPU link taking the staged duplex loss, link / (1 + δ)
    // each way (flow/charges.rs); the rest moves one way at the link's rate. A rank's step is S/2;
    // per byte of it: 1 (stores), then 1 + δ (the middle), then 1 (loads): 3 + δ.
    let bytes: u64 = 64 << 20;
    let link = 8e9 * 128.0 / 130.0 * 16.0 / 8.0;
    for delta in [0.66, 0.3] {
        let (got, e) = two_ranks(&pair_under(5), Coll::AllReduce, bytes, delta);
        let want = (bytes / 2) as f64 * (3.0 + delta) / (e * link);
        assert!(close(got, want, 0.001), "δ {delta}: {} us, want {} us", got * 1e6, want * 1e6);
    }
    // Behind one Gen3 uplink both ranks' legs share it: stores (upstream) 2 × S/2, then the middle
    // primitive's 2 × S/2 each way at once under the uplink's own PCIe duplex loss (0.06, not a GPU
    // link's), then loads 2 × S/2 down: S (1 + 1.06 + 1) / link = 3.06 S / link, busbw (S over the
    // time for two ranks) link / 3.06: 4.07 GB/s at the AutoDL box's 12.44 (measured 4.00; 3.53
    // before, the middle slice by slice in three half-phases).
    for delta in [0.66, 0.3] {
        let (got, e) = two_ranks(&pair_under(3), Coll::AllReduce, bytes, delta);
        let want = bytes as f64 * 3.06 / (e * link);
        assert!(close(got, want, 0.001), "δ {delta}: {} us, want {} us", got * 1e6, want * 1e6);
    }
}

#[test]
fn a_ring_slice_through_host_memory_pays_nccl_step_in_every_loop() {
    // Each Simple slice of a ring step is a handshake (wait for the flag, copy, barrier, post:
    // prims_simple.h `genericOp`, the same code over host memory as over a peer path), charged at
    // NCCL's per-step figure in every loop as a peer-path ring's is (`lower::simple_slices`, round
    // 18; through host memory from round 21): a two-rank all_gather of 64 MiB on `pair_under(5)`
    // runs 2 channels, 16 MiB a rank and channel, 8 loops of NCCL's 2 MiB chunk, each a send of
    // two slices, each slice after the one before: base + 8 × 2 steps + the bytes (S / link:
    // stores, then loads, each GPU on its own link).
    let bytes: u64 = 64 << 20;
    let link = 8e9 * 128.0 / 130.0 * 16.0 / 8.0;
    let m = pair_under(5);
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    let call = comm.call(Coll::AllGather, Algo::Ring, Proto::Simple, bytes, 0);
    assert_eq!(call.channels(), 2, "one ring, duplicated");
    let loops = (bytes / 2 / 2).div_ceil(2 << 20) as f64;
    assert_eq!(loops, 8.0);
    let params = vec![("read_request".to_string(), "0".to_string()), ("kernel_read_request".to_string(), "0".to_string())];
    let got = run(&comm.m, &call, "maxmin", &params, false).unwrap().seconds;
    let e = call.efficiency[Proto::Simple as usize];
    let want = call.base + loops * 2.0 * call.step + bytes as f64 / (e * link);
    assert!(close(got, want, 0.001), "{} us, want {} us", got * 1e6, want * 1e6);
}

#[test]
fn a_copy_and_an_nccl_step_both_ways_through_host_memory_take_one_duplex_charge() {
    // The charge is the staged plan's, in one place (flow/charges.rs): a cudaMemcpy pair both ways
    // (copy engines, no fill given), and the same pair moved by kernels (NCCL's steps, in
    // `contend nccl-tests` and in rank programs alike), each move link / (1 + δ) each way once the
    // links bind; the difference of two sizes leaves the rate alone.
    let m = pair_under(5);
    let link = 8e9 * 128.0 / 130.0 * 16.0 / 8.0;
    let (g0, g1) = (m.device("GPU0").unwrap(), m.device("GPU1").unwrap());
    let both = |kernel: bool, size: u64| {
        let t = |src, dst| crate::workload::Transfer { src, dst, size, kernel, ..Default::default() };
        let w = crate::workload::Workload { transfers: vec![t(g0, g1), t(g1, g0)], origin: "both".into(), ..Default::default() };
        let params = vec![("staging_chunk".to_string(), "0B".to_string()), ("duplex_staged".to_string(), "0.66".to_string())];
        let prepared = crate::model::registry::get("maxmin").unwrap().prepare(&m, &w, &params).unwrap();
        crate::sim::run_prepared(&w, prepared.as_ref(), false).unwrap().makespan()
    };
    let size: u64 = 32 << 20;
    let want = size as f64 / (link / 1.66);
    for kernel in [false, true] {
        let got = both(kernel, 2 * size) - both(kernel, size);
        assert!(close(got, want, 0.001), "kernel {kernel}: {} us, want {} us", got * 1e6, want * 1e6);
    }
}

#[test]
fn a_send_through_host_memory_moves_one_step_at_a_time() {
    // NCCL's p2p kernel runs a connection's Simple steps one after another: each step (the p2p
    // chunk, 128 KiB over PCIe) waits for its flag, is copied, and the warps synchronise before the
    // flag is posted and the next step starts (NCCL 2.30.7 src/device/sendrecv.h `ProtoSimple<1,
    // 1>`, prims_simple.h `genericOp`); through host memory each step pays NCCL's per-step latency
    // (hwLat PCI ring Simple, 5.7 µs), as a ring's slice does, and the receiver loads a step only
    // once its whole store is flagged, while the next is stored (`shm::send`, round 21). Two
    // ranks' sendrecv of S (each rank sends S to the other) on `pair`'s Gen3 GPU links, duplex
    // losses and read requests off so that each GPU link moves S each way at its rate: the channels' steps go in
    // step, the stores up while the step before comes down, so the call takes base + n × step +
    // S / link, n the chunks of one channel's share, and the last step's load after its store:
    // the channels' last chunks once more over the link.
    let bytes: u64 = 16 << 20;
    let link = 8e9 * 128.0 / 130.0 * 16.0 / 8.0;
    let params: Vec<(String, String)> =
        ["duplex_staged", "duplex_pcie", "read_request", "kernel_read_request"].iter().map(|k| (k.to_string(), "0".to_string())).collect();
    let m = pair(false);
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    let call = comm.call(Coll::SendRecv, Algo::Ring, Proto::Simple, bytes, 0);
    let channels = p2p::op_channels(bytes, &call.p2p_split);
    assert_eq!((call.p2p_chunk, channels), (128 << 10, 2), "PCI p2p chunk, two channels a PCIe peer");
    let n = (bytes / channels as u64).div_ceil(call.p2p_chunk) as f64;
    assert_eq!(n, 64.0);
    let e = call.efficiency[Proto::Simple as usize];
    let last = (channels as u64 * call.p2p_chunk) as f64 / (e * link);
    let want = call.base + n * call.step + bytes as f64 / (e * link) + last;
    assert!((call.step - 5.7e-6).abs() < 1e-12, "{}", call.step);
    let got = run(&comm.m, &call, "maxmin", &params, false).unwrap().seconds;
    assert!(close(got, want, 0.001), "through host memory: {} us, want {} us", got * 1e6, want * 1e6);
    // Over a peer path the connection keeps NCCL_STEPS chunks in flight: one step's latency, and
    // the bytes cross once.
    let m = pair(true);
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    let call = comm.call(Coll::SendRecv, Algo::Ring, Proto::Simple, bytes, 0);
    let want = call.base + call.step + bytes as f64 / (e * link);
    let got = run(&comm.m, &call, "maxmin", &params, false).unwrap().seconds;
    assert!(close(got, want, 0.01), "peer path: {} us, want {} us", got * 1e6, want * 1e6);
}

#[test]
fn a_one_step_send_through_host_memory_is_stored_whole_then_loaded() {
    // A send of one step a channel: the sender stores the step into the connection's slot in host
    // memory and posts its tail flag only after the whole step (prims_simple.h `postPeer` after
    // the step's copy and barrier; `ProtoSimple<1, 1>`: the step is one slice), and the receiver
    // loads it only once it sees the flag. So the step crosses each GPU link twice in turn, up
    // and then down: base + step + 2 S / link, where over a peer path it crosses once. 128 KiB
    // each way between `pair`'s GPUs, duplex losses and read requests off.
    let bytes: u64 = 128 << 10;
    let link = 8e9 * 128.0 / 130.0 * 16.0 / 8.0;
    let params: Vec<(String, String)> =
        ["duplex_staged", "duplex_pcie", "read_request", "kernel_read_request"].iter().map(|k| (k.to_string(), "0".to_string())).collect();
    for (p2p, crossings) in [(false, 2.0), (true, 1.0)] {
        let m = pair(p2p);
        let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
        let call = comm.call(Coll::SendRecv, Algo::Ring, Proto::Simple, bytes, 0);
        let channels = p2p::op_channels(bytes, &call.p2p_split) as u64;
        assert!(bytes.div_ceil(channels) <= call.p2p_chunk, "one step a channel");
        let e = call.efficiency[Proto::Simple as usize];
        let want = call.base + call.step + crossings * bytes as f64 / (e * link);
        let got = run(&comm.m, &call, "maxmin", &params, false).unwrap().seconds;
        assert!(close(got, want, 0.001), "peer access {p2p}: {} us, want {} us", got * 1e6, want * 1e6);
    }
}

#[test]
fn a_kernel_load_out_of_host_memory_sends_its_requests_back() {
    // A kernel's store into host memory is a posted write; its load out of host memory (NCCL's
    // receive through its SHM slots) is a read, whose completions carry the data and whose requests
    // cross the other way (`kernel_read_request`, bytes of requests per byte a kernel loads; a copy
    // engine's `read_request`, set far off here, is not it). One GPU storing S into
    // host memory while the other loads S out of it under one Gen3 uplink (`pair_under(3)`, every
    // link at its data-sheet rate, duplex losses off): the uplink's upstream carries the store and
    // the load's requests, S (1 + r) / link, its downstream the load alone. Under `packet`, which
    // charges no read (nor duplex) costs, S / link.
    let m = pair_under(3);
    let link = 8e9 * 128.0 / 130.0 * 16.0 / 8.0;
    let (g0, g1, mem) = (m.device("GPU0").unwrap(), m.device("GPU1").unwrap(), m.device("MEM0").unwrap());
    let both = |model: &str, r: f64, size: u64| {
        let t = |src, dst| crate::workload::Transfer { src, dst, size, kernel: true, ..Default::default() };
        let w = crate::workload::Workload { transfers: vec![t(g0, mem), t(mem, g1)], origin: "legs".into(), ..Default::default() };
        let mut params: Vec<(String, String)> = Vec::new();
        if model == "maxmin" {
            params.push(("kernel_read_request".into(), r.to_string()));
            params.push(("read_request".into(), "0.9".into()));
            params.extend(["duplex_staged", "duplex_pcie"].iter().map(|k| (k.to_string(), "0".to_string())));
        }
        let prepared = crate::model::registry::get(model).unwrap().prepare(&m, &w, &params).unwrap();
        crate::sim::run_prepared(&w, prepared.as_ref(), false).unwrap().makespan()
    };
    let size: u64 = 32 << 20;
    for r in [0.0, 0.047, 0.25] {
        let got = both("maxmin", r, 2 * size) - both("maxmin", r, size);
        let want = size as f64 * (1.0 + r) / link;
        assert!(close(got, want, 0.001), "kernel_read_request {r}: {} us, want {} us", got * 1e6, want * 1e6);
    }
    let got = both("packet", 0.0, 2 * size) - both("packet", 0.0, size);
    assert!(close(got, size as f64 / link, 0.01), "packet: {} us, want {} us", got * 1e6, size as f64 / link * 1e6);
}

#[test]
fn an_shm_connection_s_buffer_is_in_the_receiver_s_host_memory() {
    // NCCL's SHM buffer is allocated on the receiver's side by default (NCCL 2.30.7
    // src/transport/shm.cc: NCCL_SHM_LOCALITY 2, the receiver's proxy allocates it), so between the
    // sockets of `TWO_SOCKETS` the sender's store crosses the socket link and the receiver loads
    // from its own socket's memory: GPU1 -> GPU2 through MEM1, GPU2 -> GPU1 through MEM0. (CUDA's
    // staged copy goes through the sender's, MEM0 for GPU1 -> GPU2.)
    let m = Machine::from_text(TWO_SOCKETS, "two-sockets.yaml").unwrap();
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    let call = comm.call(Coll::AllReduce, Algo::Ring, Proto::Simple, 1 << 20, 0);
    let d = |n: &str| m.device(n).unwrap();
    assert_eq!(call.shm.get(&(d("GPU1"), d("GPU2"))), Some(&d("MEM1")));
    assert_eq!(call.shm.get(&(d("GPU2"), d("GPU1"))), Some(&d("MEM0")));
    let r = crate::flow::router::Router::new(&m);
    assert_eq!(r.plan(d("GPU1"), d("GPU2"), None, &[], true).unwrap().staging, Some(d("MEM0")));
}

#[test]
fn a_kernels_loads_of_host_memory_ask_at_its_request_share_a_copy_engines_at_its_own() {
    // One GPU storing into host memory and loading from it at once (bench/device/host_duplex.cu):
    // the stores' data and the loads' requests share the GPU's upstream direction, the loads' data
    // comes down alone. Max-min raises both at one rate x until the upstream fills:
    // x + r x = link, so each moves link / (1 + r), r the request bytes per byte read. A kernel's
    // loads take `kernel_read_request`, a copy engine's reads `read_request`. No duplex loss here.
    let m = pair_under(3);
    let link = 8e9 * 128.0 / 130.0 * 16.0 / 8.0;
    let (g0, mem) = (m.device("GPU0").unwrap(), m.device("MEM0").unwrap());
    let rate = |kernel: bool, size: u64, given: &[(&str, &str)]| {
        let store = crate::workload::Transfer { src: g0, dst: mem, size, kernel, ..Default::default() };
        let access = if kernel { crate::workload::Access::Write } else { crate::workload::Access::Read };
        let load = crate::workload::Transfer { src: mem, dst: g0, size, kernel, access, ..Default::default() };
        let w = crate::workload::Workload { transfers: vec![store, load], origin: "both".into(), ..Default::default() };
        let params: Vec<(String, String)> =
            [("duplex_pcie", "0"), ("duplex_staged", "0")].iter().chain(given).map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let prepared = crate::model::registry::get("maxmin").unwrap().prepare(&m, &w, &params).unwrap();
        crate::sim::run_prepared(&w, prepared.as_ref(), false).unwrap().makespan()
    };
    let size: u64 = 64 << 20;
    let both: &[(&str, &str)] = &[("read_request", "0.047"), ("kernel_read_request", "0.375")];
    // Unset, a kernel's share is read_request's.
    let one: &[(&str, &str)] = &[("read_request", "0.2")];
    for (kernel, given, r) in [(true, both, 0.375), (false, both, 0.047), (true, one, 0.2)] {
        let got = rate(kernel, 2 * size, given) - rate(kernel, size, given);
        let want = size as f64 / (link / (1.0 + r));
        assert!(close(got, want, 0.001), "kernel {kernel}, {given:?}: {} us, want {} us", got * 1e6, want * 1e6);
    }
}

/// `shm::send` runs a merged loop's load a step behind its store, after the store before it; the
/// first loop has none, so it must never be merged: `lower::loops` keeps its first `KEEP` loops
/// at the chunk for every total (rev21 finding 9 asked what a merged first loop waits for).
#[test]
fn the_first_loop_of_a_send_is_never_merged() {
    let chunk = 128u64 << 10;
    for total in [1, chunk - 1, chunk, chunk + 1, 17 * chunk, 17 * chunk + 5, 1 << 30, (1 << 34) + 3] {
        let v = lower::loops(total, chunk);
        assert!(v[..v.len().min(lower::KEEP)].iter().all(|&b| b <= chunk) && v.iter().sum::<u64>() == total, "{total}: {v:?}");
    }
}

/// NCCL's P2P level (graph/paths.cc `ncclTopoCheckP2p`, `cpu::p2p_level`): on `TWO_SOCKETS` with
/// peer access across the socket link, a pair across the sockets (SYS) is P2P only where the
/// level is SYS, and a pair under one switch (PIX) in every release. AMD (xGMI): 2.18 to 2.22 SYS;
/// from 2.23.4 PXB with more than two GPUs, SYS with two. Intel (UPI made peer-capable): PXB in
/// every release. With no CPU named and a plain fabric link, peer access alone decides.
#[test]
fn nccl_connects_gpus_across_the_sockets_through_host_memory_beyond_its_p2p_level() {
    use versions::Version::{V2_21, V2_30};
    let across = |a: &str, b: &str| ["GPU0", "GPU1"].contains(&a) != ["GPU0", "GPU1"].contains(&b);
    for (link, gpus, version, shm) in [
        ("{a: RC0, b: RC1, kind: xgmi, bandwidth: 64GB/s", 4, V2_21, false),
        ("{a: RC0, b: RC1, kind: xgmi, bandwidth: 64GB/s", 4, V2_30, true),
        ("{a: RC0, b: RC1, kind: xgmi, bandwidth: 64GB/s", 2, V2_30, false),
        ("{a: RC0, b: RC1, kind: upi, p2p: true, bandwidth: 20GB/s", 4, V2_21, true),
        ("{a: RC0, b: RC1, kind: upi, p2p: true, bandwidth: 20GB/s", 2, V2_30, true),
        ("{a: RC0, b: RC1, kind: fabric, bandwidth: 64GB/s", 4, V2_30, false),
    ] {
        let text = TWO_SOCKETS.replace("{a: RC0, b: RC1, kind: upi, bandwidth: 20GB/s", link);
        let m = Machine::from_text(&text, "two-sockets.yaml").unwrap();
        let d = |n: &str| m.device(n).unwrap();
        let names: &[&str] = if gpus == 4 { &["GPU0", "GPU1", "GPU2", "GPU3"] } else { &["GPU0", "GPU2"] };
        let mut comm = Comm::new(&m, &[names.iter().map(|n| d(n)).collect()], None).unwrap();
        comm.set_constants(constants::Constants { version, ..Default::default() }).unwrap();
        for &a in names {
            for &b in names.iter().filter(|&&b| b != a) {
                let want = shm && across(a, b);
                assert_eq!(comm.shm().contains_key(&(d(a), d(b))), want, "{link} {gpus} GPUs {version:?}: {a} -> {b}");
            }
        }
    }
}

/// NCCL_P2P_LEVEL given (`nccl_p2p_level`) overrides the default level as `ncclTopoCheckP2p` does
/// (graph/paths.cc: `ncclGetUserP2pLevel` after the default; path type <= level is P2P): on
/// `TWO_SOCKETS` under Intel (UPI made peer-capable), whose default PXB sends the socket pairs
/// (SYS) through host memory, SYS makes every pair P2P and PHB or PXB keeps the default's pairs;
/// PIX still leaves the switch pairs (PIX) P2P. A level below the switch pairs (LOC, NVL) sends
/// every pair through host memory (their graph: `divert_tests`).
#[test]
fn a_p2p_level_given_overrides_nccls_default() {
    use topo::PathType::{Loc, Nvl, Phb, Pix, Pxb, Sys};
    let text = TWO_SOCKETS.replace("{a: RC0, b: RC1, kind: upi, bandwidth: 20GB/s", "{a: RC0, b: RC1, kind: upi, p2p: true, bandwidth: 20GB/s");
    let m = Machine::from_text(&text, "two-sockets.yaml").unwrap();
    let gpus: Vec<usize> = ["GPU0", "GPU1", "GPU2", "GPU3"].iter().map(|n| m.device(n).unwrap()).collect();
    let mut comm = Comm::new(&m, std::slice::from_ref(&gpus), None).unwrap();
    let across = |a: usize, b: usize| (a < 2) != (b < 2);
    for (level, shm_across) in [(None, true), (Some(Sys), false), (Some(Phb), true), (Some(Pxb), true), (Some(Pix), true)] {
        comm.set_constants(constants::Constants { p2p_level: level, ..Default::default() }).unwrap();
        assert_eq!(comm.p2p_level(), Some(level.unwrap_or(Pxb)));
        for a in 0..4 {
            for b in (0..4).filter(|&b| b != a) {
                assert_eq!(comm.shm().contains_key(&(gpus[a], gpus[b])), shm_across && across(a, b), "{level:?}: {a} -> {b}");
            }
        }
    }
    for level in [Loc, Nvl] {
        comm.set_constants(constants::Constants { p2p_level: Some(level), ..Default::default() }).unwrap();
        assert_eq!(comm.shm().len(), 12, "{level:?}: every pair through host memory");
    }
    // The default returns where the level is no longer given.
    comm.set_constants(constants::Constants::default()).unwrap();
    assert!(comm.shm().contains_key(&(gpus[0], gpus[2])) && !comm.shm().contains_key(&(gpus[0], gpus[1])));
}

/// qa27's rough edge: on a machine file with no host memory (bench/validation/machines/
/// a40x8-nv4.yaml), every call across its sockets failed with "nccl all_reduce: transfers[3]:
/// staging GPU3 to GPU4 needs a host_memory device", an internal transfer's index. NCCL connects
/// a pair without a peer path through host memory (its SHM transport), so the machine file is
/// refused in one line naming the pair, the transport and the device to add; a pair with a peer
/// path (the NVLink pair the validation runs) still runs.
#[test]
fn shm_without_host_memory_names_the_pair_and_the_fix() {
    let text = TWO_SOCKETS.lines().filter(|l| !l.contains("MEM")).collect::<Vec<_>>().join("\n");
    let m = Machine::from_text(&text, "no-memory.yaml").unwrap();
    let e = Comm::new(&m, &[m.gpus()], None).err().expect("refused").to_string();
    assert!(
        e.starts_with("no-memory.yaml: devices: GPU") && e.contains("no peer path") && e.contains("SHM transport") && e.contains("kind: host_memory"),
        "{e}"
    );
    assert!(!e.contains('\n') && !e.contains("transfers["), "{e}");
    // The pair under one socket's switch has a peer path: it runs.
    let (g0, g1) = (m.device("GPU0").unwrap(), m.device("GPU1").unwrap());
    assert!(Comm::new(&m, &[vec![g0, g1]], None).is_ok());
}
