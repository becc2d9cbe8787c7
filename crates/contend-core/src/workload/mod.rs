//! Transfers: who sends how much to whom, when, and after what.

mod after;
pub mod columns;
mod csv;
mod generate;
pub mod program;
mod regular;
#[cfg(test)]
mod regular_tests;

pub use after::After;
pub use generate::{all_to_all, gather, neighbours, permutation, random_graph, scatter, SplitMix64};

pub fn generate_rng(seed: u64) -> SplitMix64 {
    SplitMix64(seed ^ 0x5EED)
}

use crate::datatype::{Datatype, KernelParams, Message, Method, TypeSpec};
use crate::error::{parse_document, read_user_text, Error, Result};
use crate::keymap::IntMap;
use crate::topology::{DeviceKind, Machine};
use crate::units::{Bandwidth, Bytes, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// GPU to GPU DMA over links that allow peer traffic (NVLink preferred, else PCIe).
    P2p,
    /// Device to host memory, then host memory to device, chunked and pipelined.
    Staged,
    /// GPUDirect RDMA: a NIC reads or writes GPU memory over links that allow peer traffic.
    Rdma,
    /// One DMA over the preferred path, whatever the links allow (copies to or from host memory).
    Direct,
}

impl Mechanism {
    pub fn name(self) -> &'static str {
        match self {
            Mechanism::P2p => "p2p",
            Mechanism::Staged => "staged",
            Mechanism::Rdma => "rdma",
            Mechanism::Direct => "direct",
        }
    }

    /// Device to device, forwarded peer to peer by the links between them (p2p, rdma): what a
    /// link's peer bandwidth caps, and host-memory traffic does not.
    pub fn is_peer(self) -> bool {
        matches!(self, Mechanism::P2p | Mechanism::Rdma)
    }
}

/// Who drives a copy: the source pushes (posted writes, as cudaMemcpy does) or the destination
/// pulls (reads: requests go one way, completions carry the data back).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    #[default]
    Write,
    Read,
}

impl Access {
    pub fn name(self) -> &'static str {
        match self {
            Access::Write => "write",
            Access::Read => "read",
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub transfers: Vec<TransferSpec>,
    /// Datatypes the transfers name, beside the presets: name -> MPI constructor
    /// (`contend schema datatype`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", with = "serde_yaml::with::singleton_map_recursive")]
    #[schemars(with = "BTreeMap<String, TypeSpec>")]
    pub datatypes: BTreeMap<String, TypeSpec>,
    /// Kernel and load-store costs of non-contiguous messages, name -> value with its unit
    /// (`contend datatype --help` lists them; defaults in docs/models.md).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub kernels: BTreeMap<String, String>,
    /// Each transfer's line in a CSV transfers file (none for YAML): a message names the line.
    #[serde(skip)]
    pub lines: Vec<usize>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TransferSpec {
    /// Name used by `after`; defaults to "t<index>".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    pub size: Bytes,
    /// Earliest start (default 0s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Time>,
    /// Transfers (names or 0-based indices) that must finish before this one starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<TransferRef>,
    /// Software overhead between issue and the first byte (e.g. MPI's per-message alpha),
    /// added to the setup latency the model gives the path (default 0s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Time>,
    /// How the bytes move (maxmin): p2p, staged, rdma or direct; default: as CUDA would choose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mechanism: Option<Mechanism>,
    /// Devices the path must pass, in order (maxmin); a host memory here is the staging buffer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<String>,
    /// The message is `size / size of the type` instances of this datatype (a preset, a name
    /// under `datatypes`, or a datatype file); its blocks set the kernels' costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datatype: Option<String>,
    /// How a message of a datatype moves: adaptive (the default with a datatype), pack,
    /// zero-copy or staged (docs/models.md, "Non-contiguous messages").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
    /// write (default: the source pushes, as CUDA copies do) or read (the destination pulls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
    /// The most this transfer's bytes move per second, whatever its links could give (a sender
    /// that cannot produce data faster): maxmin gives it a resource of its own, packet's source
    /// paces its packets (e.g. "24GB/s").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<Bandwidth>,
    /// Transfers naming the same group share one `max_rate` between them, however many of them
    /// move at once (the chunks in flight on one NCCL channel's connection: its kernel's rate
    /// caps them together); every member gives the same max_rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_group: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(untagged)]
pub enum TransferRef {
    Index(usize),
    Name(String),
}

/// A transfer resolved against a machine.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transfer {
    pub name: String,
    pub src: usize,
    pub dst: usize,
    pub size: u64,
    pub start: f64,
    pub after: After,
    /// Seconds of software overhead before the first byte, on top of the path's latency.
    pub overhead: f64,
    pub mechanism: Option<Mechanism>,
    /// Machine device indices the path must pass, in order.
    pub via: Vec<usize>,
    /// A compute operation rather than a transfer: `src` (= `dst`) is busy this many seconds
    /// and no bytes move. Rank programs lower to transfers and computes (`workload::program`).
    pub compute: Option<f64>,
    /// The message's bytes and blocks, when it is sent by a datatype method (boxed: few
    /// transfers have one, and inline it made every transfer 32 bytes longer).
    pub layout: Option<Box<Message>>,
    /// The method, when the message goes through kernels (see `flow::methods`).
    pub method: Option<Method>,
    pub access: Access,
    /// Moved by GPU kernels' stores (NCCL's lowering), not by a copy engine: it pays nothing for
    /// the copy engine's setup or its wait through an NVSwitch (`flow::router::switch_traversals`),
    /// nor, staged through host memory, for the CPU's hand-off (`flow::router::Plan::kernel_latency`).
    pub kernel: bool,
    /// Bytes/s this transfer moves at most (`TransferSpec::max_rate`; NCCL's per-channel rate).
    pub max_rate: Option<f64>,
    /// The transfer whose `max_rate` cap this one shares (its rate group's first member; an
    /// index like `after`, so shifted with it): the group's members together move at most
    /// `max_rate`. None: the cap is the transfer's own.
    pub rate_group: Option<usize>,
}

impl Transfer {
    /// The transfer as the `base`-th onward of a larger workload: its references to other
    /// transfers (`after`, `rate_group`) shifted alike.
    pub fn shifted(mut self, base: usize) -> Transfer {
        self.after.iter_mut().for_each(|a| *a += base);
        if let Some(g) = &mut self.rate_group {
            *g += base;
        }
        self
    }

    /// Its name for a message to the user; `operation i` where it has none (a rank program's
    /// operations are named only when a report lists them).
    pub fn label(&self, i: usize) -> String {
        if self.name.is_empty() {
            format!("operation {i}")
        } else {
            self.name.clone()
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub transfers: Vec<Transfer>,
    pub origin: String,
    /// Costs of the kernels of datatype methods.
    pub kernels: KernelParams,
}

impl WorkloadSpec {
    pub fn load(path: &str) -> Result<WorkloadSpec> {
        WorkloadSpec::from_text(&read_user_text(path, "a YAML, JSON or CSV transfers file")?, path)
    }
    pub fn from_text(text: &str, origin: &str) -> Result<WorkloadSpec> {
        // A byte-order mark (Excel's "CSV UTF-8") where the text did not come from a file that
        // `read_user_text` read: standard input, the bindings.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        if csv::is_csv(text, origin) {
            return csv::parse(text, origin);
        }
        // A file of the regular shape is read in one pass; anything else, mistakes included, by
        // the YAML parser, which reads the regular shape the same way (`regular`).
        match regular::parse(text) {
            Some(spec) => Ok(spec),
            None => parse_document(text, origin),
        }
    }
    /// Where field `f` of transfer `i` is, for a message: its line in a CSV file, its path in
    /// YAML.
    pub fn field(&self, i: usize, f: &str) -> String {
        match self.lines.get(i) {
            Some(line) => format!("line {line}: {f}"),
            None => format!("transfers[{i}].{f}"),
        }
    }
    pub fn to_yaml(&self) -> String {
        // Flow style per transfer reads like the examples users write by hand.
        let mut s = String::from("transfers:\n");
        for t in &self.transfers {
            let mut fields = Vec::new();
            if let Some(n) = &t.name {
                fields.push(format!("name: {n}"));
            }
            fields.push(format!("src: {}", t.src));
            fields.push(format!("dst: {}", t.dst));
            fields.push(format!("size: {}", t.size));
            if let Some(st) = t.start {
                fields.push(format!("start: {st}"));
            }
            if !t.after.is_empty() {
                let refs: Vec<String> = t
                    .after
                    .iter()
                    .map(|r| match r {
                        TransferRef::Index(i) => i.to_string(),
                        TransferRef::Name(n) => n.clone(),
                    })
                    .collect();
                fields.push(format!("after: [{}]", refs.join(", ")));
            }
            if let Some(o) = t.overhead {
                fields.push(format!("overhead: {o}"));
            }
            if let Some(m) = t.mechanism {
                fields.push(format!("mechanism: {}", m.name()));
            }
            if let Some(a) = t.access {
                fields.push(format!("access: {}", a.name()));
            }
            if !t.via.is_empty() {
                fields.push(format!("via: [{}]", t.via.join(", ")));
            }
            if let Some(d) = &t.datatype {
                fields.push(format!("datatype: {d}"));
            }
            if let Some(m) = t.method {
                fields.push(format!("method: {}", m.name()));
            }
            if let Some(r) = t.max_rate {
                // In bytes/s: Rust prints the shortest decimal that reads back to the same f64,
                // which "{}GB/s" of r / 1e9 would not (93.4e9 / 1e9 * 1e9 != 93.4e9).
                fields.push(format!("max_rate: {}B/s", r.bytes_per_sec()));
            }
            if let Some(g) = &t.rate_group {
                // A group is the user's own string: quoted where it holds more than a plain
                // word (a comma or a brace would end the field), plain otherwise.
                let plain = !g.is_empty() && g.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
                fields.push(if plain { format!("rate_group: {g}") } else { format!("rate_group: {}", serde_json::to_string(g).unwrap_or_default()) });
            }
            s.push_str(&format!("  - {{{}}}\n", fields.join(", ")));
        }
        s
    }
}

/// `format!("t{i}")`, the name of an unnamed transfer, without the formatting machinery: the
/// digits written by hand into a string of the right size (100,000 of them took 75 M
/// instructions through `format!`, a tenth of reading the transfers file).
fn default_name(i: usize) -> String {
    let mut digits = [0u8; 20];
    let (mut k, mut v) = (digits.len(), i);
    loop {
        k -= 1;
        digits[k] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut s = String::with_capacity(1 + digits.len() - k);
    s.push('t');
    s.extend(digits[k..].iter().map(|&d| d as char));
    s
}

impl Workload {
    /// Resolve names against the machine and check everything a user can get wrong.
    pub fn resolve(spec: &WorkloadSpec, m: &Machine, origin: &str) -> Result<Workload> {
        if spec.transfers.is_empty() {
            return Err(Error::input(origin, "transfers", "is empty; list at least one {src, dst, size}"));
        }
        // Names matter only where a transfer is named (they must be unique) or an `after` names
        // one; the default names t0, t1, ... are unique by themselves.
        let by_name = spec.transfers.iter().any(|t| t.name.is_some() || t.after.iter().any(|r| matches!(r, TransferRef::Name(_))));
        let mut names: IntMap<Cow<str>, usize> = IntMap::default();
        for (i, t) in spec.transfers.iter().enumerate().filter(|_| by_name) {
            let name = t.name.as_deref().map_or_else(|| Cow::Owned(default_name(i)), Cow::Borrowed);
            match names.entry(name) {
                Entry::Occupied(e) => {
                    return Err(Error::input(origin, spec.field(i, "name"), format!("\"{}\" is used twice; transfer names must be unique", e.key())))
                }
                Entry::Vacant(e) => {
                    e.insert(i);
                }
            }
        }
        let kernels = KernelParams::parse(&spec.kernels.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<Vec<_>>())
            .map_err(|e| Error::input(origin, "kernels", e.to_string()))?;
        let mut types: BTreeMap<String, Datatype> = BTreeMap::new();
        let mut out = Vec::with_capacity(spec.transfers.len());
        // Each rate group by name: its first member, whose max_rate the others must give.
        let mut groups: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, t) in spec.transfers.iter().enumerate() {
            let field = |f: &str| spec.field(i, f);
            let endpoint = |name: &str, f: &str| -> Result<usize> {
                let d =
                    m.device(name).ok_or_else(|| Error::input(origin, field(f), format!("\"{name}\" is not a device of {}; {}", m.name, m.endpoint_hint())))?;
                match m.devices[d].kind {
                    DeviceKind::Gpu | DeviceKind::Nic | DeviceKind::HostMemory => Ok(d),
                    k => Err(Error::input(origin, field(f), format!("\"{name}\" is a {} and cannot send or receive; use a GPU, NIC or host memory", k.name()))),
                }
            };
            let (src, dst) = (endpoint(&t.src, "src")?, endpoint(&t.dst, "dst")?);
            if src == dst {
                return Err(Error::input(origin, field("dst"), format!("equals src ({}); a transfer needs two different devices", t.src)));
            }
            if t.size.0 == 0 {
                return Err(Error::input(origin, field("size"), "is zero; give a positive size such as \"300MiB\""));
            }
            let mut after = After::default();
            for (k, r) in t.after.iter().enumerate() {
                let j = match r {
                    TransferRef::Index(j) if *j < spec.transfers.len() => *j,
                    TransferRef::Index(j) => {
                        return Err(Error::input(
                            origin,
                            field(&format!("after[{k}]")),
                            format!("index {j} is out of range; there are {} transfers (0-based)", spec.transfers.len()),
                        ))
                    }
                    TransferRef::Name(n) => *names.get(n.as_str()).ok_or_else(|| {
                        Error::input(origin, field(&format!("after[{k}]")), format!("\"{n}\" names no transfer; use a transfer's name or index"))
                    })?,
                };
                if j == i {
                    return Err(Error::input(origin, field(&format!("after[{k}]")), "is the transfer itself; remove it"));
                }
                after.push(j);
            }
            let via = t
                .via
                .iter()
                .enumerate()
                .map(|(k, name)| {
                    m.device(name).ok_or_else(|| {
                        Error::input(
                            origin,
                            field(&format!("via[{k}]")),
                            format!("\"{name}\" is not a device of {}; name a switch, root complex or host memory", m.name),
                        )
                    })
                })
                .collect::<Result<Vec<usize>>>()?;
            let (layout, method) = layout(spec, t, &mut types, origin, i)?;
            let rate_group = match &t.rate_group {
                None => None,
                Some(g) => {
                    let Some(rate) = t.max_rate else {
                        return Err(Error::input(
                            origin,
                            field("rate_group"),
                            format!("\"{g}\" shares a max_rate, and this transfer has none; give it the group's max_rate"),
                        ));
                    };
                    let first = *groups.entry(g.as_str()).or_insert(i);
                    let theirs = spec.transfers[first].max_rate.map(|r| r.bytes_per_sec());
                    if theirs != Some(rate.bytes_per_sec()) {
                        return Err(Error::input(
                            origin,
                            field("max_rate"),
                            format!(
                                "is {} B/s but rate group \"{g}\" has {} B/s (transfers[{first}]); give every member of a group one max_rate",
                                rate.bytes_per_sec(),
                                theirs.unwrap_or(0.0)
                            ),
                        ));
                    }
                    Some(first)
                }
            };
            out.push(Transfer {
                name: t.name.clone().unwrap_or_else(|| default_name(i)),
                src,
                dst,
                size: t.size.0,
                start: t.start.map(|s| s.secs()).unwrap_or(0.0),
                after,
                overhead: t.overhead.map(|o| o.secs()).unwrap_or(0.0),
                mechanism: t.mechanism,
                via,
                compute: None,
                layout: layout.map(Box::new),
                method,
                access: t.access.unwrap_or_default(),
                kernel: false,
                max_rate: t.max_rate.map(|r| r.bytes_per_sec()),
                rate_group,
            });
        }
        if let Some(i) = find_cycle(&out) {
            return Err(Error::input(
                origin,
                spec.field(i, "after"),
                format!("\"{}\" depends on itself through a cycle of dependencies; remove one link of the cycle", out[i].name),
            ));
        }
        Ok(Workload { transfers: out, origin: origin.to_string(), kernels })
    }
}

/// The message layout and method of transfer `i`: a datatype's instances, or one contiguous
/// block when only a method is given; each datatype is flattened once.
fn layout(spec: &WorkloadSpec, t: &TransferSpec, types: &mut BTreeMap<String, Datatype>, origin: &str, i: usize) -> Result<(Option<Message>, Option<Method>)> {
    let field = |f: &str| spec.field(i, f);
    if t.method.is_some() && (t.mechanism.is_some() || !t.via.is_empty()) {
        return Err(Error::input(origin, field("method"), "chooses the path itself; give method or mechanism/via, not both"));
    }
    let Some(name) = &t.datatype else {
        let one = Message { count: 1, bytes: t.size.0, blocks: 1, mean_block_bytes: t.size.0 as f64 };
        return Ok((t.method.map(|_| one), t.method));
    };
    if t.mechanism.is_some() || !t.via.is_empty() {
        return Err(Error::input(origin, field("datatype"), "is sent by a method that chooses the path; drop mechanism and via (or give method)"));
    }
    if !types.contains_key(name) {
        let d = match spec.datatypes.get(name) {
            Some(ty) => Datatype::from_type(ty, origin, &format!("datatypes.{name}"))?,
            None => Datatype::load(name).map_err(|e| match e {
                Error::Input { problem, .. } => Error::input(origin, field("datatype"), format!("\"{name}\" {problem}, or a name under datatypes")),
                e => e,
            })?,
        };
        types.insert(name.clone(), d);
    }
    let s = &types[name].stats;
    if !t.size.0.is_multiple_of(s.size_bytes) {
        return Err(Error::input(
            origin,
            field("size"),
            format!("{} B is not a whole number of {name} ({} B each); give a multiple, e.g. {}B", t.size.0, s.size_bytes, s.size_bytes),
        ));
    }
    Ok((Some(s.message(t.size.0 / s.size_bytes)), Some(t.method.unwrap_or(Method::Adaptive))))
}

/// A transfer on a dependency cycle, if any (Kahn's algorithm leaves exactly the cyclic part).
pub(crate) fn find_cycle(ts: &[Transfer]) -> Option<usize> {
    let n = ts.len();
    let mut indeg: Vec<usize> = ts.iter().map(|t| t.after.len()).collect();
    let mut dependents = vec![Vec::new(); n];
    for (i, t) in ts.iter().enumerate() {
        for &j in &t.after {
            dependents[j].push(i);
        }
    }
    let mut stack: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut done = 0;
    while let Some(j) = stack.pop() {
        done += 1;
        for &i in &dependents[j] {
            indeg[i] -= 1;
            if indeg[i] == 0 {
                stack.push(i);
            }
        }
    }
    (done < n).then(|| (0..n).find(|&i| indeg[i] > 0).unwrap())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(text: &str) -> Result<Workload> {
        let m = Machine::load("cs-storm-socket").unwrap();
        let spec = WorkloadSpec::from_text(text, "t.yaml")?;
        Workload::resolve(&spec, &m, "t.yaml")
    }

    #[test]
    fn default_names_are_t_and_the_index() {
        for (i, want) in [(0, "t0"), (7, "t7"), (10, "t10"), (99_999, "t99999"), (usize::MAX, "t18446744073709551615")] {
            assert_eq!(default_name(i), want);
        }
    }

    #[test]
    fn the_issue_example_parses() {
        let w = resolve(
            "transfers:\n  - {src: GPU0, dst: GPU2, size: 300MiB}\n  - {src: GPU1, dst: GPU4, size: 300MiB}\n  - {src: GPU3, dst: GPU2, size: 300MiB}\n  - {src: GPU6, dst: GPU4, size: 300MiB}\n",
        )
        .unwrap();
        assert_eq!(w.transfers.len(), 4);
        assert_eq!(w.transfers[0].size, 300 << 20);
    }

    #[test]
    fn mistakes_get_one_line_naming_the_field() {
        let cases = [
            ("transfers:\n  - {src: GPU0, dst: GPU9, size: 1MiB}\n", "transfers[0].dst"),
            ("transfers:\n  - {src: GPU0, dst: GPU0, size: 1MiB}\n", "equals src"),
            ("transfers:\n  - {src: GPU0, dst: GPU1, size: 0MiB}\n", "is zero"),
            ("transfers:\n  - {src: GPU0, dst: GPU1, size: -1MiB}\n", "negative"),
            ("transfers:\n  - {src: GPU0, dst: GPU1, size: 300}\n", "no unit"),
            ("transfers:\n  - {src: GPU0, dst: SWA, size: 1MiB}\n", "cannot send"),
            ("transfers:\n  - {name: a, src: GPU0, dst: GPU1, size: 1MiB, after: [b]}\n  - {name: b, src: GPU1, dst: GPU0, size: 1MiB, after: [a]}\n", "cycle"),
            ("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, after: [7]}\n", "out of range"),
            ("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, colour: red}\n", "unknown field"),
        ];
        for (text, needle) in cases {
            let e = resolve(text).unwrap_err().to_string();
            assert!(e.starts_with("t.yaml: "), "{e}");
            assert!(e.contains(needle), "{needle}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
