//! NCCL's NVLS graph across nodes: which GPUs head NVLS-tree's channels and the graph's two
//! speeds (search.cc `ncclTopoCompute` with the NVLS pattern and a network, restated from
//! v2.30.7-1 and read at every tag from v2.18.5-1):
//! - "NVLS search only tries to find NIC:GPU combinations to compute the heads"
//!   (`ncclTopoSearchRecNet`): channel c starts at the c-th network device of
//!   `ncclTopoSelectNets`'s order and heads at that device's local GPU (`ncclTopoGetLocalGpu`),
//!   at most one channel a device (`nChannels < netCount`) and one a GPU (the duplicate-head
//!   check, from 2.22.3; before it channel c takes device c alone, `i > 0` skipped);
//! - a channel needs its device to carry the inter speed and every GPU's NVLink to the switch to
//!   carry the intra speed each way, twice for the head (`ncclTopoSearchTryNvls`);
//! - pass 1 starts at the first inter-node speed no more than the best GPU-to-NIC path
//!   (`system->maxBw`) and goes down while the next speed is above 0.49 of the best found,
//!   keeping more channels, or (from 2.19.3) more channels x inter speed
//!   (`ncclTopoCompareGraphs`), and stops at `min(NCCL_MAX_NVLS_ARITY, GPUs)` channels; both
//!   speeds are the speed searched, so the intra speed never exceeds the NIC's;
//! - pass 2 (from 2.19.3) raises the inter speed alone, with the same channels, while it is under
//!   twice the intra one; 2.18.5 raises the intra speed instead, which its comparison (more
//!   channels only) never keeps.
//!
//! So on nodes with fewer NICs than GPUs NCCL has a head per NIC (NVIDIA/nccl#1519 prints such a
//! graph, "Pattern 5 ... nChannels 7, bw 3.000000/3.000000", with "NVLS Head" lines for 7 GPUs).

use super::tuning::MAX_NVLS_ARITY;
use super::versions::Version;

/// A network device of a node as NCCL's NVLS search sees it, in `ncclTopoSelectNets`'s order:
/// its bandwidth (NCCL's GB/s, its path from a GPU included) and its local GPU (a position in
/// the node; None: no GPU has it as its own).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Net {
    pub bw: f64,
    pub local: Option<usize>,
}

/// NCCL's NVLS graph across nodes: the heads (positions in the node, in channel order) and the
/// intra and inter speeds (GB/s a channel).
#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    pub heads: Vec<usize>,
    pub intra: f64,
    pub inter: f64,
}

/// NCCL's NVLS graph of release `v` across nodes: `speeds` its inter-node list
/// (`tuning::release_speeds`), `nets` the node's network devices, `link_bw` the narrowest
/// GPU-to-switch NVLink (NCCL's GB/s), `total_bw` a GPU's own bandwidth (`getTotalBw`), `gpus`
/// the GPUs of a node. None: no channel (no NIC has a local GPU).
pub fn search(v: Version, speeds: &[f64], nets: &[Net], link_bw: f64, total_bw: f64, gpus: usize) -> Option<Graph> {
    const EPS: f64 = 1e-9;
    let most = gpus.min(MAX_NVLS_ARITY);
    let max_bw = nets.iter().map(|n| n.bw).fold(0.0, f64::max);
    // Patterns other than the ring need not return to their NIC: the bound is inflated by n / (n - 1).
    let total = if gpus > 1 { total_bw * gpus as f64 / (gpus as f64 - 1.0) } else { total_bw };
    let dedup = v >= Version::V2_22;
    // The channels one search finds at these speeds, at most `cap`: their heads in order.
    let heads_at = |intra: f64, inter: f64, cap: usize| -> Vec<usize> {
        let mut heads: Vec<usize> = Vec::new();
        while heads.len() < nets.len().min(cap) {
            let c = heads.len();
            // One more channel: each GPU's link carries c + 1 channels, its head's one more.
            if (c + 2) as f64 * intra > link_bw + EPS {
                break;
            }
            let fits = |n: &Net| n.bw + EPS >= inter && n.local.is_some_and(|g| !dedup || !heads.contains(&g));
            let next = if dedup { (0..nets.len()).map(|i| nets[(c + i) % nets.len()]).find(fits) } else { Some(nets[c]).filter(fits) };
            match next.and_then(|n| n.local) {
                Some(g) => heads.push(g),
                None => break,
            }
        }
        heads
    };
    let better = |n: usize, s: f64, best: &Option<(Vec<usize>, f64)>| match best {
        None => n > 0,
        Some((b, bs)) => n > b.len() || (v >= Version::V2_19 && n as f64 * s > b.len() as f64 * bs),
    };
    let mut i = speeds.iter().position(|&s| s <= max_bw + EPS && s <= total + EPS)?;
    let mut best: Option<(Vec<usize>, f64)> = None;
    loop {
        let s = speeds[i];
        let heads = heads_at(s, s, most);
        if better(heads.len(), s, &best) {
            best = Some((heads, s));
        }
        // Every GPU a head, or the channels carry a GPU's bandwidth: the search stops.
        if best.as_ref().is_some_and(|(b, bs)| b.len() == most || b.len() as f64 * bs >= total_bw - EPS) {
            break;
        }
        let next = speeds.get(i + 1).filter(|&&n| best.as_ref().is_none_or(|(_, bs)| n / bs > 0.49));
        if next.is_none() {
            break;
        }
        i += 1;
    }
    let (mut heads, intra) = best?;
    let mut inter = intra;
    if v >= Version::V2_19 {
        let mut k = speeds.iter().position(|&s| s <= inter + EPS).unwrap_or(0);
        while k > 0 && inter < 2.0 * intra {
            let found = heads_at(intra, speeds[k - 1], heads.len());
            if found.len() < heads.len() {
                break;
            }
            (heads, inter, k) = (found, speeds[k - 1], k - 1);
        }
    }
    Some(Graph { heads, intra, inter })
}
