//! `teamctl shutdown`: ask teammates to shut down, and wait for their answers.

use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use clap::Args;
use serde::Serialize;
use teamctl::Error;
use teamctl::error::usage;
use teamctl::store::paths::MemberName;
use teamctl::team::mailbox;
use teamctl::team::protocol::{self, ShutdownAnswer};

use crate::cli::answer;
use crate::cli::context::Ctx;

/// Ask teammates to shut down, as their lead
///
/// Sends each a shutdown_request from team-lead (requestId shutdown-<ms>@<member>), the way a
/// Claude Code lead does. With --wait, waits for each shutdown_approved or shutdown_rejected in
/// team-lead.json and reports it: exit 0 when all approved, 1 when any rejected, 3 when the time
/// ran out. Refused (exit 2) in a team teamctl does not lead unless --force: the request would
/// speak for someone else's lead (a teammate started by a Claude Code lead acts only on its own
/// lead's request).
///
/// With --json: `{"schema_version":1,"team","requests":[{"member","request_id","state",
/// "reason"}]}`; "state" is sent, approved, rejected or pending (after --wait ran out).
#[derive(Debug, Args)]
pub(crate) struct ShutdownArgs {
    /// The teammates to shut down
    #[arg(value_name = "MEMBER", required = true)]
    members: Vec<String>,

    /// Why, for the teammates
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,

    /// Wait for their answers
    #[arg(long, value_name = "DURATION", num_args = 0..=1, default_missing_value = "2m",
          require_equals = true)]
    wait: Option<String>,

    /// Send even to a name not in config.json, or as team-lead in a team teamctl does not lead
    #[arg(long)]
    #[arg(
        help = "Send to a non-member, or as team-lead in a team not led by teamctl",
        long_help
    )]
    force: bool,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    team: &'a str,
    requests: &'a [Row],
}

#[derive(Serialize)]
struct Row {
    member: String,
    request_id: String,
    state: &'static str,
    reason: Option<String>,
}

pub(crate) fn run(ctx: &Ctx, args: ShutdownArgs) -> Result<()> {
    let members = args
        .members
        .iter()
        .map(|m| MemberName::parse(m))
        .collect::<Result<Vec<_>>>()?;
    if let Some(m) = members.iter().find(|m| m.is_reserved()) {
        return Err(usage(format!(
            "'{m}' is not a teammate that can be shut down"
        )));
    }
    let wait = args
        .wait
        .as_deref()
        .map(teamctl::time::parse_duration)
        .transpose()?;
    let team = ctx.team()?;
    answer::check_lead(&team, args.force)?;
    let lead = MemberName::parse("team-lead")?;
    let mut rows = Vec::new();
    for m in &members {
        team.check_recipient(m, args.force)?;
        let frame = protocol::shutdown_request(m.as_str(), args.reason.as_deref(), ctx.now);
        let request_id = frame["requestId"].as_str().unwrap_or_default().to_string();
        mailbox::send_frame(&team, m, &lead, &frame, ctx.writing(ctx.now))?;
        if !ctx.out.json {
            ctx.out
                .line(&format!("asked {m} to shut down ({request_id})"))?;
        }
        rows.push(Row {
            member: m.to_string(),
            request_id,
            state: "sent",
            reason: None,
        });
    }
    if let Some(wait) = wait {
        let deadline = Instant::now() + wait;
        for row in &mut rows {
            loop {
                match protocol::shutdown_answer(&team, &lead, &row.request_id)? {
                    Some(ShutdownAnswer::Approved) => row.state = "approved",
                    Some(ShutdownAnswer::Rejected(why)) => {
                        row.state = "rejected";
                        row.reason = Some(why);
                    }
                    None if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                    None => row.state = "pending",
                }
                break;
            }
            if !ctx.out.json {
                let line = match (row.state, &row.reason) {
                    ("approved", _) => format!("{} approved and is shutting down", row.member),
                    ("rejected", why) => {
                        let why = crate::cli::term::escape_line(why.as_deref().unwrap_or(""));
                        format!("{} rejected: {why}", row.member)
                    }
                    _ => format!("{} has not answered", row.member),
                };
                ctx.out.line(&line)?;
            }
        }
    }
    if ctx.out.json {
        ctx.out.json(&Json {
            schema_version: 1,
            team: team.name.as_str(),
            requests: &rows,
        })?;
    }
    let rejected: Vec<&str> = rows
        .iter()
        .filter(|r| r.state == "rejected")
        .map(|r| r.member.as_str())
        .collect();
    if !rejected.is_empty() {
        bail!(
            "shutdown rejected by {}",
            teamctl::store::paths::shown_list(&rejected)
        );
    }
    let pending: Vec<&str> = rows
        .iter()
        .filter(|r| r.state == "pending")
        .map(|r| r.member.as_str())
        .collect();
    if !pending.is_empty() {
        return Err(Error::Timeout(format!(
            "no answer to the shutdown request from {}",
            teamctl::store::paths::shown_list(&pending)
        ))
        .into());
    }
    Ok(())
}
