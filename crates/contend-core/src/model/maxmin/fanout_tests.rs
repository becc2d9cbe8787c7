//! A GPU read by several GPUs' copy engines at once keeps `read_fanout` of its outgoing links
//! (maxmin::fanout); expected values from the links' capacities alone.

use super::*;
use crate::sim;
use crate::workload::WorkloadSpec;

/// Three GPUs on one switch, 100 GB/s each way per GPU, no latency, no duplex loss.
const SWITCH: &str = "name: three
devices:
  - {name: NVS, kind: nvswitch, latency: 0s}
  - {name: GPU0, kind: gpu, latency: 0s}
  - {name: GPU1, kind: gpu, latency: 0s}
  - {name: GPU2, kind: gpu, latency: 0s}
links:
  - {a: GPU0, b: NVS, kind: nvlink, bandwidth: 100GB/s, efficiency: 1, duplex: 0, latency: 0s}
  - {a: GPU1, b: NVS, kind: nvlink, bandwidth: 100GB/s, efficiency: 1, duplex: 0, latency: 0s}
  - {a: GPU2, b: NVS, kind: nvlink, bandwidth: 100GB/s, efficiency: 1, duplex: 0, latency: 0s}
";

/// Reads cost their data alone here: no request bytes.
fn params() -> MaxminParams {
    MaxminParams { read_request: 0.0, read_fanout: 0.8, ..Default::default() }
}

fn prepared(text: &str) -> (Workload, MaxminPrepared) {
    let m = Machine::from_text(SWITCH, "three").unwrap();
    let w = Workload::resolve(&WorkloadSpec::from_text(text, "w").unwrap(), &m, "w").unwrap();
    let p = MaxminPrepared::new(&m, &w, params()).unwrap();
    (w, p)
}

fn finish(text: &str) -> Vec<f64> {
    let (w, p) = prepared(text);
    sim::run_prepared(&w, &p, false).unwrap().finish
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b
}

#[test]
fn one_reader_gets_the_whole_link_two_share_what_is_left() {
    let one = finish("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GB, access: read}\n");
    assert!(close(one[0], 0.01), "{one:?}");
    // Two readers of GPU0: its link keeps 80 GB/s, 40 each; once the 1 GB read is done (25 ms),
    // the other has 1 GB left and the whole 100 GB/s again.
    let two = finish("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GB, access: read}\n  - {src: GPU0, dst: GPU2, size: 2GB, access: read}\n");
    assert!(close(two[0], 0.025) && close(two[1], 0.025 + 0.01), "{two:?}");
}

#[test]
fn the_loss_is_the_served_gpus_not_the_readers_nor_writers() {
    // One GPU pulling from two: each served GPU has one reader; the reader's link is shared, 50 each.
    let pull = finish("transfers:\n  - {src: GPU1, dst: GPU0, size: 1GB, access: read}\n  - {src: GPU2, dst: GPU0, size: 1GB, access: read}\n");
    assert!(close(pull[0], 0.02) && close(pull[1], 0.02), "{pull:?}");
    // Two GPUs written from one (pushed, not read): the link is shared whole.
    let push = finish("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GB}\n  - {src: GPU0, dst: GPU2, size: 1GB}\n");
    assert!(close(push[0], 0.02) && close(push[1], 0.02), "{push:?}");
    // Two reads by the same GPU from one: one reader.
    let same = finish("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GB, access: read}\n  - {src: GPU0, dst: GPU1, size: 1GB, access: read}\n");
    assert!(close(same[0], 0.02) && close(same[1], 0.02), "{same:?}");
}

#[test]
fn the_rate_model_agrees_with_the_engine() {
    let (_, p) = prepared("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GB, access: read}\n  - {src: GPU0, dst: GPU2, size: 1GB, access: read}\n");
    let mut rates = p.rate_model().unwrap();
    let mut out = [0.0; 2];
    rates.rates(&[0, 1], &mut out);
    assert!(close(out[0], 40e9) && close(out[1], 40e9), "{out:?}");
    rates.rates(&[0], &mut out[..1]);
    assert!(close(out[0], 100e9), "{out:?}");
}

/// The event engine, which moves a served GPU's capacity at joins and finishes, against the full
/// recomputation (the rate model refilled at every event): random workloads on an NVSwitch node,
/// half of them reads, so that GPUs gain and lose second readers all the time.
#[test]
fn incremental_engine_matches_full_recomputation_with_readers() {
    use crate::model::RateAdaptor;
    use crate::units::{Bytes, Time};
    use crate::workload::{generate_rng, random_graph, Access};
    let m = Machine::load("dgx-a100").unwrap();
    let p = MaxminParams { staging_chunk: 0.0, ..Default::default() };
    let mut moved = false;
    for seed in 0..10u64 {
        let mut spec = WorkloadSpec { transfers: random_graph(&m.gpu_names(), 1 + (seed as usize * 17) % 80, Bytes(1), seed), ..Default::default() };
        let mut rng = generate_rng(seed);
        for t in spec.transfers.iter_mut() {
            t.size = Bytes(1 + (rng.unit() * 64.0 * 1048576.0) as u64);
            t.start = (rng.unit() < 0.5).then(|| Time::from_secs(rng.unit() * 0.002));
            t.access = (rng.unit() < 0.5).then_some(Access::Read);
        }
        let w = Workload::resolve(&spec, &m, "random").unwrap();
        let prepared = MaxminPrepared::new(&m, &w, p).unwrap();
        assert!(!prepared.fanout.is_empty(), "seed {seed}: no GPU is read");
        let fast = sim::run_prepared(&w, &prepared, false).unwrap();
        let without = MaxminPrepared::new(&m, &w, MaxminParams { read_fanout: 1.0, ..p }).unwrap();
        moved |= sim::run_prepared(&w, &without, false).unwrap().finish != fast.finish;
        let mut full = RateAdaptor::new(prepared.rate_model().unwrap(), &prepared.flows);
        let slow = sim::run(&w, &prepared.flows, &mut full, false, true).unwrap();
        for i in 0..w.transfers.len() {
            let (a, b) = (fast.finish[i], slow.finish[i]);
            assert!((a - b).abs() <= 1e-9 * b.max(1e-12), "seed {seed} finish {i}: {a} vs {b}");
        }
    }
    assert!(moved, "no workload had a GPU read by two at once");
}
