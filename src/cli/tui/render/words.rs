//! Times, counts and text shaped for the screen: `5s` ago, `2h 13m` up, `19:35:00`, `1.2k`,
//! lines wrapped at a space, text cut from the front.

use chrono::{DateTime, Utc};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// `5s`, `3m`, `2h`, `4d`; `-` for no time.
pub(super) fn ago(now: DateTime<Utc>, at: Option<&str>) -> String {
    let Some(t) = at.and_then(|a| DateTime::parse_from_rfc3339(a).ok()) else {
        return "-".into();
    };
    let s = (now - t.with_timezone(&Utc)).num_seconds().max(0);
    match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

/// `3d 4h`, `2h 13m`, `5m`, `40s`.
pub(super) fn elapsed(now: DateTime<Utc>, since: &str) -> Option<String> {
    let t = DateTime::parse_from_rfc3339(since).ok()?;
    let s = (now - t.with_timezone(&Utc)).num_seconds().max(0);
    Some(match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86400 => format!("{}h {}m", s / 3600, s % 3600 / 60),
        s => format!("{}d {}h", s / 86400, s % 86400 / 3600),
    })
}

/// `19:35:00` (UTC, as `watch` prints times).
pub(super) fn clock(at: &str) -> String {
    match DateTime::parse_from_rfc3339(at) {
        Ok(t) => t.with_timezone(&Utc).format("%H:%M:%S").to_string(),
        Err(_) => "--:--:--".into(),
    }
}

/// `1.2k`, `3.4M`, `800`.
pub(super) fn count(n: u64) -> String {
    match n {
        n if n >= 1_000_000 => format!("{:.1}M", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1}k", n as f64 / 1e3),
        n => n.to_string(),
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
