//! Many writers finding the same stale lock at once (issue 27): the lock directory's holder
//! died 30 s ago and eight senders start together. Each must either fail (non-zero exit) or
//! have its message in the inbox exactly once; with the fix every send exits 0. Two mixes:
//! eight `teamctl send`, and four `teamctl send` with four proper-lockfile writers (the Node
//! peer, Claude Code's lock library). In every other round some senders pause between
//! finding the lock stale and acting on it, and between making their lock and marking it
//! theirs (`TEAMCTL_TEST_FAULTS=before_reclaim,after_mkdir`), which widens the race's windows
//! from microseconds to milliseconds. A round that loses or doubles a message teamctl
//! acknowledged is told in full, each send's lock steps included (`trace`). Rounds:
//! `TEAMCTL_STRESS_ROUNDS` (CI runs a few; the long run is in docs/development.md).

use std::collections::HashMap;
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::common::{TestEnv, json, json_lines, make_stale, node_peer, read_entries};

const TEAM: &str = "race";

/// The rounds to run: `TEAMCTL_STRESS_ROUNDS`, else `ci`.
fn rounds(ci: usize) -> usize {
    std::env::var("TEAMCTL_STRESS_ROUNDS")
        .ok()
        .map(|v| v.parse().expect("TEAMCTL_STRESS_ROUNDS is a number"))
        .unwrap_or(ci)
}

/// What the rounds did, counted.
#[derive(Debug, Default)]
struct Tally {
    rounds: usize,
    teamctl_sent: usize,
    teamctl_ok: usize,
    /// Non-zero exits by code, and the first stderr of each.
    teamctl_failed: HashMap<i32, (usize, String)>,
    teamctl_lost: Vec<String>,
    peer_ok: usize,
    peer_lost: Vec<String>,
    duplicated: Vec<String>,
    /// The story of the first rounds that lost or doubled a message teamctl acknowledged: the
    /// inbox in order, and every writer's outcome with teamctl's lock steps
    /// (`TEAMCTL_TEST_FAULTS=trace`), so that a rare failure in CI explains itself.
    reports: Vec<String>,
}

/// A writer started for one round, and what it acknowledged.
enum Writer {
    Teamctl(Output),
    Peer(Output),
}

/// Runs `rounds` rounds of `teamctl` senders and `peers` Node writers on one inbox whose lock
/// directory is 30 s stale at the start of each round; the inbox is emptied between rounds.
fn stress(teamctl: usize, peers: usize, rounds: usize) -> Tally {
    let script = if peers > 0 { node_peer() } else { None };
    assert!(peers == 0 || script.is_some() || std::env::var_os("CI").is_none());
    let peers = if script.is_some() { peers } else { 0 };
    let env = TestEnv::new();
    env.team(TEAM, &[("alice", None)]);
    let inbox = env.inbox(TEAM, "alice");
    let lock = inbox.with_file_name("alice.json.lock");
    let mut tally = Tally::default();
    let started = Instant::now();
    for round in 0..rounds {
        fs::write(&inbox, "[]").unwrap();
        make_stale(&lock, Duration::from_secs(30));
        let writers = one_round(&env, &inbox, script.as_deref(), teamctl, peers, round);
        check_round(&inbox, &writers, round, &mut tally);
        assert!(
            !lock.exists(),
            "round {round}: a lock directory was left behind"
        );
        tally.rounds += 1;
    }
    eprintln!(
        "{teamctl} teamctl + {peers} proper-lockfile writers, {} rounds in {:.1} s: {}",
        tally.rounds,
        started.elapsed().as_secs_f64(),
        tally.summary()
    );
    tally
}

impl Tally {
    /// The counts, the ids, and the reports of the rounds that failed, to read in a log.
    fn story(&self) -> String {
        format!(
            "{}\nlost {:?}, duplicated {:?}, failed {:?}\n{}",
            self.summary(),
            self.teamctl_lost,
            self.duplicated,
            self.teamctl_failed,
            self.reports.join("\n")
        )
    }

    /// The counts, one line.
    fn summary(&self) -> String {
        let failed: Vec<String> = self
            .teamctl_failed
            .iter()
            .map(|(code, (n, _))| format!("{n} exit {code}"))
            .collect();
        format!(
            "teamctl: {} sent, {} exit 0, failed [{}], {} acknowledged and lost; peer: {} \
             acknowledged, {} lost; {} duplicated",
            self.teamctl_sent,
            self.teamctl_ok,
            failed.join(", "),
            self.teamctl_lost.len(),
            self.peer_ok,
            self.peer_lost.len(),
            self.duplicated.len()
        )
    }
}

/// Starts every writer of one round together and waits for all of them.
fn one_round(
    env: &TestEnv,
    inbox: &Path,
    script: Option<&Path>,
    teamctl: usize,
    peers: usize,
    round: usize,
) -> Vec<Writer> {
    // Node takes tens of milliseconds to start, teamctl a few: the peers are started first and
    // told the wall-clock moment to begin at, shifted 0-8 ms from round to round so that every
    // ordering of the two kinds of writer comes up; teamctl is started at that moment.
    let epoch_ms = |t: SystemTime| t.duration_since(UNIX_EPOCH).unwrap().as_millis() as u64;
    let lead = Duration::from_millis(if peers > 0 { 300 } else { 0 });
    let start_wall = SystemTime::now() + lead;
    let start = Instant::now() + lead;
    let barrier = Barrier::new(teamctl);
    thread::scope(|s| {
        let peer_handles: Vec<_> = (0..peers)
            .map(|k| {
                let mut c = Command::new("node");
                c.arg(script.unwrap())
                    .args(["append", inbox.to_str().unwrap(), "--from", "bob"])
                    .args(["--count", "1", "--prefix", &format!("peer-{round}-{k}-")])
                    .args([
                        "--at",
                        &(epoch_ms(start_wall) + (round % 9) as u64).to_string(),
                    ])
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let child = c.spawn().unwrap();
                s.spawn(move || Writer::Peer(child.wait_with_output().unwrap()))
            })
            .collect();
        let teamctl_handles: Vec<_> = (0..teamctl)
            .map(|k| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    thread::sleep(start.saturating_duration_since(Instant::now()));
                    let text = format!("teamctl-{round}-{k}");
                    let mut cmd = env.std_cmd();
                    cmd.args(["send", "alice", &text, "--json", "--lock-timeout", "30s"]);
                    // Every other round, some senders pause between finding the lock stale and
                    // acting on it, and between making their lock and marking it ours, as a
                    // descheduled process does: the windows of the race, a few microseconds
                    // wide otherwise. Every sender records its lock's steps for the report.
                    let faults = if round % 2 == 1 {
                        format!("trace,before_reclaim={}ms,after_mkdir={}ms", k % 4, k % 2)
                    } else {
                        "trace".to_string()
                    };
                    cmd.env("TEAMCTL_TEST_FAULTS", faults);
                    let out = cmd.output().unwrap();
                    Writer::Teamctl(out)
                })
            })
            .collect();
        peer_handles
            .into_iter()
            .chain(teamctl_handles)
            .map(|h| h.join().unwrap())
            .collect()
    })
}

/// Counts the round's outcome: every acknowledged message must be in the inbox once.
fn check_round(inbox: &Path, writers: &[Writer], round: usize, tally: &mut Tally) {
    let entries = read_entries(inbox);
    let mut seen: HashMap<String, usize> = HashMap::new();
    for e in &entries {
        *seen
            .entry(e["msg_id"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let (lost, duplicated) = (tally.teamctl_lost.len(), tally.duplicated.len());
    tally.duplicated.extend(
        seen.iter()
            .filter(|(_, n)| **n > 1)
            .map(|(id, _)| id.clone()),
    );
    for w in writers {
        match w {
            Writer::Teamctl(out) => {
                tally.teamctl_sent += 1;
                if !out.status.success() {
                    let code = out.status.code().unwrap_or(-1);
                    let e = tally
                        .teamctl_failed
                        .entry(code)
                        .or_insert_with(|| (0, String::from_utf8_lossy(&out.stderr).into()));
                    e.0 += 1;
                    continue;
                }
                tally.teamctl_ok += 1;
                let id = json(&out.stdout)["id"].as_str().unwrap().to_string();
                if !seen.contains_key(&id) {
                    tally.teamctl_lost.push(id);
                }
            }
            Writer::Peer(out) => {
                assert!(
                    out.status.success(),
                    "peer: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                for line in json_lines(&out.stdout) {
                    tally.peer_ok += 1;
                    let id = line["msg_id"].as_str().unwrap().to_string();
                    if !seen.contains_key(&id) {
                        tally.peer_lost.push(id);
                    }
                }
            }
        }
    }
    let failed = tally.teamctl_lost.len() > lost || tally.duplicated.len() > duplicated;
    if failed && tally.reports.len() < 3 {
        tally.reports.push(round_report(round, &entries, writers));
    }
}

/// One round's story for [`Tally::reports`]: the inbox's messages in order, then each writer's
/// exit, what it acknowledged, and its stderr (teamctl's lock steps, stamped in nanoseconds).
fn round_report(round: usize, entries: &[serde_json::Value], writers: &[Writer]) -> String {
    let inbox: Vec<&str> = entries
        .iter()
        .map(|e| e["text"].as_str().unwrap_or("?"))
        .collect();
    let mut report = format!("round {round}: inbox {inbox:?}\n");
    for w in writers {
        let (kind, out) = match w {
            Writer::Teamctl(out) => ("teamctl", out),
            Writer::Peer(out) => ("peer", out),
        };
        report.push_str(&format!(
            "{kind} {}: {}{}\n",
            out.status,
            String::from_utf8_lossy(&out.stdout).trim_end(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    report
}

/// Eight `teamctl send` on a 30 s stale lock: no acknowledged message lost or doubled, and
/// every send succeeds.
#[test]
fn stale_lock_eight_teamctl_senders_lose_nothing() {
    let t = stress(8, 0, rounds(25));
    assert!(t.teamctl_lost.is_empty(), "lost: {}", t.story());
    assert!(t.duplicated.is_empty(), "duplicated: {}", t.story());
    assert!(t.teamctl_failed.is_empty(), "failed: {}", t.story());
    assert_eq!(t.teamctl_ok, 8 * t.rounds);
}

/// Four `teamctl send` and four proper-lockfile writers on a 30 s stale lock: no message
/// teamctl acknowledged is lost or doubled, and every send succeeds.
#[test]
fn stale_lock_teamctl_and_proper_lockfile_writers_lose_nothing() {
    let t = stress(4, 4, rounds(10));
    assert!(t.teamctl_lost.is_empty(), "lost: {}", t.story());
    assert!(t.duplicated.is_empty(), "duplicated: {}", t.story());
    assert!(t.teamctl_failed.is_empty(), "failed: {}", t.story());
    assert_eq!(t.teamctl_ok, 4 * t.rounds);
}

/// Plays a writer that reclaimed our lock while we held it (as proper-lockfile does when it
/// acts on a stat of the stale lock from before ours): it removes our lock directory, makes its
/// own with proper-lockfile's mtime, renames `bytes` over the inbox, and releases.
fn take_over_and_write(inbox: &Path, bytes: &[u8]) {
    let lock = inbox.with_file_name(format!(
        "{}.lock",
        inbox.file_name().unwrap().to_str().unwrap()
    ));
    fs::remove_dir(&lock).unwrap();
    fs::create_dir(&lock).unwrap();
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let mtime = UNIX_EPOCH + Duration::from_millis(ms.div_ceil(1000) * 1000 + 5);
    fs::File::open(&lock).unwrap().set_modified(mtime).unwrap();
    let tmp = inbox.with_file_name("taker.tmp");
    fs::write(&tmp, bytes).unwrap();
    fs::rename(&tmp, inbox).unwrap();
    fs::remove_dir(&lock).unwrap();
}

/// A send whose lock another writer takes over after its rename: the other writer's copy
/// (read before our rename) drops our message, or (read after it) keeps it. Either way the
/// send takes the lock again, finds or re-appends its message, and exits 0 with the message
/// in the inbox exactly once.
#[test]
fn a_send_whose_lock_is_taken_over_after_its_write_still_delivers_once() {
    for copy_has_ours in [false, true] {
        let env = TestEnv::new();
        env.team(TEAM, &[("alice", None)]);
        let inbox = env.inbox(TEAM, "alice");
        env.cmd()
            .args(["send", "alice", "earlier"])
            .assert()
            .success();
        let before = fs::read(&inbox).unwrap();
        let child = env
            .std_cmd()
            .args(["send", "alice", "ours", "--json"])
            .env("TEAMCTL_TEST_FAULTS", "before_verify=2s")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The rename has happened once our message is in the file.
        assert!(crate::common::wait_until(Duration::from_secs(10), || {
            fs::read_to_string(&inbox).is_ok_and(|s| s.contains("\"ours\""))
        }));
        let copy = if copy_has_ours {
            fs::read(&inbox).unwrap()
        } else {
            before.clone()
        };
        take_over_and_write(&inbox, &copy);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{copy_has_ours}: {stderr}");
        let id = json(&out.stdout)["id"].as_str().unwrap().to_string();
        let entries = read_entries(&inbox);
        let texts: Vec<&str> = entries
            .iter()
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert_eq!(texts, ["earlier", "ours"], "{copy_has_ours}");
        assert_eq!(entries[1]["msg_id"], id.as_str());
        assert!(!inbox.with_file_name("alice.json.lock").exists());
    }
}

/// A change that is not an append (`inbox --consume`) whose lock is taken over after its
/// write cannot be safely made again: exit 4, saying so, and the other writer's file is kept.
#[test]
fn a_rewrite_whose_lock_is_taken_over_after_its_write_gives_exit_4() {
    let env = TestEnv::new();
    env.team(TEAM, &[("alice", None)]);
    let inbox = env.inbox(TEAM, "alice");
    env.cmd().args(["send", "alice", "one"]).assert().success();
    let before = fs::read(&inbox).unwrap();
    let child = env
        .std_cmd()
        .args(["inbox", "alice", "--consume"])
        .env("TEAMCTL_TEST_FAULTS", "before_verify=2s")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    assert!(crate::common::wait_until(Duration::from_secs(10), || {
        fs::read_to_string(&inbox).is_ok_and(|s| s == "[]")
    }));
    take_over_and_write(&inbox, &before);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("taken over by another writer"), "{stderr}");
    assert_eq!(fs::read(&inbox).unwrap(), before);
}

/// `TEAMCTL_TEST_FAULTS=trace` tells a send's lock steps on stderr at exit, in order: here a
/// stale lock found, reclaimed under the folder lock, ours held, the append, the release.
#[test]
fn a_traced_send_tells_its_lock_steps() {
    let env = TestEnv::new();
    env.team(TEAM, &[("alice", None)]);
    let inbox = env.inbox(TEAM, "alice");
    make_stale(
        &inbox.with_file_name("alice.json.lock"),
        Duration::from_secs(30),
    );
    let out = env
        .std_cmd()
        .args(["send", "alice", "traced", "--json"])
        .env("TEAMCTL_TEST_FAULTS", "trace")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let steps: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("teamctl trace: "))
        .map(|l| l.split_once(' ').unwrap().1)
        .collect();
    let expected = [
        "mkdir: exists; stat: ino ",
        "reclaim (folder lock held): stat: ino ",
        "reclaim: rmdir",
        "reclaim: mkdir: made",
        "held: ino ",
        "check: ino ",
        "append: renamed after ",
        "append: read back: ok",
        "check: ino ",
        "released: rmdir",
    ];
    assert_eq!(steps.len(), expected.len(), "{stderr}");
    for (step, want) in steps.iter().zip(expected) {
        assert!(step.starts_with(want), "{step:?} is not {want:?}: {stderr}");
    }
    assert!(steps[0].ends_with("stale true"), "{stderr}");
    assert_eq!(read_entries(&inbox).len(), 1);
}
