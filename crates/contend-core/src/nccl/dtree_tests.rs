//! NCCL's double binary tree across nodes (trees.cc `ncclGetBtree`, `ncclGetDtree`; connect.cc
//! `connectTrees`): a node interior in one tree is a leaf in the other, and a graph channel's two
//! copies run one tree each through the graph channel's NIC (search.cc `ncclTopoSearchRecNet`,
//! `ncclTopoGetNetDev`: channel c at the node's NIC c mod NICs), so each NIC of a node carries
//! one interior role (its share up from two children and to its parent, and down likewise: three
//! shares each way) and one leaf role (one share each way): 4 shares of 16 channels on
//! dgx-a100, a quarter of the call, as a ring's 2(n - 1)/n over 8 NICs.

use super::*;
use crate::topology::Machine;
use std::collections::BTreeMap;

/// `nodes` copies of `machine` (a preset or a file) on one switch, NICs at `nic` (as `contend
/// nccl-tests --nodes`).
pub(super) fn comm_of(machine: &str, nodes: usize, nic: &str) -> Comm {
    let hosts = vec!["S0"; nodes].join(", ");
    let text = format!(
        "name: c\nfabric:\n  graph: {{switches: [{{name: S0}}], links: [], hosts: [{hosts}]}}\nlink: {{bandwidth: {nic}}}\nnodes: {{count: {nodes}, machine: \"{machine}\"}}\n"
    );
    let m = Machine::from_text(&text, "c").unwrap();
    let node = |k: usize| m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    Comm::new(&m, &(0..nodes).map(node).collect::<Vec<_>>(), None).unwrap()
}

fn comm(nodes: usize) -> Comm {
    comm_of("dgx-a100", nodes, "25GB/s")
}

const P4DE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/validation/machines/p4de-24xl.yaml");

/// Bytes each NIC sends and receives between nodes in the call's lowering (the NICs every
/// transfer between nodes names: it leaves by the first and enters by the last).
fn nic_loads(call: &lower::Call) -> BTreeMap<usize, (u64, u64)> {
    let (t, _) = lower::lower(call);
    let mut load = BTreeMap::<usize, (u64, u64)>::new();
    // Data only: a slot's 1-byte word back (`Dag::slot_freed`) carries none.
    for x in t.iter().filter(|x| !x.via.is_empty() && x.size > 64) {
        assert_eq!(x.via.len(), 2, "a tree head reaches its NIC by a peer path");
        load.entry(x.via[0]).or_default().0 += x.size;
        load.entry(x.via[1]).or_default().1 += x.size;
    }
    load
}

#[test]
fn nccls_trees_hang_odd_nodes_as_leaves_and_mirror_them() {
    // trees.cc's illustration of 14 ranks: 0 -> 8 -> 4, 12; 4 -> 2, 6; 2 -> 1, 3; 12 -> 10, 13.
    let p = |k| lower::dtree_parent(14, k, false);
    assert_eq!(
        [p(0), p(8), p(4), p(12), p(2), p(6), p(10), p(1), p(3), p(13)],
        [None, Some(0), Some(8), Some(8), Some(4), Some(4), Some(12), Some(2), Some(2), Some(12)]
    );
    // Its mirror of 12 ranks: 11 -> 3 -> 1, 7; 7 -> 5, 9; and its shift of 13: 1 -> 9 -> 5, 0.
    let m = |k| lower::dtree_parent(12, k, true);
    assert_eq!([m(11), m(3), m(1), m(7), m(5), m(9)], [None, Some(11), Some(3), Some(3), Some(7), Some(7)]);
    let s = |k| lower::dtree_parent(13, k, true);
    assert_eq!([s(1), s(9), s(5), s(0)], [None, Some(1), Some(9), Some(9)]);
    // On an even number of nodes a node with a child in one tree has none in the other; on any
    // number a node has at most 4 neighbours in the two trees together (the shift on an odd number
    // leaves a node with a child in both: 3 nodes, 0 -> 2 -> 1 and 1 -> 0 -> 2).
    for n in 2..=64 {
        let kids = |k: usize, mir: bool| (0..n).filter(|&j| lower::dtree_parent(n, j, mir) == Some(k)).count();
        let roles = |k: usize, mir: bool| kids(k, mir) + usize::from(lower::dtree_parent(n, k, mir).is_some());
        assert!(n % 2 == 1 || (0..n).all(|k| kids(k, false) == 0 || kids(k, true) == 0), "{n}");
        assert!((0..n).all(|k| roles(k, false) + roles(k, true) <= 4), "{n}");
    }
}

#[test]
fn a_graph_channels_copy_runs_the_other_tree() {
    // 8 graph channels run as 16: channels 0-7 tree 0, their copies 8-15 tree 1 (not odd ones).
    assert_eq!((0..16).filter(|&k| lower::tree_mirrored(k, 8, 16)).collect::<Vec<_>>(), (8..16).collect::<Vec<_>>());
    // Hopper's doubling copies the 16 again; NCCL_MAX_NCHANNELS=12 keeps 0-11, NCCL_MIN_NCHANNELS repeats them.
    assert!(lower::tree_mirrored(24, 8, 16) && !lower::tree_mirrored(16, 8, 16));
    assert!(lower::tree_mirrored(11, 8, 12) && !lower::tree_mirrored(12, 8, 12));
    let c = comm(8);
    assert_eq!((c.tuning.tree_channels, c.channels), (8, 16));
    let call = c.call(Coll::AllReduce, Algo::Tree, Proto::Simple, 1 << 30, 0);
    assert_eq!(call.ids, (0..16).map(|k| usize::from(k >= 8)).collect::<Vec<_>>());
}

#[test]
fn a_tree_channel_crosses_by_its_graph_channels_nic() {
    // p4de: 4 EFA NICs at 12.5 GB/s, one per PCIe switch beside two GPUs: NCCL's graphs have 4
    // channels (one a NIC) and the communicator runs 8. The tree graph starts its channel c at NIC
    // c mod 4 and its copy c + 4 keeps it (`connectTrees`); the chain's head is a GPU on that NIC's
    // switch, which sends and receives every byte of the channel between nodes. So each NIC
    // carries one channel of each tree (the router's nearest NIC to heads rotated by the channel
    // index gave NIC 0 channels 0, 1, 8 and 9 of 16 before round 16's count, both copies of a pair
    // in one tree under the halves rule).
    let c = comm_of(P4DE, 2, "12.5GB/s");
    let call = c.call(Coll::AllReduce, Algo::Tree, Proto::Simple, 1 << 30, 0);
    let (g, nc) = (c.tuning.tree_channels, call.rings.len());
    assert_eq!((g, nc), (4, 8));
    let nic = |k: usize, node: usize| call.exits[k][node].nic;
    let nics: Vec<usize> = (0..4).map(|i| nic(i, 0)).collect();
    for k in 0..nc {
        assert_eq!((nic(k, 0), call.ids[k]), (nics[k % g], usize::from(k >= g)), "channel {k}");
        // The head and its NIC hang off one PCIe switch (GPUs 2i and 2i + 1 beside NIC i).
        assert_eq!(call.rings[k][0] / 2, k % g, "channel {k}: head GPU {}", call.rings[k][0]);
        assert!(call.exits[k].iter().all(|x| x.leave && x.enter && x.relay.is_none()));
    }
}

#[test]
fn on_two_nodes_the_halves_rule_moves_no_nics_load() {
    // On two nodes each tree is one node under the other: every channel sends its share up and
    // down once, whichever tree it runs, so each NIC sends and receives its channels' shares each
    // way, mirrored by halves (NCCL) or by odd channels (before round 18) alike.
    for (machine, nic, nics) in [("dgx-a100", "25GB/s", 8u64), (P4DE, "12.5GB/s", 4)] {
        let c = comm_of(machine, 2, nic);
        let call = c.call(Coll::AllReduce, Algo::Tree, Proto::Simple, 1 << 30, 0);
        let mut odd = call.clone();
        odd.ids = (0..odd.ids.len()).map(|k| k % 2).collect();
        let (halves, before) = (nic_loads(&call), nic_loads(&odd));
        assert_eq!(halves, before, "{machine}");
        let nc = call.rings.len() as u64;
        let each = nc / nics * ((1u64 << 30) / nc);
        assert_eq!(halves.len() as u64, 2 * nics, "{machine}");
        assert!(halves.values().all(|&l| l == (each, each)), "{machine}: {halves:?}");
    }
}

#[test]
fn each_nic_carries_four_shares_each_way_on_4_8_and_64_nodes() {
    // Counted from the trees: NIC i of a node carries channel i (the first tree) and i + 8 (the
    // second); a node's roles in a tree are its children and its parent, one share each way each.
    // A node interior in one tree (two children and a parent) is a leaf in the other: 3 + 1.
    for nodes in [4, 8, 64] {
        let roles = |k: usize, mir: bool| {
            (0..nodes).filter(|&j| lower::dtree_parent(nodes, j, mir) == Some(k)).count() + usize::from(lower::dtree_parent(nodes, k, mir).is_some())
        };
        let most = (0..nodes).map(|k| roles(k, false) + roles(k, true)).max().unwrap();
        assert_eq!(most, 4, "{nodes}");
        let c = comm(nodes);
        let call = c.call(Coll::AllReduce, Algo::Tree, Proto::Simple, 1 << 30, 0);
        let share = (1u64 << 30) / 16;
        let load = nic_loads(&call);
        let (out, inn) = (load.values().map(|l| l.0).max().unwrap(), load.values().map(|l| l.1).max().unwrap());
        assert_eq!((out, inn), (most as u64 * share, most as u64 * share), "{nodes}");
    }
}
