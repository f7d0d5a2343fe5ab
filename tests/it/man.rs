//! `teamctl man --out DIR` writes, byte for byte, the pages committed under man/man1/.

use std::fs;
use std::path::Path;

use crate::common::{TestEnv, json};

fn listing(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|f| {
            let f = f.unwrap();
            (
                f.file_name().to_string_lossy().into_owned(),
                fs::read(f.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn writes_the_committed_pages() {
    let env = TestEnv::new();
    let out_dir = env.dir.path().join("share/man/man1");
    let out = env
        .cmd()
        .args(["man", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("man/man1");
    let (have, want) = (listing(&out_dir), listing(&committed));
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&have), names(&want));
    assert!(have == want, "`teamctl man` differs from man/man1");
    // One printed path per page.
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(printed.lines().count(), want.len());
    assert!(printed.contains(&out_dir.join("teamctl.1").display().to_string()));
}

#[test]
fn json_lists_the_files() {
    let env = TestEnv::new();
    let out_dir = env.dir.path().join("man1");
    let out = env
        .cmd()
        .args(["--json", "man", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v = json(&out.stdout);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["dir"], out_dir.display().to_string());
    let files = v["files"].as_array().unwrap();
    assert!(files.contains(&out_dir.join("teamctl-send.1").display().to_string().into()));
    for f in files {
        assert!(Path::new(f.as_str().unwrap()).is_file());
    }
}

#[test]
fn an_unwritable_place_fails_with_one_line() {
    let env = TestEnv::new();
    let file = env.dir.path().join("a-file");
    fs::write(&file, "x").unwrap();
    let out = env
        .cmd()
        .args(["man", "--out"])
        .arg(file.join("man1"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: could not create"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
