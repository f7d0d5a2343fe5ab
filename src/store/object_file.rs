//! A JSON object file (Claude Code's `.claude.json`, `settings.json`) edited the way Claude
//! Code's own config writers edit it, so a Claude Code writing at the same moment loses nothing.
//!
//! What Claude Code does (2.1.112 `saveConfigWithLock` and `updateSettingsForSource`, 2.1.332
//! the same for the file system backend), and so [`edit`] does:
//! - `.claude.json` is changed under its lock directory `<file>.lock` (the [`lock`] protocol;
//!   2.1.332 retries it for about 10 s, 2.1.112 tries once and then writes without it), and
//!   re-read under the lock; `settings.json` is written without a lock.
//! - A file is replaced atomically (temp file, rename), through a symlink at its path (one
//!   level, as Claude Code resolves it), keeping its mode; a new `.claude.json` is created
//!   0600, and only if it still does not exist (another writer's new file is never clobbered).
//! - Before `.claude.json` is replaced, a copy goes to `<config dir>/backups/.claude.json.backup.<ms>`
//!   unless one is less than a minute old; the five newest are kept.
//! - The layout is `JSON.stringify(value, null, 2)`, plus a newline for `settings.json`.
//!
//! Invariants here: a file that does not parse as a JSON object is never written; the bytes
//! read under the lock are compared with the file again once the temp file is written and
//! synced, right before the rename (a writer that skipped the lock restarts the edit); the file
//! is read back after the rename, before the lock is released: when it differs, a writer that
//! skipped the lock replaced it, and [`Edit::overwritten`] says so (the caller reads it again).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::error::Error;
use crate::store::dir::{Dir, Loc};
use crate::store::format::{self, Entry};
use crate::store::lazy::{self, Doc, Obj, Writing};
use crate::store::lock::{self, LockOptions};
use crate::store::{id, verify_written_with, write_in_if_with};

/// At most one backup of a file this often (Claude Code: 60 s).
pub const BACKUP_EVERY: Duration = Duration::from_secs(60);

/// How many backups of a file are kept (Claude Code: 5).
pub const BACKUPS_KEPT: usize = 5;

/// How many times an edit starts over when another writer changed the file under it.
const ATTEMPTS: usize = 5;

/// How a file is written.
#[derive(Debug, Clone)]
pub struct ObjectFile {
    /// The file's path, as Claude Code names it (its lock is this path plus `.lock`).
    pub path: PathBuf,
    /// Take `<path>.lock` for the read-modify-write (Claude Code does for `.claude.json`).
    pub lock: Option<LockOptions>,
    /// The permission bits of a file this creates (before the umask): `0o600` for
    /// `.claude.json`, `0o666` for `settings.json`.
    pub new_mode: u32,
    /// End the file with a newline (`settings.json`).
    pub trailing_newline: bool,
    /// Claude Code's backup folder for this file (`<config dir>/backups`), if it keeps one.
    pub backups: Option<PathBuf>,
}

/// What [`edit`] did to the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// Nothing: no change, or a dry run.
    Unchanged,
    /// The file did not exist and was created.
    Created,
    /// The file was replaced.
    Replaced,
}

/// The result of an [`edit`].
#[derive(Debug, Clone)]
pub struct Edit<T> {
    /// What the change function returned (for the content the file had when it was written,
    /// or, when nothing was written, when it was read).
    pub out: T,
    /// Whether and how the file was written.
    pub written: Written,
    /// Whether the file existed when it was read.
    pub existed: bool,
    /// Whether the file was not in the `JSON.stringify` layout, so bytes beyond the change
    /// were (or would be) rewritten: other indentation, escapes, no final newline, …
    pub reformatted: bool,
    /// The backup copy made before replacing it, if one was made.
    pub backup: Option<PathBuf>,
    /// Whether another writer replaced the file between our rename and the read-back (one
    /// that skipped the lock): what it wrote may or may not keep our change, so the caller
    /// reads the file again.
    pub overwritten: bool,
}

/// The file a write of `path` replaces: the target of a symlink at `path` (one level, relative
/// to its folder, as Claude Code's writer resolves it), else `path` itself.
pub fn write_target(path: &Path) -> PathBuf {
    match fs::read_link(path) {
        Ok(link) if link.is_absolute() => link,
        Ok(link) => path.parent().unwrap_or(Path::new("")).join(link),
        Err(_) => path.to_path_buf(),
    }
}

/// Runs `look` on the file's object (an empty one when the file does not exist), parsed only
/// where `look` reads it ([`lazy`]).
///
/// # Errors
/// I/O errors, a file that is not a JSON object (named, "left unchanged"), `look`'s errors.
pub fn check<T>(path: &Path, look: impl FnOnce(&mut Obj<'_>) -> Result<T>) -> Result<T> {
    let bytes = read_bytes(&write_target(path))?;
    let text = text_of(bytes.as_deref(), path)?;
    let mut doc = match text {
        Some(t) => Doc::parse(t, path)?,
        None => Doc::default(),
    };
    look(doc.root())
}

/// The file's bytes as text (`None`: no file).
fn text_of<'b>(bytes: Option<&'b [u8]>, path: &Path) -> Result<Option<&'b str>> {
    bytes
        .map(|b| {
            std::str::from_utf8(b).with_context(|| {
                format!(
                    "{} is not valid JSON (left unchanged): not UTF-8",
                    path.display()
                )
            })
        })
        .transpose()
}

/// Whether the file `target` still holds exactly `old` (compared a chunk at a time, so a large
/// file is not read into memory again).
fn still(target: &Path, old: &[u8]) -> Result<bool> {
    let context = || format!("could not read {}", target.display());
    let Some(mut f) = loc_of(target)?.open_file().with_context(context)? else {
        return Ok(false);
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut at = 0;
    loop {
        let n = io::Read::read(&mut f, &mut buf).with_context(context)?;
        if n == 0 {
            return Ok(at == old.len());
        }
        if old.get(at..at + n) != Some(&buf[..n]) {
            return Ok(false);
        }
        at += n;
    }
}

/// `path` as a [`Loc`]: its folder is the root (the user's, opened as given), the file a name
/// below it that is reached without following a symlink.
fn loc_of(path: &Path) -> Result<Loc> {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        bail!("{} names no file", path.display());
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    Ok(Loc::root(dir).join(name))
}

/// The file's bytes (`None`: it does not exist). Anything but a regular file is an error.
fn read_bytes(target: &Path) -> Result<Option<Vec<u8>>> {
    match loc_of(target)?.read() {
        Ok(b) => Ok(b),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("could not read {}", target.display())),
    }
}

/// The open folder of `target` and the file's name in it.
fn dir_of(target: &Path) -> Result<(Dir, String)> {
    let loc = loc_of(target)?;
    let dir = loc
        .parent_dir()
        .with_context(|| format!("could not write {}", target.display()))?;
    let name = target
        .file_name()
        .and_then(|n| n.to_str())
        .with_context(|| format!("{} is not a file name teamctl uses", target.display()))?
        .to_string();
    Ok((dir, name))
}

/// Runs `change` on the file's object (an empty one when the file does not exist) and, when it
/// reports a change and `write` is set, writes the result as described in the module docs.
/// `change` may run more than once: again from the start when another writer changed the file
/// meanwhile. `now` names the backup.
///
/// # Errors
/// A file that is not a JSON object (left unchanged), `change`'s errors, [`crate::Error::LockTimeout`],
/// [`crate::Error::VerifyFailed`], a file that kept changing under every attempt, or I/O.
pub fn edit<T>(
    file: &ObjectFile,
    write: bool,
    now: SystemTime,
    change: impl Fn(&mut Obj<'_>) -> Result<(bool, T)>,
) -> Result<Edit<T>> {
    let target = write_target(&file.path);
    if !write {
        let dry = Try {
            target: &target,
            write: false,
            guard: None,
        };
        return attempt(file, &dry, now, &change).map(|(edit, _)| edit);
    }
    if let Some(dir) = file.path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    }
    for _ in 0..ATTEMPTS {
        super::faults::pause(super::faults::faults().before_lock);
        let guard = match &file.lock {
            Some(opts) => Some(lock::acquire(&loc_of(&file.path)?, opts)?),
            None => None,
        };
        super::faults::pause(super::faults::faults().after_lock);
        let locked = Try {
            target: &target,
            write: true,
            guard: guard.as_ref(),
        };
        let result = attempt(file, &locked, now, &change);
        if let Some(g) = guard {
            g.release()?;
        }
        match result? {
            (edit, true) => return Ok(edit),
            // Another writer changed or created the file meanwhile: start over from its bytes.
            (_, false) => continue,
        }
    }
    bail!(
        "{} kept changing while it was being written ({ATTEMPTS} attempts); nothing was \
         written, try again",
        file.path.display()
    )
}

/// How one read-change-write goes: the file it reads and replaces (a link's target), whether
/// it writes at all, and the lock it holds, if any.
struct Try<'a> {
    target: &'a Path,
    write: bool,
    guard: Option<&'a lock::LockGuard>,
}

/// One read-change-write. `Ok((_, false))`: the file changed under it; start over.
fn attempt<T>(
    file: &ObjectFile,
    t: &Try,
    now: SystemTime,
    change: &impl Fn(&mut Obj<'_>) -> Result<(bool, T)>,
) -> Result<(Edit<T>, bool)> {
    let Try {
        target,
        write,
        guard,
    } = *t;
    let before = read_bytes(target)?;
    let mut doc = match text_of(before.as_deref(), &file.path)? {
        Some(t) => Doc::parse(t, &file.path)?,
        None => Doc::default(),
    };
    // In the layout already: what is not changed is copied as it is.
    let laid_out = before.as_deref().is_some_and(|b| {
        let body = match file.trailing_newline {
            true => b.strip_suffix(b"\n"),
            false => Some(b),
        };
        body.is_some_and(|b| format::canonical_object(b, lazy::MAX_DEPTH))
    });
    let reformatted = before.is_some() && (!laid_out || doc.had_duplicates());
    let (changed, out) = change(doc.root())?;
    let mut edit = Edit {
        out,
        written: Written::Unchanged,
        existed: before.is_some(),
        reformatted,
        backup: None,
        overwritten: false,
    };
    if !changed || !write {
        return Ok((edit, true));
    }
    // Rendered straight into the temp file and again into the read-back's comparison: a large
    // file is never held rendered besides its text.
    let unchanged = || format!("could not write {} (left unchanged)", file.path.display());
    let mut render = |w: &mut dyn Write| -> Result<()> {
        let mut sink = Writing(w);
        doc.render_to(&mut sink, laid_out).with_context(unchanged)?;
        if file.trailing_newline {
            sink.0.write_all(b"\n")?;
        }
        Ok(())
    };
    let (dir, name) = dir_of(target)?;
    match &before {
        None => {
            let mut bytes = Vec::new();
            render(&mut bytes)?;
            if !create_new(&dir, &name, &bytes, file.new_mode)? {
                return Ok((edit, false));
            }
            edit.written = Written::Created;
        }
        Some(old) => {
            if let Some(dir) = &file.backups {
                edit.backup = backup(&file.path, target, dir, now);
            }
            // A writer that skipped the lock (2.1.112 writes without it when the lock is held,
            // 2.1.332 sometimes) may have replaced the file since it was read: never write over
            // its change. Checked after the temp file is written and synced, right before the
            // rename, so the window left is a read and a stat wide.
            let same = || -> Result<bool> {
                if let Some(g) = guard {
                    g.verify()?;
                }
                still(target, old)
            };
            if !write_in_if_with(&dir, &name, file.new_mode, &mut render, same)? {
                return Ok((edit, false));
            }
            edit.written = Written::Replaced;
        }
    }
    super::faults::pause(super::faults::faults().before_verify);
    // Under our lock only a writer that skips it can differ from what we wrote: say so, and
    // leave it to the caller to read the file again (our change may be in its copy or not).
    match verify_written_with(&dir, &name, &mut render) {
        Ok(()) => {}
        Err(e) if matches!(e.downcast_ref::<Error>(), Some(Error::VerifyFailed { .. })) => {
            edit.overwritten = true;
        }
        Err(e) => return Err(e),
    }
    Ok((edit, true))
}

/// Creates `name` in `dir` holding `bytes` with `mode` (before the umask), only if it does not
/// exist: the bytes go to a temp file first, which is then hard-linked to the name, so no
/// reader sees a half-written file. `Ok(false)` when the file exists.
fn create_new(dir: &Dir, name: &str, bytes: &[u8], mode: u32) -> Result<bool> {
    let path = dir.path().join(name);
    let tmp = format!("{name}.tmp.{}", id::temp_suffix());
    let linked = (|| -> io::Result<bool> {
        let mut f = dir.create_new(&tmp, mode)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        match dir.hard_link(&tmp, name) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    })();
    let _ = dir.unlink(&tmp);
    let created = linked.with_context(|| format!("could not create {}", path.display()))?;
    if created {
        dir.sync()
            .with_context(|| format!("could not sync {}", dir.path().display()))?;
    }
    Ok(created)
}

/// Claude Code's backup before a replace: `<dir>/<name>.backup.<ms>` of `target`, unless the
/// newest is younger than [`BACKUP_EVERY`]; then all but the [`BACKUPS_KEPT`] newest are
/// removed. Best effort, as in Claude Code: a failure makes no backup and stops nothing. The
/// folder is made only if its parent exists (Claude Code's `mkdir` is not recursive).
fn backup(path: &Path, target: &Path, dir: &Path, now: SystemTime) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    let prefix = format!("{name}.backup.");
    match fs::create_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    let list = |dir: &Path| -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .map(|r| {
                r.filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .filter(|n| n.starts_with(&prefix))
                    .collect()
            })
            .unwrap_or_default();
        // Newest first: the names end in a millisecond timestamp of equal width.
        names.sort_unstable_by(|a, b| b.cmp(a));
        names
    };
    let now_ms = now
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let newest = list(dir)
        .first()
        .and_then(|n| n[prefix.len()..].parse::<u128>().ok());
    let due = newest.is_none_or(|ms| now_ms.saturating_sub(ms) >= BACKUP_EVERY.as_millis());
    let mut made = None;
    if due {
        let copy = dir.join(format!("{prefix}{now_ms}"));
        if fs::copy(target, &copy).is_ok() {
            made = Some(copy);
        } else {
            let _ = fs::remove_file(&copy);
        }
    }
    for old in list(dir).iter().skip(BACKUPS_KEPT) {
        let _ = fs::remove_file(dir.join(old));
    }
    made
}

/// The value at `path` (object keys) in `doc`, if every step is an object holding the next key.
pub fn get<'a>(doc: &'a Entry, path: &[&str]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(doc.get(*first)?, |v, k| v.as_object()?.get(*k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn file(path: &Path) -> ObjectFile {
        ObjectFile {
            path: path.to_path_buf(),
            lock: Some(LockOptions::default()),
            new_mode: 0o600,
            trailing_newline: false,
            backups: Some(path.parent().unwrap().join("backups")),
        }
    }

    fn set(key: &'static str) -> impl Fn(&mut Obj<'_>) -> Result<(bool, ())> {
        move |doc| Ok((!doc.insert(key, true.into()), ()))
    }

    #[test]
    fn creates_0600_and_keeps_what_it_does_not_touch() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("cfg/.claude.json");
        let e = edit(&file(&p), true, SystemTime::now(), set("a")).unwrap();
        assert_eq!(e.written, Written::Created);
        assert!(!e.existed);
        assert_eq!(fs::read_to_string(&p).unwrap(), "{\n  \"a\": true\n}");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // Unknown keys, their order and a number's text stay; the mode stays.
        fs::write(&p, "{\n  \"z\": 1.50,\n  \"a\": true,\n  \"m\": {}\n}").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
        let e = edit(&file(&p), true, SystemTime::now(), set("b")).unwrap();
        assert_eq!(e.written, Written::Replaced);
        assert!(!e.reformatted);
        assert_eq!(
            fs::read_to_string(&p).unwrap(),
            "{\n  \"z\": 1.50,\n  \"a\": true,\n  \"m\": {},\n  \"b\": true\n}"
        );
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert!(e.backup.is_some_and(|b| b.is_file()));
        // No change: nothing written, no backup.
        let e = edit(&file(&p), true, SystemTime::now(), set("b")).unwrap();
        assert_eq!(e.written, Written::Unchanged);
        assert!(!lock::lock_dir(&p).exists());
        let left: Vec<_> = fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 2, "the file and backups/, no temp file");
    }

    #[test]
    fn a_file_that_does_not_parse_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join(".claude.json");
        for bad in [&b"{\"a\": "[..], b"[1]", b""] {
            fs::write(&p, bad).unwrap();
            let err = edit(&file(&p), true, SystemTime::now(), set("b")).unwrap_err();
            assert!(format!("{err:#}").contains("left unchanged"), "{err:#}");
            assert_eq!(fs::read(&p).unwrap(), bad);
            assert!(!lock::lock_dir(&p).exists());
        }
    }

    #[test]
    fn dry_run_writes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("cfg/settings.json");
        let e = edit(&file(&p), false, SystemTime::now(), set("a")).unwrap();
        assert_eq!(e.written, Written::Unchanged);
        assert!(!tmp.path().join("cfg").exists());
    }

    #[test]
    fn writes_through_a_symlink_and_reports_a_foreign_layout() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().join("dotfiles/claude.json");
        fs::create_dir_all(real.parent().unwrap()).unwrap();
        fs::write(&real, "{\"a\":1}\n").unwrap();
        let p = tmp.path().join(".claude.json");
        symlink("dotfiles/claude.json", &p).unwrap();
        let e = edit(&file(&p), true, SystemTime::now(), set("b")).unwrap();
        assert!(e.reformatted);
        assert!(fs::symlink_metadata(&p).unwrap().file_type().is_symlink());
        assert_eq!(
            fs::read_to_string(&real).unwrap(),
            "{\n  \"a\": 1,\n  \"b\": true\n}"
        );
    }

    #[test]
    fn settings_layout_ends_with_a_newline() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("settings.json");
        let f = ObjectFile {
            lock: None,
            new_mode: 0o666,
            trailing_newline: true,
            backups: None,
            ..file(&p)
        };
        fs::write(&p, "{\n  \"x\": [\n    1\n  ]\n}\n").unwrap();
        let e = edit(&f, true, SystemTime::now(), set("b")).unwrap();
        assert!(!e.reformatted);
        assert_eq!(
            fs::read_to_string(&p).unwrap(),
            "{\n  \"x\": [\n    1\n  ],\n  \"b\": true\n}\n"
        );
        assert!(!lock::lock_dir(&p).exists());
    }

    #[test]
    fn backups_at_most_one_a_minute_five_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join(".claude.json");
        let dir = tmp.path().join("backups");
        fs::write(&p, "{}").unwrap();
        let t0 = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert!(backup(&p, &p, &dir, t0).is_some());
        assert!(backup(&p, &p, &dir, t0 + Duration::from_secs(59)).is_none());
        for i in 1..8 {
            assert!(backup(&p, &p, &dir, t0 + Duration::from_secs(60 * i)).is_some());
        }
        let mut names: Vec<String> = fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names.len(), BACKUPS_KEPT);
        assert_eq!(names[4], ".claude.json.backup.1800000420000");
        // No parent for the folder: no backup, no error.
        assert!(backup(&p, &p, &tmp.path().join("a/b"), t0).is_none());
    }

    #[test]
    fn another_writers_new_file_is_never_clobbered() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("x.json");
        let dir = Loc::root(tmp.path()).open_dir().unwrap();
        assert!(create_new(&dir, "x.json", b"{}", 0o600).unwrap());
        assert!(!create_new(&dir, "x.json", b"{\"a\":1}", 0o600).unwrap());
        assert_eq!(fs::read(&p).unwrap(), b"{}");
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 1);
    }

    #[test]
    fn get_walks_objects() {
        let doc: Entry = serde_json::from_str(r#"{"p":{"/a":{"t":true}},"n":1}"#).unwrap();
        assert_eq!(get(&doc, &["p", "/a", "t"]), Some(&Value::Bool(true)));
        assert_eq!(get(&doc, &["n", "x"]), None);
        assert_eq!(get(&doc, &[]), None);
    }
}
