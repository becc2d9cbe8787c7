//! Per bottleneck group, the resources its routes cross and the coefficient sum of its
//! transfers on each (Σ count × a over the group's routes there): a group's level moves the
//! load of exactly these resources. A group of hundreds of routes crosses a few dozen
//! resources, so level changes, marks and the fast path's checks walk spans, not routes.

use crate::keymap::KeyMap;

/// A group's share of one resource.
#[derive(Clone, Copy)]
pub struct Span {
    pub res: u32,
    /// Routes of the group that cross the resource: the span goes when the last one leaves.
    routes: u32,
    pub weight: f64,
}

#[derive(Default)]
pub struct Spans {
    /// (group, resource) → the span's place in `of[group]`.
    at: KeyMap<u32>,
    of: Vec<Vec<Span>>,
}

impl Spans {
    pub fn new(groups: usize) -> Spans {
        Spans { at: KeyMap::default(), of: vec![Vec::new(); groups] }
    }

    pub fn of(&self, g: usize) -> &[Span] {
        &self.of[g]
    }

    /// Add `weight` to group g's span of resource `res`, and `routes` (±1 or 0) to its routes.
    pub fn add(&mut self, g: u32, res: u32, weight: f64, routes: i32) {
        let key = (g as u64) << 32 | res as u64;
        let spans = &mut self.of[g as usize];
        let at = *self.at.entry(key).or_insert_with(|| {
            spans.push(Span { res, routes: 0, weight: 0.0 });
            spans.len() as u32 - 1
        }) as usize;
        let s = &mut spans[at];
        s.routes = (s.routes as i32 + routes) as u32;
        s.weight += weight;
        if s.routes == 0 {
            self.at.remove(&key);
            spans.swap_remove(at);
            if let Some(moved) = spans.get(at) {
                self.at.insert((g as u64) << 32 | moved.res as u64, at as u32);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_follow_their_routes() {
        let mut s = Spans::new(3);
        s.add(2, 7, 1.5, 1);
        s.add(2, 9, 1.0, 1);
        s.add(2, 7, 2.0, 1);
        s.add(2, 7, -1.5, -1);
        let mut got: Vec<(u32, f64)> = s.of(2).iter().map(|x| (x.res, x.weight)).collect();
        got.sort_by_key(|x| x.0);
        assert_eq!(got, vec![(7, 2.0), (9, 1.0)]);
        // The last route leaving removes the span, and the one moved into its place stays findable.
        s.add(2, 7, -2.0, -1);
        s.add(2, 9, 0.5, 0);
        assert_eq!(s.of(2).iter().map(|x| (x.res, x.weight)).collect::<Vec<_>>(), vec![(9, 1.5)]);
        assert!(s.of(0).is_empty());
    }
}
