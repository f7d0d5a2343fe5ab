//! Writing a file in place: the atomic replace through a temp file of teamctl's naming, the
//! permission bits kept, a new inbox made as Claude Code makes one, the read-back that checks
//! what was written, and the faults tests inject.

use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};
use serde_json::Value;

use super::dir::{Dir, Info, Kind, Loc};
use super::faults::{faults, pause};
use super::id;
use crate::error::Error;

/// A temp file of teamctl's own naming older than this belongs to a writer that died: the next
/// locked write of the same file removes it.
pub const STALE_TEMP: Duration = Duration::from_secs(60);

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
pub(super) fn remove_stale_temps(dir: &Dir, name: &str) {
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
pub(super) fn leaf(loc: &Loc) -> Result<&str> {
    loc.name()
        .and_then(|n| n.to_str())
        .with_context(|| format!("{} is not a file name teamctl uses", loc.display()))
}

/// Replaces `path` atomically: writes `<path>.tmp.<8 hex>` (create-new), fsyncs it, renames it
/// over `path` and fsyncs the folder, all through one handle on the folder ([`super::dir`]). The temp
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
/// handle on the folder, such as under a lock taken with [`super::lock::acquire_in`]).
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
pub(super) fn write_in(dir: &Dir, name: &str, parts: &[&[u8]], new_mode: u32) -> Result<()> {
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
    write_in_if_with(dir, name, new_mode, &mut |w| write_parts(w, parts), go)
}

/// [`write_in_if`] of what `fill` writes (a large file rendered straight into its temp file,
/// never held whole).
///
/// # Errors
/// As [`write_in_if`], and `fill`'s (nothing is written).
pub fn write_in_if_with(
    dir: &Dir,
    name: &str,
    new_mode: u32,
    fill: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
    go: impl FnOnce() -> Result<bool>,
) -> Result<bool> {
    let tmp = format!("{name}.tmp.{}", id::temp_suffix());
    let result = (|| -> Result<bool> {
        write_temp_with(dir, name, &tmp, new_mode, fill)?;
        pause(faults().before_rename);
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
    sync_folder(dir)?;
    Ok(true)
}

/// The name a move ([`super::moving`]) gives the target's new copy before it replaces the
/// target: `<name>.moving.<8 lowercase hex>`. Never swept as a stale temp file: while it
/// exists, the journal entry that names it is a move that did not happen.
pub fn moving_temp_name(name: &str) -> String {
    format!("{name}.moving.{}", id::temp_suffix())
}

/// Whether `n` is a name [`moving_temp_name`] gives a copy of `name`.
pub fn is_moving_temp_name(n: &str, name: &str) -> bool {
    n.strip_prefix(name)
        .and_then(|rest| rest.strip_prefix(".moving."))
        .is_some_and(|hex| {
            hex.len() == 8
                && hex
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

/// [`write_in`] for a move, of what `fill` writes: the new copy is written and synced under `tmp` (a
/// [`moving_temp_name`] the caller chose), then `journal` is told that name, then the copy
/// replaces `name`. The
/// copy is removed when writing it or `journal` fails (nothing happened); once `journal` has
/// recorded it, it is left in place when the rename fails, since its presence is what says the
/// move did not happen. So a journal entry names a move that happened exactly when the copy
/// it names is gone.
///
/// # Errors
/// Any I/O error, with the path that failed, or `journal`'s error (nothing is written).
pub(super) fn write_journaled(
    dir: &Dir,
    name: &str,
    tmp: &str,
    fill: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
    journal: impl FnOnce(&str) -> Result<()>,
) -> Result<()> {
    let recorded = write_temp_with(dir, name, tmp, 0o666, fill).and_then(|()| journal(tmp));
    if let Err(e) = recorded {
        let _ = dir.unlink(tmp);
        return Err(e);
    }
    pause(faults().before_rename);
    dir.rename(tmp, name)?;
    sync_folder(dir)
}

/// A target's new copy written ahead of its move, before the move takes its locks, under an
/// ordinary temp name (`<name>.tmp.<8 hex>`: swept as every stale temp file is if the move
/// never comes back to it); [`journal_early`] makes it the move's copy. Returns its name.
///
/// # Errors
/// I/O errors, `fill`'s (nothing is left).
pub(super) fn write_early(
    dir: &Dir,
    name: &str,
    fill: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
) -> Result<String> {
    let tmp = format!("{name}.tmp.{}", id::temp_suffix());
    if let Err(e) = write_temp_with(dir, name, &tmp, 0o666, fill) {
        let _ = dir.unlink(&tmp);
        return Err(e);
    }
    Ok(tmp)
}

/// [`write_journaled`] of a copy written ahead ([`write_early`]'s `early`): renamed to `copy`
/// (a [`moving_temp_name`]) and the folder synced, so the name is on disk before the journal
/// names it; then `journal` is told `copy`; then the copy replaces `name`.
///
/// # Errors
/// As [`write_journaled`].
pub(super) fn journal_early(
    dir: &Dir,
    name: &str,
    early: &str,
    copy: &str,
    journal: impl FnOnce(&str) -> Result<()>,
) -> Result<()> {
    let named = match dir.rename(early, copy) {
        Ok(()) => sync_folder(dir).and_then(|()| journal(copy)),
        Err(e) => Err(e.into()),
    };
    if let Err(e) = named {
        let _ = dir.unlink(copy);
        let _ = dir.unlink(early);
        return Err(e);
    }
    pause(faults().before_rename);
    dir.rename(copy, name)?;
    sync_folder(dir)
}

/// Each of `parts` written to `w`.
fn write_parts(w: &mut dyn Write, parts: &[&[u8]]) -> Result<()> {
    for part in parts {
        w.write_all(part)?;
    }
    Ok(())
}

/// Writes what `fill` writes to the new file `tmp` in `dir`, with the mode (owner, group) of
/// `name`'s file when it has one, else `new_mode` & ~umask, and syncs it.
fn write_temp_with(
    dir: &Dir,
    name: &str,
    tmp: &str,
    new_mode: u32,
    fill: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let path = dir.path().join(name);
    let tmp_path = dir.path().join(tmp);
    let old = dir
        .expect_file(name)
        .with_context(|| format!("could not write {}", path.display()))?;
    // Never wider than the old file, not even until the chmod below.
    let mode = old.map_or(new_mode, |o| o.mode & 0o777);
    let f = dir
        .create_new(tmp, mode)
        .with_context(|| format!("could not create {}", tmp_path.display()))?;
    if let Some(old) = &old {
        keep_owner_and_mode(&f, old)
            .with_context(|| format!("could not set the mode of {}", tmp_path.display()))?;
    }
    // Buffered: a move writes an inbox as many small pieces (each entry and its separator).
    let mut f = io::BufWriter::with_capacity(256 * 1024, f);
    let filled = if faults().fail_write {
        // ENOSPC, what a full file system reports (test seam, see `Faults`).
        Err(io::Error::from_raw_os_error(28).into())
    } else {
        fill(&mut f)
    };
    filled.with_context(|| format!("could not write {}", tmp_path.display()))?;
    let f = f
        .into_inner()
        .map_err(io::IntoInnerError::into_error)
        .with_context(|| format!("could not write {}", tmp_path.display()))?;
    f.sync_all()
        .with_context(|| format!("could not sync {}", tmp_path.display()))
}

/// The rename is durable only once the folder entry is on disk.
fn sync_folder(dir: &Dir) -> Result<()> {
    dir.sync()
        .with_context(|| format!("could not sync {}", dir.path().display()))
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
pub(super) fn ensure_inbox_in(path: &Loc) -> Result<Dir> {
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

/// Reads `name` back (still under the lock) and checks it holds exactly the concatenation of
/// `written`, comparing chunk by chunk so a large inbox is not read into memory twice.
pub(crate) fn verify_written(dir: &Dir, name: &str, written: &[&[u8]]) -> Result<()> {
    let path = dir.path().join(name);
    let context = || format!("could not read back {}", path.display());
    if holds(dir, name, written).with_context(context)? {
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

/// [`verify_written`] of what `fill` writes (written again, compared as it comes: a large file
/// is never held whole).
///
/// # Errors
/// As [`verify_written`], and `fill`'s.
pub(crate) fn verify_written_with(
    dir: &Dir,
    name: &str,
    fill: &mut dyn FnMut(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let path = dir.path().join(name);
    let context = || format!("could not read back {}", path.display());
    let f = dir
        .open_file(name)
        .with_context(context)?
        .with_context(|| format!("could not read back {}: it disappeared", path.display()))?;
    let mut cmp = Comparing {
        file: io::BufReader::with_capacity(256 * 1024, f),
        same: true,
        got: Vec::new(),
    };
    {
        let mut w = io::BufWriter::with_capacity(256 * 1024, &mut cmp);
        fill(&mut w)?;
        w.flush().with_context(context)?;
    }
    let mut rest = [0u8; 1];
    let ended = io::Read::read(&mut cmp.file, &mut rest).with_context(context)? == 0;
    if cmp.same && ended {
        return Ok(());
    }
    Err(verify_error(
        &path,
        "the file differs from what was written; another program wrote it without taking the \
         lock",
    ))
}

/// A writer that compares what it is given with a file's next bytes (`same` turns `false` at
/// the first difference, or a file that ends first).
struct Comparing<R> {
    file: R,
    same: bool,
    got: Vec<u8>,
}

impl<R: io::Read> Write for Comparing<R> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.same {
            self.got.resize(buf.len(), 0);
            match self.file.read_exact(&mut self.got) {
                Ok(()) => self.same = self.got == buf,
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => self.same = false,
                Err(e) => return Err(e),
            }
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Whether `name` in `dir` holds exactly the concatenation of `written`, read in pieces and
/// compared chunk by chunk (a large file is not read into memory).
///
/// # Errors
/// I/O errors; a file that is gone.
pub(crate) fn holds(dir: &Dir, name: &str, written: &[&[u8]]) -> Result<bool> {
    let mut f = dir.open_file(name)?.context("it disappeared")?;
    let total: usize = written.iter().map(|p| p.len()).sum();
    if f.metadata().is_ok_and(|m| m.len() != total as u64) {
        return Ok(false);
    }
    // Read in pieces no bigger than what was written (and a byte more: a longer file shows),
    // each compared slice by slice with what is still wanted.
    let mut buf = vec![0u8; (total + 1).min(256 * 1024)];
    let mut parts = written.iter().copied();
    let mut want: &[u8] = &[];
    let same = 'read: loop {
        let n = io::Read::read(&mut f, &mut buf)?;
        if n == 0 {
            break want.is_empty() && parts.all(<[u8]>::is_empty);
        }
        let mut got = &buf[..n];
        while !got.is_empty() {
            while want.is_empty() {
                match parts.next() {
                    Some(p) => want = p,
                    None => break 'read false,
                }
            }
            let k = got.len().min(want.len());
            if got[..k] != want[..k] {
                break 'read false;
            }
            (got, want) = (&got[k..], &want[k..]);
        }
    };
    Ok(same)
}

pub(super) fn verify_error(path: &Path, reason: &str) -> anyhow::Error {
    Error::VerifyFailed {
        path: PathBuf::from(path),
        reason: reason.to_string(),
    }
    .into()
}
