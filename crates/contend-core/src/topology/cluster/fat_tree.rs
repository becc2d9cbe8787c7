//! A 3-level fat-tree (leaf, aggregate, core) of switches of one radix, in pods.
//!
//! Inside a pod every leaf connects to every aggregate by `arc_links` parallel links. The core
//! wiring (seed 003 leaves it open) is the standard k-ary one: up-port u of the pod's
//! aggregate j goes to core (j × uplinks + u) mod cores. With the default core count
//! (aggregates per pod × uplinks) every core has one link to every pod; with a single pod there
//! is no core level. A last pod may be partly built (`leaves` not a multiple of the pod size,
//! as Quartz): it gets aggregates in proportion.

use super::{bounded, Attach, Builder};
use crate::error::{Error, Result};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FatTreeSpec {
    /// Ports of every switch.
    pub radix: u32,
    pub pods: u32,
    /// Leaf switches per pod (default radix / 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaves_per_pod: Option<u32>,
    /// Aggregate switches per pod (default: as many as leaves).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aggregates_per_pod: Option<u32>,
    /// Leaf switches in all (default pods × leaves_per_pod); fewer leave the last pod part-built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u32>,
    /// Node ports of a leaf (default: the ports the aggregates leave free).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes_per_leaf: Option<u32>,
    /// Parallel links of every leaf-aggregate arc (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arc_links: Option<u32>,
    /// Core-facing links of an aggregate (default: its leaf-facing links, full bisection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplinks_per_aggregate: Option<u32>,
    /// Core switches (default aggregates_per_pod × uplinks_per_aggregate; none with one pod).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<u32>,
}

/// The nodes a leaf has room for: its ports left after the aggregate links, one per NIC of a node
/// (more would leave the tree short of its stated radix). Zero where not even one node fits.
pub(super) fn leaf_room(f: &FatTreeSpec, nics: u32) -> u32 {
    let lpp = f.leaves_per_pod.unwrap_or(f.radix / 2);
    let app = f.aggregates_per_pod.unwrap_or(lpp);
    f.radix.saturating_sub(app * f.arc_links.unwrap_or(1)) / nics.max(1)
}

/// `nics`: the network ports each node takes on its leaf (one per NIC).
pub(super) fn build(f: &FatTreeSpec, nics: u32, b: &mut Builder, origin: &str) -> Result<Attach> {
    let field = |name: &str| format!("fabric.fat_tree.{name}");
    let radix = bounded(origin, &field("radix"), f.radix, 4, 1024, "ports per switch")?;
    let pods = bounded(origin, &field("pods"), f.pods, 1, 4096, "pods of leaf and aggregate switches")?;
    let lpp = bounded(origin, &field("leaves_per_pod"), f.leaves_per_pod.unwrap_or(radix / 2), 1, radix, "at most the radix")?;
    let app = bounded(origin, &field("aggregates_per_pod"), f.aggregates_per_pod.unwrap_or(lpp), 1, radix, "at most the radix")?;
    let arc = bounded(origin, &field("arc_links"), f.arc_links.unwrap_or(1), 1, radix, "parallel links per leaf-aggregate arc")?;
    let leaves =
        bounded(origin, &field("leaves"), f.leaves.unwrap_or(pods * lpp), (pods - 1) * lpp + 1, pods * lpp, "the last pod holds 1 to leaves_per_pod leaves")?;
    if app * arc >= radix {
        return Err(Error::input(
            origin,
            field("radix"),
            format!("{radix} ports cannot take {app} aggregates × {arc} links and any node; use a larger radix or fewer aggregates"),
        ));
    }
    let room = leaf_room(f, nics);
    if room == 0 {
        return Err(Error::input(
            origin,
            field("radix"),
            format!(
                "leaves {} ports after {app} aggregates × {arc} links, too few for one node of {nics} NICs; use a larger radix or fewer aggregates",
                radix - app * arc
            ),
        ));
    }
    let what =
        if nics > 1 { format!("leaf ports left after the aggregate links, at {nics} NICs a node") } else { "ports left after the aggregate links".to_string() };
    let npl = bounded(origin, &field("nodes_per_leaf"), f.nodes_per_leaf.unwrap_or(room), 1, room, &what)?;
    let up = f.uplinks_per_aggregate.unwrap_or(lpp * arc);
    let up = bounded(origin, &field("uplinks_per_aggregate"), up, 0, radix.saturating_sub(lpp * arc), "ports left after the leaf links")?;
    let cores = if pods == 1 { 0 } else { f.cores.unwrap_or(app * up) };
    if pods > 1 && (cores == 0 || up == 0) {
        return Err(Error::input(origin, field("cores"), "is 0 with several pods; pods need core switches and aggregate uplinks to reach each other"));
    }
    // Per pod: its leaves, and its aggregates in proportion (a part-built pod has fewer).
    let mut pod_leaves = Vec::new();
    let mut pod_aggs = Vec::new();
    for p in 0..pods {
        let l = (leaves - p * lpp).min(lpp);
        pod_leaves.push(l);
        pod_aggs.push(((l * app).div_ceil(lpp)).max(1));
    }
    let total_aggs: u32 = pod_aggs.iter().sum();
    let arcs: u64 = pod_leaves.iter().zip(&pod_aggs).map(|(&l, &a)| l as u64 * a as u64).sum();
    b.budget(origin, "fabric.fat_tree", (leaves + total_aggs + cores) as u64, arcs + total_aggs as u64 * up.min(cores.max(1)) as u64)?;
    if leaves as u64 * npl as u64 > super::MAX_DEVICES {
        return Err(Error::input(origin, "fabric.fat_tree", format!("has room for {} nodes; describe a smaller tree", leaves as u64 * npl as u64)));
    }
    let (mut leaf0, mut agg0) = (0u32, 0u32);
    for p in 0..pods {
        for k in 0..pod_leaves[p as usize] {
            b.switch(format!("leaf{}", leaf0 + k), Some(p));
        }
        for k in 0..pod_aggs[p as usize] {
            b.switch(format!("agg{}", agg0 + k), Some(p));
        }
        for l in 0..pod_leaves[p as usize] {
            for a in 0..pod_aggs[p as usize] {
                b.wire(&format!("agg{}", agg0 + a), &format!("leaf{}", leaf0 + l), arc);
            }
        }
        leaf0 += pod_leaves[p as usize];
        agg0 += pod_aggs[p as usize];
    }
    let mut core_links = vec![0u32; cores as usize];
    if cores > 0 {
        for c in 0..cores {
            b.switch(format!("core{c}"), None);
        }
        let mut agg = 0u32;
        for p in 0..pods {
            for j in 0..pod_aggs[p as usize] {
                // Parallel links to one core (more uplinks than cores) are one link of several.
                let mut per_core: std::collections::BTreeMap<u32, u32> = std::collections::BTreeMap::new();
                for u in 0..up {
                    *per_core.entry((j * up + u) % cores).or_default() += 1;
                }
                for (c, n) in per_core {
                    b.wire(&format!("core{c}"), &format!("agg{}", agg + j), n);
                    core_links[c as usize] += n;
                }
            }
            agg += pod_aggs[p as usize];
        }
        if let Some(c) = core_links.iter().position(|&n| n > radix) {
            return Err(Error::input(
                origin,
                field("cores"),
                format!("core{c} would need {} ports of {radix}; give more cores (e.g. {})", core_links[c], app * up),
            ));
        }
    }
    b.summary.push(format!(
        "3-level fat-tree of radix-{radix} switches: {leaves} leaf, {total_aggs} aggregate, {cores} core; {pods} pods of {lpp} leaf + {app} aggregate{}",
        if leaves < pods * lpp { " (the last pod part-built)" } else { "" }
    ));
    b.summary.push(format!(
        "leaf: {npl} nodes{} down, {app} × {arc} links up; aggregate: {} up-links{}",
        if nics > 1 { format!(" × {nics} NIC ports") } else { String::new() },
        up,
        if cores > 0 { format!("; core wiring: up-port u of a pod's aggregate j → core (j × {up} + u) mod {cores}") } else { String::new() }
    ));
    let mut attach = Vec::with_capacity((leaves * npl) as usize);
    for l in 0..leaves {
        for _ in 0..npl {
            attach.push(vec![format!("leaf{l}")]);
        }
    }
    Ok(attach)
}
