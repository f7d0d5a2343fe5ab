//! End to end with the real Claude Code (teamctl sending to a teammate started by hand; a team
//! made by `teamctl create`; `ask`, `wait` and the CI recipe in such a team; requests answered
//! by `approve --follow --policy`; what the transcripts say: activity, cost, the spending cap): a 2.1.332 pane teammate (npm
//! `@anthropic-ai/claude-code-linux-x64`, installed by `npm ci --prefix tests/e2e`) runs offline
//! in a private tmux server against a mock of the Messages API on 127.0.0.1. teamctl sends it
//! messages; the test checks each is consumed by the teammate and answered (via its
//! `SendMessage` tool) exactly once. The driver is `tests/e2e/e2e.js`; see its README.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::bin;

/// `tests/e2e` when the real binary and tmux are installed; in CI (`CI` set) their absence is a
/// failure, elsewhere a skip.
fn e2e_dir() -> Option<PathBuf> {
    let e2e = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
    let installed = e2e
        .join("node_modules/@anthropic-ai/claude-code-linux-x64/claude")
        .is_file()
        && Command::new("tmux")
            .arg("-V")
            .output()
            .is_ok_and(|o| o.status.success());
    if installed {
        return Some(e2e);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the e2e peer is not installed: `npm ci --prefix tests/e2e` and tmux are needed"
    );
    eprintln!("skipping: run `npm ci --prefix tests/e2e` (and install tmux) for this test");
    None
}

/// Runs the driver `script` in `tests/e2e` with `args` (teamctl's `TEAMCTL_*` variables
/// removed), asserts it passed and returns its JSON summary (the last stdout line).
fn driver(e2e: &Path, script: &str, args: &[&std::ffi::OsStr]) -> Value {
    let summary = node(e2e, script, args, &[]);
    assert_eq!(summary["claude"], "2.1.332 (Claude Code)");
    summary
}

/// Runs the e2e driver `script` with `args` and `env`, and returns its summary (its last line),
/// which must say `ok`. A run that failed is run once more, from scratch: under the whole
/// suite's load 2.1.332 now and then stops polling its inbox, drawing its pane or writing its
/// transcript for seconds to tens of seconds, and 2.1.112 can lose a message in its own read
/// race; a second failure fails the test. Each failure's first line (the driver's `FAIL:` line)
/// is written straight to the test process's stderr, past the test harness's capture, so that
/// a CI log shows it among the test results even when the second run passes; the first run's
/// whole output goes to the captured stderr.
fn node(e2e: &Path, script: &str, args: &[&std::ffi::OsStr], env: &[(&str, &str)]) -> Value {
    let run = || {
        Command::new("node")
            .arg(e2e.join(script))
            .args(args)
            .envs(env.iter().copied())
            .env_remove("TEAMCTL_TEAM")
            .env_remove("TEAMCTL_FROM")
            .output()
            .unwrap()
    };
    let said = |out: &std::process::Output| {
        format!(
            "{script} failed ({}):\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let mut out = run();
    if !out.status.success() {
        failed_line(script, args, &out);
        eprintln!("{}\n(once more)", said(&out));
        out = run();
        if !out.status.success() {
            failed_line(script, args, &out);
        }
    }
    assert!(out.status.success(), "{}", said(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["ok"], true);
    summary
}

/// Writes one line naming a failed driver run and its `FAIL:` line (else its first line of
/// stderr) to the process's stderr itself: `eprintln!` would be captured, and shown only with
/// the test's failure, far from the test results in a long log (flags with a path are left
/// out). The line and the run's last lines ([`tail_of`]) are also appended to the file
/// `TEAMCTL_SECOND_RUNS` names, when set: `.ci/run`
/// ends with that list, so a rare failure that passed on its second run is still seen.
fn failed_line(script: &str, args: &[&std::ffi::OsStr], out: &std::process::Output) {
    use std::io::Write;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let why = stderr
        .lines()
        .find(|l| l.contains(": FAIL: "))
        .or_else(|| stderr.lines().next())
        .unwrap_or("(nothing on stderr)");
    let flags: Vec<_> = args
        .iter()
        .map(|a| a.to_string_lossy())
        .filter(|a| !a.contains('/'))
        .collect();
    let line = format!(
        "real_claude: {script} {} failed ({}): {}\n",
        flags.join(" "),
        out.status,
        why.chars().take(400).collect::<String>()
    );
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
    if let Some(list) = std::env::var_os("TEAMCTL_SECOND_RUNS") {
        let told = format!("{line}{}", tail_of(out));
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(list)
            .and_then(|mut f| f.write_all(told.as_bytes()));
    }
}

/// The last lines of a failed driver run's stderr and stdout, indented, each control character
/// but a tab shown as `\u{…}` (a screen a driver captured must not drive the CI log's
/// terminal): what `.ci/run` prints under the run's line, so that a failure a second run hid can
/// still be explained.
fn tail_of(out: &std::process::Output) -> String {
    let mut told = String::new();
    for (name, bytes, n) in [("stderr", &out.stderr, 150), ("stdout", &out.stdout, 5)] {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().collect();
        told.push_str(&format!("    {name} (last {n} lines):\n"));
        for l in &lines[lines.len().saturating_sub(n)..] {
            let shown: String = l
                .chars()
                .take(400)
                .map(|c| match c {
                    '\t' => "\t".to_string(),
                    c if c.is_control() => format!("\\u{{{:x}}}", c as u32),
                    c => c.to_string(),
                })
                .collect();
            told.push_str(&format!("      {shown}\n"));
        }
    }
    told
}

#[test]
fn real_claude_code_teammate_receives_and_answers_teamctl_messages() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(&e2e, "e2e.js", &["--send-cmd".as_ref(), bin.as_os_str()]);
    assert_eq!(summary["A"]["seen_in_inbox"], true);
    assert_eq!(summary["B"]["tokens"].as_array().unwrap().len(), 5);
    assert_eq!(summary["worker_inbox_left"], 0);
}

/// `teamctl create` starts two real 2.1.332 teammates itself (tmux, `--claude-bin` pointing at
/// the npm binary, default permission mode), they reach `ready` and answer `send` (as
/// team-lead, and as a `send --join` member); the worker asks its lead for permission to run
/// Bash, `teamctl pending` lists it and `teamctl approve` lets it run; `teamctl shutdown --wait`
/// gets the second teammate's approval and `delete` the worker's. Driver:
/// `tests/e2e/create-e2e.js`.
#[test]
fn real_claude_code_team_made_by_teamctl_create() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "create-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert_eq!(
        summary["steps"].as_array().unwrap().last().unwrap(),
        "ready"
    );
    assert_eq!(summary["shutdown"], "approved");
    assert!(
        summary["approve_to_command_ms"].is_u64(),
        "the approved command ran"
    );
    assert!(
        summary["shutdown_wait_ms"].is_u64(),
        "shutdown --wait was approved"
    );
}

/// A real 2.1.332 teammate in a sandbox (`create --sandbox --worktree`, bubblewrap): it
/// answers a message, writes and commits in its own clone, a command that writes into the
/// checkout fails with a read-only file system and it goes on; `diff` sees its commit. Then a
/// real lead under `run --sandbox` spawns its pane teammate inside its sandbox and the run ends
/// done. Driver: `tests/e2e/sandbox-e2e.js`.
#[test]
fn real_claude_code_in_a_sandbox() {
    let Some(e2e) = e2e_dir() else { return };
    if !crate::common::bwrap_works() {
        return;
    }
    let bin = bin();
    let summary = driver(
        &e2e,
        "sandbox-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert_eq!(summary["sandbox"]["engine"], "bwrap");
    assert!(
        summary["refused"]
            .as_str()
            .is_some_and(|r| r.contains("Read-only file system")),
        "{summary}"
    );
    let run = driver(
        &e2e,
        "sandbox-e2e.js",
        &[
            "--teamctl".as_ref(),
            bin.as_os_str(),
            "--scenario".as_ref(),
            "run".as_ref(),
        ],
    );
    assert_eq!(run["members"], serde_json::json!(["team-lead", "worker"]));
}

/// `ask` and `wait` with a real 2.1.332 teammate in a team `teamctl create` made: `wait --idle`
/// after its turn, `ask` prints its answer, a turn without SendMessage is `ask` exit 5, a task
/// given with `tasks add --owner` and completed by the teammate ends `wait --tasks-done`; then
/// the README's CI recipe (examples/ci/team-review.sh) runs as it is. Driver:
/// `tests/e2e/ask-e2e.js`.
#[test]
fn real_claude_code_ask_wait_and_the_ci_recipe() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(&e2e, "ask-e2e.js", &["--teamctl".as_ref(), bin.as_os_str()]);
    // Without jq (outside CI) the recipe is skipped.
    assert!(
        summary["recipe_ms"].is_u64() || std::env::var_os("CI").is_none(),
        "the CI recipe ran"
    );
}

/// `teamctl run` starts a real 2.1.332 lead headless (tmux, `--teammate-mode tmux`); the mock
/// has it spawn a pane teammate `worker` with the Agent tool, the worker reports to team-lead,
/// and the lead ends its turn with a final text. run must report the team with that teammate,
/// print the final text and exit 0 leaving nothing running; a lead whose turn never ends must
/// time out (exit 3) with its pane's last lines and clean up the same way; a run with
/// `--max-cost` below what the mock's responses cost ends `budget` (exit 6), cleaned up the same
/// way. All three leave their record (`--export`: the lead's and the worker's transcripts, the
/// whole conversation, the final answer, the cost per member), and the done run's trace and
/// metrics reach an OTLP receiver on 127.0.0.1. Driver: `tests/e2e/run-e2e.js`.
#[test]
fn real_claude_code_lead_run_headless_until_done() {
    let Some(e2e) = e2e_dir() else { return };
    let summary = node(
        &e2e,
        "run-e2e.js",
        &["--teamctl".as_ref(), bin().as_os_str()],
        &[],
    );
    assert_eq!(summary["done"]["teammates"], 1);
    assert_eq!(
        summary["done"]["states"]
            .as_array()
            .unwrap()
            .last()
            .unwrap(),
        "done"
    );
    assert!(summary["timeout"]["elapsed_ms"].is_u64());
    assert!(summary["done"]["record"]["messages"].as_u64() >= Some(3));
    assert!(summary["done"]["otel"]["worker_events"].as_u64() >= Some(1));
    assert!(summary["budget"]["cost_usd"].as_f64().unwrap() > 0.0003);
}

/// `teamctl prepare` alone, on an empty config dir, settles every start-up dialog of a real
/// 2.1.332 lead: `teamctl run` starts it and its first turn reaches the mock with no dialog in
/// the way (then SIGTERM ends the run, which cleans up). Driver: `tests/e2e/run-e2e.js
/// --scenario first-turn --prepare`; `scripts/compat.sh --shapes prepared` runs it for other
/// versions (2.1.112 passes too).
#[test]
fn real_claude_code_lead_reaches_its_first_turn_after_teamctl_prepare() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "run-e2e.js",
        &[
            "--teamctl".as_ref(),
            bin.as_os_str(),
            "--scenario".as_ref(),
            "first-turn".as_ref(),
            "--prepare".as_ref(),
        ],
    );
    assert_eq!(summary["prepared"]["changes"], 4);
    assert!(summary["first_turn"]["first_turn_ms"].is_u64());
}

/// `teamctl prepare` for one new folder after another (four at a time) while a real 2.1.332
/// lead started by `run` boots and writes its own `.claude.json`: every folder prepare trusted
/// stays trusted and every key the client wrote stays (2.1.332 sometimes answers a held lock
/// with a write that skips it: prepare checks once the file is quiet and writes again).
/// Driver: `tests/e2e/run-e2e.js --scenario concurrent-prepare --prepare`.
#[test]
fn real_claude_code_and_concurrent_prepares_lose_nothing() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "run-e2e.js",
        &[
            "--teamctl".as_ref(),
            bin.as_os_str(),
            "--scenario".as_ref(),
            "concurrent-prepare".as_ref(),
            "--prepare".as_ref(),
        ],
    );
    assert!(summary["concurrent_prepare"]["prepares"].as_u64().unwrap() >= 1);
}

/// The fleet recipe's unit script (examples/fleet/teamctl-unit.sh, each pod of the Kubernetes
/// Indexed Job) for indexes 0, 1 and 2 at once, each with its own empty config dir, against the
/// mock API with the real 2.1.332 client: `prepare` settles each config dir, each team is done,
/// three records, one per index, each with what its members cost, and `teamctl report` shows the
/// three teams done with those costs and their total. Driver:
/// `tests/e2e/fleet-e2e.js`.
#[test]
fn real_claude_code_fleet_units_leave_one_record_each() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "fleet-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    let units = summary["units"].as_array().unwrap();
    assert_eq!(units.len(), 3);
    assert!(units.iter().all(|u| u["cost_usd"].as_f64() > Some(0.0)));
}

/// `approve --follow --policy` answers real 2.1.332 teammates as requests arrive: the worker
/// (default permission mode, made by `teamctl create`) gets an allowed `echo` run, a denied `rm`
/// not run (the model receives "denied by policy rule Bash(rm:*)"), an unmatched `touch` left
/// pending; with the follower stopped, `wait --idle --policy` answers the next request and the
/// resumed follower does not answer it again; a second teammate started with `--plan-mode-required` gets its plan approved
/// (`"plans": "approve"`, held back until its turn ended) and its model receives "[Plan
/// Approved]"; the follower ends by itself when `teamctl delete` removes the team. Driver:
/// `tests/e2e/policy-e2e.js`.
#[test]
fn real_claude_code_requests_answered_by_policy() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "policy-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert_eq!(summary["allow"]["rule"], "Bash(echo:*)");
    assert_eq!(
        summary["deny"]["reason"],
        "denied by policy rule Bash(rm:*)"
    );
    assert_eq!(summary["deny"]["model_saw"]["is_error"], true);
    assert!(
        summary["deny"]["model_saw"]["text"]
            .as_str()
            .unwrap()
            .ends_with("denied by policy rule Bash(rm:*)")
    );
    assert_eq!(summary["wait_policy"]["answered_by"], "wait");
    assert_eq!(summary["wait_policy"]["follower_answered_again"], false);
    assert_eq!(summary["plan"]["model_saw"], "[Plan Approved]");
    assert_eq!(summary["unmatched"]["still_pending"], true);
    assert_eq!(summary["end"]["why"], "team_gone");
}

/// What teamctl reads from real 2.1.332 transcripts (the mock reporting realistic usage, each
/// response split over two entries): with a pane teammate and, in parallel, with an in-process
/// one, `log --follow` prints the teammate's Bash call while it runs and `log -n 1` and `status`
/// show it; `wait --max-cost` exits 6 when the teammate's turn crosses the cap; once the
/// sessions end (SIGTERM), `status --json` reports per member and in total exactly the tokens
/// and `totalCostUSD` Claude Code recorded, and the computed figures it reported while they ran
/// equal those records. Driver: `tests/e2e/transcripts-e2e.js`.
#[test]
fn real_claude_code_transcripts_activity_cost_and_cap() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let runs: Vec<_> = ["tmux", "in-process"]
        .into_iter()
        .map(|mode| {
            let (e2e, bin) = (e2e.clone(), bin.clone());
            std::thread::spawn(move || {
                driver(
                    &e2e,
                    "transcripts-e2e.js",
                    &[
                        "--teamctl".as_ref(),
                        bin.as_os_str(),
                        "--mode".as_ref(),
                        mode.as_ref(),
                    ],
                )
            })
        })
        .collect();
    for r in runs {
        let summary = r.join().unwrap();
        assert!(
            summary["activity"]["result_after_call_ms"]
                .as_u64()
                .unwrap()
                >= 3000
        );
        let cost = &summary["cost"];
        assert!(cost["worker_entries"].as_u64() > cost["worker_responses"].as_u64());
        if summary["mode"] == "tmux" {
            assert!(
                summary["budget"]["spent_at_exit"].as_f64() > summary["budget"]["cap"].as_f64()
            );
        }
    }
}

/// `teamctl top` with a real 2.1.332 teammate (made by `teamctl create`, default permission
/// mode), driven through its keys in a pane of the same private tmux server: a message typed
/// with `m` reaches the teammate and its reply shows in top (the timeline, and in full in
/// team-lead's inbox); its permission request shows under "Waiting for the lead", `a` and `y`
/// approve it and the command runs; `q` gives the terminal back. Driver:
/// `tests/e2e/top-e2e.js`.
#[test]
fn real_claude_code_teammate_seen_and_answered_in_top() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(&e2e, "top-e2e.js", &["--teamctl".as_ref(), bin.as_os_str()]);
    assert!(
        summary["reply_on_screen_ms"].is_u64(),
        "the reply showed in top"
    );
    assert!(
        summary["approve_to_command_ms"].is_u64(),
        "the command approved in top ran"
    );
}

/// A team file (`create --file`) gives two real 2.1.332 teammates their own model, agent type
/// (`.claude/agents/reviewer.md`, its prompt in the requests) and git worktree; both edit the
/// same path on their own branches; `wait --max-cost-per-member --warn-at` stops at the member
/// over it after one `budget_warning` for it; `delete` keeps the dirty worktree and removes the
/// clean one. Driver: `tests/e2e/shape-e2e.js`.
#[test]
fn real_claude_code_team_from_a_team_file() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "shape-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert_eq!(summary["models"]["alice"], "claude-sonnet-4-5");
    assert_eq!(summary["warning"]["member"], "alice");
    assert_eq!(
        summary["worktrees"],
        serde_json::json!(["alice: kept", "bob: removed"])
    );
}

/// A team file gives one real 2.1.332 teammate its own runtime: its MCP server (strict: the
/// user-scope one is gone) offers tools saying that its secret (`env`, `${NAME}` read from
/// teamctl's environment), the top level's `env` and its settings file's `env` reached it, and
/// its requests carry its effort; the other teammate has none of it. The secret is in no file
/// of the run, no process's argv and neither tmux environment. Driver:
/// `tests/e2e/runtime-e2e.js`.
#[test]
fn real_claude_code_teammate_with_its_own_runtime() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "runtime-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert_eq!(
        summary["alice"]["mcp_tools"],
        serde_json::json!([
            "mcp__probe__rt_probe_token_ok",
            "mcp__probe__rt_settings_mark_ok",
            "mcp__probe__rt_team_log_ok"
        ])
    );
    assert_eq!(summary["alice"]["effort"], "\"effort\":\"low\"");
    assert_eq!(
        summary["bob"]["mcp_tools"],
        serde_json::json!(["mcp__other__rt_other_unset"])
    );
}

/// Two real teammates from a team file, each on a worktree of its own, commit a file each;
/// `diff` shows their work, `wait --idle --merge-into` merges both branches onto a new branch
/// with a check (the checkout and main untouched), and `pr --dry-run` tells each one's
/// diffstat and cost. Driver: `tests/e2e/merge-e2e.js`.
#[test]
fn real_claude_code_team_work_merged_home() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "merge-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert_eq!(
        summary["merged"],
        serde_json::json!(["alice: merged", "bob: merged"])
    );
    assert_eq!(summary["checks_run"], 1);
}

/// `run --max-teammates 1` with a real 2.1.332 lead that starts two pane teammates: the second
/// has its pane ended by teamctl and the run ends done with one teammate. Driver:
/// `tests/e2e/limit-e2e.js`.
#[test]
fn real_claude_code_run_keeps_to_max_teammates() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "limit-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert!(
        summary["stopped"]
            .as_str()
            .unwrap()
            .starts_with("teammate w2 is past --max-teammates 1")
    );
    // w2 is gone from the team, or listed as exited, depending on when the run last looked.
    let running: Vec<&str> = summary["teammates"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str())
        .filter(|t| !t.ends_with(": exited"))
        .collect();
    assert_eq!(running, ["w1: idle"]);
}

/// Keeping a team going, against the real 2.1.332 with the mock's fault rules
/// (`CLAUDE_CODE_MAX_RETRIES=2`, `API_TIMEOUT_MS=5000`): `status --json` names why a pane
/// teammate does not move (429, 529, 500, a dropped connection, a request with no answer) and
/// why a `run` lead does not (429), and that run ends stuck (exit 7), not done; `wait` exits 7 on
/// a 429, 8 on a stalled request, 9 on a dead teammate with a task in progress; a nudge is
/// answered; a restarted teammate completes its task; `teamctl resume` after `tmux
/// kill-server`; `run --resume` of a lead killed under its run, and of one whose run was killed
/// too (its orphaned teammate ended, its report carried), each done with the team's
/// leadSessionId the resumed session's. Three drivers at once: `tests/e2e/keep-e2e.js
/// --scenario reasons|keep|resume`.
#[test]
fn real_claude_code_team_kept_going_through_api_errors_stalls_deaths_and_resumes() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let runs: Vec<_> = ["reasons", "keep", "resume"]
        .into_iter()
        .map(|scenario| {
            let (e2e, bin) = (e2e.clone(), bin.clone());
            std::thread::spawn(move || {
                driver(
                    &e2e,
                    "keep-e2e.js",
                    &[
                        "--teamctl".as_ref(),
                        bin.as_os_str(),
                        "--scenario".as_ref(),
                        scenario.as_ref(),
                    ],
                )
            })
        })
        .collect();
    let [reasons, keep, resume] = runs
        .into_iter()
        .map(|r| r.join().unwrap())
        .collect::<Vec<_>>()
        .try_into()
        .unwrap();
    let last = |seen: &Value| seen.as_array().unwrap().last().unwrap().clone();
    for (fault, waiting, status) in [
        ("429", "rate_limited", Value::from(429)),
        ("529", "overloaded", Value::from(529)),
        ("500", "api_error", Value::from(500)),
        ("drop", "api_error", Value::Null),
    ] {
        let l = last(&reasons["pane"][fault]);
        assert_eq!(
            (&l["waiting"], &l["status"]),
            (&Value::from(waiting), &status)
        );
        assert_eq!(l["exhausted"], true);
    }
    assert!(
        reasons["pane"]["hang"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["waiting"] == "no_response")
    );
    assert_eq!(reasons["lead"]["run"]["code"], 7);
    assert_eq!(reasons["lead"]["run"]["state"], "stuck");
    for (what, code) in [("rate_limit", 7), ("stall", 8), ("dead", 9), ("restart", 0)] {
        assert_eq!(keep[what]["code"], code, "{what}");
    }
    assert!(keep["nudge"]["release_to_answer_ms"].is_u64());
    assert!(resume["server_killed"]["session"].is_string());
    assert_eq!(resume["lead_killed"]["respawned"], true);
    assert_eq!(
        resume["lead_and_run_killed"]["resumed"]["ended"],
        serde_json::json!(["worker"])
    );
    assert_eq!(resume["lead_and_run_killed"]["resumed"]["messages"], 1);
}

/// Claude Code 2.1.112 from `scripts/compat.sh`'s cache (`$TEAMCTL_COMPAT_CACHE`, else
/// `$XDG_CACHE_HOME/teamctl-compat`, else `~/.cache/teamctl-compat`; `.ci/run` fetches it
/// before the tests with `scripts/compat.sh --fetch-only 2.1.112`). Missing: a failure in CI,
/// elsewhere a skip that says how to fetch it.
fn claude_2_1_112() -> Option<PathBuf> {
    let cache = std::env::var_os("TEAMCTL_COMPAT_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("teamctl-compat"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/teamctl-compat"))
        })?;
    let bin = cache.join("2.1.112/node_modules/@anthropic-ai/claude-code/cli.js");
    if bin.is_file() {
        return Some(bin);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "Claude Code 2.1.112 is not in {}: run `scripts/compat.sh --fetch-only 2.1.112`",
        cache.display()
    );
    eprintln!(
        "skipping the 2.1.112 part: Claude Code 2.1.112 is not in {} (`scripts/compat.sh \
         --fetch-only 2.1.112` fetches it)",
        cache.display()
    );
    None
}

/// Words to a name that is no member: a real 2.1.112 teammate told to `SendMessage` to `alise`
/// (the mock's `SendTo:` rule) writes it into `inboxes/alise.json`, which nobody reads; `status
/// --json` lists it with the certain suggestion alice, `doctor` warns, `redeliver alise
/// --dry-run` changes nothing, and `redeliver alise` moves it to alice, whose Claude Code takes it
/// and answers the worker; a second redeliver moves nothing. A real 2.1.332 teammate refuses the
/// same send ("No agent named 'alise' is reachable."), and status lists nothing; or, rarely,
/// writes alise.json anyway, which is then moved the same way. Driver:
/// `tests/e2e/misaddressed-e2e.js`.
#[test]
fn real_claude_code_misaddressed_message_redelivered() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "misaddressed-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert_eq!(summary["idle_notification"]["summary"], "[to alise] sendto");
    // 2.1.332 refuses the send, but now and then (2 runs in about 40, under load) it writes
    // alise.json all the same ("Message sent to alise's inbox"): then it is moved as with 2.1.112.
    if summary["alise_inbox"] == true {
        assert!(summary["answered_after_redeliver_ms"].is_u64());
    } else {
        // Mostly "No agent named 'alise' is reachable. …", at times "No teammate named 'alise'
        // is currently on team 'demo'. …".
        let refusal = summary["refusal"].as_str().unwrap();
        assert!(
            refusal.starts_with("No agent named 'alise' is reachable.")
                || refusal.starts_with("No teammate named 'alise' is currently on team"),
            "{refusal}"
        );
    }
    let Some(old) = claude_2_1_112() else { return };
    let summary = node(
        &e2e,
        "misaddressed-e2e.js",
        &[
            "--teamctl".as_ref(),
            bin.as_os_str(),
            "--claude-bin".as_ref(),
            old.as_os_str(),
        ],
        &[("CLAUDE_E2E_VERSION", "2.1.112")],
    );
    assert_eq!(summary["claude"], "2.1.112 (Claude Code)");
    assert_eq!(summary["alise_inbox"], true);
    assert!(summary["answered_after_redeliver_ms"].is_u64());
}

/// `teamctl bridge telegram` answers a real 2.1.332 teammate from a chat: its Bash request
/// reaches a mock Bot API on 127.0.0.1 with a code, a stranger's `approve` does nothing, the
/// allowed user's `approve <code>` lets the command run. Driver: `tests/e2e/bridge-e2e.js`.
#[test]
fn real_claude_code_request_answered_from_a_chat() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "bridge-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert!(summary["request_to_chat_ms"].is_u64());
    assert!(summary["chat_to_command_ms"].is_u64());
}

/// `run --bridge telegram` with a real 2.1.332 lead whose own permission prompt blocks its
/// Bash command: the prompt reaches a mock Bot API with a code, a stranger's `approve` is
/// refused, the allowed user's presses Enter on the prompt, the command runs and the run ends
/// done, its end posted. Driver: `tests/e2e/bridge-e2e.js --scenario run`.
#[test]
fn real_claude_code_run_answers_its_leads_prompt_from_a_chat() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let args = [
        "--teamctl".as_ref(),
        bin.as_os_str(),
        "--scenario".as_ref(),
        "run".as_ref(),
    ];
    let summary = node(&e2e, "bridge-e2e.js", &args, &[]);
    assert!(summary["claude"].as_str().unwrap().starts_with("2.1.332"));
    assert!(summary["run"]["prompt_to_chat_ms"].is_u64());
    assert!(summary["run"]["chat_to_command_ms"].is_u64());
}

/// `run --merge-into` with a real 2.1.332 lead in a git repository: it gives two helpers a
/// worktree each (the Agent tool's `isolation: "worktree"`), each commits a file, and once the
/// run is done both branches are merged onto a new branch with a check, the checkout and main
/// untouched; a second run whose check one helper's file breaks sets that one aside (exit 10).
/// Driver: `tests/e2e/run-merge-e2e.js`.
#[test]
fn real_claude_code_run_merges_its_helpers_worktrees() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "run-merge-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert_eq!(
        summary["merged"],
        serde_json::json!(["alice: merged", "bob: merged"])
    );
    assert_eq!(summary["checks_run"], 1);
    assert_eq!(
        summary["set_aside"],
        serde_json::json!(["alice: merged", "bob: check_failed"])
    );
}

/// `teamctl serve`'s page answers a real 2.1.332 teammate: the worker (default permission mode,
/// made by `teamctl create`) asks to run a Bash `echo`, the request shows on the page (headless
/// Chromium) with its command, Approve there writes the answer and the command runs; the answer
/// is journaled "via":"web" and told by `serve --json`; once the team is deleted the page says
/// it cannot be read. Driver: `tests/e2e/serve-e2e.js`.
#[test]
fn real_claude_code_request_approved_from_the_page() {
    let Some(e2e) = e2e_dir() else { return };
    if crate::common::browser().is_none() {
        return;
    }
    let bin = bin();
    let summary = driver(
        &e2e,
        "serve-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert!(
        summary["request_id"].as_str().unwrap().starts_with("perm-"),
        "{summary}"
    );
    eprintln!(
        "serve-e2e.js: the request shown {} ms after the message, the command ran {} ms after",
        summary["shown_ms"], summary["ran_ms"]
    );
}

/// A real 2.1.332 teammate made to meet Claude Code's start-up race on purpose (`config.json`
/// torn while it starts: it never registers the Stop hook that writes its idle notifications,
/// and writes its session without its team's name): `wait --idle` still returns within 20 s of
/// its turns' ends, by its transcript; `status --json` says `idle_unreported`, `doctor` warns,
/// and `ask` is answered, or exit 5 for a turn without SendMessage. Driver:
/// `tests/e2e/silent-e2e.js`.
#[test]
fn real_claude_code_teammate_that_never_reports_idle() {
    let Some(e2e) = e2e_dir() else { return };
    let bin = bin();
    let summary = driver(
        &e2e,
        "silent-e2e.js",
        &["--teamctl".as_ref(), bin.as_os_str()],
    );
    assert_eq!(summary["race_met"], true, "{summary}");
    assert_eq!(summary["status_waiting"], "idle_unreported");
    assert!(summary["echo_wait_idle_ms"].as_u64().unwrap() < 20_000);
}
