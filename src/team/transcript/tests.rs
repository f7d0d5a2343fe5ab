//! Tests of the line-by-line state and the reading of a growing file.

use std::fs::{self, File, OpenOptions};
use std::io::Write;

use serde_json::{Value, json};

use super::*;
use crate::team::transcript::api::Api;

fn line(v: Value) -> Vec<u8> {
    let mut b = v.to_string().into_bytes();
    b.push(b'\n');
    b
}

fn assistant(id: &str, blocks: Value, stop: &str, input: u64, output: u64) -> Value {
    json!({"type":"assistant","timestamp":"2026-12-01T02:56:46.576Z","sessionId":"s1",
        "message":{"id":id,"model":"claude-opus-5-5","content":blocks,"stop_reason":stop,
        "usage":{"input_tokens":input,"output_tokens":output,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}})
}

fn feed_all(st: &mut FileState, entries: &[Value]) {
    for e in entries {
        let l = line(e.clone());
        st.feed(&l[..l.len() - 1]);
    }
}

#[test]
fn one_response_split_over_entries_is_counted_once() {
    let mut st = FileState::default();
    feed_all(
        &mut st,
        &[
            assistant("m1", json!([{"type":"text","text":"a"}]), "tool_use", 10, 1),
            assistant(
                "m1",
                json!([{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls"}}]),
                "tool_use",
                10,
                5,
            ),
        ],
    );
    assert_eq!(st.spend.tokens().input, 10);
    assert_eq!(st.spend.tokens().output, 5);
    // 10/1e6*4 + 5/1e6*20 in floating point, as Claude Code sums it.
    assert_eq!(st.spend.computed_usd(), Some(0.00014000000000000001));
    let a = st.activity().unwrap();
    assert_eq!(
        (a.kind.as_str(), a.tool.as_deref(), a.summary.as_str()),
        ("tool_use", Some("Bash"), "ls")
    );
    // The result closes the call: the activity is the last text again.
    feed_all(
        &mut st,
        &[
            json!({"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]}}),
            assistant(
                "m2",
                json!([{"type":"text","text":"done\nok"}]),
                "end_turn",
                10,
                5,
            ),
        ],
    );
    let a = st.activity().unwrap();
    assert_eq!((a.kind.as_str(), a.summary.as_str()), ("text", "done"));
    assert!(st.turn.ended);
    assert_eq!(st.spend.computed_usd(), Some(0.00028000000000000003));
    assert_eq!(
        st.spend.responses, 1,
        "the second is pending until the next starts"
    );
    // The session ends: Claude Code's own figure.
    feed_all(
        &mut st,
        &[
            json!({"type":"cost-state","totalCostUSD":0.25,"modelUsage":{"claude-opus-5-5":{"inputTokens":20,"outputTokens":10,"cacheReadInputTokens":3,"cacheCreationInputTokens":4,"costUSD":0.25}}}),
        ],
    );
    let cs = st.spend.claude_code().unwrap();
    assert_eq!(cs.total_cost_usd, 0.25);
    assert_eq!(
        cs.tokens,
        Tokens {
            input: 20,
            output: 10,
            cache_read: 3,
            cache_creation: 4
        }
    );
    // Resumed: a response after it means the figure no longer covers the session.
    feed_all(&mut st, &[assistant("m3", json!([]), "end_turn", 1, 1)]);
    assert!(st.spend.claude_code().is_none());
    // A model without a price: tokens, no cost.
    let mut other = FileState::default();
    let mut e = assistant("x", json!([]), "end_turn", 3, 4);
    e["message"]["model"] = "gpt-x".into();
    feed_all(&mut other, &[e]);
    assert_eq!(other.spend.tokens().output, 4);
    assert_eq!(other.spend.computed_usd(), None);
}

#[test]
fn identity_turns_and_prompts() {
    let mut st = FileState::default();
    feed_all(
        &mut st,
        &[
            json!({"type":"mode","mode":"normal"}),
            json!({"type":"user","timestamp":"2026-12-01T02:56:46.215Z","sessionId":"s9","teamName":"t","agentName":"worker","message":{"content":"<teammate-message teammate_id=\"team-lead\">hi</teammate-message>"}}),
            json!({"type":"user","isMeta":true,"message":{"content":"x"}}),
        ],
    );
    assert_eq!(
        (
            st.team.as_deref(),
            st.agent.as_deref(),
            st.session_id.as_deref()
        ),
        (Some("t"), Some("worker"), Some("s9"))
    );
    assert_eq!(
        (st.turn.prompts, st.turn.messages, st.turn.ended),
        (1, 1, false)
    );
    assert_eq!(st.first_at.as_deref(), Some("2026-12-01T02:56:46.215Z"));
}

#[test]
fn a_growing_file_is_read_line_by_line_and_a_replaced_one_again() {
    let dir = tempfile::tempdir().unwrap();
    let p = crate::store::dir::Loc::root(dir.path()).join("t.jsonl");
    let mut st = FileState::default();
    assert_eq!(st.update(&p).unwrap(), Update::Missing);
    let mut f = File::create(&p).unwrap();
    let first = line(assistant(
        "m1",
        json!([{"type":"text","text":"one"}]),
        "end_turn",
        10,
        5,
    ));
    f.write_all(&first).unwrap();
    let second = line(assistant(
        "m2",
        json!([{"type":"text","text":"two"}]),
        "end_turn",
        10,
        5,
    ));
    // Half a line: left for the next read.
    f.write_all(&second[..20]).unwrap();
    assert_eq!(st.update(&p).unwrap(), Update::Grew);
    assert_eq!(st.offset, first.len() as u64);
    assert_eq!(st.turn.last_text.as_deref(), Some("one"));
    assert_eq!(st.update(&p).unwrap(), Update::Unchanged);
    f.write_all(&second[20..]).unwrap();
    assert_eq!(st.update(&p).unwrap(), Update::Grew);
    assert_eq!(st.turn.last_text.as_deref(), Some("two"));
    assert_eq!(st.spend.tokens().input, 20);
    // Rewritten in place with other bytes of the same length: read afresh.
    let mut other = first.clone();
    other.extend(line(assistant(
        "m9",
        json!([{"type":"text","text":"TWO"}]),
        "end_turn",
        90,
        5,
    )));
    assert_eq!(other.len(), first.len() + second.len());
    fs::write(&p, &other).unwrap();
    assert_eq!(st.update(&p).unwrap(), Update::Reread);
    assert_eq!(st.spend.tokens().input, 100);
    // Truncated: afresh.
    fs::write(&p, &first).unwrap();
    assert_eq!(st.update(&p).unwrap(), Update::Reread);
    assert_eq!(st.spend.tokens().input, 10);
    // Replaced by another file (another inode): afresh.
    let q = dir.path().join("q");
    fs::write(&q, [first.clone(), second.clone()].concat()).unwrap();
    fs::rename(&q, &p).unwrap();
    assert_eq!(st.update(&p).unwrap(), Update::Reread);
    assert_eq!(st.spend.tokens().input, 20);
}

#[test]
fn an_oversized_line_is_skipped_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let p = crate::store::dir::Loc::root(dir.path()).join("t.jsonl");
    let mut f = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&p)
        .unwrap();
    let mut st = FileState::default();
    // A line longer than MAX_LINE, written in pieces.
    let big = format!(
        "{{\"type\":\"attachment\",\"x\":\"{}",
        "a".repeat(MAX_LINE / 2)
    );
    f.write_all(big.as_bytes()).unwrap();
    st.update(&p).unwrap();
    f.write_all(big.as_bytes()).unwrap();
    st.update(&p).unwrap();
    assert_eq!(st.oversized, 1);
    f.write_all(b"\"}\n").unwrap();
    f.write_all(&line(assistant("m1", json!([]), "end_turn", 7, 1)))
        .unwrap();
    st.update(&p).unwrap();
    assert_eq!(st.spend.tokens().input, 7);
    assert_eq!(st.offset, fs::metadata(&p).unwrap().len());
}

fn lines(entries: &[Value]) -> Vec<u8> {
    entries.iter().flat_map(|e| line(e.clone())).collect()
}

fn parse(bytes: &[u8]) -> FileState {
    let mut st = FileState::default();
    for l in bytes.split(|&b| b == b'\n') {
        st.feed(l);
    }
    st
}

fn user(text: &str) -> Value {
    json!({"type":"user","message":{"role":"user","content":text}})
}

fn turn_entry(blocks: Value, stop: Value) -> Value {
    json!({"type":"assistant","message":{"role":"assistant","content":blocks,"stop_reason":stop}})
}

/// `run`'s done rule reads the lead's turn from here.
#[test]
fn transcript_turns() {
    // As 2.1.332 writes it (fields trimmed): prompt, Agent tool call, result, text.
    let spawn = turn_entry(
        json!([{"type":"tool_use","name":"Agent","input":{}}]),
        json!("tool_use"),
    );
    let result = json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}});
    let done = turn_entry(json!([{"type":"text","text":"done"}]), json!("end_turn"));
    let meta = json!({"type":"mode"});
    let t = parse(&lines(&[meta.clone(), user("Spawn: worker")]));
    assert_eq!(
        (t.turn.answered, t.turn.ended, t.turn.last_text.as_deref()),
        (false, false, None)
    );
    let t = parse(&lines(&[user("go"), spawn.clone()]));
    assert!(t.turn.answered && !t.turn.ended);
    let t = parse(&lines(&[user("go"), spawn.clone(), result.clone()]));
    assert!(!t.turn.ended);
    let t = parse(&lines(&[
        user("go"),
        spawn.clone(),
        result.clone(),
        done.clone(),
        meta.clone(),
    ]));
    assert!(t.turn.ended);
    assert_eq!(t.turn.last_text.as_deref(), Some("done"));
    assert_eq!(t.turn.messages, 4);
    // A teammate's message starts a new turn; its final text becomes the result.
    let msg = user("Another Claude session sent a message: <teammate-message …>");
    let fin = turn_entry(
        json!([{"type":"text","text":"FINAL"},{"type":"text","text":"two"}]),
        json!("end_turn"),
    );
    let all = [user("go"), spawn, result, done.clone(), msg.clone()];
    assert!(!parse(&lines(&all)).turn.ended);
    let mut all = all.to_vec();
    all.push(fin);
    let t = parse(&lines(&all));
    assert!(t.turn.ended);
    assert_eq!(t.turn.last_text.as_deref(), Some("FINAL\ntwo"));
    // No stop_reason (a block written while streaming): ended unless it calls a tool.
    let t = parse(&lines(&[
        user("go"),
        turn_entry(json!([{"type":"text","text":"x"}]), Value::Null),
    ]));
    assert!(t.turn.ended);
    let t = parse(&lines(&[
        user("go"),
        turn_entry(json!([{"type":"tool_use"}]), Value::Null),
    ]));
    assert!(!t.turn.ended);
    // A half-written last line and meta user entries are skipped.
    let mut b = lines(&[user("go"), done.clone()]);
    b.extend_from_slice(b"{\"type\":\"user\",\"mess");
    let meta_user = json!({"type":"user","isMeta":true,"message":{"role":"user","content":"x"}});
    b.extend_from_slice(b"\n");
    b.extend_from_slice(&lines(&[meta_user]));
    assert!(parse(&b).turn.ended);
}

#[test]
fn claude_codes_figure_is_read_to_the_last_bit() {
    // A total 2.1.332 wrote; the nearest shorter decimal is another number.
    let mut st = FileState::default();
    feed_all(
        &mut st,
        &[json!({"type":"cost-state","totalCostUSD":0.0,"modelUsage":{}})],
    );
    st.feed(br#"{"type":"cost-state","totalCostUSD":0.9736719999999999,"modelUsage":{}}"#);
    let c = st.spend.claude_code().unwrap().total_cost_usd;
    assert_eq!(c, 0.9736719999999999);
    assert_ne!(c, 0.973672);
}

fn api_request(digest: &str, at: &str) -> Value {
    json!({"type":"api-request","sessionId":"s1","id":"r","timestamp":at,"version":"2.1.332",
        "querySource":"repl_main_thread","params":{"model":"claude-opus-5-5"},"requestDigest":digest})
}

fn synthetic(status: Option<u16>, error: &str, text: &str) -> Value {
    let mut e = json!({"type":"assistant","timestamp":"2026-12-01T14:49:13.753Z","sessionId":"s1",
        "message":{"id":"8aca3004","model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence",
            "content":[{"type":"text","text":text}],
            "usage":{"input_tokens":0,"output_tokens":0,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}},
        "error":error,"isApiErrorMessage":true});
    if let Some(s) = status {
        e["apiErrorStatus"] = s.into();
    }
    e
}

/// As an interactive 2.1.332 session writes a retried call (docs/research §1.3): the same
/// digest again and again, no error line; then the synthetic entry once the retries run out;
/// then a new prompt.
#[test]
fn a_retried_call_then_its_failure_then_a_new_prompt() {
    let mut st = FileState::default();
    feed_all(
        &mut st,
        &[
            api_request("d1", "2026-12-01T14:49:10.574Z"),
            assistant(
                "m1",
                json!([{"type":"text","text":"ok"}]),
                "end_turn",
                10,
                5,
            ),
        ],
    );
    assert_eq!(st.api, Api::default(), "answered");
    feed_all(
        &mut st,
        &[
            api_request("d2", "2026-12-01T14:49:11.999Z"),
            api_request("d2", "2026-12-01T14:49:12.542Z"),
            api_request("d2", "2026-12-01T14:49:13.717Z"),
        ],
    );
    assert_eq!(st.api.sends, 3);
    assert_eq!(
        st.api.first_sent.as_deref(),
        Some("2026-12-01T14:49:11.999Z")
    );
    assert!(
        st.api.retry.is_none(),
        "no error line from an interactive session"
    );
    let text = "API Error: 529 Overloaded. This is a server-side issue";
    feed_all(&mut st, &[synthetic(Some(529), "server_error", text)]);
    let f = st.api.failed.clone().unwrap();
    assert_eq!(
        (f.status, f.kind.as_deref(), f.text.as_deref()),
        (Some(529), Some("server_error"), Some(text))
    );
    assert_eq!(st.api.sends, 0);
    // The synthetic entry costs nothing and is no model.
    assert_eq!(st.spend.tokens().input, 10);
    assert_eq!(st.model.as_deref(), Some("claude-opus-5-5"));
    feed_all(
        &mut st,
        &[
            json!({"type":"user","timestamp":"2026-12-01T14:50:00.000Z","message":{"role":"user","content":"Token: P-2"}}),
        ],
    );
    assert!(
        st.api.failed.is_none(),
        "a new prompt: the failure is behind it"
    );
}

/// As a headless 2.1.332 session writes a failed attempt it will retry (docs/research §1.2).
#[test]
fn an_api_error_line_says_status_attempt_and_window() {
    let mut st = FileState::default();
    feed_all(
        &mut st,
        &[
            api_request("d1", "2026-12-01T10:00:00.000Z"),
            json!({"type":"system","subtype":"api_error","level":"error",
                "error":{"message":"429 {}","status":429,"requestId":"req_1",
                    "formatted":"429 Number of request tokens has exceeded your per-minute rate limit",
                    "connection":null,"isNetworkDown":false,
                    "rateLimits":{"rateLimitType":"five_hour","resetsAt":1796138090},"noResponse":null},
                "retryInMs":3406,"retryAttempt":1,"maxRetries":10,"source":"request_retry",
                "timestamp":"2026-12-01T10:00:01.000Z","sessionId":"s1"}),
        ],
    );
    let r = st.api.retry.clone().unwrap();
    assert_eq!(
        (r.status, r.attempt, r.max_retries),
        (Some(429), Some(1), Some(10))
    );
    assert_eq!(r.retry_in_ms, Some(3406));
    assert_eq!(
        (r.resets_at, r.window.as_deref()),
        (Some(1796138090), Some("five_hour"))
    );
    assert_eq!(
        r.text.as_deref(),
        Some("429 Number of request tokens has exceeded your per-minute rate limit")
    );
    // A connection error has no status, only its code; 2.1.112's fractional wait is read.
    feed_all(
        &mut st,
        &[
            json!({"type":"system","subtype":"api_error","level":"error",
            "error":{"formatted":"Connection dropped (ECONNRESET)","connection":{"code":"ECONNRESET"}},
            "retryInMs":578.55,"retryAttempt":2,"maxRetries":10,"timestamp":"2026-12-01T10:00:05.000Z"}),
        ],
    );
    let r = st.api.retry.clone().unwrap();
    assert_eq!(
        (r.status, r.connection.as_deref()),
        (None, Some("ECONNRESET"))
    );
    assert_eq!(r.retry_in_ms, Some(578));
}

/// When a turn began and ended, by the surest signs (what tells a teammate's turn's end without
/// its idle notification): a `turn_duration` entry, or a given `stop_reason` other than
/// `tool_use`; a block written while a response streams (no `stop_reason`) is no end.
#[test]
fn a_turn_begins_with_its_prompt_and_ends_with_turn_duration_or_a_given_stop() {
    let at = |mut v: Value, t: &str| {
        v["timestamp"] = json!(t);
        v
    };
    let prompt = at(user("Token: S-1"), "2026-12-04T15:30:36.167Z");
    let call = at(
        turn_entry(
            json!([{"type":"tool_use","name":"SendMessage"}]),
            json!("tool_use"),
        ),
        "2026-12-04T15:30:36.222Z",
    );
    let result = at(
        json!({"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"ok"}]}}),
        "2026-12-04T15:30:36.267Z",
    );
    let streamed = at(
        turn_entry(json!([{"type":"text","text":"done"}]), Value::Null),
        "2026-12-04T15:30:36.307Z",
    );
    let done = at(
        turn_entry(json!([{"type":"text","text":"done"}]), json!("end_turn")),
        "2026-12-04T15:30:36.307Z",
    );
    let took = json!({"type":"system","subtype":"turn_duration","durationMs":146,
                      "timestamp":"2026-12-04T15:30:36.314Z"});
    let tail = [json!({"type":"last-prompt"}), json!({"type":"mode"})];
    let t = parse(&lines(&[prompt.clone(), call.clone(), result.clone()]));
    assert_eq!(
        (t.turn.began_at.as_deref(), t.turn.ended_at.as_deref()),
        (Some("2026-12-04T15:30:36.167Z"), None),
        "a tool result carries the turn on"
    );
    let t = parse(&lines(&[
        prompt.clone(),
        call.clone(),
        result.clone(),
        streamed,
    ]));
    assert_eq!(
        t.turn.ended_at, None,
        "no stop_reason: perhaps more blocks to come"
    );
    let mut all = vec![prompt.clone(), call, result, done];
    let t = parse(&lines(&all));
    assert_eq!(t.turn.ended_at.as_deref(), Some("2026-12-04T15:30:36.307Z"));
    all.push(took);
    all.extend(tail);
    let t = parse(&lines(&all));
    assert_eq!(t.turn.ended_at.as_deref(), Some("2026-12-04T15:30:36.314Z"));
    assert_eq!(t.turn.began_at.as_deref(), Some("2026-12-04T15:30:36.167Z"));
    // The next prompt begins a turn: no end until it ends.
    all.push(at(user("Token: S-2"), "2026-12-04T15:30:40.000Z"));
    let t = parse(&lines(&all));
    assert_eq!(
        (t.turn.began_at.as_deref(), t.turn.ended_at),
        (Some("2026-12-04T15:30:40.000Z"), None)
    );
}

/// A turn a person interrupted (Escape in the pane, 2.1.336) ends with Claude Code's mark, and
/// no Stop hook or turn_duration entry follows it: the mark is the turn's end.
#[test]
fn an_interrupted_turn_ends_with_its_mark() {
    let call = turn_entry(
        json!([{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make"}}]),
        json!("tool_use"),
    );
    let rejected = json!({"type":"user","timestamp":"2026-12-04T17:13:11.449Z","message":{"role":"user",
        "content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"The user doesn't want to proceed"}]}});
    let mark = json!({"type":"user","timestamp":"2026-12-04T17:13:11.463Z","message":{"role":"user",
        "content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}});
    let t = parse(&lines(&[user("Work: W-1"), call.clone(), rejected.clone()]));
    assert_eq!((t.turn.ended, t.turn.ended_at), (false, None));
    let t = parse(&lines(&[user("Work: W-1"), call, rejected, mark]));
    assert!(t.turn.ended);
    assert_eq!(t.turn.ended_at.as_deref(), Some("2026-12-04T17:13:11.463Z"));
    assert_eq!(t.turn.prompts, 1, "the mark is no prompt");
    assert!(
        t.activity().is_none_or(|a| a.kind != "tool_use"),
        "no call is open"
    );
    let plain = json!({"type":"user","timestamp":"2026-12-04T17:14:00.000Z","message":{"role":"user",
        "content":"[Request interrupted by user]"}});
    let t = parse(&lines(&[user("go"), plain]));
    assert_eq!(t.turn.ended_at.as_deref(), Some("2026-12-04T17:14:00.000Z"));
}
