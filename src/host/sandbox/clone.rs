//! A sandboxed teammate's own git clone, in place of a worktree of the repository
//! (docs/design.md, "Git inside a sandbox"): `git clone --shared` borrows the repository's
//! objects through `objects/info/alternates` (read-only inside the sandbox, so nothing the
//! others need can be deleted), and the clone has its own refs, index and objects, so the
//! teammate commits on its own branch without writing the repository at all. teamctl brings
//! the branch home with `git fetch` ([`fetch`]) before `diff`, `merge` and `delete` read it.
//!
//! The clone's `.git/config`, `.git/hooks` and `.git/commondir` (written as `.`, so that git
//! reads the clone's own config) are the ones teamctl wrote and stay read-only inside the
//! sandbox ([`protected`]), and its `.git` folder is pinned there: the teammate cannot plant a
//! config, a hook or a redirection that git would follow when teamctl, or the person, runs it
//! in the clone afterwards.
//!
//! Its own small `git` runner, hardened as `host::git`'s: no `GIT_*` redirection inherited,
//! no file-system monitor, no hook.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anyhow::{Context, Result, bail};

/// Variables that would point git at another repository than the one named.
const REDIRECTS: [&str; 5] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
];

fn git(dir: Option<&Path>, args: &[&OsStr]) -> Result<Output> {
    let mut cmd = Command::new("git");
    if let Some(d) = dir {
        cmd.arg("-C").arg(d);
    }
    cmd.args([
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.hooksPath=/dev/null",
    ])
    .args(args)
    .stdin(Stdio::null());
    for k in REDIRECTS {
        cmd.env_remove(k);
    }
    cmd.output()
        .context("could not run git (is it installed and on PATH?)")
}

fn checked(dir: Option<&Path>, what: &str, args: &[&OsStr]) -> Result<Output> {
    let out = git(dir, args)?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let err: Vec<&str> = err
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        bail!("git {what} failed: {}", err.join("; "));
    }
    Ok(out)
}

/// What inside a clone stays read-only in its sandbox, in order: its `.git` folder (given again,
/// writable, so that it cannot be moved or replaced), then its config, hooks and `commondir`.
pub fn protected(clone: &Path) -> (PathBuf, Vec<PathBuf>) {
    let git = clone.join(".git");
    let fixed = ["config", "hooks", "commondir"]
        .iter()
        .map(|n| git.join(n))
        .collect();
    (git, fixed)
}

/// Makes the clone of `repo` at `path` (which must not exist), on `branch` made at `commit`.
///
/// # Errors
/// git refusing, naming why.
pub fn make(repo: &Path, path: &Path, branch: &str, commit: &str) -> Result<()> {
    if commit.starts_with('-') || branch.starts_with('-') {
        bail!("not a commit or a branch: {commit} {branch}");
    }
    checked(
        None,
        "clone",
        &[
            OsStr::new("clone"),
            OsStr::new("--shared"),
            OsStr::new("--no-checkout"),
            OsStr::new("--quiet"),
            OsStr::new("--"),
            repo.as_os_str(),
            path.as_os_str(),
        ],
    )?;
    let git_dir = path.join(".git");
    std::fs::write(git_dir.join("commondir"), ".\n")
        .with_context(|| format!("could not write {}", git_dir.join("commondir").display()))?;
    std::fs::create_dir_all(git_dir.join("hooks"))?;
    let args = ["checkout", "--quiet", "-b", branch, commit];
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    checked(Some(path), "checkout", &args)?;
    Ok(())
}

/// Brings `branch` of the clone at `clone` home into `repo`, as the same branch: forced when
/// teamctl made the branch for the teammate (it is the teammate's to rewrite), else only a
/// fast-forward. Returns the commit it points at now.
///
/// # Errors
/// git refusing (a branch the teammate rewrote that was not its own, the clone gone), naming
/// why.
pub fn fetch(repo: &Path, clone: &Path, branch: &str, force: bool) -> Result<String> {
    if branch.starts_with('-') {
        bail!("not a branch: {branch}");
    }
    let spec = format!(
        "{}refs/heads/{branch}:refs/heads/{branch}",
        if force { "+" } else { "" }
    );
    checked(
        Some(repo),
        "fetch",
        &[
            OsStr::new("fetch"),
            OsStr::new("--quiet"),
            OsStr::new("--no-tags"),
            OsStr::new("--no-write-fetch-head"),
            OsStr::new("--"),
            clone.as_os_str(),
            OsStr::new(&spec),
        ],
    )
    .with_context(|| format!("could not bring {branch} home from {}", clone.display()))?;
    let r = format!("refs/heads/{branch}^{{commit}}");
    let out = checked(
        Some(repo),
        "rev-parse",
        &[
            OsStr::new("rev-parse"),
            OsStr::new("--verify"),
            OsStr::new(&r),
        ],
    )?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn a_clone_commits_apart_and_comes_home() {
        let d = tempfile::tempdir().unwrap();
        let repo = d.path().join("repo");
        std::fs::create_dir(&repo).unwrap();
        sh(&repo, &["init", "-q", "-b", "main"]);
        sh(&repo, &["commit", "-q", "--allow-empty", "-m", "start"]);
        let base = git(Some(&repo), &[OsStr::new("rev-parse"), OsStr::new("HEAD")]).unwrap();
        let base = String::from_utf8_lossy(&base.stdout).trim().to_string();
        let clone = d.path().join("c");
        make(&repo, &clone, "teamctl/t/a", &base).unwrap();
        let alternates = std::fs::read_to_string(clone.join(".git/objects/info/alternates"));
        assert!(alternates.unwrap().contains("repo"));
        assert_eq!(
            std::fs::read_to_string(clone.join(".git/commondir")).unwrap(),
            ".\n"
        );
        std::fs::write(clone.join("f"), "x").unwrap();
        sh(&clone, &["add", "f"]);
        sh(&clone, &["commit", "-q", "-m", "work"]);
        let tip = fetch(&repo, &clone, "teamctl/t/a", true).unwrap();
        assert_ne!(tip, base);
        sh(&repo, &["cat-file", "-e", &format!("{tip}:f")]);
        // Rewritten history comes home only when forced.
        sh(&clone, &["commit", "-q", "--amend", "-m", "again"]);
        assert!(fetch(&repo, &clone, "teamctl/t/a", false).is_err());
        assert_ne!(fetch(&repo, &clone, "teamctl/t/a", true).unwrap(), tip);
        let (g, fixed) = protected(&clone);
        assert_eq!(g, clone.join(".git"));
        assert!(fixed.iter().all(|p| p.exists()), "{fixed:?}");
    }
}
