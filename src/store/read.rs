//! Reading an inbox or object file without its lock, as Claude Code's readers do: parsing, one
//! entry at a time, and retrying a file caught half-written.

use std::io::{self};
use std::path::Path;
use std::thread;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::dir::Loc;
use super::format::{self, Entry};

/// Parses an inbox: a JSON array of objects.
///
/// # Errors
/// When the bytes are not JSON, the top level is not an array, or an element is not an object.
pub fn parse_inbox(bytes: &[u8], path: &Path) -> Result<Vec<Entry>> {
    let value: Value = serde_json::from_slice(bytes)
        .with_context(|| format!("{} is not valid JSON (left unchanged)", path.display()))?;
    let Value::Array(items) = value else {
        bail!("{} is not a JSON array (left unchanged)", path.display());
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::Object(m) => Ok(m),
            _ => bail!(
                "entry {i} of {} is not a JSON object (left unchanged)",
                path.display()
            ),
        })
        .collect()
}

/// Reads an inbox without locking, as Claude Code's readers do ([`read_unlocked`]), for
/// showing it. `Ok(None)` when the file does not exist. An escaped lone surrogate (`\ud800`,
/// which JavaScript reads and writes but no Rust string holds) reads as U+FFFD; the write
/// paths never do this, so they refuse such an entry rather than change it.
///
/// # Errors
/// I/O errors, or a file that still does not parse after the retries.
pub fn read_inbox(path: &Loc) -> Result<Option<Vec<Entry>>> {
    read_unlocked(path, |bytes| {
        parse_inbox(bytes, path).or_else(|e| match format::replace_lone_surrogates(bytes) {
            Some(lossy) => parse_inbox(&lossy, path),
            None => Err(e),
        })
    })
}

/// [`read_inbox`], handing each entry to `each` as it is parsed instead of keeping them all:
/// only what `each` returns (`None`: nothing) is kept. The file is parsed straight from disk
/// first, so reading a large inbox needs about what `each` keeps, not the file's bytes and a
/// parsed copy of every entry besides; a file that does not parse that way (torn by an in-place
/// writer, an escaped lone surrogate, corrupt) is then read as [`read_inbox`] reads it. `each`
/// gets the entry's index, and may run again from the first entry.
///
/// # Errors
/// As [`read_inbox`].
pub fn read_inbox_each<T>(
    path: &Loc,
    each: impl Fn(usize, Entry) -> Option<T>,
) -> Result<Option<Vec<T>>> {
    let collect = |de: &mut Source| {
        let mut out = Vec::new();
        de(&mut |i, e| {
            if let Some(t) = each(i, e) {
                out.push(t);
            }
        })?;
        Ok(out)
    };
    let Some(file) = path
        .open_file()
        .with_context(|| format!("could not read {}", path.display()))?
    else {
        return Ok(None);
    };
    let streamed = collect(&mut |f| {
        let reader = io::BufReader::with_capacity(256 * 1024, file.try_clone()?);
        let mut de = serde_json::Deserializer::from_reader(reader);
        each_entry(&mut de, f)?;
        de.end()?;
        Ok(())
    });
    if let Ok(out) = streamed {
        return Ok(Some(out));
    }
    drop(file);
    let parse = |bytes: &[u8]| collect(&mut |f| parse_inbox_each(bytes, path, &mut *f));
    read_unlocked(path, |bytes| {
        parse(bytes).or_else(|e| match format::replace_lone_surrogates(bytes) {
            Some(lossy) => parse(&lossy),
            None => Err(e),
        })
    })
}

/// Something that parses an inbox, handing each entry to the function it is given.
type Source<'a> = dyn FnMut(&mut dyn FnMut(usize, Entry)) -> Result<()> + 'a;

/// Deserializes a JSON array of objects from `de`, handing each object to `each`.
fn each_entry<'de, D: serde::Deserializer<'de>>(
    de: D,
    each: &mut dyn FnMut(usize, Entry),
) -> Result<(), D::Error> {
    use serde::de::{SeqAccess, Visitor};
    struct Each<'a>(&'a mut dyn FnMut(usize, Entry));
    impl<'de> Visitor<'de> for Each<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON array of objects")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut i = 0;
            while let Some(e) = seq.next_element::<Entry>()? {
                (self.0)(i, e);
                i += 1;
            }
            Ok(())
        }
    }
    de.deserialize_seq(Each(each))
}

/// Parses an inbox as [`parse_inbox`] does, handing each entry to `each` in file order.
///
/// # Errors
/// As [`parse_inbox`] (entries before the bad one have been handed over already).
pub fn parse_inbox_each(
    bytes: &[u8],
    path: &Path,
    mut each: impl FnMut(usize, Entry),
) -> Result<()> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    if each_entry(&mut de, &mut each)
        .and_then(|()| de.end())
        .is_ok()
    {
        return Ok(());
    }
    // The exact reason (and the wording every caller knows) from the whole-file parser.
    parse_inbox(bytes, path)?;
    bail!(
        "{} is not a JSON array of objects (left unchanged)",
        path.display()
    )
}

/// Reads `path` without a lock and parses it with `parse`. `Ok(None)` when it does not exist.
///
/// Writers that rewrite a file in place (old Claude Code's inboxes, new Claude Code's
/// `config.json`) leave it torn for a few milliseconds, so a parse failure is retried with
/// backoff (10, 20, 40, 80, then 100 ms). The file is reported only once the same unparseable
/// bytes with the same mtime have been read [`TORN_RETRIES`] times in a row, about 150 ms: a
/// file that keeps changing is being written, not corrupt, and is retried for up to
/// [`TORN_DEADLINE`]. Two shapes that only an in-place writer caught between its two steps
/// leaves are retried for the whole deadline too, since on a loaded machine that gap outlasts
/// the 150 ms: an empty file (`writeFile`: truncate, then write; no Claude Code writes an empty
/// file, an empty inbox is `[]`; seen with 2.1.112 rewriting `config.json` under a load of 8 on
/// 2 cores), and a whole JSON document followed by more bytes (2.1.312 and later write a locked
/// config update through `open(r+)` and truncate after it, so a shorter document stands on the
/// old one's tail until then; seen with 2.1.332 under a load of 14 on 2 cores).
///
/// # Errors
/// I/O errors, or the parse error once the file is stably unparseable or the deadline passed.
pub fn read_unlocked<T>(path: &Loc, parse: impl Fn(&[u8]) -> Result<T>) -> Result<Option<T>> {
    Ok(read_unlocked_keeping(path, parse)?.map(|(_, value)| value))
}

/// [`read_unlocked`], giving back the bytes read with what `parse` made of them (for a caller
/// that keeps both, without a copy).
///
/// # Errors
/// As [`read_unlocked`].
pub fn read_unlocked_keeping<T>(
    path: &Loc,
    parse: impl Fn(&[u8]) -> Result<T>,
) -> Result<Option<(Vec<u8>, T)>> {
    let start = std::time::Instant::now();
    let mut attempt = 0u32;
    let mut stable = 0;
    let mut last_failed: Option<(Option<SystemTime>, Vec<u8>)> = None;
    loop {
        let context = || format!("could not read {}", path.display());
        let Some(mut f) = path.open_file().with_context(context)? else {
            return Ok(None);
        };
        let mtime = f.metadata().and_then(|m| m.modified()).ok();
        let mut bytes = Vec::new();
        io::Read::read_to_end(&mut f, &mut bytes).with_context(context)?;
        match parse(&bytes) {
            Ok(value) => return Ok(Some((bytes, value))),
            Err(e) => {
                let seen = (mtime, bytes);
                stable = if last_failed.as_ref() == Some(&seen) {
                    stable + 1
                } else {
                    0
                };
                let mid_write = seen.1.is_empty() || has_trailing_bytes(&seen.1);
                if (stable >= TORN_RETRIES && !mid_write) || start.elapsed() >= TORN_DEADLINE {
                    return Err(e);
                }
                last_failed = Some(seen);
            }
        }
        thread::sleep(Duration::from_millis((10u64 << attempt.min(4)).min(100)));
        attempt += 1;
    }
}

/// Whether `bytes` hold one whole JSON document followed by more than whitespace: what an
/// in-place writer that truncates last leaves between its write and its truncate.
pub(super) fn has_trailing_bytes(bytes: &[u8]) -> bool {
    let mut values =
        serde_json::Deserializer::from_slice(bytes).into_iter::<serde::de::IgnoredAny>();
    matches!(values.next(), Some(Ok(_))) && values.byte_offset() < bytes.trim_ascii_end().len()
}

/// How many times in a row [`read_unlocked`] must read the same unparseable file before it
/// reports it.
pub const TORN_RETRIES: u32 = 4;

/// The longest [`read_unlocked`] retries a file that keeps changing but never parses.
pub const TORN_DEADLINE: Duration = Duration::from_secs(2);

/// Parses a JSON object (a task file, `config.json`).
///
/// # Errors
/// When the bytes are not JSON or not an object.
pub fn parse_object(bytes: &[u8], path: &Path) -> Result<Entry> {
    match serde_json::from_slice(bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => bail!("{} is not a JSON object (left unchanged)", path.display()),
        Err(e) => {
            Err(e).with_context(|| format!("{} is not valid JSON (left unchanged)", path.display()))
        }
    }
}
