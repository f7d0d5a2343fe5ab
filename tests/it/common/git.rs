//! git as the suites run it: in a repository of the test's, with a fixed author and no system
//! or user configuration.

use std::path::Path;
use std::process::Command;

/// `git args` in `dir` (author `t <t@example.com>`, no system config, `HOME` at `dir`); its
/// stdout without the trailing newline. A failing git fails the test with its stderr.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim_end().to_string()
}

/// A repository `repo` with one commit on main (`notes.md`, `logo.bin`), and a team `t` made
/// from a team file whose teammates `names` each have a worktree; returns the repo and each
/// worktree, by name.
pub fn worktree_team(
    env: &crate::common::TestEnv,
    names: &[&str],
) -> (std::path::PathBuf, Vec<(String, std::path::PathBuf)>) {
    let repo = env.dir.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("notes.md"), "one\ntwo\nthree\n").unwrap();
    std::fs::write(repo.join("logo.bin"), b"\0\x01\x02").unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    create_worktree_team(env, names);
    let cfg = crate::common::json(&std::fs::read(env.root.join("teams/t/config.json")).unwrap());
    let trees = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let cwd = cfg["members"][i + 1]["cwd"].as_str().unwrap();
            (n.to_string(), std::path::PathBuf::from(cwd))
        })
        .collect();
    (repo, trees)
}

/// `create` of team `t` in the repository `repo` of the test's folder, from a team file whose
/// teammates `names` each have a worktree.
pub fn create_worktree_team(env: &crate::common::TestEnv, names: &[&str]) {
    let mut file =
        "name = \"t\"\ndescription = \"Improve the notes\"\ncwd = \"repo\"\nworktree = true\n"
            .to_string();
    for n in names {
        file.push_str(&format!("[[member]]\nname = \"{n}\"\nbrief = \"do {n}\"\n"));
    }
    let path = env.dir.path().join("t.toml");
    std::fs::write(&path, file).unwrap();
    env.cmd()
        .args(["create", "--launch", "none", "--file"])
        .arg(&path)
        .assert()
        .success();
}

/// Writes `file` in the worktree `tree` and commits it there.
pub fn commit(tree: &Path, file: &str, text: &str) {
    std::fs::write(tree.join(file), text).unwrap();
    git(tree, &["add", "--", file]);
    git(tree, &["commit", "-q", "-m", file]);
}
