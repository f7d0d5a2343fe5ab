//! `teamctl run --merge-into` with a stub lead whose helpers worked in worktrees of their own,
//! as Claude Code 2.1.332's Agent tool makes them with `isolation: "worktree"`
//! (`.claude/worktrees/agent-<id>` on `worktree-agent-<id>`, the subagent transcript
//! `agent-<id>.jsonl` in the lead's session): only those are merged, after the run is done;
//! the person's checkout stays as it was. Uses run.rs's stub lead.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common::{TestEnv, TmuxServer, git, json as parse, json_lines, script, tmux_env};
use crate::run::{STUB_LEAD, run_cmd};

/// What the stub lead's helpers did before it answers: alice and bob each commit a file in a
/// worktree of their own (with a transcript of the lead's session, named by its `.meta.json`);
/// `zed` has such a worktree too, but no transcript of this session: someone else's.
const HELPERS: &str = r#"g() { git -c user.name=s -c user.email=s@example.com "$@"; }
for w in alice:a.txt bob:b.txt zed:z.txt; do
  n=${w%%:*}; f=${w#*:}; id=a$n
  g worktree add -q -b worktree-agent-$id .claude/worktrees/agent-$id
  (cd .claude/worktrees/agent-$id && echo $n > $f && g add $f && g commit -qm $n)
  [ $n = zed ] && continue
  printf '{"name":"%s","worktreeBranch":"worktree-agent-%s"}' $n $id > "$proj/$sid/subagents/agent-$id.meta.json"
  printf '{"type":"user","message":{"role":"user","content":"go"}}\n{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn"}}\n' > "$proj/$sid/subagents/agent-$id.jsonl"
done"#;

/// Helpers that run in the background, as Claude Code 2.1.332 runs one with `isolation:
/// "worktree"` (`"requestShape":"background"` in its `.meta.json`): each is still at work (its
/// transcript waits for a tool; bob has only its `.meta.json` yet) when the lead's turn ends,
/// and commits, ends its turn and says `"finished":true` a second later (bob two).
const BACKGROUND_HELPERS: &str = r#"g() { git -c user.name=s -c user.email=s@example.com "$@"; }
subs=$proj/$sid/subagents
for w in alice:a.txt bob:b.txt; do
  n=${w%%:*}; f=${w#*:}; id=a$n
  g worktree add -q -b worktree-agent-$id .claude/worktrees/agent-$id
  printf '{"name":"%s","requestShape":"background"}' $n > "$subs/agent-$id.meta.json"
  [ $n = alice ] && printf '{"type":"user","message":{"role":"user","content":"go"}}\n{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}],"stop_reason":"tool_use"}}\n' > "$subs/agent-$id.jsonl"
  d=1; [ $n = bob ] && d=2
  ( sleep $d
    cd .claude/worktrees/agent-$id && echo $n > $f && g add $f && g commit -qm $n
    printf '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn"}}\n' >> "$subs/agent-$id.jsonl"
    printf '{"name":"%s","requestShape":"background","finished":true}' $n > "$subs/agent-$id.meta.json" ) &
done"#;

/// A test env with a git repository `repo` (one commit, `notes.md`, trusted in
/// `.claude.json`) and the stub lead given `helpers` to run before it answers; `None` without
/// tmux.
fn repo_env(helpers: &str) -> Option<(TestEnv, TmuxServer, PathBuf, PathBuf)> {
    let (env, server) = tmux_env()?;
    let repo = fs::canonicalize(env.dir.path()).unwrap().join("repo");
    fs::create_dir(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join("notes.md"), "base\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "base"]);
    let cj = json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "projects": {repo.to_string_lossy(): {"hasTrustDialogAccepted": true}},
    });
    fs::write(env.root.join(".claude.json"), cj.to_string()).unwrap();
    // Before the lead's own transcript (its answer): the helpers' work is there by the time
    // its turn is seen to end, as a lead answers only after starting them.
    let answer = r#"printf '{"type":"user","message":{"role":"user","content":"go"}}\n{"type":"assistant","message":{"id":"m1""#;
    assert_eq!(STUB_LEAD.matches(answer).count(), 1);
    let body = STUB_LEAD.replacen(answer, &format!("{helpers}\n{answer}"), 1);
    let lead = script(&env, "stub-lead", &body);
    Some((env, server, repo, lead))
}

/// HEAD, main, the index and the status of the checkout but Claude Code's own `.claude/`.
fn checkout(repo: &Path) -> [String; 4] {
    let status = git(repo, &["status", "--porcelain"]);
    let status: Vec<&str> = status.lines().filter(|l| *l != "?? .claude/").collect();
    [
        git(repo, &["rev-parse", "HEAD"]),
        git(repo, &["rev-parse", "main"]),
        git(repo, &["write-tree"]),
        status.join("\n"),
    ]
}

fn run_merge(env: &TestEnv, lead: &Path, repo: &Path, extra: &[&str]) -> assert_cmd::Command {
    let mut c = run_cmd(env, lead);
    c.args(["Staff it", "--settle", "300ms", "--timeout", "30s", "--cwd"])
        .arg(repo)
        .args(extra);
    c
}

#[test]
fn the_leads_helpers_worktrees_are_merged_once_done_and_nothing_else() {
    let Some((env, _server, repo, lead)) = repo_env(HELPERS) else {
        return;
    };
    let before = checkout(&repo);
    let out = run_merge(
        &env,
        &lead,
        &repo,
        &[
            "--json",
            "--merge-into",
            "integration",
            "--check",
            "test -e a.txt",
        ],
    )
    .assert()
    .success()
    .get_output()
    .clone();
    let r = parse(&out.stdout);
    assert_eq!(r["state"], "done");
    let m = &r["merge"];
    assert_eq!(m["into"], "integration");
    assert_eq!(m["before"], Value::Null);
    assert_eq!(m["checks_run"], 1);
    let members: Vec<(&str, &str, &str)> = m["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap(),
                x["branch"].as_str().unwrap(),
                x["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        members,
        [
            ("alice", "worktree-agent-aalice", "merged"),
            ("bob", "worktree-agent-abob", "merged")
        ]
    );
    assert_eq!(
        git(&repo, &["ls-tree", "-r", "--name-only", "integration"]),
        "a.txt\nb.txt\nnotes.md"
    );
    assert_eq!(checkout(&repo), before);
    // With --json, the queue's steps are JSON Lines on stderr (`merging`); warnings stay
    // `warning: …` lines (here: git knows no identity for the merge commits).
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| !l.starts_with("warning: "))
        .collect();
    let merging: Vec<String> = json_lines(lines.join("\n").as_bytes())
        .into_iter()
        .filter(|l| l["type"] == "merging")
        .map(|l| l["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        merging.contains(&"alice: merged".to_string()),
        "{merging:?}"
    );
}

/// The lead's turn has ended, but its background helpers still work: the run is done (and
/// merges) only once they have finished.
#[test]
fn the_run_waits_for_background_helpers_before_it_is_done_and_merges() {
    let Some((env, _server, repo, lead)) = repo_env(BACKGROUND_HELPERS) else {
        return;
    };
    let out = run_merge(
        &env,
        &lead,
        &repo,
        &["--json", "--merge-into", "integration"],
    )
    .assert()
    .success()
    .get_output()
    .clone();
    let r = parse(&out.stdout);
    assert_eq!(r["state"], "done");
    let statuses: Vec<&str> = r["merge"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["status"].as_str().unwrap())
        .collect();
    // Ended before they committed, it would have found nothing to merge (up_to_date).
    assert_eq!(statuses, ["merged", "merged"], "{r}");
}

#[test]
fn a_helper_that_breaks_the_check_is_set_aside_with_exit_10() {
    let Some((env, _server, repo, lead)) = repo_env(HELPERS) else {
        return;
    };
    let out = run_merge(
        &env,
        &lead,
        &repo,
        &["--merge-into", "integration", "--check", "test ! -e b.txt"],
    )
    .assert()
    .code(10)
    .get_output()
    .clone();
    // The answer alone on stdout; the merge told on stderr.
    assert_eq!(String::from_utf8_lossy(&out.stdout), "STUB ANSWER\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("alice: merged"), "{err}");
    assert!(
        err.contains("bob: set aside: the check failed (exit code 1)"),
        "{err}"
    );
    assert!(
        err.contains("error: 1 of 2 member(s) set aside: bob"),
        "{err}"
    );
    assert_eq!(
        git(&repo, &["ls-tree", "-r", "--name-only", "integration"]),
        "a.txt\nnotes.md"
    );
}

#[test]
fn no_helper_worktree_merges_nothing_and_says_so() {
    let Some((env, _server, repo, lead)) = repo_env("") else {
        return;
    };
    let out = run_merge(
        &env,
        &lead,
        &repo,
        &["--json", "--merge-into", "integration"],
    )
    .assert()
    .success()
    .get_output()
    .clone();
    assert_eq!(parse(&out.stdout)["merge"], Value::Null);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing merged onto integration"), "{err}");
    assert!(
        Command::new("git")
            .current_dir(&repo)
            .args(["rev-parse", "--verify", "--quiet", "refs/heads/integration"])
            .output()
            .unwrap()
            .stdout
            .is_empty()
    );
}

#[test]
fn a_merge_into_that_cannot_merge_is_a_usage_error_before_the_lead_starts() {
    let Some((env, _server, repo, lead)) = repo_env(HELPERS) else {
        return;
    };
    // A branch checked out (main, here), not a branch name, or one git reads as another
    // (`@` is HEAD's branch; `refs/heads/x` would be `refs/heads/refs/heads/x`): refused
    // before the lead starts.
    for into in ["main", "a..b", "@", "refs/heads/x"] {
        run_merge(&env, &lead, &repo, &["--merge-into", into])
            .assert()
            .code(2)
            .stderr(predicates::str::starts_with("error: --merge-into: "));
    }
    fs::remove_dir_all(repo.join(".git")).unwrap();
    run_merge(&env, &lead, &repo, &["--merge-into", "integration"])
        .assert()
        .code(2)
        .stderr(predicates::str::starts_with("error: --merge-into: "));
    assert!(!env.root.join("prompt-seen").exists());
    // --check needs --merge-into (clap).
    run_merge(&env, &lead, &repo, &["--check", "true"])
        .assert()
        .code(2);
}

/// With --export, the record is taken once the merge is done, and says what merged:
/// `summary.json`'s `run.merge` (the queue's own words) and report.md's "Merged onto" section;
/// a run with --merge-into that merged nothing says why.
#[test]
fn the_record_of_a_run_says_what_its_merge_did() {
    let Some((env, _server, repo, lead)) = repo_env(HELPERS) else {
        return;
    };
    let rec = env.dir.path().join("rec");
    let args = ["--json", "--merge-into", "integration", "--check"];
    run_merge(&env, &lead, &repo, &args)
        .args(["test ! -e b.txt", "--export", rec.to_str().unwrap()])
        .assert()
        .code(10);
    let s = parse(&fs::read(rec.join("summary.json")).unwrap());
    let m = &s["run"]["merge"];
    let after = git(&repo, &["rev-parse", "integration"]);
    assert_eq!(m["into"], "integration");
    assert_eq!(m["before"], Value::Null);
    assert_eq!(m["after"], after.as_str());
    assert_eq!(m["check"], "test ! -e b.txt");
    assert_eq!(m["error"], Value::Null);
    let members: Vec<(&str, &str)> = m["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["name"].as_str().unwrap(), x["status"].as_str().unwrap()))
        .collect();
    assert_eq!(members, [("alice", "merged"), ("bob", "check_failed")]);
    let report = fs::read_to_string(rec.join("report.md")).unwrap();
    assert!(report.contains("### Merged onto integration\n"), "{report}");
    assert!(
        report.contains(&format!("integration was made at {}", &after[..12])),
        "{report}"
    );
    assert!(
        report.contains("| bob | worktree\\-agent\\-abob | set aside: the check failed |"),
        "{report}"
    );

    // Nothing to merge: the record says so.
    let Some((env, _server, repo, lead)) = repo_env("") else {
        return;
    };
    let rec = env.dir.path().join("rec");
    run_merge(&env, &lead, &repo, &["--merge-into", "integration"])
        .args(["--export", rec.to_str().unwrap()])
        .assert()
        .success();
    let s = parse(&fs::read(rec.join("summary.json")).unwrap());
    assert_eq!(s["run"]["merge"]["members"], json!([]));
    assert!(
        s["run"]["merge"]["error"]
            .as_str()
            .unwrap()
            .starts_with("nothing was merged"),
        "{s}"
    );
}
