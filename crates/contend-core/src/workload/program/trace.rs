//! Rank programs from traces of MPI programs (Score-P OTF2, read by the Python layer into flat
//! records): MPI calls become operations, the time between one call's end and the next call's
//! start becomes compute, as TraceR replays them. Requests of nonblocking calls become named
//! requests, their completions waits.

use super::{Collective, Message, NcclP2p, Op, Program};
use crate::error::{Error, Result};
use crate::units::{Bytes, Time};
use serde::Deserialize;
use std::collections::BTreeMap;

/// One record of a trace, in time order per rank. `kind` is one of: enter, leave (of an MPI
/// call's region), send, isend, isend_complete, recv, irecv_request, irecv, collective.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceRecord {
    pub rank: u32,
    /// Seconds since the trace's start.
    pub t: f64,
    pub kind: String,
    #[serde(default)]
    pub peer: Option<u32>,
    #[serde(default)]
    pub tag: Option<u32>,
    #[serde(default)]
    pub size: Option<u64>,
    #[serde(default)]
    pub request: Option<u64>,
    /// A collective's operation (OTF2's name: ALLREDUCE, BCAST, ...).
    #[serde(default)]
    pub op: Option<String>,
    #[serde(default)]
    pub root: Option<u32>,
    /// Ranks of the collective's communicator, in its rank order.
    #[serde(default)]
    pub group: Vec<u32>,
}

/// The program of a trace's `ranks` ranks, its loop repeated `iterations` times.
pub fn program(records: &[TraceRecord], ranks: u32, iterations: u32, origin: &str) -> Result<Program> {
    if ranks == 0 {
        return Err(Error::input(origin, "ranks", "the trace has no MPI ranks; record an MPI program with Score-P"));
    }
    let mut per_rank: Vec<Vec<&TraceRecord>> = vec![Vec::new(); ranks as usize];
    for (i, r) in records.iter().enumerate() {
        let list = per_rank
            .get_mut(r.rank as usize)
            .ok_or_else(|| Error::input(origin, format!("event {i}"), format!("names rank {}, past the trace's {ranks} ranks", r.rank)))?;
        list.push(r);
    }
    let mut loops: Vec<Vec<Op>> = per_rank.iter().enumerate().map(|(rank, recs)| rank_ops(recs, origin, rank)).collect::<Result<_>>()?;
    one_size_per_call(&mut loops);
    let mut out = Program { ranks: Vec::with_capacity(ranks as usize) };
    for one in loops {
        let mut ops = Vec::with_capacity(one.len() * iterations as usize);
        for _ in 0..iterations {
            ops.extend(one.iter().cloned());
        }
        out.ranks.push(ops);
    }
    Ok(out)
}

/// The reader turns Score-P's bytes of each rank into the call's size (`otf2_records.call_size`),
/// but ranks of one call can still differ (the V forms' counts, an in-place root), while a
/// program's call is one call of one size on every rank of its group: each call (the k-th
/// collective of a group) takes the largest size any of its ranks gave.
fn one_size_per_call(loops: &mut [Vec<Op>]) {
    fn call(op: &mut Op) -> Option<&mut Collective> {
        match op {
            Op::Allreduce(c) | Op::Alltoall(c) | Op::Allgather(c) | Op::Bcast(c) => Some(c),
            _ => None,
        }
    }
    let mut largest: BTreeMap<(Vec<u32>, usize), u64> = BTreeMap::new();
    for pass in [false, true] {
        for ops in loops.iter_mut() {
            let mut seen: BTreeMap<Vec<u32>, usize> = BTreeMap::new();
            for c in ops.iter_mut().filter_map(call) {
                let k = seen.entry(c.group.clone()).or_insert(0);
                let key = (c.group.clone(), *k);
                *k += 1;
                if pass {
                    c.size = Bytes(largest[&key]);
                } else {
                    let m = largest.entry(key).or_insert(0);
                    *m = (*m).max(c.size.0);
                }
            }
        }
    }
}

fn rank_ops(recs: &[&TraceRecord], origin: &str, rank: usize) -> Result<Vec<Op>> {
    let bad = |what: String| Error::input(origin, format!("rank {rank}"), what);
    // Receives posted without a source: their completion (irecv) says who sent what.
    let completion: BTreeMap<u64, &TraceRecord> = recs.iter().filter(|r| r.kind == "irecv").filter_map(|r| r.request.map(|q| (q, *r))).collect();
    let mut ops = Vec::new();
    let mut last_leave: Option<f64> = None;
    let mut depth = 0u32;
    let message = |r: &TraceRecord, req: Option<String>| -> Result<Message> {
        let peer = r.peer.ok_or_else(|| bad(format!("a {} at {} s has no peer", r.kind, r.t)))?;
        Ok(Message { peer, size: Bytes(r.size.unwrap_or(0).max(1)), tag: r.tag.unwrap_or(0), req })
    };
    for r in recs {
        match r.kind.as_str() {
            "enter" => {
                if depth == 0 {
                    if let Some(l) = last_leave {
                        if r.t > l {
                            ops.push(Op::Compute(Time::from_secs(r.t - l)));
                        }
                    }
                }
                depth += 1;
            }
            "leave" => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    last_leave = Some(r.t);
                }
            }
            "send" => ops.push(Op::Send(message(r, None)?)),
            "isend" => ops.push(Op::Isend(message(r, Some(request_name(r, origin)?))?)),
            "isend_complete" => ops.push(Op::Wait(request_name(r, origin)?)),
            "recv" => ops.push(Op::Recv(message(r, None)?)),
            "irecv_request" => {
                let q = r.request.ok_or_else(|| bad(format!("an irecv request at {} s has no request id", r.t)))?;
                let done = completion.get(&q).ok_or_else(|| bad(format!("the receive request {q} posted at {} s never completes in the trace", r.t)))?;
                ops.push(Op::Irecv(message(done, Some(format!("q{q}")))?));
            }
            "irecv" => ops.push(Op::Wait(request_name(r, origin)?)),
            "collective" => ops.push(collective(r).map_err(bad)?),
            other => return Err(bad(format!("has an event of unknown kind \"{other}\""))),
        }
    }
    Ok(ops)
}

fn request_name(r: &TraceRecord, origin: &str) -> Result<String> {
    r.request.map(|q| format!("q{q}")).ok_or_else(|| Error::input(origin, format!("rank {}", r.rank), format!("a {} at {} s has no request id", r.kind, r.t)))
}

/// OTF2's collective operations as contend's; a reduce is replayed as an allreduce and the
/// vector forms as their regular ones (sizes as traced).
fn collective(r: &TraceRecord) -> std::result::Result<Op, String> {
    let op = r.op.as_deref().unwrap_or("");
    let c = Collective { size: Bytes(r.size.unwrap_or(8).max(1)), algorithm: None, root: r.root, group: r.group.clone() };
    Ok(match op {
        "BARRIER" => Op::Barrier,
        "BCAST" => Op::Bcast(c),
        "ALLREDUCE" | "REDUCE" => Op::Allreduce(c),
        "ALLGATHER" | "ALLGATHERV" | "GATHER" | "GATHERV" => Op::Allgather(c),
        "ALLTOALL" | "ALLTOALLV" | "ALLTOALLW" => Op::Alltoall(c),
        other => {
            return Err(format!(
                "has a collective {other} at {} s, which contend cannot replay; supported: BARRIER, BCAST, (ALL)REDUCE, (ALL)GATHER(V), ALLTOALL(V/W)",
                r.t
            ))
        }
    })
}

impl Program {
    /// The program as YAML, one line per operation (`contend schema program`).
    pub fn to_yaml(&self) -> String {
        let mut s = String::from("ranks:\n");
        for ops in &self.ranks {
            if ops.is_empty() {
                s.push_str("  - []\n");
                continue;
            }
            s.push_str("  -\n");
            for op in ops {
                s.push_str("    - ");
                s.push_str(&op_yaml(op));
                s.push('\n');
            }
        }
        s
    }
}

fn msg_yaml(m: &Message) -> String {
    let req = m.req.as_ref().map(|q| format!(", req: {q}")).unwrap_or_default();
    format!("{{peer: {}, size: {}B, tag: {}{req}}}", m.peer, m.size.0, m.tag)
}

fn coll_yaml(c: &Collective) -> String {
    let mut f = vec![format!("size: {}B", c.size.0)];
    if let Some(a) = c.algorithm {
        f.push(format!("algorithm: {}", a.name()));
    }
    if let Some(r) = c.root {
        f.push(format!("root: {r}"));
    }
    if !c.group.is_empty() {
        f.push(format!("group: [{}]", c.group.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")));
    }
    format!("{{{}}}", f.join(", "))
}

fn op_yaml(op: &Op) -> String {
    match op {
        Op::Compute(t) => format!("{{compute: {}ns}}", t.secs() * 1e9),
        Op::Send(m) => format!("{{send: {}}}", msg_yaml(m)),
        Op::Isend(m) => format!("{{isend: {}}}", msg_yaml(m)),
        Op::Recv(m) => format!("{{recv: {}}}", msg_yaml(m)),
        Op::Irecv(m) => format!("{{irecv: {}}}", msg_yaml(m)),
        Op::Wait(q) => format!("{{wait: {q}}}"),
        Op::Waitall => "waitall".into(),
        Op::Barrier => "barrier".into(),
        Op::Allreduce(c) => format!("{{allreduce: {}}}", coll_yaml(c)),
        Op::Alltoall(c) => format!("{{alltoall: {}}}", coll_yaml(c)),
        Op::Allgather(c) => format!("{{allgather: {}}}", coll_yaml(c)),
        Op::Bcast(c) => format!("{{bcast: {}}}", coll_yaml(c)),
        Op::NcclGroup(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|x| match x {
                    NcclP2p::Send(m) => format!("{{send: {{peer: {}, size: {}B}}}}", m.peer, m.size.0),
                    NcclP2p::Recv(m) => format!("{{recv: {{peer: {}, size: {}B}}}}", m.peer, m.size.0),
                })
                .collect();
            format!("{{nccl_group: [{}]}}", items.join(", "))
        }
        op => {
            let (kind, c) = op.nccl_collective().expect("the other operations are above");
            let mut f = vec![format!("size: {}B", c.size.0)];
            if let Some(r) = c.root {
                f.push(format!("root: {r}"));
            }
            if !c.group.is_empty() {
                f.push(format!("group: [{}]", c.group.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")));
            }
            for (k, v) in [("algo", &c.algo), ("proto", &c.proto)] {
                if let Some(v) = v {
                    f.push(format!("{k}: \"{v}\""));
                }
            }
            format!("{{{}: {{{}}}}}", kind.name(), f.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(rank: u32, t: f64, kind: &str) -> TraceRecord {
        TraceRecord { rank, t, kind: kind.into(), peer: None, tag: None, size: None, request: None, op: None, root: None, group: vec![] }
    }

    #[test]
    fn gaps_become_compute_and_requests_waits() {
        let mut r = vec![rec(0, 0.0, "enter"), rec(0, 1e-6, "leave"), rec(0, 11e-6, "enter")];
        r.push(TraceRecord { peer: Some(1), size: Some(100), tag: Some(3), request: Some(7), ..rec(0, 11e-6, "isend") });
        r.extend([rec(0, 12e-6, "leave"), rec(0, 20e-6, "enter"), TraceRecord { request: Some(7), ..rec(0, 21e-6, "isend_complete") }, rec(0, 22e-6, "leave")]);
        r.extend([rec(1, 0.0, "enter"), TraceRecord { request: Some(9), ..rec(1, 0.0, "irecv_request") }, rec(1, 1e-6, "leave")]);
        r.extend([
            rec(1, 5e-6, "enter"),
            TraceRecord { peer: Some(0), size: Some(100), tag: Some(3), request: Some(9), ..rec(1, 30e-6, "irecv") },
            rec(1, 31e-6, "leave"),
        ]);
        let p = program(&r, 2, 2, "t.otf2").unwrap();
        assert_eq!(p.ranks[0].len(), 2 * 4);
        assert!(matches!(&p.ranks[0][0], Op::Compute(t) if (t.secs() - 10e-6).abs() < 1e-12));
        assert!(matches!(&p.ranks[0][1], Op::Isend(m) if m.peer == 1 && m.tag == 3 && m.req.as_deref() == Some("q7")));
        assert!(matches!(&p.ranks[1][0], Op::Irecv(m) if m.peer == 0 && m.size.0 == 100));
        assert!(matches!(&p.ranks[1][2], Op::Wait(q) if q == "q9"));
        // The YAML form reads back as the same program.
        assert_eq!(Program::from_text(&p.to_yaml(), "p.yaml").unwrap(), p);
    }

    #[test]
    fn a_traced_call_has_one_size_on_every_rank() {
        // One bcast whose ranks gave different sizes (as a V form's counts can): the program's call
        // is one bcast of the largest.
        let bcast = |rank: u32, size: u64| TraceRecord { op: Some("BCAST".into()), root: Some(0), size: Some(size), ..rec(rank, 0.0, "collective") };
        let r: Vec<TraceRecord> = (0..4).map(|k| bcast(k, if k == 0 { 256 } else { 64 })).collect();
        let p = program(&r, 4, 2, "t.otf2").unwrap();
        for ops in &p.ranks {
            assert!(ops.iter().all(|op| matches!(op, Op::Bcast(c) if c.size.0 == 256)), "{ops:?}");
        }
        // and it lowers: the two sides of each message are one call.
        let devices: Vec<usize> = (0..4).collect();
        let (mut out, mut origins) = (Vec::new(), Vec::new());
        super::super::lower(&p, &devices, &Default::default(), 1.0, 0, "t.otf2", None, &mut out, &mut origins).unwrap();
    }

    #[test]
    fn unknown_collectives_are_refused() {
        let r = vec![TraceRecord { op: Some("SCAN".into()), ..rec(0, 0.0, "collective") }];
        let e = program(&r, 1, 1, "t.otf2").unwrap_err().to_string();
        assert!(e.contains("SCAN") && e.contains("supported"), "{e}");
    }
}
