//! What a name is ([`Kind`], [`Info`]) and the error for a name that is not what it should be
//! ([`Unexpected`]).

use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::FileType;
use rustix::io::Errno;

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
    pub(super) fn of(t: FileType) -> Kind {
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
    pub(super) fn of(st: &rustix::fs::Stat) -> Info {
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

pub(super) fn unexpected(path: PathBuf, found: Kind, wanted: Kind) -> io::Error {
    io::Error::other(Unexpected {
        path,
        found,
        wanted,
    })
}

/// An errno from opening `path` as an `io::Error` that names the path.
pub(super) fn annotate(e: Errno, path: &Path) -> io::Error {
    let io = io::Error::from(e);
    if io.kind() == io::ErrorKind::NotFound {
        return io;
    }
    io::Error::new(io.kind(), format!("{}: {io}", path.display()))
}

/// Whether `name` is one plain path component: not empty, not `.` or `..`, no `/` or NUL.
pub fn is_plain(name: &OsStr) -> bool {
    let b = name.as_bytes();
    !b.is_empty() && b != b"." && b != b".." && !b.contains(&b'/') && !b.contains(&0)
}
