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

    fn out(dir: &Path, args: &[&str]) -> String {
        let o = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    }

    /// A repository `repo` with one commit, and its clone `c` on branch `teamctl/t/a`; returns
    /// them and the commit.
    fn made(d: &Path) -> (PathBuf, PathBuf, String) {
        let repo = d.join("repo");
        std::fs::create_dir(&repo).unwrap();
        sh(&repo, &["init", "-q", "-b", "main"]);
        sh(&repo, &["commit", "-q", "--allow-empty", "-m", "start"]);
        let base = out(&repo, &["rev-parse", "HEAD"]);
        let clone = d.join("c");
        make(&repo, &clone, "teamctl/t/a", &base, None).unwrap();
        (repo, clone, base)
    }

    #[test]
    fn a_clone_commits_apart_and_comes_home() {
        let d = tempfile::tempdir().unwrap();
        let (repo, clone, base) = made(d.path());
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

    /// A git dir the teammate makes inside its clone's `.git` (writable in its sandbox) is not
    /// where the fetch reads: `git-upload-pack` without `--strict` tries `<path>/.git` first.
    #[test]
    fn a_git_dir_planted_in_the_clones_git_is_not_fetched_from() {
        let d = tempfile::tempdir().unwrap();
        let (repo, clone, _) = made(d.path());
        std::fs::write(clone.join("f"), "x").unwrap();
        sh(&clone, &["add", "f"]);
        sh(&clone, &["commit", "-q", "-m", "work"]);
        let work = out(&clone, &["rev-parse", "HEAD"]);
        let other = d.path().join("other");
        sh(d.path(), &["init", "-q", "-b", "teamctl/t/a", "other"]);
        sh(&other, &["commit", "-q", "--allow-empty", "-m", "planted"]);
        let planted = clone.join(".git/.git");
        let ok = Command::new("cp")
            .arg("-r")
            .arg(other.join(".git"))
            .arg(&planted)
            .status()
            .unwrap();
        assert!(ok.success());
        let at = At::clone(&repo, &clone, None).unwrap();
        assert_eq!(
            fetch(&At::plain(&repo), &at, "teamctl/t/a", true).unwrap(),
            work
        );
    }

    /// A clone whose `.git` is not as teamctl made it runs no git: a link, a `.git` file, a
    /// `commondir` pointing elsewhere, a config that is a link, objects that borrow no longer
    /// from the repository.
    #[test]
    fn a_clone_not_as_teamctl_made_it_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let (repo, clone, _) = made(d.path());
        let git = clone.join(".git");
        let refused = |why: &str| {
            let e = At::clone(&repo, &clone, None).unwrap_err();
            let e = format!("{e:#}");
            assert!(e.contains("not a sandboxed teammate's clone"), "{e}");
            assert!(e.contains(why), "{why}: {e}");
        };
        let moved = d.path().join("moved");
        std::fs::rename(&git, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &git).unwrap();
        refused("is not a folder");
        std::fs::remove_file(&git).unwrap();
        std::fs::write(&git, format!("gitdir: {}\n", moved.display())).unwrap();
        refused("is not a folder");
        std::fs::remove_file(&git).unwrap();
        std::fs::rename(&moved, &git).unwrap();
        At::clone(&repo, &clone, None).unwrap();

        std::fs::write(
            git.join("commondir"),
            format!("{}\n", repo.join(".git").display()),
        )
        .unwrap();
        refused("commondir");
        std::fs::write(git.join("commondir"), ".\n").unwrap();

        let config = git.join("config");
        std::fs::rename(&config, d.path().join("config")).unwrap();
        std::os::unix::fs::symlink(d.path().join("config"), &config).unwrap();
        refused("config is not a file");
        std::fs::remove_file(&config).unwrap();
        std::fs::rename(d.path().join("config"), &config).unwrap();

        let alternates = git.join("objects/info/alternates");
        std::fs::write(&alternates, "/nowhere/objects\n").unwrap();
        refused("does not name the repository's objects");
    }

    /// No transport but for the clone and its fetch: a fetch of a local path through any other
    /// command is refused by git, and the fetch home takes only a clone's place.
    #[test]
    fn only_the_clone_and_its_fetch_use_a_transport() {
        let d = tempfile::tempdir().unwrap();
        let (repo, clone, _) = made(d.path());
        let args = ["fetch", "-q", "--", clone.to_str().unwrap(), "main:copied"].map(OsStr::new);
        let o = At::plain(&repo).output(&args).unwrap();
        assert!(!o.status.success());
        assert!(String::from_utf8_lossy(&o.stderr).contains("transport 'file' not allowed"));
        let e = fetch(&At::plain(&repo), &At::plain(&clone), "teamctl/t/a", true).unwrap_err();
        assert!(format!("{e:#}").contains("is no clone"), "{e:#}");
    }
}
