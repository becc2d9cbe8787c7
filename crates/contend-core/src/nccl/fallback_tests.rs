//! NCCL_ALGO by release (`Comm::nccl_algos`): before 2.24.3 NCCL skips names it lacks, turns Ring
//! and Tree on where the list leaves Ring, Tree, NVLS and NVLS-tree all off (graph/tuning.cc
//! `ncclTopoTuneModel`, v2.18.5-1 to v2.23.4-1), and runs Ring for a collective left with nothing
//! (2.19.3 to 2.23.4; 2.18.5 never takes Ring off a collective other than all-reduce); where
//! nothing is left NCCL stops ("No algorithm/protocol available"), which contend refuses.

use super::tests_tool::Request;
use super::*;
use crate::api;

fn run(op: &str, algo: &str, version: &str, ngpus: Option<usize>, nodes: usize) -> Result<tests_tool::Report> {
    let req = Request { ngpus, algo: Some(algo.into()), params: vec![("nccl_version".into(), version.into())], ..Request::one(op, "1M") };
    api::nccl_tests("hgx-h100", &req, nodes, None)
}

fn note(r: &tests_tool::Report) -> String {
    r.caveats.iter().find(|c| c.starts_with("NCCL_ALGO under")).cloned().unwrap_or_default()
}

/// NCCL_ALGO=PAT: 2.22.3 has no PAT (its `ncclAlgoStr` ends at NVLSTree), so nothing is set and
/// Ring and Tree come on: all-gather runs the ring. 2.23.4 has PAT, and Ring and Tree come on
/// beside it: at one GPU a node NCCL's model picks PAT at 1 MiB (as 2.24.3 does with PAT alone);
/// at 8 GPUs a node PAT is not in its table, so the ring. 2.24.3 has no fallback: refused.
#[test]
fn pat_alone_falls_back_to_ring_and_tree_before_2_24() {
    let r = run("all_gather", "pat", "2.22", Some(1), 8).unwrap();
    assert_eq!(r.rows[0].algo, Algo::Ring);
    let n = note(&r);
    assert!(n.contains("NCCL 2.22.3: it has no PAT") && n.contains("turns Ring and Tree on") && n.ends_with("picks from Ring"), "{n}");
    let r = run("all_gather", "pat", "2.23", Some(1), 8).unwrap();
    assert_eq!(r.rows[0].algo, Algo::Pat);
    assert!(note(&r).ends_with("picks from PAT, Ring"), "{}", note(&r));
    let r = run("all_gather", "pat", "2.23", None, 2).unwrap();
    assert_eq!(r.rows[0].algo, Algo::Ring);
    assert!(note(&r).ends_with("picks from Ring"), "{}", note(&r));
    let e = run("all_gather", "pat", "2.24", None, 2).unwrap_err().to_string();
    assert!(e.contains("leaves NCCL no algorithm") && !e.contains('\n'), "{e}");
    // A list that names Ring keeps it: only the unknown name is said.
    let n = note(&run("all_gather", "pat,ring", "2.22", Some(1), 8).unwrap());
    assert!(n.contains("skips the name") && !n.contains("turns Ring and Tree on"), "{n}");
    assert_eq!(note(&run("all_gather", "ring", "2.22", Some(1), 8).unwrap()), "");
}

/// Names the collective lacks: Tree for all-gather leaves it nothing, so 2.23.4 runs Ring; NVLS
/// across nodes is off without CollNet, so Ring and Tree come on (all-reduce picks among them).
#[test]
fn a_list_that_leaves_a_collective_nothing_runs_ring_before_2_24() {
    let r = run("all_gather", "tree", "2.23", None, 2).unwrap();
    assert_eq!(r.rows[0].algo, Algo::Ring);
    assert!(note(&r).contains("with none of them left for all_gather it runs Ring"), "{}", note(&r));
    assert!(run("all_gather", "tree", "2.30", None, 2).is_err());
    let r = run("all_reduce", "nvls", "2.21", None, 2).unwrap();
    assert!(matches!(r.rows[0].algo, Algo::Ring | Algo::Tree), "{:?}", r.rows[0].algo);
    assert!(note(&r).contains("with no Ring, Tree or NVLS-tree left it turns Ring and Tree on"), "{}", note(&r));
    assert!(run("all_reduce", "nvls", "2.30", None, 2).is_err());
}

fn run_with(machine: &str, op: &str, size: &str, env: &[(&str, &str)], version: &str) -> Result<tests_tool::Report> {
    let env = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let req = Request { env, params: vec![("nccl_version".into(), version.into())], ..Request::one(op, size) };
    api::nccl_tests(machine, &req, 1, None)
}

/// The ring NCCL restores for a collective its lists leave nothing, by release (qa27's wrong
/// answer 4; `Version::ring_restored`): 2.18.5 has no "at least set ring algo available" but never
/// takes Ring off another collective than all-reduce (tuning.cc:296, "Never disable ring for
/// non-allreduce operations"), under NCCL_PROTO's protocols (its `pEnable == 0` zeroing comes
/// first), so only an all-reduce left with nothing stops there, as every collective does from
/// 2.24.3 (the refusal names the release); 2.19.3 to 2.21.5 restore every
/// protocol (`ringbdw` is taken before NCCL_PROTO zeroes any), 2.22.3 and 2.23.4 only those
/// NCCL_PROTO leaves (`ringbdw[c][p] = 0` where `pEnable == 0`). NCCL_ALGO=Tree NCCL_PROTO=Simple
/// all-gather of 1 KiB on hgx-h100: NCCL's ring model gives LL 6.6 + 7 x 0.6 = 10.8 us of latency
/// and Simple 8.4 + 7 x 3.4 = 32.2 (tuning.cc baseLat, hwLat NVLink), so 2.19-2.21 pick Ring/LL
/// and 2.22-2.23 Ring/Simple.
#[test]
fn the_restored_ring_runs_the_protocols_of_its_release() {
    let lists = [("NCCL_ALGO", "Tree"), ("NCCL_PROTO", "Simple")];
    for (v, proto) in [("2.18", Proto::Simple), ("2.19", Proto::Ll), ("2.20", Proto::Ll), ("2.21", Proto::Ll), ("2.22", Proto::Simple), ("2.23", Proto::Simple)]
    {
        let r = run_with("hgx-h100", "all_gather", "1K", &lists, v).unwrap();
        assert_eq!((r.rows[0].algo, r.rows[0].proto), (Algo::Ring, proto), "{v}");
        let n = note(&r);
        let said = if v == "2.18" { "it never turns Ring off for all_gather" } else { "it runs Ring, with" };
        assert!(n.contains(said), "{v}: {n}");
        let model = if proto == Proto::Ll { 10.8 } else { 32.2 };
        assert!(r.rows[0].nccl_model_us > model && r.rows[0].nccl_model_us < model + 1.0, "{v}: {}", r.rows[0].nccl_model_us);
    }
    for (v, tag) in [("2.18", "2.18.5"), ("2.24", "2.24.3"), ("2.30", "2.30.7")] {
        if v != "2.18" {
            let e = run_with("hgx-h100", "all_gather", "1K", &lists, v).unwrap_err().to_string();
            assert!(e.contains("is no algorithm NCCL runs all_gather with") && e.contains(&format!("NCCL {tag} stops")) && !e.contains('\n'), "{v}: {e}");
        }
        // Both lists together leave nothing: the refusal names the release too.
        let e = run_with("hgx-h100", "all_reduce", "1K", &[("NCCL_ALGO", "NVLS"), ("NCCL_PROTO", "LL")], v).unwrap_err().to_string();
        assert!(e.contains("leaves NCCL no algorithm for all_reduce here under NCCL ") && e.contains(tag) && !e.contains('\n'), "{v}: {e}");
    }
    // qa27's command: NCCL_ALGO=Tree all-gather on pcie-8gpu-ws under 2.21 runs the ring (was refused).
    let r = run_with("pcie-8gpu-ws", "all_gather", "1M", &[("NCCL_ALGO", "Tree")], "2.21").unwrap();
    assert_eq!(r.rows[0].algo, Algo::Ring);
    // 2.18.5 keeps the ring of every collective but all-reduce: broadcast, reduce and
    // reduce-scatter too; an all-reduce left with nothing (NVLS on an A100 node) stops.
    for op in ["all_gather", "broadcast", "reduce", "reduce_scatter"] {
        let r = run_with("pcie-8gpu-ws", op, "1M", &[("NCCL_ALGO", "Tree")], "2.18").unwrap();
        assert_eq!(r.rows[0].algo, Algo::Ring, "{op}");
        assert!(note(&r).contains(&format!("it never turns Ring off for {op}")), "{op}: {}", note(&r));
    }
    let e = run_with("dgx-a100", "all_reduce", "1M", &[("NCCL_ALGO", "NVLS")], "2.18").unwrap_err().to_string();
    assert!(e.contains("2.18.5") && !e.contains('\n'), "{e}");
}
