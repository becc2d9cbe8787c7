//! Where packets may part, checked against the fabrics' wiring: a k = 4 fat-tree (two
//! aggregates above each leaf) and a dragonfly of five groups.

use super::NO_HOP;
use crate::model::maxmin::{MaxminParams, MaxminPrepared};
use crate::params::NicRelease;
use crate::topology::{LinkKind, Machine};
use crate::workload::{Workload, WorkloadSpec};

/// Per message (src, dst GPU names): its first network hop's index (the link entering its
/// first switch) and the index `first_branches` gives, under `routing`.
fn branches(fabric: &str, routing: &str, pairs: &[(&str, &str)]) -> Vec<(u32, u32)> {
    let text =
        format!("name: b\nfabric:\n  {fabric}\nlink: {{bandwidth: 10GB/s}}\nnodes: {{gpus: 1}}\nnetwork: {{routing: {routing}, nic_scheduling: fcfs}}\n");
    let m = Machine::from_text(&text, "b").unwrap();
    let mut list = String::from("transfers:\n");
    for (s, d) in pairs {
        list += &format!("  - {{src: {s}, dst: {d}, size: 64KiB}}\n");
    }
    let w = Workload::resolve(&WorkloadSpec::from_text(&list, "w").unwrap(), &m, "w").unwrap();
    let p = MaxminParams { nic_release: NicRelease::Shared, head_priority: true, ..Default::default() };
    let flows = MaxminPrepared::new(&m, &w, p).unwrap().flows;
    (0..pairs.len())
        .map(|f| {
            let first = flows.plan(f).hops.iter().position(|h| m.links[h.link].kind == LinkKind::Network).unwrap() as u32;
            (first, flows.branch_hop[f])
        })
        .collect()
}

/// Node i's NIC hangs off leaf i / 2 (two nodes a leaf, two leaves a pod). Adaptive and spray:
/// a message to the other node of its leaf goes leaf → NIC, no choice; one to another leaf of
/// its pod or to another pod may climb to either of the leaf's two aggregates, so its packets
/// part at its leaf, the switch its first network link enters. ECMP: one path per message.
#[test]
fn on_a_fat_tree_packets_part_at_the_leaf_of_a_message_that_climbs() {
    let ft = "fat_tree: {radix: 4, pods: 2}";
    let pairs = [("n0.GPU0", "n1.GPU0"), ("n0.GPU0", "n2.GPU0"), ("n0.GPU0", "n5.GPU0")];
    for routing in ["adaptive", "spray"] {
        let got = branches(ft, routing, &pairs);
        assert_eq!(got[0].1, NO_HOP, "{routing}: same leaf");
        assert_eq!(got[1].1, got[1].0, "{routing}: same pod");
        assert_eq!(got[2].1, got[2].0, "{routing}: other pod");
    }
    assert!(branches(ft, "ecmp", &pairs).iter().all(|&(_, b)| b == NO_HOP));
}

/// Five groups of four routers (a = 4, h = 1: each router one global link, each pair of groups
/// one), p = 2 nodes a router, node i on router i / 2. PAR, UGAL and Valiant choose at the first
/// router of a message between groups (minimal or through one of three other groups); inside a
/// group a packet goes to its last router directly. Minimal: one path per message. Adaptive
/// with one global link joining two groups: no choice anywhere.
#[test]
fn on_a_dragonfly_packets_part_at_the_first_router_of_a_message_between_groups() {
    let df = "dragonfly: {p: 2, a: 4, h: 1, groups: 5}";
    let pairs = [("n0.GPU0", "n3.GPU0"), ("n0.GPU0", "n8.GPU0"), ("n0.GPU0", "n39.GPU0")];
    for routing in ["par", "ugal", "valiant"] {
        let got = branches(df, routing, &pairs);
        assert_eq!(got[0].1, NO_HOP, "{routing}: inside a group");
        assert_eq!(got[1].1, got[1].0, "{routing}: between groups");
        assert_eq!(got[2].1, got[2].0, "{routing}: between groups");
    }
    for routing in ["minimal", "adaptive"] {
        assert!(branches(df, routing, &pairs).iter().all(|&(_, b)| b == NO_HOP), "{routing}");
    }
}
