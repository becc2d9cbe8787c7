//! NCCL tuner plugins as input: the CSV file NCCL's example tuner plugin reads
//! (`NCCL_TUNER_CONFIG_FILE`; NVIDIA/nccl plugins/tuner/example, README.md and plugin.c at
//! 2.30.7), one line a rule:
//!
//! `collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps[,regBuff]]`
//!
//! How NCCL applies it (enqueue.cc `ncclGetAlgoInfo`, restated): before its own pick, NCCL hands
//! the plugin its cost table with the choices it cannot or may not run (NCCL_ALGO/NCCL_PROTO, the
//! machine) marked ignored; the plugin takes the first line whose collective, size range
//! (`nBytes`: the whole buffer for all-gather and reduce-scatter, both ends included), node and
//! rank counts, pipelined operations and buffer registration match and whose choice is not
//! ignored, and sets that choice's cost to 0, so NCCL runs it; its channel count (not -1) then
//! replaces the channels NCCL would have run. Where no line applies, NCCL's own model picks.
//! nccl-tests issues one operation a call (numPipeOps 1) on buffers it does not register
//! (regBuff 0), and so do rank programs here.

use super::{Algo, Coll, Proto};
use crate::error::{Error, Result};

/// One line of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// 1-based line number, for messages.
    pub line: usize,
    pub coll: Coll,
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub algo: TunerAlgo,
    pub proto: Proto,
    /// None: NCCL's own channel count (-1).
    pub channels: Option<usize>,
    pub nodes: Option<usize>,
    pub ranks: Option<usize>,
    pub pipe_ops: Option<usize>,
    pub reg_buff: Option<bool>,
}

/// The algorithms the format names: those contend lowers, and those it does not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TunerAlgo {
    Lowered(Algo),
    /// CollNet needs in-network reduction (SHARP), which no machine contend models offers: NCCL
    /// marks it ignored there, and so does contend.
    CollNet,
}

/// A tuner file, parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct Tuner {
    pub path: String,
    pub rules: Vec<Rule>,
}

/// The rule NCCL would apply, with the choice it makes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Applied<'a> {
    pub rule: &'a Rule,
    pub algo: Algo,
    pub proto: Proto,
}

const FIELDS: [&str; 10] = ["collective_type", "min_bytes", "max_bytes", "algorithm", "protocol", "channels", "nNodes", "nRanks", "numPipeOps", "regBuff"];

impl Tuner {
    /// Read and check the file at `path`.
    pub fn load(path: &str) -> Result<Tuner> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::input(path, "", format!("cannot be read as an NCCL tuner file ({e}); give the CSV file NCCL_TUNER_CONFIG_FILE names")))?;
        Tuner::parse(&text, path)
    }

    /// Parse the CSV text; a mistake is one line naming the file, the line and the field.
    pub fn parse(text: &str, path: &str) -> Result<Tuner> {
        // A spreadsheet saving CSV as UTF-8 puts a byte-order mark before the first field.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut rules = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            rules.push(parse_rule(line, i + 1, path)?);
        }
        Ok(Tuner { path: path.to_string(), rules })
    }

    /// The first rule that applies to a call of `coll` on `bytes` over `nodes` nodes and `ranks`
    /// ranks (one operation, buffers not registered) whose choice `enabled` says NCCL may run (a
    /// rule naming PAT where PAT is not in NCCL's table, `tuning::pat_on`, is passed over, as NCCL
    /// passes over it).
    pub fn apply(&self, coll: Coll, bytes: u64, nodes: usize, ranks: usize, enabled: &dyn Fn(Algo, Proto) -> bool) -> Result<Option<Applied<'_>>> {
        for r in &self.rules {
            let matches = r.coll == coll
                && (r.min_bytes..=r.max_bytes).contains(&bytes)
                && r.nodes.is_none_or(|n| n == nodes)
                && r.ranks.is_none_or(|n| n == ranks)
                && r.pipe_ops.is_none_or(|n| n == 1)
                && r.reg_buff.is_none_or(|b| !b);
            if !matches {
                continue;
            }
            match r.algo {
                TunerAlgo::Lowered(a) if enabled(a, r.proto) => return Ok(Some(Applied { rule: r, algo: a, proto: r.proto })),
                _ => {}
            }
        }
        Ok(None)
    }
}

fn parse_rule(line: &str, n: usize, path: &str) -> Result<Rule> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    if !(8..=10).contains(&f.len()) {
        return Err(Error::input(path, format!("line {n}"), format!("has {} fields; NCCL's tuner CSV has 8 to 10: {}", f.len(), FIELDS.join(","))));
    }
    let bad = |k: usize, why: &str| Error::input(path, format!("line {n} {}", FIELDS[k]), format!("is {:?}: {why}", f[k]));
    let coll = match f[0].to_lowercase().as_str() {
        "allreduce" => Coll::AllReduce,
        "allgather" => Coll::AllGather,
        "reducescatter" => Coll::ReduceScatter,
        "broadcast" => Coll::Broadcast,
        "reduce" => Coll::Reduce,
        _ => return Err(bad(0, "give allreduce, allgather, reducescatter, broadcast or reduce")),
    };
    let bytes = |k: usize| f[k].parse::<u64>().map_err(|_| bad(k, "give a whole number of bytes (0 to 18446744073709551615)"));
    let (min_bytes, max_bytes) = (bytes(1)?, bytes(2)?);
    if min_bytes > max_bytes {
        return Err(bad(2, &format!("is below min_bytes {min_bytes}; give max_bytes >= min_bytes")));
    }
    let algo = match f[3].to_lowercase().as_str() {
        "ring" => TunerAlgo::Lowered(Algo::Ring),
        "tree" => TunerAlgo::Lowered(Algo::Tree),
        "nvls" => TunerAlgo::Lowered(Algo::Nvls),
        "nvls_tree" | "nvlstree" => TunerAlgo::Lowered(Algo::NvlsTree),
        "collnet_direct" | "collnet_chain" => TunerAlgo::CollNet,
        "pat" => TunerAlgo::Lowered(Algo::Pat),
        _ => return Err(bad(3, "give tree, ring, collnet_direct, collnet_chain, nvls, nvls_tree or pat")),
    };
    let proto = match f[4].to_lowercase().as_str() {
        "ll" => Proto::Ll,
        "ll128" => Proto::Ll128,
        "simple" => Proto::Simple,
        _ => return Err(bad(4, "give ll, ll128 or simple")),
    };
    // -1 is "any" (or NCCL's own channels); otherwise a positive count.
    let count = |k: usize, most: usize| -> Result<Option<usize>> {
        match f[k].parse::<i64>() {
            Ok(-1) => Ok(None),
            Ok(v) if v >= 1 && v as usize <= most => Ok(Some(v as usize)),
            _ => Err(bad(k, &format!("give -1 or 1 to {most}"))),
        }
    };
    let channels = count(5, super::tuning::MAX_CHANNELS)?;
    let nodes = count(6, u32::MAX as usize)?;
    let ranks = count(7, u32::MAX as usize)?;
    let pipe_ops = if f.len() > 8 { count(8, u32::MAX as usize)? } else { None };
    let reg_buff = match f.get(9) {
        None | Some(&"-1") => None,
        Some(&"0") => Some(false),
        Some(&"1") => Some(true),
        Some(_) => return Err(bad(9, "give 0, 1 or -1")),
    };
    Ok(Rule { line: n, coll, min_bytes, max_bytes, algo, proto, channels, nodes, ranks, pipe_ops, reg_buff })
}
