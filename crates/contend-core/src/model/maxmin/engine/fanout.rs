//! The event engine's side of a served GPU's loss to several readers (see `maxmin::fanout`): when
//! the number of devices reading through a resource crosses between one and two, move its
//! capacity and rebalance the routes through it.

use super::{Engine, TIE};
use crate::error::Result;

impl Engine<'_> {
    /// Set the capacities of the resources whose readers moved at t; `touched` collects every
    /// resource whose load may have changed (the rebalance reports its own).
    pub(super) fn settle_fanout(&mut self, t: f64, touched: &mut Vec<u32>) -> Result<()> {
        let mut moved = std::mem::take(&mut self.fan_moved);
        moved.sort_unstable();
        moved.dedup();
        let mut theta = f64::INFINITY;
        let mut changed: Vec<u32> = Vec::new();
        let mut olds: Vec<(u32, f64)> = Vec::new();
        for &l in &moved {
            let share = if self.readers.shared(l) { self.fan.share } else { 1.0 };
            let (old, new) = (self.cap[l as usize], self.c.cap[l as usize] * share);
            if old != new {
                self.cap[l as usize] = new;
                olds.push((l, old));
            }
        }
        moved.clear();
        self.fan_moved = moved;
        // As for a duplex loss (engine/duplex.rs): below the lower of the old and new level at
        // which each moved resource fills, progressive filling runs the same.
        for &(l, old) in &olds {
            let l = l as usize;
            if !self.users[l].is_empty() {
                theta = theta.min(if self.weight[l] > 0.0 { old.min(self.cap[l]) / self.weight[l] } else { 0.0 });
            }
        }
        let floor = theta * (1.0 - TIE);
        for &(l, _) in &olds {
            changed.extend(self.users[l as usize].iter().map(|&(r, _)| r).filter(|&r| self.route_rate(r as usize) >= floor));
        }
        if changed.is_empty() {
            return Ok(());
        }
        changed.sort_unstable();
        changed.dedup();
        self.rebalance(t, &changed, &[], theta, true)?;
        touched.extend_from_slice(&self.touched);
        touched.sort_unstable();
        touched.dedup();
        Ok(())
    }
}
