//! `teamctl watch`: follow a team as a stream of events.

use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use clap::builder::PossibleValuesParser;
use teamctl::error::Error;
use teamctl::observe::watch::{EVENT_KINDS, Event, Watch};
use teamctl::store::paths::MemberName;
use teamctl::team::mailbox::TypeFilter;
use teamctl::team::model::{Frame, first_line};

use crate::cli::args::{deadline, type_values};
use crate::cli::context::Ctx;
use crate::cli::output::warn;
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
/// --type one kind of message. To wait for a reply: `teamctl watch ops --from alice --event
/// message --count 1 --timeout 10m --json`.
///
/// With --json: JSON Lines, one object per event, flushed per line:
/// `{"schema_version":1,"event","team","at","to","from","id","member","message","task",
/// "member_entry","changes"}`, every key present (null where it does not apply); message is an
/// entry with the keys of `inbox --json`, task the task now (as in `tasks --json`), changes each
/// changed key with its from and to.
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

Examples:
  teamctl watch                                  # everything, as it happens
  teamctl watch ops --from alice --event message --count 1 --timeout 10m --json
  teamctl watch --event task_updated --json | jq -c '.changes'")]
pub(crate) struct WatchArgs {
    /// Only these members' inboxes [default: every inbox]
    #[arg(value_name = "MEMBER")]
    members: Vec<String>,

    /// First print what is there now, as events
    #[arg(long)]
    existing: bool,

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
    #[arg(long, value_name = "KIND", value_parser = PossibleValuesParser::new(EVENT_KINDS))]
    event: Vec<String>,

    /// Only message events carrying this frame type (or `message`/`protocol`)
    #[arg(long = "type", value_name = "TYPE", value_parser = type_values())]
    frame: Option<String>,

    /// Poll every MS milliseconds instead of using file notifications
    #[arg(long, value_name = "MS")]
    poll: Option<u64>,
}

pub(crate) fn run(ctx: &Ctx, args: WatchArgs) -> Result<()> {
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
    let frame: Option<TypeFilter> = args.frame.as_deref().map(str::parse).transpose()?;
    let team = ctx.team()?;
    let (mut watch, existing) = Watch::new(team, only, ctx.clock());
    let mut seen = 0;
    let json = ctx.out.json;
    let mut emit = |changes: teamctl::observe::watch::Changes| -> Result<bool> {
        for w in &changes.warnings {
            warn(w);
        }
        let mut out = std::io::stdout().lock();
        for ev in changes
            .events
            .iter()
            .filter(|e| matches(e, &args, frame.as_ref()))
        {
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
    if args.existing && emit(existing)? {
        return Ok(());
    }
    let poll = args.poll.map(Duration::from_millis);
    let clock = || ctx.clock();
    let done = watch.follow(poll, deadline, &clock, &mut emit)?;
    match (done, args.count) {
        (false, Some(n)) => Err(Error::Timeout(format!(
            "saw {seen} of {n} events before --timeout {}",
            args.timeout.unwrap_or_default()
        ))
        .into()),
        _ => Ok(()),
    }
}

fn matches(e: &Event, args: &WatchArgs, frame: Option<&TypeFilter>) -> bool {
    if !args.event.is_empty() && !args.event.iter().any(|k| k == e.event) {
        return false;
    }
    if args.from.is_some() && e.from != args.from {
        return false;
    }
    if let Some(f) = frame {
        let Some(msg) = &e.message else { return false };
        let text = msg.get("text").and_then(|t| t.as_str()).unwrap_or("");
        let decoded = Frame::decode(text);
        let ok = match f {
            TypeFilter::Message => decoded.is_none(),
            TypeFilter::Protocol => decoded.is_some(),
            TypeFilter::Frame(t) => decoded.is_some_and(|d| &d.frame_type == t),
        };
        if !ok {
            return false;
        }
    }
    true
}

/// `10:00:01  message         alice → ops  #abcd1234  summary`
fn human(e: &Event) -> String {
    let time = e.at.get(11..19).unwrap_or(&e.at);
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    let detail = match e.event {
        "message" | "consumed" | "read" => {
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
        "task_created" | "task_deleted" | "task_updated" => {
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
        _ => {
            let mut line = s(&e.member);
            if let Some(ch) = &e.changes {
                line.push_str(&format!("  ({})", describe(ch)));
            }
            line
        }
    };
    // Every field above came from the team's files: one line, controls made visible.
    format!("{time}  {:<15} {}", e.event, escape_line(&detail))
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
