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
        let e = registry::get(model).unwrap().prepare(&m, &w, &[]).err().unwrap().to_string();
        assert!(e.contains(&format!("model {model} does not apply")) && e.contains("is a read") && e.contains("--model maxmin"), "{e}");
    }
    let staged = Machine::load("typical-8gpu").unwrap();
    let w =
        Workload::resolve(&WorkloadSpec::from_text("transfers:\n  - {src: GPU0, dst: GPU4, size: 1MB, access: read}\n", "w").unwrap(), &staged, "w").unwrap();
    let e = MaxminPrepared::new(&staged, &w, MaxminParams::default()).err().unwrap().to_string();
    assert!(e.contains("transfers[0].access") && e.contains("staged"), "{e}");
}

/// A GPU on a 100 GB/s PCIe link to its root complex (the link's `a`), host memory behind it
/// fast enough never to matter; no latencies.
const HOST: &str = "name: host
devices:
  - {name: RC, kind: root_complex, latency: 0s}
  - {name: MEM, kind: host_memory, latency: 0s}
  - {name: GPU0, kind: gpu, latency: 0s}
links:
  - {a: RC, b: MEM, kind: memory, bandwidth: 1000GB/s, latency: 0s}
  - {a: RC, b: GPU0, kind: pcie, bandwidth: 100GB/s, efficiency: 1, latency: 0s, DUPLEX}
";

fn host_finish(duplex: &str, text: &str) -> Vec<f64> {
    let m = Machine::from_text(&HOST.replace("DUPLEX", duplex), "host").unwrap();
    let w = Workload::resolve(&WorkloadSpec::from_text(text, "w").unwrap(), &m, "w").unwrap();
    sim::run_prepared(&w, &MaxminPrepared::new(&m, &w, MaxminParams::default()).unwrap(), false).unwrap().finish
}

const BOTH_WAYS: &str = "transfers:\n  - {src: GPU0, dst: MEM, size: 1GB}\n  - {src: MEM, dst: GPU0, size: 10GB}\n";

#[test]
fn a_duplex_loss_per_direction_gives_each_direction_its_own_rate() {
    // Upstream (GPU0 -> MEM) loses 0.4 per byte moving down, downstream 0.1 per byte moving up,
    // each taken off the direction before its copy gets the rest:
    //   up = 100 - 0.4 down, down = 100 - 0.1 up  =>  up = 60 / 0.96 = 62.5, down = 93.75 GB/s.
    let f = host_finish("duplex_upstream: 0.4, duplex_downstream: 0.1", BOTH_WAYS);
    assert!(close(f[0], 1.0 / 62.5), "{f:?}");
    // The down copy moved 93.75 GB/s x 16 ms = 1.5 GB by then, and the other 8.5 GB alone at 100.
    assert!(close(f[1], 0.016 + 8.5 / 100.0), "{f:?}");
    // The same rates from the one-shot fill the schedule search uses.
    let m = Machine::from_text(&HOST.replace("DUPLEX", "duplex_upstream: 0.4, duplex_downstream: 0.1"), "host").unwrap();
    let w = Workload::resolve(&WorkloadSpec::from_text(BOTH_WAYS, "w").unwrap(), &m, "w").unwrap();
    let prepared = MaxminPrepared::new(&m, &w, MaxminParams::default()).unwrap();
    let mut rates = [0.0; 2];
    prepared.rate_model().unwrap().rates(&[0, 1], &mut rates);
    assert!(close(rates[0], 62.5e9) && close(rates[1], 93.75e9), "{rates:?}");
}

#[test]
fn equal_losses_per_direction_match_the_one_value_on_a_pair() {
    // Both ways at once, equal sizes: 100 / 1.1 GB/s each, whichever form the loss is written in.
    let pair = "transfers:\n  - {src: GPU0, dst: MEM, size: 1GB}\n  - {src: MEM, dst: GPU0, size: 1GB}\n";
    let one = host_finish("duplex: 0.1", pair);
    let two = host_finish("duplex_upstream: 0.1, duplex_downstream: 0.1", pair);
    assert!(close(one[0], 0.011) && close(one[1], 0.011), "{one:?}");
    assert!(close(two[0], one[0]) && close(two[1], one[1]), "{two:?}");
    // A copy alone loses nothing.
    let alone = host_finish("duplex_upstream: 0.4, duplex_downstream: 0.1", "transfers:\n  - {src: GPU0, dst: MEM, size: 1GB}\n");
    assert!(close(alone[0], 0.01), "{alone:?}");
}

/// Two GPUs, each on its own 60 GB/s link to a root complex whose host memory moves 100 GB/s;
/// no latency, efficiency 1, no duplex.
fn host(memory: &str) -> Machine {
    let text = format!(
        "name: host
devices:
  - {{name: RC, kind: root_complex, latency: 0s}}
  - {{name: MEM, kind: host_memory, latency: 0s{memory}}}
  - {{name: GPU0, kind: gpu, latency: 0s}}
  - {{name: GPU1, kind: gpu, latency: 0s}}
links:
  - {{a: RC, b: MEM, kind: memory, bandwidth: 100GB/s, efficiency: 1, latency: 0s}}
  - {{a: RC, b: GPU0, kind: pcie, bandwidth: 60GB/s, efficiency: 1, duplex: 0, latency: 0s}}
  - {{a: RC, b: GPU1, kind: pcie, bandwidth: 60GB/s, efficiency: 1, duplex: 0, latency: 0s}}
"
    );
    Machine::from_text(&text, "host").unwrap()
}

fn run_on(m: &Machine, text: &str, p: &MaxminParams) -> Vec<f64> {
    let w = Workload::resolve(&WorkloadSpec::from_text(text, "w").unwrap(), m, "w").unwrap();
    sim::run_prepared(&w, &MaxminPrepared::new(m, &w, *p).unwrap(), false).unwrap().finish
}

#[test]
fn writes_into_host_memory_take_its_write_efficiency_reads_do_not() {
    let writes = "transfers:\n  - {src: GPU0, dst: MEM, size: 1GB}\n  - {src: GPU1, dst: MEM, size: 1GB}\n";
    let reads = "transfers:\n  - {src: MEM, dst: GPU0, size: 1GB}\n  - {src: MEM, dst: GPU1, size: 1GB}\n";
    // By default a written byte takes 1/0.81 of the memory (Intel MLC read/write mixes): the two
    // writes share 81 GB/s, 40.5 each; reads take the whole 100 GB/s, 50 each.
    let p = MaxminParams::default();
    let m = host("");
    assert!(run_on(&m, writes, &p).iter().all(|&t| close(t, 1.0 / 40.5)));
    assert!(run_on(&m, reads, &p).iter().all(|&t| close(t, 1.0 / 50.0)));
    // At write efficiency 1 writes reach the whole memory: 50 GB/s each, the memory's 100 shared.
    let p = MaxminParams { write_memory: 1.0, ..Default::default() };
    assert!(run_on(&m, writes, &p).iter().all(|&t| close(t, 1.0 / 50.0)));
    // At write efficiency 0.6 the two writes share 60 GB/s: 30 each; reads still 50 each.
    let p = MaxminParams { write_memory: 0.6, ..Default::default() };
    assert!(run_on(&m, writes, &p).iter().all(|&t| close(t, 1.0 / 30.0)));
    assert!(run_on(&m, reads, &p).iter().all(|&t| close(t, 1.0 / 50.0)));
    // The memory's own value wins over the parameter: 0.4 of 100 GB/s shared by two.
    let own = host(", write_efficiency: 0.4");
    assert!(run_on(&own, writes, &p).iter().all(|&t| close(t, 1.0 / 20.0)));
}
