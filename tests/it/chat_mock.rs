//! The chat services on 127.0.0.1 for the bridge's tests, with the real method and field
//! names: Telegram's Bot API (`getUpdates` with its offset and a short hold when nothing is
//! queued, `sendMessage` kept, refused with a 429 first, or refused for good with a 400 as
//! Telegram refuses a text over 4,096 characters, `answerCallbackQuery`, under
//! `/bot<token>/<method>`), Slack's Web API (`chat.postMessage`, a text cut past 40,000
//! characters as Slack cuts it, `conversations.replies`, Bearer token, 429 with `Retry-After`,
//! `msg_too_long` when asked) and a webhook receiver; all on one small HTTP/1.1 server
//! ([`serve`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::wait_until;

pub const TOKEN: &str = "123456:SECRET-token_abc";

#[derive(Default)]
struct State {
    updates: Vec<Value>,
    next_update: i64,
    sent: Vec<Value>,
    /// sendMessage calls still to refuse with 429 (retry_after 1).
    limit: usize,
    /// sendMessage calls still to refuse for good (400 Bad Request).
    refuse: usize,
    /// sendMessage calls refused for good so far (a text too long, or [`Telegram::refuse`]).
    refused: Vec<Value>,
    /// Paths asked with a wrong token.
    unauthorized: usize,
    /// The `callback_query_id`s acknowledged with answerCallbackQuery.
    acknowledged: Vec<Value>,
}

pub struct Telegram {
    pub url: String,
    state: Arc<(Mutex<State>, Condvar)>,
}

impl Telegram {
    pub fn start() -> Telegram {
        let state = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let s = state.clone();
        let url = serve(move |req| {
            let (status, body) = answer(&req.path, &req.json(), &s);
            (status, vec![], body)
        });
        Telegram { url, state }
    }

    /// Refuses the next `n` sendMessage calls with 429, retry_after 1.
    pub fn rate_limit(&self, n: usize) {
        self.state.0.lock().unwrap().limit = n;
    }

    /// Refuses the next `n` sendMessage calls for good, as Telegram refuses a message it
    /// cannot parse (400 Bad Request).
    pub fn refuse(&self, n: usize) {
        self.state.0.lock().unwrap().refuse = n;
    }

    /// Every sendMessage body refused for good so far.
    pub fn refused(&self) -> Vec<Value> {
        self.state.0.lock().unwrap().refused.clone()
    }

    fn push(&self, update: Value) {
        let (m, cv) = &*self.state;
        let mut s = m.lock().unwrap();
        s.next_update += 1;
        let mut u = update;
        u["update_id"] = json!(1000 + s.next_update);
        s.updates.push(u);
        cv.notify_all();
    }

    /// A text message from `user` in `chat`, sent at `date` (Unix seconds).
    pub fn say(&self, user: i64, chat: i64, date: i64, text: &str) {
        self.push(
            json!({"message": {"message_id": 1, "from": {"id": user, "is_bot": false,
            "first_name": "P"}, "chat": {"id": chat, "type": "private"}, "date": date,
            "text": text}}),
        );
    }

    /// A button press by `user` on a message in `chat`.
    pub fn press(&self, user: i64, chat: i64, data: &str) {
        self.push(
            json!({"callback_query": {"id": "cq1", "from": {"id": user, "is_bot": false,
            "first_name": "P"}, "message": {"message_id": 9, "chat": {"id": chat,
            "type": "private"}, "date": 1}, "chat_instance": "x", "data": data}}),
        );
    }

    /// Every sendMessage body so far.
    pub fn sent(&self) -> Vec<Value> {
        self.state.0.lock().unwrap().sent.clone()
    }

    /// Waits (30 s at most) until `n` messages were sent; returns them.
    pub fn wait_sent(&self, n: usize) -> Vec<Value> {
        assert!(
            wait_until(Duration::from_secs(30), || self.sent().len() >= n),
            "{n} messages sent: {:?}",
            self.sent()
        );
        self.sent()
    }

    pub fn unauthorized(&self) -> usize {
        self.state.0.lock().unwrap().unauthorized
    }

    /// The `callback_query_id`s acknowledged so far (each button press must be).
    pub fn acknowledged(&self) -> Vec<Value> {
        self.state.0.lock().unwrap().acknowledged.clone()
    }
}

/// One request as the mock read it.
pub struct Req {
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Req {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

/// What a mock answers: status, extra headers, JSON body.
pub type Reply = (u16, Vec<(&'static str, String)>, Value);

/// An HTTP/1.1 server on 127.0.0.1 (keep-alive) answering each request with `handler`;
/// returns its base URL.
pub fn serve(handler: impl Fn(&Req) -> Reply + Send + Sync + 'static) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handler = Arc::new(handler);
    thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let h = handler.clone();
            thread::spawn(move || connection(conn, &*h));
        }
    });
    url
}

fn connection(conn: TcpStream, handler: &dyn Fn(&Req) -> Reply) {
    let mut out = conn.try_clone().unwrap();
    let mut r = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut words = line.split_whitespace();
        let method = words.next().unwrap_or("").to_string();
        let path = words.next().unwrap_or("").to_string();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let len = headers
            .iter()
            .find(|(k, _)| k == "content-length")
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0; len];
        r.read_exact(&mut body).unwrap();
        let req = Req {
            method,
            path,
            headers,
            body,
        };
        let (status, extra, reply) = handler(&req);
        let reply = reply.to_string();
        let mut head = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            reply.len()
        );
        for (k, v) in extra {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        if out.write_all(head.as_bytes()).is_err() || out.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}

fn answer(path: &str, body: &Value, state: &(Mutex<State>, Condvar)) -> (u16, Value) {
    let (m, cv) = state;
    let Some(method) = path.strip_prefix(&format!("/bot{TOKEN}/")) else {
        m.lock().unwrap().unauthorized += 1;
        return (
            401,
            json!({"ok": false, "error_code": 401, "description": "Unauthorized"}),
        );
    };
    match method {
        "getUpdates" => {
            let offset = body.get("offset").and_then(Value::as_i64).unwrap_or(0);
            let mut s = m.lock().unwrap();
            // As Telegram does: an offset confirms (forgets) every update before it.
            s.updates
                .retain(|u| u["update_id"].as_i64().unwrap() >= offset);
            let pick = |s: &State| -> Vec<Value> {
                s.updates
                    .iter()
                    .filter(|u| u["update_id"].as_i64().unwrap() >= offset)
                    .cloned()
                    .collect()
            };
            if pick(&s).is_empty() {
                s = cv.wait_timeout(s, Duration::from_millis(300)).unwrap().0;
            }
            (200, json!({"ok": true, "result": pick(&s)}))
        }
        "sendMessage" => {
            let mut s = m.lock().unwrap();
            if s.limit > 0 {
                s.limit -= 1;
                return (
                    429,
                    json!({"ok": false, "error_code": 429,
                        "description": "Too Many Requests: retry after 1",
                        "parameters": {"retry_after": 1}}),
                );
            }
            // As Telegram: at most 4,096 characters once entities are parsed (counted in
            // UTF-16 units, as its entities' offsets are).
            let units = body["text"]
                .as_str()
                .map_or(0, |t| t.encode_utf16().count());
            if units > 4096 || s.refuse > 0 {
                s.refuse = s.refuse.saturating_sub(usize::from(units <= 4096));
                s.refused.push(body.clone());
                let what = if units > 4096 {
                    "Bad Request: message is too long"
                } else {
                    "Bad Request: can't parse entities: the mock refuses it"
                };
                return (
                    400,
                    json!({"ok": false, "error_code": 400, "description": what}),
                );
            }
            s.sent.push(body.clone());
            let id = s.sent.len();
            (
                200,
                json!({"ok": true, "result": {"message_id": id, "date": 1,
                "chat": {"id": body["chat_id"], "type": "private"}, "text": body["text"]}}),
            )
        }
        "answerCallbackQuery" => {
            let mut s = m.lock().unwrap();
            s.acknowledged.push(body["callback_query_id"].clone());
            (200, json!({"ok": true, "result": true}))
        }
        _ => (
            404,
            json!({"ok": false, "error_code": 404, "description": "Not Found"}),
        ),
    }
}

pub const SLACK_TOKEN: &str = "xoxb-SECRET-slack";

#[derive(Default)]
struct SlackState {
    posts: Vec<Value>,
    /// Each thread's replies (the parent first).
    threads: Vec<(String, Vec<Value>)>,
    limit: usize,
    /// chat.postMessage calls still to refuse for good (`msg_too_long`).
    refuse: usize,
    unauthorized: usize,
}

/// Slack's Web API: `chat.postMessage` (kept; a 429 with `Retry-After: 1` first when asked)
/// and `conversations.replies` (the thread's parent, then the replies pushed with
/// [`Slack::reply`]).
pub struct Slack {
    pub url: String,
    state: Arc<Mutex<SlackState>>,
}

impl Slack {
    pub fn start() -> Slack {
        let state = Arc::new(Mutex::new(SlackState::default()));
        let s = state.clone();
        let url = serve(move |req| slack_answer(req, &s));
        Slack { url, state }
    }

    pub fn rate_limit(&self, n: usize) {
        self.state.lock().unwrap().limit = n;
    }

    /// Refuses the next `n` chat.postMessage calls for good (`"error": "msg_too_long"`).
    pub fn refuse(&self, n: usize) {
        self.state.lock().unwrap().refuse = n;
    }

    /// Every chat.postMessage body, with its `ts` added.
    pub fn posts(&self) -> Vec<Value> {
        self.state.lock().unwrap().posts.clone()
    }

    pub fn wait_posts(&self, n: usize) -> Vec<Value> {
        assert!(
            wait_until(Duration::from_secs(30), || self.posts().len() >= n),
            "{n} posts: {:?}",
            self.posts()
        );
        self.posts()
    }

    /// A reply by `user` in the thread of the post `thread_ts`, at Unix second `at`.
    pub fn reply(&self, thread_ts: &str, user: &str, at: i64, text: &str) {
        let mut s = self.state.lock().unwrap();
        let n = s.threads.iter().map(|(_, r)| r.len()).sum::<usize>();
        let t = s
            .threads
            .iter_mut()
            .find(|(ts, _)| ts == thread_ts)
            .unwrap();
        t.1.push(json!({"type": "message", "user": user, "text": text,
            "ts": format!("{at}.{:06}", n + 1), "thread_ts": thread_ts}));
    }

    pub fn unauthorized(&self) -> usize {
        self.state.lock().unwrap().unauthorized
    }
}

fn slack_answer(req: &Req, state: &Mutex<SlackState>) -> Reply {
    let mut s = state.lock().unwrap();
    if req.header("authorization") != Some(&format!("Bearer {SLACK_TOKEN}")) {
        s.unauthorized += 1;
        return (200, vec![], json!({"ok": false, "error": "invalid_auth"}));
    }
    let (path, query) = req.path.split_once('?').unwrap_or((&req.path, ""));
    match path {
        "/chat.postMessage" => {
            if s.limit > 0 {
                s.limit -= 1;
                return (
                    429,
                    vec![("Retry-After", "1".into())],
                    json!({"ok": false,
                    "error": "ratelimited"}),
                );
            }
            if s.refuse > 0 {
                s.refuse -= 1;
                return (200, vec![], json!({"ok": false, "error": "msg_too_long"}));
            }
            let mut body = req.json();
            // As Slack (since 2018-08): a text past 40,000 characters is cut there.
            if let Some(t) = body["text"].as_str().filter(|t| t.chars().count() > 40_000) {
                body["text"] = t.chars().take(40_000).collect::<String>().into();
            }
            let ts = format!("1795946400.{:06}", s.posts.len() + 1);
            body["ts"] = ts.clone().into();
            s.posts.push(body.clone());
            let parent = json!({"type": "message", "bot_id": "B1", "text": body["text"],
                "ts": ts, "thread_ts": ts});
            s.threads.push((ts.clone(), vec![parent]));
            (
                200,
                vec![],
                json!({"ok": true, "channel": body["channel"], "ts": ts,
                "message": {"text": body["text"], "ts": ts}}),
            )
        }
        "/conversations.replies" => {
            let ts = query
                .split('&')
                .find_map(|kv| kv.strip_prefix("ts="))
                .unwrap_or("")
                .to_string();
            let messages = s
                .threads
                .iter()
                .find(|(t, _)| *t == ts)
                .map(|(_, m)| m.clone());
            match messages {
                Some(m) => (
                    200,
                    vec![],
                    json!({"ok": true, "messages": m, "has_more": false}),
                ),
                None => (
                    200,
                    vec![],
                    json!({"ok": false, "error": "thread_not_found"}),
                ),
            }
        }
        _ => (404, vec![], json!({"ok": false, "error": "unknown_method"})),
    }
}

/// One post the receiver took: its body as sent, its timestamp and signature headers.
pub type Got = (String, Option<String>, Option<String>);

/// A service on 127.0.0.1 that takes the webhook's posts: each body and its headers, kept.
pub struct Receiver {
    pub url: String,
    got: Arc<Mutex<Vec<Got>>>,
}

impl Receiver {
    pub fn start() -> Receiver {
        let got: Arc<Mutex<Vec<_>>> = Arc::default();
        let g = got.clone();
        let url = serve(move |req| {
            assert_eq!(req.method, "POST");
            g.lock().unwrap().push((
                String::from_utf8(req.body.clone()).unwrap(),
                req.header("x-teamctl-timestamp").map(String::from),
                req.header("x-teamctl-signature").map(String::from),
            ));
            (200, vec![], json!({"ok": true}))
        });
        Receiver { url, got }
    }

    /// Waits until `n` posts came; returns them as (body as sent, timestamp, signature).
    pub fn wait(&self, n: usize) -> Vec<Got> {
        assert!(
            wait_until(Duration::from_secs(30), || self.got.lock().unwrap().len()
                >= n),
            "{n} posts"
        );
        self.got.lock().unwrap().clone()
    }
}

/// A 127.0.0.1 address with a port free right now (for a server the test starts itself).
pub fn free_addr() -> String {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .to_string()
}

/// POSTs `body` to the bridge's --listen address with these headers; returns the status.
pub fn post_answer(addr: &str, headers: &[(&str, String)], body: &str) -> u16 {
    let mut c = TcpStream::connect(addr).unwrap();
    let mut head = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    c.write_all(head.as_bytes()).unwrap();
    c.write_all(body.as_bytes()).unwrap();
    let mut reply = String::new();
    c.read_to_string(&mut reply).unwrap();
    reply.split_whitespace().nth(1).unwrap().parse().unwrap()
}
