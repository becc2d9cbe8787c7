//! The host CPU NCCL reads (its architecture and vendor: topo.cc `ncclTopoCpuType`, the first CPU
//! of the node's topology) and what it decides with it here: the P2P level, the farthest path type
//! between two GPUs of a node that NCCL's P2P transport connects (graph/paths.cc
//! `ncclTopoCheckP2p`). A pair beyond it goes through host memory (SHM) even where CUDA would
//! allow peer access.
//!
//! Restated from NVIDIA/nccl's tags (read, not copied), `ncclTopoCheckP2p`'s default level with
//! NCCL_P2P_LEVEL and NCCL_P2P_DISABLE unset:
//! - v2.18.5 to v2.22.3 (here 2.18 to 2.22): SYS, but PXB on ARM CPUs, on Intel x86 and on Zhaoxin
//!   x86 ("Don't use P2P through ARM CPUs"; the same lines in every one of these tags);
//! - v2.23.4 to v2.30.7 (here 2.23 to 2.30): PXB ("By default don't use P2P across CPU Host Bridges and
//!   further apart"), but SYS on AMD x86 where the node's topology holds at most two GPUs ("Allow
//!   P2P between pairs of GPUs on AMD systems"; 2.30.7 counts GPU devices, `nodes[DEV]`).
//!
//! NVLink and NVB paths are below PXB, so NVLink pairs are P2P in every release.

use super::topo::PathType;
use super::versions::Version;
use crate::topology::{DeviceKind, LinkKind, Machine};

/// NCCL's CPU classes that `ncclTopoCheckP2p` tells apart (topo.h NCCL_TOPO_CPU_ARCH_* and
/// NCCL_TOPO_CPU_VENDOR_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cpu {
    Intel,
    Amd,
    Zhaoxin,
    Arm,
    Power,
}

impl Cpu {
    pub fn name(self) -> &'static str {
        match self {
            Cpu::Intel => "Intel",
            Cpu::Amd => "AMD",
            Cpu::Zhaoxin => "Zhaoxin",
            Cpu::Arm => "ARM",
            Cpu::Power => "POWER",
        }
    }
}

/// The CPU of the node of `gpus`, as its machine file says: the first root complex (in machine
/// order) whose `model` names a maker or a family (Intel, Xeon, GenuineIntel; AMD, EPYC,
/// Threadripper, Ryzen, AuthenticAMD; Zhaoxin; Grace, Neoverse, Altra, Graviton, ARM; POWER), else
/// the node's socket links, whose kinds are the makers' own names (QPI and UPI Intel's, xGMI AMD's).
/// None: the file says neither, and NCCL's rules by CPU are not applied.
pub fn of(m: &Machine, gpus: &[usize]) -> Option<Cpu> {
    let prefix = gpus.first().map_or("", |&g| super::node_prefix(&m.devices[g].name));
    let mine = |d: usize| m.devices[d].name.starts_with(prefix);
    let named = (0..m.devices.len()).filter(|&d| mine(d) && m.devices[d].kind == DeviceKind::RootComplex).find_map(|d| by_name(m.devices[d].model.as_deref()?));
    named.or_else(|| {
        m.links.iter().filter(|l| mine(l.a) && mine(l.b)).find_map(|l| match l.kind {
            LinkKind::Qpi | LinkKind::Upi => Some(Cpu::Intel),
            LinkKind::Xgmi => Some(Cpu::Amd),
            _ => None,
        })
    })
}

/// The CPU a model name gives, if any: brand and family names anywhere in it ("GenuineIntel",
/// "AuthenticAMD" of NCCL's XML), short names (AMD, ARM) as words of their own.
fn by_name(model: &str) -> Option<Cpu> {
    let m = model.to_uppercase();
    let has = |k: &[&str]| k.iter().any(|s| m.contains(s));
    let word = |k: &[&str]| m.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| k.contains(&w) || (k.contains(&"POWER") && w.starts_with("POWER")));
    if has(&["INTEL", "XEON"]) {
        Some(Cpu::Intel)
    } else if has(&["AUTHENTICAMD", "EPYC", "THREADRIPPER", "RYZEN"]) || word(&["AMD"]) {
        Some(Cpu::Amd)
    } else if has(&["ZHAOXIN"]) {
        Some(Cpu::Zhaoxin)
    } else if has(&["GRACE", "NEOVERSE", "ALTRA", "GRAVITON"]) || word(&["ARM", "ARM64", "AARCH64"]) {
        Some(Cpu::Arm)
    } else if word(&["POWER"]) {
        Some(Cpu::Power)
    } else {
        None
    }
}

/// NCCL's default P2P level under release `v` on `cpu` with `gpus` GPUs on the node; None where the
/// CPU is not known (peer access alone then decides, as before this rule was read).
pub fn p2p_level(v: Version, cpu: Option<Cpu>, gpus: usize) -> Option<PathType> {
    let cpu = cpu?;
    Some(if !v.p2p_level_pxb_by_default() {
        match cpu {
            Cpu::Intel | Cpu::Arm | Cpu::Zhaoxin => PathType::Pxb,
            Cpu::Amd | Cpu::Power => PathType::Sys,
        }
    } else if cpu == Cpu::Amd && gpus <= 2 {
        PathType::Sys
    } else {
        PathType::Pxb
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nccl::versions::Version::{V2_18, V2_21, V2_30};

    /// The CPU from its model name, else from the socket link's kind; none from neither.
    #[test]
    fn a_cpu_is_read_from_its_name_then_from_its_socket_link() {
        for (model, want) in [
            ("Intel Xeon Platinum 8480C PCIe root complex", Some(Cpu::Intel)),
            ("NUMA node 0, GenuineIntel", Some(Cpu::Intel)),
            ("AMD EPYC 7742 PCIe root complex", Some(Cpu::Amd)),
            ("NUMA node 1, AuthenticAMD", Some(Cpu::Amd)),
            ("AMD Ryzen Threadripper PRO 7965WX (host bridge 0000:c0)", Some(Cpu::Amd)),
            ("Grace", Some(Cpu::Arm)),
            ("NVLink-capable CPU (POWER8 class)", Some(Cpu::Power)),
            ("socket 0 PCIe root complex", None),
        ] {
            assert_eq!(by_name(model), want, "{model}");
        }
        let two = |kind: &str| {
            let text = format!(
                "name: x\ndevices:\n  - {{name: RC0, kind: root_complex}}\n  - {{name: RC1, kind: root_complex}}\n  - {{name: G, kind: gpu}}\nlinks:\n  - {{a: RC0, b: G, kind: pcie, gen: 4, lanes: 16}}\n  - {{a: RC0, b: RC1, kind: {kind}, bandwidth: 20GB/s}}\n"
            );
            let m = Machine::from_text(&text, "x.yaml").unwrap();
            of(&m, &m.gpus())
        };
        assert_eq!((two("upi"), two("qpi"), two("xgmi"), two("fabric")), (Some(Cpu::Intel), Some(Cpu::Intel), Some(Cpu::Amd), None));
    }

    /// `ncclTopoCheckP2p`'s default level, release by release (module doc).
    #[test]
    fn the_p2p_level_follows_the_release_and_the_cpu() {
        use PathType::{Pxb, Sys};
        for (v, cpu, gpus, want) in [
            (V2_18, Some(Cpu::Amd), 8, Some(Sys)),
            (V2_21, Some(Cpu::Amd), 8, Some(Sys)),
            (V2_21, Some(Cpu::Power), 4, Some(Sys)),
            (V2_21, Some(Cpu::Intel), 2, Some(Pxb)),
            (V2_21, Some(Cpu::Arm), 4, Some(Pxb)),
            (V2_21, Some(Cpu::Zhaoxin), 4, Some(Pxb)),
            (V2_30, Some(Cpu::Amd), 2, Some(Sys)),
            (V2_30, Some(Cpu::Amd), 3, Some(Pxb)),
            (V2_30, Some(Cpu::Intel), 2, Some(Pxb)),
            (V2_30, Some(Cpu::Power), 4, Some(Pxb)),
            (V2_30, None, 4, None),
        ] {
            assert_eq!(p2p_level(v, cpu, gpus), want, "{v:?} {cpu:?} {gpus}");
        }
    }
}
