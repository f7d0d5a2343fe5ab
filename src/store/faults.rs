//! Test-only fault injection for the store's locked writes ([`Faults`]): pauses at exact points
//! so crash and race tests can strike there, a failing write, and a trace of the lock's steps.

use std::sync::Mutex;
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Test-only fault injection for the locked write path, so crash and fault tests can stop a
/// write at an exact point. All zero/`false` (the default) means no effect. The library never
/// reads the environment: the CLI fills this from `TEAMCTL_TEST_FAULTS` and calls
/// [`set_faults`]. Never set it in production.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Sleep this long before trying for the lock (a kill then hits "before the lock").
    pub before_lock: Duration,
    /// Sleep this long right after the lock is taken (a kill then hits "holding the lock").
    pub after_lock: Duration,
    /// Sleep this long after finding the lock stale, before acting on that (a writer
    /// descheduled there, where another can reclaim the lock first).
    pub before_reclaim: Duration,
    /// Sleep this long after the lock directory is made, before it is marked as ours (a writer
    /// descheduled there, where a Claude Code writer acting on an old `stat` can replace it).
    pub after_mkdir: Duration,
    /// Sleep this long after the temp file is written and synced, before the rename.
    pub before_rename: Duration,
    /// Sleep this long after the rename, before the read-back (a foreign writer can strike).
    pub before_verify: Duration,
    /// Fail the temp file's write with `ENOSPC`, as a full file system does.
    pub fail_write: bool,
    /// Sleep this long in a move ([`super::moving`]) after the target is written, before the source
    /// is (a kill then leaves the message in both inboxes). A signal that drains the locks
    /// ([`super::lock::drain`]) ends this pause at once: in a real move the two writes follow
    /// each other, so the drain's time is the second write's, as it would be.
    pub between_moves: Duration,
    /// Record the lock's and the append's steps in memory ([`take_trace`]), for a race test to
    /// print when a round lost a message.
    pub trace: bool,
}

static FAULTS: Mutex<Faults> = Mutex::new(Faults {
    before_lock: Duration::ZERO,
    after_lock: Duration::ZERO,
    before_reclaim: Duration::ZERO,
    after_mkdir: Duration::ZERO,
    before_rename: Duration::ZERO,
    before_verify: Duration::ZERO,
    fail_write: false,
    between_moves: Duration::ZERO,
    trace: false,
});

static TRACE: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Installs `faults` for this process (test-only; see [`Faults`]).
pub fn set_faults(faults: Faults) {
    *FAULTS.lock().unwrap_or_else(|e| e.into_inner()) = faults;
}

/// The faults installed ([`set_faults`]).
pub(super) fn faults() -> Faults {
    *FAULTS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sleeps `d` (a fault's pause; nothing when zero).
pub(super) fn pause(d: Duration) {
    if !d.is_zero() {
        thread::sleep(d);
    }
}

/// Records one step when [`Faults::trace`] is set: the wall clock in nanoseconds since the epoch,
/// then `step()`. Kept in memory: a write per step would change the race it records.
pub(super) fn trace(step: impl FnOnce() -> String) {
    if faults().trace {
        let ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let line = format!("{ns} {}", step());
        TRACE.lock().unwrap_or_else(|e| e.into_inner()).push(line);
    }
}

/// The steps recorded so far ([`Faults::trace`]), taken.
pub fn take_trace() -> Vec<String> {
    std::mem::take(&mut *TRACE.lock().unwrap_or_else(|e| e.into_inner()))
}
