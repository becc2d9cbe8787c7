//! Python binding (module `contend._core`): one mechanical wrapper per function of
//! `contend_core::api`, JSON text both ways, typed exceptions. No product logic lives here.

use contend_core::report::{self, Column, Detail};
use contend_core::workload::columns::{Cell, TransferColumns};
use contend_core::{api, datatype_report, topology, workload, Error};
mod sigint;

use pyo3::create_exception;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyString};

create_exception!(_core, ContendError, pyo3::exceptions::PyException, "Base class of contend's errors.");
create_exception!(_core, InputError, ContendError, "Something the user wrote is wrong; the message says where and how to fix it.");
create_exception!(_core, UnsupportedError, InputError, "The chosen model does not apply to this machine or workload.");

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Input { .. } => InputError::new_err(e.to_string()),
        Error::Unsupported { .. } => UnsupportedError::new_err(e.to_string()),
        Error::Runtime(_) => ContendError::new_err(e.to_string()),
        Error::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err(e.to_string()),
    }
}

/// `py.detach(f)`, but Ctrl-C stops it: while `f` runs on the main thread, SIGINT also asks the
/// core's executor to stop at its next instant (`sigint`), and once `f` has returned Python runs
/// its own handler (KeyboardInterrupt). `py.detach` alone ran the whole call first: minutes for a
/// large packet run.
fn interruptible<T: Send>(py: Python<'_>, f: impl Fn() -> contend_core::error::Result<T> + Sync) -> PyResult<T> {
    use contend_core::interrupt::STOP;
    let Some(watch) = sigint::Watch::start(py) else {
        // Not a call a Ctrl-C stops (another thread's, or SIGINT handled otherwise): a stop
        // requested meanwhile is the main thread's call's. Wait until that call has withdrawn
        // it and run again: the work is deterministic, so the result is the one it would have had.
        loop {
            match py.detach(&f) {
                Err(contend_core::Error::Interrupted) => py.detach(|| {
                    while STOP.requested() {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                }),
                r => return r.map_err(to_py),
            }
        }
    };
    // A stop that reached an earlier call after its last check is not this call's.
    STOP.clear();
    let r = py.detach(&f);
    drop(watch);
    if STOP.requested() {
        STOP.clear();
        py.check_signals()?;
    }
    r.map_err(to_py)
}

/// A whole-number argument as the core takes it: a Python int (or NumPy's) that fits `T`, not a
/// bool, a float or text. Anything else is one `InputError` naming the argument and what it
/// takes, where PyO3's own conversion raises a bare OverflowError or TypeError.
/// `least`: what the message asks for where the value is negative (the core checks its own range).
fn whole<T: TryFrom<i128>>(v: &Bound<'_, PyAny>, name: &str, least: u32) -> PyResult<T> {
    let got = shown(v);
    let bad = |why: &str| InputError::new_err(format!("{name}: {got} {why}"));
    if v.is_instance_of::<PyBool>() {
        return Err(bad("is a bool; give a whole number (an int)"));
    }
    let i: i128 = v.extract().map_err(|_| bad("is not a whole number; give an int"))?;
    if i < 0 {
        return Err(bad(&format!("is negative; give a whole number of {least} or more")));
    }
    T::try_from(i).map_err(|_| bad("is too large (over 64 bits); give a smaller whole number"))
}

/// `whole`, for an argument that may be None.
fn whole_opt<T: TryFrom<i128>>(v: Option<&Bound<'_, PyAny>>, name: &str, least: u32) -> PyResult<Option<T>> {
    v.filter(|v| !v.is_none()).map(|v| whole(v, name, least)).transpose()
}

/// A size argument: text with a unit ("1MiB"), or an int of bytes; a bool or a float is one
/// `InputError` naming the argument.
fn size_text(v: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_string());
    }
    match v.extract::<i128>() {
        Ok(bytes) if !v.is_instance_of::<PyBool>() => Ok(format!("{bytes}B")),
        _ => Err(InputError::new_err(format!("{name}: {} is not a size; give bytes as an int or text with a unit (\"1MiB\")", shown(v)))),
    }
}

/// An argument as Python writes it, for a message.
fn shown(v: &Bound<'_, PyAny>) -> String {
    v.repr().map(|r| r.to_string()).unwrap_or_else(|_| "it".into())
}

fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("reports serialise")
}

/// A built machine, held by the core between calls (`contend.Machine` keeps one).
#[pyclass(frozen, module = "contend._core")]
struct Machine {
    m: topology::Machine,
}

#[pymethods]
impl Machine {
    /// A preset name or a machine file, built once.
    #[staticmethod]
    fn load(source: &str) -> PyResult<Machine> {
        Ok(Machine { m: api::load_machine(source).map_err(to_py)? })
    }

    /// A machine description given as YAML or JSON text, built once.
    #[staticmethod]
    fn parse(text: &str, origin: &str) -> PyResult<Machine> {
        Ok(Machine { m: api::parse_machine(text, origin).map_err(to_py)? })
    }

    #[getter]
    fn name(&self) -> &str {
        &self.m.name
    }

    #[getter]
    fn origin(&self) -> &str {
        &self.m.origin
    }

    /// The description as JSON (`contend schema machine`).
    fn to_json(&self) -> String {
        json(&self.m.spec)
    }
}

/// Transfers held by the core between calls (`contend.Transfers` keeps one): never turned into
/// JSON unless asked.
#[pyclass(frozen, module = "contend._core")]
struct Transfers {
    spec: workload::WorkloadSpec,
    origin: String,
}

/// One column of cells: a buffer of numbers (NumPy) is read as a whole, any other sequence
/// cell by cell (int, float, str with a unit, None).
fn cells(col: &Bound<'_, PyAny>) -> PyResult<Vec<Cell>> {
    if let Ok(b) = pyo3::buffer::PyBuffer::<f64>::get(col) {
        return Ok(b.to_vec(col.py())?.into_iter().map(Cell::Real).collect());
    }
    if let Ok(b) = pyo3::buffer::PyBuffer::<u64>::get(col) {
        return Ok(b.to_vec(col.py())?.into_iter().map(Cell::Int).collect());
    }
    if let Ok(b) = pyo3::buffer::PyBuffer::<i64>::get(col) {
        return Ok(b.to_vec(col.py())?.into_iter().map(|v| if v >= 0 { Cell::Int(v as u64) } else { Cell::Real(v as f64) }).collect());
    }
    col.try_iter()?
        .map(|x| {
            let x = x?;
            Ok(if x.is_none() {
                Cell::Missing
            } else if let Ok(v) = x.extract::<u64>() {
                Cell::Int(v)
            } else if let Ok(v) = x.extract::<f64>() {
                Cell::Real(v)
            } else {
                Cell::Text(x.str()?.to_string())
            })
        })
        .collect()
}

#[pymethods]
impl Transfers {
    /// A transfers file (YAML or JSON).
    #[staticmethod]
    fn load(path: &str) -> PyResult<Transfers> {
        Ok(Transfers { spec: api::load_transfers(path).map_err(to_py)?, origin: path.into() })
    }

    /// Transfers given as YAML or JSON text.
    #[staticmethod]
    fn parse(text: &str, origin: &str) -> PyResult<Transfers> {
        Ok(Transfers { spec: api::parse_transfers(text, origin).map_err(to_py)?, origin: origin.into() })
    }

    /// Transfers given column by column (`api::transfers_from_columns`).
    #[staticmethod]
    #[pyo3(signature = (src, dst, size, origin, name=None, start=None, overhead=None))]
    fn from_columns(
        src: Vec<String>,
        dst: Vec<String>,
        size: &Bound<'_, PyAny>,
        origin: &str,
        name: Option<Vec<Option<String>>>,
        start: Option<&Bound<'_, PyAny>>,
        overhead: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Transfers> {
        let columns = TransferColumns { name, src, dst, size: cells(size)?, start: start.map(cells).transpose()?, overhead: overhead.map(cells).transpose()? };
        Ok(Transfers { spec: api::transfers_from_columns(columns, origin).map_err(to_py)?, origin: origin.into() })
    }

    #[getter]
    fn origin(&self) -> &str {
        &self.origin
    }

    fn to_json(&self) -> String {
        json(&self.spec)
    }

    fn to_yaml(&self) -> String {
        self.spec.to_yaml()
    }

    /// Raise InputError if a transfer names a device the machine lacks, or has a bad dependency.
    fn check(&self, machine: &Machine) -> PyResult<()> {
        api::check_transfers(&machine.m, &self.spec, &self.origin).map_err(to_py)
    }

    fn __len__(&self) -> usize {
        self.spec.transfers.len()
    }
}

/// A report column as it crosses: name, kind and buffers.
type TableColumn<'py> = (&'static str, &'static str, Vec<Bound<'py, PyBytes>>);

/// A simulation's report, held by the core: its tables cross as Arrow buffers, JSON only when asked.
#[pyclass(frozen, module = "contend._core")]
struct Report {
    r: report::Report,
}

#[pymethods]
impl Report {
    /// The report as JSON, UTF-8 bytes: a 100,000-transfer report is about 10 MB, which Python
    /// writes to a file or standard output as it is (a str would be decoded here and encoded
    /// again there).
    fn to_json<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &serde_json::to_vec(&self.r).expect("reports serialise"))
    }

    /// A table (transfers, links, devices) as CSV, UTF-8 bytes.
    fn csv<'py>(&self, py: Python<'py>, table: &str) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, self.r.csv(table).map_err(to_py)?.as_bytes()))
    }

    #[getter]
    fn makespan_s(&self) -> f64 {
        self.r.summary.makespan_s
    }

    /// A table's columns as (name, kind, buffers): numbers as one little-endian buffer
    /// ("f64", "u64"), text as Arrow's 64-bit offsets and UTF-8 data ("str").
    fn table<'py>(&self, py: Python<'py>, table: &str) -> PyResult<Vec<TableColumn<'py>>> {
        let cols = self.r.table(table).map_err(to_py)?;
        Ok(cols
            .into_iter()
            .map(|(name, c)| match c {
                Column::F64(v) => (name, "f64", vec![PyBytes::new(py, &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())]),
                Column::U64(v) => (name, "u64", vec![PyBytes::new(py, &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>())]),
                // Arrow has no 128-bit unsigned integers: exact as u64 while every total fits,
                // else as float64 (a total past 16 EiB is then rounded to 53 bits; --json keeps it exact).
                Column::U128(v) if v.iter().all(|&x| x <= u64::MAX as u128) => {
                    (name, "u64", vec![PyBytes::new(py, &v.iter().flat_map(|&x| (x as u64).to_le_bytes()).collect::<Vec<u8>>())])
                }
                Column::U128(v) => (name, "f64", vec![PyBytes::new(py, &v.iter().flat_map(|&x| (x as f64).to_le_bytes()).collect::<Vec<u8>>())]),
                Column::Str(v) => (name, "str", arrow_text(py, v.len(), v.iter().map(String::as_str))),
                Column::Names(v) => (name, "str", arrow_text(py, v.len(), v.iter())),
            })
            .collect())
    }
}

/// Text as Arrow's 64-bit offsets and UTF-8 data.
fn arrow_text<'a, 'py>(py: Python<'py>, rows: usize, text: impl Iterator<Item = &'a str>) -> Vec<Bound<'py, PyBytes>> {
    let mut offsets = Vec::with_capacity(8 * (rows + 1));
    let mut data = Vec::new();
    offsets.extend_from_slice(&0i64.to_le_bytes());
    for s in text {
        data.extend_from_slice(s.as_bytes());
        offsets.extend_from_slice(&(data.len() as i64).to_le_bytes());
    }
    vec![PyBytes::new(py, &offsets), PyBytes::new(py, &data)]
}

/// `api::simulate`: the report, held.
#[pyfunction]
#[pyo3(signature = (machine, transfers, model=None, params=Vec::new(), phases=false, nics=false))]
fn simulate(
    py: Python<'_>,
    machine: &Machine,
    transfers: &Transfers,
    model: Option<&str>,
    params: Vec<(String, String)>,
    phases: bool,
    nics: bool,
) -> PyResult<Report> {
    interruptible(py, || api::simulate(&machine.m, &transfers.spec, &transfers.origin, model, &params, Detail { phases, nics }).map(|r| Report { r }))
}

/// Presets as a JSON list of {name, description, gpus, source}.
#[pyfunction]
fn presets() -> String {
    json(&api::presets())
}

/// Devices and links with their resolved bandwidths, for drawing.
#[pyfunction]
fn machine_graph(machine: &Machine) -> String {
    json(&api::machine_graph(&machine.m))
}

/// The machine as an indented text tree.
#[pyfunction]
fn render_machine(machine: &Machine) -> String {
    api::render_machine(&machine.m)
}

/// The report of `api::explain` as JSON: `simulate`'s with phases, and every step per phase.
#[pyfunction]
fn explain(py: Python<'_>, machine: &Machine, transfers: &Transfers, model: Option<&str>, params: Vec<(String, String)>) -> PyResult<String> {
    interruptible(py, || api::explain(&machine.m, &transfers.spec, &transfers.origin, model, &params).map(|r| json(&r)))
}

/// `api::schedule`: returns (report JSON, best schedule as transfers JSON).
/// `progress(done, total)` is called now and then from worker threads.
#[pyfunction]
#[pyo3(signature = (machine, halo, semantics, search, model, params, alpha, seed, iterations, threads, keep_times, progress=None))]
#[allow(clippy::too_many_arguments)]
fn schedule(
    py: Python<'_>,
    machine: &Machine,
    halo: String,
    semantics: String,
    search: String,
    model: Option<String>,
    params: Vec<(String, String)>,
    alpha: String,
    seed: u64,
    iterations: u64,
    threads: usize,
    keep_times: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<(String, String)> {
    let req = api::ScheduleRequest { halo, semantics, search, model, params, alpha, seed, iterations, threads, keep_times };
    let report = move |done: u64, total: u64| {
        if let Some(cb) = &progress {
            Python::attach(|py| {
                let _ = cb.call1(py, (done, total));
            });
        }
    };
    interruptible(py, || api::schedule(&machine.m, &req, Some(&report)).map(|(r, best)| (json(&r), json(&best))))
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
fn nvbandwidth(py: Python<'_>, machine: &Machine, params: Vec<(String, String)>) -> PyResult<(String, String)> {
    interruptible(py, || api::nvbandwidth(&machine.m, &params).map(|r| (json(&r), r.text())))
}

/// `api::p2p`: the predicted p2pBandwidthLatencyTest matrices.
#[pyfunction]
fn p2p(py: Python<'_>, machine: &Machine, params: Vec<(String, String)>) -> PyResult<String> {
    interruptible(py, || api::p2p(&machine.m, &params).map(|r| json(&r)))
}

/// `api::calibrate`: the fit to a measurements file, as JSON.
#[pyfunction]
#[pyo3(signature = (machine, measurements, params, hold_out, machine_out=false, network_bandwidth=None, algo=None, proto=None, env=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn calibrate(
    py: Python<'_>,
    machine: &Machine,
    measurements: &str,
    params: Vec<(String, String)>,
    hold_out: bool,
    machine_out: bool,
    network_bandwidth: Option<String>,
    algo: Option<String>,
    proto: Option<String>,
    env: Vec<(String, String)>,
) -> PyResult<String> {
    let nccl = contend_core::calibrate::nccl_fit::RunSettings {
        network_bandwidth: network_bandwidth.as_deref(),
        algo: algo.as_deref(),
        proto: proto.as_deref(),
        env: &env,
    };
    interruptible(py, || api::calibrate(&machine.m, measurements, &params, hold_out, machine_out, &nccl).map(|r| json(&r)))
}

/// `api::datatype`: every method's time for one message of a datatype, its parts and the winner.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn datatype(
    py: Python<'_>,
    machine: &Machine,
    source: &str,
    src: String,
    dst: String,
    count: u64,
    model: String,
    params: Vec<(String, String)>,
    kernels: Vec<(String, String)>,
) -> PyResult<String> {
    let req = datatype_report::DatatypeRequest { src, dst, count, model, params, kernels };
    interruptible(py, || api::datatype(&machine.m, source, &req).map(|r| json(&r)))
}

/// `api::datatype_sweep`: the same over `points` message sizes doubling from `count` = 1.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn datatype_sweep(
    py: Python<'_>,
    machine: &Machine,
    source: &str,
    src: String,
    dst: String,
    model: String,
    params: Vec<(String, String)>,
    kernels: Vec<(String, String)>,
    points: u32,
) -> PyResult<String> {
    let req = datatype_report::DatatypeRequest { src, dst, count: 1, model, params, kernels };
    interruptible(py, || api::datatype_sweep(&machine.m, source, &req, points).map(|r| json(&r)))
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
fn calibrate_kernels(machine: &Machine, src: &str, dst: &str, measurements: &str) -> PyResult<String> {
    Ok(json(&api::calibrate_kernels(&machine.m, src, dst, measurements).map_err(to_py)?))
}

/// Halo presets as a JSON list of [name, description].
#[pyfunction]
fn halo_presets() -> String {
    json(api::halo_presets())
}

/// Transfer patterns as a JSON list of [name, description].
#[pyfunction]
fn patterns() -> String {
    json(&api::patterns())
}

/// `api::generate`: a transfers description as JSON.
#[pyfunction]
#[pyo3(signature = (machine, pattern, peers, size, root=None, count=None, seed=None, gap=None, grid=None, periodic=false))]
#[allow(clippy::too_many_arguments)]
fn generate(
    machine: &Machine,
    pattern: String,
    peers: Option<Vec<String>>,
    size: &Bound<'_, PyAny>,
    root: Option<String>,
    count: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    gap: Option<String>,
    grid: Option<String>,
    periodic: bool,
) -> PyResult<String> {
    let size = size_text(size, "size")?;
    let (count, seed) = (whole_opt(count, "count", 1)?.unwrap_or(32), whole_opt(seed, "seed", 0)?.unwrap_or(0));
    let req = api::GenerateRequest { pattern, peers, size, root, count, seed, gap, grid, periodic };
    Ok(json(&api::generate(&machine.m, &req).map_err(to_py)?))
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

/// Which model runs where none is named, in words (the registry's rule, for `--help`).
#[pyfunction]
fn model_default_rule() -> String {
    api::model_default_rule()
}

/// What a sequence of calls shares (`api::Session`): the last run's lowered jobs and prepared
/// model, the clusters and workloads already checked. `contend.Session` holds one.
#[pyclass(frozen, module = "contend._core")]
#[derive(Default)]
struct Session {
    s: api::Session,
}

#[pymethods]
impl Session {
    #[new]
    fn new() -> Session {
        Session::default()
    }
}

/// `api::run`: a scenario's report as JSON; `links=None` reports every link. `progress(delivered,
/// messages)` is called now and then; with a `session` the run keeps its lowered jobs there for
/// the next run and takes the last run's where they are the same.
#[pyfunction]
#[pyo3(signature = (text, origin, detail, links=Some(contend_core::scenario::DEFAULT_TOP_LINKS), progress=None, session=None, model=None, params=Vec::new(), env=Vec::new()))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    text: &str,
    origin: &str,
    detail: bool,
    links: Option<usize>,
    progress: Option<Py<PyAny>>,
    session: Option<&Session>,
    model: Option<String>,
    params: Vec<(String, String)>,
    env: Vec<(String, String)>,
) -> PyResult<String> {
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
    let opts = contend_core::scenario::RunOptions { detail, top_links: links, progress, session: session.map(|s| &s.s), nccl_env: &env };
    interruptible(py, || api::run_as(text, origin, model.as_deref(), &params, &opts).map(|r| json(&r)))
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
#[pyo3(signature = (text, origin, session, model=None, params=Vec::new()))]
fn check_scenario(text: &str, origin: &str, session: &Session, model: Option<String>, params: Vec<(String, String)>) -> PyResult<()> {
    api::check_scenario(text, origin, model.as_deref(), &params, &session.s).map_err(to_py)
}

/// The application skeletons as JSON.
#[pyfunction]
fn apps() -> String {
    json(&api::apps())
}

/// `api::nccl_tests`: what nccl-tests would print (JSON; its "table" is the text nccl-tests prints).
#[pyfunction]
#[pyo3(signature = (machine, op, min_bytes, max_bytes, factor, ngpus=None, gpus=None, dtype="float", root=None, algo=None, proto=None, channels=None, model="maxmin", params=Vec::new(), explain=false, nodes=None, network_bandwidth=None, tuner=None, env=Vec::new(), iters=None))]
#[allow(clippy::too_many_arguments)]
fn nccl_tests(
    py: Python<'_>,
    machine: &str,
    op: &str,
    min_bytes: &str,
    max_bytes: &str,
    factor: &Bound<'_, PyAny>,
    ngpus: Option<&Bound<'_, PyAny>>,
    gpus: Option<Vec<String>>,
    dtype: &str,
    root: Option<&Bound<'_, PyAny>>,
    algo: Option<String>,
    proto: Option<String>,
    channels: Option<&Bound<'_, PyAny>>,
    model: &str,
    params: Vec<(String, String)>,
    explain: bool,
    nodes: Option<&Bound<'_, PyAny>>,
    network_bandwidth: Option<String>,
    tuner: Option<String>,
    env: Vec<(String, String)>,
    iters: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let factor: u64 = whole(factor, "factor", 2)?;
    let iters = whole_opt(iters, "iters", 1)?.unwrap_or(contend_core::tools::nccl_tests::ITERS);
    let (root, nodes): (usize, usize) = (whole_opt(root, "root", 0)?.unwrap_or(0), whole_opt(nodes, "nodes", 1)?.unwrap_or(1));
    let (ngpus, channels) = (whole_opt(ngpus, "ngpus", 1)?, whole_opt(channels, "channels", 1)?);
    let req = contend_core::nccl::tests_tool::Request {
        op: op.into(),
        min_bytes: min_bytes.into(),
        max_bytes: max_bytes.into(),
        factor,
        ngpus,
        gpus,
        dtype: dtype.into(),
        root,
        iters,
        algo,
        proto,
        channels,
        channel_bounds: None,
        tuner,
        model: model.into(),
        params,
        explain,
        env,
    };
    interruptible(py, || api::nccl_tests(machine, &req, nodes, network_bandwidth.as_deref()).map(|r| json(&r)))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ContendError", m.py().get_type::<ContendError>())?;
    m.add("InputError", m.py().get_type::<InputError>())?;
    m.add("UnsupportedError", m.py().get_type::<UnsupportedError>())?;
    m.add_class::<Machine>()?;
    m.add_class::<Transfers>()?;
    m.add_class::<Report>()?;
    m.add_class::<Session>()?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(machine_graph, m)?)?;
    m.add_function(wrap_pyfunction!(render_machine, m)?)?;
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
    m.add_function(wrap_pyfunction!(model_default_rule, m)?)?;
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
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(nccl_tests, m)?)?;
    Ok(())
}

/// The report of `api::compare` as JSON: the transfers under every model (or `models`), each
/// against the most detailed one that ran; `params` are (model, name, value).
#[pyfunction]
#[pyo3(signature = (machine, transfers, models, params))]
fn compare(py: Python<'_>, machine: &Machine, transfers: &Transfers, models: Vec<String>, params: Vec<(String, String, String)>) -> PyResult<String> {
    interruptible(py, || api::compare(&machine.m, &transfers.spec, &transfers.origin, &models, &params).map(|r| json(&r)))
}
