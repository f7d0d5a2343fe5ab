//! What was answered and said from the page: one JSON line each in `serve.jsonl` in teamctl's
//! data dir, kept as [`crate::team::journal`] keeps a journal (appended only, private,
//! rotated past [`MAX_BYTES`]), with `"via":"web"` as the bridge's lines name their chat. The
//! same [`Record`] is `serve --json`'s event.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::team::journal::JsonLines;

/// The journal's file name in the data dir.
pub const FILE: &str = "serve.jsonl";
/// The previous generation's file name.
const ROTATED: &str = "serve.jsonl.1";
/// How large the current generation grows before it is rotated.
pub const MAX_BYTES: u64 = 8 * 1024 * 1024;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum What {
    /// A request was approved from the page.
    Approved,
    /// A request was denied from the page.
    Denied,
    /// A plan approval was given and is held until the planner reports idle.
    Held,
    /// A message was sent to a teammate from the page.
    Said,
}

/// One journal line (and one `--json` event). Every key is always present.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// Always 1.
    pub schema_version: u32,
    /// What happened.
    pub event: What,
    /// When (RFC 3339, UTC).
    pub at: String,
    /// Always `web`.
    pub via: String,
    /// The team.
    pub team: String,
    /// The member it is about (the requester, or the message's recipient).
    pub member: Option<String>,
    /// The request answered.
    pub request_id: Option<String>,
    /// The deny reason, the message sent, or what a held approval waits for.
    pub detail: Option<String>,
    /// The id of the entry written (`null` for a held approval).
    pub id: Option<String>,
}

impl Record {
    /// A record of `event` in `team` at `at`, every other field empty.
    pub fn new(event: What, at: String, team: &str) -> Record {
        Record {
            schema_version: 1,
            event,
            at,
            via: "web".to_string(),
            team: team.to_string(),
            member: None,
            request_id: None,
            detail: None,
            id: None,
        }
    }
}

/// The plan approvals `records` (a journal, oldest first) show held and never written: each
/// `held` record not followed by an answer to its request in its team. A hold lives in the
/// server that gave it, so these ended when an earlier run stopped.
pub fn unfinished_holds(records: &[Record]) -> Vec<Record> {
    let mut held: Vec<Record> = Vec::new();
    for r in records {
        let same = |h: &Record| h.team == r.team && h.request_id == r.request_id;
        match r.event {
            What::Held => {
                held.retain(|h| !same(h));
                held.push(r.clone());
            }
            What::Approved | What::Denied => held.retain(|h| !same(h)),
            What::Said => {}
        }
    }
    held
}

/// The journal file in a data dir.
#[derive(Debug, Clone)]
pub struct Journal {
    lines: JsonLines,
}

impl Journal {
    /// The journal in teamctl's data dir `dir` (created on the first append).
    pub fn in_dir(dir: &Path) -> Journal {
        Journal {
            lines: JsonLines::new(dir, (FILE, ROTATED), MAX_BYTES, "the serve journal"),
        }
    }

    /// The journal's path.
    pub fn path(&self) -> PathBuf {
        self.lines.path()
    }

    /// Appends `r` (one write, under the file's lock, synced).
    ///
    /// # Errors
    /// I/O, naming the journal; a journal that is a symlink or not a regular file.
    pub fn append(&self, r: &Record) -> Result<()> {
        self.lines.append(r)
    }

    /// Every record, oldest first, and how many lines did not parse (skipped).
    ///
    /// # Errors
    /// I/O other than a missing journal; a journal that is not a regular file.
    pub fn read(&self) -> Result<(Vec<Record>, usize)> {
        self.lines.read()
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn appends_private_lines_marked_web_and_reads_them_back() {
        let tmp = tempfile::tempdir().unwrap();
        let j = Journal::in_dir(&tmp.path().join("data"));
        let mut r = Record::new(What::Approved, "2026-11-29T10:00:00.000Z".into(), "alpha");
        r.request_id = Some("perm-1".into());
        j.append(&r).unwrap();
        assert_eq!(j.read().unwrap(), (vec![r], 0));
        let line = std::fs::read_to_string(j.path()).unwrap();
        assert!(line.contains("\"via\":\"web\""), "{line}");
        let mode = std::fs::metadata(j.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_hold_is_unfinished_until_its_request_is_answered() {
        let rec = |event, team: &str, id: &str| {
            let mut r = Record::new(event, "2026-11-29T10:00:00.000Z".into(), team);
            r.request_id = Some(id.into());
            r
        };
        let journal = [
            rec(What::Held, "alpha", "plan-1"),
            rec(What::Held, "alpha", "plan-2"),
            rec(What::Held, "beta", "plan-1"),
            rec(What::Approved, "alpha", "plan-1"),
            rec(What::Held, "alpha", "plan-2"),
            rec(What::Denied, "beta", "plan-1"),
        ];
        assert_eq!(
            unfinished_holds(&journal),
            [rec(What::Held, "alpha", "plan-2")]
        );
    }
}
