//! `teamctl tasks show`.

use anyhow::{Result, bail};
use clap::Args;
use serde::Serialize;
use teamctl::team::tasks::{self, Board, TaskView};

use super::assign::{TaskJson, id_list};
use crate::cli::context::Ctx;
use crate::cli::term::{self, escape_line as esc};

/// Show one task with everything, including the tasks it blocks
///
/// With --json: `{"schema_version":1,"team","task":{…as in tasks list…},"dependents":[{…}]}`,
/// "dependents" being the tasks listed in its blocks.
#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// Task id (3 or #3)
    #[arg(value_name = "ID")]
    id: String,
}

#[derive(Serialize)]
struct Extra {
    dependents: Vec<TaskView>,
}

pub(crate) fn run(ctx: &Ctx, args: ShowArgs) -> Result<()> {
    let id = tasks::parse_id(&args.id)?;
    let team = ctx.team()?;
    let board = Board::load(&team.layout.tasks_dir(&team.name))?;
    let Some(task) = board.get(&id) else {
        if let Some(s) = board
            .skipped
            .iter()
            .find(|s| s.path.ends_with(format!("{id}.json")))
        {
            bail!(
                "{} is not a valid task: {} (left unchanged)",
                s.path.display(),
                s.reason
            );
        }
        bail!("no task #{id} in team '{}'", team.name);
    };
    let view = board.view(task);
    let dependents: Vec<TaskView> = task
        .blocks
        .iter()
        .filter_map(|d| board.get(d))
        .map(|d| board.view(d))
        .collect();
    if ctx.out.json {
        let team = team.name.as_str();
        return ctx.out.json(&TaskJson {
            schema_version: 1,
            team,
            task: view,
            extra: Extra { dependents },
        });
    }
    let opt = |v: &Option<String>| esc(v.as_deref().unwrap_or("-")).into_owned();
    let state = match (view.ready, view.blocked) {
        (true, _) => "ready",
        (_, true) => "blocked",
        _ => "-",
    };
    let mut lines = vec![
        format!("id: #{}", esc(&view.id)),
        format!("subject: {}", esc(&view.subject)),
        format!("status: {}", esc(&view.status)),
        format!("state: {state}"),
        format!("owner: {}", opt(&view.owner)),
        format!("active form: {}", opt(&view.active_form)),
        format!("blocked by: {}", id_list(&view.blocked_by)),
        format!("open blockers: {}", id_list(&view.open_blockers)),
        format!("blocks: {}", id_list(&view.blocks)),
    ];
    for d in &dependents {
        lines.push(format!(
            "  #{} {} ({})",
            esc(&d.id),
            esc(&d.subject),
            esc(&d.status)
        ));
    }
    if let Some(m) = &view.metadata {
        lines.push(format!("metadata: {}", esc(&m.to_string())));
    }
    // The full text is the point here: its lines are kept, each behind a prefix.
    lines.push(format!(
        "description:\n{}",
        term::escape_block(&view.description, term::CONTINUATION)
    ));
    ctx.out.line(&lines.join("\n"))
}
