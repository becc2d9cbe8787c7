//! Every order, in parallel over the vectors of first messages.
//!
//! Sequential: a depth-first walk that simulates up to the next moment an idle rank chooses among
//! two or more messages and branches there, so orders sharing a prefix share its simulation.
//! Rounds: a makespan is a sum of round times and a round's time depends only on its messages,
//! so every order costs one memo lookup per round.

use super::engine::State;
use super::problem::{Problem, Worker};
use super::symmetry::{Firsts, Symmetry};
use super::{Progress, Semantics};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// An order with its makespan; orders compare by time, then by their packed slots, so that the
/// reported best order does not depend on how threads split the work.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Best {
    pub t: f64,
    pub seq: Vec<u64>,
}

impl Best {
    pub fn none() -> Best {
        Best { t: f64::INFINITY, seq: Vec::new() }
    }

    pub fn offer(&mut self, t: f64, seq: impl Fn() -> Vec<u64>) {
        if t < self.t || (t == self.t && seq() < self.seq) {
            *self = Best { t, seq: seq() };
        }
    }

    pub fn merge(&mut self, other: Best) {
        let seq = other.seq.clone();
        self.offer(other.t, move || seq.clone());
    }
}

pub(crate) struct Outcome {
    /// Makespan of every searched order with the number of orders it stands for, by time.
    pub times: Vec<(f64, u64)>,
    pub best: Best,
    pub evaluated: u64,
    pub nodes: u64,
}

struct Task {
    weight: u64,
    times: Vec<f64>,
    best: Best,
    nodes: u64,
}

pub(crate) fn run(p: &Problem, sym: &Symmetry, firsts: &Firsts, semantics: Semantics, progress: Progress) -> Outcome {
    let done = AtomicU64::new(0);
    let by_first = orders_by_first(p);
    let tasks: Vec<Task> = (0..firsts.count)
        .into_par_iter()
        .map_init(
            || (Worker::new(p), vec![0u8; p.ranks], Vec::new(), vec![State::new(p); p.messages() + 2]),
            |(w, c, images, stack), idx| {
                let task = sym.orbit(p, firsts, idx, c, images).map(|weight| {
                    let mut task = Task { weight, times: Vec::new(), best: Best::none(), nodes: 0 };
                    match semantics {
                        Semantics::Sequential => {
                            stack[0] = State::new(p);
                            for (g, &s) in c.iter().enumerate() {
                                stack[0].start(p, g, s as usize);
                            }
                            sequential(w, stack, 0, &mut task);
                        }
                        Semantics::Rounds => rounds(w, &by_first, c, &mut task),
                    }
                    task
                });
                tick(&done, firsts.count, progress);
                task
            },
        )
        .flatten()
        .collect();
    let mut out = Outcome { times: Vec::new(), best: Best::none(), evaluated: 0, nodes: 0 };
    for task in tasks {
        out.evaluated += task.times.len() as u64;
        out.nodes += task.nodes;
        out.times.extend(task.times.iter().map(|&t| (t, task.weight)));
        out.best.merge(task.best);
    }
    out.times.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

pub(crate) fn tick(done: &AtomicU64, total: u64, progress: Progress) {
    let n = done.fetch_add(1, Ordering::Relaxed) + 1;
    if let Some(f) = progress {
        if n.is_multiple_of(256) || n == total {
            f(n, total);
        }
    }
}

fn sequential(w: &mut Worker, stack: &mut [State], depth: usize, task: &mut Task) {
    task.nodes += 1;
    match w.advance(&mut stack[depth]) {
        None => {
            let st = &stack[depth];
            task.times.push(st.t);
            task.best.offer(st.t, || st.q.iter().map(|q| q.seq).collect());
        }
        Some(g) => {
            let mut left = stack[depth].q[g].left;
            while left != 0 {
                let slot = left.trailing_zeros() as usize;
                left &= left - 1;
                let (parent, child) = stack.split_at_mut(depth + 1);
                child[0].clone_from(&parent[depth]);
                child[0].start(w.p, g, slot);
                sequential(w, stack, depth + 1, task);
            }
        }
    }
}

/// Per rank and first slot, every order of the rank's slots starting with it.
pub(crate) fn orders_by_first(p: &Problem) -> Vec<Vec<Vec<Vec<u8>>>> {
    p.deg
        .iter()
        .map(|&d| {
            let mut by: Vec<Vec<Vec<u8>>> = vec![Vec::new(); d];
            for perm in permutations(d) {
                by[perm[0] as usize].push(perm);
            }
            by
        })
        .collect()
}

/// All orders of 0..n, lexicographic.
pub(crate) fn permutations(n: usize) -> Vec<Vec<u8>> {
    if n == 0 {
        return vec![vec![]];
    }
    let mut out = Vec::new();
    for rest in permutations(n - 1) {
        for pos in 0..n {
            let mut v: Vec<u8> = rest.clone();
            v.insert(pos, (n - 1) as u8);
            out.push(v);
        }
    }
    out.sort();
    out
}

fn rounds(w: &mut Worker, by_first: &[Vec<Vec<Vec<u8>>>], c: &[u8], task: &mut Task) {
    let p = w.p;
    let r = w.rounds();
    let mut keys = vec![0u64; r];
    keys[0] = c.iter().zip(&p.stride).map(|(&s, &stride)| (s as u64 + 1) * stride).sum();
    let t0 = w.round_time(keys[0]);
    let choices: Vec<&[Vec<u8>]> = (0..p.ranks).map(|g| by_first[g][c[g] as usize].as_slice()).collect();
    let mut pick = vec![0usize; p.ranks];
    rounds_rank(w, &choices, 0, t0, &mut keys, &mut pick, task);
}

fn rounds_rank(w: &mut Worker, choices: &[&[Vec<u8>]], g: usize, t0: f64, keys: &mut [u64], pick: &mut [usize], task: &mut Task) {
    let p = w.p;
    if g == p.ranks {
        task.nodes += 1;
        let t = t0 + (1..keys.len()).map(|k| w.round_time(keys[k])).sum::<f64>();
        task.times.push(t);
        task.best.offer(t, || (0..p.ranks).map(|h| pack(&choices[h][pick[h]])).collect());
        return;
    }
    for (i, perm) in choices[g].iter().enumerate() {
        for (k, &s) in perm.iter().enumerate().skip(1) {
            keys[k] += (s as u64 + 1) * p.stride[g];
        }
        pick[g] = i;
        rounds_rank(w, choices, g + 1, t0, keys, pick, task);
        for (k, &s) in perm.iter().enumerate().skip(1) {
            keys[k] -= (s as u64 + 1) * p.stride[g];
        }
    }
}

pub(crate) fn pack(order: &[u8]) -> u64 {
    order.iter().enumerate().fold(0, |acc, (k, &s)| acc | (s as u64) << (4 * k))
}
