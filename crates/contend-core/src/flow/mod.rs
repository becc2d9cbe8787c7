//! The flow table: every transfer compiled once into what all models, the executor, the
//! schedule search, p2p and calibration read — the resources it crosses (directed links with
//! capacities), the fixed setup delay before its first byte, and the volume it pushes.
//!
//! A route and a mechanism are decided here and nowhere else (by `router`, as CUDA would).

mod branch;
mod bundle;
pub mod charges;
pub mod methods;
pub mod network;
mod queueing;
mod rails;
mod release;
pub mod router;
mod tail;

pub use queueing::PortQueueing;
pub use release::NO_HOP;
pub use tail::NO_TAIL;

use crate::error::{Error, Result};
use crate::keymap::{IntMap, KeyHasher, KeyMap};
use crate::topology::{DeviceKind, Link, LinkKind, Machine, NicScheduling};
use crate::workload::{Access, Mechanism, Workload};
use network::NetworkRouter;
use router::{Hop, Plan, Router};
use std::hash::Hasher;

/// Routes in compressed rows: route r uses `hops[off[r]..off[r+1]]`, (resource, times) each:
/// the capacity a byte of the transfer uses there. `data[k]` is the part of `hops[k]` that is
/// the transfer's own bytes (the rest is duplex loss and read requests).
pub struct Routes {
    pub off: Vec<u32>,
    pub hops: Vec<(u32, f64)>,
    pub data: Vec<f64>,
}

/// The name of a transfer's `max_rate` resource: the device whose transfer it caps, and the transfer.
pub fn rate_cap_name(device: &str, label: &str) -> String {
    format!("{device} rate cap ({label})")
}

/// The device a rate cap's name (`rate_cap_name`) holds; None for a link or any other resource.
pub fn rate_cap_device(name: &str) -> Option<&str> {
    name.split_once(" rate cap (").map(|(d, _)| d)
}

impl Routes {
    pub fn of(&self, r: usize) -> &[(u32, f64)] {
        &self.hops[self.off[r] as usize..self.off[r + 1] as usize]
    }

    /// Bytes of data per byte of the transfer on each resource of route r, in `of(r)`'s order.
    pub fn data_of(&self, r: usize) -> &[f64] {
        &self.data[self.off[r] as usize..self.off[r + 1] as usize]
    }

    pub fn len(&self) -> usize {
        self.off.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a model decides about compiling flows: how much of a link's bandwidth a copy gets,
/// whether CUDA peer access is on, and the pipeline chunk of a staged copy.
pub struct FlowRules<'a> {
    /// Capacity in bytes/s of one direction of a link.
    pub capacity: &'a dyn Fn(&Link) -> f64,
    pub p2p: bool,
    /// Bytes of the first chunk a staged copy writes before it can read anything back.
    pub staging_chunk: f64,
    /// Pay the path's hop latencies up front, in the setup delay (flow-level models); a
    /// packet-level model leaves them out, since its packets meet them hop by hop.
    pub prepay_latency: bool,
    /// The model honours a resource of one flow's own (zero-copy's load-store cap).
    pub caps: bool,
    /// The model honours a transfer's `max_rate` (maxmin: a resource of the transfer's own in
    /// its route; packet: its source paces its packets); a model that cannot refuses it.
    pub rate_caps: bool,
    /// Duplex loss and read costs (`charges::NONE` where the model has none).
    pub charges: charges::Charges<'a>,
    /// The model's name, for a refusal of what its charges cannot express.
    pub model: &'a str,
    /// Whether the model shares a device's `capacity` (and a link's peer bandwidth) among the
    /// copies through it; a model that cannot refuses workloads that meet one.
    pub device_capacity: bool,
    /// Route per-packet policies as their fluid limit (network/fluid.rs), not one path per message.
    pub fluid: bool,
    /// Choose adaptive's one path per pair for all pairs at once on a fat-tree's planes
    /// (network/planes.rs), not pair by pair.
    pub clos: bool,
    /// The model honours a NIC's ports scheduled per message (`Device::stripe_threshold`;
    /// maxmin: a resource per port, rails.rs); a model that cannot refuses messages crossing one.
    pub rails: bool,
}

/// Flows of no NIC queue (they do not enter a network through a NIC).
pub const NO_NIC: u32 = u32::MAX;

/// Transfers that wait for no copy engine (see `FlowTable::engine`).
pub const NO_ENGINE: u32 = u32::MAX;

/// A NIC that injects flows into the network.
#[derive(Clone, Debug)]
pub struct Nic {
    pub device: usize,
    pub name: String,
}

pub struct FlowTable {
    /// Capacity of each resource, bytes/s.
    pub cap: Vec<f64>,
    pub name: Vec<String>,
    /// Distinct paths: resources in path order, repeats kept (a staged copy meets memory
    /// twice); `path_of[i]` is transfer i's (see `path`). Most transfers share theirs.
    pub paths: Vec<Vec<u32>>,
    pub path_of: Vec<u32>,
    /// Distinct routes, each resource once with its multiplicity. Transfers with one route
    /// always share one rate under a fair model, so solvers work per route.
    pub routes: Routes,
    /// Route of each transfer, an index into `routes`.
    pub route_of: Vec<u32>,
    /// Distinct plans; `plan_of[i]` is transfer i's (see `plan`).
    pub plans: Vec<Plan>,
    pub plan_of: Vec<u32>,
    /// Seconds from issue to the first byte: the path's latency plus the transfer's overhead.
    pub setup: Vec<f64>,
    /// The part of `setup` spent before a message reaches its NIC's queue (its software
    /// overhead); the rest (hop latencies) is paid after the NIC takes it.
    pub overhead: Vec<f64>,
    /// Bytes each transfer pushes through its bottleneck: its size, plus one pipeline chunk if staged.
    pub volume: Vec<f64>,
    /// Seconds from the last byte until the transfer is done (a datatype's unpack kernel).
    pub teardown: Vec<f64>,
    /// Each transfer sent by a datatype method, in order: its index, and what was asked, chosen,
    /// and each method's estimate. (A list of those few, not a column of every transfer: an
    /// NCCL call of a million transfers has none, and a column of them was 40 MB of pages.)
    pub decisions: Vec<(u32, methods::Decision)>,
    /// One-way latency of each resource's link, seconds.
    pub latency: Vec<f64>,
    /// Per transfer: the NIC it enters the network through (an index into `nics`), or NO_NIC.
    pub nic: Vec<u32>,
    pub nics: Vec<Nic>,
    /// How every NIC packetises its queued messages.
    pub nic_scheduling: NicScheduling,
    /// Per transfer (empty: none): bytes the input buffers along its path hold; a FCFS or RR-N
    /// NIC takes its next message once its head's bytes still to deliver fit in them
    /// (`nic_release`, release.rs). Empty: the NIC waits until its head is delivered.
    pub nic_buffer: Vec<f64>,
    /// Whether each device's buffer is shared by the messages crossing its input port now
    /// (`nic_release = shared`, release.rs): a message counts on its share only.
    pub nic_buffer_shared: bool,
    /// Per transfer (empty: no NIC moves several heads at once): the resource of the injection
    /// link it leaves its NIC by (its first network hop), which an RR-N NIC splits among the heads
    /// leaving by it, or NO_HOP (release.rs, `split_injection`).
    pub nic_injection: Vec<u32>,
    /// Per transfer (empty: none): the route it moves on once its NIC released it early, its
    /// route from the first switch on (`release_frees_nic`, tail.rs), or NO_TAIL.
    pub tail_route: Vec<u32>,
    /// Per transfer (empty: `head_priority` off): where its NIC's injection link sits in its
    /// path, or NO_HOP; its early release counts only the buffers past the links its path
    /// shares with its NIC's next message from there (release.rs).
    pub nic_hop: Vec<u32>,
    /// Per transfer (empty: `head_priority` off): the index in its path of the link entering
    /// the first switch where its packets may part under the per-packet routing policy, or
    /// NO_HOP (branch.rs); the FIFO order behind its NIC's head ends there.
    pub branch_hop: Vec<u32>,
    /// The queueing excursion at switch ports (maxmin `port_queueing`, queueing.rs); None: off.
    pub queueing: Option<PortQueueing>,
    /// Per transfer: the copy engine that moves it, or NO_ENGINE. A GPU's copies to or from
    /// host memory queue, per direction, at one engine that moves `engine_slots` of them at
    /// once, in issue order (CUDA's copy engines; docs/models.md). Peer, staged and
    /// network copies do not queue.
    pub engine: Vec<u32>,
    /// Copies each engine moves at once (its GPU's `copy_engines`).
    pub engine_slots: Vec<u32>,
    /// Seconds: transfers start moving bytes at multiples of it (0: exactly when due). A model
    /// may set it to batch joins on busy networks.
    pub join_quantum: f64,
    /// Links whose duplex loss is per direction, where the model honours it (maxmin): their
    /// directions' capacities shrink with the data moving the other way.
    pub duplex_pairs: Vec<charges::DuplexPair>,
    /// Per transfer: whether it is a GPU's posted write into its node's host memory, complete
    /// when its data has left the engine (`completion_wait`); a packet-level model ends it there.
    pub posted: Vec<bool>,
    /// Per transfer (empty: none): bytes/s of the one member of a network bundle it is held to
    /// under a per-flow routing policy, or 0 (bundle.rs); maxmin meets it as a resource in the
    /// route, packet paces the source at it.
    pub member_rate: Vec<f64>,
}

/// Resource of each directed link: 2i for a -> b, 2i + 1 for b -> a; a memory link's two
/// directions share one resource (DRAM bandwidth serves reads and writes alike).
struct Resources {
    dir: Vec<u32>,
    /// Resource of each device's capacity, or u32::MAX.
    device: Vec<u32>,
    /// Resource of each directed link's peer bandwidth (`Link::peer`), numbered as `dir`, or u32::MAX.
    peer: Vec<u32>,
    cap: Vec<f64>,
    name: Vec<String>,
    latency: Vec<f64>,
}

fn resources(m: &Machine, capacity: &dyn Fn(&Link) -> f64) -> Resources {
    let mut r =
        Resources { dir: Vec::with_capacity(2 * m.links.len()), device: Vec::new(), peer: Vec::new(), cap: Vec::new(), name: Vec::new(), latency: Vec::new() };
    for l in &m.links {
        let c = capacity(l);
        let (a, b) = (&m.devices[l.a].name, &m.devices[l.b].name);
        if l.kind == LinkKind::Memory {
            r.dir.extend([r.cap.len() as u32; 2]);
            r.cap.push(c);
            r.name.push(format!("{a}↔{b}"));
            r.latency.push(l.latency);
        } else {
            r.dir.extend([r.cap.len() as u32, r.cap.len() as u32 + 1]);
            r.cap.extend([c, c]);
            r.name.extend([format!("{a}→{b}"), format!("{b}→{a}")]);
            r.latency.extend([l.latency, l.latency]);
        }
    }
    for d in &m.devices {
        r.device.push(match d.capacity {
            Some(c) => {
                r.cap.push(c);
                r.name.push(d.name.clone());
                r.latency.push(0.0);
                r.cap.len() as u32 - 1
            }
            None => u32::MAX,
        });
    }
    // A socket or fabric link's peer bandwidth: one more resource per direction that has one,
    // which only peer copies crossing the link use (the root complexes' peer forwarding).
    for l in &m.links {
        for (k, cap) in l.peer.iter().enumerate() {
            r.peer.push(match cap {
                Some(c) => {
                    let (from, to) = if k == 0 { (l.a, l.b) } else { (l.b, l.a) };
                    r.cap.push(*c);
                    r.name.push(format!("{}→{} peer", m.devices[from].name, m.devices[to].name));
                    r.latency.push(0.0);
                    r.cap.len() as u32 - 1
                }
                None => u32::MAX,
            });
        }
    }
    r
}

/// The resource of each directed link, numbered as every flow table numbers them: `[2i]` for
/// link i's a -> b, `[2i + 1]` for b -> a (one resource for both where it is a memory link).
pub fn directed_resources(m: &Machine) -> Vec<u32> {
    resources(m, &|_| 1.0).dir
}

/// The devices a plan visits, in order, with repeats (a staged copy meets its root complex
/// and host memory twice): the source, then the far end of every hop.
pub fn visits<'a>(m: &'a Machine, src: usize, plan: &'a Plan) -> impl Iterator<Item = usize> + 'a {
    std::iter::once(src).chain(plan.hops.iter().map(move |h| {
        let l = &m.links[h.link];
        if h.forward {
            l.b
        } else {
            l.a
        }
    }))
}

/// What of its path a copy's completion waits for, seconds (docs/models.md, "What a copy's
/// completion waits for"); the copy pays it after its setup depth (its plan's costs at its
/// devices: engine, hand-off, switches). A GPU's write into host memory is posted: its engine's
/// copy is complete when the writes leave it (PCIe orders the engine's completion signal behind
/// them), so it waits for none of its path. Any other write waits for its path one way, as the hop
/// latencies say. A read is request + data: its requests cross each link of the path, its data
/// crosses it back, and where the requests reach host memory the root complex turns them into a
/// memory read and its completions (the root complex's `latency`); a memory link is one resource
/// with no direction, whose latency (the DRAM access) a read pays once, with its data.
pub fn completion_wait(m: &Machine, hops: &[Hop], access: Access, posted_to_host: bool) -> f64 {
    match access {
        Access::Read => hops
            .iter()
            .map(|h| {
                let l = &m.links[h.link];
                if l.kind != LinkKind::Memory {
                    return 2.0 * l.latency;
                }
                // The root complex at the memory link's other end turns the read around.
                l.latency + [l.a, l.b].into_iter().filter(|&d| m.devices[d].kind == DeviceKind::RootComplex).map(|d| m.devices[d].latency).sum::<f64>()
            })
            .sum(),
        Access::Write if posted_to_host => 0.0,
        Access::Write => hops.iter().map(|h| m.links[h.link].latency).sum(),
    }
}

/// `visits` with the share of the copy that visits each device: a striped copy meets each
/// NVSwitch plane with that plane's share.
fn weighted_visits(m: &Machine, src: usize, plan: &Plan) -> Vec<(usize, f64)> {
    if plan.stripes.is_empty() {
        return visits(m, src, plan).map(|d| (d, 1.0)).collect();
    }
    let far = |h: &Hop| h.to(m);
    let mut out: Vec<(usize, f64)> = vec![(src, 1.0)];
    for (h, x) in &plan.stripes {
        match out.iter_mut().find(|(d, _)| *d == far(h)) {
            Some(e) => e.1 += x,
            None => out.push((far(h), *x)),
        }
    }
    out
}

/// The network part (first to last network hop) of a plan, with the devices it joins.
/// A plan's network part: first and last network hop, and the devices they leave and reach.
type NetworkPart = (usize, usize, usize, usize);

fn network_part(m: &Machine, src: usize, plan: &Plan) -> Option<NetworkPart> {
    let is_net = |h: &Hop| m.links[h.link].kind == LinkKind::Network;
    let (first, last) = (plan.hops.iter().position(is_net)?, plan.hops.iter().rposition(is_net)?);
    let mut at = src;
    let (mut from, mut to) = (src, src);
    for (k, h) in plan.hops.iter().enumerate() {
        let l = &m.links[h.link];
        let next = if h.forward { l.b } else { l.a };
        if k == first {
            from = at;
        }
        if k == last {
            to = next;
        }
        at = next;
    }
    Some((first, last, from, to))
}

/// Passes over all messages after the first that re-route each one with the others' loads in
/// place (adaptive policies): a greedy first pass in transfer order leaves avoidable collisions.
const REFINE_PASSES: usize = 3;

/// When each unit (a pair's first message) would start if every NIC sent its messages one after
/// another at its link's rate from their `start` (FCFS, alone on the network): which pairs run
/// at the same time, for the colourings of network/planes.rs (pairs at once take different
/// links, pairs far apart in time may share one). Messages that wait for others count from 0.
fn nic_start_estimates(m: &Machine, w: &Workload, plans: &[Plan], plan_of: &[u32], parts: &[Option<NetworkPart>], unit_of: &[usize], units: usize) -> Vec<f64> {
    let mut order: Vec<usize> = (0..w.transfers.len()).filter(|&i| unit_of[i] != usize::MAX).collect();
    order.sort_by(|&a, &b| w.transfers[a].start.total_cmp(&w.transfers[b].start).then(a.cmp(&b)));
    let mut free: IntMap<usize, f64> = IntMap::default();
    let mut when = vec![f64::INFINITY; units];
    for i in order {
        let Some((first, _, from, _)) = parts[i] else { continue };
        let rate = m.links[plans[plan_of[i] as usize].hops[first].link].bandwidth.max(f64::MIN_POSITIVE);
        let at = free.entry(from).or_insert(0.0);
        let begin = at.max(w.transfers[i].start);
        *at = begin + w.transfers[i].size as f64 / rate;
        when[unit_of[i]] = when[unit_of[i]].min(begin);
    }
    when
}

/// Each link a sprayed message may cross, with the share of the message that crosses it.
type Shares = Vec<(Hop, f64)>;

/// Per (source, destination, whether a kernel's leg through host memory): the `via`s planned
/// so far and each one's plan (`FlowTable::compile`).
type ViaPlans = IntMap<(usize, usize, bool), Vec<(Vec<usize>, u32)>>;

/// Choose every plan's network part by the network's routing policy, message by message:
/// transfer i's plan `plan_of[i]` becomes its base plan with the chosen network part (plans
/// with equal base and route shared). Where packets are sprayed, also each message's share of
/// every link it may cross (its node parts whole, its network part split evenly over the
/// shortest paths).
fn reroute(m: &Machine, net: &mut NetworkRouter, w: &Workload, plans: &mut Vec<Plan>, plan_of: &mut [u32]) -> Result<(Vec<Shares>, Vec<u32>)> {
    // A plan's network part depends on the plan alone (its source is the pair's): once per plan.
    let mut part_of_plan: Vec<Option<Option<NetworkPart>>> = vec![None; plans.len()];
    let mut parts: Vec<Option<NetworkPart>> = Vec::with_capacity(plan_of.len());
    for (t, &b) in w.transfers.iter().zip(plan_of.iter()) {
        let part = *part_of_plan[b as usize].get_or_insert_with(|| network_part(m, t.src, &plans[b as usize]));
        parts.push(part);
    }
    // What is routed: every message, or under adaptive routing every pair of NICs once, carrying
    // its messages' weight (the first message of a pair stands for it).
    let mut units: Vec<(usize, usize, usize, u32)> = Vec::new(); // (message, from, to, weight)
    let mut unit_of: Vec<usize> = vec![usize::MAX; plan_of.len()];
    let mut pair_unit: IntMap<(usize, usize), usize> = IntMap::default();
    for (i, part) in parts.iter().enumerate() {
        let Some((_, _, from, to)) = *part else { continue };
        let u = if net.routes_per_pair() {
            *pair_unit.entry((from, to)).or_insert_with(|| {
                units.push((i, from, to, 0));
                units.len() - 1
            })
        } else {
            units.push((i, from, to, 0));
            units.len() - 1
        };
        units[u].3 += 1;
        unit_of[i] = u;
    }
    let no_path = |i: usize, from: usize, to: usize| {
        Error::input(&w.origin, format!("transfers[{i}]"), format!("there is no network path from {} to {}", m.devices[from].name, m.devices[to].name))
    };
    let mut routes: Vec<Vec<Hop>> = vec![Vec::new(); units.len()];
    // Per-packet policies other than spray: each unit's fluid spread (network/fluid.rs), found
    // by an even first pass and refined with the others' loads in place.
    let fluid = net.fluid() && !net.sprays();
    let mut spreads: Vec<network::Spread> = vec![Vec::new(); if fluid { units.len() } else { 0 }];
    if fluid {
        for pass in 0..1 + REFINE_PASSES {
            let mut moved = false;
            for (u, &(i, from, to, weight)) in units.iter().enumerate() {
                if pass > 0 {
                    net.charge_spread(&spreads[u], -(weight as f64));
                }
                let (spread, route) = net.fluid_route(i as u64, from, to, weight, pass > 0).ok_or_else(|| no_path(i, from, to))?;
                moved |= pass == 0 || spread != spreads[u];
                spreads[u] = spread;
                routes[u] = route;
            }
            if !moved {
                break;
            }
        }
    }
    // UGAL and PAR choose between two paths that loads do not change: found once, and each
    // pass only re-decides (with whether the minimal one won).
    let two = net.chooses_between_two();
    let mut candidates: Vec<(Vec<Hop>, Vec<Hop>, bool)> = Vec::new();
    let passes = if net.adapts() { 1 + REFINE_PASSES } else { 1 };
    // Adaptive on a fat-tree's planes: every pair at once (network/planes.rs). The colourings
    // balance pairs, not messages: pairs of several messages are then refined as below.
    let mut first = 0;
    if net.clos_on {
        let ends: Vec<(usize, usize)> = units.iter().map(|&(_, from, to, _)| (from, to)).collect();
        let weights: Vec<u32> = units.iter().map(|u| u.3).collect();
        let when = || nic_start_estimates(m, w, plans, plan_of, &parts, &unit_of, units.len());
        if let Some(coloured) = net.clos_routes_all(&ends, &weights, when) {
            routes = coloured;
            first = if weights.iter().all(|&x| x == 1) { passes } else { 1 };
        }
    }
    for pass in first..if fluid { 0 } else { passes } {
        let mut moved = false;
        for (u, &(i, from, to, weight)) in units.iter().enumerate() {
            if two {
                if pass == 0 {
                    let (minimal, detour) = net.ugal_candidates(i as u64, from, to).ok_or_else(|| no_path(i, from, to))?;
                    candidates.push((minimal, detour, true));
                } else {
                    let (minimal, detour, won) = &candidates[u];
                    net.uncharge(if *won { minimal } else { detour }, weight);
                }
                let (minimal, detour, won) = &mut candidates[u];
                let wins = net.ugal_choose(minimal, detour, weight);
                moved |= pass == 0 || wins != *won;
                *won = wins;
                continue;
            }
            if pass > 0 {
                net.uncharge(&routes[u], weight);
            }
            let route = net.route(i as u64, from, to, weight).ok_or_else(|| no_path(i, from, to))?;
            moved |= route != routes[u];
            routes[u] = route;
        }
        if !moved {
            break; // a pass that moves nothing: the next would not either
        }
    }
    if two && !fluid {
        routes = candidates.into_iter().map(|(minimal, detour, won)| if won { minimal } else { detour }).collect();
    }
    let latency = |hops: &[Hop]| hops.iter().map(|h| m.links[h.link].latency).sum::<f64>();
    // Each distinct spread once (per base plan and pair of NICs, or fluid unit), and per message
    // its index (NO_SPREAD: none): messages of one pair then compile once.
    let mut spreads_out: Vec<Shares> = Vec::new();
    let mut spread = vec![NO_SPREAD; plan_of.len()];
    let mut spread_key: IntMap<(u32, usize, usize), u32> = IntMap::default();
    // One plan per (base plan, route): found by a fingerprint of both, checked against the
    // route of the unit that made the plan (a fingerprint that collides makes a plan anew).
    let mut rerouted: KeyMap<(u32, usize, u32)> = KeyMap::default();
    for (i, (part, &u)) in parts.iter().zip(&unit_of).enumerate() {
        let Some((first, last, from, to)) = *part else { continue };
        let base = plan_of[i];
        if net.sprays() || fluid {
            let key = if fluid { (base, u, usize::MAX) } else { (base, from, to) };
            spread[i] = match spread_key.get(&key) {
                Some(&k) => k,
                None => {
                    let plan = &plans[base as usize];
                    let mut s: Vec<(Hop, f64)> = plan.hops[..first].iter().chain(&plan.hops[last + 1..]).map(|&h| (h, 1.0)).collect();
                    if fluid {
                        s.extend(spreads[u].iter().copied());
                    } else {
                        s.extend(net.spray(from, to));
                    }
                    spreads_out.push(s);
                    let k = spreads_out.len() as u32 - 1;
                    spread_key.insert(key, k);
                    k
                }
            };
        }
        let mut make = || {
            let mut plan = plans[base as usize].clone();
            let segment = &routes[u];
            let rerouted = latency(segment) - latency(&plan.hops[first..=last]);
            plan.latency += rerouted;
            plan.kernel_latency += rerouted;
            plan.hops.splice(first..=last, segment.iter().copied());
            plans.push(plan);
            plans.len() as u32 - 1
        };
        let mut print = KeyHasher::default();
        print.write_u64(base as u64);
        for hop in &routes[u] {
            print.write_u64((hop.link as u64) << 1 | hop.forward as u64);
        }
        let print = print.finish();
        plan_of[i] = match rerouted.get(&print) {
            Some(&(b, v, plan)) if b == base && (v == u || routes[v] == routes[u]) => plan,
            Some(_) => make(),
            None => {
                let plan = make();
                rerouted.insert(print, (base, u, plan));
                plan
            }
        };
    }
    Ok((spreads_out, spread))
}

/// Routes longer than this merge their crossings by sorting.
const LONG_ROUTE: usize = 32;

/// A message with no spread of its own (its plan's path is its route).
const NO_SPREAD: u32 = u32::MAX;

/// Routes made by `extend_route`: (route, its extra resources with their shares' bits) to the new route.
type Extended = IntMap<(u32, Vec<(u32, u64)>), u32>;

/// Route `r` with `extra` (resource, share of the transfer's bytes) added, made once per route
/// and extra; `r` itself where there is none.
fn extend_route(routes: &mut Routes, r: u32, extra: &[(u32, f64)], made: &mut Extended) -> u32 {
    if extra.is_empty() {
        return r;
    }
    let key = (r, extra.iter().map(|&(x, s)| (x, s.to_bits())).collect());
    *made.entry(key).or_insert_with(|| {
        let (a, b) = (routes.off[r as usize] as usize, routes.off[r as usize + 1] as usize);
        routes.hops.extend_from_within(a..b);
        routes.hops.extend_from_slice(extra);
        routes.data.extend_from_within(a..b);
        routes.data.extend(extra.iter().map(|&(_, s)| s));
        routes.off.push(routes.hops.len() as u32);
        routes.off.len() as u32 - 2
    })
}

/// The NIC a path enters the network through: the device a network link is first left from,
/// if that device is a NIC.
fn injecting_nic(m: &Machine, src: usize, hops: &[Hop]) -> Option<usize> {
    let mut at = src;
    for h in hops {
        let l = &m.links[h.link];
        if l.kind == LinkKind::Network {
            return (m.devices[at].kind == DeviceKind::Nic).then_some(at);
        }
        at = if h.forward { l.b } else { l.a };
    }
    None
}

/// The GPU whose copy engine moves a copy between it and host memory, and whether the copy
/// goes to the host; None for every other copy.
fn host_copy(m: &Machine, src: usize, dst: usize, plan: &Plan) -> Option<(usize, bool)> {
    if plan.mechanism != Mechanism::Direct || plan.hops.is_empty() {
        return None;
    }
    match (m.devices[src].kind, m.devices[dst].kind) {
        (DeviceKind::Gpu, DeviceKind::HostMemory) => Some((src, true)),
        (DeviceKind::HostMemory, DeviceKind::Gpu) => Some((dst, false)),
        _ => None,
    }
}

impl FlowTable {
    /// Compile `w` on `m`; a transfer's `mechanism` and `via` override CUDA's choice.
    pub fn compile(m: &Machine, w: &Workload, rules: &FlowRules) -> Result<FlowTable> {
        let Resources { dir, device, peer, cap, name, latency } = resources(m, rules.capacity);
        let capped = device.iter().any(|&r| r != u32::MAX);
        let peer_capped = peer.iter().any(|&r| r != u32::MAX);
        let router = Router::new(m);
        let mut nic_of_device: IntMap<usize, u32> = IntMap::default();
        let mut engine_of: IntMap<(usize, bool), u32> = IntMap::default();
        // Plans depend on the endpoints alone unless a transfer asks for more: plan each pair
        // once (an index into `plans`); computations share one plan without hops.
        let mut pair_plan: IntMap<(usize, usize), u32> = IntMap::default();
        let mut leg_plan: IntMap<(usize, usize), u32> = IntMap::default();
        // A transfer that names the devices it passes (`via`: NCCL's NIC of a channel between
        // nodes) plans the same as any other with the same ends and `via` (the router is a
        // function of them; its caches only remember): once per (ends, leg, via). Planned per
        // transfer, a ring all-reduce on 32 x dgx-a100 spent 9% of its instructions in the
        // router (docs/benchmarks.md, issue 25, nineteenth round).
        let mut via_plan: ViaPlans = IntMap::default();
        let mut plans: Vec<Plan> = Vec::new();
        let mut plan_of: Vec<u32> = Vec::with_capacity(w.transfers.len());
        let mut no_hops: Option<u32> = None;
        let n = w.transfers.len();
        let mut c = FlowTable {
            cap,
            name,
            paths: Vec::new(),
            path_of: Vec::with_capacity(n),
            routes: Routes { off: vec![0], hops: Vec::new(), data: Vec::new() },
            route_of: Vec::with_capacity(n),
            plans: Vec::new(),
            plan_of: Vec::new(),
            setup: Vec::with_capacity(n),
            overhead: w.transfers.iter().map(|t| t.overhead).collect(),
            volume: Vec::with_capacity(n),
            teardown: vec![0.0; n],
            decisions: Vec::new(),
            latency,
            nic: Vec::with_capacity(n),
            nics: Vec::new(),
            nic_scheduling: m.network.nic_scheduling,
            nic_buffer: Vec::new(),
            nic_buffer_shared: false,
            nic_injection: Vec::new(),
            tail_route: Vec::new(),
            nic_hop: Vec::new(),
            branch_hop: Vec::new(),
            queueing: None,
            engine: Vec::with_capacity(n),
            engine_slots: Vec::new(),
            join_quantum: 0.0,
            duplex_pairs: Vec::new(),
            posted: Vec::with_capacity(n),
            member_rate: Vec::new(),
        };
        if rules.charges.directed {
            for (i, l) in m.links.iter().enumerate() {
                // `a` is a PCIe link's root side: a -> b (resource dir[2i]) runs downstream.
                if let Some(d) = l.duplex_directed.filter(|d| d.upstream > 0.0 || d.downstream > 0.0) {
                    c.duplex_pairs.push(charges::DuplexPair {
                        upstream: dir[2 * i + 1],
                        downstream: dir[2 * i],
                        upstream_loss: d.upstream,
                        downstream_loss: d.downstream,
                    });
                }
            }
        }
        // Keyed by the route itself (coefficients by their bits); only looked up, never
        // iterated, so numbering stays deterministic.
        let mut known: IntMap<Vec<(u32, u64)>, u32> = IntMap::default();
        let mut uniq: Vec<(u32, f64)> = Vec::new();
        let mut uniq_data: Vec<f64> = Vec::new();
        // Per transfer sent by a datatype method: (kernels before, path latency as paid, cap);
        // empty while none is (made a column at the first: most workloads have none).
        let mut kernels: Vec<Option<(f64, f64, Option<f64>)>> = Vec::new();
        let kernel = |kernels: &[Option<(f64, f64, Option<f64>)>], i: usize| kernels.get(i).copied().flatten();
        let link_cap = c.cap.clone();
        // A plan's uncontended rate: its narrowest resource, with crossings and the charges'
        // duplex costs counted as the route's coefficients will count them.
        let rate = |p: &Plan| {
            let hops = p.shares();
            let mut charged = Vec::new();
            let dirs = |h: &Hop| (dir[2 * h.link + usize::from(!h.forward)], dir[2 * h.link + usize::from(h.forward)]);
            charges::coefficients(m, &hops, p.staging, Access::Write, false, &rules.charges, dirs, &mut charged);
            let mut crossings: Vec<(u32, f64)> = Vec::new();
            for &(r, x, _) in &charged {
                match crossings.iter_mut().find(|(y, _)| *y == r) {
                    Some(e) => e.1 += x,
                    None => crossings.push((r, x)),
                }
            }
            crossings.iter().map(|&(r, x)| link_cap[r as usize] / x).fold(f64::INFINITY, f64::min)
        };
        for (i, t) in w.transfers.iter().enumerate() {
            let fail = |e: String| Error::input(&w.origin, format!("transfers[{i}]"), e);
            let mut add = |plan: Plan| {
                plans.push(plan);
                plans.len() as u32 - 1
            };
            if let Some(msg) = &t.layout {
                let a = methods::apply(m, &router, t, msg, &w.kernels, rules, &rate).map_err(fail)?;
                if kernels.is_empty() {
                    kernels.resize(n, None);
                }
                kernels[i] = Some((a.before, a.latency, a.cap));
                c.teardown[i] = a.after;
                c.decisions.push((i as u32, a.decision));
                plan_of.push(add(a.plan));
                continue;
            }
            let chosen_by_cuda = t.mechanism.is_none() && t.via.is_empty();
            if t.compute.is_some() {
                // No path: the executor ends it after its setup, the computation's duration.
                plan_of.push(*no_hops.get_or_insert_with(|| add(Plan::new(m, Mechanism::Direct, Vec::new(), None, 0.0))));
                continue;
            }
            // A kernel's store into host memory or load from it is one leg of NCCL's step through
            // host memory (`nccl::lower`, shm): one half of a staged copy, it takes that copy's
            // charges (its staging memory's duplex, `charges::coefficients`); planned apart from a
            // copy between the same ends.
            let host = |d: usize| m.devices[d].kind == DeviceKind::HostMemory;
            let leg = (t.kernel && host(t.src) != host(t.dst)).then(|| if host(t.src) { t.src } else { t.dst });
            let cache = if leg.is_some() { &mut leg_plan } else { &mut pair_plan };
            let by_via = t.mechanism.is_none() && !t.via.is_empty();
            let ends = (t.src, t.dst, leg.is_some());
            let planned = match via_plan.get(&ends) {
                Some(known) if by_via => known.iter().find(|k| k.0 == t.via).map(|k| k.1),
                _ => None,
            };
            let plan = match (cache.get(&(t.src, t.dst)), planned) {
                (Some(&plan), _) if chosen_by_cuda => plan,
                (_, Some(plan)) => plan,
                _ => {
                    let mut plan = router.plan(t.src, t.dst, t.mechanism, &t.via, rules.p2p).map_err(fail)?;
                    if plan.mechanism == Mechanism::Direct {
                        plan.staging = plan.staging.or(leg);
                    }
                    let plan = add(plan);
                    if chosen_by_cuda {
                        cache.insert((t.src, t.dst), plan);
                    } else if by_via {
                        via_plan.entry(ends).or_default().push((t.via.clone(), plan));
                    }
                    plan
                }
            };
            plan_of.push(plan);
        }
        let mut net = router.network();
        net.fluid_on = rules.fluid;
        net.clos_on = rules.clos;
        let (spreads, spread) = if net.routes_per_message() { reroute(m, &mut net, w, &mut plans, &mut plan_of)? } else { (Vec::new(), vec![NO_SPREAD; n]) };
        let per_flow = net.per_flow() && rules.rate_caps && bundle::any(m);
        drop(net);
        let resource = |h: &Hop| dir[2 * h.link + usize::from(!h.forward)];
        let reverse = |h: &Hop| dir[2 * h.link + usize::from(h.forward)];
        let mut crossings: Vec<(u32, f64, f64)> = Vec::new();
        // A transfer's `max_rate` is a resource of its own. One that waits for another of the
        // same endpoints and rate, the latest to take that resource, takes it after it: the two
        // never move at once, so sharing it caps each as its own would, with one route for a
        // chain of them (an NCCL connection's chunks) where each would make one. The members of
        // a rate group (`Transfer::rate_group`) share one such resource whether or not they move
        // at once: the chunks a connection keeps in flight share its kernel's rate.
        let mut rate_res: Vec<u32> = vec![u32::MAX; n];
        let mut tail: IntMap<u32, usize> = IntMap::default();
        let mut extended: Extended = IntMap::default();
        let mut rails = rails::Rails::default();
        let mut holds = bundle::Holds::default();
        let has_rails = m.devices.iter().any(|d| d.stripe_threshold.is_some());
        let mut crossed: Vec<(u32, f64)> = Vec::new();
        // What a transfer's plan and access decide (its route, path, hop latencies and NIC),
        // once per (plan, access) for the transfers that ask nothing more.
        let mut compiled: KeyMap<(u32, u32, f64, f64, bool, u32)> = KeyMap::default();
        for (i, (t, &shares)) in w.transfers.iter().zip(&spread).enumerate() {
            let p = plan_of[i];
            let plan = &plans[p as usize];
            let plain = kernel(&kernels, i).is_none() && t.compute.is_none();
            let read = t.access == Access::Read;
            // A kernel's load out of host memory (NCCL's receive through its SHM slots) is the
            // GPU reading host memory: the data comes back as completions for requests that
            // cross the other way (PCIe non-posted reads), where its store into host memory is a
            // posted write. Charged as a read (the model's read costs, `charges::coefficients`);
            // a model without read costs charges it as the write it charges every byte as.
            // Its requests are the SMs' 64-byte loads (`kernel_read_request`), not a copy engine's.
            let kernel_read = t.kernel && m.devices[t.src].kind == DeviceKind::HostMemory;
            let charged = if kernel_read { Access::Read } else { t.access };
            let memo = (p as u64) << 34 | (shares as u64) << 2 | (kernel_read as u64) << 1 | (charged == Access::Read) as u64;
            let (route, path_id, hops_latency, wait, posted, nic) = match compiled.get(&memo) {
                Some(&known_one) if plain => known_one,
                _ => {
                    if read {
                        if rules.charges.read.is_none() {
                            return Err(Error::Unsupported {
                                model: rules.model.into(),
                                reason: format!("transfers[{i}] ({}) is a read; this model charges writes only; use --model maxmin", t.name),
                            });
                        }
                        if plan.staging.is_some() {
                            return Err(Error::input(
                                &w.origin,
                                format!("transfers[{i}].access"),
                                "is read, but the copy is staged through host memory, whose two halves CUDA drives itself; drop access or use a peer path",
                            ));
                        }
                    }
                    // Route coefficients: times each resource is crossed (or the share of the
                    // message that crosses it where packets are sprayed), with the charges'
                    // duplex and read costs; `path` keeps one representative path of the data.
                    c.paths.push(plan.hops.iter().map(resource).collect());
                    let path_id = c.paths.len() as u32 - 1;
                    if !plan.stripes.is_empty() && !rules.prepay_latency {
                        return Err(Error::Unsupported {
                            model: rules.model.into(),
                            reason: format!(
                                "transfers[{i}] ({}) is striped over several NVLink ways (NVSwitch planes or parallel links); this model moves packets along one path; use --model maxmin",
                                t.name
                            ),
                        });
                    }
                    let hops: Vec<(Hop, f64)> = match shares {
                        NO_SPREAD => plan.shares(),
                        k => spreads[k as usize].clone(),
                    };
                    crossings.clear();
                    charges::coefficients(m, &hops, plan.staging, charged, kernel_read, &rules.charges, |h| (resource(h), reverse(h)), &mut crossings);
                    if capped {
                        for (d, share) in weighted_visits(m, t.src, plan) {
                            if device[d] == u32::MAX {
                                continue;
                            }
                            if !rules.device_capacity {
                                return Err(Error::Unsupported {
                                    model: rules.model.into(),
                                    reason: format!(
                                        "transfers[{i}] ({}) passes {}, which has a capacity of its own; this model shares links only; use --model maxmin",
                                        t.name, m.devices[d].name
                                    ),
                                });
                            }
                            crossings.push((device[d], share, share));
                        }
                    }
                    // Peer copies (GPU to GPU, GPU to NIC) use a link's peer bandwidth where it
                    // has one, for the share of their data crossing it; host traffic does not.
                    if peer_capped && plan.mechanism.is_peer() {
                        for (h, share) in &hops {
                            let r = peer[2 * h.link + usize::from(!h.forward)];
                            if r == u32::MAX {
                                continue;
                            }
                            if !rules.device_capacity {
                                let l = &m.links[h.link];
                                return Err(Error::Unsupported {
                                    model: rules.model.into(),
                                    reason: format!(
                                        "transfers[{i}] ({}) crosses {}–{}, whose peer traffic has a bandwidth of its own (peer_bandwidth); this model shares links only; use --model maxmin",
                                        t.name, m.devices[l.a].name, m.devices[l.b].name
                                    ),
                                });
                            }
                            crossings.push((r, *share, *share));
                        }
                    }
                    uniq.clear();
                    uniq_data.clear();
                    if crossings.len() > LONG_ROUTE {
                        // A spread route (hundreds of links on a large fat-tree): merge by sorting,
                        // not by the search below, which is quadratic.
                        crossings.sort_by_key(|c| c.0);
                        crossings.dedup_by(|b, a| {
                            let same = a.0 == b.0;
                            if same {
                                a.1 += b.1;
                                a.2 += b.2;
                            }
                            same
                        });
                    }
                    for &(r, x, d) in &crossings {
                        if crossings.len() > LONG_ROUTE {
                            uniq.push((r, x));
                            uniq_data.push(d);
                            continue;
                        }
                        match uniq.iter().position(|(y, _)| *y == r) {
                            Some(k) => {
                                uniq[k].1 += x;
                                uniq_data[k] += d;
                            }
                            None => {
                                uniq.push((r, x));
                                uniq_data.push(d);
                            }
                        }
                    }
                    // A load-store cap is a resource of this flow alone: max-min then never gives it more.
                    if let Some((_, _, Some(cap))) = kernel(&kernels, i) {
                        uniq.push((c.cap.len() as u32, 1.0));
                        uniq_data.push(1.0);
                        c.cap.push(cap);
                        c.name.push(format!("{} load-store ({})", m.devices[t.src].name, t.name));
                        c.latency.push(0.0);
                    }
                    let next = c.routes.len() as u32;
                    // Two routes with equal capacity use but different data shares are different routes.
                    let key: Vec<(u32, u64)> = uniq.iter().zip(&uniq_data).flat_map(|(&(r, x), d)| [(r, x.to_bits()), (u32::MAX, d.to_bits())]).collect();
                    let route = match known.get(&key) {
                        Some(&r) => r,
                        None => {
                            known.insert(key, next);
                            c.routes.hops.extend(uniq.iter().copied());
                            c.routes.data.extend(uniq_data.iter().copied());
                            c.routes.off.push(c.routes.hops.len() as u32);
                            next
                        }
                    };
                    let hops_latency: f64 = plan.hops.iter().map(|h| m.links[h.link].latency).sum();
                    // A PCIe write into this node's host memory (a network message is no posted write).
                    let posted = matches!(host_copy(m, t.src, t.dst, plan), Some((_, true)))
                        && plan.hops.iter().all(|h| !matches!(m.links[h.link].kind, LinkKind::Network | LinkKind::Fabric));
                    let wait = completion_wait(m, &plan.hops, t.access, posted);
                    let nic = match injecting_nic(m, t.src, &plan.hops) {
                        None => NO_NIC,
                        Some(d) => *nic_of_device.entry(d).or_insert_with(|| {
                            c.nics.push(Nic { device: d, name: m.devices[d].name.clone() });
                            c.nics.len() as u32 - 1
                        }),
                    };
                    let this = (route, path_id, hops_latency, wait, posted, nic);
                    if plain {
                        compiled.insert(memo, this);
                    }
                    this
                }
            };
            // The rails of the NICs the message crosses (rails.rs), one turn per message.
            let route = if has_rails {
                crossed.clear();
                let (cap, name, lat) = (&mut c.cap, &mut c.name, &mut c.latency);
                let new = |bps: f64, what: String| {
                    cap.push(bps);
                    name.push(what);
                    lat.push(0.0);
                    cap.len() as u32 - 1
                };
                rails.crossings(m, &plan.hops, t.size as f64, |h| (rules.capacity)(&m.links[h.link]), new, &mut crossed);
                if !crossed.is_empty() && !rules.rails {
                    return Err(Error::Unsupported {
                        model: rules.model.into(),
                        reason: format!(
                            "transfers[{i}] ({}) crosses a NIC whose ports are scheduled per message (stripe_threshold), each port its own rate; this model cannot split a NIC into its ports; use --model maxmin",
                            t.label(i)
                        ),
                    });
                }
                extend_route(&mut c.routes, route, &crossed, &mut extended)
            } else {
                route
            };
            let route = match t.max_rate {
                None => route,
                Some(bps) => {
                    if !rules.rate_caps {
                        return Err(Error::Unsupported {
                            model: rules.model.into(),
                            reason: format!(
                                "transfers[{i}] ({}) has a max_rate; this model cannot cap a transfer's rate; use --model maxmin or packet",
                                t.label(i)
                            ),
                        });
                    }
                    if !(bps > 0.0 && bps.is_finite()) {
                        return Err(Error::input(&w.origin, format!("transfers[{i}].max_rate"), "is not a positive rate; give one such as \"24GB/s\""));
                    }
                    let same = |j: usize| {
                        let u = &w.transfers[j];
                        u.src == t.src && u.dst == t.dst && u.max_rate == t.max_rate && u.rate_group.is_none()
                    };
                    let shared = match t.rate_group {
                        // A group is named by its first member, which took the resource.
                        Some(g) => rate_res.get(g).copied().filter(|&r| g < i && r != u32::MAX),
                        None => t
                            .after
                            .iter()
                            .copied()
                            .find(|&j| j < i && rate_res[j] != u32::MAX && same(j) && tail.get(&rate_res[j]) == Some(&j))
                            .map(|j| rate_res[j]),
                    };
                    let res = match shared {
                        Some(r) if c.cap[r as usize] == bps => r,
                        // Workload::resolve checks files; this is for workloads built in code.
                        Some(r) => {
                            return Err(Error::input(
                                &w.origin,
                                format!("transfers[{i}].max_rate"),
                                format!(
                                    "is {bps} B/s where its rate group (index {}) has {} B/s; give every member of a group one max_rate",
                                    t.rate_group.unwrap_or(0),
                                    c.cap[r as usize]
                                ),
                            ));
                        }
                        None => {
                            c.cap.push(bps);
                            c.name.push(rate_cap_name(&m.devices[t.src].name, &t.label(i)));
                            c.latency.push(0.0);
                            c.cap.len() as u32 - 1
                        }
                    };
                    rate_res[i] = res;
                    tail.insert(res, i);
                    extend_route(&mut c.routes, route, &[(res, 1.0)], &mut extended)
                }
            };
            // A message routed per flow crosses a bundle on one member (bundle.rs).
            let member = if per_flow && shares == NO_SPREAD { bundle::member_rate(m, &plan.hops, resource, c.routes.of(route as usize), &c.cap) } else { None };
            let route = match member {
                Some(bps) => {
                    let res = holds.take(&mut c, m, w, i, bps);
                    extend_route(&mut c.routes, route, &[(res, 1.0)], &mut extended)
                }
                None => route,
            };
            c.route_of.push(route);
            // A staged cudaMemcpy fills a chunk in host memory before its second copy starts; NCCL's
            // kernels stream a step through its SHM slots, the two legs overlapping slice by slice
            // (NCCL 2.30.7 src/transport/shm.cc; docs/nccl.md, "Latency"), in `contend nccl-tests` and in
            // rank programs alike.
            let fill = if plan.staging.is_some() && !t.kernel { (t.size as f64).min(rules.staging_chunk) } else { 0.0 };
            c.volume.push(t.size as f64 + fill);
            let (before, latency) = match (kernel(&kernels, i), t.compute) {
                (Some((before, latency, _)), _) => (before, latency),
                // A computation's "latency" is its duration less its overhead (paid before it).
                (None, Some(seconds)) => (0.0, seconds - t.overhead),
                // NCCL's kernels pay no copy engine's wait through an NVSwitch.
                (None, None) if t.kernel => (0.0, plan.kernel_latency),
                (None, None) => (0.0, plan.latency),
            };
            // The setup depth: what the copy pays at its devices (its latency without its hops). A
            // flow-level model then pays what of its path the completion waits for; a packet-level
            // model's packets meet the hops as they cross them.
            let depth = (latency - hops_latency).max(0.0);
            c.setup.push(before + depth + if rules.prepay_latency { wait } else { 0.0 } + t.overhead);
            c.nic.push(nic);
            c.posted.push(posted);
            c.engine.push(match host_copy(m, t.src, t.dst, plan) {
                // A copy into another node's memory crosses a NIC: the NIC's queue is its queue.
                // A kernel's store or load (NCCL's step through host memory) uses no engine.
                Some((gpu, to_host)) if plain && nic == NO_NIC && !t.kernel => *engine_of.entry((gpu, to_host)).or_insert_with(|| {
                    c.engine_slots.push(m.devices[gpu].copy_engines);
                    c.engine_slots.len() as u32 - 1
                }),
                _ => NO_ENGINE,
            });
            c.path_of.push(path_id);
        }
        (c.plans, c.plan_of) = (plans, plan_of);
        if let Some(l) = c.cap.iter().position(|&x| !(x > 0.0 && x.is_finite())) {
            return Err(Error::input(&m.origin, "links", format!("{} has no usable capacity; give it a positive bandwidth", c.name[l])));
        }
        Ok(c)
    }

    /// Take the capacities of `m`, a machine that differs from the one this table was compiled
    /// on in its links' bandwidths and its NIC scheduling alone (a sweep over the network's
    /// speed): every route, plan and latency stays. False where capacities chose more than
    /// rates (a datatype method chosen by its estimates, a load-store cap): compile anew then.
    pub fn take_capacities(&mut self, m: &Machine, capacity: &dyn Fn(&Link) -> f64) -> Result<bool> {
        if !self.decisions.is_empty() {
            return Ok(false);
        }
        let cap = resources(m, capacity).cap;
        if cap.len() != self.cap.len() {
            return Ok(false);
        }
        if let Some(l) = cap.iter().position(|&x| !(x > 0.0 && x.is_finite())) {
            return Err(Error::input(&m.origin, "links", format!("{} has no usable capacity; give it a positive bandwidth", self.name[l])));
        }
        self.cap = cap;
        self.nic_scheduling = m.network.nic_scheduling;
        Ok(true)
    }

    pub fn len(&self) -> usize {
        self.path_of.len()
    }

    pub fn is_empty(&self) -> bool {
        self.path_of.is_empty()
    }

    /// Transfer i's resources in path order, repeats kept.
    pub fn path(&self, i: usize) -> &[u32] {
        &self.paths[self.path_of[i] as usize]
    }

    /// Transfer i's plan: its mechanism, hops, staging and latency.
    pub fn plan(&self, i: usize) -> &Plan {
        &self.plans[self.plan_of[i] as usize]
    }

    /// The resources of transfer i, each once, with the times it crosses them.
    pub fn route(&self, i: usize) -> &[(u32, f64)] {
        self.routes.of(self.route_of[i] as usize)
    }

    /// Bytes of transfer i's own data per byte on each resource of `route(i)`.
    pub fn route_data(&self, i: usize) -> &[f64] {
        self.routes.data_of(self.route_of[i] as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::maxmin::MaxminPrepared;
    use crate::model::Prepared;
    use crate::workload::WorkloadSpec;

    /// A read is request + data: its requests cross each link of the path once, the other
    /// way, before its data crosses it back; a memory link (one resource, no direction: the
    /// DRAM access) is paid once. From the latencies written: engine 1 µs, root port 0.3 µs,
    /// switch port 0.2 µs, memory 0.1 µs.
    #[test]
    fn a_read_pays_each_link_once_per_direction_and_memory_once_and_a_write_to_host_is_posted() {
        let text = "name: r\ndevices:\n  - {name: RC, kind: root_complex, latency: 0.25us}\n  - {name: MEM, kind: host_memory, latency: 0s}\n  - {name: SW, kind: pcie_switch, latency: 0s}\n  - {name: GPU0, kind: gpu, latency: 1us}\n  - {name: GPU1, kind: gpu, latency: 1us}\nlinks:\n  - {a: RC, b: MEM, kind: memory, bandwidth: 100GB/s, latency: 0.1us}\n  - {a: RC, b: SW, kind: pcie, gen: 4, lanes: 16, latency: 0.3us}\n  - {a: SW, b: GPU0, kind: pcie, gen: 4, lanes: 16, latency: 0.2us}\n  - {a: SW, b: GPU1, kind: pcie, gen: 4, lanes: 16, latency: 0.2us}\n";
        let m = Machine::from_text(text, "r").unwrap();
        let w = "transfers:\n  - {src: GPU0, dst: MEM, size: 4B}\n  - {src: MEM, dst: GPU0, size: 4B, access: read}\n  - {src: GPU1, dst: GPU0, size: 4B}\n  - {src: GPU1, dst: GPU0, size: 4B, access: read}\n";
        let w = Workload::resolve(&WorkloadSpec::from_text(w, "w").unwrap(), &m, "w").unwrap();
        let p = MaxminPrepared::new(&m, &w, Default::default()).unwrap();
        let setup = &p.flows().setup;
        let us = |x: f64| x * 1e-6;
        let expected = [
            us(1.0),                                  // write to host memory: posted, complete at the engine
            us(1.0 + 2.0 * (0.2 + 0.3) + 0.1 + 0.25), // read of it: PCIe links both ways, DRAM and the root complex once
            us(1.0 + 0.2 + 0.2),                      // peer write through the switch
            us(1.0 + 2.0 * (0.2 + 0.2)),              // peer read: requests out, data back, no root complex
        ];
        for (i, (&got, &want)) in setup.iter().zip(&expected).enumerate() {
            assert!((got - want).abs() < 1e-15, "transfer {i}: {got} s, expected {want} s");
        }
    }

    /// Transfers with the same ends and `via` share one plan (planned once), and compile to what
    /// each would alone: the same route, path and setup; another `via` is planned apart.
    #[test]
    fn transfers_with_the_same_via_share_one_plan_and_compile_as_alone() {
        let text = "name: v\ndevices:\n  - {name: RC, kind: root_complex}\n  - {name: SW0, kind: pcie_switch}\n  - {name: SW1, kind: pcie_switch}\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\nlinks:\n  - {a: RC, b: SW0, kind: pcie, gen: 4, lanes: 16, latency: 0.3us}\n  - {a: RC, b: SW1, kind: pcie, gen: 4, lanes: 16, latency: 0.3us}\n  - {a: SW0, b: GPU0, kind: pcie, gen: 4, lanes: 16, latency: 0.2us}\n  - {a: SW1, b: GPU1, kind: pcie, gen: 4, lanes: 16, latency: 0.2us}\n  - {a: SW0, b: SW1, kind: pcie, gen: 4, lanes: 8, latency: 0.1us}\n";
        let m = Machine::from_text(text, "v").unwrap();
        let one = "  - {src: GPU0, dst: GPU1, size: 1MB, via: [RC]}\n";
        let other = "  - {src: GPU0, dst: GPU1, size: 1MB, via: [SW1]}\n";
        let compile = |body: &str| {
            let w = Workload::resolve(&WorkloadSpec::from_text(&format!("transfers:\n{body}"), "w").unwrap(), &m, "w").unwrap();
            MaxminPrepared::new(&m, &w, Default::default()).unwrap()
        };
        let all = compile(&[one, other, one].concat());
        let f = all.flows();
        assert_eq!(f.plan_of[0], f.plan_of[2]);
        assert_ne!(f.plan_of[0], f.plan_of[1]);
        for (i, body) in [one, other, one].iter().enumerate() {
            let alone = compile(body);
            let g = alone.flows();
            assert_eq!(f.route(i), g.route(0), "transfer {i}");
            assert_eq!(f.path(i), g.path(0), "transfer {i}");
            assert_eq!(f.setup[i].to_bits(), g.setup[0].to_bits(), "transfer {i}");
        }
        // The two `via`s take different paths (through the root complex, or across the switches).
        assert_ne!(f.path(0), f.path(1));
    }
}
