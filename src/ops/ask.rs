//! A question to one teammate and the wait for its answer, decided from a [`Watch`]'s changes.
//!
//! The rules (also in the README):
//! - **taken**: the question left the teammate's inbox, or was marked `read: true`;
//! - **answered**: the first plain message (not a protocol frame) from the teammate that lands
//!   in the asker's inbox after the question was written, and not in the turn the teammate was
//!   in when the question arrived. Nothing rests on timestamps: the ids already in that inbox
//!   before the question was written are excluded; and when the teammate was in the middle of
//!   a turn (see [`crate::observe::wait::mid_turn`]), what it writes until that turn's
//!   `idle_notification` answers something else (say, its brief). The take itself is no
//!   boundary: the real client (2.1.332) submits what it read to the model before its write
//!   that takes it lands, so with a fast model the answer can land first;
//! - **idle**: an `idle_notification` from the teammate that ends the question's turn (not the
//!   turn it was in when asked), the question taken, no answer, and no sign of a new turn (a
//!   message from it, `isActive` turning `true`) for [`IDLE_GRACE`] after both: a teammate
//!   busy with something else ends that turn before it starts on a question it took meanwhile,
//!   and the grace lets that new turn show;
//! - **gone**: as [`crate::observe::wait::gone_reason`].
//!
//! A question sent again with the same idempotency key (nothing written) may have been answered
//! already; there the only record left is time, so an entry from the teammate in the asker's
//! inbox stamped at or after the first question counts as the answer.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::observe::wait::{frame_type, idle_detail};
use crate::observe::watch::{Changes, Watch};
use crate::store::Entry;
use crate::store::id;
use crate::team::model::first_line;

/// How long an `idle_notification` must stand, with no sign of a new turn, before the
/// teammate counts as idle without answering.
pub const IDLE_GRACE: Duration = Duration::from_millis(1500);

/// How a question ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The answer, as it is in the asker's inbox.
    Answered(Entry),
    /// The teammate went idle without answering: its `idle_notification`.
    Idle(Entry),
    /// The teammate can no longer answer: why.
    Gone(String),
}

/// One question being waited on.
#[derive(Debug, Clone)]
pub struct Question {
    /// The teammate asked.
    pub to: String,
    /// The identity asked as: the answer lands in its inbox.
    pub asker: String,
    /// The question's entry id (set by [`Question::sent`]).
    pub id: String,
    excluded: HashSet<String>,
    since: Option<DateTime<Utc>>,
    /// When teamctl saw the question taken.
    pub taken_at: Option<DateTime<Utc>>,
    taken_instant: Option<Instant>,
    /// When teamctl saw the answer.
    pub answered_at: Option<DateTime<Utc>>,
    idle: Option<(Instant, Entry)>,
    /// The teammate was in a turn when asked, and that turn has not ended yet.
    earlier_turn: bool,
    /// The end, once there is one.
    pub outcome: Option<Outcome>,
    /// What was seen along the way, for progress lines (drained by the caller).
    pub notes: Vec<String>,
}

impl Question {
    /// Starts a question to `to` asked as `asker`, before it is written: every entry now in
    /// the asker's inbox is excluded from being the answer.
    pub fn new(watch: &Watch, to: &str, asker: &str) -> Question {
        Question {
            to: to.to_string(),
            asker: asker.to_string(),
            id: String::new(),
            excluded: watch
                .inbox(asker)
                .unwrap_or_default()
                .iter()
                .map(id::entry_id)
                .collect(),
            since: None,
            taken_at: None,
            taken_instant: None,
            answered_at: None,
            idle: None,
            earlier_turn: crate::observe::wait::mid_turn(watch, to),
            outcome: None,
            notes: Vec::new(),
        }
    }

    /// Records the written question (`written: false` for a repeated idempotent send of an entry
    /// stamped `timestamp`) and looks at the teammate's inbox as `watch` now has it.
    pub fn sent(
        &mut self,
        watch: &Watch,
        id: &str,
        written: bool,
        timestamp: Option<&str>,
        now: DateTime<Utc>,
        at: Instant,
    ) {
        self.id = id.to_string();
        if !written {
            self.since = timestamp
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                .map(|t| t.with_timezone(&Utc));
        }
        self.observe(&Changes::default(), watch, now, at);
        if !written && self.taken_at.is_some() && self.outcome.is_none() {
            let earlier: Vec<Entry> = watch
                .inbox(&self.asker)
                .unwrap_or_default()
                .iter()
                .filter(|e| self.is_candidate(e) && self.stamped_since(e))
                .cloned()
                .collect();
            if let Some(e) = earlier.into_iter().next() {
                self.answered_at = Some(now);
                self.outcome = Some(Outcome::Answered(e));
            }
        }
    }

    fn stamped_since(&self, e: &Entry) -> bool {
        let Some(since) = self.since else {
            return false;
        };
        e.get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .is_some_and(|t| t >= since)
    }

    fn is_candidate(&self, e: &Entry) -> bool {
        e.get("from").and_then(Value::as_str) == Some(self.to.as_str())
            && e.get("text").is_some_and(Value::is_string)
            && frame_type(e).is_none()
    }

    /// Whether the question is still in the teammate's inbox, unread.
    pub fn waiting(&self, watch: &Watch) -> bool {
        watch
            .inbox(&self.to)
            .unwrap_or_default()
            .iter()
            .any(|e| id::entry_id(e) == self.id && e.get("read") != Some(&Value::Bool(true)))
    }

    /// Applies a batch of changes (already applied to `watch`). `now` stamps what is seen;
    /// `at` measures the idle grace.
    pub fn observe(&mut self, changes: &Changes, watch: &Watch, now: DateTime<Utc>, at: Instant) {
        if self.outcome.is_some() {
            return;
        }
        if self.taken_at.is_none() && !self.waiting(watch) {
            self.taken_at = Some(now);
            self.taken_instant = Some(at);
            self.notes.push(format!("{} took the question", self.to));
        }
        for ev in &changes.events {
            let Some(msg) = ev.message.as_ref() else {
                if ev.event == "member_updated"
                    && ev.member.as_deref() == Some(self.to.as_str())
                    && ev
                        .changes
                        .as_ref()
                        .and_then(|c| c.get("isActive"))
                        .and_then(|c| c.get("to"))
                        == Some(&Value::Bool(true))
                {
                    self.idle = None;
                }
                continue;
            };
            if ev.event != "message" || ev.from.as_deref() != Some(self.to.as_str()) {
                continue;
            }
            let eid = ev.id.clone().unwrap_or_default();
            let kind = frame_type(msg);
            if ev.to.as_deref() == Some(self.asker.as_str()) && self.is_candidate(msg) {
                if self.excluded.contains(&eid) {
                    continue;
                }
                if self.earlier_turn {
                    self.notes.push(format!(
                        "{} wrote to {} in the turn it was in when asked (not the answer): {}",
                        self.to,
                        self.asker,
                        first_line(msg.get("text").and_then(Value::as_str).unwrap_or(""), 60)
                    ));
                    self.excluded.insert(eid);
                    continue;
                }
                self.answered_at = Some(now);
                self.outcome = Some(Outcome::Answered(msg.clone()));
                return;
            }
            if kind.as_deref() == Some("idle_notification") {
                if self.earlier_turn {
                    self.earlier_turn = false;
                    self.notes.push(format!(
                        "{} finished the turn it was in when asked",
                        self.to
                    ));
                    continue;
                }
                self.notes.push(format!(
                    "{} is idle ({}); waiting {} ms for a new turn",
                    self.to,
                    idle_detail(msg),
                    IDLE_GRACE.as_millis()
                ));
                self.idle = Some((at, msg.clone()));
            } else {
                // Anything else it writes (to anyone) means it is working.
                self.idle = None;
            }
        }
    }

    /// Ends the question as idle once the grace has passed since both the take and the
    /// `idle_notification`.
    pub fn tick(&mut self, at: Instant) {
        if self.outcome.is_none()
            && let Some(end) = self.idle_deadline()
            && at >= end
            && let Some((_, note)) = &self.idle
        {
            self.outcome = Some(Outcome::Idle(note.clone()));
        }
    }

    /// When the idle grace ends, if the question was taken and an `idle_notification` stands.
    pub fn idle_deadline(&self) -> Option<Instant> {
        let (seen, _) = self.idle.as_ref()?;
        Some((*seen).max(self.taken_instant?) + IDLE_GRACE)
    }

    /// What the `idle_notification` says (reason, summary, last words).
    pub fn idle_text(note: &Entry) -> String {
        idle_detail(note)
    }
}
