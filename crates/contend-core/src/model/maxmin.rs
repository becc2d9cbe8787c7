//! maxmin: flow-level max-min fair sharing over any graph of directed links.
//!
//! Every machine link is dual simplex (two directed resources of `bandwidth` × efficiency),
//! except memory links: DRAM bandwidth is shared by reads and writes, so a memory link is one
//! resource, and a staged copy, which writes and then reads it, counts twice there.
//! A transfer issued at t moves no bytes until t + L (engine setup, staging hand-off and the
//! hop latencies of its path, see `mechanism`); its bytes then share bandwidth max-min fairly
//! with everything else in flight, and it finishes when the last byte is through.
//! docs/models.md (maxmin) states the rules and the defaults.

mod engine;
mod fill;
mod groups;
mod queue;
mod solve;

use super::mechanism::{Hop, Plan, Router};
use super::{on_off, param_error, unknown_param, RateModel};
use crate::error::{Error, Result};
use crate::sim::Outcome;
use crate::topology::{LinkKind, Machine};
use crate::units::Bytes;
use crate::workload::Workload;
use fill::{Filler, Routes};
use std::collections::{BTreeMap, HashMap};

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
        }
    }
}

pub const PARAM_HELP: &[(&str, &str)] = &[
    ("eff_pcie", "fraction of a PCIe link's bandwidth a copy sustains (default 0.79); a link's own efficiency wins"),
    ("eff_nvlink", "same for NVLink (default 0.92)"),
    ("eff_qpi", "same for QPI (default 1)"),
    ("eff_upi", "same for UPI (default 1)"),
    ("eff_network", "same for network links (default 1)"),
    ("eff_memory", "same for host memory (default 1; reads and writes share it)"),
    ("staging_chunk", "pipeline chunk of a staged copy, e.g. 256KiB (default); 0B turns the pipeline fill off"),
    ("p2p", "CUDA peer access: on (default) or off (every GPU-to-GPU copy is staged through host memory)"),
];

impl MaxminParams {
    pub fn parse(pairs: &[(String, String)]) -> Result<MaxminParams> {
        let mut p = MaxminParams::default();
        for (k, v) in pairs {
            let v = v.trim();
            let eff = || {
                v.parse::<f64>()
                    .ok()
                    .filter(|e| *e > 0.0 && *e <= 1.0)
                    .ok_or_else(|| param_error(k, format!("\"{v}\" is not a number in (0, 1]; e.g. {k}=0.8")))
            };
            match k.as_str() {
                "eff_pcie" => p.eff_pcie = eff()?,
                "eff_nvlink" => p.eff_nvlink = eff()?,
                "eff_qpi" => p.eff_qpi = eff()?,
                "eff_upi" => p.eff_upi = eff()?,
                "eff_network" => p.eff_network = eff()?,
                "eff_memory" => p.eff_memory = eff()?,
                "staging_chunk" => p.staging_chunk = Bytes::parse(v).map_err(|e| param_error(k, e))?.as_f64(),
                "p2p" => p.p2p = on_off(k, v)?,
                _ => return Err(unknown_param("maxmin", k, PARAM_HELP)),
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

/// Resources, routes and fixed costs of one workload on one machine: what both engines share.
pub struct Compiled {
    /// Capacity of each resource, bytes/s.
    pub cap: Vec<f64>,
    pub name: Vec<String>,
    /// Each transfer's resources in path order, repeats kept (a staged copy meets memory twice).
    pub path: Vec<Vec<u32>>,
    /// Distinct routes, each resource once with its multiplicity: what the filling works on.
    /// Transfers with one route always share one rate, so the engine fills per route.
    pub routes: Routes,
    /// Route of each transfer, an index into `routes`.
    pub route_of: Vec<u32>,
    pub plans: Vec<Plan>,
    /// Bytes each transfer pushes through its bottleneck: its size, plus one pipeline chunk if staged.
    pub volume: Vec<f64>,
}

/// Resource of each directed link: 2i for a -> b, 2i + 1 for b -> a; a memory link's two
/// directions share one resource.
fn resources(m: &Machine, p: &MaxminParams) -> (Vec<u32>, Vec<f64>, Vec<String>) {
    let mut dir = Vec::with_capacity(2 * m.links.len());
    let (mut cap, mut name) = (Vec::new(), Vec::new());
    for l in &m.links {
        let c = l.bandwidth * l.efficiency.unwrap_or_else(|| p.efficiency(l.kind));
        let (a, b) = (&m.devices[l.a].name, &m.devices[l.b].name);
        if l.kind == LinkKind::Memory {
            dir.extend([cap.len() as u32; 2]);
            cap.push(c);
            name.push(format!("{a}↔{b}"));
        } else {
            dir.extend([cap.len() as u32, cap.len() as u32 + 1]);
            cap.extend([c, c]);
            name.extend([format!("{a}→{b}"), format!("{b}→{a}")]);
        }
    }
    (dir, cap, name)
}

/// Resources and routes of `w`; a transfer's `mechanism` and `via` override CUDA's choice.
pub fn compile(m: &Machine, w: &Workload, p: &MaxminParams) -> Result<Compiled> {
    let (dir, cap, name) = resources(m, p);
    let router = Router::new(m);
    // Plans depend on the endpoints alone unless a transfer asks for more: plan each pair once.
    let mut plans: HashMap<(usize, usize), Plan> = HashMap::new();
    let mut c = Compiled {
        cap,
        name,
        path: Vec::new(),
        routes: Routes { off: vec![0], hops: Vec::new() },
        route_of: Vec::new(),
        plans: Vec::new(),
        volume: Vec::new(),
    };
    // Keyed by the route itself; only looked up, never iterated, so numbering stays deterministic.
    let mut known: HashMap<Vec<(u32, u32)>, u32> = HashMap::new();
    for (i, t) in w.transfers.iter().enumerate() {
        let fail = |e: String| Error::input(&w.origin, format!("transfers[{i}]"), e);
        let chosen_by_cuda = t.mechanism.is_none() && t.via.is_empty();
        let plan = match plans.get(&(t.src, t.dst)) {
            Some(plan) if chosen_by_cuda => plan.clone(),
            _ => {
                let plan = router.plan(t.src, t.dst, t.mechanism, &t.via, p.p2p).map_err(fail)?;
                if chosen_by_cuda {
                    plans.insert((t.src, t.dst), plan.clone());
                }
                plan
            }
        };
        let path: Vec<u32> = plan.hops.iter().map(|&Hop { link, forward }| dir[2 * link + usize::from(!forward)]).collect();
        let mut uniq: Vec<(u32, u32)> = Vec::with_capacity(path.len());
        for &r in &path {
            match uniq.iter_mut().find(|(x, _)| *x == r) {
                Some(e) => e.1 += 1,
                None => uniq.push((r, 1)),
            }
        }
        let next = known.len() as u32;
        let route = *known.entry(uniq.clone()).or_insert(next);
        if route == next {
            c.routes.hops.extend(uniq.iter().map(|&(l, k)| (l, k as f64)));
            c.routes.off.push(c.routes.hops.len() as u32);
        }
        c.route_of.push(route);
        let fill = if plan.staging.is_some() { (t.size as f64).min(p.staging_chunk) } else { 0.0 };
        c.volume.push(t.size as f64 + fill);
        c.path.push(path);
        c.plans.push(plan);
    }
    if let Some(l) = c.cap.iter().position(|&x| !(x > 0.0 && x.is_finite())) {
        return Err(Error::input(&m.origin, "links", format!("{} has no usable capacity; give it a positive bandwidth", c.name[l])));
    }
    Ok(c)
}

/// maxmin as a rate model of the generic phase engine: rates only, so latencies and the
/// staging pipeline fill are not seen there; `run` is the complete engine.
pub struct MaxminModel {
    pub compiled: Compiled,
    pub params: MaxminParams,
    filler: Filler,
    flows: Vec<u32>,
}

impl MaxminModel {
    pub fn new(m: &Machine, w: &Workload, params: MaxminParams) -> Result<MaxminModel> {
        let compiled = compile(m, w, &params)?;
        let filler = Filler::new(compiled.cap.len());
        Ok(MaxminModel { compiled, params, filler, flows: Vec::new() })
    }

    /// The complete engine on this model's routes, latencies and staging included; its
    /// transfers' routes and the links they index are this model's `route` and `links`.
    pub fn simulate(&self, w: &Workload, record_phases: bool) -> Result<Outcome> {
        engine::simulate(w, &self.compiled, record_phases)
    }
}

impl RateModel for MaxminModel {
    fn rates(&mut self, active: &[usize], out: &mut [f64]) {
        self.flows.clear();
        self.flows.extend(active.iter().map(|&i| self.compiled.route_of[i]));
        self.filler.fill(&self.compiled.routes, &self.flows, |_| 1.0, &self.compiled.cap, out);
    }

    fn route(&self, transfer: usize) -> &[u32] {
        &self.compiled.path[transfer]
    }

    fn links(&self) -> Vec<(String, f64)> {
        self.compiled.name.iter().cloned().zip(self.compiled.cap.iter().copied()).collect()
    }

    fn params(&self) -> BTreeMap<String, String> {
        self.params.to_map()
    }
}

/// Every transfer's issue and finish time under maxmin, latencies and staging included.
pub fn run(m: &Machine, w: &Workload, params: &MaxminParams, record_phases: bool) -> Result<Outcome> {
    engine::simulate(w, &compile(m, w, params)?, record_phases)
}

#[cfg(test)]
mod tests;
