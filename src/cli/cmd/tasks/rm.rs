//! `teamctl tasks rm`.

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::team::tasks;

use super::id_list;
use crate::cli::context::Ctx;

/// Delete a task as Claude Code does
///
/// Under the list lock, raises .highwatermark to the id (ids are never reused) and removes the
/// file; then removes the id from every other task's blocks and blockedBy, each under its own
/// lock. With --json: `{"schema_version":1,"team","deleted":"3","updated":["1",…]}`.
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
}

pub(crate) fn run(ctx: &Ctx, args: RmArgs) -> Result<()> {
    let id = tasks::parse_id(&args.id)?;
    let team = ctx.team()?;
    let updated = tasks::delete(&team.layout.tasks_dir(&team.name), &id, &ctx.lock)?;
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            deleted: id,
            updated,
        });
    }
    let mut line = format!("deleted task #{id}");
    if !updated.is_empty() {
        line.push_str(&format!("; removed it from {}", id_list(&updated)));
    }
    ctx.out.line(&line)
}
