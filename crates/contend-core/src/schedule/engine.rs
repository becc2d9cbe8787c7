//! The executor specialised to per-rank message queues, with rates memoised per active set:
//! the arithmetic of `sim::run` over a rate model (same rates, same dt, same completion
//! threshold), without its allocations. Tested equal to `sim::run` for every model
//! (schedule/tests.rs, schedules_round_trip_through_the_executor).
//!
//! A started message first holds its rank for its setup (alpha plus the path's latency)
//! without moving bytes and without being seen by the model, then its bytes flow at the
//! model's rates; after its last byte it holds the rank for its teardown (a datatype's unpack
//! kernel), again unseen by the model; then the rank's next message starts.

use super::problem::{Problem, Worker};
use super::Semantics;

use crate::model::DONE;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Queue {
    /// Bytes left of the current message.
    rem: f64,
    /// When the current message's bytes start to flow.
    ready: f64,
    /// Slots not started yet, one bit each.
    pub left: u16,
    /// Current slot + 1, or 0 when the rank is idle.
    cur: u8,
    flowing: bool,
    /// The current message has moved its bytes and waits out its teardown until `ready`.
    tearing: bool,
    /// Slots started so far, and their order in 4-bit fields.
    n: u8,
    pub seq: u64,
}

#[derive(Clone, Debug)]
pub(crate) struct State {
    pub t: f64,
    /// Active set of the flowing messages (see `problem`).
    key: u64,
    busy: usize,
    pub q: Vec<Queue>,
}

impl State {
    pub fn new(p: &Problem) -> State {
        let q = p.deg.iter().map(|&d| Queue { left: ((1u32 << d) - 1) as u16, ..Default::default() }).collect();
        State { t: 0.0, key: 0, busy: 0, q }
    }

    pub fn start(&mut self, p: &Problem, g: usize, slot: usize) {
        let q = &mut self.q[g];
        debug_assert!(q.cur == 0 && q.left & (1 << slot) != 0);
        q.left &= !(1 << slot);
        q.cur = slot as u8 + 1;
        q.rem = p.size[p.first[g] + slot];
        q.seq |= (slot as u64) << (4 * q.n);
        q.n += 1;
        let setup = p.setup[p.first[g] + slot];
        // The executor's join: due after the setup, and on the quantum's grid where there is one.
        let due = self.t + setup;
        let join = if p.quantum > 0.0 { (due / p.quantum).ceil() * p.quantum } else { due };
        if join > self.t {
            q.ready = join;
            q.flowing = false;
        } else {
            q.flowing = true;
            self.key += q.cur as u64 * p.stride[g];
        }
        self.busy += 1;
    }

    /// Per message: bytes still to move (`rem`) and the earliest time they can flow (`early`,
    /// infinite once finished).
    pub fn remaining(&self, p: &Problem, rem: &mut [f64], early: &mut [f64]) {
        for (g, q) in self.q.iter().enumerate() {
            for s in 0..p.deg[g] {
                let i = p.first[g] + s;
                (rem[i], early[i]) = if q.cur as usize == s + 1 {
                    (q.rem, if q.flowing { self.t } else { q.ready })
                } else if q.left & (1 << s) != 0 {
                    (p.size[i], self.t + p.setup[i])
                } else {
                    (0.0, f64::INFINITY)
                };
            }
        }
    }

    /// The next slot of rank g in a given order.
    pub fn next_of(&self, order: &[Vec<u8>], g: usize) -> usize {
        order[g][self.q[g].n as usize] as usize
    }
}

/// Rank g's order from its packed fields.
pub(crate) fn unpack(seq: u64, deg: usize) -> Vec<u8> {
    (0..deg).map(|k| ((seq >> (4 * k)) & 15) as u8).collect()
}

impl<'p, 'a> Worker<'p, 'a> {
    /// Run until an idle rank has two or more messages left to choose from (returns it) or
    /// until everything has finished (returns None, `st.t` is the makespan). A rank with one
    /// message left starts it without asking.
    pub fn advance(&mut self, st: &mut State) -> Option<usize> {
        let p = self.p;
        loop {
            for g in 0..p.ranks {
                let (cur, left) = (st.q[g].cur, st.q[g].left);
                if cur == 0 && left != 0 {
                    if left.is_power_of_two() {
                        st.start(p, g, left.trailing_zeros() as usize);
                    } else {
                        return Some(g);
                    }
                }
            }
            if st.busy == 0 {
                return None;
            }
            let mut dt = f64::INFINITY;
            let mut next_ready = f64::INFINITY;
            let rates: &[f64] = if st.key != 0 { self.rates(st.key) } else { &[] };
            for (g, q) in st.q.iter().enumerate() {
                if q.cur == 0 {
                    continue;
                }
                if !q.flowing {
                    next_ready = next_ready.min(q.ready);
                } else if rates[g] > 0.0 {
                    dt = dt.min(q.rem / rates[g]);
                }
            }
            let by_ready = next_ready - st.t < dt;
            if by_ready {
                dt = next_ready - st.t;
            }
            if !dt.is_finite() {
                // Every moving message has rate 0: this order never finishes.
                st.t = f64::INFINITY;
                return None;
            }
            let end = if by_ready { next_ready } else { st.t + dt };
            for (g, (q, &rate)) in st.q.iter_mut().zip(rates).enumerate() {
                if q.cur != 0 && q.flowing {
                    q.rem -= rate * dt;
                    let i = p.first[g] + q.cur as usize - 1;
                    if q.rem <= DONE * p.size[i] {
                        st.key -= q.cur as u64 * p.stride[g];
                        q.flowing = false;
                        if p.teardown[i] > 0.0 {
                            q.tearing = true;
                            q.ready = end + p.teardown[i];
                        } else {
                            q.cur = 0;
                            st.busy -= 1;
                        }
                    }
                }
            }
            st.t = end;
            for (g, q) in st.q.iter_mut().enumerate() {
                if q.cur != 0 && !q.flowing && q.ready <= end {
                    if q.tearing {
                        q.tearing = false;
                        q.cur = 0;
                        st.busy -= 1;
                    } else {
                        q.flowing = true;
                        st.key += q.cur as u64 * p.stride[g];
                    }
                }
            }
        }
    }

    /// Makespan of a complete order (`order[g]` lists rank g's slots).
    pub fn evaluate(&mut self, order: &[Vec<u8>], semantics: Semantics) -> f64 {
        match semantics {
            Semantics::Sequential => {
                let mut st = State::new(self.p);
                self.run_sequential(&mut st, order);
                st.t
            }
            Semantics::Rounds => (0..self.rounds()).map(|k| self.round_time(self.round_key(order, k))).sum(),
        }
    }

    pub fn run_sequential(&mut self, st: &mut State, order: &[Vec<u8>]) {
        while let Some(g) = self.advance(st) {
            let slot = st.next_of(order, g);
            st.start(self.p, g, slot);
        }
    }

    pub fn rounds(&self) -> usize {
        self.p.deg.iter().copied().max().unwrap_or(0)
    }

    /// The active set of round k: every rank's k-th message.
    pub fn round_key(&self, order: &[Vec<u8>], k: usize) -> u64 {
        let p = self.p;
        (0..p.ranks).filter(|&g| k < p.deg[g]).map(|g| (order[g][k] as u64 + 1) * p.stride[g]).sum()
    }

    pub(super) fn simulate_round(&mut self, key: u64) -> f64 {
        let p = self.p;
        let mut st = State::new(p);
        for g in 0..p.ranks {
            st.q[g].left = 0;
            let s = p.slot_of_key(key, g);
            if s > 0 {
                st.q[g].left = 1 << (s - 1);
            }
        }
        let done = self.advance(&mut st);
        debug_assert!(done.is_none());
        st.t
    }
}
