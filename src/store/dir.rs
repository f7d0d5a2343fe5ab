//! Files under a trusted root, reached without following a symlink at any component, and used
//! only when they are what they should be (a regular file, a folder).
//!
//! The root (the config dir, teamctl's data dir) is the user's choice and is opened as given,
//! symlinks and all. Every name below it is resolved one at a time with `openat` relative to the
//! folder handle opened before it: `O_DIRECTORY | O_NOFOLLOW` for a folder, `O_NOFOLLOW |
//! O_NONBLOCK` for a file, which is then used only once `fstat` says it is a regular file (a
//! FIFO, a socket or a device is an error naming it, and opening it never blocks). Every write
//! goes through such a folder handle too: `openat(O_CREAT | O_EXCL | O_NOFOLLOW)` for a new
//! file, `renameat`, `linkat`, `mkdirat`, `unlinkat`, `utimensat(AT_SYMLINK_NOFOLLOW)`.
//!
//! Why this cannot race: a handle names the folder it was opened on, not a path. Replacing a
//! component by a symlink after its handle was taken changes what the *path* names, never what
//! the handle names, and each later step resolves exactly one name below a handle, with
//! `O_NOFOLLOW` (or `AT_SYMLINK_NOFOLLOW`, or a call that never follows a final symlink:
//! `mkdirat`, `renameat`, `unlinkat`, `linkat` without `AT_SYMLINK_FOLLOW`, `O_CREAT | O_EXCL`).
//! A symlink planted at any moment is therefore refused or acted on as the link itself, never
//! followed. What remains is a folder *moved* elsewhere while teamctl holds its handle: teamctl
//! then finishes its write inside that same folder, which whoever moved it could write anyway.
//!
//! Names are checked too: a [`Loc`] is built from names that are single plain components (no
//! `/`, not `.` or `..`, not empty); anything else makes every operation on it fail.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::ops::Deref;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// A location below a trusted root: the root itself, then names that are each one plain path
/// component. Derefs to the whole path (for messages and for code that only shows it); every
/// file operation goes through [`Loc::open_dir`], [`Loc::parent_dir`] and the [`Dir`] they
/// return, which never follow a symlink below the root.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Loc {
    path: PathBuf,
    /// How many trailing components of `path` are below the root.
    depth: usize,
    /// Why this location is refused (a name that is not one plain component).
    bad: Option<String>,
}

impl Loc {
    /// The trusted root: opened as given, following symlinks (it is the user's choice).
    pub fn root(path: impl Into<PathBuf>) -> Loc {
        Loc {
            path: path.into(),
            depth: 0,
            bad: None,
        }
    }

    /// This location's `name` (one plain component; anything else gives a location every
    /// operation refuses).
    pub fn join(&self, name: impl AsRef<OsStr>) -> Loc {
        let name = name.as_ref();
        let (path, bad) = if is_plain(name) {
            (self.path.join(name), self.bad.clone())
        } else {
            let shown = format!("{:?}", name.to_string_lossy());
            let why = format!(
                "refusing the path component {shown} under {}: not a plain name",
                self.path.display()
            );
            (self.path.join(shown), Some(self.bad.clone().unwrap_or(why)))
        };
        Loc {
            path,
            depth: self.depth + 1,
            bad,
        }
    }

    /// The same location with `suffix` appended to its last name (`a.json` → `a.json.lock`).
    pub fn with_suffix(&self, suffix: &str) -> Loc {
        let Some(parent) = self.parent() else {
            let mut bad = self.clone();
            bad.bad = Some(format!(
                "refusing a suffix on the root {}",
                self.path.display()
            ));
            return bad;
        };
        let mut name = self.path.file_name().unwrap_or_default().to_owned();
        name.push(suffix);
        let mut loc = parent.join(name);
        if loc.bad.is_none() {
            loc.bad.clone_from(&self.bad);
        }
        loc
    }

    /// The folder this location is in, unless it is the root.
    pub fn parent(&self) -> Option<Loc> {
        let path = self.path.parent()?.to_path_buf();
        (self.depth > 0).then(|| Loc {
            path,
            depth: self.depth - 1,
            bad: self.bad.clone(),
        })
    }

    /// The last name (`None` for the root).
    pub fn name(&self) -> Option<&OsStr> {
        (self.depth > 0).then(|| self.path.file_name()).flatten()
    }

    /// The whole path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The root this location hangs from.
    pub fn root_path(&self) -> &Path {
        self.path.ancestors().nth(self.depth).unwrap_or(&self.path)
    }

    fn names(&self) -> Vec<&OsStr> {
        let mut names: Vec<&OsStr> = self
            .path
            .ancestors()
            .take(self.depth)
            .filter_map(Path::file_name)
            .collect();
        names.reverse();
        names
    }

    fn checked(&self) -> io::Result<()> {
        match &self.bad {
            Some(why) => Err(io::Error::new(io::ErrorKind::InvalidInput, why.clone())),
            None => Ok(()),
        }
    }

    /// Opens the folders of the first `n` names below the root, making missing ones when
    /// `create` (and the root itself, with its parents, as the user's umask makes them).
    fn walk(&self, n: usize, create: bool) -> io::Result<Dir> {
        self.checked()?;
        let root = self.root_path();
        if create && !root.exists() {
            std::fs::create_dir_all(root)?;
        }
        let fd = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .map_err(|e| annotate(e, root))?;
        let mut dir = Dir {
            fd,
            path: root.to_path_buf(),
        };
        for name in self.names().into_iter().take(n) {
            dir = if create {
                dir.sub_create(name, 0o777)?
            } else {
                dir.sub(name)?
            };
        }
        Ok(dir)
    }

    /// Opens this location as a folder.
    ///
    /// # Errors
    /// `NotFound` when it or a folder on the way is missing; an error naming the component that
    /// is a symlink or not a folder.
    pub fn open_dir(&self) -> io::Result<Dir> {
        self.walk(self.depth, false)
    }

    /// Opens this location as a folder, making it and the folders on the way when missing.
    ///
    /// # Errors
    /// As [`Loc::open_dir`], and a failed `mkdir`.
    pub fn create_dir_all(&self) -> io::Result<Dir> {
        self.walk(self.depth, true)
    }

    /// Opens the folder this location is in.
    ///
    /// # Errors
    /// As [`Loc::open_dir`]; the root has no folder here.
    pub fn parent_dir(&self) -> io::Result<Dir> {
        self.parent_dir_inner(false)
    }

    /// Opens the folder this location is in, making it (and the folders on the way) if needed.
    ///
    /// # Errors
    /// As [`Loc::create_dir_all`].
    pub fn create_parent_dir(&self) -> io::Result<Dir> {
        self.parent_dir_inner(true)
    }

    fn parent_dir_inner(&self, create: bool) -> io::Result<Dir> {
        if self.depth == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is the root, not a file in it", self.path.display()),
            ));
        }
        self.walk(self.depth - 1, create)
    }

    /// The last name as `&OsStr` (the root has none: an error).
    fn leaf(&self) -> io::Result<&OsStr> {
        self.name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is the root, not a file in it", self.path.display()),
            )
        })
    }

    /// What is at this location, not following a symlink; `None` when it (or a folder on the
    /// way) does not exist.
    ///
    /// # Errors
    /// A folder on the way that is a symlink or not a folder; other I/O errors.
    pub fn stat(&self) -> io::Result<Option<Info>> {
        match self.parent_dir() {
            Ok(d) => d.stat(self.leaf()?),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Opens the regular file here for reading ([`Dir::open_file`]); `None` when it (or a
    /// folder on the way) does not exist.
    ///
    /// # Errors
    /// A symlink, FIFO, socket, device or folder at this location or on the way; I/O errors.
    pub fn open_file(&self) -> io::Result<Option<File>> {
        match self.parent_dir() {
            Ok(d) => d.open_file(self.leaf()?),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The bytes of the regular file here; `None` when it (or a folder on the way) does not
    /// exist.
    ///
    /// # Errors
    /// As [`Loc::open_file`].
    pub fn read(&self) -> io::Result<Option<Vec<u8>>> {
        match self.open_file()? {
            Some(f) => read_all(f).map(Some),
            None => Ok(None),
        }
    }
}

impl Deref for Loc {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Loc {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// Whether `name` is one plain path component: not empty, not `.` or `..`, no `/` or NUL.
pub fn is_plain(name: &OsStr) -> bool {
    let b = name.as_bytes();
    !b.is_empty() && b != b"." && b != b".." && !b.contains(&b'/') && !b.contains(&0)
}

/// What a directory entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device.
    CharDevice,
    /// A block device.
    BlockDevice,
    /// Something else.
    Unknown,
}

impl Kind {
    fn of(t: FileType) -> Kind {
        match t {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Symlink,
            FileType::Fifo => Kind::Fifo,
            FileType::Socket => Kind::Socket,
            FileType::CharacterDevice => Kind::CharDevice,
            FileType::BlockDevice => Kind::BlockDevice,
            _ => Kind::Unknown,
        }
    }

    /// How an error names it.
    pub fn describe(self) -> &'static str {
        match self {
            Kind::File => "a regular file",
            Kind::Dir => "a folder",
            Kind::Symlink => "a symlink",
            Kind::Fifo => "a FIFO (named pipe)",
            Kind::Socket => "a socket",
            Kind::CharDevice => "a character device",
            Kind::BlockDevice => "a block device",
            Kind::Unknown => "not a regular file or folder",
        }
    }
}

/// What `stat` says about a directory entry (never following a symlink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Info {
    /// What it is.
    pub kind: Kind,
    /// Its permission bits (`& 0o7777`).
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Size in bytes.
    pub size: u64,
    /// Last modification.
    pub mtime: SystemTime,
    /// The device it is on.
    pub dev: u64,
    /// Its inode (with `dev`: which file it is, whatever its name).
    pub ino: u64,
}

impl Info {
    fn of(st: &rustix::fs::Stat) -> Info {
        #[allow(clippy::unnecessary_cast)]
        let (secs, nanos) = (st.st_mtime as i64, st.st_mtime_nsec as u32);
        let mtime = if secs >= 0 {
            UNIX_EPOCH + Duration::new(secs as u64, nanos)
        } else {
            UNIX_EPOCH - Duration::from_secs(secs.unsigned_abs())
                + Duration::from_nanos(nanos.into())
        };
        #[allow(clippy::unnecessary_cast)]
        Info {
            kind: Kind::of(FileType::from_raw_mode(st.st_mode as _)),
            mode: (st.st_mode as u32) & 0o7777,
            uid: st.st_uid as u32,
            gid: st.st_gid as u32,
            size: st.st_size.max(0) as u64,
            mtime,
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
        }
    }
}

/// A file or folder that is not what teamctl expects there (a symlink, a FIFO, a socket, a
/// device, a folder where a file belongs): refused, and named.
#[derive(Debug, Clone)]
pub struct Unexpected {
    /// Where.
    pub path: PathBuf,
    /// What it is.
    pub found: Kind,
    /// What it should be.
    pub wanted: Kind,
}

impl fmt::Display for Unexpected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match self.found {
            Kind::Symlink => write!(
                f,
                "{path} is a symlink, which teamctl never follows (replace it with what it points to)"
            ),
            found => write!(
                f,
                "{path} is {}, not {}; teamctl leaves it alone",
                found.describe(),
                self.wanted.describe()
            ),
        }
    }
}

impl std::error::Error for Unexpected {}

fn unexpected(path: PathBuf, found: Kind, wanted: Kind) -> io::Error {
    io::Error::other(Unexpected {
        path,
        found,
        wanted,
    })
}

/// An errno from opening `path` as an `io::Error` that names the path.
fn annotate(e: Errno, path: &Path) -> io::Error {
    let io = io::Error::from(e);
    if io.kind() == io::ErrorKind::NotFound {
        return io;
    }
    io::Error::new(io.kind(), format!("{}: {io}", path.display()))
}

/// An open folder below a trusted root (see the module docs). Every method resolves exactly
/// one plain name below it and never follows a symlink there.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
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

    fn name<'a>(&self, name: &'a OsStr) -> io::Result<&'a OsStr> {
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
    fn explain(&self, name: &OsStr, e: Errno, wanted: Kind) -> io::Error {
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
    /// `NotFound`; an [`Unexpected`] when it is a symlink or not a folder; other I/O errors.
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
    /// An [`Unexpected`] naming what it is instead; I/O errors.
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
    /// An [`Unexpected`] for a symlink, folder, FIFO, socket or device; I/O errors.
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
    fn regular(&self, fd: OwnedFd, name: &OsStr) -> io::Result<File> {
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
    /// An [`Unexpected`] for anything but a regular file; I/O errors.
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

    fn open_writable(&self, name: &OsStr, extra: OFlags, mode: u32) -> io::Result<File> {
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
        let end = std::time::Instant::now() + wait;
        // Holders keep it for a stat, an rmdir and a mkdir: poll finely, then every millisecond.
        let mut pause = Duration::from_micros(50);
        loop {
            match f.try_lock() {
                Ok(()) => return Ok(Some(f)),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
            let now = std::time::Instant::now();
            if now >= end {
                return Ok(None);
            }
            std::thread::sleep(pause.min(end - now));
            pause = (pause * 2).min(Duration::from_millis(1));
        }
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
/// An [`Unexpected`] for anything but a regular file; I/O errors.
pub fn read_regular(path: &Path) -> io::Result<Option<Vec<u8>>> {
    open_regular(path)?.map(read_all).transpose()
}

/// Opens the regular file at `path` for reading, a file outside any trusted root (one the user
/// named, a project's settings): symlinks are followed, but a FIFO, socket or device is an
/// error and opening never blocks. `None` when it does not exist.
///
/// # Errors
/// An [`Unexpected`] for anything but a regular file; I/O errors.
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
fn read_all(mut f: File) -> io::Result<Vec<u8>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, Loc) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        fs::create_dir_all(root.join("teams/t/inboxes")).unwrap();
        fs::write(root.join("teams/t/inboxes/a.json"), "[]").unwrap();
        let loc = Loc::root(&root);
        (tmp, loc)
    }

    #[test]
    fn names_must_be_plain() {
        let (_tmp, root) = setup();
        for bad in ["", ".", "..", "a/b", "/abs", "a\0b"] {
            let loc = root.join("teams").join(bad);
            assert!(loc.open_dir().is_err(), "{bad:?}");
            assert!(loc.read().is_err(), "{bad:?}");
            assert!(!loc.path().ends_with("abs") || bad != "/abs");
        }
        let ok = root.join("teams").join("t").join("inboxes").join("a.json");
        assert_eq!(ok.read().unwrap().unwrap(), b"[]");
        assert_eq!(ok.with_suffix(".lock").name().unwrap(), "a.json.lock");
        assert_eq!(ok.parent().unwrap().name().unwrap(), "inboxes");
        assert_eq!(ok.root_path(), root.path());
    }

    #[test]
    fn a_symlink_at_any_component_is_refused() {
        let (tmp, root) = setup();
        let outside = tmp.path().join("outside");
        fs::create_dir_all(outside.join("inboxes")).unwrap();
        fs::write(outside.join("inboxes/a.json"), "[1]").unwrap();
        fs::rename(
            root.path().join("teams/t/inboxes"),
            root.path().join("teams/t/real"),
        )
        .unwrap();
        symlink(outside.join("inboxes"), root.path().join("teams/t/inboxes")).unwrap();
        let file = root.join("teams").join("t").join("inboxes").join("a.json");
        let err = file.read().unwrap_err();
        assert!(err.to_string().contains("inboxes is a symlink"), "{err}");
        let err = file.create_parent_dir().unwrap_err();
        assert!(err.to_string().contains("is a symlink"), "{err}");
        // The leaf.
        symlink(
            outside.join("inboxes/a.json"),
            root.path().join("teams/t/real/b.json"),
        )
        .unwrap();
        let leaf = root.join("teams").join("t").join("real").join("b.json");
        let err = leaf.read().unwrap_err();
        assert!(err.to_string().contains("b.json is a symlink"), "{err}");
        let dir = leaf.parent_dir().unwrap();
        assert!(dir.open_append("b.json", 0o600).is_err());
        assert!(dir.create_new("b.json", 0o600).is_err());
        assert_eq!(fs::read(outside.join("inboxes/a.json")).unwrap(), b"[1]");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let (_tmp, root) = setup();
        let p = root.path().join("teams/t/inboxes/f.json");
        mkfifo(&p);
        let loc = root.join("teams").join("t").join("inboxes").join("f.json");
        let err = loc.read().unwrap_err();
        assert!(err.to_string().contains("is a FIFO"), "{err}");
        let dir = loc.parent_dir().unwrap();
        let err = dir.open_append("f.json", 0o600).unwrap_err();
        assert!(err.to_string().contains("is a FIFO"), "{err}");
        // A folder where a file belongs, and a file where a folder belongs.
        let err = root
            .join("teams")
            .join("t")
            .join("inboxes")
            .read()
            .unwrap_err();
        assert!(
            err.to_string().contains("is a folder, not a regular file"),
            "{err}"
        );
        let err = root
            .join("teams")
            .join("t")
            .join("inboxes")
            .join("a.json")
            .join("x")
            .read()
            .unwrap_err();
        assert!(
            err.to_string().contains("is a regular file, not a folder"),
            "{err}"
        );
    }

    #[test]
    fn folder_locks_exclude_each_other_even_in_one_process() {
        let (_tmp, root) = setup();
        let d = root.join("teams").open_dir().unwrap();
        let held = d.lock_folder(Duration::ZERO).unwrap().unwrap();
        assert!(d.lock_folder(Duration::from_millis(20)).unwrap().is_none());
        assert!(
            d.try_clone()
                .unwrap()
                .lock_folder(Duration::ZERO)
                .unwrap()
                .is_none()
        );
        drop(held);
        assert!(d.lock_folder(Duration::ZERO).unwrap().is_some());
        assert_eq!(
            fs::read_dir(root.path().join("teams")).unwrap().count(),
            1,
            "nothing written"
        );
    }

    #[test]
    fn remove_tree_never_follows() {
        let (tmp, root) = setup();
        let outside = tmp.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("keep"), "x").unwrap();
        symlink(&outside, root.path().join("teams/t/link")).unwrap();
        let teams = root.join("teams").open_dir().unwrap();
        teams.remove_tree("t").unwrap();
        assert!(!root.path().join("teams/t").exists());
        assert_eq!(fs::read(outside.join("keep")).unwrap(), b"x");
    }
}
