//! `teamctl pr`: a pull request of the branch the team's work was merged into, opened with
//! `gh`, its body made from the record of the team ([`crate::ops::export::summarize`]): what
//! the team was asked, and per teammate with a worktree its brief, the tasks it completed, its
//! diffstat against the commit it started from, and its cost. Teammate text goes through
//! [`crate::text::markdown`], the one escaper for untrusted text in Markdown.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use serde::Serialize;

use super::Source;
use super::diff::{self, Detail, MemberDiff};
use crate::host::gh::{self, NewPr};
use crate::host::git;
use crate::ops::export::{self, summary::Summary};
use crate::team::model::Kind;
use crate::text::markdown::{code_span, fenced, inline};
use crate::units::usd;

/// The most of a brief the body shows (characters).
pub const BRIEF_MAX: usize = 2000;
/// The most files of one member's diffstat the body lists.
pub const FILES_MAX: usize = 50;

/// A pull request, ready to open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pr {
    /// The repository (where `gh` runs).
    pub repo: PathBuf,
    /// The branch with the team's work (the pull request's head).
    pub head: String,
    /// Its title.
    pub title: String,
    /// Its body (Markdown).
    pub body: String,
}

/// The pull request of branch `head` for the teammates `sources` of the team `req` records,
/// titled `title` (default: `The work of team <team>`).
///
/// # Errors
/// `head` is no branch of the teammates' repository; the team's record cannot be read.
pub fn prepare(
    req: &export::Request,
    sources: &[Source],
    head: &str,
    title: Option<&str>,
) -> Result<Pr> {
    let Some(first) = sources.first() else {
        bail!("no teammate with a worktree");
    };
    let repo = PathBuf::from(&first.tree.repo);
    git::branch_name(&repo, head).map_err(|e| crate::error::usage(format!("{e:#}")))?;
    let Some(tip) = git::branch_commit(&repo, head) else {
        bail!(
            "there is no branch {head} in {}: make it with `teamctl merge --into {head}`",
            repo.display()
        );
    };
    let summary = export::summarize(req)?;
    let diffs = diff::read(sources, Detail::Counts);
    let commits = git::commits_between(&repo, &first.tree.base, &tip).ok();
    let body = body(&summary, &diffs, head, commits);
    Ok(Pr {
        repo,
        head: head.to_string(),
        title: title.map_or_else(|| format!("The work of team {}", req.team), str::to_string),
        body,
    })
}

/// Opens `pr` with the `gh` at `gh` (after asking whether it is logged in); returns what gh
/// printed (the pull request's URL).
///
/// # Errors
/// gh not logged in, or refusing.
pub fn open(pr: &Pr, gh_bin: &Path, base: Option<&str>, draft: bool) -> Result<String> {
    gh::logged_in(gh_bin, &pr.repo)?;
    gh::create_pr(
        gh_bin,
        &pr.repo,
        &NewPr {
            head: &pr.head,
            base,
            title: &pr.title,
            body: &pr.body,
            draft,
        },
    )
}

/// The body: the team, what it was asked and cost, then each teammate.
pub fn body(s: &Summary, diffs: &[MemberDiff], head: &str, commits: Option<u64>) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "## The work of team {}\n", inline(&s.team, 128));
    let asked = s.status.team.description.as_deref().unwrap_or("");
    let _ = writeln!(md, "What the team was asked: {}\n", inline(asked, 500));
    let commits = commits.map_or_else(|| "?".to_string(), |n| n.to_string());
    let _ = write!(
        md,
        "Branch {} holds {commits} commit(s) since the team's base {}.",
        code_span(head),
        code_span(&short(diffs.first().map_or("", |d| d.base.as_str())))
    );
    match s.cost.as_ref() {
        Some(c) => {
            let _ = writeln!(
                md,
                " The team cost {}.\n",
                cost(c.cost_usd, c.known_cost_usd)
            );
        }
        None => md.push_str(" Its cost is unknown: no transcript was found.\n\n"),
    }
    for d in diffs {
        member(&mut md, s, d);
    }
    md.push_str("*Made by teamctl from the team's record.*\n");
    md
}

fn short(c: &str) -> String {
    c.chars().take(12).collect()
}

fn cost(total: Option<f64>, known: f64) -> String {
    match total {
        Some(v) => usd(v),
        None => format!(
            "an unknown amount (a model without a price; {} of it is known)",
            usd(known)
        ),
    }
}

fn member(md: &mut String, s: &Summary, d: &MemberDiff) {
    let _ = writeln!(md, "### {}\n", inline(&d.name, 64));
    let (added, deleted, binary) = git::totals(&d.files);
    let commits = d.commits.map_or_else(|| "?".to_string(), |n| n.to_string());
    let _ = write!(
        md,
        "Branch {}: {commits} commit(s), {} file(s), +{added} -{deleted}",
        code_span(&d.branch),
        d.files.len()
    );
    if binary > 0 {
        let _ = write!(md, " ({binary} binary, not counted in lines)");
    }
    if d.uncommitted == Some(true) {
        md.push_str("; it has uncommitted changes, not in any branch");
    }
    if let Some(e) = &d.error {
        let _ = write!(md, "; its work could not be read: {}", inline(e, 500));
    }
    let spent = s
        .cost
        .as_ref()
        .and_then(|c| c.members.iter().find(|m| m.name == d.name));
    let _ = writeln!(
        md,
        ". Cost: {}.\n",
        spent.map_or_else(
            || "unknown (no transcript found)".to_string(),
            |m| m
                .cost_usd
                .map_or_else(|| "unknown (a model without a price)".to_string(), usd)
        )
    );
    let brief = s
        .messages
        .iter()
        .find(|m| m.from == "team-lead" && m.to == d.name && m.kind == Kind::Message)
        .and_then(|m| m.text.as_deref());
    if let Some(b) = brief {
        let f = fenced(b, BRIEF_MAX);
        let _ = writeln!(md, "Its brief:\n\n{}", f.block);
    }
    let done: Vec<&str> = s
        .tasks
        .iter()
        .filter(|t| t.status == "completed" && t.owner.as_deref() == Some(d.name.as_str()))
        .map(|t| t.subject.as_str())
        .collect();
    let _ = writeln!(md, "Tasks done: {}\n", done.len());
    for t in &done {
        let _ = writeln!(md, "- {}", inline(t, 200));
    }
    if !done.is_empty() {
        md.push('\n');
    }
    if !d.files.is_empty() {
        let stat = git::stat_text(&d.files, FILES_MAX);
        let _ = writeln!(md, "Diffstat:\n\n{}", fenced(&stat, usize::MAX).block);
    }
}
