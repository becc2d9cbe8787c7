//! A 1D dragonfly: groups of `a` routers joined all-to-all inside the group, `p` nodes and `h`
//! global links per router.
//!
//! Global wiring, per router (the spirit of seed 003's "per-router arrangement"): global port k
//! of a group (router k / h, its port k mod h) aims at group (g + 1 + k mod (G - 1)) mod G, so
//! each router reaches h different groups and every group pair gets about a·h / (G - 1) links;
//! the i-th port of g aiming at g' is joined to the i-th port of g' aiming at g, and a port left
//! without a partner stays unused (with 16 groups, 8 or 9 links per pair).

use super::{bounded, Attach, Builder};
use crate::error::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DragonflySpec {
    /// Nodes per router.
    pub p: u32,
    /// Routers per group.
    pub a: u32,
    /// Global links per router.
    pub h: u32,
    pub groups: u32,
}

pub(super) fn build(d: &DragonflySpec, b: &mut Builder, origin: &str) -> Result<Attach> {
    let field = |name: &str| format!("fabric.dragonfly.{name}");
    let p = bounded(origin, &field("p"), d.p, 1, 256, "nodes per router")?;
    let a = bounded(origin, &field("a"), d.a, 1, 1024, "routers per group")?;
    let h = bounded(origin, &field("h"), d.h, 0, 256, "global links per router")?;
    let groups = bounded(origin, &field("groups"), d.groups, 1, 4096, "groups")?;
    if groups > 1 && (h == 0 || groups - 1 > a * h) {
        return Err(Error::input(
            origin,
            field("groups"),
            format!("{groups} groups cannot all be joined by {a} routers × {h} global links (at most {} groups); add global links or drop groups", a * h + 1),
        ));
    }
    let routers = groups as u64 * a as u64;
    b.budget(origin, "fabric.dragonfly", routers, routers * (a as u64 - 1) / 2 + routers * h as u64 / 2)?;
    if routers * p as u64 > super::MAX_DEVICES {
        return Err(Error::input(origin, "fabric.dragonfly", format!("has room for {} nodes; describe a smaller dragonfly", routers * p as u64)));
    }
    let name = |g: u32, r: u32| format!("g{g}r{r}");
    for g in 0..groups {
        for r in 0..a {
            b.switch(name(g, r), Some(g));
        }
        for r in 0..a {
            for s in r + 1..a {
                b.wire(&name(g, r), &name(g, s), 1);
            }
        }
    }
    // Ports of each group aiming at each other group, in port order.
    let mut aims: Vec<BTreeMap<u32, Vec<u32>>> = vec![BTreeMap::new(); groups as usize];
    if groups > 1 {
        for (g, aim) in aims.iter_mut().enumerate() {
            for k in 0..a * h {
                let to = (g as u32 + 1 + k % (groups - 1)) % groups;
                aim.entry(to).or_default().push(k / h);
            }
        }
    }
    let mut wires: BTreeMap<(u32, u32, u32, u32), u32> = BTreeMap::new();
    let mut per_pair = Vec::new();
    for g in 0..groups {
        for t in g + 1..groups {
            let mine = aims[g as usize].get(&t).cloned().unwrap_or_default();
            let theirs = aims[t as usize].get(&g).cloned().unwrap_or_default();
            per_pair.push(mine.len().min(theirs.len()));
            for (&r, &s) in mine.iter().zip(&theirs) {
                *wires.entry((g, r, t, s)).or_default() += 1;
            }
        }
    }
    for (&(g, r, t, s), &n) in &wires {
        b.wire(&name(g, r), &name(t, s), n);
    }
    let (lo, hi) = (per_pair.iter().min().copied().unwrap_or(0), per_pair.iter().max().copied().unwrap_or(0));
    b.summary.push(format!(
        "1D dragonfly: {groups} groups of {a} routers (all-to-all inside), {p} nodes and {h} global links per router (radix {}); {} to {} global links per group pair, per-router arrangement",
        p + a.saturating_sub(1) + h,
        lo,
        hi
    ));
    let mut attach = Vec::with_capacity((groups * a * p) as usize);
    for g in 0..groups {
        for r in 0..a {
            for _ in 0..p {
                attach.push(vec![name(g, r)]);
            }
        }
    }
    Ok(attach)
}
