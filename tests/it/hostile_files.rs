//! The team's own files as a hostile teammate would leave them: every file and folder teamctl
//! reads or writes replaced by a symlink to somewhere outside, a symlinked folder, a FIFO, a
//! socket, a folder where a file belongs, a huge value, a bad id or a planted key. Each command
//! that touches it must end (a deadline, then the child is killed and the test fails), never
//! panic, fail with one clear `error:` line when it fails, write nothing outside the config
//! dir (a canary folder is compared byte for byte), and leave the files as they were.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common::{TestEnv, TmuxServer, tmux_has_session, tmux_installed};

/// How long any command may take here (none waits for anything).
const DEADLINE: Duration = Duration::from_secs(20);

/// One node of a tree: what it is, and its bytes or link target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    File(Vec<u8>),
    Dir,
    Link(PathBuf),
    Fifo,
    Socket,
}

/// Everything under `root`, never following a symlink.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Node> {
    let mut out = BTreeMap::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(dir) = todo.pop() {
        let Ok(rd) = fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            let node = if t.is_symlink() {
                Node::Link(fs::read_link(&p).unwrap())
            } else if t.is_dir() {
                todo.push(p.clone());
                Node::Dir
            } else if t.is_fifo() {
                Node::Fifo
            } else if t.is_socket() {
                Node::Socket
            } else {
                Node::File(fs::read(&p).unwrap())
            };
            out.insert(p.strip_prefix(root).unwrap().to_path_buf(), node);
        }
    }
    out
}

/// The paths whose nodes differ between two snapshots (for a readable failure).
fn diff(a: &BTreeMap<PathBuf, Node>, b: &BTreeMap<PathBuf, Node>) -> Vec<PathBuf> {
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `teamctl args` (with `extra` env) and kills it at [`DEADLINE`].
fn run(env: &TestEnv, args: &[&str], extra: &[(&str, &Path)]) -> Ran {
    let mut cmd = env.std_cmd();
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let outs = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let errs = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let end = Instant::now() + DEADLINE;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() >= end {
            let _ = child.kill();
            let _ = child.wait();
            panic!("teamctl {args:?} hung (killed after {DEADLINE:?})");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Ran {
        code: status.code(),
        stdout: outs.join().unwrap(),
        stderr: errs.join().unwrap(),
    }
}

/// What a run must show.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Want {
    /// Exit 1 with one clear `error:` line, and every file as it was.
    Refused,
    /// Success or a clean refusal; the hostile node itself stays as it is either way.
    Either,
}

/// A team, a task list, a sent log and a canary folder outside everything.
struct World {
    env: TestEnv,
    canary: PathBuf,
    data: PathBuf,
}

fn world() -> World {
    let env = TestEnv::new();
    env.team("alpha", &[("alice", Some("blue")), ("bob", Some("green"))]);
    env.lead_by_teamctl("alpha");
    fs::write(env.inbox("alpha", "alice"), "[]").unwrap();
    fs::write(env.inbox("alpha", "team-lead"), "[]").unwrap();
    let tasks = env.root.join("tasks/alpha");
    fs::create_dir_all(&tasks).unwrap();
    let task = |id: &str, blocks: &[&str], blocked_by: &[&str]| {
        json!({"id": id, "subject": format!("task {id}"), "description": "d",
               "status": "pending", "blocks": blocks, "blockedBy": blocked_by})
    };
    fs::write(
        tasks.join("1.json"),
        serde_json::to_string_pretty(&task("1", &["2"], &[])).unwrap(),
    )
    .unwrap();
    fs::write(
        tasks.join("2.json"),
        serde_json::to_string_pretty(&task("2", &[], &["1"])).unwrap(),
    )
    .unwrap();
    fs::write(tasks.join(".highwatermark"), "2").unwrap();
    fs::write(tasks.join(".lock"), "").unwrap();
    let data = env.data_dir();
    fs::create_dir_all(&data).unwrap();
    fs::write(data.join("sent.jsonl"), "").unwrap();
    // Outside the config dir: what symlinks point at. Task-shaped, inbox-shaped, a folder.
    let canary = env.dir.path().join("canary");
    fs::create_dir_all(canary.join("dir/inboxes")).unwrap();
    fs::write(canary.join("file.json"), "[]").unwrap();
    fs::write(
        canary.join("victim.json"),
        serde_json::to_string_pretty(&task("victim", &["1"], &["1"])).unwrap(),
    )
    .unwrap();
    fs::write(canary.join("dir/inboxes/alice.json"), "[]").unwrap();
    fs::write(
        canary.join("dir/config.json"),
        fs::read(env.root.join("teams/alpha/config.json")).unwrap(),
    )
    .unwrap();
    World { env, canary, data }
}

/// What to plant at a path.
#[derive(Clone, Copy, Debug)]
enum Plant {
    /// A symlink to a file outside.
    LinkFile,
    /// A symlink to a folder outside.
    LinkDir,
    /// A symlink to a JSON object file outside (one a write would accept).
    LinkJson,
    /// A symlink to a file outside that does not exist (a write through it would make it).
    Dangling,
    Fifo,
    Socket,
    /// A folder where a file belongs.
    Folder,
    /// A regular file where a folder belongs.
    File,
}

fn plant(w: &World, rel: &str, how: Plant) -> PathBuf {
    let p = match rel.strip_prefix("DATA/") {
        Some(r) => w.data.join(r),
        None => w.env.root.join(rel),
    };
    match fs::symlink_metadata(&p) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(&p).unwrap(),
        Ok(_) => fs::remove_file(&p).unwrap(),
        Err(_) => {}
    }
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    match how {
        Plant::LinkFile => symlink(w.canary.join("file.json"), &p).unwrap(),
        Plant::LinkDir => symlink(w.canary.join("dir"), &p).unwrap(),
        Plant::LinkJson => symlink(w.canary.join("victim.json"), &p).unwrap(),
        Plant::Dangling => symlink(w.canary.join("new.json"), &p).unwrap(),
        Plant::Fifo => crate::common::mkfifo(&p),
        Plant::Socket => {
            std::os::unix::net::UnixListener::bind(&p).unwrap();
        }
        Plant::Folder => fs::create_dir_all(p.join("x")).unwrap(),
        Plant::File => fs::write(&p, "[]").unwrap(),
    }
    p
}

/// Runs `args` and checks it as `want` says; returns the run.
fn check(w: &World, what: &str, args: &[&str], want: Want, hostile: &Path) -> Ran {
    let root_before = snapshot(&w.env.root);
    let data_before = snapshot(&w.data);
    let canary_before = snapshot(&w.canary);
    let hostile_before = snapshot(hostile.parent().unwrap())
        .get(Path::new(hostile.file_name().unwrap()))
        .cloned();
    let r = run(&w.env, args, &[]);
    let ctx = format!(
        "{what}: teamctl {args:?} exited {:?}\nstdout: {}\nstderr: {}",
        r.code, r.stdout, r.stderr
    );
    assert_ne!(r.code, Some(101), "panicked: {ctx}");
    assert!(r.code.is_some(), "killed by a signal: {ctx}");
    let canary_after = snapshot(&w.canary);
    assert!(
        canary_after == canary_before,
        "wrote outside: {:?}: {ctx}",
        diff(&canary_before, &canary_after)
    );
    let hostile_after = snapshot(hostile.parent().unwrap())
        .get(Path::new(hostile.file_name().unwrap()))
        .cloned();
    assert!(
        hostile_after == hostile_before,
        "the planted node changed: {ctx}"
    );
    if r.code != Some(0) {
        let errors: Vec<&str> = r
            .stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .collect();
        assert_eq!(errors.len(), 1, "one error line: {ctx}");
        assert!(
            r.stderr
                .trim_end()
                .lines()
                .last()
                .unwrap()
                .starts_with("error: "),
            "the error is the last line, on one line: {ctx}"
        );
    }
    if want == Want::Refused {
        assert!(matches!(r.code, Some(1) | Some(2)), "refused: {ctx}");
        let (root_after, data_after) = (snapshot(&w.env.root), snapshot(&w.data));
        assert!(
            root_after == root_before,
            "files changed: {:?}: {ctx}",
            diff(&root_before, &root_after)
        );
        assert!(
            data_after == data_before,
            "data changed: {:?}: {ctx}",
            diff(&data_before, &data_after)
        );
    }
    r
}

/// The commands that read or write each file, for every kind of hostile node.
#[test]
fn hostile_nodes_are_refused_without_hanging_or_writing() {
    use Plant::*;
    use Want::*;
    let send = &["send", "alice", "hi"][..];
    let join = &["send", "--join", "--from", "ops", "alice", "hi"][..];
    let add = &["tasks", "add", "Fix it"][..];
    let update = &["tasks", "update", "1", "--status", "completed"][..];
    let rm = &["tasks", "rm", "1"][..];
    type Runs<'a> = &'a [(&'a [&'a str], Want)];
    let cases: &[(&str, &[Plant], Runs)] = &[
        (
            "teams/alpha/inboxes/alice.json",
            &[LinkFile, Fifo, Socket, Folder],
            &[
                (send, Refused),
                (&["inbox", "alice"], Refused),
                (&["inbox", "alice", "--consume"], Refused),
                (&["status"], Either),
                (&["inbox", "--all"], Either),
            ],
        ),
        (
            "teams/alpha/inboxes",
            &[LinkDir, Fifo, File],
            &[
                (send, Refused),
                (join, Refused),
                (&["inbox", "alice"], Refused),
                (&["status"], Either),
            ],
        ),
        (
            "teams/alpha/config.json",
            &[LinkFile, Fifo, Socket, Folder],
            &[
                (send, Refused),
                (join, Refused),
                (&["status"], Refused),
                (add, Refused),
            ],
        ),
        (
            "teams/alpha/config.json.lock",
            &[LinkFile, LinkDir, Fifo, File],
            &[(join, Refused)],
        ),
        (
            "teams/alpha",
            &[LinkDir, Fifo, File],
            &[
                (send, Refused),
                (join, Refused),
                (&["status", "--team", "alpha"], Refused),
            ],
        ),
        (
            "teams",
            &[LinkDir, Fifo, File],
            &[(send, Refused), (&["status", "--team", "alpha"], Refused)],
        ),
        (
            "tasks/alpha/1.json",
            &[LinkFile, Fifo, Socket, Folder],
            &[
                (update, Refused),
                (rm, Refused),
                (&["tasks", "claim", "1", "--as", "alice"], Refused),
                (&["tasks"], Either),
            ],
        ),
        (
            "tasks/alpha/.highwatermark",
            &[LinkFile, Fifo, Socket, Folder],
            &[(add, Refused), (&["tasks", "rm", "2"], Refused)],
        ),
        (
            "tasks/alpha/.lock",
            &[LinkFile, Fifo, Socket, Folder],
            &[(add, Refused), (&["tasks", "rm", "2"], Refused)],
        ),
        (
            "tasks/alpha",
            &[LinkDir, Fifo, File],
            &[(add, Refused), (update, Refused), (&["tasks"], Refused)],
        ),
        (
            "tasks",
            &[LinkDir, Fifo, File],
            &[(add, Refused), (&["tasks"], Refused)],
        ),
        (
            "DATA/sent.jsonl",
            &[LinkFile, Fifo, Socket, Folder],
            // The message is delivered; the log refuses, with a warning.
            &[(send, Either), (&["inbox", "--sent"], Refused)],
        ),
        (
            "DATA/leads",
            &[LinkDir, Fifo, File],
            // teamctl no longer knows it leads: it writes as `user` (or refuses), never through.
            &[(send, Either), (&["delete", "alpha"], Refused)],
        ),
        // prepare writes only inside the config dir, and checks both files before writing
        // either: a refusal writes nothing (.claude.json is not even created).
        (
            ".claude.json",
            &[LinkFile, LinkJson, Dangling, Fifo, Socket, Folder],
            &[
                (&["prepare"], Refused),
                (&["prepare", "--dry-run"], Refused),
            ],
        ),
        (
            "settings.json",
            &[LinkFile, LinkJson, Dangling, Fifo, Socket, Folder],
            &[(&["prepare", "--skip-permissions"], Refused)],
        ),
        ("backups", &[LinkDir], &[(&["prepare"], Refused)]),
    ];
    for (rel, plants, runs) in cases {
        for &how in *plants {
            for (args, want) in *runs {
                let w = world();
                let p = plant(&w, rel, how);
                let what = format!("{rel} as {how:?}");
                check(&w, &what, args, *want, &p);
                // Nothing holds a lock afterwards.
                let locks: Vec<_> = snapshot(&w.env.root)
                    .into_iter()
                    .filter(|(k, v)| *v == Node::Dir && k.to_string_lossy().ends_with(".lock"))
                    .filter(|(k, _)| {
                        !rel.ends_with(".lock") || !k.ends_with(rel.rsplit('/').next().unwrap())
                    })
                    .collect();
                assert!(locks.is_empty(), "{what} {args:?}: locks left {locks:?}");
            }
        }
    }
}

/// `answers.lock` beside the sent log: approve and deny take it.
#[test]
fn a_hostile_answer_lock_is_refused() {
    for how in [Plant::LinkFile, Plant::Fifo, Plant::Socket, Plant::Folder] {
        let w = world();
        let frame = json!({"type": "permission_request", "request_id": "perm-1-a", "agent_id": "alice",
            "tool_name": "Bash", "tool_use_id": "t", "description": "d", "input": {"command": "ls"},
            "permission_suggestions": []});
        let entry = json!([{"from": "alice", "text": frame.to_string(), "timestamp": "2026-11-29T10:00:00.000Z", "read": false}]);
        fs::write(w.env.inbox("alpha", "team-lead"), entry.to_string()).unwrap();
        let p = plant(&w, "DATA/answers.lock", how);
        let r = check(
            &w,
            &format!("answers.lock as {how:?}"),
            &["approve", "perm-1-a"],
            Want::Refused,
            &p,
        );
        assert!(r.stderr.contains("answers.lock"), "{}", r.stderr);
    }
}

/// The data dir itself as a FIFO (TEAMCTL_DATA_DIR): refused, no hang.
#[test]
fn a_hostile_data_dir_is_refused() {
    let w = world();
    let fifo = w.env.dir.path().join("data-fifo");
    crate::common::mkfifo(&fifo);
    let r = run(
        &w.env,
        &["send", "alice", "hi"],
        &[("TEAMCTL_DATA_DIR", &fifo)],
    );
    assert_ne!(r.code, Some(101));
    // The message itself is delivered; the log says why it could not record it.
    assert!(r.stderr.contains("data-fifo"), "{}", r.stderr);
    let r = run(
        &w.env,
        &["create", "beta", "--member", "a:b", "--launch", "none"],
        &[("TEAMCTL_DATA_DIR", &fifo)],
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("error: "),
        "{}",
        r.stderr
    );
    assert!(
        !w.env.root.join("teams/beta").exists(),
        "nothing written in the config dir"
    );
}

/// Item 1: a task file's "id" is never a path; a delete that cannot strip a reference warns
/// and succeeds.
#[test]
fn task_ids_from_files_are_never_paths() {
    for bad in [
        "CANARY/victim",
        "../../canary/victim",
        "/etc/passwd",
        "3/../1",
    ] {
        let w = world();
        let id = bad.replace("CANARY", &w.canary.to_string_lossy());
        let tasks = w.env.root.join("tasks/alpha");
        // 3.json says it is someone else, and blocks the task about to be deleted.
        let planted = json!({"id": id, "subject": "s", "description": "d", "status": "pending",
            "blocks": ["1"], "blockedBy": ["1"]});
        fs::write(tasks.join("3.json"), planted.to_string()).unwrap();
        let before = fs::read(tasks.join("3.json")).unwrap();
        let canary = snapshot(&w.canary);
        let r = run(&w.env, &["tasks", "rm", "1"], &[]);
        assert_eq!(r.code, Some(0), "{bad}: {}", r.stderr);
        assert_eq!(snapshot(&w.canary), canary, "{bad}: wrote outside");
        assert_eq!(fs::read(tasks.join("3.json")).unwrap(), before, "{bad}");
        assert!(!tasks.join("1.json").exists());
        let two: Value = serde_json::from_slice(&fs::read(tasks.join("2.json")).unwrap()).unwrap();
        assert_eq!(two["blockedBy"], json!([]), "{bad}");
        // Listed as what it is: skipped, not a task.
        let r = run(&w.env, &["tasks", "--json"], &[]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let v: Value = serde_json::from_str(&r.stdout).unwrap();
        let ids: Vec<&str> = v["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["2"], "{bad}");
    }
    // A reference that cannot be stripped: a warning, and still exit 0.
    let w = world();
    let tasks = w.env.root.join("tasks/alpha");
    fs::create_dir(tasks.join("2.json.lock")).unwrap();
    let r = run(
        &w.env,
        &["--lock-timeout", "100ms", "tasks", "rm", "1", "--json"],
        &[],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("warning: task #1 is deleted, but #2 still names it"),
        "{}",
        r.stderr
    );
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["not_updated"][0]["id"], "2");
    assert!(!tasks.join("1.json").exists());
}

/// Item 4: ids never wrap; a number too large is an error and nothing is written.
#[test]
fn task_ids_never_wrap() {
    for (file, text) in [
        (".highwatermark", "18446744073709551615"),
        (".highwatermark", "9999999999999999999"),
        (".highwatermark", "99999999999999999999999"),
        ("18446744073709551615.json", "{}"),
    ] {
        let w = world();
        let tasks = w.env.root.join("tasks/alpha");
        fs::write(tasks.join(file), text).unwrap();
        let before = snapshot(&w.env.root);
        let r = run(&w.env, &["tasks", "add", "x"], &[]);
        assert_eq!(r.code, Some(1), "{file}={text}: {}", r.stderr);
        assert!(
            r.stderr.starts_with("error: no task id left"),
            "{}",
            r.stderr
        );
        assert!(snapshot(&w.env.root) == before, "{file}={text}: written");
    }
}

/// Item 8: config.json cannot make teamctl the lead; item 2: nor name a session to kill.
#[test]
fn planted_keys_decide_nothing() {
    let w = world();
    // A session team with a live lead process, claiming teamctl leads it.
    w.env.team("session-1a2b3c4d", &[("alice", Some("blue"))]);
    w.env.edit_config("session-1a2b3c4d", |c| {
        c["teamctl"] = json!({"leads": true, "tmuxSession": "victim"});
        c["leadProcess"] = json!({"pid": std::process::id(), "procStart": null});
    });
    let r = run(
        &w.env,
        &["--team", "session-1a2b3c4d", "send", "alice", "hi"],
        &[],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let inbox: Value =
        serde_json::from_slice(&fs::read(w.env.inbox("session-1a2b3c4d", "alice")).unwrap())
            .unwrap();
    assert_eq!(inbox[0]["from"], "user", "never the lead");
    let r = run(
        &w.env,
        &[
            "--team",
            "session-1a2b3c4d",
            "send",
            "alice",
            "hi",
            "--from",
            "team-lead",
        ],
        &[],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let r = run(&w.env, &["delete", "session-1a2b3c4d"], &[]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("teamctl does not lead team 'session-1a2b3c4d'"),
        "{}",
        r.stderr
    );
    assert!(
        w.env
            .root
            .join("teams/session-1a2b3c4d/config.json")
            .exists()
    );

    // A team made with another data dir: the error says so.
    let other = w.env.dir.path().join("other-data");
    let r = run(
        &w.env,
        &["delete", "alpha"],
        &[("TEAMCTL_DATA_DIR", &other)],
    );
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("no record of creating it in teamctl's data dir"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("TEAMCTL_DATA_DIR"), "{}", r.stderr);

    if !tmux_installed() {
        return;
    }
    let _server = TmuxServer(w.env.dir.path().to_path_buf());
    let tmux = |args: &[&str]| {
        Command::new("tmux")
            .args(args)
            .env("TMUX_TMPDIR", w.env.dir.path())
            .env_remove("TMUX")
            .status()
            .unwrap()
    };
    assert!(tmux(&["new-session", "-d", "-s", "victim", "sleep 600"]).success());
    // The session teamctl would have started, but made by someone else (not in the record).
    assert!(tmux(&["new-session", "-d", "-s", "teamctl-alpha", "sleep 600"]).success());
    w.env
        .edit_config("alpha", |c| c["teamctl"]["tmuxSession"] = json!("victim"));
    let r = run(&w.env, &["delete", "alpha", "--timeout", "1s"], &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        tmux_has_session(&w.env, "victim"),
        "a session config.json names is never killed"
    );
    assert!(
        tmux_has_session(&w.env, "teamctl-alpha"),
        "nor one teamctl did not start"
    );
    assert!(!w.env.root.join("teams/alpha").exists());
}

/// Item 12: one member name that breaks the rules does not stop `--all` for the others.
#[test]
fn a_bad_member_name_does_not_stop_the_others() {
    let w = world();
    w.env.edit_config("alpha", |c| {
        c["members"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "bad\nname::error::x"}));
        c["members"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "../../../canary/x"}));
    });
    let r = run(&w.env, &["send", "--all", "hello"], &[]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    for m in ["alice", "bob"] {
        let inbox: Value =
            serde_json::from_slice(&fs::read(w.env.inbox("alpha", m)).unwrap()).unwrap();
        assert_eq!(
            inbox.as_array().unwrap().last().unwrap()["text"],
            "hello",
            "{m}"
        );
    }
    assert!(
        r.stderr.contains("'bad\\nname::error::x'"),
        "quoted, one line: {}",
        r.stderr
    );
    assert!(
        !r.stderr.lines().any(|l| l.starts_with("name::error")),
        "{}",
        r.stderr
    );
    assert!(!w.canary.join("x.json").exists());
}

/// Item 11: durations too large for a deadline are clamped, never a panic; item 13: an empty
/// team name is a usage error; item 16: `watch --count 0` ends at once.
#[test]
fn huge_durations_empty_names_and_zero_counts() {
    let w = world();
    let huge = "9223372036854775807s";
    for args in [
        &["--lock-timeout", huge, "send", "alice", "hi"][..],
        &["watch", "--timeout", huge, "--count", "0"],
        &["watch", "--timeout", huge, "--count", "1", "--existing"],
        &["inbox", "alice", "--since", huge],
        &["status", "--idle-after", huge],
        &["wait", "--timeout", huge, "--task", "99"],
        &["delete", "alpha", "--timeout", huge],
    ] {
        let r = run(&w.env, args, &[]);
        assert_ne!(r.code, Some(101), "{args:?}: {}", r.stderr);
        assert!(
            matches!(r.code, Some(0) | Some(1)),
            "{args:?}: {:?} {}",
            r.code,
            r.stderr
        );
    }
    let r = run(&w.env, &["--team", "", "status"], &[]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    let t = Instant::now();
    let w = world();
    let r = run(&w.env, &["watch", "--count", "0"], &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(t.elapsed() < Duration::from_secs(10));
}

/// A transcript line of `agent` in team `alpha` (as a pane teammate's session writes it),
/// made from `e`.
fn of(agent: &str, mut e: Value) -> Value {
    e["teamName"] = "alpha".into();
    e["agentName"] = agent.into();
    e["sessionId"] = format!("s-{agent}").into();
    e
}

fn said(agent: &str, id: &str, blocks: Value, usage: (u64, u64)) -> Value {
    of(
        agent,
        crate::common::assistant_entry(id, "2026-11-29T09:59:00.000Z", blocks, "tool_use", usage),
    )
}

fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// The characters a terminal acts on (C0 but the line break, DEL, C1, bidi controls).
fn acts(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{9}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{61c}'
        | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Every command that reads transcripts, on `w`: each ends (the deadline of [`run`]), never
/// panics, fails (if it does) with one `error:` line last, and prints no character a terminal
/// would act on in human output; the planted nodes and the canary are unchanged. Returns the
/// runs by name.
fn transcript_commands(w: &World, what: &str, planted: &[&Path]) -> BTreeMap<&'static str, Ran> {
    let node = |p: &Path| {
        snapshot(p.parent().unwrap())
            .get(Path::new(p.file_name().unwrap()))
            .cloned()
    };
    let before: Vec<_> = planted.iter().map(|p| node(p)).collect();
    let canary = snapshot(&w.canary);
    let mut out = BTreeMap::new();
    let runs: [(&str, &[&str]); 7] = [
        ("status", &["status"]),
        ("status_json", &["status", "--json"]),
        ("log", &["log", "alice"]),
        ("log_json", &["log", "alice", "--json"]),
        ("top", &["top", "--once", "--width", "120"]),
        ("top_json", &["top", "--json"]),
        (
            "wait",
            &[
                "wait",
                "--tasks-done",
                "--max-cost",
                "1000",
                "--timeout",
                "1s",
            ],
        ),
    ];
    for (name, args) in runs {
        let r = run(&w.env, args, &[]);
        let ctx = format!(
            "{what}: teamctl {args:?} exited {:?}\nstdout: {}\nstderr: {}",
            r.code, r.stdout, r.stderr
        );
        assert_ne!(r.code, Some(101), "panicked: {ctx}");
        let want = if name == "wait" { Some(3) } else { Some(0) };
        assert_eq!(r.code, want, "{ctx}");
        if !name.ends_with("json") {
            assert!(
                !r.stdout.chars().any(acts),
                "a control reached stdout: {ctx}"
            );
            // A person's screen gets lines cut to size (JSON keeps every byte).
            assert!(
                r.stdout.len() < 200_000,
                "{what}: {name} printed {} bytes",
                r.stdout.len()
            );
        }
        assert!(
            !r.stderr.chars().any(acts),
            "a control reached stderr: {ctx}"
        );
        out.insert(name, r);
    }
    let after: Vec<_> = planted.iter().map(|p| node(p)).collect();
    assert!(before == after, "{what}: a planted node changed");
    assert!(snapshot(&w.canary) == canary, "{what}: wrote outside");
    out
}

/// The member `name` of a `status --json` / `top --json` document.
fn member(doc: &str, name: &str) -> Value {
    let v: Value = serde_json::from_str(doc).unwrap();
    v["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {doc}"))
        .clone()
}

// Transcripts written by a hostile teammate (issue 22's corpus, for issue 18's readers):
// symlinks where a project folder, a session or a subagents folder belongs, a FIFO session,
// terminal escapes in a tool call and a text, one line of megabytes, and a `.meta.json`
// naming someone else. `status`, `log`, `top --once`/`--json` and `wait --max-cost` end,
// follow nothing, say what they skipped, neutralise what they print and keep `--json` exact.

/// alice's "session" in a canary file outside the config dir, its text `SECRET-<tag>`.
fn secret(w: &World, tag: &str) -> PathBuf {
    let p = w.canary.join(format!("secret-{tag}.jsonl"));
    fs::write(
        &p,
        jsonl(&[said(
            "alice",
            "sx",
            json!([{"type": "text", "text": format!("SECRET-{tag}")}]),
            (1_000_000, 0),
        )]),
    )
    .unwrap();
    p
}

/// The project folder of the world's team (cwd /tmp).
fn project(w: &World) -> PathBuf {
    w.env.root.join("projects/-tmp")
}

/// The lead's session id in the world's team.
const LEAD_SESSION: &str = "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d";

/// No run printed the secret `tag`, and none counted it.
fn no_secret(runs: &BTreeMap<&str, Ran>, tag: &str, what: &str) {
    for (name, r) in runs {
        assert!(
            !r.stdout.contains(&format!("SECRET-{tag}")),
            "{what}: {name} read through the link: {}",
            r.stdout
        );
    }
    // Nothing of it is counted.
    assert_eq!(
        member(&runs["status_json"].stdout, "alice")["tokens"],
        Value::Null,
        "{what}"
    );
}

/// A project folder that is a symlink to a folder outside holding alice's "session".
#[test]
fn hostile_transcripts_a_project_folder_as_a_symlink() {
    let w = world();
    fs::create_dir_all(w.canary.join("proj")).unwrap();
    fs::copy(secret(&w, "A"), w.canary.join("proj/s-alice.jsonl")).unwrap();
    fs::create_dir_all(w.env.root.join("projects")).unwrap();
    symlink(w.canary.join("proj"), project(&w)).unwrap();
    let runs = transcript_commands(&w, "project folder as a symlink", &[&project(&w)]);
    no_secret(&runs, "A", "project folder as a symlink");
    for name in ["status", "log", "top"] {
        assert!(
            runs[name].stderr.contains("projects/-tmp"),
            "{name} says what it skipped: {}",
            runs[name].stderr
        );
    }
}

/// Sessions that are symlinks to a secret file: alice's, and the lead's by its id.
#[test]
fn hostile_transcripts_sessions_as_symlinks() {
    let w = world();
    fs::create_dir_all(project(&w)).unwrap();
    let alice = project(&w).join("s-alice.jsonl");
    let lead = project(&w).join(format!("{LEAD_SESSION}.jsonl"));
    symlink(secret(&w, "B"), &alice).unwrap();
    symlink(secret(&w, "B"), &lead).unwrap();
    let runs = transcript_commands(&w, "sessions as symlinks", &[&alice, &lead]);
    no_secret(&runs, "B", "sessions as symlinks");
    assert!(
        runs["status"].stderr.contains("s-alice.jsonl"),
        "{}",
        runs["status"].stderr
    );
    assert!(
        runs["status"].stderr.contains(LEAD_SESSION),
        "{}",
        runs["status"].stderr
    );
}

/// Sessions that are FIFOs (nobody writes them: opening one to read would block).
#[test]
fn hostile_transcripts_sessions_as_fifos() {
    let w = world();
    fs::create_dir_all(project(&w)).unwrap();
    let fifo = |p: &Path| crate::common::mkfifo(p);
    fifo(&alice_path(&w));
    fifo(&project(&w).join(format!("{LEAD_SESSION}.jsonl")));
    let runs = transcript_commands(
        &w,
        "sessions as FIFOs",
        &[
            &alice_path(&w),
            &project(&w).join(format!("{LEAD_SESSION}.jsonl")),
        ],
    );
    assert!(
        runs["status"].stderr.contains("s-alice.jsonl"),
        "{}",
        runs["status"].stderr
    );
}

/// The lead's subagents folder as a symlink to a folder of "in-process teammates".
#[test]
fn hostile_transcripts_a_subagents_folder_as_a_symlink() {
    let w = world();
    fs::create_dir_all(project(&w).join(LEAD_SESSION)).unwrap();
    fs::write(
        project(&w).join(format!("{LEAD_SESSION}.jsonl")),
        jsonl(&[crate::common::assistant_entry(
            "l1",
            "2026-11-29T09:59:00.000Z",
            json!([{"type": "text", "text": "leading"}]),
            "end_turn",
            (10, 5),
        )]),
    )
    .unwrap();
    fs::create_dir_all(w.canary.join("subs")).unwrap();
    fs::copy(secret(&w, "D"), w.canary.join("subs/agent-x.jsonl")).unwrap();
    fs::write(
        w.canary.join("subs/agent-x.meta.json"),
        r#"{"name":"alice","teamName":"alpha"}"#,
    )
    .unwrap();
    let subs = project(&w).join(LEAD_SESSION).join("subagents");
    symlink(w.canary.join("subs"), &subs).unwrap();
    let runs = transcript_commands(&w, "subagents folder as a symlink", &[&subs]);
    no_secret(&runs, "D", "subagents folder as a symlink");
    let lead = member(&runs["status_json"].stdout, "team-lead");
    assert_eq!(lead["tokens"]["input"], 10, "only the lead's own file");
    assert!(
        runs["status"].stderr.contains("subagents"),
        "{}",
        runs["status"].stderr
    );
}

/// Terminal escapes in a tool call's input and in a text: shown inert, kept exact in JSON.
#[test]
fn hostile_transcripts_terminal_escapes() {
    let w = world();
    let evil = "\u{1b}]52;c;aGk=\u{7}\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{1b}[H\u{1b}[5A\u{9b}31m\u{202e}\u{2066}evil\u{7f}";
    let command = format!("echo {evil}");
    fs::create_dir_all(project(&w)).unwrap();
    fs::write(
        alice_path(&w),
        jsonl(&[
            // A timestamp is the teammate's string too.
            of(
                "alice",
                json!({"type": "user", "timestamp": "2026-11-29T\u{1b}]0;XYZ\u{7}.000Z",
                       "message": {"role": "user", "content": "go on"}}),
            ),
            said(
                "alice",
                "m1",
                json!([{"type": "text", "text": format!("hi {evil}")}]),
                (10, 5),
            ),
            said(
                "alice",
                "m2",
                json!([{"type": "tool_use", "id": "tu1", "name": format!("Bash{evil}"),
                        "input": {"command": command}}]),
                (10, 5),
            ),
        ]),
    )
    .unwrap();
    let runs = transcript_commands(&w, "escapes in a transcript", &[&alice_path(&w)]);
    for name in ["status", "log", "top"] {
        assert!(
            runs[name].stdout.contains("\\e]52;c;aGk=\\x07"),
            "{name} shows the escape as text: {}",
            runs[name].stdout
        );
    }
    for name in ["status_json", "top_json"] {
        let a = member(&runs[name].stdout, "alice");
        assert_eq!(a["activity"]["tool"], format!("Bash{evil}"), "{name} exact");
        assert_eq!(a["activity"]["summary"], command, "{name} exact");
    }
    let log: Vec<Value> = runs["log_json"]
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(log[1]["text"], format!("hi {evil}"));
    assert_eq!(log[2]["text"], json!({"command": command}).to_string());
}

/// One line of 8 MB (a text), then a tool call: read through, printed cut.
#[test]
fn hostile_transcripts_one_line_of_8_mb() {
    let w = world();
    fs::create_dir_all(project(&w)).unwrap();
    let huge = "x".repeat(8 << 20);
    fs::write(
        alice_path(&w),
        jsonl(&[
            said("alice", "m1", json!([{"type": "text", "text": huge}]), (10, 5)),
            said(
                "alice",
                "m2",
                json!([{"type": "tool_use", "id": "tu1", "name": "Read", "input": {"file_path": "a.rs"}}]),
                (10, 5),
            ),
        ]),
    )
    .unwrap();
    let runs = transcript_commands(&w, "a line of 8 MB", &[&alice_path(&w)]);
    assert_eq!(
        member(&runs["top_json"].stdout, "alice")["doing"],
        "Read: a.rs"
    );
    assert!(
        runs["top"].stdout.contains("Read: a.rs"),
        "{}",
        runs["top"].stdout
    );
}

/// `.meta.json` files naming someone else: a subagent of alice's session that says it is
/// bob, one of the lead's that says it is the pane teammate bob, one of another team.
#[test]
fn hostile_transcripts_meta_json_naming_others() {
    let w = world();
    w.env.edit_config("alpha", |c| {
        for m in c["members"].as_array_mut().unwrap() {
            if m["name"] == "bob" {
                m["backendType"] = "tmux".into();
                m["tmuxPaneId"] = "%99".into();
            }
        }
    });
    fs::create_dir_all(project(&w).join("s-alice/subagents")).unwrap();
    fs::create_dir_all(project(&w).join(LEAD_SESSION).join("subagents")).unwrap();
    fs::write(
        alice_path(&w),
        jsonl(&[said(
            "alice",
            "m1",
            json!([{"type": "text", "text": "mine"}]),
            (10, 5),
        )]),
    )
    .unwrap();
    fs::write(
        project(&w).join(format!("{LEAD_SESSION}.jsonl")),
        jsonl(&[crate::common::assistant_entry(
            "l1",
            "2026-11-29T09:59:00.000Z",
            json!([{"type": "text", "text": "leading"}]),
            "end_turn",
            (10, 5),
        )]),
    )
    .unwrap();
    let sub = |dir: PathBuf, name: &str, meta: &str, tokens: u64| {
        fs::write(
            dir.join(format!("{name}.jsonl")),
            jsonl(&[crate::common::assistant_entry(
                name,
                "2026-11-29T09:59:30.000Z",
                json!([{"type": "text", "text": format!("as {name}")}]),
                "end_turn",
                (tokens, 0),
            )]),
        )
        .unwrap();
        fs::write(dir.join(format!("{name}.meta.json")), meta).unwrap();
    };
    sub(
        project(&w).join("s-alice/subagents"),
        "agent-a",
        r#"{"name":"bob","teamName":"alpha"}"#,
        100,
    );
    sub(
        project(&w).join(LEAD_SESSION).join("subagents"),
        "agent-b",
        r#"{"name":"bob","teamName":"alpha"}"#,
        1000,
    );
    sub(
        project(&w).join(LEAD_SESSION).join("subagents"),
        "agent-c",
        r#"{"name":"alice","teamName":"other-team"}"#,
        10_000,
    );
    let runs = transcript_commands(&w, "meta.json naming others", &[&alice_path(&w)]);
    let st = &runs["status_json"].stdout;
    assert_eq!(member(st, "bob")["tokens"], Value::Null, "bob ran nothing");
    assert_eq!(
        member(st, "alice")["tokens"]["input"],
        110,
        "alice and her subagent"
    );
    assert_eq!(
        member(st, "team-lead")["tokens"]["input"],
        11_010,
        "the lead and its subagents"
    );
}

fn alice_path(w: &World) -> PathBuf {
    w.env.root.join("projects/-tmp/s-alice.jsonl")
}

/// `export` (and so `run --export`, `delete --export`) reads every file of the team through
/// the same handles: a symlink, FIFO, socket or folder where an inbox, `config.json`, a task,
/// `.highwatermark`, a team or task folder, a transcript or a transcript folder belongs is
/// reported on stderr and left out of the record, never followed, never waited on; the rest is
/// recorded and the export succeeds. The planted node stays as it was.
#[test]
fn export_records_around_hostile_nodes() {
    use Plant::*;
    const SID: &str = "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d";
    const WSID: &str = "5e5e5e5e-0000-4000-8000-00000000a11c";
    let line = |v: Value| format!("{v}\n");
    // The world's team with transcripts: the lead's (cwd /tmp), an in-process bob's, alice's
    // pane session.
    let with_transcripts = || {
        let w = world();
        let proj = w.env.root.join("projects/-tmp");
        let subs = proj.join(SID).join("subagents");
        fs::create_dir_all(&subs).unwrap();
        let answer = json!({"type":"assistant","timestamp":"2026-11-29T10:00:00.000Z","message":{"id":"m1","model":"claude-opus-5-5","content":[{"type":"text","text":"LEAD"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}});
        fs::write(proj.join(format!("{SID}.jsonl")), line(answer.clone())).unwrap();
        fs::write(subs.join("agent-abob.meta.json"), r#"{"name":"bob"}"#).unwrap();
        fs::write(subs.join("agent-abob.jsonl"), line(answer.clone())).unwrap();
        let mut pane = answer;
        pane["teamName"] = "alpha".into();
        pane["agentName"] = "alice".into();
        fs::write(proj.join(format!("{WSID}.jsonl")), line(pane)).unwrap();
        w
    };
    // Where each planted node would land in the record (a folder: nothing under it).
    let cases: &[(&str, &[Plant], &str)] = &[
        (
            "teams/alpha/inboxes/alice.json",
            &[LinkFile, Fifo, Socket, Folder],
            "team/inboxes/alice.json",
        ),
        (
            "teams/alpha/inboxes",
            &[LinkDir, Fifo, File],
            "team/inboxes",
        ),
        (
            "teams/alpha/config.json",
            &[LinkFile, Fifo, Socket, Folder],
            "team/config.json",
        ),
        (
            "tasks/alpha/1.json",
            &[LinkFile, Fifo, Socket, Folder],
            "tasks/1.json",
        ),
        (
            "tasks/alpha/.highwatermark",
            &[LinkFile, Fifo, Folder],
            "tasks/.highwatermark",
        ),
        ("tasks/alpha", &[LinkDir, Fifo, File], "tasks"),
        (
            "projects/-tmp/3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d.jsonl",
            &[LinkFile, Fifo, Socket, Folder],
            "transcripts/team-lead",
        ),
        (
            "projects/-tmp/3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d/subagents/agent-abob.jsonl",
            &[LinkFile, Fifo, Folder],
            "transcripts/bob",
        ),
        (
            "projects/-tmp/3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d/subagents",
            &[LinkDir, Fifo, File],
            "transcripts/bob",
        ),
        (
            "projects/-tmp/5e5e5e5e-0000-4000-8000-00000000a11c.jsonl",
            &[LinkFile, Fifo, Socket],
            "transcripts/alice",
        ),
        ("projects/-tmp", &[LinkDir, Fifo, File], "transcripts"),
    ];
    // Unplanted, every one of those is in the record.
    let w = with_transcripts();
    let out = w.env.dir.path().join("rec");
    let r = run(&w.env, &["export", "--out", out.to_str().unwrap()], &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for (_, _, inside) in cases {
        assert!(out.join(inside).exists(), "{inside} is in a plain record");
    }
    for (rel, plants, inside) in cases {
        for &how in *plants {
            let w = with_transcripts();
            let p = plant(&w, rel, how);
            let what = format!("export with {rel} as {how:?}");
            let out = w.env.dir.path().join("rec");
            let r = check(
                &w,
                &what,
                &["--team", "alpha", "export", "--out", out.to_str().unwrap()],
                Want::Either,
                &p,
            );
            assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
            assert!(
                !out.join(inside).exists(),
                "{what}: {inside} is in the record"
            );
            let name = Path::new(rel).file_name().unwrap().to_string_lossy();
            assert!(
                r.stderr
                    .lines()
                    .any(|l| l.starts_with("warning: ") && l.contains(name.as_ref())),
                "{what}: not reported: {}",
                r.stderr
            );
            // The record never holds what a link points at.
            assert!(!out.join(inside).exists());
            let summary = fs::read_to_string(out.join("summary.json")).unwrap();
            assert!(!summary.contains("canary"), "{what}");
        }
    }
}

/// `report` reads records other jobs wrote (CI artifacts): what is inside one is not trusted.
/// A `summary.json` that is a symlink (to a record outside, to a file that is not there), a
/// FIFO, a socket or a folder is skipped at once, never followed or waited on, named on
/// stderr, and the exit code is 1 once the others are reported; nothing is written anywhere.
#[test]
fn report_skips_hostile_records() {
    use Plant::*;
    for how in [LinkFile, LinkJson, Dangling, Fifo, Socket, Folder] {
        let w = world();
        let good = w.env.dir.path().join("good");
        let r = run(&w.env, &["export", "--out", good.to_str().unwrap()], &[]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        // The hostile record: an export whose summary.json was replaced.
        let bad = w.env.dir.path().join("bad");
        let r = run(&w.env, &["export", "--out", bad.to_str().unwrap()], &[]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let summary = bad.join("summary.json");
        fs::remove_file(&summary).unwrap();
        match how {
            LinkFile => symlink(good.join("summary.json"), &summary).unwrap(),
            LinkJson => symlink(w.canary.join("victim.json"), &summary).unwrap(),
            Dangling => symlink(w.canary.join("new.json"), &summary).unwrap(),
            Fifo => crate::common::mkfifo(&summary),
            Socket => {
                std::os::unix::net::UnixListener::bind(&summary).unwrap();
            }
            Folder => fs::create_dir_all(summary.join("x")).unwrap(),
            _ => unreachable!(),
        }
        let what = format!("report over summary.json as {how:?}");
        let r = check(
            &w,
            &what,
            &["report", good.to_str().unwrap(), bad.to_str().unwrap()],
            Want::Either,
            &summary,
        );
        assert_eq!(r.code, Some(1), "{what}: {}", r.stderr);
        assert!(
            r.stderr.lines().any(|l| l
                .starts_with(&format!("warning: skipped {}: ", bad.display()))
                && l.contains("summary.json")),
            "{what}: not named: {}",
            r.stderr
        );
        assert!(r.stdout.contains("# 1 team"), "{what}: {}", r.stdout);
    }
}
