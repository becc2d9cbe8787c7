//! `sudo lspci -vvv` (with or without `-nn` and `-D`): every PCI function with its bridge bus
//! ranges, PCIe port type, link capability and status, NUMA node and ACS control. Unlike the other
//! dumps it fixes the PCIe tree exactly, each link's generation and width, and which switches
//! redirect peer-to-peer traffic (ACS); it shows no NVLink and no socket interconnect.

use super::builder::{pcie_gen, Builder};
use crate::error::{Error, Result};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Addr {
    domain: u32,
    bus: u8,
    dev: u8,
    func: u8,
}

impl std::fmt::Display for Addr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04x}:{:02x}:{:02x}.{}", self.domain, self.bus, self.dev, self.func)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Port {
    Root,
    Upstream,
    Downstream,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Bridge,
    Display,
    Network,
    Other,
}

/// A link as lspci reports it: speed in GT/s per lane, width in lanes.
#[derive(Clone, Copy, Debug, Default)]
struct Link {
    gts: Option<f64>,
    width: Option<u8>,
}

#[derive(Debug)]
struct Function {
    addr: Addr,
    class: Class,
    /// The class as printed, e.g. "Bridge [0680]".
    class_text: String,
    description: String,
    nvidia: bool,
    /// A bridge's secondary bus.
    secondary: Option<u8>,
    port: Option<Port>,
    cap: Link,
    sta: Link,
    /// `ACSCtl` seen: whether requests are redirected upstream.
    acs_redirect: Option<bool>,
    numa: Option<u32>,
}

/// Whether `text` is lspci output: some line at the margin starts with a bus address.
pub fn is_dump(text: &str) -> bool {
    text.lines().any(|l| !l.starts_with([' ', '\t']) && l.split_once(' ').is_some_and(|(a, _)| addr(a).is_some()))
}

/// `0000:17:00.0` or `17:00.0`, the start of a function's record.
fn addr(token: &str) -> Option<Addr> {
    let (domain, rest) = match token.matches(':').count() {
        2 => {
            let (d, r) = token.split_once(':')?;
            (u32::from_str_radix(d, 16).ok()?, r)
        }
        1 => (0, token),
        _ => return None,
    };
    let (bus, df) = rest.split_once(':')?;
    let (dev, func) = df.split_once('.')?;
    let ok = bus.len() == 2 && dev.len() == 2 && func.len() == 1;
    ok.then_some(())?;
    Some(Addr { domain, bus: u8::from_str_radix(bus, 16).ok()?, dev: u8::from_str_radix(dev, 16).ok()?, func: func.parse().ok().filter(|&f| f < 8)? })
}

/// "PCI bridge [0604]" or "PCI bridge": the class by its code where `-nn` gave one, else by name.
fn class_of(text: &str) -> Class {
    let code = text.rsplit_once('[').and_then(|(_, c)| u16::from_str_radix(c.trim_end_matches(']'), 16).ok());
    match code.map(|c| c >> 8) {
        Some(0x06) if code == Some(0x0604) => Class::Bridge,
        Some(0x03) => Class::Display,
        Some(0x02) if matches!(code, Some(0x0200 | 0x0207 | 0x0280)) => Class::Network,
        Some(_) => Class::Other,
        None => match text.trim() {
            "PCI bridge" => Class::Bridge,
            "VGA compatible controller" | "3D controller" | "Display controller" => Class::Display,
            "Ethernet controller" | "Infiniband controller" | "Network controller" => Class::Network,
            _ => Class::Other,
        },
    }
}

/// "Speed 16GT/s (ok), Width x16 (ok)" and "Port #0, Speed 8GT/s, Width x8, ASPM ...".
fn link(text: &str) -> Link {
    let mut l = Link::default();
    for part in text.split(',') {
        let part = part.trim();
        if let Some(s) = part.strip_prefix("Speed ") {
            l.gts = s.split("GT/s").next().and_then(|v| v.trim().parse().ok());
        } else if let Some(w) = part.strip_prefix("Width x") {
            l.width = w.split_whitespace().next().and_then(|v| v.parse().ok()).filter(|&w: &u8| w > 0);
        }
    }
    l
}

fn parse(text: &str) -> Vec<Function> {
    let mut fns: Vec<Function> = Vec::new();
    for raw in text.lines() {
        if raw.trim().is_empty() {
            continue;
        }
        if !raw.starts_with([' ', '\t']) {
            // A record's first line; anything else at the margin (a prompt, a warning) is skipped.
            let Some((token, rest)) = raw.split_once(' ') else { continue };
            let Some(a) = addr(token) else { continue };
            let (class, description) = rest.split_once(": ").unwrap_or((rest, ""));
            fns.push(Function {
                addr: a,
                class: class_of(class),
                class_text: class.to_string(),
                description: description.split(" (rev ").next().unwrap_or(description).trim().to_string(),
                nvidia: description.contains("NVIDIA") || description.contains("[10de:"),
                secondary: None,
                port: None,
                cap: Link::default(),
                sta: Link::default(),
                acs_redirect: None,
                numa: None,
            });
            continue;
        }
        let Some(f) = fns.last_mut() else { continue };
        let line = raw.trim();
        let value = |key: &str| line.strip_prefix(key).map(str::trim);
        if let Some(v) = value("Bus:") {
            f.secondary = v.split(',').find_map(|p| p.trim().strip_prefix("secondary=")).and_then(|b| u8::from_str_radix(b, 16).ok());
        } else if let Some(v) = value("NUMA node:") {
            f.numa = v.parse().ok();
        } else if let Some(v) = value("LnkCap:") {
            f.cap = link(v);
        } else if let Some(v) = value("LnkSta:") {
            f.sta = link(v);
        } else if let Some(v) = value("ACSCtl:") {
            f.acs_redirect = Some(v.contains("ReqRedir+"));
        } else if let Some(v) = value("Capabilities:") {
            if v.contains("Express") {
                f.port = if v.contains("Root Port") {
                    Some(Port::Root)
                } else if v.contains("Upstream Port") {
                    Some(Port::Upstream)
                } else if v.contains("Downstream Port") {
                    Some(Port::Downstream)
                } else {
                    f.port
                };
            }
        }
    }
    fns
}

struct Tree<'a> {
    fns: &'a [Function],
    /// The bridge whose secondary bus each (domain, bus) is.
    bridge_of_bus: BTreeMap<(u32, u8), usize>,
}

impl Tree<'_> {
    fn parent(&self, i: usize) -> Option<usize> {
        let a = self.fns[i].addr;
        self.bridge_of_bus.get(&(a.domain, a.bus)).copied().filter(|&p| p != i)
    }

    /// A bridge's port type: as the dump says, else from its place (a bridge on a root bus is a root
    /// port, one below a root or downstream port a switch's upstream port, one below that a
    /// downstream port), which is how the tree reads without root's capabilities.
    fn port(&self, i: usize) -> Port {
        if let Some(p) = self.fns[i].port {
            return p;
        }
        match self.parent(i) {
            None => Port::Root,
            Some(p) => match self.port(p) {
                Port::Upstream => Port::Downstream,
                _ => Port::Upstream,
            },
        }
    }

    /// The root port or the function on a root bus at the top of `i`'s branch.
    fn top(&self, i: usize) -> usize {
        let mut i = i;
        while let Some(p) = self.parent(i) {
            i = p;
        }
        i
    }
}

struct Import<'a> {
    tree: Tree<'a>,
    b: Builder,
    /// Root complex per (domain, root bus).
    roots: BTreeMap<(u32, u8), String>,
    /// Each switch placed: its upstream port and its name.
    switches: Vec<(usize, String)>,
    downgraded: Vec<String>,
    unknown_links: Vec<String>,
}

impl Import<'_> {
    fn numa(&self, i: usize) -> Option<u32> {
        let mut i = Some(i);
        while let Some(j) = i {
            if let Some(n) = self.tree.fns[j].numa {
                return Some(n);
            }
            i = self.tree.parent(j);
        }
        None
    }

    fn root_name(&self, i: usize) -> (u32, u8) {
        let top = self.tree.fns[self.tree.top(i)].addr;
        (top.domain, top.bus)
    }

    /// The device directly above function `i` in the model, placing its switches first.
    fn above(&mut self, i: usize) -> String {
        match self.tree.parent(i) {
            None => self.roots[&self.root_name(i)].clone(),
            Some(p) => match self.tree.port(p) {
                Port::Root => self.roots[&self.root_name(i)].clone(),
                // A function on a switch's internal bus (a management or DMA endpoint).
                Port::Upstream => self.switch(p),
                Port::Downstream => match self.tree.parent(p) {
                    Some(up) if self.tree.port(up) == Port::Upstream => self.switch(up),
                    _ => self.above(p),
                },
            },
        }
    }

    /// The switch whose upstream port is `up`, placed with its uplink.
    fn switch(&mut self, up: usize) -> String {
        if let Some((_, name)) = self.switches.iter().find(|(u, _)| *u == up) {
            return name.clone();
        }
        let name = format!("SW{}", self.switches.len());
        self.switches.push((up, name.clone()));
        self.place(up, &name, "pcie_switch");
        name
    }

    /// Function `i` as model device `name` of `kind`, joined to what is above it.
    fn place(&mut self, i: usize, name: &str, kind: &'static str) {
        let f = &self.tree.fns[i];
        self.b.device(name, kind, Some(format!("{} at {}", f.description, f.addr)));
        self.attach(i, name);
    }

    /// The link from what is above function `i` to its model device `name`.
    fn attach(&mut self, i: usize, name: &str) {
        let parent = self.above(i);
        let fns = self.tree.fns;
        let port = self.tree.parent(i).map(|p| &fns[p]);
        let f = &fns[i];
        // A GPU's link at the capable speed of both ends: idle GPUs train their links down, and
        // `LnkSta` shows that. Any other link at the speed it trained to (a link that trained
        // below its ends' speed is slow in use too).
        let capable = match (f.cap.gts, port.and_then(|p| p.cap.gts)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let gts = if f.class == Class::Display { capable.or(f.sta.gts) } else { f.sta.gts.or(capable) };
        let width = f.sta.width.or(f.cap.width).or(port.and_then(|p| p.cap.width));
        if let (Some(now), Some(g)) = (f.sta.gts, gts) {
            if now < g && f.class == Class::Display {
                self.downgraded.push(format!("{name} ({now} GT/s)"));
            }
        }
        let gen = gts.and_then(pcie_gen);
        if gen.is_none() || width.is_none() {
            self.unknown_links.push(name.to_string());
        }
        self.b.pcie(&parent, name, gen.unwrap_or(3), width.unwrap_or(16));
    }
}

pub fn parse_dump(text: &str, origin: &str, numa_per_socket: u32) -> Result<Builder> {
    let fns = parse(text);
    if fns.is_empty() {
        return Err(Error::input(origin, "", "no lspci record found: expected lines like `0000:17:00.0 PCI bridge: …` (the output of `sudo lspci -vvv`)"));
    }
    let bridges: Vec<usize> = (0..fns.len()).filter(|&i| fns[i].class == Class::Bridge).collect();
    if !bridges.is_empty() && bridges.iter().all(|&i| fns[i].secondary.is_none()) {
        return Err(Error::input(
            origin,
            "",
            "the bridges have no `Bus: primary=…, secondary=…` lines, so the tree cannot be read: save `sudo lspci -vvv`, not plain `lspci`",
        ));
    }
    // A dump filtered to some devices (`lspci -d 10de:`, `-s`) has lost the bridges above them:
    // read as it is, every GPU would be a root complex of its own.
    let host_bridge = fns.iter().any(|f| f.class_text.starts_with("Host bridge"));
    if bridges.is_empty() && !host_bridge && fns.iter().any(|f| f.class == Class::Display && f.nvidia && f.addr.bus != 0) {
        return Err(Error::input(
            origin,
            "",
            "the dump has GPUs behind bridges but no bridge and no host bridge: it looks filtered (lspci -d or -s); save the whole `sudo lspci -vvv`",
        ));
    }
    // A bridge's secondary bus is above its own (`secondary=00`: an unassigned bridge), so every
    // chain of parents ends at a root bus.
    let below = |i: usize| fns[i].secondary.filter(|&s| s > fns[i].addr.bus);
    let tree = Tree { bridge_of_bus: bridges.iter().filter_map(|&i| Some(((fns[i].addr.domain, below(i)?), i))).collect(), fns: &fns };
    let mut order: Vec<usize> = (0..fns.len()).collect();
    order.sort_by_key(|&i| fns[i].addr);
    // A GPU is function 0 of its device; NVIDIA display functions past it are SR-IOV virtual
    // functions (vGPU), as are adapters' "Virtual Function"s: neither is a device of its own.
    let virtual_fn = |i: usize| fns[i].description.contains("Virtual Function") || (fns[i].class == Class::Display && fns[i].addr.func != 0);
    let skipped_virtual = order.iter().filter(|&&i| matches!(fns[i].class, Class::Display | Class::Network) && virtual_fn(i)).count();
    let gpus: Vec<usize> = order.iter().copied().filter(|&i| fns[i].class == Class::Display && fns[i].nvidia && !virtual_fn(i)).collect();
    if gpus.is_empty() {
        return Err(Error::input(origin, "", "no NVIDIA GPU in the lspci dump (no display or 3D controller by NVIDIA)"));
    }
    // One NIC per device: the functions of a multi-port adapter share its link. Narrow Ethernet
    // (x1-x4: management ports) is left out.
    let device = |i: usize| (fns[i].addr.domain, fns[i].addr.bus, fns[i].addr.dev);
    let mut adapters: Vec<usize> = order.iter().copied().filter(|&i| fns[i].class == Class::Network && !virtual_fn(i)).collect();
    adapters.dedup_by_key(|i| device(*i));
    let (nics, narrow): (Vec<usize>, Vec<usize>) = adapters.into_iter().partition(|&i| fns[i].cap.width.or(fns[i].sta.width).is_none_or(|w| w >= 8));
    let narrow = narrow.len();
    let mut im = Import { tree, b: Builder::default(), roots: BTreeMap::new(), switches: Vec::new(), downgraded: Vec::new(), unknown_links: Vec::new() };

    // Root complexes: one per NUMA node; several root buses of one node (Xeon PCIe stacks, EPYC
    // quadrants) are host bridges joined to it by the socket fabric, as `nvidia-smi topo -m`'s NODE.
    let placed_fns: Vec<usize> = gpus.iter().chain(&nics).copied().collect();
    let numa_known = placed_fns.iter().any(|&i| im.numa(i).is_some());
    let mut by_node: BTreeMap<u32, Vec<(u32, u8)>> = BTreeMap::new();
    for &i in &placed_fns {
        let root = im.root_name(i);
        let node = im.numa(i).unwrap_or(0);
        let buses = by_node.entry(node).or_default();
        if !buses.contains(&root) {
            buses.push(root);
        }
    }
    // The CPU's maker from its host bridges and root ports (an AMD GPU on an Intel host says nothing).
    let cpu_part = |f: &&Function| f.class_text.starts_with("Host bridge") || f.port == Some(Port::Root);
    let amd = fns.iter().filter(cpu_part).any(|f| f.description.contains("Advanced Micro Devices") || f.description.contains("[1022:"));
    let mut sockets = Vec::new();
    for (node, buses) in &by_node {
        let cpu = format!("CPU{node}");
        im.b.device(&cpu, "root_complex", Some(format!("NUMA node {node}, {}", if amd { "AMD" } else { "Intel" })));
        sockets.push((cpu.clone(), *node));
        for &(domain, bus) in buses {
            let root = if buses.len() > 1 {
                let hb = format!("HB{node}_{domain:x}_{bus:02x}");
                im.b.device(&hb, "root_complex", Some(format!("PCIe host bridge {domain:04x}:{bus:02x}")));
                im.b.link(&cpu, &hb, "fabric", 1, "128GB/s");
                hb
            } else {
                cpu.clone()
            };
            im.roots.insert((domain, bus), root);
        }
        if buses.len() > 1 {
            im.b.assume(format!(
                "{cpu}: devices under {} PCIe root buses of one NUMA node; each is a root complex (HB…) joined to {cpu} by the socket fabric (128 GB/s per direction, not a bottleneck)",
                buses.len()
            ));
        }
    }
    if !numa_known {
        im.b.assume("no NUMA node in the dump: one socket assumed (CPU0)");
    }
    for (k, &i) in gpus.iter().enumerate() {
        im.place(i, &format!("GPU{k}"), "gpu");
    }
    for (k, &i) in nics.iter().enumerate() {
        im.place(i, &format!("NIC{k}"), "nic");
    }
    im.b.sockets(&sockets, amd, numa_per_socket);
    im.b.assume("GPUs numbered in PCI bus order (CUDA_DEVICE_ORDER=PCI_BUS_ID, as nvidia-smi numbers them)");
    if !nics.is_empty() {
        im.b.assume("NICs: one per PCI device (the ports of a multi-port adapter share its link), numbered in bus order");
    }
    if skipped_virtual > 0 {
        im.b.assume(format!("{skipped_virtual} SR-IOV virtual function(s) left out (they share their device's link)"));
    }
    if narrow > 0 {
        im.b.assume(format!("{narrow} network adapter(s) narrower than x8 left out (management ports)"));
    }
    acs(&mut im);
    let Import { mut b, downgraded, unknown_links, .. } = im;
    if !downgraded.is_empty() {
        b.assume(format!(
            "links trained below their capable speed when dumped, as idle GPUs do: {}; the capable speed of both ends is used",
            downgraded.join(", ")
        ));
    }
    if !fns.iter().any(|f| f.cap.gts.is_some() || f.sta.gts.is_some() || f.port.is_some()) {
        b.assume("the dump shows no PCIe capabilities (lspci ran without root): port types read from the tree, link speeds and widths and ACS unknown; run `sudo lspci -vvv`");
    }
    if !unknown_links.is_empty() {
        b.assume(format!("no link speed or width in the dump for {}: Gen3 x16 assumed", unknown_links.join(", ")));
    }
    // An NVSwitch's own PCI function (class 0680, "Bridge") only manages it.
    let nvswitches = fns.iter().filter(|f| f.nvidia && f.class == Class::Other && f.class_text.starts_with("Bridge")).count();
    if nvswitches > 0 {
        b.assume(format!("{nvswitches} NVSwitch function(s) in the dump: the GPUs meet in an NVSwitch fabric whose NVLinks lspci does not show; add them (`contend import` of `nvidia-smi topo -m` or NCCL's XML gives them)"));
    } else {
        b.assume("lspci shows no NVLink: GPUs are joined by PCIe only (add NVLink links if the node has them)");
    }
    b.assume("partitions of one switch chip look like separate switches in lspci: join their switches with a pcie link if they share a chip");
    Ok(b)
}

/// A switch redirects peer-to-peer traffic when its downstream ports redirect requests (ACSCtl
/// ReqRedir+); root ports do not matter, since traffic between them crosses the root anyway.
fn acs(im: &mut Import) {
    let switches = std::mem::take(&mut im.switches);
    if switches.is_empty() {
        return;
    }
    let mut redirect = Vec::new();
    let mut unknown = Vec::new();
    for (up, name) in &switches {
        let ports: Vec<&Function> = (0..im.tree.fns.len()).filter(|&j| im.tree.parent(j) == Some(*up)).map(|j| &im.tree.fns[j]).collect();
        match ports.iter().filter_map(|p| p.acs_redirect).reduce(|a, b| a || b) {
            Some(true) => redirect.push(name.clone()),
            Some(false) => {}
            None => unknown.push(name.clone()),
        }
    }
    if redirect.len() == switches.len() {
        im.b.acs_everywhere();
        im.b.assume("ACS: every switch's downstream ports redirect peer-to-peer requests (ACSCtl ReqRedir+): `acs: redirect` on the machine; peer copies go up to the root complex (disable ACS, or IOMMU/VT-d, in the BIOS to keep them in the switch)");
    } else {
        for name in &redirect {
            im.b.acs_redirect(name);
        }
        if !redirect.is_empty() {
            im.b.assume(format!("ACS: {} redirect peer-to-peer requests (ACSCtl ReqRedir+): `acs: redirect` on them", redirect.join(", ")));
        }
    }
    if !unknown.is_empty() {
        im.b.assume(format!("ACS: no ACSCtl line for the ports of {} (lspci without root, or ports without ACS): no redirect assumed", unknown.join(", ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_with_and_without_domain() {
        assert_eq!(addr("17:00.0"), Some(Addr { domain: 0, bus: 0x17, dev: 0, func: 0 }));
        assert_eq!(addr("0001:c1:1f.7"), Some(Addr { domain: 1, bus: 0xc1, dev: 0x1f, func: 7 }));
        assert_eq!(addr("lspci:"), None);
        assert_eq!(addr("17:00.9"), None);
    }

    #[test]
    fn classes_by_code_or_name() {
        assert_eq!(class_of("PCI bridge [0604]"), Class::Bridge);
        assert_eq!(class_of("Host bridge [0600]"), Class::Other);
        assert_eq!(class_of("3D controller"), Class::Display);
        assert_eq!(class_of("Infiniband controller [0207]"), Class::Network);
        assert_eq!(class_of("Bridge [0680]"), Class::Other);
    }

    #[test]
    fn link_fields() {
        let l = link("Speed 2.5GT/s (downgraded), Width x16 (ok)");
        assert_eq!((l.gts, l.width), (Some(2.5), Some(16)));
        let l = link("Port #0, Speed 16GT/s, Width x8, ASPM not supported");
        assert_eq!((l.gts, l.width), (Some(16.0), Some(8)));
        let l = link("Speed unknown, Width x0");
        assert_eq!((l.gts, l.width), (None, None));
    }
}
