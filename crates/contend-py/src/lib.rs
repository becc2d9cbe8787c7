//! Python binding (module `contend._core`): one mechanical wrapper per function of
//! `contend_core::api`, JSON text both ways, typed exceptions. No product logic lives here.

use contend_core::{api, datatype_report, report::Detail, topology, workload, Error};
use pyo3::create_exception;
use pyo3::prelude::*;

create_exception!(_core, ContendError, pyo3::exceptions::PyException, "Base class of contend's errors.");
create_exception!(_core, InputError, ContendError, "Something the user wrote is wrong; the message says where and how to fix it.");
create_exception!(_core, UnsupportedError, InputError, "The chosen model does not apply to this machine or workload.");

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Input { .. } => InputError::new_err(e.to_string()),
        Error::Unsupported { .. } => UnsupportedError::new_err(e.to_string()),
        Error::Runtime(_) => ContendError::new_err(e.to_string()),
    }
}

fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("reports serialise")
}

fn machine(spec_json: &str, origin: &str) -> PyResult<topology::Machine> {
    topology::Machine::from_text(spec_json, origin).map_err(to_py)
}

fn transfers(spec_json: &str, origin: &str) -> PyResult<workload::WorkloadSpec> {
    workload::WorkloadSpec::from_text(spec_json, origin).map_err(to_py)
}

/// Presets as a JSON list of {name, description, gpus, source}.
#[pyfunction]
fn presets() -> String {
    json(&api::presets())
}

/// Load a preset name or a file; returns (machine description as JSON, origin label).
#[pyfunction]
fn load_machine(source: &str) -> PyResult<(String, String)> {
    let m = topology::Machine::load(source).map_err(to_py)?;
    Ok((json(&m.spec), m.origin))
}

/// Validate a machine description given as YAML or JSON text; returns it as JSON.
#[pyfunction]
fn parse_machine(text: &str, origin: &str) -> PyResult<String> {
    Ok(json(&machine(text, origin)?.spec))
}

/// Devices and links with their resolved bandwidths, for drawing.
#[pyfunction]
fn machine_graph(spec_json: &str, origin: &str) -> PyResult<String> {
    Ok(json(&api::machine_graph(&machine(spec_json, origin)?)))
}

/// The machine as an indented text tree.
#[pyfunction]
fn render_machine(spec_json: &str, origin: &str) -> PyResult<String> {
    Ok(topology::render_tree(&machine(spec_json, origin)?))
}

/// Read a transfers file; returns its description as JSON.
#[pyfunction]
fn load_transfers(path: &str) -> PyResult<String> {
    Ok(json(&workload::WorkloadSpec::load(path).map_err(to_py)?))
}

/// Validate transfers given as YAML or JSON text; returns them as JSON.
#[pyfunction]
fn parse_transfers(text: &str, origin: &str) -> PyResult<String> {
    Ok(json(&transfers(text, origin)?))
}

/// Check transfers against a machine (device names, sizes, dependencies).
#[pyfunction]
fn check_transfers(machine_json: &str, machine_origin: &str, transfers_json: &str, transfers_origin: &str) -> PyResult<()> {
    let m = machine(machine_json, machine_origin)?;
    workload::Workload::resolve(&transfers(transfers_json, transfers_origin)?, &m, transfers_origin).map_err(to_py)?;
    Ok(())
}

/// Transfers as YAML text, in the style users write by hand.
#[pyfunction]
fn transfers_yaml(spec_json: &str) -> PyResult<String> {
    Ok(transfers(spec_json, "<transfers>")?.to_yaml())
}

/// The report of `api::simulate` as JSON (`contend schema report`).
#[pyfunction]
#[pyo3(signature = (machine_json, machine_origin, transfers_json, transfers_origin, model, params, phases=false, nics=false))]
#[allow(clippy::too_many_arguments)]
fn simulate(
    py: Python<'_>,
    machine_json: &str,
    machine_origin: &str,
    transfers_json: &str,
    transfers_origin: &str,
    model: &str,
    params: Vec<(String, String)>,
    phases: bool,
    nics: bool,
) -> PyResult<String> {
    let m = machine(machine_json, machine_origin)?;
    let w = transfers(transfers_json, transfers_origin)?;
    py.detach(|| api::simulate(&m, &w, transfers_origin, model, &params, Detail { phases, nics }).map(|r| json(&r))).map_err(to_py)
}

/// The report of `api::explain` as JSON: `simulate`'s with phases, and every step per phase.
#[pyfunction]
fn explain(
    py: Python<'_>,
    machine_json: &str,
    machine_origin: &str,
    transfers_json: &str,
    transfers_origin: &str,
    model: &str,
    params: Vec<(String, String)>,
) -> PyResult<String> {
    let m = machine(machine_json, machine_origin)?;
    let w = transfers(transfers_json, transfers_origin)?;
    py.detach(|| api::explain(&m, &w, transfers_origin, model, &params).map(|r| json(&r))).map_err(to_py)
}

/// `api::schedule`: returns (report JSON, best schedule as transfers JSON).
/// `progress(done, total)` is called now and then from worker threads.
#[pyfunction]
#[pyo3(signature = (machine_json, machine_origin, halo, semantics, search, model, params, alpha, seed, iterations, threads, keep_times, progress=None))]
#[allow(clippy::too_many_arguments)]
fn schedule(
    py: Python<'_>,
    machine_json: &str,
    machine_origin: &str,
    halo: String,
    semantics: String,
    search: String,
    model: String,
    params: Vec<(String, String)>,
    alpha: String,
    seed: u64,
    iterations: u64,
    threads: usize,
    keep_times: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, String)> {
    let m = machine(machine_json, machine_origin)?;
    let req = api::ScheduleRequest { halo, semantics, search, model, params, alpha, seed, iterations, threads, keep_times };
    let report = move |done: u64, total: u64| {
        if let Some(cb) = &progress {
            Python::attach(|py| {
                let _ = cb.call1(py, (done, total));
            });
        }
    };
    py.detach(|| api::schedule(&m, &req, Some(&report)).map(|(r, best)| (json(&r), json(&best)))).map_err(to_py)
}

/// `api::import`: {yaml, assumptions, format}.
#[pyfunction]
fn import_machine(path: &str, name: &str, numa_per_socket: &Bound<'_, PyAny>) -> PyResult<String> {
    // A count beyond 64 bits is out of range like any other: the core says so in one line.
    let k = numa_per_socket.extract::<i64>().unwrap_or(i64::MAX);
    Ok(json(&api::import(path, name, k).map_err(to_py)?))
}

/// `api::nvbandwidth`: the predicted nvbandwidth testcases, as JSON and as nvbandwidth prints them.
#[pyfunction]
fn nvbandwidth(py: Python<'_>, machine_json: &str, machine_origin: &str, params: Vec<(String, String)>) -> PyResult<(String, String)> {
    let m = machine(machine_json, machine_origin)?;
    py.detach(|| api::nvbandwidth(&m, &params).map(|r| (json(&r), r.text()))).map_err(to_py)
}

/// `api::p2p`: the predicted p2pBandwidthLatencyTest matrices.
#[pyfunction]
fn p2p(py: Python<'_>, machine_json: &str, machine_origin: &str, params: Vec<(String, String)>) -> PyResult<String> {
    let m = machine(machine_json, machine_origin)?;
    py.detach(|| api::p2p(&m, &params).map(|r| json(&r))).map_err(to_py)
}

/// `api::calibrate`: the fit to a measurements file, as JSON.
#[pyfunction]
fn calibrate(py: Python<'_>, machine_json: &str, machine_origin: &str, measurements: &str, params: Vec<(String, String)>, hold_out: bool) -> PyResult<String> {
    let m = machine(machine_json, machine_origin)?;
    py.detach(|| api::calibrate(&m, measurements, &params, hold_out).map(|r| json(&r))).map_err(to_py)
}

/// `api::datatype`: every method's time for one message of a datatype, its parts and the winner.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn datatype(
    py: Python<'_>,
    machine_json: &str,
    machine_origin: &str,
    source: &str,
    src: String,
    dst: String,
    count: u64,
    model: String,
    params: Vec<(String, String)>,
    kernels: Vec<(String, String)>,
) -> PyResult<String> {
    let m = machine(machine_json, machine_origin)?;
    let req = datatype_report::DatatypeRequest { src, dst, count, model, params, kernels };
    py.detach(|| api::datatype(&m, source, &req).map(|r| json(&r))).map_err(to_py)
}

/// `api::datatype_sweep`: the same over `points` message sizes doubling from `count` = 1.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn datatype_sweep(
    py: Python<'_>,
    machine_json: &str,
    machine_origin: &str,
    source: &str,
    src: String,
    dst: String,
    model: String,
    params: Vec<(String, String)>,
    kernels: Vec<(String, String)>,
    points: u32,
) -> PyResult<String> {
    let m = machine(machine_json, machine_origin)?;
    let req = datatype_report::DatatypeRequest { src, dst, count: 1, model, params, kernels };
    py.detach(|| api::datatype_sweep(&m, source, &req, points).map(|r| json(&r))).map_err(to_py)
}

/// Datatype presets as a JSON list of [name, description, bytes, blocks].
#[pyfunction]
fn datatype_presets() -> String {
    json(&api::datatype_presets())
}

/// The kernel cost parameters of datatype methods as a JSON list of {name, default, help}.
#[pyfunction]
fn kernel_params() -> String {
    json(api::KERNEL_PARAMS)
}

/// `api::stencil`: one 2D stencil iteration per local lattice, CPU-posted and stream-ordered.
#[pyfunction]
fn stencil(lattices: Vec<u64>, params: Vec<(String, String)>) -> PyResult<String> {
    Ok(json(&api::stencil(&lattices, &params).map_err(to_py)?))
}

/// The stencil model's parameters as a JSON list of {name, default, help}.
#[pyfunction]
fn stencil_params() -> String {
    json(api::STENCIL_PARAMS)
}

/// `api::calibrate_kernels`: datatype kernel terms fitted to a CSV, with residuals, as JSON.
#[pyfunction]
fn calibrate_kernels(machine_json: &str, machine_origin: &str, src: &str, dst: &str, measurements: &str) -> PyResult<String> {
    let m = machine(machine_json, machine_origin)?;
    Ok(json(&api::calibrate_kernels(&m, src, dst, measurements).map_err(to_py)?))
}

/// Halo presets as a JSON list of [name, description].
#[pyfunction]
fn halo_presets() -> String {
    json(api::halo_presets())
}

/// Transfer patterns as a JSON list of [name, description].
#[pyfunction]
fn patterns() -> String {
    json(api::PATTERNS)
}

/// `api::generate`: a transfers description as JSON.
#[pyfunction]
#[pyo3(signature = (machine_json, machine_origin, pattern, peers, size, root=None, count=32, seed=0, gap=None, grid=None, periodic=false))]
#[allow(clippy::too_many_arguments)]
fn generate(
    machine_json: &str,
    machine_origin: &str,
    pattern: String,
    peers: Option<Vec<String>>,
    size: String,
    root: Option<String>,
    count: usize,
    seed: u64,
    gap: Option<String>,
    grid: Option<String>,
    periodic: bool,
) -> PyResult<String> {
    let m = machine(machine_json, machine_origin)?;
    let req = api::GenerateRequest { pattern, peers, size, root, count, seed, gap, grid, periodic };
    Ok(json(&api::generate(&m, &req).map_err(to_py)?))
}

/// `api::schema`: a JSON Schema (machine, transfers, halo or report).
#[pyfunction]
fn schema(which: &str) -> PyResult<String> {
    api::schema(which).map_err(to_py)
}

/// The schemas there are, as a JSON list.
#[pyfunction]
fn schemas() -> String {
    json(api::SCHEMAS)
}

/// The model registry as JSON: name, kind, summary, assumptions, citation, applies_to, params.
#[pyfunction]
fn models() -> String {
    json(api::models())
}

/// `api::run`: a scenario's report as JSON; `links=None` reports every link. `progress(delivered,
/// messages)` is called now and then; `reuse_lowering` keeps the lowered jobs for the next run.
#[pyfunction]
#[pyo3(signature = (text, origin, detail, links=Some(contend_core::scenario::DEFAULT_TOP_LINKS), progress=None, reuse_lowering=false))]
fn run(py: Python<'_>, text: &str, origin: &str, detail: bool, links: Option<usize>, progress: Option<Py<PyAny>>, reuse_lowering: bool) -> PyResult<String> {
    // Without a callback the engine runs its model unwrapped.
    let wanted = progress.is_some();
    let report = move |done: u64, total: u64| {
        if let Some(cb) = &progress {
            Python::attach(|py| {
                let _ = cb.call1(py, (done, total));
            });
        }
    };
    let progress: Option<&(dyn Fn(u64, u64) + Sync)> = if wanted { Some(&report) } else { None };
    let opts = contend_core::scenario::RunOptions { detail, top_links: links, progress, reuse_lowering };
    py.detach(|| api::run(text, origin, &opts).map(|r| json(&r))).map_err(to_py)
}

/// `api::program_from_trace`: a rank program's YAML from a trace's records (JSON).
#[pyfunction]
fn program_from_trace(records_json: &str, ranks: u32, iterations: u32, origin: &str) -> PyResult<String> {
    api::program_from_trace(records_json, ranks, iterations, origin).map_err(to_py)
}

/// `api::lowering_group`: equal text for scenarios that can share their lowered jobs.
#[pyfunction]
fn lowering_group(text: &str, origin: &str) -> PyResult<String> {
    api::lowering_group(text, origin).map_err(to_py)
}

/// `api::check_scenario`: nothing, or the scenario's first mistake as an exception.
#[pyfunction]
fn check_scenario(text: &str, origin: &str) -> PyResult<()> {
    api::check_scenario(text, origin).map_err(to_py)
}

/// The application skeletons as JSON.
#[pyfunction]
fn apps() -> String {
    json(&api::apps())
}

/// `api::nccl_tests`: what nccl-tests would print (JSON; its "table" is the text nccl-tests prints).
#[pyfunction]
#[pyo3(signature = (machine, op, min_bytes, max_bytes, factor, ngpus=None, gpus=None, dtype="float", root=0, algo=None, proto=None, channels=None, model="maxmin", params=Vec::new(), explain=false, nodes=1, network_bandwidth=None))]
#[allow(clippy::too_many_arguments)]
fn nccl_tests(
    py: Python<'_>,
    machine: &str,
    op: &str,
    min_bytes: &str,
    max_bytes: &str,
    factor: u64,
    ngpus: Option<usize>,
    gpus: Option<Vec<String>>,
    dtype: &str,
    root: usize,
    algo: Option<String>,
    proto: Option<String>,
    channels: Option<usize>,
    model: &str,
    params: Vec<(String, String)>,
    explain: bool,
    nodes: usize,
    network_bandwidth: Option<String>,
) -> PyResult<String> {
    let req = contend_core::nccl::tests_tool::Request {
        op: op.into(),
        min_bytes: min_bytes.into(),
        max_bytes: max_bytes.into(),
        factor,
        ngpus,
        gpus,
        dtype: dtype.into(),
        root,
        algo,
        proto,
        channels,
        model: model.into(),
        params,
        explain,
    };
    py.detach(|| api::nccl_tests(machine, &req, nodes, network_bandwidth.as_deref()).map(|r| json(&r))).map_err(to_py)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ContendError", m.py().get_type::<ContendError>())?;
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("UnsupportedError", m.py().get_type::<UnsupportedError>())?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(load_machine, m)?)?;
    m.add_function(wrap_pyfunction!(parse_machine, m)?)?;
    m.add_function(wrap_pyfunction!(machine_graph, m)?)?;
    m.add_function(wrap_pyfunction!(render_machine, m)?)?;
    m.add_function(wrap_pyfunction!(load_transfers, m)?)?;
    m.add_function(wrap_pyfunction!(parse_transfers, m)?)?;
    m.add_function(wrap_pyfunction!(transfers_yaml, m)?)?;
    m.add_function(wrap_pyfunction!(check_transfers, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(patterns, m)?)?;
    m.add_function(wrap_pyfunction!(schedule, m)?)?;
    m.add_function(wrap_pyfunction!(halo_presets, m)?)?;
    m.add_function(wrap_pyfunction!(import_machine, m)?)?;
    m.add_function(wrap_pyfunction!(p2p, m)?)?;
    m.add_function(wrap_pyfunction!(nvbandwidth, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(schemas, m)?)?;
    m.add_function(wrap_pyfunction!(models, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(check_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(lowering_group, m)?)?;
    m.add_function(wrap_pyfunction!(apps, m)?)?;
    m.add_function(wrap_pyfunction!(program_from_trace, m)?)?;
    m.add_function(wrap_pyfunction!(datatype, m)?)?;
    m.add_function(wrap_pyfunction!(datatype_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(datatype_presets, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_params, m)?)?;
    m.add_function(wrap_pyfunction!(stencil, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate_kernels, m)?)?;
    m.add_function(wrap_pyfunction!(stencil_params, m)?)?;
    m.add_function(wrap_pyfunction!(nccl_tests, m)?)?;
    Ok(())
}
