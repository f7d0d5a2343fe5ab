//! Property tests (the fuzzing of issue 6; cargo-fuzz needs a nightly toolchain, which CI does
//! not have). For any inbox bytes, `store::append` either refuses and leaves the file byte for
//! byte as it was, or appends exactly one entry, keeps every earlier entry equal, and leaves
//! the file in `JSON.stringify(x, null, 2)` layout. The task parser and the task update path
//! get the same treatment. CI runs proptest's default 256 cases per property (a few seconds);
//! run longer by hand with `PROPTEST_CASES=20000 cargo test --test it props`. Failing inputs
//! proptest finds are saved under `tests/it/proptest-regressions/` and committed.

use std::fs;
use std::path::Path;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Map, Value};
use teamctl::store::format::{canonical_inbox, render};
use teamctl::store::lock::{LockOptions, lock_dir};
use teamctl::store::{self, Appended, Entry};
use teamctl::team::tasks::{self, Patch, Task};

/// A character that `inbox_bytes` turns into an escaped lone surrogate, which JavaScript
/// writes (`JSON.stringify("\ud800")`) but no Rust string can hold.
const LONE_MARK: char = '\u{e000}';
const LONE: &str = "\\ud800";

/// Numbers as text: JS-canonical ones and the forms only other writers produce.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| serde_json::to_string(&f).unwrap()),
        Just("1e+21".to_string()),
        Just("-0".to_string()),
        Just("12345678901234567890".to_string()),
        Just("1E5".to_string()),
        Just("1.0e-7".to_string()),
        Just("0.1".to_string()),
    ]
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,12}",
        any::<String>(),
        Just("\u{2028}\u{2029}\"\\/\u{0}\u{1f}é😀".to_string()),
        // Becomes an escaped lone surrogate in the file (see `LONE`).
        Just(format!("a{LONE_MARK}b")),
    ]
}

/// Arbitrary JSON as text, so number spellings survive (a `Value` would normalise them).
fn json_value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        any::<bool>().prop_map(|b| b.to_string()),
        number(),
        text().prop_map(|s| serde_json::to_string(&s).unwrap()),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((text(), inner), 0..4).prop_map(|kv| object(&kv)),
        ]
    })
}

fn object(kv: &[(String, String)]) -> String {
    let body: Vec<String> = kv
        .iter()
        .map(|(k, v)| format!("{}:{v}", serde_json::to_string(k).unwrap()))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// An inbox entry as JSON text; sometimes with a duplicated key.
fn entry_text() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((text(), json_value()), 0..5),
        any::<bool>(),
    )
        .prop_map(|(mut kv, dup)| {
            kv.insert(0, ("from".into(), "\"alice\"".into()));
            if dup {
                kv.push(("from".into(), "\"mallory\"".into()));
            }
            object(&kv)
        })
}

/// A valid inbox in one of several layouts.
fn inbox_bytes() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(entry_text(), 0..5),
        0..6u8,
        any::<bool>(),
    )
        .prop_map(|(entries, layout, lone)| {
            let compact = format!("[{}]", entries.join(","));
            let value: Value = serde_json::from_str(&compact).unwrap();
            let s = match layout {
                // Claude Code's own layout.
                0 | 1 => render(&value),
                2 => compact,
                3 => format!("{}\n", render(&value)),
                4 => render(&value).replace('\n', "\r\n"),
                // Four-space indentation.
                _ => render(&value).replace("\n  ", "\n    "),
            };
            if lone { s.replace(LONE_MARK, LONE) } else { s }.into_bytes()
        })
}

/// Byte-level damage: flip, insert, delete or cut.
fn mutate(bytes: Vec<u8>, op: u8, at: usize, b: u8) -> Vec<u8> {
    let mut v = bytes;
    let i = if v.is_empty() { 0 } else { at % v.len() };
    match op % 5 {
        0 if !v.is_empty() => v[i] = b,
        1 => v.insert(i, b),
        2 if !v.is_empty() => {
            v.remove(i);
        }
        3 => v.truncate(i),
        _ => {}
    }
    v
}

fn any_inbox() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..64),
        inbox_bytes(),
        (inbox_bytes(), any::<u8>(), any::<usize>(), any::<u8>())
            .prop_map(|(v, op, at, b)| mutate(v, op, at, b)),
    ]
}

fn new_entry() -> impl Strategy<Value = Entry> {
    entry_text().prop_map(|t| serde_json::from_str(&t).unwrap())
}

fn fast_lock() -> LockOptions {
    LockOptions::with_timeout(Duration::from_millis(100))
}

/// `v` with every number written with an exponent in the form `JSON.stringify` gives it (what
/// a re-render writes: `1E5` and `100000` are the same number to every reader).
fn js_normal(v: &Value) -> Value {
    match v {
        Value::Number(n) => match teamctl::store::format::js_number(&n.to_string()) {
            Some(js) => serde_json::from_str(&js).unwrap(),
            None => v.clone(),
        },
        Value::Array(a) => Value::Array(a.iter().map(js_normal).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), js_normal(v))).collect())
        }
        other => other.clone(),
    }
}

fn js_entries(es: &[Entry]) -> Vec<Value> {
    es.iter()
        .map(|e| js_normal(&Value::Object(e.clone())))
        .collect()
}

fn only_file(dir: &Path) -> bool {
    fs::read_dir(dir).unwrap().count() == 1
}

/// The append property; returns whether the entry was written.
fn check_append(before: &[u8], entry: &Entry) -> Result<bool, TestCaseError> {
    let tmp = tempfile::tempdir().unwrap();
    let path = teamctl::store::dir::Loc::root(tmp.path()).join("a.json");
    fs::write(&path, before).unwrap();
    // Compared with lone surrogates read as U+FFFD (the append never rewrites such an entry:
    // it splices or refuses).
    let parse = |b: &[u8]| match teamctl::store::format::replace_lone_surrogates(b) {
        Some(lossy) => store::parse_inbox(&lossy, &path),
        None => store::parse_inbox(b, &path),
    };
    let parsed_before = parse(before);
    let result = store::append(&path, entry, false, &fast_lock());
    let after = fs::read(&path).unwrap();
    prop_assert!(only_file(tmp.path()), "a lock or temp file was left");
    prop_assert!(!lock_dir(&path).exists());
    match result {
        Err(e) => {
            prop_assert_eq!(&after, &before.to_vec(), "refused ({:#}) but changed", e);
            // Refused: it does not parse, or it holds a lone surrogate teamctl cannot keep
            // through a re-render (only a canonical file is spliced without parsing).
            let lone = teamctl::store::format::replace_lone_surrogates(before).is_some();
            prop_assert!(
                parsed_before.is_err() || (lone && canonical_inbox(before).is_none()),
                "a valid inbox was refused: {:#}",
                e
            );
            Ok(false)
        }
        Ok(outcome) => {
            prop_assert_eq!(outcome, Appended::Written);
            let old = parsed_before.expect("appended to an inbox that does not parse");
            let new = parse(&after).unwrap();
            prop_assert_eq!(new.len(), old.len() + 1);
            prop_assert_eq!(js_entries(&new[..old.len()]), js_entries(&old[..]));
            prop_assert_eq!(
                js_entries(&new[old.len()..]),
                js_entries(std::slice::from_ref(entry))
            );
            // Layout: exactly what rendering the parsed value gives back (2-space indent, no
            // trailing newline, Claude Code's escaping), unless it was spliced into a file
            // that was already canonical (duplicate keys are kept as they were then).
            if canonical_inbox(before).is_some() {
                prop_assert_eq!(canonical_inbox(&after), Some(new.len()));
            } else {
                prop_assert_eq!(String::from_utf8(after).unwrap(), render(&new));
            }
            Ok(true)
        }
    }
}

proptest! {
    #[test]
    fn append_refuses_unchanged_or_appends_exactly_one(before in any_inbox(), entry in new_entry()) {
        check_append(&before, &entry)?;
    }

    /// Every valid inbox layout is accepted; after one append the file is canonical, so the
    /// next append takes the byte-splicing path.
    #[test]
    fn valid_inboxes_are_always_appended(before in inbox_bytes(), entry in new_entry()) {
        let written = check_append(&before, &entry)?;
        let lone = teamctl::store::format::replace_lone_surrogates(&before).is_some();
        prop_assert!(written || (lone && canonical_inbox(&before).is_none()));
    }

    /// The task parser never panics and says why it refuses: `parse_object` + `Task::from_raw`
    /// accept exactly objects with string `id`, `subject` and a known `status`.
    #[test]
    fn task_parser_accepts_or_explains(bytes in any_task()) {
        let path = Path::new("1.json");
        match store::parse_object(&bytes, path) {
            Err(e) => {
                let why = format!("{e:#}");
                prop_assert!(!why.is_empty());
            }
            Ok(raw) => {
                let ok = raw.get("id").is_some_and(Value::is_string)
                    && raw.get("subject").is_some_and(Value::is_string)
                    && raw
                        .get("status")
                        .and_then(Value::as_str)
                        .is_some_and(|s| tasks::STATUSES.contains(&s));
                match Task::from_raw(raw.clone(), path.into()) {
                    Ok(task) => {
                        prop_assert!(ok);
                        prop_assert_eq!(task.raw, raw);
                    }
                    Err(why) => prop_assert!(!why.is_empty()),
                }
            }
        }
    }

    /// A task update on any bytes: refused with the file unchanged, or the same object with
    /// only `status` changed, rendered in Claude Code's layout.
    #[test]
    fn task_update_refuses_unchanged_or_changes_only_status(bytes in any_task()) {
        let tmp = tempfile::tempdir().unwrap();
        let path = teamctl::store::dir::Loc::root(tmp.path()).join("1.json");
        fs::write(&path, &bytes).unwrap();
        let patch = Patch { status: Some("completed".into()), ..Patch::default() };
        let result = tasks::update(&teamctl::store::dir::Loc::root(tmp.path()), "1", &patch, &fast_lock());
        let after = fs::read(&path).unwrap();
        prop_assert!(only_file(tmp.path()), "a lock or temp file was left");
        match result {
            Err(_) => prop_assert_eq!(after, bytes),
            Ok((before, now)) => {
                let mut want = before.raw.clone();
                want.insert("status".into(), "completed".into());
                prop_assert_eq!(&now.raw, &want);
                if before.raw != want {
                    let back: Map<String, Value> = serde_json::from_slice(&after).unwrap();
                    prop_assert_eq!(js_entries(&[back]), js_entries(&[want.clone()]));
                    prop_assert_eq!(String::from_utf8(after).unwrap(), render(&want));
                } else {
                    prop_assert_eq!(after, bytes, "an unchanged task is not rewritten");
                }
            }
        }
    }
}

/// Task files: valid ones in several layouts, damaged ones, and random bytes.
fn any_task() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..48),
        valid_task(),
        (valid_task(), any::<u8>(), any::<usize>(), any::<u8>())
            .prop_map(|(v, op, at, b)| mutate(v, op, at, b)),
    ]
}

fn valid_task() -> impl Strategy<Value = Vec<u8>> {
    (
        text(),
        prop::sample::select(vec!["pending", "in_progress", "completed", "done"]),
        prop::collection::vec((text(), json_value()), 0..3),
        any::<bool>(),
    )
        .prop_map(|(subject, status, extra, pretty)| {
            let mut kv = vec![
                ("id".to_string(), "\"1\"".to_string()),
                ("subject".into(), serde_json::to_string(&subject).unwrap()),
                ("status".into(), format!("\"{status}\"")),
            ];
            kv.extend(extra);
            let s = object(&kv);
            if pretty {
                let v: Value = serde_json::from_str(&s).unwrap();
                render(&v).into_bytes()
            } else {
                s.into_bytes()
            }
        })
}

/// Inputs worth keeping (the committed corpus): each goes through the append property, and
/// each is either appended to or refused as stated.
#[test]
fn interesting_inputs() {
    let entry: Entry = serde_json::from_str(r#"{"from":"u","text":"hi"}"#).unwrap();
    let deep = format!("[{{\"a\":{}1{}}}]", "[".repeat(200), "]".repeat(200));
    let cases: &[(&[u8], bool)] = &[
        (b"[]", true),
        (b"[ ]", true),
        (b"[]\n", true),
        (b"", false),
        (b"null", false),
        (b"{}", false),
        (b"[1]", false),
        (b"\xef\xbb\xbf[]", false), // a BOM: JSON.parse refuses it too
        (b"[\n  {\n    \"n\": 1e+21\n  }\n]", true),
        (
            b"[{\"n\":1E5,\"m\":-0,\"big\":123456789012345678901234567890}]",
            true,
        ),
        (b"[{\"from\":\"a\",\"from\":\"b\"}]", true), // duplicate keys: the last wins
        (b"[\r\n  {\r\n    \"a\": 1\r\n  }\r\n]", true),
        (b"[\n  {\n    \"t\": \"\\ud800\"\n  }\n]", true), // lone surrogate, canonical
        (b"[{\"t\":\"\\ud800\"}]", false),                 // lone surrogate, would need a re-render
        (b"[{\"t\":\"\\ud83d\\ude00\"}]", true),           // an escaped pair is fine
        (b"[{\"t\":\"\xff\"}]", false),                    // not UTF-8
        (b"[{\"a\":1},]", false),
        (deep.as_bytes(), false), // deeper than serde_json's recursion limit
    ];
    for (bytes, appends) in cases {
        let got = check_append(bytes, &entry)
            .unwrap_or_else(|e| panic!("{:?}: {e}", String::from_utf8_lossy(bytes)));
        assert_eq!(got, *appends, "{:?}", String::from_utf8_lossy(bytes));
    }
}

/// An inbox holding a lone surrogate is shown with U+FFFD instead of being called corrupt.
#[test]
fn lone_surrogates_are_shown_as_replacement_characters() {
    let tmp = tempfile::tempdir().unwrap();
    let path = teamctl::store::dir::Loc::root(tmp.path()).join("a.json");
    fs::write(
        &path,
        "[\n  {\n    \"from\": \"a\",\n    \"text\": \"x\\ud800\"\n  }\n]",
    )
    .unwrap();
    let entries = store::read_inbox(&path).unwrap().unwrap();
    assert_eq!(entries[0]["text"], "x\u{fffd}");
}

/// The same through the command line: send appends after such an entry and keeps it byte for
/// byte; inbox and status read it without a warning.
#[test]
fn lone_surrogates_via_the_cli() {
    let env = crate::common::TestEnv::new();
    env.team("t", &[("alice", None)]);
    let inbox = env.inbox("t", "alice");
    let before = "[\n  {\n    \"from\": \"bob\",\n    \"text\": \"half \\ud83d\",\n    \"timestamp\": \"2026-11-29T09:00:00.000Z\"\n  }\n]";
    fs::write(&inbox, before).unwrap();
    env.cmd().args(["send", "alice", "hi"]).assert().success();
    let after = fs::read_to_string(&inbox).unwrap();
    assert!(after.starts_with(&before[..before.len() - 2]), "{after}");
    let out = env
        .cmd()
        .args(["inbox", "alice", "--json"])
        .assert()
        .success();
    let v = crate::common::Ran::stdout_json(&out);
    assert_eq!(v["messages"][0]["text"], "half \u{fffd}");
    env.cmd()
        .args(["status"])
        .assert()
        .success()
        .stderr(predicates::str::is_empty());
}
