//! The conditions `wait` can wait for, each checked by a function of its own against the files
//! as they are ([`Verdict`]).

use std::collections::{HashMap, HashSet};

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::observe::members::{Turn, frame_type, unread};
use crate::observe::watch::Watch;
use crate::store::{Entry, id};
use crate::team::mailbox::{DeliveryState, TypeFilter};
use crate::team::model::first_line;
use crate::team::sentlog::SentLog;
use crate::team::tasks::Task;

/// What to wait for, as given on the command line.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// Every task (internal ones aside) is completed, and there is at least one.
    TasksDone,
    /// This task is completed.
    Task(String),
    /// Each of these members is idle (empty: every teammate).
    Idle(Vec<String>),
    /// A message from this member lands in your inbox.
    MessageFrom {
        /// The sender.
        from: String,
        /// Which kind of entry counts.
        kind: TypeFilter,
    },
    /// Each of these members is gone (empty: every teammate).
    Terminated(Vec<String>),
    /// The message with this id has left its recipient's inbox or was marked read.
    Delivered(String),
}

/// What to wait for and for whom.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The conditions, in the order given.
    pub conditions: Vec<Condition>,
    /// Your identity: whose inbox `MessageFrom` watches.
    pub me: String,
    /// Where `MessageFrom` starts looking.
    pub after: After,
    /// Whether the first condition met ends the wait (else all must be).
    pub any: bool,
}

/// Where `--message-from` starts looking.
#[derive(Debug, Clone, PartialEq)]
pub enum After {
    /// Entries that land after the wait started.
    Start,
    /// Entries after this one in the inbox, or, when it is not there, written at or after the
    /// time the entry was sent (from the sent log).
    Id(String),
    /// Entries whose timestamp is at or after this time.
    Time(DateTime<Utc>),
}

/// One condition's state (`wait --json` `conditions[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConditionState {
    /// `tasks_done`, `task`, `idle`, `message_from`, `terminated` or `delivered`.
    pub condition: &'static str,
    /// Its arguments (member names, a task id, a message id).
    pub args: Vec<String>,
    /// Whether it holds.
    pub met: bool,
    /// When teamctl saw it become true.
    pub at: Option<String>,
    /// What the files say, for people.
    pub detail: String,
    /// The message that met a `message_from` condition (`null` otherwise).
    pub message: Option<Entry>,
    /// Why it can no longer become true, if so.
    pub impossible: Option<String>,
}

/// The conditions with "every teammate" (an empty member list) spelt out as `team_mates`.
pub(super) fn resolve(
    conditions: Vec<Condition>,
    team_mates: &[String],
    watch: &Watch,
) -> Result<Vec<Condition>> {
    let mut resolved = Vec::new();
    for c in conditions {
        resolved.push(match c {
            Condition::Idle(m) | Condition::Terminated(m)
                if m.is_empty() && team_mates.is_empty() =>
            {
                bail!(
                    "team '{}' has no teammates to wait for; name the members",
                    watch.team().name
                )
            }
            Condition::Idle(m) if m.is_empty() => Condition::Idle(team_mates.to_vec()),
            Condition::Terminated(m) if m.is_empty() => Condition::Terminated(team_mates.to_vec()),
            other => other,
        });
    }
    Ok(resolved)
}

/// Each `--delivered` message id with its recipient.
pub(super) type Recipients = Vec<(String, String)>;

/// Checks that every member, task and message the conditions name exists; returns the members
/// to follow for `--idle` and each `--delivered` message with its recipient.
pub(super) fn check(
    conditions: &[Condition],
    watch: &Watch,
    log: Option<&SentLog>,
    any: bool,
) -> Result<(HashSet<String>, Recipients)> {
    let known = |name: &str| -> Result<()> {
        if watch.members().iter().any(|(n, _)| n == name) {
            return Ok(());
        }
        let names: Vec<String> = watch.members().iter().map(|(n, _)| n.clone()).collect();
        let hint = crate::team::config::suggest(name, &names)
            .map(|s| format!(" (did you mean {}?)", crate::store::paths::quote(&s)))
            .unwrap_or_default();
        bail!(
            "{} is not a member of team '{}'{hint}; members: {}",
            crate::store::paths::quote(name),
            watch.team().name,
            crate::store::paths::shown_list(&names)
        )
    };
    let mut idle_members = HashSet::new();
    let mut gone_members = HashSet::new();
    let mut delivered = Vec::new();
    for c in conditions {
        match c {
            Condition::Idle(ms) => {
                for m in ms {
                    known(m)?;
                    idle_members.insert(m.clone());
                }
            }
            Condition::Terminated(ms) => {
                for m in ms {
                    // A member that already left config.json is terminated, not unknown.
                    if !watch.inboxes().contains_key(m) {
                        known(m)?;
                    }
                    gone_members.insert(m.clone());
                }
            }
            Condition::MessageFrom { from, .. } => known(from)?,
            Condition::Task(t) => {
                if !watch.tasks().contains_key(t) {
                    bail!("task {t} not found in team '{}'", watch.team().name);
                }
            }
            Condition::Delivered(mid) => {
                delivered.push((mid.clone(), recipient_of(watch, mid, log)?));
            }
            Condition::TasksDone => {}
        }
    }
    if !any && let Some(m) = idle_members.intersection(&gone_members).next() {
        bail!(crate::error::Error::Usage(format!(
            "--idle {m} and --terminated {m} contradict each other (a terminated member is \
             never idle); use --any to wait for the first"
        )));
    }
    Ok((idle_members, delivered))
}

/// What `--message-from` does not count: the ids of `me`'s entries there before (`After::Start`,
/// `After::Id`), or a time before which nothing counts.
pub(super) fn marks(
    after: &After,
    watch: &Watch,
    me: &str,
    log: Option<&SentLog>,
    now: DateTime<Utc>,
) -> Result<(HashSet<String>, Option<DateTime<Utc>>)> {
    let mine = watch.inbox(me).unwrap_or_default();
    match after {
        After::Start => Ok((mine.iter().map(id::entry_id).collect(), None)),
        After::Time(t) => Ok((HashSet::new(), Some(*t))),
        After::Id(wanted) => {
            if let Some(pos) = mine.iter().position(|e| id::entry_id(e) == *wanted) {
                return Ok((mine[..=pos].iter().map(id::entry_id).collect(), None));
            }
            let sent = match log {
                Some(l) => l.find(watch.team().name.as_str(), wanted)?,
                None => None,
            };
            let Some(sent) = sent else {
                bail!(
                    "message {wanted} is neither in {me}'s inbox nor in the sent log of team '{}'",
                    watch.team().name
                );
            };
            let at = DateTime::parse_from_rfc3339(&sent.at)
                .map(|t| t.with_timezone(&Utc))
                .unwrap_or(now);
            Ok((HashSet::new(), Some(at)))
        }
    }
}

impl ConditionState {
    /// A condition not met yet, with its name and arguments.
    pub(super) fn of(c: &Condition) -> ConditionState {
        let (condition, args) = match c {
            Condition::TasksDone => ("tasks_done", vec![]),
            Condition::Task(t) => ("task", vec![t.clone()]),
            Condition::Idle(m) => ("idle", m.clone()),
            Condition::MessageFrom { from, .. } => ("message_from", vec![from.clone()]),
            Condition::Terminated(m) => ("terminated", m.clone()),
            Condition::Delivered(id) => ("delivered", vec![id.clone()]),
        };
        ConditionState {
            condition,
            args,
            met: false,
            at: None,
            detail: String::new(),
            message: None,
            impossible: None,
        }
    }
}

/// Where a condition stands: met, what the files show, and why it can no longer be met.
pub(super) struct Verdict {
    pub(super) met: bool,
    pub(super) detail: String,
    pub(super) impossible: Option<String>,
}

/// The team's tasks as the watch last read them (internal ones left out).
pub(super) fn tasks_of(watch: &Watch) -> Vec<Task> {
    let team = watch.team();
    let dir = team.layout.tasks_dir(&team.name);
    watch
        .tasks()
        .iter()
        .filter_map(|(id, raw)| {
            Task::from_file(raw.clone(), &dir.join(format!("{id}.json")), id).ok()
        })
        .filter(|t| !t.is_internal())
        .collect()
}

/// `--tasks-done`: every task completed, and there is one.
pub(super) fn tasks_done(tasks: &[Task], all_gone: Option<String>) -> Verdict {
    let done = tasks.iter().filter(|t| t.status == "completed").count();
    let open: Vec<String> = tasks
        .iter()
        .filter(|t| t.status != "completed")
        .take(5)
        .map(|t| match &t.owner {
            Some(o) => format!("#{} {} ({o})", t.id, t.status),
            None => format!("#{} {}", t.id, t.status),
        })
        .collect();
    let detail = if tasks.is_empty() {
        "no tasks yet".to_string()
    } else if open.is_empty() {
        format!("{done} of {} completed", tasks.len())
    } else {
        format!(
            "{done} of {} completed; open: {}",
            tasks.len(),
            open.join(", ")
        )
    };
    Verdict {
        met: !tasks.is_empty() && done == tasks.len(),
        detail,
        impossible: all_gone,
    }
}

/// `--task ID`: that task completed.
pub(super) fn task(tasks: &[Task], tid: &str, all_gone: Option<String>) -> Verdict {
    match tasks.iter().find(|t| t.id == tid) {
        Some(t) => {
            let owner = t
                .owner
                .as_deref()
                .map(|o| format!(", owner {o}"))
                .unwrap_or_default();
            Verdict {
                met: t.status == "completed",
                detail: format!("#{tid} {}{owner}: {}", t.status, first_line(&t.subject, 60)),
                impossible: all_gone,
            }
        }
        None => Verdict {
            met: false,
            detail: format!("#{tid} was deleted"),
            impossible: Some(format!("task {tid} was deleted")),
        },
    }
}

/// `--idle`: each of `ms` between turns with nothing unread; `unreported` says why a member
/// the files' signs hold busy is idle all the same (its transcript: see
/// [`crate::observe::unreported::judge`]).
pub(super) fn idle(
    watch: &Watch,
    ms: &[String],
    turns: &HashMap<String, Turn>,
    gone: &dyn Fn(&str) -> Option<String>,
    unreported: &dyn Fn(&str) -> Option<String>,
) -> Verdict {
    let mut busy = Vec::new();
    let mut idle = Vec::new();
    let mut impossible = None;
    for m in ms {
        if let Some(why) = gone(m) {
            impossible.get_or_insert(why);
            continue;
        }
        let shown = crate::store::paths::shown(m);
        match turns.get(m) {
            // The newest event decides, not isActive: a teammate's config write can be lost
            // (see initial_turn).
            Some(Turn::Idle(d)) if unread(watch, m) == 0 => idle.push(format!("{shown} ({d})")),
            Some(Turn::Idle(_)) => busy.push(format!(
                "{shown} ({} unread in its inbox)",
                unread(watch, m)
            )),
            other => match (unreported(m), other) {
                (Some(why), _) => idle.push(format!("{shown} ({why})")),
                (None, Some(Turn::Busy(d))) => busy.push(format!("{shown} ({d})")),
                (None, _) => busy.push(format!("{shown} (busy)")),
            },
        }
    }
    let detail = if busy.is_empty() {
        idle.join(", ")
    } else {
        format!("not idle: {}", busy.join(", "))
    };
    Verdict {
        met: busy.is_empty() && impossible.is_none(),
        detail,
        impossible,
    }
}

/// `--terminated`: each of `ms` gone.
pub(super) fn terminated(ms: &[String], gone: &dyn Fn(&str) -> Option<String>) -> Verdict {
    let alive: Vec<&String> = ms.iter().filter(|m| gone(m).is_none()).collect();
    let detail = if alive.is_empty() {
        ms.iter()
            .filter_map(|m| gone(m))
            .collect::<Vec<_>>()
            .join("; ")
    } else {
        format!("still running: {}", crate::store::paths::shown_list(&alive))
    };
    Verdict {
        met: alive.is_empty(),
        detail,
        impossible: None,
    }
}

/// `--delivered ID`: message `mid` read or taken from `to`'s inbox.
pub(super) fn delivered(
    watch: &Watch,
    mid: &str,
    to: &str,
    gone: &dyn Fn(&str) -> Option<String>,
) -> Verdict {
    let state = DeliveryState::of(watch.inbox(to), mid);
    let detail = match state {
        DeliveryState::Pending => format!("{mid} waits in {to}'s inbox"),
        DeliveryState::Read => format!("{to} marked {mid} read"),
        DeliveryState::Consumed => format!("{to} took {mid}"),
    };
    Verdict {
        met: state != DeliveryState::Pending,
        detail,
        impossible: gone(to),
    }
}

pub(super) fn kind_matches(kind: &TypeFilter, e: &Entry) -> bool {
    let ft = frame_type(e);
    match kind {
        TypeFilter::Message => ft.is_none(),
        TypeFilter::Protocol => ft.is_some(),
        TypeFilter::Frame(f) => ft.as_deref() == Some(f.as_str()),
        TypeFilter::MessageOrIdle => ft.is_none_or(|t| t == "idle_notification"),
    }
}

pub(super) fn message_preview(e: &Entry) -> String {
    if let Some(ft) = frame_type(e) {
        return format!("[{ft}]");
    }
    let summary = e
        .get("summary")
        .and_then(Value::as_str)
        .filter(|s| !s.trim().is_empty());
    let text = e.get("text").and_then(Value::as_str).unwrap_or("");
    first_line(summary.unwrap_or(text), 60)
}

/// The recipient of message `id`: the owner of the inbox holding it, else the sent log's
/// record.
pub(super) fn recipient_of(watch: &Watch, mid: &str, log: Option<&SentLog>) -> Result<String> {
    for (owner, entries) in watch.inboxes() {
        if entries.iter().any(|e| id::entry_id(e) == mid) {
            return Ok(owner.clone());
        }
    }
    if let Some(l) = log
        && let Some(sent) = l.find(watch.team().name.as_str(), mid)?
    {
        return Ok(sent.to);
    }
    bail!(
        "message {mid} is in no inbox of team '{}' and not in the sent log",
        watch.team().name
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> Entry {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn kinds_of_entries() {
        let plain = entry(json!({"from": "a", "text": "hello"}));
        let idle = entry(json!({"from": "a", "text": r#"{"type":"idle_notification"}"#}));
        assert!(kind_matches(&TypeFilter::Message, &plain));
        assert!(!kind_matches(&TypeFilter::Message, &idle));
        assert!(kind_matches(&TypeFilter::Protocol, &idle));
        assert!(kind_matches(
            &TypeFilter::Frame("idle_notification".into()),
            &idle
        ));
        assert_eq!(frame_type(&plain), None);
    }
}
