//! `create --sandbox` (docs/sandbox.md): each promise of a teammate's sandbox, tried from
//! inside by a stand-in teammate (tests/fixtures/sandbox-try, which reports what went and what
//! was refused); git inside (a clone of its own, whose commits `diff` and `delete` bring
//! home); the engine missing or blocked (exit 2, nothing written); what `status` shows.

use std::collections::BTreeMap;
use std::fs;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{
    TestEnv, TmuxServer, bwrap_works, git, json, json_lines, member, sandbox_report, sandbox_try,
    script, tmux_env,
};

/// A test env with its tmux server, a repository `work` (branch main, one commit) and a
/// secret in `~/.ssh`; `None` (a skip) without tmux or a working bubblewrap.
fn world() -> Option<(TestEnv, TmuxServer, PathBuf)> {
    let (env, server) = tmux_env()?;
    if !bwrap_works() {
        return None;
    }
    let repo = env.dir.path().join("work");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    fs::write(repo.join("README"), "hello\n").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-q", "-m", "start"]);
    let home = env.dir.path().join("home");
    fs::create_dir_all(home.join(".ssh")).unwrap();
    fs::write(home.join(".ssh/id_test"), "SECRET\n").unwrap();
    fs::write(env.root.join("settings.json"), "{}").unwrap();
    fs::write(env.root.join(".claude.json"), "{\"mine\":1}").unwrap();
    fs::create_dir_all(env.root.join("teams/other/inboxes")).unwrap();
    Some((env, server, repo.canonicalize().unwrap()))
}

/// What the stand-in tries on, and the listeners it tries to reach.
struct Targets {
    unix: UnixListener,
    tcp: TcpListener,
    tmp_name: String,
}

/// Writes `~/sandbox-targets` for a teammate of `team` (plus `more`).
fn targets(env: &TestEnv, team: &str, more: &[(&str, String)]) -> Targets {
    let home = env.dir.path().join("home");
    let unix = UnixListener::bind(home.join("agent.sock")).unwrap();
    unix.set_nonblocking(true).unwrap();
    let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let tmp_name = format!("teamctl-sandbox-try-{}", std::process::id());
    let t = |p: &Path| p.to_string_lossy().into_owned();
    let mut lines: Vec<(&str, String)> = vec![
        ("team", t(&env.root.join("teams").join(team))),
        ("tasks", t(&env.root.join("tasks").join(team))),
        ("tmp_name", tmp_name.clone()),
        ("other_team", t(&env.root.join("teams/other/inboxes"))),
        ("data_dir", t(&env.data_dir())),
        ("outside_pid", std::process::id().to_string()),
        ("outside_comm", "it-".into()),
        (
            "tmux_socket",
            t(&env
                .dir
                .path()
                .join(format!("tmux-{}/default", rustix_uid()))),
        ),
        ("pane", "%0".into()),
        ("unix_socket", t(&home.join("agent.sock"))),
        ("tcp_port", tcp.local_addr().unwrap().port().to_string()),
    ];
    lines.extend(more.iter().cloned());
    let text: String = lines.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    fs::write(home.join("sandbox-targets"), text).unwrap();
    Targets {
        unix,
        tcp,
        tmp_name,
    }
}

fn rustix_uid() -> u32 {
    // SAFETY: getuid never fails.
    unsafe { libc::getuid() }
}

/// The stand-in where a user's `claude` can be, below the `/tmp` the sandbox makes private:
/// `<bin>/claude`, a link (as npm's `.bin`) to a copy in `claude-pkg/`, in the test's temp
/// folder. The session must still find it, and its folder's other files.
fn stand_in_below_tmp(env: &TestEnv, bin: &str) -> PathBuf {
    let (bin, pkg) = (env.dir.path().join(bin), env.dir.path().join("claude-pkg"));
    let fixtures = sandbox_try().parent().unwrap().to_path_buf();
    fs::create_dir_all(&pkg).unwrap();
    fs::create_dir_all(&bin).unwrap();
    for (name, link) in [("sandbox-try", "claude"), ("fake-claude", "fake-claude")] {
        if !pkg.join(name).exists() {
            fs::copy(fixtures.join(name), pkg.join(name)).unwrap();
        }
        if !bin.join(link).exists() {
            std::os::unix::fs::symlink(Path::new("../claude-pkg").join(name), bin.join(link))
                .unwrap();
        }
    }
    bin.join("claude")
}

/// `teamctl --json create <args> --claude-bin sandbox-try` ([`stand_in_below_tmp`]): the
/// result line, asserted ready.
fn create(env: &TestEnv, args: &[&str]) -> Value {
    let out = env
        .cmd()
        .args(["--json", "create", "--timeout", "20s"])
        .args(args)
        .arg("--claude-bin")
        .arg(stand_in_below_tmp(env, "claude-bin"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let r = json_lines(&out).pop().unwrap();
    assert_eq!(r["state"], "ready", "{r}");
    r
}

/// What the stand-in must have found: each try of `want` gone (`ok`) or refused.
fn assert_tries(report: &BTreeMap<String, String>, want: &[(&str, &str)]) {
    let wrong: Vec<String> = want
        .iter()
        .filter(|(k, v)| report.get(*k).map(String::as_str) != Some(v))
        .map(|(k, v)| format!("{k}: want {v}, got {:?}", report.get(*k)))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}\nreport: {report:#?}");
}

/// Nothing the stand-in tried reached the listeners but TCP (`tcp`: whether it should have).
fn assert_unreached(t: &Targets, tcp: bool) {
    assert_eq!(
        t.unix.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(ErrorKind::WouldBlock),
        "a Unix socket outside was reached from the sandbox"
    );
    assert_eq!(
        t.tcp.accept().is_ok(),
        tcp,
        "TCP on 127.0.0.1 reached: {}",
        !tcp
    );
    assert!(
        !Path::new("/tmp").join(&t.tmp_name).exists(),
        "the sandbox's /tmp is the machine's"
    );
}

const ALWAYS: [(&str, &str); 18] = [
    ("write_cwd", "ok"),
    ("write_team", "ok"),
    ("write_tasks", "ok"),
    ("write_tmp", "ok"),
    ("write_claude_json", "ok"),
    ("write_home", "refused"),
    ("write_usr", "refused"),
    ("write_settings", "refused"),
    ("write_config_dir", "ok"),
    ("write_other_team", "refused"),
    ("write_data_dir", "refused"),
    ("read_ssh", "refused"),
    ("see_tmux", "refused"),
    ("see_outside", "refused"),
    ("no_caps", "ok"),
    ("no_new_privs", "ok"),
    ("tmux_send", "refused"),
    ("unix_connect", "refused"),
];

#[test]
fn a_sandboxed_teammate_in_its_clone_does_its_work_and_nothing_else() {
    let Some((env, _server, repo)) = world() else {
        return;
    };
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let object = repo.join(format!(".git/objects/{}/{}", &head[..2], &head[2..]));
    let t = |p: &Path| p.to_string_lossy().into_owned();
    let targets = targets(
        &env,
        "sb",
        &[
            ("checkout", t(&repo)),
            ("git_dir", t(&repo.join(".git"))),
            ("object", t(&object)),
        ],
    );
    let cwd = t(&repo);
    let r = create(
        &env,
        &[
            "sb",
            "--member",
            "alice:Hello",
            "--sandbox",
            "--worktree",
            "--cwd",
            &cwd,
        ],
    );
    let sandbox = &r["members"][0]["sandbox"];
    let clone = PathBuf::from(sandbox["writable"][0].as_str().unwrap());
    assert!(
        clone.starts_with(env.data_dir().join("worktrees")),
        "{sandbox}"
    );
    let mut want = ALWAYS.to_vec();
    want.extend([
        ("write_checkout", "refused"),
        ("write_repo_git_config", "refused"),
        ("write_repo_hooks", "refused"),
        ("delete_main", "refused"),
        ("delete_object", "refused"),
        ("push_main", "refused"),
        ("write_own_git_config", "refused"),
        ("write_own_hooks", "refused"),
        ("write_own_commondir", "refused"),
        ("move_own_git", "refused"),
        ("commit_own", "ok"),
        ("tcp_connect", "ok"),
    ]);
    assert_tries(&sandbox_report(&clone), &want);
    assert_unreached(&targets, true);
    assert_eq!(
        fs::read_to_string(env.root.join(".claude.json")).unwrap(),
        "{\"mine\":1}",
        "the private .claude.json reached the person's"
    );
    assert!(object.exists(), "a shared object was deleted");
    assert_eq!(git(&repo, &["rev-parse", "main"]), head, "main moved");
    seen_and_brought_home(&env, &repo, &clone, sandbox);
}

/// `status --json` shows the sandbox as create did; `diff` brings the commit made inside home
/// (the branch in the repository); `delete` keeps the clone that holds untracked work.
fn seen_and_brought_home(env: &TestEnv, repo: &Path, clone: &Path, sandbox: &Value) {
    let s = json(
        &env.cmd()
            .args(["--json", "status", "--team", "sb"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let shown = &member(&s, "alice")["sandbox"];
    assert_eq!(shown, sandbox);
    let keys: Vec<&str> = shown
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["engine", "writable", "hidden", "network"]);
    assert_eq!(shown["engine"], "bwrap");
    assert_eq!(shown["network"], "on");
    let home = env.dir.path().join("home");
    assert!(
        shown["hidden"]
            .as_array()
            .unwrap()
            .contains(&json!(home.join(".ssh")))
    );
    let d = json(
        &env.cmd()
            .args(["--json", "diff", "--team", "sb"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    let alice = &d["members"][0];
    assert_eq!(alice["commits"], 1, "{d}");
    assert_eq!(alice["files"][0]["path"], "sandbox-work.txt", "{d}");
    assert_eq!(
        git(repo, &["log", "-1", "--format=%s", "teamctl/sb/alice"]),
        "work from inside"
    );
    let out = env
        .cmd()
        .args(["--json", "delete", "sb", "--timeout", "10s"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let del = json_lines(&out).pop().unwrap();
    let w = &del["worktrees"][0];
    assert_eq!(w["action"], "kept", "{del}");
    assert!(
        w["reason"].as_str().unwrap().contains("sandbox-report"),
        "{del}"
    );
    assert!(clone.is_dir());
}

#[test]
fn in_the_checkout_itself_its_git_stays_read_only() {
    let Some((env, _server, repo)) = world() else {
        return;
    };
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let object = repo.join(format!(".git/objects/{}/{}", &head[..2], &head[2..]));
    let t = |p: &Path| p.to_string_lossy().into_owned();
    let targets = targets(
        &env,
        "sc",
        &[("git_dir", t(&repo.join(".git"))), ("object", t(&object))],
    );
    let cwd = t(&repo);
    let r = create(
        &env,
        &["sc", "--member", "bob:Hi", "--sandbox", "--cwd", &cwd],
    );
    assert_eq!(r["members"][0]["sandbox"]["writable"][0], json!(cwd));
    let mut want = ALWAYS.to_vec();
    want.extend([
        ("write_repo_git_config", "refused"),
        ("write_repo_hooks", "refused"),
        ("delete_main", "refused"),
        ("delete_object", "refused"),
        ("tcp_connect", "ok"),
    ]);
    assert_tries(&sandbox_report(&repo), &want);
    assert_unreached(&targets, true);
    // Alive to tmux and to status.
    let s = json(
        &env.cmd()
            .args(["--json", "status", "--team", "sc"])
            .assert()
            .success()
            .get_output()
            .stdout,
    );
    assert_eq!(member(&s, "bob")["process_alive"], true, "{s}");
}

#[test]
fn a_team_file_cuts_the_network_and_hides_and_gives_more() {
    let Some((env, _server, repo)) = world() else {
        return;
    };
    let home = env.dir.path().join("home");
    fs::create_dir_all(home.join("vault")).unwrap();
    fs::write(home.join("vault/key"), "K").unwrap();
    let extra = env.dir.path().join("out");
    fs::create_dir_all(&extra).unwrap();
    let t = |p: &Path| p.to_string_lossy().into_owned();
    let targets = targets(
        &env,
        "sf",
        &[("hidden", t(&home.join("vault/key"))), ("extra", t(&extra))],
    );
    let file = env.dir.path().join("team.toml");
    fs::write(
        &file,
        format!(
            "name = \"sf\"\ncwd = \"{}\"\nsandbox = true\nsandbox_network = \"off\"\n\
             sandbox_hide = [\"~/vault\"]\n[[member]]\nname = \"carol\"\nbrief = \"b\"\n\
             sandbox_write = [\"out\"]\n",
            repo.display()
        ),
    )
    .unwrap();
    let r = create(&env, &["--file", &t(&file)]);
    let s = &r["members"][0]["sandbox"];
    assert_eq!(s["network"], "off");
    assert!(
        s["writable"]
            .as_array()
            .unwrap()
            .contains(&json!(t(&extra))),
        "{s}"
    );
    assert!(
        s["hidden"]
            .as_array()
            .unwrap()
            .contains(&json!(t(&home.join("vault")))),
        "{s}"
    );
    let mut want = ALWAYS.to_vec();
    want.extend([
        ("read_hidden", "refused"),
        ("write_extra", "ok"),
        ("tcp_connect", "refused"),
    ]);
    assert_tries(&sandbox_report(&repo), &want);
    assert_unreached(&targets, false);
}

#[test]
fn a_restart_confines_it_again() {
    let Some((env, server, repo)) = world() else {
        return;
    };
    let _listening = targets(&env, "sr", &[]);
    let cwd = repo.to_string_lossy().into_owned();
    create(
        &env,
        &["sr", "--member", "dan:Hi", "--sandbox", "--cwd", &cwd],
    );
    server.kill();
    fs::remove_file(repo.join("sandbox-report")).unwrap();
    env.cmd()
        .args(["resume", "sr"])
        // Another folder than create's: the one a restart runs from is visible too.
        .env("TEAMCTL_CLAUDE_BIN", stand_in_below_tmp(&env, "claude-bin-2"))
        .assert()
        .success();
    assert!(
        crate::common::wait_until(std::time::Duration::from_secs(10), || {
            repo.join("sandbox-report").exists()
        }),
        "the teammate was not started again"
    );
    let mut want = ALWAYS.to_vec();
    want.push(("tcp_connect", "ok"));
    assert_tries(&sandbox_report(&repo), &want);
    let panes = std::process::Command::new("tmux")
        .args(["list-panes", "-a", "-F", "#{pane_start_command}"])
        .env("TMUX_TMPDIR", env.dir.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&panes.stdout).contains("bwrap"));
}

#[test]
fn a_missing_or_blocked_engine_is_exit_2_and_writes_nothing() {
    let Some((env, _server)) = tmux_env() else {
        return;
    };
    let blocked = script(
        &env,
        "bwrap",
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
    );
    for (bin, said) in [
        (
            PathBuf::from("/nonexistent/bwrap"),
            "TEAMCTL_BWRAP_BIN names",
        ),
        (blocked, "setting up uid map: Permission denied"),
    ] {
        env.cmd()
            .args(["create", "sx", "--member", "a:b", "--sandbox"])
            .arg("--claude-bin")
            .arg(sandbox_try())
            .env("TEAMCTL_BWRAP_BIN", &bin)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("error: ").and(predicate::str::contains(said)));
        assert!(!env.root.join("teams/sx").exists(), "a team was written");
    }
    // Provisioned only, a teammate would later start unconfined.
    env.cmd()
        .args([
            "create",
            "sx",
            "--member",
            "a:b",
            "--sandbox",
            "--launch",
            "none",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("drop --launch none"));
    assert!(!env.root.join("teams/sx").exists(), "a team was written");
    // No bwrap on PATH (only tmux there): the fix is named.
    let bin = env.dir.path().join("bin");
    fs::create_dir_all(&bin).unwrap();
    let tmux = which::which("tmux").unwrap();
    std::os::unix::fs::symlink(tmux, bin.join("tmux")).unwrap();
    env.cmd()
        .args(["create", "sx", "--member", "a:b", "--sandbox"])
        .arg("--claude-bin")
        .arg(sandbox_try())
        .env("PATH", &bin)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("apt-get install bubblewrap"));
}

#[test]
fn run_sandbox_puts_the_lead_s_tmux_server_in_one_sandbox() {
    let Some((env, _server, repo)) = world() else {
        return;
    };
    let t = |p: &Path| p.to_string_lossy().into_owned();
    let cj = json!({"hasCompletedOnboarding": true, "theme": "dark",
        "projects": {t(&repo): {"hasTrustDialogAccepted": true}}});
    fs::write(env.root.join(".claude.json"), cj.to_string()).unwrap();
    let _listening = targets(&env, "none", &[("git_dir", t(&repo.join(".git")))]);
    // The stub lead in the home directory: the private /tmp hides the test's temp dir.
    let lead = env.dir.path().join("home/stub-lead");
    fs::write(&lead, format!("#!/bin/sh\n{}\n", crate::run::STUB_LEAD)).unwrap();
    fs::set_permissions(&lead, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let record = env.dir.path().join("record");
    let out = env
        .cmd()
        .env("TEAMCTL_CLAUDE_BIN", sandbox_try())
        .env("SANDBOX_TRY_THEN", &lead)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("IS_SANDBOX")
        .envs(crate::secrets::SECRETS)
        .args([
            "--json",
            "run",
            "--sandbox",
            "--timeout",
            "20s",
            "--cwd",
            &t(&repo),
        ])
        .arg("--export")
        .arg(&record)
        .arg("hello")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(json_lines(&out).pop().unwrap()["state"], "done");
    assert_tries(
        &sandbox_report(&repo),
        &[
            ("write_cwd", "ok"),
            ("write_tmp", "ok"),
            ("write_repo_git_config", "refused"),
            ("write_repo_hooks", "refused"),
            ("write_home", "refused"),
            ("write_usr", "refused"),
            ("write_settings", "refused"),
            ("read_ssh", "refused"),
            ("no_caps", "ok"),
            ("no_new_privs", "ok"),
            ("tmux_send", "refused"),
            ("own_tmux", "ok"),
            // teamctl's secrets reach neither the lead nor its sandbox's tmux server.
            ("teamctl_secrets", "none"),
            ("tmux_secrets", "none"),
        ],
    );
    let summary = json(&fs::read(record.join("summary.json")).unwrap());
    for m in summary["status"]["members"].as_array().unwrap() {
        assert_eq!(m["sandbox"]["engine"], "bwrap", "{m}");
        assert_eq!(m["sandbox"]["writable"][0], json!(t(&repo)), "{m}");
    }
    let md = fs::read_to_string(record.join("report.md")).unwrap();
    assert!(
        md.contains("### Sandboxes\n\n**team\\-lead**: bwrap, network on; writes `"),
        "{md}"
    );
    let html = fs::read_to_string(record.join("report.html")).unwrap();
    assert!(html.contains("<h2>Sandboxes</h2>\n<p><strong>team-lead</strong>: bwrap"));
    // The sandbox's tmux server ended with the run.
    let dir = env.data_dir().join("sandbox/run-default");
    let ls = std::process::Command::new("tmux")
        .arg("list-sessions")
        .env("TMUX_TMPDIR", &dir)
        .env_remove("TMUX")
        .output()
        .unwrap();
    assert!(!ls.status.success(), "the sandbox's tmux server still runs");
}
