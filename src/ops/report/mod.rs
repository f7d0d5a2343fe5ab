//! The fan-in of many teams: the records `export` (and `run --export`) wrote, read back and put
//! side by side, for a person (Markdown: a row per team, totals, a section per team) and for a
//! program ([`Report`] as JSON).
//!
//! A record is a folder holding `summary.json`, or a `.tar.gz` holding one folder that does. An
//! archive is read in memory, never unpacked: its paths decide nothing. A record that cannot be
//! read is named with the reason and left out; the others are still reported.
//!
//! Everything in a record is treated as untrusted text: in Markdown it goes through
//! [`crate::text::markdown`] (short fields can form no Markdown or HTML, the lead's answer is a
//! fenced block it cannot close, controls are visible escapes, no line starts a CI command);
//! in the fleet's HTML page ([`html`]) through [`crate::text::html`].

pub mod html;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Seek};
use std::path::{Component, Path, PathBuf};

use anyhow::{Context, Result, bail};
use chrono::DateTime;
use serde::Serialize;
use serde_json::Value;

use crate::store::dir::{self, Loc};
use crate::text::markdown::{code_span, fenced, inline};
use crate::units::{duration, usd};

/// The largest `summary.json` read from a record (a bigger one is refused, not read).
pub const MAX_SUMMARY: u64 = 64 * 1024 * 1024;

/// The most of a lead's answer a team's section shows (characters).
pub const ANSWER_MAX: usize = 2000;

/// One team, from its record (`report --json` `teams[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Team {
    /// The record as given.
    pub record: PathBuf,
    /// The run's name (`run --name`), else the team's.
    pub name: String,
    /// The team (`session-<8hex>` for a lead's own team).
    pub team: String,
    /// How its run ended (`done`, `failed`, `timeout`, `budget`, …); `null` for a record that no
    /// run took (a plain `teamctl export`).
    pub outcome: Option<String>,
    /// Why it failed or timed out, when it says.
    pub reason: Option<String>,
    /// How long the team worked: the run's time when the record has it, else from the team's
    /// creation to the record.
    pub duration_ms: Option<u64>,
    /// What the team cost in USD, when the record knows.
    pub cost_usd: Option<f64>,
    /// Tasks completed and in all.
    pub tasks: TaskTally,
    /// Members of the team (the lead too).
    pub members: usize,
    /// Messages on record.
    pub messages: usize,
    /// The lead's last answer, when there is one.
    pub result: Option<String>,
    /// When the record was taken.
    pub generated_at: Option<String>,
}

/// Tasks completed out of all (internal ones are not counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TaskTally {
    /// Completed.
    pub completed: u64,
    /// All.
    pub total: u64,
}

/// The fleet as a whole (`report --json` `totals`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Teams read.
    pub teams: usize,
    /// Teams per outcome (`none` for records no run took).
    pub outcomes: BTreeMap<String, usize>,
    /// Their durations added up.
    pub duration_ms: u64,
    /// Their costs added up (`null` when no record knows its cost).
    pub cost_usd: Option<f64>,
    /// Their tasks added up.
    pub tasks: TaskTally,
}

impl Totals {
    /// The outcomes in words, `3 done` each, every outcome's name through `escape` (the
    /// page's or report.md's escaper).
    pub fn outcome_words(&self, escape: impl Fn(&str) -> String) -> Vec<String> {
        self.outcomes
            .iter()
            .map(|(k, n)| format!("{n} {}", escape(k)))
            .collect()
    }
}

/// A record that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    /// The record as given.
    pub record: PathBuf,
    /// Why, one line.
    pub error: String,
}

/// Every team, the totals and what could not be read.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// The teams, in the order their records were given.
    pub teams: Vec<Team>,
    /// The totals.
    pub totals: Totals,
    /// Records that could not be read.
    pub unreadable: Vec<Unreadable>,
}

/// Reads every record in `records` into one report; a record that cannot be read goes to
/// `unreadable`.
pub fn report(records: &[PathBuf]) -> Report {
    let mut out = Report::default();
    for r in records {
        match read_summary(r).and_then(|s| team(r, &s)) {
            Ok(t) => out.teams.push(t),
            Err(e) => out.unreadable.push(Unreadable {
                record: r.clone(),
                error: format!("{e:#}"),
            }),
        }
    }
    let t = &mut out.totals;
    t.teams = out.teams.len();
    for team in &out.teams {
        *t.outcomes
            .entry(team.outcome.clone().unwrap_or_else(|| "none".into()))
            .or_default() += 1;
        t.duration_ms += team.duration_ms.unwrap_or(0);
        if let Some(c) = team.cost_usd {
            t.cost_usd = Some(t.cost_usd.unwrap_or(0.0) + c);
        }
        t.tasks.completed += team.tasks.completed;
        t.tasks.total += team.tasks.total;
    }
    out
}

/// The `summary.json` of a record: a folder's, or the one in a `.tar.gz`'s top folder.
///
/// The record is the path the user gave (followed if it is a link); what is inside it is not
/// trusted: a `summary.json` that is a symlink, a FIFO, a socket or a device is refused without
/// being followed or opened in a way that could block, and so is a record that is one.
///
/// # Errors
/// Not a folder or an archive, no `summary.json` or one that is not a regular file, too big,
/// not JSON, or I/O.
pub fn read_summary(record: &Path) -> Result<Value> {
    let meta = std::fs::metadata(record).context("could not read it")?;
    let bytes = if meta.is_dir() {
        let loc = Loc::root(record).join("summary.json");
        let f = loc
            .open_file()?
            .context("no summary.json in this folder: not a teamctl record")?;
        read_capped(f, &loc)?
    } else {
        let not_one =
            || "not a teamctl record: a folder or a .tar.gz from `teamctl export` is expected";
        let mut f = dir::open_regular(record)
            .with_context(not_one)?
            .context("could not read it")?;
        let mut magic = [0u8; 2];
        f.read_exact(&mut magic).ok();
        if magic != [0x1f, 0x8b] {
            bail!(not_one());
        }
        f.rewind()?;
        summary_in_archive(f)?
    };
    let v: Value = serde_json::from_slice(&bytes).context("summary.json is not valid JSON")?;
    match v.get("schema_version").and_then(Value::as_u64) {
        Some(1) => Ok(v),
        Some(n) => bail!("summary.json has schema_version {n}; this teamctl reads 1"),
        None => bail!("summary.json has no schema_version: not a teamctl record"),
    }
}

fn read_capped(r: impl Read, what: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    r.take(MAX_SUMMARY + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("could not read {}", what.display()))?;
    if bytes.len() as u64 > MAX_SUMMARY {
        bail!("summary.json is over {} MiB", MAX_SUMMARY >> 20);
    }
    Ok(bytes)
}

/// `summary.json` of the archive's top folder (or its top level), read without unpacking.
fn summary_in_archive(file: File) -> Result<Vec<u8>> {
    let gz = flate2::read::GzDecoder::new(file);
    let mut archive = tar::Archive::new(gz);
    let entries = archive.entries().context("not a tar archive")?;
    for entry in entries {
        let entry = entry.context("the archive is damaged")?;
        let name = entry.path().context("the archive is damaged")?.into_owned();
        let parts: Vec<Component> = name.components().collect();
        let top = match parts.as_slice() {
            [Component::Normal(f)] => *f == "summary.json",
            [Component::Normal(_), Component::Normal(f)] => *f == "summary.json",
            _ => false,
        };
        if top && entry.header().entry_type().is_file() {
            return read_capped(entry, Path::new("summary.json"));
        }
    }
    bail!("no summary.json in the archive: not a teamctl record")
}

/// One row from a record's summary.
fn team(record: &Path, s: &Value) -> Result<Team> {
    let text = |p: &str| s.pointer(p).and_then(Value::as_str).map(String::from);
    let Some(team) = text("/team") else {
        bail!("summary.json names no team: not a teamctl record");
    };
    let run = s.get("run").filter(|r| r.is_object());
    let outcome = run.and_then(|r| r.get("state")?.as_str().map(String::from));
    let duration_ms = run.and_then(|r| r.get("elapsed_ms")?.as_u64()).or_else(|| {
        let from = DateTime::parse_from_rfc3339(&text("/status/team/created_at")?).ok()?;
        let to = DateTime::parse_from_rfc3339(&text("/generated_at")?).ok()?;
        u64::try_from((to - from).num_milliseconds()).ok()
    });
    let count = |p: &str| s.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let completed = count("/status/tasks/completed");
    let tasks = TaskTally {
        completed,
        total: completed + count("/status/tasks/pending") + count("/status/tasks/in_progress"),
    };
    // What the team cost (`cost.cost_usd` of export's summary.json: every session, as
    // `status --json` totals it); `null` when a cost is unknown or no transcript was found.
    let cost_usd = ["/cost/cost_usd", "/status/totals/cost_usd"]
        .iter()
        .find_map(|p| s.pointer(p).and_then(Value::as_f64));
    let len = |p: &str| s.pointer(p).and_then(Value::as_array).map_or(0, Vec::len);
    Ok(Team {
        record: record.to_path_buf(),
        name: run
            .and_then(|r| r.get("name")?.as_str().map(String::from))
            .unwrap_or_else(|| team.clone()),
        team,
        outcome,
        reason: run.and_then(|r| r.get("reason")?.as_str().map(String::from)),
        duration_ms,
        cost_usd,
        tasks,
        members: len("/status/members"),
        messages: len("/messages"),
        result: text("/result")
            .or_else(|| run.and_then(|r| r.get("result")?.as_str().map(String::from))),
        generated_at: text("/generated_at"),
    })
}

/// The report for a person: GitHub-flavoured Markdown that can be appended to
/// `$GITHUB_STEP_SUMMARY` as it is. A heading with the counts, a table with a row per team
/// (outcome, duration, cost, tasks done, a link to its section) and the totals, the records that
/// could not be read, then a section per team (`## Team N`): its record, outcome and reason,
/// and the lead's answer.
pub fn markdown(r: &Report) -> String {
    let mut out = String::new();
    let outcomes = r.totals.outcome_words(|k| inline(k, 40));
    let _ = writeln!(
        out,
        "# {} team{}{}\n",
        r.totals.teams,
        if r.totals.teams == 1 { "" } else { "s" },
        if outcomes.is_empty() {
            String::new()
        } else {
            format!(": {}", outcomes.join(", "))
        }
    );
    if !r.teams.is_empty() {
        out.push_str("| # | team | outcome | duration | cost | tasks done | report |\n");
        out.push_str("|---:|---|---|---:|---:|---:|---|\n");
        for (i, t) in r.teams.iter().enumerate() {
            let n = i + 1;
            let _ = writeln!(
                out,
                "| {n} | {} | {} | {} | {} | {} of {} | [team {n}](#team-{n}) |",
                inline(&t.name, 80),
                t.outcome.as_deref().map_or("—".into(), |o| inline(o, 40)),
                t.duration_ms.map_or("—".into(), |ms| duration(ms / 1000)),
                t.cost_usd.map_or("—".into(), usd),
                t.tasks.completed,
                t.tasks.total,
            );
        }
        let _ = writeln!(
            out,
            "| | **total** | {} | {} | {} | {} of {} | |\n",
            if outcomes.is_empty() {
                "—".into()
            } else {
                outcomes.join(", ")
            },
            duration(r.totals.duration_ms / 1000),
            r.totals.cost_usd.map_or("—".into(), usd),
            r.totals.tasks.completed,
            r.totals.tasks.total,
        );
    }
    if !r.unreadable.is_empty() {
        out.push_str("**Records that could not be read:**\n\n");
        for u in &r.unreadable {
            let _ = writeln!(
                out,
                "- {}: {}",
                code_span(&u.record.to_string_lossy()),
                inline(&u.error, 300)
            );
        }
        out.push('\n');
    }
    for (i, t) in r.teams.iter().enumerate() {
        let _ = writeln!(out, "## Team {}\n", i + 1);
        let _ = writeln!(
            out,
            "**{}** (team {}): {}{}\n",
            inline(&t.name, 80),
            inline(&t.team, 80),
            t.outcome
                .as_deref()
                .map_or("no run".into(), |o| inline(o, 40)),
            t.reason
                .as_deref()
                .map(|r| format!(": {}", inline(r, 500)))
                .unwrap_or_default()
        );
        let _ = writeln!(
            out,
            "{} members, {} messages, tasks {} of {} done. Record: {} (its report.md tells the whole story).\n",
            t.members,
            t.messages,
            t.tasks.completed,
            t.tasks.total,
            code_span(&t.record.to_string_lossy())
        );
        if let Some(a) = &t.result {
            out.push_str("The lead's answer:\n\n");
            let f = fenced(a, ANSWER_MAX);
            out.push_str(&f.block);
            if f.cut > 0 {
                out.push_str("\n*(cut: the whole answer is in the record)*\n");
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn summary(name: &str, state: &str) -> Value {
        json!({
            "schema_version": 1,
            "generated_at": "2026-12-01T10:05:00.000Z",
            "team": format!("session-{name}"),
            "run": {"name": name, "state": state, "reason": null, "result": "ok", "elapsed_ms": 65000},
            "status": {
                "team": {"created_at": "2026-12-01T10:00:00.000Z"},
                "members": [{}, {}],
                "tasks": {"pending": 1, "in_progress": 0, "completed": 2, "blocked": 0, "ready": 1}
            },
            "tasks": [],
            "messages": [{}, {}, {}],
            "result": "FINAL",
            "cost": {"members": [], "tokens": {"input": 1, "output": 1, "cache_read": 0, "cache_creation": 0},
                     "cost_usd": 1.25, "known_cost_usd": 1.25, "cost_source": "computed"}
        })
    }

    #[test]
    fn a_row_from_a_summary() {
        let t = team(Path::new("r"), &summary("a", "done")).unwrap();
        assert_eq!(t.name, "a");
        assert_eq!(t.outcome.as_deref(), Some("done"));
        assert_eq!(t.duration_ms, Some(65000));
        assert_eq!(t.cost_usd, Some(1.25));
        assert_eq!(
            t.tasks,
            TaskTally {
                completed: 2,
                total: 3
            }
        );
        assert_eq!((t.members, t.messages), (2, 3));
        assert_eq!(t.result.as_deref(), Some("FINAL"));
        // No run's time: from the team's creation to the record.
        let mut s = summary("b", "timeout");
        s["run"].as_object_mut().unwrap().remove("elapsed_ms");
        assert_eq!(team(Path::new("r"), &s).unwrap().duration_ms, Some(300_000));
        // A plain export: no run.
        s["run"] = Value::Null;
        let t = team(Path::new("r"), &s).unwrap();
        assert_eq!((t.name.as_str(), t.outcome), ("session-b", None));
    }
}
