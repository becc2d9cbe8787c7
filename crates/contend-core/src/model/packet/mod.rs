//! packet: a discrete-event simulation of packets over the directed links of any machine.
//!
//! A transfer whose setup is over (engine and software costs only: hop latencies are met hop by
//! hop here) is cut into packets of `packet` bytes, the last one partial. Packets enter at the
//! transfer's injecting NIC in the order the machine's NIC scheduling defines (seed 003 §III-B:
//! FCFS packetises the head message fully before the next, RR takes one packet of each queued
//! message in turn, RR-N round-robins over the first N); transfers that enter no network inject
//! from their source, round-robin among the transfers of that source on the same first link.
//!
//! Every directed resource is an output port that serialises one packet at a time (bytes over
//! capacity, capacity = bandwidth × efficiency, the link's own else its kind's as maxmin reads it:
//! link_rate.rs); the packet then travels
//! the link's latency, and a network switch needs `router_delay` to forward it. Store and
//! forward: a packet moves on once it has fully arrived. Flow control is credit based: a port
//! sends only if the next device's input buffer for that port and virtual channel has a free
//! slot (`buffer` packets), freed when the packet starts leaving that device; the destination
//! consumes packets at once. The virtual channel is the number of hops a packet has made, so
//! buffer dependencies only ever point to a higher channel: no route can deadlock, whichever
//! hops per-packet routing chooses (routing.rs: spray and adaptive hop by hop, Valiant, UGAL-L
//! and PAR per packet; channels enough for the longest dragonfly path, local-global-local-global-local). A port serves its
//! inputs (each buffer it drains, i.e. link into the device and channel, and each injection
//! lane) round-robin, skipping those whose head may not go, FIFO within an input. A buffer's
//! slots are shared by all traffic of its link and channel, so packets held back downstream can
//! fill it and hold back other traffic over that link: congestion spreads upstream.
//! A host memory is one port for reads and writes, so a staged copy crosses it twice.
//!
//! A transfer with a `max_rate` is paced at its source: its next packet is cut no earlier than
//! its last one's cut plus that packet's bytes at the rate (a sender that makes data no faster),
//! and the lane serves the other transfers meanwhile. The transfers of a rate group are paced
//! as one: the group's next packet, whichever member's, waits for the group's last cut; a lane's
//! packet waiting at its port goes only while one of its messages may cut (a member in another
//! lane may have cut since it was placed).
//!
//! Time inside the model is integer picoseconds, events ordered by (time, sequence): the same
//! input gives the same output. Seconds appear only at the `EventModel` boundary. The clock's
//! range (2^63 ps, about 106 days) is checked per workload before the run (`clock`).

mod clock;
mod engine;
mod routing;

pub use engine::PacketEngine;

use super::link_rate::{self, LinkRates};
use super::Prepared;
use super::{EventModel, RateModel};
use crate::error::{Error, Result};
use crate::flow::{FlowRules, FlowTable, NO_NIC};
use crate::params::{param_error, Kind, Param, Values};
use crate::topology::{DeviceKind, Link, LinkKind, Machine};
use crate::units::{Bytes, Time};
use crate::workload::Workload;
use std::collections::{BTreeMap, HashMap};

/// The parameters in force, machine defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacketParams {
    /// Bytes per packet.
    pub packet: u64,
    /// Packets per input port and virtual channel.
    pub buffer: u32,
    /// Picoseconds a network switch needs to forward a packet after it has arrived.
    pub router_delay: u64,
    /// Each link kind's efficiency where a link writes none: maxmin's (link_rate.rs).
    pub rates: LinkRates,
}

pub const PARAMS: &[Param] = &link_rate::with_rates::<3, { link_rate::LEN + 3 }>(OWN);

/// packet's own parameters; `PARAMS` puts the link rates' before them.
const OWN: [Param; 3] = [
    // The machine's network settings stand where these are not given (topology's defaults).
    Param::derived("packet", Kind::Bytes { min: 1 }, "the machine's network.packet, else 4096B", "packet size"),
    Param::derived(
        "buffer",
        Kind::Count { min: 1, max: MAX_BUFFER as u64 },
        "the machine's network.buffer_packets, else 8",
        "input buffer per port and virtual channel, in packets (a node's links hold at least their credit round trip)",
    ),
    Param::new("router_delay", Kind::Time, "0s", "time a network switch needs to forward a packet's head, per switch hop, on top of a cluster file's own router_delay (which both models pay in its hop latencies)"),
];

impl PacketParams {
    /// The machine's network settings, else the defaults.
    pub fn defaults(m: &Machine) -> PacketParams {
        PacketParams { packet: m.network.packet_bytes(), buffer: m.network.buffer(), router_delay: 0, rates: LinkRates::default() }
    }

    /// Given values, else the machine's network settings, else the table's defaults.
    pub fn parse(m: &Machine, pairs: &[(String, String)]) -> Result<PacketParams> {
        let v = Values::flags("packet", PARAMS, pairs)?;
        if m.network.buffer_packets == Some(0) && !v.given("buffer") {
            return Err(Error::input(&m.origin, "network.buffer_packets", "is 0; a buffer holds at least one packet"));
        }
        match m.network.packet {
            Some(Bytes(0)) if !v.given("packet") => {
                return Err(Error::input(&m.origin, "network.packet", "is 0B; a packet holds at least one byte, e.g. 4096B"));
            }
            // The engine counts a packet's bytes in 32 bits; the file's value is named here, not
            // as `--param packet` (which the user did not give).
            Some(Bytes(b)) if b > u32::MAX as u64 && !v.given("packet") => {
                return Err(Error::input(&m.origin, "network.packet", format!("is {b} bytes, 4GiB or more; give a packet below 4GiB, e.g. 4096B")));
            }
            _ => {}
        }
        let machine = PacketParams::defaults(m);
        Ok(PacketParams {
            packet: if v.given("packet") { v.bytes("packet") } else { machine.packet },
            buffer: if v.given("buffer") { v.count("buffer") as u32 } else { machine.buffer },
            router_delay: v.ps("router_delay"),
            rates: LinkRates::read(&v),
        })
    }

    pub fn to_map(&self) -> BTreeMap<String, String> {
        let mut m = self.rates.to_map();
        m.insert("packet".into(), format!("{}", Bytes(self.packet)));
        m.insert("buffer".into(), format!("{}", self.buffer));
        m.insert("router_delay".into(), if self.router_delay == 0 { "0s".into() } else { format!("{}", Time(self.router_delay)) });
        m
    }
}

/// The most packets one port's buffer may hold (a buffer that never fills is no buffer).
pub const MAX_BUFFER: u32 = 1 << 20;

/// The most packets one simulation may cut (about an hour of one core at 5 M packet-hops/s).
pub const MAX_PACKETS: u64 = 2_000_000_000;

/// The most packet-hops (each packet times the links of its message's path) one simulation may
/// take: about a minute of one core at the 6.3-8.7 M packet-hops/s measured (docs/benchmarks.md,
/// "Packet level"). 100 MB in 1 B packets over a fat-tree (10^8 packets, 8 links) ran for minutes
/// with no word; past this the run is refused before it starts, naming the packet size.
pub const MAX_PACKET_HOPS: u64 = 500_000_000;

/// The most hops a path may have (a packet keeps its hop, its virtual channel, in 16 bits).
pub const MAX_HOPS: usize = u16::MAX as usize;

/// Everything the engine reads, compiled once per workload (shared by every engine instance).
pub(crate) struct Net {
    /// Hops of flow f: `hop_off[f]..hop_off[f + 1]` into `hop_res` and `hop_delay`.
    pub hop_off: Vec<u32>,
    pub hop_res: Vec<u32>,
    /// Picoseconds from a packet's tail leaving the port of this hop until it is ready at the
    /// next port: the link latency, plus `router_delay` where it lands on a switch that forwards it.
    pub hop_delay: Vec<u64>,
    /// Per resource: picoseconds per byte.
    pub ps_per_byte: Vec<f64>,
    /// Per resource: packets the buffer at its far end holds, per virtual channel (`credit_floor`).
    pub buffer: Vec<u32>,
    /// Virtual channels: the longest path's hops.
    pub nvc: usize,
    /// Per flow: its packets and the bytes of its last one.
    pub packets: Vec<u64>,
    pub last_bytes: Vec<u32>,
    /// Per hop: the queue it waits in at its port, one per input (the buffer of the hop
    /// before, or the injection lane) and port; per queue: its port and channel.
    pub hop_queue: Vec<u32>,
    pub queue_port: Vec<u32>,
    pub queue_vc: Vec<u16>,
    /// Per flow: its injection lane (one injector and one first resource).
    pub lane_of: Vec<u32>,
    /// Per lane: its injector; per injector: messages that may packetise at once.
    pub lane_injector: Vec<u32>,
    /// Per lane: its port (its messages' first resource).
    pub lane_port: Vec<u32>,
    pub window: Vec<u32>,
    /// Per-packet routing, where the machine's policy routes packets (routing.rs).
    pub dynr: Option<routing::Dyn>,
    /// Per flow: picoseconds per byte of its `max_rate` (0: none), and its pacer: the flow whose
    /// clock of cuts it keeps (its rate group's first member, else itself). A pacer's next
    /// packet is cut no earlier than its last one's cut plus that packet's bytes at this pace,
    /// whichever of its flows cuts it.
    pub pace: Vec<f64>,
    pub pacer: Vec<u32>,
}

/// Who cuts a message's packets: its source (no NIC), its NIC under the NIC's scheduling window,
/// or its NIC for NCCL's messages, which no window holds back.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Injector {
    Source,
    Nic,
    NcclAtNic,
}

/// packet made ready for one workload: its flow table, parameters and compiled paths.
pub struct PacketPrepared {
    pub flows: FlowTable,
    pub params: PacketParams,
    pub(crate) net: Net,
}

pub fn prepare(m: &Machine, w: &Workload, pairs: &[(String, String)]) -> Result<Box<dyn Prepared>> {
    Ok(Box::new(PacketPrepared::new(m, w, PacketParams::parse(m, pairs)?)?))
}

fn ps(secs: f64) -> u64 {
    Time::from_secs(secs).0
}

/// The buffer at the far end of each resource, in packets: `buffer` on the network's links (the
/// cluster's design, which seed 003's studies sweep as stated) and host memories' ports, and on a
/// node's other links at least what keeps the link busy (`credit_floor`). Nobody states a node link's buffer, and its
/// link-level flow control is built to run the link at its rate: a single copy over NVLink or
/// PCIe reaches the link's figure (docs/validation.md), which a too-small credit pool would cap.
fn buffers(m: &Machine, flows: &FlowTable, ps_per_byte: &[f64], params: &PacketParams) -> Vec<u32> {
    let mut buffer = vec![params.buffer; flows.cap.len()];
    let dir = crate::flow::directed_resources(m);
    for (i, l) in m.links.iter().enumerate() {
        // Host memory is no link with flow control of its own: its one port keeps the stated buffer.
        if matches!(l.kind, LinkKind::Network | LinkKind::Memory) {
            continue;
        }
        for (r, far) in [(dir[2 * i], l.b), (dir[2 * i + 1], l.a)] {
            let r = r as usize;
            // The hop's delay as the engine charges it: a packet landing on a network switch
            // waits `router_delay` more before it can leave that buffer (`hop_delay`).
            let delay = ps(flows.latency[r]) + if m.devices[far].kind == DeviceKind::Switch { params.router_delay } else { 0 };
            buffer[r] = buffer[r].max(credit_floor(params.packet as f64 * ps_per_byte[r], delay as f64));
        }
    }
    buffer
}

/// The fewest packets a buffer must hold for its link to send back to back: a credit is taken when
/// a packet starts on the link and given back when the packet leaves the buffer at the far end,
/// one serialisation and the hop's latency later (engine.rs `try_start`), so a link sending a
/// packet every `ser_ps` holds 1 + latency / ser credits at once (the credit round trip of Dally
/// and Towles, "Principles and Practices of Interconnection Networks", section 13.3, with this
/// engine's instant credit return).
pub fn credit_floor(ser_ps: f64, latency_ps: f64) -> u32 {
    if ser_ps <= 0.0 {
        return 1;
    }
    (1.0 + latency_ps / ser_ps).ceil().min(MAX_BUFFER as f64) as u32
}

impl PacketPrepared {
    pub fn new(m: &Machine, w: &Workload, params: PacketParams) -> Result<PacketPrepared> {
        if params.packet > u32::MAX as u64 {
            return Err(param_error("packet", "is 4GiB or more; use a smaller packet"));
        }
        let capacity = |l: &Link| params.rates.capacity(l);
        // Packets pipeline through a staging buffer by themselves: no chunk to fill first.
        let flows = FlowTable::compile(
            m,
            w,
            &FlowRules {
                capacity: &capacity,
                p2p: true,
                staging_chunk: 0.0,
                prepay_latency: false,
                charges: crate::flow::charges::NONE,
                model: "packet",
                device_capacity: false,
                rails: false,
                caps: false,
                rate_caps: true,
                // Packets choose their own way: the flow table's spread would go unused.
                fluid: false,
                clos: false,
            },
        )?;
        let n = flows.len();
        let mut net = Net {
            hop_off: Vec::with_capacity(n + 1),
            hop_res: Vec::new(),
            hop_delay: Vec::new(),
            ps_per_byte: flows.cap.iter().map(|&c| 1e12 / c).collect(),
            buffer: Vec::new(),
            nvc: 1,
            hop_queue: Vec::new(),
            queue_port: Vec::new(),
            queue_vc: Vec::new(),
            packets: Vec::with_capacity(n),
            last_bytes: Vec::with_capacity(n),
            lane_of: Vec::with_capacity(n),
            lane_injector: Vec::new(),
            lane_port: Vec::new(),
            window: Vec::new(),
            dynr: routing::Dyn::build(m, w, &flows),
            // The slower of its max_rate and the bundle member it is held to (flow/bundle.rs).
            pace: w
                .transfers
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let member = flows.member_rate.get(i).copied().unwrap_or(0.0);
                    let r = t.max_rate.unwrap_or(f64::INFINITY).min(if member > 0.0 { member } else { f64::INFINITY });
                    if r.is_finite() {
                        1e12 / r
                    } else {
                        0.0
                    }
                })
                .collect(),
            pacer: w.transfers.iter().enumerate().map(|(i, t)| t.rate_group.unwrap_or(i) as u32).collect(),
        };
        net.buffer = buffers(m, &flows, &net.ps_per_byte, &params);
        net.hop_off.push(0);
        let mut total_packets = 0u64;
        let mut packet_hops = 0u64;
        // Numbered in flow order; the maps are only looked up, so numbering is deterministic.
        let mut injectors: HashMap<(Injector, usize), u32> = HashMap::new();
        let mut lanes: HashMap<(u32, u32, bool), u32> = HashMap::new();
        // (input, port, channel): input is the resource of the hop before, or the lane.
        let mut queues: HashMap<(u64, u32, usize), u32> = HashMap::new();
        for f in 0..n {
            let (path, plan) = (flows.path(f), flows.plan(f));
            if path.len() > MAX_HOPS {
                return Err(Error::Unsupported {
                    model: "packet".into(),
                    reason: format!(
                        "transfer {} crosses {} links; the packet model handles paths of at most {MAX_HOPS}; use --model maxmin",
                        w.transfers[f].label(f),
                        path.len()
                    ),
                });
            }
            // NCCL's messages through a NIC inject beside its other messages, not behind its window:
            // NCCL's proxy posts every connection's steps at once (net.cc `sendProxyProgress`), as
            // the flow-level executor runs them (sim.rs `OpState::nccl`). Only a NIC with a window
            // (fcfs, rr-N) gives them a lane of their own; under rr they share the NIC's lane as before.
            let windowed = flows.nic_scheduling.slots().is_some();
            let key = match flows.nic[f] {
                NO_NIC => (Injector::Source, w.transfers[f].src),
                q if w.transfers[f].kernel && windowed => (Injector::NcclAtNic, q as usize),
                q => (Injector::Nic, q as usize),
            };
            let next = net.window.len() as u32;
            let inj = *injectors.entry(key).or_insert_with(|| {
                net.window.push(if key.0 == Injector::Nic { flows.nic_scheduling.slots().unwrap_or(u32::MAX) } else { u32::MAX });
                next
            });
            let first = path.first().copied().unwrap_or(u32::MAX);
            let next = net.lane_injector.len() as u32;
            // A lane's messages share their first hop and whether it needs a credit (it does not
            // where the hop ends at the destination), so the port can take the lane's next packet
            // before it is cut from the message in turn (engine.rs `bind`).
            let lane = *lanes.entry((inj, first, path.len() > 1)).or_insert_with(|| {
                net.lane_injector.push(inj);
                net.lane_port.push(first);
                next
            });
            net.lane_of.push(lane);
            net.nvc = net.nvc.max(net.dynr.as_ref().map_or(path.len(), |d| d.max_hops(f, path.len())));
            // A NIC that takes turns among several messages (rr, rr-N with N ≥ 2) does so at its own
            // link (the message's first network hop): that port takes each message as an input of
            // its own, so its round robin is over messages, whichever GPU's link brought them (seed
            // 003 §III-B: the NIC schedules messages); the links before it fill the NIC's buffer
            // ahead of it, up to their credits. FCFS (one message at a time) keeps one FIFO per link
            // into the NIC, so a message's packets buffered there leave before the next message's.
            let nic_hop = match flows.nic[f] {
                _ if flows.nic_scheduling.slots() == Some(1) => None,
                NO_NIC => None,
                _ => plan.hops.iter().position(|h| m.links[h.link].kind == LinkKind::Network).filter(|&k| k > 0),
            };
            for (k, (&r, h)) in path.iter().zip(&plan.hops).enumerate() {
                let l = &m.links[h.link];
                let to = if h.forward { l.b } else { l.a };
                let forwards = k + 1 < path.len() && m.devices[to].kind == DeviceKind::Switch;
                net.hop_res.push(r);
                net.hop_delay.push(ps(flows.latency[r as usize]) + if forwards { params.router_delay } else { 0 });
                let input = match k {
                    0 => (1 << 32) | lane as u64,
                    _ if nic_hop == Some(k) => (2 << 32) | f as u64,
                    _ => path[k - 1] as u64,
                };
                let next = net.queue_port.len() as u32;
                let q = *queues.entry((input, r, k)).or_insert_with(|| {
                    net.queue_port.push(r);
                    net.queue_vc.push(k as u16);
                    next
                });
                net.hop_queue.push(q);
            }
            net.hop_off.push(net.hop_res.len() as u32);
            let volume = flows.volume[f].round() as u64;
            let count = volume.div_ceil(params.packet);
            net.packets.push(count);
            total_packets += count;
            packet_hops = packet_hops.saturating_add(count.saturating_mul(path.len() as u64));
            if packet_hops > MAX_PACKET_HOPS {
                return Err(Error::Unsupported {
                    model: "packet".into(),
                    reason: format!(
                        "these transfers make over {} M packet-hops (packets of {} times the links each crosses), over the {} M (about a minute of one core) packet simulates; use a larger --param packet=…, fewer bytes, or --model maxmin",
                        packet_hops / 1_000_000,
                        Bytes(params.packet),
                        MAX_PACKET_HOPS / 1_000_000
                    ),
                });
            }
            if total_packets > MAX_PACKETS {
                return Err(Error::Unsupported {
                    model: "packet".into(),
                    reason: format!(
                        "these transfers make over {MAX_PACKETS} packets of {}; use a larger --param packet=…, fewer bytes, or --model maxmin",
                        Bytes(params.packet)
                    ),
                });
            }
            net.last_bytes.push(if count == 0 { 0 } else { (volume - (count - 1) * params.packet) as u32 });
        }
        clock::check(&net, &flows, w)?;
        Ok(PacketPrepared { flows, params, net })
    }

    /// A fresh engine (the concrete type, for callers that want its counters).
    pub fn engine(&self) -> PacketEngine<'_> {
        PacketEngine::new(&self.net, &self.flows, self.params)
    }
}

impl Prepared for PacketPrepared {
    fn flows(&self) -> &FlowTable {
        &self.flows
    }
    fn params(&self) -> BTreeMap<String, String> {
        self.params.to_map()
    }
    fn rate_model(&self) -> Option<Box<dyn RateModel + '_>> {
        None
    }
    fn event_model(&self) -> Box<dyn EventModel + '_> {
        Box::new(self.engine())
    }
    fn queues_at_nics(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod nic_turn_tests;
#[cfg(test)]
mod pace_tests;
#[cfg(test)]
mod rate_group_tests;
#[cfg(test)]
mod small_message_tests;
#[cfg(test)]
mod tests;
