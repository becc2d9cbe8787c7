//! Python binding: thin wrappers that pass JSON text both ways. The Python package
//! (python/contend) turns it into objects and DataFrames.
