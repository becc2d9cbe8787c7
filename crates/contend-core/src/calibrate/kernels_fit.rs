//! Fitting the kernel terms of datatype methods (`datatype::cost`) to measurements: a CSV with
//! the columns kernel (pack, unpack or load-store), block, bytes and time, each quantity with
//! its unit. Every form is linear in its unknowns once written per byte and per block:
//!
//! time = (launch + sync) + bytes / bw + blocks × block / bw,   blocks = bytes / block size,
//!
//! with one (launch + sync) shared by all kernels and (1 / bw, block / bw) per kernel, so
//! non-negative least squares (lsq.rs) solves them together. A host-timed kernel cannot tell
//! launch from sync: the fit splits their sum evenly. A load-store throughput is turned into
//! the fraction of the measured pair's path (on the machine) that it reaches.

use super::lsq::nnls;
use crate::csv::Csv;
use crate::datatype::{KernelParams, PathClass};
use crate::error::{Error, Result};
use crate::flow::methods::class;
use crate::model::maxmin;
use crate::topology::Machine;
use crate::units::{Bytes, Time};
use crate::workload::{Transfer, Workload};
use serde::Serialize;
use std::collections::BTreeMap;

const KINDS: [&str; 3] = ["pack", "unpack", "load-store"];

#[derive(Clone, Debug)]
pub struct Point {
    pub kernel: usize,
    pub block: f64,
    pub bytes: f64,
    pub seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct KernelResidual {
    pub kernel: String,
    pub block_bytes: f64,
    pub bytes: f64,
    pub measured_s: f64,
    pub predicted_s: f64,
    pub relative_error: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct KernelFit {
    /// The fitted terms with units, as `--kernel` or a transfers file's `kernels:` take them
    /// (terms the measurements do not cover keep their defaults).
    pub kernels: BTreeMap<String, String>,
    /// The terms the measurements determined.
    pub fitted: Vec<String>,
    /// Link class of the measured pair's path, and its capacity (bytes/s) under maxmin.
    pub path_class: PathClass,
    pub path_bps: f64,
    pub rms_relative_error: f64,
    pub residuals: Vec<KernelResidual>,
}

pub fn parse_csv(text: &str, origin: &str) -> Result<Vec<Point>> {
    const EXPECTED: &str = "kernel,block,bytes,time";
    let csv = Csv::read(text, origin, EXPECTED)?;
    let col = |name: &str| csv.need(name, origin, EXPECTED);
    let (k, b, n, t) = (col("kernel")?, col("block")?, col("bytes")?, col("time")?);
    let mut out = Vec::new();
    for (line, f) in &csv.rows {
        let at = format!("line {line}");
        let kernel = KINDS
            .iter()
            .position(|&x| x == &*f[k])
            .ok_or_else(|| Error::input(origin, &at, format!("kernel \"{}\" is not pack, unpack or load-store", f[k])))?;
        let bytes = |s: &str, what: &str| {
            Bytes::parse(s)
                .ok()
                .filter(|b| b.0 > 0)
                .map(|b| b.as_f64())
                .ok_or_else(|| Error::input(origin, &at, format!("{what} \"{s}\" is not a positive size with a unit, e.g. 8B")))
        };
        let (block, total) = (bytes(&f[b], "block")?, bytes(&f[n], "bytes")?);
        if block > total {
            return Err(Error::input(origin, &at, format!("block {} is larger than bytes {}; a message holds whole blocks", f[b], f[n])));
        }
        let seconds = Time::parse(&f[t])
            .ok()
            .filter(|t| t.0 > 0)
            .ok_or_else(|| Error::input(origin, &at, format!("time \"{}\" is not a positive time with a unit, e.g. 12.5us", f[t])))?
            .secs();
        out.push(Point { kernel, block, bytes: total, seconds });
    }
    if out.len() < 3 {
        return Err(Error::input(origin, "", format!("has {} measurements; give at least 3 (two block sizes per kernel)", out.len())));
    }
    Ok(out)
}

/// The path of `src` → `dst` alone under maxmin's defaults: its class and its rate.
fn path(m: &Machine, src: &str, dst: &str) -> Result<(PathClass, f64)> {
    let dev = |n: &str, flag: &str| m.device(n).ok_or_else(|| Error::input(flag, n, format!("is not a device of {}; {}", m.name, m.endpoint_hint())));
    let t = Transfer { name: "probe".into(), src: dev(src, "SRC")?, dst: dev(dst, "DST")?, size: 1, ..Default::default() };
    let w = Workload { transfers: vec![t], origin: "calibration".into(), ..Default::default() };
    let p = maxmin::MaxminPrepared::new(m, &w, maxmin::MaxminParams::default())?;
    let f = &p.flows;
    let rate = f.route(0).iter().map(|&(r, x)| f.cap[r as usize] / x).fold(f64::INFINITY, f64::min);
    Ok((class(m, f.plan(0)), rate))
}

pub fn fit(m: &Machine, src: &str, dst: &str, points: &[Point], origin: &str) -> Result<KernelFit> {
    let (class_, capacity) = path(m, src, dst)?;
    // Unknowns: shared launch + sync, then (1/bw, block/bw) per kernel kind. Columns are
    // scaled to unit size so that the ridge and the solver see comparable numbers.
    let row = |p: &Point| {
        let mut r = vec![0.0; 7];
        r[0] = 1.0;
        r[1 + 2 * p.kernel] = p.bytes;
        r[2 + 2 * p.kernel] = p.bytes / p.block;
        r
    };
    let rows: Vec<Vec<f64>> = points.iter().map(row).collect();
    let scale: Vec<f64> = (0..7).map(|j| rows.iter().map(|r| r[j].abs()).fold(0.0, f64::max).max(1e-300)).collect();
    // Relative least squares: every point weighs by its own time.
    let a: Vec<Vec<f64>> = rows.iter().zip(points).map(|(r, p)| r.iter().zip(&scale).map(|(x, s)| x / s / p.seconds).collect()).collect();
    let b: Vec<f64> = vec![1.0; points.len()];
    let z = nnls(&a, &b, 1e-9);
    let x: Vec<f64> = z.iter().zip(&scale).map(|(z, s)| z / s).collect();
    let present = |k: usize| points.iter().any(|p| p.kernel == k);
    for k in 0..3 {
        if present(k) && x[1 + 2 * k] <= 0.0 {
            return Err(Error::input(origin, "", format!("the {} times do not grow with bytes; measure larger messages", KINDS[k])));
        }
    }
    let mut kp = KernelParams { launch: x[0] / 2.0, sync: x[0] / 2.0, ..Default::default() };
    let mut fitted = vec!["launch".to_string(), "sync".to_string()];
    if present(0) {
        (kp.pack_bw, kp.pack_block) = (1.0 / x[1], x[2] / x[1]);
        fitted.extend(["pack_bw".into(), "pack_block".into()]);
    }
    if present(1) {
        (kp.unpack_bw, kp.unpack_block) = (1.0 / x[3], x[4] / x[3]);
        fitted.extend(["unpack_bw".into(), "unpack_block".into()]);
    }
    if present(2) {
        let (bw, block) = (1.0 / x[5], x[6] / x[5]);
        let eff = (bw / capacity).min(1.0);
        match class_ {
            PathClass::Nvlink => (kp.ls_eff_nvlink, kp.ls_block_nvlink) = (eff, block),
            PathClass::Pcie => (kp.ls_eff_pcie, kp.ls_block_pcie) = (eff, block),
        }
        let name = if class_ == PathClass::Nvlink { "nvlink" } else { "pcie" };
        fitted.extend([format!("ls_eff_{name}"), format!("ls_block_{name}")]);
    }
    let residuals: Vec<KernelResidual> = points
        .iter()
        .zip(&rows)
        .map(|(p, r)| {
            let predicted: f64 = r.iter().zip(&x).map(|(a, b)| a * b).sum();
            KernelResidual {
                kernel: KINDS[p.kernel].into(),
                block_bytes: p.block,
                bytes: p.bytes,
                measured_s: p.seconds,
                predicted_s: predicted,
                relative_error: predicted / p.seconds - 1.0,
            }
        })
        .collect();
    let rms = (residuals.iter().map(|r| r.relative_error.powi(2)).sum::<f64>() / residuals.len() as f64).sqrt();
    Ok(KernelFit { kernels: kp.to_map(), fitted, path_class: class_, path_bps: capacity, rms_relative_error: rms, residuals })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Message;

    /// Measurements made by the model itself come back as the model's terms.
    #[test]
    fn synthetic_measurements_recover_the_terms() {
        let m = Machine::load("dgx1-p100").unwrap();
        let truth = KernelParams {
            launch: 3e-6,
            sync: 3e-6,
            pack_bw: 300e9,
            pack_block: 40.0,
            unpack_bw: 200e9,
            unpack_block: 24.0,
            ls_eff_nvlink: 0.7,
            ls_block_nvlink: 48.0,
            ..Default::default()
        };
        let (_, cap) = path(&m, "GPU0", "GPU1").unwrap();
        let mut csv = String::from("kernel,block,bytes,time\n");
        for block in [8u64, 64, 512, 4096] {
            for bytes in [1u64 << 16, 1 << 20, 1 << 24] {
                let msg = Message { count: 1, bytes, blocks: bytes / block, mean_block_bytes: block as f64 };
                let fixed = truth.launch + truth.sync;
                let ls = bytes as f64 / truth.load_store_bps(&msg, PathClass::Nvlink, cap);
                for (k, t) in [("pack", truth.pack_s(&msg)), ("unpack", truth.unpack_s(&msg)), ("load-store", ls)] {
                    csv.push_str(&format!("{k},{block}B,{bytes}B,{}ps\n", ((fixed + t) * 1e12).round()));
                }
            }
        }
        let pts = parse_csv(&csv, "m.csv").unwrap();
        let f = fit(&m, "GPU0", "GPU1", &pts, "m.csv").unwrap();
        assert!(f.rms_relative_error < 1e-3, "{}", f.rms_relative_error);
        assert_eq!(f.path_class, PathClass::Nvlink);
        let k = KernelParams::parse(&f.kernels.iter().map(|(a, b)| (a.clone(), b.clone())).collect::<Vec<_>>()).unwrap();
        let close = |a: f64, b: f64, tol: f64| (a / b - 1.0).abs() < tol;
        assert!(close(k.pack_bw, 300e9, 1e-2) && close(k.unpack_bw, 200e9, 1e-2), "{k:?}");
        assert!(close(k.pack_block, 40.0, 0.05) && close(k.ls_eff_nvlink, 0.7, 0.02) && close(k.ls_block_nvlink, 48.0, 0.1), "{k:?}");
        assert!(close(k.launch + k.sync, 6e-6, 1e-2), "{k:?}");
    }

    #[test]
    fn bad_rows_get_one_line() {
        for (csv, needle) in [
            ("kernel,block,bytes,time\npack,8B,1MiB\n", "line 2: has 3 fields"),
            ("kernel,block,bytes,time\nsqueeze,8B,1MiB,3us\n", "not pack, unpack or load-store"),
            ("kernel,block,bytes,time\npack,8,1MiB,3us\n", "block \"8\""),
            ("kernel,block,bytes\n", "no column \"time\""),
            ("kernel,block,bytes,time\npack,2MiB,1MiB,3us\n", "larger than bytes"),
        ] {
            let e = parse_csv(csv, "m.csv").unwrap_err().to_string();
            assert!(e.contains(needle) && !e.contains('\n'), "{needle}: {e}");
        }
    }
}
