//! The text CUDA's p2pBandwidthLatencyTest prints: device lines, then titled matrices.
//! Titles of the CUDA 6-era sample ("...Bandwidth Matrix", "P2P=Enabled Latency Matrix") and of
//! today's ("...(P2P Writes)...") are both read; P2P-read matrices and the CPU latency tables
//! are skipped, since the model predicts what the GPU measures for writes.

use crate::error::{Error, Result};
use serde::Serialize;

pub type Matrix = Vec<Vec<f64>>;

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct P2pMeasurements {
    /// Product name of each device, e.g. "NVIDIA A100 80GB PCIe".
    pub devices: Vec<String>,
    /// The sample's "P2P Connectivity Matrix".
    pub peer_access: Option<Vec<Vec<bool>>>,
    pub unidirectional_p2p_gbps: Option<Matrix>,
    pub bidirectional_p2p_gbps: Option<Matrix>,
    pub unidirectional_staged_gbps: Option<Matrix>,
    pub bidirectional_staged_gbps: Option<Matrix>,
    pub latency_p2p_us: Option<Matrix>,
    pub latency_staged_us: Option<Matrix>,
}

/// Numbers of the rows that follow a matrix title (`lines[0]`): a header line, then one row per device
/// ("i v v ... v"); a blank line or anything else ends the matrix.
fn rows(lines: &[&str], n: usize) -> Option<Matrix> {
    let mut m = Vec::new();
    for l in lines.iter().skip(2).take(n) {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.first()?.parse::<usize>().ok()? != m.len() {
            return None;
        }
        let v: Option<Vec<f64>> = t[1..].iter().map(|x| x.parse().ok()).collect();
        m.push(v.filter(|v| v.len() == n)?);
    }
    (m.len() == n).then_some(m)
}

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
    let n = out.devices.len();
    if n == 0 {
        return Err(Error::input(origin, "", "no \"Device: i, NAME, ...\" lines: not p2pBandwidthLatencyTest output"));
    }
    for (k, l) in lines.iter().enumerate() {
        let title = l.trim();
        let slot = match title {
            "P2P Connectivity Matrix" => {
                let m = rows(&lines[k..], n).ok_or_else(|| bad(origin, title))?;
                out.peer_access = Some(m.iter().map(|r| r.iter().map(|&x| x != 0.0).collect()).collect());
                continue;
            }
            "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)" => &mut out.unidirectional_staged_gbps,
            "Unidirectional P2P=Enabled Bandwidth Matrix (GB/s)" | "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)" => {
                &mut out.unidirectional_p2p_gbps
            }
            "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)" => &mut out.bidirectional_staged_gbps,
            "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)" => &mut out.bidirectional_p2p_gbps,
            "P2P=Disabled Latency Matrix (us)" => &mut out.latency_staged_us,
            "P2P=Enabled Latency Matrix (us)" | "P2P=Enabled Latency (P2P Writes) Matrix (us)" => &mut out.latency_p2p_us,
            _ => continue,
        };
        *slot = Some(rows(&lines[k..], n).ok_or_else(|| bad(origin, title))?);
    }
    Ok(out)
}

fn bad(origin: &str, title: &str) -> Error {
    Error::input(origin, "", format!("the matrix under \"{title}\" does not have one row of numbers per device; is the output cut short?"))
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
        assert_eq!(m.unidirectional_p2p_gbps.as_ref().unwrap()[0][1], 275.07);
        assert_eq!(m.bidirectional_staged_gbps.as_ref().unwrap()[3][2], 28.99);
        // The GPU table, not the CPU one that follows it.
        assert_eq!(m.latency_p2p_us.as_ref().unwrap()[0][1], 2.25);
        assert_eq!(m.latency_staged_us.as_ref().unwrap()[1][0], 11.68);
    }

    #[test]
    fn cut_output_is_refused() {
        let cut = &FIXTURE[..FIXTURE.find("     2  21.46").unwrap()];
        let e = parse(cut, "cut.txt").unwrap_err().to_string();
        assert!(e.contains("Unidirectional P2P=Enabled") && e.contains("cut short"), "{e}");
        assert!(parse("hello", "x.txt").unwrap_err().to_string().contains("not p2pBandwidthLatencyTest"));
    }
}
