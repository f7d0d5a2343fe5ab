//! The tasks over time, drawn: a row per task, coloured by its status from the moment the
//! record can date it ([`super::task_lines`]: exact times from task tool calls and assignments,
//! else the task file's last change, marked approximate in the data and said in the legend).

use std::fmt::Write as _;

use chrono::{DateTime, Utc};

use super::chart::{Axis, PLOT};
use super::data::Embedded;
use super::task_lines::TaskLine;

/// The most tasks drawn (all are in the table).
const ROWS_MAX: usize = 60;

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
