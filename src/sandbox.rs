//! A teammate's sandbox as data: what it may write, what stays read-only, what it cannot see,
//! its network and its engine ([`Rules`]); what a person asks for one ([`Wish`]); what `status
//! --json`, the record and the report show of it ([`Shown`]). Plain data every layer shares:
//! the engines that enforce it are in [`crate::host::sandbox`], the rules for a teammate are
//! made by `ops::create` and `ops::run`, teamctl's record of a team keeps them
//! ([`crate::team::lead`]). docs/sandbox.md says what is confined and what is not.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::error::usage;

/// What a sandboxed session may reach on the network (`sandbox_network`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// The machine's network, shared (the API needs it): services on 127.0.0.1 stay reachable.
    #[default]
    On,
    /// No network at all: a namespace of its own with only a loopback.
    Off,
    /// A network of its own with only a proxy to the API's host: not built (docs/sandbox.md
    /// says what it needs); asking for it is a usage error.
    Api,
}

impl Network {
    /// Its word in a team file and in `status --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Network::On => "on",
            Network::Off => "off",
            Network::Api => "api",
        }
    }

    /// From a team file's word.
    ///
    /// # Errors
    /// A usage error for anything else than `on`, `off` and `api`.
    pub fn parse(s: &str) -> Result<Network> {
        match s {
            "on" => Ok(Network::On),
            "off" => Ok(Network::Off),
            "api" => Ok(Network::Api),
            _ => Err(usage(format!(
                "sandbox_network '{s}' is not one of on, off, api"
            ))),
        }
    }
}

/// Which program confines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// bubblewrap (Linux): namespaces, bind mounts, a seccomp program.
    Bwrap,
    /// `sandbox-exec` with a generated profile (macOS).
    SandboxExec,
}

impl EngineKind {
    /// Its name in `status --json` (`bwrap`, `sandbox-exec`).
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Bwrap => "bwrap",
            EngineKind::SandboxExec => "sandbox-exec",
        }
    }

    /// The engine of this system: bubblewrap on Linux, sandbox-exec on macOS, none elsewhere.
    pub fn native() -> Option<EngineKind> {
        if cfg!(target_os = "linux") {
            Some(EngineKind::Bwrap)
        } else if cfg!(target_os = "macos") {
            Some(EngineKind::SandboxExec)
        } else {
            None
        }
    }
}

/// An engine found on this machine, and checked to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Engine {
    /// Which.
    pub kind: EngineKind,
    /// Its binary.
    pub path: String,
}

/// What a teammate asks of its sandbox (a team file's `sandbox_*` keys, `--sandbox`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Wish {
    /// More paths to hide (`sandbox_hide`), absolute.
    pub hide: Vec<PathBuf>,
    /// More writable paths (`sandbox_write`), absolute.
    pub write: Vec<PathBuf>,
    /// `sandbox_network`.
    pub network: Network,
}

/// The secrets every sandbox hides, below the home directory.
pub const HIDDEN_IN_HOME: [&str; 7] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".config/gh",
    ".netrc",
    ".docker",
    ".kube",
];

/// Claude Code's config dir as a sandboxed session sees it: a private folder of its own
/// (what the client writes for itself lands there and goes with the sandbox), the person's
/// configuration in it read-only, a private copy of `.claude.json`, and the few real folders
/// it shares with teamctl, writable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientDir {
    /// The config dir (absolute).
    pub root: String,
    /// The real folders inside it the session writes (its team's folder, its task folder, its
    /// transcripts' project folder), absolute.
    pub shared: Vec<String>,
    /// The person's own `.claude.json` (or `.config.json`), whose copy the session gets in its
    /// config dir, when it is not the one in `root` (a lead of `run` without a chosen config
    /// dir reads `~/.claude.json`); `None`: the one in `root`.
    #[serde(default)]
    pub state: Option<String>,
}

/// What one sandbox allows: recorded with the team (a restart confines the same way), shown
/// by `status --json` ([`Rules::shown`]), and what an engine builds its command line from.
/// Every path is absolute. The rest of the machine is read-only; `/tmp` is private.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    /// The engine.
    pub engine: Engine,
    /// Where the session starts.
    pub cwd: String,
    /// Folders and files it may write, in the order they are laid over each other (a folder
    /// before what inside it is given again: a clone, then its `.git` pinned in place).
    pub writable: Vec<String>,
    /// Paths kept read-only inside what is writable (a repository's `.git` config and hooks).
    pub read_only: Vec<String>,
    /// Paths hidden (an empty folder, or an empty file, in their place).
    pub hidden: Vec<String>,
    /// Folders below `/tmp` that stay visible, read-only (the home directory, the repository,
    /// …: the private `/tmp` would hide them).
    pub visible: Vec<String>,
    /// Claude Code's config dir, as the session sees it (`None`: the machine's, read-only,
    /// for a sandbox the whole team shares: `run --sandbox`, where `writable` names it).
    pub client: Option<ClientDir>,
    /// The network.
    pub network: Network,
    /// Whether Unix sockets are closed to it (the seccomp program): every sandbox of `create`;
    /// not `run`'s, whose lead talks to the tmux server inside it.
    pub no_unix_sockets: bool,
    /// The file holding the seccomp program (bubblewrap reads it at start).
    pub filter: Option<String>,
    /// Whether it shares the machine's process namespace (`run --sandbox`: teamctl, outside,
    /// ends the lead and checks on it by the pids its tmux server reports); else it has one of
    /// its own, where no other process can be seen, signalled or traced.
    #[serde(default)]
    pub shared_pids: bool,
}

/// A sandbox as `status --json` shows it (`members[].sandbox`), and the record and report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shown {
    /// `bwrap` or `sandbox-exec`.
    pub engine: String,
    /// What it writes that stays: its working folder, its team's folder and task folder, its
    /// transcripts, `sandbox_write`.
    pub writable: Vec<String>,
    /// What it cannot see.
    pub hidden: Vec<String>,
    /// `on`, `off` or `api`.
    pub network: Network,
}

impl Rules {
    /// What `status --json` shows of it.
    pub fn shown(&self) -> Shown {
        let mut writable = self.writable.clone();
        if let Some(c) = &self.client {
            writable.extend(c.shared.iter().cloned());
        }
        // A clone's `.git`, given again to pin it, is not another writable place.
        writable.dedup_by(|b, a| Path::new(b.as_str()).starts_with(a.as_str()));
        Shown {
            engine: self.engine.kind.as_str().to_string(),
            writable,
            hidden: self.hidden.clone(),
            network: self.network,
        }
    }
}

/// The paths of [`HIDDEN_IN_HOME`] below `home`, then `more`.
pub fn hidden_paths(home: Option<&Path>, more: &[PathBuf]) -> Vec<String> {
    let mut out: Vec<String> = home
        .map(|h| {
            HIDDEN_IN_HOME
                .iter()
                .map(|n| text(&h.join(n)))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    for p in more {
        let t = text(p);
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// Of `dirs`, the folders below `/tmp`, each once: the sandbox's private `/tmp` would hide
/// them, so they stay visible, read-only ([`Rules::visible`]).
pub fn below_tmp(dirs: impl IntoIterator<Item = PathBuf>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for d in dirs.into_iter().filter(|d| d.starts_with("/tmp")) {
        let t = text(&d);
        if !out.contains(&t) {
            out.push(t);
        }
    }
    out
}

/// The folders a session reads the `claude` binary `bin` from: its own, and its target's
/// when it is a link (npm's `.bin/claude`).
pub fn binary_dirs(bin: &Path) -> Vec<PathBuf> {
    let target = bin.canonicalize().ok();
    [bin.parent(), target.as_deref().and_then(Path::parent)]
        .into_iter()
        .flatten()
        .map(Path::to_path_buf)
        .collect()
}

/// A path as text.
pub fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    fn rules() -> Rules {
        Rules {
            engine: Engine {
                kind: EngineKind::Bwrap,
                path: "/usr/bin/bwrap".into(),
            },
            cwd: "/w/clone".into(),
            writable: vec!["/w/clone".into(), "/w/clone/.git".into(), "/x".into()],
            read_only: vec!["/w/clone/.git/config".into()],
            hidden: vec!["/h/.ssh".into()],
            visible: vec![],
            client: Some(ClientDir {
                root: "/c".into(),
                shared: vec!["/c/teams/t".into(), "/c/tasks/t".into()],
                state: None,
            }),
            network: Network::Off,
            no_unix_sockets: true,
            filter: None,
            shared_pids: false,
        }
    }

    #[test]
    fn below_tmp_keeps_each_folder_under_tmp_once() {
        let dirs = ["/tmp/a", "/usr/bin", "/tmp/a", "/tmpfoo", "/tmp/b/c"].map(PathBuf::from);
        assert_eq!(below_tmp(dirs), ["/tmp/a", "/tmp/b/c"]);
    }

    #[test]
    fn a_linked_binary_is_read_from_both_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let (pkg, bin) = (tmp.path().join("pkg"), tmp.path().join(".bin"));
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(pkg.join("claude"), "").unwrap();
        std::os::unix::fs::symlink("../pkg/claude", bin.join("claude")).unwrap();
        let pkg = pkg.canonicalize().unwrap();
        assert_eq!(binary_dirs(&bin.join("claude")), [bin, pkg]);
    }

    #[test]
    fn shown_lists_what_stays_writable_once() {
        let s = rules().shown();
        assert_eq!(s.engine, "bwrap");
        assert_eq!(s.writable, ["/w/clone", "/x", "/c/teams/t", "/c/tasks/t"]);
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"engine":"bwrap","writable":["/w/clone","/x","/c/teams/t","/c/tasks/t"],"hidden":["/h/.ssh"],"network":"off"}"#
        );
    }

    #[test]
    fn hidden_paths_start_with_the_secrets_in_home() {
        let h = hidden_paths(Some(Path::new("/home/a")), &[PathBuf::from("/srv/keys")]);
        assert_eq!(h[0], "/home/a/.ssh");
        assert_eq!(h.len(), HIDDEN_IN_HOME.len() + 1);
        assert_eq!(h.last().unwrap(), "/srv/keys");
    }

    #[test]
    fn network_words() {
        assert_eq!(Network::parse("off").unwrap(), Network::Off);
        assert!(Network::parse("none").is_err());
        assert_eq!(Network::Api.as_str(), "api");
    }
}
