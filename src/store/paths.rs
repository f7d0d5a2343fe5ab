//! File layout under an explicit Claude config dir, and the name rules that keep it safe.
//!
//! Paths are plain string joins, as Node's `path.join` builds them: no symlink is resolved, so
//! lock directories are the same strings Claude Code uses. Names are checked before any path
//! is built, so `..`, `/` and friends never reach the file system; and every path is a
//! [`Loc`], opened from the config dir down without following a symlink.

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::usage;
use crate::store::dir::Loc;

/// A team name teamctl accepts: `^[a-z0-9-]+$`, the only names for which Claude Code's two
/// sanitisers (config vs. inboxes and tasks) give the same folder.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TeamName(String);

impl TeamName {
    /// Checks `name` against the team-name rule.
    ///
    /// # Errors
    /// An [`crate::Error::Usage`] naming the rule.
    pub fn parse(name: &str) -> anyhow::Result<Self> {
        let ok = !name.is_empty()
            && name.len() <= 128
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if ok {
            Ok(TeamName(name.to_string()))
        } else {
            Err(usage(format!(
                "invalid team name {}: use lowercase letters, digits and '-' only",
                quote(name)
            )))
        }
    }

    /// The name as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is a Claude Code session team (`session-…`), which Claude Code deletes
    /// together with its `config.json`.
    pub fn is_session_team(&self) -> bool {
        self.0.starts_with("session-")
    }
}

/// A member name teamctl accepts: `^[A-Za-z0-9_-]{1,64}$`, which Claude Code's inbox
/// sanitiser leaves unchanged.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MemberName(String);

impl MemberName {
    /// Checks `name` against the member-name rule.
    ///
    /// # Errors
    /// An [`crate::Error::Usage`] naming the rule.
    pub fn parse(name: &str) -> anyhow::Result<Self> {
        if is_valid_member(name) {
            Ok(MemberName(name.to_string()))
        } else {
            Err(usage(format!(
                "invalid member name {}: use 1 to 64 letters, digits, '_' or '-'",
                quote(name)
            )))
        }
    }

    /// The name as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether Claude Code reserves this name (`main`, `team-lead`, `user`, `system`, any case)
    /// for itself: teammates cannot be created with it, and new versions never let a teammate
    /// reply to `user`.
    pub fn is_reserved(&self) -> bool {
        RESERVED.iter().any(|r| r.eq_ignore_ascii_case(&self.0))
    }
}

/// A Claude Code session id as teamctl passes one on: UUID-shaped, `8-4-4-4-12` hex digits
/// (what Claude Code names every session). Only this type reaches a `claude` argv
/// (`--resume`, `--session-id`, `--parent-session-id`), so a session id read from a team's files
/// can never be an option such as `-c` (`--continue`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SessionId(String);

impl SessionId {
    /// Checks `id` is UUID-shaped.
    ///
    /// # Errors
    /// Anything else, named (quoted) in a one-line error.
    pub fn parse(id: &str) -> anyhow::Result<Self> {
        if is_uuid_shaped(id) {
            Ok(SessionId(id.to_string()))
        } else {
            anyhow::bail!(
                "{} is not a session id (8-4-4-4-12 hex digits, as Claude Code names sessions)",
                quote(id)
            )
        }
    }

    /// A new random (v4) session id.
    pub fn new_random() -> Self {
        SessionId(uuid::Uuid::new_v4().to_string())
    }

    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whether `s` is `8-4-4-4-12` ASCII hex digits separated by `-` (36 bytes).
pub fn is_uuid_shaped(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Names Claude Code reserves (new versions reject them as member names).
pub const RESERVED: [&str; 4] = ["main", "team-lead", "user", "system"];

/// Whether `name` matches `^[A-Za-z0-9_-]{1,64}$`.
pub fn is_valid_member(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

impl fmt::Display for TeamName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Display for MemberName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where a team's files live under one Claude config dir. Every location it gives is a
/// [`Loc`]: the config dir as the trusted root, then names that passed the naming rules, so
/// opening one never follows a symlink below the config dir ([`crate::store::dir`]).
#[derive(Debug, Clone)]
pub struct Layout {
    root: Loc,
}

impl Layout {
    /// A layout rooted at `root` (`$CLAUDE_CONFIG_DIR` or `~/.claude`).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Layout {
            root: Loc::root(root),
        }
    }

    /// The config dir itself.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The config dir as the root of every location below it.
    pub fn root_loc(&self) -> &Loc {
        &self.root
    }

    /// `<root>/teams`.
    pub fn teams_dir(&self) -> Loc {
        self.root.join("teams")
    }

    /// `<root>/teams/<team>`.
    pub fn team_dir(&self, team: &TeamName) -> Loc {
        self.teams_dir().join(team.as_str())
    }

    /// `<root>/teams/<team>/config.json`.
    pub fn config_path(&self, team: &TeamName) -> Loc {
        self.team_dir(team).join("config.json")
    }

    /// `<root>/teams/<team>/inboxes`.
    pub fn inboxes_dir(&self, team: &TeamName) -> Loc {
        self.team_dir(team).join("inboxes")
    }

    /// `<root>/teams/<team>/inboxes/<member>.json`.
    pub fn inbox_path(&self, team: &TeamName, member: &MemberName) -> Loc {
        self.inboxes_dir(team)
            .join(format!("{}.json", member.as_str()))
    }

    /// `<root>/tasks`.
    pub fn tasks_root(&self) -> Loc {
        self.root.join("tasks")
    }

    /// `<root>/tasks/<team>`.
    pub fn tasks_dir(&self, team: &TeamName) -> Loc {
        self.tasks_root().join(team.as_str())
    }
}

/// `<path><suffix>` as a literal string append (`inbox.json` → `inbox.json.lock`).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s: OsString = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// A name shown in an error: quoted, with control characters escaped.
pub fn quote(name: &str) -> String {
    format!("{name:?}").replace('"', "'")
}

/// A member name read from a file, for a message: as it is when it follows the member-name
/// rule, else [`quote`]d, so a newline or an escape sequence in it never breaks or paints the
/// message it is listed in.
pub fn shown(name: &str) -> std::borrow::Cow<'_, str> {
    if is_valid_member(name) {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(quote(name))
    }
}

/// [`shown`] names joined with `, `.
pub fn shown_list<S: AsRef<str>>(names: &[S]) -> String {
    names
        .iter()
        .map(|n| shown(n.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_uuid_shaped_never_options() {
        for ok in [
            "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d",
            "3F2B9C1E-8D4A-4F6B-9E21-7C5D0A1B2C3D",
        ] {
            assert_eq!(SessionId::parse(ok).unwrap().as_str(), ok);
        }
        for bad in [
            "-c",
            "--continue",
            "",
            "0b1c",
            "-b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d",
            "------------------------------------",
            "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4",
            "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d0",
            "0b1c2d3e04f50-4a6b-8c7d-9e0f1a2b3c4d",
            "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4g",
            "{0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c}",
        ] {
            let e = SessionId::parse(bad).unwrap_err().to_string();
            assert!(e.contains("is not a session id"), "{bad}: {e}");
        }
        assert!(is_uuid_shaped(SessionId::new_random().as_str()));
    }

    #[test]
    fn team_names() {
        for ok in ["a", "demo-team", "session-1a2b3c4d", "x9"] {
            assert!(TeamName::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "", "..", "a/b", "My_Team", "a b", "a@b", "a\u{7}", "DEMO", "a.b",
        ] {
            assert!(TeamName::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn member_names() {
        for ok in ["alice", "team-lead", "A_b-9", &"x".repeat(64)] {
            assert!(MemberName::parse(ok).is_ok(), "{ok}");
        }
        for bad in ["", "..", "a/b", "a@b", "a b", "a\n", &"x".repeat(65), "é"] {
            assert!(MemberName::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn reserved_any_case() {
        assert!(MemberName::parse("User").unwrap().is_reserved());
        assert!(MemberName::parse("team-lead").unwrap().is_reserved());
        assert!(!MemberName::parse("alice").unwrap().is_reserved());
    }

    #[test]
    fn layout_is_a_plain_join() {
        let l = Layout::new("/c");
        let t = TeamName::parse("demo").unwrap();
        let m = MemberName::parse("alice").unwrap();
        assert_eq!(
            l.inbox_path(&t, &m).path(),
            Path::new("/c/teams/demo/inboxes/alice.json")
        );
        assert_eq!(
            with_suffix(&l.inbox_path(&t, &m), ".lock"),
            PathBuf::from("/c/teams/demo/inboxes/alice.json.lock")
        );
        assert_eq!(l.tasks_dir(&t).path(), Path::new("/c/tasks/demo"));
    }
}
