//! The floor plan of the ops layer (its module docs) held against the sources: every `use` of a
//! room of ops, read from the files, goes from a flow to a service, or from a service to one
//! below it.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The flows, as the plan names them.
const FLOWS: [&str; 9] = [
    "create", "run", "bridge", "delete", "doctor", "ask", "report", "resume", "serve",
];

/// The services, from the top down.
const SERVICES: [&str; 8] = [
    "merge",
    "export",
    "chat",
    "policy",
    "rescue",
    "redeliver",
    "prepare",
    "dialogs",
];

fn ops_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ops")
}

/// Every `.rs` file below `dir`, relative to the ops folder.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p.strip_prefix(ops_dir()).unwrap().to_path_buf());
        }
    }
}

/// The room of a file (`run` for `run/lead.rs`, `delete` for `delete.rs`) and how deep its
/// module is below ops (1 for `delete.rs` and `run/mod.rs`, 2 for `run/lead.rs`); `None` for
/// the layer's own files.
fn room_of(rel: &Path) -> Option<(String, usize)> {
    let parts: Vec<&str> = rel.iter().map(|c| c.to_str().unwrap()).collect();
    if parts.len() == 1 && ["mod.rs", "tests.rs"].contains(&parts[0]) {
        return None;
    }
    let room = parts[0].trim_end_matches(".rs").to_string();
    let depth = parts.len() - usize::from(parts.last() == Some(&"mod.rs"));
    Some((room, depth))
}

/// What `{…}` at the start of `text` holds, without the braces.
fn group(text: &str) -> &str {
    let mut open = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => open += 1,
            '}' if open == 1 => return &text[1..i],
            '}' => open -= 1,
            _ => {}
        }
    }
    &text[1..]
}

fn ident(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The rooms a path names that goes on with `text` right after `ops::`: one (`run::…`) or a
/// group (`{chat::Journal, policy}`).
fn rooms_after_ops(text: &str, out: &mut BTreeSet<String>) {
    if !text.starts_with('{') {
        out.insert(ident(text));
        return;
    }
    let mut open = 0;
    let mut start = true;
    for (i, c) in group(text).char_indices() {
        match c {
            '{' => open += 1,
            '}' => open -= 1,
            ',' if open == 0 => start = true,
            c if start && !c.is_whitespace() => {
                start = false;
                out.insert(ident(&group(text)[i..]));
            }
            _ => {}
        }
    }
}

/// The rooms of ops that `code` names, in a module `depth` below ops: `crate::ops::ROOM`,
/// `crate::ops::{ROOM, …}`, `crate::{ops::ROOM, …}`, and a `super::` chain that reaches ops.
fn rooms_named(code: &str, depth: usize) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(after) = rest.strip_prefix("ops::") {
            rooms_after_ops(after, &mut out);
        } else if rest.starts_with('{') {
            let inner = group(rest);
            for (j, _) in inner.match_indices("ops::") {
                let at_start = inner[..j]
                    .chars()
                    .next_back()
                    .is_none_or(|c| c == '{' || c == ',' || c.is_whitespace());
                if at_start {
                    rooms_after_ops(&inner[j + "ops::".len()..], &mut out);
                }
            }
        }
    }
    for (i, _) in code.match_indices("super::") {
        if code[..i].ends_with("::") {
            continue;
        }
        let mut rest = &code[i..];
        let mut up = 0;
        while let Some(r) = rest.strip_prefix("super::") {
            rest = r;
            up += 1;
        }
        if up == depth {
            rooms_after_ops(rest, &mut out);
        }
    }
    out.remove("");
    out.remove("self");
    out
}

/// The rooms a source file names: its code without comment lines, its inline test module one
/// level deeper.
fn rooms_of_file(text: &str, depth: usize) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect();
    match code.split_once("#[cfg(test)]\nmod tests {") {
        Some((main, tests)) => {
            let mut all = rooms_named(main, depth);
            all.extend(rooms_named(tests, depth + 1));
            all
        }
        None => rooms_named(&code, depth),
    }
}

/// Why `from` may not import `to`, if it may not.
fn broken(from: &str, to: &str) -> Option<String> {
    let service = |r: &str| SERVICES.iter().position(|s| *s == r);
    match (service(from), service(to)) {
        _ if from == to => None,
        (None, None) => Some(format!("flow {from} imports flow {to}")),
        (Some(_), None) => Some(format!("service {from} imports flow {to}")),
        (Some(f), Some(t)) if t < f => {
            Some(format!("service {from} imports {to}, a service above it"))
        }
        _ => None,
    }
}

#[test]
fn the_guard_reads_every_kind_of_path() {
    let named = |code: &str, depth| rooms_named(code, depth).into_iter().collect::<Vec<_>>();
    assert_eq!(
        named("use crate::ops::{chat::{Journal, Post}, policy};", 2),
        ["chat", "policy"]
    );
    assert_eq!(
        named("use crate::{error::usage, ops::export::{self, X}};", 1),
        ["export"]
    );
    assert_eq!(
        named("let r = crate::ops::rescue::Relaunch::new();", 3),
        ["rescue"]
    );
    assert_eq!(named("use super::super::run::Dialog;", 2), ["run"]);
    assert_eq!(named("use super::prepare;", 1), ["prepare"]);
    assert!(named("use super::spec::Spec;", 2).is_empty());
    assert!(named("use crate::team::ops::x; use crate::observe::members;", 1).is_empty());
    let file =
        "use super::x;\n// use crate::ops::run;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n";
    assert_eq!(
        rooms_of_file(file, 1).into_iter().collect::<Vec<_>>(),
        ["x"]
    );
    assert_eq!(
        broken("delete", "create").as_deref(),
        Some("flow delete imports flow create")
    );
    assert!(broken("run", "merge").is_none() && broken("merge", "export").is_none());
    assert!(broken("export", "merge").is_some() && broken("chat", "bridge").is_some());
}

/// The plan of the module docs: no flow imports another flow, no service imports a flow or a
/// service above it, and every room is in the plan.
#[test]
fn every_room_keeps_the_floor_plan() {
    let mut files = Vec::new();
    rust_files(&ops_dir(), &mut files);
    files.sort();
    let planned: BTreeSet<&str> = FLOWS.iter().chain(&SERVICES).copied().collect();
    assert_eq!(
        planned.len(),
        FLOWS.len() + SERVICES.len(),
        "a room named twice"
    );
    let mut rooms = BTreeSet::new();
    let mut wrong = Vec::new();
    for rel in &files {
        let Some((room, depth)) = room_of(rel) else {
            continue;
        };
        let text = fs::read_to_string(ops_dir().join(rel)).unwrap();
        for to in rooms_of_file(&text, depth) {
            let why = if planned.contains(to.as_str()) {
                broken(&room, &to)
            } else {
                Some(format!("{to} is no room of the plan"))
            };
            if let Some(why) = why {
                wrong.push(format!("src/ops/{}: {why}", rel.display()));
            }
        }
        rooms.insert(room);
    }
    let rooms: BTreeSet<&str> = rooms.iter().map(String::as_str).collect();
    assert_eq!(
        rooms, planned,
        "every room of src/ops is a flow or a service of the plan (src/ops/mod.rs, \
         docs/development.md), and every one the plan names is there"
    );
    assert!(
        wrong.is_empty(),
        "imports that break the floor plan (move what two flows share down into a service): \
         {wrong:#?}"
    );
}
