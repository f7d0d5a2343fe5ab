//! The ops layer: what a user asks for that spans the layers. It imports every library layer
//! below it (observe, team, host, store); never the cli.
//!
//! **The floor plan.** The layer is flows over services. A *flow* is what a verb does end to
//! end; a *service* is what more than one flow or verb needs. A flow imports services, never
//! another flow; a service imports only the services below it in the list. What two flows come
//! to share (the bridge's loop, the merge queue, the record, the start-up dialogs) moves down
//! into a service instead of one flow importing the other. `run` uses the most services and
//! composes no other flow. The unit tests hold every room to this plan.
//!
//! The flows:
//! - [`create`]: standing up a team teamctl leads (on `prepare` and `dialogs`);
//! - [`run`]: a team led by Claude, headless, until its work is done (on `merge`, `export`,
//!   `chat`, `rescue` and `dialogs`);
//! - [`bridge`]: a chat that answers a team, its loop run whole (on `chat`);
//! - [`delete`]: taking down a team teamctl leads, and its teammates' worktrees (on `export`);
//! - [`doctor`]: the health checks (on `dialogs`);
//! - [`ask`]: a question to one teammate and the wait for its answer;
//! - [`report`]: many teams' records side by side (on `export`);
//! - [`resume`]: a team brought back after a crash (on `rescue`);
//! - [`serve`]: the live page of a team (on `policy`).
//!
//! The services, from the top down:
//! - [`merge`]: the merge queue that brings the teammates' work home (on `export`: a pull
//!   request's body from the record);
//! - [`export`]: a record of a team that outlives it (on `chat`: the bridge's journal);
//! - [`chat`]: the chat's loop that `bridge` and `run --bridge` share (on `policy`);
//! - [`policy`]: answering teammates' requests by rules, reading Bash command lines as bash does;
//! - [`rescue`]: the nudges and restarts for a stuck member;
//! - [`redeliver`]: messages moved from an inbox nobody reads to the member they were meant
//!   for (`redeliver`, `doctor --fix`);
//! - [`prepare`]: the settings an unattended Claude Code needs;
//! - [`dialogs`]: Claude Code's start-up dialogs, from its files and on a pane's screen.

pub mod ask;
pub mod bridge;
pub mod chat;
pub mod create;
pub mod delete;
pub mod dialogs;
pub mod doctor;
pub mod export;
pub mod merge;
pub mod policy;
pub mod prepare;
pub mod redeliver;
pub mod report;
pub mod rescue;
pub mod resume;
pub mod run;
pub mod serve;

#[cfg(test)]
mod tests;
