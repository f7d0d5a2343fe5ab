//! The tasks over time as data (the embedded JSON's `tasks[]`): each task's dated events, from the
//! members' task tool calls and the lead's `task_assignment` frames (exact times) and the task
//! files' last change (an approximation, marked so). [`super::tasks`] draws them.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::observe::history::History;
use crate::ops::export::summary::Summary;
use crate::time::{iso_millis, parse_time};

/// One task over time (the embedded JSON's `tasks[]`).
#[derive(Debug, Serialize)]
pub struct TaskLine<'a> {
    /// Its id.
    pub id: &'a str,
    /// Its status as the record was taken.
    pub status: &'a str,
    /// Ids that block it (the file's current list: when it was set is not known).
    pub blocked_by: &'a [String],
    /// What happened to it, oldest first.
    pub events: Vec<TaskEvent>,
}

/// One thing that happened to a task.
#[derive(Debug, Serialize)]
pub struct TaskEvent {
    /// When.
    #[serde(skip)]
    pub at: DateTime<Utc>,
    /// When (RFC 3339 UTC).
    pub time: String,
    /// `created`, `status`, `owner` or `assigned`.
    pub what: &'static str,
    /// The status or owner it set.
    pub value: Option<String>,
    /// Who did it (a member's transcript, or the frame's sender).
    pub by: Option<String>,
    /// `true` when the time is the task file's last change, not the event's own.
    pub approximate: bool,
}

impl TaskEvent {
    fn new(at: DateTime<Utc>, what: &'static str, value: Option<String>, by: Option<&str>) -> Self {
        TaskEvent {
            at,
            time: iso_millis(at),
            what,
            value,
            by: by.map(String::from),
            approximate: false,
        }
    }
}

/// Each task of `s` over time, from `h`'s task calls and file times and `s`'s frames.
pub fn lines<'a>(s: &'a Summary, h: &History) -> Vec<TaskLine<'a>> {
    let calls = h.tasks.calls();
    let mut created_used: HashSet<usize> = HashSet::new();
    s.tasks
        .iter()
        .map(|t| {
            let mut events = Vec::new();
            // Its creation: the first unused TaskCreate with its subject.
            if let Some((k, c)) = calls.iter().enumerate().find(|(k, c)| {
                c.subject.as_deref() == Some(t.subject.as_str()) && !created_used.contains(k)
            }) {
                created_used.insert(k);
                events.push(TaskEvent::new(c.at, "created", None, Some(&c.member)));
            }
            for c in calls.iter().filter(|c| c.task_id.as_deref() == Some(&t.id)) {
                if let Some(st) = &c.status {
                    events.push(TaskEvent::new(
                        c.at,
                        "status",
                        Some(st.clone()),
                        Some(&c.member),
                    ));
                }
                if let Some(o) = &c.owner {
                    events.push(TaskEvent::new(
                        c.at,
                        "owner",
                        Some(o.clone()),
                        Some(&c.member),
                    ));
                }
            }
            for m in s.messages.iter().filter(|m| {
                m.frame_type.as_deref() == Some("task_assignment")
                    && m.text
                        .as_deref()
                        .is_some_and(|x| frame_task_id(x) == Some(t.id.clone()))
            }) {
                if let Some(at) = m.at.as_deref().and_then(parse_time) {
                    events.push(TaskEvent::new(
                        at,
                        "assigned",
                        Some(m.to.clone()),
                        Some(&m.from),
                    ));
                }
            }
            events.sort_by_key(|e| e.at);
            let last_status = events
                .iter()
                .rev()
                .find(|e| e.what == "status")
                .and_then(|e| e.value.as_deref());
            if last_status != Some(t.status.as_str())
                && let Some(at) = h.task_files.changed.get(&t.id)
            {
                let mut e = TaskEvent::new(*at, "status", Some(t.status.clone()), None);
                e.approximate = true;
                events.push(e);
                events.sort_by_key(|e| e.at);
            }
            TaskLine {
                id: &t.id,
                status: &t.status,
                blocked_by: &t.blocked_by,
                events,
            }
        })
        .collect()
}

/// `taskId` of a `task_assignment` frame's text.
fn frame_task_id(text: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    match v.get("taskId")? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}
