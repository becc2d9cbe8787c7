//! Across nodes, the NIC each ring channel crosses between nodes by, and the GPU that posts its
//! send there (PXN), as NCCL's ring search through the network picks them (search.cc,
//! paths.cc; the same rule in v2.20.3, v2.21.5 and v2.30.7 but where said; v2.18.5 and v2.19.3
//! have no pairs, `Version::cross_nic_pairs`):
//! - the search lists the node's NICs GPU by GPU, each GPU's nearest first
//!   (`ncclTopoSelectNets`), and starts channel c at NIC c mod NICs (`ncclTopoSearchRecNet`:
//!   `nets[(nChannels + i) % netCount]`, i = 0 first), entering at the NIC's local GPU first;
//!   `connectRings` copies channel c to c + channels, NIC and all;
//! - the ring leaves the node from the last GPU of its chain, whose path to the NIC it leaves by
//!   must be no worse than the path type the search allows; it allows the best GPU-to-NIC type
//!   first, at least PXN, and widens it only while it has no rings (`ncclTopoCompute`);
//! - with crossNic 0, tried first, it leaves by the NIC it entered by (`ncclTopoSearchCheckNet`);
//!   NCCL_CROSS_NIC=2 (the default) then tries rings that leave by another NIC at the narrower
//!   types, in pairs (channel 2k leaves by any NIC, 2k + 1 enters by that one and leaves by 2k's:
//!   `ncclTopoSearchRecNet`, `ncclTopoSearchCheckNet`), and keeps them where they carry more;
//!   NCCL_CROSS_NIC=1 searches so from the first search, unpaired but in 2.20.3 to 2.22.3 (`Cross`);
//! - PXN (NCCL_PXN_DISABLE=0, the default since 2.12): a GPU whose own path to a NIC is worse
//!   than PXN reaches it through the NIC's local GPU, when that GPU is within PXB of the NIC (2.30:
//!   within P2C, NCCL_PXN_C2C=1 from 2.28) and an NVLink peer (paths.cc `ncclTopoComputePaths`,
//!   "PXN = PCI + NVLink", GPU to NIC only): the leaving GPU writes its step over NVLink into that
//!   GPU's memory, whose NIC sends it (net.cc: the proxy rank is the intermediate GPU,
//!   `ncclTopoGetIntermediateRank`). Its other condition, a peer path of more bandwidth than the
//!   GPU's own within PXN, is not restated (no machine here has one).
//!
//! Here each channel takes, of the one-node search's rings, the ring and the rotation whose
//! entry and leaving GPUs have the best path types to the channel's NICs, each ring used by an
//! equal share of the channels, so that the links inside a node carry what the search fitted (on
//! an NVSwitch node a ring may run reversed, which loads the same links alike). The rings leave
//! by another NIC (crossNic 2) where that saves some NIC's channels a crossing of a CPU link (SYS:
//! an exit from across it, or a chain that crosses it out and back): NCCL's figure for that link
//! (topo.h: ARM 6, Intel 6 to 40, AMD 16 GB/s) is below the channels' bandwidth through the NICs,
//! so the graph whose channels cross it less carries more, and NCCL keeps it.

use super::topo::{self, PathType};
use super::tuning;
use crate::flow::router::Router;
use crate::topology::{LinkKind, Machine};

/// Where a channel crosses a node's boundary: the NIC it enters by, the NIC it leaves by (the
/// same but where the rails cross: `Rails::cross`), the local GPU whose NIC posts the leaving send for the channel's
/// leaving GPU (PXN), if any, and whether the leaving GPU (or its relay) and the entry GPU reach
/// their NICs by a peer path inside the node. Where one does not (a GPU on the other socket
/// without PXN: NCCL would stage through host memory, which is not lowered), that end takes the
/// router's nearest NIC, as before.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Exit {
    pub nic: usize,
    pub out: usize,
    pub relay: Option<usize>,
    pub leave: bool,
    pub enter: bool,
}

/// Each channel's ring over all ranks and, across nodes, per node where it crosses (empty: the
/// router's nearest NIC, as on one node or a node without NICs).
#[derive(Clone, Debug, Default)]
pub struct Rails {
    pub rings: Vec<Vec<usize>>,
    pub exits: Vec<Vec<Exit>>,
    /// Whether the search lets the channels leave by another NIC than they enter by: crossNic 2
    /// where `build` finds it carries more, in pairs (releases before 2.20.3 search no pairs:
    /// `Version::cross_nic_pairs`); crossNic 1 wherever a node has several NICs.
    pub cross: bool,
}

/// What the release that runs decides of the rails: PXN on (NCCL_PXN_DISABLE=0), P2C with PXN
/// through it (`Version::p2c`), and the ring search NCCL_CROSS_NIC gives (`Cross`).
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub pxn: bool,
    pub p2c: bool,
    pub cross: Cross,
}

/// The ring search NCCL_CROSS_NIC gives where a node has several NICs (search.cc
/// `ncclTopoCompute`: `graph->crossNic = crossNic == 1 ? 1 : 0` on the first search, v2.18.5-1
/// to v2.30.7-1; the NIC a channel leaves by is the first of the leaving GPU's list
/// (`ncclTopoSelectNets(typeInter, g)`: its own NICs in `ncclTopoGetLocalNet`'s order, then the
/// others by path type) that `ncclTopoSearchCheckNet` lets through and `ncclTopoFollowPath` has
/// room for, in `ncclTopoSearchRecGpu` at `backToNet`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cross {
    /// crossNic 2 (the default; 0 where it gives the same graph): the same NIC first, then
    /// another in pairs where that saves a CPU-link crossing (above).
    Search,
    /// crossNic 1 in v2.19.3-1 and from v2.23.4-1 (v2.18.5-1 at its first speed only, run
    /// where its graph is crossNic 2's: `Version::cross_nic_one_kept`): from the first search
    /// `ncclTopoSearchCheckNet` (v2.30.7-1; the `crossNic != 1` test in
    /// `ncclTopoSearchRecGpu` before 2.23) constrains nothing on the leaving NIC and
    /// `ncclTopoSearchRecNet` pairs nothing (its `nChannels & 1` test is for crossNic 2 only
    /// from 2.23.4): channel c enters by the first NIC from c mod NICs with room and leaves by
    /// its leaving GPU's first NIC with room.
    Free,
    /// crossNic 1 in v2.20.3-1 to v2.22.3-1: as `Free`, but paired from the first search
    /// (`ncclTopoSearchRecNet` and `ncclTopoSearchRecGpu`: `graph->crossNic && (graph->nChannels
    /// & 1)`): channel 2k + 1 enters by the NIC 2k left by and leaves by the one 2k entered by.
    Paired,
}

/// The rails of `channels` channels over `rings` (the one-node search's, as local positions
/// into each node's GPUs), channel c from NIC index (c mod `net_channels`) mod NICs.
#[allow(clippy::too_many_arguments)]
pub fn build(
    m: &Machine,
    router: &Router,
    topo: &topo::Topo,
    nodes_gpus: &[Vec<usize>],
    rings: &[Vec<usize>],
    channels: usize,
    net_channels: usize,
    rule: Rule,
) -> Rails {
    let (nodes, ppn, searched) = (nodes_gpus.len(), nodes_gpus[0].len(), rings.len());
    let global =
        |local: &[usize], shift: usize| -> Vec<usize> { (0..nodes).flat_map(|node| (0..ppn).map(move |k| node * ppn + local[(k + shift) % ppn])).collect() };
    // Every node alike (as the rings assume): the first node's order, each NIC by its name in
    // the others (n3.NIC5 for n0.NIC5), searched afresh only where a name is missing.
    let nets: Vec<Vec<usize>> = if nodes > 1 {
        let first = node_nets(m, router, topo, &nodes_gpus[0]);
        let from = super::node_prefix(&m.devices[nodes_gpus[0][0]].name);
        nodes_gpus
            .iter()
            .map(|g| {
                let to = super::node_prefix(&m.devices[g[0]].name);
                let same: Option<Vec<usize>> = first.iter().map(|&d| m.device(&format!("{to}{}", &m.devices[d].name[from.len()..]))).collect();
                same.unwrap_or_else(|| node_nets(m, router, topo, g))
            })
            .collect()
    } else {
        Vec::new()
    };
    if nodes == 1 || nets.iter().any(|v| v.is_empty() || v.len() != nets[0].len()) {
        return Rails { rings: rotated(rings, nodes, ppn, channels), exits: Vec::new(), cross: false };
    }
    // Per NIC index, on the first node (every node alike): each local GPU's path type to it
    // (P2C where the release has it), the NIC's local GPU (`ncclTopoGetLocalGpu`: the entry NCCL
    // tries first), the GPU PXN relays through (that GPU, where within PXB, or P2C), and each
    // GPU's leaving type and relay.
    let first = &nodes_gpus[0];
    let count = nets[0].len();
    let ty: Vec<Vec<PathType>> = (0..ppn)
        .map(|k| {
            nets[0]
                .iter()
                .map(|&d| gpu_nic(m, router, topo, first[k], d).map_or(PathType::Sys, |p| if rule.p2c && p.3 { PathType::P2c } else { p.0 }))
                .collect()
        })
        .collect();
    let local: Vec<Option<usize>> = (0..count).map(|i| local_gpu(m, router, topo, first, nets[0][i])).collect();
    let relay_within = if rule.p2c { PathType::P2c } else { PathType::Pxb };
    let owner: Vec<Option<usize>> = (0..count).map(|i| local[i].filter(|&k| ty[k][i] <= relay_within)).collect();
    let leave = |k: usize, i: usize| -> (PathType, Option<usize>) {
        match owner[i] {
            Some(p) if rule.pxn && ty[k][i] > PathType::Pxn && p != k && topo.paths[k][p].as_ref().is_some_and(|x| x.kind == PathType::Nvl) => {
                (PathType::Pxn, Some(p))
            }
            _ => (ty[k][i], None),
        }
    };
    // NCCL searches the ring graph's channels and copies channel c to c + channels, ring, NIC
    // and all (`connectRings`); the copies also let identical channels run merged.
    let searched_net = net_channels.clamp(1, channels.max(1));
    let cap = searched_net.div_ceil(searched);
    let per_nic = searched_net.div_ceil(count);
    let mut uses = vec![0usize; searched];
    // On an NVSwitch node (every pair of GPUs one hop through a switch) a ring runs either way at
    // the same link loads: each GPU sends one and receives one share through its own NVLinks. NCCL
    // searches each channel's chain afresh; here a ring may run reversed there, so that a NIC's
    // channels can enter at its local GPU and leave from the GPU before it whichever way round
    // the one-node search found it. Elsewhere (DGX-1's cube mesh) a reversed ring would load the
    // other direction of links the search fitted, so rings keep their way.
    let switched = topo.paths.iter().flatten().flatten().all(|p| p.kind == PathType::Nvl && p.hops.len() == 2);
    let orders: Vec<(usize, bool, Vec<usize>)> = (0..searched)
        .flat_map(|r| {
            let back: Vec<usize> = rings[r].iter().rev().copied().collect();
            std::iter::once((r, false, rings[r].clone())).chain(switched.then_some((r, true, back)))
        })
        .collect();
    let ends = |o: &[usize], s: usize| (o[s], o[(s + ppn - 1) % ppn]);
    // How often a channel entering by NIC i and leaving by NIC j along `o` from position `s`
    // crosses a CPU link on a node (SYS: its chain's steps, its entry and its exit), and the NIC
    // a GPU would leave by under crossNic 2, its nearest. crossNic 2 where it saves a crossing
    // for some NIC (above).
    let crossings = |o: &[usize], s: usize, i: usize, j: usize| {
        let (entry, exit) = ends(o, s);
        let chain = (0..ppn - 1).filter(|&k| topo.paths[o[(s + k) % ppn]][o[(s + k + 1) % ppn]].as_ref().is_none_or(|p| p.kind >= PathType::Sys)).count();
        chain + usize::from(ty[entry][i] >= PathType::Sys) + usize::from(leave(exit, j).0 >= PathType::Sys)
    };
    let nearest_out = |x: usize| (0..count).min_by_key(|&j| leave(x, j).0).unwrap_or(0);
    let least = |i: usize, two: bool| {
        orders
            .iter()
            .flat_map(|(_, _, o)| (0..ppn).map(move |s| (o, s)))
            .map(|(o, s)| crossings(o, s, i, if two { nearest_out(ends(o, s).1) } else { i }))
            .min()
    };
    let cross = count > 1 && (rule.cross != Cross::Search || (0..count).any(|i| least(i, true) < least(i, false)));
    let paired = rule.cross != Cross::Free;
    // Per channel searched, the NIC indices it enters and leaves by; per NIC, how many do.
    let mut by: Vec<(usize, usize)> = Vec::new();
    let (mut entries, mut exits) = (vec![0usize; count], vec![0usize; count]);
    let mut out = Rails { cross, ..Rails::default() };
    for c in 0..channels {
        if c >= searched_net {
            let (ring, exits) = (out.rings[c % searched_net].clone(), out.exits[c % searched_net].clone());
            out.rings.push(ring);
            out.exits.push(exits);
            continue;
        }
        // The NICs it enters and leaves by: NIC c mod NICs (the next with room, where the rails
        // cross) and the same; where they cross in pairs an odd channel enters by the NIC the
        // channel before left by and leaves by the one it entered by, and any other leaves by its
        // leaving GPU's nearest NIC with room, its own first (`ncclTopoGetLocalNet`: the NIC
        // whose local GPU it is), then the next from the one it entered by.
        let pair = cross && paired && c % 2 == 1;
        let i = match (cross, pair) {
            (true, true) => by[c - 1].1,
            (true, false) => (0..count).map(|k| (c + k) % count).find(|&k| entries[k] < per_nic).unwrap_or(c % count),
            _ => c % count,
        };
        let exit_nic = |x: usize| -> usize {
            match (cross, pair) {
                (true, true) => by[c - 1].0,
                (true, false) => (0..count).min_by_key(|&j| (exits[j] >= per_nic, leave(x, j).0, local[j] != Some(x), (j + count - i) % count)).unwrap_or(i),
                _ => i,
            }
        };
        let cost = |o: &[usize], s: usize| {
            let (entry, exit) = ends(o, s);
            let j = exit_nic(exit);
            let (a, b) = (ty[entry][i], leave(exit, j).0);
            // Fewest CPU-link crossings (NCCL's figure for a CPU link is its narrowest, so its
            // channels are the fewest that cross one); the worse end sets the path type the search
            // needs; NCCL tries the NIC's local GPU as the entry first and keeps the first of
            // equal rings (`ncclTopoCompareGraphs`).
            (crossings(o, s, i, j), a.max(b), a as u16 + b as u16, Some(entry) != local[i])
        };
        let (k, s) = (0..orders.len())
            .filter(|&k| uses[orders[k].0] < cap)
            .flat_map(|k| (0..ppn).map(move |s| (k, s)))
            .min_by_key(|&(k, s)| {
                let (r, rev, o) = &orders[k];
                (cost(o, s), uses[*r], *rev, (r + searched - c % searched) % searched, (s + ppn - c % ppn) % ppn)
            })
            .unwrap_or((2 * (c % searched) * usize::from(switched) + (c % searched) * usize::from(!switched), c % ppn));
        let (r, order) = (orders[k].0, &orders[k].2);
        uses[r] += 1;
        let (entry, exit) = ends(order, s);
        let j = exit_nic(exit);
        entries[i] += 1;
        exits[j] += 1;
        by.push((i, j));
        let relay = leave(exit, j).1;
        let peer = |g: usize, nic: usize| gpu_nic(m, router, topo, g, nic).is_some_and(|p| p.2);
        out.rings.push(global(order, s));
        out.exits.push(
            (0..nodes)
                .map(|node| {
                    let (g, nic, leaves) = (&nodes_gpus[node], nets[node][i], nets[node][j]);
                    let relay = relay.map(|p| g[p]);
                    Exit { nic, out: leaves, relay, leave: peer(relay.unwrap_or(g[exit]), leaves), enter: peer(g[entry], nic) }
                })
                .collect(),
        );
    }
    out
}

impl Rails {
    /// NCCL's `sameChannels` for these rails' first `graph_channels` channels (the ring graph's;
    /// the rest are its copies): whether every one crosses the GPUs in channel 0's order. NCCL's
    /// search tries the same channels first (search.cc `ncclTopoSearchRecNet`: each channel
    /// replays the previous one's GPUs, `FORCED_ORDER_REPLAY`) and searches different ones
    /// (`sameChannels = 0`) only where that graph falls short (`ncclTopoCompute`, v2.18.5 to
    /// v2.30.7), so rails whose channels enter a node at different GPUs are a `sameChannels` 0 graph.
    pub fn same_channels(&self, graph_channels: usize) -> bool {
        let n = graph_channels.min(self.rings.len());
        self.rings[..n].windows(2).all(|w| w[0] == w[1])
    }

    /// Where a tree channel crosses between nodes: NCCL's tree graph is searched as the ring's,
    /// through the same NICs (search.cc `ncclTopoSearchRecNet`: channel c starts at NIC c mod
    /// NICs), each channel's chain on a node entering at the GPU the search reached from its NIC
    /// (the ring's entry GPU, first on the node in `rings`), which also goes back to that NIC
    /// (`ncclTopoSearchParams`: backToNet 0 for the tree patterns; with crossNic 0 the same
    /// NIC, `ncclTopoSearchCheckNet`), and every send of the channel to another node takes the
    /// graph channel's NIC (`ncclTopoGetNetDev`: channel mod the graph's channels), NCCL
    /// v2.30.7. So the head both leaves and enters by the NIC, with no relay; where it has no
    /// peer path to it, the router's nearest NIC, as a ring's end. (BALANCED_TREE's second GPU
    /// sends to one child through the same NIC: the NIC's load is the same; its PCIe hop is
    /// the head's here.)
    pub fn tree_exits(&self) -> impl Iterator<Item = Vec<Exit>> + '_ {
        self.exits.iter().map(|e| e.iter().map(|x| Exit { nic: x.nic, out: x.nic, relay: None, leave: x.enter, enter: x.enter }).collect())
    }
}

/// Channel c's ring enters and leaves each node at GPUs rotated by c, so that the channels
/// spread over the GPUs and the NICs nearest them; on one node nothing rotates. The rails
/// where a node has no NIC (the trees' chains too: their heads then take the router's
/// nearest NIC).
pub fn rotated(rings: &[Vec<usize>], nodes: usize, ppn: usize, channels: usize) -> Vec<Vec<usize>> {
    let searched = rings.len();
    (0..channels)
        .map(|c| {
            let (local, shift) = (&rings[c % searched], if nodes > 1 { c % ppn } else { 0 });
            (0..nodes).flat_map(|node| (0..ppn).map(move |k| node * ppn + local[(k + shift) % ppn])).collect()
        })
        .collect()
}

/// NCCL's path type and hop count from GPU `g` to NIC `nic` inside their node
/// (`topo::classify`), whether it is a peer path, and whether it is P2C where the release has it
/// (`topo::p2c`; its type here is PHB, as before 2.27); None: no path.
fn gpu_nic(m: &Machine, router: &Router, topo: &topo::Topo, g: usize, nic: usize) -> Option<(PathType, usize, bool, bool)> {
    // Inside the node only: where no peer path reaches the NIC in the node, the router's path
    // would go out through the nearest NIC and over the network.
    let inside = |peer: bool| router.path(g, nic, peer).filter(|h| h.iter().all(|h| m.links[h.link].kind != LinkKind::Network));
    let (hops, peer) = match inside(true) {
        Some(h) => (h, true),
        None => (inside(false)?, false),
    };
    let n = hops.len();
    let p2c = peer && topo::p2c(m, topo.cc, &hops);
    Some((topo::classify(m, &topo.link_bw, hops, peer).kind, n, peer, p2c))
}

/// The nearest NICs of GPU `g` (best path type, then fewest hops), in machine order, among `nics`.
fn nearest(m: &Machine, router: &Router, topo: &topo::Topo, g: usize, nics: &[usize]) -> Vec<usize> {
    let key = |d: usize| gpu_nic(m, router, topo, g, d).map_or((u8::MAX, usize::MAX), |(t, h, ..)| (t as u8, h));
    let best = nics.iter().map(|&d| key(d)).min();
    nics.iter().copied().filter(|&d| Some(key(d)) == best).collect()
}

/// NCCL's local GPU of a NIC (`ncclTopoGetLocalGpu`), as a position in `gpus`: channel by channel,
/// the first GPU whose own NIC for that channel it is (`ncclTopoGetLocalNet`: of the g GPUs that
/// share a GPU's n nearest NICs, GPU d starts at NIC d mod g, bit-mirrored where n is a power of
/// two, and takes the next of its ceil(n / g) NICs each channel). On two GPUs and two NICs under
/// one switch GPU 0 owns NIC 0 and GPU 1 NIC 1, so the channels of each NIC enter at a different GPU.
fn local_gpu(m: &Machine, router: &Router, topo: &topo::Topo, gpus: &[usize], nic: usize) -> Option<usize> {
    let prefix = super::node_prefix(&m.devices[nic].name);
    let mut nics: Vec<usize> = super::network_nics(m, prefix).map(|(d, _)| d).collect();
    nics.sort_unstable();
    nics.dedup();
    let near: Vec<Vec<usize>> = gpus.iter().map(|&g| nearest(m, router, topo, g, &nics)).collect();
    let mirror = |v: usize, n: usize| (0..n.trailing_zeros()).filter(|b| v >> b & 1 == 1).map(|b| n >> 1 >> b).sum::<usize>();
    let candidates: Vec<usize> = (0..gpus.len()).filter(|&k| near[k].contains(&nic)).collect();
    (0..tuning::MAX_CHANNELS).find_map(|c| {
        candidates.iter().copied().find(|&k| {
            let own = &near[k];
            let sharing = (0..gpus.len()).filter(|&j| near[j].first() == own.first()).count().max(1);
            let per = own.len().div_ceil(sharing);
            let mut net = k % sharing;
            if own.len().is_power_of_two() {
                net = mirror(net, own.len());
            }
            own[(net + c % per) % own.len()] == nic
        })
    })
}

/// Whether NCCL's NVLS graph reaches every one of `nics` within PXB (its `typeInter`): the NVLS
/// search heads each NIC at a GPU near it (search.cc `ncclTopoSearchRecNet`, "NIC:GPU
/// combinations to compute the heads", the NIC's local GPU), so the NIC farthest from its
/// nearest GPU sets the type.
pub fn nics_within_pxb(m: &Machine, router: &Router, topo: &topo::Topo, gpus: &[usize], nics: &[usize]) -> bool {
    nics.iter().all(|&d| gpus.iter().filter_map(|&g| gpu_nic(m, router, topo, g, d)).any(|(t, ..)| t <= PathType::Pxb))
}

/// A node's network devices in NCCL's order (`node_nets`), each with its NIC's local GPU as a
/// position in `gpus` (`local_gpu`): what NCCL's NVLS search heads its channels at (`nvls_heads`).
pub fn local_gpus(m: &Machine, router: &Router, topo: &topo::Topo, gpus: &[usize]) -> Vec<(usize, Option<usize>)> {
    node_nets(m, router, topo, gpus).into_iter().map(|d| (d, local_gpu(m, router, topo, gpus, d))).collect()
}

/// A node's NICs in NCCL's order, one entry per network device NCCL sees (`search_nics`, each
/// NIC repeated `net_devices` times).
fn node_nets(m: &Machine, router: &Router, topo: &topo::Topo, gpus: &[usize]) -> Vec<usize> {
    search_nics(m, router, topo, gpus).into_iter().flat_map(|d| std::iter::repeat_n(d, net_devices(&m.devices[d]))).collect()
}

/// How many network devices NCCL sees in a NIC: one a port (`Device::ports`), or one for the
/// whole NIC where its plugin schedules its ports per message (`Device::stripe_threshold`:
/// aws-ofi-nccl reports its rails as one device).
pub fn net_devices(nic: &crate::topology::Device) -> usize {
    if nic.stripe_threshold.is_some() {
        1
    } else {
        nic.ports.max(1) as usize
    }
}

/// The NICs of a node that NCCL's network search lists (`ncclTopoSelectNets`, NCCL v2.30.7
/// src/graph/search.cc:541-589; the same rule in v2.19.3, v2.20.5 and v2.21.5), in its order,
/// each NIC once: GPU by GPU in rank order, each GPU's nearest NICs (best path type, then fewest
/// hops), then the others in machine order. The others are listed only up to the search's path
/// type (search.cc:565-573, `paths[n].type <= typeInter`), which `ncclTopoCompute` widens from
/// the best GPU-to-NIC type and past PXN only while it has found no ring (search.cc:1229-1232).
/// So where some NIC is within PXB of a GPU (PXN too is within PXB of its relay), a NIC farther
/// from every GPU (a storage or management NIC on its own host bridge, NVIDIA/nccl#933) is not
/// listed, or, listed as a GPU's own, is not reached: `ncclTopoFollowPath` refuses a path above
/// typeInter (search.cc:149). It carries no channel, and NCCL's ring graph counts neither its
/// channels nor its bandwidth.
pub fn search_nics(m: &Machine, router: &Router, topo: &topo::Topo, gpus: &[usize]) -> Vec<usize> {
    let prefix = super::node_prefix(&m.devices[gpus[0]].name);
    let mut nics: Vec<usize> = super::network_nics(m, prefix).map(|(d, _)| d).collect();
    nics.sort_unstable();
    nics.dedup();
    nics.retain(|&d| gpus.iter().any(|&g| gpu_nic(m, router, topo, g, d).is_some()));
    let key = |g: usize, d: usize| gpu_nic(m, router, topo, g, d).map_or((u8::MAX, usize::MAX), |(t, h, ..)| (t as u8, h));
    let near = nics.iter().any(|&d| gpus.iter().any(|&g| key(g, d).0 <= PathType::Pxb as u8));
    let mut order: Vec<usize> = Vec::new();
    for &g in gpus {
        let best = nics.iter().map(|&d| key(g, d)).min();
        for &d in nics.iter().filter(|&&d| Some(key(g, d)) == best) {
            if !order.contains(&d) {
                order.push(d);
            }
        }
    }
    for &d in &nics {
        if !order.contains(&d) {
            order.push(d);
        }
    }
    order.retain(|&d| !near || gpus.iter().any(|&g| key(g, d).0 <= PathType::Pxb as u8));
    order
}
