//! `doctor`'s checks: what on this machine and in a team's files would stop teamctl or Claude
//! Code from working, each with what to do about it. Read-only: no lock is taken, nothing is
//! written, created or removed (`doctor --fix` is [`crate::ops::redeliver::fix`]).
//!
//! Everything that comes from the environment (where the config dir came from, `PATH`, the
//! agent-teams variable, the caller's identity) is an explicit input.
//!
//! The rooms, from the ground up: `finding` (a check's verdict) and `inputs` (what the caller
//! knows) stand on nothing; `tree` (the config dir, its symlinks, the team folders), `machine`
//! (claude, agent teams, start-up dialogs, tmux), `inbox`, `litter`, `misaddressed` (the
//! inboxes no member reads, from the observe layer) and `members` (the members as the team's
//! reader sees them: a teammate that never reports idle) and `lead` (`leadSessionId` against the
//! lead's sessions) stand on them; `team`
//! (one team's checks) on those; `run` (every check, in order) on top. The folder imports the
//! store, team, host and observe layers and [`crate::ops::dialogs`] (the start-up dialogs);
//! never the cli.

mod finding;
mod inbox;
mod inputs;
mod lead;
mod litter;
mod machine;
mod members;
mod misaddressed;
mod run;
mod team;
mod tree;

pub use finding::{Check, Level};
pub use inputs::{AGENT_TEAMS_VAR, Inputs};
pub use machine::{find_on_path, truthy};
pub use run::run;
