//! Library-level guarantees seen from outside: concurrent appends lose nothing.

use std::collections::HashSet;

use crate::common::{Sent, TestEnv, assert_exactly_once, concurrent_runs, read_entries};

#[test]
fn eight_processes_times_fifty_sends_give_exactly_400_entries() {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", None)]);
    concurrent_runs(&env, 8, 50, |p, i| {
        let (text, from) = (format!("p{p}-m{i}"), format!("w{p}"));
        ["send", "alice", &text, "--from", &from]
            .map(String::from)
            .to_vec()
    });
    let entries = read_entries(&env.inbox("alpha", "alice"));
    assert_eq!(entries.len(), 400);
    let ids: HashSet<&str> = entries
        .iter()
        .map(|e| e["msg_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 400);
    let sent: Vec<String> = (0..8)
        .flat_map(|p| (0..50).map(move |i| format!("p{p}-m{i}")))
        .collect();
    assert_exactly_once(Sent::Texts(&sent), &entries);
    // Each sender's messages are in the order it sent them.
    for p in 0..8 {
        let mine: Vec<&str> = entries
            .iter()
            .filter(|e| e["from"] == format!("w{p}"))
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        let want: Vec<String> = (0..50).map(|i| format!("p{p}-m{i}")).collect();
        assert_eq!(mine, want);
    }
}
