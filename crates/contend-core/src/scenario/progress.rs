//! Progress of a run, without touching the executor: the model is wrapped so that every flow
//! it finishes is counted, and the caller hears (messages delivered, messages in all) about
//! 200 times a run. Computations end inside the executor and are not counted; a run's time
//! goes to its messages.

use crate::error::Result;
use crate::model::EventModel;

/// Called with (done, total) now and then.
pub type Progress<'a> = Option<&'a (dyn Fn(u64, u64) + Sync)>;

/// How many reports a run makes at most (besides the first and the last).
const REPORTS: u64 = 200;

pub struct Counting<'m, 'p> {
    inner: Box<dyn EventModel + 'm>,
    report: &'p (dyn Fn(u64, u64) + Sync),
    done: u64,
    total: u64,
    step: u64,
    next: u64,
}

impl<'m, 'p> Counting<'m, 'p> {
    /// `total`: the flows the model will finish (the run's messages).
    pub fn new(inner: Box<dyn EventModel + 'm>, total: u64, report: &'p (dyn Fn(u64, u64) + Sync)) -> Self {
        report(0, total);
        let step = total.div_ceil(REPORTS).max(1);
        Counting { inner, report, done: 0, total, step, next: step }
    }
}

impl EventModel for Counting<'_, '_> {
    fn join(&mut self, flow: usize, t: f64) {
        self.inner.join(flow, t)
    }
    fn horizon(&mut self, until: f64) {
        self.inner.horizon(until)
    }
    fn next_finish(&mut self) -> Option<f64> {
        self.inner.next_finish()
    }
    fn finish(&mut self, t: f64, done: &mut Vec<usize>) {
        let before = done.len();
        self.inner.finish(t, done);
        self.done += (done.len() - before) as u64;
        // One compare per instant; the callback (which may take a lock) only every `step` flows.
        if self.done >= self.next || self.done == self.total {
            (self.report)(self.done, self.total);
            self.next = self.done + self.step;
        }
    }
    fn settle(&mut self, t: f64) -> Result<()> {
        self.inner.settle(t)
    }
    fn rate(&self, flow: usize) -> f64 {
        self.inner.rate(flow)
    }
    fn remaining(&self, flow: usize, t: f64) -> Option<f64> {
        self.inner.remaining(flow, t)
    }
    fn loads(&mut self) -> (&[u32], &[f64]) {
        self.inner.loads()
    }
    fn reroute(&mut self, flow: usize, t: f64) {
        self.inner.reroute(flow, t)
    }
    fn carried(&mut self) -> Option<crate::model::Carried> {
        self.inner.carried()
    }
}
