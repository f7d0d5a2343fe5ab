//! Files as tests make and read them: inbox entries, copies, scripts, FIFOs, stale lock dirs,
//! and a process's thread count.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::TestEnv;

/// The entries of the inbox (a JSON array) at `path`.
pub fn read_entries(path: &Path) -> Vec<Value> {
    let v: Value = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    v.as_array().unwrap().clone()
}

/// Copies the folder `from` into `to`, recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// An executable shell script `name` in the test's temp dir.
pub fn script(env: &TestEnv, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = env.dir.path().join(name);
    fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// Makes a FIFO at `path` (POSIX `mkfifo`; rustix has no `mkfifoat` on macOS).
pub fn mkfifo(path: impl AsRef<Path>) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_ref().as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo keeps no pointer.
    let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(made, 0, "mkfifo {}", path.as_ref().display());
}

/// How many threads process `pid` has (0 when it cannot be told): one `/proc/<pid>/task` entry
/// each on Linux; elsewhere one line each of `ps -M` (macOS; not run on Linux, whose `ps` has
/// no such option).
pub fn threads(pid: u32) -> usize {
    if cfg!(target_os = "linux") {
        return fs::read_dir(format!("/proc/{pid}/task")).map_or(0, Iterator::count);
    }
    Command::new("ps")
        .args(["-M", "-p", &pid.to_string()])
        .output()
        .map_or(0, |o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .count()
                .saturating_sub(1)
        })
}

/// Makes the lock directory `lock` (creating it when missing) look like its holder died
/// `age` ago: its mtime set that far in the past.
pub fn make_stale(lock: &Path, age: Duration) {
    match fs::create_dir(lock) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => panic!("could not make {}: {e}", lock.display()),
    }
    fs::File::open(lock)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - age)
        .unwrap();
}
