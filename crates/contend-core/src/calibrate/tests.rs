use super::*;

/// The host of the fixtures, as its `nvidia-smi topo -m` shows it: 4 A100 80GB PCIe, each on
/// its own NUMA node (SYS between all), NVLink-bridged in pairs (NV12). Bandwidths are the
/// nominal ones (PCIe Gen4 x16; NVLink 3, 25 GB/s per link and direction); the socket links and
/// host memory bandwidth are not in the dump and are guesses the fit does not depend on here.
pub(super) const MACHINE: &str = "name: a100-pcie-4
devices:
  - {name: CPU0, kind: root_complex}
  - {name: CPU1, kind: root_complex}
  - {name: CPU2, kind: root_complex}
  - {name: CPU3, kind: root_complex}
  - {name: MEM0, kind: host_memory}
  - {name: MEM1, kind: host_memory}
  - {name: MEM2, kind: host_memory}
  - {name: MEM3, kind: host_memory}
  - {name: GPU0, kind: gpu, model: NVIDIA A100 80GB PCIe}
  - {name: GPU1, kind: gpu, model: NVIDIA A100 80GB PCIe}
  - {name: GPU2, kind: gpu, model: NVIDIA A100 80GB PCIe}
  - {name: GPU3, kind: gpu, model: NVIDIA A100 80GB PCIe}
links:
  - {a: CPU0, b: GPU0, kind: pcie, gen: 4, lanes: 16}
  - {a: CPU1, b: GPU1, kind: pcie, gen: 4, lanes: 16}
  - {a: CPU2, b: GPU2, kind: pcie, gen: 4, lanes: 16}
  - {a: CPU3, b: GPU3, kind: pcie, gen: 4, lanes: 16}
  - {a: GPU0, b: GPU1, kind: nvlink, count: 12, bandwidth: 25GB/s}
  - {a: GPU2, b: GPU3, kind: nvlink, count: 12, bandwidth: 25GB/s}
  - {a: CPU0, b: CPU1, kind: upi, bandwidth: 64GB/s}
  - {a: CPU0, b: CPU2, kind: upi, bandwidth: 64GB/s}
  - {a: CPU0, b: CPU3, kind: upi, bandwidth: 64GB/s}
  - {a: CPU1, b: CPU2, kind: upi, bandwidth: 64GB/s}
  - {a: CPU1, b: CPU3, kind: upi, bandwidth: 64GB/s}
  - {a: CPU2, b: CPU3, kind: upi, bandwidth: 64GB/s}
  - {a: CPU0, b: MEM0, kind: memory, bandwidth: 200GB/s}
  - {a: CPU1, b: MEM1, kind: memory, bandwidth: 200GB/s}
  - {a: CPU2, b: MEM2, kind: memory, bandwidth: 200GB/s}
  - {a: CPU3, b: MEM3, kind: memory, bandwidth: 200GB/s}
";

const OUTPUT: &str = include_str!("../../tests/fixtures/p2pBandwidthLatencyTest-4xa100-pcie.txt");

fn fit() -> Calibration {
    let m = Machine::from_text(MACHINE, "a100-pcie-4").unwrap();
    let meas = parse_p2p_output(OUTPUT, "fixture").unwrap();
    calibrate(&m, &meas, &MaxminParams::default(), false).unwrap()
}

fn rel(c: &Calibration, matrix: &str, src: &str, dst: &str) -> f64 {
    c.residuals.iter().find(|r| r.matrix == matrix && r.src == src && r.dst == dst).unwrap().relative_error.unwrap()
}

#[test]
fn fits_the_published_a100_output() {
    let c = fit();
    // NVLink pairs: 275 GB/s one way of 12 x 25 GB/s.
    let nv: f64 = c.fitted["efficiency.nvlink"].parse().unwrap();
    assert!((nv - 275.0 / 300.0).abs() < 0.002, "{nv}");
    assert!(rel(&c, "unidirectional_p2p_gbps", "GPU0", "GPU1").abs() < 0.01);
    assert!(rel(&c, "unidirectional_p2p_gbps", "GPU2", "GPU3").abs() < 0.01);
    // Both ways at once the pair moves 2 x 258 GB/s, 6% less than the links allow: the fitted
    // NVLink duplex loss 275.07 x 2 / 516.19 - 1 = 6.6% (averaged over both pairs) gives it back.
    let duplex: f64 = c.fitted["duplex.nvlink"].parse().unwrap();
    assert!((0.06..0.07).contains(&duplex), "{duplex}");
    assert!(rel(&c, "bidirectional_p2p_gbps", "GPU0", "GPU1").abs() < 0.01);
    // Staged both ways: 27-30 GB/s for 21.6 one way, the staging pipeline's duplex loss (0.53).
    let staging: f64 = c.fitted["staging_duplex"].parse().unwrap();
    assert!((0.5..0.57).contains(&staging), "{staging}");
    assert!(c.rms_relative_error["bidirectional_staged_gbps"] < 0.06, "{:?}", c.rms_relative_error);
    // Staged copies between sockets are limited by PCIe: one efficiency for all of them.
    assert!(rel(&c, "unidirectional_staged_gbps", "GPU0", "GPU2").abs() < 0.03, "{:?}", c.fitted);
    assert!(c.rms_relative_error["unidirectional_staged_gbps"] < 0.03 && c.rms_relative_error["unidirectional_p2p_gbps"] < 0.03);
    // NVLink neighbours take 2.22-2.32 us, below the local copies' 2.47-2.71 us: the diagonal
    // stays out of the fit (the machine does not describe a local copy), so the pairs fit.
    assert!(c.rms_relative_error["latency_p2p_us"] < 0.15, "{:?}", c.rms_relative_error);
    for (a, b) in [("GPU0", "GPU1"), ("GPU1", "GPU0"), ("GPU2", "GPU3"), ("GPU3", "GPU2")] {
        assert!(rel(&c, "latency_p2p_us", a, b).abs() < 0.03, "{a}->{b}: {}", rel(&c, "latency_p2p_us", a, b));
    }
    // The engine comes out of the peer copies and the hand-off out of the staged ones; every
    // hop latency is paid alongside them in the same proportions, so it is named, not guessed.
    let us = |k: &str| Time::parse(&c.fitted[k]).unwrap().secs() * 1e6;
    assert!((2.2..2.3).contains(&us("latency.gpu")) && (11.0..14.0).contains(&us("latency.host_memory")), "{:?}", c.fitted);
    assert!(!c.fitted.contains_key("latency.hop.pcie"), "{:?}", c.fitted);
    assert!(c.notes.iter().all(|n| n.contains("the latency matrices cannot tell it apart")), "{:?}", c.notes);
    assert!(c.notes.iter().any(|n| n.starts_with("latency.hop.pcie: ")), "{:?}", c.notes);
    // The calibrated machine loads, carries the fit, and reproduces it.
    let m = Machine::from_spec(c.spec.clone(), "calibrated").unwrap();
    // Only kinds that limit some measured copy are fitted; the socket links and memory are not.
    assert!(m.links.iter().all(|l| l.efficiency.is_some() == matches!(l.kind, LinkKind::Pcie | LinkKind::Nvlink)));
    assert!(m.devices.iter().filter(|d| d.kind == DeviceKind::Gpu).all(|d| d.latency > 0.0));
}

#[test]
fn refuses_measurements_of_another_machine() {
    let m = Machine::load("dgx1-p100").unwrap();
    let meas = parse_p2p_output(OUTPUT, "fixture").unwrap();
    let e = calibrate(&m, &meas, &MaxminParams::default(), false).unwrap_err().to_string();
    assert!(e.contains("4 devices but dgx1-p100 has 8 GPUs"), "{e}");
}

/// Written from its data sheet (no latency anywhere), the machine still predicts the measured
/// latencies' order: NVLink pairs 2.22-2.25 us, staged pairs 11.7-21.9 us (median 18.3 us).
#[test]
fn data_sheet_machine_predicts_latency_of_the_right_order() {
    let m = Machine::from_text(MACHINE, "a100-pcie-4").unwrap();
    let r = crate::tools::p2p::p2p_matrices(&m, &MaxminParams::default()).unwrap();
    let nv = r.latency_p2p_us[0][1].unwrap();
    let staged = r.latency_p2p_us[0][2].unwrap();
    assert!((nv - 2.24).abs() / 2.24 < 0.1, "{nv}");
    assert!((11.7..21.9).contains(&staged), "{staged}");
}

/// Partial measurements: the cells left out are neither fitted nor reported.
#[test]
fn partial_measurements_fit_what_is_there() {
    let m = Machine::from_text(MACHINE, "a100-pcie-4").unwrap();
    let text = OUTPUT.replace("275.51", "-").replace("     3  18.78  18.08   2.32   2.48 \n", "");
    let c = calibrate(&m, &parse_p2p_output(&text, "partial").unwrap(), &MaxminParams::default(), false).unwrap();
    let has = |mx: &str, s: &str, d: &str| c.residuals.iter().any(|r| r.matrix == mx && r.src == s && r.dst == d);
    assert!(!has("unidirectional_p2p_gbps", "GPU1", "GPU0") && has("unidirectional_p2p_gbps", "GPU0", "GPU1"));
    assert!(!has("latency_p2p_us", "GPU3", "GPU2") && has("latency_p2p_us", "GPU2", "GPU3"));
    assert!(c.fitted.contains_key("efficiency.nvlink"));
}

/// Hold-out validation: fitted on single-pair data, the A100 pairs' bidirectional NVLink rates
/// and the latencies of pairs i > j are predicted, not fitted.
#[test]
fn hold_out_scores_what_the_fit_did_not_see() {
    let m = Machine::from_text(MACHINE, "a100-pcie-4").unwrap();
    let c = calibrate(&m, &parse_p2p_output(OUTPUT, "fixture").unwrap(), &MaxminParams::default(), true).unwrap();
    assert!(!c.fitted.contains_key("duplex.nvlink"), "{:?}", c.fitted);
    let bi = &c.scores["bidirectional_p2p_gbps (held out)"];
    assert_eq!(bi.count, 12);
    let held = c.residuals.iter().filter(|r| r.held_out && r.matrix == "latency_p2p_us").count();
    assert_eq!(held, 6);
    // NVLink pairs both ways, from the default duplex loss: within 1%.
    assert!(c.residuals.iter().filter(|r| r.matrix == "bidirectional_p2p_gbps" && r.measured > 400.0).all(|r| r.relative_error.unwrap().abs() < 0.01));
    assert!(c.scores.contains_key("unidirectional_p2p_gbps (fitted)"));
}

/// A full nvbandwidth run: fitted on the single copies (peer write and read, host to and from
/// each GPU), its concurrent tests predicted and scored as held out.
#[test]
fn nvbandwidth_concurrent_tests_are_predicted_not_fitted() {
    let m = Machine::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/validation/machines/h800x8.yaml")).unwrap();
    let meas = parse_measurements(include_str!("../../tests/fixtures/nvbandwidth-8xh800-all.txt"), "nvb.txt").unwrap();
    let c = calibrate(&m, &meas, &MaxminParams::default(), true).unwrap();
    assert!(c.fitted.contains_key("efficiency.pcie") && c.fitted.contains_key("efficiency.nvlink"), "{:?}", c.fitted);
    let of = |name: &str| c.residuals.iter().filter(|r| r.matrix == name).collect::<Vec<_>>();
    let host = of("unidirectional_host_to_device_memcpy_ce");
    assert!(host.len() == 8 && host.iter().all(|r| !r.held_out && r.relative_error.unwrap().abs() < 0.01));
    // Seven GPUs writing into one share its NVLink ports: the total is one pair's rate.
    let a2o = of("concurrent_all_to_one_write_ce");
    assert!(a2o.len() == 8 && a2o.iter().all(|r| r.held_out && r.dst.starts_with("GPU") && r.relative_error.unwrap().abs() < 0.02));
    // Every GPU copying to its own socket's memory at once: the model sees no shared limit.
    let a2h = of("concurrent_all_to_host_memcpy_ce");
    assert!(a2h.iter().all(|r| (r.predicted.unwrap() - 55.2).abs() < 0.5), "{a2h:?}");
    assert!(c.scores.contains_key("concurrent_all_to_one_read_ce (held out)"));
}

/// The two directions' duplex loss of a host link, recovered from what the model itself gives
/// for nvbandwidth's single-GPU host tests on a machine with known values (upstream 0.3,
/// downstream 0.08); with one direction's test only, one value and a note that says why.
#[test]
fn host_bidirectional_tests_give_each_directions_duplex_loss() {
    let sheet = Machine::from_text(MACHINE, "a100").unwrap();
    let truth_text = MACHINE.replace("lanes: 16}", "lanes: 16, efficiency: 0.8, duplex_upstream: 0.3, duplex_downstream: 0.08}");
    let truth = Machine::from_text(&truth_text, "truth").unwrap();
    let p = MaxminParams::default();
    let mut meas = P2pMeasurements { devices: vec!["A100".into(); 4], ..Default::default() };
    for j in 0..4 {
        use concurrent::End::{Gpu, Host};
        let one = |src, dst| vec![concurrent::Flow { src, dst, access: crate::workload::Access::Write }];
        for (test, flows) in [("host_to_device_memcpy_ce", one(Host(j), Gpu(j))), ("device_to_host_memcpy_ce", one(Gpu(j), Host(j)))] {
            let mut c = concurrent::Concurrent { test: test.into(), flows, value: concurrent::Value::First, gbps: 0.0 };
            c.gbps = concurrent::predict(&truth, &c, &p).unwrap();
            meas.host_copies.push(c);
        }
        for test in ["host_to_device_bidirectional_memcpy_ce", "device_to_host_bidirectional_memcpy_ce"] {
            let (flows, value) = concurrent::row_test(test, j, 4).unwrap();
            let mut c = concurrent::Concurrent { test: test.into(), flows, value, gbps: 0.0 };
            c.gbps = concurrent::predict(&truth, &c, &p).unwrap();
            meas.host_bidirectional.push(c);
        }
    }
    // Hand check of one cell: up = c - 0.3 down, down = c - 0.08 up with c = 0.8 x 31.5 GB/s
    // (the copy's setup latency, microseconds of a 60 ms copy, is the difference).
    let c = 0.8 * sheet.links[0].bandwidth / 1e9;
    let up = c * (1.0 - 0.3) / (1.0 - 0.3 * 0.08);
    assert!((meas.host_bidirectional[1].gbps / up - 1.0).abs() < 1e-4, "{} against {up}", meas.host_bidirectional[1].gbps);
    let cal = calibrate(&sheet, &meas, &p, true).unwrap();
    // Within the copies' setup latencies (the closed form takes the rates as link rates).
    let got = |k: &str| cal.fitted[k].parse::<f64>().unwrap();
    assert!((got("duplex_upstream.pcie") - 0.3).abs() < 5e-4 && (got("duplex_downstream.pcie") - 0.08).abs() < 5e-4, "{:?}", cal.fitted);
    assert!(cal.spec.links[0].duplex_upstream.is_some() && cal.spec.links[0].duplex.is_none());
    let fitted: Vec<_> = cal.residuals.iter().filter(|r| r.matrix.starts_with("bidirectional_host_to_device")).collect();
    assert!(fitted.len() == 4 && fitted.iter().all(|r| !r.held_out && r.relative_error.unwrap().abs() < 1e-4), "{fitted:?}");
    // Device to host both ways only: the data cannot tell the directions apart.
    meas.host_bidirectional.retain(|c| c.test.starts_with("device_to_host"));
    let one = calibrate(&sheet, &meas, &p, true).unwrap();
    assert!(one.fitted.contains_key("duplex.pcie") && !one.fitted.contains_key("duplex_upstream.pcie"), "{:?}", one.fitted);
    assert!(one.notes.iter().any(|n| n.contains("cannot be told apart")), "{:?}", one.notes);
}

/// A machine calibrated on its own predicted nvbandwidth output gives back its parameters, and
/// scores every value of that output within rounding: calibrate reads nvbandwidth's matrices as
/// nvbandwidth measures them (one long copy, not p2pBandwidthLatencyTest's five).
#[test]
fn recovers_a_machine_from_its_own_predicted_nvbandwidth_output() {
    let m = Machine::load("dgx-a100").unwrap();
    let p = MaxminParams::default();
    let text = crate::tools::nvbandwidth::predict(&m, &p).unwrap().text();
    let meas = parse_measurements(&text, "predicted.txt").unwrap();
    assert_eq!(meas.tool, Tool::Nvbandwidth);
    let c = calibrate(&m, &meas, &p, true).unwrap();
    let eff: f64 = c.fitted["efficiency.nvlink"].parse().unwrap();
    assert!((eff - 0.92).abs() < 0.002, "{eff}");
    let worst = c.residuals.iter().filter_map(|r| r.relative_error).fold(0.0_f64, |a, e| a.max(e.abs()));
    assert!(worst < 0.003, "worst residual {worst}");
    assert!(c.residuals.iter().any(|r| r.matrix == "concurrent_all_to_one_read_ce" && r.held_out));
}

/// A host memory that takes writes at a fifth of its bandwidth: dgx-a100's eight GPUs writing to
/// the host at once (per socket, two PCIe Gen4 switch uplinks of 26.3 GB/s) outrun 0.2 x 204.8
/// GB/s of each socket's memory, so nvbandwidth's all_to_host test shows it, and calibrate
/// (without hold-out) finds 0.2 again from the machine's own predicted output; with hold-out it
/// leaves it alone.
#[test]
fn recovers_host_memory_write_efficiency_from_all_gpu_host_writes() {
    let mut spec = Machine::load("dgx-a100").unwrap().spec;
    spec.devices.iter_mut().filter(|d| d.kind == DeviceKind::HostMemory).for_each(|d| d.write_efficiency = Some(0.2));
    let slow = Machine::from_spec(spec, "slow-writes").unwrap();
    let p = MaxminParams::default();
    let meas = parse_measurements(&crate::tools::nvbandwidth::predict(&slow, &p).unwrap().text(), "predicted.txt").unwrap();
    let c = calibrate(&Machine::load("dgx-a100").unwrap(), &meas, &p, false).unwrap();
    let w: f64 = c.fitted["write_efficiency"].parse().unwrap();
    assert!((w - 0.2).abs() < 0.002, "{w}");
    assert!(c.residuals.iter().any(|r| r.matrix == "concurrent_all_to_host_memcpy_ce" && !r.held_out));
    let held = calibrate(&Machine::load("dgx-a100").unwrap(), &meas, &p, true).unwrap();
    assert!(!held.fitted.contains_key("write_efficiency"));
}

/// Where the two directions of a pair differ (a PCIe link that loses more upstream), a both-way
/// "Total" is the sum of the two copies' own rates, as nvbandwidth sums them, and calibrate
/// scores the read Totals of the prediction against that same sum.
#[test]
fn both_way_totals_are_sums_of_each_copy() {
    let text = concurrent::tests::SWITCHED.replace(
        "{a: SW, b: GPU0, kind: pcie, gen: 4, lanes: 16}",
        "{a: SW, b: GPU0, kind: pcie, gen: 4, lanes: 16, duplex_upstream: 0.5, duplex_downstream: 0}",
    );
    let m = Machine::from_text(&text, "asym.yaml").unwrap();
    let p = MaxminParams::default();
    let r = crate::tools::nvbandwidth::predict(&m, &p).unwrap();
    let cell = |key: &str| r.testcases.iter().flat_map(|t| &t.matrices).find(|x| x.key == key).unwrap().values[0][1].unwrap();
    let (one, two, total) = (
        cell("device_to_device_bidirectional_memcpy_write_ce_write1"),
        cell("device_to_device_bidirectional_memcpy_write_ce_write2"),
        cell("device_to_device_bidirectional_memcpy_write_ce_total"),
    );
    assert!((one - two).abs() > 0.1 * two, "the directions differ: {one} and {two}");
    assert!((total - one - two).abs() < 1e-9);
    // The same copies valued as a sum of each, and as all bytes over the time until the last ends.
    let both = |value| {
        concurrent::predict(&m, &concurrent::Concurrent { test: "t".into(), flows: concurrent::bidirectional_cell(false, 0, 1), value, gbps: 0.0 }, &p).unwrap()
    };
    assert!((both(concurrent::Value::SumOfCopies) - total).abs() < 1e-6);
    assert!((both(concurrent::Value::Total) - 2.0 * one.min(two)).abs() < 1e-6);
    // Read back, each read Total predicts as printed on the machine that printed it.
    let meas = parse_measurements(&r.text(), "predicted.txt").unwrap();
    let reads: Vec<_> = meas.concurrent.iter().filter(|c| c.value == concurrent::Value::SumOfCopies).collect();
    assert_eq!(reads.len(), 2);
    for c in reads {
        let again = concurrent::predict(&m, c, &p).unwrap();
        assert!((again - c.gbps).abs() < 0.006, "{again} against {}", c.gbps);
    }
    // Residuals name the cell, row then column.
    let c = calibrate(&m, &meas, &p, true).unwrap();
    let cells: Vec<(&str, &str)> = c
        .residuals
        .iter()
        .filter(|x| x.matrix == "concurrent_device_to_device_bidirectional_memcpy_read_ce_total")
        .map(|x| (x.src.as_str(), x.dst.as_str()))
        .collect();
    assert_eq!(cells, vec![("GPU0", "GPU1"), ("GPU1", "GPU0")]);
}

/// Two sockets whose xGMI passes 20 GB/s of peer copies a direction, Gen4 GPUs (26.3 GB/s a
/// copy at the default efficiency): from the machine's own predicted nvbandwidth output, the
/// matrix fit finds 20 GB/s on a machine that declares 60, from the peer copies across the
/// sockets, while the copies inside a socket keep PCIe's efficiency.
#[test]
fn recovers_a_declared_peer_bandwidth_from_the_peer_matrix() {
    let text = "name: two-sockets
devices:
  - {name: CPU0, kind: root_complex}
  - {name: CPU1, kind: root_complex}
  - {name: MEM0, kind: host_memory}
  - {name: MEM1, kind: host_memory}
  - {name: GPU0, kind: gpu}
  - {name: GPU1, kind: gpu}
  - {name: GPU2, kind: gpu}
  - {name: GPU3, kind: gpu}
links:
  - {a: CPU0, b: CPU1, kind: xgmi, bandwidth: 100GB/s, peer_bandwidth: 20GB/s}
  - {a: CPU0, b: MEM0, kind: memory, bandwidth: 400GB/s}
  - {a: CPU1, b: MEM1, kind: memory, bandwidth: 400GB/s}
  - {a: CPU0, b: GPU0, kind: pcie, gen: 4, lanes: 16}
  - {a: CPU0, b: GPU1, kind: pcie, gen: 4, lanes: 16}
  - {a: CPU1, b: GPU2, kind: pcie, gen: 4, lanes: 16}
  - {a: CPU1, b: GPU3, kind: pcie, gen: 4, lanes: 16}
";
    let truth = Machine::from_text(text, "truth").unwrap();
    let p = MaxminParams::default();
    let meas = parse_measurements(&crate::tools::nvbandwidth::predict(&truth, &p).unwrap().text(), "predicted.txt").unwrap();
    let declared = Machine::from_text(&text.replace("peer_bandwidth: 20GB/s", "peer_bandwidth: 60GB/s"), "declared").unwrap();
    let c = calibrate(&declared, &meas, &p, true).unwrap();
    assert_eq!(c.fitted.get("peer_bandwidth.xgmi").map(String::as_str), Some("20GB/s"), "{:?} {:?}", c.fitted, c.notes);
    let eff: f64 = c.fitted["efficiency.pcie"].parse().unwrap();
    assert!((eff - p.rates.eff_pcie4).abs() < 0.002, "{eff}");
    let across = rel(&c, "unidirectional_p2p_gbps", "GPU0", "GPU2");
    assert!(across.abs() < 0.003, "{across}");
    // Declared on no link the copies cross as peers: kept, and said.
    let unused = Machine::from_text(&text.replace("peer_bandwidth: 20GB/s", "peer_bandwidth: 60GB/s").replace("kind: xgmi", "kind: upi"), "upi").unwrap();
    let c = calibrate(&unused, &parse_measurements(&crate::tools::nvbandwidth::predict(&unused, &p).unwrap().text(), "upi.txt").unwrap(), &p, true).unwrap();
    assert!(c.notes.iter().any(|n| n.starts_with("peer_bandwidth.upi: no measured copy is limited by it")), "{:?}", c.notes);
}

/// Peer copies only (nvbandwidth's read matrix, NVIDIA/nvbandwidth#50) on a machine with no host
/// memory: the staged paths are not needed, so their absence is not a note.
#[test]
fn a_peer_only_measurement_does_not_ask_for_host_memory() {
    let text = "name: a6000x6
devices:
  - {name: RC0, kind: root_complex}
  - {name: SW0, kind: pcie_switch}
  - {name: SW1, kind: pcie_switch}
  - {name: GPU0, kind: gpu, model: NVIDIA RTX A6000}
  - {name: GPU1, kind: gpu, model: NVIDIA RTX A6000}
  - {name: GPU2, kind: gpu, model: NVIDIA RTX A6000}
  - {name: GPU3, kind: gpu, model: NVIDIA RTX A6000}
  - {name: GPU4, kind: gpu, model: NVIDIA RTX A6000}
  - {name: GPU5, kind: gpu, model: NVIDIA RTX A6000}
links:
  - {a: RC0, b: SW0, kind: pcie, gen: 4, lanes: 16}
  - {a: RC0, b: SW1, kind: pcie, gen: 4, lanes: 16}
  - {a: SW0, b: GPU0, kind: pcie, gen: 4, lanes: 16}
  - {a: SW0, b: GPU1, kind: pcie, gen: 4, lanes: 16}
  - {a: SW0, b: GPU2, kind: pcie, gen: 4, lanes: 16}
  - {a: SW1, b: GPU3, kind: pcie, gen: 4, lanes: 16}
  - {a: SW1, b: GPU4, kind: pcie, gen: 4, lanes: 16}
  - {a: SW1, b: GPU5, kind: pcie, gen: 4, lanes: 16}
";
    let m = Machine::from_text(text, "a6000x6").unwrap();
    let meas = parse_measurements(include_str!("../../tests/fixtures/nvbandwidth-6xa6000-read-ce.txt"), "nvb.txt").unwrap();
    let c = calibrate(&m, &meas, &MaxminParams::default(), false).unwrap();
    assert!(!c.notes.iter().any(|n| n.contains("host_memory")), "{:?}", c.notes);
    assert!(!c.residuals.is_empty());
}

/// The same read matrix on the host as an import describes it (two sockets joined by UPI, which
/// gives no peer access; PCIe Gen3 x16, 15.75 GB/s): nvbandwidth measures a peer copy only
/// where peer access is on (N/A elsewhere), so every measured pair across the sockets says the
/// machine and the measurement disagree, as p2pBandwidthLatencyTest's connectivity matrix does;
/// and the in-socket reads (26.3 GB/s) exceed Gen3's rate, so read_efficiency.pcie stops at its
/// bound 1, which says the links' bandwidth may be written too low.
#[test]
fn nvbandwidth_notes_pairs_without_peer_access_and_a_read_fit_at_its_bound() {
    let mut text = String::from("name: a6000x6\ndevices:\n  - {name: RC0, kind: root_complex}\n  - {name: RC1, kind: root_complex}\n");
    let mut links = String::from("  - {a: RC0, b: RC1, kind: upi, bandwidth: 20.8GB/s}\n");
    for g in 0..6 {
        text.push_str(&format!("  - {{name: GPU{g}, kind: gpu, model: NVIDIA RTX A6000}}\n"));
        links.push_str(&format!("  - {{a: RC{}, b: GPU{g}, kind: pcie, gen: 3, lanes: 16}}\n", g / 3));
    }
    let m = Machine::from_text(&format!("{text}links:\n{links}"), "a6000x6").unwrap();
    let meas = parse_measurements(include_str!("../../tests/fixtures/nvbandwidth-6xa6000-read-ce.txt"), "nvb.txt").unwrap();
    let read = meas.unidirectional_p2p_read_gbps.as_ref().unwrap();
    let c = calibrate(&m, &meas, &MaxminParams::default(), false).unwrap();
    let disagree =
        |i: usize, j: usize| c.notes.iter().any(|n| n.starts_with(&format!("GPU{i} -> GPU{j}: the machine says peer access no, the measurement says yes")));
    for (i, row) in read.iter().enumerate() {
        for (j, cell) in row.iter().enumerate().filter(|&(j, _)| j != i) {
            let across = i / 3 != j / 3;
            assert_eq!(disagree(i, j), across && cell.is_some(), "GPU{i} -> GPU{j}: {:?}", c.notes);
        }
    }
    assert_eq!(read.len(), 6);
    assert_eq!(c.fitted["read_efficiency.pcie"], "1");
    assert!(c.notes.iter().any(|n| n.starts_with("pcie links run at their full bandwidth in the fit (read_efficiency.pcie at its bound 1)")), "{:?}", c.notes);
}
