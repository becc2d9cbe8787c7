//! The packet model's clock: integer picoseconds in a u64, so that the same input gives the
//! same output to the picosecond. Its range is checked per workload before the run, from an
//! upper bound on the run's length, so that no time wraps or saturates mid-run (a 1 MiB copy
//! over a 1e-6 B/s link once "took" 69 µs).
//!
//! The bound: at every moment of a run some activity is under way (a packet serialising or
//! travelling a hop, a paced source waiting to cut its next packet, a setup delay, a
//! computation, a teardown), else everything has finished, waits for a later start, or would
//! deadlock (which the virtual channels rule out). So the run
//! ends before the latest start plus the sum of every activity's length, however they overlap.
//! That sum over-counts by the parallelism, which is harmless: it passes the clock only for
//! workloads whose links or times are absurd (days of traffic on one link).

use super::Net;
use crate::error::{Error, Result};
use crate::flow::FlowTable;
use crate::units::Time;
use crate::workload::Workload;

/// The clock's range in picoseconds: 2^63 (about 106 days), half of u64, so that a time plus
/// one more activity's length never wraps.
pub const CLOCK_PS: f64 = 9_223_372_036_854_775_808.0;

/// Refuse, before the run, a workload whose bound passes the clock's range, naming the term
/// that does and what to change.
pub(super) fn check(net: &Net, flows: &FlowTable, w: &Workload) -> Result<()> {
    let n = flows.len();
    let slowest_all = (0..net.ps_per_byte.len()).max_by(|&a, &b| net.ps_per_byte[a].total_cmp(&net.ps_per_byte[b]));
    let delay_all = net.hop_delay.iter().copied().max().unwrap_or(0) as f64;
    let mut latest_start = 0.0f64;
    let mut delays = 0.0f64; // picoseconds of setup, teardown and computation
    let mut moving = 0.0f64; // picoseconds of serialisation and hop delays
    let mut slowest: Option<(usize, f64)> = None; // (resource, its picoseconds for its bytes)
    let mut slowest_paced: Option<(usize, f64)> = None; // (transfer, its picoseconds at its max_rate)
    for f in 0..n {
        let t = &w.transfers[f];
        latest_start = latest_start.max(t.start * 1e12);
        delays += (flows.setup[f] + flows.teardown[f] + t.compute.unwrap_or(0.0)) * 1e12;
        let (lo, hi) = (net.hop_off[f] as usize, net.hop_off[f + 1] as usize);
        let volume = flows.volume[f];
        let packets = net.packets[f] as f64;
        // A paced source cuts its packets one pace apart: an activity of its own.
        let paced = volume * net.pace[f];
        moving += paced;
        if paced > 0.0 && slowest_paced.is_none_or(|(_, p)| paced > p) {
            slowest_paced = Some((f, paced));
        }
        // A packet routed hop by hop may take a longer path over any link: the worst of them.
        let hops = net.dynr.as_ref().map_or(hi - lo, |d| d.max_hops(f, hi - lo));
        let rerouted = hops != hi - lo || net.dynr.is_some();
        let mut cost = |r: usize, delay: f64| {
            let bytes_ps = volume * net.ps_per_byte[r];
            moving += bytes_ps + packets * delay;
            if slowest.is_none_or(|(_, p)| bytes_ps > p) {
                slowest = Some((r, bytes_ps));
            }
        };
        if rerouted {
            if let Some(r) = slowest_all {
                for _ in 0..hops {
                    cost(r, delay_all);
                }
            }
        } else {
            for k in lo..hi {
                cost(net.hop_res[k] as usize, net.hop_delay[k] as f64);
            }
        }
    }
    let horizon = latest_start + delays + moving;
    if horizon.is_finite() && horizon < CLOCK_PS {
        return Ok(());
    }
    let (quantity, fix) = if moving >= delays.max(latest_start) || !moving.is_finite() {
        match (slowest, slowest_paced) {
            // A max_rate slower than every link is what to name: the links are not at fault.
            (_, Some((f, ps))) if slowest.is_none_or(|(_, p)| ps > p) => (
                format!("transfers[{f}] ({}) at its max_rate of {:.3e} B/s takes {}", w.transfers[f].name, 1e12 / net.pace[f], span(ps)),
                format!("raise transfers[{f}]'s max_rate, or move fewer bytes"),
            ),
            (Some((r, ps)), _) => (
                format!("{} carrying its bytes at {:.3e} B/s takes {}", flows.name[r], flows.cap[r], span(ps)),
                format!("check {}'s bandwidth, or move fewer bytes", flows.name[r]),
            ),
            (None, _) => (format!("moving the bytes takes {}", span(moving)), "move fewer bytes".to_string()),
        }
    } else if delays >= latest_start {
        (format!("setup delays, computations and teardowns add up to {}", span(delays)), "shorten the overheads, latencies and computations".to_string())
    } else {
        (format!("the latest start is {}", span(latest_start)), "start the transfers earlier".to_string())
    };
    Err(Error::Unsupported {
        model: "packet".into(),
        reason: format!(
            "its clock counts whole picoseconds up to 2^63 (about 106 days) and this run could pass that: {quantity}; {fix}, or use --model maxmin"
        ),
    })
}

/// Picoseconds as a time a person reads: seconds, with days beside them when that many.
fn span(ps: f64) -> String {
    let s = ps / 1e12;
    if !s.is_finite() {
        "longer than any clock holds".into()
    } else if s >= 86_400.0 {
        format!("{s:.3e} s ({:.3e} days)", s / 86_400.0)
    } else if ps < CLOCK_PS {
        format!("{}", Time(ps as u64))
    } else {
        format!("{s:.3e} s")
    }
}
