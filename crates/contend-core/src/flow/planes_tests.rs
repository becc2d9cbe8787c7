//! The colourings and the routes they give, against bounds counted from the wiring and the
//! traffic (never from another run of contend).

use super::equitable_colouring;
use crate::api;
use crate::model::maxmin::{MaxminParams, MaxminPrepared};
use crate::report::Detail;
use crate::topology::{preset_names, DeviceKind, Machine};
use crate::workload::{Workload, WorkloadSpec};
use std::collections::BTreeMap;

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Every vertex with d edges has each colour at most ⌈d / k⌉ times (and so at least ⌊d / k⌋),
/// on random bipartite multigraphs, parallel edges and all.
#[test]
fn the_colouring_is_equitable() {
    let mut x = 7u64;
    for (left, right, edges, k) in [(5, 5, 25, 5), (16, 16, 256, 16), (8, 3, 100, 4), (30, 30, 47, 16), (2, 2, 9, 1)] {
        let e: Vec<(u32, u32)> = (0..edges).map(|_| ((xorshift(&mut x) % left) as u32, (xorshift(&mut x) % right) as u32)).collect();
        let c = equitable_colouring(&e, left as usize, right as usize, k);
        for side in 0..2 {
            let mut per: BTreeMap<(u32, u32), usize> = BTreeMap::new();
            let mut degree: BTreeMap<u32, usize> = BTreeMap::new();
            for (&(a, b), &col) in e.iter().zip(&c) {
                let v = if side == 0 { a } else { b };
                assert!((col as usize) < k);
                *per.entry((v, col)).or_default() += 1;
                *degree.entry(v).or_default() += 1;
            }
            for (&(v, _), &n) in &per {
                assert!(n <= degree[&v].div_ceil(k), "vertex {v} ({} edges, k {k}): a colour {n} times", degree[&v]);
            }
        }
    }
}

fn adaptive(preset: &str) -> Machine {
    Machine::load(preset).unwrap()
}

/// Messages GPU0 → GPU0 of the node pairs given, compiled under maxmin with `params`.
fn compile(m: &Machine, pairs: &[(usize, usize)], params: &[(&str, &str)]) -> MaxminPrepared {
    let mut text = String::from("transfers:\n");
    for (s, d) in pairs {
        text.push_str(&format!("  - {{src: n{s}.GPU0, dst: n{d}.GPU0, size: 1MiB}}\n"));
    }
    let spec = WorkloadSpec::from_text(&text, "t.yaml").unwrap();
    let w = Workload::resolve(&spec, m, "t.yaml").unwrap();
    let pairs: Vec<(String, String)> = params.iter().map(|&(k, v)| (k.into(), v.into())).collect();
    MaxminPrepared::new(m, &w, MaxminParams::parse(&pairs).unwrap()).unwrap()
}

/// Messages on each directed link between two switches.
fn switch_link_loads(m: &Machine, p: &MaxminPrepared, n: usize) -> BTreeMap<(usize, bool), u32> {
    let mut on = BTreeMap::new();
    for f in 0..n {
        for h in &p.flows.plan(f).hops {
            let l = &m.links[h.link];
            if m.devices[l.a].kind == DeviceKind::Switch && m.devices[l.b].kind == DeviceKind::Switch {
                *on.entry((h.link, h.forward)).or_default() += 1;
            }
        }
    }
    on
}

fn nodes(m: &Machine) -> usize {
    (0..).take_while(|i| m.device(&format!("n{i}.GPU0")).is_some()).count()
}

fn permutation(n: usize, seed: u64) -> Vec<(usize, usize)> {
    let mut to: Vec<usize> = (0..n).collect();
    let mut x = seed;
    for i in (1..n).rev() {
        to.swap(i, (xorshift(&mut x) % (i as u64 + 1)) as usize);
    }
    to.iter().enumerate().filter(|(s, d)| s != *d).map(|(s, &d)| (s, d)).collect()
}

/// The fat-tree presets of the k-ary kind (every core joins one aggregate rank of every pod;
/// all but quartz, whose arcs are two parallel links and whose cores join four aggregates of a
/// pod) have full bisection at the leaves and aggregates: a permutation of nodes (one NIC
/// each) gives every leaf at most 16 messages out and 16 in over 16 uplinks, and every pod's
/// aggregate j at most 16 up and 16 down over its 16 core links, so one message per link is
/// possible, and `clos_routing` finds it on each: no link between switches carries two.
#[test]
fn a_permutation_takes_at_most_one_message_per_link_on_every_k_ary_fat_tree() {
    let trees: Vec<_> = preset_names().into_iter().filter(|n| n.starts_with("fat-tree")).collect();
    assert_eq!(trees.len(), 4);
    for preset in trees {
        let m = adaptive(preset);
        let n = nodes(&m);
        for seed in [1, 2, 3] {
            let pairs = permutation(n, 0x9E37_79B9_7F4A_7C15 ^ seed);
            let p = compile(&m, &pairs, &[("clos_routing", "on")]);
            let on = switch_link_loads(&m, &p, pairs.len());
            assert_eq!(on.values().max(), Some(&1), "{preset} seed {seed}");
        }
    }
}

/// Uniform random traffic (4 messages per node, random destinations) on fat-tree-2048x1:
/// leaf l with d_l messages to other leaves must put ⌈d_l / 16⌉ on one of its 16 uplinks
/// (pigeonhole), and the busiest uplink carries exactly the largest such bound, as does the
/// busiest downlink into a leaf; a pod's aggregate j then holds at most Σ_l ⌈d_l,j⌉ ≤ its
/// leaves' bounds summed, and its core links at most ⌈that / 16⌉.
#[test]
fn uniform_traffic_loads_each_level_to_its_pigeonhole_bound() {
    let m = adaptive("fat-tree-2048x1");
    let n = nodes(&m);
    let mut x = 11u64;
    let mut pairs = Vec::new();
    for s in 0..n {
        for _ in 0..4 {
            let d = (xorshift(&mut x) % n as u64) as usize;
            if d != s && !pairs.contains(&(s, d)) {
                pairs.push((s, d));
            }
        }
    }
    let p = compile(&m, &pairs, &[("clos_routing", "on")]);
    let on = switch_link_loads(&m, &p, pairs.len());
    let leaf = |node: usize| node / 16;
    let (mut out, mut inn) = (vec![0u32; n / 16], vec![0u32; n / 16]);
    for &(s, d) in pairs.iter().filter(|&&(s, d)| leaf(s) != leaf(d)) {
        out[leaf(s)] += 1;
        inn[leaf(d)] += 1;
    }
    let name = |l: usize, fwd: bool| {
        let (a, b) = (&m.devices[m.links[l].a].name, &m.devices[m.links[l].b].name);
        if fwd {
            (a.clone(), b.clone())
        } else {
            (b.clone(), a.clone())
        }
    };
    let level = |from: &str, to: &str| on.iter().filter(|(&(l, f), _)| name(l, f).0.starts_with(from) && name(l, f).1.starts_with(to)).map(|(_, &x)| x).max();
    assert_eq!(level("leaf", "agg"), out.iter().map(|d| d.div_ceil(16)).max());
    assert_eq!(level("agg", "leaf"), inn.iter().map(|d| d.div_ceil(16)).max());
    let pod_bound = |per_leaf: &[u32]| per_leaf.chunks(16).map(|c| c.iter().map(|d| d.div_ceil(16)).sum::<u32>().div_ceil(16)).max();
    assert!(level("agg", "core") <= pod_bound(&out), "{:?} > {:?}", level("agg", "core"), pod_bound(&out));
    assert!(level("core", "agg") <= pod_bound(&inn));
}

/// Quartz (parallel leaf-aggregate arcs, cores joining four aggregates of a pod) and the
/// dragonflies (routed `par`, and grouped) are not fat-trees of planes: `clos_routing` leaves
/// their routes as they were.
#[test]
fn other_fabrics_keep_their_routes() {
    let others = preset_names().into_iter().filter(|n| n.starts_with("dragonfly") || *n == "quartz");
    for preset in others {
        let m = adaptive(preset);
        let pairs = permutation(nodes(&m).min(256), 5);
        let (a, b) = (compile(&m, &pairs, &[]), compile(&m, &pairs, &[("clos_routing", "on")]));
        for f in 0..pairs.len() {
            assert_eq!(a.flows.plan(f).hops, b.flows.plan(f).hops, "{preset}");
        }
    }
}

/// A 16 MiB permutation on fat-tree-2048x1 under `clos_routing`: one message per link, so
/// every message at the injection rate, S / 11.9 GB/s (plus a few hops' latency).
#[test]
fn a_permutation_meets_the_injection_bound_on_the_full_bisection_tree() {
    let m = adaptive("fat-tree-2048x1");
    let pairs = permutation(2048, 3);
    let mut text = String::from("transfers:\n");
    for (s, d) in &pairs {
        text.push_str(&format!("  - {{src: n{s}.GPU0, dst: n{d}.GPU0, size: 16MiB}}\n"));
    }
    let spec = WorkloadSpec::from_text(&text, "t.yaml").unwrap();
    let params = [("clos_routing".to_string(), "on".to_string())];
    let makespan = api::simulate(&m, &spec, "t.yaml", Some("maxmin"), &params, Detail::default()).unwrap().summary.makespan_s;
    let ideal = 16.0 * 1048576.0 / 11.9e9;
    assert!((makespan - ideal).abs() < 0.005 * ideal, "makespan {makespan} s, bound {ideal} s");
}
