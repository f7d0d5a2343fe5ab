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
/// A record that cannot be read (missing, not a record, damaged) is named with the reason and
/// skipped; the others are still reported, and the exit code is then 1.
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
  teamctl report /records/team-*.tar.gz > fleet.md")]
pub(crate) struct ReportArgs {
    /// Records: folders or .tar.gz archives from `teamctl export` / `run --export`
    #[arg(value_name = "RECORD", required = true)]
    records: Vec<PathBuf>,
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
