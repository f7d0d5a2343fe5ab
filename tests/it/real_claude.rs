//! End to end with the real Claude Code (teamctl sending to a teammate started by hand; a team
//! made by `teamctl create`; `ask`, `wait` and the CI recipe in such a team; requests answered
//! by `approve --follow --policy`): a 2.1.332 pane teammate (npm
//! `@anthropic-ai/claude-code-linux-x64`, installed by `npm ci --prefix tests/e2e`) runs offline
//! in a private tmux server against a mock of the Messages API on 127.0.0.1. teamctl sends it
//! messages; the test checks each is consumed by the teammate and answered (via its
//! `SendMessage` tool) exactly once. The driver is `tests/e2e/e2e.js`; see its README.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::bin;

/// `tests/e2e` when the real binary and tmux are installed; in CI (`CI` set) their absence is a
/// failure, elsewhere a skip.
fn e2e_dir() -> Option<PathBuf> {
    let e2e = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
    let installed = e2e
        .join("node_modules/@anthropic-ai/claude-code-linux-x64/claude")
        .is_file()
        && Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
    if installed {
        return Some(e2e);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the e2e peer is not installed: `npm ci --prefix tests/e2e` and tmux are needed"
    );
    eprintln!("skipping: run `npm ci --prefix tests/e2e` (and install tmux) for this test");
    None
}

/// Runs the driver `script` in `tests/e2e` with `args` (teamctl's `TEAMCTL_*` variables
/// removed), asserts it passed and returns its JSON summary (the last stdout line).
fn driver(e2e: &Path, script: &str, args: &[&std::ffi::OsStr]) -> Value {
    let out = Command::new("node")
        .arg(e2e.join(script))
        .args(args)
        .env_remove("TEAMCTL_TEAM")
        .env_remove("TEAMCTL_FROM")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["ok"], true);
    assert_eq!(summary["claude"], "2.1.332 (Claude Code)");
    summary
}

#[test]
fn real_claude_code_teammate_receives_and_answers_teamctl_messages() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(&e2e, "e2e.js", &["--send-cmd".as_ref(), bin.as_os_str()]);
    assert_eq!(summary["A"]["seen_in_inbox"], true);
    assert_eq!(summary["B"]["tokens"].as_array().unwrap().len(), 5);
    assert_eq!(summary["worker_inbox_left"], 0);
}

/// `teamctl create` starts two real 2.1.332 teammates itself (tmux, `--claude-bin` pointing at
/// the npm binary, default permission mode), they reach `ready` and answer `send` (as
/// team-lead, and as a `send --join` member); the worker asks its lead for permission to run
/// Bash, `teamctl pending` lists it and `teamctl approve` lets it run; `teamctl shutdown --wait`
/// gets the second teammate's approval and `delete` the worker's. Driver:
/// `tests/e2e/create-e2e.js`.
#[test]
fn real_claude_code_team_made_by_teamctl_create() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "create-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert_eq!(
        summary["steps"].as_array().unwrap().last().unwrap(),
        "ready"
    );
    assert_eq!(summary["shutdown"], "approved");
    assert!(
        summary["approve_to_command_ms"].is_u64(),
        "the approved command ran"
    );
    assert!(
        summary["shutdown_wait_ms"].is_u64(),
        "shutdown --wait was approved"
    );
}

/// `ask` and `wait` with a real 2.1.332 teammate in a team `teamctl create` made: `wait --idle`
/// after its turn, `ask` prints its answer, a turn without SendMessage is `ask` exit 5, a task
/// given with `tasks add --owner` and completed by the teammate ends `wait --tasks-done`; then
/// the README's CI recipe (examples/ci/team-review.sh) runs as it is. Driver:
/// `tests/e2e/ask-e2e.js`.
#[test]
fn real_claude_code_ask_wait_and_the_ci_recipe() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(&e2e, "ask-e2e.js", &["--teamctl".as_ref(), bin.as_os_str()]);
    // Without jq (outside CI) the recipe is skipped.
    assert!(
        summary["recipe_ms"].is_u64() || std::env::var_os("CI").is_none(),
        "the CI recipe ran"
    );
}

/// `teamctl run` starts a real 2.1.332 lead headless (tmux, `--teammate-mode tmux`); the mock
/// has it spawn a pane teammate `worker` with the Agent tool, the worker reports to team-lead,
/// and the lead ends its turn with a final text. run must report the team with that teammate,
/// print the final text and exit 0 leaving nothing running; a lead whose turn never ends must
/// time out (exit 3) with its pane's last lines and clean up the same way. Both leave their
/// record (`--export`: the lead's transcript, the whole conversation, the final answer), and the
/// done run's trace and metrics reach an OTLP receiver on 127.0.0.1. Driver:
/// `tests/e2e/run-e2e.js`.
#[test]
fn real_claude_code_lead_run_headless_until_done() {
    let Some(e2e) = e2e_dir() else { return };
    let out = Command::new("node")
        .arg(e2e.join("run-e2e.js"))
        .arg("--teamctl")
        .arg(bin())
        .env_remove("TEAMCTL_TEAM")
        .env_remove("TEAMCTL_FROM")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "run e2e failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["ok"], true);
    assert_eq!(summary["done"]["teammates"], 1);
    assert_eq!(
        summary["done"]["states"]
            .as_array()
            .unwrap()
            .last()
            .unwrap(),
        "done"
    );
    assert!(summary["timeout"]["elapsed_ms"].is_u64());
    assert!(summary["done"]["record"]["messages"].as_u64() >= Some(3));
    assert!(summary["done"]["otel"]["worker_events"].as_u64() >= Some(1));
}

/// `approve --follow --policy` answers real 2.1.332 teammates as requests arrive: the worker
/// (default permission mode, made by `teamctl create`) gets an allowed `echo` run, a denied `rm`
/// not run (the model receives "denied by policy rule Bash(rm:*)"), an unmatched `touch` left
/// pending; with the follower stopped, `wait --idle --policy` answers the next request and the
/// resumed follower does not answer it again; a second teammate started with `--plan-mode-required` gets its plan approved
/// (`"plans": "approve"`, held back until its turn ended) and its model receives "[Plan
/// Approved]"; the follower ends by itself when `teamctl delete` removes the team. Driver:
/// `tests/e2e/policy-e2e.js`.
#[test]
fn real_claude_code_requests_answered_by_policy() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "policy-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert_eq!(summary["allow"]["rule"], "Bash(echo:*)");
    assert_eq!(
        summary["deny"]["reason"],
        "denied by policy rule Bash(rm:*)"
    );
    assert_eq!(summary["deny"]["model_saw"]["is_error"], true);
    assert!(
        summary["deny"]["model_saw"]["text"]
            .as_str()
            .unwrap()
            .ends_with("denied by policy rule Bash(rm:*)")
    );
    assert_eq!(summary["wait_policy"]["answered_by"], "wait");
    assert_eq!(summary["wait_policy"]["follower_answered_again"], false);
    assert_eq!(summary["plan"]["model_saw"], "[Plan Approved]");
    assert_eq!(summary["unmatched"]["still_pending"], true);
    assert_eq!(summary["end"]["why"], "team_gone");
}
