//! `teamctl merge`: a merge queue that never touches the person's checkout. The teammates'
//! branches are merged one by one in a scratch worktree of teamctl's own
//! (`<data dir>/merges/<team>-<pid>-<hex>`, detached, removed after), starting from BRANCH (or
//! from the team's base when BRANCH does not exist yet); a conflict is taken back and its
//! member set aside. The check then runs on the result; when it fails, the first member whose
//! merge makes it fail is found by bisecting the merges (each step known to pass is not run
//! again), set aside, the members after it merged again, and the check run again. Only at the
//! end is BRANCH moved, with `git update-ref` from the commit it pointed at when the queue
//! started (so a BRANCH moved meanwhile is an error, not lost work), once it is seen again not
//! to be checked out in any worktree (one made while the queue ran).

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde::Serialize;

use super::Source;
use super::check::{self, Check, CheckRun};
use super::runs_code::runs_code;
use crate::host::git::{self, At, MergeHow, Merged};
use crate::observe::worktree::{at, repo_at};
use crate::team::data_dir;
use crate::team::lead::Worktree;

/// How each member's work lands on the branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// A merge commit per member (`git merge --no-ff`).
    Merge,
    /// One new commit per member with its branch's changes (`git merge --squash`).
    Squash,
}

/// What to merge, where, and how.
pub struct Request<'a> {
    /// The team (names the scratch worktree).
    pub team: &'a str,
    /// The members, in the order to merge them.
    pub sources: Vec<Source>,
    /// The branch to merge into.
    pub into: &'a str,
    /// The check, a command line for `sh -c`, and its time limit.
    pub check: Option<Check<'a>>,
    /// How.
    pub strategy: Strategy,
    /// Merge in the scratch worktree only: no check is run and no branch moved.
    pub dry_run: bool,
    /// teamctl's data dir (the scratch worktree goes in its `merges` folder).
    pub data_dir: &'a Path,
    /// Told each step, for a progress line.
    pub progress: &'a dyn Fn(&str),
    /// Asked before each step: `true` stops the queue (an interrupt) with nothing moved.
    pub stop: &'a dyn Fn() -> bool,
}

/// What became of one member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Its work is on the branch (with `--dry-run`: would be).
    Merged,
    /// Nothing to merge: its branch has no commit the branch lacks.
    UpToDate,
    /// Set aside: its merge conflicted (the files are named).
    Conflict,
    /// Set aside: merging it made the check fail.
    CheckFailed,
    /// Set aside: its branch is gone.
    Missing,
}

/// One member's place in the queue (`merge --json` `members[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemberResult {
    /// Its name.
    pub name: String,
    /// Its branch.
    pub branch: String,
    /// The commit its branch pointed at, which is what was merged (`None`: the branch is gone).
    pub commit: Option<String>,
    /// What became of it.
    pub status: Status,
    /// The commit its merge made on the branch (`None` unless merged).
    pub merged_as: Option<String>,
    /// The files its merge conflicted in.
    pub conflicts: Vec<String>,
    /// The check run that failed with its merge (exit code and last lines).
    pub check: Option<CheckRun>,
    /// Its worktree's uncommitted changes (tracked or untracked), which were not merged.
    pub uncommitted: Vec<String>,
    /// The files its branch changes that run code for the person once it lands
    /// ([`super::runs_code`]).
    pub runs_code: Vec<String>,
}

impl MemberResult {
    /// Whether it was set aside (a conflict, a failed check, its branch gone).
    pub fn set_aside(&self) -> bool {
        matches!(
            self.status,
            Status::Conflict | Status::CheckFailed | Status::Missing
        )
    }
}

/// What the queue did (`merge --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The branch merged into.
    pub into: String,
    /// The team's base (where the branch was made from when it did not exist).
    pub base: String,
    /// Where the branch pointed before (`None`: it did not exist).
    pub before: Option<String>,
    /// Where it points now (with `--dry-run`: would point).
    pub after: String,
    /// Whether nothing was moved.
    pub dry_run: bool,
    /// How.
    pub strategy: Strategy,
    /// The check's command line.
    pub check: Option<String>,
    /// How many times the check ran.
    pub checks_run: u32,
    /// Each member, in the order merged.
    pub members: Vec<MemberResult>,
    /// What the person should know (a commit identity teamctl supplied, …).
    pub warnings: Vec<String>,
}

/// Runs the queue `req` describes.
///
/// # Errors
/// An invalid or checked-out BRANCH, members of different repositories, git failing otherwise
/// than by a conflict, the check failing before any member is merged, BRANCH moved meanwhile.
pub fn merge(req: &Request) -> Result<Outcome> {
    let first = common(&req.sources)?;
    let (repo, base) = (PathBuf::from(&first.repo), first.base.clone());
    guard(&repo, req)?;
    let looks = req
        .sources
        .iter()
        .map(first_look)
        .collect::<Result<Vec<_>>>()?;
    let before = git::branch_commit(&repo, req.into);
    let start = before.clone().unwrap_or_else(|| base.clone());
    let home = repo_at(first);
    let (scratch, log) = scratch_path(req, &repo)?;
    (req.progress)(&format!("merging in {}", scratch.display()));
    git::worktree_add_detached(&home, &scratch, &start)?;
    let result = At::worktree(&repo, &scratch, first.drivers.as_ref())
        .and_then(|place| run_queue(req, &place, &log, &start, looks));
    let discarded = git::worktree_discard(&repo, &scratch);
    let _ = std::fs::remove_file(&log);
    let (members, checks_run, after, warnings) = result?;
    discarded?;
    if (req.stop)() {
        bail!("interrupted: {} not moved", req.into);
    }
    if !req.dry_run && before.as_deref() != Some(after.as_str()) {
        // A worktree made while the queue ran may have BRANCH checked out now.
        if checked_out(&repo, req.into)? {
            bail!(
                "{} is checked out in a worktree now (it was not when the queue started): not \
                 moved, as its files would change under whoever has it; merge again once it is \
                 not, or into another branch",
                req.into
            );
        }
        git::update_branch(&repo, req.into, &after, before.as_deref())?;
    }
    Ok(Outcome {
        into: req.into.to_string(),
        base,
        before,
        after,
        dry_run: req.dry_run,
        strategy: req.strategy,
        check: req.check.map(|c| c.command.to_string()),
        checks_run,
        members,
        warnings,
    })
}

type QueueResult = (Vec<MemberResult>, u32, String, Vec<String>);

fn run_queue(
    req: &Request,
    dir: &At,
    log: &Path,
    start: &str,
    looks: Vec<MemberResult>,
) -> Result<QueueResult> {
    let mut warnings = Vec::new();
    let identity = if git::has_identity(dir) {
        None
    } else {
        warnings.push(
            "git knows no user.name/user.email here: the merge commits are made as teamctl \
             <teamctl@localhost>"
                .to_string(),
        );
        Some(("teamctl", "teamctl@localhost"))
    };
    let mut q = Queue {
        req,
        dir,
        log,
        identity,
        start: start.to_string(),
        chain: Vec::new(),
        results: looks,
        checks: 0,
    };
    let all: Vec<usize> = (0..q.results.len()).collect();
    q.merge_each(&all)?;
    if let (Some(cmd), false) = (req.check, req.dry_run) {
        q.check_until_green(cmd)?;
    }
    let after = q.commit_at(q.chain.len()).to_string();
    for r in q.results.iter().filter(|r| r.status == Status::Merged) {
        if !r.runs_code.is_empty() {
            warnings.push(format!(
                "{}'s work changes files that run code for you once it lands: {}; read them \
                 before you use {}",
                r.name,
                r.runs_code.join(", "),
                req.into
            ));
        }
    }
    Ok((q.results, q.checks, after, warnings))
}

/// The worktree record of the first member: the repository, base and drivers the members
/// share.
fn common(sources: &[Source]) -> Result<&Worktree> {
    let Some(first) = sources.first() else {
        bail!("no member to merge");
    };
    if let Some(s) = sources.iter().find(|s| s.tree.repo != first.tree.repo) {
        bail!(
            "{} and {} work in different repositories ({} and {}): merge them one at a time",
            first.name,
            s.name,
            first.tree.repo,
            s.tree.repo
        );
    }
    Ok(&first.tree)
}

/// Whether `into` is checked out in a worktree of `repo`.
fn checked_out(repo: &Path, into: &str) -> Result<bool> {
    Ok(git::checked_out_branches(repo)?.iter().any(|b| b == into))
}

/// BRANCH must be a valid name, no member's branch, and checked out nowhere (its files would
/// change under whoever has it).
fn guard(repo: &Path, req: &Request) -> Result<()> {
    let into = req.into;
    git::branch_name(repo, into).map_err(|e| crate::error::usage(format!("{e:#}")))?;
    if let Some(s) = req.sources.iter().find(|s| s.tree.branch == into) {
        return Err(crate::error::usage(format!(
            "{into} is {}'s own branch: merge into another",
            s.name
        )));
    }
    if checked_out(repo, into)? {
        bail!(
            "{into} is checked out in a worktree: teamctl merges only into a branch nobody has \
             checked out (its files would change under them); switch that worktree to another \
             branch, or merge into a new one"
        );
    }
    Ok(())
}

/// A new scratch worktree's folder, `<data dir>/merges/<team>.<pid>.<hex>`, and its check's
/// log beside it; the ones an earlier queue of the team left when it was killed are removed
/// first.
fn scratch_path(req: &Request, repo: &Path) -> Result<(PathBuf, PathBuf)> {
    let context = || {
        format!(
            "could not make a scratch folder in {}",
            req.data_dir.display()
        )
    };
    let data =
        data_dir::private_dir(req.data_dir).map_err(|e| anyhow::anyhow!("{}: {e}", context()))?;
    let merges = data
        .sub_create("merges", 0o700)
        .map_err(|e| anyhow::anyhow!("{}: {e}", context()))?;
    sweep(repo, merges.path(), req.team);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let name = format!("{}.{}.{nanos:08x}", req.team, std::process::id());
    let dir = merges.path();
    Ok((dir.join(&name), dir.join(format!("{name}.log"))))
}

/// Removes the scratch worktrees (and logs) in `merges` of queues of `team` whose process is
/// gone (killed before it could clean up). Team names hold no dot, so `<team>.<pid>.` is
/// this team's alone.
fn sweep(repo: &Path, merges: &Path, team: &str) {
    let Ok(entries) = std::fs::read_dir(merges) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let mut parts = name.split('.');
        let (Some(t), Some(pid)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if t != team || crate::host::proc::pid_alive(pid, None) != Some(false) {
            continue;
        }
        match e.file_type() {
            Ok(k) if k.is_dir() => {
                let _ = git::worktree_discard(repo, &e.path());
            }
            Ok(k) if k.is_file() => {
                let _ = std::fs::remove_file(e.path());
            }
            _ => {}
        }
    }
}

/// A member before the queue: its branch's commit, its worktree's uncommitted changes.
///
/// # Errors
/// Its worktree is not as git made it, or a driver of its config changed (named): the queue
/// runs no git there, so it does not start.
fn first_look(s: &Source) -> Result<MemberResult> {
    let t = &s.tree;
    let commit = git::branch_commit(Path::new(&t.repo), &t.branch);
    let uncommitted = if Path::new(&t.path).is_dir() {
        at(t)
            .and_then(|place| git::uncommitted(&place))
            .map_err(|e| anyhow::anyhow!("{}'s worktree: {e:#}", s.name))?
    } else {
        Vec::new()
    };
    let changed = commit
        .as_deref()
        .and_then(|c| git::numstat(&repo_at(t), &t.base, Some(c)).ok())
        .unwrap_or_default();
    Ok(MemberResult {
        runs_code: runs_code(changed.iter().map(|f| f.path.as_str())),
        name: s.name.clone(),
        branch: t.branch.clone(),
        status: if commit.is_some() {
            Status::UpToDate
        } else {
            Status::Missing
        },
        commit,
        merged_as: None,
        conflicts: Vec::new(),
        check: None,
        uncommitted,
    })
}

/// The scratch worktree's state: the commit it started from and each merge made since.
struct Queue<'a> {
    req: &'a Request<'a>,
    dir: &'a At,
    log: &'a Path,
    identity: Option<(&'static str, &'static str)>,
    start: String,
    /// (member index, commit its merge made), in order.
    chain: Vec<(usize, String)>,
    results: Vec<MemberResult>,
    checks: u32,
}

impl Queue<'_> {
    /// The commit after the first `k` merges.
    fn commit_at(&self, k: usize) -> &str {
        if k == 0 {
            &self.start
        } else {
            &self.chain[k - 1].1
        }
    }

    /// Merges the members `idx` onto the scratch worktree's `HEAD`, in order.
    fn merge_each(&mut self, idx: &[usize]) -> Result<()> {
        for &i in idx {
            self.stop_here()?;
            let r = &self.results[i];
            let Some(commit) = r.commit.clone() else {
                (self.req.progress)(&format!("{}: branch {} is gone", r.name, r.branch));
                continue;
            };
            let verb = match self.req.strategy {
                Strategy::Merge => "Merge",
                Strategy::Squash => "Squash",
            };
            let message = format!(
                "{verb} branch '{}' ({}) into {}",
                r.branch, r.name, self.req.into
            );
            let how = MergeHow {
                message: &message,
                squash: self.req.strategy == Strategy::Squash,
                identity: self.identity,
            };
            let merged = git::merge(self.dir, &commit, &how)?;
            let r = &mut self.results[i];
            r.merged_as = None;
            match merged {
                Merged::Commit(c) => {
                    (self.req.progress)(&format!("{}: merged", r.name));
                    r.status = Status::Merged;
                    r.merged_as = Some(c.clone());
                    self.chain.push((i, c));
                }
                Merged::UpToDate => {
                    (self.req.progress)(&format!("{}: nothing to merge", r.name));
                    r.status = Status::UpToDate;
                }
                Merged::Conflict(files) => {
                    (self.req.progress)(&format!(
                        "{}: conflict in {}, set aside",
                        r.name,
                        files.join(", ")
                    ));
                    r.status = Status::Conflict;
                    r.conflicts = files;
                }
            }
        }
        Ok(())
    }

    /// An error when the queue was told to stop.
    fn stop_here(&self) -> Result<()> {
        if (self.req.stop)() {
            bail!(
                "interrupted: the scratch worktree is removed and {} not moved",
                self.req.into
            );
        }
        Ok(())
    }

    /// Runs the check after the first `k` merges.
    fn check_at(&mut self, k: usize, cmd: Check) -> Result<CheckRun> {
        self.stop_here()?;
        let commit = self.commit_at(k).to_string();
        git::reset_hard(self.dir, &commit)?;
        self.checks += 1;
        (self.req.progress)(&format!(
            "check {} on {} merge(s): {}",
            self.checks, k, cmd.command
        ));
        let run = check::run(self.dir.dir(), cmd, self.log, self.req.stop)?;
        // A check ended by the interrupt says nothing about the merges.
        self.stop_here()?;
        Ok(run)
    }

    /// Checks the merged result; while it fails, bisects the merges not known to pass for the
    /// first that fails, sets its member aside and merges the members after it again.
    fn check_until_green(&mut self, cmd: Check) -> Result<()> {
        // The first `good` merges are known to pass (0: not even the start is known).
        let mut good = 0;
        let mut start_passes = false;
        // Nothing merged (any more): the branch stays as it was, whatever the check says.
        while self.chain.len() > good {
            let n = self.chain.len();
            let at_tip = self.check_at(n, cmd)?;
            if at_tip.passed {
                break;
            }
            let (mut lo, mut hi, mut failed) = (good, n, at_tip);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                let run = self.check_at(mid, cmd)?;
                if run.passed {
                    lo = mid;
                } else {
                    (hi, failed) = (mid, run);
                }
            }
            if lo == 0 && !start_passes {
                let run = self.check_at(0, cmd)?;
                if !run.passed {
                    bail!(
                        "the check fails before any member is merged (exit code {}), so it \
                         cannot tell whose merge breaks it; its last lines: {}",
                        run.exit_code
                            .map_or_else(|| "none: a signal".to_string(), |c| c.to_string()),
                        run.output.join(" | ")
                    );
                }
            }
            self.set_aside_at(hi, failed)?;
            good = hi - 1;
            start_passes = true;
        }
        let tip = self.commit_at(self.chain.len()).to_string();
        git::reset_hard(self.dir, &tip)
    }

    /// Sets aside the member of the `k`-th merge (from 1), whose check run `failed`, and merges
    /// the members after it again on the merges before it.
    fn set_aside_at(&mut self, k: usize, failed: CheckRun) -> Result<()> {
        let rest: Vec<usize> = self.chain[k..].iter().map(|(i, _)| *i).collect();
        let (i, _) = self.chain[k - 1].clone();
        self.chain.truncate(k - 1);
        let r = &mut self.results[i];
        (self.req.progress)(&format!(
            "{}: the check fails with its merge (exit code {}), set aside",
            r.name,
            failed
                .exit_code
                .map_or_else(|| "none".to_string(), |c| c.to_string())
        ));
        r.status = Status::CheckFailed;
        r.merged_as = None;
        r.check = Some(failed);
        let back = self.commit_at(k - 1).to_string();
        git::reset_hard(self.dir, &back)?;
        self.merge_each(&rest)
    }
}
