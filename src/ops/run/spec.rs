//! What a run is asked to do: the spec and the environment it runs in, and the run under way
//! as its rooms pass it on, `Running` (what it tells: [`super::outcome`]).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::host::claude::{ClaudeEnv, Permission};
use crate::observe::budget::Cap;
use crate::store::paths::Layout;
use crate::team::records::Records;

/// How often the files and the pane are looked at.
pub const POLL: Duration = Duration::from_millis(200);

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
    /// The sandbox the tmux server the run talks to runs in (`run --sandbox`), for its record.
    pub sandbox: Option<crate::sandbox::Rules>,
}

/// A run under way: the config dir it reads, what it was asked, the environment it runs in,
/// and when it started (its timeout and its elapsed time count from then).
#[derive(Clone, Copy)]
pub(super) struct Running<'a> {
    pub(super) layout: &'a Layout,
    pub(super) spec: &'a Spec,
    pub(super) env: &'a RunEnv,
    pub(super) start: Instant,
}
