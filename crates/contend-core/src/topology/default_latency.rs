//! Latencies a machine gets where its file writes none, so that a machine written from its
//! data sheet predicts fixed costs of the right order instead of zero. Every value and its
//! public basis is in docs/models.md ("Default latencies"); a written `latency` always wins,
//! and `contend calibrate` replaces them with fitted ones.

use super::{DeviceKind, LinkKind};

const US: f64 = 1e-6;

/// Fixed cost per copy at a device. GPUs: the copy engine's setup of one cudaMemcpy, which
/// p2pBandwidthLatencyTest's one-element copies measure; Kepler-era engines are about three
/// times slower than Pascal and later. Host memory: the CPU hand-off between the two halves of
/// a staged copy. Transit devices and NICs: none (their cost is in their links, and network
/// latencies are written by cluster descriptions).
pub fn device(kind: DeviceKind, model: Option<&str>) -> f64 {
    match kind {
        DeviceKind::Gpu if model.is_some_and(kepler) => 7.5 * US,
        DeviceKind::Gpu => 2.2 * US,
        DeviceKind::HostMemory => 12.0 * US,
        _ => 0.0,
    }
}

/// Kepler GPUs (Tesla K10/K20/K40/K80, GK1xx chips), by their product name.
fn kepler(model: &str) -> bool {
    let m = model.to_uppercase();
    ["K10", "K20", "K40", "K80", "GK1", "GK2"].iter().any(|k| m.contains(k))
}

/// One-way latency of a hop. PCIe: a switch's cut-through forwarding (about 100 ns from Gen3 on,
/// slower before); NVLink: a few tens of ns per hop; socket links and DRAM: about 100 ns;
/// network links: none unless written (clusters write them).
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
        assert_eq!(device(DeviceKind::PcieSwitch, None), 0.0);
        assert!(link(LinkKind::Pcie, Some(2)) > link(LinkKind::Pcie, Some(5)));
    }
}
