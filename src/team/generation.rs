//! Which inbox format a team runs, judged from what its Claude Code consumers do, not from
//! what the entries look like.
//!
//! Claude Code up to 2.1.159 marks a delivered message `read: true` and keeps it; from 2.1.160
//! it deletes it; from 2.1.196 every entry a client writes carries `msgV: 1` and a `msg_id`.
//! teamctl writes `msgV` into every team, old ones too (every client accepts it), so `msgV`
//! alone says nothing: an entry teamctl wrote (its `msg_id` is in the sent log) is no evidence.
//!
//! Evidence, strongest first:
//! 1. a kept entry with `read: true`: only the old consumer writes that (writers always write
//!    `false`), so the inbox's owner runs 2.1.159 or older ([`Format::Legacy`]);
//! 2. a message teamctl sent into this inbox (per the sent log, since the team was created) that
//!    is gone: the consumer deleted it, 2.1.160 or later ([`Format::Current`]);
//! 3. an entry with `msgV` that teamctl did not write: a 2.1.196 or later client is in the
//!    team, and those delete ([`Format::Current`]).
//!
//! A team upgraded in place from 2.1.159 or older keeps its old `read: true` entries (newer
//! readers skip them without deleting them), so it reads as legacy, or as both, until they go.
//! And `teamctl inbox --consume` removes messages the way a current reader does, so consuming
//! teamctl's own messages from someone's inbox by hand counts as evidence (2) too.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};

use crate::team::sentlog::Sent;

/// An inbox's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Delivered messages stay, marked `read: true` (Claude Code 2.1.159 or older).
    Legacy,
    /// Delivered messages are deleted (Claude Code 2.1.160 or later).
    Current,
}

/// What one inbox's entries showed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Evidence {
    /// Entries with `read: true`.
    pub kept_read: usize,
    /// Messages teamctl sent here that are gone.
    pub deleted_ours: usize,
    /// Entries carrying `msgV` that teamctl did not write.
    pub foreign_msgv: usize,
}

impl Evidence {
    /// The verdict, `None` when nothing tells.
    pub fn format(&self) -> Option<Format> {
        if self.kept_read > 0 {
            Some(Format::Legacy)
        } else if self.deleted_ours > 0 || self.foreign_msgv > 0 {
            Some(Format::Current)
        } else {
            None
        }
    }
}

/// The message ids teamctl sent into `team`, by recipient, since `created_at_ms` (the team's
/// `createdAt`, so a team deleted and made again under the same name does not inherit them).
#[derive(Debug, Clone, Default)]
pub struct Ours {
    by_owner: HashMap<String, HashSet<String>>,
    all: HashSet<String>,
    print: u64,
}

impl Ours {
    /// Picks `team`'s sends out of the whole log.
    pub fn new(sent: &[Sent], team: &str, created_at_ms: Option<i64>) -> Ours {
        let mut ours = Ours::default();
        let mut print = DefaultHasher::new();
        for s in sent.iter().filter(|s| s.team == team) {
            ours.all.insert(s.id.clone());
            let after_creation = match (created_at_ms, chrono::DateTime::parse_from_rfc3339(&s.at))
            {
                (Some(c), Ok(at)) => at.timestamp_millis() >= c,
                (None, Ok(_)) => true,
                (_, Err(_)) => false,
            };
            (&s.id, &s.to, after_creation).hash(&mut print);
            if after_creation {
                ours.by_owner
                    .entry(s.to.clone())
                    .or_default()
                    .insert(s.id.clone());
            }
        }
        ours.print = print.finish();
        ours
    }

    /// A fingerprint of what it was made of: equal for the same messages of the same log, so
    /// that a verdict weighed on one can be kept while the log has not changed.
    pub fn print(&self) -> u64 {
        self.print
    }

    /// Whether teamctl wrote the message with this id into the team.
    pub fn wrote(&self, msg_id: &str) -> bool {
        self.all.contains(msg_id)
    }

    /// Weighs one inbox: `owner`'s entries as (`read`, has `msgV`, `msg_id`).
    pub fn weigh<'a>(
        &self,
        owner: &str,
        entries: impl IntoIterator<Item = (Option<bool>, bool, Option<&'a str>)>,
    ) -> Evidence {
        let mut ev = Evidence::default();
        let mut present = HashSet::new();
        for (read, msgv, id) in entries {
            if read == Some(true) {
                ev.kept_read += 1;
            }
            if let Some(id) = id {
                present.insert(id);
            }
            if msgv && !id.is_some_and(|id| self.wrote(id)) {
                ev.foreign_msgv += 1;
            }
        }
        if let Some(sent) = self.by_owner.get(owner) {
            ev.deleted_ours = sent
                .iter()
                .filter(|id| !present.contains(id.as_str()))
                .count();
        }
        ev
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(id: &str, to: &str, at: &str) -> Sent {
        Sent {
            id: id.into(),
            team: "t".into(),
            to: to.into(),
            from: "user".into(),
            at: at.into(),
            summary: None,
            inbox: String::new(),
            idempotency_key: None,
            answers: None,
            moving: None,
        }
    }

    #[test]
    fn verdicts() {
        let log = [
            sent("a", "w", "2026-11-29T10:00:00.000Z"),
            sent("b", "w", "2026-11-29T10:00:01.000Z"),
            sent("old", "x", "2020-01-01T00:00:00.000Z"),
        ];
        let created = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .timestamp_millis();
        let ours = Ours::new(&log, "t", Some(created));
        // teamctl's own msgV entries, unread, nothing else: no evidence.
        let ev = ours.weigh(
            "w",
            [
                (Some(false), true, Some("a")),
                (Some(false), true, Some("b")),
            ],
        );
        assert_eq!(ev.format(), None);
        // The old consumer marked teamctl's entry read: legacy, msgV or not.
        let ev = ours.weigh(
            "w",
            [
                (Some(true), true, Some("a")),
                (Some(false), true, Some("b")),
            ],
        );
        assert_eq!(ev.format(), Some(Format::Legacy));
        // One of teamctl's messages is gone: deleted by the consumer.
        let ev = ours.weigh("w", [(Some(false), true, Some("b"))]);
        assert_eq!(ev.deleted_ours, 1);
        assert_eq!(ev.format(), Some(Format::Current));
        // A msgV entry somebody else wrote.
        let ev = ours.weigh("z", [(Some(false), true, Some("c"))]);
        assert_eq!(ev.format(), Some(Format::Current));
        // Sends from before the team's creation say nothing about this team.
        assert_eq!(ours.weigh("x", []).format(), None);
        // A legacy entry without msgV and without read: nothing.
        assert_eq!(ours.weigh("y", [(Some(false), false, None)]).format(), None);
    }
}
