//! `teamctl tasks add`.

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::store::paths::MemberName;
use teamctl::team::tasks::{self, NewTask};

use super::assign::{TaskJson, assigned, check_assigner, mail_assignment, view_now};
use crate::cli::context::Ctx;
use crate::cli::term::escape_line as esc;

/// Add a task to the team's list
///
/// Allocates the next id exactly as Claude Code does (under the list lock, the lock directory of
/// the anchor file .lock, i.e. .lock.lock: max(numeric *.json, .highwatermark) + 1), writes the
/// task in Claude Code's key order (id, subject, description, activeForm, status, owner, blocks,
/// blockedBy; the description defaults to the subject), and records each --blocked-by on both
/// tasks (blocks on the blocker), each under its own lock. With --owner, mails the owner a
/// task_assignment frame, as Claude Code does. Prints the new id; with --json:
/// `{"schema_version":1,"team","task":{…},"assignment":{"to","inbox","id"}|null}`.
#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// What the task is
    #[arg(value_name = "SUBJECT")]
    subject: String,

    /// Details [default: the subject, as Claude Code does]
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,

    /// What to show while it is in progress ("Fixing the login test")
    #[arg(long, value_name = "TEXT")]
    active_form: Option<String>,

    /// An existing task that must be completed first (repeatable)
    #[arg(long, value_name = "ID")]
    blocked_by: Vec<String>,

    /// Assign it to a member
    #[arg(long, value_name = "NAME")]
    owner: Option<String>,

    /// Allow an owner that is not a member of config.json, and assigning as team-lead in a team
    /// teamctl does not lead
    #[arg(long)]
    #[arg(
        help = "Allow an owner that is not a member, or assigning as team-lead",
        long_help
    )]
    force: bool,
}

#[derive(Serialize)]
pub(super) struct Assignment {
    pub(super) assignment: Option<AssignmentJson>,
}

#[derive(Serialize)]
pub(super) struct AssignmentJson {
    to: String,
    inbox: String,
    id: String,
}

impl Assignment {
    pub(super) fn from(d: Option<teamctl::team::mailbox::Delivery>) -> Assignment {
        Assignment {
            assignment: d.map(|d| AssignmentJson {
                to: d.to,
                inbox: d.inbox.display().to_string(),
                id: d.id,
            }),
        }
    }
}

pub(crate) fn run(ctx: &Ctx, args: AddArgs) -> Result<()> {
    let blocked_by = args
        .blocked_by
        .iter()
        .map(|b| tasks::parse_id(b))
        .collect::<Result<_>>()?;
    let owner = args.owner.as_deref().map(MemberName::parse).transpose()?;
    let team = ctx.team()?;
    if let Some(o) = &owner {
        team.check_recipient(o, args.force)?;
        check_assigner(ctx, &team, o, args.force)?;
    }
    let new = NewTask {
        subject: args.subject,
        description: args.description,
        active_form: args.active_form,
        owner: owner.map(|o| o.to_string()),
        blocked_by,
    };
    let task = tasks::create(&team.layout.tasks_dir(&team.name), &new, &ctx.lock)?;
    let mail = mail_assignment(ctx, &team, &task, args.force)?;
    if ctx.out.json {
        let view = view_now(&team, &task)?;
        let team = team.name.as_str();
        return ctx.out.json(&TaskJson {
            schema_version: 1,
            team,
            task: view,
            extra: Assignment::from(mail),
        });
    }
    let mut line = format!("added task #{}: {}", task.id, esc(&task.subject));
    line.push_str(&assigned(mail.as_ref()));
    ctx.out.line(&line)
}
