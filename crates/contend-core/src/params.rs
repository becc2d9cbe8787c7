//! Parameters as every part of contend declares and reads them: a model's `--param`s, the
//! kernel terms of datatype methods, the stream-ordered stencil's and the skeletons' knobs.
//! One declaration (name, default, help), one way to refuse a value or a name, below every
//! layer that has parameters, so that none of them borrows another's helpers.

use crate::error::{Error, Result};
use serde::Serialize;

/// One parameter as its table declares it; `contend models` and the docs print these.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Param {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

/// A value that cannot be taken, naming the parameter.
pub fn param_error(key: &str, problem: impl Into<String>) -> Error {
    Error::input("--param", key, problem)
}

/// A name that is not in `params`, listing the names that are.
pub fn unknown_param(owner: &str, key: &str, params: &[Param]) -> Error {
    let known: Vec<&str> = params.iter().map(|p| p.name).collect();
    param_error(key, format!("is not a parameter of {owner}; known: {}", known.join(", ")))
}

/// A parameter that is a fraction in (0, 1] (an efficiency).
pub fn fraction(key: &str, v: &str) -> Result<f64> {
    v.parse::<f64>().ok().filter(|e| *e > 0.0 && *e <= 1.0).ok_or_else(|| param_error(key, format!("\"{v}\" is not a number in (0, 1]; e.g. {key}=0.8")))
}

/// A switch: on/true/yes/1 or off/false/no/0.
pub fn on_off(key: &str, v: &str) -> Result<bool> {
    match v {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(param_error(key, format!("\"{v}\" is not on or off"))),
    }
}
