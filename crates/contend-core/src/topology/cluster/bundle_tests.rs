//! A bundle of parallel network links (`count: n`) under per-flow and per-packet routing
//! (flow/bundle.rs). Graph A =2x10 GB/s= B, NICs at 25 GB/s, 100 ns wires, 50 ns router delay;
//! nodes n0-n2 on A, n3-n5 on B. Hand values: 3 wires + 2 switches = 0.4 us, then the bytes at
//! the message's bottleneck.

use crate::api;
use crate::report::Detail;
use crate::topology::Machine;
use crate::workload::WorkloadSpec;

const GRAPH: &str = "name: bundle\nfabric:\n  graph: {switches: [{name: A}, {name: B}], links: [{a: A, b: B, count: 2}], hosts: [A, A, A, B, B, B]}\n\
                     link: {bandwidth: MEMBER, latency: 100ns, router_delay: 50ns}\nnodes: {gpus: 1, nic_bandwidth: 25GB/s}\nnetwork: {routing: ROUTING}\n";
const MIB: f64 = 1048576.0;
const PATH: f64 = 3.0 * 100e-9 + 2.0 * 50e-9;

/// Finish of each of `messages` 1 MiB messages n{k} -> n{k+3}, issued together.
fn finish(routing: &str, member: &str, model: &str, messages: usize) -> Vec<f64> {
    let m = Machine::from_text(&GRAPH.replace("ROUTING", routing).replace("MEMBER", member), "c.yaml").unwrap();
    let t: String = (0..messages).map(|k| format!("  - {{src: n{k}.GPU0, dst: n{}.GPU0, size: 1MiB}}\n", k + 3)).collect();
    let w = WorkloadSpec::from_text(&format!("transfers:\n{t}"), "t.yaml").unwrap();
    api::simulate(&m, &w, "t.yaml", Some(model), &[], Detail::default()).unwrap().transfers.finish_s
}

/// A packet run pays what maxmin's fluid does plus the store-and-forward of a packet per hop
/// (4 KiB at 10 to 25 GB/s: under 2 us over the 5 hops).
fn near(got: f64, want: f64, model: &str) -> bool {
    let slack = if model == "packet" { 2e-6 } else { 1e-12 };
    got >= want - 1e-12 && got - want <= slack
}

/// A lone message routed per flow (shortest, ecmp, minimal; valiant, ugal and par off a
/// dragonfly) takes one member: 1 MiB at 10 GB/s = 104.86 us, not the bundle's 20 GB/s
/// (RFC 2992; IEEE 802.1AX). Spray and adaptive spread its packets over both: 52.43 us.
#[test]
fn a_lone_message_routed_per_flow_takes_one_member_of_a_bundle() {
    for model in ["maxmin", "packet"] {
        for routing in ["shortest", "ecmp", "minimal", "valiant", "ugal", "par"] {
            let got = finish(routing, "10GB/s", model, 1)[0];
            let want = PATH + MIB / 10e9;
            assert!(near(got, want, model), "{model} {routing}: {got} vs {want}");
        }
        for routing in ["spray", "adaptive"] {
            let got = finish(routing, "10GB/s", model, 1)[0];
            let want = PATH + MIB / 20e9;
            assert!(near(got, want, model), "{model} {routing}: {got} vs {want}");
        }
    }
}

/// The bundle's capacity for all messages together stays both members (the fluid stand-in for
/// a hash spreading flows evenly): two messages move at one member's rate each, 104.86 us, and
/// three share 20 GB/s, 157.29 us, under every policy.
#[test]
fn messages_together_share_all_members_of_a_bundle() {
    for model in ["maxmin", "packet"] {
        for routing in ["ecmp", "spray"] {
            for (messages, want) in [(2, PATH + MIB / 10e9), (3, PATH + 3.0 * MIB / 20e9)] {
                for got in finish(routing, "10GB/s", model, messages) {
                    assert!(near(got, want, model), "{model} {routing} x{messages}: {got} vs {want}");
                }
            }
        }
    }
}

/// Members at least as fast as the NIC's port never bind: a lone message runs at the NIC's
/// 25 GB/s, 41.94 us, as before.
#[test]
fn a_bundle_of_members_faster_than_the_nic_changes_nothing() {
    for model in ["maxmin", "packet"] {
        for (routing, member) in [("ecmp", "30GB/s"), ("ecmp", "25GB/s"), ("spray", "30GB/s")] {
            let got = finish(routing, member, model, 1)[0];
            let want = PATH + MIB / 25e9;
            assert!(near(got, want, model), "{model} {routing} members {member}: {got} vs {want}");
        }
    }
}
