//! `teamctl ask`: the answer is the first plain message after the take (never an older one),
//! idle, gone, timeout, refusals, --all, --consume. A "teammate" here is the test itself, writing
//! through the library with Claude Code's locks.

use std::fs;
use std::process::{Child, Stdio};
use std::time::Duration;

use predicates::prelude::*;
use serde_json::{Value, json};
use teamctl::store::paths::{Layout, TeamName};
use teamctl::team::config::Team;

use crate::common::{
    Lines, TestEnv, idle_frame, json as parse, keys, led_team, open_led_team, read_entries, take,
    take_in, wait_until, write_as, write_in, write_stamped,
};

fn spawn_ask(env: &TestEnv, args: &[&str]) -> Child {
    env.std_cmd()
        .arg("ask")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn finish(child: Child) -> (i32, String, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_report_from_the_turn_it_was_in_is_not_the_answer_nor_an_older_one() {
    let env = TestEnv::new();
    led_team(&env);
    write_as(&env, "alice", "team-lead", "an old report");
    // alice is still in her first turn (on her brief): isActive true, no idle_notification yet.
    set_active(&env, "alice", true);
    let mut child = spawn_ask(&env, &["alice", "What is 6 x 7?"]);
    let progress = Lines::of(child.stderr.take().unwrap());
    let path = env.inbox("t", "alice");
    assert!(wait_until(Duration::from_secs(20), || {
        read_entries(&path)
            .iter()
            .any(|e| e["text"] == "What is 6 x 7?")
    }));
    // Her brief's report lands after the question: it answers the brief, not the question.
    write_as(&env, "alice", "team-lead", "report on the brief");
    let seen = |what: &str| wait_until(Duration::from_secs(20), || progress.text().contains(what));
    assert!(
        seen("in the turn it was in when asked (not the answer): report on the brief"),
        "{}",
        progress.text()
    );
    write_as(&env, "alice", "team-lead", &idle_frame("alice"));
    assert!(
        seen("finished the turn it was in when asked"),
        "{}",
        progress.text()
    );
    take(&env, "alice", "6 x 7");
    write_as(&env, "alice", "team-lead", "42");
    let (code, stdout, _) = finish(child);
    let stderr = progress.all();
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "42\n");
}

#[test]
fn an_answer_that_lands_before_the_take_counts() {
    // The real client submits what it read to the model before its take of it lands.
    let env = TestEnv::new();
    led_team(&env);
    let child = spawn_ask(&env, &["alice", "quick?"]);
    let path = env.inbox("t", "alice");
    assert!(wait_until(Duration::from_secs(20), || {
        read_entries(&path).iter().any(|e| e["text"] == "quick?")
    }));
    write_as(&env, "alice", "team-lead", "quick answer");
    take(&env, "alice", "quick?");
    let (code, stdout, stderr) = finish(child);
    assert_eq!((code, stdout.as_str()), (0, "quick answer\n"), "{stderr}");
}

/// Sets `isActive` of `member` in the team's config.json (no teamctl running on it yet).
fn set_active(env: &TestEnv, member: &str, active: bool) {
    env.edit_config("t", |cfg| {
        for m in cfg["members"].as_array_mut().unwrap() {
            if m["name"] == member {
                m["isActive"] = Value::Bool(active);
            }
        }
    });
}

#[test]
fn json_has_every_key_and_the_reply_as_inbox_shows_it() {
    let env = TestEnv::new();
    led_team(&env);
    let child = spawn_ask(&env, &["alice", "ping?", "--json"]);
    take(&env, "alice", "ping?");
    write_as(&env, "alice", "team-lead", "pong");
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 0, "{stderr}");
    let v = parse(stdout.as_bytes());
    assert_eq!(
        keys(&v),
        [
            "answered_at",
            "as",
            "detail",
            "outcome",
            "question",
            "reply",
            "schema_version",
            "source",
            "taken_at",
            "team",
            "text",
            "to",
            "totals",
            "waited_ms"
        ]
    );
    assert_eq!(v["totals"], Value::Null);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["team"], "t");
    assert_eq!(v["to"], "alice");
    assert_eq!(v["as"], "team-lead");
    assert_eq!(v["outcome"], "answered");
    assert_eq!(v["detail"], Value::Null);
    assert_eq!(v["question"]["text"], "ping?");
    assert_eq!(v["question"]["from"], "team-lead");
    assert_eq!(v["reply"]["text"], "pong");
    assert_eq!(v["reply"]["from"], "alice");
    assert_eq!(v["reply"]["to"], "team-lead");
    assert_eq!(v["reply"]["kind"], "message");
    assert_eq!(
        (v["source"].as_str(), v["text"].as_str()),
        (Some("inbox"), Some("pong"))
    );
    assert!(v["taken_at"].is_string() && v["answered_at"].is_string());
    assert!(v["waited_ms"].is_u64());
    // The answer stays in the inbox unless --consume.
    assert!(
        read_entries(&env.inbox("t", "team-lead"))
            .iter()
            .any(|e| e["text"] == "pong")
    );
}

#[test]
fn consume_removes_only_the_answer() {
    let env = TestEnv::new();
    led_team(&env);
    write_as(&env, "bob", "team-lead", "unrelated");
    let child = spawn_ask(&env, &["alice", "ping?", "--consume"]);
    take(&env, "alice", "ping?");
    write_as(&env, "alice", "team-lead", "pong");
    let (code, stdout, _) = finish(child);
    assert_eq!((code, stdout.as_str()), (0, "pong\n"));
    let left: Vec<Value> = read_entries(&env.inbox("t", "team-lead"));
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["text"], "unrelated");
}

#[test]
fn idle_without_answering_is_exit_5_and_says_what_the_notification_says() {
    let env = TestEnv::new();
    led_team(&env);
    let child = spawn_ask(&env, &["alice", "anything?", "--json"]);
    take(&env, "alice", "anything?");
    write_as(&env, "alice", "team-lead", &idle_frame("alice"));
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 5, "{stderr}");
    let v = parse(stdout.as_bytes());
    assert_eq!(v["outcome"], "idle");
    assert_eq!(v["reply"], Value::Null);
    let detail = v["detail"].as_str().unwrap();
    assert!(
        detail.contains("available") && detail.contains("looked at it"),
        "{detail}"
    );
    assert!(
        stderr.contains("\nerror: alice went idle without answering ("),
        "{stderr}"
    );
}

#[test]
fn an_idle_notification_before_the_take_is_overruled_by_an_answer() {
    let env = TestEnv::new();
    led_team(&env);
    let child = spawn_ask(&env, &["alice", "Q1?"]);
    let path = env.inbox("t", "alice");
    assert!(wait_until(Duration::from_secs(20), || {
        read_entries(&path).iter().any(|e| e["text"] == "Q1?")
    }));
    // Finishing an earlier turn while the question waits.
    write_as(&env, "alice", "team-lead", &idle_frame("alice"));
    take(&env, "alice", "Q1?");
    write_as(&env, "alice", "team-lead", "A1");
    let (code, stdout, stderr) = finish(child);
    assert_eq!((code, stdout.as_str()), (0, "A1\n"), "{stderr}");
}

#[test]
fn a_teammate_that_shuts_down_is_gone_at_once() {
    let env = TestEnv::new();
    led_team(&env);
    let child = spawn_ask(&env, &["alice", "still there?", "--timeout", "1m"]);
    take(&env, "alice", "still there?");
    let frame = json!({"type": "shutdown_approved", "requestId": "shutdown-1@alice",
                       "from": "alice", "timestamp": "2026-11-29T10:00:01.000Z"});
    write_as(&env, "alice", "team-lead", &frame.to_string());
    let (code, _, stderr) = finish(child);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("alice shut down"), "{stderr}");
}

#[test]
fn a_gone_teammate_is_not_asked() {
    let env = TestEnv::new();
    led_team(&env);
    let frame = json!({"type": "shutdown_approved", "requestId": "shutdown-1@bob",
                       "from": "bob", "timestamp": "2026-11-29T10:00:01.000Z"});
    write_as(&env, "bob", "team-lead", &frame.to_string());
    let before = fs::read(env.inbox("t", "bob")).unwrap();
    env.cmd()
        .args(["ask", "bob", "hello?"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "error: cannot ask bob: bob shut down",
        ));
    assert_eq!(fs::read(env.inbox("t", "bob")).unwrap(), before);
}

#[test]
fn timeout_says_whether_the_question_was_taken() {
    let env = TestEnv::new();
    led_team(&env);
    env.cmd()
        .args(["ask", "alice", "hello?", "--timeout", "200ms"])
        .assert()
        .code(3)
        .stdout("")
        .stderr(predicate::str::contains(
            "no answer from alice after 200ms: the question still waits in its inbox",
        ));
    let child = spawn_ask(&env, &["bob", "hello?", "--timeout", "2s", "--json"]);
    take(&env, "bob", "hello?");
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 3);
    assert!(
        stderr.contains("it took the question but has not answered"),
        "{stderr}"
    );
    let v = parse(stdout.as_bytes());
    assert_eq!(v["outcome"], "timeout");
    assert!(v["taken_at"].is_string());
}

#[test]
fn an_identity_nobody_can_answer_is_refused_before_writing() {
    let env = TestEnv::new();
    env.team("c", &[("alice", Some("blue"))]);
    fs::write(env.inbox("c", "alice"), "[]").unwrap();
    // The default identity outside a team teamctl leads is `user`.
    env.cmd()
        .args(["ask", "alice", "hi?"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot ask as 'user'"))
        .stderr(predicate::str::contains("--join --from NAME"));
    env.cmd()
        .args(["ask", "alice", "hi?", "--from", "ops"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a member of config.json"));
    env.cmd()
        .args(["ask", "alice", "hi?", "--from", "team-lead"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("teamctl does not lead this team"));
    assert_eq!(fs::read(env.inbox("c", "alice")).unwrap(), b"[]");
    assert!(!env.inbox("c", "ops").exists());
}

#[test]
fn join_then_ask_gets_the_answer_in_your_own_inbox() {
    let env = TestEnv::new();
    env.team("c", &[("alice", Some("blue"))]);
    fs::write(env.inbox("c", "alice"), "[]").unwrap();
    let child = env
        .std_cmd()
        .args(["ask", "--join", "--from", "ops", "alice", "hi?"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    take_in(&env, "c", "alice", "hi?");
    let team = Team::open(
        &Layout::new(&env.root),
        &TeamName::parse("c").unwrap(),
        &teamctl::team::records::Records::none(),
    )
    .unwrap();
    write_in(&team, "alice", "ops", "hello ops");
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello ops\n");
}

#[test]
fn ask_all_reports_each_teammate_and_exits_with_the_worst() {
    let env = TestEnv::new();
    led_team(&env);
    let child = spawn_ask(&env, &["--all", "report?", "--json", "--timeout", "1m"]);
    take(&env, "alice", "report?");
    write_as(&env, "alice", "team-lead", "alice: fine");
    take(&env, "bob", "report?");
    write_as(&env, "bob", "team-lead", &idle_frame("bob"));
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 5, "{stderr}");
    let v = parse(stdout.as_bytes());
    assert_eq!(
        keys(&v),
        [
            "answers",
            "as",
            "schema_version",
            "team",
            "totals",
            "waited_ms"
        ]
    );
    assert_eq!(v["answers"]["alice"]["outcome"], "answered");
    assert_eq!(v["answers"]["alice"]["reply"]["text"], "alice: fine");
    assert_eq!(v["answers"]["bob"]["outcome"], "idle");
}

#[test]
fn a_turn_crossing_max_cost_stops_ask_with_exit_6() {
    let env = TestEnv::new();
    led_team(&env);
    env.spend_as("t", "alice", "msg_1");
    let child = spawn_ask(
        &env,
        &["alice", "costly?", "--max-cost", "0.0002", "--json"],
    );
    let path = env.inbox("t", "alice");
    assert!(wait_until(Duration::from_secs(20), || {
        read_entries(&path).iter().any(|e| e["text"] == "costly?")
    }));
    // alice's turn on the question takes the team past $0.0002.
    take(&env, "alice", "costly?");
    env.spend_as("t", "alice", "msg_2");
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 6, "{stderr}");
    assert!(
        stderr.contains("error: budget exceeded: $0.0003 of $0.0002, by alice $0.0003"),
        "{stderr}"
    );
    let v = parse(stdout.as_bytes());
    assert_eq!(v["outcome"], "budget");
    assert_eq!(v["totals"]["tokens"]["output"], 10);
    assert_eq!(v["totals"]["cost_usd"], 0.00028000000000000003);
}

#[test]
fn a_team_over_its_cap_is_not_asked() {
    let env = TestEnv::new();
    led_team(&env);
    env.spend_as("t", "bob", "msg_1");
    env.cmd()
        .args(["ask", "alice", "more?", "--max-tokens", "14"])
        .assert()
        .code(6)
        .stderr(predicate::str::starts_with(
            "error: budget exceeded: 15 tokens of 14, by bob 15 (nothing was sent)",
        ));
    assert!(read_entries(&env.inbox("t", "alice")).is_empty());
}

#[test]
fn usage_errors() {
    let env = TestEnv::new();
    led_team(&env);
    env.cmd().args(["ask"]).assert().code(2);
    env.cmd()
        .args(["ask", "alcie", "hi?"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("did you mean 'alice'?"));
    env.cmd()
        .args([
            "ask",
            "alice",
            r#"{"type":"shutdown_request","requestId":"x"}"#,
        ])
        .assert()
        .code(2);
    // A frame to Claude Code's JSON.parse, though serde_json refuses it (a lone surrogate).
    env.cmd()
        .args([
            "ask",
            "alice",
            r#"{"type":"shutdown_request","x":"\ud800"}"#,
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("protocol frame"));
    env.cmd()
        .args(["ask", "--all", "alice", "hi?"])
        .assert()
        .code(2);
    env.cmd()
        .args(["ask", "alice", "hi?", "--from", "alice"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("asking yourself"));
}

#[test]
fn asking_again_with_the_same_key_finds_the_first_answer() {
    let env = TestEnv::new();
    led_team(&env);
    let args = [
        "alice",
        "Deploy?",
        "--idempotency-key",
        "deploy-1",
        "--timeout",
        "20s",
    ];
    let child = spawn_ask(&env, &args);
    take(&env, "alice", "Deploy?");
    write_as(&env, "alice", "team-lead", "yes, deploy");
    let (code, stdout, stderr) = finish(child);
    assert_eq!((code, stdout.as_str()), (0, "yes, deploy\n"), "{stderr}");
    // The retry sends nothing and finds the answer already there.
    let before = fs::read(env.inbox("t", "alice")).unwrap();
    env.cmd()
        .arg("ask")
        .args(args)
        .assert()
        .success()
        .stdout("yes, deploy\n")
        .stderr(predicate::str::contains("was already asked this"));
    assert_eq!(fs::read(env.inbox("t", "alice")).unwrap(), before);
}

#[test]
fn work_waiting_in_its_inbox_is_no_turn_in_progress() {
    let env = TestEnv::new();
    led_team(&env);
    // alice's last turn ended an hour ago; then work was written for her, not yet taken.
    let hour_ago = chrono::Utc::now() - chrono::Duration::hours(1);
    write_stamped(
        &open_led_team(&env),
        "alice",
        "team-lead",
        &idle_frame("alice"),
        hour_ago,
    );
    write_as(&env, "team-lead", "alice", "next task for you");
    let child = spawn_ask(&env, &["alice", "and a question?", "--timeout", "10s"]);
    // She takes both in one poll and answers in that turn.
    take(&env, "alice", "and a question?");
    take(&env, "alice", "next task for you");
    write_as(&env, "alice", "team-lead", "done, and the answer is yes");
    let (code, stdout, stderr) = finish(child);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "done, and the answer is yes\n"),
        "{stderr}"
    );
}

/// `alice`'s turn on `question` in her transcript, as a pane teammate's session writes it: the
/// message delivered, then `blocks` (her output), ended.
pub fn turn_in_transcript(env: &TestEnv, question: &str, blocks: Value) {
    let at = chrono::Utc::now();
    let stamp = |ms: i64| teamctl::time::iso_millis(at - chrono::Duration::milliseconds(ms));
    env.transcript_line_as(
        "t",
        "alice",
        json!({"type": "user", "timestamp": stamp(300), "sessionId": "s-alice", "uuid": "u1",
               "message": {"role": "user", "content": format!(
                   "<teammate-message teammate_id=\"team-lead\" summary=\"q\">\n{question}\n</teammate-message>")}}),
    );
    let mut e = crate::common::assistant_entry("m1", &stamp(200), blocks, "end_turn", (10, 5));
    e["sessionId"] = "s-alice".into();
    env.transcript_line_as("t", "alice", e);
}

/// An `idle_notification` frame from `from` with no `result` (Claude Code before 2.1.322).
fn bare_idle_frame(from: &str) -> String {
    json!({"type": "idle_notification", "from": from, "timestamp": "2026-11-29T10:00:01.000Z",
           "idleReason": "available"})
    .to_string()
}

#[test]
fn from_transcript_the_text_that_ended_the_turn_is_the_answer() {
    let env = TestEnv::new();
    led_team(&env);
    let child = spawn_ask(
        &env,
        &["alice", "What is 6 x 7?", "--from-transcript", "--json"],
    );
    take(&env, "alice", "6 x 7");
    turn_in_transcript(
        &env,
        "What is 6 x 7?",
        json!([{"type": "text", "text": "It is 42.\nSure."}]),
    );
    write_as(&env, "alice", "team-lead", &bare_idle_frame("alice"));
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 0, "{stderr}");
    let v = parse(stdout.as_bytes());
    assert_eq!(v["outcome"], "answered");
    assert_eq!(v["source"], "transcript");
    assert_eq!(v["text"], "It is 42.\nSure.");
    assert_eq!(v["reply"], Value::Null);
    assert_eq!(v["detail"], Value::Null);
    assert!(v["answered_at"].is_string());
    // Printed as any answer.
    let child = spawn_ask(&env, &["alice", "And 6 x 8?", "--from-transcript"]);
    take(&env, "alice", "6 x 8");
    turn_in_transcript(&env, "And 6 x 8?", json!([{"type": "text", "text": "48"}]));
    write_as(&env, "alice", "team-lead", &bare_idle_frame("alice"));
    let (code, stdout, stderr) = finish(child);
    assert_eq!((code, stdout.as_str()), (0, "48\n"), "{stderr}");
}

#[test]
fn without_from_transcript_exit_5_says_the_transcript_holds_text() {
    let env = TestEnv::new();
    led_team(&env);
    let child = spawn_ask(&env, &["alice", "What is 6 x 7?", "--json"]);
    take(&env, "alice", "6 x 7");
    turn_in_transcript(
        &env,
        "What is 6 x 7?",
        json!([{"type": "text", "text": "It is 42."}]),
    );
    write_as(&env, "alice", "team-lead", &bare_idle_frame("alice"));
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 5, "{stderr}");
    let v = parse(stdout.as_bytes());
    assert_eq!(
        (
            v["outcome"].as_str(),
            v["source"].clone(),
            v["text"].clone()
        ),
        (Some("idle"), Value::Null, Value::Null)
    );
    assert!(
        stderr.contains(
            "it ended that turn with text (It is 42.), which its transcript holds: `teamctl log \
             alice -n 1` shows it, and `ask --from-transcript` takes it as the answer"
        ),
        "{stderr}"
    );
}

#[test]
fn from_transcript_a_turn_that_wrote_to_someone_else_is_no_answer() {
    let env = TestEnv::new();
    led_team(&env);
    let child = spawn_ask(&env, &["alice", "Tell me", "--from-transcript", "--json"]);
    take(&env, "alice", "Tell me");
    turn_in_transcript(
        &env,
        "Tell me",
        json!([{"type": "tool_use", "id": "tu1", "name": "SendMessage",
                "input": {"to": "alise", "message": "the answer", "summary": "a"}},
               {"type": "text", "text": "Sent it."}]),
    );
    write_as(&env, "alice", "team-lead", &bare_idle_frame("alice"));
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 5, "{stderr}");
    assert_eq!(parse(stdout.as_bytes())["outcome"], "idle");
    assert!(
        stderr.contains("in that turn it sent a message to 'alise', not to team-lead, which is no member of the team"),
        "{stderr}"
    );
}

#[test]
fn from_transcript_without_one_takes_the_idle_notifications_result() {
    let env = TestEnv::new();
    led_team(&env);
    let child = spawn_ask(&env, &["alice", "anything?", "--from-transcript", "--json"]);
    take(&env, "alice", "anything?");
    // 2.1.322 and later: the turn's text is also the notification's result.
    write_as(&env, "alice", "team-lead", &idle_frame("alice"));
    let (code, stdout, stderr) = finish(child);
    assert_eq!(code, 0, "{stderr}");
    let v = parse(stdout.as_bytes());
    assert_eq!(v["source"], "idle_notification");
    assert_eq!(v["text"], "nothing to add");
}
