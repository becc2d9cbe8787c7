//! Progressive filling: every unfrozen flow rises at the same rate until a resource is full;
//! the flows through it freeze. A flow crossing a resource k times counts k times there, and
//! an item standing for m flows with one route counts m times.

use crate::flow::Routes;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Scratch space reused across calls, so a fill allocates nothing once warm.
#[derive(Default)]
pub struct Filler {
    /// Coefficient sum of the unfrozen flows on each resource.
    weight: Vec<f64>,
    mark: Vec<u32>,
    epoch: u32,
    links: Vec<u32>,
    left: Vec<f64>,
    /// Each touched resource's users are `users[begin[l]..end[l]]`, positions into the items.
    begin: Vec<u32>,
    end: Vec<u32>,
    users: Vec<u32>,
    frozen: Vec<bool>,
    mult: Vec<f64>,
    /// The resource each item froze at in the last fill: its bottleneck.
    pub at: Vec<u32>,
    heap: BinaryHeap<Reverse<Saturation>>,
}

impl Filler {
    pub fn new(resources: usize) -> Filler {
        Filler {
            weight: vec![0.0; resources],
            mark: vec![0; resources],
            left: vec![0.0; resources],
            begin: vec![0; resources],
            end: vec![0; resources],
            ..Default::default()
        }
    }

    /// Max-min fair rate per flow of each item into `out`, on full capacities: item k has route
    /// `items[k]` and stands for `mult(k)` flows.
    pub fn fill(&mut self, routes: &Routes, items: &[u32], mult: impl Fn(usize) -> f64, cap: &[f64], out: &mut [f64]) {
        self.epoch = self.epoch.wrapping_add(1).max(1);
        let mut links = std::mem::take(&mut self.links);
        links.clear();
        for &r in items {
            for &(l, _) in routes.of(r as usize) {
                if self.mark[l as usize] != self.epoch {
                    self.mark[l as usize] = self.epoch;
                    links.push(l);
                    self.left[l as usize] = cap[l as usize];
                }
            }
        }
        let mut left = std::mem::take(&mut self.left);
        self.fill_on(routes, items, mult, &links, &mut left, out);
        (self.links, self.left) = (links, left);
    }

    /// The same on `left`, what each resource can still give these items (its capacity minus
    /// what fixed flows take): `links` must list every resource the items use, once; `left`
    /// is consumed.
    pub fn fill_on(&mut self, routes: &Routes, items: &[u32], mult: impl Fn(usize) -> f64, links: &[u32], left: &mut [f64], out: &mut [f64]) {
        for &l in links {
            self.weight[l as usize] = 0.0;
            self.end[l as usize] = 0;
        }
        self.mult.clear();
        self.mult.extend((0..items.len()).map(mult));
        for (&r, &m) in items.iter().zip(&self.mult) {
            for &(l, a) in routes.of(r as usize) {
                self.weight[l as usize] += m * a;
                self.end[l as usize] += 1;
            }
        }
        let mut total = 0u32;
        for &l in links {
            let l = l as usize;
            left[l] = left[l].max(0.0);
            self.begin[l] = total;
            total += self.end[l];
            self.end[l] = self.begin[l];
        }
        self.users.resize(total as usize, 0);
        for (k, &r) in items.iter().enumerate() {
            for &(l, _) in routes.of(r as usize) {
                self.users[self.end[l as usize] as usize] = k as u32;
                self.end[l as usize] += 1;
            }
        }
        self.frozen.clear();
        self.frozen.resize(items.len(), false);
        self.at.clear();
        self.at.resize(items.len(), u32::MAX);
        // Every resource saturates at the level left / weight (what fixed and frozen flows leave,
        // over the coefficient sum of the flows still rising); a heap gives the next one. A
        // freeze only raises the saturation levels of the frozen flow's other resources (it
        // leaves each at least the level it froze at), so a resource's entry is a lower bound:
        // one whose level has risen is pushed again when it comes to the top, and the one that
        // comes to the top with its level current is the next to saturate. One entry per
        // resource at any time; O((R + pops) log R) in all.
        let mut heap = std::mem::take(&mut self.heap);
        heap.clear();
        for &l in links {
            let l = l as usize;
            if self.weight[l] > WEIGHTLESS {
                heap.push(Reverse(Saturation { level: left[l] / self.weight[l], resource: l as u32 }));
            }
        }
        let mut level = 0.0f64;
        let mut unfrozen = items.len();
        while unfrozen > 0 {
            let Some(Reverse(top)) = heap.pop() else {
                // Round-off left weight on no resource; the remaining flows end at this level,
                // frozen at no resource (`at` stays u32::MAX).
                for k in (0..items.len()).filter(|&k| !self.frozen[k]) {
                    out[k] = level;
                }
                break;
            };
            let l = top.resource as usize;
            if self.weight[l] <= WEIGHTLESS {
                continue; // every flow through it froze elsewhere
            }
            let now = (left[l].max(0.0) / self.weight[l]).max(level);
            if now != top.level {
                heap.push(Reverse(Saturation { level: now, resource: top.resource }));
                continue;
            }
            level = level.max(top.level);
            for u in self.begin[l]..self.end[l] {
                let k = self.users[u as usize] as usize;
                if self.frozen[k] {
                    continue;
                }
                self.frozen[k] = true;
                self.at[k] = l as u32;
                unfrozen -= 1;
                out[k] = level;
                let m = self.mult[k];
                for &(l2, a) in routes.of(items[k] as usize) {
                    let l2 = l2 as usize;
                    self.weight[l2] -= m * a;
                    left[l2] -= m * a * level;
                }
            }
            // Round-off may leave a trace of weight: the resource is done.
            self.weight[l] = 0.0;
        }
        self.heap = heap;
    }
}

/// Below this a resource's coefficient sum is round-off: no flow is left rising through it.
const WEIGHTLESS: f64 = 1e-9;

/// When a resource fills, in the heap of `fill_on`; ties go to the lower resource index.
#[derive(PartialEq)]
struct Saturation {
    level: f64,
    resource: u32,
}

impl Eq for Saturation {}
impl PartialOrd for Saturation {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Saturation {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.level.total_cmp(&o.level).then(self.resource.cmp(&o.resource))
    }
}
