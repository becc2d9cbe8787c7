//! The CSVs users write (measurements for `calibrate`, transfers): a header of column names (any
//! order, any case), then one row per record with as many fields; blank lines, lines starting
//! with '#' and rows of empty cells are skipped. Cells are read as RFC 4180 writes them: a cell
//! may be quoted ("GPU0", as a spreadsheet's "quote all" saves it), a doubled quote inside one
//! is one quote; a quoted cell ends on its line.

use std::borrow::Cow;

use crate::error::{Error, Result};

pub struct Csv<'t> {
    pub cols: Vec<String>,
    /// (line number from 1, fields trimmed and unquoted).
    pub rows: Vec<(usize, Vec<Cow<'t, str>>)>,
}

/// The lines that hold something, each with its index from 0: blank lines and '#' comments are
/// none. The header is the first of them.
pub fn content_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
}

impl<'t> Csv<'t> {
    /// `expected` names the header in the messages, e.g. "graph,src,dst,size,time".
    pub fn read(text: &'t str, origin: &str, expected: &str) -> Result<Csv<'t>> {
        let mut lines = content_lines(text);
        let (h, header) = lines.next().ok_or_else(|| Error::input(origin, "", format!("is empty; expected a header {expected}")))?;
        let at = |i: usize| format!("line {}", i + 1);
        let mut cols: Vec<String> = cells(header).map_err(|p| Error::input(origin, at(h), p))?.iter().map(|c| c.to_lowercase()).collect();
        // A spreadsheet saves every column a sheet ever used: empty ones at the right end are none.
        while cols.len() > 1 && cols.last().is_some_and(|c| c.is_empty()) {
            cols.pop();
        }
        check_header(&cols, header).map_err(|p| Error::input(origin, at(h), p))?;
        let mut rows = Vec::new();
        for (i, line) in lines {
            let mut f = cells(line).map_err(|p| Error::input(origin, at(i), p))?;
            if f.iter().all(|c| c.is_empty()) {
                continue; // a spreadsheet's empty row, ",,,"
            }
            while f.len() > cols.len() && f.last().is_some_and(|c| c.is_empty()) {
                f.pop();
            }
            if f.len() != cols.len() {
                return Err(Error::input(origin, at(i), format!("has {} fields for {} columns", f.len(), cols.len())));
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

/// The header's mistakes that a reader cannot resolve: another separator, an unnamed column, a
/// column named twice (which of the two would count?).
fn check_header(cols: &[String], header: &str) -> std::result::Result<(), String> {
    if cols.len() == 1 {
        if let Some(sep) = [';', '\t'].into_iter().find(|&c| header.contains(c)) {
            let name = if sep == ';' { "';'" } else { "tabs" };
            return Err(format!("has its columns separated by {name}; separate them with ',' (save the file with a comma as the list separator)"));
        }
    }
    for (k, c) in cols.iter().enumerate() {
        if c.is_empty() {
            let index = if k == 0 { " (a DataFrame's index? write it with to_csv(index=False))" } else { "" };
            return Err(format!("column {} has no name{index}; name the column or delete it", k + 1));
        }
        if cols[..k].contains(c) {
            return Err(format!("column \"{c}\" is named twice; keep one"));
        }
    }
    Ok(())
}

/// A line's cells, trimmed; a quoted cell without its quotes, `""` inside it read as one quote.
fn cells(line: &str) -> std::result::Result<Vec<Cow<'_, str>>, &'static str> {
    let mut out = Vec::new();
    let mut rest = line;
    loop {
        let t = rest.trim_start();
        let Some(quoted) = t.strip_prefix('"') else {
            match t.find(',') {
                Some(k) => {
                    out.push(Cow::Borrowed(t[..k].trim()));
                    rest = &t[k + 1..];
                }
                None => {
                    out.push(Cow::Borrowed(t.trim()));
                    return Ok(out);
                }
            }
            continue;
        };
        // The closing quote is the first one not doubled.
        let (b, mut k, mut doubled) = (quoted.as_bytes(), 0, false);
        let end = loop {
            match b.get(k) {
                None => return Err("has a quoted cell that does not close on its line; close its quote (a cell cannot hold a line break)"),
                Some(b'"') if b.get(k + 1) == Some(&b'"') => (doubled, k) = (true, k + 2),
                Some(b'"') => break k,
                Some(_) => k += 1,
            }
        };
        let inner = quoted[..end].trim();
        out.push(if doubled { Cow::Owned(inner.replace("\"\"", "\"")) } else { Cow::Borrowed(inner) });
        let after = quoted[end + 1..].trim_start();
        match after.strip_prefix(',') {
            Some(r) => rest = r,
            None if after.is_empty() => return Ok(out),
            None => return Err("has text after a quoted cell's closing quote; put the whole cell inside the quotes"),
        }
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

    #[test]
    fn cells_are_read_as_rfc_4180_quotes_them() {
        // LibreOffice's and Python's "quote all"; a doubled quote is one quote; a comma inside quotes.
        let rows = read("\"a\",\"b\"\n\"x, \"\"y\"\"\", 2\n").unwrap();
        assert_eq!(rows, vec![vec!["a", "b"], vec!["x, \"y\"", "2"]]);
        assert_eq!(
            read("a,b\n\"x,1\n").unwrap_err(),
            "m.csv: line 2: has a quoted cell that does not close on its line; close its quote (a cell cannot hold a line break)"
        );
        assert!(read("a,b\n\"x\"y,1\n").unwrap_err().starts_with("m.csv: line 2: has text after a quoted cell's closing quote"));
    }

    #[test]
    fn a_spreadsheets_empty_columns_and_rows_are_none() {
        // Excel saves the columns and rows a sheet ever used: `a,b,,` and `,,,`.
        assert_eq!(read("a,b,,\n1,2,,\n,,,\n3,4\n").unwrap(), vec![vec!["a", "b"], vec!["1", "2"], vec!["3", "4"]]);
        assert_eq!(read("a,b\n1,2,3\n").unwrap_err(), "m.csv: line 2: has 3 fields for 2 columns");
    }

    #[test]
    fn the_header_mistakes_a_reader_cannot_resolve_name_their_fix() {
        assert_eq!(
            read(",a,b\n0,1,2\n").unwrap_err(),
            "m.csv: line 1: column 1 has no name (a DataFrame's index? write it with to_csv(index=False)); name the column or delete it"
        );
        assert_eq!(read("a,,b\n1,2,3\n").unwrap_err(), "m.csv: line 1: column 2 has no name; name the column or delete it");
        assert_eq!(
            read("a;b\n1;2\n").unwrap_err(),
            "m.csv: line 1: has its columns separated by ';'; separate them with ',' (save the file with a comma as the list separator)"
        );
        assert!(read("a\tb\n1\t2\n").unwrap_err().contains("separated by tabs"));
    }
}
