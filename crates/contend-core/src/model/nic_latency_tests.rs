//! A NIC's per-message latency (`flow::router::network_entry`) under every model that has
//! latency: a lone message leaving its node through a NIC of latency L takes L more, whatever
//! the model; the receiving NIC charges nothing; a NIC that drives the copy pays it once.

use crate::model::registry;
use crate::sim::{self, Outcome};
use crate::topology::Machine;
use crate::workload::{Workload, WorkloadSpec};

const L: f64 = 20e-6;

/// Two nodes on one switch: each a GPU behind a NIC (PCIe, 20 GB/s, no latency), the NIC on a
/// 10 GB/s network link of 100 ns; `nic0` and `nic1` are the NICs' written latencies.
fn star(nic0: &str, nic1: &str) -> Machine {
    let mut text = String::from("name: star\ndevices:\n  - {name: sw0, kind: switch}\n");
    for (i, lat) in [(0, nic0), (1, nic1)] {
        text.push_str(&format!("  - {{name: n{i}.GPU0, kind: gpu, latency: 0s}}\n  - {{name: n{i}.NIC0, kind: nic, latency: {lat}}}\n"));
    }
    text.push_str("links:\n");
    for i in 0..2 {
        text.push_str(&format!("  - {{a: n{i}.NIC0, b: n{i}.GPU0, kind: pcie, bandwidth: 20GB/s, efficiency: 1, latency: 0s}}\n"));
        text.push_str(&format!("  - {{a: n{i}.NIC0, b: sw0, kind: network, bandwidth: 10GB/s, latency: 100ns}}\n"));
    }
    Machine::from_text(&text, "star").unwrap()
}

fn run(model: &str, m: &Machine, transfer: &str) -> Outcome {
    let text = format!("transfers:\n  - {{{transfer}, size: 1MiB, overhead: 1us}}\n");
    let w = Workload::resolve(&WorkloadSpec::from_text(&text, "w").unwrap(), m, "w").unwrap();
    let prepared = registry::get(model).unwrap().prepare(m, &w, &[]).unwrap();
    sim::run_prepared(&w, prepared.as_ref(), false).unwrap()
}

#[test]
fn a_lone_message_pays_its_sending_nic_once_under_every_model() {
    let gpus = "src: n0.GPU0, dst: n1.GPU0";
    for model in ["maxmin", "packet"] {
        let none = run(model, &star("0s", "0s"), gpus).finish[0];
        let sent = run(model, &star("20us", "0s"), gpus).finish[0];
        assert!((sent - none - L).abs() < 1e-12, "{model}: {sent} - {none} is not {L}");
        // The receiving NIC charges nothing: the written figure is the whole one-way cost.
        let received = run(model, &star("0s", "20us"), gpus).finish[0];
        assert_eq!(received, none, "{model}");
        // The other way, the other NIC sends.
        let back = run(model, &star("0s", "20us"), "src: n1.GPU0, dst: n0.GPU0").finish[0];
        assert!((back - none - L).abs() < 1e-12, "{model}: {back}");
        // A NIC that drives the copy (RDMA to a remote GPU) pays its latency as the driver, once.
        let driven = run(model, &star("0s", "0s"), "src: n0.NIC0, dst: n1.GPU0").finish[0];
        let driver = run(model, &star("20us", "0s"), "src: n0.NIC0, dst: n1.GPU0").finish[0];
        assert!((driver - driven - L).abs() < 1e-12, "{model}: {driver} - {driven}");
    }
}

/// packet, exactly (picoseconds): the overhead, the NIC's latency, both network hops' 100 ns,
/// the first 4 KiB packet's serialisation at each of its four hops and the other 255 packets'
/// at the 10 GB/s bottleneck (as `packet::tests::lone_message_is_the_pipeline_exactly`).
#[test]
fn packet_pays_the_nic_before_the_pipeline() {
    let (pcie, net, lat) = (204_800u64, 409_600u64, 100_000u64);
    let expect = 1_000_000 + 20_000_000 + 2 * lat + (pcie + net + net + pcie) + 255 * net;
    assert_eq!(run("packet", &star("20us", "0s"), "src: n0.GPU0, dst: n1.GPU0").finish[0], expect as f64 / 1e12);
}

/// NCCL's transfers (moved by kernels, `Transfer::kernel`) pay it too: it is in the plan's
/// kernel latency as well as its copy-engine latency.
#[test]
fn kernels_pay_the_nic_too() {
    use crate::flow::router::Router;
    let (none, sent) = (star("0s", "0s"), star("20us", "0s"));
    let plan = |m: &Machine| Router::new(m).plan(m.device("n0.GPU0").unwrap(), m.device("n1.GPU0").unwrap(), None, &[], true).unwrap();
    let (a, b) = (plan(&none), plan(&sent));
    assert!((b.kernel_latency - a.kernel_latency - L).abs() < 1e-15);
    assert!((b.latency - a.latency - L).abs() < 1e-15);
}
