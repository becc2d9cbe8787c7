//! The constants of NCCL's kernels that measurements can move and `contend calibrate` fits
//! from nccl-tests output: each protocol's per-step latency (NCCL's `hwLatencies` for the
//! communicator's path type, paid once per step of a call's first loop) and its efficiency (the
//! share of the links' bandwidth its kernels reach: the transfers carry wire bytes over it).
//! Given as `--param nccl_step_simple=…` beside the model's own parameters; unset, NCCL's
//! values and an efficiency of 1 (the links' own efficiency stays the model's), but LL128's,
//! which public tables put below its wire format on every machine that runs it (below).

use super::topo::PathType;
use super::versions::Version;
use super::{Proto, PROTOS};
use crate::error::Result;
use crate::params::{At, Kind, Param, Values};
use crate::units::Time;

pub const PARAMS: &[Param] = &[
    Param::derived("nccl_step_ll", Kind::Time, "NCCL's", "per-step latency of LL (NCCL's hwLatencies for the path type)"),
    Param::derived("nccl_step_ll128", Kind::Time, "NCCL's", "per-step latency of LL128"),
    Param::derived("nccl_step_simple", Kind::Time, "NCCL's", "per-step latency of Simple"),
    Param::new("nccl_eff_ll", Kind::EFFICIENCY, "1", "share of the links' bandwidth LL's kernels reach (beyond its 8-of-16 wire format)"),
    // [EMPIRICAL] LL128's kernels move less than its 120-of-128 wire format of the links on every
    // machine whose public tables run it bandwidth-bound (docs/nccl.md, "LL128's rate"): the
    // efficiency that fits each machine's LL128 rows from 1 MiB (least squares of log busbw,
    // `bench/nccl_validation.py`) is 0.65 (8 x A100 node "thanos", two tables), 0.71 ("dkh", NCCL
    // 2.19.3) and 0.84 (2 x 8 A100 on OCI's RoCE); the default is their mean, 0.73 (2 x 8 H100 on
    // EFA gave 0.72 until round 21's slot release left its LL128 rows latency-bound, not fitted).
    // NCCL's model has none for rings (tuning.cc: 0.92) and 7/9 for a tree on one node; a tree/LL128
    // inside one node takes both (0.57 of the wire format), which no table measures.
    Param::new(
        "nccl_eff_ll128",
        Kind::EFFICIENCY,
        "0.73",
        "same for LL128 (beyond its 120-of-128 wire format) [EMPIRICAL: three machines' LL128 rows, 0.65-0.84]",
    ),
    Param::new("nccl_eff_simple", Kind::EFFICIENCY, "1", "same for Simple"),
    Param::new(
        "nccl_buffsize",
        Kind::Bytes { min: 65536 },
        "4MiB",
        "NCCL_BUFFSIZE: Simple's buffer per connection (a step is an eighth; ring collectives move four steps a chunk)",
    ),
    // [EMPIRICAL] Two public tables across two nodes over RoCE take the same time beyond NCCL's
    // model (and contend's restatement of it) at every size up to 1 MiB: 15.4 us (2 x 8 A100,
    // OCI, NCCL 2.19.3) and 16.1 us (2 x 8 H200, Spectrum-X, NCCL 2.30.4), medians of their
    // 1-4 KiB rows, which the +-15% score (1 MiB and up) does not use; their mean.
    Param::new(
        "nccl_call_net",
        Kind::Time,
        "15.8us",
        "time a call spanning nodes takes beyond NCCL's model [EMPIRICAL: two RoCE tables' 1-4 KiB rows, 15.4 and 16.1 us]; 0s: NCCL's model alone",
    ),
    // [EMPIRICAL] nccl-tests run as one process (`-g N`) has one thread issue every GPU's call of
    // an iteration in turn (nccl-tests src/common.cu `startColl`; NCCL's group launch, src/group.cc
    // `doLaunches`: per communicator cudaSetDevice, ncclLaunchPrepare's stream events, the kernel
    // launch, ncclLaunchFinish), so an iteration takes at least N times one GPU's share. Public
    // launch costs are 4-6 us (a CUDA runtime kernel launch, docs/nccl.md); the default is the mean
    // of the per-GPU floors of one-process 8-GPU tables' 8 B-4 KiB rows, which the score does not use.
    Param::new(
        "nccl_launch_host",
        Kind::Time,
        "4.9us",
        "host time one thread spends per GPU per call when one process drives several GPUs (nccl-tests -g N: an iteration takes at least N times it) [EMPIRICAL: 8-GPU one-process tables' 8 B-4 KiB rows]",
    ),
    Param::new("nccl_pxn_disable", Kind::OnOff, "0", "1: no PXN (NCCL_PXN_DISABLE): a send to another node leaves through the sender's own NIC"),
    Param::new(
        "nccl_version",
        Kind::Release(super::versions::NAMES),
        "2.30",
        "NCCL release whose cost model chooses the algorithm and protocol (tuning.cc of 2.18.5, 2.19.3, 2.20.3, 2.21.5, 2.30.7; a patch release reads as its minor)",
    ),
    // aws-ofi-nccl 1.8.1 sets it to 512 KiB on AWS (src/platform-aws.c); NCCL reads it from 2.20.3.
    Param::derived(
        "nccl_nvlstree_max_chunksize",
        Kind::Bytes { min: 4096 },
        "NCCL's",
        "NCCL_NVLSTREE_MAX_CHUNKSIZE: largest NVLS-tree chunk, from NCCL 2.20 (unset: 64 KiB from 4 nodes on, else no cap; aws-ofi-nccl 1.8.1 sets 512KiB)",
    ),
    // A net plugin's `latency` property (ncclNetProperties_t): NCCL's IB and socket transports
    // report 0 (net_ib/init.cc, net_socket.cc: "Not set"); aws-ofi-nccl reports 75 us on p4d,
    // p4de and p5 (src/platform-aws.c, since d87d61e0 of 2023-05-31; 150 us elsewhere).
    Param::new(
        "nccl_net_latency",
        Kind::Time,
        "0s",
        "latency the net plugin reports to NCCL (ncclNetProperties_t.latency; aws-ofi-nccl: 75us on p4d/p4de/p5): NCCL's model adds it to each network step, twice for Simple",
    ),
    // NCCL_P2P_LEVEL / NCCL_P2P_DISABLE=1 (LOC), as `environment` reads them: the words of
    // `topoPathTypeStr` up to SYS (graph/topo.cc; C2C, which contend does not type, left out).
    Param::derived(
        "nccl_p2p_level",
        Kind::Choice(&P2P_LEVELS),
        "NCCL's",
        "NCCL_P2P_LEVEL: the farthest path type between two GPUs of a node that NCCL's P2P transport connects (LOC: none, as NCCL_P2P_DISABLE=1); unset, NCCL's default by release and CPU",
    ),
    // NCCL_CROSS_NIC (search.cc `NCCL_PARAM(CrossNic, "CROSS_NIC", 2)`, v2.18.5-1 to v2.30.7-1).
    Param::new(
        "nccl_cross_nic",
        Kind::Choice(&["0", "1", "2"]),
        "2",
        "NCCL_CROSS_NIC: 0, a ring channel leaves a node by the NIC it entered by; 1, by any NIC from the first search; 2, the same NIC first, then any (search.cc ncclTopoCompute)",
    ),
    // NCCL_PAT_ENABLE (tuning.cc `NCCL_PARAM(PatEnable, "PAT_ENABLE", 2)`, v2.23.4-1 to v2.30.7-1).
    Param::new(
        "nccl_pat_enable",
        Kind::Choice(&["0", "1", "2"]),
        "2",
        "NCCL_PAT_ENABLE: 0, no PAT; 1, PAT in NCCL's table (one GPU per node only); 2, PAT for all-gather and reduce-scatter where every node has one GPU, from NCCL 2.23 (tuning.cc ncclPatEnable)",
    ),
    // NCCL_NVLS_ENABLE (transport/nvls.cc `NCCL_PARAM(NvlsEnable, "NVLS_ENABLE", 2)`, v2.18.5-1 to
    // v2.30.7-1): `ncclNvlsInit` leaves `nvlsSupport` 0 at 0, reads the GPU's multicast attribute
    // at 2, and sets it at any other value (1); init.cc then drops it where the NVLS graph search
    // finds no channel (`graphs[NCCL_ALGO_NVLS]->nChannels == 0`). contend takes the multicast
    // attribute as set wherever an NVSwitch joins GPUs of compute capability 9.0 and later, so 1
    // runs as 2.
    Param::new(
        "nccl_nvls_enable",
        Kind::Choice(&["0", "1", "2"]),
        "2",
        "NCCL_NVLS_ENABLE: 0, no NVLS and no NVLS-tree (transport/nvls.cc ncclNvlsInit); 1 or 2 (NCCL's default), NVLS where the GPUs meet in an NVSwitch that multicasts (compute capability 9.0 and later)",
    ),
    // NCCL_NET_GDR_LEVEL and NCCL_NET_GDR_READ (graph/paths.cc `ncclTopoCheckGdr`), as
    // `environment` reads them: the level in `nccl_p2p_level`'s words, the read as NCCL's three cases.
    Param::derived(
        "nccl_net_gdr_level",
        Kind::Choice(&P2P_LEVELS),
        "NCCL's",
        "NCCL_NET_GDR_LEVEL: the farthest path type between a GPU and its NIC over which NCCL's network moves the data straight to and from GPU memory (GPUDirect RDMA); beyond it, through host memory; unset, PXB before 2.27, PXB or P2C (NVLink-C2C to the NIC's CPU) from 2.27",
    ),
    Param::derived(
        "nccl_net_gdr_read",
        Kind::OnOff,
        "NCCL's",
        "NCCL_NET_GDR_READ: 1, sends read GPU memory whenever GDR is allowed; 0, sends always go through host memory; unset, NCCL's default (off before compute capability 8.0 where the GPU has no NVLink peer)",
    ),
    Param::derived(
        "nccl_eff_nvls",
        Kind::EFFICIENCY,
        "NCCL's",
        "share of the NVLink bandwidth NVLS's multimem operations reach (NCCL's nvlsEfficiency: 0.85 Hopper, 0.74 Blackwell)",
    ),
];

/// The words `nccl_p2p_level` takes: NCCL's names of the path types contend types.
const P2P_LEVELS: [&str; 9] = ["LOC", "NVL", "NVB", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS"];

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Constants {
    /// Seconds per step, by protocol (NCCL's index); None: NCCL's own.
    pub step: [Option<f64>; 3],
    pub efficiency: [f64; 3],
    /// NVLS's share of the NVLink bandwidth; None: NCCL's `nvlsEfficiency` for the GPU.
    pub nvls: Option<f64>,
    /// NCCL_PXN_DISABLE=1.
    pub pxn_disable: bool,
    /// NCCL_BUFFSIZE: Simple's connection buffer, bytes.
    pub buffsize: u64,
    /// Seconds a call spanning nodes takes beyond NCCL's model (`nccl_call_net`).
    pub call_net: f64,
    /// Seconds of one thread's host work per GPU per call in a one-process group launch (`nccl_launch_host`).
    pub launch_host: f64,
    /// The NCCL release whose cost model chooses (`nccl_version`).
    pub version: Version,
    /// Seconds: the net plugin's reported latency (`nccl_net_latency`).
    pub net_latency: f64,
    /// NCCL_NVLSTREE_MAX_CHUNKSIZE, bytes; None: NCCL's own rule.
    pub nvlstree_max: Option<u64>,
    /// NCCL_P2P_LEVEL (or NCCL_P2P_DISABLE=1, LOC); None: NCCL's default (`cpu::p2p_level`).
    pub p2p_level: Option<PathType>,
    /// NCCL_CROSS_NIC: 0, 1 or 2 (NCCL's default).
    pub cross_nic: u8,
    /// NCCL_PAT_ENABLE: 0, 1 or 2 (NCCL's default; `tuning::pat_on`).
    pub pat_enable: u8,
    /// NCCL_NVLS_ENABLE: 0, 1 or 2 (NCCL's default; `tuning::Comm::nvls_enable`).
    pub nvls_enable: u8,
    /// NCCL_NET_GDR_LEVEL; None: NCCL's default (`topo::gdr_level`).
    pub net_gdr_level: Option<PathType>,
    /// NCCL_NET_GDR_READ (0 or 1); None: NCCL's default by GPU and NVLink (`Gdr::of`).
    pub net_gdr_read: Option<bool>,
}

impl Default for Constants {
    fn default() -> Self {
        Constants::read(&Values::defaults(PARAMS))
    }
}

impl Constants {
    fn read(v: &Values) -> Constants {
        Constants {
            step: PROTOS.map(|p| v.time_opt(&format!("nccl_step_{}", suffix(p))).map(|ps| Time(ps).secs())),
            efficiency: PROTOS.map(|p| v.real(&format!("nccl_eff_{}", suffix(p)))),
            nvls: v.given("nccl_eff_nvls").then(|| v.real("nccl_eff_nvls")),
            pxn_disable: v.on("nccl_pxn_disable"),
            buffsize: v.bytes("nccl_buffsize"),
            call_net: v.secs("nccl_call_net"),
            launch_host: v.secs("nccl_launch_host"),
            version: Version::parse(v.choice("nccl_version")).expect("nccl_version's words are the restated releases"),
            net_latency: v.secs("nccl_net_latency"),
            nvlstree_max: v.given("nccl_nvlstree_max_chunksize").then(|| v.bytes("nccl_nvlstree_max_chunksize")),
            p2p_level: v.given("nccl_p2p_level").then(|| PathType::parse(v.choice("nccl_p2p_level")).expect("nccl_p2p_level's words are path types")),
            cross_nic: v.choice("nccl_cross_nic").parse().expect("nccl_cross_nic's words are 0, 1 and 2"),
            pat_enable: v.choice("nccl_pat_enable").parse().expect("nccl_pat_enable's words are 0, 1 and 2"),
            nvls_enable: v.choice("nccl_nvls_enable").parse().expect("nccl_nvls_enable's words are 0, 1 and 2"),
            net_gdr_level: v
                .given("nccl_net_gdr_level")
                .then(|| PathType::parse(v.choice("nccl_net_gdr_level")).expect("nccl_net_gdr_level's words are path types")),
            net_gdr_read: v.given("nccl_net_gdr_read").then(|| v.on("nccl_net_gdr_read")),
        }
    }
}

fn suffix(p: Proto) -> &'static str {
    match p {
        Proto::Ll => "ll",
        Proto::Ll128 => "ll128",
        Proto::Simple => "simple",
    }
}

/// The `nccl_*` parameters of `params` read into constants; the others returned for the model.
pub fn split(params: &[(String, String)]) -> Result<(Constants, Vec<(String, String)>)> {
    split_at(params, At::Flag)
}

/// As `split`, a mistake named where the pairs were written (a scenario's `params`).
pub fn split_at(params: &[(String, String)], at: At) -> Result<(Constants, Vec<(String, String)>)> {
    let (nccl, rest): (Vec<_>, Vec<_>) = params.iter().cloned().partition(|(k, _)| is_nccl(k));
    if let Some((key, value)) = rest.iter().find(|(k, _)| k.starts_with("NCCL_")) {
        return Err(at.error(key, variable_given_as_param(key, value)));
    }
    Ok((Constants::read(&Values::parse("NCCL", PARAMS, nccl.iter().map(|(k, v)| (k.as_str(), v.as_str())), at)?), rest))
}

/// The refusal of NCCL's variable given as a parameter (`--param NCCL_P2P_LEVEL=SYS`, round 23's
/// tester): the shell sets it, read as NCCL reads it (`environment`), or the flag or parameter
/// standing for it does.
fn variable_given_as_param(key: &str, value: &str) -> String {
    let instead = match key {
        "NCCL_ALGO" => Some(format!("--algo {value}")),
        "NCCL_PROTO" => Some(format!("--proto {value}")),
        "NCCL_BUFFSIZE" => Some(format!("--param nccl_buffsize={value}B")),
        "NCCL_PXN_DISABLE" => Some(format!("--param nccl_pxn_disable={value}")),
        "NCCL_PAT_ENABLE" => Some(format!("--param nccl_pat_enable={value}")),
        "NCCL_NVLS_ENABLE" => Some(format!("--param nccl_nvls_enable={value}")),
        "NCCL_P2P_LEVEL" => Some(format!("--param nccl_p2p_level={value}")),
        "NCCL_P2P_DISABLE" if value.trim() == "1" => Some("--param nccl_p2p_level=LOC".to_string()),
        _ => None,
    };
    let or = instead.map(|i| format!(", or give {i}")).unwrap_or_default();
    format!("is NCCL's environment variable, not a parameter: set it in the shell, where contend reads it as NCCL does ({key}={value} contend …){or}")
}

/// Whether a parameter is NCCL's (this table's) rather than a model's.
pub fn is_nccl(key: &str) -> bool {
    key.starts_with("nccl_")
}

/// The constants as parameters (those that differ from the defaults), for a command line.
pub fn to_params(c: &Constants) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in PROTOS {
        if let Some(s) = c.step[p as usize] {
            out.push((format!("nccl_step_{}", suffix(p)), format!("{:.3}us", s * 1e6)));
        }
    }
    let defaults = Constants::default();
    for p in PROTOS {
        if c.efficiency[p as usize] != defaults.efficiency[p as usize] {
            out.push((format!("nccl_eff_{}", suffix(p)), format!("{:.4}", c.efficiency[p as usize])));
        }
    }
    if c.buffsize != super::tuning::BUFF_BYTES[Proto::Simple as usize] {
        out.push(("nccl_buffsize".into(), format!("{}B", c.buffsize)));
    }
    if c.pxn_disable {
        out.push(("nccl_pxn_disable".into(), "1".into()));
    }
    if c.call_net != defaults.call_net {
        out.push(("nccl_call_net".into(), format!("{:.3}us", c.call_net * 1e6)));
    }
    if c.launch_host != defaults.launch_host {
        out.push(("nccl_launch_host".into(), format!("{:.3}us", c.launch_host * 1e6)));
    }
    if let Some(e) = c.nvls {
        out.push(("nccl_eff_nvls".into(), format!("{e:.4}")));
    }
    if c.net_latency != 0.0 {
        out.push(("nccl_net_latency".into(), format!("{:.3}us", c.net_latency * 1e6)));
    }
    if let Some(b) = c.nvlstree_max {
        out.push(("nccl_nvlstree_max_chunksize".into(), format!("{b}B")));
    }
    if let Some(l) = c.p2p_level {
        out.push(("nccl_p2p_level".into(), l.name().into()));
    }
    if c.cross_nic != defaults.cross_nic {
        out.push(("nccl_cross_nic".into(), c.cross_nic.to_string()));
    }
    if c.pat_enable != defaults.pat_enable {
        out.push(("nccl_pat_enable".into(), c.pat_enable.to_string()));
    }
    if c.nvls_enable != defaults.nvls_enable {
        out.push(("nccl_nvls_enable".into(), c.nvls_enable.to_string()));
    }
    if let Some(l) = c.net_gdr_level {
        out.push(("nccl_net_gdr_level".into(), l.name().into()));
    }
    if let Some(r) = c.net_gdr_read {
        out.push(("nccl_net_gdr_read".into(), u8::from(r).to_string()));
    }
    if c.version != defaults.version {
        out.push(("nccl_version".into(), c.version.name().into()));
    }
    out
}
