//! What `bridge` and `run --bridge` share: the chat's flags ([`ChatArgs`]: --chat, --allow,
//! --api, --url, --listen, --ttl), their checks, the transport started with its secret from
//! the environment, and how a bridge's record is told on stderr.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use clap::{Args, ValueEnum};
use teamctl::error::usage;
use teamctl::ops::bridge::http::api_url;
use teamctl::ops::bridge::slack::Slack;
use teamctl::ops::bridge::telegram::Telegram;
use teamctl::ops::bridge::webhook::Webhook;
use teamctl::ops::bridge::{Bridge, Chat, Ground, Hooks, Record, Scope, Settings, What};
use teamctl::ops::run::bridge::Desk;
use teamctl::team::config::Team;
use teamctl::time::parse_duration;

use crate::cli::context::Ctx;
use crate::cli::env;
use crate::cli::output::warn;
use crate::cli::term::escape_line as esc;

/// The chat services.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Transport {
    /// Telegram's Bot API (getUpdates long-poll, sendMessage)
    Telegram,
    /// Slack's Web API (chat.postMessage; replies in the message's thread, polled)
    Slack,
    /// A signed webhook: posts to --url, answers taken on --listen
    Webhook,
}

impl Transport {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Transport::Telegram => "telegram",
            Transport::Slack => "slack",
            Transport::Webhook => "webhook",
        }
    }
}

/// The chat's flags, the same for `bridge` and `run --bridge`.
#[derive(Debug, Args)]
pub(crate) struct ChatArgs {
    /// The chat to post in and listen to (Telegram: its numeric id or @channelname; Slack: the
    /// channel id; webhook: the name answers must carry in "chat"); required (for `run`: with
    /// --bridge)
    #[arg(long, visible_alias = "channel", value_name = "ID")]
    #[arg(help = "The chat to post in and listen to", long_help)]
    chat: Option<String>,

    /// The chat user ids that may answer (comma-separated or repeated); required (for `run`:
    /// with --bridge)
    #[arg(long, value_name = "ID", value_delimiter = ',')]
    #[arg(help = "The chat user ids that may answer", long_help)]
    allow: Vec<String>,

    /// The service's API [default: https://api.telegram.org, https://slack.com/api]; http only
    /// to this machine
    #[arg(long, value_name = "URL")]
    #[arg(help = "The service's API [default: the service's own]", long_help)]
    api: Option<String>,

    /// Webhook: where each post is POSTed (https, or http only to this machine)
    #[arg(long, value_name = "URL")]
    #[arg(help = "Webhook: where each post is POSTed", long_help)]
    url: Option<String>,

    /// Webhook: the address answers are taken on (signed POSTs), e.g. 127.0.0.1:8787
    #[arg(long, value_name = "ADDR")]
    #[arg(help = "Webhook: the address answers are taken on", long_help)]
    listen: Option<std::net::SocketAddr>,

    /// How long a code works [default: 30m]
    #[arg(long, value_name = "DURATION")]
    ttl: Option<String>,
}

/// Leaves one of the chat's flags out of the short help (`-h`) of a verb that has them besides
/// its own (`run`: its -h names --bridge; `run --help` and `bridge -h` list them).
pub(crate) fn chat_flag_in_long_help(arg: clap::Arg) -> clap::Arg {
    static CHAT: std::sync::OnceLock<Vec<clap::Id>> = std::sync::OnceLock::new();
    let chat = CHAT.get_or_init(|| {
        let flags = ChatArgs::augment_args(clap::Command::new("chat"));
        flags.get_arguments().map(|a| a.get_id().clone()).collect()
    });
    if chat.contains(arg.get_id()) {
        // The long help is what `--help` and the man page show of it.
        match arg.get_long_help().or(arg.get_help()).cloned() {
            Some(long) => arg.hide_short_help(true).long_help(long),
            None => arg.hide_short_help(true),
        }
    } else {
        arg
    }
}

impl ChatArgs {
    /// Whether any of these flags was given (`run` takes them only with --bridge).
    pub(crate) fn any(&self) -> bool {
        self.chat.is_some()
            || !self.allow.is_empty()
            || self.api.is_some()
            || self.url.is_some()
            || self.listen.is_some()
            || self.ttl.is_some()
    }

    /// The bridge's settings for `transport`, after the flags are checked.
    ///
    /// # Errors
    /// A usage error: no --chat or --allow, a bad --ttl, an --allow that is no user id.
    pub(crate) fn settings(
        &self,
        ctx: &Ctx,
        transport: Transport,
        force: bool,
    ) -> Result<Settings> {
        let ttl = parse_duration(self.ttl.as_deref().unwrap_or("30m"))?;
        if ttl.is_zero() || ttl > Duration::from_secs(30 * 86400) {
            return Err(usage("--ttl must be longer than 0s and at most 30d"));
        }
        let Some(chat) = self.chat.clone() else {
            return Err(usage("--chat ID is required: the chat to post in"));
        };
        if self.allow.is_empty() {
            return Err(usage(
                "--allow ID is required: the chat user ids that may answer",
            ));
        }
        if self.allow.iter().any(|a| a.trim().is_empty()) {
            return Err(usage("--allow needs user ids (an empty one allows nobody)"));
        }
        if transport == Transport::Telegram
            && let Some(bad) = self.allow.iter().find(|a| a.trim().parse::<i64>().is_err())
        {
            return Err(usage(format!(
                "--allow takes Telegram user ids (numbers, as in a message's from.id), not '{bad}'"
            )));
        }
        Ok(Settings {
            transport: transport.name(),
            chat,
            allow: self.allow.iter().map(|a| a.trim().to_string()).collect(),
            ttl,
            started: ctx.clock(),
            force,
        })
    }

    /// The transport, started, after its flags and secret are checked.
    ///
    /// # Errors
    /// A usage error (a flag of another transport, a bad URL, no secret); the --listen address
    /// taken.
    pub(crate) fn open(&self, ctx: &Ctx, transport: Transport) -> Result<Box<dyn Chat + Send>> {
        let only = |flag: &str, set: bool, t: Transport| match set {
            true => Err(usage(format!("{flag} is for `bridge {}` only", t.name()))),
            false => Ok(()),
        };
        match transport {
            Transport::Telegram | Transport::Slack => {
                only("--url", self.url.is_some(), Transport::Webhook)?;
                only("--listen", self.listen.is_some(), Transport::Webhook)?;
            }
            Transport::Webhook => only("--api", self.api.is_some(), transport)?,
        }
        let chat = self.chat.as_deref().unwrap_or_default();
        Ok(match transport {
            Transport::Telegram => {
                let api = api_url(self.api.as_deref().unwrap_or("https://api.telegram.org"))?;
                Box::new(Telegram::start(&api, &secret(env::TELEGRAM_TOKEN)?, chat)?)
            }
            Transport::Slack => {
                let api = api_url(self.api.as_deref().unwrap_or("https://slack.com/api"))?;
                Box::new(Slack::start(&api, &secret(env::SLACK_TOKEN)?, chat)?)
            }
            Transport::Webhook => {
                let (Some(url), Some(listen)) = (&self.url, self.listen) else {
                    return Err(usage("bridge webhook needs --url URL and --listen ADDR"));
                };
                let url = api_url(url)?;
                let secret = secret(env::WEBHOOK_SECRET)?;
                Box::new(Webhook::start(
                    &url,
                    listen,
                    &secret,
                    Box::new(ctx.clock_fn()),
                )?)
            }
        })
    }
}

/// The secret of `var`, which only the environment may give.
fn secret(var: &str) -> Result<String> {
    match std::env::var(var) {
        Ok(s) if !s.is_empty() => Ok(s),
        _ => Err(usage(format!("set {var} (never on the command line)"))),
    }
}

/// One record as a progress line (teammate text escaped).
pub(crate) fn human(r: &Record) -> String {
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

/// The chat beside a run (`run --bridge`), started; `None` without --bridge.
///
/// # Errors
/// A usage error (the chat's flags without --bridge, or bad ones); the journal cannot be read;
/// the transport cannot start.
pub(crate) fn desk(
    ctx: &Ctx,
    transport: Option<Transport>,
    args: &ChatArgs,
) -> Result<Option<Arc<Desk>>> {
    let Some(transport) = transport else {
        if args.any() {
            return Err(usage(
                "--chat, --allow, --api, --url, --listen and --ttl go with --bridge TRANSPORT",
            ));
        }
        return Ok(None);
    };
    let settings = args.settings(ctx, transport, true)?;
    let ground = Ground {
        layout: ctx.layout.clone(),
        records: ctx.records.clone(),
        lock: ctx.lock,
    };
    let (bridge, warnings) = Bridge::new(settings, Scope::Run(None), ground)?;
    warnings.iter().for_each(|w| warn(w));
    let chat = args.open(ctx, transport)?;
    let tell = RunTell { json: ctx.out.json };
    let clock = Box::new(ctx.clock_fn());
    Ok(Some(Arc::new(Desk::start(
        bridge,
        chat,
        Box::new(tell),
        clock,
    ))))
}

/// How a run's bridge tells its records: a line on stderr, or with --json a JSON Lines event
/// on stderr (`"type": "bridge"` and the record's keys), as the run's own progress.
struct RunTell {
    json: bool,
}

impl Hooks for RunTell {
    fn before_look(&mut self, _team: &Team) -> Result<()> {
        Ok(())
    }

    fn record(&mut self, r: &Record) -> Result<()> {
        if self.json {
            let mut v = serde_json::to_value(r)?;
            v["type"] = "bridge".into();
            eprintln!("{v}");
        } else {
            eprintln!("bridge: {}", human(r));
        }
        Ok(())
    }

    fn warn(&mut self, msg: &str) {
        warn(&format!("bridge: {msg}"));
    }
}
