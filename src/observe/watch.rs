//! Following a team as a stream of events: inbox entries arriving, consumed or read; tasks
//! created, updated or deleted; members joining, leaving or changing.
//!
//! Changes are found by comparing parsed content (entries by id, tasks by file, members by
//! name), never by mtime: Claude Code replaces files by rename and mtimes do not reliably
//! change. A notification only says *where* to look, so several writes coalesced into one
//! notification still give every event, in file order. `*.tmp.*` files and `*.lock`
//! directories are ignored. The OS's file notifications (inotify, FSEvents: [`super::fswatch`])
//! drive it; polling is the fallback.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::observe::event::{Event, Kind};
use crate::observe::waker::{Waker, Woke};
use crate::store::id;
use crate::store::paths::{MemberName, is_valid_member};
use crate::store::{self, Entry};
use crate::team::config::Team;
use crate::time::iso_millis;

/// What changed since the last look, and what could not be read (the old state is kept).
#[derive(Debug, Default)]
pub struct Changes {
    /// Events in order.
    pub events: Vec<Event>,
    /// Files that could not be read.
    pub warnings: Vec<String>,
}

/// What a wake-up says about the folders watched besides the team's own ([`Watch::next_seen`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outside {
    /// Nothing changed there.
    None,
    /// These paths were notified.
    Paths(Vec<PathBuf>),
    /// Nothing tells (polling, or notifications were lost): anything may have changed.
    Unknown,
}

/// Which part of the team a path belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Source {
    Inbox(String),
    Task(String),
    Config,
}

/// A followed team: the last state seen of every watched file.
#[derive(Debug)]
pub struct Watch {
    team: Team,
    only: Option<Vec<MemberName>>,
    inboxes: BTreeMap<String, Vec<Entry>>,
    tasks: BTreeMap<String, Entry>,
    members: Vec<(String, Entry)>,
}

impl Watch {
    /// Starts following `team` (all inboxes, or only those of `only`). Returns the watch and
    /// the events that describe what is there now (for `--existing`).
    pub fn new(team: Team, only: Option<Vec<MemberName>>, at: DateTime<Utc>) -> (Watch, Changes) {
        let mut w = Watch {
            team,
            only,
            inboxes: BTreeMap::new(),
            tasks: BTreeMap::new(),
            members: Vec::new(),
        };
        let existing = w.rescan(at);
        (w, existing)
    }

    /// Re-reads everything and returns what changed.
    pub fn rescan(&mut self, at: DateTime<Utc>) -> Changes {
        let mut sources = vec![Source::Config];
        for owner in self.team.inbox_owners().unwrap_or_default() {
            sources.extend(self.source_of(&self.team.inbox_path(&owner)));
        }
        sources.extend(self.inboxes.keys().map(|m| Source::Inbox(m.clone())));
        let tasks_dir = self.team.layout.tasks_dir(&self.team.name);
        if let Ok(names) = tasks_dir.open_dir().and_then(|d| d.names()) {
            for n in names {
                if let Some(s) = self.source_of(&tasks_dir.join(n)) {
                    sources.push(s);
                }
            }
        }
        sources.extend(self.tasks.keys().map(|t| Source::Task(t.clone())));
        sources.sort();
        sources.dedup();
        self.reload(&sources, at)
    }

    /// Re-reads the files at `paths` (as notified) and returns what changed.
    pub fn reload_paths(&mut self, paths: &[PathBuf], at: DateTime<Utc>) -> Changes {
        let mut sources: Vec<Source> = Vec::new();
        for p in paths {
            if let Some(s) = self.source_of(p)
                && !sources.contains(&s)
            {
                sources.push(s);
            }
        }
        self.reload(&sources, at)
    }

    /// The folders to watch: the team folder (config and inboxes) and the task folder.
    pub fn dirs(&self) -> Vec<PathBuf> {
        vec![
            self.team.layout.team_dir(&self.team.name).to_path_buf(),
            self.team.layout.tasks_dir(&self.team.name).to_path_buf(),
        ]
    }

    fn source_of(&self, path: &Path) -> Option<Source> {
        let name = path.file_name()?.to_str()?;
        if name.contains(".tmp.") || name.ends_with(".lock") {
            return None;
        }
        let parent = path.parent()?;
        let layout = &self.team.layout;
        if path == layout.config_path(&self.team.name).path() {
            return Some(Source::Config);
        }
        let stem = name.strip_suffix(".json")?;
        if parent == layout.inboxes_dir(&self.team.name).path() && is_valid_member(stem) {
            let wanted = self
                .only
                .as_ref()
                .is_none_or(|o| o.iter().any(|m| m.as_str() == stem));
            return wanted.then(|| Source::Inbox(stem.to_string()));
        }
        // Only `<number>.json` is a task file (its name is joined into a path).
        if parent == layout.tasks_dir(&self.team.name).path() && crate::team::tasks::is_id(stem) {
            return Some(Source::Task(stem.to_string()));
        }
        None
    }

    fn reload(&mut self, sources: &[Source], at: DateTime<Utc>) -> Changes {
        let at = iso_millis(at);
        let mut out = Changes::default();
        for s in sources {
            match s {
                Source::Inbox(m) => self.reload_inbox(m, &at, &mut out),
                Source::Task(t) => self.reload_task(t, &at, &mut out),
                Source::Config => self.reload_config(&at, &mut out),
            }
        }
        out
    }

    fn reload_inbox(&mut self, member: &str, at: &str, out: &mut Changes) {
        let Ok(name) = MemberName::parse(member) else {
            return;
        };
        let path = self.team.inbox_path(&name);
        let new = match store::read_inbox(&path) {
            Ok(e) => e.unwrap_or_default(),
            Err(e) => return out.warnings.push(format!("{e:#}")),
        };
        let old = self.inboxes.remove(member).unwrap_or_default();
        let team = self.team.name.as_str();
        let mut by_id: HashMap<String, VecDeque<&Entry>> = HashMap::new();
        for e in &old {
            by_id.entry(id::entry_id(e)).or_default().push_back(e);
        }
        let mut read = Vec::new();
        let mut arrived = Vec::new();
        for e in &new {
            let eid = id::entry_id(e);
            match by_id.get_mut(&eid).and_then(VecDeque::pop_front) {
                Some(before) if !is_read(before) && is_read(e) => read.push((eid, e)),
                Some(_) => {}
                None => arrived.push((eid, e)),
            }
        }
        let message_event = |kind: Kind, eid: String, e: &Entry| {
            let mut ev = Event::new(kind, team, at);
            ev.to = Some(member.to_string());
            ev.from = e.get("from").and_then(Value::as_str).map(String::from);
            ev.id = Some(eid);
            ev.message = Some(e.clone());
            ev
        };
        // What left, in the order it was in the file; then what was read; then what arrived.
        for e in &old {
            let eid = id::entry_id(e);
            if by_id
                .get_mut(&eid)
                .is_some_and(|q| q.front().is_some_and(|f| std::ptr::eq(*f, e)))
            {
                by_id.get_mut(&eid).map(VecDeque::pop_front);
                out.events.push(message_event(Kind::Consumed, eid, e));
            }
        }
        for (eid, e) in read {
            out.events.push(message_event(Kind::Read, eid, e));
        }
        for (eid, e) in arrived {
            out.events.push(message_event(Kind::Message, eid, e));
        }
        if path.stat().is_ok_and(|i| i.is_some()) {
            self.inboxes.insert(member.to_string(), new);
        }
    }

    fn reload_task(&mut self, task_id: &str, at: &str, out: &mut Changes) {
        let path = self
            .team
            .layout
            .tasks_dir(&self.team.name)
            .join(format!("{task_id}.json"));
        let new = match store::read_unlocked(&path, |b| store::parse_object(b, &path)) {
            Ok(t) => t,
            Err(e) => return out.warnings.push(format!("{e:#}")),
        };
        let old = self.tasks.get(task_id).cloned();
        let team = self.team.name.as_str();
        let event = |kind: Kind, task: &Entry, changes: Option<Map<String, Value>>| {
            let mut ev = Event::new(kind, team, at);
            ev.id = Some(task_id.to_string());
            ev.task = Some(task.clone());
            ev.changes = changes;
            ev
        };
        match (old, &new) {
            (None, Some(n)) => out.events.push(event(Kind::TaskCreated, n, None)),
            (Some(o), None) => out.events.push(event(Kind::TaskDeleted, &o, None)),
            (Some(o), Some(n)) if o != *n => {
                out.events
                    .push(event(Kind::TaskUpdated, n, Some(changes(&o, n))));
            }
            _ => {}
        }
        match new {
            Some(n) => self.tasks.insert(task_id.to_string(), n),
            None => self.tasks.remove(task_id),
        };
    }

    fn reload_config(&mut self, at: &str, out: &mut Changes) {
        let path = self.team.layout.config_path(&self.team.name);
        let cfg = match store::read_unlocked(&path, |b| store::parse_object(b, &path)) {
            Ok(c) => c.unwrap_or_default(),
            Err(e) => return out.warnings.push(format!("{e:#}")),
        };
        let new: Vec<(String, Entry)> = cfg
            .get("members")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|m| {
                let m = m.as_object()?;
                Some((m.get("name")?.as_str()?.to_string(), m.clone()))
            })
            .collect();
        let team = self.team.name.as_str();
        let event = |kind: Kind, name: &str, entry: &Entry, ch: Option<Map<String, Value>>| {
            let mut ev = Event::new(kind, team, at);
            ev.member = Some(name.to_string());
            ev.member_entry = Some(entry.clone());
            ev.changes = ch;
            ev
        };
        for (name, entry) in &self.members {
            if !new.iter().any(|(n, _)| n == name) {
                out.events.push(event(Kind::MemberLeft, name, entry, None));
            }
        }
        for (name, entry) in &new {
            match self.members.iter().find(|(n, _)| n == name) {
                None => out
                    .events
                    .push(event(Kind::MemberJoined, name, entry, None)),
                Some((_, old)) if old != entry => {
                    out.events.push(event(
                        Kind::MemberUpdated,
                        name,
                        entry,
                        Some(changes(old, entry)),
                    ));
                }
                Some(_) => {}
            }
        }
        self.members = new;
    }

    /// The inbox entries of `member` as last seen (`None`: no inbox file seen).
    pub fn inbox(&self, member: &str) -> Option<&[Entry]> {
        self.inboxes.get(member).map(Vec::as_slice)
    }

    /// The inboxes as last seen, by owner.
    pub fn inboxes(&self) -> &BTreeMap<String, Vec<Entry>> {
        &self.inboxes
    }

    /// The task files as last seen, by id.
    pub fn tasks(&self) -> &BTreeMap<String, Entry> {
        &self.tasks
    }

    /// The members of `config.json` as last seen, in file order.
    pub fn members(&self) -> &[(String, Entry)] {
        &self.members
    }

    /// The team followed.
    pub fn team(&self) -> &Team {
        &self.team
    }

    /// Starts listening for changes to this team's folders: file notifications unless `poll`
    /// is given or they are unavailable, else re-reading everything every `poll` (default
    /// 250 ms). Call [`Watch::rescan`] once after this to catch what changed before the watches
    /// were in place.
    pub fn waker(&self, poll: Option<Duration>) -> Waker {
        Waker::watching(&self.dirs(), poll)
    }

    /// Waits at most `max` for a change and returns what changed (nothing when the time passed
    /// quietly). `now` is the clock.
    pub fn next(
        &mut self,
        waker: &mut Waker,
        max: Duration,
        now: &dyn Fn() -> DateTime<Utc>,
    ) -> Changes {
        self.next_seen(waker, max, now).0
    }

    /// As [`Watch::next`], and what woke it besides the team's own files: the paths notified
    /// in the other folders the waker watches ([`Waker::add`]: transcripts), or
    /// [`Outside::Unknown`] when nothing says (polling, lost notifications).
    pub fn next_seen(
        &mut self,
        waker: &mut Waker,
        max: Duration,
        now: &dyn Fn() -> DateTime<Utc>,
    ) -> (Changes, Outside) {
        match waker.woke(max) {
            Woke::Slept | Woke::Lost | Woke::Closed => (self.rescan(now()), Outside::Unknown),
            Woke::Retried => (self.rescan(now()), Outside::None),
            Woke::Quiet => (Changes::default(), Outside::None),
            Woke::Paths(paths) => {
                let dirs = self.dirs();
                let outside: Vec<PathBuf> = paths
                    .iter()
                    .filter(|p| !dirs.iter().any(|d| p.starts_with(d)))
                    .cloned()
                    .collect();
                let changes = self.reload_paths(&paths, now());
                let outside = if outside.is_empty() {
                    Outside::None
                } else {
                    Outside::Paths(outside)
                };
                (changes, outside)
            }
        }
    }

    /// Follows the team until `emit` says stop (returns `true`) or `deadline` passes (returns
    /// `false`), with a [`Waker`] made from `poll`. `now` is the clock.
    ///
    /// # Errors
    /// Errors from `emit` (such as a closed pipe).
    pub fn follow(
        &mut self,
        poll: Option<Duration>,
        deadline: Option<Instant>,
        now: &dyn Fn() -> DateTime<Utc>,
        emit: &mut dyn FnMut(Changes) -> Result<bool>,
    ) -> Result<bool> {
        let mut waker = self.waker(poll);
        // Whatever changed between the first snapshot and the watches being in place.
        let missed = self.rescan(now());
        if (!missed.events.is_empty() || !missed.warnings.is_empty()) && emit(missed)? {
            return Ok(true);
        }
        loop {
            let wait = match deadline {
                Some(d) => match d.checked_duration_since(Instant::now()) {
                    Some(left) => left,
                    None => return Ok(false),
                },
                None => waker.interval(),
            };
            let changes = self.next(&mut waker, wait, now);
            if (!changes.events.is_empty() || !changes.warnings.is_empty()) && emit(changes)? {
                return Ok(true);
            }
        }
    }
}

fn is_read(e: &Entry) -> bool {
    e.get("read") == Some(&Value::Bool(true))
}

/// Each key whose value differs: `{"key": {"from": old, "to": new}}` (`null` when absent).
fn changes(old: &Entry, new: &Entry) -> Map<String, Value> {
    let mut out = Map::new();
    for k in old.keys().chain(new.keys()) {
        if out.contains_key(k) || old.get(k) == new.get(k) {
            continue;
        }
        let mut ch = Map::new();
        ch.insert("from".into(), old.get(k).cloned().unwrap_or(Value::Null));
        ch.insert("to".into(), new.get(k).cloned().unwrap_or(Value::Null));
        out.insert(k.clone(), Value::Object(ch));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::store::paths::{Layout, TeamName};

    #[test]
    fn reads_do_not_wake_a_follower_writes_do() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::create_dir_all(root.join("teams/t/inboxes")).unwrap();
        fs::create_dir_all(root.join("tasks/t")).unwrap();
        fs::write(
            root.join("teams/t/config.json"),
            r#"{"name":"t","members":[{"agentId":"team-lead@t","name":"team-lead"}]}"#,
        )
        .unwrap();
        let inbox = root.join("teams/t/inboxes/alice.json");
        fs::write(&inbox, "[]").unwrap();
        fs::write(
            root.join("tasks/t/1.json"),
            r#"{"id":"1","subject":"s","status":"pending","blocks":[],"blockedBy":[]}"#,
        )
        .unwrap();
        let team = Team::open(
            &Layout::new(root),
            &TeamName::parse("t").unwrap(),
            &crate::team::records::Records::none(),
        )
        .unwrap();
        let (mut w, _) = Watch::new(team, None, Utc::now());
        let mut waker = w.waker(None);
        assert!(waker.notifications());
        // Reading every file (as the follower itself and Claude Code's pollers do) is no change.
        for _ in 0..3 {
            w.rescan(Utc::now());
            fs::read(&inbox).unwrap();
        }
        let start = Instant::now();
        let mut wakes = 0;
        while start.elapsed() < Duration::from_millis(600) {
            let ch = w.next(&mut waker, Duration::from_millis(300), &Utc::now);
            assert!(ch.events.is_empty(), "{:?}", ch.events);
            wakes += 1;
        }
        // 250 ms at most per call when nothing happens: 3, or 4 with a slow machine's rounding.
        assert!(wakes <= 4, "{wakes} wake-ups in 600 ms on an idle team");
        // A write wakes it, with what was written.
        fs::write(
            &inbox,
            r#"[{"from":"bob","text":"hi","timestamp":"2026-11-29T10:00:00.000Z"}]"#,
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        while seen.is_empty() && Instant::now() < deadline {
            seen = w.next(&mut waker, Duration::from_secs(1), &Utc::now).events;
        }
        assert_eq!(seen.first().map(|e| e.event), Some(Kind::Message));
    }
}
