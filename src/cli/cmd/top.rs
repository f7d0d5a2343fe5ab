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
use crate::cli::output::warn;
use crate::cli::tui;

/// Watch a team live: members, tasks, messages and requests, as its files change
///
/// A full-screen view of one team, redrawn as its files change (inotify as `watch`, or --poll
/// MS), over `ssh -t` and inside tmux alike. It shows:
/// the members, the lead first: their state (as `status`), why they wait (as `status`:
/// permission or plan, a request of theirs waits for the lead; blocked, every open task they
/// own is blocked; stalled, inside a turn with their transcript quiet for --stall-after), what
/// they are DOING (from their Claude Code transcript: the tool call in progress with a summary
/// of its input, or the last text they wrote, and how long ago), what they have cost (COST;
/// their tokens when a model has no price), unread messages in their inbox, tasks in
/// progress/owned, how long since their last event, whether their pane or process is alive;
/// the tasks as a board (pending, with what blocks them; in progress, with the owner;
/// completed), with counts; the requests waiting for the lead (permission, plan, sandbox; as
/// `pending`), highlighted, when there are any; the team's newest messages across inboxes,
/// newest last, protocol frames named (`[permission_request] Bash: npm test`), ● for one still
/// unread in its inbox. Current Claude Code deletes a message from its inbox once delivered:
/// top keeps every message it saw arrive, and starts with what the inboxes hold and what
/// teamctl's sent log recorded. A header gives the team, its lead, its age, its total cost (as
/// `status`), the last change, problems and your identity; a footer the keys (below). Times
/// are UTC.
///
/// Enter on a member opens its story: its transcript as `teamctl log MEMBER --follow` prints
/// it, growing as the member works (Esc back); i opens its inbox instead, every message in
/// full.
///
/// A message typed with m is sent exactly as `send` sends it (your identity, the inbox's lock,
/// the read-back); a request is answered with a or d, then y, exactly as `approve`/`deny` answer
/// it, and refused as they refuse in a team teamctl does not lead.
///
/// Teammate text goes through the same neutralisation as all human output. NO_COLOR turns
/// colour off (bold and reverse stay). It fits 80x24 (a header part that does not fit is left
/// out whole; DOING is the column that narrows; long text is cut) and redraws on resize. The
/// terminal is given back (raw mode off, main screen, cursor shown) on q, on SIGINT, SIGTERM
/// and SIGHUP (after a write in progress finished), on a panic and when a write to the
/// terminal fails. An idle team costs no CPU: besides file changes, top wakes once a second,
/// to age the times on screen and to notice a pane or the lead's process gone (it asks tmux
/// only when a member has a pane). The transcripts' folders are watched too; as a working
/// member appends to its transcript many times a second, such changes are read at most four
/// times a second (a message or a task change at once), only what was appended is parsed (the
/// index `status` keeps), and a frame is drawn only when something on it changed.
///
/// Needs a terminal: with stdout not one, or TERM=dumb, it exits 2 (use `status` for a
/// snapshot, `watch` for a stream of changes, or --once). --once prints one frame as plain
/// text and exits: the terminal's width or --width N, tall enough for everything or --height N.
/// Transcripts or folders it skipped (a symlink, a FIFO where a transcript belongs) are
/// warnings on stderr, as with `status`.
///
/// With --json: the data of one frame as one document (no terminal needed):
/// `{"schema_version":1,"team":{"name","description","lead","lead_alive","teamctl_leads",
/// "created_at","cost_usd","tokens","last_change_at"},"members":[{"name","lead","color",
/// "state","waiting","doing","activity":{"at","kind","tool","summary"},"cost_usd",
/// "cost_source","tokens":{"input","output","cache_read","cache_creation"},"unread",
/// "tasks_in_progress","tasks_owned","last_event_at","last_event_kind","process_alive",
/// "in_config","context":{"used","window","percent"},"worktree":{"path","branch","changed"}}],
/// "tasks":{"pending","in_progress","completed":[{"id","subject","owner",
/// "active_form","blocked_by"}],"counts":{as status}},"messages":[{"at","from","to","id",
/// "frame","preview","text","delivery","source"}],"requests":[{"request_id","kind","from",
/// "at","summary","request":{as pending}}],"warnings":[],"misaddressed":[as status]}`. waiting
/// is permission, plan, blocked, stalled or null; doing is the activity in one line (`Bash: npm
/// test`, `text: All done`); activity, cost_usd, cost_source, tokens, context and worktree are
/// as in `status --json` (null without a transcript, or without a worktree; the CONTEXT and
/// BRANCH columns show when there is room), and the team's cost_usd and tokens are status's
/// totals; blocked_by the open blockers; delivery unread, read (older Claude Code) or delivered
/// (taken out of its inbox); source inbox, or sent_log for a message known only from teamctl's
/// sent log (its text is then null); misaddressed the inboxes no member reads, as `status
/// --json` lists them (the screen does not show them: `teamctl status` does).
///
/// Exit codes: 0 on q or Ctrl-C, 2 without a terminal, 128+n on signal n.
#[derive(Debug, Args)]
#[command(after_long_help = "Keys:
  ↑ ↓  j k     select a member (in the other panes: select a request, or scroll)
  Tab S-Tab    next / previous pane: members, tasks, requests, messages
  Enter        the selected member's story: its transcript, live, as `log --follow`
               (a request: in full)
  i            the selected member's inbox, every message in full (l: its story)
  Esc          back
  m            write to the selected member, one line, Enter sends
  a            approve the selected request (y confirms)
  d            deny it, with a reason (Enter, then y confirms)
  PgUp PgDn    scroll by ten; g G to the top / bottom
  ?            the keys
  q  Ctrl-C    quit

Examples:
  teamctl top
  teamctl top --team review-42 --idle-after 2m
  teamctl top --once --width 100          # one frame, for a script or a bug report
  ssh -t build-box teamctl top            # over ssh (-t: a terminal)")]
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
    #[arg(help = "With --once: the frame's height", long_help)]
    height: Option<u16>,

    /// A member with no event for this long is idle
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    idle_after: String,

    /// A member inside a turn whose transcript has not grown for this long is stalled
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    #[arg(help = "A member silent this long in a turn is stalled", long_help)]
    stall_after: String,

    /// Poll every MS milliseconds instead of using file notifications
    #[arg(long, value_name = "MS")]
    poll: Option<u64>,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    #[serde(flatten)]
    view: &'a View,
    misaddressed: Vec<teamctl::observe::misaddressed::Misaddressed>,
}

pub(crate) fn run(ctx: &Ctx, args: TopArgs) -> Result<()> {
    let idle_after = time::parse_duration(&args.idle_after)?;
    let stall_after = time::parse_duration(&args.stall_after)?;
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
        stall_after,
        colors: std::env::var_os(env::NO_COLOR).is_none_or(|v| v.is_empty()),
    };
    let team = ctx.team()?;
    if ctx.out.json {
        let misaddressed = teamctl::observe::misaddressed::scan(&team).misaddressed;
        let view = tui::view(ctx, team, &opts)?;
        for w in &view.warnings {
            warn(w);
        }
        return ctx.out.json(&Json {
            schema_version: 1,
            view: &view,
            misaddressed,
        });
    }
    if args.once {
        let width = args.width.unwrap_or_else(|| {
            crossterm::terminal::size()
                .ok()
                .filter(|_| stdout)
                .map_or(80, |(w, _)| w.max(20))
        });
        let (text, warnings) = tui::once(ctx, team, &opts, width, args.height)?;
        for w in &warnings {
            warn(w);
        }
        let text = crate::cli::term::defuse_lines(text.trim_end_matches('\n'));
        return ctx.out.line(&text);
    }
    tui::run(ctx, team, &opts)
}
