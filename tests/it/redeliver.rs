//! `teamctl redeliver`, and the inboxes nobody reads as `status` and `doctor` show them: moves
//! exactly once (also when cut short between its two writes), refuses what is not an inbox
//! nobody reads, leaves a corrupt or misplaced file as it was, and never starves a Claude
//! Code-style writer or reader (the stress test with the proper-lockfile peer).

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::atomic::Ordering::SeqCst;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::time::{Duration, Instant, SystemTime};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{
    Sent, TestEnv, assert_exactly_once, json as parse, json_lines, keys, node_peer, peer,
    read_entries, run_json, wait_until,
};

const WORKER_MSG: &str = "[\n  {\n    \"from\": \"worker\",\n    \"text\": \"SENDTO W1\",\n    \"summary\": \"sendto\",\n    \"timestamp\": \"2026-11-29T09:58:00.000Z\",\n    \"color\": \"blue\",\n    \"read\": false\n  }\n]";

/// Team `alpha` (team-lead, alice, worker, bob) with `alise.json` holding one unread message
/// from worker, as Claude Code 2.1.112 writes it, and an empty `alice.json`.
fn fixture() -> TestEnv {
    let env = TestEnv::new();
    env.team(
        "alpha",
        &[
            ("alice", Some("green")),
            ("worker", Some("blue")),
            ("bob", None),
        ],
    );
    fs::write(env.inbox("alpha", "alise"), WORKER_MSG).unwrap();
    fs::write(env.inbox("alpha", "alice"), "[]").unwrap();
    env
}

fn entries_of(path: &Path) -> Vec<Value> {
    if path.exists() {
        read_entries(path)
    } else {
        Vec::new()
    }
}

/// Every name in the inboxes folder but the inboxes themselves (locks, temp files).
fn litter(env: &TestEnv) -> Vec<String> {
    fs::read_dir(env.root.join("teams/alpha/inboxes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".json"))
        .collect()
}

#[test]
fn moves_the_unread_message_to_the_member_meant_once() {
    let env = fixture();
    let out = env
        .cmd()
        .args(["redeliver", "alise"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with(
            "moved 1 message from alise to alice (",
        ))
        .stdout(predicate::str::contains("from worker: sendto"));
    drop(out);
    // The entry's bytes, as 2.1.112 wrote them, are now alice's.
    let alice = fs::read_to_string(env.inbox("alpha", "alice")).unwrap();
    assert_eq!(alice, WORKER_MSG);
    assert_eq!(fs::read(env.inbox("alpha", "alise")).unwrap(), b"[]");
    assert!(litter(&env).is_empty(), "{:?}", litter(&env));
    // Again: nothing to move, nothing written.
    env.cmd()
        .args(["redeliver", "alise"])
        .assert()
        .success()
        .stdout("nothing to move: alise.json holds no unread message\n");
    assert_eq!(
        fs::read_to_string(env.inbox("alpha", "alice")).unwrap(),
        WORKER_MSG
    );
    // The move is in the sent log, to alice.
    let log = fs::read_to_string(env.data_dir().join("sent.jsonl")).unwrap();
    let sent: Value = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    assert_eq!(
        (sent["to"].as_str(), sent["from"].as_str()),
        (Some("alice"), Some("worker"))
    );
}

#[test]
fn json_has_every_key_and_dry_run_writes_nothing() {
    let env = fixture();
    let before = fs::read(env.inbox("alpha", "alise")).unwrap();
    let v = run_json(&env, &["redeliver", "alise", "--dry-run"]);
    assert_eq!(
        keys(&v),
        [
            "already_delivered",
            "dry_run",
            "inbox",
            "kept",
            "moved",
            "path",
            "schema_version",
            "target",
            "team",
            "to"
        ]
    );
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["to"], "alice");
    assert_eq!(v["moved"][0]["text"], "SENDTO W1");
    assert_eq!(fs::read(env.inbox("alpha", "alise")).unwrap(), before);
    assert_eq!(fs::read(env.inbox("alpha", "alice")).unwrap(), b"[]");
    env.cmd()
        .args(["redeliver", "alise", "--dry-run"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("would move 1 message"));
    let v = run_json(&env, &["redeliver", "alise"]);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["team"], "alpha");
    assert_eq!(v["inbox"], "alise");
    assert_eq!(v["dry_run"], false);
    assert_eq!(v["moved"].as_array().unwrap().len(), 1);
    assert_eq!(v["already_delivered"], json!([]));
    assert_eq!(v["kept"], 0);
    assert!(
        v["target"]
            .as_str()
            .unwrap()
            .ends_with("inboxes/alice.json")
    );
    let v = run_json(&env, &["redeliver", "alise"]);
    assert_eq!(
        (v["moved"].clone(), v["to"].clone()),
        (json!([]), Value::Null)
    );
}

#[test]
fn read_entries_stay_and_to_names_the_member() {
    let env = fixture();
    let read = json!([
        {"from": "worker", "text": "old", "timestamp": "2026-11-29T09:00:00.000Z", "read": true},
        {"from": "worker", "text": "new", "timestamp": "2026-11-29T09:01:00.000Z", "read": false}
    ]);
    fs::write(env.inbox("alpha", "lead"), read.to_string()).unwrap();
    // No member is close to `lead`: it must be named.
    env.cmd()
        .args(["redeliver", "lead"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "no member's name is close to 'lead'; name the member with --to MEMBER",
        ));
    let v = run_json(&env, &["redeliver", "lead", "--to", "team-lead"]);
    assert_eq!(
        (v["moved"][0]["text"].as_str(), v["kept"].as_u64()),
        (Some("new"), Some(1))
    );
    let left = read_entries(&env.inbox("alpha", "lead"));
    assert_eq!(left, vec![read[0].clone()]);
    assert_eq!(
        read_entries(&env.inbox("alpha", "team-lead"))[0]["text"],
        "new"
    );
}

#[test]
fn refusals() {
    let env = fixture();
    let before = fs::read(env.inbox("alpha", "alise")).unwrap();
    let fails = |args: &[&str], code: i32, says: &str| {
        env.cmd()
            .args(args)
            .assert()
            .code(code)
            .stderr(predicate::str::starts_with("error:"))
            .stderr(predicate::str::contains(says));
    };
    fails(&["redeliver"], 2, "INBOX");
    for bad in [
        "../alice",
        "al ise",
        "a/b",
        "",
        "x\u{1b}[2J",
        &"a".repeat(65),
    ] {
        fails(&["redeliver", bad], 2, "invalid member name");
    }
    fails(&["redeliver", "user"], 2, "a name Claude Code reserves");
    fails(
        &["redeliver", "Team-Lead"],
        2,
        "a name Claude Code reserves",
    );
    fails(&["redeliver", "alice"], 1, "is a member of team 'alpha'");
    fails(
        &["redeliver", "alsie"],
        1,
        "no inbox 'alsie' (did you mean 'alise'?)",
    );
    fails(
        &["redeliver", "alise", "--to", "carol"],
        1,
        "'carol' is not a member",
    );
    fails(
        &["redeliver", "alise", "--to", "alise"],
        2,
        "is the inbox itself",
    );
    fails(
        &["redeliver", "alise", "--to", "../x"],
        2,
        "invalid member name",
    );
    assert_eq!(fs::read(env.inbox("alpha", "alise")).unwrap(), before);
    assert_eq!(fs::read(env.inbox("alpha", "alice")).unwrap(), b"[]");
    assert!(litter(&env).is_empty());
}

#[test]
fn an_uncertain_member_must_be_named() {
    let env = fixture();
    env.edit_config("alpha", |cfg| {
        cfg["members"]
            .as_array_mut()
            .unwrap()
            .push(json!({"agentId": "elise@alpha", "name": "elise"}));
    });
    env.cmd()
        .args(["redeliver", "alise"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "several members are close to 'alise': alice, elise; name the member with --to",
        ));
    let v = run_json(&env, &["status"]);
    let m = &v["misaddressed"][0];
    assert_eq!(
        (m["suggestion"].as_str(), m["certain"].as_bool()),
        (Some("alice"), Some(false))
    );
    assert_eq!(m["candidates"], json!(["alice", "elise"]));
    // A name that wrote to the team itself is a former member more likely than a typo.
    let env = fixture();
    fs::write(
        env.inbox("alpha", "team-lead"),
        json!([{"from": "alise", "text": "hi", "timestamp": "2026-11-29T09:00:00.000Z"}])
            .to_string(),
    )
    .unwrap();
    env.cmd()
        .args(["redeliver", "alise"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("has written to the team itself"));
    let v = run_json(&env, &["redeliver", "alise", "--to", "alice"]);
    assert_eq!(v["moved"].as_array().unwrap().len(), 1);
}

#[test]
fn status_and_doctor_show_it_and_doctor_fix_moves_it() {
    let env = fixture();
    let v = run_json(&env, &["status"]);
    assert_eq!(
        v["misaddressed"],
        json!([{"inbox": "alise", "path": env.inbox("alpha", "alise").to_str().unwrap(),
                "unread": 1, "from": ["worker"], "suggestion": "alice", "certain": true,
                "candidates": ["alice"], "has_sent": false}])
    );
    // A misspelt name is no member: no row of its own (a former member's inbox is one).
    let rows: Vec<&str> = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["name"].as_str())
        .collect();
    assert!(!rows.contains(&"alise"), "{rows:?}");
    env.cmd()
        .arg("status")
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "misaddressed: alise.json holds 1 unread message from 'worker'",
        ))
        .stdout(predicate::str::contains(
            "`teamctl redeliver alise` moves it there",
        ));
    let out = env.cmd().args(["doctor", "--json"]).output().unwrap();
    let v = parse(&out.stdout);
    let warned: Vec<&Value> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["check"] == "misaddressed")
        .collect();
    assert_eq!(warned.len(), 1);
    assert_eq!(warned[0]["level"], "warn");
    assert_eq!(
        warned[0]["fix"],
        "`teamctl redeliver alise` (to alice), or `teamctl doctor --fix`"
    );
    assert_eq!(v["fixed"], json!([]));
    let out = env
        .cmd()
        .args(["doctor", "--fix", "--json"])
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    assert_eq!(
        v["fixed"],
        json!([{"team": "alpha", "inbox": "alise", "to": "alice", "moved": 1,
                "already_delivered": 0, "error": null}])
    );
    // The checks ran after the fix.
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["check"] == "misaddressed" && c["level"] == "ok")
    );
    assert_eq!(
        read_entries(&env.inbox("alpha", "alice"))[0]["text"],
        "SENDTO W1"
    );
    let v = run_json(&env, &["status"]);
    assert_eq!(v["misaddressed"], json!([]));
}

#[test]
fn a_corrupt_source_or_target_is_left_byte_for_byte() {
    for (source, target) in [
        (&b"[{\"from\": \"worker\", \"text\": "[..], &b"[]"[..]),
        (b"{\"not\": \"an array\"}", b"[]"),
        // A lone surrogate: JavaScript's, no Rust string's; moving it would change it.
        (
            b"[{\"from\":\"worker\",\"text\":\"x\\ud800\",\"timestamp\":\"t\"}]",
            b"[]",
        ),
        (WORKER_MSG.as_bytes(), b"[{\"from\": 1,"),
    ] {
        let env = fixture();
        fs::write(env.inbox("alpha", "alise"), source).unwrap();
        fs::write(env.inbox("alpha", "alice"), target).unwrap();
        env.cmd()
            .args(["redeliver", "alise", "--to", "alice"])
            .assert()
            .code(1)
            .stderr(predicate::str::starts_with("error:"));
        assert_eq!(fs::read(env.inbox("alpha", "alise")).unwrap(), source);
        assert_eq!(fs::read(env.inbox("alpha", "alice")).unwrap(), target);
        assert!(litter(&env).is_empty(), "{:?}", litter(&env));
    }
}

#[test]
fn a_fifo_or_symlink_in_an_inbox_place_is_refused_never_followed() {
    let outside = |env: &TestEnv| env.dir.path().join("outside.json");
    for (which, kind) in [
        ("alise", "fifo"),
        ("alise", "symlink"),
        ("alice", "fifo"),
        ("alice", "symlink"),
    ] {
        let env = fixture();
        let place = env.inbox("alpha", which);
        fs::remove_file(&place).unwrap();
        fs::write(outside(&env), WORKER_MSG).unwrap();
        match kind {
            "fifo" => {
                let c = std::ffi::CString::new(place.to_str().unwrap()).unwrap();
                assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            }
            _ => symlink(outside(&env), &place).unwrap(),
        }
        let start = Instant::now();
        let out = env
            .std_cmd()
            .args(["redeliver", "alise", "--to", "alice"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{which} {kind}: it blocked"
        );
        assert_eq!(out.status.code(), Some(1), "{which} {kind}");
        let meta = fs::symlink_metadata(&place).unwrap();
        assert_eq!(
            meta.file_type().is_symlink(),
            kind == "symlink",
            "{which} {kind}"
        );
        assert_eq!(fs::read_to_string(outside(&env)).unwrap(), WORKER_MSG);
        assert!(
            litter(&env).is_empty(),
            "{which} {kind}: {:?}",
            litter(&env)
        );
    }
}

#[test]
fn a_symlinked_inboxes_folder_is_refused() {
    let env = fixture();
    let real = env.dir.path().join("elsewhere");
    fs::rename(env.root.join("teams/alpha/inboxes"), &real).unwrap();
    symlink(&real, env.root.join("teams/alpha/inboxes")).unwrap();
    env.cmd()
        .args(["redeliver", "alise", "--to", "alice"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error:"));
    assert_eq!(
        fs::read_to_string(real.join("alise.json")).unwrap(),
        WORKER_MSG
    );
    assert_eq!(fs::read(real.join("alice.json")).unwrap(), b"[]");
    assert_eq!(fs::read_dir(&real).unwrap().count(), 2);
}

/// Sets a lock directory's mtime 20 s back: what a holder killed 20 s ago leaves.
fn age_lock(path: &Path) {
    let lock = path.with_file_name(format!(
        "{}.lock",
        path.file_name().unwrap().to_str().unwrap()
    ));
    if lock.exists() {
        fs::File::open(&lock)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(20))
            .unwrap();
    }
}

/// A redeliver that stops between its two writes (TEAMCTL_TEST_FAULTS=between_moves), once the
/// message is in alice.json: the test then ends it with `signal`.
fn stopped_between_writes(env: &TestEnv, signal: i32) -> std::process::Output {
    // A SIGTERM ends the pause at once (it stands for no time) and waits for the second write;
    // a SIGKILL comes within it.
    let child = env
        .std_cmd()
        .args(["redeliver", "alise", "--json"])
        .env("TEAMCTL_TEST_FAULTS", "between_moves=30s")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let alice = env.inbox("alpha", "alice");
    let log = env.data_dir().join("sent.jsonl");
    // In alice.json, and journalled (before the rename: docs/design.md).
    assert!(
        wait_until(Duration::from_secs(20), || entries_of(&alice).len() == 1
            && fs::read_to_string(&log)
                .is_ok_and(|l| l.contains("\"to\":\"alice\""))),
        "the message never reached alice.json"
    );
    unsafe { libc::kill(child.id() as i32, signal) };
    child.wait_with_output().unwrap()
}

#[test]
fn killed_between_its_two_writes_then_run_again_moves_exactly_once() {
    let env = fixture();
    let out = stopped_between_writes(&env, libc::SIGKILL);
    assert_eq!(out.status.code(), None);
    // Cut short: in both inboxes, both locks left behind.
    assert_eq!(entries_of(&env.inbox("alpha", "alise")).len(), 1);
    assert_eq!(entries_of(&env.inbox("alpha", "alice")).len(), 1);
    age_lock(&env.inbox("alpha", "alise"));
    age_lock(&env.inbox("alpha", "alice"));
    let v = run_json(&env, &["redeliver", "alise"]);
    assert_eq!(v["moved"], json!([]));
    assert_eq!(v["already_delivered"][0]["text"], "SENDTO W1");
    assert_eq!(
        fs::read_to_string(env.inbox("alpha", "alice")).unwrap(),
        WORKER_MSG
    );
    assert_eq!(fs::read(env.inbox("alpha", "alise")).unwrap(), b"[]");
    assert!(litter(&env).is_empty(), "{:?}", litter(&env));
}

#[test]
fn killed_between_its_two_writes_and_taken_by_its_reader_is_not_sent_again() {
    let env = fixture();
    let out = stopped_between_writes(&env, libc::SIGKILL);
    assert_eq!(out.status.code(), None);
    // alice's Claude Code takes the message (once the dead lock is stale).
    age_lock(&env.inbox("alpha", "alice"));
    env.cmd()
        .args(["inbox", "alice", "--consume"])
        .assert()
        .success();
    assert_eq!(entries_of(&env.inbox("alpha", "alice")).len(), 0);
    age_lock(&env.inbox("alpha", "alise"));
    // The sent log says it was moved: it is only removed from alise.json.
    let v = run_json(&env, &["redeliver", "alise"]);
    assert_eq!(v["moved"], json!([]));
    assert_eq!(v["already_delivered"].as_array().unwrap().len(), 1);
    assert_eq!(entries_of(&env.inbox("alpha", "alice")).len(), 0);
    assert_eq!(fs::read(env.inbox("alpha", "alise")).unwrap(), b"[]");
}

/// A redeliver killed after its journal entry and before its copy of alice.json replaced the
/// file (TEAMCTL_TEST_FAULTS=before_rename), with alice's reader taking all there is meanwhile:
/// the journal names the copy still there, so a rerun knows nothing reached alice and moves
/// the message once, and removes the copy. (Before, the journal came after the target write:
/// a kill between the two, then the reader taking the message, made a rerun deliver it twice.)
#[test]
fn killed_between_its_journal_and_its_target_write_then_run_again_moves_exactly_once() {
    let env = fixture();
    let child = env
        .std_cmd()
        .args(["redeliver", "alise", "--json"])
        .env("TEAMCTL_TEST_FAULTS", "before_rename=30s")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = env.data_dir().join("sent.jsonl");
    assert!(
        wait_until(Duration::from_secs(20), || fs::read_to_string(&log)
            .is_ok_and(|l| l.contains("\"to\":\"alice\""))),
        "the move was never journalled"
    );
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait_with_output().unwrap();
    assert_eq!(entries_of(&env.inbox("alpha", "alice")).len(), 0);
    assert_eq!(
        litter(&env)
            .iter()
            .filter(|n| n.contains(".moving."))
            .count(),
        1
    );
    age_lock(&env.inbox("alpha", "alice"));
    env.cmd()
        .args(["inbox", "alice", "--consume"])
        .assert()
        .success();
    age_lock(&env.inbox("alpha", "alise"));
    let v = run_json(&env, &["redeliver", "alise"]);
    assert_eq!(v["moved"][0]["text"], "SENDTO W1", "{v}");
    assert_eq!(v["already_delivered"], json!([]));
    assert_eq!(
        fs::read_to_string(env.inbox("alpha", "alice")).unwrap(),
        WORKER_MSG
    );
    assert_eq!(fs::read(env.inbox("alpha", "alise")).unwrap(), b"[]");
    assert!(litter(&env).is_empty(), "{:?}", litter(&env));
    // And once more: nothing moves again.
    let v = run_json(&env, &["redeliver", "alise"]);
    assert_eq!(
        (v["moved"].clone(), v["already_delivered"].clone()),
        (json!([]), json!([]))
    );
}

#[test]
fn sigterm_between_its_two_writes_lets_the_move_finish() {
    let env = fixture();
    let out = stopped_between_writes(&env, libc::SIGTERM);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{stderr}");
    assert_eq!(
        fs::read_to_string(env.inbox("alpha", "alice")).unwrap(),
        WORKER_MSG,
        "{stderr}"
    );
    assert_eq!(
        fs::read_to_string(env.inbox("alpha", "alise")).unwrap(),
        "[]",
        "{stderr} {:?}",
        litter(&env)
    );
    assert!(litter(&env).is_empty(), "{:?}", litter(&env));
}

/// How many messages each side writes in the stress test: `TEAMCTL_STRESS_COUNT`, else 60.
fn stress_count() -> usize {
    std::env::var("TEAMCTL_STRESS_COUNT")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(60)
}

/// Claude Code-style writers append to alise.json (a misspelt name) and to alice.json, and
/// alice's Claude Code-style reader consumes alice.json, while two redeliver loops move
/// alise.json to alice: every message ends up exactly once (consumed, or still in alice.json),
/// unaltered, alise.json ends empty, and no lock or temp file is left. The writers retry on a
/// lock they cannot get within proper-lockfile's 0.65 s, where Claude Code would drop the
/// message: those retries are counted and must be none.
#[test]
fn redeliver_racing_claude_code_writers_and_reader_loses_and_doubles_nothing() {
    let Some(script) = node_peer() else { return };
    let env = fixture();
    fs::write(env.inbox("alpha", "alise"), "[]").unwrap();
    let (alise, alice) = (env.inbox("alpha", "alise"), env.inbox("alpha", "alice"));
    let (alise_s, alice_s) = (alise.to_str().unwrap(), alice.to_str().unwrap());
    let stop = env.dir.path().join("stop");
    let n = stress_count().to_string();
    let consumer = peer(
        &script,
        &["consume", alice_s, "--stop-file", stop.to_str().unwrap()],
    )
    .spawn()
    .unwrap();
    let writers: Vec<Child> = [
        (alise_s, "misspelt-"),
        (alise_s, "misspelt2-"),
        (alice_s, "direct-"),
    ]
    .into_iter()
    .map(|(inbox, prefix)| {
        peer(
            &script,
            &[
                "append", inbox, "--from", "worker", "--count", &n, "--prefix", prefix,
            ],
        )
        .spawn()
        .unwrap()
    })
    .collect();
    let done = AtomicBool::new(false);
    let moves = AtomicUsize::new(0);
    let runs = AtomicUsize::new(0);
    let (sent, retries) = std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while !done.load(SeqCst) {
                    let out = env
                        .std_cmd()
                        .args(["redeliver", "alise", "--to", "alice", "--json"])
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let moved = parse(&out.stdout)["moved"].as_array().unwrap().len();
                    moves.fetch_add(moved, SeqCst);
                    runs.fetch_add(1, SeqCst);
                }
            });
        }
        let mut sent: HashMap<String, String> = HashMap::new();
        let mut retries = 0;
        for w in writers {
            let out = w.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            retries += String::from_utf8_lossy(&out.stderr)
                .matches("lock_retry")
                .count();
            for line in json_lines(&out.stdout) {
                sent.insert(
                    line["msg_id"].as_str().unwrap().into(),
                    line["text"].as_str().unwrap().into(),
                );
            }
        }
        done.store(true, SeqCst);
        (sent, retries)
    });
    assert_eq!(sent.len(), 3 * stress_count());
    // What the writers added after the loops' last pass.
    let last = run_json(&env, &["redeliver", "alise", "--to", "alice"]);
    let moved = moves.load(SeqCst) + last["moved"].as_array().unwrap().len();
    fs::write(&stop, "").unwrap();
    let out = consumer.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let consumed = json_lines(&out.stdout);
    let left = entries_of(&alice);
    assert_exactly_once(
        Sent::ById(&sent),
        consumed.iter().map(|c| &c["entry"]).chain(left.iter()),
    );
    assert_eq!(
        moved,
        2 * stress_count(),
        "every misspelt message moved once"
    );
    assert_eq!(fs::read(&alise).unwrap(), b"[]");
    assert!(litter(&env).is_empty(), "{:?}", litter(&env));
    eprintln!(
        "stress: {} messages, {} redeliver runs moved {moved}, {} consumed by the reader, \
         {} writer lock retries (each a message Claude Code would have dropped)",
        sent.len(),
        runs.load(SeqCst) + 1,
        consumed.len(),
        retries
    );
}
