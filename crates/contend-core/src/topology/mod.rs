//! Machines: devices joined by dual-simplex links.
//!
//! `MachineSpec` is what users write (YAML or JSON; `contend schema` prints its JSON Schema);
//! `Machine` is the validated, indexed form the models work on.

pub mod cluster;
pub mod default_latency;
mod pcie_tree;
mod presets;
mod render;
mod resolve;

pub use pcie_tree::{PcieTree, Route, NOT_IN_TREE};
pub use presets::{preset_names, preset_text};
pub use render::{closes_cycle, render_tree};
pub use resolve::nvswitch_generation;

use crate::error::{parse_document, read_user_file, Error, Result};
use crate::keymap::IntMap;
use crate::units::{Bandwidth, Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    /// Short name, e.g. "cs-storm-socket".
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Where the layout and numbers come from.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    pub devices: Vec<DeviceSpec>,
    pub links: Vec<LinkSpec>,
    /// Routing and NIC settings of a network of nodes (clusters); absent for one node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSpec>,
    /// PCIe Access Control Services of every PCIe switch that does not set its own: `redirect`
    /// sends peer-to-peer traffic up to the root complex and back instead of across the switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acs: Option<Acs>,
}

/// PCIe Access Control Services' peer-to-peer request redirect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Acs {
    /// Peer traffic between two downstream ports goes up to the root complex and back.
    Redirect,
    /// Peer traffic turns inside the switch.
    Off,
}

/// How messages find their way through a network, and how NICs send them.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    #[serde(default)]
    pub routing: Routing,
    /// How a NIC packetises its queued messages: fcfs, rr, or rr-N (round-robin over the first N).
    #[serde(default)]
    pub nic_scheduling: NicScheduling,
    /// Seed of every random choice (ECMP hashes, Valiant's intermediate groups).
    #[serde(default)]
    pub seed: u64,
    /// Packet size of the packet-level model (default 4096B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet: Option<Bytes>,
    /// Buffer of every switch input port, in packets (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer_packets: Option<u32>,
    /// What the fabric is, in words (written by the cluster builder; `contend show`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub summary: Vec<String>,
}

/// What a machine is, for choosing a model where none is named (the registry's `default_on`):
/// one node, or a network of nodes (a cluster file, or a machine file with `network` settings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MachineKind {
    Node,
    Cluster,
}

/// Packet size where a machine gives none (the packet model's, and the flow level's NIC buffers).
pub const DEFAULT_PACKET: u64 = 4096;
/// Switch input buffer in packets where a machine gives none.
pub const DEFAULT_BUFFER_PACKETS: u32 = 8;

impl NetworkSpec {
    /// Bytes per packet: the machine's, else DEFAULT_PACKET.
    pub fn packet_bytes(&self) -> u64 {
        self.packet.map(|b| b.0).unwrap_or(DEFAULT_PACKET)
    }
    /// Packets per input buffer: the machine's, else DEFAULT_BUFFER_PACKETS.
    pub fn buffer(&self) -> u32 {
        self.buffer_packets.unwrap_or(DEFAULT_BUFFER_PACKETS)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    /// One deterministic shortest path per pair (fewest non-NVLink hops, then fewest hops).
    #[default]
    Shortest,
    /// Equal-cost shortest paths, one chosen per message by a seeded hash (ECMP per flow).
    Ecmp,
    /// Equal-cost shortest paths, packets spread evenly over every next hop (ECMP per packet):
    /// at flow level each message is split evenly over its shortest paths.
    Spray,
    /// Equal-cost shortest paths; each message takes one whose busiest link carries the fewest
    /// messages (flow level: chosen per message, then refined; see docs/models.md).
    Adaptive,
    /// Dragonfly minimal: local, one global link joining the two groups (seeded hash), local;
    /// elsewhere as ecmp.
    Minimal,
    /// Dragonfly Valiant: minimal to a random intermediate group, then minimal on (two global hops).
    Valiant,
    /// UGAL: minimal or Valiant per message, whichever has the smaller hops × (1 + load).
    Ugal,
    /// Progressive adaptive routing (seed 003's choice); at flow level the same choice as UGAL.
    Par,
}

/// How a NIC turns its queued messages into packets (seed 003, section III-B).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
#[schemars(with = "String")]
pub enum NicScheduling {
    /// The head message is fully packetised before the next starts.
    Fcfs,
    /// One packet from each queued message in turn.
    #[default]
    Rr,
    /// Round-robin over only the first N queued messages (N hardware queues).
    RrN(u32),
}

impl NicScheduling {
    pub fn parse(s: &str) -> std::result::Result<NicScheduling, String> {
        match s.trim().to_lowercase().as_str() {
            "fcfs" => Ok(NicScheduling::Fcfs),
            "rr" => Ok(NicScheduling::Rr),
            t => t
                .strip_prefix("rr-")
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|&n| n >= 1)
                .map(NicScheduling::RrN)
                .ok_or_else(|| format!("\"{s}\" is not fcfs, rr or rr-N (N >= 1, e.g. rr-2)")),
        }
    }

    /// Messages of one NIC that share its bandwidth at once (None: all of them).
    pub fn slots(self) -> Option<u32> {
        match self {
            NicScheduling::Fcfs => Some(1),
            NicScheduling::Rr => None,
            NicScheduling::RrN(n) => Some(n),
        }
    }
}

impl std::fmt::Display for NicScheduling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NicScheduling::Fcfs => write!(f, "fcfs"),
            NicScheduling::Rr => write!(f, "rr"),
            NicScheduling::RrN(n) => write!(f, "rr-{n}"),
        }
    }
}

impl Serialize for NicScheduling {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for NicScheduling {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        NicScheduling::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeviceSpec {
    pub name: String,
    pub kind: DeviceKind,
    /// Product, e.g. "Tesla K80 (GK210)" or "PLX PEX8780".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Fixed cost of a copy at this device: for a GPU or NIC, its DMA engine's setup per copy
    /// it drives, and for a NIC also its transport's per-message cost, paid once by every copy
    /// that leaves the node through it (`flow::router::network_entry`); for host memory, the
    /// CPU hand-off per copy staged through it. Absent: a default per kind and generation
    /// (docs/models.md, "Default latencies").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Time>,
    /// The dragonfly group or fat-tree pod of a network switch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
    /// Total bandwidth the device can move, all its ports and both directions together (a
    /// switch's crossbar, a root complex, a socket's fabric): every copy passing through it
    /// (or starting or ending at it) shares it, max-min (maxmin; other models refuse it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Bandwidth>,
    /// A PCIe switch's ACS peer-to-peer redirect (overrides the machine's `acs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acs: Option<Acs>,
    /// Host memory only: the duplex loss of every link a copy staged through this memory
    /// crosses, in [0, 1), in place of the links' own. Copies staged both ways at once run far
    /// below twice one way (the driver's staging pipeline, not the links); `contend calibrate`
    /// fits it from the staged bidirectional matrix.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staging_duplex: Option<f64>,
    /// Host memory only: the share of its bandwidth that writes into it reach, in (0, 1]: a
    /// byte a copy writes into this memory (a GPU's copy to the host, the first half of a staged
    /// copy) takes 1/write_efficiency of its capacity, a byte read takes 1. Absent: maxmin's
    /// `write_memory`. `contend calibrate` fits it from nvbandwidth's all-GPU host writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_efficiency: Option<f64>,
    /// GPU only: how many of its copies to or from host memory one direction moves at once
    /// (default 1: CUDA gives each direction one copy engine, so same-direction copies from
    /// several streams run one after another, in issue order; docs/models.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_engines: Option<u32>,
    /// NVSwitch only: whether the switch reduces and multicasts in the switch (NVLink SHARP,
    /// which NCCL's NVLS algorithms use): GPUs push their data into the switch, the switch
    /// adds it up and writes the result to every GPU. Absent: from the switch's `model`, by
    /// generation: third-generation NVSwitch (HGX H100/H200) and later have it, second and
    /// first (DGX A100, DGX-2) do not (NVIDIA NVSwitch / NVLink SHARP documentation;
    /// docs/nccl.md, "NVLS").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multicast: Option<bool>,
    /// NIC only: its network ports (default 1). A port is a network device of its own to NCCL
    /// (a dual-port 2 x 100 Gb/s NIC is two of 12.5 GB/s in NCCL's graph search, which sizes its
    /// channels by them); the NIC's network link carries all its ports together, at their total
    /// bandwidth.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ports: Option<u32>,
    /// NIC only: the line rate of each network port (a ConnectX-7 port: 400 Gb/s). A cluster
    /// wires the NIC at `ports` × this, or at the fabric's link rate where that is lower (a port
    /// runs at the rate both ends support); `contend nccl-tests --nodes N` builds its network at
    /// it. Absent: the cluster's link rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_bandwidth: Option<Bandwidth>,
    /// NIC only: its `ports` are rails of one network device, which the driver (a net plugin)
    /// schedules per message: a message of at most this many bytes goes whole over one port,
    /// the ports taken in turn (one turn per NIC, in the order messages are posted), a larger
    /// one is split evenly over all of them (aws-ofi-nccl's threshold scheduler,
    /// src/nccl_ofi_scheduler.c; OFI_NCCL_ROUND_ROBIN_THRESHOLD). NCCL then sees the NIC as one
    /// device of all its ports' rate. Absent: each port is a network device of its own to NCCL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe_threshold: Option<Bytes>,
}

impl DeviceSpec {
    /// A device with nothing but its name and kind given: every optional field absent, as a
    /// machine file that writes only those two reads.
    pub fn new(name: impl Into<String>, kind: DeviceKind) -> Self {
        DeviceSpec {
            name: name.into(),
            kind,
            model: None,
            latency: None,
            group: None,
            capacity: None,
            acs: None,
            staging_duplex: None,
            write_efficiency: None,
            copy_engines: None,
            multicast: None,
            ports: None,
            port_bandwidth: None,
            stripe_threshold: None,
        }
    }

    /// A NIC's network rate, bytes/s: its ports' line rate together, where it gives one.
    pub fn line_rate(&self) -> Option<f64> {
        self.port_bandwidth.map(|p| p.bytes_per_sec() * self.ports.unwrap_or(1) as f64)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    Gpu,
    PcieSwitch,
    /// A CPU socket's PCIe root complex.
    RootComplex,
    Nic,
    HostMemory,
    /// An NVLink switch (NVSwitch); several chips that a GPU stripes over can be one device.
    Nvswitch,
    /// A network switch or router (InfiniBand, Ethernet, Omni-Path, a dragonfly router).
    Switch,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    Pcie,
    Nvlink,
    /// Intel's socket links; peer-to-peer across them is off by default (CUDA stages).
    Qpi,
    Upi,
    /// AMD's socket link (Infinity Fabric between sockets); peer-to-peer across it is allowed.
    Xgmi,
    /// The on-chip fabric joining several root complexes (quadrants, IO-die ports) of one socket.
    Fabric,
    Network,
    Memory,
}

impl DeviceKind {
    /// The one spelling of a kind, as machine files write it.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Gpu => "gpu",
            DeviceKind::PcieSwitch => "pcie_switch",
            DeviceKind::RootComplex => "root_complex",
            DeviceKind::Nic => "nic",
            DeviceKind::HostMemory => "host_memory",
            DeviceKind::Nvswitch => "nvswitch",
            DeviceKind::Switch => "switch",
        }
    }
}

impl LinkKind {
    /// The one spelling of a kind, as machine files write it.
    pub fn name(self) -> &'static str {
        match self {
            LinkKind::Pcie => "pcie",
            LinkKind::Nvlink => "nvlink",
            LinkKind::Qpi => "qpi",
            LinkKind::Upi => "upi",
            LinkKind::Xgmi => "xgmi",
            LinkKind::Fabric => "fabric",
            LinkKind::Network => "network",
            LinkKind::Memory => "memory",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// One end; for PCIe links write the upstream (root-side) end here.
    pub a: String,
    pub b: String,
    pub kind: LinkKind,
    /// PCIe generation (1-6); with `lanes` gives the nominal bandwidth when none is written. On an
    /// NVLink, its generation (1-5), where its GPUs' model does not say it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gen: Option<u8>,
    /// PCIe lane count (1, 2, 4, 8, 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lanes: Option<u8>,
    /// Parallel links ganged together (NVLink bricks); multiplies `bandwidth`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Bandwidth of each direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bandwidth: Option<Bandwidth>,
    /// One-way latency of the hop. Absent: a default per kind and PCIe generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency: Option<Time>,
    /// Fraction of `bandwidth` a copy sustains on this link, in (0, 1]; flow-level models
    /// use their per-kind default when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub efficiency: Option<f64>,
    /// Capacity one direction of this link loses per byte moving the other way, in [0, 1);
    /// flow-level models use their per-kind default (`duplex_*`) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplex: Option<f64>,
    /// PCIe links only, both or neither, instead of `duplex`: the capacity the upstream
    /// direction (b to a, toward the root) loses per byte moving downstream, in [0, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplex_upstream: Option<f64>,
    /// The capacity the downstream direction (a to b, away from the root) loses per byte moving
    /// upstream, in [0, 1); see `duplex_upstream`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplex_downstream: Option<f64>,
    /// Read efficiency in (0, 1]: a pulled copy's data costs 1/read_efficiency of its size here;
    /// flow-level models use their per-kind default (`read_*`) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_efficiency: Option<f64>,
    /// Whether peer-to-peer DMA (GPU to GPU, GPU to NIC) may cross this link; default: yes,
    /// except over QPI/UPI, where PCIe peer traffic between sockets is unsupported or very slow
    /// (CUDA stages it through host memory); AMD platforms allow it over xGMI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p2p: Option<bool>,
    /// Socket links (qpi, upi, xgmi) and fabric links only: the bandwidth of each direction that
    /// peer copies crossing this link (GPU to GPU, GPU to NIC: the root complexes' peer-to-peer
    /// forwarding) share, besides the link's own; copies to or from host memory do not use it.
    /// Absent: no such cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_bandwidth: Option<Bandwidth>,
    /// Fabric links only (whose `a` is the socket's side), instead of `peer_bandwidth`: the peer
    /// bandwidth of the upstream direction (b to a: a root port's peer writes toward its socket)
    /// alone; the other direction has none unless `peer_downstream` gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_upstream: Option<Bandwidth>,
    /// Fabric links only: the peer bandwidth of the downstream direction (a to b); see `peer_upstream`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peer_downstream: Option<Bandwidth>,
}

impl LinkSpec {
    /// A link with nothing but its ends and kind given: every optional field absent (the
    /// defaults per kind apply), as a machine file that writes only those three reads.
    pub fn new(a: impl Into<String>, b: impl Into<String>, kind: LinkKind) -> Self {
        LinkSpec {
            a: a.into(),
            b: b.into(),
            kind,
            gen: None,
            lanes: None,
            count: None,
            bandwidth: None,
            latency: None,
            efficiency: None,
            duplex: None,
            duplex_upstream: None,
            duplex_downstream: None,
            read_efficiency: None,
            p2p: None,
            peer_bandwidth: None,
            peer_upstream: None,
            peer_downstream: None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    pub name: String,
    pub kind: DeviceKind,
    pub model: Option<String>,
    /// Seconds; see `DeviceSpec::latency`.
    pub latency: f64,
    pub group: Option<u32>,
    /// Bytes/s through the device, all ports and directions together; see `DeviceSpec::capacity`.
    pub capacity: Option<f64>,
    /// A PCIe switch that redirects peer traffic to the root complex (ACS).
    pub acs_redirect: bool,
    /// See `DeviceSpec::staging_duplex`.
    pub staging_duplex: Option<f64>,
    /// See `DeviceSpec::write_efficiency`.
    pub write_efficiency: Option<f64>,
    /// See `DeviceSpec::copy_engines` (1 for devices that are not GPUs).
    pub copy_engines: u32,
    /// An NVSwitch that reduces and multicasts in the switch; see `DeviceSpec::multicast`.
    pub multicast: bool,
    /// A NIC's network ports; see `DeviceSpec::ports` (1 for every other device).
    pub ports: u32,
    /// Bytes: the largest message a NIC sends over one of its ports; see
    /// `DeviceSpec::stripe_threshold` (None: its ports are not scheduled per message).
    pub stripe_threshold: Option<f64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub a: usize,
    pub b: usize,
    pub kind: LinkKind,
    /// Bytes per second in each direction.
    pub bandwidth: f64,
    /// Seconds, one way.
    pub latency: f64,
    /// As written; `None` lets a model apply its per-kind default.
    pub efficiency: Option<f64>,
    /// As written (duplex loss, read efficiency); `None`: the model's per-kind default.
    pub duplex: Option<f64>,
    /// A duplex loss per direction (PCIe), written in place of `duplex`.
    pub duplex_directed: Option<DirectedDuplex>,
    pub read_efficiency: Option<f64>,
    pub p2p: bool,
    pub label: String,
    /// A PCIe link's generation, where written; an NVLink's, written or from the model of a GPU
    /// at its ends (`resolve::nvlink_generation`). Models take a default efficiency (and an NVLink
    /// a duplex loss) per generation.
    pub gen: Option<u8>,
    /// Bytes/s that peer copies crossing the link share per direction, `[a -> b, b -> a]`, where
    /// written (`LinkSpec::peer_bandwidth`); None: no cap of peer traffic there.
    pub peer: [Option<f64>; 2],
}

/// A PCIe link's duplex loss per direction: what the upstream direction (b to a, toward the
/// root) loses per byte moving downstream, and what the downstream direction loses per byte
/// moving upstream. Unlike the one value, it is taken off the direction's capacity before that
/// direction's copies share the rest (docs/models.md, "Duplex loss and read access").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DirectedDuplex {
    pub upstream: f64,
    pub downstream: f64,
}

/// One traversal of a machine link; `forward` is the direction a -> b. Routers inside a node
/// (flow::router) and across the network (flow::network) both speak in hops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    pub link: usize,
    pub forward: bool,
}

impl Hop {
    /// The device the hop leaves.
    pub fn from(self, m: &Machine) -> usize {
        let l = &m.links[self.link];
        if self.forward {
            l.a
        } else {
            l.b
        }
    }

    /// The device the hop enters.
    pub fn to(self, m: &Machine) -> usize {
        let l = &m.links[self.link];
        if self.forward {
            l.b
        } else {
            l.a
        }
    }
}

#[derive(Clone, Debug)]
pub struct Machine {
    pub name: String,
    pub description: String,
    pub source: String,
    pub devices: Vec<Device>,
    pub links: Vec<Link>,
    index: IntMap<String, usize>,
    /// Where the description came from (a path or "preset NAME"), for error messages.
    pub origin: String,
    /// The description as written, for round trips to files and to Python.
    pub spec: MachineSpec,
    /// Routing and NIC settings (defaults for a single node).
    pub network: NetworkSpec,
}

/// A machine description as YAML, one flow-style line per device and link, like the presets.
pub fn to_yaml(spec: &MachineSpec) -> String {
    let line = |v: serde_json::Value| {
        let fields: Vec<String> = v
            .as_object()
            .expect("devices and links are objects")
            .iter()
            .map(|(k, v)| match v {
                serde_json::Value::String(s) if s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c)) => format!("{k}: {s}"),
                other => format!("{k}: {other}"),
            })
            .collect();
        format!("  - {{{}}}\n", fields.join(", "))
    };
    let mut s = format!("name: {}\n", serde_json::Value::String(spec.name.clone()));
    if !spec.description.is_empty() {
        s.push_str(&format!("description: {}\n", serde_json::Value::String(spec.description.clone())));
    }
    if !spec.source.is_empty() {
        s.push_str(&format!("source: {}\n", serde_json::Value::String(spec.source.clone())));
    }
    // The machine-wide ACS setting (a switch's own is on its device line).
    if let Some(acs) = spec.acs {
        s.push_str(&format!("acs: {}\n", serde_json::to_value(acs).expect("acs serialises").as_str().unwrap_or_default()));
    }
    s.push_str("devices:\n");
    for d in &spec.devices {
        s.push_str(&line(serde_json::to_value(d).expect("devices serialise")));
    }
    s.push_str("links:\n");
    for l in &spec.links {
        s.push_str(&line(serde_json::to_value(l).expect("links serialise")));
    }
    if let Some(n) = &spec.network {
        s.push_str(&format!("network: {}\n", serde_json::to_string(n).expect("network settings serialise")));
    }
    s
}

/// Whether a description is a cluster's: a top-level `fabric` key, or a top-level `nodes` key
/// and no `devices` (a cluster whose `fabric` is misspelt, which the cluster's reader then names
/// with the key it meant, rather than a machine's reader naming keys the file does not have).
fn is_cluster(text: &str) -> bool {
    if text.trim_start().starts_with('{') {
        // Skimmed, not built: the rest of the document is skipped without allocating.
        #[derive(Deserialize)]
        struct Top {
            fabric: Option<serde::de::IgnoredAny>,
            nodes: Option<serde::de::IgnoredAny>,
            devices: Option<serde::de::IgnoredAny>,
        }
        return serde_json::from_str::<Top>(text).is_ok_and(|t| t.fabric.is_some() || (t.nodes.is_some() && t.devices.is_none()));
    }
    let top = |key: &str| text.lines().any(|l| l.strip_prefix(key).is_some_and(|r| r.trim_start().starts_with(':')));
    top("fabric") || (top("nodes") && !top("devices"))
}

/// Nominal PCIe bandwidth per lane and direction after line coding, bytes/s.
pub fn pcie_lane_bandwidth(gen: u8) -> Option<f64> {
    Some(match gen {
        1 => 0.25e9,
        2 => 0.5e9,
        3 => 8e9 * 128.0 / 130.0 / 8.0,
        4 => 16e9 * 128.0 / 130.0 / 8.0,
        5 => 32e9 * 128.0 / 130.0 / 8.0,
        6 => 64e9 * 242.0 / 256.0 / 8.0,
        _ => return None,
    })
}

impl Machine {
    /// One node, or a network of nodes: a machine with a network link (the cluster builder's
    /// switch and NIC cables, or a file's `kind: network` links). A `network:` section alone, which
    /// a node file may carry for the packet model's settings, does not make a cluster.
    pub fn kind(&self) -> MachineKind {
        if self.links.iter().any(|l| l.kind == LinkKind::Network) {
            MachineKind::Cluster
        } else {
            MachineKind::Node
        }
    }

    /// A preset name or a path to a YAML/JSON file.
    pub fn load(source: &str) -> Result<Machine> {
        if let Some(text) = preset_text(source) {
            return Machine::from_text(text, &format!("preset {source}"));
        }
        if std::path::Path::new(source).exists() {
            return Machine::from_text(&read_user_file(source)?, source);
        }
        Err(Error::input(source, "", format!("is neither a preset nor a file; presets: {} (see `contend machines`)", preset_names().join(", "))))
    }

    /// A preset or file as `load` reads it, with a cluster description changed by `adjust`
    /// before it is built (a scenario's bandwidth scale, NIC policy, routing); `adjust` gets
    /// None for a single machine, which is loaded as it is.
    pub fn load_adjusted(source: &str, adjust: impl FnOnce(Option<&mut cluster::ClusterSpec>, &str) -> Result<()>) -> Result<Machine> {
        let (text, origin) = match preset_text(source) {
            Some(t) => (t.to_string(), format!("preset {source}")),
            None if std::path::Path::new(source).exists() => (read_user_file(source)?, source.to_string()),
            None => return Machine::load(source),
        };
        if is_cluster(&text) {
            let mut c: cluster::ClusterSpec = parse_document(&text, &origin)?;
            adjust(Some(&mut c), &origin)?;
            return Machine::from_spec(cluster::build(&c, &origin)?, &origin);
        }
        adjust(None, &origin)?;
        Machine::from_text(&text, &origin)
    }

    /// A machine description, or a cluster description (it has a `fabric`), which is compiled
    /// into one machine graph.
    pub fn from_text(text: &str, origin: &str) -> Result<Machine> {
        if is_cluster(text) {
            let c: cluster::ClusterSpec = parse_document(text, origin)?;
            return Machine::from_spec(cluster::build(&c, origin)?, origin);
        }
        let spec: MachineSpec = parse_document(text, origin)?;
        Machine::from_spec(spec, origin)
    }

    pub fn from_spec(spec: MachineSpec, origin: &str) -> Result<Machine> {
        let mut index = IntMap::default();
        let mut devices = Vec::with_capacity(spec.devices.len());
        for (i, d) in spec.devices.iter().enumerate() {
            if d.name.trim().is_empty() {
                return Err(Error::input(origin, format!("devices[{i}].name"), "is empty; give every device a name"));
            }
            if index.insert(d.name.clone(), i).is_some() {
                return Err(Error::input(origin, format!("devices[{i}].name"), format!("\"{}\" is used twice; device names must be unique", d.name)));
            }
            devices.push(resolve::device(d, i, spec.acs, origin)?);
        }
        let mut links = Vec::with_capacity(spec.links.len());
        let mut pairs: std::collections::HashMap<(usize, usize, u8), usize> = std::collections::HashMap::new();
        for (i, l) in spec.links.iter().enumerate() {
            let end = |name: &str, which: &str| {
                index.get(name).copied().ok_or_else(|| {
                    Error::input(
                        origin,
                        format!("links[{i}].{which}"),
                        format!("\"{name}\" is not a device of this machine; add it under devices or fix the name"),
                    )
                })
            };
            let (a, b) = (end(&l.a, "a")?, end(&l.b, "b")?);
            if a == b {
                return Err(Error::input(origin, format!("links[{i}]"), "joins a device to itself; link two different devices"));
            }
            // The link widths PCIe defines (PCI Express Base Specification: x1, x2, x4, x8, x12, x16,
            // x32); a link trained narrower than its slot reports one of them too.
            if let Some(w) = l.lanes.filter(|w| ![1, 2, 4, 8, 12, 16, 32].contains(w)) {
                return Err(Error::input(
                    origin,
                    format!("links[{i}].lanes"),
                    format!("is {w}; a PCIe link has 1, 2, 4, 8, 12, 16 or 32 lanes (x16 is a GPU's slot)"),
                ));
            }
            // One PCIe (or memory) link joins two devices; a second is a copy-and-paste slip that
            // would double the pair's bandwidth. NVLinks, socket links and cables may be parallel.
            if matches!(l.kind, LinkKind::Pcie | LinkKind::Memory) {
                if let Some(j) = pairs.insert((a.min(b), a.max(b), l.kind as u8), i) {
                    return Err(Error::input(
                        origin,
                        format!("links[{i}]"),
                        format!("joins {} and {} again (links[{j}]); give the pair one link, with `count` or the bandwidth of both", l.a, l.b),
                    ));
                }
            }
            let nominal = match (l.kind, l.gen, l.lanes) {
                (LinkKind::Pcie, Some(g), Some(w)) => pcie_lane_bandwidth(g)
                    .map(|x| x * w as f64)
                    .ok_or_else(|| Error::input(origin, format!("links[{i}].gen"), format!("PCIe generation {g} is unknown; use 1 to 6")))?,
                _ => 0.0,
            };
            let per_link = match l.bandwidth {
                Some(bw) => bw.bytes_per_sec(),
                None if nominal > 0.0 => nominal,
                None => {
                    return Err(Error::input(
                        origin,
                        format!("links[{i}].bandwidth"),
                        "is missing; write it per direction, e.g. \"16GB/s\" (PCIe links may give gen and lanes instead)",
                    ))
                }
            };
            if let Some(why) = crate::units::below_link_floor(per_link) {
                return Err(Error::input(origin, format!("links[{i}].bandwidth"), why));
            }
            let count = l.count.unwrap_or(1);
            if count == 0 {
                return Err(Error::input(origin, format!("links[{i}].count"), "is 0; a link has at least one lane group"));
            }
            resolve::link_fractions(l, i, origin)?;
            let label = match l.kind {
                LinkKind::Pcie => match (l.gen, l.lanes) {
                    (Some(g), Some(w)) => format!("PCIe Gen{g} x{w}"),
                    _ => "PCIe".into(),
                },
                LinkKind::Nvlink if count > 1 => format!("NVLink x{count}"),
                LinkKind::Nvlink => "NVLink".into(),
                LinkKind::Qpi => "QPI".into(),
                LinkKind::Upi => "UPI".into(),
                LinkKind::Xgmi => "xGMI".into(),
                LinkKind::Fabric => "socket fabric".into(),
                LinkKind::Network => "network".into(),
                LinkKind::Memory => "memory".into(),
            };
            links.push(Link {
                a,
                b,
                kind: l.kind,
                bandwidth: per_link * count as f64,
                latency: l.latency.map_or_else(|| default_latency::link(l.kind, l.gen), |t| t.secs()),
                efficiency: l.efficiency,
                duplex: l.duplex,
                duplex_directed: resolve::directed_duplex(l, i, origin)?,
                read_efficiency: l.read_efficiency,
                p2p: l.p2p.unwrap_or(!matches!(l.kind, LinkKind::Qpi | LinkKind::Upi)),
                label,
                gen: match l.kind {
                    LinkKind::Pcie => l.gen,
                    LinkKind::Nvlink => resolve::nvlink_generation(l, i, [&devices[a], &devices[b]], origin)?,
                    _ => None,
                },
                peer: resolve::peer_bandwidth(l, i, origin)?,
            });
        }
        // A device joined to nothing cannot send or receive; on a machine of more than one device
        // it is a link left out (a NIC the tree never reaches), named here rather than where a
        // transfer first fails to find a path.
        if devices.len() > 1 {
            let mut linked = vec![false; devices.len()];
            for l in &links {
                (linked[l.a], linked[l.b]) = (true, true);
            }
            // A network switch may stand idle (a fat-tree's spare core, a graph's spare router):
            // it is the fabric's, and the fabric's own checks name its fields.
            if let Some(k) = linked.iter().enumerate().position(|(k, &x)| !x && devices[k].kind != DeviceKind::Switch) {
                return Err(Error::input(
                    origin,
                    format!("devices[{k}]"),
                    format!("{} is linked to nothing; add a link to it under links, or remove it", spec.devices[k].name),
                ));
            }
        }
        Ok(Machine {
            network: spec.network.clone().unwrap_or_default(),
            name: spec.name.clone(),
            description: spec.description.clone(),
            source: spec.source.clone(),
            spec,
            devices,
            links,
            index,
            origin: origin.to_string(),
        })
    }

    pub fn device(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn gpus(&self) -> Vec<usize> {
        (0..self.devices.len()).filter(|&i| self.devices[i].kind == DeviceKind::Gpu).collect()
    }

    pub fn gpu_names(&self) -> Vec<String> {
        self.gpus().into_iter().map(|i| self.devices[i].name.clone()).collect()
    }

    /// The device names, for "did you mean" style hints.
    pub fn endpoint_hint(&self) -> String {
        let gpus = self.gpu_names();
        match gpus.len() {
            0 => "this machine has no GPUs".into(),
            n if n <= 4 => format!("GPUs are {}", gpus.join(", ")),
            n => format!("GPUs are {} .. {} ({n} in all)", gpus[0], gpus[n - 1]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_loads() {
        for name in preset_names() {
            let m = Machine::load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(m.name, name);
            assert!(!m.gpus().is_empty());
        }
    }

    #[test]
    fn bad_link_end_names_the_field() {
        let text = "name: x\ndevices:\n  - {name: RC, kind: root_complex}\nlinks:\n  - {a: RC, b: GPU9, kind: pcie, gen: 3, lanes: 16}\n";
        let e = Machine::from_text(text, "m.yaml").unwrap_err().to_string();
        assert!(e.starts_with("m.yaml: links[0].b: \"GPU9\""), "{e}");
    }

    /// A cluster is a machine with network links; a node file's `network:` section (the packet
    /// model's settings) leaves it a node, so its default model stays sc16.
    #[test]
    fn a_machine_is_a_cluster_by_its_network_links() {
        let node =
            "name: x\ndevices:\n  - {name: RC, kind: root_complex}\n  - {name: G, kind: gpu}\nlinks:\n  - {a: RC, b: G, kind: pcie, gen: 4, lanes: 16}\n";
        assert_eq!(Machine::from_text(node, "m.yaml").unwrap().kind(), MachineKind::Node);
        let with_settings = format!("{node}network: {{nic_scheduling: rr}}\n");
        assert_eq!(Machine::from_text(&with_settings, "m.yaml").unwrap().kind(), MachineKind::Node);
        assert_eq!(Machine::load("fat-tree-256x8").unwrap().kind(), MachineKind::Cluster);
        assert_eq!(Machine::load("hgx-h100").unwrap().kind(), MachineKind::Node);
    }

    #[test]
    fn slips_in_a_hand_written_machine_are_named() {
        let ok = "name: x\ndevices:\n  - {name: RC, kind: root_complex}\n  - {name: G, kind: gpu}\n  - {name: N, kind: nic}\nlinks:\n  - {a: RC, b: G, kind: pcie, gen: 4, lanes: 16}\n  - {a: RC, b: N, kind: pcie, gen: 4, lanes: 16}\n";
        assert!(Machine::from_text(ok, "m.yaml").is_ok());
        // lanes: 0 (it said the bandwidth was missing)
        let e = Machine::from_text(&ok.replacen("lanes: 16", "lanes: 0", 1), "m.yaml").unwrap_err().to_string();
        assert!(e.starts_with("m.yaml: links[0].lanes: is 0; a PCIe link has 1, 2, 4, 8, 12, 16 or 32 lanes"), "{e}");
        // a width PCIe does not define (it printed "PCIe Gen4 x17")
        let e = Machine::from_text(&ok.replacen("lanes: 16", "lanes: 17", 1), "m.yaml").unwrap_err().to_string();
        assert!(e.starts_with("m.yaml: links[0].lanes: is 17;"), "{e}");
        // a NIC left unlinked (it failed later: "staging NIC0 to GPU1 needs a host_memory device")
        let lone = ok.replace("  - {a: RC, b: N, kind: pcie, gen: 4, lanes: 16}\n", "");
        let e = Machine::from_text(&lone, "m.yaml").unwrap_err().to_string();
        assert!(e.starts_with("m.yaml: devices[2]: N is linked to nothing"), "{e}");
        // the same link twice (it was taken, at twice the pair's bandwidth)
        let twice = format!("{ok}  - {{a: G, b: RC, kind: pcie, gen: 4, lanes: 16}}\n");
        let e = Machine::from_text(&twice, "m.yaml").unwrap_err().to_string();
        assert!(e.starts_with("m.yaml: links[2]: joins G and RC again (links[0])"), "{e}");
    }

    #[test]
    fn bandwidth_without_unit_is_refused() {
        let text = "name: x\ndevices:\n  - {name: RC, kind: root_complex}\n  - {name: G, kind: gpu}\nlinks:\n  - {a: RC, b: G, kind: pcie, bandwidth: 12}\n";
        let e = Machine::from_text(text, "m.yaml").unwrap_err().to_string();
        assert!(e.contains("links[0].bandwidth") && e.contains("no unit"), "{e}");
    }

    #[test]
    fn efficiency_and_peer_flags() {
        let text = "name: x\ndevices:\n  - {name: A, kind: root_complex}\n  - {name: B, kind: root_complex}\nlinks:\n  - {a: A, b: B, kind: upi, bandwidth: 10GB/s, efficiency: 0.5}\n";
        let m = Machine::from_text(text, "m.yaml").unwrap();
        assert_eq!((m.links[0].efficiency, m.links[0].p2p), (Some(0.5), false));
        let e = Machine::from_text(&text.replace("0.5", "1.5"), "m.yaml").unwrap_err().to_string();
        assert!(e.starts_with("m.yaml: links[0].efficiency: 1.5 is not in (0, 1]"), "{e}");
    }

    #[test]
    fn yaml_round_trip_of_every_preset() {
        for name in preset_names() {
            let m = Machine::load(name).unwrap();
            let again = Machine::from_text(&to_yaml(&m.spec), "again").unwrap_or_else(|e| panic!("{name}: {e}\n{}", to_yaml(&m.spec)));
            assert_eq!(again.links, m.links, "{name}");
            assert_eq!(again.devices, m.devices, "{name}");
            assert_eq!(again.network, m.network, "{name}");
        }
    }

    #[test]
    fn pcie_nominal_bandwidth() {
        let text =
            "name: x\ndevices:\n  - {name: RC, kind: root_complex}\n  - {name: G, kind: gpu}\nlinks:\n  - {a: RC, b: G, kind: pcie, gen: 3, lanes: 16}\n";
        let m = Machine::from_text(text, "m.yaml").unwrap();
        assert!((m.links[0].bandwidth - 15.753846e9).abs() < 1e4);
    }

    /// An NVLink's generation: written, else its GPUs' (NVIDIA's data sheets: V100 NVLink 2, A100
    /// NVLink 3, H100 NVLink 4), else none; a generation NVLink never had is refused in one line.
    #[test]
    fn nvlink_generation_from_its_gpus_or_as_written() {
        let text = "name: x\ndevices:\n  - {name: S, kind: nvswitch}\n  - {name: V, kind: gpu, model: Tesla V100-SXM2}\n  - {name: H, kind: gpu, model: NVIDIA H100 80GB HBM3}\n  - {name: G, kind: gpu}\nlinks:\n  - {a: V, b: S, kind: nvlink, bandwidth: 25GB/s}\n  - {a: S, b: H, kind: nvlink, bandwidth: 25GB/s}\n  - {a: G, b: S, kind: nvlink, bandwidth: 25GB/s}\n  - {a: G, b: S, kind: nvlink, bandwidth: 25GB/s, gen: 3}\n";
        let m = Machine::from_text(text, "m.yaml").unwrap();
        assert_eq!(m.links.iter().map(|l| l.gen).collect::<Vec<_>>(), [Some(2), Some(4), None, Some(3)]);
        let e = Machine::from_text(&text.replace("gen: 3", "gen: 7"), "m.yaml").unwrap_err().to_string();
        assert!(e.starts_with("m.yaml: links[3].gen: NVLink generation 7 is unknown; use 1 to 5") && !e.contains('\n'), "{e}");
        // Data-centre Blackwell is NVLink 5 (it took the NVLink-wide defaults); GeForce Blackwell has none.
        let b = text.replace("Tesla V100-SXM2", "B200-SXM-180GB").replace("NVIDIA H100 80GB HBM3", "NVIDIA GeForce RTX 5090");
        let m = Machine::from_text(&b, "m.yaml").unwrap();
        assert_eq!(m.links.iter().map(|l| l.gen).collect::<Vec<_>>(), [Some(5), None, None, Some(3)]);
    }
}
