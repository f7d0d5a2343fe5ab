//! Interop with Claude Code's lock library: the npm package `proper-lockfile` (the one Claude
//! Code 2.1.112 bundles; 2.1.332 re-implements it with the same on-disk behaviour), driven by
//! the Node peer in `tests/peer/`.

use std::collections::HashMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::process::Child;

use crate::common::{
    Sent, TestEnv, assert_exactly_once, concurrent_runs, json, json_lines, node_peer, peer,
    read_entries,
};

/// teamctl senders, proper-lockfile writers and a proper-lockfile consumer on one inbox at
/// once: every message ends up exactly once, either still in the file or consumed.
#[test]
fn teamctl_and_proper_lockfile_writers_and_consumer_lose_nothing() {
    let Some(script) = node_peer() else { return };
    let env = TestEnv::new();
    env.team("alpha", &[("alice", None)]);
    let inbox = env.inbox("alpha", "alice");
    let inbox_s = inbox.to_str().unwrap();
    let stop = env.dir.path().join("stop");
    fs::write(&inbox, "[]").unwrap();

    let consumer = peer(
        &script,
        &["consume", inbox_s, "--stop-file", stop.to_str().unwrap()],
    )
    .spawn()
    .unwrap();
    let writers: Vec<Child> = (0..2)
        .map(|w| {
            let prefix = format!("peer{w}-");
            peer(
                &script,
                &[
                    "append", inbox_s, "--from", "bob", "--count", "100", "--prefix", &prefix,
                ],
            )
            .spawn()
            .unwrap()
        })
        .collect();
    let mut sent: HashMap<String, String> = HashMap::new();
    let runs = concurrent_runs(&env, 4, 40, |t, i| {
        let text = format!("teamctl{t}-{i}");
        ["send", "alice", &text, "--json", "--lock-timeout", "30s"]
            .map(String::from)
            .to_vec()
    });
    let teamctl_ids = runs.iter().enumerate().flat_map(|(t, outs)| {
        outs.iter().enumerate().map(move |(i, out)| {
            (
                json(out)["id"].as_str().unwrap().to_string(),
                format!("teamctl{t}-{i}"),
            )
        })
    });
    sent.extend(teamctl_ids);
    for w in writers {
        let out = w.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for line in json_lines(&out.stdout) {
            sent.insert(
                line["msg_id"].as_str().unwrap().into(),
                line["text"].as_str().unwrap().into(),
            );
        }
    }
    assert_eq!(sent.len(), 360);
    fs::write(&stop, "").unwrap();
    let out = consumer.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let consumed = json_lines(&out.stdout);
    let left = read_entries(&inbox);
    assert_exactly_once(
        Sent::ById(&sent),
        consumed.iter().map(|c| &c["entry"]).chain(left.iter()),
    );
    assert!(!consumed.is_empty(), "the consumer took part");
    let dir = inbox.parent().unwrap();
    let stray: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "alice.json")
        .collect();
    assert!(stray.is_empty(), "left behind: {stray:?}");
}

/// proper-lockfile sees teamctl's lock and teamctl sees proper-lockfile's: a lock held 300 ms
/// by the peer is waited for; one held past --lock-timeout gives exit 3 and no write.
#[test]
fn proper_lockfile_locks_are_respected() {
    let Some(script) = node_peer() else { return };
    let env = TestEnv::example();
    let inbox = env.inbox("demo-team", "researcher");
    let inbox_s = inbox.to_str().unwrap().to_string();

    let hold = |ms: &str| {
        let mut child = peer(&script, &["hold", &inbox_s, "--ms", ms])
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(first.contains("\"locked\""), "{first}");
        child
    };

    let holder = hold("300");
    env.cmd()
        .args(["send", "researcher", "after the peer"])
        .assert()
        .success();
    assert!(holder.wait_with_output().unwrap().status.success());
    assert_eq!(read_entries(&inbox).len(), 3);

    let before = fs::read(&inbox).unwrap();
    let mut holder = hold("5000");
    env.cmd()
        .args(["send", "researcher", "too soon", "--lock-timeout", "200ms"])
        .assert()
        .code(3);
    assert_eq!(fs::read(&inbox).unwrap(), before);
    holder.kill().unwrap();
    let _ = holder.wait();

    // The lock directory teamctl takes is the one proper-lockfile checks.
    let lock = inbox.with_file_name("researcher.json.lock");
    let _ = fs::remove_dir(&lock); // the killed peer may have had no time to release
    fs::create_dir(&lock).unwrap();
    let out = peer(&script, &["check", &inbox_s]).output().unwrap();
    assert_eq!(json_lines(&out.stdout)[0]["locked"], true);
    fs::remove_dir(&lock).unwrap();
}
