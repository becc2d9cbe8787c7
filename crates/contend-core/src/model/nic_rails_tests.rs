//! A NIC whose ports a net plugin schedules per message (`Device::stripe_threshold`, flow/rails.rs),
//! from the scheduler's definition (aws-ofi-nccl src/nccl_ofi_scheduler.c): a message of at most
//! the threshold moves over one port, at one port's rate; a larger one over all of them; small
//! messages posted together take the ports in turn.

use crate::model::registry;
use crate::sim::{self, Outcome};
use crate::topology::Machine;
use crate::workload::{Workload, WorkloadSpec};

/// One port's rate: each NIC has four, on a network link of 4 × 10 GB/s.
const PORT: f64 = 10e9;
const THRESHOLD: u64 = 256 * 1024;

/// Two nodes on one switch, each a GPU behind a NIC of four 10 GB/s ports (PCIe 100 GB/s), no
/// latency anywhere; `nic` is written into both NICs' entries.
fn star(nic: &str) -> Machine {
    let mut text = String::from("name: star\ndevices:\n  - {name: sw0, kind: switch}\n");
    for i in 0..2 {
        text.push_str(&format!("  - {{name: n{i}.GPU0, kind: gpu, latency: 0s}}\n  - {{name: n{i}.NIC0, kind: nic, latency: 0s, ports: 4{nic}}}\n"));
    }
    text.push_str("links:\n");
    for i in 0..2 {
        text.push_str(&format!("  - {{a: n{i}.NIC0, b: n{i}.GPU0, kind: pcie, bandwidth: 100GB/s, latency: 0s}}\n"));
        text.push_str(&format!("  - {{a: n{i}.NIC0, b: sw0, kind: network, bandwidth: 40GB/s, latency: 0s}}\n"));
    }
    Machine::from_text(&text, "star").unwrap()
}

fn rails() -> Machine {
    star(&format!(", stripe_threshold: {THRESHOLD}B"))
}

/// `transfers`: (src node, dst node, bytes), all issued at once.
fn run(model: &str, m: &Machine, transfers: &[(u32, u32, u64)]) -> Result<Outcome, String> {
    let mut text = String::from("transfers:\n");
    for (a, b, size) in transfers {
        text.push_str(&format!("  - {{src: n{a}.GPU0, dst: n{b}.GPU0, size: {size}B}}\n"));
    }
    let w = Workload::resolve(&WorkloadSpec::from_text(&text, "w").unwrap(), m, "w").unwrap();
    let prepared = registry::get(model).unwrap().prepare(m, &w, &[]).map_err(|e| e.to_string())?;
    Ok(sim::run_prepared(&w, prepared.as_ref(), false).unwrap())
}

fn close(got: f64, want: f64) -> bool {
    (got - want).abs() <= 1e-9 * want
}

#[test]
fn a_lone_message_up_to_the_threshold_takes_one_ports_rate() {
    for size in [64 * 1024, THRESHOLD] {
        let t = run("maxmin", &rails(), &[(0, 1, size)]).unwrap().finish[0];
        assert!(close(t, size as f64 / PORT), "{size} B: {t}");
    }
    // Without the scheduler the NIC's ports carry every message together.
    let t = run("maxmin", &star(""), &[(0, 1, 64 * 1024)]).unwrap().finish[0];
    assert!(close(t, 65536.0 / (4.0 * PORT)), "{t}");
}

#[test]
fn a_lone_message_above_the_threshold_is_striped_over_every_port() {
    for size in [THRESHOLD + 128, 4 << 20] {
        let t = run("maxmin", &rails(), &[(0, 1, size)]).unwrap().finish[0];
        assert!(close(t, size as f64 / (4.0 * PORT)), "{size} B: {t}");
    }
}

#[test]
fn small_messages_posted_together_take_the_ports_in_turn() {
    let small = 64 * 1024u64;
    let one = small as f64 / PORT;
    // Four: one on each port, all at one port's rate.
    let four = run("maxmin", &rails(), &[(0, 1, small); 4]).unwrap().finish;
    assert!(four.iter().all(|&t| close(t, one)), "{four:?}");
    // Five: the fifth takes port 0 again and shares it with the first.
    let five = run("maxmin", &rails(), &[(0, 1, small); 5]).unwrap().finish;
    let want = [2.0 * one, one, one, one, 2.0 * one];
    assert!(five.iter().zip(want).all(|(&t, w)| close(t, w)), "{five:?}");
    // Each NIC keeps its own turn: four each way, one port each, every message at one port's rate.
    let both =
        run("maxmin", &rails(), &[(0, 1, small), (1, 0, small), (0, 1, small), (1, 0, small), (0, 1, small), (1, 0, small), (0, 1, small), (1, 0, small)])
            .unwrap()
            .finish;
    assert!(both.iter().all(|&t| close(t, one)), "{both:?}");
}

#[test]
fn the_nic_release_refinements_are_refused_on_a_nic_with_rails() {
    // Both reason about the NIC's one injection link, not its rails' resources.
    let run_with = |m: &Machine, p: &str| {
        let w = Workload::resolve(&WorkloadSpec::from_text("transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 1024B}\n", "w").unwrap(), m, "w").unwrap();
        let pairs = [(p.to_string(), "on".to_string())];
        registry::get("maxmin").unwrap().prepare(m, &w, &pairs).map(|_| ()).map_err(|e| e.to_string())
    };
    for p in ["release_frees_nic", "head_priority"] {
        let e = run_with(&rails(), p).unwrap_err();
        assert!(e.contains(p) && e.contains("stripe_threshold") && !e.contains('\n'), "{e}");
        assert!(run_with(&star(""), p).is_ok(), "{p}");
    }
}

#[test]
fn a_model_without_ports_refuses_in_one_line() {
    let e = run("packet", &rails(), &[(0, 1, 1024)]).err().unwrap();
    assert!(e.contains("stripe_threshold") && e.contains("use --model maxmin") && !e.contains('\n'), "{e}");
    // Without the scheduler packet runs as before.
    assert!(run("packet", &star(""), &[(0, 1, 1024)]).is_ok());
    // sc16 refuses a message between nodes with or without it, as for any NIC.
    for m in [rails(), star("")] {
        let e = run("sc16", &m, &[(0, 1, 1024)]).err().unwrap();
        assert!(e.contains("sc16") && !e.contains('\n'), "{e}");
    }
}

#[test]
fn a_threshold_needs_a_nic_of_several_ports() {
    let bad = |d: &str| Machine::from_text(&format!("name: h\ndevices:\n  - {d}\nlinks: []\n"), "h.yaml").err().unwrap().to_string();
    assert!(bad("{name: GPU0, kind: gpu, stripe_threshold: 8KiB}").starts_with("h.yaml: devices[0].stripe_threshold: applies to NICs only"));
    assert!(bad("{name: NIC0, kind: nic, stripe_threshold: 8KiB}").contains("give the NIC ports: 2 or more"));
}
