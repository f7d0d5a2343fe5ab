//! A move planned without any lock: the source read and parsed one entry at a time, each entry
//! kept as where its text is (a slice of the source's bytes, or of the plan's own rendering when
//! the source's text is not in the layout), and the target's new content as pieces to write.
//! Under the locks, [`super::move_entries`] then only checks that the source is still the bytes
//! planned from (else it plans again, without the locks), reads the target, and writes.
//!
//! Memory: the source's bytes once, an entry's rendering where its text is not in the layout,
//! one id and one journal line per entry that moves, and a few words per entry; never every
//! entry parsed at once (a parsed entry takes about four times its text).

use std::collections::HashMap;
use std::io::{self, Write};

use anyhow::Result;
use serde::ser::{Serialize, Serializer};
use serde_json::value::RawValue;

use super::super::dir::Loc;
use super::super::format::{self, Entry};
use super::super::light::LightEntry;
use super::super::{id, parse_inbox, parse_inbox_each};
use super::Move;

/// Where an entry's text (in the layout, without its indent) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// `source[start..end]`: the source held it in the layout already.
    Source(usize, usize),
    /// `own[start..end]`: rendered again.
    Own(usize, usize),
}

/// The source's bytes as read and the entries rendered again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Texts {
    source: Vec<u8>,
    own: String,
}

impl Texts {
    fn get(&self, at: At) -> &[u8] {
        match at {
            At::Source(s, e) => &self.source[s..e],
            At::Own(s, e) => &self.own.as_bytes()[s..e],
        }
    }
}

/// An entry of the source that is picked to move.
struct Picked {
    at: At,
    /// Its id's [`key`].
    key: Key,
    /// The journal says it was moved to the target before.
    delivered: bool,
}

/// An id as the first 16 bytes of its sha256: what a move keeps of each id (a few bytes,
/// whatever the id's length), as unlikely to stand for two ids as the content hash itself.
type Key = [u8; 16];

/// `id`'s [`Key`].
fn key(id: &str) -> Key {
    use sha2::{Digest, Sha256};
    let mut k = [0u8; 16];
    k.copy_from_slice(&Sha256::digest(id.as_bytes())[..16]);
    k
}

/// The source planned (see the module docs).
pub(super) struct Plan {
    texts: Texts,
    kept: Vec<At>,
    picked: Vec<Picked>,
}

/// The picked entries sorted: appended to the target, or only removed (it has them, or the
/// journal says they were moved before). Indices into [`Plan::picked`].
pub(super) struct Split {
    pub(super) appended: Vec<usize>,
    already: Vec<usize>,
}

impl Plan {
    /// `bytes` (the source at `path`) planned for `m`; each picked entry told to `m.journal`
    /// for the copy `copy` (not without one: a dry run). The plan refers to `bytes` by offsets:
    /// hand them to [`Plan::keep`].
    ///
    /// # Errors
    /// A source that is not a JSON array of objects (the reason [`parse_inbox`] gives), an
    /// entry that does not parse (an escaped lone surrogate), the journal's error.
    pub(super) fn new(bytes: &[u8], path: &Loc, m: &Move, copy: Option<&str>) -> Result<Plan> {
        let mut plan = Plan {
            texts: Texts::default(),
            kept: Vec::new(),
            picked: Vec::new(),
        };
        if let Some(copy) = copy {
            m.journal.start(copy)?;
        }
        let Ok(raws) = serde_json::from_slice::<Vec<&RawValue>>(bytes) else {
            return Err(refusal(bytes, path));
        };
        let base = bytes.as_ptr() as usize;
        for raw in raws {
            let text = raw.get();
            let Ok(entry) = serde_json::from_str::<Entry>(text) else {
                return Err(refusal(bytes, path));
            };
            let start = text.as_ptr() as usize - base;
            let at = plan.place(&entry, text, start);
            if !(m.pick)(&entry) {
                plan.kept.push(at);
                continue;
            }
            if copy.is_some() {
                m.journal.note(&entry)?;
            }
            let id = id::entry_id(&entry);
            plan.picked.push(Picked {
                at,
                key: key(&id),
                delivered: (m.delivered)(&id),
            });
        }
        Ok(plan)
    }

    /// The plan with the bytes it was made from ([`Plan::new`]).
    pub(super) fn keep(mut self, bytes: Vec<u8>) -> Plan {
        self.texts.source = bytes;
        self
    }

    /// The bytes the plan was made from.
    pub(super) fn source(&self) -> &[u8] {
        &self.texts.source
    }

    /// Where `entry` (read from `text`, at `start` in the source) is in the layout: its own
    /// text when that is what rendering it gives, else its rendering kept.
    fn place(&mut self, entry: &Entry, text: &str, start: usize) -> At {
        let rendered = format::render_element(entry);
        let laid_out = rendered.strip_prefix("  ").unwrap_or(&rendered);
        if laid_out == text {
            return At::Source(start, start + text.len());
        }
        let from = self.texts.own.len();
        self.texts.own.push_str(laid_out);
        At::Own(from, self.texts.own.len())
    }

    /// Whether no entry is picked.
    pub(super) fn is_empty(&self) -> bool {
        self.picked.is_empty()
    }

    /// The picked entries sorted against the target (how many of each id it holds) and the
    /// journal ([`Move::delivered`], asked when the move was planned).
    pub(super) fn split(&self, target: &HashMap<Key, usize>) -> Split {
        let mut there = target.clone();
        let mut out = Split {
            appended: Vec::new(),
            already: Vec::new(),
        };
        for (i, p) in self.picked.iter().enumerate() {
            match there.get_mut(&p.key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    out.already.push(i);
                }
                _ if p.delivered => out.already.push(i),
                _ => out.appended.push(i),
            }
        }
        out
    }

    /// Writes the target's new content to `w`: `target` (in the layout, holding `count`
    /// entries) with the appended entries after its last (a piece at a time, never held whole).
    pub(super) fn write_target(
        &self,
        w: &mut dyn Write,
        target: &[u8],
        count: usize,
        split: &Split,
    ) -> io::Result<()> {
        // `[]` keeps its `[`; `[\n…\n]` keeps everything up to its last entry's `}`.
        let (keep, mut sep): (usize, &[u8]) = if count == 0 {
            (1, b"\n  ")
        } else {
            (target.len() - 2, b",\n  ")
        };
        w.write_all(&target[..keep])?;
        for &i in &split.appended {
            w.write_all(sep)?;
            w.write_all(self.texts.get(self.picked[i].at))?;
            sep = b",\n  ";
        }
        w.write_all(b"\n]")
    }

    /// Writes the source's new content to `w`: the entries that stay, in the layout (`[]`
    /// when none).
    pub(super) fn write_source(&self, w: &mut dyn Write) -> io::Result<()> {
        if self.kept.is_empty() {
            return w.write_all(b"[]");
        }
        let mut sep: &[u8] = b"[\n  ";
        for &at in &self.kept {
            w.write_all(sep)?;
            w.write_all(self.texts.get(at))?;
            sep = b",\n  ";
        }
        w.write_all(b"\n]")
    }

    /// What was (or would be) moved: the entries' texts kept, the rest of the plan dropped.
    pub(super) fn into_moved(self, split: &Split) -> Moved {
        let at = |list: &[usize]| list.iter().map(|&i| self.picked[i].at).collect();
        Moved {
            appended: at(&split.appended),
            already: at(&split.already),
            kept: self.kept.len(),
            texts: self.texts,
        }
    }

    /// A plan with nothing picked, as what it did.
    pub(super) fn nothing(self) -> Moved {
        Moved {
            kept: self.kept.len(),
            ..Moved::default()
        }
    }
}

/// Why `bytes` cannot be moved from: [`parse_inbox`]'s reason, or (an entry that only fails on
/// its own, which that parse accepts) the same words as [`parse_inbox_each`].
fn refusal(bytes: &[u8], path: &Loc) -> anyhow::Error {
    match parse_inbox(bytes, path) {
        Err(e) => e,
        Ok(_) => anyhow::anyhow!(
            "{} is not a JSON array of objects (left unchanged)",
            path.display()
        ),
    }
}

/// How many entries of each id `bytes` (an inbox) holds, and the inbox in the layout with how
/// many entries: `bytes` itself when it is in it (borrowed), else rendered again one entry at a
/// time.
///
/// # Errors
/// An inbox that is not a JSON array of objects.
pub(super) fn target_of(bytes: &[u8], path: &Loc) -> Result<Target> {
    let mut ids = HashMap::new();
    let mut count_id = |i: String| *ids.entry(key(&i)).or_insert(0) += 1;
    if let Some(count) = format::canonical_inbox(bytes) {
        match serde_json::from_slice::<Vec<LightEntry>>(bytes) {
            Ok(entries) => entries.iter().for_each(|e| count_id(e.id())),
            // A key given twice: the full parser decides.
            Err(_) => parse_inbox_each(bytes, path, |_, e| count_id(id::entry_id(&e)))?,
        }
        return Ok(Target {
            ids,
            rendered: None,
            count,
        });
    }
    let mut rendered = String::from("[");
    let mut count = 0;
    parse_inbox_each(bytes, path, |_, e| {
        count_id(id::entry_id(&e));
        rendered.push_str(if count == 0 { "\n" } else { ",\n" });
        rendered.push_str(&format::render_element(&e));
        count += 1;
    })?;
    rendered.push_str(if count == 0 { "]" } else { "\n]" });
    Ok(Target {
        ids,
        rendered: Some(rendered),
        count,
    })
}

/// The target as [`target_of`] read it.
pub(super) struct Target {
    pub(super) ids: HashMap<Key, usize>,
    /// Its entries rendered again, when its bytes are not in the layout.
    pub(super) rendered: Option<String>,
    /// How many entries it holds.
    pub(super) count: usize,
}

impl Target {
    /// The target in the layout: `bytes` (what it was read from) or its rendering.
    pub(super) fn laid_out<'a>(&'a self, bytes: &'a [u8]) -> &'a [u8] {
        self.rendered.as_deref().map_or(bytes, str::as_bytes)
    }
}

/// What [`super::move_entries`] did (or, for [`super::plan`], would do). The entries are kept
/// as their texts and parsed one at a time when read ([`Moved::appended`]), so a move of a
/// large inbox does not hold every entry parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Moved {
    texts: Texts,
    appended: Vec<At>,
    already: Vec<At>,
    /// Entries left in the source (not picked).
    pub kept: usize,
}

impl Moved {
    /// Entries appended to the target, in source order.
    pub fn appended(&self) -> Entries<'_> {
        Entries {
            texts: &self.texts,
            at: &self.appended,
        }
    }

    /// Entries only removed from the source: the target already had them, or the journal says
    /// they were moved before.
    pub fn already(&self) -> Entries<'_> {
        Entries {
            texts: &self.texts,
            at: &self.already,
        }
    }

    /// Nothing moved, `kept` entries left.
    pub fn kept_only(kept: usize) -> Moved {
        Moved {
            kept,
            ..Moved::default()
        }
    }

    /// Whether nothing was (or would be) changed.
    pub fn is_empty(&self) -> bool {
        self.appended.is_empty() && self.already.is_empty()
    }
}

/// Some of a [`Moved`]'s entries, each parsed when read; serialized as a JSON array of them.
#[derive(Debug, Clone, Copy)]
pub struct Entries<'a> {
    texts: &'a Texts,
    at: &'a [At],
}

impl<'a> Entries<'a> {
    /// How many.
    pub fn len(&self) -> usize {
        self.at.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.at.is_empty()
    }

    /// Each entry, parsed from its text.
    pub fn iter(&self) -> impl Iterator<Item = Entry> + 'a {
        let texts = self.texts;
        self.at.iter().map(move |&at| {
            // Each text was parsed (or rendered from a parsed entry) when the move was planned.
            serde_json::from_slice(texts.get(at)).expect("an entry parsed when planned")
        })
    }
}

impl Serialize for Entries<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}
