//! NCCL's NVLS graph across nodes (`nvls_heads`): a head per NIC, speeds no NIC exceeds, by
//! release; and NVLS-tree's model and lowering on nodes with fewer NICs than GPUs. Expected
//! values from NCCL's search and tuning by hand (search.cc, tuning.cc v2.30.7).

use super::nvls_heads::{search, Graph, Net};
use super::versions::Version;
use super::*;

const H100_LINK: f64 = 18.0 * 20.6;

fn nets(bw: f64, locals: &[usize]) -> Vec<Net> {
    locals.iter().map(|&g| Net { bw, local: Some(g) }).collect()
}

fn hopper(v: Version) -> &'static [f64] {
    tuning::release_speeds(v, 90, true)
}

/// hgx-h100 (8 NICs of NCCL's 48 GB/s, NVLink 370.8 a GPU): pass 1 from 48 finds 6 channels
/// ((6 + 1) x 48 <= 370.8 < 8 x 48), 45 finds 7, 40 all 8 (9 x 40 = 360); pass 2 raises the inter
/// speed 42, 45, 48 (under 2 x 40). 2.18.5 keeps 40 both ways (no inter raise).
#[test]
fn one_nic_a_gpu_heads_every_gpu() {
    let all: Vec<usize> = (0..8).collect();
    let g = search(Version::V2_30, hopper(Version::V2_30), &nets(48.0, &all), H100_LINK, H100_LINK, 8).unwrap();
    assert_eq!(g, Graph { heads: all.clone(), intra: 40.0, inter: 48.0 });
    let old = search(Version::V2_18, hopper(Version::V2_18), &nets(48.0, &all), H100_LINK, H100_LINK, 8).unwrap();
    assert_eq!((old.heads.len(), old.intra, old.inter), (8, 40.0, 40.0));
    // hgx-b200 (NIC path 48, NVLink 18 x 40.1): 8 channels at 48 at once (9 x 48 <= 721.8); the
    // inter raise to 80 exceeds the NICs. The intra speed is the NICs' 48, not one node's 80.
    let b = search(Version::V2_30, tuning::release_speeds(Version::V2_30, 100, true), &nets(48.0, &all), 18.0 * 40.1, 18.0 * 40.1, 8).unwrap();
    assert_eq!((b.heads.len(), b.intra, b.inter), (8, 48.0, 48.0));
}

/// Fewer NICs than GPUs: one head per NIC, at its local GPU. 4 x 200 Gb/s (NCCL's 25 GB/s):
/// 4 channels at 24 (the first speed under 25), no raise (30 > 25); 2 x 400 Gb/s: 2 at 48.
#[test]
fn fewer_nics_head_fewer_gpus() {
    for v in [Version::V2_19, Version::V2_22, Version::V2_30] {
        let g = search(v, hopper(v), &nets(25.0, &[0, 2, 4, 6]), H100_LINK, H100_LINK, 8).unwrap();
        assert_eq!(g, Graph { heads: vec![0, 2, 4, 6], intra: 24.0, inter: 24.0 }, "{v:?}");
        let g = search(v, hopper(v), &nets(48.0, &[0, 4]), H100_LINK, H100_LINK, 8).unwrap();
        assert_eq!(g, Graph { heads: vec![0, 4], intra: 48.0, inter: 48.0 }, "{v:?}");
    }
    // A NIC no GPU calls its own heads nothing.
    let none = [Net { bw: 48.0, local: None }];
    assert_eq!(search(Version::V2_30, hopper(Version::V2_30), &none, H100_LINK, H100_LINK, 8), None);
}

/// Two NICs local to one GPU: from 2.22.3 the duplicate-head check heads it once; before, channel
/// c takes NIC c alone and heads that GPU twice.
#[test]
fn a_gpu_local_to_two_nics_heads_once_from_2_22() {
    let n = nets(48.0, &[0, 0, 1, 1]);
    assert_eq!(search(Version::V2_22, hopper(Version::V2_22), &n, H100_LINK, H100_LINK, 8).unwrap().heads, [0, 1]);
    assert_eq!(search(Version::V2_21, hopper(Version::V2_21), &n, H100_LINK, H100_LINK, 8).unwrap().heads, [0, 0, 1, 1]);
}

/// hgx-h100 with only the NICs `keep` (as tests/test_nccl_multinode_hand.py builds it): the file's path.
fn few_nics_file(keep: &[usize], rate: &str) -> String {
    let text: String = crate::topology::preset_text("hgx-h100")
        .unwrap()
        .lines()
        .filter(|l| !(0..8).any(|k| !keep.contains(&k) && (l.contains(&format!("name: NIC{k},")) || l.contains(&format!("b: NIC{k},")))))
        .map(|l| l.replace("400Gb/s", rate).replace("400 Gb/s", rate) + "\n")
        .collect();
    // A directory a call: tests run in parallel.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("contend-nvls-heads-{}-{call}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("few-nics.yaml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `few_nics_file` on `nodes` nodes joined by `link`.
fn few_nics(keep: &[usize], rate: &str, link: &str, nodes: usize) -> Comm {
    let path = few_nics_file(keep, rate);
    let hosts = vec!["S0"; nodes].join(", ");
    let cluster = format!(
        "name: c\nfabric:\n  graph: {{switches: [{{name: S0}}], links: [], hosts: [{hosts}]}}\nlink: {{bandwidth: {link}}}\nnodes: {{count: {nodes}, machine: \"{path}\"}}\n"
    );
    let m = Machine::from_text(&cluster, "c").unwrap();
    let node = |k: usize| m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    Comm::new(&m, &(0..nodes).map(node).collect::<Vec<_>>(), None).unwrap()
}

/// NCCL's model on 2 nodes of 4 x 200 Gb/s (tuning.cc: heads x min(intra x 0.85 x (heads - 1) /
/// heads x 2, inter x 2, 57.7)): 4 x min(24 x 0.85 x 3/4 x 2 = 30.6, 48, 57.7) = 122.4 bus,
/// algbw x 16/30 = 65.28; 2 x 400 Gb/s: 2 x min(48 x 0.85 x 1/2 x 2 = 40.8, 96, 57.7) = 81.6.
/// Against the tree (4 x 48 inside, capped 4 x 41.4 x 0.92 ... = 82.8 bus) NCCL picks Tree/Simple
/// at 1 GiB and Tree/LL128 at 32 MiB on the 4-NIC nodes.
#[test]
fn nvls_tree_model_has_a_head_per_nic() {
    let four = few_nics(&[0, 2, 4, 6], "200Gb/s", "25GB/s", 2);
    assert_eq!(four.nvls_graphs[Version::V2_30 as usize].as_ref().unwrap().heads, [0, 2, 4, 6]);
    assert_eq!((four.tuning.nvls_heads, four.tuning.nvls_bw_intra, four.tuning.nvls_bw_inter), (4, 24.0, 24.0));
    let (_, algbw) = tuning::model(&four.tuning, Coll::AllReduce, Algo::NvlsTree, Proto::Simple).unwrap();
    assert!((algbw - 122.4 * 16.0 / 30.0).abs() < 1e-9, "{algbw}");
    let all = [Algo::Ring, Algo::Tree, Algo::Nvls, Algo::NvlsTree];
    assert_eq!(four.choose(Coll::AllReduce, 1 << 30, &all, &PROTOS).unwrap().0, Algo::Tree);
    let p = four.choose(Coll::AllReduce, 32 << 20, &all, &PROTOS).unwrap();
    assert_eq!((p.0, p.1), (Algo::Tree, Proto::Ll128));
    let two = few_nics(&[0, 4], "400Gb/s", "50GB/s", 2);
    assert_eq!(two.nvls_graphs[Version::V2_30 as usize].as_ref().unwrap().heads, [0, 4]);
    let (_, algbw) = tuning::model(&two.tuning, Coll::AllReduce, Algo::NvlsTree, Proto::Simple).unwrap();
    assert!((algbw - 81.6 * 16.0 / 30.0).abs() < 1e-9, "{algbw}");
}

/// The lowering: only the heads (GPU 0, 2, 4, 6) send between nodes, each to the head of its
/// number on the other node through its own NIC, a quarter of the buffer each (up the tree on
/// half the channels, down on the other half); every GPU still moves its data through the switch.
#[test]
fn nvls_tree_lowering_sends_between_nodes_from_the_heads() {
    let c = few_nics(&[0, 2, 4, 6], "200Gb/s", "25GB/s", 2);
    let s: u64 = 1 << 30;
    let call = c.call(Coll::AllReduce, Algo::NvlsTree, Proto::Simple, s, 0);
    assert_eq!(call.nvls_heads, [0, 2, 4, 6]);
    let (t, _) = lower::lower(&call);
    let is_gpu = |d: usize| c.m.devices[d].kind == DeviceKind::Gpu;
    for (j, &g) in c.devices[..8].iter().enumerate() {
        let out: u64 = t.iter().filter(|x| x.src == g && is_gpu(x.dst)).map(|x| x.size).sum();
        let want = if j % 2 == 0 { s as f64 / 4.0 } else { 0.0 };
        assert!((out as f64 - want).abs() <= 1e-3 * s as f64, "GPU{j}: {out}");
        for x in t.iter().filter(|x| x.src == g && is_gpu(x.dst)) {
            assert_eq!(x.dst, c.devices[8 + j], "GPU{j}");
        }
    }
    // Each head's bytes leave by its own NIC (n0.GPU2 by n0.NIC2), the router's nearest.
    let router = crate::flow::router::Router::new(&c.m);
    for j in [0, 2, 4, 6] {
        let nic = c.m.device(&format!("n0.NIC{j}")).unwrap();
        let hops = router.path(c.devices[j], c.devices[8 + j], true).unwrap();
        assert!(hops.iter().any(|h| c.m.links[h.link].a == nic || c.m.links[h.link].b == nic), "GPU{j}");
    }
}

/// OCI BM.GPU.H100.8 (8 dual-port ConnectX-7 of 2 x 200 Gb/s, one a GPU): from 2.20.3 NCCL reports
/// each NIC's ports as one device of 50 GB/s (net_ib.cc NCCL_IB_MERGE_NICS=1), so the NVLS graph
/// is hgx-h100's, 8 heads at 40/48 (measured 464 GB/s busbw at 16 GiB, above the 400 GB/s its 16
/// ports give a ring, is NVLS-tree's). 2.19.3 sees 16 ports of 25 GB/s and heads each GPU of
/// 0 to 3 twice (channel c at port c, no duplicate check): NVLS-tree is refused there.
#[test]
fn a_nics_ports_merge_into_one_device_from_2_20() {
    let file = format!("{}/../../bench/validation/machines/bm-gpu-h100-8.yaml", env!("CARGO_MANIFEST_DIR"));
    let text = format!(
        "name: c\nfabric:\n  graph: {{switches: [{{name: S0}}], links: [], hosts: [S0, S0]}}\nlink: {{bandwidth: 50GB/s}}\nnodes: {{count: 2, machine: \"{file}\"}}\n"
    );
    let m = Machine::from_text(&text, "c").unwrap();
    let node = |k: usize| m.gpus().into_iter().filter(|&g| m.devices[g].name.starts_with(&format!("n{k}."))).collect::<Vec<_>>();
    let mut c = Comm::new(&m, &[node(0), node(1)], None).unwrap();
    for v in [Version::V2_20, Version::V2_21, Version::V2_30] {
        assert_eq!(c.nvls_graphs[v as usize], Some(Graph { heads: (0..8).collect(), intra: 40.0, inter: 48.0 }), "{v:?}");
    }
    let old = c.nvls_graphs[Version::V2_19 as usize].clone().unwrap();
    assert_eq!((old.heads, old.intra, old.inter), (vec![0, 0, 1, 1, 2, 2, 3, 3], 24.0, 24.0));
    c.set_constants(constants::Constants { version: Version::V2_19, ..Default::default() }).unwrap();
    let e = c.pick(Coll::AllReduce, 1 << 30, &[Algo::NvlsTree], Some(&[Proto::Simple])).unwrap_err().to_string();
    assert!(e.contains("heads GPU0 of each node twice") && e.contains("give 2.22 or later"), "{e}");
    assert!(c.pick(Coll::AllReduce, 1 << 30, &[Algo::Ring], None).unwrap().is_some());
}

/// A release whose NVLS search finds no channel runs no NVLS graph, whatever 2.30.7's finds (rev27
/// finding 6): to 2.21.5 channel 0 takes NIC 0 alone (search.cc, `i > 0` skipped), so a first NIC
/// with no local GPU ends the search (None), while 2.22.3 on rotates past it; `set_constants`
/// under such a release leaves NCCL's table no NVLS-tree (it kept 2.30.7's heads and speeds).
#[test]
fn a_release_whose_search_finds_no_channel_has_no_nvls_graph() {
    let mut n = nets(48.0, &[0, 2, 4, 6]);
    n.insert(0, Net { bw: 48.0, local: None });
    assert!(search(Version::V2_21, hopper(Version::V2_21), &n, H100_LINK, H100_LINK, 8).is_none());
    assert!(search(Version::V2_22, hopper(Version::V2_22), &n, H100_LINK, H100_LINK, 8).is_some());
    let mut c = few_nics(&[0, 2, 4, 6], "200Gb/s", "25GB/s", 2);
    c.nvls_graphs[Version::V2_21 as usize] = None;
    c.set_constants(constants::Constants { version: Version::V2_21, ..Default::default() }).unwrap();
    assert_eq!((c.tuning.nvls_heads, c.tuning.nvls_bw_intra, c.tuning.nvls_bw_inter), (0, 0.0, 0.0));
    assert!(tuning::model(&c.tuning, Coll::AllReduce, Algo::NvlsTree, Proto::Simple).is_none());
    c.set_constants(constants::Constants::default()).unwrap();
    assert_eq!((c.tuning.nvls_heads, c.tuning.nvls_bw_intra, c.tuning.nvls_bw_inter), (4, 24.0, 24.0));
}

/// `--explain` names the NVLS graph's heads and speeds.
#[test]
fn explain_names_the_heads() {
    let req = tests_tool::Request { explain: true, ..tests_tool::Request::one("all_reduce", "1G") };
    let r = crate::api::nccl_tests(&few_nics_file(&[0, 2, 4, 6], "200Gb/s"), &req, 2, Some("25GB/s")).unwrap();
    let text = tests_tool::explain_text(&r);
    assert!(
        text.contains("NVLS-tree: 4 head(s) a node (n0.GPU0, n0.GPU2, n0.GPU4, n0.GPU6: each NIC's local GPU) at 24 GB/s inside a node, 24 between nodes"),
        "{text}"
    );
    assert_eq!(r.rows[0].algo, Algo::Tree);
}
