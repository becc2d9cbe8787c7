//! The packet engine: output ports with one FIFO per input, credits per channel, injection
//! lanes, and one heap of compact events in integer picoseconds.
//!
//! Events: a port finishes serialising a packet (`TX_DONE`), a packet is ready at its next
//! port or its destination (`ARRIVE`), a flow's setup is over (`JOIN`). Within an event, ports
//! that may start sending and lanes that may packetise are kept on two work lists and served
//! until both are empty, so one event's consequences are all taken at its time, in an order
//! that depends on nothing but the input.

use super::{Net, PacketParams};
use crate::error::Result;
use crate::flow::FlowTable;
use crate::model::{EventModel, SAME_TIME};
use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

const NONE: u32 = u32::MAX;
const TAG: u32 = 30;
const INDEX: u32 = (1 << TAG) - 1;
const TX_DONE: u32 = 0;
const ARRIVE: u32 = 1;
const JOIN: u32 = 2;

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
    /// Position of the hop it waits for, or is crossing, in its flow's path: its channel.
    hop: u16,
    /// Whether that hop ends in a buffer (not at the destination), so it needs a credit.
    credit: bool,
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
    /// Per lane: messages packetising in turn, and whether its one packet waits at the first port.
    ring: Vec<VecDeque<u32>>,
    pending: Vec<bool>,
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
    touched: Vec<bool>,
    touched_list: Vec<u32>,
    loads_ps: u64,
    events: u64,
    hops: u64,
}

impl<'p> PacketEngine<'p> {
    pub(crate) fn new(net: &'p Net, flows: &'p FlowTable, params: PacketParams) -> PacketEngine<'p> {
        let (nres, n, nvc) = (flows.cap.len(), flows.len(), net.nvc);
        assert!(nres <= INDEX as usize && n <= INDEX as usize, "the packet model handles at most 2^30 resources and transfers");
        PacketEngine {
            net,
            cap: &flows.cap,
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
            credit: vec![params.buffer; nres * nvc],
            to_make: vec![0; n],
            to_deliver: vec![0; n],
            recent: vec![0; n],
            epoch: vec![0; n],
            ring: vec![VecDeque::new(); net.lane_injector.len()],
            pending: vec![false; net.lane_injector.len()],
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
            touched: vec![false; nres],
            touched_list: Vec::new(),
            loads_ps: 0,
            events: 0,
            hops: 0,
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

    /// Packet `h` waits in input queue `q` of its port.
    fn enqueue(&mut self, q: usize, h: u32) {
        let port = self.net.queue_port[q] as usize;
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
        let ring = &self.active[port];
        let Some(i) = (0..ring.len()).find(|&i| {
            let q = ring[i] as usize;
            !self.pk[self.qhead[q] as usize].credit || self.credit[base + self.net.queue_vc[q] as usize] > 0
        }) else {
            return;
        };
        let q = self.active[port].remove(i).expect("index in range") as usize;
        let vc = self.net.queue_vc[q] as usize;
        let h = self.qhead[q];
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
        if !self.touched[port] {
            self.touched[port] = true;
            self.touched_list.push(port as u32);
        }
        self.push(end, TX_DONE, port as u32);
        self.hops += 1;
        let f = p.flow as usize;
        if vc > 0 {
            // It leaves the buffer it waited in: the port before it may send again.
            let prev = self.net.hop_res[self.net.hop_off[f] as usize + vc - 1] as usize;
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
        let p = self.pk[h as usize];
        let d = self.net.hop_delay[self.net.hop_off[p.flow as usize] as usize + p.hop as usize];
        if d == 0 {
            self.arrive(h);
        } else {
            self.push(self.now + d, ARRIVE, h);
        }
        if !self.active[port].is_empty() {
            self.wake.push(port as u32);
        }
    }

    /// Packet `h` is ready past the hop it crossed: at the next port, or delivered.
    fn arrive(&mut self, h: u32) {
        let p = &mut self.pk[h as usize];
        let f = p.flow as usize;
        let k = p.hop as usize + 1;
        let (off, end) = (self.net.hop_off[f] as usize, self.net.hop_off[f + 1] as usize);
        if off + k == end {
            let bytes = p.bytes as u64;
            p.next = self.free;
            self.free = h;
            if self.epoch[f] != self.cur_epoch {
                self.epoch[f] = self.cur_epoch;
                self.recent[f] = 0;
            }
            self.recent[f] += bytes;
            self.to_deliver[f] -= 1;
            if self.to_deliver[f] == 0 {
                self.done.push_back((self.now, f as u32));
            }
            return;
        }
        p.hop = k as u16;
        p.credit = off + k + 1 < end;
        self.enqueue(self.net.hop_queue[off + k] as usize, h);
    }

    /// Cut the next packet of the lane's turn, if its previous one has left the first port.
    fn refill(&mut self, lane: usize) {
        if self.pending[lane] {
            return;
        }
        let Some(f) = self.ring[lane].pop_front() else { return };
        let fi = f as usize;
        let left = self.to_make[fi];
        self.to_make[fi] = left - 1;
        let (off, end) = self.hop_range(fi);
        let bytes = if left == 1 { self.net.last_bytes[fi] } else { self.packet };
        let h = self.alloc(Packet { flow: f, bytes, next: NONE, hop: 0, credit: end - off > 1 });
        self.pending[lane] = true;
        if left > 1 {
            self.ring[lane].push_back(f);
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
        self.enqueue(self.net.hop_queue[off] as usize, h);
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
            _ => self.join_now(i),
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

    fn loads(&mut self, out: &mut Vec<(u32, f64)>) {
        let end = self.settle_ps;
        if end <= self.loads_ps {
            return;
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
                out.push((port as u32, self.cap[port] * (busy as f64 / span).min(1.0)));
            }
            if carry > 0 {
                k += 1;
            } else {
                self.touched[port] = false;
                self.touched_list.swap_remove(k);
            }
        }
    }
}
