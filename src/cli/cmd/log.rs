//! `teamctl log`: a member's transcript as a readable story, live with --follow.

use std::io::Write;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use teamctl::observe::log::{Filter, LogLine, MemberLog};
use teamctl::store::paths::MemberName;
use teamctl::time::parse_since;

use crate::cli::args::deadline;
use crate::cli::context::Ctx;
use crate::cli::output::{log_line, warn, write_json};

/// Show what a member did: its prompts, messages, text and tool calls, from its transcript
///
/// Reads MEMBER's Claude Code session transcripts ($CLAUDE_CONFIG_DIR/projects/…, read-only;
/// the lead is team-lead) and prints them as a story, one line per event, in time order: the
/// prompts and team messages it received, the text it wrote, each tool call (the tool and a
/// summary of its input: the command, the file, the pattern) and its result (ok or error, and
/// its first line), and errors. A member restarted under a new session has several
/// transcripts; they are shown one after the other.
///
/// --follow keeps printing events as they are written (file notifications, or --poll): a line
/// within milliseconds of Claude Code's write, like `tail -f`. It ends at Ctrl-C, at --timeout,
/// or when the team is deleted. Without --since or -n it starts with the last 10 events.
///
/// Everything shown comes from the teammate: human output shows control characters as
/// escapes; --json keeps the text exact. With --json: JSON Lines, one object per event,
/// flushed per line: {"schema_version":1,"at","member","session_id","kind","tool","summary",
/// "text","is_error"}, kind one of prompt, message, text, tool_use, tool_result, error; text is
/// the whole prompt, message, text, result or error (a tool call's input as JSON); is_error is
/// true or false for tool results, true for errors, null otherwise.
///
/// Exit codes: 0 (also at --timeout, and for a member without a transcript yet, with a warning),
/// 1 an unknown member, 2 usage, 130 Ctrl-C.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl log alice                      # everything alice did
  teamctl log alice -n 20                # the last 20 events
  teamctl log team-lead --since 10m --follow
  teamctl log alice --json | jq -r 'select(.kind == \"tool_use\") | .summary'")]
pub(crate) struct LogArgs {
    /// The member (`team-lead` for the lead)
    #[arg(value_name = "MEMBER")]
    member: String,

    /// Only events since then: an age (10m, 2h) or a time (RFC 3339)
    #[arg(long, value_name = "DUR|TIME")]
    since: Option<String>,

    /// Only the last N events (of the history, with --follow)
    #[arg(short = 'n', long = "lines", value_name = "N")]
    lines: Option<usize>,

    /// Keep printing events as they are written
    #[arg(short, long)]
    follow: bool,

    /// With --follow: stop after this long (exit 0)
    #[arg(long, value_name = "DURATION", requires = "follow")]
    timeout: Option<String>,

    /// With --follow: poll every MS milliseconds instead of using file notifications
    #[arg(long, value_name = "MS", requires = "follow")]
    #[arg(help = "With --follow: poll every MS milliseconds", long_help)]
    poll: Option<u64>,
}

pub(crate) fn run(ctx: &Ctx, args: LogArgs) -> Result<()> {
    MemberName::parse(&args.member)?;
    let since = args
        .since
        .as_deref()
        .map(|s| parse_since(s, ctx.now))
        .transpose()?;
    let deadline = deadline(args.timeout.as_deref())?;
    let team = ctx.team()?;
    let mut log = MemberLog::open(team, &args.member)?;
    for w in log.take_warnings() {
        warn(&w);
    }
    if log.files().is_empty() && !args.follow {
        warn(&format!("no transcript of {} found yet", args.member));
    }
    let json = ctx.out.json;
    let last = match (args.lines, since, args.follow) {
        (None, None, true) => Some(10),
        (n, _, _) => n,
    };
    let print = |l: &LogLine| -> Result<()> {
        let mut out = std::io::stdout().lock();
        if json {
            write_json(&mut out, l)?;
        } else {
            writeln!(out, "{}", log_line(l))?;
        }
        out.flush()?;
        Ok(())
    };
    log.history(Filter { since, last }, &mut |l| print(l))?;
    for w in log.take_warnings() {
        warn(&w);
    }
    if args.follow {
        log.follow(
            args.poll.map(Duration::from_millis),
            deadline,
            &mut |l| print(l).map(|()| false),
            &mut |w| warn(w),
        )?;
    }
    Ok(())
}
