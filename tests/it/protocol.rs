//! `teamctl pending`, `approve`, `deny` and `shutdown`.

use std::fs;
use std::thread;
use std::time::{Duration, Instant};

use predicates::prelude::*;
use serde_json::{Map, Value, json};

use crate::common::{Ran, TestEnv, json as parse, keys, read_entries, run_json};

const PERM: &str = r#"{"type":"permission_request","request_id":"perm-1795946340000-abc1234","agent_id":"worker","tool_name":"Bash","tool_use_id":"toolu_1","description":"Write the token","input":{"command":"echo hi > ran.txt","description":"Write the token"},"permission_suggestions":[]}"#;
const PLAN: &str = r#"{"type":"plan_approval_request","from":"worker","timestamp":"2026-11-29T09:58:00.000Z","planFilePath":"/w/plan.md","planContent":"1. do it","requestId":"plan_approval-1795946280000@worker@alpha"}"#;
const SANDBOX: &str = r#"{"type":"sandbox_permission_request","requestId":"sandbox-1795946370000-xyz9876","workerId":"reviewer@alpha","workerName":"reviewer","workerColor":"green","hostPattern":{"host":"example.com"},"createdAt":1795946370000}"#;

fn entry(from: &str, text: &str, at: &str) -> Value {
    json!({"from": from, "text": text, "timestamp": at, "color": "blue", "msgV": 1,
           "msg_id": format!("id-{at}"), "type": "message", "read": false})
}

/// A team teamctl leads (as `teamctl create` makes it), with open requests in team-lead.json.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.team(
        "alpha",
        &[("worker", Some("blue")), ("reviewer", Some("green"))],
    );
    env.lead_by_teamctl("alpha");
    let lead = json!([
        entry("worker", PERM, "2026-11-29T09:59:00.000Z"),
        entry("worker", PLAN, "2026-11-29T09:58:00.000Z"),
        entry("reviewer", SANDBOX, "2026-11-29T09:59:30.000Z"),
        entry("worker", "just a message", "2026-11-29T09:59:40.000Z"),
    ]);
    fs::write(
        env.inbox("alpha", "team-lead"),
        serde_json::to_string_pretty(&lead).unwrap(),
    )
    .unwrap();
    env
}

fn ids(v: &Value) -> Vec<&str> {
    v["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["request_id"].as_str().unwrap())
        .collect()
}

fn pending(env: &TestEnv) -> Value {
    run_json(env, &["pending"])
}

#[test]
fn pending_lists_open_requests() {
    let env = fixture();
    let v = pending(&env);
    assert_eq!(keys(&v), ["requests", "schema_version", "team"]);
    assert_eq!(
        ids(&v),
        [
            "perm-1795946340000-abc1234",
            "plan_approval-1795946280000@worker@alpha",
            "sandbox-1795946370000-xyz9876"
        ]
    );
    let perm = &v["requests"][0];
    assert_eq!(
        keys(perm),
        [
            "age_seconds",
            "at",
            "description",
            "frame",
            "from",
            "host",
            "input",
            "kind",
            "plan_content",
            "plan_file_path",
            "request_id",
            "tool_name"
        ]
    );
    assert_eq!(perm["kind"], "permission");
    assert_eq!(perm["age_seconds"], 60);
    assert_eq!(perm["tool_name"], "Bash");
    assert_eq!(perm["input"]["command"], "echo hi > ran.txt");
    assert_eq!(v["requests"][1]["plan_content"], "1. do it");
    assert_eq!(v["requests"][2]["host"], "example.com");
    env.cmd()
        .args(["pending"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Bash: Write the token"))
        .stdout(predicate::str::contains("host example.com"));
}

#[test]
fn approve_writes_the_bound_permission_response() {
    let env = fixture();
    let out = env
        .cmd()
        .args(["approve", "perm-1795946340000-abc1234", "--json"])
        .assert()
        .success()
        .stdout_bytes();
    let v = parse(&out);
    assert_eq!(
        keys(&v),
        [
            "id",
            "inbox",
            "kind",
            "request_id",
            "response",
            "schema_version",
            "team",
            "to"
        ]
    );
    assert_eq!(v["to"], "worker");
    let sent = read_entries(&env.inbox("alpha", "worker")).pop().unwrap();
    assert_eq!(sent["from"], "team-lead");
    assert!(sent.get("summary").is_none());
    let digest = teamctl::team::protocol::input_digest(
        "Bash",
        &json!({"command":"echo hi > ran.txt","description":"Write the token"}),
    );
    assert_eq!(
        sent["text"],
        format!(
            r#"{{"type":"permission_response","request_id":"perm-1795946340000-abc1234","subtype":"success","tool_use_id":"toolu_1","approved_request":{{"tool_use_id":"toolu_1","tool_name":"Bash","input_digest":"{digest}"}},"response":{{}}}}"#
        )
    );
    // Answered: no longer pending, and not answered twice, even after the worker consumed it.
    fs::write(env.inbox("alpha", "worker"), "[]").unwrap();
    assert!(!ids(&pending(&env)).contains(&"perm-1795946340000-abc1234"));
    env.cmd()
        .args(["approve", "perm-1795946340000-abc1234"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("already answered"));
    env.cmd()
        .args(["approve", "perm-0-nope"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no request perm-0-nope"));
}

#[test]
fn deny_and_plan_and_sandbox_answers() {
    let env = fixture();
    env.cmd()
        .args([
            "deny",
            "plan_approval-1795946280000@worker@alpha",
            "--reason",
            "split it up",
        ])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("denied plan_approval-"));
    let frame: Map<String, Value> = serde_json::from_str(
        read_entries(&env.inbox("alpha", "worker")).pop().unwrap()["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(frame["type"], "plan_approval_response");
    assert_eq!(frame["approved"], false);
    assert_eq!(frame["feedback"], "split it up");
    assert_eq!(frame["planDigest"].as_str().unwrap().len(), 64);
    env.cmd()
        .args(["approve", "sandbox-1795946370000-xyz9876"])
        .assert()
        .success();
    let text = read_entries(&env.inbox("alpha", "reviewer")).pop().unwrap()["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        text,
        r#"{"type":"sandbox_permission_response","requestId":"sandbox-1795946370000-xyz9876","host":"example.com","allow":true,"timestamp":"2026-11-29T10:00:00.000Z"}"#
    );
    assert_eq!(ids(&pending(&env)), ["perm-1795946340000-abc1234"]);
    env.cmd()
        .args(["deny", "perm-1795946340000-abc1234"])
        .assert()
        .code(2);
    env.cmd()
        .args(["deny", "perm-1795946340000-abc1234", "--reason", " "])
        .assert()
        .code(2);
}

#[test]
fn an_answer_waiting_in_the_requesters_inbox_counts() {
    let env = fixture();
    let answer = r#"{"type":"permission_response","request_id":"perm-1795946340000-abc1234","subtype":"success","response":{}}"#;
    fs::write(
        env.inbox("alpha", "worker"),
        serde_json::to_string_pretty(&json!([entry(
            "team-lead",
            answer,
            "2026-11-29T09:59:50.000Z"
        )]))
        .unwrap(),
    )
    .unwrap();
    assert!(!ids(&pending(&env)).contains(&"perm-1795946340000-abc1234"));
}

#[test]
fn teams_led_by_claude_code_are_refused_without_force() {
    let env = fixture();
    let cfg_path = env.root.join("teams/alpha/config.json");
    let mut cfg: Value = serde_json::from_slice(&fs::read(&cfg_path).unwrap()).unwrap();
    cfg.as_object_mut().unwrap().remove("teamctl");
    cfg["leadProcess"] = json!({"pid": 1, "pidSpace": "x", "claimedAt": 1});
    fs::write(&cfg_path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    env.unlead("alpha");
    let before = fs::read(env.inbox("alpha", "team-lead")).unwrap();
    env.cmd()
        .args(["approve", "perm-1795946340000-abc1234"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("led by a Claude Code session"));
    env.cmd().args(["shutdown", "worker"]).assert().code(2);
    assert!(!env.inbox("alpha", "worker").exists());
    assert_eq!(fs::read(env.inbox("alpha", "team-lead")).unwrap(), before);
    env.cmd()
        .args(["approve", "perm-1795946340000-abc1234", "--force"])
        .assert()
        .success();
}

/// A fake teammate: answers the first shutdown_request in its inbox with `answer`.
fn fake_teammate(env: &TestEnv, name: &'static str, approve: bool) -> thread::JoinHandle<()> {
    let inbox = env.inbox("alpha", name);
    let lead = env.inbox("alpha", "team-lead");
    thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs(20);
        while Instant::now() < end {
            let entries: Vec<Value> = fs::read(&inbox)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default();
            let request = entries.iter().find_map(|e| {
                let f: Value = serde_json::from_str(e["text"].as_str()?).ok()?;
                (f["type"] == "shutdown_request")
                    .then(|| f["requestId"].as_str().unwrap().to_string())
            });
            if let Some(id) = request {
                let frame = if approve {
                    json!({"type":"shutdown_approved","requestId":id,"from":name,"timestamp":"2026-11-29T10:00:01.000Z","paneId":"","backendType":"tmux"})
                } else {
                    json!({"type":"shutdown_rejected","requestId":id,"from":name,"reason":"still working","timestamp":"2026-11-29T10:00:01.000Z"})
                };
                let e: teamctl::store::Entry = serde_json::from_value(json!({"from": name, "text": frame.to_string(),
                    "timestamp": "2026-11-29T10:00:01.000Z", "msgV": 1, "msg_id": format!("answer-{name}"), "type": "message", "read": false})).unwrap();
                teamctl::store::append(
                    &teamctl::store::dir::Loc::root(lead.parent().unwrap()).join("team-lead.json"),
                    &e,
                    false,
                    &teamctl::store::lock::LockOptions::default(),
                )
                .unwrap();
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
    })
}

#[test]
fn shutdown_waits_for_each_answer() {
    let env = fixture();
    let t = fake_teammate(&env, "worker", true);
    let out = env
        .cmd()
        .args([
            "shutdown",
            "worker",
            "--reason",
            "done",
            "--wait=20s",
            "--json",
        ])
        .assert()
        .success()
        .stdout_bytes();
    t.join().unwrap();
    let v = parse(&out);
    assert_eq!(keys(&v), ["requests", "schema_version", "team"]);
    assert_eq!(v["requests"][0]["state"], "approved");
    assert_eq!(
        v["requests"][0]["request_id"],
        "shutdown-1795946400000@worker"
    );
    let req = read_entries(&env.inbox("alpha", "worker")).pop().unwrap();
    assert_eq!(req["from"], "team-lead");
    assert_eq!(
        req["text"],
        r#"{"type":"shutdown_request","requestId":"shutdown-1795946400000@worker","from":"team-lead","reason":"done","timestamp":"2026-11-29T10:00:00.000Z"}"#
    );

    let t = fake_teammate(&env, "reviewer", false);
    env.cmd()
        .args(["shutdown", "reviewer", "--wait=20s"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("reviewer rejected: still working"));
    t.join().unwrap();
}

#[test]
fn shutdown_timeout_and_usage() {
    let env = fixture();
    env.cmd()
        .args(["shutdown", "worker", "--wait=200ms"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("no answer"));
    env.cmd().args(["shutdown"]).assert().code(2);
    env.cmd().args(["shutdown", "team-lead"]).assert().code(2);
    env.cmd()
        .args(["shutdown", "nobody"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not a member"));
}
