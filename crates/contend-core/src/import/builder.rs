//! Collects devices, links and assumptions, and writes them as a machine file.

/// PCIe generation from a link speed in GT/s per lane.
pub fn pcie_gen(gts: f64) -> Option<u8> {
    [(2.5, 1), (5.0, 2), (8.0, 3), (16.0, 4), (32.0, 5), (64.0, 6)].iter().find(|(s, _)| (gts - s).abs() < 0.01).map(|&(_, g)| g)
}

#[derive(Default, Debug, Clone)]
pub struct Builder {
    devices: Vec<(String, &'static str, Option<String>)>,
    /// Switches whose ports redirect peer-to-peer traffic (ACS), and whether the whole machine does.
    acs_redirect: Vec<String>,
    acs_everywhere: bool,
    links: Vec<String>,
    /// Fields a device's line carries beyond name, kind and model (`port_bandwidth: 50GB/s`).
    fields: Vec<(String, String)>,
    pub assumptions: Vec<String>,
}

impl Builder {
    pub fn device(&mut self, name: &str, kind: &'static str, model: Option<String>) {
        self.devices.push((name.to_string(), kind, model));
    }

    /// A field of `name`'s line, as the machine file writes it (`port_bandwidth`, `50GB/s`).
    pub fn field(&mut self, name: &str, field: &str, value: String) {
        self.fields.push((name.to_string(), format!("{field}: {value}")));
    }

    pub fn has_device(&self, name: &str) -> bool {
        self.devices.iter().any(|(n, _, _)| n == name)
    }

    /// `switch` redirects peer-to-peer traffic to its root complex (`acs: redirect`).
    pub fn acs_redirect(&mut self, switch: &str) {
        self.acs_redirect.push(switch.to_string());
    }

    /// Every PCIe switch redirects: written once, as the machine's `acs`.
    pub fn acs_everywhere(&mut self) {
        self.acs_everywhere = true;
    }

    /// The host memories and socket links of `roots`, one root complex per NUMA node (name, node
    /// number): the dumps give neither, so both are assumed and said. With `numa_per_socket` K > 1,
    /// nodes n with equal n / K share a socket (Linux numbers NUMA nodes socket by socket): its
    /// nodes' root complexes are joined by the socket fabric, and sockets by the socket link.
    pub fn sockets(&mut self, roots: &[(String, u32)], amd: bool, numa_per_socket: u32) {
        for (root, _) in roots {
            let mem = root.replace("CPU", "MEM");
            self.device(&mem, "host_memory", None);
            self.link(root, &mem, "memory", 1, "50GB/s");
        }
        self.assume("host memory: 50 GB/s per NUMA node (the file does not say; set your platform's figure)");
        let mut sockets: Vec<(u32, Vec<(&str, u32)>)> = Vec::new();
        for (root, node) in roots {
            let s = node / numa_per_socket.max(1);
            match sockets.iter_mut().find(|(k, _)| *k == s) {
                Some((_, members)) => members.push((root, *node)),
                None => sockets.push((s, vec![(root, *node)])),
            }
        }
        // A socket of several NUMA nodes is a hub on the socket fabric; a socket of one is its node.
        let mut ends = Vec::new();
        for (s, members) in &sockets {
            if let [(one, _)] = members.as_slice() {
                ends.push(one.to_string());
                continue;
            }
            let hub = format!("SOCKET{s}");
            let nodes = members.iter().map(|(_, n)| n.to_string()).collect::<Vec<_>>().join(", ");
            self.device(&hub, "root_complex", Some(format!("socket {s}: NUMA nodes {nodes}")));
            for (m, _) in members {
                self.link(&hub, m, "fabric", 1, "128GB/s");
            }
            ends.push(hub);
        }
        self.say_numa_grouping(numa_per_socket, roots.len(), sockets.len());
        if sockets.iter().any(|(_, m)| m.len() > 1) {
            self.assume(format!(
                "{numa_per_socket} NUMA nodes per socket (--numa-per-socket): a socket's NUMA nodes joined by the socket fabric (128 GB/s per direction, not a bottleneck)"
            ));
        }
        // AMD platforms allow peer-to-peer between sockets (xGMI / Infinity Fabric); Intel's
        // UPI does not by default, so CUDA stages those copies through host memory.
        let (kind, bw) = if amd { ("xgmi", "36GB/s") } else { ("upi", "20.8GB/s") };
        for i in 0..ends.len() {
            for j in i + 1..ends.len() {
                self.link(&ends[i], &ends[j], kind, 1, bw);
            }
        }
        if ends.len() > 1 && amd {
            self.assume("AMD CPUs: sockets joined pairwise by an xGMI-class link of 36 GB/s per direction (one x16 xGMI-2 link at 18 GT/s), CUDA's peer access allowed across it, NCCL's from 2.23.4 only where a node has two GPUs (else host memory, SHM) (the file gives no socket interconnect)");
        } else if ends.len() > 1 {
            self.assume("sockets joined pairwise by a UPI-class link of 20.8 GB/s per direction (the file gives no socket interconnect)");
        }
    }

    /// What grouping `nodes` NUMA nodes `numa_per_socket` to a socket into `sockets` sockets
    /// leaves to check: every node in one socket (the count may merge sockets), or each node a
    /// socket of its own where there are more than two (the CPUs may split sockets).
    pub fn say_numa_grouping(&mut self, numa_per_socket: u32, nodes: usize, sockets: usize) {
        if numa_per_socket > 1 && sockets == 1 && nodes > 1 {
            self.assume(format!(
                "--numa-per-socket {numa_per_socket}: all {nodes} NUMA nodes fall in one socket (nodes n with equal n / {numa_per_socket}); if the host has more sockets, give a smaller count"
            ));
        } else if numa_per_socket == 1 && sockets > 2 && nodes > 2 {
            self.assume(format!(
                "{nodes} NUMA nodes, each taken as a socket; if the CPUs split a socket into several nodes (AMD NPS2/NPS4, Intel SNC), give --numa-per-socket"
            ));
        }
    }

    pub fn pcie(&mut self, up: &str, down: &str, gen: u8, lanes: u8) {
        if up == down {
            self.assume(format!("{up}: a PCIe link to itself in the dump: left out"));
            return;
        }
        self.links.push(format!("{{a: {up}, b: {down}, kind: pcie, gen: {gen}, lanes: {lanes}}}"));
    }

    /// `kind`: nvlink, qpi, upi, memory; `count` parallel links of `bandwidth` each.
    pub fn link(&mut self, a: &str, b: &str, kind: &str, count: u32, bandwidth: &str) {
        if a == b {
            self.assume(format!("{a}: a {kind} link to itself in the dump: left out"));
            return;
        }
        let count = if count > 1 { format!(", count: {count}") } else { String::new() };
        self.links.push(format!("{{a: {a}, b: {b}, kind: {kind}{count}, bandwidth: {bandwidth}}}"));
    }

    pub fn assume(&mut self, text: impl Into<String>) {
        let text = text.into();
        if !self.assumptions.contains(&text) {
            self.assumptions.push(text);
        }
    }

    pub fn to_yaml(&self, name: &str, source: &str) -> String {
        let mut s = String::from("# Imported machine. Assumptions (check and refine them):\n");
        for a in &self.assumptions {
            s.push_str(&format!("#  - {a}\n"));
        }
        s.push_str(&format!("name: {}\nsource: \"{}\"\n", quote(name), source.replace('"', "'")));
        if self.acs_everywhere {
            s.push_str("acs: redirect\n");
        }
        s.push_str("devices:\n");
        for (n, k, m) in &self.devices {
            let model = m.as_ref().map(|m| format!(", model: \"{}\"", m.replace('"', "'"))).unwrap_or_default();
            let acs = if !self.acs_everywhere && self.acs_redirect.contains(n) { ", acs: redirect" } else { "" };
            let more: String = self.fields.iter().filter(|(d, _)| d == n).map(|(_, f)| format!(", {f}")).collect();
            s.push_str(&format!("  - {{name: {n}, kind: {k}{model}{acs}{more}}}\n"));
        }
        s.push_str("links:\n");
        for l in &self.links {
            s.push_str(&format!("  - {l}\n"));
        }
        s
    }
}

fn quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('"', "'"))
    }
}
