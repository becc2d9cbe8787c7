//! A scenario's jobs lowered onto its cluster's GPUs: the one workload DAG the executor runs;
//! and what a run may keep of it for the next run of the same session.
//!
//! A sweep's points that differ only in the network (bandwidth, NIC scheduling, routing, the
//! model and its parameters) lower to the same DAG, and lowering a mix of 2,048 ranks is a
//! tenth to a fifth of such a point's time; points that differ in bandwidth and NIC scheduling
//! alone also share the prepared model's routes and plans (its flow table: another tenth to a
//! fifth), all but the capacities. A run given a session (`RunOptions::session`, what a
//! study's workers do) keeps both in its session for the next run, which takes them where everything they
//! depend on is the same.

use super::{gpus_by_node, jobs_fitting, Job, ScenarioSpec, Session};
use crate::error::{Error, Result};
use crate::model::Prepared;
use crate::topology::{Link, Machine, NetworkSpec};
use crate::workload::program::{self, jobs, Lowered, OpOrigin};
use crate::workload::{Transfer, Workload};
use rayon::prelude::*;
use std::sync::Arc;

pub(super) struct Lowering {
    pub jobs: Vec<Job>,
    /// Ranks of each job.
    pub sizes: Vec<u32>,
    /// Each job's GPUs (machine devices), rank by rank.
    pub slots: Vec<Vec<usize>>,
    pub workload: Workload,
    pub origins: Vec<OpOrigin>,
    pub lowered: Vec<Lowered>,
    /// The rank on each device (u32::MAX where none), to name both ends of every message.
    pub rank_on: Vec<u32>,
    /// What the NCCL_* variables did to rank programs' NCCL calls (`nccl::environment`).
    pub notes: Vec<String>,
}

/// Everything a lowering depends on: the scenario's workload and MPI costs as written, the
/// NCCL_* variables read, and the cluster's GPUs node by node. Not the scenario's origin, which differs from point to point of
/// a study: mistakes found later that name the lowering's origin are re-aimed at the run's own.
#[derive(Clone, PartialEq)]
pub(super) struct Key {
    written: String,
    nodes: Vec<Vec<usize>>,
    devices: usize,
}

/// What points of a sweep that can share a lowering have in common (a sweep runs them one
/// after another so that its workers keep their lowering): the cluster as named, the
/// workload and the MPI costs. Points with the same group may still differ in GPUs, if a
/// cluster file changed; `take` compares those too.
pub fn group(s: &ScenarioSpec) -> String {
    serde_json::to_string(&(&s.cluster, &s.workload, &s.mpi)).expect("scenarios serialise")
}

/// A prepared model, and what it was prepared for (the workload aside: it is kept with its lowering).
pub(super) struct KeptModel {
    model: &'static str,
    params: Vec<(String, String)>,
    machine: String,
    prepared: Box<dyn Prepared>,
}

/// What a run keeps in its session: its lowering, and its prepared model once it has run.
pub(super) type Kept = (Key, Arc<Lowering>, Option<KeptModel>);

fn kept(session: &Session) -> std::sync::MutexGuard<'_, Option<Kept>> {
    session.kept.lock().unwrap_or_else(|e| e.into_inner())
}

/// A run's lowering, and the prepared model it may take from the last run and keep for the next.
pub(super) struct Taken<'s> {
    pub lowering: Arc<Lowering>,
    session: Option<&'s Session>,
    key: Option<Key>,
    /// `machine_but_speeds` of the run's machine, once, where the run keeps what it made.
    machine: Option<String>,
    model: Option<KeptModel>,
}

/// `s`'s jobs lowered onto `m`: the session's kept lowering where it is the same, else lowered
/// now (and kept in the session, if there is one). Operations are named only when a report lists them (`detail`), and such a
/// lowering is never kept; nor is one with program files, which may change between runs.
pub(super) fn take<'s>(s: &ScenarioSpec, origin: &str, m: &Machine, detail: bool, session: Option<&'s Session>, env: &[(String, String)]) -> Result<Taken<'s>> {
    let keep = session.is_some();
    let nodes = gpus_by_node(m);
    // NCCL's constants (`nccl_*` parameters) and NCCL_* variables shape rank programs' NCCL calls:
    // part of the lowering.
    let nccl: Vec<(&String, &String)> = s.params.iter().filter(|(k, _)| crate::nccl::constants::is_nccl(k)).collect();
    let variables: Vec<&(String, String)> = env.iter().filter(|(k, _)| crate::nccl::environment::VARIABLES.contains(&k.as_str())).collect();
    let key = (keep && !detail && s.workload.jobs.iter().all(|j| j.program.is_none())).then(|| Key {
        written: serde_json::to_string(&(&s.workload, &s.mpi, &nccl, &variables)).expect("scenarios serialise"),
        nodes: nodes.clone(),
        devices: m.devices.len(),
    });
    let machine = key.is_some().then(|| machine_but_speeds(m));
    if let (Some(key), Some(session)) = (&key, session) {
        // Taken, not borrowed: a run that lowers anew frees the old lowering first (its
        // memory is that of the new one).
        let last = kept(session).take();
        if let Some((old, lowering, model)) = last.filter(|(old, ..)| old == key) {
            *kept(session) = Some((old, lowering.clone(), None));
            return Ok(Taken { lowering, session: Some(session), key: Some(key.clone()), machine, model });
        }
    }
    let lowering = Arc::new(lower(s, origin, m, &nodes, detail, env)?);
    if let (Some(key), Some(session)) = (&key, session) {
        *kept(session) = Some((key.clone(), lowering.clone(), None));
    }
    Ok(Taken { lowering, session, key, machine, model: None })
}

impl Taken<'_> {
    /// The last run's prepared model, where it is `model` with `params` on `m` (the machine
    /// `take` was given) but for the links' bandwidths and NIC scheduling, and takes `m`'s capacities.
    pub fn prepared(&mut self, m: &Machine, model: &'static str, params: &[(String, String)]) -> Result<Option<Box<dyn Prepared>>> {
        match self.model.take() {
            Some(mut k) if k.model == model && k.params == params && self.machine.as_ref() == Some(&k.machine) => {
                Ok(k.prepared.take_capacities(m)?.then_some(k.prepared))
            }
            _ => Ok(None),
        }
    }

    /// Keep the lowering and the prepared model for the next run, if this run asked to; `run`
    /// hands back its own reference to the lowering (`this`) with them. What is not kept is
    /// freed on rayon's pool while the caller goes on to its report (hundreds of thousands of
    /// operations' allocations: a tenth of a second on the one thread otherwise).
    pub fn keep(self, model: &'static str, params: Vec<(String, String)>, prepared: Box<dyn Prepared>, this: Arc<Lowering>) {
        if let (Some(key), Some(machine), Some(session)) = (self.key, self.machine, self.session) {
            drop(this);
            *kept(session) = Some((key, self.lowering, Some(KeptModel { model, params, machine, prepared })));
            return;
        }
        let lowering = self.lowering;
        rayon::spawn(move || drop((this, lowering, prepared)));
    }
}

/// Everything of a machine that a prepared model depends on, but its links' bandwidths and its
/// NIC scheduling (fields are named, so that a new one is a decision here).
fn machine_but_speeds(m: &Machine) -> String {
    use std::fmt::Write;
    let NetworkSpec { routing, nic_scheduling: _, seed, packet, buffer_packets, summary: _ } = &m.network;
    let mut k = format!("{routing:?} {seed} {packet:?} {buffer_packets:?} {}\n", m.spec.network.is_some());
    for d in &m.devices {
        let _ = writeln!(k, "{d:?}");
    }
    for Link { a, b, kind, bandwidth: _, latency, efficiency, duplex, duplex_directed, read_efficiency, p2p, label, gen, peer } in &m.links {
        let _ = writeln!(k, "{a} {b} {kind:?} {latency:e} {efficiency:?} {duplex:?} {duplex_directed:?} {read_efficiency:?} {p2p} {label} {gen:?} {peer:?}");
    }
    k
}

/// One job's operations, their origins and its ends, its indices counted from its first operation.
type JobLowered = (Vec<Transfer>, Vec<OpOrigin>, Lowered, Vec<String>);

pub(super) fn lower(s: &ScenarioSpec, origin: &str, m: &Machine, nodes: &[Vec<usize>], detail: bool, env: &[(String, String)]) -> Result<Lowering> {
    let (jobs, sizes) = jobs_fitting(s, origin, nodes)?;
    // NCCL reads its variables where a communicator is made: a scenario without NCCL calls reads none.
    let environment = if jobs.iter().any(|j| j.program.uses_nccl()) {
        let given = crate::nccl::environment::Given { params: s.params.keys().cloned().collect(), ..Default::default() };
        crate::nccl::environment::Environment::read(env, &given)?
    } else {
        Default::default()
    };
    let scale = s.workload.compute_scale.unwrap_or(1.0);
    let tuner = s
        .nccl_tuner
        .as_deref()
        .map(|t| crate::nccl::tuner::Tuner::load(&super::beside(origin, t)).map_err(|e| Error::input(origin, "nccl_tuner", e.to_string())))
        .transpose()?;
    let constants = super::nccl_constants(s, origin, &environment.params)?;
    let slots = jobs::place(&sizes, nodes, s.workload.placement, s.workload.seed);
    // Jobs lower independently (each on its own GPUs, its indices its own), so on rayon's pool:
    // each into its own operations, then laid end to end in job order, every index shifted by
    // the operations before the job's. The same DAG as lowering them one after another into one
    // list, whatever the threads; the first job (in order) that fails names the mistake.
    let parts: Vec<Result<JobLowered>> = jobs
        .par_iter()
        .zip(&slots)
        .enumerate()
        .map(|(j, (job, devices))| {
            let (mut ops, mut origins) = (Vec::new(), Vec::new());
            // Rank programs' NCCL calls, lowered as `contend nccl-tests` lowers them (its cache
            // of communicators is by GPUs, which no two jobs share: one per job).
            let calls = crate::nccl::program::ProgramCalls::new(m, tuner.as_ref(), constants, &environment);
            let low = program::lower(&job.program, devices, &s.mpi, scale, j as u32, &job.source, Some(&calls), &mut ops, &mut origins)?;
            Ok((ops, origins, low, calls.into_notes()))
        })
        .collect();
    let parts: Vec<JobLowered> = parts.into_iter().collect::<Result<_>>()?;
    let total = parts.iter().map(|p| p.0.len()).sum();
    let (mut ops, mut origins, mut lowered) = (Vec::with_capacity(total), Vec::<OpOrigin>::with_capacity(total), Vec::with_capacity(parts.len()));
    let mut said: Vec<String> = Vec::new();
    for (job_ops, job_origins, mut low, job_notes) in parts {
        for n in job_notes {
            if !said.contains(&n) {
                said.push(n);
            }
        }
        let base = ops.len();
        if base > 0 {
            for e in low.ends.iter_mut().flatten() {
                *e += base;
            }
        }
        ops.extend(job_ops.into_iter().map(|t| t.shifted(base)));
        origins.extend(job_origins);
        lowered.push(low);
    }
    let mut rank_on = vec![u32::MAX; m.devices.len()];
    for devices in &slots {
        for (r, &d) in devices.iter().enumerate() {
            rank_on[d] = r as u32;
        }
    }
    if detail {
        program::name_operations(&mut ops, &origins, |d| rank_on[d]);
    }
    let workload = Workload { transfers: ops, origin: origin.to_string(), ..Default::default() };
    // The environment's lines, then the release's NCCL_ALGO fallbacks the calls took.
    let mut notes =
        environment.notes("rank programs' NCCL calls run NCCL's choice within them; a call's own algo or proto wins, as the scenario's params and --param do");
    notes.extend(said);
    Ok(Lowering { jobs, sizes, slots, workload, origins, lowered, rank_on, notes })
}
