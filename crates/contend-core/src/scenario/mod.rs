//! A scenario: a cluster (with the knobs a study turns), a workload of jobs running rank
//! programs, and a model. `run` lowers every job to the one workload DAG, runs it under the
//! one executor, and reports per job its run time, computation, communication and their
//! overlap, and the busiest links.

use crate::error::{parse_document, read_user_file, Error, Result};
use crate::model::registry;
use crate::report::{self, Detail, Report};
use crate::sim;
use crate::topology::{Machine, NicScheduling, Routing};
use crate::workload::program::{self, apps, jobs, MpiParams, OpOrigin, Program};
use crate::workload::Workload;
use lowering::Lowering;
use rayon::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod links;
mod lowering;
mod overlap;
mod progress;
pub use links::{RunLinks, DEFAULT_TOP_LINKS, MAX_TOP_LINKS};
pub use lowering::group as lowering_group;
pub use progress::Progress;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A machine or cluster preset, or a path to its file (relative to the scenario's folder).
    pub cluster: String,
    /// Multiplies the bandwidth of every network link and NIC (clusters only; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth_scale: Option<f64>,
    /// Overrides the cluster's NIC scheduling: fcfs, rr or rr-N.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nic_scheduling: Option<String>,
    /// Overrides the cluster's routing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub routing: Option<Routing>,
    /// A registered model (default maxmin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
    /// MPI protocol costs (default: TraceR's).
    #[serde(default)]
    pub mpi: MpiParams,
    /// An NCCL tuner plugin's CSV file (NCCL's example plugin, `NCCL_TUNER_CONFIG_FILE`), relative
    /// to the scenario's folder: rank programs' NCCL calls take its first applicable line before
    /// NCCL's model, as `contend nccl-tests --tuner` does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nccl_tuner: Option<String>,
    pub workload: ScenarioWorkload,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioWorkload {
    /// Seed 003's multi-job mix: applications and sizes drawn until the cluster's GPUs are full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<MixSpec>,
    /// Jobs, each an application skeleton (`contend apps`) or a program file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<JobSpec>,
    #[serde(default)]
    pub placement: jobs::Placement,
    /// Multiplies every computation (a GPU's speed-up over the traced CPU; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_scale: Option<f64>,
    /// Seed of random placement (default 0).
    #[serde(default)]
    pub seed: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MixSpec {
    pub seed: u64,
    /// Which workload (0 to 19) of seed 003's set of 20 drawn from `seed`, in which every
    /// (application, size) pair occurs at least 4 times; without it, one mix drawn from `seed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u32>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    /// An application skeleton's name; or give `program`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app: Option<String>,
    /// A rank program file (`contend schema program`), relative to the scenario's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// Ranks of an application (a program file gives its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<u32>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, String>,
}

/// Per job, columns.
#[derive(Clone, Debug, Default, Serialize)]
pub struct JobTable {
    pub job: Vec<u32>,
    pub app: Vec<String>,
    pub ranks: Vec<u32>,
    pub start_s: Vec<f64>,
    pub finish_s: Vec<f64>,
    pub run_time_s: Vec<f64>,
    /// Mean over ranks of seconds computing.
    pub compute_s: Vec<f64>,
    /// Run time less compute: the communication not hidden behind computation (sending,
    /// receiving, waiting), as seed 003's figures show it.
    pub comm_s: Vec<f64>,
    /// Mean over ranks of seconds computing while a message of the rank (sent or received,
    /// from its start to its finish) is in flight; at most compute_s.
    pub overlap_s: Vec<f64>,
    pub messages: Vec<u64>,
    pub bytes: Vec<u64>,
}

/// Every operation of the run, columns (on request: they grow with the messages).
#[derive(Clone, Debug, Default, Serialize)]
pub struct OperationTable {
    pub job: Vec<u32>,
    /// The rank that computes, or sends the message.
    pub rank: Vec<u32>,
    /// compute, message, control (a rendezvous's request from the receiver) or overhead (the
    /// sender's CPU cost of an eager send: MPI's software, communication).
    pub kind: Vec<&'static str>,
    /// The receiving rank of a message; -1 for a computation, and for an NCCL NVLS message
    /// into or out of an NVSwitch (its `rank` is then the GPU's end).
    pub peer: Vec<i64>,
    pub bytes: Vec<u64>,
    pub start_s: Vec<f64>,
    pub finish_s: Vec<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    pub makespan_s: f64,
    pub jobs: usize,
    pub ranks: u32,
    pub messages: u64,
    pub bytes: u64,
    /// Operations of the DAG (messages, control messages, computations).
    pub operations: usize,
    /// Links that carried bytes (the report lists the busiest of them).
    pub links: usize,
}

#[derive(Debug, Serialize)]
pub struct RunReport {
    pub scenario: ScenarioSpec,
    pub machine: String,
    pub model: String,
    pub summary: RunSummary,
    pub jobs: JobTable,
    /// The busiest links (every one with detail).
    pub links: RunLinks,
    /// Every operation and link, on request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<Report>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operations: Option<OperationTable>,
    /// What the run's NCCL_* variables did to rank programs' NCCL calls (`nccl::environment`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ScenarioSpec {
    pub fn from_text(text: &str, origin: &str) -> Result<ScenarioSpec> {
        parse_document(text, origin)
    }
}

/// A file a scenario names: relative to the scenario's own folder where it is there, else as
/// given (relative to where contend runs). Presets pass through. An origin may name its file
/// and then, in parentheses, where in it: a study's point is "s.yaml (point 3: …)" with its
/// base inline, or "base.yaml (study s.yaml, point 3: …)" with its base in a file, whose own
/// paths start at the base's folder and whose axis values, written in the study, at the study's.
pub(super) fn beside(origin: &str, path: &str) -> String {
    let p = std::path::Path::new(path);
    if p.is_absolute() {
        return path.to_string();
    }
    let mut files = vec![origin];
    if !std::path::Path::new(origin).exists() {
        if let Some((base, rest)) = origin.split_once(" (study ") {
            files = vec![base, rest.split_once(", point ").map_or(rest, |(study, _)| study)];
        } else if let Some((file, _)) = origin.split_once(" (") {
            files = vec![file];
        }
    }
    files
        .iter()
        .filter_map(|f| std::path::Path::new(f).parent())
        .map(|dir| dir.join(p))
        .find(|candidate| candidate.exists())
        .map_or_else(|| path.to_string(), |c| c.to_string_lossy().into_owned())
}

/// What `bandwidth_scale` takes: x/16 to 16x, the range seed 003's studies sweep (README,
/// docs/workloads.md), declared as a parameter kind so that a refusal words it as every other.
pub const BANDWIDTH_SCALE: crate::params::Kind = crate::params::Kind::Real { min: 0.0625, max: 16.0, open_min: false, open_max: false };

/// The scenario's knobs on its cluster, checked: the bandwidth factor and the NIC scheduling.
fn knobs(s: &ScenarioSpec, origin: &str) -> Result<(f64, Option<NicScheduling>)> {
    let nic = s.nic_scheduling.as_deref().map(NicScheduling::parse).transpose().map_err(|e| Error::input(origin, "nic_scheduling", e))?;
    let scale = s.bandwidth_scale.unwrap_or(1.0);
    let crate::params::Kind::Real { min, max, .. } = BANDWIDTH_SCALE else { unreachable!("a real range") };
    if !(min..=max).contains(&scale) {
        return Err(Error::input(origin, "bandwidth_scale", format!("is {scale}; give {} (x/16 .. 16x)", BANDWIDTH_SCALE.describe())));
    }
    Ok((scale, nic))
}

fn build_machine(s: &ScenarioSpec, origin: &str) -> Result<Machine> {
    let (scale, nic) = knobs(s, origin)?;
    let path = beside(origin, &s.cluster);
    // A cluster that is neither a preset nor a file is the scenario's mistake: named by its field.
    let named = |e: Error| match e {
        Error::Input { file, field, problem } if file == path && field.is_empty() && problem.starts_with("is neither") => {
            Error::input(origin, "cluster", format!("\"{}\" {problem}", s.cluster))
        }
        e => e,
    };
    Machine::load_adjusted(&path, |c, _| match c {
        Some(c) => {
            c.scale(scale);
            if let Some(n) = nic {
                c.network.nic_scheduling = n;
            }
            if let Some(r) = s.routing {
                c.network.routing = r;
            }
            Ok(())
        }
        None if scale != 1.0 || nic.is_some() || s.routing.is_some() => {
            Err(Error::input(origin, "cluster", format!("{} is a single machine; bandwidth_scale, nic_scheduling and routing apply to clusters", s.cluster)))
        }
        None => Ok(()),
    })
    .map_err(named)
}

/// The GPUs of every node, node by node (`n12.GPU3` is node 12's; a single machine is one node).
fn gpus_by_node(m: &Machine) -> Vec<Vec<usize>> {
    let mut nodes: BTreeMap<u64, Vec<usize>> = BTreeMap::new();
    for g in m.gpus() {
        let name = &m.devices[g].name;
        let node = name.strip_prefix('n').and_then(|r| r.split_once('.')).and_then(|(n, _)| n.parse().ok()).unwrap_or(0);
        nodes.entry(node).or_default().push(g);
    }
    nodes.into_values().collect()
}

/// A job: its name (the application, or the program file as written), its program, and the
/// file its operations come from (what a mistake in them names).
struct Job {
    name: String,
    program: Program,
    source: String,
}

/// Each job.
fn programs(s: &ScenarioSpec, origin: &str, gpus: u32) -> Result<Vec<Job>> {
    let w = &s.workload;
    if w.mix.is_some() != w.jobs.is_empty() {
        return Err(Error::input(origin, "workload", "needs either `mix: {seed: N}` or a list of `jobs`"));
    }
    if let Some(mix) = &w.mix {
        // Seed 003 draws jobs of 32 to 512 ranks: a smaller machine gets no job at all (the run
        // then failed with "no job has an operation" after `--check` had passed it).
        let least = jobs::SIZES[0];
        if gpus < least {
            return Err(Error::input(
                origin,
                "workload.mix",
                format!(
                    "{} has {gpus} GPUs, fewer than seed 003's smallest job ({least} ranks); use a cluster of {least} GPUs or more, or list `jobs`",
                    s.cluster
                ),
            ));
        }
        let drawn = match mix.index {
            None => jobs::draw_mix(mix.seed, gpus),
            Some(k) if k < 20 => jobs::mix_set(mix.seed, 20, gpus, 4).0.swap_remove(k as usize),
            Some(k) => return Err(Error::input(origin, "workload.mix.index", format!("is {k}; seed 003's set has workloads 0 to 19"))),
        };
        // Each job's program on rayon's pool (they are independent), in the mix's order.
        let jobs: Vec<Result<Job>> = drawn
            .into_par_iter()
            .enumerate()
            .map(|(i, (app, ranks))| {
                let program = apps::app(app).unwrap().program(ranks, &BTreeMap::new(), origin, &format!("workload.mix job {i}"))?;
                Ok(Job { name: app.to_string(), program, source: origin.to_string() })
            })
            .collect();
        return jobs.into_iter().collect();
    }
    w.jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let field = format!("workload.jobs[{i}]");
            match (&j.app, &j.program) {
                (Some(name), None) => {
                    let app = apps::app(name).ok_or_else(|| {
                        let names: Vec<&str> = apps::APPS.iter().map(|a| a.name).collect();
                        Error::input(origin, format!("{field}.app"), format!("\"{name}\" is not an application; use one of {}", names.join(", ")))
                    })?;
                    let ranks = match j.ranks {
                        None => return Err(Error::input(origin, format!("{field}.ranks"), "is missing; say how many ranks the job has")),
                        Some(0) => return Err(Error::input(origin, format!("{field}.ranks"), "is 0; give a job at least one rank")),
                        Some(r) => r,
                    };
                    Ok(Job { name: name.clone(), program: app.program(ranks, &j.params, origin, &format!("{field}.params"))?, source: origin.to_string() })
                }
                (None, Some(path)) => {
                    if j.ranks.is_some() || !j.params.is_empty() {
                        return Err(Error::input(origin, &field, "gives a program file with ranks or params; a program file says its own ranks"));
                    }
                    let file = beside(origin, path);
                    Ok(Job { name: path.clone(), program: Program::from_text(&read_user_file(&file)?, &file)?, source: file })
                }
                _ => Err(Error::input(origin, &field, "needs exactly one of `app` (with `ranks`) or `program`")),
            }
        })
        .collect()
}

/// A scenario's jobs and their sizes, checked to fit the cluster's GPUs (`nodes`).
fn jobs_fitting(s: &ScenarioSpec, origin: &str, nodes: &[Vec<usize>]) -> Result<(Vec<Job>, Vec<u32>)> {
    let gpus = nodes.iter().map(Vec::len).sum::<usize>() as u32;
    let progs = programs(s, origin, gpus)?;
    let sizes: Vec<u32> = progs.iter().map(|j| j.program.ranks.len() as u32).collect();
    let total: u32 = sizes.iter().sum();
    if total > gpus {
        return Err(Error::input(
            origin,
            "workload",
            format!("needs {total} ranks but {} has {gpus} GPUs; shrink the jobs or use a bigger cluster", s.cluster),
        ));
    }
    let scale = s.workload.compute_scale.unwrap_or(1.0);
    if !(scale > 0.0 && scale.is_finite()) {
        return Err(Error::input(origin, "workload.compute_scale", format!("is {scale}; give a positive factor")));
    }
    Ok((progs, sizes))
}

/// The model a scenario runs under: its own, else the registry's general default (maxmin, the
/// flow level seed 003's studies use) on any `cluster:`, a PCIe node preset included: a scenario
/// runs rank programs, and sc16, the default on a PCIe tree, models copies alone.
pub fn model_name(s: &ScenarioSpec) -> &str {
    s.model.as_deref().unwrap_or(registry::general_default().name)
}

/// The scenario's model, and its parameters checked against the model's table (names and
/// values, before anything runs); mistakes name the scenario file's fields.
fn model_entry(s: &ScenarioSpec, origin: &str) -> Result<&'static registry::ModelEntry> {
    let name = model_name(s);
    // The registry's lookup, its mistake re-aimed at the scenario file's field.
    let entry = registry::get(name).map_err(|e| match e {
        Error::Input { problem, .. } => Error::input(origin, "model", format!("\"{name}\" {problem}")),
        e => e,
    })?;
    let pairs = model_params(s);
    crate::params::Values::parse(
        entry.name,
        entry.params,
        pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        crate::params::At::File { origin, field: "params" },
    )?;
    nccl_constants(s, origin, &[])?;
    Ok(entry)
}

/// The scenario's parameters that are its model's: all but NCCL's (`nccl_*`), which reach rank
/// programs' NCCL calls (`nccl_constants`).
fn model_params(s: &ScenarioSpec) -> Vec<(String, String)> {
    s.params.iter().filter(|(k, _)| !crate::nccl::constants::is_nccl(k)).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// NCCL's constants from the scenario's `nccl_*` parameters (NCCL's table, `nccl::constants`),
/// as `contend nccl-tests --param` takes them, and those `env` sets (NCCL_* variables, checked
/// where read); a mistake names the scenario's field.
pub(crate) fn nccl_constants(s: &ScenarioSpec, origin: &str, env: &[(String, String)]) -> Result<crate::nccl::constants::Constants> {
    let pairs: Vec<(String, String)> = s.params.iter().map(|(k, v)| (k.clone(), v.clone())).chain(env.iter().cloned()).collect();
    Ok(crate::nccl::constants::split_at(&pairs, crate::params::At::File { origin, field: "params" })?.0)
}

/// Check a scenario without running it: its cluster and knobs, its jobs, that they fit, its model
/// and the names of the model's parameters. Milliseconds, so that a study checks every point
/// before the first one runs.
pub fn check(s: &ScenarioSpec, origin: &str, session: &Session) -> Result<()> {
    model_entry(s, origin)?;
    let nodes = checked_gpus(s, origin, session)?;
    // Jobs are checked once per workload and cluster size too (programs from files each time:
    // a file may change).
    let gpus = nodes.iter().map(Vec::len).sum::<usize>();
    let key = (serde_json::to_string(&s.workload).expect("scenarios serialise"), gpus);
    let remembered = s.workload.jobs.iter().all(|j| j.program.is_none());
    if remembered && session.checked_jobs.lock().unwrap_or_else(|e| e.into_inner()).contains(&key) {
        return Ok(());
    }
    jobs_fitting(s, origin, &nodes)?;
    if remembered {
        let mut checked = session.checked_jobs.lock().unwrap_or_else(|e| e.into_inner());
        if checked.len() >= 1024 {
            checked.remove(0);
        }
        checked.push(key);
    }
    Ok(())
}

/// Clusters a session has checked, by what makes them (the file as read or the preset, the
/// routing, whether knobs are given), with their GPUs node by node.
type Checked = Vec<((String, Option<String>, Option<Routing>, bool), Vec<Vec<usize>>)>;

/// What a sequence of runs and checks may share — a study worker's, a notebook's: the last
/// run's lowered jobs and prepared model, and the clusters and workloads already checked. Owned
/// by the caller (`api::Session`), never process-wide, so that two sessions never see each
/// other's and dropping one frees what it kept.
#[derive(Default)]
pub struct Session {
    kept: std::sync::Mutex<Option<lowering::Kept>>,
    checked: std::sync::Mutex<Checked>,
    /// Workloads checked, with the GPUs of their cluster.
    checked_jobs: std::sync::Mutex<Vec<(String, usize)>>,
}

/// The cluster's GPUs node by node, the scenario's knobs checked. A study checks every point,
/// and its points name a few clusters at many bandwidths and NIC policies (which cannot make a
/// cluster that loads fail to): each cluster is built once (25 ms at 2,048 GPUs), the knobs
/// checked every time.
fn checked_gpus(s: &ScenarioSpec, origin: &str, session: &Session) -> Result<Vec<Vec<usize>>> {
    let (scale, nic) = knobs(s, origin)?;
    let path = beside(origin, &s.cluster);
    let key = (path.clone(), std::fs::read_to_string(&path).ok(), s.routing, scale != 1.0 || nic.is_some() || s.routing.is_some());
    if let Some((_, nodes)) = session.checked.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(k, _)| *k == key) {
        return Ok(nodes.clone());
    }
    let nodes = gpus_by_node(&build_machine(s, origin)?);
    let mut checked = session.checked.lock().unwrap_or_else(|e| e.into_inner());
    if checked.len() >= 64 {
        checked.remove(0);
    }
    checked.push((key, nodes.clone()));
    Ok(nodes)
}

/// What a run reports beyond its jobs, and who hears of its progress.
#[derive(Clone, Copy)]
pub struct RunOptions<'p> {
    /// Every operation, and the report of every transfer and link.
    pub detail: bool,
    /// The busiest links to report (0 to MAX_TOP_LINKS); `None`: every link.
    pub top_links: Option<usize>,
    /// (messages delivered, messages in all), now and then.
    pub progress: Progress<'p>,
    /// Where this run keeps its lowered jobs for the next run, and takes the last run's where
    /// they are the same (a sweep over the network; see `lowering`); `None`: nothing is kept.
    pub session: Option<&'p Session>,
    /// The caller's NCCL_* variables as (name, value) pairs: rank programs' NCCL calls read them
    /// as NCCL does (`nccl::environment`); none by default.
    pub nccl_env: &'p [(String, String)],
}

impl Default for RunOptions<'_> {
    fn default() -> Self {
        RunOptions { detail: false, top_links: Some(DEFAULT_TOP_LINKS), progress: None, session: None, nccl_env: &[] }
    }
}

/// Per job, the mean over its ranks of the overlap of computation and communication.
fn overlaps(w: &Workload, o: &sim::Outcome, origins: &[OpOrigin], slots: &[Vec<usize>], devices: usize) -> Vec<f64> {
    let mut compute: Vec<Vec<(f64, f64)>> = vec![Vec::new(); devices];
    let mut messages: Vec<Vec<(f64, f64)>> = vec![Vec::new(); devices];
    for (i, t) in w.transfers.iter().enumerate() {
        let span = (o.start[i], o.finish[i]);
        if t.compute.is_none() {
            messages[t.src].push(span);
            messages[t.dst].push(span);
        } else if origins[i].kind == program::OpKind::Compute {
            compute[t.src].push(span);
        }
    }
    // Each device's overlap on its own (sorting and merging its intervals) on rayon's pool,
    // then each job's mean summed over its ranks in their order, as one thread would.
    let per_device: Vec<f64> = compute.par_iter_mut().zip(messages.par_iter_mut()).map(|(c, m)| overlap::overlap(c, m)).collect();
    slots
        .iter()
        .map(|devs| {
            let sum: f64 = devs.iter().map(|&d| per_device[d]).sum();
            sum / devs.len().max(1) as f64
        })
        .collect()
}

/// Run a scenario: every job's times, the busiest links (`opts.top_links`), and with
/// `opts.detail` every operation.
pub fn run(s: &ScenarioSpec, origin: &str, opts: &RunOptions) -> Result<RunReport> {
    if let Some(n) = opts.top_links.filter(|&n| n > MAX_TOP_LINKS) {
        return Err(Error::input("--links", "", format!("is {n}; give 0 to {MAX_TOP_LINKS} (--detail lists every link)")));
    }
    let detail = opts.detail;
    let entry = model_entry(s, origin)?;
    let m = build_machine(s, origin)?;
    let mut taken = lowering::take(s, origin, &m, detail, opts.session, opts.nccl_env)?;
    let low = taken.lowering.clone();
    let Lowering { jobs: progs, sizes, slots, workload: w, origins, lowered, rank_on, notes } = &*low;
    if progs.iter().any(|j| j.program.uses_nccl()) {
        crate::nccl::check_model(entry.name)?;
    }
    let total: u32 = sizes.iter().sum();
    if w.transfers.is_empty() {
        return Err(Error::input(origin, "workload", "does nothing: no job has an operation"));
    }
    let pairs = model_params(s);
    let prepared = match taken.prepared(&m, entry.name, &pairs)? {
        Some(kept) => kept,
        // A kept lowering names the point it was made for (mistakes in transfers name w.origin).
        None => entry.prepare(&m, w, &pairs).map_err(|e| e.reaimed(&w.origin, origin))?,
    };
    // Operations that never start are a deadlock of the programs: the executor finds them
    // in the same pass that runs everything else.
    let mut model = prepared.event_model();
    if let Some(report) = opts.progress {
        let flows = w.transfers.iter().filter(|t| t.compute.is_none()).count() as u64;
        model = Box::new(progress::Counting::new(model, flows, report));
    }
    // The report has no NIC table: the executor keeps no trace of its queues.
    let o = sim::run_until_stuck(w, prepared.flows(), model.as_mut(), false, prepared.queues_at_nics(), false)?;
    drop(model);
    let stuck: Vec<usize> = (0..o.start.len()).filter(|&i| o.start[i].is_nan()).collect();
    if !stuck.is_empty() {
        let ps: Vec<&Program> = progs.iter().map(|j| &j.program).collect();
        return Err(Error::input(origin, "workload", program::deadlock(&ps, origins, &stuck)));
    }
    let mut table = JobTable::default();
    let (mut messages, mut bytes) = (vec![0u64; progs.len()], vec![0u64; progs.len()]);
    for (t, o) in w.transfers.iter().zip(origins) {
        if t.compute.is_none() {
            messages[o.job as usize] += 1;
            bytes[o.job as usize] += t.size;
        }
    }
    // The overlaps and the links' table read the run's outcome alone: side by side.
    let (overlap, (all_links, _)) = rayon::join(|| overlaps(w, &o, origins, slots, m.devices.len()), || report::link_table(w, prepared.flows(), &o));
    for (j, (Job { name: app, program: p, .. }, low)) in progs.iter().zip(lowered).enumerate() {
        let ends = low.ends.iter().map(|e| e.iter().map(|&i| o.finish[i]).fold(0.0, f64::max));
        let finish = ends.fold(0.0, f64::max);
        let n = p.ranks.len().max(1) as f64;
        let compute = low.compute.iter().sum::<f64>() / n;
        table.job.push(j as u32);
        table.app.push(app.clone());
        table.ranks.push(p.ranks.len() as u32);
        table.start_s.push(0.0);
        table.finish_s.push(finish);
        table.run_time_s.push(finish);
        table.compute_s.push(compute);
        table.comm_s.push((finish - compute).max(0.0));
        table.overlap_s.push(overlap[j]);
        table.messages.push(messages[j]);
        table.bytes.push(bytes[j]);
    }
    let summary = RunSummary {
        makespan_s: o.makespan(),
        jobs: progs.len(),
        ranks: total,
        messages: messages.iter().sum(),
        bytes: bytes.iter().sum(),
        operations: w.transfers.len(),
        links: all_links.name.len(),
    };
    let links = links::busiest(all_links, o.makespan(), opts.top_links);
    let operations = detail.then(|| {
        let mut ops = OperationTable::default();
        for (i, (t, org)) in w.transfers.iter().zip(origins).enumerate() {
            // A computation (or an eager send's CPU share) is the rank's own; a message names both ends.
            let (rank, peer) = match (t.compute, rank_on[t.src], rank_on[t.dst]) {
                (Some(_), ..) => (org.rank, -1),
                // NVLS: one end is the NVSwitch, which holds no rank.
                (None, u32::MAX, to) => (to, -1),
                (None, from, u32::MAX) => (from, -1),
                (None, from, to) => (from, to as i64),
            };
            ops.job.push(org.job);
            ops.rank.push(rank);
            ops.kind.push(org.kind.name());
            ops.peer.push(peer);
            ops.bytes.push(t.size);
            ops.start_s.push(o.start[i]);
            ops.finish_s.push(o.finish[i]);
        }
        ops
    });
    let detail = detail.then(|| report::build(&m, w, entry.name, prepared.params(), prepared.flows(), &o, Detail::default()));
    let report = RunReport {
        scenario: s.clone(),
        machine: m.name.clone(),
        model: entry.name.to_string(),
        summary,
        jobs: table,
        links,
        detail,
        operations,
        notes: notes.clone(),
    };
    taken.keep(entry.name, pairs, prepared, low);
    Ok(report)
}

#[cfg(test)]
mod check_tests;
#[cfg(test)]
mod nccl_tests;
#[cfg(test)]
mod tests;
