//! Untrusted text in GitHub-flavoured Markdown: the one escaper behind every Markdown teamctl
//! writes (an export's `report.md`, `teamctl report`), so teammate text never becomes Markdown
//! or HTML, never shows a character of [`is_control`] raw, and never starts a line a CI runner
//! reads as a command ([`crate::text::starts_command`]).
//!
//! - [`inline`]: a short field (a name, a subject, a table cell) as one run of text: line breaks
//!   and tabs become spaces, controls visible escapes such as `\u{1b}`, and every ASCII
//!   punctuation character is backslash-escaped (no emphasis, link, autolink, mention, emoji
//!   code, HTML tag or table pipe can form; a field starting with `::` starts with `\:`).
//! - [`fenced`]: a message or an answer as a fenced code block whose fence is longer than any
//!   run of backticks in it; controls but the line break and the tab become visible escapes,
//!   and a line that would start a CI command has its first character written as one
//!   (`\u{3a}:add-mask::…`).
//! - [`code_span`]: a path as a code span, on one line.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::text::{defuse_command, is_control};

/// `\u{1b}`: how a character that must not appear raw is shown.
fn push_visible(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:x}}}", c as u32);
}

/// Untrusted text as one inline run: at most `max` characters of it (then `…`), line breaks
/// and tabs as spaces, controls as visible escapes, every ASCII punctuation character escaped;
/// `—` when nothing is left.
pub fn inline(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut shown = String::new();
    for (n, c) in text.trim().chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        shown.clear();
        match c {
            '\n' | '\r' | '\t' => shown.push(' '),
            c if is_control(c) => push_visible(&mut shown, c),
            c => shown.push(c),
        }
        for c in shown.chars() {
            if c.is_ascii_punctuation() {
                out.push('\\');
            }
            out.push(c);
        }
    }
    if out.is_empty() { "—".into() } else { out }
}

/// A fenced code block of untrusted text: `block` ends in a newline; `cut` is how many
/// characters past the maximum were left out (0: the whole text is in it), for the caller to
/// say where the rest is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fenced {
    /// The block, fences included.
    pub block: String,
    /// Characters left out.
    pub cut: usize,
}

/// Untrusted text (at most `max` characters of it) as a fenced code block (` ```text `).
pub fn fenced(text: &str, max: usize) -> Fenced {
    let mut body = String::with_capacity(text.len().min(max.saturating_mul(4)) + 8);
    let mut cut = 0;
    let mut line_start = 0;
    for (n, c) in text.chars().enumerate() {
        if n == max {
            cut = text.chars().count() - max;
            break;
        }
        match c {
            '\n' => {
                guard_line(&mut body, line_start);
                body.push(c);
                line_start = body.len();
            }
            '\t' => body.push(c),
            c if is_control(c) => push_visible(&mut body, c),
            c => body.push(c),
        }
    }
    guard_line(&mut body, line_start);
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let mut block = format!("{fence}text\n{body}");
    if !body.ends_with('\n') {
        block.push('\n');
    }
    block.push_str(&fence);
    block.push('\n');
    Fenced { block, cut }
}

/// When the line of `body` from `start` would start a CI command, its first character that is
/// not white space becomes a visible escape ([`defuse_command`]).
fn guard_line(body: &mut String, start: usize) {
    if let Cow::Owned(line) = defuse_command(&body[start..]) {
        body.truncate(start);
        body.push_str(&line);
    }
}

/// Untrusted text (a path) as a code span: one line, controls as visible escapes, fenced by
/// more backticks than any run inside it.
pub fn code_span(text: &str) -> String {
    let mut body = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => body.push(' '),
            c if is_control(c) => push_visible(&mut body, c),
            c => body.push(c),
        }
    }
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    // A span that starts or ends with a backtick needs a space inside its fence; one that
    // starts and ends with a space would lose one at each end (CommonMark strips them) unless
    // padded; an empty one is a space (two backticks alone are no span).
    let spaced =
        body.starts_with(' ') && body.ends_with(' ') && !body.trim_start_matches(' ').is_empty();
    let pad = if body.starts_with('`') || body.ends_with('`') || spaced {
        " "
    } else if body.is_empty() {
        return format!("{fence} {fence}");
    } else {
        ""
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text::starts_command;

    /// Markdown hides the same characters the terminal output does (one list, `text.rs`):
    /// zero-width ones, tag characters and the paragraph separator too, not only C0/C1 and bidi.
    #[test]
    fn invisible_characters_are_shown() {
        assert_eq!(
            inline("team\u{200b}-lead\u{e0041}\u{2029}x", 100),
            r"team\\u\{200b\}\-lead\\u\{e0041\}\\u\{2029\}x"
        );
    }

    #[test]
    fn inline_text_cannot_become_markdown() {
        assert_eq!(inline("a*b_c", 100), "a\\*b\\_c");
        assert_eq!(
            inline("<img src=x onerror=alert(1)> | @all #1 :x: [l](u)", 100),
            "\\<img src\\=x onerror\\=alert\\(1\\)\\> \\| \\@all \\#1 \\:x\\: \\[l\\]\\(u\\)"
        );
        assert_eq!(
            inline("two\nlines\tand\u{1b}[2J", 100),
            "two lines and\\\\u\\{1b\\}\\[2J"
        );
        assert_eq!(
            inline("a|b *c* <x>\n\u{1b}[31m", 100),
            "a\\|b \\*c\\* \\<x\\> \\\\u\\{1b\\}\\[31m"
        );
        assert_eq!(inline("\u{202e}", 100), "\\\\u\\{202e\\}");
        assert_eq!(inline("abcdef", 3), "abc…");
        assert_eq!(inline("  ", 3), "—");
        assert_eq!(inline("", 10), "—");
        // A field never starts a line with a CI command.
        assert_eq!(inline("::add-mask::x", 100), "\\:\\:add\\-mask\\:\\:x");
    }

    #[test]
    fn fenced_text_cannot_close_its_fence() {
        let f = fenced("x\n```\n````\ny", 100);
        assert!(
            f.block.starts_with("`````text\nx\n```\n````\ny\n`````\n"),
            "{f:?}"
        );
        assert_eq!(f.cut, 0);
        let f = fenced("``` not a fence\n````", 100);
        assert!(f.block.starts_with("`````text\n"), "{f:?}");
        assert!(f.block.ends_with("\n`````\n"), "{f:?}");
        let f = fenced("bell\u{7}\r\nesc\u{1b}", 100);
        assert_eq!(f.block, "```text\nbell\\u{7}\\u{d}\nesc\\u{1b}\n```\n");
        let f = fenced("abcdef", 2);
        assert_eq!(f.block, "```text\nab\n```\n");
        assert_eq!(f.cut, 4);
    }

    /// `::add-mask::x` or `::stop-commands::x` printed at the start of a line of a GitHub
    /// Actions log is a workflow command: such a line keeps its text, with its first character
    /// shown as an escape.
    #[test]
    fn fenced_lines_never_start_a_ci_command() {
        let f = fenced(
            "::add-mask::x\nok ::x\n  ::stop-commands::y\n##[error]z\n\u{a0}::w\n::",
            100,
        );
        assert_eq!(
            f.block,
            "```text\n\\u{3a}:add-mask::x\nok ::x\n  \\u{3a}:stop-commands::y\n\
             \\u{23}#[error]z\n\u{a0}\\u{3a}:w\n\\u{3a}:\n```\n"
        );
        for line in f.block.lines() {
            assert!(!starts_command(line), "{line}");
        }
        // A heading in a message is not a command, and stays as it was.
        assert_eq!(fenced("## Plan", 100).block, "```text\n## Plan\n```\n");
        // A cut that leaves `::` at the start of the last line.
        assert_eq!(fenced("a\n::bc", 4).block, "```text\na\n\\u{3a}:\n```\n");
    }

    #[test]
    fn paths_are_code_spans() {
        assert_eq!(code_span("/r/team-0.tar.gz"), "`/r/team-0.tar.gz`");
        assert_eq!(code_span("a``b\n"), "```a``b ```");
        assert_eq!(code_span("`x"), "`` `x ``");
        assert_eq!(code_span("a\u{1b}b"), "`a\\u{1b}b`");
        assert_eq!(code_span(" x "), "`  x  `");
        assert_eq!(code_span("  "), "`  `");
        assert_eq!(code_span(""), "` `");
    }
}
