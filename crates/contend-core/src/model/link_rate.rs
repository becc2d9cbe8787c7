//! Link rates: the bytes per second each way a link of the machine carries, for every model
//! that runs links at a rate (maxmin, packet; sc16 scales its B by them). A link's own
//! `efficiency` wins; else its kind's (and a PCIe or NVLink generation's) below. Declared here
//! once, so that the models compared on one machine run each link at one rate and `contend
//! compare` measures the models, not two readings of the machine file.

use crate::params::{Kind, Param, Values};
use crate::topology::{Link, LinkKind};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkRates {
    /// PCIe links of Gen3 and earlier, or of no written generation.
    pub eff_pcie: f64,
    /// PCIe Gen4, Gen5 and Gen6 links (docs/models.md, "Parameters": basis and spread).
    pub eff_pcie4: f64,
    pub eff_pcie5: f64,
    pub eff_pcie6: f64,
    pub eff_nvlink: f64,
    pub eff_nvlink2: f64,
    pub eff_nvlink4: f64,
    pub eff_nvlink5: f64,
    pub eff_qpi: f64,
    pub eff_upi: f64,
    pub eff_xgmi: f64,
    pub eff_fabric: f64,
    pub eff_network: f64,
    pub eff_memory: f64,
}

const EFF: Kind = Kind::EFFICIENCY;

/// How many parameters `PARAMS` holds.
pub const LEN: usize = 14;

pub const PARAMS: [Param; LEN] = [
    // SC16's fitted B = 11.6 GiB/s over the Gen3 x16 nominal 15.754 GB/s.
    Param::new(
        "eff_pcie",
        EFF,
        "0.79",
        "fraction of a Gen1-3 PCIe link's bandwidth (or of one with no gen written) a copy sustains; given alone, every generation's; a link's own efficiency wins",
    ),
    // RTX A6000 peers in one Gen4 switch: 26.3 GB/s of 31.51 (NVIDIA/nvbandwidth issue 50).
    Param::new("eff_pcie4", EFF, "0.835", "same for PCIe Gen4 links"),
    // H100 and H800 host copies: 55.2 and 55.3 GB/s of Gen5 x16's 63.02 (docs/validation.md).
    Param::new("eff_pcie5", EFF, "0.876", "same for PCIe Gen5 links"),
    // No public Gen6 GPU copy: Gen5's [ASSUMPTION] (flit mode keeps TLP overheads of that order).
    Param::new("eff_pcie6", EFF, "0.876", "same for PCIe Gen6 links [ASSUMPTION: Gen5's; no public Gen6 measurement]"),
    // 18.4 GB/s of a 20 GB/s P100 link, one way (seed 004 bounds it at 94%).
    Param::new("eff_nvlink", EFF, "0.92", "same for NVLink of generation 1, 3 or none known; given alone, every generation's"),
    // V100 SXM2 NVLink 2 pairs: 48.34 GB/s of 2 x 25, 24.22 of 25 one way (v100x4-th2k, TH2K note).
    Param::new("eff_nvlink2", EFF, "0.967", "same for NVLink 2 (Volta) [one public 4 x V100 host: 0.967-0.969]"),
    // Hopper NVLink 4 one way: HGX H100 392.6 of 450 GB/s, HGX H800 176.1 of 200, 2 x H100 PCIe (NV12) 256.8 of 300.
    Param::new("eff_nvlink4", EFF, "0.872", "same for NVLink 4 (Hopper) [three public Hopper machines: 0.856-0.880, median]"),
    // GB200 and GB300 pairs' copy-engine reads: 768.0 and 768.6 GB/s of 18 x 50 (OCI's nvbandwidth runs,
    // docs/models.md "NVLink by generation"); the GB200's writes 775 (0.861).
    Param::new("eff_nvlink5", EFF, "0.853", "same for NVLink 5 (Blackwell) [two public GB200/GB300 nodes' pair reads: 0.853-0.854]"),
    Param::new("eff_qpi", EFF, "1", "same for QPI"),
    Param::new("eff_upi", EFF, "1", "same for UPI"),
    Param::new("eff_xgmi", EFF, "1", "same for AMD xGMI socket links"),
    Param::new("eff_fabric", EFF, "1", "same for the fabric between root complexes of one socket"),
    Param::new("eff_network", EFF, "1", "same for network links"),
    Param::new("eff_memory", EFF, "1", "same for host memory (reads and writes share it)"),
];

/// A model's parameter table: the link rates' first, then `own`. `M` is `LEN + N` (checked when
/// the table is built, at compile time).
pub const fn with_rates<const N: usize, const M: usize>(own: [Param; N]) -> [Param; M] {
    assert!(M == LEN + N, "a model's table holds the link rates and its own parameters");
    let mut out = [PARAMS[0]; M];
    let mut i = 0;
    while i < M {
        out[i] = if i < LEN { PARAMS[i] } else { own[i - LEN] };
        i += 1;
    }
    out
}

impl Default for LinkRates {
    fn default() -> Self {
        LinkRates::read(&Values::defaults(&PARAMS))
    }
}

impl LinkRates {
    /// The values of a model's table (one built by `with_rates`).
    pub fn read(v: &Values) -> LinkRates {
        let mut r = LinkRates {
            eff_pcie: v.real("eff_pcie"),
            eff_pcie4: v.real("eff_pcie4"),
            eff_pcie5: v.real("eff_pcie5"),
            eff_pcie6: v.real("eff_pcie6"),
            eff_nvlink: v.real("eff_nvlink"),
            eff_nvlink2: v.real("eff_nvlink2"),
            eff_nvlink4: v.real("eff_nvlink4"),
            eff_nvlink5: v.real("eff_nvlink5"),
            eff_qpi: v.real("eff_qpi"),
            eff_upi: v.real("eff_upi"),
            eff_xgmi: v.real("eff_xgmi"),
            eff_fabric: v.real("eff_fabric"),
            eff_network: v.real("eff_network"),
            eff_memory: v.real("eff_memory"),
        };
        // A kind's efficiency given alone sets every generation of it, as it did before the
        // generations had their own (eff_pcie: PCIe 4-6; eff_nvlink: NVLink 2, 4 and 5).
        let all = (r.eff_pcie, r.eff_nvlink);
        for (kind, x, per) in [
            ("eff_pcie", all.0, vec![("eff_pcie4", &mut r.eff_pcie4), ("eff_pcie5", &mut r.eff_pcie5), ("eff_pcie6", &mut r.eff_pcie6)]),
            ("eff_nvlink", all.1, vec![("eff_nvlink2", &mut r.eff_nvlink2), ("eff_nvlink4", &mut r.eff_nvlink4), ("eff_nvlink5", &mut r.eff_nvlink5)]),
        ] {
            for (name, field) in per {
                if v.given(kind) && !v.given(name) {
                    *field = x;
                }
            }
        }
        r
    }

    pub fn to_map(&self) -> BTreeMap<String, String> {
        let values = [
            self.eff_pcie,
            self.eff_pcie4,
            self.eff_pcie5,
            self.eff_pcie6,
            self.eff_nvlink,
            self.eff_nvlink2,
            self.eff_nvlink4,
            self.eff_nvlink5,
            self.eff_qpi,
            self.eff_upi,
            self.eff_xgmi,
            self.eff_fabric,
            self.eff_network,
            self.eff_memory,
        ];
        PARAMS.iter().zip(values).map(|(p, v)| (p.name.to_string(), format!("{v}"))).collect()
    }

    /// A link's bytes per second each way: its bandwidth times its efficiency.
    pub fn capacity(&self, l: &Link) -> f64 {
        l.bandwidth * self.link_efficiency(l)
    }

    /// A link's efficiency: its own if written, else its kind's (and a PCIe link's generation's).
    pub fn link_efficiency(&self, l: &Link) -> f64 {
        l.efficiency.unwrap_or_else(|| match (l.kind, l.gen) {
            (LinkKind::Pcie, Some(4)) => self.eff_pcie4,
            (LinkKind::Pcie, Some(5)) => self.eff_pcie5,
            (LinkKind::Pcie, Some(6)) => self.eff_pcie6,
            (LinkKind::Nvlink, Some(2)) => self.eff_nvlink2,
            (LinkKind::Nvlink, Some(4)) => self.eff_nvlink4,
            (LinkKind::Nvlink, Some(5)) => self.eff_nvlink5,
            (k, _) => self.efficiency(k),
        })
    }

    pub fn efficiency(&self, kind: LinkKind) -> f64 {
        match kind {
            LinkKind::Pcie => self.eff_pcie,
            LinkKind::Nvlink => self.eff_nvlink,
            LinkKind::Qpi => self.eff_qpi,
            LinkKind::Upi => self.eff_upi,
            LinkKind::Xgmi => self.eff_xgmi,
            LinkKind::Fabric => self.eff_fabric,
            LinkKind::Network => self.eff_network,
            LinkKind::Memory => self.eff_memory,
        }
    }
}
