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
//! Reads only: no lock is taken (each file is copied as one whole version, see
//! [`crate::store::snapshot`]; every file reached through [`crate::store::dir`] handles, so a
//! symlink, FIFO or device in the team's folders is reported and left out), nothing is written
//! into the config dir (the transcript index in teamctl's data dir is brought up to date, as
//! `status` does), and the bundle appears at its path only once complete. Names read from the team's files decide no path: only valid
//! member names, task ids and session ids become file names in the bundle.

mod bundle;
pub mod html;
pub mod markdown;
mod merge;
pub mod summary;

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};

use bundle::Bundle;
pub use bundle::Format;
pub use merge::conversation;
pub use summary::{
    BranchInfo, Cost, FileInfo, MemberCost, Message, MessageState, RunCap, RunInfo, Source,
    Summary, TranscriptInfo,
};

use crate::observe::document::{Identity, StatusDocument};
use crate::observe::history::History;
use crate::observe::human;
use crate::observe::reader::{Options, TeamReader};
use crate::observe::spend::series::Series;
use crate::store;
use crate::store::dir::{self, Loc};
use crate::store::paths::{Layout, MemberName, TeamName, is_valid_member};
use crate::store::snapshot::{self, Copy as FileCopy};
use crate::team::config::{LEAD, Team, TeamConfig, recorded_lead};
use crate::team::conversation::{self, Said};
use crate::team::records::Records;
use crate::team::sentlog::Sent;
use crate::team::tasks::{Board, Task, TaskView};
use crate::team::transcript::FileState;
use crate::team::transcript::locate::{self, is_session_id};
use crate::time::iso_millis;

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
    let mut doc = serde_json::to_vec_pretty(&summary)?;
    doc.push(b'\n');
    bundle.add("summary.json", &doc, mtime)?;
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

/// Reads everything the record holds, handing each copied file to `sink` as it goes, and
/// returns the summary (its `files` filled in) and each member's cost over time.
fn gather(req: &Request, sink: &mut Sink) -> Result<(Summary, History)> {
    let mut g = Gathering {
        sink,
        files: Vec::new(),
        warnings: Vec::new(),
    };
    let name = req.team;
    let team_folder = g.team_folder(req.layout, name);
    let team = g.team(req)?;
    let inboxes = g.inboxes(req.layout, name)?;
    let board = g.tasks(req.layout, name)?;
    let tasks: Vec<TaskView> = board.tasks.iter().map(|t| board.view(t)).collect();
    let sent: Vec<&Sent> = req
        .sent
        .iter()
        .filter(|s| s.team == name.as_str())
        .collect();
    g.sent_log(&sent)?;
    g.bridge_journal(req)?;

    // The team as `status` reads it, from the config.json copied above, with the run's own
    // session id (which it knows before config.json exists and after it is gone); its
    // transcripts read once through the transcript index.
    let session = g.lead_session(req, team.config.as_ref());
    let opts = Options {
        probe: false,
        ..Options::default()
    };
    let mut reader = TeamReader::of(team.clone(), req.records.clone(), opts)
        .with_sent(req.sent.to_vec())
        .with_lead_session(session.as_deref());
    let present = reader.read_opened(req.now)?;
    // What `status` would say a person is needed for now (with its default threshold), and the
    // inboxes nobody reads.
    let lost = crate::observe::misaddressed::scan(&team).misaddressed;
    let needs = human::needs(&present, &team, &board, human::REQUEST_AFTER, &lost);
    // A cache: a failure to save it only makes the next read longer.
    let _ = reader.save();
    let spend = reader
        .spend()
        .map(|s| s.spend().clone())
        .unwrap_or_default();
    g.warnings.extend(spend.warnings.iter().cloned());
    let empty = BTreeMap::new();
    let located = reader.spend().map_or(&empty, |s| s.sessions());
    let lead_name = team
        .config
        .as_ref()
        .and_then(|c| c.lead().map(|l| l.name.clone()))
        .unwrap_or_else(|| LEAD.to_string());
    let mut t = g.transcripts(located, &lead_name)?;
    if let Some(sid) = session.as_deref()
        && !located
            .get(&lead_name)
            .is_some_and(|v| v.iter().any(|s| s.kind == locate::Kind::Lead))
        && !team.teamctl_leads()
    {
        g.lead_transcript_missing(req.layout, &lead_name, sid, &mut t.infos);
    }
    if t.result.is_none() {
        t.result = req.run.as_ref().and_then(|r| r.result.clone());
    }
    let messages = conversation(&inboxes, &sent, t.said, team_folder);

    // The status document, as `status --json` would show it now (read above), for teamctl's
    // default identity in the team; the task counts of the tasks copied.
    let st = present.status;
    g.warnings.extend(st.warnings.iter().cloned());
    let cost = Cost::of(&spend, &st.members);
    t.series.note_tasks(&board);
    let identity = Identity::of(&team, team.default_identity());
    let mut status = StatusDocument::of(st, identity, needs, lost);
    status.tasks = crate::observe::status::task_counts(&board);
    let mut warnings = g.warnings;
    let mut seen = std::collections::HashSet::new();
    warnings.retain(|w| seen.insert(w.clone()));
    let summary = Summary {
        schema_version: 1,
        generated_at: iso_millis(req.now),
        generator: format!("teamctl {}", env!("CARGO_PKG_VERSION")),
        team: name.to_string(),
        team_folder,
        run: req.run.clone(),
        status,
        tasks,
        messages,
        result: t.result,
        result_final: t.result_final,
        transcripts: t.infos,
        cost,
        worktrees: team
            .lead
            .as_ref()
            .and_then(|r| r.launch.as_ref())
            .map(|l| BranchInfo::of(&l.members))
            .unwrap_or_default(),
        files: g.files,
        warnings,
    };
    Ok((summary, t.series))
}

/// The transcripts copied: each file's record, the messages they say were delivered, the
/// lead's last text (its final answer when its turn ended) and each member's responses.
struct Transcripts {
    infos: Vec<TranscriptInfo>,
    said: Vec<Said>,
    result: Option<String>,
    result_final: bool,
    series: History,
}

struct Gathering<'s, 'a> {
    sink: &'s mut Sink<'a>,
    files: Vec<FileInfo>,
    warnings: Vec<String>,
}

impl Gathering<'_, '_> {
    /// Whether the team folder is there (a symlink, FIFO, … in its place is a warning).
    fn team_folder(&mut self, layout: &Layout, name: &TeamName) -> bool {
        let team_dir = layout.team_dir(name);
        match team_dir.stat() {
            Ok(Some(i)) => {
                if i.kind != dir::Kind::Dir {
                    self.warnings.push(format!(
                        "skipped {}",
                        dir::Unexpected {
                            path: team_dir.to_path_buf(),
                            found: i.kind,
                            wanted: dir::Kind::Dir,
                        }
                    ));
                }
                i.kind == dir::Kind::Dir
            }
            Ok(None) => false,
            Err(e) => {
                self.warnings.push(locate::refusal(&team_dir, &e));
                false
            }
        }
    }

    /// Copies `config.json`, and returns the team as it describes it (with teamctl's lead
    /// record when it matches).
    fn team(&mut self, req: &Request) -> Result<Team> {
        let (layout, name) = (req.layout, req.team);
        let config_path = layout.config_path(name);
        let config = self
            .json("team/config.json", &config_path)?
            .and_then(|c| TeamConfig::parse(&c.bytes, &config_path).ok());
        // A record that cannot be read leaves the team without one in the record.
        let lead = recorded_lead(layout, name, config.as_ref(), req.records.leads())
            .ok()
            .flatten();
        Ok(Team {
            layout: layout.clone(),
            name: name.clone(),
            config,
            lead,
            // A record is not asked about tmux.
            run: None,
        })
    }

    /// Copies every inbox, and returns the entries of those that parse (one that does not is
    /// reported by the status).
    fn inboxes(
        &mut self,
        layout: &Layout,
        name: &TeamName,
    ) -> Result<Vec<(String, Vec<store::Entry>)>> {
        let mut inboxes = Vec::new();
        let inboxes_dir = layout.inboxes_dir(name);
        for owner in self.names_in(&inboxes_dir, ".json") {
            let path = inboxes_dir.join(format!("{owner}.json"));
            let rel = format!("team/inboxes/{owner}.json");
            if let Some(c) = self.json(&rel, &path)? {
                let lossy = store::format::replace_lone_surrogates(&c.bytes);
                let bytes = lossy.as_deref().unwrap_or(&c.bytes);
                if let Ok(entries) = store::parse_inbox(bytes, &path) {
                    inboxes.push((owner, entries));
                }
            }
        }
        Ok(inboxes)
    }

    /// Copies every task file and `.highwatermark`, and returns the board of those that parse.
    fn tasks(&mut self, layout: &Layout, name: &TeamName) -> Result<Board> {
        let tasks_dir = layout.tasks_dir(name);
        let mut board = Board::default();
        let mut task_files: Vec<String> = self
            .names_in(&tasks_dir, ".json")
            .into_iter()
            .map(|n| n + ".json")
            .collect();
        if matches!(tasks_dir.join(".highwatermark").stat(), Ok(Some(_))) {
            task_files.push(".highwatermark".into());
        }
        task_files.sort();
        for file in task_files {
            let path = tasks_dir.join(&file);
            if file.starts_with('.') {
                self.raw(&format!("tasks/{file}"), &path)?;
                continue;
            }
            let Some(c) = self.json(&format!("tasks/{file}"), &path)? else {
                continue;
            };
            if let Ok(t) = store::parse_object(&c.bytes, &path)
                .map_err(|e| format!("{e:#}"))
                .and_then(|raw| Task::from_raw(raw, path.to_path_buf()))
            {
                board.tasks.push(t);
            }
        }
        board.tasks.sort_by(|a, b| {
            let n = |s: &str| s.parse::<u64>().unwrap_or(u64::MAX);
            n(&a.id).cmp(&n(&b.id)).then_with(|| a.id.cmp(&b.id))
        });
        Ok(board)
    }

    /// Writes the team's lines of teamctl's sent log as `sent.jsonl` (none: no file).
    fn sent_log(&mut self, sent: &[&Sent]) -> Result<()> {
        if sent.is_empty() {
            return Ok(());
        }
        let mut lines = Vec::new();
        for s in sent {
            lines.extend(serde_json::to_vec(s)?);
            lines.push(b'\n');
        }
        self.add(
            "sent.jsonl",
            &FileCopy {
                bytes: lines,
                mtime: None,
                retries: 0,
                settled: true,
                changing: false,
            },
        )
    }

    /// Writes the team's lines of the bridge's journal in the data dir as `bridge.jsonl`
    /// (none: no file); a journal that cannot be read is a warning.
    fn bridge_journal(&mut self, req: &Request) -> Result<()> {
        let Some(dir) = req.records.data_dir() else {
            return Ok(());
        };
        let records = match crate::ops::bridge::Journal::in_dir(dir).read() {
            Ok((records, _)) => records,
            Err(e) => {
                self.warnings.push(format!("{e:#}"));
                return Ok(());
            }
        };
        let mut lines = Vec::new();
        for r in records
            .iter()
            .filter(|r| r.team.as_deref() == Some(req.team.as_str()))
        {
            lines.extend(serde_json::to_vec(r)?);
            lines.push(b'\n');
        }
        if lines.is_empty() {
            return Ok(());
        }
        self.add(
            "bridge.jsonl",
            &FileCopy {
                bytes: lines,
                mtime: None,
                retries: 0,
                settled: true,
                changing: false,
            },
        )
    }

    /// The lead's session: the one the run knows, else `leadSessionId`; one that is not a
    /// session id is a warning and is not looked for.
    fn lead_session(&mut self, req: &Request, config: Option<&TeamConfig>) -> Option<String> {
        let session = req
            .lead_session_id
            .map(String::from)
            .or_else(|| config.and_then(|c| c.lead_session_id.clone()))?;
        if is_session_id(&session) {
            return Some(session);
        }
        self.warnings.push(format!(
            "leadSessionId {session:?} is not a session id; its transcript was not looked for"
        ));
        None
    }

    /// Copies every member's sessions (the lead first, then the others in name order), each
    /// with its subagents', reading the messages they delivered and the lead's final answer.
    fn transcripts(
        &mut self,
        located: &BTreeMap<String, Vec<locate::Session>>,
        lead_name: &str,
    ) -> Result<Transcripts> {
        let mut t = Transcripts {
            infos: Vec::new(),
            said: Vec::new(),
            result: None,
            result_final: false,
            series: History::default(),
        };
        let mut owners: Vec<&String> = located.keys().collect();
        owners.sort_by_key(|n| *n != lead_name);
        for owner in owners {
            for s in &located[owner] {
                self.session(owner, s, &mut t)?;
            }
        }
        Ok(t)
    }

    /// Copies one session of `owner` and its subagents' files into `t`.
    fn session(&mut self, owner: &str, s: &locate::Session, t: &mut Transcripts) -> Result<()> {
        let folder = safe_name(owner);
        let kind = match s.kind {
            locate::Kind::Lead => "lead",
            locate::Kind::Pane => "pane",
            locate::Kind::InProcess => "in_process",
        };
        let stem = file_stem(&s.path);
        let rel = format!("transcripts/{folder}/{stem}.jsonl");
        let sid = (s.kind != locate::Kind::InProcess).then(|| stem.clone());
        let mut st = FileState::default();
        let is_lead = s.kind == locate::Kind::Lead && t.result.is_none();
        let file = TranscriptFile {
            rel: &rel,
            path: &s.path,
            member: owner,
            session: sid.as_deref(),
            kind,
        };
        let series = &mut t.series;
        let info = self.transcript(&file, Some(&mut t.said), &mut |line| {
            series.feed(owner, line);
            if is_lead {
                st.feed(line);
            }
        })?;
        if let Some(info) = info {
            if is_lead {
                t.result_final = st.turn.ended && st.turn.last_text.is_some();
                t.result = st.turn.last_text.take();
            }
            t.infos.push(info);
        }
        for sub in &s.subagents {
            let rel = format!(
                "transcripts/{folder}/{stem}/subagents/{}.jsonl",
                file_stem(sub)
            );
            let file = TranscriptFile {
                rel: &rel,
                path: sub,
                member: owner,
                session: None,
                kind: "subagent",
            };
            let series = &mut t.series;
            if let Some(info) =
                self.transcript(&file, None, &mut |l| series.feed_subagent(owner, l))?
            {
                t.infos.push(info);
            }
        }
        Ok(())
    }

    /// The lead's session `sid` was not found: said, and recorded without a file.
    fn lead_transcript_missing(
        &mut self,
        layout: &Layout,
        lead_name: &str,
        sid: &str,
        infos: &mut Vec<TranscriptInfo>,
    ) {
        self.warnings.push(format!(
            "the lead's transcript ({sid}.jsonl) was not found under {}",
            layout.root().join("projects").display()
        ));
        infos.push(TranscriptInfo {
            member: lead_name.to_string(),
            session_id: Some(sid.to_string()),
            kind: "lead",
            path: None,
            source: None,
            lines: 0,
            bytes: 0,
        });
    }

    /// The names `<name><ext>` in the folder `dir` (anything: the copy refuses what is not a
    /// regular file) whose `<name>` is a valid member name, sorted. The folder is opened through
    /// handles from the config dir down: a symlink or a file in its place is reported, and
    /// nothing is listed.
    fn names_in(&mut self, dir: &Loc, ext: &str) -> Vec<String> {
        let listed = match dir.open_dir().and_then(|d| d.names()) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                locate::note(&mut self.warnings, locate::refusal(dir, &e));
                return Vec::new();
            }
        };
        let mut names: Vec<String> = listed
            .into_iter()
            .filter_map(|n| n.into_string().ok())
            .filter_map(|n| n.strip_suffix(ext).map(String::from))
            .filter(|n| is_valid_member(n))
            .collect();
        names.sort();
        names
    }

    fn add(&mut self, rel: &str, copy: &FileCopy) -> Result<()> {
        (self.sink)(rel, Content::Bytes(copy))?;
        self.files.push(FileInfo {
            path: rel.to_string(),
            bytes: copy.bytes.len() as u64,
            sha256: hex(&Sha256::digest(&copy.bytes)),
            settled: copy.settled,
        });
        Ok(())
    }

    /// Copies a JSON file; a file that cannot be read is a warning.
    fn json(&mut self, rel: &str, path: &Loc) -> Result<Option<FileCopy>> {
        self.copy(rel, path, &|b: &[u8]| {
            serde_json::from_slice::<serde::de::IgnoredAny>(b).is_ok()
                || store::format::replace_lone_surrogates(b)
                    .is_some_and(|l| serde_json::from_slice::<serde::de::IgnoredAny>(&l).is_ok())
        })
    }

    /// Copies a file of any content (one whole version of it).
    fn raw(&mut self, rel: &str, path: &Loc) -> Result<Option<FileCopy>> {
        self.copy(rel, path, &|_: &[u8]| true)
    }

    fn copy(
        &mut self,
        rel: &str,
        path: &Loc,
        valid: &dyn Fn(&[u8]) -> bool,
    ) -> Result<Option<FileCopy>> {
        match snapshot::copy_json(path, valid) {
            Ok(Some(c)) => {
                if c.changing {
                    self.warnings.push(format!(
                        "{} kept changing while it was copied; copied as last read",
                        path.display()
                    ));
                }
                self.add(rel, &c)?;
                Ok(Some(c))
            }
            Ok(None) => Ok(None),
            Err(e) => {
                self.warnings.push(format!("{e:#}"));
                Ok(None)
            }
        }
    }

    /// Copies a transcript, reading its messages into `said` and handing each line to `line`.
    fn transcript(
        &mut self,
        file: &TranscriptFile,
        said: Option<&mut Vec<Said>>,
        line: &mut dyn FnMut(&[u8]),
    ) -> Result<Option<TranscriptInfo>> {
        let TranscriptFile {
            rel,
            path,
            member,
            session,
            kind,
        } = *file;
        let mut l = match snapshot::open_lines(path) {
            Ok(Some(l)) => l,
            Ok(None) => {
                self.warnings.push(format!(
                    "{} disappeared before it was copied",
                    path.display()
                ));
                return Ok(None);
            }
            Err(e) => {
                self.warnings.push(format!("{e:#}"));
                return Ok(None);
            }
        };
        // A plain subagent's messages are its own business, not the team's conversation.
        let reading = said.is_some();
        let mut reader = conversation::Reader::new(member);
        let mut tee = Tee {
            inner: &mut l.reader,
            hash: Sha256::new(),
            partial: Vec::new(),
            lines: 0,
            bytes: 0,
            on_line: &mut |b: &[u8]| {
                if reading {
                    reader.feed(b);
                }
                line(b);
            },
        };
        (self.sink)(
            rel,
            Content::Stream {
                len: l.len,
                mtime: l.mtime,
                reader: &mut tee,
            },
        )?;
        let (lines, bytes, sha) = (tee.lines, tee.bytes, hex(&tee.hash.finalize_reset()));
        if let Some(said) = said {
            said.extend(reader.finish());
        }
        self.files.push(FileInfo {
            path: rel.to_string(),
            bytes,
            sha256: sha,
            settled: true,
        });
        Ok(Some(TranscriptInfo {
            member: member.to_string(),
            session_id: session
                .map(String::from)
                .or_else(|| path.file_stem().and_then(|s| s.to_str()).map(String::from)),
            kind,
            path: Some(rel.to_string()),
            source: Some(path.display().to_string()),
            lines,
            bytes,
        }))
    }
}

/// A transcript to copy: where it goes in the record, where it is, whose it is, its session
/// (else its file's name) and its kind.
struct TranscriptFile<'a> {
    rel: &'a str,
    path: &'a Loc,
    member: &'a str,
    session: Option<&'a str>,
    kind: &'static str,
}

/// The longest line a transcript's reader is given (longer ones are skipped: no entry the
/// record reads is that long); the copy keeps them.
const MAX_LINE: usize = 16 << 20;

/// Reads through a transcript as the bundle copies it: hashes it, counts its lines and hands
/// each to `on_line`.
struct Tee<'a> {
    inner: &'a mut dyn Read,
    hash: Sha256,
    partial: Vec<u8>,
    lines: usize,
    bytes: u64,
    on_line: &'a mut dyn FnMut(&[u8]),
}

impl Read for Tee<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let got = &buf[..n];
        self.hash.update(got);
        self.bytes += n as u64;
        let mut rest = got;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            if self.partial.len() <= MAX_LINE {
                self.partial.extend_from_slice(&rest[..i]);
                if !self.partial.is_empty() {
                    (self.on_line)(&self.partial);
                }
            }
            self.lines += 1;
            self.partial.clear();
            rest = &rest[i + 1..];
        }
        if self.partial.len() <= MAX_LINE {
            self.partial.extend_from_slice(rest);
        }
        Ok(n)
    }
}

/// The last name of `loc` without `.jsonl`, as a file name in the bundle: itself when it is
/// made of letters, digits, `-` and `_` (a session id, `agent-<id>`), else a name derived from
/// its hash.
fn file_stem(loc: &Loc) -> String {
    let name = loc.name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    if is_valid_member(stem) {
        stem.to_string()
    } else {
        format!("file-{}", &hex(&Sha256::digest(stem.as_bytes()))[..12])
    }
}

/// Whether `s` can be a Claude Code session id (a UUID; nothing that could step out of a
/// folder).
/// `name` as a folder name in the bundle: itself when it is a valid member name, else a name
/// derived from its hash.
fn safe_name(name: &str) -> String {
    if is_valid_member(name) && MemberName::parse(name).is_ok() {
        name.to_string()
    } else {
        format!("member-{}", &hex(&Sha256::digest(name.as_bytes()))[..12])
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
