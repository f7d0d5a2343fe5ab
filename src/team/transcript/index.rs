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
use std::fs::{self, DirBuilder, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::team::transcript::{FileState, Update};

/// The index's file name in the data dir.
pub const FILE_NAME: &str = "transcripts.json";

/// Entries kept at most.
pub const MAX_FILES: usize = 4096;

/// Above this many bytes left to read, [`Index::update_all`] reads files in parallel.
const PARALLEL_ABOVE: u64 = 32 << 20;

const SCHEMA: u32 = 1;

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
    path: Option<PathBuf>,
    disk: OnDisk,
    dirty: bool,
}

impl Index {
    /// Loads the index of `data_dir`; an empty one when there is no data dir, no index, or one
    /// that cannot be read.
    pub fn load(data_dir: Option<&Path>) -> Index {
        let path = data_dir.map(|d| d.join(FILE_NAME));
        let disk = path
            .as_deref()
            .and_then(|p| fs::read(p).ok())
            .and_then(|b| serde_json::from_slice::<OnDisk>(&b).ok())
            .filter(|d| d.schema_version == SCHEMA)
            .unwrap_or_default();
        Index {
            path,
            disk,
            dirty: false,
        }
    }

    /// An index kept in memory only.
    pub fn in_memory() -> Index {
        Index::default()
    }

    /// The state of `path` as last read (read again with [`Index::update`]).
    pub fn get(&self, path: &Path) -> Option<&FileState> {
        self.disk.files.get(path).map(|s| &s.state)
    }

    /// Reads what `path` gained and returns its state (an empty one when the file cannot be
    /// read).
    pub fn update(&mut self, path: &Path) -> (&FileState, Update) {
        let generation = self.disk.generation + 1;
        let stored = self
            .disk
            .files
            .entry(path.to_path_buf())
            .or_insert_with(|| Stored {
                seen: generation,
                state: FileState::default(),
            });
        // Recency only matters when something else makes the index worth writing.
        stored.seen = generation;
        let up = stored.state.update(path).unwrap_or(Update::Missing);
        if matches!(up, Update::Grew | Update::Reread) {
            self.dirty = true;
        }
        (&stored.state, up)
    }

    /// Reads what each of `paths` gained, several files at a time when there is much to read
    /// (a cold index: one thread per processor, at most one per file), so that a first read of
    /// gigabytes of transcripts goes at the speed of the disk rather than of one core.
    pub fn update_all(&mut self, paths: &[PathBuf]) {
        let generation = self.disk.generation + 1;
        let mut todo: Vec<(PathBuf, FileState, u64)> = Vec::new();
        let mut pending = 0u64;
        for p in paths {
            if todo.iter().any(|(q, _, _)| q == p) {
                continue;
            }
            let st = self
                .disk
                .files
                .remove(p)
                .map(|s| s.state)
                .unwrap_or_default();
            let len = fs::metadata(p).map(|m| m.len()).unwrap_or(0);
            let left = len.saturating_sub(st.offset);
            pending += left;
            todo.push((p.clone(), st, left));
        }
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .min(todo.len());
        if threads > 1 && pending > PARALLEL_ABOVE {
            // Biggest first, each thread taking the next file left.
            todo.sort_by_key(|t| std::cmp::Reverse(t.2));
            let queue = std::sync::Mutex::new(todo.iter_mut().collect::<Vec<_>>());
            let grew = std::sync::atomic::AtomicBool::new(false);
            std::thread::scope(|scope| {
                for _ in 0..threads {
                    scope.spawn(|| {
                        loop {
                            let next = queue.lock().map(|mut q| q.pop()).ok().flatten();
                            let Some((p, st, _)) = next else { break };
                            let up = st.update(p).unwrap_or(Update::Missing);
                            if matches!(up, Update::Grew | Update::Reread) {
                                grew.store(true, std::sync::atomic::Ordering::Relaxed);
                            }
                        }
                    });
                }
            });
            self.dirty |= grew.into_inner();
            for (p, state, _) in todo {
                self.disk.files.insert(
                    p,
                    Stored {
                        seen: generation,
                        state,
                    },
                );
            }
        } else {
            for (p, state, _) in todo {
                self.disk.files.insert(
                    p.clone(),
                    Stored {
                        seen: generation,
                        state,
                    },
                );
                self.update(&p);
            }
        }
    }

    /// Who wrote the transcript at `path`: its identity from the file's state when it was read,
    /// else from its first [`HEAD_BYTES`] bytes (looked at again only when the file changed and
    /// nothing was found yet).
    pub fn head(&mut self, path: &Path) -> Option<Head> {
        use std::os::unix::fs::MetadataExt;
        let meta = fs::metadata(path).ok()?;
        if let Some(s) = self.disk.files.get(path)
            && (s.state.dev, s.state.ino) == (meta.dev(), meta.ino())
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
            });
        }
        if let Some(h) = self.disk.heads.get(path)
            && (h.dev, h.ino) == (meta.dev(), meta.ino())
            && (h.team.is_some() || h.len >= HEAD_BYTES || h.len == meta.len())
        {
            return Some(h.clone());
        }
        let h = read_head(path, &meta).ok()?;
        self.disk.heads.insert(path.to_path_buf(), h.clone());
        self.dirty = true;
        Some(h)
    }

    /// Writes the index back if anything changed: entries whose file is gone are dropped, and the
    /// least recently used beyond [`MAX_FILES`].
    ///
    /// # Errors
    /// The data dir or the file cannot be written.
    pub fn save(&mut self) -> Result<()> {
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        if !self.dirty {
            return Ok(());
        }
        self.disk.generation += 1;
        self.disk.schema_version = SCHEMA;
        let generation = self.disk.generation;
        self.disk
            .files
            .retain(|p, s| s.seen == generation || p.exists());
        self.disk.heads.retain(|p, _| p.exists());
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
        write_private(&path, &serde_json::to_vec(&self.disk)?)
            .with_context(|| format!("could not write {}", path.display()))?;
        self.dirty = false;
        Ok(())
    }
}

/// How much of a transcript is looked at to learn who wrote it.
pub const HEAD_BYTES: u64 = 256 << 10;

fn read_head(path: &Path, meta: &fs::Metadata) -> io::Result<Head> {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    let mut buf = Vec::new();
    fs::File::open(path)?
        .take(HEAD_BYTES)
        .read_to_end(&mut buf)?;
    let mut state = FileState::default();
    // Only whole lines.
    let whole = buf.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    for line in buf[..whole].split(|&b| b == b'\n') {
        state.feed(line);
        if state.team.is_some() {
            break;
        }
    }
    Ok(Head {
        dev: meta.dev(),
        ino: meta.ino(),
        len: buf.len() as u64,
        team: state.team,
        agent: state.agent,
        first_at: state.first_at,
        session_id: state.session_id,
    })
}

/// Writes `bytes` to `path` through a private temp file beside it and a rename.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        if let Some(parent) = dir.parent() {
            fs::create_dir_all(parent)?;
        }
        match DirBuilder::new().mode(0o700).create(dir) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
    }
    let tmp = crate::store::paths::with_suffix(
        path,
        &format!(".tmp.{}.{:08x}", std::process::id(), rand32()),
    );
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes));
    match written.and_then(|()| fs::rename(&tmp, path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

fn rand32() -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&uuid::Uuid::new_v4().as_bytes()[..4]);
    u32::from_le_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn saved_private_reloaded_and_corrupt_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let t = dir.path().join("t.jsonl");
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
        let other = dir.path().join("u.jsonl");
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
}
