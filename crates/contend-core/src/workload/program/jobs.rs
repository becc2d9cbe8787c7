//! Multi-job workloads as seed 003 builds them, and the placement of ranks on GPUs.

use crate::workload::SplitMix64;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Seed 003's job sizes (processes = GPUs).
pub const SIZES: [u32; 5] = [32, 64, 128, 256, 512];
/// Seed 003's applications.
pub const SEED_003_APPS: [&str; 6] = ["stencil4d", "subcomm3d", "kripke", "laghos", "amg", "sw4lite"];

/// How ranks are laid on the cluster's GPUs (in node order, GPU order within a node).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Jobs take consecutive GPUs, in job order: a job's ranks fill whole nodes first.
    #[default]
    Linear,
    /// Nodes are shuffled (seeded) and then filled as by `linear`.
    Random,
}

/// Draw (application, size) pairs until the sizes sum to exactly `total`, choosing each size
/// among those that still fit (seed 003's construction; sources-digest §4.2).
pub fn draw_mix(seed: u64, total: u32) -> Vec<(&'static str, u32)> {
    let mut rng = SplitMix64(seed ^ 0x0003_5EED);
    let mut left = total;
    let mut jobs = Vec::new();
    while left >= SIZES[0] {
        let fits: Vec<u32> = SIZES.iter().copied().filter(|&s| s <= left).collect();
        let size = fits[(rng.next_u64() % fits.len() as u64) as usize];
        let app = SEED_003_APPS[(rng.next_u64() % SEED_003_APPS.len() as u64) as usize];
        jobs.push((app, size));
        left -= size;
    }
    jobs
}

/// GPU slots (indices into `gpus`, which lists every GPU node by node) for each job's ranks.
pub fn place(sizes: &[u32], nodes: &[Vec<usize>], placement: Placement, seed: u64) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    if placement == Placement::Random {
        let mut rng = SplitMix64(seed ^ 0x91ACE);
        for i in (1..order.len()).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
    }
    let mut slots = order.iter().flat_map(|&n| nodes[n].iter().copied());
    sizes.iter().map(|&s| slots.by_ref().take(s as usize).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::program::apps::APPS;

    #[test]
    fn mixes_fill_exactly_and_differ_by_seed() {
        for seed in 0..20 {
            let m = draw_mix(seed, 2048);
            assert_eq!(m.iter().map(|j| j.1).sum::<u32>(), 2048);
            assert!(m.iter().all(|(a, _)| APPS.iter().any(|x| x.name == *a)));
        }
        assert_ne!(draw_mix(1, 2048), draw_mix(2, 2048));
    }

    #[test]
    fn linear_placement_fills_nodes_in_order() {
        let nodes: Vec<Vec<usize>> = (0..4).map(|n| vec![2 * n, 2 * n + 1]).collect();
        assert_eq!(place(&[3, 4], &nodes, Placement::Linear, 0), vec![vec![0, 1, 2], vec![3, 4, 5, 6]]);
        let r = place(&[8], &nodes, Placement::Random, 1);
        let mut sorted = r[0].clone();
        sorted.sort();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    }
}
