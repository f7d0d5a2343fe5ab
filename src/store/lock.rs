//! The Claude Code-compatible lock: a directory made with `mkdir`, exactly as the npm
//! `proper-lockfile` package (which Claude Code bundles or re-implements) makes it.
//!
//! Protocol, for a protected file `F` whose lock directory is the literal string `F.lock`:
//! 1. `mkdir F.lock` (not recursive). Success means the lock is held: set its atime and mtime
//!    to `ceil(now / 1 s) * 1 s + 5 ms`, as proper-lockfile does, plus this lock's random tag
//!    of 1 to 999,999 ns ([`LockGuard`]), and remember the folder's device, inode and the mtime
//!    the file system reports: the lock's identity, which no other lock shares.
//! 2. On `EEXIST`, `stat` it. Gone: try `mkdir` again at once. Not a directory: someone else's
//!    lock file, reported by name and never removed. mtime older than 10 s: stale. Reclaimed
//!    under an OS lock (`flock`) on the folder that only teamctl takes: `stat` again, `rmdir`
//!    only the very directory seen stale (same device, inode and mtime), `mkdir` ours. Otherwise
//!    it is held: wait 5, 10, 20, 40, 80, then 100 ms steps until the deadline.
//! 3. While held, its mtime is refreshed every 5 s (only of a lock this process holds, and only
//!    while it still has our identity), keeping the tag: by a thread of its own, or, in a
//!    program that runs a keeper ([`keep_by_keeper`]: the CLI's signal thread), by that keeper.
//! 4. Release with `rmdir`, only after checking that the directory is still ours (a lock
//!    another writer took over is left to it, and the release reports it). A process-wide
//!    registry lets the CLI release everything before it exits on SIGINT/SIGTERM ([`drain`]).
//!
//! Every step goes through one handle on the protected file's folder ([`crate::store::dir`]):
//! `mkdirat`, `fstatat` and `utimensat` without following a symlink, `unlinkat`; a symlink
//! named `F.lock` is someone else's lock file, reported and never followed or removed.
//!
//! Why two writers cannot both hold the lock, and what Claude Code's own reclaim can still do:
//! docs/design.md, "Why a mkdir lock and not flock".

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow, bail};

use crate::error::Error;
use crate::store::dir::{Dir, Info, Kind, Loc};
use crate::store::faults::trace;
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

/// How long a reclaim of a stale lock waits for the folder's OS lock ([`Dir::lock_folder`]),
/// which other teamctl processes hold only for a `stat`, an `rmdir` and a `mkdir`. Past it
/// (a holder stopped by a signal) the reclaim goes ahead without it, as proper-lockfile does.
const RECLAIM_WAIT: Duration = Duration::from_millis(100);

/// What makes a lock directory the one a guard made: the folder itself (device and inode)
/// and the mtime the guard last gave it, which carries the guard's random tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    mtime: SystemTime,
}

impl Identity {
    fn of(info: &Info) -> Identity {
        Identity {
            dev: info.dev,
            ino: info.ino,
            mtime: info.mtime,
        }
    }
}

/// A lock's tag: a random 1 to 999,999 ns added to every mtime teamctl gives the lock. The
/// mtime proper-lockfile gives is a whole millisecond (`X.005000000` when it takes a lock), so
/// its locks never carry a tag, and two teamctl locks share one with odds of one in a million.
fn new_tag() -> Duration {
    Duration::from_nanos((uuid::Uuid::new_v4().as_u128() % 999_999) as u64 + 1)
}

/// proper-lockfile's mtime for a lock it has just made (the next whole second + 5 ms), plus
/// `tag`.
fn first_mtime(now: SystemTime, tag: Duration) -> SystemTime {
    let ms = now
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    UNIX_EPOCH + Duration::from_millis((ms.div_ceil(1000) * 1000 + 5) as u64) + tag
}

/// proper-lockfile's mtime for a refresh (now, in whole milliseconds), plus `tag`.
fn refresh_mtime(now: SystemTime, tag: Duration) -> SystemTime {
    let ms = now
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis();
    UNIX_EPOCH + Duration::from_millis(ms as u64) + tag
}

/// A held lock. Dropping it releases the lock (`rmdir`) if it is still ours.
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
    /// The lock directory's device and inode, and the mtime the file system reported after
    /// our last `utimes`.
    id: Identity,
    /// The tag every mtime we give it carries ([`new_tag`]).
    tag: Duration,
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

    /// Checks that the lock is still ours: the directory is the one we made (device and
    /// inode) and carries the mtime we gave it, tag and all. Call before replacing the
    /// protected file.
    ///
    /// # Errors
    /// When someone removed, replaced or touched the lock directory (proper-lockfile's
    /// "compromised"), or it could not be looked at.
    pub fn verify(&self) -> Result<()> {
        match self.lost()? {
            None => Ok(()),
            Some(why) => bail!("lock {} was compromised: {why}", self.dir.display()),
        }
    }

    /// Whether the lock is still ours ([`LockGuard::verify`] without the error).
    ///
    /// # Errors
    /// When the lock directory could not be looked at.
    pub fn is_ours(&self) -> Result<bool> {
        Ok(self.lost()?.is_none())
    }

    /// `None` while the lock is ours; otherwise why not.
    fn lost(&self) -> Result<Option<String>> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(why) = &state.compromised {
            return Ok(Some(why.clone()));
        }
        let info = self
            .parent
            .stat(&self.name)
            .with_context(|| format!("could not stat the lock {}", self.dir.display()))?;
        trace(|| format!("check: {}", info.as_ref().map_or("gone".into(), identity)));
        Ok(match info {
            None => Some("it disappeared while held".into()),
            Some(i) if i.kind == Kind::Dir && Identity::of(&i) == state.id => None,
            Some(_) => Some("another process replaced or touched it while held".into()),
        })
    }

    /// Releases the lock: checks, right before the `rmdir`, that it is still ours, and leaves
    /// a lock that is not (another writer's now) alone.
    ///
    /// # Errors
    /// [`Error::VerifyFailed`] (naming the protected file) when the lock was no longer ours: a
    /// writer that took it over may have read the file before a change made under it, and
    /// replace that change. A failed `rmdir` (other than it being gone already).
    pub fn release(mut self) -> Result<()> {
        match self.release_inner()? {
            None => Ok(()),
            Some(why) => {
                let lock = self.dir.display();
                let name = self.name.to_string_lossy();
                let file = name.strip_suffix(".lock").unwrap_or(&name);
                Err(Error::VerifyFailed {
                    path: self.parent.path().join(file),
                    reason: format!(
                        "its lock {lock} was taken over by another writer while teamctl held it \
                         ({why}); that writer may have read the file before the change made \
                         under the lock and overwrite it: check the file"
                    ),
                }
                .into())
            }
        }
    }

    /// [`LockGuard::release`], answering `Ok(false)` instead of the error when the lock was no
    /// longer ours (and was left alone).
    ///
    /// # Errors
    /// A failed `rmdir` (other than it being gone already).
    pub fn release_if_ours(mut self) -> Result<bool> {
        Ok(self.release_inner()?.is_none())
    }

    /// Stops the refresher and removes the lock directory if it is still ours. `Some(why)`
    /// when it was not.
    fn release_inner(&mut self) -> Result<Option<String>> {
        // The refresher is told to stop and left to end by itself: waiting for it here (inside
        // the lock) cost a tenth of a send. It (or the keeper) cannot touch the lock, or what
        // `lost` reads, once `released` is set (under the mutex it holds while it looks and
        // touches).
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .released = true;
        match self.refresher.take() {
            Some((stop, _ends_by_itself)) => drop(stop),
            None => kept().retain(|k| !Arc::ptr_eq(&k.state, &self.state)),
        }
        let mut gate = gate();
        let result = match self.lost() {
            Ok(None) => match self.parent.rmdir(&self.name) {
                Ok(()) => {
                    trace(|| "released: rmdir".into());
                    Ok(None)
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    Ok(Some("it disappeared while held".into()))
                }
                Err(e) => {
                    Err(e).with_context(|| format!("could not release {}", self.dir.display()))
                }
            },
            other => other,
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
    // At most: mkdir, (stat →) reclaim a stale one, mkdir again with no stale check.
    let mut stale_check = true;
    for _ in 0..3 {
        if mkdir_registered(parent, name, dir)? {
            trace(|| "mkdir: made".into());
            return take_ownership(parent, name, dir, opts);
        }
        let info = match parent.stat(name) {
            Ok(Some(i)) => i,
            // Released between our mkdir and stat: try again at once, as proper-lockfile does.
            Ok(None) => {
                trace(|| "mkdir: exists; stat: gone".into());
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
        let stale = stale_check && is_stale(&info, opts);
        trace(|| {
            let verdict = if stale_check {
                stale.to_string()
            } else {
                "not checked".into()
            };
            format!("mkdir: exists; stat: {}, stale {verdict}", identity(&info))
        });
        if !stale {
            return Ok(None);
        }
        // Stale: its holder died.
        super::faults::pause(super::faults::faults().before_reclaim);
        if reclaim(parent, name, dir, &info, opts)? {
            return take_ownership(parent, name, dir, opts);
        }
        stale_check = false;
    }
    Ok(None)
}

/// Whether a lock directory with this mtime is stale (its holder died).
fn is_stale(info: &Info, opts: &LockOptions) -> bool {
    SystemTime::now()
        .duration_since(info.mtime)
        .is_ok_and(|age| age > opts.stale)
}

/// Removes the stale lock directory `seen` and makes ours in its place. `Ok(true)` when ours
/// is made (and registered); `Ok(false)` when another writer was quicker.
///
/// Under the folder lock, which every teamctl process takes to reclaim, no other teamctl
/// process removes or reclaims a lock directory here: `seen` is removed only if it is still
/// there, the very directory (device, inode, mtime) and still stale, and `mkdir` follows
/// before the folder lock is let go. So two teamctl processes never both act on one stale
/// lock, and one never removes the fresh lock another just made from it. Without the folder
/// lock (a file system that refuses `flock`, a holder stopped past [`RECLAIM_WAIT`]) the same
/// steps run unserialised: proper-lockfile's own protocol.
fn reclaim(
    parent: &Dir,
    name: &OsStr,
    dir: &Path,
    seen: &Info,
    opts: &LockOptions,
) -> Result<bool> {
    let serial = parent.lock_folder(RECLAIM_WAIT).ok().flatten();
    let now = parent
        .stat(name)
        .with_context(|| format!("could not stat {}", dir.display()))?;
    trace(|| {
        format!(
            "reclaim (folder lock {}): stat: {}",
            if serial.is_some() { "held" } else { "not held" },
            now.as_ref().map_or("gone".into(), identity)
        )
    });
    match now {
        Some(now)
            if now.kind == Kind::Dir
                && Identity::of(&now) == Identity::of(seen)
                && is_stale(&now, opts) =>
        {
            remove_stale(parent, name, dir)?;
        }
        None => {}
        // Reclaimed by another writer since we looked: it is theirs.
        Some(_) => return Ok(false),
    }
    let made = mkdir_registered(parent, name, dir)?;
    trace(|| format!("reclaim: mkdir: {}", if made { "made" } else { "exists" }));
    Ok(made)
}

/// A lock directory's identity as a trace shows it: inode and mtime in nanoseconds.
fn identity(info: &Info) -> String {
    let mtime = info
        .mtime
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("ino {} mtime {mtime}", info.ino)
}

fn remove_stale(parent: &Dir, name: &OsStr, dir: &Path) -> Result<()> {
    trace(|| "reclaim: rmdir".into());
    match parent.rmdir(name) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(|| format!("could not remove stale lock {}", dir.display())),
    }
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

/// Marks the lock directory we have just made as ours and starts its refresher. `Ok(None)`
/// when it was removed before we could (a writer acting on a `stat` of the stale lock from
/// before ours): the lock is someone else's now.
fn take_ownership(
    parent: &Arc<Dir>,
    name: &OsStr,
    dir: &Path,
    opts: &LockOptions,
) -> Result<Option<LockGuard>> {
    super::faults::pause(super::faults::faults().after_mkdir);
    // proper-lockfile sets the mtime to the next whole second + 5 ms to probe whether the file
    // system keeps milliseconds; a lock that looks like it was made by proper-lockfile is one
    // Claude Code will treat exactly like its own. Claude Code reads a foreign lock's mtime only
    // to decide whether it is stale, so the tag's sub-millisecond offset changes nothing for it.
    // A file system that keeps no nanoseconds drops the tag: the identity is then what it kept.
    let tag = new_tag();
    let info = match parent.set_dir_times(name, first_mtime(SystemTime::now(), tag)) {
        Ok(i) => i,
        Err(e) => {
            let gone = e.kind() == io::ErrorKind::NotFound;
            let mut gate = gate();
            if !gone {
                let _ = parent.rmdir(name);
            }
            if let Some(i) = gate.held.iter().position(|d| d == dir) {
                gate.held.swap_remove(i);
            }
            CHANGED.notify_all();
            trace(|| format!("mtime: failed ({e})"));
            if gone {
                return Ok(None);
            }
            return Err(e).with_context(|| format!("could not set the mtime of {}", dir.display()));
        }
    };
    trace(|| format!("held: {}", identity(&info)));
    let state = Arc::new(Mutex::new(HeldState {
        id: Identity::of(&info),
        tag,
        compromised: None,
        released: false,
    }));
    let refresher = if KEEPER.load(Ordering::SeqCst) {
        kept().push(Kept {
            parent: Arc::clone(parent),
            name: name.to_owned(),
            state: Arc::clone(&state),
        });
        None
    } else {
        Some(spawn_refresher(
            Arc::clone(parent),
            name.to_owned(),
            Arc::clone(&state),
            opts.update,
        ))
    };
    Ok(Some(LockGuard {
        dir: dir.to_path_buf(),
        parent: Arc::clone(parent),
        name: name.to_owned(),
        state,
        refresher,
    }))
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
            if !refresh_once(&parent, &name, &mut st) {
                return;
            }
        }
    });
    (tx, handle)
}

/// Gives the held lock `name` in `parent` a fresh mtime (with its tag), if it is still ours;
/// whether to go on refreshing it. Not once it is released, nor once it is no longer ours
/// (`compromised` then says why): a lock that is not ours is never touched.
fn refresh_once(parent: &Dir, name: &OsStr, st: &mut HeldState) -> bool {
    if st.released {
        return false;
    }
    let why = match parent.stat(name) {
        Ok(Some(i)) if i.kind == Kind::Dir && Identity::of(&i) == st.id => {
            match parent.set_dir_times(name, refresh_mtime(SystemTime::now(), st.tag)) {
                Ok(new) if (new.dev, new.ino) == (st.id.dev, st.id.ino) => {
                    st.id = Identity::of(&new);
                    return true;
                }
                Ok(_) => "another process replaced it while held".to_string(),
                Err(e) => e.to_string(),
            }
        }
        Ok(Some(_)) => "another process replaced or touched it while held".into(),
        Ok(None) => "it disappeared while held".into(),
        Err(e) => e.to_string(),
    };
    st.compromised = Some(why);
    false
}

/// A held lock that the process's keeper refreshes ([`keep_by_keeper`]).
struct Kept {
    parent: Arc<Dir>,
    name: OsString,
    state: Arc<Mutex<HeldState>>,
}

/// Whether the locks taken are refreshed by the process's keeper ([`keep_by_keeper`]).
static KEEPER: AtomicBool = AtomicBool::new(false);
static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

fn kept() -> std::sync::MutexGuard<'static, Vec<Kept>> {
    KEPT.lock().unwrap_or_else(|e| e.into_inner())
}

/// How often the keeper must call [`refresh_held`]: proper-lockfile's refresh period (stale / 2).
pub const KEEPER_EVERY: Duration = Duration::from_secs(5);

/// Hands the refreshing of every lock this process takes from now on to one keeper, instead of
/// a thread for each lock (a thread costs a `send` about 3%). The keeper is a thread of the
/// program's that calls [`refresh_held`] at least every [`KEEPER_EVERY`] for as long as the
/// process runs; the CLI's signal thread is that keeper. Call it before the first lock is
/// taken. Locks taken this way ignore [`LockOptions::update`].
pub fn keep_by_keeper() {
    KEEPER.store(true, Ordering::SeqCst);
}

/// For the keeper ([`keep_by_keeper`]): gives every lock this process holds a fresh mtime (a
/// lock taken just before is refreshed early, which is harmless), and forgets those that are
/// released or no longer ours.
pub fn refresh_held() {
    kept().retain(|k| {
        let mut st = k.state.lock().unwrap_or_else(|e| e.into_inner());
        refresh_once(&k.parent, &k.name, &mut st)
    });
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

/// Sleeps `d`, or until [`drain`] begins (a signal arrived), whichever comes first: a test
/// fault's pause that stands for no time in a real run ([`super::Faults::between_moves`]).
pub(super) fn sleep_unless_draining(d: Duration) {
    let end = Instant::now() + d;
    while !gate().draining {
        let now = Instant::now();
        if now >= end {
            return;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(10)));
    }
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

    /// The sub-second part of an mtime, in nanoseconds.
    fn nanos(t: SystemTime) -> u32 {
        t.duration_since(UNIX_EPOCH).unwrap().subsec_nanos()
    }

    #[test]
    fn a_lock_carries_a_tag_below_the_millisecond() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        let a = acquire(&f, &LockOptions::default()).unwrap();
        let m = fs::metadata(a.dir()).unwrap().modified().unwrap();
        // proper-lockfile's X.005 s, plus 1 to 999,999 ns (a file system with nanoseconds).
        let tag = nanos(m) - 5_000_000;
        assert!((1..1_000_000).contains(&tag), "{m:?}");
        a.release().unwrap();
        let tags: std::collections::HashSet<u32> = (0..20)
            .map(|_| {
                let g = acquire(&f, &LockOptions::default()).unwrap();
                let t = nanos(fs::metadata(g.dir()).unwrap().modified().unwrap());
                g.release().unwrap();
                t
            })
            .collect();
        assert!(tags.len() > 1, "every lock gets its own tag: {tags:?}");
    }

    /// The race of issue 27: another writer removes our lock and makes its own in the same
    /// second, with the same second-and-5-ms mtime (and perhaps the same inode).
    #[test]
    fn a_lock_replaced_in_the_same_second_is_not_ours() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        let g = acquire(&f, &LockOptions::default()).unwrap();
        let ours = fs::metadata(g.dir()).unwrap().modified().unwrap();
        let whole_ms = UNIX_EPOCH
            + Duration::from_millis(ours.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64);
        // Made while our lock still holds its inode, so that it cannot be given ours when that is
        // freed (with our inode and our mtime it would be our lock: nothing could tell them
        // apart; the test failed now and then when the file system handed the inode back).
        let other = tmp.path().join("other");
        fs::create_dir(&other).unwrap();
        // As proper-lockfile (or teamctl before the tag) would make it.
        fs::remove_dir(g.dir()).unwrap();
        fs::create_dir(g.dir()).unwrap();
        File::open(g.dir()).unwrap().set_modified(whole_ms).unwrap();
        assert!(!g.is_ours().unwrap());
        assert!(g.verify().is_err());
        // Another directory with our very mtime, tag and all, is not ours either.
        File::open(&other).unwrap().set_modified(ours).unwrap();
        fs::rename(&other, g.dir()).unwrap();
        assert_eq!(fs::metadata(g.dir()).unwrap().modified().unwrap(), ours);
        assert!(!g.is_ours().unwrap());
        // The release leaves the other writer's lock alone, and says so.
        let err = g.release().unwrap_err();
        assert!(matches!(
            err.downcast_ref::<Error>(),
            Some(Error::VerifyFailed { .. })
        ));
        assert!(format!("{err:#}").contains("taken over"), "{err:#}");
        assert!(lock_dir(&f).is_dir(), "another writer's lock is kept");
        assert!(!held().contains(&lock_dir(&f)));
    }

    #[test]
    fn release_if_ours_leaves_a_lost_lock_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        let g = acquire(&f, &LockOptions::default()).unwrap();
        assert!(g.is_ours().unwrap());
        fs::remove_dir(g.dir()).unwrap();
        fs::create_dir(g.dir()).unwrap();
        assert!(!g.release_if_ours().unwrap());
        assert!(lock_dir(&f).is_dir());
        let g = acquire(&f, &LockOptions::with_timeout(Duration::from_millis(10)));
        assert!(g.is_err(), "the other writer's fresh lock is respected");
    }

    #[test]
    fn the_refresher_keeps_the_identity_and_the_tag() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        let opts = LockOptions {
            update: Duration::from_millis(20),
            ..LockOptions::default()
        };
        let g = acquire(&f, &opts).unwrap();
        let first = fs::metadata(g.dir()).unwrap().modified().unwrap();
        let tag = nanos(first) % 1_000_000;
        let deadline = Instant::now() + Duration::from_secs(10);
        let refreshed = loop {
            let m = fs::metadata(g.dir()).unwrap().modified().unwrap();
            if m != first {
                break m;
            }
            assert!(Instant::now() < deadline, "the mtime was never refreshed");
            thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(
            nanos(refreshed) % 1_000_000,
            tag,
            "the refresh keeps the tag"
        );
        assert!(
            refreshed <= SystemTime::now() + Duration::from_millis(1),
            "a refresh sets now (in whole milliseconds, plus the tag), not the next second"
        );
        g.verify().unwrap();
        // Touched by someone else: the refresher stops and the lock is no longer ours.
        File::open(g.dir())
            .unwrap()
            .set_modified(refreshed)
            .unwrap();
        File::open(g.dir())
            .unwrap()
            .set_modified(refreshed - Duration::from_millis(1))
            .unwrap();
        assert!(!g.is_ours().unwrap());
        thread::sleep(Duration::from_millis(60));
        assert_eq!(
            fs::metadata(g.dir()).unwrap().modified().unwrap(),
            refreshed - Duration::from_millis(1),
            "a lock that is no longer ours is never touched"
        );
    }

    /// A reclaim removes only the directory it saw stale: one made fresh since is kept.
    #[test]
    fn a_reclaim_removes_only_the_directory_seen_stale() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        let lock = lock_dir(&f);
        fs::create_dir(&lock).unwrap();
        File::open(&lock)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(30))
            .unwrap();
        let parent = Arc::new(f.parent_dir().unwrap());
        let name = OsString::from("x.json.lock");
        let seen = parent.stat(&name).unwrap().unwrap();
        // Meanwhile another writer reclaimed it and made a fresh one.
        fs::remove_dir(&lock).unwrap();
        fs::create_dir(&lock).unwrap();
        let opts = LockOptions::default();
        assert!(!reclaim(&parent, &name, &lock, &seen, &opts).unwrap());
        assert!(lock.is_dir(), "the fresh lock is kept");
        // The directory seen stale, still there and stale: removed and ours made.
        File::open(&lock)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(30))
            .unwrap();
        let seen = parent.stat(&name).unwrap().unwrap();
        assert!(reclaim(&parent, &name, &lock, &seen, &opts).unwrap());
        assert!(held().contains(&lock));
        let g = take_ownership(&parent, &name, &lock, &opts)
            .unwrap()
            .unwrap();
        g.release().unwrap();
        assert!(!lock.exists());
    }

    /// A folder lock held for ever (a stopped teamctl, a hostile teammate) delays a reclaim by
    /// RECLAIM_WAIT at most: the stale lock is still reclaimed.
    #[test]
    fn a_stuck_folder_lock_does_not_stop_a_reclaim() {
        let tmp = tempfile::tempdir().unwrap();
        let f = Loc::root(tmp.path()).join("x.json");
        fs::create_dir(lock_dir(&f)).unwrap();
        File::open(lock_dir(&f))
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(30))
            .unwrap();
        let _stuck = f
            .parent_dir()
            .unwrap()
            .lock_folder(Duration::ZERO)
            .unwrap()
            .unwrap();
        let g = acquire(&f, &LockOptions::with_timeout(Duration::ZERO)).unwrap();
        g.verify().unwrap();
        g.release().unwrap();
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
