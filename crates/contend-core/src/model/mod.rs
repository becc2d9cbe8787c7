//! The ladder of models. Each turns "these transfers are active now" into a rate per transfer;
//! the phase engine in `sim` turns rates into start and finish times.

pub mod maxmin;
pub mod mechanism;
pub mod sc16;

use crate::error::{Error, Result};
use crate::topology::Machine;
use crate::workload::Workload;
use std::collections::BTreeMap;

/// A model of bandwidth sharing among the transfers active during one phase.
pub trait RateModel {
    /// Bytes per second for each active transfer: `out[k]` belongs to `active[k]`.
    fn rates(&mut self, active: &[usize], out: &mut [f64]);
    /// Directed links each transfer uses, as indices into `links()`.
    fn route(&self, transfer: usize) -> &[u32];
    /// Name and capacity (bytes/s) of every directed link the model knows.
    fn links(&self) -> Vec<(String, f64)>;
    /// The parameters in force, defaults included, as "name" -> "value".
    fn params(&self) -> BTreeMap<String, String>;
}

pub struct ModelInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub applies_to: &'static str,
    /// (name, help) of every `--param`.
    pub params: &'static [(&'static str, &'static str)],
}

pub const MODELS: &[ModelInfo] = &[ModelInfo {
    name: "sc16",
    summary: "PCIe congestion-aware model of Martinasso et al. (SC16): congestion factors from source arbitration, \
              upstream proportional sharing, downstream round-robin with root-complex penalty tau, head-of-line blocking",
    applies_to: "GPU-to-GPU copies inside one PCIe tree under one root complex",
    params: sc16::PARAM_HELP,
}, ModelInfo {
    name: "maxmin",
    summary: "flow-level max-min fair sharing over directed links, with per-hop latency, per-link-kind efficiency \
              and CUDA's choice of mechanism (peer-to-peer, host-staged, GPUDirect RDMA)",
    applies_to: "any machine graph: PCIe trees, QPI/UPI, NVLink meshes, NVSwitch, NICs and host memory",
    params: maxmin::PARAM_HELP,
}];

/// What to tell a user whose machine or workload a model cannot handle.
pub fn general_model_hint() -> String {
    let general: Vec<&str> = MODELS.iter().filter(|m| m.name != "sc16").map(|m| m.name).collect();
    if general.is_empty() {
        "paths that leave one PCIe tree need a flow-level model (maxmin), which this version does not have yet".into()
    } else {
        format!("use --model {}", general.join(" or --model "))
    }
}

/// Build the named model for this machine and workload.
pub fn build(name: &str, params: &[(String, String)], m: &Machine, w: &Workload) -> Result<Box<dyn RateModel>> {
    match name {
        "sc16" => Ok(Box::new(sc16::Sc16Model::new(m, w, sc16::Sc16Params::parse(params)?)?)),
        "maxmin" => Ok(Box::new(maxmin::MaxminModel::new(m, w, maxmin::MaxminParams::parse(params)?)?)),
        _ => Err(Error::input(
            "--model",
            name,
            format!("is not a model; choose one of {}", MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(", ")),
        )),
    }
}

pub(crate) fn param_error(key: &str, problem: impl Into<String>) -> Error {
    Error::input("--param", key, problem)
}

pub(crate) fn unknown_param(model: &str, key: &str, help: &[(&str, &str)]) -> Error {
    let known: Vec<&str> = help.iter().map(|(n, _)| *n).collect();
    param_error(key, format!("is not a parameter of {model}; known: {}", known.join(", ")))
}

pub(crate) fn on_off(key: &str, v: &str) -> Result<bool> {
    match v {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(param_error(key, format!("\"{v}\" is not on or off"))),
    }
}
