//! Crash and fault tests: teamctl killed mid-send, stale locks and temp files it leaves,
//! signals while it holds a lock, an unwritable or full file system, a torn `config.json`, and
//! a writer that ignores locks. Exact points inside a write are reached with the test-only
//! `TEAMCTL_TEST_FAULTS` delays; kills at random moments cover everything in between.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{Sent, TestEnv, assert_exactly_once, json, read_entries, wait_until};

const TEAM: &str = "crash";

fn env() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    env.team(TEAM, &[("alice", None)]);
    let inbox = env.inbox(TEAM, "alice");
    (env, inbox)
}

fn lock_of(inbox: &Path) -> PathBuf {
    PathBuf::from(format!("{}.lock", inbox.display()))
}

/// The `<inbox>.tmp.*` files next to `inbox`.
fn temps(inbox: &Path) -> Vec<PathBuf> {
    let prefix = format!("{}.tmp.", inbox.file_name().unwrap().to_str().unwrap());
    let mut v: Vec<PathBuf> = fs::read_dir(inbox.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_str().unwrap().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

fn set_age(path: &Path, age: Duration) {
    File::open(path)
        .unwrap()
        .set_modified(SystemTime::now() - age)
        .unwrap();
}

fn signal(pid: u32, sig: &str) {
    let ok = std::process::Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill -{sig} {pid}");
}

fn spawn_send(env: &TestEnv, text: &str, faults: &str) -> Child {
    let mut cmd = env.std_cmd();
    cmd.args(["send", "alice", text, "--lock-timeout", "30s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if !faults.is_empty() {
        cmd.env("TEAMCTL_TEST_FAULTS", faults);
    }
    cmd.spawn().unwrap()
}

/// A tiny xorshift generator: kill moments differ per run, and the seed is printed.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1;
        eprintln!("kill-moment seed: {seed}");
        Rng(seed)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Every message whose send exited 0 is in the inbox exactly once, the inbox parses and is
/// in `JSON.stringify(x, null, 2)` layout, and no message appears twice.
fn check_inbox(inbox: &Path, acknowledged: &[String]) {
    if !inbox.exists() && acknowledged.is_empty() {
        // Killed before its first send created the inbox.
        return;
    }
    let bytes = fs::read(inbox).unwrap();
    assert!(
        teamctl::store::format::canonical_inbox(&bytes).is_some(),
        "inbox is not a canonical JSON array of objects: {}",
        String::from_utf8_lossy(&bytes)
    );
    assert_exactly_once(Sent::Texts(acknowledged), &read_entries(inbox));
}

/// 200 sends, each SIGKILLed at a random moment in one of four phases: before the lock, while
/// it holds the lock, between the temp write and the rename, or anywhere. After every
/// kill the inbox parses and holds every acknowledged message; a lock or temp file the killed
/// process left is aged past its staleness limit (as if time passed) and the next send must
/// succeed and clean it up.
#[test]
fn kill_mid_send_200_times() {
    let (env, inbox) = env();
    let lock = lock_of(&inbox);
    let mut rng = Rng::new();
    let mut acknowledged = Vec::new();
    let mut left = HashMap::from([("lock", 0), ("temp", 0), ("exit_0", 0), ("nothing", 0)]);
    for i in 0..200 {
        let text = format!("killed-{i}");
        let phase = i % 4;
        let faults = match phase {
            0 => "before_lock=300ms",
            1 => "after_lock=300ms",
            2 => "before_rename=300ms",
            _ => "",
        };
        let mut child = spawn_send(&env, &text, faults);
        match phase {
            // Holding the lock: it exists (fresh) and the process is still inside the write.
            1 => {
                assert!(wait_until(Duration::from_secs(10), || lock.is_dir()));
                thread::sleep(Duration::from_millis(rng.below(200)));
            }
            // Between the temp write and the rename.
            2 => assert!(wait_until(Duration::from_secs(10), || !temps(&inbox).is_empty())),
            // Before the lock: starting, reading config.json, creating the inbox, or waiting.
            0 => thread::sleep(Duration::from_micros(rng.below(100_000))),
            // Anywhere: during start-up or anywhere in a fast send.
            _ => thread::sleep(Duration::from_micros(rng.below(20_000))),
        }
        child.kill().unwrap();
        let status = child.wait().unwrap();
        if status.success() {
            *left.get_mut("exit_0").unwrap() += 1;
            acknowledged.push(text);
        }
        check_inbox(&inbox, &acknowledged);

        let stale_lock = lock.exists();
        let stale_temps = temps(&inbox);
        if phase == 0 {
            assert!(
                !status.success() && !stale_lock,
                "phase 0 is killed before the lock"
            );
        }
        if !stale_lock && stale_temps.is_empty() && !status.success() {
            *left.get_mut("nothing").unwrap() += 1;
        }
        if stale_lock {
            *left.get_mut("lock").unwrap() += 1;
            set_age(&lock, Duration::from_secs(11));
        }
        for t in &stale_temps {
            *left.get_mut("temp").unwrap() += 1;
            set_age(t, Duration::from_secs(61));
        }
        if stale_lock || !stale_temps.is_empty() {
            // The next send is not blocked by the dead writer's lock and cleans its temp file.
            let text = format!("after-{i}");
            env.cmd()
                .args(["send", "alice", &text, "--lock-timeout", "2s"])
                .assert()
                .success();
            acknowledged.push(text);
            assert!(!lock.exists(), "lock released after the next send");
            assert_eq!(
                temps(&inbox),
                Vec::<PathBuf>::new(),
                "stale temp file removed"
            );
            check_inbox(&inbox, &acknowledged);
        }
    }
    eprintln!("left behind by killed sends: {left:?}");
    // Phase 0 leaves nothing; phases 1 and 2 always leave a lock (and 2 a temp file) behind.
    assert!(left["nothing"] >= 50, "{left:?}");
    assert!(left["lock"] >= 100, "{left:?}");
    assert!(left["temp"] >= 50, "{left:?}");
}

/// A lock left by a SIGKILLed teamctl blocks others while fresh and stops blocking once it is
/// older than 10 s, in real time: the next send then succeeds.
#[test]
fn lock_of_a_killed_send_stops_blocking_once_stale() {
    let (env, inbox) = env();
    let lock = lock_of(&inbox);
    let mut child = spawn_send(&env, "killed", "after_lock=60s");
    assert!(wait_until(Duration::from_secs(10), || lock.is_dir()));
    child.kill().unwrap();
    child.wait().unwrap();
    let killed_at = Instant::now();
    assert!(lock.is_dir(), "SIGKILL leaves the lock directory behind");
    env.cmd()
        .args(["send", "alice", "too early", "--lock-timeout", "1s"])
        .assert()
        .code(3);
    env.cmd()
        .args(["send", "alice", "after stale", "--lock-timeout", "30s"])
        .assert()
        .success();
    let waited = killed_at.elapsed();
    assert!(
        waited >= Duration::from_secs(8),
        "the lock was reclaimed before it was stale ({waited:?})"
    );
    assert!(!lock.exists());
    let texts: Vec<Value> = read_entries(&inbox)
        .iter()
        .map(|e| e["text"].clone())
        .collect();
    assert_eq!(texts, ["after stale"]);
}

/// SIGINT and SIGTERM while teamctl holds the lock: it finishes the write it started, removes
/// its own lock directory and exits with 128 + the signal.
#[test]
fn sigint_and_sigterm_release_the_lock_teamctl_holds() {
    for (sig, code) in [("INT", 130), ("TERM", 143)] {
        let (env, inbox) = env();
        let lock = lock_of(&inbox);
        let text = format!("signalled {sig}");
        let mut child = spawn_send(&env, &text, "after_lock=500ms");
        assert!(wait_until(Duration::from_secs(10), || lock.is_dir()));
        signal(child.id(), sig);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "SIG{sig}");
        assert!(!lock.exists(), "SIG{sig}: lock directory left behind");
        assert!(temps(&inbox).is_empty());
        check_inbox(&inbox, &[text]);
    }
}

/// A write that cannot finish (stuck holding the lock, here a 60 s pause) does not keep
/// teamctl alive after SIGTERM: it waits at most 5 s, exits 143, and the lock it leaves goes
/// stale for the other writers.
#[test]
fn sigterm_ends_teamctl_even_when_a_write_is_stuck() {
    let (env, inbox) = env();
    let lock = lock_of(&inbox);
    let mut child = spawn_send(&env, "stuck", "after_lock=60s");
    assert!(wait_until(Duration::from_secs(10), || lock.is_dir()));
    let sent_at = Instant::now();
    signal(child.id(), "TERM");
    let ended = wait_until(Duration::from_secs(20), || {
        child.try_wait().unwrap().is_some()
    });
    if !ended {
        child.kill().unwrap();
    }
    assert!(ended, "SIGTERM did not end teamctl");
    assert_eq!(child.wait().unwrap().code(), Some(143));
    assert!(sent_at.elapsed() < Duration::from_secs(15));
    check_inbox(&inbox, &[]);
}

/// A lock held longer than its refresh period gets a fresh mtime while held (5 s, as
/// proper-lockfile's), so no other writer takes it for stale. In the binary its signal thread
/// does this for every lock (the keeper, `store::lock::keep_by_keeper`), not a thread per lock.
#[test]
fn a_lock_held_long_is_refreshed_while_held() {
    let (env, inbox) = env();
    let lock = lock_of(&inbox);
    let mut child = spawn_send(&env, "held long", "after_lock=7s");
    assert!(wait_until(Duration::from_secs(10), || lock.is_dir()));
    // The mtime a lock is given (the next whole second + 5 ms), or the mkdir's just before.
    let taken = fs::metadata(&lock).unwrap().modified().unwrap();
    let refreshed = wait_until(Duration::from_secs(15), || {
        fs::metadata(&lock)
            .and_then(|m| m.modified())
            .is_ok_and(|m| m > taken + Duration::from_secs(3))
    });
    assert!(refreshed, "the held lock's mtime was never refreshed");
    assert!(child.wait().unwrap().success());
    assert!(!lock.exists(), "lock directory left behind");
    check_inbox(&inbox, &["held long".to_string()]);
}

/// Only `<inbox>.tmp.<8 lowercase hex>` regular files older than a minute are removed, and
/// only by a send to that same inbox.
#[test]
fn stale_temp_files_of_teamctls_own_naming_are_cleaned_up() {
    let (env, inbox) = env();
    let dir = inbox.parent().unwrap();
    fs::write(&inbox, "[]").unwrap();
    let make = |name: &str, age: u64| {
        let p = dir.join(name);
        fs::write(&p, "[{").unwrap();
        set_age(&p, Duration::from_secs(age));
        p
    };
    let stale = make("alice.json.tmp.0a1b2c3d", 120);
    let kept = [
        make("alice.json.tmp.deadbeef", 10), // young: may be a live writer's
        make("alice.json.tmp.DEADBEEF", 120), // not our naming (upper case)
        make("alice.json.tmp.1234.abcd", 120), // another tool's naming
        make("alice.json.tmp.0a1b2c3", 120), // seven digits
        make("bob.json.tmp.0a1b2c3d", 120),  // another inbox's temp file
    ];
    fs::create_dir(dir.join("alice.json.tmp.00000000")).unwrap();
    set_age(
        &dir.join("alice.json.tmp.00000000"),
        Duration::from_secs(120),
    );
    env.cmd().args(["send", "alice", "hi"]).assert().success();
    assert!(!stale.exists());
    for k in &kept {
        assert!(k.exists(), "{} was removed", k.display());
    }
    assert!(dir.join("alice.json.tmp.00000000").is_dir());
    assert_eq!(read_entries(&inbox).len(), 1);
}

/// A tmpfs mounted over a folder for the length of a test (needs root or CAP_SYS_ADMIN).
struct Mount(PathBuf);

impl Mount {
    fn tmpfs(at: &Path, opts: &str) -> Option<Mount> {
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(at)
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Mount(at.to_path_buf()))
    }

    fn remount(&self, opts: &str) {
        let ok = std::process::Command::new("mount")
            .args(["-o", &format!("remount,{opts}")])
            .arg(&self.0)
            .status()
            .unwrap()
            .success();
        assert!(ok, "remount {opts}");
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// An inbox of about `kib` KiB in canonical layout.
fn big_inbox(kib: usize) -> String {
    let entries: Vec<Value> = (0..kib)
        .map(|i| serde_json::json!({"from": "x", "text": format!("{i}:{}", "y".repeat(1000))}))
        .collect();
    serde_json::to_string_pretty(&entries).unwrap()
}

/// The send fails with exit 1 and one `error:` line naming `cause`; the inbox bytes, and the
/// folder's file set, are as before; no lock or temp file is left.
fn assert_refused_cleanly(env: &TestEnv, inbox: &Path, faults: &str, cause: &str) {
    let before = fs::read(inbox).unwrap();
    let mut cmd = env.cmd();
    cmd.args(["send", "alice", "will not fit"]);
    if !faults.is_empty() {
        cmd.env("TEAMCTL_TEST_FAULTS", faults);
    }
    cmd.assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: "))
        .stderr(predicate::str::contains(cause))
        .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    assert_eq!(fs::read(inbox).unwrap(), before, "inbox changed");
    assert!(
        temps(inbox).is_empty(),
        "temp file left: {:?}",
        temps(inbox)
    );
    assert!(!lock_of(inbox).exists(), "lock left");
}

#[test]
fn read_only_inbox_folder() {
    let (env, inbox) = env();
    let dir = inbox.parent().unwrap().to_path_buf();
    let Some(mount) = Mount::tmpfs(&dir, "size=1m") else {
        eprintln!("cannot mount tmpfs here: simulating the refused write with the test seam");
        fs::write(&inbox, big_inbox(4)).unwrap();
        return assert_refused_cleanly(&env, &inbox, "fail_write", "No space left on device");
    };
    fs::write(&inbox, big_inbox(4)).unwrap();
    mount.remount("ro");
    assert_refused_cleanly(&env, &inbox, "", "Read-only file system");
}

#[test]
fn full_file_system() {
    let (env, inbox) = env();
    let dir = inbox.parent().unwrap().to_path_buf();
    let Some(_mount) = Mount::tmpfs(&dir, "size=256k") else {
        eprintln!("cannot mount tmpfs here: simulating ENOSPC with the test seam");
        fs::write(&inbox, big_inbox(40)).unwrap();
        return assert_refused_cleanly(&env, &inbox, "fail_write", "No space left on device");
    };
    fs::write(&inbox, big_inbox(40)).unwrap();
    // Fill the rest, then give back one page: room for the lock directory and an empty temp
    // file, not for a second copy of the inbox.
    let filler = dir.join("filler");
    let mut f = File::create(&filler).unwrap();
    let chunk = vec![0u8; 4096];
    while f.write_all(&chunk).is_ok() {}
    drop(f);
    let len = fs::metadata(&filler).unwrap().len();
    OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap()
        .set_len(len.saturating_sub(4096))
        .unwrap();
    assert_refused_cleanly(&env, &inbox, "", "No space left on device");
}

/// The seam the two tests above fall back to, run everywhere.
#[test]
fn injected_write_error() {
    let (env, inbox) = env();
    fs::write(&inbox, big_inbox(4)).unwrap();
    assert_refused_cleanly(&env, &inbox, "fail_write", "No space left on device");
}

/// `config.json` rewritten in place (truncate, then written in two halves) over and over while
/// teamctl reads it: every send and status succeeds; none reports the file as corrupt.
#[test]
fn torn_config_is_retried_not_reported_corrupt() {
    let (env, inbox) = env();
    let config = env.root.join("teams").join(TEAM).join("config.json");
    let bytes = fs::read(&config).unwrap();
    let stop = AtomicBool::new(false);
    /// Stops the writer even when an assertion panics (the scope would wait for it forever).
    struct Stop<'a>(&'a AtomicBool);
    impl Drop for Stop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    let mut failures = Vec::new();
    let torn = thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut rewrites = 0u32;
            let half = bytes.len() / 2;
            while !stop.load(Ordering::Relaxed) {
                let mut f = OpenOptions::new()
                    .write(true)
                    .truncate(true)
                    .open(&config)
                    .unwrap();
                f.write_all(&bytes[..half]).unwrap();
                // A slow writer: the file stays torn for a moment.
                thread::sleep(Duration::from_millis(2));
                f.write_all(&bytes[half..]).unwrap();
                drop(f);
                rewrites += 1;
                thread::sleep(Duration::from_millis(3));
            }
            rewrites
        });
        let _stop = Stop(&stop);
        for i in 0..30 {
            let out = env
                .std_cmd()
                .args(["send", "alice", &format!("m{i}")])
                .output()
                .unwrap();
            if !out.status.success() {
                failures.push(String::from_utf8_lossy(&out.stderr).into_owned());
            }
        }
        for _ in 0..10 {
            let out = env.std_cmd().args(["--json", "status"]).output().unwrap();
            if !out.status.success() {
                failures.push(String::from_utf8_lossy(&out.stderr).into_owned());
            } else {
                json(&out.stdout);
            }
        }
        drop(_stop);
        writer.join().unwrap()
    });
    assert_eq!(failures, Vec::<String>::new());
    assert!(torn > 10, "the writer hardly ran ({torn} rewrites)");
    assert_eq!(read_entries(&inbox).len(), 30);
}

/// A writer that ignores locks replaces the inbox after teamctl's rename and before its
/// read-back: verification catches it, exit 4, never success.
#[test]
fn foreign_writer_during_a_send_gives_exit_4() {
    for foreign in ["stale copy", "torn"] {
        let (env, inbox) = env();
        env.cmd()
            .args(["send", "alice", "earlier"])
            .assert()
            .success();
        let stale_copy = fs::read(&inbox).unwrap();
        let child = env
            .std_cmd()
            .args(["send", "alice", "ours"])
            .env("TEAMCTL_TEST_FAULTS", "before_verify=2s")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The rename has happened once our message is in the file.
        assert!(wait_until(Duration::from_secs(10), || {
            fs::read_to_string(&inbox).is_ok_and(|s| s.contains("\"ours\""))
        }));
        match foreign {
            // Lost update: it writes back what it read before our send.
            "stale copy" => fs::write(&inbox, &stale_copy).unwrap(),
            _ => fs::write(&inbox, "[\n  {").unwrap(),
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(4), "{foreign}: {stderr}");
        assert!(
            stderr.starts_with("error: read-back verification failed"),
            "{foreign}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "nothing reported as sent");
        assert!(!lock_of(&inbox).exists());
    }
}

/// A bad `TEAMCTL_TEST_FAULTS` is an error, not silently ignored.
#[test]
fn unknown_test_fault_is_an_error() {
    let (env, _) = env();
    env.cmd()
        .args(["send", "alice", "hi"])
        .env("TEAMCTL_TEST_FAULTS", "explode")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("unknown fault 'explode'"));
}
