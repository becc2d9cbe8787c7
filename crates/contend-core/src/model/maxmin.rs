//! maxmin: flow-level max-min fair sharing over any graph of directed links.
//!
//! Every machine link is dual simplex (two directed resources of `bandwidth` × efficiency),
//! except memory links: DRAM bandwidth is shared by reads and writes, so a memory link is one
//! resource, and a staged copy, which writes and then reads it, counts twice there.
//! A transfer issued at t moves no bytes until t + L (engine setup, staging hand-off and the
//! hop latencies of its path, see `flow::router`); its bytes then share bandwidth max-min fairly
//! with everything else in flight, and it finishes when the last byte is through.
//! docs/models.md (maxmin) states the rules and the defaults.

mod duplex;
pub mod engine;
mod fanout;
mod fill;
mod groups;
mod solve;
mod spans;

use super::link_rate::{self, LinkRates};
use super::Prepared;
use super::{EventModel, RateModel};
use crate::error::Result;
use crate::flow::charges::{Charges, ReadCost};
use crate::flow::{FlowRules, FlowTable};
use crate::params::{
    param_error, Kind, NicRelease, Param, Values, CLOS_ROUTING, FLUID_ROUTING, HEAD_PRIORITY, NIC_RELEASE, PORT_QUEUEING, RELEASE_FREES_NIC, STORE_FORWARD,
};
use crate::topology::{Link, LinkKind, Machine};
use crate::units::{Bytes, Time};
use crate::workload::Workload;
use engine::Engine;
use fanout::Fanout;
use fill::Filler;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MaxminParams {
    /// Each link kind's efficiency where a link writes none (link_rate.rs).
    pub rates: LinkRates,
    /// Bytes of the first pipeline chunk a staged copy writes before it can read anything back.
    pub staging_chunk: f64,
    /// CUDA peer access; off stages every GPU-to-GPU copy through host memory.
    pub p2p: bool,
    /// Seconds; transfers start moving bytes only at multiples of it (0: exactly when due).
    pub quantum: f64,
    /// Duplex loss: capacity one direction of a link loses per byte moving the other way.
    pub duplex_pcie: f64,
    /// Duplex loss of a staged copy's GPU links where its host memory sets no `staging_duplex`.
    pub duplex_staged: f64,
    pub duplex_nvlink: f64,
    pub duplex_nvlink2: f64,
    pub duplex_nvlink4: f64,
    pub duplex_nvlink5: f64,
    /// QPI, UPI and xGMI.
    pub duplex_socket: f64,
    /// Read efficiency: a pulled copy's data crosses a link at 1/read_* of its size.
    pub read_pcie: f64,
    pub read_nvlink: f64,
    pub read_socket: f64,
    /// Bytes of read requests per byte read, charged to the opposite direction.
    pub read_request: f64,
    /// The same for a kernel's loads of host memory (an SM asks for 64 bytes at a time); unset,
    /// `read_request`'s.
    pub kernel_read_request: f64,
    /// Share of a host memory's bandwidth that writes into it reach where it sets none.
    pub write_memory: f64,
    pub read_fanout: f64,
    /// When a FCFS or RR-N NIC takes its next message (params.rs).
    pub nic_release: NicRelease,
    /// An early-released head's bytes left leave its NIC's link (params.rs; off by default).
    pub release_frees_nic: bool,
    /// A released head keeps priority over its NIC's next message on the links they share (params.rs; off by default).
    pub head_priority: bool,
    /// A message through a NIC pays each device's store-and-forward of one packet (params.rs; off by default).
    pub store_forward: bool,
    /// Per-packet routing policies as their fluid limit (params.rs; off by default).
    pub fluid_routing: bool,
    /// Adaptive's one path per pair chosen for all pairs at once on a fat-tree's planes (params.rs).
    pub clos_routing: bool,
    /// Scale of the queueing excursion at a message's busiest switch port (params.rs; 0: off).
    pub port_queueing: f64,
}

impl Default for MaxminParams {
    /// The table's defaults (docs/models.md, "Parameters": basis and spread of each).
    fn default() -> Self {
        MaxminParams::read(&Values::defaults(PARAMS))
    }
}

/// The kinds of maxmin's terms: an efficiency a link reaches, a duplex loss or read overhead.
const EFF: Kind = Kind::EFFICIENCY;
const LOSS: Kind = Kind::LOSS;

/// How many of its own parameters maxmin has.
const OWN_LEN: usize = 24;

pub const PARAMS: &[Param] = &link_rate::with_rates::<OWN_LEN, { link_rate::LEN + OWN_LEN }>(OWN);

/// maxmin's own parameters; `PARAMS` puts the link rates' (link_rate.rs) before them.
const OWN: [Param; OWN_LEN] = [
    Param::new("staging_chunk", Kind::Bytes { min: 0 }, "256KiB", "pipeline chunk of a staged copy; 0B turns the pipeline fill off"),
    Param::new("p2p", Kind::OnOff, "on", "CUDA peer access: on, or off (every GPU-to-GPU copy is staged through host memory)"),
    Param::new(
        "quantum",
        Kind::Time,
        "0s",
        "start moving bytes only at multiples of this time (e.g. 100ns): joins batch, busy networks simulate faster, each transfer starts up to one quantum late",
    ),
    // Gen4 pairs: 26.3 GB/s one way, 48.4-50.4 GB/s both ways (docs/models.md).
    Param::new("duplex_pcie", LOSS, "0.06", "PCIe capacity one direction loses per byte moving the other way (bidirectional < 2 x unidirectional)"),
    Param::new(
        "duplex_staged",
        LOSS,
        "0.66",
        "duplex loss of a host-staged copy's GPU links where the host memory sets no staging_duplex [EMPIRICAL: median of four public hosts, 0.35-0.87; duplex_pcie's 0.06 gives the link's own]",
    ),
    // A100 NVLink pair: 275.1 GB/s one way, 516.2 GB/s both ways (fixture).
    Param::new("duplex_nvlink", LOSS, "0.065", "same for NVLink of generation 1, 3 or none known; given alone, every generation's"),
    // V100 NVLink 2 pairs: 48.34 GB/s one way, 96.21-96.43 both ways (v100x4-th2k).
    Param::new("duplex_nvlink2", LOSS, "0.003", "same for NVLink 2 (Volta) [one public 4 x V100 host: 0.002-0.005]"),
    // Hopper NVLink 4: one way over both ways' half, HGX H100 0.014, HGX H800 0.010, 2 x H100 PCIe 0.009.
    Param::new("duplex_nvlink4", LOSS, "0.010", "same for NVLink 4 (Hopper) [three public Hopper machines: 0.009-0.014, median]"),
    Param::new("duplex_nvlink5", LOSS, "0.010", "same for NVLink 5 (Blackwell) [ASSUMPTION: NVLink 4's; no public NVLink 5 copy both ways]"),
    Param::new("duplex_socket", LOSS, "0", "same for QPI, UPI and xGMI"),
    Param::new("read_pcie", EFF, "1", "read efficiency of PCIe: a pulled copy's data costs 1/read_pcie of its size"),
    Param::new("read_nvlink", EFF, "1", "same for NVLink"),
    Param::new("read_socket", EFF, "1", "same for QPI, UPI and xGMI"),
    // One 24-byte read request per 512-byte read (PCIe max read request size).
    Param::new("read_request", LOSS, "0.047", "bytes of read requests per byte read, charged to the opposite direction"),
    // A kernel's loads of host memory: one H100 (Gen5 x16) storing to and loading from pinned host memory at once
    // loses 0.31-0.37 of a byte read, nine runs (bench/device/host_duplex.cu, h100c-host-duplex.csv; its copy
    // engines 0.06-0.12): a 24-byte request per 64-byte load. Unset it is read_request's: at 0.375 the scored PCIe
    // boxes without peer access (2 x RTX 2080 Ti, 8 x RTX 4090; docs/models.md, "Access") go from 6.1% to 8.1% mean
    // |error| over their 71 rows, so the H100's figure is not made the default (two candidates compared in-sample:
    // a choice, not a fit; no machine of the H100's kind has a table).
    Param::derived(
        "kernel_read_request",
        LOSS,
        "read_request's",
        "same for a kernel's loads of host memory (NCCL's receive through host memory) [one H100 storing and loading at once: 0.31-0.37, a 64-byte request's share]",
    ),
    // A written byte costs a DRAM controller 1/0.81 of a read one: Intel MLC's peak-injection read/write
    // mixes on two public Xeon hosts (Cascade Lake, Sapphire Rapids) give 0.79-0.83, median 0.81
    // (docs/models.md, "Writes into host memory"). Not from any machine validation.py scores.
    Param::new(
        "write_memory",
        EFF,
        "0.81",
        "write efficiency of host memory where a host_memory device sets no write_efficiency: a byte written into it (a GPU's copy to the host, a staged copy's first half) takes 1/write_memory of its bandwidth, a byte read 1 [Intel MLC read/write mixes on two Xeon hosts, 0.79-0.83; contend calibrate fits it per machine from all-GPU host writes: 0.584 on h800x8]",
    ),
    // nvbandwidth all_to_one_read_ce over one pair's read (device_to_device_memcpy_read_ce): OCI's GB200 and
    // GB300 quick-start pages, 2634.65 / 4 against 9216.17 / 12 and 2636.80 / 4 against 9222.82 / 12 GB/s.
    Param::new(
        "read_fanout",
        EFF,
        "0.858",
        "share of its outgoing links' capacity a GPU keeps while two or more GPUs' copy engines read from it at once (one reader: all) [OCI's public GB200 and GB300 nvbandwidth runs: 0.858 and 0.858]",
    ),
    // What credit-based flow control does (params.rs; docs/models.md, "NIC release").
    NIC_RELEASE,
    RELEASE_FREES_NIC,
    HEAD_PRIORITY,
    STORE_FORWARD,
    FLUID_ROUTING,
    CLOS_ROUTING,
    PORT_QUEUEING,
];

impl MaxminParams {
    pub fn parse(pairs: &[(String, String)]) -> Result<MaxminParams> {
        let p = MaxminParams::read(&Values::flags("maxmin", PARAMS, pairs)?);
        if p.release_frees_nic && p.nic_release == NicRelease::Delivered {
            return Err(param_error(RELEASE_FREES_NIC.name, "is on, but nic_release=delivered releases no head early; use nic_release=shared or buffered"));
        }
        if p.head_priority && p.nic_release == NicRelease::Delivered {
            return Err(param_error(HEAD_PRIORITY.name, "is on, but nic_release=delivered releases no head early; use nic_release=shared or buffered"));
        }
        Ok(p)
    }

    fn read(v: &Values) -> MaxminParams {
        let mut p = MaxminParams {
            rates: LinkRates::read(v),
            staging_chunk: v.bytes("staging_chunk") as f64,
            p2p: v.on("p2p"),
            quantum: v.secs("quantum"),
            duplex_pcie: v.real("duplex_pcie"),
            duplex_staged: v.real("duplex_staged"),
            duplex_nvlink: v.real("duplex_nvlink"),
            duplex_nvlink2: v.real("duplex_nvlink2"),
            duplex_nvlink4: v.real("duplex_nvlink4"),
            duplex_nvlink5: v.real("duplex_nvlink5"),
            duplex_socket: v.real("duplex_socket"),
            read_pcie: v.real("read_pcie"),
            read_nvlink: v.real("read_nvlink"),
            read_socket: v.real("read_socket"),
            read_request: v.real("read_request"),
            kernel_read_request: v.real_opt("kernel_read_request").unwrap_or(v.real("read_request")),
            write_memory: v.real("write_memory"),
            read_fanout: v.real("read_fanout"),
            nic_release: NicRelease::read(v),
            release_frees_nic: v.on(RELEASE_FREES_NIC.name),
            head_priority: v.on(HEAD_PRIORITY.name),
            store_forward: v.on(STORE_FORWARD.name),
            fluid_routing: v.on(FLUID_ROUTING.name),
            clos_routing: v.on(CLOS_ROUTING.name),
            port_queueing: v.real(PORT_QUEUEING.name),
        };
        // duplex_nvlink given alone sets every generation's, as it did before they had their
        // own (the efficiencies do the same in link_rate.rs).
        for (name, field) in [("duplex_nvlink2", &mut p.duplex_nvlink2), ("duplex_nvlink4", &mut p.duplex_nvlink4), ("duplex_nvlink5", &mut p.duplex_nvlink5)] {
            if v.given("duplex_nvlink") && !v.given(name) {
                *field = p.duplex_nvlink;
            }
        }
        p
    }

    pub fn to_map(&self) -> BTreeMap<String, String> {
        let mut m = self.rates.to_map();
        for (k, v) in [
            ("duplex_pcie", self.duplex_pcie),
            ("duplex_staged", self.duplex_staged),
            ("duplex_nvlink", self.duplex_nvlink),
            ("duplex_nvlink2", self.duplex_nvlink2),
            ("duplex_nvlink4", self.duplex_nvlink4),
            ("duplex_nvlink5", self.duplex_nvlink5),
            ("duplex_socket", self.duplex_socket),
            ("read_pcie", self.read_pcie),
            ("read_nvlink", self.read_nvlink),
            ("read_socket", self.read_socket),
            ("read_request", self.read_request),
            ("kernel_read_request", self.kernel_read_request),
            ("write_memory", self.write_memory),
            ("read_fanout", self.read_fanout),
            ("port_queueing", self.port_queueing),
        ] {
            m.insert(k.into(), format!("{v}"));
        }
        m.insert("staging_chunk".into(), format!("{}", Bytes(self.staging_chunk as u64)));
        m.insert("nic_release".into(), self.nic_release.name().into());
        m.insert("release_frees_nic".into(), if self.release_frees_nic { "on" } else { "off" }.into());
        m.insert("head_priority".into(), if self.head_priority { "on" } else { "off" }.into());
        m.insert("store_forward".into(), if self.store_forward { "on" } else { "off" }.into());
        m.insert("fluid_routing".into(), if self.fluid_routing { "on" } else { "off" }.into());
        m.insert("clos_routing".into(), if self.clos_routing { "on" } else { "off" }.into());
        m.insert("p2p".into(), if self.p2p { "on" } else { "off" }.into());
        m.insert("quantum".into(), format!("{}", Time::from_secs(self.quantum)));
        m
    }

    /// A link's bytes per second each way: its bandwidth times its efficiency.
    pub fn capacity(&self, l: &Link) -> f64 {
        self.rates.capacity(l)
    }

    /// A link's efficiency: its own if written, else its kind's (and generation's).
    pub fn link_efficiency(&self, l: &Link) -> f64 {
        self.rates.link_efficiency(l)
    }

    /// A link's duplex loss: its own if written, else its kind's (and an NVLink's generation's).
    pub fn link_duplex(&self, l: &Link) -> f64 {
        l.duplex.unwrap_or_else(|| match (l.kind, l.gen) {
            (LinkKind::Nvlink, Some(2)) => self.duplex_nvlink2,
            (LinkKind::Nvlink, Some(4)) => self.duplex_nvlink4,
            (LinkKind::Nvlink, Some(5)) => self.duplex_nvlink5,
            (k, _) => self.duplex(k),
        })
    }

    pub fn efficiency(&self, kind: LinkKind) -> f64 {
        self.rates.efficiency(kind)
    }

    /// Duplex loss of a link kind (none for network and memory links).
    pub fn duplex(&self, kind: LinkKind) -> f64 {
        match kind {
            LinkKind::Pcie => self.duplex_pcie,
            LinkKind::Nvlink => self.duplex_nvlink,
            LinkKind::Qpi | LinkKind::Upi | LinkKind::Xgmi => self.duplex_socket,
            LinkKind::Fabric | LinkKind::Network | LinkKind::Memory => 0.0,
        }
    }

    /// What a read costs a link of this kind.
    pub fn read_cost(&self, kind: LinkKind) -> ReadCost {
        let eff = match kind {
            LinkKind::Pcie => self.read_pcie,
            LinkKind::Nvlink => self.read_nvlink,
            LinkKind::Qpi | LinkKind::Upi | LinkKind::Xgmi => self.read_socket,
            LinkKind::Fabric | LinkKind::Network | LinkKind::Memory => 1.0,
        };
        ReadCost { data: 1.0 / eff, request: self.read_request }
    }
}

/// maxmin made ready for one workload: its flow table and parameters.
pub struct MaxminPrepared {
    pub flows: FlowTable,
    pub params: MaxminParams,
    /// The served GPUs' loss to several readers (`read_fanout`).
    fanout: Fanout,
    /// Each transfer's setup without store and forward (kept to redo it for new capacities:
    /// base plus the new delay gives the same bits as a fresh preparation, which adding the
    /// difference to the old sum would not).
    unforwarded: Vec<f64>,
}

pub fn prepare(m: &Machine, w: &Workload, pairs: &[(String, String)]) -> Result<Box<dyn Prepared>> {
    Ok(Box::new(MaxminPrepared::new(m, w, MaxminParams::parse(pairs)?)?))
}

impl MaxminPrepared {
    pub fn new(m: &Machine, w: &Workload, params: MaxminParams) -> Result<MaxminPrepared> {
        let capacity = |l: &Link| params.capacity(l);
        let duplex = |l: &Link| params.link_duplex(l);
        let read = |l: &Link| match l.read_efficiency {
            Some(e) => ReadCost { data: 1.0 / e, request: params.read_request },
            None => params.read_cost(l.kind),
        };
        let rules = FlowRules {
            capacity: &capacity,
            p2p: params.p2p,
            staging_chunk: params.staging_chunk,
            prepay_latency: true,
            charges: Charges {
                duplex: &duplex,
                read: Some(&read),
                staging_duplex: Some(params.duplex_staged),
                directed: true,
                memory_write: Some(params.write_memory),
                kernel_read_request: params.kernel_read_request,
            },
            model: "maxmin",
            device_capacity: true,
            rails: true,
            caps: true,
            rate_caps: true,
            fluid: params.fluid_routing,
            clos: params.clos_routing,
        };
        let mut flows = FlowTable::compile(m, w, &rules)?;
        flows.join_quantum = params.quantum;
        if params.nic_release != NicRelease::Delivered {
            flows.buffer_nic_releases(m);
            flows.nic_buffer_shared = params.nic_release == NicRelease::Shared;
            // Both rules reason about the NIC's one injection link; a NIC that schedules its ports
            // per message (flow/rails.rs) has a resource per rail, which neither rule accounts for.
            let refinement = [(params.release_frees_nic, RELEASE_FREES_NIC.name), (params.head_priority, HEAD_PRIORITY.name)];
            if let (Some((_, name)), Some(nic)) = (refinement.iter().find(|(on, _)| *on), m.devices.iter().find(|d| d.stripe_threshold.is_some())) {
                return Err(param_error(name, format!("is not modelled on a NIC that schedules its ports per message ({} has stripe_threshold); turn it off, or drop the NIC's stripe_threshold", nic.name)));
            }
            if params.release_frees_nic {
                flows.tail_routes(m);
            }
            if params.head_priority {
                flows.order_releases(m);
            }
        }
        if params.port_queueing > 0.0 {
            flows.queue_at_ports(m, params.port_queueing);
        }
        let fanout = Fanout::new(m, w, &flows, params.read_fanout);
        let mut prepared = MaxminPrepared { flows, params, fanout, unforwarded: Vec::new() };
        prepared.forward(m);
        Ok(prepared)
    }

    /// Put the store-and-forward delays of the capacities now into the setups, in place of
    /// those there (hop latencies are paid there already; this is the packets' part).
    fn forward(&mut self, m: &Machine) {
        if !self.params.store_forward {
            return;
        }
        if self.unforwarded.is_empty() {
            self.unforwarded = self.flows.setup.clone();
        }
        for (f, x) in self.flows.store_and_forward(m).into_iter().enumerate() {
            self.flows.setup[f] = self.unforwarded[f] + x;
        }
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
        Some(Box::new(MaxminRates { flows: &self.flows, fanout: &self.fanout, filler: Filler::new(self.flows.cap.len()), items: Vec::new() }))
    }
    fn event_model(&self) -> Box<dyn EventModel + '_> {
        Box::new(Engine::new(&self.flows, &self.fanout))
    }
    fn take_capacities(&mut self, m: &Machine) -> Result<bool> {
        let params = &self.params;
        let taken = self.flows.take_capacities(m, &|l: &Link| params.capacity(l))?;
        if taken {
            self.forward(m);
        }
        Ok(taken)
    }
}

/// maxmin as rates of an active set: one progressive filling per call, per route.
pub struct MaxminRates<'f> {
    flows: &'f FlowTable,
    fanout: &'f Fanout,
    filler: Filler,
    items: Vec<u32>,
}

impl RateModel for MaxminRates<'_> {
    fn rates(&mut self, active: &[usize], out: &mut [f64]) {
        self.items.clear();
        self.items.extend(active.iter().map(|&i| self.flows.route_of[i]));
        let (routes, pairs) = (&self.flows.routes, &self.flows.duplex_pairs);
        // A GPU read by several devices among these keeps its share (maxmin::fanout).
        let fanned = self.fanout.capacities(active, &self.flows.cap);
        let base = fanned.as_deref().unwrap_or(&self.flows.cap);
        self.filler.fill(routes, &self.items, |_| 1.0, base, out);
        if pairs.is_empty() {
            return;
        }
        // Capacities less each direction's duplex loss to the load the other way, refilled
        // until they stop moving (maxmin::duplex).
        let mut cap = base.to_vec();
        let mut load = vec![0.0; cap.len()];
        for _ in 0..duplex::ROUNDS {
            load.iter_mut().for_each(|x| *x = 0.0);
            for (&r, &x) in self.items.iter().zip(out.iter()) {
                for &(l, a) in routes.of(r as usize) {
                    load[l as usize] += a * x;
                }
            }
            let mut moved = false;
            duplex::update(pairs, base, &load, &mut cap, |_, _| moved = true);
            if !moved {
                return;
            }
            self.filler.fill(routes, &self.items, |_| 1.0, &cap, out);
        }
    }
}

#[cfg(test)]
mod capacity_tests;
#[cfg(test)]
mod charges_tests;
#[cfg(test)]
mod cluster_fill_tests;
#[cfg(test)]
mod fanout_tests;
#[cfg(test)]
mod queueing_tests;
#[cfg(test)]
mod tests;
