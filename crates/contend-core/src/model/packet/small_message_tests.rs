//! Issue 23, round 11: the smallest cases where a 64 KiB-like message's time could differ
//! between max-min sharing (maxmin: processor sharing of every port) and packet-by-packet
//! service (packet: FIFO input buffers per port and virtual channel, output ports serving
//! their inputs round-robin, store-and-forward hops, credit flow control). Every time is
//! worked out by hand on one switch with zero latencies, 10 GB/s links and 1000 B packets
//! (τ = 100 ns a packet at every port), messages of n packets; both models are checked
//! against the hand figures, so the table in docs/benchmarks.md ("Issue 23, eleventh round")
//! says which mechanism separates them and by how much.

use super::tests::{run, workload};
use crate::model::maxmin::{MaxminParams, MaxminPrepared};
use crate::params::NicRelease;
use crate::sim;
use crate::topology::Machine;

/// One packet's serialisation at every port, µs.
const TAU: f64 = 0.1;

/// Senders S0..S{k-1} and receivers R0..R{k-1}, all NICs on one switch; FCFS NICs.
fn star(k: usize, buffer: u32) -> Machine {
    star_scheduled(k, buffer, "fcfs")
}

/// `star` with NICs that schedule their messages as `scheduling` says.
fn star_scheduled(k: usize, buffer: u32, scheduling: &str) -> Machine {
    let link = "kind: network, bandwidth: 10GB/s, latency: 0s";
    let mut text = format!(
        "name: hand\nnetwork: {{nic_scheduling: {scheduling}, packet: 1000B, buffer_packets: {buffer}}}\ndevices:\n  - {{name: SW, kind: switch, latency: 0s}}\n"
    );
    for i in 0..k {
        text += &format!("  - {{name: S{i}, kind: nic, latency: 0s}}\n  - {{name: R{i}, kind: nic, latency: 0s}}\n");
    }
    text += "links:\n";
    for i in 0..k {
        text += &format!("  - {{a: S{i}, b: SW, {link}}}\n  - {{a: R{i}, b: SW, {link}}}\n");
    }
    Machine::from_text(&text, "hand").unwrap()
}

/// S0 and S1 on switches SW1 and SW2 (SW1 -> SW2 one link), receivers R0 and R1 on SW2; FCFS
/// NICs, the same links as `star`.
fn two_switches(buffer: u32) -> Machine {
    let link = "kind: network, bandwidth: 10GB/s, latency: 0s";
    let mut text = format!("name: hand2\nnetwork: {{nic_scheduling: fcfs, packet: 1000B, buffer_packets: {buffer}}}\ndevices:\n");
    for d in ["SW1", "SW2"] {
        text += &format!("  - {{name: {d}, kind: switch, latency: 0s}}\n");
    }
    for d in ["S0", "S1", "R0", "R1"] {
        text += &format!("  - {{name: {d}, kind: nic, latency: 0s}}\n");
    }
    text += "links:\n";
    for (a, b) in [("S0", "SW1"), ("SW1", "SW2"), ("S1", "SW2"), ("R0", "SW2"), ("R1", "SW2")] {
        text += &format!("  - {{a: {a}, b: {b}, {link}}}\n");
    }
    Machine::from_text(&text, "hand2").unwrap()
}

/// Finish times (µs) under packet and under maxmin with `release` and store and forward `sf`.
fn both(m: &Machine, list: &[(usize, usize, usize)], release: NicRelease, sf: bool) -> (Vec<f64>, Vec<f64>) {
    let mut text = String::from("transfers:\n");
    for &(s, r, n) in list {
        text += &format!("  - {{src: S{s}, dst: R{r}, size: {}B}}\n", n * 1000);
    }
    let w = workload(m, &text);
    let packet = run(m, &w, &[]).finish.iter().map(|f| f * 1e6).collect();
    let p = MaxminParams { nic_release: release, store_forward: sf, ..Default::default() };
    let flow = sim::run_prepared(&w, &MaxminPrepared::new(m, &w, p).unwrap(), false).unwrap().finish.iter().map(|f| f * 1e6).collect();
    (packet, flow)
}

fn near(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= tol, "{what}: {got:?} against {want:?} µs");
    }
}

/// Two senders, n = 16 packets each, into one receiver port at t = 0. Processor sharing: both
/// at half the port, both done at 2nτ. Packet: the first packets reach the switch at τ (one
/// store-and-forward hop), then the port takes the two inputs' packets in turn with no gap
/// (each input refills faster than it is served), so the first message's last packet leaves
/// at τ + (2n − 1)τ and the second's at τ + 2nτ. The sharing is the same; what differs is the
/// pipeline's one packet (store_forward=on adds it: both at (2n + 1)τ, the mean of packet's).
#[test]
fn incast_is_processor_sharing_plus_one_packet() {
    let n = 16;
    let (packet, flow) = both(&star(2, 8), &[(0, 0, n), (1, 0, n)], NicRelease::Shared, false);
    let mut sorted = packet.clone();
    sorted.sort_by(f64::total_cmp);
    near(&sorted, &[2.0 * n as f64 * TAU, (2 * n + 1) as f64 * TAU], 1e-6, "packet");
    near(&flow, &[2.0 * n as f64 * TAU; 2], 1e-9, "maxmin");
    let (_, flow) = both(&star(2, 8), &[(0, 0, n), (1, 0, n)], NicRelease::Shared, true);
    near(&flow, &[(2 * n + 1) as f64 * TAU; 2], 1e-9, "maxmin, store and forward");
}

/// One FCFS NIC, two messages of n packets to two receivers at t = 0. Packet: the NIC cuts the
/// first fully, then the second; each last packet reaches its receiver one hop after it
/// leaves: (n + 1)τ and (2n + 1)τ. maxmin (`shared`): the head is released when its NIC could
/// have sent it (nτ), so nτ and 2nτ; store and forward adds the one hop to each.
#[test]
fn fcfs_nic_serialises_and_both_models_agree_up_to_the_pipeline() {
    let n = 16;
    let (packet, flow) = both(&star(2, 8), &[(0, 0, n), (0, 1, n)], NicRelease::Shared, false);
    near(&packet, &[(n + 1) as f64 * TAU, (2 * n + 1) as f64 * TAU], 1e-6, "packet");
    near(&flow, &[n as f64 * TAU, 2.0 * n as f64 * TAU], 1e-9, "maxmin");
    let (_, flow) = both(&star(2, 8), &[(0, 0, n), (0, 1, n)], NicRelease::Shared, true);
    near(&flow, &[(n + 1) as f64 * TAU, (2 * n + 1) as f64 * TAU], 1e-9, "maxmin, store and forward");
}

/// Two hops with different bottlenecks behind one FCFS NIC: S0 sends A (n packets) to R0 and
/// then B (n packets) to R1; S1 sends C (4n packets) to R0 from t = 0, so A gets every other
/// slot of the port to R0 (A_k leaves the switch at 2kτ, A done at 2nτ) and B's path is free.
/// Buffers of b packets at the switch's input from S0 (one count of credits for A and B: hop 1).
/// - Packet: once A holds all b slots, S0 sends A_k when A_{k−b} leaves the buffer, at
///   (2(k − b) − 1)τ; A_n goes at (2(n − b) − 1)τ and B_1 on the next freed slot, τ after A_n
///   is sent. B's packets leave the buffer as they arrive (their port is free), returning
///   their credits at once, so B goes at the link's rate from there: B done at
///   (2(n − b) + 1)τ + nτ + τ = (3n − 2b + 2)τ. The NIC moved on while A's last b packets sat
///   in the switch's buffer, and they no longer used its link.
/// - maxmin `delivered` (B starts when A has arrived): 2nτ and 3nτ, b − 2 packets late.
/// - maxmin `shared`: A is released when its bytes left fit its share of the switch's input
///   buffer (b packets, A alone on that port), at 2(n − b)τ, but those b packets are still
///   charged on S0's link: A held to half by the port to R0, B gets the other half until A
///   ends at 2nτ (b packets), then runs alone for the other n − b: B done at (3n − b)τ, b − 2
///   packets after packet's B. Under max-min sharing the released head's buffered bytes still
///   take their share of every link up to the buffer they sit in, at packet level they are past it.
#[test]
fn a_released_head_no_longer_uses_its_nics_link_at_packet_level() {
    let (n, b) = (16usize, 4u32);
    let list = [(0, 0, n), (0, 1, n), (1, 0, 4 * n)];
    let (nf, bf) = (n as f64, b as f64);
    let (packet, flow) = both(&star(2, b), &list, NicRelease::Delivered, false);
    near(&packet[..2], &[2.0 * nf * TAU, (3.0 * nf - 2.0 * bf + 2.0) * TAU], 1e-6, "packet");
    near(&flow[..2], &[2.0 * nf * TAU, 3.0 * nf * TAU], 1e-9, "maxmin delivered");
    let (_, flow) = both(&star(2, b), &list, NicRelease::Shared, false);
    near(&flow[..2], &[2.0 * nf * TAU, (3.0 * nf - bf) * TAU], 1e-9, "maxmin shared");
    // With b = 8 the gap is 6 packets: packet 34τ, shared 40τ, delivered 48τ.
    let (packet, flow) = both(&star(2, 8), &list, NicRelease::Shared, false);
    near(&packet[1..2], &[34.0 * TAU], 1e-6, "packet, b = 8");
    near(&flow[1..2], &[40.0 * TAU], 1e-9, "maxmin shared, b = 8");
}

/// Finish times (µs) under maxmin with parameters `p`.
fn flow(m: &Machine, list: &[(usize, usize, usize)], p: MaxminParams) -> Vec<f64> {
    let mut text = String::from("transfers:\n");
    for &(s, r, n) in list {
        text += &format!("  - {{src: S{s}, dst: R{r}, size: {}B}}\n", n * 1000);
    }
    let w = workload(m, &text);
    sim::run_prepared(&w, &MaxminPrepared::new(m, &w, p).unwrap(), false).unwrap().finish.iter().map(|f| f * 1e6).collect()
}

/// Finish times (µs) under maxmin with `nic_release=shared`, `release_frees_nic=on` and store
/// and forward `sf`.
fn freed(m: &Machine, list: &[(usize, usize, usize)], sf: bool) -> Vec<f64> {
    flow(m, list, MaxminParams { nic_release: NicRelease::Shared, release_frees_nic: true, store_forward: sf, ..Default::default() })
}

/// The case above under `release_frees_nic`: A is released at 2(n − b)τ as under `shared`, and
/// its b packets left are then charged on the switch's port to R0 only (still half of it: A
/// ends at 2nτ), so B has S0's link and its own port whole from 2(n − b)τ: B done at
/// (3n − 2b)τ, 40τ with b = 4 (packet 42τ: the slot B waits for a credit and its last hop's
/// pipeline) and 32τ with b = 8 (packet 34τ). Store and forward delays A's start, so its
/// release and B, by one packet: 41τ.
#[test]
fn a_released_head_that_frees_its_nics_link_lets_the_next_message_have_it() {
    let n = 16usize;
    let nf = n as f64;
    let list = [(0, 0, n), (0, 1, n), (1, 0, 4 * n)];
    for b in [4u32, 8] {
        let bf = b as f64;
        let flow = freed(&star(2, b), &list, false);
        near(&flow[..2], &[2.0 * nf * TAU, (3.0 * nf - 2.0 * bf) * TAU], 1e-9, "maxmin shared, release_frees_nic");
        // C has half the port while A moves (n packets in 2nτ), then all of it for its other 3n: 5nτ.
        near(&flow[2..], &[5.0 * nf * TAU], 1e-9, "maxmin shared, release_frees_nic: C");
    }
    let flow = freed(&star(2, 4), &list, true);
    near(&flow[1..2], &[(3.0 * nf - 8.0 + 1.0) * TAU], 1e-9, "maxmin shared, release_frees_nic, store and forward");
}

/// With nothing released early there is nothing to move or order: each rule is refused in one line.
#[test]
fn release_rules_need_an_early_release() {
    for rule in ["release_frees_nic", "head_priority"] {
        let pairs = |v: &str| vec![("nic_release".to_string(), v.to_string()), (rule.to_string(), "on".to_string())];
        let e = MaxminParams::parse(&pairs("delivered")).unwrap_err().to_string();
        assert!(e.contains(rule) && e.contains("nic_release=shared"), "{e}");
        let p = MaxminParams::parse(&pairs("buffered")).unwrap();
        assert!(p.release_frees_nic || p.head_priority);
    }
}

/// Issue 23, round 12: `head_priority` on the third case (B leaves A's path at the switch: they
/// share only S0's link, so nothing changes, B at (3n − 2b)τ with `release_frees_nic` and
/// (3n − b)τ without) and on a variant where B follows A to R0, sharing the port to R0 that
/// holds A to half (C's). Packet: the port serves S0's input FIFO and S1's in turn, and within
/// S0's FIFO every packet of A before any of B, so A ends at 2nτ as before and B takes S0's
/// turns after it: B at 4nτ. C takes the other turns, each τ after A's or B's (first packets
/// at the switch at τ, A's served first), 2n packets by (4n + 1)τ, then the port alone for its
/// other 2n: C at (6n + 1)τ, the pipeline's one packet (first case).
/// - maxmin `shared`, with or without `release_frees_nic`: A is released at 2(n − b)τ with b
///   packets left, then A, B and C share the port in thirds until A ends at (2n + b)τ, b
///   packets late (B has b packets), and B and C halves: B at (4n − b)τ, b packets early;
///   C at 6nτ. (`release_frees_nic` the same: S0's link binds neither A nor B here.)
/// - `head_priority`: B's path shares both of A's links, so A's bytes left count on no buffer
///   past the last (the destination takes packets at once) and B waits for A's delivery:
///   A 2nτ, B 4nτ, as packet, and C 6nτ.
#[test]
fn a_head_keeps_priority_on_the_links_its_next_message_shares() {
    let n = 16usize;
    let nf = n as f64;
    let off = MaxminParams { nic_release: NicRelease::Shared, ..Default::default() };
    let on = MaxminParams { head_priority: true, ..off };
    let both_rules = MaxminParams { release_frees_nic: true, ..on };
    for b in [4u32, 8] {
        let (m, bf) = (star(2, b), b as f64);
        // The third case: nothing shared past S0's link, nothing changes.
        let third = [(0, 0, n), (0, 1, n), (1, 0, 4 * n)];
        near(&flow(&m, &third, on)[..2], &[2.0 * nf * TAU, (3.0 * nf - bf) * TAU], 1e-9, "head_priority, third case");
        near(&flow(&m, &third, both_rules)[..2], &[2.0 * nf * TAU, (3.0 * nf - 2.0 * bf) * TAU], 1e-9, "both rules, third case");
        // The variant: B to R0 behind A.
        let variant = [(0, 0, n), (0, 0, n), (1, 0, 4 * n)];
        let (packet, shared) = both(&m, &variant, NicRelease::Shared, false);
        let want = [2.0 * nf * TAU, 4.0 * nf * TAU, 6.0 * nf * TAU];
        near(&packet, &[want[0], want[1], want[2] + TAU], 1e-6, "packet, variant");
        let early = [(2.0 * nf + bf) * TAU, (4.0 * nf - bf) * TAU, 6.0 * nf * TAU];
        near(&shared, &early, 1e-9, "maxmin shared, variant");
        near(&flow(&m, &variant, MaxminParams { release_frees_nic: true, ..off }), &early, 1e-9, "release_frees_nic, variant");
        near(&flow(&m, &variant, on), &want, 1e-9, "head_priority, variant");
        near(&flow(&m, &variant, both_rules), &want, 1e-9, "both rules, variant");
    }
}

/// Round 12: the head's path and the next message's share a link past the NIC's, but the head's
/// bottleneck is further on. S0 sends A (n packets) to R0 and then B (n) to R1, both over SW1
/// and the link SW1 -> SW2; S1 (on SW2) sends C (4n) to R0, so A has half the port to R0 from
/// the start. Buffers of b packets, 2b ≤ n.
/// - Packet: A's packets cross SW1 -> SW2 as A's earlier ones leave SW2's input buffer from SW1
///   (b slots), A_k when A_{k−b} leaves it at 2(k − b)τ: A's last crosses at 2(n − b)τ, and B's,
///   behind it in SW1's FIFO, only from then, each into a slot A frees at half the port's rate
///   until A ends at 2nτ (b packets), then at the link's rate: B at (3n − b)τ plus the pipeline
///   of its three hops (packet: 43τ with n = 16, b = 4, against 44τ; A at 33τ, a hop's τ late).
/// - maxmin `shared`: A is released when its bytes left fit the buffers of SW1 and SW2 (2b),
///   at 2(n − 2b)τ; B shares S0's link and SW1 -> SW2 with A at half until 2nτ (2b packets),
///   then runs alone: B at (3n − 2b)τ, b packets early (40τ).
/// - `head_priority`: only SW2's buffer, past the last shared link, counts: A released at
///   2(n − b)τ, B at half for b packets, then alone: B at (3n − b)τ, as packet's up to the
///   pipeline.
#[test]
fn a_head_keeps_priority_up_to_the_last_link_it_shares() {
    let (n, b) = (16usize, 4u32);
    let (nf, bf) = (n as f64, b as f64);
    let m = two_switches(b);
    let list = [(0, 0, n), (0, 1, n), (1, 0, 4 * n)];
    let (packet, shared) = both(&m, &list, NicRelease::Shared, false);
    near(&packet[1..2], &[(3.0 * nf - bf) * TAU], 2.0 * TAU + 1e-6, "packet");
    near(&shared[..2], &[2.0 * nf * TAU, (3.0 * nf - 2.0 * bf) * TAU], 1e-9, "maxmin shared");
    let on = MaxminParams { nic_release: NicRelease::Shared, head_priority: true, ..Default::default() };
    near(&flow(&m, &list, on)[..2], &[2.0 * nf * TAU, (3.0 * nf - bf) * TAU], 1e-9, "head_priority");
}

/// S0 (on SW1) and its two messages' ways, for round 13: SW1 reaches SW2 through X or Y (two
/// shortest paths, so adaptive routing chooses per packet at SW1); R0 and S1 hang off X, R1
/// off SW2, S2 off SW1 and R2 off Y. Adaptive routing; the same links as `star`.
fn fork(buffer: u32) -> Machine {
    let link = "kind: network, bandwidth: 10GB/s, latency: 0s";
    let mut text = format!("name: fork\nnetwork: {{routing: adaptive, nic_scheduling: fcfs, packet: 1000B, buffer_packets: {buffer}}}\ndevices:\n");
    for d in ["SW1", "X", "Y", "SW2"] {
        text += &format!("  - {{name: {d}, kind: switch, latency: 0s}}\n");
    }
    for d in ["S0", "S1", "S2", "R0", "R1", "R2"] {
        text += &format!("  - {{name: {d}, kind: nic, latency: 0s}}\n");
    }
    text += "links:\n";
    for (a, b) in [("S0", "SW1"), ("S2", "SW1"), ("SW1", "X"), ("SW1", "Y"), ("X", "SW2"), ("Y", "SW2"), ("R0", "X"), ("S1", "X"), ("R1", "SW2"), ("R2", "Y")] {
        text += &format!("  - {{a: {a}, b: {b}, {link}}}\n");
    }
    Machine::from_text(&text, "fork").unwrap()
}

/// Round 13: two messages of one NIC share its first switch, where adaptive routing chooses per
/// packet. S0 sends A (n packets) to R0, then B (n) to R1; S1 sends C (4n) to R0, so A has half
/// of X's port to R0 (the third case's bottleneck, one switch further). A's path is one
/// (S0 → SW1 → X → R0); B has two (through X or Y). Two messages S2 → R2, 20 µs later (after
/// the others in both models), load SW1 → Y in the flow level's per-run counts, so its adaptive
/// choice puts B through X, behind A, as a large run's counts do where packets would not.
/// Buffers of b packets, τ a packet, n = 16, b = 2 and 4 (4b ≤ n: S0 stalls on A).
/// - Packet: A's packets back up from X's port to R0 (A_k leaves X at 2kτ) into X's buffer (b)
///   and SW1's (b): A_k crosses SW1 → X at 2(k − b)τ and leaves S0 at 2(k − 2b)τ, so S0 sends
///   A's last at 2(n − 2b)τ and moves on. B_1 waits for a slot of SW1's buffer, freed when
///   A_{n−b+1} crosses SW1 → X at 2(n − 2b + 1)τ; at SW1 each packet of B takes the output with
///   fewer packets queued, Y while A's wait at the port to X, and leaves SW1 at once, so B goes
///   at the link's rate from there: B_n leaves S0 at (2(n − 2b + 1) + n − 1)τ and crosses four
///   links, B at (3n − 4b + 5)τ if every packet takes Y. Once A's last packet has left the port
///   to X, a tie may send a packet of B there, where it waits for a slot of X's buffer (A's
///   leave it one per 2τ; one packet of B waits at a time, the others seeing it queued take Y):
///   each packet of B reaches R1's port at most 2τ late, and a work-conserving port's last
///   departure moves by no more than its arrivals: B in [(3n − 4b + 5)τ, (3n − 4b + 7)τ]
///   (b = 4: 37–39τ). FIFO order behind A holds only up to SW1.
/// - maxmin `shared`: A released when its bytes left fit SW1's and X's buffers (2b), at
///   2(n − 2b)τ; B through X shares S0's link and SW1 → X with A at half until A ends at 2nτ
///   (2b packets), then runs alone: B at (3n − 2b)τ (b = 4: 40τ).
/// - Round 12's `head_priority` (the shared path up to SW1 → X): A released once its bytes
///   left fit X's buffer, at 2(n − b)τ: B at (3n − b)τ (b = 4: 44τ; b = 2: 46τ).
/// - `head_priority` now: B's packets may part at SW1, so the order ends at S0's link: B as
///   under `shared`. Nearer packet than round 12's at b = 4 (40 against 44τ, packet 37–39τ),
///   farther at b = 2 (44 against 46τ, packet 45–47τ: there the gap between the two rules, b,
///   is below the pipeline's 5τ that neither flow figure carries).
#[test]
fn a_heads_priority_ends_where_its_next_messages_packets_may_part() {
    let n = 16usize;
    let nf = n as f64;
    for b in [2u32, 4] {
        let bf = b as f64;
        let m = fork(b);
        let size = n * 1000;
        let text = format!(
            "transfers:\n  - {{src: S2, dst: R2, size: {size}B, start: 20us}}\n  - {{src: S2, dst: R2, size: {size}B, start: 20us}}\n  - {{src: S0, dst: R0, size: {size}B}}\n  - {{src: S0, dst: R1, size: {size}B}}\n  - {{src: S1, dst: R0, size: {}B}}\n",
            4 * size
        );
        let w = workload(&m, &text);
        let us = |v: Vec<f64>| v.iter().skip(2).map(|f| f * 1e6).collect::<Vec<f64>>();
        let packet = us(run(&m, &w, &[]).finish);
        let low = (3.0 * nf - 4.0 * bf + 5.0) * TAU;
        assert!(packet[1] >= low - 1e-6 && packet[1] <= low + 2.0 * TAU + 1e-6, "packet, b = {b}: B at {} µs against {low} µs (+ 2τ)", packet[1]);
        let flow = |p: MaxminParams| us(sim::run_prepared(&w, &MaxminPrepared::new(&m, &w, p).unwrap(), false).unwrap().finish);
        let off = MaxminParams { nic_release: NicRelease::Shared, ..Default::default() };
        let shared = (3.0 * nf - 2.0 * bf) * TAU;
        near(&flow(off)[..2], &[2.0 * nf * TAU, shared], 1e-9, "maxmin shared");
        let on = MaxminParams { head_priority: true, ..off };
        near(&flow(on)[..2], &[2.0 * nf * TAU, shared], 1e-9, "head_priority");
        // The premise: the flow level routes B through X (A's first two links are B's), and B's
        // packets may part at SW1, the switch S0's link (entry 0) enters; A's never do.
        let prepared = MaxminPrepared::new(&m, &w, on).unwrap();
        let (a, b_path) = (prepared.flows.path(2), prepared.flows.path(3));
        assert_eq!(a[..2], b_path[..2], "B's path through X");
        assert_eq!((prepared.flows.branch_hop[2], prepared.flows.branch_hop[3]), (crate::flow::NO_HOP, 0));
        assert_eq!(prepared.flows.past_shared(2, 3), 0);
    }
}

/// An RR-2 NIC with three messages at t = 0 (round 25's cluster tester, at this file's scale):
/// S0 sends A (40 packets) to R0, B (20) to R1, C (10) to R2. The NIC sends A's and B's
/// packets in turn, each at half its link: B's last packet leaves at 40τ, and only then does C
/// take B's turn; A and C at half the link again until C's last leaves at 60τ; A alone ends at
/// 70τ. Every head is bound at the NIC, so none of its bytes wait in a buffer past it: an early
/// release before its last byte leaves would let C take a third of the link while B still has
/// bytes in the NIC (as found: B 40τ + 4.5%, C 60τ − 3.5%). Flow level exact under every
/// release rule. Packet: each last byte one store-and-forward hop (τ) after it leaves the NIC,
/// C entering the turn behind A as B's last packet is cut (39τ): A 71τ, B 41τ, C 61τ
/// (before round 27, 3τ off: its NIC took B's first packets two slots late).
#[test]
fn an_rr_n_head_bound_at_its_nic_is_released_when_its_last_byte_leaves() {
    let m = star_scheduled(3, 8, "rr-2");
    let list = [(0, 0, 40), (0, 1, 20), (0, 2, 10)];
    let want = [70.0 * TAU, 40.0 * TAU, 60.0 * TAU];
    for release in [NicRelease::Shared, NicRelease::Buffered, NicRelease::Delivered] {
        let (packet, flow) = both(&m, &list, release, false);
        near(&flow, &want, 1e-6, &format!("maxmin {release:?}"));
        near(&packet, &[71.0 * TAU, 41.0 * TAU, 61.0 * TAU], 1e-6, "packet");
    }
}

/// A NIC on two links (rails; round 27): S0 reaches SW1 (R0, R1) and SW2 (R2) by a link each,
/// the switches not joined. rr-2, A (40 packets) to R0, B (20) to R1, then C (10) to R2. A and B
/// take S0's link to SW1 in turn, each at half of it: B's last byte leaves at 40τ, and only then
/// does C enter the turn (the first two messages are A and B until B is cut whole); C alone on
/// the link to SW2 ends at 50τ, A alone on its link from 40τ at 60τ. A holder's floor counts the
/// heads on its own link: with the NIC's links taken as one (before), B was released while still
/// in the NIC (`shared` C at 42τ, `buffered` 34τ). Packet: each link its own lane; B's last packet
/// is cut at 39τ, so C starts a slot before the flow level's and ends at 50τ after its hop, B
/// and A one hop after their last bytes leave (41τ, 61τ).
#[test]
fn an_rr_n_nic_on_two_links_splits_each_among_the_heads_leaving_by_it() {
    let link = "kind: network, bandwidth: 10GB/s, latency: 0s";
    let mut text = "name: rails\nnetwork: {nic_scheduling: rr-2, packet: 1000B, buffer_packets: 8}\ndevices:\n".to_string();
    for d in ["SW1", "SW2"] {
        text += &format!("  - {{name: {d}, kind: switch, latency: 0s}}\n");
    }
    for d in ["S0", "R0", "R1", "R2"] {
        text += &format!("  - {{name: {d}, kind: nic, latency: 0s}}\n");
    }
    text += "links:\n";
    for (a, b) in [("S0", "SW1"), ("S0", "SW2"), ("R0", "SW1"), ("R1", "SW1"), ("R2", "SW2")] {
        text += &format!("  - {{a: {a}, b: {b}, {link}}}\n");
    }
    let m = Machine::from_text(&text, "rails").unwrap();
    let list = [(0, 0, 40), (0, 1, 20), (0, 2, 10)];
    let want = [60.0 * TAU, 40.0 * TAU, 50.0 * TAU];
    for release in [NicRelease::Shared, NicRelease::Buffered, NicRelease::Delivered] {
        let (packet, flow) = both(&m, &list, release, false);
        near(&flow, &want, 1e-6, &format!("maxmin {release:?}"));
        near(&packet, &[61.0 * TAU, 41.0 * TAU, 50.0 * TAU], 1e-6, "packet");
    }
}

/// The review's case (round 26): a head bound elsewhere first, then at its NIC. S0 (rr-2) sends
/// A (60 packets) to R0, B (40) to R1 and then E (10) to R2; S1 and S2 each send 10 to R1. Until
/// 30τ R1's port is shared three ways (B, C, D at a third), A has the rest of S0's link (two
/// thirds); C and D end at 30τ. Then A and B share S0's link, B's last 40 − 10 = 30 packets
/// leave at 30τ + 60τ = 90τ, and only then does E take B's turn: A and E at half the link, both
/// end at 110τ. B sent at its rate while bound at R1, so its floor counts 10 packets, not 30.
/// Flow level exact under every release rule (before the fix: `buffered` B 98τ, E 102τ).
/// Packet is not this fluid picture here: A's and B's packets share S0's input buffer at the
/// switch, so B's waits for R1 hold A's back (head-of-line blocking), and it ends B 83τ, E 103τ.
#[test]
fn an_rr_n_head_bound_elsewhere_first_counts_what_it_sent_at_its_rate() {
    let m = star_scheduled(3, 8, "rr-2");
    let list = [(0, 0, 60), (0, 1, 40), (0, 2, 10), (1, 1, 10), (2, 1, 10)];
    let want = [110.0 * TAU, 90.0 * TAU, 110.0 * TAU, 30.0 * TAU, 30.0 * TAU];
    for release in [NicRelease::Shared, NicRelease::Buffered, NicRelease::Delivered] {
        near(&flow(&m, &list, MaxminParams { nic_release: release, ..Default::default() }), &want, 1e-6, &format!("maxmin {release:?}"));
    }
}
