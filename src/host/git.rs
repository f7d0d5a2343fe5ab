//! The `git` command, for the teammates' worktrees: the repository a folder is in, branches,
//! `git worktree add`/`remove`, how far a worktree is from where it started, and the merges of
//! teamctl's merge queue. Always the `git` binary (never a reimplementation), run as
//! [`At`] runs it: with the caller's `GIT_*` redirections removed, settings on its command line
//! that start no program (no hook, fsmonitor, signing, …), and in a teammate's worktree or
//! teamctl's scratch worktree only once that worktree is found as git made it and the
//! repository's filter and merge drivers as they were when the team started
//! ([`super::git_run`]).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use anyhow::{Context, Result, bail};

pub use super::git_run::{At, Drivers, drivers};

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

fn run_at(at: &At, args: &[&str]) -> Result<Output> {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    at.output(&args)
}

/// `git args` in `at` for a command that runs no driver ([`At::output_no_driver`]).
fn read_at(at: &At, args: &[&str]) -> Result<Output> {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    at.output_no_driver(&args)
}

fn run(dir: &Path, args: &[&str]) -> Result<Output> {
    run_at(&At::plain(dir), args)
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
    head_at(&At::plain(dir))
}

fn head_at(at: &At) -> Result<String> {
    let out = read_at(at, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])?;
    if !out.status.success() {
        bail!(
            "{} has no commit yet: a worktree starts from one",
            at.dir().display()
        );
    }
    Ok(text(&out))
}

/// The branch checked out in the worktree `at` (`None`: a detached `HEAD`).
pub fn current_branch(at: &At) -> Option<String> {
    let out = read_at(at, &["symbolic-ref", "--quiet", "--short", "HEAD"]).ok()?;
    out.status.success().then(|| text(&out))
}

/// The commit branch `name` points at in the repository of `dir` (`None`: no such branch).
pub fn branch_commit(dir: &Path, name: &str) -> Option<String> {
    let r = format!("refs/heads/{name}^{{commit}}");
    let out = run(dir, &["rev-parse", "--verify", "--quiet", &r]).ok()?;
    out.status.success().then(|| text(&out))
}

/// Whether `name` is a branch name teamctl takes ([`branch_name`]).
pub fn valid_branch(dir: &Path, name: &str) -> bool {
    branch_name(dir, name).is_ok()
}

/// Checks that `name` is a branch's short name, as git takes it and meaning only that branch:
/// `git check-ref-format --branch` accepts it and gives it back unchanged (`@{-1}`, the branch
/// checked out before, does not), and it is not `@` or `HEAD` (what is checked out) nor a full
/// ref name (`refs/heads/main` would make `refs/heads/refs/heads/main`).
///
/// # Errors
/// Why not, in words, naming `name`.
pub fn branch_name(dir: &Path, name: &str) -> Result<()> {
    let why = if name.starts_with('-') {
        Some("it starts with '-'")
    } else if name == "@" || name == "HEAD" {
        Some("git reads it as the branch checked out, not a branch of that name")
    } else if name.starts_with("refs/") {
        Some("it is a full ref name: give the branch's short name (main, not refs/heads/main)")
    } else {
        let out = run(dir, &["check-ref-format", "--branch", name])?;
        (!out.status.success() || text(&out) != name).then_some(
            "git does not take it as a branch name (see `git check-ref-format --branch`)",
        )
    };
    match why {
        Some(why) => bail!("'{name}' is not a valid branch name: {why}"),
        None => Ok(()),
    }
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
    let out = At::plain(repo).output(&args)?;
    if !out.status.success() {
        bail!(
            "git worktree add {} ({branch}) failed: {}",
            path.display(),
            stderr_line(&out)
        );
    }
    Ok(())
}

/// `git worktree remove` of the worktree `tree` from the repository `repo` (git itself
/// refuses a worktree with changes, which it tells by `git status` there).
///
/// # Errors
/// A driver changed in `tree`, git refusing, naming why.
pub fn worktree_remove(repo: &At, tree: &At) -> Result<()> {
    // git's own status in the worktree reads its config: checked as any command there.
    run_at(tree, &["rev-parse", "--git-dir"])?;
    let path = tree.dir().as_os_str();
    let out = repo.output(&[OsStr::new("worktree"), OsStr::new("remove"), path])?;
    if !out.status.success() {
        bail!(
            "git worktree remove {} failed: {}",
            tree.dir().display(),
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

/// How `git status` and a diff against a work tree treat a submodule: by the commit the
/// worktree records for it, never by running git in it (its own config would run there).
const SUBMODULES: &str = "--ignore-submodules=dirty";

/// The paths with uncommitted changes in the worktree `at` (untracked files included,
/// ignored ones not), as `git status` names them.
///
/// # Errors
/// `at` is not a worktree, a driver changed, or git failing.
pub fn uncommitted(at: &At) -> Result<Vec<String>> {
    let args = [
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        SUBMODULES,
    ];
    let out = ok_or_bail(at.dir(), "status", run_at(at, &args)?)?;
    Ok(porcelain_paths(&out.stdout))
}

/// The git-ignored files in the worktree `at` (build output, `.env`, notes a teammate kept
/// out of git): `git worktree remove` removes them without a word, so they are named first.
///
/// # Errors
/// `at` is not a worktree, a driver changed, or git failing.
pub fn ignored(at: &At) -> Result<Vec<String>> {
    let args = [
        "status",
        "--porcelain=v1",
        "-z",
        "--ignored=matching",
        "--untracked-files=all",
        SUBMODULES,
    ];
    let out = ok_or_bail(at.dir(), "status", run_at(at, &args)?)?;
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

/// How many files in the worktree `at` differ from commit `base`: committed, staged or
/// not, and untracked files (ignored ones aside).
///
/// # Errors
/// `at` is not a worktree, `base` is unknown, a driver changed, or git failing.
pub fn changed_since(at: &At, base: &str) -> Result<u64> {
    diff_range(base, None)?;
    let args = [&DIFF[..], &["--name-only", "-z", base, "--"]].concat();
    let diff = ok_or_bail(at.dir(), "diff", run_at(at, &args)?)?;
    let others = untracked(at)?;
    let count = |raw: &[u8]| raw.split(|b| *b == 0).filter(|f| !f.is_empty()).count() as u64;
    Ok(count(&diff.stdout) + others.len() as u64)
}

/// One file's line counts as `git diff --numstat` gives them (`None` for a binary file, which
/// git counts as `-`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NumStat {
    /// The file, relative to the top of the repository.
    pub path: String,
    /// Lines added (`None`: a binary file).
    pub added: Option<u64>,
    /// Lines deleted (`None`: a binary file).
    pub deleted: Option<u64>,
}

fn ok_or_bail(dir: &Path, what: &str, out: Output) -> Result<Output> {
    if !out.status.success() {
        bail!(
            "git {what} in {} failed: {}",
            dir.display(),
            stderr_line(&out)
        );
    }
    Ok(out)
}

/// What every `git diff` gets: no colour, no external diff or text conversion (programs a
/// config names), submodules by their recorded commit.
const DIFF: [&str; 5] = [
    "diff",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    SUBMODULES,
];

/// The arguments `git diff` gets for `from` against `to` (`None`: the work tree of `dir`,
/// staged or not), never letting a name become an option.
fn diff_range<'a>(from: &'a str, to: Option<&'a str>) -> Result<Vec<&'a str>> {
    let mut v = vec![from];
    v.extend(to);
    if v.iter().any(|r| r.starts_with('-')) {
        bail!("refusing a revision that starts with '-': {}", v.join(" "));
    }
    Ok(v)
}

/// `git diff --numstat` of commit `from` against `to` (`None`: the work tree of `at`, staged
/// changes and not, untracked files aside), renames shown as a deletion and an addition.
///
/// # Errors
/// An unknown commit, a driver changed, or git failing.
pub fn numstat(at: &At, from: &str, to: Option<&str>) -> Result<Vec<NumStat>> {
    let mut args = DIFF.to_vec();
    args.extend(["--numstat", "-z", "--no-renames"]);
    args.extend(diff_range(from, to)?);
    args.push("--");
    let out = ok_or_bail(at.dir(), "diff", run_at(at, &args)?)?;
    Ok(parse_numstat(&out.stdout))
}

/// The records of `git diff --numstat -z --no-renames`: `added\tdeleted\tpath\0`.
fn parse_numstat(raw: &[u8]) -> Vec<NumStat> {
    let count = |f: &[u8]| std::str::from_utf8(f).ok().and_then(|s| s.parse().ok());
    raw.split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .filter_map(|rec| {
            let mut parts = rec.splitn(3, |b| *b == b'\t');
            let (a, d, p) = (parts.next()?, parts.next()?, parts.next()?);
            Some(NumStat {
                path: String::from_utf8_lossy(p).into_owned(),
                added: count(a),
                deleted: count(d),
            })
        })
        .collect()
}

/// `git diff` of `from` against `to` (`None`: the work tree of `at`) as text: a diffstat
/// when `stat`, else the patch (no colour, no external diff or text conversion).
///
/// # Errors
/// An unknown commit, a driver changed, or git failing.
pub fn diff_text(at: &At, from: &str, to: Option<&str>, stat: bool) -> Result<String> {
    let mut args = DIFF.to_vec();
    if stat {
        args.push("--stat=100");
    } else {
        args.push("--binary");
    }
    args.extend(diff_range(from, to)?);
    args.push("--");
    let out = ok_or_bail(at.dir(), "diff", run_at(at, &args)?)?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The untracked files of the worktree `at` (ignored ones aside).
///
/// # Errors
/// `at` is not a worktree, a driver changed, or git failing.
pub fn untracked(at: &At) -> Result<Vec<String>> {
    let args = ["ls-files", "-z", "--others", "--exclude-standard"];
    let out = ok_or_bail(at.dir(), "ls-files", read_at(at, &args)?)?;
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect())
}

/// How many commits `to` has that `from` has not (`git rev-list --count from..to`).
///
/// # Errors
/// An unknown commit, or git failing.
pub fn commits_between(dir: &Path, from: &str, to: &str) -> Result<u64> {
    diff_range(from, Some(to))?;
    let range = format!("{from}..{to}");
    let out = ok_or_bail(dir, "rev-list", run(dir, &["rev-list", "--count", &range])?)?;
    text(&out)
        .parse()
        .with_context(|| format!("git rev-list --count {range} gave no count"))
}

/// Whether commit `a` is an ancestor of (or is) commit `b`.
///
/// # Errors
/// git failing otherwise than by answering no.
pub fn is_ancestor(dir: &Path, a: &str, b: &str) -> Result<bool> {
    is_ancestor_at(&At::plain(dir), a, b)
}

fn is_ancestor_at(at: &At, a: &str, b: &str) -> Result<bool> {
    diff_range(a, Some(b))?;
    let out = read_at(at, &["merge-base", "--is-ancestor", a, b])?;
    match out.status.code() {
        Some(0) => Ok(true),
        Some(1) => Ok(false),
        _ => bail!("git merge-base --is-ancestor failed: {}", stderr_line(&out)),
    }
}

/// The branches checked out in any worktree of the repository of `dir` (`git worktree list
/// --porcelain`).
///
/// # Errors
/// git failing.
pub fn checked_out_branches(dir: &Path) -> Result<Vec<String>> {
    let args = ["worktree", "list", "--porcelain", "-z"];
    let out = ok_or_bail(dir, "worktree list", run(dir, &args)?)?;
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter_map(|f| f.strip_prefix(b"branch refs/heads/"))
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .collect())
}

/// Every worktree of the repository of `dir` with the branch checked out there (`None`:
/// detached), as `git worktree list --porcelain` lists them.
///
/// # Errors
/// git failing.
pub fn worktrees(dir: &Path) -> Result<Vec<(PathBuf, Option<String>)>> {
    let args = ["worktree", "list", "--porcelain", "-z"];
    let out = ok_or_bail(dir, "worktree list", run(dir, &args)?)?;
    let mut found: Vec<(PathBuf, Option<String>)> = Vec::new();
    for field in out.stdout.split(|b| *b == 0) {
        if let Some(p) = field.strip_prefix(b"worktree ") {
            found.push((PathBuf::from(OsStr::from_bytes(p)), None));
        } else if let (Some(b), Some(last)) =
            (field.strip_prefix(b"branch refs/heads/"), found.last_mut())
        {
            last.1 = Some(String::from_utf8_lossy(b).into_owned());
        }
    }
    Ok(found)
}

/// `git worktree add --detach`: a new worktree at `path` at `commit`, on no branch, running
/// no hook (teamctl's scratch worktree).
///
/// # Errors
/// A driver changed, git refusing, naming why.
pub fn worktree_add_detached(repo: &At, path: &Path, commit: &str) -> Result<()> {
    diff_range(commit, None)?;
    let args = [
        OsStr::new("worktree"),
        OsStr::new("add"),
        OsStr::new("--detach"),
        OsStr::new("--quiet"),
        path.as_os_str(),
        OsStr::new(commit),
    ];
    let out = repo.output(&args)?;
    ok_or_bail(repo.dir(), "worktree add", out).map(|_| ())
}

/// Removes teamctl's own scratch worktree at `path` whatever it holds (`git worktree remove
/// --force`, then `git worktree prune`). Forced, git reads nothing in it (no status, no
/// checkout) and runs no driver, so this runs whatever the repository's config says: a queue
/// that a changed driver stopped leaves no scratch worktree behind.
///
/// # Errors
/// git refusing, naming why.
pub fn worktree_discard(repo: &Path, path: &Path) -> Result<()> {
    let args = [
        OsStr::new("worktree"),
        OsStr::new("remove"),
        OsStr::new("--force"),
        path.as_os_str(),
    ];
    let removed = At::plain(repo).output(&args)?;
    let _ = run(repo, &["worktree", "prune"]);
    ok_or_bail(repo, "worktree remove", removed).map(|_| ())
}

/// Whether git knows who commits in the worktree `at` (`user.name`, `user.email` or the
/// `GIT_*` variables).
pub fn has_identity(at: &At) -> bool {
    ["GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"]
        .iter()
        .all(|v| read_at(at, &["var", v]).is_ok_and(|o| o.status.success()))
}

/// How [`merge`] records a merge.
#[derive(Debug, Clone)]
pub struct MergeHow<'a> {
    /// The commit message.
    pub message: &'a str,
    /// One new commit with the branch's changes (`--squash`), instead of a merge commit.
    pub squash: bool,
    /// The identity to commit as when git knows none (`name`, `email`).
    pub identity: Option<(&'a str, &'a str)>,
}

/// What [`merge`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merged {
    /// A new commit.
    Commit(String),
    /// Nothing to merge: the commit is in `HEAD` already.
    UpToDate,
    /// The merge conflicted in these files, and was taken back.
    Conflict(Vec<String>),
}

/// Merges `commit` into `HEAD` of the worktree `at` (teamctl's scratch worktree): a merge
/// commit (`--no-ff`), or one squashed commit, running no hook. A conflict is taken back (`git
/// reset --hard`) and its files named.
///
/// # Errors
/// A driver changed, git failing otherwise than by a conflict.
pub fn merge(at: &At, commit: &str, how: &MergeHow) -> Result<Merged> {
    diff_range(commit, None)?;
    let before = head_at(at)?;
    if is_ancestor_at(at, commit, &before)? {
        return Ok(Merged::UpToDate);
    }
    let mut args: Vec<String> = Vec::new();
    if let Some((name, email)) = how.identity {
        args.extend(["-c".into(), format!("user.name={name}")]);
        args.extend(["-c".into(), format!("user.email={email}")]);
    }
    let mut merge = args.clone();
    merge.extend(["merge", "--no-edit", "--quiet", "--no-rerere-autoupdate"].map(String::from));
    if how.squash {
        merge.push("--squash".into());
    } else {
        merge.extend(["--no-ff", "-m", how.message].map(String::from));
    }
    merge.push(commit.into());
    let refs: Vec<&str> = merge.iter().map(String::as_str).collect();
    let out = run_at(at, &refs)?;
    if !out.status.success() {
        let files = conflicted(at)?;
        reset_hard(at, &before)?;
        if files.is_empty() {
            bail!("git merge of {commit} failed: {}", stderr_line(&out));
        }
        return Ok(Merged::Conflict(files));
    }
    if how.squash {
        let staged = [&DIFF[..], &["--cached", "--quiet"]].concat();
        if run_at(at, &staged)?.status.success() {
            return Ok(Merged::UpToDate);
        }
        let mut commit_args = args;
        commit_args
            .extend(["commit", "--quiet", "--no-verify", "-m", how.message].map(String::from));
        let refs: Vec<&str> = commit_args.iter().map(String::as_str).collect();
        if let Err(e) = ok_or_bail(at.dir(), "commit", run_at(at, &refs)?) {
            reset_hard(at, &before)?;
            return Err(e);
        }
    }
    Ok(Merged::Commit(head_at(at)?))
}

/// The files left unmerged by a merge in the worktree `at`.
fn conflicted(at: &At) -> Result<Vec<String>> {
    let args = [&DIFF[..], &["--name-only", "-z", "--diff-filter=U"]].concat();
    let out = ok_or_bail(at.dir(), "diff", run_at(at, &args)?)?;
    let mut files: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    files.dedup();
    Ok(files)
}

/// `git reset --hard` of the worktree `at` (teamctl's scratch worktree) to `commit`, and its
/// untracked files removed (`git clean -fd`; ignored ones, such as a build's cache, kept), so
/// that what a check left cannot stop a merge or change the next check.
///
/// # Errors
/// A driver changed, or git failing.
pub fn reset_hard(at: &At, commit: &str) -> Result<()> {
    diff_range(commit, None)?;
    let out = run_at(at, &["reset", "--hard", "--quiet", commit, "--"])?;
    ok_or_bail(at.dir(), "reset", out)?;
    let out = run_at(at, &["clean", "-fdq", "--"])?;
    ok_or_bail(at.dir(), "clean", out).map(|_| ())
}

/// Points branch `name` at `new`, only if it still points at `old` (`None`: only if it does
/// not exist yet): `git update-ref`, which checks and moves in one step.
///
/// # Errors
/// An invalid name, the branch moved meanwhile, or git failing.
pub fn update_branch(dir: &Path, name: &str, new: &str, old: Option<&str>) -> Result<()> {
    branch_name(dir, name)?;
    diff_range(new, old)?;
    let r = format!("refs/heads/{name}");
    let zero = "0".repeat(new.len());
    let old = old.unwrap_or(&zero);
    let args = ["update-ref", "-m", "teamctl merge", &r, new, old];
    ok_or_bail(dir, "update-ref", run(dir, &args)?).map(|_| ())
}

/// The last commit's subject lines from `from` to `to`, oldest first (at most `max`).
///
/// # Errors
/// An unknown commit, or git failing.
pub fn subjects(dir: &Path, from: &str, to: &str, max: usize) -> Result<Vec<String>> {
    diff_range(from, Some(to))?;
    let range = format!("{from}..{to}");
    let n = format!("--max-count={max}");
    let args = [
        "log",
        "--reverse",
        "--no-color",
        "--format=%s",
        &n,
        &range,
        "--",
    ];
    let out = ok_or_bail(dir, "log", run(dir, &args)?)?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect())
}

/// Lines added and deleted in `files` (binary files, which have no line counts, aside), and
/// how many files are binary.
pub fn totals(files: &[NumStat]) -> (u64, u64, usize) {
    files
        .iter()
        .fold((0, 0, 0), |(a, d, b), f| match (f.added, f.deleted) {
            (Some(x), Some(y)) => (a + x, d + y, b),
            _ => (a, d, b + 1),
        })
}

/// `files` as a diffstat for people, one `+added -deleted  path` line each (`bin` for a binary
/// file's counts), at most `max` lines and then how many more. Paths are as git gives them:
/// the caller escapes the text for where it goes.
pub fn stat_text(files: &[NumStat], max: usize) -> String {
    let n = |v: Option<u64>| v.map_or_else(|| "bin".to_string(), |v| v.to_string());
    let mut out = String::new();
    for f in files.iter().take(max) {
        out.push_str(&format!("+{} -{}  {}\n", n(f.added), n(f.deleted), f.path));
    }
    if files.len() > max {
        out.push_str(&format!("… and {} more file(s)\n", files.len() - max));
    }
    out
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

    #[test]
    fn numstat_counts_text_and_binary_files() {
        let raw = b"3\t1\tsrc/a b.rs\0-\t-\timg.png\0";
        assert_eq!(
            parse_numstat(raw),
            [
                NumStat {
                    path: "src/a b.rs".into(),
                    added: Some(3),
                    deleted: Some(1)
                },
                NumStat {
                    path: "img.png".into(),
                    added: None,
                    deleted: None
                }
            ]
        );
    }
}
