//! Parameters as every part of contend declares and reads them: a model's `--param`s, the
//! kernel terms of datatype methods, the stream-ordered stencil's and the skeletons' knobs.
//! One declaration (name, default, help), one way to refuse a value or a name, below every
//! layer that has parameters, so that none of them borrows another's helpers.

use crate::error::{Error, Result};
use serde::Serialize;

/// One parameter as its table declares it; `contend models` and the docs print these.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Param {
    pub name: &'static str,
    pub default: &'static str,
    pub help: &'static str,
}

/// A value that cannot be taken, naming the parameter.
pub fn param_error(key: &str, problem: impl Into<String>) -> Error {
    Error::input("--param", key, problem)
}

/// A name that is not in `params`, listing the names that are.
pub fn unknown_param(owner: &str, key: &str, params: &[Param]) -> Error {
    let known: Vec<&str> = params.iter().map(|p| p.name).collect();
    param_error(key, format!("is not a parameter of {owner}; known: {}", known.join(", ")))
}

/// A parameter that is a fraction in (0, 1] (an efficiency).
pub fn fraction(key: &str, v: &str) -> Result<f64> {
    v.parse::<f64>().ok().filter(|e| *e > 0.0 && *e <= 1.0).ok_or_else(|| param_error(key, format!("\"{v}\" is not a number in (0, 1]; e.g. {key}=0.8")))
}

/// A switch: on/true/yes/1 or off/false/no/0.
pub fn on_off(key: &str, v: &str) -> Result<bool> {
    match v {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(param_error(key, format!("\"{v}\" is not on or off"))),
    }
}

/// When a FCFS or RR-N NIC takes its next message at flow level. A packet-level NIC moves on
/// once the head message's last packet is handed to the network, which credit-based flow control
/// allows once the bytes the head still has to deliver fit in the input buffers along its path
/// (BookSim's and SST/Merlin's credit-based channels; contend's `packet`): a NIC that waited
/// for delivery would idle while its head's packets sit in switch buffers. docs/models.md,
/// "NIC release".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NicRelease {
    /// Once the head's bytes still to deliver, with those of the NIC's earlier messages still in
    /// flight, fit in the buffers along its path, and not before its NIC could have sent them
    /// (its size at the path's narrowest capacity).
    Buffered,
    /// As `Buffered`, counting at each device only the head's share of its input buffer: the
    /// buffer divided by the messages crossing that input port now (release.rs).
    Shared,
    /// Once the head's last byte has arrived.
    Delivered,
}

/// Every flow-level model with NIC queues declares this one parameter (`NicRelease`).
pub const NIC_RELEASE: Param = Param {
    name: "nic_release",
    default: "shared",
    help: "when a FCFS or RR-N NIC takes its next message: buffered (once the head's bytes still to deliver fit in the \
           network.buffer_packets x network.packet input buffers of the devices along its path, as credit-based flow control \
           lets its packets go), shared (as buffered, each device's buffer divided by the messages crossing that input port now) \
           or delivered (once its last byte arrives)",
};

impl NicRelease {
    pub fn parse(key: &str, v: &str) -> Result<NicRelease> {
        match v {
            "buffered" => Ok(NicRelease::Buffered),
            "shared" => Ok(NicRelease::Shared),
            "delivered" => Ok(NicRelease::Delivered),
            _ => Err(param_error(key, format!("\"{v}\" is not buffered, shared or delivered"))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            NicRelease::Buffered => "buffered",
            NicRelease::Shared => "shared",
            NicRelease::Delivered => "delivered",
        }
    }
}

/// Whether a flow-level model routes the per-packet policies (adaptive; UGAL/PAR on dragonflies
/// of three groups or more) as their fluid limit, a message split over its packets' paths
/// (flow/fluid.rs), or one path per message. Off by default: a spread route lists every link
/// its packets may cross (546 on fat-tree-2048x1), and the max-min engine's work grows with it
/// (docs/benchmarks.md, "Issue 23, fluid routing").
pub const FLUID_ROUTING: Param = Param {
    name: "fluid_routing",
    default: "off",
    help: "route adaptive (and UGAL/PAR on dragonflies of 3+ groups) as the fluid limit of per-packet routing: each message \
           split over its packets' paths by load, as packet spreads them; nearer packet, but slower (routes list every link their packets may cross)",
};

/// Every flow-level model with network paths declares this one parameter: whether a message
/// through a NIC pays the store-and-forward of one packet at each device it crosses.
pub const STORE_FORWARD: Param = Param {
    name: "store_forward",
    default: "off",
    help: "a message through a NIC reaches its destination one packet's serialisation (network.packet) later per device it \
           crosses beyond its slowest link, as store-and-forward switches (and packet) move it; off: as through one wire",
};
