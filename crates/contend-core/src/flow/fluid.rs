//! The fluid limit of per-packet routing at flow level. Where `packet` routes every packet on
//! its own (`spray`, `adaptive`, and UGAL/PAR on a dragonfly: model/packet/routing.rs), a
//! message's bytes leave each switch over several links; with many packets the shares they
//! take tend to fixed fractions, and the flow level routes the message as those fractions:
//! - `spray`: equal shares over the next hops (`NetworkRouter::spray`, unchanged);
//! - `adaptive`: a switch sends each packet to its emptiest output port, which, once every
//!   message through it is sprayed the same way, keeps its ports equally loaded: the message
//!   is first split evenly, then each refining pass re-splits it at every switch by
//!   water-filling over the loads the other messages leave on the ports (capacity weighted),
//!   so a symmetric load stays an even split and an uneven one is evened out;
//! - `ugal`/`par` on a dragonfly of three groups or more: the minimal part is spread over the global links joining the
//!   two groups as under `adaptive`, the detour is the message's Valiant path, and the message
//!   is split between them so that UGAL's two costs (switch hops × (1 + busiest load)) come out
//!   equal, as a stream of per-packet UGAL choices does against a fixed background load.
//!
//! "Load" here is messages over a directed link, in units of the network's fastest link (a link
//! half as fast counts each message twice), fractional: what `NetworkRouter::load` counts for
//! one-path routing. Fractions are rounded to 1/256 so that messages between like pairs
//! share a route in the flow table (a route's key is its coefficients' bits).

use super::NetworkRouter;
use crate::topology::{Hop, Routing};
use std::collections::BTreeMap;

/// The links a message's network part crosses, each directed, with the share that crosses it.
pub type Spread = Vec<(Hop, f64)>;

/// The grain of a fluid split.
const GRAIN: f64 = 256.0;

/// Split one unit over links whose loads after the split should be as equal as they can be:
/// `links` holds (load, relative capacity); `amount` is the load to add (in the same units);
/// `out` gets each link's fraction of the unit, rounded to the grain, summing to one.
fn water_fill(links: &[(f64, f64)], amount: f64, out: &mut Vec<f64>) {
    out.clear();
    out.resize(links.len(), 0.0);
    if links.is_empty() {
        return;
    }
    let mut order: Vec<usize> = (0..links.len()).collect();
    order.sort_by(|&a, &b| links[a].0.total_cmp(&links[b].0).then(a.cmp(&b)));
    // Fill the emptiest links up to a common level λ: Σ c·(λ − load) = amount over those below λ.
    let (mut weighted, mut caps, mut level) = (0.0, 0.0, 0.0);
    for (k, &i) in order.iter().enumerate() {
        let (load, cap) = links[i];
        weighted += cap * load;
        caps += cap;
        level = (amount + weighted) / caps;
        if order.get(k + 1).is_none_or(|&j| level <= links[j].0) {
            break;
        }
    }
    let mut given = 0.0;
    for (i, x) in out.iter_mut().enumerate() {
        let (load, cap) = links[i];
        *x = (cap * (level - load).max(0.0) / amount * GRAIN).round() / GRAIN;
        given += *x;
    }
    // Rounding may leave the fractions off one: the largest takes the difference.
    if let Some(big) = (0..out.len()).max_by(|&a, &b| out[a].total_cmp(&out[b]).then(b.cmp(&a))) {
        out[big] += 1.0 - given;
    }
}

impl NetworkRouter<'_> {
    /// Whether messages are routed as the fluid limit of per-packet routing: the policies that
    /// `packet` routes per packet on this network.
    pub fn fluid(&self) -> bool {
        if !self.fluid_on {
            return self.policy == Routing::Spray;
        }
        match self.policy {
            Routing::Spray | Routing::Adaptive => true,
            // As `packet`: with two groups there is no Valiant path, and UGAL/PAR keep the
            // one path per message that the flow table chooses.
            Routing::Ugal | Routing::Par => self.grouped.is_some() && self.groups.len() > 2,
            _ => false,
        }
    }

    fn slot(h: &Hop) -> usize {
        2 * h.link + usize::from(!h.forward)
    }

    /// A link's capacity relative to the network's fastest link.
    fn relative(&self, link: usize) -> f64 {
        (self.m.links[link].bandwidth / self.fastest).max(f64::MIN_POSITIVE)
    }

    /// Add (or take away, with a negative weight) `weight` messages spread as `spread`.
    pub fn charge_spread(&mut self, spread: &[(Hop, f64)], weight: f64) {
        for (h, x) in spread {
            let r = self.relative(h.link);
            self.fluid_load[Self::slot(h)] += weight * x / r;
        }
    }

    /// The fluid route of `weight` messages (message `flow`, or a pair's first) from `from` to
    /// `to`: its spread, and one path that stands for it (its plan's latency and NIC). The
    /// caller has taken the unit's earlier spread off the loads. `balance`: split by load
    /// (refining passes); else evenly (the first pass), but UGAL/PAR always weigh their two
    /// candidates. Charges the spread.
    pub fn fluid_route(&mut self, flow: u64, from: usize, to: usize, weight: u32, balance: bool) -> Option<(Spread, Vec<Hop>)> {
        let weight = weight as f64;
        let (spread, path) = match self.policy {
            Routing::Ugal | Routing::Par => self.fluid_ugal(flow, from, to, weight, balance)?,
            _ => {
                let spread = if self.grouped.is_some() { self.fluid_minimal(from, to, weight, balance) } else { None };
                let spread = match spread {
                    Some(s) => s,
                    None => self.fluid_shortest(from, to, weight, balance)?,
                };
                (spread, self.minimal_or_shortest(flow, 0, from, to, false)?)
            }
        };
        self.charge_spread(&spread, weight);
        Some((spread, path))
    }

    /// The shortest-path DAG split at every device evenly, or by water-filling its next hops.
    fn fluid_shortest(&mut self, from: usize, to: usize, weight: f64, balance: bool) -> Option<Spread> {
        if !balance {
            let s = self.spray(from, to);
            return (!s.is_empty() || from == to).then_some(s);
        }
        let (table, anchor, plus) = self.take_dist(to);
        let dist = table.dist(to, anchor, plus);
        let mut share: BTreeMap<(u32, usize), f64> = BTreeMap::new(); // (hops to go, device) -> share
        let mut out = Vec::new();
        let (mut candidates, mut links, mut parts) = (Vec::new(), Vec::new(), Vec::new());
        let reachable = dist.at(from) != super::FAR;
        if reachable {
            share.insert((dist.at(from), from), 1.0);
        }
        while let Some(((_, v), x)) = share.pop_last() {
            if v == to {
                continue;
            }
            self.next_hops(&dist, v, &mut candidates);
            links.clear();
            links.extend(candidates.iter().map(|&(_, l)| (self.fluid_load[self.dir(l, v)], self.relative(l as usize))));
            water_fill(&links, weight * x, &mut parts);
            for (&(w, l), &p) in candidates.iter().zip(&parts) {
                if p > 0.0 {
                    out.push((Hop { link: l as usize, forward: self.m.links[l as usize].a == v }, x * p));
                    *share.entry((dist.at(w as usize), w as usize)).or_default() += x * p;
                }
            }
        }
        self.dist[anchor] = Some(table);
        reachable.then_some(out)
    }

    /// A dragonfly's minimal routes between two groups, each global link joining them taking a
    /// share (its physical links' share, or by water-filling their loads), with the local hops
    /// on either side; None inside one group or where no link joins the groups.
    fn fluid_minimal(&mut self, from: usize, to: usize, weight: f64, balance: bool) -> Option<Spread> {
        if !balance {
            return self.spray_grouped(from, to);
        }
        let (rs, rd) = (self.router_of(from)?, self.router_of(to)?);
        let (gs, gd) = (self.group(rs), self.group(rd));
        if gs == gd {
            return None;
        }
        let globals = self.globals(gs, gd).to_vec();
        if globals.is_empty() {
            return None;
        }
        let links: Vec<(f64, f64)> = globals.iter().map(|&(l, ra, _, _)| (self.fluid_load[self.dir(l, ra as usize)], self.relative(l as usize))).collect();
        let mut parts = Vec::new();
        water_fill(&links, weight, &mut parts);
        let mut share: BTreeMap<(usize, bool), f64> = BTreeMap::new();
        let mut hops = Vec::new();
        hops.extend(self.access(from, rs, true));
        hops.extend(self.access(to, rd, false));
        for h in &hops {
            share.insert((h.link, h.forward), 1.0);
        }
        for (&g, &p) in globals.iter().zip(&parts) {
            if p > 0.0 {
                hops.clear();
                self.via(rs, Some(g), rd, &mut hops)?;
                for h in &hops {
                    *share.entry((h.link, h.forward)).or_default() += p;
                }
            }
        }
        Some(share.into_iter().map(|((link, forward), x)| (Hop { link, forward }, x)).collect())
    }

    /// UGAL/PAR: the minimal spread and the Valiant detour, in the shares that make UGAL's
    /// costs of the two equal (all minimal while it costs no more, all detour while the
    /// detour costs less even with the whole message on minimal taken off).
    fn fluid_ugal(&mut self, flow: u64, from: usize, to: usize, weight: f64, balance: bool) -> Option<(Spread, Vec<Hop>)> {
        let minimal = match self.fluid_minimal(from, to, weight, balance) {
            Some(s) => s,
            None => {
                // One group: minimal inside it, as `packet` does.
                let path = self.minimal_or_shortest(flow, 0, from, to, false)?;
                return Some((path.iter().map(|&h| (h, 1.0)).collect(), path));
            }
        };
        let path = self.minimal_or_shortest(flow, 0, from, to, false)?;
        let detour = self.valiant(flow, from, to)?;
        // UGAL's hop counts (the paths', as `ugal_choose` counts them) and busiest loads over
        // the links between switches (the NIC links are common to both).
        let inner = |r: &Self, h: &Hop| {
            let l = &r.m.links[h.link];
            r.switch[l.a] && r.switch[l.b]
        };
        let min_links: Vec<(f64, f64)> =
            minimal.iter().filter(|(h, _)| inner(self, h)).map(|(h, x)| (self.fluid_load[Self::slot(h)], x / self.relative(h.link))).collect();
        let det_links: Vec<(f64, f64)> =
            detour.iter().filter(|h| inner(self, h)).map(|h| (self.fluid_load[Self::slot(h)], 1.0 / self.relative(h.link))).collect();
        let busiest = |links: &[(f64, f64)], x: f64| links.iter().map(|&(load, per)| load + x * weight * per).fold(0.0, f64::max);
        let (hm, hd) = (path.len() as f64, detour.len() as f64);
        // Positive when the minimal path, taking a share f, costs more than the detour taking the rest.
        let excess = |f: f64| hm * (1.0 + busiest(&min_links, f)) - hd * (1.0 + busiest(&det_links, 1.0 - f));
        let f = if excess(1.0) <= 0.0 {
            1.0
        } else if excess(0.0) >= 0.0 {
            0.0
        } else {
            let (mut lo, mut hi) = (0.0, 1.0);
            for _ in 0..20 {
                let mid = 0.5 * (lo + hi);
                if excess(mid) > 0.0 {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            (0.5 * (lo + hi) * GRAIN).round() / GRAIN
        };
        let mut share: BTreeMap<(usize, bool), f64> = BTreeMap::new();
        for &(h, x) in &minimal {
            if f > 0.0 {
                *share.entry((h.link, h.forward)).or_default() += f * x;
            }
        }
        for h in &detour {
            if f < 1.0 {
                *share.entry((h.link, h.forward)).or_default() += 1.0 - f;
            }
        }
        let spread = share.into_iter().map(|((link, forward), x)| (Hop { link, forward }, x)).collect();
        Some((spread, if f >= 0.5 { path } else { detour }))
    }
}
