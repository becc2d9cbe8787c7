//! NCCL tuner files (`tuner`): the CSV format of NCCL's example plugin, and that its first
//! applicable line picks the algorithm, protocol and channels NCCL runs, as the file says.

use super::tuner::{Tuner, TunerAlgo};
use super::*;
use crate::api;

fn tmp(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("contend-tuner-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("tuner.conf");
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn err(text: &str) -> String {
    Tuner::parse(text, "t.conf").unwrap_err().to_string()
}

#[test]
fn the_three_line_forms_and_comments_parse() {
    let t = Tuner::parse(
        "# comment\n\nallreduce,0,65536,tree,simple,2,1,-1\n allgather , 1 , 2 , nvls_tree , LL128 , -1 , 2 , 16 , 1\nreduce,0,0,pat,ll,64,-1,-1,-1,0\n",
        "t.conf",
    )
    .unwrap();
    assert_eq!(t.rules.len(), 3);
    let r = &t.rules[0];
    assert_eq!((r.line, r.coll, r.min_bytes, r.max_bytes, r.algo, r.proto), (3, Coll::AllReduce, 0, 65536, TunerAlgo::Lowered(Algo::Tree), Proto::Simple));
    assert_eq!((r.channels, r.nodes, r.ranks, r.pipe_ops, r.reg_buff), (Some(2), Some(1), None, None, None));
    let r = &t.rules[1];
    assert_eq!(
        (r.line, r.algo, r.proto, r.channels, r.nodes, r.ranks, r.pipe_ops),
        (4, TunerAlgo::Lowered(Algo::NvlsTree), Proto::Ll128, None, Some(2), Some(16), Some(1))
    );
    let r = &t.rules[2];
    assert_eq!((r.algo, r.channels, r.reg_buff), (TunerAlgo::Lowered(Algo::Pat), Some(64), Some(false)));
}

#[test]
fn a_file_saved_by_a_spreadsheet_parses_as_the_same_lines() {
    let plain = Tuner::parse("allreduce,0,65536,tree,ll,4,1,8\nallgather,0,1,ring,simple,-1,-1,-1\n", "t.csv").unwrap();
    let saved = Tuner::parse("\u{feff}allreduce,0,65536,tree,ll,4,1,8\r\nallgather,0,1,ring,simple,-1,-1,-1\r\n", "t.csv").unwrap();
    assert_eq!(saved, plain);
}

#[test]
fn mistakes_name_the_file_line_and_field() {
    assert!(err("allreduce,0,1,ring,simple,-1,-1\n").starts_with("t.conf: line 1: has 7 fields"), "{}", err("allreduce,0,1,ring,simple,-1,-1\n"));
    assert!(err("#\nallreduce,0,1,rings,simple,-1,-1,-1\n").starts_with("t.conf: line 2 algorithm: is \"rings\""));
    assert!(err("alltoall,0,1,ring,simple,-1,-1,-1\n").starts_with("t.conf: line 1 collective_type: is \"alltoall\""));
    assert!(err("allreduce,9,1,ring,simple,-1,-1,-1\n").starts_with("t.conf: line 1 max_bytes: is \"1\": is below min_bytes 9"));
    assert!(err("allreduce,0,1K,ring,simple,-1,-1,-1\n").starts_with("t.conf: line 1 max_bytes:"));
    assert!(err("allreduce,0,1,ring,simple,0,-1,-1\n").starts_with("t.conf: line 1 channels: is \"0\": give -1 or 1 to 64"));
    assert!(err("allreduce,0,1,ring,simple,65,-1,-1\n").contains("line 1 channels"));
    assert!(err("allreduce,0,1,ring,fast,-1,-1,-1\n").starts_with("t.conf: line 1 protocol:"));
    assert!(err("allreduce,0,1,ring,simple,-1,-1,-1,1,2\n").starts_with("t.conf: line 1 regBuff:"));
    let missing = Tuner::load("/nonexistent/contend/tuner.conf").unwrap_err().to_string();
    assert!(missing.starts_with("/nonexistent/contend/tuner.conf: cannot be read"), "{missing}");
}

#[test]
fn the_first_applicable_line_whose_choice_may_run_wins() {
    let t = Tuner::parse(
        "allreduce,0,100,ring,ll,-1,-1,-1,2\n\
         allreduce,0,100,ring,ll128,-1,-1,-1,-1,1\n\
         allreduce,0,100,tree,simple,-1,4,-1\n\
         allreduce,0,100,collnet_direct,simple,-1,-1,-1\n\
         allreduce,0,100,nvls,simple,-1,-1,-1\n\
         allreduce,0,100,ring,simple,3,-1,16\n\
         allreduce,0,100,tree,ll,5,-1,-1\n",
        "t.conf",
    )
    .unwrap();
    let all = |_: Algo, _: Proto| true;
    // Lines 1 (two pipelined operations), 2 (registered buffers), 3 (4 nodes), 4 (CollNet) do not
    // apply to one nccl-tests call on 2 nodes; line 5's NVLS is not enabled here; line 6's
    // 16 ranks match.
    let no_nvls = |a: Algo, _: Proto| a != Algo::Nvls;
    let hit = t.apply(Coll::AllReduce, 100, 2, 16, &no_nvls).unwrap().unwrap();
    assert_eq!((hit.rule.line, hit.algo, hit.proto, hit.rule.channels), (6, Algo::Ring, Proto::Simple, Some(3)));
    let hit = t.apply(Coll::AllReduce, 100, 2, 16, &all).unwrap().unwrap();
    assert_eq!(hit.rule.line, 5);
    let hit = t.apply(Coll::AllReduce, 100, 2, 8, &no_nvls).unwrap().unwrap();
    assert_eq!((hit.rule.line, hit.algo, hit.proto), (7, Algo::Tree, Proto::Ll));
    // Both ends of the size range are inside; other collectives and sizes find none.
    assert!(t.apply(Coll::AllReduce, 0, 2, 8, &no_nvls).unwrap().is_some());
    assert!(t.apply(Coll::AllReduce, 101, 2, 8, &all).unwrap().is_none());
    assert!(t.apply(Coll::AllGather, 100, 2, 8, &all).unwrap().is_none());
    // PAT, where NCCL's table has it (`enabled`: one rank per node, 2.23 on), picks; where it
    // does not (2.19/2.21, two GPUs a node, NCCL_PROTO without Simple, …) NCCL passes over the
    // line, to the next one or its own model.
    let pat = Tuner::parse("allgather,0,100,pat,simple,-1,-1,-1\n", "p.conf").unwrap();
    let hit = pat.apply(Coll::AllGather, 100, 4, 4, &all).unwrap().unwrap();
    assert_eq!((hit.algo, hit.proto), (Algo::Pat, Proto::Simple));
    let no_pat = |a: Algo, _: Proto| a != Algo::Pat;
    assert!(pat.apply(Coll::AllGather, 100, 2, 16, &no_pat).unwrap().is_none());
}

fn sweep(machine: &str, tuner: &str, algo: Option<&str>, nodes: usize) -> tests_tool::Report {
    let req = tests_tool::Request {
        op: "all_reduce".into(),
        min_bytes: "1K".into(),
        max_bytes: "256M".into(),
        factor: 64,
        ngpus: None,
        gpus: None,
        dtype: "float".into(),
        root: 0,
        iters: 20,
        algo: algo.map(Into::into),
        proto: None,
        channels: None,
        channel_bounds: None,
        tuner: Some(tuner.into()),
        model: "maxmin".into(),
        params: vec![],
        explain: false,
        env: vec![],
    };
    api::nccl_tests(machine, &req, nodes, None).unwrap()
}

#[test]
fn nccl_tests_runs_what_the_file_picks() {
    // dgx-a100: 24 channels (12 rings searched, doubled). Below 64 KiB ring/LL on 2 channels;
    // from 64 KiB to 16 MiB tree/Simple on NCCL's channels; above, ring/Simple on 100 channels,
    // which NCCL caps at the communicator's 24.
    let path = tmp(
        "a100",
        "allreduce,0,65535,ring,ll,2,-1,-1\nallreduce,65536,16777216,tree,simple,-1,1,8\nallreduce,16777217,18446744073709551615,ring,simple,64,-1,-1\n",
    );
    let r = sweep("dgx-a100", &path, None, 1);
    let got: Vec<(u64, Algo, Proto, usize, Option<usize>)> = r.rows.iter().map(|x| (x.size, x.algo, x.proto, x.channels, x.tuner_line)).collect();
    // At 64 KiB NCCL trims tree/Simple's channels for bytes per thread (`channels_for`): 65536 <
    // nc x 512 threads x 64 B keeps 2 of them.
    let m = crate::topology::Machine::load("dgx-a100").unwrap();
    let trimmed = tuning::channels_for(&Comm::new(&m, &[m.gpus()], None).unwrap().tuning, Algo::Tree, Proto::Simple, 65536, 24);
    assert_eq!(trimmed, 2);
    assert_eq!(
        got,
        vec![
            (1024, Algo::Ring, Proto::Ll, 2, Some(1)),
            (65536, Algo::Tree, Proto::Simple, trimmed, Some(2)),
            (4 << 20, Algo::Tree, Proto::Simple, 24, Some(2)),
            (256 << 20, Algo::Ring, Proto::Simple, 24, Some(3)),
        ]
    );
    assert!(r.table.contains(&format!("with tuner {path}")));
    assert!(r.notes.iter().any(|n| n.contains("lines 1, 2, 3 picked")));
    // A line for another machine size (2 nodes) applies nowhere here: NCCL's model picks.
    let other = tmp("a100-other", "allreduce,0,18446744073709551615,tree,ll,1,2,-1\n");
    let r = sweep("dgx-a100", &other, None, 1);
    assert!(r.rows.iter().all(|x| x.tuner_line.is_none()));
    assert!(r.notes.iter().any(|n| n.contains("no line applied")));
}

#[test]
fn a_line_naming_a_choice_nccl_may_not_run_is_passed_over() {
    // NVLS on a 2 x 8 H100 pair of nodes is not NCCL's (it needs CollNet across nodes): the next
    // line's NVLS-tree on 8 of its 16 channels picks; with NCCL_ALGO=ring neither may run, and
    // NCCL's model picks ring.
    let path = tmp("h100", "allreduce,0,18446744073709551615,nvls,simple,-1,-1,-1\nallreduce,0,18446744073709551615,nvls_tree,simple,8,2,16\n");
    let r = sweep("hgx-h100", &path, None, 2);
    for row in &r.rows {
        assert_eq!((row.algo, row.channels, row.tuner_line), (Algo::NvlsTree, 8, Some(2)), "{}", row.size);
    }
    let r = sweep("hgx-h100", &path, Some("ring"), 2);
    assert!(r.rows.iter().all(|x| x.algo == Algo::Ring && x.tuner_line.is_none()));
}

/// The examples' every-call scenario on dgx-a100, with `nccl_tuner` where given.
fn scenario(tuner: Option<&str>) -> crate::error::Result<f64> {
    use crate::scenario::{run, RunOptions, ScenarioSpec};
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/scenarios");
    let origin = format!("{dir}/tuned.yaml");
    let line = tuner.map_or(String::new(), |t| format!("nccl_tuner: {t}\n"));
    let text = format!("cluster: dgx-a100\n{line}workload:\n  jobs:\n    - program: ../programs/nccl-calls.yaml\n");
    Ok(run(&ScenarioSpec::from_text(&text, &origin)?, &origin, &RunOptions::default())?.summary.makespan_s)
}

#[test]
fn rank_programs_take_the_scenario_tuner() {
    let plain = scenario(None).unwrap();
    // A line for 4 nodes applies to no call of this one-node job: nothing changes.
    let elsewhere = tmp("prog-else", "allreduce,0,18446744073709551615,ring,ll,1,4,-1\n");
    assert_eq!(scenario(Some(&elsewhere)).unwrap(), plain);
    // Every all-gather on one channel of LL (half of each 16-byte line is flags) where NCCL ran it
    // on its channels: the job cannot end sooner.
    let slow = tmp("prog-slow", "allgather,0,18446744073709551615,ring,ll,1,-1,-1\n");
    assert!(scenario(Some(&slow)).unwrap() > plain);
    let e = scenario(Some("/nonexistent/contend/t.conf")).unwrap_err().to_string();
    // The scenario's field is named, then the file it points at.
    assert!(e.contains("nccl_tuner") && e.contains("/nonexistent/contend/t.conf: cannot be read"), "{e}");
}
