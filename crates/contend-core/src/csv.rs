//! The CSVs users write (measurements for `calibrate`, transfers): a header of column names (any
//! order, any case), then one row per record with as many fields; blank lines and lines starting
//! with '#' are skipped.

use crate::error::{Error, Result};

pub struct Csv<'t> {
    pub cols: Vec<String>,
    /// (line number from 1, fields trimmed).
    pub rows: Vec<(usize, Vec<&'t str>)>,
}

impl<'t> Csv<'t> {
    /// `expected` names the header in the messages, e.g. "graph,src,dst,size,time".
    pub fn read(text: &'t str, origin: &str, expected: &str) -> Result<Csv<'t>> {
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        let (_, header) = lines.next().ok_or_else(|| Error::input(origin, "", format!("is empty; expected a header {expected}")))?;
        let cols: Vec<String> = header.split(',').map(|c| c.trim().to_lowercase()).collect();
        // Which of the two would count? (The first did, silently.)
        if let Some(c) = cols.iter().enumerate().find_map(|(k, c)| cols[..k].contains(c).then_some(c)) {
            return Err(Error::input(origin, "line 1", format!("column \"{c}\" is named twice; keep one")));
        }
        let mut rows = Vec::new();
        for (i, line) in lines {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            if f.len() != cols.len() {
                return Err(Error::input(origin, format!("line {}", i + 1), format!("has {} fields for {} columns", f.len(), cols.len())));
            }
            rows.push((i + 1, f));
        }
        Ok(Csv { cols, rows })
    }

    /// Refuse a file with a header and no rows (checked after the columns, which say more).
    pub fn require_rows(&self, origin: &str) -> Result<()> {
        if self.rows.is_empty() {
            return Err(Error::input(origin, "", "has a header but no measurements"));
        }
        Ok(())
    }

    pub fn find(&self, name: &str) -> Option<usize> {
        self.cols.iter().position(|c| c == name)
    }

    pub fn need(&self, name: &str, origin: &str, expected: &str) -> Result<usize> {
        self.find(name).ok_or_else(|| Error::input(origin, "line 1", format!("no column \"{name}\"; the header needs {expected}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> std::result::Result<Vec<Vec<String>>, String> {
        let csv = Csv::read(text, "m.csv", "a,b").map_err(|e| e.to_string())?;
        Ok(std::iter::once(csv.cols.clone()).chain(csv.rows.iter().map(|(_, f)| f.iter().map(|c| c.to_string()).collect())).collect())
    }

    #[test]
    fn a_column_named_twice_is_refused() {
        // The first of the two counted, silently: `src,dst,size,size` simulated the first size,
        // and a measurements CSV fitted its first bandwidth.
        assert_eq!(read("src,dst,size,Size\nGPU0,GPU1,300MiB,1GiB\n").unwrap_err(), "m.csv: line 1: column \"size\" is named twice; keep one");
    }
}
