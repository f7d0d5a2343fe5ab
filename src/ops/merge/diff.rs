//! `teamctl diff`: each teammate's work against the commit its worktree started from, as
//! `git diff` counts it: committed and uncommitted changes to tracked files, and the untracked
//! files listed. A worktree whose folder is gone is read from its branch (committed work only).

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use super::Source;
use super::runs_code::runs_code;
use crate::host::git::{self, NumStat};
use crate::observe::worktree::{at, repo_at};
use crate::team::lead::Worktree;

/// What to show besides the counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// The counts only.
    Counts,
    /// `git diff --stat`'s text.
    Stat,
    /// The patch.
    Patch,
}

/// One teammate's work (`diff --json` `members[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemberDiff {
    /// Its name.
    pub name: String,
    /// Its branch.
    pub branch: String,
    /// The commit its worktree started from.
    pub base: String,
    /// The commit its branch points at (`None`: the branch is gone).
    pub tip: Option<String>,
    /// Its worktree's folder (`None`: the folder is gone; then only committed work is counted).
    pub path: Option<String>,
    /// Commits on its branch since the base.
    pub commits: Option<u64>,
    /// Tracked files that differ from the base, committed or not, as `git diff --numstat`
    /// counts them (`added`/`deleted` null for a binary file).
    pub files: Vec<NumStat>,
    /// Untracked files in its worktree (ignored ones aside).
    pub untracked: Vec<String>,
    /// Those of its files (tracked or untracked) that run code for the person once its work
    /// lands: Claude Code's `.claude/` and `.mcp.json`, CI workflows, git hook managers, …
    /// ([`super::runs_code`]).
    pub runs_code: Vec<String>,
    /// Whether it has uncommitted changes (tracked or untracked); `None` without a worktree.
    pub uncommitted: Option<bool>,
    /// `git diff --stat` or the patch, when asked for.
    pub text: Option<String>,
    /// Why it could not be read (then the other fields say what could be).
    pub error: Option<String>,
}

/// The work of each of `sources`, in their order.
pub fn read(sources: &[Source], detail: Detail) -> Vec<MemberDiff> {
    sources.iter().map(|s| one(s, detail)).collect()
}

fn one(s: &Source, detail: Detail) -> MemberDiff {
    let t = &s.tree;
    let here = Path::new(&t.path).is_dir().then(|| t.path.clone());
    let mut d = MemberDiff {
        name: s.name.clone(),
        branch: t.branch.clone(),
        base: t.base.clone(),
        tip: git::branch_commit(Path::new(&t.repo), &t.branch),
        path: here.clone(),
        commits: None,
        files: Vec::new(),
        untracked: Vec::new(),
        runs_code: Vec::new(),
        uncommitted: None,
        text: None,
        error: None,
    };
    if let Err(e) = fill(&mut d, t, detail) {
        d.error = Some(format!("{e:#}"));
    }
    let paths = d.files.iter().map(|f| f.path.as_str());
    d.runs_code = runs_code(paths.chain(d.untracked.iter().map(String::as_str)));
    d
}

fn fill(d: &mut MemberDiff, tree: &Worktree, detail: Detail) -> Result<()> {
    let tip = d.tip.clone();
    if let Some(tip) = &tip {
        d.commits = Some(git::commits_between(Path::new(&tree.repo), &d.base, tip)?);
    }
    // The worktree holds committed work and what is not committed yet; without it, the branch.
    let (place, to) = match (&d.path, &tip) {
        (Some(_), _) => (at(tree)?, None),
        (None, Some(tip)) => (repo_at(tree), Some(tip.as_str())),
        (None, None) => anyhow::bail!("its worktree and its branch {} are both gone", d.branch),
    };
    d.files = git::numstat(&place, &d.base, to)?;
    if d.path.is_some() {
        d.untracked = git::untracked(&place)?;
        let pending = git::uncommitted(&place).context("could not tell its uncommitted changes")?;
        d.uncommitted = Some(!pending.is_empty());
    }
    d.text = match detail {
        Detail::Counts => None,
        Detail::Stat => Some(git::diff_text(&place, &d.base, to, true)?),
        Detail::Patch => Some(git::diff_text(&place, &d.base, to, false)?),
    };
    Ok(())
}
