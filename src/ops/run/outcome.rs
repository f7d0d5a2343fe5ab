//! What a run tells: its states, its progress events and its outcome (the teammates it saw,
//! what `--resume` found, what it cost).

use std::path::PathBuf;

use serde::Serialize;

use crate::host::claude::{ClaudeInfo, Dialog};
use crate::observe::spend::TeamSpend;
use crate::observe::status::TaskCounts;
use crate::ops::export::{Exported, RunMerge};
use crate::store::paths::TeamName;

/// A step of the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Checking the binary, tmux and the start-up dialogs.
    Validating,
    /// Starting the lead.
    Spawning,
    /// Waiting for the lead's team to appear.
    Monitoring,
    /// The team exists; waiting for its work to be done.
    Running,
    /// The work is done.
    Done,
    /// Something went wrong; see the reason.
    Failed,
    /// `--timeout` ran out.
    Timeout,
    /// The team's spend crossed `--max-cost` or `--max-tokens`.
    Budget,
    /// A member was stuck for a reason whose action was `exit` (`--on-rate-limit`,
    /// `--on-stall`, `--on-dead`).
    Stuck,
}

impl State {
    /// Its snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Validating => "validating",
            State::Spawning => "spawning",
            State::Monitoring => "monitoring",
            State::Running => "running",
            State::Done => "done",
            State::Failed => "failed",
            State::Timeout => "timeout",
            State::Budget => "budget",
            State::Stuck => "stuck",
        }
    }
}

/// What became of a killed lead's teammates still running when its run was resumed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Orphans {
    /// Ended: their panes were in the run's own tmux session.
    pub ended: Vec<String>,
    /// Left running: their panes are elsewhere (`name (pane %N)`).
    pub left_running: Vec<String>,
}

/// What `run --resume` found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Resumed {
    /// The team carried on.
    pub team: String,
    /// The old lead's teammates still running.
    #[serde(flatten)]
    pub orphans: Orphans,
    /// Unread messages to the lead put into its prompt (and marked read).
    pub messages: usize,
    /// Open tasks named in its prompt.
    pub open_tasks: usize,
    /// How many times `leadSessionId` was found to differ from the resumed session and put
    /// back.
    pub lead_session_fixed: u32,
}

/// A teammate in the result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Teammate {
    /// Member name.
    pub name: String,
    /// `agentType`.
    pub agent_type: Option<String>,
    /// `backendType` (`tmux`, `in-process`).
    pub backend: Option<String>,
    /// Its tmux pane, for pane teammates.
    pub pane: Option<String>,
    /// `starting`, `working`, `idle` or `exited`.
    pub state: String,
}

/// What happened.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// `done`, `failed`, `timeout` or `budget`.
    pub state: State,
    /// Why it failed, timed out or went over budget.
    pub reason: Option<String>,
    /// The dialog that blocked it, if that was the reason.
    pub dialog: Option<Dialog>,
    /// The lead's team, once found.
    pub team: Option<String>,
    /// The lead's session id.
    pub lead_session_id: Option<String>,
    /// The teammates, in `config.json` order.
    pub teammates: Vec<Teammate>,
    /// Task counts of the team's task list.
    pub tasks: TaskCounts,
    /// The lead's final answer.
    pub result: Option<String>,
    /// `transcript` or `pane`: where the result came from.
    pub result_source: Option<&'static str>,
    /// The lead's transcript.
    pub transcript: Option<PathBuf>,
    /// The binary.
    pub claude: Option<ClaudeInfo>,
    /// The tmux session (kept only with `--keep`).
    pub tmux_session: Option<String>,
    /// Whether the lead was left running (`--keep`).
    pub kept: bool,
    /// Milliseconds from start to the end (before cleanup).
    pub elapsed_ms: u64,
    /// The record written with [`super::Spec::export`] (or why it could not be), once the lead was
    /// started.
    pub export: Option<Result<Exported, String>>,
    /// What the team spent, from its transcripts, read after cleanup (when the sessions have
    /// recorded their own figures).
    pub spend: Option<TeamSpend>,
    /// Which exit a stuck member ended the run with ([`State::Stuck`]).
    pub stuck: Option<crate::error::Stuck>,
    /// With [`super::Spec::resume`]: what was found and done.
    pub resumed: Option<Resumed>,
}

impl Outcome {
    /// A run that has not got anywhere yet: `failed` until it does.
    pub fn failed() -> Outcome {
        Outcome {
            state: State::Failed,
            reason: None,
            dialog: None,
            team: None,
            lead_session_id: None,
            teammates: Vec::new(),
            tasks: TaskCounts::default(),
            result: None,
            result_source: None,
            transcript: None,
            claude: None,
            tmux_session: None,
            kept: false,
            elapsed_ms: 0,
            export: None,
            spend: None,
            stuck: None,
            resumed: None,
        }
    }
}

/// A progress event.
#[derive(Debug, Clone)]
pub enum RunEvent<'a> {
    /// A state and one line about it.
    Progress(State, &'a str),
    /// A teammate joined the lead's team.
    Joined(&'a Teammate),
    /// Something was done for a stuck member (a nudge, a restart).
    Acted(&'a crate::observe::keep::Acted),
    /// The lead's team formed (its name).
    TeamFormed(&'a TeamName),
    /// The record was written ([`super::Spec::export`]).
    Exported(&'a Exported),
    /// The team's spend crossed `--warn-at` of a limit (told once per limit).
    BudgetWarning(&'a crate::observe::budget::Warning),
}

/// What a run asks of its caller as it goes.
pub struct Caller<'a> {
    /// Told each step.
    pub progress: &'a mut dyn FnMut(RunEvent),
    /// Asked at every poll: when it says yes the run cleans up and ends `failed`.
    pub interrupted: &'a dyn Fn() -> bool,
    /// Asked once the lead's work has come to an end (done, or not), before the record is
    /// taken and the lead ended: `run --merge-into` merges the work of the lead's helpers here
    /// and says what, which the record then tells ([`RunMerge`]); `None` puts nothing in it.
    pub ended: &'a mut dyn FnMut(&Outcome) -> Option<RunMerge>,
}
