//! `teamctl approve`: answer a teammate's request with yes, as its lead; or answer every
//! request by a policy file (`--policy`), once or as they arrive (`--follow`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use clap::builder::PossibleValuesParser;
use teamctl::error::usage;
use teamctl::observe::watch::Watch;
use teamctl::team::protocol::Verdict;

use crate::cli::answer;
use crate::cli::args::deadline;
use crate::cli::by_policy::{EventsTo, Runner};
use crate::cli::context::Ctx;
use crate::cli::output::warn;

/// Approve a teammate's request (see `teamctl pending`), as its lead
///
/// Writes the response frame a Claude Code lead writes into the requester's inbox, from
/// team-lead: permission_response (subtype success, bound to the call by tool_use_id and
/// approved_request = {tool_use_id, tool_name, input_digest}, where input_digest is the sha256
/// hex of tool_name, a NUL byte and the input as JSON with every object's keys sorted, which
/// 2.1.332 checks), plan_approval_response (approved, feedback, permissionMode, planDigest =
/// sha256 hex of the plan text) or sandbox_permission_response (allow). An unknown or already
/// answered id fails (exit 1). Refused (exit 2) in a team teamctl does not lead unless --force:
/// there the answer would speak for someone else's lead (and the teammates of a Claude Code lead
/// act only on their own lead's answers: they hold its signing key).
///
/// With --policy FILE instead of an id: answers every pending request by the rules in FILE (a
/// teamctl policy, or a Claude Code settings.json whose permissions block is used; the language,
/// the order and the output: docs/policy.md): deny rules first, then ask (left for a person),
/// then allow; plans and sandbox hosts by the policy's "plans" and "sandbox_hosts"; anything else
/// by "unmatched" (leave or deny). A denial tells the teammate "denied by policy rule <rule>".
/// Without --follow it makes one pass over what is pending and exits; with --follow it first
/// answers what is there, then every request as it arrives (file notifications, like watch, or
/// polling every --poll ms), until --timeout, Ctrl-C or the team is gone (its config.json
/// removed, as `teamctl delete` does). Each request is answered once, also when several teamctl
/// processes answer the same team (the sent log's answer lock). One line per decision on
/// stderr; --dry-run decides and reports but writes nothing. A plan approval is written only
/// 2 s after the teammate has reported idle after asking (earlier, Claude Code 2.1.332 loses it), or,
/// a teammate that never reports idle, 5 s after its transcript says that turn ended.
///
/// With --json: `{"schema_version":1,"team","request_id","kind","to","inbox","id","response"}`.
/// With --policy and --json: JSON Lines on stdout, one per decision: `{"schema_version":1,
/// "event":"decision","team","at","request_id","kind","from","asks","tool_name","input","host",
/// "plan_file_path","answer","rule","list","reason","dry_run","deferred","written","inbox","id",
/// "response","error"}`, and with --follow a last `{"schema_version":1,"event":"end","team",
/// "at","why","approved","denied","left"}` ("why": timeout or team_gone); what each key means:
/// docs/policy.md, "Output".
///
/// Exit codes: 0 (with --follow: at --timeout, or when the team is gone: a timeout is the normal
/// end of a bounded follow), 1 a failure (unknown team, I/O; the one pass without --follow on a
/// file it cannot read), 2 a bad policy file, rule or flag combination (nothing is answered) or a
/// team teamctl does not lead, 130 on Ctrl-C.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl approve perm-1795946340000-abc1234
  teamctl approve --policy policy.json --dry-run         # what would be answered now
  teamctl approve --follow --policy policy.json --timeout 2h &   # answer while CI runs
  teamctl approve --follow --policy .claude/settings.json --json | jq -c '[.answer,.rule]'

A policy file:
  {\"permissions\": {\"allow\": [\"Bash(npm test:*)\", \"Bash(git status)\", \"Edit(src/**)\"],
                   \"deny\": [\"Bash(rm:*)\", \"Read(*.env)\"]},
   \"plans\": \"approve\", \"sandbox_hosts\": {\"allow\": [\"*.npmjs.org\"], \"deny\": []},
   \"unmatched\": \"leave\"}")]
pub(crate) struct ApproveArgs {
    /// The request id (`teamctl pending` lists them)
    #[arg(
        value_name = "REQUEST_ID",
        required_unless_present = "policy",
        conflicts_with = "policy"
    )]
    request_id: Option<String>,

    /// Feedback for the teammate (plan approvals)
    #[arg(long, value_name = "TEXT", conflicts_with = "policy")]
    feedback: Option<String>,

    /// Permission mode the teammate continues in after an approved plan
    #[arg(long, value_name = "MODE", conflicts_with = "policy", value_parser = PossibleValuesParser::new(["default", "acceptEdits", "bypassPermissions", "plan"]))]
    #[arg(
        help = "The teammate's permission mode after an approved plan",
        long_help
    )]
    mode: Option<String>,

    /// Answer every pending request by the rules in FILE instead of one by id
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,

    /// With --policy: keep answering requests as they arrive
    #[arg(long, requires = "policy")]
    follow: bool,

    /// With --follow: stop after this long (exit 0)
    #[arg(long, value_name = "DURATION", requires = "follow")]
    timeout: Option<String>,

    /// With --policy: decide and report, write nothing
    #[arg(long, requires = "policy")]
    dry_run: bool,

    /// With --follow: poll every MS milliseconds instead of using file notifications
    #[arg(long, value_name = "MS", requires = "follow")]
    #[arg(help = "With --follow: poll every MS milliseconds", long_help)]
    poll: Option<u64>,

    /// Whose inbox holds the request
    #[arg(long = "as", value_name = "NAME", default_value = "team-lead")]
    lead: String,

    /// Answer as team-lead even in a team teamctl does not lead (one a Claude Code session leads,
    /// or one not made by `teamctl create`)
    #[arg(long)]
    #[arg(
        help = "Answer as team-lead even in a team teamctl does not lead",
        long_help
    )]
    force: bool,
}

pub(crate) fn run(ctx: &Ctx, args: ApproveArgs) -> Result<()> {
    // clap does not apply `requires` here (the id and --policy conflict), so check by hand.
    if args.policy.is_none() && (args.follow || args.dry_run) {
        return Err(usage("--follow and --dry-run need --policy FILE"));
    }
    if let Some(path) = &args.policy {
        return by_policy(ctx, &args, path);
    }
    let verdict = Verdict::Approve {
        feedback: args.feedback,
        mode: args.mode,
    };
    let id = args.request_id.unwrap_or_default();
    answer::run(ctx, &id, &args.lead, verdict, args.force)
}

fn by_policy(ctx: &Ctx, args: &ApproveArgs, path: &std::path::Path) -> Result<()> {
    let deadline = deadline(args.timeout.as_deref())?;
    if args.poll == Some(0) {
        return Err(usage("--poll must be at least 1 ms"));
    }
    // The policy is checked before the team: a bad file is exit 2 whatever the team.
    let mut runner = Runner::new(ctx, path, &args.lead, args.dry_run, EventsTo::Stdout)?;
    let team = ctx.team()?;
    answer::check_lead(&team, args.force)?;
    // The snapshot comes first, so a request that arrives during the first pass is a change.
    let watch = args
        .follow
        .then(|| Watch::new(team.clone(), None, ctx.clock()).0);
    let Some(mut watch) = watch else {
        return runner.step(ctx, &team);
    };
    // Following, a file that cannot be read for a moment is a warning, not the end.
    runner.step_reopened(ctx, &team)?;
    let name = team.name.clone();
    let config = team.layout.config_path(&name);
    let clock = || ctx.clock();
    let mut waker = watch.waker(args.poll.map(Duration::from_millis));
    // What changed before the watches were in place.
    let missed = watch.rescan(clock());
    let mut changed = !missed.events.is_empty();
    for w in &missed.warnings {
        warn(w);
    }
    let why = loop {
        if !config.stat().is_ok_and(|i| i.is_some()) {
            break "team_gone";
        }
        // A change, or an answer that could not be written last time, or a plan held back
        // (tried every second).
        if changed || runner.due() {
            runner.step_reopened(ctx, &team)?;
        }
        let now = Instant::now();
        let max = match deadline {
            Some(d) if now >= d => break "timeout",
            Some(d) => (d - now).min(RETRY_EVERY),
            None => RETRY_EVERY,
        };
        let changes = watch.next(&mut waker, max, &clock);
        for w in &changes.warnings {
            warn(w);
        }
        changed = !changes.events.is_empty();
    };
    runner.end(ctx, name.as_str(), why)
}

/// How often `--follow` retries an answer it could not write while nothing changes.
const RETRY_EVERY: Duration = Duration::from_secs(1);
