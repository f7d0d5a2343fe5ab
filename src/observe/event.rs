//! The vocabulary of following a team: one [`Event`] per change (`watch --json`'s lines), its
//! [`Kind`], and the [`Filter`] a follower picks events with.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::observe::need::Need;
use crate::observe::waiting::{Waiting, WaitingDetail};
use crate::store::Entry;
use crate::team::mailbox::TypeFilter;
use crate::team::model::Frame;

/// One change. Every key is always present (`null` where it does not apply).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// Always 1.
    pub schema_version: u32,
    /// What happened.
    pub event: Kind,
    /// Team.
    pub team: String,
    /// When teamctl saw the change.
    pub at: String,
    /// The inbox's owner (message events).
    pub to: Option<String>,
    /// The message's sender (message events).
    pub from: Option<String>,
    /// The message id or task id.
    pub id: Option<String>,
    /// The member (member events).
    pub member: Option<String>,
    /// The inbox entry (message events).
    pub message: Option<Entry>,
    /// The task as it is now, or as it was when deleted (task events).
    pub task: Option<Entry>,
    /// The member's entry in `config.json` (member events).
    pub member_entry: Option<Entry>,
    /// For `*_updated`: each changed key with its old and new value (`null` when absent).
    pub changes: Option<Map<String, Value>>,
    /// For `waiting`: why the member does not move now (`null`: it moves again), as `status`
    /// says it (`rate_limited`, `stalled`, `dead`, …).
    pub waiting: Option<Waiting>,
    /// For `waiting`: what more is known (`status --json`'s `waiting_detail`).
    pub waiting_detail: Option<WaitingDetail>,
    /// For `needs_human`: why a person is needed, and what to do (`cleared`: no longer).
    pub need: Option<Need>,
}

impl Event {
    /// An event of kind `event` in `team`, seen `at`, every other key empty.
    pub fn new(event: Kind, team: &str, at: &str) -> Event {
        Event {
            schema_version: 1,
            event,
            team: team.to_string(),
            at: at.to_string(),
            to: None,
            from: None,
            id: None,
            member: None,
            message: None,
            task: None,
            member_entry: None,
            changes: None,
            waiting: None,
            waiting_detail: None,
            need: None,
        }
    }

    /// A `needs_human` event.
    pub fn needs_human(team: &str, at: &str, need: Need) -> Event {
        Event {
            member: need.member.clone(),
            need: Some(need),
            ..Event::new(Kind::NeedsHuman, team, at)
        }
    }

    /// A `waiting` event: `member` now waits for `waiting` (`None`: no longer).
    pub fn waiting(
        team: &str,
        at: &str,
        member: &str,
        waiting: Option<Waiting>,
        detail: Option<WaitingDetail>,
    ) -> Event {
        Event {
            member: Some(member.to_string()),
            waiting,
            waiting_detail: detail,
            ..Event::new(Kind::Waiting, team, at)
        }
    }
}

/// What an [`Event`] says happened (`watch --json`'s `event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// An entry arrived in an inbox.
    Message,
    /// An entry left an inbox (current Claude Code deletes what it delivers).
    Consumed,
    /// An entry was marked read (Claude Code up to 2.1.159).
    Read,
    /// A task file appeared.
    TaskCreated,
    /// A task changed.
    TaskUpdated,
    /// A task file went.
    TaskDeleted,
    /// A member appeared in `config.json`.
    MemberJoined,
    /// A member left `config.json`.
    MemberLeft,
    /// A member's entry in `config.json` changed.
    MemberUpdated,
    /// A member's waiting reason changed.
    Waiting,
    /// A person became needed, or no longer is.
    NeedsHuman,
}

impl Kind {
    /// Every kind, in the order `watch --help` lists them.
    pub const ALL: [Kind; 11] = [
        Kind::Message,
        Kind::Consumed,
        Kind::Read,
        Kind::TaskCreated,
        Kind::TaskUpdated,
        Kind::TaskDeleted,
        Kind::MemberJoined,
        Kind::MemberLeft,
        Kind::MemberUpdated,
        Kind::Waiting,
        Kind::NeedsHuman,
    ];

    /// Its name, as `watch --json` writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Message => "message",
            Kind::Consumed => "consumed",
            Kind::Read => "read",
            Kind::TaskCreated => "task_created",
            Kind::TaskUpdated => "task_updated",
            Kind::TaskDeleted => "task_deleted",
            Kind::MemberJoined => "member_joined",
            Kind::MemberLeft => "member_left",
            Kind::MemberUpdated => "member_updated",
            Kind::Waiting => "waiting",
            Kind::NeedsHuman => "needs_human",
        }
    }

    /// The kind named `name`, if there is one.
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    /// Every kind's name, for validating filters.
    pub fn names() -> [&'static str; 11] {
        Kind::ALL.map(Kind::as_str)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which events a follower wants (`watch --event/--from/--type/--task-status`). Each part that
/// is given must hold; an empty one holds for every event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Only these kinds.
    pub events: Vec<Kind>,
    /// Only message events from this sender.
    pub from: Option<String>,
    /// Only message events of one of these types (a plain message, any frame, a frame type).
    pub types: Vec<TypeFilter>,
    /// Only task events that bring a task to this status: a task created with it, or updated
    /// to it (an update that leaves the status as it was does not count).
    pub task_status: Option<String>,
}

impl Filter {
    /// Whether `e` is wanted.
    pub fn matches(&self, e: &Event) -> bool {
        if !self.events.is_empty() && !self.events.contains(&e.event) {
            return false;
        }
        if self.from.is_some() && e.from != self.from {
            return false;
        }
        if !self.types.is_empty() {
            let Some(msg) = &e.message else { return false };
            let text = msg.get("text").and_then(Value::as_str).unwrap_or("");
            let decoded = Frame::decode(text);
            let ok = self.types.iter().any(|f| match f {
                TypeFilter::Message => decoded.is_none(),
                TypeFilter::Protocol => decoded.is_some(),
                TypeFilter::Frame(t) => decoded.as_ref().is_some_and(|d| &d.frame_type == t),
                TypeFilter::MessageOrIdle => decoded
                    .as_ref()
                    .is_none_or(|d| d.frame_type == "idle_notification"),
            });
            if !ok {
                return false;
            }
        }
        if let Some(want) = &self.task_status {
            let now = e
                .task
                .as_ref()
                .and_then(|t| t.get("status"))
                .and_then(Value::as_str);
            let ok = match e.event {
                Kind::TaskCreated => now == Some(want.as_str()),
                Kind::TaskUpdated => e
                    .changes
                    .as_ref()
                    .and_then(|c| c.get("status"))
                    .is_some_and(|c| c.get("to").and_then(Value::as_str) == Some(want.as_str())),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn task_event(kind: Kind, status: &str, changes: Option<Value>) -> Event {
        let mut e = Event::new(kind, "t", "now");
        e.task = json!({"id":"1","status":status}).as_object().cloned();
        e.changes = changes.and_then(|c| c.as_object().cloned());
        e
    }

    #[test]
    fn a_task_status_filter_keeps_what_brings_a_task_to_it() {
        let f = Filter {
            task_status: Some("completed".into()),
            ..Filter::default()
        };
        let done = json!({"status":{"from":"in_progress","to":"completed"}});
        let renamed = json!({"subject":{"from":"a","to":"b"}});
        assert!(f.matches(&task_event(Kind::TaskUpdated, "completed", Some(done))));
        assert!(!f.matches(&task_event(Kind::TaskUpdated, "completed", Some(renamed))));
        assert!(f.matches(&task_event(Kind::TaskCreated, "completed", None)));
        assert!(!f.matches(&task_event(Kind::TaskCreated, "pending", None)));
        assert!(!f.matches(&task_event(Kind::TaskDeleted, "completed", None)));
        assert!(!f.matches(&Event::new(Kind::Message, "t", "now")));
        assert!(Filter::default().matches(&Event::new(Kind::Message, "t", "now")));
    }

    #[test]
    fn a_kind_is_named_as_watch_json_writes_it() {
        for k in Kind::ALL {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
            assert_eq!(Kind::parse(k.as_str()), Some(k));
        }
        assert_eq!(Kind::parse("nothing"), None);
    }
}
