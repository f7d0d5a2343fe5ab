//! An open folder ([`Dir`]) and what is done through it: files opened, read, created, renamed,
//! linked and removed by one name below it, never following a symlink.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::io::Errno;

use super::kind::{Info, Kind, annotate, is_plain, unexpected};

/// An open folder below a trusted root (see the module docs). Every method resolves exactly
/// one plain name below it and never follows a symlink there.
#[derive(Debug)]
pub struct Dir {
    pub(super) fd: OwnedFd,
    pub(super) path: PathBuf,
}

impl Dir {
    /// The folder's path (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A second handle on the same folder.
    ///
    /// # Errors
    /// When the descriptor cannot be duplicated.
    pub fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            fd: self.fd.try_clone()?,
            path: self.path.clone(),
        })
    }

    pub(super) fn name<'a>(&self, name: &'a OsStr) -> io::Result<&'a OsStr> {
        if is_plain(name) {
            Ok(name)
        } else {
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "refusing the name {:?} in {}: not a plain name",
                    name.to_string_lossy(),
                    self.path.display()
                ),
            ))
        }
    }

    /// Why opening `name` as `wanted` failed with `e`: what is there instead, when that is the
    /// reason.
    pub(super) fn explain(&self, name: &OsStr, e: Errno, wanted: Kind) -> io::Error {
        let path = self.path.join(name);
        if matches!(
            e,
            Errno::LOOP | Errno::NOTDIR | Errno::NXIO | Errno::ISDIR | Errno::MLINK
        ) && let Ok(Some(info)) = self.stat(name)
            && info.kind != wanted
        {
            return unexpected(path, info.kind, wanted);
        }
        annotate(e, &path)
    }

    /// The folder `name` in this one.
    ///
    /// # Errors
    /// `NotFound`; an [`Unexpected`](super::Unexpected) when it is a symlink or not a folder; other I/O errors.
    pub fn sub(&self, name: impl AsRef<OsStr>) -> io::Result<Dir> {
        let name = self.name(name.as_ref())?;
        match rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY
                | OFlags::DIRECTORY
                | OFlags::NOFOLLOW
                | OFlags::CLOEXEC
                | OFlags::NONBLOCK,
            Mode::empty(),
        ) {
            Ok(fd) => Ok(Dir {
                fd,
                path: self.path.join(name),
            }),
            Err(e) => Err(self.explain(name, e, Kind::Dir)),
        }
    }

    /// The folder `name` in this one, made (with `mode` & ~umask) when missing.
    ///
    /// # Errors
    /// As [`Dir::sub`], and a failed `mkdir`.
    pub fn sub_create(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<Dir> {
        let name = name.as_ref();
        match self.sub(name) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => match self.mkdir(name, mode) {
                Ok(()) => self.sub(name),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => self.sub(name),
                Err(e) => Err(e),
            },
            other => other,
        }
    }

    /// What `name` is, not following a symlink; `None` when it does not exist.
    ///
    /// # Errors
    /// I/O errors other than `ENOENT`.
    pub fn stat(&self, name: impl AsRef<OsStr>) -> io::Result<Option<Info>> {
        let name = self.name(name.as_ref())?;
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(Info::of(&st))),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(annotate(e, &self.path.join(name))),
        }
    }

    /// Requires `name`, when it exists, to be a regular file (checked without opening it).
    ///
    /// # Errors
    /// An [`Unexpected`](super::Unexpected) naming what it is instead; I/O errors.
    pub fn expect_file(&self, name: impl AsRef<OsStr>) -> io::Result<Option<Info>> {
        let name = name.as_ref();
        match self.stat(name)? {
            Some(i) if i.kind != Kind::File => {
                Err(unexpected(self.path.join(name), i.kind, Kind::File))
            }
            other => Ok(other),
        }
    }

    /// Opens the regular file `name` for reading; `None` when it does not exist. It is looked
    /// at first (so a FIFO or a device is not even opened), then opened with `O_NOFOLLOW |
    /// O_NONBLOCK` (which never blocks) and checked again with `fstat`, which decides.
    ///
    /// # Errors
    /// An [`Unexpected`](super::Unexpected) for a symlink, folder, FIFO, socket or device; I/O errors.
    pub fn open_file(&self, name: impl AsRef<OsStr>) -> io::Result<Option<File>> {
        let name = self.name(name.as_ref())?;
        if self.expect_file(name)?.is_none() {
            return Ok(None);
        }
        let fd = match rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        ) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(self.explain(name, e, Kind::File)),
        };
        self.regular(fd, name).map(Some)
    }

    /// `fd` as a `File` once `fstat` says it is a regular file.
    pub(super) fn regular(&self, fd: OwnedFd, name: &OsStr) -> io::Result<File> {
        let st = rustix::fs::fstat(&fd).map_err(|e| annotate(e, &self.path.join(name)))?;
        let info = Info::of(&st);
        if info.kind != Kind::File {
            return Err(unexpected(self.path.join(name), info.kind, Kind::File));
        }
        Ok(File::from(fd))
    }

    /// The bytes of the regular file `name`; `None` when it does not exist.
    ///
    /// # Errors
    /// As [`Dir::open_file`].
    pub fn read(&self, name: impl AsRef<OsStr>) -> io::Result<Option<Vec<u8>>> {
        match self.open_file(name)? {
            Some(f) => read_all(f).map(Some),
            None => Ok(None),
        }
    }

    /// Creates the new file `name` (`O_CREAT | O_EXCL | O_NOFOLLOW`, `mode` & ~umask), for
    /// writing.
    ///
    /// # Errors
    /// `AlreadyExists` when anything (a symlink too) has that name; I/O errors.
    pub fn create_new(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<File> {
        let name = self.name(name.as_ref())?;
        rustix::fs::openat(
            &self.fd,
            name,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode as _),
        )
        .map(File::from)
        .map_err(|e| annotate(e, &self.path.join(name)))
    }

    /// Opens the regular file `name` for appending, creating it (`mode` & ~umask) when missing;
    /// a symlink, FIFO, socket or device there is refused without blocking.
    ///
    /// # Errors
    /// An [`Unexpected`](super::Unexpected) for anything but a regular file; I/O errors.
    pub fn open_append(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<File> {
        self.open_writable(name.as_ref(), OFlags::APPEND, mode)
    }

    /// Opens the regular file `name` for reading and writing without truncating it, creating it
    /// (`mode` & ~umask) when missing (a lock file); refused as [`Dir::open_append`] refuses.
    ///
    /// # Errors
    /// As [`Dir::open_append`].
    pub fn open_or_create(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<File> {
        self.open_writable(name.as_ref(), OFlags::empty(), mode)
    }

    pub(super) fn open_writable(&self, name: &OsStr, extra: OFlags, mode: u32) -> io::Result<File> {
        let name = self.name(name)?;
        self.expect_file(name)?;
        let access = if extra.contains(OFlags::APPEND) {
            OFlags::WRONLY
        } else {
            OFlags::RDWR
        };
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            access
                | OFlags::CREATE
                | OFlags::NOFOLLOW
                | OFlags::NONBLOCK
                | OFlags::NOCTTY
                | OFlags::CLOEXEC
                | extra,
            Mode::from_raw_mode(mode as _),
        )
        .map_err(|e| self.explain(name, e, Kind::File))?;
        self.regular(fd, name)
    }

    /// `renameat(from, to)` within this folder (replacing `to`, never following it).
    ///
    /// # Errors
    /// I/O errors.
    pub fn rename(&self, from: impl AsRef<OsStr>, to: impl AsRef<OsStr>) -> io::Result<()> {
        let (from, to) = (self.name(from.as_ref())?, self.name(to.as_ref())?);
        rustix::fs::renameat(&self.fd, from, &self.fd, to).map_err(|e| {
            io::Error::new(
                io::Error::from(e).kind(),
                format!(
                    "could not rename {} to {}: {}",
                    self.path.join(from).display(),
                    to.to_string_lossy(),
                    io::Error::from(e)
                ),
            )
        })
    }

    /// `linkat(from, to)` within this folder: fails with `AlreadyExists` when `to` exists.
    ///
    /// # Errors
    /// I/O errors.
    pub fn hard_link(&self, from: impl AsRef<OsStr>, to: impl AsRef<OsStr>) -> io::Result<()> {
        let (from, to) = (self.name(from.as_ref())?, self.name(to.as_ref())?);
        rustix::fs::linkat(&self.fd, from, &self.fd, to, AtFlags::empty())
            .map_err(|e| annotate(e, &self.path.join(to)))
    }

    /// `mkdirat(name, mode)`.
    ///
    /// # Errors
    /// `AlreadyExists` when anything has that name; I/O errors.
    pub fn mkdir(&self, name: impl AsRef<OsStr>, mode: u32) -> io::Result<()> {
        let name = self.name(name.as_ref())?;
        rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(mode as _))
            .map_err(|e| annotate(e, &self.path.join(name)))
    }

    /// `unlinkat(name, AT_REMOVEDIR)`: removes the empty folder `name`.
    ///
    /// # Errors
    /// I/O errors (`NotFound` when it is gone).
    pub fn rmdir(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        let name = self.name(name.as_ref())?;
        rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR)
            .map_err(|e| annotate(e, &self.path.join(name)))
    }

    /// `unlinkat(name)`: removes the file (or symlink) `name`.
    ///
    /// # Errors
    /// I/O errors (`NotFound` when it is gone).
    pub fn unlink(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        let name = self.name(name.as_ref())?;
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())
            .map_err(|e| annotate(e, &self.path.join(name)))
    }

    /// Sets the access and modification times of the folder `name` to `t` (to the nanosecond,
    /// as far as the file system keeps them) and returns what `fstat` then reports about that
    /// very folder: the mtime the file system kept, its device and inode.
    ///
    /// # Errors
    /// As [`Dir::sub`]; I/O errors.
    pub fn set_dir_times(&self, name: impl AsRef<OsStr>, t: SystemTime) -> io::Result<Info> {
        let sub = self.sub(name.as_ref())?;
        let f = File::from(sub.fd);
        f.set_times(std::fs::FileTimes::new().set_accessed(t).set_modified(t))?;
        let st = rustix::fs::fstat(&f)?;
        Ok(Info::of(&st))
    }

    /// An exclusive OS lock (`flock`) on this folder, for teamctl's processes only (Claude Code
    /// never calls `flock`): taken through a descriptor of its own, opened read-only, so that
    /// two handles on the folder exclude each other even within one process, and nothing is
    /// written. Tried until `wait` has passed; `Ok(None)` when it stays held that long. Held
    /// until the returned file is dropped.
    ///
    /// # Errors
    /// When the folder cannot be opened again, or the file system refuses `flock`.
    pub fn lock_folder(&self, wait: Duration) -> io::Result<Option<File>> {
        let fd = rustix::fs::openat(
            &self.fd,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| annotate(e, &self.path))?;
        let f = File::from(fd);
        // Holders keep it for a stat, an rmdir and a mkdir: poll finely, then every millisecond.
        let pauses = (Duration::from_micros(50), Duration::from_millis(1));
        Ok(flock_within(&f, wait, pauses)?.then_some(f))
    }

    /// The names in this folder (not `.` and `..`), in directory order.
    ///
    /// # Errors
    /// I/O errors.
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        let mut dir = rustix::fs::Dir::read_from(&self.fd).map_err(|e| annotate(e, &self.path))?;
        let mut out = Vec::new();
        for entry in &mut dir {
            let entry = entry.map_err(|e| annotate(e, &self.path))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name != "." && name != ".." {
                out.push(name.to_owned());
            }
        }
        Ok(out)
    }

    /// `fsync` of the folder (makes a rename in it durable).
    ///
    /// # Errors
    /// I/O errors.
    pub fn sync(&self) -> io::Result<()> {
        rustix::fs::fsync(&self.fd).map_err(|e| annotate(e, &self.path))
    }

    /// Removes `name` and, when it is a folder, everything in it, never following a symlink
    /// (a symlink is removed as the link). `Ok(())` when it is missing.
    ///
    /// # Errors
    /// I/O errors.
    pub fn remove_tree(&self, name: impl AsRef<OsStr>) -> io::Result<()> {
        let name = self.name(name.as_ref())?;
        match self.stat(name)? {
            None => Ok(()),
            Some(i) if i.kind == Kind::Dir => {
                let sub = self.sub(name)?;
                for n in sub.names()? {
                    sub.remove_tree(&n)?;
                }
                drop(sub);
                match self.rmdir(name) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    other => other,
                }
            }
            Some(_) => match self.unlink(name) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                other => other,
            },
        }
    }
}

impl AsFd for Dir {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// The bytes of the regular file at `path`, a file outside any trusted root that is only read
/// (a project's `.claude/settings.json`): as [`open_regular`]. `None` when it does not exist.
///
/// # Errors
/// An [`Unexpected`](super::Unexpected) for anything but a regular file; I/O errors.
pub fn read_regular(path: &Path) -> io::Result<Option<Vec<u8>>> {
    open_regular(path)?.map(read_all).transpose()
}

/// Opens the regular file at `path` for reading, a file outside any trusted root (one the user
/// named, a project's settings): symlinks are followed, but a FIFO, socket or device is an
/// error and opening never blocks. `None` when it does not exist.
///
/// # Errors
/// An [`Unexpected`](super::Unexpected) for anything but a regular file; I/O errors.
pub fn open_regular(path: &Path) -> io::Result<Option<File>> {
    // Looked at first, so a FIFO or a device is not even opened; the fstat below decides.
    match rustix::fs::stat(path) {
        Ok(st) if Info::of(&st).kind != Kind::File => {
            return Err(unexpected(
                path.to_path_buf(),
                Info::of(&st).kind,
                Kind::File,
            ));
        }
        Err(Errno::NOENT) => return Ok(None),
        _ => {}
    }
    let fd = match rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(e) => return Err(annotate(e, path)),
    };
    let info = Info::of(&rustix::fs::fstat(&fd).map_err(|e| annotate(e, path))?);
    if info.kind != Kind::File {
        return Err(unexpected(path.to_path_buf(), info.kind, Kind::File));
    }
    Ok(Some(File::from(fd)))
}

/// Reads `f` to its end (sized up front from its length).
pub(super) fn read_all(mut f: File) -> io::Result<Vec<u8>> {
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut buf = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
    f.read_to_end(&mut buf)?;
    Ok(buf)
}

/// Makes a FIFO at `path` (for tests: rustix has no `mkfifoat` on macOS).
#[cfg(test)]
pub(crate) fn mkfifo(path: impl AsRef<Path>) {
    let c = std::ffi::CString::new(path.as_ref().as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo keeps no pointer.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {}",
        path.as_ref().display()
    );
}

/// How long teamctl waits for the OS lock of a file of its own (the sent log and its answer
/// lock, a journal, the webhook's replay cache). A holder keeps it for one write or one check,
/// but a holder that is stopped (Ctrl-Z, `SIGSTOP`) keeps it for as long as it stays stopped:
/// a wait without end would outlast every `--timeout` of the command that waits.
pub const OWN_LOCK_WAIT: Duration = Duration::from_secs(10);

/// An exclusive OS lock (`flock`) on `f`, a file of teamctl's own, waited for at most `wait`
/// (tried every millisecond at first, then less often, up to every 50 ms).
///
/// # Errors
/// `TimedOut` when another process holds it all that while (saying so); what `flock` says.
pub fn lock_own_file(f: &File, wait: Duration) -> io::Result<()> {
    let pauses = (Duration::from_millis(1), Duration::from_millis(50));
    if flock_within(f, wait, pauses)? {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "another process held its lock for {} s (a teamctl stopped with Ctrl-Z or SIGSTOP \
             keeps it until it goes on: `fg`, or `kill -CONT` it)",
            wait.as_secs_f64()
        ),
    ))
}

/// Tries an exclusive `flock` on `f` until `wait` has passed, sleeping `pauses.0` at first and
/// twice as long each time after, up to `pauses.1`; `Ok(false)` when it stays held that long.
fn flock_within(f: &File, wait: Duration, pauses: (Duration, Duration)) -> io::Result<bool> {
    let end = std::time::Instant::now() + wait;
    let mut pause = pauses.0;
    loop {
        match f.try_lock() {
            Ok(()) => return Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
        let now = std::time::Instant::now();
        if now >= end {
            return Ok(false);
        }
        std::thread::sleep(pause.min(end - now));
        pause = (pause * 2).min(pauses.1);
    }
}
