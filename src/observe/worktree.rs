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
    /// Reads the worktree `tree` with git.
    pub fn read(tree: &Worktree) -> WorktreeStatus {
        let path = Path::new(&tree.path);
        let here = path.is_dir();
        WorktreeStatus {
            path: tree.path.clone(),
            branch: here
                .then(|| git::current_branch(path))
                .flatten()
                .unwrap_or_else(|| tree.branch.clone()),
            changed: here
                .then(|| git::changed_since(path, &tree.base).ok())
                .flatten(),
        }
    }
}

/// Brings a sandboxed teammate's branch home from its own clone into the repository, as the
/// same branch (nothing for a worktree of the repository, whose branch is there already).
/// Returns the branch's commit.
///
/// # Errors
/// git refusing (the clone gone, a branch it did not make rewritten), naming the clone.
pub fn fetch_home(t: &Worktree) -> anyhow::Result<Option<String>> {
    let Some(c) = &t.clone else { return Ok(None) };
    crate::host::sandbox::clone::fetch(
        Path::new(&t.repo),
        Path::new(&t.path),
        &t.branch,
        c.new_branch,
    )
    .map(Some)
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
