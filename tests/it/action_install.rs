//! The GitHub Action's installation steps: Claude Code from npm (a version published only as
//! a native package), teamctl from a release binary used only when its checksum matches. The
//! runner, the stub teamctl and the other steps' tests are in `action.rs`.

use std::fs;
use std::process::Command;

use serde_json::Value;

use crate::action::{Runner, result_doc, stub_teamctl, tools_here, with, write_exe};

/// The platform part of Claude Code's native package name here.
fn platform() -> &'static str {
    if cfg!(target_arch = "aarch64") {
        "linux-arm64"
    } else {
        "linux-x64"
    }
}

/// Claude Code from npm: a version with the @anthropic-ai/claude-code package installs it; one
/// published only as native packages (2.1.333) installs this platform's native package.
#[test]
fn claude_code_is_installed_from_the_native_package_when_that_is_all_there_is() {
    if !cfg!(target_os = "linux") || !tools_here() {
        return;
    }
    let mut r = Runner::new();
    let stub = stub_teamctl(&mut r, &result_doc("done", "", Value::Null), 0, "");
    // A stub npm: @anthropic-ai/claude-code exists at 2.1.332 only; install makes the files the
    // real packages hold.
    write_exe(
        &stub.join("bin/npm"),
        &format!(
            r#"#!/bin/sh
printf '%s\n' "$*" >> '{d}/npm-calls'
case $1 in
    view)
        [ "$2" = @anthropic-ai/claude-code@2.1.332 ] && {{ echo 2.1.332; exit 0; }}
        echo 'npm error code E404' >&2; exit 1 ;;
    install)
        prefix=$3; for p; do pkg=$p; done
        case $pkg in
            @anthropic-ai/claude-code@*) f="$prefix/node_modules/.bin/claude" ;;
            @anthropic-ai/claude-code-{plat}@2.1.333) f="$prefix/node_modules/@anthropic-ai/claude-code-{plat}/claude" ;;
            *) echo "npm error 404 $pkg" >&2; exit 1 ;;
        esac
        mkdir -p "$(dirname "$f")" && printf '#!/bin/sh\necho "%s (Claude Code)"\n' "${{pkg##*@}}" > "$f" && chmod +x "$f" ;;
esac
"#,
            d = stub.display(),
            plat = platform()
        ),
    );
    let base = [("prompt", "p"), ("teamctl-version", "installed")];
    let version = |v: &'static str| with(&base, &[("claude-code-version", v)]);
    let run = r.run(&version("2.1.333"));
    assert_eq!(run.code, 0, "{run:#?}");
    let claude = run.steps["claude"]["claude-bin"].clone();
    assert!(
        claude.ends_with(&format!(
            "/node_modules/@anthropic-ai/claude-code-{}/claude",
            platform()
        )),
        "{claude}"
    );
    assert!(
        run.stderr["claude"].contains("Claude Code 2.1.333 (Claude Code)"),
        "{}",
        run.stderr["claude"]
    );
    let run = r.run(&version("2.1.332"));
    assert_eq!(run.code, 0);
    assert!(run.steps["claude"]["claude-bin"].ends_with("/node_modules/.bin/claude"));
    // Not published at all: exit 1, one line saying so.
    let run = r.run(&version("2.1.999"));
    assert_eq!(run.code, 1);
    assert!(
        run.stderr["claude"].contains(&format!(
            "could not install @anthropic-ai/claude-code-{}@2.1.999",
            platform()
        )),
        "{}",
        run.stderr["claude"]
    );
    let npm = fs::read_to_string(stub.join("npm-calls")).unwrap();
    assert!(npm.contains(&format!(
        "install --prefix {}/runner/claude-code.",
        r.path().display()
    )));
}

/// A release binary (teamctl-version: v…): downloaded from the repository's releases, used only
/// when its SHA-256 matches.
#[test]
fn a_release_binary_is_used_only_when_its_checksum_matches() {
    if !cfg!(target_os = "linux") || !tools_here() {
        return;
    }
    let mut r = Runner::new();
    let stub = stub_teamctl(&mut r, &result_doc("done", "", Value::Null), 0, "");
    let claude = stub.join("claude").display().to_string();
    let target = if cfg!(target_arch = "aarch64") {
        "aarch64-unknown-linux-musl"
    } else {
        "x86_64-unknown-linux-musl"
    };
    let name = format!("teamctl-v0.1.0-{target}");
    let releases = r.path().join("releases");
    let assets = releases.join("v0.1.0");
    write_exe(
        &assets.join(&name).join("teamctl"),
        "#!/bin/sh\necho 'teamctl 0.1.0'\n",
    );
    let tar = Command::new("tar")
        .args(["-czf", &format!("{name}.tar.gz"), &name])
        .current_dir(&assets)
        .status()
        .unwrap();
    assert!(tar.success());
    let sum = Command::new("sha256sum")
        .arg(format!("{name}.tar.gz"))
        .current_dir(&assets)
        .output()
        .unwrap();
    fs::write(assets.join(format!("{name}.tar.gz.sha256")), &sum.stdout).unwrap();
    r.set(
        "TEAMCTL_ACTION_RELEASES",
        format!("file://{}", releases.display()),
    );
    let inputs = [
        ("prompt", "p"),
        ("claude-bin", claude.as_str()),
        ("teamctl-version", "v0.1.0"),
        ("teamctl-repository", "owner/repo"),
    ];
    let run = r.run(&inputs);
    assert!(run.stderr["teamctl"].contains("teamctl 0.1.0"), "{run:#?}");
    assert!(run.steps["teamctl"]["teamctl-bin"].ends_with(&format!("/{name}/teamctl")));
    // A tampered archive.
    let mut bytes = fs::read(assets.join(format!("{name}.tar.gz"))).unwrap();
    bytes.extend_from_slice(b"x");
    fs::write(assets.join(format!("{name}.tar.gz")), bytes).unwrap();
    let run = r.run(&inputs);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr["teamctl"].contains("does not match its SHA-256"),
        "{}",
        run.stderr["teamctl"]
    );
    assert!(run.outputs["state"].is_empty(), "nothing ran");
}
