//! The check a merge queue runs on what it merged: the user's own command line, run with
//! `sh -c` in teamctl's scratch worktree, its output kept in a file beside it and its last
//! lines reported, bounded in bytes too: only the log's last [`TAIL_BYTES`] are read, and a line
//! is cut to its last [`LINE_MAX`] bytes. It gets no stdin and runs in a process group of its
//! own, under a reaper ([`crate::host::reap`]): when it ends, whatever it started ends too (a
//! background child, one that left its group with `setsid`), and when it runs past its time
//! limit or the queue is interrupted, it is ended with all of them.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::host::hook::{self, Ended};
use crate::host::reap;

/// How many of the check's last output lines are kept.
pub const TAIL_LINES: usize = 20;

/// How much of the end of the check's output is read for its last lines.
pub const TAIL_BYTES: u64 = 64 * 1024;

/// The most of one line kept (its end), in bytes: a longer line is cut and starts with `…`.
pub const LINE_MAX: usize = 1000;

/// One run of the check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckRun {
    /// Whether it exited 0.
    pub passed: bool,
    /// Its exit code (`None`: ended by a signal, or by teamctl at its time limit).
    pub exit_code: Option<i32>,
    /// Whether it ran past its time limit and was ended (it then did not pass).
    pub timed_out: bool,
    /// Its last lines of output (stdout and stderr together), at most [`TAIL_LINES`], each
    /// at most [`LINE_MAX`] bytes (a longer one cut to its end, starting with `…`).
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
    let mut cmd = reap::command("sh", &[OsStr::new("-c"), OsStr::new(check.command)]);
    cmd.current_dir(dir).stdout(file).stderr(err);
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

/// The last lines of the log at `log`, read from its last [`TAIL_BYTES`] alone.
fn tail(log: &Path) -> Result<Vec<String>> {
    let context = || format!("could not read {}", log.display());
    let mut f = File::open(log).with_context(context)?;
    let len = f.metadata().with_context(context)?.len();
    let from = len.saturating_sub(TAIL_BYTES);
    f.seek(SeekFrom::Start(from)).with_context(context)?;
    let mut end = Vec::new();
    // What the check's leftovers write meanwhile is not read.
    f.take(TAIL_BYTES)
        .read_to_end(&mut end)
        .with_context(context)?;
    Ok(last_lines(&end, from > 0))
}

/// The last [`TAIL_LINES`] lines of `end`, the end of a log (`cut`: its first line is the end
/// of a longer one), each cut to [`LINE_MAX`] bytes.
fn last_lines(end: &[u8], cut: bool) -> Vec<String> {
    let end = end.strip_suffix(b"\n").unwrap_or(end);
    let lines: Vec<&[u8]> = end.split(|b| *b == b'\n').collect();
    if lines.len() == 1 && lines[0].is_empty() {
        return Vec::new();
    }
    let first = lines.len().saturating_sub(TAIL_LINES);
    lines[first..]
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let cut = (cut && first == 0 && i == 0) || line.len() > LINE_MAX;
            let mut kept = &line[line.len().saturating_sub(LINE_MAX)..];
            if cut {
                // Not from the middle of a character.
                while kept.first().is_some_and(|b| b & 0xC0 == 0x80) {
                    kept = &kept[1..];
                }
                format!("…{}", String::from_utf8_lossy(kept))
            } else {
                String::from_utf8_lossy(kept).into_owned()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_lines_are_few_and_short() {
        assert!(last_lines(b"", false).is_empty());
        assert_eq!(last_lines(b"a\nb\n", false), ["a", "b"]);
        assert_eq!(last_lines(b"a\n\nb", false), ["a", "", "b"]);
        let many: String = (0..30).map(|i| format!("{i}\n")).collect();
        let got = last_lines(many.as_bytes(), false);
        assert_eq!(got.len(), TAIL_LINES);
        assert_eq!((got[0].as_str(), got[19].as_str()), ("10", "29"));
        // A long line keeps its end, a whole character on.
        let long = format!("{}é{}\nlast", "x".repeat(2000), "y".repeat(LINE_MAX - 1));
        let got = last_lines(long.as_bytes(), false);
        assert_eq!(got[0], format!("…{}", "y".repeat(LINE_MAX - 1)));
        assert_eq!(got[1], "last");
        // The first line of a log read from its middle is cut.
        assert_eq!(
            last_lines(b"tail of it\nnext", true),
            ["…tail of it", "next"]
        );
    }

    #[test]
    fn a_huge_log_is_read_from_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let mut big = vec![b'x'; 20 << 20];
        big.extend_from_slice(b"END\nlast line\n");
        std::fs::write(&log, &big).unwrap();
        let got = tail(&log).unwrap();
        assert_eq!(got.len(), 2);
        assert!(
            got[0].starts_with('…') && got[0].ends_with("xEND"),
            "{:.20}",
            got[0]
        );
        assert_eq!(got[0].len(), "…".len() + LINE_MAX);
        assert_eq!(got[1], "last line");
    }
}
