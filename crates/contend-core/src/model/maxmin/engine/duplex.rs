//! The event engine's side of a per-direction duplex loss (see `maxmin::duplex`): after an
//! instant's rebalance, move the pairs' capacities to the new loads and rebalance the routes
//! through each one that moved, until none moves.

use super::{Engine, TIE};
use crate::error::Result;
use crate::model::maxmin::duplex;

impl Engine<'_> {
    /// Settle the per-direction duplex capacities at t; `touched` collects every resource whose
    /// load may have changed on the way (the rebalances each report their own).
    pub(super) fn settle_duplex(&mut self, t: f64, touched: &mut Vec<u32>) -> Result<()> {
        let mut seen = std::mem::take(&mut self.duplex_seen);
        let result = self.duplex_rounds(t, touched, &mut seen);
        for &l in touched.iter() {
            seen[l as usize] = false;
        }
        self.duplex_seen = seen;
        result
    }

    fn duplex_rounds(&mut self, t: f64, touched: &mut Vec<u32>, seen: &mut [bool]) -> Result<()> {
        let mut add = |touched: &mut Vec<u32>, from: &[u32]| {
            for &l in from {
                if !std::mem::replace(&mut seen[l as usize], true) {
                    touched.push(l);
                }
            }
        };
        add(touched, &self.touched);
        for _ in 0..duplex::ROUNDS {
            let mut moved: Vec<(u32, f64)> = Vec::new();
            duplex::update(&self.c.duplex_pairs, &self.c.cap, &self.load, &mut self.cap, |l, old| moved.push((l, old)));
            if !self.rebalance_recapped(t, &moved)? {
                return Ok(());
            }
            add(touched, &self.touched);
        }
        Ok(())
    }

    /// Rebalance the routes through resources whose capacity moved at t (`moved`: each with its
    /// old capacity); false where none can have changed. Below the lower of the old and new
    /// level at which each moved resource fills, progressive filling runs the same, so the
    /// routes through it that are slower (frozen elsewhere, with their groups) keep their rates.
    pub(super) fn rebalance_recapped(&mut self, t: f64, moved: &[(u32, f64)]) -> Result<bool> {
        let mut theta = f64::INFINITY;
        for &(l, old) in moved {
            let l = l as usize;
            if !self.users[l].is_empty() {
                theta = theta.min(if self.weight[l] > 0.0 { old.min(self.cap[l]) / self.weight[l] } else { 0.0 });
            }
        }
        let floor = theta * (1.0 - TIE);
        let mut changed: Vec<u32> = Vec::new();
        for &(l, _) in moved {
            changed.extend(self.users[l as usize].iter().map(|&(r, _)| r).filter(|&r| self.route_rate(r as usize) >= floor));
        }
        if changed.is_empty() {
            return Ok(false);
        }
        changed.sort_unstable();
        changed.dedup();
        self.rebalance(t, &changed, &[], theta, true)?;
        Ok(true)
    }
}
