//! `teamctl approve --policy` (once, `--dry-run`, concurrent runs) on handwritten request frames;
//! `--follow` is policy_follow.rs.

use std::fs;
use std::process::{Child, Stdio};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{Ran, TestEnv, json_lines, keys, read_entries, run_json};

const DECISION_KEYS: [&str; 23] = [
    "answer",
    "asks",
    "at",
    "deferred",
    "dry_run",
    "error",
    "event",
    "from",
    "host",
    "id",
    "inbox",
    "input",
    "kind",
    "list",
    "plan_file_path",
    "reason",
    "request_id",
    "response",
    "rule",
    "schema_version",
    "team",
    "tool_name",
    "written",
];

pub(crate) fn perm(id: &str, tool: &str, input: Value) -> String {
    json!({"type": "permission_request", "request_id": id, "agent_id": "worker",
        "tool_name": tool, "tool_use_id": format!("toolu_{id}"), "description": "d",
        "input": input, "permission_suggestions": []})
    .to_string()
}

pub(crate) const PLAN: &str = r#"{"type":"plan_approval_request","from":"worker","timestamp":"2026-11-29T09:58:00.000Z","planFilePath":"/w/plan.md","planContent":"1. do it","requestId":"plan_approval-1795946280000@worker@alpha"}"#;
const SANDBOX: &str = r#"{"type":"sandbox_permission_request","requestId":"sandbox-1795946370000-xyz9876","workerId":"reviewer@alpha","workerName":"reviewer","workerColor":"green","hostPattern":{"host":"evil.example.com"},"createdAt":1795946370000}"#;

pub(crate) fn entry(from: &str, text: &str, n: usize) -> Value {
    json!({"from": from, "text": text, "timestamp": format!("2026-11-29T09:59:{n:02}.000Z"),
        "color": "blue", "msgV": 1, "msg_id": format!("id-{n}"), "type": "message", "read": false})
}

/// Team alpha (worker, reviewer; cwd /tmp) with requests in the lead's inbox.
pub(crate) fn fixture(requests: &[(&str, String)]) -> TestEnv {
    let env = TestEnv::new();
    env.team(
        "alpha",
        &[("worker", Some("blue")), ("reviewer", Some("green"))],
    );
    env.lead_by_teamctl("alpha");
    let lead: Vec<Value> = requests
        .iter()
        .enumerate()
        .map(|(i, (from, text))| entry(from, text, i))
        .collect();
    fs::write(
        env.inbox("alpha", "team-lead"),
        serde_json::to_string_pretty(&lead).unwrap(),
    )
    .unwrap();
    env
}

pub(crate) fn standard() -> TestEnv {
    fixture(&[
        (
            "worker",
            perm(
                "perm-1-echo",
                "Bash",
                json!({"command": "echo hi > ran.txt"}),
            ),
        ),
        (
            "worker",
            perm("perm-2-rm", "Bash", json!({"command": "cd x && rm -rf y"})),
        ),
        (
            "worker",
            perm(
                "perm-3-curl",
                "Bash",
                json!({"command": "curl example.com"}),
            ),
        ),
        (
            "worker",
            perm("perm-4-edit", "Edit", json!({"file_path": "/tmp/src/a.rs"})),
        ),
        ("worker", PLAN.to_string()),
        ("worker", IDLE.to_string()),
        ("reviewer", SANDBOX.to_string()),
    ])
}

/// The worker went idle after asking for its plan (entry timestamps are 09:59:<index>).
pub(crate) const IDLE: &str = r#"{"type":"idle_notification","from":"worker","timestamp":"2026-11-29T09:59:05.000Z","idleReason":"available"}"#;

pub(crate) const POLICY: &str = r#"{"permissions": {"allow": ["Bash(echo:*)", "Edit(src/**)"], "deny": ["Bash(rm:*)"]},
  "plans": "approve", "sandbox_hosts": {"allow": ["*.npmjs.org"], "deny": ["*.example.com"]},
  "unmatched": "leave"}"#;

pub(crate) fn write_policy(env: &TestEnv, text: &str) -> String {
    let p = env.dir.path().join("policy.json");
    fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// The response frames in `member`'s inbox, by the request id they answer.
pub(crate) fn responses(env: &TestEnv, member: &str) -> Vec<Value> {
    let path = env.inbox("alpha", member);
    if !path.exists() {
        return Vec::new();
    }
    read_entries(&path)
        .iter()
        .map(|e| serde_json::from_str(e["text"].as_str().unwrap()).unwrap())
        .collect()
}

pub(crate) fn answered(frame: &Value) -> &str {
    frame
        .get("request_id")
        .or_else(|| frame.get("requestId"))
        .and_then(Value::as_str)
        .unwrap()
}

fn pending_ids(env: &TestEnv) -> Vec<String> {
    run_json(env, &["pending"])["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["request_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn policy_answers_each_kind_once() {
    let env = standard();
    let policy = write_policy(&env, POLICY);
    let out = env
        .cmd()
        .args(["approve", "--policy", &policy, "--json"])
        .assert()
        .success()
        .stdout_bytes();
    let events = json_lines(&out);
    assert_eq!(events.len(), 6);
    for e in &events {
        assert_eq!(keys(e), DECISION_KEYS);
        assert_eq!(e["event"], "decision");
        assert_eq!(e["team"], "alpha");
    }
    let got: Vec<(&str, &str, &str, bool)> = events
        .iter()
        .map(|e| {
            (
                e["request_id"].as_str().unwrap(),
                e["answer"].as_str().unwrap(),
                e["rule"].as_str().unwrap(),
                e["written"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("perm-1-echo", "approve", "Bash(echo:*)", true),
            ("perm-2-rm", "deny", "Bash(rm:*)", true),
            ("perm-3-curl", "leave", "leave", false),
            ("perm-4-edit", "approve", "Edit(src/**)", true),
            (
                "plan_approval-1795946280000@worker@alpha",
                "approve",
                "approve",
                true
            ),
            (
                "sandbox-1795946370000-xyz9876",
                "deny",
                "*.example.com",
                true
            ),
        ]
    );
    assert_eq!(events[0]["asks"], "Bash(echo hi > ran.txt)");
    assert_eq!(events[0]["list"], "permissions.allow");
    assert_eq!(events[1]["reason"], "denied by policy rule Bash(rm:*)");
    assert_eq!(events[2]["list"], "unmatched");
    assert_eq!(events[2]["inbox"], Value::Null);

    // What the teammates receive: the frames approve and deny write.
    let worker = responses(&env, "worker");
    let ids: Vec<&str> = worker.iter().map(answered).collect();
    assert_eq!(
        ids,
        [
            "perm-1-echo",
            "perm-2-rm",
            "perm-4-edit",
            "plan_approval-1795946280000@worker@alpha"
        ]
    );
    assert_eq!(worker[0]["subtype"], "success");
    assert_eq!(worker[1]["subtype"], "error");
    assert_eq!(worker[1]["error"], "denied by policy rule Bash(rm:*)");
    assert_eq!(worker[3]["approved"], true);
    let reviewer = responses(&env, "reviewer");
    assert_eq!(reviewer.len(), 1);
    assert_eq!(reviewer[0]["allow"], false);
    assert_eq!(reviewer[0]["host"], "evil.example.com");

    // The unmatched one is still pending; a second pass answers nothing again, even after the
    // teammates consumed their answers (the sent log remembers).
    assert_eq!(pending_ids(&env), ["perm-3-curl"]);
    fs::write(env.inbox("alpha", "worker"), "[]").unwrap();
    fs::write(env.inbox("alpha", "reviewer"), "[]").unwrap();
    env.cmd()
        .args(["approve", "--policy", &policy])
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains(
            "left perm-3-curl from worker: Bash(curl example.com) (by unmatched: leave)",
        ))
        .stderr(predicate::str::contains("approved").not());
    assert!(responses(&env, "worker").is_empty());
    assert!(responses(&env, "reviewer").is_empty());
}

#[test]
fn human_lines_name_the_request_the_rule_and_the_answer() {
    let env = standard();
    let policy = write_policy(&env, POLICY);
    env.cmd()
        .args(["approve", "--policy", &policy])
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains(
            "approved perm-1-echo from worker: Bash(echo hi > ran.txt) (by permissions.allow Bash(echo:*))",
        ))
        .stderr(predicate::str::contains(
            "denied perm-2-rm from worker: Bash(cd x && rm -rf y) (by permissions.deny Bash(rm:*))",
        ))
        .stderr(predicate::str::contains(
            "denied sandbox-1795946370000-xyz9876 from reviewer: host evil.example.com (by sandbox_hosts.deny *.example.com)",
        ))
        .stderr(predicate::str::contains(
            "approved plan_approval-1795946280000@worker@alpha from worker: plan /w/plan.md (by plans: approve)",
        ));
}

#[test]
fn dry_run_decides_and_writes_nothing() {
    let env = standard();
    let policy = write_policy(&env, POLICY);
    let out = env
        .cmd()
        .args(["approve", "--policy", &policy, "--dry-run", "--json"])
        .assert()
        .success()
        .stdout_bytes();
    let events = json_lines(&out);
    assert_eq!(events.len(), 6);
    assert!(
        events
            .iter()
            .all(|e| e["dry_run"] == true && e["written"] == false)
    );
    assert_eq!(events[1]["answer"], "deny");
    assert!(!env.inbox("alpha", "worker").exists());
    assert!(!env.inbox("alpha", "reviewer").exists());
    assert!(
        !env.dir
            .path()
            .join("home/.local/share/teamctl/sent.jsonl")
            .exists()
    );
    assert_eq!(pending_ids(&env).len(), 6);
    env.cmd()
        .args(["approve", "--policy", &policy, "--dry-run"])
        .assert()
        .success()
        .stderr(predicate::str::contains("would deny perm-2-rm"));
}

#[test]
fn a_claude_code_settings_file_is_a_policy() {
    let env = standard();
    let settings = write_policy(
        &env,
        r#"{"model": "opus", "env": {"X": "1"}, "permissions": {"allow": ["Bash"],
            "ask": ["Bash(curl:*)"], "deny": ["Bash(rm:*)"], "defaultMode": "default"}}"#,
    );
    let events = env
        .cmd()
        .args(["approve", "--policy", &settings, "--json"])
        .assert()
        .success()
        .stdout_lines();
    let answers: Vec<(&str, &str)> = events
        .iter()
        .map(|e| (e["answer"].as_str().unwrap(), e["list"].as_str().unwrap()))
        .collect();
    assert_eq!(
        answers,
        [
            ("approve", "permissions.allow"),
            ("deny", "permissions.deny"),
            ("leave", "permissions.ask"),
            ("leave", "unmatched"),
            ("leave", "plans"),
            ("leave", "unmatched"),
        ]
    );
}

#[test]
fn unmatched_deny_answers_everything() {
    let env = standard();
    let policy = write_policy(
        &env,
        r#"{"permissions": {"allow": []}, "unmatched": "deny"}"#,
    );
    env.cmd()
        .args(["approve", "--policy", &policy])
        .assert()
        .success();
    let worker = responses(&env, "worker");
    assert_eq!(worker.len(), 4, "plans are left: {worker:?}");
    assert_eq!(worker[0]["error"], "denied by policy: no rule allows it");
    assert_eq!(
        pending_ids(&env),
        ["plan_approval-1795946280000@worker@alpha"]
    );
}

#[test]
fn a_bad_policy_is_a_usage_error_and_nothing_is_written() {
    let env = standard();
    for (text, needle) in [
        (
            r#"{"permissions": {"allow": ["Bash(echo"]}}"#,
            r#"invalid rule "Bash(echo""#,
        ),
        (
            r#"{"permissions": {"allow": ["Write(src/**)"]}}"#,
            "Write(src/**)",
        ),
        (
            r#"{"plans": "approve", "unmatchd": "deny"}"#,
            r#"unknown key "unmatchd""#,
        ),
        ("{", "not JSON"),
    ] {
        let policy = write_policy(&env, text);
        env.cmd()
            .args(["approve", "--policy", &policy])
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with("error: invalid policy "))
            .stderr(predicate::str::contains(needle));
    }
    env.cmd()
        .args(["approve", "--policy", "/nonexistent/p.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "could not read the policy /nonexistent/p.json",
        ));
    assert!(!env.inbox("alpha", "worker").exists());
}

#[test]
fn flag_combinations_are_checked() {
    let env = standard();
    let policy = write_policy(&env, POLICY);
    for args in [
        vec!["approve"],
        vec!["approve", "--follow"],
        vec!["approve", "perm-1-echo", "--policy", &policy],
        vec!["approve", "--policy", &policy, "--feedback", "x"],
        vec!["approve", "--policy", &policy, "--timeout", "1s"],
        vec!["approve", "perm-1-echo", "--dry-run"],
    ] {
        env.cmd().args(&args).assert().code(2);
    }
}

#[test]
fn refused_in_a_team_teamctl_does_not_lead() {
    let env = standard();
    let cfg_path = env.root.join("teams/alpha/config.json");
    let mut cfg: Value = serde_json::from_slice(&fs::read(&cfg_path).unwrap()).unwrap();
    cfg.as_object_mut().unwrap().remove("teamctl");
    fs::write(&cfg_path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    env.unlead("alpha");
    let policy = write_policy(&env, POLICY);
    env.cmd()
        .args([
            "approve",
            "--follow",
            "--policy",
            &policy,
            "--timeout",
            "5s",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("teamctl does not lead it"));
    cfg["leadProcess"] = json!({"pid": 1, "pidSpace": "x", "claimedAt": 1, "procStart": "1"});
    fs::write(&cfg_path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    env.cmd()
        .args(["approve", "--policy", &policy])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("led by a Claude Code session"));
    assert!(!env.inbox("alpha", "worker").exists());
    // --force answers anyway.
    env.cmd()
        .args(["approve", "--policy", &policy, "--force"])
        .assert()
        .success();
    assert_eq!(responses(&env, "worker").len(), 4);
}

/// Several `approve --policy` processes at once, over many requests: each request is answered
/// exactly once.
#[test]
fn concurrent_runs_answer_each_request_once() {
    let n = 12;
    let requests: Vec<(&str, String)> = (0..n)
        .map(|i| {
            let cmd = if i % 2 == 0 { "echo ok" } else { "rm -f x" };
            (
                "worker",
                perm(&format!("perm-{i}-c"), "Bash", json!({"command": cmd})),
            )
        })
        .collect();
    let env = fixture(&requests);
    let policy = write_policy(&env, POLICY);
    let children: Vec<Child> = (0..4)
        .map(|_| {
            env.std_cmd()
                .args(["approve", "--policy", &policy, "--json"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut written = 0;
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        written += json_lines(&out.stdout)
            .iter()
            .filter(|e| e["written"] == true)
            .count();
    }
    let frames = responses(&env, "worker");
    let mut ids: Vec<&str> = frames.iter().map(answered).collect();
    assert_eq!(frames.len(), n, "{ids:?}");
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "one answer per request");
    assert_eq!(written, n, "exactly n decisions reported as written");
}
