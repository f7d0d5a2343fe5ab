//! Reading a team for its record ([`gather`]): each file handed to the sink as it is copied,
//! the team's present read through [`TeamReader`] as `status` reads it, each inbox turned into
//! its messages as it is read (its entries not kept), the transcripts copied by
//! [`super::transcripts`], and the summary put together.

use std::collections::BTreeMap;
use std::io;

use anyhow::Result;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::conversation::Collated;
use super::summary::{BranchInfo, Cost, FileInfo, Summary};
use super::{Content, Request, Sink};
use crate::observe::document::{Identity, StatusDocument};
use crate::observe::history::History;
use crate::observe::human;
use crate::observe::reader::{Options, TeamReader};
use crate::store;
use crate::store::dir::{self, Loc};
use crate::store::paths::{Layout, TeamName, is_valid_member};
use crate::store::snapshot::{self, Copy as FileCopy};
use crate::team::actions::Action;
use crate::team::config::{LEAD, Team, TeamConfig, recorded_lead};
use crate::team::sentlog::Sent;
use crate::team::tasks::{Board, Task, TaskView};
use crate::team::transcript::locate::{self, is_session_id};
use crate::time::iso_millis;

/// Reads everything the record holds, handing each copied file to `sink` as it goes, and
/// returns the summary (its `files` filled in) and each member's cost over time.
pub(super) fn gather(req: &Request, sink: &mut Sink) -> Result<(Summary, History)> {
    let mut g = Gathering {
        sink,
        files: Vec::new(),
        warnings: Vec::new(),
    };
    let name = req.team;
    let team_folder = g.team_folder(req.layout, name);
    let team = g.team(req)?;
    let mut collated = Collated::default();
    g.inboxes(req.layout, name, &mut collated)?;
    let board = g.tasks(req.layout, name)?;
    let tasks: Vec<TaskView> = board.tasks.iter().map(|t| board.view(t)).collect();
    let sent: Vec<&Sent> = req
        .sent
        .iter()
        .filter(|s| s.team == name.as_str())
        .collect();
    g.sent_log(&sent)?;
    g.bridge_journal(req)?;
    let actions = g.actions_journal(req)?;

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
    let messages = collated.finish(&sent, t.said, team_folder);

    // The status document, as `status --json` would show it now (read above), for teamctl's
    // default identity in the team; the task counts of the tasks copied.
    let st = present.status;
    g.warnings.extend(st.warnings.iter().cloned());
    let cost = Cost::of(&spend, &st.members);
    t.series.note_tasks(&board);
    t.series.note_actions(&actions);
    let identity = Identity::of(&team, team.default_identity());
    let mut status = StatusDocument::of(st, identity, needs, lost);
    status.tasks = crate::observe::status::task_counts(&board);
    run_sandbox(req, &team, &mut status);
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
        actions,
        files: g.files,
        warnings,
    };
    Ok((summary, t.series))
}

/// The record being gathered: where each copied file goes, and what was copied and noticed.
pub(super) struct Gathering<'s, 'a> {
    pub(super) sink: &'s mut Sink<'a>,
    pub(super) files: Vec<FileInfo>,
    pub(super) warnings: Vec<String>,
}

/// A team a sandboxed run's lead formed: the record says so for every member (a record is not
/// asked about tmux, so the run's record is read for that alone).
fn run_sandbox(req: &Request, team: &Team, status: &mut StatusDocument) {
    let id = team
        .config
        .as_ref()
        .and_then(|c| c.lead_session_id.as_deref());
    let Some(rules) = req
        .records
        .leads()
        .and_then(|l| l.find_run(req.layout, req.team).ok().flatten())
        .filter(|r| Some(r.lead_session_id.as_str()) == id)
        .and_then(|r| r.sandbox)
    else {
        return;
    };
    let shown = rules.shown();
    for m in &mut status.members {
        m.sandbox = Some(shown.clone());
    }
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

    /// Copies every inbox, and hands the entries of each that parses to `collated` (one that does
    /// not is reported by the status), one inbox at a time: only its messages are kept.
    fn inboxes(&mut self, layout: &Layout, name: &TeamName, collated: &mut Collated) -> Result<()> {
        let inboxes_dir = layout.inboxes_dir(name);
        for owner in self.names_in(&inboxes_dir, ".json") {
            let path = inboxes_dir.join(format!("{owner}.json"));
            let rel = format!("team/inboxes/{owner}.json");
            if let Some(c) = self.json(&rel, &path)? {
                let lossy = store::format::replace_lone_surrogates(&c.bytes);
                let bytes = lossy.as_deref().unwrap_or(&c.bytes);
                if let Ok(entries) = store::parse_inbox(bytes, &path) {
                    collated.inbox(&owner, &entries);
                }
            }
        }
        Ok(())
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
        self.add_json_lines("sent.jsonl", sent)
    }

    /// Writes `items` as `name`, one JSON line each (none: no file).
    fn add_json_lines<T: Serialize>(
        &mut self,
        name: &str,
        items: impl IntoIterator<Item = T>,
    ) -> Result<()> {
        let mut lines = Vec::new();
        for item in items {
            lines.extend(serde_json::to_vec(&item)?);
            lines.push(b'\n');
        }
        if lines.is_empty() {
            return Ok(());
        }
        self.add(
            name,
            &FileCopy {
                bytes: lines,
                mtime: None,
                retries: 0,
                settled: true,
                changing: false,
            },
        )
    }

    /// Writes the team's lines of the bridge's journal in the data dir as `bridge.jsonl`, its
    /// refusals too, in time order (none: no file); a journal that cannot be read is a warning.
    fn bridge_journal(&mut self, req: &Request) -> Result<()> {
        let Some(dir) = req.records.data_dir() else {
            return Ok(());
        };
        let records = match crate::ops::chat::Journal::in_dir(dir).read_all() {
            Ok((records, _)) => records,
            Err(e) => {
                self.warnings.push(format!("{e:#}"));
                return Ok(());
            }
        };
        let team = Some(req.team.as_str());
        self.add_json_lines(
            "bridge.jsonl",
            records.iter().filter(|r| r.team.as_deref() == team),
        )
    }

    /// Writes the team's lines of teamctl's journal of its restarts and resumes
    /// ([`crate::team::actions`]) as `actions.jsonl` (none: no file) and returns them; a journal
    /// that cannot be read is a warning.
    fn actions_journal(&mut self, req: &Request) -> Result<Vec<Action>> {
        let Some(journal) = req.records.actions() else {
            return Ok(Vec::new());
        };
        let actions = match journal.of_team(req.team.as_str()) {
            Ok(actions) => actions,
            Err(e) => {
                self.warnings.push(format!("{e:#}"));
                return Ok(Vec::new());
            }
        };
        self.add_json_lines("actions.jsonl", &actions)?;
        Ok(actions)
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

    /// The names `<name><ext>` in the folder `dir` (anything: the copy refuses what is not a
    /// regular file) whose `<name>` is a valid member name, sorted. The folder is opened through
    /// handles from the config dir down: a symlink or a file in its place is reported, and
    /// nothing is listed.
    pub(super) fn names_in(&mut self, dir: &Loc, ext: &str) -> Vec<String> {
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
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
