//! The page's charts over time, on one time axis ([`Axis`]): each member's cumulative cost (with
//! the run's caps and `--warn-at` lines, and the team's total when the run had a team cap) and
//! each member's tokens per minute. Inline SVG; names go through the one escaper.

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use crate::observe::spend::series::{self, Series};
use crate::ops::export::summary::RunCap;
use crate::text::html::inline;
use crate::time::parse_time;
use crate::units;

use super::data::{Embedded, EmbeddedMember};

/// The plot's box in the SVG's user units: left, top, right, bottom.
pub const PLOT: (f64, f64, f64, f64) = (58.0, 12.0, 628.0, 212.0);

/// A limit more than this many times the most spent is named under the chart, not drawn.
const FAR_ABOVE: f64 = 4.0;

/// A series' points that have a time.
type Points = Vec<(DateTime<Utc>, f64)>;

/// The time axis every drawing of the page shares.
#[derive(Debug, Clone, Copy)]
pub struct Axis {
    /// Its start.
    pub t0: DateTime<Utc>,
    /// Its end.
    pub t1: DateTime<Utc>,
}

impl Axis {
    /// The axis spanning every time `e` draws (`None`: nothing has a time).
    pub fn of(e: &Embedded) -> Option<Axis> {
        let mut times: Vec<DateTime<Utc>> = Vec::new();
        for m in &e.members {
            // Not the token buckets' starts: a bucket begins before its first response.
            for (t, _) in &m.cost_series {
                times.extend(parse_time(t));
            }
            times.extend(m.lane.spans.first().map(|s| s.from));
            times.extend(m.lane.spans.last().map(|s| s.to));
        }
        for t in &e.tasks {
            times.extend(t.events.iter().map(|e| e.at));
        }
        Some(Axis {
            t0: *times.iter().min()?,
            t1: *times.iter().max()?,
        })
    }

    /// `at`'s x in the plot.
    pub fn x(&self, at: DateTime<Utc>) -> f64 {
        let span = (self.t1 - self.t0).num_milliseconds().max(1) as f64;
        let (l, _, r, _) = PLOT;
        l + (r - l) * ((at - self.t0).num_milliseconds() as f64 / span).clamp(0.0, 1.0)
    }

    /// The axis' two ends, labelled under `y`.
    pub fn labels(&self, h: &mut String, y: f64) {
        let (l, _, r, _) = PLOT;
        let _ = writeln!(
            h,
            "<text x=\"{l}\" y=\"{y}\">{}</text>\n<text x=\"{r}\" y=\"{y}\" text-anchor=\"end\">{}</text>",
            self.clock(self.t0),
            self.clock(self.t1)
        );
    }

    /// `12-01 03:29` for an axis, `03:29:12` when it spans less than an hour.
    fn clock(&self, t: DateTime<Utc>) -> String {
        if self.t1 - self.t0 < chrono::Duration::hours(1) {
            t.format("%H:%M:%S").to_string()
        } else {
            t.format("%m-%d %H:%M").to_string()
        }
    }
}

/// A series' points that have a time.
fn points(s: &[(String, f64)]) -> Points {
    s.iter()
        .filter_map(|(t, v)| Some((parse_time(t)?, *v)))
        .collect()
}

/// The team's cumulative cost ([`series::total`]), every point of it.
fn team_total(e: &Embedded) -> Points {
    let members: Vec<&Series> = e.members.iter().map(|m| &m.cost_series).collect();
    points(&series::total(&members, usize::MAX))
}

/// The horizontal lines of the run's limits on the cost chart: (value, class, label).
fn cap_lines(cap: Option<&RunCap>) -> Vec<(f64, &'static str, String)> {
    let Some(c) = cap else { return Vec::new() };
    let mut out = Vec::new();
    let mut add = |limit: f64, what: &str| {
        out.push((limit, "cap", format!("{what} {}", units::usd(limit))));
        if let Some(p) = c.warn_at_percent {
            let at = limit * p / 100.0;
            out.push((at, "warn", format!("--warn-at {p}% {}", units::usd(at))));
        }
    };
    if let Some(m) = c.max_cost_usd {
        add(m, "--max-cost");
    }
    if let Some(m) = c.max_cost_per_member {
        add(m, "--max-cost-per-member");
    }
    out
}

/// A step line through `p` from nothing: the value rises at each point and holds until the
/// next.
fn steps(p: &Points, x: impl Fn(DateTime<Utc>) -> f64, y: impl Fn(f64) -> f64) -> String {
    let mut pts = String::with_capacity(p.len() * 24);
    let mut last = p.first().map(|_| y(0.0));
    for (at, v) in p {
        let (px, py) = (x(*at), y(*v));
        if let Some(prev) = last {
            let _ = write!(pts, "{px:.1},{prev:.1} ");
        }
        let _ = write!(pts, "{px:.1},{py:.1} ");
        last = Some(py);
    }
    pts.trim_end().to_string()
}

/// Each member's cumulative cost over time as one SVG chart, with the run's limits and a
/// legend; nothing when no member's responses have times.
pub fn cost(h: &mut String, e: &Embedded, axis: Option<Axis>) {
    let drawn: Vec<(usize, &EmbeddedMember, Points)> = e
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| (i, m, points(&m.cost_series)))
        .filter(|(_, _, p)| !p.is_empty())
        .collect();
    let (Some(axis), false) = (axis, drawn.is_empty()) else {
        h.push_str(
            "<p class=\"mute\">No response times on record: no chart of the cost over time.</p>\n",
        );
        return;
    };
    let total = e
        .cap
        .is_some_and(|c| c.max_cost_usd.is_some())
        .then(|| team_total(e));
    let spent = drawn
        .iter()
        .flat_map(|(_, _, p)| p.iter().map(|p| p.1))
        .chain(total.iter().flat_map(|p| p.iter().map(|p| p.1)))
        .fold(0.0_f64, f64::max);
    // A limit far above what was spent would flatten every line: it is named, not drawn.
    let (caps, above): (Vec<_>, Vec<_>) = cap_lines(e.cap.as_ref())
        .into_iter()
        .partition(|c| c.0 <= spent * FAR_ABOVE);
    let vmax = caps.iter().map(|c| c.0).fold(spent, f64::max);
    let (l, t, r, b) = PLOT;
    let y = |v: f64| b - (b - t) * if vmax > 0.0 { v / vmax } else { 0.0 };
    let _ = writeln!(
        h,
        "<svg viewBox=\"0 0 640 240\" role=\"img\" aria-label=\"Cumulative cost per member over time\">\n\
         <path class=\"axis\" d=\"M{l} {t}V{b}H{r}\"/>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n\
         <text x=\"{}\" y=\"{b}\" text-anchor=\"end\">$0</text>",
        l - 4.0,
        t + 8.0,
        units::usd(vmax),
        l - 4.0,
    );
    axis.labels(h, b + 16.0);
    for (v, class, label) in &caps {
        let _ = writeln!(
            h,
            "<path class=\"{class}\" d=\"M{l} {y:.1}H{r}\"/><text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{label}</text>",
            r - 2.0,
            y(*v) - 3.0,
            y = y(*v)
        );
    }
    if let Some(total) = &total {
        let _ = writeln!(
            h,
            "<polyline class=\"total\" points=\"{}\"/>",
            steps(total, |a| axis.x(a), y)
        );
    }
    for (i, _, p) in &drawn {
        let _ = writeln!(
            h,
            "<polyline class=\"c{}\" points=\"{}\"/>",
            i % 10,
            steps(p, |a| axis.x(a), y)
        );
    }
    h.push_str("</svg>\n<ul class=\"legend\">");
    for (i, m, _) in &drawn {
        let _ = write!(
            h,
            "<li><span class=\"sw c{}\"></span>{} {}</li>",
            i % 10,
            inline(m.name, 64),
            m.cost_usd.map_or("unknown".into(), units::usd)
        );
    }
    if total.is_some() {
        h.push_str("<li><span class=\"sw total\"></span>team total</li>");
    }
    h.push_str("</ul>\n<p class=\"mute\">Times UTC. Each line is a member's cost up to each of its responses (priced from their usage), scaled to end at the member's cost.");
    match (&e.cap, caps.is_empty() && above.is_empty()) {
        (Some(_), false) if caps.is_empty() => {}
        (Some(_), false) => h.push_str(
            " The run's limits are the red lines (dashed) and its --warn-at shares of them the \
             orange (dotted); the team's cap is held against the team's total.",
        ),
        (Some(_), true) => h.push_str(" The run had no cost limit."),
        (None, _) => h.push_str(" No run took this record: no limits are known."),
    }
    if !above.is_empty() {
        let named: Vec<&str> = above.iter().map(|c| c.2.as_str()).collect();
        let _ = write!(
            h,
            " Far above what was spent, so not drawn: {}.",
            inline(&named.join(", "), 300)
        );
    }
    h.push_str("</p>\n");
}

/// Each member's tokens per minute as one SVG chart (bars per bucket, one outline per member).
pub fn tokens(h: &mut String, e: &Embedded, axis: Option<Axis>) {
    let drawn: Vec<(usize, &EmbeddedMember, Points)> = e
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| (i, m, points(&m.tokens_series)))
        .filter(|(_, _, p)| !p.is_empty())
        .collect();
    let Some(axis) = axis.filter(|_| !drawn.is_empty()) else {
        return;
    };
    h.push_str("<h3>Tokens per minute</h3>\n");
    let vmax = drawn
        .iter()
        .flat_map(|(_, _, p)| p.iter().map(|p| p.1))
        .fold(0.0_f64, f64::max);
    let (l, t, r, b) = PLOT;
    let y = |v: f64| b - (b - t) * if vmax > 0.0 { v / vmax } else { 0.0 };
    let _ = writeln!(
        h,
        "<svg viewBox=\"0 0 640 240\" role=\"img\" aria-label=\"Tokens per minute per member\">\n\
         <path class=\"axis\" d=\"M{l} {t}V{b}H{r}\"/>\n\
         <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n\
         <text x=\"{}\" y=\"{b}\" text-anchor=\"end\">0</text>",
        l - 4.0,
        t + 8.0,
        units::count(vmax.round() as u64),
        l - 4.0,
    );
    axis.labels(h, b + 16.0);
    for (i, m, p) in &drawn {
        let width = chrono::Duration::minutes(i64::from(m.tokens_bucket_minutes.max(1)));
        let mut d = String::with_capacity(p.len() * 32);
        for (at, v) in p {
            let (x0, x1) = (axis.x(*at), axis.x(*at + width));
            let _ = write!(d, "M{x0:.1} {b}V{:.1}H{:.1}V{b}", y(*v), x1.max(x0 + 0.5));
        }
        let _ = writeln!(h, "<path class=\"c{} bar\" d=\"{d}\"/>", i % 10);
    }
    h.push_str("</svg>\n");
    let wide = drawn
        .iter()
        .map(|d| d.1.tokens_bucket_minutes)
        .max()
        .unwrap_or(1);
    let _ = writeln!(
        h,
        "<p class=\"mute\">Tokens of every kind (input, output, cache reads and writes) of each member's responses, per minute{}; same colours as above.</p>",
        if wide > 1 {
            format!(", averaged over {wide}-minute buckets for a long run")
        } else {
            String::new()
        }
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_and_warnings_become_lines() {
        let cap = RunCap {
            max_cost_usd: Some(2.0),
            max_cost_per_member: None,
            max_tokens: None,
            warn_at_percent: Some(50.0),
        };
        let lines = cap_lines(Some(&cap));
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].0, 2.0);
        assert_eq!(lines[1].0, 1.0);
        assert!(lines[1].2.contains("--warn-at 50%"), "{lines:?}");
        assert!(cap_lines(None).is_empty());
    }

    fn page_of(
        cap: Option<RunCap>,
        series: Vec<(String, f64)>,
        tokens: Vec<(String, f64)>,
    ) -> String {
        let e = Embedded {
            schema_version: 1,
            team: "t",
            generated_at: "2026-12-01T01:00:00.000Z",
            run_state: None,
            cap,
            cost_usd: Some(1.0),
            members: vec![EmbeddedMember {
                name: "<b onclick=x>",
                cost_usd: Some(1.0),
                cost_source: None,
                cost_series: series,
                tokens_bucket_minutes: 1,
                tokens_series: tokens,
                lane: Default::default(),
            }],
            lanes_end: None,
            tasks: Vec::new(),
        };
        let axis = Axis::of(&e);
        let mut h = String::new();
        cost(&mut h, &e, axis);
        super::tokens(&mut h, &e, axis);
        h
    }

    #[test]
    fn the_cost_chart_draws_the_caps_the_total_and_ends_at_the_cost() {
        let series = vec![
            ("2026-12-01T00:00:00.000Z".to_string(), 0.5),
            ("2026-12-01T00:10:00.000Z".to_string(), 1.0),
        ];
        let cap = RunCap {
            max_cost_usd: Some(2.0),
            max_tokens: None,
            max_cost_per_member: None,
            warn_at_percent: Some(50.0),
        };
        let h = page_of(Some(cap), series.clone(), series.clone());
        assert!(h.contains("&lt;b onclick=x&gt;"), "{h}");
        assert!(!h.contains("<b "));
        // The cap at the top (the highest value), the warning at half of it.
        assert!(
            h.contains("<path class=\"cap\" d=\"M58 12.0H628\"/>"),
            "{h}"
        );
        assert!(
            h.contains("<path class=\"warn\" d=\"M58 112.0H628\"/>"),
            "{h}"
        );
        assert!(h.contains("--max-cost $2.00"), "{h}");
        assert!(h.contains("<polyline class=\"total\""), "{h}");
        // The member's last point: the latest time, at half the plot (1 of 2).
        assert!(h.contains("628.0,112.0\"/>"), "{h}");
        assert!(h.contains("Tokens per minute"), "{h}");
        // A cap far above the spend: named, not drawn, the lines at their own scale.
        let far = RunCap {
            max_cost_usd: Some(100.0),
            ..cap
        };
        let h = page_of(Some(far), series.clone(), Vec::new());
        assert!(
            !h.contains("class=\"cap\"") && !h.contains("class=\"warn\""),
            "{h}"
        );
        assert!(
            h.contains("so not drawn: --max-cost $100.00, --warn-at 50% $50.00."),
            "{h}"
        );
        assert!(h.contains("628.0,12.0\"/>"), "{h}");
        assert!(!h.contains("red lines"), "{h}");
        let none = page_of(None, series, Vec::new());
        assert!(!none.contains("class=\"cap\"") && !none.contains("class=\"total\""));
        assert!(none.contains("no limits are known"));
        assert!(none.contains("628.0,12.0\"/>"), "{none}");
        assert!(!none.contains("Tokens per minute"));
        let empty = page_of(None, Vec::new(), Vec::new());
        assert!(empty.contains("No response times"), "{empty}");
    }
}
