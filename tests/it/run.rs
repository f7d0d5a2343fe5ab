//! `teamctl run` with stub `claude` leads in a private tmux server: the done path, the JSON
//! contract, start-up dialogs found in the files and on the screen, a lead that never forms a
//! team, one that exits early, one run per name, signals and --keep. The real client is in
//! real_claude.rs.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{TestEnv, json as parse, json_lines, keys, wait_until};
use crate::common::{TmuxServer, cwd, script, tmux_env, tmux_has_session};

/// A stub lead: answers --version, forms `session-<8hex>` from --session-id with this
/// process as leadProcess, adds an in-process teammate `worker` whose own transcript shows an
/// ended turn, writes the lead's transcript (the prompt, then `STUB ANSWER`, a response of 1000
/// input and 500 output tokens: $0.014; the worker's: $0.00014), and on SIGTERM records its
/// cost-state ($0.5, as Claude Code 2.1.332 does at exit) and removes its team as Claude Code
/// does.
pub(crate) const STUB_LEAD: &str = r#"[ "$1" = --version ] && { echo '2.1.332 (Claude Code)'; exit 0; }
while [ $# -gt 0 ]; do
  case "$1" in --session-id) sid=$2; shift 2;; --) shift; prompt=$1; break;; *) shift;; esac
done
echo "$prompt" > "$CLAUDE_CONFIG_DIR/prompt-seen"
team=session-$(printf %s "$sid" | cut -c1-8)
dir=$CLAUDE_CONFIG_DIR/teams/$team
mkdir -p "$dir/inboxes"
proj=$CLAUDE_CONFIG_DIR/projects/-stub
mkdir -p "$proj/$sid/subagents"
printf '{"name":"%s","leadAgentId":"team-lead@%s","leadSessionId":"%s","leadProcess":{"pid":%s},"members":[{"agentId":"team-lead@%s","name":"team-lead","agentType":"team-lead","tmuxPaneId":"leader","backendType":"in-process"},{"agentId":"worker@%s","name":"worker","agentType":"general-purpose","color":"blue","tmuxPaneId":"in-process","backendType":"in-process"}]}' \
  "$team" "$team" "$sid" $$ "$team" "$team" > "$dir/config.json"
echo '[]' > "$dir/inboxes/team-lead.json"
printf '{"name":"worker"}' > "$proj/$sid/subagents/agent-aworker-1.meta.json"
printf '{"type":"user","message":{"role":"user","content":"Report"}}\n{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"reported"}],"stop_reason":"end_turn"}}\n' > "$proj/$sid/subagents/agent-aworker-1.jsonl"
printf '{"type":"assistant","message":{"id":"w1","model":"claude-opus-5-5","role":"assistant","content":[],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}}\n' >> "$proj/$sid/subagents/agent-aworker-1.jsonl"
printf '{"type":"user","message":{"role":"user","content":"go"}}\n{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","role":"assistant","content":[{"type":"text","text":"STUB ANSWER"}],"stop_reason":"end_turn","usage":{"input_tokens":1000,"output_tokens":500}}}\n' > "$proj/$sid.jsonl"
trap 'printf '"'"'{"type":"cost-state","totalCostUSD":0.5,"modelUsage":{"claude-opus-5-5":{"inputTokens":1010,"outputTokens":505,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.5}}}\n'"'"' >> "$proj/$sid.jsonl"; rm -rf "$dir"; exit 143' TERM
echo 'stub lead ready'
while :; do sleep 0.05; done"#;

/// `.claude.json` that skips every start-up dialog for the test's cwd.
fn configured(env: &TestEnv) {
    let cj = json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "projects": {cwd(env): {"hasTrustDialogAccepted": true}},
    });
    fs::write(env.root.join(".claude.json"), cj.to_string()).unwrap();
}

/// A test env with its private tmux server, the start-up dialogs settled ([`configured`]) and a
/// stub lead `name` running `body`; `None` (the test is skipped) where tmux does not run.
pub(crate) fn lead_in_tmux(name: &str, body: &str) -> Option<(TestEnv, TmuxServer, PathBuf)> {
    let (env, server) = tmux_env()?;
    configured(&env);
    let lead = script(&env, name, body);
    Some((env, server, lead))
}

/// `teamctl run` in the test env with `claude` = `bin` and no API key inherited.
pub(crate) fn run_cmd(env: &TestEnv, bin: &Path) -> assert_cmd::Command {
    let mut c = env.cmd();
    c.env("TEAMCTL_CLAUDE_BIN", bin)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("IS_SANDBOX")
        .arg("run");
    c
}

#[test]
fn a_lead_that_finishes_is_done_with_its_answer_and_nothing_left() {
    let Some((env, _server, lead)) = lead_in_tmux("stub-lead", STUB_LEAD) else {
        return;
    };
    let out = run_cmd(&env, &lead)
        .args([
            "--json",
            "Plan it, staff it",
            "--settle",
            "300ms",
            "--timeout",
            "30s",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let r = parse(&out.stdout);
    assert_eq!(
        keys(&r),
        [
            "claude",
            "dialog",
            "elapsed_ms",
            "export",
            "kept",
            "lead_session_id",
            "merge",
            "name",
            "reason",
            "result",
            "result_source",
            "resumed",
            "schema_version",
            "state",
            "tasks",
            "team",
            "teammates",
            "tmux_session",
            "totals",
            "transcript",
            "type"
        ]
    );
    // What the run cost, read after cleanup: the lead's own figure, written as it ended.
    assert_eq!(
        r["totals"],
        json!({"tokens": {"input": 1010, "output": 505, "cache_read": 0, "cache_creation": 0},
               "cost_usd": 0.5})
    );
    let sid = r["lead_session_id"].as_str().unwrap();
    let team = format!("session-{}", &sid[..8]);
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["type"], "result");
    assert_eq!(r["name"], "default");
    assert_eq!(r["state"], "done");
    assert_eq!(r["team"], team.as_str());
    assert_eq!(r["reason"], Value::Null);
    assert_eq!(r["dialog"], Value::Null);
    assert_eq!(r["result"], "STUB ANSWER");
    assert_eq!(r["result_source"], "transcript");
    assert_eq!(r["tmux_session"], Value::Null);
    assert_eq!(r["kept"], false);
    assert_eq!(r["export"], Value::Null);
    assert_eq!(r["merge"], Value::Null);
    assert!(r["elapsed_ms"].is_u64());
    assert_eq!(
        r["teammates"],
        json!([{"name":"worker","agent_type":"general-purpose","backend":"in-process","pane":null,"state":"idle"}])
    );
    assert_eq!(
        keys(&r["tasks"]),
        ["blocked", "completed", "in_progress", "pending", "ready"]
    );
    assert_eq!(r["claude"]["version"], "2.1.332 (Claude Code)");
    assert_eq!(r["claude"]["found_by"], "explicit");
    assert!(
        r["transcript"]
            .as_str()
            .unwrap()
            .ends_with(&format!("projects/-stub/{sid}.jsonl"))
    );
    // The prompt reached the lead as one argument.
    assert_eq!(
        fs::read_to_string(env.root.join("prompt-seen")).unwrap(),
        "Plan it, staff it\n"
    );
    // Progress: JSON Lines on stderr.
    let events = json_lines(&out.stderr);
    let states: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "progress")
        .map(|e| e["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["validating", "spawning", "monitoring", "running", "done"]
    );
    let joined: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "teammate_joined")
        .collect();
    assert_eq!(joined.len(), 1);
    assert_eq!(
        keys(joined[0]),
        [
            "agent_type",
            "backend",
            "name",
            "pane",
            "schema_version",
            "state",
            "type"
        ]
    );
    // Cleaned up: the lead ended (and removed its team), the tmux session is gone, and so is
    // the record of the team's tmux server.
    assert!(!env.root.join("teams").join(&team).exists());
    assert!(!tmux_has_session(&env, "teamctl-run-default"));
    assert_eq!(
        fs::read_dir(env.data_dir().join("runs")).unwrap().count(),
        0
    );
}

/// `run --export`: the record is taken before the lead is ended (its team and config are in
/// it), with the run's state; one that cannot be written makes a done run exit 1.
#[test]
fn export_records_the_team_before_the_lead_is_ended() {
    let Some((env, _server, lead)) = lead_in_tmux("stub-lead", STUB_LEAD) else {
        return;
    };
    let rec = env.dir.path().join("rec");
    let out = run_cmd(&env, &lead)
        .args([
            "--json",
            "go",
            "--settle",
            "0s",
            "--export",
            rec.to_str().unwrap(),
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let r = parse(&out.stdout);
    assert_eq!(
        keys(&r["export"]),
        [
            "bytes",
            "error",
            "files",
            "format",
            "messages",
            "out",
            "size",
            "transcripts",
            "warnings"
        ]
    );
    assert_eq!(r["export"]["out"], rec.display().to_string());
    assert_eq!(
        r["export"]["transcripts"], 2,
        "the lead's and the in-process worker's"
    );
    let exported: Vec<Value> = json_lines(&out.stderr)
        .into_iter()
        .filter(|e| e["type"] == "exported")
        .collect();
    assert_eq!(exported.len(), 1);
    assert_eq!(exported[0]["out"], r["export"]["out"]);
    let team = r["team"].as_str().unwrap();
    assert!(
        !env.root.join("teams").join(team).exists(),
        "the lead removed its team after"
    );
    let mut s: Value =
        serde_json::from_slice(&fs::read(rec.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["team"], team);
    assert_eq!(s["team_folder"], true);
    assert!(s["run"]["elapsed_ms"].is_u64());
    s["run"].as_object_mut().unwrap().remove("elapsed_ms");
    assert_eq!(
        s["run"],
        json!({"name":"default","state":"done","reason":null,"result":"STUB ANSWER",
               "cap":{"max_cost_usd":null,"max_tokens":null,"max_cost_per_member":null,
                      "warn_at_percent":null}})
    );
    assert_eq!(s["result"], "STUB ANSWER");
    assert!(rec.join("team/config.json").is_file());

    // A record that cannot be written: the run is still done, and says so, with exit 1.
    run_cmd(&env, &lead)
        .args(["go", "--settle", "0s", "--export", rec.to_str().unwrap()])
        .assert()
        .code(1)
        .stdout("STUB ANSWER\n")
        .stderr(predicate::str::contains(
            "error: run 'default' was done, but its record could not be written",
        ));
}

#[test]
fn a_run_over_max_cost_ends_as_at_its_timeout_with_exit_6() {
    let Some((env, _server, lead)) = lead_in_tmux("stub-lead", STUB_LEAD) else {
        return;
    };
    // The stub's responses cost $0.01414: over a cap of $0.01 before its work counts as done.
    // --export: the record is taken at that end too, before the lead is told to stop.
    let rec = env.dir.path().join("rec.tar.gz");
    let out = run_cmd(&env, &lead)
        .args(["--json", "Plan it", "--settle", "30s", "--timeout", "30s"])
        .args(["--max-cost", "0.01", "--warn-at", "50"])
        .args(["--export", rec.to_str().unwrap()])
        .assert()
        .code(6)
        .get_output()
        .clone();
    let r = parse(&out.stdout);
    assert_eq!(r["state"], "budget");
    assert_eq!(r["export"]["error"], Value::Null);
    assert_eq!(r["export"]["format"], "tar_gz");
    let (mut summary, mut page) = (String::new(), String::new());
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(fs::File::open(&rec).unwrap()));
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        if e.path().unwrap().ends_with("summary.json") {
            std::io::Read::read_to_string(&mut e, &mut summary).unwrap();
        } else if e.path().unwrap().ends_with("report.html") {
            std::io::Read::read_to_string(&mut e, &mut page).unwrap();
        }
    }
    let s: Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(s["run"]["state"], "budget");
    // The run's limits reach the record, and its page.
    let cap = json!({"max_cost_usd": 0.01, "max_tokens": null, "max_cost_per_member": null,
                     "warn_at_percent": 50.0});
    assert_eq!(s["run"]["cap"], cap);
    assert!(page.contains(&format!("\"cap\":{cap}")), "{page}");
    assert!(
        s["run"]["reason"]
            .as_str()
            .unwrap()
            .starts_with("budget exceeded"),
        "{}",
        s["run"]
    );
    // What it cost when the record was taken: the sessions still ran, so computed from their
    // responses (the lead's own share, and the in-process worker's).
    let per: Vec<Value> = s["cost"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json!([m["name"], m["cost_source"]]))
        .collect();
    assert_eq!(
        per,
        [
            json!(["team-lead", "computed"]),
            json!(["worker", "computed"])
        ]
    );
    assert!((s["cost"]["cost_usd"].as_f64().unwrap() - 0.01414).abs() < 1e-9);
    assert!((s["cost"]["members"][1]["cost_usd"].as_f64().unwrap() - 0.00014).abs() < 1e-12);
    // `teamctl report` reads that cost back.
    let report = crate::common::run_json(&env, &["report", rec.to_str().unwrap()]);
    assert_eq!(report["teams"][0]["outcome"], "budget");
    assert_eq!(report["teams"][0]["cost_usd"], s["cost"]["cost_usd"]);
    assert!(
        r["reason"]
            .as_str()
            .unwrap()
            .starts_with("budget exceeded: $0.01 of $0.01, by team-lead $0.01, worker $0.0001;"),
        "{}",
        r["reason"]
    );
    assert_eq!(r["totals"]["cost_usd"], 0.5);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .starts_with("error: budget exceeded: $0.01 of $0.01, by team-lead"),
        "{stderr}"
    );
    // Nothing left behind.
    let team = format!("session-{}", &r["lead_session_id"].as_str().unwrap()[..8]);
    assert!(!env.root.join("teams").join(&team).exists());
    assert!(!tmux_has_session(&env, "teamctl-run-default"));
    run_cmd(&env, &lead)
        .args(["go", "--max-cost", "-1"])
        .assert()
        .code(2);
}

#[test]
fn human_output_is_the_answer_on_stdout_and_a_summary_on_stderr() {
    let Some((env, _server, lead)) = lead_in_tmux("stub-lead", STUB_LEAD) else {
        return;
    };
    let prompt = env.dir.path().join("prompt.md");
    fs::write(
        &prompt,
        "-- a prompt from a file,\nwith 'quotes' and $(no expansion)\n",
    )
    .unwrap();
    run_cmd(&env, &lead)
        .args(["--prompt-file", prompt.to_str().unwrap(), "--settle", "0s"])
        .args(["--name", "from-file"])
        .assert()
        .success()
        .stdout("STUB ANSWER\n")
        .stderr(predicate::str::contains("validating: run 'from-file'"))
        .stderr(predicate::str::contains(
            "running: teammate worker joined (general-purpose, in-process)",
        ))
        .stderr(predicate::str::contains("done: the team's work is done"))
        .stderr(predicate::str::contains(
            "worker (general-purpose, in-process): idle",
        ));
    assert_eq!(
        fs::read_to_string(env.root.join("prompt-seen")).unwrap(),
        "-- a prompt from a file,\nwith 'quotes' and $(no expansion)\n"
    );
    // The prompt file teamctl wrote for the lead is gone.
    let run_dir = env.dir.path().join("home/.local/share/teamctl/run");
    assert!(!run_dir.join("from-file.prompt").exists());
}

#[test]
fn start_up_dialogs_are_named_from_the_files_before_anything_starts() {
    let env = TestEnv::new();
    let lead = script(
        &env,
        "stub-lead",
        "[ \"$1\" = --version ] && { echo 2.1.332; exit 0; }\necho ran > \"$CLAUDE_CONFIG_DIR/ran\"",
    );
    // Nothing configured: onboarding, API key, trust and (skipping permissions) bypass.
    let out = run_cmd(&env, &lead)
        .args(["--json", "hello", "--dangerously-skip-permissions"])
        .env("ANTHROPIC_API_KEY", "sk-ant-test-0123456789abcdefghij")
        .env("IS_SANDBOX", "1")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "error: run 'default' failed: the onboarding screens (onboarding)",
        ))
        .get_output()
        .clone();
    let r = parse(&out.stdout);
    assert_eq!(r["state"], "failed");
    assert_eq!(r["dialog"], "onboarding");
    assert_eq!(r["team"], Value::Null);
    assert_eq!(r["lead_session_id"], Value::Null);
    let reason = r["reason"].as_str().unwrap();
    for want in [
        "the onboarding screens (onboarding): `teamctl prepare` sets \"hasCompletedOnboarding\": true",
        "the API key approval (api_key): `teamctl prepare` (with ANTHROPIC_API_KEY set) adds the \
         key's last 20 characters",
        &format!(
            "the workspace trust dialog (trust): `teamctl prepare --cwd {0}` sets \"projects\": \
             {{\"{0}\"",
            cwd(&env)
        ),
        "the bypass-permissions prompt (bypass): `teamctl prepare --skip-permissions` sets \
         \"skipDangerousModePermissionPrompt\": true",
        &format!(
            "`teamctl prepare --cwd {} --skip-permissions` settles them all",
            cwd(&env)
        ),
    ] {
        assert!(reason.contains(want), "{want} not in {reason}");
    }
    // The key itself is never shown.
    assert!(!reason.contains("0123456789abcdefghij"), "{reason}");

    // Configured, but the bypass prompt is still on: only that one, in human form.
    configured(&env);
    run_cmd(&env, &lead)
        .args(["hello", "--permission-mode", "bypassPermissions"])
        .env("IS_SANDBOX", "1")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "failed: the bypass-permissions prompt (bypass)",
        ));
    // No lead was ever started: only `--version` ran, no team.
    assert!(!env.root.join("ran").exists());
    assert!(!env.root.join("teams").exists());
}

#[test]
fn a_dialog_on_the_leads_screen_fails_fast_and_is_named() {
    let Some((env, _server, lead)) = lead_in_tmux(
        "dialog-lead",
        "[ \"$1\" = --version ] && { echo '2.1.332 (Claude Code)'; exit 0; }\n\
         printf '  Detected a custom API key in your environment\\n  Do you want to use this API key?\\n    Yes\\n  > No (recommended)\\n  Enter to confirm · Esc to cancel\\n'\n\
         exec sleep 60",
    ) else {
        return;
    };
    let out = run_cmd(&env, &lead)
        .args(["--json", "hello", "--timeout", "60s"])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let r = parse(&out.stdout);
    assert_eq!(r["state"], "failed");
    assert_eq!(r["dialog"], "api_key");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains("stuck at the API key approval (api_key)"),
        "{reason}"
    );
    assert!(
        reason.contains("Do you want to use this API key?"),
        "{reason}"
    );
    assert!(r["elapsed_ms"].as_u64().unwrap() < 30_000);
    assert!(!tmux_has_session(&env, "teamctl-run-default"));
}

#[test]
fn a_lead_that_never_forms_a_team_times_out_with_its_pane() {
    let Some((env, _server, lead)) = lead_in_tmux(
        "stuck-lead",
        "[ \"$1\" = --version ] && { echo 2.0.0; exit 0; }\necho 'waiting for login...'\nexec sleep 60",
    ) else {
        return;
    };
    let out = run_cmd(&env, &lead)
        .args(["--json", "hello", "--timeout", "1500ms", "--name", "stuck"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "error: run 'stuck' timed out after 1500ms",
        ))
        .get_output()
        .clone();
    let r = parse(&out.stdout);
    assert_eq!(r["state"], "timeout");
    assert_eq!(r["team"], Value::Null);
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("the lead formed no team within 1.5 s"),
        "{reason}"
    );
    assert!(reason.contains("waiting for login..."), "{reason}");
    assert_eq!(r["result_source"], "pane");
    assert!(!tmux_has_session(&env, "teamctl-run-stuck"));
}

#[test]
fn a_lead_that_exits_early_fails_with_its_last_lines() {
    let Some((env, _server, lead)) = lead_in_tmux(
        "broken-lead",
        "[ \"$1\" = --version ] && { echo 2.0.0; exit 0; }\necho 'fatal: invalid API key' >&2\nexit 1",
    ) else {
        return;
    };
    run_cmd(&env, &lead)
        .args(["hello", "--timeout", "30s"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("failed: the lead exited"))
        .stderr(predicate::str::contains("fatal: invalid API key"))
        .stderr(predicate::str::contains("error: run 'default' failed"));
    assert!(!tmux_has_session(&env, "teamctl-run-default"));
}

#[test]
fn one_run_per_name_and_sigterm_cleans_up() {
    let Some((env, _server, lead)) = lead_in_tmux(
        "stuck-lead",
        "[ \"$1\" = --version ] && { echo 2.0.0; exit 0; }\nexec sleep 60",
    ) else {
        return;
    };
    let mut first = env.std_cmd();
    first
        .env("TEAMCTL_CLAUDE_BIN", &lead)
        .env_remove("ANTHROPIC_API_KEY")
        .args(["run", "hello", "--name", "busy", "--timeout", "60s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = first.spawn().unwrap();
    assert!(
        wait_until(Duration::from_secs(20), || tmux_has_session(
            &env,
            "teamctl-run-busy"
        )),
        "the first run never started its lead"
    );
    run_cmd(&env, &lead)
        .args(["hello", "--name", "busy"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "a run named 'busy' is already running (pid {})",
            child.id()
        )));
    // SIGTERM: the run ends its lead and its tmux session, then exits 143.
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    assert!(!tmux_has_session(&env, "teamctl-run-busy"));
}

#[test]
fn ctrl_c_ends_the_lead_and_exits_130() {
    let Some((env, _server, lead)) =
        lead_in_tmux("stub-lead", &STUB_LEAD.replace("STUB ANSWER", "never"))
    else {
        return;
    };
    // A lead whose turn never ends: its transcript ends with the prompt.
    let lead_text = fs::read_to_string(&lead).unwrap().replace(
        r#"{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","role":"assistant","content":[{"type":"text","text":"never"}],"stop_reason":"end_turn","usage":{"input_tokens":1000,"output_tokens":500}}}\n"#,
        "",
    );
    assert!(!lead_text.contains("never"));
    fs::write(&lead, lead_text).unwrap();
    let child = env
        .std_cmd()
        .env("TEAMCTL_CLAUDE_BIN", &lead)
        .env_remove("ANTHROPIC_API_KEY")
        .args([
            "--json",
            "run",
            "hello",
            "--name",
            "int",
            "--timeout",
            "60s",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let teams = env.root.join("teams");
    assert!(
        wait_until(Duration::from_secs(20), || fs::read_dir(&teams)
            .is_ok_and(|mut d| d.next().is_some())),
        "the stub lead never formed its team"
    );
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let r = parse(&out.stdout);
    assert_eq!(r["state"], "failed");
    assert_eq!(r["reason"], "interrupted by a signal");
    // The lead removed its team when it was ended; its session is gone.
    assert_eq!(fs::read_dir(&teams).unwrap().count(), 0);
    assert!(!tmux_has_session(&env, "teamctl-run-int"));
}

#[test]
fn keep_leaves_the_lead_running_and_says_how_to_attach() {
    let Some((env, _server, lead)) = lead_in_tmux("stub-lead", STUB_LEAD) else {
        return;
    };
    let out = run_cmd(&env, &lead)
        .args(["hello", "--keep", "--settle", "0s", "--name", "kept"])
        .assert()
        .success()
        .stdout("STUB ANSWER\n")
        .stderr(predicate::str::contains(
            "kept: attach with `tmux attach -t teamctl-run-kept`",
        ))
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let team = stderr
        .lines()
        .find_map(|l| l.strip_prefix("team: "))
        .and_then(|l| l.split(' ').next())
        .unwrap()
        .to_string();
    assert!(
        stderr.contains(&format!("teamctl --team {team} status")),
        "{stderr}"
    );
    assert!(tmux_has_session(&env, "teamctl-run-kept"));
    assert!(
        env.root
            .join("teams")
            .join(&team)
            .join("config.json")
            .exists()
    );
    // The kept session blocks a second run of that name until it is ended.
    run_cmd(&env, &lead)
        .args(["hello", "--name", "kept"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "tmux session teamctl-run-kept already exists",
        ));
}

/// The panes of a team a lead formed under `run` are asked about on the tmux server the run
/// started the lead on, whatever `TMUX_TMPDIR` selects later: alive while it runs, gone once
/// that server is killed. (Before, a shell pointed at another server could not tell.)
#[test]
fn a_run_teams_panes_are_asked_about_on_the_server_the_run_used() {
    // The stub's worker is an idle pane teammate: the lead's own pane.
    let pane_lead = STUB_LEAD
        .replace(
            r#""tmuxPaneId":"in-process","backendType":"in-process""#,
            r#""tmuxPaneId":"%s","backendType":"tmux","isActive":false"#,
        )
        .replace(
            r#""$team" "$team" > "$dir/config.json""#,
            r#""$team" "$team" "$TMUX_PANE" > "$dir/config.json""#,
        );
    let Some((env, server, lead)) = lead_in_tmux("pane-lead", &pane_lead) else {
        return;
    };
    let out = run_cmd(&env, &lead)
        .args([
            "--json", "hello", "--keep", "--settle", "0s", "--name", "panes",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let team = parse(&out.stdout)["team"].as_str().unwrap().to_string();
    let records: Vec<_> = fs::read_dir(env.data_dir().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        records.len() == 1 && records[0].starts_with(&format!("{team}.")),
        "{records:?}"
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let worker_alive = || {
        let out = env
            .cmd()
            .env("TMUX_TMPDIR", elsewhere.path())
            .args(["--team", &team, "--json", "status"])
            .assert()
            .success()
            .get_output()
            .clone();
        crate::common::member(&parse(&out.stdout), "worker")["process_alive"].clone()
    };
    assert_eq!(worker_alive(), true);
    server.kill();
    assert_eq!(worker_alive(), false);
}

#[test]
fn usage_errors() {
    let env = TestEnv::new();
    env.cmd().arg("run").assert().code(2);
    env.cmd()
        .args(["run", "x", "--prompt-file", "f"])
        .assert()
        .code(2);
    env.cmd()
        .args(["run", "x", "--name", "a b"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid --name 'a b'"));
    env.cmd()
        .args(["run", "x", "--timeout", "soon"])
        .assert()
        .code(2);
    env.cmd().args(["run", "  "]).assert().code(2);
    env.cmd()
        .args([
            "run",
            "x",
            "--permission-mode",
            "plan",
            "--dangerously-skip-permissions",
        ])
        .assert()
        .code(2);
    env.cmd()
        .args(["run", "x", "--cwd", "/nonexistent/dir"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: --cwd /nonexistent/dir"));
}

#[test]
fn a_lead_whose_retries_ran_out_is_stuck_with_exit_7_not_done() {
    // Its one turn ended with the synthetic entry Claude Code writes when its retries of an API
    // call ran out; no teammate, no mail: nothing will prompt it again.
    let failed = STUB_LEAD.replace(
        r#"{"type":"assistant","message":{"id":"m1","model":"claude-opus-5-5","role":"assistant","content":[{"type":"text","text":"STUB ANSWER"}],"stop_reason":"end_turn","usage":{"input_tokens":1000,"output_tokens":500}}}"#,
        r#"{"type":"assistant","isApiErrorMessage":true,"apiErrorStatus":429,"error":"rate_limit","message":{"id":"x","model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"API Error: Request rejected (429)"}],"stop_reason":"stop_sequence","usage":{"input_tokens":0,"output_tokens":0}}}"#,
    );
    assert_ne!(failed, STUB_LEAD);
    let Some((env, _server, lead)) = lead_in_tmux("failed-lead", &failed) else {
        return;
    };
    let out = run_cmd(&env, &lead)
        .args([
            "--json",
            "go",
            "--settle",
            "300ms",
            "--timeout",
            "30s",
            "--name",
            "f",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(7), "{stderr}");
    let r = parse(&out.stdout);
    assert_eq!(r["state"], "stuck");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(
            "the lead's turn ended with an API error once Claude Code's retries ran out \
             (API Error: Request rejected (429))"
        ),
        "{reason}"
    );
    assert!(!tmux_has_session(&env, "teamctl-run-f"));
}
