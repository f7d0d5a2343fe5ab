//! `teamctl doctor`: check this machine and a team's files, line by line.

use std::path::PathBuf;
use std::time::SystemTime;

use anyhow::{Result, bail};
use clap::Args;
use serde::Serialize;
use teamctl::ops::doctor::{self, AGENT_TEAMS_VAR, Check, Inputs, Level};
use teamctl::store::paths::TeamName;

use crate::cli::context::Ctx;
use crate::cli::env;
use crate::cli::term::escape_line as esc;

/// Check the setup and a team's files, and say what to fix
///
/// Prints one line per finding, OK, WARN or FAIL, each problem followed by what to do: the
/// config dir (and where its path came from), the claude binary (found as `create` finds it)
/// and its version, whether agent
/// teams are enabled (CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS in the environment or in
/// settings.json), the start-up dialogs an unattended Claude Code in the current directory
/// would stop at (onboarding, API key approval, trust; fixed by `teamctl prepare`), tmux; then per team (--team, or every team): config.json, the inbox format
/// generation (legacy read-flag inboxes or current draining ones), corrupt or schema-invalid
/// inboxes and tasks (Claude Code would silently drop or overwrite them), stale locks and lock
/// paths that are files (another tool's, they block Claude Code's writers), leftover temp
/// files, members without an inbox file, whether your identity (TEAMCTL_FROM) is a member
/// teammates can reply to, and symlinks where team files live (the config dir, teams/, tasks/
/// and below: through a symlink Claude Code's writers can miss each other's locks).
///
/// It changes nothing: no lock is taken, no file written or removed. Exits 1 when any check
/// fails (warnings alone exit 0).
///
/// With --json: {"schema_version":1,"checks":[{"check","level","team","path","message",
/// "details","fix"}],
/// "summary":{"ok","warn","fail"}}; "level" is "ok", "warn" or "fail".
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl doctor
  teamctl doctor --team my-team --json | jq '.checks[] | select(.level != \"ok\")'")]
pub(crate) struct DoctorArgs {}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    checks: &'a [Check],
    summary: Summary,
}

#[derive(Serialize)]
struct Summary {
    ok: usize,
    warn: usize,
    fail: usize,
}

pub(crate) fn run(ctx: &Ctx, _args: DoctorArgs) -> Result<()> {
    let team = ctx.team_name().map(TeamName::parse).transpose()?;
    let inputs = Inputs {
        layout: ctx.layout.clone(),
        layout_source: ctx.layout_source.clone(),
        team,
        identity: ctx.identity_env().map(String::from),
        claude: teamctl::host::resolve::Inputs::new(
            std::env::var_os(env::CLAUDE_BIN)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            std::env::var_os(env::TEAMMATE_COMMAND)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from),
            std::env::var_os("PATH"),
            dirs::home_dir(),
        ),
        path_var: std::env::var_os("PATH"),
        agent_teams_env: std::env::var(AGENT_TEAMS_VAR).ok(),
        now: SystemTime::now(),
        claude_json: ctx.claude_json().ok(),
        api_key: std::env::var("ANTHROPIC_API_KEY").ok(),
        cwd: std::env::current_dir().unwrap_or_default(),
        sent: ctx.sent(),
    };
    let checks = doctor::run(&inputs);
    let count = |l: Level| checks.iter().filter(|c| c.level == l).count();
    let summary = Summary {
        ok: count(Level::Ok),
        warn: count(Level::Warn),
        fail: count(Level::Fail),
    };
    let failed = summary.fail;
    if ctx.out.json {
        ctx.out.json(&Json {
            schema_version: 1,
            checks: &checks,
            summary,
        })?;
    } else {
        for c in &checks {
            let level = match c.level {
                Level::Ok => "OK",
                Level::Warn => "WARN",
                Level::Fail => "FAIL",
            };
            ctx.out.line(&format!("{level:<4}  {}", esc(&c.message)))?;
            for d in &c.details {
                ctx.out.line(&format!("      - {}", esc(d)))?;
            }
            if let Some(fix) = &c.fix {
                ctx.out.line(&format!("      fix: {}", esc(fix)))?;
            }
        }
        ctx.out.line(&format!(
            "\n{} ok, {} warning(s), {} failure(s)",
            summary.ok, summary.warn, summary.fail
        ))?;
    }
    if failed > 0 {
        bail!("doctor found {failed} failing check(s)");
    }
    Ok(())
}
