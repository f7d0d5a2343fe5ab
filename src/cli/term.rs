//! Untrusted text (anything read from a team's files, a tmux pane or another program) made safe
//! for a terminal or a CI log: every control character becomes a visible escape, and no line of
//! output begins with such text.
//!
//! Neutralised: C0 controls (U+0000–U+001F, newline and tab included), DEL, C1 controls
//! (U+0080–U+009F), the line and paragraph separators (U+2028, U+2029) and every character that
//! draws nothing: the format characters (the bidi embeddings, overrides, isolates and marks,
//! the zero-width space and joiners U+200B–U+200D, the word joiner U+2060, U+FEFF, the tag
//! characters U+E0000–U+E007F, …) and the other default-ignorable code points (the variation
//! selectors, except U+FE0E/U+FE0F right after a non-ASCII character, where they pick an emoji's
//! glyph). They print as `\e` (ESC), `\r`, `\n`, `\t`, `\0`, `\x07` (other C0), `\x7f` (DEL)
//! and `\u{9b}`, `\u{202e}`, `\u{200b}`, … (the others). A literal backslash is printed as it is: human
//! output is for reading, not for decoding (`--json` carries the exact text), and doubling every
//! backslash would garble Windows paths and regexes in messages for no safety gain, since a
//! backslash never moves the cursor. So `\e` on screen may be either an ESC or the two
//! characters `\` `e` that someone typed; `--json` tells them apart.

use std::borrow::Cow;
use std::fmt::Write as _;

use teamctl::text::{defuse_command, is_control, starts_command};

/// What a line that continues text from outside begins with (never whitespace alone: CI
/// runners may strip leading spaces before they look for `::error::`-style workflow commands).
pub(crate) const CONTINUATION: &str = "  | ";

/// Whether `c`, escaped on its own, may pass raw after `prev`: the text and emoji presentation
/// selectors U+FE0E and U+FE0F right after a non-ASCII character that shows (`❤️`), where they
/// only pick a glyph. After ASCII (`team-lead` + U+FE0F) they hide, and are escaped.
fn presentation_after(prev: Option<char>, c: char) -> bool {
    matches!(c, '\u{fe0e}' | '\u{fe0f}') && prev.is_some_and(|p| !p.is_ascii() && !is_control(p))
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
    let mut prev = None;
    let must = |prev: Option<char>, c: char| hostile(c) && !presentation_after(prev, c);
    if !text.chars().any(|c| {
        let m = must(prev, c);
        prev = Some(c);
        m
    }) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut prev = None;
    for c in text.chars() {
        if must(prev, c) {
            push_escape(&mut out, c);
        } else {
            out.push(c);
        }
        prev = Some(c);
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
                // A character past U+FFFF is two escapes, its UTF-16 surrogates.
                for unit in c.encode_utf16(&mut [0; 2]) {
                    write!(writer, "\\u{:04x}", unit)?;
                }
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

/// Composed output laid out in columns (a frame of `top --once`), where a cell of untrusted
/// text can begin a line after padding: a line that would start a CI command has its first
/// character written as a visible escape ([`teamctl::text::defuse_command`], the rule the
/// Markdown output follows too).
pub(crate) fn defuse_lines(text: &str) -> Cow<'_, str> {
    if !text.split('\n').any(starts_command) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.split('\n')
            .map(defuse_command)
            .collect::<Vec<_>>()
            .join("\n"),
    )
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
        // What draws nothing: zero-width characters, the word joiner, BOM, tags, selectors.
        assert_eq!(
            escape_line(
                "team-lead\u{200b}\u{200c}\u{200d}\u{2060}\u{feff}\u{ad}\u{e0041}\u{e007f}"
            ),
            "team-lead\\u{200b}\\u{200c}\\u{200d}\\u{2060}\\u{feff}\\u{ad}\\u{e0041}\\u{e007f}"
        );
        assert_eq!(escape_line("alice\u{fe0f}"), "alice\\u{fe0f}");
        assert_eq!(escape_line("x\u{e0100}"), "x\\u{e0100}");
        // Plain text, backslashes, other scripts and an emoji's presentation selector pass
        // untouched (and unallocated).
        let s = "C:\\tmp é ✓ שלום 日本 ❤\u{fe0f}";
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
        // Invisible characters too, past U+FFFF as surrogate pairs.
        let v = serde_json::json!({"k": "a\u{200b}b\u{e0041}c"});
        let mut out = Vec::new();
        let mut ser = serde_json::Serializer::with_formatter(&mut out, JsonFormatter);
        serde::Serialize::serialize(&v, &mut ser).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text, r#"{"k":"a\u200bb\udb40\udc41c"}"#);
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
    }

    #[test]
    fn cut_counts_columns() {
        assert_eq!(cut("abcdef", 6), "abcdef");
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("日本語です", 5), "日本…");
        assert_eq!(cut("abc", 0), "…");
    }

    #[test]
    fn a_frame_line_never_starts_a_ci_command() {
        let frame = "NAME  STATE\n  ::member::x  idle\n  alice  busy";
        assert_eq!(
            defuse_lines(frame),
            "NAME  STATE\n  \\u{3a}:member::x  idle\n  alice  busy"
        );
        assert!(matches!(defuse_lines("a\n b"), Cow::Borrowed(_)));
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
