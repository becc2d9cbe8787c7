//! `contend datatype`: every method's predicted time for one message of a datatype between two
//! devices, part by part, the winner and its margin; and a sweep over message sizes (the
//! crossover chart). Each method is run by the executor under the chosen model, so the path,
//! its bandwidth and its latency are the machine model's.

use crate::datatype::{cost, Datatype, KernelParams, Message, Method, Stats};
use crate::error::{Error, Result};
use crate::flow::methods::Estimate;
use crate::model::registry;
use crate::sim;
use crate::topology::Machine;
use crate::workload::{Transfer, Workload};
use serde::Serialize;
use std::collections::BTreeMap;

/// Most sweep points (message sizes doubling from one instance).
pub const MAX_SWEEP: u32 = 40;

#[derive(Clone, Debug)]
pub struct DatatypeRequest {
    pub src: String,
    pub dst: String,
    pub count: u64,
    pub model: String,
    pub params: Vec<(String, String)>,
    pub kernels: Vec<(String, String)>,
}

#[derive(Serialize, Debug)]
pub struct MethodRow {
    /// Seconds from issue until the receiver's data is in place, as the executor runs it.
    pub simulated_s: Option<f64>,
    #[serde(flatten)]
    pub estimate: Estimate,
}

#[derive(Serialize, Debug)]
pub struct DatatypeReport {
    pub machine: String,
    pub model: String,
    pub src: String,
    pub dst: String,
    pub datatype: String,
    pub description: String,
    pub stats: Stats,
    pub message: Message,
    pub kernels: BTreeMap<String, String>,
    pub params: BTreeMap<String, String>,
    pub methods: Vec<MethodRow>,
    pub winner: String,
    pub margin_s: f64,
}

fn one(m: &Machine, req: &DatatypeRequest, msg: Message, method: Method, kernels: KernelParams) -> Result<Workload> {
    let dev = |name: &str, flag: &str| m.device(name).ok_or_else(|| Error::input(flag, name, format!("is not a device of {}; {}", m.name, m.endpoint_hint())));
    let (src, dst) = (dev(&req.src, "SRC")?, dev(&req.dst, "DST")?);
    if src == dst {
        return Err(Error::input("DST", &req.dst, "equals SRC; a message needs two different devices"));
    }
    let t = Transfer { name: "message".into(), src, dst, size: msg.bytes, layout: Some(Box::new(msg)), method: Some(method), ..Default::default() };
    Ok(Workload { transfers: vec![t], origin: "contend datatype".into(), kernels })
}

/// Every method for `count` instances of `dt` from `req.src` to `req.dst`.
pub fn compare(m: &Machine, dt: &Datatype, req: &DatatypeRequest) -> Result<DatatypeReport> {
    if req.count == 0 {
        return Err(Error::input("--count", "0", "sends nothing; give at least 1"));
    }
    let entry = registry::get(&req.model)?;
    let kernels = KernelParams::parse(&req.kernels).map_err(|e| rename_flag(e, "--kernel"))?;
    if req.count.checked_mul(dt.stats.size_bytes).is_none() {
        let why = format!("instances of {} bytes are 2^64 bytes or more; give a smaller count", dt.stats.size_bytes);
        return Err(Error::input("--count", req.count.to_string(), why));
    }
    let msg = dt.stats.message(req.count);
    let w = one(m, req, msg, Method::Adaptive, kernels)?;
    let prepared = entry.prepare(m, &w, &req.params)?;
    let decision = prepared.flows().decisions.first().expect("a datatype message has a decision").1.clone();
    let mut methods = Vec::new();
    for e in decision.estimates {
        let simulated_s = match e.total_s {
            Some(_) => {
                let w = one(m, req, msg, e.method, kernels)?;
                let p = entry.prepare(m, &w, &req.params)?;
                Some(sim::run_prepared(&w, p.as_ref(), false)?.finish[0])
            }
            None => None,
        };
        methods.push(MethodRow { simulated_s, estimate: e });
    }
    Ok(DatatypeReport {
        machine: m.name.clone(),
        model: entry.name.into(),
        src: req.src.clone(),
        dst: req.dst.clone(),
        datatype: dt.name.clone(),
        description: dt.description.clone(),
        stats: dt.stats.clone(),
        message: msg,
        kernels: kernels.to_map(),
        params: prepared.params(),
        methods,
        winner: decision.chosen.name().into(),
        margin_s: decision.margin_s,
    })
}

/// The sweep's rows: per message size, every method's simulated time (null where it does not apply).
#[derive(Serialize, Debug, Default)]
pub struct Sweep {
    pub count: Vec<u64>,
    pub bytes: Vec<u64>,
    pub blocks: Vec<u64>,
    /// Per method name: seconds per row.
    pub times: BTreeMap<String, Vec<Option<f64>>>,
    pub winner: Vec<String>,
}

/// `points` message sizes, 1, 2, 4, ... instances of `dt`.
pub fn sweep(m: &Machine, dt: &Datatype, req: &DatatypeRequest, points: u32) -> Result<Sweep> {
    if !(1..=MAX_SWEEP).contains(&points) {
        return Err(Error::input("--sweep", points.to_string(), format!("is out of range; give 1 to {MAX_SWEEP} sizes")));
    }
    let mut s = Sweep::default();
    for method in cost::METHODS {
        s.times.insert(method.name().into(), Vec::new());
    }
    for k in 0..points {
        let r = compare(m, dt, &DatatypeRequest { count: 1u64 << k, ..req.clone() })?;
        s.count.push(r.message.count);
        s.bytes.push(r.message.bytes);
        s.blocks.push(r.message.blocks);
        for row in &r.methods {
            s.times.get_mut(row.estimate.method.name()).expect("every method has a column").push(row.simulated_s);
        }
        s.winner.push(r.winner);
    }
    Ok(s)
}

fn rename_flag(e: Error, flag: &str) -> Error {
    match e {
        Error::Input { field, problem, .. } => Error::input(flag, field, problem),
        e => e,
    }
}
