//! A move planned without any lock: the source read and parsed one entry at a time, each entry
//! kept as where its text is (a slice of the source's bytes, or of the plan's own rendering when
//! the source's text is not in the layout), and the target's new content as pieces to write.
//! Under the locks, [`super::move_entries`] then only checks that the source is still the bytes
//! planned from (else it plans again, without the locks), reads the target, and writes.
//!
//! Memory: the source's bytes once, an entry's rendering where its text is not in the layout,
//! and per entry: its place (12 bytes), and when it moves 16 bytes of its id, a flag and its
//! index in the split (4 bytes); the journal's lines wait in a file. Never every entry parsed at
//! once (a parsed entry takes about four times its text), nor a list of every entry's text: the
//! source is read one element at a time.

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

/// Where an entry's text (in the layout, without its indent) is: `len` bytes at `start` of the
/// source followed by the plan's own renderings ([`Texts`]), in 12 bytes (a move keeps one per
/// entry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, packed(4))]
struct At {
    start: u64,
    len: u32,
}

/// The source's bytes as read and the entries rendered again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Texts {
    source: Vec<u8>,
    own: String,
}

impl Texts {
    /// The text at `at`: in the source when it starts before the source's end, else in the
    /// renderings, which are counted from there.
    fn get(&self, at: At) -> &[u8] {
        let (start, len) = (at.start as usize, at.len as usize);
        match start.checked_sub(self.source.len()) {
            None => &self.source[start..start + len],
            Some(s) => &self.own.as_bytes()[s..s + len],
        }
    }
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
    /// The source's length when planned: where [`Texts::own`] is counted from.
    end: usize,
    kept: Vec<At>,
    /// The picked entries, in source order; beside them (same order) their ids' [`key`]s and
    /// whether the journal says each was moved to the target before.
    picked: Vec<At>,
    keys: Vec<Key>,
    delivered: Vec<bool>,
}

/// The picked entries sorted: appended to the target, or only removed (it has them, or the
/// journal says they were moved before). Indices into [`Plan::picked`].
pub(super) struct Split {
    pub(super) appended: Vec<u32>,
    already: Vec<u32>,
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
            end: bytes.len(),
            kept: Vec::new(),
            picked: Vec::new(),
            keys: Vec::new(),
            delivered: Vec::new(),
        };
        if let Some(copy) = copy {
            m.journal.start(copy)?;
        }
        let base = bytes.as_ptr() as usize;
        let mut each = |raw: &RawValue| -> Result<()> {
            let text = raw.get();
            let Ok(entry) = serde_json::from_str::<Entry>(text) else {
                return Err(refusal(bytes, path));
            };
            let start = text.as_ptr() as usize - base;
            let at = plan.place(&entry, text, start)?;
            if !(m.pick)(&entry) {
                plan.kept.push(at);
                return Ok(());
            }
            if plan.picked.len() >= u32::MAX as usize {
                anyhow::bail!(
                    "{} holds more entries than a move can count",
                    path.display()
                );
            }
            if copy.is_some() {
                m.journal.note(&entry)?;
            }
            let id = id::entry_id(&entry);
            plan.picked.push(at);
            plan.keys.push(key(&id));
            plan.delivered.push((m.delivered)(&id));
            Ok(())
        };
        match each_raw(bytes, &mut each) {
            Ok(true) => Ok(plan),
            Ok(false) => Err(refusal(bytes, path)),
            Err(e) => Err(e),
        }
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
    ///
    /// # Errors
    /// An entry of 4 GiB or more (a move counts an entry's length in 32 bits).
    fn place(&mut self, entry: &Entry, text: &str, start: usize) -> Result<At> {
        let rendered = format::render_element(entry);
        let laid_out = rendered.strip_prefix("  ").unwrap_or(&rendered);
        let (start, len) = if laid_out == text {
            (start, text.len())
        } else {
            let from = self.end + self.texts.own.len();
            self.texts.own.push_str(laid_out);
            (from, laid_out.len())
        };
        let Ok(len) = u32::try_from(len) else {
            anyhow::bail!("an entry of {len} bytes is too large to move (4 GiB at most)");
        };
        Ok(At {
            start: start as u64,
            len,
        })
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
        // Fewer than u32::MAX entries are picked (Plan::new).
        for (i, (key, &delivered)) in (0u32..).zip(self.keys.iter().zip(&self.delivered)) {
            match there.get_mut(key) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    out.already.push(i);
                }
                _ if delivered => out.already.push(i),
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
            w.write_all(self.texts.get(self.picked[i as usize]))?;
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

    /// What was (or would be) moved: the entries' texts kept, the rest of the plan dropped
    /// (nothing copied: the picked entries' places and the split are handed over).
    pub(super) fn into_moved(self, split: Split) -> Moved {
        Moved {
            at: self.picked,
            appended: split.appended,
            already: split.already,
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

/// Hands each element of the JSON array `bytes` to `each`, as its text, in order, without
/// collecting them. `Ok(false)`: `bytes` is not a JSON array (or an element is not JSON).
///
/// # Errors
/// The first of `each`'s (no element after it is handed over).
fn each_raw<'de>(
    bytes: &'de [u8],
    each: &mut dyn FnMut(&'de RawValue) -> Result<()>,
) -> Result<bool> {
    use serde::de::{Deserializer, Error as _, SeqAccess, Visitor};
    struct Each<'a, 'de> {
        each: &'a mut dyn FnMut(&'de RawValue) -> Result<()>,
        failed: &'a mut Option<anyhow::Error>,
    }
    impl<'de> Visitor<'de> for Each<'_, 'de> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON array")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while let Some(raw) = seq.next_element::<&'de RawValue>()? {
                if let Err(e) = (self.each)(raw) {
                    *self.failed = Some(e);
                    return Err(A::Error::custom("stopped"));
                }
            }
            Ok(())
        }
    }
    let mut failed = None;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed = (&mut de)
        .deserialize_seq(Each {
            each,
            failed: &mut failed,
        })
        .and_then(|()| de.end());
    match failed {
        Some(e) => Err(e),
        None => Ok(parsed.is_ok()),
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
    /// Where each picked entry is; `appended` and `already` are indices into it.
    at: Vec<At>,
    appended: Vec<u32>,
    already: Vec<u32>,
    /// Entries left in the source (not picked).
    pub kept: usize,
}

impl Moved {
    /// Entries appended to the target, in source order.
    pub fn appended(&self) -> Entries<'_> {
        Entries {
            texts: &self.texts,
            at: &self.at,
            which: &self.appended,
        }
    }

    /// Entries only removed from the source: the target already had them, or the journal says
    /// they were moved before.
    pub fn already(&self) -> Entries<'_> {
        Entries {
            texts: &self.texts,
            at: &self.at,
            which: &self.already,
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
    /// Which of `at`.
    which: &'a [u32],
}

impl<'a> Entries<'a> {
    /// How many.
    pub fn len(&self) -> usize {
        self.which.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.which.is_empty()
    }

    /// Each entry, parsed from its text.
    pub fn iter(&self) -> impl Iterator<Item = Entry> + 'a {
        let (texts, at) = (self.texts, self.at);
        self.which.iter().map(move |&i| {
            let at = at[i as usize];
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
