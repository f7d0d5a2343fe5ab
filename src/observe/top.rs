//! What `teamctl top` shows, computed from a team's files and testable without a terminal: the
//! members (the lead first), the task board, the message timeline with protocol frames named,
//! the requests waiting for the lead, and the header.
//!
//! Current Claude Code deletes a message from its inbox once it is delivered, so the files alone
//! show only what is still unread. A [`Timeline`] therefore remembers every message seen while
//! it runs (fed the [`Changes`] of a [`crate::observe::watch::Watch`]): a consumed message stays,
//! marked delivered. What teamctl itself sent before (its sent log) seeds it. A [`View`] is one
//! frame's worth of data; it holds absolute times, so the screen can age them without a reread.

use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::observe::reader::{Present, TeamReader};
use crate::observe::spend::{ContextUse, CostSource};
use crate::observe::status::{self, MemberStatus, State, TaskCounts, WaitingDetail};
use crate::observe::watch::{Changes, Event};
use crate::observe::worktree::WorktreeStatus;
use crate::store::Entry;
use crate::team::config::Team;
use crate::team::model::{Frame, first_line};
use crate::team::protocol::{Kind, Request};
use crate::team::sentlog::Sent;
use crate::team::tasks::Board;
use crate::team::transcript::entry::input_summary;
use crate::team::transcript::{Activity, Tokens};
use crate::time::iso_millis;

/// How many messages a [`Timeline`] keeps by default (the oldest go first).
pub const TIMELINE_LEN: usize = 500;

/// Where a message stands, as far as the files show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// In its inbox, not read yet.
    Unread,
    /// In its inbox with `read: true` (Claude Code 2.1.159 and older).
    Read,
    /// Gone from its inbox: its reader took it (current Claude Code).
    Delivered,
}

/// One message of the timeline (`top --json` `messages[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    /// The message's own timestamp (as written).
    pub at: String,
    /// Sender.
    pub from: String,
    /// The inbox's owner.
    pub to: String,
    /// The entry id (`msg_id`, else a content hash).
    pub id: String,
    /// The protocol frame's `type`, when the text is one.
    pub frame: Option<String>,
    /// One line: `[permission_request] Bash: npm test` for a frame, else the summary or the
    /// first line of the text.
    pub preview: String,
    /// The whole text; `null` for a message known only from teamctl's sent log.
    pub text: Option<String>,
    /// Unread, read or delivered.
    pub delivery: Delivery,
    /// `inbox` (seen in an inbox file) or `sent_log` (known only from teamctl's sent log).
    pub source: &'static str,
}

/// The messages seen so far, oldest first, at most a fixed number.
#[derive(Debug, Clone)]
pub struct Timeline {
    max: usize,
    lines: Vec<Message>,
    /// Each line's time, parsed once (`None`: unparseable, sorted first).
    times: Vec<Option<DateTime<Utc>>>,
    last_change: Option<DateTime<Utc>>,
}

impl Timeline {
    /// An empty timeline keeping at most `max` messages.
    pub fn new(max: usize) -> Timeline {
        Timeline {
            max: max.max(1),
            lines: Vec::new(),
            times: Vec::new(),
            last_change: None,
        }
    }

    /// Adds what teamctl's sent log says was sent to `team` (each at most once; a message seen
    /// in an inbox later replaces it).
    pub fn seed_sent(&mut self, team: &str, sent: &[Sent]) {
        for s in sent.iter().filter(|s| s.team == team) {
            if self.position(&s.to, &s.id).is_some() {
                continue;
            }
            let preview = match (&s.answers, &s.summary) {
                (Some(req), _) => format!("[answer] {}", first_line(req, 80)),
                (None, Some(sum)) => first_line(sum, 80),
                (None, None) => String::new(),
            };
            self.insert(Message {
                at: s.at.clone(),
                from: s.from.clone(),
                to: s.to.clone(),
                id: s.id.clone(),
                frame: None,
                preview,
                text: None,
                delivery: Delivery::Delivered,
                source: "sent_log",
            });
        }
    }

    /// Adds what is there now (a watch's first snapshot): as [`Timeline::apply`], except that
    /// it is not a change.
    pub fn load(&mut self, existing: &Changes) {
        // Only the newest `max` can stay: pick them first (a big team's inboxes hold tens of
        // thousands of entries, and inserting each in time order would move the rest).
        let mut found: Vec<(Option<DateTime<Utc>>, &Event)> = existing
            .events
            .iter()
            .filter(|ev| ev.event == "message")
            .map(|ev| {
                let at = ev.message.as_ref().and_then(|m| m.get("timestamp"));
                (at.and_then(Value::as_str).and_then(parse), ev)
            })
            .collect();
        // Stable: equal times keep the file order.
        found.sort_by_key(|(at, _)| *at);
        let skip = found.len().saturating_sub(self.max);
        for (_, ev) in &found[skip..] {
            self.apply_event(ev);
        }
    }

    /// Applies a watch's changes: a new entry is added, a consumed one marked delivered, a read
    /// one marked read. Every change, of any kind, moves the time of the last change.
    pub fn apply(&mut self, changes: &Changes) {
        for ev in &changes.events {
            if let Ok(at) = DateTime::parse_from_rfc3339(&ev.at) {
                let at = at.with_timezone(&Utc);
                if self.last_change.is_none_or(|t| at > t) {
                    self.last_change = Some(at);
                }
            }
            self.apply_event(ev);
        }
    }

    fn apply_event(&mut self, ev: &Event) {
        let (Some(to), Some(id), Some(entry)) = (&ev.to, &ev.id, &ev.message) else {
            return;
        };
        let found = self.position(to, id);
        match (ev.event, found) {
            ("message", None) => {
                if let Some(m) = message(entry, to, id) {
                    self.insert(m);
                }
            }
            // Seen again after it was consumed (written anew), or known from the sent log.
            ("message", Some(i)) => {
                if let Some(m) = message(entry, to, id) {
                    self.lines[i] = m;
                }
            }
            ("consumed", Some(i)) => self.lines[i].delivery = Delivery::Delivered,
            ("read", Some(i)) => self.lines[i].delivery = Delivery::Read,
            _ => {}
        }
    }

    fn position(&self, to: &str, id: &str) -> Option<usize> {
        self.lines.iter().rposition(|m| m.id == id && m.to == to)
    }

    /// Inserts in time order (after every message of the same time), then drops the oldest
    /// beyond the limit.
    fn insert(&mut self, m: Message) {
        let at = parse(&m.at);
        if self.lines.len() >= self.max && self.times.first().is_some_and(|first| at < *first) {
            return;
        }
        let i = self.times.partition_point(|t| *t <= at);
        self.lines.insert(i, m);
        self.times.insert(i, at);
        if self.lines.len() > self.max {
            let extra = self.lines.len() - self.max;
            self.lines.drain(..extra);
            self.times.drain(..extra);
        }
    }

    /// Every message, oldest first.
    pub fn messages(&self) -> &[Message] {
        &self.lines
    }

    /// The messages to `member` (its inbox, including what it already took), oldest first.
    pub fn inbox_of<'a>(&'a self, member: &'a str) -> impl Iterator<Item = &'a Message> + 'a {
        self.lines.iter().filter(move |m| m.to == member)
    }

    /// When teamctl last saw a change in the team's files (`None` before the first).
    pub fn last_change(&self) -> Option<DateTime<Utc>> {
        self.last_change
    }
}

fn parse(at: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(at)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The timeline's line for an inbox entry; `None` when `from`, `text` or `timestamp` is not a
/// string (Claude Code skips such entries too).
fn message(entry: &Entry, to: &str, id: &str) -> Option<Message> {
    let s = |k: &str| entry.get(k).and_then(Value::as_str);
    let (from, text, at) = (s("from")?, s("text")?, s("timestamp")?);
    let frame = Frame::decode(text);
    let preview = match (&frame, s("summary")) {
        (Some(f), _) => frame_summary(f),
        (None, Some(sum)) if !sum.trim().is_empty() => first_line(sum, 80),
        (None, _) => first_line(text, 80),
    };
    Some(Message {
        at: at.to_string(),
        from: from.to_string(),
        to: to.to_string(),
        id: id.to_string(),
        frame: frame.map(|f| f.frame_type),
        preview,
        text: Some(text.to_string()),
        delivery: if entry.get("read") == Some(&Value::Bool(true)) {
            Delivery::Read
        } else {
            Delivery::Unread
        },
        source: "inbox",
    })
}

/// A frame in one line, named: `[permission_request] Bash: npm test`,
/// `[idle_notification] available`, `[task_assignment] #3 Fix the race`.
pub fn frame_summary(f: &Frame) -> String {
    let s = |k: &str| f.fields.get(k).and_then(Value::as_str);
    let detail = match f.frame_type.as_str() {
        "permission_request" => {
            let tool = s("tool_name").unwrap_or("?");
            match f
                .fields
                .get("input")
                .and_then(|i| input_summary(tool, i))
                .or(s("description").map(String::from))
            {
                Some(what) => format!("{tool}: {what}"),
                None => tool.to_string(),
            }
        }
        "sandbox_permission_request" => f
            .fields
            .get("hostPattern")
            .and_then(|h| h.get("host"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        "plan_approval_request" => s("planFilePath").unwrap_or("").to_string(),
        "permission_response" => match s("subtype") {
            Some("success") => "approved".to_string(),
            _ => format!("denied: {}", s("error").unwrap_or("")),
        },
        "plan_approval_response" => match f.fields.get("approved").and_then(Value::as_bool) {
            Some(true) => "approved".to_string(),
            _ => format!("rejected: {}", s("feedback").unwrap_or("")),
        },
        "sandbox_permission_response" => {
            let allow = f.fields.get("allow").and_then(Value::as_bool) == Some(true);
            format!(
                "{} {}",
                if allow { "allowed" } else { "denied" },
                s("host").unwrap_or("")
            )
        }
        "idle_notification" => {
            let why = s("idleReason").unwrap_or("idle");
            match s("summary") {
                Some(sum) => format!("{why}: {sum}"),
                None => why.to_string(),
            }
        }
        "task_assignment" | "task_completed" => {
            let id = f.fields.get("taskId").map(|v| match v {
                Value::String(s) => s.clone(),
                v => v.to_string(),
            });
            let subject = s("subject").or(s("taskSubject")).unwrap_or("");
            format!("#{} {subject}", id.unwrap_or_default())
        }
        "mode_set_request" => s("mode").unwrap_or("").to_string(),
        _ => s("reason").or(s("message")).unwrap_or("").to_string(),
    };
    let detail = first_line(&detail, 80);
    if detail.is_empty() {
        format!("[{}]", f.frame_type)
    } else {
        format!("[{}] {detail}", f.frame_type)
    }
}

/// A member's row (`top --json` `members[]`): what `status` knows, transcripts included.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberRow {
    /// Name.
    pub name: String,
    /// Whether it is the team's lead.
    pub lead: bool,
    /// Its palette colour, when `config.json` gives one.
    pub color: Option<String>,
    /// Active, idle, terminated or unknown (as `status`).
    pub state: State,
    /// Why it is not progressing (as `status`): `permission` (a request of its awaits the lead:
    /// a tool or a sandbox host), `plan` (its plan awaits approval), `blocked` (every open task
    /// it owns is blocked), `stalled` (inside a turn, its transcript quiet for the stall
    /// threshold); `null` otherwise.
    pub waiting: Option<String>,
    /// What more is known about it (`status --json`'s `waiting_detail`).
    pub waiting_detail: Option<WaitingDetail>,
    /// What it is doing, in one line: `Bash: npm test` (a tool call without its result yet),
    /// `text: All done` (the last text it wrote); `null` without a transcript.
    pub doing: Option<String>,
    /// The same, exact (as `status` `activity`).
    pub activity: Option<Activity>,
    /// What it has cost in USD (as `status`: `null` without a transcript, or for a model
    /// without a price).
    pub cost_usd: Option<f64>,
    /// `claude_code` or `computed` (`null` with the cost).
    pub cost_source: Option<CostSource>,
    /// Tokens by kind from its transcripts (`null` without one).
    pub tokens: Option<Tokens>,
    /// Unread entries in its inbox.
    pub unread: usize,
    /// Tasks it owns that are in progress.
    pub tasks_in_progress: usize,
    /// Tasks it owns that are not completed.
    pub tasks_owned: usize,
    /// When its last event happened.
    pub last_event_at: Option<String>,
    /// What that event was (as `status`).
    pub last_event_kind: Option<String>,
    /// Whether its process or pane is alive, where that can be checked.
    pub process_alive: Option<bool>,
    /// Whether it is listed in `config.json`.
    pub in_config: bool,
    /// How full its context is (as `status`).
    pub context: Option<ContextUse>,
    /// Its own git worktree (as `status`).
    pub worktree: Option<WorktreeStatus>,
}

/// A task on the board (`top --json` `tasks.*[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Card {
    /// Task id.
    pub id: String,
    /// Subject.
    pub subject: String,
    /// Owner, if any.
    pub owner: Option<String>,
    /// `activeForm`, if any.
    pub active_form: Option<String>,
    /// The open tasks blocking it (empty when it is not blocked).
    pub blocked_by: Vec<String>,
}

/// The task board, by column (internal tasks left out).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Columns {
    /// Status pending, in id order.
    pub pending: Vec<Card>,
    /// Status in_progress.
    pub in_progress: Vec<Card>,
    /// Status completed.
    pub completed: Vec<Card>,
    /// The counts (as `status`).
    pub counts: TaskCounts,
}

/// A request waiting for the lead (`top --json` `requests[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRow {
    /// Its id.
    pub request_id: String,
    /// permission, plan_approval or sandbox_permission.
    pub kind: Kind,
    /// The teammate asking.
    pub from: String,
    /// When it asked.
    pub at: String,
    /// One line: `Bash: npm test`, the plan file, the host.
    pub summary: String,
    /// The request in full.
    pub request: Request,
}

/// The header (`top --json` `team`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Header {
    /// Team name.
    pub name: String,
    /// `description`, if any.
    pub description: Option<String>,
    /// The lead's member name.
    pub lead: Option<String>,
    /// Whether the lead's process runs (`null` when none is recorded).
    pub lead_alive: Option<bool>,
    /// Whether teamctl leads the team (its answers and messages as team-lead count).
    pub teamctl_leads: bool,
    /// `createdAt`, RFC 3339.
    pub created_at: Option<String>,
    /// The team's total cost in USD (as `status` `totals`: `null` without transcripts, or when
    /// one cost is unknown).
    pub cost_usd: Option<f64>,
    /// The team's tokens by kind (`null` without transcripts).
    pub tokens: Option<Tokens>,
    /// The newest of: the last change teamctl saw in the files, the newest event in them.
    pub last_change_at: Option<String>,
}

/// One frame's worth of data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct View {
    /// The header.
    pub team: Header,
    /// The lead first, then the teammates in `config.json` order, then those with only an
    /// inbox.
    pub members: Vec<MemberRow>,
    /// The task board.
    pub tasks: Columns,
    /// The newest messages, oldest first.
    pub messages: Vec<Message>,
    /// Requests waiting for the lead.
    pub requests: Vec<RequestRow>,
    /// Files that could not be read (reported, left as they are).
    pub warnings: Vec<String>,
}

/// Reads `reader`'s team again at `now` (only what changed is parsed) and computes the view,
/// with at most `messages` of `timeline`'s messages.
///
/// # Errors
/// When the team can no longer be opened; unreadable files, and folders that cannot be listed
/// (the inboxes, the tasks), become warnings, as with `status`.
pub fn read(
    reader: &mut TeamReader,
    timeline: &Timeline,
    now: DateTime<Utc>,
    messages: usize,
) -> Result<View> {
    let present = reader.read(now)?;
    Ok(view(
        &present,
        reader.team(),
        reader.board(),
        timeline,
        messages,
    ))
}

/// The view of what a [`TeamReader`] read (`present`, of `team`, whose task board is `board`),
/// with at most `messages` of `timeline`'s messages.
pub fn view(
    present: &Present,
    team: &Team,
    board: &Board,
    timeline: &Timeline,
    messages: usize,
) -> View {
    let st = &present.status;
    let lead_name = team
        .config
        .as_ref()
        .and_then(|c| c.lead())
        .map(|m| m.name.clone());
    let requests: Vec<RequestRow> = present
        .requests
        .iter()
        .map(|r| RequestRow {
            request_id: r.request_id.clone(),
            kind: r.kind,
            from: r.from.clone(),
            at: r.at.clone(),
            summary: request_summary(r),
            request: r.clone(),
        })
        .collect();
    let mut members: Vec<MemberRow> = st
        .members
        .iter()
        .map(|m| row(m, lead_name.as_deref() == Some(m.name.as_str())))
        .collect();
    // The lead first; the rest keep their order.
    members.sort_by_key(|m| !m.lead);
    let last_change_at = [
        timeline.last_change(),
        st.team.last_activity_at.as_deref().and_then(parse),
    ]
    .into_iter()
    .flatten()
    .max()
    .map(iso_millis);
    let all = timeline.messages();
    View {
        team: Header {
            name: st.team.name.clone(),
            description: st.team.description.clone(),
            lead: lead_name,
            lead_alive: st.team.lead_alive,
            teamctl_leads: team.teamctl_leads(),
            created_at: st.team.created_at.clone(),
            cost_usd: st.totals.cost_usd,
            tokens: st.totals.tokens,
            last_change_at,
        },
        members,
        tasks: columns(board),
        messages: all[all.len().saturating_sub(messages)..].to_vec(),
        requests,
        warnings: st.warnings.clone(),
    }
}

/// The task board as three columns with their counts.
fn columns(board: &Board) -> Columns {
    let mut tasks = Columns {
        counts: status::task_counts(board),
        ..Columns::default()
    };
    for t in board.tasks.iter().filter(|t| !t.is_internal()) {
        let v = board.view(t);
        let card = Card {
            id: v.id,
            subject: v.subject,
            owner: v.owner,
            active_form: v.active_form,
            blocked_by: v.open_blockers,
        };
        match t.status.as_str() {
            "pending" => tasks.pending.push(card),
            "in_progress" => tasks.in_progress.push(card),
            _ => tasks.completed.push(card),
        }
    }
    tasks
}

fn row(m: &MemberStatus, lead: bool) -> MemberRow {
    MemberRow {
        name: m.name.clone(),
        lead,
        color: m.color.clone(),
        state: m.state,
        waiting: m.waiting.map(|w| w.to_string()),
        waiting_detail: m.waiting_detail.clone(),
        doing: m.activity.as_ref().map(doing),
        activity: m.activity.clone(),
        cost_usd: m.cost_usd,
        cost_source: m.cost_source,
        tokens: m.tokens,
        unread: m.unread,
        tasks_in_progress: m.tasks_in_progress,
        tasks_owned: m.tasks_owned,
        last_event_at: m.last_event_at.clone(),
        last_event_kind: m.last_event_kind.clone(),
        process_alive: m.process_alive,
        in_config: m.in_config,
        context: m.context,
        worktree: m.worktree.clone(),
    }
}

/// An activity in one line: `Bash: npm test`, `text: All done`.
pub fn doing(a: &Activity) -> String {
    match &a.tool {
        Some(t) => format!("{t}: {}", first_line(&a.summary, 160)),
        None => format!("text: {}", first_line(&a.summary, 160)),
    }
}

/// `Bash: npm test`, `plan ~/.claude/plans/x.md`, `host registry.npmjs.org`.
fn request_summary(r: &Request) -> String {
    match r.kind {
        Kind::Permission => {
            let tool = r.tool_name.as_deref().unwrap_or("?");
            match r
                .input
                .as_ref()
                .and_then(|i| input_summary(tool, i))
                .or(r.description.clone())
            {
                Some(what) => format!("{tool}: {what}"),
                None => tool.to_string(),
            }
        }
        Kind::PlanApproval => format!("plan {}", r.plan_file_path.as_deref().unwrap_or("?")),
        Kind::SandboxPermission => format!("host {}", r.host.as_deref().unwrap_or("?")),
    }
}

impl View {
    /// The next time the view would change with no file changing: the first moment an active
    /// member turns idle (its last event grows older than `idle_after`).
    pub fn next_change(&self, idle_after: Duration) -> Option<DateTime<Utc>> {
        let after = chrono::Duration::from_std(idle_after).ok()?;
        self.members
            .iter()
            .filter(|m| m.state == State::Active)
            .filter_map(|m| Some(parse(m.last_event_at.as_deref()?)? + after))
            .min()
    }

    /// The row of member `name`.
    pub fn member(&self, name: &str) -> Option<&MemberRow> {
        self.members.iter().find(|m| m.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::reader::{Options, Records};
    use crate::store::paths::{Layout, TeamName};
    use serde_json::json;

    fn changes(events: Vec<(&'static str, &str, Value)>) -> Changes {
        Changes {
            events: events
                .into_iter()
                .map(|(kind, to, entry)| {
                    let entry: Entry = serde_json::from_value(entry).unwrap();
                    Event {
                        to: Some(to.into()),
                        from: entry.get("from").and_then(Value::as_str).map(String::from),
                        id: Some(crate::store::id::entry_id(&entry)),
                        message: Some(entry),
                        ..Event::new(kind, "t", "2026-11-29T10:00:05.000Z")
                    }
                })
                .collect(),
            warnings: Vec::new(),
        }
    }

    fn msg(from: &str, text: &str, at: &str, id: &str) -> Value {
        json!({"from": from, "text": text, "timestamp": at, "msg_id": id, "read": false})
    }

    #[test]
    fn frames_are_named_in_one_line() {
        let f = Frame::decode(
            &json!({"type": "permission_request", "request_id": "perm-1-a", "agent_id": "alice",
                    "tool_name": "Bash", "tool_use_id": "t", "description": "Run the tests",
                    "input": {"command": "npm test\nrm -rf /"}})
            .to_string(),
        )
        .unwrap();
        assert_eq!(frame_summary(&f), "[permission_request] Bash: npm test");
        let idle = Frame::decode(
            r#"{"type":"idle_notification","from":"a","timestamp":"t","idleReason":"available"}"#,
        )
        .unwrap();
        assert_eq!(frame_summary(&idle), "[idle_notification] available");
        let task = Frame::decode(
            r#"{"type":"task_assignment","taskId":"3","subject":"Fix it","description":"d","assignedBy":"x","timestamp":"t"}"#,
        )
        .unwrap();
        assert_eq!(frame_summary(&task), "[task_assignment] #3 Fix it");
        let shut =
            Frame::decode(r#"{"type":"shutdown_approved","requestId":"r","from":"a"}"#).unwrap();
        assert_eq!(frame_summary(&shut), "[shutdown_approved]");
    }

    #[test]
    fn the_timeline_keeps_consumed_messages_in_time_order() {
        let mut t = Timeline::new(3);
        t.apply(&changes(vec![
            (
                "message",
                "bob",
                msg("alice", "second", "2026-11-29T10:00:02.000Z", "b"),
            ),
            (
                "message",
                "alice",
                msg("bob", "first", "2026-11-29T10:00:01.000Z", "a"),
            ),
        ]));
        let texts: Vec<&str> = t.messages().iter().map(|m| m.preview.as_str()).collect();
        assert_eq!(texts, ["first", "second"]);
        t.apply(&changes(vec![(
            "consumed",
            "bob",
            msg("alice", "second", "2026-11-29T10:00:02.000Z", "b"),
        )]));
        assert_eq!(t.messages()[1].delivery, Delivery::Delivered);
        assert_eq!(t.messages()[0].delivery, Delivery::Unread);
        assert_eq!(
            t.last_change().map(iso_millis).as_deref(),
            Some("2026-11-29T10:00:05.000Z")
        );
        // Past the limit the oldest goes.
        for (i, at) in ["03", "04"].iter().enumerate() {
            t.apply(&changes(vec![(
                "message",
                "bob",
                msg(
                    "alice",
                    &format!("n{i}"),
                    &format!("2026-11-29T10:00:{at}.000Z"),
                    &format!("n{i}"),
                ),
            )]));
        }
        let texts: Vec<&str> = t.messages().iter().map(|m| m.preview.as_str()).collect();
        assert_eq!(texts, ["second", "n0", "n1"]);
        assert_eq!(t.inbox_of("bob").count(), 3);
    }

    #[test]
    fn loading_keeps_the_newest() {
        let mut t = Timeline::new(3);
        let evs: Vec<(&'static str, &str, Value)> = [7, 2, 9, 4, 8, 1]
            .iter()
            .map(|n| {
                let at = format!("2026-11-29T10:00:0{n}.000Z");
                (
                    "message",
                    "bob",
                    msg("alice", &format!("m{n}"), &at, &format!("id{n}")),
                )
            })
            .collect();
        t.load(&changes(evs));
        let texts: Vec<&str> = t.messages().iter().map(|m| m.preview.as_str()).collect();
        assert_eq!(texts, ["m7", "m8", "m9"]);
        assert_eq!(t.last_change(), None);
        // Older than everything kept, at capacity: not kept.
        t.apply(&changes(vec![(
            "message",
            "bob",
            msg("alice", "old", "2026-11-29T09:00:00.000Z", "old"),
        )]));
        assert_eq!(t.messages()[0].preview, "m7");
    }

    #[test]
    fn the_sent_log_seeds_what_the_inbox_no_longer_holds() {
        let mut t = Timeline::new(10);
        let sent = Sent {
            id: "x".into(),
            team: "t".into(),
            to: "alice".into(),
            from: "user".into(),
            at: "2026-11-29T09:00:00.000Z".into(),
            summary: Some("please look".into()),
            inbox: "i".into(),
            idempotency_key: None,
            answers: None,
            moving: None,
        };
        let other = Sent {
            team: "other".into(),
            id: "y".into(),
            ..sent.clone()
        };
        t.seed_sent("t", &[sent, other]);
        assert_eq!(t.messages().len(), 1);
        assert_eq!(t.messages()[0].source, "sent_log");
        // Seen in the inbox: the inbox's version wins.
        t.apply(&changes(vec![(
            "message",
            "alice",
            msg("user", "please look at it", "2026-11-29T09:00:00.000Z", "x"),
        )]));
        assert_eq!(t.messages().len(), 1);
        assert_eq!(t.messages()[0].source, "inbox");
        assert_eq!(t.messages()[0].text.as_deref(), Some("please look at it"));
    }

    #[test]
    fn the_example_team_as_a_view() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/claude");
        let layout = Layout::new(&root);
        let team = Team::open(&layout, &TeamName::parse("demo-team").unwrap(), None).unwrap();
        let now = DateTime::parse_from_rfc3339("2025-11-29T19:36:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let (_, existing) = crate::observe::watch::Watch::new(team.clone(), None, now);
        let mut timeline = Timeline::new(TIMELINE_LEN);
        timeline.load(&existing);
        let opts = Options {
            probe: false,
            ..Options::default()
        };
        let mut reader = TeamReader::of(team, Records::default(), opts);
        let v = read(&mut reader, &timeline, now, 50).unwrap();
        let names: Vec<&str> = v.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["team-lead", "researcher", "tester"]);
        assert!(v.members[0].lead);
        assert_eq!(v.tasks.in_progress[0].owner.as_deref(), Some("researcher"));
        assert_eq!(v.tasks.pending[0].blocked_by, ["1"]);
        assert_eq!(v.messages.len(), 3);
        assert_eq!(
            v.messages[2].preview,
            "[shutdown_request] All tasks are done"
        );
        assert_eq!(v.team.lead.as_deref(), Some("team-lead"));
        assert!(v.requests.is_empty());
    }
}
