//! The peer bandwidths a machine declares on its socket and fabric links (`peer_bandwidth` for
//! both directions, `peer_upstream` or `peer_downstream` for one), as both calibrations fit them:
//! one value per link kind and field, written back on every link of that kind that declares it.

use crate::flow::router::Plan;
use crate::topology::{LinkKind, LinkSpec, Machine, MachineSpec};
use crate::units::Bandwidth;

/// Which of a link's peer bandwidth fields a fitted value belongs to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum PeerSide {
    Both,
    Upstream,
    Downstream,
}

impl PeerSide {
    pub(super) const ALL: [PeerSide; 3] = [PeerSide::Both, PeerSide::Upstream, PeerSide::Downstream];

    pub(super) fn field(self) -> &'static str {
        match self {
            PeerSide::Both => "peer_bandwidth",
            PeerSide::Upstream => "peer_upstream",
            PeerSide::Downstream => "peer_downstream",
        }
    }

    pub(super) fn get(self, l: &LinkSpec) -> Option<Bandwidth> {
        match self {
            PeerSide::Both => l.peer_bandwidth,
            PeerSide::Upstream => l.peer_upstream,
            PeerSide::Downstream => l.peer_downstream,
        }
    }

    /// The directions of a link (`Link::peer`'s order: a -> b, b -> a) it sets.
    pub(super) fn directions(self) -> &'static [usize] {
        match self {
            PeerSide::Both => &[0, 1],
            PeerSide::Upstream => &[1],
            PeerSide::Downstream => &[0],
        }
    }

    /// The field that gives direction `d` of link `l` its peer bandwidth, if one does.
    pub(super) fn declaring(l: &LinkSpec, d: usize) -> Option<PeerSide> {
        PeerSide::ALL.into_iter().find(|s| s.get(l).is_some() && s.directions().contains(&d))
    }
}

/// The fields a machine declares, one per link kind and side, each with its first link's value.
pub(super) fn declared(m: &Machine) -> Vec<(LinkKind, PeerSide, f64)> {
    let mut out: Vec<(LinkKind, PeerSide, f64)> = Vec::new();
    for l in &m.spec.links {
        for side in PeerSide::ALL {
            if let Some(v) = side.get(l) {
                if !out.iter().any(|&(k, s, _)| k == l.kind && s == side) {
                    out.push((l.kind, side, v.bytes_per_sec()));
                }
            }
        }
    }
    out
}

/// The declared peer bandwidths a peer copy's data crosses: (kind, side, share of the copy).
/// Copies to or from host memory and staged copies cross none (they do not use them).
pub(super) fn crossed(m: &Machine, plan: &Plan) -> Vec<(LinkKind, PeerSide, f64)> {
    if !plan.mechanism.is_peer() {
        return Vec::new();
    }
    let mut out: Vec<(LinkKind, PeerSide, f64)> = Vec::new();
    for (h, x) in plan.shares() {
        let l = &m.spec.links[h.link];
        if let Some(side) = PeerSide::declaring(l, usize::from(!h.forward)) {
            match out.iter_mut().find(|(k, s, _)| *k == l.kind && *s == side) {
                Some(e) => e.2 = e.2.max(x),
                None => out.push((l.kind, side, x)),
            }
        }
    }
    out
}

/// Write `v` on every link of kind `k` that declares `side`.
pub(super) fn write(spec: &mut MachineSpec, k: LinkKind, side: PeerSide, v: f64) {
    for l in spec.links.iter_mut().filter(|l| l.kind == k && side.get(l).is_some()) {
        let field = match side {
            PeerSide::Both => &mut l.peer_bandwidth,
            PeerSide::Upstream => &mut l.peer_upstream,
            PeerSide::Downstream => &mut l.peer_downstream,
        };
        *field = Some(Bandwidth(v));
    }
}
