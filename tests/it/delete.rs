//! `teamctl delete`: shutdown requests, the wait, the tmux session and the folders.

use std::fs;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{Ran, TestEnv, json as parse, keys, run_json};
use crate::common::{fake_claude, tmux_env, tmux_has_session};

#[test]
fn running_teammates_approve_and_everything_is_removed() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    env.cmd()
        .args(["create", "gone", "--member", "alice:a", "--member", "bob:b"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .assert()
        .success();
    assert!(tmux_has_session(&env, "teamctl-gone"));
    let out = env
        .cmd()
        .args(["--json", "delete", "gone", "--timeout", "20s"])
        .assert()
        .success()
        .stdout_bytes();
    let v = parse(&out);
    assert_eq!(
        keys(&v),
        [
            "export",
            "members",
            "removed",
            "schema_version",
            "team",
            "tmux_session",
            "worktrees"
        ]
    );
    assert_eq!(v["worktrees"], json!([]));
    assert_eq!(
        v["members"],
        json!([{"name":"alice","shutdown":"approved"},{"name":"bob","shutdown":"approved"}])
    );
    assert_eq!(v["tmux_session"], "teamctl-gone");
    assert_eq!(
        v["removed"],
        json!([
            env.root.join("teams/gone").display().to_string(),
            env.root.join("tasks/gone").display().to_string()
        ])
    );
    assert!(!tmux_has_session(&env, "teamctl-gone"));
    assert!(!env.root.join("teams/gone").exists());
    assert!(!env.root.join("tasks/gone").exists());
    // Nothing left behind, not even the renamed folders.
    assert_eq!(fs::read_dir(env.root.join("teams")).unwrap().count(), 0);
}

#[test]
fn a_teammate_that_ignores_the_request_times_out_and_is_killed() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    // Takes its brief (written once it has read its inbox), then never reads again.
    let deaf = env.dir.path().join("deaf-claude");
    fs::write(
        &deaf,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo 1; exit 0; }\n\
         f=\"$CLAUDE_CONFIG_DIR/teams/deaf/inboxes/alice.json\"\n\
         until grep -q '\"from\"' \"$f\"; do sleep 0.1; done\n\
         printf '[]' > \"$f.tmp.deaf0000\" && mv \"$f.tmp.deaf0000\" \"$f\"\nexec sleep 60\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&deaf, fs::Permissions::from_mode(0o755)).unwrap();
    env.cmd()
        .args(["create", "deaf", "--member", "alice:a", "--timeout", "20s"])
        .env("TEAMCTL_CLAUDE_BIN", &deaf)
        .assert()
        .success();
    env.cmd()
        .args(["delete", "deaf", "--timeout", "500ms"])
        .assert()
        .success()
        .stdout(predicate::str::contains("alice: timeout"))
        .stdout(predicate::str::contains("killed tmux session teamctl-deaf"))
        .stdout(predicate::str::contains("deleted team deaf"));
    assert!(!tmux_has_session(&env, "teamctl-deaf"));
    assert!(!env.root.join("teams/deaf").exists());
}

#[test]
fn a_team_without_running_teammates_is_removed_without_asking() {
    let env = TestEnv::new();
    env.cmd()
        .args(["create", "idle", "--member", "alice:a", "--launch", "none"])
        .assert()
        .success();
    let v = run_json(&env, &["delete", "idle"]);
    assert_eq!(
        v["members"],
        json!([{"name":"alice","shutdown":"not_running"}])
    );
    assert_eq!(v["tmux_session"], Value::Null);
    assert!(!env.root.join("teams/idle").exists());
    assert!(!env.root.join("tasks/idle").exists());
}

#[test]
fn a_team_teamctl_does_not_lead_needs_force() {
    let env = TestEnv::new();
    env.team("theirs", &[("alice", Some("blue"))]);
    env.cmd()
        .args(["delete", "theirs"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with(
            "error: teamctl does not lead team 'theirs'",
        ));
    assert!(env.root.join("teams/theirs/config.json").exists());
    env.cmd()
        .args(["delete", "theirs", "--force"])
        .assert()
        .success();
    assert!(!env.root.join("teams/theirs").exists());
}

#[test]
fn unknown_team_and_usage_errors() {
    let env = TestEnv::new();
    env.cmd()
        .args(["delete", "nope"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("team 'nope' not found"));
    env.cmd().args(["delete", "Bad_Name"]).assert().code(2);
    env.cmd().args(["delete"]).assert().code(2);
}
