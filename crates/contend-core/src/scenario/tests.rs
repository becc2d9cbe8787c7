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
    run(&ScenarioSpec::from_text(&text, "s.yaml")?, "s.yaml", &RunOptions::default())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 + 1e-9 * b.abs()
}

/// Eager (1000 B): the sender's software, copy and NIC costs (200 ns + 10 ns + 400 ns), the two
/// NIC links of one leaf (2 x 100 ns) and the leaf's router delay (50 ns), then 1000 B at 10 GB/s
/// (100 ns).
#[test]
fn an_eager_message_costs_tracer_overheads_and_the_path() {
    let p = "ranks:\n  - [{send: {peer: 1, size: 1000B}}]\n  - [{recv: {peer: 0, size: 1000B}}]\n";
    let r = run_program("eager.yaml", p, "maxmin", "").unwrap();
    assert!(close(r.jobs.run_time_s[0], 960e-9), "{}", r.jobs.run_time_s[0]);
    assert_eq!((r.summary.messages, r.summary.bytes), (1, 1000));
}

/// Rendezvous (1 MB): the receiver's 16 B control message (600 ns of costs, 250 ns of hops and
/// the leaf, 1.6 ns of bytes), then the data (400 + 1000 ns of costs, 250 ns, 100 us of bytes).
#[test]
fn a_rendezvous_waits_for_the_receivers_control_message() {
    let p = "ranks:\n  - [{send: {peer: 1, size: 1MB}}]\n  - [{compute: 1us}, {recv: {peer: 0, size: 1MB}}]\n";
    let r = run_program("rdv.yaml", p, "maxmin", "").unwrap();
    // The receive is posted after 1 us of compute.
    let want = 1e-6 + 851.6e-9 + 1650e-9 + 100e-6;
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
        run(&ScenarioSpec::from_text(&text, "s.yaml")?, "s.yaml", &RunOptions::default())
    });
    let half = half.unwrap();
    assert!(close(r.jobs.run_time_s[0], 2e-3 + 960e-9), "{}", r.jobs.run_time_s[0]);
    assert!(close(half.jobs.run_time_s[0], 1e-3 + 960e-9), "{}", half.jobs.run_time_s[0]);
    assert!(close(r.jobs.compute_s[0], 1e-3) && close(r.jobs.comm_s[0], 1e-3 + 960e-9));
}

#[test]
fn a_deadlock_names_the_ranks_and_operations() {
    // Two blocking rendezvous receives before the sends: each waits for the other's send.
    let p = "ranks:\n  - [{recv: {peer: 1, size: 1MB}}, {send: {peer: 1, size: 1MB}}]\n  - [{recv: {peer: 0, size: 1MB}}, {send: {peer: 0, size: 1MB}}]\n";
    let e = run_program("dead.yaml", p, "maxmin", "").unwrap_err().to_string();
    assert!(e.contains("deadlock") && e.contains("rank 0 at op") && e.contains("rank 1 at op") && e.contains("receive of 1000000 B"), "{e}");
}

#[test]
fn a_program_that_mpi_would_refuse_is_refused() {
    // A receive smaller than its message: MPI_ERR_TRUNCATE. A larger one is fine (MPI's count is
    // an upper bound) and moves the sender's bytes.
    let p = "ranks:\n  - [{send: {peer: 1, size: 2MiB}}]\n  - [{recv: {peer: 0, size: 1MiB}}]\n";
    let e = run_program("trunc.yaml", p, "maxmin", "").unwrap_err().to_string();
    assert!(e.contains("ranks[1][0]") && e.contains("smaller than the 2097152 B rank 0 sends") && e.contains("MPI_ERR_TRUNCATE"), "{e}");
    let p = "ranks:\n  - [{send: {peer: 1, size: 1MiB}}]\n  - [{recv: {peer: 0, size: 2MiB}}]\n";
    assert!(run_program("roomy.yaml", p, "maxmin", "").is_ok());
    // The two sides of one collective call disagree on its size, or on what it is.
    let p = "ranks:\n  - [{allreduce: {size: 64MiB}}]\n  - [{allreduce: {size: 1MiB}}]\n";
    let e = run_program("sizes.yaml", p, "maxmin", "").unwrap_err().to_string();
    assert!(e.contains("allreduce of 1048576 B meets rank 0's allreduce of 67108864 B") && e.contains("same size and root"), "{e}");
    let p = "ranks:\n  - [{allreduce: {size: 1MiB}}]\n  - [{bcast: {size: 1MiB}}]\n";
    let e = run_program("kinds.yaml", p, "maxmin", "").unwrap_err().to_string();
    // (whichever side's steps find no partner first is named)
    assert!(e.contains("meets rank") || e.contains("does rank 1 skip one"), "{e}");
    // The same call named with its default algorithm on one side only is one call.
    let p = "ranks:\n  - [{allreduce: {size: 1MiB, algorithm: ring}}]\n  - [{allreduce: {size: 1MiB}}]\n";
    assert!(run_program("named.yaml", p, "maxmin", "").is_ok());
    // A rank that skips a collective: the message says so.
    let p = "ranks:\n  - [{allreduce: {size: 1MiB}}]\n  - [{compute: 1us}]\n";
    let e = run_program("skip.yaml", p, "maxmin", "").unwrap_err().to_string();
    assert!(e.contains("ranks[0][0]") && e.contains("does rank 1 skip one"), "{e}");
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
    let r = run(&ScenarioSpec::from_text(&text, "s.yaml").unwrap(), "s.yaml", &RunOptions::default()).unwrap();
    assert_eq!(r.jobs.ranks, vec![16, 8, 8]);
    assert!(r.jobs.run_time_s.iter().all(|&t| t > 0.0));
    // Kripke computes 8 octants x 2 ms: communication is a small part of it.
    assert!(r.jobs.compute_s[1] / r.jobs.run_time_s[1] > 0.5, "{:?}", r.jobs);
    let too_big = format!("cluster: {cluster}\nworkload:\n  jobs:\n    - {{app: ring, ranks: 64}}\n");
    let e = run(&ScenarioSpec::from_text(&too_big, "s.yaml").unwrap(), "s.yaml", &RunOptions::default()).unwrap_err().to_string();
    assert!(e.contains("needs 64 ranks") && e.contains("32 GPUs"), "{e}");
    let bad = format!("cluster: {cluster}\nworkload:\n  jobs:\n    - {{app: stencil4d, ranks: 4, params: {{colour: red}}}}\n");
    let e = run(&ScenarioSpec::from_text(&bad, "s.yaml").unwrap(), "s.yaml", &RunOptions::default()).unwrap_err().to_string();
    assert!(e.contains("colour") && e.contains("iterations"), "{e}");
}

/// Overlap, by hand. Rank 1 posts an irecv and computes 1 us while the eager message is on its
/// way (0 to 960 ns): 960 ns of overlap. Rank 0 only sends: its CPU cost of the send (0 to
/// 210 ns, which lowering runs as a computation) is communication and overlaps nothing. The
/// job: their mean.
#[test]
fn overlap_is_computing_while_a_message_of_the_rank_is_in_flight() {
    let p = "ranks:\n  - [{send: {peer: 1, size: 1000B}}]\n  - [{irecv: {peer: 0, size: 1000B, req: a}}, {compute: 1us}, {wait: a}]\n";
    let r = run_program("overlap-eager.yaml", p, "maxmin", "").unwrap();
    assert!(close(r.jobs.overlap_s[0], 960e-9 / 2.0), "{}", r.jobs.overlap_s[0]);
    assert!(close(r.jobs.compute_s[0], 0.5e-6) && close(r.jobs.run_time_s[0], 1e-6));
    // Rendezvous: rank 0's messages are the receiver's control message (0 to 851.6 ns) and the
    // data (851.6 ns to 102,501.6 ns), one unbroken span; rank 0 computes 50 us inside it.
    let p = "ranks:\n  - [{isend: {peer: 1, size: 1MB, req: a}}, {compute: 50us}, {wait: a}]\n  - [{recv: {peer: 0, size: 1MB}}]\n";
    let r = run_program("overlap-rdv.yaml", p, "maxmin", "").unwrap();
    assert!(close(r.jobs.overlap_s[0], 25e-6), "{}", r.jobs.overlap_s[0]);
    assert!(close(r.jobs.run_time_s[0], 102_501.6e-9), "{}", r.jobs.run_time_s[0]);
    assert!(close(r.jobs.comm_s[0], 102_501.6e-9 - 25e-6));
}

/// An eager blocking send returns after its CPU cost (210 ns); rank 0 then computes 1 us
/// (210 to 1,210 ns) while its message is still on the wire (to 960 ns): 750 ns of overlap
/// (counting the send's cost as computation would give 960). Rank 1 computes after the
/// message has arrived: none. Mean 375 ns.
#[test]
fn an_eager_send_overlaps_from_its_return_and_a_receive_after_arrival_not_at_all() {
    let p = "ranks:\n  - [{send: {peer: 1, size: 1000B}}, {compute: 1us}]\n  - [{recv: {peer: 0, size: 1000B}}, {compute: 2us}]\n";
    let r = run_program("overlap-blocking.yaml", p, "maxmin", "").unwrap();
    assert!(close(r.jobs.overlap_s[0], 375e-9), "{}", r.jobs.overlap_s[0]);
    assert!(close(r.jobs.compute_s[0], 1.5e-6));
}

/// The busiest links of a run: the four links of a lone 1000 B message (GPU to NIC, NIC to
/// leaf and back down) carry its bytes, each for the 100 ns they take at the NICs' 10 GB/s,
/// out of the 960 ns run.
#[test]
fn a_run_reports_its_busiest_links_bounded() {
    let p = "ranks:\n  - [{send: {peer: 1, size: 1000B}}]\n  - [{recv: {peer: 0, size: 1000B}}]\n";
    let r = run_program("links.yaml", p, "maxmin", "").unwrap();
    assert_eq!(r.summary.links, 4);
    assert_eq!(r.links.table.bytes, [1000.0; 4]);
    for (&busy, &share) in r.links.table.busy_s.iter().zip(&r.links.busy_share) {
        assert!(close(busy, 100e-9) && close(share, 100.0 / 960.0), "{busy} {share}");
    }
    let cluster = file("ft-links.yaml", FT);
    let text = format!("cluster: {cluster}\nworkload:\n  jobs:\n    - {{app: stencil4d, ranks: 16, params: {{iterations: 1}}}}\n");
    let spec = ScenarioSpec::from_text(&text, "s.yaml").unwrap();
    let top = run(&spec, "s.yaml", &RunOptions { top_links: Some(3), ..Default::default() }).unwrap();
    assert!(top.summary.links > 3 && top.links.table.name.len() == 3);
    assert!(top.links.table.busy_s.windows(2).all(|w| w[0] >= w[1]));
    let all = run(&spec, "s.yaml", &RunOptions { top_links: None, ..Default::default() }).unwrap();
    assert_eq!(all.links.table.name.len(), all.summary.links);
    assert_eq!(all.links.table.name[..3], top.links.table.name[..]);
    let e = run(&spec, "s.yaml", &RunOptions { top_links: Some(MAX_TOP_LINKS + 1), ..Default::default() }).unwrap_err().to_string();
    assert!(e.contains("--links") && e.contains("1000"), "{e}");
}

/// Progress counts every message the model delivers, ends at the total, and changes nothing.
#[test]
fn progress_reports_messages_delivered_and_leaves_the_result_alone() {
    let cluster = file("ft-progress.yaml", FT);
    let text = format!("cluster: {cluster}\nworkload:\n  jobs:\n    - {{app: stencil4d, ranks: 16, params: {{iterations: 2}}}}\n");
    let spec = ScenarioSpec::from_text(&text, "s.yaml").unwrap();
    let seen = std::sync::Mutex::new(Vec::new());
    let report = |d: u64, t: u64| seen.lock().unwrap().push((d, t));
    let with = run(&spec, "s.yaml", &RunOptions { progress: Some(&report), ..Default::default() }).unwrap();
    let without = run(&spec, "s.yaml", &RunOptions::default()).unwrap();
    assert_eq!(with.jobs.run_time_s, without.jobs.run_time_s);
    let seen = seen.into_inner().unwrap();
    let total = with.summary.messages;
    assert_eq!(seen.first(), Some(&(0, total)));
    assert_eq!(seen.last(), Some(&(total, total)));
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0) && seen.len() > 2 && seen.len() <= 202, "{}", seen.len());
    // The packet model runs events of its own up to the executor's horizon: the wrapper passes it on.
    let packet = ScenarioSpec { model: Some("packet".into()), ..spec };
    let count = std::sync::atomic::AtomicU64::new(0);
    let last = |d: u64, _: u64| count.store(d, std::sync::atomic::Ordering::Relaxed);
    let with = run(&packet, "s.yaml", &RunOptions { progress: Some(&last), ..Default::default() }).unwrap();
    let without = run(&packet, "s.yaml", &RunOptions::default()).unwrap();
    assert_eq!(with.jobs.run_time_s, without.jobs.run_time_s);
    assert_eq!(count.into_inner(), with.summary.messages);
}

/// Every operation, on request: an eager send's CPU cost is listed as overhead, apart from the
/// program's computations.
#[test]
fn operations_tell_an_eager_sends_overhead_from_computation() {
    let cluster = file("ft-ops.yaml", FT);
    let prog = file("ops.yaml", "ranks:\n  - [{send: {peer: 1, size: 1000B}}, {compute: 1us}]\n  - [{recv: {peer: 0, size: 1000B}}, {compute: 2us}]\n");
    let text = format!("cluster: {cluster}\nworkload:\n  jobs:\n    - program: {prog}\n");
    let r = run(&ScenarioSpec::from_text(&text, "s.yaml").unwrap(), "s.yaml", &RunOptions { detail: true, ..Default::default() }).unwrap();
    let ops = r.operations.unwrap();
    assert_eq!(ops.kind, ["message", "overhead", "compute", "compute"]);
    assert_eq!((ops.rank, ops.peer), (vec![0, 0, 0, 1], vec![1, -1, -1, -1]));
    assert!(close(ops.finish_s[1], 210e-9) && close(ops.start_s[2], 210e-9));
}

/// A study's worker keeps a point's lowered jobs and prepared model for its next point: a point
/// of the same group (other bandwidth, NIC scheduling, its own name) takes them and gives exactly what it
/// gives alone; a point of another workload, or one that lists its operations, is lowered
/// anew, and one with other routing or another model is prepared anew.
#[test]
fn a_kept_lowering_is_taken_by_its_group_alone_and_changes_nothing() {
    let cluster = file("ft-reuse.yaml", FT);
    let point = |jobs: &str, scale: f64, nic: &str| {
        let text = format!("cluster: {cluster}\nbandwidth_scale: {scale}\nnic_scheduling: {nic}\nworkload:\n  jobs:\n{jobs}");
        ScenarioSpec::from_text(&text, "reuse.yaml").unwrap()
    };
    let stencil = "    - {app: stencil4d, ranks: 16, params: {iterations: 2}}\n";
    let kripke = "    - {app: kripke, ranks: 16, params: {iterations: 1}}\n";
    let (a, b, c) = (point(stencil, 1.0, "fcfs"), point(stencil, 0.25, "rr"), point(kripke, 0.25, "rr"));
    let m = |s: &ScenarioSpec| build_machine(s, "reuse.yaml").unwrap();
    // Each point names itself, as a study's points do.
    let origin = |s: &ScenarioSpec| format!("study.yaml (point {:?} {:?})", s.bandwidth_scale, s.workload.jobs[0].app);
    let session = Session::default();
    let take = |s: &ScenarioSpec, detail: bool| lowering::take(s, &origin(s), &m(s), detail, Some(&session), &[]).unwrap();
    let first = take(&a, false);
    let same = take(&b, false);
    assert!(std::sync::Arc::ptr_eq(&first.lowering, &same.lowering));
    let other = take(&c, false);
    assert!(!std::sync::Arc::ptr_eq(&first.lowering, &other.lowering));
    let named = take(&c, true);
    assert!(!std::sync::Arc::ptr_eq(&other.lowering, &named.lowering) && !named.lowering.workload.transfers[0].name.is_empty());

    let json = |s: &ScenarioSpec, reuse_lowering: bool| {
        let session = reuse_lowering.then_some(&session);
        serde_json::to_string(&run(s, &origin(s), &RunOptions { session, ..Default::default() }).unwrap()).unwrap()
    };
    let (alone_b, alone_c) = (json(&b, false), json(&c, false));
    json(&a, true);
    let mut taken = take(&b, false);
    assert!(taken.prepared(&m(&b), "maxmin", &[]).unwrap().is_some(), "a point of the group takes the prepared model");
    json(&a, true);
    let adaptive = ScenarioSpec { routing: Some(crate::topology::Routing::Adaptive), ..b.clone() };
    assert!(take(&adaptive, false).prepared(&m(&adaptive), "maxmin", &[]).unwrap().is_none(), "other routing: prepared anew");
    json(&a, true);
    assert!(take(&b, false).prepared(&m(&b), "packet", &[]).unwrap().is_none(), "another model: prepared anew");
    json(&a, true);
    assert_eq!(json(&b, true), alone_b);
    assert_eq!(json(&c, true), alone_c);
    assert_ne!(alone_b, alone_c);
}

/// Jobs lowered on rayon's pool give the DAG of lowering them one after another into one list
/// (each job's operations after the previous job's, its `after` and ends counted from the
/// list's start), on one thread and on several.
#[test]
fn jobs_lowered_side_by_side_are_the_jobs_lowered_one_after_another() {
    let cluster = file("ft-side.yaml", FT);
    let text = format!(
        "cluster: {cluster}\nworkload:\n  jobs:\n    - {{app: stencil4d, ranks: 16, params: {{iterations: 2}}}}\n    - {{app: kripke, ranks: 8, params: {{iterations: 1}}}}\n    - {{app: laghos, ranks: 8, params: {{iterations: 2}}}}\n"
    );
    let s = ScenarioSpec::from_text(&text, "s.yaml").unwrap();
    let m = build_machine(&s, "s.yaml").unwrap();
    let nodes = gpus_by_node(&m);
    let (jobs, sizes) = jobs_fitting(&s, "s.yaml", &nodes).unwrap();
    let slots = jobs::place(&sizes, &nodes, s.workload.placement, s.workload.seed);
    let (mut ops, mut origins, mut lowered) = (Vec::new(), Vec::new(), Vec::new());
    for (j, (job, devices)) in jobs.iter().zip(&slots).enumerate() {
        lowered.push(program::lower(&job.program, devices, &s.mpi, 1.0, j as u32, &job.source, None, &mut ops, &mut origins).unwrap());
    }
    assert!(ops.iter().any(|t| t.after.iter().any(|&a| a >= ops.len() / 2)), "later jobs' edges point past the first job's");
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let low = pool.install(|| lowering::lower(&s, "s.yaml", &m, &nodes, false, &[])).unwrap();
        assert!(low.workload.transfers == ops, "{threads} threads");
        assert_eq!((&low.origins, &low.lowered, &low.slots), (&origins, &lowered, &slots), "{threads} threads");
    }
}
