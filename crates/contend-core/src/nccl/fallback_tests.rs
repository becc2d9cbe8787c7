//! NCCL_ALGO by release (`Comm::nccl_algos`): before 2.24.3 NCCL skips names it lacks, turns Ring
//! and Tree on where the list leaves Ring, Tree, NVLS and NVLS-tree all off, and runs Ring for a
//! collective left with nothing (graph/tuning.cc `ncclTopoTuneModel`, v2.18.5-1 to v2.23.4-1);
//! from 2.24.3 it stops ("No algorithm/protocol available"), which contend refuses.

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
