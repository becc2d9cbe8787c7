use super::*;
use crate::topology::{LinkKind, Machine};

fn load(text: &str) -> Result<Machine> {
    Machine::from_text(text, "c.yaml")
}

fn count(m: &Machine, prefix: &str) -> usize {
    m.devices.iter().filter(|d| d.kind == DeviceKind::Switch && d.name.starts_with(prefix)).count()
}

#[test]
fn seed_003_fat_tree_with_eight_pods() {
    let m = load("name: ft\nfabric:\n  fat_tree: {radix: 32, pods: 8}\nlink: {bandwidth: 11.9GB/s, latency: 100ns}\nnodes: {gpus: 1}\n").unwrap();
    assert_eq!((count(&m, "leaf"), count(&m, "agg"), count(&m, "core")), (128, 128, 256));
    assert_eq!(m.gpus().len(), 2048);
    assert!(m.device("n2047.GPU0").is_some() && m.device("n2048.GPU0").is_none());
    // Every switch uses at most its 32 ports (links counted with their multiplicity).
    let mut ports = vec![0u32; m.devices.len()];
    for (l, spec) in m.links.iter().zip(&m.spec.links) {
        let k = spec.count.unwrap_or(1);
        ports[l.a] += k;
        ports[l.b] += k;
    }
    for (d, &p) in m.devices.iter().zip(&ports) {
        if d.kind == DeviceKind::Switch {
            assert!(p <= 32, "{} uses {p} ports", d.name);
        }
    }
    assert_eq!(ports[m.device("leaf0").unwrap()], 32);
    assert_eq!(ports[m.device("core0").unwrap()], 8);
}

/// Every NIC takes a leaf port: with 1, 2 or 4 NICs a node, a radix-8 tree's leaves (4 ports
/// left after their 4 aggregate links) hold 4, 2 or 1 nodes, so no switch uses more than its 8
/// ports; a nodes_per_leaf that would is refused by name.
#[test]
fn each_nic_takes_a_leaf_port() {
    for nics in [1u32, 2, 4] {
        let text = format!("name: ft\nfabric:\n  fat_tree: {{radix: 8, pods: 2}}\nlink: {{bandwidth: 10GB/s}}\nnodes: {{gpus: 4, nics: {nics}}}\n");
        let m = load(&text).unwrap();
        assert_eq!(m.gpus().len() as u32, count(&m, "leaf") as u32 * (4 / nics) * 4, "{nics} NICs");
        let (nodes, gpus) = serde_yaml::from_str::<ClusterSpec>(&text).unwrap().size().unwrap();
        assert_eq!((nodes * gpus) as usize, m.gpus().len(), "{nics} NICs: listings count what is built");
        let mut ports = vec![0u32; m.devices.len()];
        for (l, spec) in m.links.iter().zip(&m.spec.links) {
            ports[l.a] += spec.count.unwrap_or(1);
            ports[l.b] += spec.count.unwrap_or(1);
        }
        for (d, &p) in m.devices.iter().zip(&ports) {
            assert!(d.kind != DeviceKind::Switch || p <= 8, "{nics} NICs: {} uses {p} ports", d.name);
        }
        assert_eq!(ports[m.device("leaf0").unwrap()], 8, "{nics} NICs");
    }
    let e = load("name: ft\nfabric:\n  fat_tree: {radix: 8, pods: 2, nodes_per_leaf: 4}\nlink: {bandwidth: 10GB/s}\nnodes: {gpus: 2, nics: 2}\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("fabric.fat_tree.nodes_per_leaf") && e.contains("give 1 to 2") && e.contains("2 NICs a node"), "{e}");
}

/// Listings count a cluster's GPUs from its description; the count must match the build.
#[test]
fn sizes_without_building_match_the_build() {
    for name in crate::topology::preset_names() {
        let text = crate::topology::preset_text(name).unwrap();
        // Machine nodes (superpod-h100-su) need their machine to count: size() says None.
        if let Some((nodes, gpus)) = serde_yaml::from_str::<ClusterSpec>(text).ok().and_then(|c| c.size()) {
            assert_eq!((nodes * gpus) as usize, Machine::load(name).unwrap().gpus().len(), "{name}");
        }
    }
}

#[test]
fn one_pod_has_no_core_and_fat_nodes() {
    let m = load("name: ft\nfabric:\n  fat_tree: {radix: 32, pods: 1}\nlink: {bandwidth: 11.9GB/s}\nnodes: {gpus: 8}\n").unwrap();
    assert_eq!((count(&m, "leaf"), count(&m, "agg"), count(&m, "core")), (16, 16, 0));
    assert_eq!(m.gpus().len(), 2048);
    // Inside a node: all-to-all at twice the network link.
    let g = |n: &str| m.device(n).unwrap();
    let l = m.links.iter().find(|l| (l.a, l.b) == (g("n3.GPU0"), g("n3.GPU5"))).unwrap();
    assert_eq!(l.bandwidth, 2.0 * 11.9e9);
}

#[test]
fn quartz_has_a_half_pod_and_double_arcs() {
    let text = "name: q\nfabric:\n  fat_tree: {radix: 48, pods: 11, leaves_per_pod: 8, aggregates_per_pod: 8, leaves: 84, nodes_per_leaf: 32, arc_links: 2, uplinks_per_aggregate: 16, cores: 32}\nlink: {bandwidth: 11.9GB/s}\nnodes: {gpus: 1}\n";
    let m = load(text).unwrap();
    assert_eq!((count(&m, "leaf"), count(&m, "agg"), count(&m, "core")), (84, 84, 32));
    assert_eq!(m.gpus().len(), 2688);
}

#[test]
fn seed_003_dragonfly_group_counts() {
    for (groups, gpus, pair_links) in [(16u32, 1u32, (8, 9)), (2, 8, (128, 128))] {
        let text = format!("name: df\nfabric:\n  dragonfly: {{p: 8, a: 16, h: 8, groups: {groups}}}\nlink: {{bandwidth: 11.9GB/s}}\nnodes: {{gpus: {gpus}}}\n");
        let m = load(&text).unwrap();
        assert_eq!(m.gpus().len(), 2048);
        assert_eq!(count(&m, "g"), (groups * 16) as usize);
        let summary = m.network.summary.join(" ");
        assert!(summary.contains(&format!("{} to {} global links per group pair", pair_links.0, pair_links.1)), "{summary}");
    }
}

#[test]
fn mistakes_name_the_field() {
    let cases = [
        ("fabric:\n  dragonfly: {p: 8, a: 2, h: 1, groups: 9}\nlink: {bandwidth: 10GB/s}\nnodes: {}\n", "fabric.dragonfly.groups"),
        ("fabric:\n  fat_tree: {radix: 4, pods: 2, leaves_per_pod: 2, aggregates_per_pod: 4}\nlink: {bandwidth: 10GB/s}\nnodes: {}\n", "fabric.fat_tree.radix"),
        ("fabric:\n  fat_tree: {radix: 8, pods: 2}\nlink: {bandwidth: 10}\nnodes: {}\n", "link.bandwidth"),
        ("fabric:\n  fat_tree: {radix: 8, pods: 2}\nlink: {bandwidth: 10GB/s}\nnodes: {count: 100}\n", "nodes.count"),
        ("fabric:\n  graph: {switches: [{name: a}, {name: b}], links: [], hosts: [a, b]}\nlink: {bandwidth: 10GB/s}\nnodes: {}\n", "disconnected"),
        ("fabric:\n  graph: {switches: [{name: a}], links: [{a: a, b: z}], hosts: [a]}\nlink: {bandwidth: 10GB/s}\nnodes: {}\n", "fabric.graph.links[0].b"),
        ("fabric:\n  fat_tree: {radix: 8, pods: 2}\nlink: {bandwidth: 10GB/s}\nnodes: {machine: cs-storm-socket}\n", "has no nic"),
        ("fabric:\n  fat_tree: {radix: 8, pods: 2}\nlink: {bandwidth: 10GB/s}\nnodes: {gpus: 1, nics: 8}\n", "nodes.nics"),
    ];
    for (body, needle) in cases {
        let e = load(&format!("name: x\n{body}")).unwrap_err().to_string();
        assert!(e.starts_with("c.yaml: ") && e.contains(needle) && !e.contains('\n'), "{needle}: {e}");
    }
}

#[test]
fn machine_nodes_reach_the_network_through_their_nics() {
    let m = load("name: ft\nfabric:\n  fat_tree: {radix: 8, pods: 2}\nlink: {bandwidth: 12.5GB/s}\nnodes: {machine: typical-8gpu, count: 4}\n").unwrap();
    assert_eq!(m.gpus().len(), 32);
    assert!(m.device("n3.IB0").is_some() && m.device("n3.GPU7").is_some());
}

/// A NIC runs at the rate both ends of its cable support: its ports' line rate where the fabric's
/// link is faster, the link's where it is slower; a `nodes.nic_bandwidth` is taken as written.
#[test]
fn a_machine_nodes_nic_runs_at_the_lower_of_its_ports_and_the_link() {
    let nic_link = |m: &Machine, nic: &str| {
        let d = m.device(nic).unwrap();
        let l = m.links.iter().find(|l| l.kind == LinkKind::Network && (l.a == d || l.b == d)).unwrap();
        l.bandwidth
    };
    let graph = "fabric:\n  graph: {switches: [{name: S0}], links: [], hosts: [S0, S0]}\n";
    // hgx-h100: eight ConnectX-7 ports of 400 Gb/s = 50 GB/s (its data sheet).
    let fast = load(&format!("name: c\n{graph}link: {{bandwidth: 100GB/s}}\nnodes: {{machine: hgx-h100}}\n")).unwrap();
    assert_eq!(nic_link(&fast, "n1.NIC7"), 50e9);
    let slow = load(&format!("name: c\n{graph}link: {{bandwidth: 25GB/s}}\nnodes: {{machine: hgx-h100}}\n")).unwrap();
    assert_eq!(nic_link(&slow, "n0.NIC0"), 25e9);
    let stated = load(&format!("name: c\n{graph}link: {{bandwidth: 100GB/s}}\nnodes: {{machine: hgx-h100, nic_bandwidth: 80GB/s}}\n")).unwrap();
    assert_eq!(nic_link(&stated, "n0.NIC3"), 80e9);
    // A machine whose NICs give no rate takes the link's.
    let file = std::env::temp_dir().join(format!("contend-bare-nic-{}.yaml", std::process::id()));
    std::fs::write(
        &file,
        "name: bare\ndevices:\n  - {name: GPU0, kind: gpu}\n  - {name: NIC0, kind: nic}\nlinks:\n  - {a: GPU0, b: NIC0, kind: pcie, gen: 4, lanes: 16}\n",
    )
    .unwrap();
    let bare = load(&format!("name: c\n{graph}link: {{bandwidth: 100GB/s}}\nnodes: {{machine: \"{}\"}}\n", file.display()));
    std::fs::remove_file(&file).unwrap();
    assert_eq!(nic_link(&bare.unwrap(), "n0.NIC0"), 100e9);
    // A scenario's bandwidth_scale multiplies every network link and NIC: at 2x a 50 GB/s link
    // and a 50 GB/s NIC become 100 GB/s (the NIC's own rate held it at 50: a bandwidth study of
    // machine nodes came out flat above 1x), at x/2 25.
    let scaled = |factor: f64| {
        let mut c: ClusterSpec = serde_yaml::from_str(&format!("name: c\n{graph}link: {{bandwidth: 50GB/s}}\nnodes: {{machine: hgx-h100}}\n")).unwrap();
        c.scale(factor);
        Machine::from_spec(build(&c, "c.yaml").unwrap(), "c.yaml").unwrap()
    };
    assert_eq!(nic_link(&scaled(2.0), "n1.NIC5"), 100e9);
    assert_eq!(nic_link(&scaled(0.5), "n0.NIC0"), 25e9);
}

/// Rail-optimised: NIC k of every node on rail switch k (the superpod preset: 8 rails of 32
/// hgx-h100 nodes, 4 spines); a graph host given as a list wires the node's NICs in turn.
#[test]
fn rails_wire_nic_k_of_every_node_to_switch_k() {
    let m = Machine::load("superpod-h100-su").unwrap();
    assert_eq!(m.gpus().len(), 256);
    let linked = |a: &str, b: &str| {
        let (x, y) = (m.device(a).unwrap(), m.device(b).unwrap());
        m.links.iter().any(|l| (l.a == x && l.b == y) || (l.a == y && l.b == x))
    };
    for node in [0, 17, 31] {
        for k in 0..8 {
            assert!(linked(&format!("n{node}.NIC{k}"), &format!("R{k}")), "n{node}.NIC{k}");
            assert!(!linked(&format!("n{node}.NIC{k}"), &format!("R{}", (k + 1) % 8)));
        }
    }
    // A plain node with more NICs than rails listed takes them in turn; a list naming no switch is refused.
    let text = "name: r\nfabric:\n  graph: {switches: [{name: A}, {name: B}], links: [{a: A, b: B}], hosts: [[A, B], [A, B]]}\nlink: {bandwidth: 10GB/s}\nnodes: {gpus: 4, nics: 4}\n";
    let r = load(text).unwrap();
    let linked = |a: &str, b: &str| {
        let (x, y) = (r.device(a).unwrap(), r.device(b).unwrap());
        r.links.iter().any(|l| (l.a == x && l.b == y) || (l.a == y && l.b == x))
    };
    assert!(linked("n1.NIC2", "A") && linked("n1.NIC3", "B") && !linked("n1.NIC3", "A"));
    let e = load(&text.replace("[A, B], [A, B]", "[A, B], [A, C]")).unwrap_err().to_string();
    assert!(e.contains("fabric.graph.hosts[1]") && e.contains("\"C\""), "{e}");
}

/// Tester's R8: a rail list longer than the node's NICs leaves a rail with none (refused, naming
/// the list and the rails left over); a shorter one wraps as the schema says, and the cluster's
/// summary says which NIC shares which switch. R9: a cluster whose `fabric` is misspelt is read
/// as a cluster, and the mistake names the misspelt key and the one meant.
#[test]
fn rail_lists_against_the_nics_and_a_misspelt_fabric() {
    let rails = |n: usize| (0..n).map(|k| format!("R{k}")).collect::<Vec<_>>();
    let text = |listed: usize, nics: usize| {
        let switches: Vec<String> = rails(8).iter().map(|r| format!("{{name: {r}}}")).chain(["{name: S0}".to_string()]).collect();
        let links: Vec<String> = rails(8).iter().map(|r| format!("{{a: {r}, b: S0}}")).collect();
        let list = format!("[{}]", rails(listed).join(", "));
        format!(
            "name: r\nfabric:\n  graph: {{switches: [{}], links: [{}], hosts: [[R0, R1, R2, R3, R4, R5, R6, R7], {list}]}}\nlink: {{bandwidth: 10GB/s}}\nnodes: {{gpus: 8, nics: {nics}}}\n",
            switches.join(", "),
            links.join(", ")
        )
    };
    let e = load(&text(8, 7).replace("[R0, R1, R2, R3, R4, R5, R6, R7], [", "[R0, R1, R2, R3, R4, R5, R6], [")).unwrap_err().to_string();
    assert!(
        e.contains("fabric.graph.hosts[1]") && e.contains("8 switches for the node's 7 NIC(s)") && e.contains("R7 would take none") && !e.contains('\n'),
        "{e}"
    );
    let m = load(&text(7, 8)).unwrap();
    let summary = m.network.summary.join("\n");
    assert!(summary.contains("fabric.graph.hosts[1]: 7 switches for 8 NICs: NIC7 shares R0 with NIC0"), "{summary}");
    assert!(!load(&text(8, 8)).unwrap().network.summary.iter().any(|l| l.contains("shares")));
    let e = load(&text(8, 8).replace("fabric:", "fabirc:")).unwrap_err().to_string();
    assert!(e.contains("fabirc") && e.contains("fabric") && !e.contains("links"), "{e}");
}

mod traffic {
    use crate::api;
    use crate::report::Detail;
    use crate::topology::Machine;
    use crate::workload::WorkloadSpec;

    fn run(machine: &str, transfers: &str) -> crate::report::Report {
        run_with(machine, transfers, &[])
    }

    fn run_with(machine: &str, transfers: &str, params: &[(String, String)]) -> crate::report::Report {
        let m = Machine::from_text(machine, "c.yaml").unwrap();
        let w = WorkloadSpec::from_text(transfers, "t.yaml").unwrap();
        api::simulate(&m, &w, "t.yaml", Some("maxmin"), params, Detail::default()).unwrap()
    }

    const FT: &str = "name: ft\nfabric:\n  fat_tree: {radix: 8, pods: 2}\nlink: {bandwidth: 10GB/s, latency: 100ns, router_delay: 50ns}\nnodes: {gpus: 1}\nnetwork: {routing: ROUTING, nic_scheduling: NIC}\n";

    fn ft(routing: &str, nic: &str) -> String {
        FT.replace("ROUTING", routing).replace("NIC", nic)
    }

    #[test]
    fn a_lone_message_pays_its_hops_and_the_bottleneck() {
        // n0 -> n31: NIC, leaf, aggregate, core, aggregate, leaf, NIC: 6 wires of 100 ns and 5
        // switches crossed at 50 ns each (as CODES, SST/Merlin and BookSim charge a router per
        // traversal), then 100 MB at 10 GB/s (the node's links run at 20 GB/s).
        let r = run(&ft("ecmp", "rr"), "transfers:\n  - {src: n0.GPU0, dst: n31.GPU0, size: 100MB}\n");
        let want = 6.0 * 100e-9 + 5.0 * 50e-9 + 100e6 / 10e9;
        assert!((r.transfers.finish_s[0] - want).abs() < 1e-12, "{} vs {want}", r.transfers.finish_s[0]);
    }

    /// Every message between NICs pays one router delay per switch it crosses, under both models:
    /// under one leaf (2 wires, 1 switch), across a pod (4 wires, 3 switches), across pods (6, 5);
    /// on a dragonfly under one router (2, 1) and between groups by minimal routing (local,
    /// global, local: 5 wires, 4 routers). maxmin: the wires, the delays and 8 B at 10 GB/s;
    /// `packet` also serialises the packet per hop, so there the delays are what a zero delay
    /// takes away.
    #[test]
    fn a_message_pays_one_router_delay_per_switch_it_crosses() {
        let df = "name: df\nfabric:\n  dragonfly: {p: 2, a: 4, h: 2, groups: 5}\n\
                  link: {bandwidth: 10GB/s, latency: 100ns, router_delay: 50ns}\nnodes: {gpus: 1}\nnetwork: {routing: minimal}\n";
        let cases =
            [(ft("ecmp", "rr"), 1, 2, 1), (ft("ecmp", "rr"), 8, 4, 3), (ft("ecmp", "rr"), 31, 6, 5), (df.to_string(), 1, 2, 1), (df.to_string(), 39, 5, 4)];
        for (machine, dst, wires, switches) in cases {
            let t = format!("transfers:\n  - {{src: n0.GPU0, dst: n{dst}.GPU0, size: 8B}}\n");
            let w = WorkloadSpec::from_text(&t, "t.yaml").unwrap();
            let finish = |text: &str, model: &str| {
                let m = Machine::from_text(text, "c.yaml").unwrap();
                api::simulate(&m, &w, "t.yaml", Some(model), &[], Detail::default()).unwrap().transfers.finish_s[0]
            };
            let want = wires as f64 * 100e-9 + switches as f64 * 50e-9 + 8.0 / 10e9;
            let got = finish(&machine, "maxmin");
            assert!((got - want).abs() < 1e-12, "maxmin n0 -> n{dst}: {got} vs {want} ({wires} wires, {switches} switches)");
            let delays = finish(&machine, "packet") - finish(&machine.replace("router_delay: 50ns", "router_delay: 0s"), "packet");
            assert!((delays - switches as f64 * 50e-9).abs() < 1e-12, "packet n0 -> n{dst}: delays {delays} for {switches} switches");
        }
    }

    /// A graph link's own `latency` is its wire, as the cluster's `link.latency` is: the switch it
    /// leaves still charges its router delay. n0 -> n2 crosses A and B (2 switches) over NIC
    /// wires of 100 ns and the A-B wire of 1 us: 1.2 us + 2 x 50 ns + 8 B at 10 GB/s, under both
    /// models (before, the written latency replaced wire and delay: one delay short).
    #[test]
    fn a_graph_links_own_latency_is_its_wire_and_routers_still_delay() {
        let g = "name: g\nfabric:\n  graph: {switches: [{name: A}, {name: B}], links: [{a: A, b: B, latency: 1us}], hosts: [A, A, B, B]}\n\
                 link: {bandwidth: 10GB/s, latency: 100ns, router_delay: 50ns}\nnodes: {gpus: 1}\n";
        let w = WorkloadSpec::from_text("transfers:\n  - {src: n0.GPU0, dst: n2.GPU0, size: 8B}\n", "t.yaml").unwrap();
        let finish = |text: &str, model: &str| {
            let m = Machine::from_text(text, "c.yaml").unwrap();
            api::simulate(&m, &w, "t.yaml", Some(model), &[], Detail::default()).unwrap().transfers.finish_s[0]
        };
        let want = 1.2e-6 + 2.0 * 50e-9 + 8.0 / 10e9;
        let got = finish(g, "maxmin");
        assert!((got - want).abs() < 1e-12, "maxmin: {got} vs {want}");
        let delays = finish(g, "packet") - finish(&g.replace("router_delay: 50ns", "router_delay: 0s"), "packet");
        assert!((delays - 2.0 * 50e-9).abs() < 1e-12, "packet: delays {delays} for 2 switches");
    }

    /// Under `packet`, the links table says where the packets went, not the flow table's one path
    /// per message: a lone 100 MB message n0 -> n31 sprayed (or routed adaptively) per packet
    /// leaves its leaf on each of the 4 uplinks with a quarter of its bytes, give or take a
    /// packet, the uplinks together carry it all, and no link is busy longer than its bytes take.
    #[test]
    fn packet_links_table_follows_the_packets() {
        for routing in ["spray", "adaptive"] {
            let m = Machine::from_text(&ft(routing, "rr"), "c.yaml").unwrap();
            let w = WorkloadSpec::from_text("transfers:\n  - {src: n0.GPU0, dst: n31.GPU0, size: 100MB}\n", "t.yaml").unwrap();
            let r = api::simulate(&m, &w, "t.yaml", Some("packet"), &[], Detail::default()).unwrap();
            let l = &r.links;
            let up: Vec<usize> = (0..l.name.len()).filter(|&i| l.name[i].starts_with("leaf0→agg")).collect();
            let total: f64 = up.iter().map(|&i| l.bytes[i]).sum();
            assert!((total - 100e6).abs() < 1.0, "{routing}: uplinks carry {total}");
            // Spray deals the packets round the uplinks; adaptive sends each where the queue is
            // shortest, which for one message alone is as even give or take a few packets.
            let slack = if routing == "spray" { 4096.0 } else { 1e6 };
            assert_eq!(up.len(), 4, "{routing}: {:?}", l.name);
            for &i in &up {
                assert!((l.bytes[i] - 25e6).abs() <= slack, "{routing}: {} carries {}", l.name[i], l.bytes[i]);
            }
            for i in 0..l.name.len() {
                let sending = l.bytes[i] / l.capacity_bps[i];
                assert!(l.busy_s[i] <= r.summary.makespan_s + 1e-12, "{routing}: {} busy {} s", l.name[i], l.busy_s[i]);
                assert!((l.busy_s[i] - sending).abs() <= 1e-9 * sending.max(1e-6), "{routing}: {} busy {} s for {} B", l.name[i], l.busy_s[i], l.bytes[i]);
            }
        }
    }

    /// A permutation on a full-bisection tree: spraying packets over every shortest path
    /// reaches the injection bandwidth (each leaf's k uplinks carry 1/k of its k messages), and
    /// so does per-packet adaptive routing as its fluid limit (`fluid_routing=on`: each message
    /// split over the same paths by load); one path per message chosen by load comes within 2x,
    /// one hashed path per message (ecmp) collides, one fixed path per pair (shortest) more.
    #[test]
    fn permutation_reaches_injection_bandwidth_with_packet_spraying() {
        let mut t = String::from("transfers:\n");
        for i in 0..32 {
            t.push_str(&format!("  - {{src: n{i}.GPU0, dst: n{}.GPU0, size: 100MB}}\n", (i * 7 + 5) % 32));
        }
        let spray = run(&ft("spray", "rr"), &t).summary.makespan_s;
        let adaptive = run(&ft("adaptive", "rr"), &t).summary.makespan_s;
        let fluid = run_with(&ft("adaptive", "rr"), &t, &[("fluid_routing".into(), "on".into())]).summary.makespan_s;
        let ecmp = run(&ft("ecmp", "rr"), &t).summary.makespan_s;
        let shortest = run(&ft("shortest", "rr"), &t).summary.makespan_s;
        let ideal = 100e6 / 10e9;
        assert!(spray < 1.001 * ideal, "spray {spray}");
        assert!(fluid < 1.001 * ideal && ecmp > 1.5 * ideal, "fluid adaptive {fluid} ecmp {ecmp}");
        assert!(adaptive <= ecmp && adaptive <= 2.0 * ideal * 1.001, "adaptive {adaptive} ecmp {ecmp}");
        assert!(shortest > 1.5 * spray, "shortest {shortest} vs spray {spray}");
    }

    /// On a larger tree (256 nodes), one path per message chosen by load still gives most
    /// messages of a permutation the injection bandwidth (a few collide, and set the makespan).
    #[test]
    fn adaptive_gives_most_of_a_permutation_full_bandwidth() {
        let tree = "name: ft\nfabric:\n  fat_tree: {radix: 16, pods: 4}\nlink: {bandwidth: 10GB/s}\nnodes: {gpus: 1}\nnetwork: {routing: adaptive}\n";
        let mut t = String::from("transfers:\n");
        for i in 0..256 {
            t.push_str(&format!("  - {{src: n{i}.GPU0, dst: n{}.GPU0, size: 100MB}}\n", (i * 97 + 31) % 256));
        }
        let d = run(tree, &t).transfers.duration_s;
        let full = d.iter().filter(|&&x| x < 1.001 * 100e6 / 10e9).count();
        assert!(full * 100 >= d.len() * 97, "{full} of {} at full bandwidth", d.len());
    }

    #[test]
    fn fcfs_sends_one_message_at_a_time_and_rr_shares() {
        let t = "transfers:\n  - {src: n0.GPU0, dst: n5.GPU0, size: 100MB}\n  - {src: n0.GPU0, dst: n9.GPU0, size: 100MB}\n";
        let f = run(&ft("ecmp", "fcfs"), t).transfers.finish_s;
        let r = run(&ft("ecmp", "rr"), t).transfers.finish_s;
        assert!(f[0] < 0.011 && f[1] > 0.019, "fcfs {f:?}");
        assert!(r[0] > 0.019 && r[1] > 0.019, "rr {r:?}");
    }

    /// FCFS takes messages in the order they reach the NIC, not in the order their hop latencies
    /// end, and a message pays its hops while the one before it has its last bytes on their way
    /// (packets follow each other out of a NIC), but never starts before that one is done.
    #[test]
    fn fcfs_serves_in_arrival_order_back_to_back() {
        let (far, near) = ("n31", "n1"); // 6 wires and 5 switches, and 2 and 1 (same leaf)
        let hops = |d: &str| -> f64 {
            if d == far {
                6.0 * 100e-9 + 5.0 * 50e-9
            } else {
                2.0 * 100e-9 + 50e-9
            }
        };
        for (a, b) in [(far, near), (near, far)] {
            let t = format!("transfers:\n  - {{src: n0.GPU0, dst: {a}.GPU0, size: 100MB}}\n  - {{src: n0.GPU0, dst: {b}.GPU0, size: 100MB}}\n");
            let f = run(&ft("ecmp", "fcfs"), &t).transfers.finish_s;
            let first = hops(a) + 100e6 / 10e9;
            let second = (first - hops(a) + hops(b)).max(first) + 100e6 / 10e9;
            assert!((f[0] - first).abs() < 1e-12 && (f[1] - second).abs() < 1e-12, "{a} then {b}: {f:?}, want {first} and {second}");
        }
    }

    /// Every node of group i sends to group i + 1: minimal routing is limited by the global
    /// links between neighbouring groups; Valiant and PAR spread the traffic.
    #[test]
    fn dragonfly_group_shift() {
        // 9 groups of 8 routers with one global link each: one link per group pair.
        let df = |routing: &str| {
            format!("name: df\nfabric:\n  dragonfly: {{p: 4, a: 8, h: 1, groups: 9}}\nlink: {{bandwidth: 10GB/s}}\nnodes: {{gpus: 1}}\nnetwork: {{routing: {routing}}}\n")
        };
        let mut t = String::from("transfers:\n");
        for g in 0..9 {
            for k in 0..32 {
                t.push_str(&format!("  - {{src: n{}.GPU0, dst: n{}.GPU0, size: 10MB}}\n", 32 * g + k, 32 * ((g + 1) % 9) + k));
            }
        }
        let minimal = run(&df("minimal"), &t).summary.makespan_s;
        let valiant = run(&df("valiant"), &t).summary.makespan_s;
        let par = run(&df("par"), &t).summary.makespan_s;
        // 32 messages of 10 MB over the one global link between neighbouring groups: 32 ms.
        assert!(minimal > 0.0319, "minimal {minimal}");
        assert!(valiant < 0.6 * minimal && par < 0.6 * minimal, "valiant {valiant} par {par} minimal {minimal}");
    }
}

/// rev21 finding 5: lists of different lengths get each its own note (the NIC that first shares
/// a switch, and with which), and a repeated name is a shared switch too; a list longer than the
/// NICs whose extra entries all name switches listed earlier leaves no switch without a NIC, so
/// the refusal names the unused entries, not a switch that would take none.
#[test]
fn rail_lists_of_different_lengths_and_repeated_names() {
    let text = |lists: &str, nics: usize| {
        format!(
            "name: r\nfabric:\n  graph: {{switches: [{{name: R0}}, {{name: R1}}, {{name: R2}}, {{name: S0}}], links: [{{a: R0, b: S0}}, {{a: R1, b: S0}}, {{a: R2, b: S0}}], hosts: {lists}}}\nlink: {{bandwidth: 10GB/s}}\nnodes: {{gpus: 8, nics: {nics}}}\n"
        )
    };
    // NIC k on entry k mod 3 (R0, R1, R2, R0: NIC3 first meets a switch taken, NIC0's) and mod 2
    // (R1, R2, R1: NIC2 meets NIC0's R1); [R0, R1, R0] repeats R0 at NIC2.
    let m = load(&text("[[R0, R1, R2], [R1, R2], [R0, R1, R0], [R0, R1, R2]]", 8)).unwrap();
    let notes: Vec<&String> = m.network.summary.iter().filter(|l| l.contains("shares")).collect();
    assert_eq!(
        notes,
        [
            "fabric.graph.hosts[0, 3]: 3 switches for 8 NICs: NIC3 shares R0 with NIC0 (NICs take the listed switches in turn); list 8 different ones to give each NIC its own",
            "fabric.graph.hosts[1]: 2 switches for 8 NICs: NIC2 shares R1 with NIC0 (NICs take the listed switches in turn); list 8 different ones to give each NIC its own",
            "fabric.graph.hosts[2]: 3 switches for 8 NICs: NIC2 shares R0 with NIC0 (NICs take the listed switches in turn); list 8 different ones to give each NIC its own",
        ]
    );
    // Nine entries for 8 NICs: the ninth (R0) is also entry 2 (NIC2) and 5 (NIC5), so no switch
    // is left without a NIC; the entry is unused.
    let e = load(&text("[[R1, R2, R0, R1, R2, R0, R1, R2, R0], [R0]]", 8)).unwrap_err().to_string();
    assert!(e.contains("fabric.graph.hosts[0]") && e.contains("entries 8 to 8 (R0) are taken by no NIC") && !e.contains("would take none"), "{e}");
    // Four entries for 2 NICs: R2 is listed only past the NICs, R0 again.
    let e = load(&text("[[R0, R1, R2, R0], [R0]]", 2)).unwrap_err().to_string();
    assert!(e.contains("so R2 would take none;") && !e.contains("R0 would"), "{e}");
}
