//! Non-contiguous messages: MPI derived datatypes (spec), their canonical flattened form
//! (flatten), statistics computed once per type (stats), and the costs of the ways to send
//! them between GPUs (cost). How a method becomes operations of the one executor is
//! `flow::methods`.

pub mod cost;
pub mod flatten;
pub mod spec;
pub mod stats;
#[cfg(test)]
mod tests;

pub use cost::{KernelParams, Method, PathClass};
pub use spec::{DatatypeSpec, TypeSpec};
pub use stats::{Message, Stats};

use crate::error::{parse_document, read_user_file, Error, Result};
use flatten::Flat;

const PRESETS: &[(&str, &str)] = &[
    ("milc-zdown", include_str!("../../presets/datatypes/milc-zdown.yaml")),
    ("cosmo-halo-ew", include_str!("../../presets/datatypes/cosmo-halo-ew.yaml")),
    ("cosmo-halo-ns", include_str!("../../presets/datatypes/cosmo-halo-ns.yaml")),
    ("wrf-halo", include_str!("../../presets/datatypes/wrf-halo.yaml")),
    ("jacobi-column", include_str!("../../presets/datatypes/jacobi-column.yaml")),
    ("jacobi-row", include_str!("../../presets/datatypes/jacobi-row.yaml")),
];

pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.0).collect()
}

/// A datatype with its flattened form and statistics, computed once.
#[derive(Clone, Debug)]
pub struct Datatype {
    pub name: String,
    pub description: String,
    pub flat: Flat,
    pub stats: Stats,
}

impl Datatype {
    /// A preset name or a path to a YAML/JSON datatype file.
    pub fn load(source: &str) -> Result<Datatype> {
        if let Some((_, text)) = PRESETS.iter().find(|p| p.0 == source) {
            return Datatype::from_text(text, &format!("preset {source}"));
        }
        if std::path::Path::new(source).exists() {
            return Datatype::from_text(&read_user_file(source)?, source);
        }
        Err(Error::input(source, "", format!("is neither a datatype preset nor a file; presets: {}", preset_names().join(", "))))
    }

    pub fn from_text(text: &str, origin: &str) -> Result<Datatype> {
        let spec: DatatypeSpec = parse_document(text, origin)?;
        let mut d = Datatype::from_type(&spec.ty, origin, "type")?;
        d.name = if spec.name.is_empty() { origin.to_string() } else { spec.name };
        d.description = spec.description;
        Ok(d)
    }

    /// Flatten `ty`, found at `field` of `origin` (for error lines).
    pub fn from_type(ty: &TypeSpec, origin: &str, field: &str) -> Result<Datatype> {
        let flat = flatten::flatten(ty, field).map_err(|(f, problem)| Error::input(origin, f, problem))?;
        if flat.size == 0 {
            return Err(Error::input(origin, field, "holds no bytes; give every count and blocklength at least 1"));
        }
        let stats = Stats::of(&flat);
        Ok(Datatype { name: field.to_string(), description: String::new(), flat, stats })
    }
}
