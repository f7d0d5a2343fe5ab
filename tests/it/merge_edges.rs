//! The merge queue at its edges: a branch name git would read as something else, a branch
//! checked out while the queue ran, a check that starts processes meant to outlive it, and a
//! check that prints one enormous line.

#[cfg(target_os = "linux")]
use std::fs;
use std::time::Duration;

use predicates::prelude::*;
use serde_json::Value;

#[cfg(target_os = "linux")]
use crate::common::wait_until;
use crate::common::{TestEnv, commit, git, json as parse, worktree_team};

/// `@` (HEAD's branch) and `refs/heads/main` (a branch of that name under refs/heads) are
/// what git would make of them, not the branch meant: refused (exit 2) by `merge` and by `wait
/// --merge-into` before it waits; no ref is made.
#[test]
fn branch_names_git_reads_otherwise_are_refused() {
    let env = TestEnv::new();
    let (repo, trees) = worktree_team(&env, &["alice"]);
    commit(&trees[0].1, "a.txt", "a\n");
    let refs = || git(&repo, &["for-each-ref", "--format=%(refname)"]);
    let before = refs();
    for into in ["@", "refs/heads/main", "HEAD", "refs/heads/i"] {
        env.cmd()
            .args(["--team", "t", "merge", "--into", into])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("'{into}'")));
        env.cmd()
            .args(["--team", "t", "wait", "--tasks-done", "--timeout", "30s"])
            .args(["--merge-into", into])
            .timeout(Duration::from_secs(20))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("'{into}'")));
    }
    assert_eq!(refs(), before);
}

/// A branch checked out in a new worktree while the queue ran (here by the check) is not moved
/// under it: the queue ends with an error and the branch where it was.
#[test]
fn a_branch_checked_out_while_the_queue_ran_is_not_moved() {
    let env = TestEnv::new();
    let (repo, trees) = worktree_team(&env, &["alice"]);
    commit(&trees[0].1, "a.txt", "a\n");
    git(&repo, &["branch", "i", "main"]);
    let start = git(&repo, &["rev-parse", "i"]);
    let wt = env.dir.path().join("someone");
    let check = format!(
        "[ -d '{wt}' ] || git -C '{repo}' worktree add -q '{wt}' i",
        wt = wt.display(),
        repo = repo.display()
    );
    env.cmd()
        .args(["--team", "t", "merge", "--into", "i", "--check", &check])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("i is checked out"));
    assert!(wt.join(".git").exists());
    assert_eq!(git(&repo, &["rev-parse", "i"]), start);
}

/// Whether process `pid` runs (a zombie waiting for its reaper does not).
#[cfg(target_os = "linux")]
fn runs(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[cfg(target_os = "linux")]
fn pid_in(path: &std::path::Path) -> u32 {
    assert!(
        wait_until(Duration::from_secs(10), || fs::read_to_string(path)
            .is_ok_and(|s| s.ends_with('\n'))),
        "{} never written",
        path.display()
    );
    fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

/// What a check starts ends with it: a child in a session of its own (`setsid`) and a
/// background child of a check that passed, and a `setsid` child ignoring SIGTERM of a check
/// past its time limit.
#[test]
#[cfg(target_os = "linux")]
fn what_a_check_starts_ends_with_it() {
    let env = TestEnv::new();
    let (repo, trees) = worktree_team(&env, &["alice", "hang"]);
    commit(&trees[0].1, "a.txt", "a\n");
    commit(&trees[1].1, "hang.txt", "x\n");
    let d = env.dir.path().display().to_string();
    let check = format!(
        "setsid sh -c 'echo $$ > {d}/escaped.tmp; mv {d}/escaped.tmp {d}/escaped; exec sleep 300' &\n\
         sleep 300 & echo $! > {d}/bg.tmp; mv {d}/bg.tmp {d}/bg\n\
         if [ -f hang.txt ]; then\n\
           setsid sh -c 'trap \"\" TERM; echo $$ > {d}/stubborn.tmp; mv {d}/stubborn.tmp {d}/stubborn; exec sleep 300' &\n\
           sleep 300\n\
         fi\n\
         while [ ! -f {d}/escaped ]; do sleep 0.05; done"
    );
    env.cmd()
        .args([
            "--team", "t", "merge", "alice", "--into", "i", "--check", &check,
        ])
        .timeout(Duration::from_secs(60))
        .assert()
        .success();
    let (escaped, bg) = (
        pid_in(&env.dir.path().join("escaped")),
        pid_in(&env.dir.path().join("bg")),
    );
    for pid in [escaped, bg] {
        assert!(
            wait_until(Duration::from_secs(5), || !runs(pid)),
            "the passing check's process {pid} still runs"
        );
    }
    fs::remove_file(env.dir.path().join("escaped")).unwrap();
    env.cmd()
        .args([
            "--team", "t", "merge", "hang", "--into", "j", "--check", &check,
        ])
        .args(["--check-timeout", "2s"])
        .timeout(Duration::from_secs(60))
        .assert()
        .code(10);
    let stubborn = pid_in(&env.dir.path().join("stubborn"));
    let escaped = pid_in(&env.dir.path().join("escaped"));
    for pid in [stubborn, escaped] {
        assert!(
            wait_until(Duration::from_secs(5), || !runs(pid)),
            "the timed-out check's process {pid} still runs"
        );
    }
    // hang set aside: j made at the team's base.
    assert_eq!(
        git(&repo, &["rev-parse", "j"]),
        git(&repo, &["rev-parse", "main"])
    );
}

/// A check that prints 20 MB on one line: the member's last lines stay small (each line cut
/// to its end, marked), and so does the `--json` document.
#[test]
fn a_check_that_prints_one_huge_line_reports_a_bounded_tail() {
    let env = TestEnv::new();
    let (_, trees) = worktree_team(&env, &["ok", "loud"]);
    commit(&trees[0].1, "a.txt", "a\n");
    commit(&trees[1].1, "loud.txt", "x\n");
    let check = "if [ -f loud.txt ]; then head -c 20000000 /dev/zero | tr '\\0' x; \
                 printf 'END\\nlast line\\n'; exit 1; fi";
    let out = env
        .cmd()
        .args([
            "--json", "--team", "t", "merge", "--into", "i", "--check", check,
        ])
        .assert()
        .code(10);
    let stdout = &out.get_output().stdout;
    assert!(stdout.len() < 64 * 1024, "{} bytes of JSON", stdout.len());
    let v = parse(stdout);
    let loud = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "loud")
        .unwrap();
    assert_eq!(loud["status"], "check_failed");
    let lines: Vec<&str> = loud["check"]["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(lines.last(), Some(&"last line"), "{lines:?}");
    let long = lines[lines.len() - 2];
    assert!(
        long.starts_with('…') && long.ends_with("xxxEND"),
        "{long:.40}"
    );
    assert!(long.len() <= 1100, "{} bytes", long.len());
    assert_eq!(v["members"][0]["status"], Value::from("merged"));
}
