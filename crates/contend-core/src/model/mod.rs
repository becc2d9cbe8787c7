//! The ladder of models, and the registry that names each one once.
//!
//! A model turns the flows moving bytes into rates. Rate models (`RateModel`: sc16, and
//! maxmin's one-shot fill) answer "these flows are active: how fast does each go"; the
//! executor runs them through `RateAdaptor`. Event models (`EventModel`: maxmin's incremental
//! engine, a packet-level model) are told of every join and finish and say when the next
//! flow finishes. Either way the one loop that advances time is `sim::run`.

pub mod maxmin;
pub mod packet;
mod rate;
pub mod registry;
pub mod sc16;

pub use crate::params::Param;
pub(crate) use crate::params::{on_off, param_error, unknown_param};
pub use rate::{RateAdaptor, DONE};
pub use registry::{ModelEntry, ModelKind, Prepared};

use crate::error::Result;

/// Events this close after an instant's time (relative) belong to it: float ties.
pub const SAME_TIME: f64 = 1e-12;

/// Bandwidth sharing among the flows active during one phase.
pub trait RateModel {
    /// Bytes per second for each active flow: `out[k]` belongs to `active[k]` (ascending).
    fn rates(&mut self, active: &[usize], out: &mut [f64]);
}

impl<M: RateModel + ?Sized> RateModel for Box<M> {
    fn rates(&mut self, active: &[usize], out: &mut [f64]) {
        (**self).rates(active, out)
    }
}

/// A model driven by events: flows join (their setup over) and finish; the model keeps the
/// rates of the flows in flight and knows when the next one finishes.
pub trait EventModel {
    /// Flow `flow` starts moving bytes at `t`.
    fn join(&mut self, flow: usize, t: f64);
    /// No flow joins before `until` (infinite when none is scheduled). A model with events of
    /// its own (packets crossing links) runs them up to the earlier of `until` and its next
    /// finish, so that `next_finish` can answer; fluid models need not do anything.
    fn horizon(&mut self, _until: f64) {}
    /// When the next flow in flight finishes at the current rates, if any moves at all.
    fn next_finish(&mut self) -> Option<f64>;
    /// Take the flows done at `t` (float ties included) off the network, into `done`.
    fn finish(&mut self, t: f64, done: &mut Vec<usize>);
    /// Settle the rates after every join and finish of the instant `t`.
    fn settle(&mut self, t: f64) -> Result<()>;
    /// Bytes/s of a flow now (0 when it is not moving).
    fn rate(&self, flow: usize) -> f64;
    /// After `settle`: every resource whose load may have changed, with its load in bytes/s.
    fn loads(&mut self, out: &mut Vec<(u32, f64)>);
}
