//! `teamctl resume`: a team teamctl made, its tmux server gone, started again: each pane
//! teammate on its last session, with its name, colour and permission flags from teamctl's own
//! record, its pane recorded, and a message naming its task.

use std::fs;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::{
    TestEnv, TmuxServer, fake_claude, json as parse, member, read_entries, tmux_env, wait_until,
};

fn config(env: &TestEnv) -> Value {
    parse(&fs::read(env.root.join("teams/rt/config.json")).unwrap())
}

fn pane_of(env: &TestEnv, name: &str) -> String {
    member(&config(env), name)["tmuxPaneId"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Adds task 1 to team `rt` and has alice claim it (in progress, hers).
fn alice_on_a_task(env: &TestEnv) {
    for args in [
        &["tasks", "add", "Fix the race"][..],
        &["tasks", "claim", "1", "--as", "alice"],
    ] {
        env.cmd()
            .args(["--team", "rt"])
            .args(args)
            .assert()
            .success();
    }
}

/// Kills `name`'s pane (in the test's tmux server); returns its id.
fn kill_pane_of(env: &TestEnv, name: &str) -> String {
    let pane = pane_of(env, name);
    let killed = env
        .command("tmux")
        .args(["kill-pane", "-t", &pane])
        .status()
        .unwrap();
    assert!(killed.success());
    pane
}

/// `wait --tasks-done --on-dead restart` on team `rt` for 1.5 s, with the fake teammate.
fn wait_restarting(env: &TestEnv) -> assert_cmd::Command {
    let mut cmd = env.cmd();
    cmd.args(["--team", "rt", "--json", "wait", "--tasks-done"])
        .args(["--on-dead", "restart", "--timeout", "1500ms"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude());
    cmd
}

#[test]
fn a_team_whose_tmux_server_died_comes_back_on_its_sessions() {
    let Some((env, server)) = tmux_env() else {
        return;
    };
    let session = a_team_with_a_task_in_progress(&env);
    server.kill();
    the_person_starts_tmux_again(&env);
    its_teammates_are_taken_for_gone(&env);
    let out = env
        .cmd()
        .args(["resume", "rt", "--json"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stderr}{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v = parse(&out.stdout);
    let alice = member(&v, "alice");
    assert_eq!(alice["action"], "resumed", "{v}");
    assert_eq!(alice["session_id"], session);
    let bob = member(&v, "bob");
    assert_eq!(bob["action"], "resumed", "{v}");
    assert_eq!(bob["session_id"], Value::Null);
    alice_runs_again_on_her_session_with_her_flags(&env, alice, session);
    alice_is_told_to_carry_on(&env);
    the_resumes_are_journaled_and_marked_in_the_record(&env, alice, session);
    // Running again: nothing to do.
    let out = env
        .cmd()
        .args(["resume", "rt", "--json"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    assert!(
        v["members"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["action"] == "running"),
        "{v}"
    );
    // The session started again is teamctl's own (recorded): delete takes it down.
    env.cmd()
        .args(["delete", "rt", "--timeout", "5s"])
        .assert()
        .success();
    assert!(!crate::common::tmux_has_session(&env, "teamctl-rt"));
    // The person's own session, on the same server, was never touched.
    let main = env
        .command("tmux")
        .args(["list-panes", "-s", "-t", "=main", "-F", "#{pane_dead}"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&main.stdout), "0\n0\n");
}

/// Team `rt` made with alice and bob in the test's tmux server, alice on task #1 (in
/// progress) with a session to carry on, bob with none; returns alice's session id.
fn a_team_with_a_task_in_progress(env: &TestEnv) -> &'static str {
    env.cmd()
        .args([
            "create",
            "rt",
            "--member",
            "alice:Review it",
            "--member",
            "bob:Test it",
        ])
        .args(["--permission-mode", "acceptEdits", "--timeout", "20s"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .assert()
        .success();
    env.cmd()
        .args([
            "--team",
            "rt",
            "tasks",
            "add",
            "Fix the race",
            "--owner",
            "alice",
        ])
        .assert()
        .success();
    env.cmd()
        .args([
            "--team",
            "rt",
            "tasks",
            "update",
            "1",
            "--status",
            "in_progress",
        ])
        .assert()
        .success();
    // alice has a session to carry on; bob has none.
    let session = "3c4fc10e-2bd5-4cb9-ae22-5dd1361ee563";
    let cwd = fs::canonicalize(env.dir.path()).unwrap();
    let project: String = cwd
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = env.root.join("projects").join(project);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join(format!("{session}.jsonl")),
        json!({"type":"user","teamName":"rt","agentName":"alice","sessionId":session,
            "timestamp":"2026-11-29T10:00:00.000Z","message":{"role":"user","content":"go"}})
        .to_string()
            + "\n",
    )
    .unwrap();
    session
}

/// As after a reboot, the person starts tmux again: a new server on the same socket, whose
/// panes are numbered from %0 again, as alice's and bob's were.
fn the_person_starts_tmux_again(env: &TestEnv) {
    for args in [
        &["new-session", "-d", "-s", "main", "exec sleep 600"][..],
        &["new-window", "-d", "-t", "=main:", "exec sleep 600"],
    ] {
        assert!(env.command("tmux").args(args).status().unwrap().success());
    }
}

/// The server teamctl recorded runs no more, whatever runs on its socket now: alice, whose
/// task is in progress, is dead; bob, with nothing waiting, is only not running.
fn its_teammates_are_taken_for_gone(env: &TestEnv) {
    let out = env
        .cmd()
        .args(["--team", "rt", "status", "--json"])
        .env("TMUX_TMPDIR", "/nonexistent")
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    assert_eq!(member(&v, "alice")["waiting"], "dead", "{v}");
    assert_eq!(member(&v, "alice")["process_alive"], false, "{v}");
    assert_eq!(member(&v, "bob")["waiting"], Value::Null, "{v}");
    assert_eq!(member(&v, "bob")["process_alive"], false, "{v}");
}

/// The new panes are recorded, and run the teammates with their flags, alice's on her
/// session.
fn alice_runs_again_on_her_session_with_her_flags(env: &TestEnv, alice: &Value, session: &str) {
    let new_alice = pane_of(env, "alice");
    assert_eq!(Some(new_alice.as_str()), alice["pane"].as_str());
    let argv = env.root.join("fake-argv-alice");
    wait_until(Duration::from_secs(20), || {
        fs::read_to_string(&argv).is_ok_and(|a| a.contains("--resume"))
    });
    let argv = fs::read_to_string(&argv).unwrap();
    let args: Vec<&str> = argv.lines().collect();
    for pair in [
        ["--agent-name", "alice"],
        ["--agent-color", "blue"],
        ["--permission-mode", "acceptEdits"],
        ["--resume", session],
    ] {
        assert!(args.windows(2).any(|w| w == pair), "{pair:?} in {args:?}");
    }
}

/// teamctl's journal has a line for each member it resumed (alice on her session, bob on
/// none), and the record keeps alice's and marks it on her lane in report.html, with why.
fn the_resumes_are_journaled_and_marked_in_the_record(env: &TestEnv, alice: &Value, session: &str) {
    let journal = fs::read_to_string(env.data_dir().join("actions.jsonl")).unwrap();
    let lines: Vec<Value> = journal.lines().map(|l| parse(l.as_bytes())).collect();
    assert_eq!(lines.len(), 2, "{journal}");
    let line = |name: &str| lines.iter().find(|l| l["member"] == name).unwrap().clone();
    let (a, b) = (line("alice"), line("bob"));
    for l in [&a, &b] {
        assert_eq!(l["team"], "rt");
        assert_eq!(l["action"], "resume");
        assert_eq!(l["why"], "the team stopped");
        assert!(l["at"].as_str().unwrap().ends_with('Z'), "{l}");
    }
    assert_eq!(a["session_id"], session);
    assert_eq!(a["pane"], alice["pane"]);
    assert_eq!(b["session_id"], Value::Null);
    let mode = fs::metadata(env.data_dir().join("actions.jsonl")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode.permissions()) & 0o777,
        0o600
    );

    let out = env.dir.path().join("record");
    env.cmd()
        .args(["--team", "rt", "export", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    assert_eq!(
        fs::read_to_string(out.join("actions.jsonl")).unwrap(),
        journal
    );
    let summary = parse(&fs::read(out.join("summary.json")).unwrap());
    assert_eq!(summary["actions"], Value::Array(lines.clone()));
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    let section = report.split("### Restarts and resumes\n\n").nth(1).unwrap();
    let rows: Vec<&str> = section
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(rows.len(), 2, "{report}");
    let alice_row = rows.iter().find(|r| r.contains("| alice |")).unwrap();
    assert!(
        alice_row.contains("| resumed | the team stopped |"),
        "{alice_row}"
    );
    assert!(
        alice_row.contains(&format!("`{}`", &session[..8])),
        "{alice_row}"
    );
    assert!(
        rows.iter()
            .any(|r| r.contains("| bob |") && r.ends_with("| a new one |")),
        "{report}"
    );
    let page = fs::read_to_string(out.join("report.html")).unwrap();
    let open = "<script type=\"application/json\" id=\"teamctl-record\">";
    let start = page.find(open).unwrap() + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    let embedded: Value = serde_json::from_str(&page[start..end]).unwrap();
    let marks = &member(&embedded, "alice")["lane"]["marks"];
    assert_eq!(marks[0][1], "started", "{marks}");
    assert_eq!(
        marks[1],
        json!([a["at"], "resume", "the team stopped"]),
        "{marks}"
    );
    assert!(
        page.contains("resumed by teamctl at "),
        "the mark has a title"
    );
}

/// alice is told to carry on with her task (the fake teammate consumes it: it is in its
/// sent log or still in the inbox).
fn alice_is_told_to_carry_on(env: &TestEnv) {
    let sent = fs::read_to_string(env.data_dir().join("sent.jsonl")).unwrap_or_default();
    let inbox = read_entries(&env.root.join("teams/rt/inboxes/alice.json"));
    assert!(
        sent.contains("teamctl restarted you after the team stopped")
            || inbox.iter().any(|e| e["text"]
                .as_str()
                .is_some_and(|t| t.contains("Carry on with task #1"))),
        "{sent}"
    );
}

#[test]
fn a_team_teamctl_does_not_lead_is_refused() {
    let env = TestEnv::example();
    let out = env.cmd().args(["resume", "demo-team"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("teamctl does not lead team 'demo-team'")
    );
}

/// `wait --on-dead restart` starts a dead teammate again and goes on waiting: the team's one
/// teammate, just restarted, is not "every teammate is gone" (the conditions look at its new
/// pane, not the one it had).
#[test]
fn a_restarted_teammate_keeps_the_wait_possible() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    env.cmd()
        .args([
            "create",
            "rt",
            "--member",
            "alice:Review it",
            "--timeout",
            "20s",
        ])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .assert()
        .success();
    alice_on_a_task(&env);
    // Another session keeps the tmux server up once alice's pane, her session's only one, goes.
    let keepalive = env
        .command("tmux")
        .args(["new-session", "-d", "-s", "keepalive", "exec sleep 600"])
        .status()
        .unwrap();
    assert!(keepalive.success());
    let old = kill_pane_of(&env, "alice");
    let out = wait_restarting(&env).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The fake teammate does not complete tasks: the wait times out, it is not impossible.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("\"action\":\"restart\""), "{stderr}");
    assert!(!stderr.contains("every teammate is gone"), "{stderr}");
    assert_ne!(pane_of(&env, "alice"), old);
    // teamctl's journal says so, with its new pane and why.
    let journal = fs::read_to_string(env.data_dir().join("actions.jsonl")).unwrap();
    let line = parse(journal.lines().next().unwrap().as_bytes());
    assert_eq!(journal.lines().count(), 1, "{journal}");
    assert_eq!(line["member"], "alice");
    assert_eq!(line["action"], "restart");
    assert_eq!(line["why"], "dead");
    assert_eq!(line["pane"], pane_of(&env, "alice"));
}

/// A team teamctl created is acted on where its panes are: from a shell whose `TMUX_TMPDIR`
/// selects another tmux server, `wait --on-dead restart` starts a dead teammate again in the
/// team's own session, and `delete` takes that session down; nothing starts on the other one.
#[test]
fn a_team_is_acted_on_on_its_own_tmux_server_whatever_the_environment_selects() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let other = env.dir.path().join("other");
    fs::create_dir_all(&other).unwrap();
    let other_server = TmuxServer(other.clone());
    env.cmd()
        .args(["create", "rt", "--member", "alice:Review it"])
        .args(["--member", "bob:Test it", "--timeout", "20s"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .assert()
        .success();
    alice_on_a_task(&env);
    let old = kill_pane_of(&env, "alice");

    let out = wait_restarting(&env)
        .env("TMUX_TMPDIR", &other)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("\"action\":\"restart\""), "{stderr}");
    let new = pane_of(&env, "alice");
    assert_ne!(new, old);
    let panes = env
        .command("tmux")
        .args(["list-panes", "-s", "-t", "=teamctl-rt", "-F", "#{pane_id}"])
        .output()
        .unwrap();
    let panes = String::from_utf8_lossy(&panes.stdout);
    assert!(panes.lines().any(|p| p == new), "{new} in {panes}");
    assert!(
        !other_server.answers(),
        "a tmux server was started where TMUX_TMPDIR points"
    );

    env.cmd()
        .args(["delete", "rt", "--timeout", "5s"])
        .env("TMUX_TMPDIR", &other)
        .assert()
        .success();
    assert!(!crate::common::tmux_has_session(&env, "teamctl-rt"));
    assert!(!other_server.answers());
}

/// The person's own tmux server, selected by `TMUX_TMPDIR` in `dir`: one session whose only
/// pane is `%2`, so that none of the team's pane ids is one of its panes.
fn a_server_of_ones_own(env: &TestEnv, dir: &std::path::Path) -> TmuxServer {
    fs::create_dir_all(dir).unwrap();
    let server = TmuxServer(dir.to_path_buf());
    let tmux = |args: &[&str]| {
        let ok = env
            .command("tmux")
            .args(args)
            .env("TMUX_TMPDIR", dir)
            .status()
            .unwrap();
        assert!(ok.success(), "tmux {args:?}");
    };
    tmux(&["new-session", "-d", "-s", "own", "exec sleep 600"]);
    tmux(&["new-window", "-t", "=own", "exec sleep 600"]);
    tmux(&["new-window", "-t", "=own", "exec sleep 600"]);
    tmux(&["kill-pane", "-t", "%0"]);
    tmux(&["kill-pane", "-t", "%1"]);
    server
}

/// A team made by `create` whose alice, on a task, runs in the team's tmux server, and a
/// server of the person's own that the environment selects; returns it and alice's pane.
fn alice_alive_elsewhere(env: &TestEnv) -> (TmuxServer, std::path::PathBuf, String) {
    env.cmd()
        .args(["create", "rt", "--member", "alice:Review it"])
        .args(["--timeout", "20s"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .assert()
        .success();
    alice_on_a_task(env);
    let pane = pane_of(env, "alice");
    assert_ne!(
        pane, "%2",
        "the person's server must not hold alice's pane id"
    );
    let own = env.dir.path().join("own");
    (a_server_of_ones_own(env, &own), own, pane)
}

/// From a shell whose `TMUX_TMPDIR` selects the person's own tmux server, a live teammate of a
/// team teamctl created is alive on every read of `wait`, not only the first: `--on-dead
/// exit` waits it out.
#[test]
fn a_live_teammate_is_not_dead_to_wait_from_another_tmux_server() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let (_own, own, _) = alice_alive_elsewhere(&env);
    let out = env
        .cmd()
        .args(["--team", "rt", "--json", "wait", "--tasks-done"])
        .args(["--on-dead", "exit", "--timeout", "1500ms"])
        .env("TMUX_TMPDIR", &own)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("is dead"), "{stderr}");
}

/// The same with `--on-dead restart`: alice's live pane is neither ended nor started again.
#[test]
fn a_live_teammate_is_not_restarted_by_wait_from_another_tmux_server() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let (own_server, own, pane) = alice_alive_elsewhere(&env);
    let out = wait_restarting(&env)
        .env("TMUX_TMPDIR", &own)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("\"action\":\"restart\""), "{stderr}");
    assert_eq!(pane_of(&env, "alice"), pane);
    let panes = env
        .command("tmux")
        .args(["list-panes", "-s", "-t", "=teamctl-rt", "-F", "#{pane_id}"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&panes.stdout)
            .lines()
            .any(|p| p == pane),
        "alice's pane {pane} was ended"
    );
    assert!(own_server.answers());
}

/// A transcript whose name is an option (`-c.jsonl`, for `--continue`) is no session to carry
/// on: the teammate starts afresh, and `-c` never reaches its argv.
#[test]
fn a_session_named_like_an_option_is_not_resumed() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    env.cmd()
        .args(["create", "rt", "--member", "alice:Review it"])
        .args(["--timeout", "20s"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .assert()
        .success();
    let keepalive = env
        .command("tmux")
        .args(["new-session", "-d", "-s", "keepalive", "exec sleep 600"])
        .status()
        .unwrap();
    assert!(keepalive.success());
    let project: String = fs::canonicalize(env.dir.path())
        .unwrap()
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = env.root.join("projects").join(project);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("-c.jsonl"),
        json!({"type":"user","teamName":"rt","agentName":"alice","sessionId":"-c",
            "timestamp":"2026-11-29T10:00:00.000Z","message":{"role":"user","content":"go"}})
        .to_string()
            + "\n",
    )
    .unwrap();
    kill_pane_of(&env, "alice");
    let argv = env.root.join("fake-argv-alice");
    fs::remove_file(&argv).unwrap();
    let out = env
        .cmd()
        .args(["resume", "rt", "--json"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    let alice = member(&v, "alice");
    assert_eq!(alice["action"], "resumed", "{v}");
    assert_eq!(alice["session_id"], Value::Null, "{v}");
    wait_until(Duration::from_secs(20), || argv.exists());
    let args = fs::read_to_string(&argv).unwrap();
    assert!(
        !args.lines().any(|a| a == "--resume" || a == "-c"),
        "{args}"
    );
}

/// The live panes of teamctl's session of team `rt`.
fn live_panes(env: &TestEnv) -> Vec<String> {
    let out = env
        .command("tmux")
        .args([
            "list-panes",
            "-s",
            "-t",
            "=teamctl-rt",
            "-F",
            "#{pane_id} #{pane_dead}",
        ])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_suffix(" 0").map(String::from))
        .collect()
}

/// A teammate whose process runs is never started a second time, whatever `config.json`'s
/// `tmuxPaneId` says (a teammate can rewrite it to a pane that is gone): `resume` says it runs,
/// and `--on-dead restart`, which takes it for dead, ends the pane teamctl started it in before
/// it starts the new one. Another team's session beside it is left alone.
#[test]
fn a_running_teammate_is_never_started_twice_whatever_config_json_says() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    env.cmd()
        .args([
            "create",
            "rt",
            "--member",
            "alice:Review it",
            "--timeout",
            "20s",
        ])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .assert()
        .success();
    let beside = env
        .command("tmux")
        .args(["new-session", "-d", "-s", "teamctl-other", "exec sleep 600"])
        .status()
        .unwrap();
    assert!(beside.success());
    let alice = pane_of(&env, "alice");
    let path = env.root.join("teams/rt/config.json");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replace(&format!("\"{alice}\""), "\"%999\"")).unwrap();
    let out = env
        .cmd()
        .args(["resume", "rt", "--json"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    assert_eq!(member(&v, "alice")["action"], "running", "{v}");
    assert_eq!(live_panes(&env), vec![alice.clone()]);

    alice_on_a_task(&env);
    let out = wait_restarting(&env).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("\"action\":\"restart\""), "{stderr}");
    let now = live_panes(&env);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now[0], alice);
    assert!(crate::common::tmux_has_session(&env, "teamctl-other"));
}
