//! Rate models as event models: between two events the active set is fixed, so the model's
//! rates hold; the adaptor keeps each flow's bytes left and finds the next finish.

use super::{EventModel, RateModel};
use crate::error::Result;
use crate::flow::FlowTable;

/// A flow has finished when this fraction of its volume is left (guards float round-off).
pub const DONE: f64 = 1e-9;

pub struct RateAdaptor<'f, M> {
    pub model: M,
    flows: &'f FlowTable,
    /// Flows moving bytes, ascending: the order a rate model is asked in.
    active: Vec<usize>,
    rates: Vec<f64>,
    left: Vec<f64>,
    /// Time up to which `left` is accounted.
    now: f64,
    /// The next finish and the interval it was computed over, so that advancing to exactly
    /// that finish subtracts the very same interval.
    next: Option<(f64, f64)>,
    /// When the next finish was computed (NaN once `left` has moved past it).
    next_from: f64,
    dirty: bool,
    /// Scratch for `loads`: bytes/s per resource, and the resources in use.
    load: Vec<f64>,
    used: Vec<u32>,
}

impl<'f, M: RateModel> RateAdaptor<'f, M> {
    pub fn new(model: M, flows: &'f FlowTable) -> Self {
        RateAdaptor {
            model,
            flows,
            active: Vec::new(),
            rates: Vec::new(),
            left: flows.volume.clone(),
            now: 0.0,
            next: None,
            next_from: f64::NAN,
            dirty: false,
            load: vec![0.0; flows.cap.len()],
            used: Vec::new(),
        }
    }

    /// Account the bytes moved up to `t`. Advancing from where `settle` computed the next
    /// finish to exactly that finish subtracts the very interval it was computed over (even
    /// where t + dt rounds to t, so that the flow does finish); any other advance subtracts
    /// t - now, and the stored interval then no longer applies.
    fn advance(&mut self, t: f64) {
        let dt = match self.next {
            Some((end, dt)) if end == t && self.next_from == self.now => dt,
            _ if t <= self.now => return,
            _ => t - self.now,
        };
        for (&i, &r) in self.active.iter().zip(&self.rates) {
            self.left[i] -= r * dt;
        }
        self.now = self.now.max(t);
        // The interval is used (or overtaken): a later advance to its end must not reuse it.
        self.next_from = f64::NAN;
    }
}

impl<M: RateModel> EventModel for RateAdaptor<'_, M> {
    fn join(&mut self, flow: usize, t: f64) {
        self.advance(t);
        let k = self.active.partition_point(|&x| x < flow);
        self.active.insert(k, flow);
        self.rates.insert(k, 0.0);
        self.dirty = true;
    }

    fn next_finish(&mut self) -> Option<f64> {
        self.next.map(|(end, _)| end)
    }

    fn finish(&mut self, t: f64, done: &mut Vec<usize>) {
        self.advance(t);
        let (mut k, volume) = (0, &self.flows.volume);
        while k < self.active.len() {
            let i = self.active[k];
            if self.left[i] <= DONE * volume[i] {
                self.left[i] = 0.0;
                done.push(i);
                self.active.remove(k);
                self.rates.remove(k);
            } else {
                k += 1;
            }
        }
        self.next = None;
        self.dirty = true;
    }

    fn settle(&mut self, t: f64) -> Result<()> {
        self.advance(t);
        if !self.dirty {
            return Ok(());
        }
        self.dirty = false;
        self.next = None;
        if self.active.is_empty() {
            return Ok(());
        }
        self.model.rates(&self.active, &mut self.rates);
        let dt = self.active.iter().zip(&self.rates).filter(|(_, &r)| r > 0.0).map(|(&i, &r)| self.left[i] / r).fold(f64::INFINITY, f64::min);
        if dt.is_finite() {
            self.next = Some((t + dt, dt));
            self.next_from = self.now;
        }
        Ok(())
    }

    fn rate(&self, flow: usize) -> f64 {
        match self.active.binary_search(&flow) {
            Ok(k) => self.rates[k],
            Err(_) => 0.0,
        }
    }

    fn remaining(&self, flow: usize, t: f64) -> Option<f64> {
        let left = self.left[flow] - self.rate(flow) * (t - self.now).max(0.0);
        Some(left.max(0.0))
    }

    fn loads(&mut self) -> (&[u32], &[f64]) {
        // The last call's loads, cleared where they were listed.
        for l in self.used.drain(..) {
            self.load[l as usize] = 0.0;
        }
        for (&i, &r) in self.active.iter().zip(&self.rates) {
            for &(l, times) in self.flows.route(i) {
                if self.load[l as usize] == 0.0 {
                    self.used.push(l);
                }
                self.load[l as usize] += r * times;
            }
        }
        (&self.used, &self.load)
    }
    /// A rate model keeps a flow's route for life (no flow table it runs fills tail routes).
    fn reroute(&mut self, _flow: usize, _t: f64) {}
    fn carried(&mut self) -> Option<super::Carried> {
        None
    }
}
