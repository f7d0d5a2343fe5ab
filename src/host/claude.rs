//! How Claude Code is launched: the permission flags, the environment a lead passes to what it
//! starts, the binary that was used, and POSIX shell quoting for the command lines.

use serde::Serialize;

use crate::host::resolve::FoundBy;

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
