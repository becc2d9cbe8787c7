//! NVLS checked from first principles: on an NVSwitch that reduces and multicasts, all-reduce
//! moves (n + 1) / n bytes per byte each way through every GPU's port (the switch reads every
//! GPU's chunk and returns the sum to its head; the head's store is written to every GPU), at
//! the share of the port multimem operations reach; NCCL picks it where its model says so.

use super::*;
use crate::api;

fn req(op: &str, size: &str, algo: Option<&str>) -> tests_tool::Request {
    tests_tool::Request { algo: algo.map(Into::into), ..tests_tool::Request::one(op, size) }
}

fn one(machine: &str, op: &str, size: &str, algo: Option<&str>) -> Result<tests_tool::Row> {
    Ok(api::nccl_tests(machine, &req(op, size, algo), 1, None)?.rows.remove(0))
}

/// A GPU port of hgx-h100 as NCCL's kernels reach it, each direction, whatever the other way
/// carries: 18 links x NCCL's SM90_NVLINK_BW (20.6 GB/s of NVLink 4's 25), no duplex loss.
fn port() -> f64 {
    18.0 * 20.6e9
}

/// Seconds of chunk handshakes an NVLS call of `s` bytes pays on hgx-h100: each of the 16
/// channels x 8 heads sums its share chunk by chunk, one Simple step a chunk, each NCCL's
/// NVLink Simple step figure (3.4 us, `hwLatencies`); the chunk is NCCL_NVLS_CHUNKSIZE's 128 KiB
/// from 64 x 16 x 8 x 128 KiB = 1 GiB, 64 KiB below it down to 8 x 16 x 8 x 64 KiB = 64 MiB
/// (enqueue.cc `calcCollChunking`).
fn handshakes(s: f64) -> f64 {
    let chunk = if s >= 1073741824.0 { 131072.0 } else { 65536.0 };
    (s / (16.0 * 8.0) / chunk).ceil() * 3.4e-6
}

#[test]
fn nvls_graph_and_nccl_model_on_hopper() {
    // NCCL's link figure for Hopper NVLink is 20.6 GB/s: 18 links = 370.8 GB/s per GPU. With 8
    // heads a GPU's port carries 9 channels' speed each way: 40 GB/s fits (360), 50 does not.
    assert_eq!(tuning::nvls_graph(90, 8, 18.0 * 20.6), Some((8, 40.0, 60.0)));
    // Ampere has no NVLS; nor does one GPU.
    assert_eq!(tuning::nvls_graph(80, 8, 12.0 * 20.0), None);
    assert_eq!(tuning::nvls_graph(90, 1, 370.8), None);
    let m = crate::topology::Machine::load("hgx-h100").unwrap();
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    assert_eq!(comm.switches.len(), 1);
    // NCCL's NVLS all-reduce bus bandwidth: 8 channels x 40 GB/s x 0.85 x 7/8 x 2 = 476 GB/s,
    // as algorithm bandwidth x 8 / 14; latency 25 us (hwLatencies NVLink NVLS Simple).
    let (lat, algbw) = tuning::model(&comm.tuning, Coll::AllReduce, Algo::Nvls, Proto::Simple).unwrap();
    assert!((lat - 25.0).abs() < 1e-9 && (algbw - 476.0 * 8.0 / 14.0).abs() < 1e-6, "{lat} {algbw}");
    assert!(tuning::model(&comm.tuning, Coll::AllReduce, Algo::Nvls, Proto::Ll).is_none());
    // NCCL picks NVLS for large all-reduces, and a ring for small ones (25 us of latency).
    let all = [Algo::Ring, Algo::Tree, Algo::Nvls];
    assert_eq!(comm.choose(Coll::AllReduce, 1 << 30, &all, &PROTOS).unwrap().0, Algo::Nvls);
    assert_eq!(comm.choose(Coll::AllReduce, 1 << 10, &all, &PROTOS).unwrap().0, Algo::Ring);
    // All-gather through the switch gains nothing in bandwidth: NCCL keeps its ring.
    assert_eq!(comm.choose(Coll::AllGather, 1 << 30, &[Algo::Ring, Algo::Nvls], &PROTOS).unwrap().0, Algo::Ring);
}

#[test]
fn nvls_all_reduce_charges_n_plus_one_over_n_each_way() {
    let m = crate::topology::Machine::load("hgx-h100").unwrap();
    let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    let s: u64 = 1 << 30;
    let call = comm.call(Coll::AllReduce, Algo::Nvls, Proto::Simple, s, 0);
    assert_eq!(call.channels(), 16);
    let sw = comm.switches[0];
    let (t, _) = lower::lower(&call);
    let e = tuning::NVLS_EFFICIENCY[2];
    for &g in &comm.devices {
        let up: u64 = t.iter().filter(|x| x.src == g && x.dst == sw).map(|x| x.size).sum();
        let down: u64 = t.iter().filter(|x| x.src == sw && x.dst == g).map(|x| x.size).sum();
        let want = s as f64 * 9.0 / 8.0 / e;
        assert!((up as f64 / want - 1.0).abs() < 1e-3 && (down as f64 / want - 1.0).abs() < 1e-3, "{up} {down} {want}");
    }
    // Nothing moves between GPUs directly.
    assert!(t.iter().all(|x| x.src == sw || x.dst == sw));
}

#[test]
fn nvls_all_reduce_time_is_its_port_load_over_the_port() {
    let s = (1u64 << 30) as f64;
    let row = one("hgx-h100", "all_reduce", "1G", None).unwrap();
    assert_eq!((row.algo, row.proto, row.channels), (Algo::Nvls, Proto::Simple, 16));
    let e = tuning::NVLS_EFFICIENCY[2];
    let want = 25e-6 + handshakes(s) + s * 9.0 / 8.0 / e / port();
    assert!((row.time_us * 1e-6 / want - 1.0).abs() < 0.005, "{} us, closed form {} us", row.time_us, want * 1e6);
    // Against a ring's 2 (n - 1) / n: NVLS's busbw is 14/9 x 0.85 of the ring's, each less the
    // handshakes NCCL's model does not count.
    let ring = one("hgx-h100", "all_reduce", "1G", Some("ring")).unwrap();
    // The ring less its slices' handshakes beyond NCCL's first loop (two a 2 MiB chunk a step,
    // each NCCL's per-step NVLink latency; docs/nccl.md, "A Simple slice's handshake").
    let loops = (s / (ring.channels as f64 * 8.0) / 2097152.0).ceil();
    let slices = (loops * 14.0 * 2.0 - 14.0) * 3.4e-6;
    let ring_bw = ring.busbw * ring.time_us * 1e-6 / (ring.time_us * 1e-6 - slices);
    let nvls_bw = row.busbw * row.time_us * 1e-6 / (row.time_us * 1e-6 - handshakes(s));
    let gain = nvls_bw / ring_bw;
    assert!((gain / (14.0 / 9.0 * e) - 1.0).abs() < 0.01, "NVLS {} ring {} GB/s", row.busbw, ring.busbw);
}

#[test]
fn an_nvls_chunk_pays_a_simple_steps_handshake() {
    // 128 MiB: 64 KiB chunks, 16 a head and channel, 16 x 3.4 us; 512 MiB: 64 of them; 1 GiB:
    // 128 KiB chunks, 64 again, so the time per byte drops where the chunk doubles.
    let e = tuning::NVLS_EFFICIENCY[2];
    for (size, s) in [("128M", 134217728.0), ("512M", 536870912.0), ("1G", 1073741824.0)] {
        let row = one("hgx-h100", "all_reduce", size, None).unwrap();
        assert_eq!(row.algo, Algo::Nvls, "{size}");
        let want = 25e-6 + handshakes(s) + s * 9.0 / 8.0 / e / port();
        assert!((row.time_us * 1e-6 / want - 1.0).abs() < 0.005, "{size}: {} us, closed form {} us", row.time_us, want * 1e6);
    }
    assert_eq!(handshakes(536870912.0), handshakes(1073741824.0));
}

#[test]
fn a_fitted_simple_step_times_nvls_chunks_as_it_times_ring_slices() {
    // `nccl_step_simple` replaces a ring slice's 3.4 us; the NVLS chunk's handshake is the same
    // step, so 512 MiB (64 chunks a head and channel) grows by 64 x (10 - 3.4) us, and NCCL's
    // 25 us call latency, which is not a step, stays.
    let at = |params: Vec<(String, String)>| {
        let r = tests_tool::Request { algo: Some("nvls".into()), params, ..tests_tool::Request::one("all_reduce", "512M") };
        api::nccl_tests("hgx-h100", &r, 1, None).unwrap().rows.remove(0).time_us
    };
    let grown = at(vec![("nccl_step_simple".into(), "10us".into())]) - at(vec![]);
    assert!((grown - 64.0 * (10.0 - 3.4)).abs() < 0.5, "{grown} us");
}

#[test]
fn nvls_reduce_scatter_and_all_gather_move_their_halves() {
    let s = (1u64 << 30) as f64;
    let e = tuning::NVLS_EFFICIENCY[2];
    // Reduce-scatter: every GPU's whole buffer goes up once and its sum comes back, an eighth;
    // all-gather: every GPU's eighth goes up once and the whole buffer comes back. The busy
    // direction of each port carries S (wire: S / e), the other S / 8.
    let busy = port();
    for op in ["reduce_scatter", "all_gather"] {
        let row = one("hgx-h100", op, "1G", Some("nvls")).unwrap();
        assert_eq!(row.algo, Algo::Nvls, "{op}");
        let want = 25e-6 + handshakes(s) + s / e / busy;
        assert!((row.time_us * 1e-6 / want - 1.0).abs() < 0.01, "{op}: {} us, closed form {} us", row.time_us, want * 1e6);
    }
}

#[test]
fn nvls_needs_a_multicast_switch_and_every_model_runs_or_refuses() {
    // DGX A100's second-generation NVSwitch has no in-switch reduction: asking for NVLS there is
    // one line naming the choice.
    let e = one("dgx-a100", "all_reduce", "1G", Some("nvls")).unwrap_err().to_string();
    assert!(e.contains("--algo") && !e.contains('\n'), "{e}");
    // A machine file can say so either way; `multicast` on a GPU is refused.
    let bad = "name: m\ndevices:\n  - {name: GPU0, kind: gpu, multicast: true}\nlinks: []\n";
    let e = crate::topology::Machine::from_text(bad, "m.yaml").unwrap_err().to_string();
    assert!(e.contains("devices[0].multicast") && e.contains("NVSwitch"), "{e}");
    assert_eq!(crate::topology::nvswitch_generation(Some("4 x NVSwitch (third generation), as one crossbar")), Some(3));
    assert_eq!(crate::topology::nvswitch_generation(Some("6 x NVSwitch (second generation)")), Some(2));
    for model in crate::model::registry::MODELS {
        let r = tests_tool::Request { model: model.name.into(), ..req("all_reduce", "64M", Some("nvls")) };
        match api::nccl_tests("hgx-h100", &r, 1, None) {
            Ok(rep) => assert!(rep.rows[0].busbw > 0.0 && rep.rows[0].algo == Algo::Nvls, "{}", model.name),
            Err(e) => assert!(!e.to_string().contains('\n'), "{}: {e}", model.name),
        }
    }
}

#[test]
fn hopper_and_blackwell_presets_run_nvls_and_pcie_boxes_do_not() {
    // H200's board is H100's: the same NVLS graph and NCCL model. B200: 18 NVLink 5 links at
    // NCCL's 40.1 GB/s = 721.8 per GPU, 9 speeds of 80 fit (720), 90 does not; the inter speed
    // stays at the top, 90, under twice 80; bus = 8 x min(80 x 0.74 x 7/8 x 2, 90) = 720 GB/s.
    for (machine, intra, bus) in [("hgx-h200", 40.0, 476.0), ("hgx-b200", 80.0, 720.0)] {
        let m = crate::topology::Machine::load(machine).unwrap();
        let comm = Comm::new(&m, &[m.gpus()], None).unwrap();
        assert_eq!((comm.tuning.nvls_heads, comm.tuning.nvls_bw_intra), (8, intra), "{machine}");
        let (_, algbw) = tuning::model(&comm.tuning, Coll::AllReduce, Algo::Nvls, Proto::Simple).unwrap();
        assert!((algbw * 14.0 / 8.0 - bus).abs() < 1e-6, "{machine}: {}", algbw * 14.0 / 8.0);
        let row = one(machine, "all_reduce", "1G", None).unwrap();
        assert_eq!(row.algo, Algo::Nvls, "{machine}");
    }
    // B200's port as NCCL's kernels reach it is 18 x 40.1 GB/s (SM100_NVLINK_BW), H100's 18 x
    // 20.6; its NVLS efficiency is 0.74: busbw = 40.1 / 20.6 x 0.74 / 0.85 of H100's, each less
    // its chunks' handshakes (B200: 24 channels x 8 heads, 64 KiB chunks under 64 x 24 x 8 x
    // 128 KiB = 1.5 GiB, so 86 a head and channel; H100 64).
    let s = 1073741824.0;
    let rate = |machine: &str, hs: f64| {
        let row = one(machine, "all_reduce", "1G", None).unwrap();
        row.busbw * row.time_us * 1e-6 / (row.time_us * 1e-6 - hs)
    };
    let (h, b) = (rate("hgx-h100", handshakes(s)), rate("hgx-b200", (s / (24.0 * 8.0) / 65536.0).ceil() * 3.4e-6));
    assert!((b / h / (40.1 / 20.6 * 0.74 / 0.85) - 1.0).abs() < 0.02, "B200 {b} H100 {h}");
    // No NVSwitch: no NVLS; rings over the PCIe switches.
    let m = crate::topology::Machine::load("pcie-8gpu-ws").unwrap();
    assert!(Comm::new(&m, &[m.gpus()], None).unwrap().switches.is_empty());
    assert!(one("pcie-8gpu-ws", "all_reduce", "1G", Some("nvls")).is_err());
}

#[test]
fn nvls_tree_across_nodes_model_and_link_charges() {
    // Two hgx-h100 on one switch at 400 Gb/s per NIC: each head's share of the NICs is 50 GB/s,
    // NCCL's inter speed 48; intra 40 as on one node. Model: 8 x min(40 x 0.85 x 7/8 x 2, 48 x 2,
    // perChMaxNVLSTreeBws 57.7) = 461.6 GB/s bus, algbw x 16/30; latency 25 + 2 x 20.9 us.
    let r = tests_tool::Request { min_bytes: "1G".into(), max_bytes: "1G".into(), ..req("all_reduce", "1G", Some("nvlstree")) };
    let rep = api::nccl_tests("hgx-h100", &r, 2, Some("50GB/s")).unwrap();
    assert_eq!(rep.rows[0].algo, Algo::NvlsTree);
    let two = crate::topology::Machine::from_text(
        "name: two\nfabric:\n  graph: {switches: [{name: S0}], links: [], hosts: [S0, S0]}\nlink: {bandwidth: 50GB/s}\nnodes: {count: 2, machine: hgx-h100}\n",
        "two.yaml",
    )
    .unwrap();
    let node = |k: usize| two.gpus().into_iter().filter(|&g| two.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    let comm = Comm::new(&two, &[node(0), node(1)], None).unwrap();
    assert_eq!((comm.tuning.nvls_heads, comm.tuning.nvls_bw_intra, comm.tuning.nvls_bw_inter), (8, 40.0, 48.0));
    let (lat, algbw) = tuning::model(&comm.tuning, Coll::AllReduce, Algo::NvlsTree, Proto::Simple).unwrap();
    assert!((lat - 66.8).abs() < 1e-9 && (algbw - 461.6 * 16.0 / 30.0).abs() < 1e-6, "{lat} {algbw}");
    // NVLS alone needs CollNet across nodes: NCCL does not offer it.
    assert!(tuning::model(&comm.tuning, Coll::AllReduce, Algo::Nvls, Proto::Simple).is_none());
    // Large all-reduces: NVLS-tree beats the ring (NCCL's ring graph across nodes: 8 x 48 GB/s bus).
    let all = [Algo::Ring, Algo::Tree, Algo::Nvls, Algo::NvlsTree];
    assert_eq!(comm.choose(Coll::AllReduce, 1 << 30, &all, &PROTOS).unwrap().0, Algo::NvlsTree);
    // What moves: each node's GPUs move (n + 1)/n of the buffer each way through the switch, as
    // NVLS on one node; between nodes GPU h of one node exchanges its eighth with GPU h of the
    // other, up the tree on half the channels and down on the other half: S/8 each way.
    let s: u64 = 1 << 30;
    let call = comm.call(Coll::AllReduce, Algo::NvlsTree, Proto::Simple, s, 0);
    let (t, _) = lower::lower(&call);
    let e = tuning::NVLS_EFFICIENCY[2];
    for (k, &sw) in comm.switches.iter().enumerate() {
        for &g in &node(k) {
            let up: u64 = t.iter().filter(|x| x.src == g && x.dst == sw).map(|x| x.size).sum();
            let want = s as f64 * 9.0 / 8.0 / e;
            assert!((up as f64 / want - 1.0).abs() < 1e-3, "{up} {want}");
            let out: u64 = t.iter().filter(|x| x.src == g && comm.m.devices[x.dst].kind == DeviceKind::Gpu).map(|x| x.size).sum();
            assert!((out as f64 / (s as f64 / 8.0) - 1.0).abs() < 1e-3, "{out}");
            // Only to the GPU with the same number on the other node.
            let local = &comm.m.devices[g].name[3..];
            assert!(t.iter().filter(|x| x.src == g && comm.m.devices[x.dst].kind == DeviceKind::Gpu).all(|x| comm.m.devices[x.dst].name.ends_with(local)));
        }
    }
}

/// NCCL reduces 16-, 32- and 64-bit types on NVLS, never 8-bit ones (device.h
/// `ncclNvlsSupported`): an int8 all-reduce on hgx-h100 runs a ring or tree where float picks
/// NVLS, all-gather (no reduction) keeps NVLS, and asking for NVLS alone is refused in one line.
#[test]
fn nvls_reduces_no_eight_bit_type() {
    let with = |op: &str, dtype: &str, algo: Option<&str>| {
        let r = tests_tool::Request { dtype: dtype.into(), ..req(op, "1G", algo) };
        api::nccl_tests("hgx-h100", &r, 1, None).map(|mut x| x.rows.remove(0))
    };
    assert_eq!(with("all_reduce", "float", None).unwrap().algo, Algo::Nvls);
    assert!(!matches!(with("all_reduce", "int8", None).unwrap().algo, Algo::Nvls | Algo::NvlsTree));
    assert_eq!(with("all_reduce", "bfloat16", None).unwrap().algo, Algo::Nvls);
    assert_eq!(with("all_gather", "int8", Some("nvls")).unwrap().algo, Algo::Nvls);
    let e = with("reduce_scatter", "uint8", Some("nvls")).unwrap_err().to_string();
    assert!(e.contains("does not reduce uint8 on NVLS") && !e.contains('\n'), "{e}");
}

#[test]
fn nvls_tree_starts_from_the_release_chunk_under_its_maximum() {
    use super::versions::Version;
    const K: u64 = 1024;
    let first = tuning::nvls_tree_first;
    // 2.19.3 and 2.20.3 (enqueue.cc computeCollChunkInfo) start from a Simple step (NCCL_BUFFSIZE
    // 8 MiB / 8 steps = 1 MiB); 2.19.3 cuts it to 64 KiB from 4 nodes, whatever the environment.
    assert_eq!(first(Version::V2_19, 1024 * K, 128 * K, Some(512 * K), 2), 1024 * K);
    assert_eq!(first(Version::V2_19, 1024 * K, 128 * K, Some(512 * K), 4), 64 * K);
    // ... an assignment there, not a cap: a 32 KiB step (NCCL_BUFFSIZE 256 KiB) is raised to 64 KiB.
    assert_eq!(first(Version::V2_19, 32 * K, 128 * K, None, 4), 64 * K);
    assert_eq!(first(Version::V2_20, 32 * K, 128 * K, None, 4), 32 * K);
    // 2.18.5 has neither the 4-node cut nor the maximum: a step on any number of nodes.
    assert_eq!(first(Version::V2_18, 512 * K, 128 * K, Some(256 * K), 4), 512 * K);
    // 2.20.3 reads NCCL_NVLSTREE_MAX_CHUNKSIZE (aws-ofi-nccl's 512 KiB), else 64 KiB from 4 nodes.
    assert_eq!(first(Version::V2_20, 1024 * K, 128 * K, Some(512 * K), 2), 512 * K);
    assert_eq!(first(Version::V2_20, 1024 * K, 128 * K, Some(512 * K), 4), 512 * K);
    assert_eq!(first(Version::V2_20, 1024 * K, 128 * K, None, 2), 1024 * K);
    assert_eq!(first(Version::V2_20, 1024 * K, 128 * K, None, 4), 64 * K);
    // From 2.21.5, NCCL_NVLS_CHUNKSIZE (128 KiB) under the same maximum.
    for v in [Version::V2_21, Version::V2_30] {
        assert_eq!(first(v, 1024 * K, 128 * K, Some(512 * K), 2), 128 * K);
        assert_eq!(first(v, 1024 * K, 128 * K, None, 4), 64 * K);
    }
    // The size rule then: 16 channels x 8 heads = 128 concurrent chunks; 512 MiB is under 32 x 128
    // x 512 KiB (2 GiB), so 256 KiB, and not under 16 x 128 x 256 KiB (512 MiB), so it stays.
    assert_eq!(tuning::nvls_tree_chunk(512 << 20, 16, 8, 512 * K), 256 * K);
    assert_eq!(tuning::nvls_tree_chunk(2048 << 20, 16, 8, 512 * K), 512 * K);
    assert_eq!(tuning::nvls_tree_chunk(512 << 20, 16, 8, 128 * K), 128 * K);
}

/// NVLS-tree's latency as NCCL's model counts it (tuning.cc: NVLink's NVLS-tree latency, 25 us,
/// and NET's, 20.9 us, for each of the 2 log2(nodes) network steps), plus what a call across nodes
/// takes beyond the model (`nccl_call_net`), once per call as rings and trees pay it: the chain's
/// first network step (a leaf's send up) carries it, not every step up and down.
#[test]
fn nvls_tree_pays_the_call_net_once() {
    for nodes in [2, 4] {
        let at = |call_net: &str| {
            let r = tests_tool::Request { params: vec![("nccl_call_net".into(), call_net.into())], ..req("all_reduce", "8K", Some("nvlstree")) };
            api::nccl_tests("hgx-h100", &r, nodes, Some("50GB/s")).unwrap().rows.remove(0).time_us
        };
        let (none, some) = (at("0s"), at("100us"));
        assert!((some - none - 100.0).abs() < 0.5, "{nodes} nodes: {none} -> {some} us");
        // 25 + 2 x log2(nodes) x 20.9 us, and the paths' own hop latencies (about a microsecond).
        let model = 25.0 + 2.0 * (nodes as f64).log2() * 20.9;
        assert!(none >= model && none < model + 2.0, "{nodes} nodes: {none} against NCCL's {model} us");
    }
}

/// NCCL_NVLS_ENABLE=0 (qa27's wrong answer 2): transport/nvls.cc `ncclNvlsInit` returns with
/// `nvlsSupport` 0 (v2.18.5-1 to v2.30.7-1: `if (!ncclParamNvlsEnable() || …) return`), init.cc
/// searches no NVLS graph and enqueue.cc leaves NVLS and NVLS-tree out of its table: NCCL picks
/// among the ring and the tree as NCCL_ALGO=Ring,Tree would have it pick, under every release.
#[test]
fn nvls_enable_0_leaves_nccl_its_ring_and_tree() {
    let m = crate::topology::Machine::load("hgx-h100").unwrap();
    let mut comm = Comm::new(&m, &[m.gpus()], None).unwrap();
    for v in ["2.18", "2.21", "2.26", "2.30"] {
        let on = constants::split(&[("nccl_version".into(), v.into())]).unwrap().0;
        comm.set_constants(on).unwrap();
        assert_eq!(comm.choose(Coll::AllReduce, 1 << 30, &Algo::ALL, &PROTOS).unwrap().0, Algo::Nvls, "{v}");
        comm.set_constants(constants::Constants { nvls_enable: 0, ..on }).unwrap();
        for coll in [Coll::AllReduce, Coll::AllGather, Coll::ReduceScatter] {
            for p in PROTOS {
                for a in [Algo::Nvls, Algo::NvlsTree] {
                    assert!(tuning::model(&comm.tuning, coll, a, p).is_none(), "{v} {coll:?} {a:?} {p:?}");
                }
            }
        }
        for bytes in [1u64 << 10, 1 << 20, 1 << 30] {
            let got = comm.choose(Coll::AllReduce, bytes, &Algo::ALL, &PROTOS).unwrap();
            assert_eq!(Some(got), comm.choose(Coll::AllReduce, bytes, &[Algo::Ring, Algo::Tree], &PROTOS), "{v} {bytes}");
        }
    }
    // Through the door: the variable is read, not named as unmodelled, and the row is the one
    // NCCL_ALGO=Ring,Tree gives (the held-out plateau's stand-in until round 27).
    let env = vec![("NCCL_NVLS_ENABLE".to_string(), "0".to_string())];
    let rep = api::nccl_tests("hgx-h100", &tests_tool::Request { env: env.clone(), ..req("all_reduce", "1G", None) }, 1, None).unwrap();
    assert!(rep.notes.iter().all(|n| !n.contains("not modelled")) && rep.notes.iter().any(|n| n.contains("NCCL_NVLS_ENABLE=0")), "{:?}", rep.notes);
    let ring_tree = one("hgx-h100", "all_reduce", "1G", Some("ring,tree")).unwrap();
    assert_eq!((rep.rows[0].algo, rep.rows[0].proto), (ring_tree.algo, ring_tree.proto));
    assert!((rep.rows[0].time_us - ring_tree.time_us).abs() < 1e-9);
    // NVLS asked for by the flag under NCCL_NVLS_ENABLE=0: one line.
    let r = tests_tool::Request { env, ..req("all_reduce", "1G", Some("nvls")) };
    let e = api::nccl_tests("hgx-h100", &r, 1, None).unwrap_err().to_string();
    assert!(!e.contains('\n'), "{e}");
}
