//! `contend schema cluster` describes the files the reader takes: every cluster preset and
//! example validates against it. No JSON Schema validator is a dependency, so the check here
//! walks the schema's objects (`$ref`s resolved, any of `anyOf`/`oneOf` branches): each
//! object's required keys are present and, where it allows no others, no other key is.

use contend_core::api;
use contend_core::topology::{preset_names, preset_text, Machine};
use serde_json::Value;

fn resolve<'a>(root: &'a Value, node: &'a Value) -> &'a Value {
    match node.get("$ref").and_then(Value::as_str) {
        Some(r) => {
            let path = r.trim_start_matches('#').trim_start_matches('/');
            let target = path.split('/').fold(root, |v, k| &v[k]);
            resolve(root, target)
        }
        None => node,
    }
}

/// Where `value` breaks `node`'s object rules, or None.
fn violation(root: &Value, node: &Value, value: &Value, at: &str) -> Option<String> {
    let node = resolve(root, node);
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = node.get(key).and_then(Value::as_array) {
            let errs: Vec<String> = branches.iter().filter_map(|b| violation(root, b, value, at)).collect();
            if errs.len() == branches.len() {
                return Some(format!("{at}: no branch of {key} fits ({})", errs.join("; ")));
            }
        }
    }
    if let Some(all) = node.get("allOf").and_then(Value::as_array) {
        if let Some(e) = all.iter().find_map(|b| violation(root, b, value, at)) {
            return Some(e);
        }
    }
    let (Some(props), Some(obj)) = (node.get("properties").and_then(Value::as_object), value.as_object()) else {
        if let (Some(items), Some(list)) = (node.get("items"), value.as_array()) {
            return list.iter().enumerate().find_map(|(i, v)| violation(root, items, v, &format!("{at}[{i}]")));
        }
        return None;
    };
    for req in node.get("required").and_then(Value::as_array).into_iter().flatten() {
        let req = req.as_str().unwrap();
        if !obj.contains_key(req) {
            return Some(format!("{at}: required key {req} missing"));
        }
    }
    for (k, v) in obj {
        match props.get(k) {
            Some(p) => {
                if let Some(e) = violation(root, p, v, &format!("{at}.{k}")) {
                    return Some(e);
                }
            }
            None if node.get("additionalProperties") == Some(&Value::Bool(false)) => return Some(format!("{at}: key {k} is not in the schema")),
            None => {}
        }
    }
    None
}

#[test]
fn every_cluster_preset_and_example_fits_the_cluster_schema() {
    let schema: Value = serde_json::from_str(&api::schema("cluster").unwrap()).unwrap();
    assert!(schema["required"].as_array().is_some_and(|r| r.iter().any(|k| k == "fabric")), "{schema}");
    let examples = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/clusters")).unwrap();
    let mut files: Vec<(String, String)> =
        examples.map(|e| e.unwrap().path()).map(|p| (p.display().to_string(), std::fs::read_to_string(&p).unwrap())).collect();
    files.extend(preset_names().into_iter().map(|n| (format!("preset {n}"), preset_text(n).unwrap().to_string())));
    let mut clusters = 0;
    for (name, text) in &files {
        let value: Value = serde_yaml::from_str(text).unwrap();
        if value.get("fabric").is_none() {
            continue;
        }
        clusters += 1;
        assert_eq!(violation(&schema, &schema, &value, "cluster"), None, "{name}");
        // The reader takes it too (examples name their node files relative to themselves).
        if name.starts_with("preset") {
            Machine::from_text(text, name).unwrap();
        }
    }
    assert!(clusters >= 4, "{clusters} cluster files");
    // And the check bites: a key the reader refuses, a required key left out.
    let bad: Value = serde_yaml::from_str("name: x\nfabric: {fat_tree: {radix: 8, pods: 2}}\nlink: {bandwidth: 10GB/s}\nnodes: {gpus: 1}\nlinks: 3\n").unwrap();
    let e = violation(&schema, &schema, &bad, "cluster").unwrap();
    assert!(e.contains("links"), "{e}");
    let missing: Value = serde_yaml::from_str("name: x\nlink: {bandwidth: 10GB/s}\nnodes: {gpus: 1}\n").unwrap();
    assert!(violation(&schema, &schema, &missing, "cluster").unwrap().contains("fabric"));
}
