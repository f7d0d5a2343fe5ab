//! Running a command for an event (a hook, as `watch --exec` does): `sh -c COMMAND` in a process
//! group of its own, its input written to its standard input, bounded by a timeout after which
//! the whole group is ended (SIGTERM, then SIGKILL after [`GRACE`]).
//!
//! A hook that does not read its input does not block: the input is written by a thread of its
//! own, which gives up when the hook has closed its end or its group was killed. Claude Code's
//! own hooks take their JSON on standard input in the same way.

use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// How long a timed-out hook's group has between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_secs(1);

/// How often [`Running::wait_or`] asks whether to stop.
pub const STOP_EVERY: Duration = Duration::from_millis(100);

/// How a hook ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it.
    Signaled(i32),
    /// It ran past its timeout and its process group was killed.
    TimedOut,
    /// The caller stopped it (an interrupt) and its process group was killed.
    Stopped,
}

impl Ended {
    /// Whether it exited with status 0.
    pub fn ok(self) -> bool {
        self == Ended::Exited(0)
    }

    fn of(s: ExitStatus) -> Ended {
        match (s.code(), s.signal()) {
            (Some(c), _) => Ended::Exited(c),
            (None, Some(sig)) => Ended::Signaled(sig),
            (None, None) => Ended::Exited(-1),
        }
    }
}

/// A hook that was started.
#[derive(Debug)]
pub struct Running {
    pgid: i32,
    started: Instant,
    status: mpsc::Receiver<std::io::Result<ExitStatus>>,
}

/// Starts `sh -c command` in a new process group with `env` added to its environment, `input`
/// on its standard input and `stdout`/`stderr` as given.
///
/// # Errors
/// When `sh` cannot be started.
pub fn spawn(
    command: &str,
    env: &[(&str, &str)],
    input: Vec<u8>,
    stdout: Stdio,
    stderr: Stdio,
) -> Result<Running> {
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .envs(env.iter().copied())
        .stdout(stdout)
        .stderr(stderr);
    start(&mut cmd, input).with_context(|| format!("could not start the hook `{command}`"))
}

/// Starts `cmd` (its arguments, folder, environment and output set by the caller, less
/// teamctl's secrets: [`crate::host::child_env`]) in a new process group, `input` on its
/// standard input.
///
/// # Errors
/// When it cannot be started.
pub fn start(cmd: &mut Command, input: Vec<u8>) -> Result<Running> {
    let mut child: Child = crate::host::child_env::scrub(cmd)
        .stdin(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let pgid = child.id() as i32;
    let started = Instant::now();
    if let Some(mut stdin) = child.stdin.take() {
        // A hook that never reads, or exits first, makes this write fail or block until its
        // group is gone; either way the hook's end is judged by its exit alone.
        thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let (tx, status) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    Ok(Running {
        pgid,
        started,
        status,
    })
}

impl Running {
    /// The hook's process group.
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    /// Waits until the hook ends or `timeout` has passed since it started; then its whole
    /// process group is ended. Returns how it ended and how long it ran.
    pub fn wait(self, timeout: Duration) -> (Ended, Duration) {
        self.wait_or(timeout, &|| false)
    }

    /// As [`Running::wait`], and ends it as well when `stop` says so (asked every
    /// [`STOP_EVERY`]): then it ended [`Ended::Stopped`].
    pub fn wait_or(self, timeout: Duration, stop: &dyn Fn() -> bool) -> (Ended, Duration) {
        loop {
            let left = timeout.saturating_sub(self.started.elapsed());
            match self.status.recv_timeout(left.min(STOP_EVERY)) {
                Ok(r) => {
                    let ended = r.map_or(Ended::Exited(-1), Ended::of);
                    return (ended, self.started.elapsed());
                }
                Err(_) if stop() => return (Ended::Stopped, self.end()),
                Err(_) if left <= STOP_EVERY => return (Ended::TimedOut, self.end()),
                Err(_) => {}
            }
        }
    }

    /// Ends its whole process group (SIGTERM, SIGKILL after [`GRACE`]); returns how long it ran.
    fn end(self) -> Duration {
        kill_group(self.pgid, libc::SIGTERM);
        let end = Instant::now() + GRACE;
        let exited = self.status.recv_timeout(GRACE).is_ok();
        // The hook itself may be gone while something it started ignores SIGTERM: a group
        // number is never reused while any member is alive, so one still there is the hook's.
        while group_alive(self.pgid) && Instant::now() < end {
            thread::sleep(Duration::from_millis(10));
        }
        if group_alive(self.pgid) || !exited {
            kill_group(self.pgid, libc::SIGKILL);
        }
        if !exited {
            let _ = self.status.recv();
        }
        self.started.elapsed()
    }
}

/// Whether the process group `pgid` has a member.
fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    pgid > 1 && unsafe { libc::kill(-pgid, 0) } == 0
}

/// Sends `signal` to the process group `pgid` (it may be gone already).
pub fn kill_group(pgid: i32, signal: i32) {
    if pgid > 1 {
        // SAFETY: kill(2) with a negative pid signals a process group; no memory is involved.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cmd: &str, input: &str, timeout: Duration) -> (Ended, Duration) {
        spawn(
            cmd,
            &[("HOOK_X", "x")],
            input.as_bytes().to_vec(),
            Stdio::null(),
            Stdio::null(),
        )
        .unwrap()
        .wait(timeout)
    }

    #[test]
    fn exit_codes_input_and_environment() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let cmd = format!("cat > {}; echo \"$HOOK_X\" >> {0}; exit 3", out.display());
        assert_eq!(
            run(&cmd, "{\"a\":1}\n", Duration::from_secs(10)).0,
            Ended::Exited(3)
        );
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "{\"a\":1}\nx\n");
        assert!(run("true", "", Duration::from_secs(10)).0.ok());
        assert_eq!(
            run("kill -9 $$", "", Duration::from_secs(10)).0,
            Ended::Signaled(9)
        );
    }

    #[test]
    fn a_hook_that_reads_nothing_of_a_big_input_is_not_blocked() {
        let big = "x".repeat(1 << 20);
        assert!(run("exit 0", &big, Duration::from_secs(10)).0.ok());
    }

    #[test]
    fn a_hanging_hook_and_its_children_are_killed() {
        let dir = tempfile::tempdir().unwrap();
        let pid = dir.path().join("pid");
        // A child that ignores SIGTERM: SIGKILL after the grace period ends it too.
        let cmd = format!(
            "sh -c 'trap \"\" TERM; echo $$ > {}; sleep 60' & wait",
            pid.display()
        );
        let t = Instant::now();
        let (ended, _) = run(&cmd, "", Duration::from_secs(2));
        assert_eq!(ended, Ended::TimedOut);
        assert!(t.elapsed() < Duration::from_secs(10));
        let child: u32 = std::fs::read_to_string(&pid)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Gone, or a zombie waiting for its reaper.
        let alive = || crate::host::proc::pid_alive(child, None) == Some(true);
        let end = Instant::now() + Duration::from_secs(5);
        while alive() && Instant::now() < end {
            thread::sleep(Duration::from_millis(10));
        }
        assert!(!alive(), "the hook's child is gone");
    }
}
