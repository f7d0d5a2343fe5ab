//! The team's work brought home: each teammate's worktree against the commit it started from
//! ([`diff`]), and a merge queue that lands their branches on one branch in a scratch worktree
//! of teamctl's own, checking the result and setting aside what conflicts or breaks the check
//! ([`queue`], [`check`]); both name apart the files that run code for the person once a
//! branch lands ([`runs_code`]). Only the worktrees teamctl's private record of the team names are
//! looked at, never a folder or branch a teammate wrote into `config.json`.
//! It imports the layers below ops (observe, team, host, store).

pub mod check;
pub mod diff;
pub mod pr;
pub mod queue;
pub mod runs_code;

use std::path::Path;
use std::time::SystemTime;

use anyhow::{Context, Result};

use crate::error::usage;
use crate::observe::worktree::fetch_home;
use crate::store::paths::Layout;
use crate::team::config::Team;
use crate::team::lead::Worktree;
use crate::team::tasks::Board;

/// A teammate with a worktree of its own, as teamctl's record names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// Its name.
    pub name: String,
    /// Its worktree: folder, branch, repository, the commit it started from.
    pub tree: Worktree,
}

/// The teammates of `team` with a worktree, in the team's order; with `names`, those (each
/// must be one), in the order named.
///
/// # Errors
/// A usage error (exit 2): a team teamctl does not lead, one with no worktree teammate, or a
/// name that is not one of them.
pub fn sources(team: &Team, names: &[String]) -> Result<Vec<Source>> {
    let Some(launch) = team.lead.as_ref().and_then(|r| r.launch.as_ref()) else {
        return Err(usage(format!(
            "team '{}' was not made by teamctl create here: teamctl knows no worktree of its \
             teammates",
            team.name
        )));
    };
    let all: Vec<Source> = launch
        .members
        .iter()
        .filter_map(|m| {
            Some(Source {
                name: m.name.clone(),
                tree: m.worktree.clone()?,
            })
        })
        .collect();
    if all.is_empty() {
        return Err(usage(format!(
            "no teammate of team '{}' has a worktree (worktree = true in the team file)",
            team.name
        )));
    }
    bring_home(&all)?;
    if names.is_empty() {
        return Ok(all);
    }
    let mut out = Vec::new();
    for n in names {
        let Some(s) = all.iter().find(|s| &s.name == n) else {
            let known: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
            return Err(usage(format!(
                "'{n}' is not a teammate of team '{}' with a worktree (those: {})",
                team.name,
                known.join(", ")
            )));
        };
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    Ok(out)
}

/// Where each teammate's branch is: a worktree's is in the repository; a sandboxed teammate's
/// own clone holds its branch, which is fetched home into the repository first, so that
/// everything after reads the repository alone.
///
/// # Errors
/// A clone whose branch could not be fetched, named.
fn bring_home(all: &[Source]) -> Result<()> {
    for s in all.iter().filter(|s| s.tree.clone.is_some()) {
        if Path::new(&s.tree.path).is_dir() {
            fetch_home(&s.tree).with_context(|| format!("{}'s sandbox clone", s.name))?;
        }
    }
    Ok(())
}

/// Checks, before anything waits, that `team`'s worktree teammates can be merged onto `into`:
/// it has some, and `into` is a branch name teamctl takes ([`crate::host::git::branch_name`]).
///
/// # Errors
/// A usage error (exit 2), naming why.
pub fn can_merge_into(team: &Team, into: &str) -> Result<()> {
    let all = sources(team, &[])?;
    let repo = Path::new(&all[0].tree.repo);
    crate::host::git::branch_name(repo, into).map_err(|e| usage(format!("{e:#}")))
}

/// `sources` in the order their tasks were completed: by when each teammate's last completed
/// task file was last written (task files record no completion time), those with no completed
/// task after, in the team's order.
pub fn by_completion(layout: &Layout, team: &Team, sources: Vec<Source>) -> Vec<Source> {
    let board = Board::load(&layout.tasks_dir(&team.name)).ok();
    let done_at = |name: &str| -> Option<SystemTime> {
        board
            .as_ref()?
            .tasks
            .iter()
            .filter(|t| t.status == "completed" && t.owner.as_deref() == Some(name))
            .filter_map(|t| modified(&t.path))
            .max()
    };
    let mut keyed: Vec<(Option<SystemTime>, usize, Source)> = sources
        .into_iter()
        .enumerate()
        .map(|(i, s)| (done_at(&s.name), i, s))
        .collect();
    keyed.sort_by_key(|(t, i, _)| (t.is_none(), *t, *i));
    keyed.into_iter().map(|(_, _, s)| s).collect()
}

fn modified(path: &Path) -> Option<SystemTime> {
    path.symlink_metadata().ok()?.modified().ok()
}
