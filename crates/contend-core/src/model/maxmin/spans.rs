//! Per bottleneck group, the resources its routes cross and the coefficient sum of its
//! transfers on each (Σ count × a over the group's routes there): a group's level moves the
//! load of exactly these resources. A group of hundreds of routes crosses a few dozen
//! resources, so level changes, marks and the fast path's checks walk spans, not routes.
//!
//! Every hop of a route in a group holds a handle to its span (a span id), so that a
//! transfer joining or leaving the route, or the route leaving the group, reaches its span
//! without a lookup. A span whose last route left is parked, not forgotten: its id keeps
//! naming the same (group, resource), so a route that comes back to a group it was in (a
//! cluster's routes carry one message at a time, and leave their group with it) finds its
//! spans through its handles again. A hop keeps the handles of the last two groups it joined
//! (`Handles`), so that a route moving back and forth between two groups (a tree's routes,
//! frozen in turn at two resources) finds both spans again. Only a hop joining a group it has no
//! handle for looks its span up by hash, and the ids (one per pair of group and resource ever
//! used) are never freed. (The map holds every pair ever used, and each lookup is a cache miss:
//! with one handle a hop, lookups were 14% of the time of a tree row on 32 x dgx-a100,
//! docs/benchmarks.md, issue 25's twenty-first round.)

use crate::keymap::KeyMap;

/// A handle that names no span.
pub const NO_SPAN: u32 = u32::MAX;

/// A hop's handles: to the span of the group it joined last (the one it is in, while it is in
/// one), then to that of the group before.
pub type Handles = [u32; 2];

/// Handles that name no span.
pub const NO_SPANS: Handles = [NO_SPAN; 2];

/// A group's share of one resource.
#[derive(Clone, Copy)]
pub struct Span {
    pub res: u32,
    /// Routes of the group that cross the resource: the span is parked when the last one leaves.
    routes: u32,
    pub weight: f64,
}

/// What span `id` stands for, and its place in `of[group]` (PARKED: not there).
#[derive(Clone, Copy)]
struct Slot {
    group: u32,
    res: u32,
    place: u32,
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
    slot: Vec<Slot>,
}

impl Spans {
    pub fn new(groups: usize) -> Spans {
        Spans { at: KeyMap::default(), of: vec![Vec::new(); groups], ids: vec![Vec::new(); groups], slot: Vec::new() }
    }

    pub fn of(&self, g: usize) -> &[Span] {
        &self.of[g]
    }

    /// A route joins group g with `weight` on resource `res`: its span there, made live if it
    /// is the group's first route there, gains the weight and the route. `handle` is the
    /// route's handles for this hop: g's span of `res` comes first in them (found there, or
    /// looked up), the other one after it.
    #[inline]
    pub fn join(&mut self, g: u32, res: u32, weight: f64, handles: &mut Handles) {
        let names = |h: u32| matches!(self.slot.get(h as usize), Some(s) if s.group == g && s.res == res);
        if !names(handles[0]) {
            if names(handles[1]) {
                handles.swap(0, 1);
            } else {
                *handles = [self.lookup(g, res), handles[0]];
            }
        }
        let id = handles[0];
        let slot = &mut self.slot[id as usize];
        let of = &mut self.of[g as usize];
        if slot.place == PARKED {
            slot.place = of.len() as u32;
            of.push(Span { res, routes: 0, weight: 0.0 });
            self.ids[g as usize].push(id);
        }
        let s = &mut of[slot.place as usize];
        s.routes += 1;
        s.weight += weight;
    }

    /// The id of g's span of `res`, parked if it is new.
    #[inline(never)]
    fn lookup(&mut self, g: u32, res: u32) -> u32 {
        let slot = &mut self.slot;
        *self.at.entry((g as u64) << 32 | res as u64).or_insert_with(|| {
            slot.push(Slot { group: g, res, place: PARKED });
            slot.len() as u32 - 1
        })
    }

    /// Add `weight` to the span of group g that `handle` names (a route of g gained or lost a
    /// transfer).
    #[inline]
    pub fn add(&mut self, g: u32, handle: u32, weight: f64) {
        self.of[g as usize][self.slot[handle as usize].place as usize].weight += weight;
    }

    /// A route leaves group g with `weight` (its negated share) on the span `handle` names;
    /// the span is parked with its last route. The handle is kept for the route's next join.
    #[inline]
    pub fn leave(&mut self, g: u32, handle: u32, weight: f64) {
        let place = self.slot[handle as usize].place as usize;
        let spans = &mut self.of[g as usize];
        let s = &mut spans[place];
        s.routes -= 1;
        s.weight += weight;
        if s.routes == 0 {
            spans.swap_remove(place);
            let ids = &mut self.ids[g as usize];
            ids.swap_remove(place);
            if let Some(&moved) = ids.get(place) {
                self.slot[moved as usize].place = place as u32;
            }
            self.slot[handle as usize].place = PARKED;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_follow_their_routes() {
        let mut s = Spans::new(3);
        // Two routes of group 2: A crosses 7 and 9, B crosses 7.
        let (mut a7, mut a9, mut b7) = (NO_SPANS, NO_SPANS, NO_SPANS);
        s.join(2, 7, 1.5, &mut a7);
        s.join(2, 9, 1.0, &mut a9);
        s.join(2, 7, 2.0, &mut b7);
        assert_eq!(a7[0], b7[0]);
        s.leave(2, a7[0], -1.5);
        let mut got: Vec<(u32, f64)> = s.of(2).iter().map(|x| (x.res, x.weight)).collect();
        got.sort_by_key(|x| x.0);
        assert_eq!(got, vec![(7, 2.0), (9, 1.0)]);
        // The last route leaving removes the span, and the one moved into its place stays
        // reachable through its handle.
        s.leave(2, b7[0], -2.0);
        s.add(2, a9[0], 0.5);
        assert_eq!(s.of(2).iter().map(|x| (x.res, x.weight)).collect::<Vec<_>>(), vec![(9, 1.5)]);
        assert!(s.of(0).is_empty());
        // A handle of another group's span is not trusted, and a parked span comes back
        // with no weight left from before.
        let mut c7 = a9;
        s.join(1, 7, 3.0, &mut c7);
        assert_ne!(c7[0], a9[0]);
        s.join(2, 7, 4.0, &mut b7);
        assert_eq!(s.of(1).iter().map(|x| (x.res, x.weight)).collect::<Vec<_>>(), vec![(7, 3.0)]);
        let mut got: Vec<(u32, f64)> = s.of(2).iter().map(|x| (x.res, x.weight)).collect();
        got.sort_by_key(|x| x.0);
        assert_eq!(got, vec![(7, 4.0), (9, 1.5)]);
        // A handle kept across a leave finds its span again while another route keeps it.
        let mut d9 = NO_SPANS;
        s.join(2, 9, 0.5, &mut d9);
        s.leave(2, a9[0], -1.5);
        s.join(2, 9, 0.25, &mut a9);
        assert_eq!(a9[0], d9[0]);
        assert_eq!(s.of(2).iter().find(|x| x.res == 9).map(|x| (x.routes, x.weight)), Some((2, 0.75)));
        // A parked span comes back through the same handle with no weight left from before,
        // round-off included (0.1 + 0.2 - 0.1 - 0.2 is 5.6e-17, not 0).
        let (mut e, mut f) = (NO_SPANS, NO_SPANS);
        s.join(0, 3, 0.1, &mut e);
        s.join(0, 3, 0.2, &mut f);
        s.leave(0, e[0], -0.1);
        s.leave(0, f[0], -0.2);
        assert!(s.of(0).is_empty());
        let before = e[0];
        s.join(0, 3, 1e-3, &mut e);
        assert_eq!((e[0], s.of(0)[0].weight), (before, 1e-3));
        // A hop that moves between two groups keeps the handles of both, its current first.
        let mut h = NO_SPANS;
        s.join(1, 5, 1.0, &mut h);
        let one = h[0];
        s.leave(1, h[0], -1.0);
        s.join(2, 5, 1.0, &mut h);
        let two = h[0];
        assert_eq!(h, [two, one]);
        s.leave(2, h[0], -1.0);
        s.join(1, 5, 1.0, &mut h);
        assert_eq!(h, [one, two]);
        assert_eq!(s.of(1).iter().map(|x| (x.res, x.weight)).collect::<Vec<_>>(), vec![(7, 3.0), (5, 1.0)]);
    }
}
