//! Untrusted text in HTML: the one escaper behind every HTML page teamctl writes (an export's
//! `report.html`), so teammate text never becomes a tag, an attribute, a handler, a link or a
//! closing `</script>`, and never shows a character of [`is_control`] raw.
//!
//! - [`inline`]: a short field (a name, a subject, a table cell) as one run of text: line breaks
//!   and tabs become spaces, controls (bidi overrides, zero-width characters, U+2028, …) visible
//!   escapes such as `\u{202e}`, and `&`, `<`, `>`, `"`, `'` character references, so it is safe
//!   in an element's text and in a quoted attribute value.
//! - [`block`]: a message's text for a `<pre>`: the same, but line breaks and tabs kept.
//! - [`json_script`]: a JSON document for `<script type="application/json">`: `<`, `>`, `&`,
//!   U+2028 and U+2029 as JSON escapes (`\u003c`, …), so no text inside it can end the element
//!   or open a comment, and the document still parses to the same value.

use std::fmt::Write as _;

use crate::text::is_control;

/// `\u{1b}`: how a character that must not appear raw is shown.
fn push_visible(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:x}}}", c as u32);
}

/// `c` as HTML text (and quoted attribute value).
fn push_escaped(out: &mut String, c: char) {
    match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '"' => out.push_str("&quot;"),
        '\'' => out.push_str("&#39;"),
        c if is_control(c) => push_visible(out, c),
        c => out.push(c),
    }
}

/// Untrusted text as one inline run: at most `max` characters of it (then `…`), line breaks
/// and tabs as spaces, controls as visible escapes, HTML's special characters as references;
/// `—` when nothing is left.
pub fn inline(text: &str, max: usize) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for (n, c) in text.trim().chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            c => push_escaped(&mut out, c),
        }
    }
    if out.is_empty() { "—".into() } else { out }
}

/// Untrusted text (at most `max` characters of it) for a `<pre>`: line breaks and tabs kept,
/// other controls as visible escapes, HTML's special characters as references. Returns the
/// text and how many characters past `max` were left out.
pub fn block(text: &str, max: usize) -> (String, usize) {
    let mut out = String::with_capacity(text.len().min(max.saturating_mul(4)) + 8);
    for (n, c) in text.chars().enumerate() {
        if n == max {
            return (out, text.chars().count() - max);
        }
        match c {
            '\n' | '\t' => out.push(c),
            c => push_escaped(&mut out, c),
        }
    }
    (out, 0)
}

/// A JSON document (as `serde_json` writes it) safe inside `<script type="application/json">`:
/// `<`, `>`, `&`, U+2028 and U+2029 become `\u003c`, `\u003e`, `\u0026`, `\u2028`, `\u2029`.
/// Those characters occur only inside JSON strings, where the escapes mean the same.
pub fn json_script(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_text_cannot_become_markup() {
        assert_eq!(
            inline("<img src=x onerror=alert(1)>", 100),
            "&lt;img src=x onerror=alert(1)&gt;"
        );
        assert_eq!(
            inline("<a href=\"javascript:x\">l</a> & 'q'", 100),
            "&lt;a href=&quot;javascript:x&quot;&gt;l&lt;/a&gt; &amp; &#39;q&#39;"
        );
        assert_eq!(inline("</script>", 100), "&lt;/script&gt;");
        assert_eq!(inline("two\nlines\tx", 100), "two lines x");
        assert_eq!(inline("abcdef", 3), "abc…");
        assert_eq!(inline("  ", 3), "—");
        // Bidi overrides, zero-width and the line separator are shown, not obeyed.
        assert_eq!(
            inline("a\u{202e}b\u{200b}c\u{2028}d\u{1b}[2J", 100),
            "a\\u{202e}b\\u{200b}c\\u{2028}d\\u{1b}[2J"
        );
        assert_eq!(inline("&amp;", 100), "&amp;amp;");
    }

    #[test]
    fn blocks_keep_lines_and_escape_the_rest() {
        assert_eq!(
            block("<b>x</b>\n\ty\r\n\u{0}", 100),
            ("&lt;b&gt;x&lt;/b&gt;\n\ty\\u{d}\n\\u{0}".to_string(), 0)
        );
        assert_eq!(block("abcdef", 2), ("ab".to_string(), 4));
        assert_eq!(block("", 2), (String::new(), 0));
    }

    #[test]
    fn json_cannot_close_its_script_element() {
        let v = serde_json::json!({"t": "</script><!-- & \u{2028}\u{2029} <script>"});
        let s = json_script(&v.to_string());
        assert_eq!(
            s,
            r#"{"t":"\u003c/script\u003e\u003c!-- \u0026 \u2028\u2029 \u003cscript\u003e"}"#
        );
        assert!(!s.contains('<') && !s.contains('>') && !s.contains('&'));
        assert_eq!(serde_json::from_str::<serde_json::Value>(&s).unwrap(), v);
    }
}
