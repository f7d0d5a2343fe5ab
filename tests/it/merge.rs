//! `teamctl diff` and `teamctl merge` on a real git repository with worktree teammates: the
//! counts agree with git's, the queue lands the clean branches, sets aside a conflict and a
//! branch that breaks the check, and leaves the person's checkout and branches as they were.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{TestEnv, commit, git, json as parse, keys, wait_until, worktree_team as team};

/// What the person has: HEAD, index and work tree, and every ref but `except`.
fn checkout_state(repo: &Path, except: &str) -> (String, String, String) {
    let refs = git(repo, &["for-each-ref", "--format=%(refname) %(objectname)"]);
    let refs: Vec<&str> = refs.lines().filter(|l| !l.starts_with(except)).collect();
    (
        git(repo, &["rev-parse", "HEAD"]),
        git(repo, &["status", "--porcelain=v1", "--untracked-files=all"]),
        refs.join("\n"),
    )
}

fn row<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap()
}

const SIX: [&str; 6] = ["clean1", "clean2", "same1", "same2", "breaker", "clean3"];

/// Six teammates' work: three clean, two changing the same line, one breaking the check;
/// clean3 also leaves a change uncommitted.
fn six(env: &TestEnv) -> (PathBuf, Vec<(String, PathBuf)>) {
    let (repo, trees) = team(env, &SIX);
    let at = |n: &str| &trees.iter().find(|(m, _)| m == n).unwrap().1;
    commit(at("clean1"), "a.txt", "a\n");
    commit(at("clean2"), "b.txt", "b\nb\n");
    commit(at("same1"), "notes.md", "one\nTWO by same1\nthree\n");
    commit(at("same2"), "notes.md", "one\nTWO by same2\nthree\n");
    commit(at("breaker"), "broken", "x\n");
    commit(at("clean3"), "c.txt", "c\n");
    fs::write(at("clean3").join("notes.md"), "one\ntwo\nthree\nfour\n").unwrap();
    fs::write(at("clean3").join("scratch.txt"), "wip\n").unwrap();
    fs::write(at("clean1").join("logo.bin"), b"\0\x03").unwrap();
    git(at("clean1"), &["commit", "-q", "-am", "logo"]);
    (repo, trees)
}

#[test]
fn diff_json_agrees_with_git_numstat() {
    let env = TestEnv::new();
    let (_, trees) = six(&env);
    let out = env
        .cmd()
        .args(["--json", "--team", "t", "diff"])
        .assert()
        .success();
    let v = parse(&out.get_output().stdout);
    assert_eq!(keys(&v), ["members", "schema_version", "team"]);
    assert_eq!(v["members"].as_array().unwrap().len(), 6);
    for (name, tree) in &trees {
        let m = row(&v, name);
        assert_eq!(
            keys(m),
            [
                "base",
                "branch",
                "commits",
                "error",
                "files",
                "name",
                "path",
                "runs_code",
                "text",
                "tip",
                "uncommitted",
                "untracked"
            ]
        );
        let base = m["base"].as_str().unwrap();
        let want: Vec<Value> = git(tree, &["diff", "--numstat", base])
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.splitn(3, '\t').collect();
                let n = |s: &str| s.parse::<u64>().map_or(Value::Null, |n| json!(n));
                json!({"path": f[2], "added": n(f[0]), "deleted": n(f[1])})
            })
            .collect();
        assert_eq!(m["files"], json!(want), "{name}");
        assert_eq!(m["branch"], format!("teamctl/t/{name}"));
        assert_eq!(m["error"], Value::Null);
    }
    let c1 = row(&v, "clean1");
    assert_eq!(c1["commits"], 2);
    assert_eq!(
        c1["files"][1],
        json!({"path": "logo.bin", "added": null, "deleted": null})
    );
    let c3 = row(&v, "clean3");
    assert_eq!(c3["untracked"], json!(["scratch.txt"]));
    assert_eq!(c3["uncommitted"], true);
    assert_eq!(c3["files"].as_array().unwrap().len(), 2);

    env.cmd()
        .args(["--team", "t", "diff", "clean1", "clean3"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "clean1: branch teamctl/t/clean1, 2 commit(s), 2 file(s) +1 -0 (1 binary)",
        ))
        .stdout(predicate::str::contains("  +bin -bin  logo.bin"))
        .stdout(predicate::str::contains("  untracked: scratch.txt"))
        .stdout(predicate::str::contains("same1").not());
    env.cmd()
        .args(["--team", "t", "diff", "same1", "--patch"])
        .assert()
        .success()
        .stdout(predicate::str::contains("  +TWO by same1"));
    env.cmd()
        .args(["--team", "t", "diff", "nobody"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("error: "));
    env.cmd()
        .args(["--team", "t", "diff", "--stat", "--patch"])
        .assert()
        .code(2);
}

#[test]
fn merge_lands_the_clean_sets_aside_a_conflict_and_a_breaker() {
    let env = TestEnv::new();
    let (repo, _trees) = six(&env);
    // The person's checkout has work of its own in progress.
    fs::write(repo.join("notes.md"), "one\ntwo\nmine\n").unwrap();
    fs::write(repo.join("todo.txt"), "mine\n").unwrap();
    git(&repo, &["add", "todo.txt"]);
    let before = checkout_state(&repo, "refs/heads/integration");
    let count = env.dir.path().join("checks");
    let check = format!(
        "echo run >> '{}'; if [ -e broken ]; then echo 'broken is here' >&2; exit 3; fi",
        count.display()
    );

    let out = env
        .cmd()
        .args(["--json", "--team", "t", "merge", "--into", "integration"])
        .args(["--check", &check])
        .assert()
        .code(10)
        .stderr(predicate::str::contains(
            "2 of 6 member(s) set aside: same2, breaker",
        ));
    let v = parse(&out.get_output().stdout);
    let runs = fs::read_to_string(&count).unwrap().lines().count();
    assert!(runs <= 7, "the check ran {runs} times");
    // The five merges, three bisect steps to find the breaker, the four merges left.
    assert_eq!(runs, 5);
    assert_eq!(v["checks_run"], runs);
    let status = |n: &str| row(&v, n)["status"].as_str().unwrap().to_string();
    for n in ["clean1", "clean2", "same1", "clean3"] {
        assert_eq!(status(n), "merged", "{n}");
    }
    assert_eq!(status("same2"), "conflict");
    assert_eq!(row(&v, "same2")["conflicts"], json!(["notes.md"]));
    assert_eq!(status("breaker"), "check_failed");
    let failed = &row(&v, "breaker")["check"];
    assert_eq!(failed["exit_code"], 3);
    assert_eq!(failed["output"], json!(["broken is here"]));
    assert_eq!(
        row(&v, "clean3")["uncommitted"],
        json!(["notes.md", "scratch.txt"])
    );
    assert_eq!(v["before"], Value::Null);

    // integration holds the merged work and nothing set aside; the checkout is as it was.
    let tip = git(&repo, &["rev-parse", "integration"]);
    assert_eq!(v["after"], tip);
    let files = git(&repo, &["ls-tree", "-r", "--name-only", "integration"]);
    assert_eq!(files, "a.txt\nb.txt\nc.txt\nlogo.bin\nnotes.md");
    assert_eq!(
        git(&repo, &["show", "integration:notes.md"]),
        "one\nTWO by same1\nthree"
    );
    assert_eq!(checkout_state(&repo, "refs/heads/integration"), before);
    assert_eq!(
        git(&repo, &["worktree", "list", "--porcelain"])
            .lines()
            .filter(|l| l.starts_with("worktree "))
            .count(),
        7,
        "the scratch worktree is gone"
    );
    assert!(
        fs::read_dir(env.data_dir().join("merges"))
            .unwrap()
            .next()
            .is_none()
    );

    // Again: integration is continued; what is in it already has nothing to merge.
    let out = env
        .cmd()
        .args(["--json", "--team", "t", "merge", "--into", "integration"])
        .args(["clean1", "clean2"])
        .assert()
        .success();
    let v = parse(&out.get_output().stdout);
    assert_eq!(v["before"], tip);
    assert_eq!(v["after"], tip);
    assert_eq!(row(&v, "clean1")["status"], "up_to_date");

    // A dry run says what would happen and moves nothing.
    env.cmd()
        .args([
            "--team",
            "t",
            "merge",
            "same2",
            "--into",
            "integration",
            "--dry-run",
            "--check",
            "false",
        ])
        .assert()
        .code(10)
        .stdout(predicate::str::contains(
            "dry run: integration would point at",
        ))
        .stdout(predicate::str::contains("check not run (dry run)"))
        .stdout(predicate::str::contains(
            "same2: set aside: conflict in notes.md",
        ));
    assert_eq!(git(&repo, &["rev-parse", "integration"]), tip);
}

#[test]
fn merge_refuses_a_branch_checked_out_and_bad_input() {
    let env = TestEnv::new();
    let (repo, _) = team(&env, &["alice"]);
    let before = checkout_state(&repo, "none");
    env.cmd()
        .args(["--team", "t", "merge", "--into", "main"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: main is checked out"));
    env.cmd()
        .args(["--team", "t", "merge", "--into", "teamctl/t/alice"])
        .assert()
        .code(2);
    env.cmd()
        .args(["--team", "t", "merge", "--into", "-x"])
        .assert()
        .code(2);
    env.cmd().args(["--team", "t", "merge"]).assert().code(2);
    assert_eq!(checkout_state(&repo, "none"), before);
}

/// A `gh` stand-in: `auth status` answers as `auth` says; `pr create` records its arguments
/// and its stdin beside itself and prints a URL.
fn fake_gh(env: &TestEnv, auth: u8) -> PathBuf {
    let dir = env.dir.path().display();
    crate::common::script(
        env,
        "gh",
        &format!(
            "if [ \"$1\" = auth ]; then echo 'not logged in' >&2; exit {auth}; fi\n\
             printf '%s\\n' \"$@\" > '{dir}/gh-args'\ncat > '{dir}/gh-body'\n\
             echo https://github.com/o/r/pull/7"
        ),
    )
}

#[test]
fn pr_body_has_each_members_brief_tasks_diffstat_and_cost_and_gh_gets_it() {
    let env = TestEnv::new();
    let (repo, trees) = team(&env, &["alice", "bob"]);
    commit(&trees[0].1, "a.txt", "a\n");
    commit(&trees[1].1, "b.txt", "b\nb\n");
    env.spend_as("t", "alice", "msg_1");
    for args in [
        &["tasks", "add", "Fix **it** <b>now</b>", "--owner", "alice"][..],
        &["tasks", "update", "1", "--status", "completed"][..],
    ] {
        env.cmd()
            .args(["--team", "t"])
            .args(args)
            .assert()
            .success();
    }
    env.cmd()
        .args(["--team", "t", "merge", "--into", "integration"])
        .assert()
        .success();
    let before = checkout_state(&repo, "none");

    let out = env
        .cmd()
        .args(["--team", "t", "pr", "--into", "integration", "--dry-run"])
        .assert()
        .success();
    let body = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    for want in [
        "## The work of team t\n\nWhat the team was asked: Improve the notes\n",
        "Branch `integration` holds 4 commit(s)",
        "### alice",
        "Branch `teamctl/t/alice`: 1 commit(s), 1 file(s), +1 -0. Cost: $0.0001.",
        "```text\ndo alice\n```",
        "Tasks done: 1\n\n- Fix \\*\\*it\\*\\* \\<b\\>now\\<\\/b\\>",
        "+1 -0  a.txt",
        "### bob",
        "+2 -0. Cost: unknown (no transcript found).",
        "+2 -0  b.txt",
    ] {
        assert!(body.contains(want), "{want:?} not in:\n{body}");
    }

    // gh gets the body on stdin and the flags as --flag=value.
    let gh = fake_gh(&env, 0);
    let out = env
        .cmd()
        .env("TEAMCTL_GH_BIN", &gh)
        .args(["--json", "--team", "t", "pr", "--into", "integration"])
        .args(["--title=-x team work", "--draft"])
        .assert()
        .success();
    let v = parse(&out.get_output().stdout);
    assert_eq!(
        keys(&v),
        [
            "base",
            "body",
            "draft",
            "dry_run",
            "head",
            "schema_version",
            "team",
            "title",
            "url"
        ]
    );
    assert_eq!(v["url"], "https://github.com/o/r/pull/7");
    assert_eq!(format!("{}\n", v["body"].as_str().unwrap()), body);
    let args = fs::read_to_string(env.dir.path().join("gh-args")).unwrap();
    assert_eq!(
        args,
        "pr\ncreate\n--body-file=-\n--head=integration\n--title=-x team work\n--draft\n"
    );
    let sent = fs::read_to_string(env.dir.path().join("gh-body")).unwrap();
    assert_eq!(sent, v["body"].as_str().unwrap());
    assert_eq!(checkout_state(&repo, "none"), before);

    // Not logged in, missing, or no such branch: a clear error.
    let gh = fake_gh(&env, 1);
    env.cmd()
        .env("TEAMCTL_GH_BIN", &gh)
        .args(["--team", "t", "pr", "--into", "integration"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("gh is not logged in"));
    env.cmd()
        .env("TEAMCTL_GH_BIN", env.dir.path().join("nope"))
        .args(["--team", "t", "pr", "--into", "integration"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not an executable file"));
    env.cmd()
        .args(["--team", "t", "pr", "--into", "nothing", "--dry-run"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("teamctl merge --into nothing"));
}

#[test]
fn merge_squash_makes_one_commit_per_member_onto_an_existing_branch() {
    let env = TestEnv::new();
    let (repo, trees) = team(&env, &["alice", "bob"]);
    commit(&trees[0].1, "a.txt", "a\n");
    commit(&trees[0].1, "a2.txt", "a\n");
    commit(&trees[1].1, "b.txt", "b\n");
    git(&repo, &["branch", "review", "main"]);
    let start = git(&repo, &["rev-parse", "review"]);
    // A scratch worktree a killed queue left (its process gone) is cleared away.
    let stale = env.data_dir().join("merges/t.4194303.0badf00d");
    fs::create_dir_all(stale.parent().unwrap()).unwrap();
    git(
        &repo,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            stale.to_str().unwrap(),
            "main",
        ],
    );
    fs::write(env.data_dir().join("merges/t.4194303.0badf00d.log"), "x").unwrap();
    // A hook a teammate could have written into the shared hooks folder never runs.
    let ran = env.dir.path().join("hook-ran");
    for hook in [
        "post-checkout",
        "post-merge",
        "pre-merge-commit",
        "pre-commit",
    ] {
        crate::common::script(&env, hook, &format!("touch '{}'", ran.display()));
        fs::rename(
            env.dir.path().join(hook),
            repo.join(".git/hooks").join(hook),
        )
        .unwrap();
    }
    env.cmd()
        .args(["--team", "t", "merge", "bob", "alice", "--into", "review"])
        .args(["--strategy", "squash", "--check", "true"])
        .assert()
        .success()
        .stdout(predicate::str::contains("check ran 1 time(s)"))
        .stdout(predicate::str::contains("bob: merged\nalice: merged"));
    let log = git(
        &repo,
        &["log", "--format=%P %s", &format!("{start}..review")],
    );
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].ends_with("Squash branch 'teamctl/t/alice' (alice) into review"));
    assert!(lines[1].ends_with("Squash branch 'teamctl/t/bob' (bob) into review"));
    assert!(
        lines
            .iter()
            .all(|l| l.split(' ').next().unwrap().len() == 40),
        "{log}"
    );
    assert_eq!(
        git(&repo, &["ls-tree", "-r", "--name-only", "review"]),
        "a.txt\na2.txt\nb.txt\nlogo.bin\nnotes.md"
    );
    assert!(!ran.exists(), "a hook ran");
    assert!(!stale.exists());
    assert!(!git(&repo, &["worktree", "list"]).contains("0badf00d"));
    assert!(
        fs::read_dir(env.data_dir().join("merges"))
            .unwrap()
            .next()
            .is_none()
    );
}

#[test]
fn teammate_file_names_reach_the_terminal_escaped_and_json_exact() {
    let env = TestEnv::new();
    let (_, trees) = team(&env, &["alice", "bob"]);
    let name = "evil\x1b[31m\u{202e}.txt";
    commit(&trees[0].1, name, "a\n");
    commit(&trees[1].1, name, "b\n");
    let out = env
        .cmd()
        .args(["--team", "t", "diff", "alice"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        !text.contains('\x1b') && !text.contains('\u{202e}'),
        "{text:?}"
    );
    assert!(text.contains("evil\\e[31m\\u{202e}.txt"), "{text}");
    let v = parse(
        &env.cmd()
            .args(["--json", "--team", "t", "diff", "alice"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    assert_eq!(v["members"][0]["files"][0]["path"], name);
    let out = env
        .cmd()
        .args(["--team", "t", "merge", "--into", "x"])
        .assert()
        .code(10);
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        text.contains("bob: set aside: conflict in evil\\e[31m"),
        "{text}"
    );
    assert!(
        !text.contains('\x1b') && !err.contains('\x1b'),
        "{text:?} {err:?}"
    );
}

#[test]
fn export_keeps_a_patch_and_a_diffstat_per_member() {
    let env = TestEnv::new();
    let (repo, trees) = team(&env, &["alice", "bob"]);
    commit(&trees[0].1, "a.txt", "a\n");
    fs::write(trees[1].1.join("notes.md"), "one\n").unwrap();
    let out = env.dir.path().join("record");
    env.cmd()
        .args(["--team", "t", "export", "--out"])
        .arg(&out)
        .assert()
        .success();
    // Each patch applies to the base as the teammate's work.
    for (name, file) in [("alice", "a.txt"), ("bob", "notes.md")] {
        let patch = out.join(format!("patches/{name}.patch"));
        assert!(
            fs::read_to_string(&patch)
                .unwrap()
                .contains(&format!("diff --git a/{file} b/{file}"))
        );
        git(&repo, &["apply", "--check", patch.to_str().unwrap()]);
    }
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("### Branches"), "{report}");
    assert!(report.contains("+1 -0  a.txt"), "{report}");
    assert!(report.contains("+0 -2  notes.md"), "{report}");
    let s = parse(&fs::read(out.join("summary.json")).unwrap());
    assert_eq!(
        s["worktrees"][0]["files"],
        json!([{"path": "a.txt", "added": 1, "deleted": 0}])
    );
}

/// report.html shows each branch's diffstat, a teammate's file names escaped: no tag, handler
/// or link from a file name becomes markup.
#[test]
fn the_record_page_shows_diffstats_with_file_names_escaped() {
    let env = TestEnv::new();
    let (_, trees) = team(&env, &["alice", "bob"]);
    let name = "<img src=x onerror=alert(1)><a href=javascript:x>\u{202e}.txt";
    commit(&trees[0].1, name, "a\nb\n");
    let out = env.dir.path().join("record");
    env.cmd()
        .args(["--team", "t", "export", "--out"])
        .arg(&out)
        .assert()
        .success();
    let page = fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("<h2>Branches</h2>"), "{page}");
    assert!(
        page.contains("+2 -0  &lt;img src=x onerror=alert(1)&gt;&lt;a href=javascript:x&gt;"),
        "{page}"
    );
    assert!(!page.contains("<img") && !page.contains("<a "), "{page}");
    assert!(!page.contains('\u{202e}'), "{page}");
}

#[test]
fn wait_merges_into_a_branch_once_the_tasks_are_done() {
    let env = TestEnv::new();
    let (repo, trees) = team(&env, &["alice", "bob"]);
    commit(&trees[0].1, "a.txt", "a\n");
    commit(&trees[1].1, "notes.md", "x\n");
    commit(&trees[0].1, "notes.md", "y\n");
    for args in [
        &["tasks", "add", "b", "--owner", "bob"][..],
        &["tasks", "add", "a", "--owner", "alice"][..],
        &["tasks", "update", "1", "--status", "completed"][..],
        &["tasks", "update", "2", "--status", "completed"][..],
    ] {
        env.cmd()
            .args(["--team", "t"])
            .args(args)
            .assert()
            .success();
    }
    // When each was completed, as the task files' times say (whatever the file system's
    // resolution).
    for (id, at) in [("1", "2026-01-01 00:00:01"), ("2", "2026-01-01 00:00:02")] {
        let f = env.root.join(format!("tasks/t/{id}.json"));
        assert!(
            Command::new("touch")
                .args(["-d", at])
                .arg(&f)
                .status()
                .unwrap()
                .success()
        );
    }
    let out = env
        .cmd()
        .args([
            "--json",
            "--team",
            "t",
            "wait",
            "--tasks-done",
            "--timeout",
            "10s",
        ])
        .args(["--merge-into", "done", "--check", "test -e notes.md"])
        .assert()
        .code(10);
    let v = parse(&out.get_output().stdout);
    assert_eq!(v["met"], true);
    let m = &v["merge"];
    assert_eq!(m["into"], "done");
    // bob's task was completed first: bob is merged first, alice conflicts after him.
    assert_eq!(m["members"][0]["name"], "bob");
    assert_eq!(m["members"][0]["status"], "merged");
    assert_eq!(m["members"][1]["status"], "conflict");
    assert_eq!(m["checks_run"], 1);
    assert_eq!(git(&repo, &["show", "done:notes.md"]), "x");

    // A team with no worktree teammate is refused before waiting.
    env.cmd()
        .args(["create", "plain", "--launch", "none", "--member", "carol:c"])
        .assert()
        .success();
    env.cmd()
        .args([
            "--team",
            "plain",
            "wait",
            "--tasks-done",
            "--merge-into",
            "x",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no teammate of team 'plain' has a worktree",
        ));
    env.cmd()
        .args(["--team", "t", "wait", "--tasks-done", "--check", "true"])
        .assert()
        .code(2);
}

#[test]
fn merge_finds_two_breaking_members_and_keeps_the_rest() {
    let env = TestEnv::new();
    let names = ["m1", "b1", "m2", "m3", "b2", "m4"];
    let (repo, trees) = team(&env, &names);
    for (name, tree) in &trees {
        let file = if name.starts_with('b') {
            format!("broken-{name}")
        } else {
            format!("{name}.txt")
        };
        commit(tree, &file, "x\n");
    }
    let count = env.dir.path().join("checks");
    // The check leaves a file behind that m4's branch adds: it never stops a merge.
    let check = format!(
        "echo run >> '{}'; echo junk > m4.txt; ! ls broken-* >/dev/null 2>&1",
        count.display()
    );
    let out = env
        .cmd()
        .args([
            "--json", "--team", "t", "merge", "--into", "i", "--check", &check,
        ])
        .assert()
        .code(10);
    let v = parse(&out.get_output().stdout);
    let status: Vec<(&str, &str)> = v["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["name"].as_str().unwrap(), m["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        status,
        [
            ("m1", "merged"),
            ("b1", "check_failed"),
            ("m2", "merged"),
            ("m3", "merged"),
            ("b2", "check_failed"),
            ("m4", "merged")
        ]
    );
    let runs = fs::read_to_string(&count).unwrap().lines().count();
    assert_eq!(v["checks_run"], runs);
    assert!(runs <= 10, "the check ran {runs} times");
    assert_eq!(
        git(&repo, &["ls-tree", "-r", "--name-only", "i"]),
        "logo.bin\nm1.txt\nm2.txt\nm3.txt\nm4.txt\nnotes.md"
    );
}

/// Whether process `pid` runs (a zombie waiting for its reaper does not).
fn runs(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

#[test]
fn a_check_past_its_time_limit_is_ended_with_what_it_started_and_fails() {
    let env = TestEnv::new();
    let (repo, trees) = team(&env, &["m1", "h1"]);
    commit(&trees[0].1, "m1.txt", "x\n");
    commit(&trees[1].1, "hang.txt", "x\n");
    let before = checkout_state(&repo, "refs/heads/i");
    let pid = env.dir.path().join("pid");
    // With h1's file the check starts a child that ignores SIGTERM and never ends.
    let check = format!(
        "if [ -f hang.txt ]; then sh -c 'trap \"\" TERM; echo $$ > {}; exec sleep 300'; fi",
        pid.display()
    );
    let out = env
        .cmd()
        .args(["--json", "--team", "t", "merge", "--into", "i"])
        .args(["--check", &check, "--check-timeout", "1s"])
        .assert()
        .code(10);
    let v = parse(&out.get_output().stdout);
    assert_eq!(row(&v, "m1")["status"], "merged");
    let h1 = row(&v, "h1");
    assert_eq!(h1["status"], "check_failed");
    assert_eq!(h1["check"]["timed_out"], true);
    assert_eq!(h1["check"]["exit_code"], Value::Null);
    let last = h1["check"]["output"].as_array().unwrap().last().unwrap();
    assert!(last.as_str().unwrap().contains("time limit (1s)"), "{last}");
    let child: u32 = fs::read_to_string(&pid).unwrap().trim().parse().unwrap();
    assert!(
        wait_until(std::time::Duration::from_secs(10), || !runs(child)),
        "the check's child {child} still runs"
    );
    assert_eq!(
        git(&repo, &["ls-tree", "-r", "--name-only", "i"]),
        "logo.bin\nm1.txt\nnotes.md"
    );
    assert_eq!(checkout_state(&repo, "refs/heads/i"), before);

    // A limit that does not parse is a usage error before anything is merged.
    env.cmd()
        .args(["--team", "t", "merge", "--into", "j", "--check", "true"])
        .args(["--check-timeout", "soon"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--check-timeout"));
    assert_eq!(git(&repo, &["branch", "--list", "j"]), "");
}

#[test]
fn an_interrupt_ends_a_running_check_and_moves_nothing() {
    let env = TestEnv::new();
    let (repo, trees) = team(&env, &["h1"]);
    commit(&trees[0].1, "hang.txt", "x\n");
    let before = checkout_state(&repo, "refs/heads/none");
    let pid = env.dir.path().join("pid");
    let check = format!("sh -c 'echo $$ > {}; exec sleep 300'", pid.display());
    let child = env
        .std_cmd()
        .args(["--team", "t", "merge", "--into", "i", "--check", &check])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_until(std::time::Duration::from_secs(20), || pid.exists()),
        "the check never started"
    );
    // SAFETY: signals the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let sleeper: u32 = fs::read_to_string(&pid).unwrap().trim().parse().unwrap();
    assert!(
        wait_until(std::time::Duration::from_secs(10), || !runs(sleeper)),
        "the check's process {sleeper} still runs"
    );
    assert_eq!(git(&repo, &["branch", "--list", "i"]), "");
    assert_eq!(checkout_state(&repo, "refs/heads/none"), before);
}

#[test]
fn files_that_run_code_for_the_person_are_named() {
    let env = TestEnv::new();
    let (_, trees) = team(&env, &["hooky"]);
    let tree = &trees[0].1;
    for dir in [".claude", ".github/workflows", ".husky"] {
        fs::create_dir_all(tree.join(dir)).unwrap();
    }
    commit(tree, ".claude/settings.json", "{\"hooks\":{}}\n");
    commit(tree, ".github/workflows/ci.yml", "on: push\n");
    commit(tree, "a.txt", "a\n");
    fs::write(tree.join(".mcp.json"), "{}").unwrap();
    let v = parse(
        &env.cmd()
            .args(["--json", "--team", "t", "diff"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    assert_eq!(
        v["members"][0]["runs_code"],
        json!([
            ".claude/settings.json",
            ".github/workflows/ci.yml",
            ".mcp.json"
        ])
    );
    env.cmd()
        .args(["--team", "t", "diff"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "  runs code for you once it lands: .claude/settings.json, \
             .github/workflows/ci.yml, .mcp.json",
        ));
    let out = env
        .cmd()
        .args(["--json", "--team", "t", "merge", "--into", "integration"])
        .assert()
        .success();
    let m = parse(&out.get_output().stdout);
    assert_eq!(
        m["members"][0]["runs_code"],
        json!([".claude/settings.json", ".github/workflows/ci.yml"])
    );
    let warned = m["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .is_some_and(|w| w.starts_with("hooky's work changes files that run code for you"))
    });
    assert!(warned, "{m}");
}
