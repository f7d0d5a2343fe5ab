//! Copies of files that another process may be changing while they are read, without taking
//! any lock: each copy is one whole version of its file.
//!
//! - A JSON file (an inbox, a task, `config.json`) is replaced by rename (Claude Code 2.1.160+,
//!   teamctl) or rewritten in place (older Claude Code). A copy counts once the file's identity
//!   (device, inode, size, mtime) is the same before the open, on the open file and after the
//!   read, and the bytes parse; otherwise it is read again with backoff, for up to
//!   [`STABLE_DEADLINE`]. A file that never settles, or whose one version does not parse
//!   ([`STABLE_INVALID`] reads in a row), is copied as last read, and says so.
//! - A JSON Lines file (a transcript) only grows: the copy ends at the last newline it held when
//!   it was opened, so a line still being written is left out, never cut in half, and what is
//!   appended meanwhile is not read. It is streamed ([`open_lines`]): however big, it is never
//!   held in memory whole.
//!
//! Only regular files are read, reached through folder handles from the config dir down and
//! never through a symlink at any component ([`crate::store::dir`]); a FIFO, socket or device
//! is refused without being opened in a way that could block. What sits in a team's folders is
//! untrusted, and a link there must not pull another file into a copy.

use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, anyhow, bail};

use crate::store::dir::{Dir, Info, Loc, Unexpected};

/// The longest a JSON file that keeps changing is read again.
pub const STABLE_DEADLINE: Duration = Duration::from_secs(2);

/// How many times in a row the same version of a JSON file must fail to parse before it is
/// copied as it is (about 150 ms: an in-place writer is done by then).
pub const STABLE_INVALID: u32 = 3;

/// One copy of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// The file's mtime when it was read.
    pub mtime: Option<SystemTime>,
    /// How many times it was read again because it changed (or did not parse) under the read.
    pub retries: u32,
    /// Whether the copy is one settled, valid version. `false`: the file kept changing, or did
    /// not parse; the bytes are the last read.
    pub settled: bool,
    /// Whether it was still changing when the deadline came.
    pub changing: bool,
}

/// Who the file is: it changed when any of these did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
}

impl Identity {
    fn of(m: &Metadata) -> Identity {
        Identity {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        }
    }

    fn of_info(i: &Info) -> Identity {
        let ns = i
            .mtime
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos() as i128)
            .unwrap_or_else(|e| -(e.duration().as_nanos() as i128));
        Identity {
            dev: i.dev,
            ino: i.ino,
            len: i.size,
            mtime_ns: ns,
        }
    }
}

/// The error for a file that could not be opened: `skipped <path> is a symlink, which teamctl
/// never follows (…)` for one that is not a regular file, else `could not read <path>: …`.
fn refused(path: &Path, e: &io::Error) -> anyhow::Error {
    match e.get_ref().and_then(|i| i.downcast_ref::<Unexpected>()) {
        Some(u) => anyhow!("skipped {u}"),
        None => anyhow!("could not read {}: {e}", path.display()),
    }
}

/// The folder `loc` is in, opened through handles from the root; `Ok(None)` when it (or a
/// folder on the way) is missing.
fn parent(loc: &Loc) -> Result<Option<Dir>> {
    match loc.parent_dir() {
        Ok(d) => Ok(Some(d)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(refused(loc, &e)),
    }
}

/// Opens `name` in `dir` for reading, only when it is a regular file (never following a
/// symlink, never opening a FIFO or a device); `Ok(None)` when it does not exist.
///
/// # Errors
/// When it is a symlink or not a regular file, or cannot be opened.
fn open_regular(dir: &Dir, name: &OsStr, path: &Path) -> Result<Option<(File, Metadata)>> {
    let f = match dir.open_file(name) {
        Ok(Some(f)) => f,
        Ok(None) => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refused(path, &e)),
    };
    let m = f
        .metadata()
        .with_context(|| format!("could not read {}", path.display()))?;
    Ok(Some((f, m)))
}

/// Copies a JSON file that may be replaced or rewritten meanwhile (see the module docs):
/// `valid` says whether bytes are a whole version. `Ok(None)` when the file does not exist.
///
/// # Errors
/// A symlink, something other than a regular file, or an I/O error.
pub fn copy_json(loc: &Loc, valid: impl Fn(&[u8]) -> bool) -> Result<Option<Copy>> {
    let path: &Path = loc;
    let Some(name) = loc.name() else {
        bail!("{} is the root, not a file in it", path.display());
    };
    let Some(dir) = parent(loc)? else {
        return Ok(None);
    };
    let start = Instant::now();
    let mut retries = 0;
    // The same invalid version read this many times in a row is how the file is.
    let mut same_invalid = 0;
    let mut last: Option<(Identity, Vec<u8>)> = None;
    loop {
        let before = match dir.stat(name) {
            Ok(Some(i)) => Identity::of_info(&i),
            Ok(None) => return Ok(None),
            Err(e) => return Err(refused(path, &e)),
        };
        let Some((mut f, opened)) = open_regular(&dir, name, path)? else {
            return Ok(None);
        };
        let mut bytes = Vec::with_capacity(opened.len() as usize);
        f.read_to_end(&mut bytes)
            .with_context(|| format!("could not read {}", path.display()))?;
        let after = dir.stat(name).ok().flatten().map(|i| Identity::of_info(&i));
        let same = Identity::of(&opened) == before
            && after == Some(before)
            && bytes.len() as u64 == before.len;
        let settled = same && valid(&bytes);
        if same && !settled {
            let seen = Some((before, bytes.clone()));
            same_invalid = if last == seen { same_invalid + 1 } else { 0 };
            last = seen;
        }
        if settled || same_invalid >= STABLE_INVALID || start.elapsed() >= STABLE_DEADLINE {
            return Ok(Some(Copy {
                bytes,
                mtime: opened.modified().ok(),
                retries,
                settled,
                changing: !same,
            }));
        }
        retries += 1;
        thread::sleep(Duration::from_millis((5u64 << retries.min(5)).min(100)));
    }
}

/// A JSON Lines file that only grows, opened to be streamed up to its last newline as it was
/// when opened (see the module docs): the lines appended later, and a line still being written,
/// are left out.
#[derive(Debug)]
pub struct Lines {
    /// The whole lines, [`Lines::len`] bytes of them.
    pub reader: io::Take<File>,
    /// How many bytes [`Lines::reader`] gives.
    pub len: u64,
    /// The file's mtime when it was opened.
    pub mtime: Option<SystemTime>,
}

/// How far back from the end the last newline is looked for at a time.
const TAIL: u64 = 64 * 1024;

/// Opens a JSON Lines file that only grows ([`Lines`]). `Ok(None)` when it does not exist.
///
/// # Errors
/// A symlink, something other than a regular file, or an I/O error.
pub fn open_lines(loc: &Loc) -> Result<Option<Lines>> {
    use std::os::unix::fs::FileExt;
    let path: &Path = loc;
    let Some(name) = loc.name() else {
        bail!("{} is the root, not a file in it", path.display());
    };
    let Some(dir) = parent(loc)? else {
        return Ok(None);
    };
    let Some((f, m)) = open_regular(&dir, name, path)? else {
        return Ok(None);
    };
    let size = m.len();
    let mut end = size;
    let mut buf = vec![0u8; TAIL as usize];
    let len = loop {
        if end == 0 {
            break 0;
        }
        let start = end.saturating_sub(TAIL);
        let chunk = &mut buf[..(end - start) as usize];
        f.read_exact_at(chunk, start)
            .with_context(|| format!("could not read {}", path.display()))?;
        if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
            break start + i as u64 + 1;
        }
        end = start;
    };
    Ok(Some(Lines {
        reader: f.take(len),
        len,
        mtime: m.modified().ok(),
    }))
}

/// Copies a JSON Lines file that only grows into memory: every whole line it holds (for small
/// files; [`open_lines`] streams). `Ok(None)` when the file does not exist.
///
/// # Errors
/// As [`open_lines`].
pub fn copy_lines(loc: &Loc) -> Result<Option<Copy>> {
    let path: &Path = loc;
    let Some(mut l) = open_lines(loc)? else {
        return Ok(None);
    };
    let mut bytes = Vec::with_capacity(l.len as usize);
    l.reader
        .read_to_end(&mut bytes)
        .with_context(|| format!("could not read {}", path.display()))?;
    Ok(Some(Copy {
        bytes,
        mtime: l.mtime,
        retries: 0,
        settled: true,
        changing: false,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Write;

    fn at(dir: &Path, name: &str) -> Loc {
        Loc::root(dir).join(name)
    }

    fn parses(b: &[u8]) -> bool {
        serde_json::from_slice::<serde_json::Value>(b).is_ok()
    }

    #[test]
    fn copies_a_json_file_and_refuses_links() {
        let dir = tempfile::tempdir().unwrap();
        let p = at(dir.path(), "a.json");
        assert_eq!(copy_json(&p, parses).unwrap(), None);
        fs::write(&p, b"[1]").unwrap();
        let c = copy_json(&p, parses).unwrap().unwrap();
        assert_eq!(
            (c.bytes.as_slice(), c.settled, c.retries),
            (&b"[1]"[..], true, 0)
        );
        let secret = dir.path().join("secret");
        fs::write(&secret, b"[2]").unwrap();
        let link = at(dir.path(), "l.json");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let err = copy_json(&link, parses).unwrap_err().to_string();
        assert!(err.contains("symlink"), "{err}");
        assert!(copy_lines(&link).is_err());
        let fifo = at(dir.path(), "f.json");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = copy_json(&fifo, parses).unwrap_err().to_string();
        assert!(err.contains("FIFO"), "{err}");
        assert!(copy_lines(&fifo).is_err());
        // A folder on the way that is a symlink is not gone through either.
        fs::create_dir(dir.path().join("real")).unwrap();
        fs::write(dir.path().join("real/a.json"), b"[3]").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("via")).unwrap();
        let through = Loc::root(dir.path()).join("via").join("a.json");
        let err = copy_json(&through, parses).unwrap_err().to_string();
        assert!(err.contains("symlink"), "{err}");
        assert!(open_lines(&through).is_err());
    }

    #[test]
    fn a_corrupt_json_file_is_copied_as_it_is_without_waiting_long() {
        let dir = tempfile::tempdir().unwrap();
        let p = at(dir.path(), "a.json");
        fs::write(&p, b"{not json").unwrap();
        let t = Instant::now();
        let c = copy_json(&p, parses).unwrap().unwrap();
        assert_eq!((c.bytes.as_slice(), c.settled), (&b"{not json"[..], false));
        assert!(t.elapsed() < STABLE_DEADLINE);
    }

    #[test]
    fn a_torn_json_file_is_read_again_until_it_parses() {
        let dir = tempfile::tempdir().unwrap();
        let p = at(dir.path(), "a.json");
        fs::write(&p, b"[{\"a\":").unwrap();
        let writer = {
            let p = p.to_path_buf();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(60));
                fs::write(&p, b"[{\"a\":1}]").unwrap();
            })
        };
        let c = copy_json(&p, parses).unwrap().unwrap();
        writer.join().unwrap();
        assert_eq!(c.bytes, b"[{\"a\":1}]");
        assert!(c.settled && c.retries > 0);
    }

    #[test]
    fn a_growing_lines_file_is_copied_to_its_last_newline() {
        let dir = tempfile::tempdir().unwrap();
        let p = at(dir.path(), "t.jsonl");
        let mut f = File::create(&p).unwrap();
        f.write_all(b"{\"a\":1}\n{\"b\":").unwrap();
        let c = copy_lines(&p).unwrap().unwrap();
        assert_eq!(c.bytes, b"{\"a\":1}\n");
        f.write_all(b"2}\n").unwrap();
        assert_eq!(
            copy_lines(&p).unwrap().unwrap().bytes,
            b"{\"a\":1}\n{\"b\":2}\n"
        );
        fs::write(&p, b"no newline").unwrap();
        assert!(copy_lines(&p).unwrap().unwrap().bytes.is_empty());
        // A last line longer than one look back.
        let long = format!("{{\"a\":\"{}\"}}\n", "x".repeat(200_000));
        fs::write(&p, format!("{long}{long}{{\"half")).unwrap();
        let l = open_lines(&p).unwrap().unwrap();
        assert_eq!(l.len, 2 * long.len() as u64);
    }
}
