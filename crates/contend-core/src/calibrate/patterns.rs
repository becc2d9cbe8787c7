//! A CSV of measured patterns that a user writes for their own tests: each row one transfer,
//! the transfers of a pattern start together, and each has its measured time or bandwidth.
//!
//! Header (any order): pattern, src, dst, size, and time or bandwidth; optionally access
//! (write or read). Sizes, times and bandwidths carry units ("64MiB", "2.5ms", "24GB/s").
//! A single-transfer pattern per size is a bandwidth-versus-size sweep.

use crate::csv::Csv;
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
    header.split(',').any(|c| c.trim().trim_matches('"').eq_ignore_ascii_case("pattern"))
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
        let size = Bytes::parse(&f[z]).map_err(|e| Error::input(origin, format!("{at}: size"), e))?;
        if size.0 == 0 {
            return Err(Error::input(origin, format!("{at}: size"), "is zero; give the bytes the transfer moved"));
        }
        let seconds = match (time, bw) {
            (Some(t), _) => Time::parse(&f[t]).map_err(|e| Error::input(origin, format!("{at}: time"), e))?.secs(),
            (_, Some(b)) => {
                let b = Bandwidth::parse(&f[b]).map_err(|e| Error::input(origin, format!("{at}: bandwidth"), e))?.bytes_per_sec();
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
        out[k].spec.transfers.push(TransferSpec { src: f[s].to_string(), dst: f[d].to_string(), size, access, ..Default::default() });
        out[k].seconds.push(seconds);
    }
    Ok(out)
}

/// Per pattern, the flat indices (patterns in order, their transfers in order) of copies that are
/// the same copy (same ends, size and access): groups of two or more. CUDA runs the commands of
/// different streams in no defined order with respect to one another (CUDA C++ Programming Guide,
/// "Streams"), so when identical copies queue at one engine a measurement cannot say which stream
/// went first, only the times the engine gave them; the project's own H100 and H200 show it
/// (four copies one way took the streams 3, 4, 1, 2 in one run, 1, 2, 3, 4 in another).
pub fn same_copies(patterns: &[Pattern]) -> Vec<Vec<usize>> {
    let mut groups = Vec::new();
    let mut base = 0;
    for x in patterns {
        let t = &x.spec.transfers;
        let mut seen = vec![false; t.len()];
        for i in 0..t.len() {
            if seen[i] {
                continue;
            }
            let group: Vec<usize> = (i..t.len()).filter(|&j| t[j] == t[i]).collect();
            group.iter().for_each(|&j| seen[j] = true);
            if group.len() > 1 {
                groups.push(group.iter().map(|j| base + j).collect());
            }
        }
        base += t.len();
    }
    groups
}

/// `predicted` with each group's predictions handed out by rank: the copy measured k-th fastest
/// of its group gets the group's k-th shortest prediction (see `same_copies`). Other copies keep
/// their own.
pub fn by_rank(predicted: &[f64], measured: &[f64], groups: &[Vec<usize>]) -> Vec<f64> {
    let mut out = predicted.to_vec();
    for g in groups {
        let mut times: Vec<f64> = g.iter().map(|&i| predicted[i]).collect();
        times.sort_by(f64::total_cmp);
        let mut order = g.clone();
        order.sort_by(|&a, &b| measured[a].total_cmp(&measured[b]));
        for (i, t) in order.into_iter().zip(times) {
            out[i] = t;
        }
    }
    out
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

    /// Four identical copies queued at one engine, predicted 1, 2, 3, 4 time units in issue order
    /// and measured in a rotated order: each is compared with the prediction of its rank. A copy
    /// that differs (another size) keeps its own prediction, and so does a lone copy.
    #[test]
    fn identical_copies_are_compared_by_rank() {
        let text = "pattern,src,dst,size,time\nsweep,M,G,1GB,1s\nfour,M,G,1GB,3s\nfour,M,G,1GB,4s\nfour,M,G,1GB,1s\nfour,M,G,1GB,2s\nfour,M,G,2GB,9s\n";
        let p = parse(text, "m.csv").unwrap();
        let groups = same_copies(&p);
        assert_eq!(groups, vec![vec![1, 2, 3, 4]]);
        let measured: Vec<f64> = p.iter().flat_map(|x| x.seconds.clone()).collect();
        let predicted = [1.0, 1.0, 2.0, 3.0, 4.0, 7.0];
        assert_eq!(by_rank(&predicted, &measured, &groups), vec![1.0, 3.0, 4.0, 1.0, 2.0, 7.0]);
    }
}
