//! The webhook's listener (`bridge webhook --listen`) under clients that hold on: a slow one
//! trickling its headers, a crowd of idle ones, a body over the limit. A signed answer is still
//! taken at once, and nothing over the limit is read (issue 45, item 4).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use teamctl::ops::chat::webhook::sign;

use crate::bridge::{expect, fixture, now_ts, worker_inbox};
use crate::chat_mock::{Receiver, free_addr};
use crate::common::{JsonLines, TestEnv};

const SECRET: &str = "0123456789abcdef-webhook";
/// How long a signed answer may take while others hold on (the old listener took 39 s).
const PROMPT: Duration = Duration::from_secs(3);

/// `bridge webhook` for team alpha, listening on `addr`; its request's code.
fn webhook(env: &TestEnv, addr: &str) -> (JsonLines, String, Receiver) {
    let receiver = Receiver::start();
    let mut cmd = env.std_cmd();
    cmd.args([
        "bridge",
        "webhook",
        "--url",
        &receiver.url,
        "--listen",
        addr,
    ])
    .args(["--chat", "ops", "--allow", "alice", "--team", "alpha"])
    .args(["--timeout", "60s", "--json"])
    .env("TEAMCTL_WEBHOOK_SECRET", SECRET);
    let b = JsonLines::spawn_with_stderr(cmd);
    let code = expect(&b, "posted")["code"].as_str().unwrap().to_string();
    (b, code, receiver)
}

/// A raw request: the head with these extra lines, then `body`.
fn raw(addr: &str, extra: &[(&str, String)], body: &[u8]) -> Vec<u8> {
    let mut head = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body);
    out
}

/// Sends `request` and reads the status, giving up after `within` (`None`: no answer by then).
fn status_within(addr: &str, request: &[u8], within: Duration) -> Option<u16> {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(within)).unwrap();
    c.set_write_timeout(Some(within)).unwrap();
    c.write_all(request).ok()?;
    let mut reply = Vec::new();
    let _ = c.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    reply.split_whitespace().nth(1)?.parse().ok()
}

/// The signed answer `approve <code>` from alice, as raw bytes.
fn signed_approval(addr: &str, code: &str) -> Vec<u8> {
    let body = json!({"user": "alice", "chat": "ops", "text": format!("approve {code}")});
    let body = body.to_string();
    let t = now_ts();
    let headers = [
        ("X-Teamctl-Timestamp", t.to_string()),
        ("X-Teamctl-Signature", sign(SECRET, t, body.as_bytes())),
    ];
    raw(addr, &headers, body.as_bytes())
}

/// Asserts the signed approval is answered 202 within [`PROMPT`] and approves the request.
fn approval_is_prompt(env: &TestEnv, b: &JsonLines, addr: &str, code: &str) {
    let start = Instant::now();
    let status = status_within(addr, &signed_approval(addr, code), PROMPT);
    assert_eq!(
        status,
        Some(202),
        "the signed answer was not taken within {PROMPT:?} (after {:?})",
        start.elapsed()
    );
    expect(b, "approved");
    assert_eq!(worker_inbox(env).len(), 1);
}

#[test]
fn a_signed_answer_is_taken_at_once_while_a_slow_client_trickles_its_headers() {
    let env = fixture();
    let addr = free_addr();
    let (mut b, code, _receiver) = webhook(&env, &addr);
    let stop = Arc::new(AtomicBool::new(false));
    let (a, s) = (addr.clone(), stop.clone());
    // Slowloris: a header byte every 300 ms, well inside any per-read timeout.
    let slow = thread::spawn(move || {
        let mut c = TcpStream::connect(&a).unwrap();
        let _ = c.write_all(b"POST / HTTP/1.1\r\nX-Slow: ");
        let until = Instant::now() + Duration::from_secs(20);
        while !s.load(Ordering::Relaxed) && Instant::now() < until {
            if c.write_all(b"a").is_err() {
                return;
            }
            thread::sleep(Duration::from_millis(300));
        }
    });
    // Let the slow client in first.
    thread::sleep(Duration::from_millis(500));
    approval_is_prompt(&env, &b, &addr, &code);
    stop.store(true, Ordering::Relaxed);
    slow.join().unwrap();
    b.child.kill().unwrap();
}

#[test]
fn a_signed_answer_is_taken_at_once_while_a_dozen_idle_connections_are_open() {
    let env = fixture();
    let addr = free_addr();
    let (mut b, code, _receiver) = webhook(&env, &addr);
    let idle: Vec<TcpStream> = (0..12)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    thread::sleep(Duration::from_millis(300));
    approval_is_prompt(&env, &b, &addr, &code);
    drop(idle);
    b.child.kill().unwrap();
}

#[test]
fn a_body_over_the_limit_is_refused_with_413_unread_and_changes_nothing() {
    let env = fixture();
    let addr = free_addr();
    let (mut b, code, _receiver) = webhook(&env, &addr);
    // A signed answer padded past 64 KiB: refused for its size, before its signature.
    let text = format!("approve {code} {}", "x".repeat(64 * 1024));
    let body = json!({"user": "alice", "chat": "ops", "text": text}).to_string();
    let t = now_ts();
    let headers = [
        ("X-Teamctl-Timestamp", t.to_string()),
        ("X-Teamctl-Signature", sign(SECRET, t, body.as_bytes())),
    ];
    let over = raw(&addr, &headers, body.as_bytes());
    assert_eq!(status_within(&addr, &over, PROMPT), Some(413));
    // The same without a length: chunked, cut off at the limit as it arrives.
    let mut chunked = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nTransfer-Encoding: chunked\r\n\
         X-Teamctl-Timestamp: {t}\r\nX-Teamctl-Signature: {}\r\n\r\n",
        sign(SECRET, t, body.as_bytes())
    )
    .into_bytes();
    for piece in body.as_bytes().chunks(8 * 1024) {
        chunked.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
        chunked.extend_from_slice(piece);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    assert_eq!(status_within(&addr, &chunked, PROMPT), Some(413));
    assert_eq!(worker_inbox(&env), Vec::<Value>::new());
    // The listener still takes a proper answer.
    approval_is_prompt(&env, &b, &addr, &code);
    b.child.kill().unwrap();
}
