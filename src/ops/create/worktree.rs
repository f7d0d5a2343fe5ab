//! A git worktree per teammate: where it goes, on which branch, made with `git worktree add`
//! before the team's files are written, and taken back when the create fails before its
//! teammates start (`delete` takes down the worktrees of a team that started:
//! [`crate::ops::delete::take_down`]).
//!
//! The worktrees live in teamctl's data dir (`<data dir>/worktrees/<team>.<16 hex>/<member>`,
//! [`Leads::worktrees_dir`]), never in the user's checkout: its `git status`, its searches and
//! its builds do not see the teammates' copies, and teamctl writes nowhere the user did not
//! name. Each is on its own branch, `teamctl/<team>/<member>` unless the team file names one,
//! made from the working directory's `HEAD`.
//!
//! A sandboxed teammate gets its own clone instead (`git clone --shared`: the repository's
//! objects borrowed read-only; [`crate::host::sandbox::clone`]), at the same place and on the
//! same branch: it commits there without writing the repository, and teamctl fetches its
//! branch home (`observe::worktree::fetch_home`) before `diff`, `merge` and `delete` read it.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde::Serialize;

use super::spec::{Branch, Spec};
use crate::error::usage;
use crate::host::claude::Dialog;
use crate::host::git;
use crate::host::sandbox::clone;
use crate::observe::worktree::{at, repo_at};
use crate::ops::prepare;
use crate::store::paths::Layout;
use crate::team::lead::{Leads, OwnClone, Worktree};

/// One teammate's worktree, as planned (and, once `make` ran, made).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Planned {
    /// Where, on which branch, from which commit, in which repository.
    pub tree: Worktree,
    /// Whether the branch is new (else an existing branch is checked out).
    pub new_branch: bool,
}

/// The teammates' worktrees, in member order (`None`: the teammate runs in the team's
/// working directory).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trees(pub Vec<Option<Planned>>);

impl Trees {
    /// The `i`-th teammate's worktree, if it has one.
    pub fn get(&self, i: usize) -> Option<&Planned> {
        self.0.get(i).and_then(Option::as_ref)
    }

    /// Where the `i`-th teammate of `spec` runs: its worktree, or the team's working
    /// directory.
    pub fn cwd<'a>(&'a self, spec: &'a Spec, i: usize) -> &'a Path {
        match self.get(i) {
            Some(p) => Path::new(&p.tree.path),
            None => &spec.cwd,
        }
    }

    /// Whether any teammate has a worktree.
    pub fn any(&self) -> bool {
        self.0.iter().any(Option::is_some)
    }
}

/// Plans the worktrees `spec` asks for, writing nothing: the working directory must be in a
/// git repository with a commit, each branch name valid, a default branch not taken yet (one
/// an earlier team of that name left: `delete` keeps branches), and each folder free.
///
/// # Errors
/// A usage error naming the problem (exit 2), before anything is written.
pub fn plan(layout: &Layout, leads: &Leads, spec: &Spec) -> Result<Trees> {
    if spec.members.iter().all(|m| m.worktree.is_none()) {
        return Ok(Trees(vec![None; spec.members.len()]));
    }
    let repo = git::toplevel(&spec.cwd).map_err(|e| usage(format!("{e:#}")))?;
    let base = git::head(&spec.cwd).map_err(|e| usage(format!("{e:#}")))?;
    // The drivers git may run over the teammates' work from now on: the repository's own as
    // they are before any teammate starts.
    let drivers = git::drivers(&repo)?;
    let root = leads.worktrees_dir(layout, &spec.team);
    let mut out = Vec::new();
    let mut branches: Vec<String> = Vec::new();
    let checked_out = git::checked_out_branches(&repo).unwrap_or_default();
    for m in &spec.members {
        let Some(wish) = &m.worktree else {
            out.push(None);
            continue;
        };
        let (branch, exists) = match wish {
            Branch::Default => {
                let b = format!("teamctl/{}/{}", spec.team, m.name);
                if git::branch_exists(&repo, &b)? {
                    return Err(usage(format!(
                        "branch {b} exists already (left by an earlier team '{}'?): name the \
                         team otherwise, give {} a branch of its own (worktree = \"NAME\"), or \
                         remove it with `git branch -D {b}`",
                        spec.team, m.name
                    )));
                }
                (b, false)
            }
            Branch::Named(b) => {
                if !git::valid_branch(&repo, b) {
                    return Err(usage(format!(
                        "member '{}': '{b}' is not a valid branch name",
                        m.name
                    )));
                }
                (b.clone(), git::branch_exists(&repo, b)?)
            }
        };
        if branches.contains(&branch) {
            return Err(usage(format!(
                "branch {branch} is given to two teammates: a branch is checked out in one \
                 worktree at a time"
            )));
        }
        branches.push(branch.clone());
        if m.sandbox.is_some() && checked_out.contains(&branch) {
            return Err(usage(format!(
                "member '{}': branch {branch} is checked out in a worktree of {}; a sandboxed \
                 teammate works on a branch of its own clone, fetched home into the repository: \
                 give it another branch",
                m.name,
                repo.display()
            )));
        }
        let path = root.join(m.name.as_str());
        if path.symlink_metadata().is_ok() {
            bail!(
                "{} exists already (a worktree an earlier team '{}' kept?); remove it with \
                 `git worktree remove` or name the team otherwise",
                path.display(),
                spec.team
            );
        }
        out.push(Some(Planned {
            tree: Worktree {
                path: text(&path),
                branch,
                repo: text(&repo),
                base: base.clone(),
                drivers: Some(drivers.clone()),
                clone: m.sandbox.as_ref().map(|_| OwnClone {
                    new_branch: !exists,
                }),
            },
            new_branch: !exists,
        }));
    }
    Ok(Trees(out))
}

fn text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Makes the planned worktrees (`git worktree add`); on a failure, takes back those it made.
///
/// # Errors
/// git refusing, naming the worktree.
pub fn make(leads: &Leads, trees: &Trees) -> Result<()> {
    let mut made: Vec<&Planned> = Vec::new();
    for p in trees.0.iter().flatten() {
        let path = PathBuf::from(&p.tree.path);
        if let Some(parent) = path.parent() {
            // Inside teamctl's private data dir, never through a link.
            leads.prepare()?;
            if let Err(e) = leads.make_below(parent) {
                unmake(&made);
                return Err(e);
            }
        }
        let repo = Path::new(&p.tree.repo);
        let base = p.new_branch.then_some(p.tree.base.as_str());
        let drivers = p.tree.drivers.as_ref();
        let done = match (&p.tree.clone, base) {
            (None, _) => git::worktree_add(repo, &path, &p.tree.branch, base),
            (Some(_), Some(b)) => clone::make(repo, &path, &p.tree.branch, b, drivers),
            (Some(_), None) => match git::branch_commit(repo, &p.tree.branch) {
                Some(tip) => clone::make(repo, &path, &p.tree.branch, &tip, drivers),
                None => Err(anyhow::anyhow!("branch {} is gone", p.tree.branch)),
            },
        };
        if let Err(e) = done {
            unmake(&made);
            return Err(e);
        }
        made.push(p);
    }
    Ok(())
}

/// Takes back worktrees [`make`] made for a create that failed before its teammates started:
/// they hold nothing but their start, and the branches made for them point at it.
pub fn unmake(made: &[&Planned]) {
    for p in made {
        if p.tree.clone.is_some() {
            // A clone holds nothing but its start, and its branch never reached the repository.
            let _ = std::fs::remove_dir_all(&p.tree.path);
            continue;
        }
        let removed = at(&p.tree)
            .and_then(|tree| git::worktree_remove(&repo_at(&p.tree), &tree))
            .is_ok();
        if removed && p.new_branch {
            let _ = git::branch_delete(Path::new(&p.tree.repo), &p.tree.branch);
        }
    }
}

/// [`unmake`] for every planned worktree.
pub fn unmake_all(trees: &Trees) {
    let all: Vec<&Planned> = trees.0.iter().flatten().collect();
    unmake(&all);
}

/// Gives each worktree the workspace trust its team's working directory has in Claude Code's
/// `.claude.json` (2.1.332 looks for trust only up to the git root, and a worktree is its own
/// root): written with [`prepare::prepare`] as `teamctl prepare --cwd` writes it, and only when
/// the working directory itself is trusted. Returns whether it was.
///
/// # Errors
/// As [`prepare::prepare`].
pub fn trust(req: &prepare::Request, spec: &Spec, trees: &Trees) -> Result<bool> {
    let only_trust = |dirs: Vec<PathBuf>| prepare::Request {
        trust: dirs,
        api_key: None,
        skip_permissions: false,
        ..req.clone()
    };
    let asked = prepare::prepare(&only_trust(vec![spec.cwd.clone()]), false)?;
    if asked.changes.iter().any(|c| c.dialog == Dialog::Trust) {
        return Ok(false);
    }
    let dirs = trees
        .0
        .iter()
        .flatten()
        .map(|p| PathBuf::from(&p.tree.path));
    prepare::prepare(&only_trust(dirs.collect()), true)?;
    Ok(true)
}
