//! Quantities with explicit units: sizes, times and bandwidths.
//!
//! Users always write a unit ("300MiB", "11.6GiB/s", "7.7us"); a bare number is rejected
//! because the SC16 example only works in binary units and silently guessing would hide that.
//! Sizes are integer bytes and times integer picoseconds at the edges; solvers use f64.

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::fmt;

/// A size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Bytes(pub u64);

/// A time in picoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub u64);

/// A bandwidth in bytes per second (per direction for links).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
pub struct Bandwidth(pub f64);

const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("kB", 1e3),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("TB", 1e12),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
    ("TiB", 1099511627776.0),
];

const BIT_UNITS: &[(&str, f64)] = &[
    ("b", 1.0 / 8.0),
    ("kb", 1e3 / 8.0),
    ("Kb", 1e3 / 8.0),
    ("Mb", 1e6 / 8.0),
    ("Gb", 1e9 / 8.0),
    ("Tb", 1e12 / 8.0),
    ("kbit", 1e3 / 8.0),
    ("Mbit", 1e6 / 8.0),
    ("Gbit", 1e9 / 8.0),
    ("Tbit", 1e12 / 8.0),
];

const TIME_UNITS: &[(&str, f64)] = &[("ps", 1e-12), ("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0)];

/// Split "300MiB" into (300.0, "MiB"). Errors are phrased to be shown after "field: ".
fn split_number<'a>(text: &'a str, example: &'a str) -> Result<(f64, &'a str), String> {
    let t = text.trim();
    let end = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '-' || *c == '+' || *c == 'e' || *c == 'E'))
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    // An exponent letter directly followed by a unit letter ("5e" in "5eB") is part of the unit.
    let (mut num, mut unit) = t.split_at(end);
    while num.ends_with(['e', 'E']) {
        num = &num[..num.len() - 1];
        unit = &t[num.len()..];
    }
    let unit = unit.trim();
    if num.is_empty() {
        return Err(format!("\"{text}\" does not start with a number; write e.g. \"{example}\""));
    }
    let value: f64 = match small_integer(num) {
        Some(v) => v,
        None => num.parse().map_err(|_| format!("\"{text}\" is not a number with a unit; write e.g. \"{example}\""))?,
    };
    if !value.is_finite() {
        return Err(format!("\"{text}\" is not finite; write e.g. \"{example}\""));
    }
    if unit.is_empty() {
        // Zero is zero in every unit: a bare "0" (`--gap 0`) reads in the example's unit.
        if value == 0.0 {
            return Ok((0.0, example.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.')));
        }
        return Err(format!("\"{text}\" has no unit; write it with one, e.g. \"{example}\""));
    }
    Ok((value, unit))
}

/// The value of 1 to 15 decimal digits, read as an integer: below 2^53, so exact in f64 and the
/// same number that `str::parse::<f64>` (correctly rounded) gives, for a fraction of its work.
/// A transfers file has two such quantities per line ("1MiB", "2us"); anything else: `None`.
fn small_integer(num: &str) -> Option<f64> {
    if num.is_empty() || num.len() > 15 {
        return None;
    }
    let mut v = 0u64;
    for b in num.bytes() {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(b - b'0');
    }
    Some(v as f64)
}

/// The common form of a quantity, 1 to 15 digits and then one of `table`'s units exactly
/// ("1MiB", "2us"), as (value, the unit's factor); anything else: `None`, and the caller reads it
/// with `split_number` as before. Where this answers, `split_number` gives the same pair: its
/// scan for the number stops at the first character after the digits (no unit starts with a
/// point, sign, digit or `e`/`E`), the unit has no spaces to trim, and `small_integer` reads the
/// digits. About a fifth of the work of the general path on a transfers file's two quantities a line.
fn integer_with_unit(text: &str, table: &[(&str, f64)]) -> Option<(f64, f64)> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 15 {
        return None;
    }
    let (num, unit) = text.split_at(digits);
    let f = lookup(table, unit)?;
    Some((small_integer(num)?, f))
}

/// 2^64 as f64: the first value a u64 cannot hold.
const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;

fn lookup(table: &[(&str, f64)], unit: &str) -> Option<f64> {
    table.iter().find(|(u, _)| *u == unit).map(|(_, f)| *f)
}

fn unit_list(table: &[(&str, f64)]) -> String {
    table.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")
}

impl Bytes {
    pub fn parse(text: &str) -> Result<Bytes, String> {
        if let Some((v, f)) = integer_with_unit(text, SIZE_UNITS) {
            return Bytes::checked(text, v, f);
        }
        let (v, unit) = split_number(text, "300MiB")?;
        let f = lookup(SIZE_UNITS, unit).ok_or_else(|| {
            if lookup(BIT_UNITS, unit).is_some() {
                format!("\"{text}\" is in bits; sizes are in bytes, write e.g. \"{v}MB\" or \"{v}MiB\"")
            } else {
                format!("\"{text}\" has an unknown size unit \"{unit}\"; use one of {}", unit_list(SIZE_UNITS))
            }
        })?;
        Bytes::checked(text, v, f)
    }
    /// `v` of a unit of `f` bytes, refused where it is negative or 2^64 or more.
    fn checked(text: &str, v: f64, f: f64) -> Result<Bytes, String> {
        if v < 0.0 {
            return Err(format!("\"{text}\" is negative; a size must be positive"));
        }
        // A size in bytes is a count; in a larger unit ("1.3MiB") it rounds to the nearest byte.
        if f == 1.0 && v.fract() != 0.0 {
            return Err(format!("\"{text}\" is not a whole number of bytes; give an integer count of bytes"));
        }
        let b = (v * f).round();
        // `as u64` would saturate at 16 EiB and every sum over it wrap: refused where it enters instead.
        if b >= TWO_TO_64 {
            return Err(format!("\"{text}\" is 2^64 bytes or more (16,777,216 TiB); a size must be below that"));
        }
        Ok(Bytes(b as u64))
    }
    pub fn as_f64(self) -> f64 {
        self.0 as f64
    }
}

impl Time {
    pub fn parse(text: &str) -> Result<Time, String> {
        if let Some((v, f)) = integer_with_unit(text, TIME_UNITS) {
            return Time::checked(text, v, f);
        }
        let (v, unit) = split_number(text, "7.7us")?;
        let f = lookup(TIME_UNITS, unit).ok_or_else(|| format!("\"{text}\" has an unknown time unit \"{unit}\"; use one of {}", unit_list(TIME_UNITS)))?;
        Time::checked(text, v, f)
    }
    /// `v` of a unit of `f` seconds in picoseconds, refused where it is negative or 2^64 ps or more.
    fn checked(text: &str, v: f64, f: f64) -> Result<Time, String> {
        if v < 0.0 {
            return Err(format!("\"{text}\" is negative; a time must be zero or positive"));
        }
        let ps = (v * f * 1e12).round();
        if ps >= TWO_TO_64 {
            return Err(format!("\"{text}\" is 2^64 ps (about 213 days) or more; a time must be below that"));
        }
        Ok(Time(ps as u64))
    }
    pub fn from_secs(s: f64) -> Time {
        Time((s * 1e12).round().max(0.0) as u64)
    }
    pub fn secs(self) -> f64 {
        self.0 as f64 / 1e12
    }
}

/// Below any link a machine or cluster file describes (the slowest, a PCIe Gen1 lane, moves
/// 250 MB/s; a 1 Gb/s Ethernet port 125 MB/s): a smaller figure is a typo or a wrong unit, and
/// 1e-30GB/s once printed a makespan of 1e29 s. Transfers' `max_rate` may go lower (a pace).
pub const MIN_LINK_BANDWIDTH: f64 = 1e6;

/// Why a link or device bandwidth (bytes/s) is refused, or None: under `MIN_LINK_BANDWIDTH`.
pub fn below_link_floor(bytes_per_sec: f64) -> Option<String> {
    (bytes_per_sec < MIN_LINK_BANDWIDTH).then(|| {
        format!("{bytes_per_sec:.3e} B/s is below 1 MB/s, slower than any link (a PCIe Gen1 lane moves 250 MB/s); check the number and its unit, e.g. 11.9GB/s")
    })
}

/// Above any link, switch or memory built or announced (NVLink 5 moves 1.8 TB/s a GPU, a
/// GB200 NVL72 domain 130 TB/s): a larger figure is a typo or a wrong unit.
const MAX_BANDWIDTH: f64 = 1e15;

impl Bandwidth {
    pub fn parse(text: &str) -> Result<Bandwidth, String> {
        let (v, unit) = split_number(text, "11.6GiB/s")?;
        let per = unit
            .strip_suffix("/s")
            .or_else(|| unit.strip_suffix("ps"))
            .ok_or_else(|| format!("\"{text}\" is not a rate; write it per second, e.g. \"11.6GiB/s\""))?;
        let f = lookup(SIZE_UNITS, per)
            .or_else(|| lookup(BIT_UNITS, per))
            .ok_or_else(|| format!("\"{text}\" has an unknown unit \"{per}\"; use one of {} or {} per second", unit_list(SIZE_UNITS), unit_list(BIT_UNITS)))?;
        if v <= 0.0 {
            return Err(format!("\"{text}\" is not positive; a bandwidth must be above zero"));
        }
        if v * f > MAX_BANDWIDTH {
            return Err(format!("\"{text}\" is more than any link carries (1 PB/s; the fastest today carry a few TB/s); check the number and its unit"));
        }
        Ok(Bandwidth(v * f))
    }
    pub fn bytes_per_sec(self) -> f64 {
        self.0
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0 as f64;
        for (unit, scale) in [("GiB", 1073741824.0), ("MiB", 1048576.0), ("KiB", 1024.0)] {
            if b >= scale && (b / scale).fract() == 0.0 {
                return write!(f, "{}{unit}", b / scale);
            }
        }
        write!(f, "{}B", self.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        for (unit, scale) in [("s", 1_000_000_000_000u64), ("ms", 1_000_000_000), ("us", 1_000_000), ("ns", 1_000)] {
            if ps >= scale && ps.is_multiple_of(scale) {
                return write!(f, "{}{unit}", ps / scale);
            }
        }
        write!(f, "{ps}ps")
    }
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}GB/s", self.0 / 1e9)
    }
}

macro_rules! string_quantity {
    ($ty:ty, $what:expr, $pattern:expr, $example:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> de::Visitor<'de> for V {
                    type Value = $ty;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "{} with a unit such as \"{}\"", $what, $example)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$ty, E> {
                        <$ty>::parse(v).map_err(E::custom)
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$ty, E> {
                        if v == 0 as u64 {
                            return <$ty>::parse("0").map_err(E::custom);
                        }
                        Err(E::custom(format!("{v} has no unit; write it with one, e.g. \"{}\"", $example)))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$ty, E> {
                        if v == 0 as i64 {
                            return <$ty>::parse("0").map_err(E::custom);
                        }
                        Err(E::custom(format!("{v} has no unit; write it with one, e.g. \"{}\"", $example)))
                    }
                    fn visit_f64<E: de::Error>(self, v: f64) -> Result<$ty, E> {
                        if v == 0 as f64 {
                            return <$ty>::parse("0").map_err(E::custom);
                        }
                        Err(E::custom(format!("{v} has no unit; write it with one, e.g. \"{}\"", $example)))
                    }
                }
                d.deserialize_any(V)
            }
        }
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }
        impl JsonSchema for $ty {
            fn schema_name() -> Cow<'static, str> {
                stringify!($ty).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({
                    "type": "string",
                    "pattern": $pattern,
                    "description": concat!($what, " with an explicit unit, e.g. \"", $example, "\""),
                })
            }
        }
    };
}

string_quantity!(Bytes, "a size", r"^\s*[0-9.eE+]+\s*(B|kB|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$", "300MiB");
string_quantity!(Time, "a time", r"^\s*[0-9.eE+]+\s*(ps|ns|us|µs|ms|s)\s*$", "7.7us");
string_quantity!(Bandwidth, "a bandwidth", r"^\s*[0-9.eE+]+\s*([kKMGT]?i?B|[kKMGT]?b|[kMGT]bit)(/s|ps)\s*$", "11.6GiB/s");

#[cfg(test)]
mod tests {
    use super::*;

    /// Integers of 1 to 15 digits are exact in f64 (below 2^53): the digit loop must give the
    /// integer itself, leading zeros included; 16 digits, signs, points and exponents are left
    /// to the float parser.
    #[test]
    fn small_integers_are_read_exactly() {
        for (text, want) in [("0", 0.0), ("1", 1.0), ("007", 7.0), ("300", 300.0), ("999999999999999", 999_999_999_999_999.0)] {
            assert_eq!(small_integer(text), Some(want), "{text}");
        }
        for text in ["", "1000000000000000", "-1", "+1", "1.5", "1e3", "12a"] {
            assert_eq!(small_integer(text), None, "{text}");
        }
        // Through the whole parse: 2^53 - 1 bytes (16 digits, the float parser) and 10^15 - 1 ps.
        assert_eq!(Bytes::parse("9007199254740991B").unwrap(), Bytes((1u64 << 53) - 1));
        assert_eq!(Time::parse("999999999999999ps").unwrap(), Time(999_999_999_999_999));
    }

    /// The common form's shortcut answers only where the general path gives the same value and
    /// factor: the digits and a unit exactly; every other form (a point, an exponent, a space, a
    /// sign, no unit, an unknown unit, 16 digits) is left to `split_number`.
    #[test]
    fn integer_with_unit_agrees_with_the_general_path() {
        let general = |text, table, example| {
            let (v, unit) = split_number(text, example).unwrap();
            (v, lookup(table, unit).unwrap())
        };
        for text in ["1MiB", "0B", "007KiB", "300MB", "999999999999999TiB", "4096B", "1kB"] {
            assert_eq!(integer_with_unit(text, SIZE_UNITS), Some(general(text, SIZE_UNITS, "300MiB")), "{text}");
        }
        for text in ["2us", "0ps", "7µs", "15s", "100ns", "3ms"] {
            assert_eq!(integer_with_unit(text, TIME_UNITS), Some(general(text, TIME_UNITS, "7.7us")), "{text}");
        }
        let others = ["", "0", "1.5MiB", "1e3B", "5eB", "1 MiB", " 1MiB", "1MiB ", "+1MiB", "-1MiB", "1Mb", "1parsec", "1000000000000000B", "MiB"];
        for text in others {
            assert_eq!(integer_with_unit(text, SIZE_UNITS), None, "{text}");
        }
        // Through the whole parse, the same value either way.
        assert_eq!(Bytes::parse("1MiB").unwrap(), Bytes(1 << 20));
        assert_eq!(Time::parse("2us").unwrap(), Time(2_000_000));
        assert_eq!(Time::parse("7µs").unwrap(), Time::parse("7.0µs").unwrap());
    }

    #[test]
    fn sizes_binary_and_decimal() {
        assert_eq!(Bytes::parse("300MiB").unwrap(), Bytes(300 * 1048576));
        assert_eq!(Bytes::parse("300MB").unwrap(), Bytes(300_000_000));
        assert_eq!(Bytes::parse("1.5 KiB").unwrap(), Bytes(1536));
        assert_eq!(Bytes::parse("40KB").unwrap(), Bytes(40_000));
        assert!(Bytes::parse("300").unwrap_err().contains("no unit"));
        assert!(Bytes::parse("-3MiB").unwrap_err().contains("negative"));
        assert!(Bytes::parse("3Mb").unwrap_err().contains("bits"));
        assert!(Bytes::parse("3 parsecs").unwrap_err().contains("unknown"));
        // 2^64 bytes and more are refused, not saturated; just below is kept.
        assert!(Bytes::parse("16777216TiB").unwrap_err().contains("2^64"), "2^64 B");
        assert!(Bytes::parse("1e30B").unwrap_err().contains("2^64"), "1e30B");
        // Bytes are counted whole; a larger unit rounds to the nearest byte.
        assert!(Bytes::parse("1.5B").unwrap_err().contains("whole number of bytes"));
        assert_eq!(Bytes::parse("1.5KiB"), Ok(Bytes(1536)));
        assert_eq!(Bytes::parse("15728640TiB").unwrap(), Bytes(15 << 60));
    }

    #[test]
    fn bandwidths() {
        assert_eq!(Bandwidth::parse("11.6GiB/s").unwrap().0, 11.6 * 1073741824.0);
        assert_eq!(Bandwidth::parse("12GB/s").unwrap().0, 12e9);
        assert_eq!(Bandwidth::parse("56Gb/s").unwrap().0, 7e9);
        assert_eq!(Bandwidth::parse("10GBps").unwrap().0, 10e9);
        assert!(Bandwidth::parse("12GB").unwrap_err().contains("per second"));
        assert!(Bandwidth::parse("0GB/s").unwrap_err().contains("not positive"));
        assert_eq!(Bandwidth::parse("130TB/s").unwrap().0, 130e12);
        assert!(Bandwidth::parse("1e30GB/s").unwrap_err().contains("check the number and its unit"));
    }

    #[test]
    fn times() {
        assert_eq!(Time::parse("7.7us").unwrap(), Time(7_700_000));
        assert_eq!(Time::parse("2ms").unwrap(), Time(2_000_000_000));
        assert_eq!(Time::parse("0s").unwrap(), Time(0));
        assert_eq!(Time::parse("5 ns").unwrap(), Time(5000));
        assert!(Time::parse("7.7").unwrap_err().contains("no unit"));
        // Zero needs no unit: it is zero in every one.
        assert_eq!(Time::parse("0").unwrap(), Time(0));
        assert_eq!(Bytes::parse("0").unwrap(), Bytes(0));
        assert!(Bandwidth::parse("0").unwrap_err().contains("not positive"));
        assert_eq!(serde_json::from_str::<Time>("0").unwrap(), Time(0));
        assert!(Time::parse("1e9s").unwrap_err().contains("2^64"));
    }

    #[test]
    fn bare_numbers_rejected_by_serde() {
        let e = serde_json::from_str::<Bytes>("300").unwrap_err().to_string();
        assert!(e.contains("no unit"), "{e}");
        let b: Bytes = serde_json::from_str("\"300MiB\"").unwrap();
        assert_eq!(b.to_string(), "300MiB");
    }
}
