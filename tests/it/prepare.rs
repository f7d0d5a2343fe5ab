//! `teamctl prepare`: the settings written (and nothing else), idempotence, --dry-run, --json,
//! a file that does not parse, a lock held by a proper-lockfile peer (Claude Code's own config
//! writer) and concurrent edits by it, and `run` finding no dialog afterwards. The real client
//! is in real_claude.rs.

use std::fs;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::{Value, json};

use teamctl::store::format::render;

use crate::common::{Ran, TestEnv, cwd, keys, node_peer, peer, script, tmux_env};

const KEY: &str = "sk-ant-api03-secret-0123456789abcdefghij";
const TAIL: &str = "0123456789abcdefghij";

fn prepare(env: &TestEnv) -> assert_cmd::Command {
    let mut c = env.cmd();
    c.env("ANTHROPIC_API_KEY", KEY)
        .env("IS_SANDBOX", "1")
        .arg("prepare");
    c
}

fn work(env: &TestEnv, name: &str) -> PathBuf {
    let d = env.dir.path().join(name);
    fs::create_dir_all(&d).unwrap();
    fs::canonicalize(d).unwrap()
}

fn read(p: &Path) -> Value {
    serde_json::from_slice(&fs::read(p).unwrap()).unwrap()
}

#[test]
fn an_empty_config_dir_gets_the_settings_once() {
    let env = TestEnv::new();
    let w = work(&env, "work");
    let ws = w.to_str().unwrap();
    let cj = env.root.join(".claude.json");
    prepare(&env)
        .args(["--cwd", ws, "--skip-permissions"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "onboarding: set hasCompletedOnboarding = true in",
        ))
        .stdout(predicate::str::contains(
            "api_key: added the API key in ANTHROPIC_API_KEY to customApiKeyResponses.approved",
        ))
        .stdout(predicate::str::contains(format!(
            "trust: set projects[\"{ws}\"].hasTrustDialogAccepted = true"
        )))
        .stdout(predicate::str::contains(
            "bypass: set skipDangerousModePermissionPrompt = true in",
        ))
        .stdout(predicate::str::contains("prepared: 4 change(s) in 2 file(s)"))
        // The key is a secret: never printed, not even the part that is stored.
        .stdout(predicate::str::contains(TAIL).not())
        .stderr(predicate::str::contains(TAIL).not());
    assert_eq!(
        read(&cj),
        json!({
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": [TAIL], "rejected": []},
            "projects": {ws: {"hasTrustDialogAccepted": true}},
        })
    );
    // Claude Code creates .claude.json 0600.
    assert_eq!(
        fs::metadata(&cj).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        fs::read_to_string(env.root.join("settings.json")).unwrap(),
        "{\n  \"skipDangerousModePermissionPrompt\": true\n}\n"
    );
    let bytes = fs::read(&cj).unwrap();
    prepare(&env)
        .args(["--cwd", ws, "--dangerously-skip-permissions"])
        .assert()
        .success()
        .stdout("nothing to change: the settings are already in place\n");
    assert_eq!(fs::read(&cj).unwrap(), bytes);
    assert!(!env.root.join("backups").exists(), "nothing replaced");
}

#[test]
fn json_lists_the_changes_and_dry_run_writes_nothing() {
    let env = TestEnv::new();
    let w = work(&env, "work");
    let ws = w.to_str().unwrap();
    let cj = env.root.join(".claude.json");
    let out = prepare(&env)
        .args(["--cwd", ws, "--dry-run", "--json"])
        .assert()
        .success()
        .stdout_json();
    assert_eq!(
        keys(&out),
        [
            "changed",
            "changes",
            "dry_run",
            "files",
            "notes",
            "schema_version"
        ]
    );
    assert_eq!(out["schema_version"], 1);
    assert_eq!(out["dry_run"], true);
    assert_eq!(out["changed"], true);
    let changes = out["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 3);
    for c in changes {
        assert_eq!(keys(c), ["dialog", "file", "key", "value"]);
        assert_eq!(c["file"], cj.to_str().unwrap());
    }
    assert_eq!(changes[0]["dialog"], "onboarding");
    assert_eq!(changes[0]["key"], json!(["hasCompletedOnboarding"]));
    assert_eq!(changes[0]["value"], true);
    assert_eq!(changes[1]["dialog"], "api_key");
    assert_eq!(
        changes[1]["key"],
        json!(["customApiKeyResponses", "approved"])
    );
    assert_eq!(changes[1]["value"], Value::Null);
    assert_eq!(changes[2]["dialog"], "trust");
    assert_eq!(
        changes[2]["key"],
        json!(["projects", ws, "hasTrustDialogAccepted"])
    );
    assert_eq!(
        out["files"],
        json!([{"path": cj, "existed": false, "action": "unchanged", "reformatted": false,
                "backup": null, "writes": 0}])
    );
    assert_eq!(out["notes"], json!([]));
    assert!(!cj.exists(), "a dry run writes nothing");

    let out = prepare(&env)
        .args(["--cwd", ws, "--json"])
        .assert()
        .success()
        .stdout_json();
    assert_eq!(out["dry_run"], false);
    assert_eq!(out["files"][0]["action"], "created");
    assert_eq!(out["files"][0]["writes"], 1);
    let out = prepare(&env)
        .args(["--cwd", ws, "--json"])
        .assert()
        .success()
        .stdout_json();
    assert_eq!(out["changed"], false);
    assert_eq!(out["changes"], json!([]));
    assert_eq!(out["files"][0]["action"], "unchanged");
}

/// A file Claude Code wrote keeps every byte but the settings added, its mode and its key
/// order; a backup is made as Claude Code makes them.
#[test]
fn only_the_settings_change() {
    let env = TestEnv::new();
    let w = work(&env, "repo");
    let ws = w.to_str().unwrap();
    let cj = env.root.join(".claude.json");
    // As Claude Code writes it: JSON.stringify(…, null, 2), keys in its order, odd numbers.
    let before = format!(
        "{{\n  \"numStartups\": 12,\n  \"customApiKeyResponses\": {{\n    \"approved\": [\n      \"other-key-tail-12345\"\n    ],\n    \"rejected\": [\n      \"{TAIL}\"\n    ]\n  }},\n  \"tipsHistory\": {{\n    \"x\": 1e+21\n  }},\n  \"hasCompletedOnboarding\": true,\n  \"projects\": {{\n    \"{ws}\": {{\n      \"allowedTools\": [],\n      \"hasTrustDialogAccepted\": false,\n      \"lastCost\": 0.12500\n    }}\n  }},\n  \"userID\": \"\\u001b[31m\"\n}}"
    );
    fs::write(&cj, &before).unwrap();
    fs::set_permissions(&cj, fs::Permissions::from_mode(0o640)).unwrap();
    let settings = env.root.join("settings.json");
    fs::write(&settings, "{\n  \"model\": \"opus\",\n  \"env\": {}\n}\n").unwrap();
    prepare(&env)
        .args(["--cwd", ws, "--skip-permissions"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "prepared: 3 change(s) in 2 file(s) (backup: ",
        ));
    let want = before
        .replace(
            "\"other-key-tail-12345\"\n",
            &format!("\"other-key-tail-12345\",\n      \"{TAIL}\"\n"),
        )
        .replace(
            "\"hasTrustDialogAccepted\": false",
            "\"hasTrustDialogAccepted\": true",
        );
    assert_eq!(fs::read_to_string(&cj).unwrap(), want);
    assert_eq!(
        fs::metadata(&cj).unwrap().permissions().mode() & 0o777,
        0o640
    );
    assert_eq!(
        fs::read_to_string(&settings).unwrap(),
        "{\n  \"model\": \"opus\",\n  \"env\": {},\n  \"skipDangerousModePermissionPrompt\": true\n}\n"
    );
    let backups: Vec<PathBuf> = fs::read_dir(env.root.join("backups"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(backups.len(), 1);
    assert!(
        backups[0]
            .file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with(".claude.json.backup.")
    );
    assert_eq!(fs::read_to_string(&backups[0]).unwrap(), before);
}

#[test]
fn a_file_that_does_not_parse_is_refused_and_left_alone() {
    let env = TestEnv::new();
    let w = work(&env, "work");
    let cj = env.root.join(".claude.json");
    for bad in ["{\"hasCompletedOnboarding\": tru", "[]", ""] {
        fs::write(&cj, bad).unwrap();
        prepare(&env)
            .args(["--cwd", w.to_str().unwrap()])
            .assert()
            .code(1)
            .stderr(predicate::str::starts_with("error: "))
            .stderr(predicate::str::contains("left unchanged"));
        assert_eq!(fs::read_to_string(&cj).unwrap(), bad);
    }
    // A broken settings.json, or a FIFO there, is refused too, before .claude.json is written:
    // exit 1 means nothing was written.
    fs::write(&cj, "{}").unwrap();
    let settings = env.root.join("settings.json");
    fs::write(&settings, "{,}").unwrap();
    prepare(&env)
        .args(["--skip-permissions", "--cwd", w.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("settings.json is not valid JSON"));
    assert_eq!(fs::read_to_string(&settings).unwrap(), "{,}");
    assert_eq!(fs::read_to_string(&cj).unwrap(), "{}");
    fs::remove_file(&settings).unwrap();
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &settings,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    prepare(&env)
        .timeout(std::time::Duration::from_secs(20))
        .args(["--skip-permissions", "--cwd", w.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("is a FIFO"));
    assert_eq!(fs::read_to_string(&cj).unwrap(), "{}");
    assert!(!env.root.join("backups").exists());
    fs::remove_file(&settings).unwrap();
    // A --cwd that is not a folder: nothing is written at all.
    fs::remove_file(&cj).unwrap();
    prepare(&env)
        .args(["--cwd", "no/such/dir"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "error: could not trust no/such/dir: not a directory",
        ));
    assert!(!cj.exists());
}

#[test]
fn usage_errors() {
    let env = TestEnv::new();
    prepare(&env).arg("--cwd").assert().code(2);
    prepare(&env).arg("--bogus").assert().code(2);
}

#[test]
fn notes_say_what_was_left_alone() {
    let env = TestEnv::new();
    env.cmd()
        .env_remove("ANTHROPIC_API_KEY")
        .args(["prepare", "--json"])
        .assert()
        .success()
        .stdout_json()["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .for_each(|n| {
            assert!(
                n.contains("ANTHROPIC_API_KEY") || n.contains("--cwd"),
                "{n}"
            )
        });
    // Without a chosen config dir, .claude.json is the one in the home directory.
    let home = env.dir.path().join("home");
    env.cmd()
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("ANTHROPIC_API_KEY")
        .arg("prepare")
        .assert()
        .success();
    assert_eq!(
        read(&home.join(".claude.json")),
        json!({"hasCompletedOnboarding": true})
    );
}

/// Claude Code's config lock held by a proper-lockfile peer: prepare waits for it (politely:
/// the protocol's backoff) and then writes; held past --lock-timeout it writes nothing (exit 3).
#[test]
fn a_held_config_lock_is_waited_for() {
    let Some(script) = node_peer() else { return };
    let env = TestEnv::new();
    let w = work(&env, "work");
    let cj = env.root.join(".claude.json");
    fs::write(&cj, "{\n  \"userID\": \"u\"\n}").unwrap();
    let hold = |ms: &str| {
        let mut child = peer(&script, &["hold", cj.to_str().unwrap(), "--ms", ms])
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(first.contains("\"locked\""), "{first}");
        child
    };
    let mut holder = hold("5000");
    prepare(&env)
        .args(["--cwd", w.to_str().unwrap(), "--lock-timeout", "300ms"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(".claude.json.lock"));
    assert_eq!(
        fs::read_to_string(&cj).unwrap(),
        "{\n  \"userID\": \"u\"\n}"
    );
    holder.kill().unwrap();
    holder.wait().unwrap();
    fs::remove_dir(env.root.join(".claude.json.lock")).unwrap();

    let holder = hold("400");
    prepare(&env)
        .args(["--cwd", w.to_str().unwrap()])
        .assert()
        .success();
    assert!(holder.wait_with_output().unwrap().status.success());
    let v = read(&cj);
    assert_eq!(v["userID"], "u");
    assert_eq!(v["hasCompletedOnboarding"], true);
    assert!(!env.root.join(".claude.json.lock").exists());
}

/// A peer editing .claude.json as Claude Code 2.1.332 does (its lock, its retries, a re-read
/// under the lock, a slow write), while prepare runs again and again for other folders: every
/// edit of both survives.
#[test]
fn claude_codes_concurrent_config_edits_and_prepare_lose_nothing() {
    let Some(script) = node_peer() else { return };
    let env = TestEnv::new();
    let cj = env.root.join(".claude.json");
    fs::write(&cj, "{}").unwrap();
    let editor = peer(
        &script,
        &[
            "config-edit",
            cj.to_str().unwrap(),
            "--count",
            "15",
            "--hold",
            "40",
        ],
    )
    .spawn()
    .unwrap();
    let dirs: Vec<PathBuf> = (0..8).map(|i| work(&env, &format!("w{i}"))).collect();
    for d in &dirs {
        prepare(&env)
            .args(["--cwd", d.to_str().unwrap(), "--lock-timeout", "30s"])
            .assert()
            .success();
    }
    let out = editor.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the peer gave up: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = read(&cj);
    assert_eq!(v["peerEdits"], 15, "{v}");
    for d in &dirs {
        assert_eq!(
            v["projects"][d.to_str().unwrap()]["hasTrustDialogAccepted"],
            true,
            "{v}"
        );
    }
    assert_eq!(v["customApiKeyResponses"]["approved"], json!([TAIL]));
}

/// What `run` names as blocking is exactly what `prepare` settles: after the command its error
/// suggests, the lead is started.
#[test]
fn run_starts_the_lead_after_the_prepare_it_suggests() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let lead = script(
        &env,
        "stub-lead",
        "[ \"$1\" = --version ] && { echo 2.1.332; exit 0; }\necho ran > \"$CLAUDE_CONFIG_DIR/ran\"",
    );
    let run = |env: &TestEnv| {
        let mut c = env.cmd();
        c.env("TEAMCTL_CLAUDE_BIN", &lead)
            .env("ANTHROPIC_API_KEY", KEY)
            .env("IS_SANDBOX", "1")
            .args(["--json", "run", "hello", "--dangerously-skip-permissions"]);
        c
    };
    let out = run(&env).assert().code(1).stdout_json();
    let reason = out["reason"].as_str().unwrap();
    let suggested = format!("teamctl prepare --cwd {} --skip-permissions", cwd(&env));
    assert!(reason.contains(&suggested), "{reason}");
    prepare(&env)
        .args(["--cwd", &cwd(&env), "--skip-permissions"])
        .assert()
        .success();
    // The stub lead runs and exits at once: a failure, but not a dialog.
    let out = run(&env).assert().code(1).stdout_json();
    assert_eq!(out["dialog"], Value::Null, "{out}");
    assert!(env.root.join("ran").exists());
}

/// `doctor` names the dialogs an unattended session would stop at, and `prepare` as the fix.
#[test]
fn doctor_points_to_prepare() {
    let env = TestEnv::new();
    let check = |env: &TestEnv| -> Value {
        let out = env
            .cmd()
            .env("ANTHROPIC_API_KEY", KEY)
            .args(["doctor", "--json"])
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["check"] == "start_up_dialogs")
            .cloned()
            .expect("a start_up_dialogs check")
    };
    let c = check(&env);
    assert_eq!(c["level"], "warn", "{c}");
    assert!(
        c["fix"]
            .as_str()
            .unwrap()
            .contains(&format!("teamctl prepare --cwd {}", cwd(&env))),
        "{c}"
    );
    assert!(c["message"].as_str().unwrap().contains("onboarding"), "{c}");
    prepare(&env).args(["--cwd", &cwd(&env)]).assert().success();
    assert_eq!(check(&env)["level"], "ok");
}

/// A writer that answers the held lock as Claude Code 2.1.332 was seen to at start-up (strace):
/// it reads the file while prepare holds the lock and writes its change from that copy, without
/// the lock, after prepare's write landed, dropping prepare's setting. prepare sees the file
/// change, finds its setting gone and writes it again; both changes stay.
#[test]
fn a_setting_dropped_by_an_unlocked_write_is_written_again() {
    let Some(script) = node_peer() else { return };
    let env = TestEnv::new();
    let w = work(&env, "work");
    let cj = env.root.join(".claude.json");
    fs::write(&cj, "{\n  \"hasCompletedOnboarding\": true\n}").unwrap();
    let mut peer = peer(
        &script,
        &[
            "config-edit",
            cj.to_str().unwrap(),
            "--count",
            "1",
            "--when-held",
            "1",
            "--fallback-ms",
            "150",
        ],
    )
    .spawn()
    .unwrap();
    let mut stdout = BufReader::new(peer.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains("\"waiting\""), "{first}");
    // Hold the lock long enough for the peer to see it held and read the file meanwhile.
    let out = prepare(&env)
        .env("TEAMCTL_TEST_FAULTS", "after_lock=100ms")
        .args(["--cwd", w.to_str().unwrap(), "--json"])
        .assert()
        .success()
        .stdout_json();
    let mut peer_out = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut peer_out).unwrap();
    assert!(peer.wait().unwrap().success());
    assert!(peer_out.contains("\"unlocked_write\""), "{peer_out}");
    assert_eq!(out["files"][0]["writes"], 2, "{out}");
    let v = read(&cj);
    assert_eq!(
        v["projects"][w.to_str().unwrap()]["hasTrustDialogAccepted"],
        true,
        "{v}"
    );
    assert_eq!(v["peerEdits"], 1, "{v}");
}

/// A writer that skips the lock replaces the file between prepare's rename and its read-back
/// (2.1.332 did, under load: prepare then failed its read-back with exit 4). prepare reads the
/// file again once it is quiet, finds its setting gone, and writes it again over the other
/// writer's copy, which it keeps.
#[test]
fn a_file_replaced_before_the_read_back_is_checked_again() {
    let env = TestEnv::new();
    let w = work(&env, "work");
    let ws = w.to_str().unwrap().to_string();
    let cj = env.root.join(".claude.json");
    fs::write(&cj, "{\n  \"numStartups\": 1\n}").unwrap();
    let writer = {
        let cj = cj.clone();
        let ws = ws.clone();
        std::thread::spawn(move || {
            // Wait for prepare's write, then replace it from the copy read before it.
            let ok = crate::common::wait_until(std::time::Duration::from_secs(20), || {
                fs::read_to_string(&cj).is_ok_and(|t| t.contains(&ws))
            });
            assert!(ok, "prepare never wrote");
            let tmp = cj.with_extension("json.tmp.client");
            fs::write(&tmp, "{\n  \"numStartups\": 2\n}").unwrap();
            fs::rename(&tmp, &cj).unwrap();
        })
    };
    let out = prepare(&env)
        .env("TEAMCTL_TEST_FAULTS", "before_verify=500ms")
        .args(["--cwd", &ws, "--json"])
        .assert()
        .success()
        .stdout_json();
    writer.join().unwrap();
    assert_eq!(out["files"][0]["writes"], 2, "{out}");
    let v = read(&cj);
    assert_eq!(v["numStartups"], 2, "{v}");
    assert_eq!(v["projects"][&ws]["hasTrustDialogAccepted"], true, "{v}");
}

/// teamctl writes only inside the config dir: a `.claude.json`, `settings.json` or `backups`
/// that is a symlink leading out of it (people keep dotfiles as links; a teammate could plant
/// one) is refused with exit 1 and a line saying why and what to do, and nothing is written
/// anywhere: not the file it points to, not a dangling link's target, not a backup. A link that
/// stays inside the config dir is written through, as Claude Code does.
#[test]
fn links_out_of_the_config_dir_are_refused() {
    use std::os::unix::fs::symlink;
    let env = TestEnv::new();
    let w = work(&env, "work");
    let ws = w.to_str().unwrap();
    let cj = env.root.join(".claude.json");
    let outside = env.dir.path().join("dotfiles");
    fs::create_dir_all(&outside).unwrap();
    let theirs = outside.join("claude.json");
    fs::write(&theirs, "{\"numStartups\": 3}").unwrap();
    let refused = |args: &[&str], link: &Path| {
        let out = prepare(&env)
            .args(args)
            .assert()
            .code(1)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("error: {} is a symlink to ", link.display()))
                && err.contains("outside the config dir")
                && err.contains("--claude-dir"),
            "{err}"
        );
    };
    // A link to a JSON file elsewhere: not rewritten.
    symlink(&theirs, &cj).unwrap();
    refused(&["--cwd", ws], &cj);
    refused(&["--cwd", ws, "--dry-run"], &cj);
    assert_eq!(fs::read_to_string(&theirs).unwrap(), "{\"numStartups\": 3}");
    // A dangling one: its target is not made.
    fs::remove_file(&cj).unwrap();
    symlink(outside.join("new.json"), &cj).unwrap();
    refused(&["--cwd", ws], &cj);
    assert!(!outside.join("new.json").exists());
    // settings.json, when it is to be written.
    fs::remove_file(&cj).unwrap();
    fs::write(&cj, "{}").unwrap();
    let settings = env.root.join("settings.json");
    symlink(&theirs, &settings).unwrap();
    refused(&["--skip-permissions"], &settings);
    assert_eq!(fs::read_to_string(&cj).unwrap(), "{}", "nothing written");
    fs::remove_file(&settings).unwrap();
    // backups: the copy of .claude.json (0600, the user's settings) would land outside.
    let backups = env.root.join("backups");
    symlink(&outside, &backups).unwrap();
    refused(&["--cwd", ws], &backups);
    assert_eq!(fs::read_to_string(&cj).unwrap(), "{}");
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        1,
        "no backup outside"
    );
    fs::remove_file(&backups).unwrap();
    // A link that stays inside the config dir is followed (one level, as Claude Code does).
    fs::create_dir_all(env.root.join("real")).unwrap();
    fs::write(env.root.join("real/claude.json"), "{}").unwrap();
    fs::remove_file(&cj).unwrap();
    symlink("real/claude.json", &cj).unwrap();
    prepare(&env).args(["--cwd", ws]).assert().success();
    assert!(fs::symlink_metadata(&cj).unwrap().file_type().is_symlink());
    assert_eq!(
        read(&env.root.join("real/claude.json"))["hasCompletedOnboarding"],
        true
    );
}

/// A large `.claude.json` (its `projects` grow with every folder Claude Code ran in) is edited
/// where it changes: every other byte stays as it was, whether the file was in Claude Code's
/// layout or not (then it is laid out as Claude Code would).
#[test]
fn a_large_config_keeps_every_byte_it_does_not_change() {
    let env = TestEnv::new();
    let w = work(&env, "work");
    let ws = w.to_str().unwrap();
    let cj = env.root.join(".claude.json");
    let mut projects = serde_json::Map::new();
    for i in 0..2000 {
        projects.insert(
            format!("/src/p{i}"),
            json!({"allowedTools": [], "history": [{"display": format!("fix {i} \u{e9}\u{1f}"), "pastedContents": {}}],
                   "lastCost": 0.125, "lastAPIDuration": i, "hasTrustDialogAccepted": false}),
        );
    }
    let doc = json!({"numStartups": 3, "projects": projects, "userID": "abc"});
    let canonical = render(&doc);
    for (written, layout) in [(canonical.clone(), true), (doc.to_string(), false)] {
        fs::write(&cj, &written).unwrap();
        let out = prepare(&env)
            .args(["--cwd", ws, "--json"])
            .assert()
            .success()
            .stdout_json();
        assert_eq!(out["files"][0]["reformatted"], !layout);
        let mut want = doc.clone();
        want["hasCompletedOnboarding"] = true.into();
        want["customApiKeyResponses"] = json!({"approved": [TAIL], "rejected": []});
        want["projects"][ws] = json!({"hasTrustDialogAccepted": true});
        assert_eq!(fs::read_to_string(&cj).unwrap(), render(&want));
    }
}
