//! The constants of NCCL's kernels that measurements can move and `contend calibrate` fits
//! from nccl-tests output: each protocol's per-step latency (NCCL's `hwLatencies` for the
//! communicator's path type, paid once per step of a call's first loop) and its efficiency (the
//! share of the links' bandwidth its kernels reach: the transfers carry wire bytes over it).
//! Given as `--param nccl_step_simple=…` beside the model's own parameters; unset, NCCL's
//! values and an efficiency of 1 (the links' own efficiency stays the model's).

use super::{Proto, PROTOS};
use crate::error::Result;
use crate::params::{fraction, param_error, unknown_param, Param};
use crate::units::Time;

pub const PARAMS: &[Param] = &[
    Param { name: "nccl_step_ll", default: "NCCL's", help: "per-step latency of LL (NCCL's hwLatencies for the path type)" },
    Param { name: "nccl_step_ll128", default: "NCCL's", help: "per-step latency of LL128" },
    Param { name: "nccl_step_simple", default: "NCCL's", help: "per-step latency of Simple" },
    Param { name: "nccl_eff_ll", default: "1", help: "share of the links' bandwidth LL's kernels reach (beyond its 8-of-16 wire format)" },
    Param { name: "nccl_eff_ll128", default: "1", help: "same for LL128 (beyond its 120-of-128 wire format)" },
    Param { name: "nccl_eff_simple", default: "1", help: "same for Simple" },
    Param { name: "nccl_pxn_disable", default: "0", help: "1: no PXN (NCCL_PXN_DISABLE): a send to another node leaves through the sender's own NIC" },
    Param {
        name: "nccl_eff_nvls",
        default: "NCCL's",
        help: "share of the NVLink bandwidth NVLS's multimem operations reach (NCCL's nvlsEfficiency: 0.85 Hopper, 0.74 Blackwell)",
    },
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Constants {
    /// Seconds per step, by protocol (NCCL's index); None: NCCL's own.
    pub step: [Option<f64>; 3],
    pub efficiency: [f64; 3],
    /// NVLS's share of the NVLink bandwidth; None: NCCL's `nvlsEfficiency` for the GPU.
    pub nvls: Option<f64>,
    /// NCCL_PXN_DISABLE=1.
    pub pxn_disable: bool,
}

impl Default for Constants {
    fn default() -> Self {
        Constants { step: [None; 3], efficiency: [1.0; 3], nvls: None, pxn_disable: false }
    }
}

fn suffix(p: Proto) -> &'static str {
    match p {
        Proto::Ll => "ll",
        Proto::Ll128 => "ll128",
        Proto::Simple => "simple",
    }
}

/// The `nccl_*` parameters of `params` read into constants; the others returned for the model.
pub fn split(params: &[(String, String)]) -> Result<(Constants, Vec<(String, String)>)> {
    let mut c = Constants::default();
    let mut rest = Vec::new();
    for (k, v) in params {
        if !k.starts_with("nccl_") {
            rest.push((k.clone(), v.clone()));
            continue;
        }
        if k == "nccl_pxn_disable" {
            c.pxn_disable = match v.trim() {
                "0" => false,
                "1" => true,
                _ => return Err(param_error(k, format!("\"{v}\" is not 0 or 1; e.g. {k}=1"))),
            };
            continue;
        }
        if k == "nccl_eff_nvls" {
            c.nvls = Some(fraction(k, v)?);
            continue;
        }
        let Some(p) = PROTOS.iter().copied().find(|&p| k == &format!("nccl_step_{}", suffix(p)) || k == &format!("nccl_eff_{}", suffix(p))) else {
            return Err(unknown_param("NCCL", k, PARAMS));
        };
        if k.starts_with("nccl_step_") {
            let t = Time::parse(v).map_err(|e| param_error(k, format!("\"{v}\": {e}; e.g. {k}=2.5us")))?;
            c.step[p as usize] = Some(t.secs());
        } else {
            c.efficiency[p as usize] = fraction(k, v)?;
        }
    }
    Ok((c, rest))
}

/// The constants as parameters (those that differ from the defaults), for a command line.
pub fn to_params(c: &Constants) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in PROTOS {
        if let Some(s) = c.step[p as usize] {
            out.push((format!("nccl_step_{}", suffix(p)), format!("{:.3}us", s * 1e6)));
        }
    }
    for p in PROTOS {
        if c.efficiency[p as usize] != 1.0 {
            out.push((format!("nccl_eff_{}", suffix(p)), format!("{:.4}", c.efficiency[p as usize])));
        }
    }
    if c.pxn_disable {
        out.push(("nccl_pxn_disable".into(), "1".into()));
    }
    if let Some(e) = c.nvls {
        out.push(("nccl_eff_nvls".into(), format!("{e:.4}")));
    }
    out
}
