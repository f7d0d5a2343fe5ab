//! The store layer: the files themselves, exactly as Claude Code reads and writes them. It owns
//! the lock protocol ([`lock`]), the `JSON.stringify` layout ([`mod@format`]), message ids ([`id`]),
//! the folder layout and the naming rules ([`paths`]), reaching files without following a
//! symlink or opening a FIFO ([`dir`]), cheap unlocked reads (`light`), copies of files that
//! change while they are read ([`snapshot`]), Claude Code's JSON object files edited as it edits
//! them ([`object_file`]) and only where they change ([`lazy`]), and, in this module,
//! the locked read-modify-write with read-back verification, and moving entries between two
//! inboxes under both their locks ([`moving`]). It knows nothing
//! of teams, members or features, and imports only [`crate::error`] and [`crate::time`].
//!
//! Inbox files: parse, render, atomic replace, and the locked read-modify-write with
//! read-back verification.
//!
//! Invariants:
//! - Format: `JSON.stringify(value, null, 2)` byte for byte ([`crate::store::format`]). An append to a
//!   file already in that form splices the new element in and leaves every other byte as it
//!   was; any other file is parsed and rendered (serde_json with `preserve_order`, and
//!   `arbitrary_precision` keeping every number as its text), so entries teamctl does not touch
//!   keep their meaning, keys and order either way.
//! - Lock order: the inbox lock directory is taken before the file is read for a write and
//!   released only after the read-back; nothing else is locked meanwhile.
//! - fsync points: the temp file before the rename, the folder after it.
//! - Verification: before the lock is released the file is read back and must be byte-equal
//!   to what was written. For an append that is the previous array plus our entry, so the file
//!   parses, holds exactly one entry more, and ends with ours.
//! - Lock ownership: checked right before the rename and again at release
//!   ([`lock::LockGuard::release_if_ours`]). An append whose lock another writer took over
//!   takes it again and, by its id, appends its entry once more if that writer's write lost
//!   it; any other write reports a lock lost after its write ([`Error::VerifyFailed`]).
//! - A file that is not a JSON array of objects is never written (an error names it).
//! - Modes: a replacement keeps the permission bits of the file it replaces (and its owner and
//!   group where the process may set them); a new file is created as Claude Code creates it,
//!   0666 & ~umask.
//! - Paths: every file is reached through [`dir`]: from the config dir down, no symlink is
//!   followed at any component, and a file is read only once `fstat` says it is a regular file
//!   (a FIFO, socket, device, folder or symlink where a file belongs is an error naming it,
//!   found before the lock is taken, and again without blocking under it).
//! - Temp files: `<file>.tmp.<8 lowercase hex>`, created exclusively, removed on any failure.
//!   One left by a killed writer is removed by the next locked write of the same file once it
//!   is older than [`STALE_TEMP`] (only that exact name pattern, only regular files).

pub mod dir;
pub mod format;
pub mod id;
pub mod lazy;
pub(crate) mod light;
pub mod lock;
pub mod moving;
pub mod object_file;
pub mod paths;
pub mod snapshot;

use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::error::Error;
use dir::{Dir, Info, Kind, Loc};
use light::LightEntry;
use lock::LockOptions;

pub use format::Entry;

/// A temp file of teamctl's own naming older than this belongs to a writer that died: the next
/// locked write of the same file removes it.
pub const STALE_TEMP: Duration = Duration::from_secs(60);

/// Test-only fault injection for the locked write path, so crash and fault tests can stop a
/// write at an exact point. All zero/`false` (the default) means no effect. The library never
/// reads the environment: the CLI fills this from `TEAMCTL_TEST_FAULTS` and calls
/// [`set_faults`]. Never set it in production.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Sleep this long before trying for the lock (a kill then hits "before the lock").
    pub before_lock: Duration,
    /// Sleep this long right after the lock is taken (a kill then hits "holding the lock").
    pub after_lock: Duration,
    /// Sleep this long after finding the lock stale, before acting on that (a writer
    /// descheduled there, where another can reclaim the lock first).
    pub before_reclaim: Duration,
    /// Sleep this long after the temp file is written and synced, before the rename.
    pub before_rename: Duration,
    /// Sleep this long after the rename, before the read-back (a foreign writer can strike).
    pub before_verify: Duration,
    /// Fail the temp file's write with `ENOSPC`, as a full file system does.
    pub fail_write: bool,
    /// Sleep this long in a move ([`moving`]) after the target is written, before the source
    /// is (a kill then leaves the message in both inboxes).
    pub between_moves: Duration,
}

static FAULTS: Mutex<Faults> = Mutex::new(Faults {
    before_lock: Duration::ZERO,
    after_lock: Duration::ZERO,
    before_reclaim: Duration::ZERO,
    before_rename: Duration::ZERO,
    before_verify: Duration::ZERO,
    fail_write: false,
    between_moves: Duration::ZERO,
});

/// Installs `faults` for this process (test-only; see [`Faults`]).
pub fn set_faults(faults: Faults) {
    *FAULTS.lock().unwrap_or_else(|e| e.into_inner()) = faults;
}

fn faults() -> Faults {
    *FAULTS.lock().unwrap_or_else(|e| e.into_inner())
}

fn pause(d: Duration) {
    if !d.is_zero() {
        thread::sleep(d);
    }
}

/// Whether `name` is a temp file name teamctl (and Claude Code 2.1.332) gives a temp copy of
/// `target_name`: `<target_name>.tmp.<8 lowercase hex>`.
pub fn is_own_temp_name(name: &str, target_name: &str) -> bool {
    name.strip_prefix(target_name)
        .and_then(|rest| rest.strip_prefix(".tmp."))
        .is_some_and(|hex| {
            hex.len() == 8
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

/// Removes the temp files of `name` in `dir` ([`is_own_temp_name`]) that are regular files
/// older than [`STALE_TEMP`]; called with its lock held, so no live teamctl or Claude Code
/// writer of the file can own one. Best effort: a file that cannot be removed is left for the
/// next writer.
fn remove_stale_temps(dir: &Dir, name: &str) {
    let now = SystemTime::now();
    let Ok(names) = dir.names() else { return };
    for n in names {
        let Some(n) = n.to_str().filter(|n| is_own_temp_name(n, name)) else {
            continue;
        };
        let stale = dir.stat(n).ok().flatten().is_some_and(|i| {
            i.kind == Kind::File
                && now
                    .duration_since(i.mtime)
                    .is_ok_and(|age| age > STALE_TEMP)
        });
        if stale {
            let _ = dir.unlink(n);
        }
    }
}

/// The last name of `loc` as UTF-8 (every name teamctl builds is).
fn leaf(loc: &Loc) -> Result<&str> {
    loc.name()
        .and_then(|n| n.to_str())
        .with_context(|| format!("{} is not a file name teamctl uses", loc.display()))
}

/// Parses an inbox: a JSON array of objects.
///
/// # Errors
/// When the bytes are not JSON, the top level is not an array, or an element is not an object.
pub fn parse_inbox(bytes: &[u8], path: &Path) -> Result<Vec<Entry>> {
    let value: Value = serde_json::from_slice(bytes)
        .with_context(|| format!("{} is not valid JSON (left unchanged)", path.display()))?;
    let Value::Array(items) = value else {
        bail!("{} is not a JSON array (left unchanged)", path.display());
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Object(m) => Ok(m),
            _ => bail!(
                "entry {i} of {} is not a JSON object (left unchanged)",
                path.display()
            ),
        })
        .collect()
}

pub use format::render;

/// Reads an inbox without locking, as Claude Code's readers do ([`read_unlocked`]), for
/// showing it. `Ok(None)` when the file does not exist. An escaped lone surrogate (`\ud800`,
/// which JavaScript reads and writes but no Rust string holds) reads as U+FFFD; the write
/// paths never do this, so they refuse such an entry rather than change it.
///
/// # Errors
/// I/O errors, or a file that still does not parse after the retries.
pub fn read_inbox(path: &Loc) -> Result<Option<Vec<Entry>>> {
    read_unlocked(path, |bytes| {
        parse_inbox(bytes, path).or_else(|e| match format::replace_lone_surrogates(bytes) {
            Some(lossy) => parse_inbox(&lossy, path),
            None => Err(e),
        })
    })
}

/// [`read_inbox`], handing each entry to `each` as it is parsed instead of keeping them all:
/// only what `each` returns (`None`: nothing) is kept. The file is parsed straight from disk
/// first, so reading a large inbox needs about what `each` keeps, not the file's bytes and a
/// parsed copy of every entry besides; a file that does not parse that way (torn by an in-place
/// writer, an escaped lone surrogate, corrupt) is then read as [`read_inbox`] reads it. `each`
/// gets the entry's index, and may run again from the first entry.
///
/// # Errors
/// As [`read_inbox`].
pub fn read_inbox_each<T>(
    path: &Loc,
    each: impl Fn(usize, Entry) -> Option<T>,
) -> Result<Option<Vec<T>>> {
    let collect = |de: &mut Source| {
        let mut out = Vec::new();
        de(&mut |i, e| {
            if let Some(t) = each(i, e) {
                out.push(t);
            }
        })?;
        Ok(out)
    };
    let Some(file) = path
        .open_file()
        .with_context(|| format!("could not read {}", path.display()))?
    else {
        return Ok(None);
    };
    let streamed = collect(&mut |f| {
        let reader = io::BufReader::with_capacity(256 * 1024, file.try_clone()?);
        let mut de = serde_json::Deserializer::from_reader(reader);
        each_entry(&mut de, f)?;
        de.end()?;
        Ok(())
    });
    if let Ok(out) = streamed {
        return Ok(Some(out));
    }
    drop(file);
    let parse = |bytes: &[u8]| collect(&mut |f| parse_inbox_each(bytes, path, &mut *f));
    read_unlocked(path, |bytes| {
        parse(bytes).or_else(|e| match format::replace_lone_surrogates(bytes) {
            Some(lossy) => parse(&lossy),
            None => Err(e),
        })
    })
}

/// Something that parses an inbox, handing each entry to the function it is given.
type Source<'a> = dyn FnMut(&mut dyn FnMut(usize, Entry)) -> Result<()> + 'a;

/// Deserializes a JSON array of objects from `de`, handing each object to `each`.
fn each_entry<'de, D: serde::Deserializer<'de>>(
    de: D,
    each: &mut dyn FnMut(usize, Entry),
) -> Result<(), D::Error> {
    use serde::de::{SeqAccess, Visitor};
    struct Each<'a>(&'a mut dyn FnMut(usize, Entry));
    impl<'de> Visitor<'de> for Each<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON array of objects")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut i = 0;
            while let Some(e) = seq.next_element::<Entry>()? {
                (self.0)(i, e);
                i += 1;
            }
            Ok(())
        }
    }
    de.deserialize_seq(Each(each))
}

/// Parses an inbox as [`parse_inbox`] does, handing each entry to `each` in file order.
///
/// # Errors
/// As [`parse_inbox`] (entries before the bad one have been handed over already).
pub fn parse_inbox_each(
    bytes: &[u8],
    path: &Path,
    mut each: impl FnMut(usize, Entry),
) -> Result<()> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    if each_entry(&mut de, &mut each)
        .and_then(|()| de.end())
        .is_ok()
    {
        return Ok(());
    }
    // The exact reason (and the wording every caller knows) from the whole-file parser.
    parse_inbox(bytes, path)?;
    bail!(
        "{} is not a JSON array of objects (left unchanged)",
        path.display()
    )
}

/// Reads `path` without a lock and parses it with `parse`. `Ok(None)` when it does not exist.
///
/// Writers that rewrite a file in place (old Claude Code's inboxes, new Claude Code's
/// `config.json`) leave it torn for a few milliseconds, so a parse failure is retried with
/// backoff (10, 20, 40, 80, then 100 ms). The file is reported only once the same unparseable
/// bytes with the same mtime have been read [`TORN_RETRIES`] times in a row, about 150 ms: a
/// file that keeps changing is being written, not corrupt, and is retried for up to
/// [`TORN_DEADLINE`]. Two shapes that only an in-place writer caught between its two steps
/// leaves are retried for the whole deadline too, since on a loaded machine that gap outlasts
/// the 150 ms: an empty file (`writeFile`: truncate, then write; no Claude Code writes an empty
/// file, an empty inbox is `[]`; seen with 2.1.112 rewriting `config.json` under a load of 8 on
/// 2 cores), and a whole JSON document followed by more bytes (2.1.312 and later write a locked
/// config update through `open(r+)` and truncate after it, so a shorter document stands on the
/// old one's tail until then; seen with 2.1.332 under a load of 14 on 2 cores).
///
/// # Errors
/// I/O errors, or the parse error once the file is stably unparseable or the deadline passed.
pub fn read_unlocked<T>(path: &Loc, parse: impl Fn(&[u8]) -> Result<T>) -> Result<Option<T>> {
    let start = std::time::Instant::now();
    let mut attempt = 0u32;
    let mut stable = 0;
    let mut last_failed: Option<(Option<SystemTime>, Vec<u8>)> = None;
    loop {
        let context = || format!("could not read {}", path.display());
        let Some(mut f) = path.open_file().with_context(context)? else {
            return Ok(None);
        };
        let mtime = f.metadata().and_then(|m| m.modified()).ok();
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut f, &mut bytes).with_context(context)?;
        match parse(&bytes) {
            Ok(value) => return Ok(Some(value)),
            Err(e) => {
                let seen = (mtime, bytes);
                stable = if last_failed.as_ref() == Some(&seen) {
                    stable + 1
                } else {
                    0
                };
                let mid_write = seen.1.is_empty() || has_trailing_bytes(&seen.1);
                if (stable >= TORN_RETRIES && !mid_write) || start.elapsed() >= TORN_DEADLINE {
                    return Err(e);
                }
                last_failed = Some(seen);
            }
        }
        thread::sleep(Duration::from_millis((10u64 << attempt.min(4)).min(100)));
        attempt += 1;
    }
}

/// Whether `bytes` hold one whole JSON document followed by more than whitespace: what an
/// in-place writer that truncates last leaves between its write and its truncate.
fn has_trailing_bytes(bytes: &[u8]) -> bool {
    let mut values =
        serde_json::Deserializer::from_slice(bytes).into_iter::<serde::de::IgnoredAny>();
    matches!(values.next(), Some(Ok(_))) && values.byte_offset() < bytes.trim_ascii_end().len()
}

/// How many times in a row [`read_unlocked`] must read the same unparseable file before it
/// reports it.
pub const TORN_RETRIES: u32 = 4;

/// The longest [`read_unlocked`] retries a file that keeps changing but never parses.
pub const TORN_DEADLINE: Duration = Duration::from_secs(2);

/// Replaces `path` atomically: writes `<path>.tmp.<8 hex>` (create-new), fsyncs it, renames it
/// over `path` and fsyncs the folder, all through one handle on the folder ([`dir`]). The temp
/// file is removed on any failure.
///
/// Modes: when `path` is a regular file, the new one gets its permission bits before any byte is
/// written (a `chmod 600` inbox stays private), and its owner and group where the process may
/// set them (`EPERM` is not an error: only root gives files away). Otherwise the new file is
/// created 0666 & ~umask, as Claude Code creates it. Anything but a regular file at `path` (a
/// symlink, a FIFO, a folder) is refused and left as it is.
///
/// # Errors
/// Any I/O error, with the path that failed.
pub fn atomic_write(path: &Loc, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent_dir()
        .with_context(|| format!("could not write {}", path.display()))?;
    write_in(&dir, leaf(path)?, &[bytes], 0o666)
}

/// [`atomic_write`] of `name` in the open folder `dir` (for a caller that already holds a
/// handle on the folder, such as under a lock taken with [`lock::acquire_in`]).
///
/// # Errors
/// Any I/O error, with the path that failed.
pub fn atomic_write_in(dir: &Dir, name: &str, bytes: &[u8]) -> Result<()> {
    write_in(dir, name, &[bytes], 0o666)
}

/// [`atomic_write`], creating a new file with `mode` (& ~umask) instead of 0666 (teamctl's own
/// private files).
///
/// # Errors
/// Any I/O error, with the path that failed.
pub fn atomic_write_mode(path: &Loc, bytes: &[u8], mode: u32) -> Result<()> {
    let dir = path
        .parent_dir()
        .with_context(|| format!("could not write {}", path.display()))?;
    write_in(&dir, leaf(path)?, &[bytes], mode)
}

/// [`atomic_write`] of the concatenation of `parts` into `name` in `dir`; a new file gets
/// `new_mode` & ~umask.
fn write_in(dir: &Dir, name: &str, parts: &[&[u8]], new_mode: u32) -> Result<()> {
    write_in_if(dir, name, parts, new_mode, || Ok(true)).map(|_| ())
}

/// `write_in`, asking `go` once the temp file is written and synced, right before the
/// rename: `Ok(false)` from it removes the temp file and writes nothing (`Ok(false)` returned).
/// What `go` checks (that the file is still as it was read) then holds for as short a time as
/// the process can make it: no write or fsync comes between the check and the rename.
///
/// # Errors
/// Any I/O error, with the path that failed, or `go`'s error (nothing is written).
pub fn write_in_if(
    dir: &Dir,
    name: &str,
    parts: &[&[u8]],
    new_mode: u32,
    go: impl FnOnce() -> Result<bool>,
) -> Result<bool> {
    let path = dir.path().join(name);
    let tmp = format!("{name}.tmp.{}", id::temp_suffix());
    let tmp_path = dir.path().join(&tmp);
    let old = dir
        .expect_file(name)
        .with_context(|| format!("could not write {}", path.display()))?;
    let result = (|| -> Result<bool> {
        // Never wider than the old file, not even until the chmod below.
        let mode = old.map_or(new_mode, |o| o.mode & 0o777);
        let mut f = dir
            .create_new(&tmp, mode)
            .with_context(|| format!("could not create {}", tmp_path.display()))?;
        if let Some(old) = &old {
            keep_owner_and_mode(&f, old)
                .with_context(|| format!("could not set the mode of {}", tmp_path.display()))?;
        }
        let faults = faults();
        for part in parts {
            if faults.fail_write {
                // ENOSPC, what a full file system reports (test seam, see `Faults`).
                Err(io::Error::from_raw_os_error(28))
                    .with_context(|| format!("could not write {}", tmp_path.display()))?;
            }
            f.write_all(part)
                .with_context(|| format!("could not write {}", tmp_path.display()))?;
        }
        f.sync_all()
            .with_context(|| format!("could not sync {}", tmp_path.display()))?;
        pause(faults.before_rename);
        if !go()? {
            return Ok(false);
        }
        dir.rename(&tmp, name)?;
        Ok(true)
    })();
    if !matches!(result, Ok(true)) {
        let _ = dir.unlink(&tmp);
        return result;
    }
    // The rename is durable only once the folder entry is on disk.
    dir.sync()
        .with_context(|| format!("could not sync {}", dir.path().display()))?;
    Ok(true)
}

/// Gives `f` the owner, group and permission bits of `old`, as far as the process may.
fn keep_owner_and_mode(f: &File, old: &Info) -> io::Result<()> {
    const EPERM: i32 = 1;
    // Owner first: a chown may clear set-id bits, which the chmod then restores.
    let new = f.metadata()?;
    if (old.uid, old.gid) != (new.uid(), new.gid()) {
        let kept = std::os::unix::fs::fchown(f, Some(old.uid), Some(old.gid)).or_else(|e| {
            match e.raw_os_error() {
                // Not root: at least the group, when the process is in it.
                Some(EPERM) => std::os::unix::fs::fchown(f, None, Some(old.gid)),
                _ => Err(e),
            }
        });
        if let Err(e) = kept
            && e.raw_os_error() != Some(EPERM)
        {
            return Err(e);
        }
    }
    f.set_permissions(Permissions::from_mode(old.mode & 0o7777))
}

/// Creates the inbox (and its folder) as `[]` if it is missing, as Claude Code does before it
/// locks. An existing file is never touched, and no reader ever sees a half-made one: `[]` is
/// written to a temp file that is then hard-linked to the inbox's name (which fails if the
/// name exists), so a writer killed halfway leaves no empty inbox behind.
///
/// # Errors
/// I/O errors other than the file already existing; anything but a regular file at `path` or
/// a folder on the way that is a symlink (nothing is written then).
pub fn ensure_inbox(path: &Loc) -> Result<()> {
    ensure_inbox_in(path).map(|_| ())
}

/// [`ensure_inbox`], returning the handle on the inbox's folder for the locked write after it.
fn ensure_inbox_in(path: &Loc) -> Result<Dir> {
    let context = || format!("could not write {}", path.display());
    let dir = path.create_parent_dir().with_context(context)?;
    let name = leaf(path)?;
    if dir.expect_file(name).with_context(context)?.is_some() {
        return Ok(dir);
    }
    let tmp = format!("{name}.tmp.{}", id::temp_suffix());
    let linked = (|| -> io::Result<bool> {
        let mut f = dir.create_new(&tmp, 0o666)?;
        f.write_all(b"[]")?;
        match dir.hard_link(&tmp, name) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(true),
            // A file system without hard links: fall back to create-new below.
            Err(_) => Ok(false),
        }
    })();
    let _ = dir.unlink(&tmp);
    match linked {
        Ok(true) => return Ok(dir),
        Ok(false) => {}
        Err(e) => return Err(e).with_context(context),
    }
    match dir.create_new(name, 0o666) {
        Ok(mut f) => f
            .write_all(b"[]")
            .with_context(|| format!("could not write {}", path.display()))?,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e).with_context(context),
    }
    Ok(dir)
}

/// Checks, without writing anything, that a file could be made or replaced at `path`: every
/// folder on the way that exists is a folder (not a symlink, not a FIFO), and what is at
/// `path`, if anything, is a regular file. For a caller that writes elsewhere first.
///
/// # Errors
/// An error naming what is in the way.
pub fn check_file_place(path: &Loc) -> Result<()> {
    let context = || format!("could not write {}", path.display());
    match path.parent_dir() {
        Ok(dir) => {
            dir.expect_file(leaf(path)?).with_context(context)?;
            Ok(())
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(context),
    }
}

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
            // Only read under it: a lock lost meanwhile changes nothing.
            guard.release_if_ours()?;
            return Ok(if written {
                Appended::Written
            } else {
                Appended::AlreadyPresent(existing)
            });
        }
        match append_once(&dir, name, path, &bytes, entry, guard)? {
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

/// Writes `entry` after `bytes` (the inbox as read under `guard`), reads it back and releases
/// the lock.
fn append_once(
    dir: &Dir,
    name: &str,
    path: &Path,
    bytes: &[u8],
    entry: &Entry,
    guard: lock::LockGuard,
) -> Result<Attempt> {
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
        guard.release_if_ours()?;
        return Ok(Attempt::NotWritten);
    }
    pause(faults().before_verify);
    let back = verify_written(dir, name, &parts);
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
fn read_locked(dir: &Dir, name: &str, path: &Path) -> Result<Vec<u8>> {
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

/// Parses a JSON object (a task file, `config.json`).
///
/// # Errors
/// When the bytes are not JSON or not an object.
pub fn parse_object(bytes: &[u8], path: &Path) -> Result<Entry> {
    match serde_json::from_slice(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => bail!("{} is not a JSON object (left unchanged)", path.display()),
        Err(e) => {
            Err(e).with_context(|| format!("{} is not valid JSON (left unchanged)", path.display()))
        }
    }
}

/// Reads `name` back (still under the lock) and checks it holds exactly the concatenation of
/// `written`, comparing chunk by chunk so a large inbox is not read into memory twice.
pub(crate) fn verify_written(dir: &Dir, name: &str, written: &[&[u8]]) -> Result<()> {
    let path = dir.path().join(name);
    let context = || format!("could not read back {}", path.display());
    let mut f = dir
        .open_file(name)
        .with_context(context)?
        .with_context(|| format!("could not read back {}: it disappeared", path.display()))?;
    let mut want = written.iter().flat_map(|p| p.iter().copied());
    let mut buf = vec![0u8; 64 * 1024];
    let same = loop {
        let n = io::Read::read(&mut f, &mut buf).with_context(context)?;
        if n == 0 {
            break want.next().is_none();
        }
        if !buf[..n].iter().all(|b| want.next() == Some(*b)) {
            break false;
        }
    };
    if same {
        return Ok(());
    }
    let back = dir.read(name).with_context(context)?.unwrap_or_default();
    let reason = match serde_json::from_slice::<Value>(&back) {
        Err(_) => "the file no longer parses".to_string(),
        Ok(Value::Array(entries)) => format!(
            "the file differs from what was written ({} entries found); another program wrote \
             it without taking the lock",
            entries.len()
        ),
        Ok(_) => "the file differs from what was written; another program wrote it without \
                  taking the lock"
            .to_string(),
    };
    Err(verify_error(&path, &reason))
}

fn verify_error(path: &Path, reason: &str) -> anyhow::Error {
    Error::VerifyFailed {
        path: PathBuf::from(path),
        reason: reason.to_string(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn entry(json: &str) -> Entry {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn render_matches_json_stringify() {
        let e: Vec<Entry> = parse_inbox(
            br#"[{"from":"a","text":"x\u0001\"/\\\u2028 \u00e9 \ud83d\ude00","n":1e+21,"big":12345678901234567890,"f":-0.5,"o":{},"l":[]}]"#,
            Path::new("t"),
        )
        .unwrap();
        // The bytes JSON.stringify(JSON.parse(...), null, 2) gives; numbers keep their text, even
        // where JSON.stringify would round (a file Claude Code wrote never holds such numbers).
        let want = "[\n  {\n    \"from\": \"a\",\n    \"text\": \"x\\u0001\\\"/\\\\\u{2028} é 😀\",\n    \"n\": 1e+21,\n    \"big\": 12345678901234567890,\n    \"f\": -0.5,\n    \"o\": {},\n    \"l\": []\n  }\n]";
        assert_eq!(render(&e), want);
        assert_eq!(render(&Vec::<Entry>::new()), "[]");
    }

    #[test]
    fn parse_refuses_wrong_shapes() {
        for bad in [&b"{}"[..], b"[1]", b"[{}", b"", b"null"] {
            assert!(
                parse_inbox(bad, Path::new("t")).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(parse_inbox(b"[]", Path::new("t")).unwrap().len(), 0);
    }

    #[test]
    fn append_writes_and_verifies() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("inboxes").join("a.json");
        let e = entry(r#"{"from":"u","text":"hi","timestamp":"t","msg_id":"m1"}"#);
        assert_eq!(
            append(&p, &e, true, &LockOptions::default()).unwrap(),
            Appended::Written
        );
        assert_eq!(
            append(&p, &e, true, &LockOptions::default()).unwrap(),
            Appended::AlreadyPresent(e.clone())
        );
        let back = read_inbox(&p).unwrap().unwrap();
        assert_eq!(back, vec![e]);
        assert!(!lock::lock_dir(&p).exists());
        let names: Vec<_> = fs::read_dir(tmp.path().join("inboxes")).unwrap().collect();
        assert_eq!(names.len(), 1, "no temp file left behind");
    }

    #[test]
    fn verification_fails_on_a_tampered_file() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        let written = render(&vec![entry(r#"{"from":"u","text":"hi"}"#)]);
        fs::write(&p, render(&vec![entry(r#"{"from":"x","text":"other"}"#)])).unwrap();
        let dir = p.parent_dir().unwrap();
        let err = verify_written(&dir, "a.json", &[written.as_bytes()]).unwrap_err();
        assert!(matches!(
            err.downcast_ref::<Error>(),
            Some(Error::VerifyFailed { .. })
        ));
        fs::write(&p, "[{").unwrap();
        assert!(verify_written(&dir, "a.json", &[written.as_bytes()]).is_err());
        fs::write(&p, &written).unwrap();
        verify_written(&dir, "a.json", &[written.as_bytes()]).unwrap();
    }

    #[test]
    fn read_each_streams_and_falls_back_like_read_inbox() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        let texts =
            |p: &Loc| read_inbox_each(p, |i, e| Some((i, e["text"].as_str().unwrap().to_string())));
        assert_eq!(texts(&p).unwrap(), None);
        fs::write(&p, r#"[{"text":"a"},{"text":"b"}]"#).unwrap();
        assert_eq!(
            texts(&p).unwrap().unwrap(),
            [(0, "a".to_string()), (1, "b".to_string())]
        );
        // A lone surrogate stops the streaming parse; read as read_inbox reads it.
        fs::write(&p, r#"[{"text":"a"},{"text":"x\ud800"}]"#).unwrap();
        assert_eq!(
            texts(&p).unwrap().unwrap(),
            [(0, "a".to_string()), (1, "x\u{fffd}".to_string())]
        );
        fs::write(&p, r#"[{"text":"a"},1]"#).unwrap();
        let err = texts(&p).unwrap_err();
        assert!(format!("{err:#}").contains("entry 1 of"), "{err:#}");
    }

    #[test]
    fn a_stably_corrupt_file_is_reported_after_the_retries() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        fs::write(&p, b"[{").unwrap();
        let start = std::time::Instant::now();
        assert!(read_inbox(&p).is_err());
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(150) && took < TORN_DEADLINE,
            "{took:?}"
        );
    }

    /// A file left empty between an in-place writer's truncate and its write, for longer than
    /// the stable-retry window, is waited for rather than reported.
    #[test]
    fn an_empty_file_is_waited_for_until_the_writer_fills_it() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        fs::write(&p, b"").unwrap();
        let writer = {
            let p = p.clone();
            // A slow writer: the second half of writeFile comes 400 ms after the truncate.
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(400));
                fs::write(&p, b"[]").unwrap();
            })
        };
        assert_eq!(read_inbox(&p).unwrap(), Some(Vec::new()));
        writer.join().unwrap();
        // Still empty at the deadline: reported.
        fs::write(&p, b"").unwrap();
        assert!(read_inbox(&p).is_err());
    }

    #[test]
    fn own_temp_names() {
        assert!(is_own_temp_name("a.json.tmp.0a1b2c3d", "a.json"));
        for other in [
            "a.json.tmp.0A1B2C3D",
            "a.json.tmp.0a1b2c3",
            "a.json.tmp.0a1b2c3d9",
            "a.json.tmp.12.0a1b2c3d",
            "b.json.tmp.0a1b2c3d",
            "a.json",
            "a.json.lock",
        ] {
            assert!(!is_own_temp_name(other, "a.json"), "{other}");
        }
    }

    #[test]
    fn ensure_inbox_creates_once_and_leaves_no_temp() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("inboxes").join("a.json");
        ensure_inbox(&p).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"[]");
        fs::write(&p, b"[{}]").unwrap();
        ensure_inbox(&p).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"[{}]");
        assert_eq!(fs::read_dir(tmp.path().join("inboxes")).unwrap().count(), 1);
    }

    #[test]
    fn dedupe_works_with_duplicate_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        fs::write(
            &p,
            r#"[{"from":"a","from":"b","text":"t","timestamp":"x","msg_id":"m1"}]"#,
        )
        .unwrap();
        let e = entry(r#"{"from":"u","text":"hi","timestamp":"t","msg_id":"m1"}"#);
        let got = append(&p, &e, true, &LockOptions::default()).unwrap();
        assert!(matches!(got, Appended::AlreadyPresent(_)));
    }

    #[test]
    fn corrupt_inbox_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        fs::write(&p, b"{\"not\": \"an array\"}").unwrap();
        let e = entry(r#"{"from":"u","text":"hi"}"#);
        assert!(append(&p, &e, false, &LockOptions::default()).is_err());
        assert_eq!(fs::read(&p).unwrap(), b"{\"not\": \"an array\"}");
        assert!(!lock::lock_dir(&p).exists(), "lock released on error");
    }

    #[test]
    fn a_document_on_an_older_tail_is_mid_write() {
        assert!(has_trailing_bytes(b"{\"a\": 1}\n  \"b\": 2\n}"));
        assert!(has_trailing_bytes(b"[]]"));
        assert!(!has_trailing_bytes(b"{\"a\": 1}\n"));
        assert!(!has_trailing_bytes(b"{\"a\": "));
        assert!(!has_trailing_bytes(b""));
        assert!(!has_trailing_bytes(b"nonsense"));
    }
}
