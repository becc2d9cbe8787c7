//! nvbandwidth's JSON output (`nvbandwidth -j`), rewritten as the plain text it stands for so
//! that one reader (nvbandwidth.rs) handles both:
//! `{"nvbandwidth": {"GPU Device list": ["0: NAME (bus): (host)", …], "testcases": [{"name",
//! "status", "bandwidth_description", "bandwidth_matrix": [["55.2", "N/A", …], …], "sum"}, …]}}`
//! (NVIDIA/nvbandwidth json_output.cpp, v0.8). A cell is a string (or a number), "N/A" where not
//! measured. The bidirectional peer testcases print three matrices into one testcase (each
//! direction, then "Total"): their rows are appended to one `bandwidth_matrix`, and the
//! description is the last one's, so the last block of rows is the Total matrix.

use crate::error::{Error, Result};
use serde_json::Value;
use std::fmt::Write as _;

/// Whether `text` is JSON (an nvbandwidth run or not: `parse` says which).
pub fn detect(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// The plain text of the run in `text`, and what the run says went wrong (a top-level error or
/// warning, testcases that did not pass).
pub fn to_text(text: &str, origin: &str) -> Result<(String, Vec<String>)> {
    let root: Value =
        serde_json::from_str(text).map_err(|e| Error::input(origin, "", format!("is not valid JSON ({e}); give nvbandwidth's output as it printed it")))?;
    let run =
        root.get("nvbandwidth").ok_or_else(|| Error::input(origin, "", "is JSON without an \"nvbandwidth\" object: not the output of `nvbandwidth -j`"))?;
    let mut out = String::from("nvbandwidth Version: (from JSON)\n\n");
    let mut notes = Vec::new();
    for key in ["error", "warning"] {
        if let Some(what) = run.get(key).and_then(Value::as_str) {
            notes.push(format!("nvbandwidth reported an {key}: {what}"));
        }
    }
    let devices = run.get("GPU Device list").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    for (i, d) in devices.iter().enumerate() {
        // "0: NVIDIA H800 (00000000:18:00): (hostname)"
        let d = d.as_str().unwrap_or_default();
        let name = d.split_once(": ").map_or(d, |(_, rest)| rest);
        let name = name.rsplit_once(": (").map_or(name, |(n, _)| n);
        let _ = writeln!(out, "Device {i}: {name}");
    }
    let testcases = run
        .get("testcases")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::input(origin, "nvbandwidth.testcases", "is missing: the run printed no testcase"))?;
    for (k, t) in testcases.iter().enumerate() {
        let field = |f: &str| format!("nvbandwidth.testcases[{k}].{f}");
        let name = t.get("name").and_then(Value::as_str).ok_or_else(|| Error::input(origin, field("name"), "is missing"))?;
        let (Some(title), Some(rows)) = (t.get("bandwidth_description").and_then(Value::as_str), t.get("bandwidth_matrix").and_then(Value::as_array)) else {
            let status = t.get("status").and_then(Value::as_str).unwrap_or("no status");
            notes.push(format!("nvbandwidth {name}: {status}, no matrix; not used"));
            continue;
        };
        let mut cells = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            let row = row.as_array().ok_or_else(|| Error::input(origin, field(&format!("bandwidth_matrix[{i}]")), "is not a list of cells"))?;
            let row: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(j, c)| match c {
                    Value::String(s) => Ok(s.clone()),
                    Value::Number(n) => Ok(n.to_string()),
                    _ => Err(Error::input(origin, field(&format!("bandwidth_matrix[{i}][{j}]")), "is neither a number nor \"N/A\"")),
                })
                .collect::<Result<_>>()?;
            cells.push(row);
        }
        let columns = cells.first().map_or(0, Vec::len);
        // Three square matrices appended: keep the last (Total).
        let rows_kept = if columns > 0 && cells.len() == 3 * columns && title.contains("Total") { &cells[2 * columns..] } else { &cells[..] };
        let _ = writeln!(out, "\nRunning {name}.\n{title}");
        out.push_str("  ");
        for j in 0..columns {
            let _ = write!(out, "{j:>10}");
        }
        out.push('\n');
        for (i, row) in rows_kept.iter().enumerate() {
            let _ = write!(out, "{i:>2}");
            for c in row {
                let _ = write!(out, " {c:>9}");
            }
            out.push('\n');
        }
        let _ = writeln!(out, "\nSUM {name} {}", t.get("sum").and_then(Value::as_f64).unwrap_or(0.0));
    }
    Ok((out, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::nvbandwidth_output::parse;

    #[test]
    fn reads_a_json_run_as_its_text() {
        let json = r#"{"nvbandwidth": {"version": "v0.8", "GPU Device list": ["0: NVIDIA H100 80GB HBM3 (00000000:19:00): (node1)", "1: NVIDIA H100 80GB HBM3 (00000000:3b:00): (node1)"],
          "testcases": [
            {"name": "host_to_device_memcpy_ce", "status": "Passed", "bandwidth_description": "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", "bandwidth_matrix": [["55.3124", "55.2987"]], "sum": 110.61},
            {"name": "device_to_device_memcpy_write_ce", "status": "Passed", "bandwidth_description": "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)", "bandwidth_matrix": [["N/A", "389.2"], ["389.5", "N/A"]], "sum": 778.7},
            {"name": "device_to_device_bidirectional_memcpy_write_ce", "status": "Passed", "bandwidth_description": "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)",
             "bandwidth_matrix": [["N/A", "370.1"], ["370.2", "N/A"], ["N/A", "370.3"], ["370.4", "N/A"], ["N/A", 740.4], ["740.6", "N/A"]], "sum": 1481.0},
            {"name": "device_local_copy", "status": "Waived"}
          ]}}"#;
        assert!(detect(json));
        let (text, notes) = to_text(json, "run.json").unwrap();
        assert_eq!(notes, vec!["nvbandwidth device_local_copy: Waived, no matrix; not used"]);
        let m = parse(&text, "run.json").unwrap();
        assert_eq!(m.devices, vec!["NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"]);
        assert_eq!(m.unidirectional_p2p_gbps.unwrap()[1][0], Some(389.5));
        // The Total block of the bidirectional testcase.
        assert_eq!(m.bidirectional_p2p_gbps.unwrap()[0][1], Some(740.4));
        assert_eq!(m.host_copies.len(), 2);
    }

    #[test]
    fn json_that_is_not_a_run_says_why() {
        let e = to_text("{\"foo\": 1}", "x.json").unwrap_err().to_string();
        assert!(e.contains("not the output of `nvbandwidth -j`"), "{e}");
        let e = to_text("{\"nvbandwidth\": ", "x.json").unwrap_err().to_string();
        assert!(e.starts_with("x.json: is not valid JSON"), "{e}");
        let bad = r#"{"nvbandwidth": {"testcases": [{"name": "t", "bandwidth_description": "d", "bandwidth_matrix": [["1", true]]}]}}"#;
        let e = to_text(bad, "x.json").unwrap_err().to_string();
        assert!(e.contains("nvbandwidth.testcases[0].bandwidth_matrix[0][1]"), "{e}");
    }
}
