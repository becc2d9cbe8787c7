//! What NVIDIA's nvbandwidth would print on a machine: its copy-engine testcases, predicted with
//! maxmin from the copies nvbandwidth starts together for each value (the flow sets
//! `contend calibrate` reads a real run as, calibrate/concurrent.rs), in nvbandwidth's plain-text
//! layout (v0.8, NVIDIA/nvbandwidth commit 66746a3: titles, matrices and SUM lines as it prints
//! them), so that a run and a prediction lie side by side and `contend calibrate` reads either.
//!
//! As nvbandwidth does: a value is a copy's bytes over its own time, or, in the all-to-one and
//! one-to-all tests, every copy's bytes over the time until the last ends; interfering copies
//! are twice the measured one's size, except in the bidirectional peer tests (equal copies, each
//! reported, "Total" their sum); pairs without peer access are "N/A" and a test with none at all
//! is waived. The measured copy moves `concurrent::COPY_BYTES` (nvbandwidth moves 16 × 512 MiB
//! since v0.7, 16 × 64 MiB in v0.2; at either size fixed costs are below 0.1%).
//!
//! Not predicted: the SM testcases (kernels copying, not copy engines), device_local_copy (the
//! GPU's own memory bandwidth, which a machine file does not hold), the latency testcases (SM
//! pointer chases) and the multinode ones.

use super::concurrent::{self, End, Flow, Value, COPY_BYTES};
use super::p2p::peer_access;
use crate::error::{Error, Result};
use crate::flow::router::Router;
use crate::model::maxmin::MaxminParams;
use crate::topology::Machine;
use crate::workload::Access;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Serialize, Debug, Clone)]
pub struct NvbandwidthReport {
    pub machine: String,
    /// Column order of every matrix (and row order of the peer matrices): the machine's GPUs.
    pub gpus: Vec<String>,
    /// The testcases in nvbandwidth's order; those waived or not predicted are left out.
    pub testcases: Vec<Testcase>,
    pub params: BTreeMap<String, String>,
    /// What was left out and why, once per reason.
    pub notes: Vec<String>,
}

#[derive(Serialize, Debug, Clone)]
pub struct Testcase {
    pub name: String,
    pub matrices: Vec<Matrix>,
}

/// One printed matrix: a row per GPU (peer tests) or one row (host and all/one tests), GB/s.
#[derive(Serialize, Debug, Clone)]
pub struct Matrix {
    /// nvbandwidth's key, printed on the "SUM" line.
    pub key: String,
    pub title: String,
    pub values: Vec<Vec<Option<f64>>>,
}

/// The copy-engine testcases in nvbandwidth's order, with the title of those that print one row
/// (None: a device_to_device matrix, titled by `peer_matrices`), as nvbandwidth v0.8 prints them.
const TESTCASES: [(&str, Option<&str>); 16] = [
    ("host_to_device_memcpy_ce", Some("memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)")),
    ("device_to_host_memcpy_ce", Some("memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)")),
    ("host_to_device_bidirectional_memcpy_ce", Some("memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)")),
    ("device_to_host_bidirectional_memcpy_ce", Some("memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)")),
    ("device_to_device_memcpy_read_ce", None),
    ("device_to_device_memcpy_write_ce", None),
    ("device_to_device_bidirectional_memcpy_read_ce", None),
    ("device_to_device_bidirectional_memcpy_write_ce", None),
    ("all_to_host_memcpy_ce", Some("memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)")),
    ("all_to_host_bidirectional_memcpy_ce", Some("memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)")),
    ("host_to_all_memcpy_ce", Some("memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)")),
    ("host_to_all_bidirectional_memcpy_ce", Some("memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)")),
    ("all_to_one_write_ce", Some("memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)")),
    ("all_to_one_read_ce", Some("memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)")),
    ("one_to_all_write_ce", Some("memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)")),
    ("one_to_all_read_ce", Some("memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)")),
];

fn copy(src: End, dst: End, access: Access) -> Flow {
    Flow { src, dst, access }
}

/// The flows of the value in column `j` of a one-row testcase, and what the value is.
fn one_row_flows(test: &str, j: usize, n: usize) -> (Vec<Flow>, Value) {
    use End::{Gpu, Host};
    match test {
        "host_to_device_memcpy_ce" => (vec![copy(Host(j), Gpu(j), Access::Write)], Value::First),
        "device_to_host_memcpy_ce" => (vec![copy(Gpu(j), Host(j), Access::Write)], Value::First),
        _ => concurrent::row_test(test, j, n).expect("the one-row testcases are concurrent::TESTS and the host copies"),
    }
}

pub fn predict(m: &Machine, params: &MaxminParams) -> Result<NvbandwidthReport> {
    let gpus = m.gpus();
    let n = gpus.len();
    let router = Router::new(m);
    let peers = peer_access(m, &router, false);
    let any_peer = peers.iter().flatten().any(|&p| p);
    let has_host = gpus.iter().all(|&g| router.nearest_memory(g).is_some());
    let fail = |e: String| Error::input(&m.origin, "", e);
    let mut notes = Vec::new();
    if !has_host {
        notes.push("host copies left out: some GPU has no host_memory device in reach; add one to the machine".to_string());
    }
    if !any_peer {
        notes.push("peer testcases waived, as nvbandwidth waives them: no pair of GPUs has peer access".to_string());
    }
    notes.push("not predicted: the SM testcases, device_local_copy (the GPU's memory bandwidth) and the latency testcases".to_string());
    let mut testcases = Vec::new();
    for (name, title) in TESTCASES {
        let host = name.contains("host");
        if (host && !has_host) || (!host && !any_peer) {
            continue;
        }
        let matrices = if let Some(title) = title {
            let mut row = vec![None; n];
            for (j, cell) in row.iter_mut().enumerate() {
                let (flows, value) = one_row_flows(name, j, n);
                let run = concurrent::run(m, &flows, &value.sizes(flows.len()), params).map_err(fail)?;
                *cell = run.value(value);
            }
            vec![Matrix { key: name.to_string(), title: title.to_string(), values: vec![row] }]
        } else {
            peer_matrices(m, name, &peers, params).map_err(fail)?
        };
        testcases.push(Testcase { name: name.to_string(), matrices });
    }
    Ok(NvbandwidthReport { machine: m.name.clone(), gpus: m.gpu_names(), testcases, params: params.to_map(), notes })
}

/// The device_to_device testcases: cell (i, j) for every peer pair.
fn peer_matrices(m: &Machine, name: &str, peers: &[Vec<bool>], params: &MaxminParams) -> std::result::Result<Vec<Matrix>, String> {
    use End::Gpu;
    let n = peers.len();
    let read = name.contains("_read_");
    let access = if read { Access::Read } else { Access::Write };
    let empty = || vec![vec![None; n]; n];
    let matrix = |key: String, title: &str, values| Matrix { key, title: title.to_string(), values };
    if !name.contains("bidirectional") {
        // Read: row i pulls column j's buffer; write: row i pushes into column j.
        let mut values = empty();
        for (i, j) in pairs(peers) {
            let f = if read { copy(Gpu(j), Gpu(i), access) } else { copy(Gpu(i), Gpu(j), access) };
            values[i][j] = concurrent::run(m, &[f], &[COPY_BYTES], params)?.gbps[0];
        }
        let title = if read { "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)" } else { "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)" };
        return Ok(vec![matrix(name.to_string(), title, values)]);
    }
    // Two equal copies at once: column j into row i (pulled by i, or pushed by j), and row i
    // into column j; each is reported, and their sum.
    let (mut first, mut second, mut total) = (empty(), empty(), empty());
    for (i, j) in pairs(peers) {
        let flows = [copy(Gpu(j), Gpu(i), access), copy(Gpu(i), Gpu(j), access)];
        let r = concurrent::run(m, &flows, &Value::SumOfCopies.sizes(2), params)?;
        (first[i][j], second[i][j]) = (r.gbps[0], r.gbps[1]);
        total[i][j] = r.value(Value::SumOfCopies);
    }
    let (one, two) = if read { ("read1", "read2") } else { ("write1", "write2") };
    let title = |what: &str| format!("memcpy CE GPU(row) <-> GPU(column) {what} bandwidth (GB/s)");
    Ok(vec![
        matrix(format!("{name}_{one}"), &title(if read { "Read1" } else { "Write1" }), first),
        matrix(format!("{name}_{two}"), &title(if read { "Read2" } else { "Write2" }), second),
        matrix(format!("{name}_total"), &title("Total"), total),
    ])
}

type Values = Vec<Vec<Option<f64>>>;

/// nvbandwidth's peer copies laid out as p2pBandwidthLatencyTest's matrices, [source][destination]:
/// one way pushed, one way pulled, and both ways pushed ("Total"). `contend calibrate` scores
/// nvbandwidth's matrices against these, measured as nvbandwidth measures them.
pub fn peer_copies(m: &Machine, params: &MaxminParams) -> Result<(Values, Values, Values)> {
    let peers = peer_access(m, &Router::new(m), false);
    let n = peers.len();
    let one = |name: &str, k: usize| -> Result<Values> {
        let mut ms = peer_matrices(m, name, &peers, params).map_err(|e| Error::input(&m.origin, "", e))?;
        Ok(ms.swap_remove(k).values)
    };
    let read = one("device_to_device_memcpy_read_ce", 0)?;
    let pulled = (0..n).map(|j| (0..n).map(|i| read[i][j]).collect()).collect();
    Ok((one("device_to_device_memcpy_write_ce", 0)?, pulled, one("device_to_device_bidirectional_memcpy_write_ce", 2)?))
}

fn pairs(peers: &[Vec<bool>]) -> impl Iterator<Item = (usize, usize)> + '_ {
    peers.iter().enumerate().flat_map(|(i, row)| row.iter().enumerate().filter(|&(_, &p)| p).map(move |(j, _)| (i, j)))
}

impl NvbandwidthReport {
    /// nvbandwidth's plain text: a device line per GPU, then per testcase "Running NAME." and
    /// each matrix (columns 10 wide, two decimals, "N/A") with its "SUM key total" line.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let params = self.params.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
        let _ = writeln!(s, "contend: nvbandwidth's copy-engine testcases predicted for {} (nvbandwidth v0.8 layout)", self.machine);
        let _ = writeln!(s, "maxmin parameters: {params}\n");
        for (i, g) in self.gpus.iter().enumerate() {
            let _ = writeln!(s, "Device {i}: {g}");
        }
        s.push('\n');
        for t in &self.testcases {
            let _ = writeln!(s, "Running {}.", t.name);
            for m in &t.matrices {
                let _ = writeln!(s, "{}", m.title);
                s.push_str("  ");
                for j in 0..self.gpus.len() {
                    let _ = write!(s, "{j:>10}");
                }
                s.push('\n');
                for (i, row) in m.values.iter().enumerate() {
                    let _ = write!(s, "{i:>2}");
                    for v in row {
                        match v {
                            Some(v) => write!(s, "{v:>10.2}"),
                            None => write!(s, "{:>10}", "N/A"),
                        }
                        .expect("writing to a String");
                    }
                    s.push('\n');
                }
                let sum: f64 = m.values.iter().flatten().flatten().sum();
                let _ = writeln!(s, "\nSUM {} {sum:.2}\n", m.key);
            }
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::nvbandwidth_output::parse;

    fn within(x: Option<f64>, want: f64, rel: f64) -> bool {
        x.is_some_and(|x| (x - want).abs() <= rel * want)
    }

    fn find<'a>(r: &'a NvbandwidthReport, key: &str) -> &'a Matrix {
        r.testcases.iter().flat_map(|t| &t.matrices).find(|m| m.key == key).unwrap_or_else(|| panic!("no {key}"))
    }

    use crate::tools::concurrent::tests::SWITCHED;

    #[test]
    fn shared_uplink_halves_all_to_host_and_leaves_peer_copies_alone() {
        let m = Machine::from_text(SWITCHED, "t.yaml").unwrap();
        let r = predict(&m, &MaxminParams::default()).unwrap();
        let alone = find(&r, "device_to_host_memcpy_ce").values[0][0].unwrap();
        // Gen4 x16 at PCIe's default efficiency: about 25 GB/s.
        assert!(alone > 20.0 && alone < 32.0, "{alone}");
        assert!(within(find(&r, "all_to_host_memcpy_ce").values[0][1], alone / 2.0, 0.01));
        // Peer copies turn in the switch: each alone gets a whole port, both ways nearly twice.
        let write = find(&r, "device_to_device_memcpy_write_ce");
        assert!(within(write.values[0][1], alone, 0.01) && write.values[0][0].is_none());
        let total = find(&r, "device_to_device_bidirectional_memcpy_write_ce_total").values[1][0].unwrap();
        assert!(total > 1.8 * alone && total < 2.0 * alone, "{total} against {alone}");
        // The all-to-one total: one copy into GPU0, at one port's rate.
        assert!(within(find(&r, "all_to_one_write_ce").values[0][0], alone, 0.01));
        assert_eq!(r.testcases.len(), TESTCASES.len());
    }

    #[test]
    fn waives_peer_tests_and_leaves_out_host_copies_it_cannot_predict() {
        let no_peers = SWITCHED.replace("lanes: 16}\n  - {a: SW, b: GPU1", "lanes: 16, p2p: false}\n  - {a: SW, b: GPU1");
        let r = predict(&Machine::from_text(&no_peers, "t.yaml").unwrap(), &MaxminParams::default()).unwrap();
        assert!(r.testcases.iter().all(|t| t.name.contains("host")), "{:?}", r.testcases.iter().map(|t| &t.name).collect::<Vec<_>>());
        assert!(r.notes.iter().any(|n| n.contains("waived")));
        let no_host = SWITCHED.replace("  - {name: MEM, kind: host_memory}\n", "").replace("  - {a: RC, b: MEM, kind: memory, bandwidth: 500GB/s}\n", "");
        let r = predict(&Machine::from_text(&no_host, "t.yaml").unwrap(), &MaxminParams::default()).unwrap();
        assert!(r.testcases.iter().all(|t| !t.name.contains("host")) && r.notes.iter().any(|n| n.contains("host_memory")));
    }

    /// The printed prediction reads back as nvbandwidth output, cell for cell.
    #[test]
    fn text_reads_back_as_nvbandwidth_output() {
        let m = Machine::load("dgx-a100").unwrap();
        let r = predict(&m, &MaxminParams::default()).unwrap();
        let text = r.text();
        assert!(
            text.contains("Running device_to_device_memcpy_read_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n           0         1"),
            "{text}"
        );
        let back = parse(&text, "predicted.txt").unwrap();
        assert_eq!(back.devices, r.gpus);
        let write = back.unidirectional_p2p_gbps.unwrap();
        let read = back.unidirectional_p2p_read_gbps.unwrap();
        let printed = |key: &str, i: usize, j: usize| (find(&r, key).values[i][j].unwrap() * 100.0).round() / 100.0;
        assert_eq!(write[0][3], Some(printed("device_to_device_memcpy_write_ce", 0, 3)));
        // The read matrix's row pulls from its column: stored [source][destination].
        assert_eq!(read[3][0], Some(printed("device_to_device_memcpy_read_ce", 0, 3)));
        assert_eq!(back.bidirectional_p2p_gbps.unwrap()[2][5], Some(printed("device_to_device_bidirectional_memcpy_write_ce_total", 2, 5)));
        assert_eq!((back.host_copies.len(), back.host_bidirectional.len()), (16, 16));
        let n = r.gpus.len();
        // Bidirectional reads (Total) and the eight tests of several GPUs.
        assert_eq!(back.concurrent.len(), n * (n - 1) + 8 * n);
    }
}
