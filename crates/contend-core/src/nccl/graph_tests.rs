//! NCCL's own graphs across nodes, as its cost model sees them (search.cc restated in
//! `tuning::net_ring_graph` and `tuning::tree_graph`), on two copies of a node: expected values
//! from NCCL's speed arrays, its NIC figure (speed / 8000 GB/s) and its PCIe figure (PCI_BW per
//! Gen3 x16: 24 GB/s Gen4 x16, 48 Gen5 x16), its NVLink figure per link, and the chains' arithmetic.

use super::*;
use crate::topology::Machine;

fn two(machine: &str, nic: &str) -> Comm {
    let text = format!("name: two\nfabric:\n  graph: {{switches: [{{name: S0}}], links: [], hosts: [S0, S0]}}\nlink: {{bandwidth: {nic}}}\nnodes: {{count: 2, machine: {machine}}}\n");
    let m = Machine::from_text(&text, "two.yaml").unwrap();
    let node = |k: usize| m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    Comm::new(&m, &[node(0), node(1)], None).unwrap()
}

fn graphs(c: &Comm) -> (usize, f64, usize, f64, f64) {
    let t = &c.tuning;
    (t.graph_channels, t.bw_intra, t.tree_channels, t.tree_bw_intra, t.tree_bw_inter)
}

#[test]
fn ring_and_tree_graphs_across_nodes_follow_the_nics() {
    // 8 x 400 Gb/s NICs (50 GB/s) behind Gen5 x16 (48): a NIC path carries 48, the first Hopper inter
    // speed; each NIC one channel each way: 8 channels. Chains through 8 GPUs of 18 x 20.6 = 370.8 GB/s
    // NVLink: 7 x 48 = 336 out of each GPU fits. No duplication on Hopper below 50 GB/s with > 4
    // channels. The tree cannot go faster inside: 48 is the highest inter speed.
    assert_eq!(graphs(&two("hgx-h100", "50GB/s")), (8, 48.0, 8, 48.0, 48.0));
    // 8 x 200 Gb/s NICs (25 GB/s, GCP A3 Mega's rate): 24 GB/s per channel, 8 channels; the tree's
    // second pass raises its intra speed through 30, 40, 42, 45 to 48 = twice 24 (7 x 48 fits).
    assert_eq!(graphs(&two("hgx-h100", "25GB/s")), (8, 24.0, 8, 48.0, 24.0));
    // DGX A100 with 25 GB/s NICs behind Gen4 x16 (24): 24, 8 channels (no duplication below 25);
    // the tree's intra speed rises to 30 (7 x 30 = 210 of 12 x 20 = 240 GB/s) but not to 48 (336).
    assert_eq!(graphs(&two("dgx-a100", "25GB/s")), (8, 24.0, 8, 30.0, 24.0));
}

/// The channels NCCL runs collectives on (connect.cc `ncclTopoPostset`): twice the graphs' channels,
/// at most MAXCHANNELS (32 to 2.21.5, 64 in 2.30.7); across Hopper nodes whose ring graph runs above
/// 45 GB/s a channel, twice again while 2.18.5/2.19.3 fit MAXCHANNELS, from 2.20.3 while under 16.
#[test]
fn collectives_run_twice_nccl_graph_channels() {
    use versions::Version::*;
    let with = |mut c: Comm, v: versions::Version| {
        let k = constants::Constants { version: v, ..Default::default() };
        c.set_constants(k).unwrap();
        c.channels
    };
    // The graphs of `ring_and_tree_graphs_across_nodes_follow_the_nics`: 8 channels at 48 GB/s on
    // Hopper: 16 (16 is not under 16), but 32 under 2.18.5 and 2.19.3 (2 x 16 fits 32).
    for (v, n) in [(V2_18, 32), (V2_19, 32), (V2_20, 16), (V2_21, 16), (V2_30, 16)] {
        assert_eq!(with(two("hgx-h100", "50GB/s"), v), n, "{v:?}");
    }
    // 8 at 24 GB/s (A3 Mega's NICs; DGX A100 at 25 GB/s): 16 under every release.
    for v in versions::ALL {
        assert_eq!(with(two("hgx-h100", "25GB/s"), v), 16, "{v:?}");
        assert_eq!(with(two("dgx-a100", "25GB/s"), v), 16, "{v:?}");
    }
    // One node: the search's 12 rings (6 at 40 GB/s duplicated to 12 at 20 on A100), 24 channels.
    let m = Machine::load("dgx-a100").unwrap();
    assert_eq!(Comm::new(&m, &[m.gpus()], None).unwrap().channels, 24);
    // The rule itself: 6 Hopper channels at 48 GB/s double to 12, then to 24 (2.20.3 on); 16 Ampere
    // channels to 32, at MAXCHANNELS before 2.30 (an A100 is never doubled again).
    assert_eq!(tuning::coll_channels(V2_20, 90, 2, 6, 48.0), 24);
    assert_eq!(tuning::coll_channels(V2_20, 90, 2, 6, 24.0), 12);
    assert_eq!(tuning::coll_channels(V2_20, 90, 1, 6, 48.0), 12);
    assert_eq!(tuning::coll_channels(V2_19, 80, 2, 16, 12.0), 32);
    assert_eq!(tuning::coll_channels(V2_19, 80, 2, 24, 12.0), 32);
    assert_eq!(tuning::coll_channels(V2_30, 80, 2, 24, 12.0), 48);
    assert_eq!(tuning::coll_channels(V2_21, 100, 2, 6, 48.0), 12);
    assert_eq!(tuning::coll_channels(V2_30, 100, 2, 6, 48.0), 24);
    // A count given (NCCL_MIN/MAX_NCHANNELS) stays whatever the release.
    let text =
        "name: two\nfabric:\n  graph: {switches: [{name: S0}], links: [], hosts: [S0, S0]}\nlink: {bandwidth: 50GB/s}\nnodes: {count: 2, machine: hgx-h100}\n";
    let two_m = Machine::from_text(text, "two.yaml").unwrap();
    let node = |k: usize| two_m.gpus().into_iter().filter(|&g| two_m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    assert_eq!(with(Comm::new(&two_m, &[node(0), node(1)], Some(24)).unwrap(), V2_18), 24);
}

#[test]
fn nccl_model_picks_tree_where_its_tree_graph_runs_faster_inside_the_node() {
    // A3 Mega's rates, Simple only (Google's NCCL_PROTO): the ring's bus is 8 x 24 = 192 GB/s
    // (algbw x 16/30 = 102.4); the tree's 8 x 48 x 0.92 = 353.3, capped at 8 x perChMaxTreeBws
    // 41.4 = 331.2 (algbw x 0.5 = 165.6): NCCL's model picks the tree at every size.
    let c = two("hgx-h100", "25GB/s");
    let (_, ring) = tuning::model(&c.tuning, Coll::AllReduce, Algo::Ring, Proto::Simple).unwrap();
    let (_, tree) = tuning::model(&c.tuning, Coll::AllReduce, Algo::Tree, Proto::Simple).unwrap();
    assert!((ring - 192.0 * 16.0 / 30.0).abs() < 1e-9 && (tree - 331.2 * 0.5).abs() < 1e-9, "{ring} {tree}");
    for bytes in [1u64 << 20, 1 << 27, 1 << 33] {
        let pick = c.choose(Coll::AllReduce, bytes, &[Algo::Ring, Algo::Tree], &[Proto::Simple]).unwrap();
        assert_eq!(pick.0, Algo::Tree, "{bytes}");
    }
    // DGX A100 at 25 GB/s: the tree's 8 x 30 x 0.92 = 220.8 is capped at 8 x 23.6 = 188.8 (algbw
    // 94.4), under the ring's 102.4: large all-reduces stay on the ring.
    let a = two("dgx-a100", "25GB/s");
    let all = [Algo::Ring, Algo::Tree];
    assert_eq!(a.choose(Coll::AllReduce, 1 << 33, &all, &PROTOS).unwrap().0, Algo::Ring);
}

#[test]
fn a_nic_of_two_ports_is_two_network_devices_to_nccl_search() {
    // OCI BM.GPU4.8 (dgx-a100's layout, each NIC two 100 Gb/s ports: 25 GB/s together): 16 network
    // devices of 12.5 GB/s. Ring: 12 GB/s (the first Ampere inter speed at most 12.5), one channel per
    // port, 16 channels (6 GB/s would give 32 x 6 = 192 too: not more). Tree: 16 chains, each GPU last
    // in two, so 14 x speed leaves a GPU: 15 fits its 240 GB/s (210), 18 does not (252).
    let m = Machine::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/validation/machines/bm-gpu4-8.yaml")).unwrap();
    assert!(m.devices.iter().filter(|d| d.kind == crate::topology::DeviceKind::Nic).all(|d| d.ports == 2));
    let text =
        "name: two\nfabric:\n  graph: {switches: [{name: S0}], links: [], hosts: [S0, S0]}\nlink: {bandwidth: 25GB/s}\nnodes: {count: 2, machine: MACHINE}\n"
            .replace("MACHINE", concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/validation/machines/bm-gpu4-8.yaml"));
    let two = Machine::from_text(&text, "two.yaml").unwrap();
    let node = |k: usize| two.gpus().into_iter().filter(|&g| two.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    let c = Comm::new(&two, &[node(0), node(1)], None).unwrap();
    assert_eq!(graphs(&c), (16, 12.0, 16, 15.0, 12.0));
    // NCCL's model: tree 16 x 15 x 0.92 = 220.8 (under 16 x 23.6), algbw 110.4, against the ring's
    // 16 x 12 x 16/30 = 102.4: the tree takes large all-reduces, as the measured busbw past 200 says.
    let all = [Algo::Ring, Algo::Tree];
    assert_eq!(c.choose(Coll::AllReduce, 1 << 33, &all, &PROTOS).unwrap().0, Algo::Tree);
}

#[test]
fn ports_belong_to_nics_and_are_counted() {
    let bad = |dev: &str| Machine::from_text(&format!("name: h\ndevices:\n  - {dev}\nlinks: []\n"), "h.yaml").unwrap_err().to_string();
    assert!(bad("{name: GPU0, kind: gpu, ports: 2}").starts_with("h.yaml: devices[0].ports: applies to NICs only"));
    assert!(bad("{name: NIC0, kind: nic, ports: 0}").starts_with("h.yaml: devices[0].ports: 0 is not in 1..=16"));
    assert!(bad("{name: GPU0, kind: gpu, port_bandwidth: 400Gb/s}").starts_with("h.yaml: devices[0].port_bandwidth: applies to NICs only"));
    assert!(bad("{name: NIC0, kind: nic, port_bandwidth: 0Gb/s}").contains("port_bandwidth"));
}

/// A tree's sends between nodes keep NCCL_STEPS (8) chunks in flight per connection, sharing
/// the channel's rate: every send of one connection (one channel's sender and receiver across the
/// nodes) is in one rate group, its first send's; sends inside a node are chained as before (no
/// group). A call's first loops are single chunks (`lower::loops` keeps KEEP = 4 of NCCL's chunk),
/// so the first four sends of a connection wait for no earlier send of it; its later pieces each
/// wait for the one piece holding the chunk 8 before their own first, through that piece's word
/// back from the receiver (round 19, `Dag::slot_freed`).
#[test]
fn a_trees_network_sends_are_in_flight_in_one_rate_group_per_connection() {
    let a = two("dgx-a100", "25GB/s");
    let call = a.call(Coll::AllReduce, Algo::Tree, Proto::Simple, 1 << 28, 0);
    let (t, ch) = lower::lower(&call);
    let node = |d: usize| call.devices.iter().position(|&x| x == d).unwrap() / call.ppn;
    let mut conns: std::collections::BTreeMap<(u32, usize, usize), Vec<usize>> = Default::default();
    // A slot's 1-byte word back from the receiver (`Dag::slot_freed`) is no send of the connection.
    let word = |i: usize| t[i].size <= 64;
    for (i, x) in t.iter().enumerate().filter(|&(i, _)| !word(i)) {
        if node(x.src) == node(x.dst) {
            assert_eq!(x.rate_group, None, "{x:?}");
        } else {
            conns.entry((ch[i], x.src, x.dst)).or_default().push(i);
        }
    }
    assert_eq!(conns.len(), 2 * call.rings.len(), "one connection up and one down per channel");
    for sends in conns.values() {
        assert!(sends.len() > 4 + 2, "{}", sends.len());
        for &i in sends {
            assert_eq!(t[i].rate_group, Some(sends[0]));
        }
        // A send waits for the one NCCL_STEPS chunks before it through that send's word back.
        let own = |i: usize| t[i].after.iter().filter(|&&a| sends.contains(&a) || (word(a) && t[a].after.iter().any(|b| sends.contains(b)))).count();
        assert!(sends[..4].iter().all(|&i| own(i) == 0));
        assert!(sends[sends.len() - 4..].iter().all(|&i| own(i) == 1));
    }
}

/// Round 21: a network slot reopens once the receiving kernel has forwarded the chunk it holds
/// (`Dag::consumes`): each word back waits for the chunk's arrival and for the receiver's own
/// sends of that loop which carry it on (the tree's send up or the root's sends down, NVLS-tree's
/// head's store and sends down), every one leaving the receiving GPU. A ring keeps round 19's
/// slot (its step of the previous loop, not restated as NCCL's NCCL_STEPS slots) and its arrival.
#[test]
fn a_network_slot_waits_for_the_receivers_forward_of_its_chunk() {
    let c = two("hgx-h100", "50GB/s");
    let word = |t: &[crate::workload::Transfer], i: usize| t[i].size == 1;
    for (algo, proto, bytes) in [
        (Algo::Tree, Proto::Simple, 256u64 << 20),
        (Algo::Tree, Proto::Ll128, 256 << 20),
        (Algo::NvlsTree, Proto::Simple, 1 << 30),
        (Algo::Ring, Proto::Simple, 1 << 30),
    ] {
        let (t, _) = lower::lower(&c.call(Coll::AllReduce, algo, proto, bytes, 0));
        let node = |d: usize| c.m.devices[d].name.starts_with("n0.");
        let (mut with, mut without) = (0, 0);
        for w in (0..t.len()).filter(|&i| word(&t, i)) {
            let s = t[w].after[0];
            assert!(!word(&t, s) && node(t[s].src) != node(t[s].dst), "{algo:?}: a word follows a chunk between nodes");
            let forwards = &t[w].after[1..];
            assert!(forwards.iter().all(|&y| t[y].src == t[s].dst && y > s), "{algo:?}: {:?}", t[w]);
            if forwards.is_empty() {
                without += 1;
            } else {
                with += 1;
            }
        }
        if algo == Algo::Ring {
            assert!(with == 0 && without > 0, "{algo:?}: {with} words wait for a forward");
        } else {
            assert!(with > 0 && without == 0, "{algo:?}: every chunk a tree head receives is forwarded ({without} words are not)");
        }
    }
}

#[test]
fn a_tree_simple_call_caps_each_transfer_at_nccl_per_channel_tree_figure() {
    // Hopper across two nodes: perChMaxTreeBws 41.4 GB/s of bus bandwidth per channel; a tree's
    // up and down each move the channel's share at its algorithm bandwidth, half of it: 20.7 GB/s,
    // Simple's wire bytes being its data. A transfer standing for k merged channels moves k times that.
    let c = two("hgx-h100", "25GB/s");
    let call = c.call(Coll::AllReduce, Algo::Tree, Proto::Simple, 1 << 28, 0).merged();
    let (t, _) = lower::lower(&call);
    assert!(!t.is_empty());
    // Data only: a slot's 1-byte word back (`Dag::slot_freed`) moves outside the channel's rate.
    for x in t.iter().filter(|x| x.size > 64) {
        assert_eq!(x.max_rate, Some(20.7e9 * call.copies as f64), "{x:?}");
    }
    // Ampere: 23.6 / 2. LL128's: the least of 23.6 x 120/128 and perChMaxTreeLL128Bws 20, halved:
    // 10 GB/s of data, 10 x 128/120 of LL128's wire bytes between nodes and 10 x 9/7 between the
    // GPUs of a node (`TREE_LL128_NODE_SHARE`), each over LL128's share of the links
    // (`nccl_eff_ll128`): the cap stays on data. Ring Simple and ring LL128 carry no cap (no
    // per-channel figure for the first; the second's never binds at NCCL's channel counts and
    // cost time, tuning::channel_rate).
    let a = two("dgx-a100", "25GB/s");
    let (t, _) = lower::lower(&a.call(Coll::AllReduce, Algo::Tree, Proto::Simple, 1 << 28, 0));
    assert!(t.iter().filter(|x| x.size > 64).all(|x| x.max_rate == Some(11.8e9)));
    let (t, _) = lower::lower(&a.call(Coll::AllReduce, Algo::Tree, Proto::Ll128, 1 << 24, 0));
    // (The wire ratio is read off a GiB of data: exact to a byte in 2^30.)
    let on = |d: usize| a.m.devices[d].name.starts_with("n0.");
    let eff = constants::Constants::default().efficiency[Proto::Ll128 as usize];
    for x in t.iter().filter(|x| x.size > 64) {
        let wire = if on(x.src) == on(x.dst) { 9.0 / 7.0 } else { 128.0 / 120.0 } / eff;
        assert!((x.max_rate.unwrap() - 10e9 * wire).abs() < 1e-6 * 10e9, "{:?}", x.max_rate);
    }
    for (coll, proto) in [(Coll::AllReduce, Proto::Simple), (Coll::AllReduce, Proto::Ll128), (Coll::Broadcast, Proto::Ll128)] {
        let (t, _) = lower::lower(&a.call(coll, Algo::Ring, proto, 1 << 24, 0));
        assert!(t.iter().all(|x| x.max_rate.is_none()), "{coll:?} {proto:?}");
    }
}

#[test]
fn a_tree_ll128_chunk_shrinks_for_small_calls_as_nccl_does() {
    // LL128's chunk: 614400 B a step, 15 of 16 lines data: 576000 B. 16 channels on two nodes of 8:
    // nsteps = 1 + log2 2 + 0.8 = 2.8, so at least 22.4 chunks a channel down to 128 KiB, then 5.6
    // down to 32 KiB (whole chunks counted). 1 MiB: 65536 B a channel is no whole chunk of
    // 576000, 288000, 144000 or 72000 (stop: not above 128 KiB), nor 5.6 of 72000 or 36000: 18000.
    // 8 MiB: 524288 B a channel, 3 of 144000 (halve), 7 of 72000 (enough): 72000. 128 MiB:
    // 14 of 576000, 29 of 288000: 288000.
    let c = |bytes| lower::tree_ll128_chunk(576000, bytes, 16, 2, 8);
    assert_eq!((c(1 << 20), c(1 << 23), c(1 << 27)), (18000, 72000, 288000));
}

#[test]
fn the_net_plugins_latency_enters_each_network_step_of_nccls_model() {
    // tuning.cc (2.12 on): a network step's latency is NET's hardware latency plus the net
    // plugin's reported latency L (the graph's latencyInter), plus L again for Simple. On two
    // nodes a ring all-reduce crosses the network 2 (nodes - 1) = 2 times; a tree's up and down
    // each once (log2 2 = 1); NVLS-tree likewise. So with L = 75 us (aws-ofi-nccl on p5) the
    // latency grows by 2 x 75 for LL and LL128, 2 x 150 for Simple, whatever the algorithm.
    let mut c = two("hgx-h100", "50GB/s");
    let before: Vec<Option<(f64, f64)>> =
        [Algo::Ring, Algo::Tree, Algo::NvlsTree].iter().flat_map(|&a| PROTOS.map(|p| tuning::model(&c.tuning, Coll::AllReduce, a, p))).collect();
    let constants = constants::split(&[("nccl_net_latency".into(), "75us".into())]).unwrap().0;
    c.set_constants(constants).unwrap();
    let after: Vec<Option<(f64, f64)>> =
        [Algo::Ring, Algo::Tree, Algo::NvlsTree].iter().flat_map(|&a| PROTOS.map(|p| tuning::model(&c.tuning, Coll::AllReduce, a, p))).collect();
    let mut checked = 0;
    for (k, (b, a)) in before.iter().zip(&after).enumerate() {
        let proto = PROTOS[k % 3];
        match (b, a) {
            (Some(b), Some(a)) => {
                let extra = if proto == Proto::Simple { 300.0 } else { 150.0 };
                assert!((a.0 - b.0 - extra).abs() < 1e-9, "{k}: {} -> {}", b.0, a.0);
                assert_eq!(a.1, b.1, "bandwidth unchanged");
                checked += 1;
            }
            (None, None) => {}
            _ => panic!("{k}: the choice's availability changed"),
        }
    }
    // Ring LL, LL128, Simple; tree LL, LL128, Simple; NVLS-tree Simple.
    assert_eq!(checked, 7);
    // On one node there is no network step: nothing changes.
    let m = Machine::load("hgx-h100").unwrap();
    let mut one = Comm::new(&m, &[m.gpus()], None).unwrap();
    let plain = tuning::model(&one.tuning, Coll::AllReduce, Algo::Ring, Proto::Simple);
    one.set_constants(constants).unwrap();
    assert_eq!(tuning::model(&one.tuning, Coll::AllReduce, Algo::Ring, Proto::Simple), plain);
}

/// LL's ceiling binds a tree at its root's connections only (`lower::tree`); a send between two
/// GPUs of a node elsewhere in the chain runs uncapped, whatever the LL128 node share does to a
/// capped send's rate.
#[test]
fn a_tree_ll_call_caps_only_the_roots_connections() {
    let a = two("dgx-a100", "25GB/s");
    let (t, _) = lower::lower(&a.call(Coll::AllReduce, Algo::Tree, Proto::Ll, 1 << 20, 0));
    let on = |d: usize| a.m.devices[d].name.starts_with("n0.");
    assert!(t.iter().any(|x| x.max_rate.is_some()), "the root's connections carry the ceiling");
    assert!(t.iter().any(|x| on(x.src) == on(x.dst) && x.max_rate.is_none()), "a chain's other sends do not");
}

#[test]
fn a_tree_simple_chunk_shrinks_with_the_trees_depth_as_nccl_2_19_does() {
    // 2.18.5/2.19.3 enqueue.cc: a step of 1 MiB (NCCL_BUFFSIZE 8 MiB), 8 channels, 2 nodes of 8:
    // depth 8 - 1 + log2 2 = 8. Halve while under 64 whole chunks a channel (down to 128 KiB),
    // then under 32 (down to 64 KiB), then under 8 (down to 32 KiB). 1 MiB: 131072 B a channel,
    // 1 chunk of 128 KiB, 2 of 64 KiB, 4 of 32 KiB: 32768. 4 MiB: 4 of 128 KiB, 8 of 64 KiB (not
    // under 8): 65536. 64 MiB: 64 of 128 KiB: 131072. 1 GiB: 128 of 1 MiB: a whole step.
    let c = |bytes| lower::tree_simple_chunk(1 << 20, bytes, 8, 2, 8);
    assert_eq!((c(1 << 20), c(1 << 22), c(1 << 26), c(1 << 30)), (32768, 65536, 131072, 1 << 20));
    // The releases that have the rule: 2.18.5 and 2.19.3; 2.20.3's computeCollChunkInfo has none.
    let mut comm = two("dgx-a100", "25GB/s");
    for (v, shrinks) in [("2.18", true), ("2.19", true), ("2.20", false), ("2.21", false), ("2.30", false)] {
        comm.set_constants(constants::split(&[("nccl_version".into(), v.into())]).unwrap().0).unwrap();
        assert_eq!(comm.call(Coll::AllReduce, Algo::Tree, Proto::Simple, 1 << 22, 0).tree_depth_chunk, shrinks, "{v}");
    }
}

/// Blackwell's search speeds by release (search.cc `sm100SpeedArrayInter`, `Version::blackwell_speeds`):
/// two hgx-b200 nodes, 8 x 400 Gb/s NICs behind Gen5 x16 (48 GB/s a NIC path). The ring graph is
/// 8 channels at 48 under every list (48 is each list's first speed a NIC path carries, one channel a
/// NIC, no duplication below 50 with more than 4 channels, no faster speed fits a NIC). The tree's
/// second pass raises the intra speed through the list's speeds above 48 while the chains fit (7 x s
/// of a GPU's 18 x 40.1 = 721.8 GB/s NVLink) and it is below twice 48: 2.25.1 and 2.26 list none
/// (48); 2.27.7 and 2.28 list 96 (7 x 96 = 672 fits: 96); 2.29.7 80 then 96; 2.30.7 80, 86, 96.
#[test]
fn blackwell_tree_graph_follows_the_release_speeds() {
    let c = two("hgx-b200", "50GB/s");
    assert_eq!((c.tuning.graph_channels, c.tuning.bw_intra), (8, 48.0));
    let by_release: Vec<(f64, f64)> = versions::ALL.iter().map(|&v| c.tree_graphs[v as usize]).collect();
    let v = |v: versions::Version| by_release[v as usize];
    use versions::Version::*;
    assert_eq!((v(V2_25), v(V2_26)), ((48.0, 48.0), (48.0, 48.0)));
    for r in [V2_27, V2_28, V2_29, V2_30] {
        assert_eq!(v(r), (96.0, 48.0), "{r:?}");
    }
    // `set_constants` takes the running release's: 2.26's tree/Simple all-reduce bus bandwidth is
    // 8 x 48 x 0.92 = 353.28 GB/s (under perChMaxTreeBws' 2.26 Blackwell 8 x 82.8); 2.30's 8 x 96 x
    // 0.92 is capped at 8 x 42.8 = 342.4; algbw x 0.5.
    let mut c = c;
    let k = |v| constants::Constants { version: v, ..Default::default() };
    c.set_constants(k(V2_26)).unwrap();
    assert_eq!((c.tuning.tree_bw_intra, c.tuning.tree_bw_inter), (48.0, 48.0));
    let (_, bw26) = tuning::model(&c.tuning, Coll::AllReduce, Algo::Tree, Proto::Simple).unwrap();
    c.set_constants(k(V2_30)).unwrap();
    assert_eq!(c.tuning.tree_bw_intra, 96.0);
    let (_, bw30) = tuning::model(&c.tuning, Coll::AllReduce, Algo::Tree, Proto::Simple).unwrap();
    assert!((bw26 - 0.5 * 8.0 * 48.0 * 0.92).abs() < 1e-9 && (bw30 - 0.5 * 8.0 * 42.8).abs() < 1e-9, "{bw26} {bw30}");
}

/// A release whose own ring search finds another graph than 2.30.7's is refused, not run on
/// 2.30.7's rings. Two hgx-b200 nodes with Gen6 x16 PCIe and 800 Gb/s NICs: a NIC path carries
/// contend's Gen6 x16 figure, 121.0 / 15.75 x 12 = 92.17 GB/s; a GPU's NVLink 18 x 40.1 = 721.8.
/// 2.30.7 (inter list 96, 86, 80, 48, 45.1, ...): 86 and 80 fit one channel a NIC (8 x 86 = 688),
/// 48 one, 45.1 two (16 chains x 45.1 = 721.6 fit a GPU): 16 at 45.1, which nothing down to 24
/// beats (30: 24 x 30 = 720); not duplicated (below 50 with more than 4 channels); no faster speed
/// fits 16. 2.29 (96, 80, 48, 45.1) and 2.27-2.28 (96, 48, 45.1) find the same. 2.25.1 and 2.26's
/// list (48, 45, 42, ...) has no 45.1: 16 at 45 (720), so they are refused.
#[test]
fn a_release_whose_search_differs_is_refused() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/presets/hgx-b200.yaml")).unwrap();
    let node = text.replace("gen: 5", "gen: 6").replace("port_bandwidth: 400Gb/s", "port_bandwidth: 800Gb/s");
    let dir = std::env::temp_dir().join(format!("contend-releases-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("b200-gen6.yaml");
    std::fs::write(&path, node).unwrap();
    let mut c = two(path.to_str().unwrap(), "100GB/s");
    assert_eq!(c.ring_graph, (16, 45.1));
    use versions::Version::*;
    let given = |v| constants::Constants { version: v, ..Default::default() };
    for v in [V2_27, V2_28, V2_29, V2_30] {
        c.set_constants(given(v)).unwrap();
    }
    for v in [V2_25, V2_26] {
        let e = c.set_constants(given(v)).unwrap_err().to_string();
        assert!(e.contains("nccl_version") && e.contains(v.tag()) && e.contains("give 2.30") && !e.contains('\n'), "{e}");
    }
    // hgx-b200 itself (48 GB/s NIC paths): every release that knows Blackwell finds 2.30.7's graph.
    let mut b = two("hgx-b200", "50GB/s");
    for v in [V2_25, V2_26, V2_27, V2_28, V2_29, V2_30] {
        b.set_constants(given(v)).unwrap();
    }
    std::fs::remove_dir_all(&dir).ok();
}
