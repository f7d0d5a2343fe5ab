//! Record types: inbox entries as Claude Code writes them, the protocol frames carried in
//! their `text`, and the shapes teamctl prints with `--json`.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::usage;
use crate::store::{Entry, id};
use crate::time::iso_millis;

/// The eight colours Claude Code renders, in palette order (teammates get them from `blue` on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum Color {
    Red,
    Blue,
    Green,
    Yellow,
    Purple,
    Orange,
    Pink,
    Cyan,
}

impl Color {
    /// All colours in palette order.
    pub const ALL: [Color; 8] = [
        Color::Red,
        Color::Blue,
        Color::Green,
        Color::Yellow,
        Color::Purple,
        Color::Orange,
        Color::Pink,
        Color::Cyan,
    ];

    /// The name as written in files.
    pub fn as_str(self) -> &'static str {
        match self {
            Color::Red => "red",
            Color::Blue => "blue",
            Color::Green => "green",
            Color::Yellow => "yellow",
            Color::Purple => "purple",
            Color::Orange => "orange",
            Color::Pink => "pink",
            Color::Cyan => "cyan",
        }
    }
}

impl FromStr for Color {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<Self> {
        Color::ALL.into_iter().find(|c| c.as_str() == s).ok_or_else(|| {
            usage(format!(
                "invalid colour '{s}': use one of red, blue, green, yellow, purple, orange, pink, cyan"
            ))
        })
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A message teamctl is about to write.
#[derive(Debug, Clone)]
pub struct NewMessage {
    /// Sender name.
    pub from: String,
    /// Body: plain text, or a compact protocol frame.
    pub text: String,
    /// Short preview; left out when `None`.
    pub summary: Option<String>,
    /// When it was sent.
    pub timestamp: DateTime<Utc>,
    /// Sender's colour; left out when `None`.
    pub color: Option<Color>,
    /// The `msg_id`.
    pub msg_id: String,
}

impl NewMessage {
    /// The entry in Claude Code 2.1.332's key order:
    /// `from, text, summary?, timestamp, color?, msgV: 1, msg_id, type: "message", read: false`.
    pub fn to_entry(&self) -> Entry {
        let mut m = Map::new();
        m.insert("from".into(), self.from.clone().into());
        m.insert("text".into(), self.text.clone().into());
        if let Some(s) = &self.summary {
            m.insert("summary".into(), s.clone().into());
        }
        m.insert("timestamp".into(), iso_millis(self.timestamp).into());
        if let Some(c) = self.color {
            m.insert("color".into(), c.as_str().into());
        }
        m.insert("msgV".into(), 1.into());
        m.insert("msg_id".into(), self.msg_id.clone().into());
        m.insert("type".into(), "message".into());
        m.insert("read".into(), false.into());
        m
    }
}

/// The protocol frames Claude Code carries as compact JSON in a message's `text` (spec §5).
pub const FRAME_TYPES: [&str; 16] = [
    "idle_notification",
    "shutdown_request",
    "shutdown_approved",
    "shutdown_rejected",
    "shutdown_response",
    "plan_approval_request",
    "plan_approval_response",
    "permission_request",
    "permission_response",
    "sandbox_permission_request",
    "sandbox_permission_response",
    "task_assignment",
    "mode_set_request",
    "team_permission_update",
    "teammate_terminated",
    "task_completed",
];

/// Frames that must never be written as a message by anyone but Claude Code itself: current
/// Claude Code refuses them in `SendMessage` or drops them when read, and `shutdown_response`
/// is a tool input, never a file frame.
pub const UNSENDABLE_FRAMES: [&str; 8] = [
    "idle_notification",
    "teammate_terminated",
    "task_assignment",
    "task_completed",
    "shutdown_rejected",
    "shutdown_response",
    "mode_set_request",
    "team_permission_update",
];

/// A protocol frame decoded from a message's `text`: its type and all its fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frame {
    /// The frame's `type`, one of [`FRAME_TYPES`].
    #[serde(rename = "type")]
    pub frame_type: String,
    /// Every field of the frame, `type` included, in the order written.
    #[serde(flatten)]
    pub fields: Map<String, Value>,
}

impl Frame {
    /// Decodes `text` when it is a JSON object whose `type` is a known frame type.
    pub fn decode(text: &str) -> Option<Frame> {
        if !text.trim_start().starts_with('{') {
            return None;
        }
        let Ok(Value::Object(mut fields)) = serde_json::from_str::<Value>(text) else {
            return None;
        };
        let frame_type = fields.get("type")?.as_str()?.to_string();
        if !FRAME_TYPES.contains(&frame_type.as_str()) {
            return None;
        }
        fields.shift_remove("type");
        Some(Frame { frame_type, fields })
    }
}

/// The `type` Claude Code finds in `text`, whatever teamctl's own reading ([`Frame::decode`])
/// makes of it: when JavaScript's `JSON.parse(text)` gives an object whose `type` is a string,
/// that string (a lone surrogate in it written U+FFFD). The one rule for "is this text a frame"
/// where a message is written: `send` refuses the [`UNSENDABLE_FRAMES`] by it, and the text a
/// person means as plain words (the chat's `say`, `ask`) is refused when it gives any type.
///
/// Read by serde_json as `JSON.parse` reads: the grammar, white space and escapes are JSON's in
/// both; a lone surrogate (`"\ud800"`) is allowed in any string, a key too (serde_json refuses
/// one in a `String`); nesting is not limited (`JSON.parse` takes thousands of levels, serde_json
/// stops at 128): every value but the top object is skipped, never recursed into, so a deep one
/// cannot exhaust the stack either; a number is never converted (`1e400` is Infinity to
/// `JSON.parse`); a key given twice is the last one given, as in JavaScript.
pub fn frame_type(text: &str) -> Option<String> {
    use serde::Deserializer as _;
    // JSON's white space only: `JSON.parse` refuses a BOM or a no-break space before it.
    if !text
        .trim_start_matches([' ', '\t', '\n', '\r'])
        .starts_with('{')
    {
        return None;
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let raw = de.deserialize_map(LastType).ok()?;
    de.end().ok()?;
    let raw = raw?.get();
    if !raw.starts_with('"') {
        return None;
    }
    let bytes = serde_json::Deserializer::from_str(raw)
        .deserialize_bytes(Wtf8)
        .ok()?;
    Some(wtf8_lossy(&bytes))
}

/// WTF-8 as a string, each lone surrogate (three bytes) written U+FFFD.
fn wtf8_lossy(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (ok, bad) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(ok).unwrap_or_default());
                out.push('\u{fffd}');
                bytes = &bad[bad.len().min(3)..];
            }
        }
    }
}

/// A JSON string as serde_json reads it into bytes: WTF-8, a lone surrogate kept.
struct Wtf8;

impl<'de> serde::de::DeserializeSeed<'de> for Wtf8 {
    type Value = Vec<u8>;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Vec<u8>, D::Error> {
        d.deserialize_bytes(self)
    }
}

impl serde::de::Visitor<'_> for Wtf8 {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_bytes<E>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }

    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(v)
    }
}

/// The top object's last `type`, as it was written (every value skipped, never built).
struct LastType;

impl<'de> serde::de::Visitor<'de> for LastType {
    type Value = Option<&'de serde_json::value::RawValue>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut last = None;
        while let Some(key) = map.next_key_seed(Wtf8)? {
            let value: &'de serde_json::value::RawValue = map.next_value()?;
            if key == b"type" {
                last = Some(value);
            }
        }
        Ok(last)
    }
}

/// Whether a message is plain text or a protocol frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Plain text.
    Message,
    /// A protocol frame in `text`.
    Protocol,
}

/// An inbox entry as teamctl shows it (`inbox --json`). Every key is always present.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MessageView {
    /// The entry id ([`id::entry_id`]).
    pub id: String,
    /// Path of the inbox file it is in.
    pub inbox: String,
    /// The member whose inbox it is.
    pub to: String,
    /// Sender.
    pub from: String,
    /// Body as written.
    pub text: String,
    /// Preview, if any.
    pub summary: Option<String>,
    /// As written (ISO 8601, UTC).
    pub timestamp: String,
    /// Sender colour, if any.
    pub color: Option<String>,
    /// `read` as Claude Code treats it: only `true` counts.
    pub read: bool,
    /// Plain message or protocol frame.
    pub kind: Kind,
    /// The decoded frame, when `kind` is `protocol`.
    pub protocol: Option<Frame>,
}

/// Why an entry cannot be shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// The first required field that is missing or not a string.
    pub field: &'static str,
}

impl MessageView {
    /// Builds the view of one entry. Entries whose `from`, `text` or `timestamp` is not a
    /// string are refused (Claude Code skips them too).
    pub fn from_entry(entry: &Entry, inbox: &str, to: &str) -> Result<MessageView, Malformed> {
        let string = |field: &'static str| match entry.get(field) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(Malformed { field }),
        };
        let optional = |field: &str| entry.get(field).and_then(Value::as_str).map(str::to_string);
        let text = string("text")?;
        let protocol = Frame::decode(&text);
        Ok(MessageView {
            id: id::entry_id(entry),
            inbox: inbox.to_string(),
            to: to.to_string(),
            from: string("from")?,
            timestamp: string("timestamp")?,
            summary: optional("summary"),
            color: optional("color"),
            read: entry.get("read") == Some(&Value::Bool(true)),
            kind: if protocol.is_some() {
                Kind::Protocol
            } else {
                Kind::Message
            },
            protocol,
            text,
        })
    }

    /// [`MessageView::from_entry`] taking the entry: its strings move into the view instead of
    /// being copied (for reading a large inbox). A malformed entry is handed back.
    pub fn from_owned(
        mut entry: Entry,
        inbox: &str,
        to: &str,
    ) -> Result<MessageView, (Malformed, Entry)> {
        for field in ["text", "from", "timestamp"] {
            if !matches!(entry.get(field), Some(Value::String(_))) {
                return Err((Malformed { field }, entry));
            }
        }
        let id = id::entry_id(&entry);
        let mut take = |field: &str| match entry.get_mut(field) {
            Some(Value::String(s)) => Some(std::mem::take(s)),
            _ => None,
        };
        let text = take("text").unwrap_or_default();
        let from = take("from").unwrap_or_default();
        let timestamp = take("timestamp").unwrap_or_default();
        let summary = take("summary");
        let color = take("color");
        let protocol = Frame::decode(&text);
        Ok(MessageView {
            id,
            inbox: inbox.to_string(),
            to: to.to_string(),
            from,
            timestamp,
            summary,
            color,
            read: entry.get("read") == Some(&Value::Bool(true)),
            kind: if protocol.is_some() {
                Kind::Protocol
            } else {
                Kind::Message
            },
            protocol,
            text,
        })
    }

    /// A one-line preview: the frame's type, else the summary, else the first line of text.
    pub fn preview(&self) -> String {
        if let Some(f) = &self.protocol {
            let detail = ["reason", "idleReason", "subject", "tool_name", "message"]
                .iter()
                .find_map(|k| f.fields.get(*k).and_then(Value::as_str));
            return match detail {
                Some(d) => format!("[{}] {}", f.frame_type, first_line(d, 60)),
                None => format!("[{}]", f.frame_type),
            };
        }
        match &self.summary {
            Some(s) if !s.trim().is_empty() => first_line(s, 80),
            _ => first_line(&self.text, 80),
        }
    }
}

/// The first non-empty line of `text`, cut at a word boundary to at most `max` characters
/// (with `…` when cut).
pub fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    if line.chars().count() <= max {
        return line.to_string();
    }
    let cut: String = line.chars().take(max).collect();
    let at_word = match cut.rfind(char::is_whitespace) {
        Some(i) if i >= max / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", at_word.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Texts serde_json refuses and `JSON.parse` reads as frames (issue 45), and the corners
    /// where the two agree (checked against Node 20's `JSON.parse`: `tests/it/send.rs`).
    #[test]
    fn a_frame_is_what_json_parse_reads_as_one() {
        let lone = r#"{"type":"permission_response","request_id":"x","note":"\ud800"}"#;
        assert!(Frame::decode(lone).is_none());
        assert_eq!(frame_type(lone).as_deref(), Some("permission_response"));
        let deep = format!(
            r#"{{"type":"idle_notification","a":{}{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        assert!(Frame::decode(&deep).is_none());
        assert_eq!(frame_type(&deep).as_deref(), Some("idle_notification"));
        // Far deeper than any stack would take recursively.
        let deeper = format!(
            r#"{{"type":"idle_notification","a":{}1{}}}"#,
            "[".repeat(1_000_000),
            "]".repeat(1_000_000)
        );
        assert_eq!(frame_type(&deeper).as_deref(), Some("idle_notification"));
        for (text, want) in [
            (r#"{"type":"\ud800"}"#, Some("\u{fffd}")),
            (r#"{"\ud800":1,"type":"x"}"#, Some("x")),
            (
                r#"{"t\u0079pe":"idle_\u006eotification"}"#,
                Some("idle_notification"),
            ),
            (
                r#"{"type":1,"type":"task_assignment"}"#,
                Some("task_assignment"),
            ),
            (r#"{"type":"task_assignment","type":1}"#, None),
            (r#"{"type":"x","n":1e400,"m":-0.5E-7}"#, Some("x")),
            (" \t\r\n{\"type\":\"x\"} \n", Some("x")),
            ("\u{feff}{\"type\":\"x\"}", None),
            ("\u{a0}{\"type\":\"x\"}", None),
            (r#"{"type":"x",}"#, None),
            (r#"{"type":"x"} {}"#, None),
            (r#"{"type":"x","n":01}"#, None),
            ("{\"type\":\"x\u{1}\"}", None),
            (r#"{"type":"x","s":"\x"}"#, None),
            (r#"[{"type":"x"}]"#, None),
            (r#""{\"type\":\"x\"}""#, None),
            (r#"{"type":null}"#, None),
            (r#"{"kind":"x"}"#, None),
            ("plain words", None),
        ] {
            assert_eq!(frame_type(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn new_message_key_order() {
        let t = DateTime::parse_from_rfc3339("2026-11-29T10:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let m = NewMessage {
            from: "user".into(),
            text: "hi".into(),
            summary: None,
            timestamp: t,
            color: Some(Color::Blue),
            msg_id: "id".into(),
        };
        assert_eq!(
            serde_json::to_string(&m.to_entry()).unwrap(),
            r#"{"from":"user","text":"hi","timestamp":"2026-11-29T10:00:00.000Z","color":"blue","msgV":1,"msg_id":"id","type":"message","read":false}"#
        );
    }

    #[test]
    fn frames_decode() {
        let f = Frame::decode(r#"{"type":"shutdown_request","requestId":"r","from":"team-lead"}"#)
            .unwrap();
        assert_eq!(f.frame_type, "shutdown_request");
        assert_eq!(
            serde_json::to_string(&f).unwrap(),
            r#"{"type":"shutdown_request","requestId":"r","from":"team-lead"}"#
        );
        assert!(Frame::decode(r#"{"type":"other"}"#).is_none());
        assert!(Frame::decode("hello").is_none());
        assert!(Frame::decode("[1]").is_none());
    }

    #[test]
    fn malformed_entries_are_refused() {
        let e: Entry = serde_json::from_str(r#"{"from":"a","text":5,"timestamp":"t"}"#).unwrap();
        assert_eq!(
            MessageView::from_entry(&e, "i", "b").unwrap_err().field,
            "text"
        );
    }

    #[test]
    fn first_line_cuts_at_words() {
        assert_eq!(first_line("\n  hello world\nmore", 60), "hello world");
        let long = "word ".repeat(30);
        let s = first_line(&long, 60);
        assert!(s.ends_with('…') && s.chars().count() <= 61, "{s}");
    }
}
