//! teamctl's own record of what it sent, because current Claude Code deletes a message once it
//! is delivered and nothing in the team's files remembers it.
//!
//! One JSON line per message written, appended under an exclusive OS lock on the log file
//! (`flock`, waited for at most [`OWN_LOCK_WAIT`]: the log is teamctl's own file, so no Claude
//! Code protocol applies). Readers take no lock (as a journal's, [`open_generations`]).
//! Size cap: when `sent.jsonl` has grown past [`MAX_BYTES`] it is renamed to `sent.jsonl.1`
//! (replacing the previous one) before the next line is written, so the log never takes more
//! than about twice that; lookups read both generations.
//!
//! Privacy: the log holds every message text's summary and every recipient, so it is the
//! user's alone: both generations are 0600 and the folder 0700, made so at each write when
//! found wider (the folder only when the process owns it). The log is never written through a
//! symlink: every file is opened with `O_NOFOLLOW | O_NONBLOCK` below a handle on the folder
//! and used only when `fstat` says it is a regular file, so nothing can be swapped in between a
//! check and the open.

use std::fs::{self, File, Permissions};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::store::dir::{Dir, OWN_LOCK_WAIT, lock_own_file};
use crate::team::data_dir::private_dir;
use crate::team::journal::open_generations;

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
    /// For an entry `redeliver` moved: the copy of the target inbox that carried it
    /// (`<inbox>.moving.<8 hex>`), recorded before that copy replaced the target. The move
    /// happened exactly when the copy is gone.
    #[serde(default)]
    pub moving: Option<String>,
}

/// Sent-log lines made ahead of their write ([`SentLog::pending`]).
#[derive(Debug)]
pub struct Pending {
    write: io::BufWriter<File>,
    read: File,
    /// Each line's length, in the order added (4 bytes a line: a move makes one per message).
    lens: Vec<u32>,
}

impl Pending {
    /// Adds `sent`'s line; its index is the number of lines added before it.
    ///
    /// # Errors
    /// I/O errors.
    pub fn push(&mut self, sent: &Sent) -> Result<()> {
        let line = SentLog::line(sent)?;
        let len = u32::try_from(line.len())
            .map_err(|_| anyhow::anyhow!("a sent-log line of {} bytes is too long", line.len()))?;
        self.write.write_all(line.as_bytes())?;
        self.lens.push(len);
        Ok(())
    }

    /// Forgets every line added (the move is planned again).
    ///
    /// # Errors
    /// I/O errors.
    pub fn clear(&mut self) -> Result<()> {
        self.write.flush()?;
        let f = self.write.get_mut();
        f.set_len(0)?;
        io::Seek::rewind(f)?;
        self.lens.clear();
        Ok(())
    }
}

/// The log at an explicit location.
#[derive(Debug, Clone)]
pub struct SentLog {
    dir: PathBuf,
    path: PathBuf,
}

/// The current generation's file name.
const CURRENT: &str = "sent.jsonl";
/// The rotated generation's file name.
const ROTATED: &str = "sent.jsonl.1";

impl SentLog {
    /// The log `sent.jsonl` in `dir` (created on first write).
    pub fn in_dir(dir: &Path) -> SentLog {
        SentLog {
            dir: dir.to_path_buf(),
            path: dir.join(CURRENT),
        }
    }

    /// Path of the current log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    #[cfg(test)]
    fn rotated(&self) -> PathBuf {
        self.dir.join(ROTATED)
    }

    /// Appends `sent`, rotating first if the log is over [`MAX_BYTES`]. Makes the log private
    /// first (files 0600, folder 0700).
    ///
    /// # Errors
    /// I/O errors, naming the log; a log file that is a symlink (or anything but a regular
    /// file), refused without following or blocking.
    pub fn record(&self, sent: &Sent) -> Result<()> {
        self.record_all(std::slice::from_ref(sent))
    }

    /// [`SentLog::record`] of every entry of `sents`, in one write under one lock (a move of
    /// many messages journals them while it holds two inboxes' locks: one write keeps that
    /// short).
    ///
    /// # Errors
    /// As [`SentLog::record`].
    pub fn record_all(&self, sents: &[Sent]) -> Result<()> {
        let mut line = String::new();
        for sent in sents {
            line.push_str(&Self::line(sent)?);
        }
        self.append_with(&mut |out| out.write_all(line.as_bytes()))
    }

    /// `sent` as the log holds it: one line of JSON, with its `\n`.
    ///
    /// # Errors
    /// None in practice (serializing strings).
    pub fn line(sent: &Sent) -> Result<String> {
        let mut line = serde_json::to_string(sent)?;
        line.push('\n');
        Ok(line)
    }

    /// Lines made ahead of the write that records them ([`SentLog::record_pending`]): a move
    /// makes one per message before it locks the inboxes, and writes only those of the
    /// messages it moved, under the locks. They wait in a file of the log's folder that is
    /// removed as soon as it is opened (nothing is left by a crash), not in memory.
    ///
    /// # Errors
    /// I/O errors, naming the folder.
    pub fn pending(&self) -> Result<Pending> {
        let context = || format!("could not write the sent log {}", self.path.display());
        let dir = private_dir(&self.dir).with_context(context)?;
        let name = format!("{CURRENT}.pending.{}", crate::store::id::temp_suffix());
        let write = dir.create_new(&name, 0o600).with_context(context)?;
        let read = dir.open_file(&name);
        let _ = dir.unlink(&name);
        let read = read.with_context(context)?.with_context(context)?;
        Ok(Pending {
            write: io::BufWriter::with_capacity(256 * 1024, write),
            read,
            lens: Vec::new(),
        })
    }

    /// Appends the lines of `pending` at `which` (indices in the order they were added,
    /// ascending) under the log's lock, as [`SentLog::record_all`] does.
    ///
    /// # Errors
    /// As [`SentLog::record_all`].
    pub fn record_pending(&self, pending: &mut Pending, which: &[u32]) -> Result<()> {
        pending.write.flush()?;
        let read = &pending.read;
        // The lines wanted as runs of bytes (one run when every line is), copied in large
        // reads: this runs while a move holds two inboxes' locks.
        let mut runs: Vec<(u64, u64)> = Vec::new();
        let (mut next, mut at) = (0usize, 0u64);
        for i in which.iter().map(|&i| i as usize) {
            // Where line i starts: the lengths before it added up (`which` ascends).
            for &len in &pending.lens[next..i] {
                at += u64::from(len);
            }
            let (start, end) = (at, at + u64::from(pending.lens[i]));
            (next, at) = (i + 1, end);
            match runs.last_mut() {
                Some(run) if run.1 == start => run.1 = end,
                _ => runs.push((start, end)),
            }
        }
        let mut buf = vec![0u8; 256 * 1024];
        self.append_with(&mut |out| {
            for &(mut at, end) in &runs {
                while at < end {
                    let n = buf.len().min((end - at) as usize);
                    std::os::unix::fs::FileExt::read_exact_at(read, &mut buf[..n], at)?;
                    out.write_all(&buf[..n])?;
                    at += n as u64;
                }
            }
            Ok(())
        })
    }

    /// Appends what `fill` writes, under the log's lock (rotating it first when it is large).
    fn append_with(&self, fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>) -> Result<()> {
        let context = || format!("could not write the sent log {}", self.path.display());
        let dir = private_dir(&self.dir).with_context(context)?;
        // Refused before anything is written: the rotation would rename over it.
        dir.expect_file(ROTATED).with_context(context)?;
        // O_NOFOLLOW | O_NONBLOCK, then fstat: no window between a check and the open.
        let mut f = dir.open_append(CURRENT, 0o600).with_context(context)?;
        make_private(&dir, &f).with_context(context)?;
        lock_own_file(&f, OWN_LOCK_WAIT).with_context(context)?;
        // Rotate under the lock; another process that still has the old file open appends its
        // line to the rotated generation, which lookups read too.
        if f.metadata().with_context(context)?.len() > MAX_BYTES {
            dir.rename(CURRENT, ROTATED).with_context(context)?;
            let fresh = dir.open_append(CURRENT, 0o600).with_context(context)?;
            lock_own_file(&fresh, OWN_LOCK_WAIT).with_context(context)?;
            f = fresh;
        }
        let mut out = io::BufWriter::with_capacity(256 * 1024, f);
        fill(&mut out).with_context(context)?;
        out.flush().with_context(context)?;
        Ok(())
    }

    /// Takes the answer lock: an exclusive OS lock on `answers.lock` beside the log, held
    /// while a request is checked for an answer and answered, so that of two processes
    /// answering the same request exactly one writes (the other then finds the answer in the
    /// log). Released when the returned file is dropped. The file is opened without following a
    /// symlink and used only when it is a regular file.
    ///
    /// # Errors
    /// I/O errors, naming the lock file.
    pub fn lock_answers(&self) -> Result<File> {
        let path = self.dir.join("answers.lock");
        let context = || format!("could not lock {}", path.display());
        let dir = private_dir(&self.dir).with_context(context)?;
        let f = dir
            .open_or_create("answers.lock", 0o600)
            .with_context(context)?;
        lock_own_file(&f, OWN_LOCK_WAIT).with_context(context)?;
        Ok(f)
    }

    /// Every line of both generations, oldest first. Lines that do not parse are skipped.
    ///
    /// # Errors
    /// I/O errors other than a missing log; a log file that is not a regular file.
    pub fn entries(&self) -> Result<Vec<Sent>> {
        let mut out = Vec::new();
        self.each(&mut |sent| out.push(sent))?;
        Ok(out)
    }

    /// [`SentLog::entries`] handed to `each` one at a time as they are read (a log that a move
    /// of many messages made large is never held whole).
    ///
    /// # Errors
    /// As [`SentLog::entries`].
    pub fn each(&self, each: &mut dyn FnMut(Sent)) -> Result<()> {
        let context = || format!("could not read {}", self.path.display());
        let files = open_generations(&self.dir, ROTATED, CURRENT).with_context(context)?;
        for f in files.into_iter().flatten() {
            for line in BufReader::new(f).lines() {
                if let Ok(sent) = serde_json::from_str::<Sent>(&line.with_context(context)?) {
                    each(sent);
                }
            }
        }
        Ok(())
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

/// What `log` holds (nothing without a log).
///
/// # Errors
/// As [`SentLog::entries`].
pub fn entries(log: Option<&SentLog>) -> Result<Vec<Sent>> {
    log.map_or(Ok(Vec::new()), SentLog::entries)
}

/// Tightens the open log `f` and the rotated generation to 0600 where they are wider.
fn make_private(dir: &Dir, f: &File) -> io::Result<()> {
    let tighten = |m: &fs::Metadata, private: u32| {
        let mode = m.mode() & 0o7777;
        (mode & !private != 0).then(|| Permissions::from_mode(mode & private))
    };
    if let Some(p) = tighten(&f.metadata()?, 0o600) {
        f.set_permissions(p)?;
    }
    if let Some(rotated) = dir.open_file(ROTATED)?
        && let Some(p) = tighten(&rotated.metadata()?, 0o600)
    {
        rotated.set_permissions(p)?;
    }
    Ok(())
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
            moving: None,
        }
    }

    /// Lines made ahead are written only where asked, in runs, and nothing of them is left in
    /// the folder; cleared, they are made again.
    #[test]
    fn pending_lines_are_written_where_asked_and_leave_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let log = SentLog::in_dir(&tmp.path().join("teamctl"));
        let mut p = log.pending().unwrap();
        assert_eq!(fs::read_dir(tmp.path().join("teamctl")).unwrap().count(), 0);
        for i in 0..300 {
            p.push(&sent(i)).unwrap();
        }
        let which: Vec<u32> = (0..300).filter(|i| i % 100 != 7).collect();
        log.record_pending(&mut p, &which).unwrap();
        let ids: Vec<String> = log.entries().unwrap().into_iter().map(|s| s.id).collect();
        let want: Vec<String> = which.iter().map(|i| format!("id-{i}")).collect();
        assert_eq!(ids, want);
        p.clear().unwrap();
        p.push(&sent(1000)).unwrap();
        log.record_pending(&mut p, &[0]).unwrap();
        let last = log.entries().unwrap().pop().unwrap();
        assert_eq!(last.id, "id-1000");
        assert_eq!(fs::read_dir(tmp.path().join("teamctl")).unwrap().count(), 1);
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

    /// A reader takes no lock: one stopped while reading (Ctrl-Z on a follower) would stop
    /// every writer. A line still being appended is skipped, and a writer waits for another
    /// writer's lock only so long.
    #[test]
    fn readers_take_no_lock_and_writers_wait_only_so_long() {
        let tmp = tempfile::tempdir().unwrap();
        let log = SentLog::in_dir(&tmp.path().join("teamctl"));
        log.record(&sent(1)).unwrap();
        let held = File::open(log.path()).unwrap();
        held.lock().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = log.clone();
        std::thread::spawn(move || tx.send(reader.entries().map(|e| e.len()).ok()));
        let read = rx.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(read, Ok(Some(1)), "read beside a held lock");
        drop(held);
        // Half a line, as a writer leaves it for a moment: skipped, not an error.
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(log.path())
            .unwrap();
        f.write_all(b"{\"id\":\"id-2\",\"team\"").unwrap();
        assert_eq!(log.entries().unwrap().len(), 1);
    }

    /// Both generations are read once each, whichever was opened when.
    #[test]
    fn a_rotation_between_opens_reads_the_file_once() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::write(dir.join(CURRENT), "b\n").unwrap();
        fs::hard_link(dir.join(CURRENT), dir.join(ROTATED)).unwrap();
        let [old, new] = open_generations(dir, ROTATED, CURRENT).unwrap();
        assert!(old.is_some() && new.is_none(), "the same file, once");
        fs::remove_file(dir.join(CURRENT)).unwrap();
        fs::write(dir.join(CURRENT), "c\n").unwrap();
        let [old, new] = open_generations(dir, ROTATED, CURRENT).unwrap();
        assert!(old.is_some() && new.is_some());
    }

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().mode() & 0o7777
    }

    #[test]
    fn the_log_is_private_and_tightened_when_found_wider() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("share/teamctl");
        let log = SentLog::in_dir(&dir);
        log.record(&sent(0)).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(log.path()), 0o600);

        // Found wider (an older teamctl, a careless chmod): tightened at the next write.
        fs::set_permissions(&dir, Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(log.path(), Permissions::from_mode(0o644)).unwrap();
        fs::write(log.rotated(), "").unwrap();
        fs::set_permissions(log.rotated(), Permissions::from_mode(0o664)).unwrap();
        log.record(&sent(1)).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(log.path()), 0o600);
        assert_eq!(mode(&log.rotated()), 0o600);
        assert_eq!(log.entries().unwrap().len(), 2);
    }

    #[test]
    fn the_log_is_never_written_through_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("elsewhere");
        fs::write(&target, "keep\n").unwrap();
        let log = SentLog::in_dir(&tmp.path().join("teamctl"));
        fs::create_dir_all(tmp.path().join("teamctl")).unwrap();
        std::os::unix::fs::symlink(&target, log.path()).unwrap();
        let err = log.record(&sent(0)).unwrap_err();
        assert!(format!("{err:#}").contains("is a symlink"), "{err:#}");
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep\n");
        // answers.lock too, and a FIFO never blocks.
        fs::remove_file(log.path()).unwrap();
        let lock = tmp.path().join("teamctl/answers.lock");
        std::os::unix::fs::symlink(&target, &lock).unwrap();
        let err = log.lock_answers().unwrap_err();
        assert!(format!("{err:#}").contains("is a symlink"), "{err:#}");
        crate::store::dir::mkfifo(log.path());
        let err = log.record(&sent(0)).unwrap_err();
        assert!(format!("{err:#}").contains("FIFO"), "{err:#}");
        assert!(format!("{err:#}").contains("FIFO"), "{err:#}");
        assert_eq!(fs::read_to_string(&target).unwrap(), "keep\n");
    }
}
