//! Records read and written around a hostile teammate's files: `export` (and so `run --export`,
//! `delete --export`) copies around hostile nodes, and `report` trusts nothing inside a record
//! another job wrote. The world, its planted nodes and its checks are hostile_files.rs's.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::{Value, json};

use crate::hostile_files::{Plant, Want, check, plant, run, world};

/// `export` (and so `run --export`, `delete --export`) reads every file of the team through
/// the same handles: a symlink, FIFO, socket or folder where an inbox, `config.json`, a task,
/// `.highwatermark`, a team or task folder, a transcript or a transcript folder belongs is
/// reported on stderr and left out of the record, never followed, never waited on; the rest is
/// recorded and the export succeeds. The planted node stays as it was.
#[test]
fn export_records_around_hostile_nodes() {
    use Plant::*;
    const SID: &str = "3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d";
    const WSID: &str = "5e5e5e5e-0000-4000-8000-00000000a11c";
    let line = |v: Value| format!("{v}\n");
    // The world's team with transcripts: the lead's (cwd /tmp), an in-process bob's, alice's
    // pane session.
    let with_transcripts = || {
        let w = world();
        let proj = w.env.root.join("projects/-tmp");
        let subs = proj.join(SID).join("subagents");
        fs::create_dir_all(&subs).unwrap();
        let answer = json!({"type":"assistant","timestamp":"2026-11-29T10:00:00.000Z","message":{"id":"m1","model":"claude-opus-5-5","content":[{"type":"text","text":"LEAD"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"output_tokens":5}}});
        fs::write(proj.join(format!("{SID}.jsonl")), line(answer.clone())).unwrap();
        fs::write(subs.join("agent-abob.meta.json"), r#"{"name":"bob"}"#).unwrap();
        fs::write(subs.join("agent-abob.jsonl"), line(answer.clone())).unwrap();
        let mut pane = answer;
        pane["teamName"] = "alpha".into();
        pane["agentName"] = "alice".into();
        fs::write(proj.join(format!("{WSID}.jsonl")), line(pane)).unwrap();
        w
    };
    // Where each planted node would land in the record (a folder: nothing under it).
    let cases: &[(&str, &[Plant], &str)] = &[
        (
            "teams/alpha/inboxes/alice.json",
            &[LinkFile, Fifo, Socket, Folder],
            "team/inboxes/alice.json",
        ),
        (
            "teams/alpha/inboxes",
            &[LinkDir, Fifo, File],
            "team/inboxes",
        ),
        (
            "teams/alpha/config.json",
            &[LinkFile, Fifo, Socket, Folder],
            "team/config.json",
        ),
        (
            "tasks/alpha/1.json",
            &[LinkFile, Fifo, Socket, Folder],
            "tasks/1.json",
        ),
        (
            "tasks/alpha/.highwatermark",
            &[LinkFile, Fifo, Folder],
            "tasks/.highwatermark",
        ),
        ("tasks/alpha", &[LinkDir, Fifo, File], "tasks"),
        (
            "projects/-tmp/3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d.jsonl",
            &[LinkFile, Fifo, Socket, Folder],
            "transcripts/team-lead",
        ),
        (
            "projects/-tmp/3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d/subagents/agent-abob.jsonl",
            &[LinkFile, Fifo, Folder],
            "transcripts/bob",
        ),
        (
            "projects/-tmp/3f2b9c1e-8d4a-4f6b-9e21-7c5d0a1b2c3d/subagents",
            &[LinkDir, Fifo, File],
            "transcripts/bob",
        ),
        (
            "projects/-tmp/5e5e5e5e-0000-4000-8000-00000000a11c.jsonl",
            &[LinkFile, Fifo, Socket],
            "transcripts/alice",
        ),
        ("projects/-tmp", &[LinkDir, Fifo, File], "transcripts"),
    ];
    // Unplanted, every one of those is in the record.
    let w = with_transcripts();
    let out = w.env.dir.path().join("rec");
    let r = run(&w.env, &["export", "--out", out.to_str().unwrap()], &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for (_, _, inside) in cases {
        assert!(out.join(inside).exists(), "{inside} is in a plain record");
    }
    for (rel, plants, inside) in cases {
        for &how in *plants {
            let w = with_transcripts();
            let p = plant(&w, rel, how);
            let what = format!("export with {rel} as {how:?}");
            let out = w.env.dir.path().join("rec");
            let r = check(
                &w,
                &what,
                &["--team", "alpha", "export", "--out", out.to_str().unwrap()],
                Want::Either,
                &p,
            );
            assert_eq!(r.code, Some(0), "{what}: {}", r.stderr);
            assert!(
                !out.join(inside).exists(),
                "{what}: {inside} is in the record"
            );
            let name = Path::new(rel).file_name().unwrap().to_string_lossy();
            assert!(
                r.stderr
                    .lines()
                    .any(|l| l.starts_with("warning: ") && l.contains(name.as_ref())),
                "{what}: not reported: {}",
                r.stderr
            );
            // The record never holds what a link points at.
            assert!(!out.join(inside).exists());
            let summary = fs::read_to_string(out.join("summary.json")).unwrap();
            assert!(!summary.contains("canary"), "{what}");
        }
    }
}

/// `report` reads records other jobs wrote (CI artifacts): what is inside one is not trusted.
/// A `summary.json` that is a symlink (to a record outside, to a file that is not there), a
/// FIFO, a socket or a folder is skipped at once, never followed or waited on, named on
/// stderr, and the exit code is 1 once the others are reported; nothing is written anywhere.
#[test]
fn report_skips_hostile_records() {
    use Plant::*;
    for how in [LinkFile, LinkJson, Dangling, Fifo, Socket, Folder] {
        let w = world();
        let good = w.env.dir.path().join("good");
        let r = run(&w.env, &["export", "--out", good.to_str().unwrap()], &[]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        // The hostile record: an export whose summary.json was replaced.
        let bad = w.env.dir.path().join("bad");
        let r = run(&w.env, &["export", "--out", bad.to_str().unwrap()], &[]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        let summary = bad.join("summary.json");
        fs::remove_file(&summary).unwrap();
        match how {
            LinkFile => symlink(good.join("summary.json"), &summary).unwrap(),
            LinkJson => symlink(w.canary.join("victim.json"), &summary).unwrap(),
            Dangling => symlink(w.canary.join("new.json"), &summary).unwrap(),
            Fifo => crate::common::mkfifo(&summary),
            Socket => {
                std::os::unix::net::UnixListener::bind(&summary).unwrap();
            }
            Folder => fs::create_dir_all(summary.join("x")).unwrap(),
            _ => unreachable!(),
        }
        let what = format!("report over summary.json as {how:?}");
        let r = check(
            &w,
            &what,
            &["report", good.to_str().unwrap(), bad.to_str().unwrap()],
            Want::Either,
            &summary,
        );
        assert_eq!(r.code, Some(1), "{what}: {}", r.stderr);
        assert!(
            r.stderr.lines().any(|l| l
                .starts_with(&format!("warning: skipped {}: ", bad.display()))
                && l.contains("summary.json")),
            "{what}: not named: {}",
            r.stderr
        );
        assert!(r.stdout.contains("# 1 team"), "{what}: {}", r.stdout);
    }
}
