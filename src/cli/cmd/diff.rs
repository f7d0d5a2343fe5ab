//! `teamctl diff`: each teammate's work against the commit its worktree started from.

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::ops::merge::diff::{self, Detail, MemberDiff};
use teamctl::ops::merge::sources;

use crate::cli::context::Ctx;
use crate::cli::term::{escape_block, escape_line as esc};

/// Show each teammate's work in its worktree against the commit it started from
///
/// For every teammate `create` gave a git worktree (or those named, in that order): its
/// branch, the commits on it since the commit its worktree started from (recorded at create),
/// and the tracked files that differ from that commit, committed or not, as `git diff
/// --numstat --no-renames` counts them (a renamed file counts as a deletion and an addition; a
/// binary file has no line counts: shown as `bin`); untracked files are listed. A worktree whose folder is gone (delete removed it) is read from its branch:
/// committed work only. Only the worktrees teamctl's own record of the team names are read.
///
/// --stat adds git's diffstat, --patch the patch itself (no colour, no external diff tools;
/// control characters shown as visible escapes).
///
/// Files that run code for you once the work lands are named apart, however small the change
/// (Claude Code's .claude/ and .mcp.json, .github/workflows/, git hook managers' .husky/,
/// .githooks/, lefthook.yml, .pre-commit-config.yaml, …, .envrc, .vscode/tasks.json): read
/// them before you merge. A sandboxed teammate's branch lives in its own clone and is fetched
/// home into the repository first (docs/sandbox.md).
///
/// With --json: {"schema_version":1,"team","members":[{"name","branch","base","tip","path",
/// "commits","files":[{"path","added","deleted"}],"untracked","runs_code","uncommitted","text",
/// "error"}]}; added and deleted are null for a binary file; runs_code lists those of files and
/// untracked that run code for you; text is the diffstat or the patch when asked for, else
/// null; path is null when the worktree's folder is gone; error says what could not be read.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl diff                            # every worktree teammate: commits, files, +/-
  teamctl diff alice --patch              # alice's changes, as a patch
  teamctl diff --stat alice bob
  teamctl diff --json | jq '.members[] | {name, files: [.files[].path]}'")]
pub(crate) struct DiffArgs {
    /// The teammates to show [default: every one with a worktree]
    #[arg(value_name = "MEMBER")]
    members: Vec<String>,

    /// Add git's diffstat
    #[arg(long, conflicts_with = "patch")]
    stat: bool,

    /// Add the patch
    #[arg(long)]
    patch: bool,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    members: &'a [MemberDiff],
}

pub(crate) fn run(ctx: &Ctx, args: DiffArgs) -> Result<()> {
    let team = ctx.team()?;
    let chosen = sources(&team, &args.members)?;
    let detail = match (args.stat, args.patch) {
        (true, _) => Detail::Stat,
        (_, true) => Detail::Patch,
        _ => Detail::Counts,
    };
    let members = diff::read(&chosen, detail);
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            members: &members,
        });
    }
    let text: Vec<String> = members.iter().map(human).collect();
    ctx.out.line(&text.join("\n\n"))
}

fn human(d: &MemberDiff) -> String {
    let (added, deleted, binary) = teamctl::host::git::totals(&d.files);
    let commits = d
        .commits
        .map_or_else(|| "? commits".to_string(), |n| format!("{n} commit(s)"));
    let mut out = vec![format!(
        "{}: branch {}, {commits}, {} file(s) +{added} -{deleted}{}{}",
        esc(&d.name),
        esc(&d.branch),
        d.files.len(),
        if binary > 0 {
            format!(" ({binary} binary)")
        } else {
            String::new()
        },
        match (d.uncommitted, &d.path) {
            (_, None) => ", worktree gone (committed work only)",
            (Some(true), _) => ", uncommitted changes",
            _ => "",
        }
    )];
    if let Some(e) = &d.error {
        out.push(format!("  error: {}", esc(e)));
    }
    match &d.text {
        Some(t) if !t.trim().is_empty() => out.push(escape_block(t.trim_end(), "  ")),
        _ if !d.files.is_empty() => {
            out.push(escape_block(
                teamctl::host::git::stat_text(&d.files, usize::MAX).trim_end(),
                "  ",
            ));
        }
        _ => {}
    }
    for u in &d.untracked {
        out.push(format!("  untracked: {}", esc(u)));
    }
    if !d.runs_code.is_empty() {
        out.push(format!(
            "  runs code for you once it lands: {}",
            esc(&d.runs_code.join(", "))
        ));
    }
    out.join("\n")
}
