//! The costs of sending a non-contiguous message between two GPUs, term by term. The forms are
//! ours (seed 001's own model is not public; sources-digest §2.5): every term is a named
//! parameter with a documented default (docs/models.md, "Non-contiguous messages") that
//! `contend calibrate-datatype` can fit from measurements.

use super::stats::Message;
use crate::error::Result;
use crate::params::{Kind, Param, Values};
use crate::units::{Bandwidth, Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a message of a datatype is moved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The lowest predicted time among the methods the pair allows, per message.
    Adaptive,
    /// Pack kernel, one DMA copy (CUDA's mechanism), unpack kernel (MVAPICH2-GDR style).
    Pack,
    /// One kernel loads the source layout and stores into the peer's memory (needs peer access).
    ZeroCopy,
    /// Pack, copy through host memory, unpack (pairs without peer access).
    Staged,
}

pub const METHODS: &[Method] = &[Method::Pack, Method::ZeroCopy, Method::Staged];

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Adaptive => "adaptive",
            Method::Pack => "pack",
            Method::ZeroCopy => "zero-copy",
            Method::Staged => "staged",
        }
    }

    pub fn parse(s: &str) -> std::result::Result<Method, String> {
        match s {
            "adaptive" => Ok(Method::Adaptive),
            "pack" => Ok(Method::Pack),
            "zero-copy" | "zero_copy" | "zerocopy" => Ok(Method::ZeroCopy),
            "staged" => Ok(Method::Staged),
            _ => Err(format!("\"{s}\" is not a method; choose adaptive, pack, zero-copy or staged")),
        }
    }
}

/// The kernel and load-store terms (all methods' costs besides the machine's links).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KernelParams {
    /// Seconds from a host's launch call until a kernel runs.
    pub launch: f64,
    /// Seconds for the host to learn that a stream's work is done (cudaStreamSynchronize).
    pub sync: f64,
    /// Bytes/s a pack kernel moves for large blocks (it reads and writes GPU memory).
    pub pack_bw: f64,
    /// Bytes each block costs beyond its own (a partly used 32-byte sector, index arithmetic).
    pub pack_block: f64,
    pub unpack_bw: f64,
    pub unpack_block: f64,
    /// Fraction of the path's capacity SM-issued remote stores reach, over NVLink and PCIe.
    pub ls_eff_nvlink: f64,
    pub ls_eff_pcie: f64,
    /// Bytes each block costs on the link beyond its own (packet header, partial write).
    pub ls_block_nvlink: f64,
    pub ls_block_pcie: f64,
}

impl Default for KernelParams {
    fn default() -> Self {
        KernelParams::read(&Values::defaults(PARAMS))
    }
}

pub const PARAMS: &[Param] = &[
    Param::new("launch", Kind::Time, "5us", "kernel launch: host call until the kernel runs"),
    Param::new("sync", Kind::Time, "5us", "stream synchronisation: kernel end until the host knows"),
    Param::new("pack_bw", Kind::Bandwidth, "250GB/s", "pack kernel throughput for large blocks (reads + writes GPU memory)"),
    Param::new("pack_block", Kind::Bytes { min: 0 }, "32B", "extra bytes each block costs a pack kernel (sector granularity)"),
    Param::new("unpack_bw", Kind::Bandwidth, "250GB/s", "unpack kernel throughput for large blocks"),
    Param::new("unpack_block", Kind::Bytes { min: 0 }, "32B", "extra bytes each block costs an unpack kernel"),
    Param::new("ls_eff_nvlink", Kind::EFFICIENCY, "0.8", "fraction of an NVLink path's capacity remote stores reach"),
    Param::new("ls_eff_pcie", Kind::EFFICIENCY, "0.5", "fraction of a PCIe path's capacity remote stores reach"),
    Param::new("ls_block_nvlink", Kind::Bytes { min: 0 }, "32B", "extra bytes each block costs on NVLink (header, partial write)"),
    Param::new("ls_block_pcie", Kind::Bytes { min: 0 }, "64B", "extra bytes each block costs on PCIe (TLP header, partial write)"),
];

impl KernelParams {
    pub fn parse(pairs: &[(String, String)]) -> Result<KernelParams> {
        Ok(KernelParams::read(&Values::flags("the datatype costs", PARAMS, pairs)?))
    }

    fn read(v: &Values) -> KernelParams {
        KernelParams {
            launch: v.secs("launch"),
            sync: v.secs("sync"),
            pack_bw: v.bytes_per_sec("pack_bw"),
            pack_block: v.bytes("pack_block") as f64,
            unpack_bw: v.bytes_per_sec("unpack_bw"),
            unpack_block: v.bytes("unpack_block") as f64,
            ls_eff_nvlink: v.real("ls_eff_nvlink"),
            ls_eff_pcie: v.real("ls_eff_pcie"),
            ls_block_nvlink: v.bytes("ls_block_nvlink") as f64,
            ls_block_pcie: v.bytes("ls_block_pcie") as f64,
        }
    }

    pub fn to_map(&self) -> BTreeMap<String, String> {
        let mut m = BTreeMap::new();
        for (k, v) in [("launch", self.launch), ("sync", self.sync)] {
            m.insert(k.into(), Time::from_secs(v).to_string());
        }
        for (k, v) in [("pack_bw", self.pack_bw), ("unpack_bw", self.unpack_bw)] {
            m.insert(k.into(), Bandwidth(four_digits(v)).to_string());
        }
        for (k, v) in [
            ("pack_block", self.pack_block),
            ("unpack_block", self.unpack_block),
            ("ls_block_nvlink", self.ls_block_nvlink),
            ("ls_block_pcie", self.ls_block_pcie),
        ] {
            m.insert(k.into(), Bytes(v.round() as u64).to_string());
        }
        m.insert("ls_eff_nvlink".into(), format!("{}", four_digits(self.ls_eff_nvlink)));
        m.insert("ls_eff_pcie".into(), format!("{}", four_digits(self.ls_eff_pcie)));
        m
    }

    /// Seconds of a pack kernel's work (launch and sync apart): bytes plus a per-block cost.
    pub fn pack_s(&self, msg: &Message) -> f64 {
        (msg.bytes as f64 + msg.blocks as f64 * self.pack_block) / self.pack_bw
    }

    pub fn unpack_s(&self, msg: &Message) -> f64 {
        (msg.bytes as f64 + msg.blocks as f64 * self.unpack_block) / self.unpack_bw
    }

    /// Bytes/s a zero-copy kernel sustains on a path of `capacity` bytes/s: remote stores at a
    /// fraction of the path with a per-block overhead, and never faster than the kernel can
    /// gather the source layout (the pack kernel's read side).
    pub fn load_store_bps(&self, msg: &Message, path: PathClass, capacity: f64) -> f64 {
        let (eff, block) = match path {
            PathClass::Nvlink => (self.ls_eff_nvlink, self.ls_block_nvlink),
            PathClass::Pcie => (self.ls_eff_pcie, self.ls_block_pcie),
        };
        let (n, b) = (msg.bytes as f64, msg.blocks as f64);
        let link = eff * capacity * n / (n + b * block);
        let gather = self.pack_bw * n / (n + b * self.pack_block);
        link.min(gather)
    }
}

/// `x` to four significant digits: fitted rates print as 300GB/s, not 299.99999784GB/s.
fn four_digits(x: f64) -> f64 {
    if !(x > 0.0 && x.is_finite()) {
        return x;
    }
    let unit = 10f64.powi(x.log10().floor() as i32 - 3);
    (x / unit).round() * unit
}

/// What a zero-copy kernel's stores cross: all NVLink (NVSwitch included), or some PCIe.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PathClass {
    Nvlink,
    Pcie,
}
