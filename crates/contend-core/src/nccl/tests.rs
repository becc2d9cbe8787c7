//! NCCL's lowering checked against closed forms derived from first principles: on an NVSwitch
//! node every GPU's NVLink port carries all its channels' flows, so a call's bandwidth part is
//! the bytes one port must move over what NCCL's kernels reach of it (NCCL's per-link NVLink
//! figure for the generation, each way at once), and its latency part is NCCL's per-step latencies
//! plus the path latency of every transfer on the chain of dependencies.

use super::*;
use crate::api;

fn req(op: &str) -> tests_tool::Request {
    tests_tool::Request { min_bytes: "8".into(), max_bytes: "8G".into(), ..tests_tool::Request::one(op, "8") }
}

/// One size of `op` on dgx-a100 with the given overrides.
fn one(op: &str, size: &str, algo: Option<&str>, proto: Option<&str>, model: &str) -> Result<tests_tool::Row> {
    let r = tests_tool::Request {
        min_bytes: size.into(),
        max_bytes: size.into(),
        algo: algo.map(Into::into),
        proto: proto.map(Into::into),
        model: model.into(),
        ..req(op)
    };
    Ok(api::nccl_tests("dgx-a100", &r, 1, None)?.rows.remove(0))
}

/// A GPU port of dgx-a100 as NCCL's kernels reach it, each direction, with equal load both
/// ways: 12 links x NCCL's SM80_NVLINK_BW (20 GB/s of NVLink 3's 25), no duplex loss.
fn port() -> f64 {
    12.0 * 20e9
}

/// Path latency of a GPU -> NVSwitch -> GPU transfer: two NVLink hops (docs/models.md defaults).
const HOPS: f64 = 2.0 * 0.05e-6;

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want
}

#[test]
fn ring_all_reduce_on_nvswitch_matches_the_closed_form() {
    let n = 8.0;
    let s = (1u64 << 30) as f64;
    let row = one("all_reduce", "1G", Some("ring"), Some("simple"), "maxmin").unwrap();
    assert_eq!((row.algo, row.proto, row.channels), (Algo::Ring, Proto::Simple, 24));
    // Per channel each rank moves 1 GiB / (24 x 8) in 2 MiB chunks: 3 loops of 14 steps, each
    // step two slices (the last loop's 1.33 MiB chunk halved too), each slice NCCL's per-step
    // NVLink latency (docs/nccl.md, "A Simple slice's handshake").
    let per_rank = s / (24.0 * n);
    let loops = (per_rank / (2.0 * 1048576.0)).ceil();
    let steps = 2.0 * (n - 1.0);
    let latency = 8.4e-6 + loops * steps * (2.0 * 3.4e-6 + HOPS);
    let want = latency + 2.0 * (n - 1.0) / n * s / port();
    assert!(close(row.time_us * 1e-6, want, 0.002), "ring all-reduce {} us, closed form {} us", row.time_us, want * 1e6);
    // busbw = algbw x 2(n-1)/n: the port's capacity, less latency.
    assert!(close(row.busbw, row.algbw * 2.0 * (n - 1.0) / n, 1e-12));
    assert!(row.busbw * 1e9 < port() && row.busbw * 1e9 > 0.9 * port(), "{}", row.busbw);
}

/// A ring LL128 step carries its data at LL128's wire format (128 bytes a 120) over LL128's measured
/// share of the links (`nccl_eff_ll128`, 0.73, docs/nccl.md "LL128's rate"): 16 MiB on dgx-a100
/// (the 8-rank A100 table's row, 137.68 GB/s measured) is one loop of 14 steps of 87381 bytes a
/// channel on all 24 channels, NCCL's ring LL128 base latency (14 us) and step latency (1.9 us), and
/// 2(n-1)/n of the data through each GPU's port; `nccl_eff_ll128=1` gives the wire format alone.
#[test]
fn a_ring_ll128_step_moves_its_wire_bytes_over_the_default_efficiency() {
    let n = 8.0;
    let s = 16.0 * 1048576.0;
    for (eff, given) in [(0.73, None), (1.0, Some("1"))] {
        let mut r = tests_tool::Request { min_bytes: "16M".into(), max_bytes: "16M".into(), ..req("all_reduce") };
        r.params = given.map(|e| vec![("nccl_eff_ll128".to_string(), e.to_string())]).unwrap_or_default();
        let row = api::nccl_tests("dgx-a100", &r, 1, None).unwrap().rows.remove(0);
        assert_eq!((row.algo, row.proto, row.channels), (Algo::Ring, Proto::Ll128, 24));
        let want = 14e-6 + 2.0 * (n - 1.0) * (1.9e-6 + HOPS) + 2.0 * (n - 1.0) / n * s * (128.0 / 120.0) / eff / port();
        assert!(close(row.time_us * 1e-6, want, 0.01), "efficiency {eff}: {} us, closed form {} us", row.time_us, want * 1e6);
    }
}

/// A partial loop (every rank's share of a channel under one chunk) is one loop of 14 steps; a
/// step's slices are its chunk halved (two handshakes), or one where half the chunk would be under
/// 1/64 of a whole 2 MiB chunk (prims_simple.h `genericOp`): 32 MiB gives each rank 170.7 KiB a
/// channel, two slices; 4 MiB 21.3 KiB, one (under 32 KiB).
#[test]
fn a_partial_ring_loop_pays_a_handshake_per_slice() {
    let n = 8.0;
    let steps = 2.0 * (n - 1.0);
    for (size, bytes, slices) in [("32M", 32.0 * 1048576.0, 2.0), ("4M", 4.0 * 1048576.0, 1.0)] {
        let row = one("all_reduce", size, Some("ring"), Some("simple"), "maxmin").unwrap();
        assert_eq!((row.algo, row.proto, row.channels), (Algo::Ring, Proto::Simple, 24));
        let want = 8.4e-6 + steps * (slices * 3.4e-6 + HOPS) + 2.0 * (n - 1.0) / n * bytes / port();
        assert!(close(row.time_us * 1e-6, want, 0.01), "{size}: {} us, closed form {} us", row.time_us, want * 1e6);
    }
    // The slice count itself, from its definition (2 MiB chunk: a slice at least 32 KiB).
    let mib = 1u64 << 20;
    assert_eq!(lower::simple_slices(2 * mib, 2 * mib), 2.0);
    assert_eq!(lower::simple_slices(7 * mib, 2 * mib), 7.0);
    assert_eq!(lower::simple_slices(174_763, 2 * mib), 2.0);
    assert_eq!(lower::simple_slices(40_000, 2 * mib), 2.0);
    assert_eq!(lower::simple_slices(32_768, 2 * mib), 1.0);
    assert_eq!(lower::simple_slices(21_845, 2 * mib), 1.0);
}

#[test]
fn small_all_reduce_is_latency_nccl_model_and_protocols() {
    // 8 B: one channel (NCCL trims channels below 64 B per LL thread per rank), LL.
    let row = one("all_reduce", "8", None, None, "maxmin").unwrap();
    assert_eq!((row.algo, row.proto, row.channels), (Algo::Ring, Proto::Ll, 1));
    let want = 6.6e-6 + 14.0 * (0.6e-6 + HOPS);
    assert!(close(row.time_us * 1e-6, want, 0.01), "{} us, want {} us", row.time_us, want * 1e6);
    // NCCL's own model: base 6.6 + 14 steps x 0.6 us, and 8 B at LL's bandwidth.
    assert!(close(row.nccl_model_us, 15.0, 0.01), "{}", row.nccl_model_us);
    // LL moves twice the bytes of Simple: at 1 GiB, LL would be about half as fast, but NCCL's LL
    // ceiling on one Ampere node (`llMaxBws`, 87.7 GB/s busbw) is below that (round 15).
    let ll = one("all_reduce", "1G", Some("ring"), Some("LL"), "maxmin").unwrap();
    let simple = one("all_reduce", "1G", Some("ring"), Some("simple"), "maxmin").unwrap();
    let ll128 = one("all_reduce", "1G", Some("ring"), Some("LL128"), "maxmin").unwrap();
    assert!(simple.busbw / 2.0 > tuning::LL_MAX_BW[1][0]);
    assert!(close(ll.busbw, tuning::LL_MAX_BW[1][0], 0.02), "LL {} Simple {}", ll.busbw, simple.busbw);
    // LL128 carries 128 bytes for 120 at its measured share of the links (`nccl_eff_ll128`, 0.73)
    // and pays no slice handshakes beyond the first loop, which Simple pays twice a step in each of
    // its 3 loops (42 x 2 slices, where NCCL's model counts 14).
    let handshakes = (3.0 * 14.0 * 2.0 - 14.0) * 3.4e-6;
    let simple_bw = simple.busbw * simple.time_us * 1e-6 / (simple.time_us * 1e-6 - handshakes);
    let eff = constants::Constants::default().efficiency[Proto::Ll128 as usize];
    assert!(close(ll128.busbw, simple_bw * 120.0 / 128.0 * eff, 0.02), "LL128 {} Simple {}", ll128.busbw, simple.busbw);
}

#[test]
fn tree_all_reduce_moves_the_whole_buffer_up_and_down() {
    let s = (1u64 << 30) as f64;
    let row = one("all_reduce", "1G", Some("tree"), Some("simple"), "maxmin").unwrap();
    assert_eq!(row.algo, Algo::Tree);
    // A chain's middle GPU sends the whole buffer up to its parent and again down to its child,
    // and receives as much: 2 S each way through its port, 48 flows (24 channels, up and down)
    // sharing it. The down pipeline's last chunk leaves the root (n - 1) hops after the up
    // pipeline's last chunk entered, and reaches the leaf n - 2 hops later: the pipeline's
    // drain is about n - 2 chunk times of 512 KiB at a 48th of the port.
    let n = 8.0;
    let chunk = 524288.0 * 48.0 / port();
    let want = 2.0 * s / port() + (n - 2.0) * chunk;
    assert!(close(row.time_us * 1e-6, want, 0.015), "tree {} us, closed form {} us", row.time_us, want * 1e6);
}

#[test]
fn all_to_all_and_rooted_collectives() {
    let n = 8.0;
    let s = (1u64 << 30) as f64;
    let a2a = one("alltoall", "1G", None, None, "maxmin").unwrap();
    let want = (n - 1.0) / n * s / port();
    assert!(a2a.time_us * 1e-6 > want && close(a2a.time_us * 1e-6, want, 0.01), "alltoall {} us, closed form {} us", a2a.time_us, want * 1e6);
    assert!(close(a2a.busbw, a2a.algbw * (n - 1.0) / n, 1e-12));
    // Broadcast: a chain; every GPU but the root receives S and every GPU but the last sends
    // it, so a middle GPU's port carries S each way (24 channels' flows). The pipeline's fill
    // adds n - 2 chunks of 512 KiB (BROADCAST_CHUNKSTEPS = 1) at a 24th of the port, and the
    // first loop's latencies: NCCL's base and one hop's per-step latency per hop. nccl-tests'
    // loop of 20 calls back to back pays the fill once (docs/nccl.md, "Back-to-back
    // iterations"): each later call takes its base, one step and S / port.
    let b = one("broadcast", "1G", None, Some("simple"), "maxmin").unwrap();
    let per_channel = s / 24.0;
    let first = 8.4e-6 + (n - 1.0) * 3.4e-6 + (per_channel + (n - 2.0) * 524288.0) / (port() / 24.0);
    let period = 8.4e-6 + 3.4e-6 + s / port();
    let want = (first + 19.0 * period) / 20.0;
    assert!(close(b.time_us * 1e-6, want, 0.01), "broadcast {} us, closed form {} us", b.time_us, want * 1e6);
    assert_eq!(b.busbw, b.algbw);
}

#[test]
fn every_model_runs_or_refuses_in_one_line() {
    let e = one("all_reduce", "1M", None, None, "sc16").unwrap_err().to_string();
    assert!(e.contains("sc16") && e.contains("maxmin") && !e.contains('\n'), "{e}");
    match one("all_reduce", "1M", None, None, "packet") {
        Ok(row) => assert!(row.time_us > 0.0),
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
}

#[test]
fn rings_follow_nvlink_then_pcie() {
    // dgx-a100: every pair on NVSwitch, 240 GB/s of NCCL NVLink per GPU: 6 rings at 40 GB/s,
    // doubled to 12 at 20 GB/s (ncclTopoDupChannels), 24 channels once connected.
    let r = api::nccl_tests("dgx-a100", &tests_tool::Request { max_bytes: "8".into(), ..req("all_reduce") }, 1, None).unwrap();
    assert_eq!((r.search.rings.len(), r.search.bw_per_channel, r.search.channels, r.search.path_type.as_str()), (12, 20.0, 24, "NVL"));
    // A PCIe box (typical-8gpu: two switches per socket, QPI between): rings cross the
    // socket link, and the worst path type is SYS.
    let r = api::nccl_tests("typical-8gpu", &tests_tool::Request { max_bytes: "8".into(), ..req("all_reduce") }, 1, None).unwrap();
    assert_eq!(r.search.path_type, "SYS", "{:?}", r.search);
    let ring = &r.search.rings[0];
    // GPUs under one switch are neighbours on the ring (PIX before PXB before PHB).
    let pos = |g: &str| ring.iter().position(|x| x == g).unwrap();
    assert_eq!((pos("GPU0") as i64 - pos("GPU1") as i64).abs() % 6, 1, "{ring:?}");
}

#[test]
fn bad_input_is_one_line_naming_the_field() {
    let cases: Vec<(tests_tool::Request, &str)> = vec![
        (req("allreduce_perf"), ""),
        (req("scan"), "--op"),
        (tests_tool::Request { factor: 1, ..req("all_reduce") }, "-f"),
        (tests_tool::Request { min_bytes: "9G".into(), ..req("all_reduce") }, "-b"),
        (tests_tool::Request { ngpus: Some(9), ..req("all_reduce") }, "-g"),
        (tests_tool::Request { gpus: Some(vec!["GPU0".into(), "GPU0".into()]), ..req("all_reduce") }, "--gpus"),
        (tests_tool::Request { gpus: Some(vec!["GPU9".into()]), ..req("all_reduce") }, "--gpus"),
        (tests_tool::Request { gpus: Some(vec!["8".into()]), ..req("all_reduce") }, "--gpus"),
        (tests_tool::Request { gpus: Some(vec!["0".into(), "GPU0".into()]), ..req("all_reduce") }, "--gpus"),
        (tests_tool::Request { algo: Some("nvls".into()), ..req("all_reduce") }, "--algo"),
        (tests_tool::Request { proto: Some("fast".into()), ..req("all_reduce") }, "--proto"),
        (tests_tool::Request { algo: Some("tree".into()), ..req("all_gather") }, "--algo"),
        (tests_tool::Request { channels: Some(0), ..req("all_reduce") }, "--channels"),
        (tests_tool::Request { dtype: "complex".into(), ..req("all_reduce") }, "--datatype"),
    ];
    for (r, field) in cases {
        let r = tests_tool::Request { max_bytes: if r.min_bytes == "9G" { "8G".into() } else { "64".into() }, ..r };
        match api::nccl_tests("dgx-a100", &r, 1, None) {
            Ok(_) if field.is_empty() => {}
            Ok(_) => panic!("{field}: accepted"),
            Err(e) => {
                let e = e.to_string();
                assert!(e.contains(field) && !e.contains('\n'), "{field}: {e}");
            }
        }
    }
}

#[test]
fn gpus_are_named_or_counted_from_zero() {
    // An index is the node's k-th GPU (CUDA_VISIBLE_DEVICES' count): "0,4" is GPU0 and GPU4 of
    // dgx-a100, in that rank order, the same run as the names.
    let r = |g: &[&str]| tests_tool::Request { max_bytes: "64".into(), gpus: Some(g.iter().map(|x| x.to_string()).collect()), ..req("all_reduce") };
    let by_index = api::nccl_tests("dgx-a100", &r(&["4", "0"]), 1, None).unwrap();
    let by_name = api::nccl_tests("dgx-a100", &r(&["GPU4", "GPU0"]), 1, None).unwrap();
    assert_eq!(by_index.ranks, 2);
    assert_eq!(by_index.search.rings, by_name.search.rings);
    assert_eq!(by_index.rows[0].time_us, by_name.rows[0].time_us);
}

#[test]
fn one_process_of_n_gpus_takes_at_least_n_launches_an_iteration() {
    // nccl-tests' `-g N` is one process whose thread issues each GPU's call in turn (src/common.cu
    // `startColl`; NCCL's src/group.cc `doLaunches`) with no sync between iterations, so an
    // iteration takes the longer of N launches and the GPUs' call; a process per GPU pays neither.
    let at = |size: &str, ngpus: Option<usize>, gpus: Option<Vec<String>>| {
        let r = tests_tool::Request {
            min_bytes: size.into(),
            max_bytes: size.into(),
            ngpus,
            gpus,
            params: vec![("nccl_launch_host".into(), "5us".into())],
            ..req("all_reduce")
        };
        api::nccl_tests("dgx-a100", &r, 1, None).unwrap()
    };
    let (ranks, one) = (at("8", None, None), at("8", Some(8), None));
    assert!(ranks.rows[0].time_us < 40.0, "{}", ranks.rows[0].time_us);
    assert_eq!(one.rows[0].time_us, 8.0 * 5.0);
    assert!(one.notes.iter().any(|n| n.contains("-g 8") && n.contains("40.0 us")), "{:?}", one.notes);
    // A row of 0 elements (8 B of all-to-all over 8 ranks) launches nothing: still time 0.
    let empty = tests_tool::Request { ngpus: Some(8), max_bytes: "8".into(), ..req("alltoall") };
    let empty = api::nccl_tests("dgx-a100", &empty, 1, None).unwrap();
    assert_eq!((empty.rows[0].count, empty.rows[0].time_us), (0, 0.0));
    // The launches bound every alternative --explain runs, not only NCCL's pick: at 8 B none is
    // under 40 us, so NCCL's pick at 40 us is no slower than the fastest.
    let r = tests_tool::Request { explain: true, ngpus: Some(8), params: vec![("nccl_launch_host".into(), "5us".into())], ..req("all_reduce") };
    let r = tests_tool::Request { max_bytes: "8".into(), ..r };
    let e = api::nccl_tests("dgx-a100", &r, 1, None).unwrap().rows.remove(0).explain.unwrap();
    assert!(e.alternatives.iter().all(|a| a.time_us >= 40.0) && e.pick_slower_pct == 0.0, "{:?}", e.alternatives);
    assert!(e.latency_share > 0.5, "the call's own time is mostly latency at 8 B: {}", e.latency_share);
    // Where the GPUs take longer than the launches, the host's work hides behind them.
    assert_eq!(at("64M", Some(8), None).rows[0].time_us, at("64M", None, None).rows[0].time_us);
    // `CUDA_VISIBLE_DEVICES=4,5 <op>_perf -g 2`: one process of the listed GPUs; -g naming another count is refused.
    let pair = Some(vec!["GPU4".to_string(), "GPU5".to_string()]);
    assert_eq!(at("8", Some(2), pair.clone()).gpus, ["GPU4", "GPU5"]);
    assert!(at("8", Some(2), pair.clone()).rows[0].time_us >= 10.0);
    let r = tests_tool::Request { max_bytes: "64".into(), ngpus: Some(4), gpus: pair, ..req("all_reduce") };
    let Err(e) = api::nccl_tests("dgx-a100", &r, 1, None) else { panic!("ran") };
    assert!(e.to_string().starts_with("-g: 4: --gpus lists 2 GPUs"), "{e}");
}

#[test]
fn one_gpu_is_refused_in_one_line_and_one_gpu_a_node_runs() {
    // A communicator of one rank: NCCL copies the buffer inside the GPU (ncclLaunchOneRank), whose time the
    // machine does not describe, so every collective is refused in one line naming -g, not printed as 0 us.
    for op in ["all_reduce", "sendrecv", "alltoall", "all_gather"] {
        let r = tests_tool::Request { max_bytes: "1M".into(), ngpus: Some(1), ..req(op) };
        let Err(e) = api::nccl_tests("dgx-a100", &r, 1, None) else { panic!("{op}: ran") };
        let e = e.to_string();
        assert!(e.starts_with("-g: 1: one rank") && !e.contains('\n'), "{op}: {e}");
        // One GPU on each of two nodes is two ranks, which cross the network.
        assert_eq!(api::nccl_tests("dgx-a100", &r, 2, None).unwrap_or_else(|e| panic!("{op}: {e}")).ranks, 2, "{op}");
    }
    // The refusal names the option the rank came from (a reviewer found `-g` named for `--gpus`).
    let r = tests_tool::Request { max_bytes: "1M".into(), gpus: Some(vec!["GPU3".into()]), ..req("all_reduce") };
    let Err(e) = api::nccl_tests("dgx-a100", &r, 1, None) else { panic!("ran") };
    let e = e.to_string();
    assert!(e.starts_with("--gpus: GPU3: one rank") && e.contains("give two GPUs or more"), "{e}");
}

#[test]
fn two_nodes_cross_the_network() {
    let r = tests_tool::Request { min_bytes: "256M".into(), max_bytes: "256M".into(), ..req("all_reduce") };
    let two = api::nccl_tests("dgx-a100", &r, 2, Some("25GB/s")).unwrap();
    assert_eq!((two.ranks, two.nodes), (16, 2));
    let one = api::nccl_tests("dgx-a100", &r, 1, None).unwrap();
    // Between nodes the rings cross 200 Gb/s (25 GB/s) NICs, far below NVSwitch: a ring
    // all-reduce's busbw is at most what the node's 8 NICs carry out, 8 x 25 = 200 GB/s. Channel
    // c crosses by NIC c mod 8, as NCCL's search assigns them (`rails`), so every NIC carries
    // them (4 of 8 NICs, all the first of each switch, capped it near 100 GB/s).
    let b = two.rows[0].busbw;
    assert!(b < one.rows[0].busbw && b <= 8.0 * 25.0 * 1.001 && b > 4.0 * 25.0, "{b} vs {}", one.rows[0].busbw);
}

/// Without --network-bandwidth the network runs at the machine's own NICs: hgx-h100's eight
/// 400 Gb/s ports (50 GB/s each) let a ring all-reduce's busbw pass the 8 x 25 = 200 GB/s that
/// 200 Gb/s NICs would bound it at, and stay under 8 x 50 = 400.
#[test]
fn two_nodes_take_the_nics_own_rate() {
    let r = tests_tool::Request { min_bytes: "256M".into(), max_bytes: "256M".into(), algo: Some("ring".into()), ..req("all_reduce") };
    let own = api::nccl_tests("hgx-h100", &r, 2, None).unwrap();
    let stated = api::nccl_tests("hgx-h100", &r, 2, Some("50GB/s")).unwrap();
    let slow = api::nccl_tests("hgx-h100", &r, 2, Some("25GB/s")).unwrap();
    let b = own.rows[0].busbw;
    assert_eq!(b, stated.rows[0].busbw);
    assert!(b > 200.0 && b <= 400.0 * 1.001 && slow.rows[0].busbw <= 200.0 * 1.001, "{b} vs {}", slow.rows[0].busbw);
    // The flag sets the NICs' rate as written, above their own too (dgx-a100's are 200 Gb/s).
    let a100 = api::nccl_tests("dgx-a100", &r, 2, Some("50GB/s")).unwrap();
    let nics = &a100.search.across_nodes.as_ref().unwrap().nics;
    assert!(nics.len() == 8 && nics.iter().all(|n| n.1 == 50.0), "{nics:?}");
}

/// --explain across nodes says how the rings cross the network: each ring visits every node's
/// GPUs, and the NICs it names are the machine's (hgx-h100: eight of 400 Gb/s).
#[test]
fn explain_across_nodes_names_the_nics_and_the_whole_ring() {
    let r = tests_tool::Request { min_bytes: "64M".into(), max_bytes: "64M".into(), explain: true, ..req("all_reduce") };
    let rep = api::nccl_tests("hgx-h100", &r, 2, None).unwrap();
    let a = rep.search.across_nodes.as_ref().unwrap();
    assert_eq!(a.nics.len(), 8);
    assert!(a.nics.iter().all(|n| n.0.starts_with("n0.NIC") && n.1 == 50.0), "{:?}", a.nics);
    assert_eq!(a.ring.len(), 16);
    assert_eq!(a.ring.iter().filter(|g| g.starts_with("n1.GPU")).count(), 8);
    assert!(rep.explain.as_ref().unwrap().contains("Across nodes: 8 NIC(s) per node at 50 GB/s each"));
    // One NIC per channel the communicator runs (it listed 32 where 16 run).
    let runs = rep.search.channels;
    assert!(runs > 0 && a.crossings.len() == runs, "{} NICs listed, {runs} channels", a.crossings.len());
    assert!(api::nccl_tests("hgx-h100", &r, 1, None).unwrap().search.across_nodes.is_none());
}

/// A channel's bottleneck is the link nearest full, not the one busy longest: on 2 x hgx-h100
/// with 25 GB/s NICs a ring all-reduce is bound by the NICs' network links (PCIe Gen5 x16 and
/// 18 NVLinks of 25 GB/s carry about 2.5 and 18 times as much), which run nearly full.
#[test]
fn explain_bottleneck_is_the_link_nearest_full() {
    let r = tests_tool::Request { min_bytes: "256M".into(), max_bytes: "256M".into(), explain: true, algo: Some("ring".into()), ..req("all_reduce") };
    let rep = api::nccl_tests("hgx-h100", &r, 2, Some("25GB/s")).unwrap();
    let b = &rep.rows[0].explain.as_ref().unwrap().bottlenecks;
    assert!(!b.is_empty());
    assert!(b.iter().all(|b| b.resource.contains("NIC") && b.resource.contains("S0") && b.utilisation > 0.85 && b.utilisation <= 1.0), "{b:?}");
}

#[test]
fn explain_names_bottlenecks_and_alternatives() {
    let r = tests_tool::Request { min_bytes: "64M".into(), max_bytes: "64M".into(), explain: true, ..req("all_reduce") };
    let rep = api::nccl_tests("dgx-a100", &r, 1, None).unwrap();
    let e = rep.rows[0].explain.as_ref().unwrap();
    assert_eq!(e.alternatives.len(), 6, "ring and tree x LL, LL128, Simple");
    assert!(e.bottlenecks.iter().all(|b| b.resource.contains("GPU") && b.resource.contains("NVS")), "{:?}", e.bottlenecks);
    assert!(e.latency_share > 0.0 && e.latency_share < 0.5, "{}", e.latency_share);
    let text = rep.explain.unwrap();
    assert!(text.contains("ring: GPU0 -> GPU1") && text.contains("bottleneck"), "{text}");
}

/// --explain's latency is the call's own transfers at one byte each (round 24): a 2 MiB ring/Simple
/// all-reduce on rtx5090x8-turin-p2p (NCCL_P2P_LEVEL=SYS: P2P over PCIe, 2 rings x 2 = 4 channels)
/// moves 2 MiB / (4 x 8) = 64 KiB a rank a channel a step, two slices of 32 KiB (prims_simple.h
/// `genericOp`: half the chunk, at least 1 MiB / 32), each paying PCI's ring Simple step (5.7 us),
/// over 2 x 7 steps: NCCL's base 8.4 us + 28 x 5.7 + each step's path (14 x 0.4 us: the slowest
/// hop, across the sockets: PCIe 0.1, fabric 0.05, xGMI 0.1, fabric 0.05, PCIe 0.1) = 173.6 us.
/// A call of a few bytes (one slice a step) counted 14 handshakes fewer: 93.8 us, 38%.
#[test]
fn explain_latency_counts_every_slice_handshake() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/validation/machines/rtx5090x8-turin-p2p.yaml");
    let r = tests_tool::Request {
        min_bytes: "2M".into(),
        max_bytes: "2M".into(),
        explain: true,
        algo: Some("ring".into()),
        proto: Some("simple".into()),
        ngpus: Some(8),
        params: vec![("nccl_version".into(), "2.29".into())],
        env: vec![("NCCL_P2P_LEVEL".into(), "SYS".into())],
        ..req("all_reduce")
    };
    let row = api::nccl_tests(file, &r, 1, None).unwrap().rows.remove(0);
    assert_eq!(row.channels, 4);
    let latency = row.explain.unwrap().latency_share * row.time_us;
    let want = 8.4 + 28.0 * 5.7 + 14.0 * 0.4;
    assert!(close(latency, want, 0.01), "latency {latency} us, want {want}; call {} us", row.time_us);
}

#[test]
fn hopper_rings_and_nccl_pick_flagged_where_slower() {
    // hgx-h100: 18 NVLink 4 links at NCCL's 20.6 GB/s = 370.8 GB/s per GPU; the first sm90 speed
    // at most that is 60 GB/s: 6 rings, doubled to 12 at 30 GB/s (above 25, and 60 >= 50), 24 channels.
    let r = api::nccl_tests("hgx-h100", &tests_tool::Request { max_bytes: "8".into(), ..req("all_reduce") }, 1, None).unwrap();
    assert_eq!((r.search.rings.len(), r.search.bw_per_channel, r.search.channels, r.search.compute_capability), (12, 30.0, 24, 90));
    // Where a run shows another choice more than 10% faster than NCCL's pick, --explain says so.
    let q = tests_tool::Request { min_bytes: "1G".into(), max_bytes: "1G".into(), explain: true, ..req("all_reduce") };
    let rep = api::nccl_tests("typical-8gpu", &q, 1, None).unwrap();
    let e = rep.rows[0].explain.as_ref().unwrap();
    let fastest = e.alternatives.iter().map(|a| a.time_us).fold(f64::INFINITY, f64::min);
    assert!(close(e.pick_slower_pct, (rep.rows[0].time_us / fastest - 1.0) * 100.0, 1e-9));
    assert_eq!(rep.explain.unwrap().contains('★'), e.pick_slower_pct > 10.0);
}

/// A call alone on the machine runs the same with its identical channels merged (each merged
/// flow carries its copies' bytes at their summed max-min share): one node (24 channels of one
/// ring order, two tree mirrorings) and two nodes (rings rotated per channel, double binary tree).
#[test]
fn merging_identical_channels_changes_no_time() {
    let one = crate::topology::Machine::load("dgx-a100").unwrap();
    let two = crate::topology::Machine::load(&format!("{}/../../examples/clusters/dgx-a100-x2.yaml", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let node = |m: &crate::topology::Machine, k: usize| m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    let cases = [(&one, vec![one.gpus()]), (&two, vec![node(&two, 0), node(&two, 1)])];
    for (m, nodes) in cases {
        // A tree's channels are its graph's channels on the first tree and their copies on the
        // second (`lower::tree_mirrored`): four times the graph's (NCCL_MIN_NCHANNELS) repeat them.
        let comm = Comm::new(m, &nodes, None).unwrap();
        let comm32 = Comm::new(m, &nodes, Some((4 * comm.tuning.tree_channels).min(tuning::MAX_CHANNELS))).unwrap();
        for (coll, algo, proto, bytes) in [
            (Coll::AllReduce, Algo::Ring, Proto::Ll, 1u64 << 20),
            (Coll::AllReduce, Algo::Ring, Proto::Simple, 1 << 28),
            (Coll::AllReduce, Algo::Tree, Proto::Simple, 1 << 27),
            (Coll::AllGather, Algo::Ring, Proto::Ll128, 3 << 22),
            (Coll::Broadcast, Algo::Ring, Proto::Simple, 1 << 26),
        ] {
            let comm = if algo == Algo::Tree { &comm32 } else { &comm };
            let call = comm.call(coll, algo, proto, bytes, 0);
            let merged = call.clone().merged();
            let (a, b) = (run(&comm.m, &call, "maxmin", &[], false).unwrap(), run(&comm.m, &merged, "maxmin", &[], false).unwrap());
            assert!(merged.copies > 1 && b.transfers < a.transfers && a.channels == b.channels, "{coll:?} {algo:?}: {} copies", merged.copies);
            // Equal up to rounding: the merged run's events coincide in another order.
            assert!((a.seconds - b.seconds).abs() <= 1e-8 * a.seconds, "{coll:?} {algo:?} {proto:?} {bytes}: {} vs {} s", a.seconds, b.seconds);
        }
    }
}

/// Under packet, k identical flows are not one flow of k times the bytes (each message cuts its own
/// packets, which the NIC and every port take in turn), so `contend nccl-tests --model packet` runs
/// every channel of the call, as a rank program's call runs them. Before round 24 it ran them merged:
/// a 16 MiB LL128 ring all-reduce on dgx-a100 (24 channels as 8 rings of 3 copies) took 217.9 us,
/// the same call's 24 channels 197.8 us (-9.2%); maxmin's merge stays (exact, the test above).
#[test]
fn packet_runs_every_channel() {
    let r = tests_tool::Request {
        min_bytes: "16M".into(),
        max_bytes: "16M".into(),
        algo: Some("ring".into()),
        proto: Some("LL128".into()),
        model: "packet".into(),
        ..req("all_reduce")
    };
    let got = api::nccl_tests("dgx-a100", &r, 1, None).unwrap().rows[0].time_us;
    let m = crate::topology::Machine::load("dgx-a100").unwrap();
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    let call = comm.call(Coll::AllReduce, Algo::Ring, Proto::Ll128, 16 << 20, 0);
    let want = run(&comm.m, &call, "packet", &[], false).unwrap().seconds * 1e6;
    assert!((got - want).abs() <= 1e-9 * want, "nccl-tests {got} us, every channel {want} us");
}

/// On a rail-optimised cluster (superpod-h100-su: NIC k of every node on rail k at 400 Gb/s,
/// full-bisection spines) two nodes' ring all-reduce crosses the nodes' 8 NICs: busbw at most
/// 8 x 50 GB/s, as on two hgx-h100 on one switch at the same NIC bandwidth.
#[test]
fn rail_optimised_cluster_runs_nccl_across_its_nodes() {
    let r = tests_tool::Request { min_bytes: "1G".into(), max_bytes: "1G".into(), algo: Some("ring".into()), ..req("all_reduce") };
    let rails = api::nccl_tests("superpod-h100-su", &r, 2, None).unwrap();
    let flat = api::nccl_tests("hgx-h100", &r, 2, Some("50GB/s")).unwrap();
    assert_eq!((rails.ranks, rails.nodes), (16, 2));
    let (a, b) = (rails.rows[0].busbw, flat.rows[0].busbw);
    assert!(a <= 8.0 * 50.0 * 1.001 && a > 0.5 * 8.0 * 50.0, "{a}");
    assert!((a - b).abs() < 0.05 * b, "rails {a} vs one switch {b}");
    // NCCL's own pick there is NVLS-tree: GPU h of each node exchanges its eighth with GPU h of
    // the other, NIC h to NIC h on rail h, S/8 each way per NIC against a ring's 2 (n - 1)/n S
    // over 8 NICs: above the ring's 8 x 50 GB/s bound.
    let nvls = api::nccl_tests("superpod-h100-su", &tests_tool::Request { algo: None, ..r.clone() }, 2, None).unwrap();
    assert_eq!(nvls.rows[0].algo, Algo::NvlsTree);
    assert!(nvls.rows[0].busbw > 8.0 * 50.0, "{}", nvls.rows[0].busbw);
    let e = api::nccl_tests("superpod-h100-su", &r, 33, None).unwrap_err().to_string();
    assert!(e.contains("--nodes") && e.contains("32") && !e.contains('\n'), "{e}");
}

/// NCCL's kernels reach NCCL's per-link NVLink figure of a link, each way at once: two A40
/// joined by a 4-link bridge (14.0625 GB/s per link and direction, A40 data sheet) run a 1 GiB
/// ring all-reduce at 4 x SM86_NVLINK_BW = 48 GB/s busbw less latency (the copy engine's share
/// would give 4 x 14.0625 x 0.92 / 1.065 = 48.6); a file that writes the bridge as one 56.25 GB/s
/// link without `count` is read as the same four links.
#[test]
fn kernels_reach_nccl_nvlink_figure_however_the_link_is_written() {
    let dir = std::env::temp_dir().join(format!("contend-nccl-nvlink-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pair = |link: &str| {
        format!(
            "name: a40-pair\ndevices:\n  - {{name: CPU0, kind: root_complex}}\n  - {{name: GPU0, kind: gpu, model: NVIDIA A40}}\n  - {{name: GPU1, kind: gpu, model: NVIDIA A40}}\nlinks:\n  - {{a: GPU0, b: GPU1, kind: nvlink, {link}}}\n  - {{a: CPU0, b: GPU0, kind: pcie, gen: 4, lanes: 16}}\n  - {{a: CPU0, b: GPU1, kind: pcie, gen: 4, lanes: 16}}\n"
        )
    };
    let mut busbw = Vec::new();
    let mut rows_channels = Vec::new();
    for (k, link) in ["count: 4, bandwidth: 14.0625GB/s", "bandwidth: 56.25GB/s"].iter().enumerate() {
        let path = dir.join(format!("pair{k}.yaml"));
        std::fs::write(&path, pair(link)).unwrap();
        let r = tests_tool::Request { min_bytes: "1G".into(), max_bytes: "1G".into(), ..req("all_reduce") };
        let row = api::nccl_tests(path.to_str().unwrap(), &r, 1, None).unwrap().rows.remove(0);
        assert_eq!(row.algo, Algo::Ring);
        busbw.push(row.busbw);
        rows_channels.push(row.channels);
    }
    std::fs::remove_dir_all(&dir).ok();
    // Less the slices' handshakes: each rank's share of a channel in 2 MiB chunks, two slices a
    // chunk, each at NCCL's per-step NVLink latency, on the 2 steps of a 2-GPU ring.
    let channels = rows_channels[0] as f64;
    let handshakes = 2.0 * 2.0 * ((1u64 << 30) as f64 / (channels * 2.0) / 2097152.0).ceil() * 3.4e-6;
    let bound = 48.0 / (1.0 + handshakes / ((1u64 << 30) as f64 / 48e9));
    assert!(busbw[0] < bound && busbw[0] > 0.98 * bound, "{busbw:?} {bound}");
    assert!(close(busbw[1], busbw[0], 1e-9), "{busbw:?}");
}

/// A call across nodes pays `nccl_call_net` once, with its base latency (docs/nccl.md,
/// "Latency"): every chain starts that much later, so the whole call shifts by it; on one node
/// nothing changes.
#[test]
fn a_call_across_nodes_pays_the_call_overhead_once() {
    let run = |nodes: usize, value: &str| {
        let r =
            tests_tool::Request { min_bytes: "1M".into(), max_bytes: "1M".into(), params: vec![("nccl_call_net".into(), value.into())], ..req("all_reduce") };
        api::nccl_tests("dgx-a100", &r, nodes, None).unwrap().rows.remove(0).time_us
    };
    let shift = run(2, "40us") - run(2, "0s");
    assert!((shift - 40.0).abs() < 0.01, "{shift} us");
    assert_eq!(run(1, "40us"), run(1, "0s"));
}

/// The GDR flush (docs/nccl.md, "The GDR flush"): on Ampere across nodes every Simple step a
/// rank receives from another node waits one more NIC latency, every loop; LL flushes nothing,
/// one node and Hopper neither. A tree all-reduce's fill crosses the network once up and once
/// down in series, so it takes at least two flushes longer than without them.
#[test]
fn a_simple_step_from_another_node_waits_for_the_gdr_flush() {
    let mut two = crate::topology::Machine::load(&format!("{}/../../examples/clusters/dgx-a100-x2.yaml", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let nic = 10e-6;
    two.devices.iter_mut().filter(|d| d.kind == DeviceKind::Nic).for_each(|d| d.latency = nic);
    let node = |m: &crate::topology::Machine, k: usize| m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    let mut comm = Comm::new(&two, &[node(&two, 0), node(&two, 1)], None).unwrap();
    assert_eq!(comm.flush, nic);
    let bytes = 1 << 22;
    let time = |comm: &Comm, algo: Algo, proto: Proto| run(&comm.m, &comm.call(Coll::AllReduce, algo, proto, bytes, 0), "maxmin", &[], false).unwrap().seconds;
    let (simple, ll) = (time(&comm, Algo::Tree, Proto::Simple), time(&comm, Algo::Tree, Proto::Ll));
    // A send of 4 MiB to the other node: its every chunk arrives one flush later.
    let send = |comm: &Comm| run(&comm.m, &comm.call(Coll::SendRecv, Algo::Ring, Proto::Simple, bytes, 0), "maxmin", &[], false).unwrap().seconds;
    let sent = send(&comm);
    comm.flush = 0.0;
    assert!(simple >= time(&comm, Algo::Tree, Proto::Simple) + 2.0 * nic - 1e-9, "{simple} s");
    assert_eq!(ll, time(&comm, Algo::Tree, Proto::Ll));
    assert!(sent >= send(&comm) + nic - 1e-9, "{sent} s");
    let one = crate::topology::Machine::load("dgx-a100").unwrap();
    assert_eq!(Comm::new(&one, &[one.gpus()], None).unwrap().flush, 0.0);
    let hopper = crate::topology::Machine::load(&format!("{}/../../examples/clusters/hgx-h100-rails-x2.yaml", env!("CARGO_MANIFEST_DIR"))).unwrap();
    assert_eq!(Comm::new(&hopper, &[node(&hopper, 0), node(&hopper, 1)], None).unwrap().flush, 0.0);
    // No GDR, no flush: a GPU reaches typical-8gpu's one HCA only through the host bridge (PHB),
    // beyond NCCL_NET_GDR_LEVEL's default PXB; a dgx-a100 GPU shares a PCIe switch with its NICs.
    let at = |m: &crate::topology::Machine, name: &str| m.devices.iter().position(|d| d.name == name).unwrap();
    let pcie = crate::topology::Machine::load("typical-8gpu").unwrap();
    let pxb = topo::PathType::Pxb;
    assert!(!topo::gdr(&pcie, &crate::flow::router::Router::new(&pcie), 35, at(&pcie, "GPU0"), &[at(&pcie, "IB0")], pxb));
    assert!(topo::gdr(&pcie, &crate::flow::router::Router::new(&pcie), 35, at(&pcie, "GPU0"), &[at(&pcie, "IB0")], topo::PathType::Phb));
    assert!(topo::gdr(&one, &crate::flow::router::Router::new(&one), 80, at(&one, "GPU0"), &[at(&one, "NIC0")], pxb));
}

#[test]
fn a_tree_ll128_chain_moves_seven_ninths_of_the_port_as_data() {
    // NCCL's model credits tree/LL128 on one node with 7/9 of the graph's bandwidth where
    // tree/Simple keeps all of it (tuning.cc, `nNodes == 1 ? 7.0/9.0 : 120.0/128.0`): the chain's
    // sends carry 9/7 of their data on the links, in place of LL128's 128/120, over LL128's share
    // of the links (`nccl_eff_ll128`). As the Simple tree above: 2 S each way through a middle
    // GPU's port, and a drain of n - 2 chunks (LL128's 576000 data bytes a step) at a 48th of the port.
    let s = (1u64 << 30) as f64;
    let row = one("all_reduce", "1G", Some("tree"), Some("LL128"), "maxmin").unwrap();
    assert_eq!((row.algo, row.proto), (Algo::Tree, Proto::Ll128));
    let (n, wire) = (8.0, 9.0 / 7.0 / constants::Constants::default().efficiency[Proto::Ll128 as usize]);
    let chunk = 576000.0 * wire * 48.0 / port();
    let want = 2.0 * s * wire / port() + (n - 2.0) * chunk;
    assert!(close(row.time_us * 1e-6, want, 0.015), "tree/LL128 {} us, closed form {} us", row.time_us, want * 1e6);
}

#[test]
fn a_tree_ll128_across_nodes_charges_seven_ninths_inside_a_node_and_the_wire_format_between() {
    // Two dgx-a100: per channel each of the two nodes' chains sends its share 7 times up and 7
    // times down between its GPUs (at 9/7 of the data, `TREE_LL128_NODE_SHARE`), and the share
    // crosses between the nodes once up and once down (at LL128's 128/120): the bytes inside
    // nodes over the bytes between them.
    let two = crate::topology::Machine::load(&format!("{}/../../examples/clusters/dgx-a100-x2.yaml", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let node = |k: usize| two.gpus().into_iter().filter(|&g| two.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    let comm = Comm::new(&two, &[node(0), node(1)], None).unwrap();
    let (t, _) = lower::lower(&comm.call(Coll::AllReduce, Algo::Tree, Proto::Ll128, 1 << 28, 0));
    let on = |d: usize| two.devices[d].name.starts_with("n0.");
    let (inside, between) = t.iter().fold((0.0, 0.0), |(i, b), x| if on(x.src) == on(x.dst) { (i + x.size as f64, b) } else { (i, b + x.size as f64) });
    let want = (2.0 * 14.0 * 9.0 / 7.0) / (2.0 * 128.0 / 120.0);
    assert!(close(inside / between, want, 1e-3), "inside / between {}, want {want}", inside / between);
    // The channel's data rate is the same on both: each cap is its data rate in its own wire bytes.
    let rate = |inside: bool| t.iter().find(|x| (on(x.src) == on(x.dst)) == inside).and_then(|x| x.max_rate).unwrap();
    assert!(close(rate(true) / rate(false), (9.0 / 7.0) / (128.0 / 120.0), 1e-9), "{} {}", rate(true), rate(false));
}

/// --explain leaves out an alternative over the transfer limit, by its count before lowering or
/// by the lowering's own stop, and runs the rest: 32 x dgx-a100 at 1 GiB was refused whole
/// (NCCL's pick fits; an alternative's lowering stopped at the limit and its refusal ended the
/// run). Here the limit is the smallest whole lowering among dgx-a100's alternatives at 64 MiB
/// that its count before lowering does not catch, so the lowering's stop decides.
#[test]
fn explain_leaves_out_alternatives_over_the_transfer_limit() {
    let r = tests_tool::Request { min_bytes: "64M".into(), max_bytes: "64M".into(), explain: true, ..req("all_reduce") };
    let rep = api::nccl_tests("dgx-a100", &r, 1, None).unwrap();
    let row = &rep.rows[0];
    let pick = (row.algo, row.proto);
    let m = crate::topology::Machine::load("dgx-a100").unwrap();
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    let sizes: Vec<((Algo, Proto), u64, u64)> = row
        .explain
        .as_ref()
        .unwrap()
        .alternatives
        .iter()
        .map(|a| (a.algo, a.proto))
        .filter(|&x| x != pick)
        .map(|(a, p)| {
            let call = comm.call(Coll::AllReduce, a, p, row.size, 0).merged();
            ((a, p), lower::transfers_at_least(&call), lower::lower(&call).0.len() as u64)
        })
        .collect();
    let limit = sizes.iter().filter(|s| s.1 < s.2).map(|s| s.2).min().expect("an alternative whose count before lowering is below its lowering");
    let (ran, left) = tests_tool::alternatives(&comm, Coll::AllReduce, row.size, &r, pick, row.time_us, 0.0, limit).unwrap();
    let want: Vec<(Algo, Proto)> = sizes.iter().filter(|s| s.1 > limit || s.2 >= limit).map(|s| s.0).collect();
    assert!(!want.is_empty() && left == want, "{left:?} {want:?}");
    assert_eq!(ran.len() + left.len(), sizes.len() + 1, "the pick and the others run");
    assert!(ran.iter().any(|a| (a.algo, a.proto) == pick));
    // The report's note and --explain's line say so where it happens.
    assert!(rep.rows[0].explain.as_ref().unwrap().left_out.is_empty() && !rep.notes.iter().any(|n| n.contains("left out")));
}

/// NCCL_ALGO / NCCL_PROTO's exclusion form (2.30.7 src/graph/tuning.cc `parseList`: a list
/// starting with '^' unsets what it names and sets every other element): ^NVLS is ring, tree,
/// NVLS-tree and PAT; ^LL128 is LL and Simple; CollNet, which contend does not lower, may be
/// excluded; a word that is no algorithm is still one line.
#[test]
fn a_caret_list_excludes_what_it_names() {
    assert_eq!(parse_algos("^NVLS").unwrap(), vec![Algo::Ring, Algo::Tree, Algo::NvlsTree, Algo::Pat]);
    assert_eq!(parse_algos("^nvls,nvlstree,collnet,pat").unwrap(), vec![Algo::Ring, Algo::Tree]);
    assert_eq!(parse_protos("^LL128").unwrap(), vec![Proto::Ll, Proto::Simple]);
    assert_eq!(parse_protos("^ll,simple").unwrap(), vec![Proto::Ll128]);
    // parseList's strtok skips empty words: "^" alone excludes nothing, a trailing comma is no word.
    assert_eq!(parse_algos("^").unwrap(), vec![Algo::Ring, Algo::Tree, Algo::Nvls, Algo::NvlsTree, Algo::Pat]);
    assert_eq!(parse_algos("^NVLS,").unwrap(), parse_algos("^NVLS").unwrap());
    assert_eq!(parse_protos("LL128,").unwrap(), vec![Proto::Ll128]);
    let e = parse_algos("^bogus").unwrap_err().to_string();
    assert!(e.contains("bogus") && e.contains("exclude") && !e.contains('\n'), "{e}");
    // On hgx-h100 NCCL picks NVLS for 1 GiB; excluding it runs what its model picks of the rest.
    let m = crate::topology::Machine::load("hgx-h100").unwrap();
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    let all = comm.choose(Coll::AllReduce, 1 << 30, Coll::AllReduce.algos(), &PROTOS).unwrap();
    assert_eq!(all.0, Algo::Nvls);
    let rest = comm.choose(Coll::AllReduce, 1 << 30, &[Algo::Ring, Algo::Tree], &PROTOS).unwrap();
    assert_eq!(comm.choose(Coll::AllReduce, 1 << 30, &parse_algos("^NVLS").unwrap(), &PROTOS), Some(rest));
}

/// Where the lowering caps a channel, the cap is the resource a channel's bottleneck names (qa26:
/// `--explain` said "no link is full" and guessed): a 64 MiB send/receive on hgx-h100 runs each
/// operation on 4 channels (16 MiB a part, 32 NVLink chunks of 512 KiB, `p2p::op_split`), each a
/// block sending at half its SM's copy rate, 47 / 2 = 23.5 GB/s (`tuning::P2P_BLOCK_COPY_BW`), far
/// under a GPU's 18 NVLinks; so every channel's limit is its cap, nearly full over the call.
#[test]
fn explain_names_a_channel_rate_cap_that_binds() {
    let r = tests_tool::Request { min_bytes: "64M".into(), max_bytes: "64M".into(), explain: true, ..req("sendrecv") };
    let rep = api::nccl_tests("hgx-h100", &r, 1, None).unwrap();
    let b = &rep.rows[0].explain.as_ref().unwrap().bottlenecks;
    assert_eq!(b.len(), 4, "{b:?}");
    assert!(b.iter().all(|b| b.resource.contains("channel rate cap of 23.5 GB/s") && b.utilisation > 0.8 && (b.capacity_gbps - 23.5).abs() < 1e-9), "{b:?}");
    assert!(!rep.explain.unwrap().contains("no link is full"));
}

/// NCCL_PROTO does not govern a send/receive's protocol (qa26): its connections keep LL buffers
/// whatever it says, so a 64 KiB all-to-all on 8 GPUs (8 KiB a peer, one channel each: at most
/// NCCL_P2P_LL_THRESHOLD = 16 KiB a channel) runs LL under `--proto simple` too, and says so.
#[test]
fn nccl_proto_does_not_govern_send_receive_and_says_so() {
    let r = tests_tool::Request { min_bytes: "64K".into(), max_bytes: "64K".into(), proto: Some("simple".into()), ..req("alltoall") };
    let rep = api::nccl_tests("hgx-h100", &r, 1, None).unwrap();
    assert_eq!(rep.rows[0].proto, Proto::Ll);
    assert!(rep.notes.iter().any(|n| n.starts_with("--proto (NCCL_PROTO) does not apply to alltoall") && n.contains("16 KiB")), "{:?}", rep.notes);
    let r = tests_tool::Request { proto: None, ..r };
    assert!(!api::nccl_tests("hgx-h100", &r, 1, None).unwrap().notes.iter().any(|n| n.contains("NCCL_PROTO")));
}

/// NCCL_MAX_NCHANNELS / NCCL_MIN_NCHANNELS (and the CTA bounds) bound NCCL's own count as
/// `ncclTopoPostset` (graph/connect.cc, v2.30.7) ends: the ceiling first, then channels copied up
/// to the floor, so a floor above the ceiling wins; a count given (`--channels`) wins over both.
/// qa27: NCCL_MAX_NCHANNELS=4 alone was noted as not applied, and ran NCCL's own count.
#[test]
fn channel_bounds_bound_nccls_own_count() {
    let at = |env: &[(&str, &str)], channels: Option<usize>| {
        let r = tests_tool::Request {
            min_bytes: "1G".into(),
            max_bytes: "1G".into(),
            algo: Some("ring".into()),
            channels,
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..req("all_reduce")
        };
        let rep = api::nccl_tests("hgx-h100", &r, 1, None).unwrap();
        assert!(!rep.notes.iter().any(|n| n.contains("ignored")), "{:?}", rep.notes);
        rep.rows[0].channels
    };
    let own = at(&[], None);
    assert!(own > 8 && own + 8 <= 64, "{own}");
    assert_eq!(at(&[("NCCL_MAX_NCHANNELS", "4")], None), 4);
    assert_eq!(at(&[("NCCL_MAX_CTAS", "4")], None), 4);
    assert_eq!(at(&[("NCCL_MAX_NCHANNELS", "64")], None), own);
    assert_eq!(at(&[("NCCL_MIN_NCHANNELS", &(own + 8).to_string())], None), own + 8);
    assert_eq!(at(&[("NCCL_MIN_NCHANNELS", "2")], None), own);
    assert_eq!(at(&[("NCCL_MIN_NCHANNELS", "8"), ("NCCL_MAX_NCHANNELS", "2")], None), 8);
    assert_eq!(at(&[("NCCL_MAX_NCHANNELS", "4")], Some(6)), 6);
}

/// NCCL_MIN/MAX_CTAS bound NVLS's channels and NCCL_MIN/MAX_NCHANNELS do not (transport/nvls.cc,
/// v2.18.5-1 to v2.30.7-1: `max(minCTAs, min(maxCTAs, nvlsChannels))`; init.cc lowers a CTA floor
/// above the CTA ceiling to it). hgx-h100 (compute capability 9.0, one node) runs NVLS on NCCL's
/// 16 channels (`Version::nvls_channels`); rev27: NCCL_MAX_CTAS=4 ran 16.
#[test]
fn cta_bounds_bound_nvls_channels() {
    let at = |env: &[(&str, &str)], nodes: usize, algo: &str| {
        let r = tests_tool::Request {
            min_bytes: "16M".into(),
            max_bytes: "16M".into(),
            algo: Some(algo.into()),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..req("all_reduce")
        };
        let rep = api::nccl_tests("hgx-h100", &r, nodes, None).unwrap();
        assert_eq!(rep.rows[0].algo.name().to_lowercase(), algo, "{env:?}");
        rep.rows[0].channels
    };
    assert_eq!(at(&[], 1, "nvls"), 16);
    assert_eq!(at(&[("NCCL_MAX_CTAS", "4")], 1, "nvls"), 4);
    assert_eq!(at(&[("NCCL_MIN_CTAS", "32")], 1, "nvls"), 32);
    assert_eq!(at(&[("NCCL_MIN_CTAS", "32"), ("NCCL_MAX_CTAS", "4")], 1, "nvls"), 4);
    assert_eq!(at(&[("NCCL_MAX_NCHANNELS", "4")], 1, "nvls"), 16);
    assert_eq!(at(&[("NCCL_MIN_NCHANNELS", "32")], 1, "nvls"), 16);
    assert_eq!(at(&[("NCCL_MIN_CTAS", "6"), ("NCCL_MAX_CTAS", "6")], 1, "nvls"), 6);
    // NVLS-tree across two nodes takes the same count (nvlsChannels).
    let own = at(&[], 2, "nvlstree");
    assert_eq!((at(&[("NCCL_MAX_CTAS", "4")], 2, "nvlstree"), at(&[("NCCL_MAX_NCHANNELS", "4")], 2, "nvlstree")), (4, own));
}
