//! git as the suites run it: in a repository of the test's, with a fixed author and no system
//! or user configuration.

use std::path::Path;
use std::process::Command;

/// `git args` in `dir` (author `t <t@example.com>`, no system config, `HOME` at `dir`); its
/// stdout without the trailing newline. A failing git fails the test with its stderr.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}
