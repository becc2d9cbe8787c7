//! NCCL topology XML (NCCL_TOPO_DUMP_FILE, or a hand-written NCCL_TOPO_FILE): CPUs (NUMA nodes),
//! the PCIe tree below each with link speed and width, GPUs with their NVLinks, NICs.

use super::builder::{pcie_gen, Builder};
use super::xml::{self, Element};
use crate::error::{Error, Result};
use std::collections::BTreeMap;

/// PCI class codes (the upper 16 bits of `class`).
fn class_of(el: &Element) -> u32 {
    el.attr("class").and_then(|c| u32::from_str_radix(c.trim_start_matches("0x"), 16).ok()).map(|c| c >> 8).unwrap_or(0)
}

const BRIDGE: u32 = 0x0604;
const NVSWITCH: u32 = 0x0680;

fn is_gpu_class(c: u32) -> bool {
    matches!(c, 0x0300 | 0x0302 | 0x0380)
}

fn is_nic_class(c: u32) -> bool {
    matches!(c, 0x0200 | 0x0207)
}

/// (generation, lanes) of the link above a `<pci>` element, as NCCL reports it.
fn link_of(el: &Element) -> (Option<u8>, u8) {
    let gts = el.attr("link_speed").and_then(|s| s.split_whitespace().next()).and_then(|s| s.parse::<f64>().ok());
    let lanes = el.attr("link_width").and_then(|w| w.parse::<u8>().ok()).unwrap_or(0);
    (gts.and_then(pcie_gen), lanes)
}

struct State {
    b: Builder,
    gpus_by_bus: BTreeMap<String, String>,
    gpu_sm: BTreeMap<String, u32>,
    gpu_root: BTreeMap<String, String>,
    nvlinks: Vec<(String, String, String, u32)>,
    next_gpu: u32,
    next_nic: u32,
    next_switch: u32,
    /// The first `<net speed=...>` that no NIC runs at (file line, value).
    bad_speed: Option<(usize, String)>,
    /// NICs whose `<net>` gives no speed (or NCCL's "unknown", 0 or -1).
    no_speed: Vec<String>,
    /// NICs and their rate read from `<net speed>`, Gb/s.
    speeds: Vec<(String, f64)>,
}

pub fn parse(text: &str, origin: &str, numa_per_socket: u32) -> Result<Builder> {
    let root = xml::parse(text, origin)?;
    if root.name != "system" {
        return Err(Error::input(origin, "", format!("the root element is <{}>, not <system>: not an NCCL topology file", root.name)));
    }
    let mut st = State {
        b: Builder::default(),
        gpus_by_bus: BTreeMap::new(),
        gpu_sm: BTreeMap::new(),
        gpu_root: BTreeMap::new(),
        nvlinks: Vec::new(),
        next_gpu: 0,
        next_nic: 0,
        next_switch: 0,
        bad_speed: None,
        no_speed: Vec::new(),
        speeds: Vec::new(),
    };
    let cpus: Vec<&Element> = root.children.iter().filter(|c| c.name == "cpu").collect();
    if cpus.is_empty() {
        return Err(Error::input(origin, "", "no <cpu> element: an NCCL topology lists the PCIe tree under each CPU"));
    }
    let mut roots = Vec::new();
    for (k, cpu) in cpus.iter().enumerate() {
        let numa = cpu.attr("numaid").unwrap_or("").to_string();
        let root = format!("CPU{}", if numa.parse::<u32>().is_ok() { numa.clone() } else { k.to_string() });
        let vendor = cpu.attr("vendor").unwrap_or("unknown vendor");
        st.b.device(&root, "root_complex", Some(format!("NUMA node {numa}, {vendor}")));
        for child in &cpu.children {
            place(&mut st, child, &root, &root);
        }
        roots.push((root, vendor.to_string(), numa.parse::<u32>().unwrap_or(k as u32)));
    }
    let amd = roots.iter().all(|r| r.1 == "AuthenticAMD");
    st.b.sockets(&roots.into_iter().map(|r| (r.0, r.2)).collect::<Vec<_>>(), amd, numa_per_socket);
    if let Some((line, speed)) = st.bad_speed {
        return Err(Error::input(
            origin,
            format!("line {line}"),
            format!(
                "<net speed=\"{speed}\"> is no NIC's rate: NCCL writes the speed in Mb/s (400000 for 400 Gb/s); give {} to {} or leave it out",
                MIN_SPEED_MBPS, MAX_SPEED_MBPS
            ),
        ));
    }
    if !st.speeds.is_empty() {
        // One group per rate: "mlx5_0, mlx5_1 400 Gb/s".
        let mut by_rate: Vec<(f64, Vec<&str>)> = Vec::new();
        for (n, g) in &st.speeds {
            match by_rate.iter_mut().find(|(r, _)| r == g) {
                Some((_, names)) => names.push(n),
                None => by_rate.push((*g, vec![n])),
            }
        }
        let said: Vec<String> = by_rate.iter().map(|(g, names)| format!("{} {g} Gb/s", names.join(", "))).collect();
        st.b.assume(format!("NICs at the speed their <net speed=...> gives (Mb/s, as NCCL writes it; each NIC's port_bandwidth): {}", said.join(", ")));
    }
    if !st.no_speed.is_empty() {
        st.b.assume(format!(
            "{}: no speed in the file (or 0 or -1, as some NICs report): their network rate is left unset, so contend nccl-tests --nodes takes 25 GB/s (200 Gb/s) for each (NCCL itself takes 10 Gb/s, 2.30.7 src/graph/topo.cc); give port_bandwidth on each NIC",
            st.no_speed.join(", ")
        ));
    }
    nvlinks(&mut st);
    if st.next_gpu == 0 {
        return Err(Error::input(origin, "", "no GPU in the file (no <gpu> element and no PCI device of a display class)"));
    }
    Ok(st.b)
}

fn place(st: &mut State, el: &Element, parent: &str, root: &str) {
    match el.name.as_str() {
        "pci" => {}
        "nic" => {
            // A NIC straight under a CPU (a socket network device).
            let name = nic_name(st, el);
            st.b.device(&name, "nic", None);
            nic_speed(st, el, &name);
            st.b.pcie(parent, &name, 3, 16);
            st.b.assume(format!("{name}: a NIC without PCIe details, placed on {parent}'s root port as Gen3 x16"));
            return;
        }
        _ => return,
    }
    let bus = el.attr("busid").unwrap_or("?").to_string();
    // A function listed inside itself (the same bus id one level down, as some VMs' dumps
    // show a NIC): one device, read as its inner element; anything else under the outer one
    // hangs where the outer one would.
    if let Some(inner) = el.children.iter().find(|c| c.name == "pci" && c.attr("busid").is_some_and(|b| b.eq_ignore_ascii_case(&bus))) {
        st.b.assume(format!("PCI device {bus} appears inside itself in the file: read once, as the inner element"));
        place(st, inner, parent, root);
        for c in el.children.iter().filter(|c| !std::ptr::eq(*c, inner)) {
            place(st, c, parent, root);
        }
        return;
    }
    let class = class_of(el);
    let (gen, lanes) = effective_link(st, el);
    let name = if class == BRIDGE || (!is_gpu_class(class) && !is_nic_class(class) && el.children.iter().any(|c| c.name == "pci")) {
        let name = format!("SW{}", st.next_switch);
        st.next_switch += 1;
        st.b.device(&name, "pcie_switch", Some(format!("PCIe bridge at {bus}")));
        name
    } else if is_gpu_class(class) || el.children.iter().any(|c| c.name == "gpu") {
        let gpu = el.children.iter().find(|c| c.name == "gpu");
        let name = match gpu.and_then(|g| g.attr("dev")).and_then(|d| d.parse::<u32>().ok()) {
            Some(d) => format!("GPU{d}"),
            None => {
                st.b.assume("GPUs without a <gpu dev=...> element are numbered in the order of the file");
                format!("GPU{}", st.next_gpu)
            }
        };
        st.next_gpu += 1;
        let sm = gpu.and_then(|g| g.attr("sm")).and_then(|s| s.parse::<u32>().ok());
        st.b.device(
            &name,
            "gpu",
            Some(match sm {
                Some(sm) => format!("sm {sm} at {bus}"),
                None => format!("GPU at {bus}"),
            }),
        );
        st.gpus_by_bus.insert(bus.to_lowercase(), name.clone());
        st.gpu_root.insert(name.clone(), root.to_string());
        if let Some(sm) = sm {
            st.gpu_sm.insert(name.clone(), sm);
        }
        for nv in gpu.map(|g| g.children.as_slice()).unwrap_or(&[]).iter().filter(|c| c.name == "nvlink") {
            let count = nv.attr("count").and_then(|c| c.parse().ok()).unwrap_or(1);
            st.nvlinks.push((name.clone(), nv.attr("target").unwrap_or("").to_lowercase(), nv.attr("tclass").unwrap_or("").to_string(), count));
        }
        name
    } else if is_nic_class(class) || el.children.iter().any(|c| c.name == "nic") {
        let nic = el.children.iter().find(|c| c.name == "nic");
        let name = match nic {
            Some(n) => nic_name(st, n),
            None => {
                st.next_nic += 1;
                format!("NIC{}", st.next_nic - 1)
            }
        };
        st.b.device(&name, "nic", Some(format!("NIC at {bus}")));
        if let Some(n) = nic {
            nic_speed(st, n, &name);
        }
        name
    } else {
        if class != NVSWITCH {
            // An NVSwitch's own PCIe function only manages it; its NVLinks are read from the GPUs.
            st.b.assume(format!("PCI device {bus} (class {:#06x}) is neither bridge, GPU nor NIC: left out", class));
        }
        return;
    };
    let gen = gen.unwrap_or_else(|| {
        st.b.assume(format!("{name}: no known PCIe link speed in the file; Gen3 assumed"));
        3
    });
    let lanes = if lanes == 0 {
        st.b.assume(format!("{name}: link width 0 or missing in the file (common in virtual machines); x16 assumed"));
        16
    } else {
        lanes
    };
    st.b.pcie(parent, &name, gen, lanes);
    if el.children.iter().all(|c| c.name != "pci") && class == BRIDGE {
        st.b.assume(format!("{name}: a bridge with nothing below it"));
    }
    for c in el.children.iter().filter(|c| c.name == "pci") {
        place(st, c, &name, root);
    }
}

/// A bridge that reports a link slower than every device below it is a virtual one (as in cloud
/// VMs, which show 2.5 GT/s x1): use the fastest link below it instead.
fn effective_link(st: &mut State, el: &Element) -> (Option<u8>, u8) {
    let own = link_of(el);
    if class_of(el) != BRIDGE {
        return own;
    }
    let below = el.children.iter().filter(|c| c.name == "pci").map(link_of).filter(|(g, _)| g.is_some()).max_by_key(|&(g, w)| (g, w));
    match below {
        Some((g, w)) if g > own.0 => {
            st.b.assume(format!(
                "the bridge at {} reports Gen{} x{}, slower than the devices below it (a virtual bridge): given their link Gen{} x{}",
                el.attr("busid").unwrap_or("?"),
                own.0.unwrap_or(0),
                own.1,
                g.unwrap_or(0),
                if w == 0 { 16 } else { w }
            ));
            (g, if w == 0 { 16 } else { w })
        }
        _ => own,
    }
}

/// The slowest and fastest `<net speed>` (Mb/s) read as a NIC's rate: 8 Mb/s is contend's
/// slowest link (`units::MIN_LINK_BANDWIDTH`, 1 MB/s); 1.6 Tb/s is twice the fastest NIC port
/// sold (800 Gb/s, ConnectX-8), room for a NIC of two such ports.
const MIN_SPEED_MBPS: u64 = 8;
const MAX_SPEED_MBPS: u64 = 1_600_000;

/// A NIC's rate from its `<net speed="...">`, which NCCL writes in Mb/s (2.30.7 src/graph/topo.cc
/// `ncclTopoAddNet`: bw = speed / 8000 GB/s; a speed of 0 or -1, as some NICs report, is 10 Gb/s
/// there): written as the NIC's `port_bandwidth`, which `contend nccl-tests --nodes` wires it at.
fn nic_speed(st: &mut State, nic: &Element, name: &str) {
    let Some(net) = nic.children.iter().find(|c| c.name == "net") else { return };
    let Some(speed) = net.attr("speed").map(str::trim) else {
        st.no_speed.push(name.to_string());
        return;
    };
    match speed.parse::<i64>() {
        Ok(v) if v == 0 || v == -1 => st.no_speed.push(name.to_string()),
        Ok(v) if (MIN_SPEED_MBPS as i64..=MAX_SPEED_MBPS as i64).contains(&v) => {
            // Mb/s to GB/s: a 400000 Mb/s port is 50 GB/s.
            st.b.field(name, "port_bandwidth", format!("{}GB/s", v as f64 / 8000.0));
            st.speeds.push((name.to_string(), v as f64 / 1000.0));
        }
        _ => {
            if st.bad_speed.is_none() {
                st.bad_speed = Some((net.line, speed.to_string()));
            }
        }
    }
}

fn nic_name(st: &mut State, nic: &Element) -> String {
    let net = nic.children.iter().find(|c| c.name == "net").and_then(|n| n.attr("name"));
    match net {
        Some(n) if n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') => n.to_string(),
        _ => {
            st.next_nic += 1;
            format!("NIC{}", st.next_nic - 1)
        }
    }
}

/// The GPUs' NVLinks. Every link to an NVSwitch, whichever chip the file names, joins one
/// crossbar, NVS, each GPU with its links to all the chips summed, as NCCL builds its own view
/// (2.30.7 src/graph/topo.cc `ncclTopoAddNvLinks`: a target of class NVSwitch is the system's one
/// NVS node, created at the first such link; `ncclTopoConnectNodes` adds a repeated link's
/// bandwidth to the one already there), and as `topo -m` import and the HGX presets write it.
fn nvlinks(st: &mut State) {
    if st.nvlinks.is_empty() {
        st.b.assume("the file lists no NVLinks: GPUs are joined by PCIe only (add NVLink links if the node has them)");
        return;
    }
    // Per GPU in the file's order: its links to the NVSwitches and their bandwidth.
    let mut to_nvs: Vec<(String, u32, &'static str)> = Vec::new();
    let mut chips: Vec<String> = Vec::new();
    let mut hidden = false;
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (gpu, target, tclass, count) in std::mem::take(&mut st.nvlinks) {
        let sm = st.gpu_sm.get(&gpu).copied().unwrap_or(70);
        let bw = match sm {
            0..=69 => "20GB/s",
            70..=99 => "25GB/s",
            _ => "50GB/s",
        };
        let own = st.gpus_by_bus.get(&target).is_some_and(|p| *p == gpu);
        let mut join = |gpu: &str| match to_nvs.iter_mut().find(|(g, _, _)| g == gpu) {
            Some(e) => e.1 += count,
            None => to_nvs.push((gpu.to_string(), count, bw)),
        };
        if own && tclass.starts_with("0x0680") {
            // A VM that hides the NVSwitches (Azure NDv4) reports the GPU's own bus id as the
            // far end: the class still says NVSwitch, so join the GPU to the NVSwitch fabric.
            join(&gpu);
            hidden = true;
        } else if own {
            st.b.assume(format!("{gpu}: an NVLink to its own bus id {target} in the file: left out (a link joins two devices)"));
        } else if let Some(peer) = st.gpus_by_bus.get(&target).cloned() {
            // Both GPUs list the bond; keep it once.
            let key = if gpu < peer { (gpu.clone(), peer.clone()) } else { (peer.clone(), gpu.clone()) };
            if !pairs.contains(&key) {
                st.b.link(&gpu, &peer, "nvlink", count, bw);
                pairs.push(key);
            }
        } else if tclass.starts_with("0x0604") || tclass.starts_with("0x0600") {
            let cpu = st.gpu_root[&gpu].clone();
            st.b.assume(format!("{gpu}: NVLink to the CPU ({target}) joins it to {cpu}"));
            st.b.link(&gpu, &cpu, "nvlink", count, bw);
        } else {
            join(&gpu);
            if !chips.contains(&target) {
                chips.push(target);
            }
        }
    }
    if !to_nvs.is_empty() {
        let model = match chips.len() {
            0 => "NVSwitch fabric (hidden by the VM)".to_string(),
            1 => format!("NVSwitch at {}", chips[0]),
            n => format!("NVSwitch fabric: {n} chips as one crossbar"),
        };
        // The switch's generation is its GPUs' NVLink's (NVIDIA's pairing: NVLink 2 with sm 70,
        // 3 with sm 80, 4 with sm 90, 5 with sm 100), which says whether it multicasts (NVLS,
        // `resolve::nvswitch_generation`): the file names no switch model.
        let sm = to_nvs.iter().filter_map(|(g, _, _)| st.gpu_sm.get(g)).max().copied();
        let nvlink = match sm {
            Some(70..=79) => Some(2),
            Some(80..=89) => Some(3),
            Some(90..=99) => Some(4),
            Some(100..) => Some(5),
            _ => None,
        };
        let model = match (nvlink, sm) {
            (Some(g), Some(sm)) => format!("{model}, NVLink {g} (its GPUs are sm {sm})"),
            _ => model,
        };
        st.b.device("NVS", "nvswitch", Some(model));
        for (gpu, count, bw) in &to_nvs {
            st.b.link(gpu, "NVS", "nvlink", *count, bw);
        }
        if hidden {
            st.b.assume(
                "NVLinks to an NVSwitch whose bus id is the GPU's own (as VMs that hide the NVSwitches report it): each such GPU joins the NVSwitch fabric, NVS, with its links",
            );
        }
        if let (Some(g), Some(sm)) = (nvlink, sm) {
            st.b.assume(format!(
                "NVS: the NVSwitch generation of NVLink {g}, as its sm {sm} GPUs have (NVLink 4 and later multicast: NCCL's NVLS runs on them)"
            ));
        }
        if chips.len() > 1 {
            let links: Vec<String> = to_nvs.iter().map(|(g, c, _)| format!("{g} {c}")).collect();
            st.b.assume(format!(
                "the {} NVSwitch chips ({}) are one crossbar, NVS, each GPU's links to them summed ({}), as NCCL joins them (2.30.7 src/graph/topo.cc ncclTopoAddNvLinks: one NVS node)",
                chips.len(),
                chips.join(", "),
                links.join(", ")
            ));
        }
    }
    st.b.assume("NVLink: 20 GB/s per link and direction for sm < 70, 25 GB/s for sm 70-90, 50 GB/s from sm 100 (NVLink 1, 2-4, 5)");
}
