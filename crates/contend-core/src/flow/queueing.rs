//! The queueing excursion at switch ports (maxmin `port_queueing`, params.rs; docs/models.md,
//! "Port queueing"): what a message through a NIC waits beyond its max-min share.
//!
//! Max-min sharing gives each message its mean share of a port. Packets that reach a port from
//! many sources at random (per-packet routing spreads them) also wait in its random backlog.
//! A port of service time s per packet, loaded at ρ by other messages' packets, makes a packet
//! wait ρ / (2 (1 − ρ)) service times on average (M/D/1, Pollaczek-Khinchine: Kleinrock,
//! Queueing Systems I, §5.6). That mean diverges at ρ → 1, where the backlog is a reflected
//! random walk whose excursion over the n packet times of an n-packet message grows as √n
//! (`packet` on fat-tree-2048x1's 64 KiB permutation, docs/benchmarks.md "Issue 23, round 4":
//! median 2.0, 4.0, 6.0, 6.9 packets beyond the lone time for 4, 16, 64, 256 packets), and
//! credit-based flow control stops it near the buffer behind the port (`buffer_packets`).
//! A message meets those backlogs in turn, but an upstream queue hands on its packets spaced
//! at its capacity, so the excursions of a path's ports do not add: the message pays the
//! largest (the same permutation: 4 packets for 16 over a path of four critically loaded
//! ports, not 16). ρ is the ports' load at the message's start (the max-min solution of the
//! instant it joins), less its own; a message alone on its path waits nothing.

use super::{FlowTable, NO_NIC};
use crate::topology::{DeviceKind, LinkKind, Machine};

/// What the rule needs besides the flow table's capacities.
pub struct PortQueueing {
    /// The parameter: 1 is the term above, 0 none.
    scale: f64,
    /// Per resource: whether it is a switch's output port (a directed network link out of a switch).
    port: Vec<bool>,
    /// The machine's packet size (bytes) and input buffer depth (packets).
    packet: f64,
    buffer: f64,
}

impl FlowTable {
    /// Turn the rule on at `scale`, marking the switches' output ports of `m`.
    pub fn queue_at_ports(&mut self, m: &Machine, scale: f64) {
        let mut port = vec![false; self.cap.len()];
        let dir = super::directed_resources(m);
        for (i, l) in m.links.iter().enumerate() {
            if l.kind == LinkKind::Memory {
                continue;
            }
            for (k, from) in [(0, l.a), (1, l.b)] {
                if m.devices[from].kind == DeviceKind::Switch {
                    port[dir[2 * i + k] as usize] = true;
                }
            }
        }
        let (packet, buffer) = (m.network.packet_bytes() as f64, m.network.buffer() as f64);
        self.queueing = Some(PortQueueing { scale, port, packet, buffer });
    }

    /// Seconds transfer f waits at the busiest switch port of its route beyond its max-min
    /// share, `load` being every resource's load (bytes/s) at the instant it joined and `rate`
    /// its own rate then. Zero where the rule is off or f crosses no NIC.
    pub fn port_wait(&self, f: usize, load: &[f64], rate: f64) -> f64 {
        let Some(q) = &self.queueing else { return 0.0 };
        if self.nic[f] == NO_NIC {
            return 0.0;
        }
        // A message smaller than a packet is one packet of its size (as store and forward).
        let packet = q.packet.min(self.volume[f]);
        let n = (self.volume[f] / q.packet).ceil().max(1.0);
        let cap = n.sqrt().min(q.buffer);
        let mut wait = 0.0f64;
        for &(r, a) in self.route(f) {
            let r = r as usize;
            if !q.port[r] {
                continue;
            }
            let c = self.cap[r];
            let rho = ((load[r] - rate * a) / c).clamp(0.0, 1.0);
            // Packets waited: the M/D/1 mean, capped by the excursion and the buffer.
            let packets = if rho >= 1.0 { cap } else { (rho / (2.0 * (1.0 - rho))).min(cap) };
            wait = wait.max(packets * packet / c);
        }
        q.scale * wait
    }
}
