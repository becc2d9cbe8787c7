//! Latencies a machine gets where its file writes none, so that a machine written from its
//! data sheet predicts fixed costs of the right order instead of zero. Every value and its
//! public basis is in docs/models.md ("Default latencies"); a written `latency` always wins,
//! and `contend calibrate` replaces them with fitted ones.

use super::{DeviceKind, LinkKind};

const US: f64 = 1e-6;

/// Fixed cost per copy at a device. GPUs: the copy engine's setup of one cudaMemcpy, which
/// p2pBandwidthLatencyTest's one-element peer copies measure, per GPU generation (`Generation`);
/// each value is a public peer-latency matrix less the hops of its path (docs/models.md, "Default
/// latencies"). Host memory: the CPU hand-off between the two halves of a staged copy. NVSwitch:
/// what a copy engine's copy pays to pass through it (`NVSWITCH_TRAVERSAL`). Other transit
/// devices and NICs: none (their cost is in their links, and network latencies are written by
/// cluster descriptions). Root complex: its turnaround of a read of host memory
/// (`ROOT_COMPLEX_READ`), which only reads pay (`flow::completion_wait`).
pub fn device(kind: DeviceKind, model: Option<&str>) -> f64 {
    match kind {
        DeviceKind::Gpu => engine(model.map_or(Generation::Unknown, generation)),
        DeviceKind::HostMemory => 12.0 * US,
        DeviceKind::Nvswitch => NVSWITCH_TRAVERSAL,
        DeviceKind::RootComplex => ROOT_COMPLEX_READ,
        _ => 0.0,
    }
}

/// A copy engine's copy through an NVSwitch costs about 1 µs more than over a direct NVLink with
/// the same engine: 8 × A100 SXM4 through NVSwitch (LLMServe/DistServe issue 3) median 3.30 µs,
/// against the NVLink-bridged A100 PCIe pairs' 2.27, which leaves 3.30 − 2.2 (Ampere engine) −
/// 2 × 0.05 (its two NVLink hops) = 1.0 µs for the switch. It is the engine's, not the link's:
/// the sample's copies run back to back, each waiting for the previous one to complete, and a
/// completed write through the switch is a round trip across it (the write and its
/// acknowledgement), where NCCL's kernels write and signal with stores that no one waits to have
/// acknowledged (its LL step is 0.6 µs over NVSwitch and direct NVLink alike), so NCCL's lowering
/// pays none of it (`Transfer::kernel`). The router charges it once per traversal (`flow::router`).
/// It is the second-generation switch's: on Hopper a copy through the third-generation switch
/// (2.77 µs) costs only about 0.2 µs more than over a direct NVLink bridge (2 × H100 PCIe, 2.54 µs),
/// so the value belongs per switch generation; not yet split (docs/validation.md).
pub const NVSWITCH_TRAVERSAL: f64 = 1.0 * US;

/// What a root complex adds to a device's read of host memory beyond the read's hops and the DRAM
/// access: turning the request into a coherent memory read and the data into completions. A small
/// DMA read's whole round trip is about 0.5 µs on Xeon hosts (Neugebauer et al., "Understanding
/// PCIe performance for end host networking", SIGCOMM 2018, pcie-bench; Intel's TCC developer
/// guide measures the same "PCIe from memory" stream and puts a posted write at half of it);
/// less its two PCIe crossings (2 × 0.1 µs) and the DRAM access (0.1 µs) leaves 0.2 µs.
pub const ROOT_COMPLEX_READ: f64 = 0.2 * US;

/// GPU generations whose copy engines differ in fixed cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    Kepler,
    Volta,
    Ampere,
    Ada,
    Hopper,
    /// Maxwell, Pascal, Turing, Blackwell and names not recognised: no public peer latency with
    /// the stock driver was found for them, so they take the Ampere figure.
    Unknown,
}

/// The copy engine's fixed cost of a generation.
pub fn engine(g: Generation) -> f64 {
    match g {
        // Cirrascale's K40 p2pBandwidthLatencyTest: 7.7 µs for a same-switch pair, less 2 hops.
        Generation::Kepler => 7.5 * US,
        // TH2K's 4 x V100 SXM2: NVLink peers 1.80-2.27 µs (median 2.22), less one NVLink hop.
        Generation::Volta => 2.15 * US,
        // 4 x A100 PCIe, NVLink-bridged pairs: 2.22-2.32 µs, less one NVLink hop.
        Generation::Ampere | Generation::Unknown => 2.2 * US,
        // 4 x RTX 6000 Ada on two Genoa sockets: peers 1.21-1.44 µs, less 0.3-0.4 µs of PCIe,
        // socket-fabric and xGMI hops.
        Generation::Ada => 1.0 * US,
        // The engine's own cost, measured without a link: an H200's device-local 1-byte copies,
        // 1.69-1.86 µs per copy (median 1.71) in gated chains (bench/device/engine_latency.cu,
        // bench/validation/data/h200-engine-latency.txt). It serves peers too: HGX H100 SXM peers
        // through NVSwitch measure 2.26-3.35 µs (median 2.77) = 1.7 + the switch's 1 µs + two
        // NVLink hops (2.8).
        Generation::Hopper => 1.7 * US,
    }
}

/// A GPU's generation from its product name (`nvidia-smi`'s or the data sheet's), as far as the
/// name tells; chip names (GK110, GA100, AD102, GH100) count too.
pub fn generation(model: &str) -> Generation {
    let m = model.to_uppercase();
    let words: Vec<&str> = m.split(|c: char| !c.is_ascii_alphanumeric()).filter(|w| !w.is_empty()).collect();
    let word = |w: &str| words.contains(&w);
    let starts = |p: &str| words.iter().any(|w| w.starts_with(p));
    // GeForce / workstation series by their four-digit number (RTX 3090, RTX 4090) or A-number (RTX A6000).
    let rtx = |series: &str| word("RTX") && words.iter().any(|w| w.len() == 4 && w.starts_with(series));
    if ["K10", "K20", "K20X", "K40", "K80"].iter().any(|w| word(w)) || starts("GK1") || starts("GK2") {
        Generation::Kepler
    } else if word("ADA") || ["L4", "L20", "L40", "L40S"].iter().any(|w| word(w)) || starts("AD10") || rtx("40") {
        Generation::Ada
    } else if starts("V100") || starts("GV10") || (word("TITAN") && word("V")) {
        Generation::Volta
    } else if starts("H100") || starts("H200") || starts("H800") || word("H20") || starts("GH10") || starts("GH20") {
        Generation::Hopper
    } else if starts("A100")
        || starts("A800")
        || ["A10", "A10G", "A16", "A30", "A40"].iter().any(|w| word(w))
        || starts("GA10")
        || rtx("30")
        || (word("RTX") && words.iter().any(|w| w.len() == 5 && w.starts_with('A')))
    {
        Generation::Ampere
    } else {
        Generation::Unknown
    }
}

/// One-way latency of a hop. PCIe: a switch's cut-through forwarding (about 100 ns from Gen3 on,
/// slower before); NVLink: a few tens of ns per hop, into an NVSwitch too (the copy engine's cost
/// of passing the switch is the switch's, `NVSWITCH_TRAVERSAL`); socket links and DRAM: about 100
/// ns; network links: none unless written (clusters write them).
pub fn link(kind: LinkKind, gen: Option<u8>) -> f64 {
    match kind {
        LinkKind::Pcie if gen.is_some_and(|g| g <= 2) => 0.15 * US,
        LinkKind::Pcie => 0.1 * US,
        LinkKind::Nvlink => 0.05 * US,
        LinkKind::Qpi | LinkKind::Upi | LinkKind::Xgmi | LinkKind::Memory => 0.1 * US,
        LinkKind::Fabric => 0.05 * US,
        LinkKind::Network => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_by_generation() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-15;
        assert!(close(device(DeviceKind::Gpu, Some("Tesla K40")), 7.5e-6));
        assert!(close(device(DeviceKind::Gpu, Some("NVIDIA A100 80GB PCIe")), 2.2e-6));
        assert!(close(device(DeviceKind::Gpu, None), 2.2e-6));
        assert!(close(device(DeviceKind::Gpu, Some("NVIDIA H100 80GB HBM3")), 1.7e-6));
        assert!(close(device(DeviceKind::Gpu, Some("NVIDIA RTX 6000 Ada Generation")), 1.0e-6));
        assert_eq!(device(DeviceKind::PcieSwitch, None), 0.0);
        assert!(link(LinkKind::Pcie, Some(2)) > link(LinkKind::Pcie, Some(5)));
    }

    #[test]
    fn generations_from_product_names() {
        use Generation::*;
        for (name, g) in [
            ("Tesla K80", Kepler),
            ("Tesla V100-SXM2-16GB", Volta),
            ("NVIDIA A100-SXM4-80GB", Ampere),
            ("NVIDIA RTX A6000", Ampere),
            ("NVIDIA GeForce RTX 3090", Ampere),
            ("NVIDIA A10G", Ampere),
            ("NVIDIA RTX 6000 Ada Generation", Ada),
            ("NVIDIA GeForce RTX 4090", Ada),
            ("NVIDIA L40S", Ada),
            ("NVIDIA H100 80GB HBM3", Hopper),
            ("NVIDIA H800", Hopper),
            ("NVIDIA GH200 480GB", Hopper),
            ("NVIDIA GeForce RTX 5090", Unknown),
            ("NVIDIA B200", Unknown),
            ("Tesla T4", Unknown),
        ] {
            assert_eq!(generation(name), g, "{name}");
        }
    }

    #[test]
    fn an_nvswitch_costs_the_copy_engine_what_the_a100_matrices_say() {
        // A100 SXM4 through the switch (median 3.30 us) = Ampere engine + two NVLink hops + the switch.
        let through = engine(Generation::Ampere) + 2.0 * link(LinkKind::Nvlink, None) + device(DeviceKind::Nvswitch, None);
        assert!((through - 3.30e-6).abs() < 0.01e-6, "{through}");
        assert_eq!(device(DeviceKind::PcieSwitch, None), 0.0);
    }
}
