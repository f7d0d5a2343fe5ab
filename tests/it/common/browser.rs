//! A record's report.html in a real browser: headless Chromium (Debian's `chromium`, or the one
//! `CHROMIUM_BIN` names) driven by playwright-core from tests/e2e, through the driver
//! `tests/e2e/report-browser.js`; and a page's tags as written ([`tags`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

/// Headless Chromium and the driver that opens a page in it.
pub struct Browser {
    chromium: PathBuf,
    driver: PathBuf,
}

/// The browser when Chromium and playwright-core (`npm ci --prefix tests/e2e`) are installed;
/// in CI (`CI` set) their absence is a failure, elsewhere a skip that says what to install.
pub fn browser() -> Option<Browser> {
    let e2e = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
    let chromium = std::env::var_os("CHROMIUM_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    let installed = chromium.is_file() && e2e.join("node_modules/playwright-core").is_dir();
    if installed {
        return Some(Browser {
            chromium,
            driver: e2e.join("report-browser.js"),
        });
    }
    let what = format!(
        "headless Chromium ({}: `apt-get install chromium`, or CHROMIUM_BIN) and playwright-core \
         (`npm ci --prefix tests/e2e`)",
        chromium.display()
    );
    assert!(std::env::var_os("CI").is_none(), "{what} are needed in CI");
    eprintln!("skipping: install {what} for this test");
    None
}

impl Browser {
    /// The Chromium binary.
    pub fn chromium(&self) -> &Path {
        &self.chromium
    }

    /// Opens `page` (a record's report.html) and checks it against `summary` (its
    /// summary.json): nothing loaded, no error, the embedded costs, the charts, 390 px, print,
    /// no markup from data, and each of `shown` on the page as text. Returns the driver's
    /// summary (`requests`, `load_ms`, `members`, `charts`, …).
    pub fn open(&self, page: &Path, summary: &Path, shown: &[&str]) -> Value {
        ended(self.run(page, summary, shown))
    }

    /// Opens `page` (`report --html`'s fleet page) and checks it as [`Browser::open`] does,
    /// against `fleet` (`report --json`'s document, embedded whole), its only links relative
    /// ones to records' own report.html.
    pub fn open_fleet(&self, page: &Path, fleet: &Path, shown: &[&str]) -> Value {
        ended(self.driver(page, ("--fleet", fleet), shown))
    }

    /// Runs the driver on `page` and returns how it ended (exit 1 and its `FAIL:` line on
    /// stderr when a check failed).
    pub fn run(&self, page: &Path, summary: &Path, shown: &[&str]) -> Output {
        self.driver(page, ("--summary", summary), shown)
    }

    fn driver(&self, page: &Path, against: (&str, &Path), shown: &[&str]) -> Output {
        let mut cmd = Command::new("node");
        cmd.arg(&self.driver)
            .arg("--page")
            .arg(page)
            .arg(against.0)
            .arg(against.1)
            .arg("--chromium")
            .arg(&self.chromium);
        for s in shown {
            cmd.arg("--shown").arg(s);
        }
        cmd.output().unwrap()
    }
}

/// The driver's summary line, after it passed.
fn ended(out: Output) -> Value {
    assert!(
        out.status.success(),
        "report-browser.js ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["ok"], true);
    eprintln!(
        "report-browser.js: {summary}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    summary
}

/// The tags of a page as written, in order: each as `(name, text)`, the text what stands
/// between its `<` and `>`, the name its element's, lowercased (`/p` is `p`). A `<` without its
/// `>` fails the test.
pub fn tags(page: &str) -> Vec<(String, &str)> {
    let mut tags = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find('<') {
        let end = rest[i..].find('>').expect("a closed tag") + i;
        let tag = &rest[i + 1..end];
        let name = tag
            .trim_start_matches('/')
            .split([' ', '/'])
            .next()
            .unwrap()
            .to_lowercase();
        tags.push((name, tag));
        rest = &rest[end + 1..];
    }
    tags
}
