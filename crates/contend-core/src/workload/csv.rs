//! A transfers file written as CSV, as a spreadsheet or a script saves it: a header naming
//! src, dst and size and optionally name, start and overhead (any order, any case), then a
//! transfer per row with its units in the cells ("300MiB", "5ms"), as in a YAML transfers file.
//! What else a transfer can say (after, mechanism, via, datatype, method, access) needs the
//! YAML file.

use super::{TransferSpec, WorkloadSpec};
use crate::csv::{content_lines, Csv};
use crate::error::{Error, Result};
use crate::units::{Bytes, Time};

const EXPECTED: &str = "src,dst,size (optional name, start, overhead)";
const KNOWN: &[&str] = &["name", "src", "dst", "size", "start", "overhead"];

/// Whether a transfers file is CSV: named `.csv`, or (standard input, any other name) its first
/// line is a header of comma-separated column names with `src` among them. YAML never starts
/// so: a mapping's first line has a colon.
pub fn is_csv(text: &str, origin: &str) -> bool {
    if origin.to_lowercase().ends_with(".csv") {
        return true;
    }
    content_lines(text)
        .next()
        .is_some_and(|(_, h)| !h.contains(':') && h.contains(',') && h.split(',').any(|c| c.trim().trim_matches('"').eq_ignore_ascii_case("src")))
}

pub fn parse(text: &str, origin: &str) -> Result<WorkloadSpec> {
    // A YAML transfers file under a .csv name (`generate -o t.csv` wrote one): a CSV header has
    // no colon, YAML's first line has one.
    if let Some((i, _)) = content_lines(text).next().filter(|(_, l)| l.contains(':')) {
        return Err(Error::input(origin, format!("line {}", i + 1), "is YAML, not a CSV header; name the file .yaml (or write a header such as src,dst,size)"));
    }
    let csv = Csv::read(text, origin, EXPECTED)?;
    if let Some(other) = csv.cols.iter().find(|c| !KNOWN.contains(&c.as_str())) {
        return Err(Error::input(
            origin,
            "line 1",
            format!(
                "column \"{other}\" is not one a transfers CSV has ({}); for after, mechanism, via, datatype, method or access write a YAML transfers file",
                KNOWN.join(", ")
            ),
        ));
    }
    let col = |name: &str| csv.need(name, origin, EXPECTED);
    let (s, d, z) = (col("src")?, col("dst")?, col("size")?);
    let (name, start, overhead) = (csv.find("name"), csv.find("start"), csv.find("overhead"));
    if csv.rows.is_empty() {
        return Err(Error::input(origin, "", "has a header but no transfers; add a row such as GPU0,GPU1,300MiB"));
    }
    let mut transfers = Vec::with_capacity(csv.rows.len());
    for (line, f) in &csv.rows {
        let at = |column: &str| format!("line {line}: {column}");
        // An empty cell of an optional column is "none", as a missing field of a YAML transfer.
        let cell = |k: Option<usize>| k.map(|k| &*f[k]).filter(|c| !c.is_empty());
        let time = |k: Option<usize>, column: &str| cell(k).map(Time::parse).transpose().map_err(|e| Error::input(origin, at(column), e));
        let device = |k: usize, column: &str| match &*f[k] {
            "" => Err(Error::input(origin, at(column), "is empty; give a device name such as GPU0")),
            v => Ok(v.to_string()),
        };
        transfers.push(TransferSpec {
            name: cell(name).map(str::to_string),
            src: device(s, "src")?,
            dst: device(d, "dst")?,
            size: Bytes::parse(&f[z]).map_err(|e| Error::input(origin, at("size"), e))?,
            start: time(start, "start")?,
            overhead: time(overhead, "overhead")?,
            ..Default::default()
        });
    }
    Ok(WorkloadSpec { transfers, lines: csv.rows.iter().map(|(line, _)| *line).collect(), ..Default::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spreadsheets_csv_reads_as_its_yaml_does() {
        // Excel's "CSV UTF-8" on Windows: CRLF line ends (the byte-order mark is dropped where the
        // file is read, error::read_user_text), columns in its own order and case.
        let csv = "SRC,Dst,size,start\r\nGPU0,GPU1,1GiB,\r\n# a comment\r\n\r\nGPU2, GPU3 ,4MiB,5ms\r\n";
        let yaml = "transfers:\n  - {src: GPU0, dst: GPU1, size: 1GiB}\n  - {src: GPU2, dst: GPU3, size: 4MiB, start: 5ms}\n";
        let (a, b) = (WorkloadSpec::from_text(csv, "t.csv").unwrap(), WorkloadSpec::from_text(yaml, "t.yaml").unwrap());
        assert_eq!(a.to_yaml(), b.to_yaml());
        // Standard input has no name: the header says it is CSV.
        assert_eq!(WorkloadSpec::from_text(csv, "-").unwrap().to_yaml(), b.to_yaml());
    }

    #[test]
    fn each_mistake_names_its_line_and_column() {
        let e = |text: &str| WorkloadSpec::from_text(text, "t.csv").unwrap_err().to_string();
        assert_eq!(
            e("src,dst,size\nGPU0,GPU1,4 Mib\n"),
            "t.csv: line 2: size: \"4 Mib\" has an unknown size unit \"Mib\"; use one of B, kB, KB, MB, GB, TB, KiB, MiB, GiB, TiB"
        );
        assert!(e("src,dst,size\nGPU0,GPU1,-4MiB\n").starts_with("t.csv: line 2: size: \"-4MiB\" is negative"));
        assert!(e("src,dst,size\nGPU0,GPU1,4096\n").starts_with("t.csv: line 2: size: "));
        assert!(e("src,dst,size,start\nGPU0,GPU1,4MiB,nan\n").starts_with("t.csv: line 2: start: "));
        assert_eq!(e("src,dst,size\n,GPU1,4MiB\n"), "t.csv: line 2: src: is empty; give a device name such as GPU0");
        assert_eq!(e("src,dst,size\nGPU0,GPU1\n"), "t.csv: line 2: has 2 fields for 3 columns");
        assert_eq!(e("src,dst\nGPU0,GPU1\n"), "t.csv: line 1: no column \"size\"; the header needs src,dst,size (optional name, start, overhead)");
        assert!(e("src,dst,size,after\nGPU0,GPU1,4MiB,t0\n").starts_with("t.csv: line 1: column \"after\" is not one a transfers CSV has"));
        assert_eq!(e("src,dst,size\n"), "t.csv: has a header but no transfers; add a row such as GPU0,GPU1,300MiB");
        assert!(e("").starts_with("t.csv: is empty; expected a header src,dst,size"));
    }

    #[test]
    fn a_transfers_file_that_cannot_be_read_says_csv_is_one_it_may_be() {
        let dir = std::env::temp_dir();
        let e = WorkloadSpec::load(dir.to_str().unwrap()).unwrap_err().to_string();
        assert_eq!(e, format!("{}: is a folder; give a YAML, JSON or CSV transfers file", dir.display()));
    }

    #[test]
    fn a_byte_order_mark_on_standard_input_is_read_past() {
        // Excel's "CSV UTF-8" piped in: the header's first cell was "\u{feff}src", so the text
        // went to the YAML reader ("invalid type: string").
        let csv = "\u{feff}src,dst,size\r\nGPU0,GPU1,1GiB\r\n";
        let yaml = "transfers:\n  - {src: GPU0, dst: GPU1, size: 1GiB}\n";
        assert_eq!(WorkloadSpec::from_text(csv, "-").unwrap().to_yaml(), WorkloadSpec::from_text(yaml, "-").unwrap().to_yaml());
    }

    #[test]
    fn yaml_under_a_csv_name_is_said_to_be_yaml() {
        // `generate -o gen.csv` wrote YAML; it read as "line 2: has 3 fields for 1 columns".
        let e = WorkloadSpec::from_text("# generated\ntransfers:\n  - {src: GPU0, dst: GPU1, size: 1GiB}\n", "gen.csv").unwrap_err().to_string();
        assert_eq!(e, "gen.csv: line 2: is YAML, not a CSV header; name the file .yaml (or write a header such as src,dst,size)");
    }

    #[test]
    fn checks_after_reading_name_the_rows_line() {
        // They named YAML's path, `transfers[1].size`, for a row on line 6.
        let m = crate::topology::Machine::load("cs-storm-socket").unwrap();
        let e = |text: &str| {
            let spec = WorkloadSpec::from_text(text, "t.csv").unwrap();
            crate::workload::Workload::resolve(&spec, &m, "t.csv").unwrap_err().to_string()
        };
        assert_eq!(e("src,dst,size\nGPU0,GPU1,1MiB\n# a comment\n\n\nGPU1,GPU2,0B\n"), "t.csv: line 6: size: is zero; give a positive size such as \"300MiB\"");
        assert!(e("src,dst,size\nGPU0,GPU9,1MiB\n").starts_with("t.csv: line 2: dst: \"GPU9\" is not a device of cs-storm-socket"));
        assert!(e("name,src,dst,size\na,GPU0,GPU1,1MiB\na,GPU1,GPU0,1MiB\n").starts_with("t.csv: line 3: name: \"a\" is used twice"));
    }

    #[test]
    fn quoted_cells_and_a_spreadsheets_empty_columns_read() {
        // LibreOffice's "quote all" and Excel's unused columns at the right.
        let csv = "\"dst\",\"src\",\"size\",,\n\"GPU1\",\"GPU0\",\"1GiB\",,\n,,,,\n";
        let yaml = "transfers:\n  - {src: GPU0, dst: GPU1, size: 1GiB}\n";
        let want = WorkloadSpec::from_text(yaml, "-").unwrap().to_yaml();
        assert_eq!(WorkloadSpec::from_text(csv, "t.csv").unwrap().to_yaml(), want);
        assert_eq!(WorkloadSpec::from_text(csv, "-").unwrap().to_yaml(), want);
    }

    #[test]
    fn yaml_is_never_taken_for_csv() {
        for yaml in ["transfers:\n  - {src: GPU0, dst: GPU1, size: 1GiB}\n", "{\"transfers\": [{\"src\": \"GPU0\", \"dst\": \"GPU1\", \"size\": \"1GiB\"}]}"] {
            assert!(!is_csv(yaml, "-"), "{yaml}");
        }
    }
}
