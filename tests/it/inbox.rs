//! `teamctl inbox`.

use std::fs;

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{Ran, TestEnv, json, keys, read_entries, run_json};

fn texts(v: &Value) -> Vec<String> {
    v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn human_happy_path() {
    let env = TestEnv::example();
    env.cmd()
        .args(["inbox", "--all"])
        .assert()
        .success()
        .stdout(predicate::str::contains("tester"))
        .stdout(predicate::str::contains("login test times out on CI"))
        .stdout(predicate::str::contains(
            "[shutdown_request] All tasks are done",
        ))
        .stdout(predicate::str::contains("[idle_notification] available"));
}

#[test]
fn json_happy_path_every_key_in_file_order() {
    let env = TestEnv::example();
    let v = run_json(&env, &["inbox", "researcher"]);
    assert_eq!(
        keys(&v),
        ["action", "messages", "schema_version", "team", "updated"]
    );
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["team"], "demo-team");
    assert_eq!(v["action"], Value::Null);
    let msgs = v["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    for m in msgs {
        assert_eq!(
            keys(m),
            [
                "color",
                "from",
                "id",
                "inbox",
                "kind",
                "protocol",
                "read",
                "summary",
                "text",
                "timestamp",
                "to"
            ]
        );
    }
    let (plain, frame) = (&msgs[0], &msgs[1]);
    assert_eq!(plain["id"], "6b0c0d2e-2f43-4f7e-bf55-0c7f9d3e1a42");
    assert_eq!(plain["from"], "tester");
    assert_eq!(plain["to"], "researcher");
    assert_eq!(plain["kind"], "message");
    assert_eq!(plain["protocol"], Value::Null);
    assert_eq!(plain["read"], false);
    assert_eq!(plain["color"], "green");
    assert_eq!(
        plain["inbox"],
        env.inbox("demo-team", "researcher").display().to_string()
    );
    assert_eq!(frame["kind"], "protocol");
    assert_eq!(frame["summary"], Value::Null);
    assert_eq!(frame["color"], Value::Null);
    assert_eq!(frame["protocol"]["type"], "shutdown_request");
    assert_eq!(
        frame["protocol"]["requestId"],
        "shutdown-1764444900000@researcher"
    );
    assert_eq!(frame["protocol"]["reason"], "All tasks are done");
}

#[test]
fn entries_without_an_id_get_the_content_hash() {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", None)]);
    fs::write(
        env.inbox("alpha", "alice"),
        r#"[{"from":"team-lead","text":"Hello","timestamp":"2026-11-29T10:00:00.000Z","read":false}]"#,
    )
    .unwrap();
    let v = run_json(&env, &["inbox", "alice"]);
    assert_eq!(
        v["messages"][0]["id"],
        "10706c90d326eedf6cd562b802fa1df239468f99443f006d8770c7e9eda37c71"
    );
}

fn all_frame() -> &'static str {
    "{\"type\":\"idle_notification\",\"from\":\"alice\",\"timestamp\":\"2026-11-29T09:56:00.000Z\",\"idleReason\":\"available\"}"
}

fn filter_env() -> TestEnv {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", None), ("bob", None), ("ops", None)]);
    let entries = serde_json::json!([
        {"from":"alice","text":"one","timestamp":"2026-11-29T09:00:00.000Z","read":true},
        {"from":"bob","text":"two","timestamp":"2026-11-29T09:55:00.000Z"},
        {"from":"alice","text":"{\"type\":\"idle_notification\",\"from\":\"alice\",\"timestamp\":\"2026-11-29T09:56:00.000Z\",\"idleReason\":\"available\"}","timestamp":"2026-11-29T09:56:00.000Z","read":false},
        {"from":"alice","text":"four","timestamp":"2026-11-29T09:57:00.000Z","read":false,"custom":[1,2]}
    ]);
    fs::write(
        env.inbox("alpha", "ops"),
        serde_json::to_string_pretty(&entries).unwrap(),
    )
    .unwrap();
    env
}

#[test]
fn filters() {
    let env = filter_env();
    let all = ["one", "two", all_frame(), "four"];
    assert_eq!(texts(&run_json(&env, &["inbox", "ops"])), all);
    assert_eq!(
        texts(&run_json(&env, &["inbox", "ops", "--unread"])),
        all[1..]
    );
    assert_eq!(
        texts(&run_json(&env, &["inbox", "ops", "--from", "bob"])),
        ["two"]
    );
    // TEAMCTL_NOW is 10:00, so 10m means 09:50 on.
    assert_eq!(
        texts(&run_json(&env, &["inbox", "ops", "--since", "10m"])),
        all[1..]
    );
    assert_eq!(
        texts(&run_json(
            &env,
            &["inbox", "ops", "--since", "2026-11-29T09:56:30Z"]
        )),
        ["four"]
    );
    assert_eq!(
        texts(&run_json(&env, &["inbox", "ops", "--limit", "2"])),
        all[2..]
    );
    assert_eq!(
        texts(&run_json(&env, &["inbox", "ops", "--type", "message"])),
        ["one", "two", "four"]
    );
    assert_eq!(
        texts(&run_json(&env, &["inbox", "ops", "--type", "protocol"])),
        [all[2]]
    );
    assert_eq!(
        texts(&run_json(
            &env,
            &["inbox", "ops", "--type", "idle_notification"]
        )),
        [all[2]]
    );
    assert!(
        texts(&run_json(
            &env,
            &["inbox", "ops", "--type", "shutdown_request"]
        ))
        .is_empty()
    );
    // The identity's inbox is the default.
    let v = {
        let out = env
            .cmd()
            .env("TEAMCTL_FROM", "ops")
            .args(["inbox", "--json"])
            .assert()
            .success();
        out.stdout_json()
    };
    assert_eq!(texts(&v), all);
}

#[test]
fn mark_read_and_consume_touch_only_what_is_shown() {
    let env = filter_env();
    let inbox = env.inbox("alpha", "ops");
    let v = run_json(&env, &["inbox", "ops", "--from", "alice", "--mark-read"]);
    assert_eq!(v["action"], "mark_read");
    assert_eq!(v["updated"], 2, "one was already read");
    let entries = read_entries(&inbox);
    let read: Vec<bool> = entries.iter().map(|e| e["read"] == true).collect();
    assert_eq!(read, [true, false, true, true]);
    // Key order kept; a missing `read` is appended only where it was set.
    assert_eq!(
        entries[3].as_object().unwrap().keys().next_back().unwrap(),
        "custom"
    );
    assert!(entries[1].get("read").is_none());

    let v = run_json(
        &env,
        &[
            "inbox",
            "ops",
            "--type",
            "message",
            "--limit",
            "2",
            "--consume",
        ],
    );
    assert_eq!(v["action"], "consume");
    assert_eq!(v["updated"], 2);
    assert_eq!(texts(&v), ["two", "four"]);
    let left = read_entries(&inbox);
    let left: Vec<&str> = left.iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(left, ["one", all_frame()]);
    env.cmd()
        .args(["inbox", "ops", "--consume"])
        .assert()
        .success()
        .stdout(predicate::str::contains("consumed 2 message(s)"));
    assert_eq!(fs::read_to_string(&inbox).unwrap(), "[]");
}

#[test]
fn malformed_entries_are_skipped_with_a_warning_and_kept() {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", None)]);
    let inbox = env.inbox("alpha", "alice");
    let body = r#"[{"from":"bob","text":5,"timestamp":"t"},{"from":"bob","text":"ok","timestamp":"2026-11-29T09:00:00.000Z"}]"#;
    fs::write(&inbox, body).unwrap();
    let out = env
        .cmd()
        .args(["inbox", "alice", "--consume", "--json"])
        .assert()
        .success()
        .stderr(predicate::str::contains("skipped entry 0"))
        .stdout_bytes();
    assert_eq!(texts(&json(&out)), ["ok"]);
    let left = read_entries(&inbox);
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["text"], 5);
}

#[test]
fn corrupt_inbox_fails_and_is_unchanged() {
    let env = TestEnv::example();
    let inbox = env.inbox("demo-team", "researcher");
    fs::write(&inbox, "[{\"from\":").unwrap();
    env.cmd()
        .args(["inbox", "researcher", "--consume"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error:"));
    assert_eq!(fs::read_to_string(&inbox).unwrap(), "[{\"from\":");
    // --all reports it and still shows the others, then fails.
    env.cmd()
        .args(["inbox", "--all"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("idle_notification"))
        .stderr(predicate::str::contains("researcher.json"));
}

#[test]
fn empty_and_missing_inboxes_succeed_with_a_reply_hint() {
    let env = TestEnv::example();
    env.cmd()
        .args(["inbox"])
        .assert()
        .success()
        .stdout(predicate::str::contains("no messages"))
        .stderr(predicate::str::contains("hint:"))
        .stderr(predicate::str::contains("reserved"));
    let v = run_json(&env, &["inbox", "tester"]);
    assert_eq!(v["messages"], serde_json::json!([]));
}

#[test]
fn usage_errors() {
    let env = TestEnv::example();
    env.cmd()
        .args(["inbox", "--type", "bogus"])
        .assert()
        .code(2);
    env.cmd()
        .args(["inbox", "--since", "yesterday"])
        .assert()
        .code(2);
    env.cmd().args(["inbox", "a/b"]).assert().code(2);
    env.cmd()
        .args(["inbox", "x", "--mark-read", "--consume"])
        .assert()
        .code(2);
}

/// `--all` is one list, oldest first across inboxes (ties: inbox name, then file order), and
/// `--limit` keeps the newest N of all of them; `--consume` takes exactly those.
#[test]
fn all_is_in_time_order_and_limit_spans_inboxes() {
    let env = TestEnv::new();
    env.team("t", &[("a", None), ("b", None)]);
    let entry = |from: &str, text: &str, ts: &str| serde_json::json!({"from": from, "text": text, "timestamp": ts, "type": "message", "read": false});
    let write = |member: &str, entries: Vec<Value>| {
        fs::write(
            env.inbox("t", member),
            serde_json::to_string_pretty(&entries).unwrap(),
        )
        .unwrap();
    };
    write(
        "a",
        vec![
            entry("b", "a1", "2026-11-29T09:00:01.000Z"),
            entry("b", "a3", "2026-11-29T09:00:03.000Z"),
            entry("b", "tie-a", "2026-11-29T09:00:05.000Z"),
        ],
    );
    write(
        "b",
        vec![
            entry("a", "b2", "2026-11-29T09:00:02.000Z"),
            entry("a", "b4", "2026-11-29T09:00:04.000Z"),
            entry("a", "tie-b", "2026-11-29T09:00:05.000Z"),
        ],
    );
    let v = run_json(&env, &["inbox", "--all"]);
    assert_eq!(texts(&v), ["a1", "b2", "a3", "b4", "tie-a", "tie-b"]);
    let v = run_json(&env, &["inbox", "--all", "--limit", "3"]);
    assert_eq!(texts(&v), ["b4", "tie-a", "tie-b"]);
    let v = run_json(&env, &["inbox", "--all", "--limit", "3", "--consume"]);
    assert_eq!(v["updated"], 3);
    let left = |m: &str| -> Vec<String> {
        read_entries(&env.inbox("t", m))
            .iter()
            .map(|e| e["text"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(left("a"), ["a1", "a3"]);
    assert_eq!(left("b"), ["b2"]);
}

/// A reader that stops early (`teamctl inbox --json | head -c1`) is how a pipeline says it has
/// enough: even a document far larger than the pipe's buffer ends with exit 0 and nothing on
/// stderr, for JSON and for tables.
#[test]
fn a_closed_pipe_ends_quietly_however_large_the_output() {
    use std::process::Stdio;
    let env = TestEnv::new();
    env.team("alpha", &[("alice", Some("blue"))]);
    let big: Vec<serde_json::Value> = (0..300)
        .map(|i| {
            serde_json::json!({"from": "bob", "text": format!("{i} {}", "x".repeat(1000)),
                "timestamp": "2026-11-29T10:00:00.000Z", "read": false, "msg_id": format!("m{i}")})
        })
        .collect();
    fs::write(
        env.inbox("alpha", "alice"),
        serde_json::to_string(&big).unwrap(),
    )
    .unwrap();
    for json in [true, false] {
        let mut cmd = env.std_cmd();
        cmd.args(["inbox", "alice"]);
        if json {
            cmd.arg("--json");
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read one byte, then close the pipe while teamctl is still writing.
        let mut out = child.stdout.take().unwrap();
        let mut one = [0u8; 1];
        std::io::Read::read_exact(&mut out, &mut one).unwrap();
        drop(out);
        let result = child.wait_with_output().unwrap();
        assert_eq!(result.status.code(), Some(0), "json {json}: {result:?}");
        assert!(
            result.stderr.is_empty(),
            "json {json}: {}",
            String::from_utf8_lossy(&result.stderr)
        );
    }
}
