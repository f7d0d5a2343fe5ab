//! Numbers for people, one format each: a cost ([`usd`]), a count ([`count`]), a context's use
//! ([`context`]), how long ago something happened ([`age`], [`ago`], from the one reading of a
//! time's distance, [`seconds_since`]) and how long something took or has lasted
//! ([`duration`]). Every human output (`status`, `top`, the budget message, `report.md`,
//! `teamctl report`) prints through these, so the same number reads the same everywhere.

use chrono::{DateTime, Utc};

/// `$12.34`; below a cent, four decimals (`$0.0042`), or enough to show it (`$0.00005`); `$0.00`
/// for zero.
pub fn usd(v: f64) -> String {
    if v > 0.0 && v < 0.01 {
        // Four decimals; below a hundredth of a cent, two significant digits (a tiny cap never
        // reads as $0.0000).
        let decimals = if v < 0.0001 {
            (-v.log10()).floor() as usize + 2
        } else {
            4
        };
        let s = format!("${v:.decimals$}");
        if decimals > 4 {
            s.trim_end_matches('0').to_string()
        } else {
            s
        }
    } else {
        format!("${v:.2}")
    }
}

/// `800`, `1.2k`, `3.4M`.
pub fn count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// A context's use: `12.5%` of its window, or the tokens (`45.2k`) when the window is unknown.
pub fn context(used: u64, percent: Option<f64>) -> String {
    match percent {
        Some(p) => format!("{p:.1}%"),
        None => count(used),
    }
}

/// An age in its largest whole unit: `45s`, `3m`, `2h`, `5d` (a negative one is `0s`).
pub fn age(secs: i64) -> String {
    match secs.max(0) {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86400 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

/// Whole seconds from `at` (RFC 3339) to `now`; `None` when `at` is not a time.
pub fn seconds_since(now: DateTime<Utc>, at: &str) -> Option<i64> {
    Some((now - crate::time::parse_time(at)?).num_seconds())
}

/// How long before `now` `at` (RFC 3339) was: `3m ago` (as [`age`] says it), or `in the future`;
/// `None` when `at` is not a time.
pub fn ago(now: DateTime<Utc>, at: &str) -> Option<String> {
    seconds_since(now, at).map(|s| {
        if s < 0 {
            "in the future".into()
        } else {
            format!("{} ago", age(s))
        }
    })
}

/// How long something has been up, as `top`'s header says it: `45s` and `3m` in one unit, then
/// two: `2h 5m`, `3d 4h` (a negative one is `0s`).
pub fn uptime(secs: i64) -> String {
    match secs.max(0) {
        s if s < 3600 => age(s),
        s if s < 86400 => format!("{}h {}m", s / 3600, s % 3600 / 60),
        s => format!("{}d {}h", s / 86400, s % 86400 / 3600),
    }
}

/// A duration in its two largest units: `12s`, `4m 05s`, `1h 02m`, `3d 04h`.
pub fn duration(secs: u64) -> String {
    match (secs / 86400, secs / 3600 % 24, secs / 60 % 60, secs % 60) {
        (0, 0, 0, s) => format!("{s}s"),
        (0, 0, m, s) => format!("{m}m {s:02}s"),
        (0, h, m, _) => format!("{h}h {m:02}m"),
        (d, h, _, _) => format!("{d}d {h:02}h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ago_reads_a_time_once_and_says_its_distance() {
        let now: DateTime<Utc> = "2026-11-29T10:05:00Z".parse().unwrap();
        assert_eq!(
            ago(now, "2026-11-29T10:02:00.000Z").as_deref(),
            Some("3m ago")
        );
        assert_eq!(
            ago(now, "2026-11-29T10:06:00Z").as_deref(),
            Some("in the future")
        );
        assert_eq!(ago(now, "yesterday"), None);
        assert_eq!(seconds_since(now, "2026-11-29T10:04:59Z"), Some(1));
    }

    #[test]
    fn usd_shows_cents_or_enough_digits() {
        assert_eq!(usd(1.234), "$1.23");
        assert_eq!(usd(12.0), "$12.00");
        assert_eq!(usd(0.01), "$0.01");
        assert_eq!(usd(0.0042), "$0.0042");
        assert_eq!(usd(0.0), "$0.00");
        assert_eq!(usd(0.00005), "$0.00005");
        assert_eq!(usd(0.000_012_3), "$0.000012");
        assert_eq!(usd(0.0003), "$0.0003");
        assert_eq!(usd(0.00028), "$0.0003");
    }

    #[test]
    fn counts_ages_and_durations() {
        assert_eq!(count(800), "800");
        assert_eq!(count(1_234), "1.2k");
        assert_eq!(count(3_400_000), "3.4M");
        assert_eq!(age(-5), "0s");
        assert_eq!(age(45), "45s");
        assert_eq!(age(200), "3m");
        assert_eq!(age(7300), "2h");
        assert_eq!(age(5 * 86400 + 7), "5d");
        assert_eq!(uptime(-5), "0s");
        assert_eq!(uptime(200), "3m");
        assert_eq!(uptime(7300), "2h 1m");
        assert_eq!(uptime(7200), "2h 0m");
        assert_eq!(uptime(366 * 86400 + 22 * 3600 + 5), "366d 22h");
        assert_eq!(duration(12), "12s");
        assert_eq!(duration(245), "4m 05s");
        assert_eq!(duration(3720), "1h 02m");
        assert_eq!(duration(3 * 86400 + 4 * 3600 + 59), "3d 04h");
    }
}
