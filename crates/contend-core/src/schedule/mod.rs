//! The fastest communication schedule of a halo exchange (the COSMO study of the SC16 paper).
//!
//! A schedule gives every rank the order in which it sends to its neighbours; its cost is the
//! makespan under a rate model (sc16 unless told otherwise), in one of two semantics:
//! - `Sequential`: a rank sends its messages one after the other, the next starting when the
//!   previous one has delivered its last byte;
//! - `Rounds`: round k holds every rank's k-th message, and a barrier waits for the whole round.
//!
//! The per-message overhead alpha models what the bandwidth model leaves out (latency, MPI):
//! a started message holds its rank's slot for alpha seconds with no bytes moving and without
//! competing in the model, then its bytes flow at the model's rates. A lone message therefore
//! takes alpha + size / B, and a round alpha + the makespan of its byte phase.
//!
//! Search methods: `Exhaustive` (every order, with median, worst and the sorted times),
//! `BranchAndBound` (proves the optimum, cutting subtrees with link-load and per-rank bounds)
//! and `Anneal` (seeded simulated annealing, with a lower bound and the gap). The first two
//! search one order per orbit of the symmetries of machine and halo (see `symmetry`).

mod anneal;
mod bnb;
mod engine;
mod exhaustive;
mod halo;
mod problem;
mod report;
mod symmetry;
#[cfg(test)]
mod tests;

pub use halo::{CosmoSizes, Halo, HaloMessage, HaloSpec, MAX_MESSAGES_PER_RANK, PRESETS};
pub use report::{GpuOrder, ScheduleReport};

use crate::error::{Error, Result};
use crate::topology::Machine;
use crate::workload::WorkloadSpec;
use exhaustive::Best;
use problem::{Problem, Worker};
use serde::Serialize;
use symmetry::{Firsts, Symmetry};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Semantics {
    Sequential,
    Rounds,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    Exhaustive,
    #[serde(rename = "bnb")]
    BranchAndBound,
    Anneal,
}

impl Semantics {
    pub fn parse(s: &str) -> Result<Semantics> {
        match s {
            "sequential" => Ok(Semantics::Sequential),
            "rounds" => Ok(Semantics::Rounds),
            _ => Err(Error::input("--semantics", "", format!("\"{s}\" is not sequential or rounds"))),
        }
    }
}

impl Method {
    pub fn parse(s: &str) -> Result<Method> {
        match s {
            "exhaustive" => Ok(Method::Exhaustive),
            "bnb" | "branch-and-bound" => Ok(Method::BranchAndBound),
            "anneal" => Ok(Method::Anneal),
            _ => Err(Error::input("--search", "", format!("\"{s}\" is not exhaustive, bnb or anneal"))),
        }
    }
}

/// Called now and then with (tasks done, tasks in all), from any thread.
pub type Progress<'a> = Option<&'a (dyn Fn(u64, u64) + Sync)>;

/// Exhaustive search refuses spaces larger than this; use bnb or anneal there.
pub const EXHAUSTIVE_LIMIT: u128 = 1_000_000_000;
/// Sorted times are kept for at most this many orders (8 bytes each).
pub const TIMES_LIMIT: u128 = 50_000_000;
/// Orders within this relative margin of the best count as equally fast.
const TIE: f64 = 1e-9;
/// Annealing chains (a fixed number, so results do not depend on the thread count).
const CHAINS: u64 = 4;
/// Branch and bound starts from one annealing chain of at most this many moves.
const BNB_WARMUP: u64 = 2000;

#[derive(Clone)]
pub struct SearchOptions<'a> {
    pub semantics: Semantics,
    pub method: Method,
    /// Rate model name, as for `contend simulate --model` (default sc16).
    pub model: String,
    /// Model parameters as key=value pairs, e.g. ("tau", "0.2").
    pub params: Vec<(String, String)>,
    /// Per-message overhead in seconds (default 0).
    pub alpha: f64,
    /// Seed of the annealing chains.
    pub seed: u64,
    /// Moves per annealing chain.
    pub iterations: u64,
    /// Branch and bound stops after about this many nodes, unproven (0: no limit).
    pub node_limit: u64,
    /// Threads (0: rayon's default, one per core).
    pub threads: usize,
    /// Skip orders that a symmetry maps onto searched ones (never changes the optimum).
    pub symmetry: bool,
    /// Return the sorted makespan of every order (exhaustive only).
    pub keep_times: bool,
    pub progress: Progress<'a>,
}

impl Default for SearchOptions<'_> {
    fn default() -> Self {
        SearchOptions {
            semantics: Semantics::Sequential,
            method: Method::Exhaustive,
            model: "sc16".into(),
            params: Vec::new(),
            alpha: 0.0,
            seed: 0,
            iterations: 20_000,
            node_limit: 0,
            threads: 0,
            symmetry: true,
            keep_times: true,
            progress: None,
        }
    }
}

/// Search the orders of `halo` on machine `m` for the smallest makespan.
pub fn search(m: &Machine, halo: &Halo, opts: &SearchOptions) -> Result<ScheduleReport> {
    in_pool(opts.threads, || {
        let p = Problem::new(m, halo, &opts.model, &opts.params, opts.alpha)?;
        p.check_semantics(opts.semantics)?;
        run(&p, halo, opts)
    })
}

/// Makespan of one schedule.
pub fn evaluate(m: &Machine, halo: &Halo, order: &[GpuOrder], opts: &SearchOptions) -> Result<f64> {
    let slots = report::slots(m, halo, order)?;
    let p = Problem::new(m, halo, &opts.model, &opts.params, opts.alpha)?;
    p.check_semantics(opts.semantics)?;
    let t = Worker::new(&p).evaluate(&slots, opts.semantics);
    Ok(t)
}

/// One schedule as a workload that `contend simulate` runs to the same makespan, under any model.
pub fn to_workload(m: &Machine, halo: &Halo, order: &[GpuOrder], opts: &SearchOptions) -> Result<WorkloadSpec> {
    let slots = report::slots(m, halo, order)?;
    Ok(report::workload(m, halo, &slots, opts.semantics, opts.alpha))
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    if threads == 0 {
        return f();
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().map_err(|e| Error::Runtime(format!("cannot start {threads} threads: {e}")))?;
    pool.install(f)
}

fn run(p: &Problem, halo: &Halo, opts: &SearchOptions) -> Result<ScheduleReport> {
    let sem = opts.semantics;
    let identity: Vec<Vec<u8>> = p.deg.iter().map(|&d| (0..d as u8).collect()).collect();
    let identity_s = Worker::new(p).evaluate(&identity, sem);
    let total = orders_total(p);
    let root = root_bound(p, sem);
    let sym = match opts.method {
        Method::Anneal => Symmetry::trivial(p),
        _ if opts.symmetry => Symmetry::find(p, halo),
        _ => Symmetry::trivial(p),
    };
    let mut r = Summary { best: Best::none(), evaluated: 0, nodes: 0, proven: false, count: None, median: None, worst: None, times: None };
    match opts.method {
        Method::Exhaustive => {
            let firsts = Firsts::new(p).filter(|_| total <= EXHAUSTIVE_LIMIT).ok_or_else(|| {
                Error::input("--search", "", format!("exhaustive search of {total} orders is too large (limit {EXHAUSTIVE_LIMIT}); use bnb or anneal"))
            })?;
            let out = exhaustive::run(p, &sym, &firsts, sem, opts.progress);
            r.summarise(out, opts.keep_times && total <= TIMES_LIMIT);
        }
        Method::BranchAndBound => {
            let firsts = Firsts::new(p)
                .filter(|f| f.count <= 1 << 24)
                .ok_or_else(|| Error::input("--search", "", format!("branch and bound over {total} orders has too many first moves to split; use anneal")))?;
            let warm = anneal::run(p, sem, opts.seed, opts.iterations.min(BNB_WARMUP), 1, &identity);
            if root >= warm.best.t * (1.0 - TIE) {
                (r.best, r.evaluated, r.proven) = (warm.best, warm.evaluated, true);
            } else {
                let out = bnb::run(p, &sym, &firsts, sem, warm.best, opts.node_limit, opts.progress);
                (r.best, r.evaluated, r.nodes, r.proven) = (out.best, out.evaluated + warm.evaluated, out.nodes, out.complete);
            }
        }
        Method::Anneal => {
            let out = anneal::run(p, sem, opts.seed, opts.iterations, CHAINS, &identity);
            r.proven = root >= out.best.t * (1.0 - TIE);
            (r.best, r.evaluated) = (out.best, out.evaluated);
        }
    }
    if !r.best.t.is_finite() {
        return Err(Error::Runtime(format!("model {} gives every moving message zero bandwidth in every order, so none finishes", p.model_name())));
    }
    let m = p.machine();
    let best_order: Vec<Vec<u8>> = r.best.seq.iter().zip(&p.deg).map(|(&s, &d)| engine::unpack(s, d)).collect();
    let lower = if r.proven { r.best.t } else { root };
    let params = p.prepared.params();
    Ok(ScheduleReport {
        machine: m.name.clone(),
        model: p.model_name().to_string(),
        params,
        semantics: sem,
        method: opts.method,
        alpha_s: p.alpha,
        gpus: halo.device.iter().map(|&d| m.devices[d].name.clone()).collect(),
        messages: p.messages(),
        t_msg_s: p.t_msg(),
        orders_total: total,
        orders_evaluated: r.evaluated,
        nodes_visited: r.nodes,
        symmetries: sym.len(),
        best_s: r.best.t,
        best_count: r.count,
        median_s: r.median,
        worst_s: r.worst,
        identity_s,
        lower_bound_s: lower,
        gap: r.best.t / lower - 1.0,
        proven_optimal: r.proven,
        best_order: report::named(m, halo, &best_order),
        times_s: r.times,
    })
}

struct Summary {
    best: Best,
    evaluated: u64,
    nodes: u64,
    proven: bool,
    count: Option<u128>,
    median: Option<f64>,
    worst: Option<f64>,
    times: Option<Vec<f64>>,
}

impl Summary {
    fn summarise(&mut self, out: exhaustive::Outcome, keep: bool) {
        let total: u128 = out.times.iter().map(|&(_, w)| w as u128).sum();
        let at = |pos: u128| {
            let mut seen = 0u128;
            out.times.iter().find(|&&(_, w)| {
                seen += w as u128;
                seen > pos
            })
        };
        let mid = |pos: u128| at(pos).map_or(f64::NAN, |x| x.0);
        self.median = Some(if total % 2 == 1 { mid(total / 2) } else { (mid(total / 2 - 1) + mid(total / 2)) / 2.0 });
        self.worst = out.times.last().map(|x| x.0);
        let bar = out.best.t * (1.0 + TIE);
        self.count = Some(out.times.iter().take_while(|x| x.0 <= bar).map(|&(_, w)| w as u128).sum());
        if keep {
            self.times = Some(out.times.iter().flat_map(|&(t, w)| std::iter::repeat_n(t, w as usize)).collect());
        }
        (self.best, self.evaluated, self.nodes, self.proven) = (out.best, out.evaluated, out.nodes, true);
    }
}

fn orders_total(p: &Problem) -> u128 {
    let fact = |d: usize| (1..=d as u128).product::<u128>();
    p.deg.iter().try_fold(1u128, |acc, &d| acc.checked_mul(fact(d))).unwrap_or(u128::MAX)
}

/// A bound valid for every order: ranks send their messages one after another, none faster
/// than alone, and no link carries more than its capacity; a setup (alpha plus the path's
/// latency) delays every message before its bytes flow, and every round by at least the least one.
fn root_bound(p: &Problem, sem: Semantics) -> f64 {
    let links = p.link_bound(&p.size);
    match sem {
        Semantics::Sequential => {
            let ranks = (0..p.ranks).map(|g| (p.first[g]..p.first[g] + p.deg[g]).map(|i| p.setup[i] + p.size[i] / p.solo[i]).sum::<f64>()).fold(0.0, f64::max);
            ranks.max(p.min_setup + links)
        }
        Semantics::Rounds => {
            let rounds = p.deg.iter().copied().max().unwrap_or(0) as f64;
            rounds * p.min_setup + links.max(p.rank_bound(&p.size))
        }
    }
}
