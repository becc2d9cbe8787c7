//! Halo exchanges: every rank of an N-dimensional process grid sends one message to each of its
//! neighbours (the rank before and the rank after it in every dimension).
//!
//! Ranks are numbered row-major, the last dimension varying fastest: a [2, 4] grid has rows
//! 0-1-2-3 and 4-5-6-7 and vertical pairs (0,4) .. (3,7), the 2D decomposition of the SC16 COSMO
//! study. A rank's messages are generated dimension by dimension, the "before" neighbour first;
//! that generation order is the identity schedule.

use crate::datatype::{Datatype, Method};
use crate::error::{parse_document, read_user_file, Error, Result};
use crate::topology::{DeviceKind, Machine};
use crate::units::Bytes;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Messages per rank: a schedule stores each rank's order in 4-bit fields.
pub const MAX_MESSAGES_PER_RANK: usize = 15;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HaloSpec {
    /// Ranks per dimension, e.g. [2, 4] (rows 0-1-2-3 and 4-5-6-7) or [2, 2, 2].
    pub grid: Vec<u32>,
    /// Per dimension, whether the grid wraps around (default: none does).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub periodic: Vec<bool>,
    /// One size for every message, e.g. "254KB". Give exactly one of size, sizes and cosmo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// One size per grid dimension (both directions of a dimension send equal faces).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<Bytes>,
    /// Sizes derived from a COSMO-like subdomain per GPU.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cosmo: Option<CosmoSizes>,
    /// Device of each rank, e.g. [GPU0, GPU1, ...] (default: the machine's GPUs in order).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
    /// One datatype per grid dimension (a preset such as jacobi-column, or a datatype file):
    /// each message is one instance of its dimension's type, which also gives its size.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub datatypes: Vec<String>,
    /// How every message moves: adaptive (the default with datatypes), pack, zero-copy, staged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
}

/// A halo face of a subdomain: `halo` layers of every point on the face, the face including the
/// halo corners of the other decomposed dimensions (so that exchanging the dimensions one after
/// another also fills the corners).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CosmoSizes {
    /// Grid points of one GPU's subdomain per axis; the first len(grid) axes are decomposed,
    /// the others (COSMO's vertical levels in 2D) are not (default [256, 256, 80]).
    #[serde(default = "CosmoSizes::default_domain")]
    pub domain: Vec<u32>,
    /// Halo width in grid points (default 3).
    #[serde(default = "CosmoSizes::default_halo")]
    pub halo: u32,
    /// Bytes per value (default 4, single precision).
    #[serde(default = "CosmoSizes::default_value_bytes")]
    pub value_bytes: u32,
    /// Fields sent together in one message (default 1).
    #[serde(default = "CosmoSizes::default_fields")]
    pub fields: u32,
}

impl Default for CosmoSizes {
    fn default() -> Self {
        CosmoSizes { domain: Self::default_domain(), halo: Self::default_halo(), value_bytes: Self::default_value_bytes(), fields: Self::default_fields() }
    }
}

impl CosmoSizes {
    fn default_domain() -> Vec<u32> {
        vec![256, 256, 80]
    }
    fn default_halo() -> u32 {
        3
    }
    fn default_value_bytes() -> u32 {
        4
    }
    fn default_fields() -> u32 {
        1
    }

    /// Bytes of one message across grid dimension `dim` of a `decomposed`-dimensional grid:
    /// halo x value_bytes x fields x the face, whose extent along another axis is n + 2 halo when
    /// that axis is decomposed and n when it is not.
    ///
    /// With the defaults, a 2D decomposition sends (256 + 6) x 80 x 3 x 4 = 251,520 B in every
    /// direction, the top of the 40-254 KB range of the SC16 slides (their smaller messages are
    /// exchanges of fewer levels or fields). A 3D decomposition of the same subdomain sends
    /// 262 x 86 x 12 = 270,384 B across the first two axes and 262 x 262 x 12 = 823,728 B across
    /// the third.
    pub fn message_bytes(&self, decomposed: usize, dim: usize) -> u64 {
        let h = self.halo as u64;
        let face: u64 =
            self.domain.iter().enumerate().filter(|&(a, _)| a != dim).map(|(a, &n)| if a < decomposed { n as u64 + 2 * h } else { n as u64 }).product();
        face * h * self.value_bytes as u64 * self.fields as u64
    }
}

/// One message of a resolved halo exchange.
#[derive(Clone, Debug, PartialEq)]
pub struct HaloMessage {
    pub dst: usize,
    pub bytes: u64,
    /// The datatype it is one instance of, if any.
    pub datatype: Option<String>,
    pub dim: usize,
    /// -1 towards the rank before, +1 towards the rank after.
    pub dir: i8,
}

/// A halo exchange resolved against a machine: per rank, its device and its messages.
#[derive(Clone, Debug)]
pub struct Halo {
    /// Machine device index of each rank.
    pub device: Vec<usize>,
    /// Messages of each rank, in identity order.
    pub messages: Vec<Vec<HaloMessage>>,
    pub origin: String,
    pub method: Option<Method>,
}

pub const PRESETS: &[(&str, &str)] = &[
    ("cosmo-2d", "COSMO 2D decomposition: 2x4 grid on GPU0..GPU7, not periodic, COSMO sizes (251,520 B)"),
    ("cosmo-3d", "COSMO 3D decomposition: 2x2x2 grid on GPU0..GPU7, not periodic, COSMO sizes"),
];

impl HaloSpec {
    pub fn preset(name: &str) -> Option<HaloSpec> {
        let grid = match name {
            "cosmo-2d" => vec![2, 4],
            "cosmo-3d" => vec![2, 2, 2],
            _ => return None,
        };
        Some(HaloSpec { grid, periodic: vec![], size: None, sizes: vec![], cosmo: Some(CosmoSizes::default()), gpus: vec![], datatypes: vec![], method: None })
    }

    /// One size for every message on a grid without wrap-around.
    pub fn uniform(grid: &[u32], size: Bytes) -> HaloSpec {
        HaloSpec { grid: grid.to_vec(), periodic: vec![], size: Some(size), sizes: vec![], cosmo: None, gpus: vec![], datatypes: vec![], method: None }
    }

    /// A preset name (`2d` and `3d` stand for the COSMO ones) or a path to a YAML/JSON file.
    pub fn load(source: &str) -> Result<HaloSpec> {
        let preset = match source {
            "2d" => "cosmo-2d",
            "3d" => "cosmo-3d",
            other => other,
        };
        if let Some(spec) = HaloSpec::preset(preset) {
            return Ok(spec);
        }
        if std::path::Path::new(source).exists() {
            return HaloSpec::from_text(&read_user_file(source)?, source);
        }
        let names: Vec<&str> = PRESETS.iter().map(|(n, _)| *n).collect();
        Err(Error::input(source, "", format!("is neither a halo preset nor a file; presets: {}", names.join(", "))))
    }

    pub fn from_text(text: &str, origin: &str) -> Result<HaloSpec> {
        parse_document(text, origin)
    }
}

impl Halo {
    /// Check the spec against the machine and generate every rank's messages.
    pub fn resolve(spec: &HaloSpec, m: &Machine, origin: &str) -> Result<Halo> {
        let bad = |field: &str, problem: String| Error::input(origin, field, problem);
        let dims = spec.grid.len();
        if dims == 0 {
            return Err(bad("grid", "is empty; give the ranks per dimension, e.g. [2, 4]".into()));
        }
        if let Some(d) = spec.grid.iter().position(|&n| n == 0) {
            return Err(bad(&format!("grid[{d}]"), "is 0; every dimension has at least one rank".into()));
        }
        if !spec.periodic.is_empty() && spec.periodic.len() != dims {
            return Err(bad("periodic", format!("has {} entries for a {dims}-dimensional grid; give one per dimension or none", spec.periodic.len())));
        }
        let ranks = spec.grid.iter().try_fold(1usize, |a, &n| a.checked_mul(n as usize)).unwrap_or(usize::MAX);
        let types = datatypes(spec, dims, origin)?;
        let size_of: SizeRule = match &types {
            Some(t) => {
                let sizes: Vec<u64> = t.iter().map(|d| d.stats.size_bytes).collect();
                Box::new(move |d| sizes[d])
            }
            None => size_rule(spec, dims, &bad)?,
        };
        let device = rank_devices(spec, m, ranks, &bad)?;

        let mut messages = vec![Vec::new(); ranks];
        for (r, out) in messages.iter_mut().enumerate() {
            let coord = coords(&spec.grid, r);
            for (d, &n) in spec.grid.iter().enumerate() {
                let wraps = spec.periodic.get(d).copied().unwrap_or(false);
                for dir in [-1i8, 1] {
                    let x = coord[d] as i64 + dir as i64;
                    let x = match x {
                        x if (0..n as i64).contains(&x) => x,
                        _ if wraps => x.rem_euclid(n as i64),
                        _ => continue,
                    };
                    let mut c = coord.clone();
                    c[d] = x as u32;
                    let dst = rank_of(&spec.grid, &c);
                    if dst != r {
                        out.push(HaloMessage { dst, bytes: size_of(d), datatype: spec.datatypes.get(d).cloned(), dim: d, dir });
                    }
                }
            }
        }
        if messages.iter().all(|v| v.is_empty()) {
            return Err(bad("grid", "gives no rank a neighbour; use at least 2 ranks in some dimension".into()));
        }
        if let Some(r) = messages.iter().position(|v| v.len() > MAX_MESSAGES_PER_RANK) {
            return Err(bad("grid", format!("gives rank {r} {} neighbours; at most {MAX_MESSAGES_PER_RANK} are supported", messages[r].len())));
        }
        Ok(Halo { device, messages, origin: origin.to_string(), method: spec.method })
    }

    pub fn ranks(&self) -> usize {
        self.device.len()
    }

    pub fn message_count(&self) -> usize {
        self.messages.iter().map(|v| v.len()).sum()
    }
}

type SizeRule = Box<dyn Fn(usize) -> u64>;

/// The datatype of each dimension, flattened once, where given (they then set the sizes).
fn datatypes(spec: &HaloSpec, dims: usize, origin: &str) -> Result<Option<Vec<Datatype>>> {
    if spec.datatypes.is_empty() {
        return Ok(None);
    }
    if spec.size.is_some() || !spec.sizes.is_empty() || spec.cosmo.is_some() {
        return Err(Error::input(origin, "datatypes", "set the message sizes; drop size, sizes and cosmo"));
    }
    if spec.datatypes.len() != dims {
        return Err(Error::input(origin, "datatypes", format!("has {} entries for a {dims}-dimensional grid; give one per dimension", spec.datatypes.len())));
    }
    let load = |(d, n): (usize, &String)| {
        Datatype::load(n).map_err(|e| match e {
            Error::Input { problem, .. } => Error::input(origin, format!("datatypes[{d}]"), format!("\"{n}\" {problem}")),
            e => e,
        })
    };
    Ok(Some(spec.datatypes.iter().enumerate().map(load).collect::<Result<_>>()?))
}

fn size_rule(spec: &HaloSpec, dims: usize, bad: &dyn Fn(&str, String) -> Error) -> Result<SizeRule> {
    let given = spec.size.is_some() as usize + !spec.sizes.is_empty() as usize + spec.cosmo.is_some() as usize;
    if given != 1 {
        return Err(bad("size", "give exactly one of size (e.g. \"254KB\"), sizes (one per dimension) and cosmo".into()));
    }
    if let Some(s) = spec.size {
        if s.0 == 0 {
            return Err(bad("size", "is zero; give a positive size such as \"254KB\"".into()));
        }
        return Ok(Box::new(move |_| s.0));
    }
    if !spec.sizes.is_empty() {
        if spec.sizes.len() != dims {
            return Err(bad("sizes", format!("has {} entries for a {dims}-dimensional grid; give one per dimension", spec.sizes.len())));
        }
        if let Some(d) = spec.sizes.iter().position(|s| s.0 == 0) {
            return Err(bad(&format!("sizes[{d}]"), "is zero; give a positive size such as \"254KB\"".into()));
        }
        let sizes: Vec<u64> = spec.sizes.iter().map(|s| s.0).collect();
        return Ok(Box::new(move |d| sizes[d]));
    }
    let c = spec.cosmo.clone().expect("exactly one size rule is given");
    if c.domain.len() < dims {
        return Err(bad("cosmo.domain", format!("has {} axes for a {dims}-dimensional grid; give at least one per grid dimension", c.domain.len())));
    }
    for (field, v) in [("halo", c.halo), ("value_bytes", c.value_bytes), ("fields", c.fields)] {
        if v == 0 {
            return Err(bad(&format!("cosmo.{field}"), "is 0; give a positive number".into()));
        }
    }
    if let Some(a) = c.domain.iter().position(|&n| n == 0) {
        return Err(bad(&format!("cosmo.domain[{a}]"), "is 0; a subdomain has at least one point per axis".into()));
    }
    Ok(Box::new(move |d| c.message_bytes(dims, d)))
}

fn rank_devices(spec: &HaloSpec, m: &Machine, ranks: usize, bad: &dyn Fn(&str, String) -> Error) -> Result<Vec<usize>> {
    if spec.gpus.is_empty() {
        let gpus = m.gpus();
        if gpus.len() < ranks {
            return Err(bad("grid", format!("has {ranks} ranks but {} has {} GPUs; use a smaller grid or list gpus", m.name, gpus.len())));
        }
        return Ok(gpus[..ranks].to_vec());
    }
    if spec.gpus.len() != ranks {
        return Err(bad("gpus", format!("lists {} devices for {ranks} ranks; give one per rank", spec.gpus.len())));
    }
    let mut out = Vec::with_capacity(ranks);
    for (i, name) in spec.gpus.iter().enumerate() {
        let field = format!("gpus[{i}]");
        let d = m.device(name).ok_or_else(|| bad(&field, format!("\"{name}\" is not a device of {}; {}", m.name, m.endpoint_hint())))?;
        if m.devices[d].kind != DeviceKind::Gpu {
            return Err(bad(&field, format!("\"{name}\" is a {:?}; halo ranks run on GPUs", m.devices[d].kind)));
        }
        if out.contains(&d) {
            return Err(bad(&field, format!("\"{name}\" is listed twice; give every rank its own GPU")));
        }
        out.push(d);
    }
    Ok(out)
}

fn coords(grid: &[u32], mut r: usize) -> Vec<u32> {
    let mut c = vec![0; grid.len()];
    for d in (0..grid.len()).rev() {
        c[d] = (r % grid[d] as usize) as u32;
        r /= grid[d] as usize;
    }
    c
}

fn rank_of(grid: &[u32], c: &[u32]) -> usize {
    grid.iter().zip(c).fold(0, |r, (&n, &x)| r * n as usize + x as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(spec: &HaloSpec) -> Result<Halo> {
        Halo::resolve(spec, &Machine::load("cs-storm-socket").unwrap(), "h.yaml")
    }

    fn dsts(h: &Halo) -> Vec<Vec<usize>> {
        h.messages.iter().map(|v| v.iter().map(|m| m.dst).collect()).collect()
    }

    #[test]
    fn cosmo_2d_neighbours_and_sizes() {
        let h = resolve(&HaloSpec::preset("cosmo-2d").unwrap()).unwrap();
        assert_eq!(dsts(&h), [vec![4, 1], vec![5, 0, 2], vec![6, 1, 3], vec![7, 2], vec![0, 5], vec![1, 4, 6], vec![2, 5, 7], vec![3, 6]]);
        assert!(h.messages.iter().flatten().all(|m| m.bytes == 251_520));
    }

    #[test]
    fn cosmo_3d_neighbours_and_sizes() {
        let h = resolve(&HaloSpec::preset("cosmo-3d").unwrap()).unwrap();
        assert_eq!(dsts(&h)[0], [4, 2, 1]);
        assert_eq!(dsts(&h)[7], [3, 5, 6]);
        let sizes: Vec<u64> = h.messages[0].iter().map(|m| m.bytes).collect();
        assert_eq!(sizes, [270_384, 270_384, 823_728]);
    }

    #[test]
    fn periodic_wraps_and_size_two_sends_twice() {
        let mut s = HaloSpec::uniform(&[1, 4], Bytes(1000));
        s.periodic = vec![false, true];
        assert_eq!(dsts(&resolve(&s).unwrap())[0], [3, 1]);
        s.grid = vec![1, 2];
        assert_eq!(dsts(&resolve(&s).unwrap()), [vec![1, 1], vec![0, 0]]);
    }

    #[test]
    fn yaml_with_units_and_mapping() {
        let text = "grid: [2, 2]\nsizes: [100KB, 1MiB]\ngpus: [GPU4, GPU5, GPU6, GPU7]\n";
        let h = Halo::resolve(&HaloSpec::from_text(text, "h.yaml").unwrap(), &Machine::load("cs-storm-socket").unwrap(), "h.yaml").unwrap();
        assert_eq!(h.device.len(), 4);
        assert_eq!(h.messages[0].iter().map(|m| m.bytes).collect::<Vec<_>>(), [100_000, 1 << 20]);
    }

    #[test]
    fn schema_names_the_fields() {
        let schema = serde_json::to_string(&schemars::schema_for!(HaloSpec)).unwrap();
        for field in ["grid", "periodic", "sizes", "cosmo", "value_bytes", "gpus"] {
            assert!(schema.contains(&format!("\"{field}\"")), "{field}");
        }
    }

    #[test]
    fn mistakes_name_the_field() {
        let cases = [
            ("grid: [2, 4]\n", "size: give exactly one"),
            ("grid: [2, 4]\nsize: 1MiB\ncosmo: {}\n", "exactly one"),
            ("grid: [4, 4]\nsize: 1MiB\n", "grid: has 16 ranks"),
            ("grid: [2, 0]\nsize: 1MiB\n", "grid[1]"),
            ("grid: [2]\nsize: 1MiB\nperiodic: [true, false]\n", "periodic"),
            ("grid: [2]\nsize: 1MiB\ngpus: [GPU0, SWA]\n", "gpus[1]"),
            ("grid: [2]\nsize: 1MiB\ngpus: [GPU0, GPU0]\n", "twice"),
            ("grid: [2]\nsizes: [1MiB, 2MiB]\n", "sizes"),
            ("grid: [1]\nsize: 1MiB\n", "no rank a neighbour"),
            ("grid: [2]\nsize: 1MiB\ncolour: red\n", "unknown field"),
            ("grid: [2]\nsize: 300\n", "no unit"),
        ];
        let m = Machine::load("cs-storm-socket").unwrap();
        for (text, needle) in cases {
            let e = HaloSpec::from_text(text, "h.yaml").and_then(|s| Halo::resolve(&s, &m, "h.yaml")).unwrap_err().to_string();
            assert!(e.starts_with("h.yaml: ") && e.contains(needle) && !e.contains('\n'), "{needle}: {e}");
        }
    }
}
