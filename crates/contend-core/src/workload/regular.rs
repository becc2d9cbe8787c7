//! The regular shape of a transfers file, read in one pass without a YAML parser: `transfers:`
//! and then one flow mapping of plain values per line, as `contend generate` and
//! `WorkloadSpec::to_yaml` write it and as the examples are written by hand:
//!
//! ```yaml
//! # comment lines and blank lines anywhere
//! transfers:
//!   - {name: a, src: GPU0, dst: GPU1, size: 300MiB, start: 2us, after: [0, b], via: [CPU0]}
//! ```
//!
//! serde_yaml first turns a document into events, each with its own allocations, and only then
//! into transfers: about 0.5 s and a few kB per transfer at 100,000 (a 200 MB file took 6.6 GB).
//! Here each line becomes its `TransferSpec` directly.
//!
//! Anything outside that shape (another top-level key, quotes, anchors, a value YAML would read
//! as a number, a boolean or null, a repeated or unknown key, a mapping over two lines) returns
//! `None`, and the caller parses the text with the YAML parser: the fast path only ever accepts
//! what that parser reads the same way, so both give one result, and every mistake gets the
//! parser's message (`regular_tests.rs` checks both on every example and on random damage).

use super::{Access, Mechanism, TransferRef, TransferSpec, WorkloadSpec};
use crate::datatype::Method;
use crate::units::{Bandwidth, Bytes, Time};
use serde::de::value::{Error as ValueError, StrDeserializer};
use serde::de::IntoDeserializer;
use serde::Deserialize;

/// The transfers of `text`, if it has the regular shape; `None` sends it to the YAML parser.
pub(super) fn parse(text: &str) -> Option<WorkloadSpec> {
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    // Up to `transfers:`: comments and blank lines only.
    loop {
        let line = lines.next()?;
        if skippable(line) {
            continue;
        }
        if line.trim_end_matches(' ') != "transfers:" {
            return None;
        }
        break;
    }
    // A line per transfer is between 40 and 200 bytes: room for all of them at once.
    let mut transfers = Vec::with_capacity(text.len() / 48 + 1);
    let mut indent = None;
    for line in lines {
        if skippable(line) {
            continue;
        }
        let body = skip_spaces(line);
        let here = line.len() - body.len();
        if *indent.get_or_insert(here) != here {
            return None;
        }
        let item = body.strip_prefix('-')?;
        let mapping = skip_spaces(item);
        if mapping.len() == item.len() {
            return None; // "-{": not a sequence entry
        }
        transfers.push(transfer(mapping)?);
    }
    if transfers.is_empty() {
        return None;
    }
    Some(WorkloadSpec { transfers, ..WorkloadSpec::default() })
}

/// `s` without its leading spaces. `trim_start_matches(' ')` is a call of about 30 instructions
/// a time; this loop, inlined, is a few where there is one space or none, as between a line's
/// keys and values (seven times a line: 40 M instructions on 100,000 transfers).
#[inline]
fn skip_spaces(s: &str) -> &str {
    let n = s.bytes().take_while(|&b| b == b' ').count();
    // A space is one byte, so `n` is on a character boundary.
    &s[n..]
}

/// `s` without its trailing spaces, as `trim_end_matches(' ')`, inlined.
#[inline]
fn drop_trailing_spaces(s: &str) -> &str {
    let n = s.bytes().rev().take_while(|&b| b == b' ').count();
    &s[..s.len() - n]
}

/// A blank line, or one holding only a comment of printable characters: YAML refuses control
/// characters even in comments, and reads a lone carriage return or U+0085, U+2028, U+2029 as a
/// line break, after which the rest would not be a comment.
fn skippable(line: &str) -> bool {
    let t = skip_spaces(line);
    t.is_empty() || (t.starts_with('#') && t.chars().all(|c| c == '\t' || (' '..='~').contains(&c) || printable_beyond_ascii(c)))
}

fn printable_beyond_ascii(c: char) -> bool {
    matches!(c, '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..) && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// One `{key: value, …}` and nothing after it but spaces.
fn transfer(text: &str) -> Option<TransferSpec> {
    let mut rest = text.strip_prefix('{')?;
    let mut t = TransferSpec::default();
    let mut seen = 0u16;
    let (mut src, mut dst, mut size) = (false, false, false);
    loop {
        rest = skip_spaces(rest);
        // Byte searches: every delimiter is ASCII, which never occurs inside a UTF-8 sequence.
        let colon = rest.bytes().position(|b| b == b':')?;
        let key = &rest[..colon];
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
            return None;
        }
        // `key:value` is one plain scalar in YAML, not a pair: a space must follow the colon.
        rest = skip_spaces(rest[colon + 1..].strip_prefix(' ')?);
        let (value, list, after) = if let Some(inner) = rest.strip_prefix('[') {
            let close = inner.bytes().position(|b| b == b']')?;
            (&inner[..close], true, &inner[close + 1..])
        } else {
            let end = rest.bytes().position(|b| b == b',' || b == b'}')?;
            (drop_trailing_spaces(&rest[..end]), false, &rest[end..])
        };
        let bit = 1u16
            << match key {
                "name" => 0,
                "src" => 1,
                "dst" => 2,
                "size" => 3,
                "start" => 4,
                "after" => 5,
                "overhead" => 6,
                "mechanism" => 7,
                "via" => 8,
                "datatype" => 9,
                "method" => 10,
                "access" => 11,
                "max_rate" => 12,
                "rate_group" => 13,
                _ => return None,
            };
        if seen & bit != 0 {
            return None;
        }
        seen |= bit;
        match (key, list) {
            ("name", false) => t.name = Some(string(value)?),
            ("src", false) => (t.src, src) = (string(value)?, true),
            ("dst", false) => (t.dst, dst) = (string(value)?, true),
            ("size", false) => (t.size, size) = (Bytes::parse(quantity(value)?).ok()?, true),
            ("start", false) => t.start = Some(Time::parse(quantity(value)?).ok()?),
            ("overhead", false) => t.overhead = Some(Time::parse(quantity(value)?).ok()?),
            ("mechanism", false) => t.mechanism = Some(named::<Mechanism>(value)?),
            ("method", false) => t.method = Some(named::<Method>(value)?),
            ("access", false) => t.access = Some(named::<Access>(value)?),
            ("max_rate", false) => t.max_rate = Some(Bandwidth::parse(quantity(value)?).ok()?),
            ("datatype", false) => t.datatype = Some(string(value)?),
            ("rate_group", false) => t.rate_group = Some(string(value)?),
            ("after", true) => t.after = items(value)?.map(reference).collect::<Option<_>>()?,
            ("via", true) => t.via = items(value)?.map(string).collect::<Option<_>>()?,
            _ => return None,
        }
        rest = skip_spaces(after);
        if let Some(r) = rest.strip_prefix(',') {
            rest = r;
            continue;
        }
        let tail = rest.strip_prefix('}')?;
        if !(tail.bytes().all(|b| b == b' ') && src && dst && size) {
            return None;
        }
        return Some(t);
    }
}

/// The items of a flow list's inside, `a, b, 3`; none for `[]`.
fn items(inside: &str) -> Option<impl Iterator<Item = &str>> {
    if inside.contains(['[', '{', '}']) {
        return None;
    }
    let empty = inside.trim_matches(' ').is_empty();
    // `[a, ]` and `[, a]` mean other things to YAML than a list of names.
    let parts: Vec<&str> = if empty { Vec::new() } else { inside.split(',').map(|s| s.trim_matches(' ')).collect() };
    if parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    Some(parts.into_iter())
}

/// A plain scalar YAML reads as a string whatever the field (never a number, boolean or null),
/// with none of the characters that mean something in a flow mapping.
fn string(v: &str) -> Option<String> {
    let first = *v.as_bytes().first()?;
    let plain = (first.is_ascii_alphabetic() || first == b'_' || first == b'/')
        && v.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b'/'));
    let special = matches!(v, "true" | "True" | "TRUE" | "false" | "False" | "FALSE" | "null" | "Null" | "NULL");
    (plain && !special).then(|| v.to_string())
}

/// A quantity with its unit (`300MiB`, `2us`, `7.7µs`, `24GB/s`): starts with a digit, ends in
/// a letter, and is no hexadecimal, octal or binary number, so YAML reads it as a string.
///
/// Read by bytes: the characters allowed are ASCII but for µ (U+00B5, the bytes C2 B5), so the
/// last character is alphabetic exactly where the last byte is an ASCII letter or ends a µ.
fn quantity(v: &str) -> Option<&str> {
    let b = v.as_bytes();
    let (&first, &last) = (b.first()?, b.last()?);
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'/') => i += 1,
            0xC2 if b.get(i + 1) == Some(&0xB5) => i += 2,
            _ => return None,
        }
    }
    let ok = first.is_ascii_digit() && !(v.starts_with("0x") || v.starts_with("0o") || v.starts_with("0b")) && (last.is_ascii_alphabetic() || last == 0xB5);
    ok.then_some(v)
}

/// A reference in `after`: a decimal index as YAML writes an integer, or a name.
fn reference(v: &str) -> Option<TransferRef> {
    if v.bytes().all(|b| b.is_ascii_digit()) {
        // "007" is a string to YAML 1.2 and a name here would differ: leave it to the parser.
        if v.len() > 1 && v.starts_with('0') {
            return None;
        }
        return v.parse().ok().map(TransferRef::Index);
    }
    string(v).map(TransferRef::Name)
}

/// A unit enum by its serde name, read by serde itself.
fn named<'de, T: Deserialize<'de>>(v: &'de str) -> Option<T> {
    string(v)?;
    let d: StrDeserializer<'de, ValueError> = v.into_deserializer();
    T::deserialize(d).ok()
}
