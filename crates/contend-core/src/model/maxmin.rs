//! maxmin: flow-level max-min fair sharing over any graph of directed links.
//!
//! Every machine link is dual simplex (two directed resources of `bandwidth` × efficiency),
//! except memory links: DRAM bandwidth is shared by reads and writes, so a memory link is one
//! resource, and a staged copy, which writes and then reads it, counts twice there.
//! A transfer issued at t moves no bytes until t + L (engine setup, staging hand-off and the
//! hop latencies of its path, see `flow::router`); its bytes then share bandwidth max-min fairly
//! with everything else in flight, and it finishes when the last byte is through.
//! docs/models.md (maxmin) states the rules and the defaults.

pub mod engine;
mod fill;
mod groups;
mod queue;
mod solve;

use super::registry::{Param, Prepared};
use super::{fraction, on_off, param_error, unknown_param, EventModel, RateModel};
use crate::error::Result;
use crate::flow::{FlowRules, FlowTable};
use crate::topology::{Link, LinkKind, Machine};
use crate::units::{Bytes, Time};
use crate::workload::Workload;
use engine::Engine;
use fill::Filler;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaxminParams {
    pub eff_pcie: f64,
    pub eff_nvlink: f64,
    pub eff_qpi: f64,
    pub eff_upi: f64,
    pub eff_network: f64,
    pub eff_memory: f64,
    /// Bytes of the first pipeline chunk a staged copy writes before it can read anything back.
    pub staging_chunk: f64,
    /// CUDA peer access; off stages every GPU-to-GPU copy through host memory.
    pub p2p: bool,
    /// Seconds; transfers start moving bytes only at multiples of it (0: exactly when due).
    pub quantum: f64,
}

impl Default for MaxminParams {
    fn default() -> Self {
        MaxminParams {
            // SC16's fitted B = 11.6 GiB/s over the Gen3 x16 nominal 15.754 GB/s.
            eff_pcie: 0.79,
            // 18.4 GB/s of a 20 GB/s P100 link, one way (seed 004 bounds it at 94%).
            eff_nvlink: 0.92,
            eff_qpi: 1.0,
            eff_upi: 1.0,
            eff_network: 1.0,
            eff_memory: 1.0,
            staging_chunk: 262144.0,
            p2p: true,
            quantum: 0.0,
        }
    }
}

pub const PARAMS: &[Param] = &[
    Param { name: "eff_pcie", default: "0.79", help: "fraction of a PCIe link's bandwidth a copy sustains; a link's own efficiency wins" },
    Param { name: "eff_nvlink", default: "0.92", help: "same for NVLink" },
    Param { name: "eff_qpi", default: "1", help: "same for QPI" },
    Param { name: "eff_upi", default: "1", help: "same for UPI" },
    Param { name: "eff_network", default: "1", help: "same for network links" },
    Param { name: "eff_memory", default: "1", help: "same for host memory (reads and writes share it)" },
    Param { name: "staging_chunk", default: "256KiB", help: "pipeline chunk of a staged copy; 0B turns the pipeline fill off" },
    Param { name: "p2p", default: "on", help: "CUDA peer access: on, or off (every GPU-to-GPU copy is staged through host memory)" },
    Param {
        name: "quantum",
        default: "0s",
        help: "start moving bytes only at multiples of this time (e.g. 100ns): joins batch, busy networks simulate faster, each transfer starts up to one quantum late",
    },
];

impl MaxminParams {
    pub fn parse(pairs: &[(String, String)]) -> Result<MaxminParams> {
        let mut p = MaxminParams::default();
        for (k, v) in pairs {
            let v = v.trim();
            let eff = || fraction(k, v);
            match k.as_str() {
                "eff_pcie" => p.eff_pcie = eff()?,
                "eff_nvlink" => p.eff_nvlink = eff()?,
                "eff_qpi" => p.eff_qpi = eff()?,
                "eff_upi" => p.eff_upi = eff()?,
                "eff_network" => p.eff_network = eff()?,
                "eff_memory" => p.eff_memory = eff()?,
                "staging_chunk" => p.staging_chunk = Bytes::parse(v).map_err(|e| param_error(k, e))?.as_f64(),
                "p2p" => p.p2p = on_off(k, v)?,
                "quantum" => p.quantum = Time::parse(v).map_err(|e| param_error(k, e))?.secs(),
                _ => return Err(unknown_param("maxmin", k, PARAMS)),
            }
        }
        Ok(p)
    }

    pub fn to_map(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for (k, v) in [
            ("eff_pcie", self.eff_pcie),
            ("eff_nvlink", self.eff_nvlink),
            ("eff_qpi", self.eff_qpi),
            ("eff_upi", self.eff_upi),
            ("eff_network", self.eff_network),
            ("eff_memory", self.eff_memory),
        ] {
            m.insert(k.into(), format!("{v}"));
        }
        m.insert("staging_chunk".into(), format!("{}", Bytes(self.staging_chunk as u64)));
        m.insert("p2p".into(), if self.p2p { "on" } else { "off" }.into());
        m.insert("quantum".into(), format!("{}", Time::from_secs(self.quantum)));
        m
    }

    pub fn efficiency(&self, kind: LinkKind) -> f64 {
        match kind {
            LinkKind::Pcie => self.eff_pcie,
            LinkKind::Nvlink => self.eff_nvlink,
            LinkKind::Qpi => self.eff_qpi,
            LinkKind::Upi => self.eff_upi,
            LinkKind::Network => self.eff_network,
            LinkKind::Memory => self.eff_memory,
        }
    }
}

/// maxmin made ready for one workload: its flow table and parameters.
pub struct MaxminPrepared {
    pub flows: FlowTable,
    pub params: MaxminParams,
}

pub fn prepare(m: &Machine, w: &Workload, pairs: &[(String, String)]) -> Result<Box<dyn Prepared>> {
    Ok(Box::new(MaxminPrepared::new(m, w, MaxminParams::parse(pairs)?)?))
}

impl MaxminPrepared {
    pub fn new(m: &Machine, w: &Workload, params: MaxminParams) -> Result<MaxminPrepared> {
        let capacity = |l: &Link| l.bandwidth * l.efficiency.unwrap_or_else(|| params.efficiency(l.kind));
        let mut flows = FlowTable::compile(
            m,
            w,
            &FlowRules { capacity: &capacity, p2p: params.p2p, staging_chunk: params.staging_chunk, prepay_latency: true, caps: true },
        )?;
        flows.join_quantum = params.quantum;
        Ok(MaxminPrepared { flows, params })
    }
}

impl Prepared for MaxminPrepared {
    fn flows(&self) -> &FlowTable {
        &self.flows
    }
    fn params(&self) -> BTreeMap<String, String> {
        self.params.to_map()
    }
    fn rate_model(&self) -> Option<Box<dyn RateModel + '_>> {
        Some(Box::new(MaxminRates { flows: &self.flows, filler: Filler::new(self.flows.cap.len()), items: Vec::new() }))
    }
    fn event_model(&self) -> Box<dyn EventModel + '_> {
        Box::new(Engine::new(&self.flows))
    }
}

/// maxmin as rates of an active set: one progressive filling per call, per route.
pub struct MaxminRates<'f> {
    flows: &'f FlowTable,
    filler: Filler,
    items: Vec<u32>,
}

impl RateModel for MaxminRates<'_> {
    fn rates(&mut self, active: &[usize], out: &mut [f64]) {
        self.items.clear();
        self.items.extend(active.iter().map(|&i| self.flows.route_of[i]));
        self.filler.fill(&self.flows.routes, &self.items, |_| 1.0, &self.flows.cap, out);
    }
}

#[cfg(test)]
mod tests;
