//! Datatype methods as operations of the one executor: a method changes only what the flow
//! table says about a transfer, never the loop that advances time.
//!
//! - pack / staged: the pack kernel (launch + work + sync) lengthens the setup before the first
//!   byte, the copy is the transfer itself (CUDA's mechanism, or staged through host memory),
//!   and the unpack kernel is the teardown after the last byte;
//! - zero-copy: the kernel's launch is setup, its stores are the transfer, capped at the
//!   load-store throughput by a resource of its own, and its sync is the teardown.
//!
//! Adaptive picks, per message, the lowest time predicted on the uncontended path; the
//! executor then runs the chosen operations under contention like any other.

use super::router::{Plan, Router};
use super::FlowRules;
use crate::datatype::{KernelParams, Message, Method, PathClass};
use crate::topology::{LinkKind, Machine};
use crate::workload::{Mechanism, Transfer};
use serde::Serialize;

/// One method's predicted time for a message alone on its path, part by part.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Estimate {
    pub method: Method,
    /// Seconds, or None where the pair does not allow the method.
    pub total_s: Option<f64>,
    /// Kernels before the first byte: launch, pack work, sync (zero-copy: launch).
    pub before_s: f64,
    /// Setup of the path: copy engine and hop latencies (zero-copy: hop latencies).
    pub latency_s: f64,
    /// Bytes over the path's rate (staged: plus the pipeline's first chunk).
    pub moving_s: f64,
    /// Kernels after the last byte: launch, unpack work, sync (zero-copy: sync).
    pub after_s: f64,
    /// The rate the bytes move at alone: the path's narrowest resource, or the load-store cap.
    pub rate_bps: f64,
    /// Why the method is not offered, where it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    /// What a reader of the table needs beside the times (pack's copy is the staged one where
    /// CUDA stages the pair).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Estimate {
    fn unavailable(method: Method, why: &str) -> Estimate {
        Estimate { method, total_s: None, before_s: 0.0, latency_s: 0.0, moving_s: 0.0, after_s: 0.0, rate_bps: 0.0, why_not: Some(why.into()), note: None }
    }
}

/// What was asked, what runs, and by how much it beat the next method (alone on its path); a
/// method asked for that is not the fastest has a negative margin (what it loses).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Decision {
    pub asked: Method,
    pub chosen: Method,
    /// Seconds the runner-up would have taken more (infinite when no other method applies).
    pub margin_s: f64,
    pub estimates: Vec<Estimate>,
}

/// How a method changes a transfer's flow.
pub struct Applied {
    pub plan: Plan,
    pub before: f64,
    pub after: f64,
    /// Latency of the path as this method pays it (zero-copy pays no copy engine).
    pub latency: f64,
    /// Load-store rate cap, bytes/s (zero-copy).
    pub cap: Option<f64>,
    pub decision: Decision,
}

/// Where zero-copy stores go: all NVLink, or some PCIe.
pub fn class(m: &Machine, plan: &Plan) -> PathClass {
    if plan.hops.iter().all(|h| m.links[h.link].kind == LinkKind::Nvlink) {
        PathClass::Nvlink
    } else {
        PathClass::Pcie
    }
}

/// Predict every method for `t` (its layout `msg`) and apply the asked one, or the fastest.
/// `rate` gives a plan's uncontended rate (its narrowest resource, crossings counted);
/// `rules.caps` says whether the model can cap a flow (zero-copy needs it).
pub fn apply(
    m: &Machine,
    router: &Router,
    t: &Transfer,
    msg: &Message,
    k: &KernelParams,
    rules: &FlowRules,
    rate: &dyn Fn(&Plan) -> f64,
) -> Result<Applied, String> {
    let (p2p, chunk, caps) = (rules.p2p, rules.staging_chunk, rules.caps);
    let asked = t.method.unwrap_or(Method::Adaptive);
    let n = msg.bytes as f64;
    let hop_latency = |p: &Plan| p.hops.iter().map(|h| m.links[h.link].latency).sum::<f64>();
    // A contiguous message needs no packing: MPI libraries copy it as it is.
    let contiguous = msg.blocks <= 1;
    let (pack, unpack) = if contiguous { (0.0, 0.0) } else { (k.launch + k.pack_s(msg) + k.sync, k.launch + k.unpack_s(msg) + k.sync) };
    let cuda = router.plan(t.src, t.dst, None, &[], p2p)?;
    let staged = router.plan(t.src, t.dst, Some(Mechanism::Staged), &[], p2p).ok();
    let copy = |method: Method, plan: Option<&Plan>| {
        let Some(plan) = plan else {
            return (Estimate::unavailable(method, "no staging path"), None);
        };
        let r = rate(plan);
        let fill = if plan.staging.is_some() { n.min(chunk) } else { 0.0 };
        let moving = (n + fill) / r;
        let e = Estimate {
            method,
            total_s: Some(pack + plan.latency + moving + unpack),
            before_s: pack,
            latency_s: plan.latency,
            moving_s: moving,
            after_s: unpack,
            rate_bps: r,
            why_not: None,
            note: None,
        };
        (e, Some(plan.clone()))
    };
    let (pack_e, pack_plan) = copy(Method::Pack, Some(&cuda));
    let (staged_e, staged_plan) = copy(Method::Staged, staged.as_ref());
    // Loads and stores reach a peer's memory only inside a node (NVLink or PCIe peer mappings);
    // across a network a GPU-to-GPU copy is RDMA, never a store.
    let over_network = cuda.hops.iter().any(|h| m.links[h.link].kind == LinkKind::Network);
    let peer = cuda.mechanism == Mechanism::P2p && !over_network;
    let zc_cap = peer.then(|| k.load_store_bps(msg, class(m, &cuda), rate(&cuda)));
    let zc_e = match zc_cap {
        Some(cap) if caps => {
            let r = cap.min(rate(&cuda));
            let lat = hop_latency(&cuda);
            Estimate {
                method: Method::ZeroCopy,
                total_s: Some(k.launch + lat + n / r + k.sync),
                before_s: k.launch,
                latency_s: lat,
                moving_s: n / r,
                after_s: k.sync,
                rate_bps: r,
                why_not: None,
                note: None,
            }
        }
        _ => {
            let why = if peer {
                "the model cannot cap a transfer's rate; use --model maxmin"
            } else if over_network {
                "the GPUs are in different nodes: stores cannot cross the network"
            } else {
                "the GPUs have no peer access (CUDA stages this pair)"
            };
            Estimate::unavailable(Method::ZeroCopy, why)
        }
    };
    // Where CUDA stages the pair (no peer access), pack's copy is the staged one; across nodes
    // with GPUDirect RDMA it is not: the packed buffer goes NIC to NIC.
    let direct = cuda.mechanism != Mechanism::Staged;
    let mut pack_e = pack_e;
    if !direct && pack_e.total_s.is_some() {
        pack_e.note = Some("the staged copy: CUDA stages this pair".into());
    }
    let estimates = vec![pack_e, zc_e, staged_e];
    let chosen = match asked {
        // Where CUDA stages the pair, adaptive names pack's copy staged.
        Method::Adaptive => {
            estimates
                .iter()
                .filter(|e| e.total_s.is_some() && (direct || e.method != Method::Pack))
                .min_by(|a, b| a.total_s.unwrap().total_cmp(&b.total_s.unwrap()))
                .ok_or("no method applies to this pair")?
                .method
        }
        m => m,
    };
    let mine = estimates.iter().find(|e| e.method == chosen).unwrap();
    if let Some(why) = &mine.why_not {
        return Err(format!("method {} does not apply: {why}; use method adaptive", chosen.name()));
    }
    let best = mine.total_s.unwrap();
    // Against the other methods; where CUDA stages the pair, pack and staged are one.
    let rival = |e: &&Estimate| e.method != chosen && (direct || ![Method::Pack, Method::Staged].contains(&e.method) || chosen == Method::ZeroCopy);
    let margin_s = estimates.iter().filter(rival).filter_map(|e| e.total_s).map(|x| x - best).fold(f64::INFINITY, f64::min);
    let (before, after, latency, cap) = (mine.before_s, mine.after_s, mine.latency_s, (chosen == Method::ZeroCopy).then(|| zc_cap.unwrap()));
    let plan = match chosen {
        Method::Staged => staged_plan.unwrap(),
        Method::Pack => pack_plan.unwrap(),
        _ => cuda,
    };
    Ok(Applied { plan, before, after, latency, cap, decision: Decision { asked, chosen, margin_s, estimates } })
}
