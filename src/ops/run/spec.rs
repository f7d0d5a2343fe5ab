//! What a run is asked to do and what it tells: its states, the spec, the environment it runs
//! in, its progress events and its outcome.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use serde::Serialize;

pub use crate::host::claude::Dialog;
use crate::host::claude::{ClaudeEnv, ClaudeInfo, Permission};
use crate::observe::budget::Cap;
use crate::observe::spend::TeamSpend;
use crate::observe::status::TaskCounts;
use crate::ops::export::Exported;
use crate::store::paths::TeamName;
use crate::team::records::Records;

/// How often the files and the pane are looked at.
pub const POLL: Duration = Duration::from_millis(200);

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

/// How the lead spawns its teammates (`--teammate-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TeammateMode {
    /// One tmux pane per teammate, next to the lead's.
    Tmux,
    /// Inside the lead's process.
    InProcess,
}

impl TeammateMode {
    /// The value Claude Code's `--teammate-mode` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            TeammateMode::Tmux => "tmux",
            TeammateMode::InProcess => "in-process",
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The run's label (`--name`): one run per label at a time.
    pub name: String,
    /// The lead's first user message.
    pub prompt: String,
    /// The lead's working directory (absolute).
    pub cwd: PathBuf,
    /// `--model`.
    pub model: Option<String>,
    /// Permission flags for the lead (its teammates inherit its mode).
    pub permission: Permission,
    /// `--teammate-mode`, when given.
    pub teammate_mode: Option<TeammateMode>,
    /// Give up after this long (exit 3).
    pub timeout: Duration,
    /// How long the done rule must hold.
    pub settle: Duration,
    /// Leave the lead and its team running at the end.
    pub keep: bool,
    /// Write a record of the team here ([`crate::ops::export`]) at the last moment before the
    /// lead is told to stop (done, failed, timeout, budget or interrupted alike).
    pub export: Option<PathBuf>,
    /// End the run (as at the timeout) once the team's spend crosses this.
    pub cap: Cap,
    /// What to do about stuck members.
    pub rules: crate::observe::keep::Rules,
    /// `--max-teammates`: a teammate the lead starts past this many is stopped (its pane
    /// ended, in the run's own tmux session) and the lead told why.
    pub max_teammates: Option<usize>,
    /// `--resume`: carry on this team (or lead session id) whose lead was killed, instead of
    /// starting a new one; [`Spec::prompt`] is then added to what the lead is told (may be
    /// empty).
    pub resume: Option<String>,
}

/// What the run needs from the environment, read by the caller.
#[derive(Debug, Clone)]
pub struct RunEnv {
    /// The binary and the variables for the lead's pane (credentials, endpoints, `PATH`,
    /// …): [`ClaudeEnv::pane_env`] and then [`ClaudeEnv::passthrough`].
    pub claude: ClaudeEnv,
    /// Claude Code's global config file (`$CLAUDE_CONFIG_DIR/.claude.json`, else
    /// `~/.claude.json`).
    pub claude_json: PathBuf,
    /// The config dir to give the lead as `CLAUDE_CONFIG_DIR` (only when one was chosen:
    /// setting it to `~/.claude` would move `.claude.json`).
    pub config_dir: Option<PathBuf>,
    /// `ANTHROPIC_API_KEY`, to check it has been approved.
    pub api_key: Option<String>,
    /// Running as root without `IS_SANDBOX`: Claude Code then refuses to skip permissions.
    pub root_without_sandbox: bool,
    /// Where the per-name lock and the prompt file live.
    pub run_dir: PathBuf,
    /// How long `claude --version` may take.
    pub version_timeout: Duration,
    /// teamctl's own records: the sent log (for the record's messages), the run records, and
    /// the transcript index; each missing without a data dir.
    pub records: Records,
    /// The clock that stamps the record.
    pub clock: fn() -> chrono::DateTime<chrono::Utc>,
    /// The chat beside the run (`--bridge`): told what needs a person, and asked to answer
    /// the lead's permission prompts.
    pub desk: Option<std::sync::Arc<super::bridge::Desk>>,
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
    /// The record written with [`Spec::export`] (or why it could not be), once the lead was
    /// started.
    pub export: Option<Result<Exported, String>>,
    /// What the team spent, from its transcripts, read after cleanup (when the sessions have
    /// recorded their own figures).
    pub spend: Option<TeamSpend>,
    /// Which exit a stuck member ended the run with ([`State::Stuck`]).
    pub stuck: Option<crate::error::Stuck>,
    /// With [`Spec::resume`]: what was found and done.
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
    /// The record was written ([`Spec::export`]).
    Exported(&'a Exported),
    /// The team's spend crossed `--warn-at` of a limit (told once per limit).
    BudgetWarning(&'a crate::observe::budget::Warning),
}
