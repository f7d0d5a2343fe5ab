//! Environment variables teamctl reads (listed in `teamctl --help`, "Environment"; the
//! test-only ones in docs/development.md).

/// The Claude config dir, as Claude Code itself reads it.
pub(crate) const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
/// Default team.
pub(crate) const TEAM: &str = "TEAMCTL_TEAM";
/// Your identity: the sender of `send`, the inbox `inbox` reads by default.
pub(crate) const FROM: &str = "TEAMCTL_FROM";
/// Default lock deadline.
pub(crate) const LOCK_TIMEOUT: &str = "TEAMCTL_LOCK_TIMEOUT";
/// The claude binary `create` starts teammates with.
pub(crate) const CLAUDE_BIN: &str = "TEAMCTL_CLAUDE_BIN";
/// The bubblewrap binary sandboxed teammates run in (else `bwrap` on `PATH`).
pub(crate) const BWRAP_BIN: &str = "TEAMCTL_BWRAP_BIN";
/// Set by `run --sandbox` for the `run` it starts again inside: the file of the sandbox's
/// rules (never set it yourself).
pub(crate) const RUN_SANDBOX: &str = "TEAMCTL_RUN_SANDBOX";
/// Claude Code's own override of the teammate binary (read, never set).
pub(crate) const TEAMMATE_COMMAND: &str = "CLAUDE_CODE_TEAMMATE_COMMAND";
/// The `gh` binary `pr` runs (else `gh` on `PATH`).
pub(crate) const GH_BIN: &str = "TEAMCTL_GH_BIN";
// The secret of each chat transport (`TEAMCTL_TELEGRAM_TOKEN`, `TEAMCTL_SLACK_TOKEN`,
// `TEAMCTL_WEBHOOK_SECRET`) is named by the transport itself (`ops::chat::Transport::secret`),
// so a new transport brings its own; the bridge's flags read it (cli/bridging.rs).
/// The access token of `serve` (only ever from the environment; else one is made).
pub(crate) const SERVE_TOKEN: &str = "TEAMCTL_SERVE_TOKEN";
/// Where teamctl keeps its sent log.
pub(crate) const DATA_DIR: &str = "TEAMCTL_DATA_DIR";
/// Test hook: the clock (RFC 3339), like jj's `JJ_TIMESTAMP`.
pub(crate) const NOW: &str = "TEAMCTL_NOW";
/// Test hook: fault injection for crash tests (`before_lock=200ms,after_lock=200ms,
/// before_rename=1s,before_verify=2s,fail_write`). Never set it in production.
pub(crate) const TEST_FAULTS: &str = "TEAMCTL_TEST_FAULTS";
/// Test hook: set (not empty, not `0`), the portable probes of the machine (`ps`, `kill`, file
/// notifications as FSEvents gives them) are used on Linux too, as on macOS.
pub(crate) const PORTABLE: &str = "TEAMCTL_PORTABLE";
/// Set and not empty: no colour in `top` (https://no-color.org).
pub(crate) const NO_COLOR: &str = "NO_COLOR";
/// The terminal type; `dumb` means `top` cannot draw.
pub(crate) const TERM: &str = "TERM";
