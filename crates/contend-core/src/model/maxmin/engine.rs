//! The incremental event engine of maxmin.
//!
//! Transfers with the same route always get the same rate, so bandwidth is shared between
//! routes, each weighted by its transfers in flight; a route's transfers finish in a fixed order
//! of the service S(t) each has received. Routes frozen at the same full resource b share its
//! level λ_b and form a group (groups.rs), whose clock carries their service.
//!
//! When transfers join or leave, only part of the allocation can change. With θ the smallest
//! level among groups that lose a transfer and a lower bound on every joining route's new rate
//! (capacity over weight at its tightest resource), every group below θ keeps its level:
//! progressive filling runs the same up to θ with or without the change. The groups at θ or
//! above that share a resource, directly or through other such groups, with a changed route
//! are the only ones that may move.
//!
//! Fast path: if no group emptied and no new route joined, the grouping is assumed to hold and
//! the moving groups' levels solve "every group's resource is exactly full", a linear system of
//! one unknown per group. If the solution is positive, fills no resource beyond capacity and
//! leaves every group the fastest on its own resource, each route has a full resource on which
//! no route is faster: that is the max-min allocation, which is unique. Otherwise, and whenever
//! the grouping changed, the moving routes are refilled by progressive filling on what the
//! fixed groups leave, and regrouped by where they froze.

mod duplex;
mod fanout;
mod reroute;

use super::fanout::{Fanout, Readers};
use super::fill::{raise, Filler};
use super::groups::{Groups, Stamp, NONE};
use super::solve::{solve, MOST_UNKNOWNS};
use super::spans::{Span, Spans, NO_SPAN};
use crate::error::{Error, Result};
use crate::flow::FlowTable;
use crate::heap::IndexHeap;
use crate::model::{EventModel, SAME_TIME};
use std::cmp::Reverse;

/// A group within this fraction of θ may move, since ties at θ are not fixed; also the
/// tolerance of the fast path's checks.
const TIE: f64 = 1e-9;
/// The fast path solves for at most this many group levels at once.
const FAST_GROUPS: usize = 48;
const _: () = assert!(FAST_GROUPS <= MOST_UNKNOWNS);
/// Narrowed refills tried, each opening the resources where the last one was not max-min,
/// before a refill through every resource.
const WIDENINGS: usize = 6;

pub struct Engine<'c> {
    c: &'c FlowTable,
    /// Capacity of each resource now: the flow table's, less a per-direction duplex loss or a
    /// served GPU's loss to several readers (`fan`).
    cap: Vec<f64>,
    fan: &'c Fanout,
    /// Readers in flight per served resource, and the resources whose count of readers crossed
    /// between one and two in the instant being processed.
    readers: Readers,
    fan_moved: Vec<u32>,
    /// Per resource, whether `settle_duplex` has listed it as touched (empty without pairs).
    duplex_seen: Vec<bool>,
    /// Routes (their transfers in flight) and bottleneck groups, and each group's resources.
    g: Groups,
    spans: Spans,
    /// Per route entry (hop), while its route is in a group: the id of the group's span of its resource.
    span_at: Vec<u32>,
    /// Per route entry j of a route of h hops, once the route has been in the group frozen at
    /// that entry's resource: where that group's span ids of the route's h resources start in
    /// `span_ids` (NO_SPAN until then; each id NO_SPAN until first met; spans.rs). Made as the
    /// route meets the group: memory for the pairs a run uses, not h × h for every route.
    span_col: Vec<u32>,
    span_ids: Vec<u32>,
    /// Next finish of each group.
    finishes: IndexHeap,
    seq: u64,
    /// Per resource: routes in flight with the entry of the resource in each route's hops
    /// (`slot[e]`: where route entry e sits in its row), and the coefficient sum of their
    /// transfers. The groups on a resource are read off its routes (`groups_on`).
    users: Vec<Vec<(u32, u32)>>,
    slot: Vec<u32>,
    weight: Vec<f64>,
    /// Per resource: bytes/s its transfers take (Σ weight × level over its routes), kept as
    /// weights and levels change, so that a refill need not sum rows of hundreds of routes.
    load: Vec<f64>,
    /// What the instant being processed changed: routes that gained or lost a transfer, the
    /// routes that gained one, the lowest level of a group that lost one, whether a group emptied.
    changed: Vec<u32>,
    gained: Vec<u32>,
    theta: f64,
    regroup: bool,
    finished: Vec<u32>,
    /// Refill scratch: new group per affected route; per group, members staying in it, and
    /// the epoch at which its level was set.
    new_group: Vec<u32>,
    staying: Vec<u32>,
    level_set: Vec<u32>,
    /// The last fill left resources with slack out of the selection; per resource, the
    /// highest new rate of a refilled route on it.
    narrowed: bool,
    top: Vec<f64>,
    /// Resources a narrowed refill of this rebalance passes changes through although they have
    /// slack (`open[l] == opening`): where an earlier try was not max-min.
    open: Vec<u32>,
    opening: u32,
    /// The fill (epoch) after which each resource was opened.
    opened_by: Vec<u32>,
    /// Set when a fill ended by round-off: the next event refills instead of trusting groups.
    inexact: bool,
    res_mark: Vec<u32>,
    group_mark: Vec<u32>,
    /// Resources `narrow_holds` has looked at in this epoch.
    looked: Vec<u32>,
    epoch: u32,
    resid: Vec<f64>,
    filler: Filler,
    affected: Vec<u32>,
    touched: Vec<u32>,
    hit: Vec<u32>,
    new_rate: Vec<f64>,
    index: Vec<u32>,
    system: Vec<f64>,
    /// Per row of `system`, the columns that may be nonzero (`solve` walks only those).
    system_rows: Vec<u64>,
    rhs: Vec<f64>,
    /// Per touched resource, the load the fast path's new levels add.
    shift: Vec<f64>,
    /// Per resource l, at least the level of every group other than l's own that crosses it:
    /// raised wherever a level rises or a route joins a group, set exactly where the fast path
    /// walks l's routes. When l's own group slows down to no less than this, no group crossing
    /// l can be faster, and the walk is not needed.
    others: Vec<f64>,
    /// The walks of this fast path: (resource, the fastest other group after it), kept if the
    /// solution is.
    walked: Vec<(u32, f64)>,
    /// Per transfer, the route it moves on now: its flow table's, or its tail once moved there
    /// (`release_frees_nic`, reroute.rs). A copy, so that reading it costs what reading the
    /// flow table's did (no test of whether the rule is on).
    on_route: Vec<u32>,
}

/// Mark resource l in this epoch, once. A function of the fields, not of the engine, so that a
/// loop over a borrowed span or route list can call it.
#[inline]
fn mark(marks: &mut [u32], touched: &mut Vec<u32>, epoch: u32, l: u32) {
    if marks[l as usize] != epoch {
        marks[l as usize] = epoch;
        touched.push(l);
    }
}

/// `mark` for the fast path, which also clears the resource's `shift` and `top` for `holds`
/// (here, where the resource is first touched, rather than in a walk of its own).
#[inline]
fn mark_clear(marks: &mut [u32], touched: &mut Vec<u32>, shift: &mut [f64], top: &mut [f64], epoch: u32, l: u32) {
    // Cut to one length: the resource is checked against `marks` only, not once per slice.
    let (shift, top) = (&mut shift[..marks.len()], &mut top[..marks.len()]);
    if marks[l as usize] != epoch {
        marks[l as usize] = epoch;
        touched.push(l);
        shift[l as usize] = 0.0;
        top[l as usize] = 0.0;
    }
}

/// `mark_clear` each resource of a group's spans: the fields apart, so that the span list is
/// walked once, not looked up per span, and the epoch a local, not read again from the engine
/// after each span's stores.
#[inline]
fn mark_spans(spans: &[Span], marks: &mut [u32], touched: &mut Vec<u32>, shift: &mut [f64], top: &mut [f64], epoch: u32) {
    for s in spans {
        mark_clear(marks, touched, shift, top, epoch, s.res);
    }
}

impl<'c> Engine<'c> {
    fn entries(&self, r: usize) -> std::ops::Range<usize> {
        self.c.routes.off[r] as usize..self.c.routes.off[r + 1] as usize
    }

    fn hops(&self, r: usize) -> &'c [(u32, f64)] {
        self.c.routes.of(r)
    }

    fn route_rate(&self, r: usize) -> f64 {
        match self.g.route[r].group {
            NONE => 0.0,
            b => self.g.level[b as usize],
        }
    }

    /// Routes in flight on resource l with a group: (group, coefficient sum of the route's
    /// transfers there). The groups crossing l are read off its routes, each with its group.
    fn groups_on(&self, l: usize) -> impl Iterator<Item = (u32, f64)> + '_ {
        self.users[l].iter().filter_map(|&(r, e)| match self.g.route[r as usize].group {
            NONE => None,
            g => Some((g, self.g.route[r as usize].count as f64 * self.c.routes.hops[e as usize].1)),
        })
    }

    /// Group b runs at `level` from t on; its routes' resources carry the difference.
    fn set_level(&mut self, b: usize, t: f64, level: f64) {
        let delta = level - self.g.level[b];
        if delta != 0.0 {
            let (load, others) = (&mut self.load[..], &mut self.others[..]);
            for s in self.spans.of(b) {
                load[s.res as usize] += s.weight * delta;
                if delta > 0.0 && s.res as usize != b {
                    raise(&mut others[s.res as usize], level);
                }
            }
        }
        self.g.set_level(b, t, level);
    }

    fn enter_group(&mut self, r: usize, b: usize, t: f64) {
        self.g.join(r, b, t);
        let count = self.g.route[r].count as f64;
        let k = count * self.g.level[b];
        let hops = self.hops(r);
        // The group is the resource the route froze at: one of its own.
        let j = hops.iter().position(|&(l, _)| l as usize == b).expect("a route's group is one of its resources");
        let first = self.c.routes.off[r] as usize;
        if self.span_col[first + j] == NO_SPAN {
            self.span_col[first + j] = u32::try_from(self.span_ids.len()).expect("fewer than 2^32 span ids");
            self.span_ids.resize(self.span_ids.len() + hops.len(), NO_SPAN);
        }
        let ids = self.span_col[first + j] as usize;
        for (i, &(l, a)) in hops.iter().enumerate() {
            self.load[l as usize] += k * a;
            if l as usize != b {
                raise(&mut self.others[l as usize], self.g.level[b]);
            }
            self.span_at[first + i] = self.spans.join(b as u32, l, count * a, &mut self.span_ids[ids + i]);
        }
    }

    fn exit_group(&mut self, r: usize, t: f64) {
        let b = self.g.route[r].group as usize;
        let count = self.g.route[r].count as f64;
        let k = count * self.g.level[b];
        for e in self.entries(r) {
            let (l, a) = self.c.routes.hops[e];
            self.load[l as usize] -= k * a;
            self.spans.leave(b as u32, self.span_at[e], -count * a);
        }
        self.g.leave(r, t);
    }

    /// Change route r's transfer count by `d` (±1).
    fn recount(&mut self, r: usize, d: i32) {
        self.g.route[r].count = (self.g.route[r].count as i32 + d) as u32;
        let (rate, group) = (self.route_rate(r), self.g.route[r].group);
        for e in self.entries(r) {
            let (l, a) = self.c.routes.hops[e];
            self.weight[l as usize] += d as f64 * a;
            self.load[l as usize] += d as f64 * a * rate;
            if group != NONE {
                self.spans.add(group, self.span_at[e], d as f64 * a);
            }
        }
    }

    fn set_head(&mut self, r: usize) {
        self.g.route[r].head = self.g.route[r].members.peek().map(|Reverse(s)| s.t).unwrap_or(f64::INFINITY);
        if self.g.route[r].group != NONE {
            self.g.rekey(r);
        }
    }

    fn attach(&mut self, r: usize) {
        for e in self.entries(r) {
            let l = self.c.routes.hops[e].0 as usize;
            self.slot[e] = self.users[l].len() as u32;
            self.users[l].push((r as u32, e as u32));
        }
    }

    /// Always inlined: a second caller (reroute.rs) would otherwise make it a call on every finish.
    #[inline(always)]
    fn detach(&mut self, r: usize) {
        for e in self.entries(r) {
            let l = self.c.routes.hops[e].0 as usize;
            let pos = self.slot[e] as usize;
            self.users[l].swap_remove(pos);
            if let Some(&(_, moved)) = self.users[l].get(pos) {
                self.slot[moved as usize] = pos as u32;
            }
            if self.users[l].is_empty() {
                // Exact zero, so that round-off cannot accumulate across busy periods.
                self.weight[l] = 0.0;
                self.load[l] = 0.0;
            }
        }
    }

    /// Transfer f's route now.
    #[inline]
    pub(in crate::model::maxmin) fn route_now(&self, f: usize) -> usize {
        self.on_route[f] as usize
    }

    fn add_flow(&mut self, f: usize, t: f64) {
        self.add_on(f, self.c.route_of[f] as usize, self.c.volume[f], t);
    }

    /// Transfer f starts moving at t on route r with `bytes` to go. Always inlined: a second
    /// caller (reroute.rs) would otherwise make it a call on every join.
    #[inline(always)]
    fn add_on(&mut self, f: usize, r: usize, bytes: f64, t: f64) {
        let s = self.g.service(r, t);
        if self.g.route[r].count == 0 {
            self.attach(r);
        }
        self.recount(r, 1);
        self.seq += 1;
        self.g.route[r].members.push(Reverse(Stamp { t: s + bytes, seq: self.seq, flow: f as u32 }));
        self.set_head(r);
    }

    /// Take the transfers of group b that are done at t off their routes, into `done`; the
    /// routes that lost one go to `changed`. Returns whether the group emptied.
    /// With `force`, the group's first transfer finishes whatever round-off says: the finish
    /// queue said the group finishes now, and a finish must never be dropped.
    fn finish_group(&mut self, b: usize, t: f64, done: &mut Vec<u32>, changed: &mut Vec<u32>, mut force: bool) -> bool {
        let slack = self.g.level[b] * SAME_TIME * t;
        while let Some((key, r)) = self.g.first(b) {
            if !force && key > self.g.clock_at(b, t) + slack {
                break;
            }
            let s = self.g.service(r, t);
            let before = done.len();
            while let Some(Reverse(top)) = self.g.route[r].members.peek() {
                if top.t > s + slack && !std::mem::take(&mut force) {
                    break;
                }
                let f = top.flow;
                self.g.route[r].members.pop();
                self.recount(r, -1);
                done.push(f);
            }
            if done.len() == before {
                break;
            }
            changed.push(r as u32);
            if self.g.route[r].count == 0 {
                self.exit_group(r, t);
                self.detach(r);
            } else {
                self.set_head(r);
            }
        }
        self.g.len(b) == 0
    }

    fn mark_res(&mut self, l: u32) {
        mark(&mut self.res_mark, &mut self.touched, self.epoch, l);
    }

    fn mark_group(&mut self, b: u32) {
        if self.group_mark[b as usize] != self.epoch {
            self.group_mark[b as usize] = self.epoch;
            self.hit.push(b);
            mark_spans(self.spans.of(b as usize), &mut self.res_mark, &mut self.touched, &mut self.shift, &mut self.top, self.epoch);
        }
    }

    fn mark_route(&mut self, r: usize) {
        self.g.route[r].mark = self.epoch;
        self.affected.push(r as u32);
        for &(l, _) in self.c.routes.of(r) {
            mark(&mut self.res_mark, &mut self.touched, self.epoch, l);
        }
    }

    /// The level of group b after the fast path's solution `x` (over `hit`), or as it was.
    fn level_after(&self, b: u32, x: &[f64]) -> f64 {
        if self.group_mark[b as usize] == self.epoch {
            x[self.index[b as usize] as usize]
        } else {
            self.g.level[b as usize]
        }
    }

    /// New levels for the groups at `floor` or above that `changed` reaches, if the grouping
    /// still holds; false leaves everything as it was.
    fn solve_levels(&mut self, t: f64, changed: &[u32], floor: f64) -> bool {
        self.epoch += 1;
        self.hit.clear();
        self.touched.clear();
        for &r in changed {
            match self.g.route[r as usize].group {
                NONE => {
                    for &(l, _) in self.c.routes.of(r as usize) {
                        mark_clear(&mut self.res_mark, &mut self.touched, &mut self.shift, &mut self.top, self.epoch, l);
                    }
                }
                b => self.mark_group(b),
            }
        }
        // A change reaches the group frozen at each resource it touches, not the groups that
        // merely cross it (their levels are set at their own resources); `holds` checks that
        // none of those ends up faster than the resource's new level.
        // The fields apart, each cut to one length (a touched resource bounds-checked once, not
        // once per field); `mark_spans` is `mark_group`'s walk.
        let (epoch, nres) = (self.epoch, self.group_mark.len());
        let (group_mark, res_mark, shift, top) = (&mut self.group_mark[..], &mut self.res_mark[..nres], &mut self.shift[..nres], &mut self.top[..nres]);
        let (level, members) = (&self.g.level[..nres], &self.g.all_members()[..nres]);
        let (touched, hit) = (&mut self.touched, &mut self.hit);
        let mut next = 0;
        while let Some(&l) = touched.get(next) {
            next += 1;
            let l = l as usize;
            if group_mark[l] != epoch && !members[l].is_empty() && level[l] >= floor {
                group_mark[l] = epoch;
                hit.push(l as u32);
                mark_spans(self.spans.of(l), res_mark, touched, shift, top, epoch);
                if hit.len() > FAST_GROUPS {
                    return false;
                }
            }
        }
        let n = self.hit.len();
        if n > FAST_GROUPS {
            // A dense solve costs n³: past this size a progressive refill is cheaper.
            return false;
        }
        for (i, &b) in self.hit.iter().enumerate() {
            self.index[b as usize] = i as u32;
        }
        self.system.clear();
        self.system.resize(n * n, 0.0);
        self.system_rows.clear();
        self.system_rows.resize(n, 0);
        self.rhs.clear();
        // Row i: resource hit[i] full. Column j: group hit[j]'s weight there (its span); what
        // the groups that keep their levels take is the resource's load less the moving ones'.
        // The moving groups' take of row i, Σ_j weight × level, is summed in the same walk, in
        // the order of j as a sum over the row would (a group has one span per resource).
        self.rhs.resize(n, 0.0);
        let nres = self.group_mark.len();
        let (system, pattern, moving) = (&mut self.system[..], &mut self.system_rows[..], &mut self.rhs[..n]);
        let (marks, index) = (&self.group_mark[..], &self.index[..nres]);
        let epoch = self.epoch;
        for (j, &g) in self.hit.iter().enumerate() {
            let level = self.g.level[g as usize];
            for s in self.spans.of(g as usize) {
                if marks[s.res as usize] == epoch {
                    let i = index[s.res as usize] as usize;
                    system[i * n + j] += s.weight;
                    pattern[i] |= 1 << j;
                    moving[i] += s.weight * level;
                }
            }
        }
        for (i, &b) in self.hit.iter().enumerate() {
            // (cap − load) + moving, as before: a sum of two is the same either way round.
            self.rhs[i] += self.cap[b as usize] - self.load[b as usize];
        }
        let mut x = std::mem::take(&mut self.rhs);
        self.walked.clear();
        let ok = solve(&mut self.system, &mut x, &mut self.system_rows).is_some() && x.iter().all(|&v| v > 0.0 && v.is_finite()) && self.holds(&x);
        if ok {
            // One length: one bounds check per resource, not two.
            let (load, shift) = (&mut self.load[..], &self.shift[..]);
            let shift = &shift[..load.len()];
            for &l in &self.touched {
                load[l as usize] += shift[l as usize];
            }
            for (i, &level) in x.iter().enumerate() {
                self.g.set_level(self.hit[i] as usize, t, level);
            }
            for &(l, fastest) in &self.walked {
                self.others[l as usize] = fastest;
            }
        }
        self.rhs = x;
        ok
    }

    /// Every touched resource within capacity, and every group the fastest on its resource.
    /// Before the change every group was no faster than the group frozen at each resource it
    /// crosses, and the groups that keep their levels still are, unless that group slows down:
    /// only then are they looked at. Leaves in `shift` the load the new levels add.
    fn holds(&mut self, x: &[f64]) -> bool {
        // Three slices of one length: a span's resource is checked against it once, not once
        // per slice (the compiler cannot know that the three vectors are as long).
        let nres = self.shift.len();
        // (`shift` and `top` were cleared where `solve_levels` marked each touched resource.)
        let (shift, top, others) = (&mut self.shift[..], &mut self.top[..nres], &mut self.others[..nres]);
        for (&g, &level) in self.hit.iter().zip(x) {
            let d = level - self.g.level[g as usize];
            for s in self.spans.of(g as usize) {
                shift[s.res as usize] += s.weight * d;
                raise(&mut top[s.res as usize], level);
                // A raise that the solution may not keep leaves the bound above, still a bound.
                if d > 0.0 && s.res != g {
                    raise(&mut others[s.res as usize], level);
                }
            }
        }
        // The fields apart, each cut to one length: a touched resource is checked once, not once
        // per field, and `none_faster` reads the engine while its walks are kept aside.
        let epoch = self.epoch;
        let (load, cap, shift, top, others) = (&self.load[..nres], &self.cap[..nres], &self.shift[..nres], &self.top[..nres], &self.others[..nres]);
        let (level, members, marks, index) = (&self.g.level[..nres], &self.g.all_members()[..nres], &self.group_mark[..nres], &self.index[..nres]);
        let mut walked = std::mem::take(&mut self.walked);
        let mut ok = true;
        for &l in &self.touched {
            let l = l as usize;
            if load[l] + shift[l] > cap[l] * (1.0 + TIE) {
                ok = false;
                break;
            }
            if members[l].is_empty() {
                continue;
            }
            // `level_after`, on the slices.
            let own = if marks[l] == epoch { x[index[l] as usize] } else { level[l] };
            // The moving groups on l are within `top`; the others keep levels within `others`.
            let bound = own * (1.0 + TIE);
            if !(top[l] <= bound && (own >= level[l] || others[l] <= bound || self.none_faster(l, x, bound, &mut walked))) {
                ok = false;
                break;
            }
        }
        self.walked = walked;
        ok
    }

    /// Whether no group crossing resource l runs faster than `bound` after the solution `x`.
    /// (Read off l's routes, as `groups_on`, but only their groups: this runs for every user of
    /// every resource whose own group slows down.)
    /// The walk finds the fastest of them other than l's own, which `others` takes if the
    /// solution is kept (listed in `walked`); it stops at the first one faster (the solution is then dropped).
    fn none_faster(&self, l: usize, x: &[f64], bound: f64, walked: &mut Vec<(u32, f64)>) -> bool {
        let mut fastest = 0.0f64;
        for &(r, _) in &self.users[l] {
            match self.g.route[r as usize].group {
                NONE => {}
                g if g as usize == l => {}
                g => {
                    let level = self.level_after(g, x);
                    if level > bound {
                        return false;
                    }
                    raise(&mut fastest, level);
                }
            }
        }
        walked.push((l as u32, fastest));
        true
    }

    /// Progressive filling of the routes at `floor` or above that `changed` reaches, on what
    /// the other groups leave; the routes are regrouped where they froze.
    fn refill(&mut self, t: f64, changed: &[u32], floor: f64) -> Result<()> {
        // First through full resources only (a resource with slack passes no change on while
        // it keeps its slack); where the result is not max-min, also through the resources
        // that showed it, and in the end, if that does not settle, through every resource.
        self.opening = self.opening.wrapping_add(1).max(1);
        for _ in 0..WIDENINGS {
            self.fill_affected(changed, floor, true);
            match self.narrow_holds() {
                Some(true) => return self.regroup(t),
                Some(false) => continue,
                None => break,
            }
        }
        self.fill_affected(changed, floor, false);
        self.regroup(t)
    }

    /// Select the routes at `floor` or above that `changed` reaches (with `narrow`, only
    /// through full resources and the changed routes' own), and fill them on what the other
    /// groups leave.
    fn fill_affected(&mut self, changed: &[u32], floor: f64, narrow: bool) {
        self.epoch += 1;
        self.affected.clear();
        self.touched.clear();
        self.hit.clear();
        for &r in changed {
            if self.g.route[r as usize].count > 0 && self.g.route[r as usize].mark != self.epoch {
                self.mark_route(r as usize);
            } else {
                for &(l, _) in self.hops(r as usize) {
                    self.mark_res(l);
                }
            }
        }
        let mut next = 0;
        let mut skipped = false;
        while let Some(&l) = self.touched.get(next) {
            next += 1;
            if narrow && self.open[l as usize] != self.opening {
                // A change reaches the routes frozen at a full resource it crosses, not those
                // that are bottlenecked elsewhere and merely cross it too (their rates are set
                // upstream, at lower levels); a resource with slack passes nothing on.
                skipped |= self.g.len(l as usize) < self.users[l as usize].len();
                for i in 0..self.g.len(l as usize) {
                    let u = self.g.members(l as usize)[i] as usize;
                    if self.g.route[u].mark != self.epoch && self.route_rate(u) >= floor {
                        self.mark_route(u);
                    }
                }
                continue;
            }
            for i in 0..self.users[l as usize].len() {
                let u = self.users[l as usize][i].0 as usize;
                if self.g.route[u].mark != self.epoch && self.route_rate(u) >= floor {
                    self.mark_route(u);
                }
            }
        }
        self.fill_selected();
        // Nothing left out: this already is the full selection.
        self.narrowed = narrow && skipped;
    }

    fn fill_selected(&mut self) {
        for &r in &self.affected {
            let b = self.g.route[r as usize].group;
            if b != NONE && self.group_mark[b as usize] != self.epoch {
                self.group_mark[b as usize] = self.epoch;
                self.hit.push(b);
            }
        }
        // What the routes left fixed take: the load less the refilled routes' share (every
        // route of a refilled group is refilled: they share its level, hence the floor test).
        // (The refilled routes' share is given back inside the fill, in its pass over their hops.)
        for &l in &self.touched {
            self.resid[l as usize] = self.cap[l as usize] - self.load[l as usize];
        }
        self.new_rate.clear();
        self.new_rate.resize(self.affected.len(), 0.0);
        let (routes, affected, level) = (&self.g.route, &self.affected, &self.g.level);
        let count = |k: usize| routes[affected[k] as usize].count as f64;
        let taken = |k: usize| match routes[affected[k] as usize].group {
            NONE => 0.0,
            b => count(k) * level[b as usize],
        };
        self.filler.fill_on(&self.c.routes, affected, count, taken, &self.touched, &mut self.resid, &mut self.new_rate);
    }

    /// Whether a narrowed fill is the max-min allocation: every refilled route is the fastest
    /// on the resource it froze at, and every other group is still frozen at a full resource on
    /// which no refilled route is faster. (`resid` holds what the fill left of each resource.)
    /// Some(false): not yet, and the resources that showed it are now open; None: not, and
    /// widening would not help.
    fn narrow_holds(&mut self) -> Option<bool> {
        if !self.narrowed {
            return Some(true);
        }
        let mut opened = false;
        let level_of = |e: &Self, g: u32| e.g.level[g as usize];
        for k in 0..self.affected.len() {
            let b = self.filler.at[k];
            if b == u32::MAX {
                return None;
            }
            // Routes that froze at the same resource froze at the same level: one look does.
            if self.looked[b as usize] == self.epoch {
                continue;
            }
            self.looked[b as usize] = self.epoch;
            let x = self.new_rate[k] * (1.0 + TIE);
            if self.groups_on(b as usize).any(|(g, _)| self.group_mark[g as usize] != self.epoch && level_of(self, g) > x) {
                // Faster routes left out share the resource this one froze at: take them in.
                // Opened before this fill, yet still not max-min: widening will not help.
                // (Several refilled routes may freeze at one resource: the first opens it.)
                if self.open[b as usize] == self.opening && self.opened_by[b as usize] != self.epoch {
                    return None;
                }
                self.open[b as usize] = self.opening;
                self.opened_by[b as usize] = self.epoch;
                opened = true;
            }
        }
        for &l in &self.touched {
            let l = l as usize;
            // A group that stays frozen here needs this resource full and no refilled route faster.
            let stays = self.g.len(l) > 0 && self.group_mark[l] != self.epoch;
            // (`filler.top`: the highest new rate of a refilled route on each touched resource.)
            if stays && (self.resid[l] > self.cap[l] * TIE || self.filler.top[l] > self.g.level[l] * (1.0 + TIE)) {
                return None;
            }
        }
        Some(!opened)
    }

    /// Move the refilled routes into the groups where they froze, with their new levels.
    fn regroup(&mut self, t: f64) -> Result<()> {
        // Each affected route's new group: the resource it froze at.
        self.new_group.clear();
        for k in 0..self.affected.len() {
            let r = self.affected[k] as usize;
            let rate = self.new_rate[k];
            if rate.is_nan() || rate <= 0.0 {
                return Err(Error::Runtime(format!("maxmin gives a route no bandwidth at t = {t} s; a link on it has no capacity")));
            }
            let b = match self.filler.at[k] {
                u32::MAX => {
                    self.inexact = true;
                    self.hops(r)[0].0
                }
                b => b,
            };
            self.new_group.push(b);
        }
        // Routes that change group leave now; those that stay keep their place (and the group
        // clock its continuity): on a busy network most of a refill's routes stay.
        for k in 0..self.affected.len() {
            let r = self.affected[k] as usize;
            let b = self.g.route[r].group;
            if b != NONE && b != self.new_group[k] {
                self.exit_group(r, t);
            } else if b != NONE {
                self.staying[b as usize] += 1;
            }
        }
        for k in 0..self.affected.len() {
            let r = self.affected[k] as usize;
            let (b, rate) = (self.new_group[k] as usize, self.new_rate[k]);
            if self.group_mark[b] != self.epoch || self.level_set[b] != self.epoch {
                // First route of this refill in group b: the group takes the new level if all
                // its members are in the refill; otherwise it must keep the level it has.
                if self.g.len(b) == self.staying[b] as usize {
                    self.set_level(b, t, rate);
                } else if (self.g.level[b] - rate).abs() > TIE * rate {
                    return Err(Error::Runtime(format!("maxmin: routes frozen at resource {} disagree on its level at t = {t} s", self.c.name[b])));
                }
                self.level_set[b] = self.epoch;
            } else if (self.g.level[b] - rate).abs() > TIE * rate {
                return Err(Error::Runtime(format!("maxmin: routes frozen at resource {} disagree on its level at t = {t} s", self.c.name[b])));
            }
            if self.g.route[r].group == NONE {
                self.enter_group(r, b, t);
            }
            if self.group_mark[b] != self.epoch {
                self.group_mark[b] = self.epoch;
                self.hit.push(b as u32);
            }
        }
        for k in 0..self.affected.len() {
            self.staying[self.new_group[k] as usize] = 0;
            let r = self.affected[k] as usize;
            if self.g.route[r].group != NONE {
                self.staying[self.g.route[r].group as usize] = 0;
            }
        }
        Ok(())
    }

    /// Rebalance after the changes of one batch, then queue the next finish of every group
    /// that moved or lost a transfer.
    fn rebalance(&mut self, t: f64, changed: &[u32], gained: &[u32], mut theta: f64, regroup: bool) -> Result<()> {
        for &r in gained {
            for &(l, _) in self.hops(r as usize) {
                theta = theta.min(self.cap[l as usize] / self.weight[l as usize]);
            }
        }
        let floor = theta * (1.0 - TIE);
        let fast = !regroup && !self.inexact && gained.iter().all(|&r| self.g.route[r as usize].group != NONE);
        if !(fast && self.solve_levels(t, changed, floor)) {
            self.inexact = false;
            self.refill(t, changed, floor)?;
        }
        for i in 0..self.hit.len() + changed.len() {
            let b = match self.hit.get(i) {
                Some(&b) => b,
                // A changed route's group that is in `hit` (marked in this epoch) was queued
                // above: the same key again would leave the heap as it is.
                None => match self.g.route[changed[i - self.hit.len()] as usize].group {
                    NONE => continue,
                    b if self.group_mark[b as usize] == self.epoch => continue,
                    b => b,
                },
            };
            match self.g.next_finish(b as usize) {
                // A group's index breaks a tie of finishes, so that the earliest is one group.
                Some(at) if !at.is_nan() => self.finishes.set(b as usize, at, b),
                _ => self.finishes.remove(b as usize),
            }
        }
        Ok(())
    }
}

impl<'c> Engine<'c> {
    pub fn new(c: &'c FlowTable, fan: &'c Fanout) -> Engine<'c> {
        let nres = c.cap.len();
        let nroutes = c.routes.len();
        Engine {
            c,
            cap: c.cap.clone(),
            fan,
            readers: Readers::default(),
            fan_moved: Vec::new(),
            duplex_seen: if c.duplex_pairs.is_empty() { Vec::new() } else { vec![false; nres] },
            g: Groups::new(nres, nroutes),
            spans: Spans::new(nres),
            span_at: vec![NO_SPAN; c.routes.hops.len()],
            span_col: vec![NO_SPAN; c.routes.hops.len()],
            span_ids: Vec::new(),
            finishes: IndexHeap::new(nres),
            seq: 0,
            users: vec![Vec::new(); nres],
            slot: vec![0; c.routes.hops.len()],
            weight: vec![0.0; nres],
            load: vec![0.0; nres],
            changed: Vec::new(),
            gained: Vec::new(),
            theta: f64::INFINITY,
            regroup: false,
            finished: Vec::new(),
            new_group: Vec::new(),
            staying: vec![0; nres],
            level_set: vec![0; nres],
            narrowed: false,
            top: vec![0.0; nres],
            open: vec![0; nres],
            opened_by: vec![0; nres],
            opening: 0,
            inexact: false,
            res_mark: vec![0; nres],
            group_mark: vec![0; nres],
            looked: vec![0; nres],
            epoch: 0,
            resid: vec![0.0; nres],
            filler: Filler::new(nres),
            affected: Vec::new(),
            touched: Vec::new(),
            hit: Vec::new(),
            new_rate: Vec::new(),
            index: vec![0; nres],
            system: Vec::new(),
            system_rows: Vec::new(),
            rhs: Vec::new(),
            shift: vec![0.0; nres],
            others: vec![0.0; nres],
            walked: Vec::new(),
            on_route: c.route_of.clone(),
        }
    }
}

impl EventModel for Engine<'_> {
    fn join(&mut self, flow: usize, t: f64) {
        self.add_flow(flow, t);
        let moved = &mut self.fan_moved;
        self.readers.count(self.fan, flow, 1, |r| moved.push(r));
        let r = self.c.route_of[flow];
        self.changed.push(r);
        self.gained.push(r);
    }

    fn next_finish(&mut self) -> Option<f64> {
        self.finishes.peek().map(|(t, _)| t)
    }

    fn finish(&mut self, t: f64, done: &mut Vec<usize>) {
        let horizon = t + SAME_TIME * t;
        let mut finished = std::mem::take(&mut self.finished);
        let mut changed = std::mem::take(&mut self.changed);
        while let Some((_, b)) = self.finishes.peek().filter(|&(at, _)| at <= horizon) {
            self.finishes.remove(b);
            self.theta = self.theta.min(self.g.level[b]);
            finished.clear();
            self.regroup |= self.finish_group(b, t, &mut finished, &mut changed, false);
            if finished.is_empty() {
                self.regroup |= self.finish_group(b, t, &mut finished, &mut changed, true);
            }
            done.extend(finished.iter().map(|&f| f as usize));
            for &f in &finished {
                let moved = &mut self.fan_moved;
                self.readers.count(self.fan, f as usize, -1, |r| moved.push(r));
            }
        }
        self.finished = finished;
        self.changed = changed;
    }

    fn settle(&mut self, t: f64) -> Result<()> {
        let (changed, gained) = (std::mem::take(&mut self.changed), std::mem::take(&mut self.gained));
        self.touched.clear();
        let mut result = if changed.is_empty() { Ok(()) } else { self.rebalance(t, &changed, &gained, self.theta, self.regroup) };
        if result.is_ok() && !changed.is_empty() && !self.c.duplex_pairs.is_empty() {
            let mut touched = Vec::new();
            result = self.settle_duplex(t, &mut touched);
            self.touched = touched;
        }
        if result.is_ok() && !self.fan_moved.is_empty() {
            let mut touched = std::mem::take(&mut self.touched);
            result = self.settle_fanout(t, &mut touched);
            self.touched = touched;
        }
        (self.changed, self.gained) = (changed, gained);
        self.changed.clear();
        self.gained.clear();
        self.theta = f64::INFINITY;
        self.regroup = false;
        result
    }

    fn rate(&self, flow: usize) -> f64 {
        self.route_rate(self.route_now(flow))
    }

    /// The flow's finishing service less its route's service now: a look through the route's
    /// transfers in flight (few where a NIC queues them), for the executor's NIC release.
    fn remaining(&self, flow: usize, t: f64) -> Option<f64> {
        let r = self.route_now(flow);
        let end = self.g.route[r].members.iter().find(|m| m.0.flow == flow as u32)?.0.t;
        Some((end - self.g.service(r, t)).max(0.0))
    }

    fn loads(&mut self) -> (&[u32], &[f64]) {
        (&self.touched, &self.load)
    }

    fn reroute(&mut self, flow: usize, t: f64) {
        self.move_to_tail(flow, t);
    }
    fn carried(&mut self) -> Option<crate::model::Carried> {
        None
    }
}
