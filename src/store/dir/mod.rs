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

mod handle;
mod kind;
mod loc;

pub use handle::*;
pub use kind::*;
pub use loc::*;

#[cfg(test)]
mod tests {
    use super::*;

    use std::fs;
    use std::os::unix::fs::symlink;

    use std::time::Duration;

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

    /// A file of teamctl's own is locked within the wait, or the wait ends with an error that
    /// says what holds it: never a wait without end.
    #[test]
    fn own_file_locks_wait_only_so_long() {
        let (tmp, _root) = setup();
        let path = tmp.path().join("own.lock");
        let held = fs::File::create(&path).unwrap();
        held.lock().unwrap();
        let other = fs::File::open(&path).unwrap();
        let t = std::time::Instant::now();
        let err = lock_own_file(&other, Duration::from_millis(60)).unwrap_err();
        assert!(t.elapsed() >= Duration::from_millis(60));
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);
        assert!(err.to_string().contains("Ctrl-Z"), "{err}");
        drop(held);
        lock_own_file(&other, Duration::ZERO).unwrap();
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
