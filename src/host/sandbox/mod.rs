//! A Claude Code session confined to its own work: the engines that enforce its sandbox
//! ([`crate::sandbox::Rules`], the rules as data, recorded with the team and shown by `status
//! --json`) (bubblewrap on Linux: [`bwrap`]; `sandbox-exec` on macOS: [`macos`]), the check that an
//! engine can run here ([`find`]), the seccomp program that keeps every Unix socket out of
//! reach ([`seccomp`]), what Claude Code writes for a session ([`client`]), and a teammate's
//! own git clone ([`clone`]). docs/sandbox.md says what is confined and what is not.
//!
//! A sandbox is described once, by the caller (`ops::create`, `ops::run`), as paths: what is
//! writable, what stays read-only inside that, what is hidden. An engine turns the rules into
//! the command line a tmux pane runs: `exec <engine> … /bin/sh -c '<the unconfined command>'`,
//! so that the launch line itself (`host::claude`) knows nothing of sandboxes.

pub mod bwrap;
pub mod client;
pub mod clone;
pub mod macos;
pub mod seccomp;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::error::usage;
use crate::sandbox::{Engine, EngineKind, Rules};

/// The command line a tmux pane runs: `inner` (a shell command) confined by `r`.
///
/// # Errors
/// A path the engine cannot give (a writable one that is gone).
pub fn wrap(r: &Rules, inner: &str) -> Result<String> {
    match r.engine.kind {
        EngineKind::Bwrap => bwrap::command(r, inner),
        EngineKind::SandboxExec => Ok(macos::command(r, inner)),
    }
}

/// The variables a sandbox of `kind` sets or removes itself, which a teammate's own `env`
/// cannot give inside it (bubblewrap's; sandbox-exec changes no variable).
pub fn env_taken(kind: EngineKind) -> &'static [&'static str] {
    match kind {
        EngineKind::Bwrap => &bwrap::TAKEN,
        EngineKind::SandboxExec => &[],
    }
}

/// Where the engine of this system is, when it can run here: `bwrap` (`explicit`, else on
/// `path`) started once with the namespaces a sandbox uses, `sandbox-exec` at its one place.
/// A missing engine or one the system blocks is a usage error (exit 2) naming the cause and
/// the fix: a teammate asked to be confined never runs unconfined.
///
/// # Errors
/// As said; no engine on this system at all.
pub fn find(
    explicit: Option<&Path>,
    path: Option<&std::ffi::OsStr>,
    net_off: bool,
) -> Result<Engine> {
    match EngineKind::native() {
        Some(EngineKind::Bwrap) => bwrap::find(explicit, path, net_off),
        Some(EngineKind::SandboxExec) => macos::find(explicit),
        None => Err(usage(format!(
            "there is no sandbox engine for {} (bubblewrap on Linux, sandbox-exec on macOS): \
             drop `sandbox` to run the teammates unconfined",
            std::env::consts::OS
        ))),
    }
}

/// Runs `cmd` (without teamctl's secrets) for at most `limit`, its output kept; `None` when it did not end in time (it is
/// killed) or could not start.
fn run_briefly(mut cmd: Command, limit: Duration) -> Option<std::process::Output> {
    let mut child = crate::host::child_env::scrub(&mut cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    let end = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => return child.wait_with_output().ok(),
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// The first of `names` that is an executable file in one of `path`'s folders.
fn on_path(name: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?)
        .map(|d| d.join(name))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Checks that every writable path is there (an engine binds what exists).
///
/// # Errors
/// A usage error naming the first that is not.
pub fn check_writable(paths: &[PathBuf], what: &str) -> Result<()> {
    for p in paths {
        if !p.is_absolute() {
            bail!("{what}: {} is not an absolute path", p.display());
        }
        if p.symlink_metadata().is_err() {
            return Err(usage(format!(
                "{what}: {} does not exist; make it first, or drop it",
                p.display()
            )));
        }
    }
    Ok(())
}
