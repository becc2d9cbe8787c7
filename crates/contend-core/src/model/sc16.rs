//! The SC16 PCIe congestion-aware model (Martinasso, Kwasniewski, Alam, Schulthess, Hoefler).
//!
//! Per phase, every active copy gets a congestion factor rho in [0, 1] of the reference
//! bandwidth B through four steps: A source arbitration, B upstream proportional sharing,
//! C downstream round-robin with the root-complex penalty tau, D head-of-line blocking and
//! one redistribution pass. docs/models.md states each rule, where it comes from, and the
//! named options for the places where the slides admit two readings.

use super::Prepared;
use super::{EventModel, RateAdaptor, RateModel};
use crate::error::{Error, Result};
use crate::flow::{FlowRules, FlowTable};
use crate::params::{Kind, Param, Values};
use crate::topology::{Link, LinkKind, Machine, PcieTree, Route, NOT_IN_TREE};
use crate::workload::Mechanism;
use crate::workload::{Transfer, Workload};
use std::collections::BTreeMap;

/// Below this, two factors are equal: sums like 1/3 + 1/3 + 1/3 must not count as "over 1".
const EPS: f64 = 1e-12;
const NO_LINK: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HolRule {
    /// Every sharer of the blocked FIFO slows by the blocker's ratio (the default).
    Proportional,
    /// Every sharer is capped at the blocker's final factor.
    Min,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcScope {
    /// A root-crossing copy is penalised at every congested downstream port (literal reading).
    Every,
    /// Only at the first congested downstream port after the root complex.
    First,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcAllCrossing {
    /// When every group at a port crosses the root, each still gets 1/n - tau (literal reading).
    Literal,
    /// Tau only applies when crossing and local groups are mixed; otherwise plain 1/n.
    Mixed,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sc16Params {
    /// Reference bandwidth B in bytes/s; `None`: the machine's (`reference_bandwidth`).
    pub bandwidth: Option<f64>,
    pub tau: f64,
    pub hol: HolRule,
    /// Work-conserving fill of leftover port capacity.
    pub fill: bool,
    pub rc_scope: RcScope,
    pub rc_all: RcAllCrossing,
    /// With n >= 3 groups, scale the local groups so that the port is not over-allocated.
    pub rc_rescale: bool,
}

impl Default for Sc16Params {
    /// The paper's fitted tau = 0.1735, its B scaled to the machine's PCIe links (exactly its
    /// 11.6 GiB/s on Gen3 x16), and its literal rules.
    fn default() -> Self {
        Sc16Params::read(&Values::defaults(PARAMS))
    }
}

pub const PARAMS: &[Param] = &[
    Param::derived(
        "bandwidth",
        Kind::Bandwidth,
        "11.6GiB/s on Gen3 x16, scaled to the copies' slowest PCIe link",
        "reference bandwidth B of every PCIe link, each direction (SC16 fitted 11.6GiB/s on a Gen3 x16 tree)",
    ),
    Param::new("tau", Kind::SHARE, "0.1735", "root-complex penalty"),
    Param::new("hol", Kind::Choice(&["proportional", "min"]), "proportional", "head-of-line cap"),
    Param::new("fill", Kind::OnOff, "on", "work-conserving redistribution of leftover port capacity"),
    Param::new("rc_scope", Kind::Choice(&["every", "first"]), "every", "where a root-crossing copy pays tau: every congested port or the first"),
    Param::new(
        "rc_all",
        Kind::Choice(&["literal", "mixed"]),
        "literal",
        "when every group at a port crosses the root: literal (1/n - tau each) or mixed (plain 1/n)",
    ),
    Param::new("rc_rescale", Kind::OnOff, "on", "with 3 or more groups, scale local groups so the port is not over-allocated"),
];

impl Sc16Params {
    pub fn parse(pairs: &[(String, String)]) -> Result<Sc16Params> {
        Ok(Sc16Params::read(&Values::flags("sc16", PARAMS, pairs)?))
    }

    fn read(v: &Values) -> Sc16Params {
        Sc16Params {
            bandwidth: v.bytes_per_sec_opt("bandwidth"),
            tau: v.real("tau"),
            hol: if v.choice("hol") == "min" { HolRule::Min } else { HolRule::Proportional },
            fill: v.on("fill"),
            rc_scope: if v.choice("rc_scope") == "first" { RcScope::First } else { RcScope::Every },
            rc_all: if v.choice("rc_all") == "mixed" { RcAllCrossing::Mixed } else { RcAllCrossing::Literal },
            rc_rescale: v.on("rc_rescale"),
        }
    }

    pub fn to_map(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        if let Some(b) = self.bandwidth {
            m.insert("bandwidth".into(), format!("{}GiB/s", b / 1073741824.0));
        }
        m.insert("tau".into(), format!("{}", self.tau));
        m.insert("hol".into(), if self.hol == HolRule::Min { "min" } else { "proportional" }.into());
        m.insert("fill".into(), if self.fill { "on" } else { "off" }.into());
        m.insert("rc_scope".into(), if self.rc_scope == RcScope::First { "first" } else { "every" }.into());
        m.insert("rc_all".into(), if self.rc_all == RcAllCrossing::Mixed { "mixed" } else { "literal" }.into());
        m.insert("rc_rescale".into(), if self.rc_rescale { "on" } else { "off" }.into());
        m
    }
}

/// Why a factor changed at one step, for `contend explain`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cause {
    /// Position of the affected flow in the `routes` slice given to `factors`.
    pub flow: usize,
    /// 'B' upstream sharing, 'C' downstream arbitration, 'D' head-of-line cap, 'F' redistribution pass.
    pub step: char,
    /// Directed link whose egress port (or, for 'D', whose shared FIFO) caused the change.
    pub link: u32,
    pub before: f64,
    pub after: f64,
    /// For 'D': the flow (position) whose throttling further on blocks the FIFO.
    pub blocker: Option<usize>,
    /// The root-complex penalty tau was applied at this port.
    pub rc_penalty: bool,
}

/// Factors of every flow after each step, and the causes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepTrace {
    pub a: Vec<f64>,
    pub b: Vec<f64>,
    pub c: Vec<f64>,
    pub d: Vec<f64>,
    pub fin: Vec<f64>,
    pub causes: Vec<Cause>,
}

#[derive(Clone, Copy, Debug)]
struct Group {
    ingress: u32,
    sum: f64,
    crossing: bool,
    share: f64,
}

/// Reusable buffers, so that an evaluation allocates nothing (schedule search calls it millions of times).
#[derive(Default, Clone)]
struct Scratch {
    src_count: Vec<u32>,
    link_start: Vec<u32>,
    entries: Vec<(u32, u32)>,
    hop_off: Vec<u32>,
    hop_link: Vec<u32>,
    up_b: Vec<f64>,
    hop_ref: Vec<f64>,
    rho: Vec<f64>,
    rho_b: Vec<f64>,
    cap: Vec<f64>,
    penalised: Vec<bool>,
    /// Under rc_scope=first: the port where the reference pass charged tau, per flow.
    penalty_link: Vec<u32>,
    groups: Vec<Group>,
    user_group: Vec<u8>,
    cursor: Vec<u32>,
}

/// The SC16 evaluator for one PCIe tree.
#[derive(Clone)]
pub struct Sc16 {
    pub tree: PcieTree,
    pub params: Sc16Params,
    s: Scratch,
}

impl Sc16 {
    pub fn new(tree: PcieTree, params: Sc16Params) -> Sc16 {
        let n = tree.len();
        let s = Scratch { src_count: vec![0; n], link_start: vec![0; 2 * n + 1], ..Default::default() };
        Sc16 { tree, params, s }
    }

    /// Congestion factors of `routes[active[k]]` into `out[k]`; with `trace`, every step and cause.
    pub fn factors(&mut self, routes: &[Route], active: &[usize], out: &mut [f64], mut trace: Option<&mut StepTrace>) {
        let n = active.len();
        let nodes = self.tree.len();
        let p = self.params;
        let s = &mut self.s;

        // Index: which (flow, hop) pairs use each directed link, in compressed rows.
        s.hop_off.clear();
        s.hop_link.clear();
        s.link_start.iter_mut().for_each(|x| *x = 0);
        for &i in active {
            s.hop_off.push(s.hop_link.len() as u32);
            for &h in &routes[i].hops {
                s.hop_link.push(h);
                s.link_start[h as usize + 1] += 1;
            }
        }
        s.hop_off.push(s.hop_link.len() as u32);
        for l in 0..2 * nodes {
            s.link_start[l + 1] += s.link_start[l];
        }
        s.entries.resize(s.hop_link.len(), (0, 0));
        let mut cursor = std::mem::take(&mut s.cursor);
        cursor.clear();
        cursor.extend_from_slice(&s.link_start[..2 * nodes]);
        for k in 0..n {
            for gh in s.hop_off[k]..s.hop_off[k + 1] {
                let l = s.hop_link[gh as usize] as usize;
                s.entries[cursor[l] as usize] = (k as u32, gh);
                cursor[l] += 1;
            }
        }
        s.cursor = cursor;
        let users = |s: &Scratch, l: usize| s.link_start[l] as usize..s.link_start[l + 1] as usize;

        // Step A: a GPU's DMA engine interleaves its outgoing copies equally.
        s.rho.clear();
        for &i in active {
            s.src_count[routes[i].src] += 1;
        }
        for &i in active {
            s.rho.push(1.0 / s.src_count[routes[i].src] as f64);
        }
        for &i in active {
            s.src_count[routes[i].src] = 0;
        }
        if let Some(t) = trace.as_deref_mut() {
            *t = StepTrace::default();
            t.a = s.rho.clone();
        }

        // Step B: upstream ports bottom-up (deepest node first), proportional sharing.
        s.up_b.clear();
        s.up_b.resize(s.hop_link.len(), 0.0);
        for v in (1..nodes).rev() {
            let l = 2 * v;
            let r = users(s, l);
            if r.is_empty() {
                continue;
            }
            let sum: f64 = s.entries[r.clone()].iter().map(|&(k, _)| s.rho[k as usize]).sum();
            for e in r {
                let (k, gh) = s.entries[e];
                let k = k as usize;
                if sum > 1.0 + EPS {
                    let before = s.rho[k];
                    s.rho[k] /= sum;
                    if let Some(t) = trace.as_deref_mut() {
                        t.causes.push(Cause { flow: k, step: 'B', link: l as u32, before, after: s.rho[k], blocker: None, rc_penalty: false });
                    }
                }
                s.up_b[gh as usize] = s.rho[k];
            }
        }
        s.rho_b.clear();
        s.rho_b.extend_from_slice(&s.rho);
        if let Some(t) = trace.as_deref_mut() {
            t.b = s.rho_b.clone();
        }

        // Step C without caps: the reference pass whose per-hop rates feed the HOL rule.
        s.cap.clear();
        s.cap.resize(n, 1.0);
        Self::pass_c(s, &self.tree, routes, active, p, 'C', trace.as_deref_mut());
        if let Some(t) = trace.as_deref_mut() {
            t.c = s.rho.clone();
        }

        // Step D1: a copy throttled further along its path backs up the FIFO it shares.
        let mut capped = false;
        for l in 0..2 * nodes {
            let r = users(s, l);
            if r.len() < 2 {
                continue;
            }
            for ex in r.clone() {
                let (x, ghx) = s.entries[ex];
                let (x, ghx) = (x as usize, ghx as usize);
                let last = s.rho[x];
                let here = s.hop_ref[ghx];
                if last >= here * (1.0 - EPS) {
                    continue;
                }
                for ey in r.clone() {
                    let (y, ghy) = s.entries[ey];
                    let y = y as usize;
                    if y == x {
                        continue;
                    }
                    let bound = match p.hol {
                        HolRule::Proportional => s.hop_ref[ghy as usize] * last / here,
                        HolRule::Min => last,
                    };
                    if bound < s.cap[y] - EPS {
                        let seen = s.cap[y].min(s.rho[y]);
                        if let (Some(t), true) = (trace.as_deref_mut(), bound < seen - EPS) {
                            t.causes.push(Cause { flow: y, step: 'D', link: l as u32, before: seen, after: bound, blocker: Some(x), rc_penalty: false });
                        }
                        s.cap[y] = bound;
                        capped = true;
                    }
                }
            }
        }
        if let Some(t) = trace.as_deref_mut() {
            t.d = s.rho.iter().zip(&s.cap).map(|(r, c)| r.min(*c)).collect();
        }

        // Step D2: arbitrate again with the caps, so freed capacity is picked up by the others.
        if capped {
            Self::pass_c(s, &self.tree, routes, active, p, 'F', trace.as_deref_mut());
        }
        out[..n].copy_from_slice(&s.rho[..n]);
        if let Some(t) = trace {
            t.fin = s.rho.clone();
        }
    }

    /// One top-down pass of step C over the downstream ports. Reads rho_b, up_b and cap;
    /// leaves the final factors in rho and the per-hop rates in hop_ref.
    fn pass_c(s: &mut Scratch, tree: &PcieTree, routes: &[Route], active: &[usize], p: Sc16Params, step: char, mut trace: Option<&mut StepTrace>) {
        let n = active.len();
        s.rho.clear();
        for k in 0..n {
            s.rho.push(s.rho_b[k].min(s.cap[k]));
        }
        s.hop_ref.clear();
        s.hop_ref.resize(s.hop_link.len(), 0.0);
        for k in 0..n {
            let off = s.hop_off[k] as usize;
            for h in 0..routes[active[k]].n_up {
                s.hop_ref[off + h] = s.up_b[off + h].min(s.cap[k]);
            }
        }
        s.penalised.clear();
        s.penalised.resize(n, false);
        if step == 'C' {
            s.penalty_link.clear();
            s.penalty_link.resize(n, NO_LINK);
        }
        let nodes = tree.len();
        for v in 1..nodes {
            let l = 2 * v + 1;
            let (lo, hi) = (s.link_start[l] as usize, s.link_start[l + 1] as usize);
            if lo == hi {
                continue;
            }
            // Group the port's users by the link they entered this switch through.
            s.groups.clear();
            s.user_group.clear();
            for e in lo..hi {
                let (k, gh) = s.entries[e];
                let k = k as usize;
                let first_hop = gh == s.hop_off[k];
                let ingress = if first_hop { u32::MAX - k as u32 } else { s.hop_link[gh as usize - 1] };
                let crossing = routes[active[k]].crosses_root
                    && match p.rc_scope {
                        RcScope::Every => true,
                        // The redistribution pass charges tau where the reference pass did.
                        RcScope::First if s.penalty_link[k] != NO_LINK => s.penalty_link[k] == l as u32,
                        RcScope::First => !s.penalised[k],
                    };
                let g = match s.groups.iter().position(|g| g.ingress == ingress) {
                    Some(g) => g,
                    None => {
                        s.groups.push(Group { ingress, sum: 0.0, crossing: false, share: 0.0 });
                        s.groups.len() - 1
                    }
                };
                s.groups[g].sum += s.rho[k];
                s.groups[g].crossing |= crossing;
                s.user_group.push(g as u8);
            }
            let total: f64 = s.groups.iter().map(|g| g.sum).sum();
            if total > 1.0 + EPS {
                let penalty_here = arbitrate(&mut s.groups, p);
                for (j, e) in (lo..hi).enumerate() {
                    let k = s.entries[e].0 as usize;
                    let g = s.groups[s.user_group[j] as usize];
                    let before = s.rho[k];
                    let after = if g.sum > 0.0 { before * g.share / g.sum } else { 0.0 };
                    s.rho[k] = after;
                    if penalty_here && g.crossing && !s.penalised[k] {
                        s.penalised[k] = true;
                        if step == 'C' {
                            s.penalty_link[k] = l as u32;
                        }
                    }
                    if let Some(t) = trace.as_deref_mut() {
                        if after < before * (1.0 - EPS) {
                            t.causes.push(Cause { flow: k, step, link: l as u32, before, after, blocker: None, rc_penalty: penalty_here && g.crossing });
                        }
                    }
                }
            }
            for e in lo..hi {
                let (k, gh) = s.entries[e];
                s.hop_ref[gh as usize] = s.rho[k as usize];
            }
        }
    }
}

/// Round-robin among ingress groups with the root-complex penalty; sets each group's `share`.
/// Returns whether tau was applied at this port.
fn arbitrate(groups: &mut [Group], p: Sc16Params) -> bool {
    let n = groups.len() as f64;
    let base = 1.0 / n;
    let any = groups.iter().any(|g| g.crossing);
    let all = groups.iter().all(|g| g.crossing);
    let penalty = any && !(all && p.rc_all == RcAllCrossing::Mixed);
    for g in groups.iter_mut() {
        g.share = if !penalty {
            base.min(g.sum)
        } else if g.crossing {
            (base - p.tau).max(0.0).min(g.sum)
        } else {
            (base + p.tau).min(g.sum)
        };
    }
    if penalty && p.rc_rescale {
        // With n >= 3 the slide formula can hand out 1 + (n-2)tau; take the excess from local groups.
        let total: f64 = groups.iter().map(|g| g.share).sum();
        if total > 1.0 + EPS {
            let crossing: f64 = groups.iter().filter(|g| g.crossing).map(|g| g.share).sum();
            let local = total - crossing;
            let scale = ((1.0 - crossing) / local).max(0.0);
            groups.iter_mut().filter(|g| !g.crossing).for_each(|g| g.share *= scale);
        }
    }
    if p.fill {
        // Water-filling: leftover capacity goes in equal parts to groups that want more.
        let mut free = 1.0 - groups.iter().map(|g| g.share).sum::<f64>();
        while free > EPS {
            let hungry = groups.iter().filter(|g| g.share < g.sum - EPS).count();
            if hungry == 0 {
                break;
            }
            let part = free / hungry as f64;
            for g in groups.iter_mut().filter(|g| g.share < g.sum - EPS) {
                let inc = part.min(g.sum - g.share);
                g.share += inc;
                free -= inc;
            }
        }
    }
    penalty
}

/// sc16 made ready for one workload: the flow table (every PCIe link carries B), the tree and
/// each transfer's tree route, which must be the route the flow table chose.
pub struct Sc16Prepared {
    pub flows: FlowTable,
    pub tree: PcieTree,
    routes: Vec<Route>,
    pub params: Sc16Params,
    /// B of each transfer, bytes/s: the given B, else its route's slowest link's (`link_bandwidth`).
    pub bandwidth: Vec<f64>,
}

pub fn prepare(m: &Machine, w: &Workload, pairs: &[(String, String)]) -> Result<Box<dyn Prepared>> {
    Ok(Box::new(Sc16Prepared::new(m, w, Sc16Params::parse(pairs)?)?))
}

/// Whether sc16 takes this machine as it is: one node whose GPUs have PCIe links alone, each in
/// a PCIe tree under one root complex, where a copy between any two GPUs of one tree runs on
/// the tree's route (`Sc16Prepared::new`'s own check: no ACS redirect, no host staging). GPUs
/// of two trees (two sockets) are still refused per workload, as by `--model sc16`. The
/// registry runs sc16 where no model is named on exactly these machines (`registry::chosen`).
pub fn fits(m: &Machine) -> bool {
    let gpus = m.gpus();
    let gpu_link = |l: &Link| gpus.contains(&l.a) || gpus.contains(&l.b);
    if m.kind() != crate::topology::MachineKind::Node || m.links.iter().any(|l| gpu_link(l) && l.kind != LinkKind::Pcie) {
        return false;
    }
    let mut pairs = 0;
    for &a in &gpus {
        let Ok(tree) = PcieTree::containing(m, &[a], "sc16") else { return false };
        // A copy from `a` to every other GPU of its tree, checked as `--model sc16` checks a workload.
        let transfers: Vec<Transfer> = gpus
            .iter()
            .filter(|&&b| b != a && tree.node(b) != NOT_IN_TREE)
            .map(|&b| Transfer { name: format!("{}->{}", m.devices[a].name, m.devices[b].name), src: a, dst: b, size: 1 << 20, ..Default::default() })
            .collect();
        pairs += transfers.len();
        if !transfers.is_empty() && Sc16Prepared::new(m, &Workload { transfers, ..Default::default() }, Sc16Params::default()).is_err() {
            return false;
        }
    }
    pairs > 0
}

impl Sc16Prepared {
    pub fn new(m: &Machine, w: &Workload, params: Sc16Params) -> Result<Sc16Prepared> {
        // The registry adds the models that take any graph to a refusal (`ModelEntry::refusal`).
        let refuse = |reason: String| Error::Unsupported { model: "sc16".into(), reason };
        if let Some(i) = w.transfers.iter().position(|t| t.compute.is_some()) {
            return Err(refuse(format!(
                "{} is a computation; sc16 models concurrent copies only (rank programs run under maxmin or packet)",
                w.transfers[i].label(i)
            )));
        }
        if let Some(i) = w.transfers.iter().position(|t| !t.via.is_empty() || t.mechanism.is_some_and(|x| x != Mechanism::P2p)) {
            return Err(refuse(format!("transfer {} asks for a path or mechanism; sc16 models peer copies on tree paths only", w.transfers[i].label(i))));
        }
        // A host-memory end is off the tree: the root complex reaches it over its memory link,
        // which the paper's model has no term for (only PCIe links, source arbitration and tau).
        let host = |d: usize| m.devices[d].kind == crate::topology::DeviceKind::HostMemory;
        if let Some((i, t)) = w.transfers.iter().enumerate().find(|(_, t)| host(t.src) || host(t.dst)) {
            let mem = if host(t.dst) { t.dst } else { t.src };
            return Err(refuse(format!(
                "transfer {} copies {} host memory {}, which the root complex reaches over its memory link, not PCIe; sc16 models GPU-to-GPU copies inside one PCIe tree",
                t.label(i),
                if mem == t.dst { "to" } else { "from" },
                m.devices[mem].name
            )));
        }
        let mut endpoints: Vec<usize> = w.transfers.iter().flat_map(|t| [t.src, t.dst]).collect();
        endpoints.sort_unstable();
        endpoints.dedup();
        let tree = PcieTree::containing(m, &endpoints, "sc16")?;
        let eff = super::maxmin::MaxminParams::default();
        let b_of = |l: &Link| params.bandwidth.unwrap_or_else(|| link_bandwidth(l, &eff));
        let mut flows = FlowTable::compile(
            m,
            w,
            &FlowRules {
                capacity: &b_of,
                p2p: true,
                staging_chunk: 0.0,
                prepay_latency: true,
                charges: crate::flow::charges::NONE,
                model: "sc16",
                device_capacity: false,
                rails: false,
                caps: false,
                rate_caps: false,
                fluid: false,
                clos: false,
            },
        )?;
        // sc16 has no latency: a copy moves bytes from its issue, plus the user's overhead.
        flows.setup = w.transfers.iter().map(|t| t.overhead).collect();
        let mut routes = Vec::with_capacity(w.transfers.len());
        for (i, t) in w.transfers.iter().enumerate() {
            let plan = flows.plan(i);
            let route = tree.route(t.src, t.dst);
            let on_tree = plan.staging.is_none() && plan.hops.len() == route.hops.len() && plan.hops.iter().all(|h| m.links[h.link].kind == LinkKind::Pcie);
            if !on_tree {
                return Err(refuse(format!(
                    "{}: CUDA copies {} to {} {} rather than over the PCIe tree",
                    t.label(i),
                    m.devices[t.src].name,
                    m.devices[t.dst].name,
                    if plan.staging.is_some() {
                        "through host memory"
                    } else if plan.hops.iter().all(|h| m.links[h.link].kind == LinkKind::Pcie) {
                        "up to the root complex and back (ACS redirect)"
                    } else {
                        "over other links"
                    }
                )));
            }
            routes.push(route);
        }
        // Each copy's B: its route's slowest link's (the paper's one B for every link, taken per copy).
        let up_link = tree_links(m, &tree);
        let bandwidth = routes
            .iter()
            .map(|r| r.hops.iter().filter_map(|&h| up_link[h as usize / 2]).map(|l| b_of(&m.links[l])).fold(f64::INFINITY, f64::min))
            .map(|b| if b.is_finite() { b } else { params.bandwidth.unwrap_or(SC16_B) })
            .collect();
        Ok(Sc16Prepared { flows, tree, routes, params, bandwidth })
    }

    /// A fresh model instance (its scratch buffers are its own).
    pub fn model(&self) -> Sc16Model {
        Sc16Model {
            eval: Sc16::new(self.tree.clone(), self.params),
            routes: self.routes.clone(),
            bandwidth: self.bandwidth.clone(),
            factors: Vec::new(),
            traces: None,
        }
    }
}

impl Prepared for Sc16Prepared {
    fn flows(&self) -> &FlowTable {
        &self.flows
    }
    fn params(&self) -> BTreeMap<String, String> {
        let mut map = self.params.to_map();
        if self.params.bandwidth.is_none() {
            let gib = |b: f64| format!("{:.4}", b / 1073741824.0).trim_end_matches('0').trim_end_matches('.').to_string();
            let lo = self.bandwidth.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = self.bandwidth.iter().copied().fold(0.0, f64::max);
            let shown = if self.bandwidth.is_empty() {
                gib(SC16_B)
            } else if lo == hi {
                gib(hi)
            } else {
                format!("{}..{}", gib(lo), gib(hi))
            };
            map.insert("bandwidth".into(), format!("{shown}GiB/s"));
        }
        map
    }
    fn rate_model(&self) -> Option<Box<dyn RateModel + '_>> {
        Some(Box::new(self.model()))
    }
    fn event_model(&self) -> Box<dyn EventModel + '_> {
        Box::new(RateAdaptor::new(self.model(), &self.flows))
    }
}

/// The paper's B, fitted on a PCIe Gen3 x16 tree.
pub const SC16_B: f64 = 11.6 * 1073741824.0;

/// SC16's B for one PCIe link: the paper's 11.6 GiB/s, fitted on Gen3 x16, scaled by what this
/// link sustains against Gen3 x16: its rate times its efficiency (its own, else maxmin's for its
/// generation, whose Gen3 figure 0.79 is this B over Gen3 x16's rate). Exactly the paper's B on
/// a Gen3 x16 link.
pub fn link_bandwidth(l: &Link, eff: &super::maxmin::MaxminParams) -> f64 {
    let gen3_x16 = crate::topology::pcie_lane_bandwidth(3).expect("Gen3 has a rate") * 16.0;
    SC16_B * (l.bandwidth * eff.link_efficiency(l)) / (gen3_x16 * eff.rates.eff_pcie)
}

/// The machine's PCIe link between each tree node and its parent (None at the root).
fn tree_links(m: &Machine, tree: &PcieTree) -> Vec<Option<usize>> {
    let mut up = vec![None; tree.device.len()];
    for (i, l) in m.links.iter().enumerate().filter(|(_, l)| l.kind == LinkKind::Pcie) {
        let (a, b) = (tree.node(l.a), tree.node(l.b));
        if a == NOT_IN_TREE || b == NOT_IN_TREE {
            continue;
        }
        if tree.parent[a] == b && a != 0 {
            up[a].get_or_insert(i);
        } else if tree.parent[b] == a && b != 0 {
            up[b].get_or_insert(i);
        }
    }
    up
}

/// Whether every PCIe link of the tree has one B when B is not given: the schedule search's
/// symmetries of the tree's shape hold for sc16 only then (schedule/symmetry.rs).
pub fn links_alike(m: &Machine, tree: &PcieTree) -> bool {
    let eff = super::maxmin::MaxminParams::default();
    let mut b = tree_links(m, tree).into_iter().flatten().map(|l| link_bandwidth(&m.links[l], &eff));
    b.next().is_none_or(|first| b.all(|x| x == first))
}

/// sc16 as a rate model: routes fixed per transfer, factors times B.
pub struct Sc16Model {
    pub eval: Sc16,
    routes: Vec<Route>,
    /// B of each transfer, bytes/s.
    bandwidth: Vec<f64>,
    factors: Vec<f64>,
    /// When set, every evaluation's steps are appended here (for `contend explain`).
    pub traces: Option<Vec<StepTrace>>,
}

impl Sc16Model {
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }
}

impl RateModel for Sc16Model {
    fn rates(&mut self, active: &[usize], out: &mut [f64]) {
        self.factors.resize(active.len(), 0.0);
        match self.traces.as_mut() {
            Some(traces) => {
                let mut t = StepTrace::default();
                self.eval.factors(&self.routes, active, &mut self.factors, Some(&mut t));
                traces.push(t);
            }
            None => self.eval.factors(&self.routes, active, &mut self.factors, None),
        }
        for ((o, f), &i) in out.iter_mut().zip(&self.factors).zip(active) {
            *o = f * self.bandwidth[i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::Machine;

    struct Fixture {
        m: Machine,
        sc: Sc16,
    }

    fn fixture(params: Sc16Params) -> Fixture {
        let m = Machine::load("cs-storm-socket").unwrap();
        let tree = PcieTree::containing(&m, &m.gpus(), "sc16").unwrap();
        Fixture { sc: Sc16::new(tree, params), m }
    }

    fn tau(t: f64) -> Sc16Params {
        Sc16Params { tau: t, ..Default::default() }
    }

    impl Fixture {
        fn routes(&self, pairs: &[(u32, u32)]) -> Vec<Route> {
            let g = |i: u32| self.m.device(&format!("GPU{i}")).unwrap();
            pairs.iter().map(|&(s, d)| self.sc.tree.route(g(s), g(d))).collect()
        }
        fn run(&mut self, pairs: &[(u32, u32)]) -> (Vec<f64>, StepTrace) {
            let routes = self.routes(pairs);
            let active: Vec<usize> = (0..routes.len()).collect();
            let mut out = vec![0.0; routes.len()];
            let mut t = StepTrace::default();
            self.sc.factors(&routes, &active, &mut out, Some(&mut t));
            let mut plain = vec![0.0; routes.len()];
            self.sc.factors(&routes, &active, &mut plain, None);
            assert_eq!(out, plain, "tracing must not change the result");
            (out, t)
        }
    }

    fn close(a: &[f64], b: &[f64]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-12, "{a:?} vs {b:?}");
        }
    }

    const EXAMPLE: [(u32, u32); 4] = [(0, 2), (1, 4), (3, 2), (6, 4)];

    #[test]
    fn worked_example_every_step() {
        let (fin, t) = fixture(tau(0.2)).run(&EXAMPLE);
        close(&t.a, &[1.0, 1.0, 1.0, 1.0]);
        close(&t.b, &[0.5, 0.5, 1.0, 1.0]);
        close(&t.c, &[0.5, 0.3, 0.5, 0.7]);
        close(&t.d, &[0.3, 0.3, 0.5, 0.7]);
        close(&t.fin, &[0.3, 0.3, 0.7, 0.7]);
        close(&fin, &[0.3, 0.3, 0.7, 0.7]);
    }

    #[test]
    fn worked_example_causes_name_the_ports() {
        let f = fixture(tau(0.2));
        let mut f = f;
        let (_, t) = f.run(&EXAMPLE);
        let name = |c: &Cause| f.sc.tree.port_name(c.link);
        let b: Vec<_> = t.causes.iter().filter(|c| c.step == 'B').map(|c| (c.flow, name(c))).collect();
        assert_eq!(b, [(0, "upstream port of K0".to_string()), (1, "upstream port of K0".to_string())]);
        let c: Vec<_> = t.causes.iter().filter(|c| c.step == 'C').map(|c| (c.flow, name(c), c.rc_penalty)).collect();
        assert!(c.contains(&(1, "port of SWB towards K2".into(), true)), "{c:?}");
        assert!(c.contains(&(2, "port of K1 towards GPU2".into(), false)), "{c:?}");
        let d: Vec<_> = t.causes.iter().filter(|c| c.step == 'D').map(|c| (c.flow, f.sc.tree.link_name(c.link), c.blocker)).collect();
        assert_eq!(d, [(0, "K0→SWA".to_string(), Some(1))]);
    }

    #[test]
    fn fitted_tau() {
        let (fin, _) = fixture(tau(0.1735)).run(&EXAMPLE);
        close(&fin, &[0.3265, 0.3265, 0.6735, 0.6735]);
    }

    /// (pairs, final factors at tau = 0.2, at tau = 0.1735).
    type Vector = (&'static [(u32, u32)], [f64; 3], [f64; 3]);

    #[test]
    fn spec_test_vectors() {
        // sc16-pcie-model.md section 2.5.
        let cases: &[Vector] = &[
            (&[(0, 7), (1, 4), (6, 7)], [0.3, 0.3, 0.7], [0.3265, 0.3265, 0.6735]),
            (&[(0, 1), (0, 2), (0, 4)], [1.0 / 3.0; 3], [1.0 / 3.0; 3]),
            (&[(0, 4), (1, 2), (3, 5)], [1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0], [1.0 / 3.0, 1.0 / 3.0, 2.0 / 3.0]),
        ];
        for (pairs, a, b) in cases {
            close(&fixture(tau(0.2)).run(pairs).0, a);
            close(&fixture(tau(0.1735)).run(pairs).0, b);
        }
        close(&fixture(tau(0.2)).run(&[(0, 4), (2, 6)]).0, &[0.5, 0.5]);
        let (g, _) = fixture(tau(0.2)).run(&[(3, 2), (0, 2), (4, 2)]);
        close(&g, &[0.7, 0.21, 0.09]);
        let (g, _) = fixture(tau(0.1735)).run(&[(3, 2), (0, 2), (4, 2)]);
        for (x, y) in g.iter().zip([0.6735, 0.2199, 0.1066]) {
            assert!((x - y).abs() < 5e-5, "{g:?}");
        }
    }

    #[test]
    fn hol_variants_agree_on_the_example() {
        let p = Sc16Params { tau: 0.2, hol: HolRule::Min, ..Default::default() };
        close(&fixture(p).run(&EXAMPLE).0, &[0.3, 0.3, 0.7, 0.7]);
    }

    #[test]
    fn rc_scope_first_only_penalises_once() {
        // The gather's 4->2 pays tau at SWA's port and again at K1's under the literal reading.
        let every = fixture(tau(0.2)).run(&[(3, 2), (0, 2), (4, 2)]).0;
        let first = fixture(Sc16Params { tau: 0.2, rc_scope: RcScope::First, ..Default::default() }).run(&[(3, 2), (0, 2), (4, 2)]).0;
        assert!(first[2] > every[2], "{every:?} {first:?}");
    }

    /// B is the paper's on a Gen3 x16 tree and scales with what the copies' slowest link sustains
    /// elsewhere: a Gen4 x16 workstation's GPUs (eff_pcie4 0.835 against Gen3's 0.79) get
    /// 11.6 GiB/s × (31.51 × 0.835) / (15.75 × 0.79); a given B stands.
    #[test]
    fn b_follows_the_machines_pcie_links() {
        let b = |machine: &str, pairs: &[(String, String)]| {
            let m = Machine::load(machine).unwrap();
            let w = Workload::resolve(&crate::workload::WorkloadSpec::from_text("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GiB}\n", "t").unwrap(), &m, "t")
                .unwrap();
            let p = Sc16Prepared::new(&m, &w, Sc16Params::parse(pairs).unwrap()).unwrap();
            (p.bandwidth[0], p.params().get("bandwidth").cloned().unwrap())
        };
        assert_eq!(b("cs-storm-socket", &[]).0, SC16_B);
        assert_eq!(b("cs-storm-socket", &[]).1, "11.6GiB/s");
        let lane = |g| crate::topology::pcie_lane_bandwidth(g).unwrap();
        let want = SC16_B * (lane(4) * 0.835) / (lane(3) * 0.79);
        let got = b("pcie-8gpu-ws", &[]).0;
        assert!((got / want - 1.0).abs() < 1e-12, "{got} vs {want}");
        assert!((got / 26.3e9 - 1.0).abs() < 0.01, "{got}: the RTX A6000 peers measured 26.3 GB/s in one Gen4 switch");
        assert_eq!(b("pcie-8gpu-ws", &[("bandwidth".to_string(), "12GB/s".to_string())]).0, 12e9);
    }

    /// Each copy's B is its own route's: on a tree of Gen3 x16 switch uplinks and Gen4 x16 GPU
    /// links, a copy inside one switch moves at Gen4's B whatever else the workload holds, and one
    /// across the root at Gen3's (the paper's 11.6 GiB/s).
    #[test]
    fn each_copys_b_is_its_routes_slowest_link() {
        let m = Machine::from_text(
            "name: mixed\ndevices:\n  - {name: RC0, kind: root_complex}\n  - {name: SW0, kind: pcie_switch}\n  - {name: SW1, kind: pcie_switch}\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n  - {name: GPU2, kind: gpu}\n  - {name: GPU3, kind: gpu}\nlinks:\n  - {a: RC0, b: SW0, kind: pcie, gen: 3, lanes: 16}\n  - {a: RC0, b: SW1, kind: pcie, gen: 3, lanes: 16}\n  - {a: SW0, b: GPU0, kind: pcie, gen: 4, lanes: 16}\n  - {a: SW0, b: GPU1, kind: pcie, gen: 4, lanes: 16}\n  - {a: SW1, b: GPU2, kind: pcie, gen: 4, lanes: 16}\n  - {a: SW1, b: GPU3, kind: pcie, gen: 4, lanes: 16}\n",
            "mixed",
        )
        .unwrap();
        let run = |yaml: &str| {
            let w = Workload::resolve(&crate::workload::WorkloadSpec::from_text(yaml, "t").unwrap(), &m, "t").unwrap();
            let p = Sc16Prepared::new(&m, &w, Sc16Params::default()).unwrap();
            (crate::sim::run_prepared(&w, &p, false).unwrap().finish, p.bandwidth.clone(), p.params()["bandwidth"].clone())
        };
        let lane = |g| crate::topology::pcie_lane_bandwidth(g).unwrap();
        let gen4 = SC16_B * (lane(4) * 0.835) / (lane(3) * 0.79);
        let (alone, b, shown) = run("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GiB}\n");
        assert!((b[0] / gen4 - 1.0).abs() < 1e-12 && (alone[0] * b[0] / 1073741824.0 - 1.0).abs() < 1e-12, "{b:?}");
        assert_eq!(shown, format!("{:.4}GiB/s", gen4 / 1073741824.0).replace("0GiB", "GiB"));
        let (both, b, shown) = run("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GiB}\n  - {src: GPU3, dst: GPU0, size: 1KiB, start: 1s}\n");
        assert_eq!(both[0], alone[0]);
        assert_eq!(b[1], SC16_B);
        assert!(shown.starts_with("11.6..") && shown.ends_with("GiB/s"), "{shown}");
        assert!(!links_alike(&m, &PcieTree::containing(&m, &m.gpus(), "sc16").unwrap()));
    }

    /// A host copy on the PCIe tree nodes sc16 is default on (typical-8gpu, pcie-8gpu-ws) is
    /// refused for what it is, a memory link sc16 has no term for, naming maxmin, not as a path
    /// that leaves PCIe; on either socket and either way.
    #[test]
    fn a_host_copy_is_refused_as_such() {
        for (preset, src, dst) in
            [("typical-8gpu", "GPU0", "MEM0"), ("typical-8gpu", "MEM0", "GPU0"), ("typical-8gpu", "GPU0", "MEM1"), ("pcie-8gpu-ws", "GPU0", "MEM0")]
        {
            let m = Machine::load(preset).unwrap();
            let t = Transfer { name: "t".into(), src: m.device(src).unwrap(), dst: m.device(dst).unwrap(), size: 1 << 20, ..Default::default() };
            let e = crate::model::registry::get("sc16")
                .unwrap()
                .prepare(&m, &Workload { transfers: vec![t], ..Default::default() }, &[])
                .err()
                .unwrap()
                .to_string();
            let (way, mem) = if dst.starts_with("MEM") { ("to", dst) } else { ("from", src) };
            assert!(
                e.starts_with(&format!(
                    "model sc16 does not apply: transfer t copies {way} host memory {mem}, which the root complex reaches over its memory link"
                )),
                "{e}"
            );
            assert!(e.contains("--model maxmin") && !e.contains("not in one PCIe tree") && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn params_parse_and_refuse() {
        let kv = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert_eq!(Sc16Params::parse(&kv("tau", "0.2")).unwrap().tau, 0.2);
        assert_eq!(Sc16Params::parse(&kv("bandwidth", "12GB/s")).unwrap().bandwidth, Some(12e9));
        assert!(Sc16Params::parse(&kv("tau", "2")).unwrap_err().to_string().contains("[0, 1]"));
        assert!(Sc16Params::parse(&kv("bandwidth", "12")).unwrap_err().to_string().contains("no unit"));
        assert!(Sc16Params::parse(&kv("speed", "1")).unwrap_err().to_string().contains("known: bandwidth"));
    }
}
