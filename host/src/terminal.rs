//! Plugin-supplied text made safe for a terminal.
//!
//! Whatever a plugin returns (tool descriptions, stored values, tool output, injections,
//! refusal messages) is untrusted. Printed raw, it could clear the screen, set the window
//! title, rewrite the line with a carriage return, reorder text with bidirectional controls,
//! or print a line that looks like the CLI's own (a forged `[scratchpad] notes` header, a
//! forged "plugin `scratchpad` trapped"). So the human output shows every control character as
//! an escape (`\u{1b}`), the way `--json` escapes them, and prints a plugin's multi-line text
//! as an indented block under a header naming the plugin. The host's own log records of a
//! plugin (its `log` import, its captured stdout and stderr) go through [`line`] too.

use std::borrow::Cow;
use std::fmt::Write;

/// Whether `c` is shown escaped: control characters (C0, DEL, C1) and the bidirectional
/// formatting characters; newlines and tabs only when `keep_lines` is false.
fn escaped(c: char, keep_lines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_lines,
        '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        c => c.is_control(),
    }
}

fn neutralise(text: &str, keep_lines: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| escaped(c, keep_lines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c, keep_lines) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `text` on one line: newlines and tabs are escaped too.
pub fn line(text: &str) -> Cow<'_, str> {
    neutralise(text, false)
}

/// `text` with its lines kept and every other control character escaped.
pub fn text(text: &str) -> Cow<'_, str> {
    neutralise(text, true)
}

/// One plugin's multi-line text, each line indented with `  │ `, so nothing in it can stand
/// at the start of a line and pass for the CLI's own output.
pub fn block(body: &str) -> String {
    let body = text(body);
    let mut out = String::with_capacity(body.len() + 16);
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str("  │ ");
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_obeyed() {
        assert_eq!(line("plain text"), "plain text");
        assert_eq!(line("\u{1b}[2J\u{1b}]0;title\u{7}x"), "\\u{1b}[2J\\u{1b}]0;title\\u{7}x");
        assert_eq!(line("a\r\nb\0c\u{9b}d\u{202e}e"), "a\\u{d}\\u{a}b\\u{0}c\\u{9b}d\\u{202e}e");
        assert_eq!(text("one\n\ttwo\r"), "one\n\ttwo\\u{d}");
        assert_eq!(block("notes\n[scratchpad] notes\nforged"), "  │ notes\n  │ [scratchpad] notes\n  │ forged");
    }
}
