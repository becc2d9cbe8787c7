//! `port_queueing` (flow/queueing.rs) against its definition, computed by hand.
use super::*;
use crate::sim;
use crate::workload::WorkloadSpec;

/// k sender NICs on switch SW0, k receiver NICs on SW1, one 10 GB/s link between the
/// switches, every link 10 GB/s without latency; packets of 1000 B.
fn fan(k: usize, buffer: u32) -> Machine {
    let link = "kind: network, bandwidth: 10GB/s, latency: 0s";
    let mut text = format!(
        "name: fan\nnetwork: {{nic_scheduling: fcfs, packet: 1000B, buffer_packets: {buffer}}}\ndevices:\n  - {{name: SW0, kind: switch, latency: 0s}}\n  - {{name: SW1, kind: switch, latency: 0s}}\n"
    );
    for i in 0..k {
        text += &format!("  - {{name: S{i}, kind: nic, latency: 0s}}\n  - {{name: R{i}, kind: nic, latency: 0s}}\n");
    }
    text += &format!("links:\n  - {{a: SW0, b: SW1, {link}}}\n");
    for i in 0..k {
        text += &format!("  - {{a: S{i}, b: SW0, {link}}}\n  - {{a: R{i}, b: SW1, {link}}}\n");
    }
    Machine::from_text(&text, "fan").unwrap()
}

/// Finish times (µs) of one 4 kB message (4 packets) from each S_i to R_i, starting at `starts` (µs).
fn finish(m: &Machine, starts: &[f64], scale: f64) -> Vec<f64> {
    let mut text = String::from("transfers:\n");
    for (i, s) in starts.iter().enumerate() {
        text += &format!("  - {{src: S{i}, dst: R{i}, size: 4kB, start: {s}us}}\n");
    }
    let w = Workload::resolve(&WorkloadSpec::from_text(&text, "w").unwrap(), m, "w").unwrap();
    let p = MaxminParams { port_queueing: scale, ..Default::default() };
    let o = sim::run_prepared(&w, &MaxminPrepared::new(m, &w, p).unwrap(), false).unwrap();
    o.finish.iter().map(|f| f * 1e6).collect()
}

fn exact(got: Vec<f64>, want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-9, "{got:?} against {want:?} µs");
    }
}

/// k messages at t = 0 share SW0→SW1 at 10/k GB/s each, 0.4 k µs for 4 kB. At that port (a
/// switch's output) the others load it at ρ = (k − 1)/k, so each waits min(ρ / (2 (1 − ρ)),
/// √4, buffer) = min((k − 1)/2, 2, buffer) packets of 1000 B / 10 GB/s = 0.1 µs; at SW1→R_i
/// it is alone (ρ = 0), and S_i→SW0 is a NIC's port, not a switch's.
#[test]
fn a_message_waits_the_mean_backlog_of_its_busiest_switch_port() {
    let m = fan(6, 8);
    // Alone: its own load is no backlog, and off is off.
    exact(finish(&m, &[0.0], 1.0), &[0.4]);
    exact(finish(&m, &[0.0, 0.0], 0.0), &[0.8, 0.8]);
    // k = 2: 0.5 packets; k = 4: 1.5; k = 6: 2.5, capped by the excursion √4 = 2.
    exact(finish(&m, &[0.0; 2], 1.0), &[0.85, 0.85]);
    exact(finish(&m, &[0.0; 4], 1.0), &[1.75; 4]);
    exact(finish(&m, &[0.0; 6], 1.0), &[2.6; 6]);
    // The scale multiplies it: k = 2 at 2, one packet.
    exact(finish(&m, &[0.0; 2], 2.0), &[0.9, 0.9]);
    // One packet of buffer caps it below √4.
    exact(finish(&fan(6, 1), &[0.0; 6], 1.0), &[2.5; 6]);
}

/// The load is the one at the message's start: a alone from 0 to 0.2 µs (2000 B at 10 GB/s),
/// then both at 5 GB/s; a's other 2000 B end at 0.6 µs, with no wait (it started alone); b,
/// started at 0.2 µs beside a (ρ = 0.5, 0.5 packets = 0.05 µs), has 2000 B by 0.6 µs and
/// the rest alone by 0.8 µs, done at 0.85 µs.
#[test]
fn the_backlog_is_the_ports_load_when_the_message_starts() {
    exact(finish(&fan(2, 8), &[0.0, 0.2], 1.0), &[0.6, 0.85]);
}
