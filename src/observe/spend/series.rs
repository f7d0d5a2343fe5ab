//! Each member's cost over time, response by response, from the transcript lines a reader hands
//! it (an export reads every line of every transcript once, as it copies them).
//!
//! A point is an API response's time (its entry's `timestamp`) and the member's cost up to and
//! including it, each response priced as [`crate::team::transcript::Spend`] prices it (counted
//! once per `message.id`, with the usage of its last entry, so the per-turn copies of an
//! in-process teammate's history count once). The series is then scaled so that its last point
//! is the member's figure exactly ([`super::MemberSpend::cost_usd`]): that figure may be Claude
//! Code's own (which also counts side requests it never writes to a transcript) or the lead's
//! share without its in-process teammates, so the shape is the responses' and the end is the
//! member's cost. A response without a readable time counts in the scale but has no point of
//! its own.
//!
//! The same responses give each member's tokens per minute ([`SeriesBuilder::tokens`]): all
//! four kinds of a response's usage (input, output, cache reads and writes, as `--max-tokens`
//! counts them) in the minute of its time.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};

use crate::team::transcript::{entry, pricing};
use crate::time::{iso_millis, parse_time};

/// `[[time, cumulative_usd], …]`, oldest first: times RFC 3339 UTC.
pub type Series = Vec<(String, f64)>;

/// The most points a series keeps by default (the first and the last always among them).
pub const MAX_POINTS: usize = 400;

/// One response: when (its last entry's time) and its computed cost, packed (a live team's
/// every response is kept: `serve`).
#[derive(Debug, Clone, Copy)]
struct Priced {
    /// Milliseconds since the epoch; [`NO_TIME`] when the entry has no readable time.
    at_ms: i64,
    /// NaN when its model has no price.
    usd: f64,
    tokens: u64,
}

/// [`Priced::at_ms`] of a response without a time.
const NO_TIME: i64 = i64::MIN;

impl Priced {
    fn at(&self) -> Option<DateTime<Utc>> {
        (self.at_ms != NO_TIME)
            .then(|| DateTime::<Utc>::from_timestamp_millis(self.at_ms))
            .flatten()
    }

    fn usd(&self) -> Option<f64> {
        (!self.usd.is_nan()).then_some(self.usd)
    }
}

/// Collects each member's responses from transcript lines.
#[derive(Debug, Default)]
pub struct SeriesBuilder {
    /// By member, each response by its `message.id`.
    members: BTreeMap<String, HashMap<Box<str>, Priced>>,
}

impl SeriesBuilder {
    /// Takes one transcript line (without its newline) of `member`'s; anything but an
    /// assistant entry with a usage is ignored.
    pub fn feed(&mut self, member: &str, line: &[u8]) {
        if entry::top_level_type(line) != Some(b"assistant") {
            return;
        }
        let Some(l) = entry::parse(line) else { return };
        let Some(m) = &l.message else { return };
        let model = m.model.as_deref().unwrap_or("");
        let (Some(id), Some(usage)) = (&m.id, &m.usage) else {
            return;
        };
        // `<synthetic>`: a message Claude Code made up itself, no API call.
        if model == "<synthetic>" {
            return;
        }
        let priced = l.requested_model.as_deref().unwrap_or(model);
        let at = l.timestamp.as_deref().and_then(parse_time);
        let p = Priced {
            at_ms: at.map_or(NO_TIME, |t| t.timestamp_millis()),
            usd: pricing::cost(priced, usage, l.version.as_deref()).unwrap_or(f64::NAN),
            tokens: usage
                .input_tokens
                .saturating_add(usage.output_tokens)
                .saturating_add(usage.cache_read_input_tokens)
                .saturating_add(usage.cache_creation_input_tokens),
        };
        if !self.members.contains_key(member) {
            self.members.insert(member.to_string(), HashMap::new());
        }
        if let Some(rs) = self.members.get_mut(member) {
            rs.insert(Box::from(id.as_ref()), p);
        }
    }

    /// `member`'s series, its last point `total` exactly when the member's cost is known
    /// (`None`: a model without a price, and the series is the priced responses' cost as
    /// computed). Empty when none of its responses has a time.
    /// At most `max` points, the first and the last among them.
    pub fn series(&self, member: &str, total: Option<f64>, max: usize) -> Series {
        let Some(rs) = self.members.get(member) else {
            return Series::new();
        };
        // Summed in one order whatever the map's (a float sum depends on its order, and a
        // record is the same bytes each time it is taken).
        let mut usd: Vec<f64> = rs.values().filter_map(Priced::usd).collect();
        usd.sort_by(f64::total_cmp);
        let computed: f64 = usd.iter().sum();
        let mut timed: Vec<(DateTime<Utc>, f64)> = rs
            .values()
            .filter_map(|p| Some((p.at()?, p.usd().unwrap_or(0.0))))
            .collect();
        timed.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let scale = match total {
            Some(t) if computed > 0.0 => t / computed,
            _ => 1.0,
        };
        let mut sum = 0.0;
        let mut out: Series = timed
            .into_iter()
            .map(|(at, usd)| {
                sum += usd;
                (iso_millis(at), sum * scale)
            })
            .collect();
        if let (Some(t), Some(last)) = (total, out.last_mut()) {
            last.1 = t;
        }
        thin(out, max)
    }

    /// How wide `member`'s buckets of tokens are, in minutes, and the buckets:
    /// `[[minute, tokens_per_minute], …]`, oldest first, each bucket (RFC 3339 UTC, its start)
    /// in which some of its timed responses came, with their tokens (all four kinds) per
    /// minute. Buckets are a minute wide unless its responses span more than `max` minutes
    /// (then as wide as keeps them at most `max`).
    pub fn tokens(&self, member: &str, max: usize) -> (u32, Series) {
        let Some(rs) = self.members.get(member) else {
            return (1, Series::new());
        };
        let timed: Vec<(i64, u64)> = rs
            .values()
            .filter_map(|p| Some((p.at()?.timestamp().div_euclid(60), p.tokens)))
            .collect();
        let (Some(first), Some(last)) = (
            timed.iter().map(|t| t.0).min(),
            timed.iter().map(|t| t.0).max(),
        ) else {
            return (1, Series::new());
        };
        let width = ((last - first) / max.max(1) as i64 + 1).max(1);
        let mut buckets: BTreeMap<i64, u64> = BTreeMap::new();
        for (minute, n) in timed {
            let b = buckets
                .entry(first + (minute - first) / width * width)
                .or_default();
            *b = b.saturating_add(n);
        }
        let series = buckets
            .into_iter()
            .filter_map(|(m, n)| {
                let at = DateTime::<Utc>::from_timestamp(m * 60, 0)?;
                Some((iso_millis(at), n as f64 / width as f64))
            })
            .collect();
        (u32::try_from(width).unwrap_or(u32::MAX), series)
    }
}

/// The team's cumulative cost from its members' series: at each member's point, the sum of
/// every member's latest value (so its last point is the sum of their ends). At most `max`
/// points, the first and the last among them.
pub fn total(members: &[&Series], max: usize) -> Series {
    let mut all: Vec<(&str, usize, f64)> = members
        .iter()
        .enumerate()
        .flat_map(|(k, s)| s.iter().map(move |(t, v)| (t.as_str(), k, *v)))
        .collect();
    // The times are RFC 3339 UTC with milliseconds (`iso_millis`): their order is the text's.
    all.sort_by(|a, b| a.0.cmp(b.0));
    let mut latest = vec![0.0; members.len()];
    let out = all
        .into_iter()
        .map(|(t, k, v)| {
            latest[k] = v;
            (t.to_string(), latest.iter().sum())
        })
        .collect();
    thin(out, max)
}

/// At most `max` points of `s`, spread evenly, the first and the last kept.
fn thin(s: Series, max: usize) -> Series {
    let n = s.len();
    if n <= max || max < 2 {
        return s;
    }
    let keep: Vec<usize> = (0..max).map(|i| i * (n - 1) / (max - 1)).collect();
    s.into_iter()
        .enumerate()
        .filter(|(i, _)| keep.binary_search(i).is_ok())
        .map(|(_, p)| p)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn response(id: &str, at: &str, out: u64) -> Vec<u8> {
        json!({"type":"assistant","timestamp":at,"message":{"id":id,"model":"claude-opus-5-5",
            "content":[],"usage":{"input_tokens":10,"output_tokens":out}}})
        .to_string()
        .into_bytes()
    }

    #[test]
    fn responses_counted_once_in_time_order_ending_at_the_members_figure() {
        let mut b = SeriesBuilder::default();
        b.feed("w", &response("r2", "2026-12-01T00:02:00Z", 5));
        b.feed("w", &response("r1", "2026-12-01T00:01:00Z", 5));
        // Another block of r1, and a copy of it in another file: once, last usage.
        b.feed("w", &response("r1", "2026-12-01T00:01:00.500Z", 5));
        b.feed("w", br#"{"type":"user","message":{"content":"x"}}"#);
        b.feed("w", b"{torn");
        let s = b.series("w", None, MAX_POINTS);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].0, "2026-12-01T00:01:00.500Z");
        let one = s[0].1;
        assert!(one > 0.0);
        assert!((s[1].1 - 2.0 * one).abs() < 1e-15);
        // Scaled to the member's figure, its last point that figure exactly.
        let s = b.series("w", Some(0.1), MAX_POINTS);
        assert_eq!(s[1].1, 0.1);
        assert!((s[0].1 - 0.05).abs() < 1e-12);
        assert!(b.series("nobody", Some(1.0), MAX_POINTS).is_empty());
    }

    #[test]
    fn tokens_per_minute_count_each_response_once_in_its_minute() {
        let mut b = SeriesBuilder::default();
        b.feed("w", &response("r1", "2026-12-01T00:01:10Z", 5));
        b.feed("w", &response("r1", "2026-12-01T00:01:20Z", 5));
        b.feed("w", &response("r2", "2026-12-01T00:01:50Z", 7));
        b.feed("w", &response("r3", "2026-12-01T00:04:00Z", 1));
        let (width, t) = b.tokens("w", MAX_POINTS);
        assert_eq!(width, 1);
        assert_eq!(
            t,
            vec![
                ("2026-12-01T00:01:00.000Z".to_string(), 32.0),
                ("2026-12-01T00:04:00.000Z".to_string(), 11.0)
            ]
        );
        assert!(b.tokens("nobody", MAX_POINTS).1.is_empty());
    }

    #[test]
    fn the_same_responses_give_the_same_bits_each_time() {
        // Costs whose float sum depends on its order; each builder's map has its own order.
        let series = || {
            let mut b = SeriesBuilder::default();
            for i in 0..40u64 {
                let at = format!("2026-12-01T00:{:02}:00Z", i % 7);
                b.feed("w", &response(&format!("r{i}"), &at, 1 + i * 37 % 101));
            }
            b.series("w", Some(0.3), MAX_POINTS)
        };
        let first = series();
        for _ in 0..20 {
            let again = series();
            assert!(
                first
                    .iter()
                    .zip(&again)
                    .all(|(a, b)| a.0 == b.0 && a.1.to_bits() == b.1.to_bits()),
                "{first:?} != {again:?}"
            );
        }
    }

    #[test]
    fn the_total_adds_each_members_latest_value_at_every_point() {
        let p = |t: &str, v: f64| (format!("2026-12-01T00:0{t}:00.000Z"), v);
        let a: Series = vec![p("1", 1.0), p("4", 3.0)];
        let b: Series = vec![p("2", 0.5), p("3", 2.0)];
        let t = total(&[&a, &b], MAX_POINTS);
        let values: Vec<f64> = t.iter().map(|x| x.1).collect();
        assert_eq!(values, [1.0, 1.5, 3.0, 5.0]);
        assert_eq!(t[3].0, "2026-12-01T00:04:00.000Z");
        assert!(total(&[], MAX_POINTS).is_empty());
        assert_eq!(total(&[&a, &b], 2).len(), 2);
    }

    #[test]
    fn long_series_are_thinned_keeping_both_ends() {
        let s: Series = (0..1000).map(|i| (i.to_string(), i as f64)).collect();
        let t = thin(s, 400);
        assert_eq!(t.len(), 400);
        assert_eq!(t[0].1, 0.0);
        assert_eq!(t[399].1, 999.0);
        assert!(t.windows(2).all(|w| w[0].1 < w[1].1));
    }
}
