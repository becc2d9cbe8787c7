//! NCCL calls of a rank program (`nccl_allreduce`, …, `nccl_group` of sends and receives): what
//! a program says, and the interface through which the layer that knows NCCL (`crate::nccl`,
//! above this one) turns a call into transfers. The program's lowering (`lower`) matches the
//! calls across ranks, asks for their transfers and ties them into each rank's program order.

use crate::units::Bytes;
use crate::workload::Transfer;
use schemars::JsonSchema;
use serde::Deserialize;

/// The collectives a rank program can call through NCCL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NcclOp {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Broadcast,
}

impl NcclOp {
    pub fn name(self) -> &'static str {
        match self {
            NcclOp::AllReduce => "nccl_allreduce",
            NcclOp::AllGather => "nccl_allgather",
            NcclOp::ReduceScatter => "nccl_reducescatter",
            NcclOp::AllToAll => "nccl_alltoall",
            NcclOp::Broadcast => "nccl_broadcast",
        }
    }

    /// Bytes of the whole call as nccl-tests counts them (its `size` column), from the bytes a
    /// program gives per rank: an all-gather's block and a reduce-scatter's result are one
    /// rank's share of the buffer, an all-to-all's size what a rank sends each peer.
    pub fn call_bytes(self, size: u64, ranks: usize) -> u64 {
        match self {
            NcclOp::AllReduce | NcclOp::Broadcast => size,
            NcclOp::AllGather | NcclOp::ReduceScatter | NcclOp::AllToAll => size * ranks as u64,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NcclCollective {
    /// Bytes per rank: nccl_allreduce the vector; nccl_allgather each rank's block (it gathers
    /// ranks x size); nccl_reducescatter each rank's block of the result (it reduces ranks x
    /// size); nccl_alltoall what a rank sends each peer; nccl_broadcast the message.
    pub size: Bytes,
    /// Root of an nccl_broadcast: a rank of the communicator, i.e. its place in `group`
    /// (default 0), as NCCL numbers it.
    #[serde(default)]
    pub root: Option<u32>,
    /// The communicator's ranks, in its rank order; default: every rank of the job.
    #[serde(default)]
    pub group: Vec<u32>,
    /// NCCL_ALGO for this call (ring, tree or a comma list); default: NCCL's choice.
    #[serde(default)]
    pub algo: Option<String>,
    /// NCCL_PROTO for this call (LL, LL128, Simple or a comma list); default: NCCL's choice.
    #[serde(default)]
    pub proto: Option<String>,
}

/// One send or receive of an `nccl_group` (ncclGroupStart … ncclGroupEnd): `{send: {peer: 1,
/// size: 1MiB}}` or `{recv: {peer: 0, size: 1MiB}}`. The k-th NCCL send from a to b meets the
/// k-th NCCL receive at b from a (NCCL has no tags).
#[derive(Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum NcclP2p {
    Send(NcclPeer),
    Recv(NcclPeer),
}

// The one-key mapping read as a struct: YAML's own enum form wants a tag (`!send`), and an
// operation is no longer read through serde's buffered untagged form, which took the mapping.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NcclP2pForm {
    send: Option<NcclPeer>,
    recv: Option<NcclPeer>,
}

impl<'de> Deserialize<'de> for NcclP2p {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<NcclP2p, D::Error> {
        match NcclP2pForm::deserialize(d)? {
            NcclP2pForm { send: Some(m), recv: None } => Ok(NcclP2p::Send(m)),
            NcclP2pForm { send: None, recv: Some(m) } => Ok(NcclP2p::Recv(m)),
            _ => Err(serde::de::Error::custom("an nccl_group item is {send: {peer, size}} or {recv: {peer, size}} (one key)")),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NcclPeer {
    pub peer: u32,
    pub size: Bytes,
}

/// What turns NCCL calls into transfers of the one workload DAG. Transfers' `after` indices
/// are positions in the returned list; their `src` and `dst` are machine devices. Mistakes are
/// one line saying what to change; the caller names the program's file and field.
pub trait NcclLowering {
    /// One collective over a communicator whose rank k runs on `devices[k]`; `root` is a rank.
    fn collective(&self, op: NcclOp, call: &NcclCollective, devices: &[usize], root: usize) -> Result<Vec<Transfer>, String>;
    /// `bytes` from rank `a` to rank `b` of the communicator on `devices` (one send and its receive).
    fn send(&self, devices: &[usize], a: usize, b: usize, bytes: u64) -> Result<Vec<Transfer>, String>;
}
