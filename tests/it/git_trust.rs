//! teamctl's git over the teammates' work runs nothing a teammate configured: no hook in any
//! place teamctl runs git (the repository, the teammates' worktrees, its scratch worktree), no
//! fsmonitor, text conversion, external diff or signing program, no filter or merge driver the
//! repository's config did not have when the team started (named instead), and no git at all
//! in a worktree whose `.git` file or admin folder was pointed elsewhere. A filter the
//! repository had at the start (git-lfs) keeps working.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::common::{TestEnv, commit, git, json as parse, script, worktree_team};

/// Every hook git 2.47 knows (githooks(5)).
const HOOKS: [&str; 28] = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
];

/// A program that records that it ran (its name, its arguments, where) in `ran.log`, then
/// passes its standard input through.
fn recorder(env: &TestEnv, name: &str) -> PathBuf {
    let log = env.dir.path().join("ran.log");
    script(
        env,
        name,
        &format!(
            "echo \"$0 $* in $PWD\" >> '{}'\n[ -t 0 ] || cat",
            log.display()
        ),
    )
}

fn ran(env: &TestEnv) -> String {
    fs::read_to_string(env.dir.path().join("ran.log")).unwrap_or_default()
}

/// Every hook in `dir`, each a recorder.
fn hooks_in(env: &TestEnv, dir: &Path) {
    fs::create_dir_all(dir).unwrap();
    for h in HOOKS {
        let p = recorder(env, &format!("hook-{h}"));
        fs::copy(&p, dir.join(h)).unwrap();
    }
}

/// The verbs that read the teammates' work, as the person runs them: `status`, `diff` in every
/// form, `merge --dry-run`, a squash `merge` with a check, `pr --dry-run` and `export`; each
/// with its output.
fn every_verb(env: &TestEnv) -> Vec<(String, Output)> {
    let rec = env.dir.path().join("record");
    let _ = fs::remove_dir_all(&rec);
    let runs: [&[&str]; 9] = [
        &["--json", "status"],
        &["diff"],
        &["diff", "--stat"],
        &["diff", "--patch"],
        &["--json", "diff", "--patch"],
        &["merge", "--into", "i", "--dry-run"],
        &[
            "merge",
            "--into",
            "i",
            "--check",
            "true",
            "--strategy",
            "squash",
        ],
        &["pr", "--into", "review", "--dry-run"],
        &["export", "--out", rec.to_str().unwrap()],
    ];
    runs.iter()
        .map(|args| {
            let out = env
                .cmd()
                .args(["--team", "t"])
                .args(*args)
                .output()
                .unwrap();
            (args.join(" "), out)
        })
        .collect()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A team whose alice committed a file and left one uncommitted, bob committed one; a branch
/// `review` for `pr`.
fn busy_team(env: &TestEnv) -> (PathBuf, Vec<(String, PathBuf)>) {
    let (repo, trees) = worktree_team(env, &["alice", "bob"]);
    commit(&trees[0].1, "a.txt", "a\n");
    fs::write(trees[0].1.join("notes.md"), "one\n").unwrap();
    commit(&trees[1].1, "b.txt", "b\n");
    git(&repo, &["branch", "review", "main"]);
    (repo, trees)
}

#[test]
fn no_git_hook_runs_where_teamctl_runs_git() {
    let env = TestEnv::new();
    let (repo, _) = busy_team(&env);
    // The repository's hooks folder, shared by every worktree: the teammates', teamctl's
    // scratch worktree and the person's checkout.
    hooks_in(&env, &repo.join(".git/hooks"));
    for (args, out) in every_verb(&env) {
        assert!(out.status.success(), "{args}: {}", text(&out));
    }
    // delete reads each worktree and removes bob's (alice's has a change: kept).
    let out = env
        .cmd()
        .args(["delete", "t", "--json", "--timeout", "1s"])
        .output()
        .unwrap();
    assert_eq!(parse(&out.stdout)["worktrees"][1]["action"], "removed");
    assert_eq!(ran(&env), "", "hooks ran");
    assert_ne!(git(&repo, &["rev-parse", "--verify", "-q", "i"]), "");
}

/// Settings that start a program (hooks, fsmonitor, text conversion, an external diff,
/// signing, automatic gc) planted in the repository's config and in a teammate's own worktree
/// config after the team started: every verb works and none of them runs; a `core.worktree`
/// planted for a worktree moves nothing teamctl does there.
#[test]
fn program_settings_planted_in_the_repository_run_nothing() {
    let env = TestEnv::new();
    let (repo, trees) = busy_team(&env);
    commit(&trees[1].1, ".gitattributes", "* diff=evil\n");
    let decoy = env.dir.path().join("decoy");
    fs::create_dir_all(&decoy).unwrap();
    fs::write(decoy.join("keep.txt"), "the person's\n").unwrap();
    hooks_in(&env, &env.dir.path().join("planted-hooks"));
    let prog = recorder(&env, "planted");
    let p = prog.to_str().unwrap();
    let hooks = env.dir.path().join("planted-hooks");
    for (k, v) in [
        ("core.hooksPath", hooks.to_str().unwrap()),
        ("core.fsmonitor", p),
        ("diff.external", p),
        ("diff.evil.textconv", p),
        ("diff.evil.command", p),
        ("commit.gpgSign", "true"),
        ("gpg.program", p),
        ("log.showSignature", "true"),
        ("gc.auto", "1"),
        ("gc.autoDetach", "false"),
        ("core.pager", p),
        ("core.editor", p),
        ("extensions.worktreeConfig", "true"),
    ] {
        git(&repo, &["config", k, v]);
    }
    let admin = repo.join(".git/worktrees/alice");
    fs::write(
        admin.join("config.worktree"),
        format!("[core]\n\tworktree = {}\n", decoy.display()),
    )
    .unwrap();
    for (args, out) in every_verb(&env) {
        assert!(out.status.success(), "{args}: {}", text(&out));
    }
    assert_eq!(ran(&env), "", "planted programs ran");
    assert_eq!(
        fs::read_to_string(decoy.join("keep.txt")).unwrap(),
        "the person's\n"
    );
    let v = parse(
        &env.cmd()
            .args(["--json", "--team", "t", "diff"])
            .output()
            .unwrap()
            .stdout,
    );
    let alice = &v["members"][0];
    assert_eq!(alice["untracked"], serde_json::json!([]), "{v}");
    assert_eq!(alice["files"].as_array().unwrap().len(), 2, "{v}");
}

/// A filter and a merge driver added to the repository's config after the team started (and
/// one in a teammate's own worktree config), chosen by the teammates' `.gitattributes`: no
/// verb runs them, and each verb that would names them.
#[test]
fn a_driver_added_since_the_start_is_named_and_never_run() {
    let env = TestEnv::new();
    let (repo, trees) = busy_team(&env);
    commit(&trees[0].1, ".gitattributes", "* filter=evil merge=evil\n");
    commit(&trees[1].1, "notes.md", "one\nTWO\nthree\n");
    fs::write(trees[0].1.join("notes.md"), "ONE\ntwo\nthree\n").unwrap();
    git(&trees[0].1, &["commit", "-q", "-am", "notes"]);
    let prog = recorder(&env, "driver");
    let p = prog.to_str().unwrap();
    let mut planted = fs::read_to_string(repo.join(".git/config")).unwrap();
    planted.push_str(&format!(
        "[filter \"evil\"]\n\tclean = {p} clean\n\tsmudge = {p} smudge\n\tprocess = {p} \
         process\n\trequired = true\n[merge \"evil\"]\n\tdriver = {p} merge %O %A %B\n"
    ));
    fs::write(repo.join(".git/config"), planted).unwrap();
    for (args, out) in every_verb(&env) {
        let t = text(&out);
        if args.starts_with("merge") || args.starts_with("diff") || args.starts_with("pr") {
            // (pr's body is Markdown: the name escaped there.)
            let named = t.contains("filter.evil.clean") || t.contains(r"filter\.evil\.clean");
            assert!(named, "{args}: {t}");
        }
        if args.starts_with("merge") {
            assert_eq!(out.status.code(), Some(1), "{args}: {t}");
        }
    }
    assert_eq!(ran(&env), "", "a driver ran");
    assert_eq!(git(&repo, &["branch", "--list", "i"]), "");
    // No scratch worktree left: the person's checkout and the two teammates'.
    let list = git(&repo, &["worktree", "list", "--porcelain"]);
    assert_eq!(list.matches("worktree ").count(), 3, "{list}");

    // Only in alice's own worktree config: her work is refused, bob's read.
    git(&repo, &["config", "--remove-section", "filter.evil"]);
    git(&repo, &["config", "--remove-section", "merge.evil"]);
    git(&repo, &["config", "extensions.worktreeConfig", "true"]);
    fs::write(
        repo.join(".git/worktrees/alice/config.worktree"),
        format!("[filter \"evil\"]\n\tclean = {p} clean\n"),
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["--json", "--team", "t", "diff"])
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    let error = v["members"][0]["error"].as_str().unwrap_or("");
    assert!(error.contains("filter.evil.clean"), "{v}");
    assert_eq!(v["members"][1]["error"], Value::Null, "{v}");
    assert_eq!(ran(&env), "", "a driver ran");
}

/// A filter the repository had when the team started (as git-lfs installs one) runs as
/// before: its work is read and merged through it.
#[test]
fn a_filter_there_at_the_start_keeps_working() {
    let env = TestEnv::new();
    let repo = env.dir.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let prog = recorder(&env, "lfs");
    let p = prog.to_str().unwrap();
    git(
        &repo,
        &["config", "filter.lfs.clean", &format!("{p} clean %f")],
    );
    git(
        &repo,
        &["config", "filter.lfs.smudge", &format!("{p} smudge %f")],
    );
    git(&repo, &["config", "filter.lfs.required", "true"]);
    fs::write(repo.join(".gitattributes"), "*.dat filter=lfs\n").unwrap();
    fs::write(repo.join("notes.md"), "one\n").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    crate::common::create_worktree_team(&env, &["alice"]);
    let tree = env.data_dir().join("worktrees");
    let tree = fs::read_dir(&tree).unwrap().next().unwrap().unwrap().path();
    let tree = tree.join("alice");
    commit(&tree, "big.dat", "data\n");
    fs::write(tree.join("big.dat"), "more data\n").unwrap();
    fs::remove_file(env.dir.path().join("ran.log")).unwrap();
    let out = env
        .cmd()
        .args(["--json", "--team", "t", "diff"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let v = parse(&out.stdout);
    assert_eq!(v["members"][0]["error"], Value::Null, "{v}");
    assert_eq!(v["members"][0]["files"][0]["path"], "big.dat", "{v}");
    env.cmd()
        .args(["--team", "t", "merge", "--into", "i"])
        .assert()
        .success();
    assert_eq!(git(&repo, &["show", "i:big.dat"]), "data");
    assert!(ran(&env).contains("lfs clean"), "{}", ran(&env));
    assert!(ran(&env).contains("lfs smudge"), "{}", ran(&env));
}

/// The settings a teammate could give its worktree by pointing its `.git` file at a git dir of
/// its own: a hook, an fsmonitor, a filter.
fn evil_gitdir(env: &TestEnv, repo: &Path) -> PathBuf {
    let evil = env.dir.path().join("evil");
    git(
        env.dir.path(),
        &[
            "clone",
            "-q",
            "--no-checkout",
            repo.to_str().unwrap(),
            "evil",
        ],
    );
    hooks_in(env, &evil.join("hooks"));
    let prog = recorder(env, "evil-prog");
    let p = prog.to_str().unwrap();
    for (k, v) in [
        ("core.hooksPath", evil.join("hooks").to_str().unwrap()),
        ("core.fsmonitor", p),
        ("filter.evil.clean", p),
        ("filter.evil.required", "true"),
    ] {
        git(&evil, &["config", k, v]);
    }
    evil.join(".git")
}

/// A worktree whose `.git` file points at a git dir the teammate made, or whose admin folder's
/// `commondir` does, or whose `.git` is a folder or a link: teamctl runs no git there, and
/// says which worktree and why.
#[test]
fn a_worktree_pointed_at_another_git_dir_is_refused() {
    let env = TestEnv::new();
    let (repo, trees) = busy_team(&env);
    let alice = &trees[0].1;
    commit(alice, ".gitattributes", "* filter=evil\n");
    let evil = evil_gitdir(&env, &repo);
    let dot_git = alice.join(".git");
    let original = fs::read_to_string(&dot_git).unwrap();
    fs::write(&dot_git, format!("gitdir: {}\n", evil.display())).unwrap();
    for (args, out) in every_verb(&env) {
        let t = text(&out);
        if !args.starts_with("export") && !args.contains("status") {
            assert!(t.contains(".git"), "{args}: {t}");
        }
        if args.starts_with("merge") {
            assert_eq!(out.status.code(), Some(1), "{args}: {t}");
        }
    }
    assert_eq!(ran(&env), "", "the teammate's settings ran");

    // The admin folder's commondir pointed at the teammate's git dir.
    fs::write(&dot_git, &original).unwrap();
    let admin = repo.join(".git/worktrees/alice");
    fs::write(admin.join("commondir"), format!("{}\n", evil.display())).unwrap();
    let refused = |env: &TestEnv| {
        let out = env
            .cmd()
            .args(["--json", "--team", "t", "diff"])
            .output()
            .unwrap();
        let v = parse(&out.stdout);
        let e = v["members"][0]["error"].as_str().unwrap_or("").to_string();
        assert_eq!(v["members"][1]["error"], Value::Null, "{v}");
        e
    };
    assert!(refused(&env).contains("commondir"));
    fs::write(admin.join("commondir"), "../..\n").unwrap();
    assert_eq!(refused(&env), "");

    // A `.git` that is a link to the admin folder, or a folder.
    fs::remove_file(&dot_git).unwrap();
    std::os::unix::fs::symlink(&admin, &dot_git).unwrap();
    assert!(refused(&env).contains(".git"));
    fs::remove_file(&dot_git).unwrap();
    fs::create_dir(&dot_git).unwrap();
    assert!(refused(&env).contains(".git"));
    // delete keeps it, saying why; bob's is removed.
    let out = env
        .cmd()
        .args(["delete", "t", "--json", "--timeout", "1s"])
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    assert_eq!(v["worktrees"][0]["action"], "kept", "{v}");
    assert!(
        v["worktrees"][0]["reason"]
            .as_str()
            .unwrap()
            .contains(".git")
    );
    assert_eq!(v["worktrees"][1]["action"], "removed", "{v}");
    assert!(alice.exists());
    assert_eq!(ran(&env), "", "the teammate's settings ran");
}

/// A repository a teammate nests in its worktree as a submodule, with a filter of its own
/// config: `git status` and `git diff` would run git inside it (under that config) to tell
/// whether it changed; teamctl reads it by the commit the worktree records, and runs nothing.
#[test]
fn a_teammates_submodule_runs_nothing_of_its_own_config() {
    let env = TestEnv::new();
    let (_, trees) = busy_team(&env);
    let sub = trees[0].1.join("sub");
    fs::create_dir(&sub).unwrap();
    git(&sub, &["init", "-q", "-b", "main"]);
    commit(&sub, "s.txt", "s\n");
    git(&trees[0].1, &["add", "sub"]);
    git(&trees[0].1, &["commit", "-q", "-m", "sub"]);
    let prog = recorder(&env, "sub-filter");
    git(&sub, &["config", "filter.ev.clean", prog.to_str().unwrap()]);
    fs::write(sub.join(".gitattributes"), "* filter=ev\n").unwrap();
    // Same content, a later time: git must read the file again to tell.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    fs::File::options()
        .append(true)
        .open(sub.join("s.txt"))
        .unwrap()
        .set_modified(later)
        .unwrap();
    for (args, out) in every_verb(&env) {
        assert!(out.status.success(), "{args}: {}", text(&out));
    }
    assert_eq!(ran(&env), "", "the submodule's filter ran");
}

/// A sandboxed team (`sandbox = true`, a clone each) whose alice committed, left a change, and
/// chose planted programs by her `.gitattributes`; a branch `review` for `pr`. Returns the
/// repository and alice's clone.
fn sandboxed_team(env: &TestEnv) -> (PathBuf, PathBuf) {
    let repo = env.dir.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    commit(&repo, "notes.md", "one\n");
    git(&repo, &["branch", "review", "main"]);
    let file = env.dir.path().join("t.toml");
    fs::write(
        &file,
        "name = \"t\"\ncwd = \"repo\"\nworktree = true\nsandbox = true\n\
         [[member]]\nname = \"alice\"\nbrief = \"b\"\n",
    )
    .unwrap();
    env.cmd()
        .args(["create", "--timeout", "20s", "--file"])
        .arg(&file)
        .env("TEAMCTL_CLAUDE_BIN", crate::common::fake_claude())
        .assert()
        .success();
    let clones = env.data_dir().join("worktrees");
    let clone = fs::read_dir(clones)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let clone = clone.join("alice");
    assert!(clone.join(".git/commondir").is_file(), "not a clone");
    commit(&clone, ".gitattributes", "* diff=evil merge=evil\n");
    commit(&clone, "a.txt", "a\n");
    fs::write(clone.join("notes.md"), "one\nmore\n").unwrap();
    (repo, clone)
}

/// Appends `text` to the clone's `.git/config`, as a teammate would if its sandbox let it
/// (it keeps the file read-only): no git is run in the clone to do it.
fn plant(clone: &Path, text: &str) {
    let config = clone.join(".git/config");
    let mut all = fs::read_to_string(&config).unwrap();
    all.push_str(text);
    fs::write(config, all).unwrap();
}

/// A sandboxed teammate's own clone with every program setting planted in its `.git/config`
/// and hooks in its `.git/hooks`: every verb, the fetch that brings its branch home first
/// among them (upload-pack runs in the clone, under its config), runs none of them, and its
/// work lands. A filter driver planted there is named and never run; a clone whose `.git` was
/// replaced by a link to a git dir of the teammate's is refused, and `delete` keeps it.
#[test]
fn a_sandboxed_clone_brought_home_runs_nothing_it_planted() {
    let Some((env, _server)) = crate::common::tmux_env() else {
        return;
    };
    if !crate::common::bwrap_works() {
        return;
    }
    let (repo, clone) = sandboxed_team(&env);
    hooks_in(&env, &clone.join(".git/hooks"));
    let planted_hooks = env.dir.path().join("planted-hooks");
    hooks_in(&env, &planted_hooks);
    let p = recorder(&env, "planted");
    let p = p.display();
    plant(
        &clone,
        &format!(
            "[core]\n\thooksPath = {}\n\tfsmonitor = {p}\n\tpager = {p}\n\talternateRefsCommand = \
             {p}\n\tsshCommand = {p}\n[uploadpack]\n\tpackObjectsHook = {p}\n[diff]\n\texternal = \
             {p}\n[diff \"evil\"]\n\ttextconv = {p}\n\tcommand = {p}\n[gc]\n\tauto = 1\n\t\
             autoDetach = false\n[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {p}\n",
            planted_hooks.display()
        ),
    );
    for (args, out) in every_verb(&env) {
        assert!(out.status.success(), "{args}: {}", text(&out));
    }
    assert_eq!(ran(&env), "", "the clone's planted programs ran");
    assert_eq!(
        git(&repo, &["show", "i:a.txt"]),
        "a",
        "its work did not land"
    );

    // A filter driver in the clone's own config, chosen by its attributes: named, never run.
    plant(
        &clone,
        &format!(
            "[filter \"evil\"]\n\tclean = {p} clean\n\tsmudge = {p} smudge\n\tprocess = {p} \
             process\n\trequired = true\n"
        ),
    );
    fs::write(clone.join(".gitattributes"), "* filter=evil diff=evil\n").unwrap();
    let v = parse(
        &env.cmd()
            .args(["--json", "--team", "t", "diff"])
            .output()
            .unwrap()
            .stdout,
    );
    let error = v["members"][0]["error"].as_str().unwrap_or("");
    assert!(error.contains("filter.evil.clean"), "{v}");
    let out = env
        .cmd()
        .args(["--team", "t", "merge", "--into", "j"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("filter.evil.clean"), "{}", text(&out));
    assert_eq!(ran(&env), "", "a planted driver ran");

    // The clone's .git replaced by a link to a git dir of the teammate's.
    let evil = evil_gitdir(&env, &repo);
    fs::rename(clone.join(".git"), clone.join(".git-was")).unwrap();
    std::os::unix::fs::symlink(&evil, clone.join(".git")).unwrap();
    let out = env.cmd().args(["--team", "t", "diff"]).output().unwrap();
    let said = text(&out);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("not a sandboxed teammate's clone"), "{said}");
    let out = env
        .cmd()
        .args(["delete", "t", "--json", "--timeout", "10s"])
        .output()
        .unwrap();
    let v = parse(&out.stdout);
    assert_eq!(v["worktrees"][0]["action"], "kept", "{v}");
    assert!(clone.is_dir());
    assert_eq!(ran(&env), "", "the teammate's settings ran");
}
