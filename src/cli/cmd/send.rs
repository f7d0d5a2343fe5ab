//! `teamctl send`: put a message into a teammate's inbox.

use std::time::{Duration, Instant};

use anyhow::Result;
use clap::Args;
use clap::builder::PossibleValuesParser;
use serde::Serialize;
use teamctl::Error;
use teamctl::store::Entry;
use teamctl::team::mailbox::{self, Delivery, DeliveryState, SendRequest, Text};

use crate::cli::compose::{Words, message_text, recipient_and_text, sender};
use crate::cli::context::Ctx;
use crate::cli::env;

const COLORS: [&str; 8] = [
    "red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan",
];

/// Send a message to a teammate's inbox
///
/// Appends one entry to teams/<team>/inboxes/<TO>.json exactly as Claude Code writes it: under
/// the inbox's lock directory, atomically (temp file + rename), read back before the lock is
/// released. A teammate's Claude Code picks it up within about a second. TEXT comes from the
/// argument, or from stdin when it is `-` or absent and stdin is not a terminal (trailing
/// newlines dropped, as `$(...)` does). With --all, every member in config.json except the
/// sender gets it, one locked write each: a failure for one recipient is reported, the others
/// still get the message, and the exit code is then 1.
///
/// A recipient that is not a member of config.json fails with "did you mean …?" unless --force:
/// Claude Code would silently create a phantom inbox that nobody reads. Also refused: an empty
/// message; a session-* team whose config.json is gone (Claude Code treats it as deleted and
/// removes anything written to it); frames only Claude Code itself may write (idle_notification,
/// teammate_terminated, task_assignment, task_completed, shutdown_rejected, shutdown_response,
/// mode_set_request, team_permission_update); and, exit 2 with nothing written unless --force,
/// writing as team-lead in a team teamctl does not lead (that would speak for its lead) or as
/// system (Claude Code itself) anywhere (docs/security.md, "Impersonation").
///
/// Replies: Claude Code 2.1.332 teammates can reply only to names that are members in the team's
/// config.json, never to user, system or main, and to team-lead only as the real lead. In a team
/// teamctl leads you are that lead, so replies reach you. Elsewhere, send under your own name
/// and join: `teamctl send --join --from ops alice "…"`; replies then land in inboxes/ops.json
/// (`teamctl inbox ops`). --join adds your identity to config.json as a member (Claude Code's
/// member shape, under the config.json.lock directory, keeping every other key and member as
/// it was) and creates your inbox; already a member, nothing is written; a reserved name (main,
/// team-lead, user, system) is refused (exit 2) with what to use instead.
///
/// Every message written is also recorded in teamctl's sent log (see `teamctl inbox --sent`).
/// With --wait, waits until the recipient has taken the message (removed it from its inbox, or
/// marked it read on older Claude Code): prints `delivered …` and exits 0, or says it is still
/// pending and exits 3.
///
/// Prints `sent <id> to <to> (<inbox path>)`. When teammates cannot answer the sender (the
/// default user, a reserved name, a name that is not a member of config.json) the message is
/// still sent, and `hint: teammates cannot answer you: …` on stderr says why and what to do (the
/// reason `status` shows on its `you:` line). With --json: `{"schema_version":1,"team","to",
/// "inbox","message":{the entry as written},"id","written","delivery"}`; with --all:
/// `{"schema_version":1,"team","deliveries":[{"to","inbox","message","id","written",
/// "delivery"}]}`. "written" is false when --idempotency-key found the message already sent
/// ("message" is then the entry still in the inbox, or null when only the sent log still knows
/// it); "delivery" is "pending", "read" or "consumed" with --wait, else null.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl send alice \"Do not touch auth.ts\"
  teamctl send --join --from ops alice \"Reply to ops when done\"
  git log -1 | teamctl send bob --summary \"latest commit\"
  teamctl send --all \"Stand-up in 5 minutes\" --from ops
  teamctl send alice \"nightly build failed\" --idempotency-key build-$(date +%F)")]
pub(crate) struct SendArgs {
    /// Recipient: a member of the team's config.json (see --force)
    #[arg(value_name = "TO")]
    to: Option<String>,

    /// Message text; read from stdin when it is `-` or absent and stdin is not a terminal
    #[arg(value_name = "TEXT")]
    text: Option<String>,

    /// Sender name written into the message (your identity) [default: team-lead in a team
    /// teamctl leads, else user]
    #[arg(long, value_name = "NAME", env = env::FROM)]
    #[arg(help = "Sender name in the message (your identity)", long_help)]
    from: Option<String>,

    /// Short preview shown by Claude Code [default: the first line, cut at a word to about 60
    /// characters; none for protocol frames, as Claude Code writes them]
    #[arg(long, value_name = "TEXT")]
    #[arg(help = "Short preview shown by Claude Code", long_help)]
    summary: Option<String>,

    /// Sender colour [default: the sender's colour in config.json, if any]
    #[arg(long, value_name = "COLOR", value_parser = PossibleValuesParser::new(COLORS))]
    #[arg(help = "Sender colour", long_help)]
    color: Option<String>,

    /// Send to every member in config.json except the sender (then the only argument is TEXT)
    #[arg(long)]
    #[arg(
        help = "Send to every member in config.json except the sender",
        long_help
    )]
    all: bool,

    /// Write even if the recipient is not a member of config.json, or as team-lead in a team
    /// teamctl does not lead, or as system
    #[arg(long)]
    #[arg(
        help = "Write to a non-member, as team-lead or as system anyway",
        long_help
    )]
    force: bool,

    /// Join the team first: add your identity (--from) to config.json as a member, so that
    /// teammates can reply to you (reserved names are refused)
    #[arg(long)]
    #[arg(
        help = "Join the team first as --from, so that teammates can reply to you",
        long_help
    )]
    join: bool,

    /// Make the message id deterministic (docs/design.md, "Message ids"): a send whose id is
    /// already in the inbox, or in the sent log (the recipient may have consumed the first copy),
    /// writes nothing, says so and exits 0, so a script can retry safely
    #[arg(long, value_name = "KEY")]
    #[arg(
        help = "Make the message id deterministic: a retry writes nothing",
        long_help
    )]
    idempotency_key: Option<String>,

    /// Wait until the recipient has taken the message (exit 3 if it has not by then); without a
    /// value, 2m
    #[arg(long, value_name = "DURATION", num_args = 0..=1, default_missing_value = "2m",
          require_equals = true)]
    #[arg(
        help = "Wait until the recipient has taken the message (exit 3 if not)",
        long_help
    )]
    wait: Option<String>,
}

#[derive(Serialize)]
struct Single<'a> {
    schema_version: u32,
    team: &'a str,
    #[serde(flatten)]
    delivery: DeliveryJson<'a>,
}

#[derive(Serialize)]
struct Many<'a> {
    schema_version: u32,
    team: &'a str,
    deliveries: Vec<DeliveryJson<'a>>,
}

#[derive(Serialize)]
struct DeliveryJson<'a> {
    to: &'a str,
    inbox: String,
    message: Option<&'a Entry>,
    id: &'a str,
    written: bool,
    delivery: Option<DeliveryState>,
}

impl<'a> DeliveryJson<'a> {
    fn new((d, state): &'a (Delivery, Option<DeliveryState>)) -> Self {
        DeliveryJson {
            to: &d.to,
            inbox: d.inbox.display().to_string(),
            message: d.entry.as_ref(),
            id: &d.id,
            written: d.written,
            delivery: *state,
        }
    }
}

pub(crate) fn run(ctx: &Ctx, args: SendArgs) -> Result<()> {
    let (to, text) = recipient_and_text(
        args.all,
        args.to,
        args.text,
        &Words {
            text: "message",
            recipient: "recipient",
            synopsis: "teamctl send <TO> [TEXT]",
        },
    )?;
    let text = message_text(text)?;
    let wait = args
        .wait
        .as_deref()
        .map(teamctl::time::parse_duration)
        .transpose()?;
    let color = args.color.map(|c| c.parse()).transpose()?;
    let text = Text::new(text)?;
    let (team, from) = sender(ctx, args.from.as_deref(), args.join, args.force)?;
    let (recipients, unaddressable) = match to {
        Some(to) => (vec![to], Vec::new()),
        None => team.all_recipients(&from)?,
    };
    let mut deliveries = Vec::new();
    let mut first_error = None;
    // A member whose name breaks the naming rules has no inbox teamctl may write; the others
    // still get the message, and the exit code says not everyone did.
    for name in &unaddressable {
        let e = anyhow::anyhow!(
            "member {} in config.json has a name that breaks the naming rules, so it has no \
             inbox teamctl may write",
            teamctl::store::paths::quote(name)
        );
        crate::cli::output::warn(&format!("{e:#}"));
        first_error.get_or_insert(e);
    }
    for to in recipients {
        let req = SendRequest {
            to: to.clone(),
            from: from.clone(),
            text: text.clone(),
            summary: args.summary.clone(),
            color,
            force: args.force,
            idempotency_key: args.idempotency_key.clone(),
        };
        match mailbox::send(&team, &req, ctx.now, &ctx.lock, ctx.records.sent_log()) {
            Ok(d) => {
                if let Some(e) = &d.log_error {
                    crate::cli::output::warn(e);
                }
                if !ctx.out.json {
                    ctx.out.line(&human(&d))?;
                }
                deliveries.push((d, None));
            }
            // With --all, one bad inbox must not stop the others; the first error decides.
            Err(e) if args.all => {
                crate::cli::output::warn(&format!("could not send to {to}: {e:#}"));
                first_error.get_or_insert(e);
            }
            Err(e) => return Err(e),
        }
    }
    // Sent as someone the teammates cannot answer (`user`, a non-member): say so, as `status`
    // does, rather than let the replies silently go nowhere.
    if deliveries.iter().any(|(d, _)| d.written)
        && let Some(reason) = mailbox::unreachable_reason(&team, from.as_str())
    {
        crate::cli::output::hint(&format!("teammates cannot answer you: {reason}"));
    }
    let pending = match wait {
        Some(wait) => wait_taken(ctx, &mut deliveries, wait)?,
        None => Vec::new(),
    };
    if ctx.out.json {
        print_json(ctx, team.name.as_str(), args.all, &deliveries)?;
    }
    if let Some(e) = first_error {
        return Err(e.context("not every recipient got the message"));
    }
    if !pending.is_empty() {
        return Err(Error::Timeout(format!(
            "still pending after {}: {} has not taken the message",
            args.wait.unwrap_or_default(),
            teamctl::store::paths::shown_list(&pending)
        ))
        .into());
    }
    Ok(())
}

/// Waits up to `wait` for each message written to be taken (`--wait`), telling each; the
/// recipients that have not taken theirs.
fn wait_taken(
    ctx: &Ctx,
    deliveries: &mut [(Delivery, Option<DeliveryState>)],
    wait: Duration,
) -> Result<Vec<String>> {
    let mut pending = Vec::new();
    let deadline = Instant::now() + wait;
    for (d, state) in deliveries.iter_mut() {
        let now = mailbox::wait_delivered(&d.inbox, &d.id, deadline, Duration::from_millis(20))?;
        if !ctx.out.json {
            ctx.out.line(&match now {
                DeliveryState::Pending => format!("{} has not taken {} yet", d.to, d.id),
                DeliveryState::Read => format!("delivered {} to {} (marked read)", d.id, d.to),
                DeliveryState::Consumed => format!("delivered {} to {}", d.id, d.to),
            })?;
        }
        if now == DeliveryState::Pending {
            pending.push(d.to.clone());
        }
        *state = Some(now);
    }
    Ok(pending)
}

/// `--json`: one document for one recipient, or the list of deliveries with `--all`.
fn print_json(
    ctx: &Ctx,
    team: &str,
    all: bool,
    deliveries: &[(Delivery, Option<DeliveryState>)],
) -> Result<()> {
    if all {
        let deliveries = deliveries.iter().map(DeliveryJson::new).collect();
        ctx.out.json(&Many {
            schema_version: 1,
            team,
            deliveries,
        })?;
    } else if let Some(d) = deliveries.first() {
        ctx.out.json(&Single {
            schema_version: 1,
            team,
            delivery: DeliveryJson::new(d),
        })?;
    }
    Ok(())
}

fn human(d: &Delivery) -> String {
    let id = crate::cli::term::escape_line(&d.id);
    let inbox = d.inbox.display().to_string();
    let inbox = crate::cli::term::escape_line(&inbox);
    match (d.written, &d.entry) {
        (true, _) => format!("sent {id} to {} ({inbox})", d.to),
        (false, Some(_)) => {
            format!("already sent {id} to {}: nothing written ({inbox})", d.to)
        }
        (false, None) => format!(
            "already sent {id} to {} (in the sent log; no longer in the inbox): nothing written",
            d.to
        ),
    }
}
