//! The teammate that never reports idle (Claude Code's start-up race: it ends its turns in its
//! transcript but writes no `idle_notification` and stays `isActive: true`): `wait --idle`,
//! `ask`, `status`, `doctor`, the policy follower and `--on-stall restart` see it by its
//! transcript, `UNREPORTED_AFTER` (5 s) after its turn's end, and never a healthy teammate
//! early. The stand-in is tests/fixtures/fake-claude with `fake-silent-<name>`.

use std::fs;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{
    TestEnv, fake_claude, idle_frame, json as parse, led_team, member, tmux_env, write_as,
};

/// Team `sil` made with the stand-in claude in the test's tmux server: `alice` never reports
/// idle (her turns end in her transcript only), `bob` does. Returns once both took their
/// briefs.
fn a_team_with_a_silent_teammate(env: &TestEnv) {
    fs::write(env.root.join("fake-silent-alice"), "").unwrap();
    env.cmd()
        .args(["create", "sil", "--member", "alice:Review it"])
        .args(["--member", "bob:Test it", "--timeout", "20s"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .assert()
        .success();
}

/// `teamctl --team sil ARGS`, on the real clock (transcripts and inboxes are stamped by it).
fn sil(env: &TestEnv, args: &[&str]) -> std::process::Output {
    env.cmd()
        .args(["--team", "sil"])
        .args(args)
        .env_remove("TEAMCTL_NOW")
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `wait --idle` returns within 20 s for a teammate whose turns end in its transcript but who
/// writes no idle notification, and `status --json` and `doctor` say what is wrong with it;
/// so again after its next turn.
#[test]
fn wait_idle_returns_for_a_teammate_that_never_reports_idle_and_status_names_it() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    a_team_with_a_silent_teammate(&env);
    let started = Instant::now();
    let out = sil(&env, &["--json", "wait", "--idle", "--timeout", "20s"]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(took < Duration::from_secs(20), "{took:?}");
    let v = parse(&out.stdout);
    let detail = v["conditions"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("alice (its turn ended in its transcript at ")
            && detail.contains("and it reported no idle (no idle_notification for 5 s)")
            && detail.contains("bob (idle_notification"),
        "{detail}"
    );
    let out = sil(&env, &["--json", "status"]);
    let v = parse(&out.stdout);
    let alice = member(&v, "alice");
    assert_eq!(alice["waiting"], "idle_unreported", "{alice}");
    assert!(alice["idle_unreported_since"].is_string(), "{alice}");
    assert_eq!(
        alice["waiting_detail"]["message"],
        "its turns end but it reports no idle; a start-up race is one cause; restarting it helps"
    );
    assert_eq!(member(&v, "bob")["idle_unreported_since"], Value::Null);
    let needs = v["needs_human"].as_array().unwrap();
    assert!(
        needs
            .iter()
            .any(|n| n["cause"] == "idle_unreported" && n["member"] == "alice"),
        "{needs:?}"
    );
    let out = sil(&env, &["doctor"]);
    let said = text(&out.stdout);
    assert!(
        said.contains("alice of team 'sil': its turns end but it reports no idle"),
        "{said}"
    );
    // Her next turn: busy until it ends, then idle again by her transcript.
    env.cmd()
        .args(["--team", "sil", "send", "alice", "once more"])
        .assert()
        .success();
    let out = sil(&env, &["wait", "--idle", "alice", "--timeout", "20s"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// Team `t` (teamctl leads) whose alice took her brief and ended her turn at `ended` in her
/// transcript, reporting no idle.
fn alice_ended_a_turn_at(env: &TestEnv, ended: chrono::DateTime<chrono::Utc>) {
    led_team(env);
    let at = |d: chrono::Duration| teamctl::time::iso_millis(ended - d);
    env.transcript_line_as(
        "t",
        "alice",
        json!({"type":"user","timestamp": at(chrono::Duration::seconds(1)),
               "message":{"role":"user","content":"brief"}}),
    );
    env.transcript_line_as(
        "t",
        "alice",
        json!({"type":"system","subtype":"turn_duration","durationMs":900,
               "timestamp": at(chrono::Duration::zero())}),
    );
}

/// The grace: a turn's end without its report counts only 5 s later (a healthy teammate
/// reports about 0.2 s after it), so `wait --idle` never takes a teammate for idle early.
#[test]
fn a_turn_end_counts_as_idle_only_after_the_grace() {
    let env = TestEnv::new();
    alice_ended_a_turn_at(&env, chrono::Utc::now());
    let out = env
        .cmd()
        .args(["wait", "--idle", "alice", "--timeout", "1s"])
        .env_remove("TEAMCTL_NOW")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stdout));
    let started = Instant::now();
    let out = env
        .cmd()
        .args(["wait", "--idle", "alice", "--timeout", "20s"])
        .env_remove("TEAMCTL_NOW")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(started.elapsed() < Duration::from_secs(10));
    // Reported: idle by its notification, not by the transcript.
    write_as(&env, "alice", "team-lead", &idle_frame("alice"));
    let out = env
        .cmd()
        .args(["--json", "status"])
        .env_remove("TEAMCTL_NOW")
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    assert_eq!(member(&v, "alice")["idle_unreported_since"], Value::Null);
}

/// `ask` a teammate that never reports idle: exit 5 (idle without answering) once its turn's
/// end in its transcript has gone unreported for 5 s, not a timeout.
#[test]
fn ask_ends_idle_for_a_teammate_that_never_reports_idle() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    a_team_with_a_silent_teammate(&env);
    let started = Instant::now();
    let out = sil(&env, &["ask", "alice", "Any news?", "--timeout", "30s"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(
        stderr.contains("alice went idle without answering (its turn ended at ")
            && stderr.contains("in its transcript; it reported no idle"),
        "{stderr}"
    );
}

/// `--on-stall restart` restarts a teammate that never reports idle, once per turn end, and
/// sends it nothing (it was idle).
#[test]
fn on_stall_restart_restarts_a_teammate_that_never_reports_idle() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    a_team_with_a_silent_teammate(&env);
    env.cmd()
        .args([
            "--team",
            "sil",
            "tasks",
            "add",
            "Review it",
            "--owner",
            "bob",
        ])
        .assert()
        .success();
    let out = env
        .cmd()
        .args(["--team", "sil", "wait", "--tasks-done", "--timeout", "10s"])
        .args(["--on-stall", "restart"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .env_remove("TEAMCTL_NOW")
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "the wait times out: {stderr}");
    let restarts = stderr.matches("restarted alice (idle_unreported)").count();
    assert_eq!(restarts, 1, "{stderr}");
    assert!(!stderr.contains("restarted bob"), "{stderr}");
    let inbox = crate::common::read_entries(&env.inbox("sil", "alice"));
    assert!(inbox.is_empty(), "no nudge after the restart: {inbox:?}");
}

/// The worker of policy.rs's team `alpha` asked for a plan approval at 09:59:00 (its entry in
/// the lead's inbox) and its transcript's turn ends at `ended` (`None`: still inside it), with
/// no idle notification from it.
fn a_plan_of_a_silent_worker(ended: Option<&str>) -> TestEnv {
    let env = crate::policy::fixture(&[("worker", crate::policy::PLAN.to_string())]);
    env.transcript_line_as(
        "alpha",
        "worker",
        json!({"type":"user","timestamp":"2026-11-29T09:58:58.000Z",
               "message":{"role":"user","content":"Plan: the work"}}),
    );
    env.transcript_line_as(
        "alpha",
        "worker",
        json!({"type":"user","timestamp":"2026-11-29T09:59:00.100Z",
               "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"submitted"}]}}),
    );
    if let Some(at) = ended {
        env.transcript_line_as(
            "alpha",
            "worker",
            json!({"type":"system","subtype":"turn_duration","durationMs":2000,"timestamp":at}),
        );
    }
    env
}

/// A plan of a teammate that never reports idle is approved once its transcript's turn end
/// after the request has gone unreported for 5 s; not while the turn runs, nor within the
/// grace (a healthy teammate's notification comes about 0.2 s after the end).
#[test]
fn a_plan_of_a_teammate_that_never_reports_idle_is_approved_by_its_transcript() {
    let approve = |env: &TestEnv, now: &str| {
        let policy = crate::policy::write_policy(env, crate::policy::POLICY);
        let out = env
            .cmd()
            .args(["approve", "--policy", &policy, "--json"])
            .env("TEAMCTL_NOW", now)
            .assert()
            .success();
        crate::common::json_lines(&out.get_output().stdout)
    };
    let env = a_plan_of_a_silent_worker(None);
    let e = approve(&env, "2026-11-29T10:00:00.000Z");
    assert_eq!(
        (e[0]["deferred"].as_bool(), e[0]["written"].as_bool()),
        (Some(true), Some(false))
    );
    let env = a_plan_of_a_silent_worker(Some("2026-11-29T09:59:01.000Z"));
    let e = approve(&env, "2026-11-29T09:59:05.000Z");
    assert_eq!(e[0]["deferred"], true, "within the grace");
    let e = approve(&env, "2026-11-29T09:59:06.000Z");
    assert_eq!(
        (e[0]["deferred"].as_bool(), e[0]["written"].as_bool()),
        (Some(false), Some(true))
    );
    assert_eq!(
        crate::policy::responses(&env, "worker")[0]["approved"],
        true
    );
}

/// The bridge posts a plan of a teammate that never reports idle once its transcript's turn
/// end after the request has gone unreported for 5 s (before, an answer from the chat could
/// reach it mid-turn and be lost).
#[test]
fn the_bridge_posts_a_plan_of_a_teammate_that_never_reports_idle() {
    use crate::bridge::{bridge, expect};
    let env = a_plan_of_a_silent_worker(Some("2026-11-29T09:59:01.000Z"));
    let mock = crate::chat_mock::Telegram::start();
    let b = bridge(&env, &mock, &[]);
    let posted = expect(&b, "posted");
    assert_eq!(
        posted["request_id"],
        "plan_approval-1795946280000@worker@alpha"
    );
    // And the chat hears what is wrong with it.
    let notice = expect(&b, "notice");
    assert_eq!(
        notice["detail"],
        "alpha idle_unreported worker 2026-11-29T09:59:01.000Z"
    );
    let sent = mock.wait_sent(2);
    let text = sent[1]["text"].as_str().unwrap();
    assert!(
        text.contains("[alpha] needs you: a member's turns end but it reports no idle"),
        "{text}"
    );
    let mut b = b;
    b.child.kill().unwrap();
}

/// `create` writes each teammate's brief only once every teammate has started (read its
/// inbox): a teammate's first turn rewrites config.json in place, and one that reads it torn
/// as it starts never reports idle.
#[test]
fn create_writes_the_briefs_once_every_teammate_has_read_its_inbox() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    env.cmd()
        .args(["create", "brief", "--member", "alice:Review it"])
        .args(["--member", "bob:Test it", "--member", "carol:Fix it"])
        .args(["--timeout", "20s"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .assert()
        .success();
    for name in ["alice", "bob", "carol"] {
        let first = fs::read_to_string(env.root.join(format!("fake-first-read-{name}"))).unwrap();
        assert_eq!(first, "[]", "{name} found its brief at once: {first}");
    }
}

/// A teammate that read config.json torn as it started writes its session without its team's
/// and its own name (Claude Code 2.1.332): a session fed by an inbox is the one pane teammate's
/// of its folder that has none, never a guess between two.
#[test]
fn a_session_that_names_no_team_is_the_one_teammate_of_its_folder_without_one() {
    let env = TestEnv::new();
    env.team("t", &[("alice", Some("blue")), ("bob", Some("green"))]);
    env.edit_config("t", |cfg| {
        for (i, cwd) in [(1, "/w/alice"), (2, "/w/alice")] {
            cfg["members"][i]["cwd"] = cwd.into();
            cfg["members"][i]["backendType"] = "tmux".into();
        }
    });
    let unnamed = [
        json!({"type":"mode","mode":"normal","sessionId":"s1"}),
        json!({"type":"user","timestamp":"2026-11-29T09:50:00.000Z","sessionId":"s1",
               "message":{"role":"user","content":"<teammate-message teammate_id=\"team-lead\">\nbrief\n</teammate-message>"}}),
        json!({"type":"system","subtype":"turn_duration","timestamp":"2026-11-29T09:50:02.000Z","sessionId":"s1"}),
    ];
    env.transcript("/w/alice", "s1", &unnamed);
    let unreported = |env: &TestEnv, who: &str| {
        let v = crate::common::run_json(env, &["--team", "t", "status"]);
        member(&v, who)["idle_unreported_since"].clone()
    };
    // Two teammates without a session work there: whose it is cannot be told.
    assert_eq!(unreported(&env, "alice"), Value::Null);
    assert_eq!(unreported(&env, "bob"), Value::Null);
    // bob's own session names him: the other one is alice's.
    env.transcript_line_as(
        "t",
        "bob",
        json!({"type":"user","timestamp":"2026-11-29T09:50:00.000Z","message":{"role":"user","content":"hi"}}),
    );
    assert_eq!(unreported(&env, "alice"), "2026-11-29T09:50:02.000Z");
    assert_eq!(unreported(&env, "bob"), Value::Null);
}

/// Under load Claude Code was seen to land a teammate's `isActive: true` after its own turn's
/// end and notification (five teammates writing config.json at once), while another teammate
/// still worked: `wait --idle` goes by the transcript then too, 5 s after the end with nothing
/// since.
#[test]
fn a_stale_is_active_after_the_turns_end_does_not_hold_wait_idle() {
    let env = TestEnv::new();
    let ended = chrono::Utc::now();
    alice_ended_a_turn_at(&env, ended);
    write_as(&env, "team-lead", "bob", "more work");
    let mut c = env.std_cmd();
    c.args(["wait", "--idle", "--timeout", "20s"])
        .env_remove("TEAMCTL_NOW")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let err = crate::common::Lines::of(child.stderr.take().unwrap());
    assert!(crate::common::wait_until(Duration::from_secs(20), || err
        .text()
        .contains("waiting up to")));
    write_as(&env, "alice", "team-lead", &idle_frame("alice"));
    env.edit_config("t", |cfg| cfg["members"][1]["isActive"] = true.into());
    crate::common::take(&env, "bob", "more work");
    write_as(&env, "bob", "team-lead", &idle_frame("bob"));
    let out = child.wait_with_output().unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", err.all());
    assert!(
        stdout.contains("alice (its turn ended in its transcript at ")
            && stdout.contains("reported, and nothing since"),
        "{stdout}"
    );
}
