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
//! It can only move when r or B does, or the messages it sums do:
//! - a rate of h or of a message ahead changes: the model then lists every resource of that
//!   message's route among those whose load may have changed (`EventModel::loads`); a NIC
//!   watches the first resource of each route its messages take, for the whole run;
//! - under `shared`, a message joins or leaves a resource at which h counts its share of a
//!   buffer: a NIC watches those of its holders' paths, woken where the executor counts a
//!   message in or out;
//! - a message joins or leaves the holders or `ahead`.
//!
//! Once the instant has settled, a NIC woken computes r and B again, and its holders' release
//! times where either moved. Nothing else moves them.
//!
//! The floor is where h's last byte can leave the NIC. Alone on its NIC (FCFS) that is its
//! volume at its narrowest capacity; an RR-N NIC with several holders sends their packets in
//! turn, so a holder bound at the NIC (the fastest of them) gets only its share of its injection
//! link (`FlowTable::nic_injection`): the link split max-min among the holders leaving by it (a
//! NIC on several links has a turn per link), those slower than the fastest held to their rate
//! (bound elsewhere), the others equally. While
//! bound there its bytes wait in the NIC, not in the buffers past it, so it is not released
//! before its volume has left at those shares (`injected`, advanced at each look; the shares
//! move only when a holder's rate or the holders do, which wakes the NIC). A holder bound
//! elsewhere counts what it sends at its rate, and keeps its narrowest capacity as the pace of
//! its floor: its bytes may run ahead into the buffers past the NIC.

use super::Executor;
use crate::flow::{FlowTable, NO_HOP, NO_NIC, NO_TAIL};
use crate::heap::IndexHeap;
use crate::model::{EventModel, SAME_TIME};

/// A holder of a NIC that moves (joined), and what its release time was computed from.
#[derive(Clone, Copy)]
struct Holder {
    f: u32,
    /// Its earliest release (join plus its volume at its narrowest capacity).
    earliest: f64,
    /// The rate (its own and its NIC's messages ahead) and buffer its release time was last
    /// computed from (NaN until then).
    seen: (f64, f64),
    /// Its narrowest capacity, its share of the NIC's injection link since `at`, and the
    /// bytes it can have injected by `at` (RR-N with several holders; the floor above).
    alone: f64,
    share: f64,
    at: f64,
    injected: f64,
    /// Whether its share was ever below `alone` while bound at the NIC: only then can the
    /// injection floor pass `earliest`.
    slowed: bool,
    /// Bound at the NIC at the last look: its floor runs at `share`; else its bytes may run
    /// ahead into the buffers past the NIC, and its floor at `alone`.
    at_nic: bool,
}

/// What `look_again` reads of a NIC, side by side: one cache line a NIC instead of one per field.
#[derive(Clone, Default)]
#[repr(align(64))]
struct Nic {
    holders: Vec<Holder>,
    /// Its messages released early and still in flight (their bytes left sit in the same
    /// buffers ahead of a holder's).
    ahead: Vec<u32>,
    /// The stamp of its live count watches.
    stamp: u32,
    /// Listed in `dirty`; its holders or `ahead` changed, a count it reads changed, since it
    /// last looked.
    marked: bool,
    moved: bool,
    recount: bool,
}

/// The early-release bookkeeping; every list empty when the NIC waits for delivery.
#[derive(Default)]
pub(super) struct Releases {
    /// Whether an early-release rule is on (`FlowTable::nic_buffer` filled).
    pub on: bool,
    nic: Vec<Nic>,
    /// Per resource: the NICs whose messages' routes start there (rates; `rates[rates_at[l]..
    /// rates_at[l + 1]]`), and under `shared` the (NIC, stamp) whose holders count messages
    /// there; an entry with an old stamp is dropped when seen.
    rates_at: Vec<u32>,
    rates: Vec<u32>,
    counts: Vec<Vec<(u32, u32)>>,
    /// NICs to look at again once the instant has settled, listed once each (`Nic::marked`).
    dirty: Vec<u32>,
    /// Release events by (time, sequence), one per transfer at most.
    events: IndexHeap,
    /// The last release event's sequence number (its own count: the joins' stays as it was).
    seq: u32,
    /// Scratch: holders released by one look; the narrowest capacities `inject` splits by.
    now: Vec<u32>,
    caps: Vec<f64>,
}

/// Per resource, the NICs whose messages' routes start there, ascending, each once
/// (`rates[rates_at[l]..rates_at[l + 1]]`). The messages are put in buckets by resource and
/// only each bucket's distinct NICs sorted: a sort of every (resource, NIC) pair, one per
/// message, was 0.7% of seed 003's study point.
fn first_resources(flows: &FlowTable) -> (Vec<u32>, Vec<u32>) {
    let resources = flows.cap.len();
    // A message's route's first resource, and its tail route's where it has one (it moves
    // there once released, still ahead of its NIC's holders: `release_frees_nic`).
    let first = |f: usize| if flows.nic[f] == NO_NIC { None } else { flows.route(f).first().map(|&(l, _)| l as usize) };
    let tail_first = |f: usize| match flows.tail_route.get(f) {
        Some(&r) if r != NO_TAIL => flows.routes.of(r as usize).first().map(|&(l, _)| l as usize),
        _ => None,
    };
    let tails = !flows.tail_route.is_empty();
    let mut at = vec![0u32; resources + 1];
    for f in 0..flows.len() {
        if let Some(l) = first(f) {
            at[l + 1] += 1;
        }
        if let Some(l) = tail_first(f).filter(|_| tails) {
            at[l + 1] += 1;
        }
    }
    for l in 0..resources {
        at[l + 1] += at[l];
    }
    let mut bucket = vec![0u32; at[resources] as usize];
    let mut fill = at.clone();
    for f in 0..flows.len() {
        if let Some(l) = first(f) {
            bucket[fill[l] as usize] = flows.nic[f];
            fill[l] += 1;
        }
        if let Some(l) = tail_first(f).filter(|_| tails) {
            bucket[fill[l] as usize] = flows.nic[f];
            fill[l] += 1;
        }
    }
    // A NIC met in resource l's bucket holds l + 1 (0: not met yet).
    let mut met = vec![0u32; flows.nics.len()];
    let mut rates_at = vec![0u32; resources + 1];
    let mut rates = Vec::new();
    for l in 0..resources {
        let start = rates.len();
        for &q in &bucket[at[l] as usize..at[l + 1] as usize] {
            if met[q as usize] != l as u32 + 1 {
                met[q as usize] = l as u32 + 1;
                rates.push(q);
            }
        }
        rates[start..].sort_unstable();
        rates_at[l + 1] = rates.len() as u32;
    }
    (rates_at, rates)
}

impl Releases {
    pub fn new(flows: &FlowTable) -> Releases {
        if flows.nic_buffer.is_empty() {
            return Releases::default();
        }
        let (n, nics, resources) = (flows.len(), flows.nics.len(), flows.cap.len());
        let (rates_at, rates) = first_resources(flows);
        Releases {
            on: true,
            nic: vec![Nic::default(); nics],
            rates_at,
            rates,
            counts: if flows.nic_buffer_shared { vec![Vec::new(); resources] } else { Vec::new() },
            dirty: Vec::new(),
            events: IndexHeap::new(n),
            seq: 0,
            now: Vec::new(),
            caps: Vec::new(),
        }
    }

    fn mark(&mut self, q: usize) {
        if !self.nic[q].marked {
            self.nic[q].marked = true;
            self.dirty.push(q as u32);
        }
    }

    /// NIC q's holders or `ahead` changed.
    fn moved(&mut self, q: usize) {
        self.nic[q].moved = true;
        self.mark(q);
    }

    /// Transfer f is released early at its NIC q: ahead of q's holders until delivered.
    pub fn ahead_of(&mut self, q: usize, f: usize) {
        self.nic[q].ahead.push(f as u32);
    }

    /// When the next release event is due.
    pub fn next(&self) -> Option<f64> {
        self.events.peek().map(|(t, _)| t)
    }

    /// The release event due by `horizon`, taken off the queue.
    pub fn take(&mut self, horizon: f64) -> Option<usize> {
        let (t, f) = self.events.peek()?;
        if t > horizon {
            return None;
        }
        self.events.remove(f);
        Some(f)
    }

    /// Resources whose load may have changed this instant (the model's list): the NICs whose
    /// routes start there look again. Not one with no holder: its look would do nothing (a
    /// woken NIC that is not marked has nothing else to look at), and a look only ever marks
    /// its own NIC again, so the others look in the same order.
    pub fn wake(&mut self, resources: &[u32]) {
        for &l in resources {
            for k in self.rates_at[l as usize]..self.rates_at[l as usize + 1] {
                let q = self.rates[k as usize] as usize;
                if !self.nic[q].holders.is_empty() {
                    self.mark(q);
                }
            }
        }
    }

    /// NIC q's next message changed (one queued where none waited): under `head_priority` its
    /// holders' buffers depend on it, so they are read again.
    pub fn next_changed(&mut self, q: usize) {
        self.nic[q].recount = true;
        self.mark(q);
    }

    /// Whether NICs count messages per resource (`shared`): otherwise `counted` has nothing to do.
    #[inline]
    pub fn counting(&self) -> bool {
        !self.counts.is_empty()
    }

    /// A message joined or left resource l: the NICs that count it look again.
    #[inline]
    pub fn counted(&mut self, l: usize) {
        let Some(list) = self.counts.get_mut(l).filter(|c| !c.is_empty()) else { return };
        let (nic, dirty) = (&mut self.nic, &mut self.dirty);
        list.retain(|&(q, s)| {
            let n = &mut nic[q as usize];
            if s != n.stamp {
                return false;
            }
            n.recount = true;
            if !n.marked {
                n.marked = true;
                dirty.push(q);
            }
            true
        });
    }
}

impl Executor<'_> {
    /// Holder f starts moving at t: its NIC looks once the instant has settled.
    pub(super) fn hold_joined(&mut self, f: usize, t: f64) {
        let q = self.op[f].nic as usize;
        let alone = self.alone(f);
        let earliest = t + self.flows.volume[f] / alone;
        let seen = (f64::NAN, f64::NAN);
        let holder = Holder { f: f as u32, earliest, seen, alone, share: alone, at: t, injected: 0.0, slowed: false, at_nic: true };
        self.rel.nic[q].holders.push(holder);
        self.rel.moved(q);
    }

    /// Holder f no longer holds its NIC (released or delivered): its event is void.
    pub(super) fn hold_ended(&mut self, f: usize) {
        let q = self.op[f].nic as usize;
        let h = &mut self.rel.nic[q].holders;
        if let Some(k) = h.iter().position(|g| g.f as usize == f) {
            h.swap_remove(k);
        }
        self.rel.events.remove(f);
        self.rel.moved(q);
    }

    /// Transfer f was delivered: if its NIC released it early, it is no longer ahead there.
    pub(super) fn ahead_delivered(&mut self, f: usize) {
        let q = self.op[f].nic;
        if q == NO_NIC {
            return;
        }
        let a = &mut self.rel.nic[q as usize].ahead;
        if let Some(k) = a.iter().position(|&g| g as usize == f) {
            a.swap_remove(k);
            self.rel.moved(q as usize);
        }
    }

    /// Holder f's release event came due at t: f's NIC takes its next message.
    pub(super) fn release_early(&mut self, f: usize, t: f64) {
        if !self.holds[f] {
            return;
        }
        self.rel.ahead_of(self.op[f].nic as usize, f);
        if self.flows.tail_route.get(f).is_some_and(|&r| r != NO_TAIL) {
            self.tails.push(f);
        }
        self.release(f, t);
    }

    /// After the instant t has settled: every NIC woken computes r and B again, and its
    /// holders' release times where either moved; those due now are released, the others'
    /// events scheduled (or kept, where the time is the same).
    ///
    /// Under `shared`, a NIC whose holders or `ahead` moved watches the resources its holders'
    /// paths enter, where they count messages (its earlier watches void by a new stamp): in the
    /// walk that sums its holders' buffers, which reads the same paths.
    pub(super) fn look_again(&mut self, t: f64, model: &dyn EventModel) {
        let watching = self.flows.nic_buffer_shared;
        while let Some(q) = self.rel.dirty.pop() {
            let q = q as usize;
            let n = &mut self.rel.nic[q];
            n.marked = false;
            let moved = std::mem::take(&mut n.moved);
            let stamp = if moved && watching {
                n.stamp = n.stamp.wrapping_add(1);
                Some(n.stamp)
            } else {
                None
            };
            if n.holders.is_empty() {
                continue;
            }
            let recount = moved || std::mem::take(&mut n.recount);
            let rate_ahead: f64 = n.ahead.iter().map(|&g| model.rate(g as usize)).sum();
            let shares_moved = !self.flows.nic_injection.is_empty() && inject(&mut n.holders, self.flows, t, model, &mut self.rel.caps);
            let mut left_ahead = None;
            let mut now = std::mem::take(&mut self.rel.now);
            for k in 0..self.rel.nic[q].holders.len() {
                let Holder { f: h, earliest, seen, alone, share, injected, slowed, at_nic, .. } = self.rel.nic[q].holders[k];
                let h = h as usize;
                let rate = model.rate(h) + rate_ahead;
                if let Some(s) = stamp {
                    let path = self.flows.path(h);
                    for &l in &path[..path.len().saturating_sub(1)] {
                        self.rel.counts[l as usize].push((q as u32, s));
                    }
                }
                // B moves only with a count it reads (or with the messages, or the next message).
                let buffer = if !recount {
                    seen.1
                } else if self.flows.nic_hop.is_empty() {
                    self.flows.nic_buffer_now(h, &self.in_flight)
                } else {
                    // `head_priority`: the message the NIC takes next queues behind h on the
                    // links their paths share (flow/release.rs, `past_shared`).
                    let from = self.nic_waiting[q].front().map_or(0, |&g| self.flows.past_shared(h, g));
                    self.flows.nic_buffer_past(h, from, &self.in_flight)
                };
                // The same r and B over the same messages and the same shares: the release
                // time stands (a floor at constant shares does not move with t).
                if !moved && !shares_moved && seen == (rate, buffer) {
                    continue;
                }
                self.rel.nic[q].holders[k].seen = (rate, buffer);
                let Some(left) = model.remaining(h, t) else { continue };
                let ahead =
                    *left_ahead.get_or_insert_with(|| self.rel.nic[q].ahead.iter().map(|&g| model.remaining(g as usize, t).unwrap_or(0.0)).sum::<f64>());
                let over = left + ahead - buffer;
                let fit = if over <= SAME_TIME * self.flows.volume[h] {
                    t
                } else if rate > 0.0 {
                    t + over / rate
                } else {
                    f64::INFINITY
                };
                let floor = if slowed { t + (self.flows.volume[h] - injected).max(0.0) / if at_nic { share } else { alone } } else { earliest };
                let due = fit.max(earliest).max(floor);
                if due <= t + SAME_TIME * t {
                    now.push(h as u32);
                } else if (due - self.rel.events.time(h)).abs() > SAME_TIME * due {
                    // A time within one instant of the live event's keeps it.
                    let r = &mut self.rel;
                    if due.is_finite() {
                        // Numbered as when 0 meant no live event: a wrapped count skips it.
                        r.seq = r.seq.wrapping_add(1).max(1);
                        r.events.set(h, due, r.seq);
                    } else {
                        r.events.remove(h);
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

/// Advance each holder's injected bytes to t at its share so far, then split each injection
/// link of the NIC among the holders leaving by it, as it now stands (the floor in the module's
/// comment). Whether any share moved.
fn inject(holders: &mut [Holder], flows: &FlowTable, t: f64, model: &dyn EventModel, caps: &mut Vec<f64>) -> bool {
    for h in holders.iter_mut() {
        h.injected += h.share * (t - h.at);
        h.at = t;
    }
    let link = |h: &Holder| flows.nic_injection[h.f as usize];
    let mut moved = false;
    for k in 0..holders.len() {
        let r = link(&holders[k]);
        // Each link once, at its first holder.
        if holders[..k].iter().any(|h| link(h) == r) {
            continue;
        }
        let cap = if r == NO_HOP { f64::INFINITY } else { flows.cap[r as usize] };
        moved |= split_link(holders, |h| link(h) == r, cap, model, caps);
    }
    moved
}

/// Split one injection link of capacity `cap` among the holders `on` it: the fastest take their
/// turns at the NIC and share equally what the others leave (the messages ahead have left the
/// NIC at packet level), none above its narrowest capacity; the others, bound elsewhere, inject
/// at their rate. Whether any of their shares moved.
fn split_link(holders: &mut [Holder], on: impl Fn(&Holder) -> bool, cap: f64, model: &dyn EventModel, caps: &mut Vec<f64>) -> bool {
    let tol = 1.0 - SAME_TIME.sqrt();
    let fastest = holders.iter().filter(|h| on(h)).map(|h| model.rate(h.f as usize)).fold(0.0, f64::max);
    let bound = |h: &Holder| model.rate(h.f as usize) >= fastest * tol;
    let mut left = cap;
    let mut shared = 0usize;
    for h in holders.iter().filter(|h| on(h)) {
        if bound(h) {
            shared += 1;
        } else {
            left -= model.rate(h.f as usize);
        }
    }
    // Equal shares, those capped at their narrowest capacity giving the rest what they leave.
    caps.clear();
    caps.extend(holders.iter().filter(|h| on(h) && bound(h)).map(|h| h.alone));
    caps.sort_unstable_by(f64::total_cmp);
    let mut level = f64::INFINITY;
    for (k, &c) in caps.iter().enumerate() {
        let even = left.max(0.0) / (shared - k) as f64;
        if c >= even {
            level = even;
            break;
        }
        left -= c;
    }
    let mut moved = false;
    for h in holders.iter_mut().filter(|h| on(h)) {
        let at_nic = bound(h);
        let share = if at_nic { h.alone.min(level) } else { model.rate(h.f as usize).min(h.alone) };
        moved |= share != h.share || at_nic != h.at_nic;
        h.share = share;
        h.at_nic = at_nic;
        h.slowed |= at_nic && share < h.alone * tol;
    }
    moved
}
