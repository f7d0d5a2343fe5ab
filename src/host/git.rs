//! The `git` command, for a teammate's own worktree: the repository a folder is in, branches,
//! `git worktree add`/`remove`, and how far a worktree is from where it started. Always the
//! `git` binary (never a reimplementation), with the caller's `GIT_*` redirections removed and
//! no file-system monitor (a repository's config must not start a program when teamctl only
//! looks).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use anyhow::{Context, Result, bail};

/// Variables that would point git at another repository or index than the folder named.
const REDIRECTS: [&str; 5] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
];

fn git(dir: &Path, args: &[&OsStr]) -> Result<Output> {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(["-c", "core.fsmonitor=false"])
        .args(args)
        .stdin(Stdio::null());
    for k in REDIRECTS {
        cmd.env_remove(k);
    }
    cmd.output()
        .context("could not run git (is it installed and on PATH?)")
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

fn stderr_line(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

fn run(dir: &Path, args: &[&str]) -> Result<Output> {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    git(dir, &args)
}

/// The top folder of the git work tree `dir` is in.
///
/// # Errors
/// `dir` is not in a git repository (or git cannot be run).
pub fn toplevel(dir: &Path) -> Result<PathBuf> {
    let out = run(dir, &["rev-parse", "--show-toplevel"])?;
    if !out.status.success() {
        bail!(
            "{} is not in a git repository (a worktree per teammate needs one): {}",
            dir.display(),
            stderr_line(&out)
        );
    }
    Ok(PathBuf::from(text(&out)))
}

/// The commit `HEAD` names in `dir`.
///
/// # Errors
/// No commit yet, or git failing.
pub fn head(dir: &Path) -> Result<String> {
    let out = run(dir, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])?;
    if !out.status.success() {
        bail!(
            "{} has no commit yet: a worktree starts from one",
            dir.display()
        );
    }
    Ok(text(&out))
}

/// The branch checked out in `dir` (`None`: a detached `HEAD`).
pub fn current_branch(dir: &Path) -> Option<String> {
    let out = run(dir, &["symbolic-ref", "--quiet", "--short", "HEAD"]).ok()?;
    out.status.success().then(|| text(&out))
}

/// The commit branch `name` points at in the repository of `dir` (`None`: no such branch).
pub fn branch_commit(dir: &Path, name: &str) -> Option<String> {
    let r = format!("refs/heads/{name}^{{commit}}");
    let out = run(dir, &["rev-parse", "--verify", "--quiet", &r]).ok()?;
    out.status.success().then(|| text(&out))
}

/// Whether `name` is a valid branch name (`git check-ref-format --branch`).
pub fn valid_branch(dir: &Path, name: &str) -> bool {
    !name.starts_with('-')
        && run(dir, &["check-ref-format", "--branch", name]).is_ok_and(|o| o.status.success())
}

/// Whether branch `name` exists in the repository of `dir`.
///
/// # Errors
/// git cannot be run.
pub fn branch_exists(dir: &Path, name: &str) -> Result<bool> {
    let r = format!("refs/heads/{name}");
    Ok(run(dir, &["rev-parse", "--verify", "--quiet", &r])?
        .status
        .success())
}

/// `git worktree add`: a new worktree at `path` on `branch`, made from `base` when `create`
/// (else the existing branch is checked out).
///
/// # Errors
/// git refusing (the branch checked out elsewhere, `path` not empty, …), naming why.
pub fn worktree_add(repo: &Path, path: &Path, branch: &str, create: Option<&str>) -> Result<()> {
    let mut args: Vec<&OsStr> = vec![OsStr::new("worktree"), OsStr::new("add")];
    if let Some(base) = create {
        args.extend([OsStr::new("-b"), OsStr::new(branch), path.as_os_str()]);
        args.push(OsStr::new(base));
    } else {
        args.extend([path.as_os_str(), OsStr::new(branch)]);
    }
    let out = git(repo, &args)?;
    if !out.status.success() {
        bail!(
            "git worktree add {} ({branch}) failed: {}",
            path.display(),
            stderr_line(&out)
        );
    }
    Ok(())
}

/// `git worktree remove` of `path` (git itself refuses a worktree with changes).
///
/// # Errors
/// git refusing, naming why.
pub fn worktree_remove(repo: &Path, path: &Path) -> Result<()> {
    let out = git(
        repo,
        &[
            OsStr::new("worktree"),
            OsStr::new("remove"),
            path.as_os_str(),
        ],
    )?;
    if !out.status.success() {
        bail!(
            "git worktree remove {} failed: {}",
            path.display(),
            stderr_line(&out)
        );
    }
    Ok(())
}

/// `git branch -D` of a branch teamctl just made and nothing used (a create that failed).
///
/// # Errors
/// git refusing.
pub fn branch_delete(repo: &Path, branch: &str) -> Result<()> {
    let out = run(repo, &["branch", "-D", "--", branch])?;
    if !out.status.success() {
        bail!("git branch -D {branch} failed: {}", stderr_line(&out));
    }
    Ok(())
}

/// The paths with uncommitted changes in the worktree at `dir` (untracked files included,
/// ignored ones not), as `git status` names them.
///
/// # Errors
/// `dir` is not a worktree, or git failing.
pub fn uncommitted(dir: &Path) -> Result<Vec<String>> {
    let out = run(
        dir,
        &["status", "--porcelain=v1", "-z", "--untracked-files=all"],
    )?;
    if !out.status.success() {
        bail!(
            "git status in {} failed: {}",
            dir.display(),
            stderr_line(&out)
        );
    }
    Ok(porcelain_paths(&out.stdout))
}

/// The git-ignored files in the worktree at `dir` (build output, `.env`, notes a teammate kept
/// out of git): `git worktree remove` removes them without a word, so they are named first.
///
/// # Errors
/// `dir` is not a worktree, or git failing.
pub fn ignored(dir: &Path) -> Result<Vec<String>> {
    let out = run(
        dir,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--ignored=matching",
            "--untracked-files=all",
        ],
    )?;
    if !out.status.success() {
        bail!(
            "git status in {} failed: {}",
            dir.display(),
            stderr_line(&out)
        );
    }
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter_map(|f| f.strip_prefix(b"!! "))
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect())
}

/// The paths of `git status --porcelain=v1 -z` output (a rename's source skipped).
fn porcelain_paths(raw: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut fields = raw.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let Some(f) = fields.next() {
        if f.len() < 4 {
            continue;
        }
        out.push(String::from_utf8_lossy(&f[3..]).into_owned());
        if matches!(f[0], b'R' | b'C') {
            fields.next();
        }
    }
    out
}

/// How many files in the worktree at `dir` differ from commit `base`: committed, staged or
/// not, and untracked files (ignored ones aside).
///
/// # Errors
/// `dir` is not a worktree, `base` is unknown, or git failing.
pub fn changed_since(dir: &Path, base: &str) -> Result<u64> {
    let diff = run(dir, &["diff", "--name-only", "-z", base, "--"])?;
    if !diff.status.success() {
        bail!(
            "git diff in {} failed: {}",
            dir.display(),
            stderr_line(&diff)
        );
    }
    let others = run(dir, &["ls-files", "-z", "--others", "--exclude-standard"])?;
    if !others.status.success() {
        bail!(
            "git ls-files in {} failed: {}",
            dir.display(),
            stderr_line(&others)
        );
    }
    let count = |raw: &[u8]| raw.split(|b| *b == 0).filter(|f| !f.is_empty()).count() as u64;
    Ok(count(&diff.stdout) + count(&others.stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_paths_skip_a_rename_source() {
        let raw = b" M src/a.rs\0R  new.rs\0old.rs\0?? notes.md\0";
        assert_eq!(porcelain_paths(raw), ["src/a.rs", "new.rs", "notes.md"]);
        assert!(porcelain_paths(b"").is_empty());
    }
}
