//! Why a member is not progressing, as data: one [`Waiting`] reason and what more is known of it
//! ([`WaitingDetail`]); `status` finds them, `watch` and `top` carry them.

use std::fmt;

use serde::Serialize;

/// Why a member is not progressing (`status --json` `waiting`; when each holds is told in
/// `observe::status`'s docs).
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
    /// Its turns end in its transcript but it reports no idle (no `idle_notification` for
    /// `observe::unreported::UNREPORTED_AFTER`, `isActive` still `true`): a teammate
    /// that missed Claude Code's start-up race; restarting it helps.
    IdleUnreported,
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
            Waiting::IdleUnreported => "idle_unreported",
        })
    }
}
