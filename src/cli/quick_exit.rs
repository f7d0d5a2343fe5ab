//! Exiting without waiting for the kernel to tear down a file watch.
//!
//! Closing the last reference to an inotify instance waits for an SRCU grace period in the
//! kernel (about 15 ms on the benchmark machine), and a process's exit waits for that close.
//! `ask` and `wait` are judged by how soon they exit after what they waited for, so once their
//! output is flushed a child takes over the last reference: the parent exits at once, and the
//! child, with stdin, stdout and stderr closed (so `$(…)` and pipes see the end at once), waits
//! until the parent is gone and then exits in its place.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static ARMED: AtomicBool = AtomicBool::new(false);

/// Called by a command that leaves a file watch open at its end (its `Waker` forgotten).
pub(crate) fn arm() {
    ARMED.store(true, Ordering::SeqCst);
}

/// Exits with `code` now if [`arm`] was called and a child can take over the watch; returns
/// otherwise (the caller then exits the ordinary way).
pub(crate) fn exit_if_armed(code: u8) {
    // Only Linux's inotify makes an exit wait (macOS's FSEvents does not).
    if !ARMED.load(Ordering::SeqCst) || !cfg!(any(target_os = "linux", target_os = "android")) {
        return;
    }
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: after fork the child runs only async-signal-safe calls (close, getppid,
    // nanosleep, _exit), as a child of a multi-threaded process must.
    unsafe {
        let parent = libc::getpid();
        match libc::fork() {
            0 => {
                for fd in 0..3 {
                    libc::close(fd);
                }
                // The parent's files are closed before it is reparented away from us; give up
                // after 2 s (the close is then merely slow, as without this).
                let nap = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 1_000_000,
                };
                for _ in 0..2000 {
                    if libc::getppid() != parent {
                        break;
                    }
                    libc::nanosleep(&nap, std::ptr::null_mut());
                }
                libc::_exit(0);
            }
            -1 => {}
            _ => libc::_exit(i32::from(code)),
        }
    }
}
