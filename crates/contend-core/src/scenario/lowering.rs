//! A scenario's jobs lowered onto its cluster's GPUs: the one workload DAG the executor runs.
//!
//! A sweep's points that differ only in the network (bandwidth, NIC scheduling, routing, the
//! model and its parameters) lower to the same DAG, and lowering a mix of 2,048 ranks is a
//! tenth to a fifth of such a point's time. A run may keep its lowering for the next run in
//! the same process (`RunOptions::reuse_lowering`, what a study's workers ask for), which takes
//! it when everything the lowering depends on is the same.

use super::{gpus_by_node, jobs_fitting, Job, ScenarioSpec};
use crate::error::Result;
use crate::topology::Machine;
use crate::workload::program::{self, jobs, Lowered, OpOrigin};
use crate::workload::Workload;
use std::sync::{Arc, Mutex};

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
}

/// Everything a lowering depends on: the scenario's workload and MPI costs as written, the
/// file they are read from (mistakes name it), and the cluster's GPUs node by node.
#[derive(PartialEq)]
struct Key {
    written: String,
    origin: String,
    nodes: Vec<Vec<usize>>,
    devices: usize,
}

/// The lowering the last run kept, if it asked to.
static KEPT: Mutex<Option<(Key, Arc<Lowering>)>> = Mutex::new(None);

/// What points of a sweep that can share a lowering have in common (a sweep runs them one
/// after another so that its workers keep their lowering): the cluster as named, the
/// workload and the MPI costs. Points with the same group may still differ in GPUs, if a
/// cluster file changed; `lowering` compares those too.
pub fn group(s: &ScenarioSpec) -> String {
    serde_json::to_string(&(&s.cluster, &s.workload, &s.mpi)).expect("scenarios serialise")
}

/// `s`'s jobs lowered onto `m`: the kept one where it is the same, else lowered now (and kept
/// if `keep`). Operations are named only when a report lists them (`detail`), and such a
/// lowering is never kept; nor is one with program files, which may change between runs.
pub(super) fn lowering(s: &ScenarioSpec, origin: &str, m: &Machine, detail: bool, keep: bool) -> Result<Arc<Lowering>> {
    let nodes = gpus_by_node(m);
    let key = (keep && !detail && s.workload.jobs.iter().all(|j| j.program.is_none())).then(|| Key {
        written: serde_json::to_string(&(&s.workload, &s.mpi)).expect("scenarios serialise"),
        origin: origin.to_string(),
        nodes: nodes.clone(),
        devices: m.devices.len(),
    });
    if let Some(key) = &key {
        // Taken, not borrowed: a run that lowers anew frees the old lowering first (its
        // memory is that of the new one).
        let kept = KEPT.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((old, low)) = kept.filter(|(old, _)| old == key) {
            *KEPT.lock().unwrap_or_else(|e| e.into_inner()) = Some((old, low.clone()));
            return Ok(low);
        }
    }
    let low = Arc::new(lower(s, origin, m, &nodes, detail)?);
    if let Some(key) = key {
        *KEPT.lock().unwrap_or_else(|e| e.into_inner()) = Some((key, low.clone()));
    }
    Ok(low)
}

fn lower(s: &ScenarioSpec, origin: &str, m: &Machine, nodes: &[Vec<usize>], detail: bool) -> Result<Lowering> {
    let (jobs, sizes) = jobs_fitting(s, origin, nodes)?;
    let scale = s.workload.compute_scale.unwrap_or(1.0);
    let slots = jobs::place(&sizes, nodes, s.workload.placement, s.workload.seed);
    let (mut ops, mut origins, mut lowered) = (Vec::new(), Vec::<OpOrigin>::new(), Vec::new());
    for (j, (job, devices)) in jobs.iter().zip(&slots).enumerate() {
        lowered.push(program::lower(&job.program, devices, &s.mpi, scale, j as u32, &job.source, &mut ops, &mut origins)?);
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
    Ok(Lowering { jobs, sizes, slots, workload, origins, lowered, rank_on })
}
