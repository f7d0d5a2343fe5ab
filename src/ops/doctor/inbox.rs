//! The inboxes of a team: each one readable and valid, and the inbox format the team's
//! Claude Code writes (judged from what the consumers do).

use serde_json::Value;

use super::finding::{Check, fail, ok, warn};
use super::inputs::Inputs;
use super::tree::files_in;
use crate::store;
use crate::store::dir::{Kind, Loc};
use crate::store::paths::{TeamName, is_valid_member};
use crate::team::config::TeamConfig;
use crate::team::generation::{Format, Ours};
use crate::team::model::MessageView;

/// A check for every inbox of team `t` and one for its format; with the members that have an
/// inbox file.
pub(super) fn inboxes(
    inputs: &Inputs,
    t: &TeamName,
    config: Option<&TeamConfig>,
) -> (Vec<Check>, Vec<String>) {
    let ours = Ours::new(&inputs.sent, t.as_str(), config.and_then(|c| c.created_at));
    let mut out = Vec::new();
    let mut generations = (0usize, 0usize);
    let mut inbox_names = Vec::new();
    for path in files_in(&inputs.layout.inboxes_dir(t)) {
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(member) = file.strip_suffix(".json") else {
            continue;
        };
        if !is_valid_member(member) {
            continue;
        }
        match path.stat() {
            Ok(Some(i)) if i.kind == Kind::File => {}
            // The symlink check names a link; anything else in an inbox's place is named here.
            Ok(Some(i)) if i.kind != Kind::Symlink => {
                inbox_names.push(member.to_string());
                out.push(not_a_file(t, &path, member, i.kind));
                continue;
            }
            _ => continue,
        }
        inbox_names.push(member.to_string());
        out.extend(inbox_check(t, &path, member, &ours, &mut generations));
    }
    out.push(format_check(t, generations));
    (out, inbox_names)
}

/// A FIFO, a folder, a socket or a device where `member`'s inbox file belongs: nothing can be
/// delivered to it, and teamctl leaves it alone.
fn not_a_file(t: &TeamName, path: &Loc, member: &str, kind: Kind) -> Check {
    fail(
        "inbox",
        Some(t.as_str()),
        Some(path),
        format!(
            "inbox of '{member}' is {}, not a file: no message can be delivered to '{member}' \
             (teamctl leaves it alone)",
            kind.describe()
        ),
        "remove it once you know who made it (`rm` a FIFO, `rmdir` an empty folder); the next \
         message to the member creates the inbox file",
    )
}

/// The team's inbox format from how many inboxes show each one: `(current, legacy)`.
fn format_check(t: &TeamName, (current, legacy): (usize, usize)) -> Check {
    let name = Some(t.as_str());
    match (current, legacy) {
        (0, 0) => ok(
            "format",
            name,
            None,
            format!(
                "team '{t}': inbox format not known yet (no message has been consumed, and no \
                 entry but teamctl's own carries msgV)"
            ),
        ),
        (_, 0) => ok(
            "format",
            name,
            None,
            format!(
                "team '{t}': current inbox format (a delivered message is deleted), Claude Code \
                 2.1.160 or later (msgV written from 2.1.196)"
            ),
        ),
        (0, _) => ok(
            "format",
            name,
            None,
            format!(
                "team '{t}': legacy inbox format (a delivered message stays with read: true), \
                 Claude Code 2.1.159 or earlier"
            ),
        ),
        _ => warn(
            "format",
            name,
            None,
            format!(
                "team '{t}': both inbox formats ({current} current, {legacy} legacy inboxes): \
                 members run different Claude Code versions"
            ),
            "run the same Claude Code version for the whole team",
        ),
    }
}

fn inbox_check(
    t: &TeamName,
    path: &Loc,
    member: &str,
    ours: &Ours,
    generations: &mut (usize, usize),
) -> Vec<Check> {
    let name = Some(t.as_str());
    let entries = match store::read_inbox(path) {
        Ok(Some(e)) => e,
        Ok(None) => return Vec::new(),
        Err(e) => {
            return vec![fail(
                "inbox",
                name,
                Some(path),
                format!("{e:#}"),
                "repair the file or move it aside: Claude Code reads it as empty and its next \
                 write replaces it, losing every message in it",
            )];
        }
    };
    let evidence = ours.weigh(
        member,
        entries.iter().map(|e| {
            (
                e.get("read").and_then(Value::as_bool),
                e.contains_key("msgV"),
                e.get("msg_id").and_then(Value::as_str),
            )
        }),
    );
    match evidence.format() {
        Some(Format::Current) => generations.0 += 1,
        Some(Format::Legacy) => generations.1 += 1,
        None => {}
    }
    let mut bad = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if let Err(m) = MessageView::from_entry(e, "", member) {
            bad.push(format!("entry {i}: '{}' missing or not a string", m.field));
        }
    }
    if bad.is_empty() {
        return vec![ok(
            "inbox",
            name,
            Some(path),
            format!("inbox of '{member}': {} message(s), valid", entries.len()),
        )];
    }
    vec![fail(
        "inbox",
        name,
        Some(path),
        format!(
            "inbox of '{member}' has {} invalid entr{} ({})",
            bad.len(),
            if bad.len() == 1 { "y" } else { "ies" },
            bad.join("; ")
        ),
        "fix those entries: new Claude Code drops them and rewrites the file without them",
    )]
}
