//! A link's duplex loss per direction under maxmin: each direction's capacity is what is left
//! after the loss to the traffic moving the other way, cap − loss × load(other direction); the
//! loss is served before the direction's copies share the rest (flow::charges::DuplexPair).
//! Capacities depend on rates and rates on capacities: both the one-shot fill and the event
//! engine iterate to the fixed point (a contraction while the losses are below 1: a round
//! shrinks the change by about the product of the two losses).

use crate::flow::charges::DuplexPair;

/// Rounds at most; a change below `TOLERANCE` of a capacity ends the iteration.
pub const ROUNDS: usize = 200;
pub const TOLERANCE: f64 = 1e-12;

/// Set `cap` of every pair's two resources from the loads now; calls `changed(resource, old
/// capacity)` for each one that moved by more than the tolerance.
pub fn update(pairs: &[DuplexPair], base: &[f64], load: &[f64], cap: &mut [f64], mut changed: impl FnMut(u32, f64)) {
    let mut next = [(0u32, 0.0f64); 2];
    for p in pairs {
        next[0] = (p.upstream, base[p.upstream as usize] - p.upstream_loss * load[p.downstream as usize]);
        next[1] = (p.downstream, base[p.downstream as usize] - p.downstream_loss * load[p.upstream as usize]);
        for (l, c) in next {
            let old = cap[l as usize];
            if (c - old).abs() > TOLERANCE * base[l as usize] {
                cap[l as usize] = c;
                changed(l, old);
            }
        }
    }
}
