//! Branch and bound: the exhaustive walk, cut wherever a lower bound shows that no order below
//! a node can beat the best order known (within a relative 1e-9).
//!
//! Bounds, from the state at a node (time t, each message's remaining bytes and earliest start):
//! - a rank sends its remaining messages one after another, none faster than alone, each
//!   unstarted one after its setup (alpha plus the path's latency);
//! - a directed link carries at most its capacity, so its remaining bytes need bytes / capacity
//!   from the earliest moment one of them can flow (every model here respects link capacities);
//! - rounds add the time of the finished rounds and the least setup per round to come.
//!
//! Children are tried most critical message first (the one on the most loaded link), so good
//! orders are found early.

use super::engine::State;
use super::exhaustive::{tick, Best};
use super::problem::{Problem, Worker};
use super::symmetry::{Firsts, Symmetry};
use super::{Progress, Semantics};
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Below this relative margin a bound does not count as beating the incumbent.
const TOL: f64 = 1e-9;

pub(crate) struct Outcome {
    pub best: Best,
    pub nodes: u64,
    pub evaluated: u64,
    /// False when the node limit stopped the search before the optimum was proven.
    pub complete: bool,
}

struct Shared<'p, 'a> {
    p: &'p Problem<'a>,
    /// The incumbent's makespan as f64 bits: for positive floats, integer order is numeric order.
    incumbent: AtomicU64,
    nodes: AtomicU64,
    limit: u64,
    stop: AtomicBool,
    /// Per rank, its slots by decreasing load of their most loaded link.
    order: Vec<Vec<u8>>,
}

struct Local {
    best: Best,
    nodes: u64,
    flushed: u64,
    leaves: u64,
    rem: Vec<f64>,
    early: Vec<f64>,
}

impl Shared<'_, '_> {
    fn incumbent(&self) -> f64 {
        f64::from_bits(self.incumbent.load(Ordering::Relaxed))
    }

    fn cut(&self, bound: f64) -> bool {
        bound >= self.incumbent() * (1.0 - TOL)
    }

    fn visit(&self, local: &mut Local) -> bool {
        local.nodes += 1;
        if local.nodes.is_multiple_of(1024) {
            self.flush(local);
        }
        !self.stop.load(Ordering::Relaxed)
    }

    /// Add the nodes counted since the last flush to the shared count, and stop at the limit.
    fn flush(&self, local: &mut Local) {
        let n = local.nodes - local.flushed;
        local.flushed = local.nodes;
        if self.nodes.fetch_add(n, Ordering::Relaxed) + n > self.limit && self.limit > 0 {
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    fn leaf(&self, local: &mut Local, t: f64, seq: impl Fn() -> Vec<u64>) {
        local.leaves += 1;
        if t <= self.incumbent() {
            self.incumbent.fetch_min(t.to_bits(), Ordering::Relaxed);
            local.best.offer(t, seq);
        }
    }

    /// Per-rank and per-link bound from `local.rem` / `local.early` at time t.
    fn bound(&self, t: f64, local: &Local) -> f64 {
        let p = self.p;
        let mut lb = t;
        for g in 0..p.ranks {
            let mut tg = t;
            for i in p.first[g]..p.first[g] + p.deg[g] {
                if local.rem[i] > 0.0 {
                    tg += (local.early[i] - t) + local.rem[i] / p.solo[i];
                }
            }
            lb = lb.max(tg);
        }
        for (l, cap) in p.link_cap.iter().enumerate() {
            let (mut bytes, mut from) = (0.0, f64::INFINITY);
            let row = p.link_start[l]..p.link_start[l + 1];
            for (&i, &times) in p.link_msgs[row.clone()].iter().zip(&p.link_times[row]) {
                if local.rem[i] > 0.0 {
                    bytes += local.rem[i] * times;
                    from = from.min(local.early[i]);
                }
            }
            if bytes > 0.0 {
                lb = lb.max(from + bytes / cap);
            }
        }
        lb
    }
}

pub(crate) fn run(p: &Problem, sym: &Symmetry, firsts: &Firsts, semantics: Semantics, incumbent: Best, limit: u64, progress: Progress) -> Outcome {
    let shared =
        Shared { p, incumbent: AtomicU64::new(incumbent.t.to_bits()), nodes: AtomicU64::new(0), limit, stop: AtomicBool::new(false), order: critical_order(p) };
    let done = AtomicU64::new(0);
    let locals: Vec<Local> = (0..firsts.count)
        .into_par_iter()
        .map_init(
            || (Worker::new(p), vec![0u8; p.ranks], Vec::new(), vec![State::new(p); p.messages() + 2]),
            |(w, c, images, stack), idx| {
                let mut local = Local { best: Best::none(), nodes: 0, flushed: 0, leaves: 0, rem: vec![0.0; p.messages()], early: vec![0.0; p.messages()] };
                if !shared.stop.load(Ordering::Relaxed) && sym.orbit(p, firsts, idx, c, images).is_some() {
                    match semantics {
                        Semantics::Sequential => {
                            stack[0] = State::new(p);
                            for (g, &s) in c.iter().enumerate() {
                                stack[0].start(p, g, s as usize);
                            }
                            sequential(&shared, w, stack, 0, &mut local);
                        }
                        Semantics::Rounds => rounds_from(&shared, w, c, &mut local),
                    }
                }
                shared.flush(&mut local);
                tick(&done, firsts.count, progress);
                local
            },
        )
        .collect();
    let mut out = Outcome { best: incumbent, nodes: 0, evaluated: 0, complete: !shared.stop.load(Ordering::Relaxed) };
    for local in locals {
        out.nodes += local.nodes;
        out.evaluated += local.leaves;
        out.best.merge(local.best);
    }
    out
}

fn critical_order(p: &Problem) -> Vec<Vec<u8>> {
    let mut crit = vec![0.0f64; p.messages()];
    for (l, cap) in p.link_cap.iter().enumerate() {
        let span = p.link_start[l]..p.link_start[l + 1];
        let row = &p.link_msgs[span.clone()];
        let load = row.iter().zip(&p.link_times[span]).map(|(&i, &k)| p.size[i] * k).sum::<f64>() / cap;
        row.iter().for_each(|&i| crit[i] = crit[i].max(load));
    }
    (0..p.ranks)
        .map(|g| {
            let mut slots: Vec<u8> = (0..p.deg[g] as u8).collect();
            slots.sort_by(|&a, &b| crit[p.first[g] + b as usize].total_cmp(&crit[p.first[g] + a as usize]));
            slots
        })
        .collect()
}

fn sequential(sh: &Shared, w: &mut Worker, stack: &mut [State], depth: usize, local: &mut Local) {
    if !sh.visit(local) {
        return;
    }
    let p = sh.p;
    let Some(g) = w.advance(&mut stack[depth]) else {
        let st = &stack[depth];
        sh.leaf(local, st.t, || st.q.iter().map(|q| q.seq).collect());
        return;
    };
    stack[depth].remaining(p, &mut local.rem, &mut local.early);
    if sh.cut(sh.bound(stack[depth].t, local)) {
        return;
    }
    for &slot in &sh.order[g] {
        if stack[depth].q[g].left & (1 << slot) == 0 {
            continue;
        }
        let (parent, child) = stack.split_at_mut(depth + 1);
        child[0].clone_from(&parent[depth]);
        child[0].start(p, g, slot as usize);
        sequential(sh, w, stack, depth + 1, local);
    }
}

/// A partial rounds schedule: finished rounds' time, the round being filled, slots left.
struct Rounds {
    committed: f64,
    key: u64,
    left: Vec<u16>,
    seq: Vec<u64>,
}

fn rounds_from(sh: &Shared, w: &mut Worker, c: &[u8], local: &mut Local) {
    let p = sh.p;
    let key0: u64 = (0..p.ranks).map(|g| (c[g] as u64 + 1) * p.stride[g]).sum();
    let mut st = Rounds {
        committed: w.round_time(key0),
        key: 0,
        left: (0..p.ranks).map(|g| (((1u32 << p.deg[g]) - 1) as u16) & !(1 << c[g])).collect(),
        seq: c.iter().map(|&s| s as u64).collect(),
    };
    rounds(sh, w, 1, 0, &mut st, local);
}

fn rounds(sh: &Shared, w: &mut Worker, k: usize, g: usize, st: &mut Rounds, local: &mut Local) {
    let p = sh.p;
    let r = w.rounds();
    if g == 0 {
        if !sh.visit(local) {
            return;
        }
        if k == r {
            sh.leaf(local, st.committed, || st.seq.clone());
            return;
        }
        for h in 0..p.ranks {
            for s in 0..p.deg[h] {
                let i = p.first[h] + s;
                let unsent = st.left[h] & (1 << s) != 0;
                local.rem[i] = if unsent { p.size[i] } else { 0.0 };
                local.early[i] = st.committed;
            }
        }
        let ahead = (r - k) as f64 * p.min_setup;
        if sh.cut(sh.bound(st.committed, local) + ahead) {
            return;
        }
    }
    if g == p.ranks {
        let (key, committed) = (st.key, st.committed);
        st.committed += w.round_time(key);
        st.key = 0;
        rounds(sh, w, k + 1, 0, st, local);
        (st.key, st.committed) = (key, committed);
        return;
    }
    if k >= p.deg[g] {
        return rounds(sh, w, k, g + 1, st, local);
    }
    for &slot in &sh.order[g] {
        let bit = 1u16 << slot;
        if st.left[g] & bit == 0 {
            continue;
        }
        st.left[g] &= !bit;
        st.key += (slot as u64 + 1) * p.stride[g];
        st.seq[g] |= (slot as u64) << (4 * k);
        rounds(sh, w, k, g + 1, st, local);
        st.seq[g] &= !(15u64 << (4 * k));
        st.key -= (slot as u64 + 1) * p.stride[g];
        st.left[g] |= bit;
    }
}
