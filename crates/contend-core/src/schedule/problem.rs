//! A halo exchange prepared for search.
//!
//! Messages are numbered rank-major (rank 0's slots first), the numbering of the transfers in
//! `Problem::workload`, so that rates asked for an active set sorted by message id are the rates
//! `sim::run` asks for. At most one message per rank moves bytes at a time in both semantics, so
//! an active set is a mixed-radix key: digit g is 0 when rank g is idle, slot + 1 otherwise.
//! Rates and round times are memoised per key: in a table shared by all threads when the key
//! space is small (every exhaustive or branch-and-bound search), in a hash map per worker otherwise.

use super::halo::{Halo, MAX_MESSAGES_PER_RANK};
use crate::error::{Error, Result};
use crate::model::{registry, ModelEntry, Prepared, RateModel};
use crate::topology::Machine;
use crate::units::Bytes;
use crate::workload::{TransferSpec, Workload, WorkloadSpec};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Shared memo tables hold at most this many values (64 MiB).
const DENSE_VALUES: u64 = 1 << 23;
/// A worker's own memo is emptied when it reaches this many entries, to bound its memory
/// (long annealing runs on large grids meet millions of active sets).
const WORKER_ENTRIES: usize = 1 << 18;

pub(crate) struct Problem<'a> {
    machine: &'a Machine,
    pub workload: Workload,
    pub model: &'static ModelEntry,
    pub prepared: Box<dyn Prepared>,
    /// Per-message software overhead, seconds.
    pub alpha: f64,
    /// Seconds each message holds its rank's slot before its bytes flow: alpha plus the
    /// setup the model gives its path (the flow table's), and the least of them.
    pub setup: Vec<f64>,
    pub min_setup: f64,
    /// The flow table's join quantum (maxmin's `quantum`): bytes start to flow only at its
    /// multiples, as in the executor; 0 where there is none.
    pub quantum: f64,
    /// Seconds each message holds its rank after its last byte (the flow table's teardown).
    pub teardown: Vec<f64>,
    pub ranks: usize,
    pub deg: Vec<usize>,
    /// Message id of each rank's slot 0.
    pub first: Vec<usize>,
    pub owner: Vec<usize>,
    /// Bytes each message pushes (the flow table's volume).
    pub size: Vec<f64>,
    pub stride: Vec<u64>,
    /// Bytes/s of each message when it is the only one moving.
    pub solo: Vec<f64>,
    /// Directed links that carry messages, as rows of message ids, with their capacities.
    pub link_start: Vec<usize>,
    pub link_msgs: Vec<usize>,
    /// Times message `link_msgs[k]` crosses its link (a staged copy meets host memory twice).
    pub link_times: Vec<f64>,
    pub link_cap: Vec<f64>,
    rates: Option<Memo>,
    rounds: Option<Memo>,
}

impl<'a> Problem<'a> {
    /// Refuse semantics the search cannot evaluate exactly as the executor would.
    pub fn check_semantics(&self, semantics: super::Semantics) -> Result<()> {
        if semantics == super::Semantics::Rounds && self.quantum > 0.0 {
            return Err(Error::Unsupported {
                model: self.model.name.into(),
                reason:
                    "the schedule search times each round as if it began at 0 s, which a join quantum does not allow; use --semantics sequential or quantum=0s"
                        .into(),
            });
        }
        Ok(())
    }

    pub fn new(m: &'a Machine, halo: &Halo, model: &str, params: &[(String, String)], alpha: f64) -> Result<Problem<'a>> {
        if !(alpha >= 0.0 && alpha.is_finite()) {
            return Err(Error::input("--alpha", "", format!("{alpha} s is not a time >= 0; e.g. 2us")));
        }
        let entry = registry::get(model)?;
        let ranks = halo.ranks();
        let deg: Vec<usize> = halo.messages.iter().map(|v| v.len()).collect();
        if let Some(g) = deg.iter().position(|&d| d == 0 || d > MAX_MESSAGES_PER_RANK) {
            return Err(Error::input(&halo.origin, "", format!("rank {g} has {} messages; a schedule needs 1 to {MAX_MESSAGES_PER_RANK} per rank", deg[g])));
        }
        let mut first = Vec::with_capacity(ranks);
        let mut transfers = Vec::new();
        let mut owner = Vec::new();
        for (r, msgs) in halo.messages.iter().enumerate() {
            first.push(transfers.len());
            for msg in msgs {
                owner.push(r);
                transfers.push(TransferSpec {
                    src: m.devices[halo.device[r]].name.clone(),
                    dst: m.devices[halo.device[msg.dst]].name.clone(),
                    size: Bytes(msg.bytes),
                    datatype: msg.datatype.clone(),
                    method: halo.method,
                    ..Default::default()
                });
            }
        }
        let workload = Workload::resolve(&WorkloadSpec { transfers, ..Default::default() }, m, &halo.origin)?;
        let mut stride = Vec::with_capacity(ranks);
        let mut keys = 1u64;
        for &d in &deg {
            stride.push(keys);
            keys = keys
                .checked_mul(d as u64 + 1)
                .ok_or_else(|| Error::input(&halo.origin, "grid", "has too many ranks and neighbours for the schedule search (over 2^64 active sets)"))?;
        }
        let prepared = entry.prepare(m, &workload, params)?;
        // What the executor does that the search must model or refuse, one line each:
        // - issue after the rank's previous message (sequential) or a barrier (rounds): modelled;
        // - setup (latency, alpha, pack kernels) and teardown (unpack kernels): modelled;
        // - the join quantum: modelled in sequential; refused in rounds (`check_semantics`),
        //   whose memoised round times assume every round starts at time 0;
        // - rates: only from a model that gives rates of an active set; event-only models refused;
        // - NIC admission (FCFS, RR-N) and copy-engine queueing: refused where they would act;
        // - the wait at a message's busiest switch port (maxmin `port_queueing`): refused where
        //   it would act (messages through NICs).
        // A new executor feature belongs in this list, refused here until the search models it.
        if prepared.rate_model().is_none() {
            return Err(Error::Unsupported { model: entry.name.into(), reason: "the schedule search needs a model that gives rates of an active set".into() });
        }
        let flows = prepared.flows();
        if flows.nic_scheduling.slots().is_some() && flows.nic.iter().any(|&q| q != crate::flow::NO_NIC) {
            return Err(Error::Unsupported {
                model: entry.name.into(),
                reason: format!(
                    "the schedule search does not model NIC scheduling {} (messages here cross NICs); set network.nic_scheduling: rr, or time a given order with contend simulate",
                    flows.nic_scheduling
                ),
            });
        }
        if flows.queueing.is_some() && flows.nic.iter().any(|&q| q != crate::flow::NO_NIC) {
            return Err(Error::Unsupported {
                model: entry.name.into(),
                reason: "the schedule search does not model the wait at switch ports (port_queueing; messages here cross NICs); set port_queueing=0, or time a given order with contend simulate".into(),
            });
        }
        let mut per_engine = vec![0usize; flows.engine_slots.len()];
        for &e in flows.engine.iter().filter(|&&e| e != crate::flow::NO_ENGINE) {
            per_engine[e as usize] += 1;
        }
        if per_engine.iter().zip(&flows.engine_slots).any(|(&n, &slots)| n > slots as usize) {
            return Err(Error::Unsupported {
                model: entry.name.into(),
                reason: "the schedule search does not model copy engines (here several host copies of one GPU queue at one); time a given order with contend simulate".into(),
            });
        }
        let setup: Vec<f64> = flows.setup.iter().map(|s| alpha + s).collect();
        let min_setup = setup.iter().copied().fold(f64::INFINITY, f64::min);
        let size = flows.volume.clone();
        let teardown = flows.teardown.clone();
        let mut p = Problem {
            machine: m,
            model: entry,
            alpha,
            setup,
            teardown,
            min_setup,
            quantum: flows.join_quantum,
            ranks,
            deg,
            first,
            owner,
            size,
            stride,
            solo: Vec::new(),
            link_start: Vec::new(),
            link_msgs: Vec::new(),
            link_times: Vec::new(),
            link_cap: Vec::new(),
            rates: Memo::new(keys, ranks),
            rounds: Memo::new(keys, 1),
            workload,
            prepared,
        };
        p.index_links();
        let mut w = Worker::new(&p);
        let solo: Vec<f64> = (0..p.size.len())
            .map(|i| {
                let g = p.owner[i];
                w.rates((i - p.first[g] + 1) as u64 * p.stride[g])[g]
            })
            .collect();
        if let Some(i) = solo.iter().position(|&r| r.is_nan() || r <= 0.0) {
            let t = &p.workload.transfers[i];
            return Err(Error::Runtime(format!("model {} gives {} -> {} no bandwidth even alone", entry.name, m.devices[t.src].name, m.devices[t.dst].name)));
        }
        drop(w);
        p.solo = solo;
        Ok(p)
    }

    fn index_links(&mut self) {
        let flows = self.prepared.flows();
        let mut rows: Vec<Vec<(usize, f64)>> = vec![Vec::new(); flows.cap.len()];
        for i in 0..self.size.len() {
            for &(l, times) in flows.route(i) {
                rows[l as usize].push((i, times));
            }
        }
        self.link_start.push(0);
        for (l, row) in rows.into_iter().enumerate().filter(|(_, r)| !r.is_empty()) {
            self.link_msgs.extend(row.iter().map(|x| x.0));
            self.link_times.extend(row.iter().map(|x| x.1));
            self.link_start.push(self.link_msgs.len());
            self.link_cap.push(flows.cap[l]);
        }
    }

    pub fn messages(&self) -> usize {
        self.size.len()
    }

    pub fn machine(&self) -> &'a Machine {
        self.machine
    }

    pub fn model_name(&self) -> &'static str {
        self.model.name
    }

    /// The most bytes any one link must still carry, in seconds at its capacity, given each
    /// message's remaining bytes (a model never puts more than a link's capacity through it).
    pub fn link_bound(&self, rem: &[f64]) -> f64 {
        let mut worst = 0.0f64;
        for (l, cap) in self.link_cap.iter().enumerate() {
            let row = self.link_start[l]..self.link_start[l + 1];
            let bytes: f64 = self.link_msgs[row.clone()].iter().zip(&self.link_times[row]).map(|(&i, &k)| rem[i] * k).sum();
            worst = worst.max(bytes / cap);
        }
        worst
    }

    /// Seconds each rank needs alone for the given remaining bytes (a message never moves faster
    /// than when it is alone, which sc16's factors in [0, 1] guarantee).
    pub fn rank_bound(&self, rem: &[f64]) -> f64 {
        (0..self.ranks).map(|g| (self.first[g]..self.first[g] + self.deg[g]).map(|i| rem[i] / self.solo[i]).sum::<f64>()).fold(0.0, f64::max)
    }

    /// The largest message alone, its path's setup included, without alpha: the unit T_msg
    /// of the SC16 study.
    pub fn t_msg(&self) -> f64 {
        (0..self.size.len()).map(|i| self.setup[i] - self.alpha + self.size[i] / self.solo[i]).fold(0.0, f64::max)
    }

    pub fn slot_of_key(&self, key: u64, g: usize) -> usize {
        ((key / self.stride[g]) % (self.deg[g] as u64 + 1)) as usize
    }
}

/// A lock-free memo indexed by key: racing threads compute the same values, so either store wins.
struct Memo {
    width: usize,
    vals: Vec<AtomicU64>,
    ready: Vec<AtomicBool>,
}

impl Memo {
    fn new(keys: u64, width: usize) -> Option<Memo> {
        let n = keys.checked_mul(width as u64).filter(|&n| n <= DENSE_VALUES)? as usize;
        Some(Memo { width, vals: (0..n).map(|_| AtomicU64::new(0)).collect(), ready: (0..keys).map(|_| AtomicBool::new(false)).collect() })
    }

    fn get(&self, key: u64, out: &mut [f64]) -> bool {
        if !self.ready[key as usize].load(Ordering::Acquire) {
            return false;
        }
        let base = key as usize * self.width;
        for (o, v) in out.iter_mut().zip(&self.vals[base..base + self.width]) {
            *o = f64::from_bits(v.load(Ordering::Relaxed));
        }
        true
    }

    fn put(&self, key: u64, vals: &[f64]) {
        let base = key as usize * self.width;
        for (v, x) in self.vals[base..base + self.width].iter().zip(vals) {
            v.store(x.to_bits(), Ordering::Relaxed);
        }
        self.ready[key as usize].store(true, Ordering::Release);
    }
}

pub(crate) use crate::keymap::KeyMap;

/// One thread's access to the memo tables, with the model instance it computes misses with
/// (a `RateModel` keeps scratch buffers, so every thread needs its own).
pub(crate) struct Worker<'p, 'a> {
    pub p: &'p Problem<'a>,
    model: Option<Box<dyn RateModel + 'p>>,
    active: Vec<usize>,
    out: Vec<f64>,
    row: Vec<f64>,
    rate_map: KeyMap<Box<[f64]>>,
    round_map: KeyMap<f64>,
}

impl<'p, 'a> Worker<'p, 'a> {
    pub fn new(p: &'p Problem<'a>) -> Self {
        Worker { p, model: None, active: Vec::new(), out: Vec::new(), row: vec![0.0; p.ranks], rate_map: KeyMap::default(), round_map: KeyMap::default() }
    }

    /// Bytes/s of each rank's moving message in the active set `key` (0 for idle ranks).
    pub fn rates(&mut self, key: u64) -> &[f64] {
        let p = self.p;
        match &p.rates {
            Some(memo) => {
                if !memo.get(key, &mut self.row) {
                    compute_rates(p, &mut self.model, &mut self.active, &mut self.out, key, &mut self.row);
                    memo.put(key, &self.row);
                }
                &self.row
            }
            None => {
                if self.rate_map.len() >= WORKER_ENTRIES && !self.rate_map.contains_key(&key) {
                    self.rate_map.clear();
                }
                self.rate_map.entry(key).or_insert_with(|| {
                    let mut row = vec![0.0; p.ranks];
                    compute_rates(p, &mut self.model, &mut self.active, &mut self.out, key, &mut row);
                    row.into_boxed_slice()
                })
            }
        }
    }

    /// Makespan of one round whose messages (one per rank in `key`) all start together.
    pub fn round_time(&mut self, key: u64) -> f64 {
        let p = self.p;
        let mut t = [0.0];
        match &p.rounds {
            Some(memo) if memo.get(key, &mut t) => t[0],
            Some(memo) => {
                let t = self.simulate_round(key);
                memo.put(key, &[t]);
                t
            }
            None => match self.round_map.get(&key) {
                Some(&t) => t,
                None => {
                    let t = self.simulate_round(key);
                    if self.round_map.len() >= WORKER_ENTRIES {
                        self.round_map.clear();
                    }
                    self.round_map.insert(key, t);
                    t
                }
            },
        }
    }
}

fn compute_rates<'p>(p: &'p Problem, model: &mut Option<Box<dyn RateModel + 'p>>, active: &mut Vec<usize>, out: &mut Vec<f64>, key: u64, row: &mut [f64]) {
    let model = model.get_or_insert_with(|| p.prepared.rate_model().expect("Problem::new checked that the model has rates"));
    active.clear();
    for g in 0..p.ranks {
        let s = p.slot_of_key(key, g);
        if s > 0 {
            active.push(p.first[g] + s - 1);
        }
    }
    row.fill(0.0);
    if active.is_empty() {
        return;
    }
    out.resize(active.len(), 0.0);
    model.rates(active, out);
    for (&i, &r) in active.iter().zip(out.iter()) {
        row[p.owner[i]] = r;
    }
}
