//! The store layer: the files themselves, exactly as Claude Code reads and writes them. It owns
//! the lock protocol ([`lock`]), the `JSON.stringify` layout ([`mod@format`]), message ids ([`id`]),
//! the folder layout and the naming rules ([`paths`]), reaching files without following a
//! symlink or opening a FIFO ([`dir`]), cheap unlocked reads (`light`), copies of files that
//! change while they are read ([`snapshot`]), Claude Code's JSON object files edited as it edits
//! them ([`object_file`]) and only where they change ([`lazy`]), inbox files read without
//! their lock (`read`), written in place through a temp file and read back (`write`), and
//! changed under their lock (`append`: the locked read-modify-write with read-back
//! verification), and moving entries between two inboxes under both their locks ([`moving`]);
//! files outside the config dir that a person or a team file names are read by [`named`].
//! It knows nothing of teams, members or features, and imports only [`crate::error`] and
//! [`crate::time`]. This module is the face: what `read`, `write` and `append` offer is used
//! as `store::…`.
//!
//! Invariants:
//! - Format: `JSON.stringify(value, null, 2)` byte for byte ([`crate::store::format`]). An append to a
//!   file already in that form splices the new element in and leaves every other byte as it
//!   was; any other file is parsed and rendered (serde_json with `preserve_order`, and
//!   `arbitrary_precision` keeping every number as its text), so entries teamctl does not touch
//!   keep their meaning, keys and order either way.
//! - Lock order: the inbox lock directory is taken before the file is read for a write and
//!   released only after the read-back; nothing else is locked meanwhile.
//! - fsync points: the temp file before the rename, the folder after it.
//! - Verification: before the lock is released the file is read back and must be byte-equal
//!   to what was written. For an append that is the previous array plus our entry, so the file
//!   parses, holds exactly one entry more, and ends with ours.
//! - Lock ownership: checked right before the rename and again at release
//!   ([`lock::LockGuard::release_if_ours`]). An append whose lock another writer took over
//!   takes it again and, by its id, appends its entry once more if that writer's write lost
//!   it; any other write reports a lock lost after its write ([`crate::error::Error::VerifyFailed`]).
//! - A file that is not a JSON array of objects is never written (an error names it).
//! - Modes: a replacement keeps the permission bits of the file it replaces (and its owner and
//!   group where the process may set them); a new file is created as Claude Code creates it,
//!   0666 & ~umask.
//! - Paths: every file is reached through [`dir`]: from the config dir down, no symlink is
//!   followed at any component, and a file is read only once `fstat` says it is a regular file
//!   (a FIFO, socket, device, folder or symlink where a file belongs is an error naming it,
//!   found before the lock is taken, and again without blocking under it).
//! - Temp files: `<file>.tmp.<8 lowercase hex>`, created exclusively, removed on any failure.
//!   One left by a killed writer is removed by the next locked write of the same file once it
//!   is older than [`STALE_TEMP`] (only that exact name pattern, only regular files).

mod append;
pub mod dir;
mod faults;
pub mod format;
pub mod id;
pub mod lazy;
pub(crate) mod light;
pub mod lock;
pub mod moving;
pub mod named;
pub mod object_file;
pub mod paths;
mod read;
pub mod snapshot;
mod write;

pub use append::*;
pub use faults::{Faults, set_faults, take_trace};
pub use format::{Entry, render};
pub use read::*;
pub use write::*;

#[cfg(test)]
mod tests {
    use super::dir::Loc;
    use super::lock::LockOptions;
    use super::*;
    use crate::error::Error;
    use std::fs;
    use std::io;
    use std::path::Path;
    use std::time::Duration;

    fn entry(json: &str) -> Entry {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn render_matches_json_stringify() {
        let e: Vec<Entry> = parse_inbox(
            br#"[{"from":"a","text":"x\u0001\"/\\\u2028 \u00e9 \ud83d\ude00","n":1e+21,"big":12345678901234567890,"f":-0.5,"o":{},"l":[]}]"#,
            Path::new("t"),
        )
        .unwrap();
        // The bytes JSON.stringify(JSON.parse(...), null, 2) gives; numbers keep their text, even
        // where JSON.stringify would round (a file Claude Code wrote never holds such numbers).
        let want = "[\n  {\n    \"from\": \"a\",\n    \"text\": \"x\\u0001\\\"/\\\\\u{2028} é 😀\",\n    \"n\": 1e+21,\n    \"big\": 12345678901234567890,\n    \"f\": -0.5,\n    \"o\": {},\n    \"l\": []\n  }\n]";
        assert_eq!(render(&e), want);
        assert_eq!(render(&Vec::<Entry>::new()), "[]");
    }

    #[test]
    fn parse_refuses_wrong_shapes() {
        for bad in [&b"{}"[..], b"[1]", b"[{}", b"", b"null"] {
            assert!(
                parse_inbox(bad, Path::new("t")).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(parse_inbox(b"[]", Path::new("t")).unwrap().len(), 0);
    }

    #[test]
    fn append_writes_and_verifies() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("inboxes").join("a.json");
        let e = entry(r#"{"from":"u","text":"hi","timestamp":"t","msg_id":"m1"}"#);
        assert_eq!(
            append(&p, &e, true, &LockOptions::default()).unwrap(),
            Appended::Written
        );
        assert_eq!(
            append(&p, &e, true, &LockOptions::default()).unwrap(),
            Appended::AlreadyPresent(e.clone())
        );
        let back = read_inbox(&p).unwrap().unwrap();
        assert_eq!(back, vec![e]);
        assert!(!lock::lock_dir(&p).exists());
        let names: Vec<_> = fs::read_dir(tmp.path().join("inboxes")).unwrap().collect();
        assert_eq!(names.len(), 1, "no temp file left behind");
    }

    #[test]
    fn verification_fails_on_a_tampered_file() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        let written = render(&vec![entry(r#"{"from":"u","text":"hi"}"#)]);
        fs::write(&p, render(&vec![entry(r#"{"from":"x","text":"other"}"#)])).unwrap();
        let dir = p.parent_dir().unwrap();
        let err = verify_written(&dir, "a.json", &[written.as_bytes()]).unwrap_err();
        assert!(matches!(
            err.downcast_ref::<Error>(),
            Some(Error::VerifyFailed { .. })
        ));
        fs::write(&p, "[{").unwrap();
        assert!(verify_written(&dir, "a.json", &[written.as_bytes()]).is_err());
        fs::write(&p, &written).unwrap();
        verify_written(&dir, "a.json", &[written.as_bytes()]).unwrap();
    }

    /// Written in pieces, read back in others (more than one read buffer): only the same bytes
    /// pass; a byte changed anywhere, one missing or one more does not.
    #[test]
    fn verification_compares_every_byte_whatever_the_pieces() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        let dir = p.parent_dir().unwrap();
        let whole: Vec<u8> = (0..150_000u32).map(|i| (i % 251) as u8).collect();
        let parts: [&[u8]; 4] = [
            &whole[..70_000],
            &[],
            &whole[70_000..70_001],
            &whole[70_001..],
        ];
        fs::write(&p, &whole).unwrap();
        verify_written(&dir, "a.json", &parts).unwrap();
        verify_written(&dir, "a.json", &[&whole]).unwrap();
        for at in [0, 65_535, 65_536, 70_000, 149_999] {
            let mut changed = whole.clone();
            changed[at] ^= 1;
            fs::write(&p, &changed).unwrap();
            assert!(verify_written(&dir, "a.json", &parts).is_err(), "{at}");
        }
        fs::write(&p, &whole[..149_999]).unwrap();
        assert!(verify_written(&dir, "a.json", &parts).is_err());
        let mut longer = whole.clone();
        longer.push(b'\n');
        fs::write(&p, &longer).unwrap();
        assert!(verify_written(&dir, "a.json", &parts).is_err());
        fs::write(&p, "").unwrap();
        verify_written(&dir, "a.json", &[&[], &[]]).unwrap();
        assert!(verify_written(&dir, "a.json", &[b"x"]).is_err());
    }

    /// The read-back of a file written as it was rendered: compared with what the writer
    /// gives again, piece by piece, without the whole being held.
    #[test]
    fn verification_of_what_a_writer_gives_compares_every_byte() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        let dir = p.parent_dir().unwrap();
        let whole: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut pieces = |w: &mut dyn io::Write| -> anyhow::Result<()> {
            for c in whole.chunks(7) {
                w.write_all(c)?;
            }
            Ok(())
        };
        fs::write(&p, &whole).unwrap();
        verify_written_with(&dir, "a.json", &mut pieces).unwrap();
        for changed in [whole[..299_999].to_vec(), [&whole[..], b"\n"].concat(), {
            let mut c = whole.clone();
            c[262_144] ^= 1;
            c
        }] {
            fs::write(&p, &changed).unwrap();
            let err = verify_written_with(&dir, "a.json", &mut pieces).unwrap_err();
            assert!(matches!(
                err.downcast_ref::<Error>(),
                Some(Error::VerifyFailed { .. })
            ));
        }
    }

    #[test]
    fn read_each_streams_and_falls_back_like_read_inbox() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        let texts =
            |p: &Loc| read_inbox_each(p, |i, e| Some((i, e["text"].as_str().unwrap().to_string())));
        assert_eq!(texts(&p).unwrap(), None);
        fs::write(&p, r#"[{"text":"a"},{"text":"b"}]"#).unwrap();
        assert_eq!(
            texts(&p).unwrap().unwrap(),
            [(0, "a".to_string()), (1, "b".to_string())]
        );
        // A lone surrogate stops the streaming parse; read as read_inbox reads it.
        fs::write(&p, r#"[{"text":"a"},{"text":"x\ud800"}]"#).unwrap();
        assert_eq!(
            texts(&p).unwrap().unwrap(),
            [(0, "a".to_string()), (1, "x\u{fffd}".to_string())]
        );
        fs::write(&p, r#"[{"text":"a"},1]"#).unwrap();
        let err = texts(&p).unwrap_err();
        assert!(format!("{err:#}").contains("entry 1 of"), "{err:#}");
    }

    #[test]
    fn a_stably_corrupt_file_is_reported_after_the_retries() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        fs::write(&p, b"[{").unwrap();
        let start = std::time::Instant::now();
        assert!(read_inbox(&p).is_err());
        let took = start.elapsed();
        assert!(
            took >= Duration::from_millis(150) && took < TORN_DEADLINE,
            "{took:?}"
        );
    }

    /// A file left empty between an in-place writer's truncate and its write, for longer than
    /// the stable-retry window, is waited for rather than reported.
    #[test]
    fn an_empty_file_is_waited_for_until_the_writer_fills_it() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        fs::write(&p, b"").unwrap();
        let writer = {
            let p = p.clone();
            // A slow writer: the second half of writeFile comes 400 ms after the truncate.
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(400));
                fs::write(&p, b"[]").unwrap();
            })
        };
        assert_eq!(read_inbox(&p).unwrap(), Some(Vec::new()));
        writer.join().unwrap();
        // Still empty at the deadline: reported.
        fs::write(&p, b"").unwrap();
        assert!(read_inbox(&p).is_err());
    }

    #[test]
    fn own_temp_names() {
        assert!(is_own_temp_name("a.json.tmp.0a1b2c3d", "a.json"));
        for other in [
            "a.json.tmp.0A1B2C3D",
            "a.json.tmp.0a1b2c3",
            "a.json.tmp.0a1b2c3d9",
            "a.json.tmp.12.0a1b2c3d",
            "b.json.tmp.0a1b2c3d",
            "a.json",
            "a.json.lock",
        ] {
            assert!(!is_own_temp_name(other, "a.json"), "{other}");
        }
    }

    #[test]
    fn ensure_inbox_creates_once_and_leaves_no_temp() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("inboxes").join("a.json");
        ensure_inbox(&p).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"[]");
        fs::write(&p, b"[{}]").unwrap();
        ensure_inbox(&p).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"[{}]");
        assert_eq!(fs::read_dir(tmp.path().join("inboxes")).unwrap().count(), 1);
    }

    #[test]
    fn dedupe_works_with_duplicate_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        fs::write(
            &p,
            r#"[{"from":"a","from":"b","text":"t","timestamp":"x","msg_id":"m1"}]"#,
        )
        .unwrap();
        let e = entry(r#"{"from":"u","text":"hi","timestamp":"t","msg_id":"m1"}"#);
        let got = append(&p, &e, true, &LockOptions::default()).unwrap();
        assert!(matches!(got, Appended::AlreadyPresent(_)));
    }

    #[test]
    fn corrupt_inbox_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let p = Loc::root(tmp.path()).join("a.json");
        fs::write(&p, b"{\"not\": \"an array\"}").unwrap();
        let e = entry(r#"{"from":"u","text":"hi"}"#);
        assert!(append(&p, &e, false, &LockOptions::default()).is_err());
        assert_eq!(fs::read(&p).unwrap(), b"{\"not\": \"an array\"}");
        assert!(!lock::lock_dir(&p).exists(), "lock released on error");
    }

    #[test]
    fn a_document_on_an_older_tail_is_mid_write() {
        assert!(has_trailing_bytes(b"{\"a\": 1}\n  \"b\": 2\n}"));
        assert!(has_trailing_bytes(b"[]]"));
        assert!(!has_trailing_bytes(b"{\"a\": 1}\n"));
        assert!(!has_trailing_bytes(b"{\"a\": "));
        assert!(!has_trailing_bytes(b""));
        assert!(!has_trailing_bytes(b"nonsense"));
    }
}
