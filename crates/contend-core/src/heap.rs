//! A binary min-heap of items 0..n that knows where each sits, so an item whose key moves is
//! moved in place (up or down) and one that leaves is taken out at once. (A heap with lazy
//! deletion pushes a new entry per move and pops the stale ones later: 4% of a cluster's study
//! point for the max-min engine's finishes, 3% for the NICs' early-release events.)
//!
//! Items are ordered by (time, tie), a total order, so the earliest is the same whatever the
//! heap's shape: the engine's groups tie-break by their index, release events by the sequence
//! in which they were scheduled.

/// A time (or any f64) as the integer that `f64::total_cmp` compares it by: two values compare
/// as their keys do, so a queue keyed by it takes items in the same order, with the transform
/// made once per item instead of twice per comparison (a large refill's saturation queue and the
/// executor's queue of joins compare keys millions of times). `from_order_key` gives the value
/// back bit for bit (the transform keeps the sign bit, so it is its own inverse).
#[inline(always)]
pub fn order_key(x: f64) -> i64 {
    let k = x.to_bits() as i64;
    k ^ (((k >> 63) as u64) >> 1) as i64
}

/// The value whose `order_key` is `key`.
#[inline(always)]
pub fn from_order_key(key: i64) -> f64 {
    f64::from_bits((key ^ (((key >> 63) as u64) >> 1) as i64) as u64)
}

/// Not in the heap.
const NOWHERE: u32 = u32::MAX;

/// A heap entry: its item's key (the time as its `order_key`, compared as an integer), tie and
/// index, side by side, so that a step of `up`, `down` or `hole_down` compares entries it has
/// in hand instead of loading two items' keys from per-item columns visited at random (one of
/// the executor's lines with most cache misses on seed 003's mix was `peek`'s load of the key).
#[derive(Clone, Copy)]
struct Entry {
    key: i64,
    tie: u32,
    item: u32,
}

impl Entry {
    // Inlined: a comparison is a few instructions, and a call to it (from every step of `up`,
    // `down` and `hole_down`) cost as much again (47 M of 100k cs-storm's 5,040 M).
    #[inline(always)]
    fn less(&self, o: &Entry) -> bool {
        // The tie is read only on a tie of times.
        self.key.cmp(&o.key).then_with(|| self.tie.cmp(&o.tie)).is_lt()
    }
}

#[derive(Default)]
pub struct IndexHeap {
    heap: Vec<Entry>,
    /// Per item, its place in `heap` (NOWHERE: not there).
    at: Vec<u32>,
}

impl IndexHeap {
    pub fn new(items: usize) -> IndexHeap {
        IndexHeap { heap: Vec::new(), at: vec![NOWHERE; items] }
    }

    /// The earliest item's time and index.
    #[inline]
    pub fn peek(&self) -> Option<(f64, usize)> {
        self.heap.first().map(|e| (from_order_key(e.key), e.item as usize))
    }

    /// Item i's time (infinite: not in the heap).
    #[inline]
    pub fn time(&self, i: usize) -> f64 {
        match self.at[i] {
            NOWHERE => f64::INFINITY,
            p => from_order_key(self.heap[p as usize].key),
        }
    }

    /// Item i is keyed (t, tie) from now on, in the heap whether it was or not.
    pub fn set(&mut self, i: usize, t: f64, tie: u32) {
        let p = self.at[i];
        let e = Entry { key: order_key(t), tie, item: i as u32 };
        if p == NOWHERE {
            self.heap.push(e);
            self.up(self.heap.len() - 1, e);
        } else {
            let old = self.heap[p as usize];
            // (Compared as times, as before: 0.0 and -0.0 are the same time, and keep the key.)
            if from_order_key(old.key) != t || old.tie != tie {
                let p = self.up(p as usize, e);
                self.down(p, e);
            }
        }
    }

    /// Item i leaves the heap (nothing if it is not there).
    pub fn remove(&mut self, i: usize) {
        let p = self.at[i];
        if p == NOWHERE {
            return;
        }
        self.at[i] = NOWHERE;
        let last = self.heap.pop().unwrap();
        if (p as usize) < self.heap.len() {
            // The hole goes down to a leaf by the earlier child (one comparison a level, not
            // two), and the last item rises from there: it came from the bottom, so it seldom
            // rises far. (Items are totally ordered, so the earliest is the same whatever the
            // shape.)
            let hole = self.hole_down(p as usize);
            self.up(hole, last);
        }
    }

    /// Move the hole at p down to a leaf, each step taking up the earlier child; its place.
    fn hole_down(&mut self, mut p: usize) -> usize {
        let n = self.heap.len();
        loop {
            let l = 2 * p + 1;
            if l >= n {
                return p;
            }
            let c = if l + 1 < n && self.heap[l + 1].less(&self.heap[l]) { l + 1 } else { l };
            self.place(p, self.heap[c]);
            p = c;
        }
    }

    fn place(&mut self, p: usize, e: Entry) {
        self.heap[p] = e;
        self.at[e.item as usize] = p as u32;
    }

    /// Entry e, for the hole at p, rises to its place; that place.
    fn up(&mut self, mut p: usize, e: Entry) -> usize {
        while p > 0 {
            let parent = (p - 1) / 2;
            if !e.less(&self.heap[parent]) {
                break;
            }
            self.place(p, self.heap[parent]);
            p = parent;
        }
        self.place(p, e);
        p
    }

    /// Entry e, at p, sinks to its place.
    fn down(&mut self, mut p: usize, e: Entry) {
        let n = self.heap.len();
        loop {
            let l = 2 * p + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && self.heap[l + 1].less(&self.heap[l]) { l + 1 } else { l };
            if !self.heap[c].less(&e) {
                break;
            }
            self.place(p, self.heap[c]);
            p = c;
        }
        self.place(p, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `order_key` compares as `f64::total_cmp` does, and `from_order_key` undoes it bit for bit.
    #[test]
    fn order_is_total_cmp_as_an_integer() {
        let values = [f64::NEG_INFINITY, -3.5, -1e-300, -0.0, 0.0, 1e-300, 2.0, 2.0000000000000004, 1e300, f64::INFINITY, f64::NAN, -f64::NAN];
        for a in values {
            assert_eq!(from_order_key(order_key(a)).to_bits(), a.to_bits());
            for b in values {
                assert_eq!(order_key(a).cmp(&order_key(b)), a.total_cmp(&b), "{a} {b}");
            }
        }
    }

    #[test]
    fn yields_the_earliest_through_updates_and_removals() {
        let mut h = IndexHeap::new(6);
        for (i, k) in [5.0, 3.0, 8.0, 1.0, 9.0, 3.0].into_iter().enumerate() {
            h.set(i, k, i as u32);
        }
        h.set(4, 0.5, 4);
        h.remove(3);
        h.set(2, 2.0, 2);
        // Moved later, then earlier again; a removal of an item not there does nothing.
        h.set(1, 7.0, 1);
        h.set(1, 3.0, 1);
        h.remove(3);
        let mut order = Vec::new();
        while let Some((_, i)) = h.peek() {
            order.push(i);
            h.remove(i);
        }
        // Items 1 and 5 tie at 3.0: the lower tie (their index) first.
        assert_eq!(order, [4, 2, 1, 5, 0]);
    }

    /// Against a plain list of the live (time, tie) keys, over random sets and removals, with
    /// few distinct times so that ties are decided by the tie key.
    #[test]
    fn matches_a_plain_list() {
        let n = 40;
        let mut h = IndexHeap::new(n);
        let mut live: Vec<Option<(f64, u32)>> = vec![None; n];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % n as u64) as usize;
            if (x >> 8).is_multiple_of(4) {
                h.remove(i);
                live[i] = None;
            } else {
                let key = (((x >> 16) % 5) as f64, ((x >> 24) % 7) as u32);
                h.set(i, key.0, key.1);
                live[i] = Some(key);
            }
            let want = (0..n).filter_map(|g| live[g].map(|k| (k, g))).min_by(|a, b| a.0 .0.total_cmp(&b.0 .0).then(a.0 .1.cmp(&b.0 .1)).then(a.1.cmp(&b.1)));
            let got = h.peek().map(|(_, g)| (live[g].unwrap(), g));
            // Equal keys may come out in either order: compare keys, not items.
            assert_eq!(got.map(|(k, _)| k), want.map(|(k, _)| k));
            assert_eq!(h.time(i), live[i].map_or(f64::INFINITY, |k| k.0));
            assert!(h.heap.len() <= n);
        }
    }
}
