//! `teamctl completions` prints, byte for byte, the scripts committed under completions/ (which
//! the unit test `generated_files_are_current` keeps in step with the CLI).

use std::fs;
use std::path::Path;

use crate::common::{TestEnv, json};

#[test]
fn prints_the_committed_script_for_bash_zsh_and_fish() {
    let env = TestEnv::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    for (shell, file) in [
        ("bash", "teamctl.bash"),
        ("zsh", "_teamctl"),
        ("fish", "teamctl.fish"),
    ] {
        let out = env.cmd().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}: {out:?}");
        assert!(out.stderr.is_empty(), "{shell}: {out:?}");
        assert_eq!(
            out.stdout,
            fs::read(root.join(file)).unwrap(),
            "`teamctl completions {shell}` differs from completions/{file}"
        );
    }
}

#[test]
fn elvish_powershell_and_json() {
    let env = TestEnv::new();
    for shell in ["elvish", "powershell"] {
        let out = env.cmd().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}: {out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("teamctl"));
    }
    let out = env
        .cmd()
        .args(["--json", "completions", "bash"])
        .output()
        .unwrap();
    let v = json(&out.stdout);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["shell"], "bash");
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/teamctl.bash");
    assert_eq!(v["script"], fs::read_to_string(committed).unwrap());
}

#[test]
fn an_unknown_shell_is_a_usage_error() {
    let env = TestEnv::new();
    env.cmd()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stdout("");
}

/// Works without a config dir or a home: it needs nothing but the binary.
#[test]
fn needs_no_config_dir() {
    let env = TestEnv::new();
    env.cmd()
        .args([
            "--claude-dir",
            "/nonexistent/teamctl-test",
            "completions",
            "fish",
        ])
        .env_remove("HOME")
        .assert()
        .success();
}
