//! Rank programs' NCCL calls (`nccl_allreduce`, …, `nccl_group`) lowered as `contend
//! nccl-tests` lowers a call: a communicator over the call's GPUs (NCCL's ring search on its
//! first node, its channels), NCCL's choice of algorithm and protocol (or the call's own
//! NCCL_ALGO / NCCL_PROTO, else the run's environment's), and the point-to-point transfers of `lower`. The transfers join the
//! scenario's one DAG, so they contend with every other job's traffic on the same links.
//!
//! Unlike `contend nccl-tests`, the scenario's machine is used as it is: a GPU's copy-engine
//! setup latency (where the machine has one) is paid by NCCL's transfers as by every other
//! message of the scenario (docs/nccl.md, "Rank programs").

use super::environment::Environment;
use super::{lower, node_prefix, parse_algos, parse_protos, Algo, Coll, Comm, Proto};
use crate::error::Error;
use crate::topology::Machine;
use crate::workload::program::{NcclCollective, NcclLowering, NcclOp};
use crate::workload::Transfer;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// Communicators built so far (each is a ring search), by their GPUs in rank order.
pub struct ProgramCalls<'m> {
    m: &'m Machine,
    comms: RefCell<HashMap<Vec<usize>, Rc<Built>>>,
    /// The scenario's NCCL tuner file (`nccl_tuner`), consulted before NCCL's model on every call.
    tuner: Option<&'m super::tuner::Tuner>,
    /// The scenario's NCCL constants (its `nccl_*` parameters: the release, what `contend
    /// calibrate` fits, NCCL_BUFFSIZE, NCCL_PXN_DISABLE), as `contend nccl-tests --param` takes them.
    constants: super::constants::Constants,
    /// The run's NCCL_* variables: NCCL_ALGO / NCCL_PROTO for calls without their own, the
    /// channels of every communicator.
    env: &'m Environment,
    /// The release's NCCL_ALGO fallback lines (`Comm::nccl_algos`), each once, as `contend
    /// nccl-tests` says them.
    notes: RefCell<Vec<String>>,
}

/// A communicator, and where each of its ranks sits among the communicator's node-major ranks.
struct Built {
    comm: Comm,
    position: Vec<usize>,
}

fn coll(op: NcclOp) -> Coll {
    match op {
        NcclOp::AllReduce => Coll::AllReduce,
        NcclOp::AllGather => Coll::AllGather,
        NcclOp::ReduceScatter => Coll::ReduceScatter,
        NcclOp::AllToAll => Coll::AllToAll,
        NcclOp::Broadcast => Coll::Broadcast,
    }
}

/// The problem of an input error, without the flag it names (the program's field is named by
/// the caller).
fn problem(e: Error) -> String {
    match e {
        Error::Input { field, problem, .. } if field.is_empty() => problem,
        Error::Input { field, problem, .. } => format!("{field} {problem}"),
        e => e.to_string(),
    }
}

impl<'m> ProgramCalls<'m> {
    pub fn new(m: &'m Machine, tuner: Option<&'m super::tuner::Tuner>, constants: super::constants::Constants, env: &'m Environment) -> Self {
        ProgramCalls { m, comms: RefCell::new(HashMap::new()), tuner, constants, env, notes: RefCell::new(Vec::new()) }
    }

    /// The lines the calls lowered so far said (each once, in the order first said).
    pub fn into_notes(self) -> Vec<String> {
        self.notes.into_inner()
    }

    /// The communicator of GPUs `devices` (rank order): its ranks grouped node by node, as NCCL
    /// numbers a communicator's nodes, with the same number on every node.
    fn comm(&self, devices: &[usize]) -> Result<Rc<Built>, String> {
        if let Some(b) = self.comms.borrow().get(devices) {
            return Ok(b.clone());
        }
        let m = self.m;
        let mut nodes: Vec<(&str, Vec<usize>)> = Vec::new();
        for &d in devices {
            let key = node_prefix(&m.devices[d].name);
            match nodes.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(d),
                None => nodes.push((key, vec![d])),
            }
        }
        if let Some((k, v)) = nodes.iter().find(|(_, v)| v.len() != nodes[0].1.len()) {
            let name = |k: &str| if k.is_empty() { "the machine".to_string() } else { k.trim_end_matches('.').to_string() };
            return Err(format!(
                "has {} rank(s) on {} but {} on {}; NCCL's rings here need the same number of ranks on every node (choose the group or the placement so)",
                nodes[0].1.len(),
                name(nodes[0].0),
                v.len(),
                name(k)
            ));
        }
        let nodes_gpus: Vec<Vec<usize>> = nodes.into_iter().map(|(_, v)| v).collect();
        let mut comm = Comm::bounded(m, &nodes_gpus, self.env.channels, self.env.channel_bounds).map_err(problem)?;
        comm.set_constants(self.constants).map_err(|e| {
            // A P2P level or crossNic the environment set is named by its variable (`Environment::named`).
            let from_env = matches!(&e, Error::Input { file, .. } if ["nccl_p2p_level", "nccl_cross_nic"].contains(&file.as_str()) && self.env.params.iter().any(|(k, _)| k == file));
            if from_env {
                self.env.named(e).to_string()
            } else {
                format!("cannot run under the scenario's params.{e}")
            }
        })?;
        comm.tuner = self.tuner.cloned();
        let position = devices.iter().map(|d| comm.devices.iter().position(|x| x == d).expect("every GPU is in the communicator")).collect();
        let b = Rc::new(Built { comm, position });
        self.comms.borrow_mut().insert(devices.to_vec(), b.clone());
        Ok(b)
    }
}

impl NcclLowering for ProgramCalls<'_> {
    fn collective(&self, op: NcclOp, call: &NcclCollective, devices: &[usize], root: usize) -> Result<Vec<Transfer>, String> {
        if devices.len() < 2 || call.size.0 == 0 {
            return Ok(Vec::new());
        }
        let b = self.comm(devices)?;
        let c = coll(op);
        let n = devices.len();
        let bytes = op.call_bytes(call.size.0, n);
        let (algo, proto, channels) = if matches!(c, Coll::AllToAll) {
            // Send/receive has no tuner: the protocol of one peer's part, as the lowering runs it.
            (Algo::Ring, b.comm.p2p_proto(bytes / n as u64), None)
        } else {
            // A call's own list wins; without one, the environment's (NCCL's for the whole process).
            let algo_env = if call.algo.is_none() { self.env.algo.as_ref() } else { None };
            let proto_env = if call.proto.is_none() { self.env.proto.as_ref() } else { None };
            let named = match call.algo.as_ref().or(algo_env) {
                Some(s) => Some(parse_algos(s).map_err(problem)?),
                None => None,
            };
            // The list, None where neither gives one (`Comm::pick`: a list naming LL128 skips its gates).
            let protos = call.proto.as_ref().or(proto_env).map(|s| parse_protos(s)).transpose().map_err(problem)?;
            // The release's own fallbacks where the list leaves nothing (`Comm::nccl_algos`).
            let (algos, protos, note) = b.comm.nccl_algos(c, named, protos);
            if let Some(n) = note.filter(|n| !self.notes.borrow().contains(n)) {
                self.notes.borrow_mut().push(n);
            }
            let pick = b.comm.pick(c, bytes, &algos, protos.as_deref()).map_err(|e| e.to_string())?.ok_or_else(|| {
                let have: Vec<&str> = c.algos().iter().map(|a| a.name()).collect();
                let set: Vec<String> = [("NCCL_ALGO", algo_env), ("NCCL_PROTO", proto_env)].iter().filter_map(|(k, v)| v.map(|v| format!("{k}={v}"))).collect();
                let from = if set.is_empty() {
                    String::new()
                } else {
                    format!("; {} from the environment: unset it, or give the call its own algo and proto", set.join(" and "))
                };
                format!(
                    "leaves NCCL no algorithm and protocol for {} here under NCCL {} ({} has {}; {}){from}",
                    op.name(),
                    b.comm.constants.version.tag(),
                    op.name(),
                    have.join(", "),
                    super::NEEDS
                )
            })?;
            (pick.algo, pick.proto, pick.channels)
        };
        let call = b.comm.call_with(c, algo, proto, bytes, b.position[root], channels);
        Ok(lower::lower(&call).0)
    }

    fn send(&self, devices: &[usize], a: usize, b: usize, bytes: u64) -> Result<Vec<Transfer>, String> {
        let built = self.comm(devices)?;
        let call = built.comm.call(Coll::SendRecv, Algo::Ring, Proto::Simple, bytes, 0);
        Ok(lower::send_one(&call, built.position[a], built.position[b], bytes))
    }
}
