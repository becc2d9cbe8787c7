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
const TWO_SOCKETS: &str = "name: two-sockets
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
    // NCCL's kernels pay only the engines' part the machine writes (NCCL's communicator zeroes
    // it, `Comm::m`), not the hand-off.
    assert!(close(p.kernel_latency, 10e-6, 1e-9), "{}", p.kernel_latency);
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

#[test]
fn a_two_gpu_all_gather_through_host_memory_takes_the_staged_duplex_loss_of_its_gpu_links() {
    // Two ranks' all_gather: each GPU's kernel stores its half into the SHM slots in host memory
    // (its link's upstream direction) while it loads the peer's half from them (its link's
    // downstream direction; NCCL 2.30.7 shm.cc: the buffer is in host memory, mapped into both
    // GPUs). Each GPU link carries one transfer each way at once: the situation of a staged copy
    // both ways, whose loss maxmin charges the GPUs' links (`duplex_staged`, flow/charges.rs), so
    // each way moves link / (1 + δ). A rank receives half the bytes: base + one step + S/2 over
    // that rate in wire bytes (Simple's efficiency), whatever δ is given.
    let bytes: u64 = 64 << 20;
    let link = 8e9 * 128.0 / 130.0 * 16.0 / 8.0;
    let ag = |m: &Machine, delta: &str| {
        let comm = Comm::new(m, &[m.gpus()], None).unwrap();
        let call = comm.call(Coll::AllGather, Algo::Ring, Proto::Simple, bytes, 0);
        let got = run(&comm.m, &call, "maxmin", &[("duplex_staged".into(), delta.into())], false).unwrap().seconds;
        (got, call.base + call.step, call.efficiency[Proto::Simple as usize])
    };
    // A Gen5 uplink is wide enough for both transfers both ways: the GPU links bind.
    for delta in [0.66, 0.3] {
        let (got, latency, e) = ag(&pair_under(5), &delta.to_string());
        let want = latency + (bytes / 2) as f64 / (e * link / (1.0 + delta));
        assert!(close(got, want, 0.01), "δ {delta}: {} us, want {} us", got * 1e6, want * 1e6);
    }
    // Behind one Gen3 uplink (the 2-GPU AutoDL box's layout) the uplink carries both transfers'
    // stores up and both loads down; it is no GPU's link, so it keeps PCIe's own duplex loss
    // (0.06) and binds first: each way 2 f (1 + 0.06) = link, below the GPU links'
    // link / (1 + δ) for any δ under 1.12, so δ moves nothing.
    for delta in [0.66, 0.3] {
        let (got, latency, e) = ag(&pair_under(3), &delta.to_string());
        let want = latency + (bytes / 2) as f64 / (e * link / (2.0 * 1.06));
        assert!(close(got, want, 0.01), "δ {delta}: {} us, want {} us", got * 1e6, want * 1e6);
    }
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
