//! nvbandwidth's tests of simultaneous copies, as sets of flows that run at once, and their
//! prediction with the calibrated machine (the flow table that p2p and simulate use).
//!
//! Each testcase's flows, as nvbandwidth builds them (NVIDIA/nvbandwidth testcases_ce.cpp and
//! testcase.cpp at v0.2, commit 42e94d2; unchanged in the later versions' CE tests):
//! - every copy of one measurement starts together (a spin kernel holds all streams);
//! - one measured copy of `size`, and interfering copies of twice that size "to ensure it
//!   interferes correctly" (the value is the measured copy's bytes over its own time); or, in the
//!   all-to-one and one-to-all tests, copies of equal size whose total bytes over the time until
//!   the last ends is the value ("total bandwidth");
//! - write tests issue each copy from its source's context (the source pushes), read tests from
//!   its destination's (the destination pulls); the all-to-one and one-to-all read tests swap
//!   the copy's ends: all_to_one_read moves data out of the column GPU, each peer pulling it, and
//!   one_to_all_read moves data into the column GPU, which pulls it from every peer;
//! - a host buffer is pinned memory allocated for the GPU it is copied to or from, on that
//!   GPU's NUMA node (nvbandwidth sets the thread's CPU affinity to the GPU): here the host
//!   memory nearest the GPU.

use crate::flow::router::Router;
use crate::model::maxmin::{MaxminParams, MaxminPrepared};
use crate::sim;
use crate::topology::Machine;
use crate::workload::{Access, Mechanism, Transfer, Workload};
use serde::Serialize;

/// One end of a copy: a GPU (index among the machine's GPUs) or the pinned host buffer of one.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum End {
    Gpu(usize),
    Host(usize),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Flow {
    pub src: End,
    pub dst: End,
    pub access: Access,
}

/// What a measured value is, as nvbandwidth computes it (memcpy.cpp).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Value {
    /// The first copy's bytes over its own time (USE_FIRST_BW); the other copies interfere,
    /// twice its size so that they run for all of it.
    First,
    /// Every copy's bytes over the time until the last ends (TOTAL_BW: all_to_one, one_to_all).
    Total,
    /// The sum of each copy's own rate, copies of equal size (VECTOR_BW summed: the "Total" of a
    /// bidirectional peer test since v0.6).
    SumOfCopies,
}

impl Value {
    /// Each flow's bytes for `n` flows.
    pub fn sizes(self, n: usize) -> Vec<u64> {
        (0..n).map(|k| if self != Value::First || k == 0 { COPY_BYTES } else { 2 * COPY_BYTES }).collect()
    }
}

/// One measured value of a concurrent test: its flows (the first is the measured copy where
/// the value is `First`) and what the value is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Concurrent {
    pub test: String,
    pub flows: Vec<Flow>,
    pub value: Value,
    pub gbps: f64,
}

/// Bytes of the measured copy: nvbandwidth v0.2's defaults, 16 copies of a 64 MiB buffer; the
/// interfering copies move twice as much. At these sizes the copies' fixed costs are below 0.1%.
pub const COPY_BYTES: u64 = 16 * 64 * 1024 * 1024;

/// The tests read as concurrent patterns; `detect` in nvbandwidth.rs lists the single-copy ones.
pub const TESTS: [&str; 10] = [
    "host_to_device_bidirectional_memcpy_ce",
    "device_to_host_bidirectional_memcpy_ce",
    "all_to_host_memcpy_ce",
    "all_to_host_bidirectional_memcpy_ce",
    "host_to_all_memcpy_ce",
    "host_to_all_bidirectional_memcpy_ce",
    "all_to_one_write_ce",
    "all_to_one_read_ce",
    "one_to_all_write_ce",
    "one_to_all_read_ce",
];

fn w(src: End, dst: End) -> Flow {
    Flow { src, dst, access: Access::Write }
}

/// The flows of the value in column `j` of a one-row test on `n` GPUs (`None`: not one of
/// `TESTS`), and what the value is.
pub fn row_test(test: &str, j: usize, n: usize) -> Option<(Vec<Flow>, Value)> {
    use End::{Gpu, Host};
    let others = (0..n).filter(move |&i| i != j);
    let both = |i: usize| [w(Gpu(i), Host(i)), w(Host(i), Gpu(i))];
    let pulled = |src: usize, dst: usize| Flow { src: Gpu(src), dst: Gpu(dst), access: Access::Read };
    let flows: Vec<Flow> = match test {
        "host_to_device_bidirectional_memcpy_ce" => both(j).into_iter().rev().collect(),
        "device_to_host_bidirectional_memcpy_ce" => both(j).to_vec(),
        "all_to_host_memcpy_ce" => std::iter::once(j).chain(others).map(|i| w(Gpu(i), Host(i))).collect(),
        "host_to_all_memcpy_ce" => std::iter::once(j).chain(others).map(|i| w(Host(i), Gpu(i))).collect(),
        "all_to_host_bidirectional_memcpy_ce" => both(j).into_iter().chain(others.flat_map(both)).collect(),
        "host_to_all_bidirectional_memcpy_ce" => both(j).into_iter().rev().chain(others.flat_map(both)).collect(),
        "all_to_one_write_ce" => others.map(|i| w(Gpu(i), Gpu(j))).collect(),
        "all_to_one_read_ce" => others.map(|i| pulled(j, i)).collect(),
        "one_to_all_write_ce" => others.map(|i| w(Gpu(j), Gpu(i))).collect(),
        "one_to_all_read_ce" => others.map(|i| pulled(i, j)).collect(),
        _ => return None,
    };
    let total = test.starts_with("all_to_one") || test.starts_with("one_to_all");
    Some((flows, if total { Value::Total } else { Value::First }))
}

/// nvbandwidth v0.2's bidirectional peer tests print one matrix, the measured copy's bandwidth
/// while the opposite copy runs (later versions print "Total" and per-copy matrices instead).
/// Cell (i, j): write copies i -> j (measured) and j -> i, each pushed by its source; read
/// copies j -> i pulled by i (measured) and i -> j pulled by j.
pub fn bidirectional_cell(read: bool, i: usize, j: usize) -> Vec<Flow> {
    use End::Gpu;
    if read {
        vec![Flow { src: Gpu(j), dst: Gpu(i), access: Access::Read }, Flow { src: Gpu(i), dst: Gpu(j), access: Access::Read }]
    } else {
        vec![w(Gpu(i), Gpu(j)), w(Gpu(j), Gpu(i))]
    }
}

/// The machine device of an end: the GPU, or the host memory nearest it.
pub fn device(m: &Machine, router: &Router, e: End) -> Result<usize, String> {
    let gpus = m.gpus();
    let g = |i: usize| gpus.get(i).copied().ok_or_else(|| format!("nvbandwidth GPU {i}: the machine has {} GPUs", gpus.len()));
    match e {
        End::Gpu(i) => g(i),
        End::Host(i) => router.nearest_memory(g(i)?).ok_or_else(|| "nvbandwidth's host copies need a host_memory device; add one to the machine".to_string()),
    }
}

/// What the test would print for `c` on machine `m` under maxmin with `p`, GB/s.
pub fn predict(m: &Machine, c: &Concurrent, p: &MaxminParams) -> Result<f64, String> {
    let run = run(m, &c.flows, &c.value.sizes(c.flows.len()), p).map_err(|e| format!("{}: {e}", c.test))?;
    run.value(c.value).ok_or_else(|| match c.value {
        Value::Total => format!("{}: no GPU of the machine is a peer of the one measured", c.test),
        _ => format!("{}: its measured copy is between GPUs without peer access in the machine", c.test),
    })
}

/// Copies started together, as nvbandwidth times them.
pub struct Run {
    /// Each copy's bytes over its own time, GB/s; None for a copy left out.
    pub gbps: Vec<Option<f64>>,
    /// Every copy's bytes over the time until the last ends, GB/s ("total bandwidth"); None
    /// when every copy was left out.
    pub total_gbps: Option<f64>,
}

impl Run {
    /// The value nvbandwidth would print; None where a copy it needs was left out.
    pub fn value(&self, value: Value) -> Option<f64> {
        match value {
            Value::First => self.gbps[0],
            Value::Total => self.total_gbps,
            Value::SumOfCopies => self.gbps.iter().copied().sum(),
        }
    }
}

/// Run `flows` of `sizes` bytes together on `m` under maxmin. Copies between GPUs without peer
/// access are left out, as nvbandwidth leaves them out (enablePeerAccess fails).
pub fn run(m: &Machine, flows: &[Flow], sizes: &[u64], p: &MaxminParams) -> Result<Run, String> {
    let router = Router::new(m);
    let mut transfers = Vec::new();
    let mut slot = Vec::new();
    for (k, (f, &size)) in flows.iter().zip(sizes).enumerate() {
        let (src, dst) = (device(m, &router, f.src)?, device(m, &router, f.dst)?);
        let gpus = matches!((f.src, f.dst), (End::Gpu(_), End::Gpu(_)));
        if gpus && !router.plan(src, dst, None, &[], true).is_ok_and(|p| p.mechanism == Mechanism::P2p) {
            slot.push(None);
            continue;
        }
        slot.push(Some(transfers.len()));
        transfers.push(Transfer { name: format!("f{k}"), src, dst, size, access: f.access, ..Default::default() });
    }
    if transfers.is_empty() {
        return Ok(Run { gbps: slot.iter().map(|_| None).collect(), total_gbps: None });
    }
    let bytes: u64 = transfers.iter().map(|t| t.size).sum();
    let w = Workload { transfers, origin: "nvbandwidth".into(), ..Default::default() };
    let prepared = MaxminPrepared::new(m, &w, *p).map_err(|e| e.to_string())?;
    let out = sim::run_prepared(&w, &prepared, false).map_err(|e| e.to_string())?;
    let gbps = slot.iter().map(|s| s.map(|t| w.transfers[t].size as f64 / (out.finish[t] - out.start[t]) / 1e9)).collect();
    Ok(Run { gbps, total_gbps: Some(bytes as f64 / out.makespan() / 1e9) })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn flows_follow_nvbandwidth() {
        use End::{Gpu, Host};
        let (f, value) = row_test("all_to_host_memcpy_ce", 2, 4).unwrap();
        assert_eq!((f.len(), value), (4, Value::First));
        assert_eq!(f[0], w(Gpu(2), Host(2)));
        let (f, _) = row_test("host_to_all_bidirectional_memcpy_ce", 1, 3).unwrap();
        // The measured copy first, its reverse, then both directions of every other GPU.
        assert_eq!(f, vec![w(Host(1), Gpu(1)), w(Gpu(1), Host(1)), w(Gpu(0), Host(0)), w(Host(0), Gpu(0)), w(Gpu(2), Host(2)), w(Host(2), Gpu(2))]);
        let (f, value) = row_test("all_to_one_read_ce", 0, 3).unwrap();
        assert!(value == Value::Total && f.iter().all(|x| x.src == Gpu(0) && x.access == Access::Read));
        let (f, _) = row_test("one_to_all_read_ce", 0, 3).unwrap();
        assert!(f.iter().all(|x| x.dst == Gpu(0) && x.access == Access::Read));
        assert!(row_test("host_to_device_memcpy_sm", 0, 3).is_none());
    }

    /// Two GPUs under one Gen4 switch whose x16 uplink leads to host memory (tests elsewhere too).
    pub(crate) const SWITCHED: &str = "name: t
devices:
  - {name: RC, kind: root_complex}
  - {name: MEM, kind: host_memory}
  - {name: SW, kind: pcie_switch}
  - {name: GPU0, kind: gpu}
  - {name: GPU1, kind: gpu}
links:
  - {a: RC, b: MEM, kind: memory, bandwidth: 500GB/s}
  - {a: RC, b: SW, kind: pcie, gen: 4, lanes: 16}
  - {a: SW, b: GPU0, kind: pcie, gen: 4, lanes: 16}
  - {a: SW, b: GPU1, kind: pcie, gen: 4, lanes: 16}
";

    #[test]
    fn predictions_share_the_bottleneck() {
        // Two GPUs on one Gen4 x16 switch uplink: each alone gets the uplink, both at once half.
        let m = Machine::from_text(SWITCHED, "t.yaml").unwrap();
        let p = MaxminParams::default();
        let one = |test: &str, j: usize| {
            let (flows, value) = row_test(test, j, 2).unwrap();
            predict(&m, &Concurrent { test: test.into(), flows, value, gbps: 0.0 }, &p).unwrap()
        };
        let alone = predict(&m, &Concurrent { test: "d2h".into(), flows: vec![w(End::Gpu(0), End::Host(0))], value: Value::First, gbps: 0.0 }, &p).unwrap();
        let shared = one("all_to_host_memcpy_ce", 0);
        assert!((shared / alone - 0.5).abs() < 0.01, "{shared} against {alone}");
        // Peer copies through the switch do not touch the uplink: GPU1 -> GPU0 alone.
        let total = one("all_to_one_write_ce", 0);
        assert!((total / alone - 1.0).abs() < 0.01, "{total} against {alone}");
    }

    #[test]
    fn pairs_without_peer_access_are_left_out_as_nvbandwidth_does() {
        // GPU2's link forbids peer traffic: all_to_one into GPU0 is GPU1's copy alone.
        let m = Machine::from_text(
            "name: t
devices:
  - {name: SW, kind: pcie_switch}
  - {name: GPU0, kind: gpu}
  - {name: GPU1, kind: gpu}
  - {name: GPU2, kind: gpu}
links:
  - {a: SW, b: GPU0, kind: pcie, gen: 4, lanes: 16}
  - {a: SW, b: GPU1, kind: pcie, gen: 4, lanes: 16}
  - {a: SW, b: GPU2, kind: pcie, gen: 4, lanes: 16, p2p: false}
",
            "t.yaml",
        )
        .unwrap();
        let p = MaxminParams::default();
        let run = |test: &str, flows: Vec<Flow>, value: Value| predict(&m, &Concurrent { test: test.into(), flows, value, gbps: 0.0 }, &p);
        let (flows, _) = row_test("all_to_one_write_ce", 0, 3).unwrap();
        let all = run("all_to_one_write_ce", flows, Value::Total).unwrap();
        let pair = run("pair", vec![w(End::Gpu(1), End::Gpu(0))], Value::First).unwrap();
        assert!((all / pair - 1.0).abs() < 1e-6, "{all} against {pair}");
        let e = run("bidir", bidirectional_cell(false, 2, 0), Value::First).unwrap_err();
        assert!(e.contains("without peer access"), "{e}");
    }
}
