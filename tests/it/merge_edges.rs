//! The merge queue at its edges: a branch name git would read as something else, a branch
//! checked out while the queue ran.

use std::time::Duration;

use predicates::prelude::*;

use crate::common::{TestEnv, commit, git, worktree_team};

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
