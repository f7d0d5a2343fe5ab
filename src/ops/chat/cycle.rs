//! The bridge's loop, whatever the chat ([`Chat`]): read the teams, post what is new (backing
//! off while the chat refuses), hear what the chat said, until a deadline or the team is gone.

use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};

use super::hear::Incoming;
use super::http::Refused;
use super::journal::{Record, What};
use super::out::Outgoing;
use super::render::Post;
use super::state::Bridge;
use super::transport::{Chat, Inbound};
use crate::team::config::Team;

/// How often the teams are read for new requests while the chat is quiet.
pub const LOOK_EVERY: Duration = Duration::from_millis(250);

/// What the loop tells its caller about, and asks of it.
pub trait Hooks {
    /// Before each look at `team`: answer what the rules decide (`--policy`).
    ///
    /// # Errors
    /// An error ends the bridge.
    fn before_look(&mut self, team: &Team) -> Result<()>;
    /// A journaled record (a post, an answer, a refusal, the end).
    ///
    /// # Errors
    /// An error ends the bridge (such as a closed pipe).
    fn record(&mut self, r: &Record) -> Result<()>;
    /// A warning.
    fn warn(&mut self, msg: &str);
}

/// Runs the bridge until `deadline` (returns `timeout`) or its team is gone (`team_gone`),
/// with `now` as its clock. The last record is the `end`, given to the hooks (not journaled).
///
/// # Errors
/// The journal cannot be written; errors of the hooks.
pub fn run(
    bridge: &mut Bridge,
    chat: &mut dyn Chat,
    hooks: &mut dyn Hooks,
    deadline: Option<Instant>,
    now: &dyn Fn() -> DateTime<Utc>,
) -> Result<&'static str> {
    let mut backoff = Duration::ZERO;
    let mut next_post = Instant::now();
    let why = loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break "timeout";
        }
        if bridge.team_gone() {
            break "team_gone";
        }
        if bridge.over_budget().is_some() {
            break "budget";
        }
        for w in bridge.refresh() {
            hooks.warn(&w);
        }
        let teams: Vec<Team> = bridge.teams().cloned().collect();
        for t in &teams {
            hooks.before_look(t)?;
        }
        if Instant::now() >= next_post {
            match post_all(bridge, chat, hooks, now()) {
                Ok(()) => backoff = Duration::ZERO,
                Err(e) => {
                    backoff = super::http::backoff(backoff);
                    hooks.warn(&format!(
                        "could not post to the chat: {e:#} (trying again in {}s)",
                        backoff.as_secs()
                    ));
                    next_post = Instant::now() + backoff;
                }
            }
        }
        let max = deadline.map_or(LOOK_EVERY, |d| {
            d.saturating_duration_since(Instant::now()).min(LOOK_EVERY)
        });
        for inbound in chat.receive(max) {
            match inbound {
                Inbound::Warning(w) => hooks.warn(&w),
                Inbound::Message(m) => hear(bridge, chat, hooks, &m, now())?,
            }
        }
    };
    let mut end = bridge.record(What::End, now());
    end.detail = Some(why.to_string());
    // The person learns the bridge has stopped answering (best effort: it is stopping).
    let names: Vec<String> = bridge.teams().map(|t| t.name.to_string()).collect();
    let bye = Post::say(format!(
        "[{}] the bridge stopped ({}): answer at a terminal from now on",
        names.join(", "),
        why.replace('_', " ")
    ));
    if let Err(e) = chat.post(&bye, &mut |w| hooks.warn(w)) {
        hooks.warn(&format!("could not post to the chat: {e:#}"));
    }
    hooks.record(&end)?;
    Ok(why)
}

/// Posts what a look found, journaling each once the chat has it; stops at the first failure
/// that may pass (a post refused for good is dropped and the next posted: [`deliver`]).
pub(crate) fn post_all(
    bridge: &mut Bridge,
    chat: &mut dyn Chat,
    hooks: &mut dyn Hooks,
    now: DateTime<Utc>,
) -> Result<()> {
    let (out, warnings) = bridge.look(now);
    for w in warnings {
        hooks.warn(&w);
    }
    for o in out {
        let r = deliver(bridge, chat, &mut |w| hooks.warn(w), &o, now)?;
        hooks.record(&r)?;
    }
    Ok(())
}

/// Posts `o` and journals it once the chat has it; returns the record to tell. A post the chat
/// refuses for good ([`Refused`]: a 400 Bad Request, …) is dropped instead, said through `warn`
/// and journaled as `dropped` ([`Bridge::dropped`]), so it never holds up the next post.
///
/// # Errors
/// The chat could not take it now (unreachable, a 5xx, still rate limited: try again later);
/// the journal could not be written.
pub(crate) fn deliver(
    bridge: &mut Bridge,
    chat: &mut dyn Chat,
    warn: &mut dyn FnMut(&str),
    o: &Outgoing,
    now: DateTime<Utc>,
) -> Result<Record> {
    match chat.post(&o.post, warn) {
        Ok(()) => {
            bridge.posted(o)?;
            Ok(o.record.clone())
        }
        Err(e) => {
            let Some(refused) = e.downcast_ref::<Refused>() else {
                return Err(e);
            };
            warn(&format!(
                "the chat refused a post for good, and it is dropped (never tried again while \
                 the bridge runs): {refused}"
            ));
            bridge.dropped(o, &refused.0, now)
        }
    }
}

/// Whether `e` says the chat refused a post for good ([`Refused`]).
pub(crate) fn refused(e: &anyhow::Error) -> bool {
    e.downcast_ref::<Refused>().is_some()
}

/// Hears one message and posts the reply (a reply that cannot be posted is a warning: what the
/// command did is journaled and stands).
pub(crate) fn hear(
    bridge: &mut Bridge,
    chat: &mut dyn Chat,
    hooks: &mut dyn Hooks,
    m: &Incoming,
    now: DateTime<Utc>,
) -> Result<()> {
    let heard = bridge.hear(m, now)?;
    if let Some(r) = &heard.record {
        hooks.record(r)?;
    }
    if let Some(reply) = &heard.reply
        && let Err(e) = chat.post(reply, &mut |w| hooks.warn(w))
    {
        hooks.warn(&format!("could not post a reply to the chat: {e:#}"));
    }
    Ok(())
}
