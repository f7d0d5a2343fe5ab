//! Moving entries from one inbox to another exactly once (`teamctl redeliver`): what a message
//! written to the wrong inbox needs to reach the right one without being lost or doubled.
//!
//! Invariants:
//! - Lock order: both inboxes' lock directories, the one whose path sorts first first. The first
//!   is waited for politely (proper-lockfile's backoff, up to the caller's deadline); the second
//!   only for [`SECOND_LOCK_WAIT`]. When it is not free by then, the first is released, left
//!   free at least as long as it was held, and both are tried again: a Claude Code writer of the
//!   first (it retries every 100 ms at most and gives up after about 0.65 s) finds it free.
//! - Order of writes, all under both locks: the target's new content to a copy beside it
//!   ([`super::moving_temp_name`]), synced; then the caller's journal, told that copy's name;
//!   then the copy renamed over the target (read back); then the source (atomic replace, read
//!   back). A journal entry thus records a move that happened exactly when the copy it names
//!   is gone (`write_journaled`). A signal finishes the move before the process exits
//!   (the CLI drains held locks); a SIGKILL or a crash at any point leaves files and journal
//!   that the next move reads right.
//! - Exactly once: an entry the target already holds (by id, [`crate::store::id::entry_id`],
//!   counted: two entries with one id need two there) or that the journal says was moved before
//!   (its reader may have taken it since) is not appended again, only removed from the source. A
//!   move stopped between the two writes leaves the entry in both inboxes; the next move finds
//!   it in the target, or in the journal, and only removes it from the source. A move stopped
//!   after its journal entry and before its rename leaves its copy: the journal's caller then
//!   counts those entries undelivered ([`Move::delivered`]) and names the copy in
//!   [`Move::stale`], which the next move removes once it has written the target.
//! - Bytes: each moved entry is written by the layout writer ([`crate::store::format`]), which
//!   gives back a source entry's own bytes when the source is in `JSON.stringify` layout; the
//!   target keeps every byte it had when it is in that layout (the new entries are spliced in);
//!   the source keeps its other entries, re-rendered as every locked update renders them.
//! - The source is never removed, only emptied: Claude Code's writer creates an inbox and then
//!   locks it with `realpath`, which fails on a file removed in between, and then drops its
//!   message.
//! - Paths: both files are reached as every inbox is ([`crate::store::dir`]); a symlink, FIFO or
//!   anything but a regular file at either is refused before a lock is taken, and a source or
//!   target that does not parse is left byte for byte as it was.

use std::collections::HashMap;
use std::io;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::dir::{Dir, Loc};
use super::faults::{faults, pause};
use super::light::LightEntry;
use super::lock::{self, LockGuard, LockOptions};
use super::{Entry, format, id, leaf, parse_inbox, read_locked, read_unlocked};
use crate::error::Error;

/// How long the second lock of a move is waited for while the first is held.
pub const SECOND_LOCK_WAIT: Duration = Duration::from_millis(100);

/// What to move, from where to where.
pub struct Move<'a> {
    /// The inbox the entries leave.
    pub from: &'a Loc,
    /// The inbox they go to.
    pub to: &'a Loc,
    /// Which of the source's entries move.
    pub pick: &'a dyn Fn(&Entry) -> bool,
    /// Whether the entry with this id was moved to the target before (the journal).
    pub delivered: &'a dyn Fn(&str) -> bool,
    /// Copies ([`super::moving_temp_name`]) left beside the target by moves that were stopped
    /// before their rename, as the journal names them: removed once this move has written the
    /// target, whose entries they did not deliver.
    pub stale: &'a [String],
}

/// What [`move_entries`] did (or, for [`plan`], would do).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Moved {
    /// Entries appended to the target now, in source order.
    pub appended: Vec<Entry>,
    /// Entries only removed from the source: the target already had them, or the journal says
    /// they were moved before.
    pub already: Vec<Entry>,
    /// Entries left in the source (not picked).
    pub kept: usize,
}

impl Moved {
    /// Whether nothing was (or would be) changed.
    pub fn is_empty(&self) -> bool {
        self.appended.is_empty() && self.already.is_empty()
    }
}

/// Moves the picked entries of `m.from` to `m.to` under both lock directories (see the module
/// docs), calling `journal` with the appended entries once the target holds them and before the
/// source is changed. A source that does not exist is an error; one with nothing to move is
/// left untouched and so is the target (not even created).
///
/// # Errors
/// [`Error::LockTimeout`] (nothing written), a source or target that does not parse or is not
/// a regular file (left unchanged), [`Error::VerifyFailed`], I/O.
pub fn move_entries(
    m: &Move,
    opts: &LockOptions,
    journal: &mut dyn FnMut(&[Entry], &str) -> Result<()>,
) -> Result<Moved> {
    let (from_dir, from_name) = source_place(m.from)?;
    // Peeked without a lock: with nothing to move, neither inbox is locked or made. (Its
    // entries go before the locked read: a large inbox is never held twice.)
    let nothing = {
        let peek =
            read_unlocked(m.from, |b| parse_inbox(b, m.from))?.ok_or_else(|| missing(m.from))?;
        (!peek.iter().any(|e| (m.pick)(e))).then_some(peek.len())
    };
    if let Some(kept) = nothing {
        return Ok(Moved {
            kept,
            ..Moved::default()
        });
    }
    let to_dir = super::ensure_inbox_in(m.to)?;
    let to_name = leaf(m.to)?;
    pause(faults().before_lock);
    let (from_lock, to_lock) = lock_pair((&from_dir, from_name), (&to_dir, to_name), opts)?;
    pause(faults().after_lock);
    let source = read_locked(&from_dir, from_name, m.from)?;
    let target = read_locked(&to_dir, to_name, m.to)?;
    let entries = parse_inbox(&source, m.from)?;
    drop(source);
    let (moved, rest) = split(entries, &target_ids(&target, m.to)?, m);
    if !moved.appended.is_empty() {
        let parts = appended_bytes(&target, m.to, &moved.appended)?;
        let parts: [&[u8]; 2] = [parts.0, &parts.1];
        to_lock.verify()?;
        // The journal says which copy carries the move before the copy replaces the target:
        // the move happened exactly when that copy is gone (a SIGKILL at any point leaves a
        // journal and a target that agree).
        super::write_journaled(&to_dir, to_name, &parts, |copy| {
            journal(&moved.appended, copy)
        })?;
        pause(faults().before_verify);
        super::verify_written(&to_dir, to_name, &parts)?;
        for copy in m
            .stale
            .iter()
            .filter(|c| super::is_moving_temp_name(c, to_name))
        {
            let _ = to_dir.unlink(copy);
        }
    }
    pause(faults().between_moves);
    let rest: Vec<&Entry> = rest.iter().collect();
    let bytes = super::render(&rest);
    from_lock.verify()?;
    super::write_in(&from_dir, from_name, &[bytes.as_bytes()], 0o666)?;
    pause(faults().before_verify);
    super::verify_written(&from_dir, from_name, &[bytes.as_bytes()])?;
    to_lock.release()?;
    from_lock.release()?;
    Ok(moved)
}

/// What [`move_entries`] would do now, read without locks; nothing is written.
///
/// # Errors
/// A missing source; a source or target that does not parse or is not a regular file; I/O.
pub fn plan(m: &Move) -> Result<Moved> {
    source_place(m.from)?;
    let entries =
        read_unlocked(m.from, |b| parse_inbox(b, m.from))?.ok_or_else(|| missing(m.from))?;
    let target = match m.to.parent_dir() {
        Ok(dir) => {
            dir.expect_file(leaf(m.to)?)
                .with_context(|| format!("could not read {}", m.to.display()))?;
            read_unlocked(m.to, |b| Ok(b.to_vec()))?
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("could not read {}", m.to.display())),
    };
    let ids = match &target {
        Some(b) => target_ids(b, m.to)?,
        None => HashMap::new(),
    };
    Ok(split(entries, &ids, m).0)
}

fn missing(path: &Loc) -> anyhow::Error {
    anyhow::anyhow!("could not move from {}: it does not exist", path.display())
}

/// The source's folder and name, checked before any lock: a regular file, or an error naming
/// what is there instead.
fn source_place(from: &Loc) -> Result<(Dir, &str)> {
    let context = || format!("could not move from {}", from.display());
    let dir = match from.parent_dir() {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(missing(from)),
        Err(e) => return Err(e).with_context(context),
    };
    let name = leaf(from)?;
    if dir.expect_file(name).with_context(context)?.is_none() {
        return Err(missing(from));
    }
    Ok((dir, name))
}

/// How many entries of each id the target holds.
fn target_ids(bytes: &[u8], path: &Loc) -> Result<HashMap<String, usize>> {
    let ids: Vec<String> = match serde_json::from_slice::<Vec<LightEntry>>(bytes) {
        Ok(entries) => entries.iter().map(LightEntry::id).collect(),
        // Not an array of objects, or a key given twice: the full parser decides.
        Err(_) => parse_inbox(bytes, path)?.iter().map(id::entry_id).collect(),
    };
    let mut count = HashMap::new();
    for i in ids {
        *count.entry(i).or_insert(0) += 1;
    }
    Ok(count)
}

/// The picked entries split into those to append and those the target (or the journal) has.
/// The source's entries sorted into what moves (appended, or only removed: already there),
/// and the rest, which stays (moved out of `entries`, not copied: a large inbox is held once).
fn split(entries: Vec<Entry>, target: &HashMap<String, usize>, m: &Move) -> (Moved, Vec<Entry>) {
    let mut there = target.clone();
    let mut out = Moved::default();
    let mut rest = Vec::new();
    for e in entries {
        if !(m.pick)(&e) {
            out.kept += 1;
            rest.push(e);
            continue;
        }
        let eid = id::entry_id(&e);
        match there.get_mut(&eid) {
            Some(n) if *n > 0 => {
                *n -= 1;
                out.already.push(e);
            }
            _ if (m.delivered)(&eid) => out.already.push(e),
            _ => out.appended.push(e),
        }
    }
    (out, rest)
}

/// The target with `new` appended, as two pieces to write one after the other (a prefix
/// borrowed from `bytes`, so a large inbox is not copied, and the new tail).
fn appended_bytes<'a>(bytes: &'a [u8], path: &Loc, new: &[Entry]) -> Result<(&'a [u8], Vec<u8>)> {
    match format::canonical_inbox(bytes) {
        Some(count) => {
            let elements: Vec<String> = new.iter().map(format::render_element).collect();
            Ok(format::splice_append(bytes, count, &elements.join(",\n")))
        }
        None => {
            let mut entries = parse_inbox(bytes, path)?;
            entries.extend(new.iter().cloned());
            Ok((&[][..], super::render(&entries).into_bytes()))
        }
    }
}

/// Takes the lock directories of `a` and `b` (a file's folder and name each) in a fixed order,
/// never holding one while waiting longer than [`SECOND_LOCK_WAIT`] for the other. Returns the
/// guards in the order given.
fn lock_pair(
    a: (&Dir, &str),
    b: (&Dir, &str),
    opts: &LockOptions,
) -> Result<(LockGuard, LockGuard)> {
    let swap = b.0.path().join(b.1) < a.0.path().join(a.1);
    let (first, second) = if swap { (b, a) } else { (a, b) };
    let start = Instant::now();
    let deadline = start + opts.timeout;
    let mut attempt = 0;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let held = lock::acquire_in(first.0, first.1, &with_timeout(opts, left))?;
        let brief = SECOND_LOCK_WAIT.min(deadline.saturating_duration_since(Instant::now()));
        match lock::acquire_in(second.0, second.1, &with_timeout(opts, brief)) {
            Ok(other) => return Ok(if swap { (other, held) } else { (held, other) }),
            Err(e) if is_timeout(&e) => {
                held.release()?;
                let now = Instant::now();
                if now >= deadline {
                    return Err(Error::LockTimeout {
                        lock: lock::lock_dir(&second.0.path().join(second.1)),
                        waited: now - start,
                    }
                    .into());
                }
                // At least as long free as it was held: a Claude Code writer of the first,
                // retrying every 100 ms at most, finds it free.
                let pause = SECOND_LOCK_WAIT + lock::backoff(attempt);
                thread::sleep(pause.min(deadline - now));
                attempt += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

fn with_timeout(opts: &LockOptions, timeout: Duration) -> LockOptions {
    LockOptions { timeout, ..*opts }
}

fn is_timeout(e: &anyhow::Error) -> bool {
    matches!(e.downcast_ref::<Error>(), Some(Error::LockTimeout { .. }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn unread(e: &Entry) -> bool {
        e.get("read") != Some(&serde_json::Value::Bool(true))
    }

    fn never(_: &str) -> bool {
        false
    }

    fn setup(from: &str, to: Option<&str>) -> (tempfile::TempDir, Loc, Loc) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("inboxes");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("alise.json"), from).unwrap();
        if let Some(to) = to {
            fs::write(dir.join("alice.json"), to).unwrap();
        }
        let root = Loc::root(tmp.path()).join("inboxes");
        (tmp, root.join("alise.json"), root.join("alice.json"))
    }

    const ONE: &str = "[\n  {\n    \"from\": \"worker\",\n    \"text\": \"SENDTO W1\",\n    \"summary\": \"sendto\",\n    \"timestamp\": \"2026-11-29T10:00:00.000Z\",\n    \"color\": \"blue\",\n    \"read\": false\n  },\n  {\n    \"from\": \"bob\",\n    \"text\": \"old\",\n    \"timestamp\": \"2026-11-29T09:00:00.000Z\",\n    \"read\": true\n  }\n]";

    #[test]
    fn moves_unread_entries_byte_for_byte_and_keeps_the_rest() {
        let target =
            "[\n  {\n    \"from\": \"x\",\n    \"text\": \"kept\",\n    \"n\": 1E5\n  }\n]";
        let (tmp, from, to) = setup(ONE, Some(target));
        let m = Move {
            from: &from,
            to: &to,
            pick: &unread,
            delivered: &never,
            stale: &[],
        };
        assert_eq!(plan(&m).unwrap().appended.len(), 1);
        let mut journaled = Vec::new();
        let moved = move_entries(&m, &LockOptions::default(), &mut |e, _| {
            journaled.extend(e.iter().map(id::entry_id));
            Ok(())
        })
        .unwrap();
        assert_eq!(
            (moved.appended.len(), moved.already.len(), moved.kept),
            (1, 0, 1)
        );
        assert_eq!(journaled.len(), 1);
        // The entry's bytes, as the source had them, now end the target.
        let element = &ONE[2..ONE.find("\n  },").unwrap() + 4];
        let got = fs::read_to_string(to.path()).unwrap();
        assert!(got.ends_with(&format!(",\n{element}\n]")), "{got}");
        assert!(got.starts_with("[\n  {\n    \"from\": \"x\""), "{got}");
        // A target not in the layout is rendered (its number as JSON.stringify writes it).
        assert!(got.contains("\"n\": 100000"), "{got}");
        let left = fs::read_to_string(from.path()).unwrap();
        assert!(
            left.contains("\"old\"") && !left.contains("SENDTO"),
            "{left}"
        );
        // Again: nothing to move, nothing written.
        let before = fs::read(to.path()).unwrap();
        let again = move_entries(&m, &LockOptions::default(), &mut |_, _| Ok(())).unwrap();
        assert!(again.is_empty());
        assert_eq!(fs::read(to.path()).unwrap(), before);
        let names: Vec<_> = fs::read_dir(tmp.path().join("inboxes")).unwrap().collect();
        assert_eq!(names.len(), 2, "no lock or temp file left");
    }

    #[test]
    fn an_entry_already_in_the_target_or_the_journal_is_only_removed() {
        let copy = format!("[\n{}\n]", &ONE[2..ONE.find("\n  },").unwrap() + 4]);
        let (_tmp, from, to) = setup(ONE, Some(&copy));
        let m = Move {
            from: &from,
            to: &to,
            pick: &unread,
            delivered: &never,
            stale: &[],
        };
        let before = fs::read(to.path()).unwrap();
        let moved =
            move_entries(&m, &LockOptions::default(), &mut |_, _| panic!("no append")).unwrap();
        assert_eq!((moved.appended.len(), moved.already.len()), (0, 1));
        assert_eq!(fs::read(to.path()).unwrap(), before);
        // Taken from the target by its reader since: the journal knows.
        let (_tmp, from, to) = setup(ONE, Some("[]"));
        let m = Move {
            from: &from,
            to: &to,
            pick: &unread,
            delivered: &|_| true,
            stale: &[],
        };
        let moved =
            move_entries(&m, &LockOptions::default(), &mut |_, _| panic!("no append")).unwrap();
        assert_eq!((moved.appended.len(), moved.already.len()), (0, 1));
        assert_eq!(fs::read(to.path()).unwrap(), b"[]");
    }

    #[test]
    fn a_corrupt_or_missing_side_is_left_alone() {
        let (_tmp, from, to) = setup("[{\"from\": 1,", Some("[]"));
        let m = Move {
            from: &from,
            to: &to,
            pick: &unread,
            delivered: &never,
            stale: &[],
        };
        assert!(move_entries(&m, &LockOptions::default(), &mut |_, _| Ok(())).is_err());
        assert_eq!(fs::read(from.path()).unwrap(), b"[{\"from\": 1,");
        let (_tmp, from, to) = setup(ONE, Some("{\"not\": \"an array\"}"));
        let m = Move {
            from: &from,
            to: &to,
            pick: &unread,
            delivered: &never,
            stale: &[],
        };
        assert!(move_entries(&m, &LockOptions::default(), &mut |_, _| Ok(())).is_err());
        assert_eq!(fs::read(from.path()).unwrap(), ONE.as_bytes());
        assert!(!lock::lock_dir(from.path()).exists());
        assert!(!lock::lock_dir(to.path()).exists());
        fs::remove_file(from.path()).unwrap();
        let err = move_entries(&m, &LockOptions::default(), &mut |_, _| Ok(())).unwrap_err();
        assert!(format!("{err:#}").contains("does not exist"), "{err:#}");
    }

    #[test]
    fn a_held_second_lock_releases_the_first_while_waiting() {
        let (_tmp, from, to) = setup(ONE, Some("[]"));
        // alice.json sorts first: its lock is taken first, alise's held by someone else.
        fs::create_dir(lock::lock_dir(from.path())).unwrap();
        let m = Move {
            from: &from,
            to: &to,
            pick: &unread,
            delivered: &never,
            stale: &[],
        };
        let watcher = {
            let first = lock::lock_dir(to.path());
            std::thread::spawn(move || {
                // The first lock must be free most of the time: sample it.
                let (mut free, mut held) = (0, 0);
                let end = Instant::now() + Duration::from_millis(600);
                while Instant::now() < end {
                    if first.exists() {
                        held += 1
                    } else {
                        free += 1
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                (free, held)
            })
        };
        let err = move_entries(
            &m,
            &LockOptions::with_timeout(Duration::from_millis(700)),
            &mut |_, _| Ok(()),
        )
        .unwrap_err();
        assert!(is_timeout(&err), "{err:#}");
        let (free, held) = watcher.join().unwrap();
        assert!(
            free * 10 >= (free + held) * 3,
            "the first lock was held {held} of {} samples",
            free + held
        );
        assert_eq!(fs::read(from.path()).unwrap(), ONE.as_bytes());
        assert_eq!(fs::read(to.path()).unwrap(), b"[]");
        assert!(!lock::lock_dir(to.path()).exists());
    }
}
