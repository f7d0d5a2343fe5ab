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
/// Checks the machine and the team's files (the checks are below) and prints one line per
/// finding, OK, WARN or FAIL, each problem followed by `fix: …`, what to do about it. It changes
/// nothing: no lock is taken, no file written or removed, except with --fix: first, every inbox
/// no member reads whose member is certain (the misaddressed check) is moved there, as
/// `teamctl redeliver INBOX` moves it (one `fixed:` line each); then the checks run. Exits 1
/// when any check fails (with `error: doctor found N failing check(s)` on stderr) or a fix
/// failed; warnings alone exit 0.
///
/// With --json: `{"schema_version":1,"checks":[{"check","level","team","path","message",
/// "details","fix"}],"summary":{"ok","warn","fail"},"fixed":[{"team","inbox","to","moved",
/// "already_delivered","error"}]}`; check is one of the names below, level is ok, warn or fail;
/// team, path and fix are null when they do not apply (fix is null exactly for ok); message is
/// one line, and details the items behind it (for claude not found: every place searched, as
/// `<path> (<rule>)`), [] when there are none; fixed lists what --fix moved (counts of entries;
/// error is null when it worked), [] without --fix.
#[derive(Debug, Args)]
#[command(after_long_help = "Checks:
  config_dir    the config dir exists, and where its path came from (--claude-dir,
                $CLAUDE_CONFIG_DIR, the default ~/.claude); FAIL when missing
  claude        the claude binary, found as `create` finds it (TEAMCTL_CLAUDE_BIN,
                CLAUDE_CODE_TEAMMATE_COMMAND, PATH, the usual install places), and its
                --version; WARN when missing, listing every place searched, one per line
  agent_teams   CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS truthy (1, true, yes, on) in the
                environment or in settings.json env; WARN when neither
  start_up_dialogs  the start-up dialogs an unattended Claude Code (run, create, CI) in the
                current directory would stop at: onboarding, API key approval (when
                ANTHROPIC_API_KEY is set), trust of the folder; WARN naming each, with
                `teamctl prepare --cwd <dir>` as the fix (the bypass prompt is only mentioned:
                only --dangerously-skip-permissions needs it)
  tmux          tmux on PATH (pane teammates need it); WARN when missing
  teams         the teams to check: --team, or every folder under teams/; WARN when there
                are none, FAIL when the team given does not exist
  team_config   per team: config.json parses (FAIL if not; FAIL for a session-* team without
                one, which Claude Code treats as deleted; WARN for another team without one)
  format        the inbox format generation, judged as `status` judges it: current (a delivered
                message is deleted: Claude Code 2.1.160 or later; msgV written from 2.1.196) or
                legacy (it stays with read: true: 2.1.159 or earlier); WARN when both appear
  inbox         every inbox parses as an array of objects whose from, text and timestamp are
                strings; FAIL otherwise (Claude Code would read it as empty and overwrite it, or
                drop the entries)
  task          every task file is a valid task; FAIL otherwise
  lock          a lock path that is a file (another tool's; it blocks Claude Code's writers):
                FAIL; a lock directory older than 10 s (its holder died): WARN
  temp_file     leftover *.tmp.* files next to inboxes and tasks: WARN, saying whether teamctl
                cleans it up by itself (docs/design.md, \"Temp files\")
  member_inbox  members in config.json without an inbox file: WARN
  identity      your identity is a member of config.json and not a reserved name, so teammates
                can reply to you; WARN otherwise. It says where the name came from:
                TEAMCTL_FROM, the team-lead default of a team teamctl leads, or the user default
  symlink       symlinks where team files live: the config dir itself, teams/, tasks/ and
                everything below (never followed); FAIL for each below the config dir (teamctl
                refuses the files behind it), WARN for the config dir itself, with what to do.
                Other parts of the config dir (settings.json linked to a dotfiles repository)
                are not looked at
  misaddressed  inboxes of names that are no member of config.json (nor team-lead, user, main,
                system) holding unread messages: Claude Code up to 2.1.178 creates one when a
                teammate writes to a misspelt name, and nobody reads it; WARN each, with the
                member it most likely meant; --fix moves those whose member is certain
  lead_session  leadSessionId names the lead's newest session (by the running lead's
                sessions/<pid>.json, else the newest transcript in its folder holding its
                teammates' messages); WARN otherwise, as after `claude --resume` or /clear
                (anthropics/claude-code#90332, #86174), with how to fix it. Not for a team
                teamctl leads
  idle_unreported  a teammate whose turns end in its transcript but that reports no idle (no
                idle_notification, isActive still true): WARN each (a start-up race is one
                cause; restarting it helps)

Examples:
  teamctl doctor
  teamctl doctor --team my-team --json | jq '.checks[] | select(.level != \"ok\")'
  teamctl doctor --fix")]
pub(crate) struct DoctorArgs {
    /// First move every misaddressed inbox's messages to the member they were certainly meant
    /// for (as `teamctl redeliver`)
    #[arg(long)]
    #[arg(
        help = "First move misaddressed messages where they were meant to go",
        long_help
    )]
    fix: bool,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    checks: &'a [Check],
    summary: Summary,
    fixed: &'a [Fixed],
}

/// One inbox `--fix` moved (or failed to).
#[derive(Serialize)]
struct Fixed {
    team: String,
    inbox: String,
    to: Option<String>,
    moved: usize,
    already_delivered: usize,
    error: Option<String>,
}

#[derive(Serialize)]
struct Summary {
    ok: usize,
    warn: usize,
    fail: usize,
}

pub(crate) fn run(ctx: &Ctx, args: DoctorArgs) -> Result<()> {
    let team = ctx.team_name().map(TeamName::parse).transpose()?;
    let fixed = if args.fix {
        fix(ctx, team.as_ref())?
    } else {
        Vec::new()
    };
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
        records: ctx.records.clone(),
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
            fixed: &fixed,
        })?;
    } else {
        for f in &fixed {
            ctx.out.line(&esc(&fixed_line(f)))?;
        }
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
    if let Some(f) = fixed.iter().find(|f| f.error.is_some()) {
        bail!(
            "doctor --fix could not move {}.json of team {}: {}",
            f.inbox,
            f.team,
            f.error.as_deref().unwrap_or_default()
        );
    }
    Ok(())
}

/// `--fix`: every misaddressed inbox with a certain member, moved there, in the team given or
/// in every team.
fn fix(ctx: &Ctx, team: Option<&TeamName>) -> Result<Vec<Fixed>> {
    let teams = match team {
        Some(t) => vec![t.clone()],
        None => teamctl::team::config::list_teams(&ctx.layout)?,
    };
    let mut out = Vec::new();
    for name in teams {
        // A team that cannot be opened is the checks' to report.
        let Ok(t) = teamctl::team::config::Team::open(&ctx.layout, &name, &ctx.records) else {
            continue;
        };
        let moved = teamctl::ops::redeliver::fix(&t, &ctx.lock, ctx.records.sent_log(), ctx.now);
        for (m, r) in moved {
            out.push(match r {
                Ok(r) => Fixed {
                    team: name.to_string(),
                    inbox: m.inbox,
                    to: r.to,
                    moved: r.moved.appended().len(),
                    already_delivered: r.moved.already().len(),
                    error: None,
                },
                Err(e) => Fixed {
                    team: name.to_string(),
                    inbox: m.inbox,
                    to: m.suggestion,
                    moved: 0,
                    already_delivered: 0,
                    error: Some(format!("{e:#}")),
                },
            });
        }
    }
    Ok(out)
}

fn fixed_line(f: &Fixed) -> String {
    let to = f.to.as_deref().unwrap_or("-");
    match &f.error {
        Some(e) if f.moved + f.already_delivered == 0 => format!(
            "FIX   could not move {}.json (team {}) to {to}: {e}",
            f.inbox, f.team
        ),
        _ => format!(
            "FIX   moved {} message(s) from {}.json to {to} (team {}){}",
            f.moved + f.already_delivered,
            f.inbox,
            f.team,
            f.error
                .as_deref()
                .map(|e| format!("; {e}"))
                .unwrap_or_default()
        ),
    }
}
