//! Simulated annealing over orders, for spaces too large to enumerate. A move swaps two messages
//! of one rank. Chains are independent and seeded from (seed, chain number), so the result does
//! not depend on how many threads run them.

use super::exhaustive::{pack, Best};
use super::problem::{Problem, Worker};
use super::Semantics;
use crate::workload::SplitMix64;
use rayon::prelude::*;

/// Uphill moves of this fraction of the starting makespan are accepted with probability 1/e,
/// at the start and at the end of a chain; the temperature falls geometrically in between.
const T_START: f64 = 0.05;
const T_END: f64 = 1e-4;

pub(crate) struct Outcome {
    pub best: Best,
    pub evaluated: u64,
}

/// `chains` chains of `iterations` moves; chain 0 starts from `start`, the others from random orders.
pub(crate) fn run(p: &Problem, semantics: Semantics, seed: u64, iterations: u64, chains: u64, start: &[Vec<u8>]) -> Outcome {
    let bests: Vec<Best> = (0..chains).into_par_iter().map(|c| chain(p, semantics, seed, c, iterations, start)).collect();
    let mut best = Best::none();
    bests.into_iter().for_each(|b| best.merge(b));
    Outcome { best, evaluated: chains * (iterations + 1) }
}

fn chain(p: &Problem, semantics: Semantics, seed: u64, c: u64, iterations: u64, start: &[Vec<u8>]) -> Best {
    let mut rng = SplitMix64(seed ^ c.wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03));
    let mut w = Worker::new(p);
    let mut order = start.to_vec();
    if c > 0 {
        for perm in order.iter_mut() {
            for i in (1..perm.len()).rev() {
                perm.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
            }
        }
    }
    let movable: Vec<usize> = (0..p.ranks).filter(|&g| p.deg[g] >= 2).collect();
    let mut cur = w.evaluate(&order, semantics);
    let mut best = Best::none();
    best.offer(cur, || order.iter().map(|o| pack(o)).collect());
    if movable.is_empty() {
        return best;
    }
    let scale = cur;
    for it in 0..iterations {
        let temp = scale * T_START * (T_END / T_START).powf(it as f64 / iterations as f64);
        let g = movable[(rng.next_u64() % movable.len() as u64) as usize];
        let d = p.deg[g] as u64;
        let a = (rng.next_u64() % d) as usize;
        let b = (a + 1 + (rng.next_u64() % (d - 1)) as usize) % d as usize;
        order[g].swap(a, b);
        let t = w.evaluate(&order, semantics);
        if t <= cur || rng.unit() < (-(t - cur) / temp).exp() {
            cur = t;
            best.offer(t, || order.iter().map(|o| pack(o)).collect());
        } else {
            order[g].swap(a, b);
        }
    }
    best
}
