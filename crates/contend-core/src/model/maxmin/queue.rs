//! The earliest finish among the routes in flight: a heap with lazy deletion. A route whose
//! key changes gets a new entry and a new stamp; entries with an old stamp are dropped when
//! they reach the top, and the heap is rebuilt from the live keys when stale entries outnumber
//! them, so memory stays proportional to the routes in flight.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

#[derive(PartialEq)]
struct Entry {
    key: f64,
    route: u32,
    stamp: u32,
}

impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    /// By key; among equal keys the smaller route, so runs are reproducible.
    fn cmp(&self, o: &Self) -> Ordering {
        self.key.total_cmp(&o.key).then(self.route.cmp(&o.route))
    }
}

pub struct Finishes {
    heap: BinaryHeap<Reverse<Entry>>,
    /// Per route: the stamp of its live entry, and its key (NaN: none).
    stamp: Vec<u32>,
    key: Vec<f64>,
    live: usize,
}

impl Finishes {
    pub fn new(routes: usize) -> Finishes {
        Finishes { heap: BinaryHeap::new(), stamp: vec![0; routes], key: vec![f64::NAN; routes], live: 0 }
    }

    fn is_live(&self, e: &Entry) -> bool {
        self.stamp[e.route as usize] == e.stamp && !self.key[e.route as usize].is_nan()
    }

    /// The earliest (key, route).
    pub fn peek(&mut self) -> Option<(f64, usize)> {
        while let Some(Reverse(top)) = self.heap.peek() {
            if self.is_live(top) {
                return Some((top.key, top.route as usize));
            }
            self.heap.pop();
        }
        None
    }

    pub fn set(&mut self, route: usize, key: f64) {
        if self.key[route] == key {
            return; // its live entry already says so (entries order by key and route alone)
        }
        if self.key[route].is_nan() {
            self.live += 1;
        }
        self.stamp[route] = self.stamp[route].wrapping_add(1);
        self.key[route] = key;
        self.heap.push(Reverse(Entry { key, route: route as u32, stamp: self.stamp[route] }));
        if self.heap.len() > 4 * self.live + 1024 {
            self.rebuild();
        }
    }

    pub fn remove(&mut self, route: usize) {
        if !self.key[route].is_nan() {
            self.key[route] = f64::NAN;
            self.live -= 1;
        }
    }

    fn rebuild(&mut self) {
        let entries: Vec<Reverse<Entry>> = std::mem::take(&mut self.heap).into_vec().into_iter().filter(|Reverse(e)| self.is_live(e)).collect();
        self.heap = BinaryHeap::from(entries);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yields_the_earliest_through_updates_and_removals() {
        let mut h = Finishes::new(6);
        for (i, k) in [5.0, 3.0, 8.0, 1.0, 9.0, 3.0].into_iter().enumerate() {
            h.set(i, k);
        }
        h.set(4, 0.5);
        h.remove(3);
        h.set(2, 2.0);
        let mut order = Vec::new();
        while let Some((_, i)) = h.peek() {
            order.push(i);
            h.remove(i);
        }
        assert_eq!(order, [4, 2, 1, 5, 0]);
    }

    #[test]
    fn stays_small_under_many_updates() {
        let mut h = Finishes::new(3);
        for k in 0..100_000 {
            h.set(k % 3, k as f64);
        }
        assert!(h.heap.len() <= 4 * 3 + 1024 + 1);
        assert_eq!(h.peek(), Some((99_997.0, 1)));
    }
}
