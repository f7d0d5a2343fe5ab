//! `teamctl log`: a member's transcript as a story, human and JSON Lines, -n, --since,
//! --follow (a line as it is written, a torn line only once whole), the lead as `team-lead`,
//! unknown members and usage errors.

use std::fs;
use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{JsonLines, Ran, TestEnv, alice_session, assistant_entry, keys, led_team};

#[test]
fn a_session_as_a_story() {
    let env = TestEnv::new();
    led_team(&env);
    alice_session(&env);
    let out = env
        .cmd()
        .args(["log", "alice"])
        .assert()
        .success()
        .stdout_text();
    assert_eq!(
        out,
        "09:00:00  message      from team-lead: your brief\n\
         09:00:01  text         Looking.\\e[31m red\n\
         09:00:01  tool_use     Bash: cargo test --lib parser\n\
         09:00:05  tool_result  Bash error: error[E0425]: cannot find x\n\
         09:00:06  message      from bob: [idle_notification]\n"
    );
    let lines = env
        .cmd()
        .args(["log", "alice", "--json"])
        .assert()
        .success()
        .stdout_lines();
    assert_eq!(lines.len(), 5);
    for l in &lines {
        assert_eq!(
            keys(l),
            [
                "at",
                "is_error",
                "kind",
                "member",
                "schema_version",
                "session_id",
                "summary",
                "text",
                "tool"
            ]
        );
        assert_eq!(
            (&l["schema_version"], &l["member"], &l["session_id"]),
            (&json!(1), &json!("alice"), &json!("s-alice"))
        );
    }
    assert_eq!(lines[0]["kind"], "message");
    assert_eq!(lines[0]["text"], "Review the parser");
    assert_eq!(lines[0]["is_error"], Value::Null);
    // --json keeps the text exact.
    assert_eq!(lines[1]["text"], "Looking.\u{1b}[31m red");
    assert_eq!(lines[2]["tool"], "Bash");
    assert_eq!(lines[2]["text"], r#"{"command":"cargo test --lib parser"}"#);
    assert_eq!(
        (&lines[3]["kind"], &lines[3]["tool"], &lines[3]["is_error"]),
        (&json!("tool_result"), &json!("Bash"), &json!(true))
    );
    assert_eq!(lines[3]["text"], "error[E0425]: cannot find x\nmore");
    // The last N, and since a time.
    let out = env
        .cmd()
        .args(["log", "alice", "-n", "2"])
        .assert()
        .success()
        .stdout_text();
    assert_eq!(out.lines().count(), 2);
    assert!(out.starts_with("09:00:05  tool_result"));
    let out = env
        .cmd()
        .args(["log", "alice", "--since", "2026-11-29T09:00:05Z"])
        .assert()
        .success()
        .stdout_text();
    assert_eq!(out.lines().count(), 2);
    // TEAMCTL_NOW is 10:00: 3595 s ago is 09:00:05.
    let out = env
        .cmd()
        .args(["log", "alice", "--since", "3595s"])
        .assert()
        .success()
        .stdout_text();
    assert_eq!(out.lines().count(), 2);
}

#[test]
fn the_lead_is_team_lead() {
    let env = TestEnv::new();
    env.team("alpha", &[("worker", None)]);
    env.transcript(
        "/tmp",
        "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d",
        &[json!({"type":"user","timestamp":"2026-11-29T09:00:00.000Z","message":{"role":"user","content":"Plan the release"}})],
    );
    env.cmd()
        .args(["log", "team-lead"])
        .assert()
        .success()
        .stdout("09:00:00  prompt       Plan the release\n");
    // A member without a transcript: nothing, and a warning.
    env.cmd()
        .args(["log", "worker"])
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains(
            "no transcript of worker found yet",
        ));
}

#[test]
fn follow_prints_each_event_as_it_is_written() {
    let env = TestEnv::new();
    led_team(&env);
    let path = alice_session(&env);
    let mut cmd = env.std_cmd();
    cmd.args([
        "log",
        "alice",
        "--follow",
        "--json",
        "-n",
        "1",
        "--timeout",
        "60s",
    ])
    .stdin(Stdio::null());
    let mut log = JsonLines::spawn(cmd);
    assert_eq!(log.next()["summary"], "from bob: [idle_notification]");
    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    let mut call = assistant_entry(
        "m2",
        "2026-11-29T09:01:00.000Z",
        json!([{"type":"tool_use","id":"tu2","name":"Read","input":{"file_path":"src/parser.rs"}}]),
        "tool_use",
        (10, 5),
    );
    call["sessionId"] = "s-alice".into();
    writeln!(f, "{call}").unwrap();
    let e = log.next();
    assert_eq!(
        (&e["kind"], &e["tool"], &e["summary"]),
        (&json!("tool_use"), &json!("Read"), &json!("src/parser.rs"))
    );
    // A line written in two pieces is one event, once it is whole.
    let result = json!({"type":"user","timestamp":"2026-11-29T09:01:01.000Z","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu2","content":"fn parse() {}"}]}}).to_string() + "\n";
    f.write_all(&result.as_bytes()[..30]).unwrap();
    f.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    f.write_all(&result.as_bytes()[30..]).unwrap();
    let e = log.next();
    assert_eq!(
        (&e["kind"], &e["tool"], &e["is_error"]),
        (&json!("tool_result"), &json!("Read"), &json!(false))
    );
    // The team deleted: following ends.
    env.cmd()
        .args(["delete", "t", "--force"])
        .assert()
        .success();
    let status = log.child.wait().unwrap();
    assert!(status.success());
    assert!(
        log.lines.recv_timeout(Duration::from_secs(5)).is_err(),
        "nothing printed twice"
    );
}

#[test]
fn unknown_members_and_usage() {
    let env = TestEnv::new();
    led_team(&env);
    env.cmd()
        .args(["log", "alcie"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error:"))
        .stderr(predicate::str::contains("did you mean 'alice'?"));
    env.cmd().args(["log"]).assert().code(2);
    env.cmd()
        .args(["log", "alice", "--timeout", "1s"])
        .assert()
        .code(2);
    env.cmd()
        .args(["log", "alice", "--since", "soon"])
        .assert()
        .code(2);
    env.cmd().args(["log", "../x"]).assert().code(2);
}
