//! The one-pass reader of regular transfers files gives what the YAML parser gives, or leaves
//! the text to it: on every example, on files written by `to_yaml` with every field, on cases
//! chosen to look regular and mean something else to YAML, and on random damage.

use super::regular;
use super::{generate_rng, random_graph, Access, Mechanism, TransferRef, TransferSpec, WorkloadSpec};
use crate::datatype::Method;
use crate::error::parse_document;
use crate::units::{Bandwidth, Bytes, Time};

/// Whether the fast path took `text`; when it did, the parser must read the same transfers.
fn agree(text: &str) -> bool {
    let fast = regular::parse(text);
    if let Some(f) = &fast {
        let full: WorkloadSpec = parse_document(text, "t.yaml").unwrap_or_else(|e| panic!("the parser refuses ({e}) what the fast path read:\n{text}"));
        assert_eq!(f.transfers, full.transfers, "{text}");
        assert!(full.datatypes.is_empty() && full.kernels.is_empty(), "{text}");
    }
    fast.is_some()
}

/// Transfers with every field the fast path reads, in the forms `to_yaml` writes.
fn every_field(n: usize, seed: u64) -> WorkloadSpec {
    let gpus: Vec<String> = (0..8).map(|i| format!("GPU{i}")).collect();
    let mut rng = generate_rng(seed);
    let mut transfers = random_graph(&gpus, n, Bytes(1 << 20), seed);
    for (i, t) in transfers.iter_mut().enumerate() {
        let r = rng.next_u64();
        if r.is_multiple_of(3) {
            t.name = Some(format!("x{i}"));
        }
        t.size = Bytes(1 + r % (1 << 40));
        if !r.is_multiple_of(5) {
            t.start = Some(Time(r % 1_000_000_000));
        }
        if i > 0 && r.is_multiple_of(4) {
            t.after = vec![TransferRef::Index((r as usize / 7) % i)];
            if i > 1 {
                t.after.push(TransferRef::Index(i - 1));
            }
        }
        if r.is_multiple_of(7) {
            t.overhead = Some(Time(1_500_000));
        }
        t.mechanism = [None, Some(Mechanism::P2p), Some(Mechanism::Staged), Some(Mechanism::Direct)][(r >> 8) as usize % 4];
        t.access = [None, Some(Access::Read), Some(Access::Write)][(r >> 12) as usize % 3];
        t.method = [None, Some(Method::Pack), Some(Method::ZeroCopy)][(r >> 16) as usize % 3];
        if r.is_multiple_of(11) {
            t.via = vec!["CPU0".into()];
        }
        if r.is_multiple_of(13) {
            t.datatype = Some("vector-64".into());
        }
        if r.is_multiple_of(17) {
            t.max_rate = Some(Bandwidth((1 + r % 1000) as f64 * 1e8));
            if r.is_multiple_of(2) {
                t.rate_group = Some(format!("g{}", r % 5));
            }
        }
    }
    // Names in `after` too, once some transfers have names.
    for i in 1..transfers.len() {
        if let Some(n) = transfers[i - 1].name.clone() {
            transfers[i].after.push(TransferRef::Name(n));
        }
    }
    WorkloadSpec { transfers, ..WorkloadSpec::default() }
}

#[test]
fn files_of_the_regular_shape_read_the_same_both_ways() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut taken = 0;
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "yaml") {
                let text = std::fs::read_to_string(&p).unwrap();
                if let Ok(full) = parse_document::<WorkloadSpec>(&text, "t.yaml") {
                    // Files with datatypes or kernels are not of the regular shape.
                    let regular = full.datatypes.is_empty() && full.kernels.is_empty();
                    assert_eq!(agree(&text), regular, "{}", p.display());
                    taken += regular as usize;
                }
            }
        }
    }
    assert!(taken >= 1);
    for seed in 0..5 {
        let spec = every_field(300, seed);
        let text = spec.to_yaml();
        assert!(agree(&text), "to_yaml's output went to the parser:\n{text}");
        assert_eq!(regular::parse(&text).unwrap().transfers, spec.transfers);
    }
    // A group name that is more than a plain word is written quoted and reads back the same.
    let mut spec = every_field(3, 0);
    spec.transfers[0].rate_group = Some("a,b {c}".into());
    spec.transfers[0].max_rate = spec.transfers[1].max_rate.or(spec.transfers[0].max_rate);
    let back = parse_document::<WorkloadSpec>(&spec.to_yaml(), "t.yaml").unwrap();
    assert_eq!(back.transfers[0].rate_group.as_deref(), Some("a,b {c}"));
    // Spacing YAML allows, comments, CRLF line ends, entries at the key's indentation.
    for text in [
        "# a comment\n\ntransfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n\n  # another\n  - {src: GPU1,dst: GPU0 , size:   2MiB }  \n",
        "transfers:\r\n- {src: GPU0, dst: GPU1, size: 7.7KiB, start: 7.7µs, after: []}\r\n",
        "transfers:\n    -   { src: GPU0, dst: GPU1, size: 1MiB, after: [ 0 ] }",
    ] {
        assert!(agree(text), "went to the parser:\n{text}");
    }
}

#[test]
fn what_looks_regular_but_means_otherwise_goes_to_the_parser() {
    let one = |fields: &str| format!("transfers:\n  - {{{fields}}}\n");
    for text in [
        one("src: GPU0, dst: GPU1, size: 1MiB, name: null"),
        one("src: GPU0, dst: GPU1, size: 1MiB, name: ~"),
        one("src: GPU0, dst: GPU1, size: 1MiB, name: true"),
        one("src: GPU0, dst: GPU1, size: 1MiB, name: 12"),
        one("src: GPU0, dst: GPU1, size: 1MiB, name: \"a\""),
        one("src: GPU0, dst: GPU1, size: 1MiB, after: [007]"),
        one("src: GPU0, dst: GPU1, size: 1MiB, after: [0x1]"),
        one("src: GPU0, dst: GPU1, size: 1MiB, after: [1, ]"),
        one("src: GPU0, dst: GPU1, size: 1MiB, after: [[1]]"),
        one("src: GPU0, dst: GPU1, size: 0x1B"),
        one("src: GPU0, dst: GPU1, size: 300"),
        one("src: GPU0, dst: GPU1, size: 1e3"),
        one("src: GPU0, dst: GPU1, size: -1MiB"),
        one("src:GPU0, dst: GPU1, size: 1MiB"),
        one("src: GPU0, dst: GPU1, size: 1MiB,"),
        one("src: GPU0, dst: GPU1, size: 1MiB, src: GPU2"),
        one("src: GPU0, dst: GPU1, size: 1MiB, colour: red"),
        one("src: GPU0, dst: GPU1"),
        one("src: &a GPU0, dst: *a, size: 1MiB"),
        one("src: GPU0, dst: GPU1, size: 1MiB, mechanism: teleport"),
        one("src: GPU0, dst: GPU1, size: 1MiB, via: CPU0"),
        one("src: GPU0\t, dst: GPU1, size: 1MiB"),
        "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB} # c\n".into(),
        "transfers:\n  - {src: GPU0, dst: GPU1,\n     size: 1MiB}\n".into(),
        "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n    - {src: GPU0, dst: GPU1, size: 1MiB}\n".into(),
        "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\nkernels: {launch: 3us}\n".into(),
        "transfers: []\n".into(),
        "transfers:\n".into(),
        "---\ntransfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n".into(),
        "{\"transfers\": [{\"src\": \"GPU0\", \"dst\": \"GPU1\", \"size\": \"1MiB\"}]}".into(),
        // A lone carriage return is a line break to YAML: the comment ends there.
        "# a\rb: c\ntransfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n".into(),
        "# a\u{2028}b: c\ntransfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n".into(),
        "# a\u{1}\ntransfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n".into(),
    ] {
        assert!(!agree(&text), "the fast path took:\n{text}");
    }
}

#[test]
fn random_damage_never_makes_the_two_readers_differ() {
    let mut bases = vec![every_field(12, 9).to_yaml()];
    bases.push(std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sc16-example.yaml")).unwrap());
    // Bytes that mean something to YAML or to the fast path, and some that mean nothing.
    let alphabet = b" \t\n\r:,-{}[]#&*!|>'\"%@`0123456789.eEabBGiMsuyn~_/?\x00";
    let mut rng = generate_rng(26);
    let (mut taken, mut cases) = (0, 0);
    for base in &bases {
        for _ in 0..2000 {
            let mut b = base.clone().into_bytes();
            for _ in 0..1 + rng.next_u64() % 3 {
                let at = (rng.next_u64() as usize) % (b.len() + 1);
                let c = alphabet[(rng.next_u64() as usize) % alphabet.len()];
                match rng.next_u64() % 4 {
                    0 if at < b.len() => b[at] = c,
                    1 if at < b.len() => {
                        b.remove(at);
                    }
                    2 => {
                        // A line repeated or moved: duplicates and reorderings.
                        let lines: Vec<&[u8]> = b.split(|&x| x == b'\n').collect();
                        let k = (rng.next_u64() as usize) % lines.len();
                        let line = lines[k].to_vec();
                        let mut out = b.clone();
                        out.extend_from_slice(b"\n");
                        out.extend_from_slice(&line);
                        b = out;
                    }
                    _ => b.insert(at.min(b.len()), c),
                }
            }
            let Ok(text) = String::from_utf8(b) else { continue };
            cases += 1;
            if agree(&text) {
                taken += 1;
            }
        }
    }
    // Both outcomes are exercised: damage that keeps the shape, and damage the parser must see.
    assert!(taken > 100 && cases - taken > 100, "{taken} of {cases} taken by the fast path");
}

#[test]
fn a_transfer_spec_is_small() {
    // The bound: well under 1 kB a transfer once read (text aside, which is dropped).
    assert!(std::mem::size_of::<TransferSpec>() <= 256, "{}", std::mem::size_of::<TransferSpec>());
}
