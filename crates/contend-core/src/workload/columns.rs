//! Transfers given column by column: the door for DataFrames, NumPy arrays and lists of
//! records, which never pass through JSON. A number is bytes (`size`) or seconds (`start`,
//! `overhead`); a string carries its unit as in files ("300MiB", "2us"). What else a transfer
//! can say (after, mechanism, via, datatype, method, access) is written in a transfers file
//! or given as records, which take the file's path.

use super::{TransferSpec, WorkloadSpec};
use crate::error::{Error, Result};
use crate::units::{Bytes, Time};

/// One cell of a quantity column, as the caller had it.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Int(u64),
    Real(f64),
    Text(String),
    /// None in a column that may be empty for some rows (start, overhead); a NaN there,
    /// pandas' missing value, means the same.
    Missing,
}

/// The columns of a set of transfers, one entry per transfer in each.
#[derive(Clone, Debug, Default)]
pub struct TransferColumns {
    pub name: Option<Vec<Option<String>>>,
    pub src: Vec<String>,
    pub dst: Vec<String>,
    pub size: Vec<Cell>,
    pub start: Option<Vec<Cell>>,
    pub overhead: Option<Vec<Cell>>,
}

/// The longest time a column may give: integer picoseconds stay exact in 64 bits up to
/// about 213 days; a week is far beyond any transfer and keeps sums of them in range too.
const MAX_SECONDS: f64 = 7.0 * 86_400.0;

fn size(c: &Cell, origin: &str, row: usize) -> Result<Bytes> {
    let bad = |p: String| Error::input(origin, format!("size[{row}]"), p);
    match c {
        Cell::Int(0) => Err(bad("is zero; give a positive size in bytes".into())),
        Cell::Int(n) => Ok(Bytes(*n)),
        // The same bound as a size in a file (`Bytes::parse`): below 2^64, what a u64 holds.
        Cell::Real(x) if x.is_finite() && *x >= 1.0 && x.fract() == 0.0 && *x < 2f64.powi(64) => Ok(Bytes(*x as u64)),
        Cell::Real(x) if x.is_finite() && *x >= 2f64.powi(64) => Err(bad(format!("{x:?} bytes is 2^64 or more (16,777,216 TiB); a size must be below that"))),
        Cell::Real(x) => Err(bad(format!("{x:?} is not a whole positive number of bytes; give an integer such as 314572800 or a string such as \"300MiB\""))),
        Cell::Text(t) => Bytes::parse(t).map_err(bad),
        Cell::Missing => Err(bad("is missing; every transfer needs a size".into())),
    }
}

fn time(c: &Cell, column: &str, origin: &str, row: usize) -> Result<Option<Time>> {
    let bad = |p: String| Error::input(origin, format!("{column}[{row}]"), p);
    let secs = match c {
        Cell::Missing => return Ok(None),
        Cell::Real(x) if x.is_nan() => return Ok(None),
        Cell::Text(t) => return Time::parse(t).map(Some).map_err(bad),
        Cell::Int(n) => *n as f64,
        Cell::Real(x) => *x,
    };
    if !(0.0..=MAX_SECONDS).contains(&secs) {
        return Err(bad(format!("{secs:?} s is out of range; give seconds in [0, {MAX_SECONDS}] (a week)")));
    }
    Ok(Some(Time::from_secs(secs)))
}

impl TransferColumns {
    /// The transfers these columns describe; each mistake names its column and row.
    pub fn into_spec(self, origin: &str) -> Result<WorkloadSpec> {
        let n = self.src.len();
        let lengths = [
            ("dst", Some(self.dst.len())),
            ("size", Some(self.size.len())),
            ("name", self.name.as_ref().map(Vec::len)),
            ("start", self.start.as_ref().map(Vec::len)),
            ("overhead", self.overhead.as_ref().map(Vec::len)),
        ];
        for (column, len) in lengths {
            if let Some(len) = len.filter(|&l| l != n) {
                return Err(Error::input(origin, column, format!("has {len} entries where src has {n}; give every column one entry per transfer")));
            }
        }
        let mut names = self.name.map(|v| v.into_iter());
        let mut out = Vec::with_capacity(n);
        for (row, ((src, dst), size_cell)) in self.src.into_iter().zip(self.dst).zip(&self.size).enumerate() {
            out.push(TransferSpec {
                name: names.as_mut().and_then(|v| v.next().flatten()),
                src,
                dst,
                size: size(size_cell, origin, row)?,
                start: self.start.as_ref().map(|c| time(&c[row], "start", origin, row)).transpose()?.flatten(),
                overhead: self.overhead.as_ref().map(|c| time(&c[row], "overhead", origin, row)).transpose()?.flatten(),
                ..Default::default()
            });
        }
        Ok(WorkloadSpec { transfers: out, ..Default::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(size: Vec<Cell>, start: Vec<Cell>) -> TransferColumns {
        let n = size.len();
        TransferColumns { src: vec!["GPU0".into(); n], dst: vec!["GPU1".into(); n], size, start: Some(start), ..Default::default() }
    }

    #[test]
    fn numbers_are_bytes_and_seconds_strings_carry_units() {
        let s = cols(vec![Cell::Int(1024), Cell::Text("1KiB".into()), Cell::Real(2048.0)], vec![Cell::Real(2e-6), Cell::Text("2us".into()), Cell::Missing])
            .into_spec("<columns>")
            .unwrap();
        assert_eq!(s.transfers.iter().map(|t| t.size.0).collect::<Vec<_>>(), [1024, 1024, 2048]);
        assert_eq!(s.transfers[0].start, Some(Time(2_000_000)));
        assert_eq!(s.transfers[0].start, s.transfers[1].start);
        assert_eq!(s.transfers[2].start, None);
    }

    #[test]
    fn each_mistake_names_its_column_and_row() {
        let e = |c: TransferColumns| c.into_spec("df").unwrap_err().to_string();
        assert!(e(cols(vec![Cell::Int(1), Cell::Int(0)], vec![Cell::Missing; 2])).contains("size[1]"));
        assert!(e(cols(vec![Cell::Real(1.5)], vec![Cell::Missing])).contains("whole positive number of bytes"));
        assert!(e(cols(vec![Cell::Real(1e30)], vec![Cell::Missing])).contains("1e30 bytes is 2^64 or more"));
        assert!(e(cols(vec![Cell::Int(1)], vec![Cell::Real(-1.0)])).contains("start[0]"));
        assert!(e(cols(vec![Cell::Int(1)], vec![Cell::Real(f64::INFINITY)])).contains("out of range"));
        assert!(e(cols(vec![Cell::Int(1)], vec![Cell::Real(1e9)])).contains("out of range"));
        let mut short = cols(vec![Cell::Int(1); 2], vec![Cell::Missing; 2]);
        short.dst.pop();
        assert!(e(short).contains("dst: has 1 entries where src has 2"));
    }
}
