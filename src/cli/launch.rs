//! What `create` and `run` share: the permission flags and the environment given to the
//! Claude Code sessions they start.

use std::path::PathBuf;

use clap::Args;
use teamctl::host::claude::{ClaudeEnv, Permission};

use crate::cli::env;

/// The permission flags of the sessions teamctl starts.
#[derive(Debug, Args)]
pub(crate) struct PermissionArgs {
    /// Permission mode for the Claude Code sessions teamctl starts (--permission-mode; a
    /// lead's teammates inherit its mode)
    #[arg(
        long,
        value_name = "MODE",
        conflicts_with = "dangerously_skip_permissions"
    )]
    #[arg(
        help = "Permission mode for the Claude Code sessions teamctl starts",
        long_help
    )]
    permission_mode: Option<String>,

    /// Start them with --dangerously-skip-permissions
    #[arg(long)]
    dangerously_skip_permissions: bool,
}

impl PermissionArgs {
    /// The permission the flags give, `None` when neither is given.
    pub(crate) fn given(&self) -> Option<Permission> {
        (self.permission_mode.is_some() || self.dangerously_skip_permissions)
            .then(|| self.permission())
    }

    pub(crate) fn permission(&self) -> Permission {
        Permission::from_flags(
            self.permission_mode.as_deref(),
            self.dangerously_skip_permissions,
        )
    }
}

/// `claude` (from `--claude-bin`, `CLAUDE_CODE_TEAMMATE_COMMAND`, `PATH` and the home
/// directory) and the variables to pass on, read from this process's environment.
pub(crate) fn claude_env(claude_bin: Option<PathBuf>) -> ClaudeEnv {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    ClaudeEnv::new(
        claude_bin,
        var(env::TEAMMATE_COMMAND).map(PathBuf::from),
        std::env::var_os("PATH"),
        dirs::home_dir(),
        &var,
    )
}
