//! The ladder of models, and the registry that names each one once.
//!
//! A model turns the flows moving bytes into rates. Rate models (`RateModel`: sc16, and
//! maxmin's one-shot fill) answer "these flows are active: how fast does each go"; the
//! executor runs them through `RateAdaptor`. Event models (`EventModel`: maxmin's incremental
//! engine, a packet-level model) are told of every join and finish and say when the next
//! flow finishes. Either way the one loop that advances time is `sim::run`.

pub mod link_rate;
pub mod maxmin;
#[cfg(test)]
mod nic_latency_tests;
#[cfg(test)]
mod nic_rails_tests;
pub mod packet;
mod rate;
pub mod registry;
pub mod sc16;
mod sc16_explain;

pub use crate::params::Param;
pub use rate::{RateAdaptor, DONE};
pub use registry::{ModelEntry, ModelKind};

use crate::error::Result;
use crate::flow::FlowTable;
use crate::topology::Machine;
use crate::workload::Workload;
use std::collections::BTreeMap;

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
    /// Bytes flow `flow`, moving, still has to deliver at `t` (no earlier than the last event),
    /// where the model can tell: the executor's NIC release (params.rs, `NicRelease`) reads it.
    /// None: the NIC waits until the flow is delivered.
    fn remaining(&self, _flow: usize, _t: f64) -> Option<f64> {
        None
    }
    /// After `settle`: every resource whose load may have changed, with its load in bytes/s;
    /// among them every resource of each flow whose rate may have changed, and of each flow that
    /// joined or finished (the executor's early NIC release moves its events only then).
    /// Given as the list of those resources and a per-resource array of loads, read at the
    /// listed resources: a model that keeps both (maxmin) lends them, without a copy per settle.
    fn loads(&mut self) -> (&[u32], &[f64]);
    /// Flow `flow`, moving, was released early by its NIC at `t`: where the flow table gives it a
    /// tail route (`FlowTable::tail_route`, `release_frees_nic`), its bytes left move on that
    /// route from now on. Required, so that a wrapper cannot drop it; a model without tail
    /// routes has nothing to do.
    fn reroute(&mut self, flow: usize, t: f64);
    /// After the run: what the model's own units moved on each resource, where they take other
    /// links than the flow table's route (`packet` routes each packet; the flow table holds one
    /// path per message). None: the routes say it. Required, so that a wrapper cannot drop it.
    fn carried(&mut self) -> Option<Carried>;
}

/// Per resource of the flow table, what a model that routes below the message moved on it.
pub struct Carried {
    pub bytes: Vec<f64>,
    /// Seconds the resource spent sending.
    pub busy_s: Vec<f64>,
}

/// One transfer's factor after each step of a model that shows its steps (sc16's A-D and the
/// final one), and per step the ports that lowered or raised it.
#[derive(serde::Serialize, Debug)]
pub struct FactorRow {
    pub transfer: usize,
    pub a: f64,
    pub b: f64,
    pub c: f64,
    pub d: f64,
    #[serde(rename = "final")]
    pub fin: f64,
    /// Per step ("B", "C", "D", "final"): the ports that lowered or raised this factor.
    pub causes: BTreeMap<String, Vec<String>>,
}

#[derive(serde::Serialize, Debug)]
pub struct ExplainPhase {
    pub start_s: f64,
    pub end_s: f64,
    pub rows: Vec<FactorRow>,
}

/// A phase as the executor ran it: when, and which flows moved (ascending).
pub struct PhaseSpan {
    pub start_s: f64,
    pub end_s: f64,
    pub active: Vec<usize>,
}

/// What a model's explain hook gives back: its flow table and parameters (for the report) and
/// every phase's steps.
pub struct Explained {
    pub flows: FlowTable,
    pub params: BTreeMap<String, String>,
    pub phases: Vec<ExplainPhase>,
}

/// Runs the executor over a flow table with a (tracing) rate model and returns its phases;
/// the caller above `sim` provides it, so that a model never reaches up to the executor.
pub type RunPhases<'a> = dyn FnMut(&FlowTable, &mut dyn RateModel) -> Result<Vec<PhaseSpan>> + 'a;

/// A model's `contend explain`: prepare it for the workload, run it through `run` with its
/// steps recorded, and word every phase's steps.
pub type Explain = fn(&Machine, &Workload, &[(String, String)], &mut RunPhases) -> Result<Explained>;

impl<M: RateModel + ?Sized> RateModel for &mut M {
    fn rates(&mut self, active: &[usize], out: &mut [f64]) {
        (**self).rates(active, out)
    }
}

/// Make a model ready for a workload: machine, workload, `--param` pairs.
pub type Prepare = fn(&Machine, &Workload, &[(String, String)]) -> Result<Box<dyn Prepared>>;

/// A model made ready for one workload on one machine: its flow table, the parameters in
/// force, and fresh model instances (one per thread: models keep scratch buffers).
pub trait Prepared: Send + Sync {
    fn flows(&self) -> &FlowTable;
    fn params(&self) -> BTreeMap<String, String>;
    /// The model as rates of an active set, where it has that form (the search memoises it).
    fn rate_model(&self) -> Option<Box<dyn RateModel + '_>>;
    fn event_model(&self) -> Box<dyn EventModel + '_>;
    /// Whether the executor applies the NIC scheduling discipline by admission (flow level:
    /// FCFS lets one message of a NIC move at a time, RR-N the first N, RR all); a packet-level
    /// model that packetises messages itself says no.
    fn queues_at_nics(&self) -> bool {
        true
    }
    /// Take the capacities of `m`, which differs from the prepared machine in its links'
    /// bandwidths and NIC scheduling alone (the caller checks that), keeping everything else;
    /// false where this model cannot, and is to be prepared anew.
    fn take_capacities(&mut self, _m: &Machine) -> Result<bool> {
        Ok(false)
    }
}
