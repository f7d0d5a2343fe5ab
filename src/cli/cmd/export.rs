//! `teamctl export`: a record of a team that outlives it (a folder or a `.tar.gz`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::ops::export::{self, Exported, Format, Request, markdown};
use teamctl::store::dir::Kind;
use teamctl::store::paths::TeamName;
use teamctl::team::config::Team;

use crate::cli::context::Ctx;
use crate::cli::output::warn;
use crate::cli::record::summary_line;

/// Write a record of the team that outlives it: its files, its conversation, a report
///
/// A folder, or a gzipped tar archive when PATH ends in .tar.gz or .tgz, holding: team/config.json,
/// team/inboxes/*.json, tasks/* (every task file), sent.jsonl (the team's lines of teamctl's sent
/// log), bridge.jsonl (the team's lines of `teamctl bridge`'s journal: what was posted to a
/// chat and who answered what from there; only when there are any), actions.jsonl (the team's
/// lines of teamctl's journal of the restarts and resumes it made; only when there are any),
/// transcripts/<member>/<session>.jsonl (every member's sessions as `status` finds them: the
/// lead's, pane teammates' own, in-process teammates', several for a member that was
/// restarted; plain subagents under transcripts/<member>/<session>/subagents/),
/// patches/<member>.patch (each teammate with a git worktree: its work against the commit it
/// started from, uncommitted changes included while its worktree is there), summary.json,
/// report.md and report.html.
///
/// summary.json: {"schema_version":1,"generated_at","generator","team","team_folder","run",
/// "status":{"team","members","tasks","totals"} (the status --json document, tokens and cost per
/// member included), "tasks":[…] (tasks --json),
/// "messages":[{"at","from","to","kind","frame_type","summary","text","id","state",
/// "delivered_at","sources"}] (every message on record, oldest first: from the inboxes, the sent
/// log and the transcripts, so consumed messages are there too; state is unread, read, delivered,
/// consumed or sent), "result","result_final" (the lead's last answer, and whether it ended its
/// turn), "transcripts":[{"member","session_id","kind","path","source","lines","bytes"}] (kind
/// lead, pane, in_process or subagent), "cost":{"members":[{"name","tokens","cost_usd",
/// "cost_source","model"}],"tokens":{"input","output","cache_read","cache_creation"},"cost_usd",
/// "known_cost_usd","cost_source"} (what the team cost when the record was taken, as status
/// reports it; null when no transcript was found),"worktrees":[{"member","branch","commit",
/// "base","path","changed","repo","files":[{"path","added","deleted"}]}] (each teammate
/// `create` gave a git worktree: its branch, the commit it points at now, the one it started
/// from, and its files as `git diff --numstat` counts them, null counts for a binary file),
/// "actions":[{"at","team","member","action","session_id","pane","why"}] (each restart and
/// resume teamctl made of a member, as in actions.jsonl),"files":[{"path","bytes","sha256",
/// "settled"}],"warnings"}.
///
/// report.md is the same for people: the team and its members (state, tokens, cost) with the
/// team's total, each teammate's branch with a diffstat, the tasks with owners, teamctl's
/// restarts and resumes of its members, the conversation as a timeline (who to whom, when,
/// protocol frames by type) and the lead's final answer. It is GitHub-flavoured Markdown that
/// can be appended to $GITHUB_STEP_SUMMARY as it is: teammate text cannot break it (short
/// fields are escaped, message texts fenced, control characters shown as \u{…}), and it stays
/// under GitHub's 1 MiB limit.
///
/// report.html is the same as one self-contained page to open in a browser: each member's cost
/// as a table and a chart of its cumulative cost over time, the branches' diffstats, the tasks
/// and the messages in order. It loads nothing (inline CSS and SVG, no script, a
/// Content-Security-Policy of default-src 'none'), reads on a phone and prints; teammate text is
/// HTML-escaped. Its data is embedded as JSON in <script type="application/json"
/// id="teamctl-record">: {"schema_version":1,"team","generated_at","run_state","cost_usd",
/// "members":[{"name","cost_usd","cost_source","cost_series"}]}, each member's cost_usd the one
/// in summary.json and cost_series [[time, cumulative_usd], …] ending at it.
///
/// Reads only: no lock is taken (each file is copied as one whole version, read again if it
/// changed meanwhile; a transcript up to its last whole line), nothing is written into the config
/// dir, and the record appears at PATH only once complete. Files are reached without following a
/// symlink anywhere below the config dir: a symlink, FIFO or device where a file of the team
/// belongs is reported and left out. `run --export` and `delete --export`
/// take the same record at the last moment before the team is ended.
///
/// With --json: {"schema_version":1,"team","out","format","files","bytes","size","messages",
/// "transcripts","warnings"}; with --report-only --json, summary.json itself.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl export                                      # ./<team>-record-<time>/
  teamctl export --out record.tar.gz                  # one archive for a CI artifact
  teamctl export --report-only >> \"$GITHUB_STEP_SUMMARY\"
  teamctl export --report-only --json | jq '.messages[] | select(.from == \"worker\")'")]
pub(crate) struct ExportArgs {
    /// Where to write the record: a new folder, or an archive if it ends in .tar.gz or .tgz
    /// [default: ./<team>-record-<YYYYmmdd-HHMMSS>]
    #[arg(long, value_name = "PATH")]
    #[arg(
        help = "Where to write the record: a new folder, or a .tar.gz",
        long_help
    )]
    out: Option<PathBuf>,

    /// Print report.md on stdout and write nothing (with --json: summary.json)
    #[arg(long, conflicts_with = "out")]
    report_only: bool,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    out: String,
    format: Format,
    files: usize,
    bytes: u64,
    size: u64,
    messages: usize,
    transcripts: usize,
    warnings: &'a [String],
}

pub(crate) fn run(ctx: &Ctx, args: ExportArgs) -> Result<()> {
    let name = ctx.team_resolved()?;
    // A team whose folder is gone can still be recorded from what it left (its tasks).
    if !matches!(ctx.layout.tasks_dir(&name).stat(), Ok(Some(i)) if i.kind == Kind::Dir) {
        Team::open(&ctx.layout, &name, &ctx.records)?;
    }
    let sent = ctx.sent();
    let req = Request {
        layout: &ctx.layout,
        team: &name,
        lead_session_id: None,
        sent: &sent,
        now: ctx.now,
        run: None,
        records: &ctx.records,
    };
    if args.report_only {
        let summary = export::summarize(&req)?;
        if ctx.out.json {
            return ctx.out.json(&summary);
        }
        for w in &summary.warnings {
            warn(w);
        }
        let mut out = std::io::stdout().lock();
        out.write_all(markdown::render(&summary).as_bytes())?;
        return Ok(out.flush()?);
    }
    let out = args.out.unwrap_or_else(|| default_out(&name, ctx.now));
    let done = write(&req, &out)?;
    print(ctx, &name, &done)
}

/// `./<team>-record-<YYYYmmdd-HHMMSS>`.
pub(crate) fn default_out(team: &TeamName, now: chrono::DateTime<chrono::Utc>) -> PathBuf {
    PathBuf::from(format!("{team}-record-{}", now.format("%Y%m%d-%H%M%S")))
}

/// Writes the record of `req` to `out`, warning about what could not be read.
pub(crate) fn write(req: &Request, out: &Path) -> Result<Exported> {
    let (done, _) = export::export(req, out)?;
    for w in &done.warnings {
        warn(w);
    }
    Ok(done)
}

fn print(ctx: &Ctx, team: &TeamName, d: &Exported) -> Result<()> {
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            team: team.as_str(),
            out: d.out.display().to_string(),
            format: d.format,
            files: d.files,
            bytes: d.bytes,
            size: d.size,
            messages: d.messages,
            transcripts: d.transcripts,
            warnings: &d.warnings,
        });
    }
    ctx.out
        .line(&format!("exported team {team} to {}", summary_line(d)))
}
