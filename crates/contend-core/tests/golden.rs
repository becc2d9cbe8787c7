//! Golden scenarios, in the manner of SimGrid's tesh files: every `tests/golden/<case>.yaml`
//! (at the repository root) is run under every model in the registry, and the output must
//! equal `<case>.out` exactly. A model that does not apply records its one-line refusal.
//! Regenerate on purpose with `CONTEND_GOLDEN=regen cargo test -p contend-core --test golden`,
//! then read the diff before committing it.

use contend_core::api::{self, ScheduleRequest};
use contend_core::model::registry::MODELS;
use contend_core::report::Detail;
use contend_core::topology::Machine;
use contend_core::workload::WorkloadSpec;
use serde_yaml::Value;
use std::fmt::Write;
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn us(s: f64) -> String {
    format!("{:.6}", s * 1e6)
}

fn params_of(case: &Value, model: &str) -> Vec<(String, String)> {
    case.get("params")
        .and_then(|p| p.get(model))
        .and_then(|p| p.as_mapping())
        .map(|m| m.iter().map(|(k, v)| (k.as_str().unwrap().to_string(), v.as_str().expect("params are strings").to_string())).collect())
        .unwrap_or_default()
}

fn transfers_case(case: &Value, origin: &str) -> String {
    // A preset name, or a machine or cluster description written in the case.
    let m = match &case["machine"] {
        Value::String(name) => Machine::load(name).unwrap(),
        inline => Machine::from_text(&serde_yaml::to_string(inline).unwrap(), origin).unwrap(),
    };
    let text = serde_yaml::to_string(&serde_yaml::Mapping::from_iter([("transfers".into(), case["transfers"].clone())])).unwrap();
    let spec = WorkloadSpec::from_text(&text, origin).unwrap();
    let mut out = String::new();
    for model in MODELS {
        let params = params_of(case, model.name);
        writeln!(out, "== {}", model.name).unwrap();
        match api::simulate(&m, &spec, origin, Some(model.name), &params, Detail::default()) {
            Err(e) => writeln!(out, "refused: {e}").unwrap(),
            Ok(r) => {
                writeln!(out, "makespan_us {}", us(r.summary.makespan_s)).unwrap();
                let t = &r.transfers;
                for i in 0..t.name.len() {
                    writeln!(out, "{} {}->{} start_us {} finish_us {}", t.name[i], t.src[i], t.dst[i], us(t.start_s[i]), us(t.finish_s[i])).unwrap();
                }
                let l = &r.links;
                for i in 0..l.name.len() {
                    writeln!(out, "link {} bytes {} busy_us {} peak {:.6}", l.name[i], l.bytes[i], us(l.busy_s[i]), l.peak_utilisation[i]).unwrap();
                }
                // Datatype methods: what each message asked for, what ran, and by how much it won.
                if let Some(d) = &r.methods {
                    for k in 0..d.transfer.len() {
                        let margin = if d.margin_s[k].is_finite() { us(d.margin_s[k]) } else { "none".into() };
                        let (name, asked, chosen) = (&t.name[d.transfer[k] as usize], &d.asked[k], &d.chosen[k]);
                        writeln!(out, "method {name} blocks {} asked {asked} chosen {chosen} margin_us {margin}", d.blocks[k]).unwrap();
                    }
                }
            }
        }
    }
    out
}

fn schedule_case(case: &Value, origin: &str) -> String {
    let s = &case["schedule"];
    let strings = |v: &Value| v.as_sequence().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect::<Vec<_>>();
    let mut out = String::new();
    for machine in strings(&s["machines"]) {
        let m = Machine::load(&machine).unwrap();
        for model in MODELS {
            for semantics in strings(&s["semantics"]) {
                let req = ScheduleRequest {
                    halo: s["halo"].as_str().unwrap().into(),
                    semantics: semantics.clone(),
                    search: "exhaustive".into(),
                    model: Some(model.name.into()),
                    params: params_of(case, model.name),
                    alpha: s["alpha"].as_str().unwrap_or("0s").into(),
                    seed: 0,
                    iterations: 1000,
                    threads: 1,
                    keep_times: false,
                };
                let line = match api::schedule(&m, &req, None) {
                    Err(e) => format!("refused: {e}"),
                    Ok((r, best)) => {
                        // Through YAML, as a user's `-o best.yaml` then `contend simulate` would go.
                        let spec = WorkloadSpec::from_text(&best.to_yaml(), origin).unwrap();
                        let sim = api::simulate(&m, &spec, origin, Some(model.name), &req.params, Detail::default()).unwrap();
                        let (a, b) = (r.best_s, sim.summary.makespan_s);
                        assert!((a - b).abs() <= 1e-9 * a, "{machine} {} {semantics}: search {a} s, simulate {b} s", model.name);
                        format!("best_us {} median_us {} simulated_us {}", us(a), us(r.median_s.unwrap()), us(b))
                    }
                };
                writeln!(out, "{machine} {} {semantics}: {line}", model.name).unwrap();
            }
        }
    }
    out
}

/// A `contend run` scenario (rank programs on a cluster) under every model: each job's table.
fn run_case(case: &Value, origin: &str) -> String {
    let mut out = String::new();
    for model in MODELS {
        let mut scenario = case["run"].clone();
        scenario.as_mapping_mut().unwrap().insert("model".into(), model.name.into());
        let text = serde_yaml::to_string(&scenario).unwrap();
        writeln!(out, "== {}", model.name).unwrap();
        match api::run(&text, origin, &Default::default()) {
            Err(e) => writeln!(out, "refused: {e}").unwrap(),
            Ok(r) => {
                let j = &r.jobs;
                for k in 0..j.job.len() {
                    writeln!(
                        out,
                        "job {} {} ranks {} start_us {} finish_us {} compute_us {} comm_us {} overlap_us {}",
                        j.job[k],
                        j.app[k],
                        j.ranks[k],
                        us(j.start_s[k]),
                        us(j.finish_s[k]),
                        us(j.compute_s[k]),
                        us(j.comm_s[k]),
                        us(j.overlap_s[k])
                    )
                    .unwrap();
                }
            }
        }
    }
    out
}

#[test]
fn golden_scenarios() {
    let regen = std::env::var("CONTEND_GOLDEN").is_ok_and(|v| v == "regen");
    let mut cases: Vec<PathBuf> =
        std::fs::read_dir(golden_dir()).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "yaml")).collect();
    cases.sort();
    assert!(cases.len() >= 6, "golden cases missing: {cases:?}");
    let mut stale = Vec::new();
    for path in cases {
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let case: Value = serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let got = if case.get("schedule").is_some() {
            schedule_case(&case, &name)
        } else if case.get("run").is_some() {
            run_case(&case, &name)
        } else {
            transfers_case(&case, &name)
        };
        let expected_path = path.with_extension("out");
        if regen {
            std::fs::write(&expected_path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if want != got {
            let diff: Vec<String> = want.lines().zip(got.lines()).filter(|(a, b)| a != b).take(5).map(|(a, b)| format!("  want {a}\n  got  {b}")).collect();
            stale.push(format!("{name}: output differs from {}:\n{}", expected_path.display(), diff.join("\n")));
        }
    }
    assert!(stale.is_empty(), "{}\n(if the change is intended: CONTEND_GOLDEN=regen cargo test -p contend-core --test golden)", stale.join("\n"));
}
