//! The earliest finish among the groups in flight: a binary min-heap that knows where each
//! group sits in it, so a group whose next finish moves is moved in place (up or down) and a
//! group that leaves is taken out at once. (A heap with lazy deletion pushed a new entry per
//! move and popped the stale ones later: on a cluster's study point, 4% of the run.) Groups
//! are ordered by (finish, index), a total order, so the earliest is the same whatever the
//! heap's shape.

/// Not in the heap.
const NOWHERE: u32 = u32::MAX;

pub struct Finishes {
    heap: Vec<u32>,
    /// Per group: its next finish (meaningful while in the heap) and its place in the heap.
    key: Vec<f64>,
    at: Vec<u32>,
}

impl Finishes {
    pub fn new(groups: usize) -> Finishes {
        Finishes { heap: Vec::new(), key: vec![f64::NAN; groups], at: vec![NOWHERE; groups] }
    }

    /// The earliest (finish, group).
    #[inline]
    pub fn peek(&self) -> Option<(f64, usize)> {
        self.heap.first().map(|&g| (self.key[g as usize], g as usize))
    }

    /// Group g's next finish is `key` (NaN: it has none).
    pub fn set(&mut self, g: usize, key: f64) {
        if key.is_nan() {
            return self.remove(g);
        }
        let p = self.at[g];
        if p == NOWHERE {
            self.key[g] = key;
            self.heap.push(g as u32);
            self.at[g] = self.heap.len() as u32 - 1;
            self.up(self.heap.len() - 1);
        } else if self.key[g] != key {
            self.key[g] = key;
            let p = self.up(p as usize);
            self.down(p);
        }
    }

    pub fn remove(&mut self, g: usize) {
        let p = self.at[g];
        if p == NOWHERE {
            return;
        }
        self.at[g] = NOWHERE;
        let last = self.heap.pop().unwrap();
        if (p as usize) < self.heap.len() {
            self.heap[p as usize] = last;
            self.at[last as usize] = p;
            let p = self.up(p as usize);
            self.down(p);
        }
    }

    fn less(&self, a: u32, b: u32) -> bool {
        self.key[a as usize].total_cmp(&self.key[b as usize]).then(a.cmp(&b)).is_lt()
    }

    fn place(&mut self, p: usize, g: u32) {
        self.heap[p] = g;
        self.at[g as usize] = p as u32;
    }

    fn up(&mut self, mut p: usize) -> usize {
        let g = self.heap[p];
        while p > 0 {
            let parent = (p - 1) / 2;
            if !self.less(g, self.heap[parent]) {
                break;
            }
            self.place(p, self.heap[parent]);
            p = parent;
        }
        self.place(p, g);
        p
    }

    fn down(&mut self, mut p: usize) {
        let g = self.heap[p];
        let n = self.heap.len();
        loop {
            let l = 2 * p + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && self.less(self.heap[l + 1], self.heap[l]) { l + 1 } else { l };
            if !self.less(self.heap[c], g) {
                break;
            }
            self.place(p, self.heap[c]);
            p = c;
        }
        self.place(p, g);
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
        // Moved later, then earlier again; a removal of a group not there does nothing.
        h.set(1, 7.0);
        h.set(1, 3.0);
        h.remove(3);
        let mut order = Vec::new();
        while let Some((_, i)) = h.peek() {
            order.push(i);
            h.remove(i);
        }
        // Groups 1 and 5 tie at 3.0: the lower index first.
        assert_eq!(order, [4, 2, 1, 5, 0]);
    }

    /// Against a sorted list of the live (key, group) pairs, over random sets and removals.
    #[test]
    fn matches_a_sorted_list() {
        let mut x = 7u64;
        let mut next = || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        let n = 40;
        let mut h = Finishes::new(n);
        let mut live: Vec<Option<f64>> = vec![None; n];
        for _ in 0..20_000 {
            let g = next() as usize % n;
            if next() % 4 == 0 {
                h.remove(g);
                live[g] = None;
            } else {
                let k = (next() % 16) as f64;
                h.set(g, k);
                live[g] = Some(k);
            }
            let best = live.iter().enumerate().filter_map(|(g, k)| k.map(|k| (k, g))).min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            assert_eq!(h.peek(), best);
            assert!(h.heap.len() <= n);
        }
    }
}
