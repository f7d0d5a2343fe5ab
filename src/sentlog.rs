//! teamctl's own record of what it sent, because current Claude Code deletes a message once it
//! is delivered and nothing in the team's files remembers it.
//!
//! One JSON line per message written, appended under an exclusive OS lock on the log file
//! (std `File::lock`: the log is teamctl's own file, so no Claude Code protocol applies).
//! Size cap: when `sent.jsonl` has grown past [`MAX_BYTES`] it is renamed to `sent.jsonl.1`
//! (replacing the previous one) before the next line is written, so the log never takes more
//! than about twice that; lookups read both generations.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

/// When the current log passes this size it is rotated.
pub const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sent {
    /// The message's `msg_id`.
    pub id: String,
    /// Team.
    pub team: String,
    /// Recipient.
    pub to: String,
    /// Sender name written into the message.
    pub from: String,
    /// The message's timestamp.
    pub at: String,
    /// Its summary, if any.
    pub summary: Option<String>,
    /// The inbox file written.
    pub inbox: String,
    /// The idempotency key it was sent with, if any.
    pub idempotency_key: Option<String>,
    /// The request id this message answers (a `*_response` frame), if any.
    #[serde(default)]
    pub answers: Option<String>,
}

/// The log at an explicit location.
#[derive(Debug, Clone)]
pub struct SentLog {
    path: PathBuf,
}

impl SentLog {
    /// The log `sent.jsonl` in `dir` (created on first write).
    pub fn in_dir(dir: &Path) -> SentLog {
        SentLog {
            path: dir.join("sent.jsonl"),
        }
    }

    /// Path of the current log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn rotated(&self) -> PathBuf {
        crate::paths::with_suffix(&self.path, ".1")
    }

    /// Appends `sent`, rotating first if the log is over [`MAX_BYTES`].
    ///
    /// # Errors
    /// I/O errors, naming the log.
    pub fn record(&self, sent: &Sent) -> Result<()> {
        let context = || format!("could not write the sent log {}", self.path.display());
        if let Some(dir) = self.path.parent() {
            fs::create_dir_all(dir).with_context(context)?;
        }
        let mut line = serde_json::to_string(sent)?;
        line.push('\n');
        let mut f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .with_context(context)?;
        f.lock().with_context(context)?;
        // Rotate under the lock; another process that still has the old file open appends its
        // line to the rotated generation, which lookups read too.
        if f.metadata().with_context(context)?.len() > MAX_BYTES {
            fs::rename(&self.path, self.rotated()).with_context(context)?;
            let fresh = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path)
                .with_context(context)?;
            fresh.lock().with_context(context)?;
            f = fresh;
        }
        f.write_all(line.as_bytes()).with_context(context)?;
        Ok(())
    }

    /// Takes the answer lock: an exclusive OS lock on `answers.lock` beside the log, held
    /// while a request is checked for an answer and answered, so that of two processes
    /// answering the same request exactly one writes (the other then finds the answer in the
    /// log). Released when the returned file is dropped.
    ///
    /// # Errors
    /// I/O errors, naming the lock file.
    pub fn lock_answers(&self) -> Result<File> {
        let path = self.path.with_file_name("answers.lock");
        let context = || format!("could not lock {}", path.display());
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).with_context(context)?;
        }
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(context)?;
        f.lock().with_context(context)?;
        Ok(f)
    }

    /// Every line of both generations, oldest first. Lines that do not parse are skipped.
    ///
    /// # Errors
    /// I/O errors other than a missing log.
    pub fn entries(&self) -> Result<Vec<Sent>> {
        let mut out = Vec::new();
        for path in [self.rotated(), self.path.clone()] {
            let f = match File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(e).with_context(|| format!("could not read {}", path.display()));
                }
            };
            f.lock_shared()
                .with_context(|| format!("could not read {}", path.display()))?;
            for line in BufReader::new(f).lines() {
                if let Ok(sent) = serde_json::from_str::<Sent>(&line?) {
                    out.push(sent);
                }
            }
        }
        Ok(out)
    }

    /// The logged send with this message id in this team, if any.
    ///
    /// # Errors
    /// As [`SentLog::entries`].
    pub fn find(&self, team: &str, id: &str) -> Result<Option<Sent>> {
        Ok(self
            .entries()?
            .into_iter()
            .find(|s| s.team == team && s.id == id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(i: usize) -> Sent {
        Sent {
            id: format!("id-{i}"),
            team: "t".into(),
            to: "a".into(),
            from: "u".into(),
            at: "2026-11-29T10:00:00.000Z".into(),
            summary: None,
            inbox: "x".repeat(2000),
            idempotency_key: None,
            answers: None,
        }
    }

    #[test]
    fn records_finds_and_rotates() {
        let tmp = tempfile::tempdir().unwrap();
        let log = SentLog::in_dir(&tmp.path().join("teamctl"));
        assert!(log.entries().unwrap().is_empty());
        // Enough lines to pass the cap once.
        let n = (MAX_BYTES / 2000) as usize + 10;
        for i in 0..n {
            log.record(&sent(i)).unwrap();
        }
        assert!(fs::metadata(log.path()).unwrap().len() < MAX_BYTES);
        assert!(log.rotated().exists());
        let all = log.entries().unwrap();
        assert_eq!(all.len(), n, "both generations are read");
        assert_eq!(all[0].id, "id-0");
        assert!(log.find("t", "id-3").unwrap().is_some());
        assert!(log.find("other", "id-3").unwrap().is_none());
    }
}
