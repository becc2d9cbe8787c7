//! The phase engine: between two events (a start or a finish) the set of active transfers is
//! fixed, so every rate is constant; the model gives the rates, the engine advances time.

use crate::error::{Error, Result};
use crate::model::RateModel;
use crate::workload::Workload;

/// A maximal interval in which the active set does not change.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub start: f64,
    pub end: f64,
    pub active: Vec<usize>,
    /// Bytes per second of `active[k]`.
    pub rates: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub start: Vec<f64>,
    pub finish: Vec<f64>,
    pub phases: Vec<Phase>,
}

impl Outcome {
    pub fn makespan(&self) -> f64 {
        self.finish.iter().copied().fold(0.0, f64::max)
    }
}

/// A transfer with this fraction of its bytes left has finished (guards float round-off).
const DONE: f64 = 1e-9;

/// Run the workload to completion under `model`; with `record`, keep every phase.
pub fn run(w: &Workload, model: &mut dyn RateModel, record: bool) -> Result<Outcome> {
    let n = w.transfers.len();
    let size: Vec<f64> = w.transfers.iter().map(|t| t.size as f64).collect();
    let mut remaining = size.clone();
    let mut deps_left: Vec<usize> = w.transfers.iter().map(|t| t.after.len()).collect();
    let mut dependents = vec![Vec::new(); n];
    for (i, t) in w.transfers.iter().enumerate() {
        for &j in &t.after {
            dependents[j].push(i);
        }
    }
    let mut ready_at: Vec<f64> = w.transfers.iter().map(|t| t.start).collect();
    let mut waiting: Vec<usize> = (0..n).filter(|&i| deps_left[i] == 0).collect();
    let mut active: Vec<usize> = Vec::with_capacity(n);
    let mut rates: Vec<f64> = Vec::with_capacity(n);
    let mut out = Outcome { start: vec![f64::NAN; n], finish: vec![f64::NAN; n], phases: Vec::new() };
    let mut t = 0.0f64;
    let mut done = 0usize;
    while done < n {
        // Admit every waiting transfer whose time has come.
        let before = active.len();
        waiting.retain(|&i| {
            if ready_at[i] <= t {
                out.start[i] = t;
                active.push(i);
                false
            } else {
                true
            }
        });
        if active.len() != before {
            active.sort_unstable();
        }
        let next_start = waiting.iter().map(|&i| ready_at[i]).fold(f64::INFINITY, f64::min);
        if active.is_empty() {
            if next_start.is_finite() {
                t = next_start;
                continue;
            }
            return Err(Error::Runtime("transfers are left that can never start (dependency bookkeeping)".into()));
        }
        rates.resize(active.len(), 0.0);
        model.rates(&active, &mut rates);
        let mut dt = active
            .iter()
            .zip(&rates)
            .filter(|(_, &r)| r > 0.0)
            .map(|(&i, &r)| remaining[i] / r)
            .fold(f64::INFINITY, f64::min);
        if !dt.is_finite() && !next_start.is_finite() {
            return Err(Error::Runtime(format!(
                "the model gives every active transfer zero bandwidth at t = {t} s, so nothing can finish"
            )));
        }
        let until_start = next_start - t;
        let ends_by_start = until_start < dt;
        if ends_by_start {
            dt = until_start;
        }
        let end = if ends_by_start { next_start } else { t + dt };
        if record {
            out.phases.push(Phase { start: t, end, active: active.clone(), rates: rates.clone() });
        }
        let mut k = 0;
        let mut finished_any = false;
        while k < active.len() {
            let i = active[k];
            remaining[i] -= rates[k] * dt;
            if remaining[i] <= DONE * size[i] {
                remaining[i] = 0.0;
                out.finish[i] = end;
                done += 1;
                finished_any = true;
                for &d in &dependents[i] {
                    deps_left[d] -= 1;
                    if deps_left[d] == 0 {
                        ready_at[d] = ready_at[d].max(end);
                        waiting.push(d);
                    }
                }
                active.remove(k);
                rates.remove(k);
            } else {
                k += 1;
            }
        }
        if !finished_any && !ends_by_start {
            return Err(Error::Runtime(format!("no transfer finished at t = {end} s although one should have")));
        }
        t = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sc16::{Sc16Model, Sc16Params};
    use crate::topology::Machine;
    use crate::workload::{random_graph, Workload, WorkloadSpec};
    use crate::units::Bytes;

    const MIB: f64 = 1048576.0;
    const GIB: f64 = 1073741824.0;

    fn simulate(text: &str, tau: f64) -> (Workload, Outcome) {
        let m = Machine::load("cs-storm-socket").unwrap();
        let w = Workload::resolve(&WorkloadSpec::from_text(text, "w").unwrap(), &m, "w").unwrap();
        let mut model = Sc16Model::new(&m, &w, Sc16Params { tau, ..Default::default() }).unwrap();
        let o = run(&w, &mut model, true).unwrap();
        (w, o)
    }

    const EXAMPLE: &str = "transfers:\n  - {src: GPU0, dst: GPU2, size: 300MiB}\n  - {src: GPU1, dst: GPU4, size: 300MiB}\n  - {src: GPU3, dst: GPU2, size: 300MiB}\n  - {src: GPU6, dst: GPU4, size: 300MiB}\n";

    fn ms(x: f64) -> f64 {
        (x * 1e5).round() / 100.0
    }

    #[test]
    fn worked_example_finish_times() {
        let (_, o) = simulate(EXAMPLE, 0.2);
        let f: Vec<f64> = o.finish.iter().map(|&x| ms(x)).collect();
        assert_eq!(f, [64.94, 64.94, 36.08, 36.08]);
        assert_eq!(o.phases.len(), 2);
        // Exact: phase 1 = 300 MiB / (0.7 B); total = (1/B)(128.57/0.3 + 171.43/0.5) MiB.
        let b = 11.6 * GIB;
        let p1 = 300.0 * MIB / (0.7 * b);
        assert!((o.finish[2] - p1).abs() < 1e-12);
        let sent = 0.3 * b * p1;
        let total = p1 + (300.0 * MIB - sent) / (0.5 * b);
        assert!((o.finish[0] - total).abs() < 1e-12);
        let (_, o) = simulate(EXAMPLE, 0.1735);
        let f: Vec<f64> = o.finish.iter().map(|&x| ms(x)).collect();
        assert_eq!(f, [63.52, 63.52, 37.50, 37.50]);
    }

    #[test]
    fn lone_transfer_takes_size_over_b() {
        let (_, o) = simulate("transfers:\n  - {src: GPU1, dst: GPU6, size: 300MiB}\n", 0.1735);
        assert_eq!(o.finish[0], 300.0 * MIB / (11.6 * GIB));
        assert!((o.finish[0] * 1e3 - 25.26).abs() < 0.005);
    }

    #[test]
    fn starts_and_dependencies() {
        let text = "transfers:\n  - {name: a, src: GPU0, dst: GPU1, size: 300MiB}\n  - {name: b, src: GPU1, dst: GPU2, size: 300MiB, after: [a]}\n  - {name: c, src: GPU5, dst: GPU4, size: 300MiB, start: 100ms}\n";
        let (_, o) = simulate(text, 0.1735);
        let t = 300.0 * MIB / (11.6 * GIB);
        assert!((o.start[1] - t).abs() < 1e-15);
        assert!((o.finish[1] - 2.0 * t).abs() < 1e-12);
        assert_eq!(o.start[2], 0.1);
        assert!((o.finish[2] - 0.1 - t).abs() < 1e-12);
    }

    /// Invariants of docs/models.md, on seeded random graphs with staggered starts.
    #[test]
    fn invariants_on_random_graphs() {
        let m = Machine::load("cs-storm-socket").unwrap();
        let gpus = m.gpu_names();
        for seed in 0..200u64 {
            let count = 1 + (seed as usize * 7) % 40;
            let mut spec = WorkloadSpec { transfers: random_graph(&gpus, count, Bytes(64 << 20), seed) };
            let mut rng = crate::workload::generate_rng(seed);
            for t in spec.transfers.iter_mut() {
                t.size = Bytes(1 + (rng.unit() * 300.0 * MIB) as u64);
                if rng.unit() < 0.3 {
                    t.start = Some(crate::units::Time::from_secs(rng.unit() * 0.02));
                }
            }
            let w = Workload::resolve(&spec, &m, "r").unwrap();
            let mut model = Sc16Model::new(&m, &w, Sc16Params::default()).unwrap();
            let o = run(&w, &mut model, true).unwrap();
            let b = model.eval.params.bandwidth;
            let mut sent = vec![0.0; w.transfers.len()];
            for p in &o.phases {
                assert!(p.end > p.start);
                for (&i, &r) in p.active.iter().zip(&p.rates) {
                    let f = r / b;
                    assert!((0.0..=1.0 + 1e-12).contains(&f), "factor {f} out of [0, 1]");
                    sent[i] += r * (p.end - p.start);
                }
                // No directed link carries more than B in total.
                let mut load = vec![0.0; model.links().len()];
                for (&i, &r) in p.active.iter().zip(&p.rates) {
                    for &l in model.route(i) {
                        load[l as usize] += r;
                    }
                }
                assert!(load.iter().all(|&x| x <= b * (1.0 + 1e-9)), "link over capacity: {load:?}");
            }
            for (i, t) in w.transfers.iter().enumerate() {
                let rel = (sent[i] - t.size as f64).abs() / t.size as f64;
                assert!(rel < 1e-6, "bytes not conserved for {i}: {} vs {}", sent[i], t.size);
                assert!(o.finish[i] >= o.start[i] + t.size as f64 / b * (1.0 - 1e-9), "faster than B");
                assert!(o.start[i] >= t.start);
            }
        }
    }
}
