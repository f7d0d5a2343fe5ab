//! No chat token or secret of teamctl's (the bridge's Telegram and Slack tokens and webhook
//! secret, `serve`'s token) reaches a teammate, a lead or a tmux server, whichever verb starts
//! them: `create`, a restart by `--on-dead restart`, `resume` on a server teamctl starts again,
//! `run` (also `run --bridge webhook`: [`crate::run_bridge`]), and a tmux server someone
//! started with them in its global environment. The stand-in teammate and lead write the names
//! of the `TEAMCTL_*` variables they got; `TEAMCTL_NOW` (set by every test, not a secret) shows
//! that they do inherit teamctl's environment.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;

use crate::common::{TestEnv, fake_claude, json as parse, member, tmux_env, wait_until};
use crate::run::{STUB_LEAD, lead_in_tmux, run_cmd};

/// Each secret teamctl reads, with a value that cannot occur by chance.
pub(crate) const SECRETS: [(&str, &str); 4] = [
    ("TEAMCTL_TELEGRAM_TOKEN", "123456:telegram-secret-canary"),
    ("TEAMCTL_SLACK_TOKEN", "xoxb-slack-secret-canary"),
    ("TEAMCTL_WEBHOOK_SECRET", "webhook-secret-canary-0123456789"),
    ("TEAMCTL_SERVE_TOKEN", "serve-secret-canary-0123456789"),
];

/// The `TEAMCTL_*` names written to `file` (by the fake teammate or the stub lead), once it is
/// there; none of them a secret, and `TEAMCTL_NOW` among them.
pub(crate) fn no_secret_in(file: &Path) {
    assert!(
        wait_until(Duration::from_secs(20), || file.is_file()),
        "{} was never written",
        file.display()
    );
    let names = fs::read_to_string(file).unwrap();
    assert!(names.lines().any(|n| n == "TEAMCTL_NOW"), "{names}");
    for (k, _) in SECRETS {
        assert!(!names.lines().any(|n| n == k), "{k} in {}", file.display());
    }
}

/// What `tmux show-environment -g` says on the test's tmux server: no secret in it.
pub(crate) fn no_secret_in_the_servers_environment(env: &TestEnv) {
    let out = env
        .command("tmux")
        .args(["show-environment", "-g"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let global = String::from_utf8_lossy(&out.stdout);
    assert!(global.contains("TEAMCTL_NOW="), "{global}");
    for (k, v) in SECRETS {
        assert!(!global.contains(k) && !global.contains(v), "{k}: {global}");
    }
}

fn create_sec(env: &TestEnv) {
    env.cmd()
        .args(["create", "sec", "--member", "alice:Review it"])
        .args(["--timeout", "20s"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .envs(SECRETS)
        .assert()
        .success();
}

fn alice_pane(env: &TestEnv) -> String {
    let cfg = parse(&fs::read(env.root.join("teams/sec/config.json")).unwrap());
    member(&cfg, "alice")["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn no_secret_reaches_a_teammate_or_the_tmux_server_create_restart_and_resume_start() {
    let Some((env, server)) = tmux_env() else {
        return;
    };
    let alice = env.root.join("fake-teamctl-env-alice");
    create_sec(&env);
    no_secret_in(&env.root.join("fake-version-teamctl-env"));
    no_secret_in(&alice);
    no_secret_in_the_servers_environment(&env);

    // `--on-dead restart` starts her again in a new pane.
    env.cmd()
        .args([
            "--team", "sec", "tasks", "add", "Fix it", "--owner", "alice",
        ])
        .assert()
        .success();
    env.cmd()
        .args([
            "--team",
            "sec",
            "tasks",
            "update",
            "1",
            "--status",
            "in_progress",
        ])
        .assert()
        .success();
    let keepalive = env
        .command("tmux")
        .args(["new-session", "-d", "-s", "keepalive", "exec sleep 600"])
        .status()
        .unwrap();
    assert!(keepalive.success());
    fs::remove_file(&alice).unwrap();
    let old = alice_pane(&env);
    assert!(
        env.command("tmux")
            .args(["kill-pane", "-t", &old])
            .status()
            .unwrap()
            .success()
    );
    env.cmd()
        .args(["--team", "sec", "wait", "--tasks-done"])
        .args(["--on-dead", "restart", "--timeout", "1500ms"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .envs(SECRETS)
        .assert()
        .code(3);
    assert_ne!(alice_pane(&env), old);
    no_secret_in(&alice);

    // Its tmux server gone, `resume` starts one again: with teamctl's environment.
    server.kill();
    fs::remove_file(&alice).unwrap();
    let out = env
        .cmd()
        .args(["resume", "sec", "--json"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .envs(SECRETS)
        .output()
        .unwrap();
    let v: Value = parse(&out.stdout);
    assert_eq!(member(&v, "alice")["action"], "resumed", "{v}");
    no_secret_in(&alice);
    no_secret_in_the_servers_environment(&env);
}

/// A tmux server the person started with the secrets in their shell holds them in its global
/// environment, which panes inherit: teamctl's session marks them removed, so its teammates
/// start without them.
#[test]
fn a_tmux_server_started_with_the_secrets_gives_them_to_no_teammate() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let person = env
        .command("tmux")
        .args(["new-session", "-d", "-s", "main", "exec sleep 600"])
        .envs(SECRETS)
        .status()
        .unwrap();
    assert!(person.success());
    let global = env
        .command("tmux")
        .args(["show-environment", "-g", "TEAMCTL_WEBHOOK_SECRET"])
        .output()
        .unwrap();
    assert!(global.status.success(), "the setup: {global:?}");
    create_sec(&env);
    no_secret_in(&env.root.join("fake-teamctl-env-alice"));
}

/// A run's lead (the stub writes its `TEAMCTL_*` names at `--version` and at its start) gets
/// none either, nor the tmux server the run starts.
#[test]
fn a_runs_lead_gets_no_secret() {
    let names = |file: &str| {
        format!(
            "env | sed -n 's/^\\(TEAMCTL_[A-Za-z0-9_]*\\)=.*/\\1/p' | sort > \
             \"$CLAUDE_CONFIG_DIR/{file}.tmp\" && mv \"$CLAUDE_CONFIG_DIR/{file}.tmp\" \
             \"$CLAUDE_CONFIG_DIR/{file}\"\n"
        )
    };
    let script = format!(
        "[ \"$1\" = --version ] && {{ {}echo '2.1.332 (Claude Code)'; exit 0; }}\n{}{STUB_LEAD}",
        names("lead-version-env").trim_end().to_string() + "; ",
        names("lead-env")
    );
    let Some((env, _server, lead)) = lead_in_tmux("dumping-lead", &script) else {
        return;
    };
    run_cmd(&env, &lead)
        .args([
            "--json",
            "go",
            "--settle",
            "300ms",
            "--timeout",
            "30s",
            "--keep",
        ])
        .envs(SECRETS)
        .assert()
        .success();
    no_secret_in(&env.root.join("lead-version-env"));
    no_secret_in(&env.root.join("lead-env"));
    no_secret_in_the_servers_environment(&env);
}
