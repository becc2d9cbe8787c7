//! A CSV of measured patterns that a user writes for their own tests: each row one transfer,
//! the transfers of a pattern start together, and each has its measured time or bandwidth.
//!
//! Header (any order): pattern, src, dst, size, and time or bandwidth; optionally access
//! (write or read). Sizes, times and bandwidths carry units ("64MiB", "2.5ms", "24GB/s").
//! A single-transfer pattern per size is a bandwidth-versus-size sweep.

use super::csv::Csv;
use crate::error::{Error, Result};
use crate::units::{Bandwidth, Bytes, Time};
use crate::workload::{Access, TransferSpec, WorkloadSpec};

#[derive(Clone, Debug)]
pub struct Pattern {
    pub name: String,
    pub spec: WorkloadSpec,
    /// Measured duration of each transfer, seconds.
    pub seconds: Vec<f64>,
}

/// Whether a CSV header is this format's (it names a "pattern" column).
pub fn is_patterns(header: &str) -> bool {
    header.split(',').any(|c| c.trim().eq_ignore_ascii_case("pattern"))
}

pub fn parse(text: &str, origin: &str) -> Result<Vec<Pattern>> {
    const EXPECTED: &str = "pattern,src,dst,size and time or bandwidth";
    let csv = Csv::read(text, origin, EXPECTED)?;
    let need = |name: &str| csv.need(name, origin, EXPECTED);
    let (p, s, d, z) = (need("pattern")?, need("src")?, need("dst")?, need("size")?);
    let (time, bw, access) = (csv.find("time"), csv.find("bandwidth"), csv.find("access"));
    if time.is_none() == bw.is_none() {
        return Err(Error::input(origin, "line 1", "give exactly one of the columns time and bandwidth"));
    }
    csv.require_rows(origin)?;
    let mut out: Vec<Pattern> = Vec::new();
    for (line, f) in &csv.rows {
        let at = format!("line {line}");
        let size = Bytes::parse(f[z]).map_err(|e| Error::input(origin, format!("{at}: size"), e))?;
        if size.0 == 0 {
            return Err(Error::input(origin, format!("{at}: size"), "is zero; give the bytes the transfer moved"));
        }
        let seconds = match (time, bw) {
            (Some(t), _) => Time::parse(f[t]).map_err(|e| Error::input(origin, format!("{at}: time"), e))?.secs(),
            (_, Some(b)) => {
                let b = Bandwidth::parse(f[b]).map_err(|e| Error::input(origin, format!("{at}: bandwidth"), e))?.bytes_per_sec();
                size.as_f64() / b
            }
            _ => unreachable!("one of time and bandwidth is present"),
        };
        if !(seconds.is_finite() && seconds > 0.0) {
            let what = if time.is_some() { "time" } else { "bandwidth" };
            return Err(Error::input(origin, format!("{at}: {what}"), "is not a positive finite measurement; fix it or leave the row out"));
        }
        let access = match access.map(|a| f[a].to_lowercase()) {
            None => None,
            Some(a) if a.is_empty() || a == "write" => Some(Access::Write),
            Some(a) if a == "read" => Some(Access::Read),
            Some(a) => return Err(Error::input(origin, format!("{at}: access"), format!("\"{a}\" is not write or read"))),
        };
        let k = match out.iter().position(|x| x.name == f[p]) {
            Some(k) => k,
            None => {
                out.push(Pattern { name: f[p].to_string(), spec: WorkloadSpec::default(), seconds: vec![] });
                out.len() - 1
            }
        };
        out[k].spec.transfers.push(TransferSpec { src: f[s].into(), dst: f[d].into(), size, access, ..Default::default() });
        out[k].seconds.push(seconds);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_times_bandwidths_and_access() {
        let text = "pattern,src,dst,size,bandwidth,access\nsweep-1M,GPU0,GPU1,1MB,10GB/s,\npair,GPU0,GPU1,1GB,20GB/s,read\npair,GPU1,GPU0,1GB,20GB/s,write\n";
        let p = parse(text, "m.csv").unwrap();
        assert_eq!(p.len(), 2);
        assert!((p[0].seconds[0] - 1e-4).abs() < 1e-15);
        assert_eq!(p[1].spec.transfers[0].access, Some(Access::Read));
        for (bad, field) in [("inf", "bandwidth"), ("-3GB/s", "bandwidth"), ("0GB/s", "bandwidth")] {
            let e = parse(&text.replace("10GB/s", bad), "m.csv").unwrap_err().to_string();
            assert!(e.starts_with(&format!("m.csv: line 2: {field}")), "{bad}: {e}");
        }
        let e = parse("pattern,src,dst,size\n", "m.csv").unwrap_err().to_string();
        assert!(e.contains("exactly one of the columns time and bandwidth"), "{e}");
    }
}
