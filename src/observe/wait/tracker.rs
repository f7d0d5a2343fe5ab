//! Following the conditions over time: the [`Tracker`] fed the files and every batch of changes.

use std::collections::{HashMap, HashSet};

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use serde_json::Value;

use super::condition::*;
use crate::observe::event::Kind;
use crate::observe::follow::Following;
use crate::observe::members::{
    Turn, frame_type, from_of, gone_reason, idle_detail, initial_turn, note_shutdown_events,
    shut_down_in, teammates,
};
use crate::observe::unreported::idle_by_transcript;
use crate::observe::watch::Changes;
use crate::store::{Entry, id};
use crate::team::sentlog::SentLog;
use crate::time::iso_millis;

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
    /// Resolves the conditions of `spec` against the team as `f` follows it.
    ///
    /// # Errors
    /// No condition; an unknown member, task or message id (naming it); `--idle` and
    /// `--terminated` on the same member without `any`.
    pub fn new(
        f: &Following,
        spec: Spec,
        log: Option<&SentLog>,
        now: DateTime<Utc>,
    ) -> Result<Tracker> {
        let watch = &f.watch;
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
        t.evaluate(f, now);
        Ok(t)
    }

    /// Applies a batch of changes and re-checks every condition. Returns the indexes of the
    /// conditions that became true.
    pub fn observe(&mut self, changes: &Changes, f: &Following, now: DateTime<Utc>) -> Vec<usize> {
        note_shutdown_events(changes, &mut self.shut_down);
        for ev in &changes.events {
            let member = ev.to.as_deref().or(ev.member.as_deref()).unwrap_or("");
            match ev.event {
                Kind::Consumed | Kind::Read if self.turns.contains_key(member) => {
                    self.turns
                        .insert(member.to_string(), Turn::Busy("took its inbox".into()));
                }
                Kind::Message => {
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
                Kind::MemberUpdated if self.turns.contains_key(member) => {
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
            .filter(|e| e.event == Kind::Message && e.to.as_deref() == Some(self.me.as_str()))
            .filter_map(|e| e.message.as_ref())
            .collect();
        self.take_messages(mine.into_iter(), now);
        let before: Vec<bool> = self.states.iter().map(|s| s.met).collect();
        self.evaluate(f, now);
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

    fn evaluate(&mut self, f: &Following, now: DateTime<Utc>) {
        let (watch, live) = (&f.watch, f.live());
        let at = iso_millis(now);
        let gone = |name: &str| gone_reason(watch, name, &self.shut_down, live);
        let unreported = |name: &str| idle_by_transcript(watch, name, &f.turn_times(name), now);
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
                Condition::Idle(ms) => idle(watch, ms, &self.turns, &gone, &unreported),
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
