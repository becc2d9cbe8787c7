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

/// Node 0 with `gpus` GPUs on its one NIC over PCIe at `pcie` (efficiency 1), `others` more nodes
/// of one GPU; every NIC on the switch over 10 GB/s and 100 ns. Messages of (source GPU of node 0,
/// packets, start in ps), message i to node i + 1; each one's end in ps.
fn shared_nic_ends(scheduling: &str, gpus: usize, pcie: &str, messages: &[(usize, u64, u64)]) -> Vec<u64> {
    let (mut devices, mut links) = ("  - {name: sw0, kind: switch}\n  - {name: n0.NIC0, kind: nic}\n".to_string(), String::new());
    for g in 0..gpus {
        devices.push_str(&format!("  - {{name: n0.GPU{g}, kind: gpu, latency: 0s}}\n"));
        links.push_str(&format!("  - {{a: n0.NIC0, b: n0.GPU{g}, kind: pcie, bandwidth: {pcie}, efficiency: 1, latency: 0s}}\n"));
    }
    links.push_str("  - {a: n0.NIC0, b: sw0, kind: network, bandwidth: 10GB/s, latency: 100ns}\n");
    for i in 1..=messages.len() {
        devices.push_str(&format!("  - {{name: n{i}.GPU0, kind: gpu, latency: 0s}}\n  - {{name: n{i}.NIC0, kind: nic}}\n"));
        links.push_str(&format!("  - {{a: n{i}.NIC0, b: n{i}.GPU0, kind: pcie, bandwidth: {pcie}, efficiency: 1, latency: 0s}}\n"));
        links.push_str(&format!("  - {{a: n{i}.NIC0, b: sw0, kind: network, bandwidth: 10GB/s, latency: 100ns}}\n"));
    }
    let text = format!("name: shared\nnetwork: {{nic_scheduling: {scheduling}}}\ndevices:\n{devices}links:\n{links}");
    let m = Machine::from_text(&text, "shared").unwrap();
    let mut text = String::from("transfers:\n");
    for (i, (g, packets, start)) in messages.iter().enumerate() {
        let size = packets * PACKET;
        text.push_str(&format!("  - {{src: n0.GPU{g}, dst: n{}.GPU0, size: {size}B, overhead: 0s, start: {start}ps}}\n", i + 1));
    }
    run(&m, &workload(&m, &text), &[]).finish.iter().map(|&f| (f * 1e12).round() as u64).collect()
}

/// rr-4 on a NIC fed by two GPUs: three messages of 12 packets from GPU0 (A, B, C) and one from
/// GPU1 (D). By the definition the NIC takes one packet of each of the four in turn (its link the
/// only one shared), so the four last packets take its link in slots 45 to 48 (slot k = [kτ,
/// (k + 1)τ), the first packets having crossed PCIe in slot 0) and end 3τ + 200 ns after their
/// slot starts: 48τ to 51τ + 200 ns (19.86 to 21.09 µs). A, B and C end exactly there (slots 46 to
/// 48); D ends at 46τ + 200 ns (19.04 µs), two slots early: the NIC's turn goes over the messages
/// whose packets are in its buffer, and in the first slots GPU0's link has brought one packet of
/// each of its three messages every three slots while GPU1's link keeps D's queue full, so the
/// turn skips A, B or C there and D takes the slot. (Turns per GPU link, before round 27's mend,
/// gave D half the NIC's link: 11.26 µs.)
#[test]
fn a_nic_fed_by_two_gpus_takes_its_messages_in_turn_not_its_links() {
    let ends = shared_nic_ends("rr-4", 2, "10GB/s", &[(0, 12, 0), (0, 12, 0), (0, 12, 0), (1, 12, 0)]);
    assert_eq!(ends, [49, 50, 51, 46].map(|k| k * TAU + 200_000), "{ends:?}");
}

/// rr-2 with PCIe at 40 GB/s into a 10 GB/s NIC: A of 10 packets at 0, B of 3 at 2.5τ. The NIC's
/// link sends from τ/4 (A's first packet over PCIe) back to back. By the definition B takes the
/// NIC's next slot once it is there (from 3.25τ), then every other one: its last from 7.25τ, at
/// its GPU 1.25τ + 200 ns after it leaves the NIC: 9.5τ + 200 ns = 4.09 µs. B ends one slot
/// later, 10.5τ + 200 ns = 4.50 µs: A's packets fill the NIC's buffer for GPU0's link (its 8
/// credits, shared by the link's messages), so B's first packet crosses PCIe only when the NIC
/// takes A's next one, at 3.25τ, and takes the NIC's link from 4.25τ. A, 13 slots from τ/4 in
/// all, ends at 14.5τ + 200 ns as defined. (Binding at the PCIe link alone put B behind all of A
/// in the NIC's buffer: 6.14 µs.)
#[test]
fn a_message_arriving_at_a_nic_behind_a_faster_link_takes_the_nics_next_turn() {
    let ends = shared_nic_ends("rr-2", 1, "40GB/s", &[(0, 10, 0), (0, 3, 5 * TAU / 2)]);
    assert_eq!(ends, [14 * TAU + TAU / 2 + 200_000, 10 * TAU + TAU / 2 + 200_000]);
}
