//! The transfer patterns `contend generate` writes: one table, each row a name, its help and
//! its generator, so that a new pattern is one row and the list users see is the table.

use crate::error::{Error, Result};
use crate::flow::router::Router;
use crate::topology::Machine;
use crate::units::{Bytes, Time};
use crate::workload::{self, TransferSpec, WorkloadSpec};
use std::collections::BTreeMap;

/// Most transfers `generate` writes: 10 million, about 600 MB of YAML.
pub const MAX_GENERATED: usize = 10_000_000;

/// What `generate` is asked for; quantities carry units.
#[derive(Clone, Debug, Default)]
pub struct GenerateRequest {
    pub pattern: String,
    /// Devices taking part (default: every GPU of the machine).
    pub peers: Option<Vec<String>>,
    pub size: String,
    pub root: Option<String>,
    pub count: usize,
    pub seed: u64,
    /// Issue transfer k at k × gap.
    pub gap: Option<String>,
    /// Rank grid of `neighbours`, e.g. "16x16x8"; wrap-around with `periodic`.
    pub grid: Option<String>,
    pub periodic: bool,
}

/// What a generator is given: the machine, the peers, the request and its size.
struct Ask<'a> {
    m: &'a Machine,
    peers: &'a [String],
    req: &'a GenerateRequest,
    size: Bytes,
}

pub struct Pattern {
    pub name: &'static str,
    /// Other spellings it answers to (not listed).
    aliases: &'static [&'static str],
    pub help: &'static str,
    make: fn(&Ask) -> Result<Vec<TransferSpec>>,
}

pub const PATTERNS: &[Pattern] = &[
    Pattern { name: "scatter", aliases: &[], help: "root sends to every other peer", make: |a| Ok(workload::scatter(root(a)?, a.peers, a.size)) },
    Pattern { name: "gather", aliases: &[], help: "every other peer sends to root", make: |a| Ok(workload::gather(root(a)?, a.peers, a.size)) },
    Pattern {
        name: "incast",
        aliases: &[],
        help: "every other peer sends to root (the same as gather)",
        make: |a| Ok(workload::gather(root(a)?, a.peers, a.size)),
    },
    Pattern { name: "all-to-all", aliases: &[], help: "every ordered pair of peers", make: |a| Ok(workload::all_to_all(a.peers, a.size)) },
    Pattern {
        name: "random",
        aliases: &[],
        help: "count seeded random pairs: distinct while any are left, then repeating (uniform random traffic)",
        make: |a| Ok(workload::random_graph(a.peers, a.req.count, a.size, a.req.seed)),
    },
    Pattern {
        name: "permutation",
        aliases: &[],
        help: "every peer sends to one other, each receiving once (seeded)",
        make: |a| Ok(workload::permutation(a.peers, a.size, a.req.seed)),
    },
    Pattern {
        name: "neighbours",
        aliases: &["neighbors"],
        help: "ranks on a grid (--grid 16x16x8) send to their neighbours along every dimension",
        make: neighbours,
    },
    Pattern { name: "group-shift", aliases: &[], help: "every GPU of dragonfly group (or pod) i sends to its counterpart in group i + 1", make: group_shift },
];

/// A transfer pattern among the peers of machine `m`.
pub fn generate(m: &Machine, req: &GenerateRequest) -> Result<WorkloadSpec> {
    let size = Bytes::parse(&req.size).map_err(|e| Error::input("--size", "", e))?;
    let count = req.count;
    if !(1..=MAX_GENERATED).contains(&count) {
        return Err(Error::input("--count", "", format!("{count} is out of range; give 1 to {MAX_GENERATED}")));
    }
    let peers = req.peers.clone().unwrap_or_else(|| m.gpu_names());
    if peers.len() < 2 {
        let field = if req.peers.is_some() { "--gpus" } else { "the machine's GPUs" };
        return Err(Error::input(field, peers.join(","), "needs at least two devices"));
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(twice) = peers.iter().find(|p| !seen.insert(p.as_str())) {
        return Err(Error::input("--gpus", twice, "is named twice; name each device once"));
    }
    let name = req.pattern.as_str();
    let Some(pattern) = PATTERNS.iter().find(|p| p.name == name || p.aliases.contains(&name)) else {
        let names: Vec<&str> = PATTERNS.iter().map(|p| p.name).collect();
        return Err(Error::input("pattern", name, format!("is not a pattern; choose {}", names.join(", "))));
    };
    let mut list = (pattern.make)(&Ask { m, peers: &peers, req, size })?;
    if let Some(gap) = &req.gap {
        let gap = Time::parse(gap).map_err(|e| Error::input("--gap", "", e))?;
        for (k, t) in list.iter_mut().enumerate() {
            let at = gap
                .0
                .checked_mul(k as u64)
                .ok_or_else(|| Error::input("--gap", "", format!("{gap} × {k} transfers is beyond the 213 days a time can hold; give a smaller gap")))?;
            t.start = Some(Time(at));
        }
    }
    Ok(WorkloadSpec { transfers: list, ..Default::default() })
}

fn root<'a>(a: &'a Ask) -> Result<&'a str> {
    // The hint names a device of this machine (a cluster's GPUs are n0.GPU0, ...; "GPU0" is none).
    a.req.root.as_deref().ok_or_else(|| Error::input("--root", "", format!("{} needs a root device; add e.g. --root {}", a.req.pattern, a.peers[0])))
}

fn neighbours(a: &Ask) -> Result<Vec<TransferSpec>> {
    let text = a.req.grid.as_deref().ok_or_else(|| Error::input("--grid", "", "neighbours needs the rank grid, e.g. --grid 16x16x8"))?;
    let grid: Vec<u32> = text
        .split('x')
        .map(|d| d.trim().parse::<u32>().ok().filter(|&d| d > 0))
        .collect::<Option<_>>()
        .ok_or_else(|| Error::input("--grid", text, "is not a grid; write positive sizes joined by x, e.g. 16x16x8"))?;
    let ranks: u64 = grid.iter().map(|&d| d as u64).product();
    if ranks != a.peers.len() as u64 {
        return Err(Error::input("--grid", text, format!("has {ranks} ranks for {} peers; the product must equal the peer count", a.peers.len())));
    }
    Ok(workload::neighbours(a.peers, &grid, a.req.periodic, a.size))
}

/// Every peer of group i sends to the peer at the same position in group i + 1 (groups: the
/// group of the switch its node hangs off).
fn group_shift(a: &Ask) -> Result<Vec<TransferSpec>> {
    let router = Router::new(a.m);
    let mut by_group: BTreeMap<u32, Vec<&String>> = BTreeMap::new();
    for p in a.peers {
        let d = a.m.device(p).ok_or_else(|| Error::input("--gpus", p, format!("is not a device of {}", a.m.name)))?;
        let group = router.nearest_group(d).ok_or_else(|| {
            Error::input("pattern", "group-shift", format!("{p} reaches no switch with a group; group-shift needs a dragonfly or a fat-tree with pods"))
        })?;
        by_group.entry(group).or_default().push(p);
    }
    let groups: Vec<&Vec<&String>> = by_group.values().collect();
    if groups.len() < 2 {
        return Err(Error::input("pattern", "group-shift", "needs peers in at least two groups"));
    }
    let mut out = Vec::new();
    for (g, members) in groups.iter().enumerate() {
        let next = groups[(g + 1) % groups.len()];
        for (k, src) in members.iter().enumerate() {
            let dst = next[k % next.len()];
            out.push(TransferSpec { src: (*src).clone(), dst: dst.clone(), size: a.size, ..Default::default() });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_root_is_hinted_with_a_device_of_the_machine() {
        // On a cluster "--root GPU0" names no device (it was the hint, and then refused).
        for (machine, first) in [("fat-tree-256x8", "n0.GPU0"), ("cs-storm-socket", "GPU0")] {
            let m = Machine::load(machine).unwrap();
            for pattern in ["incast", "scatter"] {
                let req = GenerateRequest { pattern: pattern.into(), size: "1MiB".into(), count: 1, ..Default::default() };
                let e = generate(&m, &req).unwrap_err().to_string();
                assert!(e.contains(&format!("add e.g. --root {first}")), "{e}");
            }
        }
    }
}
