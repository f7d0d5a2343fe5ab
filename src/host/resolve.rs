//! Finding the `claude` binary without a login shell's PATH (cron and CI have a minimal one).
//!
//! The order, first hit wins; every candidate must be an executable file:
//! 1. the explicit path (`--claude-bin` / `TEAMCTL_CLAUDE_BIN`): authoritative, never skipped;
//! 2. `CLAUDE_CODE_TEAMMATE_COMMAND` (what Claude Code itself starts teammates with);
//! 3. `claude` on `PATH` (searched by the `which` crate);
//! 4. `~/.local/bin/claude`, `~/.claude/local/claude`, `~/.npm-global/bin/claude`,
//!    `~/.npm/bin/claude`, `/usr/local/bin/claude`, `/opt/homebrew/bin/claude`;
//! 5. every `~/.nvm/versions/node/*/bin/claude`, newest Node first;
//! 6. the newest `~/.local/share/claude/versions/*`.
//!
//! `which` does the `PATH` search and the executable check; the install places, and picking the
//! newest nvm Node or `versions/*` entry by version number, are Claude Code's own layout, which
//! no crate knows, so they stay here.

use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde::Serialize;

/// What the search may look at: everything the caller read from the environment.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// `--claude-bin` or `TEAMCTL_CLAUDE_BIN`.
    pub explicit: Option<PathBuf>,
    /// `CLAUDE_CODE_TEAMMATE_COMMAND`.
    pub teammate_command: Option<PathBuf>,
    /// The value of `PATH`.
    pub path_var: Option<OsString>,
    /// The home directory (`None` skips the places under it).
    pub home: Option<PathBuf>,
    /// The install places outside the home directory, in order (normally [`SYSTEM_PLACES`]).
    pub system_places: Vec<PathBuf>,
}

/// The install places outside the home directory, in search order.
pub const SYSTEM_PLACES: [&str; 2] = ["/usr/local/bin/claude", "/opt/homebrew/bin/claude"];

impl Inputs {
    /// Inputs with the standard [`SYSTEM_PLACES`].
    pub fn new(
        explicit: Option<PathBuf>,
        teammate_command: Option<PathBuf>,
        path_var: Option<OsString>,
        home: Option<PathBuf>,
    ) -> Inputs {
        Inputs {
            explicit,
            teammate_command,
            path_var,
            home,
            system_places: SYSTEM_PLACES.iter().map(PathBuf::from).collect(),
        }
    }
}

/// Which rule found the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FoundBy {
    /// `--claude-bin` / `TEAMCTL_CLAUDE_BIN`.
    Explicit,
    /// `CLAUDE_CODE_TEAMMATE_COMMAND`.
    TeammateCommand,
    /// `PATH`.
    Path,
    /// One of the usual install places.
    InstallPlace,
    /// An nvm-managed Node.
    Nvm,
    /// `~/.local/share/claude/versions`.
    Versions,
}

impl FoundBy {
    /// The snake_case name used in output.
    pub fn as_str(self) -> &'static str {
        match self {
            FoundBy::Explicit => "explicit",
            FoundBy::TeammateCommand => "teammate_command",
            FoundBy::Path => "path",
            FoundBy::InstallPlace => "install_place",
            FoundBy::Nvm => "nvm",
            FoundBy::Versions => "versions",
        }
    }
}

/// A binary that was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its path, as found (not canonicalised).
    pub path: PathBuf,
    /// The rule that found it.
    pub found_by: FoundBy,
}

/// Whether `p` is a regular file (after symlinks) that this process may execute. An absolute
/// path is asked of the `which` crate, which checks with `access(2)` `X_OK` (ACLs, a read-only
/// `noexec` mount, root's rules) rather than guessing from the mode bits; a relative one (an
/// explicit `--claude-bin ./claude`) falls back to the mode bits, since `which` would look it
/// up relative to a working directory we do not want to pass.
pub fn is_executable(p: &Path) -> bool {
    if p.is_absolute() {
        return which::which_global(p).is_ok();
    }
    fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The first executable `claude` in the `PATH` value `path_var`, found by the `which` crate.
/// Empty entries (the current directory) are dropped first: a cron job should not depend on
/// where it happens to run.
fn on_path(path_var: &OsString) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = std::env::split_paths(path_var)
        .filter(|d| !d.as_os_str().is_empty())
        .collect();
    let joined = std::env::join_paths(dirs).ok()?;
    which::which_in_global("claude", Some(joined)).ok()?.next()
}

/// Every candidate in search order, with the rule that yields it.
pub fn candidates(inp: &Inputs) -> Vec<(PathBuf, FoundBy)> {
    let mut out = Vec::new();
    if let Some(p) = &inp.teammate_command {
        out.push((p.clone(), FoundBy::TeammateCommand));
    }
    if let Some(path) = &inp.path_var {
        for dir in std::env::split_paths(path) {
            // An empty PATH entry means the current directory; a cron job should not depend
            // on where it happens to run, so it is skipped.
            if !dir.as_os_str().is_empty() {
                out.push((dir.join("claude"), FoundBy::Path));
            }
        }
    }
    let home = inp.home.as_deref();
    for rel in [
        ".local/bin/claude",
        ".claude/local/claude",
        ".npm-global/bin/claude",
        ".npm/bin/claude",
    ] {
        if let Some(h) = home {
            out.push((h.join(rel), FoundBy::InstallPlace));
        }
    }
    for abs in &inp.system_places {
        out.push((abs.clone(), FoundBy::InstallPlace));
    }
    if let Some(h) = home {
        let nvm = newest_first(&h.join(".nvm/versions/node"));
        if nvm.is_empty() {
            // Listed as a pattern, so a failure says where nvm installs would have been.
            out.push((h.join(".nvm/versions/node/*/bin/claude"), FoundBy::Nvm));
        }
        for dir in nvm {
            out.push((dir.join("bin/claude"), FoundBy::Nvm));
        }
        let versions = h.join(".local/share/claude/versions");
        match newest_first(&versions).into_iter().next() {
            Some(v) => out.push((v, FoundBy::Versions)),
            None => out.push((versions.join("*"), FoundBy::Versions)),
        }
    }
    // A place listed twice (a PATH entry repeated, or also an install place) is looked at once.
    let mut seen = std::collections::HashSet::new();
    out.retain(|(p, _)| seen.insert(p.clone()));
    out
}

/// Finds the binary (see the module docs for the order).
///
/// # Errors
/// When an explicit path is not an executable file, or nothing is found; the message lists
/// every place looked at.
pub fn find(inp: &Inputs) -> Result<Found> {
    if let Some(p) = &inp.explicit {
        if is_executable(p) {
            return Ok(Found {
                path: p.clone(),
                found_by: FoundBy::Explicit,
            });
        }
        bail!(
            "the claude binary given with --claude-bin or TEAMCTL_CLAUDE_BIN is not an executable \
             file: {}",
            p.display()
        );
    }
    let all = candidates(inp);
    if let Some(p) = inp.teammate_command.as_ref().filter(|p| is_executable(p)) {
        return Ok(Found {
            path: p.clone(),
            found_by: FoundBy::TeammateCommand,
        });
    }
    if let Some(path) = inp.path_var.as_ref().and_then(on_path) {
        return Ok(Found {
            path,
            found_by: FoundBy::Path,
        });
    }
    let mut rest = all
        .iter()
        .filter(|(_, by)| !matches!(by, FoundBy::TeammateCommand | FoundBy::Path));
    if let Some((path, found_by)) = rest.find(|(p, _)| is_executable(p)) {
        return Ok(Found {
            path: path.clone(),
            found_by: *found_by,
        });
    }
    let looked: Vec<String> = all
        .iter()
        .map(|(p, by)| format!("  {} ({})", p.display(), by.as_str()))
        .collect();
    bail!(
        "could not find the claude binary; pass --claude-bin PATH or set TEAMCTL_CLAUDE_BIN. \
         Looked at:\n{}",
        looked.join("\n")
    )
}

/// The entries of `dir`, ordered by their name read as a version (`v20.11.1`, `2.1.332`),
/// newest first; names that are no version sort last.
fn newest_first(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<(Vec<u64>, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .map(|e| (version_key(&e.file_name().to_string_lossy()), e.path()))
        .collect();
    v.sort_by(|a, b| b.cmp(a));
    v.into_iter().map(|(_, p)| p).collect()
}

/// `v20.11.1` → `[20, 11, 1]`; a part that is not a number ends the key.
fn version_key(name: &str) -> Vec<u64> {
    name.trim_start_matches('v')
        .split(['.', '-', '+'])
        .map_while(|p| p.parse().ok())
        .collect()
}

/// Runs `<bin> --version` and returns its first output line, or `None` when it fails or takes
/// longer than `timeout` (its whole process group is then killed and the child reaped).
pub fn version(bin: &Path, timeout: Duration) -> Option<String> {
    let (status, line) = first_line(bin, "--version", timeout)?;
    (status.success() && !line.is_empty()).then_some(line)
}

/// Runs `<bin> --help` and returns what it printed (the options it takes), or `None` when it
/// fails or takes longer than `timeout` (as [`version`]).
pub fn help(bin: &Path, timeout: Duration) -> Option<String> {
    let (status, text) = output(bin, "--help", timeout)?;
    (status.success() && !text.is_empty()).then_some(text)
}

/// Runs `<bin> <arg>` as `output` does and returns its exit status and the first line it
/// printed, trimmed.
pub fn first_line(bin: &Path, arg: &str, timeout: Duration) -> Option<(ExitStatus, String)> {
    let (status, text) = output(bin, arg, timeout)?;
    let line = text.lines().next().unwrap_or("").trim().to_string();
    Some((status, line))
}

/// Runs `<bin> <arg>` (without teamctl's secrets: [`crate::host::child_env`]) in a process
/// group of its own and returns its exit status and what it printed on stdout; `None` when it
/// cannot start or does not finish within `timeout`.
/// Then, and whenever it leaves something behind holding its output open, the whole group is
/// killed (`SIGKILL`): a `claude` that is a shell script starting `node` does not leave `node`
/// running, and nothing it starts can make teamctl wait past `timeout`. The child is always
/// reaped.
fn output(bin: &Path, arg: &str, timeout: Duration) -> Option<(ExitStatus, String)> {
    let mut child = crate::host::child_env::scrub(&mut Command::new(bin))
        .arg(arg)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .ok()?;
    let group = child.id();
    let kill_group = || {
        if let Some(pid) = rustix::process::Pid::from_raw(group as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    };
    // Read on a thread: a grandchild can hold the pipe open after the child exits.
    let mut stdout = child.stdout.take()?;
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        let _ = tx.send(out);
    });
    let end = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < end => thread::sleep(Duration::from_millis(10)),
            _ => {
                kill_group();
                let _ = child.wait();
                return None;
            }
        }
    };
    let out = match rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
        Ok(out) => out,
        Err(_) => {
            kill_group();
            rx.recv_timeout(Duration::from_secs(1)).ok()?
        }
    };
    Some((status, String::from_utf8_lossy(&out).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exe(p: &Path, body: &str) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, format!("#!/bin/sh\n{body}\n")).unwrap();
        fs::set_permissions(p, fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn resolution_order() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let bin1 = tmp.path().join("bin1");
        let bin2 = tmp.path().join("bin2");
        let sys = tmp.path().join("sys/claude");
        let mut inp = Inputs {
            explicit: None,
            teammate_command: None,
            path_var: Some(std::env::join_paths([&bin1, &bin2]).unwrap()),
            home: Some(home.clone()),
            system_places: vec![sys.clone()],
        };
        let found = |inp: &Inputs| find(inp).map(|f| (f.path, f.found_by));

        // Nothing anywhere: the error lists every place.
        let err = format!("{:#}", find(&inp).unwrap_err());
        for p in [
            bin1.join("claude"),
            bin2.join("claude"),
            home.join(".local/bin/claude"),
            home.join(".claude/local/claude"),
            home.join(".npm-global/bin/claude"),
            home.join(".npm/bin/claude"),
            sys.clone(),
            home.join(".nvm/versions/node/*/bin/claude"),
            home.join(".local/share/claude/versions/*"),
        ] {
            assert!(
                err.contains(&p.display().to_string()),
                "{p:?} missing in {err}"
            );
        }

        // Newest versions/* entry; a non-executable newer one does not count.
        exe(&home.join(".local/share/claude/versions/2.1.99"), "");
        exe(&home.join(".local/share/claude/versions/2.1.332"), "");
        let v = home.join(".local/share/claude/versions/2.1.332");
        assert_eq!(found(&inp).unwrap(), (v, FoundBy::Versions));
        // nvm beats versions; newest Node first.
        exe(&home.join(".nvm/versions/node/v18.20.0/bin/claude"), "");
        exe(&home.join(".nvm/versions/node/v20.11.1/bin/claude"), "");
        exe(&home.join(".nvm/versions/node/v20.9.0/bin/claude"), "");
        let n = home.join(".nvm/versions/node/v20.11.1/bin/claude");
        assert_eq!(found(&inp).unwrap(), (n, FoundBy::Nvm));
        exe(&sys, "");
        assert_eq!(found(&inp).unwrap(), (sys.clone(), FoundBy::InstallPlace));
        exe(&home.join(".npm/bin/claude"), "");
        let p = home.join(".npm/bin/claude");
        assert_eq!(found(&inp).unwrap(), (p, FoundBy::InstallPlace));
        exe(&home.join(".local/bin/claude"), "");
        let p = home.join(".local/bin/claude");
        assert_eq!(found(&inp).unwrap(), (p, FoundBy::InstallPlace));
        // PATH, in PATH order; a non-executable file is skipped.
        fs::create_dir_all(&bin1).unwrap();
        fs::write(bin1.join("claude"), "not executable").unwrap();
        exe(&bin2.join("claude"), "");
        assert_eq!(found(&inp).unwrap(), (bin2.join("claude"), FoundBy::Path));
        exe(&bin1.join("claude"), "");
        assert_eq!(found(&inp).unwrap(), (bin1.join("claude"), FoundBy::Path));
        // CLAUDE_CODE_TEAMMATE_COMMAND beats PATH, but is skipped when not executable.
        inp.teammate_command = Some(tmp.path().join("nope"));
        assert_eq!(found(&inp).unwrap(), (bin1.join("claude"), FoundBy::Path));
        let tc = tmp.path().join("tc/claude");
        exe(&tc, "");
        inp.teammate_command = Some(tc.clone());
        assert_eq!(found(&inp).unwrap(), (tc, FoundBy::TeammateCommand));
        // The explicit path wins, and a bad one is an error rather than a fallback.
        let ex = tmp.path().join("ex/claude");
        exe(&ex, "");
        inp.explicit = Some(ex.clone());
        assert_eq!(found(&inp).unwrap(), (ex, FoundBy::Explicit));
        inp.explicit = Some(tmp.path().join("missing"));
        let err = format!("{:#}", find(&inp).unwrap_err());
        assert!(err.contains("not an executable file"), "{err}");
    }

    #[test]
    fn version_keys_order() {
        assert!(version_key("v20.11.1") > version_key("v20.9.0"));
        assert!(version_key("2.1.332") > version_key("2.1.99"));
        assert_eq!(version_key("latest"), Vec::<u64>::new());
    }

    #[test]
    fn version_is_read_and_times_out() {
        let tmp = tempfile::tempdir().unwrap();
        let ok = tmp.path().join("ok");
        exe(&ok, "echo '2.1.332 (Claude Code)'");
        assert_eq!(
            version(&ok, Duration::from_secs(5)).as_deref(),
            Some("2.1.332 (Claude Code)")
        );
        let slow = tmp.path().join("slow");
        exe(&slow, "exec sleep 5");
        let t = Instant::now();
        assert_eq!(version(&slow, Duration::from_millis(200)), None);
        assert!(t.elapsed() < Duration::from_secs(3));
        assert_eq!(
            version(&tmp.path().join("missing"), Duration::from_secs(1)),
            None
        );
    }

    /// A `claude` that is a script starting a child that never ends (as a wrapper starts
    /// `node`): at the timeout the whole group is gone, the script reaped, not left running.
    #[test]
    fn a_version_that_never_returns_leaves_nothing_running() {
        let tmp = tempfile::tempdir().unwrap();
        let pids = tmp.path().join("pids");
        let hang = tmp.path().join("hang");
        exe(
            &hang,
            &format!("sleep 300 & echo $$ $! > {}; wait", pids.display()),
        );
        let t = Instant::now();
        assert_eq!(version(&hang, Duration::from_millis(300)), None);
        assert!(t.elapsed() < Duration::from_secs(3));
        let text = fs::read_to_string(&pids).unwrap();
        for pid in text.split_whitespace() {
            let gone = (0..200).any(|_| {
                let alive = crate::host::proc::pid_alive(pid.parse().unwrap(), None) == Some(true);
                if alive {
                    thread::sleep(Duration::from_millis(10));
                }
                !alive
            });
            assert!(gone, "process {pid} is still running");
        }
        // Exits at once but leaves a child holding its output open: no wait past the timeout.
        let early = tmp.path().join("early");
        exe(&early, "echo 1.2.3; sleep 300 &");
        let t = Instant::now();
        let _ = version(&early, Duration::from_millis(300));
        assert!(t.elapsed() < Duration::from_secs(3));
    }
}
