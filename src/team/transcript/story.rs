//! A transcript as a story (`teamctl log`): the prompts and team messages a session received,
//! its text, each tool call and its result, and errors, one [`StoryEvent`] each, in file order.

use std::collections::VecDeque;

use serde::Serialize;

use crate::team::model::first_line;
use crate::team::transcript::entry::{self, Content, Line};

/// What an event is (`log --json` `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A prompt it was given (typed, or its brief).
    Prompt,
    /// A team message delivered to it (`<teammate-message>`).
    Message,
    /// Text it wrote.
    Text,
    /// A tool call it made.
    ToolUse,
    /// A tool call's result.
    ToolResult,
    /// An API error or another error Claude Code recorded.
    Error,
}

impl Kind {
    /// Its snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Prompt => "prompt",
            Kind::Message => "message",
            Kind::Text => "text",
            Kind::ToolUse => "tool_use",
            Kind::ToolResult => "tool_result",
            Kind::Error => "error",
        }
    }
}

/// One event of the story.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoryEvent {
    /// The entry's timestamp.
    pub at: Option<String>,
    /// The session it belongs to.
    pub session_id: Option<String>,
    /// What it is.
    pub kind: Kind,
    /// The tool (tool_use, tool_result).
    pub tool: Option<String>,
    /// One line: the tool call's summary, the first line of a text or result, who sent a message.
    pub summary: String,
    /// The whole text: the prompt, the message, the text, the result, the error; a tool call's
    /// input as compact JSON.
    pub text: Option<String>,
    /// Whether a tool result is an error (`null` for other kinds; `true` for errors).
    pub is_error: Option<bool>,
}

/// Turns transcript lines into events, remembering the names of recent tool calls so that their
/// results can be named.
#[derive(Debug, Default)]
pub struct Story {
    tools: VecDeque<(String, String)>,
}

impl Story {
    /// The events of one line (none for a line that is not a user, assistant or system entry).
    pub fn events(&mut self, line: &[u8]) -> Vec<StoryEvent> {
        let Some(kind) = entry::top_level_type(line) else {
            return Vec::new();
        };
        if !matches!(kind, b"user" | b"assistant" | b"system") {
            return Vec::new();
        }
        let Some(l) = entry::parse(line) else {
            return Vec::new();
        };
        if l.is_meta == Some(true) {
            return Vec::new();
        }
        let mut out = Vec::new();
        let ev =
            |kind: Kind, tool: Option<String>, summary: String, text: Option<String>| StoryEvent {
                at: l.timestamp.as_ref().map(|t| t.to_string()),
                session_id: l.session_id.as_ref().map(|t| t.to_string()),
                kind,
                tool,
                summary,
                text,
                is_error: match kind {
                    Kind::Error => Some(true),
                    _ => None,
                },
            };
        match l.kind.as_ref() {
            "system" => {
                let error = l.level.as_deref() == Some("error")
                    || l.subtype.as_deref().is_some_and(|s| s.contains("error"));
                if let (true, Some(c)) = (error, &l.content) {
                    out.push(ev(Kind::Error, None, first_line(c, 160), Some(c.clone())));
                }
            }
            "assistant" => self.assistant(&l, &mut out, &ev),
            _ => self.user(&l, &mut out, &ev),
        }
        out
    }

    fn assistant(
        &mut self,
        l: &Line,
        out: &mut Vec<StoryEvent>,
        ev: &dyn Fn(Kind, Option<String>, String, Option<String>) -> StoryEvent,
    ) {
        let Some(m) = &l.message else { return };
        let error = l.api_error == Some(true);
        let text = |t: &str, out: &mut Vec<StoryEvent>| {
            if !t.trim().is_empty() {
                let kind = if error { Kind::Error } else { Kind::Text };
                out.push(ev(kind, None, first_line(t, 160), Some(t.to_string())));
            }
        };
        match &m.content {
            Content::Text(t) => text(t, out),
            Content::Blocks(blocks) => {
                for b in blocks {
                    match b.kind.as_ref() {
                        "text" => text(b.text.as_deref().unwrap_or(""), out),
                        "tool_use" => {
                            let name = b.name.as_deref().unwrap_or("").to_string();
                            if let Some(id) = &b.id {
                                self.tools.push_back((id.to_string(), name.clone()));
                                if self.tools.len() > 64 {
                                    self.tools.pop_front();
                                }
                            }
                            out.push(ev(
                                Kind::ToolUse,
                                Some(name.clone()),
                                entry::tool_summary(&name, b.input.as_ref()),
                                b.input.as_ref().map(|i| i.to_string()),
                            ));
                        }
                        _ => {}
                    }
                }
            }
            Content::None => {}
        }
    }

    fn user(
        &mut self,
        l: &Line,
        out: &mut Vec<StoryEvent>,
        ev: &dyn Fn(Kind, Option<String>, String, Option<String>) -> StoryEvent,
    ) {
        let Some(m) = &l.message else { return };
        let prompt = |t: &str, out: &mut Vec<StoryEvent>| {
            // Context Claude Code adds around a prompt is not the prompt.
            if t.trim().is_empty() || t.trim_start().starts_with("<system-reminder>") {
                return;
            }
            let messages = teammate_messages(t);
            if messages.is_empty() {
                out.push(ev(
                    Kind::Prompt,
                    None,
                    first_line(t, 160),
                    Some(t.to_string()),
                ));
            }
            for (from, summary, body) in messages {
                let what = match summary {
                    Some(s) => s,
                    None if body.trim_start().starts_with('{') => frame_type(&body)
                        .map(|t| format!("[{t}]"))
                        .unwrap_or_else(|| first_line(&body, 120)),
                    None => first_line(&body, 120),
                };
                out.push(ev(
                    Kind::Message,
                    None,
                    first_line(&format!("from {from}: {what}"), 160),
                    Some(body),
                ));
            }
        };
        match &m.content {
            Content::Text(t) => prompt(t, out),
            Content::Blocks(blocks) => {
                for b in blocks {
                    match b.kind.as_ref() {
                        "text" => prompt(b.text.as_deref().unwrap_or(""), out),
                        "tool_result" => {
                            let id = b.tool_use_id.as_deref().unwrap_or("");
                            let tool = self
                                .tools
                                .iter()
                                .rev()
                                .find(|(i, _)| i == id)
                                .map(|(_, n)| n.clone());
                            let text = b.result_text().unwrap_or_default();
                            let mut e =
                                ev(Kind::ToolResult, tool, first_line(&text, 160), Some(text));
                            e.is_error = Some(b.is_error == Some(true));
                            out.push(e);
                        }
                        _ => {}
                    }
                }
            }
            Content::None => {}
        }
    }
}

/// The `<teammate-message teammate_id="X" summary="S">body</teammate-message>` blocks of a
/// text: sender, summary, body.
pub fn teammate_messages(text: &str) -> Vec<(String, Option<String>, String)> {
    const OPEN: &str = "<teammate-message";
    const CLOSE: &str = "</teammate-message>";
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(OPEN) {
        let after = &rest[i + OPEN.len()..];
        let Some(gt) = after.find('>') else { break };
        let attrs = &after[..gt];
        let body_and_rest = &after[gt + 1..];
        let (body, next) = match body_and_rest.find(CLOSE) {
            Some(end) => (&body_and_rest[..end], &body_and_rest[end + CLOSE.len()..]),
            None => (body_and_rest, ""),
        };
        let attr = |name: &str| {
            let key = format!("{name}=\"");
            let at = attrs.find(&key)? + key.len();
            let end = attrs[at..].find('"')?;
            Some(attrs[at..at + end].to_string())
        };
        out.push((
            attr("teammate_id").unwrap_or_default(),
            attr("summary"),
            body.trim_matches('\n').to_string(),
        ));
        rest = next;
    }
    out
}

fn frame_type(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body.trim()).ok()?;
    v.get("type")?.as_str().map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn events(story: &mut Story, v: serde_json::Value) -> Vec<(Kind, Option<String>, String)> {
        story
            .events(v.to_string().as_bytes())
            .into_iter()
            .map(|e| (e.kind, e.tool, e.summary))
            .collect()
    }

    #[test]
    fn a_turn_as_a_story() {
        let mut s = Story::default();
        let prompt = json!({"type":"user","timestamp":"t1","sessionId":"s","message":{"role":"user","content":[
            {"type":"text","text":"<system-reminder>\nAttribution…</system-reminder>"},
            {"type":"text","text":"<teammate-message teammate_id=\"team-lead\" summary=\"go\">\nDo it\n</teammate-message>\n\n<teammate-message teammate_id=\"bob\">\n{\"type\":\"idle_notification\"}\n</teammate-message>"}]}});
        assert_eq!(
            events(&mut s, prompt),
            [
                (Kind::Message, None, "from team-lead: go".into()),
                (Kind::Message, None, "from bob: [idle_notification]".into())
            ]
        );
        let call = json!({"type":"assistant","message":{"id":"m","content":[
            {"type":"text","text":"Running it.\nNow."},
            {"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"cargo test"}}]}});
        assert_eq!(
            events(&mut s, call),
            [
                (Kind::Text, None, "Running it.".into()),
                (Kind::ToolUse, Some("Bash".into()), "cargo test".into())
            ]
        );
        let result = json!({"type":"user","message":{"content":[
            {"type":"tool_result","tool_use_id":"tu1","is_error":true,"content":"error[E0308]: x\nmore"}]}});
        let e = s.events(result.to_string().as_bytes());
        assert_eq!(
            (
                e[0].kind,
                e[0].tool.as_deref(),
                e[0].summary.as_str(),
                e[0].is_error
            ),
            (
                Kind::ToolResult,
                Some("Bash"),
                "error[E0308]: x",
                Some(true)
            )
        );
        assert_eq!(e[0].text.as_deref(), Some("error[E0308]: x\nmore"));
        let typed = json!({"type":"user","message":{"content":"Review PR 42"}});
        assert_eq!(
            events(&mut s, typed),
            [(Kind::Prompt, None, "Review PR 42".into())]
        );
        let api = json!({"type":"assistant","isApiErrorMessage":true,"message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 500"}]}});
        assert_eq!(
            events(&mut s, api),
            [(Kind::Error, None, "API Error: 500".into())]
        );
        let meta = json!({"type":"user","isMeta":true,"message":{"content":"x"}});
        assert!(events(&mut s, meta).is_empty());
        assert!(s.events(b"{\"type\":\"user\",\"mess").is_empty());
    }
}
