//! What CUDA's p2pBandwidthLatencyTest would print on a machine, predicted with maxmin.
//!
//! The sample's method (NVIDIA/cuda-samples, Samples/5_Domain_Specific/p2pBandwidthLatencyTest):
//! bandwidth = 5 back-to-back cudaMemcpyPeerAsync copies of 40,000,000 ints (160 MB) in one
//! stream, GB = 1e9 bytes; bidirectional = the same in both directions at once, counting both;
//! latency = 100 back-to-back copies of one element, time per copy (the CUDA 6.0 sample that
//! seed 002 ran copied 1 byte; today's copies 16; the difference is below a nanosecond here).
//! "P2P=Enabled" copies between GPUs that are not peers fall back to staging through host
//! memory, as CUDA does; "P2P=Disabled" stages every copy.
//! The diagonal is a copy inside one GPU: its bandwidth is the GPU's memory bandwidth, which a
//! machine description does not hold, so it is left empty (null); its latency is predicted as
//! the GPU's own latency (copy-engine setup, no hop).

use crate::error::Result;
use crate::flow::router::Router;
use crate::model::maxmin::{MaxminParams, MaxminPrepared};
use crate::sim;
use crate::topology::Machine;
use crate::workload::{Access, After, Mechanism, Transfer, Workload};
use serde::Serialize;
use std::collections::BTreeMap;

pub const BANDWIDTH_COPY_BYTES: u64 = 40_000_000 * 4;
pub const BANDWIDTH_REPEAT: usize = 5;
pub const LATENCY_COPY_BYTES: u64 = 1;
pub const LATENCY_REPEAT: usize = 100;

#[derive(Serialize, Debug, Clone)]
pub struct P2pReport {
    pub machine: String,
    /// Row and column order of every matrix: the machine's GPUs in the order it lists them.
    pub gpus: Vec<String>,
    /// Whether CUDA would enable peer access (a peer-to-peer path exists); true on the diagonal.
    pub peer_access: Vec<Vec<bool>>,
    pub unidirectional_p2p_gbps: Vec<Vec<Option<f64>>>,
    /// The same copies pulled by the destination (the sample's "P2P Reads"); peers only.
    pub unidirectional_p2p_read_gbps: Vec<Vec<Option<f64>>>,
    pub bidirectional_p2p_gbps: Vec<Vec<Option<f64>>>,
    pub unidirectional_staged_gbps: Vec<Vec<Option<f64>>>,
    pub bidirectional_staged_gbps: Vec<Vec<Option<f64>>>,
    pub latency_p2p_us: Vec<Vec<Option<f64>>>,
    pub latency_staged_us: Vec<Vec<Option<f64>>>,
    pub params: BTreeMap<String, String>,
    /// Why some entries are empty, once per reason.
    pub notes: Vec<String>,
}

/// Whether CUDA enables peer access from GPU i to GPU j (a peer-to-peer path exists); on the
/// diagonal `diagonal` (a GPU and itself).
pub(crate) fn peer_access(m: &Machine, router: &Router, diagonal: bool) -> Vec<Vec<bool>> {
    let gpus = m.gpus();
    let peer = |i: usize, j: usize| if i == j { diagonal } else { router.plan(gpus[i], gpus[j], None, &[], true).is_ok_and(|p| p.mechanism == Mechanism::P2p) };
    (0..gpus.len()).map(|i| (0..gpus.len()).map(|j| peer(i, j)).collect()).collect()
}

fn chain(src: usize, dst: usize, size: u64, repeat: usize, first: usize, out: &mut Vec<Transfer>) {
    for k in 0..repeat {
        let after = if k == 0 { After::default() } else { [first + k - 1].into_iter().collect() };
        out.push(Transfer { name: format!("c{}", first + k), src, dst, size, start: 0.0, after, ..Default::default() });
    }
}

/// The same chain pulled by the destination.
fn read_chain(src: usize, dst: usize) -> Vec<Transfer> {
    let mut out = Vec::new();
    chain(src, dst, BANDWIDTH_COPY_BYTES, BANDWIDTH_REPEAT, 0, &mut out);
    out.iter_mut().for_each(|t| t.access = Access::Read);
    out
}

/// Seconds from the first issue to the last finish of `transfers` under maxmin.
fn makespan(m: &Machine, transfers: Vec<Transfer>, p: &MaxminParams) -> Result<f64> {
    let w = Workload { transfers, origin: "p2pBandwidthLatencyTest".into(), ..Default::default() };
    Ok(sim::run_prepared(&w, &MaxminPrepared::new(m, &w, *p)?, false)?.makespan())
}

pub fn p2p_matrices(m: &Machine, params: &MaxminParams) -> Result<P2pReport> {
    let gpus = m.gpus();
    let n = gpus.len();
    let router = Router::new(m);
    let mut notes: Vec<String> = Vec::new();
    let empty = || vec![vec![None; n]; n];
    let mut r = P2pReport {
        machine: m.name.clone(),
        gpus: m.gpu_names(),
        peer_access: peer_access(m, &router, true),
        unidirectional_p2p_gbps: empty(),
        unidirectional_p2p_read_gbps: empty(),
        bidirectional_p2p_gbps: empty(),
        unidirectional_staged_gbps: empty(),
        bidirectional_staged_gbps: empty(),
        latency_p2p_us: empty(),
        latency_staged_us: empty(),
        params: params.to_map(),
        notes: Vec::new(),
    };
    let modes = [MaxminParams { p2p: true, ..*params }, MaxminParams { p2p: false, ..*params }];
    for (i, &a) in gpus.iter().enumerate() {
        r.latency_p2p_us[i][i] = Some(m.devices[a].latency * 1e6);
        r.latency_staged_us[i][i] = Some(m.devices[a].latency * 1e6);
        for (j, &b) in gpus.iter().enumerate().filter(|&(j, _)| j != i) {
            for (k, p) in modes.iter().enumerate() {
                if let Err(e) = router.plan(a, b, None, &[], p.p2p) {
                    if !notes.contains(&e) {
                        notes.push(e);
                    }
                    continue;
                }
                let mut uni = Vec::new();
                chain(a, b, BANDWIDTH_COPY_BYTES, BANDWIDTH_REPEAT, 0, &mut uni);
                let mut bi = uni.clone();
                chain(b, a, BANDWIDTH_COPY_BYTES, BANDWIDTH_REPEAT, BANDWIDTH_REPEAT, &mut bi);
                let mut lat = Vec::new();
                chain(a, b, LATENCY_COPY_BYTES, LATENCY_REPEAT, 0, &mut lat);
                let gb = (BANDWIDTH_COPY_BYTES * BANDWIDTH_REPEAT as u64) as f64 / 1e9;
                let u = Some(gb / makespan(m, uni, p)?);
                let d = Some(2.0 * gb / makespan(m, bi, p)?);
                let l = Some(makespan(m, lat, p)? / LATENCY_REPEAT as f64 * 1e6);
                if k == 0 && r.peer_access[i][j] {
                    r.unidirectional_p2p_read_gbps[i][j] = Some(gb / makespan(m, read_chain(a, b), p)?);
                }
                if k == 0 {
                    (r.unidirectional_p2p_gbps[i][j], r.bidirectional_p2p_gbps[i][j], r.latency_p2p_us[i][j]) = (u, d, l);
                } else {
                    (r.unidirectional_staged_gbps[i][j], r.bidirectional_staged_gbps[i][j], r.latency_staged_us[i][j]) = (u, d, l);
                }
            }
        }
    }
    r.notes = notes;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within(x: Option<f64>, want: f64, rel: f64) -> bool {
        x.is_some_and(|x| (x - want).abs() <= rel * want)
    }

    /// Seed 002 (Cirrascale, K40, CUDA 6.0, P2P enabled, unidirectional): within 5%.
    #[test]
    fn cirrascale_k40_numbers_on_typical_8gpu() {
        let m = Machine::load("typical-8gpu").unwrap();
        let r = p2p_matrices(&m, &MaxminParams::default()).unwrap();
        let idx = |g: &str| r.gpus.iter().position(|x| x == g).unwrap();
        for (a, b, gbps, us) in [("GPU2", "GPU3", 10.6, 7.7), ("GPU0", "GPU2", 9.8, 7.9), ("GPU0", "GPU4", 4.0, 32.1)] {
            let (i, j) = (idx(a), idx(b));
            assert!(within(r.unidirectional_p2p_gbps[i][j], gbps, 0.05), "{a}->{b}: {:?} GB/s, want {gbps}", r.unidirectional_p2p_gbps[i][j]);
            assert!(within(r.latency_p2p_us[i][j], us, 0.05), "{a}->{b}: {:?} us, want {us}", r.latency_p2p_us[i][j]);
        }
        assert!(r.peer_access[idx("GPU0")][idx("GPU3")] && !r.peer_access[idx("GPU0")][idx("GPU4")]);
        assert!(r.unidirectional_p2p_gbps[0][0].is_none());
    }

    /// DGX-1: an NVLink neighbour pair moves about 18.4 GB/s one way and 36.8 GB/s both ways.
    #[test]
    fn dgx1_nvlink_neighbours() {
        let m = Machine::load("dgx1-p100").unwrap();
        let r = p2p_matrices(&m, &MaxminParams::default()).unwrap();
        assert!(within(r.unidirectional_p2p_gbps[0][1], 18.4, 0.05), "{:?}", r.unidirectional_p2p_gbps[0][1]);
        // Both ways: 2 x 18.4 GB/s less the NVLink duplex loss (6.5%, from the A100 measurement).
        assert!(within(r.bidirectional_p2p_gbps[0][1], 36.8 / 1.065, 0.01), "{:?}", r.bidirectional_p2p_gbps[0][1]);
        // A pull costs the same data; its requests load the idle reverse direction only.
        assert!(within(r.unidirectional_p2p_read_gbps[0][1], 18.4, 0.05) && r.unidirectional_p2p_read_gbps[0][5].is_none());
        // GPU0 and GPU5 are not neighbours: staged through host memory at PCIe speed.
        assert!(!r.peer_access[0][5] && r.unidirectional_p2p_gbps[0][5].unwrap() < 18.4);
    }

    #[test]
    fn machines_without_host_memory_leave_staged_entries_empty() {
        let m = Machine::load("cs-storm-socket").unwrap();
        let r = p2p_matrices(&m, &MaxminParams::default()).unwrap();
        assert!(r.unidirectional_p2p_gbps[0][1].is_some() && r.unidirectional_staged_gbps[0][1].is_none());
        assert!(r.notes.iter().any(|n| n.contains("host_memory")), "{:?}", r.notes);
        assert!(serde_json::to_string(&r).unwrap().contains("\"latency_p2p_us\""));
    }
}
