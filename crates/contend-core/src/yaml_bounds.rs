//! Bounds on a YAML document, checked in one linear pass over its text before the YAML parser
//! sees it: flow collections nested at most `MAX_FLOW_DEPTH` deep, and aliases that expand to
//! at most `MAX_ALIAS_NODES` values beyond the text's own.
//!
//! Why before the parser: libyaml's scanner keeps one possible key per open flow collection and
//! checks all of them at every token, so `[[[[…` costs time quadratic in its depth (200,000
//! brackets: over 200 s) before serde_yaml's own recursion limit (128) is reached; and an alias
//! is deserialised anew at every use, so a few lines of anchors used many times ("billion laughs")
//! expand to more values than memory holds. Block nesting is linear in libyaml and stops at
//! serde_yaml's recursion limit, so it is not counted here.
//!
//! The scan is a small lexer: it never skips text that libyaml could read as structure (quoted
//! scalars only where a quote surely starts one, comments only after white space, block scalars
//! only by their indentation), so it can count too much, never too little. Counting too much
//! needs dozens of unbalanced brackets where a value could start; no file a person writes has
//! them.

use std::collections::HashMap;

/// Flow collections (`[…]`, `{…}`) inside each other; JSON machine files use five or six.
pub const MAX_FLOW_DEPTH: usize = 64;
/// Values added by aliases (`*name`) over those written out: far above any use of anchors,
/// far below what takes noticeable time or memory.
pub const MAX_ALIAS_NODES: u64 = 1_000_000;

/// Why a document is refused: the 1-based line where the bound was passed, and what to change.
#[derive(Debug, PartialEq)]
pub struct Refusal {
    pub line: usize,
    pub problem: String,
}

#[derive(Clone, Copy, PartialEq)]
enum State {
    /// Where a node or an indicator may start.
    NodeStart,
    /// Inside a plain scalar.
    Plain,
    /// After a quoted scalar, an alias or a closing bracket.
    After,
}

/// An anchor whose node is still being read: the values counted when it opened, and where it
/// ends (the flow depth it returns to, or for a block node the indentation of its line).
struct OpenAnchor<'a> {
    name: &'a str,
    nodes_at_open: u64,
    end: AnchorEnd,
}

#[derive(Clone, Copy, PartialEq)]
enum AnchorEnd {
    Flow(usize),
    Block(usize),
}

struct Scan<'a> {
    text: &'a [u8],
    src: &'a str,
    i: usize,
    line: usize,
    /// Where the current line starts (columns are counted from it).
    bol: usize,
    depth: usize,
    state: State,
    /// Values so far, aliases expanded; `written`: values written out.
    nodes: u64,
    written: u64,
    anchors: HashMap<&'a str, u64>,
    open: Vec<OpenAnchor<'a>>,
    /// An anchor seen, its node not yet started.
    pending: Option<&'a str>,
    /// Column of the innermost block key or `-` entry on this line, and of the first token
    /// since the last indicator (a key, once `: ` follows it).
    parent_col: Option<usize>,
    candidate_col: usize,
    /// A line that may continue the plain scalar of the line before: a quote there is plain
    /// text, so nothing is skipped, and every bracket counts.
    wary: bool,
}

/// Check `text` against the bounds above.
pub fn check(text: &str) -> Result<(), Refusal> {
    // Most documents have neither deep brackets nor aliases: a byte count settles it.
    let b = text.as_bytes();
    let brackets = b.iter().filter(|&&c| c == b'[' || c == b'{').count();
    if brackets <= MAX_FLOW_DEPTH && !b.contains(&b'*') {
        return Ok(());
    }
    Scan {
        text: b,
        src: text,
        i: 0,
        line: 1,
        bol: 0,
        depth: 0,
        state: State::NodeStart,
        nodes: 0,
        written: 0,
        anchors: HashMap::new(),
        open: Vec::new(),
        pending: None,
        parent_col: None,
        candidate_col: 0,
        wary: false,
    }
    .run()
}

fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

fn is_break(c: u8) -> bool {
    c == b'\n' || c == b'\r'
}

fn is_flow_indicator(c: u8) -> bool {
    matches!(c, b',' | b'[' | b']' | b'{' | b'}')
}

fn is_anchor_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-' || c == b'_'
}

impl<'a> Scan<'a> {
    fn peek(&self, k: usize) -> u8 {
        self.text.get(self.i + k).copied().unwrap_or(b'\n')
    }

    /// Whether the byte after the current one ends a token (white space, a line end, the text's end).
    fn followed_by_space(&self) -> bool {
        let c = self.peek(1);
        is_blank(c) || is_break(c)
    }

    fn column(&self) -> usize {
        self.i - self.bol
    }

    fn run(mut self) -> Result<(), Refusal> {
        self.line_start(None)?;
        while self.i < self.text.len() {
            let c = self.text[self.i];
            if is_break(c) {
                self.newline()?;
                continue;
            }
            match self.state {
                State::NodeStart => self.node_start(c)?,
                State::Plain => self.plain(c)?,
                State::After => self.after(c)?,
            }
        }
        self.close_all();
        Ok(())
    }

    fn newline(&mut self) -> Result<(), Refusal> {
        // A plain scalar may go on to the next line if that is indented deeper than its key or
        // entry (any line, where the line before had neither).
        let plain_until = (self.state == State::Plain).then(|| self.parent_col.map_or(-1, |c| c as i64));
        if self.text[self.i] == b'\r' && self.peek(1) == b'\n' {
            self.i += 1;
        }
        self.i += 1;
        self.line += 1;
        self.bol = self.i;
        if self.depth == 0 {
            self.line_start(plain_until)?;
        }
        // In a flow collection a line break is white space; a plain scalar may go on.
        Ok(())
    }

    /// A new line in block context: close block anchors it ends, and start reading a node.
    fn line_start(&mut self, plain_until: Option<i64>) -> Result<(), Refusal> {
        let indent = self.text[self.i..].iter().take_while(|&&c| c == b' ').count();
        let first = self.text.get(self.i + indent).copied().unwrap_or(b'\n');
        let rest = &self.text[self.i + indent..];
        if indent == 0 && (rest.starts_with(b"---") || rest.starts_with(b"...")) && rest.get(3).is_none_or(|&c| is_blank(c) || is_break(c)) {
            // A new document: its anchors are its own.
            self.close_all();
            self.anchors.clear();
            self.i += 3;
            self.state = State::NodeStart;
            self.parent_col = None;
            self.wary = false;
            return Ok(());
        }
        if !is_break(first) && first != b'#' && !(is_blank(first) && rest.iter().take_while(|&&c| !is_break(c)).all(|&c| is_blank(c))) {
            self.close_block_anchors(indent, first == b'-' && rest.get(1).is_none_or(|&c| is_blank(c) || is_break(c)));
        }
        self.i += indent;
        self.state = State::NodeStart;
        self.parent_col = None;
        self.candidate_col = indent;
        self.wary = plain_until.is_some_and(|col| indent as i64 > col);
        Ok(())
    }

    fn node_start(&mut self, c: u8) -> Result<(), Refusal> {
        let flow = self.depth > 0;
        match c {
            b' ' | b'\t' => self.i += 1,
            b'#' if self.after_space() && !self.wary => self.comment(),
            b'"' | b'\'' if !self.wary => {
                self.value();
                self.quoted(c);
                self.state = State::After;
            }
            b'[' | b'{' => self.open_flow()?,
            b']' | b'}' => self.close_flow(),
            b',' if flow => self.i += 1,
            b'-' | b'?' | b':' if self.followed_by_space() || (flow && is_flow_indicator(self.peek(1))) => {
                if c == b'-' && !flow {
                    self.parent_col = Some(self.column());
                }
                if c == b':' && !flow {
                    self.parent_col = Some(self.candidate_col);
                }
                self.i += 1;
                self.candidate_col = self.column();
            }
            b'&' if is_anchor_char(self.peek(1)) => {
                self.i += 1;
                let name = self.name();
                self.pending = Some(name);
            }
            b'!' => {
                // A tag: up to white space; a bracket ends it here, so none is skipped.
                while self.i < self.text.len() && !is_blank(self.text[self.i]) && !is_break(self.text[self.i]) && !is_flow_indicator(self.text[self.i]) {
                    self.i += 1;
                }
            }
            b'*' if is_anchor_char(self.peek(1)) => {
                self.i += 1;
                let name = self.name();
                let size = self.anchors.get(name).copied().unwrap_or(1);
                self.written += 1;
                self.nodes = self.nodes.saturating_add(size);
                self.finish_scalar_anchor(size);
                self.check_expansion()?;
                self.state = State::After;
            }
            b'|' | b'>' if !flow && !self.wary => {
                self.value();
                self.block_scalar();
            }
            _ => {
                self.value();
                self.state = State::Plain;
                self.i += 1;
            }
        }
        Ok(())
    }

    fn plain(&mut self, c: u8) -> Result<(), Refusal> {
        let flow = self.depth > 0;
        match c {
            b'#' if self.after_space() && !self.wary => self.comment(),
            b':' if self.followed_by_space() || (flow && is_flow_indicator(self.peek(1))) => {
                if !flow {
                    self.parent_col = Some(self.candidate_col);
                }
                self.i += 1;
                self.state = State::NodeStart;
                self.candidate_col = self.column();
            }
            b',' if flow => {
                self.i += 1;
                self.state = State::NodeStart;
            }
            b'[' | b'{' if flow || self.wary => self.open_flow()?,
            b']' | b'}' if flow || self.wary => self.close_flow(),
            _ => self.i += 1,
        }
        Ok(())
    }

    fn after(&mut self, c: u8) -> Result<(), Refusal> {
        let flow = self.depth > 0;
        match c {
            b' ' | b'\t' => self.i += 1,
            b'#' if self.after_space() && !self.wary => self.comment(),
            b':' => {
                if !flow {
                    self.parent_col = Some(self.candidate_col);
                }
                self.i += 1;
                self.state = State::NodeStart;
                self.candidate_col = self.column();
            }
            b',' if flow => {
                self.i += 1;
                self.state = State::NodeStart;
            }
            b'[' | b'{' => self.open_flow()?,
            b']' | b'}' => self.close_flow(),
            _ => {
                self.state = State::Plain;
                self.i += 1;
            }
        }
        Ok(())
    }

    fn after_space(&self) -> bool {
        self.i == 0 || matches!(self.text[self.i - 1], b' ' | b'\t' | b'\n' | b'\r')
    }

    fn comment(&mut self) {
        // A comment ends a plain scalar.
        if self.state == State::Plain {
            self.state = State::After;
        }
        while self.i < self.text.len() && !is_break(self.text[self.i]) {
            self.i += 1;
        }
    }

    fn name(&mut self) -> &'a str {
        let start = self.i;
        while self.i < self.text.len() && is_anchor_char(self.text[self.i]) {
            self.i += 1;
        }
        &self.src[start..self.i]
    }

    /// A value starts here (a scalar): counted, and the anchor before it, if any, is its size.
    fn value(&mut self) {
        if self.depth == 0 {
            self.candidate_col = self.column();
        }
        self.written += 1;
        self.nodes = self.nodes.saturating_add(1);
        self.finish_scalar_anchor(1);
    }

    fn finish_scalar_anchor(&mut self, size: u64) {
        if let Some(name) = self.pending.take() {
            self.anchors.insert(name, size);
        }
    }

    fn quoted(&mut self, quote: u8) {
        self.i += 1;
        while self.i < self.text.len() {
            let c = self.text[self.i];
            if c == b'\n' {
                self.line += 1;
                self.bol = self.i + 1;
            }
            if quote == b'"' && c == b'\\' {
                if self.peek(1) == b'\n' {
                    self.line += 1;
                    self.bol = self.i + 2;
                }
                self.i += 2;
                continue;
            }
            if c == quote {
                if quote == b'\'' && self.peek(1) == b'\'' {
                    self.i += 2;
                    continue;
                }
                self.i += 1;
                return;
            }
            self.i += 1;
        }
    }

    /// `|` or `>`: the rest of the line is its header; the lines indented deeper than the key
    /// or entry it belongs to (and blank lines) are its text.
    fn block_scalar(&mut self) {
        let parent = self.parent_col.map_or(-1, |c| c as i64);
        let mut explicit = 0i64;
        while self.i < self.text.len() && !is_break(self.text[self.i]) {
            if let Some(d) = (self.text[self.i] as char).to_digit(10) {
                explicit = explicit.max(d as i64);
            }
            self.i += 1;
        }
        // With an indentation indicator the text starts that far in; lines less indented end it.
        let deeper = if explicit > 0 { parent.max(0) + explicit - 1 } else { parent };
        loop {
            if self.i >= self.text.len() {
                return;
            }
            // At a line break: look at the next line.
            let mut j = self.i + 1;
            if self.text[self.i] == b'\r' && self.text.get(j) == Some(&b'\n') {
                j += 1;
            }
            let indent = self.text[j..].iter().take_while(|&&c| c == b' ').count();
            let rest = &self.text[j + indent..];
            let end = rest.iter().position(|&c| is_break(c)).unwrap_or(rest.len());
            let blank = rest[..end].iter().all(|&c| is_blank(c));
            let marker = indent == 0 && (rest.starts_with(b"---") || rest.starts_with(b"..."));
            if !(blank || indent as i64 > deeper) || marker || j >= self.text.len() {
                // Not its text: the newline is read as any other.
                self.state = State::After;
                return;
            }
            self.line += 1;
            self.bol = j;
            self.i = j + indent + end;
        }
    }

    fn open_flow(&mut self) -> Result<(), Refusal> {
        if let Some(name) = self.pending.take() {
            self.open.push(OpenAnchor { name, nodes_at_open: self.nodes, end: AnchorEnd::Flow(self.depth) });
        }
        if self.depth == 0 {
            self.candidate_col = self.column();
        }
        self.depth += 1;
        self.written += 1;
        self.nodes = self.nodes.saturating_add(1);
        self.i += 1;
        self.state = State::NodeStart;
        if self.depth > MAX_FLOW_DEPTH {
            return Err(Refusal {
                line: self.line,
                problem: format!("the YAML is nested more than {MAX_FLOW_DEPTH} levels deep in [ ] and {{ }}; flatten it"),
            });
        }
        Ok(())
    }

    fn close_flow(&mut self) {
        self.i += 1;
        self.state = State::After;
        if self.depth == 0 {
            return;
        }
        self.depth -= 1;
        while let Some(a) = self.open.last() {
            if a.end != AnchorEnd::Flow(self.depth) {
                break;
            }
            self.close_top();
        }
        if self.depth == 0 {
            // Back in block context: the rest of the line holds `: ` or a comment.
            self.wary = false;
        }
    }

    /// A line at `indent` ends every block anchor opened on a line indented as deep or deeper,
    /// except that a `- ` entry at the same indentation may still belong to it (a sequence under
    /// a key sits at the key's column): counted in, which can only count too much.
    fn close_block_anchors(&mut self, indent: usize, dash: bool) {
        // A block node anchored but not started by the end of its line: it is the lines below.
        if let Some(name) = self.pending.take() {
            let col = self.parent_col.unwrap_or(0);
            self.open.push(OpenAnchor { name, nodes_at_open: self.nodes, end: AnchorEnd::Block(col) });
        }
        while let Some(a) = self.open.last() {
            match a.end {
                AnchorEnd::Block(col) if indent < col || (indent == col && !dash) => self.close_top(),
                _ => break,
            }
        }
    }

    fn close_top(&mut self) {
        if let Some(a) = self.open.pop() {
            let size = self.nodes - a.nodes_at_open;
            self.anchors.insert(a.name, size.max(1));
        }
    }

    fn close_all(&mut self) {
        while !self.open.is_empty() {
            self.close_top();
        }
    }

    fn check_expansion(&self) -> Result<(), Refusal> {
        if self.nodes - self.written.min(self.nodes) > MAX_ALIAS_NODES {
            return Err(Refusal {
                line: self.line,
                problem: format!(
                    "the YAML's aliases (*name) expand to more than {MAX_ALIAS_NODES} values beyond those written out; write the values out or use fewer aliases"
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
