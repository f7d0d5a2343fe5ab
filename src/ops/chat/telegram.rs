//! Telegram's Bot API: `sendMessage` to post (the teammate's text as `code`/`pre` entities,
//! no parse mode, no link previews; Approve/Deny buttons beside a code) and `getUpdates`
//! long-polled on a thread of its own (an offset past every update seen; button presses
//! acknowledged with `answerCallbackQuery`). A post is cut to the 4,096 characters a message
//! holds ([`Post::fit`]: the teammate's text, never the code). A `429` is waited out for the
//! `retry_after` the service names; a `400` refuses that post for good (it is dropped); other
//! failures back off from 1 s to 60 s. The token is only ever part of a request's path, and cut
//! out of every error.

use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::Duration;

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use url::Url;

use super::hear::Incoming;
use super::http::{self, Client, Failure, MAX_RETRY_AFTER, api_url};
use super::render::{Part, Post, visible};
use super::transport::{Chat, Flag, Inbound, Options, Transport, drain};
use crate::error::usage;

/// The longest text `sendMessage` takes: 4,096 characters (after entities are parsed; counted
/// here in UTF-16 units, as the entities' offsets are, so an emoji counts twice: on the safe
/// side).
pub const TEXT_MAX: usize = 4096;
/// How long one `getUpdates` waits on the server for something to arrive.
const LONG_POLL: Duration = Duration::from_secs(25);

/// Telegram, as `bridge telegram` and `run --bridge telegram` know it.
pub const TRANSPORT: Transport = Transport {
    name: "telegram",
    about: "Telegram's Bot API (getUpdates long-poll, sendMessage)",
    secret: "TEAMCTL_TELEGRAM_TOKEN",
    takes: &[Flag::Api],
    user_id,
    start: |o| Ok(Box::new(open(&o)?)),
};
/// The Bot API, unless `--api` names another.
pub const DEFAULT_API: &str = "https://api.telegram.org";

/// A Telegram user id is a number (a message's `from.id`).
fn user_id(id: &str) -> Result<()> {
    match id.trim().parse::<i64>() {
        Ok(_) => Ok(()),
        Err(_) => Err(usage(format!(
            "--allow takes Telegram user ids (numbers, as in a message's from.id), not '{id}'"
        ))),
    }
}

/// The bot `o` names: `--api` (else [`DEFAULT_API`]), the token, `--chat`.
fn open(o: &Options) -> Result<Telegram> {
    let api = api_url(o.api.as_deref().unwrap_or(DEFAULT_API))?;
    Telegram::start(&api, o.secret(TRANSPORT.secret)?, &o.chat)
}

/// A Telegram bot in one chat.
pub struct Telegram {
    api: Api,
    chat: String,
    rx: Receiver<Inbound>,
}

/// A bot's endpoint: the API's base URL and the token, and the client that calls it.
#[derive(Clone)]
struct Api {
    client: Client,
    base: String,
    token: String,
}

impl Api {
    fn call(&self, method: &str, body: &Value) -> Result<Value, Failure> {
        let url = format!("{}/bot{}/{method}", self.base, self.token);
        let body = body.to_string();
        let answer = self.client.post_json(method, &url, &[], body.as_bytes())?;
        let status = answer.status();
        let text = answer.text()?;
        let v: Value = serde_json::from_str(&text).map_err(|_| {
            self.client
                .failed(method, format!("HTTP {status}, not a Bot API answer"))
        })?;
        if v.get("ok").and_then(Value::as_bool) == Some(true) {
            return Ok(v.get("result").cloned().unwrap_or(Value::Null));
        }
        let retry = v.pointer("/parameters/retry_after").and_then(Value::as_u64);
        if status == 429 || v.get("error_code").and_then(Value::as_u64) == Some(429) {
            let secs = retry.unwrap_or(1);
            return Err(Failure::RateLimited(
                Duration::from_secs(secs).min(MAX_RETRY_AFTER),
            ));
        }
        let what = v.get("description").and_then(Value::as_str).unwrap_or("");
        let said = self.client.said(
            method,
            format!("HTTP {status}: {}", visible(what, false, 200)),
        );
        let code = v.get("error_code").and_then(Value::as_u64).unwrap_or(0);
        if http::refused_for_good(status) || http::refused_for_good(code as u16) {
            return Err(Failure::Refused(said));
        }
        Err(Failure::Other(said))
    }
}

impl Telegram {
    /// Starts a bot in `chat` through the Bot API at `api` with `token`, its `getUpdates`
    /// poller running.
    ///
    /// # Errors
    /// A usage error for a token that cannot be one.
    pub fn start(api: &Url, token: &str, chat: &str) -> Result<Telegram> {
        if token.is_empty() || !token.chars().all(|c| c.is_ascii_graphic() && c != '/') {
            return Err(usage(format!(
                "{} is not a bot token (as @BotFather gives it: digits, ':', letters)",
                TRANSPORT.secret
            )));
        }
        let api = Api {
            client: Client::new("telegram", token),
            base: api.as_str().trim_end_matches('/').to_string(),
            token: token.to_string(),
        };
        let poll = Api {
            client: api.client.waiting(LONG_POLL + Duration::from_secs(15)),
            ..api.clone()
        };
        let (tx, rx) = mpsc::channel();
        thread::Builder::new()
            .name("telegram-getUpdates".into())
            .spawn(move || poll_updates(&poll, &tx))?;
        Ok(Telegram {
            api,
            chat: chat.to_string(),
            rx,
        })
    }
}

impl Chat for Telegram {
    fn post(&mut self, post: &Post, warn: &mut dyn FnMut(&str)) -> Result<()> {
        let post = post.fit(TEXT_MAX, &|p| p.text().encode_utf16().count());
        let body = send_message(&self.chat, &post);
        let what = self.api.client.what("sendMessage");
        http::post(&what, warn, || {
            self.api.call("sendMessage", &body).map(drop)
        })
    }

    fn receive(&mut self, max: Duration) -> Vec<Inbound> {
        drain(&self.rx, max)
    }
}

/// The `sendMessage` body for `post` in `chat`: the text, the teammate's runs as `code` (one
/// line) and `pre` (a block) entities, no parse mode, no link preview, and Approve/Deny
/// buttons when it offers a code.
fn send_message(chat: &str, post: &Post) -> Value {
    let mut text = String::new();
    let mut entities = Vec::new();
    let mut at = 0usize;
    for p in &post.parts {
        let (s, kind) = match p {
            Part::Ours(s) => (s, None),
            Part::Theirs(s) => (s, Some("code")),
            Part::TheirsBlock(s) => (s, Some("pre")),
        };
        let len = s.encode_utf16().count();
        if let Some(kind) = kind {
            entities.push(json!({"type": kind, "offset": at, "length": len}));
        }
        text.push_str(s);
        at += len;
    }
    let mut body = Map::new();
    body.insert("chat_id".into(), chat_id(chat));
    body.insert("text".into(), text.into());
    body.insert("entities".into(), entities.into());
    body.insert("link_preview_options".into(), json!({"is_disabled": true}));
    if let Some(code) = &post.code {
        body.insert(
            "reply_markup".into(),
            json!({"inline_keyboard": [[
                {"text": "Approve", "callback_data": format!("approve {code}")},
                {"text": "Deny", "callback_data": format!("deny {code}")}
            ]]}),
        );
    }
    Value::Object(body)
}

/// A chat id as the Bot API takes it: a number when it is one, else `@channel` text.
fn chat_id(chat: &str) -> Value {
    chat.parse::<i64>()
        .map_or_else(|_| chat.into(), Value::from)
}

/// An id as text (`42`, `-1001234`), whether the service sent a number or a string.
fn id_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// Reads one update: a text message, or a button press.
fn incoming(u: &Value) -> Option<Incoming> {
    if let Some(m) = u.get("message") {
        let date = m.get("date")?.as_i64()?;
        return Some(Incoming {
            user: id_text(m.pointer("/from/id"))?,
            chat: id_text(m.pointer("/chat/id"))?,
            at: DateTime::<Utc>::from_timestamp(date, 0),
            text: m.get("text")?.as_str()?.to_string(),
        });
    }
    let q = u.get("callback_query")?;
    Some(Incoming {
        user: id_text(q.pointer("/from/id"))?,
        chat: id_text(q.pointer("/message/chat/id"))?,
        at: None,
        text: q.get("data")?.as_str()?.to_string(),
    })
}

/// The poller: `getUpdates` from the last offset, each update handed over, until the bridge
/// stops listening.
fn poll_updates(api: &Api, tx: &Sender<Inbound>) {
    let mut offset: Option<i64> = None;
    let mut wait = Duration::ZERO;
    loop {
        let mut body = json!({"timeout": LONG_POLL.as_secs(),
            "allowed_updates": ["message", "callback_query"]});
        if let Some(o) = offset {
            body["offset"] = o.into();
        }
        let said = match api.call("getUpdates", &body) {
            Ok(result) => {
                wait = Duration::ZERO;
                let updates = result.as_array().cloned().unwrap_or_default();
                for u in &updates {
                    if let Some(id) = u.get("update_id").and_then(Value::as_i64) {
                        offset = Some(offset.map_or(id + 1, |o| o.max(id + 1)));
                    }
                    if let Some(q) = u.pointer("/callback_query/id") {
                        // Stops the button's spinner; what it does is the bridge's reply.
                        let _ = api.call("answerCallbackQuery", &json!({"callback_query_id": q}));
                    }
                    if let Some(m) = incoming(u)
                        && tx.send(Inbound::Message(m)).is_err()
                    {
                        return;
                    }
                }
                continue;
            }
            Err(f) => f.told(&api.client.what("getUpdates"), &mut wait),
        };
        if tx.send(Inbound::Warning(said)).is_err() {
            return;
        }
        thread::sleep(wait);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::chat::code::Code;

    #[test]
    fn teammate_runs_are_code_entities_counted_in_utf16() {
        let post = Post {
            parts: vec![
                Part::Ours("[a] 😀 ".into()),
                Part::Theirs("@admin https://x.y".into()),
                Part::Ours(" ok".into()),
            ],
            code: Code::parse("ab12cd34ef"),
        };
        let b = send_message("-100", &post);
        assert_eq!(b["chat_id"], json!(-100));
        assert_eq!(b["text"], "[a] 😀 @admin https://x.y ok");
        assert_eq!(
            b["entities"],
            json!([{"type": "code", "offset": 7, "length": 18}])
        );
        assert!(b.get("parse_mode").is_none());
        assert_eq!(
            b["reply_markup"]["inline_keyboard"][0][1]["callback_data"],
            "deny ab12cd34ef"
        );
        assert_eq!(send_message("@chan", &Post::say("x"))["chat_id"], "@chan");
    }

    #[test]
    fn updates_are_read_as_messages_and_button_presses() {
        let m = json!({"update_id": 5, "message": {"message_id": 1, "from": {"id": 7},
            "chat": {"id": -42}, "date": 1795946400, "text": "status"}});
        let i = incoming(&m).unwrap();
        assert_eq!(
            (i.user.as_str(), i.chat.as_str(), i.text.as_str()),
            ("7", "-42", "status")
        );
        assert_eq!(i.at.unwrap().timestamp(), 1795946400);
        let q = json!({"update_id": 6, "callback_query": {"id": "q1", "from": {"id": 7},
            "message": {"message_id": 2, "chat": {"id": -42}, "date": 1}, "data": "approve x"}});
        assert_eq!(incoming(&q).unwrap().at, None);
        assert_eq!(
            incoming(&json!({"update_id": 7, "message": {"date": 1}})),
            None
        );
    }
}
