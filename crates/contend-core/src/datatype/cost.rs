//! The costs of sending a non-contiguous message between two GPUs, term by term. The forms are
//! ours (seed 001's own model is not public; sources-digest §2.5): every term is a named
//! parameter with a documented default (docs/models.md, "Non-contiguous messages") that
//! `contend calibrate-datatype` can fit from measurements.

use super::stats::Message;
use crate::error::Result;
use crate::params::{fraction, param_error, unknown_param, Param};
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
        KernelParams {
            launch: 5e-6,
            sync: 5e-6,
            pack_bw: 250e9,
            pack_block: 32.0,
            unpack_bw: 250e9,
            unpack_block: 32.0,
            ls_eff_nvlink: 0.8,
            ls_eff_pcie: 0.5,
            ls_block_nvlink: 32.0,
            ls_block_pcie: 64.0,
        }
    }
}

pub const PARAMS: &[Param] = &[
    Param { name: "launch", default: "5us", help: "kernel launch: host call until the kernel runs" },
    Param { name: "sync", default: "5us", help: "stream synchronisation: kernel end until the host knows" },
    Param { name: "pack_bw", default: "250GB/s", help: "pack kernel throughput for large blocks (reads + writes GPU memory)" },
    Param { name: "pack_block", default: "32B", help: "extra bytes each block costs a pack kernel (sector granularity)" },
    Param { name: "unpack_bw", default: "250GB/s", help: "unpack kernel throughput for large blocks" },
    Param { name: "unpack_block", default: "32B", help: "extra bytes each block costs an unpack kernel" },
    Param { name: "ls_eff_nvlink", default: "0.8", help: "fraction of an NVLink path's capacity remote stores reach" },
    Param { name: "ls_eff_pcie", default: "0.5", help: "fraction of a PCIe path's capacity remote stores reach" },
    Param { name: "ls_block_nvlink", default: "32B", help: "extra bytes each block costs on NVLink (header, partial write)" },
    Param { name: "ls_block_pcie", default: "64B", help: "extra bytes each block costs on PCIe (TLP header, partial write)" },
];

impl KernelParams {
    pub fn parse(pairs: &[(String, String)]) -> Result<KernelParams> {
        let mut p = KernelParams::default();
        for (k, v) in pairs {
            let v = v.trim();
            let time = || Time::parse(v).map(|t| t.secs()).map_err(|e| param_error(k, e));
            let bw = || Bandwidth::parse(v).map(|b| b.bytes_per_sec()).map_err(|e| param_error(k, e));
            let bytes = || Bytes::parse(v).map(|b| b.as_f64()).map_err(|e| param_error(k, e));
            let eff = || fraction(k, v);
            match k.as_str() {
                "launch" => p.launch = time()?,
                "sync" => p.sync = time()?,
                "pack_bw" => p.pack_bw = bw()?,
                "pack_block" => p.pack_block = bytes()?,
                "unpack_bw" => p.unpack_bw = bw()?,
                "unpack_block" => p.unpack_block = bytes()?,
                "ls_eff_nvlink" => p.ls_eff_nvlink = eff()?,
                "ls_eff_pcie" => p.ls_eff_pcie = eff()?,
                "ls_block_nvlink" => p.ls_block_nvlink = bytes()?,
                "ls_block_pcie" => p.ls_block_pcie = bytes()?,
                _ => return Err(unknown_param("the datatype costs", k, PARAMS)),
            }
        }
        Ok(p)
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
