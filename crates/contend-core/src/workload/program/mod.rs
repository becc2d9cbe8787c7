//! Rank programs: what each MPI rank of a job does, in order (compute, point-to-point,
//! collectives), and their lowering to the one workload DAG of transfers and computations that
//! the executor runs (`lower`). Collectives expand into point-to-point steps by a named
//! algorithm (`collective`); seed 003's applications are generators of programs (`apps`);
//! multi-job mixes and placement are in `jobs`.

pub mod apps;
mod collective;
pub mod jobs;
mod lower;
pub mod trace;

pub use collective::Algorithm;
pub use lower::{deadlock, lower, name_operations, Lowered, OpKind, OpOrigin};

use crate::error::{parse_document, Error, Result};
use crate::units::{Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One operation of a rank. In a program file (`contend schema program`) an operation is a
/// one-key mapping (`{compute: 10us}`, `{send: {peer: 1, size: 1MiB}}`) or a word (`barrier`,
/// `waitall`).
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
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum OpForm {
    Word(Word),
    Map(Box<OpMap>),
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
}

impl TryFrom<OpForm> for Op {
    type Error = String;
    fn try_from(f: OpForm) -> std::result::Result<Op, String> {
        let m = match f {
            OpForm::Word(Word::Waitall) => return Ok(Op::Waitall),
            OpForm::Word(Word::Barrier) => return Ok(Op::Barrier),
            OpForm::Map(m) => *m,
        };
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
        ]
        .into_iter()
        .flatten()
        .collect();
        match <[Op; 1]>::try_from(ops) {
            Ok([op]) => Ok(op),
            Err(_) => {
                Err("an operation is one of compute, send, isend, recv, irecv, wait, allreduce, alltoall, allgather, bcast (one key), or barrier, waitall"
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
