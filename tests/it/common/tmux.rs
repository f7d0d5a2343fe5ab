//! tmux for the suites that launch teammates: the test's private tmux server (`TmuxServer`,
//! `tmux_env`), whether tmux runs here, its sessions, and the stand-in `claude` run in panes.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{TestEnv, wait_until};

/// The stand-in `claude` of tests/fixtures: answers `--version` and plays a teammate.
pub fn fake_claude() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-claude")
}

/// Whether tmux runs here (in CI its absence is a failure, not a skip).
pub fn tmux_installed() -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "tmux is not installed (CI needs it)"
        );
        eprintln!("skipping: tmux is not installed");
    }
    ok
}

/// Whether the test's private tmux server (TMUX_TMPDIR is the test's temp dir) has a session
/// with exactly this name.
pub fn tmux_has_session(env: &TestEnv, name: &str) -> bool {
    Command::new("tmux")
        .args(["has-session", "-t", &format!("={name}")])
        .env("TMUX_TMPDIR", env.dir.path())
        .env_remove("TMUX")
        .stderr(Stdio::null())
        .status()
        .unwrap()
        .success()
}

/// Kills the test's private tmux server (TMUX_TMPDIR is the test's temp dir) when dropped.
pub struct TmuxServer(pub PathBuf);

impl TmuxServer {
    /// Kills the server now (a test of what teamctl does once it is gone), and returns once no
    /// server answers on its socket: `kill-server` returns before the server has handled the
    /// SIGTERM it sends itself, and a client in between finds its panes, or a server exiting
    /// under it ("server exited unexpectedly").
    pub fn kill(&self) {
        assert!(
            self.stop(),
            "the test's tmux server still answers 10 s after kill-server"
        );
    }

    /// Whether a tmux server runs there and answers.
    pub fn answers(&self) -> bool {
        self.tmux("list-sessions")
            .is_ok_and(|out| out.status.success())
    }

    /// Kills the server; whether, within 10 s, tmux says that none runs on its socket (what
    /// teamctl takes for a server that is gone).
    fn stop(&self) -> bool {
        let _ = self.tmux("kill-server");
        wait_until(Duration::from_secs(10), || {
            // No tmux to ask is no server either.
            self.tmux("list-sessions").map_or(true, |out| {
                let said = String::from_utf8_lossy(&out.stderr);
                !out.status.success()
                    && (said.contains("no server running on")
                        || said.contains("error connecting to"))
            })
        })
    }

    fn tmux(&self, command: &str) -> std::io::Result<std::process::Output> {
        Command::new("tmux")
            .arg(command)
            .env("TMUX_TMPDIR", &self.0)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .output()
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A test env with its private tmux server (killed when the returned guard is dropped, before
/// the env); `None`, to skip the test, where tmux does not run.
pub fn tmux_env() -> Option<(TestEnv, TmuxServer)> {
    if !tmux_installed() {
        return None;
    }
    let env = TestEnv::new();
    let server = TmuxServer(env.dir.path().to_path_buf());
    Some((env, server))
}
