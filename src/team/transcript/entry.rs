//! One line of a transcript, parsed into only what teamctl reads: the entry's type (found
//! without parsing the line, [`top_level_type`]), then for the few types that matter the
//! fields of [`Line`] (everything else is skipped by the parser, never kept).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::team::model::first_line;

/// The value of the top-level `"type"` key of the JSON object on `line`, found by skipping the
/// other values (strings by `memchr`), so a 100 KB attachment line costs a scan, not a parse.
/// `None` when the line is not an object with a string `type`.
pub fn top_level_type(line: &[u8]) -> Option<&[u8]> {
    let mut i = skip_ws(line, 0);
    if line.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(line, i);
        if line.get(i)? != &b'"' {
            return None;
        }
        let key_end = skip_string(line, i)?;
        let key = &line[i + 1..key_end - 1];
        i = skip_ws(line, key_end);
        if line.get(i)? != &b':' {
            return None;
        }
        i = skip_ws(line, i + 1);
        if key == b"type" {
            if line.get(i)? != &b'"' {
                return None;
            }
            let end = skip_string(line, i)?;
            return Some(&line[i + 1..end - 1]);
        }
        i = skip_ws(line, skip_value(line, i)?);
        match line.get(i)? {
            b',' => i += 1,
            _ => return None,
        }
    }
}

/// The members of the JSON object `obj` as (key, raw value) byte slices, values not parsed (a
/// key with escapes is compared as written). `None` when `obj` is not a well-formed object.
pub fn members(obj: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let mut out = Vec::new();
    let mut i = skip_ws(obj, 0);
    if obj.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(obj, i + 1);
    if obj.get(i) == Some(&b'}') {
        return Some(out);
    }
    loop {
        if obj.get(i)? != &b'"' {
            return None;
        }
        let key_end = skip_string(obj, i)?;
        let key = &obj[i + 1..key_end - 1];
        i = skip_ws(obj, key_end);
        if obj.get(i)? != &b':' {
            return None;
        }
        i = skip_ws(obj, i + 1);
        let end = skip_value(obj, i)?;
        out.push((key, &obj[i..end]));
        i = skip_ws(obj, end);
        match obj.get(i)? {
            b',' => i = skip_ws(obj, i + 1),
            b'}' => return Some(out),
            _ => return None,
        }
    }
}

/// The elements of the JSON array `arr` as raw byte slices, not parsed.
pub fn elements(arr: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut i = skip_ws(arr, 0);
    if arr.get(i) != Some(&b'[') {
        return None;
    }
    i = skip_ws(arr, i + 1);
    if arr.get(i) == Some(&b']') {
        return Some(out);
    }
    loop {
        let end = skip_value(arr, i)?;
        out.push(&arr[i..end]);
        i = skip_ws(arr, end);
        match arr.get(i)? {
            b',' => i = skip_ws(arr, i + 1),
            b']' => return Some(out),
            _ => return None,
        }
    }
}

/// What teamctl reads of a `user` entry, found by [`members`] without parsing the big parts
/// (tool results and their `toolUseResult` copy are most of a transcript's bytes).
#[derive(Debug, Default, PartialEq)]
pub struct UserEntry {
    /// `timestamp`.
    pub timestamp: Option<String>,
    /// `isMeta`.
    pub is_meta: bool,
    /// `sessionId`.
    pub session_id: Option<String>,
    /// `teamName`.
    pub team_name: Option<String>,
    /// `agentName`.
    pub agent_name: Option<String>,
    /// `uuid`.
    pub uuid: Option<String>,
    /// The ids of the tool calls its `tool_result` blocks answer.
    pub results: Vec<String>,
    /// Who sent it, when its content is a message from a teammate (`<teammate-message
    /// teammate_id="<name>"…`): a prompt an inbox fed it.
    pub from_teammate: Option<String>,
    /// It is Claude Code's mark of a turn a person interrupted (`[Request interrupted by user`,
    /// Escape in the session's terminal: the turn is over).
    pub interrupted: bool,
}

/// How Claude Code's mark of an interrupted turn begins (`[Request interrupted by user]`, `… for
/// tool use]`; 2.1.336).
const INTERRUPTED: &str = "[Request interrupted by user";

/// Reads a `user` line the fast way; `None` when it is not well-formed.
pub fn user_entry(line: &[u8]) -> Option<UserEntry> {
    let str_of = |v: &[u8]| -> Option<String> {
        if v.first() == Some(&b'"') {
            serde_json::from_slice::<String>(v).ok()
        } else {
            None
        }
    };
    let mut e = UserEntry::default();
    for (k, v) in members(line)? {
        match k {
            b"timestamp" => e.timestamp = str_of(v),
            b"isMeta" => e.is_meta = v == b"true",
            b"sessionId" => e.session_id = str_of(v),
            b"teamName" => e.team_name = str_of(v),
            b"agentName" => e.agent_name = str_of(v),
            b"uuid" => e.uuid = str_of(v),
            b"message" => {
                let Some(content) = members(v)?.into_iter().find(|(k, _)| *k == b"content") else {
                    continue;
                };
                if content.1.first() == Some(&b'"') {
                    e.from_teammate = str_of(content.1).and_then(|t| {
                        let rest = t.strip_prefix("<teammate-message teammate_id=\"")?;
                        rest.split_once('"').map(|(id, _)| id.to_string())
                    });
                }
                if content.1.first() != Some(&b'[') {
                    e.interrupted |= str_of(content.1).is_some_and(|t| t.starts_with(INTERRUPTED));
                    continue;
                }
                for block in elements(content.1)? {
                    let Some(m) = members(block) else { continue };
                    let get = |key: &[u8]| m.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
                    if get(b"type") == Some(&b"\"text\""[..]) {
                        e.interrupted |= get(b"text")
                            .and_then(str_of)
                            .is_some_and(|t| t.starts_with(INTERRUPTED));
                    }
                    if get(b"type") == Some(&b"\"tool_result\""[..])
                        && let Some(id) = get(b"tool_use_id").and_then(str_of)
                    {
                        e.results.push(id);
                    }
                }
            }
            _ => {}
        }
    }
    Some(e)
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// `b[i]` is the opening quote; returns the index after the closing one. Jumps from quote to
/// quote (a quote after an odd number of backslashes is escaped), so text full of escapes
/// (`\n` in tool output) costs no more than plain text.
fn skip_string(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        let k = j + memchr::memchr(b'"', b.get(j..)?)?;
        let backslashes = b[j..k].iter().rev().take_while(|&&c| c == b'\\').count();
        if backslashes % 2 == 0 {
            return Some(k + 1);
        }
        j = k + 1;
    }
}

fn skip_value(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => skip_string(b, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match *b.get(j)? {
                    b'"' => j = skip_string(b, j)?,
                    b'{' | b'[' => {
                        depth += 1;
                        j += 1;
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        j += 1;
                        if depth == 0 {
                            return Some(j);
                        }
                    }
                    _ => j += 1,
                }
            }
        }
        _ => {
            let mut j = i;
            while j < b.len() && !matches!(b[j], b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t')
            {
                j += 1;
            }
            Some(j)
        }
    }
}

/// The parts of a transcript entry teamctl reads (Claude Code 2.1.x: `user`, `assistant`,
/// `system` and `cost-state` entries).
#[derive(Debug, Deserialize)]
pub struct Line<'a> {
    /// `type`.
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    /// `timestamp` (RFC 3339).
    #[serde(default, borrow)]
    pub timestamp: Option<Cow<'a, str>>,
    /// `sessionId`.
    #[serde(default, rename = "sessionId", borrow)]
    pub session_id: Option<Cow<'a, str>>,
    /// `teamName` (a teammate's entries).
    #[serde(default, rename = "teamName", borrow)]
    pub team_name: Option<Cow<'a, str>>,
    /// `agentName` (a teammate's entries).
    #[serde(default, rename = "agentName", borrow)]
    pub agent_name: Option<Cow<'a, str>>,
    /// `version`: the Claude Code that wrote the entry.
    #[serde(default, borrow)]
    pub version: Option<Cow<'a, str>>,
    /// `requestedModel` (2.1.322+): the model the client asked for, which it prices by.
    #[serde(default, rename = "requestedModel", borrow)]
    pub requested_model: Option<Cow<'a, str>>,
    /// `uuid`.
    #[serde(default, borrow)]
    pub uuid: Option<Cow<'a, str>>,
    /// `isMeta`: text shown to the model that is no turn of its own.
    #[serde(default, rename = "isMeta")]
    pub is_meta: Option<bool>,
    /// `isApiErrorMessage`: an assistant entry standing for a failed API call.
    #[serde(default, rename = "isApiErrorMessage")]
    pub api_error: Option<bool>,
    /// `message` (user and assistant entries).
    #[serde(default, borrow)]
    pub message: Option<ApiMessage<'a>>,
    /// `totalCostUSD` (cost-state).
    #[serde(default, rename = "totalCostUSD")]
    pub total_cost_usd: Option<f64>,
    /// `modelUsage` (cost-state).
    #[serde(default, rename = "modelUsage")]
    pub model_usage: Option<std::collections::BTreeMap<String, ModelUsage>>,
    /// `subtype` (system entries).
    #[serde(default, borrow)]
    pub subtype: Option<Cow<'a, str>>,
    /// `level` (system entries).
    #[serde(default, borrow)]
    pub level: Option<Cow<'a, str>>,
    /// `content` (system entries).
    #[serde(default, deserialize_with = "text_or_skip")]
    pub content: Option<String>,
    /// `error`: an object on `api_error` lines, a string (`rate_limit`, …) on the synthetic
    /// entry that ends a turn whose retries ran out; read when wanted.
    #[serde(default, borrow)]
    pub error: Option<&'a RawValue>,
    /// `retryAttempt` (`api_error` lines).
    #[serde(default, rename = "retryAttempt")]
    pub retry_attempt: Option<u32>,
    /// `maxRetries` (`api_error` lines).
    #[serde(default, rename = "maxRetries")]
    pub max_retries: Option<u32>,
    /// `retryInMs` (`api_error` lines; fractional on 2.1.112).
    #[serde(default, rename = "retryInMs")]
    pub retry_in_ms: Option<f64>,
    /// `apiErrorStatus` (the synthetic entry of a failed call).
    #[serde(default, rename = "apiErrorStatus")]
    pub api_error_status: Option<u16>,
    /// `requestDigest` (`api-request` lines: the same digest again is a retry).
    #[serde(default, rename = "requestDigest", borrow)]
    pub request_digest: Option<Cow<'a, str>>,
}

/// `message` of a user or assistant entry.
#[derive(Debug, Deserialize)]
pub struct ApiMessage<'a> {
    /// The API response id (assistant).
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
    /// The model that answered (assistant).
    #[serde(default, borrow)]
    pub model: Option<Cow<'a, str>>,
    /// `content`: a string or blocks.
    #[serde(default)]
    pub content: Content<'a>,
    /// `stop_reason` (assistant).
    #[serde(default, borrow)]
    pub stop_reason: Option<Cow<'a, str>>,
    /// `usage` (assistant).
    #[serde(default)]
    pub usage: Option<Usage>,
}

/// A message's content.
#[derive(Debug, Default)]
pub enum Content<'a> {
    /// None or not understood.
    #[default]
    None,
    /// A plain string (a typed prompt).
    Text(Cow<'a, str>),
    /// Content blocks.
    Blocks(Vec<Block<'a>>),
}

/// One content block.
#[derive(Debug, Deserialize)]
pub struct Block<'a> {
    /// `text`, `tool_use`, `tool_result`, `thinking`, `image`, …
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    /// `text` (text blocks).
    #[serde(default, borrow)]
    pub text: Option<Cow<'a, str>>,
    /// The tool (tool_use).
    #[serde(default, borrow)]
    pub name: Option<Cow<'a, str>>,
    /// The call's id (tool_use).
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
    /// The tool input (tool_use).
    #[serde(default)]
    pub input: Option<Value>,
    /// The call it answers (tool_result).
    #[serde(default, borrow)]
    pub tool_use_id: Option<Cow<'a, str>>,
    /// The result (tool_result), unparsed: [`Block::result_text`] reads it when it is wanted.
    #[serde(default, borrow)]
    pub content: Option<&'a RawValue>,
    /// Whether the tool failed (tool_result).
    #[serde(default)]
    pub is_error: Option<bool>,
}

/// `usage` of an assistant entry, as the Messages API reports it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct Usage {
    /// Input tokens not read from or written to the cache.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default, deserialize_with = "u64_or_zero")]
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default, deserialize_with = "u64_or_zero")]
    pub cache_creation_input_tokens: u64,
    /// Of those, written with a one-hour lifetime (priced higher): the API's
    /// `cache_creation.ephemeral_1h_input_tokens` (kept as a number in teamctl's index).
    #[serde(default, rename = "cache_creation", deserialize_with = "one_hour")]
    pub cache_write_1h: u64,
    /// Server-side web searches: `server_tool_use.web_search_requests` (a number in the index).
    #[serde(default, rename = "server_tool_use", deserialize_with = "web_searches")]
    pub web_searches: u64,
    /// `inference_geo` (`us` costs 1.1 times as much).
    #[serde(default)]
    pub inference_geo: Option<String>,
    /// `speed` (`fast` has its own prices).
    #[serde(default)]
    pub speed: Option<String>,
}

impl Usage {
    /// One-hour cache writes (at most every cache write).
    pub fn cache_creation_1h(&self) -> u64 {
        self.cache_write_1h.min(self.cache_creation_input_tokens)
    }
}

/// A model's line in a cost-state's `modelUsage`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct ModelUsage {
    /// `inputTokens`.
    #[serde(default, rename = "inputTokens")]
    pub input_tokens: u64,
    /// `outputTokens`.
    #[serde(default, rename = "outputTokens")]
    pub output_tokens: u64,
    /// `cacheReadInputTokens`.
    #[serde(default, rename = "cacheReadInputTokens")]
    pub cache_read_input_tokens: u64,
    /// `cacheCreationInputTokens`.
    #[serde(default, rename = "cacheCreationInputTokens")]
    pub cache_creation_input_tokens: u64,
    /// `costUSD`.
    #[serde(default, rename = "costUSD")]
    pub cost_usd: f64,
}

fn u64_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.unwrap_or(0))
}

fn one_hour<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    struct CacheCreation {
        #[serde(default, deserialize_with = "u64_or_zero")]
        ephemeral_1h_input_tokens: u64,
    }
    // A number: teamctl's own index, which keeps only the one-hour part.
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::Number(n) => n.as_u64().unwrap_or(0),
        Value::Object(_) => serde_json::from_value::<CacheCreation>(v)
            .map(|c| c.ephemeral_1h_input_tokens)
            .unwrap_or(0),
        _ => 0,
    })
}

fn web_searches<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    #[derive(Deserialize)]
    struct ServerToolUse {
        #[serde(default, deserialize_with = "u64_or_zero")]
        web_search_requests: u64,
    }
    let v = Value::deserialize(d)?;
    Ok(match v {
        Value::Number(n) => n.as_u64().unwrap_or(0),
        Value::Object(_) => serde_json::from_value::<ServerToolUse>(v)
            .map(|c| c.web_search_requests)
            .unwrap_or(0),
        _ => 0,
    })
}

impl Content<'_> {
    /// Its text: the string, or the text blocks joined.
    pub fn text(&self) -> Option<String> {
        match self {
            Content::None => None,
            Content::Text(t) => Some(t.to_string()),
            Content::Blocks(b) => {
                let texts: Vec<&str> = b.iter().filter_map(|b| b.text.as_deref()).collect();
                (!texts.is_empty()).then(|| texts.join("\n"))
            }
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or content blocks")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut blocks = Vec::new();
                // A block that is not an object with a type is skipped, not an error.
                while let Some(b) = seq.next_element::<MaybeBlock<'a>>()? {
                    if let MaybeBlock(Some(b)) = b {
                        blocks.push(b);
                    }
                }
                Ok(Content::Blocks(blocks))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content::None)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// A content block, or `None` for an element that is not one.
struct MaybeBlock<'a>(Option<Block<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for MaybeBlock<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = MaybeBlock<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a content block")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                // An object that is no block (no type) is skipped, not an error.
                let b: Result<Block<'a>, A::Error> =
                    Block::deserialize(de::value::MapAccessDeserializer::new(map));
                Ok(MaybeBlock(b.ok()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MaybeBlock(None))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(MaybeBlock(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(MaybeBlock(None))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MaybeBlock(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MaybeBlock(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MaybeBlock(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MaybeBlock(None))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

impl Block<'_> {
    /// A tool result's text: a string, or the text of `[{type: "text", text}, …]` parts joined
    /// by newlines (other parts as `[image]` and the like).
    pub fn result_text(&self) -> Option<String> {
        let v: Value = serde_json::from_str(self.content?.get()).ok()?;
        text_of(v)
    }
}

/// A string, or the text of `[{type: "text", text}, …]` parts joined by newlines (other parts
/// as `[image]` and the like); anything else is `None`.
fn text_or_skip<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(text_of(Value::deserialize(d)?))
}

fn text_of(v: Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s),
        Value::Array(parts) => Some(
            parts
                .iter()
                .map(
                    |p| match (p.get("type").and_then(Value::as_str), p.get("text")) {
                        (_, Some(Value::String(t))) => t.clone(),
                        (Some(kind), _) => format!("[{kind}]"),
                        _ => String::new(),
                    },
                )
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// Parses a line whose top-level type teamctl reads; `None` for a line that does not parse
/// (torn, or not an entry).
pub fn parse(line: &[u8]) -> Option<Line<'_>> {
    serde_json::from_slice(line).ok()
}

/// A one-line summary of a tool call's input: the command, the file, the pattern, the URL,
/// whom a message goes to; otherwise the first string input, or the input as compact JSON.
pub fn tool_summary(tool: &str, input: Option<&Value>) -> String {
    match input {
        Some(i) => input_summary(tool, i).unwrap_or_else(|| first_line(&i.to_string(), 160)),
        None => String::new(),
    }
}

/// The one thing a tool call's input is about (see [`tool_summary`]), or `None` when no input
/// field says it.
pub fn input_summary(tool: &str, input: &Value) -> Option<String> {
    let s = |k: &str| input.get(k).and_then(Value::as_str);
    let line = |t: &str| first_line(t, 160);
    let picked = match tool {
        "Bash" | "BashOutput" | "PowerShell" => s("command").map(line),
        "Read" | "Write" | "Edit" | "MultiEdit" => s("file_path").map(line),
        "NotebookEdit" | "NotebookRead" => s("notebook_path").map(line),
        "Grep" => s("pattern").map(|p| match s("path") {
            Some(path) => line(&format!("{p} in {path}")),
            None => line(p),
        }),
        "Glob" => s("pattern").map(line),
        "WebFetch" => s("url").map(line),
        "WebSearch" => s("query").map(line),
        "Agent" | "Task" => s("description").or(s("name")).map(line),
        "SendMessage" => s("to").map(|to| {
            let what = match input.get("message") {
                Some(Value::String(m)) => s("summary").unwrap_or(m).to_string(),
                Some(Value::Object(o)) => o
                    .get("type")
                    .and_then(Value::as_str)
                    .map(|t| format!("[{t}]"))
                    .unwrap_or_default(),
                _ => s("summary").unwrap_or("").to_string(),
            };
            line(&format!("to {to}: {what}"))
        }),
        "TodoWrite" => input
            .get("todos")
            .and_then(Value::as_array)
            .map(|t| format!("{} todos", t.len())),
        _ => None,
    };
    if picked.is_some() {
        return picked;
    }
    for k in [
        "command",
        "file_path",
        "path",
        "pattern",
        "url",
        "query",
        "description",
        "prompt",
        "name",
    ] {
        if let Some(v) = s(k) {
            return Some(line(v));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_top_level_type_is_found_past_nested_ones() {
        let cases: [(&str, Option<&str>); 7] = [
            (r#"{"type":"mode","mode":"normal"}"#, Some("mode")),
            (
                r#"{"parentUuid":null,"message":{"content":[{"type":"text","text":"a \"type\":\"x\" \\"}]},"type":"assistant"}"#,
                Some("assistant"),
            ),
            (
                r#"{ "a" : [1, {"type":"x"}, "]"], "b": -1.5e3, "c": true, "type" : "user" }"#,
                Some("user"),
            ),
            (r#"{"a":"b"}"#, None),
            (r#"{"type":1}"#, None),
            (r#"{"message":{"content":"tor"#, None),
            ("not json", None),
        ];
        for (line, want) in cases {
            assert_eq!(
                top_level_type(line.as_bytes()).map(|t| std::str::from_utf8(t).unwrap()),
                want,
                "{line}"
            );
        }
    }

    #[test]
    fn lines_parse_into_what_is_read() {
        let line = json!({
            "type": "assistant", "timestamp": "2026-12-01T02:56:46.576Z", "sessionId": "s",
            "teamName": "t", "agentName": "worker", "toolUseResult": {"big": [1, 2, 3]},
            "message": {"id": "msg_1", "model": "claude-opus-5-5", "stop_reason": "tool_use",
                "content": [{"type": "text", "text": "x\ny"}, 7,
                    {"type": "tool_use", "id": "tu", "name": "Bash", "input": {"command": "ls -l\nrm"}}],
                "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": null,
                    "cache_creation_input_tokens": 40,
                    "cache_creation": {"ephemeral_1h_input_tokens": 30, "ephemeral_5m_input_tokens": 10},
                    "server_tool_use": {"web_search_requests": 2}, "inference_geo": "us", "speed": "standard",
                    "iterations": []}}
        })
        .to_string();
        let l = parse(line.as_bytes()).unwrap();
        assert_eq!(l.kind, "assistant");
        assert_eq!(l.agent_name.as_deref(), Some("worker"));
        let m = l.message.unwrap();
        let u = m.usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.output_tokens, u.cache_read_input_tokens),
            (10, 5, 0)
        );
        assert_eq!((u.cache_creation_1h(), u.web_searches), (30, 2));
        assert_eq!(u.inference_geo.as_deref(), Some("us"));
        let Content::Blocks(b) = m.content else {
            panic!()
        };
        assert_eq!(b.len(), 2);
        assert_eq!(
            tool_summary(b[1].name.as_deref().unwrap(), b[1].input.as_ref()),
            "ls -l"
        );
        // The index keeps usage in its own (flat) form and reads it back.
        let back: Usage = serde_json::from_value(serde_json::to_value(&u).unwrap()).unwrap();
        assert_eq!(back, u);
        let result = json!({"type":"user","message":{"role":"user","content":[
            {"type":"tool_result","tool_use_id":"tu","is_error":true,
             "content":[{"type":"text","text":"boom"},{"type":"image"}]}]}})
        .to_string();
        let l = parse(result.as_bytes()).unwrap();
        let Content::Blocks(b) = l.message.unwrap().content else {
            panic!()
        };
        assert_eq!(b[0].result_text().as_deref(), Some("boom\n[image]"));
        assert_eq!(b[0].is_error, Some(true));
    }

    #[test]
    fn user_entries_the_fast_way() {
        let line = json!({"parentUuid": "p", "type": "user", "timestamp": "2026-12-01T00:00:00.000Z",
            "sessionId": "s", "teamName": "t", "agentName": "a\"b", "uuid": "u1",
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "tu1", "content": "x \\\" } ] {", "is_error": true},
                {"type": "text", "text": "hi"},
                {"tool_use_id": "tu2", "type": "tool_result", "content": [{"type": "text", "text": "y"}]}]},
            "toolUseResult": {"stdout": "]}\"\n", "n": [1, 2.5e3, null, false]}})
        .to_string();
        let e = user_entry(line.as_bytes()).unwrap();
        assert_eq!(e.results, ["tu1", "tu2"]);
        assert_eq!(e.agent_name.as_deref(), Some("a\"b"));
        assert_eq!(e.timestamp.as_deref(), Some("2026-12-01T00:00:00.000Z"));
        assert!(!e.is_meta);
        let prompt = r#"{"type":"user","isMeta":true,"message":{"content":"go"}}"#;
        let e = user_entry(prompt.as_bytes()).unwrap();
        assert!(e.is_meta && e.results.is_empty());
        assert!(user_entry(br#"{"type":"user","message":{"content":[{"type":"#).is_none());
        assert_eq!(members(b" { } "), Some(vec![]));
        assert_eq!(
            elements(b"[ 1 , \"a\" ]"),
            Some(vec![&b"1"[..], &b"\"a\""[..]])
        );
    }

    #[test]
    fn tool_summaries() {
        let t = |tool: &str, v: Value| tool_summary(tool, Some(&v));
        assert_eq!(
            t("Grep", json!({"pattern": "fn main", "path": "src"})),
            "fn main in src"
        );
        assert_eq!(t("Read", json!({"file_path": "/a/b.rs"})), "/a/b.rs");
        assert_eq!(
            t("SendMessage", json!({"to": "lead", "message": "hi\nthere"})),
            "to lead: hi"
        );
        assert_eq!(
            t(
                "SendMessage",
                json!({"to": "lead", "message": {"type": "shutdown_response"}})
            ),
            "to lead: [shutdown_response]"
        );
        assert_eq!(t("mcp__x__y", json!({"query": "q"})), "q");
        assert_eq!(t("Other", json!({"n": 1})), r#"{"n":1}"#);
        assert_eq!(tool_summary("Bash", None), "");
    }
}
