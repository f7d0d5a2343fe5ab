//! Claude Code's session transcripts, read-only: what each member has done and spent.
//!
//! Every Claude Code session appends one JSON object a line to
//! `$CLAUDE_CONFIG_DIR/projects/<cwd, every character but A-Z a-z 0-9 as ->/<session id>.jsonl`;
//! subagents, in-process teammates among them, to `<that path without .jsonl>/subagents/
//! agent-*.jsonl` (see [`locate`]). teamctl reads them and never writes them.
//!
//! A [`FileState`] is what one transcript says so far, built line by line ([`FileState::feed`])
//! from the bytes appended since the last read ([`FileState::update`]): tokens and cost
//! ([`Spend`]), the current activity, the turn, the session's identity. Only whole lines are
//! read: a line still being written (no newline yet) is left for the next read, so a growing
//! transcript is never misread. Memory stays bounded however big the file: it is streamed in
//! 1 MiB reads, and a line longer than [`MAX_LINE`] is skipped (no entry teamctl reads is
//! that long). [`index`] keeps each file's state between runs, so a later read parses only
//! what was appended.
//!
//! The transcripts are the team's files too, so they are reached as every file under the config
//! dir is ([`crate::store::dir`]): `projects/`, the project folders and `<session>/subagents/`
//! are listed through folder handles opened from the config dir down with `O_DIRECTORY |
//! O_NOFOLLOW`, and a transcript (or a `.meta.json`) is opened `O_NOFOLLOW | O_NONBLOCK` below
//! such a handle and read only once `fstat` says it is a regular file. A symlink at any
//! component, a FIFO, a socket or a device is skipped with a warning and never read, so nothing
//! outside the config dir reaches `status`, `log` or the index.
//!
//! Spend, as Claude Code 2.1.332 records it (checked with the real client, see
//! `docs/compatibility.md` for older versions):
//! - each API response is an `assistant` entry (one per content block, so a response may span
//!   several entries carrying the same `message.id`: it is counted once, with the usage of its
//!   last entry) with `message.model` and `message.usage`;
//! - when a session ends it appends a `cost-state` entry: `totalCostUSD` and `modelUsage`, the
//!   process's own accounting, which also covers the subagents and in-process teammates that
//!   ran inside it. A session resumed later appends more and, at its end, a new cumulative
//!   `cost-state`; so the last `cost-state`, when no response follows it, is the session's
//!   figure.

pub mod api;
pub mod entry;
pub mod index;
pub mod locate;
pub mod pricing;
pub mod skip;
pub mod story;
mod tokens;
pub mod window;

pub use tokens::Tokens;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, MetadataExt};

use serde::{Deserialize, Serialize};

use crate::store::dir::Loc;
use crate::team::model::first_line;
use crate::team::transcript::api::Api;
use crate::team::transcript::entry::{Content, Line, Usage};

/// Lines longer than this are skipped unread (bytes).
pub const MAX_LINE: usize = 8 << 20;

/// How much is read at a time (bytes).
const CHUNK: usize = 1 << 20;

/// What a member is doing (`status --json` `activity`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    /// When (the entry's timestamp).
    pub at: Option<String>,
    /// `tool_use` (a tool call without its result yet) or `text` (the last text it wrote).
    pub kind: String,
    /// The tool (`tool_use`).
    pub tool: Option<String>,
    /// One line: the tool call's summary (the command, the file, the pattern) or the text's first
    /// line.
    pub summary: String,
}

/// Claude Code's own accounting of a session (a `cost-state` entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CostState {
    /// `totalCostUSD`.
    pub total_cost_usd: f64,
    /// `modelUsage`, summed over the models.
    pub tokens: Tokens,
}

/// One API response not yet added to the totals: the next entry may be another block of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    /// `message.id`.
    pub id: String,
    /// The model it is priced by: `requestedModel` when the entry has it, else
    /// `message.model`.
    pub model: String,
    /// Its usage, from its latest entry.
    pub usage: Usage,
    /// The Claude Code version that wrote it (it decides the prices).
    pub version: Option<String>,
}

/// Tokens and cost of one transcript file, response by response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// Responses added.
    pub responses: u64,
    /// Their tokens.
    pub tokens: Tokens,
    /// The cost of those that could be priced, summed in file order.
    pub cost_usd: f64,
    /// Responses whose model has no price.
    pub unpriced: u64,
    /// Their tokens, by model.
    pub unpriced_tokens: BTreeMap<String, Tokens>,
    /// The last response, counted only once the next one starts.
    pub pending: Option<Response>,
    /// Ids of the last responses added (a response seen again is not added twice).
    pub recent: Vec<String>,
    /// The last `cost-state`, and whether a response came after it.
    pub cost_state: Option<CostState>,
    /// A response was written after the last `cost-state` (the session was resumed).
    pub after_cost_state: bool,
}

impl Spend {
    fn response(&mut self, id: &str, model: &str, usage: Usage, version: Option<&str>) {
        if let Some(p) = &mut self.pending
            && p.id == id
        {
            p.usage = usage;
            return;
        }
        if self.recent.iter().any(|r| r == id) {
            return;
        }
        self.commit();
        self.pending = Some(Response {
            id: id.to_string(),
            model: model.to_string(),
            usage,
            version: version.map(String::from),
        });
        self.after_cost_state = self.cost_state.is_some();
    }

    fn commit(&mut self) {
        let Some(p) = self.pending.take() else { return };
        let (tokens, cost) = (
            Tokens::of(&p.usage),
            pricing::cost(&p.model, &p.usage, p.version.as_deref()),
        );
        self.responses += 1;
        self.tokens.add(&tokens);
        match cost {
            Some(c) => self.cost_usd += c,
            None => {
                self.unpriced += 1;
                self.unpriced_tokens
                    .entry(p.model)
                    .or_default()
                    .add(&tokens);
            }
        }
        self.recent.push(p.id);
        if self.recent.len() > 8 {
            self.recent.remove(0);
        }
    }

    /// Tokens of every response so far (the pending one included).
    pub fn tokens(&self) -> Tokens {
        let mut t = self.tokens;
        if let Some(p) = &self.pending {
            t.add(&Tokens::of(&p.usage));
        }
        t
    }

    /// Cost of every response so far, computed from its usage; `None` when one of them has a
    /// model without a price.
    pub fn computed_usd(&self) -> Option<f64> {
        let mut c = self.cost_usd;
        if let Some(p) = &self.pending {
            c += pricing::cost(&p.model, &p.usage, p.version.as_deref())?;
        }
        (self.unpriced == 0).then_some(c)
    }

    /// Cost of the responses that could be priced (the pending one included).
    pub fn known_usd(&self) -> f64 {
        let pending = self
            .pending
            .as_ref()
            .and_then(|p| pricing::cost(&p.model, &p.usage, p.version.as_deref()));
        self.cost_usd + pending.unwrap_or(0.0)
    }

    /// Tokens of the responses whose model has no price, by model (the pending one included).
    pub fn unpriced(&self) -> BTreeMap<String, Tokens> {
        let mut out = self.unpriced_tokens.clone();
        if let Some(p) = &self.pending
            && pricing::cost(&p.model, &p.usage, p.version.as_deref()).is_none()
        {
            out.entry(p.model.clone())
                .or_default()
                .add(&Tokens::of(&p.usage));
        }
        out
    }

    /// Claude Code's own figure, when the session ended and left one that nothing followed.
    pub fn claude_code(&self) -> Option<&CostState> {
        self.cost_state.as_ref().filter(|_| !self.after_cost_state)
    }
}

/// Where a session's turn stands (the lead's, for `run`'s done rule).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Whether any assistant entry exists (the first turn has produced something).
    pub answered: bool,
    /// Whether the last `user`/`assistant` entry is an assistant entry not waiting for a tool.
    pub ended: bool,
    /// `user`/`assistant` entries seen.
    pub messages: u64,
    /// Prompts and messages it received (user entries that are not tool results).
    pub prompts: u64,
    /// When the newest prompt or message it received was written (the newest turn's start).
    #[serde(default)]
    pub began_at: Option<String>,
    /// When the newest turn ended, by the surest sign the client writes: a `system`
    /// `turn_duration` entry (2.1.150 and later), an assistant entry whose `stop_reason` is
    /// given and is not `tool_use`, or the mark of a turn a person interrupted (`[Request
    /// interrupted by user`: no turn_duration follows it); `None` inside a turn (an entry
    /// written while a response streams, without a `stop_reason`, is no end).
    #[serde(default)]
    pub ended_at: Option<String>,
    /// The text blocks of the newest assistant entry that has text (not kept in the index).
    #[serde(skip)]
    pub last_text: Option<String>,
}

/// A tool call still waiting for its result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct OpenTool {
    id: String,
    activity: Activity,
}

/// What one transcript file says so far, and where reading stopped.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileState {
    /// Device and inode of the file read (another file at the same path starts afresh).
    pub dev: u64,
    /// Inode.
    pub ino: u64,
    /// Bytes read: everything up to the last complete line.
    pub offset: u64,
    /// Hash of the 4 KiB just before `offset` (a file rewritten in place starts afresh).
    tail: u64,
    /// Inside a line longer than [`MAX_LINE`], skipped.
    skipping: bool,
    /// Lines skipped for their length.
    pub oversized: u64,
    /// Assistant entries that could not be read (their usage is not counted).
    pub unreadable: u64,
    /// `sessionId`.
    pub session_id: Option<String>,
    /// `teamName` of its entries (a teammate's session).
    pub team: Option<String>,
    /// `agentName` of its entries.
    pub agent: Option<String>,
    /// Timestamp of its first entry.
    pub first_at: Option<String>,
    /// Who sent its first prompt, when that was a message from a teammate (`<teammate-message
    /// teammate_id="<name>"…`; `""`: its first prompt was no such message): a teammate's
    /// session begins with its lead's brief.
    #[serde(default)]
    pub first_from: Option<String>,
    /// `uuid` of its first entry (in-process teammates of Claude Code up to 2.1.178 write a new
    /// file per turn, each a copy of the whole history: copies share it).
    pub first_uuid: Option<String>,
    /// Timestamp of its newest entry.
    pub last_at: Option<String>,
    /// The model of its newest response.
    pub model: Option<String>,
    /// The context its newest response was given: input, cache read and cache creation
    /// tokens (absent from an index written before teamctl counted it, until the next
    /// response).
    #[serde(default)]
    pub context_tokens: Option<u64>,
    /// Tokens and cost.
    pub spend: Spend,
    /// Where its calls to the API stand.
    pub api: Api,
    /// The turn.
    pub turn: Turn,
    /// The last text written, as an activity.
    last_text: Option<Activity>,
    /// Tool calls without a result yet (newest last, at most 16).
    open_tools: Vec<OpenTool>,
}

/// What [`FileState::update`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Update {
    /// Nothing new.
    Unchanged,
    /// New lines were read.
    Grew,
    /// The file was replaced or truncated: read again from the start.
    Reread,
    /// The file is gone (the state is kept).
    Missing,
}

impl FileState {
    /// Takes one line (without its newline) into account. A line that does not parse, or whose
    /// type teamctl does not read, changes nothing.
    pub fn feed(&mut self, line: &[u8]) {
        let Some(kind) = entry::top_level_type(line) else {
            return;
        };
        if !matches!(
            kind,
            b"user" | b"assistant" | b"cost-state" | b"system" | b"attachment" | b"api-request"
        ) {
            return;
        }
        // Tool results are most of a transcript's bytes: a user entry is read without parsing
        // them.
        if kind == b"user" {
            if let Some(u) = entry::user_entry(line) {
                self.user_fast(u);
            }
            return;
        }
        // Attachments are big; only read the head of one while the identity is unknown.
        if kind == b"attachment" {
            if self.team.is_none()
                && let Some(l) = entry::parse(line)
            {
                self.identity(&l);
            }
            return;
        }
        let Some(l) = entry::parse(line) else {
            // An assistant entry teamctl cannot read may have had a usage: said, not dropped.
            self.unreadable += u64::from(kind == b"assistant");
            return;
        };
        self.identity(&l);
        if let Some(t) = &l.timestamp {
            if self.first_at.is_none() {
                self.first_at = Some(t.to_string());
            }
            if self
                .last_at
                .as_deref()
                .is_none_or(|last| last <= t.as_ref())
            {
                self.last_at = Some(t.to_string());
            }
        }
        match l.kind.as_ref() {
            "cost-state" => {
                self.spend.commit();
                let mut tokens = Tokens::default();
                for m in l.model_usage.iter().flat_map(|m| m.values()) {
                    tokens.add(&Tokens {
                        input: m.input_tokens,
                        output: m.output_tokens,
                        cache_read: m.cache_read_input_tokens,
                        cache_creation: m.cache_creation_input_tokens,
                    });
                }
                if let Some(total) = l.total_cost_usd {
                    self.spend.cost_state = Some(CostState {
                        total_cost_usd: total,
                        tokens,
                    });
                    self.spend.after_cost_state = false;
                }
            }
            "assistant" => self.assistant(&l),
            "api-request" => self.api.request(&l),
            "system" if l.subtype.as_deref() == Some("turn_duration") => {
                self.turn.ended_at = l.timestamp.as_ref().map(|t| t.to_string());
            }
            "system" if l.subtype.as_deref() == Some("api_error") => self.api.error(&l),
            _ => {}
        }
    }

    fn identity(&mut self, l: &Line) {
        if self.first_uuid.is_none() {
            self.first_uuid = l.uuid.as_ref().map(|u| u.to_string());
        }
        if self.session_id.is_none() {
            self.session_id = l.session_id.as_ref().map(|s| s.to_string());
        }
        if self.team.is_none()
            && let (Some(t), Some(a)) = (&l.team_name, &l.agent_name)
        {
            self.team = Some(t.to_string());
            self.agent = Some(a.to_string());
        }
    }

    fn assistant(&mut self, l: &Line) {
        let Some(m) = &l.message else { return };
        let model = m.model.as_deref().unwrap_or("");
        // Claude Code prices (and records) a response by the model it asked for (2.1.322+).
        let priced = l.requested_model.as_deref().unwrap_or(model);
        // `<synthetic>`: a message Claude Code made up itself (an API error), no API call.
        if let (Some(id), Some(u)) = (&m.id, &m.usage)
            && model != "<synthetic>"
        {
            self.spend
                .response(id, priced, u.clone(), l.version.as_deref());
        }
        if !model.is_empty() && model != "<synthetic>" {
            self.model = Some(model.to_string());
            if let Some(u) = &m.usage {
                self.context_tokens = Some(
                    u.input_tokens
                        .saturating_add(u.cache_read_input_tokens)
                        .saturating_add(u.cache_creation_input_tokens),
                );
            }
        }
        if l.api_error == Some(true) {
            self.api.gave_up(l, m.content.text());
        } else if model != "<synthetic>" {
            self.api.answered();
        }
        if l.is_meta == Some(true) {
            return;
        }
        self.turn.messages += 1;
        self.turn.answered = true;
        let at = l.timestamp.as_ref().map(|t| t.to_string());
        let blocks: &[entry::Block] = match &m.content {
            Content::Blocks(b) => b,
            _ => &[],
        };
        let mut uses_tool = false;
        let mut texts = Vec::new();
        for b in blocks {
            match b.kind.as_ref() {
                "tool_use" => {
                    uses_tool = true;
                    let tool = b.name.as_deref().unwrap_or("").to_string();
                    let summary = entry::tool_summary(&tool, b.input.as_ref());
                    self.open_tools.push(OpenTool {
                        id: b.id.as_deref().unwrap_or("").to_string(),
                        activity: Activity {
                            at: at.clone(),
                            kind: "tool_use".into(),
                            tool: Some(tool),
                            summary,
                        },
                    });
                    if self.open_tools.len() > 16 {
                        self.open_tools.remove(0);
                    }
                }
                "text" => {
                    if let Some(t) = b.text.as_deref().filter(|t| !t.trim().is_empty()) {
                        texts.push(t);
                    }
                }
                _ => {}
            }
        }
        if let Content::Text(t) = &m.content
            && !t.trim().is_empty()
        {
            texts.push(t);
        }
        self.turn.ended = match m.stop_reason.as_deref() {
            Some("tool_use") => false,
            Some(_) => true,
            None => !uses_tool,
        };
        match m.stop_reason.as_deref() {
            Some("tool_use") => self.turn.ended_at = None,
            Some(_) => self.turn.ended_at.clone_from(&at),
            None if uses_tool => self.turn.ended_at = None,
            None => {}
        }
        if !texts.is_empty() {
            let text = texts.join("\n");
            self.last_text = Some(Activity {
                at,
                kind: "text".into(),
                tool: None,
                summary: first_line(&text, 160),
            });
            self.turn.last_text = Some(text);
        }
    }

    fn user_fast(&mut self, u: entry::UserEntry) {
        if self.first_uuid.is_none() {
            self.first_uuid.clone_from(&u.uuid);
        }
        if self.session_id.is_none() {
            self.session_id.clone_from(&u.session_id);
        }
        if self.team.is_none()
            && let (Some(t), Some(a)) = (&u.team_name, &u.agent_name)
        {
            self.team = Some(t.clone());
            self.agent = Some(a.clone());
        }
        if let Some(t) = &u.timestamp {
            if self.first_at.is_none() {
                self.first_at = Some(t.clone());
            }
            if self
                .last_at
                .as_deref()
                .is_none_or(|last| last <= t.as_str())
            {
                self.last_at = Some(t.clone());
            }
        }
        if u.is_meta {
            return;
        }
        self.turn.messages += 1;
        if u.interrupted {
            // The turn is over, and neither a Stop hook nor a turn_duration entry follows.
            self.turn.ended = true;
            self.turn.ended_at.clone_from(&u.timestamp);
            self.open_tools.clear();
            return;
        }
        self.turn.ended = false;
        self.turn.ended_at = None;
        if u.results.is_empty() {
            self.first_from
                .get_or_insert_with(|| u.from_teammate.clone().unwrap_or_default());
            self.turn.prompts += 1;
            self.turn.began_at.clone_from(&u.timestamp);
            self.api.prompted();
            // A new prompt: whatever was open will not get its result in this turn.
            self.open_tools.clear();
        } else {
            self.open_tools.retain(|o| !u.results.contains(&o.id));
        }
    }

    /// What it is doing: the newest tool call still running, else the last text.
    pub fn activity(&self) -> Option<&Activity> {
        self.open_tools
            .last()
            .map(|o| &o.activity)
            .or(self.last_text.as_ref())
    }

    /// Reads what the transcript at `loc` gained since the last read (all of it the first
    /// time). It is opened below the config dir without following a symlink anywhere, and read
    /// only when it is a regular file (see [`crate::store::dir`]). A file that is not the one
    /// read before (another inode, shorter, or other bytes before the offset) is read again from
    /// the start.
    ///
    /// # Errors
    /// A symlink, FIFO, socket, device or folder at `loc` or on the way (named, never opened
    /// blocking); I/O errors other than the file being missing.
    pub fn update(&mut self, loc: &Loc) -> io::Result<Update> {
        self.update_tapped(loc, &mut |_| {})
    }

    /// [`FileState::update`], handing `tap` each complete line read, as it is read (a file
    /// read again from its start hands its lines again): a follower that keeps more than a
    /// [`FileState`] reads each line once.
    ///
    /// # Errors
    /// As [`FileState::update`].
    pub fn update_tapped(&mut self, loc: &Loc, tap: &mut dyn FnMut(&[u8])) -> io::Result<Update> {
        match loc.open_file() {
            Ok(Some(f)) => self.update_file(f, tap),
            Ok(None) => Ok(Update::Missing),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Update::Missing),
            Err(e) => Err(e),
        }
    }

    /// [`FileState::update_tapped`] from a transcript already opened (a regular file).
    ///
    /// # Errors
    /// I/O errors.
    pub fn update_file(&mut self, mut f: File, tap: &mut dyn FnMut(&[u8])) -> io::Result<Update> {
        let meta = f.metadata()?;
        let mut fresh = false;
        if (self.dev, self.ino) != (meta.dev(), meta.ino())
            || meta.len() < self.offset
            || tail_hash(&f, self.offset)? != self.tail
        {
            fresh = self.offset > 0 || self.dev != 0;
            *self = FileState {
                dev: meta.dev(),
                ino: meta.ino(),
                ..FileState::default()
            };
        }
        if meta.len() == self.offset {
            return Ok(if fresh {
                Update::Reread
            } else {
                Update::Unchanged
            });
        }
        f.seek(SeekFrom::Start(self.offset))?;
        let start = self.offset;
        self.read_from(&mut f, tap)?;
        self.tail = tail_hash(&f, self.offset)?;
        Ok(if fresh {
            Update::Reread
        } else if self.offset > start || self.skipping {
            Update::Grew
        } else {
            Update::Unchanged
        })
    }

    fn read_from(&mut self, f: &mut File, tap: &mut dyn FnMut(&[u8])) -> io::Result<()> {
        let mut cur = Cursor {
            offset: self.offset,
            skipping: self.skipping,
            oversized: self.oversized,
        };
        let read = read_lines(f, &mut cur, &mut |line| {
            self.feed(line);
            tap(line);
        });
        (self.offset, self.skipping, self.oversized) = (cur.offset, cur.skipping, cur.oversized);
        read
    }
}

/// Where reading a file stopped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursor {
    /// Bytes read: everything up to the last complete line.
    pub offset: u64,
    /// Inside a line longer than [`MAX_LINE`], skipped.
    pub skipping: bool,
    /// Lines skipped for their length.
    pub oversized: u64,
}

/// Calls `each` with every complete line of `f` from `cur.offset` (where `f` is positioned) to
/// its end, in reads of at most 1 MiB (no bigger than what is left when it starts: a follower
/// reads a few lines at a time), and moves the cursor past them. A line still being written is
/// left for the next call; a line longer than [`MAX_LINE`] is skipped without being kept.
///
/// # Errors
/// Read errors.
pub fn read_lines(f: &mut File, cur: &mut Cursor, each: &mut dyn FnMut(&[u8])) -> io::Result<()> {
    let left = f.metadata()?.len().saturating_sub(cur.offset);
    let size = usize::try_from(left).map_or(CHUNK, |l| l.clamp(4096, CHUNK));
    let mut buf = vec![0u8; size];
    let mut carry: Vec<u8> = Vec::new();
    let mut pos = cur.offset;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &buf[..n];
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', chunk) {
            if cur.skipping {
                cur.skipping = false;
            } else if carry.is_empty() {
                each(&chunk[start..nl]);
            } else {
                carry.extend_from_slice(&chunk[start..nl]);
                each(&carry);
                carry.clear();
            }
            start = nl + 1;
            cur.offset = pos + start as u64;
        }
        pos += n as u64;
        if cur.skipping {
            cur.offset = pos;
        } else {
            carry.extend_from_slice(&chunk[start..]);
            if carry.len() > MAX_LINE {
                carry = Vec::new();
                cur.skipping = true;
                cur.oversized += 1;
                cur.offset = pos;
            }
        }
    }
    Ok(())
}

/// FNV-1a of the (at most) 4 KiB before `offset`.
fn tail_hash(f: &File, offset: u64) -> io::Result<u64> {
    let from = offset.saturating_sub(4096);
    let mut buf = [0u8; 4096];
    let want = (offset - from) as usize;
    let mut got = 0;
    while got < want {
        match f.read_at(&mut buf[got..want], from + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in &buf[..got] {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    Ok(h)
}

#[cfg(test)]
mod tests;
