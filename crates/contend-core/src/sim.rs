//! The executor: the one loop that advances time, for every model.
//!
//! It owns issue times (`start`), dependencies (`after`), each transfer's setup delay (the
//! path's latency plus its software overhead and kernels: no bytes move until it has passed),
//! its teardown (kernels after the last byte) and the record keeping; the model only decides how fast the bytes in flight move. Events are taken
//! in order of (time, sequence), and events within a relative 1e-12 of each other form one
//! instant, after which the model settles its rates once.

use crate::error::{Error, Result};
use crate::flow::FlowTable;
use crate::flow::{NO_ENGINE, NO_NIC};
use crate::heap::{from_order_key, order_key};
use crate::model::{EventModel, Prepared, SAME_TIME};
use crate::workload::Workload;
use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

mod release;
use release::Releases;

/// A maximal interval in which no transfer joins or leaves, so every rate is constant.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub start: f64,
    pub end: f64,
    /// Transfers moving bytes, ascending.
    pub active: Vec<usize>,
    /// Bytes per second of `active[k]`.
    pub rates: Vec<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// When each transfer was issued (its start and dependencies allowing).
    pub start: Vec<f64>,
    pub finish: Vec<f64>,
    /// Every phase, when asked for (their number and size grow with the workload squared).
    pub phases: Vec<Phase>,
    /// Per resource of the flow table: seconds with at least one transfer moving bytes on it.
    pub busy: Vec<f64>,
    /// Per resource: the highest load over capacity seen.
    pub peak: Vec<f64>,
    /// Per resource: bytes moved, where the model routes below the flow table's route
    /// (`EventModel::carried`); None: each transfer's route says it.
    pub carried: Option<Vec<f64>>,
    /// Messages at each NIC (waiting there or on their way through the network) after every
    /// change: (time, NIC of the flow table, messages); two entries per message that crosses one.
    /// Empty where the run was not asked for it (`run_until_stuck`'s `nic_trace`).
    pub nic_queue: Vec<(f64, u32, u32)>,
}

impl Outcome {
    pub fn makespan(&self) -> f64 {
        self.finish.iter().copied().fold(0.0, f64::max)
    }
}

/// A transfer that reaches its queue, its NIC's or its copy engine's (`AT_QUEUE` set in
/// `flow`), or whose setup ends (joins the model) at `t`; ties resolve by issue order, the
/// same every run. Sixteen bytes: the queue holds a transfer per rank and more, and its
/// entries move on every event. The time is kept as its `order_key`, compared as an integer: the
/// order of `f64::total_cmp`, transformed once per entry rather than twice per comparison.
#[derive(PartialEq)]
struct Join {
    key: i64,
    seq: u32,
    flow: u32,
}

impl Join {
    fn t(&self) -> f64 {
        from_order_key(self.key)
    }
}

const AT_QUEUE: u32 = 1 << 31;

/// Most transfers a workload may have: their indices keep a bit free for `AT_QUEUE`, and each
/// is queued at most twice, so the sequence numbers fit too.
const MOST_TRANSFERS: usize = (AT_QUEUE - 1) as usize;

impl Eq for Join {}
impl PartialOrd for Join {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Join {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key.cmp(&o.key).then(self.seq.cmp(&o.seq))
    }
}

struct Executor<'a> {
    flows: &'a FlowTable,
    out: Outcome,
    joins: BinaryHeap<Reverse<Join>>,
    seq: u32,
    /// What the executor reads of each operation, side by side: operations are visited at
    /// random as dependencies finish, and one cache line each is much cheaper than several.
    op: Vec<OpState>,
    /// Dependents in compressed rows (`op[i].dependents` of them from `op[i].dep_start`).
    dep: Vec<u32>,
    /// Transfers moving bytes, and where each sits in that list.
    moving: Vec<usize>,
    moving_at: Vec<u32>,
    in_flight: Vec<u32>,
    busy_since: Vec<f64>,
    /// Flow-level NIC scheduling: messages of each NIC moving at once, at most `nic_slots`;
    /// the rest wait in arrival order.
    nic_slots: Option<u32>,
    nic_moving: Vec<u32>,
    nic_waiting: Vec<VecDeque<usize>>,
    nic_count: Vec<u32>,
    /// Whether `out.nic_queue` is kept: two entries per message, 12 MB for seed 003's mix,
    /// which a scenario's report never reads.
    nic_trace: bool,
    /// Per transfer: whether it holds one of its NIC's slots; and when a holder's NIC may take
    /// its next message before the holder is delivered (`FlowTable::nic_buffer`, release.rs).
    holds: Vec<bool>,
    rel: Releases,
    /// Heads released early at the current instant whose bytes left move to their tail route
    /// (`release_frees_nic`; the model's `reroute`), taken before the instant settles.
    tails: Vec<usize>,
    /// Copy engines: copies each moves now, and those issued to it that wait, in issue order.
    engine_moving: Vec<u32>,
    engine_waiting: Vec<VecDeque<usize>>,
    /// Maxmin's `port_queueing` (flow/queueing.rs), where on: every resource's load as the model
    /// last settled it, the transfers that joined this instant, and each transfer's wait at its
    /// busiest switch port, paid after its last byte (it holds no resource: the port's
    /// bandwidth went to other packets meanwhile). Empty where off.
    load: Vec<f64>,
    joined_now: Vec<usize>,
    port_wait: Vec<f64>,
}

/// One operation as the executor sees it (copies of the workload's and flow table's columns).
struct OpState {
    /// Earliest issue time, and the flow table's setup and overhead.
    issue_at: f64,
    setup: f64,
    overhead: f64,
    dep_start: u32,
    dependents: u32,
    /// Dependencies not done yet.
    deps_left: u32,
    /// The flow table's NIC (or NO_NIC) and copy engine (or NO_ENGINE).
    nic: u32,
    engine: u32,
    compute: bool,
    /// Moved by NCCL's kernels (`Transfer::kernel`): its NIC's scheduling does not hold it back,
    /// since NCCL's proxy posts every connection's steps at once (net.cc `sendProxyProgress`) and
    /// the NIC interleaves them, whatever it does with MPI's messages (`nccl::Comm::new` runs rr).
    nccl: bool,
}

impl Executor<'_> {
    /// Count a message in (`d` = 1) or out (-1) of its NIC's queue.
    fn count_at_nic(&mut self, f: usize, t: f64, d: i32) {
        let q = self.op[f].nic;
        if q != NO_NIC {
            let c = &mut self.nic_count[q as usize];
            *c = (*c as i32 + d) as u32;
            if self.nic_trace {
                self.out.nic_queue.push((t, q, *c));
            }
        }
    }

    /// Whether flow f may start moving now, or must wait behind its NIC's moving messages.
    fn admit(&mut self, f: usize) -> bool {
        let q = self.op[f].nic;
        match self.nic_slots {
            Some(slots) if q != NO_NIC && !self.op[f].nccl => {
                if self.nic_moving[q as usize] >= slots {
                    let waiting = &mut self.nic_waiting[q as usize];
                    waiting.push_back(f);
                    if waiting.len() == 1 && !self.flows.nic_hop.is_empty() {
                        self.rel.next_changed(q as usize);
                    }
                    return false;
                }
                self.nic_moving[q as usize] += 1;
                self.holds[f] = true;
                true
            }
            _ => true,
        }
    }

    /// Flow f, done at t, frees its NIC slot: the next waiting message takes it. Its hop
    /// latencies run from when f's last byte left the NIC (t less f's own), as packets
    /// pipeline back to back, but never before t.
    fn release(&mut self, f: usize, t: f64) {
        let q = self.op[f].nic;
        if !self.holds[f] {
            return;
        }
        self.holds[f] = false;
        if self.rel.on {
            self.hold_ended(f);
        }
        match self.nic_waiting[q as usize].pop_front() {
            Some(g) => {
                self.holds[g] = true;
                let left_nic = t - (self.op[f].setup - self.op[f].overhead);
                let due = (left_nic + self.op[g].setup - self.op[g].overhead).max(t);
                self.schedule(g, due, false);
            }
            None => self.nic_moving[q as usize] -= 1,
        }
    }

    /// Fastest flow f can move: its route's narrowest capacity (per crossing).
    fn alone(&self, f: usize) -> f64 {
        self.flows.route(f).iter().map(|&(l, x)| self.flows.cap[l as usize] / x).fold(f64::INFINITY, f64::min)
    }

    /// Copy f, done at t, frees its engine for the next copy waiting there (due already).
    #[inline(never)]
    fn release_engine(&mut self, f: usize, t: f64) {
        let e = self.op[f].engine;
        if e == NO_ENGINE {
            return;
        }
        match self.engine_waiting[e as usize].pop_front() {
            Some(g) => self.schedule(g, t + self.op[g].setup, false),
            None => self.engine_moving[e as usize] -= 1,
        }
    }

    fn schedule(&mut self, flow: usize, due: f64, at_queue: bool) {
        self.seq += 1;
        let q = self.flows.join_quantum;
        let t = if q > 0.0 && !at_queue { (due / q).ceil() * q } else { due };
        self.joins.push(Reverse(Join { key: order_key(t), seq: self.seq, flow: flow as u32 | if at_queue { AT_QUEUE } else { 0 } }));
    }

    /// A message through a NIC queues there once its overhead is paid, in arrival order, and
    /// meets its hop latencies once the NIC takes it; a copy queues at its copy engine when it
    /// is due and pays its setup once the engine takes it; any other transfer just waits its
    /// setup. Inlined into the executor's loop, as it was before copy engines made it longer.
    #[inline(always)]
    fn issue(&mut self, i: usize, at: f64) {
        self.out.start[i] = at;
        if self.op[i].nic != NO_NIC {
            self.schedule(i, at + self.op[i].overhead, true);
        } else if self.op[i].engine == NO_ENGINE {
            self.schedule(i, at + self.op[i].setup, false);
        } else {
            self.schedule(i, at, true);
        }
    }

    /// Copy f reaches its engine's queue at t: it takes a free slot or waits, in arrival order.
    /// Out of line: a cluster's messages never come here.
    #[inline(never)]
    fn queue_at_engine(&mut self, f: usize, t: f64) {
        let e = self.op[f].engine as usize;
        if self.engine_moving[e] >= self.flows.engine_slots[e] {
            self.engine_waiting[e].push_back(f);
        } else {
            self.engine_moving[e] += 1;
            self.schedule(f, t + self.op[f].setup, false);
        }
    }

    /// Transfer f reaches its queue at t: its copy engine's, or its NIC's.
    fn arrive(&mut self, f: usize, t: f64) {
        if self.op[f].engine != NO_ENGINE {
            return self.queue_at_engine(f, t);
        }
        self.count_at_nic(f, t, 1);
        if self.admit(f) {
            self.schedule(f, t + self.op[f].setup - self.op[f].overhead, false);
        }
    }

    fn joined(&mut self, f: usize, t: f64) {
        if self.holds[f] && self.rel.on {
            self.hold_joined(f, t);
        }
        self.moving_at[f] = self.moving.len() as u32;
        self.moving.push(f);
        if !self.port_wait.is_empty() {
            self.joined_now.push(f);
        }
        // Only `shared` counts messages per resource: the check is made once, not per hop.
        let counting = self.rel.counting();
        for &(l, _) in self.flows.route(f) {
            let l = l as usize;
            if self.in_flight[l] == 0 {
                self.busy_since[l] = t;
            }
            self.in_flight[l] += 1;
            if counting {
                self.rel.counted(l);
            }
        }
    }

    fn computed(&mut self, f: usize, t: f64) {
        self.out.finish[f] = t;
        self.release_dependents(f, t);
    }

    fn release_dependents(&mut self, f: usize, t: f64) {
        let start = self.op[f].dep_start as usize;
        for k in start..start + self.op[f].dependents as usize {
            let d = self.dep[k] as usize;
            self.op[d].deps_left -= 1;
            if self.op[d].deps_left == 0 {
                self.issue(d, self.op[d].issue_at.max(t));
            }
        }
    }

    /// Flow f's last byte arrived at t; the transfer is done after its teardown (a datatype's
    /// unpack kernel), which holds no resource but delays what depends on it.
    fn finished(&mut self, f: usize, t: f64) {
        let done = t + self.flows.teardown[f] + self.port_wait.get(f).copied().unwrap_or(0.0);
        self.out.finish[f] = done;
        if self.rel.on {
            self.ahead_delivered(f);
        }
        self.count_at_nic(f, t, -1);
        let k = self.moving_at[f] as usize;
        self.moving.swap_remove(k);
        if let Some(&g) = self.moving.get(k) {
            self.moving_at[g] = k as u32;
        }
        let counting = self.rel.counting();
        for &(l, _) in self.flows.route(f) {
            let l = l as usize;
            self.in_flight[l] -= 1;
            if self.in_flight[l] == 0 {
                self.out.busy[l] += t - self.busy_since[l];
            }
            if counting {
                self.rel.counted(l);
            }
        }
        self.release_dependents(f, done);
    }
}

/// Run `w` to completion under `model`, whose flows are `flows`; with `record`, keep every
/// phase; with `nic_queues`, apply the NIC scheduling discipline by admission (flow level).
pub fn run(w: &Workload, flows: &FlowTable, model: &mut dyn EventModel, record: bool, nic_queues: bool) -> Result<Outcome> {
    let o = run_until_stuck(w, flows, model, record, nic_queues, true)?;
    match o.start.iter().filter(|s| s.is_nan()).count() {
        0 => Ok(o),
        never => Err(Error::Runtime(format!("{never} transfers never started: their dependencies wait on each other"))),
    }
}

/// The same, except that transfers whose dependencies never all finish (they wait on each
/// other) are left unstarted, with NaN start and finish: a deadlocked program is found in
/// the one pass that runs it; and `Outcome::nic_queue` is kept only with `nic_trace`.
pub fn run_until_stuck(w: &Workload, flows: &FlowTable, model: &mut dyn EventModel, record: bool, nic_queues: bool, nic_trace: bool) -> Result<Outcome> {
    let n = w.transfers.len();
    if n > MOST_TRANSFERS {
        return Err(Error::Runtime(format!("{n} transfers: the executor runs at most {MOST_TRANSFERS} at once; split the workload")));
    }
    let nres = flows.cap.len();
    // Dependents in compressed rows: counted, summed, then filled, each row's offset moving to
    // its end as it fills (so `dep_end[i]` ends as row i's end, row i - 1's as its start).
    let mut dep_end = vec![0u32; n + 1];
    for t in &w.transfers {
        for &j in &t.after {
            dep_end[j + 1] += 1;
        }
    }
    for i in 0..n {
        dep_end[i + 1] += dep_end[i];
    }
    let mut dep = vec![0u32; dep_end[n] as usize];
    for (i, t) in w.transfers.iter().enumerate() {
        for &j in &t.after {
            dep[dep_end[j] as usize] = i as u32;
            dep_end[j] += 1;
        }
    }
    let dep_start = |i: usize| if i == 0 { 0 } else { dep_end[i - 1] };
    let mut x = Executor {
        flows,
        out: Outcome {
            start: vec![f64::NAN; n],
            finish: vec![f64::NAN; n],
            phases: Vec::new(),
            busy: vec![0.0; nres],
            carried: None,
            peak: vec![0.0; nres],
            nic_queue: Vec::new(),
        },
        joins: BinaryHeap::with_capacity(n),
        seq: 0,
        op: w
            .transfers
            .iter()
            .enumerate()
            .map(|(i, t)| OpState {
                issue_at: t.start,
                setup: flows.setup[i],
                overhead: flows.overhead[i],
                dep_start: dep_start(i),
                dependents: dep_end[i] - dep_start(i),
                deps_left: t.after.len() as u32,
                nic: flows.nic[i],
                engine: flows.engine[i],
                compute: t.compute.is_some(),
                nccl: t.kernel,
            })
            .collect(),
        dep,
        moving: Vec::new(),
        moving_at: vec![0; n],
        in_flight: vec![0; nres],
        busy_since: vec![0.0; nres],
        nic_slots: if nic_queues { flows.nic_scheduling.slots() } else { None },
        nic_moving: vec![0; flows.nics.len()],
        nic_waiting: vec![VecDeque::new(); flows.nics.len()],
        nic_count: vec![0; flows.nics.len()],
        nic_trace,
        holds: vec![false; n],
        rel: Releases::new(flows),
        tails: Vec::new(),
        engine_moving: vec![0; flows.engine_slots.len()],
        engine_waiting: vec![VecDeque::new(); flows.engine_slots.len()],
        load: if flows.queueing.is_some() { vec![0.0; nres] } else { Vec::new() },
        joined_now: Vec::new(),
        port_wait: if flows.queueing.is_some() { vec![0.0; n] } else { Vec::new() },
    };
    for i in 0..n {
        if x.op[i].deps_left == 0 {
            x.issue(i, w.transfers[i].start);
        }
    }
    let (mut done, mut finished) = (0usize, Vec::new());
    let mut phase_start = 0.0;
    loop {
        // A relaxed load an instant, against the work of an instant.
        crate::interrupt::STOP.check()?;
        // Heads released after the last instant settled move to their tails at that instant.
        let next_check = if x.tails.is_empty() { x.rel.next() } else { Some(phase_start) };
        let next_join = match (x.joins.peek().map(|Reverse(j)| j.t()), next_check) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        model.horizon(next_join.unwrap_or(f64::INFINITY));
        // A model may leave an instant unfinished on a stop (packet's horizon).
        crate::interrupt::STOP.check()?;
        let t = match (next_join, model.next_finish()) {
            (None, None) if x.moving.is_empty() => break,
            (None, None) => {
                return Err(Error::Runtime(format!("the model gives every moving transfer zero bandwidth at t = {phase_start} s, so nothing can finish")))
            }
            (a, b) => a.unwrap_or(f64::INFINITY).min(b.unwrap_or(f64::INFINITY)),
        };
        if record && !x.moving.is_empty() && t > phase_start {
            let mut active = x.moving.clone();
            active.sort_unstable();
            let rates = active.iter().map(|&f| model.rate(f)).collect();
            x.out.phases.push(Phase { start: phase_start, end: t, active, rates });
        }
        phase_start = t;
        let horizon = t + SAME_TIME * t;
        // Whether a transfer joined or finished at t: only then can the model's rates and loads
        // have changed. A NIC's early release alone leaves them as they are.
        let mut changed = false;
        loop {
            if model.next_finish().is_some_and(|at| at <= horizon) {
                changed = true;
                finished.clear();
                model.finish(t, &mut finished);
                for &f in &finished {
                    x.finished(f, t);
                    x.release(f, t);
                    if !flows.engine_slots.is_empty() {
                        x.release_engine(f, t);
                    }
                }
                done += finished.len();
            } else if x.joins.peek().is_some_and(|Reverse(j)| j.t() <= horizon) {
                changed = true;
                let Reverse(j) = x.joins.pop().unwrap();
                let f = (j.flow & !AT_QUEUE) as usize;
                if j.flow & AT_QUEUE != 0 {
                    x.arrive(f, t);
                } else if x.op[f].compute {
                    // A computation ends when its setup (its duration) does; no model sees it.
                    x.computed(f, t);
                    done += 1;
                } else {
                    model.join(f, t);
                    x.joined(f, t);
                }
            } else if let Some(f) = x.rel.take(horizon) {
                x.release_early(f, t);
            } else if let Some(f) = x.tails.pop() {
                changed = true;
                model.reroute(f, t);
            } else {
                break;
            }
        }
        if changed {
            model.settle(t)?;
            let (touched, load) = model.loads();
            // The highest load, divided by the capacity once at the end (`peak_to_utilisation`):
            // one comparison per touched resource and instant, not a division.
            let peak = &mut x.out.peak[..];
            let load = &load[..peak.len()];
            for &l in touched {
                if load[l as usize] > peak[l as usize] {
                    peak[l as usize] = load[l as usize];
                }
            }
            if x.rel.on {
                x.rel.wake(touched);
            }
            if !x.port_wait.is_empty() {
                for &l in touched {
                    x.load[l as usize] = load[l as usize];
                }
                // Each message's wait from the ports' loads at its start (flow/queueing.rs).
                for &f in &x.joined_now {
                    x.port_wait[f] = flows.port_wait(f, &x.load, model.rate(f));
                }
                x.joined_now.clear();
            }
        }
        if x.rel.on {
            x.look_again(t, &*model);
        }
    }
    peak_to_utilisation(&mut x.out.peak, &flows.cap);
    if let Some(c) = model.carried() {
        x.out.busy = c.busy_s;
        x.out.carried = Some(c.bytes);
    }
    let started = x.out.start.iter().filter(|s| !s.is_nan()).count();
    if done < started {
        return Err(Error::Runtime(format!("{} transfers never finished (dependency bookkeeping)", started - done)));
    }
    Ok(x.out)
}

/// Each resource's highest load over the run as a share of its capacity, the highest of the
/// shares seen (0 where no load was ever above 0). The same value bit for bit as dividing at
/// every instant and keeping the highest quotient: IEEE 754 division is the exact quotient
/// rounded, and rounding never orders two values the other way, so dividing by one positive
/// capacity keeps the loads' order and the highest quotient is the highest load's.
fn peak_to_utilisation(peak: &mut [f64], cap: &[f64]) {
    for (p, &c) in peak.iter_mut().zip(cap) {
        if *p > 0.0 {
            *p /= c;
        }
    }
}

/// Run `w` under a prepared model (see `model::registry`).
pub fn run_prepared(w: &Workload, prepared: &dyn Prepared, record: bool) -> Result<Outcome> {
    run(w, prepared.flows(), prepared.event_model().as_mut(), record, prepared.queues_at_nics())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sc16::{Sc16Params, Sc16Prepared};
    use crate::topology::Machine;
    use crate::units::Bytes;
    use crate::workload::{random_graph, Workload, WorkloadSpec};

    const MIB: f64 = 1048576.0;
    const GIB: f64 = 1073741824.0;

    fn simulate(text: &str, tau: f64) -> (Workload, Outcome) {
        let m = Machine::load("cs-storm-socket").unwrap();
        let w = Workload::resolve(&WorkloadSpec::from_text(text, "w").unwrap(), &m, "w").unwrap();
        let o = run_prepared(&w, &Sc16Prepared::new(&m, &w, Sc16Params { tau, ..Default::default() }).unwrap(), true).unwrap();
        (w, o)
    }

    const EXAMPLE: &str = "transfers:\n  - {src: GPU0, dst: GPU2, size: 300MiB}\n  - {src: GPU1, dst: GPU4, size: 300MiB}\n  - {src: GPU3, dst: GPU2, size: 300MiB}\n  - {src: GPU6, dst: GPU4, size: 300MiB}\n";

    fn ms(x: f64) -> f64 {
        (x * 1e5).round() / 100.0
    }

    #[test]
    fn worked_example_finish_times() {
        let (_, o) = simulate(EXAMPLE, 0.2);
        let f: Vec<f64> = o.finish.iter().map(|&x| ms(x)).collect();
        assert_eq!(f, [64.94, 64.94, 36.08, 36.08]);
        assert_eq!(o.phases.len(), 2);
        // Exact: phase 1 = 300 MiB / (0.7 B); total = (1/B)(128.57/0.3 + 171.43/0.5) MiB.
        let b = 11.6 * GIB;
        let p1 = 300.0 * MIB / (0.7 * b);
        assert!((o.finish[2] - p1).abs() < 1e-12);
        let sent = 0.3 * b * p1;
        let total = p1 + (300.0 * MIB - sent) / (0.5 * b);
        assert!((o.finish[0] - total).abs() < 1e-12);
        let (_, o) = simulate(EXAMPLE, 0.1735);
        let f: Vec<f64> = o.finish.iter().map(|&x| ms(x)).collect();
        assert_eq!(f, [63.52, 63.52, 37.50, 37.50]);
    }

    #[test]
    fn lone_transfer_takes_size_over_b() {
        let (_, o) = simulate("transfers:\n  - {src: GPU1, dst: GPU6, size: 300MiB}\n", 0.1735);
        assert_eq!(o.finish[0], 300.0 * MIB / (11.6 * GIB));
        assert!((o.finish[0] * 1e3 - 25.26).abs() < 0.005);
    }

    /// sc16 has no latency, even on a machine whose devices and links carry some.
    #[test]
    fn sc16_ignores_latencies_of_the_machine() {
        let m = Machine::load("gb5470-1ib").unwrap();
        assert!(m.devices.iter().any(|d| d.latency > 0.0));
        let w = Workload::resolve(&WorkloadSpec::from_text("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n", "w").unwrap(), &m, "w").unwrap();
        let p = Sc16Prepared::new(&m, &w, Sc16Params::default()).unwrap();
        let o = run_prepared(&w, &p, false).unwrap();
        assert_eq!(o.finish[0], MIB / p.bandwidth[0]);
    }

    /// A tiny copy issued late: its rate interval rounds away against the issue time, and it
    /// must still finish (it once spun forever).
    #[test]
    fn a_tiny_late_copy_finishes() {
        let (_, o) = simulate("transfers:\n  - {src: GPU0, dst: GPU1, size: 1B, start: 10000000s}\n", 0.1735);
        assert!(o.finish[0] >= 1e7 && o.finish[0] < 1e7 + 1e-6, "{}", o.finish[0]);
    }

    #[test]
    fn starts_and_dependencies() {
        let text = "transfers:\n  - {name: a, src: GPU0, dst: GPU1, size: 300MiB}\n  - {name: b, src: GPU1, dst: GPU2, size: 300MiB, after: [a]}\n  - {name: c, src: GPU5, dst: GPU4, size: 300MiB, start: 100ms}\n";
        let (_, o) = simulate(text, 0.1735);
        let t = 300.0 * MIB / (11.6 * GIB);
        assert!((o.start[1] - t).abs() < 1e-15);
        assert!((o.finish[1] - 2.0 * t).abs() < 1e-12);
        assert_eq!(o.start[2], 0.1);
        assert!((o.finish[2] - 0.1 - t).abs() < 1e-12);
    }

    /// Invariants of docs/models.md, on seeded random graphs with staggered starts.
    #[test]
    fn invariants_on_random_graphs() {
        let m = Machine::load("cs-storm-socket").unwrap();
        let gpus = m.gpu_names();
        for seed in 0..200u64 {
            let count = 1 + (seed as usize * 7) % 40;
            let mut spec = WorkloadSpec { transfers: random_graph(&gpus, count, Bytes(64 << 20), seed), ..Default::default() };
            let mut rng = crate::workload::generate_rng(seed);
            for t in spec.transfers.iter_mut() {
                t.size = Bytes(1 + (rng.unit() * 300.0 * MIB) as u64);
                if rng.unit() < 0.3 {
                    t.start = Some(crate::units::Time::from_secs(rng.unit() * 0.02));
                }
            }
            let w = Workload::resolve(&spec, &m, "r").unwrap();
            let prepared = Sc16Prepared::new(&m, &w, Sc16Params::default()).unwrap();
            let o = run_prepared(&w, &prepared, true).unwrap();
            let b = prepared.bandwidth[0];
            let mut sent = vec![0.0; w.transfers.len()];
            for p in &o.phases {
                assert!(p.end > p.start);
                for (&i, &r) in p.active.iter().zip(&p.rates) {
                    let f = r / b;
                    assert!((0.0..=1.0 + 1e-12).contains(&f), "factor {f} out of [0, 1]");
                    sent[i] += r * (p.end - p.start);
                }
                // No directed link carries more than B in total.
                let mut load = vec![0.0; prepared.flows.cap.len()];
                for (&i, &r) in p.active.iter().zip(&p.rates) {
                    for &l in prepared.flows.path(i) {
                        load[l as usize] += r;
                    }
                }
                assert!(load.iter().all(|&x| x <= b * (1.0 + 1e-9)), "link over capacity: {load:?}");
            }
            for (i, t) in w.transfers.iter().enumerate() {
                let rel = (sent[i] - t.size as f64).abs() / t.size as f64;
                assert!(rel < 1e-6, "bytes not conserved for {i}: {} vs {}", sent[i], t.size);
                assert!(o.finish[i] >= o.start[i] + t.size as f64 / b * (1.0 - 1e-9), "faster than B");
                assert!(o.start[i] >= t.start);
            }
        }
    }

    /// A GPU's copies to or from host memory queue at one engine per direction (CUDA's copy
    /// engines), under every model: two copies of one direction run one after the other, in
    /// issue order, each paying its setup when the engine takes it; the other direction runs
    /// beside them; `copy_engines: 2` lets two move at once.
    #[test]
    fn host_copies_queue_at_their_gpus_copy_engine_under_every_model() {
        let machine = |engines: &str| {
            let text = format!(
                "name: h\ndevices:\n  - {{name: RC, kind: root_complex}}\n  - {{name: MEM, kind: host_memory, latency: 0s}}\n  - {{name: GPU0, kind: gpu, latency: 2us{engines}}}\nlinks:\n  - {{a: RC, b: MEM, kind: memory, bandwidth: 1000GB/s, latency: 0s}}\n  - {{a: RC, b: GPU0, kind: pcie, gen: 5, lanes: 16, efficiency: 0.8, duplex: 0, latency: 0s}}\n"
            );
            Machine::from_text(&text, "h").unwrap()
        };
        let spec = "transfers:\n  - {src: MEM, dst: GPU0, size: 1GB}\n  - {src: MEM, dst: GPU0, size: 250MB}\n  - {src: GPU0, dst: MEM, size: 250MB}\n";
        let mut ran = Vec::new();
        for entry in crate::model::registry::MODELS {
            let m = machine("");
            let w = Workload::resolve(&WorkloadSpec::from_text(spec, "w").unwrap(), &m, "w").unwrap();
            let prepared = match entry.prepare(&m, &w, &[]) {
                Ok(p) => p,
                Err(e) => {
                    // A model that cannot take host copies says so in one line.
                    assert!(matches!(e, crate::error::Error::Unsupported { .. }) && !e.to_string().contains('\n'), "{}: {e}", entry.name);
                    continue;
                }
            };
            let o = run_prepared(&w, prepared.as_ref(), false).unwrap();
            let (one, quarter) = (o.finish[0] - o.start[0], o.finish[2] - o.start[2]);
            // The second copy in one direction waits for the first, then pays its own setup.
            assert!((o.finish[1] - (o.finish[0] + quarter)).abs() < 1e-3 * quarter, "{}: {:?}", entry.name, o.finish);
            assert!(quarter < 0.3 * one, "{}: the other direction does not wait: {:?}", entry.name, o.finish);
            let m2 = machine(", copy_engines: 2");
            let o2 = run_prepared(&w, entry.prepare(&m2, &w, &[]).unwrap().as_ref(), false).unwrap();
            assert!(o2.finish[1] < o.finish[0], "{}: two engines share: {:?}", entry.name, o2.finish);
            ran.push(entry.name);
        }
        assert!(ran.contains(&"maxmin") && ran.contains(&"packet"), "{ran:?}");
        let e = Machine::from_text("name: h\ndevices:\n  - {name: GPU0, kind: gpu, copy_engines: 0}\nlinks: []\n", "h.yaml").unwrap_err().to_string();
        assert!(e.starts_with("h.yaml: devices[0].copy_engines: 0 is not in 1..=64"), "{e}");
        let e = Machine::from_text("name: h\ndevices:\n  - {name: RC, kind: root_complex, copy_engines: 1}\nlinks: []\n", "h.yaml").unwrap_err().to_string();
        assert!(e.contains("devices[0].copy_engines: applies to GPUs only"), "{e}");
    }

    /// A copy joins its engine's queue when it is due, not when it is listed or when what it
    /// waits for is done earlier: a later copy listed first does not hold the engine, and a
    /// copy never finishes before its start. A copy into another node's memory goes through
    /// its NIC's queue, not an engine's.
    #[test]
    fn copies_queue_at_their_engine_when_due_and_cross_nics_without_one() {
        let text = "name: h\ndevices:\n  - {name: RC0, kind: root_complex}\n  - {name: RC1, kind: root_complex}\n  - {name: MEM0, kind: host_memory}\n  - {name: MEM1, kind: host_memory}\n  - {name: GPU0, kind: gpu, latency: 2us}\n  - {name: NIC0, kind: nic}\n  - {name: NIC1, kind: nic}\n  - {name: SW, kind: switch}\nlinks:\n  - {a: RC0, b: GPU0, kind: pcie, gen: 4, lanes: 16}\n  - {a: RC0, b: NIC0, kind: pcie, gen: 4, lanes: 16}\n  - {a: RC1, b: NIC1, kind: pcie, gen: 4, lanes: 16}\n  - {a: RC0, b: MEM0, kind: memory, bandwidth: 200GB/s}\n  - {a: RC1, b: MEM1, kind: memory, bandwidth: 200GB/s}\n  - {a: NIC0, b: SW, kind: network, bandwidth: 25GB/s}\n  - {a: NIC1, b: SW, kind: network, bandwidth: 25GB/s}\nnetwork: {nic_scheduling: fcfs}\n";
        let m = Machine::from_text(text, "h").unwrap();
        let run = |spec: &str| {
            let w = Workload::resolve(&WorkloadSpec::from_text(spec, "w").unwrap(), &m, "w").unwrap();
            let o = run_prepared(&w, crate::model::registry::get("maxmin").unwrap().prepare(&m, &w, &[]).unwrap().as_ref(), false).unwrap();
            for i in 0..w.transfers.len() {
                assert!(o.finish[i] > o.start[i] && o.start[i] >= w.transfers[i].start, "{spec}: {:?} {:?}", o.start, o.finish);
            }
            o
        };
        let o = run("transfers:\n  - {src: MEM0, dst: GPU0, size: 1MB, start: 10ms}\n  - {src: MEM0, dst: GPU0, size: 1MB}\n");
        assert!(o.finish[1] < 1e-4 && o.finish[0] < 10.1e-3, "{:?}", o.finish);
        let o = run("transfers:\n  - {name: a, src: MEM0, dst: GPU0, size: 1MB}\n  - {src: MEM0, dst: GPU0, size: 1MB, start: 10ms, after: [a]}\n");
        assert!(o.finish[1] > 10e-3, "{:?}", o.finish);
        let o = run("transfers:\n  - {name: slow, src: NIC0, dst: MEM0, size: 1GB}\n  - {src: GPU0, dst: MEM1, size: 1MB}\n  - {src: GPU0, dst: MEM1, size: 1MB}\n  - {src: GPU0, dst: MEM1, size: 1MB}\n  - {src: GPU0, dst: MEM0, size: 1MB, after: [slow]}\n");
        assert!(o.finish.iter().all(|f| f.is_finite()), "{:?}", o.finish);
    }
}
