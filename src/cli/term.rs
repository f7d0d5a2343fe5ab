//! Untrusted text (anything read from a team's files, a tmux pane or another program) made safe
//! for a terminal or a CI log: every control character becomes a visible escape, and no line of
//! output begins with such text.
//!
//! Neutralised: C0 controls (U+0000–U+001F, newline and tab included), DEL, C1 controls
//! (U+0080–U+009F), the bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069),
//! the bidi marks (U+200E, U+200F, U+061C) and the line and paragraph separators (U+2028,
//! U+2029). They print as `\e` (ESC), `\r`, `\n`, `\t`, `\0`, `\x07` (other C0), `\x7f` (DEL)
//! and `\u{9b}`, `\u{202e}`, … (the others). A literal backslash is printed as it is: human
//! output is for reading, not for decoding (`--json` carries the exact text), and doubling every
//! backslash would garble Windows paths and regexes in messages for no safety gain, since a
//! backslash never moves the cursor. So `\e` on screen may be either an ESC or the two
//! characters `\` `e` that someone typed; `--json` tells them apart.

use std::borrow::Cow;
use std::fmt::Write as _;

/// What a line that continues text from outside begins with (never whitespace alone: CI
/// runners may strip leading spaces before they look for `::error::`-style workflow commands).
pub(crate) const CONTINUATION: &str = "  | ";

/// Whether `c` must not reach a terminal raw.
fn is_control(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{61c}'
        | '\u{200e}' | '\u{200f}'
        | '\u{2028}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

fn push_escape(out: &mut String, c: char) {
    match c {
        '\u{1b}' => out.push_str("\\e"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\0' => out.push_str("\\0"),
        '\u{1}'..='\u{1f}' | '\u{7f}' => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        _ => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

fn escape_where(text: &str, hostile: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&hostile) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hostile(c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Untrusted text as one line for a terminal: every control character, newline and tab
/// included, becomes a visible escape (`\e`, `\n`, `\u{202e}`, …). Use it for every field that
/// came from a file inside human output: table cells, names, subjects, previews, events.
pub(crate) fn escape_line(text: &str) -> Cow<'_, str> {
    escape_where(text, is_control)
}

/// Untrusted multi-line text for a terminal: line breaks are kept, everything else is
/// neutralised as in [`escape_line`], and every line starts with `prefix`, so that no line of
/// output begins with text from the file. `prefix` must not be empty or whitespace only.
pub(crate) fn escape_block(text: &str, prefix: &str) -> String {
    text.split('\n')
        .map(|line| format!("{prefix}{}", escape_line(line)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A line the tool composed, possibly holding several lines joined with `\n`: the last line of
/// defence for output that [`escape_line`] already went through. Keeps `\n`, neutralises every
/// other control character.
pub(crate) fn escape_composed(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c != '\n' && is_control(c))
}

/// A message for stderr (an error, a warning, progress): its first line escaped, every further
/// line escaped and indented with [`CONTINUATION`], so text quoted from a file (a pane's last
/// lines, a name with a newline in it) never starts a line of its own.
pub(crate) fn escape_message(text: &str) -> String {
    let mut lines = text.split('\n');
    let mut out = escape_line(lines.next().unwrap_or("")).into_owned();
    for line in lines {
        out.push('\n');
        out.push_str(CONTINUATION);
        out.push_str(&escape_line(line));
    }
    out
}

/// A compact JSON formatter that also writes DEL, the C1 controls and the bidi and line
/// separator characters as `\uXXXX` escapes (serde_json escapes only U+0000–U+001F). The
/// document means exactly the same to any JSON reader, every string decodes to the exact text
/// of the file, and `teamctl … --json` printed straight to a terminal is as harmless as the
/// human output.
pub(crate) struct JsonFormatter;

impl serde_json::ser::Formatter for JsonFormatter {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_control(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                write!(writer, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }
}

/// Untrusted text that starts a line (the first column of a table): as [`escape_line`], and
/// quoted (`"…"`) unless it is a plain token (letters, digits, `_`, `-`, `.`, `@`, starting
/// with a letter, a digit or `#`), so a line never begins with `::`, `##[` or the like from a
/// file.
pub(crate) fn escape_lead(text: &str) -> Cow<'_, str> {
    let plain = text
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric())
        || (text.starts_with('#') && !text.starts_with("##"));
    let plain = plain
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.@#".contains(c));
    if plain {
        return Cow::Borrowed(text);
    }
    let inner = escape_line(text).replace('"', "\\\"");
    Cow::Owned(format!("\"{inner}\""))
}

/// The columns human output may use: the terminal's width when stdout is one, else `COLUMNS`
/// when set, else 80.
pub(crate) fn width() -> usize {
    use std::io::IsTerminal;
    if std::io::stdout().is_terminal() {
        // SAFETY: TIOCGWINSZ fills a winsize and reads nothing else.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
        if ok && ws.ws_col > 0 {
            return usize::from(ws.ws_col);
        }
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|&c: &usize| c > 0)
        .unwrap_or(80)
}

/// `text` (already escaped) cut to at most `max` display columns, with `…` when cut.
pub(crate) fn cut(text: &str, max: usize) -> String {
    use unicode_width::UnicodeWidthChar;
    let total: usize = text.chars().map(|c| c.width().unwrap_or(0)).sum();
    if total <= max {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > max {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_every_control() {
        assert_eq!(
            escape_line("a\u{1b}[2Jb\r\n\t\u{7}\u{7f}\u{9b}\u{202e}\u{2066}\u{2028}\0"),
            "a\\e[2Jb\\r\\n\\t\\x07\\x7f\\u{9b}\\u{202e}\\u{2066}\\u{2028}\\0"
        );
        assert_eq!(escape_line("\u{1b}]52;c;aGk=\u{7}"), "\\e]52;c;aGk=\\x07");
        // Plain text, backslashes and other scripts pass untouched (and unallocated).
        let s = "C:\\tmp é ✓ שלום 日本";
        assert!(matches!(escape_line(s), Cow::Borrowed(x) if x == s));
    }

    #[test]
    fn blocks_keep_lines_behind_a_prefix() {
        assert_eq!(
            escape_block("one\n::error::x\r\n\u{1b}[31m", "  | "),
            "  | one\n  | ::error::x\\r\n  | \\e[31m"
        );
        assert_eq!(escape_composed("a: 1\nb: \u{1b}"), "a: 1\nb: \\e");
        assert_eq!(
            escape_message("failed:\n::error::x"),
            "failed:\n  | ::error::x"
        );
    }

    #[test]
    fn json_escapes_more_and_means_the_same() {
        let v = serde_json::json!({"k\u{202e}": "a\u{1b}b\u{9b}c\u{7f}\u{2066}é✓\"\\"});
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, JsonFormatter);
        serde::Serialize::serialize(&v, &mut ser).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, r#"{"k\u202e":"a\u001bb\u009bc\u007f\u2066é✓\"\\"}"#);
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn cut_counts_columns() {
        assert_eq!(cut("abcdef", 6), "abcdef");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("日本語です", 5), "日本…");
        assert_eq!(cut("abc", 0), "…");
    }

    #[test]
    fn a_lead_is_plain_or_quoted() {
        assert_eq!(escape_lead("alice"), "alice");
        assert_eq!(escape_lead("#3"), "#3");
        assert_eq!(
            escape_lead("perm-1795946340000-abc1234"),
            "perm-1795946340000-abc1234"
        );
        assert_eq!(escape_lead("::error::x"), "\"::error::x\"");
        assert_eq!(escape_lead("##[error]x"), "\"##[error]x\"");
        assert_eq!(escape_lead("a\"\n"), "\"a\\\"\\n\"");
        assert_eq!(escape_lead(""), "\"\"");
    }
}
