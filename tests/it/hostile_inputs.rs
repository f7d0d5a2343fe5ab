//! The corpus of hostile inputs of the last adversarial pass (issue 39), one table: each case is
//! something a teammate, a team file someone else wrote, or a shared machine can put in
//! teamctl's way, the command that meets it, and the one-line refusal (or the quoting) that must
//! come instead of the harm. Every command must end (a deadline), fail with one `error:` line,
//! and leave the canary's secret out of its output. The cases that need tmux or a crash are
//! beside the commands they test, named here:
//! - panes and sessions teamctl did not start:
//!   `run_resume::resume_refuses_a_session_it_did_not_start…`,
//!   `team_file::a_create_that_loses_the_race…`, `resume::a_running_teammate_is_never_started…`;
//! - a session id that is an option:
//!   `run_resume::resume_refuses_what_cannot_be_resumed_in_one_line`,
//!   `resume::a_session_named_like_an_option_is_not_resumed`;
//! - teammate text posing as teamctl or the user:
//!   `run_resume::resume_carries_an_interrupted_run_on…`;
//! - a link at the data dir's `worktrees`: `team_file::worktrees_are_never_made_through_a_link…`,
//!   `team_file::delete_never_removes_a_worktree_through_a_link_in_the_data_dir`;
//! - git-ignored files in a worktree: `team_file::delete_keeps_a_worktree_with_ignored_files…`;
//! - redeliver killed before its rename: `redeliver::killed_between_its_journal_and_its_target…`.

use std::fs;
use std::time::Duration;

use serde_json::json;

use crate::common::{TestEnv, json as parse, mkfifo};

/// The secret a hostile input tries to leak into a brief, a record or an output.
const SECRET: &str = "TOKEN=s3cr3t-canary";

/// How long any case may take (none waits for anything).
const DEADLINE: Duration = Duration::from_secs(20);

/// A hostile input and what must hold.
struct Case {
    /// What it is.
    name: &'static str,
    /// The command's arguments (`{dir}` is the test's folder).
    args: &'static [&'static str],
    /// A team file `team/t.toml` to write first, if any.
    team_file: Option<&'static str>,
    /// The exit code.
    code: i32,
    /// What the one `error:` line says.
    says: &'static str,
}

const CASES: &[Case] = &[
    Case {
        name: "brief_file reading the environment",
        args: &[
            "create",
            "--launch",
            "none",
            "--dry-run",
            "--file",
            "{dir}/team/t.toml",
        ],
        team_file: Some(
            "name = \"t\"\n[[member]]\nname = \"alice\"\nbrief_file = \"/proc/self/environ\"\n",
        ),
        code: 2,
        says: "is an absolute path",
    },
    Case {
        name: "brief_file leaving the folder by ..",
        args: &[
            "create",
            "--launch",
            "none",
            "--dry-run",
            "--file",
            "{dir}/team/t.toml",
        ],
        team_file: Some(
            "name = \"t\"\n[[member]]\nname = \"alice\"\nbrief_file = \"../secret.txt\"\n",
        ),
        code: 2,
        says: "leads outside the team file's folder",
    },
    Case {
        name: "brief_file leaving the folder through a link",
        args: &[
            "create",
            "--launch",
            "none",
            "--dry-run",
            "--file",
            "{dir}/team/t.toml",
        ],
        team_file: Some("name = \"t\"\n[[member]]\nname = \"alice\"\nbrief_file = \"out.md\"\n"),
        code: 2,
        says: "leads outside the team file's folder",
    },
    Case {
        name: "brief_file that is a FIFO",
        args: &[
            "create",
            "--launch",
            "none",
            "--dry-run",
            "--file",
            "{dir}/team/t.toml",
        ],
        team_file: Some("name = \"t\"\n[[member]]\nname = \"alice\"\nbrief_file = \"fifo\"\n"),
        code: 1,
        says: "is a FIFO (named pipe), not a regular file",
    },
    Case {
        name: "policy that is a FIFO",
        args: &[
            "create",
            "--launch",
            "none",
            "--dry-run",
            "--file",
            "{dir}/team/t.toml",
        ],
        team_file: Some(
            "name = \"t\"\npolicy = \"fifo\"\n[[member]]\nname = \"alice\"\nbrief = \"b\"\n",
        ),
        code: 2,
        says: "is a FIFO (named pipe), not a regular file",
    },
    Case {
        name: "--brief-file of /dev/zero (read until memory runs out, before)",
        args: &[
            "create",
            "--launch",
            "none",
            "--dry-run",
            "t",
            "--brief-file",
            "alice:/dev/zero",
        ],
        team_file: None,
        code: 1,
        says: "/dev/zero is a character device, not a regular file",
    },
    Case {
        name: "--brief-file of a folder",
        args: &[
            "create",
            "--launch",
            "none",
            "--dry-run",
            "t",
            "--brief-file",
            "alice:{dir}/team",
        ],
        team_file: None,
        code: 1,
        says: "is a folder, not a regular file",
    },
    Case {
        name: "--member-file that is a FIFO",
        args: &[
            "create",
            "--launch",
            "none",
            "--dry-run",
            "t",
            "--member-file",
            "{dir}/team/fifo",
        ],
        team_file: None,
        code: 1,
        says: "is a FIFO (named pipe), not a regular file",
    },
    Case {
        name: "approve --policy that is a FIFO",
        args: &[
            "--team",
            "alpha",
            "approve",
            "--policy",
            "{dir}/team/fifo",
            "--dry-run",
        ],
        team_file: None,
        code: 2,
        says: "is a FIFO (named pipe), not a regular file",
    },
    Case {
        name: "a team file larger than 1 MiB",
        args: &[
            "create",
            "--launch",
            "none",
            "--dry-run",
            "--file",
            "{dir}/team/huge.toml",
        ],
        team_file: None,
        code: 1,
        says: "larger than 1024 KiB",
    },
];

/// The folder every case reads from: a secret beside it, a link out, a FIFO, a huge file.
fn planted(env: &TestEnv) {
    let dir = env.dir.path().join("team");
    fs::create_dir_all(&dir).unwrap();
    fs::write(env.dir.path().join("secret.txt"), SECRET).unwrap();
    std::os::unix::fs::symlink(env.dir.path().join("secret.txt"), dir.join("out.md")).unwrap();
    mkfifo(dir.join("fifo"));
    fs::write(dir.join("huge.toml"), vec![b'#'; 1024 * 1024 + 1]).unwrap();
}

#[test]
fn every_hostile_input_is_refused_in_one_line_without_hanging() {
    let env = TestEnv::new();
    planted(&env);
    env.team("alpha", &[("alice", Some("blue"))]);
    let dir = env.dir.path().to_string_lossy().into_owned();
    for case in CASES {
        if let Some(text) = case.team_file {
            fs::write(env.dir.path().join("team/t.toml"), text).unwrap();
        }
        let args: Vec<String> = case.args.iter().map(|a| a.replace("{dir}", &dir)).collect();
        let out = env
            .cmd()
            .args(&args)
            .env("TEAMCTL_SECRET_CANARY", SECRET)
            .timeout(DEADLINE)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(case.code),
            "{}: {stderr}",
            case.name
        );
        assert!(
            stderr.starts_with("error: ") && stderr.lines().count() == 1,
            "{}: {stderr}",
            case.name
        );
        assert!(stderr.contains(case.says), "{}: {stderr}", case.name);
        assert!(
            !stderr.contains("s3cr3t") && !stdout.contains("s3cr3t"),
            "{}",
            case.name
        );
    }
    assert!(!env.root.join("teams/t").exists());
}

/// Words from a file in a suggested command are shell words; short names are never certain; a
/// FIFO where an inbox belongs is named.
#[test]
fn hostile_names_in_the_teams_files_are_quoted_or_refused() {
    let env = TestEnv::new();
    crate::common::led_team(&env);
    let id = "perm-1;$(cat ~/.ssh/id_ed25519)`id`";
    let frame = json!({"type": "permission_request", "request_id": id, "agent_id": "alice",
        "tool_name": "Bash", "tool_use_id": "t1", "description": "d", "input": {"command": "ls"},
        "permission_suggestions": []});
    crate::common::write_as(&env, "alice", "team-lead", &frame.to_string());
    let out = env
        .cmd()
        .args(["status", "--json", "--after", "0s"])
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    let todo = v["needs_human"][0]["todo"].as_str().unwrap();
    assert!(todo.contains(&format!("teamctl approve '{id}'")), "{todo}");
    // `bo` is one edit from `bob`, but no two-letter name is certain.
    let inboxes = env.root.join("teams/t/inboxes");
    fs::write(
        inboxes.join("bo.json"),
        r#"[{"from":"alice","text":"x","timestamp":"2026-11-29T10:00:00.000Z"}]"#,
    )
    .unwrap();
    let v = crate::common::run_json(&env, &["doctor", "--fix"]);
    assert_eq!(v["fixed"], json!([]), "{v}");
    assert!(
        fs::read_to_string(inboxes.join("bo.json"))
            .unwrap()
            .contains("\"x\"")
    );
    assert_eq!(fs::read_to_string(inboxes.join("bob.json")).unwrap(), "[]");
}
