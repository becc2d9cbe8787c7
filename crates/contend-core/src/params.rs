//! Parameters as every part of contend declares and reads them: a model's `--param`s, the
//! kernel terms of datatype methods, the stream-ordered stencil's and the skeletons' knobs.
//! Each is declared once (name, kind, default, help) in its owner's table; one parser reads
//! given values and the table's own defaults by kind, refuses a bad value or an unknown name in
//! one line, and hands the owner typed values. `contend models` and the docs print the tables.

use crate::error::{Error, Result};
use crate::units::{Bandwidth, Bytes, Time};
use serde::{Serialize, Serializer};

/// What values a parameter takes; the parser checks them, `contend models` prints them.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A real number from `min` to `max`; an open end excludes itself.
    Real { min: f64, max: f64, open_min: bool, open_max: bool },
    /// A size of at least `min` bytes (below 2^64, as every size).
    Bytes { min: u64 },
    /// A time, zero or more (below 2^64 ps).
    Time,
    /// A rate above zero.
    Bandwidth,
    /// A whole number from `min` to `max`.
    Count { min: u64, max: u64 },
    /// on/true/yes/1 or off/false/no/0.
    OnOff,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A software release by its minor version, one of these words ("2.19"); a patch release
    /// ("2.19.3", "2.19.3-1", "2.19.3+cuda12.2", as a library prints it) reads as its minor, and
    /// a release not listed is refused naming the nearest listed one.
    Release(&'static [&'static str]),
}

impl Kind {
    /// An efficiency: a share of a capacity that is reached, in (0, 1].
    pub const EFFICIENCY: Kind = Kind::Real { min: 0.0, max: 1.0, open_min: true, open_max: false };
    /// A loss or overhead per byte, in [0, 1).
    pub const LOSS: Kind = Kind::Real { min: 0.0, max: 1.0, open_min: false, open_max: true };
    /// A share, in [0, 1].
    pub const SHARE: Kind = Kind::Real { min: 0.0, max: 1.0, open_min: false, open_max: false };
    /// A positive finite number.
    pub const POSITIVE: Kind = Kind::Real { min: 0.0, max: f64::INFINITY, open_min: true, open_max: true };

    /// In words, for `contend models` and for a refusal.
    pub fn describe(&self) -> String {
        match *self {
            Kind::Real { min, max, open_min, .. } if max.is_infinite() => {
                format!("a number {} {min}", if open_min { "above" } else { "of at least" })
            }
            Kind::Real { min, max, open_min, open_max } => {
                format!("a number in {}{min}, {max}{}", if open_min { "(" } else { "[" }, if open_max { ")" } else { "]" })
            }
            Kind::Bytes { min: 0 } => "a size".into(),
            Kind::Bytes { min } => format!("a size of at least {}", Bytes(min)),
            Kind::Time => "a time".into(),
            Kind::Bandwidth => "a bandwidth".into(),
            Kind::Count { min, max } => format!("a whole number from {min} to {max}"),
            Kind::OnOff => "on or off".into(),
            Kind::Choice(words) => format!("one of {}", words.join(", ")),
            Kind::Release(words) => format!("one of {} (a patch release such as {}.1 reads as its minor)", words.join(", "), words[words.len() - 1]),
        }
    }

    /// `text` as a value of this kind, or what is wrong with it (without the name).
    fn parse(&self, text: &str, example: &str) -> std::result::Result<Value, String> {
        let eg = if example.is_empty() { String::new() } else { format!("; e.g. {example}") };
        let bad = || format!("\"{text}\" is not {}{eg}", self.describe());
        match *self {
            Kind::Real { min, max, open_min, open_max } => {
                let x: f64 = text.parse().map_err(|_| bad())?;
                let above = if open_min { x > min } else { x >= min };
                let below = if open_max { x < max } else { x <= max };
                (x.is_finite() && above && below).then_some(Value::Real(x)).ok_or_else(bad)
            }
            Kind::Bytes { min } => {
                let b = Bytes::parse(text)?;
                if b.0 < min {
                    return Err(format!("\"{text}\" is below {}{eg}", Bytes(min)));
                }
                Ok(Value::Bytes(b.0))
            }
            Kind::Time => Ok(Value::Time(Time::parse(text)?.0)),
            Kind::Bandwidth => Ok(Value::Bandwidth(Bandwidth::parse(text)?.bytes_per_sec())),
            Kind::Count { min, max } => text.parse::<u64>().ok().filter(|n| (min..=max).contains(n)).map(Value::Count).ok_or_else(bad),
            Kind::OnOff => match text {
                "on" | "true" | "yes" | "1" => Ok(Value::On(true)),
                "off" | "false" | "no" | "0" => Ok(Value::On(false)),
                _ => Err(bad()),
            },
            Kind::Choice(words) => words.iter().position(|w| *w == text).map(Value::Choice).ok_or_else(bad),
            Kind::Release(words) => release(words, text).map(Value::Choice).map_err(|nearest| match nearest {
                Some(n) => format!("\"{text}\" is not a release contend models; the nearest it models is {n} (give one of {})", words.join(", ")),
                None => bad(),
            }),
        }
    }
}

/// `text` as a release among `words` (minor versions "X.Y", ascending): its index ("latest": the
/// last, the newest listed), or the nearest word where `text` is a release ("X.Y" or "X.Y.Z…")
/// not among them, or None where it is no release at all.
pub fn release(words: &'static [&'static str], text: &str) -> std::result::Result<usize, Option<&'static str>> {
    if text.trim().eq_ignore_ascii_case("latest") {
        return Ok(words.len() - 1);
    }
    let minor_of = |t: &str| -> Option<(u32, u32)> {
        // "2.19.3-1", "2.19.3+cuda12.2": the release's own numbers come first.
        let t = t.split(['+', '-']).next()?;
        let mut parts = t.split('.');
        let (major, minor) = (parts.next()?.parse().ok()?, parts.next()?.parse().ok()?);
        parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())).then_some((major, minor))
    };
    let Some(given) = minor_of(text.trim()) else { return Err(None) };
    let listed: Vec<(u32, u32)> = words.iter().map(|w| minor_of(w).expect("release words are X.Y")).collect();
    if let Some(k) = listed.iter().position(|&l| l == given) {
        return Ok(k);
    }
    let key = |r: (u32, u32)| u64::from(r.0) * 1000 + u64::from(r.1);
    let distance = |l: (u32, u32)| key(l).abs_diff(key(given));
    let k = (0..listed.len()).min_by_key(|&k| distance(listed[k])).expect("a release kind lists releases");
    Err(Some(words[k]))
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(&self.describe())
    }
}

/// One parameter as its table declares it; `contend models` and the docs print these.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    /// The value it takes when not given, as a user would write it; where `derived`, a word for
    /// where it comes from instead (NCCL's own constant, ...).
    pub default: &'static str,
    pub help: &'static str,
    #[serde(skip)]
    pub derived: bool,
}

impl Param {
    pub const fn new(name: &'static str, kind: Kind, default: &'static str, help: &'static str) -> Param {
        Param { name, kind, default, help, derived: false }
    }

    /// A parameter with no value of its own until given: its owner falls back on something it
    /// knows (NCCL's constants, the machine's), which `default` names.
    pub const fn derived(name: &'static str, kind: Kind, default: &'static str, help: &'static str) -> Param {
        Param { name, kind, default, help, derived: true }
    }
}

/// One typed value; the getters of `Values` unwrap them by kind.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Value {
    Real(f64),
    Bytes(u64),
    /// Picoseconds.
    Time(u64),
    /// Bytes per second.
    Bandwidth(f64),
    Count(u64),
    On(bool),
    /// Index into the kind's words.
    Choice(usize),
}

/// Where given values were written, so that a refusal names the field a user can fix.
#[derive(Clone, Copy, Debug)]
pub enum At<'a> {
    /// `--param key=value` on the command line (or the API's params).
    Flag,
    /// A file's field holding the pairs (`params` of a scenario, a job's `params`).
    File { origin: &'a str, field: &'a str },
}

impl At<'_> {
    pub fn error(&self, key: &str, problem: impl Into<String>) -> Error {
        match self {
            At::Flag => param_error(key, problem),
            At::File { origin, field } => Error::input(*origin, format!("{field}.{key}"), problem),
        }
    }
}

/// The values of one table, every default filled in and every given value checked by kind.
#[derive(Clone, Debug)]
pub struct Values {
    table: &'static [Param],
    values: Vec<Option<Value>>,
    given: Vec<bool>,
}

impl Values {
    /// The table's defaults (a table whose defaults do not parse is a bug the tests catch).
    pub fn defaults(table: &'static [Param]) -> Values {
        let values =
            table.iter().map(|p| (!p.derived).then(|| p.kind.parse(p.default, p.default).unwrap_or_else(|e| panic!("default of {}: {e}", p.name)))).collect();
        Values { table, values, given: vec![false; table.len()] }
    }

    /// `pairs` read against `table` for `owner` ("maxmin", "the stencil"): an unknown name or a
    /// value of the wrong kind is refused, naming the parameter where `at` says.
    pub fn parse<'p>(owner: &str, table: &'static [Param], pairs: impl IntoIterator<Item = (&'p str, &'p str)>, at: At) -> Result<Values> {
        let mut v = Values::defaults(table);
        for (key, text) in pairs {
            let Some(i) = table.iter().position(|p| p.name == key) else {
                let known: Vec<&str> = table.iter().map(|p| p.name).collect();
                return Err(at.error(key, format!("is not a parameter of {owner}; known: {}", known.join(", "))));
            };
            let p = &table[i];
            // As the user would write it where they wrote it: a flag's key=value, a file's key: value.
            let example = match (p.derived, at) {
                (true, _) => String::new(),
                (false, At::Flag) => format!("{key}={}", p.default),
                (false, At::File { .. }) => format!("{key}: {}", p.default),
            };
            v.values[i] = Some(p.kind.parse(text.trim(), &example).map_err(|e| at.error(key, e))?);
            v.given[i] = true;
        }
        Ok(v)
    }

    /// `--param` pairs as the API hands them.
    pub fn flags(owner: &str, table: &'static [Param], pairs: &[(String, String)]) -> Result<Values> {
        Values::parse(owner, table, pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())), At::Flag)
    }

    /// Where `name` sits in the table (a name not declared there is the owner's bug).
    fn at(&self, name: &str) -> usize {
        self.table.iter().position(|p| p.name == name).unwrap_or_else(|| panic!("{name} is not in its table"))
    }

    fn get(&self, name: &str) -> Option<Value> {
        self.values[self.at(name)]
    }

    /// Whether the user gave it (rather than the default standing).
    pub fn given(&self, name: &str) -> bool {
        self.table.iter().position(|p| p.name == name).is_some_and(|i| self.given[i])
    }

    pub fn real(&self, name: &str) -> f64 {
        match self.get(name) {
            Some(Value::Real(x)) => x,
            v => panic!("{name} is {v:?}, not a number"),
        }
    }

    pub fn bytes(&self, name: &str) -> u64 {
        match self.get(name) {
            Some(Value::Bytes(b)) => b,
            v => panic!("{name} is {v:?}, not a size"),
        }
    }

    /// A number; `None` for a derived parameter not given.
    pub fn real_opt(&self, name: &str) -> Option<f64> {
        match self.get(name) {
            Some(Value::Real(x)) => Some(x),
            None => None,
            v => panic!("{name} is {v:?}, not a number"),
        }
    }

    /// A time in picoseconds; `None` for a derived parameter not given.
    pub fn time_opt(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Some(Value::Time(t)) => Some(t),
            None => None,
            v => panic!("{name} is {v:?}, not a time"),
        }
    }

    pub fn ps(&self, name: &str) -> u64 {
        self.time_opt(name).unwrap_or_else(|| panic!("{name} has no default"))
    }

    pub fn secs(&self, name: &str) -> f64 {
        Time(self.ps(name)).secs()
    }

    pub fn bytes_per_sec(&self, name: &str) -> f64 {
        self.bytes_per_sec_opt(name).unwrap_or_else(|| panic!("{name} has no default"))
    }

    /// A bandwidth in bytes/s; `None` for a derived parameter not given.
    pub fn bytes_per_sec_opt(&self, name: &str) -> Option<f64> {
        match self.get(name) {
            Some(Value::Bandwidth(b)) => Some(b),
            None => None,
            v => panic!("{name} is {v:?}, not a bandwidth"),
        }
    }

    pub fn count(&self, name: &str) -> u64 {
        match self.get(name) {
            Some(Value::Count(n)) => n,
            v => panic!("{name} is {v:?}, not a count"),
        }
    }

    pub fn on(&self, name: &str) -> bool {
        match self.get(name) {
            Some(Value::On(b)) => b,
            v => panic!("{name} is {v:?}, not on or off"),
        }
    }

    /// The chosen word.
    pub fn choice(&self, name: &str) -> &'static str {
        let i = self.at(name);
        match (self.values[i], self.table[i].kind) {
            (Some(Value::Choice(c)), Kind::Choice(words) | Kind::Release(words)) => words[c],
            (v, _) => panic!("{name} is {v:?}, not a choice"),
        }
    }
}

/// A value that cannot be taken, naming the parameter.
pub fn param_error(key: &str, problem: impl Into<String>) -> Error {
    Error::input("--param", key, problem)
}

/// When a FCFS or RR-N NIC takes its next message at flow level. A packet-level NIC moves on
/// once the head message's last packet is handed to the network, which credit-based flow control
/// allows once the bytes the head still has to deliver fit in the input buffers along its path
/// (BookSim's and SST/Merlin's credit-based channels; contend's `packet`): a NIC that waited
/// for delivery would idle while its head's packets sit in switch buffers. docs/models.md,
/// "NIC release".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NicRelease {
    /// Once the head's bytes still to deliver, with those of the NIC's earlier messages still in
    /// flight, fit in the buffers along its path, and not before its NIC could have sent them
    /// (its size at the path's narrowest capacity).
    Buffered,
    /// As `Buffered`, counting at each device only the head's share of its input buffer: the
    /// buffer divided by the messages crossing that input port now (release.rs).
    Shared,
    /// Once the head's last byte has arrived.
    Delivered,
}

/// Every flow-level model with NIC queues declares this one parameter (`NicRelease`).
pub const NIC_RELEASE: Param = Param::new(
    "nic_release",
    Kind::Choice(&["delivered", "shared", "buffered"]),
    "shared",
    "when a FCFS or RR-N NIC takes its next message: buffered (once the head's bytes still to deliver fit in the \
           network.buffer_packets x network.packet input buffers of the devices along its path, as credit-based flow control \
           lets its packets go), shared (as buffered, each device's buffer divided by the messages crossing that input port now) \
           or delivered (once its last byte arrives)",
);

impl NicRelease {
    /// The parameter's value (its table's words).
    pub fn read(v: &Values) -> NicRelease {
        match v.choice(NIC_RELEASE.name) {
            "buffered" => NicRelease::Buffered,
            "shared" => NicRelease::Shared,
            _ => NicRelease::Delivered,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            NicRelease::Buffered => "buffered",
            NicRelease::Shared => "shared",
            NicRelease::Delivered => "delivered",
        }
    }
}

/// Whether a flow-level NIC's early release (`NicRelease::Shared` or `Buffered`) also takes the
/// released head's bytes left off the NIC's link. At packet level the head's last packets wait
/// in the first switch's input buffer, past the NIC's link, and the next message has that link
/// at its full rate (credits permitting); under max-min sharing the head's bytes left would
/// otherwise still take a share of it until they are delivered (docs/benchmarks.md, "Issue 23,
/// eleventh round", third hand case). Its own on/off rather than a fourth `nic_release` choice:
/// it composes with both early-release rules, and `delivered` releases nothing to move.
pub const RELEASE_FREES_NIC: Param = Param::new(
    "release_frees_nic",
    Kind::OnOff,
    "off",
    "after a FCFS or RR-N NIC's early release (nic_release shared or buffered), charge the head's bytes left from the first \
           switch on (its route without the NIC's link and the node links before it), so that the NIC's next message has \
           the link, as packet's buffered packets leave it; off: the head keeps its whole route until delivered",
);

/// Whether a flow-level NIC's early release (`NicRelease::Shared` or `Buffered`) waits for the
/// buffers past the links its head shares with the NIC's next message. At packet level the next
/// message's packets enter every FIFO of the path the two share from the NIC behind the head's
/// (an output port serves each input FIFO in order), so they pass the last shared link only once
/// the head's last packet has: once the head's bytes left fit in the buffers after that link.
/// Under the early release alone they count the buffers of the head's whole path and then share
/// those links fairly with it (docs/benchmarks.md, "Issue 23, twelfth round"). A next message
/// that leaves the head's path at the NIC's first switch waits as before, and the shared path
/// ends at the first switch where per-packet routing may part either message's packets
/// (flow/branch.rs; "Issue 23, thirteenth round").
pub const HEAD_PRIORITY: Param = Param::new(
    "head_priority",
    Kind::OnOff,
    "off",
    "with an early NIC release (nic_release shared or buffered), the head keeps priority over its NIC's next message on the \
           links their paths share from the NIC, up to the first switch where per-packet routing may part their packets: the next \
           message starts once the head's bytes left fit in the buffers past the last of those links (its packets queue behind \
           the head's there); off: the buffers of the head's whole path count",
);

/// Whether a flow-level model routes the per-packet policies (adaptive; UGAL/PAR on dragonflies
/// of three groups or more) as their fluid limit, a message split over its packets' paths
/// (flow/fluid.rs), or one path per message. Off by default: a spread route lists every link
/// its packets may cross (546 on fat-tree-2048x1), and the max-min engine's work grows with it
/// (docs/benchmarks.md, "Issue 23, fluid routing").
pub const FLUID_ROUTING: Param = Param::new(
    "fluid_routing",
    Kind::OnOff,
    "off",
    "route adaptive (and UGAL/PAR on dragonflies of 3+ groups) as the fluid limit of per-packet routing: each message \
           split over its packets' paths by load, as packet spreads them; nearer packet, but slower (routes list every link their packets may cross)",
);

/// Whether a flow-level model chooses adaptive routing's one path per pair for all pairs at once
/// on a 3-level fat-tree of the k-ary kind, by two equitable bipartite edge colourings (leaf ×
/// leaf picks the aggregate, pod × pod in each plane the core: flow/planes.rs), as a rearrangeable
/// Clos network allows; off: pair by pair, least loaded in transfer order, which leaves a
/// permutation on a full-bisection tree at 2 × the injection bound where per-packet adaptive
/// routing reaches it (docs/benchmarks.md, issue 23, fourteenth and fifteenth rounds).
pub const CLOS_ROUTING: Param = Param::new(
    "clos_routing",
    Kind::OnOff,
    "off",
    "on a 3-level fat-tree whose cores each join one aggregate rank of every pod, choose adaptive's one path per pair for all pairs \
           at once by two equitable edge colourings (leaf x leaf: aggregate; pod x pod per plane: core), so no link carries more pairs \
           than its leaf or pod must; off: pair by pair, least loaded in transfer order",
);

/// Every flow-level model with network paths declares this one parameter: whether a message
/// through a NIC pays the store-and-forward of one packet at each device it crosses.
pub const STORE_FORWARD: Param = Param::new(
    "store_forward",
    Kind::OnOff,
    "off",
    "a message through a NIC reaches its destination one packet's serialisation (network.packet) later per device it \
           crosses beyond its slowest link, as store-and-forward switches (and packet) move it; off: as through one wire",
);

/// Every flow-level model with network paths declares this one parameter: the scale of the
/// queueing excursion a message through a NIC meets at the busiest switch port of its route
/// (flow/queueing.rs; docs/models.md, "Port queueing"). Max-min sharing gives a port's mean
/// share; packets arriving from many sources (per-packet routing) also wait in the port's
/// random backlog: at utilisation ρ by other messages a packet waits ρ / (2 (1 − ρ)) packet
/// times on average (M/D/1, Pollaczek-Khinchine), and a message of n packets no more than its
/// queue's excursion over those n packets at ρ → 1 (√n, a reflected random walk) nor the
/// buffer a port's credits let fill. 1 is that term; 0 turns it off.
pub const PORT_QUEUEING: Param = Param::new(
    "port_queueing",
    Kind::Real { min: 0.0, max: 4.0, open_min: false, open_max: false },
    "0",
    "scale of the wait a message through a NIC meets at the busiest switch port of its route, beyond max-min's share: 1 is \
           min(rho / (2 (1 - rho)), sqrt(packets), network.buffer_packets) packet times at that port, rho its load by other \
           messages when the message starts (M/D/1 wait, capped by a critically loaded queue's excursion); 0 turns it off",
);

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[Param] = &[
        Param::new("eff", Kind::EFFICIENCY, "0.79", "an efficiency"),
        Param::new("loss", Kind::LOSS, "0", "a loss"),
        Param::new("chunk", Kind::Bytes { min: 1 }, "256KiB", "a size"),
        Param::new("wait", Kind::Time, "1.5us", "a time"),
        Param::new("rate", Kind::Bandwidth, "11.6GiB/s", "a rate"),
        Param::new("n", Kind::Count { min: 1, max: 8 }, "8", "a count"),
        Param::new("on", Kind::OnOff, "on", "a switch"),
        Param::new("rule", Kind::Choice(&["literal", "mixed"]), "literal", "a choice"),
        Param::derived("step", Kind::Time, "NCCL's", "from elsewhere"),
    ];

    fn flags(pairs: &[(&str, &str)]) -> Result<Values> {
        Values::parse("t", TABLE, pairs.iter().copied(), At::Flag)
    }

    #[test]
    fn defaults_are_the_table_read_by_kind() {
        let v = Values::defaults(TABLE);
        assert_eq!(v.real("eff"), 0.79);
        assert_eq!(v.bytes("chunk"), 262_144);
        assert_eq!(v.secs("wait"), 1.5e-6);
        assert_eq!(v.bytes_per_sec("rate"), 11.6 * 1_073_741_824.0);
        assert_eq!(v.count("n"), 8);
        assert!(v.on("on"));
        assert_eq!(v.choice("rule"), "literal");
        assert_eq!(v.time_opt("step"), None);
        assert!(!v.given("eff"));
    }

    #[test]
    fn given_values_are_checked_at_the_ends_of_their_kind() {
        let v = flags(&[("eff", "1"), ("loss", "0"), ("n", "1"), ("on", "off"), ("rule", "mixed"), ("step", "2us")]).unwrap();
        assert_eq!((v.real("eff"), v.count("n"), v.on("on"), v.choice("rule")), (1.0, 1, false, "mixed"));
        assert_eq!(v.time_opt("step"), Some(2_000_000));
        assert!(v.given("eff") && !v.given("chunk"));
        for (k, bad) in [
            ("eff", "0"),
            ("eff", "1.01"),
            ("eff", "NaN"),
            ("loss", "1"),
            ("loss", "-0.1"),
            ("chunk", "0B"),
            ("n", "9"),
            ("n", "0"),
            ("on", "maybe"),
            ("rule", "prop"),
            ("rate", "0GB/s"),
            ("wait", "-1us"),
        ] {
            let e = flags(&[(k, bad)]).unwrap_err().to_string();
            assert!(e.contains(k) && e.contains(bad), "{k}={bad}: {e}");
        }
        let e = flags(&[("eff", "2")]).unwrap_err().to_string();
        assert!(e.contains("(0, 1]") && e.contains("eff=0.79"), "{e}");
        // A size needs its unit, as in every file contend reads (NCCL's variables, read from the
        // environment, are bytes); "latest" is the newest release.
        assert!(flags(&[("chunk", "65536")]).unwrap_err().to_string().contains("has no unit"));
        assert_eq!(release(&["2.18", "2.30"], "latest"), Ok(1));
    }

    /// A release reads as its minor however NCCL prints it (tester's R4: `2.30.7`, the header's
    /// own spelling, was refused); one not listed names the nearest listed.
    #[test]
    fn a_patch_release_reads_as_its_minor() {
        const RELEASES: &[&str] = &["2.18", "2.19", "2.21", "2.30"];
        let t: &'static [Param] = Box::leak(Box::new([Param::new("v", Kind::Release(RELEASES), "2.30", "a release")]));
        let word = |text: &str| Values::parse("t", t, [("v", text)], At::Flag).map(|v| v.choice("v"));
        for (text, minor) in [("2.30", "2.30"), ("2.30.7", "2.30"), ("2.18.5", "2.18"), ("2.19.3-1", "2.19"), ("2.19.3+cuda12.2", "2.19")] {
            assert_eq!(word(text).unwrap(), minor, "{text}");
        }
        for (text, nearest) in [("2.27", "2.30"), ("2.22.3", "2.21"), ("2.17.1", "2.18"), ("3.0", "2.30")] {
            let e = word(text).unwrap_err().to_string();
            assert!(e.contains(&format!("nearest it models is {nearest}")) && e.contains(text) && !e.contains('\n'), "{text}: {e}");
        }
        for bad in ["2", "two", "2.x", "2.19."] {
            let e = word(bad).unwrap_err().to_string();
            assert!(e.contains("is not one of 2.18"), "{bad}: {e}");
        }
    }

    #[test]
    fn an_unknown_name_lists_the_known_ones_where_it_was_written() {
        let e = flags(&[("efff", "1")]).unwrap_err().to_string();
        assert!(e.contains("--param") && e.contains("efff") && e.contains("known: eff, loss"), "{e}");
        let e = Values::parse("t", TABLE, [("x", "1")], At::File { origin: "s.yaml", field: "params" }).unwrap_err().to_string();
        assert!(e.contains("s.yaml") && e.contains("params.x"), "{e}");
        let e = Values::parse("t", TABLE, [("n", "9")], At::File { origin: "s.yaml", field: "params" }).unwrap_err().to_string();
        assert!(e.contains("s.yaml") && e.contains("params.n") && e.contains("e.g. n: 8"), "{e}");
    }
}
