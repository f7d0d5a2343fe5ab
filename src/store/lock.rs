//! The Claude Code-compatible lock: a directory made with `mkdir`, exactly as the npm
//! `proper-lockfile` package (which Claude Code bundles or re-implements) makes it.
//!
//! Protocol, for a protected file `F` whose lock directory is the literal string `F.lock`:
//! 1. `mkdir F.lock` (not recursive). Success means the lock is held: set its atime and mtime
//!    to `ceil(now / 1 s) * 1 s + 5 ms`, as proper-lockfile does, and remember the mtime the
//!    file system reports.
//! 2. On `EEXIST`, `stat` it. Gone: try `mkdir` again at once. Not a directory: someone else's
//!    lock file, reported by name and never removed. mtime older than 10 s: stale, `rmdir` it
//!    and `mkdir` once more. Otherwise it is held: wait 5, 10, 20, 40, 80, then 100 ms steps
//!    until the deadline.
//! 3. While held, a background thread refreshes the mtime every 5 s (only of a lock this
//!    process holds, and only while it still carries the mtime we gave it).
//! 4. Release with `rmdir`. A process-wide registry lets the CLI release everything before it
//!    exits on SIGINT/SIGTERM ([`drain`]).
//!
//! Every step goes through one handle on the protected file's folder ([`crate::store::dir`]):
//! `mkdirat`, `fstatat` and `utimensat` without following a symlink, `unlinkat`; a symlink
//! named `F.lock` is someone else's lock file, reported and never followed or removed.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};

use crate::error::Error;
use crate::store::dir::{Dir, Kind, Loc};
use crate::store::paths::with_suffix;

/// How long to try for a lock, and the protocol's fixed timings.
#[derive(Debug, Clone, Copy)]
pub struct LockOptions {
    /// Give up (with [`Error::LockTimeout`]) after this long.
    pub timeout: Duration,
    /// A lock directory whose mtime is older than this is stale (proper-lockfile: 10 s).
    pub stale: Duration,
    /// How often a held lock's mtime is refreshed (proper-lockfile: stale / 2).
    pub update: Duration,
}

impl Default for LockOptions {
    fn default() -> Self {
        LockOptions::with_timeout(Duration::from_secs(5))
    }
}

impl LockOptions {
    /// The protocol's timings with the given deadline.
    pub fn with_timeout(timeout: Duration) -> Self {
        LockOptions {
            timeout,
            stale: Duration::from_secs(10),
            update: Duration::from_secs(5),
        }
    }
}

/// The lock directory of a protected file: the literal path plus `.lock`.
pub fn lock_dir(target: &Path) -> PathBuf {
    with_suffix(target, ".lock")
}

/// The wait before retry number `attempt` (0-based): 5, 10, 20, 40, 80, then 100 ms, the
/// schedule of proper-lockfile with `minTimeout: 5, maxTimeout: 100, factor: 2`.
pub fn backoff(attempt: u32) -> Duration {
    Duration::from_millis((5u64 << attempt.min(5)).min(100))
}

/// A held lock. Dropping it releases the lock (`rmdir`).
#[derive(Debug)]
pub struct LockGuard {
    dir: PathBuf,
    /// The folder the lock directory is in, and its name there.
    parent: Arc<Dir>,
    name: OsString,
    state: Arc<Mutex<HeldState>>,
    refresher: Option<(Sender<()>, JoinHandle<()>)>,
}

#[derive(Debug)]
struct HeldState {
    /// The mtime the file system reported after our last `utimes`.
    mtime: SystemTime,
    compromised: Option<String>,
    /// Set under this mutex before the directory is removed: the refresher, which looks at it
    /// under the same mutex before it touches anything, never touches the lock after that.
    released: bool,
}

impl LockGuard {
    /// The lock directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Checks that the lock is still ours: the directory exists and carries the mtime we gave
    /// it. Call before replacing the protected file.
    ///
    /// # Errors
    /// When someone removed or touched the lock directory (proper-lockfile's "compromised").
    pub fn verify(&self) -> Result<()> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = &state.compromised {
            bail!("lock {} was compromised: {why}", self.dir.display());
        }
        let info = self
            .parent
            .stat(&self.name)
            .with_context(|| format!("could not stat the lock {}", self.dir.display()))?
            .filter(|i| i.kind == Kind::Dir)
            .with_context(|| format!("lock {} disappeared while held", self.dir.display()))?;
        if info.mtime != state.mtime {
            bail!(
                "lock {} was touched by another process while held",
                self.dir.display()
            );
        }
        Ok(())
    }

    /// Releases the lock now, reporting a failed `rmdir`.
    ///
    /// # Errors
    /// When the directory could not be removed (other than it being gone already).
    pub fn release(mut self) -> Result<()> {
        self.release_inner()
    }

    fn release_inner(&mut self) -> Result<()> {
        // The refresher is told to stop and left to end by itself: waiting for it here (inside
        // the lock) cost a tenth of a send. It cannot touch the lock once `released` is set.
        if let Some((stop, _ends_by_itself)) = self.refresher.take() {
            self.state
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .released = true;
            drop(stop);
        }
        let mut gate = gate();
        let result = match self.parent.rmdir(&self.name) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e).with_context(|| format!("could not release {}", self.dir.display())),
        };
        if let Some(i) = gate.held.iter().position(|d| d == &self.dir) {
            gate.held.swap_remove(i);
        }
        CHANGED.notify_all();
        result
    }
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        if gate().held.contains(&self.dir) {
            let _ = self.release_inner();
        }
    }
}

/// Takes the lock directory of `target` (`target` + `.lock`), waiting up to `opts.timeout`.
///
/// # Errors
/// [`Error::LockTimeout`] when it stays held; an error naming the path when it exists but is
/// not a directory, when its folder is missing or reached through a symlink, or on other I/O
/// errors.
pub fn acquire(target: &Loc, opts: &LockOptions) -> Result<LockGuard> {
    let parent = target
        .parent_dir()
        .with_context(|| format!("could not lock {}", lock_dir(target).display()))?;
    let name = target
        .name()
        .and_then(OsStr::to_str)
        .with_context(|| format!("could not lock {}", target.display()))?;
    acquire_in(&parent, name, opts)
}

/// Takes the lock directory of the file `target_name` in `parent` (`<target_name>.lock`),
/// waiting up to `opts.timeout`.
///
/// # Errors
/// As [`acquire`].
pub fn acquire_in(parent: &Dir, target_name: &str, opts: &LockOptions) -> Result<LockGuard> {
    let parent = Arc::new(
        parent
            .try_clone()
            .with_context(|| format!("could not open {}", parent.path().display()))?,
    );
    let name = OsString::from(format!("{target_name}.lock"));
    let dir = parent.path().join(&name);
    let start = Instant::now();
    let deadline = start + opts.timeout;
    let mut attempt = 0;
    loop {
        if let Some(guard) = try_acquire(&parent, &name, &dir, opts)? {
            return Ok(guard);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(Error::LockTimeout {
                lock: dir,
                waited: now - start,
            }
            .into());
        }
        thread::sleep(backoff(attempt).min(deadline - now));
        attempt += 1;
    }
}

/// One attempt: `Ok(None)` when the lock is held by someone else.
fn try_acquire(
    parent: &Arc<Dir>,
    name: &OsStr,
    dir: &Path,
    opts: &LockOptions,
) -> Result<Option<LockGuard>> {
    // At most: mkdir, (stat →) rmdir stale, mkdir again with no stale check.
    let mut stale_check = true;
    for _ in 0..3 {
        if mkdir_registered(parent, name, dir)? {
            return take_ownership(parent, name, dir, opts).map(Some);
        }
        let info = match parent.stat(name) {
            Ok(Some(i)) => i,
            // Released between our mkdir and stat: try again at once, as proper-lockfile does.
            Ok(None) => {
                stale_check = false;
                continue;
            }
            Err(e) => return Err(e).with_context(|| format!("could not stat {}", dir.display())),
        };
        if info.kind != Kind::Dir {
            bail!(
                "{} exists but is not a lock directory ({}; a lock file of another tool?); \
                 Claude Code cannot take its lock either. Remove it by hand once no program uses it",
                dir.display(),
                info.kind.describe()
            );
        }
        if !stale_check {
            return Ok(None);
        }
        let age = SystemTime::now()
            .duration_since(info.mtime)
            .unwrap_or(Duration::ZERO);
        if age <= opts.stale {
            return Ok(None);
        }
        // Stale: its holder died. Remove it and try once more without the stale check.
        match parent.rmdir(name) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("could not remove stale lock {}", dir.display()));
            }
        }
        stale_check = false;
    }
    Ok(None)
}

/// `mkdir dir`, recording it in the registry in the same step so that a signal never sees a
/// lock this process made but does not know about. `Ok(false)` when it exists.
fn mkdir_registered(parent: &Dir, name: &OsStr, dir: &Path) -> Result<bool> {
    let mut gate = gate();
    if gate.draining {
        bail!("interrupted: not taking {}", dir.display());
    }
    match parent.mkdir(name, 0o777) {
        Ok(()) => {
            gate.held.push(dir.to_path_buf());
            Ok(true)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(anyhow!(e)).with_context(|| {
            format!(
                "could not lock {}: its folder does not exist",
                dir.display()
            )
        }),
        Err(e) => Err(e).with_context(|| format!("could not lock {}", dir.display())),
    }
}

fn take_ownership(
    parent: &Arc<Dir>,
    name: &OsStr,
    dir: &Path,
    opts: &LockOptions,
) -> Result<LockGuard> {
    // proper-lockfile sets the mtime to the next whole second + 5 ms to probe whether the file
    // system keeps milliseconds; a lock that looks like it was made by proper-lockfile is one
    // Claude Code will treat exactly like its own.
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    let target = UNIX_EPOCH + Duration::from_millis((now_ms.div_ceil(1000) * 1000 + 5) as u64);
    let mtime = match parent.set_dir_times(name, target) {
        Ok(m) => m,
        Err(e) => {
            let mut gate = gate();
            let _ = parent.rmdir(name);
            gate.held.retain(|d| d != dir);
            CHANGED.notify_all();
            return Err(e).with_context(|| format!("could not set the mtime of {}", dir.display()));
        }
    };
    let state = Arc::new(Mutex::new(HeldState {
        mtime,
        compromised: None,
        released: false,
    }));
    let refresher = spawn_refresher(
        Arc::clone(parent),
        name.to_owned(),
        Arc::clone(&state),
        opts.update,
    );
    Ok(LockGuard {
        dir: dir.to_path_buf(),
        parent: Arc::clone(parent),
        name: name.to_owned(),
        state,
        refresher: Some(refresher),
    })
}

fn spawn_refresher(
    parent: Arc<Dir>,
    name: OsString,
    state: Arc<Mutex<HeldState>>,
    every: Duration,
) -> (Sender<()>, JoinHandle<()>) {
    let (tx, rx) = mpsc::channel::<()>();
    let handle = thread::spawn(move || {
        while let Err(RecvTimeoutError::Timeout) = rx.recv_timeout(every) {
            let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
            if st.released {
                return;
            }
            let current = parent.stat(&name);
            match current {
                Ok(Some(i)) if i.kind == Kind::Dir && i.mtime == st.mtime => {
                    match parent.set_dir_times(&name, SystemTime::now()) {
                        Ok(new) => st.mtime = new,
                        Err(e) => st.compromised = Some(e.to_string()),
                    }
                }
                // Never touch a lock that is no longer ours.
                Ok(Some(_)) => {
                    st.compromised = Some("its mtime was changed by someone else".into());
                    return;
                }
                Ok(None) => {
                    st.compromised = Some("it disappeared".into());
                    return;
                }
                Err(e) => {
                    st.compromised = Some(e.to_string());
                    return;
                }
            }
        }
    });
    (tx, handle)
}

#[derive(Default)]
struct Gate {
    held: Vec<PathBuf>,
    draining: bool,
}

static GATE: Mutex<Gate> = Mutex::new(Gate {
    held: Vec::new(),
    draining: false,
});
static CHANGED: Condvar = Condvar::new();

fn gate() -> std::sync::MutexGuard<'static, Gate> {
    GATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Stops this process from taking new locks and waits until every lock it holds has been
/// released by its owner, or `max` has passed. The CLI calls this from its signal thread before
/// exiting, so an interrupted write either completes (file replaced, lock removed) or never
/// starts. Returns whether every lock was released; one a stuck writer still holds at `max` is
/// left behind, stale after 10 s for every other writer, so a signal always ends the process.
pub fn drain(max: Duration) -> bool {
    let end = Instant::now() + max;
    let mut gate = gate();
    gate.draining = true;
    while !gate.held.is_empty() {
        let now = Instant::now();
        if now >= end {
            return false;
        }
        gate = CHANGED
            .wait_timeout(gate, end - now)
            .unwrap_or_else(|e| e.into_inner())
            .0;
    }
    true
}

/// The lock directories this process holds right now.
pub fn held() -> Vec<PathBuf> {
    gate().held.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{self, File};

    #[test]
    fn backoff_schedule_matches_proper_lockfile() {
        let ms: Vec<u128> = (0..8).map(|a| backoff(a).as_millis()).collect();
        assert_eq!(ms, [5, 10, 20, 40, 80, 100, 100, 100]);
    }

    #[test]
    fn acquire_release_and_registry() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        let g = acquire(&f, &LockOptions::default()).unwrap();
        assert!(tmp.path().join("x.json.lock").is_dir());
        assert!(held().contains(&tmp.path().join("x.json.lock")));
        // proper-lockfile's mtime: a whole second + 5 ms.
        let m = fs::metadata(g.dir()).unwrap().modified().unwrap();
        assert_eq!(m.duration_since(UNIX_EPOCH).unwrap().as_millis() % 1000, 5);
        g.verify().unwrap();
        g.release().unwrap();
        assert!(!tmp.path().join("x.json.lock").exists());
        assert!(!held().contains(&tmp.path().join("x.json.lock")));
    }

    #[test]
    fn held_lock_times_out() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        fs::create_dir(lock_dir(&f)).unwrap();
        let err = acquire(&f, &LockOptions::with_timeout(Duration::from_millis(50))).unwrap_err();
        assert!(matches!(
            err.downcast_ref::<Error>(),
            Some(Error::LockTimeout { .. })
        ));
        assert!(
            lock_dir(&f).is_dir(),
            "a lock we do not hold is never removed"
        );
    }

    #[test]
    fn stale_lock_is_reclaimed() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        fs::create_dir(lock_dir(&f)).unwrap();
        let old = SystemTime::now() - Duration::from_secs(20);
        File::open(lock_dir(&f)).unwrap().set_modified(old).unwrap();
        let g = acquire(&f, &LockOptions::with_timeout(Duration::ZERO)).unwrap();
        g.release().unwrap();
    }

    #[test]
    fn foreign_lock_file_is_reported_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        fs::write(lock_dir(&f), b"").unwrap();
        let err = acquire(&f, &LockOptions::default()).unwrap_err();
        assert!(
            format!("{err:#}").contains("not a lock directory"),
            "{err:#}"
        );
        assert!(lock_dir(&f).is_file());
    }

    #[test]
    fn a_held_lock_is_refreshed() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        let opts = LockOptions {
            update: Duration::from_millis(20),
            ..LockOptions::default()
        };
        let g = acquire(&f, &opts).unwrap();
        let first = fs::metadata(g.dir()).unwrap().modified().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while fs::metadata(g.dir()).unwrap().modified().unwrap() == first {
            assert!(Instant::now() < deadline, "the mtime was never refreshed");
            thread::sleep(Duration::from_millis(5));
        }
        g.verify().unwrap();
        g.release().unwrap();
    }

    /// Released, the lock is never touched again, though its refresher is not waited for: a
    /// lock directory another writer makes with the same name, even with the very mtime ours
    /// had (which the refresher's own check would take for ours), keeps its mtime.
    #[test]
    fn a_released_lock_is_never_touched_again() {
        use std::os::unix::fs::MetadataExt;
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        let opts = LockOptions {
            update: Duration::from_millis(1),
            ..LockOptions::default()
        };
        for _ in 0..30 {
            let g = acquire(&f, &opts).unwrap();
            let dir = g.dir().to_path_buf();
            let at = fs::metadata(&dir).unwrap();
            g.release().unwrap();
            fs::create_dir(&dir).unwrap();
            let t = rustix::fs::Timestamps {
                last_access: rustix::fs::Timespec {
                    tv_sec: at.atime(),
                    tv_nsec: at.atime_nsec(),
                },
                last_modification: rustix::fs::Timespec {
                    tv_sec: at.mtime(),
                    tv_nsec: at.mtime_nsec(),
                },
            };
            rustix::fs::utimensat(rustix::fs::CWD, &dir, &t, rustix::fs::AtFlags::empty()).unwrap();
            let mtime = fs::metadata(&dir).unwrap().modified().unwrap();
            // Many refresh periods: nothing touches it.
            let end = Instant::now() + Duration::from_millis(20);
            while Instant::now() < end {
                assert_eq!(fs::metadata(&dir).unwrap().modified().unwrap(), mtime);
                thread::sleep(Duration::from_millis(1));
            }
            fs::remove_dir(&dir).unwrap();
        }
    }

    #[test]
    fn touched_lock_is_compromised() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        let g = acquire(&f, &LockOptions::default()).unwrap();
        File::open(g.dir())
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(3))
            .unwrap();
        assert!(g.verify().is_err());
    }
}
