//! `teamctl redeliver`: move what was written to an inbox nobody reads to its member.

use anyhow::Result;
use clap::Args;
use serde::Serialize;
use serde_json::Value;
use teamctl::ops::redeliver::{self, Redeliver, Redelivered};
use teamctl::store::moving::Entries;
use teamctl::store::paths::MemberName;
use teamctl::store::{Entry, id};
use teamctl::team::model::first_line;

use crate::cli::context::Ctx;
use crate::cli::term::escape_line as esc;

/// Move messages from an inbox nobody reads to the member they were meant for
///
/// Claude Code up to 2.1.178 creates inboxes/<name>.json when a teammate writes to a name that
/// is no member (a misspelling such as alise, or lead), and no Claude Code process ever reads
/// it (later versions refuse such a send, though 2.1.332 was seen to accept one now and then). `teamctl status` and `teamctl doctor` list these
/// inboxes with the member each most likely meant (the rule of `send`'s "did you mean"); this
/// moves the unread entries of INBOX to that member's inbox, where its Claude Code takes them.
/// Entries marked read: true stay. INBOX is the name in the file name: a member of config.json,
/// and the names Claude Code reserves (team-lead, user, main, system), are refused.
///
/// The member is --to MEMBER, else the suggestion when it is certain: exactly one member is that
/// close, one edit at most from an INBOX name of 4 characters or more, and INBOX never wrote to
/// the team itself (one that did is more likely a member that left config.json). Otherwise it
/// is refused with why, saying to name the member with --to.
///
/// The move is planned with no lock held (INBOX read one entry at a time, the target's new
/// content written ahead), so Claude Code's writers are not kept waiting while a big inbox is
/// read; under the locks INBOX and the target are only compared byte for byte with what was
/// planned from (changed: the locks are let go and the move planned again) and written.
///
/// Exactly once, under both inboxes' lock directories (taken in a fixed order; the second is
/// never waited for more than 100 ms while the first is held): each entry is appended to the
/// target unless it is already there (by id: msg_id, else messageId, else the sha256 of from,
/// timestamp and text) or the sent log says it was moved there before; the target's new content
/// is written to a copy beside it (<inbox>.moving.<8 hex>), the move is recorded in the sent log
/// naming that copy, the copy replaces the target (read back), and only then are the entries
/// removed from INBOX (read back too). A move cut short (a crash, SIGKILL) is made good by
/// running it again: before the rename its copy is still there, so the message moves again;
/// after it, the message is found delivered and only removed from INBOX. A sent log that
/// cannot be written stops the move before the target changes. SIGINT and SIGTERM let the move
/// finish first. Each entry keeps its bytes (JSON.stringify layout). INBOX is emptied, never
/// removed: a Claude Code writer that created the file and waits for its lock would lose its
/// message if it disappeared. A file that does not parse, or a symlink or FIFO in an inbox's
/// place, is refused (exit 1) and left as it is.
///
/// Prints `moved N message(s) from INBOX to MEMBER (<path>)` and one line per message; with
/// nothing unread, `nothing to move`. --dry-run says what would move and writes nothing. Exit 0
/// when moved or nothing to move, 1 on failure, 2 for usage, 3 when a lock stayed held.
///
/// With --json: `{"schema_version":1,"team","inbox","path","to","target","dry_run","moved":[the
/// entries appended],"already_delivered":[the entries only removed from INBOX: the target had
/// them, or the sent log says they were moved before],"kept"}`; kept counts the entries left in
/// INBOX; to and target are null when nothing was unread and no --to was given.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl status                     # lists inboxes nobody reads, with their member
  teamctl redeliver alise            # to the member it certainly meant (alice)
  teamctl redeliver lead --to team-lead
  teamctl redeliver alise --dry-run --json | jq '.moved | length'")]
pub(crate) struct RedeliverArgs {
    /// The inbox nobody reads: the name in its file name (inboxes/<INBOX>.json)
    #[arg(value_name = "INBOX")]
    inbox: String,

    /// The member to move the messages to [default: the one INBOX most likely meant, when that
    /// is certain]
    #[arg(long, value_name = "MEMBER")]
    #[arg(help = "The member to move the messages to", long_help)]
    to: Option<String>,

    /// Say what would move, and write nothing
    #[arg(long)]
    dry_run: bool,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    inbox: &'a str,
    path: String,
    to: Option<&'a str>,
    target: Option<String>,
    dry_run: bool,
    moved: Entries<'a>,
    already_delivered: Entries<'a>,
    kept: usize,
}

pub(crate) fn run(ctx: &Ctx, args: RedeliverArgs) -> Result<()> {
    let inbox = MemberName::parse(&args.inbox)?;
    let to = args.to.as_deref().map(MemberName::parse).transpose()?;
    let team = ctx.team()?;
    let r = redeliver::redeliver(&Redeliver {
        team: &team,
        inbox: &inbox,
        to: to.as_ref(),
        dry_run: args.dry_run,
        lock: &ctx.lock,
        sent_log: ctx.records.sent_log(),
        now: ctx.now,
    })?;
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            inbox: &r.inbox,
            path: r.path.display().to_string(),
            to: r.to.as_deref(),
            target: r.target.as_ref().map(|t| t.display().to_string()),
            dry_run: r.dry_run,
            moved: r.moved.appended(),
            already_delivered: r.moved.already(),
            kept: r.moved.kept,
        });
    }
    // A line at a time: a move of many messages is never held as text.
    for line in human(&r) {
        ctx.out.line(&line)?;
    }
    Ok(())
}

/// What was moved, for people, a line at a time.
fn human(r: &Redelivered) -> Box<dyn Iterator<Item = String> + '_> {
    let nothing = || format!("nothing to move: {}.json holds no unread message", r.inbox);
    let (Some(to), Some(target)) = (&r.to, &r.target) else {
        return Box::new(std::iter::once(nothing()));
    };
    let n = r.moved.appended().len() + r.moved.already().len();
    if n == 0 {
        return Box::new(std::iter::once(nothing()));
    }
    let verb = if r.dry_run { "would move" } else { "moved" };
    let head = format!(
        "{verb} {n} message{} from {} to {to} ({})",
        if n == 1 { "" } else { "s" },
        r.inbox,
        esc(&target.display().to_string())
    );
    let removed = if r.dry_run {
        "would be removed"
    } else {
        "removed"
    };
    let appended = r.moved.appended().iter();
    let already = r.moved.already().iter();
    Box::new(
        std::iter::once(head)
            .chain(appended.map(move |e| format!("  {verb} {}", line(&e))))
            .chain(already.map(move |e| {
                format!(
                    "  already in {to}'s inbox or taken from it (a move cut short), {removed} \
                     from {}.json: {}",
                    r.inbox,
                    line(&e)
                )
            })),
    )
}

/// `<id> from <sender>: <summary or first line>`, escaped.
fn line(e: &Entry) -> String {
    let field = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
    let what = match e.get("summary").and_then(Value::as_str) {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => first_line(field("text"), 60),
    };
    format!(
        "{} from {}: {}",
        esc(&id::entry_id(e)),
        esc(field("from")),
        esc(&what)
    )
}
