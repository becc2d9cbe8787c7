//! The engine's public surface, in plain serialisable reports: what the Python binding and
//! the CLI call. Every function here is also usable from Rust alone.

use crate::error::{read_user_file, Error, Result};
use crate::model::maxmin::MaxminParams;
use crate::model::{registry, sc16, ExplainPhase, ModelEntry, PhaseSpan, RateAdaptor};
use crate::report::{self, Detail, Report};
use crate::tools::p2p;
use crate::topology::{preset_names, preset_text, DeviceKind, LinkKind, Machine, MachineSpec};
use crate::units::Time;
use crate::workload::columns::TransferColumns;
use crate::workload::{Workload, WorkloadSpec};
use crate::{calibrate, generate, import, schedule, sim};
use serde::Serialize;

#[derive(Serialize, Debug)]
pub struct PresetSummary {
    pub name: String,
    pub description: String,
    pub gpus: usize,
    pub source: String,
}

pub fn presets() -> Vec<PresetSummary> {
    preset_names()
        .into_iter()
        .map(|n| {
            let text = preset_text(n).unwrap();
            // A cluster preset is listed from its description: building 2,048 nodes to count
            // them would cost a listing its start-up budget.
            if let Ok(c) = serde_yaml::from_str::<crate::topology::cluster::ClusterSpec>(text) {
                if let Some((nodes, gpus)) = c.size() {
                    return PresetSummary { name: n.into(), description: c.description, gpus: (nodes * gpus) as usize, source: c.source };
                }
            }
            let m = Machine::from_text(text, n).expect("presets are tested");
            PresetSummary { name: n.into(), description: m.description.clone(), gpus: m.gpus().len(), source: m.source.clone() }
        })
        .collect()
}

/// A preset name or a machine file (YAML or JSON), built.
pub fn load_machine(source: &str) -> Result<Machine> {
    Machine::load(source)
}

/// A machine description given as YAML or JSON text, built.
pub fn parse_machine(text: &str, origin: &str) -> Result<Machine> {
    Machine::from_text(text, origin)
}

/// The machine as an indented text tree.
pub fn render_machine(m: &Machine) -> String {
    crate::topology::render_tree(m)
}

/// A transfers file (YAML or JSON).
pub fn load_transfers(path: &str) -> Result<WorkloadSpec> {
    WorkloadSpec::load(path)
}

/// Transfers given as YAML or JSON text.
pub fn parse_transfers(text: &str, origin: &str) -> Result<WorkloadSpec> {
    WorkloadSpec::from_text(text, origin)
}

/// Transfers given column by column (DataFrames, arrays, records): `workload::columns`.
pub fn transfers_from_columns(columns: TransferColumns, origin: &str) -> Result<WorkloadSpec> {
    columns.into_spec(origin)
}

/// Check transfers against a machine: device names, sizes, dependencies.
pub fn check_transfers(m: &Machine, spec: &WorkloadSpec, origin: &str) -> Result<()> {
    Workload::resolve(spec, m, origin).map(|_| ())
}

/// Predict every transfer's start and finish with the named model, else the machine's default
/// (`registry::chosen`; the report names the model that ran) (`report::simulate`).
pub fn simulate(m: &Machine, spec: &WorkloadSpec, origin: &str, model: Option<&str>, params: &[(String, String)], detail: Detail) -> Result<Report> {
    report::simulate(m, spec, origin, registry::chosen(model, m)?.name, params, detail)
}

#[derive(Serialize, Debug)]
pub struct Explanation {
    #[serde(flatten)]
    pub report: Report,
    pub explain: Vec<ExplainPhase>,
}

/// Run a model that can show its steps (its registry entry has an `explain` hook) and keep, per
/// phase, every transfer's factor after each step and why it changed. The hook owns the
/// model's wording; this runs the executor for it.
pub fn explain(m: &Machine, spec: &WorkloadSpec, origin: &str, model: Option<&str>, params: &[(String, String)]) -> Result<Explanation> {
    let entry = registry::chosen(model, m)?;
    let model_name = entry.name;
    let Some(hook) = entry.explain else {
        let explains: Vec<&ModelEntry> = registry::MODELS.iter().filter(|e| e.explain.is_some()).collect();
        let can = explains.iter().map(|e| e.name).collect::<Vec<_>>().join(" or --model ");
        return Err(match model {
            Some(_) => Error::input("--model", model_name, format!("has no steps to explain; explain works with --model {can}")),
            // None named: the machine's default (an NVLink node's maxmin) is not the user's choice.
            None => {
                let where_default: Vec<&str> = explains.iter().filter_map(|e| e.default_on.as_ref().map(|d| d.words)).collect();
                Error::input(
                    "--model",
                    "",
                    format!(
                        "none given, and {} runs {model_name} by default, which has no steps to explain; explain shows the steps of --model {can} \
                         (the default on {}); `contend simulate` predicts this case",
                        m.name,
                        where_default.join(" or ")
                    ),
                )
            }
        });
    };
    let w = Workload::resolve(spec, m, origin)?;
    let mut outcome = None;
    let explained = hook(m, &w, params, &mut |flows, model| {
        let mut adaptor = RateAdaptor::new(model, flows);
        let o = sim::run(&w, flows, &mut adaptor, true, true)?;
        let spans = o.phases.iter().map(|p| PhaseSpan { start_s: p.start, end_s: p.end, active: p.active.clone() }).collect();
        outcome = Some(o);
        Ok(spans)
    })
    // Not `entry.refusal`: its advice (another model) leads back here, where only this model explains.
    .map_err(|e| match e {
        Error::Unsupported { model, reason } => {
            let reason = format!("{reason}; explain shows {model}'s steps only: `contend simulate` with another --model predicts this case");
            Error::Unsupported { model, reason }
        }
        e => e,
    })?;
    let o = outcome.expect("the hook runs the executor");
    let report = report::build(m, &w, entry.name, explained.params, &explained.flows, &o, Detail { phases: true, nics: false });
    Ok(Explanation { report, explain: explained.phases })
}

/// Devices and links with their resolved bandwidths, for drawing.
#[derive(Serialize, Debug)]
pub struct MachineGraph {
    pub name: String,
    pub description: String,
    pub devices: Vec<GraphDevice>,
    pub links: Vec<GraphLink>,
}

#[derive(Serialize, Debug)]
pub struct GraphDevice {
    pub name: String,
    pub kind: DeviceKind,
    pub model: Option<String>,
    /// Pod or dragonfly group of a network switch.
    pub group: Option<u32>,
    /// A PCIe switch that sends peer-to-peer traffic up to its root complex (ACS redirect).
    pub acs_redirect: bool,
}

#[derive(Serialize, Debug)]
pub struct GraphLink {
    pub a: String,
    pub b: String,
    pub kind: LinkKind,
    pub label: String,
    pub bandwidth_bps: f64,
    pub latency_s: f64,
    /// A PCIe link outside the drawing's spanning forest: it closes a cycle (partitions of one
    /// switch chip joined inside it, a second uplink); drawn and marked.
    pub closes_cycle: bool,
}

pub fn machine_graph(m: &Machine) -> MachineGraph {
    let cycle = crate::topology::closes_cycle(m);
    MachineGraph {
        name: m.name.clone(),
        description: m.description.clone(),
        devices: m
            .devices
            .iter()
            .map(|d| GraphDevice { name: d.name.clone(), kind: d.kind, model: d.model.clone(), group: d.group, acs_redirect: d.acs_redirect })
            .collect(),
        links: m
            .links
            .iter()
            .zip(cycle)
            .map(|(l, closes_cycle)| GraphLink {
                a: m.devices[l.a].name.clone(),
                b: m.devices[l.b].name.clone(),
                kind: l.kind,
                label: l.label.clone(),
                bandwidth_bps: l.bandwidth,
                latency_s: l.latency,
                closes_cycle,
            })
            .collect(),
    }
}

/// The models, as the registry describes them.
pub fn models() -> &'static [ModelEntry] {
    registry::MODELS
}

/// Which model runs where none is named, in words (`--help`): the registry's rule.
pub fn model_default_rule() -> String {
    registry::default_rule()
}

/// Halo presets as (name, description).
pub fn halo_presets() -> &'static [(&'static str, &'static str)] {
    schedule::PRESETS
}

/// Patterns `generate` knows, as (name, description).
pub fn patterns() -> Vec<(&'static str, &'static str)> {
    generate::PATTERNS.iter().map(|p| (p.name, p.help)).collect()
}

pub use generate::{generate, GenerateRequest, MAX_GENERATED};

/// Threads a search may use: at most this many (also bounded by what the system allows).
pub const MAX_THREADS: usize = 1024;
/// Annealing moves per chain, at most.
pub const MAX_ITERATIONS: u64 = 1_000_000_000;

/// A schedule search as the user asks for it: names and quantities with units.
#[derive(Clone, Debug)]
pub struct ScheduleRequest {
    pub halo: String,
    pub semantics: String,
    pub search: String,
    /// None: the machine's default (`registry::chosen`).
    pub model: Option<String>,
    pub params: Vec<(String, String)>,
    pub alpha: String,
    pub seed: u64,
    pub iterations: u64,
    pub threads: usize,
    pub keep_times: bool,
}

/// Search the fastest order of a halo exchange; returns the report and the best schedule as
/// transfers (which `simulate` runs to the same makespan under the same model).
pub fn schedule(m: &Machine, req: &ScheduleRequest, progress: schedule::Progress) -> Result<(schedule::ScheduleReport, WorkloadSpec)> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let most = (4 * cores).min(MAX_THREADS);
    if req.threads > most {
        return Err(Error::input("--threads", "", format!("{} is more than this machine can use; give 0 (one per core) to {most} (4 per core)", req.threads)));
    }
    if !(1..=MAX_ITERATIONS).contains(&req.iterations) {
        return Err(Error::input("--iterations", "", format!("{} is out of range; give 1 to {MAX_ITERATIONS}", req.iterations)));
    }
    let spec = schedule::HaloSpec::load(&req.halo)?;
    let h = schedule::Halo::resolve(&spec, m, &req.halo)?;
    let alpha = Time::parse(&req.alpha).map_err(|e| Error::input("--alpha", "", e))?.secs();
    let opts = schedule::SearchOptions {
        semantics: schedule::Semantics::parse(&req.semantics)?,
        method: schedule::Method::parse(&req.search)?,
        model: registry::chosen(req.model.as_deref(), m)?.name.to_string(),
        params: req.params.clone(),
        alpha,
        seed: req.seed,
        iterations: req.iterations,
        threads: req.threads,
        keep_times: req.keep_times,
        progress,
        ..Default::default()
    };
    let r = schedule::search(m, &h, &opts)?;
    let best = schedule::to_workload(m, &h, &r.best_order, &opts)?;
    Ok((r, best))
}

/// What CUDA's p2pBandwidthLatencyTest would print on this machine (maxmin).
pub fn p2p(m: &Machine, params: &[(String, String)]) -> Result<p2p::P2pReport> {
    one_node(m)?;
    p2p::p2p_matrices(m, &MaxminParams::parse(params)?)
}

/// What NVIDIA's nvbandwidth would print on this machine (maxmin): its copy-engine testcases.
pub fn nvbandwidth(m: &Machine, params: &[(String, String)]) -> Result<crate::tools::nvbandwidth::NvbandwidthReport> {
    one_node(m)?;
    crate::tools::nvbandwidth::predict(m, &MaxminParams::parse(params)?)
}

/// Both tools measure every pair of one node's GPUs.
fn one_node(m: &Machine) -> Result<()> {
    let gpus = m.gpus().len();
    if gpus > P2P_MAX_GPUS {
        return Err(Error::input(
            &m.origin,
            "",
            format!("has {gpus} GPUs: the test measures every pair ({} pairs); give one node (at most {P2P_MAX_GPUS} GPUs)", gpus * (gpus - 1)),
        ));
    }
    Ok(())
}

/// p2pBandwidthLatencyTest measures every pair of one node's GPUs; beyond this many it is not
/// a node (and the matrices would take hours).
pub const P2P_MAX_GPUS: usize = 64;

/// A machine file from an `nvidia-smi topo -m` or NCCL topology XML dump.
pub fn import(path: &str, name: &str, numa_per_socket: i64) -> Result<import::Imported> {
    let text = crate::error::read_user_text(path, "the output of `nvidia-smi topo -m`, an NCCL topology XML or `lspci -vvv`")?;
    import::import(&text, name, path, numa_per_socket)
}

/// Fit a machine to measurements: a CSV of measured patterns (header
/// pattern,src,dst,size,time|bandwidth[,access]) fits every node parameter the data identifies
/// under maxmin; a CSV of measured transfer graphs (graph,src,dst,size,time) fits sc16's bandwidth and
/// tau; p2pBandwidthLatencyTest or nvbandwidth output fits each link kind's efficiency, duplex
/// loss, read efficiency and the latencies (the result's "yaml" is the calibrated machine);
/// `hold_out` fits p2p outputs and patterns on single-pair data only and scores the rest (sc16
/// fits refuse it). `machine_out` (the CLI's `--output`): a fit that gives no machine file (sc16's
/// two parameters, NCCL's constants) is refused before any fitting, as every output is checked first.
/// `nccl`: how an nccl-tests run was run beyond what its output says (the NICs' rate between its
/// hosts, NCCL_ALGO, NCCL_PROTO: as `nccl_tests` takes them).
pub fn calibrate(
    m: &Machine,
    path: &str,
    params: &[(String, String)],
    hold_out: bool,
    machine_out: bool,
    nccl: &calibrate::nccl_fit::RunSettings,
) -> Result<CalibrationReport> {
    const MEASUREMENTS: &str = "the output of nccl-tests, p2pBandwidthLatencyTest or nvbandwidth, or a CSV of measured patterns or transfer graphs";
    let raw = crate::error::read_user_text(path, MEASUREMENTS)?;
    // Pasted from a terminal or a log: colours and carriage returns are not part of the data.
    let text = crate::terminal::strip_escapes(&raw);
    if text.trim().is_empty() {
        return Err(Error::input(path, "", format!("is empty; give {MEASUREMENTS}")));
    }
    let format = MeasurementFormat::detect(&text, path);
    if machine_out {
        let why = match format {
            MeasurementFormat::Graphs => Some(format!("{path} is a CSV of transfer graphs: its fit gives sc16's two parameters, not a machine; ask for no machine file (no --output) and pass them as --param bandwidth=… --param tau=…")),
            MeasurementFormat::NcclTests => Some(format!("{path} is nccl-tests output: its fit gives NCCL's constants, not a machine; ask for no machine file (no --output) and pass the printed --param lines to contend nccl-tests")),
            MeasurementFormat::Patterns | MeasurementFormat::ToolOutput => None,
        };
        if let Some(why) = why {
            // Named as the caller's option (`--output`, `machine_out=`): the machine it would write.
            return Err(Error::input("machine output", "", why));
        }
    }
    if format != MeasurementFormat::NcclTests {
        let given = [("--network-bandwidth", nccl.network_bandwidth), ("--algo", nccl.algo), ("--proto", nccl.proto)];
        if let Some((flag, _)) = given.iter().find(|(_, v)| v.is_some()) {
            return Err(Error::input(*flag, "", format!("applies to nccl-tests output; {path} is not nccl-tests output")));
        }
    }
    if hold_out && format == MeasurementFormat::Graphs {
        return Err(Error::input(
            path,
            "",
            "--hold-out validates measured patterns, p2pBandwidthLatencyTest or nvbandwidth output; a CSV of transfer graphs is fitted whole",
        ));
    }
    Ok(match format {
        MeasurementFormat::Patterns => {
            let fit = calibrate::general::fit(m, &calibrate::patterns::parse(&text, path)?, &MaxminParams::parse(params)?, path, hold_out)?;
            CalibrationReport::Patterns { yaml: crate::topology::to_yaml(&fit.spec), fit }
        }
        MeasurementFormat::Graphs => {
            let graphs = calibrate::sc16_fit::parse_csv(&text, path)?;
            CalibrationReport::Graphs(calibrate::sc16_fit::fit(m, &graphs, &sc16::Sc16Params::parse(params)?, path)?)
        }
        MeasurementFormat::NcclTests => CalibrationReport::NcclTests(calibrate::nccl_fit::fit(m, &text, path, "maxmin", params, hold_out, nccl)?),
        MeasurementFormat::ToolOutput => {
            let meas = calibrate::parse_measurements(&text, path)?;
            // The fit names the measurements "measurements"; the user knows them by their path.
            let c = calibrate::calibrate(m, &meas, &MaxminParams::parse(params)?, hold_out).map_err(|e| e.reaimed("measurements", path))?;
            CalibrationReport::ToolOutput { yaml: crate::topology::to_yaml(&c.spec), calibration: c }
        }
    })
}

/// What a measurements file is, told in this one place: a CSV of measured patterns (by its
/// header), a CSV of transfer graphs (sc16's bandwidth and tau), or a tool's output
/// (p2pBandwidthLatencyTest, nvbandwidth text or JSON: tools/), or nccl-tests' output (its
/// tables: NCCL's constants are fitted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeasurementFormat {
    Patterns,
    Graphs,
    ToolOutput,
    NcclTests,
}

impl MeasurementFormat {
    pub fn detect(text: &str, path: &str) -> MeasurementFormat {
        let header = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'));
        // A CSV by its header (tools' outputs have commas in their lines too: "Device: 0, …", JSON).
        if header.is_some_and(calibrate::patterns::is_patterns) {
            return MeasurementFormat::Patterns;
        }
        if crate::tools::nccl_tests::detect(text) {
            return MeasurementFormat::NcclTests;
        }
        let graph_column = header.is_some_and(|h| h.split(',').any(|c| c.trim().eq_ignore_ascii_case("graph")));
        if path.to_lowercase().ends_with(".csv") || graph_column {
            return MeasurementFormat::Graphs;
        }
        MeasurementFormat::ToolOutput
    }
}

/// `calibrate`'s report, one shape per kind of measurement; the fits that change a machine
/// carry it as a machine file (`yaml`).
#[derive(Serialize, Debug)]
#[serde(untagged)]
pub enum CalibrationReport {
    Patterns {
        #[serde(flatten)]
        fit: calibrate::general::GeneralFit,
        yaml: String,
    },
    Graphs(calibrate::sc16_fit::Sc16Fit),
    NcclTests(calibrate::nccl_fit::NcclFit),
    ToolOutput {
        #[serde(flatten)]
        calibration: calibrate::Calibration,
        yaml: String,
    },
}

/// The kinds of document `schema` describes.
pub const SCHEMAS: &[&str] = &["machine", "cluster", "transfers", "halo", "report", "scenario", "program", "datatype"];

/// JSON Schema of a machine, transfers or halo file, or of a simulation report.
pub fn schema(which: &str) -> Result<String> {
    let s = match which {
        "machine" => schemars::schema_for!(MachineSpec),
        // The type `Machine::from_text` reads a file with a `fabric` into.
        "cluster" => schemars::schema_for!(crate::topology::cluster::ClusterSpec),
        "transfers" => schemars::schema_for!(WorkloadSpec),
        "halo" => schemars::schema_for!(schedule::HaloSpec),
        "report" => schemars::schema_for!(Report),
        "scenario" => schemars::schema_for!(crate::scenario::ScenarioSpec),
        "program" => schemars::schema_for!(crate::workload::program::Program),
        "datatype" => schemars::schema_for!(crate::datatype::DatatypeSpec),
        _ => return Err(Error::input("schema", which, format!("is not a schema; choose {}", SCHEMAS.join(", ")))),
    };
    Ok(serde_json::to_string_pretty(&s).expect("schemas serialise"))
}

/// Run a scenario (`contend schema scenario`): its jobs' rank programs on its cluster under its
/// model, reported as `opts` asks (the busiest links, every operation, progress now and then).
pub fn run(text: &str, origin: &str, opts: &crate::scenario::RunOptions) -> Result<crate::scenario::RunReport> {
    run_as(text, origin, None, &[], opts)
}

/// `run` under another model than the scenario names, and with these parameters over its own
/// (`contend run --model packet -p buffer=16`): comparing models on a scenario needs no edit of
/// its file. The scenario's own parameters stay; one the other model does not take is refused,
/// naming it.
pub fn run_as(
    text: &str,
    origin: &str,
    model: Option<&str>,
    params: &[(String, String)],
    opts: &crate::scenario::RunOptions,
) -> Result<crate::scenario::RunReport> {
    crate::scenario::run(&spec_as(text, origin, model, params)?, origin, opts)
}

/// A scenario with a model and parameters given beside it (flags, the API's arguments): those are
/// checked first, so that their mistakes name the flag, not the file.
fn spec_as(text: &str, origin: &str, model: Option<&str>, params: &[(String, String)]) -> Result<crate::scenario::ScenarioSpec> {
    let mut spec = crate::scenario::ScenarioSpec::from_text(text, origin)?;
    if let Some(m) = model {
        registry::get(m)?;
        spec.model = Some(m.to_string());
    }
    // A model the file names wrongly is the file's mistake: the scenario's own check names it.
    if let (false, Ok(entry)) = (params.is_empty(), registry::get(crate::scenario::model_name(&spec))) {
        // NCCL's constants (`nccl_*`) reach rank programs' NCCL calls; the rest are the model's.
        let model = crate::nccl::constants::split(params)?.1;
        crate::params::Values::parse(entry.name, entry.params, model.iter().map(|(k, v)| (k.as_str(), v.as_str())), crate::params::At::Flag)?;
        spec.params.extend(params.iter().cloned());
    }
    Ok(spec)
}

/// Which scenarios can share their lowered jobs in a session (`RunOptions::session`): equal text for
/// those that can. A study runs its points in this order.
pub fn lowering_group(text: &str, origin: &str) -> Result<String> {
    Ok(crate::scenario::lowering_group(&crate::scenario::ScenarioSpec::from_text(text, origin)?))
}

/// What a sequence of calls may share (`scenario::Session`): a study worker or a notebook holds one.
pub use crate::scenario::Session;

/// Check a scenario without running it (milliseconds): what a study does for every point first;
/// clusters and workloads already checked in `session` are not built again.
pub fn check_scenario(text: &str, origin: &str, model: Option<&str>, params: &[(String, String)], session: &Session) -> Result<()> {
    crate::scenario::check(&spec_as(text, origin, model, params)?, origin, session)
}

#[derive(Serialize, Debug)]
pub struct AppSummary {
    pub name: &'static str,
    pub summary: &'static str,
    /// Its parameters as declared (name, kind, default, help), like a model's.
    pub params: &'static [crate::params::Param],
}

/// The application skeletons a scenario's jobs can run.
pub fn apps() -> Vec<AppSummary> {
    crate::workload::program::apps::APPS.iter().map(|a| AppSummary { name: a.name, summary: a.summary, params: a.params }).collect()
}

/// The kernel and load-store cost parameters of datatype methods (name, default, help).
pub const KERNEL_PARAMS: &[crate::model::Param] = crate::datatype::cost::PARAMS;

/// Every parameter table contend declares, with what owns it: each model's, NCCL's constants,
/// the datatype kernels', the stencil's and each skeleton's (docs and checks read them all).
pub fn param_tables() -> Vec<(String, &'static [crate::params::Param])> {
    let mut tables: Vec<(String, &'static [crate::params::Param])> = registry::MODELS.iter().map(|m| (format!("model {}", m.name), m.params)).collect();
    tables.push(("NCCL constants".into(), crate::nccl::constants::PARAMS));
    tables.push(("datatype kernels".into(), KERNEL_PARAMS));
    tables.push(("stencil".into(), crate::stencil::PARAMS));
    tables.extend(crate::workload::program::apps::APPS.iter().map(|a| (format!("skeleton {}", a.name), a.params)));
    tables
}

/// Datatype presets as (name, description, bytes, blocks).
pub fn datatype_presets() -> Vec<(String, String, u64, u64)> {
    crate::datatype::preset_names()
        .into_iter()
        .map(|n| {
            let d = crate::datatype::Datatype::load(n).expect("presets are tested");
            (n.to_string(), d.description, d.stats.size_bytes, d.stats.blocks)
        })
        .collect()
}

/// Each method's predicted time for one message of a datatype (a preset or a file), its
/// parts, and the winner (see `datatype_report`).
pub fn datatype(m: &Machine, source: &str, req: &crate::datatype_report::DatatypeRequest) -> Result<crate::datatype_report::DatatypeReport> {
    crate::datatype_report::compare(m, &crate::datatype::Datatype::load(source)?, req)
}

/// The same over `points` message sizes doubling from one instance (the crossover chart).
pub fn datatype_sweep(m: &Machine, source: &str, req: &crate::datatype_report::DatatypeRequest, points: u32) -> Result<crate::datatype_report::Sweep> {
    crate::datatype_report::sweep(m, &crate::datatype::Datatype::load(source)?, req, points)
}

/// One iteration of seed 004's 2D stencil per local lattice, CPU-posted against stream-ordered
/// communication (see `stencil`).
pub fn stencil(lattices: &[u64], params: &[(String, String)]) -> Result<crate::stencil::StencilReport> {
    crate::stencil::sweep(lattices, params)
}

/// The parameters of the stencil iteration model (name, default, help).
pub const STENCIL_PARAMS: &[crate::model::Param] = crate::stencil::PARAMS;

/// Fit the kernel terms of datatype methods to a CSV of measurements (kernel, block, bytes,
/// time), load-store ones measured from `src` to `dst` on `m` (see `calibrate::kernels_fit`).
pub fn calibrate_kernels(m: &Machine, src: &str, dst: &str, path: &str) -> Result<calibrate::kernels_fit::KernelFit> {
    let points = calibrate::kernels_fit::parse_csv(&crate::terminal::strip_escapes(&read_user_file(path)?), path)?;
    calibrate::kernels_fit::fit(m, src, dst, &points, path)
}

/// A rank program (YAML) from a trace's records (JSON list, `workload::program::trace`), its
/// loop repeated `iterations` times.
pub fn program_from_trace(records_json: &str, ranks: u32, iterations: u32, origin: &str) -> Result<String> {
    let records: Vec<crate::workload::program::trace::TraceRecord> =
        serde_json::from_str(records_json).map_err(|e| Error::input(origin, "events", format!("could not be read ({e})")))?;
    if !(1..=100_000).contains(&iterations) {
        return Err(Error::input(origin, "--iterations", format!("is {iterations}; give 1 to 100000")));
    }
    Ok(crate::workload::program::trace::program(&records, ranks, iterations, origin)?.to_yaml())
}

/// `contend compare`: the same transfers under every model (or those named), each run as
/// `simulate` runs it, compared message by message with the most detailed model that ran
/// (`compare::CompareReport`). `params` are (model, name, value).
pub fn compare(
    m: &Machine,
    spec: &WorkloadSpec,
    origin: &str,
    models: &[String],
    params: &[(String, String, String)],
) -> Result<crate::compare::CompareReport> {
    crate::compare::compare(m, spec, origin, models, params)
}

/// What nccl-tests (`<op>_perf -b -e -f -g`) would print on `machine`, or on `nodes` copies of
/// it on one non-blocking switch of `network_bandwidth` per NIC (default: each NIC at its ports'
/// line rate, `port_bandwidth`; 25 GB/s (200 Gb/s) where the machine does not give one), or
/// on the first `nodes` nodes of a cluster (`superpod-h100-su`: its own fabric),
/// predicted by lowering NCCL's pick for every size onto the executor (docs/nccl.md). The
/// request's NCCL_* variables (`req.env`) set what its fields leave unset (`nccl::environment`),
/// and the report's notes say which did.
pub fn nccl_tests(
    machine: &str,
    req: &crate::nccl::tests_tool::Request,
    nodes: usize,
    network_bandwidth: Option<&str>,
) -> Result<crate::nccl::tests_tool::Report> {
    use crate::nccl::environment::{Environment, Given};
    let given = Given {
        algo: req.algo.is_some(),
        proto: req.proto.is_some(),
        channels: req.channels.is_some(),
        params: req.params.iter().map(|(k, _)| k.clone()).collect(),
        flags: true,
    };
    let env = Environment::read(&req.env, &given)?;
    let req = crate::nccl::tests_tool::Request {
        algo: req.algo.clone().or_else(|| env.algo.clone()),
        proto: req.proto.clone().or_else(|| env.proto.clone()),
        channels: req.channels.or(env.channels),
        channel_bounds: req.channel_bounds.or(env.channel_bounds),
        params: req.params.iter().chain(&env.params).cloned().collect(),
        env: Vec::new(),
        ..req.clone()
    };
    let mut report = nccl_tests_as_given(machine, &req, nodes, network_bandwidth).map_err(|e| env.named(e))?;
    // After the core's own: a reader of the table needs them, so they are caveats too.
    for note in env.notes("the header's 'choice' is NCCL's within them; a flag given wins") {
        report.caveats.push(note.clone());
        report.notes.push(note);
    }
    Ok(report)
}

/// `nccl_tests` of a request whose every setting is its own.
fn nccl_tests_as_given(
    machine: &str,
    req: &crate::nccl::tests_tool::Request,
    nodes: usize,
    network_bandwidth: Option<&str>,
) -> Result<crate::nccl::tests_tool::Report> {
    use crate::nccl::{tests_tool, Comm};
    let (m, per_node, have) = crate::nccl::nodes::on_nodes(machine, req, nodes, network_bandwidth)?;
    let mut comm = Comm::bounded(&m, &per_node, req.channels, req.channel_bounds)?;
    comm.set_constants(crate::nccl::constants::split(&req.params)?.0)?;
    comm.tuner = req.tuner.as_deref().map(crate::nccl::tuner::Tuner::load).transpose()?;
    let mut report = tests_tool::predict(&comm, req)?;
    // A cluster preset runs the nodes asked for (one by default, as nccl-tests on one host): its
    // table's first line says how many of how many.
    if nodes < have {
        report.of_nodes = Some(have);
        report.table = tests_tool::table(&report);
    }
    Ok(report)
}
