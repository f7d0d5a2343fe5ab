//! `teamctl tasks claim`.

use anyhow::Result;
use clap::Args;
use teamctl::store::paths::MemberName;
use teamctl::team::tasks;

use super::assign::{TaskJson, view_now};
use crate::cli::context::Ctx;
use crate::cli::term::escape_line as esc;

/// Claim a task: become its owner and set it in_progress
///
/// Claude Code's claim rules, checked under the task's lock so two claimers cannot both win:
/// refused (exit 1) when someone else owns it (already_claimed), when it is completed
/// (already_resolved), or when an existing task in its blockedBy is not completed (blocked).
/// Claiming as team-lead in a team teamctl does not lead, or as system, is refused (exit 2)
/// without --force.
/// With --json: `{"schema_version":1,"team","task":{…}}`.
#[derive(Debug, Args)]
pub(crate) struct ClaimArgs {
    /// Task id (3 or #3)
    #[arg(value_name = "ID")]
    id: String,

    /// Claim as NAME [default: your identity: TEAMCTL_FROM, else team-lead in a team teamctl
    /// leads, else user]
    #[arg(long = "as", value_name = "NAME")]
    #[arg(help = "Claim as NAME [default: your identity]", long_help)]
    who: Option<String>,

    /// Claim as team-lead in a team teamctl does not lead, or as system (refused otherwise:
    /// that is someone else's name)
    #[arg(long)]
    #[arg(
        help = "Claim as team-lead in a team teamctl does not lead, or as system",
        long_help
    )]
    force: bool,
}

pub(crate) fn run(ctx: &Ctx, args: ClaimArgs) -> Result<()> {
    let id = tasks::parse_id(&args.id)?;
    let team = ctx.team()?;
    let who = MemberName::parse(&args.who.unwrap_or_else(|| ctx.identity(&team)))?;
    team.check_sender(&who, args.force)?;
    let task = tasks::claim(
        &team.layout.tasks_dir(&team.name),
        &id,
        who.as_str(),
        &ctx.lock,
    )?;
    if ctx.out.json {
        let view = view_now(&team, &task)?;
        return ctx.out.json(&TaskJson {
            schema_version: 1,
            team: team.name.as_str(),
            task: view,
            extra: (),
        });
    }
    ctx.out.line(&format!(
        "claimed task #{id} as {who}: {}",
        esc(&task.subject)
    ))
}
