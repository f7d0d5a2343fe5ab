//! Variables given to one pane and shown on no command line: `respawn-pane -e NAME=value`
//! reaches tmux on its standard input (`tmux source-file -`, tmux 3.1 and later) instead of its
//! argv, which every process of the machine can read (`ps`, `/proc/*/cmdline`). tmux gives them
//! to the new process only: not to the session's or the global environment.

use std::io::Write;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use super::Server;
use crate::host::child_env;

impl Server {
    /// [`Server::respawn`], with `private` added to `pane`'s environment after `env` (so a
    /// name in both takes `private`'s value), through tmux's standard input: no process's
    /// argv holds a value. Without `private`, [`Server::respawn`] itself.
    ///
    /// # Errors
    /// When tmux fails (no such pane; a tmux older than 3.1, which cannot read commands from
    /// its standard input).
    pub fn respawn_private(
        &self,
        pane: &str,
        cmd: &str,
        env: &[(String, String)],
        private: &[(String, String)],
    ) -> Result<()> {
        if private.is_empty() {
            return self.respawn(pane, cmd, env);
        }
        let target = quote(pane);
        let mut script = format!("set-option -w -t {target} remain-on-exit on\n");
        script.push_str(&format!("respawn-pane -k -t {target}"));
        let env = env.iter().filter(|(k, _)| !child_env::is_secret(k));
        for (k, v) in env.chain(private) {
            script.push_str(&format!(" -e {}", quote(&format!("{k}={v}"))));
        }
        script.push_str(&format!(" {}\n", quote(cmd)));
        self.source(&script)
    }

    /// Runs the tmux commands of `script` (`source-file -`, the script on standard input).
    fn source(&self, script: &str) -> Result<()> {
        let mut command = Command::new("tmux");
        child_env::scrub(&mut command);
        if let Some(socket) = &self.socket {
            command.arg("-S").arg(socket);
        }
        let mut child = command
            .args(["source-file", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("could not run tmux source-file")?;
        let written = child
            .stdin
            .take()
            .context("tmux source-file has no standard input")?
            .write_all(script.as_bytes());
        let out = child
            .wait_with_output()
            .context("could not run tmux source-file")?;
        written.context("could not write to tmux source-file")?;
        if !out.status.success() {
            bail!(
                "tmux respawn-pane failed (a teammate's own env needs tmux 3.1 or later, which \
                 reads commands from its standard input): {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }
}

/// `s` as one word of tmux's command language, double-quoted: `\`, `"` and `$` escaped, and
/// every control character as an octal escape (`\012`), so that it is read back exactly, on
/// one line, with nothing expanded.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' | '"' | '$' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_ascii_control() => out.push_str(&format!("\\{:03o}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A server on a temp socket, killed when the test ends however it ends.
    struct Down(Server);

    impl Drop for Down {
        fn drop(&mut self) {
            let _ = self.0.run(&["kill-server"]);
        }
    }

    #[test]
    fn a_private_value_reaches_its_pane_exactly_and_nothing_else() {
        // CARGO_PKG_NAME: a variable this test process has (cargo sets it), to hide.
        if !super::super::available() || std::env::var_os("CARGO_PKG_NAME").is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("s");
        let server = Down(Server::recorded(socket.to_str().unwrap(), None, None));
        let pane = server
            .0
            .new_session_hiding("t", "w", &["CARGO_PKG_NAME"])
            .unwrap();
        let out = dir.path().join("out");
        let value = "it's \"q\" $HOME \\ ;\nline2 ${X} #{pane_id} ~\t\u{7f}é";
        let cmd = format!(
            "printf '%s' \"$RT_V\" > {0}.tmp; env > {0}.env; mv {0}.tmp {0}; exec sleep 60",
            out.display()
        );
        let private = [("RT_V".to_string(), value.to_string())];
        server
            .0
            .respawn_private(&pane, &cmd, &[], &private)
            .unwrap();
        let until = Instant::now() + Duration::from_secs(10);
        while !out.exists() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(std::fs::read_to_string(&out).unwrap(), value);
        let pane_env = std::fs::read_to_string(out.with_extension("env")).unwrap();
        assert!(!pane_env.contains("CARGO_PKG_NAME="), "{pane_env}");
        let global = server.0.checked(&["show-environment", "-g"]).unwrap();
        assert!(!global.contains("CARGO_PKG_NAME=") && !global.contains("RT_V"));
        let session = server.0.checked(&["show-environment", "-t", "t"]).unwrap();
        assert!(!session.contains("RT_V"), "{session}");
        let e = server
            .0
            .respawn_private("%999", "true", &[], &private)
            .unwrap_err();
        assert!(format!("{e:#}").contains("can't find pane"), "{e:#}");
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("%3"), "\"%3\"");
        assert_eq!(
            quote("a\"b\\c$HOME ${X} ~;#{p}"),
            "\"a\\\"b\\\\c\\$HOME \\${X} ~;#{p}\""
        );
        assert_eq!(quote("l1\nl2\t\u{7f}é"), "\"l1\\012l2\\011\\177é\"");
    }
}
