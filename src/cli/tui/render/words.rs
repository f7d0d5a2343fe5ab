//! Times and text shaped for the screen: `5s` ago, `19:35:00`, lines wrapped at a space, text
//! cut from the front (counts and dollars are [`teamctl::units`]'s).

use chrono::{DateTime, Utc};
use teamctl::units;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `5s`, `3m`, `2h`, `4d`; `-` for no time.
pub(super) fn age_at(now: DateTime<Utc>, at: Option<&str>) -> String {
    at.and_then(|a| since(now, a)).unwrap_or_else(|| "-".into())
}

/// How long ago `at` was (as [`units::age`]); `None` when it is not a time.
pub(super) fn since(now: DateTime<Utc>, at: &str) -> Option<String> {
    units::seconds_since(now, at).map(units::age)
}

/// How long the team has been up (as [`units::uptime`]); `None` when `at` is not a time.
pub(super) fn up_since(now: DateTime<Utc>, at: &str) -> Option<String> {
    units::seconds_since(now, at).map(units::uptime)
}

/// `19:35:00` (UTC, as `watch` prints times).
pub(super) fn clock(at: &str) -> String {
    match DateTime::parse_from_rfc3339(at) {
        Ok(t) => t.with_timezone(&Utc).format("%H:%M:%S").to_string(),
        Err(_) => "--:--:--".into(),
    }
}

/// Breaks safe text into lines of at most `width` columns, at a space where one is near.
pub(super) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut line = String::new();
    let mut w = 0;
    for c in text.chars() {
        let cw = c.width().unwrap_or(0);
        if w + cw > width && !line.is_empty() {
            if c == ' ' {
                out.push(std::mem::take(&mut line));
                w = 0;
                continue;
            }
            // Carry the last word over when the break would split it.
            match line.rfind(' ') {
                Some(i) if line[..i].width() >= width / 2 => {
                    let rest = line.split_off(i + 1);
                    out.push(line.trim_end().to_string());
                    w = rest.width();
                    line = rest;
                }
                _ => {
                    out.push(std::mem::take(&mut line));
                    w = 0;
                }
            }
        }
        line.push(c);
        w += cw;
    }
    out.push(line);
    out
}

/// `text` (already escaped) cut from the front to at most `max` columns, with `…` when cut.
pub(super) fn cut_front(text: &str, max: usize) -> String {
    if text.width() <= max {
        return text.to_string();
    }
    let mut kept: Vec<char> = Vec::new();
    let mut used = 1;
    for c in text.chars().rev() {
        let w = c.width().unwrap_or(0);
        if used + w > max {
            break;
        }
        used += w;
        kept.push(c);
    }
    std::iter::once('…').chain(kept.into_iter().rev()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_breaks_at_spaces_and_counts_wide_characters() {
        assert_eq!(wrap("aaa bbb ccc", 7), ["aaa bbb", "ccc"]);
        assert_eq!(wrap("日本語日本語", 6), ["日本語", "日本語"]);
        assert_eq!(wrap("", 5), [""]);
    }
}
