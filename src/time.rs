//! Timestamps as Claude Code writes them, and the durations and times users type.

use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, SecondsFormat, Utc};

use crate::error::usage;

/// `new Date().toISOString()`: UTC, exactly three fraction digits, `Z`.
pub fn iso_millis(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// An RFC 3339 time as UTC; `None` when `at` is not one.
pub fn parse_time(at: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(at)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Parses a duration: what `humantime` accepts (`500ms`, `10m`, `2h`, `1d`, `1h 30m`, `1.5s`,
/// `2days`), plus a bare number, meaning seconds.
///
/// # Errors
/// An [`crate::Error::Usage`] for anything else.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let s = s.trim();
    // A bare number (`5`, `0.5`) is seconds: humantime insists on a unit, and `--timeout 30`
    // worked before humantime did the parsing, so this one case stays ours.
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let n: f64 = s.parse().map_err(|_| bad_duration(s))?;
        if n.is_finite() && n > MAX_DURATION.as_secs_f64() || n == f64::INFINITY {
            return Ok(MAX_DURATION);
        }
        return Duration::try_from_secs_f64(n).map_err(|_| bad_duration(s));
    }
    match humantime::parse_duration(s) {
        Ok(d) => Ok(d.min(MAX_DURATION)),
        // humantime reports a number too large for a Duration as its own error kind: that is
        // still a duration, only a long one.
        Err(humantime::DurationError::NumberOverflow) => Ok(MAX_DURATION),
        Err(_) => Err(bad_duration(s)),
    }
}

/// The longest duration teamctl uses: 100 years. A longer one (`9223372036854775807s`, a
/// script's way of saying "for ever") is clamped to it when parsed, so every deadline made from
/// it (`now + d`, `now - d`) fits and nothing can panic after a write.
pub const MAX_DURATION: Duration = Duration::from_secs(100 * 365 * 24 * 3600 + 25 * 24 * 3600);

fn bad_duration(s: &str) -> anyhow::Error {
    usage(format!(
        "invalid duration '{s}': use a number with ms, s, m, h or d (e.g. 500ms, 10m)"
    ))
}

/// Parses a point in time: RFC 3339 (`2026-11-29T10:00:00Z`), or a duration meaning that long
/// before `now` (`10m`, `2h`).
///
/// # Errors
/// An [`crate::Error::Usage`] when it is neither.
pub fn parse_since(s: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
    }
    let d = parse_duration(s).map_err(|_| {
        usage(format!(
            "invalid time '{s}': use RFC 3339 (2026-11-29T10:00:00Z) or an age like 10m"
        ))
    })?;
    let d =
        chrono::Duration::from_std(d).map_err(|_| usage(format!("time '{s}' is too far back")))?;
    Ok(now - d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_has_three_digits_and_z() {
        let t = DateTime::parse_from_rfc3339("2026-11-29T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(iso_millis(t), "2026-11-29T10:00:00.000Z");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("5").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("2h").unwrap(), Duration::from_secs(7200));
        assert_eq!(parse_duration("1d").unwrap(), Duration::from_secs(86400));
        assert_eq!(parse_duration(" 30s ").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("0.5").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1h 30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("10 m").unwrap(), Duration::from_secs(600));
        for bad in ["", "x", "5x", "-1s", "ms", ".", "1..2"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        // Too long for a deadline: clamped, never a panic later.
        for long in [
            "9223372036854775807s",
            "18446744073709551615s",
            "99999999999999999999999999",
            "9223372036854775807",
            "200years",
            &"9".repeat(400),
        ] {
            assert_eq!(parse_duration(long).unwrap(), MAX_DURATION, "{long}");
            let now = std::time::Instant::now();
            let _ = now + parse_duration(long).unwrap();
            assert!(parse_since(long, Utc::now()).is_ok(), "{long}");
        }
    }

    #[test]
    fn since() {
        let now = DateTime::parse_from_rfc3339("2026-11-29T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(
            iso_millis(parse_since("10m", now).unwrap()),
            "2026-11-29T09:50:00.000Z"
        );
        assert_eq!(
            iso_millis(parse_since("2026-11-29T11:00:00+01:00", now).unwrap()),
            "2026-11-29T10:00:00.000Z"
        );
        assert!(parse_since("yesterday", now).is_err());
    }
}
