//! `teamctl report`: many teams' records side by side.

use std::path::PathBuf;

use anyhow::{Result, anyhow};
use clap::Args;
use serde::Serialize;
use teamctl::ops::report::{self, Team, Totals, Unreadable};

use crate::cli::context::Ctx;

/// Put many teams' records side by side: one report, with totals
///
/// The fan-in after many teams ran (a CI matrix, a Kubernetes Indexed Job, a workflow engine):
/// reads each RECORD (a folder or .tar.gz written by `teamctl export` or `run --export`) and
/// prints one report for a person: GitHub-flavoured Markdown, ready to append to
/// $GITHUB_STEP_SUMMARY, with a heading counting the outcomes, a table with a row per team
/// (outcome, duration, cost, tasks done, a link to the team's section) and the totals, then a
/// section per team (its record, outcome, reason and the lead's answer; the record's own
/// report.md has the whole conversation). Text from the records is escaped: it cannot break the
/// table or add links or HTML.
///
/// With --html --out FILE it also writes the fleet's page: one self-contained HTML file (no
/// script, no request: a Content-Security-Policy of default-src 'none') with each team's state,
/// time, cost, tasks and the lead's answer, the fleet's cost by team as bars, and a link to each
/// record's own report.html, relative to FILE, when the record is a folder (an archive is
/// named: its page is inside it). Text from the records is escaped there too: no teammate's
/// text becomes markup or a link. FILE is replaced whole, never written through a symlink; the
/// report is still printed as without --html, and stderr says where the page went.
///
/// A record that cannot be read (missing, not a record, damaged) is named with the reason and
/// skipped; the others are still reported (on the page too), and the exit code is then 1.
///
/// With --json: {"schema_version":1,"teams":[{"record","name","team","outcome","reason",
/// "duration_ms","cost_usd","tasks":{"completed","total"},"members","messages","result",
/// "generated_at"}],"totals":{"teams","outcomes":{<outcome>: <count>},"duration_ms","cost_usd",
/// "tasks":{"completed","total"}},"unreadable":[{"record","error"}]}. "outcome" is the run's
/// state (done, failed, timeout, budget) or null for a record no run took ("none" in
/// "outcomes"); "cost_usd" is null when the record does not know it.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl report records/*.tar.gz >> \"$GITHUB_STEP_SUMMARY\"
  teamctl report --json records/*.tar.gz | jq '.totals'
  teamctl report /records/team-*.tar.gz > fleet.md
  teamctl report --html --out fleet.html records/*/ >> \"$GITHUB_STEP_SUMMARY\"
  teamctl report --json --html --out site/index.html site/team-*/ > fleet.json")]
pub(crate) struct ReportArgs {
    /// Records: folders or .tar.gz archives from `teamctl export` / `run --export`
    #[arg(value_name = "RECORD", required = true)]
    records: Vec<PathBuf>,
    /// Also write the fleet's HTML page to --out
    #[arg(long, requires = "out")]
    html: bool,
    /// Where the fleet's HTML page goes (with --html)
    #[arg(long, value_name = "FILE", requires = "html")]
    out: Option<PathBuf>,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    teams: &'a [Team],
    totals: &'a Totals,
    unreadable: &'a [Unreadable],
}

pub(crate) fn run(ctx: &Ctx, args: ReportArgs) -> Result<()> {
    let r = report::report(&args.records);
    if let Some(out) = args.out.as_deref().filter(|_| args.html) {
        report::html::write(&r, out)?;
        eprintln!(
            "wrote the fleet page: {}",
            crate::cli::term::escape_line(&out.to_string_lossy())
        );
    }
    if ctx.out.json {
        ctx.out.json(&Json {
            schema_version: 1,
            teams: &r.teams,
            totals: &r.totals,
            unreadable: &r.unreadable,
        })?;
    } else {
        // Every field from a record is escaped already; line() would show any control left.
        ctx.out.line(report::markdown(&r).trim_end())?;
    }
    for u in &r.unreadable {
        eprintln!(
            "warning: skipped {}: {}",
            crate::cli::term::escape_line(&u.record.to_string_lossy()),
            crate::cli::term::escape_line(&u.error)
        );
    }
    match r.unreadable.len() {
        0 => Ok(()),
        n => Err(anyhow!(
            "{n} of {} record(s) could not be read",
            args.records.len()
        )),
    }
}
