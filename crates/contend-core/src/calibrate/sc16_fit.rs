//! Fitting the sc16 parameters bandwidth (B) and tau to measured transfer graphs, as the SC16 authors did
//! on 22,259 graphs. Under sc16 every duration scales exactly as 1/B, so for each tau the best B
//! has a closed form; tau is found by a grid search refined by golden sections.

use crate::csv::Csv;
use crate::error::{Error, Result};
use crate::model::sc16::{Sc16Params, Sc16Prepared};
use crate::sim;
use crate::topology::Machine;
use crate::units::{Bytes, Time};
use crate::workload::{TransferSpec, Workload, WorkloadSpec};
use serde::Serialize;

/// Transfers of one graph start together; `time` is each one's measured duration.
#[derive(Clone, Debug)]
pub struct MeasuredGraph {
    pub name: String,
    pub spec: WorkloadSpec,
    pub seconds: Vec<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Sc16Residual {
    pub graph: String,
    pub src: String,
    pub dst: String,
    pub measured_s: f64,
    pub predicted_s: f64,
    pub relative_error: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Sc16Fit {
    /// Fitted reference bandwidth, e.g. "11.6GiB/s".
    pub bandwidth: String,
    pub bandwidth_bps: f64,
    pub tau: f64,
    pub rms_relative_error: f64,
    /// Share of transfers predicted within ±15% (the paper's accuracy measure).
    pub within_15_percent: f64,
    pub residuals: Vec<Sc16Residual>,
}

/// CSV with a header naming the columns graph, src, dst, size, time (any order); sizes and
/// times carry units ("300MiB", "36.9ms").
pub fn parse_csv(text: &str, origin: &str) -> Result<Vec<MeasuredGraph>> {
    const EXPECTED: &str = "graph,src,dst,size,time";
    let csv = Csv::read(text, origin, EXPECTED)?;
    let col = |name: &str| csv.need(name, origin, EXPECTED);
    // A CSV with neither a pattern nor a graph column comes here (api::MeasurementFormat), most
    // often a pattern CSV whose first column is misnamed or missing: name both formats.
    let g = csv.find("graph").ok_or_else(|| {
        Error::input(origin, "line 1", "no column \"pattern\" or \"graph\"; the header needs pattern,src,dst,size and time or bandwidth (measured patterns, any concurrent test), or graph,src,dst,size,time (sc16's bandwidth and tau)")
    })?;
    let (s, d, z, t) = (col("src")?, col("dst")?, col("size")?, col("time")?);
    csv.require_rows(origin)?;
    let mut graphs: Vec<MeasuredGraph> = Vec::new();
    for (line, f) in &csv.rows {
        let at = format!("line {line}");
        let size = Bytes::parse(&f[z]).map_err(|e| Error::input(origin, format!("{at}: size"), e))?;
        let time = Time::parse(&f[t]).map_err(|e| Error::input(origin, format!("{at}: time"), e))?;
        if time.0 == 0 {
            return Err(Error::input(origin, format!("{at}: time"), "is zero; give the measured duration"));
        }
        let k = match graphs.iter().position(|x| x.name == f[g]) {
            Some(k) => k,
            None => {
                graphs.push(MeasuredGraph { name: f[g].to_string(), spec: WorkloadSpec::default(), seconds: vec![] });
                graphs.len() - 1
            }
        };
        graphs[k].spec.transfers.push(TransferSpec { src: f[s].to_string(), dst: f[d].to_string(), size, ..Default::default() });
        graphs[k].seconds.push(time.secs());
    }
    Ok(graphs)
}

/// Durations of every transfer at bandwidth 1 byte/s and this tau (scale by 1/B for any B).
fn unit_durations(m: &Machine, graphs: &[(Workload, &MeasuredGraph)], base: &Sc16Params, tau: f64) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for (w, _) in graphs {
        let o = sim::run_prepared(w, &Sc16Prepared::new(m, w, Sc16Params { tau, bandwidth: Some(1.0), ..*base })?, false)?;
        out.extend(o.finish.iter().zip(&o.start).map(|(f, s)| f - s));
    }
    Ok(out)
}

/// Best 1/B for these durations, and the sum of squared relative errors it leaves.
fn best_scale(unit: &[f64], measured: &[f64]) -> (f64, f64) {
    let a: Vec<f64> = unit.iter().zip(measured).map(|(u, m)| u / m).collect();
    let (s1, s2): (f64, f64) = (a.iter().sum(), a.iter().map(|x| x * x).sum());
    let x = s1 / s2;
    (x, a.iter().map(|ai| (ai * x - 1.0).powi(2)).sum())
}

pub fn fit(m: &Machine, graphs: &[MeasuredGraph], base: &Sc16Params, origin: &str) -> Result<Sc16Fit> {
    let resolved: Vec<(Workload, &MeasuredGraph)> =
        graphs.iter().map(|g| Workload::resolve(&g.spec, m, &format!("{origin} (graph {})", g.name)).map(|w| (w, g))).collect::<Result<_>>()?;
    let measured: Vec<f64> = graphs.iter().flat_map(|g| g.seconds.iter().copied()).collect();
    let cost = |tau: f64| -> Result<f64> { Ok(best_scale(&unit_durations(m, &resolved, base, tau)?, &measured).1) };
    // tau beyond 0.5 starves a root-crossing group at a two-way port; the grid covers [0, 0.5].
    let grid: Vec<f64> = (0..=50).map(|k| k as f64 * 0.01).collect();
    let mut best = (f64::INFINITY, 0.0);
    for &tau in &grid {
        let c = cost(tau)?;
        if c < best.0 {
            best = (c, tau);
        }
    }
    // Refined to within 1e-8 (about 30 golden sections of the grid's 0.02 around its best).
    let refined = super::golden::golden_min((best.1 - 0.01).max(0.0), (best.1 + 0.01).min(0.5), 1e-8, &cost)?;
    let tau = if cost(refined)? <= best.0 { refined } else { best.1 };
    let unit = unit_durations(m, &resolved, base, tau)?;
    let (x, sse) = best_scale(&unit, &measured);
    let bandwidth_bps = 1.0 / x;
    let mut residuals = Vec::new();
    let mut k = 0;
    for (w, g) in &resolved {
        for t in &w.transfers {
            let predicted_s = unit[k] * x;
            residuals.push(Sc16Residual {
                graph: g.name.clone(),
                src: m.devices[t.src].name.clone(),
                dst: m.devices[t.dst].name.clone(),
                measured_s: measured[k],
                predicted_s,
                relative_error: predicted_s / measured[k] - 1.0,
            });
            k += 1;
        }
    }
    let n = residuals.len() as f64;
    Ok(Sc16Fit {
        bandwidth: format!("{:.4}GiB/s", bandwidth_bps / 1073741824.0),
        bandwidth_bps,
        tau,
        rms_relative_error: (sse / n).sqrt(),
        within_15_percent: residuals.iter().filter(|r| r.relative_error.abs() <= 0.15).count() as f64 / n,
        residuals,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::random_graph;

    /// Measurements made by sc16 itself with known B and tau must give them back.
    #[test]
    fn recovers_known_parameters() {
        let m = Machine::load("cs-storm-socket").unwrap();
        let truth = Sc16Params { tau: 0.1735, bandwidth: Some(11.6 * 1073741824.0), ..Default::default() };
        let mut csv = String::from("graph,src,dst,size,time\n");
        for seed in 0..40u64 {
            let spec = WorkloadSpec { transfers: random_graph(&m.gpu_names(), 2 + (seed as usize % 5), Bytes(300 << 20), seed), ..Default::default() };
            let w = Workload::resolve(&spec, &m, "g").unwrap();
            let o = sim::run_prepared(&w, &Sc16Prepared::new(&m, &w, truth).unwrap(), false).unwrap();
            for (t, f) in spec.transfers.iter().zip(&o.finish) {
                csv.push_str(&format!("g{seed},{},{},300MiB,{:.3}us\n", t.src, t.dst, f * 1e6));
            }
        }
        let graphs = parse_csv(&csv, "m.csv").unwrap();
        let fit = fit(&m, &graphs, &Sc16Params::default(), "m.csv").unwrap();
        assert!((fit.tau - 0.1735).abs() < 1e-3, "{}", fit.tau);
        assert!((fit.bandwidth_bps / truth.bandwidth.unwrap() - 1.0).abs() < 1e-4, "{}", fit.bandwidth);
        assert!(fit.rms_relative_error < 1e-4 && fit.within_15_percent == 1.0);
    }

    #[test]
    fn bad_rows_name_the_line() {
        let e = parse_csv("graph,src,dst,size,time\ng,GPU0,GPU1,300,1ms\n", "m.csv").unwrap_err().to_string();
        assert!(e.starts_with("m.csv: line 2: size") && e.contains("no unit"), "{e}");
        let e = parse_csv("graph,src,size,time\n", "m.csv").unwrap_err().to_string();
        assert!(e.contains("no column \"dst\""), "{e}");
        // A pattern CSV without its pattern column was told only of sc16's graph format.
        let e = parse_csv("src,dst,size,bandwidth\nGPU0,GPU1,1GiB,85GB/s\n", "m.csv").unwrap_err().to_string();
        assert!(e.starts_with("m.csv: line 1: no column \"pattern\" or \"graph\"; the header needs pattern,src,dst,size and time or bandwidth"), "{e}");
    }
}
