//! What untrusted text must never carry into a terminal, a CI log or a rendered document: one
//! list of characters never shown raw ([`is_control`]) and one rule for the start of a line
//! ([`starts_command`]), for every human output (the terminal's, `top`'s, the record's
//! `report.md`, `teamctl report`). The terminal writes them visibly in `cli::term`; Markdown in
//! [`markdown`], the one escaper for teammate text in Markdown; HTML in [`html`], the one for
//! teammate text in an HTML page (`report.html`).

pub mod html;
pub mod markdown;
pub mod prompt;

use std::borrow::Cow;

/// Whether an output line that begins with `line` would be read by a CI runner as a command:
/// GitHub Actions' workflow commands (`::add-mask::…`, `::stop-commands::…`, `::error::…`),
/// their older form `##[…]` and Azure Pipelines' `##vso[…]`, after any leading white space
/// (the runner strips it before it looks). No line of teamctl's human output begins with such
/// text from a file: the terminal output never lets untrusted text start a line at all (a
/// prefix, or quotes), and Markdown, which shows a message's lines as they are, escapes the
/// first character of a line this matches.
pub fn starts_command(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("::")
        || t.starts_with("##[")
        || t.get(..6).is_some_and(|p| p.eq_ignore_ascii_case("##vso["))
}

/// `line`, safe to start a line of output: when it would start a CI command
/// ([`starts_command`]), its first character that is not white space is written as a visible
/// escape (`\u{3a}:add-mask::x`), the rest as it is.
pub fn defuse_command(line: &str) -> Cow<'_, str> {
    if !starts_command(line) {
        return Cow::Borrowed(line);
    }
    let lead = line.len() - line.trim_start().len();
    let rest = &line[lead..];
    let c = rest.chars().next().unwrap_or(' ');
    Cow::Owned(format!(
        "{}\\u{{{:x}}}{}",
        &line[..lead],
        c as u32,
        &rest[c.len_utf8()..]
    ))
}

/// Whether `c` must not reach a terminal raw: a control character, or one that is invisible
/// ([`is_invisible`]).
pub fn is_control(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{2028}' | '\u{2029}')
        || is_invisible(c)
}

/// Characters that draw nothing, so `team-lead` followed by one looks like `team-lead`: the
/// Unicode format characters (category Cf: the zero-width space, joiners and marks
/// U+200B–U+200F, the bidi embeddings, overrides and isolates, the word joiner and invisible
/// operators U+2060–U+206F, U+FEFF, the tag characters U+E0000–U+E007F, …) and the other
/// default-ignorable code points (U+00AD, U+034F, the Hangul fillers, the variation selectors
/// U+FE00–U+FE0F and U+E0100–U+E01EF, …), as of Unicode 15.
pub fn is_invisible(c: char) -> bool {
    matches!(c,
        '\u{ad}' | '\u{34f}' | '\u{600}'..='\u{605}' | '\u{61c}' | '\u{6dd}' | '\u{70f}'
        | '\u{890}'..='\u{891}' | '\u{8e2}' | '\u{115f}'..='\u{1160}' | '\u{17b4}'..='\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{fe00}'..='\u{fe0f}' | '\u{feff}'
        | '\u{ffa0}' | '\u{fff0}'..='\u{fffb}' | '\u{110bd}' | '\u{110cd}'
        | '\u{13430}'..='\u{1343f}' | '\u{1bca0}'..='\u{1bca3}' | '\u{1d173}'..='\u{1d17a}'
        | '\u{e0000}'..='\u{e0fff}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ci_commands_at_the_start_of_a_line() {
        for line in [
            "::add-mask::x",
            "::stop-commands::t",
            "  \t::error::x",
            "\u{a0}\u{3000}::x",
            "##[error]x",
            "##vso[task.setvariable]x",
            "##VSO[x",
            "::",
        ] {
            assert!(starts_command(line), "{line:?}");
        }
        for line in [
            "a ::x",
            ":x:",
            "## Plan",
            "#[x]",
            "",
            "\\u{3a}:x",
            "\u{200b}::x",
        ] {
            assert!(!starts_command(line), "{line:?}");
            assert!(matches!(defuse_command(line), Cow::Borrowed(l) if l == line));
        }
        assert_eq!(defuse_command("::add-mask::x"), "\\u{3a}:add-mask::x");
        assert_eq!(defuse_command(" \t##[error]"), " \t\\u{23}#[error]");
        assert!(!starts_command(&defuse_command("\u{3000}::x")));
    }
}
