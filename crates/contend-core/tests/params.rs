//! Every parameter table contend declares: its defaults read by their own kinds, and no name
//! declared twice in one table (a default that does not parse would panic at the first use).

use contend_core::api::param_tables;
use contend_core::params::Values;
use std::collections::HashSet;

#[test]
fn every_table_reads_its_own_defaults() {
    let tables = param_tables();
    assert!(tables.len() >= 14, "models, NCCL, datatype, stencil and the skeletons: {}", tables.len());
    for (owner, table) in tables {
        let mut names = HashSet::new();
        for p in table {
            assert!(names.insert(p.name), "{owner}: {} declared twice", p.name);
            assert!(!p.help.is_empty(), "{owner}: {} has no help", p.name);
        }
        Values::defaults(table);
    }
}

/// docs/models.md's parameter tables list each model's parameters with the defaults the
/// registry declares (a row may name several: `a`, `b` | 1, 2), so the docs cannot drift.
#[test]
fn the_models_doc_gives_every_parameter_its_declared_default() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/models.md")).unwrap();
    let rows: Vec<(Vec<String>, Vec<String>)> = doc
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.strip_prefix('|')?.split('|').map(str::trim).collect();
            let names: Vec<String> = cells.first()?.split(',').map(|n| n.trim().trim_matches('`').to_string()).collect();
            let defaults: Vec<String> = cells.get(1)?.split(", ").map(|d| d.trim().trim_matches('`').to_string()).collect();
            Some((names, defaults))
        })
        .collect();
    for m in contend_core::api::models() {
        for p in m.params.iter().filter(|p| !p.derived) {
            let row = rows.iter().find(|(names, _)| names.iter().any(|n| n == p.name));
            let Some((names, defaults)) = row else { panic!("docs/models.md has no row for {}'s {}", m.name, p.name) };
            let i = names.iter().position(|n| n == p.name).unwrap();
            let documented = defaults.get(i).or(defaults.first()).unwrap();
            assert_eq!(documented, p.default, "docs/models.md: {}'s {} default", m.name, p.name);
        }
    }
}
