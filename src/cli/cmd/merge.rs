//! `teamctl merge`: the teammates' branches merged onto one branch, in a scratch worktree,
//! with a check.

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::ops::merge::queue::Outcome;

use crate::cli::context::Ctx;
use crate::cli::merging::{self, Plan, StrategyArg};

/// Merge the teammates' branches onto one branch, with a check, without touching your checkout
///
/// A merge queue for the teammates `create` gave a git worktree (or those named). It works in
/// a scratch worktree in teamctl's data dir, never in your checkout: your HEAD, index, working
/// tree and every branch but BRANCH are left exactly as they were. BRANCH is made from the
/// commit the worktrees started from when it does not exist, and continued when it does; it
/// must not be checked out anywhere (its files would change under whoever has it), and is a
/// branch's short name (not @, HEAD or refs/heads/NAME, which git reads otherwise).
///
/// Members are merged in the order named, else in the order their tasks were completed (by
/// when each one's last completed task file was written; those with none after, in the team's
/// order). Only committed work is merged: each member's uncommitted changes are reported. A
/// merge that conflicts is taken back and the member set aside, naming the files.
///
/// --check CMD then runs in the scratch worktree (`sh -c CMD`, no stdin, in a process group of
/// its own; what it starts ends with it, on Linux even a child that left its group with
/// setsid; a run past --check-timeout is ended with every process it started and fails, and
/// so does one an interrupt cuts short, which then stops the queue). When it fails, the
/// merges are bisected for the first one that makes it fail (a state known to pass is not
/// checked again); that member is set aside with the check's exit code and last 20 lines of
/// output (read from its last 64 KiB, each cut to its last 1000 bytes), the members after it
/// are merged again, and the check runs again. If the check fails
/// before any member is merged, nothing is set aside and nothing moves (exit 1). Between steps
/// the scratch worktree is reset and its untracked files removed (ignored ones, such as a
/// build's cache, are kept). Only at the end
/// is BRANCH moved (`git update-ref`, which fails if it moved meanwhile; nor is it moved when
/// it was checked out in a worktree meanwhile). --strategy squash
/// makes one commit per member instead of a merge commit. --dry-run merges in the scratch
/// worktree only: it says what would conflict, runs no check and moves no branch. The scratch
/// worktree is removed after (`git worktree prune`), also when an interrupt (Ctrl-C) ends the
/// queue between its steps (then nothing moves). No git hook runs there, nor in the teammates'
/// worktrees, nor anything else a teammate could configure (fsmonitor, signing, a filter or
/// merge driver the repository did not have when the team started: named in an error;
/// docs/security.md). When git knows no
/// user.name/user.email, the commits are made as `teamctl <teamctl@localhost>` (a warning says
/// so).
///
/// Exit codes: 0 every member merged (or had nothing to merge); 10 some were set aside (a
/// conflict, a failed check, a branch gone) and the others merged; 1 an error (nothing moved);
/// 2 a usage error.
///
/// With --json: {"schema_version":1,"team","into","base","before","after","dry_run",
/// "strategy","check","checks_run","members":[{"name","branch","commit","status","merged_as",
/// "conflicts","check":{"passed","exit_code","timed_out","output"},"uncommitted","runs_code"}],
/// "warnings"}; status is merged, up_to_date, conflict, check_failed or missing; runs_code
/// lists the files a member's branch changes that run code for you once it lands (Claude
/// Code's .claude/ and .mcp.json, CI workflows, git hook managers: a warning names them for
/// each member merged); before is null when BRANCH was made;
/// check is the failed run that set the member aside, else null (exit_code null when a
/// signal or its time limit ended it). The document is printed with
/// exit 10 too.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl merge --into integration                            # every worktree teammate
  teamctl merge --into integration --check 'cargo test'       # set aside what breaks it
  teamctl merge --into integration --check 'make e2e' --check-timeout 10m   # a hung check fails
  teamctl merge alice bob --into review --strategy squash     # these two, in this order
  teamctl merge --into integration --dry-run                  # what would conflict
  teamctl merge --into integration --check 'make test' --json | jq '.members[] | {name, status}'

Exit codes: 0 all merged, 10 some set aside, 1 error, 2 usage error.")]
pub(crate) struct MergeArgs {
    /// The teammates to merge, in this order [default: every one with a worktree]
    #[arg(value_name = "MEMBER")]
    members: Vec<String>,

    /// The branch to merge into (made from the team's base when missing)
    #[arg(long, value_name = "BRANCH")]
    into: String,

    /// A command line run with `sh -c` in the scratch worktree after merging; members whose
    /// merge makes it fail are set aside
    #[arg(long, value_name = "CMD")]
    #[arg(
        help = "A command run after merging; members that fail it are set aside",
        long_help
    )]
    check: Option<String>,

    /// How long one run of the check may take before it and every process it started are
    /// ended (it then fails, and the member that broke it is looked for as for any failure)
    #[arg(long, value_name = "DURATION", default_value = "30m")]
    #[arg(help = "How long one run of the check may take", long_help)]
    check_timeout: String,

    /// A merge commit per member, or one squashed commit per member
    #[arg(long, value_enum, default_value = "merge")]
    #[arg(help = "How each member's work is merged", long_help)]
    strategy: StrategyArg,

    /// Merge in the scratch worktree only: say what would conflict, run no check, move nothing
    #[arg(long)]
    #[arg(
        help = "Merge in the scratch worktree only, and move nothing",
        long_help
    )]
    dry_run: bool,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    #[serde(flatten)]
    outcome: &'a Outcome,
}

pub(crate) fn run(ctx: &Ctx, args: MergeArgs) -> Result<()> {
    let team = ctx.team()?;
    let outcome = merging::queue(
        ctx,
        &team,
        &Plan {
            members: &args.members,
            into: &args.into,
            check: args.check.as_deref(),
            check_timeout: merging::check_timeout(&args.check_timeout)?,
            strategy: args.strategy,
            dry_run: args.dry_run,
        },
    )?;
    if ctx.out.json {
        ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            outcome: &outcome,
        })?;
    } else {
        ctx.out.line(&merging::human(&outcome))?;
    }
    merging::exit(&outcome)
}
