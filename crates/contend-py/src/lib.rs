//! Python binding (module `contend._core`): thin wrappers that pass JSON text both ways.
//! The Python package turns it into objects and DataFrames; all logic stays in contend-core.

use contend_core::{api, topology, workload, Error};
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

fn json<T: serde::Serialize>(v: &T) -> String {
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
    let m = machine(spec_json, origin)?;
    let devices: Vec<_> = m
        .devices
        .iter()
        .map(|d| serde_json::json!({"name": d.name, "kind": format!("{:?}", d.kind), "model": d.model}))
        .collect();
    let links: Vec<_> = m
        .links
        .iter()
        .map(|l| {
            serde_json::json!({"a": m.devices[l.a].name, "b": m.devices[l.b].name, "kind": format!("{:?}", l.kind),
                               "label": l.label, "bandwidth_bps": l.bandwidth, "latency_s": l.latency})
        })
        .collect();
    Ok(json(&serde_json::json!({"name": m.name, "description": m.description, "devices": devices, "links": links})))
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

type Predict<R> = fn(&topology::Machine, &workload::WorkloadSpec, &str, &str, &[(String, String)]) -> contend_core::Result<R>;

/// Load both descriptions, run `f` without holding the GIL, return its report as JSON.
fn predict<R: serde::Serialize + Send>(
    py: Python<'_>,
    f: Predict<R>,
    (machine_json, machine_origin): (&str, &str),
    (transfers_json, transfers_origin): (&str, &str),
    model: &str,
    params: Vec<(String, String)>,
) -> PyResult<String> {
    let m = machine(machine_json, machine_origin)?;
    let w = transfers(transfers_json, transfers_origin)?;
    let r = py.detach(|| f(&m, &w, transfers_origin, model, &params)).map_err(to_py)?;
    Ok(json(&r))
}

/// Per-transfer start and finish times, phases and links (see contend_core::api::Report).
#[pyfunction]
fn simulate(
    py: Python<'_>,
    machine_json: &str,
    machine_origin: &str,
    transfers_json: &str,
    transfers_origin: &str,
    model: &str,
    params: Vec<(String, String)>,
) -> PyResult<String> {
    predict(py, api::simulate, (machine_json, machine_origin), (transfers_json, transfers_origin), model, params)
}

/// Like `simulate`, with the sc16 steps of every phase.
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
    predict(py, api::explain, (machine_json, machine_origin), (transfers_json, transfers_origin), model, params)
}

/// Search the fastest order of a halo exchange; returns (report JSON, best schedule as transfers JSON).
/// `progress(done, total)` is called now and then from worker threads.
#[pyfunction]
#[pyo3(signature = (machine_json, machine_origin, halo, semantics, method, model, params, alpha, seed, iterations, threads, keep_times, progress=None))]
#[allow(clippy::too_many_arguments)]
fn schedule(
    py: Python<'_>,
    machine_json: &str,
    machine_origin: &str,
    halo: &str,
    semantics: &str,
    method: &str,
    model: &str,
    params: Vec<(String, String)>,
    alpha: &str,
    seed: u64,
    iterations: u64,
    threads: usize,
    keep_times: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, String)> {
    use contend_core::schedule::{self as sched, HaloSpec, Method, SearchOptions, Semantics};
    let m = machine(machine_json, machine_origin)?;
    let spec = HaloSpec::load(halo).map_err(to_py)?;
    let h = sched::Halo::resolve(&spec, &m, halo).map_err(to_py)?;
    let alpha = contend_core::units::Time::parse(alpha).map_err(|e| to_py(Error::input("--alpha", "", e)))?.secs();
    let report = move |done: u64, total: u64| {
        if let Some(cb) = &progress {
            Python::attach(|py| {
                let _ = cb.call1(py, (done, total));
            });
        }
    };
    let opts = SearchOptions {
        semantics: Semantics::parse(semantics).map_err(to_py)?,
        method: Method::parse(method).map_err(to_py)?,
        model: model.to_string(),
        params,
        alpha,
        seed,
        iterations,
        threads,
        keep_times,
        progress: Some(&report),
        ..SearchOptions::default()
    };
    py.detach(|| {
        let r = sched::search(&m, &h, &opts)?;
        let best = sched::to_workload(&m, &h, &r.best_order, &opts)?;
        Ok((json(&r), json(&best)))
    })
    .map_err(to_py)
}

/// A machine file from an `nvidia-smi topo -m` or NCCL topology XML dump: {yaml, assumptions, format}.
#[pyfunction]
fn import_machine(path: &str, name: &str) -> PyResult<String> {
    let text = contend_core::error::read_user_file(path).map_err(to_py)?;
    Ok(json(&contend_core::import::import(&text, name, path).map_err(to_py)?))
}

/// What CUDA's p2pBandwidthLatencyTest would print on this machine, predicted with maxmin.
#[pyfunction]
fn p2p(py: Python<'_>, machine_json: &str, machine_origin: &str, params: Vec<(String, String)>) -> PyResult<String> {
    let m = machine(machine_json, machine_origin)?;
    let p = contend_core::model::maxmin::MaxminParams::parse(&params).map_err(to_py)?;
    Ok(json(&py.detach(|| contend_core::p2p::p2p_matrices(&m, &p)).map_err(to_py)?))
}

/// Fit link parameters to p2pBandwidthLatencyTest output; returns the calibration (with the
/// calibrated machine as YAML under "yaml") as JSON.
#[pyfunction]
fn calibrate(py: Python<'_>, machine_json: &str, machine_origin: &str, measurements: &str, params: Vec<(String, String)>) -> PyResult<String> {
    use contend_core::calibrate as cal;
    let m = machine(machine_json, machine_origin)?;
    let p = contend_core::model::maxmin::MaxminParams::parse(&params).map_err(to_py)?;
    let text = contend_core::error::read_user_file(measurements).map_err(to_py)?;
    let meas = cal::parse_p2p_output(&text, measurements).map_err(to_py)?;
    let c = py.detach(|| cal::calibrate(&m, &meas, &p)).map_err(to_py)?;
    let mut v = serde_json::to_value(&c).expect("calibrations serialise");
    v["yaml"] = serde_json::Value::String(contend_core::topology::to_yaml(&c.spec));
    Ok(json(&v))
}

/// Fit sc16's B and tau to a CSV of measured transfer graphs (graph,src,dst,size,time).
#[pyfunction]
fn calibrate_sc16(py: Python<'_>, machine_json: &str, machine_origin: &str, measurements: &str, params: Vec<(String, String)>) -> PyResult<String> {
    use contend_core::calibrate::sc16_fit;
    let m = machine(machine_json, machine_origin)?;
    let base = contend_core::model::sc16::Sc16Params::parse(&params).map_err(to_py)?;
    let text = contend_core::error::read_user_file(measurements).map_err(to_py)?;
    let graphs = sc16_fit::parse_csv(&text, measurements).map_err(to_py)?;
    Ok(json(&py.detach(|| sc16_fit::fit(&m, &graphs, &base, measurements)).map_err(to_py)?))
}

/// Halo presets as a JSON list of [name, description].
#[pyfunction]
fn halo_presets() -> String {
    json(&contend_core::schedule::PRESETS)
}

/// Generate a pattern ("scatter", "gather", "all-to-all", "random") among `peers`; returns JSON.
#[pyfunction]
#[pyo3(signature = (pattern, peers, size, root=None, count=32, seed=0))]
fn generate(pattern: &str, peers: Vec<String>, size: &str, root: Option<String>, count: usize, seed: u64) -> PyResult<String> {
    let size = contend_core::units::Bytes::parse(size).map_err(|e| to_py(Error::input("--size", "", e)))?;
    let need_root = || root.clone().ok_or_else(|| to_py(Error::input("--root", "", format!("{pattern} needs a root device; add --root GPU0"))));
    let list = match pattern {
        "scatter" => workload::scatter(&need_root()?, &peers, size),
        "gather" => workload::gather(&need_root()?, &peers, size),
        "all-to-all" => workload::all_to_all(&peers, size),
        "random" => workload::random_graph(&peers, count, size, seed),
        _ => return Err(to_py(Error::input("pattern", pattern, "is not a pattern; choose scatter, gather, all-to-all or random"))),
    };
    Ok(json(&workload::WorkloadSpec { transfers: list }))
}

#[pyfunction]
fn schema(which: &str) -> PyResult<String> {
    api::schema(which).map_err(to_py)
}

/// Models as a JSON list of {name, summary, applies_to, params: [[name, help]]}.
#[pyfunction]
fn models() -> String {
    let list: Vec<_> = contend_core::model::MODELS
        .iter()
        .map(|m| serde_json::json!({"name": m.name, "summary": m.summary, "applies_to": m.applies_to, "params": m.params}))
        .collect();
    json(&list)
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
    m.add_function(wrap_pyfunction!(schedule, m)?)?;
    m.add_function(wrap_pyfunction!(halo_presets, m)?)?;
    m.add_function(wrap_pyfunction!(import_machine, m)?)?;
    m.add_function(wrap_pyfunction!(p2p, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate_sc16, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(models, m)?)?;
    Ok(())
}
