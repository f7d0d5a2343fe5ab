//! The project's central guarantee as one assertion: each message sent is found exactly once,
//! unaltered (`assert_exactly_once`), with a failure that names what is missing, doubled,
//! altered or unknown.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

/// The messages a check of the central guarantee looks for.
pub enum Sent<'a> {
    /// Every message sent, `msg_id` to text: each must be found once with its text, and
    /// nothing else may be found.
    ById(&'a HashMap<String, String>),
    /// The texts of the messages acknowledged (their sends exited 0): each must be found once.
    /// Others may be found too (a send killed after its write), but no text twice.
    Texts(&'a [String]),
}

/// The project's central guarantee, asserted: each message of `sent` is among the inbox
/// entries `found` exactly once, unaltered. A failure names the missing, doubled, altered and
/// unknown messages.
pub fn assert_exactly_once<'v>(sent: Sent<'_>, found: impl IntoIterator<Item = &'v Value>) {
    let found: Vec<&Value> = found.into_iter().collect();
    let wrong = match sent {
        Sent::ById(by_id) => wrong_by_id(by_id, &found),
        Sent::Texts(texts) => wrong_by_text(texts, &found),
    };
    if !wrong.is_empty() {
        panic!(
            "not each message exactly once, unaltered ({} found): {}",
            found.len(),
            wrong.join("; ")
        );
    }
}

/// What breaks the guarantee when every message's id and text are known.
fn wrong_by_id(by_id: &HashMap<String, String>, found: &[&Value]) -> Vec<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut altered, mut unknown) = (Vec::new(), Vec::new());
    for e in found {
        let id = e["msg_id"]
            .as_str()
            .unwrap_or_else(|| panic!("an entry without a msg_id: {e}"));
        match by_id.get(id) {
            Some(text) if e["text"].as_str() == Some(text.as_str()) => {}
            Some(text) => altered.push(format!("{id} sent {text:?}, found {}", e["text"])),
            None => unknown.push(e.to_string()),
        }
        *seen.entry(id).or_default() += 1;
    }
    let mut missing: Vec<&str> = by_id
        .keys()
        .map(String::as_str)
        .filter(|id| !seen.contains_key(id))
        .collect();
    missing.sort_unstable();
    [
        named("missing", &missing, by_id.len()),
        named("doubled", &doubled(&seen), by_id.len()),
        named("altered", &altered, by_id.len()),
        named("unknown", &unknown, by_id.len()),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// What breaks the guarantee when only the acknowledged texts are known.
fn wrong_by_text(texts: &[String], found: &[&Value]) -> Vec<String> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for e in found {
        *seen.entry(e["text"].as_str().unwrap()).or_default() += 1;
    }
    let missing: Vec<&str> = texts
        .iter()
        .map(String::as_str)
        .filter(|t| !seen.contains_key(t))
        .collect();
    [
        named("missing", &missing, texts.len()),
        named("doubled", &doubled(&seen), texts.len()),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The keys seen more than once, with how often.
fn doubled(seen: &BTreeMap<&str, usize>) -> Vec<String> {
    seen.iter()
        .filter(|(_, n)| **n > 1)
        .map(|(k, n)| format!("{k} ×{n}"))
        .collect()
}

/// "`n` of `of` `what`: the first 20 of them", or nothing when there are none.
fn named(what: &str, items: &[impl std::fmt::Display], of: usize) -> Option<String> {
    if items.is_empty() {
        return None;
    }
    let first: Vec<String> = items.iter().take(20).map(ToString::to_string).collect();
    let more = if items.len() > 20 { ", …" } else { "" };
    Some(format!(
        "{} of {of} {what}: [{}{more}]",
        items.len(),
        first.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn sent() -> HashMap<String, String> {
        [("a", "one"), ("b", "two"), ("c", "three")]
            .map(|(id, t)| (id.to_string(), t.to_string()))
            .into()
    }

    #[test]
    fn each_once_unaltered_passes() {
        let found = [
            json!({"msg_id": "c", "text": "three"}),
            json!({"msg_id": "a", "text": "one"}),
            json!({"msg_id": "b", "text": "two"}),
        ];
        assert_exactly_once(Sent::ById(&sent()), &found);
    }

    #[test]
    fn a_failure_names_the_missing_doubled_altered_and_unknown() {
        let found = [
            json!({"msg_id": "a", "text": "one"}),
            json!({"msg_id": "a", "text": "one"}),
            json!({"msg_id": "b", "text": "TWO"}),
            json!({"msg_id": "z", "text": "zzz"}),
        ];
        let said = std::panic::catch_unwind(|| assert_exactly_once(Sent::ById(&sent()), &found))
            .expect_err("a failure");
        let said = said.downcast_ref::<String>().unwrap();
        for part in [
            "1 of 3 missing: [c]",
            "1 of 3 doubled: [a ×2]",
            "1 of 3 altered: [b sent \"two\", found \"TWO\"]",
            "1 of 3 unknown: [{\"msg_id\":\"z\",\"text\":\"zzz\"}]",
        ] {
            assert!(said.contains(part), "{part} in {said}");
        }
    }

    #[test]
    fn acknowledged_texts_allow_others_but_no_text_twice() {
        let acked = ["one".to_string(), "two".to_string()];
        let found = [
            json!({"text": "two"}),
            json!({"text": "killed after its write"}),
            json!({"text": "one"}),
        ];
        assert_exactly_once(Sent::Texts(&acked), &found);
        let twice = [json!({"text": "one"}), json!({"text": "one"})];
        let said = std::panic::catch_unwind(|| assert_exactly_once(Sent::Texts(&acked), &twice))
            .expect_err("a failure");
        let said = said.downcast_ref::<String>().unwrap();
        assert!(said.contains("1 of 2 missing: [two]"), "{said}");
        assert!(said.contains("1 of 2 doubled: [one ×2]"), "{said}");
    }
}
