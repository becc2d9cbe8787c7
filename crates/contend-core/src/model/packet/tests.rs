use super::*;
use crate::model::maxmin::{MaxminParams, MaxminPrepared};
use crate::sim::{self, Outcome};
use crate::workload::WorkloadSpec;

const MIB: f64 = 1048576.0;
/// Network links of the test machines: 10 GB/s, so a 4096 B packet takes 409.6 ns.
const BW: f64 = 10e9;

pub(super) fn workload(m: &Machine, text: &str) -> Workload {
    Workload::resolve(&WorkloadSpec::from_text(text, "w").unwrap(), m, "w").unwrap()
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

pub(super) fn run(m: &Machine, w: &Workload, p: &[(&str, &str)]) -> Outcome {
    let prepared = PacketPrepared::new(m, w, PacketParams::parse(m, &pairs(p)).unwrap()).unwrap();
    sim::run_prepared(w, &prepared, false).unwrap()
}

/// Node i: GPU nI.GPU0 behind NIC nI.NIC0 (PCIe, 20 GB/s, its efficiency written 1 so that the
/// hand counts below run it at 20 GB/s); the NIC on `switch` over a
/// 10 GB/s, 100 ns network link. The node's own latencies are written 0 so that the network's
/// are the only ones (as in seed 003's generated nodes).
fn node(i: usize, switch: &str, devices: &mut String, links: &mut String) {
    devices.push_str(&format!("  - {{name: n{i}.GPU0, kind: gpu, latency: 0s}}\n  - {{name: n{i}.NIC0, kind: nic}}\n"));
    links.push_str(&format!("  - {{a: n{i}.NIC0, b: n{i}.GPU0, kind: pcie, bandwidth: 20GB/s, efficiency: 1, latency: 0s}}\n"));
    links.push_str(&format!("  - {{a: n{i}.NIC0, b: {switch}, kind: network, bandwidth: 10GB/s, latency: 100ns}}\n"));
}

/// `nodes` nodes on one switch; `network` is the machine's network section (flow style).
pub(super) fn star(nodes: usize, network: &str) -> Machine {
    let (mut devices, mut links) = ("  - {name: sw0, kind: switch}\n".to_string(), String::new());
    for i in 0..nodes {
        node(i, "sw0", &mut devices, &mut links);
    }
    Machine::from_text(&format!("name: star\nnetwork: {network}\ndevices:\n{devices}links:\n{links}"), "star").unwrap()
}

/// `switches` switches in a line (or a ring), one node on each.
fn chain(switches: usize, ring: bool) -> Machine {
    let (mut devices, mut links) = (String::new(), String::new());
    for s in 0..switches {
        devices.push_str(&format!("  - {{name: sw{s}, kind: switch}}\n"));
        node(s, &format!("sw{s}"), &mut devices, &mut links);
        if s + 1 < switches || ring {
            links.push_str(&format!("  - {{a: sw{s}, b: sw{}, kind: network, bandwidth: 10GB/s, latency: 100ns}}\n", (s + 1) % switches));
        }
    }
    Machine::from_text(&format!("name: chain\ndevices:\n{devices}links:\n{links}"), "chain").unwrap()
}

fn transfers(list: &[(usize, usize, &str)]) -> String {
    let mut s = String::from("transfers:\n");
    for (src, dst, size) in list {
        s.push_str(&format!("  - {{src: n{src}.GPU0, dst: n{dst}.GPU0, size: {size}}}\n"));
    }
    s
}

fn near(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

/// One message alone: setup, then the store-and-forward pipeline, exactly (in picoseconds):
/// every hop's latency, the first packet's serialisation at every hop, the other packets' at
/// the bottleneck; a switch adds its router delay; a partial last packet drains behind the
/// full ones.
#[test]
fn lone_message_is_the_pipeline_exactly() {
    let m = star(2, "{}");
    let w = workload(&m, "transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 1MiB, overhead: 1us}\n");
    let (pcie, net, lat) = (204_800u64, 409_600u64, 100_000u64);
    let first = pcie + net + net + pcie;
    let expect = 1_000_000 + 2 * lat + first + 255 * net;
    let o = run(&m, &w, &[]);
    assert_eq!(o.finish[0], expect as f64 / 1e12);
    assert_eq!(run(&m, &w, &[("router_delay", "50ns")]).finish[0], (expect + 50_000) as f64 / 1e12);
    // The network links ran flat out; the PCIe links at half their rate.
    let prepared = PacketPrepared::new(&m, &w, PacketParams::defaults(&m)).unwrap();
    for &r in prepared.flows.path(0) {
        let want = if prepared.flows.cap[r as usize] == BW { 1.0 } else { 0.5 };
        assert!(near(o.peak[r as usize], want, 0.01), "{}: peak {}", prepared.flows.name[r as usize], o.peak[r as usize]);
    }
    // 256 full packets and one of 100 B: it leaves the NIC 10 ns after the last full one and
    // then waits behind it at every slower-or-equal port.
    let w = workload(&m, "transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 1048676B, overhead: 1us}\n");
    let t = pcie + 256 * net + lat;
    let expect = 1_000_000 + t + net + lat + pcie + 5_000;
    assert_eq!(run(&m, &w, &[]).finish[0], expect as f64 / 1e12);
}

#[test]
fn two_flows_share_a_link_evenly() {
    let m = star(3, "{}");
    let w = workload(&m, &transfers(&[(0, 2, "4MiB"), (1, 2, "4MiB")]));
    let o = run(&m, &w, &[]);
    let fair = 2.0 * 4.0 * MIB / BW;
    for f in &o.finish {
        assert!(near(*f, fair, 0.02), "finish {f} vs {fair}");
    }
    assert!(near(o.finish[0], o.finish[1], 0.01), "{:?}", o.finish);
}

#[test]
fn nic_scheduling_fcfs_rr_and_rr_n() {
    let (s, size) = (4.0 * MIB / BW, "4MiB");
    let two = transfers(&[(0, 1, size), (0, 2, size)]);
    let m = star(3, "{nic_scheduling: fcfs}");
    let o = run(&m, &workload(&m, &two), &[]);
    assert!(near(o.finish[0], s, 0.02) && near(o.finish[1], 2.0 * s, 0.02), "fcfs: {:?}", o.finish);
    let m = star(3, "{nic_scheduling: rr}");
    let o = run(&m, &workload(&m, &two), &[]);
    assert!(near(o.finish[0], 2.0 * s, 0.02) && near(o.finish[1], 2.0 * s, 0.02), "rr: {:?}", o.finish);
    let m = star(4, "{nic_scheduling: rr-2}");
    let o = run(&m, &workload(&m, &transfers(&[(0, 1, size), (0, 2, size), (0, 3, size)])), &[]);
    let want = [2.0 * s, 2.0 * s, 3.0 * s];
    for (f, w) in o.finish.iter().zip(want) {
        assert!(near(*f, w, 0.02), "rr-2: {:?} vs {want:?}", o.finish);
    }
}

#[test]
fn incast_of_four_onto_one() {
    let m = star(5, "{}");
    let w = workload(&m, &transfers(&[(1, 0, "2MiB"), (2, 0, "2MiB"), (3, 0, "2MiB"), (4, 0, "2MiB")]));
    let o = run(&m, &w, &[]);
    let all = 4.0 * 2.0 * MIB / BW;
    for f in &o.finish {
        assert!(near(*f, all, 0.03), "{:?} vs {all}", o.finish);
    }
}

/// Staggered starts, dependencies and shared links on a line of switches, run twice.
#[test]
fn identical_input_gives_identical_output() {
    let m = chain(4, false);
    let text = "transfers:\n  - {name: a, src: n0.GPU0, dst: n3.GPU0, size: 300KiB}\n  - {name: b, src: n1.GPU0, dst: n3.GPU0, size: 123457B, start: 3us}\n  - {name: c, src: n3.GPU0, dst: n0.GPU0, size: 1MiB, after: [a]}\n  - {name: d, src: n2.GPU0, dst: n1.GPU0, size: 77777B, after: [b], overhead: 2us}\n  - {src: n0.GPU0, dst: n2.GPU0, size: 9000B}\n";
    let w = workload(&m, text);
    let prepared = PacketPrepared::new(&m, &w, PacketParams::defaults(&m)).unwrap();
    let a = sim::run_prepared(&w, &prepared, true).unwrap();
    let b = sim::run_prepared(&w, &prepared, true).unwrap();
    assert_eq!(a, b);
    assert!(a.finish.iter().all(|f| f.is_finite()) && !a.phases.is_empty());
}

/// Large messages, so latency and pipeline fill are small: the packet model's sharing is
/// max-min's where the bottlenecks are clear (equal shares, then the survivors speed up).
#[test]
fn agrees_with_maxmin_on_large_messages() {
    let m = star(4, "{}");
    let w = workload(&m, &transfers(&[(0, 2, "8MiB"), (1, 2, "4MiB"), (0, 3, "16MiB"), (3, 1, "6MiB")]));
    let packet = run(&m, &w, &[]);
    let flow = sim::run_prepared(&w, &MaxminPrepared::new(&m, &w, MaxminParams::default()).unwrap(), false).unwrap();
    for i in 0..w.transfers.len() {
        assert!(near(packet.finish[i], flow.finish[i], 0.05), "transfer {i}: packet {} vs maxmin {}", packet.finish[i], flow.finish[i]);
    }
    // A PCIe server: two peer copies into one GPU, and one staged through host memory across
    // the sockets, which meets its memory port twice (maxmin counts it twice too).
    let m = Machine::load("typical-8gpu").unwrap();
    let text = "transfers:\n  - {src: GPU4, dst: GPU1, size: 4MiB}\n  - {src: GPU2, dst: GPU3, size: 8MiB}\n  - {src: GPU0, dst: GPU3, size: 4MiB}\n";
    let (packet, flow) = both(&m, text);
    for i in 0..packet.finish.len() {
        assert!(near(packet.finish[i], flow.finish[i], 0.05), "typical-8gpu transfer {i}: packet {} vs maxmin {}", packet.finish[i], flow.finish[i]);
    }
}

/// The packet model and maxmin with every efficiency 1 and no staging chunk (the flow-level
/// equivalent of its links and pipeline).
fn both(m: &Machine, text: &str) -> (Outcome, Outcome) {
    let w = workload(m, text);
    let every = ["pcie", "nvlink", "qpi", "upi", "network", "memory"].map(|k| (format!("eff_{k}"), "1".to_string()));
    let p = MaxminParams { staging_chunk: 0.0, ..MaxminParams::parse(&every).unwrap() };
    (run(m, &w, &[]), sim::run_prepared(&w, &MaxminPrepared::new(m, &w, p).unwrap(), false).unwrap())
}

/// Where maxmin and the packet model part on purpose: a copy held back downstream (staged
/// over QPI, 4 GB/s) fills the buffer at the root complex that it shares with a peer copy
/// (one buffer per link and channel), so the peer copy is held to its pace too (head-of-line
/// blocking); maxmin gives the peer copy its fair share of the GPU link it contends for.
#[test]
fn shared_buffers_spread_congestion() {
    let m = Machine::load("typical-8gpu").unwrap();
    let text = "transfers:\n  - {src: GPU0, dst: GPU4, size: 8MiB}\n  - {src: GPU2, dst: GPU3, size: 8MiB}\n  - {src: GPU1, dst: GPU3, size: 8MiB}\n";
    let (packet, flow) = both(&m, text);
    assert!(near(packet.finish[0], flow.finish[0], 0.02), "{:?} vs {:?}", packet.finish, flow.finish);
    assert!(packet.finish[1] < 0.9 * flow.finish[1] && packet.finish[2] > 1.2 * flow.finish[2], "{:?} vs {:?}", packet.finish, flow.finish);
}

/// One-packet buffers, long paths and cyclic channel dependencies (a ring where every node
/// sends two switches on): the per-hop virtual channels keep every message moving.
#[test]
fn one_packet_buffers_never_deadlock() {
    let m = chain(12, false);
    let mut list = Vec::new();
    for i in 0..12 {
        list.push((i, 11 - i, "256KiB"));
        list.push((i, (i + 5) % 12, "100KiB"));
    }
    let w = workload(&m, &transfers(&list));
    let o = run(&m, &w, &[("buffer", "1")]);
    assert!(o.finish.iter().all(|f| f.is_finite()));
    let m = chain(5, true);
    let list: Vec<_> = (0..5).map(|i| (i, (i + 2) % 5, "512KiB")).collect();
    let w = workload(&m, &transfers(&list));
    let o = run(&m, &w, &[("buffer", "1")]);
    // Each ring link carries two messages; with one-packet buffers and 100 ns hops the credit
    // round trip throttles them, but all arrive.
    assert!(o.finish.iter().all(|f| f.is_finite() && *f >= 2.0 * 512.0 * 1024.0 / BW), "{:?}", o.finish);
}

#[test]
fn params_defaults_and_refusals() {
    let m = star(2, "{packet: 1KiB, buffer_packets: 2}");
    let p = PacketParams::parse(&m, &[]).unwrap();
    assert_eq!((p.packet, p.buffer, p.router_delay), (1024, 2, 0));
    // A cluster file's packet of 4GiB or more names the file's field (it named `--param: packet`).
    let e = PacketParams::parse(&star(2, "{packet: 1TB}"), &[]).unwrap_err().to_string();
    assert!(e.contains("network.packet: is 1000000000000 bytes") && !e.contains("--param"), "{e}");
    let p = PacketParams::parse(&m, &pairs(&[("packet", "2KiB"), ("buffer", "4"), ("router_delay", "25ns")])).unwrap();
    assert_eq!((p.packet, p.buffer, p.router_delay), (2048, 4, 25_000));
    let own = |map: BTreeMap<String, String>| map.into_iter().filter(|(k, _)| !k.starts_with("eff_")).collect::<Vec<_>>();
    assert_eq!(own(p.to_map()), pairs(&[("buffer", "4"), ("packet", "2KiB"), ("router_delay", "25ns")]));
    // The link rates are maxmin's, declared once (link_rate.rs).
    let p = PacketParams::parse(&m, &pairs(&[("eff_pcie", "0.5")])).unwrap();
    assert_eq!((p.rates.eff_pcie, p.rates.eff_pcie5), (0.5, 0.5));
    assert_eq!(p.rates, MaxminParams::parse(&pairs(&[("eff_pcie", "0.5")])).unwrap().rates);
    let e = PacketParams::parse(&m, &pairs(&[("mtu", "4KiB")])).unwrap_err().to_string();
    assert!(e.contains("mtu") && e.contains("packet, buffer, router_delay"), "{e}");
    assert!(PacketParams::parse(&m, &pairs(&[("buffer", "0")])).is_err());
    assert!(PacketParams::parse(&m, &pairs(&[("packet", "0B")])).is_err());
    // Through the registry, as the CLI goes.
    let w = workload(&m, &transfers(&[(0, 1, "10KiB")]));
    let prepared = crate::model::registry::get("packet").unwrap().prepare(&m, &w, &[]).unwrap();
    assert!(prepared.rate_model().is_none() && !prepared.queues_at_nics());
    assert_eq!(prepared.params()["packet"], "1KiB");
    // 10 packets of 1 KiB, no setup: 100 ns of latency on each network link, the first
    // packet's serialisation on each link, then 9 more at the network links' pace.
    let o = sim::run_prepared(&w, prepared.as_ref(), false).unwrap();
    let expect = 200_000 + 51_200 + 102_400 + 102_400 + 51_200 + 9 * 102_400;
    assert_eq!(o.finish[0], expect as f64 / 1e12);
}

/// Two GPUs on one PCIe switch whose links run at `bw` (the one PCIe link each way, no latency;
/// efficiency written 1).
fn slow_pair(bw: &str) -> Machine {
    Machine::from_text(
        &format!(
            "name: slow\ndevices:\n  - {{name: RC, kind: root_complex}}\n  - {{name: GPU0, kind: gpu, latency: 0s}}\n  - {{name: GPU1, kind: gpu, latency: 0s}}\n\
             links:\n  - {{a: RC, b: GPU0, kind: pcie, bandwidth: {bw}, efficiency: 1, latency: 0s}}\n  - {{a: RC, b: GPU1, kind: pcie, bandwidth: {bw}, efficiency: 1, latency: 0s}}\n"
        ),
        "slow",
    )
    .unwrap()
}

pub(super) fn refusal(m: &Machine, text: &str) -> String {
    let w = workload(m, text);
    match PacketPrepared::new(m, &w, PacketParams::parse(m, &[]).unwrap()) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("ran: {text}"),
    }
}

/// The clock's range is checked before the run: a copy that would pass 2^63 ps (9.2e6 s) is
/// refused in one line naming the link and the fix (it once wrapped: 1 MiB over 1e-6 B/s "took"
/// 69 µs; links that slow are refused on input now, `units::MIN_LINK_BANDWIDTH`, so 16 TB over
/// the slowest link allowed, 1 MB/s, 1.6e7 s, in 1 GiB packets to stay under the packet bounds).
#[test]
fn a_run_past_the_clock_is_refused_before_it_starts() {
    let m = slow_pair("1MB/s");
    let w = workload(&m, "transfers:\n  - {src: GPU0, dst: GPU1, size: 16TB}\n");
    let Err(e) = PacketPrepared::new(&m, &w, PacketParams::parse(&m, &pairs(&[("packet", "1GiB")])).unwrap()) else { panic!("ran") };
    let e = e.to_string();
    assert!(e.starts_with("model packet does not apply: its clock counts whole picoseconds up to 2^63"), "{e}");
    assert!(e.contains("carrying its bytes at 1.000e6 B/s") && e.contains("bandwidth") && e.ends_with("or use --model maxmin"), "{e}");
    assert!(!e.contains('\n'));
    // A start 200 days out is the quantity named.
    let m = slow_pair("10GB/s");
    let e = refusal(&m, "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, start: 17280000s}\n");
    assert!(e.contains("the latest start is 1.728e7 s (2.000e2 days)") && e.contains("start the transfers earlier"), "{e}");
    let e = refusal(&m, "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, overhead: 17280000s}\n");
    assert!(e.contains("setup delays, computations and teardowns add up to"), "{e}");
}

/// Inside the range the clock is exact however long the run: 1 TiB at 1 MiB/s in 1 GiB packets
/// takes 2^20 s over each of its two hops' pipeline (store and forward: the first packet crosses
/// both links, the other 1023 follow at the bottleneck's pace), about 12 days. (It was 1 MiB at
/// 1 B/s in 4 KiB packets, the same shape, before links under 1 MB/s were refused on input.)
#[test]
fn a_long_run_inside_the_clock_is_exact() {
    let m = slow_pair("1MiB/s");
    let w = workload(&m, "transfers:\n  - {src: GPU0, dst: GPU1, size: 1TiB}\n");
    let o = run(&m, &w, &[("packet", "1GiB")]);
    let packet_s = 1024.0;
    assert_eq!(o.finish[0], packet_s + 1024.0 * packet_s);
}

/// A link under 1 MB/s in a machine or cluster file is refused on input, naming its field
/// (1e-30GB/s once printed a makespan of 1e29 s).
#[test]
fn a_link_under_a_megabyte_a_second_is_refused_by_its_field() {
    let e = Machine::from_text(
        "name: slow\ndevices:\n  - {name: A, kind: gpu}\n  - {name: B, kind: gpu}\nlinks:\n  - {a: A, b: B, kind: nvlink, bandwidth: 1e-30GB/s}\n",
        "m.yaml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("links[0].bandwidth") && e.contains("below 1 MB/s") && !e.contains('\n'), "{e}");
    let cluster = |link: &str| {
        format!("name: c\nfabric:\n  fat_tree: {{radix: 8, pods: 3, leaves_per_pod: 4, aggregates_per_pod: 4, nodes_per_leaf: 4}}\nlink: {{bandwidth: {link}}}\nnodes: {{gpus: 1}}\n")
    };
    let e = Machine::from_text(&cluster("999kB/s"), "c.yaml").unwrap_err().to_string();
    assert!(e.contains("link.bandwidth") && e.contains("below 1 MB/s"), "{e}");
    assert!(Machine::from_text(&cluster("1MB/s"), "c.yaml").is_ok());
}

/// A run past `MAX_PACKET_HOPS` (5 x 10^8) is refused before it starts, naming the packet size:
/// 300 MB in 1 B packets over two links is 6 x 10^8 packet-hops, 3 x 10^8 packets each crossing both.
#[test]
fn a_run_of_too_many_packet_hops_is_refused_before_it_starts() {
    let m = slow_pair("10GB/s");
    let w = workload(&m, "transfers:\n  - {src: GPU0, dst: GPU1, size: 300MB}\n");
    let Err(e) = PacketPrepared::new(&m, &w, PacketParams::parse(&m, &pairs(&[("packet", "1B")])).unwrap()) else { panic!("ran") };
    let e = e.to_string();
    assert!(e.contains("packet-hops") && e.contains("packets of 1B") && e.contains("--param packet=") && !e.contains('\n'), "{e}");
    // Under the bound it is prepared: 100 MB in 1 kB packets is 2 x 10^5 packet-hops.
    let w = workload(&m, "transfers:\n  - {src: GPU0, dst: GPU1, size: 100MB}\n");
    assert!(PacketPrepared::new(&m, &w, PacketParams::parse(&m, &pairs(&[("packet", "1kB")])).unwrap()).is_ok());
}

/// A GPU's write into host memory is posted (flow::completion_wait): the copy is done when its
/// last packet has left the engine's port, as maxmin has it, while its packets still cross the
/// root complex into memory; a peer write through the same root complex is done when its last
/// packet arrives. From the latencies written: engine 1 µs, each PCIe hop 0.3 µs, memory 0.1 µs;
/// 4 B over 16 GB/s serialise in 0.25 ns per hop (maxmin moves them in one such time; the memory
/// takes writes at its whole bandwidth here, as packet does).
#[test]
fn a_posted_host_write_completes_at_the_engine_as_under_maxmin() {
    let text = "name: h\ndevices:\n  - {name: RC, kind: root_complex, latency: 0s}\n  - {name: MEM, kind: host_memory, latency: 0s, write_efficiency: 1}\n  - {name: GPU0, kind: gpu, latency: 1us}\n  - {name: GPU1, kind: gpu, latency: 1us}\nlinks:\n  - {a: RC, b: MEM, kind: memory, bandwidth: 16GB/s, efficiency: 1, latency: 0.1us}\n  - {a: RC, b: GPU0, kind: pcie, bandwidth: 16GB/s, efficiency: 1, latency: 0.3us}\n  - {a: RC, b: GPU1, kind: pcie, bandwidth: 16GB/s, efficiency: 1, latency: 0.3us}\n";
    let m = Machine::from_text(text, "h").unwrap();
    let w = workload(&m, "transfers:\n  - {src: GPU0, dst: MEM, size: 4B}\n  - {src: GPU1, dst: GPU0, size: 4B, start: 10us}\n");
    let packet = run(&m, &w, &[]).finish;
    let maxmin = sim::run_prepared(&w, &MaxminPrepared::new(&m, &w, MaxminParams::default()).unwrap(), false).unwrap().finish;
    let hop = 4.0 / 16e9;
    assert!((packet[0] - (1e-6 + hop)).abs() < 1e-12, "posted write: {} s", packet[0]);
    assert!((packet[0] - maxmin[0]).abs() < 1e-12, "packet {} s, maxmin {} s", packet[0], maxmin[0]);
    // The peer write pays its two hops' latency and serialisation on each (store and forward).
    assert!((packet[1] - (10e-6 + 1e-6 + 0.6e-6 + 2.0 * hop)).abs() < 1e-12, "peer write: {} s", packet[1]);
}

/// Both models run a link at one rate: its bandwidth times its own efficiency, else its kind's
/// and generation's (model/link_rate.rs), so a lone copy takes the same time under each, up to
/// packetisation. Two PCIe Gen4 links of 32 GB/s with no efficiency written, and one of Gen5
/// with 0.5 written: a lone 1 GiB copy over the Gen4 pair takes 2^30 / (32e9 × 0.835) s
/// (eff_pcie4, the RTX A6000 peers' 26.3 of 31.51 GB/s), over a Gen5 one 2^30 / (32e9 × 0.5);
/// `packet` adds the first packet's 4096 B on the first hop, a Gen4 link (store and forward:
/// the second hop starts once it has fully arrived), to within the picoseconds each packet rounds to.
#[test]
fn a_lone_copy_runs_at_the_link_rate_the_machine_file_gives_under_both_models() {
    let text = "name: r\ndevices:\n  - {name: RC, kind: root_complex, latency: 0s}\n  - {name: GPU0, kind: gpu, latency: 0s}\n  - {name: GPU1, kind: gpu, latency: 0s}\n  - {name: GPU2, kind: gpu, latency: 0s}\nlinks:\n  - {a: RC, b: GPU0, kind: pcie, gen: 4, bandwidth: 32GB/s, duplex: 0, latency: 0s}\n  - {a: RC, b: GPU1, kind: pcie, gen: 4, bandwidth: 32GB/s, duplex: 0, latency: 0s}\n  - {a: RC, b: GPU2, kind: pcie, gen: 5, bandwidth: 32GB/s, efficiency: 0.5, duplex: 0, latency: 0s}\n";
    let m = Machine::from_text(text, "r").unwrap();
    for (dst, eff) in [("GPU1", 0.835), ("GPU2", 0.5)] {
        let w = workload(&m, &format!("transfers:\n  - {{src: GPU0, dst: {dst}, size: 1GiB}}\n"));
        let maxmin = sim::run_prepared(&w, &MaxminPrepared::new(&m, &w, MaxminParams::default()).unwrap(), false).unwrap().finish[0];
        let packet = run(&m, &w, &[]).finish[0];
        // The slower of the path's two links sets the rate; the Gen5 link's own 0.5 wins.
        let rate = 32e9 * eff;
        let expected = 1073741824.0 / rate;
        assert!((maxmin - expected).abs() < 1e-9 * expected, "{dst}: maxmin {maxmin} s, expected {expected} s");
        let first_packet = 4096.0 / (32e9 * 0.835);
        assert!((packet - (expected + first_packet)).abs() < 1e-5 * expected, "{dst}: packet {packet} s, expected {} s", expected + first_packet);
    }
}

#[test]
fn credit_floor_is_the_credit_round_trip() {
    // A 4 KiB packet at 767 GB/s serialises in 5.34 ns; a 50 ns hop holds its credit 55.34 ns.
    assert_eq!(credit_floor(4096.0 / 767e9 * 1e12, 50_000.0), 11);
    assert_eq!(credit_floor(409_600.0, 100_000.0), 2);
    assert_eq!(credit_floor(1000.0, 0.0), 1);
}

/// Two GPUs through a `sw` device on `kind` links of 900 GB/s and 50 ns (efficiency 1, device latencies 0).
fn switched_pair(kind: &str, sw: &str) -> Machine {
    Machine::from_text(
        &format!(
            "name: pair\ndevices:\n  - {{name: n0.GPU0, kind: gpu, latency: 0s}}\n  - {{name: n1.GPU0, kind: gpu, latency: 0s}}\n  - {{name: sw, kind: {sw}, latency: 0s}}\nlinks:\n  - {{a: sw, b: n0.GPU0, kind: {kind}, bandwidth: 900GB/s, efficiency: 1, latency: 50ns}}\n  - {{a: sw, b: n1.GPU0, kind: {kind}, bandwidth: 900GB/s, efficiency: 1, latency: 50ns}}\n"
        ),
        "pair",
    )
    .unwrap()
}

/// A node's link runs at its rate under packet whatever the network's buffer: 8 packets of 4 KiB
/// over a 50 ns hop at 900 GB/s would send at most 8 x 4096 B / (4.55 + 50 ns) = 600 GB/s. A
/// network link keeps the stated buffer and so that cap (the cluster's design).
#[test]
fn node_links_buffer_their_credit_round_trip() {
    let size = 64.0 * MIB;
    let m = switched_pair("nvlink", "nvswitch");
    let w = workload(&m, "transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 64MiB}\n");
    let want = size / 900e9 + 100e-9;
    let got = run(&m, &w, &[]).finish[0];
    assert!((got - want).abs() / want < 0.002, "nvlink: {got} against {want}");
    let m = switched_pair("network", "switch");
    let w = workload(&m, "transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 64MiB}\n");
    let loop_ps = (4096.0 / 900e9 * 1e12_f64).round() + 50_000.0;
    let capped = size / (8.0 * 4096.0 / (loop_ps * 1e-12));
    let got = run(&m, &w, &[]).finish[0];
    assert!((got - capped).abs() / capped < 0.01, "network: {got} against {capped}");
}

/// A node's link into a network switch: the engine holds a packet there `router_delay` more
/// (hop_delay), and the floor counts it: 1 + (50 + 100 ns) / 4.55 ns = 34 packets. Without it the
/// floor of 12 ran the 900 GB/s link at 318 GB/s (the round-24 review).
#[test]
fn the_credit_floor_counts_the_router_delay_of_a_switch() {
    let m = switched_pair("nvlink", "switch");
    let w = workload(&m, "transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 64MiB}\n");
    let want = 64.0 * MIB / 900e9 + 200e-9;
    let got = run(&m, &w, &[("router_delay", "100ns")]).finish[0];
    assert!((got - want).abs() / want < 0.002, "{got} against {want}");
}
