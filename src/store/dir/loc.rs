//! A place below a trusted root ([`Loc`]): the root and the plain names to it, each reached
//! through the handle of the folder before it.

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::ops::Deref;
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use super::handle::{Dir, read_all};
use super::kind::{Info, annotate, is_plain};

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

    pub(super) fn names(&self) -> Vec<&OsStr> {
        let mut names: Vec<&OsStr> = self
            .path
            .ancestors()
            .take(self.depth)
            .filter_map(Path::file_name)
            .collect();
        names.reverse();
        names
    }

    pub(super) fn checked(&self) -> io::Result<()> {
        match &self.bad {
            Some(why) => Err(io::Error::new(io::ErrorKind::InvalidInput, why.clone())),
            None => Ok(()),
        }
    }

    /// Opens the folders of the first `n` names below the root, making missing ones when
    /// `create` (and the root itself, with its parents, as the user's umask makes them).
    pub(super) fn walk(&self, n: usize, create: bool) -> io::Result<Dir> {
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

    pub(super) fn parent_dir_inner(&self, create: bool) -> io::Result<Dir> {
        if self.depth == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is the root, not a file in it", self.path.display()),
            ));
        }
        self.walk(self.depth - 1, create)
    }

    /// The last name as `&OsStr` (the root has none: an error).
    pub(super) fn leaf(&self) -> io::Result<&OsStr> {
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
