//! The move's tests: what moves and what stays, byte for byte; the journal; corrupt or
//! missing sides; the locks, taken politely and never held while the move is planned.

use super::*;
use crate::store::id;
use std::fs;

fn unread(e: &Entry) -> bool {
    e.get("read") != Some(&serde_json::Value::Bool(true))
}

fn never(_: &str) -> bool {
    false
}

/// A journal that keeps the ids noted and recorded, and the copy named.
#[derive(Default)]
struct Notes {
    noted: std::cell::RefCell<Vec<String>>,
    recorded: std::cell::RefCell<Vec<String>>,
}

impl Journal for Notes {
    fn start(&self, _: &str) -> Result<()> {
        self.noted.borrow_mut().clear();
        Ok(())
    }
    fn note(&self, e: &Entry) -> Result<()> {
        self.noted.borrow_mut().push(id::entry_id(e));
        Ok(())
    }
    fn record(&self, which: &[u32]) -> Result<()> {
        let noted = self.noted.borrow();
        self.recorded
            .borrow_mut()
            .extend(which.iter().map(|&i| noted[i as usize].clone()));
        Ok(())
    }
}

/// A journal that must not be asked to record.
struct NoAppend;

impl Journal for NoAppend {
    fn start(&self, _: &str) -> Result<()> {
        Ok(())
    }
    fn note(&self, _: &Entry) -> Result<()> {
        Ok(())
    }
    fn record(&self, _: &[u32]) -> Result<()> {
        panic!("no append")
    }
}

fn setup(from: &str, to: Option<&str>) -> (tempfile::TempDir, Loc, Loc) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("inboxes");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("alise.json"), from).unwrap();
    if let Some(to) = to {
        fs::write(dir.join("alice.json"), to).unwrap();
    }
    let root = Loc::root(tmp.path()).join("inboxes");
    (tmp, root.join("alise.json"), root.join("alice.json"))
}

const ONE: &str = "[\n  {\n    \"from\": \"worker\",\n    \"text\": \"SENDTO W1\",\n    \"summary\": \"sendto\",\n    \"timestamp\": \"2026-11-29T10:00:00.000Z\",\n    \"color\": \"blue\",\n    \"read\": false\n  },\n  {\n    \"from\": \"bob\",\n    \"text\": \"old\",\n    \"timestamp\": \"2026-11-29T09:00:00.000Z\",\n    \"read\": true\n  }\n]";

#[test]
fn moves_unread_entries_byte_for_byte_and_keeps_the_rest() {
    let target = "[\n  {\n    \"from\": \"x\",\n    \"text\": \"kept\",\n    \"n\": 1E5\n  }\n]";
    let (tmp, from, to) = setup(ONE, Some(target));
    let notes = Notes::default();
    let m = Move {
        from: &from,
        to: &to,
        pick: &unread,
        delivered: &never,
        stale: &[],
        journal: &notes,
    };
    assert_eq!(plan(&m).unwrap().appended().len(), 1);
    let moved = move_entries(&m, &LockOptions::default()).unwrap();
    let journaled = notes.recorded.borrow().clone();
    assert_eq!(
        (moved.appended().len(), moved.already().len(), moved.kept),
        (1, 0, 1)
    );
    assert_eq!(journaled.len(), 1);
    // The entry's bytes, as the source had them, now end the target.
    let element = &ONE[2..ONE.find("\n  },").unwrap() + 4];
    let got = fs::read_to_string(to.path()).unwrap();
    assert!(got.ends_with(&format!(",\n{element}\n]")), "{got}");
    assert!(got.starts_with("[\n  {\n    \"from\": \"x\""), "{got}");
    // A target not in the layout is rendered (its number as JSON.stringify writes it).
    assert!(got.contains("\"n\": 100000"), "{got}");
    let left = fs::read_to_string(from.path()).unwrap();
    assert!(
        left.contains("\"old\"") && !left.contains("SENDTO"),
        "{left}"
    );
    // Again: nothing to move, nothing written.
    let before = fs::read(to.path()).unwrap();
    let again = move_entries(&m, &LockOptions::default()).unwrap();
    assert!(again.is_empty());
    assert_eq!(fs::read(to.path()).unwrap(), before);
    let names: Vec<_> = fs::read_dir(tmp.path().join("inboxes")).unwrap().collect();
    assert_eq!(names.len(), 2, "no lock or temp file left");
}

#[test]
fn an_entry_already_in_the_target_or_the_journal_is_only_removed() {
    let copy = format!("[\n{}\n]", &ONE[2..ONE.find("\n  },").unwrap() + 4]);
    let (_tmp, from, to) = setup(ONE, Some(&copy));
    let notes = NoAppend;
    let m = Move {
        from: &from,
        to: &to,
        pick: &unread,
        delivered: &never,
        stale: &[],
        journal: &notes,
    };
    let before = fs::read(to.path()).unwrap();
    let moved = move_entries(&m, &LockOptions::default()).unwrap();
    assert_eq!((moved.appended().len(), moved.already().len()), (0, 1));
    assert_eq!(fs::read(to.path()).unwrap(), before);
    // Taken from the target by its reader since: the journal knows.
    let (_tmp, from, to) = setup(ONE, Some("[]"));
    let notes = NoAppend;
    let m = Move {
        from: &from,
        to: &to,
        pick: &unread,
        delivered: &|_| true,
        stale: &[],
        journal: &notes,
    };
    let moved = move_entries(&m, &LockOptions::default()).unwrap();
    assert_eq!((moved.appended().len(), moved.already().len()), (0, 1));
    assert_eq!(fs::read(to.path()).unwrap(), b"[]");
}

#[test]
fn a_corrupt_or_missing_side_is_left_alone() {
    let (_tmp, from, to) = setup("[{\"from\": 1,", Some("[]"));
    let notes = Notes::default();
    let m = Move {
        from: &from,
        to: &to,
        pick: &unread,
        delivered: &never,
        stale: &[],
        journal: &notes,
    };
    assert!(move_entries(&m, &LockOptions::default()).is_err());
    assert_eq!(fs::read(from.path()).unwrap(), b"[{\"from\": 1,");
    let (_tmp, from, to) = setup(ONE, Some("{\"not\": \"an array\"}"));
    let notes = Notes::default();
    let m = Move {
        from: &from,
        to: &to,
        pick: &unread,
        delivered: &never,
        stale: &[],
        journal: &notes,
    };
    assert!(move_entries(&m, &LockOptions::default()).is_err());
    assert_eq!(fs::read(from.path()).unwrap(), ONE.as_bytes());
    assert!(!lock::lock_dir(from.path()).exists());
    assert!(!lock::lock_dir(to.path()).exists());
    fs::remove_file(from.path()).unwrap();
    let err = move_entries(&m, &LockOptions::default()).unwrap_err();
    assert!(format!("{err:#}").contains("does not exist"), "{err:#}");
}

#[test]
fn a_held_second_lock_releases_the_first_while_waiting() {
    let (_tmp, from, to) = setup(ONE, Some("[]"));
    // alice.json sorts first: its lock is taken first, alise's held by someone else.
    fs::create_dir(lock::lock_dir(from.path())).unwrap();
    let notes = Notes::default();
    let m = Move {
        from: &from,
        to: &to,
        pick: &unread,
        delivered: &never,
        stale: &[],
        journal: &notes,
    };
    let watcher = {
        let first = lock::lock_dir(to.path());
        std::thread::spawn(move || {
            // The first lock must be free most of the time: sample it.
            let (mut free, mut held) = (0, 0);
            let end = Instant::now() + Duration::from_millis(600);
            while Instant::now() < end {
                if first.exists() {
                    held += 1
                } else {
                    free += 1
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            (free, held)
        })
    };
    let err = move_entries(&m, &LockOptions::with_timeout(Duration::from_millis(700))).unwrap_err();
    assert!(is_timeout(&err), "{err:#}");
    let (free, held) = watcher.join().unwrap();
    assert!(
        free * 10 >= (free + held) * 3,
        "the first lock was held {held} of {} samples",
        free + held
    );
    assert_eq!(fs::read(from.path()).unwrap(), ONE.as_bytes());
    assert_eq!(fs::read(to.path()).unwrap(), b"[]");
    assert!(!lock::lock_dir(to.path()).exists());
}

/// The move is planned with no lock held: a Claude Code-style writer (proper-lockfile's
/// mkdir lock) takes the source's lock while the move parses it, and adds a message. The
/// move then finds the source changed under its locks, plans again, and moves that message
/// too: nothing is written from the stale plan, nothing lost or doubled.
#[test]
fn a_writer_takes_the_lock_while_the_move_is_planned() {
    let (_tmp, from, to) = setup(ONE, Some("[]"));
    let second = ONE.replacen(
        "[\n",
        "[\n  {\n    \"from\": \"worker\",\n    \"text\": \"second\",\n    \"read\": false\n  },\n",
        1,
    );
    let wrote = std::cell::Cell::new(false);
    let writer = |e: &Entry| {
        if !wrote.replace(true) {
            // Taken at the first try: nobody holds it while the move plans.
            let lock = lock::lock_dir(from.path());
            fs::create_dir(&lock).expect("the source's lock is free while the move plans");
            fs::write(from.path(), &second).unwrap();
            fs::remove_dir(&lock).unwrap();
        }
        unread(e)
    };
    let notes = Notes::default();
    let m = Move {
        from: &from,
        to: &to,
        pick: &writer,
        delivered: &never,
        stale: &[],
        journal: &notes,
    };
    let moved = move_entries(&m, &LockOptions::default()).unwrap();
    let journaled = notes.recorded.borrow().clone();
    let texts: Vec<String> = moved
        .appended()
        .iter()
        .map(|e| e["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts, ["second", "SENDTO W1"]);
    assert_eq!(journaled.len(), 2);
    let target = super::super::parse_inbox(&fs::read(to.path()).unwrap(), &to).unwrap();
    assert_eq!(target.len(), 2);
    let left = fs::read_to_string(from.path()).unwrap();
    assert!(
        !left.contains("second") && left.contains("\"old\""),
        "{left}"
    );
}

/// A source not in the layout: what moves and what stays are rendered as a parse and a
/// render of the whole file would give them, and what the move says it moved (and a dry run
/// that it would) reads back as those entries, whether each text was the source's own (`{}`
/// is in the layout) or rendered again.
#[test]
fn a_source_not_in_the_layout_is_rendered_entry_by_entry() {
    let compact = r#"[{"from":"w","text":"a","read":false},{"from":"b","text":"x","n":1E5,"read":true},{},{"from":"c","text":"y","text":"z"}]"#;
    let (_tmp, from, to) = setup(compact, Some("[]"));
    let notes = Notes::default();
    let m = Move {
        from: &from,
        to: &to,
        pick: &unread,
        delivered: &never,
        stale: &[],
        journal: &notes,
    };
    let dry = plan(&m).unwrap();
    let moved = move_entries(&m, &LockOptions::default()).unwrap();
    let all = super::super::parse_inbox(compact.as_bytes(), &from).unwrap();
    let (went, stayed): (Vec<Entry>, Vec<Entry>) = all.into_iter().partition(unread);
    assert_eq!(went.len(), 3);
    assert_eq!(moved.appended().iter().collect::<Vec<_>>(), went);
    assert_eq!(dry.appended().iter().collect::<Vec<_>>(), went);
    assert_eq!((moved.already().len(), moved.kept), (0, stayed.len()));
    assert_eq!(
        fs::read_to_string(to.path()).unwrap(),
        super::super::render(&went)
    );
    assert_eq!(
        fs::read_to_string(from.path()).unwrap(),
        super::super::render(&stayed)
    );
}

/// The target's copy is written before the locks; a Claude Code-style writer of the target
/// (holding its lock meanwhile) changes it after that: under the locks the early copy is
/// removed, the target read again, and the move appends after the writer's message.
#[test]
fn a_target_changed_after_its_early_copy_is_read_again() {
    let (tmp, from, to) = setup(ONE, Some("[]"));
    let dir = tmp.path().join("inboxes");
    let lock = lock::lock_dir(to.path());
    fs::create_dir(&lock).unwrap();
    let target = to.path().to_path_buf();
    let writer = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(20);
        let early = || {
            fs::read_dir(&dir)
                .unwrap()
                .any(|e| e.unwrap().file_name().to_string_lossy().contains(".tmp."))
        };
        while !early() {
            assert!(Instant::now() < deadline, "no early copy was written");
            std::thread::sleep(Duration::from_millis(2));
        }
        fs::write(
            &target,
            "[\n  {\n    \"from\": \"bob\",\n    \"text\": \"direct\"\n  }\n]",
        )
        .unwrap();
        fs::remove_dir(&lock).unwrap();
    });
    let notes = Notes::default();
    let m = Move {
        from: &from,
        to: &to,
        pick: &unread,
        delivered: &never,
        stale: &[],
        journal: &notes,
    };
    let moved = move_entries(&m, &LockOptions::default()).unwrap();
    writer.join().unwrap();
    assert_eq!(moved.appended().len(), 1);
    let got = super::super::parse_inbox(&fs::read(to.path()).unwrap(), &to).unwrap();
    let texts: Vec<&str> = got.iter().map(|e| e["text"].as_str().unwrap()).collect();
    assert_eq!(texts, ["direct", "SENDTO W1"]);
    let names: Vec<_> = fs::read_dir(tmp.path().join("inboxes")).unwrap().collect();
    assert_eq!(names.len(), 2, "no lock, temp file or copy left");
}

/// A source that a Claude Code-style writer changes every time the move plans it: after
/// [`PLANS`] plans and the lock timeout, the move gives up with nothing written (the target
/// as it was, the source as the writer left it, nothing journaled) and leaves no lock, temp
/// file or copy.
#[test]
fn a_source_that_keeps_changing_is_given_up_with_nothing_written() {
    let (tmp, from, to) = setup(ONE, Some("[]"));
    let writes = std::cell::Cell::new(0);
    let writer = |e: &Entry| {
        let n = writes.get() + 1;
        writes.set(n);
        let version = ONE.replacen(
            "[\n",
            &format!("[\n  {{\n    \"from\": \"worker\",\n    \"text\": \"v{n}\"\n  }},\n"),
            1,
        );
        let lock = lock::lock_dir(from.path());
        fs::create_dir(&lock).expect("the source's lock is free while the move plans");
        fs::write(from.path(), version).unwrap();
        fs::remove_dir(&lock).unwrap();
        unread(e)
    };
    let notes = Notes::default();
    let m = Move {
        from: &from,
        to: &to,
        pick: &writer,
        delivered: &never,
        stale: &[],
        journal: &notes,
    };
    let err = move_entries(&m, &LockOptions::with_timeout(Duration::ZERO)).unwrap_err();
    assert!(
        format!("{err:#}").contains(&format!("it changed each of the {PLANS} times")),
        "{err:#}"
    );
    assert_eq!(fs::read_to_string(to.path()).unwrap(), "[]");
    let last = format!("\"v{}\"", writes.get());
    assert!(fs::read_to_string(from.path()).unwrap().contains(&last));
    assert!(notes.recorded.borrow().is_empty());
    let mut names: Vec<String> = fs::read_dir(tmp.path().join("inboxes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["alice.json", "alise.json"],
        "no lock, temp file or copy left"
    );
}
