//! The bridge's journal: every post and every decision, one JSON line each, appended to
//! `bridge.jsonl` in teamctl's data dir (private: 0600 in a 0700 folder). What a restarted
//! bridge reads to post nothing twice and accept no code twice; what a person reads to see who
//! answered what, from which chat, when. The same [`Record`] is the `--json` event.
//!
//! Kept as [`crate::team::journal`] keeps a journal: appended only, private, rotated to
//! `bridge.jsonl.1` past [`MAX_BYTES`], both generations read (a code lives at most 30 days,
//! and a generation holds tens of thousands of lines).
//!
//! Refused commands are journaled apart, in `bridge-refused.jsonl` ([`REFUSED_FILE`], rotated
//! alike): a refusal changes nothing, and anyone who can write in the chat can make them (a
//! stranger's every message is one), so in the same file a flood of them (75,000 lines of
//! about 220 bytes) pushed a code's `posted` line out of both generations, and a restarted
//! bridge posted that request again. Apart, a flood only rotates older refusals out: every
//! refusal is still on record (up to two generations of its own), and nothing a restarted
//! bridge reads back is crowded out, whatever the rate. A limit on the rate would have kept the
//! same budget shared and lost the record of what was refused.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::team::journal::JsonLines;

/// The journal's file name in the data dir.
pub const FILE: &str = "bridge.jsonl";
/// The previous generation's file name.
const ROTATED: &str = "bridge.jsonl.1";
/// How large the current generation grows before it is rotated.
pub const MAX_BYTES: u64 = 8 * 1024 * 1024;
/// The refusals' journal's file name in the data dir (kept apart: see the module docs).
pub const REFUSED_FILE: &str = "bridge-refused.jsonl";
/// Its previous generation's file name.
const REFUSED_ROTATED: &str = "bridge-refused.jsonl.1";

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
    /// The chat refused a post for good (`detail`: what it said); what it was about (team,
    /// member, request, code) as the post's own record had it. It is not tried again while the
    /// bridge runs (a restarted bridge tries it once more: the chat may have been mended).
    Dropped,
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

/// The journal files in a data dir: the posts and decisions, and the refusals apart.
#[derive(Debug, Clone)]
pub struct Journal {
    lines: JsonLines,
    refusals: JsonLines,
}

impl Journal {
    /// The journal in teamctl's data dir `dir` (created on the first append).
    pub fn in_dir(dir: &Path) -> Journal {
        Journal::capped(dir, MAX_BYTES)
    }

    /// The journal in `dir`, each file rotated past `max_bytes`.
    fn capped(dir: &Path, max_bytes: u64) -> Journal {
        Journal {
            lines: JsonLines::new(dir, (FILE, ROTATED), max_bytes, "the bridge journal"),
            refusals: JsonLines::new(
                dir,
                (REFUSED_FILE, REFUSED_ROTATED),
                max_bytes,
                "the bridge's journal of refusals",
            ),
        }
    }

    /// The journal's path (of its posts and decisions).
    pub fn path(&self) -> PathBuf {
        self.lines.path()
    }

    /// Appends `r` (one write, under the file's lock, synced): a refusal to the refusals' file,
    /// anything else to the journal's.
    ///
    /// # Errors
    /// I/O, naming the journal; a journal that is a symlink or not a regular file.
    pub fn append(&self, r: &Record) -> Result<()> {
        match r.event {
            What::Refused => self.refusals.append(r),
            _ => self.lines.append(r),
        }
    }

    /// Every record but the refusals (what a restarted bridge reads back), oldest first, and
    /// how many lines did not parse (skipped).
    ///
    /// # Errors
    /// I/O other than a missing journal; a journal that is not a regular file.
    pub fn read(&self) -> Result<(Vec<Record>, usize)> {
        self.lines.read()
    }

    /// Every record, the refusals too, oldest first (a record of a team's: `export`), and how
    /// many lines did not parse.
    ///
    /// # Errors
    /// As [`Journal::read`], of either file.
    pub fn read_all(&self) -> Result<(Vec<Record>, usize)> {
        let (mut all, bad) = self.lines.read::<Record>()?;
        let (refused, worse) = self.refusals.read::<Record>()?;
        all.extend(refused);
        // Each file is in time order: a stable sort by the time keeps each line's place.
        all.sort_by(|a, b| a.at.cmp(&b.at));
        Ok((all, bad + worse))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
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

    /// A flood of refused commands (a stranger's every message is one) never pushes a code's
    /// `posted` line out of what a restarted bridge reads back: refusals are kept apart, and
    /// rotate only each other out.
    #[test]
    fn a_flood_of_refusals_never_pushes_out_a_posted_code() {
        let tmp = tempfile::tempdir().unwrap();
        let cap = 4096;
        let j = Journal::capped(tmp.path(), cap);
        let at = |s: u32| format!("2026-11-29T10:{:02}:{:02}.000Z", s / 60, s % 60);
        let mut posted = Record::new(What::Posted, at(0), "telegram", "42");
        posted.code = Some("ab12cd34ef".into());
        posted.request_id = Some("perm-1".into());
        j.append(&posted).unwrap();
        let refusal = |n: u32| {
            let mut r = Record::new(What::Refused, at(n), "telegram", "-100999");
            r.user = Some(format!("{}", 900_000_000 + n));
            r.detail = Some("user not allowed".into());
            r
        };
        // Ten times what both generations hold.
        let line = serde_json::to_string(&refusal(1)).unwrap().len() as u64;
        let flood = (20 * cap / line) as u32;
        for n in 1..=flood {
            j.append(&refusal(n)).unwrap();
        }
        let mut said = Record::new(What::Said, at(flood + 1), "telegram", "42");
        said.user = Some("7".into());
        j.append(&said).unwrap();
        assert_eq!(j.read().unwrap(), (vec![posted.clone(), said.clone()], 0));
        // Every refusal kept is still on record, the newest ones, in time order with the rest.
        let (all, bad) = j.read_all().unwrap();
        assert_eq!(bad, 0);
        assert_eq!(all.first(), Some(&posted));
        assert_eq!(all.last(), Some(&said));
        let kept: Vec<&Record> = all.iter().filter(|r| r.event == What::Refused).collect();
        assert!(kept.len() as u64 * line >= cap, "{}", kept.len());
        assert_eq!(kept.last(), Some(&&refusal(flood)));
        let size = |name: &str| std::fs::metadata(tmp.path().join(name)).unwrap().len();
        assert!(size(REFUSED_FILE) <= cap + line && size(REFUSED_ROTATED) <= cap + line);
        assert!(!tmp.path().join(ROTATED).exists());
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
