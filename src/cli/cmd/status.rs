//! `teamctl status`: who is working, idle or gone, and what is waiting for them.

use anyhow::Result;
use chrono::{DateTime, Utc};
use clap::Args;
use serde::Serialize;
use teamctl::observe::document::{Identity, StatusDocument};
use teamctl::observe::human;
use teamctl::observe::misaddressed;
use teamctl::observe::reader::{Options, TeamReader};
use teamctl::observe::status::{self, MemberStatus};
use teamctl::observe::waiting::WaitingDetail;
use teamctl::team::config;
use teamctl::team::transcript::{Activity, Tokens};
use teamctl::time;
use teamctl::units::{age, count, usd};

use crate::cli::context::Ctx;
use crate::cli::output::warn;
use crate::cli::term::{self, escape_line as esc};

/// Show each member's state and what is waiting for them
///
/// Who is working, idle or gone, and what is waiting for them. A header (created, lead session
/// and whether the lead process runs, the inbox format generation, last event, task counts),
/// then one row per member: type, colour, backend, state, last seen (and what it was), unread
/// messages in its inbox, tasks in progress/owned, and whether its process is alive where that
/// can be checked. The `you:` line says whether teammates can reply to your identity, and if
/// not, why (a reserved name, not a member of config.json, or team-lead of a team that a Claude
/// Code lead owns). Reads take no locks.
///
/// The inbox format says how the team's Claude Code treats a delivered message, judged from what
/// its readers did, never from the msgV that teamctl itself writes into every team: legacy (an
/// entry kept with read: true: Claude Code 2.1.159 or older), current (deleted: a message teamctl
/// sent, per its sent log, is gone; or an entry with msgV that teamctl did not write, from a
/// 2.1.196+ client: Claude Code 2.1.160 or later), mixed (inboxes of both kinds) or unknown
/// (nothing shows it yet). A team upgraded in place from 2.1.159 keeps its old read: true
/// entries (newer readers skip them) and reads as legacy or mixed until they go.
///
/// Liveness, only where it can be checked without guessing: the lead's leadProcess.pid
/// (running, and the same process: its start time must equal procStart), tmux panes on the
/// default tmux server (when tmux is on PATH; for a team teamctl created, on the server it
/// started them in, and none when that server is gone), and the status in sessions/<pid>.json
/// when Claude Code wrote one (2.1.332 pane teammates write only sessions/<pid>.<hash>.key,
/// which has none).
///
/// From the members' Claude Code transcripts ($CLAUDE_CONFIG_DIR/projects/…, read-only) it
/// adds what each one is doing (DOING: the tool call in progress with a summary of its input,
/// or the last text it wrote), what it has cost (COST, and the team's total on the cost: line)
/// and why it is not progressing (WAITING, the first that holds, listed under "Waiting" below;
/// a line after the table says more where more is known: the HTTP status, the attempt, when
/// the next try is due, when a usage window resets).
/// Cost is Claude Code's own figure (cost_source claude_code) for a session that ended and
/// recorded one, else computed from the responses' token usage with the prices of the Claude
/// Code version that wrote them (computed), or null for a model it cannot price (the tokens are
/// still counted). Only what was appended since the last call is read: an index of the
/// transcripts read is kept in teamctl's data dir (docs/design.md, "Transcripts").
///
/// With several teams and no --team, or with --all-teams, it prints one row per team (members,
/// last activity, lead running), which is how to find session-xxxxxxxx team names.
///
/// A file that cannot be read is a warning. A team folder that cannot be listed (the inboxes or
/// the tasks folder replaced by a symlink, a FIFO, …) leaves the status incomplete: what could be
/// read is printed, then the command ends with exit 1 naming the folder.
///
/// With --json: `{"schema_version":1,"identity":{"name","reachable","reason"},"team":{"name",
/// "description","created_at","lead_agent_id","lead_session_id","lead_pid","lead_alive",
/// "format","last_activity_at"},"members":[{"name","agent_id","agent_type","color","backend",
/// "state","last_event_at","last_event_kind","is_active","process_alive","session_status",
/// "unread","pending","tasks_in_progress","tasks_owned","in_config","tokens":{"input","output",
/// "cache_read","cache_creation"},"cost_usd","cost_source","model","activity":{"at","kind",
/// "tool","summary"},"waiting","waiting_detail":{"status","attempt","max_retries","retry_at",
/// "resets_at","exhausted","message","since"},"idle_unreported_since","transcripts","context":{"used","window",
/// "percent"},"worktree":{"path","branch","changed"}}],"tasks":{"pending","in_progress","completed",
/// "blocked","ready"},"totals":{"tokens":{…},"cost_usd"}}`; format is legacy, current, mixed or
/// unknown (above); last_event_kind is message, a frame type (idle_notification,
/// shutdown_approved, …), inbox_drained or is_active; unread counts the entries of its inbox
/// not read yet (pending is the same count under its old name, kept until 0.2); process_alive and lead_alive are null where
/// nothing can be checked; cost_source is claude_code or computed; activity's kind is tool_use (a
/// call without its result yet) or text (the last text written); waiting is permission, plan,
/// dead, rate_limited, overloaded, api_error, no_response, blocked, stalled, idle_unreported or
/// null (idle_unreported_since: when the turn it did not report ended, else null), and
/// waiting_detail is null unless more is known (exhausted: the retries ran out, the member's
/// turn ended with the error, and waiting changes nothing); context is the newest response's
/// input, cache read and cache creation tokens against the model's context window (window and
/// percent null for a model teamctl does not know); worktree is the member's own git worktree
/// when `create` gave it one (changed: files that differ from the commit it started from, null
/// when git cannot tell), else null; the transcript keys are null (transcripts []) for a member without
/// one, and totals' are null when no member has one. For all teams: `{"schema_version":1,
/// "teams":[{"name","members","last_activity_at","lead_alive"}]}`.
#[derive(Debug, Args)]
#[command(after_long_help = "States:
  terminated  a shutdown_approved frame from it is in an inbox of the team (older builds:
              shutdown_response with approve: true), or it left config.json while its inbox
              remains (an inbox of a name that never wrote to the team and holds unread
              messages is no member: it is listed as misaddressed)
  active      its last event is younger than --idle-after: its newest message or
              idle_notification in any inbox, its inbox drained (no unread entry; the file's
              mtime), or isActive: true
  idle        its last event is older than that
  unknown     no signal at all

Waiting (from the transcripts and the team's files):
  permission    a permission request of its is unanswered in the lead's inbox
  plan          its plan awaits approval
  dead          its pane or process is gone while it owns a task in progress or has unread
                messages
  rate_limited  its last API call was refused with 429 (a rate or a usage window); Claude Code
                retries it, up to 10 times over about 3 minutes
  overloaded    the API answered 529
  api_error     another failure (a 5xx, a dropped or silent connection), or the same request
                sent again while Claude Code did not record why (interactive sessions)
  no_response   a request has had no answer for --no-response-after
  blocked       every task it owns is blocked
  stalled       inside a turn, but its transcripts have not grown for --stall-after
  idle_unreported  its turns end but it reports no idle (no idle_notification 5 s after its
                transcript's turn end, isActive still true): a start-up race is one cause;
                restarting it helps (wait --on-stall restart)

Examples:
  teamctl status
  teamctl status --all-teams
  teamctl status --json | jq '.members[] | {name, state}'")]
pub(crate) struct StatusArgs {
    /// A member with no event for this long is idle
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    idle_after: String,

    /// A member inside a turn whose transcript has not grown for this long is stalled
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    #[arg(help = "A member silent this long in a turn is stalled", long_help)]
    stall_after: String,

    /// A member whose API request has had no answer for this long is no_response
    #[arg(long, value_name = "DURATION", default_value = "3m")]
    #[arg(help = "A request unanswered this long is no_response", long_help)]
    no_response_after: String,

    /// A permission or plan request waiting this long needs a person (needs_human)
    #[arg(long, value_name = "DURATION", default_value = "1m")]
    #[arg(help = "A request waiting this long needs a person", long_help)]
    after: String,

    /// One row per team instead of one team's members
    #[arg(long)]
    all_teams: bool,
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
    let stall_after = time::parse_duration(&args.stall_after)?;
    let opts = Options {
        idle_after,
        stall_after,
        no_response_after: time::parse_duration(&args.no_response_after)?,
        ..Options::default()
    };
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
        return all_teams(ctx, opts);
    };
    let after = time::parse_duration(&args.after)?;
    let mut reader = TeamReader::of(team, ctx.records.clone(), opts);
    let present = reader.read_opened(ctx.now)?;
    if let Err(e) = reader.save() {
        warn(&format!("{e:#}"));
    }
    let team = reader.team();
    let lost = misaddressed::scan(team).misaddressed;
    let needs = human::needs(&present, team, reader.board(), after, &lost);
    let st = present.status;
    // A folder that could not be listed ends the command with an error, after what was read.
    for w in st.warnings.iter().filter(|w| !st.unlisted.contains(w)) {
        warn(w);
    }
    let unlisted = st.unlisted.clone();
    let identity = Identity::of(team, &ctx.identity(team));
    show_team(ctx, &StatusDocument::of(st, identity, needs, lost))?;
    incomplete(team.name.as_str(), &unlisted)
}

/// Exit 1 (after the output) when some of the team's folders could not be listed.
fn incomplete(team: &str, unlisted: &[String]) -> Result<()> {
    match unlisted {
        [] => Ok(()),
        [one] => anyhow::bail!("the status of {team} is incomplete: {one}"),
        [first, rest @ ..] => anyhow::bail!(
            "the status of {team} is incomplete: {first} (and {} more)",
            rest.len()
        ),
    }
}

/// Prints the status of one team (`--json`: one document).
fn show_team(ctx: &Ctx, st: &StatusDocument) -> Result<()> {
    if ctx.out.json {
        return ctx.out.json(st);
    }
    let lines = header(ctx, st);
    // Each field wrapped to the terminal, continued under its value.
    let width = term::width();
    let lines: Vec<String> = lines.iter().map(|l| wrap(l, width, 13)).collect();
    ctx.out.line(&lines.join("\n"))?;
    members_table(ctx, &st.members)?;
    for m in &st.misaddressed {
        ctx.out.line(&wrap(
            &format!("misaddressed: {}", esc(&m.summary())),
            width,
            2,
        ))?;
    }
    let trees: Vec<String> = st
        .members
        .iter()
        .filter_map(|m| {
            let t = m.worktree.as_ref()?;
            let changed = t
                .changed
                .map_or("changes unknown".into(), |n| format!("{n} file(s) changed"));
            Some(format!(
                "{}: branch {}, {changed} ({})",
                esc(&m.name),
                esc(&t.branch),
                esc(&t.path)
            ))
        })
        .collect();
    if !trees.is_empty() {
        ctx.out.line(&format!("worktrees:\n{}", trees.join("\n")))?;
    }
    if st
        .members
        .iter()
        .all(|m| m.tokens.is_none() && m.waiting.is_none())
    {
        return Ok(());
    }
    ctx.out.line("")?;
    work_table(ctx, &st.members)
}

/// The lines above the members' table: the team, its lead, the format of its inboxes, you, its
/// tasks and cost, and what a person is needed for.
fn header(ctx: &Ctx, st: &StatusDocument) -> Vec<String> {
    let t = &st.team;
    let me = esc(&st.identity.name);
    let reason = st.identity.reason.as_deref().map(esc);
    let needs = &st.needs_human;
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
        match (&st.totals.tokens, st.totals.cost_usd) {
            (None, _) => "cost:        - (no transcripts found)".to_string(),
            (Some(t), c) => format!(
                "cost:        {} (tokens: {})",
                c.map_or("unknown".to_string(), usd),
                tokens(t)
            ),
        },
    ];
    // A person is needed: what for, and what to do (the misaddressed inboxes have their own
    // lines below).
    let needs = needs
        .iter()
        .filter(|n| n.cause != "misaddressed")
        .map(|n| format!("needs you:   {}: {}", n.cause, esc(&n.todo)));
    lines
        .into_iter()
        .chain(needs)
        .chain([String::new()])
        .collect()
}

/// The members' table: each member's state, when it was last seen, its unread messages, tasks and
/// whether its process runs.
fn members_table(ctx: &Ctx, members: &[status::MemberStatus]) -> Result<()> {
    let mut rows = vec![
        ["NAME", "STATE", "LAST SEEN", "UNREAD", "TASKS", "ALIVE"]
            .map(String::from)
            .to_vec(),
    ];
    for m in members {
        let seen = match (&m.last_event_at, &m.last_event_kind) {
            (Some(at), Some(kind)) => format!("{} ({kind})", ago_or_raw(ctx.now, at)),
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
            m.state.to_string(),
            seen,
            m.unread.to_string(),
            format!("{}/{}", m.tasks_in_progress, m.tasks_owned),
            alive.into(),
        ]);
    }
    ctx.out.narrow_table(rows)?;
    Ok(())
}

/// `line` broken at spaces into lines of at most `width` columns (a longer word stays whole),
/// each further line behind `| ` at column `indent` (never whitespace alone: a line must not
/// begin with text from a file, and CI logs strip leading spaces).
fn wrap(line: &str, width: usize, indent: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    if line.width() <= width {
        return line.to_string();
    }
    let mut out: Vec<String> = vec![String::new()];
    for word in line.split(' ') {
        let cur = out.last_mut().expect("one line at least");
        let fresh = cur.trim().is_empty();
        if !fresh && cur.width() + 1 + word.width() > width {
            out.push(format!("{}| {word}", " ".repeat(indent.saturating_sub(2))));
        } else if cur.is_empty() {
            cur.push_str(word);
        } else {
            cur.push(' ');
            cur.push_str(word);
        }
    }
    out.join("\n")
}

/// NAME, WAITING, COST, CONTEXT (when any member has one and the terminal has room) and
/// DOING, the last cut to the width left.
fn work_table(ctx: &Ctx, members: &[MemberStatus]) -> Result<()> {
    let dash = || "-".to_string();
    let mut rows: Vec<Vec<String>> = vec![
        ["NAME", "WAITING", "COST", "CONTEXT"]
            .map(String::from)
            .to_vec(),
    ];
    for m in members {
        rows.push(vec![
            term::escape_lead(&m.name).into_owned(),
            m.waiting.map_or_else(dash, |w| w.to_string()),
            match (m.cost_usd, m.tokens) {
                (Some(c), _) => usd(c),
                // Tokens of a model without a price: never $0.
                (None, Some(_)) => "unknown".into(),
                (None, None) => dash(),
            },
            m.context
                .map_or_else(dash, |c| teamctl::units::context(c.used, c.percent)),
        ]);
    }
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let mut widths: Vec<usize> = (0..4).map(width).collect();
    let room = |w: &[usize]| term::width().saturating_sub(w.iter().sum::<usize>() + 2 * w.len());
    if members.iter().all(|m| m.context.is_none()) || room(&widths) < 16 {
        widths.pop();
        rows.iter_mut().for_each(|r| {
            r.pop();
        });
    }
    let left = room(&widths).max(10);
    let mut out = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let doing = match i {
            0 => "DOING".to_string(),
            _ => doing(ctx, members[i - 1].activity.as_ref(), left),
        };
        let mut line = String::new();
        for (cell, w) in r.iter().zip(&widths) {
            line.push_str(&format!("{cell:w$}  "));
        }
        line.push_str(&doing);
        out.push(line.trim_end().to_string());
    }
    // Why each waiting member waits, where more is known (API failures, a dead pane).
    for m in members {
        if let (Some(w), Some(d)) = (m.waiting, &m.waiting_detail) {
            out.push(format!("{}: {w}: {}", esc(&m.name), esc(&why(d, ctx.now))));
        }
    }
    ctx.out.line(&out.join("\n"))
}

/// `529 Overloaded · attempt 3 of 10 · next try in 4s · since 2m`: a waiting detail in one line.
fn why(d: &WaitingDetail, now: DateTime<Utc>) -> String {
    let at = |t: &str| {
        DateTime::parse_from_rfc3339(t)
            .ok()
            .map(|t| (t.with_timezone(&Utc) - now).num_seconds())
    };
    let mut parts = Vec::new();
    match (&d.message, d.status) {
        (Some(m), _) => parts.push(m.clone()),
        (None, Some(s)) => parts.push(format!("HTTP {s}")),
        (None, None) => {}
    }
    match (d.attempt, d.max_retries) {
        (Some(a), Some(max)) => parts.push(format!("attempt {a} of {max}")),
        (Some(a), None) => parts.push(format!("attempt {a}")),
        _ => {}
    }
    if d.exhausted {
        parts.push("out of retries".into());
    }
    if let Some(s) = d.retry_at.as_deref().and_then(at) {
        parts.push(format!("next try in {}", age(s)));
    }
    if let Some(t) = &d.resets_at {
        parts.push(format!("usage window resets {}", t.replace('T', " ")));
    }
    if let Some(s) = d.since.as_deref().and_then(at) {
        parts.push(format!("since {} ago", age(-s)));
    }
    parts.join(" · ")
}

/// `Bash: cargo test (2m ago)`, `text: All done (10s ago)`, cut to `max` columns (the age kept).
fn doing(ctx: &Ctx, a: Option<&Activity>, max: usize) -> String {
    let Some(a) = a else { return "-".into() };
    let age =
        a.at.as_deref()
            .map(|t| format!(" ({})", esc(&ago_or_raw(ctx.now, t))))
            .unwrap_or_default();
    let what = match &a.tool {
        Some(t) => format!("{}: {}", esc(t), esc(&a.summary)),
        None => format!("text: {}", esc(&a.summary)),
    };
    let room = max.saturating_sub(age.chars().count()).max(4);
    format!("{}{age}", term::cut(&what, room))
}

/// `1.2k in, 300 out, 1.5M cache read, 80.0k cache write`.
fn tokens(t: &Tokens) -> String {
    let n = count;
    format!(
        "{} in, {} out, {} cache read, {} cache write",
        n(t.input),
        n(t.output),
        n(t.cache_read),
        n(t.cache_creation)
    )
}

fn all_teams(ctx: &Ctx, opts: Options) -> Result<()> {
    let mut rows = Vec::new();
    let mut unlisted = Vec::new();
    let opts = Options {
        transcripts: false,
        ..opts
    };
    for name in config::list_teams(&ctx.layout)? {
        let st = TeamReader::open(&ctx.layout, &name, ctx.records.clone(), opts)?
            .read_opened(ctx.now)?
            .status;
        if let Some(first) = st.unlisted.first() {
            unlisted.push(format!("{name}: {first}"));
        }
        rows.push(TeamRow {
            name: name.to_string(),
            members: st.members.iter().filter(|m| m.in_config).count(),
            last_activity_at: st.team.last_activity_at,
            lead_alive: st.team.lead_alive,
        });
    }
    show_teams(ctx, rows)?;
    match unlisted.as_slice() {
        [] => Ok(()),
        [one] => anyhow::bail!("a team's status is incomplete: {one}"),
        [first, rest @ ..] => anyhow::bail!(
            "teams' status is incomplete: {first} (and {} more)",
            rest.len()
        ),
    }
}

/// Prints one row a team (`--json`: one document).
fn show_teams(ctx: &Ctx, rows: Vec<TeamRow>) -> Result<()> {
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
                .map_or("-".into(), |t| ago_or_raw(ctx.now, t)),
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
            esc(&ago_or_raw(now, t))
        ),
        None => "-".into(),
    }
}

/// `45s ago`, `3m ago`, `2h ago`, `5d ago` ([`teamctl::units::ago`]); a time that does not
/// parse as itself.
fn ago_or_raw(now: DateTime<Utc>, t: &str) -> String {
    teamctl::units::ago(now, t).unwrap_or_else(|| t.to_string())
}
