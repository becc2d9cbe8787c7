//! Per bottleneck group, the resources its routes cross and the coefficient sum of its
//! transfers on each (Σ count × a over the group's routes there): a group's level moves the
//! load of exactly these resources. A group of hundreds of routes crosses a few dozen
//! resources, so level changes, marks and the fast path's checks walk spans, not routes.
//!
//! Each (group, resource) pair ever used has one span id for the whole run, never freed: a span
//! whose last route left is parked, not forgotten, and comes back under the same id. A route
//! reaches its spans by id without a lookup. A route's group is always one of its own resources
//! (the one it froze at), so a route of h hops has at most h groups and h × h spans to know: the
//! engine keeps, per route and group met, the ids of the group's spans of the route's resources
//! (`Spans::join`'s `id`), and looks a pair up by hash only the first time one of its routes' hops
//! joins that group. (Two handles a
//! hop, the last two groups it joined, missed on 38% of the joins of seed 003's mix on
//! fat-tree-2048x1, each a cache miss into a map of every pair ever used: 4.7% of the run's time;
//! and a handle had to be checked, a load of its span's record, on every join.)

use crate::keymap::KeyMap;

/// An id that names no span yet.
pub const NO_SPAN: u32 = u32::MAX;

/// A group's share of one resource.
#[derive(Clone, Copy)]
pub struct Span {
    pub res: u32,
    /// Routes of the group that cross the resource: the span is parked when the last one leaves.
    routes: u32,
    pub weight: f64,
}

const PARKED: u32 = u32::MAX;

#[derive(Default)]
pub struct Spans {
    /// (group, resource) → the span's id.
    at: KeyMap<u32>,
    /// Per group, its live spans (those with routes), in the order they were made live.
    of: Vec<Vec<Span>>,
    /// Per group, the id of each span of `of[group]`, in the same places.
    ids: Vec<Vec<u32>>,
    /// Per id, its span's place in `of[group]` (PARKED: not there).
    place: Vec<u32>,
}

impl Spans {
    pub fn new(groups: usize) -> Spans {
        Spans { at: KeyMap::default(), of: vec![Vec::new(); groups], ids: vec![Vec::new(); groups], place: Vec::new() }
    }

    pub fn of(&self, g: usize) -> &[Span] {
        &self.of[g]
    }

    /// A route joins group g with `weight` on resource `res`: its span there, made live if it
    /// is the group's first route there, gains the weight and the route. `id` is where the
    /// route keeps the id of g's span of `res` (NO_SPAN: not met yet, looked up and kept there).
    #[inline]
    pub fn join(&mut self, g: u32, res: u32, weight: f64, id: &mut u32) -> u32 {
        if *id == NO_SPAN {
            *id = self.lookup(g, res);
        }
        let id = *id;
        let place = &mut self.place[id as usize];
        let of = &mut self.of[g as usize];
        if *place == PARKED {
            *place = of.len() as u32;
            of.push(Span { res, routes: 0, weight: 0.0 });
            self.ids[g as usize].push(id);
        }
        let s = &mut of[*place as usize];
        s.routes += 1;
        s.weight += weight;
        id
    }

    /// The id of g's span of `res`, parked if it is new.
    #[inline(never)]
    fn lookup(&mut self, g: u32, res: u32) -> u32 {
        let place = &mut self.place;
        *self.at.entry((g as u64) << 32 | res as u64).or_insert_with(|| {
            place.push(PARKED);
            place.len() as u32 - 1
        })
    }

    /// Add `weight` to span `id` of group g (a route of g gained or lost a transfer).
    #[inline]
    pub fn add(&mut self, g: u32, id: u32, weight: f64) {
        self.of[g as usize][self.place[id as usize] as usize].weight += weight;
    }

    /// A route leaves group g with `weight` (its negated share) on span `id`; the span is
    /// parked with its last route.
    #[inline]
    pub fn leave(&mut self, g: u32, id: u32, weight: f64) {
        let place = self.place[id as usize] as usize;
        let spans = &mut self.of[g as usize];
        let s = &mut spans[place];
        s.routes -= 1;
        s.weight += weight;
        if s.routes == 0 {
            spans.swap_remove(place);
            let ids = &mut self.ids[g as usize];
            ids.swap_remove(place);
            if let Some(&moved) = ids.get(place) {
                self.place[moved as usize] = place as u32;
            }
            self.place[id as usize] = PARKED;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(s: &Spans, g: usize) -> Vec<(u32, f64)> {
        let mut got: Vec<(u32, f64)> = s.of(g).iter().map(|x| (x.res, x.weight)).collect();
        got.sort_by_key(|x| x.0);
        got
    }

    #[test]
    fn spans_follow_their_routes() {
        let mut s = Spans::new(3);
        // Two routes of group 2: A crosses 7 and 9, B crosses 7. Each keeps its own ids.
        let (mut a7, mut a9, mut b7) = (NO_SPAN, NO_SPAN, NO_SPAN);
        s.join(2, 7, 1.5, &mut a7);
        s.join(2, 9, 1.0, &mut a9);
        assert_eq!(s.join(2, 7, 2.0, &mut b7), a7);
        s.leave(2, a7, -1.5);
        assert_eq!(live(&s, 2), vec![(7, 2.0), (9, 1.0)]);
        // The last route leaving parks the span, and the one moved into its place stays
        // reachable through its id.
        s.leave(2, b7, -2.0);
        s.add(2, a9, 0.5);
        assert_eq!(live(&s, 2), vec![(9, 1.5)]);
        assert!(s.of(0).is_empty());
        // Another group's span of the same resource is another span.
        let mut c7 = NO_SPAN;
        s.join(1, 7, 3.0, &mut c7);
        assert_ne!(c7, a7);
        assert_eq!(live(&s, 1), vec![(7, 3.0)]);
        // A parked span comes back under its id, with no weight left from before, round-off
        // included (0.1 + 0.2 - 0.1 - 0.2 is 5.6e-17, not 0); a route meeting it for the first
        // time finds the same id.
        let (mut e, mut f) = (NO_SPAN, NO_SPAN);
        s.join(0, 3, 0.1, &mut e);
        s.join(0, 3, 0.2, &mut f);
        s.leave(0, e, -0.1);
        s.leave(0, f, -0.2);
        assert!(s.of(0).is_empty());
        let mut fresh = NO_SPAN;
        assert_eq!(s.join(0, 3, 1e-3, &mut fresh), e);
        assert_eq!(live(&s, 0), vec![(3, 1e-3)]);
        s.join(2, 7, 4.0, &mut b7);
        assert_eq!(live(&s, 2), vec![(7, 4.0), (9, 1.5)]);
    }
}
