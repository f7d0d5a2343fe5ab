//! Each teammate's own runtime from a team file (docs/team-file.md, "Runtime"): `mcp_config`,
//! `strict_mcp_config`, `settings`, `effort` and `env` reach the one teammate that names them
//! (the stand-in teammate records its argv, and a checksum of each `TEAMMATE_*` variable it
//! got); a `${NAME}` value is written nowhere and shown on no command line; an unset NAME stops
//! a create before anything starts and a restart before its pane is touched; a client without a
//! flag is refused, naming its version.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use predicates::prelude::*;
use serde_json::Value;

use crate::common::{TestEnv, fake_claude, json as parse, member, tmux_env, wait_until};

/// The secret `${RT_TOKEN}` takes: quotes, a `$`, a backslash and a newline around a marker
/// that no escaping changes.
const MARKER: &str = "rtsecret7f3a9c";

fn secret() -> String {
    format!("it's \"{MARKER}\" $HOME \\ ;\nline2")
}

const TEAM: &str = r#"name = "rt"
effort = "high"
env = { TEAMMATE_LOG = "debug" }
[[member]]
name = "alice"
brief = "Review it"
mcp_config = ["mcp.json"]
strict_mcp_config = true
settings = "settings.json"
effort = "low"
env = { TEAMMATE_TOKEN = "${RT_TOKEN}" }
[[member]]
name = "bob"
brief = "Test it"
"#;

/// The team file and the files it names, in the test's folder.
fn team_file(env: &TestEnv) -> PathBuf {
    let dir = env.dir.path();
    fs::write(dir.join("mcp.json"), r#"{"mcpServers":{}}"#).unwrap();
    fs::write(dir.join("settings.json"), "{}").unwrap();
    let p = dir.join("team.toml");
    fs::write(&p, TEAM).unwrap();
    p
}

/// A `tmux` that writes every command line it is given to `tmux-argv.log`, then runs tmux.
fn tmux_recorder(env: &TestEnv) -> (String, PathBuf) {
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v tmux"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let bin = env.dir.path().join("shim");
    fs::create_dir_all(&bin).unwrap();
    let log = env.dir.path().join("tmux-argv.log");
    let shim = bin.join("tmux");
    fs::write(
        &shim,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.trim()
        ),
    )
    .unwrap();
    fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (path, log)
}

/// `cksum`'s checksum of `s`, as the stand-in teammate writes it.
fn cksum(s: &str) -> String {
    let mut child = Command::new("cksum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// What the stand-in `name` recorded: its argv, and its `TEAMMATE_*` variables' checksums.
fn seen(env: &TestEnv, name: &str) -> (Vec<String>, String) {
    let argv = fs::read_to_string(env.root.join(format!("fake-argv-{name}"))).unwrap();
    let hashes = env.root.join(format!("fake-env-hash-{name}"));
    let hashes = fs::read_to_string(hashes).unwrap_or_default();
    (argv.lines().map(String::from).collect(), hashes)
}

fn create(env: &TestEnv, file: &Path, path: &str) -> assert_cmd::assert::Assert {
    env.cmd()
        .args(["create", "--timeout", "20s", "--file"])
        .arg(file)
        .env("TEAMCTL_CLAUDE_BIN", fake_claude())
        .env("RT_TOKEN", secret())
        .env("PATH", path)
        .assert()
}

/// Every file below `dir` whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            out.extend(files_holding(&p, needle));
        } else if t.is_file()
            && fs::read(&p).is_ok_and(|b| String::from_utf8_lossy(&b).contains(needle))
        {
            out.push(p);
        }
    }
    out
}

#[test]
fn runtime_reaches_the_one_teammate_and_its_secret_is_written_nowhere() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let file = team_file(&env);
    let (path, tmux_log) = tmux_recorder(&env);
    create(&env, &file, &path).success();
    let dir = fs::canonicalize(env.dir.path()).unwrap();
    let at = |f: &str| dir.join(f).to_string_lossy().into_owned();
    let (argv, hashes) = seen(&env, "alice");
    let tail = argv[argv.len() - 7..].to_vec();
    assert_eq!(
        tail,
        [
            "--mcp-config",
            &at("mcp.json"),
            "--strict-mcp-config",
            "--settings",
            &at("settings.json"),
            "--effort",
            "low"
        ],
        "{argv:?}"
    );
    assert_eq!(
        hashes,
        format!(
            "TEAMMATE_LOG={}\nTEAMMATE_TOKEN={}\n",
            cksum("debug"),
            cksum(&secret())
        )
    );
    // bob has the team's effort and env, and nothing of alice's.
    let (argv, hashes) = seen(&env, "bob");
    assert_eq!(argv[argv.len() - 2..], ["--effort", "high"], "{argv:?}");
    assert!(!argv.iter().any(|a| a.contains("mcp") || a == "--settings"));
    assert_eq!(hashes, format!("TEAMMATE_LOG={}\n", cksum("debug")));

    the_secret_is_nowhere(&env, &tmux_log);
    // teamctl's record keeps the name, for a restart to read again.
    let rec = fs::read_dir(env.data_dir().join("leads"))
        .unwrap()
        .flatten()
        .next()
        .unwrap();
    let rec: Value = serde_json::from_slice(&fs::read(rec.path()).unwrap()).unwrap();
    let alice = &rec["launch"]["members"][0]["runtime"];
    assert_eq!(alice["env"]["TEAMMATE_TOKEN"], "${RT_TOKEN}");
    assert_eq!(alice["effort"], "low");
    assert_eq!(alice["mcp_config"][0], at("mcp.json"));
}

/// The secret is in no file of the config dir, the data dir or an export, in neither tmux
/// environment, on no command line tmux was given and in no process's argv.
fn the_secret_is_nowhere(env: &TestEnv, tmux_log: &Path) {
    let record = env.dir.path().join("record");
    env.cmd()
        .args(["--team", "rt", "export", "--out"])
        .arg(&record)
        .assert()
        .success();
    for dir in [&env.root, &env.data_dir(), &record] {
        assert_eq!(files_holding(dir, MARKER), Vec::<PathBuf>::new());
    }
    let log = fs::read_to_string(tmux_log).unwrap();
    assert!(!log.contains(MARKER), "{log}");
    assert!(log.contains("source-file"), "{log}");
    for args in [
        &["show-environment", "-g"][..],
        &["show-environment", "-t", "teamctl-rt"],
    ] {
        let out = env.command("tmux").args(args).output().unwrap();
        assert!(out.status.success());
        assert!(!String::from_utf8_lossy(&out.stdout).contains(MARKER));
    }
    #[cfg(target_os = "linux")]
    for e in fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = fs::read(e.path().join("cmdline")) {
            assert!(
                !String::from_utf8_lossy(&cmdline).contains(MARKER),
                "{}: {}",
                e.path().display(),
                String::from_utf8_lossy(&cmdline)
            );
        }
    }
}

#[test]
fn an_unset_name_stops_a_create_before_anything_starts() {
    let env = TestEnv::new();
    let file = team_file(&env);
    for launch in ["tmux", "none"] {
        env.cmd()
            .args(["create", "--launch", launch, "--file"])
            .arg(&file)
            .env("TEAMCTL_CLAUDE_BIN", fake_claude())
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "error: member 'alice': env TEAMMATE_TOKEN = \"${RT_TOKEN}\", and RT_TOKEN is \
                 not set in teamctl's environment: set it, or remove TEAMMATE_TOKEN",
            ));
    }
    assert!(!env.root.join("teams").exists());
    // teamctl's own secrets are refused, set or not.
    fs::write(
        env.dir.path().join("team.toml"),
        TEAM.replace("RT_TOKEN", "TEAMCTL_SLACK_TOKEN"),
    )
    .unwrap();
    env.cmd()
        .args(["create", "--launch", "none", "--file"])
        .arg(&file)
        .env("TEAMCTL_SLACK_TOKEN", "xoxb-1")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "team.toml:11:26: alice: env TEAMMATE_TOKEN: \"${TEAMCTL_SLACK_TOKEN}\": \
             TEAMCTL_SLACK_TOKEN is one of teamctl's own secrets",
        ));
}

#[test]
fn a_restart_takes_the_env_again_and_fails_without_it() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let file = team_file(&env);
    let path = std::env::var("PATH").unwrap_or_default();
    create(&env, &file, &path).success();
    let resume = |secret: Option<&str>| {
        let kill = env
            .command("tmux")
            .args(["kill-window", "-t", "=teamctl-rt:alice"])
            .status()
            .unwrap();
        assert!(kill.success());
        fs::remove_file(env.root.join("fake-env-hash-alice")).unwrap();
        let mut cmd = env.cmd();
        cmd.args(["resume", "rt", "--json"])
            .env("TEAMCTL_CLAUDE_BIN", fake_claude());
        if let Some(s) = secret {
            cmd.env("RT_TOKEN", s);
        }
        parse(&cmd.output().unwrap().stdout)
    };
    // Set again (to another value): alice gets it.
    let v = resume(Some("second value"));
    assert_eq!(member(&v, "alice")["action"], "resumed", "{v}");
    let hashes = env.root.join("fake-env-hash-alice");
    assert!(wait_until(Duration::from_secs(20), || {
        fs::read_to_string(&hashes).is_ok_and(|h| h.contains(&cksum("second value")))
    }));
    // Unset: the restart fails, naming it, and alice is not started.
    let v = resume(None);
    let alice = member(&v, "alice");
    assert_eq!(alice["action"], "failed", "{v}");
    assert_eq!(
        alice["detail"],
        "cannot start alice again: env TEAMMATE_TOKEN = \"${RT_TOKEN}\", and RT_TOKEN is not \
         set in teamctl's environment: set it, or remove TEAMMATE_TOKEN"
    );
    assert!(!hashes.exists());
    assert_eq!(member(&v, "bob")["action"], "running", "{v}");
}

#[test]
fn a_client_without_a_flag_is_refused_naming_its_version() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let file = team_file(&env);
    let old = env.dir.path().join("old-claude");
    fs::write(
        &old,
        format!(
            "#!/bin/sh\ncase \"$1\" in\n--version) echo '2.0.1 (Claude Code)' ;;\n\
             --help) printf 'Options:\\n  --mcp-config <configs...>  Load MCP servers\\n  \
             --strict-mcp-config  Only those\\n  --settings <file>  Settings\\n' ;;\n\
             *) exec '{}' \"$@\" ;;\nesac\n",
            fake_claude().display()
        ),
    )
    .unwrap();
    fs::set_permissions(&old, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.cmd()
        .args(["create", "--file"])
        .arg(&file)
        .env("TEAMCTL_CLAUDE_BIN", &old)
        .env("RT_TOKEN", "x")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "error: claude 2.0.1 (Claude Code) has no --effort (member 'alice', `effort` in the \
             team file): update Claude Code, or take the key out",
        ));
    assert!(!env.root.join("teams").exists());
}

#[test]
fn a_dry_run_shows_each_runtime_as_written() {
    let env = TestEnv::new();
    let file = team_file(&env);
    let out = env
        .cmd()
        .args(["--json", "create", "--dry-run", "--file"])
        .arg(&file)
        .env("RT_TOKEN", secret())
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
    assert!(!text.contains(MARKER), "{text}");
    let v = parse(text.as_bytes());
    let dir = fs::canonicalize(env.dir.path()).unwrap();
    assert_eq!(
        v["members"][0]["runtime"],
        serde_json::json!({
            "mcp_config": [dir.join("mcp.json")],
            "strict_mcp_config": true,
            "settings": dir.join("settings.json"),
            "effort": "low",
            "env": {"TEAMMATE_LOG": "debug", "TEAMMATE_TOKEN": "${RT_TOKEN}"}
        })
    );
    assert_eq!(
        v["members"][1]["runtime"],
        serde_json::json!({"effort": "high", "env": {"TEAMMATE_LOG": "debug"}})
    );
}

/// With `sandbox = true` (and a clone each), the env still reaches each teammate inside its
/// sandbox, exactly (bubblewrap hands the pane's environment on), and the value is on no
/// command line (bwrap's neither) and in no file; a key the sandbox sets or removes itself is
/// exit 2, since its value would not reach the teammate.
#[test]
fn the_env_reaches_a_sandboxed_teammate_too() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    if !crate::common::bwrap_works() {
        return;
    }
    let file = team_file(&env);
    let repo = env.dir.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    crate::common::git(&repo, &["init", "-q", "-b", "main"]);
    crate::common::commit(&repo, "README", "hello\n");
    let sandboxed = format!("sandbox = true\nworktree = true\ncwd = \"repo\"\n{TEAM}");
    fs::write(&file, &sandboxed).unwrap();
    let (path, tmux_log) = tmux_recorder(&env);
    let create = |env: &TestEnv| {
        let mut cmd = env.cmd();
        cmd.args(["create", "--timeout", "20s", "--file"])
            .arg(&file)
            .env("TEAMCTL_CLAUDE_BIN", crate::common::sandbox_try())
            .env("RT_TOKEN", secret())
            .env("PATH", &path);
        cmd.assert()
    };
    create(&env).success();
    let clones = fs::read_dir(env.data_dir().join("worktrees"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let report = |name: &str| crate::common::sandbox_report(&clones.join(name));
    let alice = report("alice");
    assert_eq!(alice["env_TEAMMATE_TOKEN"], cksum(&secret()), "{alice:?}");
    assert_eq!(alice["env_TEAMMATE_LOG"], cksum("debug"), "{alice:?}");
    let bob = report("bob");
    assert_eq!(bob["env_TEAMMATE_LOG"], cksum("debug"), "{bob:?}");
    assert!(!bob.contains_key("env_TEAMMATE_TOKEN"), "{bob:?}");
    let panes = env
        .command("tmux")
        .args(["list-panes", "-a", "-F", "#{pane_start_command}"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&panes.stdout).contains("bwrap"));
    the_secret_is_nowhere(&env, &tmux_log);

    let refused = sandboxed
        .replace("name = \"rt\"", "name = \"rt2\"")
        .replace("TEAMMATE_LOG = \"debug\"", "DOCKER_HOST = \"tcp://h:2375\"");
    fs::write(&file, refused).unwrap();
    create(&env).code(2).stderr(predicate::str::contains(
        "error: member 'alice': env DOCKER_HOST: its sandbox sets or removes DOCKER_HOST itself",
    ));
    assert!(!env.root.join("teams/rt2").exists(), "a team was written");
}
