//! A team led by Claude itself, headless: an interactive `claude` lead in a detached tmux
//! session of its own, given a prompt, watched until its team's work is done
//! (`validating → spawning → monitoring → running → done`, or `failed` / `timeout` /
//! `budget`).
//!
//! The lead is started with `--session-id <uuid>` chosen here, so its team (Claude Code
//! 2.1.178+: `session-<first 8 hex>`; older: whatever its TeamCreate makes) is the one whose
//! `leadSessionId` is that uuid, and its transcript is `projects/*/<uuid>.jsonl`. Two runs never
//! see each other's teams.
//!
//! **The done rule** ([`Settle`]), checked every [`POLL`]:
//! 1. the lead's turn has ended: the last `user`/`assistant` entry of its transcript is an
//!    `assistant` entry that does not wait for a tool (`stop_reason` other than `tool_use`);
//! 2. no teammate is working: a pane teammate (`backendType: "tmux"`) works while its pane is
//!    alive and `isActive` is not `false` (absent means it has not finished its first turn);
//!    an in-process teammate works until its own transcript
//!    (`projects/*/<uuid>/subagents/agent-*.jsonl`, named in the `.meta.json` beside it) shows
//!    an ended turn; any other member works while `isActive` is `true`;
//!    a background helper of the lead (an Agent call run in the background, such as one with
//!    `isolation: "worktree"`: no member, its `.meta.json` says `"requestShape": "background"`)
//!    works until that says `"finished": true` or its transcript shows an ended turn;
//! 3. no inbox of the lead or of a running teammate holds an entry that is not `read: true`;
//! 4. all three held at every poll for `--settle`, and nothing moved meanwhile (the lead's
//!    transcript, the members and their `isActive`, the in-process transcripts: a fingerprint).
//!
//! Cleanup (unless kept) ends the lead as a user closing its terminal would: SIGTERM to the
//! lead process (Claude Code then stops its teammates, kills their panes and removes its team
//! folder), then the tmux session is killed. Claude Code leaves `tasks/<team>` and the
//! transcripts behind; so does this. With [`Spec::export`], a record of the team
//! ([`crate::ops::export`]) is written first, whatever the run's end: done, failed, timed out,
//! over budget or interrupted, once the lead was started; and before it, the caller is asked
//! to merge the lead's helpers' work ([`Caller::ended`]: `run --merge-into`), so that the
//! record says what was merged.
//!
//! **Resuming** (`run --resume TEAM`, [`Spec::resume`]): a run whose lead was killed is carried
//! on by the lead's last session, `claude --resume <leadSessionId>`, told it was interrupted
//! and what is left (the open tasks, its teammates' unread messages); the old lead's teammates
//! still running in the run's tmux session are ended first, since a resumed lead never reads
//! what they send. The rest is a run as above, following that team (`interrupted`).
//!
//! The rooms: `spec` (what a run is asked and tells), `preflight` (its name, its lock and the
//! files the start-up dialogs are judged from: [`crate::ops::dialogs`]), `lead` (starting,
//! recording and ending the lead; [`run`] itself), `interrupted` (what a resumed run finds and
//! tells its lead), `monitor` (the loop that watches the team), `done` (the done rule),
//! `bridge` (`run --bridge`: the chat beside the run, on [`crate::ops::chat`], and the lead's
//! permission prompt answered from it), `helper_worktrees` (the worktrees its helpers worked
//! in, for `run --merge-into`) and `confine` (`run --sandbox`: the sandbox its tmux server runs
//! in).

pub mod bridge;
pub mod confine;
mod done;
pub mod helper_worktrees;
mod interrupted;
mod lead;
mod monitor;
mod outcome;
mod preflight;
mod spec;

pub use crate::host::claude::Dialog;
pub use done::{Observation, Settle, find_team};
pub use lead::{cleanup, lead_command, printable, run, session_name};
pub use outcome::{Caller, Orphans, Outcome, Resumed, RunEvent, State, Teammate};
pub use preflight::{check_name, lock_name};
pub use spec::{POLL, RunEnv, Spec, TeammateMode};
