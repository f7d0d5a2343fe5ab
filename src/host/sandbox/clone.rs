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
//! git runs here as everywhere in teamctl, through [`At`]: the clone found as teamctl made it
//! ([`At::clone`]), the `file` protocol allowed for the clone and the fetch home alone
//! ([`At::clone_into`], [`At::fetch_from_clone`]).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use anyhow::{Context, Result, bail};

use crate::host::git_run::{At, Drivers};

/// `out` when git succeeded, else an error naming `what` and git's own words.
fn checked(what: &str, out: Output) -> Result<Output> {
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

/// Makes the clone of `repo` at `path` (which must not exist), on `branch` made at `commit`;
/// its checkout runs no driver but those `recorded` (the repository's at the team's start).
///
/// # Errors
/// git refusing, naming why.
pub fn make(
    repo: &Path,
    path: &Path,
    branch: &str,
    commit: &str,
    recorded: Option<&Drivers>,
) -> Result<()> {
    if commit.starts_with('-') || branch.starts_with('-') {
        bail!("not a commit or a branch: {commit} {branch}");
    }
    checked("clone", At::plain(repo).clone_into(path)?)?;
    let git_dir = path.join(".git");
    std::fs::write(git_dir.join("commondir"), ".\n")
        .with_context(|| format!("could not write {}", git_dir.join("commondir").display()))?;
    std::fs::create_dir_all(git_dir.join("hooks"))?;
    let args = ["checkout", "--quiet", "-b", branch, commit].map(OsStr::new);
    checked("checkout", At::clone(repo, path, recorded)?.output(&args)?)?;
    Ok(())
}

/// Brings `branch` of the clone `clone` (an [`At::clone`]) home into the repository `repo`, as
/// the same branch: forced when teamctl made the branch for the teammate (it is the teammate's
/// to rewrite), else only a fast-forward. Returns the commit it points at now.
///
/// # Errors
/// git refusing (a branch the teammate rewrote that was not its own, the clone gone), naming
/// why.
pub fn fetch(repo: &At, clone: &At, branch: &str, force: bool) -> Result<String> {
    if branch.starts_with('-') {
        bail!("not a branch: {branch}");
    }
    let spec = format!(
        "{}refs/heads/{branch}:refs/heads/{branch}",
        if force { "+" } else { "" }
    );
    checked("fetch", repo.fetch_from_clone(clone, &spec)?).with_context(|| {
        format!(
            "could not bring {branch} home from {}",
            clone.dir().display()
        )
    })?;
    let r = format!("refs/heads/{branch}^{{commit}}");
    let args = ["rev-parse", "--verify", r.as_str()].map(OsStr::new);
    let out = checked("rev-parse", repo.output_no_driver(&args)?)?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

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
        let base = Command::new("git")
            .args(["-C", repo.to_str().unwrap(), "rev-parse", "HEAD"])
            .output()
            .unwrap();
        let base = String::from_utf8_lossy(&base.stdout).trim().to_string();
        let clone = d.path().join("c");
        make(&repo, &clone, "teamctl/t/a", &base, None).unwrap();
        let home = At::plain(&repo);
        let at = At::clone(&repo, &clone, None).unwrap();
        let alternates = std::fs::read_to_string(clone.join(".git/objects/info/alternates"));
        assert!(alternates.unwrap().contains("repo"));
        assert_eq!(
            std::fs::read_to_string(clone.join(".git/commondir")).unwrap(),
            ".\n"
        );
        std::fs::write(clone.join("f"), "x").unwrap();
        sh(&clone, &["add", "f"]);
        sh(&clone, &["commit", "-q", "-m", "work"]);
        let tip = fetch(&home, &at, "teamctl/t/a", true).unwrap();
        assert_ne!(tip, base);
        sh(&repo, &["cat-file", "-e", &format!("{tip}:f")]);
        // Rewritten history comes home only when forced.
        sh(&clone, &["commit", "-q", "--amend", "-m", "again"]);
        assert!(fetch(&home, &at, "teamctl/t/a", false).is_err());
        assert_ne!(fetch(&home, &at, "teamctl/t/a", true).unwrap(), tip);
        let (g, fixed) = protected(&clone);
        assert_eq!(g, clone.join(".git"));
        assert!(fixed.iter().all(|p| p.exists()), "{fixed:?}");
    }
}
