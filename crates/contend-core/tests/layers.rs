//! The crate's layers only point down (docs/design.md, "Layers"): every `crate::x` a module
//! names outside its tests is at its own layer or below. A new upward edge fails here with the
//! file and line, before it becomes a cycle.

use std::path::{Path, PathBuf};

/// Lowest first; a module may use its own layer's and those above it in this list. Modules on
/// one line are one layer and do not use each other.
const LAYERS: &[&[&str]] = &[
    &["units", "terminal"],
    &["keymap", "heap"],
    &["yaml_bounds"],
    &["error"],
    &["interrupt"],
    &["csv"],
    &["params"],
    &["topology"],
    &["datatype"],
    &["workload"],
    &["flow"],
    &["model"],
    &["sim"],
    &["report"],
    // What contend knows of external benchmarks (their output, their definitions).
    &["tools"],
    // Beside the door: the searches, the importers, the commands built on the executor, the
    // patterns `generate` writes, and NCCL's collectives (which rank programs of a scenario call).
    &["schedule", "import", "datatype_report", "stencil", "compare", "nccl", "generate"],
    &["scenario"],
    &["calibrate"],
    &["api"],
];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The crate's own code of a file: test files and everything from `#[cfg(test)]` on left out
/// (tests may use any layer to build their cases), comments too.
fn own_code(path: &Path, text: &str) -> Vec<(usize, String)> {
    let name = path.file_name().unwrap().to_string_lossy();
    if name == "tests.rs" || name.ends_with("_tests.rs") {
        return Vec::new();
    }
    text.lines()
        .enumerate()
        .take_while(|(_, l)| !l.trim_start().starts_with("#[cfg(test)]"))
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
        .map(|(i, l)| (i + 1, l.to_string()))
        .collect()
}

#[test]
fn layers_only_point_down() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    all.sort();
    let mut upward = Vec::new();
    for path in &all {
        let rel = path.strip_prefix(&src).unwrap();
        let first = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        if first == "lib" {
            continue;
        }
        let Some(own) = layer(&first) else {
            panic!("src/{}: module {first} is in no layer; add it to LAYERS here and to docs/design.md", rel.display());
        };
        let text = std::fs::read_to_string(path).unwrap();
        for (line, code) in own_code(path, &text) {
            for (k, _) in code.match_indices("crate::") {
                let used: String = code[k + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if used == first {
                    continue;
                }
                match layer(&used) {
                    Some(l) if l > own || (l == own && used != first) => {
                        upward.push(format!("src/{}:{line}: {first} uses {used}: {}", rel.display(), code.trim()))
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(upward.is_empty(), "edges that point up or across a layer:\n{}", upward.join("\n"));
}

#[test]
fn every_module_is_in_a_layer() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    for line in lib.lines().filter(|l| l.trim_start().starts_with("pub mod ") || l.trim_start().starts_with("mod ")) {
        let name = line.split_whitespace().last().unwrap().trim_end_matches(';');
        assert!(layer(name).is_some(), "module {name} is in no layer; add it to LAYERS in tests/layers.rs and to docs/design.md");
    }
}
