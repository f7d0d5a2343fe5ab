//! Where the teams' pictures meet the open pages: each team's latest picture (one SSE event,
//! serialized once), the pages' streams, and the plan approvals held until their planner
//! reports idle. A follower publishes a picture once; every stream gets the same bytes, so
//! fifty pages cost one read of the team per change.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::host::http_server::{Bytes, Fed, Feed, Reply};
use crate::team::protocol::Request;

/// How many events a page may fall behind before its stream is ended (it reconnects and gets
/// every team's picture afresh).
pub const QUEUE: usize = 256;

/// The comment that keeps a quiet stream open through proxies, and finds pages gone.
pub const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// A plan approval given on the page and held until its planner reports idle.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// The team.
    pub team: String,
    /// The request.
    pub request: Request,
    /// When it was given (RFC 3339).
    pub since: String,
}

#[derive(Default)]
struct Inner {
    /// The teams served: only theirs are published.
    served: Vec<String>,
    /// Each team's latest picture, as its SSE event (one buffer, shared by every stream's
    /// queue).
    pictures: BTreeMap<String, Bytes>,
    /// The open streams.
    feeds: Vec<Feed>,
    held: Vec<Held>,
    /// What every stream is told first (`event: hello`).
    hello: Bytes,
}

/// The teams' pictures and the pages' streams (see the module docs).
#[derive(Default)]
pub struct Hub {
    inner: Mutex<Inner>,
}

/// One SSE event: `event: <name>` and its one-line JSON.
pub fn event(name: &str, json: &str) -> Vec<u8> {
    format!("event: {name}\ndata: {json}\n\n").into_bytes()
}

impl Hub {
    /// A hub whose streams open with `hello`.
    pub fn new(hello: Vec<u8>) -> Hub {
        Hub {
            inner: Mutex::new(Inner {
                hello: hello.into(),
                ..Inner::default()
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new stream: the hello and every team's picture, then each change as it comes.
    pub fn subscribe(&self) -> Reply {
        let (feed, reply) = Reply::stream(QUEUE);
        let mut inner = self.lock();
        feed.send(inner.hello.clone());
        for p in inner.pictures.values() {
            feed.send(p.clone());
        }
        inner.feeds.push(feed);
        reply
    }

    /// The teams served now.
    pub fn served(&self) -> Vec<String> {
        self.lock().served.clone()
    }

    /// Serves `teams` from now on; tells every stream of each team no longer served
    /// (`gone(team)`: its event) and returns those.
    pub fn serve(&self, teams: Vec<String>, gone: &dyn Fn(&str) -> Vec<u8>) -> Vec<String> {
        let mut inner = self.lock();
        let dropped: Vec<String> = inner
            .served
            .iter()
            .filter(|t| !teams.contains(t))
            .cloned()
            .collect();
        inner.served = teams;
        for team in &dropped {
            inner.pictures.remove(team);
            inner.held.retain(|h| h.team != *team);
            broadcast(&mut inner.feeds, &Bytes::from(gone(team)));
        }
        dropped
    }

    /// Publishes `team`'s picture (an SSE event) to every stream, unless it is the one they
    /// have or the team is no longer served; returns whether it was new.
    pub fn publish(&self, team: &str, picture: Vec<u8>) -> bool {
        let mut inner = self.lock();
        if !inner.served.iter().any(|t| t == team)
            || inner.pictures.get(team).is_some_and(|p| *p == picture)
        {
            return false;
        }
        let shared = Bytes::from(picture);
        inner.pictures.insert(team.to_string(), shared.clone());
        broadcast(&mut inner.feeds, &shared);
        true
    }

    /// Sends the keep-alive comment to every stream, dropping those gone.
    pub fn keep_alive(&self) {
        broadcast(&mut self.lock().feeds, &Bytes::from_static(KEEP_ALIVE));
    }

    /// How many streams are open.
    pub fn streams(&self) -> usize {
        let mut inner = self.lock();
        inner.feeds.retain(|f| !f.is_gone());
        inner.feeds.len()
    }

    /// The teams with a picture.
    pub fn teams(&self) -> Vec<String> {
        self.lock().pictures.keys().cloned().collect()
    }

    /// Every team's picture, as JSON (what its event carries).
    pub fn pictures_json(&self) -> Vec<serde_json::Value> {
        let inner = self.lock();
        inner
            .pictures
            .values()
            .filter_map(|p| {
                let text = std::str::from_utf8(p).ok()?;
                let data = text.lines().find_map(|l| l.strip_prefix("data: "))?;
                serde_json::from_str(data).ok()
            })
            .collect()
    }

    /// Holds `h` (once per request); returns whether it was new.
    pub fn hold(&self, h: Held) -> bool {
        let mut inner = self.lock();
        let same = |o: &Held| o.team == h.team && o.request.request_id == h.request.request_id;
        if inner.held.iter().any(same) {
            return false;
        }
        inner.held.push(h);
        true
    }

    /// The approvals held for `team`.
    pub fn held(&self, team: &str) -> Vec<Held> {
        let inner = self.lock();
        inner
            .held
            .iter()
            .filter(|h| h.team == team)
            .cloned()
            .collect()
    }

    /// Lets go of the held approval of `request_id` in `team`.
    pub fn release(&self, team: &str, request_id: &str) {
        self.lock()
            .held
            .retain(|h| !(h.team == team && h.request.request_id == request_id));
    }
}

/// Sends `bytes` to every feed; a page that fell [`QUEUE`] events behind, or is gone, is
/// dropped (its stream ends).
fn broadcast(feeds: &mut Vec<Feed>, bytes: &Bytes) {
    feeds.retain(|f| f.send(bytes.clone()) == Fed::Queued);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_picture_is_published_once_and_a_new_stream_starts_with_every_picture() {
        let hub = Hub::new(event("hello", "{}"));
        hub.serve(vec!["a".into(), "b".into()], &|_| Vec::new());
        assert!(hub.publish("a", event("team", "{\"n\":1}")));
        assert!(!hub.publish("a", event("team", "{\"n\":1}")));
        assert!(hub.publish("b", event("team", "{\"n\":2}")));
        let _r = hub.subscribe();
        assert_eq!(hub.streams(), 1);
        assert_eq!(hub.teams(), ["a", "b"]);
        assert_eq!(hub.serve(vec!["b".into()], &|_| Vec::new()), ["a"]);
        assert_eq!(hub.teams(), ["b"]);
        assert!(!hub.publish("a", event("team", "{\"n\":3}")));
    }

    #[test]
    fn a_stream_whose_page_is_gone_is_dropped() {
        let hub = Hub::new(event("hello", "{}"));
        drop(hub.subscribe());
        hub.keep_alive();
        assert_eq!(hub.streams(), 0);
    }
}
