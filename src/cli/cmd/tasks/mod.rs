//! `teamctl tasks`: the team's shared task list. One file per subcommand; what they share is in
//! `assign.rs`.

mod add;
mod assign;
mod claim;
mod done;
mod list;
mod rm;
mod show;
mod update;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::cli::context::Ctx;

/// Show and change the team's shared task list
///
/// The task list is tasks/<team>/<id>.json, shared by the whole team. Without a subcommand this
/// lists it (see `teamctl tasks list --help`). Changes take the same locks as Claude Code: the
/// list lock (.lock.lock) to allocate an id or delete, the task's own lock (<id>.json.lock) for
/// everything else. "blocked" and "ready" are computed, never stored. Ids are numbers, given as
/// `3` or `#3`. A new owner (add --owner, update --owner) is mailed a task_assignment frame, as
/// Claude Code does, unless you assign yourself; an owner that is not a member of config.json
/// needs --force.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_value_name = "ACTION"
)]
pub(crate) struct TasksArgs {
    #[command(subcommand)]
    command: Option<TasksCommand>,

    #[command(flatten)]
    list: list::ListArgs,
}

#[derive(Debug, Subcommand)]
enum TasksCommand {
    List(list::ListArgs),
    Show(show::ShowArgs),
    Add(add::AddArgs),
    Update(update::UpdateArgs),
    Claim(claim::ClaimArgs),
    Done(done::DoneArgs),
    Rm(rm::RmArgs),
}

pub(crate) fn run(ctx: &Ctx, args: TasksArgs) -> Result<()> {
    match args.command {
        None => list::run(ctx, args.list),
        Some(TasksCommand::List(a)) => list::run(ctx, a),
        Some(TasksCommand::Show(a)) => show::run(ctx, a),
        Some(TasksCommand::Add(a)) => add::run(ctx, a),
        Some(TasksCommand::Update(a)) => update::run(ctx, a),
        Some(TasksCommand::Claim(a)) => claim::run(ctx, a),
        Some(TasksCommand::Done(a)) => done::run(ctx, a),
        Some(TasksCommand::Rm(a)) => rm::run(ctx, a),
    }
}
