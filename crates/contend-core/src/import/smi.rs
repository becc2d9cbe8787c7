//! `nvidia-smi topo -m`: a matrix of path labels between GPUs and NICs.
//!
//! The labels say how far apart two devices are, not which switches lie between them, so the
//! tree is rebuilt from the closest relations: PIX (one switch) groups devices under a switch,
//! PXB (several switches, no host bridge) under a common upper switch, PHB (through the host
//! bridge) under one root, NODE (between host bridges of one NUMA node) under separate host
//! bridges of one socket (root complexes joined by the socket's fabric), SYS/SOC (across the
//! socket interconnect) on different sockets.

use super::builder::Builder;
use crate::error::{Error, Result};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rel {
    Same,
    Pix,
    Pxb,
    Phb,
    Node,
    Sys,
    Nv(u32),
    /// Between two devices whose rows were both cut off (a partial paste).
    Unknown,
}

fn rel(token: &str) -> Option<Rel> {
    Some(match token {
        "X" => Rel::Same,
        "PIX" => Rel::Pix,
        "PXB" => Rel::Pxb,
        "PHB" => Rel::Phb,
        "NODE" => Rel::Node,
        "SYS" | "SOC" => Rel::Sys,
        _ => Rel::Nv(token.strip_prefix("NV")?.parse().ok()?),
    })
}

struct Matrix {
    names: Vec<String>,
    rel: Vec<Vec<Rel>>,
    /// NUMA node (or CPU-affinity key) per row, where the dump gives one.
    affinity: Vec<Option<String>>,
    /// "NIC0" -> "mlx5_0" from the NIC legend of newer drivers.
    nic_names: BTreeMap<String, String>,
}

/// The text as a terminal showed it, without its decoration: ANSI escape sequences (colours,
/// the underlined header of newer drivers), other control characters, box drawing and table
/// bars (`│`, `|`, `─`), and the `>` of a quoted paste. Prompt lines, the command and the legend
/// need no cleaning: the matrix starts at the header line and rows are named by its columns.
pub(super) fn clean(text: &str) -> String {
    let plain: String =
        crate::terminal::strip_escapes(text).chars().map(|c| if c == '|' || ('\u{2500}'..='\u{257f}').contains(&c) { ' ' } else { c }).collect();
    plain.lines().map(|l| l.trim_start().trim_start_matches('>').trim_start()).collect::<Vec<_>>().join("\n")
}

fn parse_matrix(text: &str, origin: &str, notes: &mut Vec<String>) -> Result<Matrix> {
    let text = clean(text);
    let lines: Vec<&str> = text.lines().collect();
    let header_at = lines
        .iter()
        .position(|l| l.split_whitespace().next() == Some("GPU0"))
        .ok_or_else(|| Error::input(origin, "", "no `nvidia-smi topo -m` matrix found: expected a header line starting with GPU0"))?;
    let header: Vec<&str> = lines[header_at].split_whitespace().collect();
    let mut names = Vec::new();
    for (i, &t) in header.iter().enumerate() {
        // Trailing columns: "CPU Affinity", "NUMA Affinity", "GPU NUMA ID".
        if t == "CPU" || t == "NUMA" || (t == "GPU" && header.get(i + 1) == Some(&"NUMA")) {
            break;
        }
        names.push(t.to_string());
    }
    let has_numa = header.windows(2).any(|w| w == ["NUMA", "Affinity"]);
    let n = names.len();
    let mut rows: BTreeMap<String, (Vec<Rel>, Option<String>)> = BTreeMap::new();
    let mut nic_names = BTreeMap::new();
    let mut in_legend = false;
    for (k, line) in lines.iter().enumerate().skip(header_at + 1) {
        let t: Vec<&str> = line.split_whitespace().collect();
        if line.trim_start().starts_with("Legend") || line.trim_start().starts_with("NIC Legend") {
            in_legend = true;
            continue;
        }
        if in_legend {
            if let [nic, name] = t.as_slice() {
                if let Some(nic) = nic.strip_suffix(':') {
                    nic_names.insert(nic.to_string(), name.to_string());
                }
            }
            continue;
        }
        let Some(&first) = t.first() else { continue };
        if !names.iter().any(|x| x == first) {
            continue;
        }
        if t.len() < n + 1 {
            // A NIC's row cut off in the paste: its relations to the GPUs are in their rows.
            if !is_gpu(first) {
                continue;
            }
            return Err(Error::input(
                origin,
                format!("line {}", k + 1),
                format!("row {first} has {} entries for {n} columns; paste the whole `nvidia-smi topo -m` output", t.len() - 1),
            ));
        }
        let mut r = Vec::with_capacity(n);
        for (j, tok) in t[1..=n].iter().enumerate() {
            r.push(rel(tok).ok_or_else(|| {
                Error::input(
                    origin,
                    format!("line {}", k + 1),
                    format!("{first}/{}: \"{tok}\" is not a topo -m label (X, PIX, PXB, PHB, NODE, SYS, SOC or NV#)", names[j]),
                )
            })?);
        }
        // After the cells: CPU affinity, then NUMA affinity when the header has that column.
        let rest = &t[n + 1..];
        let key = match (has_numa, rest) {
            (true, [_, numa, ..]) if numa.parse::<u32>().is_ok() => Some(format!("numa {numa}")),
            (_, [cpus, ..]) if cpus.chars().next().is_some_and(|c| c.is_ascii_digit()) => Some(format!("cpus {cpus}")),
            _ => None,
        };
        rows.insert(first.to_string(), (r, key));
    }
    // Every GPU needs its row; a NIC whose row is missing or cut short (a partial paste) is
    // placed by the GPUs' rows, which give its relation to each GPU.
    if let Some(gpu) = names.iter().find(|x| is_gpu(x) && !rows.contains_key(*x)) {
        return Err(Error::input(
            origin,
            "",
            format!("the matrix has a column {gpu} but no complete row for it; paste the whole `nvidia-smi topo -m` output, every GPU's row included"),
        ));
    }
    let missing: Vec<usize> = (0..n).filter(|&i| !rows.contains_key(&names[i])).collect();
    if missing.len() == n {
        return Err(Error::input(origin, "", "the matrix has a header but no rows; paste the whole `nvidia-smi topo -m` output"));
    }
    let mut rel = Vec::with_capacity(n);
    let mut affinity = Vec::with_capacity(n);
    for (i, name) in names.iter().enumerate() {
        match rows.remove(name) {
            Some((r, a)) => {
                rel.push(r);
                affinity.push(a);
            }
            None => {
                rel.push((0..n).map(|j| if j == i { Rel::Same } else { Rel::Unknown }).collect());
                affinity.push(None);
            }
        }
    }
    for &i in &missing {
        let column: Vec<Rel> = rel.iter().map(|row| row[i]).collect();
        for (j, r) in column.into_iter().enumerate() {
            if !missing.contains(&j) {
                rel[i][j] = r;
            }
        }
    }
    if !missing.is_empty() {
        let list = missing.iter().map(|&i| names[i].as_str()).collect::<Vec<_>>().join(", ");
        notes.push(format!(
            "partial matrix: no complete row for {list} (cut off in the paste?); placed by the GPUs' rows, their relations to each other and their NUMA affinity left out"
        ));
    }
    Ok(Matrix { names, rel, affinity, nic_names })
}

struct Sets(Vec<usize>);

impl Sets {
    fn new(n: usize) -> Sets {
        Sets((0..n).collect())
    }
    fn find(&mut self, x: usize) -> usize {
        let p = self.0[x];
        if p == x {
            return x;
        }
        let r = self.find(p);
        self.0[x] = r;
        r
    }
    fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        self.0[a.max(b)] = a.min(b);
    }
    /// Groups of `members` by representative, in order of first member.
    fn groups(&mut self, members: &[usize]) -> Vec<Vec<usize>> {
        let mut out: Vec<(usize, Vec<usize>)> = Vec::new();
        for &m in members {
            let r = self.find(m);
            match out.iter_mut().find(|(k, _)| *k == r) {
                Some((_, g)) => g.push(m),
                None => out.push((r, vec![m])),
            }
        }
        out.into_iter().map(|(_, g)| g).collect()
    }
}

fn is_gpu(name: &str) -> bool {
    name.starts_with("GPU") && name[3..].parse::<u32>().is_ok()
}

pub fn parse(text: &str, origin: &str, numa_per_socket: u32) -> Result<Builder> {
    let mut notes = Vec::new();
    let m = parse_matrix(text, origin, &mut notes)?;
    let n = m.names.len();
    let mut b = Builder::default();
    for note in notes {
        b.assume(note);
    }
    let all: Vec<usize> = (0..n).collect();
    let close = |r: Rel, levels: &[Rel]| levels.contains(&r);

    // Sockets: devices that reach each other without the socket interconnect, or share a NUMA
    // node, or (--numa-per-socket K) sit on NUMA nodes n, n' with n / K = n' / K.
    let node = |i: usize| m.affinity[i].as_deref().and_then(|a| a.strip_prefix("numa ")).and_then(|x| x.parse::<u32>().ok());
    let same_socket = |i: usize, j: usize| node(i).zip(node(j)).is_some_and(|(a, b)| a / numa_per_socket == b / numa_per_socket);
    let mut socket = Sets::new(n);
    // Without a single SYS label there is one socket, whatever NVLink hides of PCIe.
    let one_socket = !m.rel.iter().flatten().any(|&r| r == Rel::Sys);
    for i in 0..n {
        for j in 0..n {
            if one_socket || close(m.rel[i][j], &[Rel::Pix, Rel::Pxb, Rel::Phb, Rel::Node]) {
                socket.join(i, j);
            }
        }
    }
    // Then the affinity columns join what the labels leave apart (NVLink pairs, cut-off rows),
    // but not across a SYS label: SYS is "traversing ... the SMP interconnect between NUMA nodes"
    // (the legend), measured per pair, where the column names a CPU set per device. Only
    // --numa-per-socket asks for SYS inside a socket (NUMA nodes of one socket).
    let affine = |i: usize, j: usize| i != j && ((m.affinity[i].is_some() && m.affinity[i] == m.affinity[j]) || same_socket(i, j));
    let mut overruled: Option<(usize, usize, usize, usize)> = None;
    for i in 0..n {
        for j in (0..n).filter(|&j| affine(i, j)) {
            let (a, b) = (socket.find(i), socket.find(j));
            if a == b {
                continue;
            }
            let group = |s: &mut Sets, r: usize| (0..n).filter(|&x| s.find(x) == r).collect::<Vec<_>>();
            let (ga, gb) = (group(&mut socket, a), group(&mut socket, b));
            let sys = ga.iter().flat_map(|&x| gb.iter().map(move |&y| (x, y))).find(|&(x, y)| m.rel[x][y] == Rel::Sys);
            match sys.filter(|_| numa_per_socket == 1) {
                Some((x, y)) => {
                    overruled.get_or_insert((i, j, x, y));
                }
                None => socket.join(i, j),
            }
        }
    }
    if let Some((i, j, x, y)) = overruled {
        let key = m.affinity[i].as_deref().or(m.affinity[j].as_deref()).unwrap_or_default();
        let column = match key.split_once(' ') {
            Some(("numa", v)) => format!("NUMA Affinity {v}"),
            Some((_, v)) => format!("CPU Affinity {v}"),
            None => "affinity".to_string(),
        };
        let between = if [i, j] == [x, y] || [i, j] == [y, x] {
            " between them".to_string()
        } else {
            format!(" between {} and {}, which that would put on one socket", m.names[x], m.names[y])
        };
        b.assume(format!(
            "the affinity columns contradict the matrix: {} and {} give the same NUMA node ({column}), but topo -m says SYS{between} (the legend: across the SMP interconnect between NUMA nodes); the matrix is followed, as its labels are per pair, so they sit on different sockets",
            m.names[i], m.names[j]
        ));
    }
    let sockets = socket.groups(&all);
    let mut roots = Vec::new();
    for (s, members) in sockets.iter().enumerate() {
        let root = format!("CPU{s}");
        b.device(&root, "root_complex", Some(format!("socket {s} PCIe root complex")));
        roots.push(root.clone());
        // Host bridges: PIX, PXB and PHB stay under one; NODE separates them.
        let mut bridge = Sets::new(n);
        for &i in members {
            for &j in members {
                if close(m.rel[i][j], &[Rel::Pix, Rel::Pxb, Rel::Phb]) {
                    bridge.join(i, j);
                }
            }
        }
        let bridges = bridge.groups(members);
        for (h, hb) in bridges.iter().enumerate() {
            let parent = if bridges.len() > 1 {
                let name = format!("HB{s}_{h}");
                b.device(&name, "root_complex", Some("PCIe host bridge".into()));
                b.link(&root, &name, "fabric", 1, "128GB/s");
                b.assume(if numa_per_socket > 1 {
                    format!("NODE, and SYS within a socket of {numa_per_socket} NUMA nodes (--numa-per-socket): devices under different PCIe host bridges of one socket; each host bridge is a root complex joined to {root} by the socket fabric (128 GB/s per direction, not a bottleneck)")
                } else {
                    format!("NODE: devices under different PCIe host bridges of one NUMA node; each host bridge is a root complex joined to {root} by the socket fabric (128 GB/s per direction, not a bottleneck)")
                });
                name
            } else {
                root.clone()
            };
            place_under_bridge(&m, &mut b, hb, &parent);
        }
        // 50 GB/s per NUMA node, as the other importers assume: a socket of K nodes has K times it.
        let nodes = members.iter().filter_map(|&i| node(i)).collect::<std::collections::BTreeSet<_>>().len().max(1);
        b.device(&format!("MEM{s}"), "host_memory", None);
        b.link(&root, &format!("MEM{s}"), "memory", 1, &format!("{}GB/s", 50 * nodes));
    }
    if !sockets.is_empty() {
        b.assume("host memory: 50 GB/s per NUMA node, one memory per socket (the dump does not say; set your platform's figure)");
    }
    for i in 0..roots.len() {
        for j in i + 1..roots.len() {
            b.link(&roots[i], &roots[j], "upi", 1, "20.8GB/s");
        }
    }
    let nodes: std::collections::BTreeSet<u32> = (0..n).filter_map(node).collect();
    let unknown: Vec<&str> = (0..n).filter(|&i| is_gpu(&m.names[i]) && node(i).is_none()).map(|i| m.names[i].as_str()).collect();
    if numa_per_socket > 1 && nodes.is_empty() {
        b.assume("--numa-per-socket left unused: no row of the dump gives a NUMA node (NUMA Affinity column missing or N/A)");
    } else if numa_per_socket > 1 && !unknown.is_empty() {
        let verb = if unknown.len() == 1 { "gives" } else { "give" };
        b.assume(format!("--numa-per-socket: {} {verb} no NUMA node and are placed by their topo -m labels only", unknown.join(", ")));
    }
    // Only where the dump shows several sockets (a SYS label) can the grouping have merged them.
    if !one_socket {
        b.say_numa_grouping(numa_per_socket, nodes.len(), roots.len());
    }
    if roots.len() > 1 {
        b.assume("SYS: sockets joined by one UPI-class link of 20.8 GB/s per direction each (the dump names neither the CPU maker nor the link count; the kind names the maker, whose rules NCCL applies: on AMD hosts make them kind xgmi, across which NCCL from 2.23.4 still goes through host memory (SHM) where a node has more than two GPUs, and peer-to-peer with two)");
    }
    nvlinks(&m, &mut b);
    b.assume("PCIe: every link Gen3 x16 (topo -m gives no generation or width; set gen and lanes per link)");
    b.assume("GPU model: topo -m names none; NCCL's choices (nccl-tests, collectives) then take compute capability 8.0 (Ampere): set `model` on each GPU (e.g. H100-SXM5-80GB)");
    b.assume("PIX: devices one switch apart share a switch; PXB: they share an upper switch; PHB: they hang under the root complex on separate branches");
    if m.names.iter().any(|x| !is_gpu(x)) {
        b.assume("columns other than GPUn are NICs");
    }
    Ok(b)
}

/// Switches under one host bridge: PIX groups are leaf switches, PXB groups share an upper switch.
fn place_under_bridge(m: &Matrix, b: &mut Builder, members: &[usize], parent: &str) {
    let n = m.names.len();
    let mut leaf = Sets::new(n);
    let mut upper = Sets::new(n);
    for &i in members {
        for &j in members {
            if m.rel[i][j] == Rel::Pix {
                leaf.join(i, j);
                upper.join(i, j);
            }
            if m.rel[i][j] == Rel::Pxb {
                upper.join(i, j);
            }
        }
    }
    for group in upper.groups(members) {
        let leaves = leaf.groups(&group);
        let top = if leaves.len() > 1 {
            let name = format!("SW{}", switch_index(b));
            b.device(&name, "pcie_switch", None);
            b.pcie(parent, &name, 3, 16);
            name
        } else {
            parent.to_string()
        };
        for l in leaves {
            let at = if l.len() > 1 {
                let name = format!("SW{}", switch_index(b));
                b.device(&name, "pcie_switch", None);
                b.pcie(&top, &name, 3, 16);
                name
            } else {
                top.clone()
            };
            for &d in &l {
                add_endpoint(m, b, d);
                b.pcie(&at, &m.names[d], 3, 16);
            }
        }
    }
}

fn switch_index(b: &Builder) -> usize {
    (0..).find(|k| !b.has_device(&format!("SW{k}"))).unwrap()
}

fn add_endpoint(m: &Matrix, b: &mut Builder, d: usize) {
    let name = &m.names[d];
    if is_gpu(name) {
        b.device(name, "gpu", None);
    } else {
        b.device(name, "nic", m.nic_names.get(name).cloned());
    }
}

/// NV#: a bond of # NVLinks. More links per GPU than any GPU has ports means an NVSwitch.
fn nvlinks(m: &Matrix, b: &mut Builder) {
    let n = m.names.len();
    let nv = |i: usize, j: usize| match m.rel[i][j] {
        Rel::Nv(k) => k,
        _ => 0,
    };
    let per_gpu: Vec<u32> = (0..n).map(|i| (0..n).map(|j| nv(i, j)).sum()).collect();
    let max = per_gpu.iter().copied().max().unwrap_or(0);
    if max == 0 {
        return;
    }
    if max > 18 {
        b.device("NVS", "nvswitch", Some("NVSwitch fabric".into()));
        for i in (0..n).filter(|&i| per_gpu[i] > 0) {
            let bond = (0..n).map(|j| nv(i, j)).max().unwrap_or(0);
            b.link(&m.names[i], "NVS", "nvlink", bond, "25GB/s");
        }
        b.assume(format!(
            "NV#: up to {max} NVLinks per GPU in all, more than a GPU has, so the GPUs meet in an NVSwitch fabric (NVS); each GPU joins it with its bond of # links"
        ));
    } else {
        for i in 0..n {
            for j in i + 1..n {
                if nv(i, j) > 0 {
                    b.link(&m.names[i], &m.names[j], "nvlink", nv(i, j), "25GB/s");
                }
            }
        }
        b.assume("NV#: direct NVLink bonds between GPU pairs");
    }
    b.assume("NVLink: 25 GB/s per link and direction (NVLink 2-4; P100 NVLink 1 has 20 GB/s)");
    // Only SXM parts of NVLink 4 and 5 have 18 links per GPU; topo -m cannot tell them apart.
    if (0..n).any(|i| (0..n).any(|j| nv(i, j) == 18)) {
        b.assume(
            "NV18: 18 NVLinks per GPU is NVLink 4 (H100/H200 SXM: 25 GB/s per link and direction, PCIe Gen5) or NVLink 5 (B200: 50 GB/s); set each GPU's model, the NVLink bandwidth and the PCIe gen to match",
        );
    }
}
