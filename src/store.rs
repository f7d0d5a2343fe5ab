//! Inbox files: parse, render, atomic replace, and the locked read-modify-write with
//! read-back verification.
//!
//! Invariants:
//! - Format: `JSON.stringify(value, null, 2)` byte for byte ([`crate::format`]). An append to a
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
//! - A file that is not a JSON array of objects is never written (an error names it).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::thread;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

use crate::error::Error;
use crate::format;
use crate::id;
use crate::light::LightEntry;
use crate::lock::{self, LockOptions};
use crate::paths::with_suffix;

/// One inbox entry: a JSON object with its keys in file order.
pub type Entry = Map<String, Value>;

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

pub use crate::format::render;

/// Reads an inbox without locking, as Claude Code's readers do ([`read_unlocked`]). `Ok(None)`
/// when the file does not exist.
///
/// # Errors
/// I/O errors, or a file that still does not parse after the retries.
pub fn read_inbox(path: &Path) -> Result<Option<Vec<Entry>>> {
    read_unlocked(path, |bytes| parse_inbox(bytes, path))
}

/// Reads `path` without a lock and parses it with `parse`. `Ok(None)` when it does not exist.
/// A parse failure is retried a few times (about 150 ms in all): writers that rewrite a file in
/// place (old Claude Code's inboxes, new Claude Code's `config.json`) leave it torn for a few
/// milliseconds.
///
/// # Errors
/// I/O errors, or the parse error when it still fails after the retries.
pub fn read_unlocked<T>(path: &Path, parse: impl Fn(&[u8]) -> Result<T>) -> Result<Option<T>> {
    let mut attempt = 0;
    loop {
        let bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
        };
        match parse(&bytes) {
            Ok(value) => return Ok(Some(value)),
            Err(e) if attempt >= 4 => return Err(e),
            Err(_) => thread::sleep(Duration::from_millis(10 << attempt)),
        }
        attempt += 1;
    }
}

/// Replaces `path` atomically: writes `<path>.tmp.<8 hex>` (create-new, mode 0666 & ~umask),
/// fsyncs it, renames it over `path` and fsyncs the folder. The temp file is removed on any
/// failure.
///
/// # Errors
/// Any I/O error, with the path that failed.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    atomic_write_parts(path, &[bytes])
}

/// [`atomic_write`] of the concatenation of `parts`.
///
/// # Errors
/// Any I/O error, with the path that failed.
pub fn atomic_write_parts(path: &Path, parts: &[&[u8]]) -> Result<()> {
    let tmp = with_suffix(path, &format!(".tmp.{}", id::temp_suffix()));
    let result = (|| -> Result<()> {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .with_context(|| format!("could not create {}", tmp.display()))?;
        for part in parts {
            f.write_all(part)
                .with_context(|| format!("could not write {}", tmp.display()))?;
        }
        f.sync_all()
            .with_context(|| format!("could not sync {}", tmp.display()))?;
        fs::rename(&tmp, path)
            .with_context(|| format!("could not rename {} to {}", tmp.display(), path.display()))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    // The rename is durable only once the folder entry is on disk.
    if let Some(dir) = path.parent() {
        File::open(dir)
            .and_then(|d| d.sync_all())
            .with_context(|| format!("could not sync {}", dir.display()))?;
    }
    Ok(())
}

/// Creates the inbox (and its folder) as `[]` if it is missing, as Claude Code does before it
/// locks: create-new, so an existing file is never touched.
///
/// # Errors
/// I/O errors other than the file already existing.
pub fn ensure_inbox(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).with_context(|| format!("could not create {}", dir.display()))?;
    }
    match OpenOptions::new().write(true).create_new(true).open(path) {
        Ok(mut f) => f
            .write_all(b"[]")
            .with_context(|| format!("could not write {}", path.display())),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e).with_context(|| format!("could not create {}", path.display())),
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
/// # Errors
/// [`Error::LockTimeout`], [`Error::VerifyFailed`], a corrupt inbox (left unchanged) or I/O.
pub fn append(path: &Path, entry: &Entry, dedupe: bool, opts: &LockOptions) -> Result<Appended> {
    ensure_inbox(path)?;
    let guard = lock::acquire(path, opts)?;
    let bytes = fs::read(path).with_context(|| format!("could not read {}", path.display()))?;
    if dedupe && let Some(existing) = find_id(&bytes, path, &id::entry_id(entry))? {
        guard.release()?;
        return Ok(Appended::AlreadyPresent(existing));
    }
    let (prefix, tail) = match format::canonical_inbox(&bytes) {
        Some(count) => format::splice_append(&bytes, count, &format::render_element(entry)),
        None => {
            let mut entries = parse_inbox(&bytes, path)?;
            entries.push(entry.clone());
            (&[][..], render(&entries).into_bytes())
        }
    };
    let parts = [prefix, &tail];
    guard.verify()?;
    atomic_write_parts(path, &parts)?;
    verify_written(path, &parts)?;
    guard.release()?;
    Ok(Appended::Written)
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
    path: &Path,
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
    path: &Path,
    opts: &LockOptions,
    parse: impl FnOnce(&[u8]) -> Result<D>,
    change: impl FnOnce(&mut D) -> Result<(bool, T)>,
) -> Result<T> {
    if !path.exists() {
        bail!("could not update {}: it does not exist", path.display());
    }
    let guard = lock::acquire(path, opts)?;
    let bytes = fs::read(path).with_context(|| format!("could not read {}", path.display()))?;
    let mut doc = parse(&bytes)?;
    let (changed, out) = change(&mut doc)?;
    if changed {
        let bytes = render(&doc);
        guard.verify()?;
        atomic_write(path, bytes.as_bytes())?;
        verify_written(path, &[bytes.as_bytes()])?;
    }
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

/// Reads `path` back (still under the lock) and checks it holds exactly the concatenation of
/// `written`, comparing chunk by chunk so a large inbox is not read into memory twice.
fn verify_written(path: &Path, written: &[&[u8]]) -> Result<()> {
    let context = || format!("could not read back {}", path.display());
    let mut f = File::open(path).with_context(context)?;
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
    let back = fs::read(path).with_context(context)?;
    let reason = match parse_inbox(&back, path) {
        Err(_) => "the file no longer parses".to_string(),
        Ok(entries) => format!(
            "the file differs from what was written ({} entries found); another program wrote \
             it without taking the lock",
            entries.len()
        ),
    };
    Err(verify_error(path, &reason))
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
        let p = tmp.path().join("inboxes/a.json");
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
        let p = tmp.path().join("a.json");
        let written = render(&vec![entry(r#"{"from":"u","text":"hi"}"#)]);
        fs::write(&p, render(&vec![entry(r#"{"from":"x","text":"other"}"#)])).unwrap();
        let err = verify_written(&p, &[written.as_bytes()]).unwrap_err();
        assert!(matches!(
            err.downcast_ref::<Error>(),
            Some(Error::VerifyFailed { .. })
        ));
        fs::write(&p, "[{").unwrap();
        assert!(verify_written(&p, &[written.as_bytes()]).is_err());
        fs::write(&p, &written).unwrap();
        verify_written(&p, &[written.as_bytes()]).unwrap();
    }

    #[test]
    fn dedupe_works_with_duplicate_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("a.json");
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
        let p = tmp.path().join("a.json");
        fs::write(&p, b"{\"not\": \"an array\"}").unwrap();
        let e = entry(r#"{"from":"u","text":"hi"}"#);
        assert!(append(&p, &e, false, &LockOptions::default()).is_err());
        assert_eq!(fs::read(&p).unwrap(), b"{\"not\": \"an array\"}");
        assert!(!lock::lock_dir(&p).exists(), "lock released on error");
    }
}
