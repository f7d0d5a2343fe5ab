//! `teamctl tasks`.

use std::collections::HashSet;
use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{Ran, TestEnv, concurrent_runs, keys, node_peer, read_entries, run_json};

const TASK_KEYS: [&str; 12] = [
    "active_form",
    "blocked",
    "blocked_by",
    "blocks",
    "description",
    "id",
    "metadata",
    "open_blockers",
    "owner",
    "ready",
    "status",
    "subject",
];

fn ids(v: &Value) -> Vec<String> {
    v["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .collect()
}

fn task_file(env: &TestEnv, id: &str) -> PathBuf {
    env.root.join("tasks/demo-team").join(format!("{id}.json"))
}

fn read_task(env: &TestEnv, id: &str) -> String {
    fs::read_to_string(task_file(env, id)).unwrap()
}

#[test]
fn list_human_and_json() {
    let env = TestEnv::example();
    env.cmd()
        .args(["tasks"])
        .assert()
        .success()
        .stdout(predicate::str::contains("#1   in_progress"))
        .stdout(predicate::str::contains("#2   pending (blocked)"))
        .stdout(predicate::str::contains("Fix the session refresh race"));
    let v = run_json(&env, &["tasks", "list"]);
    assert_eq!(keys(&v), ["schema_version", "tasks", "team"]);
    assert_eq!(v["team"], "demo-team");
    for t in v["tasks"].as_array().unwrap() {
        assert_eq!(keys(t), TASK_KEYS);
    }
    let two = &v["tasks"][1];
    assert_eq!(two["id"], "2");
    assert_eq!(two["active_form"], "Fixing the session refresh race");
    assert_eq!(two["owner"], Value::Null);
    assert_eq!(two["blocked_by"], serde_json::json!(["1"]));
    assert_eq!(two["blocked"], true);
    assert_eq!(two["open_blockers"], serde_json::json!(["1"]));
    assert_eq!(two["ready"], false);
    assert_eq!(two["metadata"], Value::Null);
    assert_eq!(v["tasks"][0]["owner"], "researcher");
}

#[test]
fn list_filters_ordering_internal_and_invalid_files() {
    let env = TestEnv::example();
    let dir = env.root.join("tasks/demo-team");
    let task = |id: &str, extra: &str| {
        format!(
            r#"{{"id":"{id}","subject":"s{id}","description":"d","status":"pending","blocks":[],"blockedBy":[]{extra}}}"#
        )
    };
    fs::write(dir.join("10.json"), task("10", "")).unwrap();
    fs::write(dir.join("3.json"), task("3", r#","owner":"user""#)).unwrap();
    fs::write(
        dir.join("4.json"),
        task("4", r#","metadata":{"_internal":true}"#),
    )
    .unwrap();
    fs::write(
        dir.join("5.json"),
        r#"{"id":"5","subject":"x","status":"doing"}"#,
    )
    .unwrap();
    fs::write(dir.join("6.json"), "{not json").unwrap();
    fs::write(
        dir.join("7.json"),
        r#"{"id":"7","subject":"x","status":"pending","owner":null}"#,
    )
    .unwrap();
    let before: Vec<Vec<u8>> = ["5", "6", "7"]
        .iter()
        .map(|i| fs::read(dir.join(format!("{i}.json"))).unwrap())
        .collect();

    let out = env.cmd().args(["tasks", "--json"]).assert().success();
    let out = out
        .stderr(predicate::str::contains("5.json: 'status' is 'doing'"))
        .stderr(predicate::str::contains("6.json"))
        .stderr(predicate::str::contains("7.json: 'owner' is not a string"));
    let v = out.stdout_json();
    assert_eq!(
        ids(&v),
        ["1", "2", "3", "10"],
        "numeric order, internal hidden"
    );
    assert_eq!(
        ids(&run_json(&env, &["tasks", "--all"])),
        ["1", "2", "3", "4", "10"]
    );
    assert_eq!(ids(&run_json(&env, &["tasks", "--ready"])), ["10"]);
    assert_eq!(ids(&run_json(&env, &["tasks", "--blocked"])), ["2"]);
    assert_eq!(
        ids(&run_json(&env, &["tasks", "--status", "in_progress"])),
        ["1"]
    );
    assert_eq!(
        ids(&run_json(&env, &["tasks", "--owner", "researcher"])),
        ["1"]
    );
    assert_eq!(ids(&run_json(&env, &["tasks", "--mine"])), ["3"]);
    let mine = env
        .cmd()
        .env("TEAMCTL_FROM", "researcher")
        .args(["tasks", "--mine", "--json"])
        .assert();
    assert_eq!(ids(&mine.success().stdout_json()), ["1"]);
    let after: Vec<Vec<u8>> = ["5", "6", "7"]
        .iter()
        .map(|i| fs::read(dir.join(format!("{i}.json"))).unwrap())
        .collect();
    assert_eq!(before, after, "invalid task files are never changed");
}

#[test]
fn show_includes_the_tasks_it_blocks() {
    let env = TestEnv::example();
    let v = run_json(&env, &["tasks", "show", "#1"]);
    assert_eq!(keys(&v), ["dependents", "schema_version", "task", "team"]);
    assert_eq!(v["task"]["id"], "1");
    assert_eq!(v["dependents"][0]["id"], "2");
    assert_eq!(keys(&v["dependents"][0]), TASK_KEYS);
    env.cmd()
        .args(["tasks", "show", "2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("state: blocked"))
        .stdout(predicate::str::contains("open blockers: #1"));
    env.cmd()
        .args(["tasks", "show", "9"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: no task #9"));
    env.cmd().args(["tasks", "show", "../1"]).assert().code(2);
}

#[test]
fn add_allocates_like_claude_code_and_records_both_sides() {
    let env = TestEnv::example();
    // .highwatermark is 2; a deleted #5 raised it to 5.
    fs::write(env.root.join("tasks/demo-team/.highwatermark"), "5").unwrap();
    let v = run_json(
        &env,
        &[
            "tasks",
            "add",
            "Write notes",
            "--active-form",
            "Writing notes",
            "--blocked-by",
            "2",
        ],
    );
    assert_eq!(keys(&v), ["assignment", "schema_version", "task", "team"]);
    assert_eq!(v["task"]["id"], "6");
    assert_eq!(v["task"]["blocked"], true);
    assert_eq!(v["assignment"], Value::Null);
    // Claude Code's key order and layout, description defaulting to the subject.
    assert_eq!(
        read_task(&env, "6"),
        "{\n  \"id\": \"6\",\n  \"subject\": \"Write notes\",\n  \"description\": \"Write notes\",\n  \"activeForm\": \"Writing notes\",\n  \"status\": \"pending\",\n  \"blocks\": [],\n  \"blockedBy\": [\n    \"2\"\n  ]\n}"
    );
    // The blocker learns it blocks #6, its keys otherwise untouched.
    let two: Value = serde_json::from_str(&read_task(&env, "2")).unwrap();
    assert_eq!(two["blocks"], serde_json::json!(["6"]));
    env.cmd()
        .args(["tasks", "add", "Next"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("added task #7: Next"));
    assert!(!env.root.join("tasks/demo-team/.lock.lock").exists());
}

#[test]
fn add_with_owner_mails_task_assignment() {
    let env = TestEnv::example();
    let v = run_json(
        &env,
        &[
            "tasks",
            "add",
            "Review PR",
            "--owner",
            "tester",
            "--description",
            "PR 42",
        ],
    );
    assert_eq!(v["task"]["owner"], "tester");
    assert_eq!(v["assignment"]["to"], "tester");
    let entry = read_entries(&env.inbox("demo-team", "tester"))
        .pop()
        .unwrap();
    assert_eq!(entry["from"], "user");
    assert!(entry.get("summary").is_none());
    assert_eq!(
        entry["text"],
        r#"{"type":"task_assignment","taskId":"3","subject":"Review PR","description":"PR 42","assignedBy":"user","timestamp":"2026-11-29T10:00:00.000Z"}"#
    );
    // Owner after status in the file (create order), never null.
    assert!(read_task(&env, "3").contains("\"status\": \"pending\",\n  \"owner\": \"tester\","));
    env.cmd()
        .args(["tasks", "add", "x", "--owner", "nobody"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not a member"));
    assert!(!task_file(&env, "4").exists());
}

#[test]
fn add_refuses_unknown_blockers_and_bad_input() {
    let env = TestEnv::example();
    env.cmd()
        .args(["tasks", "add", "x", "--blocked-by", "9"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no task #9"));
    assert!(!task_file(&env, "3").exists());
    env.cmd()
        .args(["tasks", "add", "x", "--blocked-by", "a"])
        .assert()
        .code(2);
    env.cmd().args(["tasks", "add", " "]).assert().code(2);
    env.cmd()
        .args(["tasks", "add", "x", "--owner", "a/b"])
        .assert()
        .code(2);
}

#[test]
fn update_merges_like_claude_code() {
    let env = TestEnv::example();
    let v = run_json(
        &env,
        &[
            "tasks",
            "update",
            "2",
            "--owner",
            "tester",
            "--status",
            "in_progress",
        ],
    );
    assert_eq!(v["changed"], true);
    assert_eq!(v["assignment"]["to"], "tester");
    // Existing keys keep their place; the new owner goes last.
    assert_eq!(
        read_task(&env, "2"),
        "{\n  \"id\": \"2\",\n  \"subject\": \"Fix the session refresh race\",\n  \"description\": \"Apply the fix found in #1 and add a regression test.\",\n  \"activeForm\": \"Fixing the session refresh race\",\n  \"status\": \"in_progress\",\n  \"blocks\": [],\n  \"blockedBy\": [\n    \"1\"\n  ],\n  \"owner\": \"tester\"\n}"
    );
    // Unassigning removes the key.
    env.cmd()
        .args(["tasks", "update", "2", "--no-owner"])
        .assert()
        .success();
    assert!(!read_task(&env, "2").contains("owner"));
    // The same change again is no change.
    let v = run_json(&env, &["tasks", "update", "2", "--status", "in_progress"]);
    assert_eq!(v["changed"], false);
    // Dependencies on both sides.
    env.cmd().args(["tasks", "add", "Docs"]).assert().success();
    env.cmd()
        .args(["tasks", "update", "3", "--add-blocks", "2"])
        .assert()
        .success();
    let three: Value = serde_json::from_str(&read_task(&env, "3")).unwrap();
    let two: Value = serde_json::from_str(&read_task(&env, "2")).unwrap();
    assert_eq!(three["blocks"], serde_json::json!(["2"]));
    assert_eq!(two["blockedBy"], serde_json::json!(["1", "3"]));
}

#[test]
fn update_usage_and_failures() {
    let env = TestEnv::example();
    env.cmd()
        .args(["tasks", "update", "2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing to change"));
    env.cmd()
        .args(["tasks", "update", "2", "--status", "deleted"])
        .assert()
        .code(2);
    env.cmd()
        .args(["tasks", "update", "2", "--owner", "a", "--no-owner"])
        .assert()
        .code(2);
    env.cmd()
        .args(["tasks", "update", "9", "--status", "completed"])
        .assert()
        .code(1);
    env.cmd()
        .args(["tasks", "update", "2", "--add-blocks", "2"])
        .assert()
        .code(2);
    // A corrupt task file is reported and left unchanged.
    fs::write(task_file(&env, "2"), "[1]").unwrap();
    env.cmd()
        .args(["tasks", "update", "2", "--status", "completed"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("left unchanged"));
    assert_eq!(read_task(&env, "2"), "[1]");
}

#[test]
fn claim_rules() {
    let env = TestEnv::example();
    env.cmd()
        .args(["tasks", "claim", "1", "--as", "tester"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "already claimed by researcher (already_claimed)",
        ));
    env.cmd()
        .args(["tasks", "claim", "2", "--as", "tester"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "blocked by #1, not completed yet (blocked)",
        ));
    let before = read_task(&env, "2");
    let v = run_json(&env, &["tasks", "done", "1"]);
    assert_eq!(keys(&v), ["now_ready", "schema_version", "task", "team"]);
    assert_eq!(v["now_ready"], serde_json::json!(["2"]));
    assert_eq!(
        before,
        read_task(&env, "2"),
        "refused claims change nothing"
    );
    let v = run_json(&env, &["tasks", "claim", "2", "--as", "tester"]);
    assert_eq!(v["task"]["owner"], "tester");
    assert_eq!(v["task"]["status"], "in_progress");
    env.cmd()
        .args(["tasks", "claim", "1", "--as", "researcher"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "already completed (already_resolved)",
        ));
    // The default claimant is your identity.
    env.cmd().args(["tasks", "add", "Mine"]).assert().success();
    env.cmd()
        .env("TEAMCTL_FROM", "ops")
        .args(["tasks", "claim", "3"])
        .assert()
        .success()
        .stdout(predicate::str::contains("claimed task #3 as ops"));
}

#[test]
fn two_claimers_at_once_exactly_one_wins() {
    let env = TestEnv::example();
    for round in 0..8 {
        let id = (round + 3).to_string();
        env.cmd()
            .args(["tasks", "add", &format!("race {round}")])
            .assert()
            .success();
        let children: Vec<_> = ["alice", "bob"]
            .iter()
            .map(|who| {
                env.std_cmd()
                    .args(["tasks", "claim", &id, "--as", who])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let wins = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap().status)
            .filter(|s| s.success())
            .count();
        assert_eq!(wins, 1, "round {round}");
    }
}

#[test]
fn rm_raises_the_high_water_mark_and_strips_references() {
    let env = TestEnv::example();
    env.cmd()
        .args(["tasks", "add", "third", "--blocked-by", "2"])
        .assert()
        .success();
    let v = run_json(&env, &["tasks", "rm", "3"]);
    assert_eq!(
        keys(&v),
        [
            "deleted",
            "not_updated",
            "schema_version",
            "team",
            "updated"
        ]
    );
    assert_eq!(v["updated"], serde_json::json!(["2"]));
    assert_eq!(v["not_updated"], serde_json::json!([]));
    assert!(!task_file(&env, "3").exists());
    assert_eq!(
        fs::read_to_string(env.root.join("tasks/demo-team/.highwatermark")).unwrap(),
        "3"
    );
    let two: Value = serde_json::from_str(&read_task(&env, "2")).unwrap();
    assert_eq!(two["blocks"], serde_json::json!([]));
    // Ids are never reused.
    env.cmd()
        .args(["tasks", "add", "fourth"])
        .assert()
        .success()
        .stdout(predicate::str::contains("#4"));
    env.cmd()
        .args(["tasks", "rm", "1"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "deleted task #1; removed it from #2",
        ));
    env.cmd().args(["tasks", "rm", "1"]).assert().code(1);
}

/// Ids allocated by teamctl and by a Claude Code-style peer (proper-lockfile on `.lock`) at
/// the same time never collide.
#[test]
fn concurrent_ids_with_the_proper_lockfile_peer_never_collide() {
    let Some(script) = node_peer() else { return };
    let env = TestEnv::new();
    env.team("alpha", &[("alice", None)]);
    let dir = env.root.join("tasks/alpha");
    let peers: Vec<_> = (0..2)
        .map(|p| {
            Command::new("node")
                .arg(&script)
                .args([
                    "task-add",
                    dir.to_str().unwrap(),
                    "--count",
                    "20",
                    "--prefix",
                    &format!("peer{p}-"),
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    concurrent_runs(&env, 3, 15, |t, i| {
        let subject = format!("teamctl{t}-{i}");
        ["tasks", "add", &subject, "--lock-timeout", "30s"]
            .map(String::from)
            .to_vec()
    });
    for p in peers {
        let out = p.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v = run_json(&env, &["--team", "alpha", "tasks"]);
    let tasks = v["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 85);
    let subjects: HashSet<&str> = tasks
        .iter()
        .map(|t| t["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects.len(), 85, "no task overwrote another");
    let want: Vec<String> = (1..=85).map(|i| i.to_string()).collect();
    assert_eq!(ids(&v), want);
}
