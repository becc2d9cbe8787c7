//! NVIDIA's nccl-tests (`all_reduce_perf`, …): its definitions, and its output read back as it
//! is pasted — the `# nThread …` header, `#  Rank  0 Group  0 Pid … on HOST device 0 [0x07] NAME`
//! lines, the table with or without the redop and root columns (older versions lack root, and
//! print `error` where newer ones print `#wrong`), rows prefixed by MPI's `[0]`, several runs
//! one after another (`# Collective test starting: all_gather_perf`), and the footer.

use crate::error::{Error, Result};
use crate::units::Bytes;
use serde::Serialize;

/// The collectives nccl-tests measures, by the name of its binary (less `_perf`).
pub const OPS: &[&str] = &["all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"];

/// nccl-tests' bus-bandwidth factor (src/<op>.cu `GetBw`): busbw = algbw x factor on n ranks.
pub fn busbw_factor(op: &str, n: usize) -> f64 {
    let n = n as f64;
    match op {
        "all_reduce" => 2.0 * (n - 1.0) / n,
        "all_gather" | "reduce_scatter" | "alltoall" => (n - 1.0) / n,
        _ => 1.0,
    }
}

/// Most rows a sweep may have (nccl-tests' own sweeps have a few dozen).
pub const MAX_ROWS: usize = 200;
/// Largest call: 64 GiB.
pub const MAX_BYTES: u64 = 64 << 30;

/// nccl-tests' timed iterations by default (`-n`; v2.19.6 src/common.cu `iters = 20`).
pub const ITERS: usize = 20;

/// The most timed iterations taken (`-n`): the loop's time per call has long settled to its
/// period by then (the first call's excess is divided by them).
pub const MAX_ITERS: usize = 1_000_000;

/// `-n` as nccl-tests reads it: at least one timed iteration (its time is divided by them).
pub fn check_iters(n: usize) -> Result<()> {
    if (1..=MAX_ITERS).contains(&n) {
        Ok(())
    } else {
        Err(Error::input("-n", n.to_string(), format!("is not a number of timed iterations; give 1 to {MAX_ITERS} (nccl-tests' default is {ITERS})")))
    }
}

/// nccl-tests' datatypes (-d) and their sizes.
pub fn dtype_size(d: &str) -> Result<u64> {
    Ok(match d {
        "int8" | "uint8" | "char" => 1,
        "half" | "bfloat16" | "float16" => 2,
        "float" | "int32" | "uint32" | "int" | "float32" => 4,
        "double" | "int64" | "uint64" | "float64" => 8,
        _ => {
            return Err(Error::input(
                "--datatype",
                d,
                "is not an nccl-tests datatype; use int8, uint8, half, bfloat16, float, int32, uint32, double, int64 or uint64",
            ))
        }
    })
}

/// The sizes nccl-tests runs: from min, times factor, while at most max.
pub fn sizes(min: u64, max: u64, factor: u64) -> Result<Vec<u64>> {
    if factor < 2 {
        return Err(Error::input("-f", factor.to_string(), "must be at least 2 (nccl-tests multiplies the size by it)"));
    }
    if min == 0 || min > max {
        return Err(Error::input("-b", min.to_string(), format!("must be positive and at most -e ({max} B)")));
    }
    if max > MAX_BYTES {
        return Err(Error::input("-e", max.to_string(), format!("is above {} GiB; give at most 64G", MAX_BYTES >> 30)));
    }
    let mut v = vec![min];
    while let Some(next) = v.last().unwrap().checked_mul(factor).filter(|&s| s <= max) {
        v.push(next);
    }
    if v.len() > MAX_ROWS {
        return Err(Error::input("-f", factor.to_string(), format!("gives {} sizes; at most {MAX_ROWS}: raise -f or narrow -b/-e", v.len())));
    }
    Ok(v)
}

pub fn parse_size(s: &str, flag: &str) -> Result<u64> {
    // As nccl-tests' `parsesize` (src/common.cu) reads -b/-e: `sscanf("%lf %1s")`, a number (fractions
    // allowed), optional spaces, and a first letter K, M or G for powers of 1024; letters after the first
    // are not read (so 8MB and 8MiB are both 8 MiB there), and the product is truncated to whole bytes.
    let t = s.trim();
    let split = number_end(t);
    let (num, rest) = (&t[..split], t[split..].trim_start());
    let mult: u64 = match rest.chars().next() {
        None => 1,
        Some('K' | 'k') => 1 << 10,
        Some('M' | 'm') => 1 << 20,
        Some('G' | 'g') => 1 << 30,
        Some(_) => 0,
    };
    if let (Ok(v), true) = (num.parse::<f64>(), mult > 0) {
        let bytes = v * mult as f64;
        return match bytes {
            b if b >= 2f64.powi(64) => Err(Error::input(flag, s, "is too large")),
            b if b < 1.0 => Err(Error::input(flag, s, "is less than one byte; give at least 1")),
            b => Ok(b as u64),
        };
    }
    if t.starts_with('-') {
        return Err(Error::input(flag, s, "is negative; give a size of at least 1 byte"));
    }
    // Not nccl-tests' form: contend's own sizes (8B, 1TB) still read; anything else is one error.
    Bytes::parse(t).map(|b| b.0).map_err(|e| Error::input(flag, s, format!("{e}; write bytes as nccl-tests does (8, 64K, 1.5M, 8G)")))
}

/// Where the decimal number at the start of `t` ends (digits, a point, an exponent), as `%lf` reads it.
fn number_end(t: &str) -> usize {
    let b = t.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = digits(0);
    if i < b.len() && b[i] == b'.' {
        i = digits(i + 1);
    }
    if i > 0 && i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let j = if b.get(i + 1).is_some_and(|&c| c == b'+' || c == b'-') { i + 2 } else { i + 1 };
        if digits(j) > j {
            i = digits(j);
        }
    }
    i
}

/// nccl-tests' element count (its `count` column) and bytes for a requested size. The column
/// prints the count the test passes to NCCL (`paramcount`, common.cu `args->nbytes / wordSize`):
/// the whole buffer's for most collectives, one rank's share for all_gather, reduce_scatter and
/// alltoall (src/all_gather.cu, reduce_scatter.cu, alltoall.cu `GetCollByteCount`), whose size
/// is that share times the ranks. The share is rounded down to 16 bytes, `(count/nranks) &
/// -(16/eltSize)`, so that every rank's block stays aligned (nccl-tests 29f4114 of 2024-12-18,
/// v2.13.12 on; before it all_gather and reduce_scatter rounded to 4 elements and alltoall not
/// at all): a share of fewer than 16 bytes is 0 (8 ranks' all_gather of 64 B floats).
pub fn count_of(op: &str, size: u64, word: u64, ranks: u64) -> (u64, u64) {
    let count = size / word;
    match op {
        "all_gather" | "reduce_scatter" | "alltoall" => {
            let share = (count / ranks) & (16 / word).wrapping_neg();
            (share, share * ranks * word)
        }
        _ => (count, count * word),
    }
}

/// nccl-tests' `getFloatStr`: two decimals where they fit the width, fewer, then exponent.
pub fn float(v: f64, width: usize) -> String {
    for prec in [2usize, 1, 0] {
        let s = format!("{v:>width$.prec$}");
        if s.len() <= width {
            return s;
        }
    }
    format!("{v:>width$.1e}")
}

/// C's %g (6 significant digits, trailing zeros dropped).
pub fn g_format(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let digits = 6 - 1 - v.abs().log10().floor() as i32;
    let s = format!("{:.*}", digits.max(0) as usize, v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// One row of the table: out-of-place and in-place.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Row {
    pub size: u64,
    pub count: u64,
    #[serde(rename = "type")]
    pub dtype: String,
    pub redop: Option<String>,
    pub root: Option<i64>,
    pub time_us: f64,
    pub algbw: f64,
    pub busbw: f64,
    /// The in-place half (None: an excerpt of the out-of-place columns alone).
    pub in_place_time_us: Option<f64>,
    pub in_place_algbw: Option<f64>,
    pub in_place_busbw: Option<f64>,
    /// nccl-tests' `#wrong`: elements found wrong after the call, the more of out-of-place and
    /// in-place (None: `N/A`, or the older `error` column, a float error rather than a count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrong: Option<u64>,
}

/// One run of one binary.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Run {
    /// The collective, and how it was told: "named" (the run's own line or the file's name) or
    /// "from busbw/algbw" (the table's ratio against nccl-tests' factors).
    pub op: String,
    pub op_from: String,
    /// Ranks (`Rank` lines), nodes (their distinct hosts), and the GPU's name as printed.
    pub ranks: usize,
    pub nodes: usize,
    /// The most ranks any host runs (`ranks / nodes` where every host runs as many).
    pub most_on_a_host: usize,
    pub gpu: Option<String>,
    pub rows: Vec<Row>,
    /// Where its table starts (1-based line of the file).
    pub line: usize,
    /// The NCCL release the output says it ran ("2.19.3"), and the words that say so
    /// (`nccl-library=21903`); the last one printed before its table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release: Option<(String, String)>,
    /// NCCL's variables the paste shows set for the run, in the order they apply (a later one of
    /// a name wins, as NCCL reads the last value a process was given): `export` lines before its
    /// table, then its command line's assignments, then NCCL's own `NAME set by environment to
    /// VALUE` lines of the run (`assignments`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<Setting>,
    /// nccl-tests' `-g`: the GPUs each of its threads drives, where one thread a process drives
    /// two or more (`# nThread 1 nGpus N`, else the command line's `-g N`); None otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ngpus: Option<usize>,
    /// nccl-tests' `-n`: the timed calls a row averages (`# … iters: N` of its header, else the
    /// command line's `-n N`/`--iters N`); None where the paste says neither (nccl-tests' default,
    /// `ITERS`). Rooted rows depend on it (`nccl::run_loop`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iters: Option<usize>,
}

/// One NCCL variable a paste shows set, and the line that shows it (1-based).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Setting {
    pub name: String,
    pub value: String,
    pub line: usize,
}

/// The NCCL_* assignments a line of a paste shows (the line's 1-based number `line`):
/// - a command line of an nccl-tests binary (`at`, its word): each `NCCL_X=v` word before it, which
///   covers the shell's `NCCL_X=v ./all_reduce_perf`, `env NCCL_X=v …`, Open MPI's `-x NCCL_X=v`
///   and Slurm's `--export=ALL,NCCL_X=v`, and MPICH's `-genv NCCL_X v` / `-env NCCL_X v` (the
///   words after the binary are nccl-tests' own; `-x NCCL_X` without a value passes the launching
///   shell's, which the paste does not show);
/// - a shell's `export NCCL_X=v …`;
/// - NCCL's own log of a variable it read, `NCCL_X set by environment to v` (its `INFO(NCCL_ENV,
///   "%s set by environment to %s")` where it reads one: src/misc/param.cc `ncclLoadParam` for its
///   parameters, and the reads of NCCL_ALGO, NCCL_PROTO, NCCL_P2P_LEVEL and others beside them),
///   printed at NCCL_DEBUG=INFO.
fn assignments(body: &str, at: Option<usize>, line: usize) -> Vec<Setting> {
    let setting = |name: &str, value: &str| {
        let value = value.trim_matches(|c| c == '"' || c == '\'' || c == '`');
        (name.starts_with("NCCL_") && name.len() > 5 && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')).then(|| Setting {
            name: name.to_string(),
            value: value.to_string(),
            line,
        })
    };
    let words: Vec<&str> = body.split_whitespace().collect();
    if let Some(k) = words.windows(5).position(|w| w[1..4] == ["set", "by", "environment"] && w[4] == "to") {
        let value = words.get(k + 5).map_or("", |v| v.trim_end_matches('.'));
        return setting(words[k], value).into_iter().collect();
    }
    let before = match (at, words.iter().position(|&w| w == "export")) {
        (Some(at), _) => &words[..at],
        (None, Some(k)) => &words[k + 1..],
        (None, None) => return Vec::new(),
    };
    let mut out = Vec::new();
    for (k, w) in before.iter().enumerate() {
        if ["-genv", "-env"].contains(w) {
            if let (Some(name), Some(value)) = (before.get(k + 1), before.get(k + 2)) {
                out.extend(setting(name, value));
            }
            continue;
        }
        let pieces: Vec<&str> = match w.strip_prefix("--export=") {
            Some(list) => list.split(',').collect(),
            None => vec![w],
        };
        for piece in pieces {
            if let Some((name, value)) = piece.split_once('=') {
                out.extend(setting(name.trim_matches(|c| c == '"' || c == '\''), value));
            }
        }
    }
    out
}

/// nccl-tests' threads a process and GPUs a thread, from its header (`# nThread 1 nGpus 8 …`).
fn header_gpus(body: &str) -> Option<(usize, usize)> {
    let w: Vec<&str> = body.split_whitespace().collect();
    let after = |key: &str| w.iter().position(|&x| x == key).and_then(|k| w.get(k + 1)).and_then(|v| v.parse::<usize>().ok());
    Some((after("nThread")?, after("nGpus")?))
}

/// nccl-tests' timed calls a row, from its header (`… warmup iters: 5 iters: 20 agg iters: 1 …`,
/// src/common.cu's `iters: %d`, the word not after `warmup` or `agg`); None where out of `-n`'s range.
fn header_iters(body: &str) -> Option<usize> {
    let w: Vec<&str> = body.split_whitespace().collect();
    let k = (1..w.len()).find(|&k| w[k] == "iters:" && w[k - 1] != "warmup" && w[k - 1] != "agg")?;
    w.get(k + 1)?.parse::<usize>().ok().filter(|&n| check_iters(n).is_ok())
}

/// nccl-tests' `-n`/`--iters` among its own words (src/common.cu), in `-n`'s range.
fn command_iters(tool: &[&str]) -> Option<usize> {
    option(tool, &["-n", "--iters"], true).and_then(|v| v.parse::<usize>().ok()).filter(|&n| check_iters(n).is_ok())
}

/// The collective a wrapper of nccl-tests names with `-t` (Google's gIB `run_nccl_tests.sh -t
/// all_gather …`, its usage: `-t` the test, `-g` GPUs per node for its mpirun): a line without an
/// nccl-tests binary, one of whose words' file name has "nccl" and "test" in it, and whose `-t` is
/// a collective nccl-tests names (nccl-tests' own `-t` is a thread count, never a name).
fn wrapped(words: &[&str]) -> Option<String> {
    let wrapper = words.iter().any(|w| {
        let base = w.rsplit('/').next().unwrap_or(w).to_lowercase();
        base.contains("nccl") && base.contains("test")
    });
    let t = option(words, &["-t", "--test"], false)?;
    let t = t.strip_suffix("_perf").unwrap_or(t);
    (wrapper && OPS.contains(&t)).then(|| t.to_string())
}

/// The release nccl-tests or NCCL prints in its output: nccl-tests' header
/// (`nccl-library=21903`, NCCL_VERSION_CODE X*10000 + Y*100 + Z from 2.9), NCCL's own
/// `NCCL version 2.19.3+cuda12.2` (NCCL_DEBUG=VERSION or INFO), or contend's own table
/// (`NCCL 2.30.7's choice`); with the words it was read from.
pub fn release_printed(line: &str) -> Option<(String, String)> {
    if let Some(at) = line.find("nccl-library=") {
        let code: String = line[at + 13..].chars().take_while(|c| c.is_ascii_digit()).collect();
        let n: u32 = code.parse().ok().filter(|&n| n >= 20900)?;
        return Some((format!("{}.{}.{}", n / 10000, n / 100 % 100, n % 100), format!("nccl-library={code}")));
    }
    for key in ["NCCL version ", "NCCL "] {
        let Some(at) = line.find(key) else { continue };
        let word: String = line[at + key.len()..].chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        let word = word.trim_end_matches('.');
        let release = word.split('.').count() == 3 && word.split('.').all(|p| !p.is_empty());
        if release && (key == "NCCL version " || line[at + key.len() + word.len()..].starts_with("'s choice")) {
            return Some((word.to_string(), format!("{key}{word}").trim().to_string()));
        }
    }
    None
}

/// Whether `text` is nccl-tests output.
pub fn detect(text: &str) -> bool {
    let has = |s: &str| text.contains(s);
    // A table pasted alone has its column header: `size count type … time algbw busbw`.
    let header = || text.lines().any(|l| ["size", "count", "time", "algbw", "busbw"].iter().all(|w| l.split_whitespace().any(|x| x == *w)));
    (has("out-of-place") && has("busbw")) || has("# nThread") || has("Avg bus bandwidth") || has("Collective test starting") || header()
}

/// A launcher's label off a line: Slurm's `srun --label` (`0: `, the task's number) and pdsh's
/// (`host: `, the host's name), a word without spaces before the colon.
fn unlabelled(line: &str) -> &str {
    match line.split_once(": ") {
        Some((label, rest)) if !label.is_empty() && label.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) => rest,
        _ => line,
    }
}

/// MPI's per-rank prefixes (`[0]`, `[1,0]<stdout>:`) and markdown's quoting and inline code
/// (a command line pasted from a GitHub issue as `` `./all_reduce_perf … -g 2` ``), off a line.
fn clean(line: &str) -> String {
    let mut s = unlabelled(line.trim()).trim().trim_start_matches('>').trim().trim_matches('`').trim().to_string();
    while let Some(rest) = s.strip_prefix('[').and_then(|r| r.split_once(']')) {
        let inner = rest.0;
        if !inner.chars().all(|c| c.is_ascii_digit() || c == ',') {
            break;
        }
        s = rest.1.trim_start_matches("<stdout>:").trim().to_string();
    }
    // `[0]` also separates the out-of-place and in-place halves of a row under some launchers.
    let mut out = String::new();
    let mut rest = s.as_str();
    while let Some(k) = rest.find('[') {
        match rest[k + 1..].find(']') {
            Some(e) if rest[k + 1..k + 1 + e].chars().all(|c| c.is_ascii_digit()) && e > 0 => {
                out.push_str(&rest[..k]);
                out.push(' ');
                rest = &rest[k + 2 + e..];
            }
            _ => {
                out.push_str(&rest[..=k]);
                rest = &rest[k + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn number(t: &str) -> Option<f64> {
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A table row, or None for any other line.
fn row(line: &str) -> Option<Row> {
    let t: Vec<&str> = line.split_whitespace().collect();
    if t.len() < 7 {
        return None;
    }
    let size = t[0].parse::<u64>().ok()?;
    let count = t[1].parse::<u64>().ok()?;
    let dtype = t[2];
    if !dtype.chars().next()?.is_ascii_alphabetic() {
        return None;
    }
    let mut k = 3;
    let redop = t.get(k).filter(|x| x.chars().next().is_some_and(|c| c.is_ascii_alphabetic())).map(|x| x.to_string());
    if redop.is_some() {
        k += 1;
    }
    // time algbw busbw #wrong, twice: 8 fields, or 9 with root first; an excerpt of the
    // out-of-place half alone (its 9 columns of 13): 4, or 5 with root.
    let left = t.len() - k;
    let root = match left {
        9 | 5 => {
            k += 1;
            Some(t[k - 1].parse::<i64>().ok()?)
        }
        8 | 4 => None,
        _ => return None,
    };
    let f = |i: usize| number(t[k + i]);
    let whole = left >= 8;
    // The #wrong column of an excerpt: a count or N/A, so that no other line of four numbers reads as a row.
    if !whole && t[k + 3].parse::<u64>().is_err() && t[k + 3] != "N/A" {
        return None;
    }
    let in_place = |i: usize| if whole { f(i).map(Some) } else { Some(None) };
    Some(Row {
        size,
        count,
        dtype: dtype.to_string(),
        redop,
        root,
        time_us: f(0)?,
        algbw: f(1)?,
        busbw: f(2)?,
        in_place_time_us: in_place(4)?,
        in_place_algbw: in_place(5)?,
        in_place_busbw: in_place(6)?,
        wrong: [Some(t[k + 3]), t.get(k + 7).copied().filter(|_| whole)].iter().flatten().filter_map(|w| w.parse::<u64>().ok()).max(),
    })
}

/// The op a run names (`Collective test starting: X_perf`, or a binary named on its command line).
fn named(line: &str) -> Option<String> {
    OPS.iter().find(|op| line.contains(&format!("{op}_perf"))).map(|op| op.to_string())
}

/// The op from the table: busbw / algbw against the factors, redop and root telling apart the
/// ones with the same factor. all_gather and alltoall share (n - 1)/n and print no reduction, so
/// such a table (or one without the redop column, where reduce_scatter shares it too) is
/// `Err(those collectives)`: the file must say which (its binary's name), not a guess.
fn from_ratio(rows: &[Row], n: usize) -> Option<std::result::Result<String, &'static str>> {
    let r = rows.iter().filter(|r| r.algbw > 0.5).max_by(|a, b| a.size.cmp(&b.size))?;
    let ratio = r.busbw / r.algbw;
    let sum = r.redop.as_deref().is_some_and(|x| x != "none");
    let rooted = r.root.is_some_and(|x| x >= 0);
    let near = |f: f64| (ratio - f).abs() <= 0.02 * f + 0.01;
    Some(Ok(if n > 2 && near(busbw_factor("all_reduce", n)) {
        "all_reduce"
    } else if near(1.0) && rooted {
        if sum {
            "reduce"
        } else {
            "broadcast"
        }
    } else if n == 2 && near(1.0) && sum {
        "all_reduce"
    } else if near(1.0) {
        "sendrecv"
    } else if near(busbw_factor("all_gather", n)) {
        match r.redop.as_deref() {
            Some(x) if x != "none" => "reduce_scatter",
            Some(_) => return Some(Err("all_gather or alltoall")),
            None => return Some(Err("all_gather, alltoall or reduce_scatter")),
        }
    } else {
        return None;
    }
    .to_string()))
}

/// What a pasted command line says of its run: ranks, and hosts where the line says them.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Launch {
    ranks: usize,
    /// None where the launcher places its processes on hosts the line does not name (a hostfile,
    /// `srun -n N` without `-N`).
    hosts: Option<usize>,
}

/// Where the nccl-tests binary is among a command line's words: `all_reduce_perf`, or the MPI
/// build's `all_reduce_perf_mpi` (nccl-tests' Makefile, `NAME_SUFFIX=_mpi`), by any path.
fn binary_at(words: &[&str]) -> Option<usize> {
    words.iter().position(|w| {
        let w = w.trim_matches(|c| c == '`' || c == '"' || c == '\'');
        let base = w.rsplit('/').next().unwrap_or(w);
        let base = base.strip_suffix("_mpi").unwrap_or(base);
        OPS.iter().any(|op| base.strip_prefix(op).is_some_and(|rest| rest == "_perf"))
    })
}

/// An option's value among `words`, as getopt and the launchers spell it: `-g 4`, `--ngpus 4`,
/// `--ngpus=4`, and glued short options (`-g4`) where `glued`.
fn option<'a>(words: &[&'a str], names: &[&str], glued: bool) -> Option<&'a str> {
    words.iter().enumerate().find_map(|(k, w)| {
        names.iter().find_map(|name| {
            if w == name {
                words.get(k + 1).copied()
            } else if let Some(v) = w.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
                Some(v)
            } else if glued && !name.starts_with("--") {
                w.strip_prefix(name).filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
            } else {
                None
            }
        })
    })
}

/// nccl-tests' `-t`/`--nthreads` threads a process and `-g`/`--ngpus` GPUs a thread (src/common.cu;
/// 1 each by default) among its own words; None where it gives neither.
fn per_process(tool: &[&str]) -> Option<(usize, usize)> {
    let number = |names: &[&str]| option(tool, names, true).and_then(|v| v.parse::<usize>().ok()).filter(|&n| n > 0);
    let (t, g) = (number(&["-t", "--nthreads"]), number(&["-g", "--ngpus"]));
    (t.is_some() || g.is_some()).then(|| (t.unwrap_or(1), g.unwrap_or(1)))
}

/// The most ranks a pasted command line is taken to start: a bound on typing mistakes (`-np
/// 99999999999999` asked for a table of that many ranks), above the largest GPU clusters built.
const MOST_LAUNCHED_RANKS: usize = 1 << 20;

/// The ranks (and hosts) of an nccl-tests command line as pasted: nccl-tests' own `-g`/`--ngpus`
/// GPUs and `-t`/`--nthreads` threads per process (src/common.cu; 1 each by default), times the
/// processes its launcher starts. Open MPI's and MPICH's `mpirun`/`mpiexec` (`-np`/`-n`/`--np` N;
/// else hosts × `-N`/`--npernode`/`-ppn` N, or the slots of `-H host:slots,…`), and Slurm's
/// `srun` (`-n`/`--ntasks` N; else `-N`/`--nodes` × `--ntasks-per-node`). Only the launcher's
/// words before the binary are read as its options (nccl-tests' `-n` and `-N` are iterations and
/// cycles). torchrun is no launcher of nccl-tests: its workers are not MPI ranks, and a binary
/// built without MPI is a communicator of its own `-g` GPUs in every process. None where the line
/// does not say the processes, or for one rank (a table of one rank is not pasted for its bandwidth).
fn launched(command: &str) -> Option<Launch> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let at = binary_at(&words)?;
    // contend's own table states its ranks and nodes in its first line (`tests_tool::table`:
    // "contend prediction of nccl-tests all_reduce_perf on M (8 ranks, 1 node(s), …)").
    if command.starts_with("contend prediction of nccl-tests") {
        let n = |after: usize, unit: &str| {
            words.get(after).filter(|w| w.starts_with(unit)).and(words.get(after - 1)).and_then(|w| w.trim_start_matches('(').parse::<usize>().ok())
        };
        let k = words.iter().position(|w| w.starts_with("ranks"))?;
        return Some(Launch { ranks: n(k, "ranks")?, hosts: Some(n(k + 2, "node")?) });
    }
    let (launcher, tool) = (&words[..at], &words[at + 1..]);
    let number = |v: Option<&str>| v.and_then(|v| v.parse::<usize>().ok()).filter(|&n| n > 0);
    let per_process = per_process(tool).map_or(1, |(t, g)| t * g);
    let is = |names: &[&str]| launcher.iter().any(|w| names.iter().any(|l| w.rsplit('/').next() == Some(l)));
    let launch = if is(&["mpirun", "mpiexec", "orterun", "mpiexec.hydra"]) {
        // `-H a:8,b:8` (or `--host`, repeated or not): each host's slots, 1 where none is given.
        let hosts: Vec<usize> = launcher
            .iter()
            .enumerate()
            .filter(|(_, w)| ["-H", "-host", "--host"].contains(w))
            .filter_map(|(k, _)| launcher.get(k + 1))
            .flat_map(|list| list.split(','))
            .filter(|h| !h.is_empty())
            .map(|h| h.rsplit_once(':').and_then(|(_, n)| n.parse().ok()).unwrap_or(1))
            .collect();
        let per_node = number(option(launcher, &["-N", "-npernode", "--npernode", "-ppn", "--ppn", "-perhost"], false));
        let hostfile = option(launcher, &["-hostfile", "--hostfile", "-machinefile", "--machinefile", "-f"], false).is_some();
        let np = number(option(launcher, &["-np", "--np", "-n", "--n"], false))
            .or_else(|| per_node.filter(|_| !hosts.is_empty()).map(|p| p * hosts.len()))
            .or_else(|| (!hosts.is_empty()).then(|| hosts.iter().sum()))?;
        // Processes fill hosts in order, slot by slot (the launchers' default mapping); without
        // hosts named they run where mpirun runs.
        let filled = || {
            let mut left = np;
            hosts
                .iter()
                .take_while(|&&slots| {
                    let some = left > 0;
                    left = left.saturating_sub(slots);
                    some
                })
                .count()
                .max(1)
        };
        let hosts = match (per_node, hosts.is_empty(), hostfile) {
            (Some(p), _, _) => Some(np.div_ceil(p)),
            (None, false, _) => Some(filled()),
            (None, true, true) => None,
            (None, true, false) => Some(1),
        };
        Launch { ranks: np.saturating_mul(per_process), hosts }
    } else if is(&["srun"]) {
        let nodes = number(option(launcher, &["-N", "--nodes"], false));
        let per_node = number(option(launcher, &["--ntasks-per-node"], false));
        let np = number(option(launcher, &["-n", "--ntasks"], false)).or_else(|| Some(nodes? * per_node?))?;
        Launch { ranks: np.saturating_mul(per_process), hosts: nodes.or_else(|| per_node.map(|p| np.div_ceil(p))) }
    } else if launcher.iter().any(|w| ["prun", "jsrun", "aprun", "torchrun"].iter().any(|l| w.ends_with(l))) {
        return None;
    } else {
        Launch { ranks: per_process, hosts: Some(1) }
    };
    (launch.ranks > 1).then_some(launch)
}

/// Every run in `text` (nccl-tests output as printed or pasted); `origin` names the file, whose
/// name may say the collective (`all_gather_perf.txt`).
pub fn parse(text: &str, origin: &str) -> Result<Vec<Run>> {
    struct Open {
        op: Option<String>,
        ranks: Vec<(usize, String, String)>,
        /// What its pasted command line says of its ranks and hosts (`launched`).
        launched: Option<Launch>,
        rows: Vec<Row>,
        line: usize,
        release: Option<(String, String)>,
        /// Its command line's NCCL_* assignments and NCCL's log of those it read (`assignments`).
        env: Vec<Setting>,
        /// The `export`s in force at its first row.
        exported: Vec<Setting>,
        /// nccl-tests' threads a process and GPUs a thread: its header's, else its command line's.
        header: Option<(usize, usize)>,
        command_gpus: Option<(usize, usize)>,
        /// nccl-tests' timed calls a row: its header's, else its command line's.
        header_iters: Option<usize>,
        command_iters: Option<usize>,
    }
    let by_name = named(&origin.to_lowercase().replace('-', "_"));
    let mut runs: Vec<Open> = Vec::new();
    let fresh = |line: usize| Open {
        op: None,
        ranks: Vec::new(),
        launched: None,
        rows: Vec::new(),
        line,
        release: None,
        env: Vec::new(),
        exported: Vec::new(),
        header: None,
        command_gpus: None,
        header_iters: None,
        command_iters: None,
    };
    // The shell's `export NCCL_X=v` lines so far: every later run's.
    let mut exported: Vec<Setting> = Vec::new();
    // Whether the last table header has both halves (out-of-place and in-place).
    let mut both_halves = false;
    // The release last printed: the header of the run whose table comes next.
    let mut release: Option<(String, String)> = None;
    // A command continued over lines (`mpirun -np 16 … \` then `./all_reduce_perf …`) is read whole.
    let mut command = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = clean(raw);
        let body = line.trim_start_matches('#').trim();
        let whole = format!("{command}{body}");
        command = whole.strip_suffix('\\').map(|c| format!("{c} ")).unwrap_or_default();
        // A new run: its op line, or its parameters' line after a table.
        let starts = body.starts_with("Collective test starting") || (body.starts_with("nThread") && runs.last().is_none_or(|r| !r.rows.is_empty()));
        if starts && runs.last().is_none_or(|r| !r.rows.is_empty() || r.op.is_some() && body.starts_with("Collective")) {
            // The command line above a run's first line (`# Collective test starting`) is that
            // run's: what it says of the ranks moves with it.
            let above = runs.last_mut().filter(|r| r.rows.is_empty());
            let (launched, env, command_gpus, command_iters) =
                above.map(|r| (r.launched, std::mem::take(&mut r.env), r.command_gpus, r.command_iters)).unwrap_or_default();
            runs.push(Open { launched, env, command_gpus, command_iters, ..fresh(i + 1) });
        }
        if let (Some(g), Some(r)) = (header_gpus(body).filter(|_| body.starts_with("nThread")), runs.last_mut()) {
            r.header = Some(g);
            r.header_iters = header_iters(body);
        }
        if let Some(r) = release_printed(body) {
            release = Some(r);
        }
        let words: Vec<&str> = whole.split_whitespace().collect();
        let binary = binary_at(&words);
        let wrapper = if binary.is_none() { wrapped(&words) } else { None };
        let command_line = binary.is_some() || wrapper.is_some();
        let set = assignments(&whole, binary, i + 1);
        if let Some(op) = named(body).filter(|_| body.starts_with("Collective test starting") || command_line).or(wrapper) {
            // A command line after a table starts the next run (several runs pasted from one
            // terminal): the collective and ranks it names are that run's.
            if runs.is_empty() || (command_line && runs.last().is_some_and(|r| !r.rows.is_empty())) {
                runs.push(fresh(i + 1));
            }
            let r = runs.last_mut().unwrap();
            if r.rows.is_empty() {
                r.op = Some(op);
                r.launched = launched(&whole).or(r.launched);
                // nccl-tests' own `Collective test starting: all_reduce_perf` names the binary too.
                if let Some(at) = binary.filter(|_| !body.starts_with("Collective test starting")) {
                    r.command_gpus = per_process(&words[at + 1..]);
                    r.command_iters = command_iters(&words[at + 1..]);
                    r.env = set.clone();
                }
            }
        }
        if binary.is_none() && !set.is_empty() {
            // An `export` line is the shell's from here on; NCCL's log of a variable, the run's it is in.
            match runs.last_mut().filter(|_| !words.contains(&"export")) {
                Some(r) => r.env.extend(set),
                None => exported.extend(set),
            }
        }
        if let Some(rest) = body.strip_prefix("Rank") {
            // "0 Group 0 Pid 123 on HOST device 0 [0x07] NVIDIA A100-SXM4-80GB"
            let t: Vec<&str> = rest.split_whitespace().collect();
            if let (Some(rank), Some(on)) = (t.first().and_then(|x| x.parse::<usize>().ok()), t.iter().position(|&x| x == "on")) {
                let host = t.get(on + 1).unwrap_or(&"").to_string();
                let gpu = t.iter().position(|x| x.starts_with('[')).map(|k| t[k + 1..].join(" ")).unwrap_or_default();
                if runs.is_empty() {
                    runs.push(fresh(i + 1));
                }
                let r = runs.last_mut().unwrap();
                if !r.rows.is_empty() {
                    runs.push(fresh(i + 1));
                }
                runs.last_mut().unwrap().ranks.push((rank, host, gpu));
            }
            continue;
        }
        if line.trim_start().starts_with('#') {
            // The table's header: whether it has both halves (`time` twice), so that a row cut
            // after its out-of-place half is not read as an excerpt of that half.
            if body.contains("busbw") {
                both_halves = body.matches("time").count() > 1;
            }
            continue;
        }
        if let Some(row) = row(&line).filter(|r| r.in_place_time_us.is_some() || !both_halves) {
            if runs.is_empty() {
                runs.push(fresh(i + 1));
            }
            let r = runs.last_mut().unwrap();
            if r.rows.is_empty() {
                r.release = release.clone();
                r.exported = exported.clone();
            }
            r.rows.push(row);
        }
    }
    let runs: Vec<Open> = runs.into_iter().filter(|r| !r.rows.is_empty()).collect();
    if runs.is_empty() {
        return Err(Error::input(
            origin,
            "",
            "has no nccl-tests table (rows of size, count, type, … time, algbw, busbw); paste the output of an <op>_perf run",
        ));
    }
    // A run whose check failed (nccl-tests' `#wrong`, a count since 2.x) timed a broken call: its
    // times (often 0) are no measurement of the machine.
    if let Some((r, w)) = runs.iter().find_map(|r| r.rows.iter().find(|w| w.wrong.is_some_and(|x| x > 0)).map(|w| (r, w))) {
        return Err(Error::input(
            origin,
            format!("line {}", r.line),
            format!(
                "the run failed (#wrong {} at {} B: nccl-tests found that many elements wrong after the call), so its times are no measurement; fix the run (NCCL_DEBUG=INFO says why) and paste one whose #wrong is 0",
                w.wrong.unwrap_or(0),
                w.size
            ),
        ));
    }
    // A run without its own Rank lines (a later run of the same job) keeps the first's.
    let first_ranks = runs.iter().find(|r| !r.ranks.is_empty()).map(|r| r.ranks.clone()).unwrap_or_default();
    let single = runs.len() == 1;
    runs.into_iter()
        .map(|r| {
            let mut ranks = if r.ranks.is_empty() { first_ranks.clone() } else { r.ranks };
            if let (true, Some(l)) = (ranks.is_empty(), r.launched) {
                // A pasted table under its command line, without the Rank lines: the line's ranks,
                // on the hosts it names, in order.
                if l.ranks > MOST_LAUNCHED_RANKS {
                    return Err(Error::input(
                        origin,
                        format!("line {}", r.line),
                        format!("starts {} ranks; a command line is read for at most {MOST_LAUNCHED_RANKS} (check -np / -g), or paste the output with its `Rank N … on HOST` lines", l.ranks),
                    ));
                }
                let Some(hosts) = l.hosts else {
                    return Err(Error::input(
                        origin,
                        format!("line {}", r.line),
                        format!("runs {} ranks on hosts its command line does not name (a hostfile, or srun without -N); paste the output from its first line, with its `Rank N … on HOST` lines", l.ranks),
                    ));
                };
                ranks = (0..l.ranks).map(|k| (k, format!("host{}", k * hosts / l.ranks), String::new())).collect();
            }
            let n = ranks.iter().map(|x| x.0 + 1).max().unwrap_or(0);
            // The same rank printed twice: the tables of several runs printed into one (each
            // process its own communicator, as an nccl-tests built without MPI under mpirun runs).
            let times = ranks.iter().filter(|x| x.0 == 0).count();
            if times > 1 {
                let mut hosts: Vec<&str> = ranks.iter().filter(|x| x.0 == 0).map(|x| x.1.as_str()).collect();
                hosts.dedup();
                return Err(Error::input(
                    origin,
                    format!("line {}", r.line),
                    format!(
                        "prints ranks 0 to {} {times} times (rank 0 on {}): {times} runs of {n} ranks each printed interleaved (each process a communicator of its own, e.g. nccl-tests built without MPI started by mpirun on each host), not one run of {} ranks; paste one run's output (its own `Rank` lines and rows), or rebuild nccl-tests with MPI=1 for one run across them",
                        n - 1,
                        hosts.join(", "),
                        ranks.len()
                    ),
                ));
            }
            if n == 0 {
                return Err(Error::input(
                    origin,
                    format!("line {}", r.line),
                    "has no `Rank N … on HOST device …` lines, so the number of ranks is unknown; paste the output from its first line (or its command line above the table: `<op>_perf … -g N`, `mpirun -np N …`, `srun -N NODES -n N …`)",
                ));
            }
            let mut hosts: Vec<&str> = ranks.iter().map(|x| x.1.as_str()).collect();
            hosts.sort_unstable();
            let most_on_a_host = hosts.chunk_by(|a, b| a == b).map(|c| c.len()).max().unwrap_or(0);
            hosts.dedup();
            let gpu = ranks.first().map(|x| x.2.clone()).filter(|g| !g.is_empty());
            let (op, from) = match r.op.or(if single { by_name.clone() } else { None }) {
                Some(op) => (op, "named"),
                None => match from_ratio(&r.rows, n) {
                    Some(Ok(op)) => (op, "from busbw/algbw"),
                    // Several runs in a file named after one binary: the name settles which of
                    // the collectives sharing the factor an unnamed run is, where it is one of them.
                    Some(Err(which)) if by_name.as_deref().is_some_and(|b| which.contains(b)) => (by_name.clone().expect("checked"), "named"),
                    Some(Err(which)) => {
                        let rename = if by_name.is_none() { ", or name the file after the binary (alltoall_perf.txt)" } else { "" };
                        return Err(Error::input(
                            origin,
                            format!("line {}", r.line),
                            format!("does not say its collective, and its busbw/algbw ((n-1)/n on {n} ranks) is that of {which}; say which: add the line `# Collective test starting: alltoall_perf` (or all_gather_perf) above the table{rename}"),
                        ))
                    }
                    None => {
                        return Err(Error::input(
                            origin,
                            format!("line {}", r.line),
                            "does not say its collective and its busbw/algbw matches none of nccl-tests' factors; name the file after the binary (all_reduce_perf.txt)",
                        ))
                    }
                },
            };
            // One thread a process driving N GPUs (`-g N`): the header's word, else the command line's.
            let ngpus = r.header.or(r.command_gpus).filter(|&(t, g)| t == 1 && g > 1).map(|(_, g)| g);
            let env = r.exported.into_iter().chain(r.env).collect();
            let iters = r.header_iters.or(r.command_iters);
            Ok(Run { op, op_from: from.into(), ranks: n, nodes: hosts.len(), most_on_a_host, gpu, rows: r.rows, line: r.line, release: r.release, env, ngpus, iters })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rev21 finding 9: the count column as nccl-tests prints it on 2 ranks, 1 MiB of floats:
    /// one rank's share for alltoall and all_gather (bench/validation/data/nccl/autodl-2080ti-x2-
    /// alltoall.txt and -all_gather.txt: 131072), the whole buffer's for all_reduce (262144).
    #[test]
    fn the_count_column_is_the_count_nccl_is_given() {
        for op in ["alltoall", "all_gather", "reduce_scatter"] {
            assert_eq!(count_of(op, 1 << 20, 4, 2), (131072, 1 << 20), "{op}");
            // `(count/nranks) & -(16/eltSize)`: 250 floats over 3 ranks is 83 each, 80 aligned to 16 B;
            // 6 ranks' 1 MiB of floats 43690 each, 43688; doubles to 2 elements, int8 to 16.
            assert_eq!(count_of(op, 1000, 4, 3), (80, 960), "{op}");
            assert_eq!(count_of(op, 1 << 20, 4, 6), (43688, 43688 * 6 * 4), "{op}");
            assert_eq!(count_of(op, 1000, 8, 3), (40, 960), "{op}");
            assert_eq!(count_of(op, 1000, 1, 3), (320, 960), "{op}");
            assert_eq!(count_of(op, 1000, 2, 3), (160, 960), "{op}");
            // Under 16 bytes a rank: nothing (8 ranks, 64 B of floats: 2 each).
            assert_eq!(count_of(op, 64, 4, 8), (0, 0), "{op}");
            assert_eq!(count_of(op, 128, 4, 8), (4, 128), "{op}");
        }
        for op in ["all_reduce", "broadcast", "reduce", "sendrecv"] {
            assert_eq!(count_of(op, 1 << 20, 4, 2), (262144, 1 << 20), "{op}");
        }
    }

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    /// contend's own nccl-tests table reads back: its first line states the ranks and nodes.
    #[test]
    fn contends_own_table_states_its_ranks() {
        let t = "# contend prediction of nccl-tests all_reduce_perf on dgx-a100 (8 ranks, 1 node(s), model maxmin, NCCL 2.30.7's choice)\n#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n     1048576        262144     float     sum      -1    37.30   28.11   49.20      0    37.30   28.11   49.20      0\n";
        let runs = parse(t, "own.txt").unwrap();
        assert_eq!((runs[0].op.as_str(), runs[0].ranks, runs[0].nodes), ("all_reduce", 8, 1));
        let two = t.replace("(8 ranks, 1 node(s)", "(16 ranks, 2 node(s)");
        let runs = parse(&two, "own.txt").unwrap();
        assert_eq!((runs[0].ranks, runs[0].nodes), (16, 2));
    }

    /// A run whose check failed (tester's paste: busbw 0, `#wrong` 1024 at every size) is one
    /// line saying so, where it was read as a table that "does not say its collective".
    #[test]
    fn a_failed_run_is_refused_as_such() {
        let t = "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n#  Rank  0 Group  0 Pid 1 on h device  0 [0x00] NVIDIA H100 80GB HBM3\n#  Rank  1 Group  0 Pid 1 on h device  1 [0x00] NVIDIA H100 80GB HBM3\n       32768          8192     float     sum      -1    0.00    0.00    0.00   1024    0.00    0.00    0.00   1024\n";
        let e = parse(t, "zero.txt").unwrap_err().to_string();
        assert!(e.starts_with("zero.txt: line") && e.contains("the run failed (#wrong 1024") && !e.contains('\n'), "{e}");
        // The older `error` column is a float error, not a count of wrong elements: read as before.
        let old = t.replace("   1024", "  2e-07");
        assert!(parse(&old, "zero.txt").is_err_and(|e| !e.to_string().contains("the run failed")));
    }

    /// all_gather and alltoall both print busbw = algbw (n - 1)/n and no reduction (nccl-tests
    /// src/all_gather.cu and src/alltoall.cu `GetBw`): an unnamed table of that ratio is refused
    /// in one line asking which; named by a line or by the file, it reads.
    #[test]
    fn an_unnamed_table_of_a_shared_factor_is_refused() {
        let mut t = String::from("# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n");
        for k in 0..8 {
            t.push_str(&format!("#  Rank  {k} Group  0 Pid 1 on h device  {k} [0x00] NVIDIA H100 80GB HBM3\n"));
        }
        // 1 MiB in 100 us: algbw 10.49 GB/s, busbw 7/8 of it.
        let row = "     1048576        262144     float    none      -1   100.00   10.49    9.18      0   100.00   10.49    9.18    N/A\n";
        let e = parse(&format!("{t}{row}"), "a2a.txt").unwrap_err().to_string();
        assert!(e.starts_with("a2a.txt: line") && e.contains("all_gather or alltoall") && e.contains("alltoall_perf") && !e.contains('\n'), "{e}");
        let runs = parse(&format!("# Collective test starting: alltoall_perf\n{t}{row}"), "a2a.txt").unwrap();
        assert_eq!(runs[0].op, "alltoall");
        assert_eq!(parse(&format!("{t}{row}"), "alltoall_perf.txt").unwrap()[0].op, "alltoall");
        // Two runs in a file named after its binary (reviewer's case): the name settles both, and
        // a file already so named is not told to take the name it has.
        let two = format!("{t}{row}{t}{row}");
        assert!(parse(&two, "all_gather_perf.txt").unwrap().iter().all(|r| r.op == "all_gather"));
        let e = parse(&two, "sendrecv_perf.txt").unwrap_err().to_string();
        assert!(e.contains("all_gather or alltoall") && !e.contains("name the file"), "{e}");
        // Without the redop column reduce_scatter shares the ratio too.
        let old = "     1048576        262144     float   100.00   10.49    9.18  0e+00   100.00   10.49    9.18  0e+00\n";
        let e = parse(&format!("{t}{old}"), "x.txt").unwrap_err().to_string();
        assert!(e.contains("reduce_scatter"), "{e}");
    }

    #[test]
    fn sizes_are_read_as_nccl_tests_reads_them() {
        // parsesize in nccl-tests' src/common.cu: a double, then K/M/G's powers of 1024, truncated.
        assert_eq!(parse_size("8", "-b").unwrap(), 8);
        assert_eq!(parse_size("64K", "-b").unwrap(), 64 << 10);
        assert_eq!(parse_size("8m", "-b").unwrap(), 8 << 20);
        assert_eq!(parse_size("8G", "-e").unwrap(), 8 << 30);
        assert_eq!(parse_size("1.5M", "-b").unwrap(), 3 << 19);
        assert_eq!(parse_size("0.3K", "-b").unwrap(), 307); // 307.2 truncated
        assert_eq!(parse_size("8 M", "-b").unwrap(), 8 << 20);
        assert_eq!(parse_size("2MiB", "-b").unwrap(), 2 << 20);
        assert_eq!(parse_size("8MB", "-b").unwrap(), 8 << 20); // nccl-tests reads the M only
        assert_eq!(parse_size("8B", "-b").unwrap(), 8); // refused by nccl-tests, read by contend
        assert_eq!(parse_size("1e3", "-b").unwrap(), 1000);
        assert_eq!(parse_size("2.5e1K", "-b").unwrap(), 25 << 10);
        let e = parse_size("0.001", "-b").unwrap_err().to_string();
        assert!(e.contains("0.001") && e.contains("less than one byte"), "{e}");
        let e = parse_size("-5", "-b").unwrap_err().to_string();
        assert!(e.contains("-5") && e.contains("negative"), "{e}");
        let e = parse_size("x", "-e").unwrap_err().to_string();
        assert!(e.contains("-e") && e.contains("1.5M") && !e.contains('\n'), "{e}");
        assert!(parse_size("99999999999G", "-e").unwrap_err().to_string().contains("too large"));
    }

    #[test]
    fn factors_are_nccl_tests() {
        assert_eq!(busbw_factor("all_reduce", 8), 1.75);
        assert_eq!(busbw_factor("all_gather", 8), 0.875);
        assert_eq!(busbw_factor("broadcast", 8), 1.0);
    }

    #[test]
    fn reads_the_current_format_with_root_and_wrong() {
        let runs = parse(&fixture("nccl-tests-2xgb10-spark.txt"), "out.txt").unwrap();
        assert_eq!(runs.len(), 1);
        let r = &runs[0];
        assert_eq!((r.op.as_str(), r.op_from.as_str(), r.ranks, r.nodes), ("all_reduce", "named", 2, 2));
        assert_eq!(r.gpu.as_deref(), Some("NVIDIA GB10"));
        assert_eq!(r.rows.len(), 4);
        assert_eq!((r.rows[0].size, r.rows[0].count, r.rows[0].root), (8192, 2048, Some(-1)));
        assert_eq!((r.rows[3].time_us, r.rows[3].in_place_busbw), (67.93, Some(1.01)));
        // A paste cut inside its only row has no table to read: one line says so.
        let e = parse(&fixture("nccl-tests-8x4090-tree.txt"), "tree.txt").unwrap_err().to_string();
        assert!(e.contains("tree.txt") && e.contains("no nccl-tests table") && !e.contains('\n'), "{e}");
    }

    /// Round 22's tester: an excerpt of the out-of-place half (its header and rows of 9 columns,
    /// as Kaggle's 2 x T4 post gives them) is read; the same row under a header of both halves is
    /// a row cut short, and is not.
    #[test]
    fn reads_an_excerpt_of_the_out_of_place_half() {
        let ranks = "# Collective test starting: all_reduce_perf\n#  Rank  0 Group  0 Pid  1 on a device  0 [0x07] Tesla T4\n#  Rank  1 Group  0 Pid  1 on a device  1 [0x08] Tesla T4\n";
        let half = "#       size         count      type   redop    root     time   algbw   busbw  #wrong\n";
        let rows = "     1048576        262144     float     sum      -1   300.81    3.49    3.49       0\n   134217728      33554432     float     sum      -1  33403.7    4.02    4.02       0\n";
        let r = &parse(&format!("{ranks}{half}{rows}"), "t4.txt").unwrap()[0];
        assert_eq!(r.rows.len(), 2);
        assert_eq!((r.rows[1].time_us, r.rows[1].busbw, r.rows[1].in_place_time_us, r.rows[1].wrong), (33403.7, 4.02, None, Some(0)));
        let both = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
        let e = parse(&format!("{ranks}{both}{rows}"), "t4.txt").unwrap_err().to_string();
        assert!(e.contains("no nccl-tests table"), "{e}");
    }

    #[test]
    fn reads_mpi_prefixes_and_tells_the_op_from_the_ratio() {
        let text = "#  Rank  0 Group  0 Pid  1 on a device  0 [0x07] GPU\n#  Rank  1 Group  0 Pid  2 on a device  1 [0x08] GPU\n#  Rank  2 Group  0 Pid  3 on b device  0 [0x07] GPU\n#  Rank  3 Group  0 Pid  4 on b device  1 [0x08] GPU\n[0]      1048576        262144     float     sum      -1[0]    100.0   10.49   15.73      0[0]    100.0   10.49   15.73      0\n";
        let r = &parse(text, "x.log").unwrap()[0];
        assert_eq!((r.op.as_str(), r.op_from.as_str(), r.ranks, r.nodes), ("all_reduce", "from busbw/algbw", 4, 2));
        assert_eq!(r.rows[0].busbw, 15.73);
    }

    /// A blog's paste: the command line, then the table, no Rank lines (eugenesiow's DGX A100
    /// post, bench/validation/data/nccl/dgx-a100-4gpu-eugenesiow.txt): `-g 4` is four ranks on one
    /// host. Under mpirun the line does not say the ranks and hosts, so one line asks for them.
    #[test]
    fn a_command_line_without_mpi_gives_the_ranks() {
        let table = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n  1073741824     268435456     float     sum      -1   8035.9  133.62  200.43      0   8034.4  133.64  200.46      0\n";
        for cmd in ["./build/all_reduce_perf -b 1G -e 10G -f 2 -g 4", "all_reduce_perf -g4 -b 1G", "all_reduce_perf --ngpus=4", "all_reduce_perf -t 2 -g 2"] {
            let r = &parse(&format!("```\n{cmd}\n```\n{table}"), "blog.md").unwrap()[0];
            assert_eq!((r.op.as_str(), r.ranks, r.nodes), ("all_reduce", 4, 1), "{cmd}");
        }
        for cmd in ["./all_reduce_perf -b 1G -g 1", "mpirun -np 1 ./all_reduce_perf -g 1", "prun ./all_reduce_perf -g 1"] {
            let e = parse(&format!("{cmd}\n{table}"), "blog.md").unwrap_err().to_string();
            assert!(e.contains("number of ranks is unknown") && e.contains("-g N") && !e.contains('\n'), "{cmd}: {e}");
        }
        // As pasted in a GitHub issue (NVIDIA/nccl #1161): the command line as inline code.
        let r = &parse(&format!("`./nccl-tests/build/all_reduce_perf -b 1G -e 8G -f 2 -g 2`\n{table}"), "issue.md").unwrap()[0];
        assert_eq!((r.ranks, r.nodes), (2, 1));
        let blog = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/validation/data/nccl/dgx-a100-4gpu-eugenesiow.txt")).unwrap();
        assert_eq!(parse(&blog, "b.md").unwrap()[0].ranks, 4);
        // A slip in -np (or -g) is one line, not a table of that many ranks (it aborted out of memory).
        for cmd in ["mpirun -np 99999999999999 ./all_reduce_perf -g 1", "mpirun -np 4 ./all_reduce_perf -g 18446744073709551615"] {
            let e = parse(&format!("{cmd}\n{table}"), "huge.md").unwrap_err().to_string();
            assert!(e.contains("huge.md: line") && e.contains("at most 1048576") && !e.contains('\n'), "{cmd}: {e}");
        }
    }

    /// Launcher lines as pasted in public issues, decoration kept (shell prompts, environment
    /// assignments, inline code): each issue's own Rank lines say the ranks and hosts, which the
    /// line alone must give once they are cut (as a user pasting the command and the table does).
    #[test]
    fn a_launcher_line_gives_the_ranks_and_hosts() {
        let table = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n  1073741824     268435456     float     sum      -1   8035.9  133.62  200.43      0   8034.4  133.64  200.46      0\n";
        let rank = |k: usize, host: &str| format!("#  Rank {k:2} Group  0 Pid {} on {host:>10} device  {} [0x07] NVIDIA A100-SXM4-80GB\n", 100 + k, k % 8);
        let cases: &[(&str, &[&str], usize)] = &[
            // NVIDIA/nccl#583 (8 ranks on AI-A100-Beethoven01): no -g, one GPU per process.
            ("mpirun -np 8 all_reduce_perf -b 32 -f 2 -e 8G", &["AI-A100-Beethoven01"], 8),
            // NVIDIA/nccl-tests#100, with its shell prompt: `-H localhost:8`.
            ("root@node2:/nccl-tests# mpirun -np 8 -H localhost:8 -bind-to none -map-by slot -x LD_LIBRARY_PATH -x PATH -mca orte_base_help_aggregate 0 -mca btl_tcp_if_include enp103s0f0 --allow-run-as-root ./build/alltoall_perf -b 128M -e 16G -f 2", &["node2"], 8),
            // NVIDIA/nccl-tests#309: 32 ranks on four hosts of 8 slots, the MPI build's binary.
            ("/mnt/nfs/openmpi-4.1.8/ompi_install/bin/mpirun --np 32 -H spt01:8,spt02:8,pt01:8,pt02:8   -x NCCL_TOPO_FILE=/mnt/nfs/vm_topo_mod.xml   -x NCCL_DEBUG=VERSION   --mca pml ucx   /home/vmware/nccl-tests/build/all_reduce_perf_mpi -b 8 -e 16g -f 2 -g 1", &["spt01", "spt02", "pt01", "pt02"], 8),
            // nebius/soperator#428, as inline code after an environment assignment: 2 nodes x 8.
            ("`OMPI_MCA_btl_tcp_if_include=eth0 srun --exclusive --mem=0 --nodes=2 --ntasks-per-node=8 --gpus-per-node=8 --mpi=pmix all_reduce_perf_mpi -b 512M -e 8G -f 2 -g 1`", &["worker-1", "worker-0"], 8),
            // NVIDIA/nccl-tests#107: two hosts of one slot each.
            ("ih@ip-172-31-22-230:~/nccl-tests/src$ mpirun -host localhost,172.31.20.228 -np 2 -verbose /home/ih/nccl-tests/build/all_reduce_perf -b 1250M -e 1250M -g 1", &["ip-172-31-22-230", "ip-172-31-20-228"], 1),
        ];
        for (cmd, hosts, per_host) in cases {
            let ranks: String = hosts.iter().enumerate().flat_map(|(h, host)| (0..*per_host).map(move |k| rank(h * per_host + k, host))).collect();
            let whole = &parse(
                &format!("{cmd}\n# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20\n#\n# Using devices\n{ranks}#\n{table}"),
                "issue.md",
            )
            .unwrap()[0];
            let cut = &parse(&format!("{cmd}\n{table}"), "issue.md").unwrap()[0];
            assert_eq!((whole.ranks, whole.nodes), (hosts.len() * per_host, hosts.len()), "{cmd}");
            assert_eq!((cut.ranks, cut.nodes), (whole.ranks, whole.nodes), "{cmd}");
        }
        // The tester's line (round 17): one process per GPU under mpirun; -g and -t multiply.
        for (cmd, ranks, nodes) in [
            ("mpirun -np 8 ./build/all_reduce_perf -b 8 -e 1G -f 2 -g 1", 8, 1),
            ("mpirun -n 4 ./all_reduce_perf -g 2", 8, 1),
            ("mpiexec -ppn 4 -H a,b ./all_reduce_perf -t 2", 16, 2),
            ("mpirun -N 8 -H a,b ./all_reduce_perf", 16, 2),
            ("mpirun -H a:4,b:4 ./all_reduce_perf -n 50 -N 3", 8, 2),
            ("mpirun -np 16 -H a,b \\\n  ./build/all_reduce_perf -b 1G -g 2", 32, 2),
            ("srun -N 2 -n 16 ./all_reduce_perf_mpi -g 1", 16, 2),
            ("srun --ntasks=16 --ntasks-per-node=8 all_reduce_perf", 16, 2),
            ("mpirun -np 5 -H a:1,b:1,c:1,d:2 ./all_reduce_perf", 5, 4),
        ] {
            // nccl-tests 2.x prints `# Collective test starting` first: the line above is still the run's.
            for header in ["", "# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703\n# Collective test starting: all_reduce_perf\n"] {
                let r = &parse(&format!("{cmd}\n{header}{table}"), "x.txt").unwrap()[0];
                assert_eq!((r.ranks, r.nodes), (ranks, nodes), "{cmd}");
            }
        }
        // Hosts the line does not name: one line asking for the Rank lines.
        for cmd in ["mpirun -np 16 --hostfile hosts ./all_reduce_perf -g 1", "srun -n 16 ./all_reduce_perf"] {
            let e = parse(&format!("{cmd}\n{table}"), "x.txt").unwrap_err().to_string();
            assert!(e.contains("16 ranks") && e.contains("Rank N") && !e.contains('\n'), "{cmd}: {e}");
        }
    }

    /// The release a run ran under, as nccl-tests' header and NCCL's own line print it.
    #[test]
    fn reads_the_release_the_output_prints() {
        let table = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n     1048576        262144     float     sum      -1   100.00   10.49   18.35      0   100.00   10.49   18.35      0\n";
        let cmd = "./build/all_reduce_perf -b 1M -e 1M -g 8\n";
        let header = "# nccl-tests version 2.19.4 nccl-headers=21903 nccl-library=21903\n";
        let r = &parse(&format!("{cmd}{header}{table}"), "x.txt").unwrap()[0];
        assert_eq!(r.release, Some(("2.19.3".to_string(), "nccl-library=21903".to_string())));
        let info = "dkh:58:58 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n";
        assert_eq!(parse(&format!("{cmd}{info}{table}"), "x.txt").unwrap()[0].release.as_ref().unwrap().0, "2.18.5");
        assert_eq!(parse(&format!("{cmd}{table}"), "x.txt").unwrap()[0].release, None);
        // contend's own table says the release whose choice it printed.
        let own = "# contend prediction of nccl-tests all_reduce_perf on dgx-a100 (8 ranks, 1 node(s), model maxmin, NCCL 2.21.5's choice)\n";
        assert_eq!(parse(&format!("{own}{table}"), "x.txt").unwrap()[0].release.as_ref().unwrap().0, "2.21.5");
    }

    /// Tester's R1 and R2: AWS's published p5 example pastes the table alone (its column header
    /// and rows), under Slurm's `srun -l` labels; pdsh labels each line with its host. Both read
    /// as nccl-tests output, to the same rows as the clean table.
    #[test]
    fn a_bare_table_and_launcher_labels_read_as_nccl_tests() {
        let header = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
        let row = "     1048576        262144     float     sum      -1   100.00   10.49   18.35      0   100.00   10.49   18.35      0\n";
        let bare = format!("./build/all_reduce_perf -b 1M -e 1M -g 8\n{header}{row}");
        assert!(detect(&format!("{header}{row}")));
        let clean = parse(&bare, "x.txt").unwrap();
        for label in ["0: ", "dkh: ", "ip-10-1-2-3.ec2.internal: "] {
            let labelled: String = bare.lines().map(|l| format!("{label}{l}\n")).collect();
            assert!(detect(&labelled), "{label}");
            assert_eq!(parse(&labelled, "x.txt").unwrap()[0].rows, clean[0].rows, "{label}");
        }
        // Not nccl-tests output: p2pBandwidthLatencyTest's matrices say none of its columns.
        assert!(!detect("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\D     0      1\n     0 1512.99  10.41\n"));
    }

    /// Tester's R16: runs pasted from one terminal, each under its own command line (the
    /// 2080 Ti box's all_reduce, all_gather and alltoall): each is its line's collective.
    #[test]
    fn each_pasted_command_line_names_its_run() {
        let run = |op: &str, ratio: f64| {
            let rank = |k: usize| format!("#  Rank  {k} Group  0 Pid 1 on box device  {k} [0x00] NVIDIA GeForce RTX 2080 Ti\n");
            format!(
                "root@box:~/nccl-tests# ./build/{op}_perf -b 1M -e 1M -f 2 -g2\n# nThread 1 nGpus 2 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n{}{}#\n     1048576        262144     float    none      -1   100.00   10.49   {:.2}      0   100.00   10.49   {:.2}    N/A\n# Avg bus bandwidth    : 5.2\n#\n",
                rank(0),
                rank(1),
                10.49 * ratio,
                10.49 * ratio
            )
        };
        let text = format!("{}{}{}", run("all_reduce", 1.0), run("all_gather", 0.5), run("alltoall", 0.5));
        let runs = parse(&text, "session.txt").unwrap();
        let ops: Vec<(&str, &str)> = runs.iter().map(|r| (r.op.as_str(), r.op_from.as_str())).collect();
        assert_eq!(ops, [("all_reduce", "named"), ("all_gather", "named"), ("alltoall", "named")]);
    }

    fn heldout(name: &str) -> String {
        std::fs::read_to_string(format!("{}/../../bench/validation/data/heldout/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    /// Round 23's tester (W2): the NCCL_* variables a paste shows set for its run, in every form a
    /// command line or a log shows them, and nccl-tests' `-g` from its header.
    #[test]
    fn reads_the_variables_and_gpus_a_paste_shows() {
        let r = &parse(&heldout("rtx5090x8-turin-p2p-all_reduce.txt"), "x.txt").unwrap()[0];
        assert_eq!(r.env, vec![Setting { name: "NCCL_P2P_LEVEL".into(), value: "SYS".into(), line: 1 }]);
        assert_eq!((r.ngpus, r.ranks), (Some(8), 8));
        let table = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n     1048576        262144     float     sum      -1   100.00   10.49   18.35      0   100.00   10.49   18.35      0\n";
        let read = |head: &str| {
            let r = parse(&format!("{head}{table}"), "x.txt").unwrap().remove(0);
            (r.env.into_iter().map(|s| format!("{}={}@{}", s.name, s.value, s.line)).collect::<Vec<_>>(), r.ngpus)
        };
        // Open MPI's -x (a bare -x passes the launching shell's value, which the paste does not show);
        // the words after the binary are nccl-tests' own.
        assert_eq!(read("mpirun -np 8 -x NCCL_ALGO=Ring -x NCCL_DEBUG ./all_reduce_perf -b 1M -e 1M -g 1 NCCL_X=1\n"), (vec!["NCCL_ALGO=Ring@1".into()], None));
        assert_eq!(read("env NCCL_PROTO='Simple' ./build/all_reduce_perf -g 8\n"), (vec!["NCCL_PROTO=Simple@1".into()], Some(8)));
        assert_eq!(read("mpiexec -n 8 -genv NCCL_P2P_DISABLE 1 ./all_reduce_perf\n").0, ["NCCL_P2P_DISABLE=1@1"]);
        assert_eq!(read("srun -N 1 -n 8 --export=ALL,NCCL_BUFFSIZE=8388608 ./all_reduce_perf\n").0, ["NCCL_BUFFSIZE=8388608@1"]);
        // The shell's exports, then the command line's own (later: it wins where both set a name).
        assert_eq!(
            read("$ export NCCL_ALGO=Tree NCCL_PROTO=LL\n$ NCCL_ALGO=Ring ./all_reduce_perf -g 4\n"),
            (vec!["NCCL_ALGO=Tree@1".into(), "NCCL_PROTO=LL@1".into(), "NCCL_ALGO=Ring@2".into()], Some(4))
        );
        // NCCL's own log of a variable it read (NCCL_DEBUG=INFO), and the header's -g over the line's.
        let logged = "./all_reduce_perf -g 2\n# nThread 1 nGpus 4 minBytes 8 maxBytes 8\nbox:1:1 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to NVL\n";
        assert_eq!(read(logged), (vec!["NCCL_P2P_LEVEL=NVL@3".into()], Some(4)));
        // Threads of one GPU each are ranks launching their own: no -g.
        assert_eq!(read("./all_reduce_perf -t 8 -g 1\n").1, None);
    }

    /// rev23 finding 1: nccl-tests' `-n` (timed calls a row) from its header's `iters:` (not the
    /// `warmup iters:` or `agg iters:` beside it), else its command line's `-n`/`--iters`.
    #[test]
    fn reads_the_iterations_a_paste_shows() {
        assert_eq!(parse(&heldout("h800x8-nf5688m7-broadcast.txt"), "x.txt").unwrap()[0].iters, Some(100));
        assert_eq!(parse(&heldout("rtx5090x8-turin-p2p-all_reduce.txt"), "x.txt").unwrap()[0].iters, Some(20));
        let table = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n     1048576        262144     float     sum      -1   100.00   10.49   18.35      0   100.00   10.49   18.35      0\n";
        let iters = |head: &str| parse(&format!("{head}{table}"), "x.txt").unwrap().remove(0).iters;
        assert_eq!(iters("./all_reduce_perf -b 1M -n 50 -g 8\n"), Some(50));
        assert_eq!(iters("mpirun -n 8 ./all_reduce_perf --iters=7\n"), Some(7));
        assert_eq!(iters("mpirun -n 8 ./all_reduce_perf -g 1\n"), None);
        assert_eq!(iters("./all_reduce_perf -n 50 -g 8\n# nThread 1 nGpus 8 warmup iters: 5 iters: 2 agg iters: 1\n"), Some(2));
    }

    /// Round 23's tester: two single-host runs of 8 ranks printed into one paste (NVIDIA/nccl-tests
    /// 306, H20) are refused naming that cause and the fix, not as "8 ranks on 2 hosts".
    #[test]
    fn runs_printed_interleaved_are_refused_as_such() {
        let e = parse(&heldout("h20x8-nccl-tests-306.txt"), "h20.txt").unwrap_err().to_string();
        assert!(e.contains("h20.txt") && e.contains("2 runs of 8 ranks each printed interleaved") && e.contains("paste one run's output"), "{e}");
        assert!(e.contains("node3, node2") && !e.contains('\n'), "{e}");
    }

    /// Round 23's tester: Google's gIB wrapper names the collective with -t (`run_nccl_tests.sh -t
    /// all_gather`), and its -g (GPUs a node for its mpirun) is no nccl-tests -g: the header's
    /// `nGpus 1` decides.
    #[test]
    fn a_wrapper_names_its_collective_with_t() {
        let r = &parse(&heldout("b200x2-gke-a4-dranet-all_gather.txt"), "paste.txt").unwrap()[0];
        assert_eq!((r.op.as_str(), r.op_from.as_str(), r.ranks, r.ngpus), ("all_gather", "named", 2, None));
        // nccl-tests' own -t is a thread count, and a word naming no wrapper names nothing.
        assert_eq!(wrapped(&["./run.sh", "-t", "all_gather"]), None);
        assert_eq!(wrapped(&["run_nccl_tests.sh", "-t", "8"]), None);
        assert_eq!(wrapped(&["/usr/local/gib/scripts/run_nccl_tests.sh", "-t", "alltoall_perf"]), Some("alltoall".into()));
    }

    #[test]
    fn reads_the_old_format_without_root_and_several_runs() {
        let text = "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n#   Rank  0 Pid 1 on h device  0 [0x00] Tesla V100\n#   Rank  1 Pid 1 on h device  1 [0x00] Tesla V100\n           8             2   float     sum    10.0    0.80    0.80  0e+00    10.0    0.80    0.80  0e+00\n# Collective test starting: all_gather_perf\n           16             4   float     none    10.0    0.00    0.00  0e+00    10.0    0.00    0.00  0e+00\n";
        let runs = parse(text, "x.log").unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!((runs[0].rows[0].root, runs[0].rows[0].redop.as_deref()), (None, Some("sum")));
        assert_eq!((runs[0].op.as_str(), runs[1].op.as_str(), runs[1].ranks), ("all_reduce", "all_gather", 2));
        let e = parse("nothing here\n", "x.log").unwrap_err().to_string();
        assert!(e.contains("x.log") && !e.contains('\n'), "{e}");
    }
}
