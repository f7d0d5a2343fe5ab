//! What to create: the team, its teammates with their briefs and their own settings (model,
//! agent type, permission, worktree), how they are started; the checks on the teammates and the
//! member file's lines.

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::error::usage;
use crate::host::claude::{ClaudeEnv, Permission};
use crate::sandbox::Wish;
use crate::store::lock::LockOptions;
use crate::store::paths::{Layout, MemberName, TeamName};
use crate::team::lead::Leads;
use crate::team::model::Color;
use crate::team::runtime::{Runtime, Vars};

/// One teammate to create.
#[derive(Debug, Clone)]
pub struct MemberSpec {
    /// Its name.
    pub name: MemberName,
    /// Its brief: the first message in its inbox, from `team-lead`.
    pub brief: String,
    /// `--model`, if any.
    pub model: Option<String>,
    /// `agentType` / `--agent-type` [default in `config.json`: `general-purpose`].
    pub agent_type: Option<String>,
    /// Its permission flags.
    pub permission: Permission,
    /// Its own MCP servers, settings, effort and env (a team file's `runtime` keys).
    pub runtime: Runtime,
    /// Its own git worktree, if it gets one.
    pub worktree: Option<Branch>,
    /// Its sandbox, if it is confined (`sandbox = true`, `--sandbox`): what it asks beyond
    /// the rules every sandbox has (docs/sandbox.md).
    pub sandbox: Option<Wish>,
}

impl MemberSpec {
    /// A teammate with Claude Code's defaults: no model, no agent type, no permission flag, no
    /// worktree.
    pub fn new(name: MemberName, brief: String) -> MemberSpec {
        MemberSpec {
            name,
            brief,
            model: None,
            agent_type: None,
            permission: Permission::Default,
            runtime: Runtime::default(),
            worktree: None,
            sandbox: None,
        }
    }
}

/// The branch of a teammate's worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Branch {
    /// `teamctl/<team>/<member>`, made from the working directory's `HEAD`.
    Default,
    /// This branch: checked out if it exists, else made from `HEAD`.
    Named(String),
}

/// Whether and how teammates are started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Launch {
    /// One window per teammate in a detached tmux session `teamctl-<team>`.
    Tmux,
    /// Stop after provisioning.
    None,
}

/// What to create.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The team.
    pub team: TeamName,
    /// `description` in `config.json`.
    pub description: Option<String>,
    /// The teammates' working directory (absolute); a teammate with a worktree runs in it
    /// instead.
    pub cwd: PathBuf,
    /// The teammates, in order (colours follow this order), each with its own settings.
    pub members: Vec<MemberSpec>,
    /// Whether to start the teammates.
    pub launch: Launch,
}

impl Spec {
    /// Whether any teammate skips the permission prompts (Claude Code then shows its bypass
    /// dialog).
    pub fn bypasses(&self) -> bool {
        self.members.iter().any(|m| m.permission.bypasses())
    }
}

/// What launching needs beyond the spec: where to find `claude` and the environment to give it.
#[derive(Debug, Clone)]
pub struct LaunchEnv {
    /// The binary and the variables.
    pub claude: ClaudeEnv,
    /// How long to wait for the teammates to start.
    pub timeout: Duration,
    /// How long `claude --version` (and `--help`) may take.
    pub version_timeout: Duration,
    /// The variables of teamctl's environment the teammates' `env` takes (`${NAME}`).
    pub vars: Vars,
    /// How `teamctl prepare` would write Claude Code's settings here: teammates' worktrees get
    /// the workspace trust their team's folder has (`worktree::trust`); `None` leaves
    /// them untrusted.
    pub trust: Option<crate::ops::prepare::Request>,
    /// The sandbox engine named for this run (`TEAMCTL_BWRAP_BIN`), else the system's own.
    pub sandbox_bin: Option<PathBuf>,
}

/// What a create works from: where the team goes, what it is, how its teammates are started
/// (`None`: `--launch none`), teamctl's record of the teams it leads, the time written into
/// the team and how long to wait for a lock.
#[derive(Debug, Clone, Copy)]
pub struct Creating<'a> {
    /// The config dir.
    pub layout: &'a Layout,
    /// The team as asked for.
    pub spec: &'a Spec,
    /// How its teammates are started, when they are.
    pub launch: Option<&'a LaunchEnv>,
    /// teamctl's record of the teams it leads (where it records this one).
    pub leads: &'a Leads,
    /// The time written into the team.
    pub now: DateTime<Utc>,
    /// How long to wait for a lock.
    pub lock: &'a LockOptions,
}

/// The palette colour of the `i`-th teammate: blue first, as a lead that took red (spec §8.5).
pub fn color_of(i: usize) -> Color {
    Color::ALL[(i + 1) % Color::ALL.len()]
}

/// Checks the teammates: at least one, valid names that Claude Code does not reserve, unique
/// (ignoring case, since inbox files may live on a case-insensitive file system), a brief each.
///
/// # Errors
/// A usage error naming the problem.
pub fn validate_members(members: &[MemberSpec]) -> Result<()> {
    if members.is_empty() {
        return Err(usage(
            "a team needs at least one member: --member NAME:BRIEF or --member-file FILE",
        ));
    }
    let mut seen = HashSet::new();
    for m in members {
        if m.name.is_reserved() {
            return Err(usage(format!(
                "member name '{}' is reserved by Claude Code (main, team-lead, user, system); \
                 pick another",
                m.name
            )));
        }
        if !seen.insert(m.name.as_str().to_ascii_lowercase()) {
            return Err(usage(format!("member '{}' is given twice", m.name)));
        }
        if m.brief.trim().is_empty() {
            return Err(usage(format!("member '{}' has an empty brief", m.name)));
        }
    }
    Ok(())
}

/// Parses a member file: one `name: brief` per line; blank lines and lines starting with `#`
/// are skipped; name and brief are trimmed.
///
/// # Errors
/// A usage error naming the first line without a `:`.
pub fn parse_member_lines(text: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (n, b) = line
            .split_once(':')
            .ok_or_else(|| usage(format!("line {}: expected `name: brief`", i + 1)))?;
        out.push((n.trim().to_string(), b.trim().to_string()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_lines() {
        let got = parse_member_lines("# c\n\nalice: Review: auth  \n bob :tests\n").unwrap();
        assert_eq!(
            got,
            [
                ("alice".to_string(), "Review: auth".to_string()),
                ("bob".to_string(), "tests".to_string())
            ]
        );
        let err = parse_member_lines("alice: x\nbob\n").unwrap_err();
        assert_eq!(err.to_string(), "line 2: expected `name: brief`");
    }

    #[test]
    fn colours_start_at_blue() {
        let c: Vec<&str> = (0..9).map(|i| color_of(i).as_str()).collect();
        assert_eq!(
            c,
            [
                "blue", "green", "yellow", "purple", "orange", "pink", "cyan", "red", "blue"
            ]
        );
    }
}
