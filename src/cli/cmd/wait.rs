//! `teamctl wait`: block until tasks are done, teammates are idle or gone, or a message came.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, bail};
use clap::Args;
use serde::Serialize;
use teamctl::Error;
use teamctl::error::usage;
use teamctl::observe;
use teamctl::observe::spend::{SpendReader, TeamSpend};
use teamctl::observe::wait::{After, Condition, ConditionState, Hooks, Limits, Spec, Waited};
use teamctl::observe::waker::Waker;
use teamctl::ops::merge::queue::Outcome;
use teamctl::store::paths::MemberName;
use teamctl::team::mailbox::TypeFilter;
use teamctl::team::tasks::parse_id;
use teamctl::time::{parse_duration, parse_since};

use crate::cli::args::{CapArgs, TotalsJson, type_values};
use crate::cli::by_policy::{Blocking, EventsTo, Runner};
use crate::cli::context::Ctx;
use crate::cli::env;
use crate::cli::going::{self, KeepArgs};
use crate::cli::merging::{self, MergeIntoArgs, Plan, StrategyArg};
use crate::cli::otel::{self, OtelArgs};
use crate::cli::term::escape_line;

/// Wait until the team's tasks are done, teammates are idle or gone, or a message arrives
///
/// Blocks until every given condition holds (--any: the first; the conditions are below),
/// prints each as it becomes true (`10:04:31 met: idle alice: alice (idle_notification:
/// available)`), and exits 0. Each condition is checked against the files as they are first
/// (already true: it returns at once), then on every change; the watch is in place before the
/// first check, so no change in between is lost.
///
/// A member is gone when it left config.json, when a shutdown_approved frame from it was seen, when
/// its recorded tmux pane (tmuxPaneId `%N`, on the tmux server teamctl recorded for a team it
/// created, else on the one the environment selects) exists and is dead, or, for an in-process
/// teammate, when the lead process recorded in leadProcess is dead. A teammate with nothing
/// recorded to check (one made with `create --launch none` and started by hand) counts as alive.
///
/// With --policy FILE, requests the teammates send their lead while the wait blocks (tool
/// permissions, plans, sandbox hosts) are answered by the rules in FILE, exactly as `approve
/// --follow --policy` answers them (docs/policy.md), so a CI script that waits for --tasks-done
/// never deadlocks on a permission prompt; one line per decision on stderr (with --json, JSON
/// Lines decision events on stderr, stdout keeping its one document). Only in a team teamctl
/// leads (else exit 2); a bad policy file is exit 2.
///
/// With --max-cost USD or --max-tokens N, the wait also ends, with exit 6, the moment the team's
/// total spend crosses the cap: "budget exceeded: $X of $Y, by alice $a, bob $b". The total is
/// read from the members' Claude Code transcripts (see `teamctl status --help`) and includes
/// what the team spent before the wait started, so a team already over the cap ends it at once.
///
/// With --from-transcript, a --message-from NAME that goes idle without writing to you counts
/// too when the turn it ended had plain text and wrote to nobody else: its idle_notification in
/// your inbox (teammates send those to their lead: team-lead, your identity in a team teamctl
/// leads) meets the condition, and the message is that turn's last text, read from NAME's
/// transcript (else from the notification's result, Claude Code 2.1.332 and later):
/// `{"from","text","timestamp","source":"transcript"|"idle_notification","idle_notification"}`.
/// A turn that left no text, or wrote to someone else, ends the wait with exit 5.
///
/// Exit codes: 0 met; 1 at once when a condition can no longer become true (a member it waits to
/// be idle, or a message from, is gone; every teammate is gone while tasks are open; its task was
/// deleted; the recipient of a message is gone; with --any, only when every condition is
/// impossible), or naming an unknown member, task or message id; 2 no condition, or
/// contradictory ones (--idle alice --terminated alice without --any); 3 at --timeout, printing
/// the state of each condition that is not met; 6 the budget was exceeded; with --merge-into,
/// 10 some teammates were set aside.
///
/// With --merge-into BRANCH, once the wait is met the worktree teammates' branches are merged
/// onto BRANCH as `teamctl merge --into BRANCH` merges them (--check, --strategy as there; see
/// `teamctl merge --help`), in the order their tasks were completed.
///
/// With an OpenTelemetry endpoint set (OTEL_EXPORTER_OTLP_ENDPOINT), what it sees is exported as
/// a trace and metrics, each member's tokens and cost at the end among them
/// (docs/observability.md, "OpenTelemetry"; --otel-content adds the texts).
///
/// With --json, one document at the end: `{"schema_version":1,"team","met","outcome",
/// "conditions":[{"condition","args","met","at","detail","message","impossible"}],"totals",
/// "waited_ms","merge"}`; merge is the `merge --json` document but schema_version and team
/// when --merge-into merged, else null; outcome is met, impossible, timeout or budget; condition is tasks_done, task,
/// idle, message_from, terminated or delivered; message is the entry that met a message_from
/// (else null), impossible why a condition can no longer hold (else null); totals is the team's
/// spend when a cap was given, `{"tokens":{"input","output","cache_read","cache_creation"},
/// "cost_usd"}`, else null.
#[derive(Debug, Args)]
#[command(after_long_help = "The conditions, in detail:
  --tasks-done      every task of the team (Claude Code's internal ones aside) is completed, and
                    there is at least one
  --task ID         that task is completed (repeatable; an unknown id is exit 1)
  --idle [MEMBER...]  each member (default: every teammate) is idle: nothing waits unread in its
                    inbox, and its newest event is the end of a turn: an idle_notification from
                    it, or isActive turning false in config.json (taking an entry from its inbox,
                    a new entry for it, a plain message from it or isActive turning true make it
                    busy; the newest event decides, not the current isActive). A teammate that
                    never reports idle (Claude Code's start-up race) is idle all the same 5 s
                    after its transcript says its turn ended, with nothing since (docs/design.md,
                    \"When a teammate is idle\")
  --message-from NAME  a message from NAME lands in your inbox (your identity, or --as NAME)
                    after the wait started, or after --after ID (an entry of your inbox, or a
                    message in the sent log: then entries stamped at or after it) or --after TIME
                    (RFC 3339 or an age like 10m); --type says what counts: message (default:
                    plain messages), protocol, or a frame type such as idle_notification
  --terminated [MEMBER...]  each member (default: every teammate) is gone (above)
  --delivered ID    the message left its recipient's inbox or was marked read (the rule of
                    send --wait)

Examples:
  teamctl wait --tasks-done --idle --timeout 1h     # the team finished its work
  teamctl wait --task 3 --task 4
  teamctl wait --message-from alice --timeout 10m --json | jq -r '.conditions[0].message.text'
  id=$(teamctl send bob \"ping\" --json | jq -r .id); teamctl wait --delivered \"$id\"
  teamctl wait --any --idle alice --terminated alice
  teamctl wait --tasks-done --idle --max-cost 5.00 --timeout 2h   # exit 6 past $5
  teamctl wait --tasks-done --idle --policy .claude/settings.json --timeout 1h
  teamctl wait --tasks-done --idle --merge-into integration --check 'cargo test'")]
pub(crate) struct WaitArgs {
    /// Every task is completed (and there is at least one)
    #[arg(long, help_heading = "Conditions")]
    tasks_done: bool,

    /// This task is completed (repeatable)
    #[arg(long, value_name = "ID", help_heading = "Conditions")]
    task: Vec<String>,

    /// These members are idle [default: every teammate]
    #[arg(long, value_name = "MEMBER", num_args = 0.., help_heading = "Conditions")]
    idle: Option<Vec<String>>,

    /// A message from NAME lands in your inbox (repeatable)
    #[arg(long, value_name = "NAME", help_heading = "Conditions")]
    message_from: Vec<String>,

    /// With --message-from: which entries count (message, protocol or a frame type)
    #[arg(long = "type", value_name = "TYPE", value_parser = type_values(), default_value = "message", help_heading = "Conditions")]
    #[arg(hide_short_help = true, long_help)]
    frame: String,

    /// With --message-from: count messages after this entry id or time (RFC 3339 or an age
    /// like 10m) instead of after the start
    #[arg(long, value_name = "ID|TIME", help_heading = "Conditions")]
    #[arg(
        help = "With --message-from: count messages after this entry or time",
        long_help
    )]
    after: Option<String>,

    /// With --message-from: NAME going idle without writing to you counts too, with the text
    /// that ended its turn (from its transcript) as the message
    #[arg(
        long,
        requires = "message_from",
        conflicts_with = "frame",
        help_heading = "Conditions"
    )]
    #[arg(
        help = "With --message-from: going idle without writing counts too",
        long_help
    )]
    from_transcript: bool,

    /// These members are gone [default: every teammate]
    #[arg(long, value_name = "MEMBER", num_args = 0.., help_heading = "Conditions")]
    terminated: Option<Vec<String>>,

    /// This message has been taken by its recipient (repeatable)
    #[arg(long, value_name = "ID", help_heading = "Conditions")]
    delivered: Vec<String>,

    /// Return when the first condition holds instead of all
    #[arg(long, help_heading = "Conditions")]
    any: bool,

    /// Your identity: whose inbox --message-from watches [default: team-lead in a team teamctl
    /// leads, else user]
    #[arg(long = "as", value_name = "NAME", env = env::FROM)]
    #[arg(help = "Your identity: whose inbox --message-from watches", long_help)]
    identity: Option<String>,

    /// Give up after this long (exit 3)
    #[arg(long, value_name = "DURATION", default_value = "30m")]
    timeout: String,

    /// Poll every MS milliseconds instead of using file notifications
    #[arg(long, value_name = "MS")]
    poll: Option<u64>,

    /// While waiting, answer teammates' requests by the rules in FILE (as `approve --follow
    /// --policy`; decisions on stderr)
    #[arg(long, value_name = "FILE", help_heading = "Answering requests")]
    #[arg(
        help = "While waiting, answer requests by the rules in FILE",
        long_help
    )]
    policy: Option<PathBuf>,

    #[command(flatten)]
    cap: CapArgs,

    #[command(flatten)]
    keep: KeepArgs,

    #[command(flatten)]
    otel: OtelArgs,

    #[command(flatten)]
    merge: MergeIntoArgs,
}

#[derive(Serialize)]
struct Report<'a> {
    schema_version: u32,
    team: &'a str,
    met: bool,
    outcome: &'static str,
    conditions: &'a [ConditionState],
    totals: Option<TotalsJson>,
    waited_ms: u64,
    merge: Option<&'a Outcome>,
}

/// The conditions the flags name, in the order of the flags' kinds.
fn conditions(args: &WaitArgs) -> Result<Vec<Condition>> {
    let names = |v: &[String]| -> Result<Vec<String>> {
        v.iter()
            .map(|m| MemberName::parse(m).map(|n| n.to_string()))
            .collect()
    };
    let mut conditions = Vec::new();
    if args.tasks_done {
        conditions.push(Condition::TasksDone);
    }
    for t in &args.task {
        conditions.push(Condition::Task(parse_id(t)?));
    }
    if let Some(m) = &args.idle {
        conditions.push(Condition::Idle(names(m)?));
    }
    let kind: TypeFilter = if args.from_transcript {
        TypeFilter::MessageOrIdle
    } else {
        args.frame.parse()?
    };
    for from in &args.message_from {
        conditions.push(Condition::MessageFrom {
            from: MemberName::parse(from)?.to_string(),
            kind: kind.clone(),
        });
    }
    if let Some(m) = &args.terminated {
        conditions.push(Condition::Terminated(names(m)?));
    }
    for id in &args.delivered {
        conditions.push(Condition::Delivered(id.clone()));
    }
    Ok(conditions)
}

/// What each member used and cost, for the telemetry (read only when it is exported).
fn spend_to_otel(ctx: &Ctx, team: &teamctl::team::config::Team, spend: Option<&TeamSpend>) {
    if !otel::enabled() {
        return;
    }
    match spend {
        Some(s) => otel::spend(s),
        None => {
            let mut s = SpendReader::new(&team.layout, &team.name, ctx.records.data_dir());
            otel::spend(s.read());
            // A cache: a failure to save it only makes the next read longer.
            let _ = s.save();
        }
    }
}

pub(crate) fn run(ctx: &Ctx, args: WaitArgs) -> Result<()> {
    otel::start("wait", args.otel.otel_content);
    let timeout = parse_duration(&args.timeout)?;
    let check_timeout = merging::check_timeout(&args.merge.check_timeout)?;
    args.cap.cap()?;
    let conditions = conditions(&args)?;
    if args.after.is_some() && args.message_from.is_empty() {
        return Err(usage(
            "--after applies to --message-from; give --message-from NAME",
        ));
    }
    if let Some(i) = &args.identity {
        MemberName::parse(i)?;
    }
    // A bad policy is exit 2 before anything else.
    let runner = args
        .policy
        .as_deref()
        .map(|p| Runner::new(ctx, p, "team-lead", false, EventsTo::Stderr))
        .transpose()?;
    let team = ctx.team()?;
    if let Some(into) = &args.merge.merge_into {
        // A team with no worktree teammate, or a branch name git would read otherwise, is a
        // usage error now, not after the wait.
        teamctl::ops::merge::can_merge_into(&team, into)?;
    }
    if runner.is_some() {
        crate::cli::answer::check_lead(&team, false)?;
    }
    let me = args.identity.clone().unwrap_or_else(|| ctx.identity(&team));
    let after = match &args.after {
        None => After::Start,
        Some(a) => match parse_since(a, ctx.now) {
            Ok(t) => After::Time(t),
            Err(_) => After::Id(a.clone()),
        },
    };
    if !args.message_from.is_empty()
        && let Some(why) = teamctl::team::mailbox::unreachable_reason(&team, &me)
    {
        crate::cli::output::hint(&format!(
            "--message-from watches {me}'s inbox, but teammates cannot write to it: {why}"
        ));
    }

    let spec = Spec {
        conditions,
        me: me.clone(),
        after,
        any: args.any,
    };
    let mut blocking = Blocking {
        ctx,
        runner,
        verb: "wait",
    };
    let rules = args.keep.rules()?;
    let limits = Limits {
        timeout,
        poll: args.poll.map(Duration::from_millis),
        cap: args.cap.cap()?,
        records: ctx.records.clone(),
        rules,
    };
    let clock = || ctx.clock();
    let mut rescue = going::rescue(ctx, &team, &me, rules.restarts().then_some(None), &clock)?;
    let mut waited = observe::wait::wait(
        team,
        spec,
        limits,
        &|| ctx.clock(),
        Hooks {
            observer: &mut blocking,
            met: &mut |s| report(ctx, s),
            blocking: &mut |open| {
                let open: Vec<String> = open.iter().map(|s| label(s)).collect();
                eprintln!("waiting up to {} for: {}", args.timeout, open.join(", "));
            },
            hand: &mut rescue,
            acted: &mut |a| going::tell(ctx, a),
        },
    )?;
    spend_to_otel(ctx, waited.watch.team(), waited.spend.as_ref());
    // The watch stays open to the end (a polling waker, which holds nothing, in its place): see
    // quick_exit.
    let idle = Waker::for_dirs(&[], Some(Duration::from_secs(1)));
    std::mem::forget(std::mem::replace(&mut waited.waker, idle));
    crate::cli::quick_exit::arm();
    if args.from_transcript {
        let clock = || ctx.clock();
        for s in waited
            .states
            .iter_mut()
            .filter(|s| s.condition == "message_from")
        {
            if let (Some(m), Some(from)) = (&s.message, s.args.first()) {
                let said = observe::said::as_message(waited.watch.team(), from, &me, m, &clock);
                s.message = Some(said?);
            }
        }
    }
    let merged = match (&args.merge.merge_into, waited.met) {
        (Some(into), true) => Some(merging::queue(
            ctx,
            waited.watch.team(),
            &Plan {
                members: &[],
                into,
                check: args.merge.check.as_deref(),
                check_timeout,
                strategy: args.merge.strategy.unwrap_or(StrategyArg::Merge),
                dry_run: false,
            },
        )),
        _ => None,
    };
    let outcome = merged.as_ref().and_then(|m| m.as_ref().ok());
    conclude(ctx, &args.timeout, waited, outcome)?;
    match merged {
        None => Ok(()),
        Some(Err(e)) => Err(e),
        Some(Ok(o)) => {
            if !ctx.out.json {
                ctx.out.line(&merging::human(&o))?;
            }
            merging::exit(&o)
        }
    }
}

/// Prints how the wait ended (`--json`: the report, with the merge when one ran) and returns
/// its exit.
fn conclude(ctx: &Ctx, timeout: &str, w: Waited, merge: Option<&Outcome>) -> Result<()> {
    let outcome = match (w.met, &w.budget, &w.impossible, &w.stuck) {
        (true, ..) => "met",
        (_, Some(_), ..) => "budget",
        (_, _, _, Some(_)) => "stuck",
        (_, _, Some(_), _) => "impossible",
        _ => "timeout",
    };
    if ctx.out.json {
        ctx.out.json(&Report {
            schema_version: 1,
            team: w.watch.team().name.as_str(),
            met: w.met,
            outcome,
            conditions: &w.states,
            totals: w.spend.as_ref().map(TotalsJson::of),
            waited_ms: w.waited_ms,
            merge,
        })?;
    } else if !w.met {
        for s in w.states.iter().filter(|s| !s.met) {
            ctx.out.line(&format!(
                "not met: {}: {}",
                label(s),
                escape_line(&s.detail)
            ))?;
        }
    }
    if w.met {
        return Ok(());
    }
    if let Some(e) = w.budget {
        return Err(Error::Budget(e.to_string()).into());
    }
    if let Some(e) = w.stuck {
        return Err(e);
    }
    if let Some(why) = w.impossible {
        bail!("the wait can no longer succeed: {why}");
    }
    let open = w.states.iter().filter(|s| !s.met).count();
    Err(Error::Timeout(format!(
        "timed out after {timeout}: {open} of {} conditions not met",
        w.states.len()
    ))
    .into())
}

fn label(s: &ConditionState) -> String {
    if s.args.is_empty() {
        s.condition.to_string()
    } else {
        format!("{} {}", s.condition, escape_line(&s.args.join(" ")))
    }
}

fn report(ctx: &Ctx, s: &ConditionState) -> Result<()> {
    if ctx.out.json {
        return Ok(());
    }
    let at =
        s.at.as_deref()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map(|t| {
                t.with_timezone(&chrono::Local)
                    .format("%H:%M:%S")
                    .to_string()
            })
            .unwrap_or_default();
    ctx.out.line(&format!(
        "{at} met: {}: {}",
        label(s),
        escape_line(&s.detail)
    ))
}
