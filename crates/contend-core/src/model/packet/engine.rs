//! The packet engine: output ports with one FIFO per input, credits per channel, injection
//! lanes, and one heap of compact events in integer picoseconds.
//!
//! Events: a port finishes serialising a packet (`TX_DONE`), a packet is ready at its next
//! port or its destination (`ARRIVE`), a flow's setup is over (`JOIN`). Within an event, ports
//! that may start sending and lanes that may packetise are kept on two work lists and served
//! until both are empty, so one event's consequences are all taken at its time, in an order
//! that depends on nothing but the input.

use super::routing::{Dyn, Global, Policy};
use super::{Net, PacketParams};
use crate::error::Result;
use crate::flow::FlowTable;
use crate::keymap::KeyHasher;
use crate::model::{EventModel, SAME_TIME};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::BuildHasherDefault;

const NONE: u32 = u32::MAX;
const TAG: u32 = 30;
const INDEX: u32 = (1 << TAG) - 1;
const TX_DONE: u32 = 0;
const ARRIVE: u32 = 1;
const JOIN: u32 = 2;
/// A lane's paced transfer may cut its next packet.
const PACE: u32 = 3;
/// A packet's static index while its hops are chosen per packet.
const DYN: u16 = u16::MAX;

/// An event at `t` ps; the heap pops the smallest (t, seq) first.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Event {
    t: u64,
    seq: u64,
    /// Tag (top two bits) and index: a port, a packet or a flow.
    what: u32,
}

impl Ord for Event {
    fn cmp(&self, o: &Self) -> Ordering {
        o.t.cmp(&self.t).then(o.seq.cmp(&self.seq))
    }
}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

#[derive(Clone, Copy)]
struct Packet {
    flow: u32,
    bytes: u32,
    /// Next packet in the same input queue, or in the free list.
    next: u32,
    /// Hops made before the one it waits for, or is crossing: its channel.
    hop: u16,
    /// Whether that hop ends in a buffer (not at the destination), so it needs a credit.
    credit: bool,
    /// Whether PAR may still turn it non-minimal at the next router of its source group.
    par_open: bool,
    /// That hop's position in its flow's path, or DYN while the network chooses its hops.
    idx: u16,
    /// That hop's resource, the one before it (NONE at injection), and the device it reaches
    /// (hops chosen per packet).
    res: u32,
    prev: u32,
    at: u32,
    /// Dragonfly routing: the global link of the current leg (an index into `Dyn::global`),
    /// and Valiant's intermediate group, or NONE.
    leg: u32,
    mid: u32,
    /// Its number in its message, and the product of the choices it has met (see `turn_of`).
    serial: u32,
    spread: u32,
}

fn to_ps(secs: f64) -> u64 {
    if secs.is_finite() {
        (secs * 1e12).round().max(0.0) as u64
    } else {
        u64::MAX
    }
}

fn to_secs(ps: u64) -> f64 {
    ps as f64 / 1e12
}

pub struct PacketEngine<'p> {
    net: &'p Net,
    cap: &'p [f64],
    /// Per flow: a posted write into host memory, done when its last packet has left its first
    /// port (the engine), not when it arrives (flow::completion_wait).
    posted: &'p [bool],
    packet: u32,
    nvc: usize,
    now: u64,
    seq: u64,
    heap: BinaryHeap<Event>,
    pk: Vec<Packet>,
    free: u32,
    /// Per port: the packet being serialised, or NONE.
    tx: Vec<u32>,
    /// Per input queue: FIFO of packets waiting.
    qhead: Vec<u32>,
    qtail: Vec<u32>,
    /// Per port: its input queues with packets waiting, in round-robin order.
    active: Vec<VecDeque<u32>>,
    /// Per (port, channel): free slots of the buffer at the port's far end.
    credit: Vec<u32>,
    /// Per flow: packets still to cut, still to deliver; bytes delivered in the current epoch.
    to_make: Vec<u64>,
    to_deliver: Vec<u64>,
    recent: Vec<u64>,
    epoch: Vec<u32>,
    /// Per lane: messages packetising in turn, the one that sent last (NONE: none; it goes behind
    /// the others at the next turn), and whether its one packet waits at the first port.
    ring: Vec<VecDeque<u32>>,
    served: Vec<u32>,
    pending: Vec<bool>,
    /// Per pacer (`Net::pacer`): the earliest time its next packet may be cut (its `max_rate`); per lane: the
    /// time of the PACE event due for it, or u64::MAX. Empty where no flow is paced.
    next_cut: Vec<u64>,
    pace_due: Vec<u64>,
    /// Per injector: messages queued behind the window, and messages in it.
    waiting: Vec<VecDeque<u32>>,
    in_window: Vec<u32>,
    wake: Vec<u32>,
    wake_lanes: Vec<u32>,
    /// Completed flows not yet handed over, in time order.
    done: VecDeque<(u64, u32)>,
    /// Epoch of rates: since the last settle, at `settle_ps`; state is known up to `seen`.
    cur_epoch: u32,
    settle_ps: u64,
    seen: u64,
    /// Per port: serialisation time booked since the last `loads`, and when its packet ends.
    busy: Vec<u64>,
    busy_end: Vec<u64>,
    /// Per port over the whole run: serialisation time and bytes sent (the report's link table).
    sent_ps: Vec<u64>,
    sent_bytes: Vec<f64>,
    touched: Vec<bool>,
    touched_list: Vec<u32>,
    /// What `loads` last gave: the ports busy in the interval, and each one's load (bytes/s).
    loads_list: Vec<u32>,
    loads_now: Vec<f64>,
    loads_ps: u64,
    events: u64,
    hops: u64,
    router_delay: u64,
    /// Per-packet routing: the routing, per port the packets queued or moving, and the queues
    /// made for hops chosen on the way, by (input, port) and channel; the queues' ports and
    /// channels (those of the net, then those made here).
    dynr: Option<&'p Dyn>,
    occ: Vec<u32>,
    /// Per port: packets it has sent.
    sent: Vec<u64>,
    dyn_queue: HashMap<(u64, u64), u32, BuildHasherDefault<KeyHasher>>,
    queue_port: Vec<u32>,
    queue_vc: Vec<u16>,
}

impl<'p> PacketEngine<'p> {
    pub(crate) fn new(net: &'p Net, flows: &'p FlowTable, params: PacketParams) -> PacketEngine<'p> {
        let (nres, n, nvc) = (flows.cap.len(), flows.len(), net.nvc);
        assert!(nres <= INDEX as usize && n <= INDEX as usize, "the packet model handles at most 2^30 resources and transfers");
        PacketEngine {
            net,
            cap: &flows.cap,
            posted: &flows.posted,
            packet: params.packet as u32,
            nvc,
            now: 0,
            seq: 0,
            heap: BinaryHeap::with_capacity(1024),
            pk: Vec::new(),
            free: NONE,
            tx: vec![NONE; nres],
            qhead: vec![NONE; net.queue_port.len()],
            qtail: vec![NONE; net.queue_port.len()],
            active: vec![VecDeque::new(); nres],
            credit: net.buffer.iter().flat_map(|&b| std::iter::repeat_n(b, nvc)).collect(),
            to_make: vec![0; n],
            to_deliver: vec![0; n],
            recent: vec![0; n],
            epoch: vec![0; n],
            ring: vec![VecDeque::new(); net.lane_injector.len()],
            served: vec![NONE; net.lane_injector.len()],
            pending: vec![false; net.lane_injector.len()],
            next_cut: if net.pace.iter().any(|&p| p > 0.0) { vec![0; n] } else { Vec::new() },
            pace_due: if net.pace.iter().any(|&p| p > 0.0) { vec![u64::MAX; net.lane_injector.len()] } else { Vec::new() },
            waiting: vec![VecDeque::new(); net.window.len()],
            in_window: vec![0; net.window.len()],
            wake: Vec::new(),
            wake_lanes: Vec::new(),
            done: VecDeque::new(),
            cur_epoch: 1,
            settle_ps: 0,
            seen: 0,
            busy: vec![0; nres],
            busy_end: vec![0; nres],
            sent_ps: vec![0; nres],
            sent_bytes: vec![0.0; nres],
            touched: vec![false; nres],
            touched_list: Vec::new(),
            loads_list: Vec::new(),
            loads_now: vec![0.0; nres],
            loads_ps: 0,
            events: 0,
            hops: 0,
            router_delay: params.router_delay,
            dynr: net.dynr.as_ref(),
            occ: vec![0; nres],
            sent: vec![0; nres],
            dyn_queue: HashMap::default(),
            queue_port: net.queue_port.clone(),
            queue_vc: net.queue_vc.clone(),
        }
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Packets sent over one link so far (a packet crossing three links counts three).
    pub fn packet_hops(&self) -> u64 {
        self.hops
    }

    /// Packets each port (resource of the flow table) has sent so far.
    pub fn port_packets(&self) -> &[u64] {
        &self.sent
    }

    fn push(&mut self, t: u64, tag: u32, i: u32) {
        self.seq += 1;
        self.heap.push(Event { t, seq: self.seq, what: (tag << TAG) | i });
    }

    fn hop_range(&self, f: usize) -> (usize, usize) {
        (self.net.hop_off[f] as usize, self.net.hop_off[f + 1] as usize)
    }

    fn alloc(&mut self, p: Packet) -> u32 {
        if self.free != NONE {
            let h = self.free;
            self.free = self.pk[h as usize].next;
            self.pk[h as usize] = p;
            h
        } else {
            assert!(self.pk.len() < INDEX as usize, "over 2^30 packets in flight");
            self.pk.push(p);
            self.pk.len() as u32 - 1
        }
    }

    /// The input queue of a hop chosen on the way: by the resource before it, its port and channel.
    fn queue_of(&mut self, prev: u32, port: u32, vc: u16) -> usize {
        let next = self.queue_port.len() as u32;
        let q = *self.dyn_queue.entry(((prev as u64) << 32 | port as u64, vc as u64)).or_insert(next);
        if q == next {
            self.queue_port.push(port);
            self.queue_vc.push(vc);
            self.qhead.push(NONE);
            self.qtail.push(NONE);
        }
        q as usize
    }

    /// Packet `h` waits in input queue `q` of its port.
    fn enqueue(&mut self, q: usize, h: u32) {
        let port = self.queue_port[q] as usize;
        self.occ[port] += 1;
        self.pk[h as usize].next = NONE;
        if self.qhead[q] == NONE {
            self.qhead[q] = h;
            self.active[port].push_back(q as u32);
        } else {
            self.pk[self.qtail[q] as usize].next = h;
        }
        self.qtail[q] = h;
        if self.tx[port] == NONE {
            self.wake.push(port as u32);
        }
    }

    /// If `port` is idle, send the head of the first input queue in round-robin order that
    /// may go (a credit for its channel, or a last hop); that queue goes to the back.
    fn try_start(&mut self, port: usize) {
        if self.tx[port] != NONE {
            return;
        }
        let base = port * self.nvc;
        let mut pick = None;
        for i in 0..self.active[port].len() {
            let q = self.active[port][i] as usize;
            let head = self.pk[self.qhead[q] as usize];
            if head.credit && self.credit[base + self.queue_vc[q] as usize] == 0 {
                continue;
            }
            // A lane's placeholder goes only while one of its messages may cut: a member of its rate
            // group in another lane may have cut since it was placed. `in_turn` then books the PACE
            // event that wakes this port.
            if self.queue_vc[q] == 0 && !self.next_cut.is_empty() && self.in_turn(head.flow as usize).is_none() {
                continue;
            }
            pick = Some(i);
            break;
        }
        let Some(i) = pick else { return };
        let q = self.active[port].remove(i).expect("index in range") as usize;
        let vc = self.queue_vc[q] as usize;
        let h = self.qhead[q];
        if vc == 0 {
            // A lane's packet: its message is chosen now, as the port takes it.
            self.bind(self.pk[h as usize].flow as usize, h);
        }
        let p = self.pk[h as usize];
        self.qhead[q] = p.next;
        if p.next != NONE {
            self.active[port].push_back(q as u32);
        }
        if p.credit {
            self.credit[base + vc] -= 1;
        }
        self.tx[port] = h;
        let ser = (p.bytes as f64 * self.net.ps_per_byte[port]).round() as u64;
        let end = self.now + ser;
        self.busy[port] += ser;
        self.busy_end[port] = end;
        self.sent_ps[port] += ser;
        self.sent_bytes[port] += p.bytes as f64;
        if !self.touched[port] {
            self.touched[port] = true;
            self.touched_list.push(port as u32);
        }
        self.push(end, TX_DONE, port as u32);
        self.hops += 1;
        self.sent[port] += 1;
        let f = p.flow as usize;
        if vc > 0 {
            // It leaves the buffer it waited in: the port before it may send again.
            let prev = p.prev as usize;
            self.credit[prev * self.nvc + vc - 1] += 1;
            if self.tx[prev] == NONE && !self.active[prev].is_empty() {
                self.wake.push(prev as u32);
            }
        } else {
            let lane = self.net.lane_of[f] as usize;
            self.pending[lane] = false;
            self.wake_lanes.push(lane as u32);
        }
    }

    fn tx_done(&mut self, port: usize) {
        let h = self.tx[port];
        self.tx[port] = NONE;
        self.occ[port] -= 1;
        let p = self.pk[h as usize];
        if p.idx == 0 && self.posted[p.flow as usize] {
            // A posted write's packet has left the engine: as far as its copy is concerned, delivered.
            self.delivered(p.flow as usize, p.bytes as u64);
        }
        let d = match (p.idx, self.dynr) {
            (DYN, Some(d)) => d.latency_ps[p.res as usize] + self.router_delay,
            _ => self.net.hop_delay[self.net.hop_off[p.flow as usize] as usize + p.idx as usize],
        };
        if d == 0 {
            self.arrive(h);
        } else {
            self.push(self.now + d, ARRIVE, h);
        }
        if !self.active[port].is_empty() {
            self.wake.push(port as u32);
        }
    }

    /// One packet of flow f, of `bytes`, is delivered now; the flow is done with its last.
    fn delivered(&mut self, f: usize, bytes: u64) {
        if self.epoch[f] != self.cur_epoch {
            self.epoch[f] = self.cur_epoch;
            self.recent[f] = 0;
        }
        self.recent[f] += bytes;
        self.to_deliver[f] -= 1;
        if self.to_deliver[f] == 0 {
            self.done.push_back((self.now, f as u32));
        }
    }

    /// Packet `h` is ready past the hop it crossed: at the next port, or delivered.
    fn arrive(&mut self, h: u32) {
        let f = self.pk[h as usize].flow as usize;
        let (off, end) = (self.net.hop_off[f] as usize, self.net.hop_off[f + 1] as usize);
        if let Some(d) = self.dynr {
            let job = d.job_of[f];
            if job != NONE {
                let job = d.jobs[job as usize];
                let p = self.pk[h as usize];
                if p.idx == DYN || p.idx == job.k_in {
                    let v = if p.idx == DYN { p.at } else { job.rs };
                    let (idx, res, credit) = match self.step(d, h, v as usize, job.rs, job.rd, job.table) {
                        Some((res, w)) => {
                            self.pk[h as usize].at = w;
                            (DYN, res, true)
                        }
                        None => (job.k_out, self.net.hop_res[off + job.k_out as usize], off + job.k_out as usize + 1 < end),
                    };
                    self.advance(h, idx, res, credit);
                    return;
                }
                if p.idx > job.k_in && off + p.idx as usize + 1 < end {
                    let k = p.idx + 1;
                    self.advance(h, k, self.net.hop_res[off + k as usize], off + k as usize + 1 < end);
                    return;
                }
            }
        }
        let p = &mut self.pk[h as usize];
        let k = p.idx as usize + 1;
        if off + k == end {
            let bytes = p.bytes as u64;
            p.next = self.free;
            self.free = h;
            if !self.posted[f] {
                self.delivered(f, bytes);
            }
            return;
        }
        p.hop = k as u16;
        p.idx = k as u16;
        p.prev = p.res;
        p.res = self.net.hop_res[off + k];
        p.credit = off + k + 1 < end;
        self.enqueue(self.net.hop_queue[off + k] as usize, h);
    }

    /// Packet `h` takes its next hop (`idx` in its path, or DYN) over `res`, in the queue of
    /// its input, port and channel.
    fn advance(&mut self, h: u32, idx: u16, res: u32, credit: bool) {
        let p = &mut self.pk[h as usize];
        p.prev = p.res;
        p.res = res;
        p.idx = idx;
        p.hop += 1;
        p.credit = credit;
        let (prev, hop) = (p.prev, p.hop);
        assert!((hop as usize) < self.nvc, "a packet past its channels: the bound of routing.rs is wrong");
        let q = self.queue_of(prev, res, hop);
        self.enqueue(q, h);
    }

    /// Packet `h`'s turn among `count` next hops at switch `v`: the next digit of its number in
    /// its message, in the mixed radix of the choices it has met (from a place drawn per message
    /// and switch). Every run of a message's packets thus takes every combination of next hops
    /// in turn — all its shortest paths equally, as the flow level's spray splits it. (Turns
    /// kept per switch fall in step with the order ports serve messages in; the packet's number
    /// itself at every switch would tie the later choices to the first.)
    fn turn_of(&mut self, d: &Dyn, h: u32, v: usize, count: usize) -> usize {
        let p = &mut self.pk[h as usize];
        let digit = (p.serial / p.spread) as u64;
        p.spread = p.spread.saturating_mul(count.max(1) as u32);
        (digit.wrapping_add(d.hash(p.flow as u64, v as u64)) % count.max(1) as u64) as usize
    }

    /// The next hop of packet `h` at switch `v` on its way from switch `rs` to switch `rd`
    /// (routing.rs): its resource and the device it reaches, or None at `rd`.
    fn step(&mut self, d: &Dyn, h: u32, v: usize, rs: u32, rd: u32, table: u32) -> Option<(u32, u32)> {
        if v == rd as usize {
            return None;
        }
        if d.groups == 0 {
            let dist = &d.dist[table as usize * d.devices..(table as usize + 1) * d.devices];
            let dv = dist[v];
            let out = d.out(v);
            let fits = |&&(w, _): &&(u32, u32)| d.switch[w as usize] && dist[w as usize] != u16::MAX && dist[w as usize] + 1 == dv;
            let count = out.iter().filter(fits).count();
            let start = self.turn_of(d, h, v, count);
            let mut pick = out.iter().filter(fits).cycle().skip(start).take(count);
            let chosen = match d.policy {
                Policy::Adaptive => pick.min_by_key(|&&(_, r)| self.occ[r as usize]),
                _ => pick.next(),
            };
            return chosen.map(|&(w, r)| (r, w));
        }
        let (gv, gs, gd) = (d.group[v], d.group[rs as usize], d.group[rd as usize]);
        let mut p = self.pk[h as usize];
        if p.mid != NONE && gv == p.mid {
            p.mid = NONE;
            p.leg = NONE;
        }
        let target = if p.mid != NONE { p.mid } else { gd };
        if gv == target {
            self.pk[h as usize] = p;
            return Some((d.local(v as u32, rd), rd));
        }
        let key = (p.flow as u64) << 32 | p.serial as u64;
        let first = |g: &Global| if g.ra == v as u32 { g.res } else { d.local(v as u32, g.ra) };
        let hashed = |g: u32, t: u32, salt: u64| d.pair_off[(g * d.groups + t) as usize] + (d.hash(key, salt) % d.globals(g, t).len() as u64) as u32;
        let other = |salt: u64| {
            let (a, b) = (gs.min(gd), gs.max(gd));
            let mut g = (d.hash(key, salt) % (d.groups as u64 - 2)) as u32;
            if g >= a {
                g += 1;
            }
            if g >= b {
                g += 1;
            }
            g
        };
        if p.leg == NONE {
            if gv != gs {
                p.leg = hashed(gv, gd, 2);
            } else {
                let base = d.pair_off[(gs * d.groups + gd) as usize];
                let list = d.globals(gs, gd);
                match d.policy {
                    Policy::Spray | Policy::Adaptive => {
                        let start = self.turn_of(d, h, v, list.len());
                        let k = if d.policy == Policy::Spray {
                            start
                        } else {
                            (0..list.len()).map(|i| (start + i) % list.len()).min_by_key(|&k| self.occ[first(&list[k]) as usize]).unwrap_or(start)
                        };
                        p.leg = base + k as u32;
                    }
                    Policy::Valiant => {
                        p.mid = other(0);
                        p.leg = hashed(gs, p.mid, 1);
                    }
                    Policy::Ugal | Policy::Par => {
                        let minimal = hashed(gs, gd, 4);
                        let gi = other(0);
                        let detour = hashed(gs, gi, 1);
                        let (m, x) = (d.global[minimal as usize], d.global[detour as usize]);
                        let cost_m = (self.occ[first(&m) as usize] as u64 + 1) * (u64::from(m.ra != v as u32) + 1 + u64::from(m.rb != rd));
                        let cost_x = (self.occ[first(&x) as usize] as u64 + 1) * (u64::from(x.ra != v as u32) + 4);
                        if cost_m <= cost_x {
                            p.leg = minimal;
                            p.par_open = d.policy == Policy::Par && m.ra != v as u32;
                        } else {
                            p.leg = detour;
                            p.mid = gi;
                        }
                    }
                }
            }
        } else if p.par_open && d.global[p.leg as usize].ra == v as u32 {
            // PAR: the second router of the source group decides again from its own queues.
            p.par_open = false;
            let m = d.global[p.leg as usize];
            let gi = other(3);
            let detour = hashed(gs, gi, 5);
            let x = d.global[detour as usize];
            let cost_m = (self.occ[m.res as usize] as u64 + 1) * (1 + u64::from(m.rb != rd));
            let cost_x = (self.occ[first(&x) as usize] as u64 + 1) * (u64::from(x.ra != v as u32) + 4);
            if cost_x < cost_m {
                p.leg = detour;
                p.mid = gi;
            }
        }
        let g = d.global[p.leg as usize];
        self.pk[h as usize] = p;
        Some(if g.ra == v as u32 { (g.res, g.rb) } else { (d.local(v as u32, g.ra), g.ra) })
    }

    /// The message whose turn it is at the lane: the first in its ring, the one that sent last
    /// behind the others (`served`), the first whose pace lets it cut now where flows are paced.
    /// None where no message is in turn or none may cut yet (then the lane wakes when one may).
    fn in_turn(&mut self, lane: usize) -> Option<usize> {
        let served = self.served[lane];
        let ring = &self.ring[lane];
        let turns = ring.iter().copied().chain((served != NONE).then_some(served));
        if self.next_cut.is_empty() {
            return turns.map(|f| f as usize).next();
        }
        let (now, pacer) = (self.now, &self.net.pacer);
        let due = |f: u32| self.next_cut[pacer[f as usize] as usize];
        if let Some(f) = turns.clone().find(|&f| due(f) <= now) {
            return Some(f as usize);
        }
        if let Some(due) = turns.map(due).min() {
            if due < self.pace_due[lane] {
                self.pace_due[lane] = due;
                self.push(due, PACE, lane as u32);
            }
        }
        None
    }

    /// Put the lane's next packet at its first port, if its previous one has left the port and a
    /// message may cut one. Which message it belongs to is decided when the port takes it
    /// (`bind`): a NIC's scheduling picks the next packet when its link can send it, so a message
    /// that arrives while the port is busy is in the turn it takes then (seed 003 §III-B).
    fn refill(&mut self, lane: usize) {
        if self.pending[lane] {
            return;
        }
        let Some(f) = self.in_turn(lane) else { return };
        let (off, end) = self.hop_range(f);
        // Every message of a lane has this first hop (the lane's port and queue) and its credit.
        let h = self.alloc(Packet {
            flow: lane as u32,
            bytes: 0,
            next: NONE,
            hop: 0,
            credit: end - off > 1,
            par_open: false,
            idx: 0,
            res: self.net.hop_res[off],
            prev: NONE,
            at: NONE,
            leg: NONE,
            mid: NONE,
            serial: 0,
            spread: 1,
        });
        self.pending[lane] = true;
        self.enqueue(self.net.hop_queue[off] as usize, h);
    }

    /// The lane's packet `h` leaves now: cut it from the message in turn, which then goes behind
    /// every message the lane holds at its next turn (round robin: a message that arrived
    /// meanwhile goes before it).
    fn bind(&mut self, lane: usize, h: u32) {
        let served = std::mem::replace(&mut self.served[lane], NONE);
        if served != NONE {
            self.ring[lane].push_back(served);
        }
        // `try_start` took the placeholder only while a message of the lane may cut.
        let k = match self.next_cut.is_empty() {
            true => 0,
            false => {
                let f = self.in_turn(lane).expect("a message that may cut");
                self.ring[lane].iter().position(|&g| g as usize == f).expect("in the ring")
            }
        };
        let f = self.ring[lane].remove(k).expect("a message in turn");
        let fi = f as usize;
        let left = self.to_make[fi];
        self.to_make[fi] = left - 1;
        let bytes = if left == 1 { self.net.last_bytes[fi] } else { self.packet };
        if !self.next_cut.is_empty() && self.net.pace[fi] > 0.0 {
            self.next_cut[self.net.pacer[fi] as usize] = self.now + (bytes as f64 * self.net.pace[fi]).round() as u64;
        }
        let p = &mut self.pk[h as usize];
        p.flow = f;
        p.bytes = bytes;
        p.serial = (self.net.packets[fi] - left) as u32;
        if left > 1 {
            self.served[lane] = f;
        } else {
            let inj = self.net.lane_injector[lane] as usize;
            self.in_window[inj] -= 1;
            while self.in_window[inj] < self.net.window[inj] {
                match self.waiting[inj].pop_front() {
                    Some(g) => self.admit(g as usize),
                    None => break,
                }
            }
        }
    }

    /// Message f enters its injector's window: its lane may cut its packets.
    fn admit(&mut self, f: usize) {
        let lane = self.net.lane_of[f] as usize;
        self.in_window[self.net.lane_injector[lane] as usize] += 1;
        self.ring[lane].push_back(f as u32);
        if !self.pending[lane] {
            self.wake_lanes.push(lane as u32);
        }
    }

    fn join_now(&mut self, f: usize) {
        let (off, end) = self.hop_range(f);
        let count = self.net.packets[f];
        if count == 0 || off == end {
            self.done.push_back((self.now, f as u32));
            return;
        }
        self.to_make[f] = count;
        self.to_deliver[f] = count;
        let inj = self.net.lane_injector[self.net.lane_of[f] as usize] as usize;
        if self.in_window[inj] < self.net.window[inj] {
            self.admit(f);
        } else {
            self.waiting[inj].push_back(f as u32);
        }
    }

    fn process(&mut self, ev: Event) {
        self.now = ev.t;
        self.events += 1;
        let i = (ev.what & INDEX) as usize;
        match ev.what >> TAG {
            TX_DONE => self.tx_done(i),
            ARRIVE => self.arrive(i as u32),
            JOIN => self.join_now(i),
            _ => {
                // Only the latest PACE event of a lane is current; earlier ones found it served.
                if self.pace_due[i] == ev.t {
                    self.pace_due[i] = u64::MAX;
                    self.wake_lanes.push(i as u32);
                    if self.pending[i] {
                        // Its placeholder waits at its port for a message that may cut (`try_start`).
                        self.wake.push(self.net.lane_port[i]);
                    }
                }
            }
        }
        loop {
            if let Some(port) = self.wake.pop() {
                self.try_start(port as usize);
            } else if let Some(lane) = self.wake_lanes.pop() {
                self.refill(lane as usize);
            } else {
                break;
            }
        }
    }
}

impl EventModel for PacketEngine<'_> {
    fn join(&mut self, flow: usize, t: f64) {
        let t = to_ps(t).max(self.now);
        self.push(t, JOIN, flow as u32);
    }

    fn horizon(&mut self, until: f64) {
        let until = to_ps(until);
        while let Some(&ev) = self.heap.peek() {
            // Events before `until`; once a flow is done, only those at its very time.
            if ev.t >= until || self.done.front().is_some_and(|&(t, _)| ev.t > t) {
                break;
            }
            self.heap.pop();
            self.process(ev);
            // A stop (Ctrl-C) leaves the instant unfinished; the executor then returns.
            if self.events.is_multiple_of(1 << 14) && crate::interrupt::STOP.requested() {
                return;
            }
        }
        self.seen = match self.done.front() {
            Some(&(t, _)) => t,
            None if until != u64::MAX => until.max(self.now),
            None => self.now,
        };
    }

    fn next_finish(&mut self) -> Option<f64> {
        self.done.front().map(|&(t, _)| to_secs(t))
    }

    fn finish(&mut self, t: f64, done: &mut Vec<usize>) {
        let limit = t + SAME_TIME * t;
        while let Some(&(at, f)) = self.done.front() {
            if to_secs(at) > limit {
                break;
            }
            done.push(f as usize);
            self.done.pop_front();
        }
    }

    fn settle(&mut self, t: f64) -> Result<()> {
        self.cur_epoch += 1;
        self.settle_ps = to_ps(t);
        Ok(())
    }

    fn rate(&self, flow: usize) -> f64 {
        if self.epoch[flow] != self.cur_epoch || self.seen <= self.settle_ps {
            return 0.0;
        }
        self.recent[flow] as f64 / to_secs(self.seen - self.settle_ps)
    }

    fn loads(&mut self) -> (&[u32], &[f64]) {
        self.loads_list.clear();
        let end = self.settle_ps;
        if end <= self.loads_ps {
            return (&self.loads_list, &self.loads_now);
        }
        let span = (end - self.loads_ps) as f64;
        self.loads_ps = end;
        let mut k = 0;
        while k < self.touched_list.len() {
            let port = self.touched_list[k] as usize;
            // Time booked past `end` belongs to the next interval.
            let carry = self.busy_end[port].saturating_sub(end).min(self.busy[port]);
            let busy = self.busy[port] - carry;
            self.busy[port] = carry;
            if busy > 0 {
                self.loads_list.push(port as u32);
                self.loads_now[port] = self.cap[port] * (busy as f64 / span).min(1.0);
            }
            if carry > 0 {
                k += 1;
            } else {
                self.touched[port] = false;
                self.touched_list.swap_remove(k);
            }
        }
        (&self.loads_list, &self.loads_now)
    }
    /// Packets leave a NIC's link by themselves once it has sent them: no route to change.
    fn reroute(&mut self, _flow: usize, _t: f64) {}
    /// Where the packets went: per-packet routing (spray, adaptive, PAR) parts a message's
    /// packets over links its flow-table route does not list.
    fn carried(&mut self) -> Option<crate::model::Carried> {
        let busy_s = self.sent_ps.iter().map(|&ps| ps as f64 * 1e-12).collect();
        Some(crate::model::Carried { bytes: std::mem::take(&mut self.sent_bytes), busy_s })
    }
}
