//! The GitHub Action's merge-into, check and pull-request inputs with a stub teamctl and a stub
//! gh: passed to `teamctl run` as data, refused without merge-into, and a pull request opened
//! only when something was merged (the branch pushed to origin first). The runner that plays
//! GitHub's is action.rs's.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::action::{Runner, calls, result_doc, stub_teamctl, tools_here};
use crate::common::git;

/// The workspace as a git repository whose `origin` is a bare one beside it, with a branch
/// `integration` one commit ahead of main (what `run --merge-into` would have made); a stub gh
/// (TEAMCTL_GH_BIN) that logs its arguments and its body and prints a URL.
pub(crate) fn repo_and_gh(r: &mut Runner) -> std::path::PathBuf {
    let ws = r.workspace();
    let origin = r.path().join("origin.git");
    git(&r.path(), &["init", "-q", "--bare", "origin.git"]);
    git(&ws, &["init", "-q", "-b", "main"]);
    fs::write(ws.join("notes.md"), "base\n").unwrap();
    git(&ws, &["add", "."]);
    git(&ws, &["commit", "-qm", "base"]);
    git(
        &ws,
        &["remote", "add", "origin", &origin.display().to_string()],
    );
    git(&ws, &["branch", "integration"]);
    let gh = r.path().join("gh");
    fs::write(
        &gh,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" > '{d}/gh-args'\nwhile [ $# -gt 0 ]; do [ \"$1\" = --body-file ] && cp \"$2\" '{d}/gh-body'; shift; done\necho 'Creating pull request'\necho https://github.com/o/r/pull/7\n",
            d = r.path().display()
        ),
    )
    .unwrap();
    fs::set_permissions(&gh, fs::Permissions::from_mode(0o755)).unwrap();
    r.set("TEAMCTL_GH_BIN", gh.display().to_string());
    origin
}

fn merged_doc(members: Value) -> Value {
    let mut doc = result_doc("done", "ok", Value::Null);
    doc["merge"] = json!({"into": "integration", "members": members});
    doc
}

#[test]
fn merge_into_and_check_reach_run_and_a_pull_request_is_opened_of_what_merged() {
    if !tools_here() {
        return;
    }
    let mut r = Runner::new();
    let origin = repo_and_gh(&mut r);
    let doc = merged_doc(json!([
        {"name": "alice", "status": "merged"},
        {"name": "**bob** <img src=x>", "status": "check_failed"}
    ]));
    let stub = stub_teamctl(&mut r, &doc, 10, "## report\n");
    let claude = stub.join("claude").display().to_string();
    let check = "cargo test; echo $(touch pwned)";
    let run = r.run(&[
        ("prompt", "p"),
        ("claude-bin", &claude),
        ("teamctl-version", "installed"),
        ("name", "t1"),
        ("merge-into", "integration"),
        ("check", check),
        ("pull-request", "true"),
    ]);
    // The run's exit (some set aside) passes through; the pull request was still opened.
    assert_eq!(run.code, 10, "{run:#?}");
    assert_eq!(run.outputs["exit-code"], "10");
    assert_eq!(
        run.outputs["pull-request-url"],
        "https://github.com/o/r/pull/7"
    );
    let call = calls(&stub)
        .into_iter()
        .find(|c| c.starts_with("run "))
        .unwrap();
    assert!(
        call.contains(&format!(
            "--merge-into integration --check {check} --export "
        )),
        "{call}"
    );
    assert!(!r.workspace().join("pwned").exists());
    // Pushed, then gh asked for a pull request of that branch.
    assert_eq!(
        git(&origin, &["rev-parse", "integration"]),
        git(&r.workspace(), &["rev-parse", "integration"])
    );
    let args = fs::read_to_string(r.path().join("gh-args")).unwrap();
    assert!(
        args.starts_with(
            "pr create --head integration --title teamctl run t1: 1 merged --body-file "
        ),
        "{args}"
    );
    let body = fs::read_to_string(r.path().join("gh-body")).unwrap();
    assert_eq!(
        body,
        "## The work of teamctl run t1\n\nMerged by `teamctl run --merge-into`:\n\n\
         - alice: merged\n- (a helper): check failed\n\n## report\n"
    ); // The job summary: the record's report.md, then what merged and what was set aside.
    assert!(
        run.summary.starts_with("## report\n")
            && run.summary.contains(
                "\n### Merged by `teamctl run --merge-into`\n\n\
                 - alice: merged\n- (a helper): check failed\n"
            ),
        "{}",
        run.summary
    );
}

#[test]
fn no_pull_request_when_nothing_merged_or_not_asked() {
    if !tools_here() {
        return;
    }
    let mut r = Runner::new();
    repo_and_gh(&mut r);
    let claude_of = |stub: &Path| stub.join("claude").display().to_string();
    for (doc, pr) in [
        (
            merged_doc(json!([{"name": "a", "status": "conflict"}])),
            "true",
        ),
        (
            merged_doc(json!([{"name": "a", "status": "merged"}])),
            "false",
        ),
        (result_doc("done", "ok", Value::Null), "true"),
    ] {
        let stub = stub_teamctl(&mut r, &doc, 0, "");
        let claude = claude_of(&stub);
        let run = r.run(&[
            ("prompt", "p"),
            ("claude-bin", &claude),
            ("teamctl-version", "installed"),
            ("merge-into", "integration"),
            ("pull-request", pr),
        ]);
        assert_eq!(run.code, 0, "{run:#?}");
        assert_eq!(run.outputs["pull-request-url"], "");
        assert!(!r.path().join("gh-args").exists());
    }
}

#[test]
fn check_and_pull_request_need_merge_into() {
    if !tools_here() {
        return;
    }
    let mut r = Runner::new();
    let stub = stub_teamctl(&mut r, &result_doc("done", "", Value::Null), 0, "");
    let claude = stub.join("claude").display().to_string();
    for (inputs, why) in [
        (vec![("check", "true")], "check needs merge-into"),
        (
            vec![("pull-request", "true")],
            "pull-request needs merge-into",
        ),
        (
            vec![("merge-into", "i"), ("pull-request", "yes")],
            "pull-request must be true or false",
        ),
    ] {
        let mut all = vec![
            ("prompt", "p"),
            ("claude-bin", claude.as_str()),
            ("teamctl-version", "installed"),
        ];
        all.extend(inputs);
        let run = r.run(&all);
        assert_eq!(run.code, 2, "{all:?}");
        let err = &run.stderr["run"];
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("teamctl-action: ") && err.contains(why),
            "{err}"
        );
    }
    assert!(!calls(&stub).iter().any(|c| c.starts_with("run")));
}
