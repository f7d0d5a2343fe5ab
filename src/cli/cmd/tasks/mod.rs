//! `teamctl tasks`: the team's shared task list. One file per subcommand.

mod add;
mod claim;
mod done;
mod list;
mod rm;
mod show;
mod update;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde::Serialize;
use serde_json::{Map, Value};
use teamctl::store::paths::MemberName;
use teamctl::team::config::Team;
use teamctl::team::mailbox::{self, Delivery};
use teamctl::team::tasks::{Board, Task, TaskView};
use teamctl::time::iso_millis;

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

/// `{"schema_version":1,"team":…,"task":{…}, …}`: what every changing subcommand prints.
#[derive(Serialize)]
struct TaskJson<'a, X: Serialize> {
    schema_version: u32,
    team: &'a str,
    task: TaskView,
    #[serde(flatten)]
    extra: X,
}

/// The view of `task` against the current list.
fn view_now(team: &Team, task: &Task) -> Result<TaskView> {
    let board = Board::load(&team.layout.tasks_dir(&team.name))?;
    Ok(board.view(task))
}

/// Before a task gets a new owner: the `task_assignment` that follows is written as you, so you
/// must be someone teamctl may write as (see `Team::check_sender`); checked before any file is
/// touched.
fn check_assigner(ctx: &Ctx, team: &Team, owner: &MemberName, force: bool) -> Result<()> {
    let me = MemberName::parse(&ctx.identity(team))?;
    if &me != owner {
        team.check_sender(&me, force)?;
    }
    Ok(())
}

/// Mails `task_assignment` to the task's new owner, as Claude Code does after setting one
/// (not when you assign a task to yourself).
fn mail_assignment(ctx: &Ctx, team: &Team, task: &Task, force: bool) -> Result<Option<Delivery>> {
    let Some(owner) = &task.owner else {
        return Ok(None);
    };
    let owner = MemberName::parse(owner)?;
    let me = MemberName::parse(&ctx.identity(team))?;
    if owner == me {
        return Ok(None);
    }
    team.check_recipient(&owner, force)?;
    let mut frame = Map::new();
    frame.insert("type".into(), "task_assignment".into());
    frame.insert("taskId".into(), task.id.clone().into());
    frame.insert("subject".into(), task.subject.clone().into());
    frame.insert("description".into(), task.description.clone().into());
    frame.insert("assignedBy".into(), me.to_string().into());
    frame.insert("timestamp".into(), Value::String(iso_millis(ctx.now)));
    mailbox::send_frame(
        team,
        &owner,
        &me,
        &frame,
        ctx.now,
        &ctx.lock,
        ctx.sent_log.as_ref(),
    )
    .with_context(|| format!("task #{} was saved, but {owner} was not told", task.id))
    .map(|d| {
        if let Some(e) = &d.log_error {
            crate::cli::output::warn(e);
        }
        Some(d)
    })
}

/// ` (assigned to alice, told in …/alice.json)` after a mailed assignment, else nothing.
fn assigned(mail: Option<&Delivery>) -> String {
    mail.map(|d| {
        format!(
            " (assigned to {}, told in {})",
            crate::cli::term::escape_line(&d.to),
            crate::cli::term::escape_line(&d.inbox.display().to_string())
        )
    })
    .unwrap_or_default()
}

/// `#1, #3`, or `-` when empty.
fn id_list(ids: &[String]) -> String {
    if ids.is_empty() {
        return "-".into();
    }
    ids.iter()
        .map(|i| format!("#{}", crate::cli::term::escape_line(i)))
        .collect::<Vec<_>>()
        .join(", ")
}
