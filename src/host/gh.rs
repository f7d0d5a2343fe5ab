//! GitHub's `gh` command, for `teamctl pr`: found as given (`TEAMCTL_GH_BIN`) or on `PATH`
//! (the `which` crate), asked whether it is logged in, and told to open a pull request whose
//! body it reads on stdin.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::host::resolve::is_executable;

/// The `gh` binary: `explicit` when given (it must be executable), else `gh` on `path_var`.
///
/// # Errors
/// Not found, naming how to give it.
pub fn find(explicit: Option<&Path>, path_var: Option<&OsStr>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        if is_executable(p) {
            return Ok(p.to_path_buf());
        }
        bail!(
            "the gh binary given with TEAMCTL_GH_BIN is not an executable file: {}",
            p.display()
        );
    }
    let dirs: Vec<PathBuf> = path_var
        .map(|v| {
            std::env::split_paths(v)
                .filter(|d| !d.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default();
    let joined = std::env::join_paths(dirs).ok();
    which::which_in_global("gh", joined)
        .ok()
        .and_then(|mut found| found.next())
        .context(
            "could not find GitHub's gh command on PATH (https://cli.github.com); install it or \
             set TEAMCTL_GH_BIN",
        )
}

fn first_lines(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(3)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether `gh` is logged in (`gh auth status`), asked in `dir`.
///
/// # Errors
/// Not logged in, or `gh` failing to run.
pub fn logged_in(gh: &Path, dir: &Path) -> Result<()> {
    let out = Command::new(gh)
        .args(["auth", "status"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("could not run {}", gh.display()))?;
    if !out.status.success() {
        bail!(
            "gh is not logged in to GitHub (run `gh auth login`, or set GH_TOKEN): {}",
            first_lines(&out.stderr)
        );
    }
    Ok(())
}

/// A pull request to open.
#[derive(Debug, Clone)]
pub struct NewPr<'a> {
    /// The branch with the work (`--head`).
    pub head: &'a str,
    /// The branch it goes into (`--base`; `None`: the repository's default branch).
    pub base: Option<&'a str>,
    /// Its title.
    pub title: &'a str,
    /// Its body (given on stdin, `--body-file -`).
    pub body: &'a str,
    /// A draft.
    pub draft: bool,
}

/// `gh pr create` in the repository at `dir`; returns what gh printed (the pull request's URL).
///
/// # Errors
/// gh failing, with its message.
pub fn create_pr(gh: &Path, dir: &Path, pr: &NewPr) -> Result<String> {
    let mut cmd = Command::new(gh);
    // `--flag=value`: a value starting with `-` stays a value.
    cmd.args(["pr", "create", "--body-file=-"])
        .arg(format!("--head={}", pr.head))
        .arg(format!("--title={}", pr.title))
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(base) = pr.base {
        cmd.arg(format!("--base={base}"));
    }
    if pr.draft {
        cmd.arg("--draft");
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("could not run {}", gh.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        // A gh that exits early closes its stdin: its exit status says why.
        let _ = stdin.write_all(pr.body.as_bytes());
    }
    let out = child.wait_with_output()?;
    if !out.status.success() {
        bail!("gh pr create failed: {}", first_lines(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
