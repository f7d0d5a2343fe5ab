//! `teamctl status`.

use std::fs::{self, File};
use std::time::{Duration, SystemTime};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{Ran, TestEnv, assistant_entry, json as parse, keys, member, run_json};

const MEMBER_KEYS: [&str; 28] = [
    "activity",
    "agent_id",
    "agent_type",
    "backend",
    "color",
    "context",
    "cost_source",
    "cost_usd",
    "idle_unreported_since",
    "in_config",
    "is_active",
    "last_event_at",
    "last_event_kind",
    "model",
    "name",
    "pending",
    "process_alive",
    "sandbox",
    "session_status",
    "state",
    "tasks_in_progress",
    "tasks_owned",
    "tokens",
    "transcripts",
    "unread",
    "waiting",
    "waiting_detail",
    "worktree",
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

#[test]
fn json_states_and_signals() {
    let env = fixture();
    let v = run_json(&env, &["status"]);
    assert_eq!(
        keys(&v),
        [
            "identity",
            "members",
            "misaddressed",
            "needs_human",
            "schema_version",
            "tasks",
            "team",
            "totals"
        ]
    );
    // No transcripts: the work keys are there, null.
    assert_eq!(v["totals"], json!({"tokens": null, "cost_usd": null}));
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
        for k in [
            "tokens",
            "cost_usd",
            "cost_source",
            "model",
            "activity",
            "waiting",
            "waiting_detail",
            "context",
            "worktree",
        ] {
            assert_eq!(m[k], Value::Null, "{k}");
        }
        assert_eq!(m["transcripts"], json!([]));
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

const LEAD_SESSION: &str = "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d";

/// The fixture plus transcripts: the lead's session ended (with Claude Code's cost-state), fresh
/// runs a Bash command (its transcript last written 10 minutes ago), quiet asks for permission,
/// silent owns only a blocked task.
fn with_transcripts() -> (TestEnv, std::path::PathBuf) {
    let env = fixture();
    env.transcript(
        "/tmp",
        LEAD_SESSION,
        &[
            json!({"type":"user","timestamp":"2026-11-29T09:00:00.000Z","sessionId":LEAD_SESSION,"message":{"role":"user","content":"Review the auth module"}}),
            assistant_entry("msg_1", "2026-11-29T09:00:01.000Z", json!([{"type":"text","text":"Done: 2 issues."}]), "end_turn", (1000, 500)),
            json!({"type":"cost-state","sessionId":LEAD_SESSION,"totalCostUSD":0.25,"modelUsage":{"claude-opus-5-5":{"inputTokens":1000,"outputTokens":500,"cacheReadInputTokens":7,"cacheCreationInputTokens":9,"costUSD":0.25}}}),
        ],
    );
    let mut call = assistant_entry(
        "msg_2",
        "2026-11-29T09:50:00.000Z",
        json!([{"type":"tool_use","id":"tu_1","name":"Bash","input":{"command":"cargo test \u{1b}[2J --all\nsecond line"}}]),
        "tool_use",
        (10, 5),
    );
    call["teamName"] = "alpha".into();
    call["agentName"] = "fresh".into();
    let fresh = env.transcript(
        "/tmp",
        "aaaaaaaa-0000-0000-0000-000000000001",
        &[
            json!({"type":"user","teamName":"alpha","agentName":"fresh","timestamp":"2026-11-29T09:49:00.000Z","message":{"role":"user","content":"<teammate-message teammate_id=\"team-lead\">Run the tests</teammate-message>"}}),
            call,
        ],
    );
    let ten_minutes_ago = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_945_800);
    File::options()
        .write(true)
        .open(&fresh)
        .unwrap()
        .set_modified(ten_minutes_ago)
        .unwrap();
    // quiet asks team-lead for permission.
    let mut lead: Value =
        serde_json::from_slice(&fs::read(env.inbox("alpha", "team-lead")).unwrap()).unwrap();
    let req = json!({"type":"permission_request","request_id":"perm-1","agent_id":"quiet","tool_name":"Bash","tool_use_id":"tu_9","description":"rm","input":{"command":"rm -rf x"},"permission_suggestions":[]});
    lead.as_array_mut().unwrap().push(json!({"from":"quiet","text":req.to_string(),"timestamp":"2026-11-29T09:58:00.000Z","read":false}));
    fs::write(
        env.inbox("alpha", "team-lead"),
        serde_json::to_string_pretty(&lead).unwrap(),
    )
    .unwrap();
    let tasks = env.root.join("tasks/alpha");
    fs::write(tasks.join("4.json"), r#"{"id":"4","subject":"d","description":"","status":"pending","blocks":[],"blockedBy":["1"],"owner":"silent"}"#).unwrap();
    (env, fresh)
}

#[test]
fn work_cost_and_waiting_from_transcripts() {
    let (env, fresh) = with_transcripts();
    let out = env.cmd().args(["status", "--json"]).assert().success();
    let v = parse(&out.get_output().stdout);
    let lead = member(&v, "team-lead");
    assert_eq!(
        lead["tokens"],
        json!({"input": 1000, "output": 500, "cache_read": 7, "cache_creation": 9})
    );
    assert_eq!(lead["cost_usd"], 0.25);
    assert_eq!(lead["cost_source"], "claude_code");
    assert_eq!(lead["model"], "claude-opus-5-5");
    assert_eq!(
        lead["activity"],
        json!({"at": "2026-11-29T09:00:01.000Z", "kind": "text", "tool": null, "summary": "Done: 2 issues."})
    );
    assert_eq!(lead["transcripts"].as_array().unwrap().len(), 1);
    let f = member(&v, "fresh");
    assert_eq!(f["cost_source"], "computed");
    // 10/1e6*4 + 5/1e6*20: claude-opus-5-5's prices, summed as Claude Code sums them.
    assert_eq!(f["cost_usd"], 0.00014000000000000001);
    assert_eq!(keys(&f["activity"]), ["at", "kind", "summary", "tool"]);
    assert_eq!(f["activity"]["kind"], "tool_use");
    assert_eq!(f["activity"]["tool"], "Bash");
    // --json keeps the text exact.
    assert_eq!(f["activity"]["summary"], "cargo test \u{1b}[2J --all");
    assert_eq!(f["waiting"], "stalled");
    // A stalled member needs a person (or a rule): one need, saying what to do.
    let stalled: Vec<&Value> = v["needs_human"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["cause"] == "stalled")
        .collect();
    assert_eq!(stalled.len(), 1, "{}", v["needs_human"]);
    assert_eq!(stalled[0]["member"], "fresh");
    assert!(stalled[0]["todo"].as_str().unwrap().contains("--on-stall"));
    assert_eq!(f["transcripts"], json!([fresh.display().to_string()]));
    assert_eq!(member(&v, "quiet")["waiting"], "permission");
    assert_eq!(member(&v, "silent")["waiting"], "blocked");
    assert_eq!(member(&v, "busy")["waiting"], Value::Null);
    assert_eq!(member(&v, "busy")["tokens"], Value::Null);
    assert_eq!(keys(&v["totals"]), ["cost_usd", "tokens"]);
    assert_eq!(v["totals"]["cost_usd"], 0.25 + 0.00014000000000000001);
    assert_eq!(v["totals"]["tokens"]["input"], 1010);
    // A longer stall threshold: not stalled.
    let out = env
        .cmd()
        .args(["status", "--json", "--stall-after", "1h"])
        .assert()
        .success();
    let v = parse(&out.get_output().stdout);
    assert_eq!(member(&v, "fresh")["waiting"], Value::Null);
    assert!(!v["needs_human"].to_string().contains("stalled"));

    // People: the columns, escaped, in 80 columns.
    let out = env
        .cmd()
        .args(["status"])
        .env("COLUMNS", "80")
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("cost:        $0.25 (tokens: 1.0k in, 505 out, 7 cache read, 9 cache write)"),
        "{text}"
    );
    assert!(
        text.contains("NAME       WAITING     COST     CONTEXT  DOING"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("fresh ") && l.contains("stalled"))
        .unwrap();
    assert!(
        row.contains("Bash: cargo test \\e[2J --all (10m ago)"),
        "{row}"
    );
    assert!(!text.contains('\u{1b}'));
    let row = text
        .lines()
        .find(|l| l.starts_with("team-lead ") && l.contains("$0.25"))
        .unwrap();
    assert!(row.contains("text: Done: 2 issues. (59m ago)"), "{row}");
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    // A narrow terminal cuts DOING, keeping its age.
    let out = env
        .cmd()
        .args(["status"])
        .env("COLUMNS", "50")
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let row = text
        .lines()
        .find(|l| l.starts_with("fresh ") && l.contains("stalled"))
        .unwrap();
    assert!(
        row.ends_with("… (10m ago)") && row.chars().count() <= 50,
        "{row}"
    );
}

#[test]
fn the_index_reads_only_what_was_appended() {
    let (env, fresh) = with_transcripts();
    let tokens = |env: &TestEnv| {
        let out = env.cmd().args(["status", "--json"]).assert().success();
        member(&parse(&out.get_output().stdout), "fresh")["tokens"]["input"].clone()
    };
    assert_eq!(tokens(&env), 10);
    let index = env.data_dir().join("transcripts.json");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs::metadata(&index).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let ix: Value = serde_json::from_slice(&fs::read(&index).unwrap()).unwrap();
    let entry = &ix["files"][fresh.display().to_string()]["state"];
    assert_eq!(entry["offset"], fs::metadata(&fresh).unwrap().len());
    // Appended: a half line first (not read yet), then the rest.
    let more = assistant_entry(
        "msg_3",
        "2026-11-29T09:59:00.000Z",
        json!([{"type":"text","text":"ok"}]),
        "end_turn",
        (30, 1),
    );
    let line = format!("{more}\n");
    let mut f = fs::OpenOptions::new().append(true).open(&fresh).unwrap();
    use std::io::Write;
    f.write_all(&line.as_bytes()[..25]).unwrap();
    assert_eq!(tokens(&env), 10);
    f.write_all(&line.as_bytes()[25..]).unwrap();
    assert_eq!(tokens(&env), 40);
    assert_eq!(tokens(&env), 40, "nothing counted twice");
    // A corrupt index counts as none; the transcript itself is never written.
    let before = fs::read(&fresh).unwrap();
    fs::write(&index, "{\"schema_version\":1,\"files\":{").unwrap();
    assert_eq!(tokens(&env), 40);
    // Replaced by a shorter file: read again from the start.
    fs::write(&fresh, format!("{more}\n")).unwrap();
    assert_eq!(tokens(&env), 30);
    assert_ne!(fs::read(&fresh).unwrap(), before);
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
    // Another start in the same form: a reused pid.
    cfg["leadProcess"]["procStart"] = format!("{start}0").into();
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
    env.cmd()
        .args(["status", "--stall-after", "later"])
        .assert()
        .code(2);
}

/// A team folder that cannot be listed (here the inboxes folder replaced by a symlink to a folder
/// outside) leaves the status incomplete: what could be read is shown, the folder is named, and
/// the command exits 1 so a script does not take "no messages" for an answer; the symlink and
/// what it points at stay as they were. `status` of all teams lists the others and exits 1 too.
#[test]
fn a_folder_that_cannot_be_listed_makes_status_fail_after_its_output() {
    let env = fixture();
    let inboxes = env.root.join("teams/alpha/inboxes");
    let outside = env.root.join("outside");
    fs::rename(&inboxes, &outside).unwrap();
    std::os::unix::fs::symlink(&outside, &inboxes).unwrap();
    env.team("beta", &[("carol", None)]);

    let out = env
        .cmd()
        .args(["--team", "alpha", "status", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["team"]["name"], "alpha");
    let stderr = String::from_utf8(out.stderr).unwrap();
    let last = stderr.lines().last().unwrap();
    assert!(
        last.starts_with("error: the status of alpha is incomplete: ") && last.contains("symlink"),
        "{stderr}"
    );
    assert!(fs::symlink_metadata(&inboxes).unwrap().is_symlink());

    let out = env.cmd().args(["status", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = doc["teams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"alpha") && names.contains(&"beta"),
        "{names:?}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("error: a team's status is incomplete: alpha: "),
        "{stderr}"
    );
}

/// Why a member is not moving, from what Claude Code writes on API failures
/// (docs/research/claude-code-behaviour.md §1): a 429 being retried (headless), a 529 whose
/// retries ran out, a request sent again and again (interactive), a request with no answer.
#[test]
fn api_failures_and_silence_say_why_a_member_waits() {
    let env = TestEnv::new();
    crate::common::led_team(&env);
    // carol and dave join as members with a cwd, as led_team's members have.
    let cfg_path = env.root.join("teams/t/config.json");
    let mut cfg: Value = serde_json::from_slice(&fs::read(&cfg_path).unwrap()).unwrap();
    let alice = cfg["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "alice")
        .unwrap()
        .clone();
    for name in ["carol", "dave"] {
        let mut m = alice.clone();
        m["name"] = name.into();
        m["agentId"] = format!("{name}@t").into();
        cfg["members"].as_array_mut().unwrap().push(m);
    }
    fs::write(&cfg_path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();
    let request = |digest: &str, at: &str| json!({"type":"api-request","timestamp":at,"version":"2.1.332","requestDigest":digest});
    env.transcript_line_as("t", "alice", request("a1", "2026-11-29T10:00:00.000Z"));
    env.transcript_line_as(
        "t",
        "alice",
        json!({"type":"system","subtype":"api_error","level":"error",
            "error":{"status":429,"formatted":"429 Number of request tokens has exceeded your per-minute rate limit \u{1b}[31m",
                "rateLimits":{"rateLimitType":"five_hour","resetsAt":1764414000}},
            "retryInMs":3406,"retryAttempt":3,"maxRetries":10,"timestamp":"2026-11-29T10:00:10.000Z"}),
    );
    env.transcript_line_as("t", "bob", request("b1", "2026-11-29T10:00:00.000Z"));
    env.transcript_line_as(
        "t",
        "bob",
        json!({"type":"assistant","timestamp":"2026-11-29T10:00:05.000Z",
            "message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 Overloaded."}],
                "stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0}},
            "error":"server_error","isApiErrorMessage":true,"apiErrorStatus":529}),
    );
    for at in ["2026-11-29T10:00:00.000Z", "2026-11-29T10:00:01.000Z"] {
        env.transcript_line_as("t", "carol", request("c1", at));
    }
    env.transcript_line_as("t", "dave", request("d1", "2026-11-29T09:50:00.000Z"));
    let now = "2026-11-29T10:00:12.000Z";
    let out = env
        .cmd()
        .args(["status", "--json"])
        .env("TEAMCTL_NOW", now)
        .assert()
        .success();
    let v = parse(&out.get_output().stdout);
    let alice = member(&v, "alice");
    assert_eq!(alice["waiting"], "rate_limited");
    assert_eq!(
        alice["waiting_detail"],
        json!({"status": 429, "attempt": 3, "max_retries": 10,
               "retry_at": "2026-11-29T10:00:13.406Z", "resets_at": "2025-11-29T11:00:00.000Z",
               "exhausted": false,
               "message": "429 Number of request tokens has exceeded your per-minute rate limit \u{1b}[31m",
               "since": "2026-11-29T10:00:00.000Z"})
    );
    let bob = member(&v, "bob");
    assert_eq!(bob["waiting"], "overloaded");
    assert_eq!(bob["waiting_detail"]["exhausted"], true);
    assert_eq!(bob["waiting_detail"]["status"], 529);
    let carol = member(&v, "carol");
    assert_eq!(carol["waiting"], "api_error");
    assert_eq!(carol["waiting_detail"]["status"], Value::Null);
    assert_eq!(carol["waiting_detail"]["attempt"], 1);
    assert_eq!(member(&v, "dave")["waiting"], "no_response");
    // A longer --no-response-after: dave is only quiet.
    let out = env
        .cmd()
        .args(["status", "--json", "--no-response-after", "1h"])
        .env("TEAMCTL_NOW", now)
        .assert()
        .success();
    assert_ne!(
        member(&parse(&out.get_output().stdout), "dave")["waiting"],
        "no_response"
    );
    // People: the reason in the table, the detail on a line of its own, escaped.
    let out = env
        .cmd()
        .args(["status"])
        .env("TEAMCTL_NOW", now)
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains(
            "alice: rate_limited: 429 Number of request tokens has exceeded your per-minute \
             rate limit \\e[31m · attempt 3 of 10 · next try in 1s"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "bob: overloaded: API Error: 529 Overloaded. · out of retries · since 7s ago"
        ),
        "{text}"
    );
    assert!(!text.contains('\u{1b}'), "{text}");
}
