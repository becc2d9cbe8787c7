//! Device capacities and the socket links' peer-to-peer policies under maxmin.

use super::*;
use crate::model::registry;
use crate::sim;
use crate::workload::WorkloadSpec;

/// Two AMD sockets joined by xGMI, each with two root complexes (IO-die quadrants) on its
/// fabric hub, one GPU per root complex; SOCKET0's fabric moves at most 60 GB/s in all.
const AMD: &str = "name: amd
devices:
  - {name: SOCKET0, kind: root_complex, capacity: 60GB/s}
  - {name: SOCKET1, kind: root_complex}
  - {name: RC0, kind: root_complex}
  - {name: RC1, kind: root_complex}
  - {name: RC2, kind: root_complex}
  - {name: RC3, kind: root_complex}
  - {name: GPU0, kind: gpu, latency: 0s}
  - {name: GPU1, kind: gpu, latency: 0s}
  - {name: GPU2, kind: gpu, latency: 0s}
  - {name: GPU3, kind: gpu, latency: 0s}
links:
  - {a: SOCKET0, b: RC0, kind: fabric, bandwidth: 100GB/s, latency: 0s}
  - {a: SOCKET0, b: RC1, kind: fabric, bandwidth: 100GB/s, latency: 0s}
  - {a: SOCKET1, b: RC2, kind: fabric, bandwidth: 100GB/s, latency: 0s}
  - {a: SOCKET1, b: RC3, kind: fabric, bandwidth: 100GB/s, latency: 0s}
  - {a: RC0, b: GPU0, kind: pcie, bandwidth: 40GB/s, efficiency: 1, latency: 0s}
  - {a: RC1, b: GPU1, kind: pcie, bandwidth: 40GB/s, efficiency: 1, latency: 0s}
  - {a: RC2, b: GPU2, kind: pcie, bandwidth: 40GB/s, efficiency: 1, latency: 0s}
  - {a: RC3, b: GPU3, kind: pcie, bandwidth: 40GB/s, efficiency: 1, latency: 0s}
  - {a: SOCKET0, b: SOCKET1, kind: xgmi, bandwidth: 32GB/s, latency: 0s}
";

fn run_text(m: &Machine, text: &str, p: &MaxminParams) -> Vec<f64> {
    let w = Workload::resolve(&WorkloadSpec::from_text(text, "w").unwrap(), m, "w").unwrap();
    sim::run_prepared(&w, &MaxminPrepared::new(m, &w, *p).unwrap(), false).unwrap().finish
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b
}

#[test]
fn xgmi_carries_peer_copies_between_sockets() {
    let m = Machine::from_text(AMD, "amd").unwrap();
    let p = MaxminParams { duplex_pcie: 0.0, ..Default::default() };
    let f = run_text(&m, "transfers:\n  - {src: GPU0, dst: GPU2, size: 32GB}\n", &p);
    // Peer-to-peer over xGMI (not staged: the machine has no host memory), at its 32 GB/s.
    assert!(close(f[0], 1.0), "{f:?}");
    // The same link kind marked p2p: false (Intel's policy) leaves no peer path.
    let intel = Machine::from_text(&AMD.replace("kind: xgmi, bandwidth", "kind: upi, bandwidth"), "intel").unwrap();
    let w = Workload::resolve(&WorkloadSpec::from_text("transfers:\n  - {src: GPU0, dst: GPU2, size: 1GB}\n", "w").unwrap(), &intel, "w").unwrap();
    let e = MaxminPrepared::new(&intel, &w, p).err().unwrap().to_string();
    assert!(e.contains("host_memory"), "{e}");
}

#[test]
fn a_device_capacity_is_shared_by_everything_through_it() {
    let m = Machine::from_text(AMD, "amd").unwrap();
    let p = MaxminParams { duplex_pcie: 0.0, duplex_socket: 0.0, ..Default::default() };
    // GPU0 <-> GPU1 both ways cross SOCKET0 twice: 40 + 40 GB/s of PCIe, capped at 60 in all.
    let f = run_text(&m, "transfers:\n  - {src: GPU0, dst: GPU1, size: 30GB}\n  - {src: GPU1, dst: GPU0, size: 30GB}\n", &p);
    assert!(close(f[0], 1.0) && close(f[1], 1.0), "{f:?}");
    // SOCKET1 has no capacity of its own: its pair runs at the PCIe links' 40 GB/s each way.
    let f = run_text(&m, "transfers:\n  - {src: GPU2, dst: GPU3, size: 40GB}\n  - {src: GPU3, dst: GPU2, size: 40GB}\n", &p);
    assert!(close(f[0], 1.0), "{f:?}");
    // Models that share links only say so in one line.
    let w = Workload::resolve(&WorkloadSpec::from_text("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GB}\n", "w").unwrap(), &m, "w").unwrap();
    let e = registry::get("packet").unwrap().prepare(&m, &w, &[]).err().unwrap().to_string();
    assert!(e.contains("passes SOCKET0, which has a capacity") && e.contains("--model maxmin"), "{e}");
}

/// Two sockets, one root complex and host memory each, two GPUs per socket; xGMI of 100 GB/s
/// a direction, of which peer copies crossing it share 20 GB/s a direction (the root
/// complexes' peer forwarding); PCIe 40 GB/s, no duplex loss.
const PEER: &str = "name: peer
devices:
  - {name: CPU0, kind: root_complex, latency: 0s}
  - {name: CPU1, kind: root_complex, latency: 0s}
  - {name: MEM0, kind: host_memory, latency: 0s}
  - {name: MEM1, kind: host_memory, latency: 0s}
  - {name: GPU0, kind: gpu, latency: 0s}
  - {name: GPU1, kind: gpu, latency: 0s}
  - {name: GPU2, kind: gpu, latency: 0s}
  - {name: GPU3, kind: gpu, latency: 0s}
links:
  - {a: CPU0, b: CPU1, kind: xgmi, bandwidth: 100GB/s, latency: 0s, peer_bandwidth: 20GB/s}
  - {a: CPU0, b: MEM0, kind: memory, bandwidth: 1000GB/s, latency: 0s}
  - {a: CPU1, b: MEM1, kind: memory, bandwidth: 1000GB/s, latency: 0s}
  - {a: CPU0, b: GPU0, kind: pcie, bandwidth: 40GB/s, efficiency: 1, latency: 0s}
  - {a: CPU0, b: GPU1, kind: pcie, bandwidth: 40GB/s, efficiency: 1, latency: 0s}
  - {a: CPU1, b: GPU2, kind: pcie, bandwidth: 40GB/s, efficiency: 1, latency: 0s}
  - {a: CPU1, b: GPU3, kind: pcie, bandwidth: 40GB/s, efficiency: 1, latency: 0s}
";

/// From the definition: a peer copy across the sockets runs at the 20 GB/s of peer bandwidth, a
/// peer copy inside a socket and host traffic across it do not see it, and the two directions
/// have one each.
#[test]
fn a_socket_links_peer_bandwidth_is_shared_by_the_peer_copies_crossing_it_alone() {
    let m = Machine::from_text(PEER, "peer").unwrap();
    let p = MaxminParams { duplex_pcie: 0.0, duplex_socket: 0.0, write_memory: 1.0, ..Default::default() };
    // Alone: 20 GB at 20 GB/s across, 40 GB at the PCIe link's 40 inside a socket.
    let f = run_text(&m, "transfers:\n  - {src: GPU0, dst: GPU2, size: 20GB}\n", &p);
    assert!(close(f[0], 1.0), "{f:?}");
    let f = run_text(&m, "transfers:\n  - {src: GPU0, dst: GPU1, size: 40GB}\n", &p);
    assert!(close(f[0], 1.0), "{f:?}");
    // Two peer copies across share 20 GB/s (10 each: 20 GB in 2 s); GPU1's copy into the other
    // socket's memory is host traffic: it takes what GPU1's PCIe link leaves, 40 - 10 = 30 GB/s
    // (30 GB in 1 s), though it crosses the same xGMI.
    let f = run_text(
        &m,
        "transfers:\n  - {src: GPU0, dst: GPU2, size: 20GB}\n  - {src: GPU1, dst: GPU3, size: 20GB}\n  - {src: GPU1, dst: MEM1, size: 30GB}\n",
        &p,
    );
    assert!(close(f[0], 2.0) && close(f[1], 2.0) && close(f[2], 1.0), "{f:?}");
    // One each way: each direction has its own 20 GB/s.
    let f = run_text(&m, "transfers:\n  - {src: GPU0, dst: GPU2, size: 20GB}\n  - {src: GPU2, dst: GPU0, size: 20GB}\n", &p);
    assert!(close(f[0], 1.0) && close(f[1], 1.0), "{f:?}");
    // Models that share links only say so in one line.
    let w = Workload::resolve(&WorkloadSpec::from_text("transfers:\n  - {src: GPU0, dst: GPU2, size: 1GB}\n", "w").unwrap(), &m, "w").unwrap();
    for model in ["packet", "sc16"] {
        let e = registry::get(model).unwrap().prepare(&m, &w, &[]).err().unwrap().to_string();
        assert!(e.lines().count() == 1 && e.contains("--model maxmin"), "{model}: {e}");
    }
    let e = registry::get("packet").unwrap().prepare(&m, &w, &[]).err().unwrap().to_string();
    assert!(e.contains("crosses CPU0–CPU1, whose peer traffic has a bandwidth of its own (peer_bandwidth)"), "{e}");
}

/// A fabric link's peer bandwidth in one direction only: a root port's peer writes toward its
/// socket are capped, what arrives from the socket is not.
#[test]
fn a_fabric_links_peer_upstream_caps_one_direction() {
    let text = AMD.replace(
        "{a: SOCKET0, b: RC0, kind: fabric, bandwidth: 100GB/s, latency: 0s}",
        "{a: SOCKET0, b: RC0, kind: fabric, bandwidth: 100GB/s, latency: 0s, peer_upstream: 10GB/s}",
    );
    let m = Machine::from_text(&text.replace("capacity: 60GB/s", "latency: 0s"), "amd").unwrap();
    let p = MaxminParams { duplex_pcie: 0.0, duplex_socket: 0.0, ..Default::default() };
    // GPU0 -> GPU2 leaves RC0 upstream: 10 GB/s; GPU2 -> GPU0 arrives downstream: the xGMI's 32.
    let f = run_text(&m, "transfers:\n  - {src: GPU0, dst: GPU2, size: 10GB}\n", &p);
    assert!(close(f[0], 1.0), "{f:?}");
    let f = run_text(&m, "transfers:\n  - {src: GPU2, dst: GPU0, size: 32GB}\n", &p);
    assert!(close(f[0], 1.0), "{f:?}");
}
