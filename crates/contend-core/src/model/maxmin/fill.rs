//! Progressive filling: every unfrozen flow rises at the same rate until a resource is full;
//! the flows through it freeze. A flow crossing a resource k times counts k times there, and
//! an item standing for m flows with one route counts m times.

use crate::flow::Routes;

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
    live: Vec<u32>,
    mult: Vec<f64>,
    /// The resource each item froze at in the last fill: its bottleneck.
    pub at: Vec<u32>,
}

/// A resource is full once less than this fraction of its capacity is left.
const FULL: f64 = 1e-12;

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
        self.fill_on(routes, items, mult, &links, &mut left, cap, out);
        (self.links, self.left) = (links, left);
    }

    /// The same on `left`, what each resource can still give these items (its capacity minus
    /// what fixed flows take): `links` must list every resource the items use, once; `left`
    /// is consumed.
    #[allow(clippy::too_many_arguments)]
    pub fn fill_on(&mut self, routes: &Routes, items: &[u32], mult: impl Fn(usize) -> f64, links: &[u32], left: &mut [f64], cap: &[f64], out: &mut [f64]) {
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
        let mut live = std::mem::take(&mut self.live);
        live.clear();
        live.extend_from_slice(links);
        let mut level = 0.0;
        let mut unfrozen = items.len();
        while unfrozen > 0 {
            let step = live.iter().map(|&l| left[l as usize] / self.weight[l as usize]).fold(f64::INFINITY, f64::min);
            level += step;
            for &l in &live {
                let l = l as usize;
                left[l] -= step * self.weight[l];
            }
            for &l in &live {
                let l = l as usize;
                if left[l] > FULL * cap[l] && left[l] / self.weight[l] > FULL * level {
                    continue;
                }
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
                        self.weight[l2 as usize] -= m * a;
                    }
                }
            }
            live.retain(|&l| self.weight[l as usize] > 1e-9);
            if live.is_empty() && unfrozen > 0 {
                // Round-off left weight on no resource; the remaining flows end at this level,
                // frozen at no resource (`at` stays u32::MAX).
                for k in (0..items.len()).filter(|&k| !self.frozen[k]) {
                    out[k] = level;
                }
                break;
            }
        }
        self.live = live;
    }
}
