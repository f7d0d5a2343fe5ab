//! `teamctl top`: a live view of a team in the terminal.

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use teamctl::error::usage;
use teamctl::observe::top::View;
use teamctl::time;

use crate::cli::context::Ctx;
use crate::cli::env;
use crate::cli::tui;

/// Watch a team live: members, tasks, messages and requests, as its files change
///
/// A full-screen view of one team that follows its files as they change (inotify, or --poll):
/// the members (the lead first) with their state, why they wait (permission, plan, blocked),
/// unread messages, tasks and when they were last seen; the task board (pending, with what
/// blocks them; in progress, with the owner; completed); the requests waiting for the lead,
/// highlighted; and the team's messages, newest last, protocol frames named
/// ([permission_request] Bash: npm test), unread ones marked ●. A message current Claude Code
/// takes out of its inbox stays on screen. Times are UTC.
///
/// Keys: ↑/↓ or j/k select a member; Enter opens its inbox (Esc back); m writes to it, sent as
/// `teamctl send` sends (your identity, the inbox lock, the read-back); Tab moves between panes;
/// on a request, Enter shows it in full, a approves and d denies it (with a reason) after y,
/// as `approve`/`deny` do, refused likewise in a team teamctl does not lead; ? help; q or
/// Ctrl-C quits.
///
/// Teammate text is shown with every control character made visible, as in all human output.
/// NO_COLOR turns colour off. The terminal is given back (raw mode off, main screen, cursor)
/// on q, on SIGINT/SIGTERM/SIGHUP, on a panic and on a failed write. An idle team costs no
/// CPU: besides file changes, top wakes once a second to check panes and age the times shown.
///
/// Needs a terminal: with stdout not a terminal, or TERM=dumb, it exits 2 (use `status` for a
/// snapshot, `watch` for a stream of changes, or --once). --once prints one frame as plain text
/// and exits. With --json: the data of one frame as one document, {"schema_version":1,"team":
/// {"name","description","lead","lead_alive","teamctl_leads","created_at","cost_usd",
/// "last_change_at"},"members":[{"name","lead","color","state","waiting","doing","cost_usd",
/// "unread","tasks_in_progress","tasks_owned","last_event_at","last_event_kind",
/// "process_alive","in_config"}],"tasks":{"pending","in_progress","completed":[{"id",
/// "subject","owner","active_form","blocked_by"}],"counts":{…as status}},"messages":[{"at",
/// "from","to","id","frame","preview","text","delivery","source"}],"requests":[{"request_id",
/// "kind","from","at","summary","request":{…as pending}}],"warnings":[]}. "doing" and
/// "cost_usd" are null until teamctl reads transcripts.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl top
  teamctl top --team review-42 --idle-after 2m
  teamctl top --once --width 100          # one frame, for a script or a bug report
  ssh build-box -t teamctl top            # over ssh (-t: a terminal)")]
pub(crate) struct TopArgs {
    /// Print one frame as plain text and exit (no terminal needed)
    #[arg(long)]
    once: bool,

    /// With --once: the frame's width [default: the terminal's, else 80]
    #[arg(long, value_name = "N", requires = "once",
          value_parser = clap::value_parser!(u16).range(20..=1000))]
    width: Option<u16>,

    /// With --once: the frame's height [default: tall enough to show everything]
    #[arg(long, value_name = "N", requires = "once",
          value_parser = clap::value_parser!(u16).range(6..=1000))]
    height: Option<u16>,

    /// A member with no event for this long is idle
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    idle_after: String,

    /// Poll every MS milliseconds instead of using file notifications
    #[arg(long, value_name = "MS")]
    poll: Option<u64>,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    #[serde(flatten)]
    view: &'a View,
}

pub(crate) fn run(ctx: &Ctx, args: TopArgs) -> Result<()> {
    let idle_after = time::parse_duration(&args.idle_after)?;
    if args.poll == Some(0) {
        return Err(usage("--poll must be at least 1 ms"));
    }
    let live = !args.once && !ctx.out.json;
    let stdout = std::io::stdout().is_terminal();
    if live {
        let dumb = std::env::var(env::TERM).is_ok_and(|t| t == "dumb");
        if !stdout || dumb {
            let why = if dumb {
                "TERM is dumb"
            } else {
                "stdout is not a terminal"
            };
            return Err(usage(format!(
                "top needs a terminal ({why}): use `teamctl status` for a snapshot, \
                 `teamctl watch` for a stream of changes, or `teamctl top --once`"
            )));
        }
    }
    let opts = tui::Options {
        poll: args.poll.map(Duration::from_millis),
        idle_after,
        colors: std::env::var_os(env::NO_COLOR).is_none_or(|v| v.is_empty()),
    };
    let team = ctx.team()?;
    if ctx.out.json {
        let view = tui::view(ctx, team, &opts)?;
        return ctx.out.json(&Json {
            schema_version: 1,
            view: &view,
        });
    }
    if args.once {
        let width = args.width.unwrap_or_else(|| {
            crossterm::terminal::size()
                .ok()
                .filter(|_| stdout)
                .map_or(80, |(w, _)| w.max(20))
        });
        let text = tui::once(ctx, team, &opts, width, args.height)?;
        return ctx.out.line(text.trim_end_matches('\n'));
    }
    tui::run(ctx, team, &opts)
}
