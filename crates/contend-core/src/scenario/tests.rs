use super::*;
use std::path::PathBuf;

/// A file under the temp directory, unique per test.
fn file(name: &str, text: &str) -> String {
    let dir: PathBuf = std::env::temp_dir().join(format!("contend-scenario-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

const FT: &str = "name: ft\nfabric:\n  fat_tree: {radix: 8, pods: 2}\nlink: {bandwidth: 10GB/s, latency: 100ns, router_delay: 50ns}\nnodes: {gpus: 1}\nnetwork: {routing: ecmp, nic_scheduling: rr}\n";

fn run_program(name: &str, program: &str, model: &str, extra: &str) -> Result<RunReport> {
    let cluster = file(&format!("ft-{name}"), FT);
    let prog = file(name, program);
    let text = format!("cluster: {cluster}\nmodel: {model}\n{extra}workload:\n  jobs:\n    - program: {prog}\n");
    run(&ScenarioSpec::from_text(&text, "s.yaml")?, "s.yaml", false)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 + 1e-9 * b.abs()
}

/// Eager (1000 B): the sender's software, copy and NIC costs (200 ns + 10 ns + 400 ns), the two
/// NIC links of one leaf (2 x 100 ns), then 1000 B at 10 GB/s (100 ns).
#[test]
fn an_eager_message_costs_tracer_overheads_and_the_path() {
    let p = "ranks:\n  - [{send: {peer: 1, size: 1000B}}]\n  - [{recv: {peer: 0, size: 1000B}}]\n";
    let r = run_program("eager.yaml", p, "maxmin", "").unwrap();
    assert!(close(r.jobs.run_time_s[0], 910e-9), "{}", r.jobs.run_time_s[0]);
    assert_eq!((r.summary.messages, r.summary.bytes), (1, 1000));
}

/// Rendezvous (1 MB): the receiver's 16 B control message (600 ns of costs, 200 ns of hops,
/// 1.6 ns of bytes), then the data (400 + 1000 ns of costs, 200 ns of hops, 100 us of bytes).
#[test]
fn a_rendezvous_waits_for_the_receivers_control_message() {
    let p = "ranks:\n  - [{send: {peer: 1, size: 1MB}}]\n  - [{compute: 1us}, {recv: {peer: 0, size: 1MB}}]\n";
    let r = run_program("rdv.yaml", p, "maxmin", "").unwrap();
    // The receive is posted after 1 us of compute.
    let want = 1e-6 + 801.6e-9 + 1600e-9 + 100e-6;
    assert!(close(r.jobs.run_time_s[0], want), "{} vs {want}", r.jobs.run_time_s[0]);
    assert_eq!(r.summary.messages, 2);
    // The packet model meets the same costs hop by hop; its store-and-forward pipeline adds a little.
    let pk = run_program("rdv.yaml", p, "packet", "").unwrap();
    assert!(pk.jobs.run_time_s[0] >= want && pk.jobs.run_time_s[0] < 1.02 * want, "{}", pk.jobs.run_time_s[0]);
}

#[test]
fn compute_scales_and_is_reported_apart_from_communication() {
    let p = "ranks:\n  - [{compute: 1ms}, {send: {peer: 1, size: 1000B}}]\n  - [{recv: {peer: 0, size: 1000B}}, {compute: 1ms}]\n";
    let r = run_program("scaled.yaml", p, "maxmin", "").unwrap();
    let half = run_program("scaled.yaml", p, "maxmin", "").map(|_| ()).and_then(|_| {
        let cluster = file("ft-half.yaml", FT);
        let prog = file("half.yaml", p);
        let text = format!("cluster: {cluster}\nworkload:\n  compute_scale: 0.5\n  jobs:\n    - program: {prog}\n");
        run(&ScenarioSpec::from_text(&text, "s.yaml")?, "s.yaml", false)
    });
    let half = half.unwrap();
    assert!(close(r.jobs.run_time_s[0], 2e-3 + 910e-9), "{}", r.jobs.run_time_s[0]);
    assert!(close(half.jobs.run_time_s[0], 1e-3 + 910e-9), "{}", half.jobs.run_time_s[0]);
    assert!(close(r.jobs.compute_s[0], 1e-3) && close(r.jobs.comm_s[0], 1e-3 + 910e-9));
}

#[test]
fn a_deadlock_names_the_ranks_and_operations() {
    // Two blocking rendezvous receives before the sends: each waits for the other's send.
    let p = "ranks:\n  - [{recv: {peer: 1, size: 1MB}}, {send: {peer: 1, size: 1MB}}]\n  - [{recv: {peer: 0, size: 1MB}}, {send: {peer: 0, size: 1MB}}]\n";
    let e = run_program("dead.yaml", p, "maxmin", "").unwrap_err().to_string();
    assert!(e.contains("deadlock") && e.contains("rank 0 at op") && e.contains("rank 1 at op") && e.contains("receive of 1000000 B"), "{e}");
}

#[test]
fn an_unmatched_receive_is_refused_with_its_place() {
    let p = "ranks:\n  - [{compute: 1us}]\n  - [{recv: {peer: 0, size: 8B, tag: 3}}]\n";
    let e = run_program("unmatched.yaml", p, "maxmin", "").unwrap_err().to_string();
    assert!(e.contains("ranks[1][0]") && e.contains("matches no send") && e.contains("tag 3"), "{e}");
    let p = "ranks:\n  - [{send: {peer: 5, size: 8B}}]\n  - []\n";
    let e = run_program("peer.yaml", p, "maxmin", "").unwrap_err().to_string();
    assert!(e.contains("ranks[0][0]") && e.contains("peer 5"), "{e}");
}

#[test]
fn collectives_and_waits_lower_and_run_under_every_cluster_model() {
    let p = "ranks:\n  - [{isend: {peer: 1, size: 100KB, req: a}}, {allreduce: {size: 1MB}}, {wait: a}, barrier, {alltoall: {size: 10KB}}]\n  - [{irecv: {peer: 0, size: 100KB}}, {allreduce: {size: 1MB}}, waitall, barrier, {alltoall: {size: 10KB}}]\n  - [{allreduce: {size: 1MB}}, barrier, {alltoall: {size: 10KB}}]\n";
    let flow = run_program("coll.yaml", p, "maxmin", "").unwrap();
    let packet = run_program("coll.yaml", p, "packet", "").unwrap();
    let (f, k) = (flow.jobs.run_time_s[0], packet.jobs.run_time_s[0]);
    assert!(f > 0.0 && (f - k).abs() / k < 0.1, "maxmin {f} packet {k}");
    let e = run_program("coll.yaml", p, "sc16", "").unwrap_err().to_string();
    assert!(e.contains("sc16") && e.contains("computation") || e.contains("sc16"), "{e}");
}

#[test]
fn applications_run_as_jobs_and_mixes_fill_the_cluster() {
    let cluster = file("ft-apps.yaml", FT);
    let text = format!(
        "cluster: {cluster}\nworkload:\n  jobs:\n    - {{app: stencil4d, ranks: 16, params: {{iterations: 2, size: 64KiB}}}}\n    - {{app: kripke, ranks: 8, params: {{iterations: 1}}}}\n    - {{app: subcomm3d, ranks: 8, params: {{iterations: 1}}}}\n"
    );
    let r = run(&ScenarioSpec::from_text(&text, "s.yaml").unwrap(), "s.yaml", false).unwrap();
    assert_eq!(r.jobs.ranks, vec![16, 8, 8]);
    assert!(r.jobs.run_time_s.iter().all(|&t| t > 0.0));
    // Kripke computes 8 octants x 2 ms: communication is a small part of it.
    assert!(r.jobs.compute_s[1] / r.jobs.run_time_s[1] > 0.5, "{:?}", r.jobs);
    let too_big = format!("cluster: {cluster}\nworkload:\n  jobs:\n    - {{app: ring, ranks: 64}}\n");
    let e = run(&ScenarioSpec::from_text(&too_big, "s.yaml").unwrap(), "s.yaml", false).unwrap_err().to_string();
    assert!(e.contains("needs 64 ranks") && e.contains("32 GPUs"), "{e}");
    let bad = format!("cluster: {cluster}\nworkload:\n  jobs:\n    - {{app: stencil4d, ranks: 4, params: {{colour: red}}}}\n");
    let e = run(&ScenarioSpec::from_text(&bad, "s.yaml").unwrap(), "s.yaml", false).unwrap_err().to_string();
    assert!(e.contains("colour") && e.contains("iterations"), "{e}");
}
