//! NCCL's network path without GPUDirect RDMA (`lower::NetStages`, `Gdr::of`), with every
//! expected number worked out from NCCL's rules (graph/paths.cc `ncclTopoCheckGdr`,
//! transport/net.cc) and the machine file's links.

use super::*;
use crate::topology::Machine;

/// Two copies of `typical-8gpu` on one switch (as `contend nccl-tests --nodes 2`), each node's FDR
/// HCA at its port speed, 54.54 Gb/s (6.8175 GB/s); host memory links at `mem` bytes/s.
fn two_typical(mem: f64) -> Machine {
    let text = "name: c\nfabric:\n  graph: {switches: [{name: S0}], links: [], hosts: [S0, S0]}\nlink: {bandwidth: 54.54Gb/s}\nnodes: {count: 2, machine: typical-8gpu, nic_bandwidth: 54.54Gb/s}\n";
    let mut m = Machine::from_text(text, "c").unwrap();
    m.links.iter_mut().filter(|l| l.kind == LinkKind::Memory).for_each(|l| l.bandwidth = mem);
    m
}

fn at(m: &Machine, name: &str) -> usize {
    m.devices.iter().position(|d| d.name == name).unwrap_or_else(|| panic!("no {name}"))
}

/// The communicator over `gpus` of each node (names without the node's prefix), with `params`.
fn comm(m: &Machine, gpus: &[&str], params: &[(&str, &str)]) -> Comm {
    let node = |k: usize| gpus.iter().map(|g| at(m, &format!("n{k}.{g}"))).collect::<Vec<_>>();
    let mut c = Comm::new(m, &[node(0), node(1)], None).unwrap();
    let params: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    c.set_constants(constants::split(&params).unwrap().0).unwrap();
    c
}

/// The stages by GPU name: (send's host memory, receive's), None for GDR.
fn stages(c: &Comm) -> Vec<(String, Option<String>, Option<String>)> {
    let name = |d: Option<usize>| d.map(|d| c.m.devices[d].name.clone());
    c.net_stage.iter().map(|(&g, s)| (c.m.devices[g].name.clone(), name(s[0]), name(s[1]))).collect()
}

/// `ncclTopoCheckGdr` on typical-8gpu: the HCA hangs off socket 0's root complex, so GPUs 0-3
/// reach it through their PCIe switch and that host bridge (PHB) and GPUs 4-7 across QPI too
/// (SYS); K40s (compute capability 3.5) have no NVLink, so by default their sends never read GPU
/// memory (NCCL_NET_GDR_READ unset: "Disable GDR Reads pre-Ampere when we have other PCI
/// flows"). Each GPU's buffers are in its socket's memory (the proxy runs on the GPU's CPU).
#[test]
fn typical_8gpu_stages_by_nccl_s_gdr_rules() {
    let m = two_typical(51.2e9);
    let all = ["GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6", "GPU7"];
    let mem = |k: usize, g: usize| Some(format!("n{k}.MEM{}", g / 4));
    let want = |send: &dyn Fn(usize) -> bool, recv: &dyn Fn(usize) -> bool| {
        let mut out = Vec::new();
        for k in 0..2 {
            for g in 0..8 {
                if send(g) || recv(g) {
                    out.push((format!("n{k}.GPU{g}"), mem(k, g).filter(|_| send(g)), mem(k, g).filter(|_| recv(g))));
                }
            }
        }
        out.sort();
        out
    };
    let sorted = |c: &Comm| {
        let mut s = stages(c);
        s.sort();
        s
    };
    // Default (PXB in 2.30's P2C): every GPU beyond it both ways; no flush without GDR.
    let c = comm(&m, &all, &[]);
    assert_eq!(sorted(&c), want(&|_| true, &|_| true));
    assert_eq!(c.flush, 0.0);
    // PHB: socket 0's GPUs receive by GDR, still send through host memory (no GDR read).
    assert_eq!(sorted(&comm(&m, &all, &[("nccl_net_gdr_level", "PHB")])), want(&|_| true, &|g| g >= 4));
    // SYS: every GPU receives by GDR; sends need NCCL_NET_GDR_READ=1 as well.
    assert_eq!(sorted(&comm(&m, &all, &[("nccl_net_gdr_level", "SYS")])), want(&|_| true, &|_| false));
    assert!(comm(&m, &all, &[("nccl_net_gdr_level", "SYS"), ("nccl_net_gdr_read", "1")]).net_stage.is_empty());
    // NCCL_NET_GDR_READ=0 stages sends even where GDR is allowed; 1 cannot bring GDR beyond the level.
    assert_eq!(sorted(&comm(&m, &all, &[("nccl_net_gdr_level", "SYS"), ("nccl_net_gdr_read", "0")])), want(&|_| true, &|_| false));
    assert_eq!(sorted(&comm(&m, &all, &[("nccl_net_gdr_read", "1")])), want(&|_| true, &|_| true));
    // One GPU a node is "a single GPU": GDR reads stay on, so only the level stages it.
    assert!(comm(&m, &["GPU0"], &[("nccl_net_gdr_level", "PHB")]).net_stage.is_empty());
    // rev23 finding 4: at PHB GPUs 0-3 receive by GDR, and K40s (compute capability 3.5 < 9.0)
    // are flushed (`ncclTopoNeedFlush`, asked per GDR receive): the HCA's latency on a step into
    // n1.GPU0 (rank 8), none into n1.GPU4 (rank 12), which receives through host memory.
    let mut m = m;
    m.devices.iter_mut().filter(|d| d.kind == DeviceKind::Nic).for_each(|d| d.latency = 10e-6);
    let phb = comm(&m, &all, &[("nccl_net_gdr_level", "PHB")]);
    let hca = 10e-6;
    assert_eq!(phb.flush, hca);
    let call = phb.call(Coll::AllReduce, Algo::Ring, Proto::Simple, 1 << 20, 0);
    assert_eq!((call.flush_of(0, 8, Proto::Simple), call.flush_of(4, 12, Proto::Simple)), (hca, 0.0));
    assert_eq!(call.flush_of(0, 8, Proto::Ll), 0.0);
}

/// Where NCCL does use GDR by default nothing is staged: a dgx-a100 GPU shares a PCIe switch with
/// its NIC (PXB at most), and Ampere reads GPU memory for sends. NCCL_NET_GDR_LEVEL=LOC turns it
/// off for every GPU, and with it the GDR flush.
#[test]
fn a_gdr_machine_stages_nothing_unless_told() {
    let text = "name: c\nfabric:\n  graph: {switches: [{name: S0}], links: [], hosts: [S0, S0]}\nlink: {bandwidth: 25GB/s}\nnodes: {count: 2, machine: dgx-a100, nic_bandwidth: 25GB/s}\n";
    let mut m = Machine::from_text(text, "c").unwrap();
    m.devices.iter_mut().filter(|d| d.kind == DeviceKind::Nic).for_each(|d| d.latency = 10e-6);
    let all: Vec<String> = (0..8).map(|g| format!("GPU{g}")).collect();
    let all: Vec<&str> = all.iter().map(|s| s.as_str()).collect();
    let c = comm(&m, &all, &[]);
    assert!(c.net_stage.is_empty());
    assert_eq!(c.flush, 10e-6);
    let off = comm(&m, &all, &[("nccl_net_gdr_level", "LOC")]);
    assert_eq!(off.net_stage.len(), 16);
    assert!(off.net_stage.values().all(|s| s[0].is_some() && s[1].is_some()));
    assert_eq!(off.flush, 0.0);
    // LL128 between nodes needs NCCL's graph to reach the NICs within PXB; a GPU that receives
    // without GDR is routed through its CPU (PHB): no LL128 (tuning.cc `typeInter`).
    assert!(tuning::model(&c.tuning, Coll::AllReduce, Algo::Ring, Proto::Ll128).is_some());
    assert!(tuning::model(&off.tuning, Coll::AllReduce, Algo::Ring, Proto::Ll128).is_none());
    assert!(tuning::model(&off.tuning, Coll::AllReduce, Algo::Ring, Proto::Ll).is_some());
    // Back to the defaults: the communicator's own figures again.
    let mut again = off;
    again.set_constants(constants::Constants::default()).unwrap();
    assert!(again.net_stage.is_empty() && again.tuning.ll128_net);
    assert_eq!(again.flush, 10e-6);
}

/// Seconds of a 64 MiB send/receive between GPU0 of each node (each rank sends 64 MiB to the other
/// node and receives 64 MiB), under `model`.
fn sendrecv(c: &Comm, model: &str) -> f64 {
    run(&c.m, &c.call(Coll::SendRecv, Algo::Ring, Proto::Simple, 64 << 20, 0), model, &[], false).unwrap().seconds
}

/// The host path's bound on 2 x typical-8gpu (one GPU a node): without GDR each byte a rank sends
/// is stored by its kernel into its socket's memory and read out of it by the HCA, and each byte
/// it receives is written there by the HCA and loaded by its kernel. The memory link is one
/// resource for both directions, and a write into it takes 1/0.81 of its bandwidth (maxmin's
/// `write_memory`): per byte sent and received, 2 / 0.81 + 2 = 4.469 bytes of it. At 8 GB/s of
/// memory that is 67108864 x 4.469 / 8e9 = 37.49 ms, the bound the staged call runs at
/// (latencies take 0.1% more); with GDR (NCCL_NET_GDR_LEVEL=SYS, NCCL_NET_GDR_READ=1) the data
/// never touches memory, and the HCA's PCIe Gen3 x8 link binds: 7.877 GB/s x 0.79 (maxmin's PCIe
/// efficiency) = 6.223 GB/s, 10.78 ms (11.47 ms run, the per-step latencies of its 2 channels'
/// steps on top). At the machine file's 51.2 GB/s the memory's bound is 5.86 ms, under the
/// HCA's: both paths take the HCA's time, the staged one its legs' fill more (1.5%).
#[test]
fn without_gdr_the_host_memory_carries_every_byte_twice_each_side() {
    let (bytes, per_byte) = ((64u64 << 20) as f64, 2.0 / 0.81 + 2.0);
    let slow = two_typical(8e9);
    let staged = comm(&slow, &["GPU0"], &[]);
    assert_eq!(
        stages(&staged),
        [("n0.GPU0".into(), Some("n0.MEM0".into()), Some("n0.MEM0".into())), ("n1.GPU0".into(), Some("n1.MEM0".into()), Some("n1.MEM0".into()))]
    );
    // Every byte of the call crosses into memory and out of it on both nodes.
    let call = staged.call(Coll::SendRecv, Algo::Ring, Proto::Simple, 64 << 20, 0);
    let (t, _) = lower::lower(&call);
    let moved = |from: &str, to: &str| t.iter().filter(|x| x.src == at(&slow, from) && x.dst == at(&slow, to)).map(|x| x.size).sum::<u64>();
    assert_eq!([moved("n0.GPU0", "n0.MEM0"), moved("n0.MEM0", "n1.MEM0"), moved("n1.MEM0", "n1.GPU0")], [64 << 20; 3]);
    // Nothing goes GPU to GPU but the slots' 1-byte words back.
    assert!(t.iter().filter(|x| x.src == at(&slow, "n0.GPU0") && x.dst == at(&slow, "n1.GPU0")).all(|x| x.size == 1));
    let bound = bytes * per_byte / 8e9;
    let s = sendrecv(&staged, "maxmin");
    assert!(s >= bound && s < 1.01 * bound, "{s} s against {bound} s");
    let gdr = comm(&slow, &["GPU0"], &[("nccl_net_gdr_level", "SYS"), ("nccl_net_gdr_read", "1")]);
    assert!(gdr.net_stage.is_empty());
    let hca = bytes / (7.876923e9 * 0.79);
    let g = sendrecv(&gdr, "maxmin");
    assert!(g >= hca && g < 1.07 * hca, "{g} s against {hca} s");
    // The machine file's memory: the HCA binds both ways.
    let real = two_typical(51.2e9);
    let (s, g) = (
        sendrecv(&comm(&real, &["GPU0"], &[]), "maxmin"),
        sendrecv(&comm(&real, &["GPU0"], &[("nccl_net_gdr_level", "SYS"), ("nccl_net_gdr_read", "1")]), "maxmin"),
    );
    assert!(bytes * per_byte / 51.2e9 < hca && s > g && s < 1.03 * g, "staged {s} s, GDR {g} s");
    // The packet model runs the same legs: at the memory's bound too, which it charges without
    // the write efficiency (4 bytes of it a byte sent and received): 67108864 x 4 / 8e9 = 33.55 ms.
    let packet = bytes * 4.0 / 8e9;
    let p = sendrecv(&staged, "packet");
    assert!(p >= packet && p < 1.01 * packet, "packet {p} s against {packet} s");
}

/// A ring all-reduce keeps the legs in order: every step's bytes go through both nodes' memory,
/// so 2 x typical-8gpu (one GPU a node) at 8 GB/s of memory runs a 64 MiB all-reduce at the same
/// bound as the send/receive (each rank sends and receives (n - 1) / n x 2 = 1 x 64 MiB): 37.49 ms.
#[test]
fn a_ring_through_host_memory_runs_at_the_memory_s_bound() {
    let slow = two_typical(8e9);
    let c = comm(&slow, &["GPU0"], &[]);
    let bound = (64u64 << 20) as f64 * (2.0 / 0.81 + 2.0) / 8e9;
    // The packet model charges no write efficiency: 4 bytes of memory a byte, 33.55 ms.
    for (model, bound) in [("maxmin", bound), ("packet", (64u64 << 20) as f64 * 4.0 / 8e9)] {
        let s = run(&c.m, &c.call(Coll::AllReduce, Algo::Ring, Proto::Simple, 64 << 20, 0), model, &[], false).unwrap().seconds;
        assert!(s >= bound && s < 1.01 * bound, "{model}: {s} s against {bound} s");
    }
}

/// A Grace Hopper node's NIC hangs off the Grace CPU its GPU reaches by NVLink-C2C: 2.30's P2C,
/// within its default GDR level (P2C) and LL128's (PXN from compute capability 9.0); before 2.27
/// the same path is PHB, beyond the default PXB and LL128's gate, so 2.21 stages every step
/// unless NCCL_NET_GDR_LEVEL=PHB (CSCS sets it), which still leaves LL128 off between nodes. The
/// Alps file draws no host memory: with none a step stays GPU to GPU, so each Grace gets its
/// LPDDR5X here (500 GB/s, the schematic's figure).
#[test]
fn a_grace_hopper_nic_is_p2c_from_2_27_and_phb_before() {
    let file = format!("{}/../../bench/validation/machines/alps-gh200.yaml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&file).unwrap();
    let mem: String = (0..4).map(|k| format!("  - {{name: MEM{k}, kind: host_memory}}\n")).collect();
    let links: String = (0..4).map(|k| format!("  - {{a: CPU{k}, b: MEM{k}, kind: memory, bandwidth: 500GB/s}}\n")).collect();
    let text = text.replacen("links:\n", &format!("{mem}links:\n{links}"), 1);
    let node = std::env::temp_dir().join(format!("gdr-gh200-{}.yaml", std::process::id()));
    std::fs::write(&node, text).unwrap();
    let cluster = format!(
        "name: c\nfabric:\n  graph: {{switches: [{{name: S0}}], links: [], hosts: [S0, S0]}}\nlink: {{bandwidth: 25GB/s}}\nnodes: {{count: 2, machine: \"{}\"}}\n",
        node.display()
    );
    let m = Machine::from_text(&cluster, "c").unwrap();
    std::fs::remove_file(&node).ok();
    let all = ["GPU0", "GPU1", "GPU2", "GPU3"];
    let new = comm(&m, &all, &[]);
    assert!(new.net_stage.is_empty() && new.tuning.ll128_net);
    let old = comm(&m, &all, &[("nccl_version", "2.21")]);
    assert_eq!(old.net_stage.len(), 8);
    assert_eq!(old.net_stage[&at(&m, "n1.GPU2")], [Some(at(&m, "n1.MEM2")); 2]);
    assert!(!old.tuning.ll128_net);
    let phb = comm(&m, &all, &[("nccl_version", "2.21"), ("nccl_net_gdr_level", "PHB")]);
    assert!(phb.net_stage.is_empty() && !phb.tuning.ll128_net);
    // rev23 finding 3: the boundary is 2.27 (v2.26.6-1 has no PATH_P2C and NET_GDR_C2C 0;
    // v2.27.3-1 adds both), not 2.23: 2.23 and 2.26 stage as 2.21 does, 2.27 and 2.28 as 2.30.
    for v in ["2.23", "2.26"] {
        let c = comm(&m, &all, &[("nccl_version", v)]);
        assert!(c.net_stage.len() == 8 && !c.tuning.ll128_net, "{v}");
    }
    for v in ["2.27", "2.28"] {
        let c = comm(&m, &all, &[("nccl_version", v)]);
        assert!(c.net_stage.is_empty() && c.tuning.ll128_net, "{v}");
    }
}

/// rev23 finding 3, as `contend nccl-tests alps-gh200.yaml --nodes 2 -b 64M -e 64M --nccl-version V`
/// prints it (the file draws no host memory, so only LL128's gate moves): 2.23 and 2.26 keep LL128
/// off between nodes as 2.21 does (the NIC path is PHB before 2.27), 2.27 and later allow it.
#[test]
fn grace_hopper_s_ll128_across_nodes_waits_for_2_27() {
    let file = format!("{}/../../bench/validation/machines/alps-gh200.yaml", env!("CARGO_MANIFEST_DIR"));
    let row = |v: &str| {
        let req = tests_tool::Request { params: vec![("nccl_version".into(), v.into())], ..tests_tool::Request::one("all_reduce", "64M") };
        let r = crate::api::nccl_tests(&file, &req, 2, None).unwrap();
        (r.rows[0].proto, r.rows[0].time_us)
    };
    let old = row("2.21");
    assert_eq!(old.0, Proto::Simple);
    for v in ["2.23", "2.26"] {
        assert_eq!(row(v), old, "{v}");
    }
    for v in ["2.27", "2.28", "2.30"] {
        assert_eq!(row(v).0, Proto::Ll128, "{v}");
    }
}

/// rev23 finding 2: GDR off on a machine file that draws no host memory (p5-48xl, alps-gh200):
/// not refused (the presets draw none), but a caveat names the GPUs whose network steps stay GPU
/// to GPU and the fix; one with host memory (dgx-a100) stages them and says nothing of the kind.
#[test]
fn gdr_off_without_host_memory_is_said() {
    let root = format!("{}/../../bench/validation/machines", env!("CARGO_MANIFEST_DIR"));
    let caveats = |machine: &str| {
        let req = tests_tool::Request { params: vec![("nccl_net_gdr_level".into(), "LOC".into())], ..tests_tool::Request::one("all_reduce", "1M") };
        crate::api::nccl_tests(machine, &req, 2, None).unwrap().caveats
    };
    for (file, gpus) in [("p5-48xl", "GPU0, GPU1, GPU2, GPU3 and 4 more"), ("alps-gh200", "GPU0, GPU1, GPU2, GPU3")] {
        let said: Vec<String> = caveats(&format!("{root}/{file}.yaml")).into_iter().filter(|c| c.contains("draws no host memory")).collect();
        assert_eq!(said.len(), 1, "{file}: {said:?}");
        assert!(said[0].contains(&format!("of n0.{} through host memory", gpus.replace(", ", ", n0."))), "{file}: {}", said[0]);
        assert!(said[0].contains("stay GPU to GPU") && said[0].contains("add a host_memory device"), "{}", said[0]);
    }
    assert!(!caveats("dgx-a100").iter().any(|c| c.contains("draws no host memory")));
}

/// rev23 finding 5: with no GDR either side (2 x typical-8gpu, NCCL_NET_GDR_LEVEL=LOC), a staged
/// step's NIC leg goes host memory to host memory; it is its sending GPU's (its proxy posts it),
/// so in nccl-tests' back-to-back pair the second call's legs wait on no first-call transfer:
/// each follows its own GPU's store (or its connection's previous leg), never the last legs of
/// every GPU sharing the receiving socket's memory (1664 such waits on broadcast 64 MiB before).
#[test]
fn a_host_to_host_leg_is_its_sending_gpu_s_in_back_to_back_calls() {
    let m = two_typical(51.2e9);
    let all = ["GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6", "GPU7"];
    let c = comm(&m, &all, &[("nccl_net_gdr_level", "LOC")]);
    let ranks: std::collections::HashSet<usize> = c.devices.iter().copied().collect();
    let call = c.call(Coll::Broadcast, Algo::Ring, Proto::Simple, 64 << 20, 0).merged();
    let (two, first) = lower::pair(&call, lower::MAX_TRANSFERS);
    let host = |t: &crate::workload::Transfer| !ranks.contains(&t.src) && !ranks.contains(&t.dst);
    assert!(two[..first].iter().filter(|t| host(t)).count() > 0);
    let waits: usize = two[first..].iter().filter(|t| host(t)).map(|t| t.after.iter().filter(|&&a| a < first).count()).sum();
    assert_eq!(waits, 0);
}
