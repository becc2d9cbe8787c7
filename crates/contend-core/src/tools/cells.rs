//! One cell of a measured matrix: a finite non-negative number, or unknown (`-`, `N/A`).
//! `inf`, `nan`, negative numbers and anything else are refused: a measurement that is not a
//! number must be fixed or left out, never fitted.

use crate::error::{Error, Result};

pub type Matrix = Vec<Vec<Option<f64>>>;

/// Spellings of a cell that was not measured.
const UNKNOWN: [&str; 4] = ["-", "n/a", "na", "--"];

pub fn cell(x: &str) -> std::result::Result<Option<f64>, String> {
    let t = x.trim();
    if UNKNOWN.contains(&t.to_lowercase().as_str()) {
        return Ok(None);
    }
    let v: f64 = t.parse().map_err(|_| format!("\"{t}\" is not a number; write the measured value, or - for a cell not measured"))?;
    if !v.is_finite() {
        return Err(format!("\"{t}\" is not a finite measurement; fix the run that produced it or write - to leave the cell out"));
    }
    if v < 0.0 {
        return Err(format!("{t} is negative; a measured bandwidth or time is at least 0 (write - to leave the cell out)"));
    }
    Ok(Some(v))
}

/// Rows that follow a matrix title (`lines[0]`): a header line, then rows "i v v ... v". A row
/// may be left out; the matrix ends at the first line that is not a row.
pub fn rows(lines: &[&str], n: usize, origin: &str, title: &str) -> Result<Matrix> {
    let mut m: Matrix = vec![vec![None; n]; n];
    let mut seen = 0;
    let mut ended = false;
    for l in lines.iter().skip(2) {
        let t: Vec<&str> = l.split_whitespace().collect();
        let Some(i) = t.first().and_then(|x| x.parse::<usize>().ok()).filter(|&i| i < n) else {
            ended = true;
            break;
        };
        if t.len() > n + 1 {
            return Err(Error::input(origin, format!("\"{title}\" row {i}"), format!("has {} cells for {n} devices; one cell per device", t.len() - 1)));
        }
        for (j, x) in t[1..].iter().enumerate() {
            m[i][j] = cell(x).map_err(|e| Error::input(origin, format!("\"{title}\" row {i}, column {j}"), e))?;
        }
        seen += 1;
    }
    // A matrix that runs into the end of the text with rows missing is output cut short.
    if seen == 0 || (!ended && seen < n) {
        return Err(bad(origin, title));
    }
    Ok(m)
}

fn bad(origin: &str, title: &str) -> Error {
    Error::input(origin, "", format!("the matrix under \"{title}\" ends with rows missing; is the output cut short?"))
}
