//! Which transcripts are whose in a team (Claude Code 2.1.332, checked with the real client):
//! - the lead's session is `projects/<project>/<leadSessionId>.jsonl`;
//! - a pane teammate runs a session of its own in the project of its `cwd` (from its member
//!   entry in `config.json`); its entries carry `teamName` and `agentName`. A teammate
//!   restarted under a new session has several, all counted;
//! - subagents write `<session file without .jsonl>/subagents/agent-*.jsonl`, each named by
//!   the `.meta.json` beside it. One whose `name` (up to 2.1.178: `agentType`) is a member of
//!   the team (and whose `teamName`, when given, is the team) is that in-process teammate's
//!   transcript; any other subagent counts towards the session it ran in. Up to 2.1.178 an
//!   in-process teammate writes a new file per turn, each a copy of the whole history so far
//!   (they share their first entry); [`crate::observe::spend`] counts only the longest.
//!
//! `<project>` is the cwd with every character other than `A-Z a-z 0-9` replaced by `-`
//! (Claude Code cuts names over 200 characters and adds a hash; those are found by prefix).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::team::config::{LEAD, TeamConfig};
use crate::team::transcript::index::Index;

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
    pub path: PathBuf,
    /// How it ran.
    pub kind: Kind,
    /// Subagents that ran inside it (not teammates): their spend is this session's.
    pub subagents: Vec<PathBuf>,
    /// In-process teammates that ran inside it: its `cost-state` covers them too.
    pub in_process: Vec<PathBuf>,
}

impl Session {
    /// Every file of the session (its own, then its subagents').
    pub fn files(&self) -> impl Iterator<Item = &PathBuf> {
        std::iter::once(&self.path).chain(&self.subagents)
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

/// The project folders of `cwd` under `root/projects` that exist (one; for a name over 200
/// characters, those whose name starts with its first 200 and a `-`).
pub fn project_dirs(root: &Path, cwd: &str) -> Vec<PathBuf> {
    let projects = root.join("projects");
    let name = project_name(cwd);
    if name.len() <= 200 {
        let d = projects.join(&name);
        return if d.is_dir() { vec![d] } else { Vec::new() };
    }
    let prefix = format!("{}-", &name[..200]);
    fs::read_dir(&projects)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect()
}

/// `projects/*/<session_id>.jsonl`, looked for first in `hint` folders.
pub fn find_session(root: &Path, session_id: &str, hint: &[PathBuf]) -> Option<PathBuf> {
    let name = format!("{session_id}.jsonl");
    if !is_plain_name(session_id) {
        return None;
    }
    hint.iter()
        .map(|d| d.join(&name))
        .find(|p| p.is_file())
        .or_else(|| {
            fs::read_dir(root.join("projects"))
                .ok()?
                .flatten()
                .map(|e| e.path().join(&name))
                .find(|p| p.is_file())
        })
}

/// A session id or file stem that is safe to join to a path (no separators, not `.`/`..`).
fn is_plain_name(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains('/') && !s.contains('\0')
}

/// The subagent transcripts of the session at `session`: `(name from .meta.json (its `name`,
/// else its `agentType`), team from it, path)`, in name order.
pub fn subagents(session: &Path) -> Vec<(Option<String>, Option<String>, PathBuf)> {
    let dir = session.with_extension("").join("subagents");
    let Ok(rd) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let p = e.path();
        let Some(file) = p.file_name().and_then(|f| f.to_str()) else {
            continue;
        };
        let Some(stem) = file.strip_suffix(".jsonl") else {
            continue;
        };
        if !e.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let meta: Option<Value> = fs::read(dir.join(format!("{stem}.meta.json")))
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        let s = |k: &str| {
            meta.as_ref()
                .and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .map(String::from)
        };
        // Up to 2.1.178 an in-process teammate's meta is only `{"agentType":"<its name>"}`.
        out.push((s("name").or_else(|| s("agentType")), s("teamName"), p));
    }
    out.sort();
    out
}

/// Every member's sessions in `team` (members without a transcript are left out), given its
/// `config.json`. `index` remembers who wrote which file, so candidate files are looked at once.
pub fn locate(
    root: &Path,
    team: &str,
    cfg: &TeamConfig,
    index: &mut Index,
) -> BTreeMap<String, Vec<Session>> {
    let mut out: BTreeMap<String, Vec<Session>> = BTreeMap::new();
    let lead = cfg
        .lead()
        .map(|m| m.name.clone())
        .unwrap_or_else(|| LEAD.to_string());
    let is_member = |n: &str| cfg.members.iter().any(|m| m.name == n);
    let dirs_of = |name: &str| -> Vec<PathBuf> {
        cfg.member(name)
            .and_then(|m| m.cwd.as_deref())
            .map(|c| project_dirs(root, c))
            .unwrap_or_default()
    };
    // A session and its subagents: in-process teammates go to their own member.
    let add = |out: &mut BTreeMap<String, Vec<Session>>, owner: &str, path: PathBuf, kind: Kind| {
        let mut s = Session {
            path: path.clone(),
            kind,
            subagents: Vec::new(),
            in_process: Vec::new(),
        };
        for (name, sub_team, p) in subagents(&path) {
            let teammate = name
                .filter(|n| n != owner && is_member(n))
                .filter(|_| sub_team.as_deref().is_none_or(|t| t == team));
            match teammate {
                Some(n) => {
                    s.in_process.push(p.clone());
                    out.entry(n).or_default().push(Session {
                        path: p,
                        kind: Kind::InProcess,
                        subagents: Vec::new(),
                        in_process: Vec::new(),
                    });
                }
                None => s.subagents.push(p),
            }
        }
        out.entry(owner.to_string()).or_default().push(s);
    };
    let mut searched: Vec<PathBuf> = dirs_of(&lead);
    if let Some(id) = &cfg.lead_session_id
        && let Some(p) = find_session(root, id, &searched)
    {
        if let Some(d) = p.parent() {
            searched.push(d.to_path_buf());
        }
        add(&mut out, &lead, p, Kind::Lead);
    }
    // Pane teammates: the sessions in their projects that say they are that member of this team.
    for m in &cfg.members {
        if m.name != lead {
            searched.extend(dirs_of(&m.name));
        }
    }
    searched.sort();
    searched.dedup();
    let since = cfg
        .created_at
        .and_then(|ms| u64::try_from(ms).ok())
        .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms) - Duration::from_secs(60));
    let lead_file = out
        .get(&lead)
        .and_then(|s| s.first())
        .map(|s| s.path.clone());
    let mut found: Vec<(String, Option<String>, PathBuf)> = Vec::new();
    for dir in &searched {
        let Ok(rd) = fs::read_dir(dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_none_or(|x| x != "jsonl") || Some(&p) == lead_file.as_ref() {
                continue;
            }
            let Ok(meta) = e.metadata() else { continue };
            // A file last written before the team existed is no teammate's of it.
            if !meta.is_file() || since.is_some_and(|s| meta.modified().is_ok_and(|m| m < s)) {
                continue;
            }
            let Some(h) = index.head(&p) else { continue };
            if let (Some(t), Some(a)) = (&h.team, &h.agent)
                && t == team
                && a != &lead
                && is_member(a)
            {
                found.push((a.clone(), h.first_at.clone(), p));
            }
        }
    }
    found.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    for (name, _, p) in found {
        add(&mut out, &name, p, Kind::Pane);
    }
    out
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
