//! The few tmux commands teamctl runs for teams it leads: a detached session of its own, one
//! window per teammate, pane liveness and the tail of a pane's screen.
//!
//! tmux is found on `PATH` and talks to the server the environment selects (`TMUX_TMPDIR`,
//! `TMUX`), so a caller (or a test) that sets `TMUX_TMPDIR` gets a private server.

use std::collections::HashMap;
use std::process::{Command, Output};

use anyhow::{Context, Result, bail};

use crate::store::paths::TeamName;

/// One pane of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pane {
    /// Its id (`%12`).
    pub id: String,
    /// Whether its process has exited (the pane stays, `remain-on-exit`).
    pub dead: bool,
    /// The exit status of a dead pane.
    pub status: Option<i32>,
}

fn run(args: &[&str]) -> Result<Output> {
    Command::new("tmux")
        .args(args)
        .output()
        .with_context(|| format!("could not run tmux {}", args.first().unwrap_or(&"")))
}

fn checked(args: &[&str]) -> Result<String> {
    let out = run(args)?;
    if !out.status.success() {
        bail!(
            "tmux {} failed: {}",
            args.first().unwrap_or(&""),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether `tmux -V` runs.
pub fn available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether a session with exactly this name exists.
pub fn has_session(name: &str) -> bool {
    run(&["has-session", "-t", &format!("={name}")]).is_ok_and(|o| o.status.success())
}

/// The id (`$3`) of the session with exactly this name, when it exists: unique for the life of
/// the tmux server, so a session made later under the same name has another.
pub fn session_id(name: &str) -> Option<String> {
    let out = run(&[
        "display-message",
        "-p",
        "-t",
        &format!("={name}:"),
        "#{session_id}",
    ])
    .ok()?;
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && id.starts_with('$')).then_some(id)
}

/// The socket of the tmux server that has the session with this id (`$3`).
pub fn socket_path(session_id: &str) -> Option<String> {
    let out = run(&["display-message", "-p", "-t", session_id, "#{socket_path}"]).ok()?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && path.starts_with('/')).then_some(path)
}

/// What a new window runs until [`respawn`] replaces it: something that waits quietly.
const PLACEHOLDER: &str = "exec sleep 86400";

/// Starts a detached session `session` whose first window is `window`. Returns its pane id.
/// The pane runs a placeholder until [`respawn`] starts the real command in it.
///
/// # Errors
/// When tmux fails (the session exists, no server can be started, …).
pub fn new_session(session: &str, window: &str) -> Result<String> {
    checked(&[
        "new-session",
        "-d",
        "-s",
        session,
        "-n",
        window,
        "-x",
        "200",
        "-y",
        "50",
        "-P",
        "-F",
        "#{pane_id}",
        PLACEHOLDER,
    ])
}

/// Adds a window `window` to `session`. Returns its pane id (running a placeholder).
///
/// # Errors
/// When tmux fails.
pub fn new_window(session: &str, window: &str) -> Result<String> {
    checked(&[
        "new-window",
        "-d",
        "-t",
        &format!("={session}:"),
        "-n",
        window,
        "-P",
        "-F",
        "#{pane_id}",
        PLACEHOLDER,
    ])
}

/// Replaces what `pane` runs with `cmd` (through the shell, with `env` added), keeping the pane
/// after its process exits (`remain-on-exit`) so its last screen can still be read.
///
/// # Errors
/// When tmux fails.
pub fn respawn(pane: &str, cmd: &str, env: &[(String, String)]) -> Result<()> {
    let env_args: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let mut args = vec![
        "set-option",
        "-w",
        "-t",
        pane,
        "remain-on-exit",
        "on",
        ";",
        "respawn-pane",
        "-k",
        "-t",
        pane,
    ];
    for e in &env_args {
        args.extend(["-e", e]);
    }
    args.push(cmd);
    checked(&args).map(|_| ())
}

/// Kills `pane` (and what runs in it).
///
/// # Errors
/// When tmux cannot be run.
pub fn kill_pane(pane: &str) -> Result<bool> {
    Ok(run(&["kill-pane", "-t", pane])?.status.success())
}

/// The panes of `session`; empty when it does not exist.
pub fn panes(session: &str) -> Vec<Pane> {
    let Ok(out) = run(&[
        "list-panes",
        "-s",
        "-t",
        &format!("={session}"),
        "-F",
        "#{pane_id} #{pane_dead} #{pane_dead_status}",
    ]) else {
        return Vec::new();
    };
    if !out.status.success() {
        return Vec::new();
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut it = l.split(' ');
            Some(Pane {
                id: it.next()?.to_string(),
                dead: it.next()? == "1",
                status: it.next().and_then(|s| s.parse().ok()),
            })
        })
        .collect()
}

/// The last `lines` non-blank lines on the screen (and history) of `pane`.
pub fn tail(pane: &str, lines: usize) -> String {
    let Ok(out) = run(&["capture-pane", "-p", "-J", "-t", pane, "-S", "-200"]) else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let kept: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty())
        .collect();
    kept[kept.len().saturating_sub(lines)..].join("\n")
}

/// The pid of the process `pane` runs (`#{pane_pid}`), `None` when there is no such pane.
pub fn pane_pid(pane: &str) -> Option<u32> {
    let out = run(&["display-message", "-p", "-t", pane, "#{pane_pid}"]).ok()?;
    if !out.status.success() {
        return None;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

/// The name of the session `pane` is in, `None` when there is no such pane.
pub fn pane_session(pane: &str) -> Option<String> {
    let out = run(&["display-message", "-p", "-t", pane, "#{session_name}"]).ok()?;
    let name = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !name.is_empty()).then_some(name)
}

/// What `pane` shows right now (the visible screen, no history), lines trimmed at the end.
pub fn screen(pane: &str) -> String {
    let Ok(out) = run(&["capture-pane", "-p", "-t", pane]) else {
        return String::new();
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
        .trim_end()
        .to_string()
}

/// Kills `session` (and every process in it). `Ok(false)` when there was none.
///
/// # Errors
/// When tmux cannot be run.
pub fn kill_session(session: &str) -> Result<bool> {
    Ok(run(&["kill-session", "-t", &format!("={session}")])?
        .status
        .success())
}

/// The tmux session teamctl starts a team's teammates in.
pub fn session_name(team: &TeamName) -> String {
    format!("teamctl-{team}")
}

/// What the caller knows about processes (kept outside so tests can pin it).
#[derive(Debug, Clone, Default)]
pub struct Liveness {
    /// tmux pane id → alive, from the tmux server asked; `None` when tmux is unavailable or
    /// could not tell. Empty when the server asked by its socket runs no more: its panes are
    /// all gone.
    pub tmux_panes: Option<HashMap<String, bool>>,
}

/// Whether a recorded `tmuxPaneId` names a tmux pane (`%12`): in-process members record
/// `in-process` or nothing, and only a pane can be asked about.
pub fn is_pane(pane_id: &str) -> bool {
    pane_id.starts_with('%')
}

impl Liveness {
    /// Asks tmux only when one of `panes` (recorded `tmuxPaneId`s) is a tmux pane: asking
    /// costs a process, and nothing else is checked here.
    pub fn probe_for<'a>(
        server: Option<&str>,
        panes: impl IntoIterator<Item = &'a str>,
    ) -> Liveness {
        if !panes.into_iter().any(is_pane) {
            return Liveness::default();
        }
        match server {
            Some(socket) => Liveness::probe_server(socket),
            None => Liveness::probe(),
        }
    }

    /// Whether the tmux pane `pane_id` runs; `None` when it is no pane or tmux could not tell.
    /// A pane the server no longer lists is gone (`tmux kill-pane`, a closed window): pane ids
    /// are never reused by a running server.
    pub fn pane_alive(&self, pane_id: &str) -> Option<bool> {
        if !is_pane(pane_id) {
            return None;
        }
        Some(
            self.tmux_panes
                .as_ref()?
                .get(pane_id)
                .copied()
                .unwrap_or(false),
        )
    }

    /// Asks the default tmux server for its panes (if `tmux` runs at all).
    pub fn probe() -> Liveness {
        let out = list_panes(&[]);
        Liveness {
            tmux_panes: out
                .ok()
                .filter(|o| o.status.success())
                .map(|o| panes_of(&o)),
        }
    }

    /// Asks the tmux server of `socket` (a path teamctl recorded itself) for its panes. When no
    /// server answers there (tmux says "no server running" or cannot connect: it was killed, or
    /// the machine restarted), every pane it had is gone.
    pub fn probe_server(socket: &str) -> Liveness {
        let tmux_panes = match list_panes(&["-S", socket]) {
            Ok(o) if o.status.success() => Some(panes_of(&o)),
            Ok(o) if server_gone(&String::from_utf8_lossy(&o.stderr)) => Some(HashMap::new()),
            _ => None,
        };
        Liveness { tmux_panes }
    }
}

/// `tmux [server] list-panes -a`: each pane's id and whether its process has exited.
fn list_panes(server: &[&str]) -> std::io::Result<Output> {
    Command::new("tmux")
        .args(server)
        .args(["list-panes", "-a", "-F", "#{pane_id} #{pane_dead}"])
        .stdin(std::process::Stdio::null())
        .output()
}

/// Pane id → alive, from what [`list_panes`] printed.
fn panes_of(out: &Output) -> HashMap<String, bool> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (id, dead) = l.split_once(' ')?;
            Some((id.to_string(), dead.trim() != "1"))
        })
        .collect()
}

/// Whether tmux's error says that no server runs on the socket: its socket file is gone,
/// nothing listens on it, or the server exited while it was asked (just after `kill-server`, 5
/// times in 240 under load, as seen with tmux 3.3a). Any other failure (no permission, no tmux)
/// says nothing.
fn server_gone(stderr: &str) -> bool {
    stderr.contains("no server running on")
        || stderr.contains("server exited unexpectedly")
        || (stderr.contains("error connecting to")
            && (stderr.contains("No such file or directory")
                || stderr.contains("Connection refused")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_gone_only_when_tmux_says_so() {
        assert!(server_gone("no server running on /tmp/tmux-0/default\n"));
        assert!(server_gone(
            "error connecting to /tmp/tmux-0/default (No such file or directory)\n"
        ));
        assert!(server_gone(
            "error connecting to /tmp/tmux-0/default (Connection refused)\n"
        ));
        assert!(!server_gone(
            "error connecting to /tmp/tmux-0/default (Permission denied)\n"
        ));
        assert!(server_gone("server exited unexpectedly\n"));
        assert!(!server_gone("can't find session: x\n"));
        assert!(!server_gone(""));
    }

    #[test]
    fn no_server_at_a_recorded_socket_means_every_pane_is_gone() {
        if !available() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("gone");
        let live = Liveness::probe_server(socket.to_str().unwrap());
        assert_eq!(live.tmux_panes, Some(HashMap::new()));
        assert_eq!(live.pane_alive("%3"), Some(false));
        assert_eq!(live.pane_alive("in-process"), None);
    }
}
