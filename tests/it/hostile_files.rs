//! The team's own files as a hostile teammate would leave them: every file and folder teamctl
//! reads or writes replaced by a symlink to somewhere outside, a symlinked folder, a FIFO, a
//! socket, a folder where a file belongs, a huge value, a bad id or a planted key. Each command
//! that touches it must end (a deadline, then the child is killed and the test fails), never
//! panic, fail with one clear `error:` line when it fails, write nothing outside the config
//! dir (a canary folder is compared byte for byte), and leave the files as they were. The same
//! world meets the transcript readers in hostile_transcripts.rs and export/report in
//! hostile_records.rs.

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
pub(crate) enum Node {
    File(Vec<u8>),
    Dir,
    Link(PathBuf),
    Fifo,
    Socket,
}

/// Everything under `root`, never following a symlink.
pub(crate) fn snapshot(root: &Path) -> BTreeMap<PathBuf, Node> {
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

/// What a run ended with.
pub(crate) struct Ran {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `teamctl args` (with `extra` env) and kills it at [`DEADLINE`].
pub(crate) fn run(env: &TestEnv, args: &[&str], extra: &[(&str, &Path)]) -> Ran {
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
pub(crate) enum Want {
    /// Exit 1 with one clear `error:` line, and every file as it was.
    Refused,
    /// Success or a clean refusal; the hostile node itself stays as it is either way.
    Either,
}

/// A team, a task list, a sent log and a canary folder outside everything.
pub(crate) struct World {
    pub(crate) env: TestEnv,
    pub(crate) canary: PathBuf,
    pub(crate) data: PathBuf,
}

pub(crate) fn world() -> World {
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
pub(crate) enum Plant {
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

pub(crate) fn plant(w: &World, rel: &str, how: Plant) -> PathBuf {
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
pub(crate) fn check(w: &World, what: &str, args: &[&str], want: Want, hostile: &Path) -> Ran {
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
