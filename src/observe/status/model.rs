//! What a status says: the states, the rows and the totals (why a member waits is
//! [`crate::observe::waiting`]'s).

use std::fmt;
use std::time::Duration;

use serde::Serialize;

use crate::observe::spend::{ContextUse, CostSource, TeamSpend};
use crate::observe::waiting::{Waiting, WaitingDetail};
use crate::observe::worktree::WorktreeStatus;
use crate::sandbox::Shown;
use crate::team::protocol::Request;
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
    /// `api_error`, `no_response`, `blocked`, `stalled`, `idle_unreported` or `null`.
    pub waiting: Option<Waiting>,
    /// What more is known about it (API failures, no response, a dead pane).
    pub waiting_detail: Option<WaitingDetail>,
    /// When its last turn ended in its transcript, when it reported no idle for it (no
    /// `idle_notification` for [`crate::observe::unreported::UNREPORTED_AFTER`] and `isActive`
    /// still `true`): it is idle and does not say so (`null` otherwise).
    pub idle_unreported_since: Option<String>,
    /// Its transcript files.
    pub transcripts: Vec<String>,
    /// How full its context is (`null` before its first response).
    pub context: Option<ContextUse>,
    /// Its own git worktree, when `create` gave it one (`null` otherwise).
    pub worktree: Option<WorktreeStatus>,
    /// The sandbox it runs in, when `create` confined it (`null` otherwise):
    /// `{"engine","writable","hidden","network"}` (docs/sandbox.md).
    pub sandbox: Option<Shown>,
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
