//! Which transcripts are whose in a team (Claude Code 2.1.332, checked with the real client):
//! - the lead's session is `projects/<project>/<leadSessionId>.jsonl`;
//! - a pane teammate runs a session of its own in the project of its `cwd` (from its member
//!   entry in `config.json`); its entries carry `teamName` and `agentName`. A teammate
//!   restarted under a new session has several, all counted;
//! - subagents write `<session file without .jsonl>/subagents/agent-*.jsonl`, each named by
//!   the `.meta.json` beside it. A subagent of the lead's session whose `name` (up to 2.1.178:
//!   `agentType`) is an in-process member of the team (its `backendType` `in-process`, or none
//!   yet), and whose `teamName`, when given, is the team, is that in-process teammate's
//!   transcript; any other subagent (a pane teammate's, one naming a pane teammate or another
//!   team) counts towards the session it ran in. Up to 2.1.178 an
//!   in-process teammate writes a new file per turn, each a copy of the whole history so far
//!   (they share their first entry); [`crate::observe::spend`] counts only the longest.
//!
//! `<project>` is the cwd with every character other than `A-Z a-z 0-9` replaced by `-`
//! (Claude Code cuts names over 200 characters and adds a hash; those are found by prefix).
//!
//! Every folder is listed through a [`Dir`] handle opened from the config dir down and every
//! entry looked at with `fstatat(AT_SYMLINK_NOFOLLOW)` below it: only real folders are looked
//! into and only regular files taken; a symlink, FIFO, socket or device where a transcript,
//! a project folder, a subagents folder or a `.meta.json` belongs is left out, with a warning.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::store::dir::{self, Dir, Loc, Unexpected};
use crate::team::config::{LEAD, TeamConfig};
use crate::team::transcript::index::Index;
pub use crate::team::transcript::skip::{note, refusal};

/// How a session ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The lead's own session.
    Lead,
    /// A teammate's own process (a tmux pane, or started by hand).
    Pane,
    /// A teammate inside the lead's process (a subagent file).
    InProcess,
}

/// One session of a member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The session's transcript.
    pub path: Loc,
    /// How it ran.
    pub kind: Kind,
    /// Subagents that ran inside it (not teammates): their spend is this session's.
    pub subagents: Vec<Loc>,
    /// In-process teammates that ran inside it: its `cost-state` covers them too.
    pub in_process: Vec<Loc>,
}

impl Session {
    /// Every file of the session (its own, then its subagents').
    pub fn files(&self) -> impl Iterator<Item = &Loc> {
        std::iter::once(&self.path).chain(&self.subagents)
    }
}

/// Whether `s` can be a session id (a UUID's characters, at most 64): only such a name from a
/// team's files becomes part of a path or a command line.
pub fn is_session_id(s: &str) -> bool {
    (1..=64).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

/// `warnings` told about an entry named `name` in `dir` that is `found` where `wanted` belongs.
fn unexpected(
    warnings: &mut Vec<String>,
    dir: &Dir,
    name: &OsStr,
    found: dir::Kind,
    wanted: dir::Kind,
) {
    let u = Unexpected {
        path: dir.path().join(name),
        found,
        wanted,
    };
    note(warnings, format!("skipped {u}"));
}

/// The folder at `loc`, opened without following a symlink anywhere below the config dir;
/// `None` when it is missing, and also (with a warning) when it is not a folder.
fn open_dir(loc: &Loc, warnings: &mut Vec<String>) -> Option<Dir> {
    match loc.open_dir() {
        Ok(d) => Some(d),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            note(warnings, refusal(loc, &e));
            None
        }
    }
}

/// The project folder name Claude Code uses for `cwd`: every UTF-16 unit other than an ASCII
/// letter or digit becomes `-` (names over 200 characters are cut; see [`project_dirs`]).
pub fn project_name(cwd: &str) -> String {
    let mut out = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('-');
            }
        }
    }
    out
}

/// The project folders of `cwd` under `root/projects` that exist as folders (one; for a name
/// over 200 characters, those whose name starts with its first 200 and a `-`). A symlink or
/// anything else in a project folder's place is left out, with a warning.
pub fn project_dirs(root: &Loc, cwd: &str, warnings: &mut Vec<String>) -> Vec<Loc> {
    let projects = root.join("projects");
    let name = project_name(cwd);
    if name.is_empty() {
        return Vec::new();
    }
    if name.len() <= 200 {
        let d = projects.join(&name);
        return match d.stat() {
            Ok(Some(i)) if i.kind == dir::Kind::Dir => vec![d],
            Ok(Some(i)) => {
                let u = Unexpected {
                    path: d.to_path_buf(),
                    found: i.kind,
                    wanted: dir::Kind::Dir,
                };
                note(warnings, format!("skipped {u}"));
                Vec::new()
            }
            Ok(None) => Vec::new(),
            Err(e) => {
                note(warnings, refusal(&d, &e));
                Vec::new()
            }
        };
    }
    let prefix = format!("{}-", &name[..200]);
    let Some(dir) = open_dir(&projects, warnings) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for n in dir.names().unwrap_or_default() {
        if !n.to_string_lossy().starts_with(&prefix) {
            continue;
        }
        match dir.stat(&n) {
            Ok(Some(i)) if i.kind == dir::Kind::Dir => out.push(projects.join(&n)),
            Ok(Some(i)) => unexpected(warnings, &dir, &n, i.kind, dir::Kind::Dir),
            _ => {}
        }
    }
    out.sort_by(|a, b| a.path().cmp(b.path()));
    out
}

/// `projects/*/<session_id>.jsonl`, a regular file, looked for first in `hint` folders. A
/// symlink (or a FIFO, …) by that name is never taken, and is reported.
pub fn find_session(
    root: &Loc,
    session_id: &str,
    hint: &[Loc],
    warnings: &mut Vec<String>,
) -> Option<Loc> {
    if !dir::is_plain(OsStr::new(session_id)) {
        return None;
    }
    let name = format!("{session_id}.jsonl");
    let take = |found: Option<dir::Info>, path: &Loc, warnings: &mut Vec<String>| match found {
        Some(i) if i.kind == dir::Kind::File => true,
        Some(i) => {
            let u = Unexpected {
                path: path.to_path_buf(),
                found: i.kind,
                wanted: dir::Kind::File,
            };
            note(warnings, format!("skipped {u}"));
            false
        }
        None => false,
    };
    for d in hint {
        let p = d.join(&name);
        if take(p.stat().ok().flatten(), &p, warnings) {
            return Some(p);
        }
    }
    let projects = root.join("projects");
    let dir = open_dir(&projects, warnings)?;
    for n in dir.names().ok()? {
        // A project folder that is a symlink (or not a folder) is not looked into.
        let Ok(sub) = dir.sub(&n) else { continue };
        let p = projects.join(&n).join(&name);
        if take(sub.stat(&name).ok().flatten(), &p, warnings) {
            return Some(p);
        }
    }
    None
}

/// The folder the subagents of the session at `session` write in:
/// `<session file without .jsonl>/subagents`.
pub fn subagents_dir(session: &Loc) -> Option<Loc> {
    let stem = session
        .name()
        .and_then(OsStr::to_str)
        .and_then(|n| n.strip_suffix(".jsonl"))?;
    Some(session.parent()?.join(stem).join("subagents"))
}

/// The subagent transcripts of the session at `session`: `(name from .meta.json (its `name`,
/// else its `agentType`), team from it, path)`, in name order. Only regular files are taken
/// (and read, the `.meta.json` too); anything else is reported in `warnings`.
pub fn subagents(
    session: &Loc,
    warnings: &mut Vec<String>,
) -> Vec<(Option<String>, Option<String>, Loc)> {
    let Some(loc) = subagents_dir(session) else {
        return Vec::new();
    };
    let Some(dir) = open_dir(&loc, warnings) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for n in dir.names().unwrap_or_default() {
        let Some(stem) = n.to_str().and_then(|f| f.strip_suffix(".jsonl")) else {
            continue;
        };
        match dir.stat(&n) {
            Ok(Some(i)) if i.kind == dir::Kind::File => {}
            Ok(Some(i)) => {
                unexpected(warnings, &dir, &n, i.kind, dir::Kind::File);
                continue;
            }
            _ => continue,
        }
        let meta_name = format!("{stem}.meta.json");
        let meta: Option<Value> = match dir.read(&meta_name) {
            Ok(b) => b.and_then(|b| serde_json::from_slice(&b).ok()),
            Err(e) => {
                note(warnings, refusal(&dir.path().join(&meta_name), &e));
                None
            }
        };
        let s = |k: &str| {
            meta.as_ref()
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .map(String::from)
        };
        // Up to 2.1.178 an in-process teammate's meta is only `{"agentType":"<its name>"}`.
        out.push((
            s("name").or_else(|| s("agentType")),
            s("teamName"),
            loc.join(&n),
        ));
    }
    out.sort_by(|a, b| (&a.0, &a.1, a.2.path()).cmp(&(&b.0, &b.1, b.2.path())));
    out
}

/// Every member's sessions in `team` (members without a transcript are left out), given its
/// `config.json`, under the config dir `root`. `index` remembers who wrote which file, so
/// candidate files are looked at once. Folders are listed and files looked at through handles
/// from `root` down, never through a symlink; what is skipped is told in `warnings`.
pub fn locate(
    root: &Loc,
    team: &str,
    cfg: &TeamConfig,
    index: &mut Index,
    warnings: &mut Vec<String>,
) -> BTreeMap<String, Vec<Session>> {
    let mut l = Locating {
        root,
        team,
        cfg,
        lead: cfg
            .lead()
            .map(|m| m.name.clone())
            .unwrap_or_else(|| LEAD.to_string()),
        out: BTreeMap::new(),
        warnings,
    };
    let mut searched: Vec<Loc> = l.dirs_of(&l.lead.clone());
    if let Some(id) = &cfg.lead_session_id
        && let Some(p) = find_session(root, id, &searched, l.warnings)
    {
        if let Some(d) = p.parent() {
            searched.push(d);
        }
        l.add(&l.lead.clone(), p, Kind::Lead);
    }
    // Pane teammates: the sessions in their projects that say they are that member of this team.
    for m in &cfg.members {
        if m.name != l.lead {
            searched.extend(l.dirs_of(&m.name));
        }
    }
    searched.sort_by(|a, b| a.path().cmp(b.path()));
    searched.dedup_by(|a, b| a.path() == b.path());
    let (named, unnamed) = l.pane_sessions(&searched, index);
    for (name, _, p) in named {
        l.add(&name, p, Kind::Pane);
    }
    // A teammate that read config.json torn as it started writes its session without its
    // team's and its own name (Claude Code 2.1.332); one begun with its lead's brief, in the folder of
    // exactly one pane teammate without a session, is that teammate's.
    let owners: Vec<Option<String>> = unnamed.iter().map(|p| l.owner_of_unnamed(p)).collect();
    for (p, owner) in unnamed.into_iter().zip(owners) {
        if let Some(name) = owner {
            l.add(&name, p, Kind::Pane);
        }
    }
    l.out
}

/// How much of a session [`lead_sessions`] reads at most to find a teammate's message in it.
const LEAD_SCAN: u64 = 64 << 20;

/// The sessions in the lead's project folders (its `cwd`'s) that can be the lead's of this team:
/// not a teammate's (they name no team and no agent, and did not begin with a message from the
/// lead) and holding a message from one of the team's teammates (`teammate_id="<name>"`, in
/// their first 64 MiB); each with its last write, newest first. The lead's
/// transcript names no team (2.1.332): its teammates' messages tie it to the team, where a
/// person's other sessions in the same folder have none.
pub fn lead_sessions(
    root: &Loc,
    cfg: &TeamConfig,
    index: &mut Index,
    warnings: &mut Vec<String>,
) -> Vec<(Loc, SystemTime)> {
    let lead = cfg.lead().map_or(LEAD, |m| m.name.as_str());
    let Some(cwd) = cfg.lead().and_then(|m| m.cwd.as_deref()) else {
        return Vec::new();
    };
    let needles: Vec<String> = cfg
        .members
        .iter()
        .filter(|m| m.name != lead)
        .map(|m| format!("teammate_id=\\\"{}\\\"", m.name))
        .collect();
    let mut out = Vec::new();
    for loc in project_dirs(root, cwd, warnings) {
        let Some(dir) = open_dir(&loc, warnings) else {
            continue;
        };
        for n in dir.names().unwrap_or_default() {
            if !n.as_encoded_bytes().ends_with(b".jsonl") {
                continue;
            }
            let p = loc.join(&n);
            let Ok(Some(info)) = dir.stat(&n) else {
                continue;
            };
            if info.kind != dir::Kind::File {
                continue;
            }
            // A teammate's session: it names its team, or it began with its lead's brief.
            let teammates = index.head(&p, &info).is_some_and(|h| {
                h.team.is_some() || h.agent.is_some() || h.first_from.as_deref() == Some(lead)
            });
            if !teammates && holds_any(&p, &needles) {
                out.push((p, info.mtime));
            }
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.1));
    out
}

/// Whether the transcript at `p` holds one of `needles` in its first [`LEAD_SCAN`] bytes.
fn holds_any(p: &Loc, needles: &[String]) -> bool {
    use std::io::Read;
    let Ok(Some(f)) = p.open_file() else {
        return false;
    };
    let mut bytes = Vec::new();
    if f.take(LEAD_SCAN).read_to_end(&mut bytes).is_err() {
        return false;
    }
    needles
        .iter()
        .any(|n| memchr::memmem::find(&bytes, n.as_bytes()).is_some())
}

/// A session that names its member: (member, its first line's time, the file).
type Named = (String, Option<String>, Loc);

/// What [`locate`] works with, and what it found so far.
struct Locating<'a> {
    root: &'a Loc,
    team: &'a str,
    cfg: &'a TeamConfig,
    /// The lead's name.
    lead: String,
    out: BTreeMap<String, Vec<Session>>,
    warnings: &'a mut Vec<String>,
}

impl Locating<'_> {
    /// The project folders of member `name`'s working folder.
    fn dirs_of(&mut self, name: &str) -> Vec<Loc> {
        let cwd = self.cfg.member(name).and_then(|m| m.cwd.as_deref());
        cwd.map(|c| project_dirs(self.root, c, self.warnings))
            .unwrap_or_default()
    }

    /// Whether member `n` can run inside the lead's process: its backend is in-process, or not
    /// known yet (a new member has none until its pane or process is up).
    fn in_process(&self, n: &str) -> bool {
        self.cfg
            .member(n)
            .is_some_and(|m| m.backend_type.as_deref().is_none_or(|b| b == "in-process"))
    }

    /// Adds a session of `owner` and its subagents: in-process teammates go to their own member.
    fn add(&mut self, owner: &str, path: Loc, kind: Kind) {
        let mut s = Session {
            path: path.clone(),
            kind,
            subagents: Vec::new(),
            in_process: Vec::new(),
        };
        for (name, sub_team, p) in subagents(&path, self.warnings) {
            // A `.meta.json` is the subagent's own word: it makes a transcript an in-process
            // teammate's only in the lead's session (in-process teammates run in the lead's
            // process; a pane teammate's subagents are its own), for an in-process member of
            // this team.
            let teammate = name
                .filter(|n| kind == Kind::Lead && n != owner && self.in_process(n))
                .filter(|_| sub_team.as_deref().is_none_or(|t| t == self.team));
            match teammate {
                Some(n) => {
                    s.in_process.push(p.clone());
                    self.out.entry(n).or_default().push(Session {
                        path: p,
                        kind: Kind::InProcess,
                        subagents: Vec::new(),
                        in_process: Vec::new(),
                    });
                }
                None => s.subagents.push(p),
            }
        }
        self.out.entry(owner.to_string()).or_default().push(s);
    }

    /// The pane teammate of this team whose session `p` (one that names no team and no agent,
    /// begun with its lead's brief) is: the one pane teammate working in its folder that has no session
    /// that names it; `None` when there is none or more than one.
    fn owner_of_unnamed(&mut self, p: &Loc) -> Option<String> {
        let dir = p.parent()?;
        let mut owners = Vec::new();
        for m in &self.cfg.members {
            let pane = m.backend_type.as_deref().is_some_and(|b| b != "in-process");
            if m.name == self.lead || !pane || self.out.contains_key(&m.name) {
                continue;
            }
            let Some(cwd) = m.cwd.as_deref() else {
                continue;
            };
            if project_dirs(self.root, cwd, self.warnings)
                .iter()
                .any(|d| d.path() == dir.path())
            {
                owners.push(m.name.clone());
            }
        }
        (owners.len() == 1).then(|| owners.remove(0))
    }

    /// The sessions in `searched` that say they are a pane teammate of this team, in order of
    /// member, first line and path: (member, first line's time, file); and those that name no
    /// team and no agent but began with a message from the lead (a teammate's, started while `config.json`
    /// could not be read).
    fn pane_sessions(&mut self, searched: &[Loc], index: &mut Index) -> (Vec<Named>, Vec<Loc>) {
        let since = self
            .cfg
            .created_at
            .and_then(|ms| u64::try_from(ms).ok())
            .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms) - Duration::from_secs(60));
        let lead_file = self
            .out
            .get(&self.lead)
            .and_then(|s| s.first())
            .map(|s| s.path.to_path_buf());
        let mut found = Vec::new();
        let mut unnamed = Vec::new();
        for loc in searched {
            let Some(dir) = open_dir(loc, self.warnings) else {
                continue;
            };
            for n in dir.names().unwrap_or_default() {
                if !n.as_encoded_bytes().ends_with(b".jsonl") {
                    continue;
                }
                let p = loc.join(&n);
                if Some(p.path()) == lead_file.as_deref() {
                    continue;
                }
                let Ok(Some(info)) = dir.stat(&n) else {
                    continue;
                };
                if info.kind != dir::Kind::File {
                    unexpected(self.warnings, &dir, &n, info.kind, dir::Kind::File);
                    continue;
                }
                // A file last written before the team existed is no teammate's of it.
                if since.is_some_and(|s| info.mtime < s) {
                    continue;
                }
                let Some(h) = index.head(&p, &info) else {
                    continue;
                };
                if let (Some(t), Some(a)) = (&h.team, &h.agent)
                    && t == self.team
                    && a != &self.lead
                    && self.cfg.members.iter().any(|m| &m.name == a)
                {
                    found.push((a.clone(), h.first_at.clone(), p));
                } else if h.team.is_none()
                    && h.agent.is_none()
                    && h.first_from.as_deref() == Some(self.lead.as_str())
                {
                    unnamed.push(p);
                }
            }
        }
        found.sort_by(|a, b| (&a.0, &a.1, a.2.path()).cmp(&(&b.0, &b.1, b.2.path())));
        (found, unnamed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_names_as_claude_code_makes_them() {
        assert_eq!(
            project_name("/tmp/teamctl-lead-e2e-JZs4Kd/work"),
            "-tmp-teamctl-lead-e2e-JZs4Kd-work"
        );
        assert_eq!(project_name("/home/a.b/my repo_1"), "-home-a-b-my-repo-1");
        // One `-` per UTF-16 unit, as JavaScript's replace sees the string.
        assert_eq!(project_name("/é/😀"), "-----");
    }
}
