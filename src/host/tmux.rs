//! The few tmux commands teamctl runs for teams it leads: a detached session of its own, one
//! window per teammate, pane liveness and the tail of a pane's screen.
//!
//! tmux is found on `PATH`. Every command goes to a [`Server`]: the one the environment selects
//! (`TMUX_TMPDIR`, `TMUX`), so a caller (or a test) that sets `TMUX_TMPDIR` gets a private
//! server, or, for a team teamctl created, the one on the socket it recorded then (`tmux -S`),
//! whatever the environment says later.

use std::collections::HashMap;
use std::process::{Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::host::child_env;
use crate::store::paths::TeamName;

mod private_env;

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

/// Whether `tmux -V` runs.
pub fn available() -> bool {
    child_env::scrub(&mut Command::new("tmux"))
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A tmux server teamctl talks to: the one the environment selects, or the one listening on a
/// socket teamctl recorded itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Server {
    /// `None`: the server the environment selects.
    socket: Option<String>,
    /// Which server teamctl saw there ([`Where::server_id`]), when recorded: one started later
    /// on the same socket (after a reboot, by anyone) is another, and none of its panes, which
    /// it numbers from `%0` again, is the team's.
    id: Option<String>,
    /// The session teamctl started the team's teammates in, when recorded: a pane elsewhere on
    /// the server is not one of them.
    session: Option<String>,
}

/// Where a session runs, as teamctl records it when it starts one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Where {
    /// The session's id (`$3`), unique for the life of its server.
    pub session_id: String,
    /// Its server's socket (`#{socket_path}`).
    pub socket: String,
    /// Its server's start time and pid (`#{start_time}/#{pid}`): which server it was.
    pub server_id: String,
}

/// How tmux prints a server's identity ([`Where::server_id`]).
const SERVER_ID: &str = "#{start_time}/#{pid}";

/// The pane option teamctl sets on a pane it starts a teammate in: the teammate's name. Only
/// teamctl sets it, in its own session, so what `config.json`'s `tmuxPaneId` says (a teammate
/// can rewrite it) never hides which pane runs whom.
const MEMBER_OPTION: &str = "@teamctl-member";

/// What a new window runs until [`Server::respawn`] replaces it: something that waits quietly.
const PLACEHOLDER: &str = "exec sleep 86400";

impl Server {
    /// The server the environment selects (`TMUX_TMPDIR`, `TMUX`).
    pub fn env() -> Server {
        Server::default()
    }

    /// The server on `socket`, as teamctl recorded it when it started `session` there: with
    /// its identity ([`Where::server_id`]) and the session's name when recorded too.
    pub fn recorded(socket: &str, id: Option<&str>, session: Option<&str>) -> Server {
        Server {
            socket: Some(socket.to_string()),
            id: id.map(str::to_string),
            session: session.map(str::to_string),
        }
    }

    /// Where a session is started again: this server while it still runs, else the
    /// environment's (after a reboot the recorded socket's folder may be gone, and `tmux -S`
    /// does not make it).
    pub fn or_env_when_gone(self) -> Server {
        if self.gone() { Server::env() } else { self }
    }

    /// Whether the recorded server runs no more: tmux says that no server runs on its socket,
    /// or another server does (never for the environment's: what runs there says nothing of
    /// another server's panes).
    fn gone(&self) -> bool {
        if self.socket.is_none() {
            return false;
        }
        match self.run(&["display-message", "-p", SERVER_ID]) {
            Ok(o) if o.status.success() => !self.is(String::from_utf8_lossy(&o.stdout).trim()),
            Ok(o) => server_gone(&String::from_utf8_lossy(&o.stderr)),
            Err(_) => false,
        }
    }

    /// Whether the server that printed `id` is the recorded one (any is, when none is
    /// recorded).
    fn is(&self, id: &str) -> bool {
        self.id.as_deref().is_none_or(|recorded| recorded == id)
    }

    /// Runs `tmux <args>` on this server, without teamctl's secrets in its environment: a
    /// server it starts takes that environment as its global one, which every pane inherits
    /// ([`child_env`]).
    fn run(&self, args: &[&str]) -> Result<Output> {
        self.run_hiding(args, &[])
    }

    /// [`Server::run`] with none of the variables `hide` in tmux's environment.
    fn run_hiding(&self, args: &[&str], hide: &[&str]) -> Result<Output> {
        let mut cmd = Command::new("tmux");
        child_env::scrub(&mut cmd);
        if let Some(socket) = &self.socket {
            cmd.arg("-S").arg(socket);
        }
        hide.iter().for_each(|h| {
            cmd.env_remove(h);
        });
        cmd.args(args)
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("could not run tmux {}", args.first().unwrap_or(&"")))
    }

    fn checked(&self, args: &[&str]) -> Result<String> {
        stdout_of(args, self.run(args)?)
    }

    /// [`Server::checked`], asked again for up to a second while tmux says that the server it
    /// asked exited meanwhile: just after `kill-server` the old server may still be exiting,
    /// and a command that would start a new one instead fails (`new-session`, 10 times in 240
    /// under load, tmux 3.3a); a moment later it starts one. tmux runs without the variables
    /// `hide`, so a server it starts has none of them.
    fn checked_starting(&self, args: &[&str], hide: &[&str]) -> Result<String> {
        let until = Instant::now() + Duration::from_secs(1);
        loop {
            let out = self.run_hiding(args, hide)?;
            let exiting = !out.status.success()
                && String::from_utf8_lossy(&out.stderr).contains(SERVER_EXITED);
            if !exiting || Instant::now() >= until {
                return stdout_of(args, out);
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// What this server says of `panes` (recorded `tmuxPaneId`s): asked only when one of them
    /// is a tmux pane, since asking costs a process and nothing else is checked here.
    pub fn liveness<'a>(&self, panes: impl IntoIterator<Item = &'a str>) -> Liveness {
        if !panes.into_iter().any(is_pane) {
            return Liveness::default();
        }
        self.probe()
    }

    /// Every pane of this server (of its recorded session, when one is), alive or not. When no
    /// server answers on a recorded socket (tmux says "no server running" or cannot connect: it
    /// was killed, or the machine restarted), or another does, every pane it had is gone; the
    /// environment's server failing says nothing.
    pub fn probe(&self) -> Liveness {
        let format = format!("#{{pane_dead}} {SERVER_ID} #{{pane_id}} #{{session_name}}");
        let tmux_panes = match self.run(&["list-panes", "-a", "-F", &format]) {
            Ok(o) if o.status.success() => Some(self.panes_of(&o)),
            Ok(o) if self.socket.is_some() && server_gone(&String::from_utf8_lossy(&o.stderr)) => {
                Some(HashMap::new())
            }
            _ => None,
        };
        Liveness { tmux_panes }
    }

    /// Pane id → alive, from what [`Server::probe`] listed (the recorded session's panes, when
    /// one is); none when another server than the recorded one printed it.
    fn panes_of(&self, out: &Output) -> HashMap<String, bool> {
        let mut panes = HashMap::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let mut fields = line.splitn(4, ' ');
            let (Some(dead), Some(server), Some(id), Some(session)) =
                (fields.next(), fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            if !self.is(server) {
                return HashMap::new();
            }
            if self.session.as_deref().is_none_or(|s| s == session) {
                panes.insert(id.to_string(), dead != "1");
            }
        }
        panes
    }

    /// Whether a session with exactly this name exists.
    pub fn has_session(&self, name: &str) -> bool {
        self.run(&["has-session", "-t", &format!("={name}")])
            .is_ok_and(|o| o.status.success())
    }

    /// The id (`$3`) of the session with exactly this name, when it exists on this server (not
    /// on another started later on a recorded socket): unique for the life of the tmux server,
    /// so a session made later under the same name has another.
    pub fn session_id(&self, name: &str) -> Option<String> {
        self.locate(name)
            .filter(|at| self.is(&at.server_id))
            .map(|at| at.session_id)
    }

    /// Where the session with exactly this name runs: its id, and its server's socket and
    /// identity.
    pub fn locate(&self, name: &str) -> Option<Where> {
        self.where_of(&format!("={name}:"))
    }

    /// Where the session of `pane` (`%12`, unique on its server) runs: the session teamctl
    /// just made by making that pane, whatever else has its name.
    pub fn locate_pane(&self, pane: &str) -> Option<Where> {
        is_pane(pane).then(|| self.where_of(pane))?
    }

    fn where_of(&self, target: &str) -> Option<Where> {
        let format = format!("#{{session_id}} {SERVER_ID} #{{socket_path}}");
        let out = self
            .run(&["display-message", "-p", "-t", target, &format])
            .ok()?;
        let printed = String::from_utf8_lossy(&out.stdout);
        let mut fields = printed.trim_end_matches('\n').splitn(3, ' ');
        let (session_id, server_id, socket) = (fields.next()?, fields.next()?, fields.next()?);
        (out.status.success() && session_id.starts_with('$') && socket.starts_with('/')).then(
            || Where {
                session_id: session_id.to_string(),
                socket: socket.to_string(),
                server_id: server_id.to_string(),
            },
        )
    }

    /// Starts a detached session `session` whose first window is `window`. Returns its pane id.
    /// The pane runs a placeholder until [`Server::respawn`] starts the real command in it.
    /// teamctl's secrets ([`child_env::SECRETS`]) are marked removed from what the session's
    /// panes start, whatever the server's global environment holds.
    ///
    /// # Errors
    /// When tmux fails (the session exists, no server can be started, …).
    pub fn new_session(&self, session: &str, window: &str) -> Result<String> {
        self.new_session_hiding(session, window, &[])
    }

    /// [`Server::new_session`], with none of the variables `hide` in tmux's environment: a
    /// server it starts has none of them in its global environment (which every pane inherits).
    ///
    /// # Errors
    /// As [`Server::new_session`].
    pub fn new_session_hiding(&self, session: &str, window: &str, hide: &[&str]) -> Result<String> {
        let pane = self.checked_starting(
            &[
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
            ],
            hide,
        )?;
        let mut args = Vec::new();
        for name in child_env::SECRETS {
            if !args.is_empty() {
                args.push(";");
            }
            args.extend(["set-environment", "-t", pane.as_str(), "-r", name]);
        }
        if let Err(e) = self.checked(&args) {
            let _ = self.run(&["kill-pane", "-t", &pane]);
            return Err(e);
        }
        Ok(pane)
    }

    /// Adds a window `window` to `session`. Returns its pane id (running a placeholder).
    ///
    /// # Errors
    /// When tmux fails.
    pub fn new_window(&self, session: &str, window: &str) -> Result<String> {
        self.checked(&[
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

    /// Replaces what `pane` runs with `cmd` (through the shell, with `env` added but for a secret
    /// ([`child_env::is_secret`])), keeping the pane
    /// after its process exits (`remain-on-exit`) so its last screen can still be read.
    ///
    /// # Errors
    /// When tmux fails.
    pub fn respawn(&self, pane: &str, cmd: &str, env: &[(String, String)]) -> Result<()> {
        let env_args: Vec<String> = env
            .iter()
            .filter(|(k, _)| !child_env::is_secret(k))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
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
        self.checked(&args).map(|_| ())
    }

    /// Sends `keys` (tmux key names: `Enter`, `Escape`) to `pane`.
    ///
    /// # Errors
    /// When tmux fails (no such pane).
    pub fn send_keys(&self, pane: &str, keys: &[&str]) -> Result<()> {
        let mut args = vec!["send-keys", "-t", pane];
        args.extend_from_slice(keys);
        self.checked(&args).map(|_| ())
    }

    /// Types `text` into `pane` as it is (`send-keys -l`: no key names).
    ///
    /// # Errors
    /// When tmux fails (no such pane).
    pub fn send_text(&self, pane: &str, text: &str) -> Result<()> {
        self.checked(&["send-keys", "-t", pane, "-l", "--", text])
            .map(|_| ())
    }

    /// Marks `pane` as the one teamctl starts `member` in ([`Server::member_panes`] finds it).
    ///
    /// # Errors
    /// When tmux fails.
    pub fn tag_member(&self, pane: &str, member: &str) -> Result<()> {
        self.checked(&["set-option", "-p", "-t", pane, MEMBER_OPTION, member])
            .map(|_| ())
    }

    /// The live panes teamctl marked as running `member` ([`Server::tag_member`]) on this
    /// server, in `session` only (and only when this is the recorded server, when one is):
    /// asked at the moment of the call, so a caller acts on what runs now.
    pub fn member_panes(&self, session: &str, member: &str) -> Vec<String> {
        let format = format!(
            "#{{pane_dead}} {SERVER_ID} #{{pane_id}} #{{{MEMBER_OPTION}}} #{{session_name}}"
        );
        let Ok(out) = self.run(&["list-panes", "-a", "-F", &format]) else {
            return Vec::new();
        };
        if !out.status.success() {
            return Vec::new();
        }
        let mut panes = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let f: Vec<&str> = line.splitn(5, ' ').collect();
            let [dead, server, id, tag, name] = f[..] else {
                continue;
            };
            if !self.is(server) {
                return Vec::new();
            }
            if dead == "0" && tag == member && name == session {
                panes.push(id.to_string());
            }
        }
        panes
    }

    /// Kills `pane` (and what runs in it).
    ///
    /// # Errors
    /// When tmux cannot be run.
    pub fn kill_pane(&self, pane: &str) -> Result<bool> {
        Ok(self.run(&["kill-pane", "-t", pane])?.status.success())
    }

    /// The panes of `session`; empty when it does not exist.
    pub fn panes(&self, session: &str) -> Vec<Pane> {
        let Ok(out) = self.run(&[
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
    pub fn tail(&self, pane: &str, lines: usize) -> String {
        let Ok(out) = self.run(&["capture-pane", "-p", "-J", "-t", pane, "-S", "-200"]) else {
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
    pub fn pane_pid(&self, pane: &str) -> Option<u32> {
        let out = self
            .run(&["display-message", "-p", "-t", pane, "#{pane_pid}"])
            .ok()?;
        if !out.status.success() {
            return None;
        }
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }

    /// The name of the session `pane` is in, `None` when there is no such pane.
    pub fn pane_session(&self, pane: &str) -> Option<String> {
        let out = self
            .run(&["display-message", "-p", "-t", pane, "#{session_name}"])
            .ok()?;
        let name = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !name.is_empty()).then_some(name)
    }

    /// What `pane` shows right now (the visible screen, no history), lines trimmed at the end.
    pub fn screen(&self, pane: &str) -> String {
        let Ok(out) = self.run(&["capture-pane", "-p", "-t", pane]) else {
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

    /// Kills the session whose id (`$3`) is `id`, and only it: a session made later under the
    /// same name has another id. `Ok(false)` when there was none.
    ///
    /// # Errors
    /// When tmux cannot be run.
    pub fn kill_session_id(&self, id: &str) -> Result<bool> {
        if !id.starts_with('$') {
            return Ok(false);
        }
        Ok(self.run(&["kill-session", "-t", id])?.status.success())
    }

    /// Kills `session` (and every process in it). `Ok(false)` when there was none.
    ///
    /// # Errors
    /// When tmux cannot be run.
    pub fn kill_session(&self, session: &str) -> Result<bool> {
        Ok(self
            .run(&["kill-session", "-t", &format!("={session}")])?
            .status
            .success())
    }
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
}

/// What tmux printed for `args`, or an error with what it said when it failed.
fn stdout_of(args: &[&str], out: Output) -> Result<String> {
    if !out.status.success() {
        bail!(
            "tmux {} failed: {}",
            args.first().unwrap_or(&""),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// What tmux says when the server it asked exited while it was asked.
const SERVER_EXITED: &str = "server exited unexpectedly";

/// Whether tmux's error says that no server runs on the socket: its socket file is gone,
/// nothing listens on it, or the server exited while it was asked (just after `kill-server`, 5
/// times in 240 under load, as seen with tmux 3.3a). Any other failure (no permission, no tmux)
/// says nothing.
fn server_gone(stderr: &str) -> bool {
    stderr.contains("no server running on")
        || stderr.contains(SERVER_EXITED)
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

    /// A server on a temp socket, killed when the test ends however it ends.
    struct Down(Server);

    impl Drop for Down {
        fn drop(&mut self) {
            let _ = self.0.run(&["kill-server"]);
        }
    }

    #[test]
    fn a_session_starts_at_once_after_kill_server() {
        if !available() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        // Four servers, each killed and started again ten times in a row: without asking
        // again, a `new-session` met its old server still exiting within the first few rounds
        // in each of 5 runs.
        let threads: Vec<_> = (0..4)
            .map(|i| {
                let socket = dir.path().join(format!("s{i}"));
                let server = Server::recorded(socket.to_str().unwrap(), None, None);
                thread::spawn(move || {
                    let down = Down(server);
                    for round in 0..10 {
                        down.0
                            .new_session("t", "w")
                            .unwrap_or_else(|e| panic!("round {round}: {e:#}"));
                        down.0.checked(&["kill-server"]).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    }

    #[test]
    fn no_server_at_a_recorded_socket_means_every_pane_is_gone() {
        if !available() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("gone");
        let live = Server::recorded(socket.to_str().unwrap(), None, None).probe();
        assert_eq!(live.tmux_panes, Some(HashMap::new()));
        assert_eq!(live.pane_alive("%3"), Some(false));
        assert_eq!(live.pane_alive("in-process"), None);
    }

    #[test]
    fn another_server_on_the_recorded_socket_has_none_of_the_teams_panes() {
        if !available() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s");
        let socket = socket.to_str().unwrap();
        let first = Server::recorded(socket, None, None);
        // Whatever the test ends with, its server goes.
        let _down = Down(first.clone());
        let pane = first.new_session("t", "w").unwrap();
        let at = first.locate("t").unwrap();
        assert_eq!(at.socket, socket);
        assert!(at.session_id.starts_with('$'), "{at:?}");

        let ours = Server::recorded(socket, Some(&at.server_id), Some("t"));
        assert!(!ours.gone());
        assert_eq!(ours.probe().pane_alive(&pane), Some(true));
        // A pane of the same server in another session is none of the team's.
        let other = first.new_session("u", "w").unwrap();
        assert_eq!(first.probe().pane_alive(&other), Some(true));
        assert_eq!(ours.probe().pane_alive(&other), Some(false));
        assert!(first.kill_session("u").unwrap());
        // The same socket, the same pane id, but a server started after the one recorded.
        let later = Server::recorded(socket, Some("1/1"), Some("t"));
        assert!(later.gone());
        assert_eq!(ours.session_id("t"), Some(at.session_id.clone()));
        assert_eq!(later.session_id("t"), None);
        assert_eq!(later.probe().pane_alive(&pane), Some(false));
        assert_eq!(later.clone().or_env_when_gone(), Server::env());
        assert!(first.kill_session("t").unwrap());
        // Its last session gone, the server exits (a moment later).
        let end = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !ours.gone() && std::time::Instant::now() < end {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(ours.gone());
    }
}
