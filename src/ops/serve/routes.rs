//! The HTTP surface: the page's own files (HTML, JS, CSS and an icon, embedded in the binary;
//! no token needed: they hold nothing of a team), and under `/api/` the stream of pictures,
//! the pictures now, an answer and a message (the token in a header; the Origin checked on
//! what changes something). Every response carries a strict Content-Security-Policy, no CORS
//! header, and is never cached.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;

use super::Shared;
use super::act::{self, Ask};
use crate::host::http_server::{Handler, Reply, Request, Response};

const INDEX: &str = include_str!("page/index.html");
const APP: &str = include_str!("page/app.js");
const STYLE: &str = include_str!("page/style.css");
const ICON: &str = include_str!("page/icon.svg");

/// The Content-Security-Policy of every response: nothing but the page's own script and
/// style, its own origin to connect to, no frame around it, no form, no base.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                       img-src 'self'; connect-src 'self'; frame-ancestors 'none'; \
                       base-uri 'none'; form-action 'none'";

/// The handler for `shared`'s server.
pub fn handler(shared: Arc<Shared>) -> Handler {
    Arc::new(move |req: Request| route(&shared, &req))
}

fn route(s: &Shared, req: &Request) -> Response {
    let path = req.uri().path();
    let method = req.method().clone();
    let api = path.starts_with("/api/");
    let changes = method == http::Method::POST;
    if let Err(refused) = s.access.check(req.headers(), api, changes) {
        let (status, why) = refused.status();
        return text(status, why);
    }
    match (method.as_str(), path) {
        ("GET", "/" | "/index.html") => file(INDEX, "text/html; charset=utf-8"),
        ("GET", "/app.js") => file(APP, "text/javascript; charset=utf-8"),
        ("GET", "/style.css") => file(STYLE, "text/css; charset=utf-8"),
        ("GET", "/icon.svg") => file(ICON, "image/svg+xml"),
        ("GET", "/api/events") => stream(s),
        ("GET", "/api/teams") => teams(s),
        ("POST", "/api/answer") => answer(s, req),
        ("POST", "/api/send") => send(s, req),
        (_, "/" | "/index.html" | "/app.js" | "/style.css" | "/icon.svg") => {
            text(405, "method not allowed")
        }
        (_, "/api/events" | "/api/teams" | "/api/answer" | "/api/send") => {
            text(405, "method not allowed")
        }
        _ => text(404, "not found"),
    }
}

/// The headers every response carries.
fn secure(mut resp: Response, content_type: &str) -> Response {
    let h = resp.headers_mut();
    let mut put = |k: &'static str, v: &str| {
        if let Ok(v) = http::HeaderValue::from_str(v) {
            h.insert(k, v);
        }
    };
    put("content-type", content_type);
    put("content-security-policy", CSP);
    put("x-content-type-options", "nosniff");
    put("x-frame-options", "DENY");
    put("referrer-policy", "no-referrer");
    put("cross-origin-opener-policy", "same-origin");
    put("cross-origin-resource-policy", "same-origin");
    put("cache-control", "no-store");
    resp
}

fn with_status(status: u16, body: Reply, content_type: &str) -> Response {
    let mut resp = http::Response::new(body);
    *resp.status_mut() = http::StatusCode::from_u16(status).unwrap_or_default();
    secure(resp, content_type)
}

fn text(status: u16, why: &str) -> Response {
    with_status(
        status,
        Reply::whole(format!("{why}\n")),
        "text/plain; charset=utf-8",
    )
}

fn file(body: &'static str, content_type: &str) -> Response {
    with_status(200, Reply::whole(body), content_type)
}

fn json_reply(status: u16, v: &serde_json::Value) -> Response {
    with_status(status, Reply::whole(v.to_string()), "application/json")
}

/// The stream of pictures (`text/event-stream`): the hello, every team's picture, then each
/// change.
fn stream(s: &Shared) -> Response {
    let mut resp = with_status(200, s.hub.subscribe(), "text/event-stream");
    resp.headers_mut()
        .insert("x-accel-buffering", http::HeaderValue::from_static("no"));
    resp
}

/// Every team's picture now, as one JSON document.
fn teams(s: &Shared) -> Response {
    json_reply(
        200,
        &json!({"schema_version": 1, "teams": s.hub.pictures_json()}),
    )
}

#[derive(Deserialize)]
struct AnswerBody {
    team: String,
    request_id: String,
    answer: String,
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
struct SendBody {
    team: String,
    to: String,
    text: String,
}

/// The body of a changing request: JSON, said so.
fn body<'a, T: Deserialize<'a>>(req: &'a Request) -> Result<T, Box<Response>> {
    let ct = req
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !ct.trim().starts_with("application/json") {
        return Err(Box::new(text(415, "the body must be application/json")));
    }
    serde_json::from_slice(req.body()).map_err(|e| Box::new(text(400, &format!("bad body: {e}"))))
}

fn answer(s: &Shared, req: &Request) -> Response {
    let b: AnswerBody = match body(req) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    let ask = match b.answer.as_str() {
        "approve" => Ask::Approve(b.request_id),
        "deny" => Ask::Deny(b.request_id, b.reason.unwrap_or_default()),
        _ => return text(400, "answer is approve or deny"),
    };
    done(act::act(s, &b.team, ask, (s.clock)()))
}

fn send(s: &Shared, req: &Request) -> Response {
    let b: SendBody = match body(req) {
        Ok(b) => b,
        Err(r) => return *r,
    };
    done(act::act(s, &b.team, Ask::Send(b.to, b.text), (s.clock)()))
}

fn done(r: Result<super::journal::Record, act::Refusal>) -> Response {
    match r {
        Ok(record) => json_reply(200, &json!({"ok": true, "record": record})),
        Err(e) => json_reply(e.status, &json!({"ok": false, "error": e.why})),
    }
}
