//! `teamctl wait`: each condition met from the files as they are and on later changes, the
//! JSON report, impossible conditions (exit 1), timeouts (exit 3) and usage errors (exit 2).

use std::fs;
use std::process::{Child, Stdio};
use std::time::Duration;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{
    Lines, TestEnv, idle_frame, json as parse, keys, led_team, open_led_team, read_entries,
    run_json, take, wait_until, write_as, write_stamped,
};

fn spawn_wait(env: &TestEnv, args: &[&str]) -> (Child, Lines) {
    let mut child = env
        .std_cmd()
        .arg("wait")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err = Lines::of(child.stderr.take().unwrap());
    (child, err)
}

/// Waits until `wait` says it is waiting (its first check is done), so that what the test does
/// next is a change it must see.
fn until_waiting(err: &Lines) {
    assert!(
        wait_until(Duration::from_secs(20), || err
            .text()
            .contains("waiting up to")),
        "{}",
        err.text()
    );
}

fn finish(child: Child, err: Lines) -> (i32, String, String) {
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        err.all(),
    )
}

fn add_task(env: &TestEnv, subject: &str, owner: &str) -> String {
    let v = run_json(env, &["tasks", "add", subject, "--owner", owner]);
    v["task"]["id"].as_str().unwrap().to_string()
}

#[test]
fn tasks_done_returns_when_the_last_task_completes() {
    let env = TestEnv::new();
    led_team(&env);
    let one = add_task(&env, "one", "alice");
    let two = add_task(&env, "two", "bob");
    env.cmd().args(["tasks", "done", &one]).assert().success();
    let (child, err) = spawn_wait(&env, &["--tasks-done", "--json", "--timeout", "1m"]);
    until_waiting(&err);
    env.cmd().args(["tasks", "done", &two]).assert().success();
    let (code, stdout, stderr) = finish(child, err);
    assert_eq!(code, 0, "{stderr}");
    let v = parse(stdout.as_bytes());
    assert_eq!(
        keys(&v),
        [
            "conditions",
            "merge",
            "met",
            "outcome",
            "schema_version",
            "team",
            "totals",
            "waited_ms"
        ]
    );
    assert_eq!(v["merge"], serde_json::Value::Null);
    assert_eq!(v["met"], true);
    assert_eq!(v["outcome"], "met");
    // No cap, no transcripts read.
    assert_eq!(v["totals"], serde_json::Value::Null);
    let c = &v["conditions"][0];
    assert_eq!(
        keys(c),
        [
            "args",
            "at",
            "condition",
            "detail",
            "impossible",
            "message",
            "met"
        ]
    );
    assert_eq!(c["condition"], "tasks_done");
    assert_eq!(c["args"], json!([]));
    assert_eq!(c["met"], true);
    assert_eq!(c["detail"], "2 of 2 completed");
    assert!(c["at"].is_string());
}

#[test]
fn already_true_returns_at_once_and_prints_each_condition() {
    let env = TestEnv::new();
    led_team(&env);
    let one = add_task(&env, "one", "alice");
    env.cmd().args(["tasks", "done", &one]).assert().success();
    env.cmd()
        .args(["wait", "--tasks-done", "--task", &one])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "met: tasks_done: 1 of 1 completed",
        ))
        .stdout(predicate::str::contains(format!(
            "met: task {one}: #{one} completed"
        )));
}

#[test]
fn no_tasks_is_not_done() {
    let env = TestEnv::new();
    led_team(&env);
    env.cmd()
        .args(["wait", "--tasks-done", "--timeout", "100ms"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "not met: tasks_done: no tasks yet",
        ))
        .stderr(predicate::str::contains(
            "timed out after 100ms: 1 of 1 conditions not met",
        ));
}

#[test]
fn idle_after_the_turn_ends() {
    let env = TestEnv::new();
    led_team(&env);
    write_as(&env, "team-lead", "alice", "do the thing");
    let (child, err) = spawn_wait(&env, &["--idle", "alice", "--timeout", "1m"]);
    until_waiting(&err);
    take(&env, "alice", "do the thing");
    write_as(&env, "alice", "team-lead", "done it");
    write_as(&env, "alice", "team-lead", &idle_frame("alice"));
    let (code, stdout, stderr) = finish(child, err);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("met: idle alice: alice (idle_notification: available"),
        "{stdout}"
    );
}

#[test]
fn idle_at_start_from_the_last_notification_but_not_with_work_waiting() {
    let env = TestEnv::new();
    led_team(&env);
    write_as(&env, "alice", "team-lead", &idle_frame("alice"));
    write_as(&env, "bob", "team-lead", &idle_frame("bob"));
    env.cmd()
        .args(["wait", "--idle", "--timeout", "5s"])
        .assert()
        .success()
        .stdout(predicate::str::contains("met: idle alice bob"));
    write_as(&env, "team-lead", "bob", "more work");
    env.cmd()
        .args(["wait", "--idle", "bob", "--timeout", "100ms"])
        .assert()
        .code(3)
        .stdout(predicate::str::contains(
            "not met: idle bob: not idle: bob (1 unread in its inbox)",
        ));
}

#[test]
fn message_from_counts_only_what_lands_after_the_start_or_after() {
    let env = TestEnv::new();
    led_team(&env);
    write_as(&env, "alice", "team-lead", "old news");
    let (child, err) = spawn_wait(
        &env,
        &["--message-from", "alice", "--json", "--timeout", "1m"],
    );
    until_waiting(&err);
    // A frame is not a message by default.
    write_as(&env, "alice", "team-lead", &idle_frame("alice"));
    write_as(&env, "alice", "team-lead", "fresh news");
    let (code, stdout, stderr) = finish(child, err);
    assert_eq!(code, 0, "{stderr}");
    let v = parse(stdout.as_bytes());
    assert_eq!(v["conditions"][0]["message"]["text"], "fresh news");
    // --after the first entry: the old one no longer counts, the later ones do.
    let lead = read_entries(&env.inbox("t", "team-lead"));
    let first = run_json(&env, &["inbox", "--from", "alice"])["messages"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(lead[0]["text"], "old news");
    let v = run_json(
        &env,
        &["wait", "--message-from", "alice", "--after", &first],
    );
    assert_eq!(v["conditions"][0]["message"]["text"], "fresh news");
    let v = run_json(
        &env,
        &[
            "wait",
            "--message-from",
            "alice",
            "--type",
            "idle_notification",
            "--after",
            &first,
        ],
    );
    assert!(
        v["conditions"][0]["message"]["text"]
            .as_str()
            .unwrap()
            .contains("idle_notification")
    );
}

#[test]
fn terminated_and_delivered() {
    let env = TestEnv::new();
    led_team(&env);
    let sent = run_json(&env, &["send", "bob", "please stop soon"]);
    let id = sent["id"].as_str().unwrap().to_string();
    let (child, err) = spawn_wait(
        &env,
        &["--terminated", "bob", "--delivered", &id, "--timeout", "1m"],
    );
    until_waiting(&err);
    take(&env, "bob", "please stop soon");
    let frame = json!({"type": "shutdown_approved", "requestId": "shutdown-1@bob",
                       "from": "bob", "timestamp": "2026-11-29T10:00:01.000Z"});
    write_as(&env, "bob", "team-lead", &frame.to_string());
    let (code, stdout, stderr) = finish(child, err);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("met: delivered {id}: bob took {id}")),
        "{stdout}"
    );
    assert!(
        stdout.contains("met: terminated bob: bob shut down"),
        "{stdout}"
    );
}

#[test]
fn a_condition_that_can_no_longer_hold_fails_at_once() {
    let env = TestEnv::new();
    led_team(&env);
    write_as(&env, "team-lead", "alice", "work");
    let (child, err) = spawn_wait(&env, &["--idle", "alice", "--timeout", "10m", "--json"]);
    until_waiting(&err);
    let frame = json!({"type": "shutdown_approved", "requestId": "shutdown-1@alice",
                       "from": "alice", "timestamp": "2026-11-29T10:00:01.000Z"});
    write_as(&env, "alice", "team-lead", &frame.to_string());
    let (code, stdout, stderr) = finish(child, err);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("error: the wait can no longer succeed: alice shut down"),
        "{stderr}"
    );
    let v = parse(stdout.as_bytes());
    assert_eq!(v["met"], false);
    assert_eq!(
        v["conditions"][0]["impossible"],
        "alice shut down (shutdown_approved)"
    );
    // With --any, another condition can still hold.
    env.cmd()
        .args(["wait", "--any", "--idle", "alice", "--terminated", "alice"])
        .assert()
        .success()
        .stdout(predicate::str::contains("met: terminated alice"));
}

#[test]
fn polling_mode_sees_changes_too() {
    let env = TestEnv::new();
    led_team(&env);
    let one = add_task(&env, "one", "alice");
    let (child, err) = spawn_wait(&env, &["--task", &one, "--poll", "20", "--timeout", "1m"]);
    until_waiting(&err);
    env.cmd().args(["tasks", "done", &one]).assert().success();
    let (code, stdout, stderr) = finish(child, err);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(&format!("met: task {one}")), "{stdout}");
}

#[test]
fn usage_and_unknown_names() {
    let env = TestEnv::new();
    led_team(&env);
    env.cmd()
        .args(["wait"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing to wait for"));
    env.cmd()
        .args(["wait", "--idle", "alice", "--terminated", "alice"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("contradict"));
    env.cmd()
        .args(["wait", "--after", "10m", "--tasks-done"])
        .assert()
        .code(2);
    env.cmd()
        .args(["wait", "--task", "99"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: task 99 not found"));
    env.cmd()
        .args(["wait", "--idle", "alcie"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("did you mean 'alice'?"));
    env.cmd()
        .args(["wait", "--delivered", "0123456789abcdef"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("in no inbox"));
    let before = fs::read(env.inbox("t", "alice")).unwrap();
    env.cmd()
        .args(["wait", "--timeout", "x", "--tasks-done"])
        .assert()
        .code(2);
    assert_eq!(fs::read(env.inbox("t", "alice")).unwrap(), before);
}

#[test]
fn message_from_after_a_message_you_sent() {
    let env = TestEnv::new();
    led_team(&env);
    // teamctl's clock is pinned at NOW in tests: stamp alice's messages around it.
    let now = chrono::DateTime::parse_from_rfc3339(crate::common::NOW)
        .unwrap()
        .with_timezone(&chrono::Utc);
    let team = open_led_team(&env);
    let before = now - chrono::Duration::hours(1);
    write_stamped(&team, "alice", "team-lead", "before the question", before);
    let sent = run_json(&env, &["send", "alice", "your verdict?"]);
    let id = sent["id"].as_str().unwrap();
    let after = now + chrono::Duration::seconds(1);
    write_stamped(&team, "alice", "team-lead", "after the question", after);
    // The id is not in team-lead's inbox: the sent log gives the time it was sent.
    let v = run_json(&env, &["wait", "--message-from", "alice", "--after", id]);
    assert_eq!(v["conditions"][0]["met"], true);
    assert_eq!(v["conditions"][0]["message"]["text"], "after the question");
    env.cmd()
        .args([
            "wait",
            "--message-from",
            "alice",
            "--after",
            "0123456789abcdef",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "neither in team-lead's inbox nor in the sent log",
        ));
}

#[test]
fn a_turn_crossing_max_cost_ends_the_wait_with_exit_6() {
    let env = TestEnv::new();
    led_team(&env);
    env.spend_as("t", "alice", "msg_1");
    let (child, err) = spawn_wait(
        &env,
        &[
            "--message-from",
            "bob",
            "--max-cost",
            "$0.0002",
            "--json",
            "--timeout",
            "1m",
        ],
    );
    until_waiting(&err);
    // The next response takes the team to $0.00028.
    env.spend_as("t", "alice", "msg_2");
    let (code, stdout, stderr) = finish(child, err);
    assert_eq!(code, 6, "{stderr}");
    assert!(
        stderr.contains("error: budget exceeded: $0.0003 of $0.0002, by alice $0.0003\n"),
        "{stderr}"
    );
    let v = parse(stdout.as_bytes());
    assert_eq!(v["outcome"], "budget");
    assert_eq!(v["met"], false);
    assert_eq!(
        v["totals"],
        json!({"tokens": {"input": 20, "output": 10, "cache_read": 0, "cache_creation": 0},
               "cost_usd": 0.00028000000000000003})
    );
}

#[test]
fn a_team_already_over_the_cap_ends_the_wait_at_once() {
    let env = TestEnv::new();
    led_team(&env);
    env.spend_as("t", "alice", "msg_1");
    env.spend_as("t", "bob", "msg_2");
    env.cmd()
        .args([
            "wait",
            "--message-from",
            "bob",
            "--max-tokens",
            "20",
            "--timeout",
            "1m",
        ])
        .assert()
        .code(6)
        .stderr(predicate::str::starts_with(
            "error: budget exceeded: 30 tokens of 20, by alice 15, bob 15",
        ));
    // Under the cap, a wait that is met reports the totals.
    let one = add_task(&env, "one", "alice");
    env.cmd().args(["tasks", "done", &one]).assert().success();
    let v = run_json(&env, &["wait", "--tasks-done", "--max-tokens", "30"]);
    assert_eq!(v["outcome"], "met");
    assert_eq!(v["totals"]["tokens"]["input"], 20);
    assert_eq!(v["totals"]["cost_usd"], 0.00028000000000000003);
    env.cmd()
        .args(["wait", "--tasks-done", "--max-cost", "lots"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid --max-cost 'lots'"));
}

/// A model newer than teamctl's price table is never counted as free: its tokens count towards
/// `--max-cost` at the highest prices known for its family, said on stderr; the member's cost
/// still shows as unknown (`null`).
#[test]
fn an_unpriced_model_counts_towards_max_cost_at_the_highest_known_prices() {
    let env = TestEnv::new();
    led_team(&env);
    let mut e = crate::common::assistant_entry(
        "msg_new_model",
        "2026-11-29T10:00:00.000Z",
        json!([{"type": "text", "text": "working"}]),
        "end_turn",
        (5_000_000, 5),
    );
    e["message"]["model"] = "claude-opus-9-9".into();
    env.transcript_line_as("t", "alice", e);
    let out = env
        .cmd()
        .args(["wait", "--message-from", "bob", "--max-cost", "1"])
        .args(["--timeout", "1m", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains("no price for model \"claude-opus-9-9\"")
            && stderr.contains("at the prices of claude-opus-4-1 ($15/$75 per million"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "error: budget exceeded: $75.00 of $1.00 (with claude-opus-9-9 estimated at the \
             highest known prices: no price for it), by alice about $75.00"
        ),
        "{stderr}"
    );
    let v = parse(&out.stdout);
    assert_eq!(v["outcome"], "budget");
    assert_eq!(v["totals"]["cost_usd"], Value::Null, "unknown, never $0");
    assert_eq!(v["totals"]["tokens"]["input"], 5_000_000);
    // status: the member's cost is unknown, not $0.00.
    let out = env.cmd().args(["status"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let alice = stdout
        .lines()
        .find(|l| l.starts_with("alice ") && l.contains("unknown"));
    assert!(alice.is_some(), "{stdout}");
}

/// Token counts never wrap: two responses of nearly 2^64 input tokens add up to the largest
/// count, and `--max-tokens` fires.
#[test]
fn token_sums_saturate_and_max_tokens_still_fires() {
    let env = TestEnv::new();
    led_team(&env);
    for id in ["msg_a", "msg_b"] {
        let e = crate::common::assistant_entry(
            id,
            "2026-11-29T10:00:00.000Z",
            json!([{"type": "text", "text": "working"}]),
            "end_turn",
            (u64::MAX - 1000, 5),
        );
        env.transcript_line_as("t", "alice", e);
    }
    let out = env
        .cmd()
        .args(["wait", "--message-from", "bob", "--max-tokens", "100"])
        .args(["--timeout", "1m", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(6), "{stderr}");
    let v = parse(&out.stdout);
    assert_eq!(v["totals"]["tokens"]["input"], u64::MAX);
}

/// An assistant entry teamctl cannot read, and a line too long to read, are said on stderr:
/// what they used is not counted, and nothing passes silently.
#[test]
fn unreadable_and_oversized_entries_are_reported() {
    let env = TestEnv::new();
    led_team(&env);
    env.spend_as("t", "alice", "msg_1");
    let mut bad = crate::common::assistant_entry(
        "msg_bad",
        "2026-11-29T10:00:00.000Z",
        json!([]),
        "end_turn",
        (1, 1),
    );
    bad["message"]["usage"]["input_tokens"] = "many".into();
    env.transcript_line_as("t", "alice", bad);
    let mut big = crate::common::assistant_entry(
        "msg_big",
        "2026-11-29T10:00:00.000Z",
        json!([{"type": "text", "text": "x".repeat(9 << 20)}]),
        "end_turn",
        (1, 1),
    );
    big["message"]["id"] = "msg_big".into();
    env.transcript_line_as("t", "alice", big);
    let out = env.cmd().args(["status"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "1 line(s) over 8 MiB skipped, 1 assistant entr(ies) that could not be read; the \
             tokens and cost they hold are not counted"
        ),
        "{stderr}"
    );
}

/// `--on-rate-limit exit` waits out a call Claude Code is still retrying, and ends the wait with
/// exit 7 once it gives up on it (its retries ran out).
#[test]
fn on_rate_limit_exit_ends_the_wait_with_exit_7_once_claude_code_gives_up() {
    let env = TestEnv::new();
    led_team(&env);
    env.transcript_line_as(
        "t",
        "alice",
        json!({"type":"api-request","timestamp":"2026-11-29T10:00:00.000Z","requestDigest":"a1"}),
    );
    env.transcript_line_as(
        "t",
        "alice",
        json!({"type":"system","subtype":"api_error","level":"error",
            "error":{"status":429,"formatted":"429 Number of request tokens has exceeded your per-minute rate limit"},
            "retryInMs":3406,"retryAttempt":2,"maxRetries":10,"timestamp":"2026-11-29T10:00:01.000Z"}),
    );
    let args = [
        "wait",
        "--message-from",
        "bob",
        "--on-rate-limit",
        "exit",
        "--json",
        "--timeout",
    ];
    // Still being retried: waited out.
    let out = env.cmd().args(args).arg("500ms").output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    // The retries ran out.
    env.transcript_line_as(
        "t",
        "alice",
        json!({"type":"assistant","timestamp":"2026-11-29T10:03:00.000Z",
            "message":{"id":"x","model":"<synthetic>","stop_reason":"stop_sequence",
                "content":[{"type":"text","text":"API Error: Request rejected (429) · rate limited"}],
                "usage":{"input_tokens":0,"output_tokens":0}},
            "error":"rate_limit","isApiErrorMessage":true,"apiErrorStatus":429}),
    );
    let out = env.cmd().args(args).arg("1m").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    assert!(
        stderr.contains(
            "error: 'alice' is rate_limited (API Error: Request rejected (429) · rate limited)"
        ),
        "{stderr}"
    );
    let v = parse(&out.stdout);
    assert_eq!(v["outcome"], "stuck");
}

/// Team `t` of [`led_team`] with task 1 alice's, in progress, and alice inside a turn (a
/// prompt, then a tool call without its result).
fn alice_inside_a_turn(env: &TestEnv) {
    led_team(env);
    env.cmd()
        .args(["tasks", "add", "Fix the race", "--owner", "alice"])
        .assert()
        .success();
    env.cmd()
        .args(["tasks", "update", "1", "--status", "in_progress"])
        .assert()
        .success();
    // alice is inside a turn (a prompt, then a tool call without its result).
    env.transcript_line_as(
        "t",
        "alice",
        json!({"type":"user","timestamp":"2026-11-29T09:00:00.000Z","message":{"role":"user","content":"go"}}),
    );
    env.transcript_line_as(
        "t",
        "alice",
        crate::common::assistant_entry(
            "m1",
            "2026-11-29T09:00:01.000Z",
            json!([{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"make"}}]),
            "tool_use",
            (10, 5),
        ),
    );
}

/// `--on-stall nudge` sends a stalled member one message naming its task and its silence, once
/// per stall; `--on-stall exit` ends the wait with exit 8.
#[test]
fn on_stall_nudges_once_or_exits_with_8() {
    let env = TestEnv::new();
    alice_inside_a_turn(&env);
    let out = env
        .cmd()
        .args(["wait", "--message-from", "bob", "--timeout", "1s"])
        .args(["--on-stall", "nudge", "--stall-after", "0s"])
        // Stalled is measured against the transcript's mtime: the real clock.
        .env_remove("TEAMCTL_NOW")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(3),
        "the wait still times out: {stderr}"
    );
    assert!(
        stderr.contains("teamctl: nudged alice (stalled): sent alice a nudge"),
        "{stderr}"
    );
    let inbox = read_entries(&env.inbox("t", "alice"));
    let nudges: Vec<&Value> = inbox
        .iter()
        .filter(|e| {
            e["text"]
                .as_str()
                .unwrap()
                .starts_with("teamctl: you have been silent")
        })
        .collect();
    assert_eq!(nudges.len(), 1, "once per stall: {inbox:?}");
    assert!(
        nudges[0]["text"]
            .as_str()
            .unwrap()
            .contains("Carry on with task #1 \"Fix the race\", or say what blocks you.")
    );
    let out = env
        .cmd()
        .args(["wait", "--message-from", "bob", "--timeout", "1m"])
        .args(["--on-stall", "exit", "--stall-after", "0s"])
        .env_remove("TEAMCTL_NOW")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(8),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A permission request teamctl answered stays answered on every read of `wait` once alice
/// has taken the answer from her inbox (then only teamctl's sent log says so): `--on-stall`
/// sees her stalled, not waiting for permission.
#[test]
fn on_stall_sees_a_request_teamctl_answered_as_answered() {
    let env = TestEnv::new();
    alice_inside_a_turn(&env);
    let request = json!({"type": "permission_request", "request_id": "perm-1795946340000-abc1234",
        "agent_id": "alice", "tool_name": "Bash", "tool_use_id": "t1", "description": "Build",
        "input": {"command": "make"}, "permission_suggestions": []});
    write_as(&env, "alice", "team-lead", &request.to_string());
    env.cmd()
        .args(["approve", "perm-1795946340000-abc1234"])
        .assert()
        .success();
    take(&env, "alice", "perm-1795946340000-abc1234");
    let out = env
        .cmd()
        .args(["wait", "--message-from", "bob", "--timeout", "5s"])
        .args(["--on-stall", "exit", "--stall-after", "0s"])
        .env_remove("TEAMCTL_NOW")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(8), "{stderr}");
    assert!(stderr.contains("'alice' is stalled"), "{stderr}");
}

#[test]
fn message_from_with_from_transcript_takes_the_text_of_a_turn_without_one() {
    let env = TestEnv::new();
    led_team(&env);
    let args = [
        "--message-from",
        "alice",
        "--from-transcript",
        "--json",
        "--timeout",
        "1m",
    ];
    let (child, err) = spawn_wait(&env, &args);
    until_waiting(&err);
    crate::ask::turn_in_transcript(
        &env,
        "Report, please",
        json!([{"type": "text", "text": "All green."}]),
    );
    let bare = json!({"type": "idle_notification", "from": "alice", "idleReason": "available",
                      "timestamp": "2026-11-29T10:00:01.000Z"});
    write_as(&env, "alice", "team-lead", &bare.to_string());
    let (code, stdout, stderr) = finish(child, err);
    assert_eq!(code, 0, "{stderr}");
    let m = &parse(stdout.as_bytes())["conditions"][0]["message"];
    assert_eq!(
        keys(m),
        ["from", "idle_notification", "source", "text", "timestamp"]
    );
    assert_eq!(
        (m["text"].as_str(), m["source"].as_str()),
        (Some("All green."), Some("transcript"))
    );
    assert!(
        m["idle_notification"]["text"]
            .as_str()
            .unwrap()
            .contains("idle_notification")
    );
    // A message still counts as it is.
    let (child, err) = spawn_wait(&env, &args);
    until_waiting(&err);
    write_as(&env, "alice", "team-lead", "written, not said");
    let (code, stdout, stderr) = finish(child, err);
    assert_eq!(code, 0, "{stderr}");
    let m = &parse(stdout.as_bytes())["conditions"][0]["message"];
    assert_eq!(
        (m["text"].as_str(), m.get("source")),
        (Some("written, not said"), None)
    );
    // Only with --message-from, and not with --type.
    env.cmd()
        .args(["wait", "--from-transcript", "--tasks-done"])
        .assert()
        .code(2);
    env.cmd()
        .args([
            "wait",
            "--message-from",
            "alice",
            "--from-transcript",
            "--type",
            "protocol",
        ])
        .assert()
        .code(2);
}

#[test]
fn message_from_with_from_transcript_and_no_text_is_exit_5() {
    let env = TestEnv::new();
    led_team(&env);
    let (child, err) = spawn_wait(
        &env,
        &[
            "--message-from",
            "alice",
            "--from-transcript",
            "--timeout",
            "1m",
        ],
    );
    until_waiting(&err);
    let bare = json!({"type": "idle_notification", "from": "alice", "idleReason": "available",
                      "timestamp": "2026-11-29T10:00:01.000Z"});
    write_as(&env, "alice", "team-lead", &bare.to_string());
    let (code, _, stderr) = finish(child, err);
    assert_eq!(code, 5, "{stderr}");
    assert!(
        stderr.contains("alice went idle without writing to team-lead (idle_notification: available), and its transcript shows no text for that turn"),
        "{stderr}"
    );
}
