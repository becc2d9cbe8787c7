//! The NICs' early-release events (release.rs): a binary min-heap of transfers that knows where
//! each sits, so a release time that moves is moved in place and a void one is taken out at
//! once. (A heap with lazy deletion pushed a new entry per move and popped the stale ones
//! later: on seed 003's study point under `nic_release=shared`, 1.9 M pops for 0.77 M
//! messages, 3% of the run.) Events are ordered by (time, sequence), the sequence numbered
//! as each is scheduled, a total order: the earliest is the one the lazy heap gave.

/// Not in the heap.
const NOWHERE: u32 = u32::MAX;

#[derive(Default)]
pub struct Due {
    heap: Vec<u32>,
    /// Per transfer: its event's time and sequence while in the heap, and its place there
    /// (apart, not as a pair, which alignment would pad to 16 bytes).
    time: Vec<f64>,
    seq: Vec<u32>,
    at: Vec<u32>,
}

impl Due {
    pub fn new(transfers: usize) -> Due {
        Due { heap: Vec::new(), time: vec![f64::NAN; transfers], seq: vec![0; transfers], at: vec![NOWHERE; transfers] }
    }

    /// When transfer f's event is due (infinite: it has none).
    #[inline]
    pub fn time(&self, f: usize) -> f64 {
        if self.at[f] == NOWHERE {
            f64::INFINITY
        } else {
            self.time[f]
        }
    }

    /// The earliest event's time and transfer.
    #[inline]
    pub fn peek(&self) -> Option<(f64, usize)> {
        self.heap.first().map(|&f| (self.time[f as usize], f as usize))
    }

    /// Transfer f's event is due at t, scheduled as number `seq` (replacing any it had).
    pub fn set(&mut self, f: usize, t: f64, seq: u32) {
        (self.time[f], self.seq[f]) = (t, seq);
        let p = self.at[f];
        if p == NOWHERE {
            self.heap.push(f as u32);
            self.at[f] = self.heap.len() as u32 - 1;
            self.up(self.heap.len() - 1);
        } else {
            let p = self.up(p as usize);
            self.down(p);
        }
    }

    /// Transfer f has no event (any it had is void).
    pub fn remove(&mut self, f: usize) {
        let p = self.at[f];
        if p == NOWHERE {
            return;
        }
        self.at[f] = NOWHERE;
        let last = self.heap.pop().unwrap();
        if (p as usize) < self.heap.len() {
            self.heap[p as usize] = last;
            self.at[last as usize] = p;
            let p = self.up(p as usize);
            self.down(p);
        }
    }

    fn less(&self, a: u32, b: u32) -> bool {
        let (a, b) = (a as usize, b as usize);
        // The sequence is read only on a tie of times.
        self.time[a].total_cmp(&self.time[b]).then_with(|| self.seq[a].cmp(&self.seq[b])).is_lt()
    }

    fn place(&mut self, p: usize, f: u32) {
        self.heap[p] = f;
        self.at[f as usize] = p as u32;
    }

    fn up(&mut self, mut p: usize) -> usize {
        let f = self.heap[p];
        while p > 0 {
            let parent = (p - 1) / 2;
            if !self.less(f, self.heap[parent]) {
                break;
            }
            self.place(p, self.heap[parent]);
            p = parent;
        }
        self.place(p, f);
        p
    }

    fn down(&mut self, mut p: usize) {
        let f = self.heap[p];
        let n = self.heap.len();
        loop {
            let l = 2 * p + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && self.less(self.heap[l + 1], self.heap[l]) { l + 1 } else { l };
            if !self.less(self.heap[c], f) {
                break;
            }
            self.place(p, self.heap[c]);
            p = c;
        }
        self.place(p, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against a plain list: the earliest (time, sequence) after every schedule, move and removal.
    #[test]
    fn gives_the_earliest_live_event_through_moves_and_removals() {
        let mut d = Due::new(8);
        let mut live: Vec<Option<(f64, u32)>> = vec![None; 8];
        let mut seq = 0u32;
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f = (x % 8) as usize;
            if (x >> 8).is_multiple_of(4) {
                d.remove(f);
                live[f] = None;
            } else {
                // Few distinct times, so that ties are decided by the sequence.
                let t = ((x >> 16) % 5) as f64;
                seq += 1;
                d.set(f, t, seq);
                live[f] = Some((t, seq));
            }
            let want = (0..8).filter_map(|g| live[g].map(|k| (k, g))).min_by(|a, b| a.0 .0.total_cmp(&b.0 .0).then(a.0 .1.cmp(&b.0 .1)));
            assert_eq!(d.peek(), want.map(|((t, _), g)| (t, g)));
            assert_eq!(d.time(f), live[f].map_or(f64::INFINITY, |k| k.0));
        }
    }
}
