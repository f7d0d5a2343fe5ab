//! `teamctl doctor`: one line per finding, the JSON contract, exit 1 on a failure, and that it
//! changes nothing.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{Ran, TestEnv, json, keys};

/// A PATH holding stub `claude` and `tmux` (or only the ones named).
fn stub_path(env: &TestEnv, tools: &[&str]) -> PathBuf {
    let dir = env.dir.path().join("bin");
    fs::create_dir_all(&dir).unwrap();
    for tool in tools {
        let out = match *tool {
            "claude" => "2.1.332 (Claude Code)",
            _ => "tmux 3.4",
        };
        let p = dir.join(tool);
        fs::write(&p, format!("#!/bin/sh\necho '{out}'\n")).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    }
    dir
}

fn doctor(env: &TestEnv, tools: &[&str]) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.arg("doctor")
        .env("PATH", stub_path(env, tools))
        .env("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS", "1")
        .env_remove("CLAUDE_CODE_TEAMMATE_COMMAND")
        .env("TEAMCTL_FROM", "researcher");
    cmd
}

fn checks(out: &[u8]) -> Vec<Value> {
    json(out)["checks"].as_array().unwrap().clone()
}

fn find<'a>(checks: &'a [Value], check: &str, level: &str) -> Vec<&'a Value> {
    checks
        .iter()
        .filter(|c| c["check"] == check && c["level"] == level)
        .collect()
}

#[test]
fn healthy_team_human() {
    let env = TestEnv::example();
    doctor(&env, &["claude", "tmux"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "OK    config dir {} (from $CLAUDE_CONFIG_DIR)",
            env.root.display()
        )))
        .stdout(predicate::str::contains(
            "OK    claude 2.1.332 (Claude Code) at ",
        ))
        .stdout(predicate::str::contains(
            "OK    agent teams enabled (CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 in the environment)",
        ))
        .stdout(predicate::str::contains("OK    tmux 3.4 at "))
        .stdout(predicate::str::contains(
            "OK    team 'demo-team': current inbox format",
        ))
        .stdout(predicate::str::contains(
            "OK    you are 'researcher' (from TEAMCTL_FROM), a member of team 'demo-team'",
        ))
        .stdout(predicate::str::contains("FAIL").not())
        .stdout(predicate::str::contains(", 0 failure(s)"));
}

#[test]
fn json_keys_and_summary() {
    let env = TestEnv::example();
    let out = doctor(&env, &["claude", "tmux"])
        .arg("--json")
        .assert()
        .success();
    let v = out.stdout_json();
    assert_eq!(keys(&v), ["checks", "fixed", "schema_version", "summary"]);
    assert_eq!(v["fixed"], serde_json::json!([]));
    assert_eq!(v["schema_version"], 1);
    assert_eq!(keys(&v["summary"]), ["fail", "ok", "warn"]);
    let checks = v["checks"].as_array().unwrap();
    for c in checks {
        assert_eq!(
            keys(c),
            [
                "check", "details", "fix", "level", "message", "path", "team"
            ]
        );
        // A problem always says what to do; a pass never does.
        assert_eq!(c["fix"].is_null(), c["level"] == "ok", "{c}");
    }
    let n = |l: &str| checks.iter().filter(|c| c["level"] == l).count();
    assert_eq!(v["summary"]["ok"], n("ok"));
    assert_eq!(v["summary"]["warn"], n("warn"));
    assert_eq!(v["summary"]["fail"], 0);
    let claude = find(checks, "claude", "ok");
    assert_eq!(
        claude[0]["path"],
        env.dir.path().join("bin/claude").display().to_string()
    );
    // The example's tester never got a message.
    let missing = find(checks, "member_inbox", "warn");
    assert_eq!(missing.len(), 1);
    assert!(missing[0]["message"].as_str().unwrap().contains("'tester'"));
}

#[test]
fn agent_teams_from_settings_json_missing_tools_and_identity() {
    let env = TestEnv::example();
    fs::write(
        env.root.join("settings.json"),
        r#"{"env":{"CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS":"true"}}"#,
    )
    .unwrap();
    let out = doctor(&env, &[])
        .env_remove("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS")
        .env("TEAMCTL_FROM", "user")
        .arg("--json")
        .assert()
        .success();
    let c = checks(&out.stdout_bytes());
    let teams = find(&c, "agent_teams", "ok");
    assert!(
        teams[0]["message"]
            .as_str()
            .unwrap()
            .contains("settings.json")
    );
    assert_eq!(find(&c, "claude", "warn").len(), 1);
    assert_eq!(find(&c, "tmux", "warn").len(), 1);
    let id = find(&c, "identity", "warn");
    assert!(id[0]["message"].as_str().unwrap().contains("reserves"));

    fs::remove_file(env.root.join("settings.json")).unwrap();
    let out = doctor(&env, &[])
        .env("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS", "0")
        .env("TEAMCTL_FROM", "outsider")
        .arg("--json")
        .assert()
        .success();
    let c = checks(&out.stdout_bytes());
    assert_eq!(find(&c, "agent_teams", "warn").len(), 1);
    let id = find(&c, "identity", "warn");
    assert!(id[0]["message"].as_str().unwrap().contains("not a member"));
}

/// A missing `claude` is one short line, with the places searched listed under it (one per
/// line in human output, `details` in JSON); the identity says where it came from.
#[test]
fn claude_not_found_lists_places_and_identity_says_its_source() {
    let env = TestEnv::example();
    let out = doctor(&env, &["tmux"])
        .env_remove("TEAMCTL_FROM")
        .assert()
        .success();
    let text = out.stdout_text();
    let warn_line = text
        .lines()
        .find(|l| l.starts_with("WARN  could not find the claude binary"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(warn_line.len() < 120, "{warn_line}");
    // The places searched: the detail lines right under the claude warning.
    let places: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("WARN  could not find the claude binary"))
        .skip(1)
        .skip_while(|l| !l.starts_with("      - "))
        .take_while(|l| l.starts_with("      - "))
        .collect();
    assert!(places.len() >= 8, "{text}");
    assert!(
        places.iter().any(|l| l.ends_with(&format!(
            "{} (path)",
            env.dir.path().join("bin/claude").display()
        ))),
        "{places:?}"
    );
    assert!(places.iter().all(|l| l.len() < 160), "{places:?}");
    assert!(
        text.contains("you are 'user' (the default; TEAMCTL_FROM is not set)"),
        "{text}"
    );

    let out = doctor(&env, &["tmux"])
        .env_remove("TEAMCTL_FROM")
        .arg("--json")
        .assert()
        .success();
    let c = checks(&out.stdout_bytes());
    let claude = find(&c, "claude", "warn");
    assert!(!claude[0]["message"].as_str().unwrap().contains('\n'));
    assert_eq!(claude[0]["details"].as_array().unwrap().len(), places.len());
    assert_eq!(find(&c, "tmux", "ok")[0]["details"], serde_json::json!([]));
}

/// In a team teamctl leads, the default identity is its lead, and doctor says so.
#[test]
fn identity_in_a_team_teamctl_leads_is_the_lead_by_default() {
    let env = TestEnv::new();
    env.cmd()
        .args([
            "create",
            "led",
            "--member",
            "alice:brief",
            "--launch",
            "none",
        ])
        .assert()
        .success();
    let out = doctor(&env, &["claude", "tmux"])
        .env_remove("TEAMCTL_FROM")
        .assert()
        .success();
    let text = out.stdout_text();
    assert!(
        text.contains(
            "OK    you are 'team-lead' (the default in a team teamctl leads; TEAMCTL_FROM is not \
             set), a member of team 'led'"
        ),
        "{text}"
    );
}

/// Every file under `root`: bytes (or `dir`) and mtime.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (Option<Vec<u8>>, SystemTime)> {
    let mut map = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                stack.push(p.clone());
                map.insert(p, (None, meta.modified().unwrap()));
            } else {
                map.insert(
                    p.clone(),
                    (Some(fs::read(&p).unwrap()), meta.modified().unwrap()),
                );
            }
        }
    }
    map
}

#[test]
fn problems_fail_with_what_to_do_and_nothing_changes() {
    let env = TestEnv::example();
    let inboxes = env.root.join("teams/demo-team/inboxes");
    let tasks = env.root.join("tasks/demo-team");
    fs::write(inboxes.join("tester.json"), "[{\"from\": \"a\"").unwrap();
    fs::write(
        inboxes.join("team-lead.json"),
        r#"[{"from":"a","text":5,"timestamp":"2026-11-29T10:00:00.000Z"}]"#,
    )
    .unwrap();
    fs::write(
        tasks.join("9.json"),
        r#"{"id":"9","subject":"x","status":"done"}"#,
    )
    .unwrap();
    fs::write(inboxes.join("researcher.json.lock"), "").unwrap();
    let stale = tasks.join("1.json.lock");
    fs::create_dir(&stale).unwrap();
    File::open(&stale)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(60))
        .unwrap();
    let temp = inboxes.join("researcher.json.tmp.0a1b2c3d");
    fs::write(&temp, "[").unwrap();
    File::options()
        .write(true)
        .open(&temp)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(120))
        .unwrap();

    let before = snapshot(&env.root);
    let out = doctor(&env, &["claude", "tmux"])
        .arg("--json")
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "error: doctor found 4 failing check(s)",
        ));
    let after = snapshot(&env.root);
    let changed: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|k| before.get(*k) != after.get(*k))
        .collect();
    assert!(changed.is_empty(), "doctor changed {changed:?}");

    let c = checks(&out.stdout_bytes());
    let fails: Vec<(&str, &str)> = c
        .iter()
        .filter(|c| c["level"] == "fail")
        .map(|c| {
            (
                c["check"].as_str().unwrap(),
                c["path"].as_str().unwrap().rsplit('/').next().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        fails,
        [
            ("inbox", "team-lead.json"),
            ("inbox", "tester.json"),
            ("task", "9.json"),
            ("lock", "researcher.json.lock"),
        ]
    );
    let schema = find(&c, "inbox", "fail")[0]["message"].as_str().unwrap();
    assert!(schema.contains("entry 0: 'text'"), "{schema}");
    let lock = find(&c, "lock", "warn");
    assert!(lock[0]["message"].as_str().unwrap().contains("stale lock"));
    let tmp = find(&c, "temp_file", "warn");
    assert!(
        tmp[0]["fix"]
            .as_str()
            .unwrap()
            .contains("next teamctl write")
    );

    // The same in human form: a FAIL line and its fix.
    doctor(&env, &["claude", "tmux"])
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("FAIL  ")
                .and(predicate::str::contains("is a file, not a lock directory")),
        )
        .stdout(predicate::str::contains(
            "      fix: remove it once no program uses it",
        ));
}

#[test]
fn missing_config_dir_fails() {
    let env = TestEnv::new();
    let gone = env.dir.path().join("nowhere");
    doctor(&env, &["claude", "tmux"])
        .args(["--claude-dir", gone.to_str().unwrap()])
        .assert()
        .code(1)
        .stdout(predicate::str::contains(format!(
            "FAIL  config dir {} not found (from --claude-dir)",
            gone.display()
        )))
        .stderr(predicate::str::starts_with("error: "));
}

#[test]
fn no_teams_is_a_warning_and_an_unknown_team_a_failure() {
    let env = TestEnv::new();
    doctor(&env, &["claude", "tmux"])
        .assert()
        .success()
        .stdout(predicate::str::contains("WARN  no teams found"));
    doctor(&env, &["claude", "tmux"])
        .args(["--team", "ghost"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("FAIL  team 'ghost' not found"));
}

#[test]
fn usage_errors() {
    let env = TestEnv::example();
    doctor(&env, &[]).arg("--bogus").assert().code(2);
    doctor(&env, &[])
        .args(["--team", "Bad Name"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("error: invalid team name"));
}

/// A FIFO or a folder where an inbox file belongs is named (a failure), not passed over as an
/// inbox nobody has written yet; doctor opens neither, and ends.
#[test]
fn a_fifo_or_folder_in_an_inboxs_place_is_named() {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", Some("blue")), ("bob", Some("green"))]);
    crate::common::mkfifo(env.inbox("alpha", "alice"));
    fs::create_dir_all(env.inbox("alpha", "bob")).unwrap();
    let out = env
        .cmd()
        .args(["doctor", "--json"])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v = json(&out.stdout);
    let failed: Vec<String> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "inbox" && c["level"] == "fail")
        .map(|c| c["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        failed,
        [
            "inbox of 'alice' is a FIFO (named pipe), not a file: no message can be delivered \
             to 'alice' (teamctl leaves it alone)",
            "inbox of 'bob' is a folder, not a file: no message can be delivered to 'bob' \
             (teamctl leaves it alone)"
        ],
        "{v}"
    );
    assert!(
        !v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["check"] == "member_inbox"
                && c["message"].as_str().unwrap().contains("'alice'")
                || c["message"].as_str().unwrap().contains("'bob' of")),
        "{v}"
    );
}

/// `doctor --fix` moves only an inbox certainly meant for a member: a two-letter name two edits
/// from another (`ci` for `qa`) stays where it is, and is named.
#[test]
fn fix_never_takes_a_short_name_for_certain() {
    let env = TestEnv::new();
    env.team(
        "alpha",
        &[("qa", Some("blue")), ("reviewer", Some("green"))],
    );
    let msg = r#"[{"from":"team-lead","text":"deploy now","timestamp":"2026-11-29T10:00:00.000Z","read":false}]"#;
    fs::write(env.inbox("alpha", "ci"), msg).unwrap();
    fs::write(env.inbox("alpha", "revewer"), msg).unwrap();
    env.cmd().args(["doctor", "--fix"]).output().unwrap();
    assert_eq!(fs::read_to_string(env.inbox("alpha", "ci")).unwrap(), msg);
    assert!(!env.inbox("alpha", "qa").exists());
    assert!(
        fs::read_to_string(env.inbox("alpha", "reviewer"))
            .unwrap()
            .contains("deploy now")
    );
}

/// The `lead_session` check of team t: its one finding.
fn lead_session(env: &TestEnv) -> Value {
    let out = doctor(env, &["claude", "tmux"])
        .args(["--team", "t", "--json"])
        .output()
        .unwrap();
    let found: Vec<Value> = checks(&out.stdout)
        .into_iter()
        .filter(|c| c["check"] == "lead_session")
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found[0].clone()
}

/// A team whose `leadSessionId` names a session that is not its lead's newest (after `claude
/// --resume` or /clear: anthropics/claude-code#90332, #86174) is a warning saying which one is,
/// and how to fix it: by the running lead's `sessions/<pid>.json`, else by the newest
/// transcript in the lead's folder holding a teammate's message (a person's other sessions
/// there hold none).
#[test]
fn a_lead_session_id_that_is_not_the_leads_newest_session_is_named() {
    let env = TestEnv::new();
    env.team("t", &[("worker", Some("blue"))]);
    let named = "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d";
    let from_worker = |t: &str| {
        serde_json::json!({"type":"user","timestamp":t,"message":{"role":"user",
            "content":"<teammate-message teammate_id=\"worker\">\nREPORT\n</teammate-message>"}})
    };
    let old = env.transcript("/tmp", named, &[from_worker("2026-11-29T09:00:00.000Z")]);
    let older = SystemTime::now() - Duration::from_secs(600);
    File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(older)
        .unwrap();
    assert_eq!(lead_session(&env)["level"], "ok");
    // A person's own session in the same folder, newer: not the lead's.
    let own = serde_json::json!({"type":"user","timestamp":"2026-11-29T09:30:00.000Z",
        "message":{"role":"user","content":"fix the build"}});
    env.transcript("/tmp", "0e4d1c2b-0000-4000-8000-000000000001", &[own]);
    assert_eq!(lead_session(&env)["level"], "ok");
    // The lead resumed into a new session, where its teammate's messages now land.
    let newer = "5a6b7c8d-0000-4000-8000-000000000002";
    env.transcript("/tmp", newer, &[from_worker("2026-11-29T09:40:00.000Z")]);
    let c = lead_session(&env);
    assert_eq!(c["level"], "warn", "{c}");
    let message = c["message"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "leadSessionId names session {named}, but its lead's newest session is {newer}"
        )) && message.contains("anthropics/claude-code#90332"),
        "{message}"
    );
    assert!(
        c["fix"]
            .as_str()
            .unwrap()
            .contains(&format!("to \"{newer}\"")),
        "{c}"
    );
    // The running lead's own record of its session wins.
    let running = "9c8b7a6d-0000-4000-8000-000000000003";
    env.edit_config("t", |cfg| {
        cfg["leadProcess"] = serde_json::json!({"pid": std::process::id()});
    });
    fs::create_dir_all(env.root.join("sessions")).unwrap();
    fs::write(
        env.root
            .join(format!("sessions/{}.json", std::process::id())),
        serde_json::json!({"pid": std::process::id(), "sessionId": running}).to_string(),
    )
    .unwrap();
    let c = lead_session(&env);
    assert!(
        c["message"]
            .as_str()
            .unwrap()
            .contains(&format!("newest session is {running} (its running process")),
        "{c}"
    );
}
