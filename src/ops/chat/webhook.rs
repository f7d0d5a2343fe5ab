//! A signed webhook: each post is POSTed as JSON to `--url`, and answers are taken on
//! `--listen` as JSON POSTs. Both directions are signed alike: `X-Teamctl-Timestamp` (Unix
//! seconds) and `X-Teamctl-Signature: sha256=<hex>`, the HMAC-SHA256 with the shared secret
//! over `<timestamp>.<body>`. An answer is taken only when its signature matches and its
//! timestamp is within 5 minutes of now; anything else is refused with 401 and changes
//! nothing. Each signature is taken once ([`super::seen`]: a replay cache in teamctl's data
//! dir that outlives a restart): the same bytes again are refused with 409. For Discord,
//! Teams, ntfy or a person's own service in between. The listener is
//! [`crate::host::http_server`] under [`LIMITS`]: a slow or idle client never holds up an
//! answer.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use url::Url;

use super::hear::Incoming;
use super::http::{Client, Failure, api_url, refused_for_good};
use super::render::Post;
use super::seen::{Cache, Seen};
use super::transport::{Chat, Clock, Flag, Inbound, Options, Transport, any_user_id, drain};
use crate::error::usage;
use crate::host::http_server::{Handler, Limits, Reply, Request, Response, Server};

/// How far an answer's timestamp may be from now.
pub const WINDOW: Duration = Duration::from_secs(300);
/// The largest answer body read.
const MAX_BODY: usize = 64 * 1024;
/// The timestamp header.
pub const TIMESTAMP: &str = "X-Teamctl-Timestamp";
/// The signature header.
pub const SIGNATURE: &str = "X-Teamctl-Signature";

/// The webhook, as `bridge webhook` and `run --bridge webhook` know it.
pub const TRANSPORT: Transport = Transport {
    name: "webhook",
    about: "A signed webhook: posts to --url, answers taken on --listen",
    secret: "TEAMCTL_WEBHOOK_SECRET",
    takes: &[Flag::Url, Flag::Listen],
    user_id: any_user_id,
    start: |o| Ok(Box::new(open(o)?)),
};

/// The webhook `o` names: `--url`, `--listen`, the secret, the replay cache in teamctl's data
/// dir.
fn open(o: Options) -> Result<Webhook> {
    let (Some(url), Some(listen)) = (&o.url, o.listen) else {
        return Err(usage("bridge webhook needs --url URL and --listen ADDR"));
    };
    let url = api_url(url)?;
    let secret = o.secret(TRANSPORT.secret)?.to_string();
    let Some(data) = &o.data_dir else {
        return Err(usage(
            "bridge webhook keeps the signatures of the answers it took in teamctl's data dir, \
             and there is none: set TEAMCTL_DATA_DIR",
        ));
    };
    let seen = Cache::in_dir(data, WINDOW);
    Webhook::start(&url, listen, &secret, o.clock, seen)
}

/// A webhook out to `--url`, answers in on `--listen`.
pub struct Webhook {
    client: Client,
    url: Url,
    secret: String,
    clock: Arc<Clock>,
    rx: Receiver<Inbound>,
    /// The listener, stopped when the webhook is dropped.
    _server: Server,
}

/// HMAC-SHA256 (RFC 2104) of `msg` under `key`.
pub fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let pad = |b: u8| k.iter().map(|x| x ^ b).collect::<Vec<u8>>();
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(msg)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// The signature header's value for `body` sent at `ts`.
pub fn sign(secret: &str, ts: i64, body: &[u8]) -> String {
    let mut msg = format!("{ts}.").into_bytes();
    msg.extend_from_slice(body);
    let mac = hmac_sha256(secret.as_bytes(), &msg);
    format!(
        "sha256={}",
        mac.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// What the listener makes of a signed answer ([`check`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// Signed, fresh and never taken before: it counts (its signature is now in the cache).
    Fresh,
    /// Unsigned, wrongly signed, tampered or stale (401).
    Bad,
    /// Signed and fresh, but taken before: the same bytes sent again (409).
    Replayed,
    /// It could not be checked against the answers taken (the cache full, or unreadable): not
    /// taken (503; the sender may send it again).
    Unchecked(String),
}

/// Whether an answer counts: `signature` signs `body` at `ts` under `secret` within
/// [`WINDOW`] of `now` ([`verify`]), and that signature was never taken before, by this bridge,
/// another on the same data dir or this one before a restart (`seen`, which now holds it).
pub fn check(
    secret: &str,
    seen: &Cache,
    (ts, signature): (&str, &str),
    body: &[u8],
    now: DateTime<Utc>,
) -> Check {
    if !verify(secret, ts, signature, body, now) {
        return Check::Bad;
    }
    let t = ts.trim().parse::<i64>().unwrap_or_default();
    match seen.take(t, signature.trim(), now) {
        Ok(Seen::First) => Check::Fresh,
        Ok(Seen::Again) => Check::Replayed,
        Ok(Seen::Full) => Check::Unchecked(format!(
            "{} signed answers were taken in the last {} s: send it again later",
            super::seen::MAX,
            WINDOW.as_secs()
        )),
        Err(e) => Check::Unchecked(format!("{e:#}")),
    }
}

/// Whether `signature` signs `body` at `ts` under `secret`, and `ts` is within [`WINDOW`] of
/// `now` (compared in constant time).
pub fn verify(secret: &str, ts: &str, signature: &str, body: &[u8], now: DateTime<Utc>) -> bool {
    let Ok(t) = ts.trim().parse::<i64>() else {
        return false;
    };
    if (now.timestamp() - t).unsigned_abs() > WINDOW.as_secs() {
        return false;
    }
    let want = sign(secret, t, body);
    let got = signature.trim().as_bytes();
    want.len() == got.len() && want.bytes().zip(got).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

/// How the listener bounds its clients: a slow or idle one never holds up another.
pub const LIMITS: Limits = Limits {
    connections: 64,
    head: Duration::from_secs(10),
    body: Duration::from_secs(10),
    max_body: MAX_BODY,
    max_head: 16 * 1024,
    keep_alive: false,
};

impl Webhook {
    /// Starts the webhook: posts go to `url`; answers are taken on `listen`, each signature
    /// once (`seen`: the replay cache in teamctl's data dir).
    ///
    /// # Errors
    /// The address cannot be listened on.
    pub fn start(
        url: &Url,
        listen: SocketAddr,
        secret: &str,
        clock: Clock,
        seen: Cache,
    ) -> Result<Webhook> {
        if secret.len() < 16 {
            return Err(usage(format!(
                "{} must be at least 16 characters (32 random bytes, hex, is good: openssl \
                 rand -hex 32)",
                TRANSPORT.secret
            )));
        }
        let listener =
            TcpListener::bind(listen).with_context(|| format!("could not listen on {listen}"))?;
        let clock = Arc::new(clock);
        let (tx, rx) = mpsc::channel();
        let (s, c) = (secret.to_string(), clock.clone());
        let handler: Handler = Arc::new(move |req: Request| {
            let (status, msg) = take(&req, (&s, &seen), &c, &tx);
            let body = json!({"ok": status == 202, "detail": msg}).to_string();
            let mut resp = Response::new(Reply::whole(body));
            *resp.status_mut() = http::StatusCode::from_u16(status).unwrap_or_default();
            resp.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            resp
        });
        let server = Server::start("webhook-listen", listener, LIMITS, handler)?;
        Ok(Webhook {
            client: Client::new("webhook", secret),
            url: url.clone(),
            secret: secret.to_string(),
            clock,
            rx,
            _server: server,
        })
    }
}

/// Takes one answer and hands it over when signed (under `secret`) and not taken before
/// (`seen`): the status and what it says.
fn take(
    req: &Request,
    (secret, seen): (&str, &Cache),
    clock: &Clock,
    tx: &Sender<Inbound>,
) -> (u16, String) {
    if req.method() != http::Method::POST {
        return (400, "only POST".to_string());
    }
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .trim()
            .to_string()
    };
    let (ts, sig, body) = (header(TIMESTAMP), header(SIGNATURE), req.body());
    match check(secret, seen, (&ts, &sig), body, clock()) {
        Check::Fresh => match incoming(&ts, body) {
            Some(i) => {
                if tx.send(Inbound::Message(i)).is_err() {
                    return (503, "the bridge is stopping".to_string());
                }
                (202, "taken".to_string())
            }
            None => (
                400,
                "the body is not {\"user\",\"chat\",\"text\"}".to_string(),
            ),
        },
        Check::Bad => (401, "bad or stale signature".to_string()),
        Check::Replayed => (
            409,
            "this signed answer was taken before: a replay changes nothing".to_string(),
        ),
        Check::Unchecked(why) => {
            let _ = tx.send(Inbound::Warning(format!(
                "webhook: an answer not taken: {why}"
            )));
            (
                503,
                "the answer could not be checked for a replay".to_string(),
            )
        }
    }
}

/// An answer's body: `{"user","chat","text"}`, sent at `ts`.
fn incoming(ts: &str, body: &[u8]) -> Option<Incoming> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
    Some(Incoming {
        user: s("user")?,
        chat: s("chat")?,
        at: DateTime::<Utc>::from_timestamp(ts.parse().ok()?, 0),
        text: s("text")?,
    })
}

impl Chat for Webhook {
    fn post(&mut self, post: &Post, warn: &mut dyn FnMut(&str)) -> Result<()> {
        let body = json!({"schema_version": 1, "text": post.text(), "parts": post.parts,
            "code": post.code.as_ref().map(|c| c.to_string())})
        .to_string();
        let (client, url) = (&self.client, self.url.as_str());
        super::http::post(&client.what(""), warn, || {
            let ts = (self.clock)().timestamp();
            let (ts_text, signature) = (ts.to_string(), sign(&self.secret, ts, body.as_bytes()));
            let headers = [
                (TIMESTAMP, ts_text.as_str()),
                (SIGNATURE, signature.as_str()),
            ];
            let answer = client.post_json("", url, &headers, body.as_bytes())?;
            match answer.status() {
                200..=299 => Ok(()),
                429 => Err(Failure::RateLimited(answer.retry_after())),
                s if refused_for_good(s) => {
                    Err(Failure::Refused(client.said("", format!("HTTP {s}"))))
                }
                s => Err(client.failed("", format!("HTTP {s}"))),
            }
        })
    }

    fn receive(&mut self, max: Duration) -> Vec<Inbound> {
        drain(&self.rx, max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231() {
        let hex = |b: [u8; 32]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        assert_eq!(
            hex(hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        // Test case 6: a key longer than the block.
        assert_eq!(
            hex(hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn only_a_fresh_signature_over_this_body_verifies() {
        let now = DateTime::<Utc>::from_timestamp(1_795_946_400, 0).unwrap();
        let t = now.timestamp();
        let sig = sign("s3cret-s3cret-s3cret", t, b"{}");
        assert!(verify(
            "s3cret-s3cret-s3cret",
            &t.to_string(),
            &sig,
            b"{}",
            now
        ));
        assert!(!verify(
            "s3cret-s3cret-s3cret",
            &t.to_string(),
            &sig,
            b"{ }",
            now
        ));
        assert!(!verify(
            "other-other-other",
            &t.to_string(),
            &sig,
            b"{}",
            now
        ));
        let old = t - 301;
        let stale = sign("s3cret-s3cret-s3cret", old, b"{}");
        assert!(!verify(
            "s3cret-s3cret-s3cret",
            &old.to_string(),
            &stale,
            b"{}",
            now
        ));
        assert!(!verify("s3cret-s3cret-s3cret", "x", &sig, b"{}", now));
    }
}
