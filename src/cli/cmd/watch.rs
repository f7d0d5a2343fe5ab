//! `teamctl watch`: follow a team as a stream of events.

use std::io::Write;
use std::os::fd::AsFd;
use std::process::Stdio;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use clap::builder::PossibleValuesParser;
use teamctl::error::Error;
use teamctl::host::hook::{self, Ended};
use teamctl::observe::event::{Event, Filter, Kind};
use teamctl::observe::follow::{Following, Watching};
use teamctl::observe::watch::{Changes, Watch};
use teamctl::store::paths::MemberName;
use teamctl::team::mailbox::TypeFilter;
use teamctl::team::model::{Frame, first_line};
use teamctl::team::tasks::STATUSES;
use teamctl::time;

use crate::cli::args::{deadline, type_values};
use crate::cli::context::Ctx;
use crate::cli::otel::{self, OtelArgs};
use crate::cli::output::warn;
use crate::cli::signals;
use crate::cli::term::escape_line;

/// Follow the team's inboxes, tasks and members as a stream of events
///
/// Follows the team's inboxes (all, or the named members'), its task list and its config.json,
/// and prints one line per change as it happens, like `tail -f` (the events are below). Changes
/// are found by comparing parsed content (entries by id, tasks by file, members by name), never
/// by mtime, so a burst of writes coalesced into one notification still gives every event, in
/// file order. `*.tmp.*` files and `*.lock` directories are ignored. inotify drives it; --poll MS
/// (also the fallback when notifications are unavailable) re-reads instead. Only new events by
/// default; --existing first prints what is there now.
///
/// For scripts: --count N exits 0 after N matching events; --timeout ends the watch, with exit 3
/// if --count was not reached. --from keeps message events from one sender, --event some kinds,
/// --type some kinds of message, --task-status the task events that bring a task to a status. To
/// wait for a reply: `teamctl watch ops --from alice --event message --count 1 --timeout 10m
/// --json`.
///
/// Hooks: --exec CMD runs `sh -c CMD` once per matching event, with the event's JSON (exactly
/// the line --json prints) on its standard input and TEAMCTL_EVENT (the event's kind) and
/// TEAMCTL_TEAM in its environment, the way Claude Code's own hooks take their JSON on standard
/// input. One at a time, in order, each event exactly once; the watch goes on reading while a
/// hook runs, so nothing is missed. The hook's output goes to stderr (stdout stays the event
/// stream). A hook that fails is reported on stderr; one that runs past --exec-timeout has its
/// whole process group killed (SIGTERM, then SIGKILL a second later) and is reported; neither
/// stops the watch. At --count or --timeout the watch ends once the hook has run for every event
/// seen.
///
/// With an OpenTelemetry endpoint set (OTEL_EXPORTER_OTLP_ENDPOINT), what it sees is exported as
/// a trace and metrics (docs/observability.md, "OpenTelemetry"; --otel-content adds the texts).
///
/// With --json: JSON Lines, one object per event, flushed per line:
/// `{"schema_version":1,"event","team","at","to","from","id","member","message","task",
/// "member_entry","changes","waiting","waiting_detail"}`, every key present (null where it does
/// not apply); message is an entry with the keys of `inbox --json`, task the task now (as in
/// `tasks --json`), changes each changed key with its from and to; waiting and waiting_detail
/// are what `status --json` says of the member (`waiting` events).
///
/// --event waiting also reads the members' transcripts (as `status` does) and tells each time a
/// member starts or stops waiting for a reason: rate_limited, overloaded, api_error,
/// no_response, stalled, dead, permission, plan, blocked (`teamctl status --help` says what each
/// means); `waiting` is null when the member moves again. Only the change is told, once.
///
/// Exit codes: 0 when --count events were seen (or at --timeout without --count), 3 when
/// --timeout passed before --count was reached, 130 on Ctrl-C; a closed pipe ends it quietly
/// with 0.
#[derive(Debug, Args)]
#[command(after_long_help = "Events:
  message         a new entry in an inbox (to = the inbox's owner, from, id, message = the
                  entry)
  consumed        an entry left an inbox: its reader took it (current Claude Code)
  read            an entry's read became true (older Claude Code)
  task_created    a task file appeared
  task_updated    a task file changed (changes lists each changed key with from and to)
  task_deleted    a task file went
  member_joined   a member entry in config.json appeared
  member_left     a member entry went
  member_updated  a member entry changed (e.g. isActive)
  waiting         a member started or stopped waiting for a reason (only with --event waiting:
                  it reads the transcripts too; waiting = the reason, null when it moves again)
  needs_human     a person is needed, once per cause, and again when the cause clears (only
                  with --event needs_human): a permission or plan request waiting longer than
                  --after, a member dead with work waiting, stalled inside a turn, out of
                  API retries or never reporting idle, an inbox
                  nobody reads holding messages, or a team whose tasks are open while every
                  teammate is idle and nobody leads it; need = {cause, member, key, since,
                  todo, cleared}

Examples:
  teamctl watch                                  # everything, as it happens
  teamctl watch ops --from alice --event message --count 1 --timeout 10m --json
  teamctl watch --event task_updated --json | jq -c '.changes'
  # a notification when a teammate asks for permission, or a task completes
  teamctl watch --event message --type permission_request --type sandbox_permission_request \\
      --exec 'notify-send \"$TEAMCTL_TEAM\" \"$(jq -r .from) asks for permission\"'
  teamctl watch --task-status completed --exec 'jq -r .task.subject >> done.txt'
  # a line whenever a member gets rate-limited, stalls, or dies with work waiting
  teamctl watch --event waiting --json | jq -c '{member, waiting, waiting_detail}'
  # one notification when a person is actually needed (not one per message)
  teamctl watch --event needs_human --json | jq -r 'select(.need.cleared | not) | .need.todo'")]
pub(crate) struct WatchArgs {
    /// Only these members' inboxes [default: every inbox]
    #[arg(value_name = "MEMBER")]
    members: Vec<String>,

    /// First print what is there now, as events
    #[arg(long)]
    existing: bool,

    /// needs_human: a permission or plan request waiting this long needs a person
    #[arg(long, value_name = "DURATION", default_value = "1m")]
    #[arg(help = "needs_human: a request waiting this long", long_help)]
    after: String,

    /// Stop after N matching events (exit 0)
    #[arg(long, value_name = "N")]
    count: Option<usize>,

    /// Stop after this long; exit 3 if --count was not reached
    #[arg(long, value_name = "DURATION")]
    timeout: Option<String>,

    /// Only message events from this sender
    #[arg(long, value_name = "NAME")]
    from: Option<String>,

    /// Only these kinds of events (repeatable)
    #[arg(long, value_name = "KIND", value_parser = PossibleValuesParser::new(Kind::names()))]
    #[arg(help = "Only these kinds of events (repeatable)", long_help)]
    event: Vec<String>,

    /// Only message events carrying this frame type (or `message`/`protocol`); repeatable: any
    /// of them
    #[arg(long = "type", value_name = "TYPE", value_parser = type_values())]
    frame: Vec<String>,

    /// Only task events that bring a task to this status: created with it, or updated to it
    #[arg(long, value_name = "STATUS", value_parser = PossibleValuesParser::new(STATUSES))]
    #[arg(help = "Only task events that bring a task to this status", long_help)]
    task_status: Option<String>,

    /// Run CMD (with `sh -c`) once per event, one at a time, in order: the event's JSON line on
    /// its standard input, TEAMCTL_EVENT and TEAMCTL_TEAM in its environment
    #[arg(long, value_name = "CMD")]
    #[arg(
        help = "Run CMD (with `sh -c`) once per event, the event on its stdin",
        long_help
    )]
    exec: Option<String>,

    /// How long one run of --exec may take before its process group is killed
    #[arg(long, value_name = "DURATION", default_value = "30s")]
    #[arg(help = "How long one run of --exec may take", long_help)]
    exec_timeout: String,

    /// Poll every MS milliseconds instead of using file notifications
    #[arg(long, value_name = "MS")]
    poll: Option<u64>,

    #[command(flatten)]
    otel: OtelArgs,
}

pub(crate) fn run(ctx: &Ctx, args: WatchArgs) -> Result<()> {
    otel::start("watch", args.otel.otel_content);
    let only = if args.members.is_empty() {
        None
    } else {
        Some(
            args.members
                .iter()
                .map(|m| MemberName::parse(m))
                .collect::<Result<Vec<_>>>()?,
        )
    };
    let deadline = deadline(args.timeout.as_deref())?;
    let filter = Filter {
        events: args.event.iter().filter_map(|e| Kind::parse(e)).collect(),
        from: args.from.clone(),
        types: args
            .frame
            .iter()
            .map(|t| t.parse())
            .collect::<Result<Vec<TypeFilter>>>()?,
        task_status: args.task_status.clone(),
    };
    let exec_timeout = time::parse_duration(&args.exec_timeout)?;
    let team = ctx.team()?;
    // Zero events asked for: all of them are seen already.
    if args.count == Some(0) {
        return Ok(());
    }
    let hooks = args
        .exec
        .clone()
        .map(|cmd| Hooks::start(cmd, exec_timeout, team.name.to_string()));
    // Why members do not move (`--event waiting`), and when a person is needed (`--event
    // needs_human`), need their transcripts too: the team is followed with its reader then.
    let reasons = args.event.iter().any(|e| e == "waiting");
    let needs = args
        .event
        .iter()
        .any(|e| e == "needs_human")
        .then(|| time::parse_duration(&args.after))
        .transpose()?;
    let (mut watch, existing) = Watch::new(team.clone(), only.clone(), ctx.clock());
    otel::members(&watch);
    let mut seen = 0;
    let json = ctx.out.json;
    let mut emit = |changes: Changes| -> Result<bool> {
        for w in &changes.warnings {
            warn(w);
        }
        otel::changes(&changes);
        let mut out = std::io::stdout().lock();
        for ev in changes.events.iter().filter(|e| filter.matches(e)) {
            if let Some(h) = &hooks {
                h.send(ev);
            }
            if json {
                crate::cli::output::write_json(&mut out, ev)?;
            } else {
                writeln!(out, "{}", human(ev))?;
            }
            out.flush()?;
            seen += 1;
            if args.count.is_some_and(|n| seen >= n) {
                return Ok(true);
            }
        }
        Ok(false)
    };
    let poll = args.poll.map(Duration::from_millis);
    let clock = || ctx.clock();
    let followed = if args.existing && emit(existing)? {
        Ok(true)
    } else if reasons || needs.is_some() {
        let watching = Watching {
            reasons,
            needs,
            only,
            ..Watching::default()
        };
        let (mut f, warnings) =
            Following::new(team, poll, ctx.records.clone(), watching, ctx.clock());
        for w in warnings {
            warn(&w);
        }
        // Reads the transcripts once, and wakes on their folders from here on.
        f.start_spend();
        f.follow(deadline, &clock, &mut emit)
    } else {
        watch.follow(poll, deadline, &clock, &mut emit)
    };
    // Every event seen reaches the hook, once, before the watch ends (a closed stdout too).
    if let Some(h) = hooks {
        h.finish();
    }
    match (followed?, args.count) {
        (false, Some(n)) => Err(Error::Timeout(format!(
            "saw {seen} of {n} events before --timeout {}",
            args.timeout.unwrap_or_default()
        ))
        .into()),
        _ => Ok(()),
    }
}

/// `--exec`: a worker that runs the hook once per event, one at a time, in the order sent, while
/// the watch goes on reading (a slow hook must not make it miss a message that comes and goes
/// meanwhile).
struct Hooks {
    tx: mpsc::Sender<(&'static str, String, Vec<u8>)>,
    worker: thread::JoinHandle<()>,
}

impl Hooks {
    fn start(cmd: String, timeout: Duration, team: String) -> Hooks {
        let (tx, rx) = mpsc::channel::<(&'static str, String, Vec<u8>)>();
        let worker = thread::spawn(move || {
            for (kind, label, line) in rx {
                // The hook's output goes to stderr: stdout is the event stream.
                let err = || {
                    std::io::stderr()
                        .as_fd()
                        .try_clone_to_owned()
                        .map_or(Stdio::null(), Stdio::from)
                };
                let env = [("TEAMCTL_EVENT", kind), ("TEAMCTL_TEAM", team.as_str())];
                let running = match hook::spawn(&cmd, &env, line, err(), err()) {
                    Ok(r) => r,
                    Err(e) => {
                        warn(&format!("{e:#} (event {label})"));
                        continue;
                    }
                };
                signals::hook_group(running.pgid());
                let (ended, took) = running.wait(timeout);
                signals::hook_group(0);
                let why = match ended {
                    Ended::Exited(0) => continue,
                    Ended::Exited(c) => format!("exited with status {c}"),
                    Ended::Signaled(s) => format!("was ended by signal {s}"),
                    Ended::TimedOut => format!(
                        "ran past --exec-timeout ({:.1} s) and its process group was killed",
                        took.as_secs_f64()
                    ),
                    Ended::Stopped => "was stopped".to_string(),
                };
                warn(&format!("--exec {why} (event {label}); the watch goes on"));
            }
        });
        Hooks { tx, worker }
    }

    fn send(&self, ev: &Event) {
        let mut line = Vec::new();
        if crate::cli::output::write_json(&mut line, ev).is_err() {
            return;
        }
        let id: String = ev.id.as_deref().unwrap_or("").chars().take(8).collect();
        let label = format!("{} {id}", ev.event).trim_end().to_string();
        let _ = self.tx.send((ev.event.as_str(), label, line));
    }

    /// Waits until the hook has run for every event sent.
    fn finish(self) {
        drop(self.tx);
        let _ = self.worker.join();
    }
}

/// `10:00:01  message         alice → ops  #abcd1234  summary`
fn human(e: &Event) -> String {
    let time = e.at.get(11..19).unwrap_or(&e.at);
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    let detail = match e.event {
        Kind::Message | Kind::Consumed | Kind::Read => {
            let msg = e.message.as_ref();
            let text = msg
                .and_then(|m| m.get("text"))
                .and_then(|t| t.as_str())
                .unwrap_or("");
            let preview = match (
                Frame::decode(text),
                msg.and_then(|m| m.get("summary")).and_then(|v| v.as_str()),
            ) {
                (Some(f), _) => format!("[{}]", f.frame_type),
                (None, Some(sum)) => sum.to_string(),
                (None, None) => first_line(text, 60),
            };
            let short: String = s(&e.id).chars().take(8).collect();
            format!("{} → {}  {short}  {preview}", s(&e.from), s(&e.to))
        }
        Kind::TaskCreated | Kind::TaskDeleted | Kind::TaskUpdated => {
            let subject = e
                .task
                .as_ref()
                .and_then(|t| t.get("subject"))
                .and_then(|v| v.as_str())
                .unwrap_or("");
            let mut line = format!("#{}  {subject}", s(&e.id));
            if let Some(ch) = &e.changes {
                line.push_str(&format!("  ({})", describe(ch)));
            }
            line
        }
        Kind::Waiting => {
            let message = e
                .waiting_detail
                .as_ref()
                .and_then(|d| d.message.as_deref())
                .map(|m| format!(": {}", first_line(m, 100)))
                .unwrap_or_default();
            match &e.waiting {
                Some(w) => format!("{} is {w}{message}", s(&e.member)),
                None => format!("{} moves again", s(&e.member)),
            }
        }
        Kind::NeedsHuman => match &e.need {
            Some(n) if n.cleared => format!("no longer needed: {}: {}", n.cause, n.todo),
            Some(n) => format!("a person is needed: {}: {}", n.cause, n.todo),
            None => String::new(),
        },
        _ => {
            let mut line = s(&e.member);
            if let Some(ch) = &e.changes {
                line.push_str(&format!("  ({})", describe(ch)));
            }
            line
        }
    };
    // Every field above came from the team's files: one line, controls made visible.
    format!("{time}  {:<15} {}", e.event.as_str(), escape_line(&detail))
}

/// `status: pending → completed, owner: - → alice`
fn describe(changes: &serde_json::Map<String, serde_json::Value>) -> String {
    let show = |v: Option<&serde_json::Value>| match v {
        None | Some(serde_json::Value::Null) => "-".to_string(),
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
    };
    changes
        .iter()
        .map(|(k, ch)| format!("{k}: {} → {}", show(ch.get("from")), show(ch.get("to"))))
        .collect::<Vec<_>>()
        .join(", ")
}
