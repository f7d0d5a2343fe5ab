//! `teamctl inbox`: read inboxes, filter, and optionally mark read or consume.

use anyhow::{Result, bail};
use chrono::DateTime;
use clap::Args;
use serde::Serialize;
use std::collections::HashMap;

use teamctl::store::paths::MemberName;
use teamctl::store::{self, Entry};
use teamctl::team::config::Team;
use teamctl::team::mailbox::{self, DeliveryState, Filter, InboxRead, Mark};
use teamctl::team::model::MessageView;
use teamctl::team::sentlog::Sent;
use teamctl::time;

use crate::cli::args::type_values;
use crate::cli::context::Ctx;
use crate::cli::env;
use crate::cli::output::{hint, warn};

/// Read a member's inbox (by default your own)
///
/// MEMBER defaults to your identity: the inbox where replies to you land. --all reads every
/// inbox of the team and lists them as one, in time order: oldest first by timestamp; entries
/// with the same timestamp keep inbox-name order, then file order.
///
/// Reads without locking, as Claude Code does, and changes nothing unless asked: --mark-read sets
/// "read": true on the entries shown (old Claude Code's way), --consume removes them (new Claude
/// Code's way). Both take the inbox's lock, re-read it, and touch only the entries shown
/// (matched by their full content); an entry that changed meanwhile is left alone. Entries whose
/// from, text or timestamp is not a string are skipped with a warning on stderr and stay in the
/// file.
///
/// Prints a table of id (first 8 characters), time, from, to and a preview; protocol frames are
/// named in brackets (`[shutdown_request] All tasks are done`). With --json:
/// `{"schema_version":1,"team","messages":[{"id","inbox","to","from","text","summary",
/// "timestamp","color","read","kind","protocol"}],"action","updated"}`, in file order (with
/// --all, in the time order above), every key present. id is the entry's id (its msg_id, else
/// messageId, else a hash: docs/design.md, "Message ids"); inbox and to are the inbox file and
/// the member it belongs to; from, text and timestamp are as written; summary and color as
/// written, or null; read is true only when the entry has "read": true (Claude Code treats a
/// missing read as unread); kind is "message", or "protocol" when text is a Claude Code protocol
/// frame; protocol is the decoded frame (its type and all its fields), or null; action is null,
/// "mark_read" or "consume", and updated how many entries that changed. `ask`, `wait` and
/// `watch` show messages with these keys too.
///
/// --sent lists teamctl's own record of what was sent to this team (the inbox forgets a message
/// once it is taken) with its delivery state now: pending (still in the inbox), read (marked
/// read: older Claude Code) or consumed (gone: taken by its reader). With --json:
/// `{"schema_version":1,"team","sent":[{"id","team","to","from","at","summary","inbox",
/// "idempotency_key","answers","moving","delivery"}]}`, oldest first ("answers": the request id
/// a protocol answer was for, else null; "moving": for a message `redeliver` moved, the copy of
/// the target inbox that carried it, gone once the move happened, else null).
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  teamctl inbox                      # your own inbox (TEAMCTL_FROM, else team-lead or user)
  teamctl inbox --all --unread
  teamctl inbox ops --from alice --since 10m --json | jq -r '.messages[].text'
  teamctl inbox ops --consume        # take the messages out, as Claude Code does")]
pub(crate) struct InboxArgs {
    /// Whose inbox to read [default: yours: team-lead in a team teamctl leads, else user]
    #[arg(value_name = "MEMBER", env = env::FROM, conflicts_with = "all")]
    #[arg(help = "Whose inbox to read [default: yours]", long_help)]
    member: Option<String>,

    /// Read every inbox of the team
    #[arg(long)]
    all: bool,

    /// Only entries not marked read
    #[arg(long)]
    unread: bool,

    /// Only entries from this sender
    #[arg(long, value_name = "NAME")]
    from: Option<String>,

    /// Only entries at or after TIME: RFC 3339, or an age like 10m, 2h, 1d
    #[arg(long, value_name = "TIME")]
    since: Option<String>,

    /// Only the newest N matching entries (with --all: of all inboxes together)
    #[arg(long, value_name = "N")]
    limit: Option<usize>,

    /// Only plain messages, only protocol frames, or one frame type
    #[arg(long = "type", value_name = "TYPE", value_parser = type_values())]
    kind: Option<String>,

    /// Set "read": true on the entries shown (old Claude Code's way of consuming)
    #[arg(long, conflicts_with = "consume")]
    mark_read: bool,

    /// Remove the entries shown from the inbox (new Claude Code's way of consuming)
    #[arg(long)]
    consume: bool,

    /// List what you sent (teamctl's sent log) with each message's delivery state now
    #[arg(long, conflicts_with_all = ["all", "unread", "from", "kind", "mark_read", "consume"])]
    sent: bool,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    messages: Vec<&'a MessageView>,
    action: Option<&'static str>,
    updated: usize,
}

#[derive(Serialize)]
struct SentJson<'a> {
    schema_version: u32,
    team: &'a str,
    sent: Vec<SentRow>,
}

#[derive(Serialize)]
struct SentRow {
    #[serde(flatten)]
    sent: Sent,
    delivery: DeliveryState,
}

fn run_sent(ctx: &Ctx, args: &InboxArgs) -> Result<()> {
    let since = args
        .since
        .as_deref()
        .map(|s| time::parse_since(s, ctx.now))
        .transpose()?;
    let team = ctx.team()?;
    let Some(log) = ctx.records.sent_log() else {
        bail!("no data directory for the sent log: set TEAMCTL_DATA_DIR");
    };
    let mut inboxes: HashMap<String, Option<Vec<Entry>>> = HashMap::new();
    let mut rows = Vec::new();
    for sent in log
        .entries()?
        .into_iter()
        .filter(|s| s.team == team.name.as_str())
    {
        if since.is_some_and(|t| DateTime::parse_from_rfc3339(&sent.at).is_ok_and(|at| at < t)) {
            continue;
        }
        if !inboxes.contains_key(&sent.to) {
            let entries = match MemberName::parse(&sent.to) {
                Ok(m) => store::read_inbox(&team.inbox_path(&m))?,
                Err(_) => None,
            };
            inboxes.insert(sent.to.clone(), entries);
        }
        let delivery = DeliveryState::of(inboxes[&sent.to].as_deref(), &sent.id);
        rows.push(SentRow { sent, delivery });
    }
    if let Some(n) = args.limit {
        rows.drain(..rows.len().saturating_sub(n));
    }
    if ctx.out.json {
        return ctx.out.json(&SentJson {
            schema_version: 1,
            team: team.name.as_str(),
            sent: rows,
        });
    }
    if rows.is_empty() {
        return ctx.out.line("nothing sent to this team yet");
    }
    let mut table = vec![
        ["ID", "TIME", "FROM", "TO", "SUMMARY", "DELIVERY"]
            .map(String::from)
            .to_vec(),
    ];
    for r in rows {
        let time = r.sent.at.replace('T', " ").chars().take(19).collect();
        let short = r.sent.id.chars().take(8).collect();
        let summary = r.sent.summary.unwrap_or_else(|| "-".into());
        table.push(vec![
            short,
            time,
            r.sent.from,
            r.sent.to,
            summary,
            r.delivery.as_str().into(),
        ]);
    }
    ctx.out.table(table)
}

pub(crate) fn run(ctx: &Ctx, args: InboxArgs) -> Result<()> {
    if args.sent {
        return run_sent(ctx, &args);
    }
    let filter = Filter {
        unread: args.unread,
        from: args.from.clone(),
        since: args
            .since
            .as_deref()
            .map(|s| time::parse_since(s, ctx.now))
            .transpose()?,
        kind: args.kind.as_deref().map(str::parse).transpose()?,
        limit: args.limit,
    };
    if let Some(m) = &args.member {
        MemberName::parse(m)?;
    }
    let team = ctx.team()?;
    let member = (!args.all)
        .then(|| MemberName::parse(&args.member.clone().unwrap_or_else(|| ctx.identity(&team))))
        .transpose()?;
    let owners = match &member {
        Some(m) => vec![m.clone()],
        None => team.inbox_owners()?,
    };
    let action = match (args.mark_read, args.consume) {
        (true, _) => Some(Mark::Read),
        (_, true) => Some(Mark::Consume),
        _ => None,
    };

    let mut reads: Vec<(MemberName, InboxRead)> = Vec::new();
    let mut failed = 0;
    for owner in owners {
        match mailbox::read(&team, &owner, &filter, action.is_some()) {
            Ok(r) => reads.push((owner, r)),
            Err(e) if member.is_none() => {
                warn(&format!("{e:#}"));
                failed += 1;
            }
            Err(e) => return Err(e),
        }
    }
    for (_, r) in &reads {
        for s in &r.skipped {
            warn(&format!(
                "skipped entry {} of {}: '{}' is missing or not a string (left in the file)",
                s.index,
                s.inbox.display(),
                s.field
            ));
        }
    }
    if let Some(m) = &member {
        reply_hint(&team, m);
    }

    // --all: one list in time order (and --limit over all of it), before anything is marked.
    let order = member.is_none().then(|| {
        let mut only: Vec<InboxRead> = reads.iter_mut().map(|(_, r)| std::mem::take(r)).collect();
        let order = mailbox::in_time_order(&mut only, args.limit);
        for ((_, r), o) in reads.iter_mut().zip(only) {
            *r = o;
        }
        order
    });

    let mut updated = 0;
    if let Some(how) = action {
        for (owner, r) in &reads {
            let entries: Vec<_> = r.shown.iter().filter_map(|s| s.entry.clone()).collect();
            updated += mailbox::mark(&team, owner, &entries, how, &ctx.lock)?;
        }
    }

    let views: Vec<&MessageView> = match &order {
        Some(order) => order
            .iter()
            .map(|&(i, j)| &reads[i].1.shown[j].view)
            .collect(),
        None => reads
            .iter()
            .flat_map(|(_, r)| r.shown.iter().map(|s| &s.view))
            .collect(),
    };
    if ctx.out.json {
        ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            messages: views,
            action: action.map(|a| match a {
                Mark::Read => "mark_read",
                Mark::Consume => "consume",
            }),
            updated,
        })?;
    } else {
        let rows = human_rows(&views, &reads, member.as_ref());
        // The rows are all that is printed: the messages' full text goes before the table is
        // laid out (a large inbox is not held twice).
        drop(views);
        drop(reads);
        match rows {
            Ok(rows) => ctx.out.table(rows)?,
            Err(line) => ctx.out.line(&line)?,
        }
        match action {
            Some(Mark::Read) => ctx.out.line(&format!("marked {updated} message(s) read"))?,
            Some(Mark::Consume) => ctx.out.line(&format!("consumed {updated} message(s)"))?,
            None => {}
        }
    }
    if failed > 0 {
        bail!("{failed} inbox(es) could not be read (see the warnings above)");
    }
    Ok(())
}

/// The table of `views` (header first), or the line to print when there is none.
fn human_rows(
    views: &[&MessageView],
    reads: &[(MemberName, InboxRead)],
    member: Option<&MemberName>,
) -> Result<Vec<Vec<String>>, String> {
    if views.is_empty() {
        let line = match (member, reads.first()) {
            (Some(m), Some((_, r))) if !r.exists => format!("no messages ({m} has no inbox yet)"),
            _ => "no messages".to_string(),
        };
        return Err(line);
    }
    let mut rows = vec![
        ["ID", "TIME", "FROM", "TO", "MESSAGE"]
            .map(String::from)
            .to_vec(),
    ];
    for v in views {
        let time = DateTime::parse_from_rfc3339(&v.timestamp)
            .map(|t| t.format("%Y-%m-%d %H:%M:%S").to_string())
            .unwrap_or_else(|_| v.timestamp.clone());
        let mut preview = v.preview();
        if v.read {
            preview.push_str(" (read)");
        }
        let short: String = v.id.chars().take(8).collect();
        rows.push(vec![short, time, v.from.clone(), v.to.clone(), preview]);
    }
    Ok(rows)
}

/// Current Claude Code teammates can reply only to members of config.json, never to `user`.
fn reply_hint(team: &Team, member: &MemberName) {
    if member.is_reserved() && member.as_str() != "team-lead" {
        hint(&format!(
            "Claude Code teammates (2.1.332) never reply to '{member}', a reserved name; to get \
             replies, send as a member of the team with --from NAME (or set TEAMCTL_FROM)"
        ));
    } else if team.config.is_some() && !team.is_member(member.as_str()) {
        hint(&format!(
            "'{member}' is not a member of team '{}', so Claude Code teammates (2.1.332) cannot \
             reply to it; join the team with `teamctl send --join …`",
            team.name
        ));
    }
}
