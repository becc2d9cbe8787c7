use super::*;
use crate::model::sc16::{Sc16Params, Sc16Prepared};
use crate::model::{registry, RateAdaptor};
use crate::sim::{self, Outcome};
use crate::topology::Machine;
use crate::units::{Bytes, Time};
use crate::workload::{generate_rng, random_graph, TransferRef, WorkloadSpec};

const MIB: f64 = 1048576.0;

fn workload(m: &Machine, text: &str) -> Workload {
    Workload::resolve(&WorkloadSpec::from_text(text, "w").unwrap(), m, "w").unwrap()
}

fn run(m: &Machine, w: &Workload, p: &MaxminParams, record: bool) -> Result<Outcome> {
    sim::run_prepared(w, &MaxminPrepared::new(m, w, *p)?, record)
}

fn compile(m: &Machine, w: &Workload, p: &MaxminParams) -> Result<FlowTable> {
    Ok(MaxminPrepared::new(m, w, *p)?.flows)
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1e-12)
}

/// Seeded random graphs with staggered starts and dependencies, on every GPU of `m`.
pub(super) fn random_workload(m: &Machine, seed: u64, count: usize) -> Workload {
    let mut spec = WorkloadSpec { transfers: random_graph(&m.gpu_names(), count, Bytes(1), seed), ..Default::default() };
    let mut rng = generate_rng(seed);
    for (i, t) in spec.transfers.iter_mut().enumerate() {
        t.size = Bytes(1 + (rng.unit() * 64.0 * MIB) as u64);
        if rng.unit() < 0.3 {
            t.start = Some(Time::from_secs(rng.unit() * 0.01));
        }
        if i > 0 && rng.unit() < 0.2 {
            t.after = vec![TransferRef::Index((rng.next_u64() % i as u64) as usize)];
        }
    }
    // Repeat some pairs, so that routes carry several transfers at once.
    for i in 1..spec.transfers.len() {
        if rng.unit() < 0.3 {
            let j = (rng.next_u64() % i as u64) as usize;
            let (src, dst) = (spec.transfers[j].src.clone(), spec.transfers[j].dst.clone());
            (spec.transfers[i].src, spec.transfers[i].dst) = (src, dst);
        }
    }
    Workload::resolve(&spec, m, "random").unwrap()
}

/// The incremental engine against the generic phase engine, which refills everything at every
/// event. Without latencies and pipeline fill the two must agree. (Checked once on 2,000
/// workloads of up to 300 transfers on five presets; kept small here for the debug build.)
#[test]
fn incremental_engine_matches_full_recomputation() {
    let p = MaxminParams { staging_chunk: 0.0, ..Default::default() };
    for name in ["cs-storm", "dgx1-p100", "dgx-a100"] {
        let m = Machine::load(name).unwrap();
        for seed in 0..25u64 {
            let w = random_workload(&m, seed, 1 + (seed as usize * 13) % 150);
            let fast = run(&m, &w, &p, false).unwrap();
            let prepared = MaxminPrepared::new(&m, &w, p).unwrap();
            let mut full = RateAdaptor::new(prepared.rate_model().unwrap(), &prepared.flows);
            let slow = sim::run(&w, &prepared.flows, &mut full, false, true).unwrap();
            for i in 0..w.transfers.len() {
                assert!(close(fast.start[i], slow.start[i], 1e-9), "{name} seed {seed} start {i}: {} vs {}", fast.start[i], slow.start[i]);
                assert!(close(fast.finish[i], slow.finish[i], 1e-9), "{name} seed {seed} finish {i}: {} vs {}", fast.finish[i], slow.finish[i]);
            }
        }
    }
}

/// The same with a duplex loss per direction on every PCIe link, where both engines iterate
/// capacities and rates to their fixed point (the engine by rebalancing what moved, the full
/// recomputation by refilling everything): they must meet. (Checked once on 600 workloads of
/// up to 300 transfers; kept small here for the debug build.)
#[test]
fn incremental_engine_matches_full_recomputation_with_duplex_per_direction() {
    let p = MaxminParams { staging_chunk: 0.0, ..Default::default() };
    for name in ["cs-storm", "typical-8gpu", "dgx1-p100"] {
        let mut spec = Machine::load(name).unwrap().spec;
        for l in spec.links.iter_mut().filter(|l| l.kind == crate::topology::LinkKind::Pcie) {
            (l.duplex, l.duplex_upstream, l.duplex_downstream) = (None, Some(0.35), Some(0.07));
        }
        let m = Machine::from_spec(spec, name).unwrap();
        for seed in 0..12u64 {
            let w = random_workload(&m, seed, 1 + (seed as usize * 13) % 120);
            let fast = run(&m, &w, &p, false).unwrap();
            let prepared = MaxminPrepared::new(&m, &w, p).unwrap();
            assert!(!prepared.flows.duplex_pairs.is_empty());
            // Recording the link loads (every resource each rebalance touched) changes nothing.
            assert_eq!(run(&m, &w, &p, true).unwrap().finish, fast.finish);
            let mut full = RateAdaptor::new(prepared.rate_model().unwrap(), &prepared.flows);
            let slow = sim::run(&w, &prepared.flows, &mut full, false, true).unwrap();
            for i in 0..w.transfers.len() {
                assert!(close(fast.finish[i], slow.finish[i], 1e-7), "{name} seed {seed} finish {i}: {} vs {}", fast.finish[i], slow.finish[i]);
            }
        }
    }
}

/// The same on small clusters, where refills reach across a network and are first narrowed
/// to full resources: random traffic with staggered starts, RR, RR-2, RR-4 and FCFS NICs (whose
/// admissions join transfers at the instant another finishes), every routing kind.
#[test]
fn incremental_engine_matches_full_recomputation_on_clusters() {
    let p = MaxminParams { staging_chunk: 0.0, ..Default::default() };
    let fabrics = [
        "fabric:\n  dragonfly: {p: 2, a: 4, h: 2, groups: 5}\nlink: {bandwidth: 10GB/s, latency: 100ns}\nnodes: {gpus: 2}\n",
        "fabric:\n  fat_tree: {radix: 8, pods: 2}\nlink: {bandwidth: 10GB/s, latency: 100ns}\nnodes: {gpus: 1}\n",
    ];
    for (f, fabric) in fabrics.iter().enumerate() {
        for (nic, routing) in [("rr", "ecmp"), ("rr", "adaptive"), ("fcfs", "ecmp"), ("rr-2", "spray"), ("rr", "spray"), ("rr-4", "adaptive")] {
            let m = Machine::from_text(&format!("name: c\n{fabric}network: {{routing: {routing}, nic_scheduling: {nic}}}\n"), "c").unwrap();
            for seed in 0..4u64 {
                let w = random_workload(&m, seed, 60 + 40 * seed as usize);
                let fast = run(&m, &w, &p, false).unwrap();
                let prepared = MaxminPrepared::new(&m, &w, p).unwrap();
                let mut full = RateAdaptor::new(prepared.rate_model().unwrap(), &prepared.flows);
                let slow = sim::run(&w, &prepared.flows, &mut full, false, true).unwrap();
                for i in 0..w.transfers.len() {
                    assert!(
                        close(fast.finish[i], slow.finish[i], 1e-9),
                        "fabric {f} {nic} {routing} seed {seed} finish {i}: {} vs {}",
                        fast.finish[i],
                        slow.finish[i]
                    );
                }
            }
        }
    }
}

/// Max-min feasibility and fairness in every phase, and bytes conserved, latencies included.
#[test]
fn phases_are_feasible_fair_and_conserve_bytes() {
    let m = Machine::load("typical-8gpu").unwrap();
    let p = MaxminParams::default();
    for seed in 0..30u64 {
        let w = random_workload(&m, seed, 1 + (seed as usize * 7) % 50);
        let o = run(&m, &w, &p, true).unwrap();
        let c = compile(&m, &w, &p).unwrap();
        let mut sent = vec![0.0; w.transfers.len()];
        for ph in &o.phases {
            let mut load = vec![0.0; c.cap.len()];
            for (&i, &r) in ph.active.iter().zip(&ph.rates) {
                sent[i] += r * (ph.end - ph.start);
                for &(l, a) in c.routes.of(c.route_of[i] as usize) {
                    load[l as usize] += a * r;
                }
            }
            for (l, &x) in load.iter().enumerate() {
                assert!(x <= c.cap[l] * (1.0 + 1e-9), "seed {seed}: {} over capacity", c.name[l]);
            }
            // Every flow has a full resource on which no other flow is faster.
            for (&i, &r) in ph.active.iter().zip(&ph.rates) {
                let bottleneck = c.routes.of(c.route_of[i] as usize).iter().any(|&(l, _)| {
                    load[l as usize] >= c.cap[l as usize] * (1.0 - 1e-9)
                        && ph
                            .active
                            .iter()
                            .zip(&ph.rates)
                            .all(|(&j, &rj)| rj <= r * (1.0 + 1e-9) || c.routes.of(c.route_of[j] as usize).iter().all(|&(l2, _)| l2 != l))
                });
                assert!(bottleneck, "seed {seed}: transfer {i} has no bottleneck");
            }
        }
        for (i, t) in w.transfers.iter().enumerate() {
            assert!(close(sent[i], c.volume[i], 1e-6), "seed {seed}: bytes of {i}");
            assert!(o.finish[i] >= o.start[i] + c.plan(i).latency - 1e-15);
            assert!(o.start[i] >= t.start);
        }
    }
}

#[test]
fn a_lone_copy_takes_latency_plus_volume_over_its_narrowest_link() {
    let m = Machine::load("typical-8gpu").unwrap();
    let w = workload(&m, "transfers:\n  - {src: GPU0, dst: GPU2, size: 100MB}\n");
    let o = run(&m, &w, &MaxminParams::default(), false).unwrap();
    let expect = 7.9e-6 + 100e6 / (15.753846e9 * 0.622);
    assert!(close(o.finish[0], expect, 1e-6), "{} vs {expect}", o.finish[0]);
}

/// Where the SC16 rules reduce to fair sharing (no root-complex crossing at a congested port,
/// no head-of-line blocking), sc16 with B = the link bandwidth and maxmin agree.
#[test]
fn agrees_with_sc16_where_sc16_is_fair_sharing() {
    // sc16 has no latency: compare on the machine with its default latencies written as 0.
    let m = without_latency("cs-storm-socket");
    let b = m.links[0].bandwidth;
    let scenarios = [
        // Several copies out of one GPU (step A: 1/3 each; nothing else congested).
        "transfers:\n  - {src: GPU0, dst: GPU1, size: 300MiB}\n  - {src: GPU0, dst: GPU2, size: 200MiB}\n  - {src: GPU0, dst: GPU4, size: 100MiB}\n",
        // Copies meeting at GPU7 through two ingress ports of K3, neither crossing the root.
        "transfers:\n  - {src: GPU4, dst: GPU7, size: 300MiB}\n  - {src: GPU6, dst: GPU7, size: 300MiB}\n",
        // Disjoint pairs, one later, one after another.
        "transfers:\n  - {name: a, src: GPU0, dst: GPU1, size: 64MiB}\n  - {src: GPU2, dst: GPU3, size: 64MiB, start: 1ms}\n  - {src: GPU1, dst: GPU0, size: 32MiB, after: [a]}\n",
    ];
    for text in scenarios {
        let w = workload(&m, text);
        let s = sim::run_prepared(&w, &Sc16Prepared::new(&m, &w, Sc16Params { bandwidth: Some(b), ..Default::default() }).unwrap(), false).unwrap();
        let p = MaxminParams { rates: LinkRates { eff_pcie: 1.0, ..Default::default() }, ..Default::default() };
        let x = run(&m, &w, &p, false).unwrap();
        for i in 0..w.transfers.len() {
            assert!(close(s.finish[i], x.finish[i], 1e-9), "{text}: {i}: sc16 {} maxmin {}", s.finish[i], x.finish[i]);
            assert!(close(s.start[i], x.start[i], 1e-9));
        }
    }
}

/// Seed 004: 70 GB/s of CPU memory shared by 9 bidirectional staged pairs, each byte written
/// and read once: 70 / 36 = 1.94 GB/s per pair and direction.
#[test]
fn staging_shares_host_memory_as_in_seed_004() {
    let mut text = String::from("name: star\ndevices:\n  - {name: RC, kind: root_complex}\n  - {name: MEM, kind: host_memory}\n");
    let mut links = String::from("links:\n  - {a: RC, b: MEM, kind: memory, bandwidth: 70GB/s}\n");
    let mut transfers = String::from("transfers:\n");
    for g in 0..18 {
        text.push_str(&format!("  - {{name: G{g}, kind: gpu}}\n"));
        links.push_str(&format!("  - {{a: RC, b: G{g}, kind: pcie, gen: 3, lanes: 16}}\n"));
    }
    for k in 0..9 {
        let (a, b) = (2 * k, 2 * k + 1);
        transfers.push_str(&format!("  - {{src: G{a}, dst: G{b}, size: 1GB}}\n  - {{src: G{b}, dst: G{a}, size: 1GB}}\n"));
    }
    let m = Machine::from_text(&(text + &links), "star").unwrap();
    let w = workload(&m, &transfers);
    // Peer access off, as in the seed's staging pipeline. The seed's 70 GB/s is what its memory
    // sustains for this traffic, writes and reads alike: write efficiency 1.
    let p = MaxminParams { staging_chunk: 0.0, p2p: false, write_memory: 1.0, ..Default::default() };
    let o = run(&m, &w, &p, true).unwrap();
    for r in &o.phases[0].rates {
        assert!(close(*r, 70e9 / 36.0, 1e-12), "{r}");
    }
    assert!((o.phases[0].rates[0] / 1e9 - 1.94).abs() < 0.005);
}

/// Staged copies both ways lose `duplex_staged` (empirical, 0.66) on their links unless the host
/// memory says its own `staging_duplex`: 2 / 1.66 of one way where the links bound them.
#[test]
fn staged_copies_both_ways_lose_the_staged_duplex() {
    let machine = |memory: &str| {
        let text = format!("name: two\ndevices:\n  - {{name: RC, kind: root_complex}}\n  - {{name: MEM, kind: host_memory{memory}}}\n  - {{name: G0, kind: gpu}}\n  - {{name: G1, kind: gpu}}\nlinks:\n  - {{a: RC, b: MEM, kind: memory, bandwidth: 500GB/s}}\n  - {{a: RC, b: G0, kind: pcie, gen: 4, lanes: 16, p2p: false}}\n  - {{a: RC, b: G1, kind: pcie, gen: 4, lanes: 16, p2p: false}}\n");
        Machine::from_text(&text, "two").unwrap()
    };
    let rate = |m: &Machine, p: &MaxminParams, both: bool| {
        let back = if both { "  - {src: G1, dst: G0, size: 1GB}\n" } else { "" };
        let w = workload(m, &format!("transfers:\n  - {{src: G0, dst: G1, size: 1GB}}\n{back}"));
        run(m, &w, p, true).unwrap().phases[0].rates[0]
    };
    let p = MaxminParams { staging_chunk: 0.0, ..Default::default() };
    let m = machine("");
    assert!(close(rate(&m, &p, true) / rate(&m, &p, false), 1.0 / 1.66, 1e-9), "{}", rate(&m, &p, true) / rate(&m, &p, false));
    let own = machine(", staging_duplex: 0.25");
    assert!(close(rate(&own, &p, true) / rate(&own, &p, false), 1.0 / 1.25, 1e-9));
    let off = MaxminParams { duplex_staged: 0.0, ..p };
    assert!(close(rate(&m, &off, true) / rate(&m, &off, false), 1.0, 1e-9));
}

#[test]
fn params_parse_and_refuse() {
    let kv = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
    assert_eq!(MaxminParams::parse(&kv("eff_nvlink", "0.94")).unwrap().rates.eff_nvlink, 0.94);
    // Given alone, the NVLink-wide values set every generation's, as eff_pcie does PCIe's.
    let p =
        MaxminParams::parse(&[("eff_nvlink".into(), "0.94".into()), ("duplex_nvlink".into(), "0.05".into()), ("eff_nvlink4".into(), "0.9".into())]).unwrap();
    assert_eq!((p.rates.eff_nvlink2, p.rates.eff_nvlink4, p.duplex_nvlink2, p.duplex_nvlink4), (0.94, 0.9, 0.05, 0.05));
    assert_eq!(MaxminParams::parse(&kv("staging_chunk", "1MiB")).unwrap().staging_chunk, MIB);
    assert!(!MaxminParams::parse(&kv("p2p", "off")).unwrap().p2p);
    assert!(MaxminParams::parse(&kv("eff_pcie", "1.5")).unwrap_err().to_string().contains("(0, 1]"));
    assert!(MaxminParams::parse(&kv("tau", "0.2")).unwrap_err().to_string().contains("known: eff_pcie"));
}

#[test]
fn registered_and_refusing_sc16_points_here() {
    let m = Machine::load("cs-storm").unwrap();
    let w = workload(&m, "transfers:\n  - {src: GPU0, dst: GPU8, size: 1MiB}\n");
    assert!(registry::get("maxmin").unwrap().prepare(&m, &w, &[]).is_ok());
    let e = registry::get("sc16").unwrap().prepare(&m, &w, &[]).err().unwrap().to_string();
    assert!(e.contains("--model maxmin"), "{e}");
}

/// With a quantum, a transfer moves its first byte at the next multiple of it.
#[test]
fn quantum_delays_joins_to_its_grid() {
    let m = without_latency("cs-storm-socket");
    let w = workload(&m, "transfers:\n  - {src: GPU0, dst: GPU1, size: 100MB, start: 300us}\n");
    let exact = run(&m, &w, &MaxminParams::default(), false).unwrap();
    let coarse = run(&m, &w, &MaxminParams { quantum: 1e-3, ..Default::default() }, false).unwrap();
    assert_eq!(exact.start[0], 3e-4);
    assert!(close(coarse.finish[0] - exact.finish[0], 1e-3 - 3e-4, 1e-9), "{} vs {}", coarse.finish[0], exact.finish[0]);
    assert!(MaxminParams::parse(&[("quantum".into(), "5".into())]).unwrap_err().to_string().contains("no unit"));
}

/// A preset with every latency written as 0 (no default applies).
fn without_latency(name: &str) -> Machine {
    let mut spec = Machine::load(name).unwrap().spec;
    spec.devices.iter_mut().for_each(|d| d.latency = Some(crate::units::Time(0)));
    spec.links.iter_mut().for_each(|l| l.latency = Some(crate::units::Time(0)));
    Machine::from_spec(spec, name).unwrap()
}

/// PCIe efficiency per generation: a lone large copy over one x16 link of each generation moves
/// at its nominal rate (2.5, 5, 8, 16, 32, 64 GT/s x 16 lanes; 8b/10b to Gen2, 128b/130b to Gen5,
/// Gen6's flits 242 of 256 bytes) times that generation's efficiency;
/// `eff_pcie` given alone sets every generation; a link's own efficiency wins.
#[test]
fn pcie_efficiency_per_generation() {
    let nominal = |gen: u8| match gen {
        1 => 2.5e9 * 16.0 * 0.8 / 8.0,
        2 => 5e9 * 16.0 * 0.8 / 8.0,
        6 => 64e9 * 16.0 * 242.0 / 256.0 / 8.0,
        g => [8e9, 16e9, 32e9][g as usize - 3] * 16.0 * 128.0 / 130.0 / 8.0,
    };
    let rate = |gen: u8, extra: &str, params: &[(&str, &str)]| {
        let text = format!(
            "name: g\ndevices:\n  - {{name: RC, kind: root_complex}}\n  - {{name: MEM, kind: host_memory, latency: 0s}}\n  - {{name: GPU0, kind: gpu, latency: 0s}}\nlinks:\n  - {{a: RC, b: GPU0, kind: pcie, gen: {gen}, lanes: 16, latency: 0s{extra}}}\n  - {{a: RC, b: MEM, kind: memory, bandwidth: 1TB/s, latency: 0s}}\n"
        );
        let m = Machine::from_text(&text, "g").unwrap();
        let w = workload(&m, "transfers:\n  - {src: GPU0, dst: MEM, size: 1GB}\n");
        let pairs: Vec<(String, String)> = params.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let p = MaxminParams::parse(&pairs).unwrap();
        1e9 / run(&m, &w, &p, false).unwrap().makespan()
    };
    for (gen, eff) in [(1, 0.79), (2, 0.79), (3, 0.79), (4, 0.835), (5, 0.876), (6, 0.876)] {
        assert!(close(rate(gen, "", &[]), nominal(gen) * eff, 1e-9), "Gen{gen}");
    }
    assert!(close(rate(5, "", &[("eff_pcie", "0.7")]), nominal(5) * 0.7, 1e-9));
    assert!(close(rate(5, "", &[("eff_pcie", "0.7"), ("eff_pcie5", "0.9")]), nominal(5) * 0.9, 1e-9));
    assert!(close(rate(4, "", &[("eff_pcie", "0.7")]), nominal(4) * 0.7, 1e-9));
    assert!(close(rate(5, ", efficiency: 0.5", &[]), nominal(5) * 0.5, 1e-9));
}

/// A FCFS NIC under `nic_release = buffered` takes its next message once its head's bytes left
/// fit in the buffers ahead (one switch of 10 packets of 1000 B: 10 kB), not when the head is
/// delivered. NIC0 sends a (100 kB to NIC1) then b (5 kB to NIC2); c (100 kB, NIC2 to NIC1)
/// halves a's rate on SW→NIC1 to 5 GB/s. a has 10 kB left at 18 µs: b starts then, at the 5 GB/s
/// that a leaves of NIC0→SW, and is done at 19 µs; waiting for a's delivery (20 µs) it would be
/// done at 20.5 µs. Store and forward: one switch adds one packet at 10 GB/s, 0.1 µs.
#[test]
fn fcfs_nic_moves_on_once_its_head_fits_in_the_buffers_ahead() {
    let link = "kind: network, bandwidth: 10GB/s, latency: 0s";
    let m = Machine::from_text(
        &format!(
            "name: star\nnetwork: {{nic_scheduling: fcfs, packet: 1000B, buffer_packets: 10}}\ndevices:\n  - {{name: NIC0, kind: nic, latency: 0s}}\n  - {{name: NIC1, kind: nic, latency: 0s}}\n  - {{name: NIC2, kind: nic, latency: 0s}}\n  - {{name: SW, kind: switch}}\nlinks:\n  - {{a: NIC0, b: SW, {link}}}\n  - {{a: NIC1, b: SW, {link}}}\n  - {{a: NIC2, b: SW, {link}}}\n"
        ),
        "star",
    )
    .unwrap();
    let w =
        workload(&m, "transfers:\n  - {src: NIC0, dst: NIC1, size: 100kB}\n  - {src: NIC0, dst: NIC2, size: 5kB}\n  - {src: NIC2, dst: NIC1, size: 100kB}\n");
    let at = |release: NicRelease, store_forward: bool| {
        let o = run(&m, &w, &MaxminParams { nic_release: release, store_forward, ..Default::default() }, false).unwrap();
        o.finish
    };
    let f = at(NicRelease::Buffered, false);
    assert!(close(f[1], 19e-6, 1e-6) && close(f[0], 20e-6, 1e-6), "{f:?}");
    let f = at(NicRelease::Delivered, false);
    assert!(close(f[1], 20.5e-6, 1e-6) && close(f[0], 20e-6, 1e-6), "{f:?}");
    let f = at(NicRelease::Delivered, true);
    assert!(close(f[0], 20.1e-6, 1e-6), "{f:?}");
}

/// Under `nic_release = shared` the head counts on its share of each device's input buffer.
/// NIC0 and NIC2 hang on SW0, NIC1 and NIC3 on SW1; every link 10 GB/s, buffers of 10 packets
/// of 1000 B (10 kB). NIC0 sends a (100 kB to NIC1) then b (5 kB to NIC2); e (100 kB, NIC2 to
/// NIC3) shares SW0→SW1 with a, and c (100 kB, NIC3 to NIC1) halves a's rate on SW1→NIC1 to
/// 5 GB/s (so a is delivered at 20 µs). a's path enters SW0 (its own port: 10 kB) and SW1 over
/// SW0→SW1, which a and e cross (5 kB of the 10 kB). Buffered: a's 20 kB are left at 16 µs, b
/// moves at the 5 GB/s a leaves of NIC0→SW0 and is done at 17 µs; shared: 15 kB at 17 µs, b
/// done at 18 µs.
#[test]
fn shared_release_counts_the_heads_share_of_each_buffer() {
    let link = "kind: network, bandwidth: 10GB/s, latency: 0s";
    let nic = |n: u32| format!("  - {{name: NIC{n}, kind: nic, latency: 0s}}\n");
    let m = Machine::from_text(
        &format!(
            "name: two\nnetwork: {{nic_scheduling: fcfs, packet: 1000B, buffer_packets: 10}}\ndevices:\n{}{}{}{}  - {{name: SW0, kind: switch}}\n  - {{name: SW1, kind: switch}}\nlinks:\n  - {{a: NIC0, b: SW0, {link}}}\n  - {{a: NIC2, b: SW0, {link}}}\n  - {{a: NIC1, b: SW1, {link}}}\n  - {{a: NIC3, b: SW1, {link}}}\n  - {{a: SW0, b: SW1, {link}}}\n",
            nic(0),
            nic(1),
            nic(2),
            nic(3)
        ),
        "two",
    )
    .unwrap();
    let w = workload(
        &m,
        "transfers:\n  - {src: NIC0, dst: NIC1, size: 100kB}\n  - {src: NIC0, dst: NIC2, size: 5kB}\n  - {src: NIC2, dst: NIC3, size: 100kB}\n  - {src: NIC3, dst: NIC1, size: 100kB}\n",
    );
    let at = |release: NicRelease| run(&m, &w, &MaxminParams { nic_release: release, ..Default::default() }, false).unwrap().finish;
    let f = at(NicRelease::Buffered);
    assert!(close(f[1], 17e-6, 1e-6) && close(f[0], 20e-6, 1e-6), "{f:?}");
    let f = at(NicRelease::Shared);
    assert!(close(f[1], 18e-6, 1e-6) && close(f[0], 20e-6, 1e-6), "{f:?}");
}

/// The early release is where its definition puts it, to float rounding: the first time at
/// which the head's bytes left fit in the buffers it counts on (params.rs, `NicRelease`), found
/// by the executor's one event per message, moved when a rate or a count it reads changes
/// (sim/release.rs), never a look that could be late. The two-switch star of the test above
/// (every link 10 GB/s, no latency, no store and forward, 10 kB per device buffer). NIC0 sends
/// a (100 kB to NIC1) then b (5 kB to NIC2); e (NIC2 to NIC3) shares SW0→SW1 with a, so a and
/// e move at 5 GB/s while both do.
/// - e of 82.5 kB ends at 16.5 µs, when a has 17.5 kB left. Shared: a counts 10 kB at SW0 and
///   5 kB at SW1 (two messages over SW0→SW1) until then, and 17.5 > 15; at 16.5 µs its share at
///   SW1 becomes 10 kB, 17.5 ≤ 20, and b starts at once: b shares NIC0→SW0 with a (5 GB/s
///   each), done at 17.5 µs; a has 12.5 kB left then, done at 18.75 µs. Buffered (20 kB
///   throughout): a has 20 kB left at 16 µs, b starts then at 5 GB/s, done at 17 µs; a at 5
///   GB/s to 17 µs (15 kB left), then alone, done at 18.5 µs. Delivered: a done at 16.5 +
///   17.5/10 = 18.25 µs, b at 18.75 µs.
/// - e of 40 kB ends at 8 µs, when a has 60 kB left; a then moves at 10 GB/s. Buffered: the
///   release set at the start for 16 µs moves to 12 µs (20 kB left); b done at 13 µs, a at
///   14.5 µs.
#[test]
fn early_release_is_where_its_definition_puts_it() {
    let link = "kind: network, bandwidth: 10GB/s, latency: 0s";
    let nic = |n: u32| format!("  - {{name: NIC{n}, kind: nic, latency: 0s}}\n");
    let m = Machine::from_text(
        &format!(
            "name: two\nnetwork: {{nic_scheduling: fcfs, packet: 1000B, buffer_packets: 10}}\ndevices:\n{}{}{}{}  - {{name: SW0, kind: switch, latency: 0s}}\n  - {{name: SW1, kind: switch, latency: 0s}}\nlinks:\n  - {{a: NIC0, b: SW0, {link}}}\n  - {{a: NIC2, b: SW0, {link}}}\n  - {{a: NIC1, b: SW1, {link}}}\n  - {{a: NIC3, b: SW1, {link}}}\n  - {{a: SW0, b: SW1, {link}}}\n",
            nic(0),
            nic(1),
            nic(2),
            nic(3)
        ),
        "two",
    )
    .unwrap();
    let at = |e: &str, release: NicRelease| {
        let w = workload(
            &m,
            &format!(
                "transfers:\n  - {{src: NIC0, dst: NIC1, size: 100kB}}\n  - {{src: NIC0, dst: NIC2, size: 5kB}}\n  - {{src: NIC2, dst: NIC3, size: {e}}}\n"
            ),
        );
        run(&m, &w, &MaxminParams { nic_release: release, store_forward: false, ..Default::default() }, false).unwrap().finish
    };
    let exact = |f: Vec<f64>, a: f64, b: f64, e: f64| {
        assert!(close(f[0], a * 1e-6, 1e-12) && close(f[1], b * 1e-6, 1e-12) && close(f[2], e * 1e-6, 1e-12), "{f:?} against {a} {b} {e} us");
    };
    exact(at("82.5kB", NicRelease::Shared), 18.75, 17.5, 16.5);
    exact(at("82.5kB", NicRelease::Buffered), 18.5, 17.0, 16.5);
    exact(at("82.5kB", NicRelease::Delivered), 18.25, 18.75, 16.5);
    exact(at("40kB", NicRelease::Buffered), 14.5, 13.0, 8.0);
}

/// An NVLink takes its generation's efficiency and duplex loss, a link's own value wins, and a
/// link of no known generation takes the NVLink-wide ones.
#[test]
fn nvlink_terms_by_generation() {
    let text = "name: x\ndevices:\n  - {name: A, kind: gpu, model: Tesla V100-SXM2}\n  - {name: B, kind: gpu, model: Tesla V100-SXM2}\n  - {name: C, kind: gpu}\n  - {name: D, kind: gpu}\nlinks:\n  - {a: A, b: B, kind: nvlink, bandwidth: 25GB/s}\n  - {a: C, b: D, kind: nvlink, bandwidth: 25GB/s}\n  - {a: C, b: D, kind: nvlink, bandwidth: 25GB/s, gen: 4, efficiency: 0.5, duplex: 0.2}\n";
    let m = Machine::from_text(text, "x").unwrap();
    let p = MaxminParams::default();
    let terms = |l: &Link| (p.link_efficiency(l), p.link_duplex(l));
    assert_eq!(terms(&m.links[0]), (p.rates.eff_nvlink2, p.duplex_nvlink2));
    assert_eq!(terms(&m.links[1]), (p.rates.eff_nvlink, p.duplex_nvlink));
    assert_eq!(terms(&m.links[2]), (0.5, 0.2));
}

/// `eff_nvlink` and `duplex_nvlink` given alone set NVLink 2's and 4's too, unless those are
/// given themselves (as `eff_pcie` does for PCIe's generations).
#[test]
fn nvlink_parameters_given_alone_set_every_generation() {
    let parse = |pairs: &[(&str, &str)]| MaxminParams::parse(&pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>()).unwrap();
    let p = parse(&[("eff_nvlink", "0.8"), ("duplex_nvlink", "0.1"), ("eff_nvlink4", "0.9")]);
    assert_eq!((p.rates.eff_nvlink2, p.rates.eff_nvlink4, p.duplex_nvlink2, p.duplex_nvlink4), (0.8, 0.9, 0.1, 0.1));
    let d = parse(&[]);
    assert_eq!((d.rates.eff_nvlink2, d.rates.eff_nvlink4, d.duplex_nvlink2, d.duplex_nvlink4), (0.967, 0.872, 0.003, 0.010));
}
