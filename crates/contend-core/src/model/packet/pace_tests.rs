//! A transfer's `max_rate` under packet (its source paces its packets) and under maxmin (a
//! resource of its own), against times worked out by hand on the test star: every node's
//! GPU reaches its NIC over 20 GB/s of PCIe (204.8 ns a 4096 B packet), the NIC the switch
//! over 10 GB/s and 100 ns (409.6 ns a packet).

use super::tests::{run, star, workload};
use crate::model::maxmin::{MaxminParams, MaxminPrepared};
use crate::model::sc16::{Sc16Params, Sc16Prepared};
use crate::sim;
use crate::topology::Machine;

const MIB: f64 = 1048576.0;

fn maxmin(m: &Machine, text: &str) -> Vec<f64> {
    let w = workload(m, text);
    sim::run_prepared(&w, &MaxminPrepared::new(m, &w, MaxminParams::default()).unwrap(), false).unwrap().finish
}

/// 1 MiB at 2 GB/s, alone: packet k is cut at k × 4096 B / 2 GB/s (2.048 µs), slower than any
/// port serves it, so the last of the 256 leaves at 255 paces and then crosses the path's
/// pipeline alone (PCIe, network twice, PCIe, two 100 ns latencies). maxmin: the path's
/// latencies, then 1 MiB at 2 GB/s.
#[test]
fn a_lone_capped_flow_is_its_pace_then_the_pipeline() {
    let m = star(2, "{}");
    let text = "transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 1MiB, overhead: 1us, max_rate: 2GB/s}\n";
    let (pace, pcie, net, lat) = (2_048_000u64, 204_800u64, 409_600u64, 100_000u64);
    let expect = 1_000_000 + 255 * pace + pcie + net + net + pcie + 2 * lat;
    assert_eq!(run(&m, &workload(&m, text), &[]).finish[0], expect as f64 / 1e12);
    let flow = 1e-6 + 2e-7 + MIB / 2e9;
    let got = maxmin(&m, text)[0];
    assert!((got - flow).abs() < 1e-12, "maxmin {got} vs {flow}");
    // Uncapped, the same message takes a fifth of the time: the cap is what binds.
    let free = run(&m, &workload(&m, "transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 1MiB, overhead: 1us}\n"), &[]).finish[0];
    assert!(free < 0.3 * expect as f64 / 1e12, "{free}");
}

/// Two senders into one 10 GB/s port: a, 4 MiB capped at 2 GB/s, and b, 32 MiB free. Max-min:
/// a at 2, b at the 8 left until a ends (4 MiB / 2 GB/s, when b has moved 16 MiB), then b at
/// 10 for its other 16 MiB. packet: a's paced packets and b's share the port round-robin, a
/// taking one in each 2.048 µs and b the rest, so the same to within the pipeline's fill.
#[test]
fn a_cap_and_a_shared_link_both_bind() {
    let m = star(3, "{}");
    let text = "transfers:\n  - {src: n0.GPU0, dst: n2.GPU0, size: 4MiB, max_rate: 2GB/s}\n  - {src: n1.GPU0, dst: n2.GPU0, size: 32MiB}\n";
    let a = 4.0 * MIB / 2e9;
    let b = a + 16.0 * MIB / 10e9;
    let lat = 2e-7;
    let flow = maxmin(&m, text);
    assert!((flow[0] - (a + lat)).abs() < 1e-12 && (flow[1] - (b + lat)).abs() < 1e-12, "maxmin {flow:?} vs {a}, {b}");
    let pk = run(&m, &workload(&m, text), &[]).finish;
    for (got, want) in pk.iter().zip([a, b]) {
        assert!((got - want).abs() < 0.005 * want, "packet {pk:?} vs {a}, {b}");
    }
}

/// A chain of capped transfers (each after the one before, same endpoints and rate) shares
/// one cap resource and route; one beside them (after the same transfer) gets its own.
#[test]
fn a_chain_shares_its_cap_and_a_sibling_does_not() {
    let m = star(2, "{}");
    let text = "transfers:\n  - {name: a, src: n0.GPU0, dst: n1.GPU0, size: 1MiB, max_rate: 2GB/s}\n  - {name: b, src: n0.GPU0, dst: n1.GPU0, size: 1MiB, max_rate: 2GB/s, after: [a]}\n  - {name: c, src: n0.GPU0, dst: n1.GPU0, size: 1MiB, max_rate: 2GB/s, after: [a]}\n";
    let w = workload(&m, text);
    let p = MaxminPrepared::new(&m, &w, MaxminParams::default()).unwrap();
    let r = &p.flows.route_of;
    assert_eq!(r[0], r[1]);
    assert_ne!(r[0], r[2]);
    // b and c move together after a, each at its own 2 GB/s (the 10 GB/s path has room); each
    // pays the path's latencies before its first byte.
    let f = sim::run_prepared(&w, &p, false).unwrap().finish;
    let want = 2.0 * (2e-7 + MIB / 2e9);
    assert!((f[1] - want).abs() < 1e-12 && (f[2] - want).abs() < 1e-12, "{f:?} vs {want}");
}

#[test]
fn sc16_refuses_a_cap_in_one_line() {
    let m = Machine::load("cs-storm-socket").unwrap();
    let w = workload(&m, "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, max_rate: 2GB/s}\n");
    let e = Sc16Prepared::new(&m, &w, Sc16Params::default()).err().unwrap().to_string();
    assert!(e.contains("max_rate") && e.contains("maxmin") && !e.contains('\n'), "{e}");
}

/// The same two messages from one source, through one NIC and its 10 GB/s link: the lane cuts
/// the free message's packets while the capped one waits for its pace, so the link is shared as
/// max-min shares it (a at 2 GB/s, b at the 8 left, then 10).
#[test]
fn a_paced_message_leaves_its_lane_to_the_others_meanwhile() {
    let m = star(3, "{}");
    let text = "transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 4MiB, max_rate: 2GB/s}\n  - {src: n0.GPU0, dst: n2.GPU0, size: 32MiB}\n";
    let a = 4.0 * MIB / 2e9;
    let b = a + 16.0 * MIB / 10e9;
    let flow = maxmin(&m, text);
    assert!((flow[0] - (a + 2e-7)).abs() < 1e-12 && (flow[1] - (b + 2e-7)).abs() < 1e-12, "maxmin {flow:?} vs {a}, {b}");
    let pk = run(&m, &workload(&m, text), &[]).finish;
    for (got, want) in pk.iter().zip([a, b]) {
        assert!((got - want).abs() < 0.005 * want, "packet {pk:?} vs {a}, {b}");
    }
}

/// A max_rate so low that the run would pass the clock is refused naming the transfer and its
/// max_rate, not a link that is not at fault.
#[test]
fn a_pace_past_the_clock_names_the_max_rate() {
    let m = star(2, "{}");
    let e = super::tests::refusal(&m, "transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 64MiB, max_rate: 0.000001B/s}\n");
    assert!(e.contains("transfers[0] (t0) at its max_rate of 1.000e-6 B/s") && e.contains("raise transfers[0]'s max_rate"), "{e}");
    assert!(!e.contains('\n'), "{e}");
}
