//! Where a message's time goes, flow level against packet level, on the seed-003 fabrics
//! (issue 23: diagnosing the 64 KiB disagreement).
//!   diag_cluster FABRIC TRAFFIC COUNT SPEC [SPEC ...]
//! Each SPEC is `MODEL` or `MODEL:k=v,k=v`; keys `routing`, `nic` and `seed` set the machine's
//! network.routing, network.nic_scheduling and network.seed, the others are the model's --params. The first
//! SPEC is the reference. Per SPEC: per-message |x - ref| / ref (median, p90), signed median,
//! makespan; and per SPEC the median and p90 of each message's time beyond its lone time
//! (the same message alone on the machine under the reference), in units of the lone time.
//!   diag_cluster FABRIC TRAFFIC COUNT queued SPEC [SPEC ...]
//! splits the messages by whether, under the first SPEC, an earlier message of the same source
//! node was still in flight when they were issued (they queued at a NIC), and gives per class
//! each further SPEC's distance to the first.
//! TRAFFIC as bench_cluster's.

use contend_core::api::{self, GenerateRequest};
use contend_core::report::Detail;
use contend_core::topology::Machine;
use contend_core::workload::WorkloadSpec;

fn workload(m: &Machine, traffic: &str, count: usize) -> WorkloadSpec {
    let (pattern, size) = traffic.split_once('-').expect("TRAFFIC is permutation-SIZE or uniform-SIZE");
    let req = match pattern {
        "permutation" => GenerateRequest { pattern: "permutation".into(), size: size.into(), count: 1, seed: 1, ..Default::default() },
        "uniform" => GenerateRequest { pattern: "random".into(), size: size.into(), count, seed: 1, gap: Some("5ns".into()), ..Default::default() },
        other => panic!("unknown traffic {other}"),
    };
    api::generate(m, &req).unwrap()
}

struct Spec {
    model: String,
    machine: Machine,
    params: Vec<(String, String)>,
}

fn spec(base: &Machine, s: &str) -> Spec {
    let (model, rest) = s.split_once(':').unwrap_or((s, ""));
    let mut machine = base.clone();
    let mut params = Vec::new();
    for kv in rest.split(',').filter(|p| !p.is_empty()) {
        let (k, v) = kv.split_once('=').expect("k=v");
        match k {
            "routing" => machine.network.routing = serde_yaml::from_str(v).unwrap(),
            "nic" => machine.network.nic_scheduling = serde_yaml::from_str(v).unwrap(),
            "seed" => machine.network.seed = v.parse().unwrap(),
            _ => params.push((k.to_string(), v.to_string())),
        }
    }
    Spec { model: model.into(), machine, params }
}

fn q(v: &mut [f64], x: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * x) as usize]
}

/// The reference's own spread: `packet` under network.seed 0 against the per-message mean of
/// `packet` under seeds 1..=k (the same traffic; only the routing's random choices differ).
/// A deterministic model at best predicts that mean, so the distance from the mean to one run
/// bounds from below what any such model can reach against that run. Each further SPEC (as
/// in the main mode) is measured against seed 0 and against the mean.
fn oracle(fabric: &str, traffic: &str, base: &Machine, w: &WorkloadSpec, k: u64, specs: &[String]) {
    let at = |seed: u64| {
        let mut m = base.clone();
        m.network.seed = seed;
        api::simulate(&m, w, "diag", Some("packet"), &[], Detail::default()).unwrap().transfers.duration_s
    };
    let run0 = at(base.network.seed);
    let others: Vec<Vec<f64>> = (1..=k).map(|s| at(base.network.seed + s)).collect();
    let mean: Vec<f64> = (0..run0.len()).map(|i| others.iter().map(|o| o[i]).sum::<f64>() / k as f64).collect();
    let row = |label: &str, d: &[f64], against: &[f64]| {
        let mut rel: Vec<f64> = d.iter().zip(against).map(|(x, p)| (x - p).abs() / p * 100.0).collect();
        let mut signed: Vec<f64> = d.iter().zip(against).map(|(x, p)| (x - p) / p * 100.0).collect();
        println!("{fabric} {traffic} {label:<52} median {:5.1}% p90 {:5.1}% signed {:+6.1}%", q(&mut rel, 0.5), q(&mut rel, 0.9), q(&mut signed, 0.5));
    };
    row(&format!("packet seed mean of {k} vs packet"), &mean, &run0);
    for o in others.iter().take(2) {
        row("packet other seed vs packet", o, &run0);
    }
    for s in specs {
        let sp = spec(base, s);
        let d = api::simulate(&sp.machine, w, "diag", Some(sp.model.as_str()), &sp.params, Detail::default()).unwrap().transfers.duration_s;
        row(&format!("{s} vs packet"), &d, &run0);
        row(&format!("{s} vs seed mean"), &d, &mean);
    }
}

/// Messages around the one at the 90th percentile of (second SPEC - first SPEC) / first:
/// every message of its source and every message to its destination, with both durations.
fn trace(base: &Machine, w: &WorkloadSpec, specs: &[String]) {
    let run = |s: &str| {
        let sp = spec(base, s);
        api::simulate(&sp.machine, w, "diag", Some(sp.model.as_str()), &sp.params, Detail::default()).unwrap().transfers
    };
    let (a, b) = (run(&specs[0]), run(&specs[1]));
    let mut order: Vec<usize> = (0..a.duration_s.len()).collect();
    order.sort_by(|&i, &j| ((b.duration_s[i] - a.duration_s[i]) / a.duration_s[i]).total_cmp(&((b.duration_s[j] - a.duration_s[j]) / a.duration_s[j])));
    for pick in [0.9, 0.5, 0.1] {
        let i = order[((order.len() - 1) as f64 * pick) as usize];
        println!("-- message {i} at the {pick} quantile: {} -> {}", a.src[i], a.dst[i]);
        let node = |d: &str| d.split('.').next().unwrap().to_string();
        for j in 0..a.duration_s.len() {
            let from = node(&a.src[j]) == node(&a.src[i]);
            let to = node(&a.dst[j]) == node(&a.dst[i]);
            if from || to {
                println!(
                    "  {}{} {:>6} {} -> {}  issue {:8.3} us  {}: {:7.3} us  {}: {:7.3} us",
                    if from { "S" } else { " " },
                    if to { "D" } else { " " },
                    j,
                    a.src[j],
                    a.dst[j],
                    a.start_s[j] * 1e6,
                    specs[0],
                    a.duration_s[j] * 1e6,
                    specs[1],
                    b.duration_s[j] * 1e6
                );
            }
        }
    }
}

/// Messages that found an earlier message of their source node in flight under the reference
/// (they queue at a FCFS NIC) against those that did not: count, and per further SPEC the
/// median and p90 of |x − ref| / ref and the signed median, per class.
fn queued(fabric: &str, traffic: &str, base: &Machine, w: &WorkloadSpec, specs: &[String]) {
    let run = |s: &str| {
        let sp = spec(base, s);
        api::simulate(&sp.machine, w, "diag", Some(sp.model.as_str()), &sp.params, Detail::default()).unwrap().transfers
    };
    let r = run(&specs[0]);
    let node = |d: &str| d.split('.').next().unwrap().to_string();
    let mut busy_until: std::collections::HashMap<String, f64> = std::collections::HashMap::new();
    let mut order: Vec<usize> = (0..r.duration_s.len()).collect();
    order.sort_by(|&i, &j| r.start_s[i].total_cmp(&r.start_s[j]).then(i.cmp(&j)));
    let mut held = vec![false; r.duration_s.len()];
    for &i in &order {
        let until = busy_until.entry(node(&r.src[i])).or_insert(f64::NEG_INFINITY);
        held[i] = r.start_s[i] < *until;
        *until = until.max(r.start_s[i] + r.duration_s[i]);
    }
    let nq = held.iter().filter(|&&x| x).count();
    println!("{fabric} {traffic}: {nq} of {} messages queued behind an earlier one of their node under {}", held.len(), specs[0]);
    for s in &specs[1..] {
        let d = run(s).duration_s;
        for class in [true, false] {
            let mut rel: Vec<f64> = (0..d.len()).filter(|&i| held[i] == class).map(|i| (d[i] - r.duration_s[i]).abs() / r.duration_s[i] * 100.0).collect();
            let mut signed: Vec<f64> = (0..d.len()).filter(|&i| held[i] == class).map(|i| (d[i] - r.duration_s[i]) / r.duration_s[i] * 100.0).collect();
            if rel.is_empty() {
                continue;
            }
            println!(
                "  {s:<44} {:<10} n {:6} median {:5.1}% p90 {:5.1}% signed {:+6.1}%",
                if class { "queued" } else { "not queued" },
                rel.len(),
                q(&mut rel, 0.5),
                q(&mut rel, 0.9),
                q(&mut signed, 0.5)
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [fabric, traffic, count, specs @ ..] = &args[..] else { panic!("usage: diag_cluster FABRIC TRAFFIC COUNT SPEC...") };
    let base = Machine::load(fabric).unwrap();
    let w = workload(&base, traffic, count.parse().unwrap());
    if specs[0] == "queued" {
        return queued(fabric, traffic, &base, &w, &specs[1..]);
    }
    if specs[0] == "trace" {
        return trace(&base, &w, &specs[1..]);
    }
    if let Some(k) = specs[0].strip_prefix("oracle:") {
        return oracle(fabric, traffic, &base, &w, k.parse().unwrap(), &specs[1..]);
    }
    let specs: Vec<Spec> = specs.iter().map(|s| spec(&base, s)).collect();
    let runs: Vec<_> = specs.iter().map(|s| api::simulate(&s.machine, &w, "diag", Some(s.model.as_str()), &s.params, Detail::default()).unwrap()).collect();
    // Lone times under the reference: each distinct (src, dst) once, with the message alone.
    let r0 = &specs[0];
    // At most 256 messages, evenly spaced (each lone run rebuilds the flow table).
    let step = w.transfers.len().div_ceil(256);
    let sample: Vec<usize> = (0..w.transfers.len()).step_by(step).collect();
    let mut lone = Vec::with_capacity(sample.len());
    let mut memo = std::collections::HashMap::new();
    for t in sample.iter().map(|&i| &w.transfers[i]) {
        let key = (t.src.clone(), t.dst.clone(), t.size.0);
        let d = *memo.entry(key).or_insert_with(|| {
            let one = WorkloadSpec { transfers: vec![contend_core::workload::TransferSpec { start: None, ..t.clone() }], ..Default::default() };
            api::simulate(&r0.machine, &one, "diag", Some(r0.model.as_str()), &r0.params, Detail::default()).unwrap().transfers.duration_s[0]
        });
        lone.push(d);
    }
    let reference = &runs[0].transfers.duration_s;
    for (s, r) in specs.iter().zip(&runs) {
        let d = &r.transfers.duration_s;
        let mut rel: Vec<f64> = d.iter().zip(reference).map(|(x, p)| (x - p).abs() / p * 100.0).collect();
        let mut signed: Vec<f64> = d.iter().zip(reference).map(|(x, p)| (x - p) / p * 100.0).collect();
        let mut extra: Vec<f64> = sample.iter().zip(&lone).map(|(&i, l)| (d[i] - l) / l).collect();
        let ms = (r.summary.makespan_s - runs[0].summary.makespan_s) / runs[0].summary.makespan_s * 100.0;
        println!(
            "{fabric} {traffic} {:<40} median {:5.1}% p90 {:5.1}% signed {:+6.1}% makespan {ms:+6.1}% | beyond lone: median {:.3} p90 {:.3} max {:.3}",
            format!("{}:{}", s.model, args[3 + specs.iter().position(|x| std::ptr::eq(x, s)).unwrap()].split_once(':').map(|x| x.1).unwrap_or("")),
            q(&mut rel, 0.5),
            q(&mut rel, 0.9),
            q(&mut signed, 0.5),
            q(&mut extra.clone(), 0.5),
            q(&mut extra.clone(), 0.9),
            q(&mut extra, 1.0)
        );
    }
    let mut l = lone.clone();
    println!("lone time (reference): median {:.3} us, min {:.3}, max {:.3}", q(&mut l, 0.5) * 1e6, l[0] * 1e6, l[l.len() - 1] * 1e6);
}
