//! `teamctl status`: who is working, idle or gone, and what is waiting for them.

use anyhow::Result;
use chrono::{DateTime, Utc};
use clap::Args;
use serde::Serialize;
use teamctl::host::tmux::Liveness;
use teamctl::observe::status::{self, MemberStatus, TaskCounts, TeamInfo};
use teamctl::team::config;
use teamctl::team::config::Team;
use teamctl::team::mailbox;
use teamctl::time;

use crate::cli::context::Ctx;
use crate::cli::output::warn;
use crate::cli::term::escape_line as esc;

/// Show each member's state and what is waiting for them
///
/// For the team: when it was made, whether its lead process runs, which inbox format its Claude
/// Code uses (judged from what its readers did: legacy keeps a read message with read: true,
/// 2.1.159 and older; current deletes it, 2.1.160 and later; mixed; unknown), the task counts, then one row per member: type, colour, backend, state, last
/// seen, unread messages in its inbox, tasks in progress/owned, and whether its process or tmux
/// pane is alive where that can be checked.
///
/// State: terminated (a shutdown_approved from it is in an inbox, or it left config.json while
/// its inbox remains), active (an event younger than --idle-after: its newest message or
/// idle_notification, its inbox drained, or isActive: true), idle (older), unknown (no signal).
/// Reads take no locks.
///
/// With several teams and no --team (or with --all-teams): one row per team, which is also how
/// to find session-xxxxxxxx team names.
///
/// Also says whether teammates can reply to you (your identity: a member of config.json, not a
/// reserved name; team-lead only in a team teamctl leads).
///
/// With --json: {"schema_version":1,"identity":{"name","reachable","reason"},"team":{"name","description","created_at","lead_agent_id",
/// "lead_session_id","lead_pid","lead_alive","format","last_activity_at"},"members":[{"name",
/// "agent_id","agent_type","color","backend","state","last_event_at","last_event_kind",
/// "is_active","process_alive","session_status","pending","tasks_in_progress","tasks_owned",
/// "in_config"}],"tasks":{"pending","in_progress","completed","blocked","ready"}}; for all teams:
/// {"schema_version":1,"teams":[{"name","members","last_activity_at","lead_alive"}]}.
#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// A member with no event for this long is idle
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    idle_after: String,

    /// One row per team instead of one team's members
    #[arg(long)]
    all_teams: bool,
}

#[derive(Serialize)]
struct Identity {
    name: String,
    reachable: bool,
    reason: Option<String>,
}

#[derive(Serialize)]
struct Json<'a> {
    schema_version: u32,
    identity: Identity,
    team: &'a TeamInfo,
    members: &'a [MemberStatus],
    tasks: &'a TaskCounts,
}

#[derive(Serialize)]
struct TeamsJson {
    schema_version: u32,
    teams: Vec<TeamRow>,
}

#[derive(Serialize)]
struct TeamRow {
    name: String,
    members: usize,
    last_activity_at: Option<String>,
    lead_alive: Option<bool>,
}

pub(crate) fn run(ctx: &Ctx, args: StatusArgs) -> Result<()> {
    let idle_after = time::parse_duration(&args.idle_after)?;
    let live = Liveness::probe();
    let single = if args.all_teams {
        None
    } else {
        match ctx.team() {
            Ok(t) => Some(t),
            // Several teams and none chosen: show them all.
            Err(_) if !ctx.team_given() && config::list_teams(&ctx.layout)?.len() > 1 => None,
            Err(e) => return Err(e),
        }
    };
    let Some(team) = single else {
        return all_teams(ctx, idle_after, &live);
    };
    let st = status::team_status(&team, ctx.now, idle_after, &live, &ctx.sent())?;
    for w in &st.warnings {
        warn(w);
    }
    let me = ctx.identity(&team);
    let reason = mailbox::unreachable_reason(&team, &me);
    if ctx.out.json {
        return ctx.out.json(&Json {
            schema_version: 1,
            identity: Identity {
                name: me,
                reachable: reason.is_none(),
                reason,
            },
            team: &st.team,
            members: &st.members,
            tasks: &st.tasks,
        });
    }
    let t = &st.team;
    let me = esc(&me);
    let reason = reason.as_deref().map(esc);
    let lead = match (t.lead_pid, t.lead_alive) {
        (Some(pid), Some(true)) => format!("pid {pid}, running"),
        (Some(pid), Some(false)) => format!("pid {pid}, not running"),
        (Some(pid), None) => format!("pid {pid}"),
        (None, _) => "no process recorded".into(),
    };
    let format = match t.format.as_str() {
        "current" => "current (a delivered message is deleted: Claude Code 2.1.160 or later)",
        "legacy" => {
            "legacy (a delivered message stays with read: true: Claude Code 2.1.159 or older)"
        }
        "mixed" => {
            "mixed (some inboxes keep read messages, some delete them: several Claude Code versions)"
        }
        _ => "unknown (nothing shows yet how messages are consumed)",
    };
    let n = &st.tasks;
    let lines = [
        match &t.description {
            Some(d) => format!("team:        {} ({})", esc(t.name.as_str()), esc(d)),
            None => format!("team:        {}", esc(t.name.as_str())),
        },
        format!("created:     {}", when(ctx.now, t.created_at.as_deref())),
        format!(
            "lead:        {}, session {}, {lead}",
            esc(t.lead_agent_id.as_deref().unwrap_or("-")),
            esc(t.lead_session_id.as_deref().unwrap_or("-"))
        ),
        format!("format:      {format}"),
        match &reason {
            None => format!("you:         {me} (teammates can reply to you)"),
            Some(why) => format!("you:         {me} (UNREACHABLE: {why})"),
        },
        format!(
            "last event:  {}",
            when(ctx.now, t.last_activity_at.as_deref())
        ),
        format!(
            "tasks:       {} pending, {} in progress, {} completed ({} ready, {} blocked)",
            n.pending, n.in_progress, n.completed, n.ready, n.blocked
        ),
        String::new(),
    ];
    ctx.out.line(&lines.join("\n"))?;
    let mut rows = vec![
        [
            "NAME",
            "TYPE",
            "COLOR",
            "BACKEND",
            "STATE",
            "LAST SEEN",
            "PENDING",
            "TASKS",
            "ALIVE",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let dash = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    for m in &st.members {
        let seen = match (&m.last_event_at, &m.last_event_kind) {
            (Some(at), Some(kind)) => format!("{} ({kind})", ago(ctx.now, at)),
            (None, Some(kind)) => kind.clone(),
            _ => "-".into(),
        };
        let alive = match m.process_alive {
            Some(true) => "yes",
            Some(false) => "no",
            None => "-",
        };
        rows.push(vec![
            m.name.clone(),
            dash(&m.agent_type),
            dash(&m.color),
            dash(&m.backend),
            m.state.to_string(),
            seen,
            m.pending.to_string(),
            format!("{}/{}", m.tasks_in_progress, m.tasks_owned),
            alive.into(),
        ]);
    }
    ctx.out.table(rows)
}

fn all_teams(ctx: &Ctx, idle_after: std::time::Duration, live: &Liveness) -> Result<()> {
    let mut rows = Vec::new();
    let sent = ctx.sent();
    for name in config::list_teams(&ctx.layout)? {
        let t = Team::open(&ctx.layout, &name, ctx.leads.as_ref())?;
        let st = status::team_status(&t, ctx.now, idle_after, live, &sent)?;
        rows.push(TeamRow {
            name: name.to_string(),
            members: st.members.iter().filter(|m| m.in_config).count(),
            last_activity_at: st.team.last_activity_at,
            lead_alive: st.team.lead_alive,
        });
    }
    if ctx.out.json {
        return ctx.out.json(&TeamsJson {
            schema_version: 1,
            teams: rows,
        });
    }
    if rows.is_empty() {
        return ctx.out.line("no teams");
    }
    let mut table = vec![
        ["TEAM", "MEMBERS", "LAST ACTIVITY", "LEAD"]
            .map(String::from)
            .to_vec(),
    ];
    for r in rows {
        let lead = match r.lead_alive {
            Some(true) => "running",
            Some(false) => "not running",
            None => "-",
        };
        table.push(vec![
            r.name,
            r.members.to_string(),
            r.last_activity_at
                .as_deref()
                .map_or("-".into(), |t| ago(ctx.now, t)),
            lead.into(),
        ]);
    }
    ctx.out.table(table)
}

/// `2025-11-29 19:35:00 UTC (3m ago)`, or `-`.
fn when(now: DateTime<Utc>, t: Option<&str>) -> String {
    match t {
        Some(t) => format!(
            "{} ({})",
            esc(&t.replace('T', " ").replace(".000Z", "Z")),
            esc(&ago(now, t))
        ),
        None => "-".into(),
    }
}

/// `45s ago`, `3m ago`, `2h ago`, `5d ago`.
fn ago(now: DateTime<Utc>, t: &str) -> String {
    let Ok(t) = DateTime::parse_from_rfc3339(t) else {
        return t.to_string();
    };
    let s = (now - t.with_timezone(&Utc)).num_seconds();
    match s {
        s if s < 0 => "in the future".into(),
        s if s < 60 => format!("{s}s ago"),
        s if s < 3600 => format!("{}m ago", s / 60),
        s if s < 86400 => format!("{}h ago", s / 3600),
        s => format!("{}d ago", s / 86400),
    }
}
