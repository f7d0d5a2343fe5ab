//! Probes of processes on this machine, from `/proc`: whether a process runs, and when it
//! started (how Claude Code tells a reused pid apart).

use std::fs;
use std::path::Path;

/// Whether process `pid` runs and, when `proc_start` is given, is the process that started
/// then ([`proc_start`]); `None` where `/proc` cannot tell. A zombie (exited, not yet reaped
/// by its parent: tmux 3.3 can take seconds) does not run.
pub fn pid_alive(pid: u32, proc_start: Option<&str>) -> Option<bool> {
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

/// A process's start time as Claude Code records it in `leadProcess.procStart`: field 22 of
/// `/proc/<pid>/stat` (clock ticks since boot). `None` when there is no such process.
pub fn proc_start(pid: u32) -> Option<String> {
    stat_fields(pid).map(|(_, start)| start)
}

/// `pid` and every process below it (Linux: `/proc/<pid>/task/*/children`), each with its start
/// time ([`proc_start`]), to wait for them to end; what `/proc` does not show is left out.
pub fn tree(pid: u32) -> Vec<(u32, Option<String>)> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        if out.iter().any(|(q, _)| *q == p) || out.len() >= 256 {
            continue;
        }
        out.push((p, proc_start(p)));
        let Ok(tasks) = fs::read_dir(format!("/proc/{p}/task")) else {
            continue;
        };
        for t in tasks.flatten() {
            let children = fs::read_to_string(t.path().join("children")).unwrap_or_default();
            todo.extend(
                children
                    .split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    out
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
        assert_eq!(pid_alive(pid, Some("1")), Some(false));
        assert_eq!(pid_alive(pid, None), Some(true));
        assert_eq!(pid_alive(u32::MAX - 1, None), Some(false));
    }

    #[test]
    fn a_zombie_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        // Not reaped yet: a zombie once it has exited.
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while stat_fields(pid).is_some_and(|(s, _)| s != "Z") && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(stat_fields(pid).map(|(s, _)| s).as_deref(), Some("Z"));
        assert_eq!(pid_alive(pid, None), Some(false));
        child.wait().unwrap();
        assert_eq!(pid_alive(pid, None), Some(false));
    }
}
