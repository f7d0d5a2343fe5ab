//! Where an export goes: a folder, or a gzipped tar archive (`.tar.gz`, `.tgz`), written beside
//! its final place under a temporary name and moved into it once whole (never over anything
//! that took the name meanwhile), so a reader never sees half a record and a failed export
//! leaves nothing behind.
//!
//! A record is no more readable than what it copies (inboxes, transcripts, the sent log are the
//! user's alone): its folders are made 0700, its files and an archive 0600, and the files inside
//! an archive carry mode 0600.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result, bail};
use flate2::Compression;
use flate2::write::GzEncoder;

/// The form of a bundle, from its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// A folder.
    Folder,
    /// A gzipped tar archive holding one folder.
    TarGz,
}

impl Format {
    /// `tar_gz` when `path` ends in `.tar.gz` or `.tgz`, else `folder`.
    pub fn of(path: &Path) -> Format {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
            Format::TarGz
        } else {
            Format::Folder
        }
    }
}

/// The mode of a record's files and of an archive (before the umask).
const FILE_MODE: u32 = 0o600;

/// The mode of a record's folders (before the umask).
const DIR_MODE: u32 = 0o700;

/// A bundle being written.
pub(crate) struct Bundle {
    out: PathBuf,
    tmp: PathBuf,
    kind: Kind,
    written: u64,
}

enum Kind {
    Folder,
    TarGz {
        tar: Box<tar::Builder<GzEncoder<BufWriter<File>>>>,
        root: String,
    },
}

impl Bundle {
    /// Starts a bundle at `out` (see [`Format::of`]). `out` must not exist: nothing is ever
    /// written over or into what is there, an empty folder included.
    ///
    /// # Errors
    /// `out` exists, its parent cannot be made, I/O.
    pub(crate) fn create(out: &Path) -> Result<Bundle> {
        let format = Format::of(out);
        match fs::symlink_metadata(out) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Ok(_) => bail!(
                "{} already exists; give a path that does not exist yet (or remove it)",
                out.display()
            ),
            Err(e) => return Err(e).with_context(|| format!("could not check {}", out.display())),
        }
        let Some(name) = out.file_name() else {
            bail!("--out {} names no file or folder", out.display());
        };
        let parent = out.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(p) = parent {
            fs::create_dir_all(p).with_context(|| format!("could not create {}", p.display()))?;
        }
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".partial-{}", uuid::Uuid::new_v4().simple()));
        let tmp = out.with_file_name(tmp_name);
        let kind = match format {
            Format::Folder => {
                fs::DirBuilder::new()
                    .mode(DIR_MODE)
                    .create(&tmp)
                    .with_context(|| format!("could not create {}", tmp.display()))?;
                Kind::Folder
            }
            Format::TarGz => {
                let f = File::options()
                    .write(true)
                    .create_new(true)
                    .mode(FILE_MODE)
                    .open(&tmp)
                    .with_context(|| format!("could not create {}", tmp.display()))?;
                let gz = GzEncoder::new(BufWriter::new(f), Compression::default());
                let mut tar = tar::Builder::new(gz);
                tar.mode(tar::HeaderMode::Deterministic);
                let root = name.to_string_lossy();
                let root = root
                    .strip_suffix(".tar.gz")
                    .or_else(|| root.strip_suffix(".tgz"))
                    .or_else(|| root.strip_suffix(".TAR.GZ"))
                    .unwrap_or(&root)
                    .to_string();
                Kind::TarGz {
                    tar: Box::new(tar),
                    root,
                }
            }
        };
        Ok(Bundle {
            out: out.to_path_buf(),
            tmp,
            kind,
            written: 0,
        })
    }

    /// Adds the file `rel` (a relative path of `/`-separated plain names teamctl chose).
    ///
    /// # Errors
    /// I/O.
    pub(crate) fn add(&mut self, rel: &str, bytes: &[u8], mtime: Option<SystemTime>) -> Result<()> {
        self.add_reader(rel, bytes.len() as u64, mtime, &mut &bytes[..])
    }

    /// Adds the file `rel` with the `len` bytes `reader` gives.
    ///
    /// # Errors
    /// I/O, or a reader that ends before `len` bytes.
    pub(crate) fn add_reader(
        &mut self,
        rel: &str,
        len: u64,
        mtime: Option<SystemTime>,
        reader: &mut dyn io::Read,
    ) -> Result<()> {
        debug_assert!(
            rel.split('/')
                .all(|p| !p.is_empty() && p != "." && p != "..")
        );
        let fail = || format!("could not write {rel} into {}", self.out.display());
        let mut exact = Exact {
            inner: reader,
            left: len,
        };
        match &mut self.kind {
            Kind::Folder => {
                let path = self.tmp.join(rel);
                if let Some(dir) = path.parent() {
                    fs::DirBuilder::new()
                        .recursive(true)
                        .mode(DIR_MODE)
                        .create(dir)
                        .with_context(fail)?;
                }
                let mut f = File::options()
                    .write(true)
                    .create_new(true)
                    .mode(FILE_MODE)
                    .open(&path)
                    .with_context(fail)?;
                io::copy(&mut exact, &mut f).with_context(fail)?;
                if let Some(t) = mtime {
                    let _ = f.set_modified(t);
                }
            }
            Kind::TarGz { tar, root } => {
                let mut h = tar::Header::new_gnu();
                h.set_size(len);
                h.set_mode(FILE_MODE);
                h.set_entry_type(tar::EntryType::Regular);
                let secs = mtime
                    .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs());
                h.set_mtime(secs);
                tar.append_data(&mut h, format!("{root}/{rel}"), &mut exact)
                    .with_context(fail)?;
            }
        }
        if exact.left > 0 {
            return Err(io::Error::from(io::ErrorKind::UnexpectedEof)).with_context(fail);
        }
        self.written += len;
        Ok(())
    }

    /// Adds the file `rel` that `write` writes, never held whole: `write` runs twice, once to
    /// count its bytes (an archive's header comes first) and once, on a thread, to hand them
    /// through a pipe to [`Bundle::add_reader`]; it must write the same bytes both times.
    ///
    /// # Errors
    /// I/O, `write` failing, or writing other bytes the second time.
    pub(crate) fn add_written(
        &mut self,
        rel: &str,
        mtime: Option<SystemTime>,
        write: &(dyn Fn(&mut dyn Write) -> io::Result<()> + Sync),
    ) -> Result<()> {
        let mut count = Count(0);
        write(&mut count).with_context(|| format!("could not write {rel}"))?;
        let (mut from, to) = io::pipe().context("could not open a pipe")?;
        std::thread::scope(|s| {
            let writer = s.spawn(move || {
                let mut w = io::BufWriter::with_capacity(64 * 1024, to);
                write(&mut w)?;
                w.flush()
            });
            let added = self.add_reader(rel, count.0, mtime, &mut from);
            // A writer with more to say than was counted is stopped (a broken pipe).
            drop(from);
            let wrote = writer
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("its writer panicked")));
            match (added, wrote) {
                // The writer's own failure says why the bytes stopped short.
                (_, Err(e)) if e.kind() != io::ErrorKind::BrokenPipe => {
                    Err(e).with_context(|| format!("could not write {rel}"))
                }
                (Err(e), _) => Err(e),
                (Ok(()), Err(_)) => {
                    bail!("could not write {rel}: it came out longer the second time")
                }
                (Ok(()), Ok(())) => Ok(()),
            }
        })
    }

    /// Bytes added so far.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Finishes the bundle and moves it to its place; returns its size on disk.
    ///
    /// # Errors
    /// I/O (the temporary bundle is removed).
    pub(crate) fn finish(mut self) -> Result<u64> {
        let done = (|| -> Result<u64> {
            let kind = std::mem::replace(&mut self.kind, Kind::Folder);
            let size = match kind {
                Kind::Folder => {
                    File::open(&self.tmp)?.sync_all()?;
                    self.written
                }
                Kind::TarGz { tar, .. } => {
                    let gz = tar.into_inner()?;
                    let f = gz.finish()?.into_inner().map_err(|e| e.into_error())?;
                    f.sync_all()?;
                    f.metadata()?.len()
                }
            };
            rename_new(&self.tmp, &self.out)?;
            if let Some(dir) = self.out.parent().filter(|p| !p.as_os_str().is_empty()) {
                let _ = File::open(dir).and_then(|d| d.sync_all());
            }
            Ok(size)
        })();
        done.with_context(|| format!("could not write {}", self.out.display()))
    }
}

/// Moves `from` to `to`, never over what took that name since [`Bundle::create`] looked (a
/// folder, a file, a link): `renameat2(RENAME_NOREPLACE)` (macOS: `renameatx_np(RENAME_EXCL)`),
/// or where the file system has no such rename, a look and a plain rename.
fn rename_new(from: &Path, to: &Path) -> Result<()> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    use rustix::io::Errno;
    let taken = || {
        anyhow::anyhow!(
            "it appeared while the record was written; give a path that does not exist yet"
        )
    };
    match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(()),
        Err(Errno::EXIST) => Err(taken()),
        // macOS's renameatx_np says ENOTSUP where Linux says EOPNOTSUPP (one number there).
        Err(e) if [Errno::INVAL, Errno::NOSYS, Errno::OPNOTSUPP, Errno::NOTSUP].contains(&e) => {
            if fs::symlink_metadata(to).is_ok() {
                return Err(taken());
            }
            Ok(fs::rename(from, to)?)
        }
        Err(e) => Err(io::Error::from(e).into()),
    }
}

/// Counts the bytes written to it.
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A reader cut at exactly `left` bytes; one that ends sooner is an error.
struct Exact<'a> {
    inner: &'a mut dyn io::Read,
    left: u64,
}

impl io::Read for Exact<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        let max = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..max])?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file shrank while it was copied",
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

impl Drop for Bundle {
    fn drop(&mut self) {
        // Not finished (an error, a panic): leave nothing behind.
        if self.tmp.exists() {
            let _ = fs::remove_dir_all(&self.tmp).or_else(|_| fs::remove_file(&self.tmp));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_folder_and_an_archive() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("rec");
        let mut b = Bundle::create(&out).unwrap();
        b.add("a/b.json", b"[]", None).unwrap();
        assert!(!out.exists(), "in place only once finished");
        b.finish().unwrap();
        assert_eq!(fs::read(out.join("a/b.json")).unwrap(), b"[]");
        // As private as what it copies, whatever the umask lets through.
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&out) & 0o077, 0);
        assert_eq!(mode(&out.join("a")) & 0o077, 0);
        assert_eq!(mode(&out.join("a/b.json")) & 0o077, 0);
        assert!(
            Bundle::create(&out).is_err(),
            "never over an earlier record"
        );
        // Not into an empty folder either (its owner chose its mode).
        let empty = dir.path().join("empty");
        fs::create_dir(&empty).unwrap();
        assert!(Bundle::create(&empty).is_err());
        // A name taken while the record was written is not replaced.
        let late = dir.path().join("late");
        let b = Bundle::create(&late).unwrap();
        fs::create_dir(&late).unwrap();
        let err = b.finish().unwrap_err();
        assert!(format!("{err:#}").contains("appeared"), "{err:#}");
        assert_eq!(fs::read_dir(&late).unwrap().count(), 0);

        let tgz = dir.path().join("sub/rec.tar.gz");
        let mut b = Bundle::create(&tgz).unwrap();
        b.add("x.txt", b"hello", None).unwrap();
        b.finish().unwrap();
        assert_eq!(mode(&tgz) & 0o077, 0);
        let mut names = Vec::new();
        let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(File::open(&tgz).unwrap()));
        for e in ar.entries().unwrap() {
            let mut e = e.unwrap();
            let mut s = String::new();
            e.read_to_string(&mut s).unwrap();
            names.push((e.path().unwrap().display().to_string(), s));
        }
        assert_eq!(names, [("rec/x.txt".to_string(), "hello".to_string())]);
        let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(File::open(&tgz).unwrap()));
        for e in ar.entries().unwrap() {
            assert_eq!(e.unwrap().header().mode().unwrap(), 0o600);
        }

        // Dropped unfinished: nothing left.
        let b = Bundle::create(&dir.path().join("gone.tgz")).unwrap();
        drop(b);
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("partial"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn a_file_written_as_it_is_made() {
        let dir = tempfile::tempdir().unwrap();
        let big: Vec<u8> = (0..300_000u32).flat_map(|i| i.to_le_bytes()).collect();
        let write = |w: &mut dyn Write| w.write_all(&big);
        for name in ["rec", "rec.tar.gz"] {
            let out = dir.path().join(name);
            let mut b = Bundle::create(&out).unwrap();
            b.add_written("summary.json", None, &write).unwrap();
            assert_eq!(b.written(), big.len() as u64);
            b.finish().unwrap();
            let got = if name == "rec" {
                fs::read(out.join("summary.json")).unwrap()
            } else {
                let mut ar =
                    tar::Archive::new(flate2::read::GzDecoder::new(File::open(&out).unwrap()));
                let mut e = ar.entries().unwrap().next().unwrap().unwrap();
                assert_eq!(e.path().unwrap().display().to_string(), "rec/summary.json");
                let mut v = Vec::new();
                e.read_to_end(&mut v).unwrap();
                v
            };
            assert!(got == big, "{name}: the bytes written, whole");
        }

        // A writer that says more (or less) the second time is an error, and leaves nothing.
        for extra in [1usize, 0] {
            let calls = std::sync::atomic::AtomicUsize::new(0);
            let changing = |w: &mut dyn Write| {
                let n = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let len = if n == 0 {
                    100_000
                } else if extra == 1 {
                    200_000
                } else {
                    10
                };
                w.write_all(&vec![b'x'; len])
            };
            let out = dir.path().join(format!("changing-{extra}.tgz"));
            let mut b = Bundle::create(&out).unwrap();
            let err = b.add_written("summary.json", None, &changing).unwrap_err();
            let want = if extra == 1 { "longer" } else { "shrank" };
            assert!(format!("{err:#}").contains(want), "{err:#}");
            drop(b);
            assert!(!out.exists());
        }
    }
}
