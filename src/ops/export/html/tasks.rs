//! The tasks over time: a row per task, coloured by its status from the moment the record can
//! date it, from the members' task tool calls and the lead's `task_assignment` frames (exact
//! times) and the task files' last change (an approximation, marked so in the data and said in
//! the legend).

use std::collections::HashSet;
use std::fmt::Write as _;

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::observe::history::History;
use crate::ops::export::summary::Summary;
use crate::time::{iso_millis, parse_time};

use super::chart::{Axis, PLOT};
use super::data::Embedded;

/// The most tasks drawn (all are in the table).
const ROWS_MAX: usize = 60;

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

/// The CSS class of a status (anything else: `other`).
fn class(status: &str) -> &'static str {
    match status {
        "pending" => "t-pending",
        "in_progress" => "t-in_progress",
        "completed" => "t-completed",
        _ => "t-other",
    }
}

/// The tasks' rows over time; nothing when no task has a dated event.
pub fn tasks(h: &mut String, e: &Embedded, axis: Option<Axis>) {
    let rows: Vec<&TaskLine> = e.tasks.iter().filter(|t| !t.events.is_empty()).collect();
    let Some(axis) = axis.filter(|_| !rows.is_empty()) else {
        if !e.tasks.is_empty() {
            h.push_str(
                "<p class=\"mute\">No task tool call, assignment or file time dates these \
                 tasks: no drawing of them over time.</p>\n",
            );
        }
        return;
    };
    let shown = &rows[..rows.len().min(ROWS_MAX)];
    let (l, _, r, _) = PLOT;
    let row = 14.0;
    let height = shown.len() as f64 * (row + 4.0) + 24.0;
    let _ = writeln!(
        h,
        "<svg viewBox=\"0 0 640 {height}\" role=\"img\" aria-label=\"The tasks over time\">"
    );
    for (k, t) in shown.iter().enumerate() {
        let top = 2.0 + k as f64 * (row + 4.0);
        let _ = writeln!(
            h,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">#{}</text>",
            l - 4.0,
            top + row - 3.0,
            crate::text::html::inline(t.id, 8)
        );
        let mut state: Option<(&str, DateTime<Utc>)> = None;
        let mut claims: Vec<f64> = Vec::new();
        let bar = |h: &mut String, st: &str, from: DateTime<Utc>, to: DateTime<Utc>| {
            let (x0, x1) = (axis.x(from), axis.x(to));
            let _ = writeln!(
                h,
                "<rect class=\"{}\" x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{row}\"/>",
                class(st),
                (x1 - x0).max(0.4)
            );
        };
        for ev in &t.events {
            let next = match (ev.what, ev.value.as_deref()) {
                ("created", _) => Some("pending"),
                ("status", Some(v)) => Some(v),
                _ => None,
            };
            if ev.what == "owner" || ev.what == "assigned" {
                claims.push(axis.x(ev.at));
            }
            if let Some(next) = next {
                if let Some((st, from)) = state {
                    bar(h, st, from, ev.at);
                }
                state = Some((next, ev.at));
            }
        }
        if let Some((st, from)) = state {
            bar(h, st, from, axis.t1);
        }
        // The claims over the bars.
        for x in claims {
            let _ = writeln!(h, "<path class=\"mk-claim\" d=\"M{x:.1} {top:.1}v{row}\"/>");
        }
    }
    axis.labels(h, height - 4.0);
    let _ = writeln!(h, "<path class=\"axis\" d=\"M{l} {}H{r}\"/>", height - 20.0);
    h.push_str(
        "</svg>\n<ul class=\"legend\"><li><span class=\"sw t-pending\"></span>pending</li>\
         <li><span class=\"sw t-in_progress\"></span>in progress</li>\
         <li><span class=\"sw t-completed\"></span>completed</li>\
         <li><span class=\"sw mk-claim\"></span>claimed or assigned</li></ul>\n",
    );
    if rows.len() > shown.len() {
        let _ = writeln!(
            h,
            "<p class=\"mute\">{} more task(s) are in the table below.</p>",
            rows.len() - shown.len()
        );
    }
    h.push_str(
        "<p class=\"mute\">Times UTC. From the members' TaskCreate and TaskUpdate calls and the \
         lead's assignments (exact); a task's creation is the first TaskCreate with its subject. \
         A status no call set is dated by the task file's last change (approximate), a task \
         before its first dated event is not drawn, and who blocks a task is known only as \
         the file says now (the table).</p>\n",
    );
}
