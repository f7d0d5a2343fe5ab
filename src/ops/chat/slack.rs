//! Slack's Web API: `chat.postMessage` to post (mrkdwn with `&`, `<`, `>` escaped, so no
//! mention or link can form; the teammate's runs as code with their backticks written as
//! `\u{60}`; no parsing of names or URLs, no unfurling) and the replies in each posted
//! message's thread read by polling `conversations.replies` on a thread of its own. A post is
//! cut to the 40,000 characters Slack keeps ([`Post::fit`]: the teammate's text, never the
//! code). A `429` is waited out for its `Retry-After`; an error that refuses the message itself
//! (`msg_too_long`, a 400, …) drops that post; other failures back off from 1 s to 60 s. The token
//! travels only in the `Authorization` header, and is cut out of every error.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use url::Url;

use super::hear::Incoming;
use super::http::{self, Client, Failure, api_url};
use super::render::{Part, Post, visible};
use super::transport::{Chat, Flag, Inbound, Options, Transport, any_user_id, drain};
use crate::error::usage;

/// The pause before each `conversations.replies` call: about 50 calls a minute, Slack's
/// tier 3 (with several threads open, each is read less often).
const CALL_EVERY: Duration = Duration::from_millis(1200);
/// How long a request's thread is read for replies (a code lives 30 minutes by default).
const THREAD_FOR: Duration = Duration::from_secs(2 * 3600);
/// How much of a `chat.postMessage` text Slack keeps: a longer one is cut there (silently,
/// since 2018-08), which would cut off the answer line.
pub const TEXT_MAX: usize = 40_000;
/// What `chat.postMessage` adds to a post that offers a code.
const IN_THREAD: &str = "\n(reply in this thread)";
/// Slack's errors (`"ok": false`, HTTP 200) that refuse the message itself: sent again it would
/// be refused again. Any other (`not_in_channel`, `invalid_auth`, `internal_error`, …) refuses
/// the bot or the channel as a whole, or may pass later.
const REFUSED_FOR_GOOD: [&str; 8] = [
    "msg_too_long",
    "no_text",
    "invalid_blocks",
    "invalid_blocks_format",
    "invalid_attachments",
    "too_many_attachments",
    "invalid_arguments",
    "invalid_json",
];

/// Slack, as `bridge slack` and `run --bridge slack` know it.
pub const TRANSPORT: Transport = Transport {
    name: "slack",
    about: "Slack's Web API (chat.postMessage; replies in the message's thread, polled)",
    secret: "TEAMCTL_SLACK_TOKEN",
    takes: &[Flag::Api],
    user_id: any_user_id,
    start: |o| Ok(Box::new(open(&o)?)),
};
/// The Web API, unless `--api` names another.
pub const DEFAULT_API: &str = "https://slack.com/api";

/// The bot `o` names: `--api` (else [`DEFAULT_API`]), the token, `--chat` (the channel).
fn open(o: &Options) -> Result<Slack> {
    let api = api_url(o.api.as_deref().unwrap_or(DEFAULT_API))?;
    Slack::start(&api, o.secret(TRANSPORT.secret)?, &o.chat)
}

/// A Slack bot in one channel.
pub struct Slack {
    api: Api,
    channel: String,
    threads: Threads,
    rx: Receiver<Inbound>,
}

/// The threads to read: each posted message's `ts`, when it was posted, and whether it offers
/// a code. Read: the threads of requests (for [`THREAD_FOR`]) and of the newest message (where
/// `status` and `say` go), so the calls stay few (Slack rate-limits `conversations.replies`).
type Threads = Arc<Mutex<Vec<(String, Instant, bool)>>>;

/// The Web API's base URL and the token, and the client that calls it.
#[derive(Clone)]
struct Api {
    client: Client,
    base: String,
    token: String,
}

impl Api {
    /// Calls `method`: a JSON POST with `body`, or a GET with `query` when `body` is `None`.
    fn call(
        &self,
        method: &str,
        body: Option<&Value>,
        query: &[(&str, &str)],
    ) -> Result<Value, Failure> {
        let url = format!("{}/{method}", self.base);
        let auth = format!("Bearer {}", self.token);
        let auth = ("Authorization", auth.as_str());
        let answer = match body {
            Some(b) => {
                let json = ("Content-Type", "application/json; charset=utf-8");
                let body = b.to_string();
                self.client
                    .post_json(method, &url, &[auth, json], body.as_bytes())?
            }
            None => self.client.get(method, &url, &[auth], query)?,
        };
        let status = answer.status();
        if status == 429 {
            return Err(Failure::RateLimited(answer.retry_after()));
        }
        let text = answer.text()?;
        let v: Value = serde_json::from_str(&text).map_err(|_| {
            self.client
                .failed(method, format!("HTTP {status}, not a Web API answer"))
        })?;
        if v.get("ok").and_then(Value::as_bool) == Some(true) {
            return Ok(v);
        }
        let what = v.get("error").and_then(Value::as_str).unwrap_or("");
        let said = self.client.said(
            method,
            format!("HTTP {status}: {}", visible(what, false, 200)),
        );
        if http::refused_for_good(status) || REFUSED_FOR_GOOD.contains(&what) {
            return Err(Failure::Refused(said));
        }
        Err(Failure::Other(said))
    }
}

impl Slack {
    /// Starts a bot in `channel` through the Web API at `api` with `token`, its thread reader
    /// running.
    ///
    /// # Errors
    /// A usage error for a token that cannot be one.
    pub fn start(api: &Url, token: &str, channel: &str) -> Result<Slack> {
        if token.is_empty() || !token.chars().all(|c| c.is_ascii_graphic()) {
            return Err(usage(format!(
                "{} is not a Slack token (xoxb-…)",
                TRANSPORT.secret
            )));
        }
        let api = Api {
            client: Client::new("slack", token),
            base: api.as_str().trim_end_matches('/').to_string(),
            token: token.to_string(),
        };
        let threads: Threads = Arc::default();
        let (tx, rx) = mpsc::channel();
        let (poll, t, ch) = (api.clone(), threads.clone(), channel.to_string());
        thread::Builder::new()
            .name("slack-replies".into())
            .spawn(move || poll_replies(&poll, &ch, &t, &tx))?;
        Ok(Slack {
            api,
            channel: channel.to_string(),
            threads,
            rx,
        })
    }
}

impl Chat for Slack {
    fn post(&mut self, post: &Post, warn: &mut dyn FnMut(&str)) -> Result<()> {
        let max = TEXT_MAX - IN_THREAD.chars().count();
        let post = post.fit(max, &|p| mrkdwn(p).chars().count());
        let body = post_message(&self.channel, &post);
        let (api, threads) = (&self.api, &self.threads);
        http::post(&api.client.what("chat.postMessage"), warn, || {
            let v = api.call("chat.postMessage", Some(&body), &[])?;
            if let Some(ts) = v.get("ts").and_then(Value::as_str) {
                let mut t = threads.lock().unwrap_or_else(|e| e.into_inner());
                t.push((ts.to_string(), Instant::now(), post.code.is_some()));
            }
            Ok(())
        })
    }

    fn receive(&mut self, max: Duration) -> Vec<Inbound> {
        drain(&self.rx, max)
    }
}

/// Slack's three escapes: no `<@U…>`, `<!here>` or `<url|label>` can form.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// One run of a post as mrkdwn: teamctl's words escaped, the teammate's as code (its
/// backticks written `\u{60}`, so it cannot leave the span).
fn mrkdwn(p: &Part) -> String {
    match p {
        Part::Ours(s) => escape(s),
        Part::Theirs(s) => format!("`{}`", escape(&s.replace('`', "\\u{60}"))),
        Part::TheirsBlock(s) => format!("```{}```", escape(&s.replace('`', "\\u{60}"))),
    }
}

/// The `chat.postMessage` body for `post` in `channel`.
fn post_message(channel: &str, post: &Post) -> Value {
    let mut text: String = post.parts.iter().map(mrkdwn).collect();
    if post.code.is_some() {
        text.push_str(IN_THREAD);
    }
    json!({"channel": channel, "text": text, "mrkdwn": true, "parse": "none",
        "link_names": false, "unfurl_links": false, "unfurl_media": false})
}

/// Reads one reply of a thread in `channel` (not the parent, not a bot's).
fn incoming(channel: &str, m: &Value) -> Option<Incoming> {
    // A reply also sent to the channel is still a reply; other subtypes (joins, edits, bots'
    // messages) are not someone answering.
    let subtype = m.get("subtype").and_then(Value::as_str);
    if m.get("bot_id").is_some() || subtype.is_some_and(|s| s != "thread_broadcast") {
        return None;
    }
    let ts = m.get("ts")?.as_str()?;
    if m.get("thread_ts").and_then(Value::as_str) == Some(ts) {
        return None;
    }
    let (secs, micros) = ts.split_once('.').unwrap_or((ts, "0"));
    let at = DateTime::<Utc>::from_timestamp(
        secs.parse().ok()?,
        micros.parse::<u32>().unwrap_or(0).min(999_999) * 1000,
    );
    Some(Incoming {
        user: m.get("user")?.as_str()?.to_string(),
        chat: channel.to_string(),
        at,
        text: m.get("text")?.as_str()?.to_string(),
    })
}

/// The reader: every posted message's thread, once a second, each new reply handed over.
fn poll_replies(api: &Api, channel: &str, threads: &Threads, tx: &Sender<Inbound>) {
    let mut seen: HashMap<String, HashSet<String>> = HashMap::new();
    let mut wait = Duration::ZERO;
    loop {
        thread::sleep(CALL_EVERY.max(wait));
        let now: Vec<String> = {
            let mut t = threads.lock().unwrap_or_else(|e| e.into_inner());
            let last = t.len().saturating_sub(1);
            let mut i = 0;
            t.retain(|(_, at, code)| {
                i += 1;
                i - 1 == last || (*code && at.elapsed() < THREAD_FOR)
            });
            t.iter().map(|(ts, _, _)| ts.clone()).collect()
        };
        for (n, ts) in now.into_iter().enumerate() {
            if n > 0 {
                thread::sleep(CALL_EVERY);
            }
            let said = match api.call(
                "conversations.replies",
                None,
                &[("channel", channel), ("ts", &ts), ("limit", "200")],
            ) {
                Ok(v) => {
                    wait = Duration::ZERO;
                    let done = seen.entry(ts.clone()).or_default();
                    for m in v
                        .get("messages")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let Some(id) = m.get("ts").and_then(Value::as_str) else {
                            continue;
                        };
                        if !done.insert(id.to_string()) {
                            continue;
                        }
                        if let Some(i) = incoming(channel, m)
                            && tx.send(Inbound::Message(i)).is_err()
                        {
                            return;
                        }
                    }
                    continue;
                }
                Err(f) => f.told(&api.client.what("conversations.replies"), &mut wait),
            };
            if tx.send(Inbound::Warning(said)).is_err() {
                return;
            }
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::chat::code::Code;

    #[test]
    fn teammate_text_cannot_mention_link_or_leave_its_code_span() {
        let post = Post {
            parts: vec![
                Part::Ours("[a] ".into()),
                Part::Theirs("<!channel> <https://x.y|ok> `*b*` &amp;".into()),
                Part::TheirsBlock("a\n```\n<@U1>".into()),
            ],
            code: Code::parse("ab12cd34ef"),
        };
        let b = post_message("C1", &post);
        assert_eq!(
            b["text"],
            "[a] `&lt;!channel&gt; &lt;https://x.y|ok&gt; \\u{60}*b*\\u{60} &amp;amp;````a\n\
             \\u{60}\\u{60}\\u{60}\n&lt;@U1&gt;```\n(reply in this thread)"
        );
        assert_eq!(
            (&b["parse"], &b["link_names"]),
            (&json!("none"), &json!(false))
        );
    }

    /// Slack cuts a text past 40,000 characters (the answer line with it): a post is cut to
    /// fit as sent, `&` written `&amp;` counted, in the teammate's text only.
    #[test]
    fn a_post_is_cut_to_what_slack_keeps_as_sent() {
        let post = Post {
            parts: vec![
                Part::Ours("[a] ".into()),
                Part::TheirsBlock("&".repeat(30_000)),
                Part::Ours("\nanswer: approve ab12cd34ef".into()),
            ],
            code: Code::parse("ab12cd34ef"),
        };
        let fitted = post.fit(TEXT_MAX - IN_THREAD.chars().count(), &|p| {
            mrkdwn(p).chars().count()
        });
        let text = post_message("C1", &fitted)["text"]
            .as_str()
            .unwrap()
            .to_string();
        let n = text.chars().count();
        assert!((39_900..=TEXT_MAX).contains(&n), "{n}");
        assert!(text.ends_with("answer: approve ab12cd34ef\n(reply in this thread)"));
        assert!(text.contains("more characters)"));
    }

    #[test]
    fn replies_are_read_without_the_parent_or_bots() {
        let parent = json!({"type": "message", "user": "U1", "text": "x", "ts": "1.000100",
            "thread_ts": "1.000100"});
        let bot = json!({"type": "message", "bot_id": "B1", "text": "x", "ts": "2.0",
            "thread_ts": "1.000100"});
        let reply = json!({"type": "message", "user": "U2", "text": "approve x",
            "ts": "1795946400.000200", "thread_ts": "1.000100"});
        assert_eq!(incoming("C1", &parent), None);
        assert_eq!(incoming("C1", &bot), None);
        let joined = json!({"type": "message", "subtype": "channel_join", "user": "U2",
            "text": "x", "ts": "3.0", "thread_ts": "1.000100"});
        assert_eq!(incoming("C1", &joined), None);
        let mut broadcast = json!({"type": "message", "subtype": "thread_broadcast",
            "user": "U2", "text": "status", "ts": "4.0", "thread_ts": "1.000100"});
        assert!(incoming("C1", &broadcast).is_some());
        broadcast["bot_id"] = json!("B1");
        assert_eq!(incoming("C1", &broadcast), None);
        let i = incoming("C1", &reply).unwrap();
        assert_eq!((i.user.as_str(), i.chat.as_str()), ("U2", "C1"));
        assert_eq!(i.at.unwrap().timestamp(), 1795946400);
    }
}
