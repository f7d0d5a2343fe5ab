//! What wakes a follower of a team's files: the OS's file notifications on its folders
//! ([`crate::observe::fswatch`]), or a polling clock; a [`crate::observe::watch::Watch`] reads
//! what changed where it says.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use notify::RecursiveMode;

use crate::observe::fswatch::FsWatch;

/// What wakes a follower: the OS's file notifications on a team's folders, or a polling clock.
pub struct Waker {
    watcher: Option<FsWatch>,
    rx: mpsc::Receiver<notify::Result<notify::Event>>,
    unwatched: Vec<PathBuf>,
    interval: Duration,
    /// Folders watched besides the team's (transcripts), each once.
    extra: Vec<PathBuf>,
}

/// What woke a [`Waker`] up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wake {
    /// Notifications for these paths.
    Paths(Vec<PathBuf>),
    /// Notifications were lost or are unavailable (polling): look at everything.
    Rescan,
    /// The time passed quietly.
    Quiet,
}

/// What woke a [`Waker`] up, as a [`crate::observe::watch::Watch`] reads it.
pub(crate) enum Woke {
    /// No file notifications: it slept the polling interval.
    Slept,
    /// Notifications for these paths.
    Paths(Vec<PathBuf>),
    /// A notification was lost or asked for a rescan.
    Lost,
    /// Nothing came, and the folders that could not be watched yet were tried again.
    Retried,
    /// Nothing came.
    Quiet,
    /// The notifications ended (it polls from now on).
    Closed,
}

impl Waker {
    /// Watches a team's `dirs` for changes, the first recursively (the team's folder): file
    /// notifications unless `poll` is given or they are unavailable, else a clock of `poll`
    /// (default 250 ms). A folder that cannot be watched yet (not there) is tried again
    /// whenever the waker waits quietly.
    pub(crate) fn watching(dirs: &[PathBuf], poll: Option<Duration>) -> Waker {
        let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
        let mut watcher = None;
        let mut unwatched = Vec::new();
        if poll.is_none()
            && let Ok(mut w) = FsWatch::new(tx, wakes)
        {
            for dir in dirs {
                let mode = if *dir == dirs[0] {
                    RecursiveMode::Recursive
                } else {
                    RecursiveMode::NonRecursive
                };
                if w.watch(dir, mode).is_err() {
                    unwatched.push(dir.clone());
                }
            }
            watcher = Some(w);
        }
        Waker {
            watcher,
            rx,
            unwatched,
            interval: poll.unwrap_or(Duration::from_millis(250)),
            extra: Vec::new(),
        }
    }

    /// Waits at most `max` (at most the interval) and says what woke it.
    pub(crate) fn woke(&mut self, max: Duration) -> Woke {
        let wait = max.min(self.interval);
        let Some(watcher) = self.watcher.as_mut() else {
            std::thread::sleep(wait);
            return Woke::Slept;
        };
        match self.rx.recv_timeout(wait) {
            Ok(first) => {
                let mut paths = Vec::new();
                let mut rescan = false;
                for res in std::iter::once(first).chain(self.rx.try_iter()) {
                    match res {
                        Ok(ev) => {
                            rescan |= ev.need_rescan();
                            paths.extend(ev.paths);
                        }
                        Err(_) => rescan = true,
                    }
                }
                if rescan {
                    Woke::Lost
                } else {
                    Woke::Paths(paths)
                }
            }
            // A folder that could not be watched (not there yet) is polled.
            Err(RecvTimeoutError::Timeout) if !self.unwatched.is_empty() => {
                let dirs = std::mem::take(&mut self.unwatched);
                for dir in dirs {
                    if watcher.watch(&dir, RecursiveMode::NonRecursive).is_err() {
                        self.unwatched.push(dir);
                    }
                }
                Woke::Retried
            }
            Err(RecvTimeoutError::Timeout) => Woke::Quiet,
            Err(RecvTimeoutError::Disconnected) => {
                self.watcher = None;
                Woke::Closed
            }
        }
    }

    /// How long it waits at most when nothing comes (the polling interval when polling).
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// Watches `dirs` (not recursively) for changes: file notifications unless `poll` is given or
    /// they are unavailable, else a clock of `poll` (default 250 ms).
    pub fn for_dirs(dirs: &[PathBuf], poll: Option<Duration>) -> Waker {
        let (tx, rx) = mpsc::channel::<notify::Result<notify::Event>>();
        let watcher = if poll.is_none() {
            FsWatch::new(tx, |_| true).ok()
        } else {
            None
        };
        let mut w = Waker {
            watcher,
            rx,
            unwatched: Vec::new(),
            interval: poll.unwrap_or(Duration::from_millis(250)),
            extra: Vec::new(),
        };
        for d in dirs {
            w.add(d);
        }
        w
    }

    /// Also watches `dir` (not recursively) from now on, if it exists and is not watched yet:
    /// its changes wake the waker up (a [`crate::observe::watch::Watch`] ignores the paths it
    /// does not follow).
    pub fn add(&mut self, dir: &Path) {
        if self.extra.iter().any(|d| d == dir) {
            return;
        }
        if let Some(w) = self.watcher.as_mut()
            && w.watch(dir, RecursiveMode::NonRecursive).is_ok()
        {
            self.extra.push(dir.to_path_buf());
        }
    }

    /// Whether file notifications are in use (else a clock).
    pub fn notifies(&self) -> bool {
        self.watcher.is_some()
    }

    /// Waits at most `max` (at most the polling interval when polling) for a notification.
    pub fn wait(&mut self, max: Duration) -> Wake {
        if self.watcher.is_none() {
            std::thread::sleep(max.min(self.interval));
            return Wake::Rescan;
        }
        match self.rx.recv_timeout(max) {
            Ok(first) => {
                let mut paths = Vec::new();
                for res in std::iter::once(first).chain(self.rx.try_iter()) {
                    match res {
                        Ok(ev) if !ev.need_rescan() => paths.extend(ev.paths),
                        _ => return Wake::Rescan,
                    }
                }
                Wake::Paths(paths)
            }
            Err(RecvTimeoutError::Timeout) => Wake::Quiet,
            Err(RecvTimeoutError::Disconnected) => {
                self.watcher = None;
                Wake::Rescan
            }
        }
    }
}

impl Waker {
    /// Whether the OS's file notifications drive it (else it polls).
    pub fn notifications(&self) -> bool {
        self.watcher.is_some()
    }

    /// With file notifications: the longest [`crate::observe::watch::Watch::next`] waits when nothing changes (250 ms
    /// unless set; a folder that could not be watched yet is retried then). A follower that
    /// wants an idle process to wake seldom sets it longer. No effect when polling.
    pub fn set_idle_wake(&mut self, every: Duration) {
        if self.watcher.is_some() {
            self.interval = every;
        }
    }
}

impl std::fmt::Debug for Waker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Waker")
            .field("notifications", &self.watcher.is_some())
            .field("interval", &self.interval)
            .finish()
    }
}

/// Whether a notification can mean a change. inotify also reports every open and every
/// close after reading (notify watches with `IN_OPEN`), and a follower's own reads would then
/// wake it again at once, forever: a busy loop on an idle team. Claude Code's readers poll the
/// inboxes every second, so their reads are left out too. A close after writing stays.
fn wakes(res: &notify::Result<notify::Event>) -> bool {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode};
    match res {
        Ok(ev) => match ev.kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
            EventKind::Access(_) => false,
            _ => true,
        },
        Err(_) => true,
    }
}
