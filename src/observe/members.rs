//! What the files say about one member, the rules `wait` and `ask` share: whether it is a teammate,
//! gone (and why), what its idle notification says (whether it is in the middle of a turn goes by
//! the transcript too: `observe::unreported::mid_turn`). Each rule reads the team as a [`Watch`]
//! sees it (and, for panes and processes, what was probed). The rules themselves are in `teamctl
//! wait --help` and `observe::wait`'s docs.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::host::proc::pid_alive;
use crate::host::tmux::Liveness;
use crate::observe::event::Kind;
use crate::observe::watch::{Changes, Watch};
use crate::store::Entry;
use crate::store::paths::MemberName;
use crate::team::model::{Frame, first_line};

/// A member's turn as far as the files tell, and why.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// In a turn.
    Busy(String),
    /// Between turns.
    Idle(String),
}

/// The frame type of an entry's text, if it is a protocol frame.
pub fn frame_type(entry: &Entry) -> Option<String> {
    let text = entry.get("text")?.as_str()?;
    Frame::decode(text).map(|f| f.frame_type)
}

pub(crate) fn from_of(entry: &Entry) -> Option<&str> {
    entry.get("from").and_then(Value::as_str)
}

pub(crate) fn is_read(entry: &Entry) -> bool {
    entry.get("read") == Some(&Value::Bool(true))
}

/// The members of the team that are Claude Code teammates: not the lead, not `me`, and
/// carrying what only a spawned teammate has (`agentType`, `color` or `backendType`; a name
/// added by `send --join` has none of them).
pub fn teammates(watch: &Watch, me: &str) -> Vec<String> {
    let lead = lead_name(watch);
    watch
        .members()
        .iter()
        .filter(|(name, m)| {
            name != me
                && Some(name.as_str()) != lead.as_deref()
                && ["agentType", "color", "backendType"]
                    .iter()
                    .any(|k| m.get(*k).is_some_and(Value::is_string))
                && m.get("agentType").and_then(Value::as_str) != Some("team-lead")
        })
        .map(|(n, _)| n.clone())
        .collect()
}

pub(crate) fn lead_name(watch: &Watch) -> Option<String> {
    let cfg = watch.team().config.as_ref()?;
    cfg.lead().map(|l| l.name.clone())
}

/// Names of members that sent a `shutdown_approved` frame, in the inboxes as they are now.
pub fn shut_down_in(watch: &Watch) -> HashSet<String> {
    let mut out = HashSet::new();
    for entries in watch.inboxes().values() {
        note_shutdowns(entries.iter(), &mut out);
    }
    out
}

fn note_shutdowns<'a>(entries: impl Iterator<Item = &'a Entry>, out: &mut HashSet<String>) {
    for e in entries {
        if frame_type(e).as_deref() == Some("shutdown_approved")
            && let Some(from) = from_of(e)
        {
            out.insert(from.to_string());
        }
    }
}

/// Adds the senders of `shutdown_approved` frames among `changes` to `shut_down`.
pub fn note_shutdown_events(changes: &Changes, shut_down: &mut HashSet<String>) {
    note_shutdowns(
        changes
            .events
            .iter()
            .filter(|e| e.event == Kind::Message)
            .filter_map(|e| e.message.as_ref()),
        shut_down,
    );
}

/// Why `name` can no longer act, or `None` while it may (see the module docs for the rules).
pub fn gone_reason(
    watch: &Watch,
    name: &str,
    shut_down: &HashSet<String>,
    live: &Liveness,
) -> Option<String> {
    if shut_down.contains(name) {
        return Some(format!("{name} shut down (shutdown_approved)"));
    }
    let Some((_, m)) = watch.members().iter().find(|(n, _)| n == name) else {
        return Some(format!(
            "{name} is no longer a member of the team (config.json)"
        ));
    };
    let pane = m.get("tmuxPaneId").and_then(Value::as_str).unwrap_or("");
    if live.pane_alive(pane) == Some(false) {
        return Some(format!("{name}'s tmux pane {pane} has exited"));
    }
    let in_process =
        pane == "in-process" || m.get("backendType").and_then(Value::as_str) == Some("in-process");
    if in_process
        && Some(name) != lead_name(watch).as_deref()
        && let Some(p) = watch
            .team()
            .config
            .as_ref()
            .and_then(|c| c.lead_process.as_ref())
        && pid_alive(p.pid, p.proc_start.as_deref()) == Some(false)
    {
        return Some(format!(
            "{name} ran in the lead's process (pid {}), which has exited",
            p.pid
        ));
    }
    None
}

pub(crate) fn member_entry<'a>(watch: &'a Watch, name: &str) -> Option<&'a Entry> {
    watch
        .members()
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, m)| m)
}

pub(crate) fn unread(watch: &Watch, name: &str) -> usize {
    watch
        .inbox(name)
        .unwrap_or_default()
        .iter()
        .filter(|e| !is_read(e))
        .count()
}

pub(crate) fn is_active(watch: &Watch, name: &str) -> Option<bool> {
    member_entry(watch, name)?.get("isActive")?.as_bool()
}

pub(crate) fn mtime(path: &crate::store::dir::Loc) -> Option<DateTime<Utc>> {
    let modified = path.stat().ok()??.mtime;
    Some(modified.into())
}

/// When `name`'s inbox file last changed (with no unread entry in it: when it was drained).
pub(crate) fn inbox_written(watch: &Watch, name: &str) -> Option<DateTime<Utc>> {
    watch.inbox(name)?;
    mtime(&watch.team().inbox_path(&MemberName::parse(name).ok()?))
}

/// A member's turn from the files alone (no history): see the module docs.
pub(crate) fn initial_turn(watch: &Watch, name: &str) -> Turn {
    let pending = unread(watch, name);
    if pending > 0 {
        return Turn::Busy(format!("{pending} unread in its inbox"));
    }
    let mut newest: Option<(DateTime<Utc>, Option<String>)> = None;
    let mut any_idle = false;
    for e in watch.inboxes().values().flatten() {
        if from_of(e) != Some(name) {
            continue;
        }
        let Some(at) = e
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        else {
            continue;
        };
        let at = at.with_timezone(&Utc);
        let kind = frame_type(e);
        any_idle |= kind.as_deref() == Some("idle_notification");
        if newest.as_ref().is_none_or(|(t, _)| at >= *t) {
            newest = Some((at, kind));
        }
    }
    let drained = inbox_written(watch, name);
    let config_written = mtime(&watch.team().layout.config_path(&watch.team().name));
    let active = is_active(watch, name);
    match newest {
        Some((at, Some(kind))) if kind == "idle_notification" => {
            // The real client writes the take of what it read after the turn it started can
            // already have ended, so a drain just after the notification is that same turn's.
            if drained.is_some_and(|d| d > at + chrono::Duration::seconds(1)) {
                Turn::Busy("it took its inbox after its last idle_notification".into())
            } else if active == Some(true) && config_written.is_some_and(|c| c > at) {
                Turn::Busy("isActive turned true after its last idle_notification".into())
            } else {
                // isActive may be stale: Claude Code drops a config write whose lock it cannot
                // get within 0.65 s.
                Turn::Idle("idle_notification".into())
            }
        }
        _ if active == Some(true) => Turn::Busy("isActive is true".into()),
        _ if !any_idle && active == Some(false) => Turn::Idle("isActive is false".into()),
        _ => Turn::Busy("no idle_notification since its last work".into()),
    }
}

/// What an `idle_notification` says: its reason, summary or the turn's final text.
pub fn idle_detail(entry: &Entry) -> String {
    let Some(frame) = entry
        .get("text")
        .and_then(Value::as_str)
        .and_then(Frame::decode)
    else {
        return "idle_notification".into();
    };
    let get = |k: &str| {
        frame
            .fields
            .get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let mut parts = vec![format!(
        "idle_notification: {}",
        get("idleReason").unwrap_or("available")
    )];
    if let Some(s) = get("summary") {
        parts.push(format!("summary: {}", first_line(s, 80)));
    }
    if let Some(s) = get("failureReason") {
        parts.push(format!("failure: {}", first_line(s, 80)));
    }
    if let Some(s) = get("result") {
        parts.push(format!("last words: {}", first_line(s, 80)));
    }
    parts.join("; ")
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
}
