//! What the page draws, worked out once from the summary and the transcripts' [`History`], and
//! embedded as JSON ([`Embedded`]) for a script to read.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::observe::history::History;
use crate::observe::history::lanes::{self, FrameAt, Lane};
use crate::observe::reader::Options;
use crate::observe::spend::CostSource;
use crate::observe::spend::series::{MAX_POINTS, Series};
use crate::ops::export::summary::{RunCap, Summary};
use crate::time::parse_time;

use super::task_lines::{self, TaskLine};

/// The points of the cost and token series the page keeps in all (each member's at most
/// [`MAX_POINTS`], and at least 60).
const POINTS: usize = 4000;

/// The spans of the lanes the page keeps in all (each lane's at most
/// [`lanes::MAX_SPANS`], and at least 40).
const SPANS: usize = 2400;

/// The data the page draws, embedded as JSON for a script to read.
#[derive(Debug, Serialize)]
pub struct Embedded<'a> {
    /// Always 1.
    pub schema_version: u32,
    /// The team.
    pub team: &'a str,
    /// When the record was taken.
    pub generated_at: &'a str,
    /// The run's state (`run --export`), else `null`.
    pub run_state: Option<&'a str>,
    /// The run's spending limits (`run --export`), else `null`.
    pub cap: Option<RunCap>,
    /// The team's cost (`summary.json` `cost.cost_usd`).
    pub cost_usd: Option<f64>,
    /// Each member with a transcript (`summary.json` `cost.members[]` order), then the others.
    pub members: Vec<EmbeddedMember<'a>>,
    /// Where the lanes end: the record's time, or the team's last activity when the record was
    /// taken long after it (`null`: no lane).
    pub lanes_end: Option<String>,
    /// Each task over time.
    pub tasks: Vec<TaskLine<'a>>,
}

/// One member in [`Embedded`].
#[derive(Debug, Serialize)]
pub struct EmbeddedMember<'a> {
    /// Name.
    pub name: &'a str,
    /// Its cost, as `summary.json` has it (`null`: unknown, or no transcript).
    pub cost_usd: Option<f64>,
    /// Where the cost comes from.
    pub cost_source: Option<CostSource>,
    /// `[[time, cumulative_usd], …]`: its last point is `cost_usd` when that is known.
    pub cost_series: Series,
    /// How many minutes one point of `tokens_series` covers.
    pub tokens_bucket_minutes: u32,
    /// `[[time, tokens_per_minute], …]`: tokens of all kinds, per bucket.
    pub tokens_series: Series,
    /// Its state over time ([`crate::observe::history::lanes`]).
    pub lane: Lane,
}

impl<'a> Embedded<'a> {
    /// What the page of `s` embeds, drawn from `h`.
    pub fn of(s: &'a Summary, h: &'a History) -> Embedded<'a> {
        let mut names: Vec<(&'a str, Option<f64>, Option<CostSource>)> = s
            .cost
            .iter()
            .flat_map(|c| &c.members)
            .map(|m| (m.name.as_str(), m.cost_usd, m.cost_source))
            .collect();
        for m in &s.status.members {
            if !names.iter().any(|e| e.0 == m.name) {
                names.push((&m.name, m.cost_usd, None));
            }
        }
        let frames = frames(s);
        let end = lanes_end(s, h, &frames);
        let stall_after = Options::default().stall_after;
        // A big team's drawings share the page: fewer points and spans each.
        let drawn = names.iter().filter(|n| h.lanes.has(n.0)).count().max(1);
        let points = (POINTS / drawn).clamp(60, MAX_POINTS);
        let max_spans = (SPANS / drawn).clamp(40, lanes::MAX_SPANS);
        let members = names
            .into_iter()
            .map(|(name, cost_usd, cost_source)| {
                let (tokens_bucket_minutes, tokens_series) = h.spend.tokens(name, points);
                let lane = match end {
                    Some(end) => h.lanes.lane(
                        name,
                        &lanes::Context {
                            end,
                            stall_after,
                            frames: &frames,
                            waiting_at_end: s
                                .status
                                .members
                                .iter()
                                .find(|m| m.name == name)
                                .and_then(|m| m.waiting),
                            max_spans,
                        },
                    ),
                    None => Lane::default(),
                };
                EmbeddedMember {
                    name,
                    cost_usd,
                    cost_source,
                    cost_series: h.spend.series(name, cost_usd, points),
                    tokens_bucket_minutes,
                    tokens_series,
                    lane,
                }
            })
            .collect();
        Embedded {
            schema_version: 1,
            team: &s.team,
            generated_at: &s.generated_at,
            run_state: s.run.as_ref().map(|r| r.state.as_str()),
            cap: s.run.as_ref().map(|r| r.cap),
            cost_usd: s.cost.as_ref().and_then(|c| c.cost_usd),
            members,
            lanes_end: end.map(crate::time::iso_millis),
            tasks: task_lines::lines(s, h),
        }
    }
}

/// The record's protocol frames with a time.
fn frames(s: &Summary) -> Vec<FrameAt<'_>> {
    s.messages
        .iter()
        .filter_map(|m| {
            Some(FrameAt {
                at: parse_time(m.at.as_deref()?)?,
                from: &m.from,
                to: &m.to,
                kind: m.frame_type.as_deref()?,
            })
        })
        .collect()
}

/// Where the lanes end: the record's time; but when the record was taken long after the team's
/// last activity (longer than the activity lasted, and more than an hour), that activity plus
/// the stall threshold, so the lanes are not squeezed into a corner. `None`: no activity.
fn lanes_end(s: &Summary, h: &History, frames: &[FrameAt]) -> Option<DateTime<Utc>> {
    let record = parse_time(&s.generated_at)?;
    let (first, last) = h.lanes.extent()?;
    let last = frames.iter().map(|f| f.at).fold(last, DateTime::max);
    let gap = record - last;
    let busy = last - first;
    if gap > busy && gap > chrono::Duration::hours(1) {
        Some(last + chrono::Duration::minutes(5))
    } else {
        Some(record.max(last))
    }
}
