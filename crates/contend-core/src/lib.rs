//! contend-core: machines, transfers and the models that predict how long data movement takes.
//! All logic lives here; the Python package and the CLI are thin skins over `api`.

pub mod api;
pub mod error;
pub mod model;
pub mod schedule;
pub mod sim;
pub mod topology;
pub mod units;
pub mod workload;

pub use error::{Error, Result};
