//! Collects devices, links and assumptions, and writes them as a machine file.

/// PCIe generation from a link speed in GT/s per lane.
pub fn pcie_gen(gts: f64) -> Option<u8> {
    [(2.5, 1), (5.0, 2), (8.0, 3), (16.0, 4), (32.0, 5), (64.0, 6)].iter().find(|(s, _)| (gts - s).abs() < 0.01).map(|&(_, g)| g)
}

#[derive(Default, Debug, Clone)]
pub struct Builder {
    devices: Vec<(String, &'static str, Option<String>)>,
    links: Vec<String>,
    pub assumptions: Vec<String>,
}

impl Builder {
    pub fn device(&mut self, name: &str, kind: &'static str, model: Option<String>) {
        self.devices.push((name.to_string(), kind, model));
    }

    pub fn has_device(&self, name: &str) -> bool {
        self.devices.iter().any(|(n, _, _)| n == name)
    }

    pub fn pcie(&mut self, up: &str, down: &str, gen: u8, lanes: u8) {
        self.links.push(format!("{{a: {up}, b: {down}, kind: pcie, gen: {gen}, lanes: {lanes}}}"));
    }

    /// `kind`: nvlink, qpi, upi, memory; `count` parallel links of `bandwidth` each.
    pub fn link(&mut self, a: &str, b: &str, kind: &str, count: u32, bandwidth: &str) {
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
        s.push_str(&format!("name: {}\nsource: \"{}\"\ndevices:\n", quote(name), source.replace('"', "'")));
        for (n, k, m) in &self.devices {
            match m {
                Some(m) => s.push_str(&format!("  - {{name: {n}, kind: {k}, model: \"{}\"}}\n", m.replace('"', "'"))),
                None => s.push_str(&format!("  - {{name: {n}, kind: {k}}}\n")),
            }
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
