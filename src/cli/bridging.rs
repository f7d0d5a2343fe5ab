//! What `bridge` and `run --bridge` share: the chat's flags ([`ChatArgs`]: --chat, --allow,
//! --api, --url, --listen, --ttl), their checks, the transport started with its secret from
//! the environment, and how a bridge's record is told on stderr.

use std::path::Path;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use anyhow::Result;
use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use teamctl::error::usage;
use teamctl::ops::chat::{
    self, Bridge, Chat, Ground, Hooks, Options, Record, Scope, Settings, What,
};
use teamctl::ops::run::bridge::Desk;
use teamctl::time::parse_duration;

use crate::cli::context::Ctx;
use crate::cli::output::warn;
use crate::cli::term::escape_line as esc;

/// A chat service: one of the transports the library registers ([`chat::TRANSPORTS`]).
#[derive(Clone, Copy)]
pub(crate) struct Transport(&'static chat::Transport);

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

/// Every transport, as clap lists them.
static TRANSPORTS: LazyLock<Vec<Transport>> =
    LazyLock::new(|| chat::TRANSPORTS.iter().map(|t| Transport(t)).collect());

impl ValueEnum for Transport {
    fn value_variants<'a>() -> &'a [Self] {
        &TRANSPORTS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name).help(self.0.about))
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
        for id in &self.allow {
            (transport.0.user_id)(id)?;
        }
        Ok(Settings {
            transport: transport.0.name,
            chat,
            allow: self.allow.iter().map(|a| a.trim().to_string()).collect(),
            ttl,
            started: ctx.clock(),
            force,
        })
    }

    /// The transport, started from these flags, its secret (from the environment variable it
    /// names), teamctl's data dir and clock.
    ///
    /// # Errors
    /// A usage error (a flag of another transport, a bad URL, no secret); the --listen address
    /// taken.
    pub(crate) fn open(&self, ctx: &Ctx, transport: Transport) -> Result<Box<dyn Chat + Send>> {
        let options = Options {
            chat: self.chat.clone().unwrap_or_default(),
            api: self.api.clone(),
            url: self.url.clone(),
            listen: self.listen,
            secret: std::env::var(transport.0.secret).ok(),
            data_dir: ctx.records.data_dir().map(Path::to_path_buf),
            clock: Box::new(ctx.clock_fn()),
        };
        chat::open(transport.0, options)
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
        What::Dropped => format!(
            "the chat refused a post about {} for good, and it is dropped: {}",
            match (&r.request_id, &r.team) {
                (Some(_), _) => req,
                (None, Some(t)) => esc(t).into_owned(),
                (None, None) => "the bridge".into(),
            },
            s(&r.detail)
        ),
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
