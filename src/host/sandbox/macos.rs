//! `sandbox-exec`, the macOS engine, as Claude Code's own sandbox uses it there: a generated
//! profile (SBPL) that allows everything, then takes back every write but to the writable
//! paths, every read of the hidden ones, Unix sockets, the network when it is cut, and signals
//! to or looks at other processes. The pane runs `sandbox-exec -p <profile> /bin/sh -c …`.
//!
//! Untested until a macOS runner runs it: it is compiled and its profile checked as text on
//! Linux (`.ci/check-macos`, the unit tests below). What macOS cannot give (docs/sandbox.md):
//! no private `/tmp` (`/private/tmp` and the per-user temp folder stay writable and shared), no
//! private view of the config dir (the client's state folders and `.claude.json` are the real
//! ones, writable), no process namespace (other processes stay visible to `ps`).

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::Result;

use super::{client, run_briefly};
use crate::error::usage;
use crate::host::claude::shell_quote;
use crate::sandbox::{Engine, EngineKind, Network, Rules};

/// Where macOS keeps it.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The client's own state in its config dir, written for a session (see [`client`]): on macOS
/// the real ones.
const STATE_DIRS: [&str; 9] = [
    "backups",
    "debug",
    "file-history",
    "plugins",
    "session-env",
    "sessions",
    "shell-snapshots",
    "statsig",
    "todos",
];

/// The profile for `r`.
pub fn profile(r: &Rules) -> String {
    let mut p = vec![
        "(version 1)".to_string(),
        "(allow default)".to_string(),
        "(deny file-write*)".to_string(),
    ];
    let mut writable: Vec<String> = r.writable.iter().map(|w| subpath(w)).collect();
    writable.extend(
        ["/private/tmp", "/private/var/folders"]
            .iter()
            .map(|t| subpath(t)),
    );
    writable.extend(
        ["/dev/null", "/dev/zero", "/dev/tty", "/dev/dtracehelper"]
            .iter()
            .map(|d| format!("(literal {})", quoted(d))),
    );
    writable.push(r#"(regex #"^/dev/ttys[0-9]+$")"#.to_string());
    if let Some(c) = &r.client {
        let root = Path::new(&c.root);
        writable.extend(c.shared.iter().map(|s| subpath(s)));
        writable.extend(
            STATE_DIRS
                .iter()
                .map(|d| subpath(&root.join(d).to_string_lossy())),
        );
        writable.extend(
            client::STATE_FILES
                .iter()
                .map(|f| root.join(f).to_string_lossy().into_owned())
                .chain(c.state.clone())
                .map(|f| format!("(literal {})", quoted(&f))),
        );
    }
    p.push(format!("(allow file-write*\n  {})", writable.join("\n  ")));
    if !r.read_only.is_empty() {
        let ro: Vec<String> = r.read_only.iter().map(|x| subpath(x)).collect();
        p.push(format!("(deny file-write*\n  {})", ro.join("\n  ")));
    }
    if !r.hidden.is_empty() {
        let h: Vec<String> = r.hidden.iter().map(|x| subpath(x)).collect();
        p.push(format!(
            "(deny file-read* file-write*\n  {})",
            h.join("\n  ")
        ));
    }
    if r.no_unix_sockets {
        p.push("(deny network-outbound (remote unix-socket))".to_string());
        p.push("(deny network-bind (local unix-socket))".to_string());
    }
    if r.network != Network::On {
        p.push("(deny network*)".to_string());
    }
    p.push("(deny signal (target others))".to_string());
    p.push("(deny process-info* (target others))".to_string());
    p.join("\n") + "\n"
}

/// `(subpath "<p>")`.
fn subpath(p: &str) -> String {
    format!("(subpath {})", quoted(p))
}

/// A string literal of the profile language.
fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The command line, shell-quoted: `exec sandbox-exec -p <profile> /bin/sh -c <inner>`, in
/// the working folder.
pub fn command(r: &Rules, inner: &str) -> String {
    format!(
        "cd {} && exec {} -p {} /bin/sh -c {}",
        shell_quote(&r.cwd),
        shell_quote(&r.engine.path),
        shell_quote(&profile(r)),
        shell_quote(inner)
    )
}

/// `sandbox-exec`, checked to run a trivial profile.
///
/// # Errors
/// A usage error naming what is wrong.
pub fn find(explicit: Option<&Path>) -> Result<Engine> {
    let bin = explicit.unwrap_or(Path::new(SANDBOX_EXEC));
    if !bin.is_file() {
        return Err(usage(format!(
            "the sandbox needs {} (macOS's sandbox-exec), which is not there",
            bin.display()
        )));
    }
    let mut probe = Command::new(bin);
    probe.args(["-p", "(version 1)(allow default)", "/usr/bin/true"]);
    match run_briefly(probe, Duration::from_secs(10)) {
        Some(out) if out.status.success() => Ok(Engine {
            kind: EngineKind::SandboxExec,
            path: bin.to_string_lossy().into_owned(),
        }),
        Some(out) => Err(usage(format!(
            "{} cannot make a sandbox here ({}): it cannot run inside another sandbox \
             (docs/sandbox.md)",
            bin.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        None => Err(usage(format!(
            "{} did not run a trivial profile within 10 s",
            bin.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::ClientDir;

    #[test]
    fn the_profile_denies_then_allows() {
        let r = Rules {
            engine: Engine {
                kind: EngineKind::SandboxExec,
                path: SANDBOX_EXEC.into(),
            },
            cwd: "/Users/a/w".into(),
            writable: vec!["/Users/a/w".into()],
            read_only: vec!["/Users/a/w/.git/config".into()],
            hidden: vec!["/Users/a/.ssh".into(), "/odd \"path\"".into()],
            visible: Vec::new(),
            client: Some(ClientDir {
                root: "/Users/a/.claude".into(),
                shared: vec!["/Users/a/.claude/teams/t".into()],
                state: None,
            }),
            network: Network::Off,
            no_unix_sockets: true,
            filter: None,
            shared_pids: false,
        };
        let p = profile(&r);
        assert!(p.starts_with("(version 1)\n(allow default)\n(deny file-write*)\n"));
        assert!(p.contains("(subpath \"/Users/a/w\")"));
        assert!(p.contains("(subpath \"/Users/a/.claude/teams/t\")"));
        assert!(p.contains("(literal \"/Users/a/.claude/.claude.json\")"));
        assert!(p.contains("(deny file-write*\n  (subpath \"/Users/a/w/.git/config\"))"));
        assert!(p.contains("(subpath \"/odd \\\"path\\\"\")"));
        assert!(p.contains("(deny network-outbound (remote unix-socket))"));
        assert!(p.contains("(deny network*)"));
        // Later rules win in SBPL: the denials come after the allowance.
        assert!(p.find("(allow file-write*").unwrap() < p.find("(deny file-read*").unwrap());
        let c = command(&r, "claude --x");
        assert!(c.starts_with("cd /Users/a/w && exec /usr/bin/sandbox-exec -p '(version 1)"));
        assert!(c.ends_with(" /bin/sh -c 'claude --x'"));
    }
}
