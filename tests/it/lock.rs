//! The lock directory protocol, seen from the command line.

use std::fs::{self, File};
use std::thread;
use std::time::{Duration, SystemTime};

use predicates::prelude::*;

use crate::common::{TestEnv, read_entries};

fn lock_dir(env: &TestEnv) -> std::path::PathBuf {
    env.root
        .join("teams/demo-team/inboxes/researcher.json.lock")
}

#[test]
fn stale_lock_is_reclaimed() {
    let env = TestEnv::example();
    let lock = lock_dir(&env);
    fs::create_dir(&lock).unwrap();
    File::open(&lock)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(20))
        .unwrap();
    env.cmd()
        .args(["send", "researcher", "hi"])
        .assert()
        .success();
    assert!(!lock.exists());
    assert_eq!(read_entries(&env.inbox("demo-team", "researcher")).len(), 3);
}

#[test]
fn live_lock_is_waited_for() {
    let env = TestEnv::example();
    let lock = lock_dir(&env);
    fs::create_dir(&lock).unwrap();
    let holder = {
        let lock = lock.clone();
        // Another writer holding the lock for 300 ms.
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(300));
            fs::remove_dir(&lock).unwrap();
        })
    };
    env.cmd()
        .args(["send", "researcher", "hi"])
        .assert()
        .success();
    holder.join().unwrap();
    assert_eq!(read_entries(&env.inbox("demo-team", "researcher")).len(), 3);
}

#[test]
fn lock_held_past_the_timeout_gives_exit_3_and_no_write() {
    let env = TestEnv::example();
    let inbox = env.inbox("demo-team", "researcher");
    let before = fs::read(&inbox).unwrap();
    let lock = lock_dir(&env);
    fs::create_dir(&lock).unwrap();
    env.cmd()
        .args(["send", "researcher", "hi", "--lock-timeout", "200ms"])
        .assert()
        .code(3)
        .stderr(predicate::str::starts_with("error: could not lock"));
    assert_eq!(fs::read(&inbox).unwrap(), before);
    assert!(
        lock.is_dir(),
        "a lock teamctl does not hold is never removed"
    );
    // Also for --consume.
    env.cmd()
        .args([
            "inbox",
            "researcher",
            "--consume",
            "--lock-timeout",
            "100ms",
        ])
        .assert()
        .code(3);
    assert_eq!(fs::read(&inbox).unwrap(), before);
}

#[test]
fn a_lock_file_that_is_not_a_directory_is_reported_and_kept() {
    let env = TestEnv::example();
    let inbox = env.inbox("demo-team", "researcher");
    let before = fs::read(&inbox).unwrap();
    fs::write(lock_dir(&env), "flock").unwrap();
    env.cmd()
        .args(["send", "researcher", "hi"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "researcher.json.lock exists but is not a lock directory",
        ));
    assert_eq!(fs::read(lock_dir(&env)).unwrap(), b"flock");
    assert_eq!(fs::read(&inbox).unwrap(), before);
}

#[test]
fn sigterm_while_waiting_exits_cleanly_without_touching_the_foreign_lock() {
    let env = TestEnv::example();
    let lock = lock_dir(&env);
    fs::create_dir(&lock).unwrap();
    let mut child = env
        .std_cmd()
        .args(["send", "researcher", "hi", "--lock-timeout", "30s"])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Its signal thread exists once the handlers are installed.
    let inbox = env.inbox("demo-team", "researcher");
    assert!(crate::common::wait_until(Duration::from_secs(10), || {
        crate::common::threads(child.id()) >= 2
    }));
    let before = fs::read(&inbox).unwrap();
    kill(child.id(), "TERM");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(lock.is_dir());
    assert_eq!(fs::read(&inbox).unwrap(), before);
}

fn kill(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// teamctl's own OS locks never hang a command: with the sent log's lock held by another
/// process (as a teamctl stopped with Ctrl-Z in the middle of a write would hold it), `send`
/// still writes the message, warns after [`OWN_LOCK_WAIT`] that it could not log it and says
/// why, and exits 0; a reader of the log (`inbox --sent`) takes no lock and answers at once.
#[test]
fn a_held_sent_log_lock_never_hangs_a_command() {
    let env = TestEnv::example();
    env.cmd()
        .args(["send", "researcher", "first"])
        .assert()
        .success();
    let log = env.data_dir().join("sent.jsonl");
    let held = File::open(&log).unwrap();
    held.lock().unwrap();
    env.cmd()
        .args(["inbox", "--sent"])
        .timeout(Duration::from_secs(8))
        .assert()
        .success()
        .stdout(predicate::str::contains("first"));
    let t = std::time::Instant::now();
    env.cmd()
        .args(["send", "researcher", "second"])
        .timeout(Duration::from_secs(60))
        .assert()
        .success()
        .stderr(predicate::str::contains("could not write the sent log"))
        .stderr(predicate::str::contains("Ctrl-Z"));
    assert!(t.elapsed() >= Duration::from_secs(10), "{:?}", t.elapsed());
    let texts: Vec<String> = read_entries(&env.inbox("demo-team", "researcher"))
        .iter()
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert!(texts.iter().any(|t| t == "second"), "{texts:?}");
    drop(held);
}
