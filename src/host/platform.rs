//! Which probes of the machine teamctl uses: Linux's own on Linux (`/proc` for processes), the
//! portable ones everywhere else (macOS, the BSDs): what every Unix has, `kill(pid, 0)` and
//! `ps` for processes, and file notifications handled as macOS's FSEvents gives them (real
//! paths, a watch that restarts when a folder is added: see `observe::notes`).
//!
//! The portable probes can be forced on Linux too, so that the test suite runs them on the
//! machines that run it: the binary calls [`force_portable`] when `TEAMCTL_PORTABLE` is set
//! (the library never reads the environment), and the library's own unit tests read that
//! variable themselves.

use std::sync::atomic::{AtomicBool, Ordering};

static FORCED: AtomicBool = AtomicBool::new(false);

/// From now on this process uses the portable probes, whatever the system (a test hook).
pub fn force_portable() {
    FORCED.store(true, Ordering::Relaxed);
}

/// Whether the portable probes are in use: on every system but Linux, and on Linux once
/// [`force_portable`] was called.
pub fn portable() -> bool {
    !cfg!(any(target_os = "linux", target_os = "android"))
        || FORCED.load(Ordering::Relaxed)
        || forced_for_unit_tests()
}

/// `TEAMCTL_PORTABLE` set and not empty or `0`: how the test suite asks for the portable probes.
pub fn portable_requested(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty() && v != "0")
}

#[cfg(test)]
fn forced_for_unit_tests() -> bool {
    static ASKED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ASKED.get_or_init(|| portable_requested(std::env::var_os("TEAMCTL_PORTABLE").as_deref()))
}

#[cfg(not(test))]
fn forced_for_unit_tests() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_asks_when_set_and_not_zero() {
        assert!(!portable_requested(None));
        assert!(!portable_requested(Some("".as_ref())));
        assert!(!portable_requested(Some("0".as_ref())));
        assert!(portable_requested(Some("1".as_ref())));
        assert!(portable_requested(Some("yes".as_ref())));
    }
}
