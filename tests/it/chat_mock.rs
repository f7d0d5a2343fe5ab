//! A Telegram Bot API on 127.0.0.1 for the bridge's tests: `getUpdates` (offset, a short hold
//! when nothing is queued), `sendMessage` (kept, optionally refused with a 429 first) and
//! `answerCallbackQuery`, under `/bot<token>/<method>`, with the real field names.

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
    /// Paths asked with a wrong token.
    unauthorized: usize,
}

pub struct Telegram {
    pub url: String,
    state: Arc<(Mutex<State>, Condvar)>,
}

impl Telegram {
    pub fn start() -> Telegram {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let s = state.clone();
        thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let s = s.clone();
                thread::spawn(move || serve(conn, &s));
            }
        });
        Telegram { url, state }
    }

    /// Refuses the next `n` sendMessage calls with 429, retry_after 1.
    pub fn rate_limit(&self, n: usize) {
        self.state.0.lock().unwrap().limit = n;
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
}

/// One keep-alive connection: requests until the client closes it.
fn serve(conn: TcpStream, state: &(Mutex<State>, Condvar)) {
    let mut out = conn.try_clone().unwrap();
    let mut r = BufReader::new(conn);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut len = 0;
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                len = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; len];
        r.read_exact(&mut body).unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let (status, reply) = answer(&path, &body, state);
        let reply = reply.to_string();
        let head = format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            reply.len()
        );
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
            s.sent.push(body.clone());
            let id = s.sent.len();
            (
                200,
                json!({"ok": true, "result": {"message_id": id, "date": 1,
                "chat": {"id": body["chat_id"], "type": "private"}, "text": body["text"]}}),
            )
        }
        "answerCallbackQuery" => (200, json!({"ok": true, "result": true})),
        _ => (
            404,
            json!({"ok": false, "error_code": 404, "description": "Not Found"}),
        ),
    }
}
