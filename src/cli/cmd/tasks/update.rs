//! `teamctl tasks update`.

use anyhow::{Result, bail};
use clap::Args;
use clap::builder::PossibleValuesParser;
use serde::Serialize;
use teamctl::store::paths::MemberName;
use teamctl::team::tasks::{self, Patch, STATUSES};

use super::add::Assignment;
use super::assign::{TaskJson, assigned, check_assigner, mail_assignment, view_now};
use crate::cli::context::Ctx;
use crate::cli::term::escape_line as esc;

/// Change a task: status, owner, text, dependencies
///
/// Takes the task's lock (<id>.json.lock), re-reads it and merges the change the way Claude Code
/// does, as `{...old, ...patch}`: existing keys keep their place, new keys (usually owner) go
/// last, --no-owner removes the key (never "owner": null, which makes Claude Code skip the task). A new owner is mailed a task_assignment frame, as Claude Code does.
/// Dependencies are recorded on both tasks, each under its own lock.
///
/// With --json: `{"schema_version":1,"team","task":{…},"changed","assignment":{…}|null}`.
#[derive(Debug, Args)]
pub(crate) struct UpdateArgs {
    /// Task id (3 or #3)
    #[arg(value_name = "ID")]
    id: String,

    /// New status
    #[arg(long, value_name = "STATUS", value_parser = PossibleValuesParser::new(STATUSES))]
    status: Option<String>,

    /// Assign to a member
    #[arg(long, value_name = "NAME", conflicts_with = "no_owner")]
    owner: Option<String>,

    /// Unassign (removes the owner)
    #[arg(long)]
    no_owner: bool,

    /// New subject
    #[arg(long, value_name = "TEXT")]
    subject: Option<String>,

    /// New description
    #[arg(long, value_name = "TEXT")]
    description: Option<String>,

    /// New activeForm
    #[arg(long, value_name = "TEXT")]
    active_form: Option<String>,

    /// Record that task ID blocks this one (repeatable)
    #[arg(long, value_name = "ID")]
    add_blocked_by: Vec<String>,

    /// Record that this task blocks task ID (repeatable)
    #[arg(long, value_name = "ID")]
    add_blocks: Vec<String>,

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
struct Extra {
    changed: bool,
    #[serde(flatten)]
    assignment: Assignment,
}

pub(crate) fn run(ctx: &Ctx, args: UpdateArgs) -> Result<()> {
    let id = tasks::parse_id(&args.id)?;
    let blocked_by: Vec<String> = args
        .add_blocked_by
        .iter()
        .map(|b| tasks::parse_id(b))
        .collect::<Result<_>>()?;
    let blocks: Vec<String> = args
        .add_blocks
        .iter()
        .map(|b| tasks::parse_id(b))
        .collect::<Result<_>>()?;
    let owner = args.owner.as_deref().map(MemberName::parse).transpose()?;
    let patch = Patch {
        status: args.status,
        owner: match (&owner, args.no_owner) {
            (Some(o), _) => Some(Some(o.to_string())),
            (None, true) => Some(None),
            (None, false) => None,
        },
        subject: args.subject,
        description: args.description,
        active_form: args.active_form,
    };
    let nothing = patch.status.is_none()
        && patch.owner.is_none()
        && patch.subject.is_none()
        && patch.description.is_none()
        && patch.active_form.is_none()
        && blocked_by.is_empty()
        && blocks.is_empty();
    if nothing {
        return Err(teamctl::error::usage(
            "nothing to change: give at least one option (see --help)",
        ));
    }
    let team = ctx.team()?;
    if let Some(o) = &owner {
        team.check_recipient(o, args.force)?;
        check_assigner(ctx, &team, o, args.force)?;
    }
    let dir = team.layout.tasks_dir(&team.name);
    let (before, mut after) = tasks::update(&dir, &id, &patch, &ctx.lock)?;
    let mut changed = before.raw != after.raw;
    for b in &blocked_by {
        tasks::link(&dir, b, &id, &ctx.lock)?;
    }
    for b in &blocks {
        tasks::link(&dir, &id, b, &ctx.lock)?;
    }
    if !blocked_by.is_empty() || !blocks.is_empty() {
        let Some(now) = tasks::Board::load(&dir)?.get(&id).cloned() else {
            bail!("task #{id} disappeared while it was being updated");
        };
        changed |= now.raw != after.raw;
        after = now;
    }
    let owner_changed = owner.is_some() && before.owner != after.owner;
    let mail = if owner_changed {
        mail_assignment(ctx, &team, &after, args.force)?
    } else {
        None
    };
    if ctx.out.json {
        let view = view_now(&team, &after)?;
        let extra = Extra {
            changed,
            assignment: Assignment::from(mail),
        };
        return ctx.out.json(&TaskJson {
            schema_version: 1,
            team: team.name.as_str(),
            task: view,
            extra,
        });
    }
    let mut line = if changed {
        format!("updated task #{id}: {}", esc(&after.subject))
    } else {
        format!("task #{id} unchanged: {}", esc(&after.subject))
    };
    line.push_str(&assigned(mail.as_ref()));
    ctx.out.line(&line)
}
