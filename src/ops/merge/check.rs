//! The check a merge queue runs on what it merged: the user's own command line, run with
//! `sh -c` in teamctl's scratch worktree, its output kept in a file beside it and its last
//! lines reported. It gets no stdin; nothing bounds how long it runs (the user's command can).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result};
use serde::Serialize;

/// How many of the check's last output lines are kept.
pub const TAIL_LINES: usize = 20;

/// One run of the check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRun {
    /// Whether it exited 0.
    pub passed: bool,
    /// Its exit code (`None`: ended by a signal).
    pub exit_code: Option<i32>,
    /// Its last lines of output (stdout and stderr together), at most [`TAIL_LINES`].
    pub output: Vec<String>,
}

/// Runs `command` with `sh -c` in `dir`, its stdout and stderr written to `log` (replaced).
///
/// # Errors
/// `sh` cannot be started, or `log` cannot be written or read.
pub fn run(dir: &Path, command: &str, log: &Path) -> Result<CheckRun> {
    let file = File::create(log).with_context(|| format!("could not create {}", log.display()))?;
    let err = file.try_clone()?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
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
    let status = cmd.status().context("could not run the check with sh -c")?;
    Ok(CheckRun {
        passed: status.success(),
        exit_code: status.code(),
        output: tail(log)?,
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
