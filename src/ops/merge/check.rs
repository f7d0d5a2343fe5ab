//! The check a merge queue runs on what it merged: the user's own command line, run with
//! `sh -c` in teamctl's scratch worktree, its output kept in a file beside it and its last
//! lines reported. It gets no stdin, runs in a process group of its own, and is ended with that
//! whole group when it runs past its time limit or the queue is interrupted.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::host::hook::{self, Ended};

/// How many of the check's last output lines are kept.
pub const TAIL_LINES: usize = 20;

/// One run of the check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRun {
    /// Whether it exited 0.
    pub passed: bool,
    /// Its exit code (`None`: ended by a signal, or by teamctl at its time limit).
    pub exit_code: Option<i32>,
    /// Whether it ran past its time limit and was ended (it then did not pass).
    pub timed_out: bool,
    /// Its last lines of output (stdout and stderr together), at most [`TAIL_LINES`].
    pub output: Vec<String>,
}

/// How a check is run: its command line and how long it may take.
#[derive(Debug, Clone, Copy)]
pub struct Check<'a> {
    /// The command line, for `sh -c`.
    pub command: &'a str,
    /// How long it may run before it and its process group are ended.
    pub limit: Duration,
}

/// Runs `check` with `sh -c` in `dir`, its stdout and stderr written to `log` (replaced); asks
/// `stop` while it runs and ends it when that says so (the caller sees the interrupt itself).
///
/// # Errors
/// `sh` cannot be started, or `log` cannot be written or read.
pub fn run(dir: &Path, check: Check, log: &Path, stop: &dyn Fn() -> bool) -> Result<CheckRun> {
    let file = File::create(log).with_context(|| format!("could not create {}", log.display()))?;
    let err = file.try_clone()?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(check.command)
        .current_dir(dir)
        .stdout(file)
        .stderr(err);
    // The check runs in the scratch worktree, whatever repository the caller's git was told of.
    for k in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_COMMON_DIR",
        "GIT_OBJECT_DIRECTORY",
    ] {
        cmd.env_remove(k);
    }
    let running =
        hook::start(&mut cmd, Vec::new()).context("could not run the check with sh -c")?;
    let (ended, _) = running.wait_or(check.limit, stop);
    let mut output = tail(log)?;
    let (exit_code, timed_out) = match ended {
        Ended::Exited(c) => (Some(c), false),
        Ended::Signaled(_) | Ended::Stopped => (None, false),
        Ended::TimedOut => {
            output.push(format!(
                "teamctl: the check ran past its time limit ({}) and was ended with its \
                 process group",
                crate::units::duration(check.limit.as_secs())
            ));
            if output.len() > TAIL_LINES {
                output.remove(0);
            }
            (None, true)
        }
    };
    Ok(CheckRun {
        passed: ended.ok(),
        exit_code,
        timed_out,
        output,
    })
}

fn tail(log: &Path) -> Result<Vec<String>> {
    let f = File::open(log).with_context(|| format!("could not read {}", log.display()))?;
    let mut last = std::collections::VecDeque::with_capacity(TAIL_LINES + 1);
    for line in BufReader::new(f).split(b'\n') {
        let line = line.with_context(|| format!("could not read {}", log.display()))?;
        last.push_back(String::from_utf8_lossy(&line).into_owned());
        if last.len() > TAIL_LINES {
            last.pop_front();
        }
    }
    Ok(last.into())
}
