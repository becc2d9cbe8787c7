//! Datatype methods end to end: `contend datatype`'s comparison, and the methods as operations
//! of the executor in simulate and schedule.

use contend_core::api;
use contend_core::datatype::Datatype;
use contend_core::datatype_report::{compare, DatatypeReport, DatatypeRequest};
use contend_core::report::Detail;
use contend_core::topology::Machine;
use contend_core::workload::WorkloadSpec;

fn req(src: &str, dst: &str, count: u64) -> DatatypeRequest {
    DatatypeRequest { src: src.into(), dst: dst.into(), count, model: "maxmin".into(), params: vec![], kernels: vec![] }
}

fn run(machine: &str, ty: &str, src: &str, dst: &str) -> DatatypeReport {
    compare(&Machine::load(machine).unwrap(), &Datatype::load(ty).unwrap(), &req(src, dst, 1)).unwrap()
}

fn time(r: &DatatypeReport, method: &str) -> Option<f64> {
    r.methods.iter().find(|m| m.estimate.method.name() == method).unwrap().simulated_s
}

/// Alone on its path, the executor's time is the estimate's sum of parts, for every method.
#[test]
fn executor_times_equal_the_sum_of_parts_alone() {
    for (machine, src, dst) in [("dgx1-p100", "GPU0", "GPU1"), ("dgx-a100", "GPU0", "GPU5"), ("cs-storm", "GPU0", "GPU1"), ("dgx1-p100", "GPU0", "GPU5")] {
        for ty in ["milc-zdown", "jacobi-column", "cosmo-halo-ew", "jacobi-row", "wrf-halo"] {
            let r = run(machine, ty, src, dst);
            for m in &r.methods {
                let e = &m.estimate;
                assert_eq!(m.simulated_s.is_some(), e.total_s.is_some());
                if let (Some(s), Some(t)) = (m.simulated_s, e.total_s) {
                    assert!((s - t).abs() <= 1e-9 * t, "{machine} {ty} {:?}: {s} vs {t}", e.method);
                    assert!((e.before_s + e.latency_s + e.moving_s + e.after_s - t).abs() <= 1e-12 * t);
                }
            }
            let best = r.methods.iter().filter_map(|m| m.simulated_s).fold(f64::INFINITY, f64::min);
            assert_eq!(time(&r, &r.winner), Some(best), "{machine} {ty}");
        }
    }
}

/// Seed 001's claim in direction: load-store beats pack-copy-unpack for MILC over NVLink.
#[test]
fn zero_copy_wins_milc_on_nvlink_and_is_absent_without_peer_access() {
    let r = run("dgx1-p100", "milc-zdown", "GPU0", "GPU1");
    assert_eq!(r.winner, "zero-copy");
    assert!(time(&r, "pack").unwrap() > 1.5 * time(&r, "zero-copy").unwrap());
    // GPU0 and GPU5 are not NVLink neighbours and PCIe peer traffic cannot cross QPI.
    let r = run("dgx1-p100", "milc-zdown", "GPU0", "GPU5");
    assert_eq!(time(&r, "zero-copy"), None);
    assert!(r.methods.iter().any(|m| m.estimate.why_not.as_deref().is_some_and(|w| w.contains("peer access"))));
}

/// A contiguous message: pack copies it as it is (no kernels); zero-copy differs from it only
/// by its fixed costs when its stores reach the path's full capacity.
#[test]
fn contiguous_messages_cost_the_same_up_to_fixed_overheads() {
    let m = Machine::load("dgx1-p100").unwrap();
    let dt = Datatype::load("jacobi-row").unwrap();
    let mut q = req("GPU0", "GPU1", 64);
    q.kernels = vec![("ls_eff_nvlink".into(), "1".into()), ("ls_block_nvlink".into(), "0B".into())];
    let r = compare(&m, &dt, &q).unwrap();
    let pack = r.methods.iter().find(|m| m.estimate.method.name() == "pack").unwrap();
    let zc = r.methods.iter().find(|m| m.estimate.method.name() == "zero-copy").unwrap();
    assert_eq!((pack.estimate.before_s, pack.estimate.after_s), (0.0, 0.0));
    assert!((pack.estimate.moving_s - zc.estimate.moving_s).abs() < 1e-15);
    let fixed = |e: &contend_core::flow::methods::Estimate| e.before_s + e.latency_s + e.after_s;
    let diff = zc.simulated_s.unwrap() - pack.simulated_s.unwrap();
    assert!((diff - (fixed(&zc.estimate) - fixed(&pack.estimate))).abs() < 1e-12);
}

/// More blocks of the same bytes: never faster, by any method.
#[test]
fn more_blocks_of_the_same_bytes_are_never_faster() {
    let m = Machine::load("dgx1-p100").unwrap();
    let mut last = [0.0f64; 3];
    for stride in [1, 2, 4, 8] {
        // 4096 doubles in blocks of 4096 / stride... as a vector of `stride`-element blocks.
        let bl = 64 / stride;
        let text = format!("type: {{vector: {{count: {}, blocklength: {bl}, stride: {}, of: double}}}}", 4096 / bl, 2 * bl);
        let dt = Datatype::from_text(&text, "t").unwrap();
        let r = compare(&m, &dt, &req("GPU0", "GPU1", 1)).unwrap();
        for (k, row) in r.methods.iter().enumerate() {
            let t = row.simulated_s.unwrap();
            assert!(t >= last[k] * (1.0 - 1e-12), "{:?} {stride}", row.estimate.method);
            last[k] = t;
        }
    }
}

/// In simulate, the methods are operations of the one executor: an adaptive message's time is
/// its chosen method's, contention applies to the copy, and the report shows the decision.
#[test]
fn simulate_honours_methods_and_reports_decisions() {
    let m = Machine::load("dgx1-p100").unwrap();
    let text = "transfers:\n  - {name: a, src: GPU0, dst: GPU1, size: 98304B, datatype: milc-zdown, method: adaptive}\n  - {name: b, src: GPU0, dst: GPU1, size: 98304B, datatype: milc-zdown, method: pack}\n  - {name: c, src: GPU2, dst: GPU3, size: 64MiB}\n  - {name: d, src: GPU2, dst: GPU3, size: 64MiB, datatype: jacobi-row, method: zero-copy}\n";
    let spec = WorkloadSpec::from_text(text, "w.yaml").unwrap();
    let r = api::simulate(&m, &spec, "w.yaml", Some("maxmin"), &[], Detail::default()).unwrap();
    let methods = r.methods.as_ref().unwrap();
    assert_eq!(methods.transfer, vec![0, 1, 3]);
    assert_eq!(methods.chosen, vec!["zero-copy", "pack", "zero-copy"]);
    assert!(methods.margin_s[0] > 0.0);
    // c and d share GPU2→GPU3: d's stores are capped below the link, c takes the rest.
    let alone = api::simulate(
        &m,
        &WorkloadSpec::from_text("transfers:\n  - {src: GPU2, dst: GPU3, size: 64MiB}\n", "w").unwrap(),
        "w",
        Some("maxmin"),
        &[],
        Detail::default(),
    )
    .unwrap();
    assert!(r.transfers.duration_s[2] > alone.transfers.duration_s[0] * 1.2);
    // sc16 cannot cap a flow: zero-copy is refused in one line, pack runs.
    let e = api::simulate(&m, &spec, "w.yaml", Some("sc16"), &[], Detail::default()).unwrap_err().to_string();
    assert!(!e.contains('\n'));
}

#[test]
fn bad_methods_and_datatypes_get_one_line() {
    let m = Machine::load("dgx1-p100").unwrap();
    let cases = [
        ("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, method: teleport}\n", "unknown variant"),
        ("transfers:\n  - {src: GPU0, dst: GPU1, size: 1000B, datatype: milc-zdown}\n", "transfers[0].size: 1000 B is not a whole number of milc-zdown"),
        ("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, datatype: nope}\n", "transfers[0].datatype"),
        ("transfers:\n  - {src: GPU0, dst: GPU5, size: 98304B, datatype: milc-zdown, method: zero-copy}\n", "peer access"),
        ("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, method: pack, mechanism: p2p}\n", "not both"),
        ("kernels: {launch: 5}\ntransfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, method: pack}\n", "kernels"),
        (
            "datatypes:\n  bad: {vector: {count: 2, blocklength: 2, stride: -1, of: int}}\ntransfers:\n  - {src: GPU0, dst: GPU1, size: 16B, datatype: bad}\n",
            "datatypes.bad.vector.stride: negative stride",
        ),
    ];
    for (text, needle) in cases {
        let e = WorkloadSpec::from_text(text, "w.yaml")
            .and_then(|s| api::simulate(&m, &s, "w.yaml", Some("maxmin"), &[], Detail::default()))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("w.yaml: "), "{e}");
        assert!(e.contains(needle), "{needle}: {e}");
        assert!(!e.contains('\n'), "{e}");
    }
}

/// Between nodes a GPU cannot store into another's memory: zero-copy is not offered there. (A
/// DGX-1 has 4 NICs, each a leaf port: radix 12 leaves 6 ports after 6 aggregates, one node a leaf.)
#[test]
fn zero_copy_stays_inside_a_node() {
    let cluster =
        "name: c\nfabric:\n  fat_tree: {radix: 12, pods: 2}\nlink: {bandwidth: 11.9GB/s, latency: 100ns, router_delay: 60ns}\nnodes: {machine: dgx1-p100, count: 4}\n";
    let m = Machine::from_text(cluster, "c.yaml").unwrap();
    let dt = Datatype::load("milc-zdown").unwrap();
    let r = compare(&m, &dt, &req("n0.GPU0", "n1.GPU0", 1)).unwrap();
    let zc = r.methods.iter().find(|m| m.estimate.method.name() == "zero-copy").unwrap();
    assert!(zc.simulated_s.is_none() && zc.estimate.why_not.as_deref().unwrap().contains("different nodes"));
    let r = compare(&m, &dt, &req("n0.GPU0", "n0.GPU1", 1)).unwrap();
    assert_eq!(r.winner, "zero-copy");
}
