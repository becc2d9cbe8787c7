//! A small, strict XML reader for what NCCL writes: a prolog, comments, elements with quoted
//! attributes, and whitespace between them. Text content, CDATA, doctypes and entities other
//! than the five predefined ones are refused with the line they are on.

#[derive(Clone, Debug, PartialEq)]
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    pub line: usize,
}

impl Element {
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn line(&self) -> usize {
        1 + self.s[..self.i].iter().filter(|&&c| c == b'\n').count()
    }

    fn fail<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("line {}: {what}", self.line()))
    }

    fn skip_space(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn starts(&self, p: &str) -> bool {
        self.s[self.i..].starts_with(p.as_bytes())
    }

    /// Whitespace, comments and processing instructions before the next tag.
    fn skip_misc(&mut self) -> Result<(), String> {
        loop {
            self.skip_space();
            let (open, close) = if self.starts("<!--") {
                ("<!--", "-->")
            } else if self.starts("<?") {
                ("<?", "?>")
            } else {
                return Ok(());
            };
            let from = self.i + open.len();
            match self.s[from..].windows(close.len()).position(|w| w == close.as_bytes()) {
                Some(k) => self.i = from + k + close.len(),
                None => return self.fail(&format!("{open} is never closed")),
            }
        }
    }

    fn name(&mut self) -> Result<String, String> {
        let from = self.i;
        while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || b"_-:.".contains(&self.s[self.i])) {
            self.i += 1;
        }
        if from == self.i {
            return self.fail("expected a name");
        }
        Ok(String::from_utf8_lossy(&self.s[from..self.i]).into_owned())
    }

    fn value(&mut self) -> Result<String, String> {
        let q = self.s.get(self.i).copied();
        if q != Some(b'"') && q != Some(b'\'') {
            return self.fail("attribute values must be quoted");
        }
        self.i += 1;
        let from = self.i;
        while self.i < self.s.len() && Some(self.s[self.i]) != q {
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return self.fail("an attribute value is never closed");
        }
        let raw = String::from_utf8_lossy(&self.s[from..self.i]).into_owned();
        self.i += 1;
        unescape(&raw).ok_or_else(|| format!("line {}: unknown entity in \"{raw}\"", self.line()))
    }

    fn element(&mut self) -> Result<Element, String> {
        self.skip_misc()?;
        if !self.starts("<") || self.starts("</") {
            return self.fail("expected an element");
        }
        let line = self.line();
        self.i += 1;
        let name = self.name()?;
        let mut el = Element { name, attrs: Vec::new(), children: Vec::new(), line };
        loop {
            self.skip_space();
            if self.starts("/>") {
                self.i += 2;
                return Ok(el);
            }
            if self.starts(">") {
                self.i += 1;
                break;
            }
            let k = self.name()?;
            self.skip_space();
            if !self.starts("=") {
                return self.fail(&format!("attribute {k} has no value"));
            }
            self.i += 1;
            self.skip_space();
            let v = self.value()?;
            el.attrs.push((k, v));
        }
        loop {
            self.skip_misc()?;
            if self.i >= self.s.len() {
                return self.fail(&format!("<{}> is never closed", el.name));
            }
            if self.starts("</") {
                self.i += 2;
                let end = self.name()?;
                self.skip_space();
                if end != el.name || !self.starts(">") {
                    return self.fail(&format!("</{end}> does not close <{}> of line {}", el.name, el.line));
                }
                self.i += 1;
                return Ok(el);
            }
            if !self.starts("<") {
                return self.fail("text between elements is not part of an NCCL topology");
            }
            el.children.push(self.element()?);
        }
    }
}

fn unescape(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(k) = rest.find('&') {
        out.push_str(&rest[..k]);
        let end = rest[k..].find(';')? + k;
        out.push(match &rest[k + 1..end] {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => return None,
        });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// The one root element of `text`; `origin` names the file in errors.
pub fn parse(text: &str, origin: &str) -> crate::error::Result<Element> {
    let mut r = Reader { s: text.as_bytes(), i: 0 };
    let read = |r: &mut Reader| -> Result<Element, String> {
        let root = r.element()?;
        r.skip_misc()?;
        if r.i < r.s.len() {
            return r.fail("content after the root element");
        }
        Ok(root)
    };
    read(&mut r).map_err(|e| crate::error::Error::input(origin, "", format!("{e}; expected an NCCL topology XML dump")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_elements_and_refuses_what_nccl_never_writes() {
        let e = parse("<?xml version=\"1.0\"?>\n<!-- c -->\n<a x=\"1\" y='&lt;2'>\n  <b/>\n  <c z=\"3\"></c>\n</a>\n", "t.xml").unwrap();
        assert_eq!((e.name.as_str(), e.attr("y"), e.children.len()), ("a", Some("<2"), 2));
        assert_eq!(e.children[1].attr("z"), Some("3"));
        let err = |t: &str| parse(t, "t.xml").unwrap_err().to_string();
        assert!(err("<a>\n<b></c>\n</a>").starts_with("t.xml: line 2: </c> does not close <b>"), "{}", err("<a>\n<b></c>\n</a>"));
        assert!(err("<a>text</a>").contains("text between elements"));
        assert!(err("<a x=1/>").contains("quoted"));
        assert!(err("<a/><b/>").contains("after the root"));
    }
}
