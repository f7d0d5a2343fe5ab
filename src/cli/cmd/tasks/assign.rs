//! What the subcommands of `tasks` share: a task as `--json` shows it, the board read now, task
//! ids from the command line, and the assignment of a task to a new owner (checked, and mailed
//! as Claude Code does).

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::{Map, Value};
use teamctl::store::paths::MemberName;
use teamctl::team::config::Team;
use teamctl::team::mailbox::{self, Delivery};
use teamctl::team::tasks::{Board, Task, TaskView};
use teamctl::time::iso_millis;

use crate::cli::context::Ctx;

/// `{"schema_version":1,"team":…,"task":{…}, …}`: what every changing subcommand prints.
#[derive(Serialize)]
pub(super) struct TaskJson<'a, X: Serialize> {
    pub(super) schema_version: u32,
    pub(super) team: &'a str,
    pub(super) task: TaskView,
    #[serde(flatten)]
    pub(super) extra: X,
}

/// The view of `task` against the current list.
pub(super) fn view_now(team: &Team, task: &Task) -> Result<TaskView> {
    let board = Board::load(&team.layout.tasks_dir(&team.name))?;
    Ok(board.view(task))
}

/// Before a task gets a new owner: the `task_assignment` that follows is written as you, so you
/// must be someone teamctl may write as (see `Team::check_sender`); checked before any file is
/// touched.
pub(super) fn check_assigner(
    ctx: &Ctx,
    team: &Team,
    owner: &MemberName,
    force: bool,
) -> Result<()> {
    let me = MemberName::parse(&ctx.identity(team))?;
    if &me != owner {
        team.check_sender(&me, force)?;
    }
    Ok(())
}

/// Mails `task_assignment` to the task's new owner, as Claude Code does after setting one
/// (not when you assign a task to yourself).
pub(super) fn mail_assignment(
    ctx: &Ctx,
    team: &Team,
    task: &Task,
    force: bool,
) -> Result<Option<Delivery>> {
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
    mailbox::send_frame(team, &owner, &me, &frame, ctx.writing(ctx.now))
        .with_context(|| format!("task #{} was saved, but {owner} was not told", task.id))
        .map(|d| {
            if let Some(e) = &d.log_error {
                crate::cli::output::warn(e);
            }
            Some(d)
        })
}

/// ` (assigned to alice, told in …/alice.json)` after a mailed assignment, else nothing.
pub(super) fn assigned(mail: Option<&Delivery>) -> String {
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
pub(super) fn id_list(ids: &[String]) -> String {
    if ids.is_empty() {
        return "-".into();
    }
    ids.iter()
        .map(|i| format!("#{}", crate::cli::term::escape_line(i)))
        .collect::<Vec<_>>()
        .join(", ")
}
