//! The tasks over time, from what a record keeps: the members' calls of Claude Code's task tools
//! in their transcripts (`TaskCreate` with its subject, `TaskUpdate` with the task's id and its
//! new status or owner), each at its entry's time, and each task file's time of last change
//! (its mtime). A task file holds no times of its own, so what those calls do not tell is
//! approximated and said so: a task's creation is the first `TaskCreate` with its subject (else
//! unknown), and a status no call set is dated by the file's last change.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::team::tasks::Board;
use crate::team::transcript::entry::{Content, Line};
use crate::time::parse_time;

/// One call of a task tool.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskCall {
    /// When (its entry's time).
    pub at: DateTime<Utc>,
    /// Who called it.
    pub member: String,
    /// `TaskCreate`'s subject.
    pub subject: Option<String>,
    /// `TaskUpdate`'s task id.
    pub task_id: Option<String>,
    /// The status it set.
    pub status: Option<String>,
    /// The owner it set.
    pub owner: Option<String>,
}

/// The task tools' calls, from the transcripts (each `tool_use` counted once, by its id).
#[derive(Debug, Default)]
pub struct TaskCalls {
    calls: BTreeMap<String, TaskCall>,
}

impl TaskCalls {
    /// Takes one parsed line of `member`'s.
    pub fn feed(&mut self, member: &str, l: &Line) {
        if l.kind != "assistant" {
            return;
        }
        let Some(Content::Blocks(blocks)) = l.message.as_ref().map(|m| &m.content) else {
            return;
        };
        let Some(at) = l.timestamp.as_deref().and_then(parse_time) else {
            return;
        };
        for b in blocks.iter().filter(|b| b.kind == "tool_use") {
            let (Some(name), Some(id), Some(input)) =
                (b.name.as_deref(), b.id.as_deref(), &b.input)
            else {
                continue;
            };
            if name != "TaskCreate" && name != "TaskUpdate" {
                continue;
            }
            let s = |k: &str| match input.get(k) {
                Some(Value::String(v)) => Some(v.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            };
            let call = TaskCall {
                at,
                member: member.to_string(),
                subject: (name == "TaskCreate").then(|| s("subject")).flatten(),
                task_id: (name == "TaskUpdate").then(|| s("taskId")).flatten(),
                status: s("status"),
                owner: s("owner"),
            };
            self.calls.entry(id.to_string()).or_insert(call);
        }
    }

    /// Every call, oldest first.
    pub fn calls(&self) -> Vec<&TaskCall> {
        let mut v: Vec<&TaskCall> = self.calls.values().collect();
        v.sort_by_key(|c| c.at);
        v
    }
}

/// Each task file's time of last change, by task id.
#[derive(Debug, Default, Clone)]
pub struct TaskFiles {
    /// Task id to its file's mtime.
    pub changed: BTreeMap<String, DateTime<Utc>>,
}

impl TaskFiles {
    /// The mtimes of `board`'s task files (one that cannot be read is left out: unknown).
    pub fn of(board: &Board) -> TaskFiles {
        let changed = board
            .tasks
            .iter()
            .filter_map(|t| {
                // The file itself, never what a link in its place points to.
                let m = std::fs::symlink_metadata(&t.path).ok()?;
                Some((t.id.clone(), DateTime::<Utc>::from(m.modified().ok()?)))
            })
            .collect();
        TaskFiles { changed }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn task_tool_calls_once_each_in_time_order() {
        let mut c = TaskCalls::default();
        let call = |id: &str, at: &str, name: &str, input: Value| {
            json!({"type":"assistant","timestamp":at,"message":{"id":"r","content":[
                {"type":"text","text":"x"},
                {"type":"tool_use","id":id,"name":name,"input":input}]}})
            .to_string()
        };
        let lines = [
            call(
                "t2",
                "2026-12-01T00:02:00Z",
                "TaskUpdate",
                json!({"taskId":"1","status":"completed"}),
            ),
            call(
                "t1",
                "2026-12-01T00:01:00Z",
                "TaskCreate",
                json!({"subject":"Fix it","description":"d"}),
            ),
            call(
                "t2",
                "2026-12-01T00:02:00Z",
                "TaskUpdate",
                json!({"taskId":"1","status":"completed"}),
            ),
            call(
                "t3",
                "2026-12-01T00:03:00Z",
                "Bash",
                json!({"command":"ls"}),
            ),
        ];
        for l in &lines {
            c.feed(
                "w",
                &crate::team::transcript::entry::parse(l.as_bytes()).unwrap(),
            );
        }
        let calls = c.calls();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].subject.as_deref(), Some("Fix it"));
        assert_eq!(calls[1].task_id.as_deref(), Some("1"));
        assert_eq!(calls[1].status.as_deref(), Some("completed"));
        assert_eq!(calls[1].member, "w");
    }
}
