//! The merge queue as verbs run it (`merge`, `wait --merge-into` and `run --merge-into`): which teammates, in
//! which order, progress on stderr, the outcome for people, and exit 10 when some were set
//! aside.

use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use teamctl::error::Error;
use teamctl::ops::merge::check::Check;
use teamctl::ops::merge::queue::{self, MemberResult, Outcome, Request, Status, Strategy};
use teamctl::ops::merge::{Source, by_completion, sources};
use teamctl::ops::run::helper_worktrees::{Base, worktrees};
use teamctl::ops::run::{Outcome as RunOutcome, State};
use teamctl::team::config::Team;

use crate::cli::context::Ctx;
use crate::cli::output::warn;
use crate::cli::signals;
use crate::cli::term::{escape_block, escape_line as esc};

/// How each member's work lands (`--strategy`).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum StrategyArg {
    Merge,
    Squash,
}

/// `--merge-into BRANCH [--check CMD] [--strategy …]` of a verb that merges when it is done.
#[derive(Debug, Args)]
pub(crate) struct MergeIntoArgs {
    /// When done, merge the worktree teammates' branches onto BRANCH, as `teamctl merge --into
    /// BRANCH` (exit 10 when some are set aside)
    #[arg(long, value_name = "BRANCH", help_heading = "Merging")]
    #[arg(
        help = "When done, merge the worktree teammates' branches onto BRANCH",
        long_help
    )]
    pub(crate) merge_into: Option<String>,

    /// With --merge-into: a check run after merging (as `merge --check`)
    #[arg(
        long,
        value_name = "CMD",
        requires = "merge_into",
        help_heading = "Merging"
    )]
    pub(crate) check: Option<String>,

    /// With --check: how long one run of the check may take before it and every process it
    /// started are ended (it then fails)
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "30m",
        requires = "check",
        help_heading = "Merging"
    )]
    #[arg(help = "With --check: how long one run may take", long_help)]
    pub(crate) check_timeout: String,

    /// With --merge-into: a merge commit (merge) or one squashed commit (squash) per member
    #[arg(
        long,
        value_enum,
        value_name = "STRATEGY",
        requires = "merge_into",
        help_heading = "Merging"
    )]
    #[arg(help = "How each member's work is merged", long_help)]
    pub(crate) strategy: Option<StrategyArg>,
}

/// `--check-timeout`, read (a usage error before any waiting when it does not parse).
pub(crate) fn check_timeout(value: &str) -> Result<Duration> {
    teamctl::time::parse_duration(value).context("invalid --check-timeout")
}

/// What to merge.
pub(crate) struct Plan<'a> {
    /// The members named (none: every worktree teammate, in the order their tasks were done).
    pub(crate) members: &'a [String],
    pub(crate) into: &'a str,
    pub(crate) check: Option<&'a str>,
    /// `--check-timeout`.
    pub(crate) check_timeout: Duration,
    pub(crate) strategy: StrategyArg,
    pub(crate) dry_run: bool,
}

/// Runs the merge queue of `plan` for `team`, progress and warnings on stderr.
pub(crate) fn queue(ctx: &Ctx, team: &Team, plan: &Plan) -> Result<Outcome> {
    let mut chosen = sources(team, plan.members)?;
    if plan.members.is_empty() {
        chosen = by_completion(&ctx.layout, team, chosen);
    }
    let progress = |s: &str| eprintln!("{}", esc(s));
    queue_of(ctx, team.name.as_str(), chosen, plan, &progress)
}

/// Runs the merge queue of `plan` over `chosen`, in that order, for the team called `team`
/// (`run --merge-into`: the worktrees its lead's helpers worked in).
/// Its steps go to `progress`.
pub(crate) fn queue_of(
    ctx: &Ctx,
    team: &str,
    chosen: Vec<Source>,
    plan: &Plan,
    progress: &dyn Fn(&str),
) -> Result<Outcome> {
    let data_dir = ctx
        .records
        .data_dir()
        .context("teamctl has no data dir for its scratch worktree: set TEAMCTL_DATA_DIR")?;
    // An interrupt ends the queue between its steps, its scratch worktree removed.
    signals::defer();
    let outcome = queue::merge(&Request {
        team,
        sources: chosen,
        into: plan.into,
        check: plan.check.map(|command| Check {
            command,
            limit: plan.check_timeout,
        }),
        strategy: match plan.strategy {
            StrategyArg::Merge => Strategy::Merge,
            StrategyArg::Squash => Strategy::Squash,
        },
        dry_run: plan.dry_run,
        data_dir,
        progress,
        stop: &signals::received,
    })?;
    for w in &outcome.warnings {
        warn(w);
    }
    Ok(outcome)
}

/// Exit 10 ([`Error::SetAside`]) when some members were set aside, naming them.
pub(crate) fn exit(outcome: &Outcome) -> Result<()> {
    let aside: Vec<&str> = outcome
        .members
        .iter()
        .filter(|m| m.set_aside())
        .map(|m| m.name.as_str())
        .collect();
    if aside.is_empty() {
        return Ok(());
    }
    Err(Error::SetAside(format!(
        "{} of {} member(s) set aside: {}",
        aside.len(),
        outcome.members.len(),
        aside.join(", ")
    ))
    .into())
}

/// The outcome for people: where BRANCH points, the check's runs, a line per member.
pub(crate) fn human(o: &Outcome) -> String {
    let short = |c: &str| c.chars().take(12).collect::<String>();
    let moved = match (&o.before, o.dry_run) {
        (_, true) => format!(
            "dry run: {} would point at {}",
            esc(&o.into),
            short(&o.after)
        ),
        (None, false) => format!("{} made at {}", esc(&o.into), short(&o.after)),
        (Some(b), false) if *b == o.after => {
            format!("{} unchanged at {}", esc(&o.into), short(b))
        }
        (Some(b), false) => format!("{} {} -> {}", esc(&o.into), short(b), short(&o.after)),
    };
    let mut out = vec![moved];
    match (&o.check, o.dry_run) {
        (Some(_), true) => out.push("check not run (dry run)".to_string()),
        (Some(_), false) => out.push(format!("check ran {} time(s)", o.checks_run)),
        (None, _) => {}
    }
    out.extend(o.members.iter().map(member));
    out.join("\n")
}

fn member(m: &MemberResult) -> String {
    let what = match m.status {
        Status::Merged => "merged".to_string(),
        Status::UpToDate => "nothing to merge".to_string(),
        Status::Missing => format!("set aside: branch {} is gone", esc(&m.branch)),
        Status::Conflict => format!(
            "set aside: conflict in {}",
            m.conflicts
                .iter()
                .map(|f| esc(f).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Status::CheckFailed => format!(
            "set aside: the check failed (exit code {})",
            m.check
                .as_ref()
                .and_then(|c| c.exit_code)
                .map_or_else(|| "none".to_string(), |c| c.to_string())
        ),
    };
    let mut line = format!("{}: {what}", esc(&m.name));
    if !m.uncommitted.is_empty() {
        line.push_str(&format!(
            " ({} uncommitted change(s) not merged)",
            m.uncommitted.len()
        ));
    }
    if let Some(c) = &m.check {
        line.push('\n');
        line.push_str(&escape_block(&c.output.join("\n"), "  | "));
    }
    line
}

/// `run --merge-into`: once the run is done, the worktrees its lead's helpers worked in
/// ([`teamctl::ops::run::helper_worktrees::worktrees`]) merged onto BRANCH from `base`, in the order of
/// their agent ids. `None` when not asked, when the run was not done, or when no helper had a
/// worktree (said on stderr).
pub(crate) fn after_run(
    ctx: &Ctx,
    args: &MergeIntoArgs,
    base: Option<&Base>,
    run: &RunOutcome,
) -> Result<Option<Outcome>> {
    let (Some(into), Some(base), State::Done) = (&args.merge_into, base, run.state) else {
        return Ok(None);
    };
    let Some(transcript) = &run.transcript else {
        warn("nothing merged: the lead's transcript was not found");
        return Ok(None);
    };
    let mut warnings = Vec::new();
    let chosen = worktrees(ctx.layout.root_loc(), transcript, base, &mut warnings)?;
    for w in &warnings {
        warn(w);
    }
    if chosen.is_empty() {
        warn(&format!(
            "nothing merged onto {}: no helper of the lead worked in a worktree of {} (the \
             Agent tool's isolation: \"worktree\")",
            esc(into),
            base.repo.display()
        ));
        return Ok(None);
    }
    let plan = Plan {
        members: &[],
        into,
        check: args.check.as_deref(),
        check_timeout: check_timeout(&args.check_timeout)?,
        strategy: args.strategy.unwrap_or(StrategyArg::Merge),
        dry_run: false,
    };
    let team = run.team.as_deref().unwrap_or("run");
    // With --json, run's stderr is JSON Lines: the queue's steps too.
    let json = ctx.out.json;
    let progress = |s: &str| {
        if json {
            let line = serde_json::json!({"schema_version": 1, "type": "merging", "message": s});
            eprintln!("{line}");
        } else {
            eprintln!("{}", esc(s));
        }
    };
    queue_of(ctx, team, chosen, &plan, &progress).map(Some)
}

/// With `--merge-into`, the repository of the run's `cwd` and its `HEAD` before the lead starts
/// (a usage error when it is not in a git repository with a commit, or BRANCH cannot be
/// merged onto).
pub(crate) fn run_base(args: &MergeIntoArgs, cwd: &std::path::Path) -> Result<Option<Base>> {
    let Some(into) = &args.merge_into else {
        return Ok(None);
    };
    check_timeout(&args.check_timeout)?;
    Base::of(cwd, into).map(Some).context("--merge-into")
}
