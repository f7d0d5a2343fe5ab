//! `teamctl tasks rm`.

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::team::tasks;

use super::assign::id_list;
use crate::cli::context::Ctx;

/// Delete a task as Claude Code does
///
/// Under the list lock, raises .highwatermark to the id (ids are never reused) and removes the
/// file; then removes the id from every other task's blocks and blockedBy, each under its own
/// lock. A task that cannot be changed then (a corrupt file, a held lock) is reported as a
/// warning: the delete has happened, and a reference to a deleted task blocks nothing. With
/// --json: `{"schema_version":1,"team","deleted":"3","updated":["1",…],"not_updated":[{"id",
/// "error"}]}`.
#[derive(Debug, Args)]
pub(crate) struct RmArgs {
    /// Task id (3 or #3)
    #[arg(value_name = "ID")]
    id: String,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    deleted: String,
    updated: Vec<String>,
    not_updated: Vec<NotUpdated>,
}

#[derive(Serialize)]
struct NotUpdated {
    id: String,
    error: String,
}

pub(crate) fn run(ctx: &Ctx, args: RmArgs) -> Result<()> {
    let id = tasks::parse_id(&args.id)?;
    let team = ctx.team()?;
    let removed = tasks::delete(&team.layout.tasks_dir(&team.name), &id, &ctx.lock)?;
    for (other, e) in &removed.not_changed {
        crate::cli::output::warn(&format!(
            "task #{id} is deleted, but #{other} still names it: {e}"
        ));
    }
    let updated = removed.changed;
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            deleted: id,
            updated,
            not_updated: removed
                .not_changed
                .into_iter()
                .map(|(id, error)| NotUpdated { id, error })
                .collect(),
        });
    }
    let mut line = format!("deleted task #{id}");
    if !updated.is_empty() {
        line.push_str(&format!("; removed it from {}", id_list(&updated)));
    }
    ctx.out.line(&line)
}
