//! The text CUDA's p2pBandwidthLatencyTest prints: device lines, then titled matrices.
//! Titles of the CUDA 6-era sample ("...Bandwidth Matrix", "P2P=Enabled Latency Matrix") and of
//! today's ("...(P2P Writes)...", "...(P2P Reads)...") are read; the CPU latency tables are
//! skipped, since the model predicts what the GPU measures.
//!
//! Real measurements are often partial: a cell may be `-`, `N/A` or left out (a short row), and
//! a row may be missing; those cells are unknown (None) and the fit uses the others. A cell that
//! is `inf`, `nan`, negative or not a number is refused with the matrix, the row and the column.

use super::cells::{rows, Matrix};
use super::concurrent::Concurrent;
use crate::error::{Error, Result};
use serde::Serialize;

/// The program that printed the measurements: each measures a matrix its own way.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub enum Tool {
    #[default]
    P2pBandwidthLatencyTest,
    Nvbandwidth,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct P2pMeasurements {
    pub tool: Tool,
    /// Product name of each device, e.g. "NVIDIA A100 80GB PCIe".
    pub devices: Vec<String>,
    /// The sample's "P2P Connectivity Matrix".
    pub peer_access: Option<Vec<Vec<bool>>>,
    pub unidirectional_p2p_gbps: Option<Matrix>,
    /// Copies pulled by the destination (the sample's "P2P Reads", nvbandwidth's read tests).
    pub unidirectional_p2p_read_gbps: Option<Matrix>,
    pub bidirectional_p2p_gbps: Option<Matrix>,
    pub unidirectional_staged_gbps: Option<Matrix>,
    pub bidirectional_staged_gbps: Option<Matrix>,
    pub latency_p2p_us: Option<Matrix>,
    pub latency_staged_us: Option<Matrix>,
    /// nvbandwidth's copies between each GPU and its host memory, one at a time: the first
    /// flow of each is the copy (fitted like the unidirectional matrices).
    pub host_copies: Vec<Concurrent>,
    /// nvbandwidth's tests of one GPU copying to and from its host memory at once (the first
    /// flow is the measured copy): single-GPU data, they fit the host link's duplex loss per
    /// direction.
    pub host_bidirectional: Vec<Concurrent>,
    /// nvbandwidth's tests of simultaneous copies (never fitted; predicted and scored).
    pub concurrent: Vec<Concurrent>,
    /// What was read but not used, once per reason (for the report).
    pub skipped: Vec<String>,
}

impl P2pMeasurements {
    /// Which GPU pairs have peer access, as measured: the sample's connectivity matrix; nvbandwidth
    /// prints none, but runs its GPU-to-GPU copies only where the copy's buffer enables peer access
    /// and leaves N/A elsewhere (nvbandwidth v0.8 testcases_ce.cpp `DeviceToDeviceReadCE::run`:
    /// `if (!srcBuffer.enablePeerAcess(peerBuffer)) continue;`; memcpy.cpp:266-268), so a pair
    /// measured in one of its peer matrices has it and one N/A in all of them has not. None
    /// where neither says (no peer matrix).
    pub fn peer_access(&self) -> Option<Vec<Vec<bool>>> {
        if self.peer_access.is_some() || self.tool != Tool::Nvbandwidth {
            return self.peer_access.clone();
        }
        let peer = [&self.unidirectional_p2p_gbps, &self.unidirectional_p2p_read_gbps, &self.bidirectional_p2p_gbps];
        let seen: Vec<&Matrix> = peer.into_iter().flatten().collect();
        if seen.is_empty() {
            return None;
        }
        let n = self.devices.len();
        Some((0..n).map(|i| (0..n).map(|j| seen.iter().any(|m| m.get(i).and_then(|r| r.get(j)).is_some_and(Option::is_some))).collect()).collect())
    }
}

/// Beginnings of the titles of the sample's matrices.
const TITLES: [&str; 4] = ["P2P Connectivity Matrix", "Unidirectional P2P=", "Bidirectional P2P=", "P2P=Enabled Latency"];

pub fn parse(text: &str, origin: &str) -> Result<P2pMeasurements> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = P2pMeasurements::default();
    for l in &lines {
        // "Device: 0, NVIDIA A100 80GB PCIe, pciBusID: 0, ..."
        if let Some(rest) = l.trim_start().strip_prefix("Device: ") {
            let mut parts = rest.splitn(3, ", ");
            if let (Some(_), Some(name)) = (parts.next(), parts.next()) {
                out.devices.push(name.trim().to_string());
            }
        }
    }
    if out.devices.is_empty() {
        // Posted excerpts often drop the device lines: count the columns of the first matrix.
        let header = lines.iter().position(|l| TITLES.iter().any(|t| l.trim().starts_with(t))).and_then(|k| lines.get(k + 1));
        let columns = header.map_or(0, |h| h.split_whitespace().skip(1).count());
        out.devices = (0..columns).map(|i| format!("GPU{i}")).collect();
    }
    let n = out.devices.len();
    if n == 0 {
        return Err(Error::input(origin, "", "no \"Device: i, NAME, ...\" lines and no matrix: not p2pBandwidthLatencyTest output"));
    }
    for (k, l) in lines.iter().enumerate() {
        let title = l.trim();
        let slot = match title {
            "P2P Connectivity Matrix" => {
                let m = rows(&lines[k..], n, origin, title)?;
                out.peer_access = Some(m.iter().map(|r| r.iter().map(|x| x.is_some_and(|x| x != 0.0)).collect()).collect());
                continue;
            }
            "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)" => &mut out.unidirectional_staged_gbps,
            "Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)" | "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)" => {
                &mut out.unidirectional_p2p_gbps
            }
            "Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)" => &mut out.unidirectional_p2p_read_gbps,
            "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)" => &mut out.bidirectional_staged_gbps,
            "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)" => &mut out.bidirectional_p2p_gbps,
            "P2P=Disabled Latency Matrix (us)" => &mut out.latency_staged_us,
            "P2P=Enabled Latency Matrix (us)" | "P2P=Enabled Latency (P2P Writes) Matrix (us)" => &mut out.latency_p2p_us,
            t if t.starts_with("P2P=Enabled Latency (P2P Reads)") => {
                out.skipped.push(format!("\"{t}\": read latency is not fitted (a pulled copy's fixed cost is the same engine's)"));
                continue;
            }
            _ => continue,
        };
        *slot = Some(rows(&lines[k..], n, origin, title)?);
    }
    // Device lines or a connectivity matrix alone measure nothing: a "calibrated" machine from them
    // would be the machine given, unchanged.
    let measured = [
        &out.unidirectional_p2p_gbps,
        &out.unidirectional_p2p_read_gbps,
        &out.bidirectional_p2p_gbps,
        &out.unidirectional_staged_gbps,
        &out.bidirectional_staged_gbps,
        &out.latency_p2p_us,
        &out.latency_staged_us,
    ]
    .into_iter()
    .flatten()
    .any(|m| m.iter().enumerate().any(|(i, r)| r.iter().enumerate().any(|(j, v)| i != j && v.is_some())));
    if !measured {
        return Err(Error::input(
            origin,
            "",
            "no bandwidth or latency matrix with a measured cell between two GPUs: nothing to fit; give the whole output of p2pBandwidthLatencyTest",
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../tests/fixtures/p2pBandwidthLatencyTest-4xa100-pcie.txt");

    #[test]
    fn reads_the_published_a100_output() {
        let m = parse(FIXTURE, "fixture").unwrap();
        assert_eq!(m.devices, vec!["NVIDIA A100 80GB PCIe"; 4]);
        assert_eq!(m.peer_access.as_ref().unwrap()[0], [true, true, false, false]);
        assert_eq!(m.unidirectional_p2p_gbps.as_ref().unwrap()[0][1], Some(275.07));
        assert_eq!(m.bidirectional_staged_gbps.as_ref().unwrap()[3][2], Some(28.99));
        // The GPU table, not the CPU one that follows it.
        assert_eq!(m.latency_p2p_us.as_ref().unwrap()[0][1], Some(2.25));
        assert_eq!(m.latency_staged_us.as_ref().unwrap()[1][0], Some(11.68));
    }

    #[test]
    fn output_without_a_measured_matrix_is_refused() {
        let devices: String = FIXTURE.lines().take_while(|l| !l.starts_with("Device=")).map(|l| format!("{l}\n")).collect();
        let e = parse(&devices, "m.txt").unwrap_err().to_string();
        assert!(e.contains("nothing to fit"), "{e}");
        let connectivity = &FIXTURE[..FIXTURE.find("Unidirectional P2P=Disabled").unwrap()];
        let e = parse(connectivity, "m.txt").unwrap_err().to_string();
        assert!(e.contains("nothing to fit"), "{e}");
    }

    #[test]
    fn cut_output_is_refused() {
        let cut = &FIXTURE[..FIXTURE.find("     2  21.46").unwrap()];
        let e = parse(cut, "cut.txt").unwrap_err().to_string();
        assert!(e.contains("Unidirectional P2P=Enabled") && e.contains("cut short"), "{e}");
        assert!(parse("hello", "x.txt").unwrap_err().to_string().contains("not p2pBandwidthLatencyTest"));
        // An excerpt without the device lines: the devices are counted from the matrices.
        let excerpt = &FIXTURE[FIXTURE.find("P2P Connectivity Matrix").unwrap()..];
        assert_eq!(parse(excerpt, "x.txt").unwrap().devices, ["GPU0", "GPU1", "GPU2", "GPU3"]);
    }

    #[test]
    fn partial_matrices_leave_cells_unknown() {
        // A dash, a short row, a missing row.
        let text = FIXTURE.replace("     0 1502.40 275.07  21.62  21.60 ", "     0 1502.40 -  21.62").replace("     2  21.46  21.72 1508.20 275.34 \n", "");
        let m = parse(&text, "partial.txt").unwrap();
        let u = m.unidirectional_p2p_gbps.unwrap();
        assert_eq!((u[0][1], u[0][2], u[0][3], u[1][0]), (None, Some(21.62), None, Some(275.51)));
        assert!(u[2].iter().all(Option::is_none));
    }

    #[test]
    fn inf_nan_and_negative_cells_are_refused_where_they_are() {
        for bad in ["inf", "nan", "-3.2", "NaN", "x7"] {
            let text = FIXTURE.replace("275.51", bad);
            let e = parse(&text, "m.txt").unwrap_err().to_string();
            assert!(e.starts_with("m.txt: \"Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\" row 1, column 0:"), "{bad}: {e}");
        }
    }
}
