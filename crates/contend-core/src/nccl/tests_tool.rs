//! What nccl-tests (NVIDIA/nccl-tests, `<op>_perf -b MIN -e MAX -f FACTOR`) would print on a
//! machine: its table (size, count, type, redop, root, then time, algbw, busbw and #wrong for
//! out-of-place and in-place), with its bus-bandwidth factors and its `# Avg bus bandwidth`
//! (the mean busbw over every row, out-of-place and in-place). Each size is one call of NCCL's
//! pick, lowered and run on the executor (a broadcast or reduce also two calls back to back, as
//! nccl-tests' timed loop runs them: `super::run_loop`); the sizes are independent and run in
//! parallel.
//! nccl-tests' own definitions (sizes, counts, datatypes, number formats) are tools::nccl_tests'.

use super::{lower, topo, tuning, Algo, Coll, Comm, Proto, PROTOS};
use crate::error::{Error, Result};
use crate::tools::nccl_tests as nt;
use crate::topology::Machine;
use rayon::prelude::*;
use serde::Serialize;

/// What the user asks for; quantities as written.
#[derive(Clone, Debug)]
pub struct Request {
    pub op: String,
    pub min_bytes: String,
    pub max_bytes: String,
    /// -f: multiply the size by this (nccl-tests' stepfactor); 0 is refused.
    pub factor: u64,
    /// -g: nccl-tests' GPUs per process: one process (one thread) drives the node's first N GPUs,
    /// as `<op>_perf -g N` runs; unset, each GPU is a process of its own (`mpirun -np N … -g 1`).
    pub ngpus: Option<usize>,
    /// --gpus: these GPUs of the node, in rank order.
    pub gpus: Option<Vec<String>>,
    /// -d: nccl-tests' datatype.
    pub dtype: String,
    pub root: usize,
    /// -n: nccl-tests' timed iterations, enqueued back to back (`super::run_loop`); 0 is refused.
    pub iters: usize,
    /// NCCL_ALGO / NCCL_PROTO (comma lists) and the channel count (NCCL_MIN/MAX_NCHANNELS).
    pub algo: Option<String>,
    pub proto: Option<String>,
    pub channels: Option<usize>,
    /// Floors and ceilings on NCCL's own counts (NCCL_MIN/MAX_NCHANNELS, NCCL_MIN/MAX_CTAS:
    /// `environment::Environment::channel_bounds`).
    pub channel_bounds: Option<super::environment::Bounds>,
    /// A tuner plugin's CSV file (NCCL_TUNER_CONFIG_FILE of NCCL's example plugin, `tuner`).
    pub tuner: Option<String>,
    pub model: String,
    pub params: Vec<(String, String)>,
    pub explain: bool,
    /// The caller's environment's NCCL_* variables, as (name, value) pairs (`environment`): read
    /// where the fields above do not set the same (`api::nccl_tests`).
    pub env: Vec<(String, String)>,
}

impl Request {
    /// `op` from `min` to `max` bytes as nccl-tests runs it by default (`-f 2`, float, every GPU),
    /// NCCL's own choice, under maxmin.
    pub fn sweep(op: &str, min: &str, max: &str) -> Request {
        Request {
            op: op.into(),
            min_bytes: min.into(),
            max_bytes: max.into(),
            factor: 2,
            ngpus: None,
            gpus: None,
            dtype: "float".into(),
            root: 0,
            iters: nt::ITERS,
            algo: None,
            proto: None,
            channels: None,
            channel_bounds: None,
            tuner: None,
            model: "maxmin".into(),
            params: vec![],
            explain: false,
            env: vec![],
        }
    }

    /// One size of `op` (for tests).
    #[cfg(test)]
    pub fn one(op: &str, size: &str) -> Request {
        Request::sweep(op, size, size)
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct Alternative {
    pub algo: Algo,
    pub proto: Proto,
    /// Predicted by running it (contend), and by NCCL's own cost model.
    pub time_us: f64,
    pub nccl_model_us: f64,
}

#[derive(Serialize, Debug, Clone)]
pub struct Bottleneck {
    pub channel: usize,
    /// The channel's most used link direction (or device), and its utilisation over the call:
    /// bytes it carried / (capacity × the call's time).
    pub resource: String,
    pub utilisation: f64,
    pub capacity_gbps: f64,
}

#[derive(Serialize, Debug, Clone)]
pub struct RowExplain {
    /// Every algorithm and protocol NCCL has for the call, run.
    pub alternatives: Vec<Alternative>,
    pub fastest_algo: Algo,
    pub fastest_proto: Proto,
    /// How much slower NCCL's pick is than the fastest, in percent (0 when it is the fastest).
    pub pick_slower_pct: f64,
    /// Share of the call's time that is latency: the same transfers with one byte each, over the call.
    pub latency_share: f64,
    pub bottlenecks: Vec<Bottleneck>,
    /// Alternatives not run: over the transfers contend lowers one call to (`lower::MAX_TRANSFERS`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<(Algo, Proto)>,
    /// PAT's steps, where NCCL picks it (`lower::pat::describe`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<String>,
}

#[derive(Serialize, Debug, Clone)]
pub struct Row {
    pub size: u64,
    pub count: u64,
    #[serde(rename = "type")]
    pub dtype: String,
    pub redop: String,
    pub root: i64,
    pub algo: Algo,
    pub proto: Proto,
    pub channels: usize,
    pub transfers: usize,
    pub time_us: f64,
    pub algbw: f64,
    pub busbw: f64,
    pub in_place_time_us: f64,
    pub in_place_algbw: f64,
    pub in_place_busbw: f64,
    /// NCCL's own model's time for its pick (it has no contention).
    pub nccl_model_us: f64,
    /// The tuner file's line that picked (None: NCCL's model picked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tuner_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<RowExplain>,
}

#[derive(Serialize, Debug, Clone)]
pub struct SearchSummary {
    /// The rings the search built on one node (GPU names), before NCCL doubles them.
    pub rings: Vec<Vec<String>>,
    /// NCCL's planned bandwidth per channel, GB/s, and the worst path type a ring uses.
    pub bw_per_channel: f64,
    pub path_type: String,
    /// Channels the communicator runs.
    pub channels: usize,
    pub compute_capability: u32,
    /// Across nodes: how the rings leave a node, and the graphs NCCL's cost model reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub across_nodes: Option<AcrossNodes>,
}

#[derive(Serialize, Debug, Clone)]
pub struct AcrossNodes {
    /// Channel 0's ring over every rank (GPU names).
    pub ring: Vec<String>,
    /// Per channel, on the first node, where it crosses (`rails`); empty where the router's
    /// nearest NIC is taken.
    pub crossings: Vec<Crossing>,
    /// The first node's NICs and each one's network link, GB/s.
    pub nics: Vec<(String, f64)>,
    /// Those of them NCCL's search does not list (`rails::search_nics`: farther from every GPU
    /// than the NICs it lists); they carry no channel.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unused: Vec<String>,
    /// NCCL's ring graph through the NICs: channels and GB/s per channel.
    pub ring_graph: (usize, f64),
    /// NCCL's tree graph: channels, and GB/s per channel inside a node and between nodes.
    pub tree_graph: (usize, f64, f64),
    /// NCCL's NVLS graph across nodes (`nvls_heads::search`): its heads (the first node's GPUs, in
    /// channel order) and GB/s per channel inside a node and between nodes; None: no NVLS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nvls_graph: Option<(Vec<String>, f64, f64)>,
}

/// Where one channel crosses the first node's boundary (`rails::Exit`, by name).
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Crossing {
    /// The NIC it enters by and the GPU it enters at.
    pub nic: String,
    pub enter: String,
    /// The NIC it leaves by (another only where the rails cross: crossNic 2, or 1), the GPU it
    /// leaves from, and the GPU that posts the leaving step with PXN, if any.
    pub out: String,
    pub leave: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relay: Option<String>,
}

#[derive(Serialize, Debug, Clone)]
pub struct Report {
    pub machine: String,
    pub op: String,
    pub ranks: usize,
    pub nodes: usize,
    /// A cluster's nodes, where the run took fewer of them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub of_nodes: Option<usize>,
    pub gpus: Vec<String>,
    pub model: String,
    pub nccl_version: String,
    /// The tuner file that picked before NCCL's model, if one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tuner: Option<String>,
    pub search: SearchSummary,
    /// NCCL's name of each algorithm's id in `rows` (`Algo::name`), for tables and plot legends.
    pub algo_names: std::collections::BTreeMap<&'static str, &'static str>,
    pub rows: Vec<Row>,
    pub avg_busbw: f64,
    pub notes: Vec<String>,
    /// Of `notes`, those a reader of the table alone needs (an assumption that changes NCCL's
    /// choice, a setting that did not apply, a tuner's lines): printed beside the table; the rest
    /// (true of every run, or about the JSON's fields) only with `--explain` and in the JSON.
    pub caveats: Vec<String>,
    /// The table as nccl-tests prints it.
    pub table: String,
    /// `--explain` as text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explain: Option<String>,
}

/// Predict the sweep on `comm`.
pub fn predict(comm: &Comm, req: &Request) -> Result<Report> {
    // NCCL's constants (`nccl_*`) are the communicator's (`api::nccl_tests` set them); the rest
    // are the model's.
    // A release given as a patch other than the tag restated (2.19.4: run as 2.19.3's choice).
    let release_note = req.params.iter().find(|(k, _)| k == "nccl_version").and_then(|(_, v)| super::versions::Version::patch_note(v));
    let req = &Request { params: super::constants::split(&req.params)?.1, ..req.clone() };
    let coll = Coll::parse(&req.op)?;
    let word = nt::dtype_size(&req.dtype)?;
    let (min, max) = (nt::parse_size(&req.min_bytes, "-b")?, nt::parse_size(&req.max_bytes, "-e")?);
    let list = nt::sizes(min, max, req.factor)?;
    nt::check_iters(req.iters)?;
    let n = comm.devices.len();
    if n == 1 {
        // NCCL runs a one-rank collective as no kernel of its own (2.30.7 src/enqueue.cc `taskAppend`:
        // nRanks == 1 calls `ncclLaunchOneRank`, src/device/onerank.cu): out-of-place a device-to-device
        // cudaMemcpyAsync of the buffer, in-place nothing. Its time is the GPU's own memory bandwidth, which a
        // machine description does not hold (as nvbandwidth's device_local_copy, `tools::nvbandwidth`), so it
        // is refused rather than printed as 0.
        // Named as the user chose the rank: `--gpus`, `-g`, or a machine of one GPU.
        let (field, value, more) = match (&req.gpus, req.ngpus) {
            (Some(g), _) => ("--gpus", g.join(","), "two GPUs or more"),
            (None, Some(k)) => ("-g", k.to_string(), "-g 2 or more"),
            (None, None) => ("machine", comm.m.name.clone(), "a machine of two GPUs or more"),
        };
        return Err(Error::input(
            field,
            value,
            format!("one rank: NCCL runs a one-rank collective as a copy inside the GPU (cudaMemcpyAsync device to device; in-place: nothing), timed by the GPU's memory, which the machine does not describe; give {more}, or --nodes 2"),
        ));
    }
    if req.root >= n {
        return Err(Error::input("--root", req.root.to_string(), format!("is not a rank; give 0 to {}", n - 1)));
    }
    super::check_model(&req.model)?;
    // NCCL_PROTO's list, None where unset (LL128 then only where NCCL's gates allow it: `Comm::tuning_under`).
    let protos = req.proto.as_deref().map(super::parse_protos).transpose()?;
    let named = match &req.algo {
        Some(s) => Some(super::parse_algos(s)?),
        None => None,
    };
    // As NCCL_ALGO: a list may name algorithms the collective has not (NCCL keeps the rest); one
    // that names none of them is refused, but where the release falls back (`Comm::nccl_algos`,
    // before 2.24.3), which is said in one line. Send/receive and all-to-all run peer-to-peer, which
    // NCCL_ALGO does not govern: NCCL runs them whatever it says, and so does this (with a note).
    let p2p_only = coll.algos() == [Algo::P2p];
    let ignored_algo = p2p_only && req.algo.is_some();
    // Nor does NCCL_PROTO: a send/receive runs LL up to NCCL_P2P_LL_THRESHOLD a channel wherever its
    // connections have LL buffers, and they have them whatever NCCL_PROTO says (the buffers are sized
    // by NCCL_BUFFSIZE / NCCL_LL_BUFFSIZE alone: init.cc `computeBuffSizes`; enqueue.cc `addP2pToPlan`,
    // NCCL 2.30.7).
    let ignored_proto = p2p_only && req.proto.is_some();
    let (mut algos, protos, algo_fallback) = if p2p_only { (vec![Algo::P2p], protos, None) } else { comm.nccl_algos(coll, named, protos) };
    if algos.is_empty() {
        let have: Vec<&str> = coll.algos().iter().map(|a| a.id()).collect();
        return Err(Error::input(
            "--algo",
            req.algo.clone().unwrap_or_default(),
            format!(
                "is no algorithm NCCL runs {} with; {} has {} (NCCL {} stops where the list leaves nothing: enqueue.cc, no algorithm/protocol available)",
                coll.name(),
                coll.name(),
                have.join(", "),
                comm.constants.version.tag()
            ),
        ));
    }
    if coll.reduces() && !tuning::nvls_reduces(&req.dtype) {
        // NCCL never picks NVLS for a reduction of this type; asked for alone, it cannot run it.
        algos.retain(|&a| tuning::runs(coll, &req.dtype, a));
        if algos.is_empty() {
            let why = format!("NCCL does not reduce {} on NVLS (its multimem reductions take 16-, 32- and 64-bit types); choose ring or tree", req.dtype);
            return Err(Error::input("--algo", req.algo.clone().unwrap_or_default(), why));
        }
    }
    let p2p = matches!(coll, Coll::AllToAll | Coll::SendRecv);
    if !p2p && comm.choose_listed(coll, 1 << 20, &algos, protos.as_deref()).is_none() {
        let have: Vec<&str> = coll.algos().iter().map(|a| a.name()).collect();
        return Err(Error::input(
            "--algo/--proto",
            format!("{}/{}", req.algo.as_deref().unwrap_or("any"), req.proto.as_deref().unwrap_or("any")),
            format!(
                "leaves NCCL no algorithm for {} here under NCCL {} ({} has {}; {})",
                coll.name(),
                comm.constants.version.tag(),
                coll.name(),
                have.join(", "),
                super::NEEDS
            ),
        ));
    }
    // One process driving several GPUs (`-g N`): nccl-tests' thread issues each GPU's call of an
    // iteration in turn (src/common.cu `startColl`, NCCL's src/group.cc `doLaunches`), and times
    // 20 iterations enqueued back to back (-n 20, no sync between them), so the host's work
    // overlaps the GPUs' and an iteration takes the longer of the two. The staggered start of the
    // GPUs is paid once per timed loop, not per iteration (at most N × nccl_launch_host / 20), and
    // is left out. With one GPU per process its one launch (about 5 us) is below any call's own time.
    let host_floor_us = host_floor_s(comm, req.ngpus) * 1e6;
    let row = |size: u64| -> Result<Row> {
        let (count, bytes) = nt::count_of(coll.name(), size, word, n as u64);
        let (pick, ran) = run_size(comm, coll, bytes, req.root, &algos, protos.as_deref(), &req.model, &req.params, req.explain, req.iters)?;
        let (algo, proto, model_us) = (pick.algo, pick.proto, pick.model_us);
        // A row of 0 elements launches no kernel (its note below), so no launch sets its time; but
        // a 0-byte send NCCL runs (`Comm::empty_p2p`).
        let floor_us = if count > 0 || comm.empty_p2p(coll) { host_floor_us } else { 0.0 };
        let time_us = (ran.seconds * 1e6).max(floor_us);
        let algbw = if time_us > 0.0 { bytes as f64 / (time_us * 1e3) } else { 0.0 };
        let busbw = algbw * coll.busbw_factor(n);
        let explain = if req.explain { Some(explain_row(comm, coll, bytes, req, &pick, &ran, floor_us)?) } else { None };
        Ok(Row {
            size: bytes,
            count,
            dtype: req.dtype.clone(),
            redop: if coll.reduces() { "sum".into() } else { "none".into() },
            root: if coll.rooted() { req.root as i64 } else { -1 },
            algo,
            proto,
            channels: ran.channels,
            transfers: ran.transfers,
            time_us,
            algbw,
            busbw,
            in_place_time_us: time_us,
            in_place_algbw: algbw,
            in_place_busbw: busbw,
            nccl_model_us: model_us,
            tuner_line: pick.tuner_line,
            explain,
        })
    };
    // The sizes run in parallel, pulled one at a time from a queue of the largest first (greedy,
    // longest first): a row's cost grows with its size, and rayon's halving of the list in order
    // hands the large rows out late, in halves, leaving a core idle at the end (32 x dgx-a100: 4
    // ring rows of 1-8 GiB at about 3 s of CPU each, 6 tree rows of 32-512 MiB at 2-3 s; with
    // those costs, 15.3 s simulated against 14.4 for the queue, the even split: docs/benchmarks.md,
    // issue 25, nineteenth round). Each row is a run of its own, so the order changes no value;
    // the rows go back in size order below.
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(list[i]));
    let mut rows: Vec<(usize, Result<Row>)> = order.into_iter().par_bridge().map(|i| (i, row(list[i]))).collect();
    rows.sort_by_key(|x| x.0);
    let rows = rows.into_iter().map(|x| x.1).collect::<Result<Vec<Row>>>()?;
    let avg_busbw = if rows.is_empty() { 0.0 } else { rows.iter().map(|r| r.busbw + r.in_place_busbw).sum::<f64>() / (2 * rows.len()) as f64 };
    let m = &comm.m;
    let local: Vec<String> = comm.topo.gpus.iter().map(|&g| m.devices[g].name.clone()).collect();
    let search = SearchSummary {
        rings: comm.graph.rings.iter().map(|r| r.iter().map(|&k| local[k].clone()).collect()).collect(),
        bw_per_channel: comm.graph.bw,
        path_type: comm.graph.kind.name().into(),
        channels: comm.channels,
        compute_capability: comm.topo.cc,
        across_nodes: (comm.nodes > 1).then(|| across_nodes(comm)),
    };
    let mut notes =
        vec!["in-place and out-of-place move the same bytes in NCCL's lowering, so their columns agree; #wrong is 0 (nothing is computed)".to_string()];
    // A GPU whose model does not say its generation runs NCCL's Ampere tables (`topo::compute_capability`).
    let unknown: std::collections::BTreeSet<&str> = comm
        .devices
        .iter()
        .map(|&g| &comm.m.devices[g])
        .filter(|d| super::topo::known_compute_capability(d.model.as_deref()).is_none())
        .map(|d| d.model.as_deref().unwrap_or("none given"))
        .collect();
    // A patch release run as its minor's tag: the header names the tag, so the table's reader
    // needs the note (stderr beside the table, as the other caveats).
    let mut caveats: Vec<String> = release_note.into_iter().collect();
    if !unknown.is_empty() {
        let models: Vec<&str> = unknown.into_iter().collect();
        caveats.push(format!(
            "compute capability 8.0 (Ampere) assumed: the GPUs' model ({}) does not say their generation, so NCCL's Ampere tables choose and cap; give each GPU's model in the machine file (e.g. model: \"H100-SXM5-80GB\")",
            models.join(", ")
        ));
    }
    if host_floor_us > 0.0 {
        let at: Vec<u64> = rows.iter().filter(|r| r.count > 0 && r.time_us <= host_floor_us).map(|r| r.size).collect();
        if let (Some(first), Some(last)) = (at.first(), at.last()) {
            let g = req.ngpus.unwrap_or(0);
            notes.push(format!(
                "one process drives {g} GPUs (-g {g}): an iteration takes at least its thread's {g} launches, {host_floor_us:.1} us (nccl_launch_host {:.2} us each), the time of {} rows ({first} to {last} B)",
                comm.constants.launch_host * 1e6,
                at.len()
            ));
        }
    }
    // Pairs with peer access that NCCL still connects through host memory: beyond its P2P level.
    if let Some(level) = comm.p2p_level() {
        let router = crate::flow::router::Router::new(m);
        let first: Vec<usize> = comm.devices[..comm.ppn].to_vec();
        let beyond: Vec<String> = first
            .iter()
            .flat_map(|&a| first.iter().map(move |&b| (a, b)))
            .filter(|&(a, b)| {
                comm.shm().contains_key(&(a, b)) && router.plan(a, b, None, &[], true).is_ok_and(|p| p.mechanism != crate::workload::Mechanism::Staged)
            })
            .map(|(a, b)| format!("{}->{}", m.devices[a].name, m.devices[b].name))
            .collect();
        if !beyond.is_empty() {
            let more = if beyond.len() > 4 { format!(" and {} more", beyond.len() - 4) } else { String::new() };
            let pairs = beyond[..beyond.len().min(4)].join(", ");
            let version = comm.constants.version.tag();
            caveats.push(if comm.constants.p2p_level.is_some() {
                let graph = if comm.graph_level.is_some() {
                    format!(
                        "; its graph routes them through the receiver's CPU (graph/paths.cc addInterStep), and its ring search finds {} ring(s) at {} GB/s on those paths",
                        comm.ring_graph.0, comm.ring_graph.1
                    )
                } else {
                    String::new()
                };
                format!("NCCL {version} connects {pairs}{more} through host memory (SHM) though peer access is allowed: beyond the P2P level given, {} (NCCL_P2P_LEVEL or NCCL_P2P_DISABLE=1, nccl_p2p_level){graph}", level.name())
            } else {
                format!(
                    "NCCL {version} connects {pairs}{more} through host memory (SHM) though peer access is allowed: its P2P level on {} hosts with {} GPUs a node is {} (graph/paths.cc ncclTopoCheckP2p); NCCL_P2P_LEVEL changes it",
                    comm.cpu.map_or("these", |c| c.name()),
                    comm.ppn,
                    level.name()
                )
            });
        }
    }
    // GPUs whose network data NCCL stages through host memory (no GPUDirect RDMA, `Comm::net_stage`).
    let staged: Vec<(&str, [Option<usize>; 2])> =
        comm.devices[..comm.ppn].iter().filter_map(|g| comm.net_stage.get(g).map(|s| (m.devices[*g].name.as_str(), *s))).collect();
    if !staged.is_empty() {
        let ways = |k: usize| staged.iter().filter(|s| s.1[k].is_some()).count();
        let names: Vec<&str> = staged.iter().take(4).map(|s| s.0).collect();
        let more = if staged.len() > 4 { format!(" and {} more", staged.len() - 4) } else { String::new() };
        let level = comm
            .constants
            .net_gdr_level
            .map_or_else(|| format!("its default {}", topo::gdr_level(comm.constants.version.gdr_c2c()).name()), |l| format!("{} as given", l.name()));
        caveats.push(format!(
            "NCCL {} moves the network data of {}{more} through host memory, not by GPUDirect RDMA ({} sending, {} receiving): NICs beyond NCCL_NET_GDR_LEVEL ({level}), or for sends GDR reads off (NCCL_NET_GDR_READ; by default before compute capability 8.0 without an NVLink peer) (graph/paths.cc ncclTopoCheckGdr)",
            comm.constants.version.tag(),
            names.join(", "),
            ways(0),
            ways(1)
        ));
    }
    // GPUs NCCL would stage that reach no host memory in the machine file (`Comm::net_unstaged`).
    if !comm.net_unstaged.is_empty() {
        let names: Vec<&str> = comm.net_unstaged.iter().take(4).map(|&g| m.devices[g].name.as_str()).collect();
        let more = if comm.net_unstaged.len() > 4 { format!(" and {} more", comm.net_unstaged.len() - 4) } else { String::new() };
        caveats.push(format!(
            "NCCL {} moves the network data of {}{more} through host memory (no GPUDirect RDMA: NCCL_NET_GDR_LEVEL / NCCL_NET_GDR_READ, graph/paths.cc ncclTopoCheckGdr), but the machine file draws no host memory they reach: their network steps stay GPU to GPU here, as by GDR; add a host_memory device and its memory link under each GPU's CPU in the machine file",
            comm.constants.version.tag(),
            names.join(", ")
        ));
    }
    if rows.iter().any(|r| r.count == 0) && comm.empty_p2p(coll) {
        notes.push(format!(
            "rows of 0 elements are grouped ncclSend/ncclRecv of 0 bytes, which NCCL {} runs: one step a peer, no data",
            comm.constants.version.tag()
        ));
    } else if rows.iter().any(|r| r.count == 0) {
        notes.push("rows of 0 elements launch nothing and are printed with time 0".into());
    }
    if let Some(t) = &comm.tuner {
        let lines: std::collections::BTreeSet<usize> = rows.iter().filter_map(|r| r.tuner_line).collect();
        let used = if lines.is_empty() {
            "no line applied: NCCL's model picked every size".to_string()
        } else {
            format!("lines {} picked where rows say so (tuner_line)", lines.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(", "))
        };
        caveats.push(format!(
            "tuner {}: {used}; a line's -1 channels, and sizes no line matches, keep NCCL's own count, as the format says (NCCL's example plugin as compiled sets 1 channel before it matches, plugin.c, so with that plugin such sizes run on 1 channel)",
            t.path
        ));
    }
    if p2p {
        notes.push("send/receive runs every peer pair at once over its channels; NCCL's own model has no time for it (nccl_model_us is empty)".into());
    }
    // What is left of round 17's fault after round 18's fix (docs/nccl.md, "Trees across nodes"): the
    // NICs' loads are NCCL's, but the tree's pipeline leaves them idle part of the time.
    if comm.nodes > 2 && rows.iter().any(|r| r.algo == Algo::Tree) {
        caveats.push(format!(
            "tree rows on {} nodes: contend's tree pipeline leaves the NICs idle part of the time, about 14-24% over NCCL's NIC bound at 8-64 nodes (docs/nccl.md, \"Trees across nodes\")",
            comm.nodes
        ));
    }
    if let Some(line) = algo_fallback {
        caveats.push(line);
    }
    if ignored_algo {
        caveats.push(format!("--algo (NCCL_ALGO) does not apply to {}: NCCL runs it peer-to-peer whatever the setting", coll.name()));
    }
    if ignored_proto {
        caveats.push(format!(
            "--proto (NCCL_PROTO) does not apply to {}: NCCL runs a send/receive on LL up to NCCL_P2P_LL_THRESHOLD ({} KiB) a channel, Simple above, whatever the setting",
            coll.name(),
            tuning::P2P_LL_THRESHOLD / 1024
        ));
    }
    let left: std::collections::BTreeSet<String> =
        rows.iter().filter_map(|r| r.explain.as_ref()).flat_map(|e| e.left_out.iter().map(|(a, p)| format!("{}/{}", a.name(), p.name()))).collect();
    if !left.is_empty() {
        caveats.push(format!(
            "{} left out of the comparison where a row says so (left_out): over the {} M transfers contend lowers one call to (NCCL's own sends grow with the square of the ranks); the fastest shown is of those run",
            left.into_iter().collect::<Vec<_>>().join(", "),
            super::lower::MAX_TRANSFERS / 1_000_000
        ));
    }
    notes.extend(caveats.iter().cloned());
    let mut r = Report {
        machine: m.name.clone(),
        op: coll.name().into(),
        ranks: n,
        nodes: comm.nodes,
        of_nodes: None,
        gpus: comm.devices.iter().map(|&d| m.devices[d].name.clone()).collect(),
        model: req.model.clone(),
        nccl_version: comm.tuning.version.tag().into(),
        tuner: comm.tuner.as_ref().map(|t| t.path.clone()),
        search,
        algo_names: Algo::ALL.iter().map(|a| (a.id(), a.name())).collect(),
        rows,
        avg_busbw,
        notes,
        caveats,
        table: String::new(),
        explain: None,
    };
    r.table = table(&r);
    if req.explain {
        r.explain = Some(explain_text(&r));
    }
    Ok(r)
}

/// One size as a row of the table runs it: NCCL's pick among `algos` x `protos` (NCCL_PROTO's list,
/// None where unset: `Comm::pick`; the protocol of
/// one peer's part for send/receive), lowered on the communicator's constants and run alone on
/// the machine (`params`: the model's), as nccl-tests' loop of `iters` calls (`super::run_loop`). `calibrate` scores its fits through this too, so that its
/// residuals are what `contend nccl-tests` prints with the fitted `--param`s.
#[allow(clippy::too_many_arguments)]
pub fn run_size(
    comm: &Comm,
    coll: Coll,
    bytes: u64,
    root: usize,
    algos: &[Algo],
    protos: Option<&[Proto]>,
    model: &str,
    params: &[(String, String)],
    bottlenecks: bool,
    iters: usize,
) -> Result<(super::Pick, super::Ran)> {
    let pick = if matches!(coll, Coll::AllToAll | Coll::SendRecv) {
        // Send/receive has no tuner: the protocol of one peer's part, as the lowering runs it.
        let part = if coll == Coll::SendRecv { bytes } else { bytes / comm.devices.len() as u64 };
        super::Pick { algo: Algo::P2p, proto: comm.p2p_proto(part), model_us: f64::NAN, channels: None, tuner_line: None }
    } else {
        comm.pick(coll, bytes.max(1), algos, protos)?
            .ok_or_else(|| Error::input("--algo/--proto", "", format!("leaves NCCL no algorithm for {} here", coll.name())))?
    };
    // The call alone on the machine: identical channels run merged where the model makes that exact (`Call::merged_for`).
    let call = comm.call_with(coll, pick.algo, pick.proto, bytes, root, pick.channels).merged_for(model);
    match super::run_loop(&comm.m, &call, model, params, bottlenecks, lower::MAX_TRANSFERS, iters)? {
        Some(ran) => Ok((pick, ran)),
        None => Err(Error::input("--nodes", "", super::too_many(&call, lower::transfers_at_least(&call).max(lower::MAX_TRANSFERS)))),
    }
}

/// The least time an nccl-tests iteration takes where one thread drives `ngpus` GPUs (`-g N`, N of
/// 2 or more): its N launches (`nccl_launch_host` each, `predict`'s comment); 0 otherwise.
pub fn host_floor_s(comm: &Comm, ngpus: Option<usize>) -> f64 {
    match ngpus {
        Some(g) if g >= 2 => g as f64 * comm.constants.launch_host,
        _ => 0.0,
    }
}

/// `floor_us`: the host's launches under `-g` (`nccl_launch_host`), which bound every alternative
/// alike; the latency share is of the call's own time, under the floor.
fn explain_row(comm: &Comm, coll: Coll, bytes: u64, req: &Request, chosen: &super::Pick, ran: &super::Ran, floor_us: f64) -> Result<RowExplain> {
    let pick = (chosen.algo, chosen.proto);
    let own_us = ran.seconds * 1e6;
    let time_us = own_us.max(floor_us);
    let (alternatives, left_out) = alternatives(comm, coll, bytes, req, pick, own_us, floor_us, super::lower::MAX_TRANSFERS)?;
    let best = alternatives.iter().min_by(|a, b| a.time_us.total_cmp(&b.time_us)).cloned().expect("the pick is among them");
    // Latency: the same transfers carrying one byte each, on the channels the call ran (a tuner
    // line's, where one set them). The call's own lowering, not a smaller call's: a ring's Simple
    // step inside a node pays its handshake once per slice of every loop (`lower::simple_slices`),
    // which a call of a few bytes (one slice a step, one loop) would leave out and count as
    // bandwidth (round 24: 2 MiB on rtx5090x8-turin-p2p said 38% latency where the base and the
    // 28 slices' handshakes alone are 69%).
    let call = comm.call_with(coll, pick.0, pick.1, bytes, req.root, chosen.channels).merged_for(&req.model);
    let lat = if bytes == 0 { 0.0 } else { lat_only(comm, &call, req)? };
    let scale = |t: f64| if own_us > 0.0 { (t / own_us).min(1.0) } else { 0.0 };
    let bottlenecks = ran
        .bottlenecks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.1 >= 0.0)
        .map(|(c, b)| Bottleneck { channel: c, resource: b.0.clone(), utilisation: b.1.min(1.0), capacity_gbps: b.2 / 1e9 })
        .collect();
    Ok(RowExplain {
        pick_slower_pct: if best.time_us > 0.0 { (time_us / best.time_us - 1.0) * 100.0 } else { 0.0 },
        fastest_algo: best.algo,
        fastest_proto: best.proto,
        alternatives,
        latency_share: scale(lat * 1e6),
        bottlenecks,
        left_out,
        steps: (pick.0 == Algo::Pat).then(|| super::lower::pat::describe(&call)),
    })
}

/// The alternatives run, and those left out (over the transfer limit).
type Compared = (Vec<Alternative>, Vec<(Algo, Proto)>);

/// Every algorithm and protocol NCCL has for the call, run (the pick at its time, already run),
/// and those left out: over `limit` transfers (`lower::MAX_TRANSFERS`; smaller in tests). Each at
/// least `floor_us`, the host's launches under `-g`, as the pick's row.
#[allow(clippy::too_many_arguments)]
pub(super) fn alternatives(
    comm: &Comm,
    coll: Coll,
    bytes: u64,
    req: &Request,
    pick: (Algo, Proto),
    time_us: f64,
    floor_us: f64,
    limit: u64,
) -> Result<Compared> {
    let p2p = matches!(coll, Coll::AllToAll | Coll::SendRecv);
    let mut alternatives = Vec::new();
    let mut left_out = Vec::new();
    if !p2p {
        // NCCL's alternatives: NVLS only where NCCL reduces the type on it; LL128 wherever NCCL's
        // gates, or a list that names it, put it in NCCL's table (`Comm::tuning_under`).
        let protos = req.proto.as_deref().map(super::parse_protos).transpose()?;
        let model = comm.tuning_under(protos.as_deref());
        for &a in coll.algos().iter().filter(|&&a| tuning::runs(coll, &req.dtype, a)) {
            for p in PROTOS {
                let Some(model_us) = tuning::time_us(&model, coll, a, p, bytes.max(1)) else { continue };
                // PAT in NCCL's table where NCCL connects no PAT peers (NCCL_PAT_ENABLE=1): not run.
                if a == Algo::Pat && !comm.pat_connected() {
                    continue;
                }
                let t = if (a, p) == pick {
                    time_us.max(floor_us)
                } else {
                    let call = comm.call(coll, a, p, bytes, req.root).merged_for(&req.model);
                    // An alternative too large to lower is left out, with a note.
                    match super::run_loop(&comm.m, &call, &req.model, &req.params, false, limit, req.iters)? {
                        Some(ran) => (ran.seconds * 1e6).max(floor_us),
                        None => {
                            left_out.push((a, p));
                            continue;
                        }
                    }
                };
                alternatives.push(Alternative { algo: a, proto: p, time_us: t, nccl_model_us: model_us });
            }
        }
    } else {
        alternatives.push(Alternative { algo: pick.0, proto: pick.1, time_us: time_us.max(floor_us), nccl_model_us: f64::NAN });
    }
    Ok((alternatives, left_out))
}

/// The call's time with every transfer shrunk to one byte: its latency part.
fn lat_only(comm: &Comm, call: &lower::Call, req: &Request) -> Result<f64> {
    let (mut t, _) = lower::lower(call);
    t.iter_mut().for_each(|x| x.size = 1);
    let w = crate::workload::Workload { transfers: t, origin: "nccl latency".into(), ..Default::default() };
    let entry = crate::model::registry::get(&req.model)?;
    let prepared = entry.prepare(&comm.m, &w, &req.params)?;
    Ok(crate::sim::run_prepared(&w, prepared.as_ref(), false)?.makespan())
}

/// The table nccl-tests prints (writeResultHeader, writeBenchmarkLine*, writeResultFooter).
pub fn table(r: &Report) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "# contend prediction of nccl-tests {}_perf on {} ({} ranks, {} node(s){}, model {}, NCCL {}'s choice{})\n",
        r.op,
        r.machine,
        r.ranks,
        r.nodes,
        r.of_nodes.map_or(String::new(), |n| format!(" of its {n}: --nodes {n} runs them all")),
        r.model,
        r.nccl_version,
        r.tuner.as_ref().map_or(String::new(), |t| format!(" with tuner {t}"))
    ));
    s.push_str(&format!("# Rings: {} channels at {} GB/s per channel ({})\n", r.search.channels, r.search.bw_per_channel, r.search.path_type));
    s.push_str("#\n");
    s.push_str(&format!("# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place          \n", "", "", "", "", ""));
    s.push_str(&format!(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6} \n",
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong"
    ));
    s.push_str(&format!(
        "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6} \n",
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""
    ));
    for row in &r.rows {
        s.push_str(&format!("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", row.size, row.count, row.dtype, row.redop, row.root));
        for (t, a, b) in [(row.time_us, row.algbw, row.busbw), (row.in_place_time_us, row.in_place_algbw, row.in_place_busbw)] {
            s.push_str(&format!("  {}  {}  {}  {:>6}", nt::float(t, 7), nt::float(a, 6), nt::float(b, 6), 0));
        }
        s.push('\n');
    }
    s.push_str(&format!("# {:<20} : {} {}\n", "Out of bounds values", 0, "OK"));
    s.push_str(&format!("# {:<20} : {} \n", "Avg bus bandwidth", nt::g_format(r.avg_busbw)));
    s.push_str("#\n");
    s
}

fn across_nodes(comm: &Comm) -> AcrossNodes {
    let m = &comm.m;
    let first = super::node_prefix(&m.devices[comm.devices[0]].name);
    let nics = super::network_nics(m, first).map(|(d, bw)| (m.devices[d].name.clone(), bw / 1e9)).collect();
    let unused = super::network_nics(m, first).filter(|(d, _)| !comm.nics.contains(d)).map(|(d, _)| m.devices[d].name.clone()).collect();
    let t = &comm.tuning;
    AcrossNodes {
        ring: comm.rails().rings[0].iter().map(|&r| m.devices[comm.devices[r]].name.clone()).collect(),
        // The channels the communicator runs: `rails` holds as many as any release would run.
        crossings: comm
            .rails()
            .exits
            .iter()
            .zip(&comm.rails().rings)
            .take(comm.channels)
            .map(|(e, ring)| {
                let name = |d: usize| m.devices[d].name.clone();
                let on: Vec<usize> = ring.iter().copied().filter(|&r| r < comm.ppn).collect();
                Crossing {
                    nic: name(e[0].nic),
                    enter: name(comm.devices[on[0]]),
                    out: name(e[0].out),
                    leave: name(comm.devices[on[on.len() - 1]]),
                    relay: e[0].relay.map(name),
                }
            })
            .collect(),
        nics,
        unused,
        ring_graph: (t.graph_channels, t.bw_intra),
        tree_graph: (t.tree_channels, t.tree_bw_intra, t.tree_bw_inter),
        nvls_graph: comm.nvls_graphs[t.version as usize]
            .as_ref()
            .map(|g| (g.heads.iter().map(|&h| m.devices[comm.devices[h]].name.clone()).collect(), g.intra, g.inter)),
    }
}

/// `--explain` as text: the rings, each size's pick against the alternatives, bottlenecks.
pub fn explain_text(r: &Report) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "Ring search (NCCL {} rules): {} ring(s) at {} GB/s per channel, worst path {}, compute capability {}; the communicator runs {} channels\n",
        r.nccl_version,
        r.search.rings.len(),
        r.search.bw_per_channel,
        r.search.path_type,
        r.search.compute_capability,
        r.search.channels
    ));
    let mut seen: Vec<&Vec<String>> = Vec::new();
    for ring in &r.search.rings {
        if !seen.contains(&ring) {
            seen.push(ring);
            s.push_str(&format!("  ring: {} -> {}\n", ring.join(" -> "), ring[0]));
        }
    }
    if let Some(a) = &r.search.across_nodes {
        let mut rates: Vec<f64> = a.nics.iter().map(|n| n.1).collect();
        rates.sort_by(f64::total_cmp);
        rates.dedup();
        let rates: Vec<String> = rates.iter().map(|&r| format!("{} GB/s", nt::g_format(r))).collect();
        s.push_str(&format!(
            "Across nodes: {} NIC(s) per node at {} each; {}:\n  channel 0: {} -> {}\n",
            a.nics.len(),
            rates.join(" / "),
            if a.crossings.is_empty() {
                "each channel's ring leaves and enters a node at GPUs rotated by its index"
            } else {
                "each channel's ring enters and leaves every node by its NICs, as NCCL's search assigns them"
            },
            a.ring.join(" -> "),
            a.ring[0]
        ));
        if !a.crossings.is_empty() {
            // A channel that is an earlier one's copy (`connectRings`) is named with it.
            s.push_str("  channels on the first node (in by NIC at GPU .. out from GPU by NIC):\n");
            let mut seen: Vec<(&Crossing, Vec<usize>)> = Vec::new();
            for (c, x) in a.crossings.iter().enumerate() {
                match seen.iter_mut().find(|(y, _)| *y == x) {
                    Some((_, cs)) => cs.push(c),
                    None => seen.push((x, vec![c])),
                }
            }
            for (x, cs) in seen {
                let cs: Vec<String> = cs.iter().map(|c| c.to_string()).collect();
                let relay = x.relay.as_ref().map_or(String::new(), |g| format!(" through {g} (PXN)"));
                s.push_str(&format!("    {}: {} at {} .. {}{relay} by {}\n", cs.join(", "), x.nic, x.enter, x.leave, x.out));
            }
        }
        if !a.unused.is_empty() {
            s.push_str(&format!(
                "  no channel on {}: farther from every GPU than the NICs within PXB of one, so NCCL's search does not list it (search.cc ncclTopoSelectNets)\n",
                a.unused.join(", ")
            ));
        }
        s.push_str(&format!(
            "  NCCL's cost model reads its own graphs: ring {} channel(s) at {} GB/s through the NICs; tree {} channel(s) at {} GB/s inside a node, {} between nodes\n",
            a.ring_graph.0,
            nt::g_format(a.ring_graph.1),
            a.tree_graph.0,
            nt::g_format(a.tree_graph.1),
            nt::g_format(a.tree_graph.2)
        ));
        if let Some((heads, intra, inter)) = &a.nvls_graph {
            s.push_str(&format!(
                "  NVLS-tree: {} head(s) a node ({}: each NIC's local GPU) at {} GB/s inside a node, {} between nodes\n",
                heads.len(),
                heads.join(", "),
                nt::g_format(*intra),
                nt::g_format(*inter)
            ));
        }
    }
    for row in &r.rows {
        let Some(e) = &row.explain else { continue };
        let model = if row.nccl_model_us.is_finite() { format!(" (NCCL's model {:.2} us)", row.nccl_model_us) } else { String::new() };
        s.push_str(&format!(
            "{:>12} B: NCCL picks {}/{} on {} channel(s): {:.2} us{model}; latency {:.0}% of it, bandwidth {:.0}%\n",
            row.size,
            row.algo.name(),
            row.proto.name(),
            row.channels,
            row.time_us,
            e.latency_share * 100.0,
            (1.0 - e.latency_share) * 100.0
        ));
        let alts: Vec<String> = e.alternatives.iter().map(|a| format!("{}/{} {:.2} us", a.algo.name(), a.proto.name(), a.time_us)).collect();
        s.push_str(&format!("    run: {}\n", alts.join(", ")));
        if !e.left_out.is_empty() {
            let names: Vec<String> = e.left_out.iter().map(|(a, p)| format!("{}/{}", a.name(), p.name())).collect();
            s.push_str(&format!(
                "    left out: {} (over the {} M transfers contend lowers one call to)\n",
                names.join(", "),
                super::lower::MAX_TRANSFERS / 1_000_000
            ));
        }
        if let Some(steps) = &e.steps {
            s.push_str(&format!("    {steps}\n"));
        }
        if e.pick_slower_pct > 10.0 {
            s.push_str(&format!("    ★ NCCL's pick is {:.0}% slower than {}/{}\n", e.pick_slower_pct, e.fastest_algo.name(), e.fastest_proto.name()));
        }
        let mut names: Vec<(String, f64)> = Vec::new();
        for b in &e.bottlenecks {
            if let Some(x) = names.iter_mut().find(|x| x.0 == b.resource) {
                x.1 = x.1.max(b.utilisation);
            } else {
                names.push((b.resource.clone(), b.utilisation));
            }
        }
        if !names.is_empty() {
            let shown: Vec<String> = names.iter().take(6).map(|(n, b)| format!("{n} ({:.0}% used)", b * 100.0)).collect();
            let more = if names.len() > 6 { ", …" } else { "" };
            // A link busy well under the call's bandwidth part (its time less the latency) did
            // not set the time: say what did instead.
            if names.iter().all(|x| x.1 < 0.8 * (1.0 - e.latency_share)) {
                s.push_str(&format!(
                    "    busiest link of each channel: {}{more}; no link is full: the time is set elsewhere (the chunks a connection keeps in flight, a channel's rate, a device's capacity, the steps' latency)\n",
                    shown.join(", ")
                ));
            } else {
                s.push_str(&format!("    bottleneck of each channel: {}{more}\n", shown.join(", ")));
            }
        }
    }
    s
}

/// The GPUs of one node as ranks: `--gpus` names (with `-g` of their count: one process), or the
/// first `-g` GPUs, or all.
pub fn node_gpus(m: &Machine, prefix: &str, req: &Request) -> Result<Vec<usize>> {
    let all: Vec<usize> = m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(prefix)).collect();
    let list = match (&req.gpus, req.ngpus) {
        // `CUDA_VISIBLE_DEVICES=4,5,6,7 <op>_perf -g 4`: one process of the listed GPUs.
        (Some(names), Some(g)) if g != names.len() => {
            return Err(Error::input(
                "-g",
                g.to_string(),
                format!("--gpus lists {} GPUs; give -g {} (one process of them) or leave -g out", names.len(), names.len()),
            ))
        }
        (Some(names), _) => names
            .iter()
            .map(|n| {
                let full = format!("{prefix}{n}");
                // A name, or a bare index k: the node's k-th GPU, as CUDA_VISIBLE_DEVICES counts.
                let by_index = || n.parse::<usize>().ok().and_then(|k| all.get(k).copied());
                m.device(&full).filter(|&d| all.contains(&d)).or_else(by_index).ok_or_else(|| {
                    // On a cluster a name is the node's own (GPU0), and every node runs the same list:
                    // the cluster's full names (n1.GPU0) are no hint here (tester's R17).
                    let names = match all.first() {
                        Some(&g) if !prefix.is_empty() || m.devices[g].name.contains('.') => {
                            let own = |d: usize| m.devices[d].name.rsplit('.').next().unwrap_or("").to_string();
                            format!(
                                "name the node's GPUs as {} .. {} or 0..{}, the same on every node; --nodes picks the nodes",
                                own(all[0]),
                                own(*all.last().expect("a node has GPUs")),
                                all.len() - 1
                            )
                        }
                        _ => format!("name one or give its index 0..{}; {}", all.len().saturating_sub(1), m.endpoint_hint()),
                    };
                    Error::input("--gpus", n, format!("is not a GPU of the node; {names}"))
                })
            })
            .collect::<Result<Vec<usize>>>()?,
        (None, Some(g)) => {
            if g < 1 || g > all.len() {
                return Err(Error::input("-g", g.to_string(), format!("is out of range; the node has {} GPUs", all.len())));
            }
            all[..g].to_vec()
        }
        (None, None) => all,
    };
    let mut seen = list.clone();
    seen.sort();
    seen.dedup();
    if seen.len() != list.len() {
        return Err(Error::input("--gpus", "", "names a GPU twice; list each once"));
    }
    if list.is_empty() {
        return Err(Error::input(&m.origin, "", "has no GPUs to run NCCL on"));
    }
    Ok(list)
}
