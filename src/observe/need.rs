//! What a person is needed for, as data: one [`Need`] per cause (`status --json`
//! `needs_human`, `watch --event needs_human`); when each holds is [`crate::observe::human`]'s.

use serde::Serialize;

/// One reason a person is needed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Need {
    /// `request`, `dead`, `stalled`, `out_of_retries`, `misaddressed` or `team_stopped`.
    pub cause: &'static str,
    /// The member it is about (`null` for the whole team).
    pub member: Option<String>,
    /// What tells this occurrence from the next (the request id, the time it started).
    pub key: String,
    /// Since when, where known.
    pub since: Option<String>,
    /// What to do, in one line.
    pub todo: String,
    /// Whether the cause has gone (a follower's last word on it).
    pub cleared: bool,
}
