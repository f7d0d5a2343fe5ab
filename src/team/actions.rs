//! teamctl's journal of what it did to a team's members itself: each restart (`wait`/`run
//! --on-stall restart`, `--on-dead restart`) and each resume (`teamctl resume`, `run
//! --resume`), one JSON line each in `actions.jsonl` in its data dir. Nothing in the team's files
//! tells a restart onto the same session (`claude --resume <id>` appends to the transcript it
//! had): this journal does, and `export` keeps the team's lines in its record.
//!
//! Kept as the bridge's journal is ([`crate::team::journal`]): appended only, private, rotated to
//! `actions.jsonl.1` past [`MAX_BYTES`], both generations read.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::team::journal::JsonLines;

/// The journal's file name in the data dir.
pub const FILE: &str = "actions.jsonl";
/// The previous generation's file name.
const ROTATED: &str = "actions.jsonl.1";
/// How large the current generation grows before it is rotated (a line is ~200 bytes).
pub const MAX_BYTES: u64 = 1024 * 1024;

/// What teamctl did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A stuck member started again (`--on-stall restart`, `--on-dead restart`).
    Restart,
    /// A stopped member or lead started again (`teamctl resume`, `run --resume`).
    Resume,
}

/// One journal line. Every key is always present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Action {
    /// When (ISO 8601, UTC, milliseconds).
    pub at: String,
    /// The team.
    pub team: String,
    /// The member started again.
    pub member: String,
    /// What was done.
    pub action: Kind,
    /// The session it carries on (`None`: none was found, it started afresh).
    pub session_id: Option<String>,
    /// The pane it was started in.
    pub pane: String,
    /// Why, in teamctl's words (`dead`, `stalled`, `the team stopped`, …).
    pub why: String,
}

/// The journal file in a data dir.
#[derive(Debug, Clone)]
pub struct Actions {
    lines: JsonLines,
}

impl Actions {
    /// The journal in teamctl's data dir `dir` (created on the first append).
    pub fn in_dir(dir: &Path) -> Actions {
        Actions {
            lines: JsonLines::new(dir, (FILE, ROTATED), MAX_BYTES, "teamctl's journal"),
        }
    }

    /// The journal's path.
    pub fn path(&self) -> PathBuf {
        self.lines.path()
    }

    /// Appends `a` (one write, under the file's lock, synced).
    ///
    /// # Errors
    /// I/O, naming the journal; a journal that is a symlink or not a regular file.
    pub fn append(&self, a: &Action) -> Result<()> {
        self.lines.append(a)
    }

    /// Every line of `team`, oldest first (lines that do not parse are skipped).
    ///
    /// # Errors
    /// I/O other than a missing journal; a journal that is not a regular file.
    pub fn of_team(&self, team: &str) -> Result<Vec<Action>> {
        let (all, _) = self.lines.read::<Action>()?;
        Ok(all.into_iter().filter(|a| a.team == team).collect())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn action(team: &str) -> Action {
        Action {
            at: "2026-12-01T00:10:00.000Z".into(),
            team: team.into(),
            member: "worker".into(),
            action: Kind::Restart,
            session_id: None,
            pane: "%3".into(),
            why: "dead".into(),
        }
    }

    #[test]
    fn appends_private_lines_and_reads_a_teams_back_skipping_torn_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let j = Actions::in_dir(&tmp.path().join("data"));
        assert!(j.of_team("t").unwrap().is_empty());
        j.append(&action("t")).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(j.path())
            .unwrap()
            .write_all(b"{\"torn\n")
            .unwrap();
        j.append(&action("other")).unwrap();
        assert_eq!(j.of_team("t").unwrap(), vec![action("t")]);
        let line = std::fs::read_to_string(j.path()).unwrap();
        assert!(line.starts_with(
            "{\"at\":\"2026-12-01T00:10:00.000Z\",\"team\":\"t\",\"member\":\"worker\",\
             \"action\":\"restart\",\"session_id\":null,\"pane\":\"%3\",\"why\":\"dead\"}\n"
        ));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&j.path()), 0o600);
        assert_eq!(mode(&tmp.path().join("data")), 0o700);
    }

    #[test]
    fn never_written_through_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("elsewhere");
        std::fs::write(&target, "keep\n").unwrap();
        std::fs::create_dir_all(tmp.path().join("data")).unwrap();
        let j = Actions::in_dir(&tmp.path().join("data"));
        std::os::unix::fs::symlink(&target, j.path()).unwrap();
        let err = j.append(&action("t")).unwrap_err();
        assert!(format!("{err:#}").contains("is a symlink"), "{err:#}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    }
}
