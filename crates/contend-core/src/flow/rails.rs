//! A NIC's ports scheduled per message (`Device::stripe_threshold`), as a net plugin does with
//! the rails of one network device (aws-ofi-nccl's threshold scheduler, src/nccl_ofi_scheduler.c,
//! read at v1.7.3-aws and v1.8.1-aws): a message of at most the threshold goes whole over one
//! rail, the rails taken in turn by one counter per device (`rr_counter`, shared by every
//! connection on it); a larger one is split into equal stripes (128-byte multiples), one per
//! rail. The two ends' rails are paired by index (the RDMA protocol connects rail k to rail k),
//! so a message enters the receiving NIC on the rail it left the sending one by.
//!
//! In flow terms each port of such a NIC, each direction, is a resource of its own at its share
//! of the NIC's network link: a message on one rail crosses that rail's resource once, a striped
//! one crosses every rail's with a share of 1/ports. Turns are taken in the workload's order, the
//! order a lowering posts its messages in; the plugin's own control messages, which take turns
//! too, are not modelled (contend moves no control messages). maxmin's `release_frees_nic` and
//! `head_priority`, which reason about a NIC's one injection link, are refused on such a NIC.

use crate::keymap::IntMap;
use crate::topology::{DeviceKind, Hop, LinkKind, Machine};

/// The rails of the NICs a workload meets, made as messages first cross them.
#[derive(Default)]
pub(super) struct Rails {
    /// Per NIC device: its first resource; port k's outgoing direction is `first + 2k`, its
    /// incoming one `first + 2k + 1`.
    first: IntMap<usize, u32>,
    /// Per NIC device deciding its messages' rails: the port its next single-rail message takes.
    turn: IntMap<usize, u32>,
}

/// How a message is spread over a NIC's rails.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Choice {
    One(u32),
    Striped,
}

impl Rails {
    /// The rail resources (resource, share of the message) a message of `size` bytes along `hops`
    /// crosses, appended to `out`; none where neither NIC it crosses schedules its ports. `new`
    /// makes a resource (capacity in bytes/s, name) and returns its index; `link_cap` is a
    /// network hop's capacity in the hop's direction (the ports' rate is read from the first hop
    /// that meets the NIC, so both directions of a NIC's link are taken to have one capacity).
    pub(super) fn crossings(
        &mut self,
        m: &Machine,
        hops: &[Hop],
        size: f64,
        link_cap: impl Fn(&Hop) -> f64,
        mut new: impl FnMut(f64, String) -> u32,
        out: &mut Vec<(u32, f64)>,
    ) {
        let mut choice: Option<Choice> = None;
        for h in hops.iter().filter(|h| m.links[h.link].kind == LinkKind::Network) {
            // The hop's NIC end, and whether the message leaves the NIC by it.
            let (from, to) = (h.from(m), h.to(m));
            let (nic, leaving) = match (m.devices[from].kind, m.devices[to].kind) {
                (DeviceKind::Nic, _) => (from, true),
                (_, DeviceKind::Nic) => (to, false),
                _ => continue,
            };
            let d = &m.devices[nic];
            let (Some(threshold), ports) = (d.stripe_threshold, d.ports.max(1)) else { continue };
            // The first NIC with rails on the way (the sender's, where it has them) schedules.
            let c = *choice.get_or_insert_with(|| {
                if size <= threshold {
                    let turn = self.turn.entry(nic).or_insert(0);
                    let k = *turn;
                    *turn = (k + 1) % ports;
                    Choice::One(k)
                } else {
                    Choice::Striped
                }
            });
            let first = *self.first.entry(nic).or_insert_with(|| {
                let rate = link_cap(h) / ports as f64;
                let mut first = u32::MAX;
                for k in 0..ports {
                    for way in ["out", "in"] {
                        let r = new(rate, format!("{} port {k} ({way})", d.name));
                        first = first.min(r);
                    }
                }
                first
            });
            let dir = u32::from(!leaving);
            match c {
                Choice::One(k) => out.push((first + 2 * (k % ports) + dir, 1.0)),
                Choice::Striped => out.extend((0..ports).map(|k| (first + 2 * k + dir, 1.0 / ports as f64))),
            }
        }
    }
}
