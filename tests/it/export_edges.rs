//! `teamctl export` at its edges: a transcript that grows or is missing while it is read, the
//! places it refuses to write, `delete --export`, and a restarted teammate's sessions with the
//! journal of restarts and resumes (the record itself is in `export.rs`, whose fixture this
//! uses).

use std::fs;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::common::{Ran, run_json};
use crate::export::{
    SID, WORKER_SID, check_markdown, fixture, lead_transcript, lines, snapshot, worker_transcript,
};

#[test]
fn a_transcript_appended_during_the_export_is_copied_to_a_whole_line() {
    let env = fixture();
    let t = lead_transcript(&env);
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut f = fs::OpenOptions::new().append(true).open(&t).unwrap();
            let mut i = 0u64;
            // At most about 8 MB, however slow the exports are.
            while !stop.load(Ordering::SeqCst) && i < 25_000 {
                // A line in two writes: a reader can see half of it.
                let line = format!(
                    "{}\n",
                    json!({"type":"progress","n":i,"pad":"x".repeat(300)})
                );
                let (a, b) = line.split_at(line.len() / 2);
                f.write_all(a.as_bytes()).unwrap();
                f.flush().unwrap();
                f.write_all(b.as_bytes()).unwrap();
                i += 1;
                // Paced, so the writes span the exports.
                if i.is_multiple_of(20) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        });
        for n in 0..5 {
            let out = env.dir.path().join(format!("rec{n}"));
            env.cmd()
                .args(["--team", "demo", "export", "--out", out.to_str().unwrap()])
                .assert()
                .success();
            let copy = fs::read(out.join(format!("transcripts/team-lead/{SID}.jsonl"))).unwrap();
            assert!(copy.ends_with(b"\n"));
            for line in copy.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                serde_json::from_slice::<Value>(line).expect("every copied line is whole");
            }
            let mut now = vec![0; copy.len()];
            fs::File::open(&t).unwrap().read_exact(&mut now).unwrap();
            assert_eq!(now, copy, "the copy is what the file held");
            let s: Value =
                serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
            assert_eq!(s["transcripts"][0]["bytes"], copy.len());
        }
        stop.store(true, Ordering::SeqCst);
    });
}

#[test]
fn a_missing_transcript_is_said_and_the_rest_recorded() {
    let env = fixture();
    fs::remove_file(lead_transcript(&env)).unwrap();
    fs::remove_file(worker_transcript(&env)).unwrap();
    let out = env.dir.path().join("rec.tgz");
    let assert = env
        .cmd()
        .args(["--team", "demo", "export", "--out", out.to_str().unwrap()])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "warning: the lead's transcript ({SID}.jsonl) was not found"
        )));
    assert!(assert.stdout_text().contains("0 transcripts"));
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(fs::File::open(&out).unwrap()));
    let mut summary = String::new();
    for e in ar.entries().unwrap() {
        let mut e = e.unwrap();
        if e.path().unwrap().ends_with("summary.json") {
            e.read_to_string(&mut summary).unwrap();
        }
    }
    let s: Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(
        s["transcripts"],
        json!([{"member":"team-lead","session_id":SID,"kind":"lead","path":null,"source":null,"lines":0,"bytes":0}])
    );
    assert_eq!(s["result"], Value::Null);
    assert_eq!(s["messages"].as_array().unwrap().len(), 3);
    // A team teamctl leads has no lead transcript to miss.
    env.lead_by_teamctl("demo");
    env.cmd()
        .args(["--team", "demo", "export", "--report-only"])
        .assert()
        .success()
        .stderr(predicate::str::contains("transcript").not());
}

#[test]
fn bad_places_to_write_are_refused() {
    let env = fixture();
    let before = snapshot(&env.root);
    // Into the config dir: never.
    let inside = env.root.join("teams/demo/rec");
    env.cmd()
        .args([
            "--team",
            "demo",
            "export",
            "--out",
            inside.to_str().unwrap(),
        ])
        .assert()
        .code(1)
        .stderr(
            predicate::str::starts_with("error: --out")
                .and(predicate::str::contains("inside the Claude config dir")),
        );
    assert_eq!(snapshot(&env.root), before);
    // Over something that exists.
    let taken = env.dir.path().join("taken.tar.gz");
    fs::write(&taken, "keep").unwrap();
    env.cmd()
        .args(["--team", "demo", "export", "--out", taken.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(fs::read(&taken).unwrap(), b"keep");
    // Usage errors.
    env.cmd()
        .args(["--team", "demo", "export", "--report-only", "--out", "x"])
        .assert()
        .code(2);
    env.cmd()
        .args(["--team", "nope", "export"])
        .assert()
        .code(1)
        .stderr(predicate::str::starts_with("error: team 'nope' not found"));
    // The default path: ./<team>-record-<time> in the current directory.
    env.cmd()
        .args(["--team", "demo", "export"])
        .assert()
        .success();
    assert!(
        env.dir
            .path()
            .join("demo-record-20261129-100000/summary.json")
            .is_file()
    );
}

#[test]
fn delete_writes_the_record_before_removing_the_team() {
    let env = fixture();
    env.lead_by_teamctl("demo");
    let out = env.dir.path().join("last.tar.gz");
    let v = run_json(&env, &["delete", "demo", "--export", out.to_str().unwrap()]);
    assert_eq!(v["export"]["out"], out.display().to_string());
    assert_eq!(v["export"]["format"], "tar_gz");
    assert_eq!(v["export"]["transcripts"], 3);
    assert!(out.is_file());
    assert!(!env.root.join("teams/demo").exists() && !env.root.join("tasks/demo").exists());
    // The page is in the archive too (the same writer as export's).
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(fs::File::open(&out).unwrap()));
    let page = ar
        .entries()
        .unwrap()
        .map(|e| e.unwrap())
        .find(|e| e.path().unwrap().ends_with("report.html"))
        .map(|mut e| {
            let mut s = String::new();
            e.read_to_string(&mut s).unwrap();
            s
        })
        .expect("report.html in the archive");
    assert!(page.contains("id=\"teamctl-record\""), "{page}");

    // A record that cannot be written: nothing is removed.
    let env = fixture();
    env.lead_by_teamctl("demo");
    let taken = env.dir.path().join("taken");
    fs::create_dir(&taken).unwrap();
    fs::write(taken.join("x"), "").unwrap();
    env.cmd()
        .args(["delete", "demo", "--export", taken.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "so its folders were left in place",
        ));
    assert!(env.root.join("teams/demo/config.json").is_file());
    assert!(env.root.join("tasks/demo/1.json").is_file());
}

/// A teammate restarted under a new session has each of its sessions in the record (as
/// `status` finds them), and its cost counts both.
#[test]
fn a_restarted_teammate_has_each_session_recorded() {
    let env = fixture();
    let again =
        worker_transcript(&env).with_file_name("9a8b7c6d-0000-4000-8000-00000000f00d.jsonl");
    fs::write(
        &again,
        lines(&[
            json!({"type":"assistant","teamName":"demo","agentName":"worker","timestamp":"2026-11-29T09:57:00.000Z","message":{"id":"msg_w2","model":"claude-opus-5-5","content":[{"type":"text","text":"back"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}}),
        ]),
    )
    .unwrap();
    let out = env.dir.path().join("rec");
    run_json(
        &env,
        &["--team", "demo", "export", "--out", out.to_str().unwrap()],
    );
    let s: Value = serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
    let sessions: Vec<&str> = s["transcripts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["member"] == "worker")
        .map(|t| {
            assert_eq!(t["kind"], "pane");
            t["session_id"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        sessions,
        [WORKER_SID, "9a8b7c6d-0000-4000-8000-00000000f00d"]
    );
    assert_eq!(
        fs::read(out.join("transcripts/worker/9a8b7c6d-0000-4000-8000-00000000f00d.jsonl"))
            .unwrap(),
        fs::read(&again).unwrap()
    );
    let worker = s["cost"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "worker")
        .unwrap();
    assert_eq!(worker["tokens"]["input"], 20);
}

/// teamctl's journal of restarts and resumes goes into the record: summary.json has every line,
/// report.md the last 50 with how many there were, a reason in it escaped as any short field.
#[test]
fn the_restarts_and_resumes_are_in_summary_and_report() {
    let env = fixture();
    fs::create_dir_all(env.data_dir()).unwrap();
    let lines: Vec<Value> = (0..60)
        .map(|i| {
            json!({"at": format!("2026-12-03T10:{:02}:00.000Z", i), "team": "demo",
                "member": "worker", "action": if i % 2 == 0 { "restart" } else { "resume" },
                "session_id": if i == 59 { Value::Null } else { json!("0123456789abcdef") },
                "pane": "%1", "why": format!("dead <b>{i}</b> [x](http://e.test) @here")})
        })
        .collect();
    let other = json!({"at": "2026-12-03T10:00:00.000Z", "team": "other", "member": "worker",
        "action": "restart", "session_id": null, "pane": "%9", "why": "dead"});
    let journal: String = lines
        .iter()
        .chain([&other])
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(env.data_dir().join("actions.jsonl"), journal).unwrap();
    let out = env.dir.path().join("rec");
    env.cmd()
        .args(["--team", "demo", "export", "--out", out.to_str().unwrap()])
        .assert()
        .success();
    let s: Value = serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["actions"], Value::Array(lines));
    let report = fs::read_to_string(out.join("report.md")).unwrap();
    check_markdown(&report);
    let section = report.split("### Restarts and resumes\n\n").nth(1).unwrap();
    assert!(section.starts_with("The last 50 of 60; summary.json has every one.\n"));
    let rows: Vec<&str> = section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    assert_eq!(rows.len(), 50, "{section}");
    assert!(
        rows[0].starts_with("| 2026-12-03 10:10:00 | worker | restarted |"),
        "{}",
        rows[0]
    );
    assert!(
        rows[49].ends_with(
            "| resumed | dead \\<b\\>59\\<\\/b\\> \\[x\\]\\(http\\:\\/\\/e\\.test\\) \\@here | a new one |"
        ),
        "{}",
        rows[49]
    );
    assert!(rows[48].ends_with("| `01234567` |"), "{}", rows[48]);
}
