//! `teamctl resume`: bring a team teamctl leads back after a crash, a reboot or a closed
//! terminal.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;
use serde::Serialize;
use teamctl::ops::resume::{self, Resumed};
use teamctl::store::paths::TeamName;
use teamctl::team::config::Team;

use crate::cli::context::Ctx;
use crate::cli::env;
use crate::cli::going;
use crate::cli::term::escape_line;

/// Start again every teammate of a team that is not running, on its last session
///
/// For a team made by `teamctl create`: every pane teammate whose pane is gone (a crash, a reboot,
/// `tmux kill-server`, a closed terminal) is started again in the team's tmux session with its
/// name, agent id, colour and permission mode, resuming its last session (`claude --resume`), so it
/// keeps its history and reads the messages that came while it was down. The session is on the tmux
/// server `create` recorded, whatever `TMUX` or `TMUX_TMPDIR` say now; once that server is gone (a
/// reboot), on the one they select, recorded in its turn. Only panes of the team's own session on
/// its own server count as running: after a reboot, another server's `%0` is not a teammate. Each
/// is then sent a message naming the task it owns, since a resumed teammate does not take its task
/// up by itself. Teammates whose panes run are left alone; in-process teammates are skipped (they
/// run inside a lead, which teamctl does not run). Where a teammate runs, how and with which
/// permissions come from teamctl's own record of the team, never from what the team's files say.
///
/// A Claude-led team (`teamctl run`) is resumed through its lead: `teamctl run --resume TEAM`.
///
/// Prints one line per member: resumed (with its pane and session), running, skipped or
/// failed, and why. Exit 1 when a teammate could not be resumed.
///
/// With --json: `{"schema_version":1,"team","members":[{"name","action","detail","pane",
/// "session_id"}]}`; action is resumed, running, skipped or failed.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl resume review-42
  teamctl resume --team review-42 --json | jq '.members[] | {name, action}'
  tmux kill-server; teamctl resume review-42; teamctl send alice \"Where were we?\"")]
pub(crate) struct ResumeArgs {
    /// The team [default: --team, or the only team]
    // Its own id: one named `team` hid the global --team from this verb.
    #[arg(id = "resume_team", value_name = "TEAM")]
    team: Option<String>,

    /// The claude binary [default: found on PATH and in the usual install places]
    #[arg(long, value_name = "PATH", env = env::CLAUDE_BIN)]
    #[arg(help = "The claude binary", long_help)]
    claude_bin: Option<PathBuf>,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    members: &'a [Resumed],
}

pub(crate) fn run(ctx: &Ctx, args: ResumeArgs) -> Result<()> {
    let team = match &args.team {
        Some(name) => Team::open(&ctx.layout, &TeamName::parse(name)?, &ctx.records)?,
        None => ctx.team()?,
    };
    let clock = || ctx.clock();
    let restarts = Some(args.claude_bin.clone());
    let rescue = going::rescue(ctx, &team, &ctx.identity(&team), restarts, &clock)?;
    let members = resume::resume(&team, &rescue)?;
    if ctx.out.json {
        ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            members: &members,
        })?;
    } else {
        for m in &members {
            ctx.out.line(&format!(
                "{}: {}: {}",
                escape_line(&m.name),
                m.action,
                escape_line(&m.detail)
            ))?;
        }
        if members.is_empty() {
            ctx.out.line("no teammates to resume")?;
        }
    }
    let failed: Vec<&str> = members
        .iter()
        .filter(|m| m.action == "failed")
        .map(|m| m.name.as_str())
        .collect();
    if !failed.is_empty() {
        bail!("could not resume {}", failed.join(", "));
    }
    Ok(())
}
