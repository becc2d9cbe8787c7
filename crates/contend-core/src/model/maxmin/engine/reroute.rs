//! A transfer's change of route mid-flight: an early-released head's bytes left move from its
//! whole route to its tail route (`release_frees_nic`, params.rs; flow/tail.rs), keeping its
//! transfer id, so that its report row, its finish and its NIC's bookkeeping stay one.
//!
//! Taking the transfer off its route is a finish without a delivery (its route loses one
//! transfer, its group may empty); putting it on the tail is a join with its bytes left. Both
//! are listed as the instant's changes, and `settle` rebalances them with the rest.

use super::super::groups::NONE;
use super::Engine;
use crate::flow::NO_TAIL;
use crate::model::SAME_TIME;

impl Engine<'_> {
    /// Move transfer f, in flight, to its tail route at t with its bytes left there; nothing
    /// where it has no tail route, is on it already, or is no longer in flight.
    pub(super) fn move_to_tail(&mut self, f: usize, t: f64) {
        let Some(&tail) = self.c.tail_route.get(f) else { return };
        let r = self.route_now(f);
        if tail == NO_TAIL || tail as usize == r {
            return;
        }
        let s = self.g.service(r, t);
        let Some(end) = self.g.route[r].members.iter().find(|m| m.0.flow == f as u32).map(|m| m.0.t) else { return };
        let left = end - s;
        if left <= SAME_TIME * self.c.volume[f] {
            // Done within this instant: its finish takes it off as it is.
            return;
        }
        self.g.route[r].members.retain(|m| m.0.flow != f as u32);
        let b = self.g.route[r].group;
        if b != NONE {
            // As a finish: a group losing a transfer bounds what may move (engine.rs, θ).
            self.theta = self.theta.min(self.g.level[b as usize]);
        }
        self.recount(r, -1);
        if self.g.route[r].count == 0 {
            if b != NONE {
                self.exit_group(r, t);
                self.regroup |= self.g.len(b as usize) == 0;
            }
            self.detach(r);
        } else {
            self.set_head(r);
        }
        if b != NONE {
            // The group's next finish may have been f's: queue it again (rebalance does so
            // too for every group that moves; this one may not).
            match self.g.next_finish(b as usize) {
                Some(at) if !at.is_nan() => self.finishes.set(b as usize, at, b),
                _ => self.finishes.remove(b as usize),
            }
        }
        self.changed.push(r as u32);
        self.on_route[f] = tail;
        self.add_on(f, tail as usize, left, t);
        self.changed.push(tail);
        self.gained.push(tail);
    }
}
