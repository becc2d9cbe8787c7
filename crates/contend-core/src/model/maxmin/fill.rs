//! Progressive filling: every unfrozen flow rises at the same rate until a resource is full;
//! the flows through it freeze. A flow crossing a resource k times counts k times there, and
//! an item standing for m flows with one route counts m times.

use crate::flow::Routes;
use crate::heap::{from_order_key, order_key};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// `*at = at.max(v)` for a running maximum that is never NaN (it starts at a number and only
/// takes values greater than itself), as one compare-and-select: `f64::max` must also return
/// the other operand when one is NaN, which costs about four instructions more, and the fast
/// path and the fill raise a bound per span or hop, tens of millions of times in a long run.
/// The same result: where v is NaN, both keep `at`.
#[inline(always)]
pub(super) fn raise(at: &mut f64, v: f64) {
    *at = if v > *at { v } else { *at };
}

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
    /// Per resource of the last fill, the highest rate it gave an item crossing it.
    pub top: Vec<f64>,
    queue: Saturations,
}

impl Filler {
    pub fn new(resources: usize) -> Filler {
        Filler {
            weight: vec![0.0; resources],
            mark: vec![0; resources],
            left: vec![0.0; resources],
            top: vec![0.0; resources],
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
        self.fill_on(routes, items, mult, |_| 0.0, &links, &mut left, out);
        (self.links, self.left) = (links, left);
    }

    /// The same on `left`, what each resource can still give these items (its capacity minus
    /// what fixed flows take), plus `back(k)` × coefficient for each crossing of item k (what its
    /// flows take now and give back: added here, in the pass that sums the weights, not in one
    /// of its own): `links` must list every resource the items use, once; `left` is consumed.
    // Inlined into the engine's refill, its one hot caller: left to the compiler, whether it is
    // inlined varies with how unrelated code splits into codegen units (3% of a study point).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn fill_on(
        &mut self,
        routes: &Routes,
        items: &[u32],
        mult: impl Fn(usize) -> f64,
        back: impl Fn(usize) -> f64,
        links: &[u32],
        left: &mut [f64],
        out: &mut [f64],
    ) {
        // The fields apart, as slices: a store through one of them cannot move another's
        // buffer, so the loops below keep every buffer in a register instead of reloading it
        // after each store (a refill runs this once per event on a busy network).
        let Filler { weight, end, top, begin, users, frozen, mult: mults, at, queue, .. } = self;
        let (weight, end, top, begin) = (&mut weight[..], &mut end[..], &mut top[..], &mut begin[..]);
        for &l in links {
            weight[l as usize] = 0.0;
            end[l as usize] = 0;
            top[l as usize] = 0.0;
        }
        mults.clear();
        mults.extend((0..items.len()).map(mult));
        for (k, (&r, &m)) in items.iter().zip(mults.iter()).enumerate() {
            let b = back(k);
            for &(l, a) in routes.of(r as usize) {
                weight[l as usize] += m * a;
                end[l as usize] += 1;
                if b > 0.0 {
                    left[l as usize] += b * a;
                }
            }
        }
        let mut total = 0u32;
        for &l in links {
            let l = l as usize;
            left[l] = left[l].max(0.0);
            begin[l] = total;
            total += end[l];
            end[l] = begin[l];
        }
        users.resize(total as usize, 0);
        for (k, &r) in items.iter().enumerate() {
            for &(l, _) in routes.of(r as usize) {
                users[end[l as usize] as usize] = k as u32;
                end[l as usize] += 1;
            }
        }
        frozen.clear();
        frozen.resize(items.len(), false);
        at.clear();
        at.resize(items.len(), u32::MAX);
        let (users, frozen, at, mults) = (&users[..], &mut frozen[..], &mut at[..], &mults[..]);
        // Every resource saturates at the level left / weight (what fixed and frozen flows leave,
        // over the coefficient sum of the flows still rising). A freeze only raises the
        // saturation levels of the frozen flow's other resources (it leaves each at least the
        // level it froze at), so a resource's last computed level is a lower bound: the resource
        // with the lowest bound (ties: the lower index) is taken, and if its level has risen it
        // is ranked again by its current level; the one taken with its level current is the next
        // to saturate. Few resources (a refill's usual case) are ranked by a scan, many by a sort and
        // a heap of the ones ranked again (O(R log R) in all); both take resources in the same order.
        queue.start(links.iter().map(|&l| l as usize).filter(|&l| weight[l] > WEIGHTLESS).map(|l| (left[l] / weight[l], l)));
        let mut level = 0.0f64;
        let mut unfrozen = items.len();
        while unfrozen > 0 {
            let Some((bound, l)) = queue.lowest() else {
                // Round-off left weight on no resource; the remaining flows end at this level,
                // frozen at no resource (`at` stays u32::MAX).
                for k in (0..items.len()).filter(|&k| !frozen[k]) {
                    out[k] = level;
                    for &(l2, _) in routes.of(items[k] as usize) {
                        raise(&mut top[l2 as usize], level);
                    }
                }
                break;
            };
            if weight[l] <= WEIGHTLESS {
                queue.drop_lowest(); // every flow through it froze elsewhere
                continue;
            }
            let now = (left[l].max(0.0) / weight[l]).max(level);
            if now != bound {
                queue.rerank_lowest(now);
                continue;
            }
            queue.drop_lowest();
            level = level.max(bound);
            for &k in &users[begin[l] as usize..end[l] as usize] {
                let k = k as usize;
                if frozen[k] {
                    continue;
                }
                frozen[k] = true;
                at[k] = l as u32;
                unfrozen -= 1;
                out[k] = level;
                let m = mults[k];
                for &(l2, a) in routes.of(items[k] as usize) {
                    let l2 = l2 as usize;
                    weight[l2] -= m * a;
                    left[l2] -= m * a * level;
                    raise(&mut top[l2], level);
                }
            }
            // Round-off may leave a trace of weight: the resource is done.
            weight[l] = 0.0;
        }
    }
}

/// Resources by (saturation bound, index), lowest first: one entry per resource. Each entry is
/// kept as (`order_key(bound)`, resource), compared as integers: the order of `f64::total_cmp` then
/// the index, with the bound's transform made once per entry, not twice per comparison (the
/// heap's and the scan's comparisons were most of what a large refill spends on its queue).
///
/// Many resources are sorted once (`sorted`, taken from `next` on), and an entry whose bound
/// rises moves to a small heap (`raised`); the lowest is the lower of the two fronts. Every
/// resource has one entry and entries differ in their index, so this takes resources in the one
/// order a heap of all entries would take them (the fill's values are the same to the bit). Why
/// not that heap: on the 32-node ring (2 GiB row) a refill ranks about 1,000 resources and takes
/// about 440, most dropped at once (every flow through them froze elsewhere) and few ranked again
/// (3%); the heap's takes cost about 230 instructions each, 9% of the row, and the sort less
/// (the row 3.1% fewer instructions). Ordering only what is taken (an incremental quicksort) cost
/// more than the sort: docs/benchmarks.md, issue 25's twentieth round.
#[derive(Default)]
struct Saturations {
    /// Up to `SCAN` resources: the entries, scanned for the lowest (`at`: its place).
    few: Vec<(i64, u32)>,
    at: usize,
    /// Many: the entries packed by `pack` in increasing order, the front at `next`.
    sorted: Vec<u128>,
    next: usize,
    raised: BinaryHeap<Reverse<(i64, u32)>>,
    /// Whether the lowest (as `lowest` last found it) is the front of `sorted`, not of `raised`.
    front_sorted: bool,
    scanning: bool,
}

/// Below this many resources a scan finds the lowest faster than a sort and a heap keep it.
const SCAN: usize = 32;

/// An entry as one integer that compares as the pair (key, index) does: the key with its sign
/// bit flipped (so that the unsigned order is the signed one) above the 32-bit index.
#[inline(always)]
fn pack((key, l): (i64, u32)) -> u128 {
    ((((key as u64) ^ (1 << 63)) as u128) << 32) | l as u128
}

#[inline(always)]
fn unpack(x: u128) -> (i64, u32) {
    ((((x >> 32) as u64) ^ (1 << 63)) as i64, x as u32)
}

impl Saturations {
    fn start(&mut self, entries: impl Iterator<Item = (f64, usize)>) {
        self.few.clear();
        self.sorted.clear();
        self.raised.clear();
        self.next = 0;
        self.few.extend(entries.map(|(bound, l)| (order_key(bound), l as u32)));
        self.scanning = self.few.len() <= SCAN;
        if !self.scanning {
            self.sorted.extend(self.few.drain(..).map(pack));
            self.sorted.sort_unstable();
        }
    }

    /// The lowest entry, left in place.
    fn lowest(&mut self) -> Option<(f64, usize)> {
        let (key, l) = if self.scanning {
            let first = *self.few.first()?;
            let (mut best, mut at) = (first, 0);
            for (i, &e) in self.few.iter().enumerate().skip(1) {
                if e < best {
                    (best, at) = (e, i);
                }
            }
            self.at = at;
            best
        } else {
            let front = self.sorted.get(self.next).map(|&x| unpack(x));
            let raised = self.raised.peek().map(|&Reverse(r)| r);
            // Entries differ in their index, so the two fronts never tie.
            self.front_sorted = front.is_some_and(|s| raised.is_none_or(|r| s < r));
            if self.front_sorted { front } else { raised }?
        };
        Some((from_order_key(key), l as usize))
    }

    fn drop_lowest(&mut self) {
        if self.scanning {
            self.few.swap_remove(self.at);
        } else if self.front_sorted {
            self.next += 1;
        } else {
            self.raised.pop();
        }
    }

    fn rerank_lowest(&mut self, bound: f64) {
        if self.scanning {
            self.few[self.at].0 = order_key(bound);
        } else if self.front_sorted {
            let (_, l) = unpack(self.sorted[self.next]);
            self.next += 1;
            self.raised.push(Reverse((order_key(bound), l)));
        } else if let Some(mut top) = self.raised.peek_mut() {
            // Moved in place: one sift from the top, not a pop and a push.
            top.0 .0 = order_key(bound);
        }
    }
}

/// Below this a resource's coefficient sum is round-off: no flow is left rising through it.
const WEIGHTLESS: f64 = 1e-9;

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan, the sorted entries with their heap of raised ones, and a heap of every entry
    /// take resources in the same order, bounds raised on the way included.
    #[test]
    fn scan_sort_and_heap_take_the_same_order() {
        let mut x = 11u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        for round in 0..400 {
            let n = 1 + next() as usize % if round % 2 == 0 { SCAN } else { 300 };
            // Resources listed out of order, with tied and negative bounds.
            let entries: Vec<(f64, usize)> = (0..n).map(|i| ((next() % 8) as f64 - 3.0, (i * 37 + round) % n)).collect();
            let (mut scan, mut sorted) = (Saturations::default(), Saturations::default());
            let mut heap: BinaryHeap<Reverse<(i64, u32)>> = entries.iter().map(|&(b, l)| Reverse((order_key(b), l as u32))).collect();
            scan.start(entries.iter().copied());
            sorted.start(entries.iter().copied());
            if scan.scanning {
                // The same entries ranked as many are.
                sorted.sorted.extend(sorted.few.drain(..).map(pack));
                sorted.sorted.sort_unstable();
                sorted.scanning = false;
            }
            while let Some(low) = sorted.lowest() {
                let Reverse((key, l)) = *heap.peek().unwrap();
                assert_eq!(low, (from_order_key(key), l as usize));
                let scanned = scan.scanning.then(|| scan.lowest());
                assert!(scanned.is_none_or(|s| s == Some(low)));
                if next() % 3 == 0 {
                    let raised = low.0 + (next() % 4) as f64;
                    sorted.rerank_lowest(raised);
                    heap.peek_mut().unwrap().0 .0 = order_key(raised);
                    if scanned.is_some() {
                        scan.rerank_lowest(raised);
                    }
                } else {
                    sorted.drop_lowest();
                    heap.pop();
                    if scanned.is_some() {
                        scan.drop_lowest();
                    }
                }
            }
            assert!(heap.is_empty());
        }
    }

    /// `pack` orders entries as the pair (key, index) is ordered, and `unpack` undoes it.
    #[test]
    fn packed_entries_compare_as_pairs() {
        let keys = [f64::NEG_INFINITY, -2.5, -0.0, 0.0, 1e-300, 3.0, f64::INFINITY].map(order_key);
        let pairs: Vec<(i64, u32)> = keys.iter().flat_map(|&k| [0, 1, u32::MAX].map(|l| (k, l))).collect();
        for &a in &pairs {
            assert_eq!(unpack(pack(a)), a);
            for &b in &pairs {
                assert_eq!(pack(a).cmp(&pack(b)), a.cmp(&b));
            }
        }
    }
}
