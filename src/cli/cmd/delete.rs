//! `teamctl delete`: shut down a team teamctl leads and remove its files.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::ops::delete::{self, Deleting, MemberShutdown, Record, TakenDown};
use teamctl::store::paths::TeamName;
use teamctl::time;

use crate::cli::context::Ctx;
use crate::cli::output::warn;
use crate::cli::record::{RecordJson, summary_line};
use crate::cli::term::escape_line as esc;

/// Shut down a team teamctl created and remove its files
///
/// For a team made by `teamctl create`: each teammate whose pane is alive gets a
/// shutdown_request from team-lead, as a Claude Code lead sends it (teamctl passes no
/// --lead-verify-key, so its teammates accept it); teamctl waits up to --timeout for each
/// shutdown_approved in team-lead.json or for the pane to end, kills the tmux session
/// teamctl-<team>, waits (at most 5 s) until the processes that ran in its panes have exited (a
/// teammate still exiting could write into the team folder again), then removes teams/<team> and
/// tasks/<team> (each renamed to `<name>.deleted-<uuid>` first, as Claude Code does). A team
/// folder without config.json (a failed create) is just removed.
///
/// Whether teamctl leads the team, and which tmux session it kills, come from the record `create`
/// kept in teamctl's data dir (TEAMCTL_DATA_DIR), never from config.json, which teammates write
/// too: only the session teamctl-<team> that create started (the same tmux session, by its id, on
/// the tmux server it recorded, whatever TMUX or TMUX_TMPDIR say now) is killed. A team teamctl
/// does not lead (its Claude Code lead owns it, or it was created with another data dir: delete it
/// with that one) is refused unless --force; then nobody is asked, no tmux session is killed, and
/// only the folders are removed.
///
/// Teammates that `create` gave a git worktree: each worktree without uncommitted changes and
/// without git-ignored files is removed (`git worktree remove`); one with changes is kept and
/// named with why, and so is one with ignored files (build output, `.env`, notes), which
/// --force removes with them; every branch is kept, so committed work stays reachable (`git
/// branch -D` removes one).
///
/// With --export PATH, a record of the team (see `teamctl export`) is written after the
/// teammates are stopped and before the folders are removed, so their last answers are in it;
/// when it cannot be written, the folders are left in place (exit 1).
///
/// Prints one line per teammate (approved, exited, timeout, or not_running: not asked) and the
/// folders removed. With --json: `{"schema_version":1,"team","members":[{"name","shutdown"}],
/// "tmux_session","removed":[paths],"export","worktrees":[{"member","path","branch","action",
/// "reason"}]}`; action is removed, kept or missing; shutdown is approved, exited, timeout or
/// not_running; tmux_session is the session killed, or null; export is the record written
/// (`{"out","format","files","bytes","size","messages","transcripts","warnings","error"}`), or
/// null.
#[derive(Debug, Args)]
pub(crate) struct DeleteArgs {
    /// The team to delete
    #[arg(value_name = "TEAM")]
    name: String,

    /// How long to wait for the teammates to approve the shutdown
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    #[arg(help = "How long teammates get to approve the shutdown", long_help)]
    timeout: String,

    /// The reason given in the shutdown request
    #[arg(
        long,
        value_name = "TEXT",
        default_value = "teamctl delete: the team is being removed"
    )]
    #[arg(help = "The reason given in the shutdown request", long_help)]
    reason: String,

    /// Also remove a team teamctl does not lead (its teammates are not asked), and worktrees
    /// with git-ignored files (which are lost)
    #[arg(long)]
    #[arg(help = "Also remove a team teamctl does not lead", long_help)]
    force: bool,

    /// Write a record of the team first (as `teamctl export --out PATH`), after its teammates
    /// are stopped and before its folders are removed; if it cannot be written, nothing is
    /// removed
    #[arg(long, value_name = "PATH")]
    #[arg(help = "Write a record of the team first", long_help)]
    export: Option<PathBuf>,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    members: &'a [MemberShutdown],
    tmux_session: Option<&'a str>,
    removed: Vec<String>,
    export: Option<RecordJson>,
    worktrees: &'a [TakenDown],
}

pub(crate) fn run(ctx: &Ctx, args: DeleteArgs) -> Result<()> {
    let name = TeamName::parse(&args.name)?;
    let timeout = time::parse_duration(&args.timeout)?;
    let sent = ctx.sent();
    let deleting = Deleting {
        team: &name,
        reason: &args.reason,
        timeout,
        force: args.force,
        record: args
            .export
            .as_deref()
            .map(|out| Record { out, sent: &sent }),
    };
    let d = delete::delete(&ctx.layout, deleting, &ctx.records, ctx.now, &ctx.lock)?;
    if let Some(e) = &d.export {
        for w in &e.warnings {
            warn(w);
        }
    }
    let removed: Vec<String> = d.removed.iter().map(|p| p.display().to_string()).collect();
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            team: name.as_str(),
            members: &d.members,
            tmux_session: d.tmux_session.as_deref(),
            removed,
            export: d.export.as_ref().map(|e| RecordJson::of(Ok(e))),
            worktrees: &d.worktrees,
        });
    }
    for m in &d.members {
        let how = serde_json::to_value(m.shutdown)?;
        ctx.out.line(&format!(
            "teammate {}: {}",
            esc(&m.name),
            how.as_str().unwrap_or("")
        ))?;
    }
    if let Some(s) = &d.tmux_session {
        ctx.out.line(&format!("killed tmux session {}", esc(s)))?;
    }
    if let Some(e) = &d.export {
        ctx.out
            .line(&format!("record written to {}", summary_line(e)))?;
    }
    for r in &removed {
        ctx.out.line(&format!("removed {}", esc(r)))?;
    }
    for w in &d.worktrees {
        ctx.out.line(&format!(
            "worktree of {} {}: {} ({})",
            esc(&w.member),
            w.action,
            esc(&w.path),
            esc(&w.reason)
        ))?;
    }
    ctx.out.line(&format!("deleted team {name}"))
}
