//! The bounds refuse what they must, quickly, and nothing a person writes.

use super::{check, MAX_FLOW_DEPTH};

fn nested(depth: usize) -> String {
    format!("transfers: {}{}\n", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn flow_nesting_past_the_bound_is_refused_on_its_line() {
    assert!(check(&nested(MAX_FLOW_DEPTH)).is_ok());
    let e = check(&format!("a: 1\n{}", nested(MAX_FLOW_DEPTH + 1))).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.problem.contains("nested more than 64 levels"), "{}", e.problem);
    let e = check(&format!("x: {}1{}\n", "{a: ".repeat(100), "}".repeat(100))).unwrap_err();
    assert!(e.problem.contains("nested"), "{}", e.problem);
}

#[test]
fn a_very_deep_document_is_refused_in_linear_time() {
    // 400 KB of brackets: libyaml alone takes minutes on it.
    // (Were it handed to libyaml, this test would take minutes.)
    let text = nested(200_000);
    assert!(check(&text).is_err());
    // The same through the parser the engine uses: refused before libyaml sees it.
    let e = crate::error::parse_document::<crate::workload::WorkloadSpec>(&text, "deep.yaml").unwrap_err().to_string();
    assert!(e.starts_with("deep.yaml: line 1: the YAML is nested"), "{e}");
}

#[test]
fn brackets_that_are_text_do_not_count() {
    let many = "[".repeat(200);
    for text in [
        format!("name: \"{many}\"\n"),
        format!("name: '{many}'\n"),
        format!("name: a{many}\n"),
        format!("# {many}\nname: x\n"),
        format!("name: x # {many}\n"),
        format!("description: |\n  {many}\n  more\nname: x\n"),
        format!("- key: >-\n    {many}\n  other: 1\n"),
        format!("transfers: [\"{many}\", '{many}']\n"),
        // A quote inside a plain scalar is text; the brackets after it are plain text too.
        format!("name: it's {many}\n"),
    ] {
        assert!(check(&text).is_ok(), "refused: {text}");
    }
}

#[test]
fn brackets_cannot_hide_behind_what_looks_like_text() {
    let deep = nested(100);
    // A block scalar ends where a line is no deeper than its key: what follows is structure.
    assert!(check(&format!("- key: |\n    text\n  other: {}", &deep["transfers: ".len()..])).is_err());
    // A quote on a line that may continue the plain scalar above is plain text, not a string to skip.
    assert!(check(&format!("a: b\n  \"x\n{deep}  y\"\n")).is_err());
    // A comment mark inside a string is not a comment.
    assert!(check(&format!("a: \"b # c\" \n{deep}")).is_err());
    // A tag or an anchor ends before a bracket.
    assert!(check(&format!("a: !!seq{}", &deep["transfers: ".len()..])).is_err());
}

fn laughs(levels: usize) -> String {
    let mut s = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..levels {
        s += &format!("a{i}: &a{i} [{}]\n", vec![format!("*a{}", i - 1); 10].join(", "));
    }
    s
}

#[test]
fn alias_bombs_are_refused() {
    // 10^6 values from 7 lines, 10^9 from 10.
    let e = check(&laughs(10)).unwrap_err();
    assert!(e.problem.contains("aliases (*name) expand to more than"), "{}", e.problem);
    // Block anchors count their lines.
    let mut s = String::from("base: &b\n");
    for i in 0..1000 {
        s += &format!("  k{i}: v\n");
    }
    s += "uses:\n";
    for _ in 0..2000 {
        s += "  - *b\n";
    }
    assert!(check(&s).is_err());
    // A long list of small aliases and a few uses of a big anchor are fine.
    assert!(check(&laughs(4)).is_ok());
    let mut s = String::from("t: &t {src: GPU0, dst: GPU1, size: 1MiB}\nall:\n");
    for _ in 0..10_000 {
        s += "  - *t\n";
    }
    assert!(check(&s).is_ok());
}

#[test]
fn every_file_shipped_passes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    let mut dirs = vec![root.join("presets"), root.join("../../examples"), root.join("../../python/contend/data")];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml" || x == "json") {
                let text = std::fs::read_to_string(&p).unwrap();
                assert!(check(&text).is_ok(), "{} refused: {:?}", p.display(), check(&text));
                seen += 1;
            }
        }
    }
    assert!(seen > 20, "only {seen} files found");
}
