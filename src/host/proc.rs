//! Probes of processes on this machine: whether a process runs, when it started (how Claude
//! Code tells a reused pid apart), the processes below one, and whether teamctl runs as root.
//!
//! Linux reads `/proc`. Every other Unix (macOS first) uses what they all have, `kill(pid, 0)`
//! and `ps`; so does Linux once [`crate::host::platform::force_portable`] was called (the tests
//! run this way too). A start time is a string in the form this machine's probe gives:
//! `/proc/<pid>/stat` field 22 on Linux (clock ticks since boot, the form Claude Code writes
//! as `leadProcess.procStart`, on Linux and WSL only), `ps -o lstart=` in UTC elsewhere.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::host::platform;

/// Whether process `pid` runs and, when `proc_start` is given, is the process that started
/// then ([`proc_start`]); `None` where this machine cannot tell (no `/proc`, no `ps`, or a
/// start time in a form its probe does not give: Linux's clock ticks on macOS). A zombie
/// (exited, not yet reaped by its parent: tmux 3.3 can take seconds) does not run.
pub fn pid_alive(pid: u32, proc_start: Option<&str>) -> Option<bool> {
    if platform::portable() {
        return portable::pid_alive(pid, proc_start);
    }
    if !Path::new("/proc/self/stat").exists() {
        return None;
    }
    let Some((state, now)) = stat_fields(pid) else {
        return Some(false);
    };
    Some(!matches!(state.as_str(), "Z" | "X") && proc_start.is_none_or(|start| start == now))
}

/// The state (field 3) and start time (field 22) of `/proc/<pid>/stat`.
fn stat_fields(pid: u32) -> Option<(String, String)> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let mut rest = stat.rsplit_once(')')?.1.split_whitespace();
    let state = rest.next()?.to_string();
    Some((state, rest.nth(18)?.to_string()))
}

/// A process's start time, in the form [`pid_alive`] compares: on Linux what Claude Code
/// records in `leadProcess.procStart`, field 22 of `/proc/<pid>/stat` (clock ticks since
/// boot). `None` when there is no such process (or nothing can tell).
pub fn proc_start(pid: u32) -> Option<String> {
    if platform::portable() {
        return portable::fields(pid).ok().flatten().map(|(_, start)| start);
    }
    stat_fields(pid).map(|(_, start)| start)
}

/// `pid` and every process below it, parents before their children (Linux:
/// `/proc/<pid>/task/<tid>/children`; elsewhere the parent of every process, from `ps`). Just
/// `pid` where nothing can tell.
pub fn descendants(pid: u32) -> Vec<u32> {
    let parents = if platform::portable() {
        portable::parents()
    } else {
        Vec::new()
    };
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() && out.len() < 256 {
        let p = out[i];
        i += 1;
        let children: Vec<u32> = if platform::portable() {
            parents
                .iter()
                .filter(|&&(_, parent)| parent == p)
                .map(|&(child, _)| child)
                .collect()
        } else {
            linux_children(p)
        };
        for c in children {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

/// The children of `pid`, from every thread's `/proc/<pid>/task/<tid>/children`.
fn linux_children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for t in tasks.flatten() {
        let children = fs::read_to_string(t.path().join("children")).unwrap_or_default();
        out.extend(
            children
                .split_whitespace()
                .filter_map(|c| c.parse::<u32>().ok()),
        );
    }
    out
}

/// `pid` and every process below it ([`descendants`], at most 256), each with its start time
/// ([`proc_start`]), to wait for them to end; what this machine does not show is left out.
pub fn tree(pid: u32) -> Vec<(u32, Option<String>)> {
    descendants(pid)
        .into_iter()
        .take(256)
        .map(|p| (p, proc_start(p)))
        .collect()
}

/// Whether teamctl runs as root: its real user id is 0, which is what Claude Code checks
/// (`process.getuid() === 0`) before it refuses `--dangerously-skip-permissions`.
pub fn runs_as_root() -> bool {
    rustix::process::getuid().is_root()
}

/// What every Unix has: `kill(pid, 0)` and `ps` (POSIX `-o`, `-p`, `-A`; `lstart` is in
/// both the BSD `ps` of macOS and Linux's procps).
mod portable {
    use super::*;

    pub(super) fn pid_alive(pid: u32, proc_start: Option<&str>) -> Option<bool> {
        if !exists(pid) {
            return Some(false);
        }
        let (state, start) = match fields(pid) {
            Ok(Some(f)) => f,
            // Gone between the two looks.
            Ok(None) => return Some(false),
            Err(()) => return None,
        };
        if state.starts_with('Z') {
            return Some(false);
        }
        match proc_start {
            None => Some(true),
            Some(s) if s == start => Some(true),
            // Linux's form (clock ticks since boot) cannot be compared with `ps`'s.
            Some(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => None,
            Some(_) => Some(false),
        }
    }

    /// `kill(pid, 0)` finds a process (one of another user's too: `EPERM`).
    fn exists(pid: u32) -> bool {
        let Some(p) = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        else {
            return false;
        };
        match rustix::process::test_kill_process(p) {
            Ok(()) => true,
            Err(e) => e == rustix::io::Errno::PERM,
        }
    }

    /// `ps -o stat= -o lstart= -p PID`: the process's state and its start time (UTC, C
    /// locale, spaces squeezed). `Ok(None)`: no such process; `Err`: `ps` could not be run.
    pub(super) fn fields(pid: u32) -> Result<Option<(String, String)>, ()> {
        let out = ps(&["-o", "stat=", "-o", "lstart=", "-p", &pid.to_string()])?;
        let mut words = out.split_whitespace();
        let Some(state) = words.next() else {
            return Ok(None);
        };
        let start = words.collect::<Vec<_>>().join(" ");
        Ok((!start.is_empty()).then(|| (state.to_string(), start)))
    }

    /// Every process with its parent (`ps -A -o pid= -o ppid=`); empty when `ps` cannot be run.
    pub(super) fn parents() -> Vec<(u32, u32)> {
        let Ok(out) = ps(&["-A", "-o", "pid=", "-o", "ppid="]) else {
            return Vec::new();
        };
        out.lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace().map(|w| w.parse::<u32>().ok());
                Some((w.next()??, w.next()??))
            })
            .collect()
    }

    fn ps(args: &[&str]) -> Result<String, ()> {
        let out = Command::new("ps")
            .args(args)
            .env("LC_ALL", "C")
            .env("TZ", "UTC0")
            .stdin(Stdio::null())
            .output()
            .map_err(|_| ())?;
        // Exit 1 with nothing printed: no such process. Anything said on stderr: `ps` failed
        // (an option it lacks), which must not pass for a process gone.
        let quiet = out.stdout.is_empty() && out.stderr.is_empty();
        if out.status.success() || quiet {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_holds_the_children() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let t = tree(std::process::id());
        assert_eq!(t[0].0, std::process::id());
        assert!(t.iter().any(|(p, s)| *p == child.id() && s.is_some()));
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn own_process_is_alive_and_a_wrong_start_is_not() {
        let pid = std::process::id();
        let start = proc_start(pid).unwrap();
        assert_eq!(pid_alive(pid, Some(&start)), Some(true));
        // Another start in the same form: a reused pid.
        assert_eq!(pid_alive(pid, Some(&format!("{start}0"))), Some(false));
        assert_eq!(pid_alive(pid, None), Some(true));
        assert_eq!(pid_alive(u32::MAX - 1, None), Some(false));
        assert_eq!(pid_alive(i32::MAX as u32, None), Some(false));
        assert_eq!(proc_start(u32::MAX - 1), None);
    }

    /// Each probe, whichever this run uses by default.
    #[test]
    fn both_probes_agree_on_this_process() {
        let pid = std::process::id();
        let (state, start) = portable::fields(pid).unwrap().unwrap();
        assert!(!state.starts_with('Z'), "{state}");
        // `Mon Dec  1 14:32:00 2026`, spaces squeezed.
        assert_eq!(start.split(' ').count(), 5, "{start}");
        assert_eq!(portable::pid_alive(pid, Some(&start)), Some(true));
        assert_eq!(portable::pid_alive(pid, Some("1 Jan")), Some(false));
        // Linux's form cannot be checked by `ps`.
        assert_eq!(portable::pid_alive(pid, Some("12345")), None);
        assert_eq!(
            portable::pid_alive(u32::MAX - 1, Some("12345")),
            Some(false)
        );
        if cfg!(target_os = "linux") {
            let (state, ticks) = stat_fields(pid).unwrap();
            assert!(!state.starts_with('Z'));
            assert!(ticks.bytes().all(|b| b.is_ascii_digit()), "{ticks}");
        }
    }

    #[test]
    fn a_zombie_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not reaped yet: a zombie once it has exited.
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while pid_alive(pid, None) == Some(true) && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let state = portable::fields(pid).unwrap().map(|(s, _)| s);
        assert!(state.is_some_and(|s| s.starts_with('Z')), "a zombie");
        assert_eq!(pid_alive(pid, None), Some(false));
        assert_eq!(portable::pid_alive(pid, None), Some(false));
        child.wait().unwrap();
        assert_eq!(pid_alive(pid, None), Some(false));
    }

    #[test]
    fn a_child_and_its_child_are_below_their_parent() {
        let dir = tempfile::tempdir().unwrap();
        let pids = dir.path().join("pids");
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("sleep 30 & echo $! > {}; wait", pids.display()))
            .spawn()
            .unwrap();
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let mut grandchild = None;
        while grandchild.is_none() && std::time::Instant::now() < end {
            grandchild = fs::read_to_string(&pids)
                .ok()
                .and_then(|s| s.trim().parse::<u32>().ok());
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let grandchild = grandchild.unwrap();
        let mine = std::process::id();
        let below = descendants(mine);
        let _ = rustix::process::kill_process(
            rustix::process::Pid::from_raw(grandchild as i32).unwrap(),
            rustix::process::Signal::TERM,
        );
        child.wait().unwrap();
        assert_eq!(below[0], mine);
        let at = |p: u32| below.iter().position(|&b| b == p);
        assert!(at(child.id()).is_some(), "{below:?}");
        assert!(at(grandchild) > at(child.id()), "{below:?}");
        assert_eq!(descendants(u32::MAX - 1), vec![u32::MAX - 1]);
    }
}
