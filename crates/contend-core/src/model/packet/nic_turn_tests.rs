//! A NIC's scheduling cuts packets exactly as defined, to the packet slot, against schedules
//! written out by hand (seed 003 §III-B): FCFS packetises the head message fully before the next,
//! RR takes one packet of each queued message in turn, RR-N does so over the first N queued
//! messages. "In turn" is the round-robin arbiter's rule (Dally and Towles, "Principles and
//! Practices of Interconnection Networks", chapter 18): the message that sent the last packet
//! has the lowest priority at the next slot, so a message that arrived or entered the N meanwhile
//! goes before it, behind those already waiting.
//!
//! The machine: node i's GPU reaches its NIC over PCIe at 10 GB/s (efficiency 1), the NIC the
//! switch over 10 GB/s and 100 ns; no other latency. A 4096 B packet takes τ = 409.6 ns on every
//! link, so slot k at the NIC's lane is [kτ, (k + 1)τ), and a message whose last packet is cut in
//! slot k is delivered, its own destination's links free, at (k + 4)τ + 200 ns: the PCIe link,
//! the NIC's link, the switch's link to the destination and its PCIe link, and two latencies.

use super::tests::{run, workload};
use crate::topology::Machine;

const TAU: u64 = 409_600;
const PACKET: u64 = 4096;

fn star(nodes: usize, scheduling: &str) -> Machine {
    let (mut devices, mut links) = ("  - {name: sw0, kind: switch}\n".to_string(), String::new());
    for i in 0..nodes {
        devices.push_str(&format!("  - {{name: n{i}.GPU0, kind: gpu, latency: 0s}}\n  - {{name: n{i}.NIC0, kind: nic}}\n"));
        links.push_str(&format!("  - {{a: n{i}.NIC0, b: n{i}.GPU0, kind: pcie, bandwidth: 10GB/s, efficiency: 1, latency: 0s}}\n"));
        links.push_str(&format!("  - {{a: n{i}.NIC0, b: sw0, kind: network, bandwidth: 10GB/s, latency: 100ns}}\n"));
    }
    let text = format!("name: star\nnetwork: {{nic_scheduling: {scheduling}}}\ndevices:\n{devices}links:\n{links}");
    Machine::from_text(&text, "star").unwrap()
}

/// Messages of (packets, start in ps) from n0, message i to node i + 1; each one's last slot.
fn last_slots(scheduling: &str, messages: &[(u64, u64)]) -> Vec<u64> {
    let m = star(messages.len() + 1, scheduling);
    let mut text = String::from("transfers:\n");
    for (i, (packets, start)) in messages.iter().enumerate() {
        let size = packets * PACKET;
        text.push_str(&format!("  - {{src: n0.GPU0, dst: n{}.GPU0, size: {size}B, overhead: 0s, start: {start}ps}}\n", i + 1));
    }
    let o = run(&m, &workload(&m, &text), &[]);
    o.finish
        .iter()
        .map(|&f| {
            let ps = (f * 1e12).round() as u64;
            assert_eq!((ps - 200_000) % TAU, 0, "{ps} ps is not at a slot's end: {:?}", o.finish);
            (ps - 200_000) / TAU - 4
        })
        .collect()
}

#[test]
fn a_lone_packet_is_delivered_four_slots_and_two_latencies_after_it_is_cut() {
    assert_eq!(last_slots("rr-2", &[(1, 0)]), [0]);
    assert_eq!(last_slots("fcfs", &[(5, 0)]), [4]);
}

/// rr-2, A of 40 packets and B of 20 at once: A B A B …, B's last in slot 39 (leaving the lane at
/// 40τ), then A alone to slot 59. A of 4 and B of 2: A B A B A A, B ends first.
#[test]
fn rr_2_alternates_two_messages_from_the_first_slot() {
    assert_eq!(last_slots("rr-2", &[(40, 0), (20, 0)]), [59, 39]);
    assert_eq!(last_slots("rr-2", &[(4, 0), (2, 0)]), [5, 3]);
    assert_eq!(last_slots("rr-2", &[(3, 0), (3, 0)]), [4, 5]);
}

/// rr-2, A 4, B 2, C 1: C waits until B's last packet is cut (slot 3), then takes B's place in
/// the turn: A B A B A C A.
#[test]
fn rr_2_takes_the_third_message_into_the_turn_when_one_is_cut_whole() {
    assert_eq!(last_slots("rr-2", &[(4, 0), (2, 0), (1, 0)]), [6, 3, 5]);
}

/// rr-4, six messages of 3 packets: A B C D A B C D, then A's last (slot 8) lets E in behind B, C
/// and D, B's (9) lets F in: C D E F E F E F: A 8, B 9, C 10, D 11, E 16, F 17.
/// Unequal, A 5 B 1 C 3 D 2 E 2 F 1: A B C D A E C D A E C F A A (B's last in slot 1 lets E in
/// behind C, D and A; D's in slot 7 lets F in).
#[test]
fn rr_4_with_more_messages_than_four() {
    assert_eq!(last_slots("rr-4", &[(3, 0); 6]), [8, 9, 10, 11, 16, 17]);
    assert_eq!(last_slots("rr-4", &[(5, 0), (1, 0), (3, 0), (2, 0), (2, 0), (1, 0)]), [13, 1, 10, 7, 9, 11]);
}

/// rr-2, A of 10 at 0, B of 3 at 2.5τ while A's third packet goes: A just sent, so B takes slot 3:
/// A A A B A B A B A A A A A.
#[test]
fn a_message_arriving_while_another_injects_takes_the_next_slot() {
    assert_eq!(last_slots("rr-2", &[(10, 0), (3, 5 * TAU / 2)]), [12, 7]);
    // rr: the same; fcfs: B waits for all of A.
    assert_eq!(last_slots("rr", &[(10, 0), (3, 5 * TAU / 2)]), [12, 7]);
    assert_eq!(last_slots("fcfs", &[(10, 0), (3, 5 * TAU / 2)]), [9, 12]);
}

/// rr, three messages of 2 packets: A B C A B C. fcfs, A 2 and B 2: A A B B.
#[test]
fn rr_and_fcfs_as_defined() {
    assert_eq!(last_slots("rr", &[(2, 0), (2, 0), (2, 0)]), [3, 4, 5]);
    assert_eq!(last_slots("fcfs", &[(2, 0), (2, 0)]), [1, 3]);
    assert_eq!(last_slots("rr-1", &[(2, 0), (2, 0)]), [1, 3]);
}
