//! Rate groups (`rate_group`): transfers that share one `max_rate` however many move at once,
//! under maxmin (one cap resource for the group) and packet (one pacer for the group), against
//! times worked out by hand on the test star (every path: 20 GB/s PCIe, 10 GB/s network, two
//! 100 ns network latencies; `pace_tests`' module note).

use super::tests::{run, star, workload};
use crate::model::maxmin::{MaxminParams, MaxminPrepared};
use crate::model::sc16::{Sc16Params, Sc16Prepared};
use crate::sim;
use crate::topology::Machine;
use crate::workload::{Workload, WorkloadSpec};

const MIB: f64 = 1048576.0;

fn maxmin(m: &Machine, text: &str) -> Vec<f64> {
    let w = workload(m, text);
    sim::run_prepared(&w, &MaxminPrepared::new(m, &w, MaxminParams::default()).unwrap(), false).unwrap().finish
}

fn two(groups: [&str; 2], dst: [&str; 2]) -> String {
    format!(
        "transfers:\n  - {{src: n0.GPU0, dst: {}, size: 1MiB, max_rate: 2GB/s, rate_group: {}}}\n  - {{src: n0.GPU0, dst: {}, size: 1MiB, max_rate: 2GB/s, rate_group: {}}}\n",
        dst[0], groups[0], dst[1], groups[1]
    )
}

/// Two 1 MiB transfers at once in one group capped at 2 GB/s (the 10 GB/s path has room for
/// both at their cap): together they move 2 MiB at 2 GB/s, so each ends at twice the time one
/// takes at the cap. maxmin: 1 GB/s each, both ending at 2 MiB / 2 GB/s after the latencies.
/// packet: the group cuts one packet each 2.048 µs whichever member's, so the last of the 512
/// packets is cut at 511 paces: within the pipeline's fill of the same.
#[test]
fn one_group_moves_at_its_cap_together() {
    let m = star(3, "{}");
    let one = MIB / 2e9;
    for dst in [["n1.GPU0", "n1.GPU0"], ["n1.GPU0", "n2.GPU0"]] {
        let text = two(["g", "g"], dst);
        let f = maxmin(&m, &text);
        for got in &f {
            assert!((got - (2e-7 + 2.0 * one)).abs() < 1e-12, "maxmin {f:?} vs {}", 2.0 * one);
        }
        let pk = run(&m, &workload(&m, &text), &[]).finish;
        let last = pk.iter().copied().fold(0.0, f64::max);
        assert!((last - 2.0 * one).abs() < 0.005 * 2.0 * one, "packet {pk:?} vs {}", 2.0 * one);
        // Paced as one: the members' packets alternate, so neither ends in the first half.
        assert!(pk.iter().all(|&t| t > 1.9 * one), "packet {pk:?}");
    }
}

/// The same two transfers in two groups: each its own 2 GB/s cap, both end as one alone would.
#[test]
fn two_groups_move_at_a_cap_each() {
    let m = star(3, "{}");
    let one = MIB / 2e9;
    let text = two(["g", "h"], ["n1.GPU0", "n1.GPU0"]);
    let f = maxmin(&m, &text);
    for got in &f {
        assert!((got - (2e-7 + one)).abs() < 1e-12, "maxmin {f:?} vs {one}");
    }
    for got in run(&m, &workload(&m, &text), &[]).finish {
        assert!((got - one).abs() < 0.005 * one, "packet {got} vs {one}");
    }
}

/// A group's members one after another (a chain) run as the chain of ungrouped capped
/// transfers does, each at the full cap in turn (maxmin: the same figures). packet: b's first
/// packet also waits for the group's pace after a's last cut (2.048 µs), where the ungrouped b
/// starts as a lands (its last packet's pipeline, 1.42 µs later): at most one pace later.
#[test]
fn a_chained_group_runs_as_the_chain() {
    let m = star(2, "{}");
    let grouped = "transfers:\n  - {name: a, src: n0.GPU0, dst: n1.GPU0, size: 1MiB, max_rate: 2GB/s, rate_group: g}\n  - {name: b, src: n0.GPU0, dst: n1.GPU0, size: 1MiB, max_rate: 2GB/s, rate_group: g, after: [a]}\n";
    let plain = grouped.replace(", rate_group: g", "");
    let want = 2.0 * (2e-7 + MIB / 2e9);
    for text in [grouped, plain.as_str()] {
        let f = maxmin(&m, text);
        assert!((f[1] - want).abs() < 1e-12, "{text}: {f:?} vs {want}");
    }
    let (g, p) = (run(&m, &workload(&m, grouped), &[]).finish, run(&m, &workload(&m, &plain), &[]).finish);
    assert_eq!(g[0], p[0]);
    let late = g[1] - p[1];
    assert!((0.0..=2.048e-6).contains(&late), "{g:?} vs {p:?}");
}

fn refused(text: &str) -> String {
    let m = star(2, "{}");
    let e = Workload::resolve(&WorkloadSpec::from_text(text, "w.yaml").unwrap(), &m, "w.yaml").err().unwrap().to_string();
    assert!(!e.contains('\n'), "{e}");
    e
}

#[test]
fn a_group_member_without_a_rate_or_with_another_is_refused_in_one_line() {
    let e = refused("transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 1MiB, rate_group: g}\n");
    assert!(e.contains("w.yaml") && e.contains("transfers[0].rate_group") && e.contains("max_rate"), "{e}");
    let e = refused(&two(["g", "g"], ["n1.GPU0", "n1.GPU0"]).replacen("2GB/s", "3GB/s", 1));
    assert!(e.contains("transfers[1].max_rate") && e.contains("\"g\"") && e.contains("transfers[0]"), "{e}");
}

#[test]
fn sc16_refuses_a_group_in_one_line() {
    let m = Machine::load("cs-storm-socket").unwrap();
    let w = workload(&m, "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, max_rate: 2GB/s, rate_group: g}\n");
    let e = Sc16Prepared::new(&m, &w, Sc16Params::default()).err().unwrap().to_string();
    assert!(e.contains("max_rate") && e.contains("maxmin") && !e.contains('\n'), "{e}");
}

/// One 2 GB/s group whose members leave by two lanes (A from n0, B from n1), and an uncapped C
/// sharing A's lane. The group cuts one packet each 2.048 µs whichever member's, so its 512
/// packets end within the pipeline's fill of twice the time one member takes at the cap, and no
/// member ends before one member's time at the cap; C takes A's lane whenever the group may not
/// cut: the 10 GB/s link less A's share. Which member cuts at a pace is whichever lane's port takes
/// it first (here B's, which ends at about one member's time, A at twice it; maxmin gives 1 GB/s
/// each).
#[test]
fn a_group_over_two_lanes_keeps_its_cap_and_the_lanes_other_message_goes_meanwhile() {
    let m = star(5, "{}");
    let one = MIB / 2e9;
    let text = "transfers:\n  - {src: n0.GPU0, dst: n2.GPU0, size: 1MiB, max_rate: 2GB/s, rate_group: g}\n  - {src: n1.GPU0, dst: n3.GPU0, size: 1MiB, max_rate: 2GB/s, rate_group: g}\n  - {src: n0.GPU0, dst: n4.GPU0, size: 1MiB}\n";
    let pk = run(&m, &workload(&m, text), &[]).finish;
    let last = pk[0].max(pk[1]);
    assert!((last - 2.0 * one).abs() < 0.005 * 2.0 * one, "packet {pk:?} vs {}", 2.0 * one);
    assert!(pk[0].min(pk[1]) > one, "packet {pk:?} vs {one}");
    assert!(pk[2] < MIB / 9e9 + 2e-6, "packet {pk:?}");
}

/// One lane's placeholder overtaken at its own port: n0.GPU0 sends A (to n0.GPU1, no NIC) and B (to
/// n1, by the NIC) in one 2 GB/s group, and an uncapped C (to n0.GPU2) in A's lane; A's and B's lanes
/// share GPU0's link to the PCIe switch, which C keeps busy. When the group may cut again, B's lane
/// puts its placeholder behind C's packet; A's lane may then take the port first and cut for the
/// group. B's placeholder then waits for the next pace (the group at its cap: its 512 packets end
/// within the pipeline's fill of twice one member's time at the cap). It used to be cut at once,
/// B's packets riding on A's paces: the group past its cap.
#[test]
fn a_placeholder_overtaken_by_its_groups_other_lane_waits_for_the_pace() {
    let mut text = String::from("name: sw\ndevices:\n  - {name: sw0, kind: switch}\n  - {name: n0.P0, kind: pcie_switch}\n  - {name: n0.NIC0, kind: nic}\n");
    text.push_str("  - {name: n1.GPU0, kind: gpu, latency: 0s}\n  - {name: n1.NIC0, kind: nic}\n");
    let mut links = String::from("links:\n  - {a: n0.NIC0, b: n0.P0, kind: pcie, bandwidth: 20GB/s, efficiency: 1, latency: 0s}\n");
    for g in 0..3 {
        text.push_str(&format!("  - {{name: n0.GPU{g}, kind: gpu, latency: 0s}}\n"));
        links.push_str(&format!("  - {{a: n0.P0, b: n0.GPU{g}, kind: pcie, bandwidth: 20GB/s, efficiency: 1, latency: 0s}}\n"));
    }
    links.push_str("  - {a: n1.NIC0, b: n1.GPU0, kind: pcie, bandwidth: 20GB/s, efficiency: 1, latency: 0s}\n");
    links.push_str("  - {a: n0.NIC0, b: sw0, kind: network, bandwidth: 10GB/s, latency: 100ns}\n  - {a: n1.NIC0, b: sw0, kind: network, bandwidth: 10GB/s, latency: 100ns}\n");
    let m = Machine::from_text(&format!("{text}{links}"), "sw").unwrap();
    let one = MIB / 2e9;
    let w = "transfers:\n  - {src: n0.GPU0, dst: n0.GPU1, size: 1MiB, max_rate: 2GB/s, rate_group: g}\n  - {src: n0.GPU0, dst: n1.GPU0, size: 1MiB, max_rate: 2GB/s, rate_group: g}\n  - {src: n0.GPU0, dst: n0.GPU2, size: 1MiB}\n";
    let pk = run(&m, &workload(&m, w), &[]).finish;
    let last = pk[0].max(pk[1]);
    assert!((last - 2.0 * one).abs() < 0.005 * 2.0 * one, "packet {pk:?} vs {}", 2.0 * one);
}
