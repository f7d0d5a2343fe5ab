//! `teamctl create`: provisioning (exact files), idempotency, the concurrent-create race, and
//! launching fake `claude` teammates in a private tmux server.

use std::fs;
use std::path::Path;
use std::process::Stdio;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{
    NOW, Ran, TestEnv, cwd, fake_claude, json as parse, json_lines, keys, read_entries, run_json,
    script, tmux_env, tmux_has_session,
};

/// 2026-11-29T10:00:00.000Z in milliseconds.
const NOW_MS: i64 = 1_795_946_400_000;

fn uuid_v4(s: &str) -> bool {
    let b = s.as_bytes();
    s.len() == 36
        && b[14] == b'4'
        && s.chars()
            .enumerate()
            .all(|(i, c)| matches!(i, 8 | 13 | 18 | 23) == (c == '-'))
}

#[test]
fn launch_none_writes_claude_codes_shape_exactly() {
    let env = TestEnv::new();
    env.cmd()
        .args([
            "create",
            "review-42",
            "--member",
            "alice:Review the auth changes in PR 42",
            "--member",
            "bob:Check the tests",
            "--description",
            "PR 42 review",
            "--model",
            "claude-opus-5-5",
            "--launch",
            "none",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "created team review-42 (provisioned)",
        ))
        .stdout(predicate::str::contains("alice"))
        .stderr(predicate::str::contains("validating: team 'review-42'"))
        .stderr(predicate::str::contains("provisioning: "));
    let team = env.root.join("teams/review-42");
    let text = fs::read_to_string(team.join("config.json")).unwrap();
    let cfg: Value = serde_json::from_str(&text).unwrap();
    let sid = cfg["leadSessionId"].as_str().unwrap().to_string();
    assert!(uuid_v4(&sid), "{sid}");
    let cwd = cwd(&env);
    let member = |name: &str, color: &str| {
        json!({
            "agentId": format!("{name}@review-42"),
            "name": name,
            "agentType": "general-purpose",
            "model": "claude-opus-5-5",
            "color": color,
            "planModeRequired": false,
            "joinedAt": NOW_MS,
            "tmuxPaneId": "",
            "cwd": cwd,
            "subscriptions": []
        })
    };
    let want = json!({
        "name": "review-42",
        "description": "PR 42 review",
        "createdAt": NOW_MS,
        "leadAgentId": "team-lead@review-42",
        "leadSessionId": sid,
        "members": [
            {
                "agentId": "team-lead@review-42",
                "name": "team-lead",
                "agentType": "team-lead",
                "joinedAt": NOW_MS,
                "tmuxPaneId": "leader",
                "cwd": cwd,
                "subscriptions": [],
                "backendType": "in-process"
            },
            member("alice", "blue"),
            member("bob", "green")
        ],
        "teamctl": {"leads": true, "version": env!("CARGO_PKG_VERSION"), "launch": "none", "tmuxSession": null}
    });
    assert_eq!(cfg, want);
    // Key order and layout are JSON.stringify(x, null, 2)'s.
    assert_eq!(text, serde_json::to_string_pretty(&want).unwrap());

    for (name, brief) in [
        ("alice", "Review the auth changes in PR 42"),
        ("bob", "Check the tests"),
    ] {
        let entries = read_entries(&team.join(format!("inboxes/{name}.json")));
        assert_eq!(entries.len(), 1);
        let id = entries[0]["msg_id"].as_str().unwrap();
        assert!(uuid_v4(id), "{id}");
        let want = json!({"from":"team-lead","text":brief,"timestamp":NOW,"msgV":1,"msg_id":id,"type":"message","read":false});
        assert_eq!(entries[0], want);
        assert_eq!(
            fs::read_to_string(team.join(format!("inboxes/{name}.json"))).unwrap(),
            serde_json::to_string_pretty(&json!([want])).unwrap()
        );
    }
    assert_eq!(
        fs::read_to_string(team.join("inboxes/team-lead.json")).unwrap(),
        "[]"
    );
    assert!(env.root.join("tasks/review-42").is_dir());
    let mut names: Vec<String> = fs::read_dir(team.join("inboxes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["alice.json", "bob.json", "team-lead.json"]);
    assert!(!team.join("config.json.lock").exists());
}

#[test]
fn json_progress_lines_then_the_result() {
    let env = TestEnv::new();
    fs::write(
        env.dir.path().join("briefs.txt"),
        "# reviewers\nalice: Review auth\n\nbob:   Review tests  \n",
    )
    .unwrap();
    fs::write(env.dir.path().join("carol.md"), "Line one\nLine two\n").unwrap();
    let out = env
        .cmd()
        .args([
            "--json",
            "create",
            "t1",
            "--member-file",
            "briefs.txt",
            "--member",
            "carol",
            "--brief-file",
            "carol:carol.md",
            "--launch",
            "none",
        ])
        .assert()
        .success()
        .stdout_bytes();
    let lines = json_lines(&out);
    let states: Vec<&str> = lines.iter().map(|l| l["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["validating", "provisioning", "provisioned"]);
    for p in &lines[..2] {
        assert_eq!(keys(p), ["message", "schema_version", "state", "type"]);
        assert_eq!(p["type"], "progress");
    }
    let r = &lines[2];
    assert_eq!(
        keys(r),
        [
            "claude",
            "config",
            "lead",
            "lead_session_id",
            "members",
            "reason",
            "schema_version",
            "state",
            "team",
            "tmux_session",
            "type"
        ]
    );
    assert_eq!(r["schema_version"], 1);
    assert_eq!(r["type"], "result");
    assert_eq!(r["team"], "t1");
    assert_eq!(r["lead"], "team-lead");
    assert_eq!(r["reason"], Value::Null);
    assert_eq!(r["claude"], Value::Null);
    assert_eq!(r["tmux_session"], Value::Null);
    assert_eq!(
        r["members"],
        json!([
            {"name":"carol","color":"blue","pane":null,"state":"provisioned","sandbox":null},
            {"name":"alice","color":"green","pane":null,"state":"provisioned","sandbox":null},
            {"name":"bob","color":"yellow","pane":null,"state":"provisioned","sandbox":null}
        ])
    );
    let bob = read_entries(&env.inbox("t1", "bob"));
    assert_eq!(bob[0]["text"], "Review tests");
    let carol = read_entries(&env.inbox("t1", "carol"));
    assert_eq!(carol[0]["text"], "Line one\nLine two");
}

#[test]
fn an_existing_team_is_never_overwritten() {
    let env = TestEnv::new();
    env.team("taken", &[("alice", Some("blue"))]);
    let before = fs::read(env.root.join("teams/taken/config.json")).unwrap();
    env.cmd()
        .args(["create", "taken", "--member", "x:y", "--launch", "none"])
        .assert()
        .code(1)
        .stderr(
            predicate::str::starts_with("validating").and(predicate::str::contains(
                "error: team 'taken' already exists",
            )),
        );
    assert_eq!(
        fs::read(env.root.join("teams/taken/config.json")).unwrap(),
        before
    );
    assert!(!env.inbox("taken", "x").exists());
}

#[test]
fn a_folder_without_config_is_a_failed_attempt_and_is_cleared() {
    let env = TestEnv::new();
    let dir = env.root.join("teams/again");
    fs::create_dir_all(dir.join("inboxes")).unwrap();
    fs::write(dir.join("inboxes/old.json"), "[]").unwrap();
    fs::write(dir.join("inboxes/alice.json"), "[{\"from\":\"x\"}]").unwrap();
    fs::create_dir_all(env.root.join("tasks/again")).unwrap();
    fs::write(env.root.join("tasks/again/1.json"), "{}").unwrap();
    env.cmd()
        .args([
            "create",
            "again",
            "--member",
            "alice:new",
            "--launch",
            "none",
        ])
        .assert()
        .success();
    assert!(!dir.join("inboxes/old.json").exists());
    assert_eq!(read_entries(&env.inbox("again", "alice")).len(), 1);
    assert_eq!(
        fs::read_dir(env.root.join("tasks/again")).unwrap().count(),
        0
    );
}

#[test]
fn concurrent_creates_exactly_one_wins() {
    for round in 0..3 {
        let env = TestEnv::new();
        let children: Vec<_> = (0..8)
            .map(|i| {
                env.std_cmd()
                    .args([
                        "create",
                        "race",
                        "--member",
                        &format!("m{i}:brief {i}"),
                        "--launch",
                        "none",
                    ])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let results: Vec<_> = children
            .into_iter()
            .map(|c| c.wait_with_output().unwrap())
            .collect();
        let winners: Vec<usize> = (0..8).filter(|i| results[*i].status.success()).collect();
        assert_eq!(winners.len(), 1, "round {round}: winners {winners:?}");
        for r in results.iter().filter(|r| !r.status.success()) {
            assert_eq!(r.status.code(), Some(1));
            let err = String::from_utf8_lossy(&r.stderr);
            assert!(
                err.contains("already exists") || err.contains("by another process right now"),
                "{err}"
            );
        }
        // The files are the winner's, complete.
        let w = winners[0];
        let cfg: Value =
            serde_json::from_slice(&fs::read(env.root.join("teams/race/config.json")).unwrap())
                .unwrap();
        assert_eq!(cfg["members"][1]["name"], format!("m{w}"));
        let names: Vec<_> = fs::read_dir(env.root.join("teams/race/inboxes"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        let brief = read_entries(&env.inbox("race", &format!("m{w}")));
        assert_eq!(brief[0]["text"], format!("brief {w}"));
    }
}

#[test]
fn usage_errors() {
    let env = TestEnv::new();
    let bad: [&[&str]; 7] = [
        &["create", "Bad_Name", "--member", "a:b"],
        &["create", "t", "--member", "user:b"],
        &["create", "t", "--member", "Team-Lead:b"],
        &["create", "t", "--member", "a:b", "--member", "A:c"],
        &["create", "t"],
        &["create", "t", "--member", "a"],
        &["create", "t", "--member", "a:b", "--launch", "screen"],
    ];
    for args in bad {
        env.cmd()
            .args(args)
            .args(["--launch", "none"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("error:"));
    }
    env.cmd()
        .args(["create", "t", "--member", "user:b", "--launch", "none"])
        .assert()
        .stderr(predicate::str::contains("reserved by Claude Code"));
    assert!(!env.root.join("teams").exists());
}

#[test]
fn claude_not_found_lists_where_it_looked() {
    let env = TestEnv::new();
    let empty = env.dir.path().join("empty-bin");
    fs::create_dir_all(&empty).unwrap();
    env.cmd()
        .args(["create", "t", "--member", "a:b"])
        .env("PATH", &empty)
        .env_remove("CLAUDE_CODE_TEAMMATE_COMMAND")
        .assert()
        .code(1)
        .stderr(predicate::str::contains("could not find the claude binary"))
        .stderr(predicate::str::contains(
            empty.join("claude").display().to_string(),
        ))
        .stderr(predicate::str::contains(".nvm/versions/node"))
        .stderr(predicate::str::contains("/usr/local/bin/claude"));
    assert!(!env.root.join("teams").exists());
    env.cmd()
        .args(["create", "t", "--member", "a:b"])
        .env("TEAMCTL_CLAUDE_BIN", env.dir.path().join("nope"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("not an executable file"));
}

#[test]
fn tmux_launch_with_a_fake_claude_reaches_ready() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let out = env
        .cmd()
        .args([
            "--json",
            "create",
            "ok",
            "--member",
            "alice:Review it",
            "--member",
            "bob:Test it",
            "--agent-type",
            "reviewer",
            "--permission-mode",
            "acceptEdits",
            "--timeout",
            "20s",
        ])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .assert()
        .success()
        .stdout_bytes();
    let lines = json_lines(&out);
    let states: Vec<&str> = lines.iter().map(|l| l["state"].as_str().unwrap()).collect();
    assert_eq!(
        states,
        [
            "validating",
            "validating",
            "provisioning",
            "launching",
            "launching",
            "launching",
            "waiting",
            "ready"
        ]
    );
    let r = lines.last().unwrap();
    assert_eq!(r["tmux_session"], "teamctl-ok");
    assert_eq!(
        r["claude"],
        json!({"path": fake_claude().to_string_lossy(), "found_by": "explicit", "version": "9.9.9 (Fake Claude)"})
    );
    let cfg: Value =
        serde_json::from_slice(&fs::read(env.root.join("teams/ok/config.json")).unwrap()).unwrap();
    let sid = cfg["leadSessionId"].as_str().unwrap();
    for (i, (name, color)) in [("alice", "blue"), ("bob", "green")].iter().enumerate() {
        let m = &r["members"][i];
        assert_eq!(m["name"], *name);
        assert_eq!(m["state"], "ready");
        let pane = m["pane"].as_str().unwrap();
        assert!(pane.starts_with('%'), "{pane}");
        let entry = &cfg["members"][i + 1];
        assert_eq!(entry["tmuxPaneId"], pane);
        assert_eq!(entry["backendType"], "tmux");
        assert_eq!(entry["agentType"], "reviewer");
        // The teammate got exactly the lead's flags and environment.
        let argv = fs::read_to_string(env.root.join(format!("fake-argv-{name}"))).unwrap();
        let want = [
            "--agent-id",
            &format!("{name}@ok"),
            "--agent-name",
            name,
            "--team-name",
            "ok",
            "--agent-color",
            color,
            "--parent-session-id",
            sid,
            "--agent-type",
            "reviewer",
            "--permission-mode",
            "acceptEdits",
        ]
        .join("\n");
        assert_eq!(argv.trim_end(), want);
        let envs = fs::read_to_string(env.root.join(format!("fake-env-{name}"))).unwrap();
        assert_eq!(
            envs.trim_end(),
            format!(
                "CLAUDECODE=1\nCLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1\nCLAUDE_CONFIG_DIR={}",
                env.root.display()
            )
        );
        let wd = fs::read_to_string(env.root.join(format!("fake-cwd-{name}"))).unwrap();
        assert_eq!(wd.trim_end(), cwd(&env));
    }
    // A second create of the same team: already exists, and the session stays.
    env.cmd()
        .args(["create", "ok", "--member", "x:y"])
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .assert()
        .code(1)
        .stderr(predicate::str::contains("already exists"));
}

#[test]
fn a_teammate_that_exits_at_once_fails_with_its_pane_tail() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    // Node takes a moment to exit after its last words; a shell that exits the instant it has
    // printed can lose them in tmux 3.3 (the pane is gone before its output is read).
    let bad = script(
        &env,
        "broken-claude",
        "[ \"$1\" = --version ] && { echo 0.0.1; exit 0; }\necho 'fatal: no API key configured' >&2\nsleep 0.2\nexit 3",
    );
    let out = env
        .cmd()
        .args(["--json", "create", "bad", "--member", "alice:hi"])
        .env("TEAMCTL_CLAUDE_BIN", &bad)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("error: team 'bad' failed"))
        .get_output()
        .clone();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let r = parse(stdout.lines().last().unwrap().as_bytes());
    assert_eq!(r["state"], "failed");
    assert_eq!(r["members"][0]["state"], "exited");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains("'alice' exited before taking its brief"),
        "{reason}"
    );
    // tmux 3.3 does not always report the exit status of a pane that died this fast.
    assert!(
        reason.contains("exit status 3") || reason.contains("(pane %0)"),
        "{reason}"
    );
    assert!(reason.contains("fatal: no API key configured"), "{reason}");
    // The session is gone, the files stay for inspection.
    assert!(!tmux_has_session(&env, "teamctl-bad"));
    assert!(env.root.join("teams/bad/config.json").exists());
}

#[test]
fn a_teammate_that_never_reads_times_out() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let slow = script(
        &env,
        "stuck-claude",
        "[ \"$1\" = --version ] && { echo 0.0.2; exit 0; }\necho 'waiting for login...'\nexec sleep 30",
    );
    env.cmd()
        .args(["create", "slow", "--member", "alice:hi", "--timeout", "1s"])
        .env("TEAMCTL_CLAUDE_BIN", &slow)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("created team slow (failed)"))
        .stderr(predicate::str::contains(
            "'alice' did not take its brief within 1 s",
        ))
        .stderr(predicate::str::contains("waiting for login..."));
}

#[test]
fn in_a_team_teamctl_leads_you_are_team_lead() {
    let env = TestEnv::new();
    env.cmd()
        .args(["create", "led", "--member", "alice:hi", "--launch", "none"])
        .assert()
        .success();
    env.cmd().args(["send", "alice", "more"]).assert().success();
    let alice = read_entries(&env.inbox("led", "alice"));
    assert_eq!(alice[1]["from"], "team-lead");
    env.cmd()
        .args(["send", "alice", "x"])
        .env("TEAMCTL_FROM", "ops")
        .assert()
        .success();
    assert_eq!(read_entries(&env.inbox("led", "alice"))[2]["from"], "ops");
    // inbox reads the lead's inbox by default.
    fs::write(
        env.inbox("led", "team-lead"),
        r#"[{"from":"alice","text":"report","timestamp":"2026-11-29T09:59:00.000Z","read":false}]"#,
    )
    .unwrap();
    let v = run_json(&env, &["inbox"]);
    assert_eq!(v["messages"][0]["text"], "report");
    assert_eq!(v["messages"][0]["to"], "team-lead");
    let v = run_json(&env, &["status"]);
    assert_eq!(
        v["identity"],
        json!({"name": "team-lead", "reachable": true, "reason": null})
    );
    env.cmd()
        .args(["status"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "you:         team-lead (teammates can reply to you)",
        ));
}

#[test]
fn send_join_adds_a_member_and_keeps_everything_else() {
    let env = TestEnv::new();
    env.team("j", &[("alice", Some("blue"))]);
    let path = env.root.join("teams/j/config.json");
    let mut cfg: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    cfg["hiddenPaneIds"] = json!(["%9"]);
    cfg["members"][1]["isActive"] = true.into();
    fs::write(&path, serde_json::to_string_pretty(&cfg).unwrap()).unwrap();

    // A reserved name is refused with what to do instead; nothing is written.
    let before = fs::read(&path).unwrap();
    env.cmd()
        .args(["send", "--join", "alice", "hi"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("reserved by Claude Code"))
        .stderr(predicate::str::contains("--from ops"));
    assert_eq!(fs::read(&path).unwrap(), before);
    assert!(!env.inbox("j", "alice").exists());

    env.cmd()
        .args(["send", "--join", "--from", "ops", "alice", "hi"])
        .assert()
        .success()
        .stderr(predicate::str::contains("joined team 'j' as 'ops'"));
    let after: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let mut want = cfg.clone();
    want["members"].as_array_mut().unwrap().push(json!({
        "agentId": "ops@j",
        "name": "ops",
        "joinedAt": NOW_MS,
        "tmuxPaneId": "",
        "cwd": cwd(&env),
        "subscriptions": []
    }));
    assert_eq!(after, want);
    assert_eq!(fs::read_to_string(env.inbox("j", "ops")).unwrap(), "[]");
    assert_eq!(read_entries(&env.inbox("j", "alice"))[0]["from"], "ops");
    assert!(!env.root.join("teams/j/config.json.lock").exists());

    // Joining again changes nothing.
    let once = fs::read(&path).unwrap();
    env.cmd()
        .args(["send", "--join", "--from", "ops", "alice", "again"])
        .assert()
        .success()
        .stderr(predicate::str::contains("joined").not());
    assert_eq!(fs::read(&path).unwrap(), once);

    // status marks who teammates can reach.
    for (who, reachable, reason) in [
        ("ops", true, None),
        (
            "stranger",
            false,
            Some("'stranger' is not a member of config.json; add it with `send --join`"),
        ),
        (
            "team-lead",
            false,
            Some(
                "team-lead is this team's Claude Code lead: replies go to it, not to you; use \
                 your own name with `send --join --from NAME`",
            ),
        ),
    ] {
        let v = env
            .cmd()
            .args(["status", "--json"])
            .env("TEAMCTL_FROM", who)
            .assert()
            .success()
            .stdout_json();
        assert_eq!(
            v["identity"],
            json!({"name": who, "reachable": reachable, "reason": reason})
        );
    }
    env.cmd()
        .args(["status"])
        .assert()
        .success()
        .stdout(predicate::str::contains("you:         user (UNREACHABLE: "));
}

/// The CLI feeds the environment to the resolution: HOME's install places, then PATH, then
/// CLAUDE_CODE_TEAMMATE_COMMAND, then TEAMCTL_CLAUDE_BIN.
#[test]
fn the_binary_is_found_from_home_path_and_env() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let fake = fs::read(fake_claude()).unwrap();
    let place = |rel: &str| {
        use std::os::unix::fs::PermissionsExt;
        let p = env.dir.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, &fake).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        p
    };
    let home_bin = place("home/.local/bin/claude");
    let path_bin = place("pathdir/claude");
    let tc_bin = place("tc/claude-teammate");
    let ex_bin = place("ex/claude");
    // A PATH with tmux and the shell tools, and no real claude.
    let base = "/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin";
    let with_path = format!("{}:{base}", env.dir.path().join("pathdir").display());
    // (team, PATH, CLAUDE_CODE_TEAMMATE_COMMAND, TEAMCTL_CLAUDE_BIN, found, found_by)
    type Case<'a> = (
        &'a str,
        &'a str,
        Option<&'a Path>,
        Option<&'a Path>,
        &'a Path,
        &'a str,
    );
    let cases: [Case; 4] = [
        ("t1", base, None, None, &home_bin, "install_place"),
        ("t2", &with_path, None, None, &path_bin, "path"),
        (
            "t3",
            &with_path,
            Some(&tc_bin),
            None,
            &tc_bin,
            "teammate_command",
        ),
        (
            "t4",
            &with_path,
            Some(&tc_bin),
            Some(&ex_bin),
            &ex_bin,
            "explicit",
        ),
    ];
    for (team, path, tc, ex, want, by) in cases {
        if Path::new("/usr/local/bin/claude").exists() && by == "install_place" {
            continue; // a real install would come first among the install places
        }
        let mut cmd = env.cmd();
        cmd.args(["--json", "create", team, "--member", "alice:hi"])
            .env("PATH", path)
            .env_remove("CLAUDE_CODE_TEAMMATE_COMMAND")
            .env_remove("TEAMCTL_CLAUDE_BIN");
        if let Some(tc) = tc {
            cmd.env("CLAUDE_CODE_TEAMMATE_COMMAND", tc);
        }
        if let Some(ex) = ex {
            cmd.env("TEAMCTL_CLAUDE_BIN", ex);
        }
        let out = cmd.assert().success().stdout_bytes();
        let r = json_lines(&out).pop().unwrap();
        assert_eq!(r["state"], "ready", "{team}");
        assert_eq!(
            r["claude"],
            json!({"path": want.to_string_lossy(), "found_by": by, "version": "9.9.9 (Fake Claude)"}),
            "{team}"
        );
    }
}
