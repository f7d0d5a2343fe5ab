//! Running a command so that nothing it starts outlives it (the merge queue's check).
//!
//! A process group is not enough: a child that calls `setsid` leaves it, and a background
//! child of a command that exited is ended by nobody. On Linux the command runs under teamctl
//! itself started again as its *reaper* ([`command`], [`main`]): a child subreaper
//! (`prctl(PR_SET_CHILD_SUBREAPER)`), so that every process the command starts, and every
//! process those start, stays below it whatever session or group it moves to (an orphan is
//! handed to the nearest subreaper above it, not to init). When the command exits, or when the
//! reaper is told to end (SIGTERM, SIGINT, SIGHUP: the caller ending the command's process
//! group), every process still below it is ended (SIGTERM first when told to end, then SIGKILL)
//! and reaped; then the reaper ends as the command did (its exit code, or the same signal).
//!
//! Elsewhere (macOS has no subreaper) the command runs as it is: its process group is all that
//! is ended with it, and a child that calls `setsid` can outlive it.

use std::ffi::{OsStr, OsString};
use std::process::Command;

/// The hidden first argument that makes `teamctl` the reaper of the command after it.
pub const ARG: &str = "__teamctl-reap";

/// `program args`, to be run so that nothing it starts outlives it: on Linux under this very
/// binary as its reaper (`/proc/self/exe`, which runs even when the file was replaced since),
/// elsewhere as it is.
pub fn command(program: &str, args: &[&OsStr]) -> Command {
    let mut c = if cfg!(target_os = "linux") {
        let mut c = Command::new("/proc/self/exe");
        c.arg(ARG).arg(program);
        c
    } else {
        Command::new(program)
    };
    c.args(args);
    c
}

/// teamctl's hidden entry: with `args` `[teamctl, ARG, program, args…]`, runs `program` under
/// the reaper and returns the exit code to end with (a program that a signal ended ends the
/// reaper with the same signal, and this does not return); `None` for any other command line.
pub fn main(args: &[OsString]) -> Option<u8> {
    if args.get(1).map(OsString::as_os_str) != Some(OsStr::new(ARG)) {
        return None;
    }
    let Some((program, rest)) = args.get(2..).and_then(<[OsString]>::split_first) else {
        eprintln!("teamctl: {ARG} needs a program to run");
        return Some(2);
    };
    Some(linux::reap(program, rest))
}

#[cfg(target_os = "linux")]
mod linux {
    use std::ffi::OsString;
    use std::process::Command;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread::sleep;
    use std::time::{Duration, Instant};

    /// Set by SIGTERM, SIGINT or SIGHUP: end everything now.
    static ENDING: AtomicBool = AtomicBool::new(false);

    /// How long the processes left have between SIGTERM and SIGKILL when the reaper is told to
    /// end: within the grace its caller gives the whole group ([`crate::host::hook::GRACE`]).
    const GRACE: Duration = Duration::from_millis(500);

    /// The longest the reaper keeps ending what is left (a process stuck in the kernel).
    const GIVE_UP: Duration = Duration::from_secs(5);

    /// How often the reaper looks.
    const EVERY: Duration = Duration::from_millis(10);

    extern "C" fn on_signal(_: libc::c_int) {
        ENDING.store(true, Ordering::SeqCst);
    }

    pub(super) fn reap(program: &OsString, args: &[OsString]) -> u8 {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of this process; the
        // handler only stores to an atomic, which is async-signal-safe.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
        // The child gets the default handlers back when it starts (exec resets caught ones).
        let main = match Command::new(program).args(args).spawn() {
            Ok(c) => c.id() as i32,
            Err(e) => {
                eprintln!(
                    "teamctl: could not start {}: {e}",
                    program.to_string_lossy()
                );
                return 127;
            }
        };
        let mut status = None;
        while status.is_none() && !ENDING.load(Ordering::SeqCst) {
            reap_some(main, &mut status);
            sleep(EVERY);
        }
        end_below(ENDING.load(Ordering::SeqCst), main, &mut status);
        finish(status)
    }

    /// Reaps every child that ended (orphans handed over included), keeping `main`'s status.
    fn reap_some(main: i32, status: &mut Option<i32>) {
        loop {
            let mut st = 0;
            // SAFETY: waitpid with WNOHANG writes the status of a child that ended, if any.
            let pid = unsafe { libc::waitpid(-1, &mut st, libc::WNOHANG) };
            if pid <= 0 {
                return;
            }
            if pid == main {
                *status = Some(st);
            }
        }
    }

    /// Ends every process below the reaper (SIGTERM and [`GRACE`] first when `politely`), and
    /// reaps them.
    fn end_below(politely: bool, main: i32, status: &mut Option<i32>) {
        if politely {
            signal(&below(), libc::SIGTERM);
            let until = Instant::now() + GRACE;
            while Instant::now() < until {
                reap_some(main, status);
                if below().is_empty() {
                    return;
                }
                sleep(EVERY);
            }
        }
        let until = Instant::now() + GIVE_UP;
        loop {
            reap_some(main, status);
            let left = below();
            if left.is_empty() || Instant::now() > until {
                return;
            }
            // A process killed hands its children to the reaper: the next round ends them.
            signal(&left, libc::SIGKILL);
            sleep(EVERY);
        }
    }

    fn signal(pids: &[i32], sig: libc::c_int) {
        for &p in pids {
            // SAFETY: kill(2) of a process below this one; no memory is involved.
            unsafe {
                libc::kill(p, sig);
            }
        }
    }

    /// Every process below this one (zombies too, until reaped), from each process's parent
    /// in `/proc/<pid>/stat`.
    fn below() -> Vec<i32> {
        let me = std::process::id() as i32;
        let mut parents: Vec<(i32, i32)> = Vec::new();
        if let Ok(dir) = std::fs::read_dir("/proc") {
            for e in dir.flatten() {
                let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                    continue;
                };
                let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                    continue;
                };
                // After the command name (in parentheses, which may hold anything): state, ppid.
                let ppid = stat
                    .rsplit_once(')')
                    .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                    .and_then(|p| p.parse::<i32>().ok());
                if let Some(ppid) = ppid {
                    parents.push((pid, ppid));
                }
            }
        }
        let mut out = vec![me];
        let mut i = 0;
        while i < out.len() {
            let p = out[i];
            i += 1;
            for &(child, parent) in &parents {
                if parent == p && !out.contains(&child) {
                    out.push(child);
                }
            }
        }
        out.remove(0);
        out
    }

    /// Ends as the command did: its exit code, or the signal that ended it (raised again here,
    /// without a core file); 1 when it was never seen to end.
    fn finish(status: Option<i32>) -> u8 {
        let Some(st) = status else {
            return 1;
        };
        if libc::WIFEXITED(st) {
            return libc::WEXITSTATUS(st) as u8;
        }
        if libc::WIFSIGNALED(st) {
            let sig = libc::WTERMSIG(st);
            // SAFETY: resets the signal's handler, forbids a core file, and raises it on this
            // process, which then ends as the command did.
            unsafe {
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                libc::signal(sig, libc::SIG_DFL);
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, sig);
                libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
                libc::raise(sig);
            }
            return 128u8.saturating_add(sig as u8);
        }
        1
    }
}

#[cfg(not(target_os = "linux"))]
mod linux {
    use std::ffi::OsString;

    /// Without a subreaper the program just runs (a caller never asks for it here: see
    /// [`super::command`]).
    pub(super) fn reap(program: &OsString, args: &[OsString]) -> u8 {
        match std::process::Command::new(program).args(args).status() {
            Ok(s) => s.code().map_or(1, |c| c as u8),
            Err(_) => 127,
        }
    }
}
