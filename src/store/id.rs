//! Message ids: how an inbox entry is identified, and how teamctl makes new ones.
//!
//! - An entry's id is its `msg_id`, else its `messageId`, else [`content_hash`]: the lowercase
//!   hex sha256 of `from + timestamp + text` (UTF-8, concatenated, no separator).
//! - teamctl writes a random UUID v4 `msg_id`, or, with an idempotency key,
//!   [`idempotent_msg_id`]: the first 16 bytes of
//!   sha256(`team + "\n" + recipient + "\n" + sender + "\n" + key`) as a UUID with the version
//!   nibble set to 8 and the RFC 4122 variant bits, so a retried send names the same message.

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// The id of an inbox entry: `msg_id`, else `messageId`, else the content hash.
pub fn entry_id(entry: &Map<String, Value>) -> String {
    let field = |k: &str| entry.get(k).and_then(Value::as_str);
    id_of(
        field("msg_id"),
        field("messageId"),
        field("from"),
        field("timestamp"),
        field("text"),
    )
}

/// [`entry_id`] from the fields that decide it (each `None` unless it is a string).
pub fn id_of(
    msg_id: Option<&str>,
    message_id: Option<&str>,
    from: Option<&str>,
    timestamp: Option<&str>,
    text: Option<&str>,
) -> String {
    match msg_id.or(message_id) {
        Some(id) => id.to_string(),
        None => content_hash(
            from.unwrap_or(""),
            timestamp.unwrap_or(""),
            text.unwrap_or(""),
        ),
    }
}

/// Lowercase hex sha256 of `from + timestamp + text`.
pub fn content_hash(from: &str, timestamp: &str, text: &str) -> String {
    let mut h = Sha256::new();
    h.update(from.as_bytes());
    h.update(timestamp.as_bytes());
    h.update(text.as_bytes());
    hex(&h.finalize())
}

/// The deterministic `msg_id` for a send with an idempotency key (UUIDv8, see module docs).
pub fn idempotent_msg_id(team: &str, recipient: &str, sender: &str, key: &str) -> Uuid {
    let digest = Sha256::digest(format!("{team}\n{recipient}\n{sender}\n{key}").as_bytes());
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    bytes[6] = (bytes[6] & 0x0f) | 0x80; // version 8
    bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC 4122 variant
    Uuid::from_bytes(bytes)
}

/// A fresh random UUID v4, the id Claude Code itself gives each message.
pub fn random_msg_id() -> Uuid {
    Uuid::new_v4()
}

/// Eight random lowercase hex digits, the suffix of a temp file (`<file>.tmp.<8 hex>`).
pub fn temp_suffix() -> String {
    Uuid::new_v4().simple().to_string()[..8].to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_hash_vector() {
        assert_eq!(
            content_hash("team-lead", "2026-11-29T10:00:00.000Z", "Hello"),
            "10706c90d326eedf6cd562b802fa1df239468f99443f006d8770c7e9eda37c71"
        );
    }

    #[test]
    fn idempotent_id_vector() {
        let id = idempotent_msg_id("alpha", "alice", "user", "job-42");
        assert_eq!(id.to_string(), "731a802a-49af-81e9-970b-02e51dd0f6e5");
        assert_eq!(id.get_version_num(), 8);
    }

    #[test]
    fn entry_id_prefers_msg_id_then_message_id() {
        let e: Map<String, Value> =
            serde_json::from_str(r#"{"from":"a","text":"t","timestamp":"x","messageId":"m1"}"#)
                .unwrap();
        assert_eq!(entry_id(&e), "m1");
        let e: Map<String, Value> =
            serde_json::from_str(r#"{"msg_id":"m0","messageId":"m1"}"#).unwrap();
        assert_eq!(entry_id(&e), "m0");
        let e: Map<String, Value> = serde_json::from_str(
            r#"{"from":"team-lead","text":"Hello","timestamp":"2026-11-29T10:00:00.000Z"}"#,
        )
        .unwrap();
        assert_eq!(
            entry_id(&e),
            content_hash("team-lead", "2026-11-29T10:00:00.000Z", "Hello")
        );
    }

    #[test]
    fn temp_suffix_is_8_hex() {
        let s = temp_suffix();
        assert_eq!(s.len(), 8);
        assert!(
            s.chars()
                .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
        );
    }
}
