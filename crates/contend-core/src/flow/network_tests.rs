//! Routing as each fabric defines it, checked against the wiring of the presets users run:
//! expected values are counted from the machine's links, never from another run of contend.

use crate::api;
use crate::model::maxmin::{MaxminParams, MaxminPrepared};
use crate::report::{Detail, Report};
use crate::topology::{preset_names, preset_text, DeviceKind, Machine};
use crate::workload::{Workload, WorkloadSpec};

fn with_routing(preset: &str, routing: &str) -> Machine {
    let text = preset_text(preset).unwrap();
    let line = text.lines().find(|l| l.starts_with("network:")).unwrap();
    let routed = line.replace(line.split("routing: ").nth(1).unwrap().split(',').next().unwrap(), routing);
    let m = Machine::from_text(&text.replace(line, &routed), "c.yaml").unwrap();
    assert_eq!(format!("{:?}", m.network.routing).to_lowercase(), routing, "{preset}");
    m
}

fn dragonflies() -> Vec<&'static str> {
    let names: Vec<_> = preset_names().into_iter().filter(|n| n.starts_with("dragonfly")).collect();
    assert_eq!(names.len(), 4);
    names
}

/// Nodes of a machine built by the cluster builder (GPU0 of each), in node order.
fn nodes(m: &Machine) -> usize {
    (0..).take_while(|i| m.device(&format!("n{i}.GPU0")).is_some()).count()
}

fn transfers(pairs: &[(usize, usize)], size: &str) -> String {
    let mut t = String::from("transfers:\n");
    for (s, d) in pairs {
        t.push_str(&format!("  - {{src: n{s}.GPU0, dst: n{d}.GPU0, size: {size}}}\n"));
    }
    t
}

fn compile(m: &Machine, text: &str) -> (Workload, MaxminPrepared) {
    let spec = WorkloadSpec::from_text(text, "t.yaml").unwrap();
    let w = Workload::resolve(&spec, m, "t.yaml").unwrap();
    let p = MaxminPrepared::new(m, &w, MaxminParams::default()).unwrap();
    (w, p)
}

fn run(m: &Machine, text: &str) -> Report {
    let spec = WorkloadSpec::from_text(text, "t.yaml").unwrap();
    api::simulate(m, &spec, "t.yaml", Some("maxmin"), &[], Detail::default()).unwrap()
}

/// The groups of the switches a path crosses, in order, and its global hops (links joining
/// switches of two different groups).
fn groups_on_path(m: &Machine, p: &MaxminPrepared, f: usize) -> (Vec<u32>, usize) {
    let mut groups = Vec::new();
    let mut global = 0;
    for h in &p.flows.plan(f).hops {
        let l = &m.links[h.link];
        let (a, b) = (&m.devices[l.a], &m.devices[l.b]);
        if a.kind == DeviceKind::Switch && b.kind == DeviceKind::Switch && a.group != b.group {
            global += 1;
        }
        let to = if h.forward { b } else { a };
        if to.kind == DeviceKind::Switch && groups.last() != to.group.as_ref() {
            groups.push(to.group.unwrap());
        }
    }
    (groups, global)
}

/// Physical global links joining group g to group t, counted from the wiring.
fn links_between(m: &Machine, g: u32, t: u32) -> u32 {
    m.links
        .iter()
        .zip(&m.spec.links)
        .filter(|(l, _)| {
            let (a, b) = (m.devices[l.a].group, m.devices[l.b].group);
            m.devices[l.a].kind == DeviceKind::Switch && m.devices[l.b].kind == DeviceKind::Switch && (a, b) == (Some(g), Some(t))
                || (a, b) == (Some(t), Some(g))
        })
        .map(|(_, s)| s.count.unwrap_or(1))
        .sum()
}

fn group_count(m: &Machine) -> u32 {
    m.devices.iter().filter_map(|d| d.group).max().unwrap() + 1
}

/// A scattered permutation of the nodes (every node sends once and receives once).
fn permutation(n: usize) -> Vec<(usize, usize)> {
    (0..n).map(|i| (i, (i * 769 + 131) % n)).collect()
}

#[test]
fn dragonfly_minimal_takes_one_global_hop_and_valiant_two() {
    for preset in dragonflies() {
        let groups = group_count(&with_routing(preset, "minimal"));
        for routing in ["minimal", "valiant", "ecmp", "adaptive"] {
            let m = with_routing(preset, routing);
            let n = nodes(&m);
            let per_group = n / groups as usize;
            let pairs = permutation(n);
            let (_, p) = compile(&m, &transfers(&pairs, "1MiB"));
            let mut seen = [0usize; 2];
            for (f, &(s, d)) in pairs.iter().enumerate() {
                let (gs, gd) = ((s / per_group) as u32, (d / per_group) as u32);
                let (path, global) = groups_on_path(&m, &p, f);
                assert_eq!((path[0], *path.last().unwrap()), (gs, gd), "{preset} {routing} n{s} -> n{d}: groups {path:?}");
                let want = match (gs == gd, routing) {
                    (true, _) => 0,
                    (false, "valiant") if groups > 2 => 2,
                    (false, _) => 1,
                };
                assert_eq!(global, want, "{preset} {routing} n{s} -> n{d}: groups {path:?}");
                if want == 2 {
                    assert!(path.len() == 3 && path[1] != gs && path[1] != gd, "{preset}: Valiant's intermediate group {path:?}");
                }
                // Inside a group of all-to-all routers, at most one local hop.
                let switch_hops = p.flows.plan(f).hops.iter().filter(|h| {
                    let l = &m.links[h.link];
                    m.devices[l.a].kind == DeviceKind::Switch && m.devices[l.b].kind == DeviceKind::Switch
                });
                assert!(switch_hops.count() <= 2 * want + 1 + usize::from(gs == gd), "{preset} {routing}: too many hops");
                seen[usize::from(gs == gd)] += 1;
            }
            assert!(seen[0] > 0, "{preset}: the permutation never leaves a group");
        }
    }
}

/// Every node of group g sends to the node at the same place in group g + 1: under minimal
/// routing all of group g's bytes cross the links joining g to g + 1, so the makespan is at
/// least their bytes over those links' bandwidth, counted from the wiring; choosing among them
/// by load comes close to it; Valiant and UGAL/PAR spread the traffic.
#[test]
fn dragonfly_group_shift_is_limited_by_the_links_joining_neighbouring_groups() {
    for preset in dragonflies() {
        let m = with_routing(preset, "minimal");
        let (groups, n) = (group_count(&m), nodes(&m));
        let per_group = n / groups as usize;
        let pairs: Vec<_> = (0..n).map(|i| (i, (i + per_group) % n)).collect();
        let t = transfers(&pairs, "16MiB");
        let bw = m.links.iter().find(|l| m.devices[l.a].kind == DeviceKind::Switch).unwrap().bandwidth;
        let size = 16.0 * 1048576.0;
        let fewest = (0..groups).map(|g| links_between(&m, g, (g + 1) % groups)).min().unwrap();
        // With two groups, the pair is its own neighbour both ways: each direction has the links.
        let bound = (per_group as f64 / fewest as f64) * size / bw;
        // Least-loaded choices made one message at a time (then refined) come within one
        // message per link of an even spread.
        let balanced = ((per_group as f64 / fewest as f64).ceil() + 1.0) * size / bw;
        let minimal = run(&m, &t).summary.makespan_s;
        assert!(minimal >= bound * (1.0 - 1e-9), "{preset}: minimal {minimal} below the bound {bound} of {fewest} links");
        let adaptive = run(&with_routing(preset, "adaptive"), &t).summary.makespan_s;
        assert!(adaptive >= bound * (1.0 - 1e-9) && adaptive < balanced * 1.001 + 1e-5, "{preset}: adaptive {adaptive}, balanced {balanced}");
        if groups > 2 {
            let valiant = run(&with_routing(preset, "valiant"), &t).summary.makespan_s;
            let ugal = run(&with_routing(preset, "ugal"), &t).summary.makespan_s;
            // Valiant crosses two global links per message, over all G(G-1) directed group
            // pairs instead of G: it wins once neighbours' links are the bottleneck.
            assert!(valiant < minimal && ugal < minimal, "{preset}: valiant {valiant} ugal {ugal} minimal {minimal}");
            eprintln!("{preset}: bound {bound} balanced {balanced} minimal {minimal} adaptive {adaptive} valiant {valiant} ugal {ugal}");
            if groups >= 16 {
                // 2 × 128 messages spread over 15 neighbours' links beat 128 on one pair's.
                assert!(valiant < bound, "{preset}: valiant {valiant} above minimal's bound {bound}");
            }
        }
    }
}

/// Under uniform random traffic minimal routing beats Valiant (which doubles the global hops).
#[test]
fn dragonfly_uniform_traffic_favours_minimal() {
    for preset in dragonflies().into_iter().filter(|p| group_count(&with_routing(p, "minimal")) > 2) {
        let m = with_routing(preset, "minimal");
        let n = nodes(&m);
        let mut x = 0x2545F4914F6CDD1Du64;
        let pairs: Vec<_> = (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (i, (i + 1 + (x % (n as u64 - 1)) as usize) % n)
            })
            .collect();
        let t = transfers(&pairs, "4MiB");
        let mean = |r: &Report| r.transfers.finish_s.iter().sum::<f64>() / r.transfers.finish_s.len() as f64;
        let (a, b) = (run(&m, &t), run(&with_routing(preset, "valiant"), &t));
        assert!(
            mean(&a) < mean(&b) && a.summary.makespan_s < b.summary.makespan_s,
            "{preset}: minimal {} / {}, valiant {} / {}",
            mean(&a),
            a.summary.makespan_s,
            mean(&b),
            b.summary.makespan_s
        );
    }
}

/// Fat-trees route up*/down*: a message between pods climbs to one core switch and comes down;
/// one inside a pod turns at an aggregate and meets no core; one under a leaf stays there.
#[test]
fn fat_tree_routes_up_then_down() {
    for preset in preset_names().into_iter().filter(|n| n.starts_with("fat-tree")) {
        for routing in ["shortest", "ecmp", "adaptive", "spray"] {
            let m = with_routing(preset, routing);
            let n = nodes(&m);
            let pairs = permutation(n);
            let (_, p) = compile(&m, &transfers(&pairs, "1MiB"));
            let pod = |s: usize| {
                let l = m.links.iter().find(|l| m.devices[l.b].name == format!("n{s}.NIC0")).unwrap();
                (m.devices[l.a].group.unwrap(), l.a)
            };
            let mut inter = 0;
            for (f, &(s, d)) in pairs.iter().enumerate() {
                let ((ps, ls), (pd, ld)) = (pod(s), pod(d));
                let mut level = Vec::new();
                for h in &p.flows.plan(f).hops {
                    let l = &m.links[h.link];
                    let to = &m.devices[if h.forward { l.b } else { l.a }];
                    if to.kind == DeviceKind::Switch {
                        level.push(if to.group.is_none() {
                            2
                        } else if to.name.starts_with("agg") {
                            1
                        } else {
                            0
                        });
                    }
                }
                let top = level.iter().position(|&x| x == *level.iter().max().unwrap()).unwrap();
                let up_down = level[..=top].windows(2).all(|w| w[1] == w[0] + 1) && level[top..].windows(2).all(|w| w[1] + 1 == w[0]);
                let cores = level.iter().filter(|&&x| x == 2).count();
                let want = if ps != pd {
                    inter += 1;
                    (1, 5)
                } else if ls != ld {
                    (0, 3)
                } else {
                    (0, 1)
                };
                assert!(up_down && (cores, level.len()) == want, "{preset} {routing} n{s} -> n{d}: levels {level:?}");
            }
            assert!(inter > 0 || m.devices.iter().all(|d| d.group != Some(1)), "{preset}: no message between pods");
        }
    }
}

/// The direct-link rows of a dragonfly's groups give, for every two switches of one group, the
/// first network link joining them in the machine's link order (what a scan of a switch's
/// links finds), and none where no link joins them.
#[test]
fn a_groups_direct_links_are_the_first_joining_each_two_switches() {
    for preset in dragonflies() {
        let m = with_routing(preset, "ugal");
        let r = super::NetworkRouter::new(&m);
        let g = r.grouped.as_ref().expect("a dragonfly is grouped");
        let switches: Vec<usize> = (0..m.devices.len()).filter(|&d| m.devices[d].kind == DeviceKind::Switch).collect();
        let mut pairs = 0;
        for &a in &switches {
            for &b in switches.iter().filter(|&&b| b != a && g.of[b] == g.of[a]) {
                let first = m.links.iter().position(|l| l.kind == crate::topology::LinkKind::Network && ((l.a, l.b) == (a, b) || (l.a, l.b) == (b, a)));
                assert_eq!(r.link_between(a, b).map(|l| l as usize), first, "{preset}: {} to {}", m.devices[a].name, m.devices[b].name);
                pairs += usize::from(first.is_some());
            }
        }
        assert!(pairs > 0, "{preset}: local links");
    }
}

/// A random permutation of 16 MiB on seed 003's full-bisection fat-tree (fat-tree-2048x1,
/// 11.9 GB/s links, every node's links faster). Per-packet policies spread a message's packets
/// over every up*/down* path, which on a full-bisection tree leaves no link more than one
/// message's worth (each leaf's 16 uplinks carry 1/16 of its at most 16 messages, and so on up
/// and down): `spray` (split evenly) and `adaptive` as its fluid limit (`fluid_routing=on`)
/// reach the injection bound S / 11.9 GB/s. `ecmp` hashes one path per message: messages
/// hashed onto one link share it, and with every message the same size and issued together
/// the busiest link's k messages finish last, at k × S / 11.9 GB/s (max-min gives each 1/k of
/// it, and no link holds more); k is counted from the routes the hash gave, not from a run.
/// `adaptive` with one path per pair (the default, `fluid_routing=off`) chooses by load in
/// transfer order and leaves some links with two messages, where no single message has a
/// free way out: 2 × the bound (docs/benchmarks.md, issue 23 fourteenth round); with
/// `clos_routing=on` the pairs' paths are chosen together as the tree's two edge colourings
/// (flow/planes.rs), one message per link, and it meets the bound.
#[test]
fn a_random_permutation_on_the_full_bisection_fat_tree_meets_each_routings_bound() {
    let size = 16.0 * 1048576.0;
    let ideal = size / 11.9e9;
    let n = 2048;
    // A seeded random permutation (Fisher-Yates), messages to oneself dropped.
    let mut to: Vec<usize> = (0..n).collect();
    let mut x = 0x9E3779B97F4A7C15u64;
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        to.swap(i, (x % (i as u64 + 1)) as usize);
    }
    let pairs: Vec<(usize, usize)> = to.iter().enumerate().filter(|(s, d)| s != *d).map(|(s, &d)| (s, d)).collect();
    let text = transfers(&pairs, "16MiB");
    let spec = WorkloadSpec::from_text(&text, "t.yaml").unwrap();
    let fluid = [("fluid_routing".to_string(), "on".to_string())];
    let clos = [("clos_routing".to_string(), "on".to_string())];
    for (routing, params) in [("spray", &[][..]), ("adaptive", &fluid[..]), ("adaptive", &clos[..]), ("ecmp", &[][..]), ("adaptive", &[][..])] {
        let m = with_routing("fat-tree-2048x1", routing);
        let makespan = api::simulate(&m, &spec, "t.yaml", Some("maxmin"), params, Detail::default()).unwrap().summary.makespan_s;
        let k = match (routing, params.is_empty()) {
            ("ecmp", _) => {
                let (_, p) = compile(&m, &text);
                let mut on = vec![0u32; p.flows.cap.len()];
                for f in 0..pairs.len() {
                    for &(r, _) in p.flows.route(f) {
                        on[r as usize] += 1;
                    }
                }
                *on.iter().max().unwrap() as f64
            }
            ("adaptive", true) => 2.0,
            _ => 1.0,
        };
        // Latencies: a few hops of 100 ns and 60 ns router delay, well under 0.5% of the bound.
        assert!((makespan - k * ideal).abs() < 0.005 * ideal, "{routing} {params:?}: makespan {makespan} s, bound {k} x {ideal} s");
    }
}
