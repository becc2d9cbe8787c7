//! Routes in flight and bottleneck groups. In a max-min allocation every route freezes at one full resource, and
//! all routes frozen at the same resource b share its level λ_b: they form the group of b. The
//! group keeps a service clock G_b(t) (bytes per transfer served at level λ_b since the clock
//! started); a route in the group has S(t) = base + G_b(t), so changing λ_b costs one update
//! whatever the group's size. Each group orders its routes by the clock value at which their
//! next transfer finishes (`key` = head − base).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

pub const NONE: u32 = u32::MAX;

/// A transfer that finishes at service `t` of its route; ordered by (t, sequence) so that ties
/// resolve the same way every run.
#[derive(PartialEq)]
pub struct Stamp {
    pub t: f64,
    pub seq: u64,
    pub flow: u32,
}

impl Eq for Stamp {}
impl PartialOrd for Stamp {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Stamp {
    fn cmp(&self, o: &Self) -> Ordering {
        self.t.total_cmp(&o.t).then(self.seq.cmp(&o.seq))
    }
}

/// Everything kept per route, side by side in one cache line: routes are visited at random
/// as their transfers join and finish, and one line is much cheaper than a line per field.
#[repr(align(64))]
pub struct Route {
    /// Its group (NONE: none) and its place in that group's heap.
    pub group: u32,
    pos: u32,
    /// Transfers in flight, and the engine's mark (the epoch that last selected the route).
    pub count: u32,
    pub mark: u32,
    /// Service S = base + G_b(t); out of every group, base is the service itself.
    pub base: f64,
    key: f64,
    /// The service at which its first transfer finishes (infinite: none in flight).
    pub head: f64,
    /// Its transfers in flight, by the service at which they finish.
    pub members: BinaryHeap<Reverse<Stamp>>,
}

pub struct Groups {
    pub level: Vec<f64>,
    /// G_b at `since`.
    clock: Vec<f64>,
    since: Vec<f64>,
    /// A binary min-heap of routes per group, by (key, route).
    heap: Vec<Vec<u32>>,
    pub route: Vec<Route>,
}

impl Groups {
    pub fn new(resources: usize, routes: usize) -> Groups {
        Groups {
            level: vec![0.0; resources],
            clock: vec![0.0; resources],
            since: vec![0.0; resources],
            heap: vec![Vec::new(); resources],
            route: (0..routes)
                .map(|_| Route { group: NONE, pos: 0, count: 0, mark: 0, base: 0.0, key: 0.0, head: f64::INFINITY, members: BinaryHeap::new() })
                .collect(),
        }
    }

    pub fn clock_at(&self, b: usize, t: f64) -> f64 {
        self.clock[b] + self.level[b] * (t - self.since[b])
    }

    /// Set the group's level from `t` on.
    pub fn set_level(&mut self, b: usize, t: f64, level: f64) {
        self.clock[b] = self.clock_at(b, t);
        self.since[b] = t;
        self.level[b] = level;
    }

    /// The routes frozen at b.
    pub fn members(&self, b: usize) -> &[u32] {
        &self.heap[b]
    }

    pub fn len(&self, b: usize) -> usize {
        self.heap[b].len()
    }

    /// Every group's routes, by resource: for a walk over many resources that cuts the slice
    /// to its other slices' length, so that a resource is bounds-checked once for all.
    pub fn all_members(&self) -> &[Vec<u32>] {
        &self.heap
    }

    /// Route r's service at t; a route outside every group is served nothing.
    pub fn service(&self, r: usize, t: f64) -> f64 {
        match self.route[r].group {
            NONE => self.route[r].base,
            b => self.route[r].base + self.clock_at(b as usize, t),
        }
    }

    /// The earliest time a transfer of group b finishes, if it has any.
    #[inline(always)]
    pub fn next_finish(&self, b: usize) -> Option<f64> {
        let &r = self.heap[b].first()?;
        Some(self.since[b] + (self.route[r as usize].key - self.clock[b]) / self.level[b])
    }

    /// The route whose transfer finishes first in group b, and the clock value at which it does.
    pub fn first(&self, b: usize) -> Option<(f64, usize)> {
        self.heap[b].first().map(|&r| (self.route[r as usize].key, r as usize))
    }

    /// Put route r, out of every group (its service is its base), in group b at t.
    pub fn join(&mut self, r: usize, b: usize, t: f64) {
        let base = self.route[r].base - self.clock_at(b, t);
        let route = &mut self.route[r];
        route.group = b as u32;
        route.base = base;
        route.key = route.head - base;
        route.pos = self.heap[b].len() as u32;
        self.heap[b].push(r as u32);
        self.up(b, self.route[r].pos as usize);
    }

    /// Take route r out of its group; it keeps its service at t in `base`.
    pub fn leave(&mut self, r: usize, t: f64) {
        let b = self.route[r].group as usize;
        self.route[r].base = self.service(r, t);
        self.route[r].group = NONE;
        let p = self.route[r].pos as usize;
        let last = self.heap[b].pop().unwrap();
        if p < self.heap[b].len() {
            self.heap[b][p] = last;
            self.route[last as usize].pos = p as u32;
            let p = self.up(b, p);
            self.down(b, p);
        }
    }

    /// Route r's first transfer now ends at service `head`: its place in its group follows.
    pub fn rekey(&mut self, r: usize) {
        let b = self.route[r].group as usize;
        self.route[r].key = self.route[r].head - self.route[r].base;
        let p = self.up(b, self.route[r].pos as usize);
        self.down(b, p);
    }

    fn less(&self, x: u32, y: u32) -> bool {
        self.route[x as usize].key.total_cmp(&self.route[y as usize].key).then(x.cmp(&y)).is_lt()
    }

    fn swap(&mut self, b: usize, i: usize, j: usize) {
        self.heap[b].swap(i, j);
        self.route[self.heap[b][i] as usize].pos = i as u32;
        self.route[self.heap[b][j] as usize].pos = j as u32;
    }

    fn up(&mut self, b: usize, mut p: usize) -> usize {
        while p > 0 {
            let parent = (p - 1) / 2;
            if !self.less(self.heap[b][p], self.heap[b][parent]) {
                break;
            }
            self.swap(b, p, parent);
            p = parent;
        }
        p
    }

    fn down(&mut self, b: usize, mut p: usize) {
        let n = self.heap[b].len();
        loop {
            let (l, r) = (2 * p + 1, 2 * p + 2);
            let mut m = p;
            if l < n && self.less(self.heap[b][l], self.heap[b][m]) {
                m = l;
            }
            if r < n && self.less(self.heap[b][r], self.heap[b][m]) {
                m = r;
            }
            if m == p {
                return;
            }
            self.swap(b, p, m);
            p = m;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_keys_and_order() {
        let mut g = Groups::new(2, 3);
        g.set_level(0, 0.0, 2.0);
        // Routes with 10, 4 and 6 bytes to go at t = 1 (clock 2).
        for (r, service, head) in [(0, 0.0, 10.0), (1, 5.0, 9.0), (2, 0.0, 6.0)] {
            (g.route[r].base, g.route[r].head) = (service, head);
            g.join(r, 0, 1.0);
        }
        assert_eq!(g.first(0), Some((6.0, 1)));
        assert_eq!(g.next_finish(0), Some(3.0));
        g.set_level(0, 2.0, 1.0);
        assert_eq!(g.next_finish(0), Some(4.0));
        g.leave(1, 2.0);
        assert_eq!((g.route[1].group, g.route[1].base), (NONE, 7.0));
        assert_eq!(g.first(0), Some((8.0, 2)));
    }
}
