//! `teamctl serve`'s page in headless Chromium (tests/e2e/serve-browser.js): a team whose
//! teammates wrote hostile text is shown with that text as text, a message written after the
//! page loaded shows without a reload (in eight tabs sharing one stream, and after the tab
//! holding it closed), a request planted after it shows with its command and
//! Approve (double-clicked) writes exactly one permission_response, the answer without the
//! token or from another origin writes nothing, nothing leaves the page's origin, and it fits
//! 390 px; with --read-only it shows no control. The README's picture is another scenario's
//! (serve_picture.rs).

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::bridge::fixture;
use crate::common::{TestEnv, bin, browser, read_entries};
use crate::serve::serve;

/// What a teammate could write to run a script or load something.
const HOSTILE: &str = "<script>alert(1)</script><img src=x onerror=alert(2)> \
    <a href=\"javascript:alert(3)\">click</a> <style>*{x:url(http://evil.example)}</style> \
    <svg onload=alert(4)> <iframe srcdoc=x>";

/// Team alpha (teamctl leads it) whose worker wrote [`HOSTILE`] into a message and a task.
fn hostile() -> TestEnv {
    let env = fixture();
    let lead = env.inbox("alpha", "team-lead");
    let mut entries = read_entries(&lead);
    entries.push(json!({"from": "worker", "text": HOSTILE, "summary": "s",
        "timestamp": "2026-11-29T09:59:30.000Z", "color": "blue", "read": false}));
    fs::write(&lead, serde_json::to_string_pretty(&entries).unwrap()).unwrap();
    let tasks = env.root.join("tasks/alpha");
    fs::create_dir_all(&tasks).unwrap();
    let task = json!({"id": "1", "subject": HOSTILE, "description": "d", "status": "pending",
                      "blocks": [], "blockedBy": []});
    fs::write(tasks.join("1.json"), task.to_string()).unwrap();
    env
}

/// Runs the driver against `url` in `env`; its summary line.
pub fn drive(env: &TestEnv, url: &str, extra: &[&str]) -> Option<Value> {
    let b = browser()?;
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/serve-browser.js");
    let lead = env.inbox("alpha", "team-lead");
    let out = env
        .command("node")
        .arg(driver)
        .args(["--url", url, "--team", "alpha", "--member", "worker"])
        .arg("--lead-inbox")
        .arg(&lead)
        .arg("--teamctl")
        .arg(bin())
        .arg("--chromium")
        .arg(b.chromium())
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "serve-browser.js ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    eprintln!("serve-browser.js: {summary}");
    Some(summary)
}

/// The permission responses to `id` in the worker's inbox.
fn answers_to(env: &TestEnv, id: &str) -> usize {
    let inbox = env.inbox("alpha", "worker");
    read_entries(&inbox)
        .iter()
        .filter_map(|e| e["text"].as_str())
        .filter(|t| t.contains("\"permission_response\"") && t.contains(id))
        .count()
}

#[test]
fn the_page_is_live_answers_once_and_keeps_hostile_text_inert() {
    let env = hostile();
    let s = serve(&env, &["--team", "alpha"]);
    let url = format!("{}#token={}", s.base, s.token);
    let shown = [
        "<script>alert(1)</script><img src=x onerror=alert(2)>",
        "<svg onload=alert(4)>",
    ];
    let mut args = Vec::new();
    for t in &shown {
        args.extend(["--shown", t]);
    }
    let Some(seen) = drive(&env, &url, &args) else {
        return;
    };
    let id = seen["request_id"].as_str().unwrap();
    assert_eq!(answers_to(&env, id), 1, "{seen}");
    let journal = fs::read_to_string(env.data_dir().join("serve.jsonl")).unwrap();
    let approved: Vec<&str> = journal.lines().filter(|l| l.contains(id)).collect();
    assert_eq!(approved.len(), 1, "{journal}");
    assert!(approved[0].contains("\"via\":\"web\""), "{journal}");
    assert!(seen["message_ms"].as_u64().unwrap() < 5000, "{seen}");
}

#[test]
fn read_only_shows_no_control_in_the_browser() {
    let env = hostile();
    let s = serve(&env, &["--team", "alpha", "--read-only"]);
    let url = format!("{}#token={}", s.base, s.token);
    let Some(seen) = drive(&env, &url, &["--read-only"]) else {
        return;
    };
    assert_eq!(seen["buttons"], 0);
    assert_eq!(seen["read_only_status"], 403);
    let worker = env.inbox("alpha", "worker");
    assert!(!worker.exists() || read_entries(&worker).is_empty());
}
