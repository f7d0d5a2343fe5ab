//! Blocking until something holds in a team's files: tasks done, members idle or gone, a
//! message from someone, a message delivered.
//!
//! A [`Tracker`] is built from a [`Watch`] (the files as they are) and then fed every batch of
//! [`Changes`] the watch reports, so a condition is checked against the files first and then on
//! every change; the watch is in place before the first check, so nothing between the two is
//! lost. The rules, also in `teamctl wait --help`:
//! - a member is **gone** when it left `config.json`, when a `shutdown_approved` frame from it
//!   was seen, when its recorded tmux pane exists and is dead, or (in-process teammates) when the
//!   lead process recorded in `leadProcess` is dead; a member with nothing recorded to check
//!   counts as alive;
//! - a member is **idle** when nothing waits unread in its inbox and its newest event is the end
//!   of a turn: an `idle_notification` from it, or `isActive` turning `false`. Taking an entry
//!   from its inbox, a new entry in it, a plain message from it or `isActive` turning `true`
//!   make it busy. The newest event decides, not the current `isActive`: Claude Code drops a
//!   config write whose lock it cannot get within 0.65 s, so `isActive: true` can outlive the
//!   turn. At the start, with no history, the newest of its entries (by timestamp), its inbox's
//!   last drain (one within a second of its `idle_notification` is that turn's own take, which
//!   the real client writes after the turn can have ended) and `config.json`'s last write (the
//!   files' mtimes) decide, as `status` does, and
//!   `isActive: false` counts as idle when no `idle_notification` of it is left (a Claude Code
//!   lead consumes them).

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::host::tmux::Liveness;
use crate::observe::budget::{Cap, Exceeded};
use crate::observe::follow::{Following, Observer, Watching};
use crate::observe::keep::{Acted, Action, Hand, Rules};
use crate::observe::members::{
    Turn, frame_type, from_of, gone_reason, idle_detail, initial_turn, note_shutdown_events,
    shut_down_in, teammates, unread,
};
use crate::observe::reader::Records;
use crate::observe::spend::TeamSpend;
use crate::observe::watch::{Changes, Waker, Watch};
use crate::store::{Entry, id};
use crate::team::config::Team;
use crate::team::mailbox::{DeliveryState, TypeFilter};
use crate::team::model::first_line;
use crate::team::sentlog::SentLog;
use crate::team::tasks::Task;
use crate::time::iso_millis;

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

/// Conditions being waited for, and what has been seen so far.
#[derive(Debug)]
pub struct Tracker {
    conditions: Vec<Condition>,
    /// Resolved arguments and state, in the order given.
    pub states: Vec<ConditionState>,
    me: String,
    turns: HashMap<String, Turn>,
    shut_down: HashSet<String>,
    /// Teammates when the wait started (tasks depend on them).
    teammates_at_start: Vec<String>,
    /// For `message_from`: entry ids of `me`'s inbox that do not count.
    old_ids: HashSet<String>,
    after_time: Option<DateTime<Utc>>,
    /// For `delivered`: the id and its recipient.
    delivered: Recipients,
}

impl Tracker {
    /// Resolves the conditions of `spec` against the team as `watch` sees it.
    ///
    /// # Errors
    /// No condition; an unknown member, task or message id (naming it); `--idle` and
    /// `--terminated` on the same member without `any`.
    pub fn new(
        watch: &Watch,
        spec: Spec,
        log: Option<&SentLog>,
        live: &Liveness,
        now: DateTime<Utc>,
    ) -> Result<Tracker> {
        let Spec {
            conditions,
            me,
            after,
            any,
        } = spec;
        let (me, after) = (me.as_str(), &after);
        if conditions.is_empty() {
            bail!(crate::error::Error::Usage(
                "nothing to wait for: give at least one condition (--tasks-done, --task, --idle, \
                 --message-from, --terminated, --delivered)"
                    .into()
            ));
        }
        let team_mates = teammates(watch, me);
        let resolved = resolve(conditions, &team_mates, watch)?;
        let (idle_members, delivered) = check(&resolved, watch, log, any)?;
        let (old_ids, after_time) = marks(after, watch, me, log, now)?;
        let states = resolved.iter().map(ConditionState::of).collect();
        let mut t = Tracker {
            conditions: resolved,
            states,
            me: me.to_string(),
            turns: HashMap::new(),
            shut_down: shut_down_in(watch),
            teammates_at_start: team_mates,
            old_ids,
            after_time,
            delivered,
        };
        for m in idle_members {
            let turn = initial_turn(watch, &m);
            t.turns.insert(m, turn);
        }
        // Entries already there count for `--after`.
        if !matches!(after, After::Start) {
            let mine: Vec<Entry> = watch.inbox(me).unwrap_or_default().to_vec();
            t.take_messages(mine.iter(), now);
        }
        t.evaluate(watch, live, now);
        Ok(t)
    }

    /// Applies a batch of changes and re-checks every condition. Returns the indexes of the
    /// conditions that became true.
    pub fn observe(
        &mut self,
        changes: &Changes,
        watch: &Watch,
        live: &Liveness,
        now: DateTime<Utc>,
    ) -> Vec<usize> {
        note_shutdown_events(changes, &mut self.shut_down);
        for ev in &changes.events {
            let member = ev.to.as_deref().or(ev.member.as_deref()).unwrap_or("");
            match ev.event {
                "consumed" | "read" if self.turns.contains_key(member) => {
                    self.turns
                        .insert(member.to_string(), Turn::Busy("took its inbox".into()));
                }
                "message" => {
                    if self.turns.contains_key(member) {
                        self.turns
                            .insert(member.to_string(), Turn::Busy("a message arrived".into()));
                    }
                    if let (Some(from), Some(msg)) = (ev.from.as_deref(), ev.message.as_ref())
                        && self.turns.contains_key(from)
                    {
                        let turn = if frame_type(msg).as_deref() == Some("idle_notification") {
                            Turn::Idle(idle_detail(msg))
                        } else {
                            Turn::Busy("it is writing messages".into())
                        };
                        self.turns.insert(from.to_string(), turn);
                    }
                }
                "member_updated" if self.turns.contains_key(member) => {
                    let active = ev
                        .changes
                        .as_ref()
                        .and_then(|c| c.get("isActive"))
                        .and_then(|c| c.get("to"))
                        .and_then(Value::as_bool);
                    match active {
                        Some(true) => {
                            self.turns
                                .insert(member.to_string(), Turn::Busy("isActive is true".into()));
                        }
                        Some(false) => {
                            self.turns
                                .insert(member.to_string(), Turn::Idle("isActive is false".into()));
                        }
                        None => {}
                    }
                }
                _ => {}
            }
        }
        let mine: Vec<&Entry> = changes
            .events
            .iter()
            .filter(|e| e.event == "message" && e.to.as_deref() == Some(self.me.as_str()))
            .filter_map(|e| e.message.as_ref())
            .collect();
        self.take_messages(mine.into_iter(), now);
        let before: Vec<bool> = self.states.iter().map(|s| s.met).collect();
        self.evaluate(watch, live, now);
        self.states
            .iter()
            .zip(before)
            .enumerate()
            .filter(|(_, (s, was))| s.met && !was)
            .map(|(i, _)| i)
            .collect()
    }

    /// Marks `message_from` conditions met by entries of `me`'s inbox.
    fn take_messages<'a>(&mut self, entries: impl Iterator<Item = &'a Entry>, now: DateTime<Utc>) {
        for e in entries {
            let eid = id::entry_id(e);
            if self.old_ids.contains(&eid) {
                continue;
            }
            if let Some(t) = self.after_time {
                let at = e
                    .get("timestamp")
                    .and_then(Value::as_str)
                    .and_then(|s| DateTime::parse_from_rfc3339(s).ok());
                if at.is_none_or(|at| at < t) {
                    continue;
                }
            }
            for (c, s) in self.conditions.iter().zip(self.states.iter_mut()) {
                if let Condition::MessageFrom { from, kind } = c
                    && !s.met
                    && from_of(e) == Some(from.as_str())
                    && kind_matches(kind, e)
                {
                    s.met = true;
                    s.at = Some(iso_millis(now));
                    s.detail = format!("{eid}: {}", message_preview(e));
                    s.message = Some(e.clone());
                }
            }
        }
    }

    fn evaluate(&mut self, watch: &Watch, live: &Liveness, now: DateTime<Utc>) {
        let at = iso_millis(now);
        let gone = |name: &str| gone_reason(watch, name, &self.shut_down, live);
        let all_teammates_gone = {
            let mut names: Vec<String> = self.teammates_at_start.clone();
            names.extend(teammates(watch, &self.me));
            !names.is_empty() && names.iter().all(|n| gone(n).is_some())
        };
        let all_gone = all_teammates_gone.then(|| "every teammate is gone".to_string());
        let tasks = tasks_of(watch);
        for (i, c) in self.conditions.iter().enumerate() {
            if self.states[i].met {
                continue;
            }
            let v = match c {
                Condition::TasksDone => tasks_done(&tasks, all_gone.clone()),
                Condition::Task(tid) => task(&tasks, tid, all_gone.clone()),
                Condition::Idle(ms) => idle(watch, ms, &self.turns, &gone),
                Condition::MessageFrom { from, .. } => Verdict {
                    met: false,
                    detail: format!("no message from {from} yet"),
                    impossible: gone(from).map(|g| format!("{g} before writing to {}", self.me)),
                },
                Condition::Terminated(ms) => terminated(ms, &gone),
                Condition::Delivered(mid) => {
                    let to = self
                        .delivered
                        .iter()
                        .find(|(d, _)| d == mid)
                        .map(|(_, to)| to.as_str())
                        .unwrap_or_default();
                    delivered(watch, mid, to, &gone)
                }
            };
            let s = &mut self.states[i];
            s.detail = v.detail;
            if v.met {
                s.met = true;
                s.at = Some(at.clone());
                s.impossible = None;
            } else {
                s.impossible = v.impossible;
            }
        }
    }

    /// Whether the wait is over: every condition met (or, with `any`, one).
    pub fn done(&self, any: bool) -> bool {
        if any {
            self.states.iter().any(|s| s.met)
        } else {
            self.states.iter().all(|s| s.met)
        }
    }

    /// Why the wait can no longer succeed: a needed condition is impossible (with `any`: every
    /// condition is).
    pub fn impossible(&self, any: bool) -> Option<String> {
        let mut open = self.states.iter().filter(|s| !s.met);
        if any {
            let reasons: Vec<&str> = self
                .states
                .iter()
                .map(|s| s.impossible.as_deref())
                .collect::<Option<Vec<_>>>()?;
            return (!reasons.is_empty()).then(|| reasons.join("; "));
        }
        open.find_map(|s| s.impossible.clone())
    }
}

/// The conditions with "every teammate" (an empty member list) spelt out as `team_mates`.
fn resolve(
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
type Recipients = Vec<(String, String)>;

/// Checks that every member, task and message the conditions name exists; returns the members
/// to follow for `--idle` and each `--delivered` message with its recipient.
fn check(
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
fn marks(
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
    fn of(c: &Condition) -> ConditionState {
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
struct Verdict {
    met: bool,
    detail: String,
    impossible: Option<String>,
}

/// The team's tasks as the watch last read them (internal ones left out).
fn tasks_of(watch: &Watch) -> Vec<Task> {
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
fn tasks_done(tasks: &[Task], all_gone: Option<String>) -> Verdict {
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
fn task(tasks: &[Task], tid: &str, all_gone: Option<String>) -> Verdict {
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

/// `--idle`: each of `ms` between turns with nothing unread.
fn idle(
    watch: &Watch,
    ms: &[String],
    turns: &HashMap<String, Turn>,
    gone: &dyn Fn(&str) -> Option<String>,
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
            Some(Turn::Busy(d)) => busy.push(format!("{shown} ({d})")),
            None => busy.push(format!("{shown} (busy)")),
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
fn terminated(ms: &[String], gone: &dyn Fn(&str) -> Option<String>) -> Verdict {
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
fn delivered(watch: &Watch, mid: &str, to: &str, gone: &dyn Fn(&str) -> Option<String>) -> Verdict {
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

fn kind_matches(kind: &TypeFilter, e: &Entry) -> bool {
    let ft = frame_type(e);
    match kind {
        TypeFilter::Message => ft.is_none(),
        TypeFilter::Protocol => ft.is_some(),
        TypeFilter::Frame(f) => ft.as_deref() == Some(f.as_str()),
        TypeFilter::MessageOrIdle => ft.is_none_or(|t| t == "idle_notification"),
    }
}

fn message_preview(e: &Entry) -> String {
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
fn recipient_of(watch: &Watch, mid: &str, log: Option<&SentLog>) -> Result<String> {
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

/// Who hears what while [`wait`] blocks.
pub struct Hooks<'a> {
    /// The watch and its changes, progress, warnings and hints.
    pub observer: &'a mut dyn Observer,
    /// Each condition as it is met (or was already, at the start).
    pub met: &'a mut dyn FnMut(&ConditionState) -> Result<()>,
    /// The open conditions, once the wait starts to block.
    pub blocking: &'a mut dyn FnMut(&[&ConditionState]),
    /// Does what the rules ask for a stuck member (a nudge, a restart).
    pub hand: &'a mut dyn Hand,
    /// Each action done.
    pub acted: &'a mut dyn FnMut(&Acted),
}

/// How a [`wait`] ended.
pub struct Waited {
    /// Every condition's state, in the order given.
    pub states: Vec<ConditionState>,
    /// Whether the wait was met (every condition, or one with `any`).
    pub met: bool,
    /// Why the wait can no longer be met, when that ended it.
    pub impossible: Option<String>,
    /// How long it waited.
    pub waited_ms: u64,
    /// The watch as it ended.
    pub watch: Watch,
    /// Its file notifications, still open: dropping them is the slow part of exiting (see the
    /// binary's quick exit).
    pub waker: Waker,
    /// The cap the team's spend crossed, when that ended the wait.
    pub budget: Option<Exceeded>,
    /// The team's spend as last read, when a cap was given.
    pub spend: Option<TeamSpend>,
    /// Why a stuck member ended the wait (`exit` in the rules): exit 7, 8 or 9.
    pub stuck: Option<anyhow::Error>,
}

/// How long and how a [`wait`] may go on.
#[derive(Debug)]
pub struct Limits {
    /// Give up after this long.
    pub timeout: Duration,
    /// Poll at this interval instead of using file notifications.
    pub poll: Option<Duration>,
    /// Stop when the team's spend crosses this cap (checked at the start too).
    pub cap: Cap,
    /// teamctl's data dir, which keeps the transcript index the cap reads through.
    pub data_dir: Option<PathBuf>,
    /// What to do about stuck members.
    pub rules: Rules,
}

/// Blocks until `spec` is met in `team`, can no longer be met, the team's spend crosses the
/// budget, or the timeout passes: checks the files as they are first, then every change (the
/// watch is in place before the first check). `log` (teamctl's sent log) dates messages that
/// already left an inbox; `clock` stamps what is seen; `hooks` hear what happens.
///
/// # Errors
/// An unknown member, task or message id in `spec`; an error from `observer`.
pub fn wait(
    team: Team,
    spec: Spec,
    limits: Limits,
    log: Option<&SentLog>,
    clock: &dyn Fn() -> DateTime<Utc>,
    hooks: Hooks,
) -> Result<Waited> {
    let Hooks {
        observer,
        met,
        blocking,
        hand,
        acted,
    } = hooks;
    let started = Instant::now();
    let deadline = started + limits.timeout;
    let any = spec.any;
    let records = Records {
        data_dir: limits.data_dir,
        ..Records::default()
    };
    let watching = Watching {
        cap: limits.cap,
        rules: limits.rules,
        ..Watching::default()
    };
    let (mut f, warnings) = Following::new(team, limits.poll, records, watching, clock());
    for w in warnings {
        observer.warn(&w);
    }
    let capped = limits.cap.is_set();
    let (mut over, skipped) = f.start_spend();
    for w in skipped {
        observer.warn(&w);
    }
    for w in f.budget_warnings() {
        observer.budget_warning(&w);
    }
    observer.changed(&f.watch, None)?;
    let mut tracker = Tracker::new(&f.watch, spec, log, f.live(), clock())?;
    for s in tracker.states.iter().filter(|s| s.met) {
        met(s)?;
    }
    let mut stuck = None;
    if !tracker.done(any) && over.is_none() {
        stuck = keep(&mut f, &mut tracker, hand, acted, observer, met, clock)?;
    }
    if !tracker.done(any) && over.is_none() && stuck.is_none() {
        let open: Vec<&ConditionState> = tracker.states.iter().filter(|s| !s.met).collect();
        blocking(&open);
    }
    let mut impossible = None;
    while !tracker.done(any) && over.is_none() && stuck.is_none() {
        if let Some(why) = tracker.impossible(any) {
            impossible = Some(why);
            break;
        }
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        let changes = f.next(deadline - now, clock);
        for w in &changes.warnings {
            observer.warn(w);
        }
        observer.changed(&f.watch, Some(&changes))?;
        for i in tracker.observe(&changes, &f.watch, f.live(), clock()) {
            met(&tracker.states[i])?;
        }
        for w in f.budget_warnings() {
            observer.budget_warning(&w);
        }
        over = f.over_budget();
        if !tracker.done(any) && over.is_none() {
            stuck = keep(&mut f, &mut tracker, hand, acted, observer, met, clock)?;
        }
    }
    let spend = f.last_spend();
    Ok(Waited {
        met: tracker.done(any) && over.is_none() && stuck.is_none(),
        states: tracker.states,
        impossible,
        waited_ms: started.elapsed().as_millis() as u64,
        watch: f.watch,
        waker: f.waker,
        budget: over,
        spend: spend.filter(|_| capped),
        stuck,
    })
}

/// Acts on the stuck members as the rules say; returns the error that ends the wait, if an
/// action does (any other failure to read the team is a warning: the conditions still hold).
/// A member restarted is looked at again at once (its new pane recorded, the panes probed), so
/// that the conditions never judge it by the pane it had: "every teammate is gone" is not
/// true of a team whose one teammate was just started again.
///
/// # Errors
/// From `observer` and `met`.
#[allow(clippy::too_many_arguments)]
fn keep(
    f: &mut Following,
    tracker: &mut Tracker,
    hand: &mut dyn Hand,
    acted: &mut dyn FnMut(&Acted),
    observer: &mut dyn Observer,
    met: &mut dyn FnMut(&ConditionState) -> Result<()>,
    clock: &dyn Fn() -> DateTime<Utc>,
) -> Result<Option<anyhow::Error>> {
    match f.keep(hand, clock()) {
        Ok(done) => {
            done.iter().for_each(acted);
            if done.iter().any(|a| a.action == Action::Restart && a.ok) {
                let changes = f.look_again(clock());
                observer.changed(&f.watch, Some(&changes))?;
                for i in tracker.observe(&changes, &f.watch, f.live(), clock()) {
                    met(&tracker.states[i])?;
                }
            }
            Ok(None)
        }
        Err(e) if e.downcast_ref::<crate::Error>().is_some() => Ok(Some(e)),
        Err(e) => {
            observer.warn(&format!("{e:#}"));
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> Entry {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn idle_detail_says_reason_summary_and_last_words() {
        let frame = json!({"type": "idle_notification", "from": "a", "idleReason": "failed",
                           "summary": "tried", "failureReason": "no access", "result": "gave up"});
        let e = entry(json!({"from": "a", "text": frame.to_string()}));
        assert_eq!(
            idle_detail(&e),
            "idle_notification: failed; summary: tried; failure: no access; last words: gave up"
        );
        let bare = entry(json!({"from": "a", "text": r#"{"type":"idle_notification"}"#}));
        assert_eq!(idle_detail(&bare), "idle_notification: available");
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
