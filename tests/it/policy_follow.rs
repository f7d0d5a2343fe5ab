//! `teamctl approve --policy --follow`: existing then new requests until the team is gone or the
//! timeout, two followers never answering twice, a plan approved once its teammate is idle,
//! `wait` and `ask` answering while they block, and a follower that retries or reads past an
//! unreadable inbox. The request frames and the policy are policy.rs's.

use std::fs;
use std::process::Stdio;
use std::thread;
use std::time::Duration;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{JsonLines, Ran, TestEnv, json_lines, keys, read_entries, wait_until};
use crate::policy::{
    IDLE, PLAN, POLICY, answered, entry, fixture, perm, responses, standard, write_policy,
};

/// A running `approve --follow --json`.
fn follow(env: &TestEnv, args: &[&str]) -> JsonLines {
    let mut cmd = env.std_cmd();
    cmd.args(["approve", "--follow", "--json"]).args(args);
    JsonLines::spawn(cmd)
}

/// Appends a request to the lead's inbox, as a teammate does.
fn append_request(env: &TestEnv, from: &str, text: &str, n: usize) {
    edit_inbox(env, "team-lead", |e| e.push(entry(from, text, 30 + n)));
}

/// Rewrites `member`'s inbox through `f` the way Claude Code writes it: under the inbox's lock
/// directory, temp file + rename.
fn edit_inbox(env: &TestEnv, member: &str, f: impl FnOnce(&mut Vec<Value>)) {
    let path = env.inbox("alpha", member);
    let lock = path.with_extension("json.lock");
    assert!(
        wait_until(Duration::from_secs(10), || fs::create_dir(&lock).is_ok()),
        "could not take {}",
        lock.display()
    );
    let mut entries = if path.exists() {
        read_entries(&path)
    } else {
        Vec::new()
    };
    f(&mut entries);
    let tmp = path.with_extension("json.tmp.test");
    fs::write(&tmp, serde_json::to_string_pretty(&entries).unwrap()).unwrap();
    fs::rename(&tmp, &path).unwrap();
    fs::remove_dir(&lock).unwrap();
}

/// Removes the team's folder (as `teamctl delete` does), retrying while a writer that has just
/// finished still releases its lock directory in it.
fn remove_team(env: &TestEnv) {
    let dir = env.root.join("teams/alpha");
    assert!(wait_until(Duration::from_secs(10), || fs::remove_dir_all(
        &dir
    )
    .is_ok()
        || !dir.exists()));
}

#[test]
fn follow_answers_existing_then_new_requests_until_the_team_is_gone() {
    let env = standard();
    let policy = write_policy(&env, POLICY);
    let f = follow(&env, &["--policy", &policy, "--timeout", "60s"]);
    let first: Vec<String> = (0..6)
        .map(|_| f.next()["request_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(first[0], "perm-1-echo");
    // A new request arrives while it follows.
    append_request(
        &env,
        "worker",
        &perm("perm-9-new", "Bash", json!({"command": "echo new"})),
        9,
    );
    let e = f.next();
    assert_eq!(e["request_id"], "perm-9-new");
    assert_eq!(e["answer"], "approve");
    assert!(wait_until(Duration::from_secs(10), || responses(
        &env, "worker"
    )
    .iter()
    .any(|r| answered(r) == "perm-9-new")));
    // The team goes away: it stops with exit 0.
    remove_team(&env);
    let end = f.next();
    assert_eq!(
        keys(&end),
        [
            "approved",
            "at",
            "denied",
            "event",
            "left",
            "schema_version",
            "team",
            "why"
        ]
    );
    assert_eq!(end["event"], "end");
    assert_eq!(end["why"], "team_gone");
    assert_eq!(end["approved"], 4);
    assert_eq!(end["denied"], 2);
    assert_eq!(end["left"], 1);
    let mut child = f.child;
    assert!(child.wait().unwrap().success());
}

#[test]
fn follow_stops_at_the_timeout_with_exit_0() {
    let env = standard();
    let policy = write_policy(&env, POLICY);
    let out = env
        .cmd()
        .args([
            "approve",
            "--follow",
            "--policy",
            &policy,
            "--timeout",
            "300ms",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.ends_with("stopped (timeout): 3 approved, 2 denied, 1 left pending\n"),
        "{stderr}"
    );
}

/// Two followers at once on the same team: every new request is answered exactly once.
#[test]
fn two_followers_never_double_answer() {
    let env = fixture(&[]);
    let policy = write_policy(&env, POLICY);
    let a = follow(
        &env,
        &["--policy", &policy, "--timeout", "60s", "--poll", "20"],
    );
    let b = follow(&env, &["--policy", &policy, "--timeout", "60s"]);
    let n = 8;
    for i in 0..n {
        append_request(
            &env,
            "worker",
            &perm(&format!("perm-{i}-f"), "Bash", json!({"command": "echo x"})),
            i,
        );
    }
    assert!(
        wait_until(Duration::from_secs(20), || responses(&env, "worker").len()
            >= n),
        "all answered"
    );
    let frames = responses(&env, "worker");
    let mut ids: Vec<&str> = frames.iter().map(answered).collect();
    ids.sort();
    ids.dedup();
    assert_eq!((frames.len(), ids.len()), (n, n), "one answer per request");
    // Every answer is reported (its write finished) by exactly one of them.
    let followers = [a, b];
    let mut decisions = 0;
    let end = std::time::Instant::now() + Duration::from_secs(30);
    while decisions < n && std::time::Instant::now() < end {
        for f in &followers {
            while let Ok(e) = f.lines.try_recv() {
                assert_eq!(e["written"], true, "{e}");
                decisions += 1;
            }
        }
        thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        decisions, n,
        "each request reported by exactly one follower"
    );
    remove_team(&env);
    for f in followers {
        let e = f.next();
        assert_eq!(
            (e["event"].as_str(), e["why"].as_str()),
            (Some("end"), Some("team_gone"))
        );
        let mut child = f.child;
        assert!(child.wait().unwrap().success());
    }
}

/// A plan approval waits until the teammate has reported idle after asking (answered earlier,
/// the real 2.1.332 loses it); the idle notification arriving wakes a follower, which answers.
#[test]
fn plan_approval_waits_for_the_teammate_to_go_idle() {
    let env = fixture(&[("worker", PLAN.to_string())]);
    let policy = write_policy(&env, POLICY);
    let events = env
        .cmd()
        .args(["approve", "--policy", &policy, "--json"])
        .assert()
        .success()
        .stdout_lines();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["deferred"], true);
    assert_eq!(events[0]["answer"], "approve");
    assert_eq!(events[0]["written"], false);
    assert!(responses(&env, "worker").is_empty());
    env.cmd()
        .args(["approve", "--policy", &policy])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "waiting plan_approval-1795946280000@worker@alpha from worker: plan /w/plan.md: answered (approve) once worker reports idle",
        ));
    let f = follow(&env, &["--policy", &policy, "--timeout", "60s"]);
    assert_eq!(f.next()["deferred"], true);
    // An idle notification from another teammate does not count; the worker's does.
    append_request(
        &env,
        "reviewer",
        IDLE.replace("worker", "reviewer").as_str(),
        1,
    );
    append_request(&env, "worker", IDLE, 2);
    let e = f.next();
    assert_eq!(
        (e["deferred"].as_bool(), e["written"].as_bool()),
        (Some(false), Some(true))
    );
    assert_eq!(responses(&env, "worker")[0]["approved"], true);
    remove_team(&env);
    assert_eq!(f.next()["why"], "team_gone");
    let mut child = f.child;
    assert!(child.wait().unwrap().success());
}

/// `wait --policy`: while it blocks, the pending requests are answered (decisions as JSON Lines
/// on stderr); stdout keeps its one document.
#[test]
fn wait_answers_requests_while_it_blocks() {
    let env = standard();
    let policy = write_policy(&env, POLICY);
    let child = env
        .std_cmd()
        .args([
            "wait",
            "--message-from",
            "worker",
            "--timeout",
            "30s",
            "--json",
        ])
        .args(["--policy", &policy])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(20), || responses(&env, "worker").len()
            == 4),
        "the worker's permission requests and plan were answered while wait blocked"
    );
    // A request arriving during the wait is answered too.
    append_request(
        &env,
        "worker",
        &perm("perm-8-late", "Bash", json!({"command": "echo late"})),
        8,
    );
    assert!(wait_until(Duration::from_secs(20), || responses(
        &env, "worker"
    )
    .iter()
    .any(|r| answered(r) == "perm-8-late")));
    append_request(&env, "worker", "done, thanks", 9);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = crate::common::json(&out.stdout);
    assert_eq!(doc["met"], true);
    let events: Vec<Value> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = events
        .iter()
        .filter(|e| e["written"] == true)
        .map(|e| e["request_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "perm-1-echo",
            "perm-2-rm",
            "perm-4-edit",
            "plan_approval-1795946280000@worker@alpha",
            "sandbox-1795946370000-xyz9876",
            "perm-8-late"
        ]
    );
}

/// `ask --policy`: the teammate's permission request is answered while ask waits for its
/// answer; a bad policy sends nothing.
#[test]
fn ask_answers_requests_while_it_waits() {
    let env = fixture(&[(
        "worker",
        perm("perm-1-echo", "Bash", json!({"command": "echo hi"})),
    )]);
    let policy = write_policy(&env, POLICY);
    let bad = env.dir.path().join("bad.json");
    fs::write(&bad, r#"{"permissions":{"allow":["Bash(echo"]}}"#).unwrap();
    env.cmd()
        .args(["ask", "worker", "what now?", "--policy"])
        .arg(&bad)
        .assert()
        .code(2);
    assert!(!env.inbox("alpha", "worker").exists(), "nothing was sent");
    let child = env
        .std_cmd()
        .args(["ask", "worker", "what now?", "--timeout", "30s"])
        .args(["--policy", &policy])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The question and the answer to the permission request both reach the worker.
    let inbox = env.inbox("alpha", "worker");
    assert!(wait_until(Duration::from_secs(20), || {
        inbox.exists() && read_entries(&inbox).len() == 2
    }));
    // The worker takes both and answers the question.
    edit_inbox(&env, "worker", |e| e.clear());
    edit_inbox(&env, "team-lead", |e| {
        e.push(
            json!({"from": "worker", "text": "all done", "timestamp": "2026-11-29T10:00:01.000Z",
            "color": "blue", "msgV": 1, "msg_id": "id-answer", "type": "message", "read": false}),
        );
    });
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "all done\n");
    assert!(
        stderr.contains(
            "approved perm-1-echo from worker: Bash(echo hi) (by permissions.allow Bash(echo:*))"
        ),
        "{stderr}"
    );
}

/// An answer that cannot be written (the teammate's inbox stays locked past --lock-timeout) is
/// reported with its error and written by itself once the lock is free, with no other change.
#[test]
fn follow_retries_an_answer_it_could_not_write() {
    let env = fixture(&[(
        "worker",
        perm("perm-1-echo", "Bash", json!({"command": "echo hi"})),
    )]);
    fs::write(env.inbox("alpha", "worker"), "[]").unwrap();
    let lock = env.inbox("alpha", "worker").with_extension("json.lock");
    fs::create_dir(&lock).unwrap();
    let policy = write_policy(&env, POLICY);
    let f = follow(
        &env,
        &[
            "--policy",
            &policy,
            "--timeout",
            "60s",
            "--lock-timeout",
            "200ms",
        ],
    );
    let e = f.next();
    assert_eq!(e["written"], false);
    assert!(
        e["error"].as_str().unwrap().contains("could not lock"),
        "{e}"
    );
    fs::remove_dir(&lock).unwrap();
    let e = f.next();
    assert_eq!(
        (e["request_id"].as_str(), e["written"].as_bool()),
        (Some("perm-1-echo"), Some(true))
    );
    assert_eq!(responses(&env, "worker").len(), 1);
    remove_team(&env);
    assert_eq!(f.next()["why"], "team_gone");
    let mut child = f.child;
    assert!(child.wait().unwrap().success());
}

/// A lead inbox that cannot be read for a moment (a torn or corrupt write) does not end a
/// follower: it warns and answers once the file reads again.
#[test]
fn follow_survives_an_unreadable_inbox() {
    let env = fixture(&[]);
    let policy = write_policy(&env, POLICY);
    let log = env.dir.path().join("follower.err");
    let mut child = env
        .std_cmd()
        .args([
            "approve",
            "--follow",
            "--json",
            "--policy",
            &policy,
            "--timeout",
            "60s",
        ])
        .stdout(Stdio::piped())
        .stderr(fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let lead = env.inbox("alpha", "team-lead");
    let lock = lead.with_extension("json.lock");
    let replace = |text: &str| {
        assert!(wait_until(Duration::from_secs(10), || fs::create_dir(
            &lock
        )
        .is_ok()));
        let tmp = lead.with_extension("json.tmp.test");
        fs::write(&tmp, text).unwrap();
        fs::rename(&tmp, &lead).unwrap();
        fs::remove_dir(&lock).unwrap();
    };
    // Whether it lands before or after the follower's first look, it is seen (the watch's
    // snapshot comes before the first pass).
    replace("[{\"from\": ");
    assert!(
        wait_until(Duration::from_secs(20), || fs::read_to_string(&log)
            .unwrap()
            .contains("warning:")),
        "the follower warned about the unreadable inbox"
    );
    assert!(
        child.try_wait().unwrap().is_none(),
        "the follower is still running"
    );
    // Repaired, with a request in it: answered.
    let repaired = vec![entry(
        "worker",
        &perm("perm-5-after", "Bash", json!({"command": "echo ok"})),
        5,
    )];
    replace(&serde_json::to_string_pretty(&repaired).unwrap());
    assert!(wait_until(Duration::from_secs(20), || responses(
        &env, "worker"
    )
    .iter()
    .any(|r| answered(r) == "perm-5-after")));
    let warnings = fs::read_to_string(&log).unwrap();
    assert_eq!(
        warnings.matches("warning:").count(),
        1,
        "warned once: {warnings}"
    );
    remove_team(&env);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let events = json_lines(&out.stdout);
    assert_eq!(events.last().unwrap()["why"], "team_gone");
}
