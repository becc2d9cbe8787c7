//! Text as a terminal showed it, without what only a terminal reads: users paste tool output
//! (`nvidia-smi topo -m`, nccl-tests) from coloured terminals and logs, and every reader of
//! such output takes it through here first.

use std::borrow::Cow;

/// `text` without ANSI escape sequences (CSI: colours, underlines; OSC: titles, hyperlinks)
/// and without control characters other than newline and tab (a carriage return of a CRLF
/// paste, a bell). Borrowed when there is nothing to take out.
pub fn strip_escapes(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                // CSI: parameters and intermediates, then one final byte in @..~.
                Some('[') => {
                    for d in chars.by_ref() {
                        if ('@'..='~').contains(&d) {
                            break;
                        }
                    }
                }
                // OSC: up to BEL or ESC \.
                Some(']') => {
                    while let Some(d) = chars.next() {
                        if d == '\u{7}' || (d == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\n' | '\t' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::strip_escapes;

    #[test]
    fn takes_out_colours_titles_and_carriage_returns_and_keeps_the_rest() {
        assert_eq!(strip_escapes("\u{1b}[0m      8  2 float\r\n\u{1b}[1;4mGPU0\u{1b}[0m\tX"), "      8  2 float\nGPU0\tX");
        assert_eq!(strip_escapes("\u{1b}]0;user@host\u{7}$ ls\u{1b}]8;;http://x\u{1b}\\link"), "$ lslink");
        assert!(matches!(strip_escapes("plain\ttext\n"), std::borrow::Cow::Borrowed(_)));
    }
}
