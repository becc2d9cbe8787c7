//! Which NCCL release's choice a paste's rows look like, where the paste names none (issue 25).
//!
//! nccl-tests prints NCCL's release only in newer headers (`nccl-library=`) or under
//! NCCL_DEBUG=INFO; a paste without it is fitted under the default release, and where NCCL's
//! choice of algorithm and protocol changed between releases the fit absorbs the difference into
//! the wrong constants (held-out santis, GH200: tree/LL128 from 1 MiB under 2.30, which NCCL allows
//! on the GPU-C2C-Grace-NIC path only from 2.27). So the rows are also predicted, unfitted, under
//! every release contend restates (`versions::ALL`, on the same communicators, variables and
//! constants given), and the consecutive releases whose predictions are the same are one class.
//! This is a diagnostic: it changes no fitted value and not the release fitted under.
//!
//! The rows scored are those of 1 MiB and more (all rows where none is): the validation's rows,
//! bandwidth-bound, where NCCL's choice shows; below, the error is mostly the per-step and per-call
//! latencies the fit sets, alike under every release (santis: 2.26 and 2.30 both +40..+150% at
//! 4-512 KiB on LL). Rule: another class is named where its rms relative error is at most half the
//! default's and the default's is above 15% (the validation's band: within it the default already
//! predicts the rows as well as contend scores them). The newest release of that class is the one
//! suggested.

use crate::nccl::versions::{self, Version};
use serde::Serialize;

/// A class's rms must be at most this share of the default's to be named.
pub const BETTER: f64 = 0.5;
/// The default's rms must be above this for another class to be named (the validation's ±15%).
pub const BAND: f64 = 0.15;

/// Releases whose unfitted predictions of every row are the same.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ReleaseClass {
    /// "2.23-2.26", or one release ("2.30").
    pub releases: String,
    /// Its newest release (`nccl_version`'s word): the one named.
    pub newest: String,
    /// Root mean square of the scored rows' relative busbw errors under it, before fitting.
    pub rms_relative_error: f64,
}

/// What the rows say of the release they ran, where the paste names none.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UnnamedRelease {
    /// The release fitted under (the default).
    pub fitted_under: String,
    /// Each class, oldest first.
    pub classes: Vec<ReleaseClass>,
    /// Releases contend refuses on these GPUs or nodes (`Comm::set_constants`), not predicted.
    pub refused: Vec<String>,
    /// The release named by the rule (the module's), if any.
    pub suggested: Option<String>,
    /// The rows scored: those of 1 MiB and more, else every row.
    pub rows_scored: usize,
    /// The line printed above the fit.
    pub line: String,
}

/// One release's prediction of the rows: (NCCL's pick, seconds) per row.
pub type Rows = [(String, f64)];
/// Each release's prediction of the rows, None where refused.
pub type Predictions = Vec<(Version, Option<Vec<(String, f64)>>)>;

/// The smallest row scored (bytes), where the paste has one as large.
pub const SCORED_FROM: u64 = 1 << 20;

/// Which of rows of these sizes (bytes) are scored: those of `SCORED_FROM` and more, else all.
pub fn scored(bytes: &[u64]) -> Vec<bool> {
    let big = bytes.iter().any(|&b| b >= SCORED_FROM);
    bytes.iter().map(|&b| !big || b >= SCORED_FROM).collect()
}

/// The classes of `predictions` (every release of `versions::ALL`, oldest first, each a
/// prediction of every row given) scored against the rows (bytes, measured seconds) `scored`
/// keeps (the caller may give those alone), and the line saying so.
pub fn compare(default: Version, predictions: &Predictions, rows: &[(u64, f64)]) -> UnnamedRelease {
    let scored = scored(&rows.iter().map(|r| r.0).collect::<Vec<_>>());
    let big = rows.iter().any(|r| r.0 >= SCORED_FROM);
    let n = scored.iter().filter(|&&s| s).count();
    let rms = |pred: &Rows| -> f64 {
        let sum: f64 = pred.iter().zip(rows).zip(&scored).filter(|(_, &s)| s).map(|(((_, p), (_, m)), _)| (m / p - 1.0).powi(2)).sum();
        (sum / n.max(1) as f64).sqrt()
    };
    let same = |a: &Rows, b: &Rows| a.iter().zip(b).all(|(x, y)| x.0 == y.0 && (x.1 - y.1).abs() <= 1e-9 * x.1.abs());
    // (first, last, prediction) of each run of equal predictions.
    let mut runs: Vec<(Version, Version, &Rows)> = Vec::new();
    let mut refused = Vec::new();
    for (v, pred) in predictions {
        match (pred, runs.last_mut()) {
            (None, _) => refused.push(v.name().to_string()),
            (Some(p), Some(last)) if same(last.2, p) && versions::ALL.get(last.1 as usize + 1) == Some(v) => last.1 = *v,
            (Some(p), _) => runs.push((*v, *v, p)),
        }
    }
    let classes: Vec<ReleaseClass> = runs
        .iter()
        .map(|(first, last, p)| ReleaseClass {
            releases: if first == last { first.name().to_string() } else { format!("{}-{}", first.name(), last.name()) },
            newest: last.name().to_string(),
            rms_relative_error: rms(p),
        })
        .collect();
    let own = runs.iter().position(|(a, b, _)| (*a..=*b).contains(&default));
    let own_rms = own.map(|k| classes[k].rms_relative_error);
    // Best first; of equal rms, the newer.
    let mut order: Vec<usize> = (0..classes.len()).collect();
    order.sort_by(|&a, &b| classes[a].rms_relative_error.total_cmp(&classes[b].rms_relative_error).then(b.cmp(&a)));
    let best_other = order.iter().copied().find(|&k| Some(k) != own);
    let suggested = best_other.filter(|&k| own_rms.is_some_and(|d| d > BAND && classes[k].rms_relative_error <= BETTER * d));
    let pct = |x: f64| format!("{:.0}%", x * 100.0);
    let d = default.name();
    let rows_word = match (big, n) {
        (true, _) => format!("its {n} rows of 1 MiB and more"),
        (false, 1) => "its row".to_string(),
        (false, _) => format!("its {n} rows"),
    };
    let head = format!("the paste names no NCCL release; fitted under {d}'s choice");
    let line = match (suggested, own_rms, best_other) {
        (Some(k), Some(o), _) => format!(
            "{head}; NCCL {}'s choice predicts {rows_word} at rms {} against {d}'s {} before fitting: if {} ran, give --param nccl_version={}",
            classes[k].releases,
            pct(classes[k].rms_relative_error),
            pct(o),
            if classes[k].releases == classes[k].newest { classes[k].newest.clone() } else { format!("one of {}", classes[k].releases) },
            classes[k].newest
        ),
        (None, Some(o), Some(k)) => format!(
            "{head} ({rows_word} at rms {} before fitting); the best other, NCCL {}'s, {}: no release is named unless its rms is at most half {d}'s and {d}'s above {}",
            pct(o),
            classes[k].releases,
            pct(classes[k].rms_relative_error),
            pct(BAND)
        ),
        (None, Some(o), None) => format!("{head} ({rows_word} at rms {} before fitting); every release contend models predicts them alike", pct(o)),
        _ => head,
    };
    let suggested = suggested.map(|k| classes[k].newest.clone());
    UnnamedRelease { fitted_under: d.to_string(), classes, refused, suggested, rows_scored: n, line }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::nccl_fit;

    fn rows(picks: &[(&str, f64)]) -> Option<Vec<(String, f64)>> {
        Some(picks.iter().map(|(p, s)| (p.to_string(), *s)).collect())
    }

    /// Two rows of 1 and 2 MiB measured at 1 and 2 s: releases to 2.26 predict them exactly, 2.27
    /// on twice as fast (busbw errors +100%, rms 100%), 2.18 refused: 2.19-2.26 is named, with
    /// 2.26. A third row of 1 KiB, predicted alike under all, is not scored.
    #[test]
    fn names_the_class_that_predicts_the_rows_at_half_the_default_rms() {
        let preds: Predictions = versions::ALL
            .iter()
            .map(|&v| {
                let p = if v == Version::V2_18 {
                    None
                } else if v < Version::V2_27 {
                    rows(&[("Ring/LL", 1.0), ("Tree/Simple", 1.0), ("Tree/Simple", 2.0)])
                } else {
                    rows(&[("Ring/LL", 1.0), ("Tree/LL128", 0.5), ("Tree/LL128", 1.0)])
                };
                (v, p)
            })
            .collect();
        let u = compare(Version::V2_30, &preds, &[(1024, 3.0), (1 << 20, 1.0), (2 << 20, 2.0)]);
        assert_eq!(u.rows_scored, 2);
        assert_eq!(u.refused, vec!["2.18"]);
        assert_eq!(
            u.classes,
            vec![
                ReleaseClass { releases: "2.19-2.26".into(), newest: "2.26".into(), rms_relative_error: 0.0 },
                ReleaseClass { releases: "2.27-2.30".into(), newest: "2.30".into(), rms_relative_error: 1.0 },
            ]
        );
        assert_eq!(u.suggested.as_deref(), Some("2.26"));
        assert!(u.line.contains("NCCL 2.19-2.26's choice predicts its 2 rows of 1 MiB and more at rms 0% against 2.30's 100%"), "{}", u.line);
        assert!(u.line.ends_with("if one of 2.19-2.26 ran, give --param nccl_version=2.26"), "{}", u.line);
    }

    /// Within the band no release is named, however much better another is (10% against 4%);
    /// with no row of 1 MiB every row is scored.
    #[test]
    fn names_none_where_the_default_is_within_the_band() {
        let preds: Predictions =
            versions::ALL.iter().map(|&v| (v, if v < Version::V2_27 { rows(&[("Ring/LL", 1.0 / 1.04)]) } else { rows(&[("Ring/LL", 1.0 / 1.10)]) })).collect();
        let u = compare(Version::V2_30, &preds, &[(8, 1.0)]);
        assert_eq!(u.rows_scored, 1);
        assert_eq!(u.suggested, None);
        assert!(u.line.contains("(its row at rms 10% before fitting); the best other, NCCL 2.18-2.26's, 4%"), "{}", u.line);
    }

    fn bench(path: &str) -> String {
        format!("{}/../../bench/validation/{path}", env!("CARGO_MANIFEST_DIR"))
    }

    /// Held-out santis (qa25): 2 x 4 GH200, all_reduce 8 B-128 MiB, no release printed. Under
    /// 2.30 NCCL takes tree/LL128 from 1 MiB (LL128 across nodes over GPU-C2C-Grace-NIC from 2.27),
    /// under 2.26 tree/Simple. By hand, busbw error = measured time / predicted - 1:
    /// 4 MiB, measured 294.6 us: 2.26 predicts 279.7 us (+5.3%), 2.30 122.9 us (+139.7%);
    /// 16 MiB, measured 442.8 us: 2.26 427.0 us (+3.7%), 2.30 314.9 us (+40.6%).
    /// Over the 8 rows of 1 MiB and more: 2.23-2.26 18.5%, 2.28-2.30 77.0%: 2.26 is named. The fit
    /// is the one under nccl_version=2.30 given (no value moves), which reports nothing of this.
    #[test]
    fn santis_names_2_26_and_fits_as_before() {
        let m = crate::topology::Machine::load(&bench("machines/alps-gh200.yaml")).unwrap();
        let text = std::fs::read_to_string(bench("data/heldout/gh200-2x4-santis-cxi-all_reduce.txt")).unwrap();
        let fit = |params: &[(String, String)]| nccl_fit::fit(&m, &text, "santis.txt", "maxmin", params, false, &nccl_fit::RunSettings::default()).unwrap();
        let f = fit(&[]);
        let u = f.unnamed_release.as_ref().expect("the paste names no release");
        assert_eq!((u.fitted_under.as_str(), u.suggested.as_deref(), u.rows_scored), ("2.30", Some("2.26"), 8), "{u:?}");
        let rms = |r: &str| u.classes.iter().find(|c| c.releases == r).map(|c| c.rms_relative_error);
        assert!(rms("2.23-2.26").is_some_and(|x| (x - 0.185).abs() < 0.005), "{u:?}");
        assert!(rms("2.28-2.30").is_some_and(|x| (x - 0.770).abs() < 0.005), "{u:?}");
        assert!(u.line.contains("NCCL 2.23-2.26's choice predicts its 8 rows of 1 MiB and more at rms 19% against 2.30's 77%"), "{}", u.line);
        let given = fit(&[("nccl_version".into(), "2.30".into())]);
        assert!(given.unnamed_release.is_none());
        assert_eq!(f.fitted, given.fitted);
        assert_eq!(f.residuals.iter().map(|r| r.predicted).collect::<Vec<_>>(), given.residuals.iter().map(|r| r.predicted).collect::<Vec<_>>());
    }

    /// A paste that prints its release (Alps, nccl-library=23007) is fitted under it and gets no
    /// such report.
    #[test]
    fn a_paste_with_its_release_printed_gets_none() {
        let m = crate::topology::Machine::load(&bench("machines/alps-gh200.yaml")).unwrap();
        let text = std::fs::read_to_string(bench("data/heldout/alps-gh200-2x1-sarus.txt")).unwrap();
        let f = nccl_fit::fit(&m, &text, "sarus.txt", "maxmin", &[], false, &nccl_fit::RunSettings::default()).unwrap();
        assert_eq!(f.runs[0].nccl_version, "2.30");
        assert!(f.unnamed_release.is_none());
    }
}
