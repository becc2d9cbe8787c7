//! contend-core: machines, transfers and the models that predict how long data movement takes.
//! All logic lives here; the Python package and the CLI are thin skins over `api`.

pub mod api;
pub mod calibrate;
pub mod compare;
mod csv;
pub mod datatype;
pub mod datatype_report;
pub mod error;
pub mod flow;
pub mod generate;
mod heap;
pub mod import;
pub mod interrupt;
mod keymap;
pub mod model;
pub mod nccl;
pub mod params;
pub mod report;
pub mod scenario;
pub mod schedule;
pub mod sim;
pub mod stencil;
pub mod terminal;
pub mod tools;
pub mod topology;
pub mod units;
pub mod workload;
mod yaml_bounds;

pub use error::{Error, Result};
