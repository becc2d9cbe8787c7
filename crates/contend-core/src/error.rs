//! One error type for the whole engine. `Input` errors are the user's to fix (exit code 2);
//! `Runtime` errors are ours or the model's (exit code 1).

use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// Something a user wrote is wrong: where it is, what is wrong and how to fix it.
    Input {
        file: String,
        field: String,
        problem: String,
    },
    /// A model cannot handle this machine or workload; says which model would.
    Unsupported {
        model: String,
        reason: String,
    },
    Runtime(String),
    /// The user asked the work to stop (Ctrl-C; `interrupt`).
    Interrupted,
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub fn input(file: impl Into<String>, field: impl Into<String>, problem: impl Into<String>) -> Error {
        Error::Input { file: file.into(), field: field.into(), problem: problem.into() }
    }
    /// The same mistake, naming `to` where it named `from`.
    pub fn reaimed(self, from: &str, to: &str) -> Error {
        match self {
            Error::Input { file, field, problem } if file == from => Error::Input { file: to.into(), field, problem },
            e => e,
        }
    }
    pub fn is_user_error(&self) -> bool {
        !matches!(self, Error::Runtime(_))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Input { file, field, problem } if field.is_empty() => write!(f, "{file}: {problem}"),
            Error::Input { file, field, problem } => write!(f, "{file}: {field}: {problem}"),
            Error::Unsupported { model, reason } => write!(f, "model {model} does not apply: {reason}"),
            Error::Runtime(m) => write!(f, "{m}"),
            Error::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for Error {}

/// Parse YAML or JSON text into `T`, reporting the failing path ("links[3].bandwidth").
pub fn parse_document<T: serde::de::DeserializeOwned>(text: &str, file: &str) -> Result<T> {
    // JSON text (what the Python API and other programs hand over) parses an order of magnitude
    // faster with a JSON parser. Whatever that parser does not take goes to the YAML parser,
    // which accepts JSON too and whose messages name the failing path.
    if text.trim_start().starts_with(['{', '[']) {
        if let Ok(v) = serde_json::from_str(text) {
            return Ok(v);
        }
    }
    // Then bounds: past them libyaml takes time quadratic in the nesting, or aliases memory
    // (serde_json, linear and alias-free, refuses past 128 levels by itself).
    crate::yaml_bounds::check(text).map_err(|r| Error::input(file, format!("line {}", r.line), r.problem))?;
    // JSON is a subset of YAML 1.2, so one parser serves both formats.
    let de = serde_yaml::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // serde_yaml appends " at line L column C"; keep it, it helps find the spot.
        let field = if path == "." { String::new() } else { short_path(&path) };
        // serde_yaml names the path itself too (the field's, or its parent's): say it once.
        let inner = match inner.split_once(": ") {
            Some((named, rest)) if !named.is_empty() && field.starts_with(named) && !named.contains(' ') => rest,
            _ => &inner,
        };
        Error::input(file, field, tab_indent(text, inner).unwrap_or_else(|| tidy_serde_message(inner)))
    })
}

/// A tab where libyaml expected a token ("found character that cannot start any token at line
/// L column C"), said as the fix: YAML indents with spaces only (YAML 1.2, 6.1: "tab characters
/// must not be used in indentation"), and editors that insert tabs are the usual cause.
fn tab_indent(text: &str, message: &str) -> Option<String> {
    let (_, at) = message.split_once("cannot start any token at line ")?;
    let (line, rest) = at.split_once(" column ")?;
    let column: usize = rest.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()?;
    let found = text.lines().nth(line.parse::<usize>().ok()?.checked_sub(1)?)?.chars().nth(column.checked_sub(1)?)?;
    (found == '\t').then(|| format!("a tab at line {line} column {column}; YAML indents with spaces only: replace the tabs with spaces"))
}

/// A path nested past what anyone reads ("type.contiguous.of.contiguous.of…") keeps its first
/// and last steps and says how many it left out, so the error stays a line.
fn short_path(path: &str) -> String {
    const KEEP: usize = 6;
    let steps: Vec<&str> = path.split('.').collect();
    if steps.len() <= 2 * KEEP + 1 {
        return path.to_string();
    }
    format!("{}.…({} more).{}", steps[..KEEP].join("."), steps.len() - 2 * KEEP, steps[steps.len() - KEEP..].join("."))
}

fn tidy_serde_message(m: &str) -> String {
    let m = m.trim();
    // serde_yaml's own bounds (nesting 128 deep, aliases used 100 times per value written), said
    // as what to change.
    if let Some(rest) = m.strip_prefix("recursion limit exceeded") {
        return format!("the YAML is nested more than 128 levels deep{rest}; flatten it");
    }
    if let Some(rest) = m.strip_prefix("repetition limit exceeded") {
        return format!("the YAML's aliases (*name) expand too many times{rest}; write the values out or use fewer aliases");
    }
    // "missing field `link`" names what is wrong, not the fix: say to add it and where every
    // field of each kind of file is listed.
    if let Some((name, at)) = m.strip_prefix("missing field `").and_then(|r| r.split_once('`')) {
        return format!("missing field `{name}`{at}; add `{name}:` (`contend schema KIND` lists every field of each kind of file)");
    }
    if let Some(rest) = m.strip_prefix("unknown field ") {
        // "unknown field `x`, expected one of `a`, `b`" names the fix; the nearest known name first.
        let names: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
        if let Some((&typed, known)) = names.split_first() {
            if let Some(near) = nearest(typed, known) {
                let (body, at) = rest.rsplit_once(" at line ").map_or((rest, String::new()), |(b, a)| (b, format!(" at line {a}")));
                let expected = body.split_once(", ").map_or("", |(_, e)| e);
                return format!("unknown field `{typed}`; did you mean `{near}`? ({expected}){at}");
            }
        }
        return format!("unknown field {rest}");
    }
    m.to_string()
}

/// The known name a typo most likely meant: the one fewest single-letter edits (a letter
/// added, dropped, changed, or two swapped) away, if that is at most a third of its length.
fn nearest<'a>(typed: &str, known: &[&'a str]) -> Option<&'a str> {
    let distance = |a: &str, b: &str| {
        let (a, b): (Vec<char>, Vec<char>) = (a.to_lowercase().chars().collect(), b.to_lowercase().chars().collect());
        let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        for (j, cell) in d[0].iter_mut().enumerate() {
            *cell = j;
        }
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let change = usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = (d[i - 1][j] + 1).min(d[i][j - 1] + 1).min(d[i - 1][j - 1] + change);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
                }
            }
        }
        d[a.len()][b.len()]
    };
    known
        .iter()
        .map(|&k| (distance(typed, k), k))
        .filter(|&(d, k)| d > 0 && 3 * d <= k.chars().count().max(typed.chars().count()))
        .min_by_key(|&(d, _)| d)
        .map(|(_, k)| k)
}

/// Read a file for a user, with a clear message when it cannot be read; a byte-order mark
/// (Windows editors write one) is dropped, as every reader expects the text to start at once.
pub fn read_user_file(path: &str) -> Result<String> {
    read_user_text(path, "a YAML or JSON file")
}

/// `read_user_file` for a file of another kind: `expected` says what to give instead of a
/// binary file or text that is not UTF-8.
pub fn read_user_text(path: &str, expected: &str) -> Result<String> {
    let cannot = |e: std::io::Error| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound => "no such file; check the path".to_string(),
            std::io::ErrorKind::PermissionDenied => "permission denied; make the file readable".to_string(),
            std::io::ErrorKind::IsADirectory => format!("is a folder; give {expected}"),
            _ => format!("cannot be read ({e})"),
        };
        Error::input(path, "", why)
    };
    let bytes = std::fs::read(path).map_err(cannot)?;
    if let Some(text) = utf16_text(&bytes) {
        return Ok(text);
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let b = e.as_bytes();
        // NUL bytes or many control bytes in its first kilobytes: a binary file (an image, an
        // archive, a compiled program), not text in another encoding.
        let head = &b[..b.len().min(8192)];
        let control = head.iter().filter(|&&c| c < 0x20 && !matches!(c, b'\n' | b'\r' | b'\t')).count();
        let why = if head.contains(&0) || control * 10 > head.len() {
            format!("is a binary file, not text; give {expected}")
        } else {
            format!("is not UTF-8 text (byte {}); save it as UTF-8, or give {expected}", e.utf8_error().valid_up_to())
        };
        Error::input(path, "", why)
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// Text saved as UTF-16, as Windows PowerShell's `>` and `Out-File` write it (a byte-order mark,
/// then two bytes a character), read as the text it is: nccl-tests and nvidia-smi output
/// redirected there is what users paste. `None` when the bytes are not UTF-16 text: no mark and
/// no NUL on one side of nearly every pair, UTF-32's mark, a broken character, or control bytes
/// where text has none (a binary file that happens to start as UTF-16 would; the caller then
/// says it is binary).
fn utf16_text(bytes: &[u8]) -> Option<String> {
    let little = match bytes {
        [0xFF, 0xFE, 0, 0, ..] => return None,
        [0xFF, 0xFE, ..] => true,
        [0xFE, 0xFF, ..] => false,
        // No mark: ASCII text in UTF-16 has a NUL as every other byte; any text has a NUL on one
        // side of most of its pairs and almost never on the other.
        _ if bytes.len() >= 8 && bytes.len().is_multiple_of(2) => {
            let head = &bytes[..bytes.len().min(8192)];
            let pairs = head.len() / 2;
            let nul_odd = head.chunks_exact(2).filter(|p| p[1] == 0 && p[0] != 0).count();
            let nul_even = head.chunks_exact(2).filter(|p| p[0] == 0 && p[1] != 0).count();
            if nul_odd * 10 >= pairs * 9 {
                true
            } else if nul_even * 10 >= pairs * 9 {
                false
            } else {
                return None;
            }
        }
        _ => return None,
    };
    let units = bytes.chunks_exact(2).map(|p| if little { u16::from_le_bytes([p[0], p[1]]) } else { u16::from_be_bytes([p[0], p[1]]) });
    let text = char::decode_utf16(units).collect::<std::result::Result<String, _>>().ok()?;
    let text = text.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(text);
    // The control test `read_user_text` gives UTF-8 bytes, on the decoded characters.
    let head: Vec<char> = text.chars().take(4096).collect();
    let control = head.iter().filter(|&&c| (c as u32) < 0x20 && !matches!(c, '\n' | '\r' | '\t')).count();
    (control * 10 <= head.len()).then_some(text)
}

#[cfg(test)]
mod tests {
    /// A missing field says to add it and where the fields are listed (a cluster file without
    /// `link`: "missing field `link`" named no fix).
    #[test]
    fn a_missing_field_says_to_add_it() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct S {
            name: String,
            link: u32,
        }
        let e = super::parse_document::<S>("name: c\n", "c.yaml").unwrap_err().to_string();
        assert_eq!(e, "c.yaml: missing field `link`; add `link:` (`contend schema KIND` lists every field of each kind of file)");
    }

    /// PowerShell's UTF-16 output (with its mark, or without one) reads as the text it holds;
    /// a binary file is still refused as one.
    #[test]
    fn utf16_text_reads_as_text() {
        let text = "# nccl-tests\r\n  1048576  262144  float  sum\r\n";
        let le: Vec<u8> = [0xFF, 0xFE].into_iter().chain(text.encode_utf16().flat_map(u16::to_le_bytes)).collect();
        let be: Vec<u8> = [0xFE, 0xFF].into_iter().chain(text.encode_utf16().flat_map(u16::to_be_bytes)).collect();
        let bare: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let dir = std::env::temp_dir().join(format!("contend-utf16-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in [("le.txt", &le), ("be.txt", &be), ("bare.txt", &bare)] {
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            assert_eq!(super::read_user_text(p.to_str().unwrap(), "text").unwrap(), text, "{name}");
        }
        let p = dir.join("png.bin");
        std::fs::write(&p, [0x89, b'P', b'N', b'G', 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 1, 0]).unwrap();
        let e = super::read_user_text(p.to_str().unwrap(), "text").unwrap_err().to_string();
        assert!(e.contains("is a binary file"), "{e}");
        // Bytes that start with UTF-16's mark but are not UTF-16 text (a broken character, UTF-32's
        // mark, little-endian integers): binary, as any other.
        let ints: Vec<u8> = [0xFF, 0xFE].into_iter().chain((1u16..200).flat_map(|k| (k % 7).to_le_bytes())).collect();
        for (name, bytes) in [("broken.txt", vec![0xFF, 0xFE, 0x00, 0xD8, b'a', 0]), ("utf32.txt", vec![0xFF, 0xFE, 0, 0, b'a', 0, 0, 0]), ("ints.bin", ints)] {
            let p = dir.join(name);
            std::fs::write(&p, bytes).unwrap();
            let e = super::read_user_text(p.to_str().unwrap(), "text").unwrap_err().to_string();
            assert!(e.contains("is a binary file"), "{name}: {e}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A value of the wrong type is named once: the file, the path, what was expected.
    #[test]
    fn wrong_types_name_their_field_once() {
        let e = crate::topology::Machine::from_text("name: m\ndevices:\n  - {name: GPU0, kind: gpu, copy_engines: two}\nlinks: []\n", "m.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("m.yaml: devices[0].copy_engines: invalid type: string \"two\", expected u32"), "{e}");
    }

    /// A misspelt field is named once, with the name it most likely meant and the others; a
    /// name far from every known one gets the list alone.
    #[test]
    fn a_misspelt_field_is_named_once_with_the_likely_name() {
        let w = |yaml: &str| crate::workload::WorkloadSpec::from_text(yaml, "t.yaml").unwrap_err().to_string();
        let e = w("transfers:\n  - {src: GPU0, dst: GPU1, szie: 1MiB}\n");
        assert!(e.starts_with("t.yaml: transfers[0].szie: unknown field `szie`; did you mean `size`? (expected one of `name`, `src`"), "{e}");
        assert!(e.ends_with("`rate_group`) at line 2 column 28") && e.matches("transfers[0]").count() == 1, "{e}");
        let e = w("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, colour: red}\n");
        assert!(e.contains("transfers[0].colour: unknown field `colour`, expected one of") && !e.contains("did you mean"), "{e}");
        let e = crate::topology::Machine::from_text("name: m\ndevcies: []\nlinks: []\n", "m.yaml").unwrap_err().to_string();
        assert!(e.contains("unknown field `devcies`; did you mean `devices`?"), "{e}");
        assert_eq!(super::nearest("lanse", &["a", "lanes", "latency"]), Some("lanes"));
        assert_eq!(super::nearest("bw", &["bandwidth", "b"]), None);
    }

    #[test]
    fn a_folder_given_for_a_file_says_what_to_give() {
        let dir = std::env::temp_dir();
        let e = super::read_user_file(dir.to_str().unwrap()).unwrap_err().to_string();
        assert_eq!(e, format!("{}: is a folder; give a YAML or JSON file", dir.display()));
    }

    #[test]
    fn a_tab_in_the_indentation_is_said_as_the_fix() {
        let e = crate::workload::WorkloadSpec::from_text("transfers:\n\t- {src: GPU0, dst: GPU1, size: 1GiB}\n", "t.yaml").unwrap_err().to_string();
        assert_eq!(e, "t.yaml: transfers: a tab at line 2 column 1; YAML indents with spaces only: replace the tabs with spaces");
        let e = crate::topology::Machine::from_text("name: m\ndevices:\n  - {name: GPU0, kind: gpu}\n\t- {name: GPU1, kind: gpu}\n", "m.yaml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a tab at line 4 column 1; YAML indents with spaces only"), "{e}");
        // A character other than a tab that cannot start a token is said as libyaml says it.
        let e = crate::workload::WorkloadSpec::from_text("transfers:\n  - @x\n", "t.yaml").unwrap_err().to_string();
        assert!(e.contains("cannot start any token"), "{e}");
    }

    /// Nesting past serde_yaml's recursion limit is said as what to change, with the path cut short.
    #[test]
    fn deep_nesting_is_one_short_line() {
        let mut text = String::from("type:\n");
        let mut indent = String::from("  ");
        for _ in 0..100 {
            text += &format!("{indent}contiguous:\n{indent}  count: 1\n{indent}  of:\n");
            indent += "    ";
        }
        text += &format!("{indent}double\n");
        let e = crate::datatype::Datatype::from_text(&text, "dt.yaml").unwrap_err().to_string();
        assert!(e.starts_with("dt.yaml: type.contiguous.of.contiguous.of.contiguous.…("), "{e}");
        assert!(e.contains("nested more than 128 levels deep") && e.ends_with("flatten it") && e.len() < 250, "{e}");
    }
}
