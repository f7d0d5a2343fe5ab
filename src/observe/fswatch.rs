//! The OS's file notifications, alike on every system: inotify on Linux, FSEvents on macOS
//! (`notify` picks the backend). Two things FSEvents does otherwise are made up for here, so
//! that no follower depends on them:
//!
//! - it names a changed file by its real path (`/private/var/…` for a folder watched as
//!   `/var/…`, the target of a `~/.claude` that is a symlink): every path is given back below
//!   the folder as it was watched;
//! - a folder added to a running watch restarts the whole stream, and what changed meanwhile,
//!   anywhere, is never told: each folder added after the first asks for a rescan.
//!
//! With the portable probes ([`crate::host::platform`], forced on Linux by the tests) inotify's
//! paths are made real and the rescans asked for too, so the test suite runs this code on
//! Linux.

use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};

use notify::event::{Event, EventKind, Flag};
use notify::{RecursiveMode, Watcher};

use crate::host::platform;

/// Which notifications are passed on.
pub type Keep = fn(&notify::Result<Event>) -> bool;

/// A file watch whose events name paths below the folders as they were watched.
pub struct FsWatch {
    watcher: notify::RecommendedWatcher,
    /// Each watched folder's real path, with the path it was watched as, where they differ.
    roots: Arc<Mutex<Vec<(PathBuf, PathBuf)>>>,
    tx: Sender<notify::Result<Event>>,
    watched: usize,
}

impl FsWatch {
    /// A watch (on nothing yet) sending the notifications that `keep` keeps into `tx`.
    ///
    /// # Errors
    /// When the OS gives no file notifications (the caller then polls).
    pub fn new(tx: Sender<notify::Result<Event>>, keep: Keep) -> notify::Result<FsWatch> {
        let roots: Arc<Mutex<Vec<(PathBuf, PathBuf)>>> = Arc::default();
        let seen = Arc::clone(&roots);
        let to = tx.clone();
        // inotify names paths as they were watched: made real here as FSEvents makes them.
        let make_real =
            cfg!(any(target_os = "linux", target_os = "android")) && platform::portable();
        let watcher = notify::recommended_watcher(move |res: notify::Result<Event>| {
            if !keep(&res) {
                return;
            }
            let res = res.map(|mut ev| {
                let roots = seen.lock().unwrap_or_else(PoisonError::into_inner);
                for p in &mut ev.paths {
                    if make_real {
                        *p = real(p);
                    }
                    *p = as_watched(&roots, p);
                }
                ev
            });
            let _ = to.send(res);
        })?;
        Ok(FsWatch {
            watcher,
            roots,
            tx,
            watched: 0,
        })
    }

    /// Watches `dir` too. On FSEvents (the portable probes) a rescan is asked for when other
    /// folders were watched already: their stream was restarted.
    ///
    /// # Errors
    /// When `dir` cannot be watched (it is missing).
    pub fn watch(&mut self, dir: &Path, mode: RecursiveMode) -> notify::Result<()> {
        // Known before the first event under it can come.
        let real = dir.canonicalize().ok().filter(|r| r != dir);
        if let Some(r) = &real {
            self.roots().push((r.clone(), dir.to_path_buf()));
        }
        if let Err(e) = self.watcher.watch(dir, mode) {
            if let Some(r) = real {
                self.roots()
                    .retain(|(real, given)| *real != r || given != dir);
            }
            return Err(e);
        }
        if platform::portable() && self.watched > 0 {
            let rescan = Event::new(EventKind::Other).set_flag(Flag::Rescan);
            let _ = self.tx.send(Ok(rescan));
        }
        self.watched += 1;
        Ok(())
    }

    fn roots(&self) -> std::sync::MutexGuard<'_, Vec<(PathBuf, PathBuf)>> {
        self.roots.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `path` below the watched folder it is in, as that folder was watched (the longest real
/// path that holds it); `path` itself when none does.
fn as_watched(roots: &[(PathBuf, PathBuf)], path: &Path) -> PathBuf {
    roots
        .iter()
        .filter_map(|(real, given)| Some((real, given, path.strip_prefix(real).ok()?)))
        .max_by_key(|(real, _, _)| real.as_os_str().len())
        .map_or_else(
            || path.to_path_buf(),
            |(_, given, rest)| {
                if rest.as_os_str().is_empty() {
                    given.clone()
                } else {
                    given.join(rest)
                }
            },
        )
}

/// The real path of `path`, or of its folder when it is gone (a removed or renamed file).
fn real(path: &Path) -> PathBuf {
    path.canonicalize()
        .ok()
        .or_else(|| {
            let parent = path.parent()?.canonicalize().ok()?;
            Some(parent.join(path.file_name()?))
        })
        .unwrap_or_else(|| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn a_real_path_is_given_back_below_the_folder_as_watched() {
        let roots = vec![
            (PathBuf::from("/private/var/x"), PathBuf::from("/var/x")),
            (
                PathBuf::from("/private/var/x/deep"),
                PathBuf::from("/home/me/.claude"),
            ),
        ];
        let at = |p: &str| as_watched(&roots, Path::new(p));
        assert_eq!(at("/private/var/x/a.json"), Path::new("/var/x/a.json"));
        assert_eq!(at("/private/var/x"), Path::new("/var/x"));
        assert_eq!(
            at("/private/var/x/deep/teams/t"),
            Path::new("/home/me/.claude/teams/t")
        );
        assert_eq!(at("/var/x/a.json"), Path::new("/var/x/a.json"));
        assert_eq!(at("/elsewhere"), Path::new("/elsewhere"));
        // A name that merely starts the same is not below.
        assert_eq!(at("/private/var/xy"), Path::new("/private/var/xy"));
    }

    /// A folder reached through a symlink (as macOS's `/var`, or a `~/.claude` that is a link):
    /// the events name it as it was watched, whichever probes this run uses.
    #[test]
    fn events_name_a_linked_folder_as_it_was_watched() {
        let tmp = tempfile::tempdir().unwrap();
        let real_dir = tmp.path().join("real");
        fs::create_dir_all(real_dir.join("inboxes")).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&real_dir, &link).unwrap();
        let (tx, rx) = mpsc::channel();
        let mut w = FsWatch::new(tx, |_| true).unwrap();
        w.watch(&link, RecursiveMode::Recursive).unwrap();
        w.watch(&link.join("inboxes"), RecursiveMode::NonRecursive)
            .unwrap();
        fs::write(link.join("inboxes/a.json"), "[]").unwrap();
        let want = link.join("inboxes/a.json");
        let end = Instant::now() + Duration::from_secs(10);
        let mut paths = Vec::new();
        let mut rescans = 0;
        while !paths.contains(&want) && Instant::now() < end {
            if let Ok(Ok(ev)) = rx.recv_timeout(Duration::from_millis(100)) {
                rescans += usize::from(ev.need_rescan());
                paths.extend(ev.paths);
            }
        }
        assert!(paths.contains(&want), "{paths:?}");
        assert!(paths.iter().all(|p| p.starts_with(&link)), "{paths:?}");
        // The second folder restarted FSEvents' stream: a rescan was asked for.
        assert_eq!(rescans, usize::from(platform::portable()));
    }
}
