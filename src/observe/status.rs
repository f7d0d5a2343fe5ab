//! Who is working, idle or gone: a team's state read from its files (no locks), plus the
//! process checks that can be made without guessing.
//!
//! A member's state, from the newest signal the files give (every signal is also reported raw):
//! - `terminated`: a `shutdown_approved` frame from the member is in an inbox of the team (older
//!   builds: `shutdown_response` with `approve: true`), or the member left `config.json` while
//!   its inbox remains;
//! - `active`: its last event is younger than the idle threshold: its newest message (an
//!   `idle_notification` too) in any inbox, its inbox drained (no unread entry, last written
//!   then), or `isActive: true` in `config.json`;
//! - `idle`: the last event is older than that;
//! - `unknown`: no signal at all.
//!
//! With the transcripts read ([`Work`], see [`crate::observe::spend`]), each member also gets its
//! tokens, cost, model and current activity, and the reason it is waiting, the first that holds:
//! - `permission`: a tool or sandbox permission request of its waits unanswered in the lead's
//!   inbox;
//! - `plan`: a plan approval request of its waits there;
//! - `blocked`: it owns open tasks and every one of them is blocked by another open task;
//! - `stalled`: its newest session is inside a turn (its last entry is not an ended assistant
//!   turn) but its transcripts have not grown for the stall threshold (and it is neither
//!   terminated nor known dead).

use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, SystemTime};

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::host::proc::pid_alive;
use crate::host::tmux::Liveness;
use crate::observe::spend::{ContextUse, CostSource, MemberSpend, TeamSpend};
use crate::observe::worktree::WorktreeStatus;
use crate::store::dir::{Info, Kind, Loc};
use crate::store::light::{LightEntry, LightFrame};
use crate::store::paths::{MemberName, RESERVED};
use crate::team::config::{Member, Team};
use crate::team::generation::{Format, Ours};
use crate::team::protocol::{Kind as RequestKind, Request};
use crate::team::tasks::{Board, Task};
use crate::team::transcript::{Activity, Tokens};

/// A member's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Recent activity.
    Active,
    /// Quiet for longer than the idle threshold.
    Idle,
    /// Shut down, or left the team.
    Terminated,
    /// No signal.
    Unknown,
}

impl fmt::Display for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            State::Active => "active",
            State::Idle => "idle",
            State::Terminated => "terminated",
            State::Unknown => "unknown",
        })
    }
}

/// Why a member is not progressing (`status --json` `waiting`; see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Waiting {
    /// A permission request of its waits for an answer.
    Permission,
    /// Its plan waits for approval.
    Plan,
    /// Every task it owns is blocked.
    Blocked,
    /// Inside a turn, but its transcript has not grown for the stall threshold.
    Stalled,
    /// Its last API call was refused for its rate (429) or usage window.
    RateLimited,
    /// The API was overloaded (529).
    Overloaded,
    /// Another API failure (a 5xx, a dropped connection, or a retry whose cause Claude Code did
    /// not record).
    ApiError,
    /// A request was sent and nothing came back for longer than the threshold.
    NoResponse,
    /// Its pane or process is gone while it owns a task in progress or has unread messages.
    Dead,
}

impl Waiting {
    /// Whether a person (or an action) must handle it: waiting longer changes nothing.
    pub fn needs_hand(self, detail: Option<&WaitingDetail>) -> bool {
        match self {
            Waiting::Dead => true,
            Waiting::RateLimited | Waiting::Overloaded | Waiting::ApiError => {
                detail.is_some_and(|d| d.exhausted)
            }
            _ => false,
        }
    }
}

/// What more is known about why a member waits (`status --json` `waiting_detail`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WaitingDetail {
    /// The HTTP status of the failed call, when known.
    pub status: Option<u16>,
    /// The attempt that failed (1-based), when known.
    pub attempt: Option<u32>,
    /// How many retries Claude Code makes at most, when known.
    pub max_retries: Option<u32>,
    /// When the next attempt is due.
    pub retry_at: Option<String>,
    /// When the usage window resets, when Claude Code recorded one.
    pub resets_at: Option<String>,
    /// Whether the retries ran out (the turn ended with the error).
    pub exhausted: bool,
    /// Claude Code's own one-line text (teammate-reachable text: escaped when shown).
    pub message: Option<String>,
    /// Since when (the request's first send; the failure; the pane's death).
    pub since: Option<String>,
}

impl fmt::Display for Waiting {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Waiting::Permission => "permission",
            Waiting::Plan => "plan",
            Waiting::Blocked => "blocked",
            Waiting::Stalled => "stalled",
            Waiting::RateLimited => "rate_limited",
            Waiting::Overloaded => "overloaded",
            Waiting::ApiError => "api_error",
            Waiting::NoResponse => "no_response",
            Waiting::Dead => "dead",
        })
    }
}

/// One member's status (`status --json` `members[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemberStatus {
    /// Name.
    pub name: String,
    /// `agentId`.
    pub agent_id: Option<String>,
    /// `agentType`.
    pub agent_type: Option<String>,
    /// `color`.
    pub color: Option<String>,
    /// `backendType`.
    pub backend: Option<String>,
    /// The computed state.
    pub state: State,
    /// When its last event happened.
    pub last_event_at: Option<String>,
    /// What it was: `message`, a frame type (`idle_notification`, …), `inbox_drained` or
    /// `is_active`.
    pub last_event_kind: Option<String>,
    /// `isActive` from `config.json`.
    pub is_active: Option<bool>,
    /// Whether its process or pane is alive, where that can be checked (`null` otherwise).
    pub process_alive: Option<bool>,
    /// Claude Code's session status (`sessions/<pid>.json`), when it wrote one.
    pub session_status: Option<String>,
    /// Unread entries in its inbox.
    pub unread: usize,
    /// The same count under its old name (`status --json` until 0.2; use `unread`).
    pub pending: usize,
    /// Tasks it owns that are in progress.
    pub tasks_in_progress: usize,
    /// Tasks it owns that are not completed.
    pub tasks_owned: usize,
    /// Whether it is listed in `config.json`.
    pub in_config: bool,
    /// Tokens by kind from its transcripts (`null` without one).
    pub tokens: Option<Tokens>,
    /// What it has cost in USD (`null` without a transcript, or for a model without a price).
    pub cost_usd: Option<f64>,
    /// `claude_code` or `computed` (`null` with the cost).
    pub cost_source: Option<CostSource>,
    /// The model of its newest response.
    pub model: Option<String>,
    /// What it is doing: the tool call in progress, or the last text it wrote.
    pub activity: Option<Activity>,
    /// Why it is not progressing: `permission`, `plan`, `dead`, `rate_limited`, `overloaded`,
    /// `api_error`, `no_response`, `blocked`, `stalled` or `null`.
    pub waiting: Option<Waiting>,
    /// What more is known about it (API failures, no response, a dead pane).
    pub waiting_detail: Option<WaitingDetail>,
    /// Its transcript files.
    pub transcripts: Vec<String>,
    /// How full its context is (`null` before its first response).
    pub context: Option<ContextUse>,
    /// Its own git worktree, when `create` gave it one (`null` otherwise).
    pub worktree: Option<WorktreeStatus>,
}

/// The team's totals from the transcripts (`status --json` `totals`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Tokens by kind of every session (`null` without transcripts).
    pub tokens: Option<Tokens>,
    /// What every session cost in USD (`null` without transcripts, or when one cost is unknown).
    pub cost_usd: Option<f64>,
}

/// What `status` adds from the transcripts and the open requests.
#[derive(Debug, Clone, Copy)]
pub struct Work<'a> {
    /// The members' work, read from the transcripts.
    pub spend: &'a TeamSpend,
    /// The requests waiting in the lead's inbox.
    pub requests: &'a [Request],
    /// A member inside a turn whose transcript has not grown for this long is stalled.
    pub stall_after: Duration,
    /// A request without an answer for this long is `no_response`.
    pub no_response_after: Duration,
}

/// The team-level part of a status.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TeamInfo {
    /// Team name.
    pub name: String,
    /// `description`.
    pub description: Option<String>,
    /// `createdAt` as RFC 3339.
    pub created_at: Option<String>,
    /// `leadAgentId`.
    pub lead_agent_id: Option<String>,
    /// `leadSessionId`.
    pub lead_session_id: Option<String>,
    /// `leadProcess.pid`.
    pub lead_pid: Option<u32>,
    /// Whether that process runs (and is the same process); `null` when there is none to check.
    pub lead_alive: Option<bool>,
    /// How the team's Claude Code treats a delivered message, judged from what its consumers do
    /// (see [`crate::team::generation`]): `current` (deleted: Claude Code 2.1.160 or later), `legacy`
    /// (kept with `read: true`: 2.1.159 or older), `mixed` (inboxes of both kinds), or `unknown`
    /// (nothing tells yet, e.g. only teamctl's own unread messages).
    pub format: String,
    /// Newest event of anyone in the team.
    pub last_activity_at: Option<String>,
}

/// Task counts (`status --json` `tasks`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskCounts {
    /// Status pending.
    pub pending: usize,
    /// Status in_progress.
    pub in_progress: usize,
    /// Status completed.
    pub completed: usize,
    /// Blocked by an open task.
    pub blocked: usize,
    /// Ready to be picked up.
    pub ready: usize,
}

/// A whole team's status.
#[derive(Debug, Clone, PartialEq)]
pub struct TeamStatus {
    /// Team-level facts.
    pub team: TeamInfo,
    /// Members in `config.json` order, then those with only an inbox.
    pub members: Vec<MemberStatus>,
    /// Task counts.
    pub tasks: TaskCounts,
    /// Totals from the transcripts.
    pub totals: Totals,
    /// Files that could not be read (reported, left as they are).
    pub warnings: Vec<String>,
    /// The team's folders that could not be listed (a symlink, a FIFO, … where the inboxes or
    /// the tasks folder belongs): what is shown lacks them, so the status is incomplete. Each
    /// is also in `warnings`.
    pub unlisted: Vec<String>,
}

#[derive(Debug, Clone, Default)]
struct Seen {
    last: Option<(DateTime<Utc>, String)>,
    terminated: bool,
}

impl Seen {
    fn event(&mut self, at: DateTime<Utc>, kind: &str) {
        if self.last.as_ref().is_none_or(|(t, _)| at >= *t) {
            self.last = Some((at, kind.to_string()));
        }
    }

    /// Takes in what `other` saw after what this saw (as if its events came next, in order).
    fn merge(&mut self, other: &Seen) {
        if let Some((at, kind)) = &other.last {
            self.event(*at, kind);
        }
        self.terminated |= other.terminated;
    }
}

/// Which file an inbox was when it was read: a file replaced by a rename (as Claude Code and
/// teamctl write) is another inode; one rewritten in place another size or mtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: SystemTime,
}

impl Stamp {
    fn of(i: &Info) -> Stamp {
        Stamp {
            dev: i.dev,
            ino: i.ino,
            size: i.size,
            mtime: i.mtime,
        }
    }
}

/// What one inbox tells `status`, from its bytes.
#[derive(Debug, Clone)]
struct InboxFacts {
    stamp: Stamp,
    /// Entries not `read: true`.
    unread: usize,
    /// Each sender's newest event in this inbox, in the order the senders first appear.
    senders: Vec<(String, Seen)>,
    /// What the inbox's format is weighed on: each entry's `read`, whether it has `msgV`, its id.
    weights: Vec<(Option<bool>, bool, Option<String>)>,
    /// The format weighed last, and on which sent log ([`Ours::print`]).
    format: Option<(u64, Option<Format>)>,
}

/// What [`team_status_with`] read, kept for its next call: the parsed inboxes by owner with
/// which file each was (device, inode, size, mtime; checked by one `stat` per inbox, through
/// the same folder handles as the read), so that a call after one inbox changed parses that
/// one only; and the task board it loaded last.
#[derive(Debug, Default)]
pub struct Cache {
    inboxes: HashMap<String, InboxFacts>,
    /// The task board read by the last call.
    pub(crate) board: Board,
    /// How many inboxes the last call parsed (the others were as they were).
    pub parsed: usize,
}

/// The facts of the inbox at `path`: `Ok(None)` when it does not exist, `Err` a warning (a read
/// or parse failure, a symlink or FIFO in its place: left as it is).
fn read_inbox(path: &Loc, stamp: Option<Stamp>) -> Result<Option<InboxFacts>, String> {
    let bytes = match path.read() {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(e) => {
            return Err(format!(
                "could not read {}: {e} (left unchanged)",
                path.display()
            ));
        }
    };
    let lossy;
    let entries: Vec<LightEntry> = match serde_json::from_slice(&bytes) {
        Ok(e) => e,
        Err(e) => {
            // An escaped lone surrogate is valid to Claude Code: read it as U+FFFD (only
            // after a failed parse, so a healthy inbox is scanned once).
            lossy = crate::store::format::replace_lone_surrogates(&bytes);
            match lossy.as_deref().map(serde_json::from_slice) {
                Some(Ok(e)) => e,
                _ => {
                    return Err(format!(
                        "could not read {}: {e} (left unchanged)",
                        path.display()
                    ));
                }
            }
        }
    };
    let weights = entries
        .iter()
        .map(|e| {
            (
                e.read.as_bool(),
                e.msg_v.is_some(),
                e.msg_id.as_str().map(String::from),
            )
        })
        .collect();
    let mut unread = 0;
    let mut senders: Vec<(String, Seen)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for e in &entries {
        if e.read.as_bool() != Some(true) {
            unread += 1;
        }
        let (Some(from), Some(ts)) = (e.from.as_str(), e.timestamp.as_str()) else {
            continue;
        };
        let Ok(at) = DateTime::parse_from_rfc3339(ts) else {
            continue;
        };
        let at = at.with_timezone(&Utc);
        let text = e.text.as_str().unwrap_or("");
        let frame = if text.starts_with('{') {
            serde_json::from_str::<LightFrame>(text).ok()
        } else {
            None
        };
        let kind = frame
            .as_ref()
            .and_then(|f| f.kind.as_str())
            .unwrap_or("message");
        let i = *index.entry(from).or_insert_with(|| {
            senders.push((from.to_string(), Seen::default()));
            senders.len() - 1
        });
        let s = &mut senders[i].1;
        s.event(at, kind);
        let approved = kind == "shutdown_approved"
            || (kind == "shutdown_response"
                && frame.as_ref().and_then(|f| f.approve.as_bool()) == Some(true));
        s.terminated |= approved;
    }
    // Without a stamp (the stat found no regular file) it is not kept: read again next time.
    let stamp = stamp.unwrap_or(Stamp {
        dev: u64::MAX,
        ino: u64::MAX,
        size: u64::MAX,
        mtime: SystemTime::UNIX_EPOCH,
    });
    Ok(Some(InboxFacts {
        stamp,
        unread,
        senders,
        weights,
        format: None,
    }))
}

/// Reads everything `status` shows about `team`, at `now`, calling a member idle after
/// `idle_after` without events; with `work`, also what the transcripts and open requests say.
///
/// # Errors
/// None of its own today: unreadable files become warnings, and folders that cannot be listed
/// are in [`TeamStatus::unlisted`] (the caller decides whether that fails).
pub fn team_status(
    team: &Team,
    now: DateTime<Utc>,
    idle_after: Duration,
    live: &Liveness,
    sent: &[crate::team::sentlog::Sent],
    work: Option<&Work>,
) -> Result<TeamStatus> {
    team_status_with(
        team,
        now,
        idle_after,
        live,
        sent,
        work,
        &mut Cache::default(),
    )
}

/// As [`team_status`], parsing again only the inboxes that changed since the call that filled
/// `cache` (a file of another inode, size or mtime; one that could not be read is read again
/// every time). What it returns is what [`team_status`] would.
///
/// # Errors
/// As [`team_status`].
pub fn team_status_with(
    team: &Team,
    now: DateTime<Utc>,
    idle_after: Duration,
    live: &Liveness,
    sent: &[crate::team::sentlog::Sent],
    work: Option<&Work>,
    cache: &mut Cache,
) -> Result<TeamStatus> {
    let mut warnings = Vec::new();
    // Folders that cannot be listed (a symlink, a FIFO, … in their place) are said, and the
    // rest of the team is shown.
    let mut unlisted = Vec::new();
    let mut read = read_inboxes(team, sent, cache, &mut warnings, &mut unlisted);
    let cfg = team.config.clone().unwrap_or_default();
    let lead_alive = cfg
        .lead_process
        .as_ref()
        .and_then(|p| pid_alive(p.pid, p.proc_start.as_deref()));
    cache.board = Board::load(&team.layout.tasks_dir(&team.name)).unwrap_or_else(|e| {
        unlisted.push(format!("{e:#}"));
        Board::default()
    });
    let board = &cache.board;
    for s in &board.skipped {
        warnings.push(format!(
            "skipped {}: {} (left unchanged)",
            s.path.display(),
            s.reason
        ));
    }
    let facts = TeamFacts {
        lead: cfg.lead().map(|l| l.name.clone()),
        lead_alive,
        session_status: cfg
            .lead_process
            .as_ref()
            .and_then(|p| session_status(team, p.pid)),
        board,
        live,
        work,
        now,
        idle: chrono::Duration::from_std(idle_after).unwrap_or(chrono::Duration::MAX),
        trees: crate::observe::worktree::of_team(team),
    };
    let gone = read.owners.iter().filter(|o| {
        cfg.member(o.as_str()).is_none()
            && !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(o.as_str()))
    });
    let rows: Vec<(String, Option<&Member>)> = cfg
        .members
        .iter()
        .map(|m| (m.name.clone(), Some(m)))
        .chain(gone.map(|o| (o.to_string(), None)))
        .collect();
    let members: Vec<MemberStatus> = rows
        .into_iter()
        .map(|(name, m)| {
            let seen = read.seen.remove(&name).unwrap_or_default();
            let pending = read.pending.get(&name).copied().unwrap_or(0);
            member_status(&facts, name, m, seen, pending)
        })
        .collect();
    let totals = match work.map(|w| w.spend).filter(|s| !s.is_empty()) {
        Some(s) => Totals {
            tokens: Some(s.tokens),
            cost_usd: s.cost_usd,
        },
        None => Totals::default(),
    };
    if let Some(w) = work {
        warnings.extend(w.spend.warnings.iter().cloned());
    }
    let last_activity_at = members
        .iter()
        .filter_map(|m| m.last_event_at.clone())
        .chain(
            read.seen
                .values()
                .filter_map(|s| s.last.as_ref().map(|(t, _)| crate::time::iso_millis(*t))),
        )
        .max();
    let team_info = TeamInfo {
        name: team.name.to_string(),
        description: cfg.description.clone(),
        created_at: cfg
            .created_at
            .and_then(DateTime::from_timestamp_millis)
            .map(crate::time::iso_millis),
        lead_agent_id: cfg.lead_agent_id.clone(),
        lead_session_id: cfg.lead_session_id.clone(),
        lead_pid: cfg.lead_process.as_ref().map(|p| p.pid),
        lead_alive,
        format: read.format().to_string(),
        last_activity_at,
    };
    warnings.extend(unlisted.iter().cloned());
    Ok(TeamStatus {
        team: team_info,
        members,
        tasks: task_counts(&cache.board),
        totals,
        warnings,
        unlisted,
    })
}

/// What the inboxes told: each name's newest event, each owner's unread entries, and how many
/// inboxes were read by each generation of Claude Code.
struct Inboxes {
    owners: Vec<MemberName>,
    seen: HashMap<String, Seen>,
    pending: HashMap<String, usize>,
    current: usize,
    legacy: usize,
}

impl Inboxes {
    /// The team's inbox format (`status --json` `team.format`).
    fn format(&self) -> &'static str {
        match (self.current, self.legacy) {
            (0, 0) => "unknown",
            (_, 0) => "current",
            (0, _) => "legacy",
            _ => "mixed",
        }
    }
}

/// Reads every inbox of `team`, parsing again only those that changed since `cache` saw them.
fn read_inboxes(
    team: &Team,
    sent: &[crate::team::sentlog::Sent],
    cache: &mut Cache,
    warnings: &mut Vec<String>,
    unlisted: &mut Vec<String>,
) -> Inboxes {
    let ours = crate::team::generation::Ours::new(
        sent,
        team.name.as_str(),
        team.config.as_ref().and_then(|c| c.created_at),
    );
    let owners = team.inbox_owners().unwrap_or_else(|e| {
        unlisted.push(format!("{e:#}"));
        Vec::new()
    });
    let mut read = Inboxes {
        owners: Vec::new(),
        seen: HashMap::new(),
        pending: HashMap::new(),
        current: 0,
        legacy: 0,
    };
    let mut before = std::mem::take(&mut cache.inboxes);
    cache.parsed = 0;
    for owner in &owners {
        let path = team.inbox_path(owner);
        // Stat first, read after: a file replaced in between is read new under the old stamp,
        // and read again next time (never old bytes under a new stamp).
        let info = path.stat().ok().flatten();
        let stamp = info.filter(|i| i.kind == Kind::File).map(|i| Stamp::of(&i));
        let kept = before
            .remove(owner.as_str())
            .filter(|f| stamp.is_some_and(|s| s == f.stamp));
        let mut facts = match kept {
            Some(f) => f,
            None => {
                cache.parsed += 1;
                match read_inbox(&path, stamp) {
                    Ok(Some(f)) => f,
                    Ok(None) => continue,
                    Err(w) => {
                        warnings.push(w);
                        continue;
                    }
                }
            }
        };
        match facts.format(&ours, owner.as_str()) {
            Some(Format::Legacy) => read.legacy += 1,
            Some(Format::Current) => read.current += 1,
            None => {}
        }
        for (from, s) in &facts.senders {
            read.seen.entry(from.clone()).or_default().merge(s);
        }
        read.pending.insert(owner.to_string(), facts.unread);
        if facts.unread == 0
            && let Some(i) = info
        {
            read.seen
                .entry(owner.to_string())
                .or_default()
                .event(i.mtime.into(), "inbox_drained");
        }
        if stamp.is_some() {
            cache.inboxes.insert(owner.to_string(), facts);
        }
    }
    read.owners = owners;
    read
}

impl InboxFacts {
    /// The inbox's format, weighed again only when the sent log changed ([`Ours::print`]).
    fn format(&mut self, ours: &Ours, owner: &str) -> Option<Format> {
        match self.format {
            Some((print, format)) if print == ours.print() => format,
            _ => {
                let weights = self.weights.iter();
                let format = ours
                    .weigh(
                        owner,
                        weights.map(|(read, msgv, id)| (*read, *msgv, id.as_deref())),
                    )
                    .format();
                self.format = Some((ours.print(), format));
                format
            }
        }
    }
}

/// What every member's row is judged against.
struct TeamFacts<'a> {
    lead: Option<String>,
    lead_alive: Option<bool>,
    session_status: Option<String>,
    board: &'a Board,
    live: &'a Liveness,
    work: Option<&'a Work<'a>>,
    now: DateTime<Utc>,
    idle: chrono::Duration,
    trees: HashMap<String, WorktreeStatus>,
}

/// One member's row: `m` is its `config.json` entry (`None`: it has only an inbox), `seen` its
/// newest event, `pending` its unread entries.
fn member_status(
    t: &TeamFacts,
    name: String,
    m: Option<&Member>,
    seen: Seen,
    pending: usize,
) -> MemberStatus {
    let is_active = m.and_then(|m| m.is_active);
    let (last_at, last_kind) = match (&seen.last, is_active) {
        (Some((at, k)), _) => (Some(*at), Some(k.clone())),
        (None, Some(true)) => (None, Some("is_active".to_string())),
        _ => (None, None),
    };
    let state = if seen.terminated || m.is_none() {
        State::Terminated
    } else if is_active == Some(true) || last_at.is_some_and(|at| t.now - at < t.idle) {
        State::Active
    } else if last_at.is_some() {
        State::Idle
    } else {
        State::Unknown
    };
    let is_lead = t.lead.as_deref() == Some(name.as_str());
    let process_alive = if is_lead {
        t.lead_alive
    } else {
        m.and_then(|m| m.tmux_pane_id.as_deref())
            .and_then(|p| t.live.pane_alive(p))
    };
    let owned = t
        .board
        .tasks
        .iter()
        .filter(|task| task.owner.as_deref() == Some(&name));
    let spend = t.work.and_then(|w| w.spend.members.get(&name));
    let tasks_in_progress = owned.clone().filter(|t| t.status == "in_progress").count();
    let (waiting, waiting_detail) = t
        .work
        .and_then(|w| {
            let gone = state != State::Terminated && process_alive == Some(false);
            let dead = (gone && (tasks_in_progress > 0 || pending > 0)).then(|| WaitingDetail {
                message: Some(if tasks_in_progress > 0 {
                    format!("its process is gone with {tasks_in_progress} task(s) in progress")
                } else {
                    format!("its process is gone with {pending} unread message(s)")
                }),
                ..WaitingDetail::default()
            });
            let alive = state != State::Terminated && process_alive != Some(false);
            let stalled = alive && spend.is_some_and(|s| s.stalled(t.now, w.stall_after));
            let api = spend
                .filter(|_| alive)
                .and_then(|s| api_reason(s, t.now, w));
            waiting(w, t.board, &name, owned.clone(), dead, api, stalled)
        })
        .unzip();
    MemberStatus {
        agent_id: m.and_then(|m| m.agent_id.clone()),
        agent_type: m.and_then(|m| m.agent_type.clone()),
        color: m.and_then(|m| m.color.clone()),
        backend: m.and_then(|m| m.backend_type.clone()),
        state,
        last_event_at: last_at.map(crate::time::iso_millis),
        last_event_kind: last_kind,
        is_active,
        process_alive,
        session_status: t.session_status.clone().filter(|_| is_lead),
        unread: pending,
        pending,
        tasks_in_progress,
        tasks_owned: owned.filter(|t| t.status != "completed").count(),
        in_config: m.is_some(),
        tokens: spend.map(|s| s.tokens),
        cost_usd: spend.and_then(|s| s.cost_usd),
        cost_source: spend.and_then(|s| s.cost_source),
        model: spend.and_then(|s| s.model.clone()),
        activity: spend.and_then(|s| s.activity.clone()),
        waiting,
        waiting_detail: waiting_detail.flatten(),
        transcripts: spend
            .map(|s| {
                s.transcripts
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect()
            })
            .unwrap_or_default(),
        context: spend.and_then(MemberSpend::context),
        worktree: t.trees.get(&name).cloned(),
        name,
    }
}

/// Why `name` is not progressing, the first reason that holds (see the module docs), and
/// what more is known about it.
fn waiting<'a>(
    w: &Work,
    board: &Board,
    name: &str,
    owned: impl Iterator<Item = &'a Task>,
    dead: Option<WaitingDetail>,
    api: Option<(Waiting, WaitingDetail)>,
    stalled: bool,
) -> Option<(Waiting, Option<WaitingDetail>)> {
    let asks = |k: &[RequestKind]| {
        w.requests
            .iter()
            .any(|r| r.from == name && k.contains(&r.kind))
    };
    let open: Vec<&Task> = owned
        .filter(|t| t.status != "completed" && !t.is_internal())
        .collect();
    if asks(&[RequestKind::Permission, RequestKind::SandboxPermission]) {
        Some((Waiting::Permission, None))
    } else if asks(&[RequestKind::PlanApproval]) {
        Some((Waiting::Plan, None))
    } else if let Some(d) = dead {
        Some((Waiting::Dead, Some(d)))
    } else if let Some((why, d)) = api {
        Some((why, Some(d)))
    } else if !open.is_empty() && open.iter().all(|t| board.view(t).blocked) {
        Some((Waiting::Blocked, None))
    } else if stalled {
        Some((Waiting::Stalled, None))
    } else {
        None
    }
}

/// What a member's newest transcript says of its API calls at `now`: failing (and whether the
/// retries ran out), being retried, or sent and unanswered for `w.no_response_after`.
fn api_reason(s: &MemberSpend, now: DateTime<Utc>, w: &Work) -> Option<(Waiting, WaitingDetail)> {
    let api = &s.api;
    let by_status = |status: Option<u16>, kind: Option<&str>| match (status, kind) {
        (Some(429), _) | (_, Some("rate_limit")) => Waiting::RateLimited,
        (Some(529), _) => Waiting::Overloaded,
        _ => Waiting::ApiError,
    };
    if let Some(f) = &api.failed {
        let detail = WaitingDetail {
            status: f.status,
            exhausted: true,
            message: f.text.clone(),
            since: f.at.clone(),
            ..WaitingDetail::default()
        };
        return Some((by_status(f.status, f.kind.as_deref()), detail));
    }
    if let Some(r) = &api.retry {
        let at = r.at.as_deref().and_then(parse_time);
        let retry_at = at.zip(r.retry_in_ms).map(|(at, ms)| {
            crate::time::iso_millis(at + chrono::Duration::milliseconds(ms as i64))
        });
        let detail = WaitingDetail {
            status: r.status,
            attempt: r.attempt,
            max_retries: r.max_retries,
            retry_at,
            resets_at: r
                .resets_at
                .and_then(|s| DateTime::from_timestamp(s, 0))
                .map(crate::time::iso_millis),
            exhausted: false,
            message: r.text.clone().or_else(|| r.connection.clone()),
            since: api.first_sent.clone(),
        };
        return Some((by_status(r.status, None), detail));
    }
    if api.sends >= 2 {
        // Claude Code 2.1.332 writes no error line for an interactive session: the same request
        // sent again is all that shows.
        let detail = WaitingDetail {
            attempt: Some(api.sends - 1),
            message: Some(
                "the same request was sent again: Claude Code is retrying a failed call".into(),
            ),
            since: api.first_sent.clone(),
            ..WaitingDetail::default()
        };
        return Some((Waiting::ApiError, detail));
    }
    let sent = api.last_sent.as_deref().and_then(parse_time)?;
    let quiet = now.signed_duration_since(sent).to_std().unwrap_or_default();
    (api.waiting_for_answer() && quiet >= w.no_response_after).then(|| {
        let detail = WaitingDetail {
            message: Some(format!(
                "no answer to its request for {}",
                crate::units::duration(quiet.as_secs())
            )),
            since: api.last_sent.clone(),
            ..WaitingDetail::default()
        };
        (Waiting::NoResponse, detail)
    })
}

fn parse_time(t: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Counts the tasks of a board by status (internal tasks left out).
pub fn task_counts(board: &Board) -> TaskCounts {
    let mut tasks = TaskCounts::default();
    for t in board.tasks.iter().filter(|t| !t.is_internal()) {
        let v = board.view(t);
        match v.status.as_str() {
            "pending" => tasks.pending += 1,
            "in_progress" => tasks.in_progress += 1,
            _ => tasks.completed += 1,
        }
        tasks.blocked += usize::from(v.blocked);
        tasks.ready += usize::from(v.ready);
    }
    tasks
}

/// `status` of `sessions/<pid>.json` when Claude Code wrote one.
fn session_status(team: &Team, pid: u32) -> Option<String> {
    let path = team
        .layout
        .root_loc()
        .join("sessions")
        .join(format!("{pid}.json"));
    let v: serde_json::Value = serde_json::from_slice(&path.read().ok()??).ok()?;
    v.get("status")?.as_str().map(String::from)
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::*;
    use crate::store::paths::{Layout, TeamName};
    use crate::team::sentlog::Sent;

    fn inbox(entries: &[(&str, &str, &str, bool)]) -> String {
        let v: Vec<serde_json::Value> = entries
            .iter()
            .map(|(from, text, at, read)| {
                serde_json::json!({"from": from, "text": text, "timestamp": at, "read": read,
                                   "msgV": 1, "msg_id": format!("{from}-{at}")})
            })
            .collect();
        serde_json::to_string_pretty(&v).unwrap()
    }

    /// `team_status_with` on a kept cache says what a fresh `team_status` says, and parses
    /// only the inboxes that changed.
    #[track_caller]
    fn check(root: &Path, cache: &mut Cache, sent: &[Sent], parsed: usize) -> TeamStatus {
        let team = Team::open(&Layout::new(root), &TeamName::parse("t").unwrap(), None).unwrap();
        let now = "2026-11-29T10:05:00Z".parse().unwrap();
        let (idle, live) = (Duration::from_secs(300), Liveness::default());
        let kept = team_status_with(&team, now, idle, &live, sent, None, cache).unwrap();
        let fresh = team_status(&team, now, idle, &live, sent, None).unwrap();
        assert_eq!(kept, fresh);
        assert_eq!(cache.parsed, parsed, "inboxes parsed");
        kept
    }

    #[test]
    fn a_kept_cache_rereads_only_what_changed_and_says_what_a_fresh_read_says() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let dir = root.join("teams/t/inboxes");
        fs::create_dir_all(&dir).unwrap();
        fs::create_dir_all(root.join("tasks/t")).unwrap();
        fs::write(
            root.join("teams/t/config.json"),
            r#"{"name":"t","leadAgentId":"team-lead@t","members":[
                {"agentId":"team-lead@t","name":"team-lead"},
                {"agentId":"alice@t","name":"alice"},{"agentId":"bob@t","name":"bob"}]}"#,
        )
        .unwrap();
        let shutdown = r#"{"type":"shutdown_approved","requestId":"r","from":"bob"}"#;
        let idle = r#"{"type":"idle_notification","from":"alice","timestamp":"t","idleReason":"available"}"#;
        fs::write(
            dir.join("team-lead.json"),
            inbox(&[
                ("alice", idle, "2026-11-29T10:01:00.000Z", false),
                ("bob", "hello", "2026-11-29T10:02:00.000Z", true),
            ]),
        )
        .unwrap();
        fs::write(
            dir.join("alice.json"),
            inbox(&[("team-lead", "aaaa", "2026-11-29T10:03:00.000Z", false)]),
        )
        .unwrap();
        fs::write(dir.join("bob.json"), "[]").unwrap();
        fs::write(
            dir.join("carol.json"),
            inbox(&[("alice", "hi carol", "2026-11-29T10:00:00.000Z", false)]),
        )
        .unwrap();
        fs::write(
            root.join("tasks/t/1.json"),
            r#"{"id":"1","subject":"s","status":"in_progress","owner":"alice","blocks":[],"blockedBy":[]}"#,
        )
        .unwrap();
        let mut cache = Cache::default();
        let st = check(root, &mut cache, &[], 4);
        assert_eq!(st.members.len(), 4, "carol, with an inbox only, too");
        assert_eq!(st.tasks.in_progress, 1);
        // Nothing changed: nothing parsed.
        check(root, &mut cache, &[], 0);

        // One inbox among several written in place (same inode, another size).
        fs::write(
            dir.join("bob.json"),
            inbox(&[("team-lead", shutdown, "2026-11-29T10:04:00.000Z", false)]),
        )
        .unwrap();
        let st = check(root, &mut cache, &[], 1);
        assert_eq!(st.members[2].unread, 1);

        // Replaced by a rename as Claude Code writes: same size, same mtime, another inode.
        let old = fs::metadata(dir.join("alice.json")).unwrap();
        let tmp_file = dir.join(".alice.json.tmp");
        fs::write(
            &tmp_file,
            inbox(&[("team-lead", "bbbbb", "2026-11-29T10:03:00.000Z", true)]),
        )
        .unwrap();
        fs::File::options()
            .write(true)
            .open(&tmp_file)
            .unwrap()
            .set_modified(old.modified().unwrap())
            .unwrap();
        assert_eq!(fs::metadata(&tmp_file).unwrap().len(), old.len());
        fs::rename(&tmp_file, dir.join("alice.json")).unwrap();
        let st = check(root, &mut cache, &[], 1);
        assert_eq!(st.members[1].unread, 0, "alice's one message is read now");
        // bob's inbox holds a msgV message teamctl did not write: current; the others legacy.
        assert_eq!(st.team.format, "mixed");

        // Deleted: its row goes (carol is not in config.json), nothing to parse.
        fs::remove_file(dir.join("carol.json")).unwrap();
        let st = check(root, &mut cache, &[], 0);
        assert!(!st.members.iter().any(|m| m.name == "carol"));

        // The sent log changed (teamctl wrote bob's message): the inboxes are not parsed again,
        // their format is weighed again.
        let sent = Sent {
            id: "team-lead-2026-11-29T10:04:00.000Z".into(),
            team: "t".into(),
            to: "bob".into(),
            from: "team-lead".into(),
            at: "2026-11-29T10:00:00.000Z".into(),
            summary: None,
            inbox: String::new(),
            idempotency_key: None,
            answers: None,
        };
        let st = check(root, &mut cache, std::slice::from_ref(&sent), 0);
        assert_eq!(st.team.format, "legacy");

        // A symlink in an inbox's place is not an inbox (never followed, its target not
        // counted), and the file is read again once it is a file again.
        fs::remove_file(dir.join("bob.json")).unwrap();
        std::os::unix::fs::symlink(dir.join("team-lead.json"), dir.join("bob.json")).unwrap();
        let st = check(root, &mut cache, &[], 0);
        assert_eq!(st.members[2].unread, 0);
        fs::remove_file(dir.join("bob.json")).unwrap();
        fs::write(dir.join("bob.json"), "[]").unwrap();
        let st = check(root, &mut cache, &[], 1);
        assert!(st.warnings.is_empty(), "{:?}", st.warnings);

        // A torn (half-written) inbox is a warning and is not kept: read again next time.
        fs::write(dir.join("bob.json"), "[{\"from\":").unwrap();
        check(root, &mut cache, &[], 1);
        check(root, &mut cache, &[], 1);
    }
    /// A member whose pane the running tmux server no longer lists is dead while it owns a task
    /// in progress (or has unread mail); without work waiting it is only gone.
    #[test]
    fn a_member_whose_pane_is_gone_with_work_is_dead() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let dir = root.join("teams/t/inboxes");
        fs::create_dir_all(&dir).unwrap();
        fs::create_dir_all(root.join("tasks/t")).unwrap();
        fs::write(
            root.join("teams/t/config.json"),
            r#"{"name":"t","leadAgentId":"team-lead@t","members":[
                {"agentId":"team-lead@t","name":"team-lead"},
                {"agentId":"alice@t","name":"alice","tmuxPaneId":"%5","backendType":"tmux"},
                {"agentId":"bob@t","name":"bob","tmuxPaneId":"%6","backendType":"tmux"}]}"#,
        )
        .unwrap();
        for m in ["team-lead", "alice", "bob"] {
            fs::write(dir.join(format!("{m}.json")), "[]").unwrap();
        }
        fs::write(
            root.join("tasks/t/1.json"),
            r#"{"id":"1","subject":"s","status":"in_progress","owner":"alice","blocks":[],"blockedBy":[]}"#,
        )
        .unwrap();
        let team = Team::open(&Layout::new(root), &TeamName::parse("t").unwrap(), None).unwrap();
        let now = "2026-11-29T10:05:00Z".parse().unwrap();
        // The server runs and lists another pane only.
        let live = Liveness {
            tmux_panes: Some([("%9".to_string(), true)].into_iter().collect()),
        };
        let spend = TeamSpend::default();
        let work = Work {
            spend: &spend,
            requests: &[],
            stall_after: Duration::from_secs(300),
            no_response_after: Duration::from_secs(180),
        };
        let st = team_status(
            &team,
            now,
            Duration::from_secs(300),
            &live,
            &[],
            Some(&work),
        )
        .unwrap();
        let alice = &st.members[1];
        assert_eq!(
            (alice.process_alive, alice.waiting),
            (Some(false), Some(Waiting::Dead))
        );
        let d = alice.waiting_detail.as_ref().unwrap();
        assert_eq!(
            d.message.as_deref(),
            Some("its process is gone with 1 task(s) in progress")
        );
        assert!(Waiting::Dead.needs_hand(Some(d)));
        let bob = &st.members[2];
        assert_eq!((bob.process_alive, bob.waiting), (Some(false), None));
    }
}
