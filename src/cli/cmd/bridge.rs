//! `teamctl bridge`: post a team's requests and needs to a chat and answer them from there.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use teamctl::error::usage;
use teamctl::ops::bridge::http::api_url;
use teamctl::ops::bridge::telegram::Telegram;
use teamctl::ops::bridge::{self, Bridge, Ground, Hooks, Record, Scope, Settings, What};
use teamctl::team::config::Team;
use teamctl::time::parse_duration;

use crate::cli::answer::check_lead;
use crate::cli::args::deadline;
use crate::cli::by_policy::{EventsTo, Runner};
use crate::cli::context::Ctx;
use crate::cli::env;
use crate::cli::output::warn;
use crate::cli::term::escape_line as esc;

/// The chat services.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Transport {
    /// Telegram's Bot API (getUpdates long-poll, sendMessage)
    Telegram,
}

/// Post a team's requests to a chat and answer them from there
///
/// Runs in the foreground (beside `run`, `wait` or a live team) until --timeout, Ctrl-C or the
/// team is gone. Each request a teammate makes of its lead (a permission, a plan, a sandbox
/// host) is posted once, with the team, the member, what it wants (for Bash the command, for a
/// plan its start) and how long it has waited, and a one-time code; so is each other reason a
/// person is needed (a member gone with work waiting, API calls out of retries, an inbox
/// nobody reads, a stopped team). In the chat, an allowed user answers:
///
///   approve CODE          deny CODE [reason]
///   say MEMBER TEXT       status          (say TEAM/MEMBER TEXT with --all-teams)
///
/// (Telegram also shows Approve and Deny buttons). An answer is written exactly as `teamctl
/// approve`/`deny` writes it, a `say` as `teamctl send` (from team-lead). With --policy FILE
/// (the language of `approve --policy`, docs/policy.md) the rules answer first, and only what
/// they leave is posted.
///
/// Who may answer: only the user ids given with --allow (required), only in the chat given
/// with --chat, only messages sent after the bridge started. A code is 10 characters (50 random
/// bits), works once, for one request of one team, until --ttl; a request answered elsewhere
/// meanwhile (a terminal, a policy) retires its code, and a request still open when its code
/// expires is posted again with a new one. Every post and every decision (who, which chat,
/// when, which request, what) is journaled in teamctl's data dir (bridge.jsonl), so a
/// restarted bridge posts nothing twice and accepts no code twice. Teammate text is shown as
/// code, never as a link, mention or markup (docs/security.md, "Chat bridge").
///
/// The bot token comes only from the environment: TEAMCTL_TELEGRAM_TOKEN. It is never printed
/// (cut out of every error). --api is https, or http only to this machine.
///
/// Progress on stderr, one line per post and decision. With --json: JSON Lines on stdout, one
/// per post and decision, as journaled: `{"schema_version":1,"event","at","transport","chat",
/// "user","team","member","request_id","code","expires_at","detail"}` ("event": posted, notice,
/// approved, denied, said, status, refused, closed, expired, and last `end` with "detail":
/// timeout or team_gone); with --policy, its `decision` events too (as `approve --policy`).
///
/// Exit codes: 0 at --timeout or when the team is gone; 1 a failure (the journal cannot be
/// written, unknown team); 2 a bad flag, policy file, URL or token, or a team teamctl does not
/// lead (without --force); 130 on Ctrl-C.
#[derive(Debug, Args)]
#[command(after_long_help = "Examples:
  export TEAMCTL_TELEGRAM_TOKEN=123456:ABC…        # from @BotFather
  teamctl bridge telegram --chat -1001234567890 --allow 42
  teamctl bridge telegram --chat 42 --allow 42,77 --policy .claude/settings.json --all-teams
  teamctl run … & teamctl bridge telegram --chat 42 --allow 42 --timeout 2h --json >> bridge.jsonl

In the chat:
  approve 7k2m9q4xwd
  deny 7k2m9q4xwd not on main, use a branch
  say alice the tests on CI are red, look at test_auth
  status")]
pub(crate) struct BridgeArgs {
    /// The chat service
    #[arg(value_name = "TRANSPORT")]
    transport: Transport,

    /// The chat to post in and listen to (Telegram: its numeric id, or @channelname)
    #[arg(long, value_name = "ID")]
    chat: String,

    /// The chat user ids that may answer (comma-separated or repeated; required)
    #[arg(long, value_name = "ID", value_delimiter = ',', required = true)]
    allow: Vec<String>,

    /// The service's API [default: https://api.telegram.org]; http only to this machine
    #[arg(long, value_name = "URL")]
    api: Option<String>,

    /// How long a code works
    #[arg(long, value_name = "DURATION", default_value = "30m")]
    ttl: String,

    /// Answer by the rules in FILE first (as `approve --policy`); post only what they leave
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,

    /// Serve every team teamctl leads (every team with --force), as teams come and go
    #[arg(long)]
    all_teams: bool,

    /// Stop after this long (exit 0)
    #[arg(long, value_name = "DURATION")]
    timeout: Option<String>,

    /// Answer in teams teamctl does not lead too
    #[arg(long)]
    force: bool,
}

pub(crate) fn run(ctx: &Ctx, args: BridgeArgs) -> Result<()> {
    let ttl = parse_duration(&args.ttl)?;
    if ttl.is_zero() {
        return Err(usage("--ttl must be longer than 0s"));
    }
    if args.allow.iter().any(|a| a.trim().is_empty()) {
        return Err(usage("--allow needs user ids (an empty one allows nobody)"));
    }
    if args.all_teams && ctx.team_given() {
        return Err(usage(
            "--all-teams and --team name different teams: give one",
        ));
    }
    let deadline = deadline(args.timeout.as_deref())?;
    let api = api_url(args.api.as_deref().unwrap_or("https://api.telegram.org"))?;
    let token = std::env::var(env::TELEGRAM_TOKEN).unwrap_or_default();
    if token.is_empty() {
        return Err(usage(format!(
            "set {} to the bot's token (never on the command line)",
            env::TELEGRAM_TOKEN
        )));
    }
    let runner = match &args.policy {
        Some(p) => Some(Runner::new(ctx, p, "team-lead", false, EventsTo::Stdout)?),
        None => None,
    };
    let scope = if args.all_teams {
        Scope::All
    } else {
        let team = ctx.team()?;
        check_lead(&team, args.force)?;
        Scope::One(team.name)
    };
    let settings = Settings {
        transport: "telegram",
        chat: args.chat.clone(),
        allow: args.allow.iter().map(|a| a.trim().to_string()).collect(),
        ttl,
        started: ctx.clock(),
        force: args.force,
    };
    let ground = Ground {
        layout: ctx.layout.clone(),
        records: ctx.records(),
        lock: ctx.lock,
    };
    let (mut b, warnings) = Bridge::new(settings, scope, ground)?;
    warnings.iter().for_each(|w| warn(w));
    let mut chat = Telegram::start(&api, &token, &args.chat)?;
    let mut tell = Tell { ctx, runner };
    let clock = || ctx.clock();
    bridge::run(&mut b, &mut chat, &mut tell, deadline, &clock)?;
    Ok(())
}

/// What the loop reports: records on stdout (--json) or stderr, the policy's passes.
struct Tell<'a> {
    ctx: &'a Ctx,
    runner: Option<Runner>,
}

impl Hooks for Tell<'_> {
    fn before_look(&mut self, team: &Team) -> Result<()> {
        match self.runner.as_mut() {
            Some(r) => r.step_reopened(self.ctx, team),
            None => Ok(()),
        }
    }

    fn record(&mut self, r: &Record) -> Result<()> {
        if self.ctx.out.json {
            let mut line = serde_json::to_string(r)?;
            line.push('\n');
            let mut out = std::io::stdout().lock();
            out.write_all(line.as_bytes())?;
            return Ok(out.flush()?);
        }
        eprintln!("{}", human(r));
        Ok(())
    }

    fn warn(&mut self, msg: &str) {
        warn(msg);
    }
}

/// One record as a progress line (teammate text escaped).
fn human(r: &Record) -> String {
    let s = |v: &Option<String>| esc(v.as_deref().unwrap_or("-")).into_owned();
    let req = format!("{} of {} in {}", s(&r.request_id), s(&r.member), s(&r.team));
    match r.event {
        What::Posted => format!("posted {req}: code {}", s(&r.code)),
        What::Notice => format!("posted a need of {}: {}", s(&r.team), s(&r.detail)),
        What::Approved => format!("approved {req} (user {})", s(&r.user)),
        What::Denied => format!("denied {req} (user {}): {}", s(&r.user), s(&r.detail)),
        What::Said => format!(
            "said to {} in {} (user {})",
            s(&r.member),
            s(&r.team),
            s(&r.user)
        ),
        What::Status => format!("told the status (user {})", s(&r.user)),
        What::Refused => format!(
            "refused a command of user {} in chat {}: {}",
            s(&r.user),
            esc(&r.chat),
            s(&r.detail)
        ),
        What::Closed => format!("retired code {} ({req} was answered elsewhere)", s(&r.code)),
        What::Expired => format!("code {} for {req} expired", s(&r.code)),
        What::End => format!("stopped ({})", s(&r.detail).replace('_', " ")),
    }
}
