//! bubblewrap, the Linux engine: the command line that confines a session by [`Rules`], and
//! the check that `bwrap` can make a sandbox here (a missing binary, user namespaces blocked by
//! Ubuntu's AppArmor rule or a sysctl, a container that forbids `mount`: each named with its
//! fix).
//!
//! The sandbox, in the order bubblewrap lays it: the machine read-only (`--ro-bind / /`), a
//! fresh `/dev` (no other terminal's pty) and `/proc` (its own PID namespace: no other process
//! to see, signal or trace), a private `/tmp`; the folders below `/tmp` that must stay visible,
//! read-only; Claude Code's config dir as [`super::client`] says; the writable paths; what stays
//! read-only inside them; the hidden paths (an empty read-only folder, or `/dev/null`, in their
//! place). No capabilities, no new privileges (bubblewrap always sets `no_new_privs`), its own
//! IPC and UTS namespaces, the network shared or cut, the seccomp program of [`super::seccomp`]
//! when Unix sockets are closed, and `--die-with-parent`: when the pane's process goes, so does
//! everything inside. The pane runs `bwrap` itself, so tmux sees the pane alive as long as the
//! session runs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::Result;

use super::{client, run_briefly};
use crate::error::usage;
use crate::host::child_env;
use crate::host::claude::shell_quote;
use crate::sandbox::{Engine, EngineKind, Rules};

/// The file descriptor the seccomp program is read from.
const FILTER_FD: u8 = 3;
/// The file descriptor the private copy of `.claude.json` is read from.
const STATE_FD: u8 = 4;

/// Variables that name a way out (a socket, the tmux server) and mean nothing inside.
const UNSET: [&str; 5] = [
    "SSH_AUTH_SOCK",
    "TMUX",
    "TMUX_PANE",
    "DBUS_SESSION_BUS_ADDRESS",
    "DOCKER_HOST",
];

/// The variables the sandbox sets or removes itself: a teammate's own `env` cannot give one
/// inside it (`ops::create` refuses it, naming why).
pub const TAKEN: [&str; 6] = [UNSET[0], UNSET[1], UNSET[2], UNSET[3], UNSET[4], "TMPDIR"];

/// The command line, shell-quoted: `exec bwrap … -- /bin/sh -c <inner> 3< <filter> [4< <state>]`.
///
/// # Errors
/// A writable path that is gone (bubblewrap would refuse to start).
pub fn command(r: &Rules, inner: &str) -> Result<String> {
    let mut a = Args::default();
    a.words(&["--die-with-parent"]);
    if !r.shared_pids {
        a.words(&["--unshare-pid"]);
    }
    a.words(&["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]);
    a.words(&["--cap-drop", "ALL"]);
    if r.network != crate::sandbox::Network::On {
        a.words(&["--unshare-net"]);
    }
    // The machine's /proc comes read-only with `/` when its processes are shared.
    a.words(&["--ro-bind", "/", "/", "--dev", "/dev"]);
    if !r.shared_pids {
        a.words(&["--proc", "/proc"]);
    }
    a.words(&["--tmpfs", "/tmp"]);
    for v in &r.visible {
        if Path::new(v).exists() {
            a.pair("--ro-bind", v);
        }
    }
    let state = r
        .client
        .as_ref()
        .map(|c| client_dir(&mut a, c))
        .transpose()?;
    for w in &r.writable {
        if Path::new(w).symlink_metadata().is_err() {
            return Err(usage(format!(
                "{w} is to be writable in the sandbox and does not exist"
            )));
        }
        a.pair("--bind", w);
    }
    for p in r.read_only.iter().filter(|p| Path::new(p).exists()) {
        a.pair("--ro-bind", p);
    }
    for h in &r.hidden {
        match Path::new(h).metadata() {
            Ok(m) if m.is_dir() => {
                a.words(&["--tmpfs", h, "--remount-ro", h]);
            }
            Ok(_) => a.words(&["--ro-bind", "/dev/null", h]),
            Err(_) => {}
        }
    }
    // teamctl's own secrets are none of the sandbox's, wherever its environment came from.
    for k in UNSET.iter().chain(&child_env::SECRETS) {
        a.words(&["--unsetenv", k]);
    }
    a.words(&["--setenv", "TMPDIR", "/tmp"]);
    let filter = r.filter.as_deref().filter(|_| r.no_unix_sockets);
    if filter.is_some() {
        a.words(&["--seccomp", &FILTER_FD.to_string()]);
    }
    a.words(&["--chdir", &r.cwd, "--", "/bin/sh", "-c", inner]);
    let mut line = format!("exec {} {}", shell_quote(&r.engine.path), a.0.join(" "));
    if let Some(f) = filter {
        line.push_str(&format!(" {FILTER_FD}< {}", shell_quote(f)));
    }
    if let Some(s) = state.flatten() {
        line.push_str(&format!(" {STATE_FD}< {}", shell_quote(&s)));
    }
    Ok(line)
}

/// The words of a command line, each shell-quoted.
#[derive(Default)]
struct Args(Vec<String>);

impl Args {
    fn words(&mut self, w: &[&str]) {
        self.0.extend(w.iter().map(|s| shell_quote(s)));
    }

    /// `flag path path`: a path given at the same place inside.
    fn pair(&mut self, flag: &str, path: &str) {
        self.words(&[flag, path, path]);
    }
}

/// Lays out the client's config dir (see [`super::client`]); returns the state file copied in
/// (`None`: the person has none yet).
fn client_dir(a: &mut Args, c: &crate::sandbox::ClientDir) -> Result<Option<String>> {
    let root = Path::new(&c.root);
    a.words(&["--tmpfs", &c.root]);
    let mut names: Vec<_> = std::fs::read_dir(root)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    names.sort();
    for n in names {
        let Some(name) = n.to_str() else { continue };
        if !client::is_private(name) {
            a.pair("--ro-bind", &root.join(name).to_string_lossy());
        }
    }
    for s in &c.shared {
        if !Path::new(s).is_dir() {
            return Err(usage(format!(
                "{s} is to be writable in the sandbox and is not a folder"
            )));
        }
        a.pair("--bind", s);
    }
    // The copy is the session's `.claude.json` (or `.config.json`, the old name, when that is
    // what the person has), in its private config dir; the client reads it there since
    // CLAUDE_CONFIG_DIR names the folder.
    let state = match &c.state {
        Some(s) => Some(PathBuf::from(s)).filter(|p| p.is_file()).map(|p| {
            let name = if p.ends_with(".config.json") {
                ".config.json"
            } else {
                ".claude.json"
            };
            (p, name)
        }),
        None => client::STATE_FILES
            .iter()
            .map(|n| (root.join(n), *n))
            .find(|(p, _)| p.is_file()),
    };
    a.words(&["--setenv", "CLAUDE_CONFIG_DIR", &c.root]);
    Ok(state.map(|(p, name)| {
        let dest = root.join(name).to_string_lossy().into_owned();
        a.words(&["--file", &STATE_FD.to_string(), &dest]);
        p.to_string_lossy().into_owned()
    }))
}

/// `bwrap` (`explicit`, else on `path`), checked to make a sandbox here.
///
/// # Errors
/// A usage error (exit 2) naming what is wrong and how to fix it.
pub fn find(explicit: Option<&Path>, path: Option<&OsStr>, net_off: bool) -> Result<Engine> {
    let bin = match explicit {
        Some(p) if p.is_file() => p.to_path_buf(),
        Some(p) => {
            return Err(usage(format!(
                "TEAMCTL_BWRAP_BIN names {}, which is not a file: point it at bubblewrap's \
                 bwrap, or unset it",
                p.display()
            )));
        }
        None => super::on_path("bwrap", path).ok_or_else(|| {
            usage(
                "the sandbox needs bubblewrap (bwrap), which is not on PATH: install it \
                 (`apt-get install bubblewrap`, `dnf install bubblewrap`, `pacman -S \
                 bubblewrap`), or name it with TEAMCTL_BWRAP_BIN",
            )
        })?,
    };
    let mut probe = Command::new(&bin);
    probe.args(["--die-with-parent", "--unshare-pid", "--unshare-ipc"]);
    probe.args(["--unshare-uts", "--cap-drop", "ALL"]);
    if net_off {
        probe.arg("--unshare-net");
    }
    probe.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    probe.args(["--tmpfs", "/tmp", "--", "/bin/true"]);
    match run_briefly(probe, Duration::from_secs(10)) {
        Some(out) if out.status.success() => Ok(Engine {
            kind: EngineKind::Bwrap,
            path: bin.to_string_lossy().into_owned(),
        }),
        Some(out) => Err(usage(blocked(
            &bin,
            String::from_utf8_lossy(&out.stderr).trim(),
            &Sysctls::read(),
        ))),
        None => Err(usage(format!(
            "{} did not make a sandbox within 10 s (or could not be run): check it with \
             `{} --ro-bind / / --unshare-pid --proc /proc -- /bin/true`",
            bin.display(),
            bin.display()
        ))),
    }
}

/// The system settings that block user namespaces (`None`: not there).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Sysctls {
    apparmor_restrict: Option<String>,
    userns_clone: Option<String>,
    max_user_namespaces: Option<String>,
    root: bool,
}

impl Sysctls {
    fn read() -> Sysctls {
        let get = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
        };
        Sysctls {
            apparmor_restrict: get("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
            userns_clone: get("/proc/sys/kernel/unprivileged_userns_clone"),
            max_user_namespaces: get("/proc/sys/user/max_user_namespaces"),
            root: rustix::process::geteuid().is_root(),
        }
    }
}

/// Why `bin` could not make a sandbox, with the fix: the first system setting that explains
/// it, else what bubblewrap said.
fn blocked(bin: &Path, said: &str, s: &Sysctls) -> String {
    let said = said.lines().next().unwrap_or("no message");
    let head = format!("{} cannot make a sandbox here ({said})", bin.display());
    let on = |v: &Option<String>, want: &str| v.as_deref() == Some(want);
    if !s.root && on(&s.apparmor_restrict, "1") {
        return format!(
            "{head}: AppArmor restricts unprivileged user namespaces \
             (kernel.apparmor_restrict_unprivileged_userns=1, Ubuntu 23.10 and later); give \
             bwrap a profile that allows them (Ubuntu's apparmor package ships one: `sudo \
             apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict`), or lift the rule with \
             `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0` (docs/sandbox.md)"
        );
    }
    if !s.root && on(&s.userns_clone, "0") {
        return format!(
            "{head}: unprivileged user namespaces are off \
             (kernel.unprivileged_userns_clone=0); turn them on with `sudo sysctl -w \
             kernel.unprivileged_userns_clone=1` (docs/sandbox.md)"
        );
    }
    if on(&s.max_user_namespaces, "0") {
        return format!(
            "{head}: user namespaces are off (user.max_user_namespaces=0); turn them on with \
             `sudo sysctl -w user.max_user_namespaces=15000` (docs/sandbox.md)"
        );
    }
    format!(
        "{head}: in a container, allow it to make namespaces and mounts (Docker: `--security-opt \
         seccomp=unconfined --security-opt apparmor=unconfined`, or `--privileged`); as a user \
         without user namespaces, install bwrap setuid root (docs/sandbox.md)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::{ClientDir, Network};

    fn rules(dir: &Path) -> Rules {
        let w = dir.join("work");
        let git = w.join(".git");
        std::fs::create_dir_all(git.join("hooks")).unwrap();
        std::fs::write(git.join("config"), "").unwrap();
        let c = dir.join("claude");
        for d in ["teams/t", "tasks/t", "agents", "projects/p", "teams/other"] {
            std::fs::create_dir_all(c.join(d)).unwrap();
        }
        std::fs::write(c.join("settings.json"), "{}").unwrap();
        std::fs::write(c.join(".claude.json"), "{}").unwrap();
        std::fs::create_dir_all(dir.join("home/.ssh")).unwrap();
        std::fs::write(dir.join("home/.netrc"), "").unwrap();
        let t = |p: &Path| p.to_string_lossy().into_owned();
        Rules {
            engine: Engine {
                kind: EngineKind::Bwrap,
                path: "/usr/bin/bwrap".into(),
            },
            cwd: t(&w),
            writable: vec![t(&w)],
            read_only: vec![t(&git.join("config")), t(&git.join("hooks"))],
            hidden: vec![
                t(&dir.join("home/.ssh")),
                t(&dir.join("home/.netrc")),
                t(&dir.join("home/.aws")),
            ],
            visible: vec![t(&dir.join("home"))],
            client: Some(ClientDir {
                root: t(&c),
                shared: vec![t(&c.join("teams/t")), t(&c.join("tasks/t"))],
                state: None,
            }),
            network: Network::On,
            no_unix_sockets: true,
            filter: Some("/data/f.bpf".into()),
            shared_pids: false,
        }
    }

    #[test]
    fn the_command_line_in_order() {
        let d = tempfile::tempdir().unwrap();
        let d = d.path().canonicalize().unwrap();
        let line = command(&rules(&d), "cd /w && claude").unwrap();
        let d = d.to_string_lossy();
        let line = line.replace(d.as_ref(), "D");
        assert_eq!(
            line,
            "exec /usr/bin/bwrap --die-with-parent --unshare-pid --unshare-ipc --unshare-uts \
             --unshare-cgroup-try --cap-drop ALL --ro-bind / / --dev /dev --proc /proc --tmpfs \
             /tmp --ro-bind D/home D/home --tmpfs D/claude --ro-bind D/claude/agents \
             D/claude/agents --ro-bind D/claude/settings.json D/claude/settings.json --bind \
             D/claude/teams/t D/claude/teams/t --bind D/claude/tasks/t D/claude/tasks/t --setenv \
             CLAUDE_CONFIG_DIR D/claude --file 4 D/claude/.claude.json --bind D/work D/work --ro-bind D/work/.git/config \
             D/work/.git/config --ro-bind D/work/.git/hooks D/work/.git/hooks --tmpfs \
             D/home/.ssh --remount-ro D/home/.ssh --ro-bind /dev/null D/home/.netrc --unsetenv \
             SSH_AUTH_SOCK --unsetenv TMUX --unsetenv TMUX_PANE --unsetenv \
             DBUS_SESSION_BUS_ADDRESS --unsetenv DOCKER_HOST --unsetenv TEAMCTL_TELEGRAM_TOKEN \
             --unsetenv TEAMCTL_SLACK_TOKEN --unsetenv TEAMCTL_WEBHOOK_SECRET --unsetenv \
             TEAMCTL_SERVE_TOKEN --setenv TMPDIR /tmp --seccomp 3 \
             --chdir D/work -- /bin/sh -c 'cd /w && claude' 3< /data/f.bpf 4< \
             D/claude/.claude.json"
        );
    }

    #[test]
    fn network_off_and_no_filter() {
        let d = tempfile::tempdir().unwrap();
        let mut r = rules(d.path());
        r.network = Network::Off;
        r.no_unix_sockets = false;
        let line = command(&r, "x").unwrap();
        assert!(line.contains(" --unshare-net "));
        assert!(!line.contains("--seccomp"));
        r.writable.push("/nowhere/at/all".into());
        assert!(command(&r, "x").is_err());
    }

    #[test]
    fn a_block_is_named_with_its_fix() {
        let bin = Path::new("/usr/bin/bwrap");
        let ubuntu = Sysctls {
            apparmor_restrict: Some("1".into()),
            ..Sysctls::default()
        };
        let m = blocked(bin, "bwrap: setting up uid map: Permission denied", &ubuntu);
        assert!(
            m.contains("setting up uid map") && m.contains("apparmor_restrict"),
            "{m}"
        );
        let off = Sysctls {
            userns_clone: Some("0".into()),
            ..Sysctls::default()
        };
        assert!(blocked(bin, "x", &off).contains("unprivileged_userns_clone=1"));
        let root = Sysctls {
            root: true,
            ..ubuntu
        };
        assert!(blocked(bin, "x", &root).contains("in a container"));
    }

    #[test]
    fn a_missing_binary_is_a_usage_error() {
        let e = find(Some(Path::new("/no/bwrap")), None, false).unwrap_err();
        assert!(matches!(
            e.downcast_ref::<crate::Error>(),
            Some(crate::Error::Usage(_))
        ));
        let e = find(None, Some(OsStr::new("/nonexistent")), false).unwrap_err();
        assert!(e.to_string().contains("apt-get install bubblewrap"), "{e}");
    }
}
