//! The team messages a transcript records, read-only: what its session was sent and what it
//! sent, for a record of a team whose inboxes have long been emptied.
//!
//! As Claude Code 2.1.332 writes them (checked with the real client):
//! - a message delivered to the session is a `user` entry whose text holds one or more
//!   `<teammate-message teammate_id="<from>" color="…" summary="…">\n<text>\n</teammate-message>`
//!   blocks (a lead's are preceded by "Another Claude session sent a message:"); protocol frames
//!   come the same way, their JSON as the text;
//! - a message the session sent is a `SendMessage` tool call: `{to, summary, message}` (older
//!   builds: `{type, recipient, content, summary}`; a structured answer such as a
//!   `shutdown_response` has an object as its message); its result carries the `msg_id` written;
//! - a teammate's first message, its prompt, is an `Agent` tool call of the lead with `name` and
//!   `prompt`, which Claude Code delivers to the new teammate's inbox from `team-lead`.
//!
//! Each entry's `timestamp` is when that side saw it: when it was sent, or when it was
//! delivered (taken from the inbox), not when it was written there.

use std::collections::HashMap;

use serde_json::Value;

/// How a transcript knows of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// It was delivered to this session (`<teammate-message>`).
    Delivered,
    /// This session sent it (`SendMessage`).
    Sent,
    /// This session spawned a teammate with it as its prompt (`Agent` with a `name`).
    Spawned,
}

/// One message a transcript records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Said {
    /// The entry's `timestamp`.
    pub at: Option<String>,
    /// Sender.
    pub from: String,
    /// Recipient (`*`: everyone, a broadcast).
    pub to: String,
    /// The text (a structured message as compact JSON).
    pub text: String,
    /// The summary, when given.
    pub summary: Option<String>,
    /// The `msg_id` written, when the tool's result says.
    pub msg_id: Option<String>,
    /// How the transcript knows it.
    pub seen: Seen,
}

/// Reads messages from the lines of the transcript of `owner` (the member whose session it
/// is), in file order. Lines that do not parse are skipped.
#[derive(Debug, Default)]
pub struct Reader {
    owner: String,
    said: Vec<Said>,
    /// `tool_use` id → index in `said` of a `SendMessage` call, for its result's `msg_id`.
    calls: HashMap<String, usize>,
}

impl Reader {
    /// A reader for the transcript of `owner`.
    pub fn new(owner: &str) -> Reader {
        Reader {
            owner: owner.to_string(),
            ..Reader::default()
        }
    }

    /// Takes one line into account.
    pub fn feed(&mut self, line: &[u8]) {
        // Most lines are neither kind: skip them without parsing.
        if !contains(line, b"\"user\"") && !contains(line, b"\"assistant\"") {
            return;
        }
        let Ok(e) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let at = e.get("timestamp").and_then(Value::as_str).map(String::from);
        let content = e.pointer("/message/content");
        match e.get("type").and_then(Value::as_str) {
            Some("user") => {
                if e.get("isMeta").and_then(Value::as_bool) == Some(true) {
                    return;
                }
                match content {
                    Some(Value::String(s)) => self.delivered(s, &at),
                    Some(Value::Array(blocks)) => {
                        for b in blocks {
                            match b.get("type").and_then(Value::as_str) {
                                Some("text") => {
                                    if let Some(s) = b.get("text").and_then(Value::as_str) {
                                        self.delivered(s, &at);
                                    }
                                }
                                Some("tool_result") => self.result(b),
                                _ => {}
                            }
                        }
                    }
                    _ => {}
                }
            }
            Some("assistant") => {
                for b in content.and_then(Value::as_array).into_iter().flatten() {
                    if b.get("type").and_then(Value::as_str) == Some("tool_use") {
                        self.call(b, &at);
                    }
                }
            }
            _ => {}
        }
    }

    /// The messages read so far.
    pub fn finish(self) -> Vec<Said> {
        self.said
    }

    fn delivered(&mut self, text: &str, at: &Option<String>) {
        for (attrs, body) in teammate_messages(text) {
            let Some(from) = attrs.get("teammate_id") else {
                continue;
            };
            self.said.push(Said {
                at: at.clone(),
                from: from.clone(),
                to: self.owner.clone(),
                text: body,
                summary: attrs.get("summary").cloned(),
                msg_id: None,
                seen: Seen::Delivered,
            });
        }
    }

    fn call(&mut self, block: &Value, at: &Option<String>) {
        let input = block.get("input");
        let s = |k: &str| input.and_then(|i| i.get(k)).and_then(Value::as_str);
        match block.get("name").and_then(Value::as_str) {
            Some("SendMessage") => {
                let Some(to) = s("to").or_else(|| s("recipient")) else {
                    return;
                };
                let body = input.and_then(|i| i.get("message").or_else(|| i.get("content")));
                let text = match body {
                    Some(Value::String(t)) => t.clone(),
                    Some(v @ Value::Object(_)) => v.to_string(),
                    _ => return,
                };
                if let Some(id) = block.get("id").and_then(Value::as_str) {
                    self.calls.insert(id.to_string(), self.said.len());
                }
                self.said.push(Said {
                    at: at.clone(),
                    from: self.owner.clone(),
                    to: to.to_string(),
                    text,
                    summary: s("summary").map(String::from),
                    msg_id: None,
                    seen: Seen::Sent,
                });
            }
            Some("Agent" | "Task") => {
                let (Some(name), Some(prompt)) = (s("name"), s("prompt")) else {
                    return;
                };
                self.said.push(Said {
                    at: at.clone(),
                    from: self.owner.clone(),
                    to: name.to_string(),
                    text: prompt.to_string(),
                    summary: None,
                    msg_id: None,
                    seen: Seen::Spawned,
                });
            }
            _ => {}
        }
    }

    fn result(&mut self, block: &Value) {
        let Some(i) = block
            .get("tool_use_id")
            .and_then(Value::as_str)
            .and_then(|id| self.calls.remove(id))
        else {
            return;
        };
        let text = match block.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
            _ => return,
        };
        let id = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("msg_id")?.as_str().map(String::from));
        self.said[i].msg_id = id;
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

const OPEN: &str = "<teammate-message";
const CLOSE: &str = "</teammate-message>";

/// The `<teammate-message …>` blocks of a delivered text: each one's attributes and body.
/// A block opens at the start of a line; its body ends at the last closing tag before the next
/// block (a body may quote the tag itself).
pub fn teammate_messages(text: &str) -> Vec<(HashMap<String, String>, String)> {
    let starts: Vec<usize> = text
        .match_indices(OPEN)
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || text.as_bytes()[i - 1] == b'\n')
        .filter(|&i| {
            text[i + OPEN.len()..]
                .chars()
                .next()
                .is_some_and(|c| c == ' ' || c == '>')
        })
        .collect();
    let mut out = Vec::new();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(text.len());
        let block = &text[start + OPEN.len()..end];
        let Some(gt) = block.find(">\n").or_else(|| block.find('>')) else {
            continue;
        };
        let attrs = attributes(&block[..gt]);
        let rest = &block[gt + 1..];
        let Some(close) = rest.rfind(CLOSE) else {
            continue;
        };
        let body = rest[..close].strip_prefix('\n').unwrap_or(&rest[..close]);
        let body = body.strip_suffix('\n').unwrap_or(body);
        out.push((attrs, body.to_string()));
    }
    out
}

/// `key="value"` pairs (values as written: Claude Code does not escape them).
fn attributes(s: &str) -> HashMap<String, String> {
    let mut out = HashMap::new();
    let mut rest = s.trim_start();
    while let Some(eq) = rest.find("=\"") {
        let key = rest[..eq].trim().to_string();
        let after = &rest[eq + 2..];
        // A value ends at a quote followed by a space and the next key, or at the end.
        let end = after
            .match_indices('"')
            .map(|(i, _)| i)
            .find(|&i| {
                let tail = &after[i + 1..];
                tail.is_empty()
                    || (tail.starts_with(' ')
                        && tail[1..]
                            .split_once("=\"")
                            .is_some_and(|(k, _)| !k.is_empty() && !k.contains([' ', '"'])))
            })
            .unwrap_or(after.len());
        out.insert(key, after[..end].to_string());
        rest = after.get(end + 1..).unwrap_or("").trim_start();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(owner: &str, lines: &[Value]) -> Vec<Said> {
        let mut r = Reader::new(owner);
        for l in lines {
            r.feed(l.to_string().as_bytes());
        }
        r.finish()
    }

    #[test]
    fn messages_of_a_lead_as_2_1_332_writes_them() {
        let lines = [
            json!({"type":"user","timestamp":"T0","message":{"role":"user","content":"Spawn: worker"}}),
            json!({"type":"assistant","timestamp":"T1","message":{"content":[{"type":"tool_use","id":"a1","name":"Agent","input":{"description":"spawn worker","name":"worker","prompt":"Report: TOK"}}]}}),
            json!({"type":"user","timestamp":"T2","message":{"content":"Another Claude session sent a message:\n<teammate-message teammate_id=\"worker\" color=\"blue\" summary=\"report\">\nREPORT TOK\n</teammate-message>\n\nThis came from another Claude session"}}),
            json!({"type":"user","timestamp":"T3","message":{"content":"Another Claude session sent a message:\n<teammate-message teammate_id=\"worker\" color=\"blue\">\n{\"type\":\"idle_notification\",\"from\":\"worker\"}\n</teammate-message>\n\n<teammate-message teammate_id=\"bob\" summary=\"say \"hi\" now\">\nline one\n</teammate-message> quoted\nline two\n</teammate-message>\n\nThis came from"}}),
            json!({"type":"assistant","timestamp":"T4","message":{"content":[{"type":"tool_use","id":"s1","name":"SendMessage","input":{"to":"worker","summary":"stop","message":"please stop"}}]}}),
            json!({"type":"user","timestamp":"T5","message":{"content":[{"type":"tool_result","tool_use_id":"s1","content":[{"type":"text","text":"{\"success\":true,\"msg_id\":\"m-1\"}"}]}]}}),
            json!({"type":"assistant","timestamp":"T6","message":{"content":[{"type":"tool_use","id":"s2","name":"SendMessage","input":{"type":"shutdown_response","recipient":"team-lead","content":{"type":"shutdown_response","approve":true}}}]}}),
        ];
        let said = read("team-lead", &lines);
        let brief: Vec<_> = said
            .iter()
            .map(|s| (s.from.as_str(), s.to.as_str(), s.text.as_str(), s.seen))
            .collect();
        assert_eq!(
            brief,
            [
                ("team-lead", "worker", "Report: TOK", Seen::Spawned),
                ("worker", "team-lead", "REPORT TOK", Seen::Delivered),
                (
                    "worker",
                    "team-lead",
                    "{\"type\":\"idle_notification\",\"from\":\"worker\"}",
                    Seen::Delivered
                ),
                (
                    "bob",
                    "team-lead",
                    "line one\n</teammate-message> quoted\nline two",
                    Seen::Delivered
                ),
                ("team-lead", "worker", "please stop", Seen::Sent),
                (
                    "team-lead",
                    "team-lead",
                    "{\"type\":\"shutdown_response\",\"approve\":true}",
                    Seen::Sent
                ),
            ]
        );
        assert_eq!(said[1].summary.as_deref(), Some("report"));
        assert_eq!(said[1].at.as_deref(), Some("T2"));
        assert_eq!(said[3].summary.as_deref(), Some("say \"hi\" now"));
        assert_eq!(said[4].msg_id.as_deref(), Some("m-1"));
        assert_eq!(said[5].msg_id, None);
    }

    #[test]
    fn a_teammates_first_message_and_junk() {
        let lines = [
            json!({"type":"user","timestamp":"T0","message":{"content":"<teammate-message teammate_id=\"team-lead\">\nReport: TOK\n</teammate-message>"}}),
            // Not at a line start, not closed, meta: not messages.
            json!({"type":"user","message":{"content":"see <teammate-message teammate_id=\"x\">\nhi\n</teammate-message>"}}),
            json!({"type":"user","message":{"content":"<teammate-message teammate_id=\"x\">\nnever closed"}}),
            json!({"type":"user","isMeta":true,"message":{"content":"<teammate-message teammate_id=\"x\">\nm\n</teammate-message>"}}),
        ];
        let said = read("worker", &lines);
        assert_eq!(said.len(), 1);
        assert_eq!(
            (
                said[0].from.as_str(),
                said[0].to.as_str(),
                said[0].text.as_str()
            ),
            ("team-lead", "worker", "Report: TOK")
        );
        let mut r = Reader::new("w");
        r.feed(b"{\"type\":\"user\",\"mess");
        assert!(r.finish().is_empty());
    }
}
