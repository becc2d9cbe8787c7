//! The NIC each ring channel crosses between nodes by, and PXN for the GPU it leaves from, from
//! NCCL's rule (`rails`: channel c at NIC c mod NICs in NCCL's GPU-by-GPU order, entering at a
//! GPU on the NIC's PCIe switch and leaving from one on it or, with PXN, through the NIC's GPU
//! over NVLink) and the machines' link rates: expected values never come from a run.

use super::*;
use crate::api;
use crate::topology::Machine;

fn two(machine: &str, nic: &str) -> Comm {
    let text = format!("name: two\nfabric:\n  graph: {{switches: [{{name: S0}}], links: [], hosts: [S0, S0]}}\nlink: {{bandwidth: {nic}}}\nnodes: {{count: 2, machine: \"{machine}\"}}\n");
    let m = Machine::from_text(&text, "two.yaml").unwrap();
    let node = |k: usize| m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    Comm::new(&m, &[node(0), node(1)], None).unwrap()
}

fn name(c: &Comm, d: usize) -> &str {
    &c.m.devices[d].name
}

/// One channel's crossing of one node: (NIC, entry GPU, leaving GPU, relay) by name.
type Crossing = (String, String, String, Option<String>);

/// Per channel and node, its crossing.
fn crossings(c: &Comm) -> Vec<Vec<Crossing>> {
    let r = c.rails();
    assert!(r.exits.len() >= c.channels, "rails for every channel");
    (0..c.channels)
        .map(|ch| {
            (0..c.nodes)
                .map(|node| {
                    let ring = &r.rings[ch];
                    let on: Vec<usize> = ring.iter().copied().filter(|&k| k / c.ppn == node).collect();
                    let e = r.exits[ch][node];
                    let dev = |k: usize| name(c, c.devices[k]).to_string();
                    (name(c, e.nic).to_string(), dev(on[0]), dev(*on.last().unwrap()), e.relay.map(|g| name(c, g).to_string()))
                })
                .collect()
        })
        .collect()
}

fn ring_busbw(machine: &str, nic: Option<&str>, params: Vec<(String, String)>) -> f64 {
    let r = tests_tool::Request {
        op: "all_reduce".into(),
        min_bytes: "1G".into(),
        max_bytes: "1G".into(),
        factor: 2,
        ngpus: None,
        gpus: None,
        dtype: "float".into(),
        root: 0,
        iters: 20,
        algo: Some("ring".into()),
        proto: Some("simple".into()),
        channels: None,
        channel_bounds: None,
        tuner: None,
        model: "maxmin".into(),
        params,
        explain: false,
        env: vec![],
    };
    api::nccl_tests(machine, &r, 2, nic).unwrap().rows[0].busbw
}

/// DGX-1 (P100): 4 EDR NICs, IBk on PCIe switch SWk with GPU 2k and 2k + 1. NCCL lists the NICs
/// GPU by GPU (IB0, IB1, IB2, IB3) and starts channel c at IB(c mod 4); each ring enters and
/// leaves a node at the two GPUs of that NIC's switch (PIX both ways, so no PXN).
#[test]
fn dgx1_channels_take_each_nic_in_turn_at_its_switchs_gpus() {
    let c = two("dgx1-p100", "12.5GB/s");
    let nc = c.tuning.graph_channels;
    for (ch, nodes) in crossings(&c).into_iter().enumerate() {
        let k = (ch % nc) % 4;
        for (node, (nic, entry, exit, relay)) in nodes.into_iter().enumerate() {
            assert_eq!(nic, format!("n{node}.IB{k}"), "channel {ch}");
            let pair = [format!("n{node}.GPU{}", 2 * k), format!("n{node}.GPU{}", 2 * k + 1)];
            assert!(pair.contains(&entry) && pair.contains(&exit) && entry != exit && relay.is_none(), "channel {ch}: {entry} .. {exit} via {relay:?}");
        }
    }
}

/// With the four NICs evenly loaded, a ring all-reduce's busbw is bound by what they carry out of
/// a node: 4 x 12.5 = 50 GB/s (each channel crosses each node boundary once each way with
/// 2 (n - 1) / n of its share, as busbw counts it). NCCL's maintainer: "DGX-1 can get 48 GB/s
/// because we have 4 IB adapters" (nccl-tests #29); NCCL's own model 47.6.
#[test]
fn dgx1_ring_across_two_nodes_reaches_its_four_nics() {
    let b = ring_busbw("dgx1-p100", None, vec![]);
    assert!(b > 0.85 * 4.0 * 12.5 && b <= 4.0 * 12.5 * 1.001, "{b}");
}

/// A node of the DGX H100 class with one NIC per GPU, each pair alone on its PCIe Gen5 switch
/// (NVIDIA's DGX H100 layout), two sockets: GPU k reaches NIC k at PIX and every other NIC
/// through a CPU (PHB or SYS).
fn one_to_one() -> std::path::PathBuf {
    let mut t =
        String::from("name: pair8\ndevices:\n  - {name: RC0, kind: root_complex}\n  - {name: RC1, kind: root_complex}\n  - {name: NVS, kind: nvswitch}\n");
    for k in 0..8 {
        t += &format!("  - {{name: SW{k}, kind: pcie_switch}}\n  - {{name: GPU{k}, kind: gpu, model: H100-SXM5-80GB}}\n  - {{name: NIC{k}, kind: nic, port_bandwidth: 400Gb/s}}\n");
    }
    t += "links:\n  - {a: RC0, b: RC1, kind: upi, bandwidth: 22GB/s}\n";
    for k in 0..8 {
        t += &format!(
            "  - {{a: RC{}, b: SW{k}, kind: pcie, gen: 5, lanes: 16}}\n  - {{a: SW{k}, b: GPU{k}, kind: pcie, gen: 5, lanes: 16}}\n  - {{a: SW{k}, b: NIC{k}, kind: pcie, gen: 5, lanes: 16}}\n  - {{a: NVS, b: GPU{k}, kind: nvlink, count: 18, bandwidth: 25GB/s}}\n",
            k / 4
        );
    }
    let file = std::env::temp_dir().join(format!("contend-pair8-{}-{:?}.yaml", std::process::id(), std::thread::current().id()));
    std::fs::write(&file, t).unwrap();
    file
}

/// On it NCCL's search enters each channel's node at the NIC's own GPU (PIX) and leaves from
/// another GPU, which reaches that NIC only through a CPU: PXN relays the step over NVLink to
/// the NIC's GPU (paths.cc: the peer is at PIX <= PXB, an NVLink peer, and our path is worse
/// than PXN). With NCCL_PXN_DISABLE=1 the leaving GPU's own path is taken, through the CPU.
#[test]
fn one_nic_per_gpu_leaves_through_the_nics_gpu_with_pxn() {
    let file = one_to_one();
    let mut c = two(file.to_str().unwrap(), "25GB/s");
    let nc = c.tuning.graph_channels;
    for pxn in [true, false] {
        c.constants.pxn_disable = !pxn;
        for (ch, nodes) in crossings(&c).into_iter().enumerate() {
            let k = (ch % nc) % 8;
            for (node, (nic, entry, exit, relay)) in nodes.into_iter().enumerate() {
                let own = format!("n{node}.GPU{k}");
                assert_eq!(nic, format!("n{node}.NIC{k}"), "channel {ch}");
                if pxn {
                    assert!(entry == own && exit != own && relay == Some(own.clone()), "channel {ch}: {entry} .. {exit} via {relay:?}");
                } else {
                    // Without PXN both ends need a path no worse than PHB: GPUs of the NIC's socket.
                    let socket = |g: &str| g[g.len() - 1..].parse::<usize>().unwrap() / 4;
                    assert!(relay.is_none() && socket(&entry) == k / 4 && socket(&exit) == k / 4, "channel {ch}: {entry} .. {exit}");
                }
            }
        }
    }
    // Bound with PXN: the 8 NICs at 25 GB/s each, 200 GB/s, evenly loaded; the relay's NVLink and
    // Gen5 x16 carry more. Without PXN the steps that leave from the other socket cross the
    // 22 GB/s UPI as well, so it can only be slower.
    let path = file.to_str().unwrap();
    let with = ring_busbw(path, Some("25GB/s"), vec![]);
    let without = ring_busbw(path, Some("25GB/s"), vec![("nccl_pxn_disable".into(), "1".into())]);
    std::fs::remove_file(&file).unwrap();
    assert!(with > 0.9 * 8.0 * 25.0 && with <= 8.0 * 25.0 * 1.001, "{with}");
    assert!(without < with, "without PXN {without}, with {with}");
}

/// hgx-h100 and dgx-a100 as written put two GPUs and two NICs on each PCIe switch: the GPU beside
/// the entry GPU reaches the NIC at PIX too, so no channel needs PXN, and every NIC carries an
/// equal share of the channels. NCCL's local GPU of NIC k is GPU k (`ncclTopoGetLocalNet`: GPU d
/// of the two sharing a switch's two NICs takes NIC d mod 2), so NIC k's channels enter at GPU k
/// and leave from its neighbour, and every GPU's PCIe link carries one NIC's way in and the other's
/// way out.
#[test]
fn two_gpus_per_switch_need_no_pxn_and_share_the_nics_evenly() {
    for machine in ["hgx-h100", "dgx-a100"] {
        let c = two(machine, "25GB/s");
        let x = crossings(&c);
        assert!(x.iter().flatten().all(|e| e.3.is_none()), "{machine}");
        for (ch, nodes) in x.iter().enumerate() {
            let (nic, entry, exit, _) = &nodes[0];
            let k: usize = nic["n0.NIC".len()..].parse().unwrap();
            assert_eq!((entry.clone(), exit.clone()), (format!("n0.GPU{k}"), format!("n0.GPU{}", k ^ 1)), "{machine} channel {ch}");
        }
        let mut per = std::collections::BTreeMap::new();
        for nodes in &x {
            *per.entry(nodes[0].0.clone()).or_insert(0) += 1;
        }
        assert!(per.len() == 8 && per.values().all(|&n| n == c.channels / 8), "{machine}: {per:?}");
    }
}

/// A PCIe box has no NVLink: no PXN anywhere, and the ring's ends are the GPUs of the NIC's socket.
#[test]
fn pcie_box_has_no_pxn() {
    let c = two("gb5470-2ib", "6.8175GB/s");
    assert!(crossings(&c).iter().flatten().all(|e| e.3.is_none()));
}

/// `nvidia-smi topo -m` of the H800 node of NVIDIA/nccl#933, rebuilt from its layout: 8 GPUs, every
/// pair NV8; GPU g on socket g / 4; NIC k on socket k mod 2; each GPU PIX to its own NIC (GPU0..3:
/// NIC2, 4, 6, 8; GPU4..7: NIC1, 3, 5, 7), NODE to the rest of its socket, SYS across. With
/// `nic0`, NIC0: a ninth NIC on socket 0 that is no GPU's (NODE to GPU0..3, SYS to GPU4..7).
fn h800_topo(nic0: bool) -> String {
    let gpus: Vec<String> = (0..8).map(|g| format!("GPU{g}")).collect();
    let nics: Vec<usize> = (if nic0 { 0 } else { 1 }..9).collect();
    let own = |g: usize| if g < 4 { 2 * g + 2 } else { 2 * (g - 4) + 1 };
    let names: Vec<String> = gpus.iter().cloned().chain(nics.iter().map(|k| format!("NIC{k}"))).collect();
    // Position p: a GPU (p < 8) or NIC nics[p - 8], and its socket.
    let socket = |p: usize| if p < 8 { p / 4 } else { nics[p - 8] % 2 };
    let label = |a: usize, b: usize| -> &str {
        if a == b {
            " X "
        } else if a < 8 && b < 8 {
            "NV8"
        } else if (a < 8 && b >= 8 && own(a) == nics[b - 8]) || (b < 8 && a >= 8 && own(b) == nics[a - 8]) {
            "PIX"
        } else if socket(a) == socket(b) {
            "NODE"
        } else {
            "SYS"
        }
    };
    let mut s = format!("\t{}\tCPU Affinity\tNUMA Affinity\n", names.join("\t"));
    for a in 0..names.len() {
        let cells: Vec<&str> = (0..names.len()).map(|b| label(a, b)).collect();
        let aff = if a < 8 {
            if a < 4 {
                "\t0-47,96-143\t0"
            } else {
                "\t48-95,144-191\t1"
            }
        } else {
            ""
        };
        s.push_str(&format!("{}\t{}{aff}\n", names[a], cells.join("\t")));
    }
    s
}

fn h800_two_nodes(nic0: bool) -> tests_tool::Report {
    let yaml = crate::import::import(&h800_topo(nic0), "h800", "h800.txt", 1).unwrap().yaml;
    let file = std::env::temp_dir().join(format!("contend-h800-nic0-{nic0}-{}.yaml", std::process::id()));
    std::fs::write(&file, yaml).unwrap();
    let r = api::nccl_tests(file.to_str().unwrap(), &tests_tool::Request::one("all_reduce", "1G"), 2, None).unwrap();
    std::fs::remove_file(&file).unwrap();
    r
}

/// A ninth NIC that no GPU is within PXB of (NVIDIA/nccl#933's mlx5_0, NODE to four GPUs) is not
/// listed by NCCL's network search (search.cc `ncclTopoSelectNets` lists NICs up to the search's
/// path type, which stops at PXN once rings are found), so it carries no channel and adds no
/// channel to NCCL's ring graph: the machine runs as without it. Channel c takes NIC c mod 8 of
/// the 8 GPU-own NICs, so each carries channels / 8 of them, none twice as many as another.
#[test]
fn a_nic_no_gpu_is_near_carries_no_channel() {
    let (nine, eight) = (h800_two_nodes(true), h800_two_nodes(false));
    let (a9, a8) = (nine.search.across_nodes.as_ref().unwrap(), eight.search.across_nodes.as_ref().unwrap());
    assert_eq!((a9.nics.len(), a8.nics.len()), (9, 8));
    assert_eq!(a9.unused, vec!["n0.NIC0".to_string()]);
    assert!(a8.unused.is_empty());
    assert_eq!(nine.search.channels, eight.search.channels);
    assert_eq!(a9.ring_graph, a8.ring_graph);
    assert_eq!(a9.tree_graph, a8.tree_graph);
    assert_eq!(a9.crossings, a8.crossings);
    let channels = nine.search.channels;
    assert_eq!(channels % 8, 0, "the 8 GPU-own NICs carry the channels alike");
    for k in 1..9 {
        let on = a9.crossings.iter().filter(|x| x.nic == format!("n0.NIC{k}")).count();
        assert_eq!(on, channels / 8, "n0.NIC{k}");
    }
    assert_eq!((nine.rows[0].algo, nine.rows[0].proto), (eight.rows[0].algo, eight.rows[0].proto));
    assert_eq!(nine.rows[0].busbw, eight.rows[0].busbw);
}

/// A node of four GH200 as CSCS's Alps runs them (eth-cscs/cscs-docs, the GH200 node schematic):
/// every GPU pair joined by 6 NVLink 4 links (150 GB/s a direction), each Hopper GPU joined to its
/// own Grace by NVLink-C2C (450 GB/s a direction; with `c2c` false a PCIe Gen5 x16 link instead),
/// a 200 Gb/s NIC on each Grace's PCIe Gen5 x16, the Graces joined by their CPU fabric. No
/// NVSwitch: GPU k reaches NIC k through its own CPU only (P2C from NCCL 2.27, else PHB) and the
/// other NICs through a CPU link (SYS) or, with PXN, through GPU k.
fn gh200_quad(c2c: bool) -> std::path::PathBuf {
    let mut t = String::from("name: quad\ndevices:\n");
    for k in 0..4 {
        t += &format!("  - {{name: CPU{k}, kind: root_complex, model: Grace}}\n  - {{name: GPU{k}, kind: gpu, model: NVIDIA GH200 120GB}}\n");
        t += &format!("  - {{name: NIC{k}, kind: nic, port_bandwidth: 200Gb/s}}\n");
    }
    t += "links:\n";
    for k in 0..4 {
        let up = if c2c { "kind: nvlink, bandwidth: 450GB/s".to_string() } else { "kind: pcie, gen: 5, lanes: 16".to_string() };
        t += &format!("  - {{a: CPU{k}, b: GPU{k}, {up}}}\n  - {{a: CPU{k}, b: NIC{k}, kind: pcie, gen: 5, lanes: 16}}\n");
        for j in k + 1..4 {
            t += &format!(
                "  - {{a: GPU{k}, b: GPU{j}, kind: nvlink, count: 6, bandwidth: 25GB/s}}\n  - {{a: CPU{k}, b: CPU{j}, kind: fabric, bandwidth: 100GB/s}}\n"
            );
        }
    }
    let file = std::env::temp_dir().join(format!("contend-gh200-{c2c}-{}-{:?}.yaml", std::process::id(), std::thread::current().id()));
    std::fs::write(&file, t).unwrap();
    file
}

/// Per NIC of the first node, how many channels enter by it and how many leave by it.
fn nic_shares(c: &Comm) -> std::collections::BTreeMap<String, (usize, usize)> {
    let mut per = std::collections::BTreeMap::new();
    for e in c.rails().exits.iter().take(c.channels) {
        per.entry(name(c, e[0].nic).to_string()).or_insert((0, 0)).0 += 1;
        per.entry(name(c, e[0].out).to_string()).or_insert((0, 0)).1 += 1;
    }
    per
}

fn ring_busbw_at(machine: &str, nic: Option<&str>, model: &str, version: &str, algo: &str) -> f64 {
    let mut r = tests_tool::Request::one("all_reduce", "512M");
    (r.algo, r.proto, r.model) = (Some(algo.into()), Some("simple".into()), model.into());
    r.params = vec![("nccl_version".into(), version.into())];
    api::nccl_tests(machine, &r, 2, nic).unwrap().rows[0].busbw
}

/// NCCL 2.30.7 on the GH200 node: GPU k's path to NIC k is P2C (C2C, then PCIe below its CPU),
/// within NCCL_PXN_C2C's reach, so every other GPU leaves for NIC k through GPU k (PXN), and the
/// search's rings (crossNic 0, at PXN) enter at GPU k and leave by NIC k. Channel c takes NIC c
/// mod 4, so each NIC carries a quarter of the channels each way, and the ring's busbw is the
/// four NICs' 4 x 25 = 100 GB/s (each channel crosses each node boundary once each way). Before,
/// the leaving steps took the leaving GPU's own NIC and channel 3 entered at GPU 2: two NICs ran
/// full and the ring ran at 49.9 GB/s (qa22).
#[test]
fn gh200_nodes_leave_through_the_nics_gpu_and_share_the_nics_evenly() {
    let file = gh200_quad(true);
    let path = file.to_str().unwrap();
    let c = two(path, "25GB/s");
    assert_eq!(c.constants.version, versions::Version::V2_30);
    for (ch, nodes) in crossings(&c).into_iter().enumerate() {
        let k = ch % 4;
        for (node, (nic, entry, exit, relay)) in nodes.into_iter().enumerate() {
            let own = format!("n{node}.GPU{k}");
            assert_eq!(nic, format!("n{node}.NIC{k}"), "channel {ch}");
            assert!(entry == own && exit != own && relay == Some(own.clone()), "channel {ch}: {entry} .. {exit} via {relay:?}");
        }
    }
    let per = nic_shares(&c);
    assert!(per.len() == 4 && per.values().all(|&n| n == (c.channels / 4, c.channels / 4)), "{per:?}");
    for model in ["maxmin", "packet"] {
        let b = ring_busbw_at(path, Some("25GB/s"), model, "2.30", "ring");
        assert!(b > 0.97 * 100.0 && b <= 100.0 * 1.001, "{model}: {b}");
    }
    // A tree on two nodes: each channel's head takes its NIC both ways, half the channels going up
    // from each node, so a node sends and receives the call's bytes through its four NICs: algbw
    // 100, busbw x 2 (n - 1) / n = 175 GB/s (8 ranks). The NICs piled up gave 85.3 (packet: the
    // same within 0.5%, `docs/nccl.md`).
    let t = ring_busbw_at(path, Some("25GB/s"), "maxmin", "2.30", "tree");
    assert!(t > 0.9 * 175.0 && t <= 175.0 * 1.001, "tree: {t}");
    std::fs::remove_file(&file).unwrap();
}

/// Before 2.27 (here 2.21) the GPU's path to its NIC is PHB and PXN needs its relay within PXB,
/// so a ring could leave by the NIC it entered by only from across a CPU link (SYS), which NCCL's
/// topology gives ARM's 6 GB/s: the search's rings at the narrower types leave by another NIC
/// (NCCL_CROSS_NIC=2), in pairs: channel 2k enters by NIC a at GPU a and leaves from GPU b by
/// NIC b, channel 2k + 1 enters by NIC b at GPU b and leaves by NIC a from GPU a. The same on
/// every release where the GPU hangs on its CPU's PCIe. Each NIC is entered by a quarter of the
/// channels and left by a quarter, and the ring's busbw is the four NICs' 100 GB/s again.
#[test]
fn without_p2c_the_rings_leave_by_the_nic_of_their_leaving_gpu_in_pairs() {
    for (c2c, version) in [(true, versions::Version::V2_21), (false, versions::Version::V2_30), (false, versions::Version::V2_21)] {
        let file = gh200_quad(c2c);
        let path = file.to_str().unwrap();
        let mut c = two(path, "25GB/s");
        c.set_constants(constants::Constants { version, ..Default::default() }).unwrap();
        let own = |g: &str| g["n0.GPU".len()..].to_string();
        let nic_of = |n: &str| n["n0.NIC".len()..].to_string();
        let graph = c.tuning.graph_channels;
        let mut pairs = Vec::new();
        for (ch, e) in c.rails().exits.iter().take(c.channels).enumerate() {
            let ring = &c.rails().rings[ch];
            let on: Vec<usize> = ring.iter().copied().filter(|&r| r < c.ppn).collect();
            let (entry, exit) = (name(&c, c.devices[on[0]]), name(&c, c.devices[*on.last().unwrap()]));
            let (nic, out) = (name(&c, e[0].nic), name(&c, e[0].out));
            assert!(
                nic != out && nic_of(nic) == own(entry) && nic_of(out) == own(exit) && e[0].relay.is_none(),
                "{c2c} {version:?} channel {ch}: {nic} at {entry} .. {exit} by {out}"
            );
            pairs.push((nic.to_string(), out.to_string()));
        }
        for ch in (1..graph).step_by(2) {
            assert_eq!((&pairs[ch].0, &pairs[ch].1), (&pairs[ch - 1].1, &pairs[ch - 1].0), "{c2c} {version:?} channel {ch} pairs with {}", ch - 1);
        }
        let per = nic_shares(&c);
        assert!(per.len() == 4 && per.values().all(|&n| n == (c.channels / 4, c.channels / 4)), "{c2c} {version:?}: {per:?}");
        // Packet once (the GPU on PCIe under 2.30): its runs at 512 MiB are the slow part.
        let models: &[&str] = if !c2c && version == versions::Version::V2_30 { &["maxmin", "packet"] } else { &["maxmin"] };
        for model in models {
            let b = ring_busbw_at(path, Some("25GB/s"), model, version.name(), "ring");
            assert!(b > 0.97 * 100.0 && b <= 100.0 * 1.001, "{c2c} {version:?} {model}: {b}");
        }
        std::fs::remove_file(&file).unwrap();
    }
}

/// The Alps node under 2.19 and 2.20: without P2C (both releases) a ring leaves by its entry NIC
/// only from across a CPU link, so the rails leave by another NIC (above). 2.20.3's search pairs
/// such channels, as `rails` builds them: it runs, channel 1 entering by the NIC channel 0 left
/// by. 2.19.3's retries with crossNic 1 and no pairs (search.cc: no `nChannels & 1` test, a
/// crossing graph kept only 15% ahead, `ncclTopoCompareGraphs`), which comparison contend does
/// not restate: refused in one line naming it and 2.20 (and, for 2.19, NCCL_CROSS_NIC=1, whose
/// unpaired crossing from the first search it does restate). DGX-1's rails never cross (PIX at
/// both ends), so 2.19 runs there.
#[test]
fn crossnic_pairs_run_from_2_20_and_2_19_is_refused_where_rails_cross() {
    let file = gh200_quad(true);
    let mut c = two(file.to_str().unwrap(), "25GB/s");
    c.set_constants(constants::Constants { version: versions::Version::V2_20, ..Default::default() }).unwrap();
    let e = &c.rails().exits;
    assert!(c.rails().cross && e[0][0].nic != e[0][0].out && (e[1][0].nic, e[1][0].out) == (e[0][0].out, e[0][0].nic));
    for v in [versions::Version::V2_18, versions::Version::V2_19] {
        let err = c.set_constants(constants::Constants { version: v, ..Default::default() }).unwrap_err().to_string();
        assert!(err.contains("only where it carries 15% more than the same-NIC one (search.cc ncclTopoCompareGraphs)") && !err.contains('\n'), "{err}");
        let fix = if v == versions::Version::V2_19 { "give 2.20 or later, or NCCL_CROSS_NIC=1" } else { "give 2.20 or later" };
        assert!(err.ends_with(fix), "{err}");
    }
    // The advice for 2.19 runs.
    c.set_constants(constants::Constants { version: versions::Version::V2_19, cross_nic: 1, ..Default::default() }).unwrap();
    std::fs::remove_file(&file).unwrap();
    let mut d = two("dgx1-p100", "12.5GB/s");
    assert!(!d.rails().cross);
    d.set_constants(constants::Constants { version: versions::Version::V2_19, ..Default::default() }).unwrap();
}

/// NCCL_CROSS_NIC (`nccl_cross_nic`): on DGX-1 the rails never cross under 2 (PIX at both ends),
/// so 0 is the same graph and runs, on every release; the Alps-like node's rails cross under 2,
/// where 0 (NCCL's same-NIC graph, leaving from across a CPU link) is refused in one line. 1 runs
/// everywhere from 2.19 (`cross_nic_one_*`; 2.18: `cross_nic_one_under_2_18_*`), on one node too
/// (no NIC: crossNic does not apply).
#[test]
fn cross_nic_zero_runs_where_the_rails_do_not_cross_and_one_everywhere() {
    let with = |c: &mut Comm, cross_nic: u8, version: versions::Version| c.set_constants(constants::Constants { cross_nic, version, ..Default::default() });
    let mut d = two("dgx1-p100", "12.5GB/s");
    for v in [versions::Version::V2_18, versions::Version::V2_30] {
        with(&mut d, 0, v).unwrap();
    }
    for v in [versions::Version::V2_19, versions::Version::V2_30] {
        with(&mut d, 1, v).unwrap();
    }
    let file = gh200_quad(true);
    let mut c = two(file.to_str().unwrap(), "25GB/s");
    with(&mut c, 2, versions::Version::V2_21).unwrap();
    with(&mut c, 1, versions::Version::V2_21).unwrap();
    let err = with(&mut c, 0, versions::Version::V2_21).unwrap_err().to_string();
    assert!(err.starts_with("nccl_cross_nic: 0: keeps each ring channel on the NIC it entered by") && !err.contains('\n'), "{err}");
    std::fs::remove_file(&file).unwrap();
    let m = Machine::load("dgx-a100").unwrap();
    let mut one = Comm::new(&m, &[m.gpus()], None).unwrap();
    with(&mut one, 1, versions::Version::V2_30).unwrap();
    assert!(one.rails().exits.is_empty());
}

/// NCCL_CROSS_NIC=1 under 2.18.5 (search.cc v2.18.5-1 :935-940: crossNic 1 at the first speed
/// only, each lower speed the same NIC first and a crossing graph kept only 15% ahead, as at 2):
/// refused in one line where its crossNic 1 and crossNic 2 rails differ, which contend cannot
/// pick between; 2.19 runs. They differ on every multi-NIC node whose ring leaves from a GPU
/// whose own NIC is not the one it entered by: the GH200 node (2's rails cross, 1 leaves by the
/// leaving GPU's own NIC), dgx-a100 (2 leaves from GPU k ^ 1 by NIC k, 1 by GPU k ^ 1's own NIC:
/// `cross_nic_one_leaves_switch_shared_nodes_by_the_leaving_gpus_own_nic`) and DGX-1 (2 leaves by
/// the entry NIC at PIX, 1 by the leaving GPU's switch's NIC). On one node crossNic does not apply.
#[test]
fn cross_nic_one_under_2_18_runs_only_where_both_searches_agree() {
    let with = |c: &mut Comm, version: versions::Version| c.set_constants(constants::Constants { cross_nic: 1, version, ..Default::default() });
    let refused = |c: &mut Comm| {
        let err = with(c, versions::Version::V2_18).unwrap_err().to_string();
        assert!(err.starts_with("nccl_version: 2.18: NCCL 2.18.5 searches NCCL_CROSS_NIC=1 at its first speed only") && !err.contains('\n'), "{err}");
        assert!(err.ends_with("give 2.19 or later"), "{err}");
        with(c, versions::Version::V2_19).unwrap();
    };
    let file = gh200_quad(true);
    refused(&mut two(file.to_str().unwrap(), "25GB/s"));
    std::fs::remove_file(&file).unwrap();
    refused(&mut two("dgx-a100", "50GB/s"));
    refused(&mut two("dgx1-p100", "12.5GB/s"));
    let m = Machine::load("dgx-a100").unwrap();
    with(&mut Comm::new(&m, &[m.gpus()], None).unwrap(), versions::Version::V2_18).unwrap();
}

/// Per channel of the first node: (entry NIC, leaving NIC, entry GPU, leaving GPU, relay), each
/// as its index in its name (n0.NIC3: 3).
fn ends(c: &Comm) -> Vec<(usize, usize, usize, usize, Option<usize>)> {
    let idx = |d: usize| {
        let n = name(c, d);
        n[n.trim_end_matches(|ch: char| ch.is_ascii_digit()).len()..].parse::<usize>().unwrap()
    };
    let r = c.rails();
    (0..c.channels)
        .map(|ch| {
            let on: Vec<usize> = r.rings[ch].iter().copied().filter(|&k| k < c.ppn).collect();
            let e = r.exits[ch][0];
            (idx(e.nic), idx(e.out), idx(c.devices[on[0]]), idx(c.devices[*on.last().unwrap()]), e.relay.map(idx))
        })
        .collect()
}

fn cross_nic(c: &mut Comm, cross_nic: u8, version: versions::Version) {
    c.set_constants(constants::Constants { cross_nic, version, ..Default::default() }).unwrap();
}

fn busbw_cross(machine: &str, nic: Option<&str>, nodes: usize, cross_nic: &str, version: &str, model: &str) -> f64 {
    let mut r = tests_tool::Request::one("all_reduce", "512M");
    (r.algo, r.proto, r.model) = (Some("ring".into()), Some("simple".into()), model.into());
    r.params = vec![("nccl_version".into(), version.into()), ("nccl_cross_nic".into(), cross_nic.into())];
    api::nccl_tests(machine, &r, nodes, nic).unwrap().rows[0].busbw
}

/// NCCL_CROSS_NIC=1 on the GH200 node (NIC k behind GPU k's own Grace: P2C from 2.27, PHB before;
/// every other NIC through a CPU link or, with PXN, through GPU k). The first search is crossNic 1
/// (search.cc `ncclTopoCompute`), so at the narrowest path type: channel c enters by NIC c mod 4 at
/// its local GPU c mod 4 and leaves from the ring's last GPU x by x's own NIC (its nearest; any other
/// only at PXN), no relay. 2.30.7 and 2.19.3 pair nothing (`ncclTopoSearchCheckNet` tests crossNic
/// 2 only; 2.19.3 has no pair test); 2.21.5 pairs (channel 2k + 1 enters by 2k's leaving NIC and
/// leaves by 2k's entry NIC). Each NIC is entered by a quarter of the channels and left by a quarter,
/// as under 2 (where 2.30.7's rings leave by NIC c mod 4 through GPU c mod 4, PXN), so the ring's
/// busbw is the four NICs' 4 x 25 = 100 GB/s under both: a channel's bytes leave by another NIC but
/// every NIC carries the same bytes.
#[test]
fn cross_nic_one_leaves_the_gh200_node_by_the_leaving_gpus_own_nic() {
    let file = gh200_quad(true);
    let path = file.to_str().unwrap();
    let mut c = two(path, "25GB/s");
    for (version, paired) in [(versions::Version::V2_30, false), (versions::Version::V2_19, false), (versions::Version::V2_21, true)] {
        cross_nic(&mut c, 1, version);
        assert!(c.rails().cross, "{version:?}");
        let x = ends(&c);
        let (mut inn, mut out) = ([0usize; 4], [0usize; 4]);
        for (ch, &(nic, leaves, entry, exit, relay)) in x.iter().enumerate() {
            assert!(nic == entry && leaves == exit && nic != leaves && relay.is_none(), "{version:?} channel {ch}: {x:?}");
            if ch < c.tuning.graph_channels {
                assert_eq!(nic, if paired && ch % 2 == 1 { x[ch - 1].1 } else { ch % 4 }, "{version:?} channel {ch}: {x:?}");
                if paired && ch % 2 == 1 {
                    assert_eq!(leaves, x[ch - 1].0, "{version:?} channel {ch} pairs with {}", ch - 1);
                }
            }
            inn[nic] += 1;
            out[leaves] += 1;
        }
        assert!(inn.iter().chain(&out).all(|&n| n == c.channels / 4), "{version:?}: in {inn:?} out {out:?}");
    }
    for model in ["maxmin", "packet"] {
        let (one, two) = (busbw_cross(path, Some("25GB/s"), 2, "1", "2.30", model), busbw_cross(path, Some("25GB/s"), 2, "2", "2.30", model));
        assert!(one > 0.97 * 100.0 && one <= 100.0 * 1.001 && (one - two).abs() < 0.01 * two, "{model}: 1 {one}, 2 {two}");
    }
    std::fs::remove_file(&file).unwrap();
}

/// NCCL_CROSS_NIC=1 on the presets with two GPUs and two NICs on each PCIe switch (hgx-h100,
/// dgx-a100): NIC k's local GPU is GPU k, and every GPU reaches both NICs of its switch at PIX. Under
/// 0 and 2 channel c enters by NIC k = c mod 8 at GPU k and leaves from GPU k ^ 1 by NIC k (the
/// same-NIC search succeeds at PIX). Under 1 it enters the same way and leaves from the ring's last
/// GPU x by x's own NIC (the first of its list, `ncclTopoGetLocalNet`), no relay; each NIC is entered
/// and left by an eighth of the channels under all three, so busbw is the same to first order (hgx-h100:
/// the 8 NICs' 8 x 50 = 400 GB/s bound where the test fabric's link is 50 GB/s).
#[test]
fn cross_nic_one_leaves_switch_shared_nodes_by_the_leaving_gpus_own_nic() {
    for machine in ["hgx-h100", "dgx-a100"] {
        let mut c = two(machine, "50GB/s");
        for cross in [0u8, 2, 1] {
            cross_nic(&mut c, cross, versions::Version::V2_30);
            let x = ends(&c);
            let (mut inn, mut out) = ([0usize; 8], [0usize; 8]);
            for (ch, &(nic, leaves, entry, exit, relay)) in x.iter().enumerate() {
                let want = if cross == 1 { exit } else { nic };
                assert!(nic == entry && leaves == want && relay.is_none() && (cross == 1 || exit == entry ^ 1), "{machine} {cross} channel {ch}: {x:?}");
                if ch < c.tuning.graph_channels {
                    assert_eq!(nic, ch % 8, "{machine} {cross} channel {ch}");
                }
                inn[nic] += 1;
                out[leaves] += 1;
            }
            assert!(inn.iter().chain(&out).all(|&n| n == c.channels / 8), "{machine} {cross}: in {inn:?} out {out:?}");
        }
    }
    let (one, two) = (busbw_cross("hgx-h100", Some("50GB/s"), 2, "1", "2.30", "maxmin"), busbw_cross("hgx-h100", Some("50GB/s"), 2, "2", "2.30", "maxmin"));
    assert!((one - two).abs() < 0.01 * two && one <= 400.0 * 1.001, "1 {one}, 2 {two}");
}

/// DGX-1 (P100), the multi-NIC preset without NVSwitch: each NIC is entered and left by a quarter
/// of the channels (PIX at both ends: crossNic 0, no PXN), and the ring reaches the NICs' bound,
/// 4 x 12.5 = 50 GB/s: within 2.5% under packet (48.95 GB/s since round 27's pkt27, whose
/// binding of a lane's packet when its port takes it, `model/packet/nic_turn_tests.rs`, moved it
/// from just over 49; mendpkt27's turns over messages at the NIC's own link, each NIC here being
/// fed by two GPUs' links, leave it at 48.95); maxmin keeps the NICs' PCIe Gen3 x16 links at 93%
/// (`dgx1_ring_across_two_nodes_reaches_its_four_nics`).
#[test]
fn dgx1_nics_carry_equal_shares_each_way_at_their_bound() {
    let c = two("dgx1-p100", "12.5GB/s");
    let per = nic_shares(&c);
    assert!(per.len() == 4 && per.values().all(|&n| n == (c.channels / 4, c.channels / 4)), "{per:?}");
    let b = ring_busbw_at("dgx1-p100", None, "packet", "2.30", "ring");
    assert!(b > 0.975 * 50.0 && b <= 50.0 * 1.001, "{b}");
}
