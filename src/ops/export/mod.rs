//! A record of a team that outlives it: its files, its conversation and its state, gathered into
//! a folder or a `.tar.gz` for a CI artifact or an archive ([`export`]), or just the report
//! ([`summarize`] + [`markdown::render`]).
//!
//! The bundle holds:
//! - `team/config.json`, `team/inboxes/<member>.json`, `tasks/<file>` (every task file and
//!   `.highwatermark`), copied byte for byte;
//! - `sent.jsonl`: the team's lines of teamctl's sent log;
//! - `bridge.jsonl`: the team's lines of `teamctl bridge`'s journal (what was posted to a chat
//!   and who answered what from there), when there are any;
//! - `actions.jsonl`: the team's lines of teamctl's journal of the restarts and resumes it made
//!   ([`crate::team::actions`]), when there are any;
//! - `transcripts/<member>/<session>.jsonl`: every member's sessions as
//!   [`crate::team::transcript::locate`] finds them (the lead's, pane teammates' own sessions,
//!   in-process teammates' subagent files, several for a member that was restarted), and the
//!   plain subagents of a session under `transcripts/<member>/<session>/subagents/`, cut at
//!   their last whole line;
//! - `summary.json` ([`Summary`]): the `status --json` document, the tasks, every message in time
//!   order (from the inboxes, the sent log and the transcripts, so delivered and consumed messages
//!   are there too), the lead's final answer, the transcripts, what each member cost and the
//!   team in total ([`Cost`], from [`crate::observe::spend`]) and a sha256 of every file;
//! - `report.md` ([`markdown`]): the same for people, safe to append to `$GITHUB_STEP_SUMMARY`;
//! - `report.html` ([`html`]): the same as one self-contained page, with each member's cost over
//!   time ([`crate::observe::spend::series`]) drawn and embedded as JSON.
//!
//! Streams: a transcript is copied as it is read (hashed, counted and read for what the record
//! needs on the way), an inbox is parsed on its own and only its messages are kept, and
//! `summary.json` is written as it is serialized; what stays in memory is the messages (the
//! conversation is sorted by time), the reports' pages (each kept under its budget) and
//! counters.
//!
//! Reads only: no lock is taken (each file is copied as one whole version, see
//! [`crate::store::snapshot`]; every file reached through [`crate::store::dir`] handles, so a
//! symlink, FIFO or device in the team's folders is reported and left out), nothing is written
//! into the config dir (the transcript index in teamctl's data dir is brought up to date, as
//! `status` does), and the bundle appears at its path only once complete. Names read from the team's files decide no path: only valid
//! member names, task ids and session ids become file names in the bundle.

mod bundle;
mod conversation;
mod gather;
pub mod html;
pub mod markdown;
pub mod summary;
mod transcripts;

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use serde::Serialize;

use bundle::Bundle;
pub use bundle::Format;
pub use conversation::conversation;
use gather::gather;
pub use summary::{
    BranchInfo, Cost, FileInfo, MemberCost, MergedMember, Message, MessageState, RunCap, RunInfo,
    RunMerge, Source, Summary, TranscriptInfo,
};

use crate::observe::spend::series::Series;
use crate::store::paths::{Layout, TeamName, is_valid_member};
use crate::store::snapshot::Copy as FileCopy;
use crate::team::records::Records;
use crate::team::sentlog::Sent;

/// What to record.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The config dir.
    pub layout: &'a Layout,
    /// The team.
    pub team: &'a TeamName,
    /// The lead's session when known otherwise (`run` knows it before `config.json` exists and
    /// after it is gone); else `leadSessionId` of `config.json`.
    pub lead_session_id: Option<&'a str>,
    /// teamctl's sent log (every team's lines: the team's are taken).
    pub sent: &'a [Sent],
    /// The time of the record.
    pub now: DateTime<Utc>,
    /// The run this record ends, if any.
    pub run: Option<RunInfo>,
    /// teamctl's own records: its record of the teams it leads (a team teamctl made has no
    /// lead transcript), and its data dir, whose transcript index makes reading the
    /// transcripts' cost quicker (without one: read in memory only). The sent log is
    /// [`Request::sent`], as read.
    pub records: &'a Records,
}

/// What [`export`] wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exported {
    /// The bundle's path.
    pub out: PathBuf,
    /// Its form.
    pub format: Format,
    /// Files in it.
    pub files: usize,
    /// Bytes of the files (before compression).
    pub bytes: u64,
    /// Its size on disk (the archive's, compressed; a folder's files).
    pub size: u64,
    /// Messages on record.
    pub messages: usize,
    /// Transcripts copied.
    pub transcripts: usize,
    /// Warnings (also in `summary.json`).
    pub warnings: Vec<String>,
}

/// A file handed to the bundle as it is copied.
enum Content<'a> {
    /// Copied whole (a small JSON file).
    Bytes(&'a FileCopy),
    /// Streamed (a transcript): `len` bytes from `reader`.
    Stream {
        len: u64,
        mtime: Option<std::time::SystemTime>,
        reader: &'a mut dyn Read,
    },
}

/// Receives each file as it is copied.
type Sink<'a> = dyn FnMut(&str, Content) -> Result<()> + 'a;

/// The record of `req` without writing it anywhere (for `export --report-only`).
///
/// # Errors
/// The team's folders cannot be listed.
pub fn summarize(req: &Request) -> Result<Summary> {
    let (summary, _) = gather(req, &mut |_, content| {
        if let Content::Stream { reader, .. } = content {
            io::copy(reader, &mut io::sink())?;
        }
        Ok(())
    })?;
    Ok(summary)
}

/// Writes the record of `req` to `out`: a folder, or a `.tar.gz` ([`Format::of`]).
///
/// # Errors
/// `out` exists or lies inside the config dir; I/O writing the bundle. A file of the team that
/// cannot be read is a warning in the record, not an error.
pub fn export(req: &Request, out: &Path) -> Result<(Exported, Summary)> {
    check_out(req.layout, out)?;
    let mut bundle = Bundle::create(out)?;
    let mut files = 0;
    let (summary, series) = gather(req, &mut |rel, content| {
        files += 1;
        match content {
            Content::Bytes(c) => bundle.add(rel, &c.bytes, c.mtime),
            Content::Stream { len, mtime, reader } => bundle.add_reader(rel, len, mtime, reader),
        }
    })?;
    let mtime = Some(std::time::SystemTime::from(req.now));
    let mut summary = summary;
    files += add_patches(&mut bundle, &mut summary, mtime)?;
    bundle.add_written("summary.json", mtime, &|w| {
        serde_json::to_writer_pretty(&mut *w, &summary)?;
        w.write_all(b"\n")
    })?;
    bundle.add("report.md", markdown::render(&summary).as_bytes(), mtime)?;
    let page = html::render(&summary, &series)?;
    bundle.add("report.html", page.as_bytes(), mtime)?;
    let bytes = bundle.written();
    let size = bundle.finish()?;
    Ok((
        Exported {
            out: out.to_path_buf(),
            format: Format::of(out),
            files: files + 3,
            bytes,
            size,
            messages: summary.messages.len(),
            transcripts: summary
                .transcripts
                .iter()
                .filter(|t| t.path.is_some())
                .count(),
            warnings: summary.warnings.clone(),
        },
        summary,
    ))
}

/// `patches/<member>.patch` for each teammate with a worktree (its work against the commit
/// it started from, uncommitted changes included while its worktree is there); one that cannot
/// be made is a warning. Returns how many were added.
fn add_patches(
    bundle: &mut Bundle,
    summary: &mut Summary,
    mtime: Option<std::time::SystemTime>,
) -> Result<usize> {
    let mut added = 0;
    for w in &summary.worktrees {
        if !is_valid_member(&w.member) {
            continue;
        }
        match w.patch() {
            Ok(p) => {
                bundle.add(&format!("patches/{}.patch", w.member), p.as_bytes(), mtime)?;
                added += 1;
            }
            Err(e) => summary
                .warnings
                .push(format!("no patch of {}'s work: {e:#}", w.member)),
        }
    }
    Ok(added)
}

/// Refuses a bundle inside the config dir (export never writes there).
fn check_out(layout: &Layout, out: &Path) -> Result<()> {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let canon = |p: &Path| {
        // The nearest existing ancestor, resolved, plus the rest.
        let p = abs(p);
        let mut base = p.as_path();
        let mut rest = Vec::new();
        while !base.exists() {
            match (base.parent(), base.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_owned());
                    base = parent;
                }
                _ => break,
            }
        }
        let mut c = fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
        c.extend(rest.iter().rev());
        c
    };
    let root = canon(layout.root());
    if canon(out).starts_with(&root) {
        bail!(
            "--out {} is inside the Claude config dir {}: export never writes there; pick a \
             path outside it",
            out.display(),
            root.display()
        );
    }
    Ok(())
}

/// Each member's cost over time, by name ([`crate::observe::spend::series`]).
pub type CostSeries = BTreeMap<String, Series>;
