//! What one byte of a transfer costs each directed resource it touches, beyond the hop it
//! crosses: the bandwidth the other direction of a link loses to it (duplex loss: PCIe
//! acknowledgements and flow-control updates, NVLink credits), and for a read, the data's
//! completion overhead and the requests that travel against it. These are route coefficients,
//! so every model that reads routes (the executor, maxmin, the schedule search, reports) sees them.
//! A PCIe link's duplex loss per direction is not a route coefficient: it is taken off the
//! direction's capacity (`DuplexPair`), so that the two directions can run at different rates.

use super::router::Hop;
use crate::topology::{DeviceKind, Link, LinkKind, Machine};
use crate::workload::Access;

/// How a read costs a link: its data crosses at `data` × its size (1 / read efficiency), and
/// its requests take `request` × its size of the opposite direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReadCost {
    pub data: f64,
    pub request: f64,
}

/// Per-link charges a model applies (flow level); `read` None: the model cannot model reads.
pub struct Charges<'a> {
    pub duplex: &'a dyn Fn(&Link) -> f64,
    pub read: Option<&'a dyn Fn(&Link) -> ReadCost>,
    /// The duplex loss of a staged copy's links (the host memory's `staging_duplex`, else this
    /// default); None: staged copies take their links' duplex like any copy.
    pub staging_duplex: Option<f64>,
    /// Whether the model takes a link's per-direction duplex loss off its capacities
    /// (`FlowTable::duplex_pairs`); such a link then charges no duplex to routes.
    pub directed: bool,
    /// The share of a host memory's bandwidth that writes into it reach where the memory sets
    /// no `write_efficiency` (a byte written takes 1/this of the memory); None: the model
    /// charges writes and reads alike, and ignores the memory's own.
    pub memory_write: Option<f64>,
    /// The request share of a kernel's loads of host memory, which its SMs may ask for in less a
    /// request than a copy engine (64 bytes against up to 512); read by models that charge reads.
    pub kernel_read_request: f64,
}

/// No charge beyond the hops themselves, and no reads (sc16, packet).
pub const NONE: Charges<'static> =
    Charges { duplex: &|_| 0.0, read: None, staging_duplex: None, directed: false, memory_write: None, kernel_read_request: 0.0 };

/// A link with a duplex loss per direction, as the model sees it: each direction's capacity is
/// what its copies share after the loss to the data moving the other way,
/// cap(up) − upstream × data(down), and the same for down. The loss is served first, the way
/// PCIe's acknowledgements, flow-control updates and read requests take the link before data
/// does: so a direction can be slowed by copies faster than its own (see docs/models.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DuplexPair {
    /// The upstream (toward the root) and downstream resources.
    pub upstream: u32,
    pub downstream: u32,
    /// Capacity the upstream direction loses per byte of data moving downstream, and the reverse.
    pub upstream_loss: f64,
    pub downstream_loss: f64,
}

/// The (resource, coefficient, data) triples of `hops` (each with the share of the message crossing
/// it); `dirs(h)` is the directed resource of a hop and the opposite one. `kernel`: a read is a
/// kernel's loads (its requests are the kernel's size).
#[allow(clippy::too_many_arguments)]
pub fn coefficients(
    m: &Machine,
    hops: &[(Hop, f64)],
    staging: Option<usize>,
    access: Access,
    kernel: bool,
    charges: &Charges,
    dirs: impl Fn(&Hop) -> (u32, u32),
    out: &mut Vec<(u32, f64, f64)>,
) {
    for (h, x) in hops {
        let l = &m.links[h.link];
        let read = match (access, charges.read) {
            (Access::Read, Some(f)) if kernel => ReadCost { request: charges.kernel_read_request, ..f(l) },
            (Access::Read, Some(f)) => f(l),
            _ => ReadCost { data: 1.0, request: 0.0 },
        };
        let data = x * read.data;
        let (forward, back_dir) = dirs(h);
        // A memory link is one resource for both directions: nothing crosses "back"; a write
        // into the memory (the hop arrives at it) takes 1/its write efficiency of it.
        if l.kind == LinkKind::Memory {
            let into = m.devices[if h.forward { l.b } else { l.a }].write_efficiency;
            let write = charges.memory_write.map_or(1.0, |default| into.unwrap_or(default));
            let arrives = m.devices[if h.forward { l.b } else { l.a }].kind == DeviceKind::HostMemory;
            out.push((forward, if arrives { data / write } else { data }, *x));
            continue;
        }
        out.push((forward, data, *x));
        // A staged copy's links lose what its staging memory says, if it says (see
        // `DeviceSpec::staging_duplex`); where it says nothing, the model's default applies to
        // the GPUs' own links only: it was measured on hosts where each GPU's link carries its
        // outgoing copy's first half and its incoming copy's second half (docs/validation.md),
        // and a one-way copy's halves cross a shared uplink too. The model's charges decide
        // whether duplex applies at all.
        let said = staging.and_then(|s| m.devices[s].staging_duplex).filter(|_| charges.staging_duplex.is_some());
        let gpu_link = || m.devices[l.a].kind == DeviceKind::Gpu || m.devices[l.b].kind == DeviceKind::Gpu;
        let duplex = match (said, charges.staging_duplex) {
            (Some(d), _) => d,
            _ if charges.directed && l.duplex_directed.is_some() => 0.0,
            (None, Some(default)) if staging.is_some() && gpu_link() => default,
            _ => (charges.duplex)(l),
        };
        let back = data * duplex + x * read.request;
        if back > 0.0 {
            out.push((back_dir, back, 0.0));
        }
    }
}
