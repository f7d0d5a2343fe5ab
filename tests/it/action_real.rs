//! The GitHub Action with the real Claude Code offline (the mock Messages API of tests/e2e):
//! from a prompt to a record, its page (opened in headless Chromium), a job summary and the
//! outputs; a policy's rules applied by the client; the spending cap; merge-into, check and
//! pull-request. The runner that plays GitHub's is action.rs's.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

use crate::action::{Runner, root, tools_here, with};
use crate::action_merge::repo_and_gh;
use crate::common::git;
use crate::common::{TmuxServer, bin, browser};

/// The mock Messages API of tests/e2e on 127.0.0.1, killed when dropped.
struct Mock {
    child: Child,
    port: u16,
}

impl Mock {
    fn start(log: &Path) -> Mock {
        let mut child = Command::new("node")
            .arg(root().join("tests/e2e/mock-api.js"))
            .env("MOCK_LOG", log)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = serde_json::from_str::<Value>(&line).unwrap()["port"]
            .as_u64()
            .unwrap();
        Mock {
            child,
            port: u16::try_from(port).unwrap(),
        }
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The real Claude Code of tests/e2e when it and tmux are installed; in CI their absence is a
/// failure, elsewhere a skip.
fn real_claude() -> Option<PathBuf> {
    let claude = root().join("tests/e2e/node_modules/@anthropic-ai/claude-code-linux-x64/claude");
    let tmux = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if claude.is_file() && tmux {
        return Some(claude);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "`npm ci --prefix tests/e2e` and tmux are needed"
    );
    eprintln!("skipping: run `npm ci --prefix tests/e2e` (and install tmux) for this test");
    None
}

/// A runner whose steps reach the mock, with teamctl on PATH and its own tmux server.
fn real_runner(mock: &Mock) -> (Runner, TmuxServer) {
    let mut r = Runner::new();
    let bin_dir = r.path().join("bin");
    fs::create_dir_all(&bin_dir).unwrap();
    std::os::unix::fs::symlink(bin(), bin_dir.join("teamctl")).unwrap();
    r.path_first(&bin_dir);
    let tmux = r.path().join("tmux");
    fs::create_dir_all(&tmux).unwrap();
    for (k, v) in [
        ("TMUX_TMPDIR", tmux.display().to_string()),
        ("TERM", "xterm-256color".into()),
        (
            "ANTHROPIC_BASE_URL",
            format!("http://127.0.0.1:{}", mock.port),
        ),
        (
            "ANTHROPIC_API_KEY",
            "sk-ant-mock-000000000000000000000000".into(),
        ),
        ("DISABLE_TELEMETRY", "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("ENABLE_TOOL_SEARCH", "false".into()),
    ] {
        r.set(k, v);
    }
    // As root, Claude Code refuses to skip permissions without it.
    if rustix::process::geteuid().is_root() {
        r.set("IS_SANDBOX", "1");
    }
    (r, TmuxServer(tmux))
}

/// The tool results the lead's model received, from the record's lead transcript.
fn lead_tool_results(record: &Path, into: &Path) -> Vec<Value> {
    fs::create_dir_all(into).unwrap();
    let ok = Command::new("tar")
        .arg("-xzf")
        .arg(record)
        .arg("-C")
        .arg(into)
        .status()
        .unwrap();
    assert!(ok.success());
    let top = fs::read_dir(into).unwrap().next().unwrap().unwrap().path();
    let dir = top.join("transcripts/team-lead");
    let mut out = Vec::new();
    for e in fs::read_dir(&dir).unwrap() {
        for line in fs::read_to_string(e.unwrap().path()).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            if v["type"] != "user" {
                continue;
            }
            if let Some(blocks) = v["message"]["content"].as_array() {
                out.extend(
                    blocks
                        .iter()
                        .filter(|b| b["type"] == "tool_result")
                        .cloned(),
                );
            }
        }
    }
    out
}

/// The record's report.html of a real run (extracted into `dir`), equal to the page the action
/// uploads (`page`), opens in headless Chromium: nothing loaded, no error, its charts, its
/// costs equal the record's summary.json's.
fn page_in_a_browser(dir: &Path, page: &Path) {
    let top = fs::read_dir(dir).unwrap().next().unwrap().unwrap().path();
    assert_eq!(
        fs::read(top.join("report.html")).unwrap(),
        fs::read(page).unwrap()
    );
    let Some(browser) = browser() else { return };
    let seen = browser.open(page, &top.join("summary.json"), &["REPORT TOK-A1"]);
    assert_eq!(seen["other_requests"], 0, "{seen}");
    assert!(seen["members"].as_u64() >= Some(2), "{seen}");
    assert!(seen["series_points"].as_u64() >= Some(2), "{seen}");
}

/// The action's steps with the real 2.1.332 (claude-bin) and this teamctl (installed), offline:
/// a prompt whose lead spawns a teammate that reports ends done with the lead's answer, what
/// the team cost, its record (uploaded) and the record's report in the job summary; with a
/// policy the client itself runs what it allows and denies the rest without asking; past
/// max-cost the run ends budget (exit 6) with its outputs, summary and record all the same.
#[test]
fn real_claude_code_from_a_prompt_to_a_record_and_a_summary() {
    let Some(claude) = real_claude() else { return };
    if !tools_here() {
        return;
    }
    let log = tempfile::NamedTempFile::new().unwrap();
    let mock = Mock::start(log.path());
    let claude = claude.display().to_string();
    let base = [
        ("claude-bin", claude.as_str()),
        ("teamctl-version", "installed"),
        ("timeout", "90s"),
    ];

    // Done: the lead spawns `worker`, which reports; the lead's final answer.
    let (r, _tmux) = real_runner(&mock);
    let run = r.run(&with(&base, &[("prompt", "Spawn: worker TOK-A1")]));
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.outputs["state"], "done");
    assert_eq!(
        run.outputs["result"],
        "FINAL ANSWER: the team reported TOK-A1"
    );
    assert_eq!(run.outputs["exit-code"], "0");
    let cost: f64 = run.outputs["cost_usd"].parse().unwrap();
    assert!(cost > 0.0, "{cost}");
    let record = PathBuf::from(&run.outputs["record"]);
    let result: Value =
        serde_json::from_str(&fs::read_to_string(&run.outputs["result-json"]).unwrap()).unwrap();
    assert!(result["teammates"][0]["name"] == "worker", "{result}");
    let page = &run.outputs["report"];
    assert_eq!(
        run.upload.as_deref().unwrap(),
        [
            run.outputs["record"].clone(),
            page.clone(),
            run.outputs["result-json"].clone()
        ]
    );
    assert_eq!(run.page.as_deref(), Some(page.as_str()));
    assert!(
        run.summary
            .contains("FINAL ANSWER: the team reported TOK-A1")
            && run.summary.contains("REPORT TOK-A1")
            && run.summary.contains("Team total"),
        "{}",
        run.summary
    );
    // prepare wrote the job's own config dir, nothing under HOME.
    assert!(
        r.path()
            .join("runner/teamctl-claude/.claude.json")
            .is_file()
    );
    assert!(
        !r.path().join("home/.claude").exists() && !r.path().join("home/.claude.json").exists()
    );
    let results = lead_tool_results(&record, &r.path().join("x"));
    assert!(!results.is_empty());
    page_in_a_browser(&r.path().join("x"), Path::new(page));
    drop(r);

    // A policy: Claude Code's dontAsk mode runs what its rules allow and denies the rest.
    let (r, _tmux) = real_runner(&mock);
    let policy = r.path().join("policy.json");
    fs::write(
        &policy,
        r#"{"permissions": {"allow": ["Bash(echo:*)"], "deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    let policy = policy.display().to_string();
    let run = r.run(&with(
        &base,
        &[
            ("prompt", "Exec: echo ALLOWED-B1"),
            ("policy", &policy),
            ("name", "allowed"),
        ],
    ));
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.outputs["state"], "done");
    let results = lead_tool_results(Path::new(&run.outputs["record"]), &r.path().join("x1"));
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["content"], "ALLOWED-B1");
    let run = r.run(&with(
        &base,
        &[
            ("prompt", "Exec: touch denied-b2.txt"),
            ("policy", &policy),
            ("name", "denied"),
        ],
    ));
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(
        !r.workspace().join("denied-b2.txt").exists(),
        "denied, not run"
    );
    let results = lead_tool_results(Path::new(&run.outputs["record"]), &r.path().join("x2"));
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["is_error"], true);
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .contains("don't ask mode"),
        "{results:?}"
    );
    let settings: Value = serde_json::from_str(
        &fs::read_to_string(r.path().join("runner/teamctl-claude/settings.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(settings["permissions"]["allow"][0], "Bash(echo:*)");
    drop(r);

    // The spending cap: each mock response costs $0.00014, so the third crosses it.
    let (r, _tmux) = real_runner(&mock);
    let run = r.run(&with(
        &base,
        &[("prompt", "Spawn: worker TOK-C1"), ("max-cost", "0.0003")],
    ));
    assert_eq!(run.code, 6, "{run:#?}");
    assert_eq!(run.outputs["state"], "budget");
    assert_eq!(run.outputs["exit-code"], "6");
    assert!(run.outputs["cost_usd"].parse::<f64>().unwrap() > 0.0003);
    assert!(Path::new(&run.outputs["record"]).is_file());
    assert!(run.upload.is_some());
    assert!(run.summary.contains("budget"), "{}", run.summary);
}

/// merge-into, check and pull-request with the real 2.1.332, offline: the lead starts two
/// helpers with `isolation: "worktree"` (the mock's `SpawnWT:`), each commits a file on its own
/// branch; the run merges both onto integration with the check, then the branch is pushed to
/// origin (a bare repository beside the workspace) and a pull request opened with a stand-in
/// for gh, its body naming both; the workspace's HEAD and main are untouched.
#[test]
fn real_claude_code_helpers_work_merged_and_a_pull_request_opened() {
    let Some(claude) = real_claude() else { return };
    if !tools_here() {
        return;
    }
    let log = tempfile::NamedTempFile::new().unwrap();
    let mock = Mock::start(log.path());
    let claude = claude.display().to_string();
    let (mut r, _tmux) = real_runner(&mock);
    let origin = repo_and_gh(&mut r);
    let ws = r.workspace();
    git(&ws, &["branch", "-D", "integration"]);
    let head = git(&ws, &["rev-parse", "HEAD"]);
    let run = r.run(&[
        ("claude-bin", claude.as_str()),
        ("teamctl-version", "installed"),
        ("timeout", "90s"),
        ("prompt", "SpawnWT: alice a.txt bob b.txt"),
        ("merge-into", "integration"),
        ("check", "test -e a.txt && test -e b.txt"),
        ("pull-request", "true"),
    ]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(run.outputs["state"], "done");
    assert_eq!(
        run.outputs["pull-request-url"],
        "https://github.com/o/r/pull/7"
    );
    assert_eq!(
        git(&origin, &["ls-tree", "-r", "--name-only", "integration"]),
        "a.txt\nb.txt\nnotes.md"
    );
    let body = fs::read_to_string(r.path().join("gh-body")).unwrap();
    assert!(
        body.contains("- alice: merged\n- bob: merged\n")
            || body.contains("- bob: merged\n- alice: merged\n"),
        "{body}"
    );
    assert_eq!(git(&ws, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&ws, &["rev-parse", "main"]), head);
}
