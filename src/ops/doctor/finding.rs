//! A finding ([`Check`]) and how bad it is ([`Level`]), with the three ways the checks make one.

use std::path::Path;

use serde::Serialize;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Fine.
    Ok,
    /// Works, but something is off or missing.
    Warn,
    /// Broken: Claude Code or teamctl will lose data or fail.
    Fail,
}

/// One finding (`doctor --json` `checks[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Which check: `config_dir`, `symlink`, `teams`, `team_config`, `format`, `claude`,
    /// `agent_teams`, `start_up_dialogs`, `tmux`, `lock`, `temp_file`, `inbox`, `task`, `member_inbox`, `identity`,
    /// `misaddressed`, `lead_session`, `idle_unreported`.
    pub check: &'static str,
    /// The verdict.
    pub level: Level,
    /// The team it is about, if any.
    pub team: Option<String>,
    /// The file it is about, if any.
    pub path: Option<String>,
    /// What was found, one line.
    pub message: String,
    /// The items behind the message, one per entry (e.g. every place searched for `claude`);
    /// `[]` when there are none.
    pub details: Vec<String>,
    /// What to do, when there is something to do.
    pub fix: Option<String>,
}

/// Check `c`, at `level`, about `team` and `path` where given, saying `message`; no fix.
fn check(
    c: &'static str,
    level: Level,
    team: Option<&str>,
    path: Option<&Path>,
    message: String,
) -> Check {
    Check {
        check: c,
        level,
        team: team.map(String::from),
        path: path.map(|p| p.display().to_string()),
        message,
        details: Vec::new(),
        fix: None,
    }
}

pub(super) fn ok(
    c: &'static str,
    team: Option<&str>,
    path: Option<&Path>,
    message: String,
) -> Check {
    check(c, Level::Ok, team, path, message)
}

pub(super) fn warn(
    c: &'static str,
    team: Option<&str>,
    path: Option<&Path>,
    message: String,
    fix: &str,
) -> Check {
    Check {
        fix: Some(fix.to_string()),
        ..check(c, Level::Warn, team, path, message)
    }
}

pub(super) fn fail(
    c: &'static str,
    team: Option<&str>,
    path: Option<&Path>,
    message: String,
    fix: &str,
) -> Check {
    Check {
        fix: Some(fix.to_string()),
        ..check(c, Level::Fail, team, path, message)
    }
}
