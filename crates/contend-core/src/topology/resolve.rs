//! The checks and defaults that turn a written device or link into the engine's: values in
//! range, fields on the kinds they apply to, default latencies (docs/models.md).

use super::default_latency::Generation;
use super::{default_latency, Acs, Device, DeviceKind, DeviceSpec, DirectedDuplex, LinkKind, LinkSpec};
use crate::error::{Error, Result};

/// Device `i` as written, with the machine-wide `acs` for switches that set none.
pub(super) fn device(d: &DeviceSpec, i: usize, machine_acs: Option<Acs>, origin: &str) -> Result<Device> {
    // Read only where a cluster wires the NIC (cluster/mod.rs), so checked here and not kept.
    match (d.port_bandwidth.map(|b| b.bytes_per_sec()), d.kind) {
        (Some(_), k) if k != DeviceKind::Nic => return Err(Error::input(origin, format!("devices[{i}].port_bandwidth"), "applies to NICs only; drop it")),
        (Some(b), _) if !(b > 0.0 && b.is_finite()) => {
            return Err(Error::input(origin, format!("devices[{i}].port_bandwidth"), "is not positive; give one port's line rate, e.g. 400Gb/s"))
        }
        (Some(b), _) if crate::units::below_link_floor(b).is_some() => {
            return Err(Error::input(origin, format!("devices[{i}].port_bandwidth"), crate::units::below_link_floor(b).unwrap_or_default()))
        }
        _ => {}
    }
    Ok(Device {
        name: d.name.clone(),
        kind: d.kind,
        model: d.model.clone(),
        latency: d.latency.map_or_else(|| default_latency::device(d.kind, d.model.as_deref()), |t| t.secs()),
        group: d.group,
        capacity: match d.capacity.map(|c| c.bytes_per_sec()) {
            Some(c) if !(c > 0.0 && c.is_finite()) => {
                return Err(Error::input(origin, format!("devices[{i}].capacity"), "is not positive; give the device's total bandwidth, e.g. 200GB/s"))
            }
            Some(c) if crate::units::below_link_floor(c).is_some() => {
                return Err(Error::input(origin, format!("devices[{i}].capacity"), crate::units::below_link_floor(c).unwrap_or_default()))
            }
            c => c,
        },
        acs_redirect: match (d.acs, d.kind) {
            (Some(_), k) if k != DeviceKind::PcieSwitch => {
                return Err(Error::input(origin, format!("devices[{i}].acs"), "applies to PCIe switches only; drop it or set it on the switch"))
            }
            (Some(a), _) => a == Acs::Redirect,
            (None, k) => k == DeviceKind::PcieSwitch && machine_acs == Some(Acs::Redirect),
        },
        staging_duplex: match (d.staging_duplex, d.kind) {
            (Some(_), k) if k != DeviceKind::HostMemory => {
                return Err(Error::input(origin, format!("devices[{i}].staging_duplex"), "applies to host_memory devices only; drop it"))
            }
            (Some(x), _) if !(0.0..1.0).contains(&x) => {
                return Err(Error::input(origin, format!("devices[{i}].staging_duplex"), format!("{x} is not in [0, 1); e.g. 0.5")))
            }
            (x, _) => x,
        },
        write_efficiency: match (d.write_efficiency, d.kind) {
            (Some(_), k) if k != DeviceKind::HostMemory => {
                return Err(Error::input(origin, format!("devices[{i}].write_efficiency"), "applies to host_memory devices only; drop it"))
            }
            (Some(x), _) if !(x > 0.0 && x <= 1.0) => {
                return Err(Error::input(origin, format!("devices[{i}].write_efficiency"), format!("{x} is not in (0, 1]; e.g. 0.6")))
            }
            (x, _) => x,
        },
        copy_engines: match (d.copy_engines, d.kind) {
            (Some(_), k) if k != DeviceKind::Gpu => return Err(Error::input(origin, format!("devices[{i}].copy_engines"), "applies to GPUs only; drop it")),
            (Some(n), _) if !(1..=MOST_COPY_ENGINES).contains(&n) => {
                return Err(Error::input(
                    origin,
                    format!("devices[{i}].copy_engines"),
                    format!("{n} is not in 1..={MOST_COPY_ENGINES}; e.g. 1 (one copy per direction at a time, CUDA's default)"),
                ))
            }
            (n, _) => n.unwrap_or(1),
        },
        multicast: match (d.multicast, d.kind) {
            (Some(_), k) if k != DeviceKind::Nvswitch => {
                return Err(Error::input(origin, format!("devices[{i}].multicast"), "applies to NVSwitch devices only; drop it"))
            }
            (Some(x), _) => x,
            (None, k) => k == DeviceKind::Nvswitch && nvswitch_generation(d.model.as_deref()).is_some_and(|g| g >= 3),
        },
        ports: match (d.ports, d.kind) {
            (Some(_), k) if k != DeviceKind::Nic => return Err(Error::input(origin, format!("devices[{i}].ports"), "applies to NICs only; drop it")),
            (Some(n), _) if !(1..=MOST_NIC_PORTS).contains(&n) => {
                return Err(Error::input(origin, format!("devices[{i}].ports"), format!("{n} is not in 1..={MOST_NIC_PORTS}; e.g. 2 (a dual-port NIC)")))
            }
            (n, _) => n.unwrap_or(1),
        },
        stripe_threshold: match (d.stripe_threshold, d.kind, d.ports) {
            (Some(_), k, _) if k != DeviceKind::Nic => {
                return Err(Error::input(origin, format!("devices[{i}].stripe_threshold"), "applies to NICs only; drop it"))
            }
            (Some(_), _, None | Some(1)) => {
                return Err(Error::input(
                    origin,
                    format!("devices[{i}].stripe_threshold"),
                    "schedules messages over a NIC's ports; give the NIC ports: 2 or more, or drop it",
                ))
            }
            (t, _, _) => t.map(|b| b.0 as f64),
        },
    })
}

/// An NVSwitch's generation from its model text, where it names one: "NVSwitch (third
/// generation)", "NVSwitch gen 3", "NVLink 4" (whose switch is the third generation), or the
/// GPUs of the board it sits on. NVIDIA's numbering: first generation DGX-2 (V100, NVLink 2),
/// second DGX A100 (NVLink 3), third HGX H100/H200 (NVLink 4, adds NVLink SHARP), fourth HGX
/// B200 (NVLink 5).
pub fn nvswitch_generation(model: Option<&str>) -> Option<u8> {
    let m = model?.to_lowercase().replace(['-', '_'], " ");
    let has = |k: &[&str]| k.iter().any(|s| m.contains(s));
    if has(&["fourth gen", "4th gen", "gen 4", "gen4", "nvlink 5", "nvlink5", "b200", "b100", "gb200", "b300", "blackwell"]) {
        Some(4)
    } else if has(&["third gen", "3rd gen", "gen 3", "gen3", "nvlink 4", "nvlink4", "h100", "h200", "h800", "hopper"]) {
        Some(3)
    } else if has(&["second gen", "2nd gen", "gen 2", "gen2", "nvlink 3", "nvlink3", "a100", "a800", "ampere"]) {
        Some(2)
    } else if has(&["first gen", "1st gen", "gen 1", "gen1", "nvlink 2", "nvlink2", "v100", "volta", "dgx 2"]) {
        Some(1)
    } else {
        None
    }
}

/// An NVLink's generation: as written (1-5), else the one its GPUs' generation has (Volta
/// NVLink 2, Ampere NVLink 3, Hopper NVLink 4, data-centre Blackwell NVLink 5; NVIDIA's data
/// sheets), from the first end whose model names one. None where neither says: the model's
/// NVLink-wide defaults apply.
pub(super) fn nvlink_generation(l: &LinkSpec, i: usize, ends: [&Device; 2], origin: &str) -> Result<Option<u8>> {
    if let Some(g) = l.gen {
        if !(1..=5).contains(&g) {
            return Err(Error::input(origin, format!("links[{i}].gen"), format!("NVLink generation {g} is unknown; use 1 to 5")));
        }
        return Ok(Some(g));
    }
    Ok(ends.iter().filter(|d| d.kind == DeviceKind::Gpu).find_map(|d| match default_latency::generation(d.model.as_deref()?) {
        // Blackwell's copy engine has no figure of its own (`Generation::Unknown`), its NVLink does.
        _ if nvlink5(d.model.as_deref()?) => Some(5),
        Generation::Volta => Some(2),
        Generation::Ampere => Some(3),
        Generation::Hopper => Some(4),
        _ => None,
    }))
}

/// A data-centre Blackwell GPU (B100, B200, B300, GB200, GB300): NVLink 5 (NVIDIA's data sheets).
/// Consumer and workstation Blackwell (RTX 50, RTX PRO) has no NVLink.
fn nvlink5(model: &str) -> bool {
    let m = model.to_uppercase();
    m.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| ["B100", "B200", "B300", "GB200", "GB300"].iter().any(|p| w.starts_with(p)))
}

/// More concurrent same-direction host copies per GPU than any GPU has engines for.
const MOST_COPY_ENGINES: u32 = 64;
/// Most ports a NIC may declare (a bound on typing mistakes; NICs have 1 to 4).
const MOST_NIC_PORTS: u32 = 16;

/// A link's efficiency, duplex loss and read efficiency, each in its range when written.
pub(super) fn link_fractions(l: &LinkSpec, i: usize, origin: &str) -> Result<()> {
    if let Some(e) = l.efficiency.filter(|e| !(*e > 0.0 && *e <= 1.0)) {
        return Err(Error::input(origin, format!("links[{i}].efficiency"), format!("{e} is not in (0, 1]; e.g. 0.8 for 80% of the bandwidth")));
    }
    if let Some(e) = l.duplex.filter(|e| !(*e >= 0.0 && *e < 1.0)) {
        return Err(Error::input(origin, format!("links[{i}].duplex"), format!("{e} is not in [0, 1); e.g. 0.06 for 6% lost to the other direction")));
    }
    for (field, v) in [("duplex_upstream", l.duplex_upstream), ("duplex_downstream", l.duplex_downstream)] {
        if let Some(e) = v.filter(|e| !(*e >= 0.0 && *e < 1.0)) {
            return Err(Error::input(origin, format!("links[{i}].{field}"), format!("{e} is not in [0, 1); e.g. 0.06 for 6% lost to the other direction")));
        }
    }
    if let Some(e) = l.read_efficiency.filter(|e| !(*e > 0.0 && *e <= 1.0)) {
        return Err(Error::input(origin, format!("links[{i}].read_efficiency"), format!("{e} is not in (0, 1]; e.g. 0.9")));
    }
    Ok(())
}

/// A link's duplex loss per direction, if written: both values, on a PCIe link (whose `a` is the
/// root side), and not beside the one value.
pub(super) fn directed_duplex(l: &LinkSpec, i: usize, origin: &str) -> Result<Option<DirectedDuplex>> {
    let fix = "give duplex_upstream and duplex_downstream together, or duplex alone for both directions";
    match (l.duplex_upstream, l.duplex_downstream) {
        (None, None) => Ok(None),
        (Some(_), None) => Err(Error::input(origin, format!("links[{i}].duplex_downstream"), format!("is missing; {fix}"))),
        (None, Some(_)) => Err(Error::input(origin, format!("links[{i}].duplex_upstream"), format!("is missing; {fix}"))),
        (Some(_), Some(_)) if l.duplex.is_some() => {
            Err(Error::input(origin, format!("links[{i}].duplex"), format!("is written beside duplex_upstream and duplex_downstream; {fix}")))
        }
        (Some(_), Some(_)) if l.kind != LinkKind::Pcie => Err(Error::input(
            origin,
            format!("links[{i}].duplex_upstream"),
            format!("applies to PCIe links only (a {} link has no root side); give duplex for both directions", l.kind.name()),
        )),
        (Some(upstream), Some(downstream)) => Ok(Some(DirectedDuplex { upstream, downstream })),
    }
}

/// A link's peer bandwidth per direction, `[a -> b, b -> a]`: `peer_bandwidth` for both, or
/// `peer_upstream` / `peer_downstream` for one each on a fabric link (whose `a` is the socket's
/// side); socket and fabric links only, positive.
pub(super) fn peer_bandwidth(l: &LinkSpec, i: usize, origin: &str) -> Result<[Option<f64>; 2]> {
    let fields = [("peer_bandwidth", l.peer_bandwidth), ("peer_upstream", l.peer_upstream), ("peer_downstream", l.peer_downstream)];
    for (field, v) in fields {
        let Some(v) = v else { continue };
        if !matches!(l.kind, LinkKind::Qpi | LinkKind::Upi | LinkKind::Xgmi | LinkKind::Fabric) {
            return Err(Error::input(
                origin,
                format!("links[{i}].{field}"),
                format!("applies to socket links (qpi, upi, xgmi) and fabric links only, not {}; drop it or put it on the link between sockets", l.kind.name()),
            ));
        }
        if !(v.bytes_per_sec() > 0.0 && v.bytes_per_sec().is_finite()) {
            return Err(Error::input(origin, format!("links[{i}].{field}"), format!("{v} is not a positive bandwidth; e.g. 38GB/s")));
        }
        if let Some(why) = crate::units::below_link_floor(v.bytes_per_sec()) {
            return Err(Error::input(origin, format!("links[{i}].{field}"), why));
        }
    }
    let bytes = |b: Option<crate::units::Bandwidth>| b.map(|x| x.bytes_per_sec());
    match (l.peer_bandwidth, l.peer_upstream, l.peer_downstream) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => Err(Error::input(
            origin,
            format!("links[{i}].peer_bandwidth"),
            "is written beside peer_upstream or peer_downstream; give peer_bandwidth for both directions, or one per direction",
        )),
        (None, up, down) if (up.is_some() || down.is_some()) && l.kind != LinkKind::Fabric => Err(Error::input(
            origin,
            format!("links[{i}].{}", if up.is_some() { "peer_upstream" } else { "peer_downstream" }),
            format!("applies to fabric links only (a {} link has no socket side); give peer_bandwidth for both directions", l.kind.name()),
        )),
        (Some(both), _, _) => Ok([bytes(Some(both)); 2]),
        (None, up, down) => Ok([bytes(down), bytes(up)]),
    }
}

#[cfg(test)]
mod tests {
    use crate::topology::Machine;

    #[test]
    fn fields_out_of_range_or_on_the_wrong_kind_name_the_field() {
        let base =
            "name: x\ndevices:\n  - {name: RC, kind: root_complex}\n  - {name: G, kind: gpu}\nlinks:\n  - {a: RC, b: G, kind: pcie, gen: 4, lanes: 16}\n";
        for (from, to, field) in [
            ("{name: RC, kind: root_complex}", "{name: RC, kind: root_complex, acs: redirect}", "devices[0].acs"),
            ("{name: RC, kind: root_complex}", "{name: RC, kind: root_complex, staging_duplex: 0.5}", "devices[0].staging_duplex"),
            ("{name: RC, kind: root_complex}", "{name: RC, kind: root_complex, capacity: 0GB/s}", "devices[0].capacity"),
            ("{name: RC, kind: root_complex}", "{name: RC, kind: root_complex, write_efficiency: 0.5}", "devices[0].write_efficiency"),
            ("{name: G, kind: gpu}", "{name: G, kind: host_memory, write_efficiency: 1.5}", "devices[1].write_efficiency"),
            ("lanes: 16}", "lanes: 16, duplex: 1.2}", "links[0].duplex"),
            ("lanes: 16}", "lanes: 16, read_efficiency: 0}", "links[0].read_efficiency"),
            ("lanes: 16}", "lanes: 16, duplex_upstream: 0.4}", "links[0].duplex_downstream"),
            ("lanes: 16}", "lanes: 16, duplex_downstream: 1}", "links[0].duplex_downstream"),
            ("lanes: 16}", "lanes: 16, duplex: 0.1, duplex_upstream: 0.4, duplex_downstream: 0.1}", "links[0].duplex"),
            ("kind: pcie, gen: 4, lanes: 16}", "kind: nvlink, bandwidth: 25GB/s, duplex_upstream: 0.4, duplex_downstream: 0.1}", "links[0].duplex_upstream"),
            ("lanes: 16}", "lanes: 16, peer_bandwidth: 20GB/s}", "links[0].peer_bandwidth"),
            ("kind: pcie, gen: 4, lanes: 16}", "kind: xgmi, bandwidth: 64GB/s, peer_bandwidth: 0GB/s}", "links[0].peer_bandwidth"),
            ("kind: pcie, gen: 4, lanes: 16}", "kind: xgmi, bandwidth: 64GB/s, peer_upstream: 20GB/s}", "links[0].peer_upstream"),
            ("kind: pcie, gen: 4, lanes: 16}", "kind: fabric, bandwidth: 64GB/s, peer_bandwidth: 20GB/s, peer_downstream: 9GB/s}", "links[0].peer_bandwidth"),
        ] {
            let e = Machine::from_text(&base.replace(from, to), "m.yaml").unwrap_err().to_string();
            assert!(e.starts_with(&format!("m.yaml: {field}:")), "{e}");
        }
        let ok = base.replace("kind: gpu}", "kind: gpu, capacity: 20GB/s}").replace("lanes: 16}", "lanes: 16, duplex: 0.1, read_efficiency: 0.9}");
        let m = Machine::from_text(&ok, "m.yaml").unwrap();
        assert_eq!((m.devices[1].capacity, m.links[0].duplex, m.links[0].read_efficiency), (Some(20e9), Some(0.1), Some(0.9)));
        let directed = Machine::from_text(&base.replace("lanes: 16}", "lanes: 16, duplex_upstream: 0.4, duplex_downstream: 0.05}"), "m.yaml").unwrap();
        assert_eq!(directed.links[0].duplex_directed, Some(crate::topology::DirectedDuplex { upstream: 0.4, downstream: 0.05 }));
        // Peer bandwidth per direction, [a -> b, b -> a]: upstream runs b -> a, toward the socket.
        let fabric = base.replace("kind: pcie, gen: 4, lanes: 16}", "kind: fabric, bandwidth: 64GB/s, peer_upstream: 20GB/s}");
        assert_eq!(Machine::from_text(&fabric, "m.yaml").unwrap().links[0].peer, [None, Some(20e9)]);
        let socket = base.replace("kind: pcie, gen: 4, lanes: 16}", "kind: xgmi, bandwidth: 64GB/s, peer_bandwidth: 30GB/s}");
        assert_eq!(Machine::from_text(&socket, "m.yaml").unwrap().links[0].peer, [Some(30e9); 2]);
    }
}
