//! PAT (`lower::pat`, `tuning::pat_model`) checked from NCCL's definition: the binomial steps
//! to ranks 2^d away (transport/generic.cc), ceil((n - 2^d) / 2^(d+1)) pieces a dimension, the
//! chunk and aggregation rules (enqueue.cc, collectives.h), NCCL's selection by release and GPUs
//! per node and its model's time worked out by hand from tuning.cc. (The piece counts are also
//! what NCCL 2.23.4's PatAGAlgorithm / PatRSAlgorithm give when run on the host: docs/nccl.md, "PAT".)

use super::lower::pat;
use super::tests_tool::Request;
use super::*;
use crate::api;
use std::collections::BTreeMap;

/// Pieces a rank sends on each dimension, n - 1 in all: ceil((n - 2^d) / 2^(d+1)).
fn by_hand(n: usize) -> Vec<usize> {
    (0..).map(|d| 1usize << d).take_while(|&p| p < n).map(|p| (n - p).div_ceil(2 * p)).collect()
}

#[test]
fn steps_and_pieces_follow_the_binomial_definition() {
    let want: [(usize, &[usize]); 7] =
        [(2, &[1]), (4, &[2, 1]), (6, &[3, 1, 1]), (8, &[4, 2, 1]), (12, &[6, 3, 1, 1]), (16, &[8, 4, 2, 1]), (64, &[32, 16, 8, 4, 2, 1])];
    for (n, pieces) in want {
        assert_eq!(by_hand(n), pieces, "{n}");
        assert_eq!(pat::dims(n), pieces.len(), "{n}: one step a dimension, 2^d < n");
        assert_eq!(pieces.iter().sum::<usize>(), n - 1);
        for coll in [Coll::AllGather, Coll::ReduceScatter] {
            // One piece a message: n - 1 messages a chunk.
            let one = pat::messages(coll, n, 1);
            assert_eq!(one.iter().map(Vec::len).collect::<Vec<_>>(), pieces, "{coll:?} {n}");
            // A small call packs a dimension's pieces into one message (aggregation n / 2):
            // log2(n) messages a chunk, the same pieces.
            let packed = pat::messages(coll, n, (n / 2).max(1));
            assert!(packed.iter().all(|ms| ms.len() == 1), "{coll:?} {n}");
            assert_eq!(packed.iter().map(|ms| ms[0].len()).collect::<Vec<_>>(), pieces);
        }
    }
    // All-gather's offsets are the pieces of ranks r + t, t a multiple of 2^(d+1); reduce-scatter's
    // the partials for r + s, s's lowest set bit d.
    assert_eq!(pat::offsets(Coll::AllGather, 8, 0), [0, 2, 4, 6]);
    assert_eq!(pat::offsets(Coll::AllGather, 6, 1), [0]);
    assert_eq!(pat::offsets(Coll::ReduceScatter, 8, 0), [1, 3, 5, 7]);
    assert_eq!(pat::offsets(Coll::ReduceScatter, 12, 2), [4]);
}

#[test]
fn a_piece_waits_for_the_receives_its_tree_gives_it() {
    // All-gather: the piece of r + 6 goes out on dimension 0 after it came on dimension 1 (from
    // r + 2, whose own offset for it is 4); r's own piece waits for nothing.
    assert_eq!(pat::needs(Coll::AllGather, 8, 0, 6), [(1, 4)]);
    assert_eq!(pat::needs(Coll::AllGather, 8, 1, 4), [(2, 0)]);
    assert!(pat::needs(Coll::AllGather, 8, 2, 0).is_empty());
    // Reduce-scatter: the partial for r + 4 leaves on dimension 2 with the partials from r - 1
    // (its offset 5) and r - 2 (its offset 6); on 6 ranks r - 2 has none for it (6 is not a rank
    // offset), as NCCL's host run shows (one receive before the send of offset 4).
    assert_eq!(pat::needs(Coll::ReduceScatter, 8, 2, 4), [(0, 5), (1, 6)]);
    assert_eq!(pat::needs(Coll::ReduceScatter, 6, 2, 4), [(0, 5)]);
    assert!(pat::needs(Coll::ReduceScatter, 8, 0, 3).is_empty());
}

#[test]
fn chunk_and_aggregation_are_nccls() {
    let step = 4 * 1024 * 1024 / 8;
    // enqueue.cc: one 512 KiB step, halved while 32 chunks (all-gather) or 16 (reduce-scatter)
    // exceed the channel's bytes, down to 64 KiB.
    assert_eq!(pat::chunk(Coll::AllGather, step, 128 << 20), 512 << 10);
    assert_eq!(pat::chunk(Coll::AllGather, step, 8 << 20), 256 << 10);
    assert_eq!(pat::chunk(Coll::ReduceScatter, step, 8 << 20), 512 << 10);
    assert_eq!(pat::chunk(Coll::AllGather, step, 1 << 20), 64 << 10);
    // collectives.h: pieces a message, doubled while a chunk holds twice as many, below n / 2.
    assert_eq!(pat::aggregation(64 << 10, 1 << 10, 64), 32);
    assert_eq!(pat::aggregation(64 << 10, 8 << 10, 16), 8);
    assert_eq!(pat::aggregation(64 << 10, 16 << 10, 16), 4);
    assert_eq!(pat::aggregation(512 << 10, 8 << 20, 16), 1);
}

/// NCCL's model on a communicator given by hand: 16 nodes of one GPU, a tree graph of 2 channels
/// at 24 GB/s between nodes.
fn one_per_node(version: versions::Version, nodes: usize) -> tuning::Comm {
    tuning::Comm { ranks: nodes, nodes, cc: 90, tree_channels: 2, tree_bw_intra: 24.0, tree_bw_inter: 24.0, ..super::versions_tests::comm(version) }
}

#[test]
fn nccls_pat_model_by_hand() {
    use versions::Version;
    // 2.30.7: bus = 2 x 24 x 0.75 = 36 GB/s (no algorithm ratio); latency 8 + log2(16) x 14 / 3.5
    // + 16 x 2.8 = 68.8 us; 1 MiB: 68.8 + 1048576 / 36000 = 97.927 us.
    let c = one_per_node(Version::V2_30, 16);
    let (lat, bw) = tuning::model(&c, Coll::AllGather, Algo::Pat, Proto::Simple).unwrap();
    assert!((lat - 68.8).abs() < 1e-9 && (bw - 36.0).abs() < 1e-9, "{lat} {bw}");
    let t = tuning::time_us(&c, Coll::ReduceScatter, Algo::Pat, Proto::Simple, 1 << 20).unwrap();
    assert!((t - (68.8 + 1048576.0 / 36000.0)).abs() < 1e-9, "{t}");
    // 2.23.4: 0.85 (40.8 GB/s); the net plugin's 5 us twice in interLat (Simple's flush).
    let c = tuning::Comm { net_latency: 5.0, ..one_per_node(Version::V2_23, 16) };
    let (lat, bw) = tuning::model(&c, Coll::AllGather, Algo::Pat, Proto::Simple).unwrap();
    assert!((lat - (8.0 + 4.0 * 24.0 / 3.5 + 44.8)).abs() < 1e-9 && (bw - 40.8).abs() < 1e-9, "{lat} {bw}");
    // Not LL or LL128, not all-reduce, not before 2.23, not at two GPUs a node, not at NCCL_PAT_ENABLE=0.
    let c = one_per_node(Version::V2_30, 16);
    assert!(tuning::model(&c, Coll::AllGather, Algo::Pat, Proto::Ll).is_none());
    assert!(tuning::model(&c, Coll::AllReduce, Algo::Pat, Proto::Simple).is_none());
    assert!(tuning::model(&one_per_node(Version::V2_22, 16), Coll::AllGather, Algo::Pat, Proto::Simple).is_none());
    assert!(tuning::model(&tuning::Comm { ranks: 32, ..c.clone() }, Coll::AllGather, Algo::Pat, Proto::Simple).is_none());
    assert!(tuning::model(&tuning::Comm { pat_enable: 0, ..c.clone() }, Coll::AllGather, Algo::Pat, Proto::Simple).is_none());
    // From 2.26 compute capability 6.0 at least, whatever NCCL_PAT_ENABLE says.
    assert!(tuning::model(&tuning::Comm { cc: 52, version: Version::V2_26, pat_enable: 1, ..c }, Coll::AllGather, Algo::Pat, Proto::Simple).is_none());
    // Against the ring at 1 MiB on 16 nodes (ring Simple, one GPU a node: 8.4 base + 15 network
    // steps x 14 = 218.4 us of latency): NCCL picks PAT.
    let c = tuning::Comm { graph_channels: 2, bw_intra: 24.0, bw_inter: 24.0, ..one_per_node(Version::V2_30, 16) };
    let allowed = [(Algo::Ring, Proto::Simple), (Algo::Pat, Proto::Simple)];
    assert_eq!(tuning::choose(&c, Coll::AllGather, 1 << 20, &allowed).unwrap().0, Algo::Pat);
    let (ring_lat, _) = tuning::model(&c, Coll::AllGather, Algo::Ring, Proto::Simple).unwrap();
    assert!((ring_lat - 218.4).abs() < 1e-9, "{ring_lat}");
}

/// `machine` on `nodes` nodes of `per_node` GPUs each (`contend nccl-tests -g`), under `version`.
fn comm(machine: &str, nodes: usize, per_node: usize, params: &[(&str, &str)]) -> Result<Comm> {
    let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let req = Request { ngpus: Some(per_node), params: params.clone(), ..Request::one("all_gather", "1M") };
    let (m, nodes_gpus, _) = nodes::on_nodes(machine, &req, nodes, None)?;
    let mut c = Comm::new(&m, &nodes_gpus, None)?;
    c.set_constants(constants::split(&params)?.0)?;
    Ok(c)
}

#[test]
fn selection_by_release_and_gpus_per_node() {
    let ag = Coll::AllGather;
    for (v, pat) in [("2.22", false), ("2.23", true), ("2.24", true), ("2.26", true), ("2.30", true)] {
        let c = comm("hgx-h100", 16, 1, &[("nccl_version", v)]).unwrap();
        let got = c.choose(ag, 1 << 20, ag.algos(), &PROTOS).unwrap().0;
        assert_eq!(got == Algo::Pat, pat, "{v}: {got:?}");
    }
    // Two GPUs a node: never PAT, and NCCL_ALGO=pat leaves nothing (NCCL: its bandwidth is 0).
    let two = comm("hgx-h100", 8, 2, &[]).unwrap();
    assert_ne!(two.choose(ag, 1 << 20, ag.algos(), &PROTOS).unwrap().0, Algo::Pat);
    assert!(two.choose(ag, 1 << 20, &[Algo::Pat], &PROTOS).is_none());
    // NCCL_PAT_ENABLE=0 turns it off.
    let off = comm("hgx-h100", 16, 1, &[("nccl_pat_enable", "0")]).unwrap();
    assert_eq!(off.choose(ag, 1 << 20, ag.algos(), &PROTOS).unwrap().0, Algo::Ring);
}

#[test]
fn pat_enable_1_is_refused_only_where_nccl_picks_pat() {
    use versions::Version;
    // NCCL_PAT_ENABLE=1 on 2 nodes of 8 GPUs: PAT is in NCCL's all-gather and reduce-scatter table
    // (tuning.cc `ncclPatEnable` returns 1 before its nNodes == nRanks test), with PAT's own
    // network latency at more than one GPU a node (none in 2.23.4 to 2.27.7's table: 0; 14 us from
    // 2.28.3) plus the net plugin's twice, and 16 x 2.8 us: far above the ring at 1 KiB, so NCCL runs
    // the ring and contend with it; all-reduce never has PAT (tuning.cc: `if (coll ==
    // ncclFuncAllReduce && a == NCCL_ALGO_PAT) continue;`) and all-to-all has no algorithm.
    let env =
        |op: &str, algo: Option<&str>| Request { algo: algo.map(Into::into), env: vec![("NCCL_PAT_ENABLE".into(), "1".into())], ..Request::one(op, "1K") };
    for op in ["all_gather", "reduce_scatter", "all_reduce"] {
        let r = api::nccl_tests("hgx-h100", &env(op, None), 2, None).unwrap();
        assert_ne!(r.rows[0].algo, Algo::Pat, "{op}");
    }
    api::nccl_tests("hgx-h100", &env("alltoall", None), 1, None).unwrap();
    let c = comm("hgx-h100", 2, 8, &[("nccl_pat_enable", "1")]).unwrap();
    let (lat, _) = tuning::model(&c.tuning, Coll::AllGather, Algo::Pat, Proto::Simple).unwrap();
    let net = c.tuning.net_latency;
    let inter = if c.tuning.version < Version::V2_28 { 0.0 } else { 14.0 } + 2.0 * net;
    assert!((lat - (8.0 + inter / 3.5 + 16.0 * 2.8)).abs() < 1e-9, "{lat}");
    // Where NCCL would pick PAT (NCCL_ALGO=PAT), its kernel finds no peers connected (init.cc
    // connects PAT only at one GPU per node): refused, named by the variable.
    let e = api::nccl_tests("hgx-h100", &env("all_gather", Some("pat")), 2, None).err().unwrap().to_string();
    assert!(e.starts_with("NCCL_PAT_ENABLE (environment): NCCL_PAT_ENABLE=1: puts PAT") && e.contains("no connection"), "{e}");
    // At its default 2, two GPUs a node have no PAT in the table at all.
    let two = comm("hgx-h100", 2, 8, &[]).unwrap();
    assert!(tuning::model(&two.tuning, Coll::AllGather, Algo::Pat, Proto::Simple).is_none());
}

#[test]
fn each_rank_sends_its_pieces_to_the_ranks_2_to_the_d_away() {
    for (coll, n) in [(Coll::AllGather, 4), (Coll::AllGather, 6), (Coll::ReduceScatter, 6), (Coll::ReduceScatter, 8)] {
        let c = comm("hgx-h100", n, 1, &[]).unwrap();
        // 64 MiB: a channel's share S = 64 MiB / channels, a piece S / n, one loop of whole pieces
        // (no aggregation: the chunk is below twice a piece) or several; either way each rank sends
        // P_d pieces of every channel's share to the rank 2^d away.
        let bytes = 64u64 << 20;
        let call = c.call(coll, Algo::Pat, Proto::Simple, bytes, 0);
        let channels = call.channels() as u64;
        let piece = bytes.div_ceil(channels).div_ceil(n as u64);
        let (t, _) = lower::lower(&call);
        let pos = |dev: usize| c.devices.iter().position(|&d| d == dev);
        let mut sent = BTreeMap::<(usize, usize), u64>::new();
        for x in t.iter().filter(|x| x.compute.is_none() && x.size > 64) {
            *sent.entry((pos(x.src).unwrap(), pos(x.dst).unwrap())).or_default() += x.size;
        }
        for r in 0..n {
            for (d, p) in by_hand(n).into_iter().enumerate() {
                let to = if coll == Coll::AllGather { (r + n - (1 << d)) % n } else { (r + (1 << d)) % n };
                assert_eq!(sent.get(&(r, to)).copied().unwrap_or(0), channels * p as u64 * piece, "{coll:?} {n}: {r} -> {to}");
            }
        }
        // Nothing else: n - 1 pieces a rank a channel, log2 peers.
        assert_eq!(sent.values().sum::<u64>(), n as u64 * channels * (n as u64 - 1) * piece);
    }
}

#[test]
fn a_one_gpu_per_node_cluster_runs_pat_and_explains_it() {
    let req = |v: &str| Request { ngpus: Some(1), explain: true, params: vec![("nccl_version".into(), v.into())], ..Request::one("all_gather", "1M") };
    let r = api::nccl_tests("hgx-h100", &req("2.30"), 16, None).unwrap();
    assert_eq!(r.rows[0].algo, Algo::Pat);
    let text = tests_tool::explain_text(&r);
    assert!(text.contains("NCCL picks PAT/Simple") && text.contains("PAT on 16 ranks: 4 steps"), "{text}");
    assert!(text.contains("Ring/Simple"), "the ring is run beside it: {text}");
    // 2.22 has no PAT: the ring.
    assert_eq!(api::nccl_tests("hgx-h100", &req("2.22"), 16, None).unwrap().rows[0].algo, Algo::Ring);
}

/// `op` on `nodes` nodes of one H100 each, PAT forced, at `size`, on `channels` (None: NCCL's count).
fn pat_us(op: &str, nodes: usize, size: &str, channels: Option<usize>) -> f64 {
    let req = Request { ngpus: Some(1), algo: Some("pat".into()), channels, ..Request::one(op, size) };
    let r = api::nccl_tests("hgx-h100", &req, nodes, None).unwrap();
    assert_eq!(r.rows[0].algo, Algo::Pat);
    r.rows[0].time_us
}

#[test]
fn the_per_call_terms_are_paid_once_on_every_chain() {
    // NCCL's model (tuning.cc, v2.23.4-1 to v2.30.7-1): base + log2i(nNodes) x interLat / 3.5 +
    // nRanks x 2.8, whatever the collective. All-gather and reduce-scatter are mirrors (the same
    // messages a dimension, the same chain of ceil(log2 n) of them), so a latency-bound call
    // takes the same time under both, at n = 2^k + 1 too (all-gather's first message, on its top
    // dimension, is never forwarded there: the base must not ride on it); and one more rank
    // adds 2.8 us and possibly a step, never less.
    let base = tuning::PAT_BASE_US;
    let mut last = 0.0;
    for n in [4usize, 5, 8, 9, 16, 17] {
        let ag = pat_us("all_gather", n, "1K", None);
        let rs = pat_us("reduce_scatter", n, "1K", None);
        assert!((ag - rs).abs() < 1e-6 * rs, "{n}: all-gather {ag} us, reduce-scatter {rs} us");
        assert!(ag >= last, "{n}: {ag} us, below {last} us at fewer ranks");
        // At least the per-call terms: the base and n x 2.8 us (the network steps and the call's
        // measured network overhead come on top).
        assert!(ag > base + n as f64 * tuning::PAT_RANK_US, "{n}: {ag} us");
        last = ag;
    }
}

#[test]
fn more_bytes_never_end_sooner() {
    // Moving more bytes on the same channels cannot shorten a call; NCCL's model is monotone
    // in size (latency + bytes / bus). A small call packs a dimension's pieces into one message,
    // a large one sends them piece by piece: the per-call 2.8 us a rank is not paid per piece.
    for op in ["all_gather", "reduce_scatter"] {
        for channels in [Some(1), Some(8)] {
            let mut last = 0.0;
            for size in ["1K", "16K", "256K", "1M", "4M"] {
                let t = pat_us(op, 16, size, channels);
                assert!(t >= last, "{op} {channels:?} {size}: {t} us, below {last} us at the smaller size");
                last = t;
            }
        }
    }
}

#[test]
fn a_small_call_runs_on_the_channels_enqueues_cells_give_it() {
    // enqueue.cc (v2.30.7-1: 32 KiB of traffic a cell; 16 ranks: 2 KiB of a rank's elements a
    // cell, traffic = bytes x 16): 1 KiB is 64 B a rank, one cell, one channel; 64 KiB two cells
    // at one a channel (8 KiB of traffic a channel, below a cell); 256 KiB eight; 1 MiB 32 cells,
    // 4 a channel (128 KiB a channel): 8. 9 cells on 8 channels: ceil(9 x 32 / 8 KiB / 32 KiB) = 2
    // a channel, so 5 channels (2, 2, 2, 2, 1). v2.23.4-1 (16 KiB, 1 KiB a rank a cell): 64 KiB is
    // 4 cells, 4 channels.
    let (k32, k16) = (32 << 10, 16 << 10);
    assert_eq!(pat::cell_channels(1 << 10, 16, 8, k32), 1);
    assert_eq!(pat::cell_channels(64 << 10, 16, 8, k32), 2);
    assert_eq!(pat::cell_channels(256 << 10, 16, 8, k32), 8);
    assert_eq!(pat::cell_channels(1 << 20, 16, 8, k32), 8);
    assert_eq!(pat::cell_channels(9 * 2048 * 16, 16, 8, k32), 5);
    assert_eq!(pat::cell_channels(64 << 10, 16, 8, k16), 4);
    assert_eq!(pat::cell_channels(64 << 10, 16, 1, k16), 1);
    // The call runs on them.
    let req = |v: &str| Request { ngpus: Some(1), params: vec![("nccl_version".into(), v.into())], ..Request::one("all_gather", "1K") };
    assert_eq!(api::nccl_tests("hgx-h100", &req("2.30"), 16, None).unwrap().rows[0].channels, 1);
}
