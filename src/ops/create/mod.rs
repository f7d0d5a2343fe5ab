//! Standing up a team that teamctl leads, the way a Claude Code lead does it (spec §6, §8):
//! `validating → provisioning → launching → waiting → ready`, or `failed`.
//!
//! Invariants:
//! - A team folder with a `config.json` is never touched ("already exists"). A folder without
//!   one is what a failed earlier attempt left, and is cleared.
//! - Two creates of one team: the `config.json.lock` directory (Claude Code's own config lock)
//!   is held from the check to the write of `config.json`, and taken without waiting, so the
//!   second fails at once; `config.json` itself is published with `link(2)`, which never
//!   replaces a file.
//! - `config.json` is written last in provisioning, so a crash leaves a folder the next create
//!   clears; each inbox is `[]` before its brief is appended under the inbox lock.
//!
//! The rooms, from the ground up: `spec` (what to create) and `outcome` (what a create reports)
//! stand on nothing; `worktree` (a git worktree per teammate, a clone when it is sandboxed),
//! `confine` (each sandboxed teammate's rules), `provision` (the files),
//! `launch` (the panes) and `ready` (waiting for the teammates) on them; `flow` (the state
//! machine) on top; `runtime` (the checks that each teammate's MCP servers, settings, effort
//! and env can be given) on `spec`, and `file` (a team file, each teammate's runtime read from
//! it) beside them. The folder imports the store,
//! team and host layers, [`crate::ops::prepare`] and [`crate::ops::dialogs`] (the start-up
//! dialogs); never the cli.

mod confine;
mod file;
mod flow;
mod launch;
mod outcome;
mod provision;
mod ready;
mod runtime;
mod spec;
mod worktree;

pub use file::{
    FileMember, Loaded, McpConfig, Overrides, TeamFile, WorktreeValue, expand_name, load,
};
pub use flow::create;
pub use launch::{Provisioned, Starting, teammate_command};
pub use outcome::{MemberOutcome, MemberState, Outcome, Step};
pub use provision::{config_doc, provision};
pub use ready::{brief_taken, reported};
pub use runtime::{check_env, env_names};
pub use spec::{
    Branch, Creating, Launch, LaunchEnv, MemberSpec, Spec, color_of, parse_member_lines,
    validate_members,
};
pub use worktree::{Planned, Trees, plan as plan_worktrees};
