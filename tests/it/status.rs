//! `teamctl status`.

use std::fs::{self, File};
use std::time::{Duration, SystemTime};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{Ran, TestEnv, keys, run_json};

const MEMBER_KEYS: [&str; 15] = [
    "agent_id",
    "agent_type",
    "backend",
    "color",
    "in_config",
    "is_active",
    "last_event_at",
    "last_event_kind",
    "name",
    "pending",
    "process_alive",
    "session_status",
    "state",
    "tasks_in_progress",
    "tasks_owned",
];

/// TEAMCTL_NOW is 2026-11-29T10:00:00Z.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.team(
        "alpha",
        &[
            ("fresh", Some("blue")),
            ("quiet", None),
            ("gone", None),
            ("silent", None),
            ("busy", None),
            ("drained", None),
        ],
    );
    // busy has isActive: true.
    let cfg_path = env.root.join("teams/alpha/config.json");
    let mut cfg: Value = serde_json::from_slice(&fs::read(&cfg_path).unwrap()).unwrap();
    cfg["members"][5]["isActive"] = true.into();
    fs::write(&cfg_path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    let lead = json!([
        {"from":"fresh","text":"done with the review","timestamp":"2026-11-29T09:59:00.000Z","msgV":1,"type":"message","read":false},
        {"from":"quiet","text":"{\"type\":\"idle_notification\",\"from\":\"quiet\",\"timestamp\":\"2026-11-29T09:50:00.000Z\",\"idleReason\":\"available\"}","timestamp":"2026-11-29T09:50:00.000Z","msgV":1,"type":"message","read":false},
        {"from":"gone","text":"{\"type\":\"shutdown_approved\",\"requestId\":\"shutdown-1@gone\",\"from\":\"gone\",\"timestamp\":\"2026-11-29T09:59:30.000Z\"}","timestamp":"2026-11-29T09:59:30.000Z","msgV":1,"type":"message","read":false}
    ]);
    fs::write(
        env.inbox("alpha", "team-lead"),
        serde_json::to_string_pretty(&lead).unwrap(),
    )
    .unwrap();
    fs::write(env.inbox("alpha", "quiet"), r#"[{"from":"team-lead","text":"hi","timestamp":"2026-11-29T09:00:00.000Z","read":false},{"from":"team-lead","text":"x","timestamp":"2026-11-29T09:01:00.000Z","read":false}]"#).unwrap();
    // drained: an empty inbox last written a minute ago.
    let drained = env.inbox("alpha", "drained");
    fs::write(&drained, "[]").unwrap();
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_946_340); // 2026-11-29T09:59:00Z
    File::options()
        .write(true)
        .open(&drained)
        .unwrap()
        .set_modified(t)
        .unwrap();
    // left: an inbox whose owner is no longer in config.json.
    let left = env.inbox("alpha", "left");
    fs::write(&left, "[]").unwrap();
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_942_800); // 2026-11-29T09:00:00Z
    File::options()
        .write(true)
        .open(&left)
        .unwrap()
        .set_modified(t)
        .unwrap();
    let tasks = env.root.join("tasks/alpha");
    fs::create_dir_all(&tasks).unwrap();
    fs::write(tasks.join("1.json"), r#"{"id":"1","subject":"a","description":"","status":"in_progress","blocks":["2"],"blockedBy":[],"owner":"fresh"}"#).unwrap();
    fs::write(tasks.join("2.json"), r#"{"id":"2","subject":"b","description":"","status":"pending","blocks":[],"blockedBy":["1"],"owner":"fresh"}"#).unwrap();
    fs::write(tasks.join("3.json"), r#"{"id":"3","subject":"c","description":"","status":"pending","blocks":[],"blockedBy":[]}"#).unwrap();
    env
}

fn member<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap()
}

#[test]
fn json_states_and_signals() {
    let env = fixture();
    let v = run_json(&env, &["status"]);
    assert_eq!(
        keys(&v),
        ["identity", "members", "schema_version", "tasks", "team"]
    );
    assert_eq!(
        v["identity"],
        json!({"name": "user", "reachable": false, "reason": "'user' is reserved by Claude Code and teammates never reply to it; use your own name with `send --join --from NAME`"})
    );
    assert_eq!(
        keys(&v["team"]),
        [
            "created_at",
            "description",
            "format",
            "last_activity_at",
            "lead_agent_id",
            "lead_alive",
            "lead_pid",
            "lead_session_id",
            "name"
        ]
    );
    assert_eq!(v["team"]["format"], "current");
    assert_eq!(v["team"]["last_activity_at"], "2026-11-29T09:59:30.000Z");
    for m in v["members"].as_array().unwrap() {
        assert_eq!(keys(m), MEMBER_KEYS);
    }
    let state = |n: &str| member(&v, n)["state"].as_str().unwrap().to_string();
    assert_eq!(state("fresh"), "active");
    assert_eq!(state("quiet"), "idle");
    assert_eq!(state("gone"), "terminated");
    assert_eq!(state("silent"), "unknown");
    assert_eq!(state("busy"), "active");
    assert_eq!(state("drained"), "active");
    assert_eq!(state("left"), "terminated");
    assert_eq!(member(&v, "left")["in_config"], false);
    assert_eq!(member(&v, "quiet")["last_event_kind"], "idle_notification");
    assert_eq!(
        member(&v, "quiet")["last_event_at"],
        "2026-11-29T09:50:00.000Z"
    );
    assert_eq!(member(&v, "quiet")["pending"], 2);
    assert_eq!(member(&v, "drained")["last_event_kind"], "inbox_drained");
    assert_eq!(member(&v, "busy")["last_event_kind"], "is_active");
    assert_eq!(member(&v, "busy")["is_active"], true);
    assert_eq!(member(&v, "fresh")["color"], "blue");
    assert_eq!(member(&v, "fresh")["tasks_in_progress"], 1);
    assert_eq!(member(&v, "fresh")["tasks_owned"], 2);
    assert_eq!(member(&v, "team-lead")["pending"], 3);
    assert_eq!(
        v["tasks"],
        json!({"pending":2,"in_progress":1,"completed":0,"blocked":1,"ready":1})
    );
    // A longer idle threshold makes quiet active.
    let out = env
        .cmd()
        .args(["status", "--json", "--idle-after", "1h"])
        .assert()
        .success();
    assert_eq!(member(&out.stdout_json(), "quiet")["state"], "active");
}

#[test]
fn human_output() {
    let env = fixture();
    env.cmd()
        .args(["status"])
        .assert()
        .success()
        .stdout(predicate::str::contains("team:        alpha"))
        .stdout(predicate::str::contains(
            "tasks:       2 pending, 1 in progress, 0 completed (1 ready, 1 blocked)",
        ))
        .stdout(predicate::str::contains("10m ago (idle_notification)"))
        .stdout(predicate::str::contains("terminated"));
}

#[test]
fn several_teams_give_one_row_each() {
    let env = fixture();
    env.team("beta", &[("x", None)]);
    let v = run_json(&env, &["status"]);
    assert_eq!(keys(&v), ["schema_version", "teams"]);
    let names: Vec<&str> = v["teams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert_eq!(
        keys(&v["teams"][0]),
        ["last_activity_at", "lead_alive", "members", "name"]
    );
    assert_eq!(v["teams"][0]["members"], 7);
    env.cmd()
        .args(["status"])
        .assert()
        .success()
        .stdout(predicate::str::contains("TEAM"));
    // Naming one still works.
    env.cmd()
        .args(["--team", "beta", "status"])
        .assert()
        .success()
        .stdout(predicate::str::contains("team:        beta"));
}

#[test]
fn lead_process_liveness() {
    let env = fixture();
    let cfg_path = env.root.join("teams/alpha/config.json");
    let mut cfg: Value = serde_json::from_slice(&fs::read(&cfg_path).unwrap()).unwrap();
    // This test process stands in for a running lead; a wrong start time means a reused pid.
    let start = teamctl::host::proc::proc_start(std::process::id()).unwrap();
    cfg["leadProcess"] = json!({"pid": std::process::id(), "procStart": start});
    fs::write(&cfg_path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    let v = run_json(&env, &["status"]);
    assert_eq!(v["team"]["lead_alive"], true);
    assert_eq!(member(&v, "team-lead")["process_alive"], true);
    cfg["leadProcess"]["procStart"] = "1".into();
    fs::write(&cfg_path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    let out = env.cmd().args(["status", "--json"]).assert().success();
    assert_eq!(out.stdout_json()["team"]["lead_alive"], false);
}

#[test]
fn corrupt_files_are_reported_and_left_alone() {
    let env = fixture();
    let inbox = env.inbox("alpha", "quiet");
    fs::write(&inbox, "[{").unwrap();
    env.cmd()
        .args(["status"])
        .assert()
        .success()
        .stderr(predicate::str::contains("warning: could not read"))
        .stderr(predicate::str::contains("quiet.json"));
    assert_eq!(fs::read(&inbox).unwrap(), b"[{");
    let cfg = env.root.join("teams/alpha/config.json");
    fs::write(&cfg, "{\"members\": [").unwrap();
    env.cmd()
        .args(["status"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error:"))
        .stderr(predicate::str::contains("config.json"));
    assert_eq!(fs::read(&cfg).unwrap(), b"{\"members\": [");
}

#[test]
fn usage_error() {
    let env = fixture();
    env.cmd()
        .args(["status", "--idle-after", "soon"])
        .assert()
        .code(2);
}
