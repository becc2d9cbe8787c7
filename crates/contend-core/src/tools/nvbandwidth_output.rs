//! The text NVIDIA's nvbandwidth prints: "Device i: NAME (bus)" lines, then per test a
//! "Running NAME." line, one or more matrices titled "memcpy CE GPU(row) ... bandwidth (GB/s)"
//! and a "SUM NAME value" line. Cells "N/A" are pairs not measured.
//!
//! The titles' arrows changed between versions, so a matrix is read by its test's name:
//! `device_to_device_memcpy_write_ce` copies row → column (the row GPU pushes),
//! `device_to_device_memcpy_read_ce` copies column → row (the row GPU pulls), and the
//! bidirectional tests' "Total" matrix is both directions at once (reads or writes). A matrix is
//! stored as [source][destination] like p2pBandwidthLatencyTest's.
//!
//! The host copies one at a time (host_to_device, device_to_host), one GPU's host copies both
//! ways at once (the host bidirectional tests), and the tests of simultaneous copies (all_to_host,
//! host_to_all, their bidirectional forms, all_to_one, one_to_all, and v0.2's bidirectional peer
//! matrix without "Total") are read as flow sets (concurrent.rs). SM copies and latency tests
//! are listed as skipped.

use super::cells::{rows, Matrix};
use super::concurrent::{self, Concurrent};
use super::p2p_output::{P2pMeasurements, Tool};
use crate::error::{Error, Result};
use crate::workload::Access;

/// Whether `text` looks like nvbandwidth output: its version line, or a testcase's "Running
/// NAME." or "SUM NAME" line (posted excerpts often keep only those).
pub fn detect(text: &str) -> bool {
    let testcase = |name: &str| name.ends_with("_ce") || name.ends_with("_sm");
    text.contains("nvbandwidth Version")
        || text.lines().map(str::trim).any(|l| {
            l.strip_prefix("Running ").and_then(|n| n.strip_suffix('.')).is_some_and(testcase)
                || l.strip_prefix("SUM ").and_then(|r| r.split_whitespace().next()).is_some_and(testcase)
        })
}

fn transpose(m: &Matrix) -> Matrix {
    (0..m.len()).map(|j| m.iter().map(|r| r[j]).collect()).collect()
}

/// The test a matrix at line k belongs to: the last "Running NAME." above it, else the next
/// "SUM NAME" below it (posted excerpts often drop the Running line).
fn test_of(lines: &[&str], k: usize) -> Option<String> {
    let running = lines[..k].iter().rev().find_map(|l| l.trim().strip_prefix("Running ").map(|s| s.trim_end_matches('.').to_string()));
    let sum = || lines[k..].iter().find_map(|l| l.trim().strip_prefix("SUM ").and_then(|s| s.split_whitespace().next()).map(str::to_string));
    running.or_else(sum)
}

pub fn parse(text: &str, origin: &str) -> Result<P2pMeasurements> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = P2pMeasurements { tool: Tool::Nvbandwidth, ..Default::default() };
    for l in &lines {
        // "Device 0: NVIDIA A100-SXM4-80GB (00000000:34:00)"
        if let Some((head, rest)) = l.trim().split_once(": ") {
            if head.strip_prefix("Device ").is_some_and(|i| i.parse::<usize>().is_ok()) {
                out.devices.push(rest.rsplit_once(" (").map_or(rest, |(name, _)| name).trim().to_string());
            }
        }
    }
    for (k, l) in lines.iter().enumerate() {
        let title = l.trim();
        if !(title.starts_with("memcpy ") && title.contains("GPU(column)") && title.contains("bandwidth (GB/s)")) {
            continue;
        }
        let columns = lines.get(k + 1).map_or(0, |h| h.split_whitespace().count());
        if out.devices.is_empty() {
            out.devices = (0..columns).map(|i| format!("GPU{i}")).collect();
        }
        let n = out.devices.len();
        let test = test_of(&lines, k).unwrap_or_default();
        let total = title.contains("Total");
        let per_copy = title.contains("Read1") || title.contains("Read2") || title.contains("Write1") || title.contains("Write2");
        let bidirectional = test.starts_with("device_to_device_bidirectional_memcpy_") && test.ends_with("_ce");
        let one_row = test == "host_to_device_memcpy_ce" || test == "device_to_host_memcpy_ce" || concurrent::TESTS.contains(&test.as_str());
        // A matrix of single copies goes to its slot; the others are read as flow sets.
        let slot = match test.as_str() {
            "device_to_device_memcpy_write_ce" => Some((&mut out.unidirectional_p2p_gbps, false)),
            "device_to_device_memcpy_read_ce" => Some((&mut out.unidirectional_p2p_read_gbps, true)),
            // Both-way writes are what p2pBandwidthLatencyTest's bidirectional matrix measures;
            // both-way reads have no such matrix and are read as flow sets.
            _ if bidirectional && total && !test.contains("_read_") => Some((&mut out.bidirectional_p2p_gbps, false)),
            _ if bidirectional && per_copy => continue,
            _ if bidirectional || one_row => None,
            _ => {
                let why = if columns != n { "not a GPU-to-GPU matrix" } else { "not a copy-engine test contend predicts" };
                let name = if test.is_empty() { title.to_string() } else { test };
                let note = format!("nvbandwidth {name}: {why}; not used");
                if !out.skipped.contains(&note) {
                    out.skipped.push(note);
                }
                continue;
            }
        };
        if columns != n {
            return Err(Error::input(origin, format!("\"{test}\""), format!("has {columns} columns for {n} devices; give the whole output of one run")));
        }
        let m = rows(&lines[k..], n, origin, &format!("{test}: {title}"))?;
        match slot {
            Some((slot, pulled)) => *slot = Some(if pulled { transpose(&m) } else { m }),
            None => read_patterns(&test, &m, bidirectional, total, &mut out),
        }
    }
    if out.devices.is_empty() {
        return Err(Error::input(origin, "", "no \"Device i: NAME\" lines and no GPU matrix: not nvbandwidth output"));
    }
    Ok(out)
}

/// The measured cells of a one-row host or concurrent test, or of a bidirectional peer matrix
/// (v0.2's: the measured copy's bandwidth; later versions' "Total" of reads: both copies), as
/// flow sets (concurrent.rs).
fn read_patterns(test: &str, m: &Matrix, bidirectional: bool, total: bool, out: &mut P2pMeasurements) {
    let n = m.len();
    for (i, row) in m.iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            let Some(gbps) = *v else { continue };
            use concurrent::End::{Gpu, Host};
            use concurrent::Value;
            let (flows, value) = match test {
                _ if bidirectional => (concurrent::bidirectional_cell(test.contains("_read_"), i, j), if total { Value::SumOfCopies } else { Value::First }),
                "host_to_device_memcpy_ce" => (vec![concurrent::Flow { src: Host(j), dst: Gpu(j), access: Access::Write }], Value::First),
                "device_to_host_memcpy_ce" => (vec![concurrent::Flow { src: Gpu(j), dst: Host(j), access: Access::Write }], Value::First),
                _ => concurrent::row_test(test, j, n).expect("one-row tests are listed in concurrent::TESTS"),
            };
            let c = Concurrent { test: test.to_string(), flows, value, gbps };
            if matches!(test, "host_to_device_memcpy_ce" | "device_to_host_memcpy_ce") {
                out.host_copies.push(c);
            } else if matches!(test, "host_to_device_bidirectional_memcpy_ce" | "device_to_host_bidirectional_memcpy_ce") {
                out.host_bidirectional.push(c);
            } else {
                out.concurrent.push(c);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../tests/fixtures/nvbandwidth-6xa6000-read-ce.txt");

    #[test]
    fn reads_a_posted_read_test() {
        assert!(detect(FIXTURE));
        let m = parse(FIXTURE, "nvb.txt").unwrap();
        assert_eq!(m.devices.len(), 6);
        let r = m.unidirectional_p2p_read_gbps.unwrap();
        // Row 0 pulls from column 3: the copy runs GPU3 -> GPU0.
        assert_eq!((r[3][0], r[0][3], r[0][0]), (Some(21.95), Some(21.82), None));
        assert!(m.unidirectional_p2p_gbps.is_none());
    }

    const ALL: &str = include_str!("../../tests/fixtures/nvbandwidth-8xh800-all.txt");

    #[test]
    fn reads_every_copy_engine_test_of_a_full_run() {
        let m = parse(ALL, "nvb.txt").unwrap();
        assert_eq!(m.devices.len(), 8);
        assert_eq!(m.unidirectional_p2p_gbps.as_ref().unwrap()[0][1], Some(176.08));
        // v0.2 prints the bidirectional tests' measured copy only: concurrent, not a total.
        assert!(m.bidirectional_p2p_gbps.is_none());
        let count = |t: &str| m.concurrent.iter().filter(|c| c.test == t).count();
        assert_eq!((count("device_to_device_bidirectional_memcpy_write_ce"), count("all_to_one_read_ce"), count("all_to_host_memcpy_ce")), (56, 8, 8));
        assert_eq!(m.concurrent.len(), 2 * 56 + 8 * 8);
        assert_eq!((m.host_copies.len(), m.host_bidirectional.len()), (16, 16));
        // Column 3 of all_to_one_read: GPU3's data pulled by the seven others, a total.
        let c = m.concurrent.iter().filter(|c| c.test == "all_to_one_read_ce").nth(3).unwrap();
        assert_eq!((c.gbps, c.value, c.flows.len()), (142.13, concurrent::Value::Total, 7));
        assert!(c.flows.iter().all(|f| f.src == concurrent::End::Gpu(3) && f.access == Access::Read));
        assert!(m.skipped.iter().any(|s| s.contains("all_to_one_write_sm")));
    }

    #[test]
    fn bad_cells_are_refused_with_row_and_column() {
        let e = parse(&FIXTURE.replace("21.86     22.67", "inf     22.67"), "nvb.txt").unwrap_err().to_string();
        assert!(e.starts_with("nvb.txt: \"device_to_device_memcpy_read_ce: memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\" row 5, column 0:"), "{e}");
    }
}
