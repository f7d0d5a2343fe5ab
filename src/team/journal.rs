//! A journal of teamctl's own, one JSON line per entry, in its data dir: the bridge's
//! (`bridge.jsonl`) and what teamctl did to members (`actions.jsonl`) are each one of these.
//!
//! Invariants: lines are only appended, each in one write under an exclusive OS lock on the
//! file (waited for at most [`OWN_LOCK_WAIT`]) and synced before the append returns; the file
//! is 0600 in a 0700 folder, opened without following a link and used only when it is a
//! regular file; a line that does not parse is skipped on read (and counted), never
//! rewritten. Size cap: past its `max_bytes` the file is renamed to `<file>.1` (replacing the
//! generation before) under that lock, and both generations are read ([`open_generations`]).
//! Readers take no lock: a reader stopped while it held one (Ctrl-Z on a follower) would stop
//! every writer; a line still being appended is the file's last and does not parse yet.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::store::dir::{Loc, OWN_LOCK_WAIT, lock_own_file};
use crate::team::data_dir::private_dir;

/// One journal file in a data dir.
#[derive(Debug, Clone)]
pub struct JsonLines {
    dir: PathBuf,
    /// Its file name.
    file: &'static str,
    /// The previous generation's file name.
    rotated: &'static str,
    /// How large the current generation grows before it is rotated.
    max_bytes: u64,
    /// What it is, in errors (`the bridge journal`).
    what: &'static str,
}

impl JsonLines {
    /// The journal `file` (rotated to `rotated` past `max_bytes`) in the data dir `dir`, named
    /// `what` in errors; created on the first append.
    pub fn new(
        dir: &Path,
        (file, rotated): (&'static str, &'static str),
        max_bytes: u64,
        what: &'static str,
    ) -> JsonLines {
        JsonLines {
            dir: dir.to_path_buf(),
            file,
            rotated,
            max_bytes,
            what,
        }
    }

    /// The journal's path.
    pub fn path(&self) -> PathBuf {
        self.dir.join(self.file)
    }

    /// Appends `entry` as one line (one write, under the file's lock, synced).
    ///
    /// # Errors
    /// I/O, naming the journal; a journal that is a symlink or not a regular file.
    pub fn append(&self, entry: &impl Serialize) -> Result<()> {
        let context = || format!("could not write {} {}", self.what, self.path().display());
        let dir = private_dir(&self.dir).with_context(context)?;
        // Refused before anything is written: the rotation would rename over it.
        dir.expect_file(self.rotated).with_context(context)?;
        let mut line = serde_json::to_string(entry)?;
        line.push('\n');
        let mut f = dir.open_append(self.file, 0o600).with_context(context)?;
        lock_own_file(&f, OWN_LOCK_WAIT).with_context(context)?;
        if f.metadata().with_context(context)?.len() > self.max_bytes {
            dir.rename(self.file, self.rotated).with_context(context)?;
            let fresh = dir.open_append(self.file, 0o600).with_context(context)?;
            lock_own_file(&fresh, OWN_LOCK_WAIT).with_context(context)?;
            f = fresh;
        }
        f.write_all(line.as_bytes()).with_context(context)?;
        f.sync_data().with_context(context)?;
        Ok(())
    }

    /// Every entry, oldest first, and how many lines did not parse (skipped).
    ///
    /// # Errors
    /// I/O other than a missing journal; a journal that is not a regular file.
    pub fn read<T: DeserializeOwned>(&self) -> Result<(Vec<T>, usize)> {
        let context = || format!("could not read {} {}", self.what, self.path().display());
        let (mut out, mut bad) = (Vec::new(), 0);
        let files = open_generations(&self.dir, self.rotated, self.file).with_context(context)?;
        let [rotated, current] = files;
        for (f, current) in [(rotated, false), (current, true)] {
            let Some(f) = f else { continue };
            let (mut r, mut line) = (BufReader::new(f), String::new());
            while r.read_line(&mut line).with_context(context)? > 0 {
                // The current generation's last line without its `\n` is still being written
                // (no lock is taken): not yet an entry, and not a bad one.
                if current && !line.ends_with('\n') {
                    break;
                }
                match serde_json::from_str::<T>(&line) {
                    Ok(e) => out.push(e),
                    Err(_) => bad += 1,
                }
                line.clear();
            }
        }
        Ok((out, bad))
    }
}

/// The two generations of a log of teamctl's own in `dir`, `rotated` then `current` (either
/// missing: `None`), opened without a lock and without following a link. The current one is
/// opened first: a rotation between the two opens then leaves both handles on one file, which
/// is read once (as the rotated one), never skipped.
///
/// # Errors
/// I/O other than a missing file; a file that is not a regular file.
pub fn open_generations(dir: &Path, rotated: &str, current: &str) -> io::Result<[Option<File>; 2]> {
    let root = Loc::root(dir);
    let new = root.join(current).open_file()?;
    let old = root.join(rotated).open_file()?;
    let same = match (&old, &new) {
        (Some(o), Some(n)) => {
            let (o, n) = (o.metadata()?, n.metadata()?);
            (o.dev(), o.ino()) == (n.dev(), n.ino())
        }
        _ => false,
    };
    Ok([old, new.filter(|_| !same)])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line that does not parse is counted; the last one, still being written without a
    /// lock, is neither an entry nor a bad one until its `\n` is there.
    #[test]
    fn a_line_still_being_written_is_not_counted_bad() {
        let tmp = tempfile::tempdir().unwrap();
        let j = JsonLines::new(tmp.path(), ("j.jsonl", "j.jsonl.1"), 1 << 20, "the journal");
        j.append(&serde_json::json!({"n": 1})).unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(j.path())
            .unwrap();
        f.write_all(b"not json\n{\"n\":").unwrap();
        let (got, bad) = j.read::<serde_json::Value>().unwrap();
        assert_eq!((got.len(), bad), (1, 1));
        f.write_all(b"2}\n").unwrap();
        let (got, bad) = j.read::<serde_json::Value>().unwrap();
        assert_eq!((got.len(), bad), (2, 1));
    }
}
