//! SIGINT, SIGTERM and SIGHUP: finish (or never start) the locked write in progress, release
//! every lock directory (waiting at most 5 s for a write that is stuck), then exit with 128 +
//! the signal number. A second signal exits at once;
//! a lock left behind then is stale after 10 s and Claude Code reclaims it.
//!
//! A command that must clean up first (`run`: end the lead it started) calls [`defer`]: the
//! first signal is then only recorded, the command sees it through [`received`], cleans up and
//! returns, and `main` exits with [`exit_code`]. One that waits on something else than the
//! clock (`top`, blocked on its events) also registers a [`notify`] to be woken.
//!
//! Before a signal ends teamctl, a hook that `watch --exec` is running is ended (its process
//! group: it runs in one of its own, out of the terminal's reach) and the telemetry is flushed
//! ([`before_exit`]).

use std::io::{self, Read};
use std::os::unix::net::UnixStream;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::backend::SignalDelivery;
use signal_hook::iterator::exfiltrator::SignalOnly;
use teamctl::store::lock;

/// The first signal received, 0 for none.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Whether the first signal is left to the command (see [`defer`]).
static DEFER: AtomicBool = AtomicBool::new(false);

/// `128 + signal` when a signal arrived while the command ran. `main` exits with it even when
/// the command finished first, so the exit code does not depend on which thread wins the race
/// to exit.
pub(crate) fn exit_code() -> Option<u8> {
    match RECEIVED.load(Ordering::SeqCst) {
        0 => None,
        sig => u8::try_from(128 + sig).ok(),
    }
}

/// The process group of a hook running now (`watch --exec`), 0 for none: a signal that ends
/// teamctl ends it too (it runs in a group of its own, so the terminal's Ctrl-C misses it).
static HOOK_GROUP: AtomicI32 = AtomicI32::new(0);

/// Records the running hook's process group (0: none).
pub(crate) fn hook_group(pgid: i32) {
    HOOK_GROUP.store(pgid, Ordering::SeqCst);
}

/// What runs just before a signal ends teamctl (the OpenTelemetry flush).
static BEFORE_EXIT: std::sync::OnceLock<fn(u8)> = std::sync::OnceLock::new();

/// Runs `f` with the exit code before a signal ends teamctl (after the locks are released).
#[cfg_attr(not(feature = "otel"), allow(dead_code))]
pub(crate) fn before_exit(f: fn(u8)) {
    let _ = BEFORE_EXIT.set(f);
}

/// Ends the running hook, then whatever was registered with [`before_exit`].
fn last_words(code: u8) {
    let pgid = HOOK_GROUP.swap(0, Ordering::SeqCst);
    teamctl::host::hook::kill_group(pgid, libc::SIGTERM);
    if let Some(f) = BEFORE_EXIT.get() {
        f(code);
    }
}

/// Leaves the first signal to the command, which polls [`received`].
pub(crate) fn defer() {
    DEFER.store(true, Ordering::SeqCst);
}

/// What to call when a deferred signal arrives (see [`notify`]).
static NOTIFY: OnceLock<Box<dyn Fn() + Send + Sync>> = OnceLock::new();

/// Leaves the first signal to the command, as [`defer`], and calls `wake` when it arrives (on
/// the signal thread), so a command blocked on something else sees it at once.
pub(crate) fn notify(wake: Box<dyn Fn() + Send + Sync>) {
    let _ = NOTIFY.set(wake);
    defer();
}

/// Whether a signal has arrived.
pub(crate) fn received() -> bool {
    RECEIVED.load(Ordering::SeqCst) != 0
}

/// Starts the signal thread. It is also the keeper of the locks this process holds
/// ([`lock::keep_by_keeper`]): it wakes every [`lock::KEEPER_EVERY`] to refresh them, so that
/// no lock needs a thread of its own (a thread costs a `send` about 3%).
pub(crate) fn install() {
    let Ok((read, write)) = UnixStream::pair() else {
        return;
    };
    let Ok(mut delivery) =
        SignalDelivery::with_pipe(read, write, SignalOnly, [SIGINT, SIGTERM, SIGHUP])
    else {
        return;
    };
    if delivery
        .get_read()
        .set_read_timeout(Some(lock::KEEPER_EVERY))
        .is_err()
    {
        return;
    }
    lock::keep_by_keeper();
    std::thread::spawn(move || {
        let mut first = true;
        loop {
            match delivery.poll_pending(&mut woken) {
                Ok(Some(signals)) => signals.for_each(|sig| on_signal(sig, &mut first)),
                Ok(None) => {}
                // Not seen; never a busy loop if it were.
                Err(_) => std::thread::sleep(Duration::from_millis(100)),
            }
            lock::refresh_held();
        }
    });
}

/// Waits until a byte comes (a signal) or the read timeout passes; whether a byte came.
fn woken(read: &mut UnixStream) -> io::Result<bool> {
    loop {
        match read.read(&mut [0u8]) {
            Ok(n) => return Ok(n > 0),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(false);
            }
            Err(e) => return Err(e),
        }
    }
}

/// What a signal does: the first is recorded and, unless the command handles it, ends teamctl
/// once every lock is released (at most 5 s); a second ends it at once.
fn on_signal(sig: i32, first: &mut bool) {
    if !*first {
        teamctl::host::hook::kill_group(HOOK_GROUP.swap(0, Ordering::SeqCst), libc::SIGKILL);
        std::process::exit(128 + sig);
    }
    *first = false;
    RECEIVED.store(sig, Ordering::SeqCst);
    if DEFER.load(Ordering::SeqCst) {
        if let Some(wake) = NOTIFY.get() {
            wake();
        }
        return;
    }
    std::thread::spawn(move || {
        // A write that cannot finish within this (a hung file system) does not keep the
        // process alive; its lock goes stale for the other writers.
        lock::drain(Duration::from_secs(5));
        last_words(u8::try_from(128 + sig).unwrap_or(1));
        std::process::exit(128 + sig);
    });
}
