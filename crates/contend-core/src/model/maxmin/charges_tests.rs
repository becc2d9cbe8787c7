//! Duplex loss and read access under maxmin, and their refusal by the models without them.

use super::*;
use crate::model::registry;
use crate::sim;
use crate::workload::WorkloadSpec;

/// Two GPUs on one 100 GB/s NVLink of efficiency 1, no latency.
const PAIR: &str = "name: pair
devices:
  - {name: GPU0, kind: gpu, latency: 0s}
  - {name: GPU1, kind: gpu, latency: 0s}
links:
  - {a: GPU0, b: GPU1, kind: nvlink, bandwidth: 100GB/s, efficiency: 1, latency: 1us}
";

fn finish(text: &str, p: &MaxminParams) -> Vec<f64> {
    let m = Machine::from_text(PAIR, "pair").unwrap();
    let w = Workload::resolve(&WorkloadSpec::from_text(text, "w").unwrap(), &m, "w").unwrap();
    sim::run_prepared(&w, &MaxminPrepared::new(&m, &w, *p).unwrap(), false).unwrap().finish
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b
}

#[test]
fn duplex_loss_slows_both_directions_not_one() {
    let p = MaxminParams { duplex_nvlink: 0.1, ..Default::default() };
    let one = finish("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GB}\n", &p);
    assert!(close(one[0], 1e-6 + 0.01), "{one:?}");
    let both = finish("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GB}\n  - {src: GPU1, dst: GPU0, size: 1GB}\n", &p);
    // Each direction carries its own bytes and 10% of the other's: 100 / 1.1 GB/s each.
    assert!(close(both[0], 1e-6 + 0.011) && close(both[1], both[0]), "{both:?}");
}

#[test]
fn reads_pay_requests_against_the_data_and_a_round_trip() {
    let p = MaxminParams { duplex_nvlink: 0.0, read_nvlink: 0.8, read_request: 0.05, ..Default::default() };
    // Alone: the data at 80 GB/s; the requests cross the link before the data comes back.
    let read = finish("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GB, access: read}\n", &p);
    assert!(close(read[0], 2e-6 + 1.0 / 80.0), "{read:?}");
    // Against a write the other way: the read's data direction saturates at 80 GB/s; the write's
    // direction also carries the read's requests (5% of 80 GB/s), so the write gets 96 GB/s once
    // the read moves (it ran alone at 100 GB/s for the read's extra microsecond).
    let mixed = finish("transfers:\n  - {src: GPU0, dst: GPU1, size: 1GB, access: read}\n  - {src: GPU1, dst: GPU0, size: 1GB}\n", &p);
    assert!(close(mixed[0], read[0]), "{mixed:?}");
    assert!(close(mixed[1], 2e-6 + (1e9 - 100e9 * 1e-6) / 96e9), "{mixed:?}");
}

#[test]
fn models_without_reads_refuse_them_in_one_line() {
    let m = Machine::load("cs-storm-socket").unwrap();
    let w = Workload::resolve(&WorkloadSpec::from_text("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MB, access: read}\n", "w").unwrap(), &m, "w").unwrap();
    for model in ["sc16", "packet"] {
        let e = (registry::get(model).unwrap().prepare)(&m, &w, &[]).err().unwrap().to_string();
        assert!(e.contains(&format!("model {model} does not apply")) && e.contains("is a read") && e.contains("--model maxmin"), "{e}");
    }
    let staged = Machine::load("typical-8gpu").unwrap();
    let w =
        Workload::resolve(&WorkloadSpec::from_text("transfers:\n  - {src: GPU0, dst: GPU4, size: 1MB, access: read}\n", "w").unwrap(), &staged, "w").unwrap();
    let e = MaxminPrepared::new(&staged, &w, MaxminParams::default()).err().unwrap().to_string();
    assert!(e.contains("transfers[0].access") && e.contains("staged"), "{e}");
}
