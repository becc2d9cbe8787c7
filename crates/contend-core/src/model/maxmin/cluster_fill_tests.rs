//! On a cluster nearly every message's route joins with nothing in flight and its group empties
//! when it is delivered, so the engine's refills and fast path meet shapes a node's workloads do
//! not. Checked here at every instant of the executor against progressive filling of every flow
//! in flight: the definition of max-min, computed from scratch.

use super::engine::Engine;
use super::fill::Filler;
use super::tests::random_workload;
use super::*;
use crate::model::EventModel;
use crate::sim;

/// The engine, with the allocation compared with a full progressive fill after every settle.
struct Checked<'c> {
    e: Engine<'c>,
    flows: &'c FlowTable,
    moving: Vec<usize>,
    filler: Filler,
    instants: usize,
    /// Transfers moved to their tail route (`release_frees_nic`).
    rerouted: usize,
}

impl EventModel for Checked<'_> {
    fn join(&mut self, flow: usize, t: f64) {
        self.moving.push(flow);
        self.e.join(flow, t);
    }

    fn next_finish(&mut self) -> Option<f64> {
        self.e.next_finish()
    }

    fn finish(&mut self, t: f64, done: &mut Vec<usize>) {
        let before = done.len();
        self.e.finish(t, done);
        let gone = &done[before..];
        self.moving.retain(|f| !gone.contains(f));
    }

    fn settle(&mut self, t: f64) -> Result<()> {
        self.e.settle(t)?;
        // Each flow on the route it moves on now (a released head's tail, `release_frees_nic`).
        let items: Vec<u32> = self.moving.iter().map(|&f| self.e.route_now(f) as u32).collect();
        let mut full = vec![0.0; items.len()];
        self.filler.fill(&self.flows.routes, &items, |_| 1.0, &self.flows.cap, &mut full);
        for (k, &f) in self.moving.iter().enumerate() {
            let rate = self.e.rate(f);
            assert!((rate - full[k]).abs() <= 1e-9 * full[k], "t = {t}: flow {f} moves at {rate}, max-min gives {}", full[k]);
        }
        self.instants += 1;
        Ok(())
    }

    fn rate(&self, flow: usize) -> f64 {
        self.e.rate(flow)
    }

    fn remaining(&self, flow: usize, t: f64) -> Option<f64> {
        self.e.remaining(flow, t)
    }

    fn loads(&mut self) -> (&[u32], &[f64]) {
        self.e.loads()
    }
    fn reroute(&mut self, flow: usize, t: f64) {
        let before = self.e.route_now(flow);
        self.e.reroute(flow, t);
        self.rerouted += usize::from(self.e.route_now(flow) != before);
    }
    fn carried(&mut self) -> Option<crate::model::Carried> {
        self.e.carried()
    }
}

/// Parameters without staging or duplex losses: max-min alone decides every rate.
fn no_losses(p: MaxminParams) -> MaxminParams {
    MaxminParams {
        staging_chunk: 0.0,
        duplex_pcie: 0.0,
        duplex_staged: 0.0,
        duplex_nvlink: 0.0,
        duplex_nvlink2: 0.0,
        duplex_nvlink4: 0.0,
        duplex_socket: 0.0,
        ..p
    }
}

/// A small cluster of two-GPU nodes on `f` (a fabric's YAML) with NICs scheduled by `nic`.
fn fabric(f: &str, nic: &str) -> Machine {
    Machine::from_text(
        &format!(
            "name: c\nfabric:\n  {f}\nlink: {{bandwidth: 10GB/s, latency: 100ns}}\nnodes: {{gpus: 2}}\nnetwork: {{routing: ecmp, nic_scheduling: {nic}}}\n"
        ),
        "c",
    )
    .unwrap()
}

/// Random traffic with staggered starts on small clusters under FCFS and RR NICs and on a PCIe
/// node without duplex losses: every instant max-min.
#[test]
fn cluster_traffic_gets_the_max_min_allocation_at_every_instant() {
    let p = no_losses(MaxminParams::default());
    let machines = [
        fabric("dragonfly: {p: 2, a: 4, h: 2, groups: 5}", "fcfs"),
        fabric("fat_tree: {radix: 8, pods: 2}", "rr"),
        fabric("fat_tree: {radix: 8, pods: 2}", "fcfs"),
        Machine::load("cs-storm").unwrap(),
    ];
    let mut instants = 0;
    for m in &machines {
        for seed in 0..4u64 {
            let w = random_workload(m, seed, 40 + 40 * seed as usize);
            let prepared = MaxminPrepared::new(m, &w, p).unwrap();
            assert!(prepared.flows.duplex_pairs.is_empty() && prepared.fanout.is_empty(), "capacities would move");
            let mut model = Checked {
                e: Engine::new(&prepared.flows, &prepared.fanout),
                flows: &prepared.flows,
                moving: Vec::new(),
                filler: Filler::new(prepared.flows.cap.len()),
                instants: 0,
                rerouted: 0,
            };
            let checked = sim::run(&w, &prepared.flows, &mut model, false, true).unwrap();
            // The check changes nothing: the same finishes as the engine alone.
            assert_eq!(checked.finish, sim::run_prepared(&w, &prepared, false).unwrap().finish);
            instants += model.instants;
        }
    }
    assert!(instants > 1000, "only {instants} instants checked");
}

/// The same traffic with `release_frees_nic`: heads released early move to their tail routes
/// mid-flight (a leave and a join with their bytes left in one instant), and the allocation is
/// still max-min at every instant over the routes the flows move on then.
#[test]
fn released_heads_moved_to_their_tails_keep_the_max_min_allocation() {
    let p = no_losses(MaxminParams { release_frees_nic: true, ..Default::default() });
    let machines = [
        fabric("dragonfly: {p: 2, a: 4, h: 2, groups: 5}", "fcfs"),
        fabric("fat_tree: {radix: 8, pods: 2}", "rr"),
        fabric("fat_tree: {radix: 8, pods: 2}", "fcfs"),
    ];
    let (mut instants, mut rerouted) = (0, 0);
    for m in &machines {
        for seed in 0..4u64 {
            let w = random_workload(m, seed, 40 + 40 * seed as usize);
            let prepared = MaxminPrepared::new(m, &w, p).unwrap();
            let mut model = Checked {
                e: Engine::new(&prepared.flows, &prepared.fanout),
                flows: &prepared.flows,
                moving: Vec::new(),
                filler: Filler::new(prepared.flows.cap.len()),
                instants: 0,
                rerouted: 0,
            };
            let checked = sim::run(&w, &prepared.flows, &mut model, false, true).unwrap();
            assert_eq!(checked.finish, sim::run_prepared(&w, &prepared, false).unwrap().finish);
            instants += model.instants;
            rerouted += model.rerouted;
        }
    }
    assert!(instants > 1000 && rerouted > 50, "only {instants} instants checked, {rerouted} heads moved");
}
