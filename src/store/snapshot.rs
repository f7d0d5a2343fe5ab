//! Copies of files that another process may be changing while they are read, without taking
//! any lock: each copy is one whole version of its file.
//!
//! - A JSON file (an inbox, a task, `config.json`) is replaced by rename (Claude Code 2.1.160+,
//!   teamctl) or rewritten in place (older Claude Code). A copy counts once the file's identity
//!   (device, inode, size, mtime) is the same before the open, on the open file and after the
//!   read, and the bytes parse; otherwise it is read again with backoff, for up to
//!   [`STABLE_DEADLINE`]. A file that never settles is copied as last read, and says so.
//! - A JSON Lines file (a transcript) only grows: the copy ends at its last newline, so a line
//!   still being written is left out, never cut in half. A file replaced while it is read is
//!   read again.
//!
//! Only regular files are read, never through a symlink (`O_NOFOLLOW`): what sits in a team's
//! folders is untrusted, and a link there must not pull another file into a copy.

use std::fs::{self, File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result, bail};

/// The longest a JSON file that keeps changing (or never parses) is read again.
pub const STABLE_DEADLINE: Duration = Duration::from_secs(2);

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
    /// not parse, until the deadline; the bytes are the last read.
    pub settled: bool,
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
}

/// Opens `path` for reading without following a symlink; `Ok(None)` when it does not exist.
///
/// # Errors
/// When it is a symlink or not a regular file, or cannot be opened.
fn open_regular(path: &Path) -> Result<Option<(File, Metadata)>> {
    let f = match File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            bail!("{} is a symlink (not copied)", path.display())
        }
        Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
    };
    let m = f
        .metadata()
        .with_context(|| format!("could not read {}", path.display()))?;
    if !m.is_file() {
        bail!("{} is not a regular file (not copied)", path.display());
    }
    Ok(Some((f, m)))
}

/// Copies a JSON file that may be replaced or rewritten meanwhile (see the module docs):
/// `valid` says whether bytes are a whole version. `Ok(None)` when the file does not exist.
///
/// # Errors
/// A symlink, something other than a regular file, or an I/O error.
pub fn copy_json(path: &Path, valid: impl Fn(&[u8]) -> bool) -> Result<Option<Copy>> {
    let start = Instant::now();
    let mut retries = 0;
    loop {
        let before = match fs::symlink_metadata(path) {
            Ok(m) => Identity::of(&m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e).with_context(|| format!("could not read {}", path.display())),
        };
        let Some((mut f, opened)) = open_regular(path)? else {
            return Ok(None);
        };
        let mut bytes = Vec::with_capacity(opened.len() as usize);
        f.read_to_end(&mut bytes)
            .with_context(|| format!("could not read {}", path.display()))?;
        let after = fs::symlink_metadata(path).ok().map(|m| Identity::of(&m));
        let same = Identity::of(&opened) == before
            && after == Some(before)
            && bytes.len() as u64 == before.len;
        let settled = same && valid(&bytes);
        if settled || start.elapsed() >= STABLE_DEADLINE {
            return Ok(Some(Copy {
                bytes,
                mtime: opened.modified().ok(),
                retries,
                settled,
            }));
        }
        retries += 1;
        thread::sleep(Duration::from_millis((5u64 << retries.min(5)).min(100)));
    }
}

/// Copies a JSON Lines file that only grows: every whole line it holds (see the module docs).
/// `Ok(None)` when the file does not exist.
///
/// # Errors
/// A symlink, something other than a regular file, or an I/O error.
pub fn copy_lines(path: &Path) -> Result<Option<Copy>> {
    let mut retries = 0;
    loop {
        let Some((mut f, opened)) = open_regular(path)? else {
            return Ok(None);
        };
        let mut bytes = Vec::with_capacity(opened.len() as usize);
        f.read_to_end(&mut bytes)
            .with_context(|| format!("could not read {}", path.display()))?;
        let cut = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(cut);
        // Replaced while it was read (a rewrite, not an append): read the new one.
        let replaced = fs::symlink_metadata(path)
            .is_ok_and(|m| (m.dev(), m.ino()) != (opened.dev(), opened.ino()));
        if !replaced || retries >= 5 {
            return Ok(Some(Copy {
                bytes,
                mtime: opened.modified().ok(),
                retries,
                settled: !replaced,
            }));
        }
        retries += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn parses(b: &[u8]) -> bool {
        serde_json::from_slice::<serde_json::Value>(b).is_ok()
    }

    #[test]
    fn copies_a_json_file_and_refuses_links() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        assert_eq!(copy_json(&p, parses).unwrap(), None);
        fs::write(&p, b"[1]").unwrap();
        let c = copy_json(&p, parses).unwrap().unwrap();
        assert_eq!(
            (c.bytes.as_slice(), c.settled, c.retries),
            (&b"[1]"[..], true, 0)
        );
        let secret = dir.path().join("secret");
        fs::write(&secret, b"[2]").unwrap();
        let link = dir.path().join("l.json");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let err = copy_json(&link, parses).unwrap_err().to_string();
        assert!(err.contains("symlink"), "{err}");
        assert!(copy_lines(&link).is_err());
        let fifo = dir.path().join("f.json");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = copy_json(&fifo, parses).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }

    #[test]
    fn a_torn_json_file_is_read_again_until_it_parses() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        fs::write(&p, b"[{\"a\":").unwrap();
        let writer = {
            let p = p.clone();
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
        let p = dir.path().join("t.jsonl");
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
    }
}
