//! The locked read-modify-write of an inbox: appending one entry (once, by its id), updating
//! entries in place, and rewriting the array, each verified before the lock is released.

use std::io;
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::dir::{Dir, Loc};
use super::faults::{faults, pause, trace};
use super::format::{self, Entry, render};
use super::id;
use super::light::LightEntry;
use super::lock::{self, LockOptions};
use super::read::*;
use super::write::*;
use crate::error::Error;

/// What [`append`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum Appended {
    /// The entry was written and read back.
    Written,
    /// An entry with the same id was already in the inbox (here it is); nothing was written.
    AlreadyPresent(Entry),
}

/// Appends `entry` to the inbox at `path` under its lock, atomically, and verifies the result
/// before releasing the lock. With `dedupe`, an inbox that already holds an entry with the same
/// id ([`id::entry_id`]) is left alone.
///
/// The lock is checked to be ours right before the rename and again after the read-back
/// ([`lock::LockGuard::release_if_ours`]). Found lost before the rename, nothing was written:
/// the append starts over. Found lost after it, another writer believes it holds the lock and
/// may have read the inbox before our rename, so our entry may yet be replaced: the lock is
/// taken again (waiting like any writer) and the entry, looked for by its id, appended again
/// if it is gone. Only then is it reported written.
///
/// # Errors
/// [`Error::LockTimeout`], [`Error::VerifyFailed`], a corrupt inbox (left unchanged) or I/O.
pub fn append(path: &Loc, entry: &Entry, dedupe: bool, opts: &LockOptions) -> Result<Appended> {
    // Made and checked before the lock: a FIFO or a symlink there is refused without it.
    let dir = ensure_inbox_in(path)?;
    let name = leaf(path)?;
    let wanted = id::entry_id(entry);
    // Whether an earlier attempt of ours renamed the entry into place.
    let mut written = false;
    for _ in 0..APPEND_ATTEMPTS {
        pause(faults().before_lock);
        let guard = lock::acquire_in(&dir, name, opts)?;
        pause(faults().after_lock);
        remove_stale_temps(&dir, name);
        let bytes = read_locked(&dir, name, path)?;
        if (dedupe || written)
            && let Some(existing) = find_id(&bytes, path, &wanted)?
        {
            trace(|| "append: found by its id, not written again".into());
            // Only read under it: a lock lost meanwhile changes nothing.
            guard.release_if_ours()?;
            return Ok(if written {
                Appended::Written
            } else {
                Appended::AlreadyPresent(existing)
            });
        }
        let inbox = Inbox {
            dir: &dir,
            name,
            path,
        };
        match append_once(&inbox, &bytes, entry, guard)? {
            Attempt::Done => return Ok(Appended::Written),
            Attempt::NotWritten => {}
            Attempt::MaybeReplaced => written = true,
        }
    }
    let why =
        format!("other writers took its lock over {APPEND_ATTEMPTS} times while teamctl held it");
    if written {
        return Err(verify_error(
            path,
            &format!("{why}; the message may or may not be in it"),
        ));
    }
    bail!(
        "could not write {}: {why}; nothing was written",
        path.display()
    )
}

/// How many times [`append`] takes the lock again after finding it taken over.
const APPEND_ATTEMPTS: usize = 5;

/// What one locked write of [`append`] came to.
enum Attempt {
    /// Written, read back, and the lock was ours throughout.
    Done,
    /// The lock was found lost before the rename: nothing was written.
    NotWritten,
    /// Renamed into place, but the lock was found lost after: the write may yet be replaced.
    MaybeReplaced,
}

/// The inbox an [`append`] writes: its folder's handle, its name in it, its path (for errors).
struct Inbox<'a> {
    dir: &'a Dir,
    name: &'a str,
    path: &'a Path,
}

/// Writes `entry` after `bytes` (the inbox as read under `guard`), reads it back and releases
/// the lock.
fn append_once(
    inbox: &Inbox,
    bytes: &[u8],
    entry: &Entry,
    guard: lock::LockGuard,
) -> Result<Attempt> {
    let Inbox { dir, name, path } = *inbox;
    let (prefix, tail) = match format::canonical_inbox(bytes) {
        Some(count) => format::splice_append(bytes, count, &format::render_element(entry)),
        None => {
            let mut entries = parse_inbox(bytes, path)?;
            entries.push(entry.clone());
            (&[][..], render(&entries).into_bytes())
        }
    };
    let parts = [prefix, &tail];
    // Checked after the temp file is written and synced, right before the rename.
    if !write_in_if(dir, name, &parts, 0o666, || guard.is_ours())? {
        trace(|| "append: lock lost before the rename, not written".into());
        guard.release_if_ours()?;
        return Ok(Attempt::NotWritten);
    }
    trace(|| format!("append: renamed after {} bytes read", bytes.len()));
    pause(faults().before_verify);
    let back = verify_written(dir, name, &parts);
    trace(|| {
        format!(
            "append: read back: {}",
            if back.is_ok() { "ok" } else { "changed" }
        )
    });
    let ours = guard.release_if_ours()?;
    match back {
        Ok(()) if ours => Ok(Attempt::Done),
        Ok(()) => Ok(Attempt::MaybeReplaced),
        // Another writer that believed it held the lock replaced the file already.
        Err(e)
            if !ours && matches!(e.downcast_ref::<Error>(), Some(Error::VerifyFailed { .. })) =>
        {
            Ok(Attempt::MaybeReplaced)
        }
        Err(e) => Err(e),
    }
}

/// Reads `name` in `dir` with its lock held: a regular file, opened without blocking (what is
/// not one fails at once, so the lock is never held waiting).
pub(super) fn read_locked(dir: &Dir, name: &str, path: &Path) -> Result<Vec<u8>> {
    dir.read(name)
        .with_context(|| format!("could not read {}", path.display()))?
        .with_context(|| format!("could not read {}: it disappeared", path.display()))
}

/// The entry whose id is `wanted`, if any, reading only the fields ids are made of.
fn find_id(bytes: &[u8], path: &Path, wanted: &str) -> Result<Option<Entry>> {
    let found = match serde_json::from_slice::<Vec<LightEntry>>(bytes) {
        Ok(entries) => entries.iter().position(|e| e.id() == wanted),
        // Not an array of objects, or a key given twice: the full parser decides.
        Err(_) => parse_inbox(bytes, path)?
            .iter()
            .position(|e| id::entry_id(e) == wanted),
    };
    match found {
        Some(i) => Ok(parse_inbox(bytes, path)?.into_iter().nth(i)),
        None => Ok(None),
    }
}

/// Runs `change` on the inbox's entries under its lock; when it returns `true` the result is
/// written atomically and verified. The inbox must exist. Returns what `change` reported.
///
/// # Errors
/// [`Error::LockTimeout`], [`Error::VerifyFailed`], a missing or corrupt inbox, or I/O.
pub fn update<T>(
    path: &Loc,
    opts: &LockOptions,
    change: impl FnOnce(&mut Vec<Entry>) -> (bool, T),
) -> Result<T> {
    rewrite(
        path,
        opts,
        |b| parse_inbox(b, path),
        |entries| Ok(change(entries)),
    )
}

/// The locked read-modify-write every change to an existing JSON file goes through: take the
/// file's lock directory, read and `parse` it, run `change`, and when it returns `true` write
/// the result atomically and verify it before releasing the lock. An error from `parse` or
/// `change` leaves the file as it was.
///
/// # Errors
/// [`Error::LockTimeout`], [`Error::VerifyFailed`], a missing file, `parse` and `change` errors,
/// or I/O.
pub fn rewrite<D: serde::Serialize, T>(
    path: &Loc,
    opts: &LockOptions,
    parse: impl FnOnce(&[u8]) -> Result<D>,
    change: impl FnOnce(&mut D) -> Result<(bool, T)>,
) -> Result<T> {
    let missing = || anyhow::anyhow!("could not update {}: it does not exist", path.display());
    let dir = match path.parent_dir() {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(missing()),
        Err(e) => return Err(e).with_context(|| format!("could not update {}", path.display())),
    };
    let name = leaf(path)?;
    // Checked before the lock: a FIFO or a symlink there is refused without it.
    if dir
        .expect_file(name)
        .with_context(|| format!("could not update {}", path.display()))?
        .is_none()
    {
        return Err(missing());
    }
    pause(faults().before_lock);
    let guard = lock::acquire_in(&dir, name, opts)?;
    pause(faults().after_lock);
    remove_stale_temps(&dir, name);
    let bytes = read_locked(&dir, name, path)?;
    let mut doc = parse(&bytes)?;
    let (changed, out) = change(&mut doc)?;
    if !changed {
        // Only read under it: a lock lost meanwhile changes nothing.
        guard.release_if_ours()?;
        return Ok(out);
    }
    let bytes = render(&doc);
    // Checked right before the rename: a lock lost before it writes nothing.
    write_in_if(&dir, name, &[bytes.as_bytes()], 0o666, || {
        guard.verify()?;
        Ok(true)
    })?;
    pause(faults().before_verify);
    if let Err(e) = verify_written(&dir, name, &[bytes.as_bytes()]) {
        // Replaced by a writer that took the lock over, or by one that skipped it: say which.
        return Err(guard.release().err().unwrap_or(e));
    }
    // A lock taken over after the rename: a writer that read the file before it may replace
    // this change, and `change` is not safe to run twice, so it is reported (exit 4).
    guard.release()?;
    Ok(out)
}
