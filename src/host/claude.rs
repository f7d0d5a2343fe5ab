//! How Claude Code is launched: the permission flags, the environment a lead passes to what it
//! starts, the binary that was used, the start-up dialogs that block a session nobody watches
//! (and the API key suffix that approves one), and POSIX shell quoting for the command lines.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::host::resolve::{self, FoundBy};
use crate::store::paths::SessionId;

/// Variables a Claude Code lead passes to the teammates it starts, on their command line
/// (spec §8.1); teamctl passes the ones that are set, plus `CLAUDE_CONFIG_DIR` always.
pub const PASSTHROUGH_ENV: [&str; 16] = [
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "ANTHROPIC_BASE_URL",
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
    "SSL_CERT_FILE",
    "NODE_EXTRA_CA_CERTS",
    "AWS_REGION",
    "AWS_PROFILE",
    "CLOUD_ML_REGION",
    "ANTHROPIC_VERTEX_PROJECT_ID",
];

/// Variables given to the tmux panes through `tmux -e` rather than on the command line
/// (credentials must not show in `ps` or in the pane), and so that a tmux server started
/// earlier with another environment does not decide them.
pub const PANE_ENV: [&str; 12] = [
    "PATH",
    "HOME",
    "LANG",
    "TMPDIR",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "IS_SANDBOX",
    "ENABLE_TOOL_SEARCH",
    "DISABLE_TELEMETRY",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_AUTOUPDATER",
];

/// How teammates get their permissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Permission {
    /// No flag: Claude Code's default.
    Default,
    /// `--permission-mode <mode>`.
    Mode(String),
    /// `--dangerously-skip-permissions`.
    Skip,
}

impl Permission {
    /// From the two flags people give: a mode wins over skipping.
    pub fn from_flags(mode: Option<&str>, skip: bool) -> Permission {
        match (mode, skip) {
            (Some(m), _) => Permission::Mode(m.to_string()),
            (None, true) => Permission::Skip,
            (None, false) => Permission::Default,
        }
    }

    /// The words for Claude Code's command line, shell-quoted.
    pub fn args(&self) -> Vec<String> {
        match self {
            Permission::Default => Vec::new(),
            Permission::Mode(m) => vec!["--permission-mode".into(), shell_quote(m)],
            Permission::Skip => vec!["--dangerously-skip-permissions".into()],
        }
    }

    /// Whether it skips the permission prompts (Claude Code then shows its bypass dialog).
    pub fn bypasses(&self) -> bool {
        match self {
            Permission::Skip => true,
            Permission::Mode(m) => m == "bypassPermissions",
            Permission::Default => false,
        }
    }
}

/// What starting Claude Code needs from the environment: where to find `claude` and the
/// variables to give it.
#[derive(Debug, Clone)]
pub struct ClaudeEnv {
    /// Binary resolution inputs.
    pub resolve: resolve::Inputs,
    /// The variables of [`PASSTHROUGH_ENV`] that are set.
    pub passthrough: Vec<(String, String)>,
    /// The variables of [`PANE_ENV`] that are set.
    pub pane_env: Vec<(String, String)>,
}

impl ClaudeEnv {
    /// Reads the variables through `var` (set and not empty, else `None`): `claude_bin` is
    /// `--claude-bin`, `teammate_command` the `CLAUDE_CODE_TEAMMATE_COMMAND` override.
    pub fn new(
        claude_bin: Option<PathBuf>,
        teammate_command: Option<PathBuf>,
        path: Option<OsString>,
        home: Option<PathBuf>,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> ClaudeEnv {
        let set = |names: &[&str]| -> Vec<(String, String)> {
            names
                .iter()
                .filter_map(|k| Some((k.to_string(), var(k)?)))
                .collect()
        };
        ClaudeEnv {
            resolve: resolve::Inputs::new(
                claude_bin.filter(|p| !p.as_os_str().is_empty()),
                teammate_command,
                path,
                home,
            ),
            passthrough: set(&PASSTHROUGH_ENV),
            pane_env: set(&PANE_ENV),
        }
    }
}

/// What a teammate's pane runs, as a lead starts it (spec §8.1).
#[derive(Debug, Clone, Copy)]
pub struct TeammateLaunch<'a> {
    /// The config dir (absolute: the teammate runs elsewhere).
    pub root: &'a Path,
    /// Where it runs.
    pub cwd: &'a Path,
    /// The `claude` binary.
    pub claude: &'a Path,
    /// The variables of [`PASSTHROUGH_ENV`] that are set.
    pub passthrough: &'a [(String, String)],
    /// Its team.
    pub team: &'a str,
    /// Its name.
    pub member: &'a str,
    /// Its colour (a palette name).
    pub color: &'a str,
    /// The lead's session.
    pub lead_session_id: &'a str,
    /// `--agent-type`.
    pub agent_type: Option<&'a str>,
    /// `--model`.
    pub model: Option<&'a str>,
    /// Its permission flags.
    pub permission: &'a Permission,
    /// Its own runtime flags, unquoted (`--mcp-config F --effort low`, …).
    pub runtime: &'a [String],
    /// `--resume <session>`: the session it carries on (a restart); a [`SessionId`], so never
    /// an option.
    pub resume: Option<&'a SessionId>,
}

impl TeammateLaunch<'_> {
    /// The command line, shell-quoted: `cd <cwd> && env CLAUDECODE=1
    /// CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 CLAUDE_CONFIG_DIR=<root> [passthrough] <claude>
    /// --agent-id <name>@<team> --agent-name <name> --team-name <team> --agent-color <color>
    /// --parent-session-id <id> [--agent-type T] [--model M] [permission] [runtime] [--resume
    /// S]`.
    pub fn command(&self) -> String {
        let q = |s: &str| shell_quote(s);
        let mut parts = vec![
            "cd".to_string(),
            q(&self.cwd.to_string_lossy()),
            "&&".into(),
            "env".into(),
            "CLAUDECODE=1".into(),
            "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1".into(),
            q(&format!(
                "CLAUDE_CONFIG_DIR={}",
                self.root.to_string_lossy()
            )),
        ];
        for (k, v) in self.passthrough {
            if k != "CLAUDE_CONFIG_DIR" {
                parts.push(q(&format!("{k}={v}")));
            }
        }
        parts.push(q(&self.claude.to_string_lossy()));
        for (flag, value) in [
            ("--agent-id", format!("{}@{}", self.member, self.team)),
            ("--agent-name", self.member.to_string()),
            ("--team-name", self.team.to_string()),
            ("--agent-color", self.color.to_string()),
            ("--parent-session-id", self.lead_session_id.to_string()),
        ] {
            parts.push(flag.into());
            parts.push(q(&value));
        }
        if let Some(t) = self.agent_type {
            parts.extend(["--agent-type".into(), q(t)]);
        }
        if let Some(m) = self.model {
            parts.extend(["--model".into(), q(m)]);
        }
        parts.extend(self.permission.args());
        parts.extend(self.runtime.iter().map(|w| q(w)));
        if let Some(s) = self.resume {
            parts.extend(["--resume".into(), q(s.as_str())]);
        }
        parts.join(" ")
    }
}

/// The binary used, in the result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClaudeInfo {
    /// Its path.
    pub path: String,
    /// Which rule found it.
    pub found_by: FoundBy,
    /// `claude --version`, when it could be read.
    pub version: Option<String>,
}

/// Single-quotes `s` for a POSIX shell unless it is made only of characters that need none.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_@%+=:,./-".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A start-up dialog that would block a session nobody watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialog {
    /// First-run screens (theme choice, …).
    Onboarding,
    /// "Detected a custom API key … Do you want to use this API key?"
    ApiKey,
    /// "Is this a project you created or one you trust?"
    Trust,
    /// "WARNING: Claude Code running in Bypass Permissions mode".
    Bypass,
    /// A tool asks for permission in the lead's pane.
    PermissionPrompt,
    /// Some other dialog waits for Enter.
    Other,
}

impl Dialog {
    /// Its snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialog::Onboarding => "onboarding",
            Dialog::ApiKey => "api_key",
            Dialog::Trust => "trust",
            Dialog::Bypass => "bypass",
            Dialog::PermissionPrompt => "permission_prompt",
            Dialog::Other => "other",
        }
    }

    /// What it is, for people.
    pub fn title(self) -> &'static str {
        match self {
            Dialog::Onboarding => "the onboarding screens",
            Dialog::ApiKey => "the API key approval",
            Dialog::Trust => "the workspace trust dialog",
            Dialog::Bypass => "the bypass-permissions prompt",
            Dialog::PermissionPrompt => "a permission prompt",
            Dialog::Other => "a dialog",
        }
    }
}

/// The string Claude Code records to approve `key`: its last 20 UTF-16 units after trimming
/// (JavaScript's `key.trim().slice(-20)`); `None` for an empty key.
pub fn approved_key(key: &str) -> Option<String> {
    let key = key.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if key.is_empty() {
        return None;
    }
    let units: Vec<u16> = key.encode_utf16().collect();
    Some(String::from_utf16_lossy(
        &units[units.len().saturating_sub(20)..],
    ))
}
