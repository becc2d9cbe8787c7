//! A run's link utilisation: the report's link table (`report::link_table`), busiest first,
//! with each link's busy share of the makespan; bounded to the busiest few unless every link
//! is asked for, so that a 2,048-GPU run's report stays small.

use crate::report::LinkTable;
use serde::Serialize;

/// Links a run reports by default, and at most on request (all of them with `detail`).
pub const DEFAULT_TOP_LINKS: usize = 10;
pub const MAX_TOP_LINKS: usize = 1000;

/// The link table's columns, busiest first, and one more.
#[derive(Debug, Default, Serialize)]
pub struct RunLinks {
    #[serde(flatten)]
    pub table: LinkTable,
    /// busy_s over the run's makespan, in [0, 1]: the share of the run during which at least
    /// one message moved bytes through the link (under `packet`, the share spent sending).
    pub busy_share: Vec<f64>,
}

/// The `top` busiest links of `all` (every one with `None`), ordered by busy time, then bytes,
/// then name, so that equal links come out the same every run.
pub fn busiest(all: LinkTable, makespan_s: f64, top: Option<usize>) -> RunLinks {
    let mut order: Vec<usize> = (0..all.name.len()).collect();
    order.sort_by(|&a, &b| all.busy_s[b].total_cmp(&all.busy_s[a]).then(all.bytes[b].total_cmp(&all.bytes[a])).then_with(|| all.name[a].cmp(&all.name[b])));
    order.truncate(top.unwrap_or(usize::MAX));
    let mut out = RunLinks::default();
    for i in order {
        let t = &mut out.table;
        t.name.push(all.name[i].clone());
        t.capacity_bps.push(all.capacity_bps[i]);
        t.bytes.push(all.bytes[i]);
        t.busy_s.push(all.busy_s[i]);
        t.peak_utilisation.push(all.peak_utilisation[i]);
        out.busy_share.push(if makespan_s > 0.0 { all.busy_s[i] / makespan_s } else { 0.0 });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(&str, f64, f64)]) -> LinkTable {
        let mut t = LinkTable::default();
        for &(n, bytes, busy) in rows {
            t.name.push(n.into());
            t.capacity_bps.push(1e9);
            t.bytes.push(bytes);
            t.busy_s.push(busy);
            t.peak_utilisation.push(1.0);
        }
        t
    }

    #[test]
    fn busiest_first_ties_by_bytes_then_name_and_bounded() {
        let t = || table(&[("c", 10.0, 1.0), ("a", 5.0, 2.0), ("b", 20.0, 1.0), ("d", 20.0, 1.0), ("e", 1.0, 0.5)]);
        let top = busiest(t(), 4.0, Some(3));
        assert_eq!(top.table.name, ["a", "b", "d"]);
        assert_eq!(top.busy_share, [0.5, 0.25, 0.25]);
        let all = busiest(t(), 4.0, None);
        assert_eq!(all.table.name, ["a", "b", "d", "c", "e"]);
        assert_eq!(busiest(t(), 4.0, Some(0)).table.name.len(), 0);
    }
}
