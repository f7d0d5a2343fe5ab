//! What the caller knows about the environment: every input the checks read from it.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::SystemTime;

use crate::store::paths::{Layout, TeamName};

/// The variable that turns agent teams on in Claude Code.
pub const AGENT_TEAMS_VAR: &str = "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS";

/// What the caller knows about the environment.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// Where the config dir is.
    pub layout: Layout,
    /// Where its path came from (`--claude-dir`, `$CLAUDE_CONFIG_DIR`, the default).
    pub layout_source: String,
    /// Only this team; `None` checks every team.
    pub team: Option<TeamName>,
    /// The caller's name as given (`TEAMCTL_FROM`); `None` means the default: `team-lead` in a
    /// team teamctl leads, else `user`.
    pub identity: Option<String>,
    /// Where to look for `claude` (the same search `create` uses).
    pub claude: crate::host::resolve::Inputs,
    /// `PATH`, to find `tmux`.
    pub path_var: Option<OsString>,
    /// The value of [`AGENT_TEAMS_VAR`] in the environment, if set.
    pub agent_teams_env: Option<String>,
    /// The current time (file ages are measured from it).
    pub now: SystemTime,
    /// Claude Code's global config file (`.claude.json`), when it could be found.
    pub claude_json: Option<PathBuf>,
    /// `ANTHROPIC_API_KEY`, to check it has been approved.
    pub api_key: Option<String>,
    /// The current directory: the folder whose trust is checked.
    pub cwd: PathBuf,
    /// teamctl's sent log (its entries are no evidence of a team's inbox format).
    pub sent: Vec<crate::team::sentlog::Sent>,
    /// teamctl's own records (its record of the teams it leads).
    pub records: crate::team::records::Records,
}
