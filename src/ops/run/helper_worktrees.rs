//! The worktrees a run's lead gave its helpers (`run --merge-into`): Claude Code 2.1.332's
//! Agent tool with `isolation: "worktree"` runs the helper in a git worktree of its own,
//! `<repo>/.claude/worktrees/agent-<id>` on branch `worktree-agent-<id>`, and names nothing of
//! it in `config.json`. A worktree is taken only when git lists it at exactly that folder and
//! the lead's own session has the subagent transcript `agent-<id>.jsonl`: a folder or branch a
//! teammate made elsewhere, or another session's helper, is never merged. What is merged is the
//! branch Claude Code made for it, `worktree-agent-<id>`, whatever the worktree has checked out
//! now (a helper that switched it to another branch does not choose what is merged: the queue
//! then finds its branch without its work, or gone). The name shown is the subagent's
//! `.meta.json` `name` (untrusted: a label, escaped where shown), else `agent-<id>`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::host::git;
use crate::ops::export::{MergedMember, RunMerge};
use crate::ops::merge::Source;
use crate::ops::merge::queue;
use crate::store::dir::Loc;
use crate::team::lead::Worktree;
use crate::team::transcript::locate::subagents;

/// Where a run's helpers' work is merged from: the repository the lead works in, the commit
/// its `HEAD` named when the run started (each helper's worktree starts from it), and the
/// filter and merge drivers its own git config had then (the only ones git runs over the
/// helpers' work: [`git::At`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// The top folder of the repository of the run's `--cwd`.
    pub repo: PathBuf,
    /// The commit `HEAD` named there before the lead started.
    pub commit: String,
    /// The drivers of the repository's own config before the lead started.
    pub drivers: git::Drivers,
}

impl Base {
    /// The repository of `cwd` and its `HEAD` now, for merging onto `into` once the run is done;
    /// refused before anything starts when `into` could not be merged onto (the queue would
    /// refuse it only after the run).
    ///
    /// # Errors
    /// A usage error: `cwd` is not in a git repository, it has no commit yet, `into` is not a
    /// valid branch name or is checked out in a worktree.
    pub fn of(cwd: &Path, into: &str) -> Result<Base> {
        let usage = |e: anyhow::Error| crate::error::usage(format!("{e:#}"));
        let repo = git::toplevel(cwd).map_err(usage)?;
        let commit = git::head(&repo).map_err(usage)?;
        git::branch_name(&repo, into).map_err(usage)?;
        if git::checked_out_branches(&repo)?.iter().any(|b| b == into) {
            return Err(crate::error::usage(format!(
                "{into} is checked out in a worktree: teamctl merges only into a branch nobody \
                 has checked out; merge into a new one"
            )));
        }
        let drivers = git::drivers(&repo)?;
        Ok(Base {
            repo,
            commit,
            drivers,
        })
    }
}

/// The helpers of the lead whose transcript is `transcript` (a file below the config dir
/// `root`) that worked in a worktree of `base.repo`, in the order of their agent ids.
/// What was skipped (an unreadable subagents folder or `.meta.json`) is told in `warnings`.
///
/// # Errors
/// The transcript is not below `root`, or git failing.
pub fn worktrees(
    root: &Loc,
    transcript: &Path,
    base: &Base,
    warnings: &mut Vec<String>,
) -> Result<Vec<Source>> {
    let Ok(rel) = transcript.strip_prefix(root.path()) else {
        bail!(
            "the lead's transcript {} is not below the config dir {}",
            transcript.display(),
            root.path().display()
        );
    };
    let session = rel.iter().fold(root.clone(), |l, c| l.join(c));
    // agent id -> the name its .meta.json gives
    let mut helpers: BTreeMap<String, Option<String>> = BTreeMap::new();
    for (name, _team, loc) in subagents(&session, warnings) {
        let id = loc
            .name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".jsonl"))
            .and_then(|n| n.strip_prefix("agent-"));
        if let Some(id) = id {
            helpers.insert(id.to_string(), name);
        }
    }
    // As real paths: git records a worktree's folder as it was given (a cwd reached through
    // a symlink), and one a helper replaced by a link to elsewhere is then not below it. The
    // folders Claude Code made must be folders, not links a helper put there.
    let claude = base.repo.join(".claude");
    let real_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir());
    if !real_dir(&claude) || !real_dir(&claude.join("worktrees")) {
        return Ok(Vec::new());
    }
    let folder = std::fs::canonicalize(claude.join("worktrees"))?;
    // agent id -> its worktree, as a real path
    let mut found: BTreeMap<String, PathBuf> = BTreeMap::new();
    for (listed, _checked_out) in git::worktrees(&base.repo)? {
        let Ok(path) = std::fs::canonicalize(&listed) else {
            continue;
        };
        let id = path
            .strip_prefix(&folder)
            .ok()
            .filter(|r| r.components().count() == 1)
            .and_then(|r| r.to_str())
            .and_then(|r| r.strip_prefix("agent-"))
            .map(str::to_string);
        if let Some(id) = id.filter(|id| helpers.contains_key(id)) {
            found.insert(id, path);
        }
    }
    let mut out: Vec<Source> = Vec::new();
    for (id, path) in found {
        let name = &helpers[&id];
        let mut shown = name.clone().unwrap_or_else(|| format!("agent-{id}"));
        if out.iter().any(|s| s.name == shown) {
            shown = format!("{shown} (agent-{id})");
        }
        out.push(Source {
            name: shown,
            tree: Worktree {
                path: path.display().to_string(),
                branch: format!("worktree-agent-{id}"),
                repo: base.repo.display().to_string(),
                base: base.commit.clone(),
                drivers: Some(base.drivers.clone()),
                clone: None,
            },
        });
    }
    Ok(out)
}

/// What a run's record says of its merge onto `into` (`run --merge-into`), once the run came
/// to `state`: what the queue did (`merged`), or why nothing was merged.
pub fn recorded(
    into: &str,
    state: super::State,
    merged: &Result<Option<queue::Outcome>>,
) -> RunMerge {
    let o = match merged {
        Ok(Some(o)) => o,
        Ok(None) if state != super::State::Done => {
            return RunMerge::nothing(into, "the run was not done: nothing was merged");
        }
        Ok(None) => {
            return RunMerge::nothing(
                into,
                "nothing was merged: no helper of the lead worked in a worktree of its \
                 repository (or its transcript was not found)",
            );
        }
        Err(e) => return RunMerge::nothing(into, &format!("the merge failed: {e:#}")),
    };
    let status = |s: &queue::Status| {
        serde_json::to_value(s)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default()
    };
    RunMerge {
        into: o.into.clone(),
        before: o.before.clone(),
        after: Some(o.after.clone()),
        check: o.check.clone(),
        checks_run: o.checks_run,
        members: o
            .members
            .iter()
            .map(|m| MergedMember {
                name: m.name.clone(),
                branch: m.branch.clone(),
                status: status(&m.status),
                merged_as: m.merged_as.clone(),
                conflicts: m.conflicts.clone(),
            })
            .collect(),
        error: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .current_dir(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(ok.status.success(), "{args:?}: {ok:?}");
    }

    /// Only a worktree at `.claude/worktrees/agent-<id>` whose id is one of the lead's own
    /// subagents is taken, named by its `.meta.json`.
    #[test]
    fn takes_only_the_leads_helpers_worktrees() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        fs::create_dir(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        fs::write(repo.join("a"), "a").unwrap();
        git(&repo, &["add", "."]);
        git(&repo, &["commit", "-qm", "base"]);
        let base = Base::of(&repo, "integration").unwrap();
        assert!(Base::of(&repo, "main").is_err() && Base::of(&repo, "a..b").is_err());
        for (dir, branch) in [
            (".claude/worktrees/agent-aaa", "worktree-agent-aaa"),
            (".claude/worktrees/agent-bbb", "worktree-agent-bbb"),
            (".claude/worktrees/agent-zzz", "worktree-agent-zzz"),
            ("elsewhere/agent-ccc", "worktree-agent-ccc"),
            // Its helper switched it to another branch: its own is what counts.
            (".claude/worktrees/agent-ddd", "release"),
            (".claude/worktrees/agent-eee", "worktree-agent-eee"),
        ] {
            git(&repo, &["worktree", "add", "-q", "-b", branch, dir]);
        }
        // A helper's folder replaced by a link to elsewhere: not taken.
        let eee = repo.join(".claude/worktrees/agent-eee");
        fs::rename(&eee, tmp.path().join("moved")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("moved"), &eee).unwrap();
        let cfg = tmp.path().join("cfg");
        let subs = cfg.join("projects/p/s1/subagents");
        fs::create_dir_all(&subs).unwrap();
        fs::write(cfg.join("projects/p/s1.jsonl"), "").unwrap();
        for id in ["aaa", "bbb", "ccc", "ddd", "eee"] {
            fs::write(subs.join(format!("agent-{id}.jsonl")), "").unwrap();
        }
        fs::write(subs.join("agent-aaa.meta.json"), r#"{"name":"alice"}"#).unwrap();
        let root = Loc::root(fs::canonicalize(&cfg).unwrap());
        let transcript = root.path().join("projects/p/s1.jsonl");
        let mut warnings = Vec::new();
        let got = worktrees(&root, &transcript, &base, &mut warnings).unwrap();
        let names: Vec<(&str, &str)> = got
            .iter()
            .map(|s| (s.name.as_str(), s.tree.branch.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("alice", "worktree-agent-aaa"),
                ("agent-bbb", "worktree-agent-bbb"),
                ("agent-ddd", "worktree-agent-ddd")
            ]
        );
        assert!(got.iter().all(|s| s.tree.base == base.commit));
        assert!(warnings.is_empty(), "{warnings:?}");
    }
}
