//! A FCFS or RR-N NIC's early release (params.rs, `NicRelease`; flow/release.rs) as one event
//! of the executor per message, scheduled where the rule says and moved only when what decides
//! it changes.
//!
//! The rule: holder h of NIC q is released at the first time t, no earlier than its join plus
//! its volume at its narrowest capacity, at which the bytes h and q's messages released before
//! it (`ahead`) still have to deliver fit in the buffers h counts on along its path:
//! left(t) ≤ B(t). Between two of the executor's instants every rate is constant and so is
//! every resource's count of messages in flight, so left(t) = left(t₀) − r·(t − t₀), with r
//! the sum of their rates, and B is constant: the release is at t₀ + (left(t₀) − B) / r.
//! It can only move when r or B does: a rate of h or of a message ahead changes (the model
//! lists every resource of such a flow's route among those whose load may have changed,
//! `EventModel::loads`), a message joins or leaves a resource h's buffers are counted at
//! (the same list: its route's load changed), or a message joins or leaves the holders or
//! `ahead`. A NIC watches one resource of each route whose rate it reads and, under `shared`,
//! every resource whose count it reads; a change there makes it compute its holders' release
//! times again once the instant has settled, and nothing else does.

use super::{Executor, Join};
use crate::flow::NO_NIC;
use crate::model::{EventModel, SAME_TIME};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The early-release bookkeeping; every list empty when the NIC waits for delivery.
#[derive(Default)]
pub(super) struct Releases {
    /// Whether an early-release rule is on (`FlowTable::nic_buffer` filled).
    pub on: bool,
    /// Per NIC: holders that move (joined), its messages released early and still in flight
    /// (their bytes left sit in the same buffers ahead of a holder's), whether its watches must
    /// be registered again, and the stamp its live watches carry.
    holders: Vec<Vec<u32>>,
    pub ahead: Vec<Vec<u32>>,
    rewatch: Vec<bool>,
    stamp: Vec<u32>,
    /// Per resource: (NIC, stamp) watching it; an entry with an old stamp is dropped when seen.
    watch: Vec<Vec<(u32, u32)>>,
    /// Per transfer: its earliest release (join plus its volume at its narrowest capacity);
    /// the sequence number of its live release event (0: none) and that event's time.
    earliest: Vec<f64>,
    live: Vec<u32>,
    due: Vec<f64>,
    /// NICs to look at again once the instant has settled, listed once each.
    dirty: Vec<u32>,
    marked: Vec<bool>,
    /// Release events by (time, sequence, transfer); stale ones are dropped as they surface.
    events: BinaryHeap<Reverse<Join>>,
    /// Scratch: holders released by one look.
    now: Vec<u32>,
    /// The last release event's sequence number (its own count: the joins' stays as it was).
    seq: u32,
}

impl Releases {
    pub fn new(on: bool, transfers: usize, nics: usize, resources: usize) -> Releases {
        if !on {
            return Releases::default();
        }
        Releases {
            on,
            holders: vec![Vec::new(); nics],
            ahead: vec![Vec::new(); nics],
            rewatch: vec![false; nics],
            stamp: vec![0; nics],
            watch: vec![Vec::new(); resources],
            earliest: vec![0.0; transfers],
            live: vec![0; transfers],
            due: vec![f64::INFINITY; transfers],
            dirty: Vec::new(),
            marked: vec![false; nics],
            events: BinaryHeap::new(),
            now: Vec::new(),
            seq: 0,
        }
    }

    fn mark(&mut self, q: usize, rewatch: bool) {
        self.rewatch[q] |= rewatch;
        if !self.marked[q] {
            self.marked[q] = true;
            self.dirty.push(q as u32);
        }
    }

    /// When the next live release event is due, dropping stale ones on the way.
    pub fn next(&mut self) -> Option<f64> {
        while let Some(Reverse(j)) = self.events.peek() {
            if self.live[j.flow as usize] == j.seq {
                return Some(j.t);
            }
            self.events.pop();
        }
        None
    }

    /// The live release event due by `horizon`, taken off the queue.
    pub fn take(&mut self, horizon: f64) -> Option<usize> {
        let t = self.next()?;
        if t > horizon {
            return None;
        }
        let Reverse(j) = self.events.pop().unwrap();
        self.live[j.flow as usize] = 0;
        Some(j.flow as usize)
    }

    /// Resources whose load may have changed this instant (the model's list): the NICs that
    /// watch them look again.
    pub fn wake(&mut self, loads: &[(u32, f64)]) {
        let Releases { watch, stamp, marked, dirty, .. } = self;
        for &(l, _) in loads {
            watch[l as usize].retain(|&(q, s)| {
                if s != stamp[q as usize] {
                    return false;
                }
                if !marked[q as usize] {
                    marked[q as usize] = true;
                    dirty.push(q);
                }
                true
            });
        }
    }
}

impl Executor<'_> {
    /// Holder f starts moving at t: its NIC looks once the instant has settled.
    pub(super) fn hold_joined(&mut self, f: usize, t: f64) {
        let q = self.op[f].nic as usize;
        self.rel.earliest[f] = t + self.flows.volume[f] / self.alone(f);
        self.rel.holders[q].push(f as u32);
        self.rel.mark(q, true);
    }

    /// Holder f no longer holds its NIC (released or delivered): its event is void.
    pub(super) fn hold_ended(&mut self, f: usize) {
        let q = self.op[f].nic as usize;
        let h = &mut self.rel.holders[q];
        if let Some(k) = h.iter().position(|&g| g as usize == f) {
            h.swap_remove(k);
        }
        self.rel.live[f] = 0;
        self.rel.due[f] = f64::INFINITY;
        self.rel.mark(q, true);
    }

    /// Transfer f was delivered: if its NIC released it early, it is no longer ahead there.
    pub(super) fn ahead_delivered(&mut self, f: usize) {
        let q = self.op[f].nic;
        if q == NO_NIC {
            return;
        }
        let a = &mut self.rel.ahead[q as usize];
        if let Some(k) = a.iter().position(|&g| g as usize == f) {
            a.swap_remove(k);
            self.rel.mark(q as usize, true);
        }
    }

    /// Holder f's release event came due at t: f's NIC takes its next message.
    pub(super) fn release_early(&mut self, f: usize, t: f64) {
        if !self.holds[f] {
            return;
        }
        self.rel.ahead[self.op[f].nic as usize].push(f as u32);
        self.release(f, t);
    }

    /// Register NIC q's watches anew: one resource of each route whose rate its holders' release
    /// reads, and under `shared` every resource whose count of messages it reads.
    fn rewatch(&mut self, q: usize) {
        let r = &mut self.rel;
        r.rewatch[q] = false;
        r.stamp[q] = r.stamp[q].wrapping_add(1);
        let s = r.stamp[q];
        for &g in r.holders[q].iter().chain(&r.ahead[q]) {
            if let Some(&(l, _)) = self.flows.route(g as usize).first() {
                r.watch[l as usize].push((q as u32, s));
            }
        }
        if self.flows.nic_buffer_shared {
            for &h in &r.holders[q] {
                let path = self.flows.path(h as usize);
                for &l in &path[..path.len().saturating_sub(1)] {
                    r.watch[l as usize].push((q as u32, s));
                }
            }
        }
    }

    /// After the instant t has settled: every NIC marked computes its holders' release times
    /// from the rates and counts now, releases those due, and schedules the others' events.
    pub(super) fn look_again(&mut self, t: f64, model: &dyn EventModel) {
        while let Some(q) = self.rel.dirty.pop() {
            let q = q as usize;
            self.rel.marked[q] = false;
            if self.rel.rewatch[q] {
                self.rewatch(q);
            }
            let (mut left_ahead, mut rate_ahead) = (0.0, 0.0);
            for &g in &self.rel.ahead[q] {
                left_ahead += model.remaining(g as usize, t).unwrap_or(0.0);
                rate_ahead += model.rate(g as usize);
            }
            let mut now = std::mem::take(&mut self.rel.now);
            for k in 0..self.rel.holders[q].len() {
                let h = self.rel.holders[q][k] as usize;
                let Some(left) = model.remaining(h, t) else { continue };
                let over = left + left_ahead - self.flows.nic_buffer_now(h, &self.in_flight);
                let rate = model.rate(h) + rate_ahead;
                let fit = if over <= SAME_TIME * self.flows.volume[h] {
                    t
                } else if rate > 0.0 {
                    t + over / rate
                } else {
                    f64::INFINITY
                };
                let due = fit.max(self.rel.earliest[h]);
                if due <= t + SAME_TIME * t {
                    now.push(h as u32);
                } else if (due - self.rel.due[h]).abs() > SAME_TIME * due {
                    // A time within one instant of the live event's keeps it.
                    self.rel.due[h] = due;
                    self.rel.live[h] = 0;
                    if due.is_finite() {
                        let r = &mut self.rel;
                        // 0 means no live event; a wrapped count skips it.
                        r.seq = r.seq.wrapping_add(1).max(1);
                        r.live[h] = r.seq;
                        r.events.push(Reverse(Join { t: due, seq: r.seq, flow: h as u32 }));
                    }
                }
            }
            for &h in &now {
                self.release_early(h as usize, t);
            }
            now.clear();
            self.rel.now = now;
        }
    }
}
