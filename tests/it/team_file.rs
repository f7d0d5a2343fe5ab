//! Team files (`create --file`, docs/team-file.md): the schema matches the parser, the examples
//! validate, errors name the place, each teammate's settings reach config.json and teamctl's
//! record, and worktrees are made, shown, kept or removed.

use std::fs;
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::{Value, json};
use teamctl::ops::create::{FileMember, TeamFile};

use crate::common::{TestEnv, git, json as parse, keys};

fn repo_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The fields a serde struct accepts, as `deny_unknown_fields` lists them for a key it refuses.
fn fields<T: serde::de::DeserializeOwned + std::fmt::Debug>(table: &str) -> Vec<String> {
    let err = toml::from_str::<T>(&format!("{table}zz_unknown = 1\n")).unwrap_err();
    let msg = err.message().to_string();
    let list = msg
        .split("expected one of ")
        .nth(1)
        .unwrap_or_else(|| panic!("{msg}"));
    let mut out: Vec<String> = list
        .split(", ")
        .map(|f| f.trim_matches('`').to_string())
        .collect();
    out.sort();
    out
}

fn schema() -> Value {
    serde_json::from_str(
        &fs::read_to_string(repo_root().join("docs/team-file.schema.json")).unwrap(),
    )
    .unwrap()
}

#[test]
fn the_schema_has_the_parsers_keys() {
    let s = schema();
    let top = keys(&s["properties"]);
    assert_eq!(top, fields::<TeamFile>(""));
    let member = keys(&s["$defs"]["member"]["properties"]);
    assert_eq!(
        member,
        fields::<FileMember>("name = \"a\"\nbrief = \"b\"\n")
    );
}

/// Checks `v` against the parts of JSON Schema the team file's schema uses.
fn validate(schema: &Value, root: &Value, v: &Value, at: &str) -> Vec<String> {
    let s = match schema.get("$ref").and_then(Value::as_str) {
        Some(r) => &root["$defs"][r.trim_start_matches("#/$defs/")],
        None => schema,
    };
    let mut errs = Vec::new();
    let type_ok = |t: &str| match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        _ => false,
    };
    if let Some(t) = s.get("type").and_then(Value::as_str)
        && !type_ok(t)
    {
        errs.push(format!("{at}: not a {t}"));
    }
    if let (Some(min), Some(text)) = (s.get("minLength").and_then(Value::as_u64), v.as_str())
        && (text.chars().count() as u64) < min
    {
        errs.push(format!("{at}: too short"));
    }
    if let Some(req) = s.get("required").and_then(Value::as_array) {
        for r in req.iter().filter_map(Value::as_str) {
            if v.get(r).is_none() {
                errs.push(format!("{at}: missing {r}"));
            }
        }
    }
    if let (Some(props), Some(obj)) = (s.get("properties"), v.as_object()) {
        for (k, x) in obj {
            match props.get(k) {
                Some(p) => errs.extend(validate(p, root, x, &format!("{at}.{k}"))),
                None if s["additionalProperties"] == false => {
                    errs.push(format!("{at}: unknown key {k}"))
                }
                None => {}
            }
        }
    }
    if let (Some(items), Some(arr)) = (s.get("items"), v.as_array()) {
        for (i, x) in arr.iter().enumerate() {
            errs.extend(validate(items, root, x, &format!("{at}[{i}]")));
        }
    }
    if let Some(one) = s.get("oneOf").and_then(Value::as_array) {
        let ok = one
            .iter()
            .filter(|o| validate(o, root, v, at).is_empty())
            .count();
        if ok != 1 {
            errs.push(format!("{at}: matches {ok} of oneOf"));
        }
    }
    errs
}

#[test]
fn the_examples_validate_against_the_schema() {
    let s = schema();
    for f in ["examples/team/review.toml", "examples/ci/review.toml"] {
        let text = fs::read_to_string(repo_root().join(f)).unwrap();
        let v: Value = toml::from_str(&text).unwrap();
        assert_eq!(validate(&s, &s, &v, f), Vec::<String>::new());
        teamctl::ops::create::load(&repo_root().join(f)).unwrap();
    }
    // Each teammate's runtime keys, at the top level and per member.
    let runtime: Value = toml::from_str(
        "mcp_config = \"m.json\"\neffort = \"low\"\nenv = { A = \"${B}\" }\n[[member]]\n\
         name = \"a\"\nbrief = \"b\"\nmcp_config = [\"m.json\", \"n.json\"]\n\
         strict_mcp_config = true\nsettings = \"s.json\"\nenv = { C = \"d\" }\n",
    )
    .unwrap();
    assert_eq!(validate(&s, &s, &runtime, "runtime"), Vec::<String>::new());
    // The checker does catch what the schema refuses.
    let bad = json!({"member": [{"name": "a", "brief": "b", "brief_file": "c"}], "x": 1});
    assert_eq!(validate(&s, &s, &bad, "bad").len(), 2);
}

fn write(env: &TestEnv, name: &str, text: &str) -> PathBuf {
    let p = env.dir.path().join(name);
    fs::write(&p, text).unwrap();
    p
}

const TWO: &str = r#"name = "shape-{n}"
description = "two of a kind"
permission_mode = "acceptEdits"
[[member]]
name = "alice"
brief = "Review the auth changes"
model = "sonnet"
agent_type = "security-reviewer"
[[member]]
name = "bob"
brief_file = "bob.md"
model = "claude-haiku-4-5"
permission_mode = "plan"
"#;

#[test]
fn a_file_gives_each_teammate_its_settings() {
    let env = TestEnv::new();
    write(&env, "bob.md", "Check the tests\n");
    let file = write(&env, "team.toml", TWO);
    // --dry-run writes nothing and says what it would do.
    let out = env
        .cmd()
        .args(["--json", "create", "--dry-run", "--file"])
        .arg(&file)
        .assert()
        .success();
    let v = parse(&out.get_output().stdout);
    assert_eq!(
        keys(&v),
        [
            "config",
            "cwd",
            "description",
            "dry_run",
            "launch",
            "members",
            "policy",
            "schema_version",
            "team"
        ]
    );
    assert_eq!(v["team"], "shape-1");
    assert_eq!(v["members"][0]["model"], "sonnet");
    assert_eq!(v["members"][0]["agent_type"], "security-reviewer");
    assert_eq!(v["members"][1]["brief"], "Check the tests");
    assert_eq!(v["members"][1]["permission_mode"], "plan");
    assert_eq!(v["members"][1]["worktree"], Value::Null);
    assert!(!env.root.join("teams").exists());
    env.cmd()
        .args(["create", "--dry-run", "--file"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("would create team shape-1"))
        .stdout(predicate::str::contains("security-reviewer"));

    // The flags win over the file: --agent-type for every teammate.
    env.cmd()
        .args([
            "create",
            "--launch",
            "none",
            "--agent-type",
            "checker",
            "--file",
        ])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "created team shape-1 (provisioned)",
        ));
    let cfg: Value = serde_json::from_str(
        &fs::read_to_string(env.root.join("teams/shape-1/config.json")).unwrap(),
    )
    .unwrap();
    let m = &cfg["members"];
    assert_eq!(
        (&m[1]["name"], &m[1]["model"], &m[1]["agentType"]),
        (&json!("alice"), &json!("sonnet"), &json!("checker"))
    );
    assert_eq!(m[2]["model"], "claude-haiku-4-5");
    assert_eq!(cfg["description"], "two of a kind");
    // teamctl's own record keeps each teammate's launch settings (what a restart uses).
    let rec = fs::read_dir(env.data_dir().join("leads"))
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("shape-1."))
        .unwrap();
    let rec: Value = serde_json::from_slice(&fs::read(rec.path()).unwrap()).unwrap();
    let members = &rec["launch"]["members"];
    assert_eq!(members[0]["permission_mode"], "acceptEdits");
    assert_eq!(members[1]["permission_mode"], "plan");
    assert_eq!(members[1]["model"], "claude-haiku-4-5");
    assert_eq!(members[0]["agent_type"], "checker");
    // {n} moves on to the next free name.
    env.cmd()
        .args(["create", "--launch", "none", "--file"])
        .arg(&file)
        .assert()
        .success()
        .stdout(predicate::str::contains("created team shape-2"));
}

#[test]
fn mistakes_in_a_file_name_the_place_and_write_nothing() {
    let env = TestEnv::new();
    for (text, want) in [
        (
            "[[member]]\nname = \"alice\"\nbrief = \"b\"\nmodle = \"m\"\n",
            ":4:1: unknown field `modle`",
        ),
        (
            "[[member]]\nname = \"alice\"\nbrief = \"b\"\nworktree = 3\n",
            ":4:12: invalid type: integer `3`, expected true, false or a branch name",
        ),
        (
            "name = \"t\"\n[[member]]\nname = \"al ice\"\nbrief = \"b\"\n",
            ":3:8: invalid member name 'al ice'",
        ),
        (
            "name = \"t\"\n[[member]]\nname = \"team-lead\"\nbrief = \"b\"\n",
            "member name 'team-lead' is reserved",
        ),
    ] {
        let file = write(&env, "bad.toml", text);
        env.cmd()
            .args(["create", "--launch", "none", "--file"])
            .arg(&file)
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with("error: "))
            .stderr(predicate::str::contains(want));
    }
    assert!(!env.root.join("teams").exists());
}

#[test]
fn worktrees_per_teammate_are_made_shown_and_taken_down() {
    let env = TestEnv::new();
    let repo = env.dir.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join("notes.md"), "base\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let file = write(
        &env,
        "wt.toml",
        "name = \"wt\"\ncwd = \"repo\"\n[[member]]\nname = \"alice\"\nbrief = \"a\"\nworktree = true\n\
         [[member]]\nname = \"bob\"\nbrief = \"b\"\nworktree = \"bob-work\"\n[[member]]\nname = \"carol\"\nbrief = \"c\"\n",
    );
    env.cmd()
        .args(["create", "--launch", "none", "--file"])
        .arg(&file)
        .assert()
        .success();
    let cfg: Value =
        serde_json::from_str(&fs::read_to_string(env.root.join("teams/wt/config.json")).unwrap())
            .unwrap();
    let cwd_of = |i: usize| PathBuf::from(cfg["members"][i]["cwd"].as_str().unwrap());
    let (alice, bob) = (cwd_of(1), cwd_of(2));
    assert!(
        alice.starts_with(env.data_dir().join("worktrees")),
        "{}",
        alice.display()
    );
    assert_eq!(cwd_of(3), fs::canonicalize(&repo).unwrap());
    assert_eq!(
        git(&alice, &["branch", "--show-current"]),
        "teamctl/wt/alice"
    );
    assert_eq!(git(&bob, &["branch", "--show-current"]), "bob-work");
    // The checkout itself is untouched.
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");

    // Both edit the same path; alice commits, bob leaves his change uncommitted.
    fs::write(alice.join("notes.md"), "alice\n").unwrap();
    git(&alice, &["commit", "-q", "-am", "alice"]);
    fs::write(bob.join("notes.md"), "bob\n").unwrap();
    let out = env
        .cmd()
        .args(["--json", "--team", "wt", "status"])
        .assert()
        .success();
    let v = parse(&out.get_output().stdout);
    let row = |n: &str| {
        v["members"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == n)
            .unwrap()
            .clone()
    };
    assert_eq!(
        row("alice")["worktree"],
        json!({"path": alice.to_str().unwrap(), "branch": "teamctl/wt/alice", "changed": 1})
    );
    assert_eq!(row("bob")["worktree"]["changed"], 1);
    assert_eq!(row("carol")["worktree"], Value::Null);
    env.cmd()
        .args(["--team", "wt", "status"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "alice: branch teamctl/wt/alice, 1 file(s) changed",
        ));

    // delete: alice's clean worktree goes, bob's dirty one stays; both branches stay.
    let record = env.dir.path().join("record");
    let out = env
        .cmd()
        .args(["--json", "delete", "wt", "--export"])
        .arg(&record)
        .assert()
        .success();
    let v = parse(&out.get_output().stdout);
    let w = v["worktrees"].as_array().unwrap();
    assert_eq!(
        (&w[0]["member"], &w[0]["action"]),
        (&json!("alice"), &json!("removed"))
    );
    assert_eq!(
        (&w[1]["member"], &w[1]["action"]),
        (&json!("bob"), &json!("kept"))
    );
    assert!(
        w[1]["reason"].as_str().unwrap().contains("uncommitted"),
        "{}",
        w[1]
    );
    assert!(!alice.exists() && bob.exists());
    assert_eq!(fs::read_to_string(bob.join("notes.md")).unwrap(), "bob\n");
    assert_eq!(git(&repo, &["show", "teamctl/wt/alice:notes.md"]), "alice");
    git(&repo, &["rev-parse", "--verify", "bob-work"]);
    // The record names each branch and its final commit.
    let s: Value = serde_json::from_slice(&fs::read(record.join("summary.json")).unwrap()).unwrap();
    let b = &s["worktrees"][0];
    assert_eq!(b["branch"], "teamctl/wt/alice");
    assert_eq!(
        b["commit"].as_str().unwrap(),
        git(&repo, &["rev-parse", "teamctl/wt/alice"])
    );
    assert_ne!(b["commit"], b["base"]);
}

#[test]
fn worktrees_need_a_git_repository() {
    let env = TestEnv::new();
    let plain = env.dir.path().join("plain");
    fs::create_dir_all(&plain).unwrap();
    env.cmd()
        .args([
            "create",
            "t",
            "--launch",
            "none",
            "--worktree",
            "--member",
            "a:b",
            "--cwd",
        ])
        .arg(&plain)
        .env("GIT_CEILING_DIRECTORIES", env.dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not in a git repository"));
    assert!(!env.root.join("teams").exists());
}

/// `create --file` of `text` (in a folder `team/` of the test's dir, beside `extra` files made
/// by `setup`), with `args`, ended after 20 s whatever it does: exit code and stderr.
fn create_from(env: &TestEnv, text: &str, args: &[&str]) -> (Option<i32>, String) {
    let file = env.dir.path().join("team/t.toml");
    fs::write(&file, text).unwrap();
    let out = env
        .cmd()
        .args(["create", "--launch", "none"])
        .args(args)
        .arg("--file")
        .arg(&file)
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// What a team file names is read only inside its folder, only when it is a regular file of at
/// most 1 MiB: `/proc/self/environ` (the environment, tokens and all), `..`, a link out, a FIFO
/// (which hung even `--dry-run`), a folder and a huge file are refused in one line, nothing
/// written; an absolute path the person gives on the command line is taken.
#[test]
fn a_team_file_names_only_small_regular_files_in_its_folder() {
    let env = TestEnv::new();
    let dir = env.dir.path().join("team");
    fs::create_dir_all(dir.join("briefs")).unwrap();
    fs::write(env.dir.path().join("secret.md"), "TOKEN=s3cr3t").unwrap();
    std::os::unix::fs::symlink(env.dir.path().join("secret.md"), dir.join("out.md")).unwrap();
    crate::common::mkfifo(dir.join("fifo.md"));
    fs::write(dir.join("huge.md"), vec![b'x'; 1024 * 1024 + 1]).unwrap();
    fs::write(dir.join("briefs/ok.md"), "Review it\n").unwrap();
    let brief =
        |f: &str| format!("name = \"t\"\n[[member]]\nname = \"alice\"\nbrief_file = \"{f}\"\n");
    for (f, want) in [
        ("/proc/self/environ", "is an absolute path"),
        ("../secret.md", "leads outside the team file's folder"),
        ("out.md", "leads outside the team file's folder"),
        ("fifo.md", "fifo.md"),
        ("briefs", "briefs"),
        ("huge.md", "larger than 1024 KiB"),
    ] {
        let (code, stderr) = create_from(&env, &brief(f), &["--dry-run"]);
        assert!(matches!(code, Some(1 | 2)), "{f}: {code:?} {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(want),
            "{f}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(!stderr.contains("s3cr3t"), "{stderr}");
    }
    let policy = |p: &str| {
        format!("name = \"t\"\npolicy = \"{p}\"\n[[member]]\nname = \"alice\"\nbrief = \"b\"\n")
    };
    for (p, want) in [
        ("/etc/passwd", "is an absolute path"),
        ("fifo.md", "fifo.md"),
        ("huge.md", "larger than 1024 KiB"),
    ] {
        let (code, stderr) = create_from(&env, &policy(p), &[]);
        assert!(matches!(code, Some(1 | 2)), "{p}: {code:?} {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(want),
            "{p}: {stderr}"
        );
    }
    // Named on the command line, a FIFO is refused too, without hanging.
    let (code, stderr) = create_from(
        &env,
        &brief("briefs/ok.md"),
        &["--policy", &dir.join("fifo.md").to_string_lossy()],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(!env.root.join("teams").exists());
    // A brief inside the folder, and a link inside it to a file inside it, are read.
    std::os::unix::fs::symlink("briefs/ok.md", dir.join("in.md")).unwrap();
    let (code, stderr) = create_from(&env, &brief("in.md"), &[]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// A symlink at the data dir's `worktrees` is not followed: `create` refuses, and nothing is
/// made where it points.
#[test]
fn worktrees_are_never_made_through_a_link_in_the_data_dir() {
    let env = TestEnv::new();
    let repo = env.dir.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join("notes.md"), "base\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let elsewhere = env.dir.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::create_dir_all(env.data_dir()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, env.data_dir().join("worktrees")).unwrap();
    let file = write(
        &env,
        "wt.toml",
        "name = \"wt\"\ncwd = \"repo\"\n[[member]]\nname = \"alice\"\nbrief = \"a\"\nworktree = true\n",
    );
    let out = env
        .cmd()
        .args(["create", "--launch", "none", "--file"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("worktrees"), "{stderr}");
    assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert!(!env.root.join("teams/wt").exists());
}

/// A `create` that loses the race for its tmux session (another create made `teamctl-<team>`
/// on the shared server between its check and its start; here the repository's smudge filter
/// does it at that moment, as its worktree is checked out) fails without killing the winner's
/// session, and records none: a `delete` of the loser leaves the winner running too.
#[test]
fn a_create_that_loses_the_race_for_its_session_leaves_the_winner_alone() {
    let Some((env, _server)) = crate::common::tmux_env() else {
        return;
    };
    let repo = env.dir.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join("notes.md"), "base\n").unwrap();
    fs::write(repo.join(".gitattributes"), "notes.md filter=race\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    // The repository's own filter (there before the team: it runs) checks notes.md out.
    let smudge = crate::common::script(
        &env,
        "smudge",
        "tmux new-session -d -s teamctl-wt 'exec sleep 600' 2>/dev/null\ncat",
    );
    git(
        &repo,
        &["config", "filter.race.smudge", smudge.to_str().unwrap()],
    );
    let file = write(
        &env,
        "wt.toml",
        "name = \"wt\"\ncwd = \"repo\"\n[[member]]\nname = \"alice\"\nbrief = \"a\"\nworktree = true\n",
    );
    let out = env
        .cmd()
        .args(["create", "--json", "--timeout", "10s", "--file"])
        .arg(&file)
        .env("TEAMCTL_CLAUDE_BIN", crate::common::fake_claude())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(v["state"], "failed", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("duplicate session"),
        "{v}"
    );
    let winner = |env: &TestEnv| {
        let o = env
            .command("tmux")
            .args([
                "list-panes",
                "-s",
                "-t",
                "=teamctl-wt",
                "-F",
                "#{pane_dead}",
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!(winner(&env), "0\n", "the winner's session was ended");
    env.cmd()
        .args(["delete", "wt", "--force", "--timeout", "5s"])
        .output()
        .unwrap();
    assert_eq!(
        winner(&env),
        "0\n",
        "delete ended a session its create did not make"
    );
}

/// `delete` never loses a worktree's git-ignored files without being told: a worktree holding
/// some is kept and they are named (git would remove them without a word), and `--force`
/// removes it with them.
#[test]
fn delete_keeps_a_worktree_with_ignored_files_unless_forced() {
    let env = TestEnv::new();
    let repo = env.dir.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join(".gitignore"), "*.log\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let mut trees = Vec::new();
    for team in ["wt-a", "wt-b"] {
        let file = write(
            &env,
            &format!("{team}.toml"),
            &format!(
                "name = \"{team}\"\ncwd = \"repo\"\n[[member]]\nname = \"alice\"\nbrief = \"a\"\nworktree = true\n"
            ),
        );
        env.cmd()
            .args(["create", "--launch", "none", "--file"])
            .arg(&file)
            .assert()
            .success();
        let cfg = parse(&fs::read(env.root.join(format!("teams/{team}/config.json"))).unwrap());
        let tree = PathBuf::from(cfg["members"][1]["cwd"].as_str().unwrap());
        fs::write(tree.join("findings.log"), "three days of notes").unwrap();
        trees.push(tree);
    }
    let out = env
        .cmd()
        .args(["delete", "wt-a", "--json", "--timeout", "1s"])
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    let w = &v["worktrees"][0];
    assert_eq!(w["action"], "kept", "{v}");
    assert!(
        w["reason"]
            .as_str()
            .unwrap()
            .contains("1 git-ignored file(s), e.g. findings.log"),
        "{v}"
    );
    assert_eq!(
        fs::read_to_string(trees[0].join("findings.log")).unwrap(),
        "three days of notes"
    );
    let out = env
        .cmd()
        .args(["delete", "wt-b", "--force", "--json", "--timeout", "1s"])
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    assert_eq!(v["worktrees"][0]["action"], "removed", "{v}");
    assert!(!trees[1].exists());
}

/// `delete` removes a worktree only where teamctl made it: with a link planted at the data
/// dir's `worktrees` (here to the real folder, moved aside), the worktree is kept and named.
#[test]
fn delete_never_removes_a_worktree_through_a_link_in_the_data_dir() {
    let env = TestEnv::new();
    let repo = env.dir.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join("notes.md"), "base\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    let file = write(
        &env,
        "wt.toml",
        "name = \"wt\"\ncwd = \"repo\"\n[[member]]\nname = \"alice\"\nbrief = \"a\"\nworktree = true\n",
    );
    env.cmd()
        .args(["create", "--launch", "none", "--file"])
        .arg(&file)
        .assert()
        .success();
    let (link, aside) = (
        env.data_dir().join("worktrees"),
        env.dir.path().join("aside"),
    );
    fs::rename(&link, &aside).unwrap();
    std::os::unix::fs::symlink(&aside, &link).unwrap();
    let out = env
        .cmd()
        .args(["delete", "wt", "--json", "--timeout", "1s"])
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    let w = &v["worktrees"][0];
    assert_eq!(w["action"], "kept", "{v}");
    assert!(
        w["reason"]
            .as_str()
            .unwrap()
            .contains("reached through a link"),
        "{v}"
    );
    let kept: Vec<_> = fs::read_dir(&aside).unwrap().collect();
    assert_eq!(kept.len(), 1);
    let tree = kept[0].as_ref().unwrap().path().join("alice");
    assert!(tree.join("notes.md").exists(), "{}", tree.display());
}
