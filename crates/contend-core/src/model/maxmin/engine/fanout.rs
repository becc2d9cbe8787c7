//! The event engine's side of a served GPU's loss to several readers (see `maxmin::fanout`): when
//! the number of devices reading through a resource crosses between one and two, move its
//! capacity and rebalance the routes through it.

use super::Engine;
use crate::error::Result;

impl Engine<'_> {
    /// Set the capacities of the resources whose readers moved at t; `touched` collects every
    /// resource whose load may have changed (the rebalance reports its own).
    pub(super) fn settle_fanout(&mut self, t: f64, touched: &mut Vec<u32>) -> Result<()> {
        let mut moved = std::mem::take(&mut self.fan_moved);
        moved.sort_unstable();
        moved.dedup();
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
        // As for a duplex loss (engine/duplex.rs).
        if !self.rebalance_recapped(t, &olds)? {
            return Ok(());
        }
        touched.extend_from_slice(&self.touched);
        touched.sort_unstable();
        touched.dedup();
        Ok(())
    }
}
