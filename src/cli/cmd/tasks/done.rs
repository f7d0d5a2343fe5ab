//! `teamctl tasks done`.

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::team::tasks::{self, Board, Patch};

use super::assign::{TaskJson, id_list};
use crate::cli::context::Ctx;
use crate::cli::term::escape_line as esc;

/// Mark a task completed, and say which tasks it unblocked
///
/// Sets status completed under the task's lock. Prints the tasks that became ready because of
/// it; with --json: `{"schema_version":1,"team","task":{…},"now_ready":["2",…]}`.
#[derive(Debug, Args)]
pub(crate) struct DoneArgs {
    /// Task id (3 or #3)
    #[arg(value_name = "ID")]
    id: String,
}

#[derive(Serialize)]
struct Extra {
    now_ready: Vec<String>,
}

pub(crate) fn run(ctx: &Ctx, args: DoneArgs) -> Result<()> {
    let id = tasks::parse_id(&args.id)?;
    let team = ctx.team()?;
    let dir = team.layout.tasks_dir(&team.name);
    let ready_before = Board::load(&dir)?.ready_ids();
    let patch = Patch {
        status: Some("completed".into()),
        ..Patch::default()
    };
    let (_, task) = tasks::update(&dir, &id, &patch, &ctx.lock)?;
    let board = Board::load(&dir)?;
    let now_ready: Vec<String> = board
        .ready_ids()
        .into_iter()
        .filter(|r| !ready_before.contains(r))
        .collect();
    if ctx.out.json {
        let view = board.view(board.get(&id).unwrap_or(&task));
        let extra = Extra { now_ready };
        return ctx.out.json(&TaskJson {
            schema_version: 1,
            team: team.name.as_str(),
            task: view,
            extra,
        });
    }
    let mut line = format!("completed task #{id}: {}", esc(&task.subject));
    if !now_ready.is_empty() {
        line.push_str(&format!("; now ready: {}", id_list(&now_ready)));
    }
    ctx.out.line(&line)
}
