//! The members' sessions copied into the record: each transcript streamed to the bundle through
//! a [`Tee`] that hashes it, counts its lines and reads each line once for what the record
//! needs (the messages it delivered, the lead's answer, the cost over time); none is held
//! whole.

use std::collections::BTreeMap;
use std::io::{self, Read};

use anyhow::Result;
use sha2::{Digest, Sha256};

use super::Content;
use super::gather::{Gathering, hex};
use super::summary::{FileInfo, TranscriptInfo};
use crate::observe::history::History;
use crate::store::dir::Loc;
use crate::store::paths::{Layout, MemberName, is_valid_member};
use crate::store::snapshot;
use crate::team::conversation::{self, Said};
use crate::team::transcript::FileState;
use crate::team::transcript::locate;

/// The transcripts copied: each file's record, the messages they say were delivered, the
/// lead's last text (its final answer when its turn ended) and each member's responses.
pub(super) struct Transcripts {
    pub(super) infos: Vec<TranscriptInfo>,
    pub(super) said: Vec<Said>,
    pub(super) result: Option<String>,
    pub(super) result_final: bool,
    pub(super) series: History,
}

impl Gathering<'_, '_> {
    /// Copies every member's sessions (the lead first, then the others in name order), each
    /// with its subagents', reading the messages they delivered and the lead's final answer.
    pub(super) fn transcripts(
        &mut self,
        located: &BTreeMap<String, Vec<locate::Session>>,
        lead_name: &str,
    ) -> Result<Transcripts> {
        let mut t = Transcripts {
            infos: Vec::new(),
            said: Vec::new(),
            result: None,
            result_final: false,
            series: History::default(),
        };
        let mut owners: Vec<&String> = located.keys().collect();
        owners.sort_by_key(|n| *n != lead_name);
        for owner in owners {
            for s in &located[owner] {
                self.session(owner, s, &mut t)?;
            }
        }
        Ok(t)
    }

    /// Copies one session of `owner` and its subagents' files into `t`.
    fn session(&mut self, owner: &str, s: &locate::Session, t: &mut Transcripts) -> Result<()> {
        let folder = safe_name(owner);
        let kind = match s.kind {
            locate::Kind::Lead => "lead",
            locate::Kind::Pane => "pane",
            locate::Kind::InProcess => "in_process",
        };
        let stem = file_stem(&s.path);
        let rel = format!("transcripts/{folder}/{stem}.jsonl");
        let sid = (s.kind != locate::Kind::InProcess).then(|| stem.clone());
        let mut st = FileState::default();
        let is_lead = s.kind == locate::Kind::Lead && t.result.is_none();
        let file = TranscriptFile {
            rel: &rel,
            path: &s.path,
            member: owner,
            session: sid.as_deref(),
            kind,
        };
        let series = &mut t.series;
        let info = self.transcript(&file, Some(&mut t.said), &mut |line| {
            series.feed(owner, line);
            if is_lead {
                st.feed(line);
            }
        })?;
        if let Some(info) = info {
            if is_lead {
                t.result_final = st.turn.ended && st.turn.last_text.is_some();
                t.result = st.turn.last_text.take();
            }
            t.infos.push(info);
        }
        for sub in &s.subagents {
            let rel = format!(
                "transcripts/{folder}/{stem}/subagents/{}.jsonl",
                file_stem(sub)
            );
            let file = TranscriptFile {
                rel: &rel,
                path: sub,
                member: owner,
                session: None,
                kind: "subagent",
            };
            let series = &mut t.series;
            if let Some(info) =
                self.transcript(&file, None, &mut |l| series.feed_subagent(owner, l))?
            {
                t.infos.push(info);
            }
        }
        Ok(())
    }

    /// The lead's session `sid` was not found: said, and recorded without a file.
    pub(super) fn lead_transcript_missing(
        &mut self,
        layout: &Layout,
        lead_name: &str,
        sid: &str,
        infos: &mut Vec<TranscriptInfo>,
    ) {
        self.warnings.push(format!(
            "the lead's transcript ({sid}.jsonl) was not found under {}",
            layout.root().join("projects").display()
        ));
        infos.push(TranscriptInfo {
            member: lead_name.to_string(),
            session_id: Some(sid.to_string()),
            kind: "lead",
            path: None,
            source: None,
            lines: 0,
            bytes: 0,
        });
    }

    /// Copies a transcript, reading its messages into `said` and handing each line to `line`.
    fn transcript(
        &mut self,
        file: &TranscriptFile,
        said: Option<&mut Vec<Said>>,
        line: &mut dyn FnMut(&[u8]),
    ) -> Result<Option<TranscriptInfo>> {
        let TranscriptFile {
            rel,
            path,
            member,
            session,
            kind,
        } = *file;
        let mut l = match snapshot::open_lines(path) {
            Ok(Some(l)) => l,
            Ok(None) => {
                self.warnings.push(format!(
                    "{} disappeared before it was copied",
                    path.display()
                ));
                return Ok(None);
            }
            Err(e) => {
                self.warnings.push(format!("{e:#}"));
                return Ok(None);
            }
        };
        // A plain subagent's messages are its own business, not the team's conversation.
        let reading = said.is_some();
        let mut reader = conversation::Reader::new(member);
        let mut tee = Tee {
            inner: &mut l.reader,
            hash: Sha256::new(),
            partial: Vec::new(),
            lines: 0,
            bytes: 0,
            on_line: &mut |b: &[u8]| {
                if reading {
                    reader.feed(b);
                }
                line(b);
            },
        };
        (self.sink)(
            rel,
            Content::Stream {
                len: l.len,
                mtime: l.mtime,
                reader: &mut tee,
            },
        )?;
        let (lines, bytes, sha) = (tee.lines, tee.bytes, hex(&tee.hash.finalize_reset()));
        if let Some(said) = said {
            said.extend(reader.finish());
        }
        self.files.push(FileInfo {
            path: rel.to_string(),
            bytes,
            sha256: sha,
            settled: true,
        });
        Ok(Some(TranscriptInfo {
            member: member.to_string(),
            session_id: session
                .map(String::from)
                .or_else(|| path.file_stem().and_then(|s| s.to_str()).map(String::from)),
            kind,
            path: Some(rel.to_string()),
            source: Some(path.display().to_string()),
            lines,
            bytes,
        }))
    }
}

/// A transcript to copy: where it goes in the record, where it is, whose it is, its session
/// (else its file's name) and its kind.
struct TranscriptFile<'a> {
    rel: &'a str,
    path: &'a Loc,
    member: &'a str,
    session: Option<&'a str>,
    kind: &'static str,
}

/// The longest line a transcript's reader is given (longer ones are skipped: no entry the
/// record reads is that long); the copy keeps them.
const MAX_LINE: usize = 16 << 20;

/// Reads through a transcript as the bundle copies it: hashes it, counts its lines and hands
/// each to `on_line`.
struct Tee<'a> {
    inner: &'a mut dyn Read,
    hash: Sha256,
    partial: Vec<u8>,
    lines: usize,
    bytes: u64,
    on_line: &'a mut dyn FnMut(&[u8]),
}

impl Read for Tee<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let got = &buf[..n];
        self.hash.update(got);
        self.bytes += n as u64;
        let mut rest = got;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            if self.partial.len() <= MAX_LINE {
                self.partial.extend_from_slice(&rest[..i]);
                if !self.partial.is_empty() {
                    (self.on_line)(&self.partial);
                }
            }
            self.lines += 1;
            self.partial.clear();
            rest = &rest[i + 1..];
        }
        if self.partial.len() <= MAX_LINE {
            self.partial.extend_from_slice(rest);
        }
        Ok(n)
    }
}

/// The last name of `loc` without `.jsonl`, as a file name in the bundle: itself when it is
/// made of letters, digits, `-` and `_` (a session id, `agent-<id>`), else a name derived from
/// its hash.
fn file_stem(loc: &Loc) -> String {
    let name = loc.name().map(|n| n.to_string_lossy()).unwrap_or_default();
    let stem = name.strip_suffix(".jsonl").unwrap_or(&name);
    if is_valid_member(stem) {
        stem.to_string()
    } else {
        format!("file-{}", &hex(&Sha256::digest(stem.as_bytes()))[..12])
    }
}

/// `name` as a folder name in the bundle: itself when it is a valid member name, else a name
/// derived from its hash.
fn safe_name(name: &str) -> String {
    if is_valid_member(name) && MemberName::parse(name).is_ok() {
        name.to_string()
    } else {
        format!("member-{}", &hex(&Sha256::digest(name.as_bytes()))[..12])
    }
}
