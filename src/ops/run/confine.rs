//! `run --sandbox` (docs/sandbox.md): one sandbox for the lead's tmux server, so that the lead
//! and every teammate it starts in a pane share it. The lead makes its helpers' worktrees and
//! branches, so the repository is writable there but its `.git` config, hooks and submodules'
//! repositories; its team's files and transcripts are written in the config dir's `teams/`,
//! `tasks/` and `projects/`; everything else is read-only, the secrets in the home directory
//! and the known places of control sockets outside hidden, `/tmp` private. Unix sockets stay
//! open inside (the lead talks to its tmux server): a socket elsewhere on the file system is
//! not closed as in `create`'s sandboxes. The machine's processes are shared: teamctl ends the
//! lead and checks on it by the pids its tmux server gives, which must be the machine's.
//!
//! The tmux server runs in the foreground as the sandbox's own process (`tmux -D`, tmux 3.2 and
//! later) with its socket in a folder of teamctl's data dir bound into the sandbox, so that
//! teamctl, outside, drives it as any other server ([`Keeper`]).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::host::{child_env, git};
use crate::sandbox::{
    ClientDir, Engine, Network, Rules, below_tmp, binary_dirs, hidden_paths, text,
};
use crate::store::paths::Layout;
use crate::team::lead::Leads;

/// What the run's sandbox needs to know of the machine.
#[derive(Debug, Clone)]
pub struct Place<'a> {
    /// The config dir.
    pub layout: &'a Layout,
    /// The lead's working directory.
    pub cwd: &'a Path,
    /// teamctl's records (the tmux server's folder goes in its data dir).
    pub leads: &'a Leads,
    /// The run's name (names that folder).
    pub name: &'a str,
    /// The home directory.
    pub home: Option<&'a Path>,
    /// The `claude` binary (its folder stays visible).
    pub claude: &'a Path,
    /// The person's `.claude.json` when it is not in the config dir (no config dir chosen).
    pub state: Option<&'a Path>,
    /// Where control sockets live outside (`XDG_RUNTIME_DIR`, `SSH_AUTH_SOCK`, …): hidden.
    pub sockets: &'a [PathBuf],
}

/// The sandbox of a run, and the folder its tmux server's socket goes in (`TMUX_TMPDIR`).
///
/// # Errors
/// I/O making the folders it needs.
pub fn rules(p: &Place, engine: &Engine) -> Result<(Rules, PathBuf)> {
    let tmux_dir = p
        .leads
        .data_dir()
        .join("sandbox")
        .join(format!("run-{}", p.name));
    p.leads.make_below(&tmux_dir)?;
    let top = git::toplevel(p.cwd).ok();
    let work = top.clone().unwrap_or_else(|| p.cwd.to_path_buf());
    let mut read_only = Vec::new();
    if let Some(t) = &top {
        for part in ["config", "hooks", "modules"] {
            read_only.push(text(&t.join(".git").join(part)));
        }
    }
    let root = std::path::absolute(p.layout.root())
        .with_context(|| format!("could not resolve {}", p.layout.root().display()))?;
    let mut shared = Vec::new();
    for d in ["teams", "tasks", "projects"] {
        let loc = p.layout.root_loc().join(d);
        loc.create_dir_all()
            .with_context(|| format!("could not create {}", loc.display()))?;
        shared.push(text(&root.join(d)));
    }
    // teamctl's data dir holds the lead's prompt file, which its command line reads.
    let visible = below_tmp(
        p.home
            .map(Path::to_path_buf)
            .into_iter()
            .chain(Some(p.leads.data_dir().to_path_buf()))
            .chain(top)
            .chain(binary_dirs(p.claude)),
    );
    let rules = Rules {
        engine: engine.clone(),
        cwd: text(p.cwd),
        writable: vec![text(&work), text(&tmux_dir)],
        read_only,
        hidden: hidden_paths(p.home, p.sockets),
        visible,
        client: Some(ClientDir {
            root: text(&root),
            shared,
            state: p.state.map(text),
        }),
        network: Network::On,
        no_unix_sockets: false,
        filter: None,
        shared_pids: true,
    };
    Ok((rules, tmux_dir))
}

/// The sandbox's tmux server, `tmux -D` in the foreground as the sandbox's own process, its
/// socket in `tmux_dir` (`$TMUX_TMPDIR/tmux-<uid>/default` there): what `run` drives, from
/// outside, with `TMUX_TMPDIR` set to that folder.
pub struct Keeper {
    child: Child,
    tmux_dir: PathBuf,
    keep: bool,
}

impl Keeper {
    /// Starts the server in the sandbox `rules` describe and waits (up to 10 s) until it
    /// answers. With `keep` it outlives teamctl (`run --keep`); else it ends with it.
    ///
    /// # Errors
    /// The engine refusing, or the server not answering (tmux before 3.2 has no `-D`).
    pub fn start(rules: &Rules, tmux_dir: &Path, keep: bool) -> Result<Keeper> {
        let line = crate::host::sandbox::wrap(rules, "exec tmux -D")?;
        // `--die-with-parent` ties the sandbox to its parent: with --keep, a shell that stays
        // is that parent, and outlives teamctl.
        let line = if keep {
            format!("{} ; :", line.trim_start_matches("exec "))
        } else {
            line
        };
        let log = tmux_dir.join("tmux.log");
        let err = std::fs::File::create(&log)
            .with_context(|| format!("could not create {}", log.display()))?;
        let mut cmd = Command::new("/bin/sh");
        // The server takes this environment as its global one, which every pane inherits:
        // none of teamctl's secrets (bubblewrap unsets them too).
        child_env::scrub(&mut cmd);
        cmd.arg("-c")
            .arg(line)
            .env("TMUX_TMPDIR", tmux_dir)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err);
        // Out of the terminal's process group: a Ctrl-C is for `run`, which ends its lead first.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        let child = cmd.spawn().context("could not start the sandbox")?;
        let mut k = Keeper {
            child,
            tmux_dir: tmux_dir.to_path_buf(),
            keep,
        };
        let end = Instant::now() + Duration::from_secs(10);
        while !k.answers() {
            if let Ok(Some(status)) = k.child.try_wait() {
                let said = std::fs::read_to_string(&log).unwrap_or_default();
                bail!(
                    "the sandbox's tmux server ended at once ({status}): {} (run --sandbox \
                     needs tmux 3.2 or later)",
                    said.trim()
                );
            }
            if Instant::now() > end {
                k.keep = false;
                k.stop();
                bail!("the sandbox's tmux server did not answer within 10 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(k)
    }

    /// The folder its socket is in (`TMUX_TMPDIR` for the tmux clients that drive it).
    pub fn tmux_dir(&self) -> &Path {
        &self.tmux_dir
    }

    /// Whether the server answers.
    fn answers(&self) -> bool {
        child_env::scrub(&mut Command::new("tmux"))
            .arg("list-sessions")
            .env("TMUX_TMPDIR", &self.tmux_dir)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Ends the server, and with it the sandbox (nothing with `keep`: it stays for the
    /// lead teamctl leaves running).
    pub fn stop(mut self) {
        if self.keep {
            return;
        }
        let _ = child_env::scrub(&mut Command::new("tmux"))
            .arg("kill-server")
            .env("TMUX_TMPDIR", &self.tmux_dir)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let end = Instant::now() + Duration::from_secs(5);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The places of control sockets a run's sandbox hides: `XDG_RUNTIME_DIR` (the session bus,
/// the SSH and GPG agents, a rootless Docker, …), `SSH_AUTH_SOCK`, Docker's and the system
/// bus's sockets, given the environment's values of the first two.
pub fn socket_places(runtime_dir: Option<PathBuf>, ssh_auth_sock: Option<PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = runtime_dir.into_iter().chain(ssh_auth_sock).collect();
    for p in ["/run/docker.sock", "/run/dbus", "/run/user"] {
        out.push(PathBuf::from(p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::EngineKind;

    #[test]
    fn the_repository_is_writable_but_its_config_and_hooks() {
        let d = tempfile::tempdir().unwrap();
        let d = d.path().canonicalize().unwrap();
        let repo = d.join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let ok = std::process::Command::new("git")
            .args(["init", "-q"])
            .arg(&repo)
            .status()
            .unwrap();
        assert!(ok.success());
        let sub = repo.join("src");
        std::fs::create_dir_all(&sub).unwrap();
        let layout = Layout::new(d.join("claude"));
        let leads = Leads::in_dir(&d.join("data"));
        leads.prepare().unwrap();
        let sockets = socket_places(Some(d.join("run")), None);
        let place = Place {
            layout: &layout,
            cwd: &sub,
            leads: &leads,
            name: "nightly",
            home: Some(&d),
            claude: Path::new("/usr/bin/claude"),
            state: Some(&d.join(".claude.json")),
            sockets: &sockets,
        };
        let engine = Engine {
            kind: EngineKind::Bwrap,
            path: "/usr/bin/bwrap".into(),
        };
        let (r, tmux) = rules(&place, &engine).unwrap();
        assert_eq!(tmux, d.join("data/sandbox/run-nightly"));
        assert!(tmux.is_dir());
        assert_eq!(r.writable, [text(&repo), text(&tmux)]);
        assert_eq!(r.read_only[0], text(&repo.join(".git/config")));
        assert_eq!(r.read_only[1], text(&repo.join(".git/hooks")));
        assert!(r.hidden.contains(&text(&d.join("run"))));
        assert!(!r.no_unix_sockets);
        let c = r.client.unwrap();
        assert_eq!(c.shared[0], text(&d.join("claude/teams")));
        assert_eq!(c.state, Some(text(&d.join(".claude.json"))));
    }
}
