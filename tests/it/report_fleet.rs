//! `teamctl report --html --out FILE`: the fleet's page. One self-contained page (the same
//! policy as report.html) with a row per team, the cost by team as bars, each folder record's
//! own page linked by a relative path and an archive named; hostile text from a record stays
//! text; the Markdown and --json outputs are as without --html; a symlink at FILE is refused.

use std::fs;
use std::path::Path;

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{TestEnv, run_json, tags};

/// Text a teammate (or a run's name, a reason) could carry to make markup or a link.
const ATTACK: &str = "<script>alert(1)</script><img src=x onerror=alert(2)>\
    <a href=\"javascript:alert(3)\">x</a> \u{202e}rtl https://evil.example/";

/// The tags the fleet page writes.
const TAGS: &[&str] = &[
    "!doctype", "html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "p",
    "strong", "code", "pre", "div", "table", "tr", "th", "td", "ul", "li", "span", "br", "svg",
    "text", "rect", "a", "script",
];

/// A record folder with only a summary.json (no report.html), its run named and answered with
/// [`ATTACK`].
fn hostile_record(dir: &Path) -> std::path::PathBuf {
    let s = json!({
        "schema_version": 1, "generated_at": "2026-12-01T10:05:00.000Z", "team": "session-x",
        "run": {"name": ATTACK, "state": ATTACK, "reason": ATTACK, "result": ATTACK,
                "elapsed_ms": 61_000},
        "status": {"team": {"created_at": "2026-12-01T10:00:00.000Z"}, "members": [{}],
                   "tasks": {"pending": 0, "in_progress": 0, "completed": 1}},
        "messages": [], "result": ATTACK,
        "cost": {"cost_usd": 3.0}
    });
    let out = dir.join("hostile");
    fs::create_dir_all(&out).unwrap();
    fs::write(out.join("summary.json"), s.to_string()).unwrap();
    out
}

/// Every tag is one the page writes; the only links are the relative ones to records' pages.
fn check_markup(page: &str) -> Vec<String> {
    let mut hrefs = Vec::new();
    for (name, tag) in tags(page) {
        assert!(TAGS.contains(&name.as_str()), "tag <{tag}>");
        let t = tag.to_lowercase();
        for bad in [" on", "src=", "style=", "javascript:", "http:", "https:"] {
            assert!(!t.contains(bad), "{bad:?} in <{tag}>");
        }
        if let Some(h) = tag.strip_prefix("a href=\"") {
            let h = h.trim_end_matches('"').to_string();
            assert!(h.starts_with("./") || h.starts_with("../"), "{h}");
            hrefs.push(h);
        }
    }
    assert_eq!(page.to_lowercase().matches("<script").count(), 1);
    assert!(page.contains(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">"
    ));
    hrefs
}

#[test]
fn the_fleet_page_links_each_folder_records_page_and_keeps_hostile_text_inert() {
    let env = TestEnv::new();
    env.team("a", &[("worker", None)]);
    let records = env.dir.path().join("records");
    fs::create_dir_all(&records).unwrap();
    let folder = records.join("team a");
    run_json(
        &env,
        &["--team", "a", "export", "--out", folder.to_str().unwrap()],
    );
    let archive = records.join("team-b.tar.gz");
    run_json(
        &env,
        &["--team", "a", "export", "--out", archive.to_str().unwrap()],
    );
    let hostile = hostile_record(&records);
    let site = env.dir.path().join("site");
    fs::create_dir_all(&site).unwrap();
    let out = site.join("fleet.html");
    let args = [
        folder.to_str().unwrap(),
        archive.to_str().unwrap(),
        hostile.to_str().unwrap(),
    ];
    let plain = env.cmd().args(["report"]).args(args).output().unwrap();
    let json_plain = env
        .cmd()
        .args(["--json", "report"])
        .args(args)
        .output()
        .unwrap();
    let ran = env
        .cmd()
        .args(["report", "--html", "--out", out.to_str().unwrap()])
        .args(args)
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote the fleet page"))
        .get_output()
        .clone();
    // The Markdown is as without --html.
    assert_eq!(ran.stdout, plain.stdout);
    let page = fs::read_to_string(&out).unwrap();
    let hrefs = check_markup(&page);
    // The folder's page, relative to the page's folder, percent-encoded; the archive named.
    assert_eq!(hrefs, ["../records/team%20a/report.html"]);
    assert!(site.join(hrefs[0].replace("%20", " ")).is_file());
    assert!(
        page.contains("team-b.tar.gz <span class=\"mute\">(archive: its report.html is inside)")
    );
    assert!(page.contains("(no report.html)"));
    // Hostile text is shown, escaped, never markup.
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;")
    );
    assert!(page.contains("\\u{202e}rtl"));
    // Raw only inside the JSON block (data, never shown).
    let shown = page.split("id=\"teamctl-fleet\"").next().unwrap();
    assert!(!shown.contains('\u{202e}'));
    // The cost by team: three bars, the biggest the hostile record's $3.00.
    assert_eq!(page.matches("<rect class=\"fbar\"").count(), 3);
    assert!(page.contains("width=\"400.0\""), "{page}");
    // The embedded JSON is report --json's document.
    let open = "<script type=\"application/json\" id=\"teamctl-fleet\">";
    let start = page.find(open).unwrap() + open.len();
    let end = start + page[start..].find("</script>").unwrap();
    let embedded: Value = serde_json::from_str(&page[start..end]).unwrap();
    let want: Value = serde_json::from_slice(&json_plain.stdout).unwrap();
    assert_eq!(embedded, want);
    // --json with --html prints the same document.
    let again = env
        .cmd()
        .args(["--json", "report", "--html", "--out", out.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(again.stdout, json_plain.stdout);

    // In a real browser: nothing loaded, no error, the one link, the hostile text shown as text.
    if let Some(browser) = crate::common::browser() {
        let fleet = env.dir.path().join("fleet.json");
        fs::write(&fleet, &json_plain.stdout).unwrap();
        let seen = browser.open_fleet(
            &out,
            &fleet,
            &["<script>alert(1)</script><img src=x onerror=alert(2)>"],
        );
        assert_eq!(seen["teams"], 3);
        assert_eq!(seen["links"], 1);
        assert_eq!(seen["other_requests"], 0);
    }
}

#[test]
fn a_symlink_at_out_is_refused_and_out_needs_html() {
    let env = TestEnv::new();
    let rec = hostile_record(env.dir.path());
    let target = env.dir.path().join("elsewhere.html");
    fs::write(&target, "keep").unwrap();
    let link = env.dir.path().join("fleet.html");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    env.cmd()
        .args(["report", "--html", "--out", link.to_str().unwrap()])
        .arg(&rec)
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error:"));
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep");
    env.cmd()
        .args(["report", "--out", "x.html"])
        .arg(&rec)
        .assert()
        .code(2);
    env.cmd()
        .args(["report", "--html"])
        .arg(&rec)
        .assert()
        .code(2);
    // An unreadable record: the page is still written, naming it; exit 1.
    let out = env.dir.path().join("f.html");
    env.cmd()
        .args(["report", "--html", "--out", out.to_str().unwrap()])
        .arg(&rec)
        .arg(env.dir.path().join("missing"))
        .assert()
        .code(1);
    let page = fs::read_to_string(&out).unwrap();
    assert!(page.contains("Records that could not be read"));
    check_markup(&page);
}
