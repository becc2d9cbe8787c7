//! Rank programs: what each MPI rank of a job does, in order (compute, point-to-point,
//! collectives), and their lowering to the one workload DAG of transfers and computations that
//! the executor runs (`lower`). Collectives expand into point-to-point steps by a named
//! algorithm (`collective`); seed 003's applications are generators of programs (`apps`);
//! multi-job mixes and placement are in `jobs`.

pub mod apps;
mod collective;
pub mod jobs;
mod lower;
mod nccl;
pub mod trace;

pub use collective::Algorithm;
pub use lower::{deadlock, lower, name_operations, Lowered, OpKind, OpOrigin};
pub use nccl::{NcclCollective, NcclLowering, NcclOp, NcclP2p, NcclPeer};

use crate::error::{parse_document, Error, Result};
use crate::units::{Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One operation of a rank. In a program file (`contend schema program`) an operation is a
/// one-key mapping (`{compute: 10us}`, `{send: {peer: 1, size: 1MiB}}`) or a word (`barrier`,
/// `waitall`). The `nccl_*` operations are NCCL's collectives and a group of NCCL sends and
/// receives (docs/nccl.md, "Rank programs"): every rank of the communicator calls them in the
/// same order, and a rank's later operations wait for its part of the call (NCCL's stream order).
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(try_from = "OpForm")]
#[schemars(with = "OpForm")]
pub enum Op {
    /// Busy for this long (before the job's compute scaling).
    Compute(Time),
    Send(Message),
    Isend(Message),
    Recv(Message),
    Irecv(Message),
    /// Wait for the request of this name (an isend's or irecv's `req`).
    Wait(String),
    /// Wait for every request still outstanding.
    Waitall,
    Barrier,
    Allreduce(Collective),
    Alltoall(Collective),
    Allgather(Collective),
    Bcast(Collective),
    NcclAllreduce(NcclCollective),
    NcclAllgather(NcclCollective),
    NcclReducescatter(NcclCollective),
    NcclAlltoall(NcclCollective),
    NcclBroadcast(NcclCollective),
    /// ncclGroupStart, these sends and receives, ncclGroupEnd.
    NcclGroup(Vec<NcclP2p>),
}

impl Op {
    /// The NCCL collective and its call, where it is one.
    pub fn nccl_collective(&self) -> Option<(NcclOp, &NcclCollective)> {
        match self {
            Op::NcclAllreduce(c) => Some((NcclOp::AllReduce, c)),
            Op::NcclAllgather(c) => Some((NcclOp::AllGather, c)),
            Op::NcclReducescatter(c) => Some((NcclOp::ReduceScatter, c)),
            Op::NcclAlltoall(c) => Some((NcclOp::AllToAll, c)),
            Op::NcclBroadcast(c) => Some((NcclOp::Broadcast, c)),
            _ => None,
        }
    }

    pub fn is_nccl(&self) -> bool {
        self.nccl_collective().is_some() || matches!(self, Op::NcclGroup(_))
    }
}

// Deserialised by hand, not as an untagged enum: serde's untagged form hides why no variant
// matched ("data did not match any variant"), where a mapping's own error names the field and
// the fix (an unknown key, a negative time).
#[derive(JsonSchema)]
#[serde(untagged)]
enum OpForm {
    Word(Word),
    Map(Box<OpMap>),
}

impl<'de> Deserialize<'de> for OpForm {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<OpForm, D::Error> {
        d.deserialize_any(OpFormVisitor)
    }
}

struct OpFormVisitor;

impl<'de> serde::de::Visitor<'de> for OpFormVisitor {
    type Value = OpForm;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an operation: a one-key mapping such as {compute: 10us} or {send: {peer: 1, size: 1MiB}}, or the word barrier or waitall")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> std::result::Result<OpForm, E> {
        Word::deserialize(serde::de::value::StrDeserializer::<E>::new(v)).map(OpForm::Word)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> std::result::Result<OpForm, A::Error> {
        OpMap::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(|m| OpForm::Map(Box::new(m)))
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Word {
    Waitall,
    Barrier,
}

#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OpMap {
    compute: Option<Time>,
    send: Option<Message>,
    isend: Option<Message>,
    recv: Option<Message>,
    irecv: Option<Message>,
    wait: Option<String>,
    allreduce: Option<Collective>,
    alltoall: Option<Collective>,
    allgather: Option<Collective>,
    bcast: Option<Collective>,
    nccl_allreduce: Option<NcclCollective>,
    nccl_allgather: Option<NcclCollective>,
    nccl_reducescatter: Option<NcclCollective>,
    nccl_alltoall: Option<NcclCollective>,
    nccl_broadcast: Option<NcclCollective>,
    nccl_group: Option<Vec<NcclP2p>>,
    /// `{barrier: ...}` and `{waitall: ...}`: the words written as keys, refused with the words' form
    /// (serde's list of the keys left them out). Not in the schema: they are never right.
    #[schemars(skip)]
    barrier: Option<serde::de::IgnoredAny>,
    #[schemars(skip)]
    waitall: Option<serde::de::IgnoredAny>,
}

impl TryFrom<OpForm> for Op {
    type Error = String;
    fn try_from(f: OpForm) -> std::result::Result<Op, String> {
        let m = match f {
            OpForm::Word(Word::Waitall) => return Ok(Op::Waitall),
            OpForm::Word(Word::Barrier) => return Ok(Op::Barrier),
            OpForm::Map(m) => *m,
        };
        for (word, given) in [("barrier", m.barrier.is_some()), ("waitall", m.waitall.is_some())] {
            if given {
                return Err(format!("{word} takes no arguments: write the bare word (`- {word}`), not a mapping"));
            }
        }
        let ops: Vec<Op> = [
            m.compute.map(Op::Compute),
            m.send.map(Op::Send),
            m.isend.map(Op::Isend),
            m.recv.map(Op::Recv),
            m.irecv.map(Op::Irecv),
            m.wait.map(Op::Wait),
            m.allreduce.map(Op::Allreduce),
            m.alltoall.map(Op::Alltoall),
            m.allgather.map(Op::Allgather),
            m.bcast.map(Op::Bcast),
            m.nccl_allreduce.map(Op::NcclAllreduce),
            m.nccl_allgather.map(Op::NcclAllgather),
            m.nccl_reducescatter.map(Op::NcclReducescatter),
            m.nccl_alltoall.map(Op::NcclAlltoall),
            m.nccl_broadcast.map(Op::NcclBroadcast),
            m.nccl_group.map(Op::NcclGroup),
        ]
        .into_iter()
        .flatten()
        .collect();
        match <[Op; 1]>::try_from(ops) {
            Ok([op]) => Ok(op),
            Err(_) => {
                Err("an operation is one of compute, send, isend, recv, irecv, wait, allreduce, alltoall, allgather, bcast, nccl_allreduce, nccl_allgather, nccl_reducescatter, nccl_alltoall, nccl_broadcast, nccl_group (one key), or barrier, waitall"
                    .into())
            }
        }
    }
}

/// A point-to-point message: `peer` is the destination of a send and the source of a receive.
#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub peer: u32,
    pub size: Bytes,
    #[serde(default)]
    pub tag: u32,
    /// Name of the request (isend, irecv) that `wait` refers to.
    #[serde(default)]
    pub req: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Collective {
    /// Bytes each rank contributes (allreduce: the vector; alltoall: to each peer; allgather:
    /// its block; bcast: the message).
    pub size: Bytes,
    /// ring | recursive_doubling | pairwise | binomial; default: the collective's usual one.
    #[serde(default)]
    pub algorithm: Option<Algorithm>,
    /// Root of a bcast (default 0).
    #[serde(default)]
    pub root: Option<u32>,
    /// The ranks taking part (a sub-communicator), in its rank order; default: every rank.
    #[serde(default)]
    pub group: Vec<u32>,
}

/// A program per rank of one job.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Program {
    /// `ranks[r]` is rank r's operations in program order.
    pub ranks: Vec<Vec<Op>>,
}

impl Program {
    /// Whether any rank calls NCCL.
    pub fn uses_nccl(&self) -> bool {
        self.ranks.iter().flatten().any(Op::is_nccl)
    }

    pub fn from_text(text: &str, origin: &str) -> Result<Program> {
        let p: Program = parse_document(text, origin)?;
        if p.ranks.is_empty() {
            return Err(Error::input(origin, "ranks", "is empty; give each rank a list of operations"));
        }
        Ok(p)
    }
}

/// MPI's protocol costs, as TraceR models them (its example configuration's values are the
/// defaults; sources-digest §3): eager up to `eager_limit`, rendezvous above it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MpiParams {
    /// Largest message sent eagerly (default 64000 B).
    pub eager_limit: Bytes,
    /// Software cost of every send and posted receive (default 200 ns).
    pub soft_delay: Time,
    /// Copy cost per byte of an eager send, in seconds per byte (default 1e-11: 0.01 ns/B).
    pub copy_per_byte: f64,
    /// NIC cost before a message's first byte (default 400 ns).
    pub nic_delay: Time,
    /// Extra cost of a rendezvous data transfer (default 1000 ns).
    pub rdma_delay: Time,
    /// Bytes of the control message a receiver sends when it posts a rendezvous receive (16 B).
    pub control_size: Bytes,
}

impl Default for MpiParams {
    fn default() -> MpiParams {
        MpiParams {
            eager_limit: Bytes(64_000),
            soft_delay: Time::from_secs(200e-9),
            copy_per_byte: 1e-11,
            nic_delay: Time::from_secs(400e-9),
            rdma_delay: Time::from_secs(1000e-9),
            control_size: Bytes(16),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(op: &str) -> String {
        Program::from_text(&format!("ranks:\n  - [{op}]\n"), "p.yaml").unwrap_err().to_string()
    }

    #[test]
    fn a_wrong_operation_says_which_field_and_why() {
        // Each as a user writes it; the message names the key or the value, not serde's variants.
        let e = error("{compute: -1us}");
        assert!(e.contains("ranks[0][0].compute") && e.contains("negative"), "{e}");
        let e = error("{sned: {peer: 1, size: 1MiB}}");
        assert!(e.contains("unknown field `sned`") && e.contains("did you mean `send`"), "{e}");
        let e = error("{send: {peer: 1, size: 1MiB, tga: 3}}");
        assert!(e.contains("ranks[0][0].send.tga") && e.contains("did you mean `tag`"), "{e}");
        let e = error("5");
        assert!(e.contains("a one-key mapping such as {compute: 10us}"), "{e}");
        let e = error("barier");
        assert!(e.contains("unknown variant `barier`") && e.contains("barrier"), "{e}");
        // The words written as keys: named, with the form they take (the list of keys left them out).
        let e = error("{barrier: {}}");
        assert!(e.contains("barrier takes no arguments: write the bare word (`- barrier`)"), "{e}");
        let e = error("{waitall: []}");
        assert!(e.contains("waitall takes no arguments"), "{e}");
        let e = error("{barier: {}}");
        assert!(e.contains("did you mean `barrier`"), "{e}");
        let e = error("{compute: 1e9s}");
        assert!(e.contains("ranks[0][0].compute") && !e.contains("did not match any variant"), "{e}");
        assert_eq!(Program::from_text("ranks:\n  - [barrier, {compute: 1us}, waitall]\n", "p.yaml").unwrap().ranks[0].len(), 3);
    }
}
