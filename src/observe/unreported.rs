//! The teammate that never reports idle (docs/design.md, "When a teammate is idle"): Claude
//! Code registers the Stop hook that writes a teammate's `idle_notification` (and sets its
//! `isActive` to `false`) only once it has read `config.json` at start-up; one that read it torn
//! never does (docs/research/claude-code-behaviour.md §8), so it works, answers and ends its
//! turns, and never says so. Its turn's end is in its transcript all the same (a `system`
//! `turn_duration` entry; [`crate::team::transcript::Turn::ended_at`]).
//!
//! [`judge`] is the one rule: `wait --idle` ([`idle_by_transcript`]), `ask`
//! ([`mid_turn`] and the idle outcome), `status`, `top`, `doctor`, the
//! policy follower's plan approvals and the bridge ([`TurnEnds`], or `status`'s
//! `idle_unreported_since`) all go by it.

use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::observe::members::{frame_type, from_of, inbox_written, is_active, unread};
use crate::observe::spend::{SpendReader, TurnTimes};
use crate::observe::watch::Watch;
use crate::store::Entry;
use crate::team::config::Team;
use crate::team::records::Records;

/// How long after a turn's end in its transcript a teammate that reported no idle for that
/// turn counts as idle all the same. A healthy teammate writes its `idle_notification` about
/// 0.2 s after its turn's end (Claude Code 2.1.332, 61 runs: 69 ms to 1.1 s); one that read
/// `config.json` torn as it started never registered the Stop hook that writes it
/// (docs/research/claude-code-behaviour.md §8), and never will.
pub const UNREPORTED_AFTER: Duration = Duration::from_secs(5);

/// What the inboxes and `config.json` say of one member, that a turn's end in its transcript is
/// judged against ([`judge`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signs {
    /// Its newest `idle_notification` (in any inbox).
    pub last_idle: Option<DateTime<Utc>>,
    /// Its newest plain message (not a protocol frame), to anyone.
    pub last_message: Option<DateTime<Utc>>,
    /// The newest entry in its own inbox.
    pub last_received: Option<DateTime<Utc>>,
    /// Entries in its inbox not `read: true`.
    pub unread: usize,
    /// When its inbox was last written while it holds no unread entry: its last take.
    pub drained: Option<DateTime<Utc>>,
    /// `isActive` in `config.json`.
    pub is_active: Option<bool>,
}

/// The end of a member's turn in its transcript, against its idle reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnEnd {
    /// It reported idle for that turn, which ended at `ended`: an `idle_notification` since the
    /// turn began, or `isActive: false` (the hook that writes the notification sets it; a
    /// Claude Code lead consumes the notifications).
    Reported {
        /// When the turn ended.
        ended: DateTime<Utc>,
    },
    /// No report yet: it counts as idle, unreported, at `due` ([`UNREPORTED_AFTER`] after
    /// `ended`) unless one comes.
    Awaited {
        /// When the turn ended.
        ended: DateTime<Utc>,
        /// When it counts as idle without its report.
        due: DateTime<Utc>,
    },
    /// Its turn ended at `ended`, nothing has happened since, and it reported no idle for
    /// [`UNREPORTED_AFTER`]: it is idle, and it does not say so.
    Unreported {
        /// When the turn ended.
        ended: DateTime<Utc>,
    },
}

impl TurnEnd {
    /// `ended` when unreported past the grace.
    pub fn unreported(self) -> Option<DateTime<Utc>> {
        match self {
            TurnEnd::Unreported { ended } => Some(ended),
            _ => None,
        }
    }
}

/// The one rule for a teammate that never reports idle (`wait --idle`, `ask`, `status`, `top`,
/// `doctor`, the policy follower's plan approvals and the bridge all go by it): its newest
/// session's transcript says its turn ended (`turn`, [`TurnTimes`]) and nothing since says
/// otherwise: nothing waits unread in its inbox, no entry reached its inbox after the end, it
/// took nothing from its inbox more than a second after it (the real client can land the take
/// of a turn's own message just after that turn ends), and it wrote no plain message after it.
/// Then it is between turns, whether or not it said so; `None` when the transcript shows no
/// end, or something since does. Whether it said so ([`TurnEnd`]): an `idle_notification` of
/// it since the turn began, or `isActive: false`; without either it counts as idle, unreported,
/// [`UNREPORTED_AFTER`] after the end. Times are Claude Code's own stamps, and `now` the same
/// machine's clock.
pub fn judge(turn: &TurnTimes, signs: &Signs, now: DateTime<Utc>) -> Option<TurnEnd> {
    let ended = turn.ended_at.as_deref().and_then(crate::time::parse_time)?;
    let after = |t: Option<DateTime<Utc>>| t.is_some_and(|t| t > ended);
    let take_slack = chrono::Duration::seconds(1);
    if signs.unread > 0
        || after(signs.last_message)
        || after(signs.last_received)
        || signs.drained.is_some_and(|d| d > ended + take_slack)
    {
        return None;
    }
    let began = turn.began_at.as_deref().and_then(crate::time::parse_time);
    // Without the turn's start, a notification from a second before its end on counts.
    let since = began.unwrap_or(ended - take_slack);
    if signs.last_idle.is_some_and(|t| t >= since) || signs.is_active == Some(false) {
        return Some(TurnEnd::Reported { ended });
    }
    let due = ended + grace();
    Some(if now >= due {
        TurnEnd::Unreported { ended }
    } else {
        TurnEnd::Awaited { ended, due }
    })
}

/// [`Signs`] of `name` in the team as `watch` sees it.
pub fn signs_in(watch: &Watch, name: &str) -> Signs {
    let stamp = |e: &Entry| {
        e.get("timestamp")
            .and_then(Value::as_str)
            .and_then(crate::time::parse_time)
    };
    let mut s = Signs {
        unread: unread(watch, name),
        is_active: is_active(watch, name),
        ..Signs::default()
    };
    for e in watch
        .inboxes()
        .values()
        .flatten()
        .filter(|e| from_of(e) == Some(name))
    {
        let slot = match frame_type(e).as_deref() {
            Some("idle_notification") => &mut s.last_idle,
            Some(_) => continue,
            None => &mut s.last_message,
        };
        *slot = (*slot).max(stamp(e));
    }
    s.last_received = watch
        .inbox(name)
        .unwrap_or_default()
        .iter()
        .filter_map(stamp)
        .max();
    if s.unread == 0 {
        s.drained = inbox_written(watch, name);
    }
    s
}

/// Whether `name` is in the middle of a turn, as far as the files show (no history), on
/// evidence that survives the real client's quirks (`isActive` writes can be lost, a take can
/// land just after the turn's `idle_notification`): before its first `idle_notification`,
/// `isActive: true`; after one, a plain message from it stamped later, or entries taken from
/// its inbox more than a second later (its inbox now without unread entries, so the file's
/// last change was a take). Without such evidence it is not; nor when its transcript says its
/// turn ended with nothing since and it has not reported idle for it ([`judge`]: a teammate that
/// never reports idle is `isActive: true` for good).
pub fn mid_turn(watch: &Watch, name: &str, turn: &TurnTimes, now: DateTime<Utc>) -> bool {
    if matches!(
        judge(turn, &signs_in(watch, name), now),
        Some(TurnEnd::Awaited { .. } | TurnEnd::Unreported { .. })
    ) {
        return false;
    }
    let stamp = |e: &Entry| {
        e.get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
            .map(|t| t.with_timezone(&Utc))
    };
    let mine = || {
        watch
            .inboxes()
            .values()
            .flatten()
            .filter(move |e| from_of(e) == Some(name))
    };
    let last_idle = mine()
        .filter(|e| frame_type(e).as_deref() == Some("idle_notification"))
        .filter_map(stamp)
        .max();
    let Some(last_idle) = last_idle else {
        return is_active(watch, name) == Some(true);
    };
    let wrote_since = mine()
        .filter(|e| frame_type(e).is_none())
        .filter_map(stamp)
        .any(|t| t > last_idle);
    let drained = inbox_written(watch, name);
    // With unread entries the file's mtime is more likely a write than a take.
    wrote_since
        || (unread(watch, name) == 0
            && drained.is_some_and(|d| d > last_idle + chrono::Duration::seconds(1)))
}

/// Why `name` counts as idle though the files' own signs say it is busy ([`judge`]): its
/// transcript's turn ended [`UNREPORTED_AFTER`] ago or more with nothing since, and it reported
/// no idle; or it did report, and what made it look busy again is Claude Code's own stale
/// write (an `isActive: true` landing after the turn's end, which it was seen to do under load
/// with five teammates writing `config.json` at once). `None` otherwise.
pub fn idle_by_transcript(
    watch: &Watch,
    name: &str,
    turn: &TurnTimes,
    now: DateTime<Utc>,
) -> Option<String> {
    let at = crate::time::iso_millis;
    match judge(turn, &signs_in(watch, name), now)? {
        TurnEnd::Unreported { ended } => Some(format!(
            "its turn ended in its transcript at {} and it reported no idle (no \
             idle_notification for {} s)",
            at(ended),
            UNREPORTED_AFTER.as_secs()
        )),
        TurnEnd::Reported { ended } if now >= ended + grace() => Some(format!(
            "its turn ended in its transcript at {}, reported, and nothing since",
            at(ended)
        )),
        _ => None,
    }
}

/// [`UNREPORTED_AFTER`] as a time span.
fn grace() -> chrono::Duration {
    chrono::Duration::from_std(UNREPORTED_AFTER).unwrap_or_default()
}

/// [`Signs`] of `name` in `team` as its files are now (each inbox read once, no lock).
///
/// # Errors
/// The inboxes folder cannot be listed, or an inbox read.
pub fn signs_of(team: &Team, name: &str) -> Result<Signs> {
    let stamp = |e: &Entry| {
        e.get("timestamp")
            .and_then(Value::as_str)
            .and_then(crate::time::parse_time)
    };
    let mut s = Signs {
        is_active: team
            .config
            .as_ref()
            .and_then(|c| c.member(name))
            .and_then(|m| m.is_active),
        ..Signs::default()
    };
    for owner in team.inbox_owners()? {
        let path = team.inbox_path(&owner);
        let entries = crate::store::read_inbox(&path)?.unwrap_or_default();
        if owner.as_str() == name {
            s.unread = entries
                .iter()
                .filter(|e| e.get("read") != Some(&Value::Bool(true)))
                .count();
            s.last_received = entries.iter().filter_map(stamp).max();
            if s.unread == 0 {
                s.drained = crate::observe::members::mtime(&path);
            }
        }
        note_from(&mut s, entries.iter(), name);
    }
    Ok(s)
}

/// Takes `name`'s idle notifications and plain messages among `entries` into `s`.
fn note_from<'a>(s: &mut Signs, entries: impl Iterator<Item = &'a Entry>, name: &str) {
    for e in entries.filter(|e| from_of(e) == Some(name)) {
        let at = e
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(crate::time::parse_time);
        let slot = match frame_type(e).as_deref() {
            Some("idle_notification") => &mut s.last_idle,
            Some(_) => continue,
            None => &mut s.last_message,
        };
        *slot = (*slot).max(at);
    }
}

/// The members' turn ends in their transcripts, followed pass by pass (the policy follower):
/// each look reads only what the transcripts gained since the last.
#[derive(Debug)]
pub struct TurnEnds {
    spend: SpendReader,
}

impl TurnEnds {
    /// Follows the transcripts of `team` (through the transcript index in `records`' data dir).
    pub fn new(team: &Team, records: &Records) -> TurnEnds {
        TurnEnds {
            spend: SpendReader::new(&team.layout, &team.name, records.data_dir()),
        }
    }

    /// When `name`'s newest turn ended, if it did and it reported no idle for
    /// [`UNREPORTED_AFTER`] ([`judge`], on `team`'s files as they are now and the transcripts
    /// read again).
    ///
    /// # Errors
    /// As [`signs_of`].
    pub fn unreported(
        &mut self,
        team: &Team,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<DateTime<Utc>>> {
        let turn = self
            .spend
            .read_as(team.config.as_ref())
            .members
            .get(name)
            .map(|m| m.turn.clone())
            .unwrap_or_default();
        if turn.ended_at.is_none() {
            return Ok(None);
        }
        let signs = signs_of(team, name)?;
        Ok(judge(&turn, &signs, now).and_then(TurnEnd::unreported))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(t: &str) -> DateTime<Utc> {
        crate::time::parse_time(t).unwrap()
    }

    fn turn(began: &str, ended: Option<&str>) -> TurnTimes {
        TurnTimes {
            began_at: Some(began.into()),
            ended_at: ended.map(String::from),
        }
    }

    /// A turn's end with no report is awaited for [`UNREPORTED_AFTER`], then unreported; a
    /// report since the turn began, `isActive: false`, or a sign of work after the end (an
    /// entry for it, a take more than a second later, a message from it, something unread)
    /// undoes it.
    #[test]
    fn a_turn_end_without_its_report_counts_after_the_grace() {
        let t = turn("2026-12-04T10:00:00.000Z", Some("2026-12-04T10:00:02.000Z"));
        let quiet = Signs {
            last_idle: Some(at("2026-12-04T09:59:00.000Z")),
            drained: Some(at("2026-12-04T10:00:02.500Z")),
            is_active: Some(true),
            ..Signs::default()
        };
        let ended = at("2026-12-04T10:00:02.000Z");
        assert_eq!(judge(&TurnTimes::default(), &quiet, ended), None);
        assert_eq!(
            judge(&turn("2026-12-04T10:00:00.000Z", None), &quiet, ended),
            None
        );
        assert_eq!(
            judge(&t, &quiet, at("2026-12-04T10:00:06.999Z")),
            Some(TurnEnd::Awaited {
                ended,
                due: at("2026-12-04T10:00:07.000Z")
            })
        );
        assert_eq!(
            judge(&t, &quiet, at("2026-12-04T10:00:07.000Z")),
            Some(TurnEnd::Unreported { ended })
        );
        let later = at("2026-12-04T10:01:00.000Z");
        let reported = [
            Signs {
                last_idle: Some(at("2026-12-04T10:00:02.200Z")),
                ..quiet.clone()
            },
            Signs {
                is_active: Some(false),
                ..quiet.clone()
            },
        ];
        for s in reported {
            assert_eq!(
                judge(&t, &s, later),
                Some(TurnEnd::Reported { ended }),
                "{s:?}"
            );
        }
        let busy = [
            Signs {
                unread: 1,
                ..quiet.clone()
            },
            Signs {
                last_message: Some(at("2026-12-04T10:00:02.001Z")),
                ..quiet.clone()
            },
            Signs {
                last_received: Some(at("2026-12-04T10:00:03.000Z")),
                ..quiet.clone()
            },
            Signs {
                drained: Some(at("2026-12-04T10:00:03.001Z")),
                ..quiet.clone()
            },
        ];
        for s in busy {
            assert_eq!(judge(&t, &s, later), None, "{s:?}");
        }
        // Without the turn's start, a notification from a second before its end on counts.
        let no_start = TurnTimes {
            began_at: None,
            ..t
        };
        let s = Signs {
            last_idle: Some(at("2026-12-04T10:00:01.000Z")),
            ..quiet
        };
        assert_eq!(
            judge(&no_start, &s, later),
            Some(TurnEnd::Reported { ended })
        );
    }
}
