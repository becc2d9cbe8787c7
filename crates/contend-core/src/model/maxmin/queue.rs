//! The earliest finish among the routes in flight. Nearly every route's finish time moves at
//! every event of a busy network, so the keys sit in one dense array and the minimum is found
//! by a scan when asked for: cheaper there than a heap's scattered updates, and no worse when
//! few routes are in flight.

pub struct Finishes {
    /// Routes with a key, and their keys at the same positions.
    items: Vec<u32>,
    keys: Vec<f64>,
    /// Position of each route in `items`, or ABSENT.
    pos: Vec<u32>,
    /// Position of the minimum, while no key has changed since it was found.
    min: Option<usize>,
}

const ABSENT: u32 = u32::MAX;

impl Finishes {
    pub fn new(routes: usize) -> Finishes {
        Finishes { items: Vec::new(), keys: Vec::new(), pos: vec![ABSENT; routes], min: None }
    }

    /// The earliest (key, route); among equal keys the smaller route, so runs are reproducible.
    pub fn peek(&mut self) -> Option<(f64, usize)> {
        if self.min.is_none() && !self.items.is_empty() {
            let mut m = 0;
            for k in 1..self.keys.len() {
                if self.keys[k] < self.keys[m] || (self.keys[k] == self.keys[m] && self.items[k] < self.items[m]) {
                    m = k;
                }
            }
            self.min = Some(m);
        }
        self.min.map(|m| (self.keys[m], self.items[m] as usize))
    }

    pub fn set(&mut self, route: usize, key: f64) {
        match self.pos[route] {
            ABSENT => {
                self.pos[route] = self.items.len() as u32;
                self.items.push(route as u32);
                self.keys.push(key);
            }
            p => self.keys[p as usize] = key,
        }
        self.min = None;
    }

    pub fn remove(&mut self, route: usize) {
        let p = self.pos[route];
        if p == ABSENT {
            return;
        }
        self.pos[route] = ABSENT;
        self.items.swap_remove(p as usize);
        self.keys.swap_remove(p as usize);
        if let Some(&moved) = self.items.get(p as usize) {
            self.pos[moved as usize] = p;
        }
        self.min = None;
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
}
