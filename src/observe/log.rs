//! A member's transcript as a story (`teamctl log`): the events of its sessions
//! ([`crate::team::transcript::story`]) in time order, the history first, then, following,
//! each event as it is written.
//!
//! A member's transcripts are its own sessions' files (the lead's session, a pane teammate's
//! sessions, an in-process teammate's subagent file; see
//! [`crate::team::transcript::locate`]), never the subagents that ran inside them. Sessions
//! are read one after the other, oldest first; a file is streamed, never loaded whole, and
//! only `-n` events are kept at a time. Following, the folders the files are in are watched
//! (file notifications, else a clock), only what was appended is read, and a new session of
//! the member (it was restarted) is picked up within a second.

use std::collections::{BTreeMap, VecDeque};
use std::io::{Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::observe::waker::{Wake, Waker};
use crate::store::dir::{self, Loc};
use crate::team::config::{LEAD, Team, TeamConfig, read_config};
use crate::team::transcript::index::Index;
use crate::team::transcript::locate;
use crate::team::transcript::story::{Kind, Story, StoryEvent};
use crate::team::transcript::{Cursor, read_lines};

/// How often a followed member's sessions are looked for again.
const RELOCATE_EVERY: Duration = Duration::from_secs(1);

/// One line of `log --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LogLine {
    /// Always 1.
    pub schema_version: u32,
    /// When it was written (the entry's timestamp).
    pub at: Option<String>,
    /// The member.
    pub member: String,
    /// The session it belongs to.
    pub session_id: Option<String>,
    /// `prompt`, `message`, `text`, `tool_use`, `tool_result` or `error`.
    pub kind: Kind,
    /// The tool (tool_use, tool_result).
    pub tool: Option<String>,
    /// One line (see [`StoryEvent::summary`]).
    pub summary: String,
    /// The whole text (see [`StoryEvent::text`]).
    pub text: Option<String>,
    /// Whether a tool result is an error (`null` for other kinds; `true` for errors).
    pub is_error: Option<bool>,
}

/// Which events of the history to show.
#[derive(Debug, Clone, Copy, Default)]
pub struct Filter {
    /// Only events at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only the last N.
    pub last: Option<usize>,
}

struct Followed {
    /// The file, reached through handles from the config dir down.
    loc: Loc,
    cursor: Cursor,
    story: Story,
    session_id: Option<String>,
    /// Its first entry's time: sessions are read oldest first.
    first_at: Option<String>,
}

/// A member's transcripts, read so far.
pub struct MemberLog {
    team: Team,
    member: String,
    files: BTreeMap<PathBuf, Followed>,
    located_at: Instant,
    /// Who wrote which file, so that looking again reads no file's head twice.
    index: Index,
    /// Transcripts and folders skipped, not handed out yet ([`MemberLog::take_warnings`]).
    warnings: Vec<String>,
    /// Every warning handed out (each is told once).
    told: Vec<String>,
}

impl MemberLog {
    /// Opens `member`'s log in `team` (`team-lead` is the lead).
    ///
    /// # Errors
    /// A member the team does not have.
    pub fn open(team: Team, member: &str) -> Result<MemberLog> {
        let known = team.config.as_ref().is_some_and(|c| {
            c.member(member).is_some() || (member == LEAD && c.lead_session_id.is_some())
        });
        if !known {
            let names = team.member_names();
            let hint = crate::team::config::suggest(member, &names)
                .map(|s| format!("; did you mean '{s}'?"))
                .unwrap_or_default();
            bail!("'{member}' is not a member of team '{}'{hint}", team.name);
        }
        let mut log = MemberLog {
            team,
            member: member.to_string(),
            files: BTreeMap::new(),
            located_at: Instant::now(),
            index: Index::in_memory(),
            warnings: Vec::new(),
            told: Vec::new(),
        };
        log.relocate();
        Ok(log)
    }

    /// The member's transcript files found so far.
    pub fn files(&self) -> Vec<&Path> {
        self.files.keys().map(PathBuf::as_path).collect()
    }

    /// What was skipped since the last call (a transcript or a folder that is a symlink, a
    /// FIFO, …; never opened), each once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        self.warnings.extend(self.index.take_warnings());
        let mut out = Vec::new();
        for w in std::mem::take(&mut self.warnings) {
            if !self.told.contains(&w) {
                self.told.push(w.clone());
                out.push(w);
            }
        }
        out
    }

    /// Looks for the member's session files again (a restart adds one); returns whether any is
    /// new.
    fn relocate(&mut self) -> bool {
        self.located_at = Instant::now();
        let Some(cfg) = self.config() else {
            return false;
        };
        let located = locate::locate(
            self.team.layout.root_loc(),
            self.team.name.as_str(),
            &cfg,
            &mut self.index,
            &mut self.warnings,
        );
        let lead = cfg.lead().map(|l| l.name.clone());
        let key = if Some(&self.member) == lead.as_ref() || self.member == LEAD {
            lead.unwrap_or_else(|| LEAD.to_string())
        } else {
            self.member.clone()
        };
        let mut new = false;
        for s in located.get(&key).into_iter().flatten() {
            if !self.files.contains_key(s.path.path()) {
                new = true;
                let first_at = self.index.head_of(&s.path).and_then(|h| h.first_at);
                self.files.insert(
                    s.path.to_path_buf(),
                    Followed {
                        loc: s.path.clone(),
                        cursor: Cursor::default(),
                        story: Story::default(),
                        session_id: None,
                        first_at,
                    },
                );
            }
        }
        new
    }

    /// `config.json` as it is now (a torn read: as opened).
    fn config(&self) -> Option<TeamConfig> {
        read_config(&self.team.layout.config_path(&self.team.name))
            .ok()
            .flatten()
            .or_else(|| self.team.config.clone())
    }

    /// Reads every file from where it stopped to its end, oldest session first, and hands each
    /// event to `each`.
    fn read(&mut self, each: &mut dyn FnMut(LogLine)) {
        let member = self.member.clone();
        let mut order: Vec<(Option<String>, PathBuf)> = self
            .files
            .iter()
            .map(|(p, f)| (f.first_at.clone(), p.clone()))
            .collect();
        order.sort();
        for (_, p) in order {
            let Some(f) = self.files.get_mut(&p) else {
                continue;
            };
            let mut file = match f.loc.open_file() {
                Ok(Some(file)) => file,
                Ok(None) => continue,
                Err(e) => {
                    locate::note(&mut self.warnings, locate::refusal(&p, &e));
                    continue;
                }
            };
            // A file that shrank was replaced: read it again from the start.
            if file.metadata().is_ok_and(|m| m.len() < f.cursor.offset) {
                f.cursor = Cursor::default();
                f.story = Story::default();
            }
            if file.seek(SeekFrom::Start(f.cursor.offset)).is_err() {
                continue;
            }
            let (story, sid) = (&mut f.story, &mut f.session_id);
            let _ = read_lines(&mut file, &mut f.cursor, &mut |line| {
                for e in story.events(line) {
                    if sid.is_none() {
                        sid.clone_from(&e.session_id);
                    }
                    each(line_of(&member, e, sid.as_deref()));
                }
            });
        }
    }

    /// The history: every event written so far that `filter` keeps, in order, to `emit`.
    ///
    /// # Errors
    /// Errors from `emit` (such as a closed pipe).
    pub fn history(
        &mut self,
        filter: Filter,
        emit: &mut dyn FnMut(&LogLine) -> Result<()>,
    ) -> Result<()> {
        let mut kept: VecDeque<LogLine> = VecDeque::new();
        let mut failed: Option<anyhow::Error> = None;
        let since = filter.since.map(crate::time::iso_millis);
        self.read(&mut |l| {
            if failed.is_some() {
                return;
            }
            if let (Some(s), Some(at)) = (&since, &l.at)
                && at.as_str() < s.as_str()
            {
                return;
            }
            match filter.last {
                Some(n) => {
                    kept.push_back(l);
                    if kept.len() > n {
                        kept.pop_front();
                    }
                }
                None => {
                    if let Err(e) = emit(&l) {
                        failed = Some(e);
                    }
                }
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        for l in &kept {
            emit(l)?;
        }
        Ok(())
    }

    /// Reads what was appended since the last read, oldest session first, and hands each event
    /// to `each`; looks for new sessions first when the last look is a second old. For a caller
    /// with its own clock and notifications (`top`'s story view); [`MemberLog::follow`] waits
    /// by itself.
    pub fn poll(&mut self, each: &mut dyn FnMut(LogLine)) {
        if self.located_at.elapsed() >= RELOCATE_EVERY {
            self.relocate();
        }
        self.read(each);
    }

    /// The folders the member's files are written in (its project, a subagents folder).
    pub fn dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = self
            .files
            .keys()
            .filter_map(|p| p.parent().map(Path::to_path_buf))
            .collect();
        if let Some(cfg) = self.config() {
            let name = if self.member == LEAD {
                cfg.lead().map(|l| l.name.clone())
            } else {
                Some(self.member.clone())
            };
            if let Some(c) = name.and_then(|n| cfg.member(&n)?.cwd.clone()) {
                // Reported when located.
                let mut ignored = Vec::new();
                dirs.extend(
                    locate::project_dirs(self.team.layout.root_loc(), &c, &mut ignored)
                        .into_iter()
                        .map(|l| l.to_path_buf()),
                );
            }
        }
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// Follows the member's transcripts after the history: every event appended is handed to
    /// `emit` as soon as the file notification (or, polling, the clock) says it is there, until
    /// `emit` says stop (returns `true`), the team is gone, or `deadline` passes. Returns why
    /// it stopped. What is skipped on the way (a transcript that turned into a symlink, …) goes
    /// to `warn`, each once.
    ///
    /// # Errors
    /// Errors from `emit`.
    pub fn follow(
        &mut self,
        poll: Option<Duration>,
        deadline: Option<Instant>,
        emit: &mut dyn FnMut(&LogLine) -> Result<bool>,
        warn: &mut dyn FnMut(&str),
    ) -> Result<Stop> {
        let mut waker = Waker::for_dirs(&self.dirs(), poll);
        // Whatever was written before the watches were in place.
        let mut failed: Option<anyhow::Error> = None;
        let mut stop = false;
        let mut pass =
            |log: &mut MemberLog, failed: &mut Option<anyhow::Error>, stop: &mut bool| {
                log.read(&mut |l| {
                    if failed.is_some() || *stop {
                        return;
                    }
                    match emit(&l) {
                        Ok(s) => *stop = s,
                        Err(e) => *failed = Some(e),
                    }
                });
            };
        pass(self, &mut failed, &mut stop);
        loop {
            if let Some(e) = failed {
                return Err(e);
            }
            if stop {
                return Ok(Stop::Done);
            }
            let wait = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) => left.min(RELOCATE_EVERY),
                    None => return Ok(Stop::Deadline),
                },
                None => RELOCATE_EVERY,
            };
            let woke = waker.wait(wait);
            if self.located_at.elapsed() >= RELOCATE_EVERY || woke == Wake::Rescan {
                let team_dir = self.team.layout.team_dir(&self.team.name);
                if !team_dir
                    .stat()
                    .is_ok_and(|i| i.is_some_and(|i| i.kind == dir::Kind::Dir))
                {
                    pass(self, &mut failed, &mut stop);
                    return match failed {
                        Some(e) => Err(e),
                        None => Ok(Stop::TeamGone),
                    };
                }
                if self.relocate() {
                    for d in self.dirs() {
                        waker.add(&d);
                    }
                }
            }
            // A quiet second reads too: the files are looked at at least that often, whatever
            // the notifications did.
            if woke != Wake::Quiet || self.located_at.elapsed() < Duration::from_millis(50) {
                pass(self, &mut failed, &mut stop);
            }
            for w in self.take_warnings() {
                warn(&w);
            }
        }
    }
}

/// Why [`MemberLog::follow`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The caller said stop.
    Done,
    /// The deadline passed.
    Deadline,
    /// The team's folder is gone.
    TeamGone,
}

fn line_of(member: &str, e: StoryEvent, session_id: Option<&str>) -> LogLine {
    LogLine {
        schema_version: 1,
        at: e.at,
        member: member.to_string(),
        session_id: e.session_id.or_else(|| session_id.map(String::from)),
        kind: e.kind,
        tool: e.tool,
        summary: e.summary,
        text: e.text,
        is_error: e.is_error,
    }
}
