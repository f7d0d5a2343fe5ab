//! Inboxes nobody reads: `inboxes/<name>.json` of a name that is no member of `config.json`
//! and not a name Claude Code reserves, holding unread entries. Claude Code up to 2.1.178 (now
//! and then 2.1.332 too, and `teamctl send --force`) creates one when a teammate writes to a
//! name that is no member (a misspelling such as `alise`, or `lead`); no Claude Code process ever
//! reads it, so what is in it is lost unless it is moved to the member it was meant for
//! (`teamctl redeliver`).
//!
//! The member it was most likely meant for is [`crate::team::config::suggest`]'s, the rule of
//! `send`'s "did you mean"; the suggestion is certain ([`crate::team::config::is_certain`]) when
//! exactly one member is that close, one edit at most from a name of 4 characters or more, and
//! the name never wrote to the team itself (one that did, say a teammate that left
//! `config.json` after its shutdown, is a former member, not a misspelling). Read without
//! locks, as `status` reads.

use serde::de::{Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::store::paths::{MemberName, RESERVED, quote};
use crate::store::{self, Entry};
use crate::team::config::{Team, close_to, is_certain};

/// One inbox nobody reads (`status --json` `misaddressed[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Misaddressed {
    /// The name the inbox is for (its file is `<inbox>.json`).
    pub inbox: String,
    /// The inbox file.
    pub path: String,
    /// Entries in it not marked `read: true`.
    pub unread: usize,
    /// Who wrote those entries, each once, in file order.
    pub from: Vec<String>,
    /// The member it was most likely meant for, if any is close.
    pub suggestion: Option<String>,
    /// Whether the suggestion is certain: the only member that close, and the name never wrote
    /// to the team (`doctor --fix` and `redeliver` without `--to` move only these).
    pub certain: bool,
    /// Every member that close, closest first.
    pub candidates: Vec<String>,
    /// Whether the name wrote messages to the team itself (a former member, most likely).
    pub has_sent: bool,
}

impl Misaddressed {
    /// One line for people: what is there and what to do.
    pub fn summary(&self) -> String {
        let from = if self.from.is_empty() {
            String::new()
        } else {
            let names: Vec<String> = self.from.iter().map(|f| quote(f)).collect();
            format!(" from {}", names.join(", "))
        };
        let what = format!(
            "{}.json holds {} unread message{}{from} that no member reads",
            self.inbox,
            self.unread,
            if self.unread == 1 { "" } else { "s" }
        );
        match (&self.suggestion, self.certain) {
            (Some(s), true) => format!(
                "{what}: meant for {s}? `teamctl redeliver {}` moves {} there",
                self.inbox,
                if self.unread == 1 { "it" } else { "them" }
            ),
            (Some(_), false) if self.has_sent => format!(
                "{what}; {} has written to the team itself (a former member?): move them with \
                 `teamctl redeliver {} --to MEMBER` if they are meant for someone",
                self.inbox, self.inbox
            ),
            (Some(_), false) => format!(
                "{what}: meant for one of {}? `teamctl redeliver {} --to MEMBER`",
                self.candidates.join(", "),
                self.inbox
            ),
            (None, _) => format!(
                "{what}; no member's name is close: `teamctl redeliver {} --to MEMBER`",
                self.inbox
            ),
        }
    }
}

/// What [`scan`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// The inboxes nobody reads that hold unread entries, by name.
    pub misaddressed: Vec<Misaddressed>,
    /// Inboxes of non-members (or the folder) that could not be read: they may hold some too.
    pub unreadable: Vec<String>,
}

/// Whether `name` is an inbox nobody in `team` reads: no member of `config.json`, and not a
/// name Claude Code reserves (`team-lead`, `user`, `main`, `system`: theirs are read by the lead
/// or by teamctl). A team without `config.json` has no members to tell: `false`.
pub fn unread_by_anyone(team: &Team, name: &str) -> bool {
    team.config.is_some()
        && !team.is_member(name)
        && !RESERVED.iter().any(|r| r.eq_ignore_ascii_case(name))
}

/// Every inbox of `team` nobody reads ([`unread_by_anyone`]) that holds unread entries, with the
/// member each was most likely meant for.
pub fn scan(team: &Team) -> Scan {
    let mut out = Scan::default();
    let owners = match team.inbox_owners() {
        Ok(o) => o,
        Err(e) => {
            out.unreadable.push(format!("{e:#}"));
            return out;
        }
    };
    let members = team.member_names();
    for name in owners.iter().filter(|o| unread_by_anyone(team, o.as_str())) {
        let path = team.inbox_path(name);
        // Each unread entry's sender, the entries read one at a time (an inbox of hundreds of
        // thousands is never held parsed).
        let sender = |_, e: Entry| {
            is_unread(&e).then(|| e.get("from").and_then(Value::as_str).map(String::from))
        };
        let unread = match store::read_inbox_each(&path, sender) {
            Ok(Some(u)) => u,
            Ok(None) => continue,
            Err(e) => {
                out.unreadable.push(format!("{e:#}"));
                continue;
            }
        };
        if unread.is_empty() {
            continue;
        }
        let mut from: Vec<String> = Vec::new();
        for f in unread.iter().flatten() {
            if !from.contains(f) {
                from.push(f.clone());
            }
        }
        let candidates = close_to(name.as_str(), &members);
        out.misaddressed.push(Misaddressed {
            inbox: name.to_string(),
            path: path.display().to_string(),
            unread: unread.len(),
            from,
            suggestion: candidates.first().cloned(),
            certain: false,
            candidates,
            has_sent: false,
        });
    }
    if out.misaddressed.is_empty() {
        return out;
    }
    let senders = senders(team, &owners, &mut out.unreadable);
    for m in &mut out.misaddressed {
        m.has_sent = senders.iter().any(|s| s == &m.inbox);
        m.certain = is_certain(&m.inbox, &m.candidates) && !m.has_sent;
    }
    out
}

/// Whether Claude Code counts `e` as unread: anything but `read: true`.
pub fn is_unread(e: &Entry) -> bool {
    e.get("read") != Some(&Value::Bool(true))
}

/// Every name that wrote an entry to one of the team's inboxes.
fn senders(team: &Team, owners: &[MemberName], unreadable: &mut Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for o in owners {
        let path = team.inbox_path(o);
        let file = match path.open_file() {
            Ok(Some(f)) => f,
            Ok(None) => continue,
            Err(e) => {
                unreadable.push(format!("could not read {}: {e}", path.display()));
                continue;
            }
        };
        // Read as it streams in, keeping only the senders (an inbox that does not parse here
        // is reported by `status` and `doctor` already).
        let mut names = out.clone();
        let reader = std::io::BufReader::with_capacity(256 * 1024, file);
        let mut de = serde_json::Deserializer::from_reader(reader);
        if de.deserialize_seq(Senders(&mut names)).is_ok() && de.end().is_ok() {
            out = names;
        }
    }
    out
}

/// A JSON array of inbox entries, each one's `from` added to a list unless already in it.
struct Senders<'a>(&'a mut Vec<String>);

impl<'de> Visitor<'de> for Senders<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON array of objects")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        /// An entry's sender only (other keys skipped, a key given twice refused).
        #[derive(Deserialize)]
        struct From {
            #[serde(default)]
            from: Option<Value>,
        }
        while let Some(e) = seq.next_element::<From>()? {
            if let Some(f) = e.from.as_ref().and_then(Value::as_str)
                && !self.0.iter().any(|x| x == f)
            {
                self.0.push(f.to_string());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::paths::{Layout, TeamName};
    use std::fs;

    fn team(root: &std::path::Path, members: &[&str]) -> Team {
        let dir = root.join("teams/demo/inboxes");
        fs::create_dir_all(&dir).unwrap();
        let ms: Vec<String> = members
            .iter()
            .map(|m| format!(r#"{{"agentId":"{m}@demo","name":"{m}"}}"#))
            .collect();
        fs::write(
            root.join("teams/demo/config.json"),
            format!(r#"{{"name":"demo","members":[{}]}}"#, ms.join(",")),
        )
        .unwrap();
        Team::open(
            &Layout::new(root),
            &TeamName::parse("demo").unwrap(),
            &crate::team::records::Records::none(),
        )
        .unwrap()
    }

    fn inbox(root: &std::path::Path, name: &str, body: &str) {
        fs::write(root.join(format!("teams/demo/inboxes/{name}.json")), body).unwrap();
    }

    #[test]
    fn finds_unread_inboxes_of_non_members_with_their_suggestion() {
        let tmp = tempfile::tempdir().unwrap();
        let t = team(tmp.path(), &["team-lead", "alice", "bob", "worker"]);
        let msg = |from: &str, read: bool| {
            format!(
                r#"{{"from":"{from}","text":"x","timestamp":"2026-11-29T10:00:00.000Z","read":{read}}}"#
            )
        };
        inbox(
            tmp.path(),
            "alise",
            &format!("[{},{}]", msg("worker", false), msg("worker", false)),
        );
        inbox(tmp.path(), "lead", &format!("[{}]", msg("worker", false)));
        inbox(tmp.path(), "bobby", &format!("[{}]", msg("worker", true)));
        inbox(tmp.path(), "user", &format!("[{}]", msg("worker", false)));
        inbox(tmp.path(), "alice", &format!("[{}]", msg("worker", false)));
        let s = scan(&t);
        assert!(s.unreadable.is_empty());
        let got: Vec<(&str, usize, Option<&str>, bool)> = s
            .misaddressed
            .iter()
            .map(|m| {
                (
                    m.inbox.as_str(),
                    m.unread,
                    m.suggestion.as_deref(),
                    m.certain,
                )
            })
            .collect();
        assert_eq!(
            got,
            [("alise", 2, Some("alice"), true), ("lead", 1, None, false)]
        );
        assert_eq!(s.misaddressed[0].from, ["worker"]);
        assert!(s.misaddressed[0].summary().contains("meant for alice?"));
        assert!(
            s.misaddressed[1]
                .summary()
                .contains("no member's name is close")
        );
    }

    #[test]
    fn a_name_that_wrote_to_the_team_or_with_two_close_members_is_not_certain() {
        let tmp = tempfile::tempdir().unwrap();
        let t = team(tmp.path(), &["team-lead", "worker-1", "worker-3"]);
        let msg = |from: &str| {
            format!(r#"[{{"from":"{from}","text":"x","timestamp":"2026-11-29T10:00:00.000Z"}}]"#)
        };
        // worker-2 left config.json after its shutdown; it had written to the lead.
        inbox(tmp.path(), "worker-2", &msg("team-lead"));
        inbox(tmp.path(), "team-lead", &msg("worker-2"));
        let s = scan(&t);
        let m = &s.misaddressed[0];
        assert_eq!(m.candidates, ["worker-1", "worker-3"]);
        assert!(m.has_sent && !m.certain);
        // Without config.json nothing can be told.
        fs::remove_file(tmp.path().join("teams/demo/config.json")).unwrap();
        let t = Team::open(
            &Layout::new(tmp.path()),
            &TeamName::parse("demo").unwrap(),
            &crate::team::records::Records::none(),
        )
        .unwrap();
        assert!(scan(&t).misaddressed.is_empty());
    }

    #[test]
    fn short_names_are_never_certain() {
        let tmp = tempfile::tempdir().unwrap();
        let t = team(tmp.path(), &["team-lead", "qa", "reviewer", "tester"]);
        let msg = r#"[{"from":"team-lead","text":"x","timestamp":"2026-11-29T10:00:00.000Z"}]"#;
        for name in ["ci", "revewer", "tstr"] {
            inbox(tmp.path(), name, msg);
        }
        let got: Vec<(String, Option<String>, bool)> = scan(&t)
            .misaddressed
            .into_iter()
            .map(|m| (m.inbox, m.suggestion, m.certain))
            .collect();
        assert_eq!(
            got,
            [
                ("ci".into(), Some("qa".into()), false),
                ("revewer".into(), Some("reviewer".into()), true),
                ("tstr".into(), Some("tester".into()), false),
            ]
        );
    }

    #[test]
    fn an_unreadable_inbox_is_said() {
        let tmp = tempfile::tempdir().unwrap();
        let t = team(tmp.path(), &["alice"]);
        inbox(tmp.path(), "alise", "[{");
        let s = scan(&t);
        assert!(s.misaddressed.is_empty());
        assert_eq!(s.unreadable.len(), 1, "{:?}", s.unreadable);
    }
}
