//! Variables given to one pane and shown on no command line: `respawn-pane -e NAME=value`
//! reaches tmux on its standard input (`tmux source-file -`, tmux 3.1 and later) instead of its
//! argv, which every process of the machine can read (`ps`, `/proc/*/cmdline`). tmux gives them
//! to the new process only: not to the session's or the global environment.

use std::io::Write;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use super::Server;

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
        for (k, v) in env.iter().chain(private) {
            script.push_str(&format!(" -e {}", quote(&format!("{k}={v}"))));
        }
        script.push_str(&format!(" {}\n", quote(cmd)));
        self.source(&script)
    }

    /// Runs the tmux commands of `script` (`source-file -`, the script on standard input).
    fn source(&self, script: &str) -> Result<()> {
        let mut command = Command::new("tmux");
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
                "tmux respawn-pane failed: {}",
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
