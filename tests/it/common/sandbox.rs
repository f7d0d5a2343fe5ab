//! The sandbox for the suites that confine teammates: whether bubblewrap makes one here, and
//! the stand-in teammate that tries, from inside, what a sandbox forbids.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The stand-in `claude` that tries each promise of a sandbox, reports to `./sandbox-report`,
/// then plays a teammate (tests/fixtures/sandbox-try).
pub fn sandbox_try() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sandbox-try")
}

/// Whether bubblewrap makes a sandbox here; in CI (`CI` set) its absence is a failure,
/// elsewhere a skip that says what to install.
pub fn bwrap_works() -> bool {
    let ok = Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--unshare-pid", "--proc", "/proc"])
        .args(["--dev", "/dev", "--", "/bin/true"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "bubblewrap (bwrap) is needed in CI, and must make a sandbox: `apt-get install \
             bubblewrap` (docs/sandbox.md)"
        );
        eprintln!("skipping: bubblewrap (bwrap) does not make a sandbox here");
    }
    ok
}

/// The report of the stand-in in `dir`: each try and whether it went (`ok`) or not.
pub fn sandbox_report(dir: &Path) -> std::collections::BTreeMap<String, String> {
    let text = std::fs::read_to_string(dir.join("sandbox-report"))
        .unwrap_or_else(|e| panic!("no sandbox report in {}: {e}", dir.display()));
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
