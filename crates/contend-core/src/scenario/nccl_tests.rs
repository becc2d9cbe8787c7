//! Rank programs calling NCCL, checked against closed forms of the links they cross: on
//! dgx-a100 every GPU's NVSwitch port (12 NVLink 3 links of 25 GB/s) carries all its channels'
//! flows, and whatever else the GPU sends shares that port with them.

use super::*;
use crate::model::maxmin::MaxminParams;
use std::path::PathBuf;

fn file(name: &str, text: &str) -> String {
    let dir: PathBuf = std::env::temp_dir().join(format!("contend-nccl-program-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// `ranks` programs, one per line, on `cluster` under `model`.
fn run_ranks(name: &str, cluster: &str, ranks: &[String], model: &str) -> Result<RunReport> {
    let program = format!("ranks:\n{}", ranks.iter().map(|r| format!("  - {r}\n")).collect::<String>());
    let prog = file(name, &program);
    let text = format!("cluster: {cluster}\nmodel: {model}\nworkload:\n  jobs:\n    - program: {prog}\n");
    run(&ScenarioSpec::from_text(&text, "s.yaml")?, "s.yaml", &RunOptions::default())
}

fn same(op: &str, n: usize) -> Vec<String> {
    vec![format!("[{op}]"); n]
}

/// NVLink capacity of one dgx-a100 GPU port, each way (12 x 25 GB/s at maxmin's efficiency).
fn cap() -> f64 {
    12.0 * 25e9 * MaxminParams::default().rates.eff_nvlink
}

fn duplex() -> f64 {
    MaxminParams::default().duplex_nvlink
}

/// Per transfer on the chain: two NVLink hops of 50 ns. NCCL's kernels move the bytes, so no
/// GPU's copy-engine setup (the machine's 2.2 us) is paid, as in `contend nccl-tests`.
const PATH: f64 = 2.0 * 0.05e-6;

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want
}

/// Ring all-reduce of 1 GiB on 8 GPUs: each port moves 2(n-1)/n S each way (duplex loss on
/// the same load back), plus NCCL's base latency (8.4 us) and, on every step of the 3 loops of
/// 2 MiB chunks, its path and two slices' handshakes at NCCL's per-step latency (3.4 us: NVLink
/// Simple ring, NCCL 2.30.7; docs/nccl.md, "A Simple slice's handshake").
#[test]
fn ring_allreduce_in_a_program_is_the_ports_capacity() {
    let s = (1u64 << 30) as f64;
    let n = 8.0;
    let r = run_ranks("ar.yaml", "dgx-a100", &same("{nccl_allreduce: {size: 1GiB, algo: ring, proto: simple}}", 8), "maxmin").unwrap();
    let bytes = 2.0 * (n - 1.0) / n * s;
    let want = 8.4e-6 + 3.0 * 14.0 * (2.0 * 3.4e-6 + PATH) + bytes * (1.0 + duplex()) / cap();
    let got = r.jobs.run_time_s[0];
    assert!(close(got, want, 0.005), "{} us, closed form {} us", got * 1e6, want * 1e6);
}

/// An MPI message of M bytes from GPU0 to GPU1 posted before the all-reduce shares GPU0's port
/// with the ring: the port stays busy until both are done, so the job takes the port's load,
/// (1 + duplex) R for the ring and M for the message one way, over its capacity.
#[test]
fn nccl_traffic_contends_with_other_messages() {
    let s = (1u64 << 30) as f64;
    let m = (256u64 << 20) as f64;
    let ar = "{nccl_allreduce: {size: 1GiB, algo: ring, proto: simple}}";
    let mut ranks = same(ar, 8);
    ranks[0] = format!("[{{isend: {{peer: 1, size: 256MiB, req: a}}}}, {ar}, {{wait: a}}]");
    ranks[1] = format!("[{{irecv: {{peer: 0, size: 256MiB, req: a}}}}, {ar}, {{wait: a}}]");
    let r = run_ranks("contend.yaml", "dgx-a100", &ranks, "maxmin").unwrap();
    let ring = 2.0 * 7.0 / 8.0 * s;
    let want = (ring * (1.0 + duplex()) + m) / cap();
    let got = r.jobs.run_time_s[0];
    assert!(close(got, want, 0.02), "{} us, closed form {} us", got * 1e6, want * 1e6);
    let alone = ring * (1.0 + duplex()) / cap();
    assert!(got > alone + 0.8 * m / cap(), "{got} vs {alone} alone");
}

/// An nccl_group ring exchange (each GPU sends S to the next, receives from the one before):
/// each port carries S each way.
#[test]
fn nccl_group_sends_and_receives() {
    let s = (1u64 << 30) as f64;
    let ranks: Vec<String> = (0..8)
        .map(|r| format!("[{{nccl_group: [{{send: {{peer: {}, size: 1GiB}}}}, {{recv: {{peer: {}, size: 1GiB}}}}]}}]", (r + 1) % 8, (r + 7) % 8))
        .collect();
    let r = run_ranks("group.yaml", "dgx-a100", &ranks, "maxmin").unwrap();
    let want = s * (1.0 + duplex()) / cap();
    let got = r.jobs.run_time_s[0];
    assert!(got > want && close(got, want, 0.01), "{} us, closed form {} us", got * 1e6, want * 1e6);
    // One way only (GPU0 to GPU1): no load comes back, the port's whole capacity; each
    // channel keeps NCCL_STEPS chunks in flight (NCCL's 512 KiB p2p chunk over NVLink, the
    // lowering keeping 4 + 4 at the ends and merging the middle into 4: 12 transfers, the 9th
    // waiting for the 1st's slot), so the path's latency is paid once, after NCCL's base and
    // per-step latency (8.4 + 3.4 us).
    let mut one = vec!["[{compute: 1us}]".to_string(); 8];
    one[0] = "[{nccl_group: [{send: {peer: 1, size: 1GiB}}]}]".into();
    one[1] = "[{nccl_group: [{recv: {peer: 0, size: 1GiB}}]}]".into();
    let r = run_ranks("one.yaml", "dgx-a100", &one, "maxmin").unwrap();
    let got = r.jobs.run_time_s[0];
    let want = 8.4e-6 + 3.4e-6 + PATH + s / cap();
    assert!(close(got, want, 0.002), "{} us, closed form {} us", got * 1e6, want * 1e6);
}

/// All-gather, reduce-scatter and all-to-all take bytes per rank: each port moves (n-1) S per
/// rank's block; broadcast moves S through every port of its chain.
#[test]
fn per_rank_sizes_follow_nccls_api() {
    let s = (128u64 << 20) as f64;
    for op in ["nccl_allgather", "nccl_reducescatter", "nccl_alltoall"] {
        let algo = if op == "nccl_alltoall" { "" } else { ", algo: ring, proto: simple" };
        let r = run_ranks(&format!("{op}.yaml"), "dgx-a100", &same(&format!("{{{op}: {{size: 128MiB{algo}}}}}"), 8), "maxmin").unwrap();
        // A ring's 7 steps each pay two slices' handshakes (3.4 us each) in each of 3 loops of
        // 2 MiB chunks (128 MiB / 24 channels a rank); all-to-all is not a ring.
        let handshakes = if op == "nccl_alltoall" { 0.0 } else { 7.0 * 3.0 * 2.0 * 3.4e-6 };
        let want = 7.0 * s * (1.0 + duplex()) / cap() + handshakes;
        let got = r.jobs.run_time_s[0];
        assert!(got > want && close(got, want, 0.03), "{op}: {} us, closed form {} us", got * 1e6, want * 1e6);
    }
}

#[test]
fn mistakes_and_models_are_one_line() {
    let ar = "{nccl_allreduce: {size: 1MiB}}";
    let mut missing = same(ar, 8);
    missing[3] = "[{compute: 1us}]".into();
    let mut differ = same(ar, 8);
    differ[2] = "[{nccl_allreduce: {size: 2MiB}}]".into();
    let mut unmatched = vec!["[{compute: 1us}]".to_string(); 8];
    unmatched[0] = "[{nccl_group: [{send: {peer: 1, size: 1MiB}}]}]".into();
    let cases = [
        (missing, "ranks[0][0]", "rank 3"),
        (differ, "ranks[2][0]", "2097152"),
        (unmatched, "ranks[0][0]", "recv"),
        (same("{nccl_broadcast: {size: 1MiB, root: 9}}", 8), "ranks[0][0]", "root 9"),
        (same("{nccl_allreduce: {size: 1MiB, algo: nvls}}", 8), "ranks[0][0]", "NVLS needs"),
        // Fields NCCL's call has not: ran silently as if absent before round 24.
        (same("{nccl_alltoall: {size: 1MiB, algo: tree}}", 8), "ranks[0][0]", "drop algo"),
        (same("{nccl_allreduce: {size: 1MiB, root: 3}}", 8), "ranks[0][0]", "drop root"),
    ];
    for (k, (ranks, field, word)) in cases.into_iter().enumerate() {
        let e = run_ranks(&format!("bad{k}.yaml"), "dgx-a100", &ranks, "maxmin").unwrap_err().to_string();
        assert!(e.contains(field) && e.contains(word) && !e.contains('\n'), "{e}");
    }
    let e = run_ranks("sc16.yaml", "dgx-a100", &same(ar, 8), "sc16").unwrap_err().to_string();
    assert!(e.contains("sc16") && e.contains("maxmin") && !e.contains('\n'), "{e}");
    match run_ranks("packet.yaml", "dgx-a100", &same(ar, 8), "packet") {
        Ok(r) => assert!(r.jobs.run_time_s[0] > 0.0),
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
}

/// An NVLS all-reduce's messages go between a GPU and the NVSwitch, which holds no rank: each is
/// the GPU's rank's, with no peer (-1), where the table gave u32::MAX as a rank or a peer.
#[test]
fn nvls_messages_name_the_gpus_rank_and_no_peer() {
    let prog = file("nvls.yaml", &format!("ranks:\n{}", "  - [{nccl_allreduce: {size: 4MiB, algo: nvls}}]\n".repeat(8)));
    let text = format!("cluster: hgx-h100\nmodel: maxmin\nworkload:\n  jobs:\n    - program: {prog}\n");
    let r = run(&ScenarioSpec::from_text(&text, "s.yaml").unwrap(), "s.yaml", &RunOptions { detail: true, ..RunOptions::default() }).unwrap();
    let ops = r.operations.unwrap();
    assert!(ops.rank.iter().all(|&k| k < 8), "a rank outside the job's 8");
    assert!(ops.peer.iter().all(|&p| (-1..8).contains(&p)), "a peer outside the job's 8");
    assert!(ops.peer.contains(&-1), "no message through the switch");
}

/// NCCL's constants in the scenario's `params` reach its rank programs' NCCL calls, as
/// `contend nccl-tests --param` takes them (tester's R5: refused as "not a parameter of
/// maxmin"): the ring all-reduce above with Simple's per-step latency at 1 us and its kernels at
/// half the links' bandwidth takes NCCL's base latency, each step's path and two handshakes of
/// 1 us, and the ports' load over half their capacity.
#[test]
fn nccl_constants_in_params_reach_the_programs() {
    let s = (1u64 << 30) as f64;
    let prog = file(
        "ar-params.yaml",
        &format!("ranks:\n{}", same("{nccl_allreduce: {size: 1GiB, algo: ring, proto: simple}}", 8).iter().map(|r| format!("  - {r}\n")).collect::<String>()),
    );
    let text = |params: &str| format!("cluster: dgx-a100\nparams: {{{params}}}\nworkload:\n  jobs:\n    - program: {prog}\n");
    let r =
        run(&ScenarioSpec::from_text(&text("nccl_step_simple: 1us, nccl_eff_simple: \"0.5\""), "s.yaml").unwrap(), "s.yaml", &RunOptions::default()).unwrap();
    let bytes = 2.0 * 7.0 / 8.0 * s;
    let want = 8.4e-6 + 3.0 * 14.0 * (2.0 * 1.0e-6 + PATH) + bytes * (1.0 + duplex()) / (0.5 * cap());
    let got = r.jobs.run_time_s[0];
    assert!(close(got, want, 0.005), "{} us, closed form {} us", got * 1e6, want * 1e6);
    // The release reaches the programs: 8 ranks' 4 MiB all-reduce (NCCL's choice) takes about
    // what `contend nccl-tests dgx-a100 -b 4M -e 4M --nccl-version 2.19` gives (within 6%: the
    // program runs on the scenario's machine as it is, `nccl::program`), and 2.30's about 2.30's,
    // over 20% apart (114.7 and 83.4 us: 2.19 picks by its own tuning.cc).
    let ar4 = file("ar4.yaml", &format!("ranks:\n{}", same("{nccl_allreduce: {size: 4MiB}}", 8).iter().map(|r| format!("  - {r}\n")).collect::<String>()));
    let at = |params: &str| {
        let text = format!("cluster: dgx-a100\nparams: {{{params}}}\nworkload:\n  jobs:\n    - program: {ar4}\n");
        run(&ScenarioSpec::from_text(&text, "s.yaml").unwrap(), "s.yaml", &RunOptions::default()).unwrap().jobs.run_time_s[0]
    };
    let tool = |v: &str| {
        let req = crate::nccl::tests_tool::Request {
            params: vec![("nccl_version".into(), v.into())],
            ..crate::nccl::tests_tool::Request::sweep("all_reduce", "4M", "4M")
        };
        crate::api::nccl_tests("dgx-a100", &req, 1, None).unwrap().rows[0].time_us * 1e-6
    };
    let (old, new) = (at("nccl_version: \"2.19\""), at("nccl_version: \"2.30\""));
    let (old_tool, new_tool) = (tool("2.19"), tool("2.30"));
    assert!(close(old, old_tool, 0.06) && close(new, new_tool, 0.06) && old > 1.2 * new, "2.19 {old} s ({old_tool} tool), 2.30 {new} s ({new_tool} tool)");
    assert_eq!(at("nccl_version: \"2.19.3\""), old);
    // NCCL_PXN_DISABLE reaches them: two superpod-h100-su nodes' all-to-all relays every message
    // between GPUs of different device numbers over NVLink to the receiver's rail with PXN, and
    // sends it from the sender's own NIC through a spine without (`pxn_tests`). Each NIC carries
    // the same bytes either way, so the time moves by the route's latency only, but it moves, and
    // as `contend nccl-tests --nodes 2` moves it (10777.8 us with PXN, 10776.4 without: the relay's
    // NVLink step costs more than the spine's two switches). Until round 24 the cluster's FCFS
    // NICs held NCCL's messages back in the program (not in nccl-tests), and without PXN ran 2.3 us
    // over with.
    let a2a = file("a2a.yaml", &format!("ranks:\n{}", same("{nccl_alltoall: {size: 64MiB}}", 16).iter().map(|r| format!("  - {r}\n")).collect::<String>()));
    let pxn = |params: &str| {
        let text = format!("cluster: superpod-h100-su\nparams: {{{params}}}\nworkload:\n  jobs:\n    - program: {a2a}\n");
        run(&ScenarioSpec::from_text(&text, "s.yaml").unwrap(), "s.yaml", &RunOptions::default()).unwrap().jobs.run_time_s[0]
    };
    let (with, without) = (pxn("nccl_pxn_disable: \"0\""), pxn("nccl_pxn_disable: \"1\""));
    let tool = |v: &str| {
        let req = crate::nccl::tests_tool::Request {
            params: vec![("nccl_pxn_disable".into(), v.into())],
            ..crate::nccl::tests_tool::Request::sweep("alltoall", "1G", "1G")
        };
        crate::api::nccl_tests("superpod-h100-su", &req, 2, None).unwrap().rows[0].time_us * 1e-6
    };
    assert!((without - with).abs() > 1e-6, "PXN {with} s, without {without} s");
    assert!(close(with, tool("0"), 1e-9) && close(without, tool("1"), 1e-9), "PXN {with} s, without {without} s; nccl-tests {} and {}", tool("0"), tool("1"));
    let e = run(&ScenarioSpec::from_text(&text("nccl_version: \"2.31\""), "s.yaml").unwrap(), "s.yaml", &RunOptions::default()).unwrap_err().to_string();
    assert!(e.contains("s.yaml") && e.contains("params.nccl_version") && e.contains("nearest it models is 2.30") && !e.contains('\n'), "{e}");
    let e = run(&ScenarioSpec::from_text(&text("buffr: \"4\""), "s.yaml").unwrap(), "s.yaml", &RunOptions::default()).unwrap_err().to_string();
    assert!(e.contains("params.buffr") && e.contains("maxmin"), "{e}");
}

/// `ranks` programs on dgx-a100 under maxmin, run with the NCCL_* variables `env`.
fn run_env(name: &str, ranks: &[String], params: &str, env: &[(&str, &str)]) -> Result<RunReport> {
    let prog = file(name, &format!("ranks:\n{}", ranks.iter().map(|r| format!("  - {r}\n")).collect::<String>()));
    let text = format!("cluster: dgx-a100\nparams: {{{params}}}\nworkload:\n  jobs:\n    - program: {prog}\n");
    let env: Vec<(String, String)> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    run(&ScenarioSpec::from_text(&text, "s.yaml")?, "s.yaml", &RunOptions { nccl_env: &env, ..RunOptions::default() })
}

/// The run's NCCL_* variables reach rank programs' NCCL calls as NCCL reads them
/// (`nccl::environment`): NCCL_ALGO=Tree NCCL_PROTO=Simple runs a call that names neither as the
/// call naming both runs (NCCL's own pick at 1 GiB here is ring/Simple: the closed form above);
/// NCCL_BUFFSIZE=0x800000 (strtoll base 0: 8 MiB) doubles ring Simple's chunk to 4 MiB, so 1 GiB
/// over 8 ranks and 24 channels takes 2 loops, not 3. A call's own algo wins, and so do the
/// scenario's params; the report's notes say which variables applied. A scenario without NCCL
/// calls reads none.
#[test]
fn the_environment_reaches_the_programs() {
    let s = (1u64 << 30) as f64;
    let bytes = 2.0 * 7.0 / 8.0 * s;
    let closed = |loops: f64| 8.4e-6 + loops * 14.0 * (2.0 * 3.4e-6 + PATH) + bytes * (1.0 + duplex()) / cap();
    let plain = same("{nccl_allreduce: {size: 1GiB}}", 8);
    let own = run_env("env-ar.yaml", &plain, "", &[]).unwrap();
    assert!(own.notes.is_empty() && close(own.jobs.run_time_s[0], closed(3.0), 0.005), "{} us", own.jobs.run_time_s[0] * 1e6);
    let tree = same("{nccl_allreduce: {size: 1GiB, algo: tree, proto: simple}}", 8);
    let t = run_env("env-tree.yaml", &tree, "", &[]).unwrap().jobs.run_time_s[0];
    let r = run_env("env-ar.yaml", &plain, "", &[("NCCL_ALGO", "Tree"), ("NCCL_PROTO", "Simple")]).unwrap();
    assert!(
        r.jobs.run_time_s[0] == t && (t - own.jobs.run_time_s[0]).abs() > 1e-6,
        "env {} s, tree {t} s, own {} s",
        r.jobs.run_time_s[0],
        own.jobs.run_time_s[0]
    );
    assert_eq!(r.notes.len(), 1);
    assert!(r.notes[0].contains("NCCL_ALGO=Tree, NCCL_PROTO=Simple") && r.notes[0].contains("a call's own algo or proto wins"), "{:?}", r.notes);
    let ring = [("NCCL_ALGO", "Ring"), ("NCCL_PROTO", "Simple")];
    let r = run_env("env-ar.yaml", &plain, "", &ring).unwrap();
    let buff = [ring[0], ring[1], ("NCCL_BUFFSIZE", "0x800000")];
    let b = run_env("env-ar.yaml", &plain, "", &buff).unwrap();
    assert!(close(b.jobs.run_time_s[0], closed(2.0), 0.005), "{} us, closed form {} us", b.jobs.run_time_s[0] * 1e6, closed(2.0) * 1e6);
    // The scenario's own nccl_buffsize wins over NCCL_BUFFSIZE, which is then not named.
    let p = run_env("env-ar.yaml", &plain, "nccl_buffsize: 4MiB", &buff).unwrap();
    assert_eq!(p.jobs.run_time_s[0], r.jobs.run_time_s[0]);
    assert!(!p.notes[0].contains("NCCL_BUFFSIZE"), "{:?}", p.notes);
    // A call's own algo and proto win over the variables.
    assert_eq!(run_env("env-tree.yaml", &tree, "", &ring).unwrap().jobs.run_time_s[0], t);
    // Bad values are one line naming the variable; NCCL_ALGO=tree leaves an all-gather nothing (NCCL 2.19 on).
    let e = run_env("env-ar.yaml", &plain, "", &[("NCCL_ALGO", "bogus")]).unwrap_err().to_string();
    assert!(e.starts_with("NCCL_ALGO (environment): bogus:") && e.ends_with("or unset NCCL_ALGO") && !e.contains('\n'), "{e}");
    let ag = same("{nccl_allgather: {size: 1MiB}}", 8);
    let e = run_env("env-ag.yaml", &ag, "", &[("NCCL_ALGO", "tree")]).unwrap_err().to_string();
    assert!(e.contains("leaves NCCL no algorithm") && e.contains("NCCL_ALGO=tree from the environment") && !e.contains('\n'), "{e}");
    // Under 2.23.4 NCCL restores the ring there ("at least set ring algo available"), and the run
    // says so in one line, once for the eight ranks' calls, as `contend nccl-tests` does (rev27).
    let r = run_env("env-ag.yaml", &ag, "nccl_version: \"2.23\"", &[("NCCL_ALGO", "tree")]).unwrap();
    let said: Vec<&String> = r.notes.iter().filter(|n| n.starts_with("NCCL_ALGO under NCCL 2.23.4")).collect();
    assert!(said.len() == 1 && said[0].contains("with none of them left for all_gather it runs Ring"), "{:?}", r.notes);
    // MPI alone: NCCL's variables are not read (a bad one is no mistake) and not noted.
    let mpi = vec!["[{send: {peer: 1, size: 1MiB}}]".to_string(), "[{recv: {peer: 0, size: 1MiB}}]".to_string()];
    let m = run_env("env-mpi.yaml", &mpi, "", &[("NCCL_ALGO", "bogus")]).unwrap();
    assert!(m.notes.is_empty());
}

/// NCCL's proxy posts every connection's steps to the network at once (src/transport/net.cc
/// `sendProxyProgress`: each sub of every channel posts up to NCCL_STEPS sends per pass), so the
/// NIC interleaves them whatever its scheduling of MPI's messages: a call's time on a cluster whose
/// NICs are FCFS is its time with RR NICs, as `contend nccl-tests` runs it (`Comm::new` sets rr).
/// Before round 24 a rank program's tree all-reduce on superpod-h100-su (fcfs) ran 25.5% over
/// `contend nccl-tests --nodes 2` at 1 GiB (ring 16 MiB +9.2%, broadcast 16 MiB -12.0%), and this
/// one ran 895.9 us under fcfs against 907.6 us under rr (maxmin; packet 891.4 against 902.9).
#[test]
fn nccl_calls_ignore_the_nics_mpi_scheduling() {
    let cluster = format!("{}/../../examples/clusters/dgx-a100-x2.yaml", env!("CARGO_MANIFEST_DIR"));
    let prog = file("fcfs.yaml", &format!("ranks:\n{}", "  - [{nccl_allreduce: {size: 16MiB, algo: tree, proto: simple}}]\n".repeat(16)));
    for model in ["maxmin", "packet"] {
        let time = |sched: &str| {
            let text = format!("cluster: {cluster}\nnic_scheduling: {sched}\nmodel: {model}\nworkload:\n  jobs:\n    - program: {prog}\n");
            run(&ScenarioSpec::from_text(&text, "s.yaml").unwrap(), "s.yaml", &RunOptions::default()).unwrap().jobs.run_time_s[0]
        };
        let (fcfs, rr) = (time("fcfs"), time("rr"));
        assert!((fcfs - rr).abs() <= 1e-9 * rr, "{model}: fcfs {} us, rr {} us", fcfs * 1e6, rr * 1e6);
    }
}
