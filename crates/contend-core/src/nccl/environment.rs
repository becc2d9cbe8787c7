//! NCCL's environment variables that contend reads, read as NCCL reads them, in one place for
//! every door: `contend nccl-tests` and `contend run` (and the Python API beside them) hand over
//! their environment's (name, value) pairs and get back the settings, the notes saying which
//! variables applied and which did not (with why), or one line naming the variable and the fix.
//! Reading the process's environment is the door's job; what a variable means is this module's.
//!
//! - NCCL_ALGO, NCCL_PROTO: lists as NCCL's `parseList` reads them (2.30.7 src/graph/tuning.cc:
//!   comma-separated, case-insensitive, empty words skipped, a leading `^` sets every element but
//!   those named; `super::parse_algos`, `super::parse_protos`). NCCL reads them where they are set
//!   at all (`ncclGetEnv` is not NULL); an empty value is left unread here, as a shell's `export
//!   NCCL_ALGO=` means to unset it. Per-collective lists (`allreduce:tree;broadcast:ring`, from
//!   2.24) are refused in one line: the releases contend restates before 2.24 refuse them too
//!   (their `parseList` has no prefixes), and 2.30's form is not read yet.
//! - NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS (src/graph/connect.cc `NCCL_PARAM(MinNchannels, …)`)
//!   with NCCL_MIN_CTAS, NCCL_MAX_CTAS (src/init.cc `NCCL_PARAM(MinCTAs, "MIN_CTAS", …)`, the
//!   communicator's `config.minCTAs` / `maxCTAs`, which connect.cc applies beside them and
//!   transport/nvls.cc alone to NVLS's count: `Bounds`),
//!   NCCL_BUFFSIZE (src/init.cc `NCCL_PARAM(BuffSize, "BUFFSIZE", -2)`) and NCCL_PXN_DISABLE
//!   (src/graph/paths.cc `NCCL_PARAM(PxnDisable, "PXN_DISABLE", 0)`): int64 parameters, read by
//!   `ncclLoadParam` (src/misc/param.cc) with `strtoll(str, nullptr, 0)` where the value is not
//!   empty (`nccl_int`). NCCL_CROSS_NIC (src/graph/search.cc `NCCL_PARAM(CrossNic, "CROSS_NIC",
//!   2)`, v2.18.5-1 to v2.30.7-1) the same way, 0, 1 or 2 (`nccl_cross_nic`, `Comm::set_constants`).
//!   NCCL_PAT_ENABLE (tuning.cc `NCCL_PARAM(PatEnable, "PAT_ENABLE", 2)`, v2.23.4-1 to v2.30.7-1)
//!   the same way: 0 off, 2 NCCL's rule, any other number on as 1 (`ncclPatEnable` returns it
//!   and NCCL tests it against 0; `nccl_pat_enable`, `tuning::pat_on`).
//!   NCCL_NVLSTREE_MAX_CHUNKSIZE (src/transport/nvls.cc, bytes, -2 not set) the same way, into
//!   `nccl_nvlstree_max_chunksize`. NCCL_NVLS_ENABLE (transport/nvls.cc `NCCL_PARAM(NvlsEnable,
//!   "NVLS_ENABLE", 2)`, v2.18.5-1 to v2.30.7-1) the same way: 0 off (`ncclNvlsInit` returns with
//!   `nvlsSupport` 0: no NVLS, no NVLS-tree), 2 NCCL's rule, any other number on as 1
//!   (`nccl_nvls_enable`, `tuning::Comm::nvls_enable`).
//!
//! - NCCL_P2P_DISABLE, NCCL_P2P_LEVEL: the P2P level (`nccl_p2p_level`), read as graph/paths.cc's
//!   `ncclGetLevel` reads them (the same lines at v2.21.5-1 and v2.30.7-1): NCCL_P2P_DISABLE, read
//!   by `strtol(str, NULL, 0)`, disables P2P at 1 only (level LOC: no pair of GPUs is P2P, NVLink
//!   included) and NCCL_P2P_LEVEL is then not read; else NCCL_P2P_LEVEL is a path type's name,
//!   compared case-sensitively (`strcmp` with `topoPathTypeStr` up to SYS), or, where it starts
//!   with a digit, a number of NCCL's older scale (`levelsOldToNew`: 0 LOC, 1 PIX, 2 PXB, 3 PHB,
//!   4 and above SYS). A word NCCL would not match (`sys`, `C2C`, which contend does not type) or
//!   text strtol reads a prefix of is refused, not guessed: NCCL would run its default silently.
//! - NCCL_NET_GDR_LEVEL, NCCL_NET_GDR_READ: where NCCL's network moves data straight to and from
//!   GPU memory (`nccl_net_gdr_level`, `nccl_net_gdr_read`; graph/paths.cc `ncclTopoCheckGdr`):
//!   the level read as NCCL_P2P_LEVEL is, by `ncclGetLevel` with no disabling variable; the read
//!   an int64 parameter, 0 off, positive on, negative NCCL's default (`gdr`).
//!
//! Every other NCCL_* variable set is named in one note as not modelled (`UNMODELLED_QUIET` lists
//! those left out of it, which change no timing).
//!
//! What the caller gives itself wins over the variable standing for it (`Given`): a flag, an
//! argument, a scenario's `params`, a rank program call's own `algo` or `proto`.

use super::constants;
use super::topo::PathType;
use super::tuning::MAX_CHANNELS;
use crate::error::{Error, Result};

/// The variables read, in the order the notes name them.
pub const VARIABLES: [&str; 16] = [
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_MIN_NCHANNELS",
    "NCCL_MIN_CTAS",
    "NCCL_MAX_NCHANNELS",
    "NCCL_MAX_CTAS",
    "NCCL_BUFFSIZE",
    "NCCL_PXN_DISABLE",
    "NCCL_CROSS_NIC",
    "NCCL_PAT_ENABLE",
    "NCCL_P2P_DISABLE",
    "NCCL_P2P_LEVEL",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_NET_GDR_READ",
    "NCCL_NVLSTREE_MAX_CHUNKSIZE",
    "NCCL_NVLS_ENABLE",
];

/// The variables bounding NCCL's channel count (src/graph/connect.cc `ncclTopoPostset`, v2.18.5-1 to
/// v2.30.7-1: `max(ncclMinNchannels(), comm->config.minCTAs)` and `min(ncclMaxNchannels(), …,
/// comm->config.maxCTAs)`; src/init.cc `envConfigOverride` reads NCCL_MIN_CTAS and NCCL_MAX_CTAS
/// into `config.minCTAs` and `config.maxCTAs`): the floors first, as `VARIABLES` lists them.
const CHANNEL_BOUNDS: [&str; 4] = [VARIABLES[2], VARIABLES[3], VARIABLES[4], VARIABLES[5]];

/// NCCL_* variables left out of the note naming those not modelled, so that it names only what
/// could move a timing: logging (NCCL_DEBUG and its _SUBSYS, _FILE, _TIMESTAMP_FORMAT,
/// _TIMESTAMP_LEVELS; NCCL_WARN_ENABLE_DEBUG_INFO), the interface and address family the bootstrap
/// binds (NCCL_SOCKET_IFNAME, NCCL_SOCKET_FAMILY: on a machine with one network the same links
/// carry the data either way), and NCCL_HOSTID and NCCL_COMM_ID (which processes form a host or a
/// communicator: the machine file and the door fix that here). Any variable that can (a transport's
/// knob, NCCL_LAUNCH_MODE, NCCL_CHECK_POINTERS' host time) stays in the note.
const UNMODELLED_QUIET: [&str; 10] = [
    "NCCL_DEBUG",
    "NCCL_DEBUG_SUBSYS",
    "NCCL_DEBUG_FILE",
    "NCCL_DEBUG_TIMESTAMP_FORMAT",
    "NCCL_DEBUG_TIMESTAMP_LEVELS",
    "NCCL_WARN_ENABLE_DEBUG_INFO",
    "NCCL_SOCKET_IFNAME",
    "NCCL_SOCKET_FAMILY",
    "NCCL_HOSTID",
    "NCCL_COMM_ID",
];

/// The variables that set one of NCCL's constants (`constants::PARAMS`), with the parameter.
const PARAMS: [(&str, &str); 6] = [
    ("NCCL_BUFFSIZE", "nccl_buffsize"),
    ("NCCL_PXN_DISABLE", "nccl_pxn_disable"),
    ("NCCL_CROSS_NIC", "nccl_cross_nic"),
    ("NCCL_PAT_ENABLE", "nccl_pat_enable"),
    ("NCCL_NVLSTREE_MAX_CHUNKSIZE", "nccl_nvlstree_max_chunksize"),
    ("NCCL_NVLS_ENABLE", "nccl_nvls_enable"),
];

/// NCCL's older numbering of NCCL_P2P_LEVEL (graph/paths.cc `levelsOldToNew`, v2.21.5-1 and
/// v2.30.7-1): index the number, past the end the last.
const OLD_LEVELS: [PathType; 6] = [PathType::Loc, PathType::Pix, PathType::Pxb, PathType::Phb, PathType::Sys, PathType::Sys];

/// What the caller set itself, which the variable standing for it does not override.
#[derive(Clone, Debug, Default)]
pub struct Given {
    pub algo: bool,
    pub proto: bool,
    pub channels: bool,
    /// Parameters given (`--param`, a scenario's `params`): NCCL's constants among them win.
    pub params: Vec<String>,
    /// The door has `--algo`, `--proto` and `--channels` (`contend nccl-tests`): a mistake's fix
    /// names them beside unsetting the variable.
    pub flags: bool,
}

/// What the environment sets, and what it said.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Environment {
    /// NCCL_ALGO / NCCL_PROTO as written (`super::parse_algos` reads them), where applied.
    pub algo: Option<String>,
    pub proto: Option<String>,
    /// NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS, where both are given and equal.
    pub channels: Option<usize>,
    /// The floors and ceilings they put on NCCL's own counts (`Bounds`), where they leave the
    /// ring count free or where NCCL_MIN/MAX_CTAS is set (which bounds NVLS's count too).
    pub channel_bounds: Option<Bounds>,
    /// NCCL's constants it sets, as `--param` takes them (`nccl_buffsize`, `nccl_pxn_disable`).
    pub params: Vec<(String, String)>,
    /// `VAR=value` of each variable applied.
    pub applied: Vec<String>,
    /// NCCL_* variables set that contend does not model (but `UNMODELLED_QUIET`), in name order.
    pub unmodelled: Vec<String>,
    /// Each variable set but not applied, with why.
    pub ignored: Vec<String>,
    /// Whether the door has flags (`Given::flags`), for the fix a later mistake names.
    flags: bool,
}

/// An NCCL int64 parameter's text as `ncclLoadParam` reads it (src/misc/param.cc: `strtoll(str,
/// nullptr, 0)`): an optional sign, then decimal, `0x` hexadecimal or `0` octal. None where the
/// text is not such a number whole: strtoll would read a prefix of it (`8M` as 8, `x` as 0)
/// without an error, or, past int64, NCCL would run its default; both are refused, not guessed.
pub fn nccl_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let (negative, unsigned) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (digits, radix) = match unsigned.strip_prefix("0x").or_else(|| unsigned.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None if unsigned.len() > 1 && unsigned.starts_with('0') => (&unsigned[1..], 8),
        None => (unsigned, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = i128::from_str_radix(digits, radix).ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// The least NCCL_BUFFSIZE contend takes: `nccl_buffsize`'s bound in NCCL's table.
fn buffsize_min() -> u64 {
    match constants::PARAMS.iter().find(|p| p.name == "nccl_buffsize").map(|p| p.kind) {
        Some(crate::params::Kind::Bytes { min }) => min,
        _ => unreachable!("nccl_buffsize is a size in NCCL's table"),
    }
}

/// The words of an integer's forms, for a refusal.
const INT_FORMS: &str = "a whole number as NCCL reads it (decimal, 0x hexadecimal or 0 octal, within int64)";

/// The value of `name` read (the last given), where set and not empty.
fn value_of<'a>(vars: &'a [(String, String)], name: &str) -> Option<&'a str> {
    vars.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.trim()).filter(|v| !v.is_empty())
}

/// The P2P level NCCL_P2P_DISABLE and NCCL_P2P_LEVEL set (module doc), with the variable and its
/// text; None where neither sets one.
fn p2p_level(vars: &[(String, String)]) -> Result<Option<(&'static str, &str, PathType)>> {
    let value = |name: &str| value_of(vars, name);
    let fix = |var: &str| format!("; or unset {var}");
    if let Some(v) = value("NCCL_P2P_DISABLE") {
        match nccl_int(v) {
            Some(1) => return Ok(Some(("NCCL_P2P_DISABLE", v, PathType::Loc))),
            Some(_) => {}
            None => {
                let why = format!("is not {INT_FORMS}: NCCL disables P2P at 1 only (graph/paths.cc ncclGetLevel); give 1 or 0{}", fix("NCCL_P2P_DISABLE"));
                return Err(Error::input("NCCL_P2P_DISABLE (environment)", v, why));
            }
        }
    }
    let Some(v) = value("NCCL_P2P_LEVEL") else { return Ok(None) };
    Ok(Some(("NCCL_P2P_LEVEL", v, level_of("NCCL_P2P_LEVEL", v)?)))
}

/// A level variable's text (`name`: NCCL_P2P_LEVEL, NCCL_NET_GDR_LEVEL) as `ncclGetLevel` reads
/// it (module doc): a path type's name as written, or a number on NCCL's old scale.
fn level_of(name: &str, v: &str) -> Result<PathType> {
    let level = if v.starts_with(|c: char| c.is_ascii_digit()) {
        nccl_int(v).and_then(|n| usize::try_from(n).ok()).map(|n| OLD_LEVELS[n.min(OLD_LEVELS.len() - 1)])
    } else {
        PathType::parse(v)
    };
    level.ok_or_else(|| {
        let words: Vec<&str> = PathType::ALL.iter().map(|t| t.name()).collect();
        let why = format!(
            "is not a level NCCL reads (it would run its default silently): give one of {} as written (NCCL compares case-sensitively), or 0 to 4 (LOC, PIX, PXB, PHB, SYS); or unset {name}",
            words.join(", ")
        );
        Error::input(format!("{name} (environment)"), v, why)
    })
}

/// NCCL_NET_GDR_LEVEL and NCCL_NET_GDR_READ (graph/paths.cc `ncclTopoCheckGdr`) into `env`, those
/// the caller gives itself left unread. The level is read by `ncclGetLevel` with no disabling
/// variable (`level_of`); the read is an int64 parameter (`NCCL_PARAM(NetGdrRead, "NET_GDR_READ",
/// -2)`) whose 0 turns GDR off for sends, any positive value on, and a negative value leaves
/// NCCL's default (`gdrReadParam < 0`).
fn gdr(vars: &[(String, String)], given: &Given, env: &mut Environment) -> Result<()> {
    let unread = |key: &str| !given.params.iter().any(|p| p == key);
    if let Some(v) = value_of(vars, "NCCL_NET_GDR_LEVEL").filter(|_| unread("nccl_net_gdr_level")) {
        env.params.push(("nccl_net_gdr_level".to_string(), level_of("NCCL_NET_GDR_LEVEL", v)?.name().to_string()));
        env.applied.push(format!("NCCL_NET_GDR_LEVEL={v}"));
    }
    if let Some(v) = value_of(vars, "NCCL_NET_GDR_READ").filter(|_| unread("nccl_net_gdr_read")) {
        match nccl_int(v) {
            None => return Err(env.refusal("NCCL_NET_GDR_READ", v, &format!("is not {INT_FORMS}"), "")),
            Some(n) if n < 0 => env.ignored.push(format!("NCCL_NET_GDR_READ={v} (negative: NCCL's default runs)")),
            Some(n) => {
                env.params.push(("nccl_net_gdr_read".to_string(), u8::from(n > 0).to_string()));
                env.applied.push(format!("NCCL_NET_GDR_READ={v}"));
            }
        }
    }
    Ok(())
}

/// A user's floors and ceilings on NCCL's channel counts (0 and `usize::MAX` where one is not set),
/// kept as two pairs because NCCL applies them in different places: NCCL_MIN/MAX_NCHANNELS
/// (`nchannels`) bound only the ring graph's count, from which trees and p2p take theirs
/// (graph/connect.cc `ncclTopoPostset`), while NCCL_MIN/MAX_CTAS (`ctas`, the communicator's
/// `config.minCTAs` / `maxCTAs`) bound that count beside them and, alone, NVLS's and NVLS-tree's
/// (transport/nvls.cc: `max(minCTAs, min(maxCTAs, nvlsChannels))`, v2.18.5-1 to v2.30.7-1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub nchannels: (usize, usize),
    /// A CTA floor above the CTA ceiling is already lowered to it (init.cc, every release:
    /// "minCTAs %d is larger than maxCTAs %d, set both to %d").
    pub ctas: (usize, usize),
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds { nchannels: (0, usize::MAX), ctas: (0, usize::MAX) }
    }
}

impl Bounds {
    /// The floor and ceiling on the ring graph's count (`ncclTopoPostset`: the larger floor, the
    /// smaller ceiling; `nccl::Comm::bounded` applies the ceiling first, then the floor).
    pub fn channels(&self) -> (usize, usize) {
        (self.nchannels.0.max(self.ctas.0), self.nchannels.1.min(self.ctas.1))
    }

    /// NCCL's NVLS channel count `n` within the CTA pair (the floor last, as nvls.cc takes it).
    pub fn nvls(&self, n: usize) -> usize {
        n.min(self.ctas.1).max(self.ctas.0)
    }
}

impl Environment {
    /// The settings of `vars` (other names than `VARIABLES` are left alone), those the caller
    /// `given` sets itself left unread.
    pub fn read(vars: &[(String, String)], given: &Given) -> Result<Environment> {
        let value = |name: &str| value_of(vars, name);
        let mut env = Environment { flags: given.flags, ..Environment::default() };
        for (name, taken, flag) in [("NCCL_ALGO", given.algo, "--algo"), ("NCCL_PROTO", given.proto, "--proto")] {
            let Some(v) = value(name).filter(|_| !taken) else { continue };
            if v.contains([';', ':']) {
                return Err(env.refusal(
                    name,
                    v,
                    "is a per-collective list (NCCL 2.24's `allreduce:tree;broadcast:ring`), which contend does not read yet; give one list for every collective",
                    flag,
                ));
            }
            let parsed = if name == "NCCL_ALGO" { super::parse_algos(v).map(|_| ()) } else { super::parse_protos(v).map(|_| ()) };
            if let Err(Error::Input { field, problem, .. }) = parsed {
                return Err(env.refusal(name, &field, &problem, flag));
            }
            if name == "NCCL_ALGO" {
                env.algo = Some(v.to_string());
            } else {
                env.proto = Some(v.to_string());
            }
            env.applied.push(format!("{name}={v}"));
        }
        let bounds: Vec<(&str, &str)> = CHANNEL_BOUNDS.into_iter().filter_map(|k| value(k).map(|v| (k, v))).collect();
        if !given.channels && !bounds.is_empty() {
            let written = bounds.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
            let counts: Vec<Option<usize>> =
                bounds.iter().map(|(_, v)| nccl_int(v).and_then(|n| usize::try_from(n).ok()).filter(|n| (1..=MAX_CHANNELS).contains(n))).collect();
            let of = |name: &str| bounds.iter().zip(&counts).find(|((k, _), _)| *k == name).and_then(|(_, n)| *n);
            if counts.iter().any(Option::is_none) {
                env.ignored.push(format!("{written} (not a channel count from 1 to {MAX_CHANNELS}: NCCL's own count runs)"));
            } else {
                let (min_ctas, max_ctas) = (of("NCCL_MIN_CTAS"), of("NCCL_MAX_CTAS").unwrap_or(usize::MAX));
                let b = Bounds {
                    nchannels: (of("NCCL_MIN_NCHANNELS").unwrap_or(0), of("NCCL_MAX_NCHANNELS").unwrap_or(usize::MAX)),
                    ctas: (min_ctas.unwrap_or(0).min(max_ctas), max_ctas),
                };
                let (floor, ceiling) = b.channels();
                // Equal bounds fix the ring count; the CTA pair still bounds NVLS's.
                env.channels = Some(floor).filter(|_| floor == ceiling);
                let ctas = bounds.iter().any(|(k, _)| k.contains("CTAS"));
                env.channel_bounds = Some(b).filter(|_| env.channels.is_none() || ctas);
                env.applied.extend(bounds.iter().map(|(k, v)| format!("{k}={v}")));
            }
        }
        for (name, key) in PARAMS {
            let Some(v) = value(name).filter(|_| !given.params.iter().any(|p| p == key)) else { continue };
            let Some(n) = nccl_int(v) else {
                return Err(env.refusal(name, v, &format!("is not {INT_FORMS}"), ""));
            };
            let param = match name {
                // -2 is NCCL_BUFFSIZE's "not set" (src/init.cc `computeBuffSizes`: `envs[p] != -2 ? envs[p] : defaults[p]`).
                "NCCL_BUFFSIZE" if n == -2 => {
                    env.ignored.push(format!("{name}={v} (NCCL's word for not set: its default runs)"));
                    continue;
                }
                "NCCL_BUFFSIZE" if n < buffsize_min() as i64 => {
                    let why = format!("is {n} bytes, below the {} KiB Simple buffer contend takes (NCCL's default is 4 MiB, 4194304)", buffsize_min() / 1024);
                    return Err(env.refusal(name, v, &why, ""));
                }
                "NCCL_BUFFSIZE" => format!("{n}B"),
                // Bytes, -2 its "not set" (transport/nvls.cc `NCCL_PARAM(NvlsTreeMaxChunkSize,
                // "NVLSTREE_MAX_CHUNKSIZE", -2)`, from 2.20.3); below 4 KiB `split` refuses it.
                "NCCL_NVLSTREE_MAX_CHUNKSIZE" if n == -2 => {
                    env.ignored.push(format!("{name}={v} (NCCL's word for not set: its default runs)"));
                    continue;
                }
                "NCCL_NVLSTREE_MAX_CHUNKSIZE" => format!("{n}B"),
                // NCCL reads 0, 1 and 2 (search.cc `ncclTopoCompute`); any other number is none of
                // them, and 2.18.5 reads it otherwise than later releases: refused, not guessed.
                "NCCL_CROSS_NIC" if (0..=2).contains(&n) => n.to_string(),
                "NCCL_CROSS_NIC" => {
                    return Err(env.refusal(name, v, "is not 0, 1 or 2, the values NCCL's search reads (search.cc ncclTopoCompute); give 0, 1 or 2", ""))
                }
                // tuning.cc `ncclPatEnable`: 2 applies NCCL's rule, any other value is returned and
                // tested against 0, so every number but 0 and 2 turns PAT on as 1 does.
                "NCCL_PAT_ENABLE" if n == 0 || n == 2 => n.to_string(),
                "NCCL_PAT_ENABLE" => "1".to_string(),
                // transport/nvls.cc `ncclNvlsInit`: `!ncclParamNvlsEnable()` returns without NVLS,
                // `== 2` asks the GPU, any other value sets `nvlsSupport` as 1 does.
                "NCCL_NVLS_ENABLE" if n == 0 || n == 2 => n.to_string(),
                "NCCL_NVLS_ENABLE" => "1".to_string(),
                // NCCL's routes leave PXN off only at 1 (src/graph/paths.cc `ncclPxnDisable(comm) != 1`,
                // search.cc `== 1`), while its proxies connect for PXN only at 0 (src/init.cc `== 0`),
                // 2.18.5 to 2.30.7: any other value runs neither way throughout.
                _ if n == 0 || n == 1 => n.to_string(),
                _ => {
                    return Err(env.refusal(
                        name,
                        v,
                        "is neither 0 nor 1: NCCL's routes keep PXN for every value but 1 (src/graph/paths.cc) while its proxies drop it for every value but 0 (src/init.cc); give 0 or 1",
                        "",
                    ))
                }
            };
            // Checked as `--param` is, so that no later mistake can come of it.
            if let Err(Error::Input { problem, .. }) = constants::split(&[(key.to_string(), param.clone())]) {
                return Err(env.refusal(name, v, &format!("reads as {key}={param}, which {problem}"), ""));
            }
            env.params.push((key.to_string(), param));
            env.applied.push(format!("{name}={v}"));
        }
        if !given.params.iter().any(|p| p == "nccl_p2p_level") {
            if let Some((name, v, level)) = p2p_level(vars)? {
                env.params.push(("nccl_p2p_level".to_string(), level.name().to_string()));
                env.applied.push(format!("{name}={v}"));
            }
        }
        gdr(vars, given, &mut env)?;
        let mut unmodelled: Vec<String> = vars
            .iter()
            .map(|(k, _)| k)
            .filter(|k| k.starts_with("NCCL_") && !VARIABLES.contains(&k.as_str()) && !UNMODELLED_QUIET.contains(&k.as_str()))
            .cloned()
            .collect();
        unmodelled.sort();
        unmodelled.dedup();
        env.unmodelled = unmodelled;
        Ok(env)
    }

    /// The report's notes: the variables applied, read within what `door` says wins, and those ignored.
    pub fn notes(&self, door: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if !self.applied.is_empty() {
            notes.push(format!("from the environment, as NCCL reads it: {} ({door})", self.applied.join(", ")));
        }
        if !self.ignored.is_empty() {
            notes.push(format!("ignored from the environment: {}", self.ignored.join("; ")));
        }
        if !self.unmodelled.is_empty() {
            notes.push(format!("not modelled, NCCL's default assumed: {}", self.unmodelled.join(", ")));
        }
        notes
    }

    /// A mistake found later in a setting the environment gave (an algorithm or a protocol the
    /// collective has not), named by its variable instead of the flag. A channel count needs no
    /// renaming: `read` applies only counts of 1 to 64, and one above the release's MAXCHANNELS is
    /// capped there, as NCCL caps it.
    pub fn named(&self, e: Error) -> Error {
        let Error::Input { file, field, problem } = e else { return e };
        let from = |flag: &str| match flag {
            "--algo" => self.algo.is_some().then_some("NCCL_ALGO"),
            "--proto" => self.proto.is_some().then_some("NCCL_PROTO"),
            _ => None,
        };
        if let Some(var) = from(&file) {
            return self.refusal(var, &field, &problem, &file);
        }
        // A level, a crossNic or a PAT setting the machine cannot run (`Comm::set_constants`), named
        // by the variable that set it.
        let set_by = match file.as_str() {
            "nccl_p2p_level" => Some("NCCL_P2P_"),
            "nccl_cross_nic" => Some("NCCL_CROSS_NIC="),
            "nccl_pat_enable" => Some("NCCL_PAT_ENABLE="),
            _ => None,
        };
        if let Some(prefix) = set_by {
            if let Some(set) = self.applied.iter().find(|a| a.starts_with(prefix)) {
                let var = set.split('=').next().unwrap_or(set);
                return self.refusal(var, set, &problem, "");
            }
        }
        // Both lists together leave nothing: named by the variables the environment gave them by.
        if let Some((a, p)) = file.split_once('/').filter(|_| file == "--algo/--proto") {
            let vars: Vec<&str> = [from(a), from(p)].into_iter().flatten().collect();
            if !vars.is_empty() {
                let give = if self.flags { format!(", or give {file}") } else { String::new() };
                let problem = format!("{problem}; or unset {}{give}", vars.join(" and "));
                return Error::input(format!("{} (environment)", vars.join(" and ")), field, problem);
            }
        }
        Error::Input { file, field, problem }
    }

    /// One line naming the variable, what is wrong, and the fix: unset it, or give the flag.
    fn refusal(&self, var: &str, field: &str, problem: &str, flag: &str) -> Error {
        let give = if self.flags && !flag.is_empty() { format!(", or give {flag}") } else { String::new() };
        Error::input(format!("{var} (environment)"), field, format!("{problem}; or unset {var}{give}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nccl::{parse_algos, parse_protos, Algo, Proto};

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn read(pairs: &[(&str, &str)]) -> Result<Environment> {
        Environment::read(&vars(pairs), &Given { flags: true, ..Given::default() })
    }

    /// One line naming the variable as the environment's, with the fix.
    fn refused(pairs: &[(&str, &str)], needles: &[&str]) {
        let e = read(pairs).unwrap_err().to_string();
        assert!(!e.contains('\n') && needles.iter().all(|n| e.contains(n)), "{e}");
    }

    /// strtoll(str, nullptr, 0) as C defines it (C11 7.22.1.4): an optional sign, then `0x`/`0X`
    /// hexadecimal, a leading 0 octal, else decimal; past int64 it fails (ERANGE), and NCCL's
    /// `ncclLoadParam` then runs the default: here the text is refused, as is any text strtoll
    /// would read only a prefix of.
    #[test]
    fn integers_read_as_strtoll_base_0() {
        for (text, n) in [
            ("4194304", 4194304),
            ("0x400000", 4194304),
            ("0X10", 16),
            ("0xfF", 255),
            ("040000000", 8 << 20),
            ("0", 0),
            ("00", 0),
            ("-2", -2),
            ("+12", 12),
            (" 12 ", 12),
            ("9223372036854775807", i64::MAX),
            ("-9223372036854775808", i64::MIN),
            ("0x7fffffffffffffff", i64::MAX),
        ] {
            assert_eq!(nccl_int(text), Some(n), "{text}");
        }
        for text in ["", "8M", "x", "0x", "08", "0o17", "1.5", "--1", "+-1", "1 2", "9223372036854775808", "0x8000000000000000"] {
            assert_eq!(nccl_int(text), None, "{text}");
        }
    }

    /// NCCL_ALGO and NCCL_PROTO as NCCL's `parseList` reads them (2.30.7 src/graph/tuning.cc):
    /// comma words, case-insensitive, empty words skipped; a leading `^` sets every element but
    /// those named (NCCL's algorithms: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree,
    /// PAT, src/init.cc `ncclAlgoStr`; those contend lowers are Tree, Ring, NVLS, NVLSTree and PAT).
    #[test]
    fn lists_read_as_nccls_parse_list() {
        let env = read(&[("NCCL_ALGO", "^NVLS"), ("NCCL_PROTO", "^ll128")]).unwrap();
        assert_eq!((env.algo.as_deref(), env.proto.as_deref()), (Some("^NVLS"), Some("^ll128")));
        assert_eq!(env.applied, ["NCCL_ALGO=^NVLS", "NCCL_PROTO=^ll128"]);
        assert_eq!(parse_algos(env.algo.as_deref().unwrap()).unwrap(), [Algo::Ring, Algo::Tree, Algo::NvlsTree, Algo::Pat]);
        assert_eq!(parse_protos(env.proto.as_deref().unwrap()).unwrap(), [Proto::Ll, Proto::Simple]);
        // Excluding what contend does not lower leaves every algorithm it does; empty words are skipped.
        assert_eq!(parse_algos("^collnetdirect,PAT").unwrap(), [Algo::Ring, Algo::Tree, Algo::Nvls, Algo::NvlsTree]);
        assert_eq!(parse_algos("pat").unwrap(), [Algo::Pat]);
        assert_eq!(parse_algos("Ring,,tree,").unwrap(), [Algo::Ring, Algo::Tree]);
        assert_eq!(parse_algos("^").unwrap().len(), 5);
        // An empty value is a shell's way to unset it: nothing is read.
        assert_eq!(read(&[("NCCL_ALGO", " ")]).unwrap(), read(&[]).unwrap());
        refused(&[("NCCL_ALGO", "bogus")], &["NCCL_ALGO (environment): bogus: is not an NCCL algorithm", "or unset NCCL_ALGO, or give --algo"]);
        refused(&[("NCCL_PROTO", "LL256")], &["NCCL_PROTO (environment): ll256: is not an NCCL protocol", "or unset NCCL_PROTO, or give --proto"]);
        refused(&[("NCCL_ALGO", "collnet")], &["NCCL_ALGO (environment)", "does not lower yet"]);
        // 2.24's per-collective form (`prefix:list;…`) is said to be unread, not misread as a word.
        refused(&[("NCCL_ALGO", "ring;allreduce:tree")], &["NCCL_ALGO (environment)", "per-collective list", "unset NCCL_ALGO"]);
    }

    /// NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS fix the count (read as int64 parameters); other
    /// bounds bound NCCL's own count (`channel_bounds`); a value that is no count is noted as not
    /// applied, and the run goes on with NCCL's own count.
    #[test]
    fn equal_channel_bounds_fix_the_count() {
        let env = read(&[("NCCL_MIN_NCHANNELS", "4"), ("NCCL_MAX_NCHANNELS", "0x4")]).unwrap();
        assert_eq!((env.channels, env.applied), (Some(4), vec!["NCCL_MIN_NCHANNELS=4".to_string(), "NCCL_MAX_NCHANNELS=0x4".into()]));
        for (pairs, bounds) in [(vec![("NCCL_MAX_NCHANNELS", "8")], (0, 8)), (vec![("NCCL_MIN_NCHANNELS", "2"), ("NCCL_MAX_NCHANNELS", "8")], (2, 8))] {
            let env = read(&pairs).unwrap();
            assert_eq!((env.channels, env.channel_bounds.map(|b| b.channels()), env.applied.len()), (None, Some(bounds), pairs.len()), "{pairs:?}");
            assert!(env.ignored.is_empty(), "{pairs:?}: {:?}", env.ignored);
        }
        for (pairs, why) in [
            (vec![("NCCL_MIN_NCHANNELS", "65"), ("NCCL_MAX_NCHANNELS", "65")], "not a channel count from 1 to 64"),
            (vec![("NCCL_MIN_NCHANNELS", "0"), ("NCCL_MAX_NCHANNELS", "0")], "not a channel count"),
            (vec![("NCCL_MIN_NCHANNELS", "x"), ("NCCL_MAX_NCHANNELS", "x")], "not a channel count"),
        ] {
            let env = read(&pairs).unwrap();
            assert!(env.channels.is_none() && env.applied.is_empty() && env.ignored.len() == 1 && env.ignored[0].contains(why), "{pairs:?}: {:?}", env.ignored);
            let notes = env.notes("door");
            assert!(notes.len() == 1 && notes[0].starts_with("ignored from the environment: "), "{notes:?}");
        }
    }

    /// NCCL_MIN_CTAS and NCCL_MAX_CTAS bound the ring count beside NCCL_MIN/MAX_NCHANNELS (connect.cc
    /// `ncclTopoPostset`: the larger floor, the smaller ceiling) and, alone, NVLS's (transport/nvls.cc
    /// `max(minCTAs, min(maxCTAs, nvlsChannels))`): 24 and 24 fix the ring count at 24 and keep the
    /// pair for NVLS; NCCL_MIN_CTAS=24 with NCCL_MAX_NCHANNELS=24 fixes the ring count too, but NVLS
    /// only has a floor; a CTA floor above the CTA ceiling is lowered to it (init.cc), an NCHANNELS
    /// floor above a ceiling is not (copyChannels copies up to it).
    #[test]
    fn cta_bounds_join_the_channel_bounds_and_alone_bound_nvls() {
        const M: usize = usize::MAX;
        let b = |nchannels, ctas| Some(Bounds { nchannels, ctas });
        for (pairs, channels, bounds) in [
            (vec![("NCCL_MIN_CTAS", "24"), ("NCCL_MAX_CTAS", "24")], Some(24), b((0, M), (24, 24))),
            (vec![("NCCL_MIN_CTAS", "24"), ("NCCL_MAX_NCHANNELS", "24")], Some(24), b((0, 24), (24, M))),
            (vec![("NCCL_MIN_NCHANNELS", "8"), ("NCCL_MIN_CTAS", "24"), ("NCCL_MAX_CTAS", "24")], Some(24), b((8, M), (24, 24))),
            (vec![("NCCL_MIN_CTAS", "24")], None, b((0, M), (24, M))),
            (vec![("NCCL_MIN_NCHANNELS", "8"), ("NCCL_MIN_CTAS", "16"), ("NCCL_MAX_CTAS", "24")], None, b((8, M), (16, 24))),
            // init.cc: "minCTAs 32 is larger than maxCTAs 4, set both to 4".
            (vec![("NCCL_MIN_CTAS", "32"), ("NCCL_MAX_CTAS", "4")], Some(4), b((0, M), (4, 4))),
            (vec![("NCCL_MIN_NCHANNELS", "8"), ("NCCL_MAX_NCHANNELS", "4")], None, b((8, 4), (0, M))),
            // NCHANNELS alone fixing the count leave no bounds (NVLS keeps NCCL's count).
            (vec![("NCCL_MIN_NCHANNELS", "4"), ("NCCL_MAX_NCHANNELS", "4")], Some(4), None),
        ] {
            let env = read(&pairs).unwrap();
            assert_eq!((env.channels, env.channel_bounds, env.applied.len()), (channels, bounds, pairs.len()), "{pairs:?}");
        }
        // NVLS's 16 channels (hgx-h100 under 2.30.7) under each pair: the CTA pair alone moves them.
        let nvls = |pairs: &[(&str, &str)]| read(pairs).unwrap().channel_bounds.unwrap_or_default().nvls(16);
        assert_eq!(nvls(&[("NCCL_MAX_CTAS", "4")]), 4);
        assert_eq!(nvls(&[("NCCL_MIN_CTAS", "32")]), 32);
        assert_eq!(nvls(&[("NCCL_MIN_CTAS", "32"), ("NCCL_MAX_CTAS", "4")]), 4);
        assert_eq!(nvls(&[("NCCL_MAX_NCHANNELS", "4")]), 16);
        assert_eq!(nvls(&[("NCCL_MIN_NCHANNELS", "32"), ("NCCL_MAX_CTAS", "8")]), 8);
        assert_eq!(CHANNEL_BOUNDS, ["NCCL_MIN_NCHANNELS", "NCCL_MIN_CTAS", "NCCL_MAX_NCHANNELS", "NCCL_MAX_CTAS"]);
        let env = read(&[("NCCL_MIN_CTAS", "0"), ("NCCL_MAX_CTAS", "0")]).unwrap();
        assert!(env.channels.is_none() && env.ignored[0].contains("not a channel count"), "{:?}", env.ignored);
    }

    /// NCCL_BUFFSIZE is Simple's buffer in bytes (src/init.cc, -2 its "not set"); contend takes
    /// 64 KiB and more (`nccl_buffsize`'s bound).
    #[test]
    fn buffsize_is_bytes_as_nccl_reads_them() {
        for text in ["8388608", "0x800000", "040000000"] {
            let env = read(&[("NCCL_BUFFSIZE", text)]).unwrap();
            assert_eq!(env.params, [("nccl_buffsize".to_string(), "8388608B".to_string())], "{text}");
            assert_eq!(env.applied, [format!("NCCL_BUFFSIZE={text}")]);
            assert_eq!(constants::split(&env.params).unwrap().0.buffsize, 8 << 20);
        }
        let unset = read(&[("NCCL_BUFFSIZE", "-2")]).unwrap();
        assert!(unset.params.is_empty() && unset.ignored[0].contains("not set"), "{unset:?}");
        assert_eq!(read(&[("NCCL_BUFFSIZE", "65536")]).unwrap().params[0].1, "65536B");
        refused(&[("NCCL_BUFFSIZE", "65535")], &["NCCL_BUFFSIZE (environment): 65535: is 65535 bytes, below the 64 KiB", "; or unset NCCL_BUFFSIZE"]);
        refused(&[("NCCL_BUFFSIZE", "-1")], &["NCCL_BUFFSIZE (environment)", "below the 64 KiB"]);
        refused(&[("NCCL_BUFFSIZE", "8M")], &["NCCL_BUFFSIZE (environment): 8M: is not a whole number as NCCL reads it", "unset NCCL_BUFFSIZE"]);
    }

    /// NCCL_PAT_ENABLE as tuning.cc `ncclPatEnable` reads it: 0 off, 2 NCCL's rule, any other
    /// number on (1); text that is no number refused.
    #[test]
    fn pat_enable_is_off_on_or_nccls_rule() {
        for (text, want) in [("0", "0"), ("1", "1"), ("2", "2"), ("5", "1"), ("-1", "1")] {
            let env = read(&[("NCCL_PAT_ENABLE", text)]).unwrap();
            assert_eq!(env.params, [("nccl_pat_enable".to_string(), want.to_string())], "{text}");
            assert!(env.unmodelled.is_empty() && env.applied == [format!("NCCL_PAT_ENABLE={text}")], "{env:?}");
            assert_eq!(constants::split(&env.params).unwrap().0.pat_enable.to_string(), want);
        }
        refused(&[("NCCL_PAT_ENABLE", "on")], &["NCCL_PAT_ENABLE (environment): on: is not a whole number as NCCL reads it"]);
        // A 1 the machine cannot run, named by the variable: pat_tests::pat_enable_1_is_refused_only_where_nccl_picks_pat.
    }

    /// NCCL_NVLS_ENABLE as transport/nvls.cc `ncclNvlsInit` reads it (v2.18.5-1 to v2.30.7-1): 0
    /// off, 2 NCCL's rule, any other number on (1); read, so not named as unmodelled (qa27's
    /// wrong answer 2).
    #[test]
    fn nvls_enable_is_off_on_or_nccls_rule() {
        for (text, want) in [("0", "0"), ("1", "1"), ("2", "2"), ("7", "1"), ("-1", "1"), ("0x0", "0")] {
            let env = read(&[("NCCL_NVLS_ENABLE", text)]).unwrap();
            assert_eq!(env.params, [("nccl_nvls_enable".to_string(), want.to_string())], "{text}");
            assert!(env.unmodelled.is_empty() && env.applied == [format!("NCCL_NVLS_ENABLE={text}")], "{env:?}");
            assert_eq!(constants::split(&env.params).unwrap().0.nvls_enable.to_string(), want);
        }
        refused(&[("NCCL_NVLS_ENABLE", "off")], &["NCCL_NVLS_ENABLE (environment): off: is not a whole number as NCCL reads it"]);
    }

    /// NCCL_NVLSTREE_MAX_CHUNKSIZE is bytes (transport/nvls.cc, -2 its "not set"), read into
    /// `nccl_nvlstree_max_chunksize`, not named as unmodelled.
    #[test]
    fn nvlstree_max_chunksize_is_bytes() {
        let env = read(&[("NCCL_NVLSTREE_MAX_CHUNKSIZE", "65536")]).unwrap();
        assert_eq!(env.params, [("nccl_nvlstree_max_chunksize".to_string(), "65536B".to_string())]);
        assert!(env.unmodelled.is_empty(), "{env:?}");
        assert_eq!(constants::split(&env.params).unwrap().0.nvlstree_max, Some(65536));
        let unset = read(&[("NCCL_NVLSTREE_MAX_CHUNKSIZE", "-2")]).unwrap();
        assert!(unset.params.is_empty() && unset.ignored[0].contains("not set"), "{unset:?}");
        refused(&[("NCCL_NVLSTREE_MAX_CHUNKSIZE", "1024")], &["NCCL_NVLSTREE_MAX_CHUNKSIZE (environment): 1024"]);
    }

    /// NCCL_CROSS_NIC: 0, 1 or 2 as search.cc reads them (`nccl_cross_nic`); other numbers refused;
    /// a crossNic the machine cannot run named by the variable (`Comm::check_cross_nic`).
    #[test]
    fn cross_nic_is_zero_one_or_two() {
        for (text, want) in [("0", "0"), ("1", "1"), ("0x2", "2")] {
            let env = read(&[("NCCL_CROSS_NIC", text)]).unwrap();
            assert_eq!(env.params, [("nccl_cross_nic".to_string(), want.to_string())], "{text}");
            assert!(env.unmodelled.is_empty() && env.applied == [format!("NCCL_CROSS_NIC={text}")], "{env:?}");
            assert_eq!(constants::split(&env.params).unwrap().0.cross_nic.to_string(), want);
        }
        refused(&[("NCCL_CROSS_NIC", "3")], &["NCCL_CROSS_NIC (environment): 3: is not 0, 1 or 2", "; or unset NCCL_CROSS_NIC"]);
        let env = read(&[("NCCL_CROSS_NIC", "0")]).unwrap();
        let e = env.named(Error::input("nccl_cross_nic", "0", "keeps each ring channel on the NIC it entered by")).to_string();
        assert_eq!(e, "NCCL_CROSS_NIC (environment): NCCL_CROSS_NIC=0: keeps each ring channel on the NIC it entered by; or unset NCCL_CROSS_NIC");
    }

    /// NCCL_PXN_DISABLE: 1 leaves PXN off (src/graph/paths.cc `!= 1`, search.cc `== 1`), 0 on;
    /// NCCL treats any other value one way in its routes and the other in its proxies (src/init.cc
    /// `== 0`), so it is refused.
    #[test]
    fn pxn_disable_is_zero_or_one() {
        assert_eq!(read(&[("NCCL_PXN_DISABLE", "1")]).unwrap().params, [("nccl_pxn_disable".to_string(), "1".to_string())]);
        assert_eq!(read(&[("NCCL_PXN_DISABLE", "0x0")]).unwrap().params, [("nccl_pxn_disable".to_string(), "0".to_string())]);
        refused(&[("NCCL_PXN_DISABLE", "2")], &["NCCL_PXN_DISABLE (environment): 2: is neither 0 nor 1", "give 0 or 1; or unset NCCL_PXN_DISABLE"]);
        refused(&[("NCCL_PXN_DISABLE", "yes")], &["NCCL_PXN_DISABLE (environment): yes: is not a whole number"]);
    }

    /// NCCL_P2P_DISABLE and NCCL_P2P_LEVEL as graph/paths.cc `ncclGetLevel` reads them (v2.21.5-1
    /// and v2.30.7-1): DISABLE=1 is LOC and the level is then not read; another DISABLE leaves the
    /// level to NCCL_P2P_LEVEL; a word is compared as written; a number indexes `levelsOldToNew`
    /// (LOC, PIX, PXB, PHB, SYS, SYS), past its end SYS.
    #[test]
    fn the_p2p_level_is_read_as_nccl_get_level_reads_it() {
        let level = |pairs: &[(&str, &str)]| {
            let env = read(pairs).unwrap();
            let got = env.params.iter().find(|(k, _)| k == "nccl_p2p_level").map(|(_, v)| v.clone());
            (got, env.applied)
        };
        assert_eq!(level(&[("NCCL_P2P_DISABLE", "1"), ("NCCL_P2P_LEVEL", "SYS")]), (Some("LOC".into()), vec!["NCCL_P2P_DISABLE=1".to_string()]));
        assert_eq!(level(&[("NCCL_P2P_DISABLE", "0"), ("NCCL_P2P_LEVEL", "SYS")]), (Some("SYS".into()), vec!["NCCL_P2P_LEVEL=SYS".to_string()]));
        assert_eq!(level(&[("NCCL_P2P_DISABLE", "0")]), (None, vec![]));
        for (text, want) in [
            ("0", "LOC"),
            ("1", "PIX"),
            ("2", "PXB"),
            ("3", "PHB"),
            ("4", "SYS"),
            ("5", "SYS"),
            ("17", "SYS"),
            ("0x3", "PHB"),
            ("NVL", "NVL"),
            ("PHB", "PHB"),
            ("LOC", "LOC"),
        ] {
            assert_eq!(level(&[("NCCL_P2P_LEVEL", text)]).0.as_deref(), Some(want), "{text}");
            // Every word read is one `nccl_p2p_level` takes.
            assert!(constants::split(&[("nccl_p2p_level".into(), want.into())]).unwrap().0.p2p_level.is_some());
        }
        refused(
            &[("NCCL_P2P_LEVEL", "sys")],
            &["NCCL_P2P_LEVEL (environment): sys: is not a level NCCL reads", "case-sensitively", "; or unset NCCL_P2P_LEVEL"],
        );
        refused(&[("NCCL_P2P_LEVEL", "C2C")], &["NCCL_P2P_LEVEL (environment): C2C: is not a level"]);
        refused(&[("NCCL_P2P_LEVEL", "3x")], &["NCCL_P2P_LEVEL (environment): 3x:"]);
        refused(&[("NCCL_P2P_LEVEL", "-1")], &["NCCL_P2P_LEVEL (environment): -1:"]);
        refused(&[("NCCL_P2P_DISABLE", "yes")], &["NCCL_P2P_DISABLE (environment): yes: is not a whole number", "give 1 or 0; or unset NCCL_P2P_DISABLE"]);
        // A level given as a parameter wins over both variables.
        let given = Given { params: vec!["nccl_p2p_level".into()], ..Given::default() };
        assert!(Environment::read(&vars(&[("NCCL_P2P_DISABLE", "1"), ("NCCL_P2P_LEVEL", "bogus")]), &given).unwrap().params.is_empty());
        // A level the machine refuses later is named by the variable that set it.
        let env = read(&[("NCCL_P2P_DISABLE", "1")]).unwrap();
        let e = env.named(Error::input("nccl_p2p_level", "LOC", "puts GPU pairs of path type NVL through host memory")).to_string();
        assert_eq!(e, "NCCL_P2P_DISABLE (environment): NCCL_P2P_DISABLE=1: puts GPU pairs of path type NVL through host memory; or unset NCCL_P2P_DISABLE");
    }

    /// NCCL_NET_GDR_LEVEL is read as NCCL_P2P_LEVEL is (`ncclGetLevel`, no disabling variable);
    /// NCCL_NET_GDR_READ as an int64 parameter: 0 off, positive on, negative NCCL's default.
    #[test]
    fn the_gdr_level_and_read_are_read_as_nccl_reads_them() {
        let got = |pairs: &[(&str, &str)]| read(pairs).unwrap().params;
        let p = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(got(&[("NCCL_NET_GDR_LEVEL", "SYS")]), [p("nccl_net_gdr_level", "SYS")]);
        assert_eq!(got(&[("NCCL_NET_GDR_LEVEL", "3")]), [p("nccl_net_gdr_level", "PHB")]);
        assert_eq!(got(&[("NCCL_NET_GDR_LEVEL", "9")]), [p("nccl_net_gdr_level", "SYS")]);
        assert_eq!(got(&[("NCCL_NET_GDR_LEVEL", "0")]), [p("nccl_net_gdr_level", "LOC")]);
        // NCCL_P2P_DISABLE does not reach the GDR level.
        assert_eq!(got(&[("NCCL_P2P_DISABLE", "1"), ("NCCL_NET_GDR_LEVEL", "PXB")])[1], p("nccl_net_gdr_level", "PXB"));
        assert_eq!(got(&[("NCCL_NET_GDR_READ", "0")]), [p("nccl_net_gdr_read", "0")]);
        assert_eq!(got(&[("NCCL_NET_GDR_READ", "2")]), [p("nccl_net_gdr_read", "1")]);
        let env = read(&[("NCCL_NET_GDR_READ", "-2")]).unwrap();
        assert!(env.params.is_empty() && env.ignored == ["NCCL_NET_GDR_READ=-2 (negative: NCCL's default runs)"]);
        assert!(env.unmodelled.is_empty());
        let e = read(&[("NCCL_NET_GDR_LEVEL", "phb")]).unwrap_err().to_string();
        assert!(e.starts_with("NCCL_NET_GDR_LEVEL (environment): phb: is not a level NCCL reads") && e.ends_with("; or unset NCCL_NET_GDR_LEVEL"), "{e}");
        let e = read(&[("NCCL_NET_GDR_READ", "on")]).unwrap_err().to_string();
        assert!(e.starts_with("NCCL_NET_GDR_READ (environment): on: is not a whole number"), "{e}");
        // Every word read is one the parameter takes.
        for w in ["LOC", "PIX", "PXB", "P2C", "PHB", "SYS"] {
            assert!(constants::split(&[("nccl_net_gdr_level".into(), w.into())]).unwrap().0.net_gdr_level.is_some());
        }
        let given = Given { params: vec!["nccl_net_gdr_level".into(), "nccl_net_gdr_read".into()], ..Given::default() };
        assert!(Environment::read(&vars(&[("NCCL_NET_GDR_LEVEL", "bogus"), ("NCCL_NET_GDR_READ", "x")]), &given).unwrap().params.is_empty());
    }

    /// Every other NCCL_* variable set is named once, sorted, as not modelled, but those that
    /// change no timing (`UNMODELLED_QUIET`); other names are not NCCL's.
    #[test]
    fn variables_not_modelled_are_named() {
        let env = read(&[
            ("NCCL_NVLS_CHUNKSIZE", "128K"),
            ("NCCL_DEBUG", "INFO"),
            ("NCCL_IB_QPS_PER_CONNECTION", "2"),
            ("PATH", "/bin"),
            ("NCCL_IB_QPS_PER_CONNECTION", "4"),
            ("NCCL_SOCKET_IFNAME", "eth0"),
        ])
        .unwrap();
        assert_eq!(env.unmodelled, ["NCCL_IB_QPS_PER_CONNECTION", "NCCL_NVLS_CHUNKSIZE"]);
        assert_eq!(env.notes("door"), ["not modelled, NCCL's default assumed: NCCL_IB_QPS_PER_CONNECTION, NCCL_NVLS_CHUNKSIZE"]);
        assert!(read(&[("NCCL_DEBUG", "INFO"), ("NCCL_DEBUG_SUBSYS", "ALL")]).unwrap().notes("door").is_empty());
        // A variable read is never named as not modelled, even where a flag wins over it.
        let given = Given { algo: true, ..Given::default() };
        assert!(Environment::read(&vars(&[("NCCL_ALGO", "ring")]), &given).unwrap().unmodelled.is_empty());
    }

    /// What the caller sets itself wins: the variable is not read (a bad value of it is no
    /// mistake then) and not named as applied.
    #[test]
    fn what_is_given_wins() {
        let pairs = vars(&[("NCCL_ALGO", "bogus"), ("NCCL_PROTO", "LL"), ("NCCL_MIN_NCHANNELS", "4"), ("NCCL_MAX_NCHANNELS", "4"), ("NCCL_BUFFSIZE", "1")]);
        let given = Given { algo: true, channels: true, params: vec!["nccl_buffsize".into()], ..Given::default() };
        let env = Environment::read(&pairs, &given).unwrap();
        assert_eq!((env.algo.as_deref(), env.proto.as_deref(), env.channels), (None, Some("LL"), None));
        assert!(env.params.is_empty() && env.ignored.is_empty(), "{env:?}");
        assert_eq!(env.applied, ["NCCL_PROTO=LL"]);
        // Other variables are left alone; the last of a name given twice is the one read.
        let env = read(&[("NCCL_DEBUG", "INFO"), ("PATH", "/bin"), ("NCCL_PROTO", "LL"), ("NCCL_PROTO", "Simple")]).unwrap();
        assert_eq!(env.applied, ["NCCL_PROTO=Simple"]);
    }

    /// A later mistake in a setting the environment gave is named by its variable; one the flag
    /// gave keeps the flag's name. A door without flags names no flag in the fix.
    #[test]
    fn later_mistakes_name_the_variable() {
        let env = read(&[("NCCL_ALGO", "tree")]).unwrap();
        let e = env.named(Error::input("--algo", "tree", "is no algorithm NCCL runs all_gather with")).to_string();
        assert_eq!(e, "NCCL_ALGO (environment): tree: is no algorithm NCCL runs all_gather with; or unset NCCL_ALGO, or give --algo");
        let e = env.named(Error::input("--algo/--proto", "tree/any", "leaves NCCL no algorithm")).to_string();
        assert_eq!(e, "NCCL_ALGO (environment): tree/any: leaves NCCL no algorithm; or unset NCCL_ALGO, or give --algo/--proto");
        let e = env.named(Error::input("--proto", "x", "is not an NCCL protocol")).to_string();
        assert!(e.starts_with("--proto: x:"), "{e}");
        let run = Environment::read(&vars(&[("NCCL_ALGO", "bogus")]), &Given::default()).unwrap_err().to_string();
        assert!(run.ends_with("; or unset NCCL_ALGO"), "{run}");
        let notes = env.notes("a flag given wins");
        assert_eq!(notes, ["from the environment, as NCCL reads it: NCCL_ALGO=tree (a flag given wins)"]);
    }

    /// Round 23's tester: `--param NCCL_P2P_LEVEL=SYS` was "not a parameter of maxmin"; it is
    /// refused naming the shell and the parameter standing for it.
    #[test]
    fn a_variable_given_as_a_parameter_names_the_shell_and_the_parameter() {
        let e = constants::split(&[("NCCL_P2P_LEVEL".into(), "SYS".into())]).unwrap_err().to_string();
        assert!(e.contains("NCCL_P2P_LEVEL") && e.contains("NCCL's environment variable") && e.contains("--param nccl_p2p_level=SYS"), "{e}");
        assert!(!e.contains('\n'), "{e}");
        let e = constants::split(&[("NCCL_IB_HCA".into(), "mlx5".into())]).unwrap_err().to_string();
        assert!(e.contains("NCCL_IB_HCA=mlx5 contend") && !e.contains("or give"), "{e}");
    }
}
