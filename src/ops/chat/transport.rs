//! What a transport is: a [`Chat`] posts, and hands over what was said (a poller thread of its
//! own reads the service, so a long poll never holds up a post); a [`Transport`] is what
//! teamctl knows of one service (its name, the flags it takes, its rule for a user id, its
//! secret) and how it starts from the chat's flags ([`Options`]).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::hear::Incoming;
use super::render::Post;
use crate::error::usage;

/// A chat service teamctl bridges to, each in a file of its own and registered once
/// ([`super::TRANSPORTS`]).
pub struct Transport {
    /// Its name: `bridge NAME`, `run --bridge NAME`, the journal's `transport`.
    pub name: &'static str,
    /// What it is, in one line (the list of transports in `--help`).
    pub about: &'static str,
    /// The environment variable its secret comes from (never the command line).
    pub secret: &'static str,
    /// The flags it takes beyond the chat's own (`--chat`, `--allow`, `--ttl`); another is
    /// refused.
    pub takes: &'static [Flag],
    /// Whether an `--allow` id can be one of its users: a usage error saying why not.
    pub user_id: fn(&str) -> Result<()>,
    /// Starts it, its own flags checked.
    pub start: fn(Options) -> Result<Box<dyn Chat + Send>>,
}

impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// A flag of the chat that only some transports take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flag {
    /// `--api`: the service's API.
    Api,
    /// `--url`: where each post is sent.
    Url,
    /// `--listen`: the address answers are taken on.
    Listen,
}

impl Flag {
    /// Every one.
    pub const ALL: [Flag; 3] = [Flag::Api, Flag::Url, Flag::Listen];

    /// As it is written.
    pub fn name(self) -> &'static str {
        match self {
            Flag::Api => "--api",
            Flag::Url => "--url",
            Flag::Listen => "--listen",
        }
    }

    /// Whether it is given in `o`.
    pub fn given(self, o: &Options) -> bool {
        match self {
            Flag::Api => o.api.is_some(),
            Flag::Url => o.url.is_some(),
            Flag::Listen => o.listen.is_some(),
        }
    }
}

/// The clock a transport stamps with (and checks a signed answer's time against).
pub type Clock = Box<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// What a transport starts from: the chat's flags as given, its secret, teamctl's data dir and
/// clock.
pub struct Options {
    /// `--chat`: the chat to post in (and the only one whose messages count).
    pub chat: String,
    /// `--api`: the service's API, else the transport's own default.
    pub api: Option<String>,
    /// `--url`: where each post is sent.
    pub url: Option<String>,
    /// `--listen`: the address answers are taken on.
    pub listen: Option<SocketAddr>,
    /// Its secret as the environment gave it ([`Transport::secret`]), `None` when unset or
    /// empty.
    pub secret: Option<String>,
    /// teamctl's data dir (what a transport keeps between runs).
    pub data_dir: Option<PathBuf>,
    /// The clock.
    pub clock: Clock,
}

impl Options {
    /// The secret, from the variable `var` ([`Transport::secret`]).
    ///
    /// # Errors
    /// A usage error when it is not set.
    pub fn secret(&self, var: &str) -> Result<&str> {
        match self.secret.as_deref() {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(usage(format!("set {var} (never on the command line)"))),
        }
    }
}

/// [`Transport::user_id`] of a service whose user ids are any text.
pub fn any_user_id(_id: &str) -> Result<()> {
    Ok(())
}

/// What a transport hands over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// A message (or a button press).
    Message(Incoming),
    /// Something to say on stderr (the service refused, rate limits, backoff).
    Warning(String),
}

/// A chat service.
pub trait Chat {
    /// Posts `post` to the configured chat, cut to what a message there holds
    /// ([`Post::fit`]), waiting out the service's own rate limit (said through `warn`).
    ///
    /// # Errors
    /// [`Refused`](super::http::Refused) when the service refused this post for good (it is dropped); any other
    /// error when it could not be reached or refused it for now (the caller backs off and
    /// tries again later).
    fn post(&mut self, post: &Post, warn: &mut dyn FnMut(&str)) -> Result<()>;
    /// What was said since the last call, waiting up to `max` for something.
    fn receive(&mut self, max: Duration) -> Vec<Inbound>;
}

/// What a transport's own thread handed over through `rx`: waits up to `max` for the first,
/// then takes what else is there (a thread that ended gives nothing, after `max`).
pub fn drain(rx: &Receiver<Inbound>, max: Duration) -> Vec<Inbound> {
    let mut out = Vec::new();
    match rx.recv_timeout(max) {
        Ok(i) => out.push(i),
        Err(RecvTimeoutError::Timeout) => return out,
        Err(RecvTimeoutError::Disconnected) => {
            std::thread::sleep(max);
            return out;
        }
    }
    out.extend(rx.try_iter());
    out
}
