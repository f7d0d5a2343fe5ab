//! A teammate's own git worktree as it is now: where it is, its branch, how many files differ
//! from the commit it started from ([`crate::host::git`]). Only worktrees teamctl's private
//! record of the team names are looked at, never a folder a teammate wrote into `config.json`.
//! A sandboxed teammate's branch lives in its own clone until [`fetch_home`] brings it into
//! the repository (what `diff`, `merge` and `delete` do first).

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::host::git;
use crate::team::config::Team;
use crate::team::lead::Worktree;

/// A teammate's worktree (`status --json` members' `worktree`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorktreeStatus {
    /// Its folder.
    pub path: String,
    /// Its branch as recorded (the branch checked out now, when git can tell).
    pub branch: String,
    /// Files that differ from the commit it started from: committed, staged or not, and new
    /// untracked files (`null`: git could not tell, e.g. the folder is gone).
    pub changed: Option<u64>,
}

impl WorktreeStatus {
    /// Reads the worktree `tree` with git (nothing when its folder is gone, or it is not as
    /// git made it: then its recorded branch, and `changed` unknown).
    pub fn read(tree: &Worktree) -> WorktreeStatus {
        let place = Path::new(&tree.path)
            .is_dir()
            .then(|| at(tree).ok())
            .flatten();
        WorktreeStatus {
            path: tree.path.clone(),
            branch: place
                .as_ref()
                .and_then(git::current_branch)
                .unwrap_or_else(|| tree.branch.clone()),
            changed: place
                .as_ref()
                .and_then(|at| git::changed_since(at, &tree.base).ok()),
        }
    }
}

/// Where git runs over `tree`'s work: its worktree, found as `git worktree add` made it, or a
/// sandboxed teammate's own clone, found as teamctl made it; the drivers checked against those
/// recorded when it was made ([`git::At`]).
///
/// # Errors
/// The worktree or clone is not as git or teamctl made it (named), or git failing.
pub fn at(tree: &Worktree) -> anyhow::Result<git::At> {
    let (repo, path) = (Path::new(&tree.repo), Path::new(&tree.path));
    match tree.clone {
        None => git::At::worktree(repo, path, tree.drivers.as_ref()),
        Some(_) => git::At::clone(repo, path, tree.drivers.as_ref()),
    }
}

/// The repository `tree` belongs to, its drivers checked against those recorded when the
/// worktree was made ([`git::At`]).
pub fn repo_at(tree: &Worktree) -> git::At {
    git::At::repo(Path::new(&tree.repo), tree.drivers.as_ref())
}

/// Brings a sandboxed teammate's branch home from its own clone into the repository, as the
/// same branch (nothing for a worktree of the repository, whose branch is there already): the
/// clone found as teamctl made it, the fetch run in the repository ([`at`], [`repo_at`]).
/// Returns the branch's commit.
///
/// # Errors
/// The clone not as teamctl made it, git refusing (the clone gone, a branch it did not make
/// rewritten), naming the clone.
pub fn fetch_home(t: &Worktree) -> anyhow::Result<Option<String>> {
    let Some(c) = &t.clone else { return Ok(None) };
    let clone = at(t)?;
    crate::host::sandbox::clone::fetch(&repo_at(t), &clone, &t.branch, c.new_branch).map(Some)
}

/// The worktrees of `team`'s teammates, by name, as teamctl's record names them (none for a
/// team teamctl does not lead).
pub fn of_team(team: &Team) -> HashMap<String, WorktreeStatus> {
    let Some(launch) = team.lead.as_ref().and_then(|r| r.launch.as_ref()) else {
        return HashMap::new();
    };
    launch
        .members
        .iter()
        .filter_map(|m| Some((m.name.clone(), WorktreeStatus::read(m.worktree.as_ref()?))))
        .collect()
}
