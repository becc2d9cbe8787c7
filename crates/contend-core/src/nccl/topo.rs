//! The rings NCCL's topology search would build on a machine graph (after NVIDIA/nccl v2.30.7
//! src/graph/search.cc and paths.cc, restated): paths between GPUs are typed as NCCL types
//! them (NVL, PIX, PXB, PHB, SYS), each link carries NCCL's planning bandwidth, and rings are
//! searched at NCCL's speeds from the highest down, each ring taking its speed from every link
//! it crosses, preferring NVLink, then a shared PCIe switch, a host bridge, a socket link.

use super::tuning::{self, PCI_BW};
use crate::flow::router::{Hop, Router};
use crate::topology::{DeviceKind, LinkKind, Machine};

/// NCCL's path types (PATH_*, NCCL 2.30.7 src/include/graph.h), in order of preference. The
/// releases before 2.27 have no P2C and number the others one lower from PXN on; the order is
/// the same.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathType {
    /// One GPU: its ring never leaves it (search.cc `ncclTopoCompute`: typeIntra starts at
    /// PATH_LOC and one GPU needs no path).
    Loc = 0,
    Nvl = 1,
    /// Two NVLink hops through an intermediate GPU (`intermediate`).
    Nvb = 2,
    Pix = 4,
    Pxb = 5,
    /// A GPU to a NIC under the CPU it is joined to by NVLink-C2C (`c2c`; from 2.27).
    P2c = 6,
    /// A GPU to a NIC through another GPU's (PXN, `rails`).
    Pxn = 7,
    Phb = 8,
    Sys = 9,
}

impl PathType {
    pub fn name(self) -> &'static str {
        match self {
            PathType::Loc => "LOC",
            PathType::Nvl => "NVL",
            PathType::Nvb => "NVB",
            PathType::Pix => "PIX",
            PathType::Pxb => "PXB",
            PathType::P2c => "P2C",
            PathType::Pxn => "PXN",
            PathType::Phb => "PHB",
            PathType::Sys => "SYS",
        }
    }

    /// Every path type, in order.
    pub const ALL: [PathType; 9] =
        [PathType::Loc, PathType::Nvl, PathType::Nvb, PathType::Pix, PathType::Pxb, PathType::P2c, PathType::Pxn, PathType::Phb, PathType::Sys];

    /// The path type NCCL names `word` (its `topoPathTypeStr`, compared case-sensitively as NCCL's `strcmp` does).
    pub fn parse(word: &str) -> Option<PathType> {
        PathType::ALL.into_iter().find(|t| t.name() == word)
    }
}

/// A GPU-to-GPU path as NCCL sees it.
#[derive(Clone, Debug)]
pub struct Path {
    pub hops: Vec<Hop>,
    pub kind: PathType,
    /// NCCL's bandwidth of the path (its narrowest link), GB/s.
    pub bw: f64,
    /// The GPU an NVB path passes through, whose memory holds the connection's buffer.
    pub via: Option<usize>,
    /// The CPU (root complex) NCCL routes the pair through where its P2P level leaves the pair to
    /// SHM (`Topo::through_cpus`).
    pub cpu: Option<usize>,
}

/// Compute capability from a GPU's model name (NCCL reads it from the driver); Ampere's 8.0 where
/// the name does not say (`tests_tool` notes it). Each generation's
/// figure is NVIDIA's list of CUDA GPUs (developer.nvidia.com/cuda-gpus, and the CUDA C++
/// Programming Guide's table of compute capabilities): Blackwell data-centre 10.0 (B200, GB200;
/// B300 10.3) and consumer/workstation 12.0 (RTX 50, RTX PRO Blackwell), Hopper 9.0, Ampere 8.0
/// (A100, A800, A30) and 8.6 (A40, A10, RTX 30, RTX A), Ada 8.9, Turing 7.5 (RTX 20, GTX 16,
/// TITAN RTX, Quadro RTX, T4), Volta 7.0, Pascal 6.x. NCCL reads 12.0 as Blackwell too
/// (tuning.cc 2.30.7: `minCompCap >= 100`), and 7.5 as Volta (`VOLTA_COMPCAP_IDX` below 8.0).
pub fn compute_capability(model: Option<&str>) -> u32 {
    known_compute_capability(model).unwrap_or(80)
}

/// Compute capability where a GPU's model name says it.
pub fn known_compute_capability(model: Option<&str>) -> Option<u32> {
    let m = model.unwrap_or("").to_uppercase();
    // An import of NCCL's topology XML names a GPU by the `sm` NCCL read ("sm 89 at 0000:17:00.0").
    if let Some(sm) = m.strip_prefix("SM ").and_then(|r| r.split_whitespace().next()).and_then(|s| s.parse().ok()) {
        return Some(sm);
    }
    let has = |k: &[&str]| k.iter().any(|s| m.contains(s));
    // A GeForce series ("RTX 50" + 50..90: 5050 to 5090), not a workstation card of the same
    // digits ("RTX 5000 Ada", "Quadro RTX 4000").
    let geforce = |series: &str| {
        m.match_indices(series).any(|(at, _)| {
            let rest = &m.as_bytes()[at + series.len()..];
            rest.len() >= 2 && (b'5'..=b'9').contains(&rest[0]) && rest[1] == b'0' && rest.get(2).is_none_or(|c| !c.is_ascii_digit())
        })
    };
    // Names that say their generation first ("RTX 5000 Ada", "RTX PRO 6000 Blackwell", "Quadro
    // RTX 4000" is Turing), then the series and data-centre names, each before any name holding it
    // ("RTX A3000" before A30, A100 before A10).
    if has(&["BLACKWELL", "RTX PRO"]) || geforce("RTX 50") {
        Some(120)
    } else if has(&["ADA"]) {
        Some(89)
    } else if has(&["QUADRO RTX", "TITAN RTX"]) {
        Some(75)
    } else if has(&["B300"]) {
        Some(103)
    } else if has(&["B200", "B100", "GB200"]) {
        Some(100)
    } else if has(&["H100", "H200", "H800", "H20", "GH200"]) {
        Some(90)
    } else if has(&["RTX A"]) || geforce("RTX 30") {
        // Ampere workstation and GeForce 30 (8.6).
        Some(86)
    } else if has(&["A100", "A800", "A30"]) {
        Some(80)
    } else if geforce("RTX 40") || has(&["L40", "L4 ", "TESLA L4", "NVIDIA L4"]) || m.ends_with(" L4") {
        // Ada Lovelace (8.9): NCCL has no NVLink or LL128 case for it; its PCIe rows are Ampere's.
        Some(89)
    } else if has(&["A40", "A10", "A16", "A2 "]) || m.ends_with(" A2") {
        Some(86)
    } else if geforce("RTX 20") || has(&["GTX 16", "T4", "RTX 6000", "RTX 8000", "T1000", "T400", "T600"]) {
        // Turing (7.5): GeForce 20 and 16, Tesla T4, Quadro RTX and T-series.
        Some(75)
    } else if has(&["V100", "TITAN V"]) {
        Some(70)
    } else if has(&["P100", "P40", "K40", "K80", "M40", "M60", "P4"]) {
        Some(60)
    } else {
        None
    }
}

/// NCCL's planning bandwidth of a link, GB/s: NVLink links at NCCL's per-link figure for the
/// GPU generation; PCIe at PCI_BW per Gen3 x16 scaled by the link's nominal bandwidth; other
/// links at their bandwidth.
pub fn link_bw(m: &Machine, link: usize, cc: u32) -> f64 {
    let l = &m.links[link];
    match l.kind {
        LinkKind::Nvlink => {
            // NCCL counts links. A file that gives a ganged bandwidth without `count` is read as
            // that many links of the generation's data-sheet rate, so that neither the search nor
            // the kernels' share of the link (`Comm::new`) takes it for one link.
            let count = match m.spec.links.get(link).and_then(|s| s.count) {
                Some(c) => c as f64,
                None => (l.bandwidth / 1e9 / tuning::nvlink_link_rate(cc)).round().max(1.0),
            };
            count * tuning::nvlink_bw(cc)
        }
        LinkKind::Pcie => l.bandwidth / 15.753846e9 * PCI_BW,
        _ => l.bandwidth / 1e9,
    }
}

/// The machine's GPUs taking part and every path between them.
pub struct Topo {
    pub gpus: Vec<usize>,
    pub cc: u32,
    /// paths[i][j], i != j.
    pub paths: Vec<Vec<Option<Path>>>,
    /// NCCL bandwidth per link.
    pub link_bw: Vec<f64>,
}

impl Topo {
    pub fn new(m: &Machine, router: &Router, gpus: &[usize]) -> Topo {
        let cc = gpus.iter().map(|&g| compute_capability(m.devices[g].model.as_deref())).min().unwrap_or(80);
        let link_bw: Vec<f64> = (0..m.links.len()).map(|l| link_bw(m, l, cc)).collect();
        let paths = gpus
            .iter()
            .map(|&a| {
                gpus.iter()
                    .map(|&b| {
                        if a == b {
                            return None;
                        }
                        let (hops, peer) = match router.path(a, b, true) {
                            Some(h) => (h, true),
                            None => (router.path(a, b, false)?, false),
                        };
                        let path = classify(m, &link_bw, hops, peer);
                        if path.kind <= PathType::Nvl {
                            return Some(path);
                        }
                        Some(intermediate(m, &link_bw, gpus, a, b).map_or(path, |(g, bw)| {
                            let hops = vec![nvlinks(m, a, g)[0].0, nvlinks(m, g, b)[0].0];
                            Path { hops, kind: PathType::Nvb, bw, via: Some(g), cpu: None }
                        }))
                    })
                    .collect()
            })
            .collect();
        Topo { gpus: gpus.to_vec(), cc, paths, link_bw }
    }

    /// The paths as NCCL's graph holds them at P2P level `level` (NCCL_P2P_LEVEL, NCCL_P2P_DISABLE=1:
    /// LOC): graph/paths.cc `ncclTopoComputePaths` (v2.18.5-1 to v2.30.7-1 alike) diverts every pair
    /// `ncclTopoCheckP2p` refuses, one whose path type is above the level, through the CPU nearest
    /// the receiver (`getLocalCpu`/`ncclGetLocalCpu`: fewest hops) with `addInterStep`: the sender's
    /// path to that CPU, then the CPU's path to the receiver, typed the worse of the two and as wide
    /// as the narrower. A CPU's paths never pass through a GPU (`ncclTopoSetPaths` routes through a
    /// GPU only for NVB), here the router's paths without peer traffic, which leave GPUs as
    /// endpoints. The search (`search`) then runs on these paths as on any others. Err: the GPU
    /// (machine device) that reaches no root complex on its node, so that no CPU can be passed.
    pub fn through_cpus(&mut self, m: &Machine, router: &Router, level: PathType) -> Result<(), usize> {
        let local = |h: &Vec<Hop>| h.iter().all(|x| m.links[x.link].kind != LinkKind::Network);
        for j in 0..self.gpus.len() {
            let b = self.gpus[j];
            let cpu = (0..m.devices.len())
                .filter(|&d| m.devices[d].kind == DeviceKind::RootComplex)
                .filter_map(|d| router.path(b, d, false).filter(local).map(|h| (h.len(), d)))
                .min()
                .map(|(_, d)| d)
                .ok_or(b)?;
            for i in (0..self.gpus.len()).filter(|&i| i != j) {
                if self.paths[i][j].as_ref().is_none_or(|p| p.kind <= level) {
                    continue;
                }
                let up = router.path(self.gpus[i], cpu, false).filter(local).ok_or(self.gpus[i])?;
                let down = router.path(cpu, b, false).filter(local).ok_or(b)?;
                let path = classify(m, &self.link_bw, up.into_iter().chain(down).collect(), true);
                self.paths[i][j] = Some(Path { cpu: Some(cpu), ..path });
            }
        }
        Ok(())
    }

    /// The best path type between any two of these GPUs and the worst.
    pub fn type_range(&self) -> (PathType, PathType) {
        let all = self.paths.iter().flatten().flatten().map(|p| p.kind);
        (all.clone().min().unwrap_or(PathType::Nvl), all.max().unwrap_or(PathType::Sys))
    }
}

/// The direct NVLinks from GPU `a` to GPU `b` (NCCL's one NVL link of their summed count), as
/// hops from `a`, in the machine's link order.
fn nvlinks(m: &Machine, a: usize, b: usize) -> Vec<(Hop, usize)> {
    (0..m.links.len())
        .filter(|&l| m.links[l].kind == LinkKind::Nvlink && m.links[l].p2p)
        .filter_map(|l| {
            let k = &m.links[l];
            if (k.a, k.b) == (a, b) {
                Some((Hop { link: l, forward: true }, l))
            } else if (k.b, k.a) == (a, b) {
                Some((Hop { link: l, forward: false }, l))
            } else {
                None
            }
        })
        .collect()
}

/// The GPU NCCL sends through from `a` to `b` where no NVLink path joins them (PATH_NVB, graph/
/// paths.cc `ncclTopoSetPaths`, NCCL_NVB_DISABLE=0, the same rule in 2.18.3 to 2.30.7): a GPU of
/// the communicator's (NCCL's topology holds only its ranks' GPUs, topo.cc `ncclTopoAddNvLinks`
/// skips an NVLink to any other) joined by direct NVLink to both, and the path's NCCL bandwidth,
/// the narrower of the two (each the summed NVLinks of its pair at NCCL's per-link figure).
/// NCCL's breadth-first search from `b` keeps the first such GPU it reaches (`b`'s links in
/// order, here the machine's link order) unless a later one's path is wider. An NVB path is
/// preferred to every PCIe path (PATH_NVB below PATH_PIX).
pub fn intermediate(m: &Machine, bw: &[f64], gpus: &[usize], a: usize, b: usize) -> Option<(usize, f64)> {
    let width = |x: usize, y: usize| nvlinks(m, x, y).iter().map(|&(_, l)| bw.get(l).copied().unwrap_or(0.0)).sum::<f64>();
    let mut order: Vec<usize> = Vec::new();
    for l in 0..m.links.len() {
        let k = &m.links[l];
        let g = if k.a == b {
            k.b
        } else if k.b == b {
            k.a
        } else {
            continue;
        };
        if k.kind == LinkKind::Nvlink && k.p2p && g != a && gpus.contains(&g) && !order.contains(&g) {
            order.push(g);
        }
    }
    let mut best: Option<(usize, f64)> = None;
    for g in order {
        let w = width(a, g).min(width(g, b));
        if w > 0.0 && best.is_none_or(|(_, bw)| w > bw) {
            best = Some((g, w));
        }
    }
    best
}

/// Whether NCCL moves a GPU's network data straight between its memory and one of `nics`
/// (GPUDirect RDMA): `ncclTopoCheckGdr` (graph/paths.cc, v2.21.5-1 and v2.30.7-1) allows it where
/// the path type between them is at most NCCL_NET_GDR_LEVEL, `level` (`gdr_level` gives its
/// default): PXB, PCIe switches only, no host bridge; from 2.27 P2C too (NVLink-C2C to the CPU the
/// NIC hangs off, `p2c`).
pub fn gdr(m: &Machine, router: &Router, cc: u32, gpu: usize, nics: &[usize], level: PathType) -> bool {
    // NCCL types the path whether or not CUDA would let the two be peers (across QPI: SYS).
    nics.iter().any(|&n| {
        router.path(gpu, n, true).or_else(|| router.path(gpu, n, false)).is_some_and(|h| {
            let kind = if p2c(m, cc, &h) { PathType::P2c } else { classify(m, &[], h, true).kind };
            kind <= level
        })
    })
}

/// NCCL_NET_GDR_LEVEL's default (graph/paths.cc `ncclTopoCheckGdr`): PXB before 2.27; PXB and P2C
/// from 2.27 where `c2c` (`Version::gdr_c2c`: NCCL_NET_GDR_C2C's default 1, GDR on NICs that hang
/// off a Grace CPU; v2.27.7-1 takes a P2C distance as C2C, v2.30.7-1 sets the level to P2C).
pub fn gdr_level(c2c: bool) -> PathType {
    if c2c {
        PathType::P2c
    } else {
        PathType::Pxb
    }
}

/// Whether a path from a GPU to a NIC is NCCL's P2C (graph/paths.cc `mergePathType`: C2C, then
/// PHB): the GPU's NVLink-C2C to its CPU, then PCIe from that CPU down to the NIC. A GPU's NVLink
/// to a root complex is NVLink-C2C on Hopper and later (the Grace superchips; NCCL reads it from
/// NVML's C2C fields, topo.cc `ncclTopoAddC2c`); POWER's NVLinks to Pascal and Volta GPUs are
/// NVLinks to the CPU (LINK_NVL), and such a path is PHB. Before 2.27 (`Version::gdr_c2c`) there
/// is no P2C and the path is PHB whatever the link (2.21.5 topo.cc connects a C2C as LINK_NVL).
pub fn p2c(m: &Machine, cc: u32, hops: &[Hop]) -> bool {
    let Some((first, rest)) = hops.split_first() else { return false };
    cc >= 90
        && m.links[first.link].kind == LinkKind::Nvlink
        && m.devices[first.from(m)].kind == DeviceKind::Gpu
        && m.devices[first.to(m)].kind == DeviceKind::RootComplex
        && !rest.is_empty()
        && rest.iter().all(|h| m.links[h.link].kind == LinkKind::Pcie)
}

pub(super) fn classify(m: &Machine, bw: &[f64], hops: Vec<Hop>, peer: bool) -> Path {
    let kinds: Vec<LinkKind> = hops.iter().map(|h| m.links[h.link].kind).collect();
    let via: Vec<DeviceKind> = hops
        .iter()
        .skip(1)
        .map(|h| {
            let l = &m.links[h.link];
            m.devices[if h.forward { l.a } else { l.b }].kind
        })
        .collect();
    let kind = if !peer || kinds.iter().any(|k| matches!(k, LinkKind::Qpi | LinkKind::Upi | LinkKind::Xgmi | LinkKind::Fabric)) {
        PathType::Sys
    } else if kinds.iter().all(|&k| k == LinkKind::Nvlink) {
        PathType::Nvl
    } else if via.contains(&DeviceKind::RootComplex) {
        PathType::Phb
    } else if via.iter().filter(|&&k| k == DeviceKind::PcieSwitch).count() > 1 {
        PathType::Pxb
    } else {
        PathType::Pix
    };
    let b = hops.iter().filter_map(|h| bw.get(h.link).copied()).fold(f64::INFINITY, f64::min);
    Path { hops, kind, bw: if b.is_finite() { b } else { 0.0 }, via: None, cpu: None }
}

/// The ring graph: rings (orders of GPU indices into `Topo::gpus`) and the bandwidth NCCL
/// plans per channel.
#[derive(Clone, Debug)]
pub struct RingGraph {
    pub rings: Vec<Vec<usize>>,
    pub bw: f64,
    /// The worst path type a ring uses (NCCL's typeIntra).
    pub kind: PathType,
}

/// Most DFS expansions per ring: the search is NCCL's in spirit, not in its timeouts.
const BUDGET: usize = 200_000;

/// NCCL's search, restated: at each speed (from the first at most the best path's bandwidth
/// down), allow path types from the best up to the worst until rings are found; take as many
/// rings as the links carry at that speed (at most MAXCHANNELS / 2); keep going down while a
/// slower speed is above 0.49 of the first found, and keep the most rings x speed; then
/// duplicate channels as `ncclTopoDupChannels` does.
pub fn search(t: &Topo) -> Option<RingGraph> {
    let n = t.gpus.len();
    if n == 1 {
        return Some(RingGraph { rings: vec![vec![0]], bw: tuning::speeds(t.cc)[0], kind: PathType::Loc });
    }
    let max_bw = t.paths.iter().flatten().flatten().map(|p| p.bw).fold(0.0, f64::max);
    let (lo, hi) = t.type_range();
    let types: Vec<PathType> =
        [PathType::Nvl, PathType::Nvb, PathType::Pix, PathType::Pxb, PathType::Phb, PathType::Sys].into_iter().filter(|k| *k >= lo && *k <= hi).collect();
    let mut best: Option<RingGraph> = None;
    let mut first: Option<f64> = None;
    for &speed in tuning::speeds(t.cc).iter().filter(|&&s| s <= max_bw.max(tuning::speeds(t.cc).last().copied().unwrap_or(0.0))) {
        if first.is_some_and(|f| speed / f <= 0.49) {
            break;
        }
        for &kind in &types {
            let rings = rings_at(t, speed, kind);
            if rings.is_empty() {
                continue;
            }
            first.get_or_insert(speed);
            let g = RingGraph { bw: speed, kind: worst(t, &rings), rings };
            if best.as_ref().is_none_or(|b| g.rings.len() as f64 * g.bw > b.rings.len() as f64 * b.bw + 1e-9) {
                best = Some(g);
            }
            break;
        }
    }
    if best.is_none() {
        // Slower than NCCL's slowest speed (or no speed fits): one ring at the narrowest path.
        let speed = t.paths.iter().flatten().flatten().map(|p| p.bw).fold(f64::INFINITY, f64::min);
        let rings = rings_at(t, speed * 0.999, PathType::Sys);
        if !rings.is_empty() {
            best = Some(RingGraph { bw: speed, kind: worst(t, &rings), rings: vec![rings[0].clone()] });
        }
    }
    let mut g = best?;
    // ncclTopoDupChannels: fast rings are run twice at half the speed each.
    let nc = g.rings.len();
    if g.bw >= 25.0 && !(t.cc > 80 && g.bw < 50.0 && nc > 4) {
        let dup = (2 * nc).min(tuning::MAX_CHANNELS / 2);
        let copies: Vec<Vec<usize>> = g.rings.iter().cycle().take(dup).cloned().collect();
        g.bw /= dup.div_ceil(nc) as f64;
        g.rings = copies;
    }
    Some(g)
}

fn worst(t: &Topo, rings: &[Vec<usize>]) -> PathType {
    let n = t.gpus.len();
    rings
        .iter()
        .flat_map(|r| (0..n).map(move |k| (r[k], r[(k + 1) % n])))
        .filter_map(|(a, b)| t.paths[a][b].as_ref().map(|p| p.kind))
        .max()
        .unwrap_or(PathType::Nvl)
}

/// As many rings as fit at `speed` using paths of at most `kind`.
fn rings_at(t: &Topo, speed: f64, kind: PathType) -> Vec<Vec<usize>> {
    walks_at(t, speed, kind, false, tuning::MAX_CHANNELS / 2)
}

/// How many of `want` open chains through every GPU of the node fit at `speed` (at most `want`):
/// a channel that spans nodes enters a node from the network at one GPU and leaves it at another,
/// so inside the node it is a chain, not a ring (search.cc: NET n -> GPU a -> ... -> GPU x -> NET),
/// and a tree's channel is a chain too. Chain k starts at GPU k, as NCCL's channels start at the GPU
/// nearest each NIC, so that no GPU starts them all.
pub fn chains_at(t: &Topo, speed: f64, want: usize) -> usize {
    let (_, worst) = t.type_range();
    walks_at(t, speed, worst, true, want).len()
}

fn walks_at(t: &Topo, speed: f64, kind: PathType, open: bool, most: usize) -> Vec<Vec<usize>> {
    // Bandwidth left per directed link: index 2 * link + (forward ? 0 : 1).
    let mut left: Vec<f64> = t.link_bw.iter().flat_map(|&b| [b, b]).collect();
    let n = t.gpus.len();
    let mut walks = Vec::new();
    while walks.len() < most {
        let start = if open { walks.len() % n } else { 0 };
        let mut s = Dfs { t, speed, kind, left: &mut left, order: vec![start], used: vec![false; n], budget: BUDGET, open };
        s.used[start] = true;
        if !s.extend() {
            break;
        }
        walks.push(s.order);
    }
    walks
}

struct Dfs<'a> {
    t: &'a Topo,
    speed: f64,
    kind: PathType,
    left: &'a mut Vec<f64>,
    order: Vec<usize>,
    used: Vec<bool>,
    budget: usize,
    /// A chain: the last GPU does not return to the first.
    open: bool,
}

impl Dfs<'_> {
    fn fits(&self, a: usize, b: usize) -> Option<f64> {
        let p = self.t.paths[a][b].as_ref()?;
        if p.kind > self.kind {
            return None;
        }
        let room = p.hops.iter().map(|h| self.left[2 * h.link + usize::from(!h.forward)]).fold(f64::INFINITY, f64::min);
        (room >= self.speed - 1e-9).then_some(room)
    }

    fn take(&mut self, a: usize, b: usize, sign: f64) {
        let hops = &self.t.paths[a][b].as_ref().unwrap().hops;
        for h in hops {
            self.left[2 * h.link + usize::from(!h.forward)] -= sign * self.speed;
        }
    }

    fn extend(&mut self) -> bool {
        if self.budget == 0 {
            return false;
        }
        self.budget -= 1;
        let n = self.t.gpus.len();
        let u = *self.order.last().unwrap();
        if self.order.len() == n {
            if self.open {
                return true;
            }
            if self.fits(u, self.order[0]).is_some() {
                self.take(u, self.order[0], 1.0);
                return true;
            }
            return false;
        }
        // Candidates: best path type, then most bandwidth left, then the next index around.
        let mut cand: Vec<(PathType, i64, usize, usize)> = (0..n)
            .filter(|&v| !self.used[v])
            .filter_map(|v| {
                let room = self.fits(u, v)?;
                Some((self.t.paths[u][v].as_ref().unwrap().kind, -(room * 1000.0) as i64, (v + n - u) % n, v))
            })
            .collect();
        cand.sort();
        for (_, _, _, v) in cand {
            self.take(u, v, 1.0);
            self.used[v] = true;
            self.order.push(v);
            if self.extend() {
                return true;
            }
            self.order.pop();
            self.used[v] = false;
            self.take(u, v, -1.0);
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::compute_capability as cc;

    /// The compute capability NCCL reads from the driver, from the names users and presets give,
    /// and from the `sm` of an imported NCCL topology XML.
    #[test]
    fn compute_capability_by_name_and_by_imported_sm() {
        for (model, want) in [
            ("NVIDIA RTX 6000 Ada Generation", 89),
            ("NVIDIA GeForce RTX 4090", 89),
            ("NVIDIA L40S", 89),
            ("NVIDIA L4", 89),
            ("NVIDIA RTX A6000", 86),
            ("NVIDIA A100-SXM4-80GB", 80),
            ("NVIDIA H100 80GB HBM3", 90),
            ("NVIDIA GeForce RTX 2080 Ti", 75),
            ("Tesla T4", 75),
            ("Quadro RTX 6000", 75),
            ("NVIDIA TITAN RTX", 75),
            ("Tesla V100-SXM2-32GB", 70),
            ("NVIDIA GeForce RTX 3090", 86),
            ("NVIDIA A10G", 86),
            ("NVIDIA A40", 86),
            ("NVIDIA B200", 100),
            ("NVIDIA GeForce RTX 5090", 120),
            ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 120),
            // Workstation cards of a series' digits, and names holding another's (a reviewer's list).
            ("NVIDIA RTX 5000 Ada Generation", 89),
            ("Quadro RTX 5000", 75),
            ("Quadro RTX 4000", 75),
            ("Quadro RTX 3000", 75),
            ("Quadro RTX 8000", 75),
            ("NVIDIA RTX A3000", 86),
            ("NVIDIA RTX A4000", 86),
            ("NVIDIA A30", 80),
            ("NVIDIA H20", 90),
            ("NVIDIA GH200 480GB", 90),
            ("NVIDIA GB200", 100),
            ("NVIDIA B300", 103),
            ("NVIDIA RTX PRO 6000 Blackwell Server Edition", 120),
            ("NVIDIA GeForce RTX 5080", 120),
            ("NVIDIA GeForce RTX 4060 Ti", 89),
            ("NVIDIA GeForce RTX 3060", 86),
            ("NVIDIA GeForce RTX 2060 SUPER", 75),
            ("NVIDIA GeForce GTX 1660", 75),
            ("NVIDIA T1000", 75),
            ("NVIDIA A16", 86),
            ("Tesla P100-PCIE-16GB", 60),
            ("sm 89 at 0000:17:00.0", 89),
            ("sm 90 at 0000:1b:00.0", 90),
        ] {
            assert_eq!(cc(Some(model)), want, "{model}");
        }
        assert_eq!(cc(None), 80);
    }
}
