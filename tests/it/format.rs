//! Which inbox format `status` and `doctor` report: judged from what the consumers do (a kept
//! `read: true` entry, a message of teamctl's that is gone), never from the `msgV` teamctl itself
//! writes. Fixture: tests/fixtures/format/claude-2.1.150 (see its README).

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::{TestEnv, copy_dir, json};

/// The 2.1.150 team, and teamctl's sent log for it.
fn old_team() -> TestEnv {
    let env = TestEnv::new();
    let fx = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/format/claude-2.1.150");
    copy_dir(&fx.join("teams"), &env.root.join("teams"));
    let data = env.dir.path().join("data");
    fs::create_dir_all(&data).unwrap();
    fs::copy(fx.join("sent.jsonl"), data.join("sent.jsonl")).unwrap();
    env
}

fn status_format(env: &TestEnv) -> String {
    let out = env
        .cmd()
        .env("TEAMCTL_DATA_DIR", env.dir.path().join("data"))
        .args(["--json", "status"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    json(&out.stdout)["team"]["format"]
        .as_str()
        .unwrap()
        .to_string()
}

fn doctor_format(env: &TestEnv) -> String {
    let out = env
        .cmd()
        .env("TEAMCTL_DATA_DIR", env.dir.path().join("data"))
        .args(["--json", "doctor"])
        .output()
        .unwrap();
    let v = json(&out.stdout);
    let c: Vec<&Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "format")
        .collect();
    assert_eq!(c.len(), 1, "{v}");
    c[0]["message"].as_str().unwrap().to_string()
}

fn send(env: &TestEnv, to: &str, text: &str) {
    let out = env
        .cmd()
        .env("TEAMCTL_DATA_DIR", env.dir.path().join("data"))
        .args(["send", to, text, "--from", "ops"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn an_old_team_stays_legacy_after_teamctl_sends_into_it() {
    let env = old_team();
    assert_eq!(status_format(&env), "legacy");
    let msg = doctor_format(&env);
    assert!(msg.contains("legacy inbox format"), "{msg}");
    assert!(msg.contains("2.1.159 or earlier"), "{msg}");
    // teamctl's own msgV entries, unread, change nothing.
    send(&env, "worker", "Token: B-1");
    send(&env, "team-lead", "hello");
    assert_eq!(status_format(&env), "legacy");
    assert!(doctor_format(&env).contains("legacy inbox format"));
}

#[test]
fn teamctl_own_entries_alone_say_nothing() {
    let env = old_team();
    // Only teamctl's message left, unread (as if before the consumer saw it).
    let inbox = env.root.join("teams/old-team/inboxes/worker.json");
    let mut v: Vec<Value> = serde_json::from_slice(&fs::read(&inbox).unwrap()).unwrap();
    v.remove(0);
    v[0]["read"] = false.into();
    fs::write(&inbox, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    for other in ["ops", "team-lead"] {
        fs::write(
            env.root
                .join(format!("teams/old-team/inboxes/{other}.json")),
            "[]",
        )
        .unwrap();
    }
    assert_eq!(status_format(&env), "unknown");
    assert!(doctor_format(&env).contains("not known yet"));
    // Without the sent log, the same entry would be another writer's: a 2.1.196+ client.
    fs::remove_file(env.dir.path().join("data/sent.jsonl")).unwrap();
    assert_eq!(status_format(&env), "current");
}

#[test]
fn a_message_of_teamctl_that_is_gone_was_deleted_by_a_current_consumer() {
    let env = old_team();
    for name in ["worker", "ops", "team-lead"] {
        fs::write(
            env.root.join(format!("teams/old-team/inboxes/{name}.json")),
            "[]",
        )
        .unwrap();
    }
    assert_eq!(status_format(&env), "current");
    let msg = doctor_format(&env);
    assert!(msg.contains("current inbox format"), "{msg}");
    assert!(msg.contains("2.1.160 or later"), "{msg}");
    assert!(msg.contains("msgV written from 2.1.196"), "{msg}");
}

#[test]
fn both_kinds_of_inbox_are_mixed() {
    let env = old_team();
    // ops's inbox holds an entry another 2.1.196+ client wrote; worker's keeps read entries.
    fs::write(
        env.root.join("teams/old-team/inboxes/ops.json"),
        r#"[{"from":"worker","text":"hi","timestamp":"2026-11-29T09:02:00.000Z","msgV":1,"msg_id":"e1","type":"message","read":false}]"#,
    )
    .unwrap();
    assert_eq!(status_format(&env), "mixed");
    assert!(doctor_format(&env).contains("both inbox formats"));
}
