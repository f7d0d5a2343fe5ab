//! `teamctl bridge`: post a team's requests and needs to a chat and answer them from there.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use teamctl::error::usage;
use teamctl::ops::bridge::{self, Asked};
use teamctl::ops::chat::{Ground, Hooks, Record, Scope};
use teamctl::team::config::Team;

use crate::cli::answer::check_lead;
use crate::cli::args::{CapArgs, deadline};
use crate::cli::bridging::{ChatArgs, Transport, human};
use crate::cli::by_policy::{EventsTo, Runner};
use crate::cli::context::Ctx;
use crate::cli::output::warn;

/// What `bridge --help` says: the chat's commands one to a line (clap would join a doc
/// comment's lines into one paragraph).
const LONG_ABOUT: &str = "Post a team's requests to a chat and answer them from there

Runs in the foreground (beside `wait`, `ask` or a live team) until --timeout, Ctrl-C or the team \
is gone (and says so in the chat, but on Ctrl-C). Each request a teammate makes of its lead (a \
permission, a plan, a sandbox host) is posted once, with the team, the member, what it wants (for \
Bash the command, for a plan its start), how long it has waited, and a one-time code; so is each \
other reason a person is needed (a member gone with work waiting, API calls out of retries, an \
inbox nobody reads, a stopped team). In the chat, an allowed user answers:

  approve CODE
  deny CODE [reason]
  say MEMBER TEXT         (say TEAM/MEMBER TEXT with --all-teams)
  status

An answer is written exactly as `teamctl approve`/`deny` writes it, a `say` as `teamctl send` \
(from team-lead). With --policy FILE (the language of `approve --policy`, docs/policy.md) the \
rules answer first, and only what they leave is posted.

Transports (none needs an inbound port but the webhook):

telegram: the Bot API; getUpdates long-poll, sendMessage with Approve/Deny buttons; --chat ID; \
token in TEAMCTL_TELEGRAM_TOKEN.

slack: the Web API; chat.postMessage, and the replies in the threads of its requests (for 2 \
hours) and of its newest message, one conversations.replies call every 1.2 s in turn (Slack \
rate-limits it: a 429 is waited out, and answers are read late rather than never). Every command, \
status and say too, is a reply in such a thread. --channel ID; token (xoxb-…, scopes chat:write \
and channels:history or groups:history) in TEAMCTL_SLACK_TOKEN.

webhook: each post is POSTed as JSON ({\"schema_version\":1,\"text\",\"parts\",\"code\"}) to \
--url; answers are POSTed as {\"user\",\"chat\",\"text\"} to --listen. Both ways are signed: \
X-Teamctl-Timestamp (Unix seconds) and X-Teamctl-Signature: sha256=HMAC-SHA256(secret, \
\"<timestamp>.<body>\") in hex; an answer is taken only when its signature matches and its \
timestamp is within 5 minutes (else 401), and only once (the same bytes again get 409, also \
after a restart: the signatures taken are kept in teamctl's data dir for those 5 minutes). \
Secret in TEAMCTL_WEBHOOK_SECRET (16 characters at least).

Who may answer: only the user ids given with --allow (required), only in the chat given with \
--chat, only messages sent after the bridge started. A code is 10 characters (50 random bits), \
works once, for one request of one team, until --ttl; a request answered elsewhere meanwhile (a \
terminal, a policy) retires its code, and a request still open when its code expires is posted \
again with a new one. Every post and every decision (who, which chat, when, which request, what) \
is journaled in teamctl's data dir (bridge.jsonl; refusals apart, in bridge-refused.jsonl, so a \
flood of them crowds out nothing), so a restarted bridge posts nothing twice and \
accepts no code twice. Teammate text is shown as code, never as a link, mention or markup \
(docs/security.md, \"Chat bridge\").

Tokens and secrets come only from the environment, and are cut out of every error. --api and \
--url are https, or http only to this machine. A service that refuses or rate-limits (Telegram's \
retry_after, Slack's and the webhook's Retry-After) is waited out and retried, said on stderr: a \
request is posted late rather than never. A post is cut to what a message holds (Telegram 4,096 \
characters, Slack 40,000), in the teammate's text only, saying so; one the service refuses for \
good (a 400 Bad Request, Slack's msg_too_long) is dropped, said and journaled (`dropped`), and \
never holds up the next.

With --max-cost, --max-tokens or --max-cost-per-member (and --warn-at PERCENT), the team's spend \
is read from its transcripts (as `wait` reads it): each --warn-at crossing of a limit is posted \
once (per member for --max-cost-per-member), and so is the cap crossed, after which the bridge \
stops with exit 6 (the team goes on; nobody answers from the chat then).

Progress on stderr, one line per post and decision. With --json: JSON Lines on stdout, one per \
post and decision, as journaled: `{\"schema_version\":1,\"event\",\"at\",\"transport\",\"chat\", \
\"user\",\"team\",\"member\",\"request_id\",\"code\",\"expires_at\",\"detail\"}` (\"event\": \
posted, notice, approved, denied, said, status, refused, closed, expired, dropped, and last `end` with \
\"detail\": timeout, team_gone or budget); with --policy, its `decision` events too (as `approve \
--policy`).

Exit codes: 0 at --timeout or when the team is gone; 6 the cap crossed; 1 a failure (the journal \
cannot be written, unknown team, the --listen address taken); 2 a bad flag, policy file, URL, \
token or secret, or a team teamctl does not lead (without --force); 130 on Ctrl-C.";

/// Post a team's requests to a chat and answer them from there
#[derive(Debug, Args)]
#[command(long_about = LONG_ABOUT)]
#[command(after_long_help = "Examples:
  export TEAMCTL_TELEGRAM_TOKEN=123456:ABC…        # from @BotFather
  teamctl bridge telegram --chat -1001234567890 --allow 42
  teamctl bridge telegram --chat 42 --allow 42,77 --policy .claude/settings.json --all-teams
  teamctl run … & teamctl bridge telegram --chat 42 --allow 42 --timeout 2h --json >> bridge.jsonl
  teamctl bridge telegram --chat 42 --allow 42 --max-cost 20 --warn-at 80   # spend posted
  TEAMCTL_SLACK_TOKEN=xoxb-… teamctl bridge slack --channel C0123ABCD --allow U024BE7LH
  TEAMCTL_WEBHOOK_SECRET=$(openssl rand -hex 32) teamctl bridge webhook \\
      --url https://hooks.example.com/teamctl --listen 127.0.0.1:8787 --chat ops --allow alice

In the chat:
  approve 7k2m9q4xwd
  deny 7k2m9q4xwd not on main, use a branch
  say alice the tests on CI are red, look at test_auth
  status")]
pub(crate) struct BridgeArgs {
    /// The chat service
    #[arg(value_name = "TRANSPORT")]
    transport: Transport,

    #[command(flatten)]
    chat: ChatArgs,

    /// Answer by the rules in FILE first (as `approve --policy`); post only what they leave
    #[arg(long, value_name = "FILE")]
    #[arg(
        help = "Answer by the rules in FILE first; post only what they leave",
        long_help
    )]
    policy: Option<PathBuf>,

    /// Serve every team teamctl leads (every team with --force), as teams come and go
    #[arg(long)]
    #[arg(
        help = "Serve every team teamctl leads, as teams come and go",
        long_help
    )]
    all_teams: bool,

    /// Stop after this long (exit 0)
    #[arg(long, value_name = "DURATION")]
    timeout: Option<String>,

    /// Answer in teams teamctl does not lead too
    #[arg(long)]
    force: bool,

    #[command(flatten)]
    cap: CapArgs,
}

pub(crate) fn run(ctx: &Ctx, args: BridgeArgs) -> Result<()> {
    let settings = args.chat.settings(ctx, args.transport, args.force)?;
    let cap = args.cap.cap()?;
    if args.all_teams && ctx.team_given() {
        return Err(usage(
            "--all-teams and --team name different teams: give one",
        ));
    }
    let deadline = deadline(args.timeout.as_deref())?;
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
    let ground = Ground {
        layout: ctx.layout.clone(),
        records: ctx.records.clone(),
        lock: ctx.lock,
    };
    let asked = Asked {
        settings,
        scope,
        ground,
        cap,
        deadline,
    };
    let mut tell = Tell {
        ctx,
        runner,
        stamps: HashMap::new(),
    };
    let open = || args.chat.open(ctx, args.transport);
    bridge::run(asked, open, &mut tell, &|| ctx.clock())
}

/// What the loop reports: records on stdout (--json) or stderr, the policy's passes.
struct Tell<'a> {
    ctx: &'a Ctx,
    runner: Option<Runner>,
    /// Each team's lead inbox as the policy last saw it.
    stamps: HashMap<String, Option<Stamp>>,
}

/// What tells a file changed: its modification time and size.
type Stamp = (std::time::SystemTime, u64);

/// The lead's inbox's stamp (`None` when it cannot be read: then the pass runs).
fn lead_inbox_stamp(team: &Team) -> Option<Stamp> {
    let lead = team.config.as_ref()?.lead()?.name.clone();
    let lead = teamctl::store::paths::MemberName::parse(&lead).ok()?;
    let info = team.inbox_path(&lead).stat().ok()??;
    Some((info.mtime, info.size))
}

impl Hooks for Tell<'_> {
    fn before_look(&mut self, team: &Team) -> Result<()> {
        let Some(r) = self.runner.as_mut() else {
            return Ok(());
        };
        // A pass reads the sent log: run it when the lead's inbox changed (or a write failed,
        // or a plan was held back), not on every look.
        let stamp = lead_inbox_stamp(team);
        let last = self.stamps.insert(team.name.to_string(), stamp);
        if last.is_some_and(|l| l == stamp && stamp.is_some()) && !r.due() {
            return Ok(());
        }
        r.step_reopened(self.ctx, team)
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
