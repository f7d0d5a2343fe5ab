//! teamctl's index of the transcripts it has read: for each file (by path), the device, inode,
//! byte offset and hash of the bytes before it, and the [`FileState`] so far, so that the next
//! read parses only what was appended. A file replaced (another inode), truncated (shorter than
//! the offset) or rewritten in place (other bytes before the offset) is read again from the
//! start ([`FileState::update`]).
//!
//! It lives in teamctl's own data dir (`transcripts.json`), written atomically (temp file,
//! rename) and private (0600). It is a cache: one that does not parse, or is of another
//! version, counts as empty, and two teamctl processes saving at once leave one of their
//! indexes, never a mix. It holds at most [`MAX_FILES`] entries (the least recently used go),
//! and entries whose file is gone are dropped.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, anyhow};
use serde::{Deserialize, Serialize};

use crate::store::dir::{Info, Loc};
use crate::store::id;
use crate::team::data_dir::private_dir;
use crate::team::transcript::skip::{note, refusal};
use crate::team::transcript::{FileState, Update};

/// The index's file name in the data dir.
pub const FILE_NAME: &str = "transcripts.json";

/// Entries kept at most.
pub const MAX_FILES: usize = 4096;

/// Above this many bytes left to read, [`Index::update_all`] reads files in parallel.
const PARALLEL_ABOVE: u64 = 32 << 20;

// 3: each file's turn says when it began and ended (`Turn::began_at`, `Turn::ended_at`).
const SCHEMA: u32 = 3;

/// What [`Index::update_all_tapped`] hands each line read to, with its file's path.
pub type LineTap<'a> = dyn Fn(&Path, &[u8]) + Sync + 'a;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    /// The save generation in which it was last used.
    seen: u64,
    // Not flattened: serde's flatten loses floats under serde_json's arbitrary_precision.
    state: FileState,
}

/// Who wrote a transcript, from its first lines (kept for files that are nobody's in a team).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Head {
    /// Device of the file looked at.
    pub dev: u64,
    /// Its inode.
    pub ino: u64,
    /// Bytes looked at (the file's length then, up to [`HEAD_BYTES`]).
    pub len: u64,
    /// `teamName` of its first entry that has one.
    pub team: Option<String>,
    /// `agentName` beside it.
    pub agent: Option<String>,
    /// The first entry's timestamp.
    pub first_at: Option<String>,
    /// `sessionId`.
    pub session_id: Option<String>,
    /// Who sent its first prompt, when that was a message from a teammate (a teammate's session
    /// begins with its lead's brief).
    #[serde(default)]
    pub first_from: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct OnDisk {
    schema_version: u32,
    generation: u64,
    files: BTreeMap<PathBuf, Stored>,
    #[serde(default)]
    heads: BTreeMap<PathBuf, Head>,
}

/// The index, loaded (or empty), with the states read or updated since.
#[derive(Debug, Default)]
pub struct Index {
    /// The data dir it is kept in.
    data_dir: Option<PathBuf>,
    /// Why the index file is not used (a symlink, a FIFO, … in its place): it is then neither
    /// read nor written.
    refused: Option<String>,
    disk: OnDisk,
    dirty: bool,
    /// Transcripts that could not be read since the last [`Index::take_warnings`].
    warnings: Vec<String>,
}

impl Index {
    /// Loads the index of `data_dir`: `transcripts.json` there, opened below the data dir
    /// without following a symlink and read only when it is a regular file. An empty index when
    /// there is no data dir, no index, or one that cannot be read or parsed.
    pub fn load(data_dir: Option<&Path>) -> Index {
        let mut refused = None;
        let disk = match data_dir.map(|d| Loc::root(d).join(FILE_NAME).read()) {
            Some(Ok(Some(b))) => serde_json::from_slice::<OnDisk>(&b)
                .ok()
                .filter(|d| d.schema_version == SCHEMA)
                .unwrap_or_default(),
            Some(Err(e)) if e.kind() != io::ErrorKind::NotFound => {
                refused = Some(e.to_string());
                OnDisk::default()
            }
            _ => OnDisk::default(),
        };
        Index {
            data_dir: data_dir.map(Path::to_path_buf),
            refused,
            disk,
            dirty: false,
            warnings: Vec::new(),
        }
    }

    /// An index kept in memory only.
    pub fn in_memory() -> Index {
        Index::default()
    }

    /// Forgets where each transcript was read to: the next update reads each from its start
    /// (for a follower that needs every line, [`Index::update_all_tapped`]); who wrote which
    /// file is kept.
    pub fn forget_offsets(&mut self) {
        self.disk.files.clear();
    }

    /// The state of `path` as last read (read again with [`Index::update`]).
    pub fn get(&self, path: &Path) -> Option<&FileState> {
        self.disk.files.get(path).map(|s| &s.state)
    }

    /// What could not be read since the last call (a transcript that turned into a symlink or
    /// a FIFO, an I/O error), each once.
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    fn warn(&mut self, w: String) {
        note(&mut self.warnings, w);
    }

    /// Reads what the transcript at `loc` gained and returns its state (the last one, or an
    /// empty one, when the file cannot be read; why is kept for [`Index::take_warnings`]).
    pub fn update(&mut self, loc: &Loc) -> (&FileState, Update) {
        let generation = self.disk.generation + 1;
        let stored = self
            .disk
            .files
            .entry(loc.to_path_buf())
            .or_insert_with(|| Stored {
                seen: generation,
                state: FileState::default(),
            });
        // Recency only matters when something else makes the index worth writing.
        stored.seen = generation;
        let (up, err) = match stored.state.update(loc) {
            Ok(up) => (up, None),
            Err(e) => (Update::Missing, Some(refusal(loc, &e))),
        };
        if matches!(up, Update::Grew | Update::Reread) {
            self.dirty = true;
        }
        if let Some(w) = err {
            self.warn(w);
        }
        let stored = &self.disk.files[loc.path()];
        (&stored.state, up)
    }

    /// Reads what each of `locs` gained, several files at a time when there is much to read
    /// (a cold index: one thread per processor, at most one per file), so that a first read of
    /// gigabytes of transcripts goes at the speed of the disk rather than of one core. Each file
    /// is opened through the handles, as [`FileState::update`] opens it.
    pub fn update_all(&mut self, locs: &[Loc]) {
        self.update_all_tapped(locs, None);
    }

    /// [`Index::update_all`], handing `tap` each complete line read with its file's path, as
    /// [`FileState::update_tapped`] does (from several threads at once when there is much to
    /// read).
    pub fn update_all_tapped(&mut self, locs: &[Loc], tap: Option<&LineTap>) {
        let generation = self.disk.generation + 1;
        let mut todo: Vec<(Loc, FileState, u64)> = Vec::new();
        let mut pending = 0u64;
        for loc in locs {
            if todo.iter().any(|(q, _, _)| q.path() == loc.path()) {
                continue;
            }
            let st = self
                .disk
                .files
                .remove(loc.path())
                .map(|s| s.state)
                .unwrap_or_default();
            let len = loc.stat().ok().flatten().map_or(0, |i| i.size);
            let left = len.saturating_sub(st.offset);
            pending += left;
            todo.push((loc.clone(), st, left));
        }
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(todo.len());
        let grew = std::sync::atomic::AtomicBool::new(false);
        let errors = std::sync::Mutex::new(Vec::new());
        let one = |(loc, st, _): &mut (Loc, FileState, u64)| match st.update_tapped(loc, &mut |l| {
            if let Some(tap) = tap {
                tap(loc.path(), l);
            }
        }) {
            Ok(Update::Grew | Update::Reread) => {
                grew.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            Ok(_) => {}
            Err(e) => {
                if let Ok(mut errs) = errors.lock() {
                    errs.push(refusal(loc, &e));
                }
            }
        };
        if threads > 1 && pending > PARALLEL_ABOVE {
            // Biggest first, each thread taking the next file left.
            todo.sort_by_key(|t| std::cmp::Reverse(t.2));
            let queue = std::sync::Mutex::new(todo.iter_mut().collect::<Vec<_>>());
            std::thread::scope(|scope| {
                for _ in 0..threads {
                    scope.spawn(|| {
                        loop {
                            let next = queue.lock().map(|mut q| q.pop()).ok().flatten();
                            let Some(t) = next else { break };
                            one(t);
                        }
                    });
                }
            });
        } else {
            for t in &mut todo {
                one(t);
            }
        }
        self.dirty |= grew.into_inner();
        for w in errors.into_inner().unwrap_or_default() {
            self.warn(w);
        }
        for (loc, state, _) in todo {
            self.disk.files.insert(
                loc.to_path_buf(),
                Stored {
                    seen: generation,
                    state,
                },
            );
        }
    }

    /// Who wrote the transcript at `loc`, whose entry in its folder `info` describes (a regular
    /// file): its identity from the file's state when it was read, else from its first
    /// [`HEAD_BYTES`] bytes (looked at again only when the file changed and nothing was found
    /// yet).
    pub fn head(&mut self, loc: &Loc, info: &Info) -> Option<Head> {
        let path = loc.path();
        if let Some(s) = self.disk.files.get(path)
            && (s.state.dev, s.state.ino) == (info.dev, info.ino)
            && s.state.offset > 0
        {
            return Some(Head {
                dev: s.state.dev,
                ino: s.state.ino,
                len: s.state.offset,
                team: s.state.team.clone(),
                agent: s.state.agent.clone(),
                first_at: s.state.first_at.clone(),
                session_id: s.state.session_id.clone(),
                first_from: s.state.first_from.clone().filter(|f| !f.is_empty()),
            });
        }
        if let Some(h) = self.disk.heads.get(path)
            && (h.dev, h.ino) == (info.dev, info.ino)
            && (h.team.is_some() || h.len >= HEAD_BYTES || h.len == info.size)
        {
            return Some(h.clone());
        }
        let h = match loc.open_file() {
            Ok(Some(f)) => read_head(f).ok()?,
            Ok(None) => return None,
            Err(e) => {
                self.warn(refusal(loc, &e));
                return None;
            }
        };
        self.disk.heads.insert(path.to_path_buf(), h.clone());
        self.dirty = true;
        Some(h)
    }

    /// [`Index::head`] of the transcript at `loc`, looked at first (`None` unless it is a
    /// regular file).
    pub fn head_of(&mut self, loc: &Loc) -> Option<Head> {
        let info = loc.stat().ok().flatten()?;
        (info.kind == crate::store::dir::Kind::File)
            .then(|| self.head(loc, &info))
            .flatten()
    }

    /// Writes the index back if anything changed: entries whose file is gone are dropped, and the
    /// least recently used beyond [`MAX_FILES`]. It is written below the data dir (private:
    /// 0700, the file 0600) through a handle on it, as a new temp file renamed over the old one,
    /// never through a symlink; an index file that is a symlink, a FIFO or anything but a
    /// regular file is left as it is, and the index is not kept.
    ///
    /// # Errors
    /// The data dir or the file cannot be written, or the index file is refused.
    pub fn save(&mut self) -> Result<()> {
        let Some(data_dir) = self.data_dir.clone() else {
            return Ok(());
        };
        if !self.dirty {
            return Ok(());
        }
        let path = data_dir.join(FILE_NAME);
        if let Some(why) = &self.refused {
            return Err(anyhow!("could not keep the transcript index: {why}"));
        }
        self.disk.generation += 1;
        self.disk.schema_version = SCHEMA;
        let generation = self.disk.generation;
        // Only whether a name is still there (never followed, nothing read).
        let exists = |p: &Path| std::fs::symlink_metadata(p).is_ok();
        self.disk
            .files
            .retain(|p, s| s.seen == generation || exists(p));
        self.disk.heads.retain(|p, _| exists(p));
        if self.disk.heads.len() > MAX_FILES {
            let extra = self.disk.heads.len() - MAX_FILES;
            let drop: Vec<PathBuf> = self.disk.heads.keys().take(extra).cloned().collect();
            for p in drop {
                self.disk.heads.remove(&p);
            }
        }
        if self.disk.files.len() > MAX_FILES {
            let mut seen: Vec<u64> = self.disk.files.values().map(|s| s.seen).collect();
            seen.sort_unstable_by(|a, b| b.cmp(a));
            let keep_from = seen[MAX_FILES - 1];
            self.disk.files.retain(|_, s| s.seen >= keep_from);
        }
        write_private(&data_dir, &serde_json::to_vec(&self.disk)?)
            .with_context(|| format!("could not write {}", path.display()))?;
        self.dirty = false;
        Ok(())
    }
}

/// How much of a transcript is looked at to learn who wrote it.
pub const HEAD_BYTES: u64 = 256 << 10;

/// Bytes of over-long lines `read_head` skips at most before it gives up on a file.
pub const HEAD_SKIP: u64 = 64 << 20;

/// Who wrote the file: its first whole lines, [`HEAD_BYTES`] of them at most, are fed to a
/// [`FileState`] until one names the team. A line longer than [`HEAD_BYTES`] (a prompt of
/// megabytes, pasted) is skipped, not kept, so that the lines after it still tell: up to
/// [`HEAD_SKIP`] bytes of such lines.
fn read_head(mut f: File) -> io::Result<Head> {
    let meta = f.metadata()?;
    let mut state = FileState::default();
    let mut line: Vec<u8> = Vec::new();
    // Inside a line too long to look at.
    let mut long = false;
    let (mut read, mut looked) = (0u64, 0u64);
    let mut buf = vec![0u8; 64 << 10];
    'file: while looked < HEAD_BYTES && read < HEAD_BYTES + HEAD_SKIP {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        read += n as u64;
        let mut rest = &buf[..n];
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            if !long {
                line.extend_from_slice(&rest[..i]);
                looked += line.len() as u64 + 1;
                state.feed(&line);
                if state.team.is_some() || looked >= HEAD_BYTES {
                    break 'file;
                }
            }
            line.clear();
            long = false;
            rest = &rest[i + 1..];
        }
        if !long {
            line.extend_from_slice(rest);
            if line.len() as u64 > HEAD_BYTES {
                line = Vec::new();
                long = true;
            }
        }
    }
    Ok(Head {
        dev: meta.dev(),
        ino: meta.ino(),
        // Looked at again only when it grows and was read whole (see `head`).
        len: read,
        team: state.team,
        agent: state.agent,
        first_at: state.first_at,
        session_id: state.session_id,
        first_from: state.first_from.filter(|f| !f.is_empty()),
    })
}

/// Writes `bytes` as [`FILE_NAME`] in the private `data_dir`, through a handle on it: a new
/// temp file (`O_CREAT | O_EXCL | O_NOFOLLOW`, 0600) renamed over the old index. An index file
/// that is not a regular file is refused and left alone. (No fsync: it is a cache, and one
/// that does not parse counts as empty.)
fn write_private(data_dir: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = private_dir(data_dir)?;
    dir.expect_file(FILE_NAME)?;
    let tmp = format!("{FILE_NAME}.tmp.{}", id::temp_suffix());
    let written = dir
        .create_new(&tmp, 0o600)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| dir.rename(&tmp, FILE_NAME));
    if written.is_err() {
        let _ = dir.unlink(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn saved_private_reloaded_and_corrupt_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let root = Loc::root(dir.path());
        let t = root.join("t.jsonl");
        fs::write(
            &t,
            "{\"type\":\"assistant\",\"message\":{\"id\":\"m\",\"model\":\"claude-opus-5-5\",\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}}\n",
        )
        .unwrap();
        let mut ix = Index::load(Some(&data));
        assert_eq!(ix.update(&t).1, Update::Grew);
        ix.save().unwrap();
        let file = data.join(FILE_NAME);
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::metadata(&data).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let mut again = Index::load(Some(&data));
        let before = again.get(&t).unwrap().clone();
        let (st, up) = again.update(&t);
        assert_eq!(up, Update::Unchanged);
        assert_eq!(*st, before);
        assert_eq!(st.spend.tokens().input, 10);
        // Nothing changed: nothing written.
        let mtime = fs::metadata(&file).unwrap().modified().unwrap();
        again.save().unwrap();
        fs::write(&file, "{not json").unwrap();
        let mut corrupt = Index::load(Some(&data));
        assert!(corrupt.get(&t).is_none());
        assert_eq!(corrupt.update(&t).0.spend.tokens().output, 5);
        corrupt.save().unwrap();
        assert!(fs::metadata(&file).unwrap().modified().unwrap() >= mtime);
        assert!(Index::load(Some(&data)).get(&t).is_some());
        // A file that is gone is dropped at the next save that changes something.
        fs::remove_file(&t).unwrap();
        let other = root.join("u.jsonl");
        fs::write(
            &other,
            "{\"type\":\"user\",\"message\":{\"content\":\"x\"}}\n",
        )
        .unwrap();
        let mut ix = Index::load(Some(&data));
        ix.update(&other);
        ix.save().unwrap();
        let ix = Index::load(Some(&data));
        assert!(ix.get(&t).is_none() && ix.get(&other).is_some());
        // No temp files left behind.
        let names: Vec<String> = fs::read_dir(&data)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [FILE_NAME]);
    }

    #[test]
    fn an_index_that_is_not_a_regular_file_is_neither_read_nor_written() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        fs::create_dir(&data).unwrap();
        let root = Loc::root(dir.path());
        let t = root.join("t.jsonl");
        fs::write(&t, "{\"type\":\"user\",\"message\":{\"content\":\"x\"}}\n").unwrap();
        // A symlink to a file outside: never followed, never replaced.
        let outside = dir.path().join("outside.json");
        let planted = r#"{"schema_version":1,"generation":1,"files":{},"heads":{}}"#;
        fs::write(&outside, planted).unwrap();
        std::os::unix::fs::symlink(&outside, data.join(FILE_NAME)).unwrap();
        let mut ix = Index::load(Some(&data));
        assert!(ix.refused.as_deref().unwrap().contains("is a symlink"));
        ix.update(&t);
        let err = ix.save().unwrap_err().to_string();
        assert!(err.contains("transcripts.json is a symlink"), "{err}");
        assert!(
            fs::symlink_metadata(data.join(FILE_NAME))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(fs::read_to_string(&outside).unwrap(), planted);
        // A FIFO: refused without blocking.
        fs::remove_file(data.join(FILE_NAME)).unwrap();
        crate::store::dir::mkfifo(data.join(FILE_NAME));
        let mut ix = Index::load(Some(&data));
        ix.update(&t);
        assert!(ix.save().unwrap_err().to_string().contains("FIFO"));
        // A transcript that is a symlink is never read.
        let secret = dir.path().join("secret.jsonl");
        fs::write(&secret, "{\"type\":\"assistant\",\"message\":{\"id\":\"m\",\"model\":\"claude-opus-5-5\",\"usage\":{\"input_tokens\":7}}}\n").unwrap();
        let link = root.join("link.jsonl");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let mut ix = Index::in_memory();
        let (st, up) = ix.update(&link);
        assert_eq!((up, st.offset), (Update::Missing, 0));
        let w = ix.take_warnings();
        assert!(
            w[0].starts_with("skipped ") && w[0].contains("is a symlink"),
            "{w:?}"
        );
    }

    #[test]
    fn a_first_line_longer_than_the_head_does_not_hide_its_writer() {
        let dir = tempfile::tempdir().unwrap();
        let root = Loc::root(dir.path());
        let t = root.join("t.jsonl");
        let named = r#"{"type":"user","teamName":"t","agentName":"alice","timestamp":"2026-11-29T10:00:00.000Z","message":{"role":"user","content":"go"}}"#;
        let huge = format!(
            "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"{}\"}}}}",
            "x".repeat(3 * HEAD_BYTES as usize)
        );
        fs::write(t.path(), format!("{huge}\n{named}\n")).unwrap();
        let info = t.stat().unwrap().unwrap();
        let h = Index::in_memory().head(&t, &info).unwrap();
        assert_eq!(
            (h.team.as_deref(), h.agent.as_deref()),
            (Some("t"), Some("alice"))
        );
        // A file of nothing but over-long lines is given up on after HEAD_SKIP.
        let u = root.join("u.jsonl");
        let line = "y".repeat(HEAD_BYTES as usize * 2) + "\n";
        let mut f = fs::File::create(u.path()).unwrap();
        for _ in 0..((HEAD_SKIP / HEAD_BYTES) / 2 + 4) {
            f.write_all(line.as_bytes()).unwrap();
        }
        let info = u.stat().unwrap().unwrap();
        let h = Index::in_memory().head(&u, &info).unwrap();
        assert_eq!(h.team, None);
        assert!(
            h.len >= HEAD_BYTES + HEAD_SKIP && h.len < info.size,
            "{}",
            h.len
        );
    }
}
