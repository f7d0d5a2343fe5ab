//! A team's transcripts followed over time: the one reader of what a team spent, for `status`,
//! `top`, `export`, `serve`, and the cap of `wait`, `ask` and `run` ([`crate::observe::budget`]).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::observe::spend::series::SeriesBuilder;
use crate::observe::spend::sum::{TeamSpend, read_located_tapped};
use crate::store::dir::{Kind, Loc};
use crate::store::paths::{Layout, TeamName};
use crate::team::config::TeamConfig;
use crate::team::transcript::index::Index;
use crate::team::transcript::locate::{self, Session};
use crate::team::transcript::{FileState, entry};

/// How often the transcripts' owners are looked for again (new sessions, new members).
pub const LOCATE_EVERY: Duration = Duration::from_secs(1);

/// A team's spend, read through the transcript index: each read parses only what was appended
/// since the last, and the sessions' owners are looked for again at most every
/// [`LOCATE_EVERY`].
#[derive(Debug)]
pub struct SpendReader {
    root: Loc,
    /// The team's name and its `config.json`, once known.
    team: Option<(String, Loc)>,
    /// The lead's session when the caller knows it better than `config.json` (`run` knows it
    /// before the file exists and after it is gone).
    lead_session: Option<String>,
    cfg: TeamConfig,
    index: Index,
    located: BTreeMap<String, Vec<Session>>,
    located_at: Option<Instant>,
    last: TeamSpend,
    /// What the last look for sessions skipped.
    locate_warnings: Vec<String>,
    /// Warnings already handed out by [`SpendReader::new_warnings`].
    reported: Vec<String>,
    /// Each member's responses over time, when kept ([`SpendReader::keep_series`]).
    series: Option<FollowedSeries>,
}

/// Each member's responses over time as the reads find them, and how many were fed so far.
#[derive(Debug, Default)]
pub struct FollowedSeries {
    /// The responses.
    pub builder: SeriesBuilder,
    /// How many response entries it was fed (it changes when the series may have).
    pub fed: u64,
}

impl SpendReader {
    /// Follows the spend of `team` in the config dir of `layout`; `data_dir` holds the
    /// transcript index (none: kept in memory).
    pub fn new(layout: &Layout, team: &TeamName, data_dir: Option<&Path>) -> SpendReader {
        let mut r = SpendReader::for_session(layout.root_loc(), None, data_dir);
        r.set_team(layout, team);
        r
    }

    /// Follows the spend of the lead session `session_id` (`projects/*/<session_id>.jsonl`), and
    /// of its team once [`SpendReader::set_team`] names it; the session id given wins over
    /// `config.json`'s `leadSessionId`.
    pub fn for_session(
        root: &Loc,
        session_id: Option<&str>,
        data_dir: Option<&Path>,
    ) -> SpendReader {
        SpendReader {
            root: root.clone(),
            team: None,
            lead_session: session_id.map(String::from),
            cfg: TeamConfig {
                lead_session_id: session_id.map(String::from),
                ..TeamConfig::default()
            },
            index: Index::load(data_dir),
            located: BTreeMap::new(),
            located_at: None,
            last: TeamSpend::default(),
            locate_warnings: Vec::new(),
            reported: Vec::new(),
            series: None,
        }
    }

    /// The team whose members to count from now on.
    pub fn set_team(&mut self, layout: &Layout, team: &TeamName) {
        self.team = Some((team.to_string(), layout.config_path(team)));
        self.located_at = None;
    }

    /// Counts `session_id` as the lead's session whatever `config.json` says.
    pub fn set_lead_session(&mut self, session_id: Option<&str>) {
        self.lead_session = session_id.map(String::from);
        if self.lead_session.is_some() {
            self.cfg.lead_session_id.clone_from(&self.lead_session);
        }
        self.located_at = None;
    }

    /// Makes the next read look at `config.json` and for sessions again, however recently it
    /// did (a file appeared that is nobody's yet; `run`, before its lead removes the team).
    pub fn relocate(&mut self) {
        self.located_at = None;
    }

    /// Keeps each member's cost over time from now on ([`crate::observe::spend::series`], the
    /// rules `export` draws by): the next read reads every transcript from its start once (the
    /// series needs every response), and each read after it only what was appended, every line
    /// parsed once for both.
    pub fn keep_series(&mut self) {
        if self.series.is_none() {
            self.series = Some(FollowedSeries::default());
            self.index.forget_offsets();
        }
    }

    /// The members' responses over time, when kept.
    pub fn series(&self) -> Option<&FollowedSeries> {
        self.series.as_ref()
    }

    /// Reads what the transcripts gained, reading `config.json` when the owners are looked
    /// for again.
    pub fn read(&mut self) -> &TeamSpend {
        self.read_as(None)
    }

    /// As [`SpendReader::read`], with `config.json` as the caller has just read it (`None`:
    /// read it here); a torn or missing one keeps the last good one.
    pub fn read_as(&mut self, cfg: Option<&TeamConfig>) -> &TeamSpend {
        if self.located_at.is_none_or(|t| t.elapsed() >= LOCATE_EVERY) {
            self.locate(cfg);
        }
        self.last = match &mut self.series {
            None => read_located_tapped(&self.located, &mut self.index, None),
            Some(series) => series.read(&self.located, &mut self.index),
        };
        let spend_warnings =
            std::mem::replace(&mut self.last.warnings, self.locate_warnings.clone());
        for w in spend_warnings {
            locate::note(&mut self.last.warnings, w);
        }
        &self.last
    }

    fn locate(&mut self, cfg: Option<&TeamConfig>) {
        let read = || {
            let (_, path) = self.team.as_ref()?;
            TeamConfig::parse(&path.read().ok()??, path).ok()
        };
        if let Some(c) = cfg.cloned().or_else(read) {
            self.cfg = c;
        }
        if self.lead_session.is_some() {
            self.cfg.lead_session_id.clone_from(&self.lead_session);
        }
        let name = self.team.as_ref().map_or("", |(n, _)| n.as_str());
        let mut warnings = Vec::new();
        self.located = locate::locate(&self.root, name, &self.cfg, &mut self.index, &mut warnings);
        self.locate_warnings = warnings;
        self.located_at = Some(Instant::now());
    }

    /// The spend last read.
    pub fn spend(&self) -> &TeamSpend {
        &self.last
    }

    /// The sessions found at the last look, by member.
    pub fn sessions(&self) -> &BTreeMap<String, Vec<Session>> {
        &self.located
    }

    /// The state of the transcript `path` read up to its end, through the index (`run` follows
    /// its lead's turn with it).
    pub fn file(&mut self, path: &Loc) -> FileState {
        self.index.update_all(std::slice::from_ref(path));
        self.index.get(path).cloned().unwrap_or_default()
    }

    /// The warnings of the reads so far (transcripts or folders skipped) not handed out
    /// before: each is reported once, however often the spend is read.
    pub fn new_warnings(&mut self) -> Vec<String> {
        let new: Vec<String> = self
            .last
            .warnings
            .iter()
            .filter(|w| !self.reported.contains(w))
            .cloned()
            .collect();
        self.reported.extend(new.iter().cloned());
        new
    }

    /// Whether `path` is one of the transcripts found at the last look.
    pub fn knows(&self, path: &Path) -> bool {
        self.located
            .values()
            .flatten()
            .any(|s| s.files().any(|f| f.path() == path))
    }

    /// The folders the transcripts are written in (to be woken up by their changes).
    /// Only folders found as folders (no symlink below the config dir) are given; a watch only
    /// wakes the reader up, every read goes through the handles.
    pub fn dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        // Reported by the reads already.
        let mut ignored = Vec::new();
        for c in self.cfg.members.iter().filter_map(|m| m.cwd.as_deref()) {
            dirs.extend(
                locate::project_dirs(&self.root, c, &mut ignored)
                    .into_iter()
                    .map(|l| l.to_path_buf()),
            );
        }
        for s in self.located.values().flatten() {
            dirs.extend(s.path.parent().map(|p| p.to_path_buf()));
            if let Some(subs) = locate::subagents_dir(&s.path)
                && subs
                    .stat()
                    .is_ok_and(|i| i.is_some_and(|i| i.kind == Kind::Dir))
            {
                dirs.push(subs.to_path_buf());
            }
        }
        dirs.sort();
        dirs.dedup();
        dirs
    }

    /// Saves the transcript index.
    ///
    /// # Errors
    /// When it could not be written: that only makes the next read longer.
    pub fn save(&mut self) -> Result<()> {
        self.index.save()
    }
}

impl FollowedSeries {
    /// Reads the transcripts of `located` through `index`, feeding each response entry read to
    /// its owner's series.
    fn read(&mut self, located: &BTreeMap<String, Vec<Session>>, index: &mut Index) -> TeamSpend {
        let owners: HashMap<&Path, &str> = located
            .iter()
            .flat_map(|(name, sessions)| {
                sessions
                    .iter()
                    .flat_map(Session::files)
                    .map(move |f| (f.path(), name.as_str()))
            })
            .collect();
        let fed = AtomicU64::new(0);
        let builder = Mutex::new(&mut self.builder);
        let tap = |path: &Path, line: &[u8]| {
            // The cheap look first: most lines are not responses.
            if entry::top_level_type(line) != Some(b"assistant") {
                return;
            }
            if let (Some(member), Ok(mut b)) = (owners.get(path), builder.lock()) {
                b.feed(member, line);
                fed.fetch_add(1, Ordering::Relaxed);
            }
        };
        let spend = read_located_tapped(located, index, Some(&tap));
        self.fed += fed.into_inner();
        spend
    }
}
