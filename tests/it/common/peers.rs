//! Other writers of the same files: the Node peer (Claude Code's own proper-lockfile) and many
//! teamctl processes at once (`concurrent_runs`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::TestEnv;

/// The Node peer `script` (from [`node_peer`]) with `args`, its output piped.
pub fn peer(script: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("node");
    c.arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Whether `node` and the test peer's node_modules are available. In CI (`CI` set) their
/// absence is a failure, not a skip.
pub fn node_peer() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peer");
    let ok = dir.join("node_modules/proper-lockfile").is_dir()
        && std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
    if ok {
        return Some(dir.join("peer.js"));
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "the Node test peer is not installed: run `npm ci --prefix tests/peer`"
    );
    eprintln!("skipping: the Node test peer is not installed (npm ci --prefix tests/peer)");
    None
}

/// Runs `teamctl` from `writers` threads at once, `each` times in a row per thread, with the
/// arguments `args(writer, i)`; every run must exit 0. Returns each run's stdout, writer by
/// writer, in the order each writer ran them.
pub fn concurrent_runs(
    env: &TestEnv,
    writers: usize,
    each: usize,
    args: impl Fn(usize, usize) -> Vec<String> + Sync,
) -> Vec<Vec<Vec<u8>>> {
    let args = &args;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                s.spawn(move || {
                    (0..each)
                        .map(|i| {
                            let out = env.std_cmd().args(args(w, i)).output().unwrap();
                            assert!(
                                out.status.success(),
                                "{}",
                                String::from_utf8_lossy(&out.stderr)
                            );
                            out.stdout
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}
