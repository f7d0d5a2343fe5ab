//! The message timeline `top` shows: every message seen while it runs, with protocol frames
//! named in one line.
//!
//! Current Claude Code deletes a message from its inbox once it is delivered, so the files alone
//! show only what is still unread. A [`Timeline`] therefore remembers every message seen (fed the
//! [`Changes`] of a [`crate::observe::watch::Watch`]): a consumed message stays, marked
//! delivered. What teamctl itself sent before (its sent log) seeds it.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::observe::event::{self, Event};
use crate::observe::watch::Changes;
use crate::store::Entry;
use crate::team::model::{Frame, first_line};
use crate::team::sentlog::Sent;
use crate::team::transcript::entry::input_summary;
use crate::time::parse_time;

/// How many messages a [`Timeline`] keeps by default (the oldest go first).
pub const TIMELINE_LEN: usize = 500;

/// Where a message stands, as far as the files show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// In its inbox, not read yet.
    Unread,
    /// In its inbox with `read: true` (Claude Code 2.1.159 and older).
    Read,
    /// Gone from its inbox: its reader took it (current Claude Code).
    Delivered,
}

/// One message of the timeline (`top --json` `messages[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mail {
    /// The message's own timestamp (as written).
    pub at: String,
    /// Sender.
    pub from: String,
    /// The inbox's owner.
    pub to: String,
    /// The entry id (`msg_id`, else a content hash).
    pub id: String,
    /// The protocol frame's `type`, when the text is one.
    pub frame: Option<String>,
    /// One line: `[permission_request] Bash: npm test` for a frame, else the summary or the
    /// first line of the text.
    pub preview: String,
    /// The whole text; `null` for a message known only from teamctl's sent log.
    pub text: Option<String>,
    /// Unread, read or delivered.
    pub delivery: Delivery,
    /// `inbox` (seen in an inbox file) or `sent_log` (known only from teamctl's sent log).
    pub source: &'static str,
}

/// The messages seen so far, oldest first, at most a fixed number.
#[derive(Debug, Clone)]
pub struct Timeline {
    max: usize,
    lines: Vec<Mail>,
    /// Each line's time, parsed once (`None`: unparseable, sorted first).
    times: Vec<Option<DateTime<Utc>>>,
    last_change: Option<DateTime<Utc>>,
}

impl Timeline {
    /// An empty timeline keeping at most `max` messages.
    pub fn new(max: usize) -> Timeline {
        Timeline {
            max: max.max(1),
            lines: Vec::new(),
            times: Vec::new(),
            last_change: None,
        }
    }

    /// Adds what teamctl's sent log says was sent to `team` (each at most once; a message seen
    /// in an inbox later replaces it).
    pub fn seed_sent(&mut self, team: &str, sent: &[Sent]) {
        for s in sent.iter().filter(|s| s.team == team) {
            if self.position(&s.to, &s.id).is_some() {
                continue;
            }
            let preview = match (&s.answers, &s.summary) {
                (Some(req), _) => format!("[answer] {}", first_line(req, 80)),
                (None, Some(sum)) => first_line(sum, 80),
                (None, None) => String::new(),
            };
            self.insert(Mail {
                at: s.at.clone(),
                from: s.from.clone(),
                to: s.to.clone(),
                id: s.id.clone(),
                frame: None,
                preview,
                text: None,
                delivery: Delivery::Delivered,
                source: "sent_log",
            });
        }
    }

    /// Adds what is there now (a watch's first snapshot): as [`Timeline::apply`], except that
    /// it is not a change.
    pub fn load(&mut self, existing: &Changes) {
        // Only the newest `max` can stay: pick them first (a big team's inboxes hold tens of
        // thousands of entries, and inserting each in time order would move the rest).
        let mut found: Vec<(Option<DateTime<Utc>>, &Event)> = existing
            .events
            .iter()
            .filter(|ev| ev.event == event::Kind::Message)
            .map(|ev| {
                let at = ev.message.as_ref().and_then(|m| m.get("timestamp"));
                (at.and_then(Value::as_str).and_then(parse_time), ev)
            })
            .collect();
        // Stable: equal times keep the file order.
        found.sort_by_key(|(at, _)| *at);
        let skip = found.len().saturating_sub(self.max);
        for (_, ev) in &found[skip..] {
            self.apply_event(ev);
        }
    }

    /// Applies a watch's changes: a new entry is added, a consumed one marked delivered, a read
    /// one marked read. Every change, of any kind, moves the time of the last change.
    pub fn apply(&mut self, changes: &Changes) {
        for ev in &changes.events {
            if let Ok(at) = DateTime::parse_from_rfc3339(&ev.at) {
                let at = at.with_timezone(&Utc);
                if self.last_change.is_none_or(|t| at > t) {
                    self.last_change = Some(at);
                }
            }
            self.apply_event(ev);
        }
    }

    fn apply_event(&mut self, ev: &Event) {
        let (Some(to), Some(id), Some(entry)) = (&ev.to, &ev.id, &ev.message) else {
            return;
        };
        let found = self.position(to, id);
        match (ev.event, found) {
            (event::Kind::Message, None) => {
                if let Some(m) = message(entry, to, id) {
                    self.insert(m);
                }
            }
            // Seen again after it was consumed (written anew), or known from the sent log.
            (event::Kind::Message, Some(i)) => {
                if let Some(m) = message(entry, to, id) {
                    self.lines[i] = m;
                }
            }
            (event::Kind::Consumed, Some(i)) => self.lines[i].delivery = Delivery::Delivered,
            (event::Kind::Read, Some(i)) => self.lines[i].delivery = Delivery::Read,
            _ => {}
        }
    }

    fn position(&self, to: &str, id: &str) -> Option<usize> {
        self.lines.iter().rposition(|m| m.id == id && m.to == to)
    }

    /// Inserts in time order (after every message of the same time), then drops the oldest
    /// beyond the limit.
    fn insert(&mut self, m: Mail) {
        let at = parse_time(&m.at);
        if self.lines.len() >= self.max && self.times.first().is_some_and(|first| at < *first) {
            return;
        }
        let i = self.times.partition_point(|t| *t <= at);
        self.lines.insert(i, m);
        self.times.insert(i, at);
        if self.lines.len() > self.max {
            let extra = self.lines.len() - self.max;
            self.lines.drain(..extra);
            self.times.drain(..extra);
        }
    }

    /// Every message, oldest first.
    pub fn messages(&self) -> &[Mail] {
        &self.lines
    }

    /// The messages to `member` (its inbox, including what it already took), oldest first.
    pub fn inbox_of<'a>(&'a self, member: &'a str) -> impl Iterator<Item = &'a Mail> + 'a {
        self.lines.iter().filter(move |m| m.to == member)
    }

    /// When teamctl last saw a change in the team's files (`None` before the first).
    pub fn last_change(&self) -> Option<DateTime<Utc>> {
        self.last_change
    }
}

/// The timeline's line for an inbox entry; `None` when `from`, `text` or `timestamp` is not a
/// string (Claude Code skips such entries too).
fn message(entry: &Entry, to: &str, id: &str) -> Option<Mail> {
    let s = |k: &str| entry.get(k).and_then(Value::as_str);
    let (from, text, at) = (s("from")?, s("text")?, s("timestamp")?);
    let frame = Frame::decode(text);
    let preview = match (&frame, s("summary")) {
        (Some(f), _) => frame_summary(f),
        (None, Some(sum)) if !sum.trim().is_empty() => first_line(sum, 80),
        (None, _) => first_line(text, 80),
    };
    Some(Mail {
        at: at.to_string(),
        from: from.to_string(),
        to: to.to_string(),
        id: id.to_string(),
        frame: frame.map(|f| f.frame_type),
        preview,
        text: Some(text.to_string()),
        delivery: if entry.get("read") == Some(&Value::Bool(true)) {
            Delivery::Read
        } else {
            Delivery::Unread
        },
        source: "inbox",
    })
}

/// A frame in one line, named: `[permission_request] Bash: npm test`,
/// `[idle_notification] available`, `[task_assignment] #3 Fix the race`.
pub fn frame_summary(f: &Frame) -> String {
    let s = |k: &str| f.fields.get(k).and_then(Value::as_str);
    let detail = match f.frame_type.as_str() {
        "permission_request" => {
            let tool = s("tool_name").unwrap_or("?");
            match f
                .fields
                .get("input")
                .and_then(|i| input_summary(tool, i))
                .or(s("description").map(String::from))
            {
                Some(what) => format!("{tool}: {what}"),
                None => tool.to_string(),
            }
        }
        "sandbox_permission_request" => f
            .fields
            .get("hostPattern")
            .and_then(|h| h.get("host"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        "plan_approval_request" => s("planFilePath").unwrap_or("").to_string(),
        "permission_response" => match s("subtype") {
            Some("success") => "approved".to_string(),
            _ => format!("denied: {}", s("error").unwrap_or("")),
        },
        "plan_approval_response" => match f.fields.get("approved").and_then(Value::as_bool) {
            Some(true) => "approved".to_string(),
            _ => format!("rejected: {}", s("feedback").unwrap_or("")),
        },
        "sandbox_permission_response" => {
            let allow = f.fields.get("allow").and_then(Value::as_bool) == Some(true);
            format!(
                "{} {}",
                if allow { "allowed" } else { "denied" },
                s("host").unwrap_or("")
            )
        }
        "idle_notification" => {
            let why = s("idleReason").unwrap_or("idle");
            match s("summary") {
                Some(sum) => format!("{why}: {sum}"),
                None => why.to_string(),
            }
        }
        "task_assignment" | "task_completed" => {
            let id = f.fields.get("taskId").map(|v| match v {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            });
            let subject = s("subject").or(s("taskSubject")).unwrap_or("");
            format!("#{} {subject}", id.unwrap_or_default())
        }
        "mode_set_request" => s("mode").unwrap_or("").to_string(),
        _ => s("reason").or(s("message")).unwrap_or("").to_string(),
    };
    let detail = first_line(&detail, 80);
    if detail.is_empty() {
        format!("[{}]", f.frame_type)
    } else {
        format!("[{}] {detail}", f.frame_type)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::time::iso_millis;

    fn changes(events: Vec<(event::Kind, &str, Value)>) -> Changes {
        Changes {
            events: events
                .into_iter()
                .map(|(kind, to, entry)| {
                    let entry: Entry = serde_json::from_value(entry).unwrap();
                    Event {
                        to: Some(to.into()),
                        from: entry.get("from").and_then(Value::as_str).map(String::from),
                        id: Some(crate::store::id::entry_id(&entry)),
                        message: Some(entry),
                        ..Event::new(kind, "t", "2026-11-29T10:00:05.000Z")
                    }
                })
                .collect(),
            warnings: Vec::new(),
        }
    }

    fn msg(from: &str, text: &str, at: &str, id: &str) -> Value {
        json!({"from": from, "text": text, "timestamp": at, "msg_id": id, "read": false})
    }

    #[test]
    fn frames_are_named_in_one_line() {
        let f = Frame::decode(
            &json!({"type": "permission_request", "request_id": "perm-1-a", "agent_id": "alice",
                    "tool_name": "Bash", "tool_use_id": "t", "description": "Run the tests",
                    "input": {"command": "npm test\nrm -rf /"}})
            .to_string(),
        )
        .unwrap();
        assert_eq!(frame_summary(&f), "[permission_request] Bash: npm test");
        let idle = Frame::decode(
            r#"{"type":"idle_notification","from":"a","timestamp":"t","idleReason":"available"}"#,
        )
        .unwrap();
        assert_eq!(frame_summary(&idle), "[idle_notification] available");
        let task = Frame::decode(
            r#"{"type":"task_assignment","taskId":"3","subject":"Fix it","description":"d","assignedBy":"x","timestamp":"t"}"#,
        )
        .unwrap();
        assert_eq!(frame_summary(&task), "[task_assignment] #3 Fix it");
        let shut =
            Frame::decode(r#"{"type":"shutdown_approved","requestId":"r","from":"a"}"#).unwrap();
        assert_eq!(frame_summary(&shut), "[shutdown_approved]");
    }

    #[test]
    fn the_timeline_keeps_consumed_messages_in_time_order() {
        let mut t = Timeline::new(3);
        t.apply(&changes(vec![
            (
                event::Kind::Message,
                "bob",
                msg("alice", "second", "2026-11-29T10:00:02.000Z", "b"),
            ),
            (
                event::Kind::Message,
                "alice",
                msg("bob", "first", "2026-11-29T10:00:01.000Z", "a"),
            ),
        ]));
        let texts: Vec<&str> = t.messages().iter().map(|m| m.preview.as_str()).collect();
        assert_eq!(texts, ["first", "second"]);
        t.apply(&changes(vec![(
            event::Kind::Consumed,
            "bob",
            msg("alice", "second", "2026-11-29T10:00:02.000Z", "b"),
        )]));
        assert_eq!(t.messages()[1].delivery, Delivery::Delivered);
        assert_eq!(t.messages()[0].delivery, Delivery::Unread);
        assert_eq!(
            t.last_change().map(iso_millis).as_deref(),
            Some("2026-11-29T10:00:05.000Z")
        );
        // Past the limit the oldest goes.
        for (i, at) in ["03", "04"].iter().enumerate() {
            t.apply(&changes(vec![(
                event::Kind::Message,
                "bob",
                msg(
                    "alice",
                    &format!("n{i}"),
                    &format!("2026-11-29T10:00:{at}.000Z"),
                    &format!("n{i}"),
                ),
            )]));
        }
        let texts: Vec<&str> = t.messages().iter().map(|m| m.preview.as_str()).collect();
        assert_eq!(texts, ["second", "n0", "n1"]);
        assert_eq!(t.inbox_of("bob").count(), 3);
    }

    #[test]
    fn loading_keeps_the_newest() {
        let mut t = Timeline::new(3);
        let evs: Vec<(event::Kind, &str, Value)> = [7, 2, 9, 4, 8, 1]
            .iter()
            .map(|n| {
                let at = format!("2026-11-29T10:00:0{n}.000Z");
                (
                    event::Kind::Message,
                    "bob",
                    msg("alice", &format!("m{n}"), &at, &format!("id{n}")),
                )
            })
            .collect();
        t.load(&changes(evs));
        let texts: Vec<&str> = t.messages().iter().map(|m| m.preview.as_str()).collect();
        assert_eq!(texts, ["m7", "m8", "m9"]);
        assert_eq!(t.last_change(), None);
        // Older than everything kept, at capacity: not kept.
        t.apply(&changes(vec![(
            event::Kind::Message,
            "bob",
            msg("alice", "old", "2026-11-29T09:00:00.000Z", "old"),
        )]));
        assert_eq!(t.messages()[0].preview, "m7");
    }

    #[test]
    fn the_sent_log_seeds_what_the_inbox_no_longer_holds() {
        let mut t = Timeline::new(10);
        let sent = Sent {
            id: "x".into(),
            team: "t".into(),
            to: "alice".into(),
            from: "user".into(),
            at: "2026-11-29T09:00:00.000Z".into(),
            summary: Some("please look".into()),
            inbox: "i".into(),
            idempotency_key: None,
            answers: None,
            moving: None,
        };
        let other = Sent {
            team: "other".into(),
            id: "y".into(),
            ..sent.clone()
        };
        t.seed_sent("t", &[sent, other]);
        assert_eq!(t.messages().len(), 1);
        assert_eq!(t.messages()[0].source, "sent_log");
        // Seen in the inbox: the inbox's version wins.
        t.apply(&changes(vec![(
            event::Kind::Message,
            "alice",
            msg("user", "please look at it", "2026-11-29T09:00:00.000Z", "x"),
        )]));
        assert_eq!(t.messages().len(), 1);
        assert_eq!(t.messages()[0].source, "inbox");
        assert_eq!(t.messages()[0].text.as_deref(), Some("please look at it"));
    }
}
