//! `teamctl report`: records (folders and .tar.gz) side by side, in Markdown and JSON; a record
//! that cannot be read is named and skipped (exit 1, the rest still reported); hostile text in a
//! record stays text. Records from a real export are in real_claude.rs (fleet-e2e.js).

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{Ran, TestEnv, keys};

fn summary(name: &str, state: Option<&str>, cost: Option<f64>) -> Value {
    json!({
        "schema_version": 1,
        "generated_at": "2026-12-01T10:05:00.000Z",
        "generator": "teamctl 0.1.0",
        "team": format!("session-{name}"),
        "team_folder": false,
        "run": state.map(|s| json!({"name": name, "state": s, "reason": if s == "done" { Value::Null } else { json!("it ran out") }, "result": "FINAL", "elapsed_ms": 61_000})),
        "status": {
            "team": {"name": format!("session-{name}"), "created_at": "2026-12-01T10:00:00.000Z"},
            "members": [{"name": "team-lead"}, {"name": "worker"}],
            "tasks": {"pending": 1, "in_progress": 1, "completed": 2, "blocked": 0, "ready": 1}
        },
        "tasks": [],
        "messages": [{}, {}],
        "result": format!("the answer of {name}"),
        "result_final": true,
        "transcripts": [],
        "cost": cost.map(|c| json!({"members": [], "tokens": {"input": 10, "output": 5, "cache_read": 0, "cache_creation": 0}, "cost_usd": c, "known_cost_usd": c, "cost_source": "computed"})),
        "files": [],
        "warnings": []
    })
}

/// A record as `export` writes it: a folder, or a .tar.gz holding one folder.
fn record(dir: &Path, file: &str, s: &Value) -> PathBuf {
    let body = serde_json::to_vec_pretty(s).unwrap();
    let out = dir.join(file);
    if let Some(stem) = file.strip_suffix(".tar.gz") {
        let gz = flate2::write::GzEncoder::new(
            File::create(&out).unwrap(),
            flate2::Compression::default(),
        );
        let mut tar = tar::Builder::new(gz);
        for (name, bytes) in [
            ("report.md", &b"# report\n"[..]),
            ("summary.json", &body[..]),
        ] {
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            tar.append_data(&mut h, format!("{stem}/{name}"), bytes)
                .unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap();
    } else {
        fs::create_dir_all(&out).unwrap();
        fs::write(out.join("summary.json"), body).unwrap();
        fs::write(out.join("report.md"), "# report\n").unwrap();
    }
    out
}

#[test]
fn records_side_by_side() {
    let env = TestEnv::new();
    let d = env.dir.path();
    let a = record(
        d,
        "team-0.tar.gz",
        &summary("unit-0", Some("done"), Some(1.5)),
    );
    let b = record(d, "team-1", &summary("unit-1", Some("timeout"), Some(0.25)));
    let c = record(d, "team-2.tar.gz", &summary("unit-2", Some("done"), None));
    let out = env
        .cmd()
        .arg("report")
        .args([&a, &b, &c])
        .assert()
        .success()
        .stdout_text();
    for want in [
        "# 3 teams: 2 done, 1 timeout\n",
        "| # | team | outcome | duration | cost | tasks done | report |",
        "| 1 | unit\\-0 | done | 1m 01s | $1.50 | 2 of 4 | [team 1](#team-1) |",
        "| 2 | unit\\-1 | timeout | 1m 01s | $0.25 | 2 of 4 | [team 2](#team-2) |",
        "| 3 | unit\\-2 | done | 1m 01s | — | 2 of 4 | [team 3](#team-3) |",
        "| | **total** | 2 done, 1 timeout | 3m 03s | $1.75 | 6 of 12 | |",
        "## Team 2\n\n**unit\\-1** (team session\\-unit\\-1): timeout: it ran out\n",
        "```text\nthe answer of unit-2\n```",
    ] {
        assert!(out.contains(want), "{want:?} not in\n{out}");
    }

    let v = env
        .cmd()
        .args(["report", "--json"])
        .args([&a, &b])
        .assert()
        .success()
        .stdout_json();
    assert_eq!(
        keys(&v),
        ["schema_version", "teams", "totals", "unreadable"]
    );
    assert_eq!(
        keys(&v["teams"][0]),
        [
            "cost_usd",
            "duration_ms",
            "generated_at",
            "members",
            "messages",
            "name",
            "outcome",
            "reason",
            "record",
            "result",
            "tasks",
            "team"
        ]
    );
    assert_eq!(v["teams"][0]["record"], a.to_str().unwrap());
    assert_eq!(v["teams"][0]["outcome"], "done");
    assert_eq!(v["teams"][0]["tasks"], json!({"completed": 2, "total": 4}));
    assert_eq!(v["teams"][1]["reason"], "it ran out");
    assert_eq!(
        v["totals"],
        json!({"teams": 2, "outcomes": {"done": 1, "timeout": 1}, "duration_ms": 122000,
               "cost_usd": 1.75, "tasks": {"completed": 4, "total": 8}})
    );
    assert_eq!(v["unreadable"], json!([]));
}

#[test]
fn an_unreadable_record_is_named_and_the_rest_reported() {
    let env = TestEnv::new();
    let d = env.dir.path();
    let good = record(d, "good.tar.gz", &summary("ok", Some("done"), None));
    let missing = d.join("missing.tar.gz");
    let junk = d.join("junk.tar.gz");
    fs::write(&junk, "not gzip").unwrap();
    let empty = d.join("empty");
    fs::create_dir(&empty).unwrap();
    let newer = record(d, "newer", &json!({"schema_version": 2, "team": "x"}));
    let run = || {
        let mut c = env.cmd();
        c.arg("report")
            .args([&missing, &good, &junk, &empty, &newer]);
        c
    };
    let out = run()
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "warning: skipped {}: could not read it",
            missing.display()
        )))
        .stderr(predicate::str::contains("not a teamctl record"))
        .stderr(predicate::str::contains(
            "schema_version 2; this teamctl reads 1",
        ))
        .stderr(predicate::str::ends_with(
            "error: 4 of 5 record(s) could not be read\n",
        ))
        .stdout_text();
    assert!(out.contains("# 1 team: 1 done"), "{out}");
    assert!(
        out.contains(&format!("- `{}`: could not read it", missing.display())),
        "{out}"
    );
    assert!(out.contains("**Records that could not be read:**"), "{out}");
    let v = run().arg("--json").assert().code(1).stdout_json();
    assert_eq!(v["teams"].as_array().unwrap().len(), 1);
    assert_eq!(v["unreadable"].as_array().unwrap().len(), 4);
    assert_eq!(keys(&v["unreadable"][0]), ["error", "record"]);
}

#[test]
fn hostile_text_in_a_record_stays_text() {
    let env = TestEnv::new();
    let mut s = summary("x", Some("failed"), None);
    s["run"]["name"] = json!("a|b <img src=x> [l](http://e) \u{1b}[31m\u{202e}");
    s["run"]["reason"] = json!("line\nbreak | pipe");
    s["result"] = json!("```\n# not a heading\n<script>");
    let r = record(env.dir.path(), "evil", &s);
    let out = env
        .cmd()
        .arg("report")
        .arg(&r)
        .assert()
        .success()
        .stdout_text();
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{202e}'),
        "{out:?}"
    );
    let row = out.lines().find(|l| l.starts_with("| 1 |")).unwrap();
    assert!(
        row.contains("a\\|b \\<img src\\=x\\> \\[l\\]\\(http"),
        "{row}"
    );
    // Seven columns: eight unescaped pipes.
    let pipes = row
        .match_indices('|')
        .filter(|(i, _)| !row[..*i].ends_with('\\'))
        .count();
    assert_eq!(pipes, 8, "{row}");
    assert!(
        out.contains("````text\n```\n# not a heading\n<script>\n````"),
        "{out}"
    );
}

#[test]
fn usage_error_without_records() {
    let env = TestEnv::new();
    env.cmd().arg("report").assert().code(2);
}

/// An archive's paths decide nothing: only `summary.json` at its top (or in its one folder)
/// counts, and nothing is unpacked.
#[test]
fn an_archive_is_read_not_unpacked() {
    let env = TestEnv::new();
    let d = env.dir.path();
    let out = d.join("deep.tar.gz");
    let gz =
        flate2::write::GzEncoder::new(File::create(&out).unwrap(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let body = serde_json::to_vec(&summary("x", Some("done"), None)).unwrap();
    let mut h = tar::Header::new_gnu();
    h.set_size(body.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    tar.append_data(&mut h, "a/b/summary.json", &body[..])
        .unwrap();
    tar.into_inner().unwrap().finish().unwrap();
    let before: Vec<_> = fs::read_dir(d).unwrap().collect();
    env.cmd()
        .arg("report")
        .arg(&out)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no summary.json in the archive"));
    assert_eq!(fs::read_dir(d).unwrap().count(), before.len());
}

/// What is inside a record is not trusted: a `summary.json` that is a FIFO, a symlink (to a
/// record elsewhere, to a device) or, in an archive, a link entry is skipped at once, never
/// followed and never waited on, and named on stderr; so is a record that is a FIFO or a
/// device. The others are reported and the exit code is 1 at the end.
#[test]
fn a_summary_that_is_not_a_file_is_skipped_at_once() {
    use std::os::unix::fs::symlink;
    let env = TestEnv::new();
    let d = env.dir.path();
    let good = record(d, "good", &summary("ok", Some("done"), None));
    let elsewhere = record(d, "elsewhere", &summary("secret", Some("done"), None));
    let fifo = d.join("fifo");
    fs::create_dir(&fifo).unwrap();
    let mkfifo = |p: &Path| {
        rustix::fs::mkfifoat(rustix::fs::CWD, p, rustix::fs::Mode::from_raw_mode(0o600)).unwrap()
    };
    mkfifo(&fifo.join("summary.json"));
    let link = d.join("link");
    fs::create_dir(&link).unwrap();
    symlink(elsewhere.join("summary.json"), link.join("summary.json")).unwrap();
    let device = d.join("device");
    fs::create_dir(&device).unwrap();
    symlink("/dev/zero", device.join("summary.json")).unwrap();
    let pipe = d.join("pipe.tar.gz");
    mkfifo(&pipe);
    // An archive whose summary.json is a link entry to a file outside.
    let linked = d.join("linked.tar.gz");
    let gz =
        flate2::write::GzEncoder::new(File::create(&linked).unwrap(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Symlink);
    h.set_size(0);
    tar.append_link(
        &mut h,
        "linked/summary.json",
        elsewhere.join("summary.json"),
    )
    .unwrap();
    tar.into_inner().unwrap().finish().unwrap();

    let out = env
        .cmd()
        .timeout(std::time::Duration::from_secs(20))
        .arg("report")
        .args([
            &fifo,
            &good,
            &link,
            &device,
            &pipe,
            Path::new("/dev/zero"),
            &linked,
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::ends_with(
            "error: 6 of 7 record(s) could not be read\n",
        ))
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("# 1 team: 1 done"), "{stdout}");
    assert!(!stdout.contains("secret"), "a link was followed: {stdout}");
    let skipped = |r: &Path, why: &str| {
        let line = err
            .lines()
            .find(|l| l.starts_with(&format!("warning: skipped {}:", r.display())))
            .unwrap_or_else(|| panic!("{} not named: {err}", r.display()));
        assert!(line.contains(why), "{line}");
    };
    skipped(&fifo, "summary.json is a FIFO");
    skipped(
        &link,
        "summary.json is a symlink, which teamctl never follows",
    );
    skipped(&device, "summary.json is a symlink");
    skipped(&pipe, "is a FIFO");
    skipped(Path::new("/dev/zero"), "is a character device");
    skipped(&linked, "no summary.json in the archive");
}
