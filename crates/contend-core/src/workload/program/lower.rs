//! Lowering a job's rank programs to the workload DAG: every message becomes one transfer
//! (eager) or a 16-byte control message from the receiver plus the data (rendezvous, as TraceR
//! does it); every computation, and a sender's share of an eager send, becomes a compute
//! operation; program order, matching and waits become `after` edges. Matching is MPI's: the
//! k-th send from a to b with tag t meets the k-th receive at b from a with tag t.
//!
//! NCCL calls (`nccl`) are lowered by the layer that knows NCCL, through `NcclLowering`: a
//! collective's k-th call on a communicator is one call whichever rank makes it, and an NCCL
//! send meets the NCCL receive of the same pair in order. Each of the call's transfers waits for
//! the program order of both its ranks (where none of its dependencies inside the call already
//! does), and a rank goes on once its last sends and receives of the call are done.

use super::collective::{steps, Kind};
use super::nccl::{NcclLowering, NcclOp, NcclP2p};
use super::{Collective, Message, MpiParams, Op, Program};
use crate::error::{Error, Result};
use crate::workload::Transfer;
use std::collections::{BTreeMap, HashMap};

/// Where an operation of the DAG comes from: job, rank, and the index of the program's
/// operation (a collective's messages all point at the collective), and what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpOrigin {
    pub job: u32,
    pub rank: u32,
    pub op: u32,
    pub kind: OpKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// A computation of the rank's program.
    Compute,
    Message,
    /// A rendezvous's control message, from the receiver.
    Control,
    /// The sender's CPU share of an eager send (MPI's software and the copy): communication,
    /// run as a computation of the sending rank.
    Overhead,
}

impl OpKind {
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Compute => "compute",
            OpKind::Message => "message",
            OpKind::Control => "control",
            OpKind::Overhead => "overhead",
        }
    }
}

/// What a job's lowering tells the report: per rank, the operations its end waits for, and
/// the seconds it computes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lowered {
    pub ends: Vec<Vec<usize>>,
    pub compute: Vec<f64>,
}

/// Tags of collectives' messages start here, one per collective call of a rank.
const COLLECTIVE_TAGS: u64 = 1 << 32;

#[derive(Clone, Debug)]
enum Low {
    Compute {
        secs: f64,
        op: u32,
    },
    Send {
        peer: u32,
        size: u64,
        tag: u64,
        req: Option<u32>,
        op: u32,
    },
    Recv {
        peer: u32,
        tag: u64,
        req: Option<u32>,
        op: u32,
    },
    Wait(u32),
    WaitAll,
    /// The `seq`-th NCCL collective of this rank on the communicator `group` (job ranks).
    NcclCall {
        group: Vec<u32>,
        seq: u32,
        op: u32,
    },
    /// An `nccl_group` of sends and receives.
    NcclGroup {
        op: u32,
    },
}

fn is_mpi_collective(op: &Op) -> bool {
    matches!(op, Op::Barrier | Op::Allreduce(_) | Op::Alltoall(_) | Op::Allgather(_) | Op::Bcast(_))
}

/// Two ranks' sides of one collective call agree: the same kind, size and root. The algorithm
/// and the group are not compared here: sides that differ there leave steps unmatched, which
/// the matching names.
fn same_call(a: &Op, b: &Op) -> bool {
    let same = |x: &Collective, y: &Collective| x.size == y.size && x.root.unwrap_or(0) == y.root.unwrap_or(0);
    match (a, b) {
        (Op::Barrier, Op::Barrier) => true,
        (Op::Allreduce(x), Op::Allreduce(y)) | (Op::Alltoall(x), Op::Alltoall(y)) | (Op::Allgather(x), Op::Allgather(y)) | (Op::Bcast(x), Op::Bcast(y)) => {
            same(x, y)
        }
        _ => false,
    }
}

fn describe(op: &Op) -> String {
    match op {
        Op::Compute(t) => format!("compute {}s", t.secs()),
        Op::Send(m) | Op::Isend(m) => format!("send of {} B to rank {} with tag {}", m.size.0, m.peer, m.tag),
        Op::Recv(m) | Op::Irecv(m) => format!("receive of {} B from rank {} with tag {}", m.size.0, m.peer, m.tag),
        Op::Wait(r) => format!("wait for {r}"),
        Op::Waitall => "waitall".into(),
        Op::Barrier => "barrier".into(),
        Op::Allreduce(c) => format!("allreduce of {} B", c.size.0),
        Op::Alltoall(c) => format!("alltoall of {} B", c.size.0),
        Op::Allgather(c) => format!("allgather of {} B", c.size.0),
        Op::Bcast(c) => format!("bcast of {} B from root {}", c.size.0, c.root.unwrap_or(0)),
        Op::NcclGroup(list) => format!("nccl_group of {} send(s) and receive(s)", list.len()),
        op => match op.nccl_collective() {
            Some((kind, c)) => format!("{} of {} B", kind.name(), c.size.0),
            None => String::new(),
        },
    }
}

/// One rank's operations with requests numbered and collectives expanded.
fn expand(p: &Program, rank: u32, origin: &str, job: &str) -> Result<Vec<Low>> {
    let n = p.ranks.len() as u32;
    let field = |k: usize| format!("{job}ranks[{rank}][{k}]");
    let mut out = Vec::new();
    let mut names: HashMap<String, u32> = HashMap::new();
    let mut next_req = 0u32;
    let mut collectives = 0u64;
    // NCCL collectives made so far on each communicator (by its ranks).
    let mut nccl_calls: HashMap<Vec<u32>, u32> = HashMap::new();
    for (k, op) in p.ranks[rank as usize].iter().enumerate() {
        let mut message = |m: &Message, send: bool, nonblocking: bool, out: &mut Vec<Low>| -> Result<()> {
            if m.peer >= n || m.peer == rank {
                let why = if m.peer == rank { "is the rank itself".to_string() } else { format!("is not a rank of this job (0 to {})", n - 1) };
                return Err(Error::input(origin, field(k), format!("peer {} {why}; name another rank", m.peer)));
            }
            let req = match (&m.req, nonblocking) {
                (Some(name), true) => {
                    if names.insert(name.clone(), next_req).is_some() {
                        return Err(Error::input(origin, field(k), format!("request \"{name}\" is used twice; give each isend/irecv its own req")));
                    }
                    next_req += 1;
                    Some(next_req - 1)
                }
                (None, true) => {
                    next_req += 1;
                    Some(next_req - 1)
                }
                (_, false) => None,
            };
            let (peer, size, tag, op) = (m.peer, m.size.0, m.tag as u64, k as u32);
            out.push(if send { Low::Send { peer, size, tag, req, op } } else { Low::Recv { peer, tag, req, op } });
            Ok(())
        };
        match op {
            Op::Compute(t) => out.push(Low::Compute { secs: t.secs(), op: k as u32 }),
            Op::Send(m) => message(m, true, false, &mut out)?,
            Op::Isend(m) => message(m, true, true, &mut out)?,
            Op::Recv(m) => message(m, false, false, &mut out)?,
            Op::Irecv(m) => message(m, false, true, &mut out)?,
            Op::Wait(name) => {
                let r = names.remove(name.as_str()).ok_or_else(|| {
                    Error::input(origin, field(k), format!("waits for \"{name}\", which no earlier isend/irecv of rank {rank} names (or it was waited for)"))
                })?;
                out.push(Low::Wait(r));
            }
            Op::Waitall => {
                names.clear();
                out.push(Low::WaitAll);
            }
            Op::NcclGroup(list) => {
                for (q, item) in list.iter().enumerate() {
                    let (NcclP2p::Send(m) | NcclP2p::Recv(m)) = item;
                    if m.peer >= n || m.peer == rank {
                        let why = if m.peer == rank { "is the rank itself".to_string() } else { format!("is not a rank of this job (0 to {})", n - 1) };
                        return Err(Error::input(origin, format!("{}.nccl_group[{q}]", field(k)), format!("peer {} {why}; name another rank", m.peer)));
                    }
                }
                out.push(Low::NcclGroup { op: k as u32 });
            }
            op if op.is_nccl() => {
                let (kind, c) = op.nccl_collective().expect("NCCL operations other than nccl_group are collectives");
                let all: Vec<u32> = (0..n).collect();
                let group = if c.group.is_empty() { all } else { c.group.clone() };
                if let Some(&bad) = group.iter().find(|&&r| r >= n) {
                    return Err(Error::input(origin, field(k), format!("group names rank {bad}, past the job's {n} ranks")));
                }
                let mut sorted = group.clone();
                sorted.sort_unstable();
                sorted.dedup();
                if sorted.len() != group.len() {
                    return Err(Error::input(origin, field(k), format!("{} names a rank of its group twice; list each rank once", kind.name())));
                }
                if !group.contains(&rank) {
                    return Err(Error::input(
                        origin,
                        field(k),
                        format!("{} over a group without rank {rank}; a rank joins only its groups' collectives", kind.name()),
                    ));
                }
                // Fields NCCL's call has not are mistakes, not settings to drop silently: only
                // ncclBroadcast takes a root, and NCCL runs all-to-all peer to peer whatever
                // NCCL_ALGO says (2.30.7 src/enqueue.cc: send/receive tasks pick no algorithm).
                if c.root.is_some() && kind != NcclOp::Broadcast {
                    return Err(Error::input(origin, field(k), format!("{} has no root (only nccl_broadcast does); drop root", kind.name())));
                }
                if c.algo.is_some() && kind == NcclOp::AllToAll {
                    return Err(Error::input(
                        origin,
                        field(k),
                        "nccl_alltoall runs peer to peer, which NCCL_ALGO does not govern (NCCL picks no algorithm for it); drop algo",
                    ));
                }
                let root = c.root.unwrap_or(0);
                if root as usize >= group.len() {
                    return Err(Error::input(
                        origin,
                        field(k),
                        format!("root {root} is not a rank of the communicator; give 0 to {} (its place in the group)", group.len() - 1),
                    ));
                }
                let seq = nccl_calls.entry(group.clone()).or_insert(0);
                out.push(Low::NcclCall { group, seq: *seq, op: k as u32 });
                *seq += 1;
            }
            Op::Barrier | Op::Allreduce(_) | Op::Alltoall(_) | Op::Allgather(_) | Op::Bcast(_) => {
                let (kind, c) = match op {
                    Op::Allreduce(c) => (Kind::Allreduce, Some(c)),
                    Op::Alltoall(c) => (Kind::Alltoall, Some(c)),
                    Op::Allgather(c) => (Kind::Allgather, Some(c)),
                    Op::Bcast(c) => (Kind::Bcast, Some(c)),
                    _ => (Kind::Barrier, None),
                };
                let all: Vec<u32> = (0..n).collect();
                let group: &[u32] = match c {
                    Some(Collective { group, .. }) if !group.is_empty() => group,
                    _ => &all,
                };
                let Some(me) = group.iter().position(|&r| r == rank) else {
                    return Err(Error::input(
                        origin,
                        field(k),
                        format!("{} over a group without rank {rank}; a rank joins only its groups' collectives", kind.name()),
                    ));
                };
                if let Some(&bad) = group.iter().find(|&&r| r >= n) {
                    return Err(Error::input(origin, field(k), format!("group names rank {bad}, past the job's {n} ranks")));
                }
                let size = c.map(|c| c.size.0).unwrap_or(8);
                let allowed = kind.algorithms(size);
                let algorithm = match c.and_then(|c| c.algorithm) {
                    None => allowed[0],
                    Some(a) if allowed.contains(&a) => a,
                    Some(a) => {
                        let names: Vec<&str> = allowed.iter().map(|a| a.name()).collect();
                        return Err(Error::input(origin, field(k), format!("{} cannot use {}; use {}", kind.name(), a.name(), names.join(" or "))));
                    }
                };
                let root = c.and_then(|c| c.root).unwrap_or(0);
                let tag = COLLECTIVE_TAGS + collectives;
                collectives += 1;
                for s in steps(kind, algorithm, me as u32, group.len() as u32, size, root) {
                    for &(peer, _) in &s.recvs {
                        out.push(Low::Recv { peer: group[peer as usize], tag, req: Some(next_req), op: k as u32 });
                        next_req += 1;
                    }
                    for &(peer, bytes) in &s.sends {
                        out.push(Low::Send { peer: group[peer as usize], size: bytes, tag, req: Some(next_req), op: k as u32 });
                        next_req += 1;
                    }
                    out.push(Low::WaitAll);
                }
            }
            _ => unreachable!("every operation is lowered above"),
        }
    }
    Ok(out)
}

/// A send or receive to match: (source, destination, tag) and (its rank, its place there).
type Posted = ((u32, u32, u64), (u32, usize));

/// Sort posted sends or receives as `sort_unstable` would, in buckets of their source rank
/// (a counting sort: sends come rank by rank, receives by destination), each bucket sorted on
/// its own: small sorts instead of one over millions.
fn sort_by_source(posted: &mut Vec<Posted>, ranks: usize) {
    let mut start = vec![0usize; ranks + 1];
    for p in posted.iter() {
        start[p.0 .0 as usize + 1] += 1;
    }
    for r in 0..ranks {
        start[r + 1] += start[r];
    }
    let mut fill = start.clone();
    let mut sorted = vec![((0, 0, 0), (0, 0)); posted.len()];
    for &p in posted.iter() {
        let r = p.0 .0 as usize;
        sorted[fill[r]] = p;
        fill[r] += 1;
    }
    for r in 0..ranks {
        sorted[start[r]..start[r + 1]].sort_unstable();
    }
    *posted = sorted;
}

/// Nodes of one matched message: the control message of a rendezvous, and the data.
#[derive(Clone, Copy)]
struct Pair {
    control: Option<usize>,
    data: usize,
}

/// Lower `p`, whose rank r runs on device `devices[r]`, appending to `out` (and `origins`);
/// `nccl` lowers its NCCL calls (a program that makes some needs it).
#[allow(clippy::too_many_arguments)]
pub fn lower(
    p: &Program,
    devices: &[usize],
    mpi: &MpiParams,
    compute_scale: f64,
    job: u32,
    origin: &str,
    nccl: Option<&dyn NcclLowering>,
    out: &mut Vec<Transfer>,
    origins: &mut Vec<OpOrigin>,
) -> Result<Lowered> {
    let prefix = if job == 0 && origins.is_empty() { String::new() } else { format!("job {job}: ") };
    let n = p.ranks.len();
    let lows: Vec<Vec<Low>> = (0..n as u32).map(|r| expand(p, r, origin, &prefix)).collect::<Result<_>>()?;
    // Match sends and receives per (source, destination, tag), in program order: both sides
    // sorted by key, ties in the order they were posted, then walked side by side.
    let mut sends: Vec<Posted> = Vec::new();
    let mut recvs: Vec<Posted> = Vec::new();
    for (r, ops) in lows.iter().enumerate() {
        for (i, o) in ops.iter().enumerate() {
            match *o {
                Low::Send { peer, tag, .. } => sends.push(((r as u32, peer, tag), (r as u32, i))),
                Low::Recv { peer, tag, .. } => recvs.push(((peer, r as u32, tag), (r as u32, i))),
                _ => {}
            }
        }
    }
    sort_by_source(&mut sends, n);
    sort_by_source(&mut recvs, n);
    // Every matched message is one or two operations, every computation and eager send's
    // CPU share one: room for them at once (the records are large; growing is copying).
    out.reserve(lows.iter().map(Vec::len).sum::<usize>() + sends.len());
    origins.reserve(lows.iter().map(Vec::len).sum::<usize>() + sends.len());
    let op_of = |r: u32, i: usize| match lows[r as usize][i] {
        Low::Send { op, .. } | Low::Recv { op, .. } | Low::Compute { op, .. } | Low::NcclCall { op, .. } | Low::NcclGroup { op } => op as usize,
        _ => 0,
    };
    let unmatched = |r: u32, i: usize, peer: u32, what: &str| {
        let op = op_of(r, i);
        let call = &p.ranks[r as usize][op];
        let fix = if is_mpi_collective(call) {
            format!("every rank of a group calls its collectives in the same order: does rank {peer} skip one, or call one more?")
        } else {
            "every send needs a receive with the same source, destination and tag".to_string()
        };
        Error::input(origin, format!("{prefix}ranks[{r}][{op}]"), format!("{} {what}; {fix}", describe(call)))
    };
    // A matched pair is one message: a receive smaller than it is MPI_ERR_TRUNCATE; the two
    // sides of a collective are the same call (kind, size, root), else the program is wrong
    // (MPI leaves it undefined; contend would move the sender's bytes).
    let mismatched = |(a, i): (u32, usize), (b, j): (u32, usize), size: u64| -> Option<Error> {
        let (sop, rop) = (&p.ranks[a as usize][op_of(a, i)], &p.ranks[b as usize][op_of(b, j)]);
        let at = || format!("{prefix}ranks[{b}][{}]", op_of(b, j)); // only for an error: this runs per message
        match (sop, rop) {
            (Op::Send(_) | Op::Isend(_), Op::Recv(m) | Op::Irecv(m)) if m.size.0 < size => Some(Error::input(
                origin,
                at(),
                format!("{} is smaller than the {size} B rank {a} sends (MPI_ERR_TRUNCATE); give the receive at least {size} B", describe(rop)),
            )),
            _ if is_mpi_collective(sop) && !same_call(sop, rop) => Some(Error::input(
                origin,
                at(),
                format!(
                    "{} meets rank {a}'s {} (the same call of each); every rank of a group calls its collectives in the same order, with the same size and root",
                    describe(rop),
                    describe(sop)
                ),
            )),
            _ => None,
        }
    };
    // The matched message of every send and receive, by rank and position.
    let mut pair_of: Vec<Vec<Option<Pair>>> = lows.iter().map(|ops| vec![None; ops.len()]).collect();
    let dev = |r: u32| devices[r as usize];
    let node = |out: &mut Vec<Transfer>, origins: &mut Vec<OpOrigin>, t: Transfer, r: u32, op: usize, kind: OpKind| {
        out.push(t);
        origins.push(OpOrigin { job, rank: r, op: op as u32, kind });
        out.len() - 1
    };
    let (mut si, mut ri) = (0, 0);
    while si < sends.len() || ri < recvs.len() {
        // The next key on either side; one side without it leaves the other's first unmatched.
        let key = match (sends.get(si), recvs.get(ri)) {
            (Some(a), Some(b)) => a.0.min(b.0),
            (Some(a), None) => a.0,
            (None, Some(b)) => b.0,
            (None, None) => unreachable!(),
        };
        let s_end = si + sends[si..].iter().take_while(|e| e.0 == key).count();
        let r_end = ri + recvs[ri..].iter().take_while(|e| e.0 == key).count();
        let (s, r) = (&sends[si..s_end], &recvs[ri..r_end]);
        (si, ri) = (s_end, r_end);
        if s.len() != r.len() {
            let (who, peer, what) = if s.len() > r.len() { (s[r.len()].1, key.1, "matches no receive") } else { (r[s.len()].1, key.0, "matches no send") };
            return Err(unmatched(who.0, who.1, peer, what));
        }
        for (&(_, (a, i)), &(_, (b, j))) in s.iter().zip(r) {
            let Low::Send { size, .. } = lows[a as usize][i] else { unreachable!() };
            if let Some(e) = mismatched((a, i), (b, j), size) {
                return Err(e);
            }
            let pair = if size <= mpi.eager_limit.0 {
                let overhead = mpi.soft_delay.secs() + size as f64 * mpi.copy_per_byte + mpi.nic_delay.secs();
                let t = Transfer { src: dev(a), dst: dev(b), size, overhead, ..Default::default() };
                // A message is put down to its receive, where a rank blocks on it.
                Pair { control: None, data: node(out, origins, t, b, op_of(b, j), OpKind::Message) }
            } else {
                let c = Transfer {
                    src: dev(b),
                    dst: dev(a),
                    size: mpi.control_size.0,
                    overhead: mpi.soft_delay.secs() + mpi.nic_delay.secs(),
                    ..Default::default()
                };
                let control = node(out, origins, c, b, op_of(b, j), OpKind::Control);
                let overhead = mpi.nic_delay.secs() + mpi.rdma_delay.secs();
                let d = Transfer { src: dev(a), dst: dev(b), size, overhead, after: [control].into_iter().collect(), ..Default::default() };
                Pair { control: Some(control), data: node(out, origins, d, b, op_of(b, j), OpKind::Message) }
            };
            pair_of[a as usize][i] = Some(pair);
            pair_of[b as usize][j] = Some(pair);
        }
    }
    let calls = if lows.iter().flatten().any(|l| matches!(l, Low::NcclCall { .. } | Low::NcclGroup { .. })) {
        let nccl = nccl.ok_or_else(|| Error::input(origin, "ranks", "calls NCCL, which needs a machine to lower on; run it in a scenario (contend run)"))?;
        let ctx = NcclCtx { p, lows: &lows, devices, job, origin, prefix: &prefix, nccl };
        nccl_calls(&ctx, out, origins)?
    } else {
        HashMap::new()
    };
    // Walk every rank in program order.
    let mut lowered = Lowered { ends: Vec::with_capacity(n), compute: vec![0.0; n] };
    for (r, ops) in lows.iter().enumerate() {
        let r32 = r as u32;
        let mut cursor: Vec<usize> = Vec::new();
        let mut pending: BTreeMap<u32, usize> = BTreeMap::new();
        for (i, o) in ops.iter().enumerate() {
            match *o {
                Low::Compute { secs, op } => {
                    let secs = secs * compute_scale;
                    lowered.compute[r] += secs;
                    let t = Transfer { src: dev(r32), dst: dev(r32), after: cursor.iter().copied().collect(), compute: Some(secs), ..Default::default() };
                    cursor = vec![node(out, origins, t, r32, op as usize, OpKind::Compute)];
                }
                Low::Send { size, req, op, .. } => {
                    let pair = pair_of[r][i].expect("every send is matched above");
                    out[pair.data].after.extend_from_slice(&cursor);
                    let done = if pair.control.is_none() {
                        // The sender's CPU pays the software and copy costs, then goes on.
                        let secs = mpi.soft_delay.secs() + size as f64 * mpi.copy_per_byte;
                        let t = Transfer { src: dev(r32), dst: dev(r32), after: cursor.iter().copied().collect(), compute: Some(secs), ..Default::default() };
                        let local = node(out, origins, t, r32, op as usize, OpKind::Overhead);
                        cursor = vec![local];
                        local
                    } else {
                        pair.data
                    };
                    match req {
                        Some(q) => {
                            pending.insert(q, done);
                        }
                        None => cursor = vec![done],
                    }
                }
                Low::Recv { req, .. } => {
                    let pair = pair_of[r][i].expect("every receive is matched above");
                    if let Some(c) = pair.control {
                        out[c].after.extend_from_slice(&cursor);
                    }
                    match req {
                        Some(q) => {
                            pending.insert(q, pair.data);
                        }
                        None => {
                            cursor.push(pair.data);
                        }
                    }
                }
                Low::Wait(q) => {
                    if let Some(x) = pending.remove(&q) {
                        cursor.push(x);
                    }
                }
                Low::WaitAll => {
                    cursor.extend(pending.values());
                    pending.clear();
                }
                Low::NcclCall { .. } | Low::NcclGroup { .. } => {
                    // NCCL's stream order: the call starts after what the rank did before it,
                    // and what follows waits for the rank's part of it.
                    if let Some(ends) = calls.get(&(r32, i)) {
                        for &t in &ends.first {
                            out[t].after.extend_from_slice(&cursor);
                        }
                        if !ends.last.is_empty() {
                            cursor = ends.last.clone();
                        }
                    }
                }
            }
            cursor.sort_unstable();
            cursor.dedup();
        }
        cursor.extend(pending.values());
        lowered.ends.push(cursor);
    }
    Ok(lowered)
}

/// A rank's part of an NCCL call: the call's transfers that must wait for the rank's program
/// order, and those the rank waits for after it.
#[derive(Default)]
struct Ends {
    first: Vec<usize>,
    last: Vec<usize>,
}

struct NcclCtx<'a> {
    p: &'a Program,
    lows: &'a [Vec<Low>],
    devices: &'a [usize],
    job: u32,
    origin: &'a str,
    prefix: &'a str,
    nccl: &'a dyn NcclLowering,
}

impl NcclCtx<'_> {
    fn op(&self, r: u32, i: usize) -> usize {
        match self.lows[r as usize][i] {
            Low::NcclCall { op, .. } | Low::NcclGroup { op } => op as usize,
            _ => unreachable!("only NCCL calls are passed"),
        }
    }

    fn field(&self, r: u32, i: usize) -> String {
        format!("{}ranks[{r}][{}]", self.prefix, self.op(r, i))
    }
}

/// A collective call: its communicator (job ranks) and its number there.
type CallKey = (Vec<u32>, u32);

/// Every NCCL call of the job lowered and appended to `out`: per (rank, position among its
/// lowered operations), its `Ends`.
fn nccl_calls(ctx: &NcclCtx, out: &mut Vec<Transfer>, origins: &mut Vec<OpOrigin>) -> Result<HashMap<(u32, usize), Ends>> {
    let mut ends: HashMap<(u32, usize), Ends> = HashMap::new();
    // Collectives: the seq-th call on a communicator, from each of its ranks.
    let mut calls: BTreeMap<CallKey, Vec<(u32, usize)>> = BTreeMap::new();
    // Sends and receives of nccl_group operations, per (source, destination), in program order.
    type Posts = BTreeMap<(u32, u32), Vec<(usize, u64)>>;
    let (mut sends, mut recvs): (Posts, Posts) = (BTreeMap::new(), BTreeMap::new());
    for (r, ops) in ctx.lows.iter().enumerate() {
        let r = r as u32;
        for (i, l) in ops.iter().enumerate() {
            match l {
                Low::NcclCall { group, seq, .. } => calls.entry((group.clone(), *seq)).or_default().push((r, i)),
                Low::NcclGroup { op } => {
                    let Op::NcclGroup(list) = &ctx.p.ranks[r as usize][*op as usize] else { unreachable!() };
                    for item in list {
                        match item {
                            NcclP2p::Send(m) => sends.entry((r, m.peer)).or_default().push((i, m.size.0)),
                            NcclP2p::Recv(m) => recvs.entry((m.peer, r)).or_default().push((i, m.size.0)),
                        }
                    }
                }
                _ => {}
            }
        }
    }
    for ((group, _), members) in calls {
        let (r0, i0) = members[0];
        let first = &ctx.p.ranks[r0 as usize][ctx.op(r0, i0)];
        if let Some(&missing) = group.iter().find(|&&g| !members.iter().any(|m| m.0 == g)) {
            return Err(Error::input(
                ctx.origin,
                ctx.field(r0, i0),
                format!(
                    "{} has no counterpart on rank {missing}, which makes fewer NCCL collectives on this group; every rank of a communicator makes the same calls in the same order",
                    describe(first)
                ),
            ));
        }
        for &(r, i) in &members[1..] {
            let this = &ctx.p.ranks[r as usize][ctx.op(r, i)];
            if this != first {
                return Err(Error::input(
                    ctx.origin,
                    ctx.field(r, i),
                    format!(
                        "{} meets rank {r0}'s {} on the same communicator; every rank makes the same calls in the same order",
                        describe(this),
                        describe(first)
                    ),
                ));
            }
        }
        let (kind, c) = first.nccl_collective().expect("collectives only");
        let devs: Vec<usize> = group.iter().map(|&g| ctx.devices[g as usize]).collect();
        let root = c.root.unwrap_or(0) as usize;
        let ts = ctx.nccl.collective(kind, c, &devs, root).map_err(|e| Error::input(ctx.origin, ctx.field(r0, i0), e))?;
        let at: HashMap<usize, (u32, usize)> = members.iter().map(|&(r, i)| (ctx.devices[r as usize], (r, i))).collect();
        attach(ctx, ts, &at, &mut ends, out, origins);
    }
    for (&(a, b), sent) in &sends {
        let got = recvs.get(&(a, b)).map(Vec::as_slice).unwrap_or(&[]);
        for (k, &(i, size)) in sent.iter().enumerate() {
            let Some(&(j, want)) = got.get(k) else {
                return Err(Error::input(
                    ctx.origin,
                    ctx.field(a, i),
                    format!("nccl_group's send {k} to rank {b} meets no NCCL receive from rank {a} there; give rank {b} an nccl_group with {{recv: {{peer: {a}, size: {size}B}}}}"),
                ));
            };
            if want != size {
                return Err(Error::input(
                    ctx.origin,
                    ctx.field(b, j),
                    format!("receives {want} B from rank {a}, which sends {size} B; give both the same size"),
                ));
            }
            let ts = ctx.nccl.send(ctx.devices, a as usize, b as usize, size).map_err(|e| Error::input(ctx.origin, ctx.field(a, i), e))?;
            let at = HashMap::from([(ctx.devices[a as usize], (a, i)), (ctx.devices[b as usize], (b, j))]);
            attach(ctx, ts, &at, &mut ends, out, origins);
        }
    }
    for (&(a, b), got) in &recvs {
        let sent = sends.get(&(a, b)).map_or(0, Vec::len);
        if let Some(&(j, _)) = got.get(sent) {
            return Err(Error::input(
                ctx.origin,
                ctx.field(b, j),
                format!("nccl_group's receive from rank {a} meets no NCCL send; give rank {a} an nccl_group sending to rank {b}"),
            ));
        }
    }
    Ok(ends)
}

/// Append one call's transfers (`after` local to `ts`), and note each rank's ends: a transfer
/// waits for the program order of each of its ranks that none of its dependencies has, and a
/// rank's last transfers are those of its own that no other of its own waits for.
fn attach(
    ctx: &NcclCtx,
    ts: Vec<Transfer>,
    at: &HashMap<usize, (u32, usize)>,
    ends: &mut HashMap<(u32, usize), Ends>,
    out: &mut Vec<Transfer>,
    origins: &mut Vec<OpOrigin>,
) {
    let base = out.len();
    let touches = |t: &Transfer, d: usize| t.src == d || t.dst == d;
    let mut followed = vec![[false; 2]; ts.len()];
    for (x, t) in ts.iter().enumerate() {
        for d in [t.src, t.dst] {
            let Some(&member) = at.get(&d) else { continue };
            if !t.after.iter().any(|&a| touches(&ts[a], d)) {
                ends.entry(member).or_default().first.push(base + x);
            }
            for &a in &t.after {
                if ts[a].src == d {
                    followed[a][0] = true;
                }
                if ts[a].dst == d {
                    followed[a][1] = true;
                }
            }
        }
    }
    for (x, t) in ts.into_iter().enumerate() {
        for (e, d) in [t.src, t.dst].into_iter().enumerate() {
            if let (false, Some(&member)) = (followed[x][e], at.get(&d)) {
                ends.entry(member).or_default().last.push(base + x);
            }
        }
        let (rank, i) = at.get(&t.dst).copied().unwrap_or((0, 0));
        let op = match ctx.lows[rank as usize].get(i) {
            Some(Low::NcclCall { op, .. } | Low::NcclGroup { op }) => *op,
            _ => 0,
        };
        out.push(t.shifted(base));
        origins.push(OpOrigin { job: ctx.job, rank, op, kind: OpKind::Message });
    }
}

/// Name the operations of the DAG (lowering leaves them unnamed: millions of names cost
/// more than a report that does not show them). `rank_of(device)` is the rank on a device:
/// `j0.r3>r5.m17` is operation 17, job 0's message from rank 3 to rank 5 (`rts` its
/// rendezvous request), `j0.r3.c18` a computation of rank 3 and `j0.r3.s19` its CPU share of
/// an eager send.
pub fn name_operations(out: &mut [Transfer], origins: &[OpOrigin], rank_of: impl Fn(usize) -> u32) {
    for (i, (t, o)) in out.iter_mut().zip(origins).enumerate() {
        let job = o.job;
        t.name = match o.kind {
            OpKind::Message => format!("j{job}.r{}>r{}.m{i}", rank_of(t.src), rank_of(t.dst)),
            OpKind::Control => format!("j{job}.r{}>r{}.rts{i}", rank_of(t.dst), rank_of(t.src)),
            OpKind::Compute => format!("j{job}.r{}.c{i}", o.rank),
            OpKind::Overhead => format!("j{job}.r{}.s{i}", o.rank),
        };
    }
}

/// A deadlock's description: the first blocked operation of each rank stuck in a cycle of
/// waits (`stuck` lists the DAG operations that never started: the executor leaves them so).
pub fn deadlock(p: &[&Program], origins: &[OpOrigin], stuck: &[usize]) -> String {
    let mut first: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for &i in stuck {
        let o = origins[i];
        let e = first.entry((o.job, o.rank)).or_insert(o.op);
        *e = (*e).min(o.op);
    }
    let parts: Vec<String> = first
        .iter()
        .take(6)
        .map(|(&(job, rank), &op)| {
            let what = p.get(job as usize).and_then(|p| p.ranks.get(rank as usize)).and_then(|ops| ops.get(op as usize)).map(describe).unwrap_or_default();
            format!("job {job} rank {rank} at op {op} ({what})")
        })
        .collect();
    let more = if first.len() > 6 { format!(" and {} more ranks", first.len() - 6) } else { String::new() };
    format!("the programs deadlock: {}{more} wait for each other; reorder sends and receives or use isend/irecv", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every DAG operation points at the program operation it comes from, also after a
    /// collective (which expands into several); an eager send's CPU share is overhead.
    #[test]
    fn operations_point_at_their_program_operation() {
        let text = "ranks:\n  - [{allreduce: {size: 8B}}, {compute: 10us}, {send: {peer: 1, size: 1KiB}}]\n  - [{allreduce: {size: 8B}}, {compute: 10us}, {recv: {peer: 0, size: 1KiB}}]\n";
        let p = Program::from_text(text, "p.yaml").unwrap();
        let (mut out, mut origins) = (Vec::new(), Vec::new());
        lower(&p, &[0, 1], &MpiParams::default(), 1.0, 0, "p.yaml", None, &mut out, &mut origins).unwrap();
        let of = |kind: OpKind| -> Vec<(u32, u32)> { origins.iter().filter(|o| o.kind == kind).map(|o| (o.rank, o.op)).collect() };
        assert_eq!(of(OpKind::Compute), [(0, 1), (1, 1)]);
        assert!(of(OpKind::Overhead).contains(&(0, 2)));
        // The data message is put down to the receive: rank 1's operation 2.
        assert!(of(OpKind::Message).contains(&(1, 2)));
        assert!(of(OpKind::Message).iter().filter(|m| m.1 == 0).count() >= 2, "the allreduce's messages");
    }
}
