//! What each member of a team has done and spent, from the transcripts
//! ([`crate::team::transcript`]): tokens, cost and where the cost figure comes from, the model,
//! the current activity, the transcript files.
//!
//! Cost, per session (a process: the lead, a pane teammate):
//! - `claude_code`: the session ended and left a `cost-state` nothing followed: Claude Code's
//!   own `totalCostUSD` and `modelUsage` tokens. It covers everything that ran in the process,
//!   so the in-process teammates' own figures (computed from their files) are taken out of the
//!   lead's share and the team total is the sum of the sessions' figures, exactly what Claude
//!   Code recorded;
//! - `computed`: otherwise, from each response's `usage` with Claude Code's own prices
//!   ([`crate::team::transcript::pricing`]), for the session's file and its subagents';
//! - unknown (`null`): a response of a model without a price; the tokens are still counted.
//!
//! Claude Code's own figure also counts the small side requests it makes without writing them to
//! the transcript (it records them in `cost-state` only), so while a session runs the computed
//! figure can be a little lower than what it will record at the end.
//!
//! [`SpendReader`] follows a team's transcripts over time (what was appended since the last
//! read is all it parses); [`read_team`] and [`read_located`] are one read. [`series`]: each
//! member's cost over time, from the lines of a read that sees every line (an export's, or a
//! [`SpendReader`] that keeps it: `serve`'s).

pub mod series;
mod sum;
mod transcripts;

pub use sum::{ContextUse, CostSource, MemberSpend, TeamSpend, TurnTimes, read_located, read_team};
pub use transcripts::{FollowedSeries, LOCATE_EVERY, SpendReader};
