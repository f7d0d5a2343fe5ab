//! The bridge's journal: every post and every decision, one JSON line each, appended to
//! `bridge.jsonl` in teamctl's data dir (private: 0600 in a 0700 folder). What a restarted
//! bridge reads to post nothing twice and accept no code twice; what a person reads to see who
//! answered what, from which chat, when. The same [`Record`] is the `--json` event.
//!
//! Invariants: lines are only appended, each in one write under an exclusive OS lock on the
//! file and synced before the append returns; a line that does not parse is skipped on read
//! (and counted), never rewritten. Size cap: past [`MAX_BYTES`] the file is renamed to
//! `bridge.jsonl.1` (replacing the generation before) under that lock, and both generations
//! are read: a code lives at most 30 days, and a generation holds tens of thousands of lines.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::store::dir::Loc;
use crate::team::sentlog::private_dir;

/// The journal's file name in the data dir.
pub const FILE: &str = "bridge.jsonl";
/// The previous generation's file name.
const ROTATED: &str = "bridge.jsonl.1";
/// How large the current generation grows before it is rotated.
pub const MAX_BYTES: u64 = 8 * 1024 * 1024;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum What {
    /// A request was posted with a code.
    Posted,
    /// Another need (a member gone, …) was posted.
    Notice,
    /// A code's request was approved from the chat.
    Approved,
    /// A code's request was denied from the chat.
    Denied,
    /// A message was sent to a teammate from the chat.
    Said,
    /// A `status` was answered.
    Status,
    /// A command was refused (`detail` says why): nothing was written.
    Refused,
    /// A code's request was answered elsewhere: the code is retired.
    Closed,
    /// A code expired unused: it is retired.
    Expired,
    /// The bridge stopped (`detail`: timeout, team_gone).
    End,
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
    /// `telegram`, `slack` or `webhook`.
    pub transport: String,
    /// The chat or channel.
    pub chat: String,
    /// The chat user who sent the command (`null` for posts).
    pub user: Option<String>,
    /// The team.
    pub team: Option<String>,
    /// The member it is about.
    pub member: Option<String>,
    /// The request.
    pub request_id: Option<String>,
    /// The one-time code.
    pub code: Option<String>,
    /// When the code expires.
    pub expires_at: Option<String>,
    /// The deny reason, the message said, why a command was refused, why the bridge stopped, or
    /// the notice's key.
    pub detail: Option<String>,
}

impl Record {
    /// A record of `event` at `at` in `transport`'s `chat`, every other field empty.
    pub fn new(event: What, at: String, transport: &str, chat: &str) -> Record {
        Record {
            schema_version: 1,
            event,
            at,
            transport: transport.to_string(),
            chat: chat.to_string(),
            user: None,
            team: None,
            member: None,
            request_id: None,
            code: None,
            expires_at: None,
            detail: None,
        }
    }
}

/// The journal file in a data dir.
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
}

impl Journal {
    /// The journal in teamctl's data dir `dir` (created on the first append).
    pub fn in_dir(dir: &Path) -> Journal {
        Journal {
            dir: dir.to_path_buf(),
        }
    }

    /// The journal's path.
    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    /// Appends `r` (one write, under the file's lock, synced).
    ///
    /// # Errors
    /// I/O, naming the journal; a journal that is a symlink or not a regular file.
    pub fn append(&self, r: &Record) -> Result<()> {
        let context = || {
            format!(
                "could not write the bridge journal {}",
                self.path().display()
            )
        };
        let dir = private_dir(&self.dir).with_context(context)?;
        // Refused before anything is written: the rotation would rename over it.
        dir.expect_file(ROTATED).with_context(context)?;
        let mut line = serde_json::to_string(r)?;
        line.push('\n');
        let mut f = dir.open_append(FILE, 0o600).with_context(context)?;
        f.lock().with_context(context)?;
        if f.metadata().with_context(context)?.len() > MAX_BYTES {
            dir.rename(FILE, ROTATED).with_context(context)?;
            let fresh = dir.open_append(FILE, 0o600).with_context(context)?;
            fresh.lock().with_context(context)?;
            f = fresh;
        }
        f.write_all(line.as_bytes()).with_context(context)?;
        f.sync_data().with_context(context)?;
        Ok(())
    }

    /// Every record, oldest first, and how many lines did not parse (skipped).
    ///
    /// # Errors
    /// I/O other than a missing journal; a journal that is not a regular file.
    pub fn read(&self) -> Result<(Vec<Record>, usize)> {
        let (mut out, mut bad) = (Vec::new(), 0);
        for name in [ROTATED, FILE] {
            let loc = Loc::root(&self.dir).join(name);
            let context = || format!("could not read the bridge journal {}", loc.display());
            let Some(f) = loc.open_file().with_context(context)? else {
                continue;
            };
            f.lock_shared().with_context(context)?;
            for line in BufReader::new(f).lines() {
                match serde_json::from_str::<Record>(&line.with_context(context)?) {
                    Ok(r) => out.push(r),
                    Err(_) => bad += 1,
                }
            }
        }
        Ok((out, bad))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn appends_private_lines_and_reads_them_back_skipping_torn_ones() {
        let tmp = tempfile::tempdir().unwrap();
        let j = Journal::in_dir(&tmp.path().join("data"));
        assert_eq!(j.read().unwrap(), (vec![], 0));
        let mut r = Record::new(
            What::Posted,
            "2026-11-29T10:00:00.000Z".into(),
            "telegram",
            "42",
        );
        r.code = Some("ab12cd34ef".into());
        j.append(&r).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(j.path())
            .unwrap()
            .write_all(b"{\"torn\n")
            .unwrap();
        let mut s = r.clone();
        s.event = What::Approved;
        j.append(&s).unwrap();
        assert_eq!(j.read().unwrap(), (vec![r, s], 1));
        let mode = std::fs::metadata(j.path()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn a_full_journal_is_rotated_and_both_generations_are_read() {
        let tmp = tempfile::tempdir().unwrap();
        let j = Journal::in_dir(tmp.path());
        let r = Record::new(
            What::Status,
            "2026-11-29T10:00:00.000Z".into(),
            "telegram",
            "42",
        );
        j.append(&r).unwrap();
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(j.path())
            .unwrap();
        f.set_len(MAX_BYTES + 1).unwrap();
        j.append(&r).unwrap();
        assert!(tmp.path().join(ROTATED).is_file());
        assert!(std::fs::metadata(j.path()).unwrap().len() < 1000);
        // The padding is one line of NULs: skipped, counted.
        assert_eq!(j.read().unwrap(), (vec![r.clone(), r], 1));
    }
}
