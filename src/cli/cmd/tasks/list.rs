//! `teamctl tasks list` (also plain `teamctl tasks`).

use anyhow::Result;
use clap::Args;
use clap::builder::PossibleValuesParser;
use serde::Serialize;
use teamctl::team::tasks::{Board, STATUSES, TaskView};

use super::assign::id_list;
use crate::cli::context::Ctx;
use crate::cli::output::warn;

/// List the team's tasks, with what is ready and what is blocked
///
/// Prints a table (id, status such as `pending (ready)` or `pending (blocked)`, owner, subject,
/// open blockers), ids in numeric order. --mine means owned by your identity. "ready" means
/// pending, no owner and not blocked; "blocked" means some id in blockedBy is an existing task
/// that is not completed. Files that are not valid tasks are reported on stderr and left alone;
/// tasks with a truthy metadata._internal are hidden unless --all.
///
/// With --json: `{"schema_version":1,"team","tasks":[{"id","subject","description",
/// "active_form","status","owner","blocks","blocked_by","blocked","open_blockers","ready",
/// "metadata"}]}`; open_blockers are the ids that block it now. The other tasks subcommands
/// print the task with these keys too.
#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Only tasks with this status
    #[arg(long, value_name = "STATUS", value_parser = PossibleValuesParser::new(STATUSES))]
    #[arg(help = "Only tasks with this status", long_help)]
    status: Option<String>,

    /// Only tasks owned by NAME
    #[arg(long, value_name = "NAME")]
    owner: Option<String>,

    /// Only tasks owned by you (your identity: TEAMCTL_FROM, else team-lead in a team teamctl
    /// leads, else user)
    #[arg(long, conflicts_with = "owner")]
    #[arg(help = "Only tasks owned by you (your identity)", long_help)]
    mine: bool,

    /// Only tasks ready to be picked up
    #[arg(long)]
    ready: bool,

    /// Only blocked tasks
    #[arg(long)]
    blocked: bool,

    /// Include Claude Code's internal tasks (metadata._internal)
    #[arg(long)]
    all: bool,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    tasks: Vec<TaskView>,
}

pub(crate) fn run(ctx: &Ctx, args: ListArgs) -> Result<()> {
    let team = ctx.team()?;
    let board = Board::load(&team.layout.tasks_dir(&team.name))?;
    for s in &board.skipped {
        warn(&format!(
            "skipped {}: {} (left unchanged)",
            s.path.display(),
            s.reason
        ));
    }
    let owner = if args.mine {
        Some(ctx.identity(&team))
    } else {
        args.owner.clone()
    };
    let tasks: Vec<TaskView> = board
        .tasks
        .iter()
        .filter(|t| args.all || !t.is_internal())
        .map(|t| board.view(t))
        .filter(|v| args.status.as_ref().is_none_or(|s| *s == v.status))
        .filter(|v| owner.is_none() || v.owner == owner)
        .filter(|v| !args.ready || v.ready)
        .filter(|v| !args.blocked || v.blocked)
        .collect();
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            tasks,
        });
    }
    if tasks.is_empty() {
        return ctx.out.line("no tasks");
    }
    let mut rows = vec![
        ["ID", "STATUS", "OWNER", "SUBJECT", "BLOCKED BY"]
            .map(String::from)
            .to_vec(),
    ];
    for t in &tasks {
        let status = match (t.ready, t.blocked) {
            (true, _) => format!("{} (ready)", t.status),
            (_, true) => format!("{} (blocked)", t.status),
            _ => t.status.clone(),
        };
        let owner = t.owner.clone().unwrap_or_else(|| "-".into());
        rows.push(vec![
            format!("#{}", t.id),
            status,
            owner,
            t.subject.clone(),
            id_list(&t.open_blockers),
        ]);
    }
    ctx.out.table(rows)
}
