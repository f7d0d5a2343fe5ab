//! What a transport is: a [`Chat`] posts, and hands over what was said (a poller thread of its
//! own reads the service, so a long poll never holds up a post).

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use anyhow::Result;

use super::hear::Incoming;
use super::render::Post;

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
