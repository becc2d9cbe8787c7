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
